/* test_proc_colls.c - every collective and every algorithm with data, ranks as processes (process mode).
 *
 *   test_proc_colls SCENARIO ...     np1 .. np5: the sample matrix for that many ranks (ctest: proc.colls.npN)
 *                                    tcp: the np3 sample over tcp
 *                                    full: the whole matrix for np 1..6 (ctest label `long`)
 *                                    det: fp32 sums of order-dependent data, bit-compared with thread mode
 *                                    mismatch: disagreeing roots and all_to_all_v counts fail, naming both sides
 *                                    algosN, algosN.tcp: every ordered pair of algorithms of each collective
 *                                    without a root, the last of N ranks forcing the second: all fail fast,
 *                                    one naming both
 *
 * The ranks of a scenario are forked processes joined by a unique id (procrun.h); each runs the same list of
 * cases on one communicator, switching algorithms with stitch_comm_set_algorithm, and checks every element of
 * its output exactly against coll_data.h (the thread-mode test's values and expectations). The sample: every
 * (collective, algorithm, count in {0, 1, 7, 3001}, root) with the dtype, op, in-place form and buffer offset
 * rotating, 3001 elements being many segments (STITCH_SEGMENT_BYTES=4096). Prints TAP.
 */
#include <pthread.h>
#include <stdint.h>

#include "coll_data.h"
#include "procrun.h"
#include "st_steptab.h"

static const size_t counts[] = {0, 1, 7, 3001};
enum { NCOUNTS = 4 };

static int full_matrix;
static const char *scenario; /* for messages */

/* A case with its algorithm. */
typedef struct pcase {
    coll_case c;
    const char *algo;
} pcase;

/* ---- the matrix --------------------------------------------------------------------------------------------- */

static const int dtypes[] = {STITCH_INT32, STITCH_FP32, STITCH_FP64, STITCH_FP16, STITCH_BF16,
                             STITCH_INT8,  STITCH_UINT8, STITCH_INT16, STITCH_INT64};
enum { NDTYPES = (int)(sizeof dtypes / sizeof dtypes[0]) };

/* In-place variants of a collective: 0 out of place, 1 in place, 2 reduce_scatter's recv = send + rank * count,
 * 3 odd ranks in place (coll_data.h). */
static int nvariants(int coll)
{
    if (coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V)
        return 1;
    return coll == STITCH_REDUCE_SCATTER ? 4 : 3;
}

static int add(pcase *out, int n, int coll, const char *algo, int dt, int op, size_t count, int v, int shift, int root)
{
    if (v == 2 && coll != STITCH_REDUCE_SCATTER)
        v = 3;
    if (out) /* NULL: only counting */
        out[n] = (pcase){{coll, dt, op, count, v, shift, root}, algo};
    return n + 1;
}

/* Cases of one (collective, algorithm) for p ranks: every count and root; in the sample the dtype, op, variant
 * and offset rotate with a running index so that each is covered without the product. */
static int make_alg_cases(int p, int coll, const char *algo, pcase *out, int n, int *k)
{
    int nroots = st_coll_rooted(coll) ? p : 1, nops = moves_only(coll) ? 1 : STITCH_OP_COUNT;
    for (size_t ci = 0; ci < NCOUNTS; ci++)
        for (int root = 0; root < nroots; root++) {
            if (!full_matrix) {
                int i = (*k)++;
                n = add(out, n, coll, algo, dtypes[i % NDTYPES], (i / 2) % nops, counts[ci], i % nvariants(coll),
                        (i / 3) % 2, root);
                continue;
            }
            for (int d = 0; d < NDTYPES; d++)
                for (int op = 0; op < nops; op++)
                    for (int v = 0; v < nvariants(coll); v++)
                        n = add(out, n, coll, algo, dtypes[d], op, counts[ci], v, (d + op) % 2, root);
        }
    return n;
}

static int make_cases(int p, pcase *out)
{
    int n = 0, k = 0;
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++) {
        const char *names[32];
        int nalgos = stitch_algorithms(coll, names, 32);
        for (int a = 0; a < nalgos && a < 32; a++)
            n = make_alg_cases(p, coll, names[a], out, n, &k);
    }
    return n;
}

/* ---- one rank ------------------------------------------------------------------------------------------------ */

static int report(int out, const pcase *pc, int rank, const char *what)
{
    const coll_case *c = &pc->c;
    say(out, "%s %s %s %s count=%zu root=%d inplace=%d shift=%d rank %d: %s\n", stitch_coll_name(c->coll), pc->algo,
        stitch_dtype_name(c->dtype), stitch_op_name(c->op), c->count, c->root, c->inplace, c->shift, rank, what);
    return 1;
}

/* Run one case on this rank and check its output; 0 when right. */
static int run_case(stitch_comm_t *comm, int rank, int p, const pcase *pc, bufs *m, int out)
{
    const coll_case *c = &pc->c;
    void *send, *recv;
    char what[700];
    size_t bad, nin, nout;
    stitch_status_t st = stitch_comm_set_algorithm(comm, c->coll, pc->algo);
    if (st != STITCH_OK)
        return report(out, pc, rank, stitch_comm_last_error(comm));
    setup(c, p, rank, m, &send, &recv);
    st = call(c, p, send, recv, comm);
    extents(c, p, rank, &nin, &nout);
    if (st != STITCH_OK) {
        snprintf(what, sizeof what, "status %s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
        return report(out, pc, rank, what);
    }
    if (!verify(c, p, rank, recv, &bad)) {
        snprintf(what, sizeof what, "element %zu is %g, expected %g", bad, load(c->dtype, recv, bad),
                 out_value(c, p, rank, bad, &(int){0}));
        return report(out, pc, rank, what);
    }
    for (size_t i = 0; nout == 0 && recv && i < c->count * stitch_dtype_size(c->dtype); i++)
        if (((unsigned char *)recv)[i] != 0xab)
            return report(out, pc, rank, "a receive buffer this rank does not use was written");
    return 0;
}

static pcase *the_cases;
static int the_ncases;

static int body_matrix(stitch_comm_t *comm, int rank, int p, int out)
{
    size_t most = 0;
    for (int i = 0; i < the_ncases; i++) {
        size_t need = (size_t)p * (the_cases[i].c.count + 3) * stitch_dtype_size(the_cases[i].c.dtype) + 64;
        most = need > most ? need : most;
    }
    most = (most + 63) & ~(size_t)63;
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    int bad = !m.a || !m.b;
    for (int i = 0; i < the_ncases && !bad; i++)
        bad = run_case(comm, rank, p, &the_cases[i], &m, out);
    free(m.a);
    free(m.b);
    return bad;
}

/* ---- scenarios ----------------------------------------------------------------------------------------------- */

static int sc_matrix(int p, const char *transport)
{
    run r;
    the_cases = malloc(sizeof *the_cases * (size_t)make_cases(p, NULL));
    if (!the_cases)
        return 0;
    the_ncases = make_cases(p, the_cases);
    if (the_ncases == 0) { /* an empty catalogue would pass without running anything */
        printf("# %s: no cases on %d ranks\n", scenario, p);
        free(the_cases);
        return 0;
    }
    spawn(&r, p, body_matrix, transport);
    double took = reap(&r, full_matrix ? 1800 : DEADLINE_S);
    printf("# %s: %d cases on %d ranks in %.2f s\n", scenario, the_ncases, p, took);
    free(the_cases);
    return all_ok(&r, scenario);
}

/* Pipeline's all_to_all (a relay through the same-index rank of every server) and all_to_all_v on groups, in
 * process mode: STITCH_GROUPS on every rank, counts 0, 1, 7 (odd) and 3001 (many segments), dtypes rotating. */
static int sc_pipeline(void)
{
    static const struct { int p; const char *groups; } g[] = {{4, "2x2"}, {6, "3x2"}, {6, "2x3"}, {5, "5x1"}};
    static const int colls[] = {STITCH_ALL_TO_ALL, STITCH_ALL_TO_ALL_V};
    pcase cases[2 * NCOUNTS];
    int ok = 1;
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        int n = 0, k = 0;
        for (int c = 0; c < 2; c++)
            n = make_alg_cases(g[i].p, colls[c], "pipeline", cases, n, &k);
        the_cases = cases, the_ncases = n;
        for (int r = 0; r < g[i].p; r++)
            groups_of_rank[r] = g[i].groups;
        run r;
        spawn(&r, g[i].p, body_matrix, NULL);
        double took = reap(&r, DEADLINE_S);
        printf("# pipeline all_to_all(v) on groups %s: %d cases in %.2f s\n", g[i].groups, n, took);
        ok &= all_ok(&r, g[i].groups);
        for (int j = 0; j < g[i].p; j++)
            groups_of_rank[j] = NULL;
    }
    the_cases = NULL, the_ncases = 0;
    return ok;
}

/* ---- bit-identical with thread mode ----------------------------------------------------------------------- */

enum { DET_N = 10007 };


static uint64_t fnv(const void *buf, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
    return h;
}

/* The fp32 sum of det_input over the ranks, as coll (all_reduce, reduce_scatter, reduce at root 1) computes it:
 * the hash of rank r's output (0 when it has none). */
static uint64_t det_call(stitch_comm_t *comm, int coll, int r, int p, stitch_status_t *st)
{
    float *in = malloc(sizeof *in * DET_N), *res = calloc(DET_N, sizeof *res);
    size_t n = coll == STITCH_REDUCE_SCATTER ? DET_N / (size_t)p : DET_N;
    uint64_t h = 0;
    *st = STITCH_ERR_NO_MEMORY;
    if (in && res) {
        det_input(r, DET_N, in);
        if (coll == STITCH_ALL_REDUCE)
            *st = stitch_all_reduce(in, res, n, STITCH_FP32, STITCH_SUM, comm);
        else if (coll == STITCH_REDUCE_SCATTER)
            *st = stitch_reduce_scatter(in, res, n, STITCH_FP32, STITCH_SUM, comm);
        else
            *st = stitch_reduce(in, res, n, STITCH_FP32, STITCH_SUM, 1, comm);
        h = coll == STITCH_REDUCE && r != 1 ? 0 : fnv(res, n * sizeof *res);
    }
    free(in);
    free(res);
    return h;
}

static const int det_colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_REDUCE};
enum { DET_P = 4, DET_MAX = 64 };

/* Every algorithm of the three reducing collectives, in the order of det_cases. */
static int det_cases(int *coll, const char **algo)
{
    int n = 0;
    for (int i = 0; i < 3; i++) {
        const char *names[32];
        int k = stitch_algorithms(det_colls[i], names, 32);
        for (int a = 0; a < k && a < 32 && n < DET_MAX; a++)
            coll[n] = det_colls[i], algo[n++] = names[a];
    }
    return n;
}

static int body_det(stitch_comm_t *comm, int rank, int p, int out)
{
    int coll[DET_MAX];
    const char *algo[DET_MAX];
    int n = det_cases(coll, algo);
    for (int i = 0; i < n; i++) {
        stitch_status_t st = stitch_comm_set_algorithm(comm, coll[i], algo[i]);
        uint64_t h = st == STITCH_OK ? det_call(comm, coll[i], rank, p, &st) : 0;
        if (st != STITCH_OK) {
            say(out, "%s %s: %s\n", stitch_coll_name(coll[i]), algo[i], stitch_comm_last_error(comm));
            return 1;
        }
        say(out, "%016llx\n", (unsigned long long)h);
    }
    return 0;
}

typedef struct det_team {
    stitch_comm_t *comms[DET_P];
    int coll;
    uint64_t h[DET_P];
    stitch_status_t st[DET_P];
} det_team;

static det_team *the_team;

static void *det_thread(void *arg)
{
    int r = (int)(intptr_t)arg;
    the_team->h[r] = det_call(the_team->comms[r], the_team->coll, r, DET_P, &the_team->st[r]);
    return NULL;
}

/* The same calls in thread mode, in this process: the hashes every rank must have printed. */
static int det_threads(int coll, const char *algo, uint64_t *h)
{
    det_team t = {.coll = coll};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char spec[128], err[512];
    pthread_t th[DET_P];
    snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), algo);
    cfg.algo = spec;
    if (stitch_comm_init_threads(DET_P, &cfg, t.comms, err, sizeof err) != STITCH_OK) {
        printf("# det: %s\n", err);
        return 0;
    }
    the_team = &t;
    for (int r = 0; r < DET_P; r++)
        pthread_create(&th[r], NULL, det_thread, (void *)(intptr_t)r);
    for (int r = 0; r < DET_P; r++)
        pthread_join(th[r], NULL);
    int ok = 1;
    for (int r = 0; r < DET_P; r++) {
        ok &= t.st[r] == STITCH_OK;
        h[r] = t.h[r];
        stitch_comm_destroy(t.comms[r]);
    }
    return ok;
}

static int sc_det(void)
{
    int coll[DET_MAX], ok = 1;
    const char *algo[DET_MAX];
    int n = det_cases(coll, algo);
    run r;
    spawn(&r, DET_P, body_det, NULL);
    reap(&r, DEADLINE_S);
    if (!all_ok(&r, scenario))
        return 0;
    for (int i = 0; i < n; i++) {
        uint64_t want[DET_P];
        if (!det_threads(coll[i], algo[i], want))
            return 0;
        for (int q = 0; q < DET_P; q++) {
            unsigned long long got = 0;
            const char *line = r.text[q];
            for (int j = 0; j < i && line; j++)
                line = strchr(line, '\n'), line = line ? line + 1 : NULL;
            if (!line || sscanf(line, "%llx", &got) != 1 || got != want[q]) {
                printf("# det: %s %s rank %d: process mode %016llx, thread mode %016llx\n", stitch_coll_name(coll[i]),
                       algo[i], q, got, (unsigned long long)want[q]);
                ok = 0;
            }
        }
    }
    printf("# det: %d algorithms, %d ranks, fp32 sums of %d elements, process mode == thread mode: %s\n", n, DET_P,
           DET_N, ok ? "yes" : "no");
    return ok;
}

/* ---- disagreements --------------------------------------------------------------------------------------- */

static int mis_coll;
static const char *mis_algo;

/* Every rank but the last uses root 0; the last uses root p - 1. */
static int body_root(stitch_comm_t *comm, int rank, int p, int out)
{
    int32_t buf[64 * 8] = {0};
    int root = rank == p - 1 ? p - 1 : 0;
    coll_case c = {mis_coll, STITCH_INT32, STITCH_SUM, 5, 0, 0, root};
    stitch_status_t st = stitch_comm_set_algorithm(comm, mis_coll, mis_algo);
    if (st == STITCH_OK)
        st = call(&c, p, buf, buf + 256, comm);
    if (st == STITCH_OK)
        return 0;
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return 3;
}

/* all_to_all_v: rank 1 sends rank 2 one element more than rank 2 expects. */
static int body_counts(stitch_comm_t *comm, int rank, int p, int out)
{
    int32_t send[64] = {0}, recv[64];
    size_t sc[8], sd[8], rc[8], rd[8];
    for (int q = 0; q < p; q++)
        sc[q] = rc[q] = 5, sd[q] = rd[q] = (size_t)q * 8;
    if (rank == 1)
        sc[2] = 6;
    stitch_status_t st = stitch_all_to_all_v(send, sc, sd, recv, rc, rd, STITCH_INT32, comm);
    if (st == STITCH_OK)
        return 0;
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return 3;
}

/* The ranks in `named` must fail with a text holding want1 and want2; the others may finish or be aborted. */
static int judge(const run *r, const char *what, const int *named, const char *want1, const char *want2)
{
    int ok = 1;
    for (int i = 0; i < r->n; i++) {
        int must = named[i], has = strstr(r->text[i], want1) && strstr(r->text[i], want2);
        int fine = must ? r->status[i] == 3 && has : r->status[i] == 0 || (r->status[i] == 3 && (has ||
                   strstr(r->text[i], "abort")));
        if (!fine)
            ok = 0;
        printf("# %s: rank %d exited %d%s %s", what, i, r->status[i], fine ? "" : " (wrong)",
               r->text[i][0] ? r->text[i] : "\n");
    }
    return ok;
}

/* The last rank forces mis_algo2 for mis_coll, the others mis_algo. */
static const char *mis_algo2;

static int body_algo(stitch_comm_t *comm, int rank, int p, int out)
{
    int32_t buf[64 * 8 * 2] = {0};
    coll_case c = {mis_coll, STITCH_INT32, STITCH_SUM, 64, 0, 0, 0};
    stitch_status_t st = stitch_comm_set_algorithm(comm, mis_coll, rank == p - 1 ? mis_algo2 : mis_algo);
    if (st == STITCH_OK)
        st = call(&c, p, buf, buf + 512, comm);
    if (st == STITCH_OK)
        return 0;
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return 3;
}

/* Ranks that force different algorithms for a collective without a root run different schedules, in which
 * every rank may wait for a message nobody sends it; a waiting rank looks at the headers that did arrive from
 * other peers (exec_msg.c), so every pair of algorithms fails fast, naming both, instead of timing out (each pair
 * takes ~0.15 s; the timeout is 30 s). only_first: just all_reduce pairs whose first algorithm is that one. */
/* Roles (algos.dsl's level0, level1, ahc_intra, ahc_inter) run another algorithm's schedule, and the composites on
 * groups (hier, ahc, ahc_align, ahc_broke) are phases of the others: pairing them with every algorithm would square
 * the run time for nothing new, so roles are left out and composites meet ring only (both ways). */
static int pair_skipped(const char *a, const char *b)
{
    static const char *const roles[] = {"level0", "level1", "ahc_intra", "ahc_inter"};
    static const char *const composites[] = {"hier", "ahc", "ahc_align", "ahc_broke"};
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(a, roles[i]) == 0 || strcmp(b, roles[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof composites / sizeof composites[0]; i++)
        if ((strcmp(a, composites[i]) == 0 && strcmp(b, "ring") != 0) ||
            (strcmp(b, composites[i]) == 0 && strcmp(a, "ring") != 0))
            return 1;
    return 0;
}

static int sc_algos(int p, const char *transport, const char *only_first)
{
    static const stitch_coll_t colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER,
                                          STITCH_ALL_TO_ALL};
    int ok = 1, pairs = 0;
    run r;
    setenv("STITCH_TIMEOUT", "30", 1); /* failing by the timeout takes 30 s, failing fast well under 15 */
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        const char *names[64];
        int n = stitch_algorithms(colls[i], names, 64);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                char what[160], want1[96], want2[96];
                int named[MAXR] = {0}, one = 0;
                if (a == b || (only_first && (colls[i] != STITCH_ALL_REDUCE || strcmp(names[a], only_first))) ||
                    pair_skipped(names[a], names[b]))
                    continue;
                mis_coll = colls[i], mis_algo = names[a], mis_algo2 = names[b];
                snprintf(what, sizeof what, "%s %s/%s p=%d", stitch_coll_name(mis_coll), mis_algo, mis_algo2, p);
                snprintf(want1, sizeof want1, "algorithm %s", mis_algo);
                snprintf(want2, sizeof want2, "algorithm %s", mis_algo2);
                spawn(&r, p, body_algo, transport);
                double took = reap(&r, 60);
                for (int q = 0; q < p; q++)
                    one |= r.status[q] == 3 && strstr(r.text[q], want1) && strstr(r.text[q], want2);
                ok &= judge(&r, what, named, want1, want2) && one && took < 15;
                if (!one || took >= 15)
                    printf("# %s: %s after %.1f s\n", what, one ? "named" : "nobody named both", took);
                pairs++;
            }
    }
    printf("# %s: %d pairs of algorithms on %d ranks over %s\n", scenario, pairs, p, transport ? transport : "shm");
    setenv("STITCH_TIMEOUT", "30", 1);
    return ok;
}

static int sc_mismatch(void)
{
    static const struct {
        int coll;
        const char *algo;
    } roots[] = {{STITCH_GATHER, "mesh"}, {STITCH_BROADCAST, "ring"}, {STITCH_REDUCE, "rhd"}, {STITCH_SCATTER, "nb"}};
    int ok = 1, named[MAXR] = {0};
    run r;
    setenv("STITCH_TIMEOUT", "10", 1);
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        char what[128];
        mis_coll = roots[i].coll, mis_algo = roots[i].algo;
        snprintf(what, sizeof what, "%s %s roots", stitch_coll_name(mis_coll), mis_algo);
        spawn(&r, 3, body_root, NULL);
        double took = reap(&r, 20);
        named[0] = named[2] = 1; /* rank 0 checks rank 2's hello, rank 2 checks rank 1's */
        ok &= judge(&r, what, named, "has root 0", "has root 2") && took < 5;
    }
    spawn(&r, 3, body_counts, NULL);
    double took = reap(&r, 20);
    memset(named, 0, sizeof named);
    named[2] = 1;
    ok &= judge(&r, "all_to_all_v counts", named, "rank 2 expects 5 elements from rank 1 (recvcounts[1])",
                "but rank 1 sends it 6 (sendcounts[2])") && took < 5;
    setenv("STITCH_TIMEOUT", "30", 1);
    return ok;
}

/* ---- main ---------------------------------------------------------------------------------------------------- */

static int run_scenario(const char *name)
{
    scenario = name;
    if (strncmp(name, "np", 2) == 0 && name[2] >= '1' && name[2] <= '5' && !name[3])
        return sc_matrix(name[2] - '0', NULL);
    if (strcmp(name, "tcp") == 0)
        return sc_matrix(3, "tcp");
    if (strcmp(name, "full") == 0) {
        int ok = 1;
        full_matrix = 1;
        for (int p = 1; p <= 6; p++)
            ok &= sc_matrix(p, NULL);
        return ok;
    }
    if (strcmp(name, "det") == 0)
        return sc_det();
    if (strcmp(name, "pipeline") == 0)
        return sc_pipeline();
    if (strcmp(name, "mismatch") == 0)
        return sc_mismatch();
    if (strncmp(name, "algos", 5) == 0 && name[5] >= '2' && name[5] <= '8' && (!name[6] || !strcmp(name + 6, ".tcp")))
        return sc_algos(name[5] - '0', name[6] ? "tcp" : NULL, NULL);
    if (strcmp(name, "ring3.tcp") == 0) /* the default suite's sample of algos3.tcp: ring against each other */
        return sc_algos(3, "tcp", "ring");
    printf("# unknown scenario '%s'\n", name);
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0;
    signal(SIGPIPE, SIG_IGN);
    proc_test_env();
    setenv("STITCH_SEGMENT_BYTES", "4096", 1); /* 3001 elements are many segments */
    setenv("STITCH_TIMEOUT", "30", 1);
    printf("1..%d\n", argc - 1);
    for (int i = 1; i < argc; i++) {
        fflush(stdout);
        int ok = run_scenario(argv[i]);
        printf("%s %d - %s\n", ok ? "ok" : "not ok", i, argv[i]);
        failed += !ok;
    }
    return failed ? 1 : 0;
}
