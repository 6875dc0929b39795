/* test_proc_regmem.c - registered memory in process mode (stitch_mem_alloc, proc/regmem.c, proc/exec_pull.c):
 * every collective on registered buffers, whole and as slices, runs the pull engine (st_pull_calls counts it) with
 * exact results on 2 to 5 processes; a rank with an unregistered buffer makes the call fall back to the message
 * engine, still exact; a segment freed while a peer holds a borrow on it waits for the borrow, and a borrow after
 * the free is refused; a rank killed mid-call (after its first step) fails its peers with an error naming it; a
 * forged handle (wrong generation, wrong id, past the end) is refused on the ranks that read it and fails the
 * call everywhere; stitch_mem_free refuses a slice, a foreign pointer and a double free; thread mode's plain
 * memory. Every scenario synchronises by messages (the call itself, p2p), never by sleeping.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../runtime/coll_data.h"
#include "procrun.h"

#include "comm.h"
#include "exec_pull.h"
#include "proc.h"
#include "regmem.h"

#define COUNT 70001 /* fp32: 280 KB, past ST_PULL_MIN_BYTES */

static const int colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER, STITCH_BROADCAST,
                            STITCH_REDUCE, STITCH_SCATTER, STITCH_GATHER, STITCH_ALL_TO_ALL,
                            STITCH_ALL_TO_ALL_V};
#define NCOLLS ((int)(sizeof colls / sizeof *colls))

/* How a rank lays out its buffers: 0 two whole registered buffers; 1 slices of one registered buffer (both
 * inside it, at odd 64-byte offsets); 2 plain malloc (an unregistered rank). */
static int layout_of_rank[MAXR];
static int expect_pull = 1; /* the calls that may pull do (1), or none does (0) */

static size_t buf_bytes(int p)
{
    return ((size_t)p * (COUNT + 3) + 64) * 8;
}

static int get_bufs(stitch_comm_t *comm, int layout, int p, bufs *m, void **whole, int out)
{
    size_t b = buf_bytes(p);
    *whole = NULL;
    if (layout == 2) {
        m->a = aligned_alloc(64, (b + 63) & ~(size_t)63), m->b = aligned_alloc(64, (b + 63) & ~(size_t)63);
        return m->a && m->b ? 0 : 1;
    }
    stitch_status_t st;
    if (layout == 0) {
        void *a, *c;
        if ((st = stitch_mem_alloc(comm, b, &a)) != STITCH_OK || (st = stitch_mem_alloc(comm, b, &c)) != STITCH_OK) {
            say(out, "stitch_mem_alloc: %s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
            return 1;
        }
        m->a = a, m->b = c;
        return 0;
    }
    if ((st = stitch_mem_alloc(comm, 2 * b + 4096, whole)) != STITCH_OK) {
        say(out, "stitch_mem_alloc: %s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
        return 1;
    }
    m->a = (unsigned char *)*whole + 3 * 64, m->b = (unsigned char *)*whole + b + 7 * 64;
    return 0;
}

static void put_bufs(stitch_comm_t *comm, int layout, bufs *m, void *whole)
{
    if (layout == 2)
        free(m->a), free(m->b);
    else if (layout == 0)
        stitch_mem_free(comm, m->a), stitch_mem_free(comm, m->b);
    else
        stitch_mem_free(comm, whole);
}

/* Every collective, out of place and in place, at two roots; data checked; the pull engine counted. */
static int body_colls(stitch_comm_t *comm, int rank, int n, int out)
{
    bufs m;
    void *whole;
    int layout = layout_of_rank[rank], bad = 0;
    if (get_bufs(comm, layout, n, &m, &whole, out))
        return 1;
    for (int i = 0; i < NCOLLS && !bad; i++)
        for (int v = 0; v < 2 && !bad; v++) {
            int coll = colls[i];
            coll_case c = {coll, v ? STITCH_INT32 : STITCH_FP32, v ? STITCH_MAX : STITCH_SUM, COUNT,
                           coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V ? 0 : v, 0, v ? n - 1 : 0};
            void *send, *recv;
            size_t at;
            long before = atomic_load(&st_pull_calls);
            setup(&c, n, rank, &m, &send, &recv);
            stitch_status_t st = call(&c, n, send, recv, comm);
            long pulled = atomic_load(&st_pull_calls) - before;
            int want = expect_pull && coll != STITCH_ALL_TO_ALL_V;
            if (st != STITCH_OK)
                say(out, "%s form %d: %s: %s\n", stitch_coll_name(coll), v, stitch_strerror(st),
                    stitch_comm_last_error(comm)), bad = 1;
            else if (!verify(&c, n, rank, c.coll == STITCH_ALL_REDUCE && c.inplace ? send : recv, &at))
                say(out, "%s form %d: wrong data at %zu\n", stitch_coll_name(coll), v, at), bad = 1;
            else if (pulled != want)
                say(out, "%s form %d: %s engine ran, expected the %s\n", stitch_coll_name(coll), v,
                    pulled ? "the pull" : "the message", want ? "pull engine" : "message engine"), bad = 1;
        }
    put_bufs(comm, layout, &m, whole);
    return bad;
}

static int run_colls(int n, const char *what)
{
    run r;
    spawn(&r, n, body_colls, NULL);
    reap(&r, DEADLINE_S);
    int ok = all_ok(&r, what);
    for (int i = 0; i < MAXR; i++)
        layout_of_rank[i] = 0, env_of_rank[i] = NULL;
    expect_pull = 1;
    return ok;
}

static int sc_np2(void) { return run_colls(2, "np2"); }
static int sc_np3(void) { return run_colls(3, "np3"); }
static int sc_np4(void) { return run_colls(4, "np4"); }
static int sc_np5(void) { return run_colls(5, "np5"); }

static int sc_slices(void)
{
    for (int i = 0; i < 3; i++)
        layout_of_rank[i] = 1 + 0 * i;
    layout_of_rank[1] = 0; /* whole buffers and slices in one call */
    return run_colls(3, "slices");
}

static int sc_mixed(void)
{
    layout_of_rank[2] = 2; /* rank 2's buffers are plain memory: every call falls back, results exact */
    expect_pull = 0;
    return run_colls(4, "mixed");
}

/* Plans made before a communicator's first stitch_mem_alloc are a rank's own (its transfers only), which the pull
 * engine cannot run; the first allocation makes them whole. Every collective runs on plain buffers first (own plans,
 * the message engine), then on registered ones, on the same communicator: those pull. */
static int body_late(stitch_comm_t *comm, int rank, int n, int out)
{
    layout_of_rank[rank] = 2, expect_pull = 0;
    if (body_colls(comm, rank, n, out))
        return 1;
    layout_of_rank[rank] = 0, expect_pull = 1;
    return body_colls(comm, rank, n, out);
}

static int sc_late(void)
{
    run r;
    spawn(&r, 3, body_late, NULL);
    reap(&r, DEADLINE_S);
    return all_ok(&r, "late");
}

/* STITCH_CMA=1: unregistered buffers are pulled with process_vm_readv (whole plain buffers, or a mix with
 * registered ones); one rank without it makes every call stream. */
static int sc_cma(void)
{
    for (int i = 0; i < 3; i++)
        layout_of_rank[i] = 2, env_of_rank[i] = "STITCH_CMA=1";
    return run_colls(3, "cma");
}

static int sc_cma_mixed(void)
{
    for (int i = 0; i < 4; i++)
        layout_of_rank[i] = i % 3, env_of_rank[i] = "STITCH_CMA=1";
    return run_colls(4, "cma.mixed");
}

static int sc_cma_off(void)
{
    for (int i = 0; i < 3; i++)
        layout_of_rank[i] = 2, env_of_rank[i] = i == 1 ? NULL : "STITCH_CMA=1";
    expect_pull = 0;
    return run_colls(3, "cma.off");
}

/* ---- freed while a peer reads: the borrow rules across processes ---------------------------------------------- */

/* Rank 0 gives rank 1 the handles of two segments A and B (over p2p); rank 1 borrows both, then tells rank 0, which
 * frees A: the free must wait for rank 1's borrow, which rank 1 returns only after writing a mark into B, so rank
 * 0 finds the mark once its free returns. Then rank 1's new borrow of A is refused (freed), and handles with a
 * wrong generation, a wrong id or a range past the end are refused (stale or forged). */
static int body_free(stitch_comm_t *comm, int rank, int n, int out)
{
    (void)n;
    st_proc *pr = comm->proc;
    void *a, *b;
    st_reg_handle h[2];
    char err[400];
    int token = 0, bad = 0;
    if (rank == 0) {
        if (stitch_mem_alloc(comm, 1 << 20, &a) != STITCH_OK || stitch_mem_alloc(comm, 4096, &b) != STITCH_OK)
            return say(out, "alloc: %s\n", stitch_comm_last_error(comm)), 1;
        memset(a, 0x5a, 1 << 20);
        *(volatile int *)b = 0;
        st_regmem_find(pr->regmem, a, 1 << 20, &h[0]);
        st_regmem_find(pr->regmem, b, 4096, &h[1]);
        stitch_send(h, sizeof h, STITCH_UINT8, 1, comm);
        stitch_recv(&token, 1, STITCH_INT32, 1, comm); /* rank 1 holds its borrows */
        if (stitch_mem_free(comm, a) != STITCH_OK)
            return say(out, "free: %s\n", stitch_comm_last_error(comm)), 1;
        if (atomic_load((_Atomic int *)b) != 1)
            say(out, "the free returned before rank 1 returned its borrow\n"), bad = 1;
        stitch_send(&token, 1, STITCH_INT32, 1, comm);
        stitch_recv(&token, 1, STITCH_INT32, 1, comm); /* rank 1 is done with B */
        return bad;
    }
    st_seg_hdr *sa, *sb;
    char *pa, *pb;
    if (!st_proc_regmem(pr))
        return 1;
    stitch_recv(h, sizeof h, STITCH_UINT8, 0, comm);
    unsigned pid = pr->boot.peers[0].pid;
    if (st_regmem_borrow(pr->regmem, 0, pid, &h[0], 1 << 20, &sa, &pa, err, sizeof err) != 0 ||
        st_regmem_borrow(pr->regmem, 0, pid, &h[1], 4096, &sb, &pb, err, sizeof err) != 0)
        return say(out, "borrow: %s\n", err), 1;
    stitch_send(&token, 1, STITCH_INT32, 0, comm); /* rank 0 frees A now, and must wait for this borrow */
    for (size_t i = 0; i < 1 << 20; i++)
        bad |= (unsigned char)pa[i] != 0x5a;
    atomic_store((_Atomic int *)pb, 1);
    st_regmem_return(sa, 1);
    stitch_recv(&token, 1, STITCH_INT32, 0, comm); /* A is freed */
    if (st_regmem_borrow(pr->regmem, 0, pid, &h[0], 16, &sa, &pa, err, sizeof err) == 0 || !strstr(err, "freed"))
        say(out, "a borrow after the free was not refused as freed: %s\n", err), bad = 1;
    st_reg_handle f = h[1];
    f.gen ^= 1;
    if (st_regmem_borrow(pr->regmem, 0, pid, &f, 16, &sa, &pa, err, sizeof err) == 0 || !strstr(err, "forged"))
        say(out, "a wrong generation was not refused: %s\n", err), bad = 1;
    f = h[1], f.id += 1000;
    if (st_regmem_borrow(pr->regmem, 0, pid, &f, 16, &sa, &pa, err, sizeof err) == 0 || !strstr(err, "forged"))
        say(out, "a wrong id was not refused: %s\n", err), bad = 1;
    f = h[1], f.off = 4000;
    if (st_regmem_borrow(pr->regmem, 0, pid, &f, 4096, &sa, &pa, err, sizeof err) == 0 || !strstr(err, "past"))
        say(out, "a range past the end was not refused: %s\n", err), bad = 1;
    st_regmem_return(sb, 1);
    stitch_send(&token, 1, STITCH_INT32, 0, comm);
    return bad;
}

static int sc_free(void)
{
    run r;
    spawn(&r, 2, body_free, NULL);
    reap(&r, DEADLINE_S);
    return all_ok(&r, "free");
}

/* ---- a peer killed mid-call ---------------------------------------------------------------------------------- */

static void kill_at_step(uint64_t call, uint32_t g)
{
    if (call == 2 && g == 1)
        raise(SIGKILL);
}

static int body_kill(stitch_comm_t *comm, int rank, int n, int out)
{
    float *a, *b;
    if (stitch_mem_alloc(comm, COUNT * 4, (void **)&a) != STITCH_OK ||
        stitch_mem_alloc(comm, COUNT * 4, (void **)&b) != STITCH_OK)
        return 1;
    if (rank == n - 1)
        st_pull_step_hook = kill_at_step;
    for (size_t i = 0; i < COUNT; i++)
        a[i] = (float)rank;
    for (int it = 0; it < 5; it++) {
        stitch_status_t st = stitch_all_reduce(a, b, COUNT, STITCH_FP32, STITCH_SUM, comm);
        if (st != STITCH_OK) {
            const char *e = stitch_comm_last_error(comm);
            say(out, "call %d: %s: %s\n", it, stitch_strerror(st), e);
            return it == 2 && strstr(e, "rank 2") && strstr(e, "died") ? 0 : 1;
        }
    }
    say(out, "every call succeeded\n");
    return 1;
}

static int sc_kill(void)
{
    run r;
    /* the default timeout (300 s) is past the test's deadline: the survivors must learn of the death from its
     * closed control channel, not from a timeout, and must not wait for the borrows the dead rank still holds */
    spawn(&r, 3, body_kill, NULL);
    reap(&r, DEADLINE_S);
    int ok = r.status[2] == 128 + SIGKILL;
    for (int i = 0; i < 2; i++)
        ok &= r.status[i] == 0;
    for (int i = 0; i < 3; i++)
        printf("# kill: rank %d exited %d: %s", i, r.status[i], r.text[i][0] ? r.text[i] : "\n");
    return ok;
}

/* ---- forged handles ------------------------------------------------------------------------------------------- */

static int forge_kind;

static void forge(st_reg_handle *board, st_reg_handle *regions, int n)
{
    static int calls;
    (void)board, (void)n;
    if (calls++ < 1) /* the first call runs honestly: the peers have the segment mapped when the forgery comes */
        return;
    if (forge_kind == 0)
        regions[1].gen ^= 0x100; /* the input (send buffer) region */
    else if (forge_kind == 1)
        regions[1].id += 7;
    else
        regions[1].off += (size_t)1 << 30;
}

static int body_forged(stitch_comm_t *comm, int rank, int n, int out)
{
    (void)n;
    float *a, *b, plain[4];
    int bad = 0;
    if (stitch_mem_alloc(comm, COUNT * 4, (void **)&a) != STITCH_OK ||
        stitch_mem_alloc(comm, COUNT * 4, (void **)&b) != STITCH_OK)
        return 1;
    /* stitch_mem_free refuses what it never gave out */
    bad |= stitch_mem_free(comm, a + 16) != STITCH_ERR_INVALID_ARGUMENT || !strstr(stitch_comm_last_error(comm),
                                                                                     "slice");
    bad |= stitch_mem_free(comm, plain) != STITCH_ERR_INVALID_ARGUMENT;
    if (bad)
        say(out, "stitch_mem_free accepted a slice or a foreign pointer: %s\n", stitch_comm_last_error(comm));
    if (rank == 1)
        st_pull_hello_hook = forge;
    for (size_t i = 0; i < COUNT; i++)
        a[i] = 1;
    stitch_status_t st = stitch_all_reduce(a, b, COUNT, STITCH_FP32, STITCH_SUM, comm);
    if (st != STITCH_OK)
        return say(out, "the honest call failed: %s\n", stitch_comm_last_error(comm)), 1;
    st = stitch_all_reduce(a, b, COUNT, STITCH_FP32, STITCH_SUM, comm);
    const char *e = stitch_comm_last_error(comm);
    say(out, "%s: %s\n", stitch_strerror(st), e);
    if (st == STITCH_OK)
        return 1;
    if (strstr(e, "forged") || strstr(e, "stale"))
        say(out, "refused\n");
    return bad;
}

static int run_forged(int kind)
{
    run r;
    forge_kind = kind;
    spawn(&r, 3, body_forged, NULL);
    reap(&r, DEADLINE_S);
    int ok = all_ok(&r, "forged"), refused = 0;
    for (int i = 0; i < 3; i++) {
        refused += strstr(r.text[i], "refused\n") != NULL;
        printf("# forged %d: rank %d: %s", kind, i, r.text[i]);
    }
    return ok && refused >= 1;
}

static int sc_forged_gen(void) { return run_forged(0); }
static int sc_forged_id(void) { return run_forged(1); }
static int sc_forged_bounds(void) { return run_forged(2); }

/* ---- thread mode: plain memory --------------------------------------------------------------------------------- */

static int sc_threads(void)
{
    stitch_comm_t *comm;
    char err[256];
    float *x, plain[2];
    if (stitch_comm_init_threads(1, NULL, &comm, err, sizeof err) != STITCH_OK)
        return printf("# threads: %s\n", err), 0;
    int ok = stitch_mem_alloc(comm, 1000 * sizeof(float), (void **)&x) == STITCH_OK && ((uintptr_t)x & 4095) == 0;
    for (int i = 0; ok && i < 1000; i++)
        x[i] = (float)i;
    ok = ok && stitch_all_reduce(x, x, 1000, STITCH_FP32, STITCH_SUM, comm) == STITCH_OK && x[999] == 999.0f;
    ok = ok && stitch_mem_free(comm, x + 1) == STITCH_ERR_INVALID_ARGUMENT;
    ok = ok && stitch_mem_free(comm, plain) == STITCH_ERR_INVALID_ARGUMENT;
    ok = ok && stitch_mem_alloc(comm, 0, (void **)&x) == STITCH_ERR_INVALID_ARGUMENT;
    void *y;
    ok = ok && stitch_mem_alloc(comm, 64, &y) == STITCH_OK && stitch_mem_free(comm, y) == STITCH_OK;
    ok = ok && stitch_mem_free(comm, y) == STITCH_ERR_INVALID_ARGUMENT; /* twice */
    stitch_comm_destroy(comm); /* frees what is still allocated (the first buffer) */
    return ok;
}

static const proc_scenario scenarios[] = {
    {"np2", sc_np2},     {"np3", sc_np3},       {"np4", sc_np4},           {"np5", sc_np5},
    {"slices", sc_slices}, {"mixed", sc_mixed}, {"free", sc_free},         {"kill", sc_kill},
    {"forged.gen", sc_forged_gen}, {"forged.id", sc_forged_id}, {"forged.bounds", sc_forged_bounds},
    {"threads", sc_threads}, {"cma", sc_cma}, {"cma.mixed", sc_cma_mixed}, {"cma.off", sc_cma_off}, {"late", sc_late},
};

int main(int argc, char **argv)
{
    (void)det_input; /* coll_data.h's, unused here */
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
