/* test_verbs_rma.c - the verbs transport's one-sided path (runtime/transport/tp_verbs.c's st_tp_rma_ops, the
 * rendezvous in runtime/proc/exec_msg.c, the registration cache runtime/transport/mr_cache.c) in process mode
 * over the strict emulator (tests/verbs/fakeverbs.h), every pair over verbs (STITCH_TRANSPORT=verbs):
 *
 *   colls.N      N ranks (2, 3, 4): every collective with ring, nhr, rhd and auto where it has them, counts 1000
 *                and 100003, in and out of place, every element checked; then order-dependent fp32 sums (all_reduce,
 *                reduce_scatter, reduce; 100003 and 2^20 + 3 elements, the larger landing in chunks). Run twice,
 *                stream only (STITCH_IB_RMA_BYTES=0) and one-sided from 4 KiB:
 *                each rank's hash of every output byte must be the same (bit-identical), and the one-sided run must
 *                have written messages one-sided (puts > 0)
 *   steady       4 ranks, the same buffers: after 3 warm-up calls of all_reduce (4 MiB) and all_gather, 10 more
 *                register nothing (the cache's registration count is unchanged) while messages go one-sided
 *   evict        a 256 KiB cache (STITCH_IB_MR_CACHE_BYTES) and three buffer pairs in turn: every result right,
 *                entries evicted, never more pinned than the bound; messages the bound cannot take go on the stream
 *   invalidate   2 ranks, all_gather into an mmap'd buffer (lands in place): (a) stitch_mr_invalidate, munmap, the
 *                same address mapped again in full: the next call re-registers and is right; (b) no call: the buffer
 *                unmapped and a smaller one mapped at its address: the cache notices (msync) and re-registers.
 *                On a NIC, a stale registration would put the data in the old pages; the emulator writes through
 *                the addresses themselves (it does not pin), so here the registration count is what shows it
 *   fault.deadpeer  4 ranks, all_reduce one-sided from 4 KiB; rank 1's emulator removes a peer mid-run: every rank
 *                fails within 2 x STITCH_TIMEOUT naming a peer and the cause, nothing leaks
 *   bench.long   not a check and not in ctest: all_reduce and all_gather busbw at 4 and 16 MB on 2 and 4 ranks,
 *                stream against one-sided, on the emulator (`test_verbs_rma bench.long`; docs/onesided.md);
 *                RMA_BENCH_SPIN_US sets the ranks' STITCH_SPIN_US
 *
 * Prints TAP. Each scenario runs in its own process (ctest: verbs.rma.<name>).
 */
#define _GNU_SOURCE
#include "../proc/procrun.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "coll_data.h"
#include "fakeverbs.h"
#include "tp_verbs.h"
#include "verbs.h"

/* ---- the emulator under every rank, and nothing of it left after destroy --------------------------------- */

static char fabric_id[64];

static int fake_leaks(int out, int rc)
{
    st_fake_live lv;
    st_fake_counts(&lv);
    if (lv.contexts || lv.pds || lv.mrs || lv.cqs || lv.qps || lv.channels) {
        say(out, "leak after destroy: %d contexts, %d pds, %d mrs, %d cqs, %d qps, %d channels\n", lv.contexts,
            lv.pds, lv.mrs, lv.cqs, lv.qps, lv.channels);
        rc = rc ? rc : 3;
    }
    return rc;
}

static int fake_setup(void)
{
    setenv("STITCH_FAKE_TIME_DIV", "1", 1); /* test_verbs_proc.c's fake_setup says why */
    if (st_fake_fabric_create(fabric_id, sizeof fabric_id) != 0) {
        printf("# st_fake_fabric_create: %s\n", strerror(errno));
        return 0;
    }
    setenv("STITCH_FAKE_FABRIC", fabric_id, 1);
    st_verbs_set_api(st_fake_api());
    after_destroy = fake_leaks;
    return 1;
}

static void vspawn(run *r, int n, rank_fn fn)
{
    spawn(r, n, fn, "verbs");
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static void counts(uint64_t *regs, uint64_t *puts)
{
    st_mrc_stats s;
    uint64_t cancels;
    st_tp_verbs_cache_stats(&s);
    st_tp_verbs_rma_counts(puts, &cancels);
    *regs = s.regs;
}

/* ---- colls.N ------------------------------------------------------------------------------------------------ */

static const char *const algos[] = {"ring", "nhr", "rhd", "auto"};

static int has_algo(int coll, const char *name)
{
    const char *names[32];
    int n = stitch_algorithms(coll, names, 32);
    for (int i = 0; i < n && i < 32; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return strcmp(name, "auto") == 0;
}

/* One case, checked, its output hashed into *h; 0 with a message when wrong. */
static int one_case(stitch_comm_t *comm, const coll_case *cc, const char *algo, int rank, int p, bufs *m,
                    uint64_t *h, int out)
{
    void *send, *recv;
    size_t at, nin, nout;
    stitch_status_t st = stitch_comm_set_algorithm(comm, cc->coll, algo);
    if (st == STITCH_OK) {
        setup(cc, p, rank, m, &send, &recv);
        st = call(cc, p, send, recv, comm);
    }
    if (st != STITCH_OK) {
        say(out, "%s %s count %zu: %s: %s\n", stitch_coll_name(cc->coll), algo, cc->count, stitch_strerror(st),
            stitch_comm_last_error(comm));
        return 0;
    }
    if (!verify(cc, p, rank, recv, &at)) {
        say(out, "%s %s %s count %zu: element %zu is %g, expected %g\n", stitch_coll_name(cc->coll), algo,
            stitch_dtype_name(cc->dtype), cc->count, at, load(cc->dtype, recv, at),
            out_value(cc, p, rank, at, &(int){0}));
        return 0;
    }
    extents(cc, p, rank, &nin, &nout);
    if (recv)
        *h = fnv(*h, recv, nout * stitch_dtype_size(cc->dtype));
    return 1;
}

/* Sums whose value depends on the order of the additions: a path that reduced in another order would differ. Two
 * sizes: 100003 (messages under one landing chunk) and 2^20 + 3 (messages of 1-2 MiB, which land in chunks that
 * the receiver reduces as they arrive). */
static int det_cases(stitch_comm_t *comm, int rank, int p, uint64_t *h, int out)
{
    static const size_t ns[] = {100003, (1u << 20) + 3};
    static const char *const det_algos[] = {"ring", "rhd"};
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
        size_t n = ns[k];
        float *in = malloc(sizeof(float) * n * (size_t)p), *res = malloc(sizeof(float) * n * (size_t)p);
        ok = in && res;
        for (int a = 0; a < 2 && ok; a++) {
            det_input(rank, n * (size_t)p, in);
            stitch_status_t st = STITCH_OK;
            for (int c = 0; c < 3 && st == STITCH_OK; c++) {
                int coll = c == 0 ? STITCH_ALL_REDUCE : c == 1 ? STITCH_REDUCE_SCATTER : STITCH_REDUCE;
                if (!has_algo(coll, det_algos[a]) || stitch_comm_set_algorithm(comm, coll, det_algos[a]) != STITCH_OK)
                    continue;
                memset(res, 0, sizeof(float) * n);
                st = c == 0   ? stitch_all_reduce(in, res, n, STITCH_FP32, STITCH_SUM, comm)
                     : c == 1 ? stitch_reduce_scatter(in, res, n, STITCH_FP32, STITCH_SUM, comm)
                              : stitch_reduce(in, res, n, STITCH_FP32, STITCH_SUM, 1 % p, comm);
                *h = fnv(*h, res, sizeof(float) * n);
            }
            if (st != STITCH_OK)
                say(out, "det %s count %zu: %s: %s\n", det_algos[a], n, stitch_strerror(st),
                    stitch_comm_last_error(comm)), ok = 0;
        }
        free(in);
        free(res);
    }
    return ok;
}

static int body_colls(stitch_comm_t *comm, int rank, int p, int out)
{
    static const size_t ns[] = {1000, 100003};
    size_t most = (size_t)p * (100003 + 3) * 8 + 64;
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    uint64_t h = 0xcbf29ce484222325ull, regs, puts;
    int ok = 1, k = 0, ran = 0;
    for (int c = 0; c < STITCH_COLL_COUNT && ok; c++)
        for (size_t a = 0; a < 4 && ok; a++) {
            if (!has_algo(c, algos[a]))
                continue;
            for (size_t ci = 0; ci < 2 && ok; ci++, k++) {
                static const int dts[] = {STITCH_FP32, STITCH_INT32, STITCH_FP64, STITCH_BF16};
                int rooted = c == STITCH_BROADCAST || c == STITCH_REDUCE || c == STITCH_SCATTER ||
                             c == STITCH_GATHER;
                coll_case cc = {c, dts[k % 4], moves_only(c) ? STITCH_SUM : k % 2 ? STITCH_MAX : STITCH_SUM, ns[ci],
                                c == STITCH_ALL_TO_ALL || c == STITCH_ALL_TO_ALL_V ? 0 : k % 2, k % 3,
                                rooted ? k % p : 0};
                ok = one_case(comm, &cc, algos[a], rank, p, &m, &h, out);
                ran++;
            }
        }
    ok = ok && det_cases(comm, rank, p, &h, out);
    counts(&regs, &puts);
    if (ok)
        say(out, "%d cases hash %016llx puts %llu\n", ran, (unsigned long long)h, (unsigned long long)puts);
    free(m.a);
    free(m.b);
    return !ok;
}

static unsigned long long field(const char *text, const char *name)
{
    const char *at = strstr(text, name);
    return at ? strtoull(at + strlen(name), NULL, 16) : 0;
}

static int sc_colls(int np)
{
    run stream, rma;
    int ok = fake_setup();
    setenv("STITCH_IB_RMA_BYTES", "0", 1);
    vspawn(&stream, np, body_colls);
    reap(&stream, DEADLINE_S);
    setenv("STITCH_IB_RMA_BYTES", "4096", 1);
    vspawn(&rma, np, body_colls);
    reap(&rma, DEADLINE_S);
    unsetenv("STITCH_IB_RMA_BYTES");
    ok = ok && all_ok(&stream, "stream") && all_ok(&rma, "one-sided");
    for (int i = 0; i < np && ok; i++) {
        unsigned long long hs = field(stream.text[i], "hash "), hr = field(rma.text[i], "hash ");
        unsigned long long ps = strtoull(strstr(stream.text[i], "puts ") + 5, NULL, 10);
        unsigned long long pr = strtoull(strstr(rma.text[i], "puts ") + 5, NULL, 10);
        if (hs != hr || ps != 0 || pr == 0) {
            printf("# rank %d: stream hash %016llx, %llu puts; one-sided hash %016llx, %llu puts\n", i, hs, ps, hr,
                   pr);
            ok = 0;
        }
    }
    printf("# colls.%d: stream: %s# one-sided: %s", np, stream.text[0], rma.text[0]);
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

static int sc_colls2(void) { return sc_colls(2); }
static int sc_colls3(void) { return sc_colls(3); }
static int sc_colls4(void) { return sc_colls(4); }

/* ---- steady ------------------------------------------------------------------------------------------------- */

static int body_steady(stitch_comm_t *comm, int rank, int p, int out)
{
    enum { N = 1 << 20 };
    float *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N), *g = malloc(sizeof(float) * N * 4);
    uint64_t r0 = 0, p0 = 0, r1, p1;
    int bad = 0;
    for (size_t i = 0; i < N; i++)
        a[i] = (float)(i % 1000 + rank);
    for (int it = 0; it < 13 && !bad; it++) {
        if (it == 3)
            counts(&r0, &p0);
        bad |= stitch_all_reduce(a, b, N, STITCH_FP32, STITCH_SUM, comm) != STITCH_OK;
        bad |= stitch_all_gather(a, g, N / p, STITCH_FP32, comm) != STITCH_OK;
        for (size_t i = 0; i < N && !bad; i += 4099)
            bad |= b[i] != (float)(p * (int)(i % 1000) + p * (p - 1) / 2);
        for (int q = 0; q < p && !bad; q++)
            bad |= g[(size_t)q * (N / p) + 7] != (float)(7 + q);
    }
    counts(&r1, &p1);
    say(out, "%s; registrations: %llu in warm-up, %llu in 10 steady calls; one-sided messages %llu in them\n",
        bad ? stitch_comm_last_error(comm) : "right", (unsigned long long)r0, (unsigned long long)(r1 - r0),
        (unsigned long long)(p1 - p0));
    free(a), free(b), free(g);
    return bad || r1 != r0 || p1 == p0 || r0 == 0;
}

static int sc_steady(void)
{
    run r;
    int ok = fake_setup();
    vspawn(&r, 4, body_steady);
    reap(&r, DEADLINE_S);
    ok = ok && all_ok(&r, "steady");
    printf("# steady: rank 0: %s", r.text[0]);
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

/* ---- evict -------------------------------------------------------------------------------------------------- */

static int body_evict(stitch_comm_t *comm, int rank, int p, int out)
{
    enum { N = 1 << 15, SETS = 3 }; /* 128 KiB inputs, 512 KiB outputs at 4 ranks */
    float *in[SETS], *res[SETS];
    int bad = 0;
    for (int s = 0; s < SETS; s++) {
        in[s] = aligned_alloc(4096, sizeof(float) * N), res[s] = aligned_alloc(4096, sizeof(float) * N * 4);
        for (size_t i = 0; i < N; i++)
            in[s][i] = (float)(i % 777 + rank * 3 + s);
    }
    for (int it = 0; it < 12 && !bad; it++) {
        int s = it % SETS;
        memset(res[s], 0, sizeof(float) * N * 4);
        bad |= stitch_all_gather(in[s], res[s], N, STITCH_FP32, comm) != STITCH_OK;
        for (int q = 0; q < p && !bad; q++)
            for (size_t i = 0; i < N && !bad; i += 97)
                bad |= res[s][(size_t)q * N + i] != (float)(i % 777 + q * 3 + s);
        bad |= stitch_all_reduce(in[s], res[s], N, STITCH_FP32, STITCH_SUM, comm) != STITCH_OK;
        for (size_t i = 0; i < N && !bad; i += 97)
            bad |= res[s][i] != (float)(p * (int)(i % 777 + s) + 3 * p * (p - 1) / 2);
    }
    st_mrc_stats st;
    st_tp_verbs_cache_stats(&st);
    say(out, "%s; %llu registrations, %llu evictions, %llu refused, %zu bytes pinned at most\n",
        bad ? stitch_comm_last_error(comm) : "right", (unsigned long long)st.regs, (unsigned long long)st.evictions,
        (unsigned long long)st.refused, st.pinned_max);
    for (int s = 0; s < SETS; s++)
        free(in[s]), free(res[s]);
    return bad || st.evictions == 0 || st.pinned_max > 256 * 1024;
}

static int sc_evict(void)
{
    run r;
    int ok = fake_setup();
    setenv("STITCH_IB_MR_CACHE_BYTES", "256k", 1);
    setenv("STITCH_IB_RMA_BYTES", "4096", 1);
    vspawn(&r, 4, body_evict);
    reap(&r, DEADLINE_S);
    unsetenv("STITCH_IB_MR_CACHE_BYTES");
    unsetenv("STITCH_IB_RMA_BYTES");
    ok = ok && all_ok(&r, "evict");
    printf("# evict: rank 0: %s", r.text[0]);
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

/* ---- invalidate --------------------------------------------------------------------------------------------- */

/* all_gather of n floats per rank into out; 0 when every element is right. */
static int gather_check(stitch_comm_t *comm, const float *in, float *out, size_t n, int p, int tag)
{
    memset(out, 0, sizeof(float) * n * (size_t)p);
    if (stitch_all_gather(in, out, n, STITCH_FP32, comm) != STITCH_OK)
        return 1;
    for (int q = 0; q < p; q++)
        for (size_t i = 0; i < n; i += 61)
            if (out[(size_t)q * n + i] != (float)(i % 1013 + q * 10 + tag))
                return 1;
    return 0;
}

static void fill(float *in, size_t n, int rank, int tag)
{
    for (size_t i = 0; i < n; i++)
        in[i] = (float)(i % 1013 + rank * 10 + tag);
}

static int body_invalidate(stitch_comm_t *comm, int rank, int p, int out)
{
    enum { N = 1 << 20 }; /* 4 MiB per rank */
    size_t big = sizeof(float) * N * (size_t)p;
    float *in = malloc(sizeof(float) * N);
    uint64_t r0, r1, r2, puts;
    char *a = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int bad = a == MAP_FAILED;
    /* (a) explicit: the same range mapped again in full, after stitch_mr_invalidate */
    fill(in, N, rank, 1);
    bad = bad || gather_check(comm, in, (float *)a, N, p, 1) || gather_check(comm, in, (float *)a, N, p, 1);
    counts(&r0, &puts);
    stitch_mr_invalidate(a, big);
    bad = bad || munmap(a, big) != 0 ||
          mmap(a, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != a;
    fill(in, N, rank, 2);
    bad = bad || gather_check(comm, in, (float *)a, N, p, 2);
    counts(&r1, &puts);
    /* (b) noticed: a smaller buffer at the freed one's address, so small that every rank's entry for its part of
     * the old one reaches past it (rank q's block of the old buffer began at q * 4 MiB) */
    bad = bad || munmap(a, big) != 0 ||
          mmap(a, big / 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != a;
    fill(in, N / 4, rank, 3);
    bad = bad || gather_check(comm, in, (float *)a, N / 4, p, 3);
    counts(&r2, &puts);
    say(out, "%s; registrations: %llu, then %llu after stitch_mr_invalidate, %llu after the remap; puts %llu\n",
        bad ? "WRONG" : "right", (unsigned long long)r0, (unsigned long long)r1, (unsigned long long)r2,
        (unsigned long long)puts);
    munmap(a, big / 4);
    free(in);
    return bad || r1 <= r0 || r2 <= r1 || puts == 0;
}

static int sc_invalidate(void)
{
    run r;
    int ok = fake_setup();
    vspawn(&r, 2, body_invalidate);
    reap(&r, DEADLINE_S);
    ok = ok && all_ok(&r, "invalidate");
    printf("# invalidate: rank 0: %s", r.text[0]);
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

/* ---- fault.deadpeer ----------------------------------------------------------------------------------------- */

static int body_fault(stitch_comm_t *comm, int rank, int p, int out)
{
    enum { N = 1 << 16 };
    float *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    char err[256];
    (void)p;
    if (rank == 1 && st_fake_faults("deadpeer:after=40,count=1", err, sizeof err) != 0) {
        say(out, "st_fake_faults: %s\n", err);
        return 4;
    }
    for (int i = 0; i < 20; i++) {
        double t0 = now();
        stitch_status_t st = stitch_all_reduce(a, b, N, STITCH_FP32, STITCH_SUM, comm);
        if (st != STITCH_OK) {
            uint64_t regs, puts;
            counts(&regs, &puts);
            say(out, "call %d failed after %.3f s (puts %llu): %s: %s\n", i, now() - t0, (unsigned long long)puts,
                stitch_strerror(st), stitch_comm_last_error(comm));
            free(a), free(b);
            return 10;
        }
    }
    free(a), free(b);
    say(out, "20 calls passed\n");
    return 0;
}

static int sc_fault(void)
{
    run r;
    int ok = fake_setup();
    setenv("STITCH_TIMEOUT", "4", 1);
    setenv("STITCH_IB_RMA_BYTES", "4096", 1);
    vspawn(&r, 4, body_fault);
    reap(&r, DEADLINE_S);
    unsetenv("STITCH_TIMEOUT");
    unsetenv("STITCH_IB_RMA_BYTES");
    for (int i = 0; i < r.n; i++) {
        const char *t = r.text[i], *after = strstr(t, "failed after ");
        double s = after ? atof(after + 13) : 1e9;
        int names = 0;
        for (int j = 0; j < r.n; j++) {
            char who[32];
            snprintf(who, sizeof who, "rank %d ", j);
            names |= j != i && strstr(t, who) != NULL;
        }
        int cause = strstr(t, "IBV_WC_RETRY_EXC_ERR") || strstr(t, "aborted") || strstr(t, "IBV_WC_WR_FLUSH_ERR");
        if (r.status[i] != 10 || !names || !cause || s > 8.0 || strstr(t, "leak after destroy")) {
            printf("# fault.deadpeer: rank %d exited %d after %.3f s, names a peer %d, cause %d: %s", i, r.status[i],
                   s, names, cause, t);
            ok = 0;
        }
    }
    printf("# fault.deadpeer: rank 0: %s", r.text[0]);
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

/* ---- bench.long: busbw, stream against one-sided, on the emulator (not a ctest: figures, not a check) ------- */

static size_t bench_bytes;
static int bench_coll;

static int body_bench(stitch_comm_t *comm, int rank, int p, int out)
{
    size_t n = bench_bytes / sizeof(float);
    float *a = malloc(bench_bytes * (size_t)p), *b = malloc(bench_bytes * (size_t)p);
    int iters = 10;
    for (size_t i = 0; i < n * (size_t)p; i++)
        a[i] = (float)(i % 100 + rank);
    double best = 1e9;
    for (int it = -2; it < iters; it++) { /* two warm-up calls: the cache and the rings warm */
        stitch_barrier(comm);
        double t0 = now();
        stitch_status_t st = bench_coll == STITCH_ALL_REDUCE
                                 ? stitch_all_reduce(a, b, n, STITCH_FP32, STITCH_SUM, comm)
                                 : stitch_all_gather(a, b, n / (size_t)p, STITCH_FP32, comm);
        stitch_barrier(comm);
        double t = now() - t0;
        if (st != STITCH_OK) {
            say(out, "%s\n", stitch_comm_last_error(comm));
            return 1;
        }
        if (it >= 0 && t < best)
            best = t;
    }
    double factor = bench_coll == STITCH_ALL_REDUCE ? 2.0 * (p - 1) / p : (double)(p - 1) / p;
    if (rank == 0)
        say(out, "%.3f", (double)bench_bytes * factor / best / 1e9);
    free(a), free(b);
    return 0;
}

static int sc_bench(void)
{
    static const size_t sizes[] = {(size_t)4 << 20, (size_t)16 << 20};
    static const int nps[] = {2, 4};
    int ok = fake_setup();
    const char *spin = getenv("RMA_BENCH_SPIN_US"); /* STITCH_SPIN_US for the ranks (proc_main cleared it) */
    if (spin)
        setenv("STITCH_SPIN_US", spin, 1);
    printf("# busbw GB/s on the emulator (best of 10), stream (STITCH_IB_RMA_BYTES=0) against one-sided (64k)\n");
    printf("# coll        np   bytes     stream  one-sided  ratio\n");
    for (int c = 0; c < 2 && ok; c++)
        for (int ni = 0; ni < 2 && ok; ni++)
            for (int si = 0; si < 2 && ok; si++) {
                double bw[2] = {0, 0};
                for (int mode = 0; mode < 2 && ok; mode++) {
                    run r;
                    bench_coll = c == 0 ? STITCH_ALL_REDUCE : STITCH_ALL_GATHER, bench_bytes = sizes[si];
                    setenv("STITCH_IB_RMA_BYTES", mode ? "64k" : "0", 1);
                    vspawn(&r, nps[ni], body_bench);
                    reap(&r, DEADLINE_S * 4);
                    ok = all_ok(&r, "bench");
                    bw[mode] = atof(r.text[0]);
                }
                printf("# %-11s %d %6zu MB  %7.3f  %9.3f  %5.2f\n", stitch_coll_name(bench_coll), nps[ni],
                       sizes[si] >> 20, bw[0], bw[1], bw[1] / bw[0]);
                fflush(stdout);
            }
    unsetenv("STITCH_IB_RMA_BYTES");
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

int main(int argc, char **argv)
{
    (void)spawn, (void)det_input;
    static const proc_scenario scenarios[] = {
        {"colls.2", sc_colls2}, {"colls.3", sc_colls3},         {"colls.4", sc_colls4}, {"steady", sc_steady},
        {"evict", sc_evict},    {"invalidate", sc_invalidate}, {"fault.deadpeer", sc_fault},
        {"bench.long", sc_bench},
    };
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
