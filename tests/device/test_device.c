/* test_device.c - device communicators with data: every algorithm x collective against the exact oracle of
 * coll_data.h, on the device layer's entry given by --backend (host: the interpreter on host threads, what CI runs;
 * cuda: one GPU, every rank on it).
 *
 * Buffers are prepared on the host as test_collectives.c prepares them, then copied to the rank's device memory at
 * the same offsets (in-place forms keep their relation), the call is enqueued, the rank synchronizes its stream
 * and copies the output back to check it. Exit status 77 (ctest's SKIP_RETURN_CODE) when the backend has no
 * device here, with the reason.
 *
 * Tests: matrix (p = 1..8, counts 0, 1, 7, 13, dtypes and ops rotating, roots and in-place forms rotating),
 * large (64 MB per rank, every algorithm x collective at p = 8, fp32; cuda only unless asked), identical (the
 * device engine's bits equal the threads engine's for every reducing algorithm, order-dependent fp32 and bf16
 * data), errors (a host pointer on cuda; all_to_all_v refused; a peer that never calls: the timeout is reported
 * by the next call and by stitch_comm_get_async_error), small and small_p1 (a few cases up to 100003 elements,
 * for compute-sanitizer; small_p1 found reduce_scatter's final copy racing the last segment's copies between
 * channels).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "coll_data.h"
#include "runner.h"
#include "st_steptab.h"
#include "stitch.h"

#ifdef STITCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static const char *backend = "host";

/* ---- memory of the backend ---------------------------------------------------------------------------------- */

static int on_cuda(void)
{
    return strcmp(backend, "cuda") == 0;
}

static void *dev_alloc(size_t bytes)
{
#ifdef STITCH_HAVE_CUDA
    if (on_cuda()) {
        void *p = NULL;
        CHECK(cudaMalloc(&p, bytes) == cudaSuccess, "cudaMalloc %zu", bytes);
        return p;
    }
#endif
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

static void dev_free(void *p)
{
#ifdef STITCH_HAVE_CUDA
    if (on_cuda()) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

static void to_dev(void *dst, const void *src, size_t bytes)
{
#ifdef STITCH_HAVE_CUDA
    if (on_cuda()) {
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy to device");
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

static void from_dev(void *dst, const void *src, size_t bytes)
{
#ifdef STITCH_HAVE_CUDA
    if (on_cuda()) {
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy from device");
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

/* ---- a team of ranks running cases -------------------------------------------------------------------------- */

typedef struct team {
    int p;
    const char *algo;
    stitch_comm_t **comms;
    const coll_case *cases;
    int ncases;
    atomic_int failed;
    char msg[700];
} team;

static void fail(team *t, const coll_case *c, int rank, const char *what)
{
    if (atomic_exchange(&t->failed, 1) == 0)
        snprintf(t->msg, sizeof t->msg, "%s %s %s %s %s p=%d count=%zu root=%d inplace=%d rank %d: %s", backend, t->algo,
                 stitch_coll_name(c->coll), stitch_dtype_name(c->dtype), stitch_op_name(c->op), t->p, c->count,
                 c->root, c->inplace, rank, what);
}

/* The device address of a host address inside h's buffers of `bytes` each. */
static void *dev_of(void *host, const bufs *h, const bufs *d, size_t bytes)
{
    if (!host)
        return NULL;
    unsigned char *p = host;
    return p >= h->a && p < h->a + bytes ? d->a + (p - h->a) : d->b + (p - h->b);
}

/* Bytes of each of a rank's two buffers a case reaches (setup's layout, in-place forms included). */
static size_t case_bytes(const coll_case *c, int p, int r)
{
    size_t nin, nout, es = stitch_dtype_size(c->dtype);
    extents(c, p, r, &nin, &nout);
    size_t n = nin > nout ? nin : nout, pn = (size_t)p * c->count;
    n = n > pn ? n : pn;
    return (n + (size_t)p * 3 + (size_t)c->shift + 1) * es;
}

static void run_case(team *t, int r, const coll_case *c, bufs *h, bufs *d, size_t most)
{
    size_t bytes = case_bytes(c, t->p, r);
    bytes = bytes < most ? bytes : most;
    void *send, *recv;
    char what[600];
    size_t bad, nin, nout;
    setup(c, t->p, r, h, &send, &recv);
    to_dev(d->a, h->a, bytes);
    to_dev(d->b, h->b, bytes);
    stitch_status_t st = call(c, t->p, dev_of(send, h, d, bytes), dev_of(recv, h, d, bytes), t->comms[r]);
    if (st == STITCH_OK)
        st = stitch_comm_synchronize(t->comms[r]);
    from_dev(h->a, d->a, bytes);
    from_dev(h->b, d->b, bytes);
    extents(c, t->p, r, &nin, &nout);
    if (st != STITCH_OK) {
        snprintf(what, sizeof what, "status %s: %s", stitch_strerror(st), stitch_comm_last_error(t->comms[r]));
        fail(t, c, r, what);
    } else if (!verify(c, t->p, r, recv, &bad)) {
        snprintf(what, sizeof what, "element %zu is %g", bad, load(c->dtype, recv, bad));
        fail(t, c, r, what);
    }
}

static void member_main(void *ctx, int rank)
{
    team *t = ctx;
    size_t most = 0;
    for (int i = 0; i < t->ncases; i++) {
        size_t need = case_bytes(&t->cases[i], t->p, rank) + 64;
        most = need > most ? need : most;
    }
    most = (most + 63) & ~(size_t)63;
    bufs h = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)}, d = {dev_alloc(most), dev_alloc(most)};
    CHECK(h.a && h.b && d.a && d.b, "out of memory");
    for (int i = 0; i < t->ncases && !t->failed; i++)
        run_case(t, rank, &t->cases[i], &h, &d, most);
    free(h.a), free(h.b), dev_free(d.a), dev_free(d.b);
}

static void run_team(const char *spec, const char *groups, int p, const coll_case *cases, int ncases)
{
    team t = {.p = p, .algo = spec, .cases = cases, .ncases = ncases};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = spec;
    cfg.groups = groups;
    cfg.timeout_ms = 60000;
    t.comms = calloc((size_t)p, sizeof *t.comms);
    stitch_status_t st = stitch_comm_init_devices(p, backend, NULL, &cfg, t.comms, err, sizeof err);
    CHECK(st == STITCH_OK, "init %s p=%d: %s", spec, p, err);
    st_run_ranks(p, member_main, &t);
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(t.comms[r]);
    free(t.comms);
    CHECK(!t.failed, "%s", t.msg);
}

/* ---- the matrix --------------------------------------------------------------------------------------------- */

static const char *grouping_of(const char *algo, int p)
{
    if (strncmp(algo, "ahc", 3) == 0)
        return p == 2 ? "1,1" : p == 3 ? "1,2" : p == 4 ? "1,3" : p == 5 ? "2,3" : p == 6 ? "1,2,3" : p == 7 ? "3,4"
             : p == 8 ? "3,5" : NULL;
    if (strcmp(algo, "pipeline") != 0 && strcmp(algo, "hier") != 0)
        return NULL;
    return p == 4 ? "2x2" : p == 6 ? "3x2" : p == 8 ? "4x2" : NULL;
}

static int is_role(const char *algo)
{
    return strcmp(algo, "level0") == 0 || strcmp(algo, "level1") == 0 || strcmp(algo, "ahc_intra") == 0 ||
           strcmp(algo, "ahc_inter") == 0;
}

/* Cases of one (p, collective): every count, the dtype, op, root and in-place form rotating with it. */
static int make_cases(int p, int coll, const size_t *counts, int ncounts, const int *dts, int ndts, coll_case *out)
{
    int n = 0;
    for (int di = 0; di < ndts; di++)
        for (int ci = 0; ci < ncounts; ci++) {
            int k = ci + di + coll, dt = dts[di];
            int op = moves_only(coll) ? STITCH_SUM : k % STITCH_OP_COUNT;
            int inplace = coll == STITCH_ALL_TO_ALL ? 0 : k % 2 ? (coll == STITCH_REDUCE_SCATTER && k % 4 == 3 ? 2 : 1)
                                                                : 0;
            int root = st_coll_rooted(coll) ? (k * 5 + 1) % p : 0;
            out[n++] = (coll_case){coll, dt, op, counts[ci], inplace, k % 3 == 2, root};
        }
    return n;
}

static void run_matrix(const int *ps, int nps, const size_t *counts, int ncounts, const int *dts, int ndts)
{
    coll_case cases[256];
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++) {
        const char *names[32];
        if (coll == STITCH_ALL_TO_ALL_V)
            continue; /* not on devices yet: test_errors checks it is refused */
        int nalgos = stitch_algorithms(coll, names, 32);
        for (int a = 0; a < nalgos && a < 32; a++)
            for (int i = 0; i < nps && !is_role(names[a]); i++) {
                char spec[128];
                snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), names[a]);
                int n = make_cases(ps[i], coll, counts, ncounts, dts, ndts, cases);
                double t0 = st_now();
                run_team(spec, grouping_of(names[a], ps[i]), ps[i], cases, n);
                printf("# %s p=%d: %d cases in %.2f s\n", spec, ps[i], n, st_now() - t0);
                fflush(stdout);
            }
    }
}

static void test_matrix(void)
{
    static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const size_t counts[] = {0, 1, 7, 13};
    static const int host_dts[] = {STITCH_INT8, STITCH_UINT8, STITCH_INT16, STITCH_INT32, STITCH_INT64,
                                   STITCH_FP16, STITCH_BF16, STITCH_FP32, STITCH_FP64};
    static const int cuda_dts[] = {STITCH_FP32, STITCH_FP16, STITCH_BF16, STITCH_INT32};
    if (on_cuda())
        run_matrix(ps, 8, counts, 4, cuda_dts, 4);
    else
        run_matrix(ps, 8, counts, 4, host_dts, 9);
}

/* 64 MB of each rank's vector (count scaled down by p where a rank holds p blocks), fp32 and bf16. */
static void test_large(void)
{
    static const int ps[] = {8};
    static const int dts[] = {STITCH_FP32, STITCH_BF16};
    static const int moves[] = {STITCH_ALL_GATHER, STITCH_REDUCE_SCATTER, STITCH_SCATTER, STITCH_GATHER,
                                STITCH_ALL_TO_ALL};
    coll_case cases[4];
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++) {
        if (coll == STITCH_ALL_TO_ALL_V)
            continue;
        int per_p = 0;
        for (size_t i = 0; i < sizeof moves / sizeof *moves; i++)
            per_p |= moves[i] == coll;
        const char *names[32];
        int nalgos = stitch_algorithms(coll, names, 32);
        for (int a = 0; a < nalgos && a < 32; a++) {
            if (is_role(names[a]))
                continue;
            char spec[128];
            snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), names[a]);
            int n = 0;
            for (int di = 0; di < (coll == STITCH_ALL_REDUCE ? 2 : 1); di++) {
                size_t count = ((size_t)64 << 20) / stitch_dtype_size(dts[di]) / (per_p ? (size_t)ps[0] : 1) + 1;
                cases[n++] = (coll_case){coll, dts[di], STITCH_SUM, count, 0, 0, ps[0] - 1};
            }
            double t0 = st_now();
            run_team(spec, grouping_of(names[a], ps[0]), ps[0], cases, n);
            printf("# large %s p=%d: %.2f s\n", spec, ps[0], st_now() - t0);
            fflush(stdout);
        }
    }
}

/* A few cases for compute-sanitizer (every kernel path: copy, reduce, reduce3, channels): small_p1 has no peer to
 * wait for (racecheck may serialize kernels, and ranks sharing a device spin on each other's flags). */
static void run_small(int p)
{
    static const size_t counts[] = {1, 13, 100003};
    static const int dts[] = {STITCH_FP32, STITCH_BF16};
    static const int colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER, STITCH_BROADCAST};
    coll_case cases[16];
    for (size_t i = 0; i < sizeof colls / sizeof *colls; i++) {
        int n = make_cases(p, colls[i], counts, 3, dts, 2, cases);
        char spec[64];
        snprintf(spec, sizeof spec, "%s=ring", stitch_coll_name(colls[i]));
        run_team(spec, NULL, p, cases, n);
    }
}

static void test_small(void)
{
    run_small(2);
}

static void test_small_p1(void)
{
    run_small(1);
}

/* ---- bit-identity with the threads engine ------------------------------------------------------------------- */

#define ID_N 1001
static float id_in[8][ID_N];
static float id_out[2][8][ID_N];

typedef struct id_run {
    stitch_comm_t **comms;
    int which, coll, dtype;
} id_run;

static void id_main(void *ctx, int r)
{
    id_run *x = ctx;
    size_t n = x->coll == STITCH_REDUCE_SCATTER ? ID_N / 8 : ID_N, bytes = sizeof(float) * ID_N;
    void *send = dev_alloc(bytes), *recv = dev_alloc(bytes);
    float in[ID_N];
    memcpy(in, id_in[r], bytes);
    if (x->dtype == STITCH_BF16) /* rounded from the same values: no NaN, whose bits devices may not keep */
        for (size_t i = 0; i < ID_N; i++)
            ((uint16_t *)in)[i] = st_f32_to_bf16(id_in[r][i]);
    to_dev(send, in, bytes);
    to_dev(recv, in, bytes);
    size_t count = n;
    stitch_status_t st = x->coll == STITCH_ALL_REDUCE ? stitch_all_reduce(send, recv, count, x->dtype, STITCH_SUM,
                                                                          x->comms[r])
                         : x->coll == STITCH_REDUCE ? stitch_reduce(send, recv, count, x->dtype, STITCH_SUM, 0,
                                                                    x->comms[r])
                                                    : stitch_reduce_scatter(send, recv, count, x->dtype, STITCH_SUM,
                                                                            x->comms[r]);
    if (st == STITCH_OK && stitch_comm_device(x->comms[r]) >= 0)
        st = stitch_comm_synchronize(x->comms[r]);
    CHECK(st == STITCH_OK, "rank %d: %s", r, stitch_comm_last_error(x->comms[r]));
    from_dev(id_out[x->which][r], recv, bytes);
    dev_free(send), dev_free(recv);
}

static void test_identical(void)
{
    static const int colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_REDUCE};
    static const int ps[] = {3, 5, 8};
    static const int dts[] = {STITCH_FP32, STITCH_BF16};
    for (int r = 0; r < 8; r++)
        det_input(r, ID_N, id_in[r]);
    for (size_t ci = 0; ci < 3; ci++)
        for (size_t pi = 0; pi < 3; pi++)
            for (size_t di = 0; di < 2; di++) {
                const char *names[32];
                int coll = colls[ci], p = ps[pi], nalgos = stitch_algorithms(coll, names, 32);
                for (int a = 0; a < nalgos && a < 32; a++) {
                    if (is_role(names[a]))
                        continue;
                    char spec[128], err[512];
                    snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), names[a]);
                    stitch_config_t cfg = STITCH_CONFIG_INIT;
                    cfg.algo = spec;
                    cfg.groups = grouping_of(names[a], p);
                    stitch_comm_t *comms[8];
                    memset(id_out, 0, sizeof id_out);
                    for (int which = 0; which < 2; which++) {
                        stitch_status_t st = which ? stitch_comm_init_devices(p, backend, NULL, &cfg, comms, err,
                                                                              sizeof err)
                                                   : stitch_comm_init_threads(p, &cfg, comms, err, sizeof err);
                        CHECK(st == STITCH_OK, "%s p=%d: %s", spec, p, err);
                        id_run x = {comms, which, coll, dts[di]};
                        st_run_ranks(p, id_main, &x);
                        for (int r = 0; r < p; r++)
                            stitch_comm_destroy(comms[r]);
                    }
                    CHECK(memcmp(id_out[0], id_out[1], sizeof id_out[0]) == 0,
                          "%s %s p=%d: the device engine's result differs from the threads engine's", spec,
                          stitch_dtype_name(dts[di]), p);
                }
            }
}

/* ---- errors ------------------------------------------------------------------------------------------------- */

static stitch_comm_t *err_comms[2];
static void *err_buf[2];

static void late_main(void *ctx, int r)
{
    stitch_status_t st, async;
    if (r == 1)
        return; /* rank 1 never calls */
    st = stitch_all_reduce(err_buf[0], err_buf[0], 4, STITCH_FP32, STITCH_SUM, err_comms[0]);
    CHECK(st == STITCH_OK, "an enqueue returns at once: %s", stitch_comm_last_error(err_comms[0]));
    st = stitch_comm_synchronize(err_comms[0]);
    CHECK(st == STITCH_ERR_TIMEOUT, "the timeout is reported: %s (%s)", stitch_strerror(st),
          stitch_comm_last_error(err_comms[0]));
    CHECK(strstr(stitch_comm_last_error(err_comms[0]), "rank 0 timed out") &&
              strstr(stitch_comm_last_error(err_comms[0]), "waiting for rank 1"),
          "names who waited for whom: %s", stitch_comm_last_error(err_comms[0]));
    CHECK(stitch_comm_get_async_error(err_comms[0], &async) == STITCH_OK && async != STITCH_OK,
          "get_async_error reports it");
    st = stitch_all_reduce(err_buf[0], err_buf[0], 4, STITCH_FP32, STITCH_SUM, err_comms[0]);
    CHECK(st != STITCH_OK, "the next call fails too");
}

static void test_errors(void)
{
    char err[512];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.timeout_ms = 300;
    CHECK(stitch_comm_init_devices(2, backend, NULL, &cfg, err_comms, err, sizeof err) == STITCH_OK, "%s", err);
    err_buf[0] = dev_alloc(4096), err_buf[1] = dev_alloc(4096);
    size_t counts[2] = {1, 1}, displs[2] = {0, 1};
    stitch_status_t st = stitch_all_to_all_v(err_buf[0], counts, displs, err_buf[1], counts, displs, STITCH_FP32,
                                             err_comms[0]);
    CHECK(st == STITCH_ERR_UNSUPPORTED && strstr(stitch_comm_last_error(err_comms[0]), "all_to_all_v"),
          "all_to_all_v is refused: %s", stitch_comm_last_error(err_comms[0]));
    for (int r = 0; r < 2; r++)
        stitch_comm_destroy(err_comms[r]);
    CHECK(stitch_comm_init_devices(2, backend, NULL, &cfg, err_comms, err, sizeof err) == STITCH_OK, "%s", err);
    if (on_cuda()) { /* a host pointer where a device pointer is required */
        static float host[16];
        st = stitch_all_reduce(host, host, 16, STITCH_FP32, STITCH_SUM, err_comms[1]);
        CHECK(st == STITCH_ERR_INVALID_ARGUMENT && strstr(stitch_comm_last_error(err_comms[1]), "rank 1") &&
                  strstr(stitch_comm_last_error(err_comms[1]), "host memory"),
              "a host pointer is refused naming the rank: %s", stitch_comm_last_error(err_comms[1]));
        for (int r = 0; r < 2; r++)
            stitch_comm_destroy(err_comms[r]);
        CHECK(stitch_comm_init_devices(2, backend, NULL, &cfg, err_comms, err, sizeof err) == STITCH_OK, "%s", err);
    }
    st_run_ranks(2, late_main, NULL);
    for (int r = 0; r < 2; r++)
        stitch_comm_destroy(err_comms[r]);
    dev_free(err_buf[0]), dev_free(err_buf[1]);
    int devs[2] = {0, 5};
    st = stitch_comm_init_devices(2, backend, devs, NULL, err_comms, err, sizeof err);
    CHECK(st == STITCH_ERR_INVALID_ARGUMENT && strstr(err, "devices[1] is 5"), "a device out of range: %s", err);
    st = stitch_comm_init_devices(2, "npu", NULL, NULL, err_comms, err, sizeof err);
    CHECK(st == STITCH_ERR_UNSUPPORTED && strstr(err, "unknown device backend 'npu'"), "unknown backend: %s", err);
}

/* Is there a device? Asked in a child: CUDA must not be initialised in this process, which forks every test. */
static int probe(char *why, size_t len)
{
    int fd[2];
    if (pipe(fd) != 0)
        return snprintf(why, len, "pipe failed"), 0;
    pid_t pid = fork();
    if (pid == 0) {
        char msg[300] = "";
        int n = stitch_device_count(backend, msg, sizeof msg);
        if (write(fd[1], msg, strlen(msg)) < 0)
            _exit(2);
        _exit(n >= 1 ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], why, len - 1);
    why[got > 0 ? got : 0] = '\0';
    close(fd[0]);
    int status = 1;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"matrix", test_matrix, 1500},
        {"identical", test_identical, 600},
        {"errors", test_errors, 120},
        {"large", test_large, 900},
        {"small", test_small, 600},
        {"small_p1", test_small_p1, 600},
    };
    char why[300];
    int nargs = 0;
    char *args[16];
    for (int i = 0; i < argc && nargs < 16; i++) {
        if (strncmp(argv[i], "--backend=", 10) == 0)
            backend = argv[i] + 10;
        else
            args[nargs++] = argv[i];
    }
    if (!probe(why, sizeof why)) {
        printf("SKIP: backend %s: %s\n", backend, why);
        return 77;
    }
    /* large is for devices: the host interpreter would take minutes over 64 MB per rank */
    if (nargs == 1 && !on_cuda()) {
        args[nargs++] = "matrix", args[nargs++] = "identical", args[nargs++] = "errors", args[nargs++] = "small";
        args[nargs++] = "small_p1";
    }
    return st_run_tests(tests, 6, nargs, args);
}
