/* test_verbs_proc.c - the verbs transport (runtime/tp_verbs.c) in process mode: ranks as forked processes, every pair
 * over verbs (STITCH_TRANSPORT=verbs, also within one host), through the strict emulator (tests/verbs/fakeverbs.h,
 * one fabric shared by the processes) or, in mode `real`, through the real libibverbs.
 *
 *   colls        4 ranks: all_reduce, reduce_scatter, all_gather, broadcast, all_to_all with ring, nhr and rhd
 *                (where the collective has the algorithm), counts 0 to a many-segment 100003, every element checked
 *   colls.tiny   the same through 4 KiB rings (STITCH_IB_RING_BYTES=4096): every message waits for credits, every
 *                write is cut at the ring's end
 *   fault.KIND   4 ranks run all_reduce until it fails; rank 1's emulator injects KIND (drop, rkey, qperr, portdown,
 *                deadpeer) after a few collectives have passed. Every rank must fail (none hangs) with an error naming
 *                a peer rank and the cause, within 2 x STITCH_TIMEOUT (4 s here) of the failing call's start, and
 *                after stitch_comm_destroy the emulator's counters must show no live context, PD, MR, CQ, QP or
 *                channel in any rank (st_fake_counts). rnr: RNR NAKs are retried (rnr_retry 7), so every
 *                collective still passes, checked.
 *   real         `colls` through the real libibverbs: no emulator installed; exits 77 (skip) when the probe finds no
 *                usable device. The rxe guest (tests/rxe/) runs it on rxe0 with 4 processes:
 *                    STITCH_TRANSPORT=verbs test_verbs_proc real
 *                (STITCH_IB_DEV=rxe0 and STITCH_IB_GID_INDEX may be set; the scenario keeps them).
 *
 * Prints TAP. Each scenario runs in its own process (ctest: verbs.proc.<name>).
 */
#define _GNU_SOURCE
#include "../proc/procrun.h"

#include <errno.h>

#include "coll_data.h"
#include "config.h"
#include "tp_verbs.h"
#include "verbs.h"
#ifdef ST_HAVE_FAKE
#include "fakeverbs.h"
#endif

enum { NP = 4 };

/* ---- spawning: procrun.h's spawn over verbs, then the emulator's counters, reported through the pipe ------ */

#ifdef ST_HAVE_FAKE
static int use_fake;
static const char *fault_spec; /* injected in rank 1 after init (st_fake_faults) */

/* procrun.h's after_destroy: nothing of the emulator may outlive stitch_comm_destroy (exit 3 otherwise). */
static int fake_leaks(int out, int rc)
{
    st_fake_live lv;
    st_fake_counts(&lv);
    if (lv.contexts || lv.pds || lv.mrs || lv.cqs || lv.qps || lv.channels) {
        say(out, "leak after destroy: %d contexts, %d pds, %d mrs, %d cqs, %d qps, %d channels\n", lv.contexts,
            lv.pds, lv.mrs, lv.cqs, lv.qps, lv.channels);
        rc = rc ? rc : 3;
    }
    if (lv.cq_overruns)
        say(out, "%ld CQ overruns\n", lv.cq_overruns), rc = rc ? rc : 3;
    return rc;
}
#endif

static void vspawn(run *r, int n, rank_fn fn)
{
#ifdef ST_HAVE_FAKE
    after_destroy = use_fake ? fake_leaks : NULL;
#endif
    spawn(r, n, fn, "verbs");
}

/* ---- colls -------------------------------------------------------------------------------------------------- */

static const int colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER, STITCH_BROADCAST,
                            STITCH_ALL_TO_ALL};
static const char *const algos[] = {"ring", "nhr", "rhd"};
static const size_t counts[] = {0, 1, 7, 1000, 100003};

static int has_algo(int coll, const char *name)
{
    const char *names[32];
    int n = stitch_algorithms(coll, names, 32);
    for (int i = 0; i < n && i < 32; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static int body_colls(stitch_comm_t *comm, int rank, int p, int out)
{
    size_t most = (size_t)p * (100003 + 3) * 8 + 64;
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    int bad = 0, k = 0, ran = 0;
    for (size_t c = 0; c < sizeof colls / sizeof *colls && !bad; c++)
        for (size_t a = 0; a < 3 && !bad; a++) {
            if (!has_algo(colls[c], algos[a]))
                continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts && !bad; ci++, k++) {
                static const int dts[] = {STITCH_FP32, STITCH_INT32, STITCH_FP64, STITCH_BF16};
                coll_case cc = {colls[c], dts[k % 4], moves_only(colls[c]) ? STITCH_SUM : k % 2 ? STITCH_MAX
                                                                                                  : STITCH_SUM,
                                counts[ci], colls[c] == STITCH_ALL_TO_ALL ? 0 : k % 2, k % 3, colls[c] == STITCH_BROADCAST ? k % p : 0};
                void *send, *recv;
                size_t at;
                stitch_status_t st = stitch_comm_set_algorithm(comm, cc.coll, algos[a]);
                if (st == STITCH_OK) {
                    setup(&cc, p, rank, &m, &send, &recv);
                    st = call(&cc, p, send, recv, comm);
                }
                if (st != STITCH_OK) {
                    say(out, "%s %s count %zu: %s: %s\n", stitch_coll_name(cc.coll), algos[a], cc.count,
                        stitch_strerror(st), stitch_comm_last_error(comm));
                    bad = 1;
                } else if (!verify(&cc, p, rank, recv, &at)) {
                    say(out, "%s %s %s count %zu: element %zu is %g, expected %g\n", stitch_coll_name(cc.coll),
                        algos[a], stitch_dtype_name(cc.dtype), cc.count, at, load(cc.dtype, recv, at),
                        out_value(&cc, p, rank, at, &(int){0}));
                    bad = 1;
                }
                ran++;
            }
        }
    if (!bad)
        say(out, "%d cases\n", ran);
    free(m.a);
    free(m.b);
    return bad;
}

static int run_colls(const char *what)
{
    run r;
    vspawn(&r, NP, body_colls);
    double took = reap(&r, DEADLINE_S);
    printf("# %s: %d ranks in %.2f s; rank 0: %s", what, NP, took, r.text[0]);
    return all_ok(&r, what);
}

/* ---- faults ------------------------------------------------------------------------------------------------- */
#ifdef ST_HAVE_FAKE

static int body_fault(stitch_comm_t *comm, int rank, int p, int out)
{
    enum { N = 1 << 16 };
    (void)p;
    char err[256];
    if (rank == 1 && fault_spec && st_fake_faults(fault_spec, err, sizeof err) != 0) {
        say(out, "st_fake_faults('%s'): %s\n", fault_spec, err);
        return 4;
    }
    float *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    if (!a || !b) {
        say(out, "out of memory\n");
        free(a), free(b);
        return 6;
    }
    for (int i = 0; i < 20; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        stitch_status_t st = stitch_all_reduce(a, b, N, STITCH_FP32, STITCH_SUM, comm);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (st != STITCH_OK) {
            double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
            say(out, "call %d failed after %.3f s: %s: %s\n", i, s, stitch_strerror(st),
                stitch_comm_last_error(comm));
            free(a), free(b);
            return 10;
        }
    }
    free(a), free(b);
    say(out, "20 calls passed\n");
    if (rank == 1 && fault_spec) { /* a fault that never fired proves nothing */
        char kind[16];
        snprintf(kind, sizeof kind, "%.*s", (int)strcspn(fault_spec, ":"), fault_spec);
        long n = st_fake_fired(kind);
        say(out, "fault %s fired %ld times\n", kind, n);
        return n > 0 ? 0 : 5;
    }
    return 0;
}

/* Every rank failed (exit 10) with a message naming a rank other than itself and words of the cause, within
 * 2 x the timeout; none was killed at the deadline; nothing leaked (vspawn's check, exit 3). */
static int check_fault(const run *r, const char *kind, double limit, const char *const *causes)
{
    int ok = 1;
    for (int i = 0; i < r->n; i++) {
        const char *t = r->text[i], *after = strstr(t, "failed after ");
        double s = after ? atof(after + 13) : 1e9;
        int names = 0, cause = 0;
        for (int j = 0; j < r->n; j++) {
            char who[32];
            snprintf(who, sizeof who, "rank %d ", j);
            names |= j != i && strstr(t, who) != NULL;
        }
        for (int k = 0; causes[k]; k++)
            cause |= strcasestr(t, causes[k]) != NULL;
        int leak = strstr(t, "leak after destroy") || strstr(t, "CQ overruns");
        if (r->status[i] != 10 || !names || !cause || s > limit || leak) {
            printf("# fault.%s: rank %d exited %d after %.3f s (limit %.1f), names a peer %d, cause %d: %s", kind, i,
                   r->status[i], s, limit, names, cause, t);
            ok = 0;
        }
    }
    if (ok)
        printf("# fault.%s: rank 0: %s", kind, r->text[0]);
    return ok;
}

static int run_fault(const char *kind, const char *spec, const char *const *causes)
{
    run r;
    fault_spec = spec;
    setenv("STITCH_TIMEOUT", "4", 1);
    vspawn(&r, NP, body_fault);
    reap(&r, DEADLINE_S);
    unsetenv("STITCH_TIMEOUT");
    fault_spec = NULL;
    if (strcmp(kind, "rnr") == 0)
        return all_ok(&r, "fault.rnr");
    return check_fault(&r, kind, 8.0, causes);
}

static char fabric_id[64];

static int fake_setup(void)
{
    /* the IB timer formulas unscaled (timeout 14: 67 ms, 8 tries ~0.5 s): the emulator progresses only inside verbs
     * calls, and on a loaded 2-core host a peer descheduled for the scaled 4 ms x 8 looked dead (a spurious
     * RETRY_EXC_ERR, seen in the suite); a real NIC acknowledges without its process. Set before the fabric is
     * made: the emulator reads it once per process, and the ranks are forked from this one. */
    setenv("STITCH_FAKE_TIME_DIV", "1", 1);
    if (st_fake_fabric_create(fabric_id, sizeof fabric_id) != 0) {
        printf("# st_fake_fabric_create: %s\n", strerror(errno));
        return 0;
    }
    setenv("STITCH_FAKE_FABRIC", fabric_id, 1);
    st_verbs_set_api(st_fake_api());
    use_fake = 1;
    return 1;
}

static int sc_colls(void)
{
    int ok = fake_setup() && run_colls("colls");
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

static int sc_colls_tiny(void)
{
    setenv("STITCH_IB_RING_BYTES", "4096", 1);
    int ok = fake_setup() && run_colls("colls.tiny");
    st_fake_fabric_destroy(fabric_id);
    return ok;
}

/* What each fault must be reported as (any one of these), besides the peer. A flush is how the other end of a QP
 * that went into error learns of it (the cause is on the far side), when its own error is seen before the peer's
 * abort arrives over the control channel. */
static const char *const c_drop[] = {"IBV_WC_RETRY_EXC_ERR", NULL};
static const char *const c_rkey[] = {"IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR", NULL};
static const char *const c_qperr[] = {"IBV_EVENT_QP_FATAL", "IBV_WC_WR_FLUSH_ERR", NULL};
static const char *const c_port[] = {"IBV_EVENT_PORT_ERR", "IBV_WC_RETRY_EXC_ERR", NULL};
static const char *const c_dead[] = {"IBV_WC_RETRY_EXC_ERR", NULL};

#define FAULT_SC(fn, kind, spec, causes)                                                                           \
    static int fn(void)                                                                                            \
    {                                                                                                              \
        int ok = fake_setup() && run_fault(kind, spec, causes);                                                    \
        st_fake_fabric_destroy(fabric_id);                                                                         \
        return ok;                                                                                                 \
    }
FAULT_SC(sc_drop, "drop", "drop:after=40", c_drop)
FAULT_SC(sc_rkey, "rkey", "rkey:after=40,count=0", c_rkey)
FAULT_SC(sc_qperr, "qperr", "qperr:after=40,count=1", c_qperr)
FAULT_SC(sc_portdown, "portdown", "portdown:after=40,count=1", c_port)
FAULT_SC(sc_deadpeer, "deadpeer", "deadpeer:after=40,count=1", c_dead)
FAULT_SC(sc_rnr, "rnr", "rnr:after=10,count=5", c_dead)
#endif

/* ---- real ---------------------------------------------------------------------------------------------------- */

static int sc_real(void)
{
    char why[400];
    st_settings s;
    if (st_settings_load(NULL, &s, why, sizeof why) != STITCH_OK) {
        printf("# settings: %s\n", why);
        return 0;
    }
    if (st_tp_verbs_probe(&s, why, sizeof why) == ST_VERBS_NONE) {
        printf("# SKIP no usable verbs device: %s\n", why);
        fflush(stdout);
        _exit(77);
    }
    return run_colls("real");
}

/* The rxe guest's command: `test_verbs_proc real`; STITCH_IB_DEV and STITCH_IB_GID_INDEX are kept from the
 * environment (the other tunables are cleared as in every process test). */
static int main_real(void)
{
    const char *dev = getenv("STITCH_IB_DEV"), *gid = getenv("STITCH_IB_GID_INDEX");
    char d[128] = "", g[16] = "";
    snprintf(d, sizeof d, "%s", dev ? dev : ""), snprintf(g, sizeof g, "%s", gid ? gid : "");
    signal(SIGPIPE, SIG_IGN);
    proc_test_env();
    if (d[0])
        setenv("STITCH_IB_DEV", d, 1);
    if (g[0])
        setenv("STITCH_IB_GID_INDEX", g, 1);
    printf("1..1\n");
    int ok = sc_real();
    printf("%s 1 - real\n", ok ? "ok" : "not ok");
    return !ok;
}

int main(int argc, char **argv)
{
    (void)all_ok, (void)spawn, (void)det_input; /* the headers' helpers this program does not use */
    if (argc == 2 && strcmp(argv[1], "real") == 0)
        return main_real();
#ifdef ST_HAVE_FAKE
    static const proc_scenario scenarios[] = {
        {"colls", sc_colls},       {"colls.tiny", sc_colls_tiny}, {"fault.drop", sc_drop},
        {"fault.rkey", sc_rkey},   {"fault.qperr", sc_qperr},     {"fault.portdown", sc_portdown},
        {"fault.deadpeer", sc_deadpeer}, {"fault.rnr", sc_rnr},
    };
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
#else
    printf("Bail out! built without the emulator (tests/verbs): only `real` runs\n");
    return 1;
#endif
}
