/* stitch_perf.c - stitch-perf, the collective benchmark, in the manner of nccl-tests' all_reduce_perf, with its flags.
 *
 *   stitch-perf all_reduce -t 4 -b 8 -e 64M -f 2 -n 20      (nccl-tests: -t threads, -n iterations)
 *   stitch-perf all_reduce -a ring -t 5 -d fp32 -o sum -b 4 -e 16M -f 4 -c 1 -J out.json
 *
 * The p ranks are p threads of this process (stitch_comm_init_threads; --device: stitch_comm_init_devices, -t * -g
 * ranks), or one process each under a launcher. Every thread runs the same loop over the sizes -b, -b*f, ... -e
 * (or -b, -b+i, ... with -i); for each size it runs two column sets, out of place then in place (nccl-tests' two),
 * and for each (1) with -c 1 runs the collective once on inputs that encode (rank, index) and checks every element of
 * every rank's output, (2) runs -w warm-up calls, (3) times -n calls as "barrier, t0, n calls, barrier, t1" and
 * reports the largest (t1 - t0) / n over the ranks. The table follows nccl-tests: the size column is the bytes of
 * the largest buffer (all_reduce: count * esize; all_gather and reduce_scatter: count * p * esize), then for each
 * column set time, algbw = size / time, busbw = algbw * the factor of nccl-tests' PERFORMANCE.md and #wrong; then
 * "# Out of bounds values : N OK|FAILED" (the wrong elements over the run) and "# Avg bus bandwidth : X" (over the
 * sizes that passed and both sets). Each size is one test; the output closes with "N passed, N failed" and the exit
 * status is 0 only when every size passed. -J FILE writes the same as one JSON document. Bad command lines exit 2.
 *
 * Why the checker is shaped so. The expected values are computed here, never with library code, and they must be
 * exact whatever order the schedule reduces in: sums are of small integers whose partial sums stay representable
 * (in bf16 too), products are of +-1, 2 and 1/2 with a bounded number of non-unit factors, integer sums and
 * products wrap modulo 2^bits (exact in any order), and max/min take anything. Values come from a hash of (rank,
 * index), so a block delivered to the wrong place or from the wrong rank does not pass; all_gather uses an affine
 * code that is distinct for every rank and every shift. Outputs are reset to the complement of the expected bytes
 * before the check run, so an element the collective never wrote is always counted wrong.
 *
 * Errors. A failing call aborts the communicator, so the other ranks fail fast instead of waiting for their
 * timeout; the size counts as failed and the communicators are rebuilt before the next size. Every rank that saw a
 * failure, wherever it was (phase_name: init, check, warm-up, the benchmark's own barriers, the timed loop, combining
 * the results, rebuilding), is reported as "size S: rank R: PHASE: [SET: ]stitch_strerror: stitch_comm_last_error"
 * (SET: out-of-place or in-place, for check, warm-up and the timed loop; the library's message names the rank that
 * died or aborted); the failing set's columns and those after it say "error", and the run still ends with "N passed,
 * N failed".
 *
 * Buffers are allocated once at the largest size and touched by their own rank thread (first touch is slow on the
 * machines we run on), then reused for every size.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET (--bind) */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "st_size.h"
#include "stitch.h"

#include "dev_ops.h" /* --device: the device layer's table, for buffers and the copy bound */
#include "reduce.h" /* --calibrate times the runtime's own reduce kernel (private header: linked statically) */

#define PROG "stitch-perf"
#define MAX_RANKS 1024
#define MAX_ALGOS 64

/* ---- phases, and the test hook that kills a rank in one ---------------------------------------------------------
 * What a rank is doing, for the message of a failure: each library call and each barrier of the benchmark belongs
 * to one phase. "barrier" is the benchmark's own: the one opening a size, the ones around the timed loop and the one
 * closing the size (thread mode: pthread barriers, which cannot fail; process mode: all_reduces of one double).
 *
 * STITCH_PERF_DIE_AT=R:PHASE is a test hook (tests/perf/die_at.sh, perf.die_at.*): rank R dies right after its
 * first synchronisation (a library call or a barrier) in PHASE of the first size, or for init right after its
 * communicator is made (process mode) or the opening barrier of the rank threads (thread mode). Dying after a
 * synchronisation, not before, places the survivors: R finished a call every rank takes part in, so every rank has
 * entered it, and none can finish the next one; they fail in PHASE when it holds a further synchronisation (hence
 * the test's -w 2, --iters 2, and -c 0 -w 0 for barrier, whose first two are then the opening barrier and the one
 * before the timed loop). In process mode rank R raises SIGKILL on itself. A thread cannot die alone, so in thread
 * mode rank R aborts its communicator (stitch_comm_abort, which names it to the others) and makes no more calls in
 * that size, still taking the benchmark's pthread barriers: its peers see what they would see of a dead peer in
 * a thread job, an aborted communicator. */

enum phase { PH_INIT, PH_CHECK, PH_WARMUP, PH_BARRIER, PH_TIMED, PH_RESULTS, PH_REBUILD, PH_COUNT };
static const char *const phase_name[PH_COUNT] = {"init", "check", "warm-up", "barrier", "timed loop", "results",
                                                 "rebuild"};

/* ---- options ------------------------------------------------------------------------------------------------
 * nccl-tests' flags keep nccl-tests' meanings (-b -e -f -i -n -w -c -o -d -r -z -t -g -T -J); stitch's own options
 * have long names (--ranks, --algo, --timeout, --groups, --topo, ...). The one clash is -a: nccl-tests' "average
 * over ranks" (0..3); here it is the algorithm, the flag every stitch script passes, and the time is always the
 * slowest rank's (nccl-tests' -a 3). Each size runs out of place, then in place (PL_OUT, PL_IN: the two column
 * sets); --place narrows that. */

enum { PL_OUT, PL_IN, PL_COUNT };
static const char *const place_name[PL_COUNT] = {"out-of-place", "in-place"};

struct opts {
    stitch_coll_t coll;
    const char *algo;  /* NULL: the library's default ($STITCH_ALGO, else auto) */
    int nranks;        /* threads mode: threads * gpus, --ranks, or the topology's / groups' ranks (default 2) */
    int threads, gpus; /* -t, -g (0: not given) */
    int ranks_opt;     /* --ranks (0: not given) */
    stitch_dtype_t dtype;
    stitch_op_t op;
    size_t minbytes, maxbytes;
    int factor;        /* -f: multiply by factor when > 1, else add stepbytes */
    size_t stepbytes;  /* -i */
    int factor_given, stepbytes_given;
    int check;
    int warmup;
    int iters;
    int places;        /* bit PL_OUT, bit PL_IN: the column sets run (--place; default both) */
    int mem_registered; /* --mem registered: launcher mode allocates the buffers with stitch_mem_alloc */
    int blocking;      /* -z: --device waits for the stream after every call; host calls always return done */
    int timeout_s;     /* 0: the library's default */
    int root;          /* rooted collectives */
    const char *json;  /* -J FILE: the machine-readable results (NULL: none) */
    const char *groups; /* NULL: $STITCH_GROUPS, else one group */
    const char *topo;   /* --topo FILE or --layout SPEC (stitch_config_t.topo); NULL: $STITCH_TOPO */
    const char *count_from; /* what gave nranks when -t/--ranks did not: "--topo FILE", "STITCH_TOPO=..." */
    int topo_layout;    /* topo came from --layout */
    int calibrate;      /* --calibrate: fit alpha, beta, gamma (calibrate()) instead of one benchmark */
    int bind;           /* --bind: threads mode binds rank r's thread to CPU r mod CPUs (mpirun's default) */
    int die_rank;       /* $STITCH_PERF_DIE_AT, the test hook: this rank dies in die_phase (-1: none) */
    int die_phase;
    const char *device; /* --device cuda|host: device communicators and device buffers (NULL: host API) */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " COLL [options]\n"
            "Benchmark and check a stitch collective, ranks as threads of this process; nccl-tests' flags with\n"
            "nccl-tests' meanings, stitch's own options with long names.\n"
            "\n"
            "  COLL                       all_reduce | reduce_scatter | all_gather | broadcast | reduce |\n"
            "                             scatter | gather | all_to_all | all_to_all_v\n"
            "  -t, --nthreads T           rank threads (default: 2, or the topology's or groups' ranks)\n"
            "  -g, --ngpus G              devices per thread, with --device only: T * G ranks (default: 1)\n"
            "      --ranks P              the rank count, 1..%d: the same as -t P\n"
            "  -b, --minbytes SIZE        smallest size in bytes, suffix K M G = 2^10 2^20 2^30 (default: 8)\n"
            "  -e, --maxbytes SIZE        largest size in bytes (default: 8M)\n"
            "  -f, --stepfactor F         multiply the size by F (default: 2); -f 1: add -i's bytes instead\n"
            "  -i, --stepbytes SIZE       add SIZE bytes per step (alone, or with -f 1; default: 1M)\n"
            "  -n, --iters N              timed calls per size and column set, >= 1 (default: 20)\n"
            "  -w, --warmup_iters N       warm-up calls per size and column set (default: 5)\n"
            "  -c, --check 0|1            check every element of every rank's output (default: 1)\n"
            "  -o, --op OP                sum prod max min; ignored by the collectives that do not reduce\n"
            "                             (default: sum)\n"
            "  -d, --datatype DTYPE       int8 uint8 int16 int32 int64 fp16 bf16 fp32 fp64 (default: fp32)\n"
            "  -r, --root ROOT            root of broadcast, reduce, scatter, gather (default: 0)\n"
            "  -z, --blocking 0|1         1: with --device, wait for the stream after every call (nccl-tests'\n"
            "                             blocking mode); host calls always return done, so it changes nothing\n"
            "                             there (default: 0)\n"
            "  -a, --algo ALGO            algorithm, or auto: chosen per size (default: $STITCH_ALGO, else auto);\n"
            "                             names from $STITCH_ALGO_FILE too. (nccl-tests' -a, the average over\n"
            "                             ranks, is not taken: the time is the slowest rank's, its -a 3)\n"
            "  -J, --json FILE            also write the results as one JSON document to FILE\n"
            "  -T, --timeout SEC          per-collective timeout (default: $STITCH_TIMEOUT, else 300)\n"
            "      --mem plain|registered the buffers: plain memory, or stitch_mem_alloc's registered memory, which\n"
            "                             processes of one host read in place (launcher mode; thread ranks read\n"
            "                             each other's buffers in place either way, so threads use plain memory)\n"
            "      --place both|out|in    the column sets run: out-of-place, in-place or both (default: both;\n"
            "                             all_to_all and all_to_all_v have no in-place form)\n"
            "      --groups SPEC          ranks grouped into servers, \"SxL\" or \"2,3\" (pipeline, hier, ahc;\n"
            "                             without -t, P is their total; default:\n"
            "                             $STITCH_GROUPS, else one group)\n"
            "      --topo FILE            the ranks' topology, a YAML file (topologies/); the rank count\n"
            "                             defaults to its ranks (default: $STITCH_TOPO, whose ranks count too)\n"
            "      --layout SPEC          the same as a layout: 2,3 (servers of 2 and 3 ranks), [2,3],[4]\n"
            "                             (three levels) or SxL; the rank count defaults to its ranks\n"
            "      --bind                 threads: bind rank r's thread to CPU r mod CPUs, as mpirun binds its\n"
            "                             processes by default (unbound threads may share one core)\n"
            "      --calibrate            no COLL: measure this machine's transport on P ranks (threads; under\n"
            "                             a launcher, processes over $STITCH_TRANSPORT) and fit alpha, beta\n"
            "                             (ring all_gather) and gamma (the fp32 sum kernel); prints a topology\n"
            "                             snippet for --topo / STITCH_TOPO\n"
            "      --device NAME          device communicators (stitch_comm_init_devices): cuda, or host (the\n"
            "                             device engine on host threads); buffers in device memory; two more\n"
            "                             columns: the device's copy rate (device-to-device copy of the same\n"
            "                             size) and ratio = ranks per device * out-of-place busbw / copy\n"
            "  -h, --help                 print this help and exit\n"
            "\n"
            "Under a launcher (mpirun, srun, torchrun, STITCH_RANK/SIZE/ROOT) each process is one rank: -t and -g\n"
            "are 1 there, and the job's size is the rank count.\n"
            "Each row is one size: out-of-place, then in-place, each with its time, algbw, busbw and #wrong, as\n"
            "nccl-tests prints them. The size column is the bytes of the largest buffer (all_reduce, broadcast,\n"
            "reduce: count * size of DTYPE; the others: count * P * size of DTYPE, all_to_all_v's counts being\n"
            "count-1..count+1 per pair); sizes are rounded down to that granularity.\n"
            "Exit status: 0 when every size passed, 1 when one failed, 2 on a bad command line.\n",
            MAX_RANKS);
    fprintf(f, "\nEnvironment: the library's tunables (README.md's Tunables table says more):\n");
#define ST_TUNABLE(name, load, def, meaning) fprintf(f, "  %s%s%s%s\n      %s\n", #name, \
                                                     def ? " (default: " : "", def ? def : "", def ? ")" : "", meaning);
#include "../runtime/tunables.def"
}

static void bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* The names a lookup accepts, for the message of an unknown one: "int8 uint8 ...". */
static const char *known_names(const char *(*name_of)(int), char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; name_of(i) != NULL && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", name_of(i));
    return buf;
}

static const char *dtype_name_i(int i) { return i < STITCH_DTYPE_COUNT ? stitch_dtype_name(i) : NULL; }
static const char *op_name_i(int i) { return i < STITCH_OP_COUNT ? stitch_op_name(i) : NULL; }
static const char *coll_name_i(int i) { return i < STITCH_COLL_COUNT ? stitch_coll_name(i) : NULL; }

static int lookup(const char *what, const char *text, int (*from_name)(const char *), const char *(*name_of)(int))
{
    int v = from_name(text);
    if (v < 0) {
        char known[256];
        bad_usage("unknown %s '%s' (known: %s)", what, text, known_names(name_of, known, sizeof known));
    }
    return v;
}

static int parse_int(const char *opt, const char *text, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        bad_usage("invalid value '%s' for %s (expected an integer in %d..%d)", text, opt, lo, hi);
    return (int)v;
}

/* "16M", "16MiB", "16777216": st_size.h's grammar, the one the library's variables and stitchc sim -b read. */
static size_t parse_size(const char *opt, const char *text)
{
    unsigned long long v;
    if (!st_parse_size(text, SIZE_MAX >> 1, &v))
        bad_usage("invalid size '%s' for %s (expected bytes: 1048576, 1M or 1MiB)", text, opt);
    return (size_t)v;
}

static void check_algo(const struct opts *o)
{
    const char *names[MAX_ALGOS];
    int n = stitch_algorithms(o->coll, names, MAX_ALGOS);
    char known[512];
    size_t used = 0;
    if (strcasecmp(o->algo, "auto") == 0) /* the library's own choice per size */
        return;
    if (getenv("STITCH_ALGO_FILE")) /* names from that file: the communicator checks them (its error lists all) */
        return;
    snprintf(known, sizeof known, "auto");
    used = strlen(known);
    for (int i = 0; i < n && i < MAX_ALGOS; i++) {
        if (strcmp(names[i], o->algo) == 0)
            return;
        if (used < sizeof known)
            used += (size_t)snprintf(known + used, sizeof known - used, " %s", names[i]);
    }
    bad_usage("unknown algorithm '%s' for %s (known: %s)", o->algo, stitch_coll_name(o->coll), known);
}

/* The ranks a --groups value stands for ("SxL": S * L, "2,3": 5), or `dflt` when it is malformed (the library's
 * check then says what is wrong with it). */
static int groups_ranks(const char *spec, int dflt)
{
    long S, L, total = 0;
    char x, rest;
    if (sscanf(spec, "%ld%c%ld%c", &S, &x, &L, &rest) == 3 && x == 'x')
        return S >= 1 && L >= 1 && S * L <= MAX_RANKS ? (int)(S * L) : dflt;
    for (const char *c = spec; *c;) {
        char *end;
        long v = strtol(c, &end, 10);
        if (end == c || v < 1 || (*end && *end != ',') || (total += v) > MAX_RANKS)
            return dflt;
        c = *end ? end + 1 : end;
    }
    return total > 0 ? (int)total : dflt;
}

/* --topo FILE and --layout SPEC both become stitch_config_t.topo; the library reads a value made only of digits,
 * ',', '[', ']', 'x', 'X' and blanks as a layout, anything else as a file (stitch.h), so each option checks its
 * side. */
static void set_topo(struct opts *o, const char *opt, const char *v, int layout)
{
    int is_layout = *v != '\0' && v[strspn(v, "0123456789,[]xX \t")] == '\0';
    if (o->topo)
        bad_usage("%s: --topo and --layout are given once, and exclude each other", opt);
    if (layout && !is_layout)
        bad_usage("bad layout '%s' for --layout (expected counts of ranks such as 2,3, nested lists such as "
                  "[2,3],[4] for three levels, or SxL)", v);
    if (!layout && is_layout)
        bad_usage("--topo '%s' reads like a layout: use --layout %s, or --topo ./%s for a file of that name", v, v, v);
    o->topo = v, o->topo_layout = layout;
}

/* The number of ranks of a topology setting (--topo, --layout, $STITCH_TOPO), for the rank count's default (0: the
 * file sets no layout); a bad topology is a bad command line. `label` names the setting in the messages. */
static int topo_ranks(const char *topo, const char *label, int layout)
{
    char err[1024];
    int p = stitch_topo_ranks(topo, err, sizeof err);
    if (p < 0) { /* a file's error is the loader's `FILE:LINE:COL: error: ...`, as compilers print it */
        if (layout || strchr(err, ':') == NULL || strstr(err, "error:") == NULL)
            fprintf(stderr, PROG ": error: %s: %s\n", label, err);
        else
            fprintf(stderr, "%s\n", err);
        exit(2);
    }
    if (p > MAX_RANKS)
        bad_usage("%s holds %d ranks; at most %d run as threads here", label, p, MAX_RANKS);
    return p;
}

/* $STITCH_PERF_DIE_AT "R:PHASE", PHASE a phase_name with '-' for blanks (timed-loop). Unset: no rank dies. */
static void parse_die_at(struct opts *o)
{
    const char *v = getenv("STITCH_PERF_DIE_AT");
    char *end;
    o->die_rank = -1;
    if (v == NULL || v[0] == '\0')
        return;
    long r = strtol(v, &end, 10);
    for (int ph = 0; end != v && *end == ':' && r >= 0 && r < MAX_RANKS && ph < PH_RESULTS; ph++) {
        size_t n = strlen(phase_name[ph]);
        int same = strlen(end + 1) == n;
        for (size_t i = 0; same && i < n; i++)
            same = end[1 + i] == (phase_name[ph][i] == ' ' ? '-' : phase_name[ph][i]);
        if (same) {
            o->die_rank = (int)r, o->die_phase = ph;
            return;
        }
    }
    bad_usage("bad STITCH_PERF_DIE_AT '%s' (a test hook: RANK:PHASE, PHASE one of init check warm-up barrier "
              "timed-loop)", v);
}

/* The rank count in threads mode: -t * -g or --ranks when given, else the topology's or the groups' (--topo,
 * --layout, --groups, then $STITCH_TOPO, $STITCH_GROUPS: the library's order), else 2. A count given both ways must
 * agree with the topology's, which is checked here, before any rank starts, not by the library at init. */
static void resolve_ranks(struct opts *o)
{
    static char label[1100];
    char what[64];
    int given = 0, from = 0;
    const char *env_topo = getenv("STITCH_TOPO"), *env_groups = getenv("STITCH_GROUPS");
    if (o->gpus > 1 && !o->device)
        bad_usage("-g %d: devices per thread need --device (without a device layer each rank is one host thread: "
                  "-t %d for %d ranks)", o->gpus, (o->threads ? o->threads : 1) * o->gpus,
                  (o->threads ? o->threads : 1) * o->gpus);
    if (o->threads || o->gpus) {
        long n = (long)(o->threads ? o->threads : 1) * (o->gpus ? o->gpus : 1);
        if (n > MAX_RANKS)
            bad_usage("-t %d * -g %d = %ld ranks; at most %d", o->threads ? o->threads : 1, o->gpus ? o->gpus : 1,
                      n, MAX_RANKS);
        if (o->ranks_opt && o->ranks_opt != n)
            bad_usage("--ranks %d disagrees with -t %d * -g %d = %ld ranks (give one of them)", o->ranks_opt,
                      o->threads ? o->threads : 1, o->gpus ? o->gpus : 1, n);
        given = (int)n;
        if (o->gpus)
            snprintf(what, sizeof what, "-t %d -g %d make", o->threads ? o->threads : 1, o->gpus);
        else
            snprintf(what, sizeof what, "-t %d makes", o->threads);
    } else if (o->ranks_opt) {
        given = o->ranks_opt;
        snprintf(what, sizeof what, "--ranks %d makes", given);
    }
    if (o->topo) {
        snprintf(label, sizeof label, "%s %s", o->topo_layout ? "--layout" : "--topo", o->topo);
        from = topo_ranks(o->topo, o->topo_layout ? "--layout" : label, o->topo_layout);
    } else if (o->groups) {
        snprintf(label, sizeof label, "--groups %s", o->groups);
        from = groups_ranks(o->groups, 0);
    } else if (env_topo && env_topo[0]) {
        snprintf(label, sizeof label, "STITCH_TOPO=%s", env_topo);
        from = topo_ranks(env_topo, label, 0);
    } else if (env_groups && env_groups[0]) {
        snprintf(label, sizeof label, "STITCH_GROUPS=%s", env_groups);
        from = groups_ranks(env_groups, 0);
    }
    if (given && from && given != from)
        bad_usage("%s %d ranks, but %s holds %d: give -t %d (or --ranks %d), or leave the count to it", what,
                  given, label, from, from, from);
    o->nranks = given ? given : from ? from : 2;
    o->count_from = given ? NULL : from ? label : NULL;
}

/* -i and -f: nccl-tests multiplies when the factor is above 1 and adds -i's bytes otherwise; here -i alone means
 * adding, and -i with a factor above 1 is a contradiction. */
static void resolve_step(struct opts *o)
{
    if (o->stepbytes_given && o->factor_given && o->factor > 1)
        bad_usage("-i %zu adds bytes and -f %d multiplies: give one (-f 1 -i %zu adds)", o->stepbytes, o->factor,
                  o->stepbytes);
    if (o->stepbytes_given && !o->factor_given)
        o->factor = 1;
}

static int parse_place(const char *v)
{
    if (strcmp(v, "both") == 0)
        return 1 << PL_OUT | 1 << PL_IN;
    if (strcmp(v, "out") == 0)
        return 1 << PL_OUT;
    if (strcmp(v, "in") == 0)
        return 1 << PL_IN;
    bad_usage("invalid value '%s' for --place (expected both, out or in)", v);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    enum { OPT_RANKS = 256, OPT_GROUPS, OPT_TOPO, OPT_LAYOUT, OPT_CALIBRATE, OPT_DEVICE, OPT_BIND, OPT_PLACE, OPT_MEM };
    static const struct option longopts[] = {
        {"nthreads", required_argument, NULL, 't'}, {"ngpus", required_argument, NULL, 'g'},
        {"ranks", required_argument, NULL, OPT_RANKS}, {"algo", required_argument, NULL, 'a'},
        {"datatype", required_argument, NULL, 'd'}, {"op", required_argument, NULL, 'o'},
        {"minbytes", required_argument, NULL, 'b'}, {"maxbytes", required_argument, NULL, 'e'},
        {"stepfactor", required_argument, NULL, 'f'}, {"stepbytes", required_argument, NULL, 'i'},
        {"check", required_argument, NULL, 'c'},    {"warmup_iters", required_argument, NULL, 'w'},
        {"iters", required_argument, NULL, 'n'},    {"blocking", required_argument, NULL, 'z'},
        {"json", required_argument, NULL, 'J'},     {"timeout", required_argument, NULL, 'T'},
        {"root", required_argument, NULL, 'r'},     {"groups", required_argument, NULL, OPT_GROUPS},
        {"topo", required_argument, NULL, OPT_TOPO}, {"layout", required_argument, NULL, OPT_LAYOUT},
        {"calibrate", no_argument, NULL, OPT_CALIBRATE}, {"device", required_argument, NULL, OPT_DEVICE},
        {"bind", no_argument, NULL, OPT_BIND},      {"place", required_argument, NULL, OPT_PLACE},
        {"mem", required_argument, NULL, OPT_MEM},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    *o = (struct opts){.dtype = STITCH_FP32, .op = STITCH_SUM, .minbytes = 8, .maxbytes = 8 << 20, .factor = 2,
                       .stepbytes = 1 << 20, .check = 1, .warmup = 5, .iters = 20,
                       .places = 1 << PL_OUT | 1 << PL_IN};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":t:g:a:n:d:o:b:e:f:i:c:w:z:J:T:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': o->threads = parse_int("-t", optarg, 1, MAX_RANKS); break;
        case 'g': o->gpus = parse_int("-g", optarg, 1, MAX_RANKS); break;
        case OPT_RANKS: o->ranks_opt = parse_int("--ranks", optarg, 1, MAX_RANKS); break;
        case 'a': o->algo = optarg; break;
        case 'd': o->dtype = lookup("dtype", optarg, stitch_dtype_from_name, dtype_name_i); break;
        case 'o': o->op = lookup("op", optarg, stitch_op_from_name, op_name_i); break;
        case 'b': o->minbytes = parse_size("-b", optarg); break;
        case 'e': o->maxbytes = parse_size("-e", optarg); break;
        case 'f': o->factor = parse_int("-f", optarg, 1, 1 << 20), o->factor_given = 1; break;
        case 'i':
            if ((o->stepbytes = parse_size("-i", optarg)) == 0)
                bad_usage("invalid size '%s' for -i (the step must be at least 1 byte)", optarg);
            o->stepbytes_given = 1;
            break;
        case 'c': o->check = parse_int("-c", optarg, 0, 1); break;
        case 'w': o->warmup = parse_int("-w", optarg, 0, 1 << 30); break;
        case 'n': o->iters = parse_int("-n", optarg, 1, 1 << 30); break;
        case 'z': o->blocking = parse_int("-z", optarg, 0, 1); break;
        case 'J': o->json = optarg; break;
        case 'r': o->root = parse_int("-r", optarg, 0, MAX_RANKS - 1); break;
        case OPT_GROUPS: o->groups = optarg; break;
        case OPT_TOPO: set_topo(o, "--topo", optarg, 0); break;
        case OPT_LAYOUT: set_topo(o, "--layout", optarg, 1); break;
        case OPT_CALIBRATE: o->calibrate = 1; break;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_BIND: o->bind = 1; break;
        case OPT_PLACE: o->places = parse_place(optarg); break;
        case OPT_MEM:
            if (strcmp(optarg, "plain") != 0 && strcmp(optarg, "registered") != 0)
                bad_usage("--mem takes plain or registered, not '%s'", optarg);
            o->mem_registered = strcmp(optarg, "registered") == 0;
            break;
        case 'T': o->timeout_s = parse_int("-T", optarg, 1, 1 << 20); break;
        case 'h': usage(stdout); exit(0);
        case ':': bad_usage("option '%s' needs a value (see --help)", argv[optind - 1]);
        default: bad_usage("unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    parse_die_at(o);
    resolve_step(o);
    if (o->topo && o->groups)
        bad_usage("--groups and --%s exclude each other (the topology's layout gives the groups)",
                  o->topo_layout ? "layout" : "topo");
    if (stitch_launcher() == NULL) {
        resolve_ranks(o);
    } else if (o->threads > 1 || o->gpus > 1 || o->ranks_opt) { /* launcher mode: the job's size, checked at init */
        bad_usage("under %s each process is one rank: %s %d is refused (the job's size is the rank count)",
                  stitch_launcher(), o->ranks_opt ? "--ranks" : o->threads > 1 ? "-t" : "-g",
                  o->ranks_opt ? o->ranks_opt : o->threads > 1 ? o->threads : o->gpus);
    }
    if (o->calibrate && optind == argc)
        return; /* calibrate() sets the collectives */
    if (optind >= argc)
        bad_usage("missing the collective: all_reduce, reduce_scatter, all_gather, broadcast, reduce, scatter, "
                  "gather, all_to_all or all_to_all_v (see --help)");
    o->coll = lookup("collective", argv[optind], stitch_coll_from_name, coll_name_i);
    if (o->coll >= STITCH_COLL_COUNT)
        bad_usage("collective '%s' is not benchmarked here", argv[optind]);
    if (optind + 1 < argc)
        bad_usage("unexpected argument '%s' (see --help)", argv[optind + 1]);
    if (o->root >= o->nranks && stitch_launcher() == NULL) /* launcher mode: checked against the job's size */
        bad_usage("-r %d is not a rank (0..%d)", o->root, o->nranks - 1);
    if (o->coll == STITCH_ALL_TO_ALL || o->coll == STITCH_ALL_TO_ALL_V) {
        if (o->places == 1 << PL_IN)
            bad_usage("--place in: %s has no in-place form", stitch_coll_name(o->coll));
        o->places &= ~(1 << PL_IN); /* its in-place columns say N/A */
    }
    if (o->minbytes > o->maxbytes)
        bad_usage("-b %zu is larger than -e %zu", o->minbytes, o->maxbytes);
    if (o->algo)
        check_algo(o);
}

/* ---- sizes -------------------------------------------------------------------------------------------------- */

static size_t esize_of(const struct opts *o) { return stitch_dtype_size(o->dtype); }

/* Collectives whose vector is one block (st_sched.h): size = count * esize. */
static int one_block(stitch_coll_t c)
{
    return c == STITCH_ALL_REDUCE || c == STITCH_BROADCAST || c == STITCH_REDUCE;
}

static int st_rooted(stitch_coll_t c)
{
    return c == STITCH_BROADCAST || c == STITCH_REDUCE || c == STITCH_SCATTER || c == STITCH_GATHER;
}

static int reduces(stitch_coll_t c)
{
    return c == STITCH_ALL_REDUCE || c == STITCH_REDUCE_SCATTER || c == STITCH_REDUCE;
}

/* Sizes are multiples of this: one element per rank's block. */
static size_t granularity(const struct opts *o)
{
    return one_block(o->coll) ? esize_of(o) : esize_of(o) * (size_t)o->nranks;
}

/* count as the API takes it: all_reduce's length, reduce_scatter's output length, all_gather's input length. */
static size_t api_count(const struct opts *o, size_t bytes) { return bytes / granularity(o); }

/* -b, -b*f, ... -e (or -b, -b+i, ... -e) rounded down to the granularity, without repeats; with -f, 0 steps to one
 * granule. */
#define MAX_SIZES 100000
static size_t *size_list(const struct opts *o, int *n)
{
    size_t g = granularity(o), cap = 64, *v;
    if (g == 0) /* cannot be: -d takes only a dtype with a size, and a run has at least one rank */
        bad_usage("dtype %d on %d ranks makes no element to step sizes by", (int)o->dtype, o->nranks);
    v = malloc(cap * sizeof *v);
    *n = 0;
    for (size_t raw = o->minbytes; v != NULL && raw <= o->maxbytes;) {
        size_t s = raw / g * g;
        if (*n == 0 || v[*n - 1] != s)
            v[(*n)++] = s;
        if (*n == MAX_SIZES)
            bad_usage("-b %zu .. -e %zu in steps of %zu bytes make more than %d sizes", o->minbytes, o->maxbytes,
                      o->stepbytes, MAX_SIZES);
        if (*n == (int)cap && (v = realloc(v, (cap *= 2) * sizeof *v)) == NULL)
            break;
        if (o->factor == 1) {
            if (raw > SIZE_MAX - o->stepbytes)
                break;
            raw += o->stepbytes;
            continue;
        }
        size_t next = raw == 0 ? g : raw * (size_t)o->factor;
        if (next / (size_t)o->factor != raw && raw != 0)
            break; /* overflow */
        raw = next;
    }
    if (v == NULL) {
        fprintf(stderr, PROG ": error: out of memory\n");
        exit(1);
    }
    return v;
}

/* nccl-tests' PERFORMANCE.md: the bus bandwidth a ring needs to move the same data (broadcast and reduce: 1;
 * all_reduce 2(p-1)/p; the others (p-1)/p). */
static double busbw_factor(const struct opts *o)
{
    double p = o->nranks;
    if (o->coll == STITCH_BROADCAST || o->coll == STITCH_REDUCE)
        return 1.0;
    return o->coll == STITCH_ALL_REDUCE ? 2.0 * (p - 1) / p : (p - 1) / p;
}

/* ---- element encoding, independent of the library ------------------------------------------------------------ */

static int is_float(stitch_dtype_t t) { return t >= STITCH_FP16; }

static uint16_t fp16_from_double(double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    x = fabs(x);
    if (isnan(x))
        return 0x7e00;
    if (x < 0x1p-14) /* subnormal: m * 2^-24; m == 1024 is the smallest normal, which encodes the same */
        return sign | (uint16_t)nearbyint(x * 0x1p24);
    int e;
    double f = frexp(x, &e); /* x = f * 2^e, f in [0.5, 1) */
    int exp = e - 1;
    long mant = lrint((f * 2.0 - 1.0) * 1024.0);
    if (mant == 1024)
        mant = 0, exp++;
    if (exp > 15)
        return sign | 0x7c00;
    return sign | (uint16_t)((exp + 15) << 10) | (uint16_t)mant;
}

static double fp16_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static uint16_t bf16_from_double(double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f))
        return 0x7fc0;
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16); /* round to nearest even */
}

static double bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Integers wrap modulo 2^bits, as two's complement (unsigned types stay non-negative). */
static int64_t wrap_int(stitch_dtype_t t, int64_t v)
{
    switch (t) {
    case STITCH_INT8: return (int64_t)(((uint64_t)v & 0xff) ^ 0x80) - 0x80;
    case STITCH_UINT8: return (int64_t)((uint64_t)v & 0xff);
    case STITCH_INT16: return (int64_t)(((uint64_t)v & 0xffff) ^ 0x8000) - 0x8000;
    case STITCH_INT32: return (int64_t)(((uint64_t)v & 0xffffffffu) ^ 0x80000000u) - 0x80000000LL;
    default: return v;
    }
}

/* Store the value v (exactly representable, or an integer to wrap) as one element of type t (little-endian). */
static void encode(stitch_dtype_t t, double v, unsigned char *dst)
{
    uint16_t h;
    float f;
    int64_t i;
    switch (t) {
    case STITCH_FP16: h = fp16_from_double(v); memcpy(dst, &h, 2); return;
    case STITCH_BF16: h = bf16_from_double(v); memcpy(dst, &h, 2); return;
    case STITCH_FP32: f = (float)v; memcpy(dst, &f, 4); return;
    case STITCH_FP64: memcpy(dst, &v, 8); return;
    default:
        i = (int64_t)v;
        memcpy(dst, &i, stitch_dtype_size(t)); /* the low bytes: wrapping on a little-endian host */
        return;
    }
}

static double decode(stitch_dtype_t t, const unsigned char *src)
{
    uint16_t h;
    float f;
    double d;
    int64_t i = 0;
    switch (t) {
    case STITCH_FP16: memcpy(&h, src, 2); return fp16_to_double(h);
    case STITCH_BF16: memcpy(&h, src, 2); return bf16_to_double(h);
    case STITCH_FP32: memcpy(&f, src, 4); return f;
    case STITCH_FP64: memcpy(&d, src, 8); return d;
    default: memcpy(&i, src, stitch_dtype_size(t)); return (double)wrap_int(t, i);
    }
}

/* ---- the values: inputs and expected outputs ------------------------------------------------------------------ */

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Ranks below this bound may contribute non-trivial sum terms (|term| <= 3): every partial sum, in any order, is
 * an integer of magnitude <= 3 * bound, exactly representable in the type. Integers wrap, which is exact. */
static int sum_rank_bound(stitch_dtype_t t)
{
    switch (t) {
    case STITCH_BF16: return 256 / 3;
    case STITCH_FP16: return 2048 / 3;
    default: return MAX_RANKS;
    }
}

/* Ranks below this bound may contribute factors 2 or 1/2: partial products stay within 2^+-bound. */
static int prod_rank_bound(stitch_dtype_t t)
{
    switch (t) {
    case STITCH_INT8: case STITCH_UINT8: return 6;
    case STITCH_INT16: return 14;
    case STITCH_FP16: return 14;
    case STITCH_INT32: return 30;
    case STITCH_INT64: return 62;
    default: return 126;
    }
}

/* The input element `i` of rank `r`, as an exact value. */
static double gen_value(const struct opts *o, int r, size_t i)
{
    uint64_t h = mix(((uint64_t)r << 44) ^ i);
    if (!reduces(o->coll)) /* distinct for every source (< 251) and every shift (not a multiple of 251) */
        return (double)(((uint64_t)r * 37 + i * 11) % 251);
    switch (o->op) {
    case STITCH_SUM:
        return r < sum_rank_bound(o->dtype) ? (double)(h % 5) - 1.0 : 0.0;
    case STITCH_PROD: {
        double sign = (h >> 8) % 3 == 0 ? -1.0 : 1.0;
        if (r >= prod_rank_bound(o->dtype))
            return sign;
        unsigned k = (unsigned)(h % 4);
        return sign * (k == 0 ? 2.0 : k == 1 && is_float(o->dtype) ? 0.5 : 1.0);
    }
    default:
        return (double)(h % 251);
    }
}

/* The value as the type holds it: integers wrapped, floats unchanged (they are exact by construction). */
static double typed(const struct opts *o, double v)
{
    return is_float(o->dtype) ? v : (double)wrap_int(o->dtype, (int64_t)v);
}

/* One reduction step on typed values. Values travel as doubles, which is exact here even for int64: sums stay
 * below 3 * MAX_RANKS and products are +-2^k with k <= 62. Integer sums and products wrap like the type. */
static double reduce2(const struct opts *o, double a, double b)
{
    uint64_t x = (uint64_t)(int64_t)a, y = (uint64_t)(int64_t)b;
    switch (o->op) {
    case STITCH_SUM: return is_float(o->dtype) ? a + b : (double)wrap_int(o->dtype, (int64_t)(x + y));
    case STITCH_PROD: return is_float(o->dtype) ? a * b : (double)wrap_int(o->dtype, (int64_t)(x * y));
    case STITCH_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

/* The expected value at global index g: all_reduce/reduce_scatter reduce index g over the ranks; all_gather's
 * output g is element g % count of rank g / count. */
static double expected_value(const struct opts *o, size_t count, size_t g)
{
    if (o->coll == STITCH_ALL_GATHER)
        return typed(o, gen_value(o, (int)(g / count), g % count));
    double acc = typed(o, gen_value(o, 0, g));
    for (int r = 1; r < o->nranks; r++)
        acc = reduce2(o, acc, typed(o, gen_value(o, r, g)));
    return acc;
}

/* ---- shared state of the rank threads --------------------------------------------------------------------------- */

struct bench;

/* One size's results, both column sets, as printed; kept for -J. */
struct row {
    size_t bytes, count;
    char algo[64];
    int ran[PL_COUNT], failed[PL_COUNT];
    double time[PL_COUNT], algbw[PL_COUNT], busbw[PL_COUNT];
    size_t wrong[PL_COUNT];
    double copy;             /* --device: GB/s of a device-to-device copy (0: none) */
};

struct rank_state {
    struct bench *b;
    int rank;
    pthread_t thread;
    unsigned char *buf_a, *buf_b; /* out-of-place: send and recv; in-place: buf_a only */
    int place;                   /* the column set running (PL_OUT, PL_IN), -1 between them */
    double time[PL_COUNT];       /* seconds per call of the last size, per column set */
    size_t wrong[PL_COUNT];
    stitch_status_t status;      /* first failure of the last size */
    char error[1024];            /* its message (the library's) */
    int phase;                   /* what this rank is doing (enum phase) */
    int fail_phase;              /* where the first failure happened */
    int fail_place;              /* and in which column set (-1: outside both; the set and those after it fail) */
    int size_index;              /* the size being run (the test hook fires in the first) */
    int died;                    /* thread mode: the test hook has killed this rank (in the first size) */
    long long bad_index;         /* first wrong output element, -1 if none, and its column set */
    int bad_place;
    double got, want;
    size_t *v;                   /* all_to_all_v: sendcounts, sdispls, recvcounts, rdispls (4 * p) */
    unsigned char *dev_a, *dev_b; /* --device: the device copies of buf_a and buf_b, what the calls take */
    size_t size_a, size_b;
};

struct bench {
    struct opts o;
    size_t *sizes;
    int nsizes;
    stitch_comm_t *comms[MAX_RANKS];
    struct rank_state ranks[MAX_RANKS];
    pthread_barrier_t barrier;
    unsigned char *expect;   /* expected bytes at every global index of the current size */
    int passed, failed;
    double busbw_sum;
    int busbw_rows;
    size_t oob;              /* wrong elements over every size and column set ("Out of bounds values") */
    int any_error;           /* a call failed somewhere */
    struct row *rows;        /* one per size, for -J */
    int nrows;
    int rebuild, fatal;      /* set by rank 0 between barriers */
    int proc, me;            /* launcher mode: one rank per process, this process's rank (perf_proc_*) */
    double all_time[PL_COUNT]; /* launcher mode: the size's results combined over the ranks */
    size_t all_wrong[PL_COUNT];
    int all_failed[PL_COUNT];
    int verdict_fd;          /* launcher mode, rank != 0: the real stdout, for the closing line (-1: none) */
    double *rec;             /* --calibrate: each size's time, in order (NULL: not recorded) */
    int nrec;
    const st_dev_ops *dops;  /* --device: the entry; ndev devices, per_dev ranks on each */
    int ndev, per_dev;
    double copy_time;        /* --device: rank 0's device-to-device copy of the current size, seconds */
};

/* Record this size's first failure on this rank: its status, message and phase. */
static void fail(struct rank_state *rs, stitch_status_t st, const char *msg)
{
    if (rs->status != STITCH_OK)
        return;
    rs->status = st, rs->fail_phase = rs->phase, rs->fail_place = rs->place;
    snprintf(rs->error, sizeof rs->error, "%s", msg[0] ? msg : "(no detail)");
}

/* After each synchronisation (library call or barrier): the test hook STITCH_PERF_DIE_AT (comment at phase_name). */
static void synced(struct rank_state *rs)
{
    const struct opts *o = &rs->b->o;
    if (o->die_rank != rs->rank || o->die_phase != rs->phase || rs->died ||
        (rs->phase != PH_INIT && rs->size_index != 0))
        return;
    if (rs->b->proc)
        raise(SIGKILL);
    rs->died = 1;
    stitch_comm_abort(rs->b->comms[rs->rank]);
    char msg[200];
    snprintf(msg, sizeof msg, "killed here by the test hook STITCH_PERF_DIE_AT (thread mode: rank %d aborted its "
             "communicator and makes no more calls in this size)", rs->rank);
    fail(rs, STITCH_ERR_ABORTED, msg);
}

static void perf_proc_barrier(struct rank_state *rs);
static void barrier(struct rank_state *rs, int phase)
{
    rs->phase = phase;
    if (rs->b->proc)
        perf_proc_barrier(rs);
    else
        pthread_barrier_wait(&rs->b->barrier);
    if (rs->status == STITCH_OK)
        synced(rs);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- communicators ---------------------------------------------------------------------------------------------- */

/* Returns 0, or the exit status to leave with (2 for a bad configuration such as STITCH_ALGO). `where` prefixes the
 * error messages: "init", or "size S: rebuild". */
static int make_comms(struct bench *b, const char *where)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[2048] = "";
    cfg.timeout_ms = b->o.timeout_s * 1000;
    cfg.groups = b->o.groups;
    cfg.topo = b->o.topo;
    stitch_status_t st = STITCH_OK;
    if (b->proc) {
        if (!b->comms[b->me])
            return 1; /* made once by perf_proc_init; an aborted one is not rebuilt */
    } else if ((st = b->o.device ? stitch_comm_init_devices(b->o.nranks, b->o.device, NULL, &cfg, b->comms, err,
                                                            sizeof err)
                                 : stitch_comm_init_threads(b->o.nranks, &cfg, b->comms, err, sizeof err)) !=
               STITCH_OK) {
        fprintf(stderr, PROG ": error: %s: %s: %s%s%s\n", where,
                b->o.device ? "stitch_comm_init_devices" : "stitch_comm_init_threads", stitch_strerror(st),
                err[0] ? ": " : "", err);
        return st == STITCH_ERR_CONFIG ? 2 : 1;
    }
    for (int r = 0; b->o.algo != NULL && r < b->o.nranks; r++) {
        if (b->proc && r != b->me)
            continue;
        st = stitch_comm_set_algorithm(b->comms[r], b->o.coll, b->o.algo);
        if (st != STITCH_OK) {
            fprintf(stderr, PROG ": error: %s: stitch_comm_set_algorithm(%s): %s: %s\n", where, b->o.algo,
                    stitch_strerror(st), stitch_comm_last_error(b->comms[r]));
            return 1;
        }
    }
    return 0;
}

static void destroy_comms(struct bench *b)
{
    for (int r = 0; r < b->o.nranks; r++) {
        if (b->comms[r] != NULL)
            stitch_comm_destroy(b->comms[r]);
        b->comms[r] = NULL;
    }
}

/* ---- one rank ------------------------------------------------------------------------------------------------- */

static void rank_buffers(const struct rank_state *rs, size_t count, void **send, void **recv)
{
    const struct opts *o = &rs->b->o;
    size_t block = count * esize_of(o) * (size_t)rs->rank;
    int root = rs->rank == o->root;
    if (rs->place != PL_IN) {
        *send = rs->buf_a, *recv = rs->buf_b;
        return;
    }
    *send = *recv = rs->buf_a;
    if (o->coll == STITCH_REDUCE_SCATTER || (o->coll == STITCH_SCATTER && root))
        *recv = rs->buf_a + block;
    else if (o->coll == STITCH_ALL_GATHER || (o->coll == STITCH_GATHER && root))
        *send = rs->buf_a + block;
}

/* all_to_all_v: elements from rank i to rank j (count-1..count+1; none when count is 0) and where block j sits in
 * a buffer (j * (count + 1), so short blocks leave gaps). */
static size_t v_count(size_t count, int i, int j)
{
    return count ? count - 1 + (size_t)((i + 2 * j) % 3) : 0;
}

static size_t v_displ(size_t count, int j)
{
    return (size_t)j * (count + 1);
}

/* Elements of this rank's input and output. */
static size_t in_count(const struct opts *o, size_t count, int rank)
{
    size_t p = (size_t)o->nranks;
    switch (o->coll) {
    case STITCH_REDUCE_SCATTER: case STITCH_ALL_TO_ALL: return count * p;
    case STITCH_SCATTER: return rank == o->root ? count * p : 0;
    case STITCH_BROADCAST: return rank == o->root ? count : 0;
    case STITCH_ALL_TO_ALL_V: return (count + 1) * p;
    default: return count;
    }
}

static size_t out_count(const struct opts *o, size_t count, int rank)
{
    size_t p = (size_t)o->nranks;
    switch (o->coll) {
    case STITCH_ALL_GATHER: case STITCH_ALL_TO_ALL: return count * p;
    case STITCH_GATHER: return rank == o->root ? count * p : 0;
    case STITCH_REDUCE: return rank == o->root ? count : 0;
    case STITCH_ALL_TO_ALL_V: return (count + 1) * p;
    default: return count;
    }
}

/* Global index of this rank's output element 0 in the expected array (collectives that reduce). */
static size_t out_offset(const struct opts *o, size_t count, int rank)
{
    return o->coll == STITCH_REDUCE_SCATTER ? count * (size_t)rank : 0;
}

/* Input element i of `rank`. Data that only moves is coded by its source: the rank, or from * p + to. */
static double input_value(const struct opts *o, size_t count, int rank, size_t i)
{
    int p = o->nranks;
    if (o->coll == STITCH_ALL_TO_ALL)
        return gen_value(o, rank * p + (int)(i / count), i % count);
    if (o->coll == STITCH_ALL_TO_ALL_V) {
        int j = (int)(i / (count + 1));
        size_t k = i % (count + 1);
        return k < v_count(count, rank, j) ? gen_value(o, rank * p + j, k) : 0;
    }
    return gen_value(o, rank, i);
}

/* Output element j of `rank` for the collectives that only move data; *skip for all_to_all_v's gaps. */
static double moved_value(const struct opts *o, size_t count, int rank, size_t j, int *skip)
{
    int p = o->nranks;
    *skip = 0;
    switch (o->coll) {
    case STITCH_BROADCAST: return typed(o, gen_value(o, o->root, j));
    case STITCH_SCATTER: return typed(o, gen_value(o, o->root, (size_t)rank * count + j));
    case STITCH_ALL_TO_ALL: return typed(o, gen_value(o, (int)(j / count) * p + rank, j % count));
    case STITCH_ALL_TO_ALL_V: {
        int i = (int)(j / (count + 1));
        size_t k = j % (count + 1);
        *skip = k >= v_count(count, i, rank);
        return *skip ? 0 : typed(o, gen_value(o, i * p + rank, k));
    }
    default: return typed(o, gen_value(o, (int)(j / count), j % count)); /* all_gather, gather */
    }
}

/* The expected bytes of output element j (reducing collectives: from the shared expected array). */
static int want_bytes(struct rank_state *rs, size_t count, size_t j, unsigned char *out)
{
    const struct opts *o = &rs->b->o;
    size_t es = esize_of(o);
    int skip = 0;
    if (reduces(o->coll))
        memcpy(out, rs->b->expect + (out_offset(o, count, rs->rank) + j) * es, es);
    else
        encode(o->dtype, moved_value(o, count, rs->rank, j, &skip), out);
    return !skip;
}

static stitch_status_t call(struct rank_state *rs, size_t count, const void *send, void *recv)
{
    const struct opts *o = &rs->b->o;
    stitch_comm_t *comm = rs->b->comms[rs->rank];
    switch (o->coll) {
    case STITCH_ALL_REDUCE: return stitch_all_reduce(send, recv, count, o->dtype, o->op, comm);
    case STITCH_REDUCE_SCATTER: return stitch_reduce_scatter(send, recv, count, o->dtype, o->op, comm);
    case STITCH_BROADCAST: return stitch_broadcast(send, recv, count, o->dtype, o->root, comm);
    case STITCH_REDUCE: return stitch_reduce(send, recv, count, o->dtype, o->op, o->root, comm);
    case STITCH_SCATTER: return stitch_scatter(send, recv, count, o->dtype, o->root, comm);
    case STITCH_GATHER: return stitch_gather(send, recv, count, o->dtype, o->root, comm);
    case STITCH_ALL_TO_ALL: return stitch_all_to_all(send, recv, count, o->dtype, comm);
    case STITCH_ALL_TO_ALL_V: return stitch_all_to_all_v(send, rs->v, rs->v + o->nranks, recv, rs->v + 2 * o->nranks,
                                                         rs->v + 3 * o->nranks, o->dtype, comm);
    default: return stitch_all_gather(send, recv, count, o->dtype, comm);
    }
}

/* --device: a host buffer's address as the device copy's (the same offset), else itself. */
static void *dev_ptr(const struct rank_state *rs, void *p)
{
    unsigned char *h = p;
    if (!rs->b->dops || !h)
        return p;
    return h >= rs->buf_a && h < rs->buf_a + rs->size_a ? rs->dev_a + (h - rs->buf_a) : rs->dev_b + (h - rs->buf_b);
}

/* --device: wait for the rank's stream; an asynchronous failure counts as the calls'. */
static void dev_sync(struct rank_state *rs)
{
    if (!rs->b->dops || rs->status != STITCH_OK)
        return;
    stitch_status_t st = stitch_comm_synchronize(rs->b->comms[rs->rank]);
    if (st != STITCH_OK)
        fail(rs, st, stitch_comm_last_error(rs->b->comms[rs->rank]));
}

/* --device: copy both buffers to (up) or from the device, in the rank's stream, and wait. */
static void dev_move(struct rank_state *rs, int up)
{
    const st_dev_ops *ops = rs->b->dops;
    stitch_comm_t *comm = rs->b->comms[rs->rank];
    char err[300];
    if (!ops)
        return;
    void *stream = stitch_comm_stream(comm);
    stitch_status_t st = STITCH_OK;
    if (rs->size_a)
        st = up ? ops->upload(rs->dev_a, rs->buf_a, rs->size_a, stream, err, sizeof err)
                : ops->download(rs->buf_a, rs->dev_a, rs->size_a, stream, err, sizeof err);
    if (st == STITCH_OK && rs->size_b)
        st = up ? ops->upload(rs->dev_b, rs->buf_b, rs->size_b, stream, err, sizeof err)
                : ops->download(rs->buf_b, rs->dev_b, rs->size_b, stream, err, sizeof err);
    if (st == STITCH_OK)
        st = ops->sync(stream, err, sizeof err);
    if (st != STITCH_OK) {
        char msg[400];
        snprintf(msg, sizeof msg, "copying the buffers %s the device: %s", up ? "to" : "from", err);
        fail(rs, st, msg);
    }
}

/* Run `n` calls of `phase`; on the first failure record it, abort the communicator so peers fail fast, and stop. */
static int run_calls(struct rank_state *rs, size_t count, int n, int phase)
{
    void *send, *recv;
    int p = rs->b->o.nranks;
    rank_buffers(rs, count, &send, &recv);
    for (int q = 0; rs->v && q < p; q++) {
        rs->v[q] = v_count(count, rs->rank, q), rs->v[p + q] = v_displ(count, q);
        rs->v[2 * p + q] = v_count(count, q, rs->rank), rs->v[3 * p + q] = v_displ(count, q);
    }
    rs->phase = phase;
    send = dev_ptr(rs, send), recv = dev_ptr(rs, recv);
    for (int i = 0; i < n && rs->status == STITCH_OK; i++) {
        stitch_status_t st = call(rs, count, send, recv);
        if (st != STITCH_OK) {
            fail(rs, st, stitch_comm_last_error(rs->b->comms[rs->rank]));
            stitch_comm_abort(rs->b->comms[rs->rank]);
        } else {
            if (rs->b->o.blocking) /* -z 1: --device waits for the call's stream (a no-op on host calls) */
                dev_sync(rs);
            synced(rs);
        }
    }
    return rs->status == STITCH_OK;
}

/* This rank's share of the expected array: global indices [rank * n / p, (rank + 1) * n / p). */
static void fill_expected(struct rank_state *rs, size_t count)
{
    const struct opts *o = &rs->b->o;
    size_t n = count * (o->coll == STITCH_REDUCE_SCATTER ? (size_t)o->nranks : 1), es = esize_of(o);
    size_t lo = n * (size_t)rs->rank / (size_t)o->nranks, hi = n * (size_t)(rs->rank + 1) / (size_t)o->nranks;
    if (rs->b->proc) /* no other rank shares this process's expected array */
        lo = 0, hi = n;
    if (!reduces(o->coll)) /* moved data is checked against values computed on the spot */
        lo = hi = 0;
    for (size_t g = lo; g < hi; g++)
        encode(o->dtype, expected_value(o, count, g), rs->b->expect + g * es);
}

/* Outputs get the complement of the expected bytes (never right by chance; all_to_all_v's gaps zero), then the
 * inputs are written (in place, over part of the output). */
static void prepare_check(struct rank_state *rs, size_t count)
{
    const struct opts *o = &rs->b->o;
    size_t es = esize_of(o), nout = out_count(o, count, rs->rank);
    unsigned char *send, *recv, want[8];
    rank_buffers(rs, count, (void **)&send, (void **)&recv);
    for (size_t j = 0; j < nout; j++) {
        int real = want_bytes(rs, count, j, want);
        for (size_t k = 0; k < es; k++)
            recv[j * es + k] = real ? (unsigned char)~want[k] : 0;
    }
    for (size_t i = 0; i < in_count(o, count, rs->rank); i++)
        encode(o->dtype, input_value(o, count, rs->rank, i), send + i * es);
}

static void check_output(struct rank_state *rs, size_t count)
{
    const struct opts *o = &rs->b->o;
    size_t es = esize_of(o), n = out_count(o, count, rs->rank);
    unsigned char *send, *recv, want[8];
    rank_buffers(rs, count, (void **)&send, (void **)&recv);
    for (size_t j = 0; j < n; j++) {
        if (!want_bytes(rs, count, j, want) || memcmp(recv + j * es, want, es) == 0)
            continue;
        if (rs->wrong[PL_OUT] + rs->wrong[PL_IN] == 0) {
            rs->bad_index = (long long)j, rs->bad_place = rs->place;
            rs->got = decode(o->dtype, recv + j * es);
            rs->want = decode(o->dtype, want);
        }
        rs->wrong[rs->place]++;
    }
}

static void check_size(struct rank_state *rs, size_t count)
{
    fill_expected(rs, count);
    barrier(rs, PH_CHECK);
    prepare_check(rs, count);
    dev_move(rs, 1);
    barrier(rs, PH_CHECK);
    if (run_calls(rs, count, 1, PH_CHECK)) {
        dev_sync(rs);
        dev_move(rs, 0);
    }
    if (rs->status == STITCH_OK)
        check_output(rs, count);
}

static void time_size(struct rank_state *rs, size_t count)
{
    const struct opts *o = &rs->b->o;
    run_calls(rs, count, o->warmup, PH_WARMUP);
    dev_sync(rs);
    barrier(rs, PH_BARRIER);
    double t0 = now();
    run_calls(rs, count, o->iters, PH_TIMED);
    dev_sync(rs);
    barrier(rs, PH_BARRIER);
    rs->time[rs->place] = (now() - t0) / o->iters;
}

/* --device, rank 0 while the others wait: the device's copy rate for `bytes` (a device-to-device copy between the
 * rank's two buffers, or within one in place), the bound the collective's ratio is taken against. */
static void time_copy(struct rank_state *rs, size_t bytes)
{
    struct bench *b = rs->b;
    char err[300];
    void *stream = stitch_comm_stream(b->comms[rs->rank]);
    unsigned char *dst = rs->size_b ? rs->dev_b : rs->dev_a + rs->size_a / 2, *src = rs->dev_a;
    size_t n = rs->size_b ? (bytes < rs->size_a && bytes < rs->size_b ? bytes : rs->size_a < rs->size_b ? rs->size_a
                             : rs->size_b)
                          : (bytes < rs->size_a / 2 ? bytes : rs->size_a / 2);
    b->copy_time = 0;
    if (n == 0)
        return;
    for (int i = 0; i < b->o.warmup && b->dops->copy(dst, src, n, stream, err, sizeof err) == STITCH_OK; i++)
        ;
    if (b->dops->sync(stream, err, sizeof err) != STITCH_OK)
        return;
    double t0 = now();
    for (int i = 0; i < b->o.iters; i++)
        if (b->dops->copy(dst, src, n, stream, err, sizeof err) != STITCH_OK)
            return;
    if (b->dops->sync(stream, err, sizeof err) == STITCH_OK)
        b->copy_time = (now() - t0) / b->o.iters * (double)bytes / (double)n;
}

/* ---- reporting (rank 0, between barriers) --------------------------------------------------------------------- */

/* Every rank that saw a failure, with the phase it was in (process mode: this rank alone). The causes come first,
 * then the ranks that saw an abort: those name the rank that died or aborted, and where each survivor was. */
static void report_errors(struct bench *b, size_t bytes)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < b->o.nranks; r++) {
            struct rank_state *rs = &b->ranks[r];
            if (rs->status == STITCH_OK || (rs->status == STITCH_ERR_ABORTED) != (pass == 1))
                continue;
            fprintf(stderr, PROG ": error: size %zu: rank %d: %s: %s%s%s: %s\n", bytes, r,
                    phase_name[rs->fail_phase], rs->fail_place >= 0 ? place_name[rs->fail_place] : "",
                    rs->fail_place >= 0 ? ": " : "", stitch_strerror(rs->status), rs->error);
        }
    }
    for (int r = 0; r < b->o.nranks; r++) {
        struct rank_state *rs = &b->ranks[r];
        for (int pl = 0; pl < PL_COUNT; pl++) {
            char first[160] = "";
            if (rs->wrong[pl] == 0)
                continue;
            if (rs->bad_place == pl) /* the first wrong element is kept for the first set that had one */
                snprintf(first, sizeof first, ", first at output index %lld: got %.17g, expected %.17g",
                         rs->bad_index, rs->got, rs->want);
            fprintf(stderr, PROG ": error: size %zu: rank %d: %s: %zu wrong elements%s\n", bytes, r, place_name[pl],
                    rs->wrong[pl], first);
        }
    }
}

/* The algorithm the rows's calls ran: the communicator's choice for that count (auto picks by size). */
static const char *row_algo(const struct bench *b, size_t bytes)
{
    const char *name = stitch_comm_algorithm_for(b->comms[b->me], b->o.coll, api_count(&b->o, bytes), b->o.dtype);
    return name ? name : "?";
}

/* nccl-tests' time column: fewer decimals as the time grows, 7 wide. */
static const char *time_str(char *buf, size_t len, double us)
{
    snprintf(buf, len, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
    return buf;
}

/* One column set of a row: time, algbw, busbw, #wrong ("N/A" for a set not run; "error" when a call failed). */
static void print_set(const struct opts *o, const struct row *w, int pl)
{
    char ts[32], wrong[32];
    if (!w->ran[pl]) {
        printf("  %7s  %7s  %7s  %6s", "N/A", "N/A", "N/A", "N/A");
        return;
    }
    if (w->failed[pl])
        snprintf(wrong, sizeof wrong, "error");
    else if (o->check)
        snprintf(wrong, sizeof wrong, "%zu", w->wrong[pl]);
    else
        snprintf(wrong, sizeof wrong, "N/A");
    printf("  %7s  %7.3f  %7.3f  %6s", time_str(ts, sizeof ts, w->time[pl] * 1e6), w->algbw[pl], w->busbw[pl], wrong);
}

/* The size's results over the ranks, per column set: the slowest rank's time, the wrong elements summed, and
 * whether a call failed in the set (a failure outside both sets, or in an earlier one, fails it too). */
static void gather_row(struct bench *b, struct row *w)
{
    const struct opts *o = &b->o;
    for (int pl = 0; pl < PL_COUNT; pl++) {
        w->ran[pl] = (o->places >> pl) & 1;
        w->time[pl] = 0, w->wrong[pl] = 0, w->failed[pl] = 0;
        for (int r = 0; r < o->nranks && !b->proc; r++) {
            const struct rank_state *rs = &b->ranks[r];
            w->time[pl] = rs->time[pl] > w->time[pl] ? rs->time[pl] : w->time[pl];
            w->wrong[pl] += rs->wrong[pl];
            w->failed[pl] |= rs->status != STITCH_OK && rs->fail_place <= pl;
        }
        if (b->proc)
            w->time[pl] = b->all_time[pl], w->wrong[pl] = b->all_wrong[pl], w->failed[pl] = b->all_failed[pl];
        w->failed[pl] &= w->ran[pl];
        if (w->failed[pl] || !w->ran[pl]) /* the calls that were timed, if any, did not all run */
            w->time[pl] = 0;
        w->algbw[pl] = w->time[pl] > 0 ? (double)w->bytes / w->time[pl] / 1e9 : 0;
        w->busbw[pl] = w->algbw[pl] * busbw_factor(o);
    }
}

static void report_row(struct bench *b, int s)
{
    const struct opts *o = &b->o;
    size_t bytes = b->sizes[s];
    struct row *w = &b->rows[s];
    *w = (struct row){.bytes = bytes, .count = bytes / esize_of(o)};
    snprintf(w->algo, sizeof w->algo, "%s", row_algo(b, bytes));
    gather_row(b, w);
    b->nrows = s + 1;
    int failed_calls = w->failed[PL_OUT] || w->failed[PL_IN];
    size_t wrong = w->wrong[PL_OUT] + w->wrong[PL_IN];
    if (b->rec) /* --calibrate keeps the best: a failed row never is; it runs out of place only */
        b->rec[b->nrec++] = failed_calls ? 1e30 : w->time[PL_OUT];
    printf("%12zu  %12zu  %8s  %6s  %6d", bytes, w->count, stitch_dtype_name(o->dtype),
           reduces(o->coll) ? stitch_op_name(o->op) : "none", st_rooted(o->coll) ? o->root : -1);
    print_set(o, w, PL_OUT);
    print_set(o, w, PL_IN);
    printf("  %s", w->algo);
    if (b->dops) {
        w->copy = b->copy_time > 0 ? (double)bytes / b->copy_time / 1e9 : 0;
        double busbw = w->busbw[w->ran[PL_OUT] ? PL_OUT : PL_IN];
        printf("  %10.1f  %6.2f", w->copy, w->copy > 0 ? b->per_dev * busbw / w->copy : 0);
    }
    printf("\n");
    fflush(stdout);
    if (failed_calls || wrong)
        report_errors(b, bytes);
    b->oob += wrong;
    b->any_error |= failed_calls;
    if (failed_calls || wrong > 0) {
        b->failed++;
    } else {
        b->passed++;
        for (int pl = 0; pl < PL_COUNT; pl++) /* nccl-tests' average: over every size and both column sets */
            if (w->ran[pl])
                b->busbw_sum += w->busbw[pl], b->busbw_rows++;
    }
    b->rebuild = failed_calls;
}

/* After a failed call the communicators are aborted for good: make new ones for the next size. */
static void rebuild_comms(struct bench *b, size_t bytes)
{
    char where[64];
    snprintf(where, sizeof where, "size %zu: %s", bytes, phase_name[PH_REBUILD]);
    destroy_comms(b);
    if (make_comms(b, where) != 0) {
        fprintf(stderr, PROG ": error: %s: the communicators could not be rebuilt; the remaining sizes are not run\n",
                where);
        b->fatal = 1;
    }
}

static void reset_rank(struct rank_state *rs)
{
    for (int pl = 0; pl < PL_COUNT; pl++)
        rs->time[pl] = 0, rs->wrong[pl] = 0;
    rs->status = STITCH_OK, rs->error[0] = '\0', rs->bad_index = -1, rs->bad_place = -1;
    rs->fail_phase = PH_INIT, rs->fail_place = -1, rs->place = -1;
}

static void perf_proc_combine(struct bench *b, struct rank_state *rs);
static void *rank_main(void *arg)
{
    struct rank_state *rs = arg;
    struct bench *b = rs->b;
    /* reset at the end of a size, not the start: a failure in init (the test hook in thread mode) is this size's */
    for (int s = 0; s < b->nsizes; s++) {
        size_t count = api_count(&b->o, b->sizes[s]);
        rs->size_index = s;
        barrier(rs, PH_BARRIER);
        for (int pl = 0; pl < PL_COUNT; pl++) {
            if (!((b->o.places >> pl) & 1))
                continue;
            rs->place = pl;
            if (b->o.check)
                check_size(rs, count);
            time_size(rs, count);
        }
        rs->place = -1;
        if (b->dops && rs->rank == 0)
            time_copy(rs, b->sizes[s]);
        barrier(rs, PH_BARRIER);
        if (b->proc)
            perf_proc_combine(b, rs);
        if (rs->rank == 0 || b->proc) {
            report_row(b, s);
            if (b->rebuild && !b->proc) /* process mode: the failure set b->fatal, nothing is rebuilt */
                rebuild_comms(b, b->sizes[s]);
            if (b->fatal)
                b->failed += b->nsizes - s - 1;
        }
        barrier(rs, PH_BARRIER);
        reset_rank(rs);
        if (b->fatal)
            break;
    }
    return NULL;
}

/* ---- buffers -------------------------------------------------------------------------------------------------- */

/* Plain memory, or (--mem registered, launcher mode) stitch_mem_alloc's on comm. */
static unsigned char *alloc_touched(size_t bytes, stitch_comm_t *reg)
{
    size_t n = (bytes + 63) / 64 * 64;
    void *v = NULL;
    unsigned char *p = reg ? (stitch_mem_alloc(reg, n ? n : 64, &v) == STITCH_OK ? v : NULL)
                           : aligned_alloc(64, n ? n : 64);
    if (p != NULL)
        memset(p, 0, n ? n : 64); /* first touch here, not inside the timed loop */
    return p;
}

static void free_touched(unsigned char *p, stitch_comm_t *reg)
{
    if (reg && p)
        stitch_mem_free(reg, p);
    else
        free(p);
}

/* The communicator whose registered memory holds the rank's buffers, or NULL (plain memory). */
static stitch_comm_t *mem_comm(const struct rank_state *rs)
{
    return rs->b->o.mem_registered && rs->b->proc ? rs->b->comms[rs->rank] : NULL;
}

/* --device: the device copies of the rank's buffers, on its device. */
static int alloc_device(struct rank_state *rs)
{
    const st_dev_ops *ops = rs->b->dops;
    int dev = stitch_comm_device(rs->b->comms[rs->rank]);
    char err[300];
    void *a = NULL, *bb = NULL;
    if (ops->alloc(dev, rs->size_a ? rs->size_a : 64, &a, err, sizeof err) != STITCH_OK ||
        (rs->size_b && ops->alloc(dev, rs->size_b, &bb, err, sizeof err) != STITCH_OK)) {
        fprintf(stderr, PROG ": error: rank %d: device %d: %s\n", rs->rank, dev, err);
        if (a)
            ops->free(dev, a);
        return 0;
    }
    rs->dev_a = a, rs->dev_b = bb;
    return 1;
}

static void free_device(struct rank_state *rs)
{
    int dev = stitch_comm_device(rs->b->comms[rs->rank]);
    if (rs->dev_a)
        rs->b->dops->free(dev, rs->dev_a);
    if (rs->dev_b)
        rs->b->dops->free(dev, rs->dev_b);
    rs->dev_a = rs->dev_b = NULL;
}

/* Runs in the rank's own thread before the sizes loop, so each rank first-touches its own pages. */
static int alloc_rank(struct rank_state *rs, size_t maxbytes)
{
    const struct opts *o = &rs->b->o;
    size_t count = api_count(o, maxbytes), es = esize_of(o);
    size_t a = in_count(o, count, rs->rank), bb = out_count(o, count, rs->rank);
    int out_of_place = (o->places >> PL_OUT) & 1;
    if ((o->places >> PL_IN) & 1) /* in place: the larger of the two in buf_a (out of place sends from its start) */
        a = a > bb ? a : bb;
    if (!out_of_place)
        bb = 0;
    rs->buf_a = alloc_touched(a * es, mem_comm(rs));
    rs->buf_b = out_of_place ? alloc_touched(bb * es, mem_comm(rs)) : NULL;
    rs->size_a = a * es, rs->size_b = bb * es;
    if (rs->b->dops && !alloc_device(rs))
        return 0;
    rs->v = o->coll == STITCH_ALL_TO_ALL_V ? calloc(4 * (size_t)o->nranks, sizeof *rs->v) : NULL;
    return rs->buf_a != NULL && (!out_of_place || rs->buf_b != NULL) &&
           (o->coll != STITCH_ALL_TO_ALL_V || rs->v != NULL);
}

/* --bind, threads mode: a failure to bind is reported and the run goes on unbound. */
static void bind_rank(const struct rank_state *rs)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(rs->rank % (cpus > 0 ? cpus : 1)), &set);
    int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (err != 0)
        fprintf(stderr, PROG ": warning: rank %d: --bind: %s\n", rs->rank, strerror(err));
}

static void *rank_thread(void *arg)
{
    struct rank_state *rs = arg;
    struct bench *b = rs->b;
    if (b->o.bind && !b->proc)
        bind_rank(rs);
    rs->phase = PH_INIT;
    int ok = alloc_rank(rs, b->sizes[b->nsizes - 1]);
    if (!ok) {
        fprintf(stderr, PROG ": error: rank %d: init: out of memory for the buffers of %zu bytes\n", rs->rank,
                b->sizes[b->nsizes - 1]);
        __atomic_store_n(&b->fatal, 1, __ATOMIC_SEQ_CST);
    }
    barrier(rs, PH_INIT);
    if (b->proc && rs->status != STITCH_OK) { /* the opening barrier failed: no size is run */
        fprintf(stderr, PROG ": error: rank %d: init: %s: %s\n", rs->rank, stitch_strerror(rs->status), rs->error);
        b->fatal = 1;
    }
    if (!b->fatal)
        rank_main(rs);
    if (b->dops) { /* device buffers are freed once no rank's call can read them (--device: threads only) */
        pthread_barrier_wait(&b->barrier);
        free_device(rs);
    }
    free_touched(rs->buf_a, mem_comm(rs));
    free_touched(rs->buf_b, mem_comm(rs));
    free(rs->v);
    return NULL;
}

/* ---- main ----------------------------------------------------------------------------------------------------- */

/* Launcher mode: the groups the library made (hosts, unless a topology or groups are given), as their sizes. */
static void print_groups(const struct bench *b)
{
    int sizes[MAX_RANKS], n = stitch_comm_groups(b->comms[b->me], sizes, MAX_RANKS);
    printf("# root: %d groups: %d (%s), sizes", b->o.root, n, b->o.groups ? "--groups" : b->o.topo ? "the topology"
           : "by host, $STITCH_TOPO or $STITCH_GROUPS");
    for (int g = 0; g < n && g < MAX_RANKS; g++)
        printf("%s%d", g ? "," : " ", sizes[g]);
    printf("\n");
}

/* --topo / --layout: the levels the library built, each as its groups' sizes. */
static void print_levels(const struct bench *b)
{
    const stitch_comm_t *comm = b->comms[b->me];
    int n = stitch_comm_levels(comm), sizes[MAX_RANKS];
    printf("# topology: %s %s, %d level%s:", b->o.topo_layout ? "--layout" : "--topo", b->o.topo, n, n == 1 ? "" : "s");
    for (int k = 0; k < n; k++) {
        int ng = stitch_comm_level_groups(comm, k, sizes, MAX_RANKS);
        printf("%s level %d: %d group%s", k ? ";" : "", k, ng, ng == 1 ? "" : "s");
        for (int g = 0; g < ng && g < MAX_RANKS; g++)
            printf("%s%d", g ? "," : " ", sizes[g]);
    }
    printf("\n");
}

/* nccl-tests' three header lines over the columns: the sets' titles centred over their columns, the names, units. */
static void print_columns(const struct bench *b)
{
    enum { SET_W = 2 + 7 + 2 + 7 + 2 + 7 + 2 + 6 }; /* print_set's width */
    char title[PL_COUNT][SET_W + 1];
    for (int pl = 0; pl < PL_COUNT; pl++) {
        int n = (int)strlen(place_name[pl]), left = (SET_W - n) / 2;
        snprintf(title[pl], sizeof title[pl], "%*s%s%*s", left, "", place_name[pl], SET_W - n - left, "");
    }
    char line[256];
    int n = snprintf(line, sizeof line, "# %10s  %12s  %8s  %6s  %6s%s%s", "", "", "", "", "", title[PL_OUT],
                     title[PL_IN]);
    while (n > 0 && line[n - 1] == ' ')
        line[--n] = '\0';
    printf("%s\n", line);
    printf("# %10s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
    for (int pl = 0; pl < PL_COUNT; pl++)
        printf("  %7s  %7s  %7s  %6s", "time", "algbw", "busbw", "#wrong");
    printf("  %s%s\n", "algorithm", b->dops ? "  copy(GB/s)   ratio" : "");
    printf("# %10s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
    for (int pl = 0; pl < PL_COUNT; pl++)
        printf("  %7s  %7s  %7s  %6s", "(us)", "(GB/s)", "(GB/s)", "");
    printf("\n");
}

static void print_header(const struct bench *b)
{
    const struct opts *o = &b->o;
    printf("# stitch-perf %s, stitch %d.%d\n", stitch_coll_name(o->coll), STITCH_VERSION_MAJOR,
           STITCH_VERSION_MINOR);
    printf("# nThread %d", b->proc ? 1 : o->device ? (o->nranks + (o->gpus ? o->gpus : 1) - 1) / (o->gpus ? o->gpus : 1)
                                                   : o->nranks);
    if (o->device)
        printf(" nGpus %d", o->gpus ? o->gpus : 1);
    printf(" minBytes %zu maxBytes %zu step: ", o->minbytes, o->maxbytes);
    if (o->factor > 1)
        printf("%d(factor)", o->factor);
    else
        printf("%zu(bytes)", o->stepbytes);
    printf(" warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n", o->warmup, o->iters, o->check);
    printf("#\n");
    printf("# nRanks %d (ranks are %s%s%s) algorithm: %s dtype: %s op: %s blocking: %d\n", o->nranks,
           b->proc ? "processes, one per rank" : "threads of one process", o->count_from ? "; from " : "",
           o->count_from ? o->count_from : "", stitch_comm_algorithm(b->comms[b->me], o->coll),
           stitch_dtype_name(o->dtype), reduces(o->coll) ? stitch_op_name(o->op) : "none", o->blocking);
    if (o->topo)
        print_levels(b);
    if (b->proc)
        print_groups(b);
    else if (o->topo)
        printf("# root: %d\n", o->root);
    else if (st_rooted(o->coll) || o->groups)
        printf("# root: %d groups: %s\n", o->root, o->groups ? o->groups : "$STITCH_GROUPS or one");
    if (o->coll == STITCH_ALL_TO_ALL || o->coll == STITCH_ALL_TO_ALL_V)
        printf("# %s has no in-place form: its in-place columns say N/A\n", stitch_coll_name(o->coll));
    if (b->dops)
        printf("# device: %s, %d device%s here, %d rank%s per device; copy: a device-to-device copy of the same size "
               "(GB/s); ratio: %d * busbw / copy\n", o->device, b->ndev, b->ndev == 1 ? "" : "s", b->per_dev,
               b->per_dev == 1 ? "" : "s", b->per_dev);
    printf("#\n");
    print_columns(b);
    fflush(stdout);
}

/* The sizes to run, and a row for each (-J writes them out at the end). */
static void make_sizes(struct bench *b)
{
    free(b->sizes);
    free(b->rows);
    b->sizes = size_list(&b->o, &b->nsizes);
    b->rows = calloc((size_t)b->nsizes, sizeof *b->rows), b->nrows = 0;
    if (b->rows == NULL) {
        fprintf(stderr, PROG ": error: out of memory\n");
        exit(1);
    }
}

static int run(struct bench *b)
{
    int n = b->o.nranks;
    if (b->proc) {
        b->ranks[b->me] = (struct rank_state){.b = b, .rank = b->me, .bad_index = -1,
                                                  .bad_place = -1, .fail_place = -1, .place = -1};
        rank_thread(&b->ranks[b->me]);
        return 0;
    }
    if (pthread_barrier_init(&b->barrier, NULL, (unsigned)n) != 0) {
        fprintf(stderr, PROG ": error: pthread_barrier_init: %s\n", strerror(errno));
        return 1;
    }
    int started = 0;
    for (; started < n; started++) {
        b->ranks[started] = (struct rank_state){.b = b, .rank = started, .bad_index = -1,
                                                     .bad_place = -1, .fail_place = -1, .place = -1};
        int err = pthread_create(&b->ranks[started].thread, NULL, rank_thread, &b->ranks[started]);
        if (err != 0) {
            /* the started threads wait at a barrier for n: nothing safe to do but leave */
            fprintf(stderr, PROG ": error: pthread_create: %s\n", strerror(err));
            exit(1);
        }
    }
    for (int r = 0; r < n; r++)
        pthread_join(b->ranks[r].thread, NULL);
    pthread_barrier_destroy(&b->barrier);
    return 0;
}

/* ---- launcher mode ------------------------------------------------------------------------------------------
 * Under mpirun, srun, torchrun or STITCH_RANK/SIZE/ROOT, this process is one rank (the job's size is the rank
 * count): the barriers are all_reduces on the communicator, each rank checks its own output, and the per-size results are
 * combined with all_reduce (max time, summed wrong elements, any failure) so every rank knows the outcome and
 * exits with it; only rank 0 prints the table. A failed call aborts the communicator, which is not rebuilt. */

static int perf_proc_init(struct bench *b)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[1024] = "";
    cfg.timeout_ms = b->o.timeout_s * 1000;
    cfg.groups = b->o.groups;
    cfg.topo = b->o.topo;
    stitch_comm_t *comm = NULL;
    stitch_status_t st = stitch_comm_init_env(&comm, &cfg, err, sizeof err);
    if (st != STITCH_OK) {
        fprintf(stderr, PROG ": error: init: stitch_comm_init_env (%s): %s: %s\n", stitch_launcher(),
                stitch_strerror(st), err);
        return 1;
    }
    b->proc = 1, b->me = stitch_comm_rank(comm), b->o.nranks = stitch_comm_size(comm);
    b->comms[b->me] = comm;
    if (b->o.die_rank == b->me && b->o.die_phase == PH_INIT) /* the test hook (comment at phase_name) */
        raise(SIGKILL);
    if (b->o.root >= b->o.nranks)
        bad_usage("-r %d is not a rank of this job (0..%d)", b->o.root, b->o.nranks - 1);
    if (b->o.nranks > MAX_RANKS) {
        fprintf(stderr, PROG ": error: %d ranks, at most %d\n", b->o.nranks, MAX_RANKS);
        return 1;
    }
    /* Only rank 0 prints the table; the others keep a copy of stdout for their closing line alone, so a
     * launcher's merged output shows every rank's verdict (each line ends with "N passed, M failed"). */
    if (b->me != 0 && ((b->verdict_fd = dup(STDOUT_FILENO)) < 0 || freopen("/dev/null", "w", stdout) == NULL))
        return 1;
    return 0;
}

/* After this rank's first failure the communicator is aborted: later barriers are skipped, not failed again. */
static void perf_proc_barrier(struct rank_state *rs)
{
    double x = 0;
    stitch_comm_t *c = rs->b->comms[rs->b->me];
    if (rs->status != STITCH_OK || rs->b->fatal)
        return;
    stitch_status_t st = stitch_all_reduce(&x, &x, 1, STITCH_FP64, STITCH_SUM, c);
    if (st != STITCH_OK)
        fail(rs, st, stitch_comm_last_error(c));
}

/* The size's results over the processes: each set's slowest time and summed wrong elements. A failed call aborted
 * the communicator, so nothing is combined then: the failing rank knows which sets failed (from its failure's set
 * on), a rank that finds the combining call failing takes both as failed. */
static void perf_proc_combine(struct bench *b, struct rank_state *rs)
{
    double mx[PL_COUNT + 1] = {rs->time[PL_OUT], rs->time[PL_IN], rs->status != STITCH_OK};
    double sum[PL_COUNT] = {(double)rs->wrong[PL_OUT], (double)rs->wrong[PL_IN]};
    stitch_comm_t *c = b->comms[b->me];
    for (int pl = 0; pl < PL_COUNT; pl++)
        b->all_time[pl] = rs->time[pl], b->all_wrong[pl] = rs->wrong[pl],
        b->all_failed[pl] = rs->status != STITCH_OK && rs->fail_place <= pl;
    rs->phase = PH_RESULTS;
    if (rs->status == STITCH_OK && !b->fatal) {
        stitch_status_t st = stitch_all_reduce(mx, mx, PL_COUNT + 1, STITCH_FP64, STITCH_MAX, c);
        if (st == STITCH_OK)
            st = stitch_all_reduce(sum, sum, PL_COUNT, STITCH_FP64, STITCH_SUM, c);
        if (st == STITCH_OK) {
            for (int pl = 0; pl < PL_COUNT; pl++)
                b->all_time[pl] = mx[pl], b->all_wrong[pl] = (size_t)sum[pl], b->all_failed[pl] = mx[PL_COUNT] != 0;
            return;
        }
        fail(rs, st, stitch_comm_last_error(c)); /* my calls went through but a peer's did not */
        b->all_failed[PL_OUT] = b->all_failed[PL_IN] = 1;
    }
    b->fatal = 1;
}

/* ---- --calibrate ----------------------------------------------------------------------------------------------
 * alpha and beta from sweeps of ring all_gather on P ranks (2 by default, -t P, or a launcher's processes), without
 * checking, 3 rounds with each size's best time: p-1 steps in which each rank sends a block of m = size/p bytes (T =
 * (p-1)(alpha + m beta)). Calibrating at the p of the job matters where ranks outnumber cores: 4 threads on 2 cores
 * pay a wake-up per step that 2 do not (docs/performance.md). beta is the least-squares slope over the sizes from 64
 * KiB (where the per-byte cost dominates), alpha the median over the sizes up to 4 KiB of what is left after beta. The
 * all_gather also copies a rank's own block, which the model takes as free, so beta carries that copy: it is the
 * per-byte cost of a step end to end, which is what the model's beta stands for on a machine whose links are memory
 * copies.
 *
 * gamma is measured directly: the runtime's own fp32 sum kernel (reduce.c, the one a float all_reduce runs) over
 * buffers of 256 KiB .. 64 MiB, touched first, best of several runs per size, least-squares slope of time against
 * bytes (threads: the main thread alone, the ranks idle; under a launcher every process at once, as the ranks of an
 * all_reduce reduce). It used to be derived as 2 (mesh all_reduce's slope - beta), a difference of two noisy slopes
 * that went negative on the shared VM (all_reduce's copies are fused with its reduces, all_gather's are not). The
 * mesh all_reduce sweep still runs, as a check: its measured slope is printed next to the model's
 * 2(p-1)/p beta + (p-1)/p gamma. A fit
 * that is not positive is clamped and said so: alpha to the smallest all_gather's time (beta's line can pass below the
 * small sizes when the per-byte cost at 4 KiB is far from the large sizes'), gamma to 0 (omitted); the exit status is
 * 1 when alpha or beta is not positive. The figures are printed as a topology file's level. */

static double fit_slope(const size_t *x, const double *y, int n, size_t from)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (x[i] >= from)
            sx += (double)x[i], sy += y[i], sxx += (double)x[i] * (double)x[i], sxy += (double)x[i] * y[i], k++;
    double d = k * sxx - sx * sx;
    return k >= 2 && d > 0 ? (k * sxy - sx * sy) / d : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double fit_intercept(const size_t *x, const double *y, int n, double slope, size_t upto)
{
    double left[64];
    int k = 0;
    for (int i = 0; i < n && k < 64; i++)
        if (x[i] <= upto)
            left[k++] = y[i] - slope * (double)x[i];
    qsort(left, (size_t)k, sizeof *left, cmp_double);
    return k ? (k % 2 ? left[k / 2] : (left[k / 2 - 1] + left[k / 2]) / 2) : 0;
}

/* Seconds per byte of the fp32 sum kernel, dst += src, on buffers out of the first cache levels. Best of 5 timed
 * passes per size (the minimum is the least disturbed by other processes), then the slope over the sizes. 0 when
 * the slope is not positive (a machine too loaded to tell) or memory is short. */
static double measure_gamma(void)
{
    enum { NSIZES = 5, REPS = 5 };
    size_t x[NSIZES];
    double y[NSIZES];
    size_t max = (size_t)64 << 20;
    float *dst = malloc(max), *src = malloc(max);
    st_reduce_fn sum = st_reduce_kernel(STITCH_FP32, STITCH_SUM);
    if (!dst || !src || !sum) {
        free(dst), free(src);
        return 0;
    }
    for (size_t i = 0; i < max / sizeof *src; i++)
        dst[i] = 0, src[i] = (float)(i & 7);
    for (int k = 0; k < NSIZES; k++) {
        x[k] = (size_t)256 << (10 + 2 * k); /* 256 KiB .. 64 MiB: a large all_reduce's blocks are out of cache */
        int inner = (int)(((size_t)64 << 20) / x[k]); /* 64 MiB reduced per timed pass */
        y[k] = 1e30;
        for (int r = 0; r < REPS; r++) {
            double t0 = now();
            for (int i = 0; i < inner; i++)
                sum(dst, src, x[k] / sizeof *src);
            double t = (now() - t0) / inner;
            y[k] = t < y[k] ? t : y[k];
        }
    }
    free(dst), free(src);
    double g = fit_slope(x, y, NSIZES, 0);
    return g > 0 ? g : 0;
}

static int calibrate(struct bench *b)
{
    static const struct {
        stitch_coll_t coll;
        const char *algo;
    } sweep[2] = {{STITCH_ALL_GATHER, "ring"}, {STITCH_ALL_REDUCE, "mesh"}};
    double slope[2], icpt[2];
    int p = b->o.nranks;
    if (p < 2) {
        fprintf(stderr, PROG ": error: --calibrate needs at least 2 ranks (-t 2, or a launcher's 2 processes)\n");
        return 2;
    }
    enum { REPS = 3, MAXSIZES = 32 };
    double best[2][MAXSIZES];
    for (int i = 0; i < 2; i++)
        for (int s = 0; s < MAXSIZES; s++)
            best[i][s] = 1e30;
    /* REPS rounds, the two sweeps interleaved, each size's best (least disturbed) time kept: on a shared machine a
     * single sweep's times move by 10x between runs (another process takes the core a rank thread was on). */
    for (int round = 0; round < REPS * 2; round++) {
        int i = round % 2;
        b->o.coll = sweep[i].coll, b->o.algo = sweep[i].algo, b->o.check = 0;
        b->o.minbytes = 256, b->o.maxbytes = 4 << 20, b->o.factor = 2, b->o.places = 1 << PL_OUT;
        b->o.iters = b->o.iters < 50 ? 50 : b->o.iters;
        make_sizes(b);
        free(b->rec);
        b->rec = calloc((size_t)b->nsizes, sizeof *b->rec), b->nrec = 0;
        if (!b->proc)
            destroy_comms(b);
        int rc = b->rec && b->nsizes <= MAXSIZES ? make_comms(b, phase_name[PH_INIT]) : 1;
        if (rc != 0)
            return rc;
        print_header(b);
        if (run(b) != 0)
            return 1;
        for (int s = 0; s < b->nrec; s++)
            best[i][s] = b->rec[s] < best[i][s] ? b->rec[s] : best[i][s];
    }
    for (int i = 0; i < 2; i++) {
        size_t x[MAXSIZES];
        double y[MAXSIZES];
        for (int s = 0; s < b->nsizes; s++) { /* all_gather: one of its p-1 steps against the block; all_reduce: the
                                                * whole call against the vector */
            x[s] = i == 0 ? b->sizes[s] / (size_t)p : b->sizes[s];
            y[s] = i == 0 ? best[i][s] / (p - 1) : best[i][s];
        }
        slope[i] = fit_slope(x, y, b->nsizes, 64 << 10);
        icpt[i] = fit_intercept(x, y, b->nsizes, slope[i], 4 << 10);
    }
    double alpha = icpt[0], beta = slope[0], gamma = measure_gamma();
    int alpha_clamped = alpha <= 0 && best[0][0] > 0 && best[0][0] < 1e30;
    if (alpha_clamped) /* beta's line passes below the small sizes: take the smallest message's step as alpha */
        alpha = best[0][0] / (p - 1);
    const char *tp = b->proc ? getenv("STITCH_TRANSPORT") : "threads";
    tp = tp && tp[0] ? tp : "auto";
    if (!b->proc || b->me == 0) {
        printf("# calibration (%s, %d ranks): alpha %.3g s, beta %.4g s/B, gamma %.4g s/B (fp32 sum kernel)\n", tp,
               p, alpha, beta, gamma);
        printf("# check: mesh all_reduce measured slope %.4g s/B, intercept %.3g s; the model's "
               "2(p-1)/p beta + (p-1)/p gamma = %.4g s/B, 2 alpha = %.3g s\n", slope[1], icpt[1],
               2.0 * (p - 1) / p * beta + (double)(p - 1) / p * gamma, 2 * alpha);
        if (alpha_clamped)
            printf("# alpha: the fitted intercept was not positive (%.3g s): clamped to the time of the smallest "
                   "all_gather's step (%zu B)\n", icpt[0], b->sizes[0]);
        if (alpha <= 0 || beta <= 0)
            printf("# the fit is ill-conditioned here (alpha or beta <= 0): too much load or noise; rerun\n");
        printf("# a topology for --topo / STITCH_TOPO (layout: set the ranks):\n");
        printf("name: calibrated-%s\nlevels:\n  - {name: %s, bandwidth: %.3g GB/s, latency: %.3g us}\n", tp, tp,
               beta > 0 ? 1e-9 / beta : 0, alpha > 0 ? alpha * 1e6 : 0);
        if (gamma > 0)
            printf("reduce_bandwidth: %.3g GB/s\n", 1e-9 / gamma);
        else
            printf("# reduce_bandwidth: not measurable here (the kernel's slope was not positive; clamped to 0)\n");
        printf("layout: %d\n", b->o.nranks);
    }
    return alpha > 0 && beta > 0 ? 0 : 1;
}

/* ---- -J: the results as one JSON document ------------------------------------------------------------------
 * {"program", "version", "options": {...what ran...}, "results": [one object per size: size, count, type, redop,
 * root, algorithm, and "out_of_place" / "in_place": {time_us, algbw_GBps, busbw_GBps, wrong (null without -c 1),
 * error} or null for a set not run], "out_of_bounds", "avg_busbw_GBps", "passed", "failed"}. Written by rank 0
 * (process mode: the process of rank 0) once the run is over; the file is opened before the first size, so a path
 * that cannot be written is a bad command line. */

static void json_str(FILE *f, const char *v)
{
    if (v == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static void json_options(FILE *f, const struct bench *b)
{
    const struct opts *o = &b->o;
    fprintf(f, "  \"options\": {\"collective\": ");
    json_str(f, stitch_coll_name(o->coll));
    fprintf(f, ", \"algorithm\": ");
    json_str(f, o->algo ? o->algo : stitch_comm_algorithm(b->comms[b->me], o->coll));
    fprintf(f, ", \"ranks\": %d, \"mode\": \"%s\", \"nthreads\": %d, \"ngpus\": %d, \"device\": ", o->nranks,
            b->proc ? "processes" : "threads", b->proc ? 1 : o->nranks / (o->gpus ? o->gpus : 1),
            o->gpus ? o->gpus : 1);
    json_str(f, o->device);
    fprintf(f, ",\n              \"datatype\": ");
    json_str(f, stitch_dtype_name(o->dtype));
    fprintf(f, ", \"op\": ");
    json_str(f, reduces(o->coll) ? stitch_op_name(o->op) : "none");
    fprintf(f, ", \"root\": %d, \"minbytes\": %zu, \"maxbytes\": %zu, \"stepfactor\": %d, \"stepbytes\": %zu,\n"
            "              \"warmup_iters\": %d, \"iters\": %d, \"check\": %d, \"blocking\": %d, \"timeout_s\": %d,"
            " \"out_of_place\": %s, \"in_place\": %s, \"topology\": ", st_rooted(o->coll) ? o->root : -1,
            o->minbytes, o->maxbytes, o->factor, o->factor > 1 ? 0 : o->stepbytes, o->warmup, o->iters, o->check,
            o->blocking, o->timeout_s, (o->places >> PL_OUT) & 1 ? "true" : "false",
            (o->places >> PL_IN) & 1 ? "true" : "false");
    json_str(f, o->topo ? o->topo : getenv("STITCH_TOPO"));
    fprintf(f, ", \"groups\": ");
    json_str(f, o->groups ? o->groups : getenv("STITCH_GROUPS"));
    fprintf(f, "},\n");
}

static void json_set(FILE *f, const struct opts *o, const struct row *w, int pl)
{
    if (!w->ran[pl]) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"time_us\": %.9g, \"algbw_GBps\": %.9g, \"busbw_GBps\": %.9g, \"wrong\": ", w->time[pl] * 1e6,
            w->algbw[pl], w->busbw[pl]);
    if (o->check && !w->failed[pl])
        fprintf(f, "%zu", w->wrong[pl]);
    else
        fputs("null", f);
    fprintf(f, ", \"error\": %s}", w->failed[pl] ? "true" : "false");
}

static int write_json(FILE *f, const struct bench *b)
{
    const struct opts *o = &b->o;
    fprintf(f, "{\n  \"program\": \"stitch-perf\",\n  \"version\": \"%d.%d\",\n", STITCH_VERSION_MAJOR,
            STITCH_VERSION_MINOR);
    json_options(f, b);
    fprintf(f, "  \"results\": [");
    for (int s = 0; s < b->nrows; s++) {
        const struct row *w = &b->rows[s];
        fprintf(f, "%s\n    {\"size\": %zu, \"count\": %zu, \"type\": ", s ? "," : "", w->bytes, w->count);
        json_str(f, stitch_dtype_name(o->dtype));
        fprintf(f, ", \"redop\": ");
        json_str(f, reduces(o->coll) ? stitch_op_name(o->op) : "none");
        fprintf(f, ", \"root\": %d, \"algorithm\": ", st_rooted(o->coll) ? o->root : -1);
        json_str(f, w->algo);
        fprintf(f, ",\n     \"out_of_place\": ");
        json_set(f, o, w, PL_OUT);
        fprintf(f, ",\n     \"in_place\": ");
        json_set(f, o, w, PL_IN);
        if (b->dops)
            fprintf(f, ", \"copy_GBps\": %.9g", w->copy);
        fputc('}', f);
    }
    fprintf(f, "%s],\n  \"out_of_bounds\": %zu,\n  \"avg_busbw_GBps\": %.9g,\n  \"passed\": %d,\n  \"failed\": %d\n}\n",
            b->nrows ? "\n  " : "", b->oob, b->busbw_rows ? b->busbw_sum / b->busbw_rows : 0.0, b->passed,
            b->failed);
    return ferror(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
    static struct bench bench;
    struct bench *b = &bench;
    parse_args(argc, argv, &b->o);
    b->verdict_fd = -1;
    if (stitch_launcher() != NULL && perf_proc_init(b) != 0)
        return 1;
    FILE *json = NULL;
    if (b->o.json && b->o.calibrate)
        bad_usage("-J writes a benchmark's results; --calibrate prints a topology");
    if (b->o.json && b->me == 0 && (json = fopen(b->o.json, "w")) == NULL)
        bad_usage("-J %s: cannot write it: %s", b->o.json, strerror(errno));
    if (b->o.calibrate) {
        int rc = calibrate(b);
        destroy_comms(b);
        free(b->sizes);
        free(b->rec);
        return rc;
    }
    make_sizes(b);
    if (b->o.device) {
        char why[300];
        if (b->proc)
            bad_usage("--device runs the ranks as threads of one process (not under a launcher)");
        b->ndev = stitch_device_count(b->o.device, why, sizeof why);
        if (b->ndev < 1 || !(b->dops = st_dev_find(b->o.device, why, sizeof why))) {
            fprintf(stderr, PROG ": error: --device %s: %s\n", b->o.device, why);
            return 1;
        }
        b->per_dev = (b->o.nranks + b->ndev - 1) / b->ndev;
    }
    int rc = make_comms(b, phase_name[PH_INIT]);
    if (rc != 0)
        return rc;
    b->expect = b->o.check ? alloc_touched(b->sizes[b->nsizes - 1], NULL) : NULL;
    if (b->o.check && b->expect == NULL) {
        fprintf(stderr, PROG ": error: out of memory for %zu bytes\n", b->sizes[b->nsizes - 1]);
        return 1;
    }
    print_header(b);
    if (run(b) != 0)
        return 1;
    if (b->fatal && b->passed + b->failed < b->nsizes) {
        /* the cause was reported where it happened: buffers that could not be allocated, communicators that could
         * not be rebuilt, or (launcher mode) a communicator aborted by a failed call */
        fprintf(stderr, PROG ": error: %d of %d sizes were not run\n", b->nsizes - b->passed - b->failed, b->nsizes);
        b->failed = b->nsizes - b->passed;
    }
    printf("# Out of bounds values : %zu %s\n", b->oob, b->oob || b->any_error || b->failed ? "FAILED" : "OK");
    printf("# Avg bus bandwidth : %.3f\n", b->busbw_rows ? b->busbw_sum / b->busbw_rows : 0.0);
    printf("#\n");
    int json_bad = json && (write_json(json, b) != 0) + (fclose(json) != 0);
    if (json_bad) /* the closing line still counts the sizes; the exit status says the output is incomplete */
        fprintf(stderr, PROG ": error: -J %s: writing failed: %s\n", b->o.json, strerror(errno));
    printf("%d passed, %d failed\n", b->passed, b->failed);
    if (b->verdict_fd >= 0) {
        dprintf(b->verdict_fd, "# rank %d: %d passed, %d failed\n", b->me, b->passed, b->failed);
        close(b->verdict_fd);
    }
    destroy_comms(b);
    free(b->expect);
    free(b->sizes);
    free(b->rows);
    return b->failed == 0 && !json_bad ? 0 : 1;
}
