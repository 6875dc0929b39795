/* test_collectives.c - every collective of stitch.h with data, for every algorithm of the catalogue.
 *
 * A team of p threads runs a list of cases on one set of communicators (threads are made once per team, not per
 * case). Inputs encode (rank, index) with values whose reduction is exact in any order (nccl-tests' trick):
 * small integers for sum, +-1 and 2 for prod, any small integers for max/min, so the expected result is known
 * exactly for every dtype, and every element of every rank's output is checked. Data that only moves (broadcast,
 * scatter, gather, all_to_all(_v), all_gather) uses the max/min values of a code naming its source (rank, or
 * (from, to) pair) and index. Outputs that must be the same on every rank (all_reduce, all_gather, broadcast)
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

#include "half.h"
#include "steptab.h"
#include "runner.h"
#include "stitch.h"

static int full_matrix;

typedef struct coll_case {
    int coll, dtype, op;
    size_t count;
    int inplace; /* 0 out of place; 1 the first in-place form; 2 reduce_scatter's recv = send + rank * count;
                  * 3 odd ranks in place (form 1), even ranks out of place */
    int shift;   /* buffers start this many elements after a 64-byte boundary */
    int root;    /* rooted collectives */
} coll_case;

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

typedef struct member {
    team *t;
    int rank;
} member;

/* ---- values ---------------------------------------------------------------------------------------------- */

static int is_signed(int dt)
{
    return dt != STITCH_UINT8;
}

/* Input element i of rank r for a case with reduction op (all_gather uses the max/min values). */
static int64_t value(int dt, int op, int r, size_t i)
{
    uint64_t h = (uint64_t)r * 131u + (uint64_t)i * 71u + (uint64_t)(i >> 7) * 13u;
    switch (op) {
    case STITCH_SUM: return is_signed(dt) ? (int64_t)(h % 9) - 4 : (int64_t)(h % 9);
    case STITCH_PROD:
        if (h % 11 == 0)
            return 2;
        return is_signed(dt) && (h / 11) % 3 == 0 ? -1 : 1;
    default: return is_signed(dt) ? (int64_t)(h % 201) - 100 : (int64_t)(h % 201);
    }
}

static void store(int dt, void *buf, size_t i, int64_t v)
{
    switch (dt) {
    case STITCH_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case STITCH_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case STITCH_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case STITCH_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case STITCH_INT64: ((int64_t *)buf)[i] = v; break;
    case STITCH_FP16: ((uint16_t *)buf)[i] = st_f32_to_fp16((float)v); break;
    case STITCH_BF16: ((uint16_t *)buf)[i] = st_f32_to_bf16((float)v); break;
    case STITCH_FP32: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = (double)v; break;
    }
}

static double load(int dt, const void *buf, size_t i)
{
    switch (dt) {
    case STITCH_INT8: return ((const int8_t *)buf)[i];
    case STITCH_UINT8: return ((const uint8_t *)buf)[i];
    case STITCH_INT16: return ((const int16_t *)buf)[i];
    case STITCH_INT32: return ((const int32_t *)buf)[i];
    case STITCH_INT64: return (double)((const int64_t *)buf)[i];
    case STITCH_FP16: return st_fp16_to_f32(((const uint16_t *)buf)[i]);
    case STITCH_BF16: return st_bf16_to_f32(((const uint16_t *)buf)[i]);
    case STITCH_FP32: return ((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

/* The reduction over ranks of element i, wrapped to the type as the kernels wrap. */
static double expected(int dt, int op, int p, size_t i)
{
    int64_t acc = value(dt, op, 0, i);
    for (int q = 1; q < p; q++) {
        int64_t v = value(dt, op, q, i);
        acc = op == STITCH_SUM ? acc + v : op == STITCH_PROD ? acc * v : op == STITCH_MAX ? (v > acc ? v : acc)
                                                                                         : (v < acc ? v : acc);
    }
    unsigned char tmp[8];
    store(dt, tmp, 0, acc);
    return load(dt, tmp, 0);
}

/* ---- one case on one rank -------------------------------------------------------------------------------- */

typedef struct bufs {
    unsigned char *a, *b; /* 64-byte aligned, big enough for every case of the team */
} bufs;

static void fail(team *t, const coll_case *c, int rank, const char *what)
{
    if (atomic_exchange(&t->failed, 1) == 0)
        snprintf(t->msg, sizeof t->msg, "%s%s%s %s %s %s p=%d count=%zu root=%d inplace=%d shift=%d rank %d: %s",
                 t->algo, t->groups ? " groups=" : "", t->groups ? t->groups : "", stitch_coll_name(c->coll),
                 stitch_dtype_name(c->dtype), stitch_op_name(c->op), t->p, c->count, c->root, c->inplace, c->shift,
                 rank, what);
}

static int moves_only(int coll)
{
    return coll != STITCH_ALL_REDUCE && coll != STITCH_REDUCE_SCATTER && coll != STITCH_REDUCE;
}

/* The code of data moving from rank `from` to rank `to` (all_to_all), or from rank `from` (the others). */
static int src_code(int coll, int from, int to)
{
    return coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V ? 1000 + from * 64 + to : from;
}

/* all_to_all_v: elements from i to j, and where block j sits in a buffer of p blocks of up to count + 2 elements
 * (reverse order, one element of gap after each). */
static size_t v_count(const coll_case *c, int i, int j)
{
    return (size_t)((i + 2 * j) % 3) + c->count;
}

static size_t v_displ(const coll_case *c, int p, int j)
{
    return (size_t)(p - 1 - j) * (c->count + 3);
}

/* The elements of the input and of the output buffer of rank r. */
static void extents(const coll_case *c, int p, int r, size_t *nin, size_t *nout)
{
    size_t n = c->count, pn = (size_t)p * n;
    int root = r == c->root;
    switch (c->coll) {
    case STITCH_REDUCE_SCATTER: *nin = pn, *nout = n; return;
    case STITCH_ALL_GATHER: *nin = n, *nout = pn; return;
    case STITCH_BROADCAST: *nin = root ? n : 0, *nout = n; return;
    case STITCH_REDUCE: *nin = n, *nout = root ? n : 0; return;
    case STITCH_SCATTER: *nin = root ? pn : 0, *nout = n; return;
    case STITCH_GATHER: *nin = n, *nout = root ? pn : 0; return;
    case STITCH_ALL_TO_ALL: *nin = *nout = pn; return;
    case STITCH_ALL_TO_ALL_V: *nin = *nout = (size_t)p * (n + 3); return;
    default: *nin = *nout = n; return;
    }
}

/* The input value at input index i of rank r. */
static int64_t in_value(const coll_case *c, int p, int r, size_t i)
{
    size_t n = c->count;
    if (!moves_only(c->coll))
        return value(c->dtype, c->op, r, i);
    if (c->coll == STITCH_SCATTER) /* block b goes to rank b */
        return value(c->dtype, STITCH_MAX, src_code(c->coll, (int)(i / n), 0), i % n);
    if (c->coll == STITCH_ALL_TO_ALL)
        return value(c->dtype, STITCH_MAX, src_code(c->coll, r, (int)(i / n)), i % n);
    if (c->coll == STITCH_ALL_TO_ALL_V)
        for (int j = 0; j < p; j++)
            if (i >= v_displ(c, p, j) && i < v_displ(c, p, j) + v_count(c, r, j))
                return value(c->dtype, STITCH_MAX, src_code(c->coll, r, j), i - v_displ(c, p, j));
    return value(c->dtype, STITCH_MAX, r, i);
}

/* Fill the input and choose the buffers as the case says. Buffers a rank does not use are NULL out of place. */
static void setup(const coll_case *c, int p, int r, bufs *m, void **send, void **recv)
{
    size_t es = stitch_dtype_size(c->dtype), n = c->count, sh = (size_t)c->shift * es, nin, nout;
    int inplace = c->inplace == 3 ? r % 2 : c->inplace, root = r == c->root;
    unsigned char *in = m->a + sh, *out = m->b + sh;
    extents(c, p, r, &nin, &nout);
    memset(m->b, 0xab, (size_t)p * (n + 3) * es + sh);
    if (inplace && (c->coll == STITCH_ALL_GATHER || (c->coll == STITCH_GATHER && root)))
        in = out + (size_t)r * n * es;
    if (inplace && (c->coll == STITCH_BROADCAST || c->coll == STITCH_REDUCE) && root)
        in = out;
    if (inplace && c->coll == STITCH_SCATTER && root)
        in = out, out = in + (size_t)r * n * es;
    for (size_t i = 0; i < nin; i++)
        store(c->dtype, in, i, in_value(c, p, r, i));
    *send = nin || inplace ? in : NULL;
    *recv = nout || inplace ? out : NULL;
    if (inplace && c->coll == STITCH_ALL_REDUCE)
        *recv = in;
    if (inplace && c->coll == STITCH_REDUCE_SCATTER)
        *recv = inplace == 1 ? in : in + (size_t)r * n * es;
}

/* The expected value at output index i of rank r; *skip for gaps that must stay untouched (0xab bytes). */
static double out_value(const coll_case *c, int p, int r, size_t i, int *skip)
{
    size_t n = c->count;
    *skip = 0;
    switch (c->coll) {
    case STITCH_ALL_REDUCE:
    case STITCH_REDUCE: return expected(c->dtype, c->op, p, i);
    case STITCH_REDUCE_SCATTER: return expected(c->dtype, c->op, p, (size_t)r * n + i);
    case STITCH_BROADCAST: return (double)value(c->dtype, STITCH_MAX, c->root, i);
    case STITCH_SCATTER: return (double)value(c->dtype, STITCH_MAX, r, i);
    case STITCH_ALL_TO_ALL: return (double)value(c->dtype, STITCH_MAX, src_code(c->coll, (int)(i / n), r), i % n);
    case STITCH_ALL_TO_ALL_V: /* from rank q at rdispls[q] = q * (n + 3) */
        if (i % (n + 3) >= v_count(c, (int)(i / (n + 3)), r))
            return *skip = 1, 0;
        return (double)value(c->dtype, STITCH_MAX, src_code(c->coll, (int)(i / (n + 3)), r), i % (n + 3));
    default: return (double)value(c->dtype, STITCH_MAX, (int)(i / n), i % n); /* all_gather, gather */
    }
}

static int verify(const coll_case *c, int p, int r, const void *out, size_t *bad)
{
    size_t nin, nout, es = stitch_dtype_size(c->dtype);
    extents(c, p, r, &nin, &nout);
    for (size_t i = 0; i < nout; i++) {
        int skip;
        double want = out_value(c, p, r, i, &skip);
        unsigned char untouched[8];
        memset(untouched, 0xab, sizeof untouched);
        if (skip ? memcmp((const char *)out + i * es, untouched, es) != 0 : load(c->dtype, out, i) != want)
            return *bad = i, 0;
    }
    return 1;
}

static stitch_status_t call(const coll_case *c, int p, const void *send, void *recv, stitch_comm_t *comm)
{
    size_t sc[64], sd[64], rc[64], rd[64];
    int me = stitch_comm_rank(comm);
    switch (c->coll) {
    case STITCH_ALL_REDUCE: return stitch_all_reduce(send, recv, c->count, c->dtype, c->op, comm);
    case STITCH_REDUCE_SCATTER: return stitch_reduce_scatter(send, recv, c->count, c->dtype, c->op, comm);
    case STITCH_ALL_GATHER: return stitch_all_gather(send, recv, c->count, c->dtype, comm);
    case STITCH_BROADCAST: return stitch_broadcast(send, recv, c->count, c->dtype, c->root, comm);
    case STITCH_REDUCE: return stitch_reduce(send, recv, c->count, c->dtype, c->op, c->root, comm);
    case STITCH_SCATTER: return stitch_scatter(send, recv, c->count, c->dtype, c->root, comm);
    case STITCH_GATHER: return stitch_gather(send, recv, c->count, c->dtype, c->root, comm);
    case STITCH_ALL_TO_ALL: return stitch_all_to_all(send, recv, c->count, c->dtype, comm);
    default:
        for (int q = 0; q < p; q++)
            sc[q] = v_count(c, me, q), sd[q] = v_displ(c, p, q), rc[q] = v_count(c, q, me), rd[q] = (size_t)q * (c->count + 3);
        return stitch_all_to_all_v(send, sc, sd, recv, rc, rd, c->dtype, comm);
    }
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
    setup(c, t->p, r, m, &send, &recv);
    stitch_status_t st = call(c, t->p, send, recv, t->comms[r]);
    size_t bad, nin, nout;
    extents(c, t->p, r, &nin, &nout);
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

static void *member_main(void *arg)
{
    member *me = arg;
    team *t = me->t;
    size_t most = 0;
    for (int i = 0; i < t->ncases; i++) {
        size_t need = (size_t)t->p * (t->cases[i].count + 3) * stitch_dtype_size(t->cases[i].dtype) + 64;
        most = need > most ? need : most;
    }
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    CHECK(m.a && m.b, "out of memory");
    for (int i = 0; i < t->ncases; i++)
        run_case(t, me->rank, &t->cases[i], &m);
    free(m.a);
    free(m.b);
    return NULL;
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
    pthread_t th[64];
    member mem[64];
    for (int r = 0; r < p; r++) {
        mem[r] = (member){&t, r};
        CHECK(pthread_create(&th[r], NULL, member_main, &mem[r]) == 0, "pthread_create");
    }
    for (int r = 0; r < p; r++)
        pthread_join(th[r], NULL);
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

/* Pipeline needs groups: run it with a grouping of p where there is one (and one group otherwise). */
static const char *grouping_of(const char *algo, int p)
{
    if (strcmp(algo, "pipeline") != 0)
        return NULL;
    return p == 4 ? "2x2" : p == 6 ? "3x2" : p == 8 ? "4x2" : p == 12 ? "3x4" : p == 16 ? "4x4" : NULL;
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
            for (int i = 0; i < nps; i++) {
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

static void *det_main(void *arg)
{
    int r = (int)(intptr_t)arg;
    static _Thread_local float in[DET_N];
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
    for (int i = 0; i < DET_N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 1000.0 - 500.0);
    }
    for (int run = 0; run < DET_RUNS; run++) {
        stitch_status_t st = stitch_all_reduce(in, det_out[run][r], DET_N, STITCH_FP32, STITCH_SUM, det_comms[r]);
        CHECK(st == STITCH_OK, "rank %d: %s", r, stitch_comm_last_error(det_comms[r]));
    }
    return NULL;
}

static void test_deterministic(void)
{
    const char *names[32];
    int nalgos = stitch_algorithms(STITCH_ALL_REDUCE, names, 32);
    for (int a = 0; a < nalgos && a < 32; a++) {
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        char err[512];
        pthread_t th[DET_P];
        cfg.algo = names[a];
        CHECK(stitch_comm_init_threads(DET_P, &cfg, det_comms, err, sizeof err) == STITCH_OK, "%s", err);
        for (int r = 0; r < DET_P; r++)
            CHECK(pthread_create(&th[r], NULL, det_main, (void *)(intptr_t)r) == 0, "pthread_create");
        for (int r = 0; r < DET_P; r++)
            pthread_join(th[r], NULL);
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

static void *over_main(void *arg)
{
    int r = (int)(intptr_t)arg;
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
    return NULL;
}

static void test_oversubscribed(void)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = "ring";
    CHECK(stitch_comm_init_threads(OVER_P, &cfg, over_comms, err, sizeof err) == STITCH_OK, "%s", err);
    pthread_t th[OVER_P];
    for (int r = 0; r < OVER_P; r++)
        CHECK(pthread_create(&th[r], NULL, over_main, (void *)(intptr_t)r) == 0, "pthread_create");
    for (int r = 0; r < OVER_P; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < OVER_P; r++)
        stitch_comm_destroy(over_comms[r]);
    printf("# p=16 ring all_reduce of 1M fp32 on rank 0: %.3f s\n", over_time);
    CHECK(over_time < 3.0, "took %.2f s", over_time);
}

static const st_test tests[] = {
    {"matrix_small_p", test_matrix_small_p, 600},
    {"matrix_large_p", test_matrix_large_p, 1200},
    {"pipeline_groups", test_pipeline_groups, 300},
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
