/* test_proc_fuse.c - the message engine's two ways around a copy (exec_msg.c) are bit-identical to the plain path,
 * ranks as processes: fused receive-reduce-send (a received piece sent on while it is in the cache), and straight
 * receives (tcp: a message that is only copied goes from the kernel into place, not through the staging ring).
 *
 *   test_proc_fuse npN        (N = 2..5; ctest: proc.fuse.npN; proc.fuse.np3.tinyring: through 4 KiB rings)
 *   test_proc_fuse np3.tcp    the same over tcp, which does not fuse (transport.h's `fuse`: slower there): the
 *                             runs agree and neither sends a byte fused
 *   test_proc_fuse npN.straight  (N = 2, 3) over tcp, straight receives against every byte staged
 *                             (st_straight_off): ctest proc.straight.np2, and proc.straight.np3.tinyring through
 *                             4 KiB staging rings
 *   test_proc_fuse np2.straight.pieces  the same with every straight read cut to 61 bytes (st_tcp_piece): headers
 *                             read in two pieces, elements cut between reads (ctest proc.straight.np2.pieces)
 *
 * Each scenario runs the same list of calls twice on N forked ranks, once as is and once with the path turned off
 * (STITCH_FUSE=0; st_straight_off set in the parent before the ranks fork): every collective x every algorithm x
 * every dtype, out of place, rooted ones at root N - 1, counts 0, 1, an odd 4099 and one whose per-rank block is
 * larger than two fusion chunks (ST_FUSE_CHUNK, 64 KiB, also the least a straight receive takes) and spans
 * segments; floating-point inputs are order-dependent (a different order of additions gives other bits). Every rank
 * hashes every byte of its receive buffer per collective, and the two runs must agree on every hash of every rank.
 * The first run must have used the path (st_msg_fused_bytes, st_msg_straight_bytes), the second never: a test whose
 * path never ran could not fail. Results of integer dtypes and of the collectives that only move data are also
 * checked against coll_data.h's expectations. Prints TAP.
 */
#include <stdint.h>

#include "coll_data.h"
#include "procrun.h"

extern unsigned long long st_msg_fused_bytes, st_msg_straight_bytes; /* exec_msg.c */
extern int st_straight_off;
extern size_t st_tcp_piece; /* tp_tcp.c */

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
    if (!checkable && nin && !send) { /* setup leaves NULL only a buffer without elements */
        say(out, "%s rank %d: no send buffer for %zu elements\n", stitch_coll_name(c->coll), rank, nin);
        return 1;
    }
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

/* Every collective, algorithm, dtype and count; reports one hash per collective, then "fused BYTES straight BYTES". */
static int body(stitch_comm_t *comm, int rank, int p, int out)
{
    size_t most = 0;
    for (int d = 0; d < NDTYPES; d++) {
        size_t es = stitch_dtype_size(dtypes[d]), need = (size_t)p * (count_of(3, p, es) + 3) * es + 64;
        most = need > most ? need : most;
    }
    bufs m = {aligned_alloc(64, (most + 63) & ~(size_t)63), aligned_alloc(64, (most + 63) & ~(size_t)63)};
    int bad = !m.a || !m.b;
    st_msg_fused_bytes = st_msg_straight_bytes = 0;
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
        say(out, "fused %llu straight %llu\n", st_msg_fused_bytes, st_msg_straight_bytes);
    free(m.a);
    free(m.b);
    return bad;
}

/* The bytes a run's rank said it moved by the path ("fused N" or "straight N"); -1 when it did not say. */
static long long said(const char *text, const char *path)
{
    const char *at = strstr(text, path);
    return at ? strtoll(at + strlen(path), NULL, 10) : -1;
}

enum { FUSE, STRAIGHT };

/* The calls on p ranks over `transport` as they are, then with the path off; `used`: whether the first run must
 * have taken the path (else neither may). */
static int check_np(int p, const char *transport, int path, int used)
{
    run on, off;
    char what[64];
    const char *name = path == FUSE ? "fused" : "straight", *key = path == FUSE ? "fused " : "straight ";
    snprintf(what, sizeof what, "np%d %s", p, name);
    spawn(&on, p, body, transport);
    double t1 = reap(&on, 300);
    if (!all_ok(&on, what))
        return 0;
    for (int i = 0; i < p && path == FUSE; i++)
        env_of_rank[i] = "STITCH_FUSE=0";
    st_straight_off = path == STRAIGHT; /* the ranks fork with it */
    snprintf(what, sizeof what, "np%d without %s", p, name);
    spawn(&off, p, body, transport);
    double t2 = reap(&off, 300);
    st_straight_off = 0;
    for (int i = 0; i < p; i++)
        env_of_rank[i] = NULL;
    if (!all_ok(&off, what))
        return 0;
    int ok = 1;
    for (int r = 0; r < p; r++) {
        const char *a = strstr(on.text[r], "fused "), *b = strstr(off.text[r], "fused ");
        long long na = said(on.text[r], key), nb = said(off.text[r], key);
        if (!a || !b || a - on.text[r] != b - off.text[r] || strncmp(on.text[r], off.text[r], (size_t)(a - on.text[r]))) {
            printf("# np%d rank %d: results differ with and without %s (collective=hash):\n#   with    %s#   without %s",
                   p, r, name, on.text[r], off.text[r]);
            ok = 0;
        }
        if (nb != 0) {
            printf("# np%d rank %d: with %s off, %lld bytes still went that way\n", p, r, name, nb);
            ok = 0;
        }
        if (r == 0)
            printf("# np%d: rank 0 moved %lld bytes %s (%.1f s with, %.1f s without)\n", p, na, name, t1, t2);
        if (used && na <= 0) {
            printf("# np%d rank %d: moved nothing %s: the path never ran\n", p, r, name);
            ok = 0;
        }
        if (!used && na != 0) {
            printf("# np%d rank %d: moved %lld bytes %s over %s, which does not take that path\n", p, r, na, name,
                   transport);
            ok = 0;
        }
    }
    return ok;
}

static int sc_np2(void) { return check_np(2, "shm", FUSE, 1); }
static int sc_np3(void) { return check_np(3, "shm", FUSE, 1); }
static int sc_np4(void) { return check_np(4, "shm", FUSE, 1); }
static int sc_np5(void) { return check_np(5, "shm", FUSE, 1); }
static int sc_np3_tcp(void) { return check_np(3, "tcp", FUSE, 0); }
static int sc_np2_straight(void) { return check_np(2, "tcp", STRAIGHT, 1); }
static int sc_np3_straight(void) { return check_np(3, "tcp", STRAIGHT, 1); }
/* Every straight read cut to 61 bytes: headers read in two pieces, elements of 2, 4 and 8 bytes cut between reads. */
static int sc_np2_straight_pieces(void)
{
    st_tcp_piece = 61; /* the ranks fork with it */
    int ok = check_np(2, "tcp", STRAIGHT, 1);
    st_tcp_piece = 0;
    return ok;
}

int main(int argc, char **argv)
{
    static const proc_scenario sc[] = {{"np2", sc_np2},
                                       {"np3", sc_np3},
                                       {"np4", sc_np4},
                                       {"np5", sc_np5},
                                       {"np3.tcp", sc_np3_tcp},
                                       {"np2.straight", sc_np2_straight},
                                       {"np3.straight", sc_np3_straight},
                                       {"np2.straight.pieces", sc_np2_straight_pieces}};
    return proc_main(sc, (int)(sizeof sc / sizeof sc[0]), argc, argv);
}
