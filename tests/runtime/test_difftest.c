/* test_difftest.c - a randomized differential test of the runtime against exact oracles (issue 18).
 *
 * A batch is one communicator (random p = 1..9, random groups: none, equal "AxB" or unequal "a,b,c", random segment
 * size) running many random cases: collective x algorithm (any of stitch_algorithms) x dtype x op x count (0, 1,
 * primes, counts not divisible by p, now and then a many-segment one) x in-place form x root x buffer offset.
 * Inputs and oracles are coll_data.h's (values whose reduction is exact in any order). Every output element is
 * checked exactly; every byte of both buffers outside the receive range - the guard zones before and after, the
 * send buffer when not in place, the part of an in-place buffer that is not output - must be unchanged.
 * Ranks never synchronise between cases but through the collectives themselves: a rank may run ahead.
 *
 * An algorithm that refuses the layout (STITCH_ERR_UNSUPPORTED from stitch_comm_set_algorithm or from the call) is
 * counted as refused; any other error, a wrong element or a changed guard byte is a failure, printed with all its
 * parameters and the command that replays it.
 *
 *   test_difftest --mode threads|proc [--seconds N] [--seed S] [--batches N] [--case K] [--inject WHAT]
 *
 * Batch i of a run with seed S has seed S + i, so `--seed X --batches 1` replays a batch whose seed is X, and
 * `--case K` runs only its case K (on the same communicator shape).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "coll_data.h"
#include "../proc/procrun.h"

/* The shared headers hold helpers this program does not call. */
__attribute__((unused)) static void (*const st_unused_helpers[])(void) = {(void (*)(void))all_ok, (void (*)(void))det_input};

#define MAXP 9
#define GUARD 192 /* bytes of guard zone before and after each buffer (a multiple of 64: alignment stays) */
#define MAXCASES 160

typedef struct dcase {
    coll_case c;
    const char *algo;
} dcase;

typedef struct batch {
    uint64_t seed;
    int p;
    char groups[64]; /* "" for none */
    int seg_small;   /* STITCH_SEGMENT_BYTES=4096 */
    int ncases, only; /* only: the one case to run, or -1 */
    dcase cases[MAXCASES];
} batch;

static const char *mode = "threads";
/* --inject guard|element|send: rank 0 damages, after each successful call, a guard byte, an output element or its
 * (out-of-place) send buffer, which the checks must report: the test of the test (runtime.difftest.inject.*). */
enum { INJECT_NONE, INJECT_GUARD, INJECT_ELEMENT, INJECT_SEND };
static int inject;

/* ---- random choices -------------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int pick(uint64_t *s, int n)
{
    if (n < 1) { /* a choice among none: this test's own bug (a collective without algorithms?) */
        fprintf(stderr, "test_difftest: pick among %d\n", n);
        exit(2);
    }
    return (int)(mix(s) % (uint64_t)n);
}

static int rooted(int coll)
{
    return coll == STITCH_BROADCAST || coll == STITCH_REDUCE || coll == STITCH_SCATTER || coll == STITCH_GATHER;
}

static void make_groups(uint64_t *s, int p, char *out, size_t len)
{
    int kind = pick(s, 3), div[MAXP], nd = 0;
    out[0] = '\0';
    if (kind == 0)
        return;
    for (int d = 1; d <= p; d++)
        if (p % d == 0)
            div[nd++] = d;
    if (kind == 1) { /* equal: A groups of B */
        int b = div[pick(s, nd)];
        snprintf(out, len, "%dx%d", p / b, b);
        return;
    }
    size_t at = 0; /* unequal (or equal by chance): random sizes summing to p */
    for (int left = p; left > 0;) {
        int g = 1 + pick(s, left);
        at += (size_t)snprintf(out + at, len - at, "%s%d", at ? "," : "", g);
        left -= g;
    }
}

static size_t make_count(uint64_t *s, int p, int dt, int seg_small)
{
    static const size_t primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 61, 97, 127, 251, 257, 509, 1021, 2039};
    size_t es = stitch_dtype_size(dt);
    switch (pick(s, 10)) {
    case 0: return 0;
    case 1: return 1;
    case 2:
    case 3: return primes[pick(s, (int)(sizeof primes / sizeof primes[0]))];
    case 4: return (size_t)p * (size_t)pick(s, 60) + (p > 1 ? 1 + (size_t)pick(s, p - 1) : 0);
    case 5: return (size_t)(p + 1 + pick(s, 2) * (p - 2 > 0 ? p - 2 : 0));
    case 6: /* many segments (with 4 KiB ones): 3 to 24 segments of this rank's vector */
        if (pick(s, 3) == 0 || seg_small)
            return (size_t)(4096 * (3 + pick(s, 22))) / es + (size_t)pick(s, 7);
        /* fall through */
    default: return (size_t)pick(s, 2001);
    }
}

static void make_case(uint64_t seed, int k, int p, int seg_small, dcase *d)
{
    uint64_t s = seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(k + 1));
    const char *names[64];
    coll_case *c = &d->c;
    c->coll = pick(&s, STITCH_COLL_COUNT);
    int n = stitch_algorithms(c->coll, names, 64);
    d->algo = names[pick(&s, n < 64 ? n : 64)];
    c->dtype = pick(&s, STITCH_DTYPE_COUNT);
    c->op = pick(&s, STITCH_OP_COUNT);
    c->count = make_count(&s, p, c->dtype, seg_small);
    c->shift = pick(&s, 4);
    c->root = rooted(c->coll) ? pick(&s, p) : 0;
    c->inplace = 0;
    if (c->coll != STITCH_ALL_TO_ALL && c->coll != STITCH_ALL_TO_ALL_V && pick(&s, 2)) {
        int form = pick(&s, 4);
        c->inplace = form == 3 ? 3 : c->coll == STITCH_REDUCE_SCATTER && form == 2 ? 2 : 1;
    }
}

static void make_batch(uint64_t seed, int only, batch *b)
{
    uint64_t s = seed;
    memset(b, 0, sizeof *b);
    b->seed = seed;
    b->p = 1 + pick(&s, MAXP);
    make_groups(&s, b->p, b->groups, sizeof b->groups);
    b->seg_small = pick(&s, 2);
    b->ncases = 20 + pick(&s, MAXCASES - 20);
    b->only = only;
    for (int k = 0; k < b->ncases; k++)
        make_case(seed, k, b->p, b->seg_small, &b->cases[k]);
}

/* ---- one case on one rank -------------------------------------------------------------------------------- */

enum { CASE_OK, CASE_REFUSED, CASE_FAILED, CASE_DEAD /* failed, and the communicator is gone */ };

static void describe(const batch *b, int k, int rank, const char *what, char *msg, size_t len)
{
    const dcase *d = &b->cases[k];
    const coll_case *c = &d->c;
    snprintf(msg, len,
             "FAIL seed=%" PRIu64 " case=%d: mode=%s p=%d groups=%s seg=%s %s algo=%s dtype=%s op=%s count=%zu "
             "inplace=%d shift=%d root=%d rank=%d: %s\n  replay: test_difftest --mode %s --seed %" PRIu64
             " --batches 1 --case %d   (whole batch: without --case)\n",
             b->seed, k, mode, b->p, b->groups[0] ? b->groups : "none", b->seg_small ? "4096" : "default",
             stitch_coll_name(c->coll), d->algo, stitch_dtype_name(c->dtype), stitch_op_name(c->op), c->count,
             c->inplace, c->shift, c->root, rank, what, mode, b->seed, k);
}

/* Every byte of buf (len bytes, a copy in was) outside [keep, keep + nkeep) unchanged? Else says where. */
static int untouched(const unsigned char *buf, const unsigned char *was, size_t len, const unsigned char *keep,
                     size_t nkeep, const char *name, const unsigned char *start, char *what, size_t wlen)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == was[i] || (buf + i >= keep && buf + i < keep + nkeep))
            continue;
        long off = (long)(buf + i - start);
        snprintf(what, wlen, "byte %ld of buffer %s (from its start; guard zones are < 0 and past its end) changed "
                 "from 0x%02x to 0x%02x", off, name, was[i], buf[i]);
        return 0;
    }
    return 1;
}

static void damage(const coll_case *c, unsigned char *A, unsigned char *B, void *send, void *recv, size_t nin,
                   size_t nout, size_t es)
{
    if (inject == INJECT_GUARD)
        B[GUARD - 1 - (size_t)c->count % GUARD] ^= 1;
    else if (inject == INJECT_ELEMENT && nout && recv) /* setup's recv is NULL only without output */
        ((unsigned char *)recv)[(c->count / 2) * es] ^= 0x40;
    else if (inject == INJECT_SEND && nin && send != recv && (unsigned char *)send >= A &&
             (unsigned char *)send < A + GUARD + 64)
        ((unsigned char *)send)[nin * es - 1] ^= 1;
}

static int run_case(stitch_comm_t *comm, const batch *b, int k, int r, char *msg, size_t len)
{
    const coll_case *c = &b->cases[k].c;
    int p = b->p;
    char what[400];
    stitch_status_t st = stitch_comm_set_algorithm(comm, (stitch_coll_t)c->coll, b->cases[k].algo);
    if (st == STITCH_ERR_UNSUPPORTED)
        return CASE_REFUSED;
    if (st != STITCH_OK) {
        snprintf(what, sizeof what, "set_algorithm: %s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
        return describe(b, k, r, what, msg, len), CASE_DEAD;
    }
    size_t es = stitch_dtype_size(c->dtype), region = (size_t)p * (c->count + 3) * es + 64;
    size_t total = GUARD + ((region + 63) & ~(size_t)63) + GUARD, nin, nout;
    unsigned char *A = aligned_alloc(64, total), *B = aligned_alloc(64, total);
    unsigned char *wasA = malloc(total), *wasB = malloc(total);
    if (!A || !B || !wasA || !wasB) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memset(A, 0x5c, total);
    memset(B, 0xab, total);
    bufs m = {A + GUARD, B + GUARD};
    void *send, *recv;
    setup(c, p, r, &m, &send, &recv);
    memcpy(wasA, A, total);
    memcpy(wasB, B, total);
    extents(c, p, r, &nin, &nout);
    int rc = CASE_OK;
    size_t bad;
    st = call(c, p, send, recv, comm);
    if (st == STITCH_OK && r == 0)
        damage(c, A, B, send, recv, nin, nout, es);
    if (st == STITCH_ERR_UNSUPPORTED) {
        rc = CASE_REFUSED;
    } else if (st != STITCH_OK) {
        snprintf(what, sizeof what, "status %s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
        rc = CASE_DEAD;
    } else if (nout && !verify(c, p, r, recv, &bad)) { /* no output: nothing to verify, and recv is NULL */
        int skip;
        double want = out_value(c, p, r, bad, &skip);
        snprintf(what, sizeof what, "element %zu of %zu is %g, want %s%g", bad, nout, load(c->dtype, recv, bad),
                 skip ? "untouched, not " : "", skip ? 0.0 : want);
        rc = CASE_FAILED;
    } else if (!untouched(A, wasA, total, recv, nout * es, "a", m.a + (size_t)c->shift * es, what, sizeof what) ||
               !untouched(B, wasB, total, recv, nout * es, "b", m.b + (size_t)c->shift * es, what, sizeof what)) {
        rc = CASE_FAILED;
    }
    if (rc == CASE_FAILED || rc == CASE_DEAD)
        describe(b, k, r, what, msg, len);
    free(A), free(B), free(wasA), free(wasB);
    return rc;
}

/* Run the batch's cases on one rank: counts what it ran and refused; the first failure's text in msg. */
typedef struct tally {
    long ran, refused, failed;
} tally;

static void run_rank(stitch_comm_t *comm, const batch *b, int r, tally *t, char *msg, size_t len)
{
    char one[1200];
    for (int k = 0; k < b->ncases; k++) {
        if (b->only >= 0 && k != b->only)
            continue;
        int rc = run_case(comm, b, k, r, one, sizeof one);
        t->ran += rc == CASE_OK, t->refused += rc == CASE_REFUSED;
        if (rc == CASE_FAILED || rc == CASE_DEAD) {
            if (t->failed++ == 0)
                snprintf(msg, len, "%s", one);
        }
        if (rc == CASE_DEAD) { /* the communicator is aborted: tell the others at once, and stop */
            stitch_comm_abort(comm);
            return;
        }
    }
}

/* ---- threads mode ---------------------------------------------------------------------------------------- */

typedef struct thread_arg {
    const batch *b;
    stitch_comm_t *comm;
    int rank;
    tally t;
    char msg[1200];
} thread_arg;

static void *thread_main(void *arg)
{
    thread_arg *a = arg;
    run_rank(a->comm, a->b, a->rank, &a->t, a->msg, sizeof a->msg);
    return NULL;
}

static void set_segment(const batch *b)
{
    if (b->seg_small)
        setenv("STITCH_SEGMENT_BYTES", "4096", 1);
    else
        unsetenv("STITCH_SEGMENT_BYTES");
}

static stitch_config_t config_of(const batch *b)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.groups = b->groups[0] ? b->groups : NULL;
    cfg.timeout_ms = 120000; /* a loaded 2-core machine: progress may stall for long, never for this long */
    return cfg;
}

static int batch_threads(const batch *b, tally *sum)
{
    stitch_comm_t *comms[MAXP];
    thread_arg args[MAXP];
    pthread_t th[MAXP];
    char err[1024] = "";
    if (b->p < 1 || b->p > MAXP) { /* make_batch's 1 + pick(MAXP) */
        printf("FAIL seed=%" PRIu64 ": p=%d, not 1..%d\n", b->seed, b->p, MAXP);
        return 0;
    }
    stitch_config_t cfg = config_of(b);
    set_segment(b);
    stitch_status_t st = stitch_comm_init_threads(b->p, &cfg, comms, err, sizeof err);
    if (st != STITCH_OK) {
        printf("FAIL seed=%" PRIu64 ": init p=%d groups=%s: %s: %s\n", b->seed, b->p, b->groups, stitch_strerror(st),
               err);
        return 0;
    }
    for (int r = 0; r < b->p; r++) {
        args[r] = (thread_arg){.b = b, .comm = comms[r], .rank = r};
        if (pthread_create(&th[r], NULL, thread_main, &args[r]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    int ok = 1;
    for (int r = 0; r < b->p; r++) {
        pthread_join(th[r], NULL);
        stitch_comm_destroy(comms[r]);
        if (args[r].t.failed)
            printf("%s", args[r].msg), ok = 0;
    }
    sum->ran += args[0].t.ran, sum->refused += args[0].t.refused;
    return ok;
}

/* ---- process mode ---------------------------------------------------------------------------------------- */

static const batch *proc_batch; /* the batch the forked ranks run (inherited) */

static int proc_rank(stitch_comm_t *comm, int rank, int n, int out)
{
    (void)n;
    tally t = {0, 0, 0};
    char msg[1200] = "";
    run_rank(comm, proc_batch, rank, &t, msg, sizeof msg);
    if (t.failed)
        say(out, "%s", msg);
    say(out, "tally %ld %ld\n", t.ran, t.refused);
    return t.failed ? 1 : 0;
}

static int batch_proc(const batch *b, tally *sum)
{
    static stitch_config_t cfg[MAXR];
    run r;
    proc_batch = b;
    set_segment(b);
    for (int i = 0; i < b->p; i++)
        cfg[i] = config_of(b), config_of_rank[i] = &cfg[i];
    spawn(&r, b->p, proc_rank, "shm");
    reap(&r, 300);
    int ok = 1;
    for (int i = 0; i < b->p; i++) {
        if (r.status[i] != 0) {
            ok = 0;
            const char *fail = strstr(r.text[i], "FAIL");
            if (fail)
                printf("%.*s", (int)(strstr(fail, "tally") ? strstr(fail, "tally") - fail : (long)strlen(fail)), fail);
            else
                printf("FAIL seed=%" PRIu64 ": mode=proc p=%d groups=%s rank %d exited %d: %s\n  replay: test_difftest "
                       "--mode proc --seed %" PRIu64 " --batches 1\n", b->seed, b->p, b->groups, i, r.status[i],
                       r.text[i], b->seed);
        }
    }
    long ran = 0, refused = 0;
    const char *t = strstr(r.text[0], "tally ");
    if (t && sscanf(t, "tally %ld %ld", &ran, &refused) == 2)
        sum->ran += ran, sum->refused += refused;
    return ok;
}

/* ---- main ------------------------------------------------------------------------------------------------ */

static uint64_t hung_seed;

static void on_alarm(int sig)
{
    (void)sig;
    char line[160];
    int n = snprintf(line, sizeof line, "FAIL: the run outlived its deadline (a hang) in batch seed=%" PRIu64 "\n",
                     hung_seed);
    if (write(2, line, (size_t)n) < 0)
        _exit(3);
    _exit(3);
}

int main(int argc, char **argv)
{
    double seconds = 15;
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
    long batches = -1;
    int only = -1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--mode") == 0 && v)
            mode = v, i++;
        else if (strcmp(argv[i], "--seconds") == 0 && v)
            seconds = atof(v), i++;
        else if (strcmp(argv[i], "--seed") == 0 && v)
            seed = strtoull(v, NULL, 10), i++;
        else if (strcmp(argv[i], "--batches") == 0 && v)
            batches = atol(v), i++;
        else if (strcmp(argv[i], "--inject") == 0 && v)
            inject = strcmp(v, "guard") == 0 ? INJECT_GUARD : strcmp(v, "element") == 0 ? INJECT_ELEMENT
                   : strcmp(v, "send") == 0 ? INJECT_SEND : -1, i++;
        else if (strcmp(argv[i], "--case") == 0 && v)
            only = atoi(v), i++;
        else {
            fprintf(stderr, "usage: %s --mode threads|proc [--seconds N] [--seed S] [--batches N] [--case K]\n",
                    argv[0]);
            return 2;
        }
    }
    int threads = strcmp(mode, "threads") == 0;
    if (inject < 0) {
        fprintf(stderr, "--inject: guard, element or send\n");
        return 2;
    }
    if (!threads && strcmp(mode, "proc") != 0) {
        fprintf(stderr, "--mode: threads or proc, not '%s'\n", mode);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGALRM, on_alarm);
    proc_test_env();
    printf("seed %" PRIu64 " mode %s seconds %g\n", seed, mode, seconds);
    fflush(stdout);
    double t0 = now();
    tally sum = {0, 0, 0};
    long nb = 0, bad = 0;
    static batch b;
    while (batches < 0 ? now() - t0 < seconds : nb < batches) {
        make_batch(seed + (uint64_t)nb, only, &b);
        hung_seed = b.seed;
        alarm(600); /* a batch takes seconds; the communicators' own timeout is 120 s */
        bad += !(threads ? batch_threads(&b, &sum) : batch_proc(&b, &sum));
        nb++;
        fflush(stdout);
    }
    alarm(0);
    printf("%s: %ld batches, %ld cases run, %ld refused, %ld failed batches in %.1f s (seed %" PRIu64 ")\n", mode, nb,
           sum.ran, sum.refused, bad, now() - t0, seed);
    return bad ? 1 : 0;
}
