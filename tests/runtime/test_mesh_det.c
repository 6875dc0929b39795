/* test_mesh_det.c - mesh_det's results are bit-identical to its spec's reduction tree.
 *
 * The deterministic Mesh (algos.dsl) parks every peer's copy of my unit in a scratch slot, slot k holding the copy
 * from rank r - k, and reduces the p copies locally in a fixed tree: A[0] = mine, A[k] = the copy from r - k;
 * P = 2^floor(log2 p); A[i] += A[i + P] for i < p - P; then for h = P/2 .. 1, A[i] += A[i + h] for i < h. The
 * result A[0] is a function of the inputs alone, never of timing. This test computes that tree in plain C for
 * random fp32 inputs (magnitudes spread over many binades, so a different association almost surely changes the
 * bits) and demands bit equality, for reduce_scatter and all_reduce (whose unit u is reduced at rank u, then
 * copied everywhere), in and out of place, one segment and many (STITCH_SEGMENT_BYTES).
 */
#include <pthread.h>
#include <stdint.h>

#include "runner.h"
#include "stitch.h"

typedef struct team {
    int p, inplace;
    stitch_coll_t coll;
    size_t n; /* all_reduce: the vector; reduce_scatter: each rank's block */
    stitch_comm_t **comms;
    float **in, **out;
    stitch_status_t st[64];
} team;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A value with a random sign, mantissa and an exponent in 2^-20 .. 2^20. */
static float rnd_float(void)
{
    uint64_t x = rnd();
    uint32_t bits = (uint32_t)(x & 0x807fffffu) | (uint32_t)(127 - 20 + (x >> 32) % 41) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The spec's tree over A[0 .. p-1]; A is destroyed. */
static float tree(float *A, int p)
{
    int P = 1;
    while (P * 2 <= p)
        P *= 2;
    for (int i = 0; i < p - P; i++)
        A[i] += A[i + P];
    for (int h = P / 2; h >= 1; h /= 2)
        for (int i = 0; i < h; i++)
            A[i] += A[i + h];
    return A[0];
}

static void member_main(void *ctx, int r)
{
    team *t = ctx;
    const float *send = t->inplace ? t->out[r] : t->in[r];
    if (t->coll == STITCH_ALL_REDUCE)
        t->st[r] = stitch_all_reduce(send, t->out[r], t->n, STITCH_FP32, STITCH_SUM, t->comms[r]);
    else if (t->inplace) /* in place: recvbuf is this rank's block of sendbuf */
        t->st[r] = stitch_reduce_scatter(send, t->out[r] + (size_t)r * t->n, t->n, STITCH_FP32, STITCH_SUM,
                                         t->comms[r]);
    else
        t->st[r] = stitch_reduce_scatter(send, t->out[r], t->n, STITCH_FP32, STITCH_SUM, t->comms[r]);
}

/* Elements of all_reduce's vector per segment (exec.c cuts a vector longer than STITCH_SEGMENT_BYTES into
 * segments and runs the schedule once per segment); 0: one segment. */
static size_t seg_elems;

/* The rank that reduces element i of an n-element all_reduce: in each segment of m elements, unit u covers
 * [m*u/p, m*(u+1)/p) (st_sched.h). */
static int owner(size_t n, int p, size_t i)
{
    if (seg_elems && n > seg_elems) {
        size_t k = i / seg_elems, m = n - k * seg_elems;
        n = m < seg_elems ? m : seg_elems;
        i -= k * seg_elems;
    }
    int u = (int)(i * (size_t)p / n);
    while (u + 1 < p && n * (size_t)(u + 1) / (size_t)p <= i)
        u++;
    while (u > 0 && n * (size_t)u / (size_t)p > i)
        u--;
    return u;
}

static void run(stitch_coll_t coll, int p, size_t n, int inplace)
{
    team t = {.p = p, .inplace = inplace, .coll = coll, .n = n};
    size_t len = coll == STITCH_ALL_REDUCE ? n : n * (size_t)p; /* elements of each rank's input */
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = "mesh_det";
    cfg.timeout_ms = 20000;
    t.comms = calloc((size_t)p, sizeof *t.comms);
    t.in = calloc((size_t)p, sizeof *t.in);
    t.out = calloc((size_t)p, sizeof *t.out);
    CHECK(t.comms && t.in && t.out, "out of memory");
    CHECK(stitch_comm_init_threads(p, &cfg, t.comms, err, sizeof err) == STITCH_OK, "init p=%d: %s", p, err);
    for (int r = 0; r < p; r++) {
        t.in[r] = malloc(len * sizeof(float) + 1);
        t.out[r] = malloc(len * sizeof(float) + 1);
        CHECK(t.in[r] && t.out[r], "out of memory");
        for (size_t i = 0; i < len; i++)
            t.in[r][i] = rnd_float();
        memcpy(t.out[r], t.in[r], len * sizeof(float));
    }
    st_run_ranks(p, member_main, &t);
    for (int r = 0; r < p; r++)
        CHECK(t.st[r] == STITCH_OK, "%s p=%d n=%zu rank %d: %s", stitch_coll_name(coll), p, n, r,
              stitch_comm_last_error(t.comms[r]));
    float A[64];
    for (int r = 0; r < p; r++) {
        const float *got = coll == STITCH_REDUCE_SCATTER && inplace ? t.out[r] + (size_t)r * n : t.out[r];
        for (size_t i = 0; i < n; i++) {
            int x = coll == STITCH_ALL_REDUCE ? owner(n, p, i) : r; /* the rank that reduced element i */
            size_t at = coll == STITCH_ALL_REDUCE ? i : (size_t)r * n + i;
            for (int k = 0; k < p; k++)
                A[k] = t.in[(x - k + p) % p][at];
            float want = tree(A, p);
            uint32_t wb, gb;
            memcpy(&wb, &want, 4);
            memcpy(&gb, &got[i], 4);
            CHECK(wb == gb, "%s p=%d n=%zu %s: rank %d element %zu is %a (0x%08x), the tree gives %a (0x%08x)",
                  stitch_coll_name(coll), p, n, inplace ? "in place" : "out of place", r, i, (double)got[i], gb,
                  (double)want, wb);
        }
    }
    for (int r = 0; r < p; r++) {
        stitch_comm_destroy(t.comms[r]);
        free(t.in[r]);
        free(t.out[r]);
    }
    free(t.comms);
    free(t.in);
    free(t.out);
}

static void sweep(void)
{
    static const int ps[] = {3, 5, 6, 8};
    static const size_t ns[] = {1, 7, 1000, 40000};
    for (size_t a = 0; a < sizeof ps / sizeof ps[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
            for (int inplace = 0; inplace < 2; inplace++) {
                run(STITCH_REDUCE_SCATTER, ps[a], ns[b], inplace);
                run(STITCH_ALL_REDUCE, ps[a], ns[b], inplace);
            }
}

static void test_tree_order(void)
{
    sweep();
}

/* Many segments: slots are reused per segment, the last one shorter. */
static void test_tree_order_segments(void)
{
    setenv("STITCH_SEGMENT_BYTES", "4096", 1);
    seg_elems = 4096 / sizeof(float);
    sweep();
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"tree_order", test_tree_order, 120},
        {"tree_order_segments", test_tree_order_segments, 120},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
