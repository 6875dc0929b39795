/* test_collectives.c - every collective of stitch.h with data, for every algorithm of the catalogue.
 *
 * A team of p threads runs a list of cases on one set of communicators (threads are made once per team, not per
 * case). Inputs and expected outputs are coll_data.h's (shared with the process-mode test): values whose
 * reduction is exact in any order, so every element of every rank's output is checked exactly. Outputs that must be the same on every rank (all_reduce, all_gather, broadcast)
 * are also compared bit for bit with rank 0's; receive buffers a rank does not use must stay untouched.
 *
 * Default run: a sample of the matrix. `--full` (ctest label `long`): every algorithm x collective x dtype x op x
 * p in {1,2,3,4,5,6,7,8,12,13,16} x counts {0, 1, 2, p-1, p+1, 1000, 65537} x in-place/out-of-place x
 * aligned/offset-by-one-element x every root for p <= 8 (else 0, p/2, p-1). all_to_all_v's counts are
 * (i + 2j) % 3 + count for the pair (i, j), its displacements packed in reverse order with gaps. The pipeline
 * algorithms also run with groupings 2x2, 3x2, 2x3, 4x2 (test pipeline_groups).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "coll_data.h"
#include "runner.h"
#include "st_steptab.h"

static int full_matrix;

typedef struct team {
    int p;
    const char *algo;
    const char *groups;
    stitch_comm_t **comms;
    pthread_barrier_t bar;
    const coll_case *cases;
    int ncases;
    const unsigned char *out0; /* rank 0's output of the current case */
    atomic_int failed;
    char msg[600];
} team;

/* ---- one case on one rank -------------------------------------------------------------------------------- */

static void fail(team *t, const coll_case *c, int rank, const char *what)
{
    if (atomic_exchange(&t->failed, 1) == 0)
        snprintf(t->msg, sizeof t->msg, "%s%s%s %s %s %s p=%d count=%zu root=%d inplace=%d shift=%d rank %d: %s",
                 t->algo, t->groups ? " groups=" : "", t->groups ? t->groups : "", stitch_coll_name(c->coll),
                 stitch_dtype_name(c->dtype), stitch_op_name(c->op), t->p, c->count, c->root, c->inplace, c->shift,
                 rank, what);
}

/* Outputs every rank holds whole must be bit-identical to rank 0's. */
static int same_everywhere(int coll)
{
    return coll == STITCH_ALL_REDUCE || coll == STITCH_ALL_GATHER || coll == STITCH_BROADCAST;
}

static void run_case(team *t, int r, const coll_case *c, bufs *m)
{
    void *send, *recv;
    char what[700];
    size_t bad, nin, nout;
    setup(c, t->p, r, m, &send, &recv);
    extents(c, t->p, r, &nin, &nout);
    stitch_status_t st = call(c, t->p, send, recv, t->comms[r]);
    if (st != STITCH_OK) {
        snprintf(what, sizeof what, "status %s: %s", stitch_strerror(st), stitch_comm_last_error(t->comms[r]));
        fail(t, c, r, what);
    } else if (!verify(c, t->p, r, recv, &bad)) {
        snprintf(what, sizeof what, "element %zu is %g", bad, load(c->dtype, recv, bad));
        fail(t, c, r, what);
    } else if (nout == 0 && recv) {
        for (size_t i = 0; i < c->count * stitch_dtype_size(c->dtype); i++)
            if (((unsigned char *)recv)[i] != 0xab) {
                fail(t, c, r, "a receive buffer this rank does not use was written");
                break;
            }
    }
    if (r == 0)
        t->out0 = recv;
    pthread_barrier_wait(&t->bar);
    size_t bytes = nout * stitch_dtype_size(c->dtype);
    if (same_everywhere(c->coll) && bytes && memcmp(recv, t->out0, bytes) != 0)
        fail(t, c, r, "output differs from rank 0's");
    pthread_barrier_wait(&t->bar);
}

static void member_main(void *ctx, int rank)
{
    team *t = ctx;
    size_t most = 0;
    for (int i = 0; i < t->ncases; i++) {
        size_t need = (size_t)t->p * (t->cases[i].count + 3) * stitch_dtype_size(t->cases[i].dtype) + 64;
        most = need > most ? need : most;
    }
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    CHECK(m.a && m.b, "out of memory");
    for (int i = 0; i < t->ncases; i++)
        run_case(t, rank, &t->cases[i], &m);
    free(m.a);
    free(m.b);
}

/* Run `cases` on a team of p threads with algorithm `algo`; CHECK-fails with the first failure. */
static void run_team_groups(const char *algo, const char *groups, int p, const coll_case *cases, int ncases)
{
    team t = {.p = p, .algo = algo ? algo : "$STITCH_ALGO", .groups = groups, .cases = cases, .ncases = ncases};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = algo;
    cfg.groups = groups;
    cfg.timeout_ms = 20000;
    t.comms = calloc((size_t)p, sizeof *t.comms);
    stitch_status_t st = stitch_comm_init_threads(p, &cfg, t.comms, err, sizeof err);
    CHECK(st == STITCH_OK, "init %s p=%d: %s", algo, p, err);
    pthread_barrier_init(&t.bar, NULL, (unsigned)p);
    st_run_ranks(p, member_main, &t);
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(t.comms[r]);
    pthread_barrier_destroy(&t.bar);
    free(t.comms);
    CHECK(!t.failed, "%s", t.msg);
}

static void run_team(const char *algo, int p, const coll_case *cases, int ncases)
{
    run_team_groups(algo, NULL, p, cases, ncases);
}

/* ---- the matrix ------------------------------------------------------------------------------------------ */

/* The default run's sample: every (collective, dtype, count) once, with the op rotating; the largest count
 * only for fp32 sum (its cost is data, not coverage). */
static int in_sample(int coll, int dt, int op, size_t count, int ci)
{
    if (full_matrix)
        return 1;
    if (count == 65537)
        return dt == STITCH_FP32 && op == STITCH_SUM;
    return moves_only(coll) || op == (ci + dt + coll) % STITCH_OP_COUNT;
}

/* The roots a case list covers: every root for small p (or in the full matrix up to 8), else 0, p/2, p-1. */
static int roots_of(int p, int coll, int *roots)
{
    if (!st_coll_rooted(coll))
        return roots[0] = 0, 1;
    if (p <= (full_matrix ? 8 : 3)) {
        for (int r = 0; r < p; r++)
            roots[r] = r;
        return p;
    }
    roots[0] = 0, roots[1] = p / 2, roots[2] = p - 1;
    return 3;
}

/* Cases of one (p, collective); in-place, offset and root rotate through the sample so that each is covered
 * without the product. */
static int make_cases(int p, int coll, coll_case *out)
{
    size_t counts[] = {0, 1, 2, (size_t)p - 1, (size_t)p + 1, 1000, 65537};
    int n = 0, roots[64], nroots = roots_of(p, coll, roots);
    for (int dt = 0; dt < STITCH_DTYPE_COUNT; dt++)
        for (int op = 0; op < (moves_only(coll) ? 1 : STITCH_OP_COUNT); op++)
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
                for (int v = 0; v < 4; v++)
                    for (int ri = 0; ri < nroots; ri++) {
                        if (!full_matrix && v != (int)(ci * 3 + (size_t)dt + (size_t)coll + (size_t)op) % 4)
                            continue;
                        if (!in_sample(coll, dt, op, counts[ci], (int)ci))
                            continue;
                        if (!full_matrix && ri != (int)((ci + (size_t)dt + (size_t)v) % (size_t)nroots))
                            continue;
                        if ((v & 1) && (coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V))
                            continue; /* no in-place form */
                        int inplace = v & 1 ? (coll == STITCH_REDUCE_SCATTER && (ci & 1) ? 2 : 1) : 0;
                        out[n++] = (coll_case){coll, dt, op, counts[ci], inplace, v >> 1, roots[ri]};
                    }
    return n;
}

static int is_ahc(const char *algo)
{
    return strcmp(algo, "ahc") == 0 || strcmp(algo, "ahc_align") == 0 || strcmp(algo, "ahc_broke") == 0;
}

/* Pipeline and hier need groups: run them with a grouping of p where there is one (and one group otherwise); the
 * AHC family with unequal groups, a group of 1 among them. */
static const char *grouping_of(const char *algo, int p)
{
    if (is_ahc(algo))
        return p == 2 ? "1,1" : p == 3 ? "1,2" : p == 4 ? "1,3" : p == 5 ? "2,3" : p == 6 ? "1,2,3" : p == 7 ? "3,4"
             : p == 8 ? "3,5" : p == 12 ? "7,5" : p == 13 ? "7,5,1" : p == 16 ? "7,5,4" : NULL;
    if (strcmp(algo, "pipeline") != 0 && strcmp(algo, "hier") != 0)
        return NULL;
    return p == 4 ? "2x2" : p == 6 ? "3x2" : p == 8 ? "4x2" : p == 12 ? "3x4" : p == 16 ? "4x4" : NULL;
}

/* Roles (algos.dsl: level0, level1, ahc_intra, ahc_inter) only choose another algorithm of the catalogue, which the
 * matrix runs anyway: the default sample leaves them to the composites that use them, --full runs them too. */
static int is_role(const char *algo)
{
    return strcmp(algo, "level0") == 0 || strcmp(algo, "level1") == 0 || strcmp(algo, "ahc_intra") == 0 ||
           strcmp(algo, "ahc_inter") == 0;
}

/* Every algorithm of every collective (the catalogue need not have each name for each collective). */
static void run_matrix(const int *ps, int nps)
{
    coll_case *cases = malloc(sizeof *cases * 40000);
    CHECK(cases, "out of memory");
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++) {
        const char *names[32];
        int nalgos = stitch_algorithms(coll, names, 32);
        CHECK(nalgos > 0, "no algorithm for %s in the catalogue", stitch_coll_name(coll));
        for (int a = 0; a < nalgos && a < 32; a++)
            for (int i = 0; i < nps && (full_matrix || !is_role(names[a])); i++) {
                char spec[128];
                snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), names[a]);
                int n = make_cases(ps[i], coll, cases);
                double t0 = st_now();
                run_team_groups(spec, grouping_of(names[a], ps[i]), ps[i], cases, n);
                printf("# %s p=%d: %d cases in %.2f s\n", spec, ps[i], n, st_now() - t0);
            }
    }
    free(cases);
}

static void test_matrix_small_p(void)
{
    static const int ps[] = {1, 2, 3, 4, 6};
    run_matrix(ps, 5);
}

static void test_matrix_large_p(void)
{
    static const int full[] = {5, 7, 8, 12, 13, 16}, sample[] = {5, 8};
    if (full_matrix)
        run_matrix(full, 6);
    else
        run_matrix(sample, 2);
}

/* Pipeline with several groupings of the same p, every collective it implements. */
static void test_pipeline_groups(void)
{
    static const struct { int p; const char *groups; } g[] = {{4, "2x2"}, {6, "3x2"}, {6, "2x3"}, {8, "4x2"},
                                                              {8, "2x4"}, {6, "1x6"}, {6, "6x1"}};
    coll_case *cases = malloc(sizeof *cases * 40000);
    CHECK(cases, "out of memory");
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++)
        for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
            char spec[128];
            snprintf(spec, sizeof spec, "%s=pipeline", stitch_coll_name(coll));
            const char *names[32];
            int has = 0, nalgos = stitch_algorithms(coll, names, 32);
            for (int a = 0; a < nalgos && a < 32; a++)
                has |= strcmp(names[a], "pipeline") == 0;
            if (has)
                run_team_groups(spec, g[i].groups, g[i].p, cases, make_cases(g[i].p, coll, cases));
        }
    free(cases);
}

/* AHC, AHC_BROKE and the hierarchical decomposition on unequal groups (a group of 1 among them) and equal ones,
 * every collective they implement. */
static void test_ahc_groups(void)
{
    /* the matrix already runs them on 1,1 1,2 1,3 1,2,3 (AHC) and 2x2 3x2 (hier); `full`: only with --full */
    static const struct { int p; const char *groups; int full; } g[] = {{5, "2,3", 0}, {5, "1,4", 0}, {15, "7,5,3", 0},
                                                                        {6, "3x2", 1}, {7, "2,2,3", 1}, {9, "4,5", 1}};
    static const char *const algos[] = {"ahc", "ahc_align", "ahc_broke", "hier"};
    coll_case *cases = malloc(sizeof *cases * 40000);
    CHECK(cases, "out of memory");
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++)
        for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
            for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++) {
                const char *names[32];
                int has = 0, nalgos = stitch_algorithms(coll, names, 32);
                for (int a = 0; a < nalgos && a < 32; a++)
                    has |= strcmp(names[a], algos[k]) == 0;
                if (!has || (!full_matrix && (g[i].full || (g[i].p > 9 && strcmp(algos[k], "ahc") != 0))))
                    continue; /* by default p = 15 for ahc only (its rule picks the aligned form for 7,5,3) */
                char spec[128];
                snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), algos[k]);
                double t0 = st_now();
                int n = make_cases(g[i].p, coll, cases);
                run_team_groups(spec, g[i].groups, g[i].p, cases, n);
                printf("# %s groups %s: %d cases in %.2f s\n", spec, g[i].groups, n, st_now() - t0);
            }
    free(cases);
}

/* Tiny segments force the pipelined path (many segments, uneven last one) for every algorithm. */
static void test_segmented(void)
{
    static const coll_case cases[] = {
        {STITCH_ALL_REDUCE, STITCH_FP32, STITCH_SUM, 10007, 0, 1, 0},
        {STITCH_ALL_REDUCE, STITCH_BF16, STITCH_MAX, 10007, 1, 0, 0},
        {STITCH_REDUCE_SCATTER, STITCH_INT32, STITCH_PROD, 3001, 0, 0, 0},
        {STITCH_REDUCE_SCATTER, STITCH_FP64, STITCH_SUM, 3001, 2, 1, 0},
        {STITCH_REDUCE_SCATTER, STITCH_FP16, STITCH_SUM, 3001, 1, 0, 0},
        {STITCH_ALL_GATHER, STITCH_INT16, STITCH_SUM, 3001, 1, 1, 0},
        {STITCH_ALL_GATHER, STITCH_FP16, STITCH_SUM, 3001, 0, 0, 0},
    };
    setenv("STITCH_SEGMENT_BYTES", "4096", 1);
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const char *names[32];
        int nalgos = stitch_algorithms(cases[i].coll, names, 32);
        for (int a = 0; a < nalgos && a < 32; a++)
            for (int p = 1; p <= 6; p += (p < 3 ? 1 : 3)) {
                char spec[128];
                snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(cases[i].coll), names[a]);
                run_team(spec, p, &cases[i], 1);
            }
    }
}

/* Ranks may differ in being in place or not (each rank's buffers are its own business). */
static void test_mixed_in_place(void)
{
    static const coll_case cases[] = {
        {STITCH_ALL_REDUCE, STITCH_FP32, STITCH_SUM, 1000, 3, 0, 0},
        {STITCH_ALL_REDUCE, STITCH_INT32, STITCH_MAX, 65537, 3, 1, 0},
        {STITCH_REDUCE_SCATTER, STITCH_FP64, STITCH_PROD, 1000, 3, 1, 0},
        {STITCH_ALL_GATHER, STITCH_INT8, STITCH_SUM, 1001, 3, 0, 0},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const char *names[32];
        int nalgos = stitch_algorithms(cases[i].coll, names, 32);
        for (int a = 0; a < nalgos && a < 32; a++) {
            char spec[128];
            snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(cases[i].coll), names[a]);
            run_team(spec, 5, &cases[i], 1);
        }
    }
}

/* Inputs whose sum depends on the order of additions: every rank and every run must still get the same bits. */
enum { DET_P = 5, DET_N = 10007, DET_RUNS = 3 };
static stitch_comm_t *det_comms[DET_P];
static float det_out[DET_RUNS][DET_P][DET_N];

static void det_main(void *ctx, int r)
{
    (void)ctx;
    static _Thread_local float in[DET_N];
    det_input(r, DET_N, in);
    for (int run = 0; run < DET_RUNS; run++) {
        stitch_status_t st = stitch_all_reduce(in, det_out[run][r], DET_N, STITCH_FP32, STITCH_SUM, det_comms[r]);
        CHECK(st == STITCH_OK, "rank %d: %s", r, stitch_comm_last_error(det_comms[r]));
    }
}

static void test_deterministic(void)
{
    const char *names[32];
    int nalgos = stitch_algorithms(STITCH_ALL_REDUCE, names, 32);
    for (int a = 0; a < nalgos && a < 32; a++) {
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        char err[512];
        cfg.algo = names[a];
        CHECK(stitch_comm_init_threads(DET_P, &cfg, det_comms, err, sizeof err) == STITCH_OK, "%s", err);
        st_run_ranks(DET_P, det_main, NULL);
        for (int r = 0; r < DET_P; r++)
            stitch_comm_destroy(det_comms[r]);
        for (int run = 0; run < DET_RUNS; run++)
            for (int r = 0; r < DET_P; r++)
                CHECK(memcmp(det_out[run][r], det_out[0][0], sizeof det_out[0][0]) == 0,
                      "%s: run %d rank %d differs from run 0 rank 0", names[a], run, r);
    }
}

/* A different algorithm per collective, chosen through the environment, on one set of communicators. */
static void test_mixed_algorithms(void)
{
    setenv("STITCH_ALGO", "all_reduce=mesh,reduce_scatter=rhd,all_gather=ring", 1);
    coll_case cases[] = {
        {STITCH_ALL_REDUCE, STITCH_FP32, STITCH_SUM, 1000, 0, 0, 0},
        {STITCH_REDUCE_SCATTER, STITCH_FP32, STITCH_SUM, 1000, 0, 0, 0},
        {STITCH_ALL_GATHER, STITCH_FP32, STITCH_SUM, 1000, 0, 0, 0},
    };
    run_team(NULL, 4, cases, 3);
}

/* p = 16 threads on 2 cores: the waits must yield and sleep, not spin. Only the collective is timed. */
enum { OVER_P = 16, OVER_N = 1 << 20 };
static stitch_comm_t *over_comms[OVER_P];
static double over_time;

static void over_main(void *ctx, int r)
{
    (void)ctx;
    float *v = malloc(sizeof *v * OVER_N);
    CHECK(v, "out of memory");
    for (int i = 0; i < OVER_N; i++)
        v[i] = (float)(r + (i & 7));
    double t0 = st_now();
    stitch_status_t st = stitch_all_reduce(v, v, OVER_N, STITCH_FP32, STITCH_SUM, over_comms[r]);
    double dt = st_now() - t0;
    CHECK(st == STITCH_OK, "rank %d: %s", r, stitch_comm_last_error(over_comms[r]));
    for (int i = 0; i < OVER_N; i++)
        CHECK(v[i] == (float)(OVER_P * (OVER_P - 1) / 2 + OVER_P * (i & 7)), "rank %d element %d is %g", r, i, v[i]);
    if (r == 0)
        over_time = dt;
    free(v);
}

static void test_oversubscribed(void)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = "ring";
    CHECK(stitch_comm_init_threads(OVER_P, &cfg, over_comms, err, sizeof err) == STITCH_OK, "%s", err);
    st_run_ranks(OVER_P, over_main, NULL);
    for (int r = 0; r < OVER_P; r++)
        stitch_comm_destroy(over_comms[r]);
    printf("# p=16 ring all_reduce of 1M fp32 on rank 0: %.3f s\n", over_time);
    CHECK(over_time < 3.0, "took %.2f s", over_time);
}

static const st_test tests[] = {
    {"matrix_small_p", test_matrix_small_p, 600},
    {"matrix_large_p", test_matrix_large_p, 1200},
    {"pipeline_groups", test_pipeline_groups, 300},
    {"ahc_groups", test_ahc_groups, 300},
    {"segmented", test_segmented, 60},
    {"mixed_algorithms", test_mixed_algorithms, 30},
    {"mixed_in_place", test_mixed_in_place, 60},
    {"deterministic", test_deterministic, 60},
    {"oversubscribed", test_oversubscribed, 60},
};

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--full") == 0)
            full_matrix = 1;
    return st_run_tests(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
