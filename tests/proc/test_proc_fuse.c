/* test_proc_fuse.c - fused receive-reduce-send (exec_msg.c) is bit-identical to the unfused path, ranks as processes.
 *
 *   test_proc_fuse npN     (N = 2..5; ctest: proc.fuse.npN; proc.fuse.np3.tinyring: through 4 KiB rings)
 *   test_proc_fuse np3.tcp  the same over tcp, which does not fuse (transport.h's `fuse`: slower there): the
 *                           runs agree and neither sends a byte fused
 *
 * Each scenario runs the same list of calls twice on N forked ranks (over shm but for np3.tcp), once with fusion (the default) and
 * once with STITCH_FUSE=0: every collective x every algorithm x every dtype, out of place, rooted ones at root
 * N - 1, counts 0, 1, an odd 4099 and one whose per-rank block is larger than two fusion chunks (ST_FUSE_CHUNK, 64
 * KiB) and spans segments; floating-point inputs are order-dependent (a different order of additions gives other
 * bits). Every rank hashes every byte of its receive buffer per collective, and the two runs must agree on every
 * hash of every rank. The fused run must have sent bytes fused (st_msg_fused_bytes), the unfused run none: a test
 * whose fusion never ran could not fail. Results of integer dtypes and of the collectives that only move data are
 * also checked against coll_data.h's expectations. Prints TAP.
 */
#include <stdint.h>

#include "coll_data.h"
#include "procrun.h"

extern unsigned long long st_msg_fused_bytes; /* exec_msg.c */

static const int dtypes[] = {STITCH_INT32, STITCH_FP32, STITCH_FP64, STITCH_FP16, STITCH_BF16,
                             STITCH_INT8,  STITCH_UINT8, STITCH_INT16, STITCH_INT64};
enum { NDTYPES = (int)(sizeof dtypes / sizeof dtypes[0]), NCOUNTS = 4 };

/* The counts of a dtype on p ranks: the last gives each rank a block of about 150 KB (> 2 chunks). */
static size_t count_of(int k, int p, size_t es)
{
    static const size_t small[] = {0, 1, 4099};
    return k < 3 ? small[k] : (size_t)p * 150000 / es + 7;
}

static uint64_t fnv(uint64_t h, const void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
    return h;
}

/* Order-dependent floating-point input: fractional values of mixed magnitude (fp32: coll_data.h's). */
static void float_input(int dt, int r, size_t n, void *in)
{
    if (dt == STITCH_FP32) {
        det_input(r, n, in);
        return;
    }
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = (double)(x >> 11) / 9007199254740992.0 * 1000.0 - 500.0;
        v = (x & 1) ? v / 4096.0 : v;
        if (dt == STITCH_FP64)
            ((double *)in)[i] = v;
        else if (dt == STITCH_FP32)
            ((float *)in)[i] = (float)v;
        else if (dt == STITCH_FP16)
            ((uint16_t *)in)[i] = st_f32_to_fp16((float)(v / 8.0));
        else
            ((uint16_t *)in)[i] = st_f32_to_bf16((float)v);
    }
}

static int is_float(int dt)
{
    return dt == STITCH_FP32 || dt == STITCH_FP64 || dt == STITCH_FP16 || dt == STITCH_BF16;
}

/* One call; its receive buffer folded into *h. 0 when it ran (and, where checkable, was right). */
static int one(stitch_comm_t *comm, int rank, int p, const coll_case *c, const char *algo, bufs *m, uint64_t *h,
               int out)
{
    void *send, *recv;
    size_t nin, nout, bad, es = stitch_dtype_size(c->dtype);
    setup(c, p, rank, m, &send, &recv);
    extents(c, p, rank, &nin, &nout);
    int checkable = !is_float(c->dtype) || moves_only(c->coll);
    if (!checkable)
        float_input(c->dtype, rank, nin, send);
    stitch_status_t st = call(c, p, send, recv, comm);
    if (st != STITCH_OK || (checkable && !verify(c, p, rank, recv, &bad))) {
        say(out, "%s %s %s count %zu rank %d: %s\n", stitch_coll_name(c->coll), algo, stitch_dtype_name(c->dtype),
            c->count, rank, st != STITCH_OK ? stitch_comm_last_error(comm) : "wrong result");
        return 1;
    }
    *h = fnv(*h, m->b, (size_t)p * (c->count + 3) * es);
    return 0;
}

/* Every collective, algorithm, dtype and count; reports "fused BYTES" and one hash per collective. */
static int body(stitch_comm_t *comm, int rank, int p, int out)
{
    size_t most = 0;
    for (int d = 0; d < NDTYPES; d++) {
        size_t es = stitch_dtype_size(dtypes[d]), need = (size_t)p * (count_of(3, p, es) + 3) * es + 64;
        most = need > most ? need : most;
    }
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    int bad = !m.a || !m.b;
    st_msg_fused_bytes = 0;
    for (int coll = 0; coll < STITCH_COLL_COUNT && !bad; coll++) {
        const char *names[32];
        int nalgos = stitch_algorithms(coll, names, 32);
        uint64_t h = 1469598103934665603ull;
        for (int a = 0; a < nalgos && a < 32 && !bad; a++) {
            if ((bad = stitch_comm_set_algorithm(comm, coll, names[a]) != STITCH_OK)) {
                say(out, "%s\n", stitch_comm_last_error(comm));
                break;
            }
            for (int d = 0; d < NDTYPES && !bad; d++)
                for (int k = 0; k < NCOUNTS && !bad; k++) {
                    size_t n = count_of(k, p, stitch_dtype_size(dtypes[d]));
                    coll_case c = {coll, dtypes[d], STITCH_SUM, n, 0, 0, p - 1};
                    bad = one(comm, rank, p, &c, names[a], &m, &h, out);
                }
        }
        if (!bad)
            say(out, "%d=%016llx ", coll, (unsigned long long)h);
    }
    if (!bad)
        say(out, "fused %llu\n", st_msg_fused_bytes);
    free(m.a);
    free(m.b);
    return bad;
}

static int check_np(int p, const char *transport, int fuses)
{
    run fused, plain;
    char what[64];
    static const char *off = "STITCH_FUSE=0";
    snprintf(what, sizeof what, "np%d fused", p);
    spawn(&fused, p, body, transport);
    double t1 = reap(&fused, 300);
    if (!all_ok(&fused, what))
        return 0;
    for (int i = 0; i < p; i++)
        env_of_rank[i] = off;
    snprintf(what, sizeof what, "np%d unfused", p);
    spawn(&plain, p, body, transport);
    double t2 = reap(&plain, 300);
    for (int i = 0; i < p; i++)
        env_of_rank[i] = NULL;
    if (!all_ok(&plain, what))
        return 0;
    int ok = 1;
    for (int r = 0; r < p; r++) {
        const char *a = strstr(fused.text[r], "fused "), *b = strstr(plain.text[r], "fused ");
        unsigned long long fa = a ? strtoull(a + 6, NULL, 10) : 0, fb = b ? strtoull(b + 6, NULL, 10) : 1;
        if (!a || !b || a - fused.text[r] != b - plain.text[r] ||
            strncmp(fused.text[r], plain.text[r], (size_t)(a - fused.text[r])) != 0) {
            printf("# np%d rank %d: fused and unfused results differ (collective=hash):\n#   fused   %s#   unfused %s",
                   p, r, fused.text[r], plain.text[r]);
            ok = 0;
        }
        if (fb != 0) {
            printf("# np%d rank %d: STITCH_FUSE=0 still sent %llu bytes fused\n", p, r, fb);
            ok = 0;
        }
        if (r == 0)
            printf("# np%d: rank 0 sent %llu bytes fused (%.1f s fused, %.1f s unfused)\n", p, fa, t1, t2);
        if (fuses && fa == 0) {
            printf("# np%d rank %d: sent nothing fused: fusion never ran\n", p, r);
            ok = 0;
        }
        if (!fuses && fa != 0) {
            printf("# np%d rank %d: sent %llu bytes fused over %s, which does not fuse\n", p, r, fa, transport);
            ok = 0;
        }
    }
    return ok;
}

static int sc_np2(void) { return check_np(2, "shm", 1); }
static int sc_np3(void) { return check_np(3, "shm", 1); }
static int sc_np4(void) { return check_np(4, "shm", 1); }
static int sc_np5(void) { return check_np(5, "shm", 1); }
static int sc_np3_tcp(void) { return check_np(3, "tcp", 0); }

int main(int argc, char **argv)
{
    static const proc_scenario sc[] = {{"np2", sc_np2}, {"np3", sc_np3}, {"np4", sc_np4}, {"np5", sc_np5},
                                       {"np3.tcp", sc_np3_tcp}};
    return proc_main(sc, (int)(sizeof sc / sizeof sc[0]), argc, argv);
}
