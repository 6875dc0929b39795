/* test_abort_free.c - a caller may free its buffers as soon as a call returns, whatever the call returned.
 *
 * stitch.h promises that no pointer is kept after a call returns. A call that fails (stitch_comm_abort from
 * another thread, a timeout, a mismatch) must therefore not return while a peer still reads its buffers. Each
 * case runs 4 thread ranks on a large all_reduce (or an all_to_all_v) and makes it fail at a random moment within
 * the time a clean call takes (a timeout: 1 or 2 ms into a call that reads whole blocks of 4 MB, the last rank
 * calling only once another rank's call has returned); every rank then overwrites and unmaps its data buffers
 * (and frees its counts arrays) the moment its call returns. A late reader faults on the unmapped pages in any build, and ASan reports
 * the freed arrays. Tests: abort, timeout, mismatch, mismatch_v (4 MB, a few rounds: the default suite); the
 * same with the suffix _long run 100 rounds of 64 MB (label `long`, for the ASan build).
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "runner.h"
#include "stitch.h"

enum { P = 4 };
enum { ABORT, TIMEOUT, MISMATCH, MISMATCH_V, CLEAN, CLEAN_V };

typedef struct af_run {
    stitch_comm_t *comms[P];
    int mode;
    size_t count;            /* floats per rank */
    double delay_s;          /* when the failure is provoked, from the start */
    pthread_barrier_t start;
    stitch_status_t st[P];
    double took[P];          /* seconds in the call */
    pthread_mutex_t mu;      /* TIMEOUT: the late rank calls once another's call has returned (timed out) */
    pthread_cond_t back;
    int returned;
} af_run;

static char *map(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap %zu bytes", bytes);
    return m;
}

/* Overwrite, then give the pages back: a peer that reads them after this faults. */
static void unmap(char *m, size_t bytes)
{
    memset(m, 0x5a, bytes);
    CHECK(munmap(m, bytes) == 0, "munmap");
}

static void sleep_s(double s)
{
    if (s > 0)
        nanosleep(&(struct timespec){(time_t)s, (long)((s - (double)(time_t)s) * 1e9)}, NULL);
}

/* all_to_all_v with blocks of count / P; in MISMATCH_V the last rank expects one element less from rank 0. */
static stitch_status_t call_v(af_run *r, int rank, const char *send, char *recv)
{
    size_t b = r->count / P, *sc = malloc(sizeof(size_t) * P * 4), *sd = sc + P, *rc = sc + 2 * P,
           *rd = sc + 3 * P;
    CHECK(sc, "malloc");
    for (int q = 0; q < P; q++)
        sc[q] = rc[q] = b, sd[q] = rd[q] = (size_t)q * b;
    if (r->mode == MISMATCH_V && rank == P - 1) {
        sleep_s(r->delay_s);
        rc[0] = b - 1;
    }
    stitch_status_t st = stitch_all_to_all_v(send, sc, sd, recv, rc, rd, STITCH_FP32, r->comms[rank]);
    memset(sc, 0x5a, sizeof(size_t) * P * 4);
    free(sc);
    return st;
}

static void rank_body(void *ctx, int rank)
{
    af_run *r = ctx;
    size_t bytes = r->count * sizeof(float);
    char *send = map(bytes), *recv = map(bytes);
    for (size_t i = 0; i < r->count; i++)
        ((float *)send)[i] = (float)(i % 7);
    pthread_barrier_wait(&r->start);
    double t0 = st_now();
    stitch_status_t st;
    if (r->mode == MISMATCH_V || r->mode == CLEAN_V) {
        st = call_v(r, rank, send, recv);
    } else {
        size_t n = r->count;
        if (r->mode == MISMATCH && rank == P - 1)
            sleep_s(r->delay_s), n--;
        if (r->mode == TIMEOUT && rank == P - 1) { /* late: the others time out, some while a peer reads them */
            pthread_mutex_lock(&r->mu);
            while (r->returned == 0)
                pthread_cond_wait(&r->back, &r->mu);
            pthread_mutex_unlock(&r->mu);
        }
        st = stitch_all_reduce(send, recv, n, STITCH_FP32, STITCH_SUM, r->comms[rank]);
    }
    r->took[rank] = st_now() - t0;
    pthread_mutex_lock(&r->mu);
    r->returned++;
    pthread_cond_broadcast(&r->back);
    pthread_mutex_unlock(&r->mu);
    unmap(send, bytes);
    unmap(recv, bytes);
    r->st[rank] = st;
}

static void *aborter(void *arg)
{
    af_run *r = arg;
    pthread_barrier_wait(&r->start);
    sleep_s(r->delay_s);
    stitch_comm_abort(r->comms[(int)(r->delay_s * 1e6) % P]);
    return NULL;
}

/* One round; returns how many ranks failed, and in *took the longest call. */
static int round_once(int mode, size_t count, double delay_s, int timeout_ms, double *took)
{
    static af_run r;
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[256];
    pthread_t t;
    memset(&r, 0, sizeof r);
    r.mode = mode, r.count = count, r.delay_s = delay_s;
    cfg.algo = "ring";
    cfg.timeout_ms = timeout_ms;
    CHECK(stitch_comm_init_threads(P, &cfg, r.comms, err, sizeof err) == STITCH_OK, "init: %s", err);
    int aborts = mode == ABORT;
    pthread_barrier_init(&r.start, NULL, P + aborts);
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.back, NULL);
    if (aborts)
        CHECK(pthread_create(&t, NULL, aborter, &r) == 0, "pthread_create");
    st_run_ranks(P, rank_body, &r);
    if (aborts)
        pthread_join(t, NULL);
    pthread_barrier_destroy(&r.start);
    pthread_mutex_destroy(&r.mu);
    pthread_cond_destroy(&r.back);
    int failed = 0;
    for (int q = 0; q < P; q++) {
        stitch_status_t want = mode == ABORT ? STITCH_ERR_ABORTED : mode == TIMEOUT ? STITCH_ERR_TIMEOUT
                                                                                    : STITCH_ERR_MISMATCH;
        int clean = mode == CLEAN || mode == CLEAN_V;
        CHECK(r.st[q] == STITCH_OK || (!clean && (r.st[q] == want || r.st[q] == STITCH_ERR_ABORTED)),
              "rank %d: %s: %s", q, stitch_strerror(r.st[q]), stitch_comm_last_error(r.comms[q]));
        failed += r.st[q] != STITCH_OK;
        if (took && r.took[q] > *took)
            *took = r.took[q];
    }
    for (int q = 0; q < P; q++)
        CHECK(stitch_comm_destroy(r.comms[q]) == STITCH_OK, "destroy");
    return failed;
}

/* rounds of mode on count floats, the failure provoked at a random moment of a clean call's duration. */
static void run_mode(int mode, size_t count, int rounds)
{
    unsigned seed = (unsigned)(st_now() * 1e6);
    double clean = 0;
    round_once(mode == MISMATCH_V ? CLEAN_V : CLEAN, count, 0, -1, &clean);
    int failed_rounds = 0;
    for (int i = 0; i < rounds; i++) {
        double at = clean * (double)(rand_r(&seed) % 1000) / 1000.0;
        int timeout_ms = 20000;
        if (mode == MISMATCH) /* the last rank arrives while a peer reads a whole block of the rank that meets it */
            at = (double)(rand_r(&seed) % 2000) * 1e-6;
        if (mode == TIMEOUT) /* a timeout of 1 or 2 ms, within a peer's read of a whole block; the last rank calls
                              * only once another has returned (a message, not a sleep: make test-loaded found the
                              * sleep of 20 ms over before the others had started waiting) */
            timeout_ms = 1 + rand_r(&seed) % 2;
        failed_rounds += round_once(mode, count, at, timeout_ms, NULL) > 0;
    }
    printf("# mode %d: %d of %d rounds failed as provoked (a clean call took %.3f s)\n", mode, failed_rounds,
           rounds, clean);
    CHECK(failed_rounds > 0, "no round failed: nothing was tested");
}

#define SMALL ((size_t)1 << 20) /* floats: 4 MB */
#define LARGE ((size_t)16 << 20) /* 64 MB */

static void t_abort(void) { run_mode(ABORT, SMALL, 8); }
/* One segment: a step reads a whole block (4 MB, 16 MB in the long run), so the timeout may land inside a read. */
static void t_timeout(void)
{
    setenv("STITCH_SEGMENT_BYTES", "1024m", 1);
    run_mode(TIMEOUT, 4 * SMALL, 4);
}
static void t_mismatch(void)
{
    setenv("STITCH_SEGMENT_BYTES", "1024m", 1);
    run_mode(MISMATCH, 4 * SMALL, 4);
}
static void t_mismatch_v(void) { run_mode(MISMATCH_V, SMALL, 6); }
static void t_abort_long(void) { run_mode(ABORT, LARGE, 100); }
static void t_timeout_long(void)
{
    setenv("STITCH_SEGMENT_BYTES", "1024m", 1);
    run_mode(TIMEOUT, LARGE, 100);
}
static void t_mismatch_long(void)
{
    setenv("STITCH_SEGMENT_BYTES", "1024m", 1);
    run_mode(MISMATCH, LARGE, 100);
}
static void t_mismatch_v_long(void) { run_mode(MISMATCH_V, LARGE, 100); }

static const st_test tests[] = {
    {"abort", t_abort, 60},
    {"timeout", t_timeout, 60},
    {"mismatch", t_mismatch, 60},
    {"mismatch_v", t_mismatch_v, 60},
    {"abort_long", t_abort_long, 1800},
    {"timeout_long", t_timeout_long, 1800},
    {"mismatch_long", t_mismatch_long, 1800},
    {"mismatch_v_long", t_mismatch_v_long, 1800},
};

int main(int argc, char **argv)
{
    int n = (int)(sizeof tests / sizeof tests[0]), selected = 0;
    for (int i = 1; i < argc; i++)
        selected |= argv[i][0] != '-';
    /* no names: the default suite's four */
    return st_run_tests(tests, selected ? n : 4, argc, argv);
}
