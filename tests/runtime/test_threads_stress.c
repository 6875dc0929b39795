/* test_threads_stress.c - thread ranks that run ahead of each other, by any number of calls, under forced
 * preemption: results exact and no error of any kind.
 *
 * Each batch is one communicator of p thread ranks making a long sequence of calls that every rank derives from
 * the batch's seed alone (so the arguments agree): rooted collectives with rotating or random roots, counts from 0
 * up to a few segments, several collectives interleaved. A rank with nothing to do in a call (a count-0 call, a
 * leaf of a tree, a scatter's receiver) can finish it long before the others and run on, which is what issue 18
 * item 1 was about: the fingerprints a peer still had to check were overwritten two calls later. To make every
 * interleaving likely rather than lucky, the engine's preemption hook (job.h's st_job_preempt) yields or naps at
 * random at every post, wait, borrow and fingerprint write, and each rank naps at random between calls.
 *
 * Lost wake-ups (issue 18 item 9): every test runs with the sleep slice raised to 10 minutes (job.h's
 * st_job_wait), so a post whose wake-up is lost leaves its waiter asleep until the call's timeout, and the batch
 * fails instead of losing 50 ms; `rooted_sleepy` and `segments` also send every unfinished wait straight to the
 * futex (no spins, no yields), with the hook in each window of the sleepers/posted protocol. `segments` runs the
 * two shapes that once timed out under heavy oversubscription (all_to_all mesh at p = 6, reduce_scatter nhr at
 * p = 7, 4 KiB segments). What had timed out was not a lost wake-up but the deadline: it covered the whole call,
 * and a call of thousands of steps took longer than that on a loaded machine while every rank progressed.
 * `long_call` makes such a call (one rank naps at every protocol point) and demands that it succeed.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "job.h"
#include "rooted_stream.h"
#include "runner.h"
#include "stitch.h"

#define MAXP 9

/* The engine's hook: mostly nothing (the run must stay short), often a yield, sometimes a nap that lets every
 * other rank run for a while. */
static void preempt(void)
{
    uint64_t x = local_rnd() % 1024;
    if (x < 96)
        sched_yield();
    else if (x < 100)
        nap_us((long)(local_rnd() % 200));
}

/* The hook at every protocol point, and sleeps without the slice that would turn a lost wake-up into a 50 ms
 * delay: a wake-up lost here makes the waiter sleep until its call's deadline, and the batch fail. */
static void hooks(void)
{
    st_job_preempt = preempt;
    st_job_wait.slice_ms = 600000;
}

/* hooks(), and every wait that is not over at its first look goes to sleep on the futex. */
static void sleepy_hooks(void)
{
    hooks();
    st_job_wait.spins = st_job_wait.yields = 0;
}

/* ---- one batch ----------------------------------------------------------------------------------------- */

typedef struct batch {
    rs_stream s;
    stitch_comm_t **comms;
    stitch_status_t st[MAXP];
    int failed_call[MAXP];
    char err[MAXP][600];
    unsigned long tiny[MAXP];
} batch;

extern _Thread_local unsigned long st_exec_tiny_calls; /* exec.c */

static void rank_main(void *ctx, int r)
{
    batch *b = ctx;
    unsigned long tiny0 = st_exec_tiny_calls;
    b->st[r] = rs_run_rank(&b->s, b->comms[r], r, b->err[r], sizeof b->err[r], &b->failed_call[r]);
    b->tiny[r] = st_exec_tiny_calls - tiny0;
}

/* Run a batch of `ncalls` on p ranks with `algo` (a stitch_config_t.algo string); fail the test with the first
 * rank's error. */
static unsigned long run_batch(int p, const char *algo, const stitch_coll_t *colls, int ncolls, int ncalls,
                               uint64_t seed)
{
    unsigned long tiny = 0;
    stitch_comm_t *comms[MAXP];
    stitch_config_t cfg = {0};
    char err[1024];
    cfg.algo = algo;
    cfg.timeout_ms = 60000; /* a real hang still ends the test (its alarm); slowness must not */
    stitch_status_t st = stitch_comm_init_threads(p, &cfg, comms, err, sizeof err);
    CHECK(st == STITCH_OK, "init p=%d algo %s: %s", p, algo, err);
    batch b = {.s = {p, ncalls, seed, colls, ncolls}, .comms = comms};
    st_run_ranks(p, rank_main, &b);
    for (int r = 0; r < p; r++)
        CHECK(b.st[r] == STITCH_OK, "p=%d %s seed %llu: rank %d failed at call %d: %s: %s", p, algo,
              (unsigned long long)seed, r, b.failed_call[r], stitch_strerror(b.st[r]), b.err[r]);
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]), tiny += b.tiny[r];
    return tiny; /* tiny calls run, over the ranks (exec.c's st_tiny) */
}

/* ---- the tests ----------------------------------------------------------------------------------------- */

static const stitch_coll_t rooted[] = {STITCH_SCATTER, STITCH_GATHER, STITCH_BROADCAST, STITCH_REDUCE};

/* The program: scatter of one element, root i % p, mesh at p = 3 (10 of 10 runs failed). */
static void scatter_mesh(void)
{
    hooks();
    run_batch(3, "scatter=mesh", rooted, 1, 400, 1);
}

/* Every algorithm of every rooted collective, several p, the four collectives interleaved where the algorithm
 * implements them (others run their default). */
static void rooted_all(void)
{
    hooks();
    static const char *const algos[] = {"ring", "mesh", "nhr", "nb", "nb_binary", "nhr_oneshot", "rhd",
                                        "level0", "level1", "hier", "mesh_nhr_2d"};
    static const int ps[] = {2, 3, 4, 5, 7, 9, 6, 8};
    int np = (int)(sizeof ps / sizeof *ps);
    for (int a = 0; a < (int)(sizeof algos / sizeof *algos); a++) {
        char spec[256] = "";
        for (int c = 0; c < 4; c++) {
            const char *names[64];
            int n = stitch_algorithms(rooted[c], names, 64);
            for (int k = 0; k < n; k++)
                if (strcmp(names[k], algos[a]) == 0)
                    snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%s=%s", *spec ? "," : "",
                             stitch_coll_name(rooted[c]), algos[a]);
        }
        for (int k = 0; k < 2; k++)
            run_batch(ps[(a * 2 + k) % np], spec, rooted, 4, 150, (uint64_t)(a * 2 + k) + 100);
    }
}

/* Mixed rooted batches with every unfinished wait going to sleep: the futex protocol (post, sleepers, wake) on
 * every step, with the hook in each of its windows. */
static void rooted_sleepy(void)
{
    sleepy_hooks();
    run_batch(5, "scatter=nb,gather=ring,broadcast=nb_binary,reduce=rhd", rooted, 4, 300, 21);
    run_batch(8, "scatter=nhr,gather=mesh,broadcast=nhr,reduce=nhr_oneshot", rooted, 4, 200, 22);
}

/* Count-0 calls right after rooted ones: the rank that has nothing to do skips the count-0 call at once. */
static const stitch_coll_t scatter_only[] = {STITCH_SCATTER};

static void count_zero(void)
{
    hooks();
    run_batch(4, "scatter=nhr", scatter_only, 1, 400, 7); /* counts include 0 three times in ten */
    run_batch(3, "scatter=mesh,broadcast=nb_binary,reduce=nhr_oneshot,gather=mesh", rooted, 4, 400, 8);
}

/* Tiny calls (exec.c's st_tiny: one step, at most ST_TINY_BYTES; peers read the input from the slot and nobody waits
 * for its readers at the end), interleaved with calls of the same collectives that are not tiny (counts 100 and
 * up, and reduce's multi-step algorithm), so ranks run ahead by calls and the slot's two copies are reused under
 * the hook's preemption. */
static const stitch_coll_t tiny_colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE, STITCH_BROADCAST};

static void tiny(void)
{
    hooks();
    unsigned long n = run_batch(2, "all_reduce=mesh_oneshot,reduce=nhr_oneshot", tiny_colls, 3, 600, 31);
    n += run_batch(3, "all_reduce=mesh_oneshot,reduce=ring", tiny_colls, 3, 400, 32);
    n += run_batch(5, "all_reduce=mesh_oneshot,reduce=nhr_oneshot", tiny_colls, 3, 300, 33);
    CHECK(n > 300, "only %lu tiny calls ran: the tiny path is not tested", n);
    printf("# %lu tiny calls over the ranks\n", n);
}

/* Replayed tiny calls (replay.c) against the general path, bit for bit: a stream of tiny all_reduce, reduce and
 * broadcast calls on values whose sum depends on its order (magnitudes 1 to 1e30, both signs, fp16/bf16 of random
 * finite bits), every dtype and op, counts from 1 up to ST_TINY_BYTES, in place and out of place, roots in turn, from
 * buffers whose addresses change from call to call (a broadcast's non-roots pass a NULL sendbuf every other shape),
 * under the preemption hook; once with replay off (st_replay_off), once on. Every rank's outputs, hashed, must
 * agree between the runs, and the second must have replayed most of its tiny calls. */
extern _Thread_local unsigned long st_exec_replays; /* exec.c */
extern int st_replay_off; /* replay.c */

typedef struct rp_team {
    stitch_comm_t **comms;
    int p, ncalls;
    uint64_t hash[MAXP];
    unsigned long replays[MAXP], tiny[MAXP];
    stitch_status_t st[MAXP];
    char err[MAXP][300];
} rp_team;

static void rp_fill(unsigned char *buf, size_t n, stitch_dtype_t dt, uint64_t *x)
{
    for (size_t i = 0; i < n; i++) {
        *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = (double)(*x >> 40) / (double)(1 << 24) * ((*x >> 20) & 1 ? -1 : 1);
        v *= (*x >> 21) & 1 ? 1e30 : (*x >> 22) & 1 ? 1e-3 : 1;
        if (dt == STITCH_FP32) {
            float f = (float)v;
            memcpy(buf + 4 * i, &f, 4);
        } else if (dt == STITCH_FP64) {
            memcpy(buf + 8 * i, &v, 8);
        } else { /* fp16, bf16: random bits with the top exponent bit clear (finite) */
            uint16_t h = (uint16_t)(*x >> 30) & 0xbfff;
            memcpy(buf + 2 * i, &h, 2);
        }
    }
}

static void rp_rank(void *ctx, int r)
{
    rp_team *t = ctx;
    static const stitch_dtype_t dts[] = {STITCH_FP32, STITCH_FP64, STITCH_FP16, STITCH_BF16};
    static _Thread_local _Alignas(64) unsigned char pool[4][ST_TINY_BYTES], out[4][ST_TINY_BYTES];
    uint64_t x = 1000 + (uint64_t)r, h = 1469598103934665603ULL;
    unsigned long replays0 = st_exec_replays, tiny0 = st_exec_tiny_calls;
    for (int i = 0; i < t->ncalls && t->st[r] == STITCH_OK; i++) {
        stitch_dtype_t dt = dts[(i / 64) % 4];
        size_t es = stitch_dtype_size(dt), count = 1 + (size_t)(i / 8) * 97 % (ST_TINY_BYTES / es);
        stitch_op_t op = (stitch_op_t)((i / 16) % STITCH_OP_COUNT);
        int kind = (i / 32) % 3, root = (i / 96) % t->p, in_place = i % 2; /* shapes alternate, and repeat */
        int reduce = kind == 1, bcast = kind == 2;
        unsigned char *send = pool[i % 4], *recv = in_place ? send : out[(i / 3) % 4];
        rp_fill(send, count, dt, &x);
        if (!in_place)
            memset(recv, 0, count * es);
        if (reduce && r != root && !in_place)
            recv = NULL;
        if (bcast && r != root && !in_place && (i / 2) % 2) /* a sendbuf the call does not use */
            send = NULL;
        t->st[r] = reduce  ? stitch_reduce(send, recv, count, dt, op, root, t->comms[r])
                   : bcast ? stitch_broadcast(send, recv, count, dt, root, t->comms[r])
                           : stitch_all_reduce(send, recv, count, dt, op, t->comms[r]);
        if (t->st[r] != STITCH_OK)
            snprintf(t->err[r], sizeof t->err[r], "call %d: %s", i, stitch_comm_last_error(t->comms[r]));
        if (recv && (!reduce || r == root))
            for (size_t k = 0; k < count * es; k++)
                h = (h ^ recv[k]) * 1099511628211ULL;
    }
    t->hash[r] = h;
    t->replays[r] = st_exec_replays - replays0;
    t->tiny[r] = st_exec_tiny_calls - tiny0;
}

static void rp_run(int p, const char *algo, int off, rp_team *t)
{
    stitch_config_t cfg = {0};
    char err[1024];
    cfg.algo = algo;
    cfg.timeout_ms = 60000;
    *t = (rp_team){.p = p, .ncalls = 512};
    stitch_comm_t *comms[MAXP];
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "init p=%d: %s", p, err);
    t->comms = comms;
    st_replay_off = off;
    st_run_ranks(p, rp_rank, t);
    st_replay_off = 0;
    for (int r = 0; r < p; r++)
        CHECK(t->st[r] == STITCH_OK, "p=%d %s replay %s: rank %d: %s: %s", p, algo, off ? "off" : "on", r,
              stitch_strerror(t->st[r]), t->err[r]);
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static void replay_bits(void)
{
    hooks(); /* ranks run ahead of each other by calls, under the preemption hook */
    static const struct { int p; const char *algo; } runs[] = {
        {2, "all_reduce=mesh_oneshot,reduce=nhr_oneshot"}, {3, "all_reduce=mesh_oneshot,reduce=nhr_oneshot"},
        {5, "all_reduce=mesh_oneshot,reduce=nhr_oneshot,broadcast=mesh"}, {4, "auto"}, {7, "all_reduce=mesh_oneshot"}};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        rp_team off, on;
        rp_run(runs[k].p, runs[k].algo, 1, &off);
        rp_run(runs[k].p, runs[k].algo, 0, &on);
        unsigned long replays = 0, tiny = 0;
        for (int r = 0; r < runs[k].p; r++) {
            CHECK(off.hash[r] == on.hash[r], "p=%d %s: rank %d's outputs differ with replay on", runs[k].p,
                  runs[k].algo, r);
            CHECK(off.replays[r] == 0, "p=%d: rank %d replayed %lu calls with replay off", runs[k].p, r,
                  off.replays[r]);
            replays += on.replays[r], tiny += on.tiny[r];
        }
        /* each shape runs 4 calls, one recorded; at least the all_reduce calls (a third) are tiny */
        CHECK(replays * 3 >= tiny * 2 && tiny * 3 >= (unsigned long)(runs[k].p * on.ncalls),
              "p=%d %s: %lu of %lu tiny calls replayed, of %d calls", runs[k].p, runs[k].algo, replays, tiny,
              runs[k].p * on.ncalls);
        printf("# p=%d %s: %lu of %lu tiny calls replayed (%d calls), outputs identical\n", runs[k].p,
               runs[k].algo, replays, tiny, runs[k].p * on.ncalls);
    }
}

/* Many small segments, many steps per call (issue 18 item 9's shapes), with the hook. */
typedef struct seg_team {
    int p;
    stitch_coll_t coll;
    size_t count;
    int ncalls;
    stitch_comm_t **comms;
    stitch_status_t st[MAXP];
    char err[MAXP][600];
} seg_team;

static void seg_main(void *ctx, int r)
{
    seg_team *t = ctx;
    size_t n = t->count * (size_t)t->p;
    int32_t *send = malloc(n * sizeof *send), *recv = malloc(n * sizeof *recv);
    CHECK(send && recv, "out of memory");
    for (int i = 0; i < t->ncalls && t->st[r] == STITCH_OK; i++) {
        for (size_t k = 0; k < n; k++)
            send[k] = value(i, r, k);
        stitch_status_t st = t->coll == STITCH_ALL_TO_ALL
                                 ? stitch_all_to_all(send, recv, t->count, STITCH_INT32, t->comms[r])
                                 : stitch_reduce_scatter(send, recv, t->count, STITCH_INT32, STITCH_SUM, t->comms[r]);
        if (st != STITCH_OK) {
            t->st[r] = st;
            snprintf(t->err[r], sizeof t->err[r], "%s", stitch_comm_last_error(t->comms[r]));
            break;
        }
        for (size_t k = 0; k < (t->coll == STITCH_ALL_TO_ALL ? n : t->count); k++) {
            long want = 0;
            if (t->coll == STITCH_ALL_TO_ALL) /* block q of mine is block r of q's */
                want = value(i, (int)(k / t->count), (size_t)r * t->count + k % t->count);
            else
                for (int q = 0; q < t->p; q++)
                    want += value(i, q, (size_t)r * t->count + k);
            if (recv[k] != want) {
                t->st[r] = STITCH_ERR_INTERNAL;
                snprintf(t->err[r], sizeof t->err[r], "call %d element %zu is %d, expected %ld", i, k, recv[k],
                         want);
                break;
            }
        }
    }
    free(send);
    free(recv);
}

static void run_segments(int p, stitch_coll_t coll, const char *algo, size_t count, int ncalls)
{
    stitch_comm_t *comms[MAXP];
    stitch_config_t cfg = {0};
    char err[1024];
    cfg.algo = algo;
    cfg.timeout_ms = 60000;
    setenv("STITCH_SEGMENT_BYTES", "4096", 1);
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "init: %s", err);
    seg_team t = {.p = p, .coll = coll, .count = count, .ncalls = ncalls, .comms = comms};
    st_run_ranks(p, seg_main, &t);
    for (int r = 0; r < p; r++)
        CHECK(t.st[r] == STITCH_OK, "%s p=%d: rank %d: %s: %s", algo, p, r, stitch_strerror(t.st[r]), t.err[r]);
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static void segments(void)
{
    sleepy_hooks();
    run_segments(6, STITCH_ALL_TO_ALL, "all_to_all=mesh", 1024 * 6, 2);     /* 4 KiB segments of 144 KiB */
    run_segments(7, STITCH_REDUCE_SCATTER, "reduce_scatter=nhr", 1024 * 7, 2);
}

/* A call much longer than the timeout whose ranks never stop posting succeeds: the timeout is how long one wait
 * for a peer lasts (job.h), not the call's length (issue 18 item 9: big calls on a loaded machine timed out while
 * every rank progressed). Rank 0 naps at every protocol point, so the call takes at least 2.5x the timeout however
 * fast the machine is, while no single wait comes near it. */
static _Thread_local int slow_rank;
static long naps; /* rank 0's only */

static void nap_if_slow(void)
{
    if (slow_rank)
        nap_us(2000), naps++;
}

static void slow_main(void *ctx, int r)
{
    seg_team *t = ctx;
    slow_rank = r == 0;
    seg_main(t, r);
}

static void long_call(void)
{
    st_job_preempt = nap_if_slow;
    stitch_comm_t *comms[2];
    stitch_config_t cfg = {0};
    char err[1024];
    cfg.algo = "all_to_all=mesh";
    cfg.timeout_ms = 1500;
    setenv("STITCH_SEGMENT_BYTES", "4096", 1);
    CHECK(stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_OK, "init: %s", err);
    seg_team t = {.p = 2, .coll = STITCH_ALL_TO_ALL, .count = 1024 * 64, .ncalls = 1, .comms = comms};
    double t0 = st_now();
    st_run_ranks(2, slow_main, &t);
    double took = st_now() - t0;
    for (int r = 0; r < 2; r++)
        CHECK(t.st[r] == STITCH_OK, "rank %d after %.1f s: %s: %s", r, took, stitch_strerror(t.st[r]), t.err[r]);
    CHECK(naps * 2 > 3750, "rank 0 napped %ld x 2 ms, not 2.5x the timeout: the test proves nothing", naps);
    printf("# %ld naps of 2 ms, %.1f s\n", naps, took);
    for (int r = 0; r < 2; r++)
        stitch_comm_destroy(comms[r]);
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"scatter_mesh", scatter_mesh, 120},
        {"count_zero", count_zero, 120},
        {"rooted_all", rooted_all, 240},
        {"tiny", tiny, 120},
        {"replay_bits", replay_bits, 120},
        {"rooted_sleepy", rooted_sleepy, 120},
        {"segments", segments, 120},
        {"long_call", long_call, 120},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
