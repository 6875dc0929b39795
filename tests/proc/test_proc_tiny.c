/* test_proc_tiny.c - compact messages (exec_msg.c: a message of at most 24 payload bytes over shm goes as one ring
 * line, its fingerprint packed into one word) and tiny calls replayed (exec_msg.c, replay.c), ranks as forked
 * processes.
 *
 *   test_proc_tiny npN           N = 2, 3, 5: a stream of tiny and non-tiny calls, over shm
 *   test_proc_tiny np3.tcp       the same over tcp, where no message may go compact (and replays send full headers)
 *   test_proc_tiny mismatch.npN  N = 2, 3, 5: after a stream of good calls one rank's tiny call disagrees
 *   test_proc_tiny p2p           a receive that finds a collective's compact message names it
 *   test_proc_tiny p2p.replayed  the same where the collective's call is replayed
 *   test_proc_tiny death.np3     a rank dies between replayed calls: the others fail promptly, naming it
 *   test_proc_tiny a2av.npN      N = 1, 2, 3: small all_to_all_v calls whose arrays change: never replayed
 *   test_proc_tiny inplace.npN   N = 2, 3: in-place forms (a buffer at a block of the other) and apart, alternating
 *   test_proc_tiny a2a.npN       N = 2, 3: all_to_all with recvbuf right after sendbuf, then elsewhere
 *
 * npN: every rank runs the same stream of 420 calls: all_reduce (every algorithm in turn, each call three times;
 * fp32 sum on fractional, order-dependent values, int32 max, fp64 sum at exactly 24 bytes, fp32 at 28 bytes: just
 * too many), reduce,
 * broadcast and all_gather of a few elements, and an all_reduce of 1000 elements, rooted ones at every root in
 * turn; then 96 all_reduce calls of 160 bytes (a full header and 5 ring lines a message, so that on 4 KiB rings
 * their frames meet the wraps). Integer results are checked against their expected values; every rank hashes every
 * output. The stream runs
 * four times: as it is, with the test hook st_msg_compact_off (every message a full header, as before compact
 * messages), with st_replay_off (every tiny call walks its plan) and with st_msg_fast_off (every replayed call leaves
 * its fast path for the full replay at its first receive): the hashes of every rank must be equal (bit-identical
 * results), the first run must have sent and received compact messages (over shm) and replayed tiny calls on every
 * rank (st_msg_compact_sent/recv, st_msg_replays: the paths ran; at np 2 some on the fast path), the second no
 * compact message but replays (of full-header messages), the third no replay, the fourth replays, none of them
 * fast. The tiny all_reduce's buffers move between calls (an offset of 0-2 elements) and run in place every
 * other time, as a program's roles must follow them.
 *
 * mismatch.npN: after 40 good calls of the stream and two good ones of the shape to come (so that the good ranks
 * replay it), rank N-1 calls all_reduce with another op, another count, another dtype, or 200 elements (a full header
 * against compact ones), or a reduce to another root (after two good reduces to root 0: the hello that every rank of a
 * rooted call sends names it). Every rank must fail within the timeout, with
 * STITCH_ERR_MISMATCH or the abort of one that did, and at least one must name both sides' values (st_fp_differ's
 * text: "op sum" and "op max"...). A rank still in a good call when a peer that ran ahead found the mismatch is
 * aborted there: it passes when its message names both sides (make test found one, 1 run in ~100). Prints TAP.
 */
#include <stdint.h>

#include "procrun.h"

/* exec_msg.c's counters and test hook (exec_msg.h) */
extern unsigned long long st_msg_compact_sent, st_msg_compact_recv;
extern int st_msg_compact_off;
extern unsigned long long st_msg_replays, st_msg_replays_fast, st_msg_replay_pieces;
extern int st_msg_fast_off;
extern int st_replay_off; /* replay.c */

enum { STREAM = 420, SMALL_TAIL = 96, GOOD_BEFORE_BAD = 40, BIG = 1000 };

static int compact_off, replay_off, fast_off; /* set before spawn: the children inherit them */

static uint64_t fnv(uint64_t h, const void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
    return h;
}

/* Fractional fp32 values of mixed magnitude: a different order of additions gives other bits. */
static void frac_input(int rank, int call, size_t n, float *x)
{
    uint64_t v = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1) + (uint64_t)call * 0x632be59bd9b4e019ull;
    for (size_t i = 0; i < n; i++) {
        v ^= v << 13, v ^= v >> 7, v ^= v << 17;
        double d = (double)(v >> 11) / 9007199254740992.0 * 1000.0 - 500.0;
        x[i] = (float)((v & 1) ? d / 4096.0 : d);
    }
}

/* Call k of the stream, its rep-th time (the same shape, other values, buffers elsewhere): its result folded into
 * *h; 0 when it ran and its checkable values are right. */
static int all_reduce_one(stitch_comm_t *comm, int rank, int p, int k, int rep, uint64_t *h, char *why, size_t len)
{
    const char *names[32];
    int nalgos = stitch_algorithms(STITCH_ALL_REDUCE, names, 32);
    float fb[BIG + 2], gb[BIG + 2], *f = fb + (k + rep) % 3, *g = (k & 8) ? f : gb + (k + 1 + rep) % 3;
    int32_t a[6], b[6];
    double db[5], *d = db + (k + rep) % 3;
    int v = k + 1000 * rep; /* the values' seed */
    stitch_status_t st = stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, names[(k / 7) % nalgos]);
    int kind = (k / 7 / nalgos + k) % 4, bad = 0;
    size_t n = kind == 0 ? 1 + (size_t)(k % 6) : kind == 3 ? 7 : 3;
    if (st == STITCH_OK && kind == 1) { /* int32 max: exact */
        for (int i = 0; i < 6; i++)
            a[i] = (rank * 7 + i * 3 + v) % 11;
        st = stitch_all_reduce(a, b, 6, STITCH_INT32, STITCH_MAX, comm);
        for (int i = 0; st == STITCH_OK && i < 6; i++) {
            int32_t want = 0;
            for (int r = 0; r < p; r++)
                want = (r * 7 + i * 3 + v) % 11 > want ? (r * 7 + i * 3 + v) % 11 : want;
            bad |= b[i] != want;
        }
        *h = fnv(*h, b, sizeof b);
    } else if (st == STITCH_OK && kind == 2) { /* fp64, 24 bytes: the most a compact message carries */
        for (int i = 0; i < 3; i++)
            d[i] = (rank + 1) * 0.1 + i * 1e-9 + v;
        st = stitch_all_reduce(d, d, 3, STITCH_FP64, STITCH_SUM, comm);
        *h = fnv(*h, d, 3 * sizeof *d);
    } else if (st == STITCH_OK) { /* fp32: 1..6 elements, or 7 (28 bytes: a full header) */
        frac_input(rank, v, n, f);
        st = stitch_all_reduce(f, g, n, STITCH_FP32, STITCH_SUM, comm);
        *h = fnv(*h, g, n * sizeof *g);
    }
    if (st != STITCH_OK || bad)
        snprintf(why, len, "call %d.%d (all_reduce %s, kind %d): %s", k, rep, names[(k / 7) % nalgos], kind,
                 st != STITCH_OK ? stitch_comm_last_error(comm) : "wrong result");
    return st != STITCH_OK || bad;
}

/* Call k of the stream: a tiny all_reduce three times (a shape's first call records its program, the next ones
 * replay it). */
static int all_reduce_call(stitch_comm_t *comm, int rank, int p, int k, uint64_t *h, char *why, size_t len)
{
    for (int rep = 0; rep < 3; rep++)
        if (all_reduce_one(comm, rank, p, k, rep, h, why, len))
            return 1;
    return 0;
}

/* The rooted and gathering calls of the stream, and the large all_reduce. */
static int other_call(stitch_comm_t *comm, int rank, int p, int k, uint64_t *h, char *why, size_t len)
{
    static float f[BIG], g[BIG];
    int32_t a[5], b[5 * 8];
    int root = (k / 7) % p, which = k % 7, bad = 0;
    stitch_status_t st;
    for (int i = 0; i < 5; i++)
        a[i] = rank * 100 + i + k;
    memset(b, 0, sizeof b);
    if (which == 1) {
        st = stitch_reduce(a, b, 2, STITCH_INT32, STITCH_SUM, root, comm);
        for (int i = 0; st == STITCH_OK && rank == root && i < 2; i++)
            bad |= b[i] != 100 * p * (p - 1) / 2 + p * (i + k);
    } else if (which == 3) {
        st = stitch_broadcast(a, b, 5, STITCH_INT32, root, comm);
        for (int i = 0; st == STITCH_OK && i < 5; i++)
            bad |= b[i] != root * 100 + i + k;
    } else if (which == 5) {
        st = stitch_all_gather(a, b, 2, STITCH_INT32, comm);
        for (int r = 0; st == STITCH_OK && r < p; r++)
            bad |= b[2 * r] != r * 100 + k || b[2 * r + 1] != r * 100 + 1 + k;
    } else {
        frac_input(rank, k, BIG, f);
        st = stitch_all_reduce(f, g, BIG, STITCH_FP32, STITCH_SUM, comm);
        *h = fnv(*h, g, sizeof g);
    }
    *h = fnv(*h, b, sizeof b);
    if (st != STITCH_OK || bad)
        snprintf(why, len, "call %d (kind %d, root %d): %s", k, which, root,
                 st != STITCH_OK ? stitch_comm_last_error(comm) : "wrong result");
    return st != STITCH_OK || bad;
}

/* Call k of the stream: 0, 2, 4 of every 7 a tiny all_reduce; 1, 3, 5 reduce, broadcast, all_gather; 6 the large
 * all_reduce (with whichever algorithm the last tiny one forced). */
static int stream_call(stitch_comm_t *comm, int rank, int p, int k, uint64_t *h, char *why, size_t len)
{
    int which = k % 7;
    if (which == 0 || which == 2 || which == 4)
        return all_reduce_call(comm, rank, p, k, h, why, len);
    return other_call(comm, rank, p, k, h, why, len);
}

/* The stream; reports "hash H compact SENT RECV". */
static int body_stream(stitch_comm_t *comm, int rank, int p, int out)
{
    char why[600] = "";
    uint64_t h = 1469598103934665603ull;
    st_msg_compact_off = compact_off;
    st_replay_off = replay_off;
    st_msg_fast_off = fast_off;
    st_msg_compact_sent = st_msg_compact_recv = st_msg_replays = st_msg_replays_fast = st_msg_replay_pieces = 0;
    for (int k = 0; k < STREAM; k++)
        if (stream_call(comm, rank, p, k, &h, why, sizeof why)) {
            say(out, "rank %d: %s\n", rank, why);
            return 1;
        }
    stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, "auto");
    for (int k = 0; k < SMALL_TAIL; k++) { /* full-header messages of 5 ring lines: their frames meet every wrap */
        float f[40], g[40];
        frac_input(rank, STREAM + k, 40, f);
        if (stitch_all_reduce(f, g, 40, STITCH_FP32, STITCH_SUM, comm) != STITCH_OK) {
            say(out, "rank %d: tail call %d: %s\n", rank, k, stitch_comm_last_error(comm));
            return 1;
        }
        h = fnv(h, g, sizeof g);
    }
    say(out, "hash %016llx compact %llu %llu replays %llu %llu %llu\n", (unsigned long long)h, st_msg_compact_sent,
        st_msg_compact_recv, st_msg_replays, st_msg_replays_fast, st_msg_replay_pieces);
    return 0;
}

typedef struct report {
    unsigned long long hash, sent, recv, replays, fast, pieces;
} report;

static int parse(const char *text, report *r)
{
    const char *s = strstr(text, "hash ");
    return s && sscanf(s, "hash %llx compact %llu %llu replays %llu %llu %llu", &r->hash, &r->sent, &r->recv,
                       &r->replays, &r->fast, &r->pieces) == 6;
}

/* One run of the stream with the hooks as given; 0 when a rank failed. */
static double stream_run(run *r, int p, const char *transport, int no_compact, int no_replay, int no_fast,
                         const char *what)
{
    char label[64];
    snprintf(label, sizeof label, "np%d %s", p, what);
    compact_off = no_compact, replay_off = no_replay, fast_off = no_fast;
    spawn(r, p, body_stream, transport);
    double t = reap(r, 120);
    compact_off = replay_off = fast_off = 0;
    return all_ok(r, label) ? t : 0;
}

static int check_stream(int p, const char *transport)
{
    static run on, full, walk, slow; /* as it is; full headers; no replay; replay without its fast path */
    double t1 = stream_run(&on, p, transport, 0, 0, 0, "compact");
    double t2 = t1 ? stream_run(&full, p, transport, 1, 0, 0, "full headers") : 0;
    double t3 = t2 ? stream_run(&walk, p, transport, 0, 1, 0, "no replay") : 0;
    double t4 = t3 ? stream_run(&slow, p, transport, 0, 0, 1, "no fast path") : 0;
    if (!t4)
        return 0;
    int ok = 1, shm = strcmp(transport, "shm") == 0, tiny_ring = getenv("STITCH_SHM_RING_BYTES") != NULL;
    unsigned long long pieces = 0;
    for (int r = 0; r < p; r++) {
        report a, b, c, d;
        if (!parse(on.text[r], &a) || !parse(full.text[r], &b) || !parse(walk.text[r], &c) ||
            !parse(slow.text[r], &d)) {
            printf("# np%d rank %d: no report: '%s' / '%s' / '%s' / '%s'\n", p, r, on.text[r], full.text[r],
                   walk.text[r], slow.text[r]);
            ok = 0;
            continue;
        }
        printf("# np%d %s rank %d: compact sent %llu received %llu, replayed %llu (%llu fast; %llu without the fast "
               "path) (%.1f s; full headers %.1f s, no replay %.1f s, no fast path %.1f s)\n", p, transport, r, a.sent,
               a.recv, a.replays, a.fast, d.replays, t1, t2, t3, t4);
        if (a.hash != b.hash || a.hash != c.hash || a.hash != d.hash)
            printf("# np%d rank %d: results differ: %016llx, full headers %016llx, no replay %016llx, no fast path "
                   "%016llx\n", p, r, a.hash, b.hash, c.hash, d.hash), ok = 0;
        if ((shm && (a.sent == 0 || a.recv == 0)) || a.replays == 0 || b.replays == 0 || d.replays == 0)
            printf("# np%d rank %d: no compact message sent or received, or no call replayed (with compact messages, "
                   "full headers, no fast path): a path never ran\n", p, r), ok = 0;
        if (shm && p == 2 && a.fast == 0)
            printf("# np%d rank %d: no replayed call ran on the fast path\n", p, r), ok = 0;
        if (!shm && (a.sent || a.recv))
            printf("# np%d rank %d: compact messages over %s\n", p, r, transport), ok = 0;
        if (b.sent || b.recv)
            printf("# np%d rank %d: st_msg_compact_off still sent %llu, received %llu compact\n", p, r, b.sent, b.recv),
                ok = 0;
        if (c.replays)
            printf("# np%d rank %d: st_replay_off still replayed %llu calls\n", p, r, c.replays), ok = 0;
        if (d.fast)
            printf("# np%d rank %d: st_msg_fast_off still ran %llu calls on the fast path\n", p, r, d.fast), ok = 0;
        pieces += a.pieces + b.pieces + d.pieces;
    }
    printf("# np%d %s: %llu replayed messages went or came in pieces\n", p, transport, pieces);
    if (shm && tiny_ring && pieces == 0)
        printf("# np%d: STITCH_SHM_RING_BYTES is set, yet no replayed message was cut by a ring's wrap\n", p), ok = 0;
    return ok;
}

static int sc_np2(void) { return check_stream(2, "shm"); }
static int sc_np3(void) { return check_stream(3, "shm"); }
static int sc_np5(void) { return check_stream(5, "shm"); }
static int sc_np3_tcp(void) { return check_stream(3, "tcp"); }

/* ---- a disagreement on a tiny call --------------------------------------------------------------------------- */

static int bad_kind; /* which disagreement (below), set before spawn */
static const char *const bad_names[][2] = {{"op sum", "op max"},          {"count 2", "count 3"},
                                           {"dtype fp32", "dtype int32"}, {"count 2", "count 200"},
                                           {"root 0", "root 1"}};
enum { BAD_KINDS = 5 };

/* Two good reduces to root 0 (recorded, then replayed), then one to root 1 on the odd rank. */
static int body_bad_root(stitch_comm_t *comm, int rank, int odd, int out, unsigned long long before)
{
    float x[2] = {1, 2}, y[2];
    for (int k = 0; k < 2; k++)
        if (stitch_reduce(x, y, 2, STITCH_FP32, STITCH_SUM, 0, comm) != STITCH_OK) {
            say(out, "rank %d: good reduce: %s\n", rank, stitch_comm_last_error(comm));
            return strstr(stitch_comm_last_error(comm), "communicator aborted") ? 4 : 1;
        }
    stitch_status_t st = stitch_reduce(x, y, 2, STITCH_FP32, STITCH_SUM, odd ? 1 : 0, comm);
    say(out, "compact %llu: %s: %s\n", before, stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

static int body_bad(stitch_comm_t *comm, int rank, int p, int out)
{
    char why[600] = "";
    uint64_t h = 0;
    float x[200] = {1, 2};
    for (int k = 0; k < GOOD_BEFORE_BAD; k++)
        if (stream_call(comm, rank, p, k, &h, why, sizeof why)) {
            say(out, "rank %d: good call: %s\n", rank, why);
            return strstr(why, "communicator aborted") ? 4 : 1; /* 4: a peer ran ahead, met the mismatch, aborted */
        }
    unsigned long long before = st_msg_compact_recv;
    stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, "auto");
    int odd = rank == p - 1;
    if (bad_kind == 4) /* a reduce whose root differs: every rank's hello carries its root */
        return body_bad_root(comm, rank, odd, out, before);
    for (int k = 0; k < 2; k++) /* the shape's program, recorded then replayed: the good ranks replay the bad call */
        if (stitch_all_reduce(x, x, 2, STITCH_FP32, STITCH_SUM, comm) != STITCH_OK) {
            say(out, "rank %d: good call of the shape: %s\n", rank, stitch_comm_last_error(comm));
            return strstr(stitch_comm_last_error(comm), "communicator aborted") ? 4 : 1;
        }
    size_t n = !odd || bad_kind == 0 || bad_kind == 2 ? 2 : bad_kind == 1 ? 3 : 200;
    stitch_op_t op = odd && bad_kind == 0 ? STITCH_MAX : STITCH_SUM;
    stitch_dtype_t dt = odd && bad_kind == 2 ? STITCH_INT32 : STITCH_FP32;
    stitch_status_t st = stitch_all_reduce(x, x, n, dt, op, comm);
    say(out, "compact %llu: %s: %s\n", before, stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

static int check_bad(int p, int kind)
{
    run r;
    bad_kind = kind;
    setenv("STITCH_TIMEOUT", "10", 1);
    spawn(&r, p, body_bad, "shm");
    double took = reap(&r, 40);
    unsetenv("STITCH_TIMEOUT");
    int ok = took < 30, named = 0;
    for (int i = 0; i < p; i++) {
        const char *t = r.text[i];
        int failed = r.status[i] == 3 && (strstr(t, "STITCH_ERR_MISMATCH") || strstr(t, "STITCH_ERR_ABORTED"));
        /* or still in the last good calls when a peer that ran ahead found the mismatch and aborted them all */
        int overtaken = r.status[i] == 4 && strstr(t, bad_names[kind][0]) && strstr(t, bad_names[kind][1]);
        ok &= (failed && strncmp(t, "compact 0:", 10) != 0) || overtaken; /* the good calls went compact */
        named += strstr(t, bad_names[kind][0]) && strstr(t, bad_names[kind][1]);
        printf("# mismatch np%d %s/%s: rank %d exited %d: %s", p, bad_names[kind][0], bad_names[kind][1], i,
               r.status[i], t);
    }
    printf("# mismatch np%d: every rank done in %.2f s, %d named both sides\n", p, took, named);
    return ok && named >= 1;
}

static int check_bad_all(int p)
{
    int ok = 1;
    for (int kind = 0; kind < BAD_KINDS; kind++)
        ok &= check_bad(p, kind);
    return ok;
}

static int sc_bad2(void) { return check_bad_all(2); }
static int sc_bad3(void) { return check_bad_all(3); }
static int sc_bad5(void) { return check_bad_all(5); }

/* ---- a receive that finds a collective's compact message ------------------------------------------------------ */

static int p2p_mode; /* 0: the collective's first call; 1: replayed; 2: replayed, rank 1 sends a message instead */

static int body_p2p(stitch_comm_t *comm, int rank, int p, int out)
{
    float x[2] = {1, 2};
    (void)p;
    for (int k = 0; p2p_mode && k < 2; k++) /* record, then replay: the next call of the shape is replayed */
        if (stitch_all_reduce(x, x, 2, STITCH_FP32, STITCH_SUM, comm) != STITCH_OK) {
            say(out, "good call: %s\n", stitch_comm_last_error(comm));
            return 1;
        }
    stitch_status_t st;
    if (rank == 0)
        st = stitch_all_reduce(x, x, 2, STITCH_FP32, STITCH_SUM, comm);
    else if (p2p_mode == 2 && (st = stitch_send(x, 2, STITCH_FP32, 0, comm)) == STITCH_OK)
        st = stitch_recv(x, 2, STITCH_FP32, 0, comm); /* fails when rank 0, having named the send, aborts */
    else if (p2p_mode != 2)
        st = stitch_recv(x, 2, STITCH_FP32, 0, comm);
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

static int check_p2p(int mode)
{
    run r;
    p2p_mode = mode;
    double took = spawn_with_timeout(&r, 2, body_p2p, "shm", "10", 40);
    for (int i = 0; i < 2; i++)
        printf("# p2p mode %d: rank %d exited %d: %s", mode, i, r.status[i], r.text[i]);
    printf("# p2p mode %d: done in %.2f s\n", mode, took);
    const char *named = mode == 2 ? strstr(r.text[0], "rank 1 sent a point-to-point message where rank 0 expects")
                                  : strstr(r.text[1], "rank 0 sent a collective's message where rank 1 expects");
    return took < 8 && r.status[0] == 3 && r.status[1] == 3 && named;
}

static int sc_p2p(void) { return check_p2p(0); }
static int sc_p2p_replayed(void) { return check_p2p(1) && check_p2p(2); }

/* ---- a rank dies between replayed calls ------------------------------------------------------------------------ */

static int body_death(stitch_comm_t *comm, int rank, int p, int out)
{
    float x[2] = {1, 2};
    for (int k = 0; k < 3; k++)
        if (stitch_all_reduce(x, x, 2, STITCH_FP32, STITCH_SUM, comm) != STITCH_OK) {
            say(out, "good call: %s\n", stitch_comm_last_error(comm));
            return 1;
        }
    if (rank == p - 1)
        _exit(0); /* no goodbye: its control connections close as a killed process's do */
    stitch_status_t st = stitch_all_reduce(x, x, 2, STITCH_FP32, STITCH_SUM, comm);
    say(out, "replays %llu: %s: %s\n", st_msg_replays, stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

static int sc_death(void)
{
    run r;
    double took = spawn_with_timeout(&r, 3, body_death, "shm", "10", 40);
    int ok = took < 8;
    for (int i = 0; i < 2; i++) {
        printf("# death: rank %d exited %d: %s", i, r.status[i], r.text[i]);
        ok &= r.status[i] == 3 && strncmp(r.text[i], "replays 0", 9) != 0 && strstr(r.text[i], "rank 2") &&
              strstr(r.text[i], "died");
    }
    printf("# death: done in %.2f s\n", took);
    return ok;
}

/* ---- all_to_all_v: its moves follow the count arrays ----------------------------------------------------------
 * Every call has count 0 (api.c), so no shape of a replayed program tells two of them apart: a replay of the first
 * call's moves would put the next calls' blocks where the first call's arrays said (make test's proc.difftest.shm
 * found it at p = 1, pipeline: a first call that moved nothing was recorded as a program of no moves, and the next
 * calls replayed it, leaving recvbuf as it was). Calls of uint8 with counts and gaps that change every call (the
 * first of each algorithm's all 0), every algorithm in turn, every byte checked, gaps too. */
enum { A2AV_CALLS = 12, A2AV_MAXP = 5 };

static int body_a2av(stitch_comm_t *comm, int rank, int p, int out)
{
    unsigned char sb[A2AV_MAXP * 8], rb[A2AV_MAXP * 8];
    size_t sc[A2AV_MAXP], sd[A2AV_MAXP], rc[A2AV_MAXP], rd[A2AV_MAXP];
    const char *names[32];
    int nalgos = stitch_algorithms(STITCH_ALL_TO_ALL_V, names, 32);
    for (int k = 0; k < A2AV_CALLS * nalgos; k++) {
        size_t so = 0, ro = 0;
        if (k % A2AV_CALLS == 0 &&
            stitch_comm_set_algorithm(comm, STITCH_ALL_TO_ALL_V, names[k / A2AV_CALLS]) != STITCH_OK)
            continue; /* not for this p */
        for (int j = 0; j < p; j++) { /* what j sends me is what I expect from j: the formula is symmetric */
            sc[j] = rc[j] = k % A2AV_CALLS == 0 ? 0 : (size_t)((k + rank + j) % 5 + 1); /* first: nothing at all */
            sd[j] = so + (size_t)(k % 3), rd[j] = ro + (size_t)((k + 1) % 3);
            so = sd[j] + sc[j], ro = rd[j] + rc[j];
        }
        memset(sb, 0, sizeof sb), memset(rb, 0xee, sizeof rb);
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < sc[j]; i++)
                sb[sd[j] + i] = (unsigned char)(rank * 31 + j * 7 + (int)i + k);
        if (stitch_all_to_all_v(sb, sc, sd, rb, rc, rd, STITCH_UINT8, comm) != STITCH_OK) {
            say(out, "rank %d: call %d (%s): %s\n", rank, k, names[k / A2AV_CALLS], stitch_comm_last_error(comm));
            return 1;
        }
        for (size_t i = 0, j = 0; i < sizeof rb; i++) { /* each byte: a block's value, or a gap's 0xee */
            while (j < (size_t)p && i >= rd[j] + rc[j])
                j++;
            int in = j < (size_t)p && i >= rd[j];
            unsigned char want = in ? (unsigned char)((int)j * 31 + rank * 7 + (int)(i - rd[j]) + k) : 0xee;
            if (rb[i] != want) {
                say(out, "rank %d: call %d (%s): byte %zu is %d, want %d\n", rank, k, names[k / A2AV_CALLS], i, rb[i],
                    want);
                return 1;
            }
        }
    }
    say(out, "ok\n");
    return 0;
}

/* p ranks over shm run body; 1 when every rank said ok within `limit` seconds. */
static int check_body(int p, rank_fn body, double limit, const char *what)
{
    run r;
    spawn(&r, p, body, "shm");
    reap(&r, limit);
    return all_ok(&r, what);
}

static int sc_a2av1(void) { return check_body(1, body_a2av, 60, "all_to_all_v"); }
static int sc_a2av2(void) { return check_body(2, body_a2av, 60, "all_to_all_v"); }
static int sc_a2av3(void) { return check_body(3, body_a2av, 60, "all_to_all_v"); }

/* ---- all_to_all with its buffers side by side -------------------------------------------------------------------
 * A program's roles must span no more than the buffers do: all_to_all's sendbuf is p blocks, and a role of p * p
 * (the call model's block count) took a recvbuf lying right after it for part of sendbuf, so a program recorded
 * with the two side by side wrote the next calls' results there (make test's proc.difftest.shm found it at p = 9).
 * Calls alternate: recvbuf right after sendbuf in one array, then in another array; every element checked. */
static int body_a2a(stitch_comm_t *comm, int rank, int p, int out)
{
    enum { N = 3 };
    float one[2 * A2AV_MAXP * N], other[A2AV_MAXP * N];
    for (int k = 0; k < 8; k++) {
        float *send = one, *recv = k % 2 ? other : one + (size_t)p * N;
        memset(one, 0, sizeof one), memset(other, 0, sizeof other);
        for (int j = 0; j < p; j++)
            for (int i = 0; i < N; i++)
                send[j * N + i] = (float)(rank * 100 + j * 10 + i + k);
        if (stitch_all_to_all(send, recv, N, STITCH_FP32, comm) != STITCH_OK) {
            say(out, "rank %d: call %d: %s\n", rank, k, stitch_comm_last_error(comm));
            return 1;
        }
        for (int j = 0; j < p; j++)
            for (int i = 0; i < N; i++)
                if (recv[j * N + i] != (float)(j * 100 + rank * 10 + i + k)) {
                    say(out, "rank %d: call %d (%s): element %d of block %d is %g, want %d\n", rank, k,
                        k % 2 ? "apart" : "side by side", i, j, recv[j * N + i], j * 100 + rank * 10 + i + k);
                    return 1;
                }
    }
    say(out, "ok\n");
    return 0;
}

static int sc_a2a2(void) { return check_body(2, body_a2a, 60, "all_to_all side by side"); }
static int sc_a2a3(void) { return check_body(3, body_a2a, 60, "all_to_all side by side"); }

/* ---- in-place forms: sendbuf at a block of recvbuf, or recvbuf at a block of sendbuf ------------------------------
 * all_gather's, gather's, scatter's and reduce_scatter's in-place forms put one buffer at my block of the other, and
 * which moves a call makes depends on it (none for my own block in place). A program recorded in one form must not
 * replay the other (make test's proc.difftest.shm found a gather recorded in place replayed out of place: the root's
 * own block never written). Every algorithm of each collective, every root, int32 of 1-5 elements, the in-place
 * and the apart form alternating twice, every element of every output checked. */
enum { IP_MAXP = 5, IP_MAXN = 5 };

static int32_t ip_val(int rank, int i, int k)
{
    return rank * 1000 + i * 10 + k;
}

/* One call of collective coll, form `inplace`; 0 when its output is right. */
static int ip_call(stitch_comm_t *comm, stitch_coll_t coll, int rank, int p, int root, size_t n, int k, int inplace,
                   char *why, size_t len)
{
    int32_t big[IP_MAXP * IP_MAXN + 8], small[IP_MAXN + 8], *send = small, *recv = big;
    stitch_status_t st;
    memset(big, 0x5a, sizeof big), memset(small, 0x5a, sizeof small);
    if (coll == STITCH_ALL_GATHER || coll == STITCH_GATHER) {
        if (inplace && (coll == STITCH_ALL_GATHER || rank == root))
            send = big + (size_t)rank * n;
        for (size_t i = 0; i < n; i++)
            send[i] = ip_val(rank, (int)i, k);
        st = coll == STITCH_ALL_GATHER ? stitch_all_gather(send, recv, n, STITCH_INT32, comm)
                                       : stitch_gather(send, recv, n, STITCH_INT32, root, comm);
        for (int j = 0; st == STITCH_OK && j < p && (coll == STITCH_ALL_GATHER || rank == root); j++)
            for (size_t i = 0; i < n; i++)
                if (recv[(size_t)j * n + i] != ip_val(j, (int)i, k))
                    return snprintf(why, len, "element %zu of block %d is %d, want %d", i, j, recv[(size_t)j * n + i],
                                    ip_val(j, (int)i, k)), 1;
    } else { /* scatter (the root's), reduce_scatter (every rank's) input: p blocks in big */
        send = big, recv = inplace && (coll == STITCH_REDUCE_SCATTER || rank == root) ? big + (size_t)rank * n : small;
        for (size_t i = 0; i < (size_t)p * n; i++)
            send[i] = ip_val(rank, (int)i, k);
        st = coll == STITCH_SCATTER ? stitch_scatter(send, recv, n, STITCH_INT32, root, comm)
                                    : stitch_reduce_scatter(send, recv, n, STITCH_INT32, STITCH_SUM, comm);
        for (size_t i = 0; st == STITCH_OK && i < n; i++) {
            int32_t want = 0, at = (int32_t)((size_t)rank * n + i);
            for (int j = 0; j < p; j++)
                want += coll == STITCH_SCATTER ? (j == root ? ip_val(root, at, k) : 0) : ip_val(j, at, k);
            if (recv[i] != want)
                return snprintf(why, len, "element %zu is %d, want %d", i, recv[i], want), 1;
        }
    }
    if (st != STITCH_OK)
        return snprintf(why, len, "%s", stitch_comm_last_error(comm)), 1;
    return 0;
}

static int body_inplace(stitch_comm_t *comm, int rank, int p, int out)
{
    static const stitch_coll_t colls[] = {STITCH_ALL_GATHER, STITCH_GATHER, STITCH_SCATTER, STITCH_REDUCE_SCATTER};
    char why[300];
    for (int c = 0; c < 4; c++) {
        const char *names[32];
        int nalgos = stitch_algorithms(colls[c], names, 32);
        for (int a = 0; a < nalgos; a++) {
            if (stitch_comm_set_algorithm(comm, colls[c], names[a]) != STITCH_OK)
                continue; /* not for this p */
            for (int root = 0; root < p; root++)
                for (int k = 0; k < 4; k++) {
                    size_t n = (size_t)(root + c) % IP_MAXN + 1;
                    if (ip_call(comm, colls[c], rank, p, root, n, k, k % 2 == 0, why, sizeof why)) {
                        say(out, "rank %d: %s %s root %d n %zu call %d (%s): %s\n", rank,
                            stitch_coll_name(colls[c]), names[a], root, n, k, k % 2 == 0 ? "in place" : "apart",
                            why);
                        return 1;
                    }
                }
        }
    }
    say(out, "ok\n");
    return 0;
}

static int sc_inplace2(void) { return check_body(2, body_inplace, 120, "in-place forms"); }
static int sc_inplace3(void) { return check_body(3, body_inplace, 120, "in-place forms"); }

int main(int argc, char **argv)
{
    static const proc_scenario sc[] = {{"np2", sc_np2},         {"np3", sc_np3},         {"np5", sc_np5},
                                       {"np3.tcp", sc_np3_tcp}, {"mismatch.np2", sc_bad2}, {"mismatch.np3", sc_bad3},
                                       {"mismatch.np5", sc_bad5}, {"p2p", sc_p2p},
                                       {"p2p.replayed", sc_p2p_replayed}, {"death.np3", sc_death},
                                       {"a2av.np1", sc_a2av1},    {"a2av.np2", sc_a2av2},  {"a2av.np3", sc_a2av3},
                                       {"inplace.np2", sc_inplace2}, {"inplace.np3", sc_inplace3},
                                       {"a2a.np2", sc_a2a2},      {"a2a.np3", sc_a2a3}};
    return proc_main(sc, (int)(sizeof sc / sizeof sc[0]), argc, argv);
}
