/* exec_msg.c - the message engine of process mode: one rank runs its plan of a schedule over message transports.
 *
 * The call model (blocks, layout, units, segments, pairs, lazy input, the plan check) is call.c's, the same as the
 * threads engine's (exec.c); this file is how processes move the data: as messages on ordered streams.
 *
 * A transfer (src, dst, units, copy|reduce) at step s is a message from src to dst: a 64-byte header, then the
 * source units' elements in order, padded to 64 bytes (small ones staged and sent in one piece, below). The
 * receiver applies it in schedule order, straight out of the transport's buffer (shm ring or tcp staging ring),
 * piece by piece as bytes arrive, so transfer and reduction overlap and no scratch copy is made; a large message
 * it only copies, over tcp, it reads from the kernel into place without the staging ring ("Straight in"). Within one step a
 * rank pushes all its sends and applies all its receives concurrently (a busy peer never blocks us: each pair is
 * an ordered stream with its own buffer); the step ends when both are done. The schedule guarantees
 * (st_exec_prepare_entry) that a step never receives into a unit it sends.
 *
 * Scratch units and `at`. A transfer carries its source units' data in pair order (call.h's st_pcur and
 * st_pair_len; sender and receiver compute the same lengths) and the receiver writes it into the destination
 * units pairwise. A local transfer with `at` (src == dst == me) is a real copy or reduce within my storage, applied
 * in schedule order with my receives, so results are bit-identical with thread mode. A unit I send while it is
 * still fresh is read from my input (lazy input, call.c).
 *
 * Segments. The messages of segment k + 1 follow those of segment k on each stream, so a fast peer runs ahead
 * into the next segment while a slow one is still reducing (pipelining limited only by the ring sizes).
 *
 * Fingerprints. Every header carries the call's fingerprint (call number, collective, algorithm, count, dtype,
 * op, root) and the global step; the receiver checks it before applying anything, so ranks that disagree fail
 * with a message naming both sides' values. Because each pair's messages come in schedule order, a header that
 * does not match is always a real disagreement, never a reordering. Ranks that disagree on the root of a rooted
 * collective run different schedules, where a rank may wait for a message its peer never sends (a gather's two
 * would-be roots only receive): so a rooted call starts with a hello, a bare header from every rank to the next
 * (rank + 1 mod p), checked before the first step's receives. If any two ranks disagree, two neighbours do, and
 * the one that notices aborts the others. Ranks that disagree on the algorithm of a collective without a root
 * can likewise all wait for messages nobody sends (ring against nhr on 3 ranks does), so a rank about to sleep
 * first checks the headers already waiting on its other streams (st_check_waiting). all_to_all_v's counts are not
 * in the fingerprint: a receiver compares the payload bytes of a header with its recvcounts and names both sides'
 * counts when they differ.
 *
 * Small messages. What a small message costs is synchronisation, not bytes: every transport send publishes a
 * frame (shm) or makes a system call (tcp) and rings a doorbell, every consume publishes a tail and rings one
 * back, and each is a cache line that crosses cores. So a message whose padded payload fits ST_SMALL_BYTES is
 * staged whole at the start of its step and sent in one call, and a receiver that finds a whole message
 * contiguous in the buffer applies it and consumes it at once (one send, one consume per message, not three of
 * each). The fingerprint stays in every
 * header (64 bytes are no dearer than 16 to copy through a ring), but is checked with plain compares; the
 * field-by-field text is only made when something differs.
 *
 * Waiting. Spin on progress a while (a peer on another core answers within microseconds; pr->spin_ns), then
 * block in st_proc_block (futex on the shm doorbell or poll on the sockets), always in slices short enough to
 * honour the deadline and notice a dead peer (control channels, proc.c). When the host has more ranks than
 * cores the spin yields the core after every poll, so the peer we wait for, often queued on our own core, runs
 * at once. The clock is read every 16th poll only, and the deadline starts at the first such read since the
 * call last moved (a small call that never waits that long reads no clock at all): a call fails only after the
 * whole timeout without progress. 8 ranks on 2 cores still progress.
 *
 * Timeouts. The peer a rank waits for may itself wait for another, so the peer a timeout would name is often an
 * innocent neighbour of the stalled rank. Every step publishes where the rank is (pr->prog: call, segment, step),
 * and a rank whose deadline passes asks all its peers for theirs before it fails (st_mtimeout, proc.c's
 * st_proc_behind): the rank that does not answer (stopped, busy outside stitch, unreachable), else the one
 * furthest behind, is named in the message and in the abort every peer receives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "exec_msg.h"
#include "proc.h"
#include "reduce.h"
#include "registry.h"
#include "replay.h"

#define ST_BLOCK_MS 20 /* a sleeping rank wakes at least this often to check the deadline and dead peers */

static const char st_zeros[64];

/* Compact messages (shm only). A message of at most ST_COMPACT_MAX payload bytes over shm goes as a 24-byte header
 * (st_msg_small: the step, the call number and the fingerprint's other fields packed exactly into one word) and
 * its payload, unpadded: with shm's 16-byte frame header that is one 64-byte ring line, where the 64-byte header
 * and the payload padded to 64 made three, each a cache line the receiving core must fetch (8-byte all_reduce at
 * np 2: docs/performance.md). Only where the transport says so (st_tp_ops.compact: shm, whose sends of 48 bytes
 * or less are one frame, whole; tcp's staging ring needs 64-byte messages, transport.h). Sender and receiver
 * decide alike (the fingerprint's fields, the transfer's length, the pair's transport); a receiver that finds a
 * header of the other kind, or a key that differs, unpacks it and names the difference as for a full header. A
 * point-to-point receive or a pull engine's hello that finds one recognises it too (st_msg_compact_header).
 * Counted for the tests (st_msg_compact_sent, st_msg_compact_recv; tests/proc/test_proc_tiny.c). */
#define ST_COMPACT_MAX 24

typedef struct st_msg_small {
    uint32_t magic;
    uint32_t g;
    uint64_t seq;
    uint64_t key; /* st_compact_key */
} st_msg_small;
_Static_assert(sizeof(st_msg_small) + ST_COMPACT_MAX + 16 == 64, "a compact message fills one shm ring line");

/* The step number in the header of a rooted call's hello (see the top of this file). */
#define ST_HELLO_G UINT32_MAX

/* A message whose padded payload is at most this many bytes is staged whole (header, payload, padding) at the
 * start of its step and handed to the transport in one send: one ring update and one doorbell instead of three,
 * which is most of the cost of a small message (the copy of a few hundred bytes is not). */
#define ST_SMALL_BYTES 1024

/* Fused receive-reduce-send: the receive applies, and the early send pushes on, at most this many bytes at a time,
 * so that what was just written is still in the cache when it is sent (shm frames are at most 64 KiB anyway). */
#define ST_FUSE_CHUNK ((size_t)64 << 10)

/* Bytes this process sent fused (an early send's payload pushed before its step began): for the tests. */
unsigned long long st_msg_fused_bytes;
unsigned long long st_msg_compact_sent, st_msg_compact_recv; /* exec_msg.h */
int st_msg_compact_off;
unsigned long long st_msg_replays, st_msg_replays_fast, st_msg_replay_pieces;
int st_msg_fast_off;
int st_straight_off;
unsigned long long st_msg_straight_bytes;

/* A send in progress: header, then the source units of the transfer, then padding; or, when small, the staged
 * copy. An early send (the next step's, begun while its units arrive) may send only `cap` payload bytes. */
typedef struct st_out {
    const st_xfer *x;
    st_msg_hdr hdr;
    size_t hdr_done;
    size_t staged;      /* bytes in stage (0: not staged); hdr_done counts what of it is sent */
    st_pcur at;         /* cursor: the pair being sent */
    size_t unit_done;   /* bytes of the current pair already sent */
    size_t pad_left;
    size_t paid, cap;   /* payload bytes sent; how many may be (SIZE_MAX but for an early send) */
    int early;          /* begun in the step before its own (st_fwd_begin) */
    int done;
    int rma;            /* a one-sided message: where it is (ST_OR_*); 0: the stream's */
    char stage[sizeof(st_msg_hdr) + ST_SMALL_BYTES];
} st_out;

/* A one-sided message's sender: its header goes on the stream, then it waits for the receiver's advert, puts
 * the payload, waits for the put to complete; or, cancelled, sends the payload on the stream after the header. */
enum { ST_OR_ADVERT = 1, ST_OR_PUT, ST_OR_WAIT, ST_OR_STREAM };

/* A receive of the current step, as the one-sided path sees it: not one-sided, its advert still to post, or
 * advertised to land in place (the destination), in the landing area at `off`, or to come on the stream. */
enum { ST_RM_NONE, ST_RM_TODO, ST_RM_DIRECT, ST_RM_LAND, ST_RM_STREAM };
typedef struct st_rmode {
    int mode;
    size_t off;         /* in pr->land */
    char *at;           /* the destination, when the message may land there (st_direct); NULL: not */
} st_rmode;

#define ST_RMA_IOV 64 /* pieces a put may name; a message of more pairs goes on the stream */

/* The receive in progress. */
typedef struct st_in {
    int32_t i;          /* position in plan.recvs; the step's end when done */
    int fwd;            /* the early send in c->early that forwards this receive's units as they land, or -1 */
    int hello;          /* a rooted call's hello from the previous rank is still to be checked */
    int have_hdr;
    st_pcur at;
    size_t unit_done;
    size_t pad_left;
    int stream;         /* a one-sided message that comes on the stream after all (cancelled) */
    int straight;       /* its payload is read straight into place (st_recv_straight) */
    size_t hdr_got;     /* of a message to read straight: bytes of its header read into hdr so far */
    char hdr[sizeof(st_msg_hdr)];
    size_t land_done;   /* a one-sided message in the landing area: bytes of it applied */
} st_in;

typedef struct st_mctx {
    st_call m;          /* the call model (call.h): my blocks, the current segment's geometry; first (st_mrun) */
    stitch_comm_t *comm; /* m.comm and m.a, by their short names */
    const st_args *a;
    st_proc *pr;
    st_msg_hdr fp;      /* the fingerprint fields of my headers */
    int hello;          /* a rooted call: hello to the next rank, checked from the previous one */
    st_xfer hello_x;    /* the hello as a transfer without units */
    int compact;        /* my fingerprint packs into st_msg_small (st_compact_key) */
    uint64_t ckey;
    st_deadline deadline; /* started when the call first waits (st_idle) */
    int timing;
    st_out *outs;       /* pr->outs, the sends of the current step */
    int nouts;
    st_out *early;      /* pr->early, the next step's sends begun in this one (fused) */
    int nearly;
    const int32_t *fwd; /* the entry's table of fused forwards (st_fwd_table), or NULL: no fusion */
    st_in in;
    int wait_peer;      /* whom the last unfinished work waits for, for timeout messages */
    st_rmode *rm;       /* pr->rm: the step's receives as the one-sided path sees them, from rm_first */
    int32_t rm_first, adv_next; /* the step's first receive; the next whose advert may be due */
    struct timespec idle_since; /* when the current run of fruitless progress checks began */
    st_replay_rec rec;  /* a tiny call's program being recorded (rec.r set; replay.c) */
    const st_rprog *rp; /* or replayed: its next step rp_i */
    int rp_i;
    int rp_peer;        /* the message being applied (ST_RM_RECV .. ST_RM_DONE): from, and its length in the stream */
    size_t rp_len;
    st_replay_bases rb; /* the program's bases (recording moves ST_RR_LINES to each message's payload) */
    size_t rx_got;      /* replaying: bytes of a small message that came in pieces gathered in rx */
    /* last, and not zeroed per call (st_mctx_begin): */
    char rx[sizeof(st_msg_hdr) + ST_SMALL_BYTES];
} st_mctx;

/* ---- errors ---------------------------------------------------------------------------------------------- */

static stitch_status_t st_mfail(st_mctx *c, stitch_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static stitch_status_t st_mfail(st_mctx *c, stitch_status_t st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_comm_fail(c->comm, st, "%s: %s", c->a->fn, msg);
}

/* The communicator was aborted (by a peer's frame, a dead peer, or stitch_comm_abort): say why. */
static stitch_status_t st_aborted(st_mctx *c)
{
    return st_comm_error(c->comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted: %s", c->a->fn,
                         c->comm->rank, st_abort_reason(&c->pr->abort));
}

/* A stream to or from a peer broke (why): a peer's abort, already on the control channel when the peer closed
 * its streams, explains that better than the broken pipe or reset it caused. */
static stitch_status_t st_broken(st_mctx *c, const char *why)
{
    if (st_proc_poll_ctrl(c->pr, 0) != 0)
        return st_aborted(c);
    return st_mfail(c, STITCH_ERR_SYSTEM, "rank %d: %s", c->m.me, why);
}

/* ---- fingerprints ---------------------------------------------------------------------------------------- */

/* The fingerprint a header carries, as exec.c compares and prints them. The algorithm is a number in the
 * communicator's registry, which init checked is the same on every rank (registry.c). */
static st_fingerprint st_hdr_fp(const st_reg *reg, const st_msg_hdr *h)
{
    const st_algo *algo = st_reg_algo(reg, h->algo);
    return (st_fingerprint){h->seq, h->coll, h->dtype, h->op, h->root, (size_t)h->count, algo};
}

stitch_status_t st_msg_foreign(const st_msg_hdr *h, int src, int me, uint64_t seq, stitch_coll_t coll, char *why,
                               size_t whylen)
{
    if (h->magic == ST_P2P_MSG_MAGIC) {
        snprintf(why, whylen, "rank %d sent a point-to-point message where rank %d expects call number %llu, %s", src,
                 me, (unsigned long long)seq, stitch_coll_name(coll));
        return STITCH_ERR_MISMATCH;
    }
    if (h->magic != ST_MSG_MAGIC || h->src != src) {
        snprintf(why, whylen, "rank %d: malformed message from rank %d (magic %08x, src %d)", me, src, h->magic,
                 h->src);
        return STITCH_ERR_INTERNAL;
    }
    return STITCH_OK;
}

/* The header's magic, sender and fingerprint against mine: a mismatch names both sides' first differing field. */
static stitch_status_t st_check_fields(st_mctx *c, const st_msg_hdr *h, int src)
{
    char mine[96], theirs[96], why[160];
    stitch_status_t foreign = st_msg_foreign(h, src, c->comm->rank, c->fp.seq, c->a->coll, why, sizeof why);
    if (foreign != STITCH_OK)
        return st_mfail(c, foreign, "%s", why);
    st_fingerprint f_mine = st_hdr_fp(c->comm->reg, &c->fp), f_theirs = st_hdr_fp(c->comm->reg, h);
    if (!st_fp_differ(&f_mine, &f_theirs, mine, theirs, sizeof mine))
        return STITCH_OK;
    int me = c->comm->rank, lo = me < src;
    return st_mfail(c, STITCH_ERR_MISMATCH, "rank %d has %s but rank %d has %s", lo ? me : src, lo ? mine : theirs,
                    lo ? src : me, lo ? theirs : mine);
}

static stitch_status_t st_check_hdr(st_mctx *c, const st_msg_hdr *h, int src, uint32_t g, size_t bytes)
{
    stitch_status_t st;
    const st_msg_hdr *f = &c->fp;
    /* The common case, every field as expected, costs a few compares; only a disagreement is formatted. */
    if (h->magic == ST_MSG_MAGIC && h->src == src && h->seq == f->seq && h->count == f->count &&
        h->coll == f->coll && h->dtype == f->dtype && h->op == f->op && h->root == f->root && h->algo == f->algo &&
        h->g == g && h->bytes == bytes)
        return STITCH_OK;
    if ((st = st_check_fields(c, h, src)) != STITCH_OK)
        return st;
    if (h->g == g && c->a->coll == STITCH_ALL_TO_ALL_V) /* the payload is the block q sends me, whole */
        return st_mfail(c, STITCH_ERR_MISMATCH, "rank %d expects %zu elements from rank %d (recvcounts[%d]) but "
                        "rank %d sends it %llu (sendcounts[%d])", c->m.me, c->a->rcounts[src], src, src, src,
                        (unsigned long long)(h->bytes / c->m.esize), c->m.me);
    if (h->g != g || h->bytes != bytes)
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: message from rank %d is for step %u with %llu bytes, "
                        "expected step %u with %zu bytes", c->comm->rank, src, h->g, (unsigned long long)h->bytes,
                        g, bytes);
    return STITCH_OK;
}

/* ---- compact messages ------------------------------------------------------------------------------------ */

/* The fingerprint's fields but the call number, packed exactly (0 when they do not fit: a count over 255, a root or
 * an algorithm number over 65534, all_to_all_v, whose message lengths are not in the fingerprint). */
static int st_compact_key(const st_msg_hdr *f, uint64_t *key)
{
    if (f->count > 255 || f->algo < 0 || f->algo > 65534 || f->root < -1 || f->root > 65533 ||
        f->coll == STITCH_ALL_TO_ALL_V || f->coll < 0 || f->coll > 255 || f->dtype < 0 || f->dtype > 255 ||
        f->op < -1 || f->op > 254)
        return 0;
    *key = (uint64_t)f->coll | (uint64_t)f->dtype << 8 | (uint64_t)(f->op + 1) << 16 | (uint64_t)f->count << 24 |
           (uint64_t)(f->root + 1) << 32 | (uint64_t)f->algo << 48;
    return 1;
}

/* A compact header as the full one it stands for (src and bytes as the receiver expects them). */
static st_msg_hdr st_compact_unpack(const st_msg_small *h, int src, size_t bytes)
{
    uint64_t k = h->key;
    return (st_msg_hdr){ST_MSG_MAGIC, src, h->seq, (k >> 24) & 0xff, (int32_t)(k & 0xff), (int32_t)((k >> 8) & 0xff),
                        (int32_t)((k >> 16) & 0xff) - 1, (int32_t)((k >> 32) & 0xffff) - 1, (int32_t)(k >> 48),
                        h->g, bytes, {0}};
}

/* Does the message of step g to or from `peer` with `bytes` of payload go compact? */
static int st_compact_for(const st_mctx *c, int peer, uint32_t g, size_t bytes)
{
    return c->compact && g != ST_HELLO_G && bytes <= ST_COMPACT_MAX && c->pr->tp[peer]->ops->compact;
}

int st_msg_compact_header(const void *p, size_t n, int src, st_msg_hdr *h)
{
    st_msg_small sm;
    if (n < sizeof sm)
        return 0;
    memcpy(&sm, p, sizeof sm);
    if (sm.magic != ST_MSG_COMPACT)
        return 0;
    *h = st_compact_unpack(&sm, src, 0);
    return 1;
}

/* ---- where units live ------------------------------------------------------------------------------------ */

/* The step number of step s of the current segment, as headers carry it. */
static uint32_t st_global_step(const st_mctx *c, int s)
{
    return (uint32_t)(c->m.k * (size_t)c->m.nsteps) + (uint32_t)s;
}

/* The current pair of a cursor in the current segment: its length in elements (st_pair_len) and where it lies in
 * my storage, on the destination side when receiving or the source side (my input while fresh) when sending. */
static char *st_pair(const st_mctx *c, const st_pcur *pc, int dst_side, size_t *len)
{
    size_t soff, doff;
    *len = st_pair_len(&c->m, pc, &soff, &doff);
    return dst_side ? st_unit_mine(&c->m, pc->du, doff) : (char *)st_unit_src(&c->m, pc->su, soff);
}

/* My input under the current pair's destination while that unit is fresh (st_fresh_input), or NULL. */
static const char *st_pair_input(const st_mctx *c, const st_pcur *pc)
{
    size_t off;
    st_unit_len(&c->m, pc->du, &off);
    return st_fresh_input(&c->m, pc->du, off);
}

/* ---- sending ---------------------------------------------------------------------------------------------- */

/* The source of the current pair of a send: where st_pair says, but an early send reads its units where this step's
 * receive writes them (they are not marked written before a whole unit has landed, st_recv_piece, so st_pair would
 * still point a fresh one at my input). */
static const char *st_out_pair(const st_mctx *c, const st_out *o, const st_pcur *pc, size_t *len)
{
    size_t soff, doff;
    if (!o->early)
        return st_pair(c, pc, 0, len);
    *len = st_pair_len(&c->m, pc, &soff, &doff);
    return st_unit_mine(&c->m, pc->su, soff);
}

static int st_out_push(st_mctx *c, st_tp *t, const void *buf, size_t len, size_t *done, stitch_status_t *st)
{
    char why[256];
    ssize_t n = t->ops->send(t, (const char *)buf + *done, len - *done, why, sizeof why);
    if (n < 0) {
        *st = st_broken(c, why);
        return 0;
    }
    *done += (size_t)n;
    return *done == len;
}

/* ---- sending through a gather list (transports with sendv: tcp) ---- */

#define ST_IOV 16 /* pieces per call: header, units, padding; a message with more units takes more calls */

/* Mark n more bytes of o as sent: header first, then the pairs' source units in order, then the padding. */
static void st_out_advance(const st_mctx *c, st_out *o, size_t n)
{
    size_t h = sizeof o->hdr - o->hdr_done < n ? sizeof o->hdr - o->hdr_done : n;
    o->hdr_done += h, n -= h;
    size_t payload = n;
    while (o->at.left) { /* pairs of no elements are passed over even when n is spent */
        size_t len;
        st_out_pair(c, o, &o->at, &len);
        size_t left = len * c->m.esize - o->unit_done;
        if (left > n) {
            o->unit_done += n;
            o->paid += payload;
            return;
        }
        n -= left, o->unit_done = 0;
        st_pairs_next(&c->m, &o->at);
    }
    o->paid += payload - n;
    o->pad_left -= n; /* what is left of n is padding */
}

/* The unsent rest of o (up to ST_IOV pieces) in one sendv: on tcp one system call per message rather than one
 * for the header, one per unit and one for the padding, which is most of what a mid-size message costs there. */
static stitch_status_t st_out_progress_v(st_mctx *c, st_out *o, int *moved)
{
    st_tp *t = c->pr->tp[o->x->dst];
    struct iovec iov[ST_IOV];
    int n = 0;
    char why[256];
    if (o->hdr_done < sizeof o->hdr)
        iov[n++] = (struct iovec){(char *)&o->hdr + o->hdr_done, sizeof o->hdr - o->hdr_done};
    st_pcur pc = o->at;
    size_t room = o->cap - o->paid; /* an early send's payload stops where its units have landed */
    for (size_t done = o->unit_done; pc.left && n < ST_IOV - 1; done = 0, st_pairs_next(&c->m, &pc)) {
        size_t len, piece;
        const char *src = st_out_pair(c, o, &pc, &len);
        piece = len * c->m.esize - done < room ? len * c->m.esize - done : room;
        if (piece)
            iov[n++] = (struct iovec){(char *)src + done, piece}, room -= piece;
        if (piece < len * c->m.esize - done)
            break;
    }
    if (!pc.left && o->pad_left)
        iov[n++] = (struct iovec){(void *)st_zeros, o->pad_left};
    ssize_t sent = n ? t->ops->sendv(t, iov, n, why, sizeof why) : 0;
    if (sent < 0)
        return st_broken(c, why);
    st_out_advance(c, o, (size_t)sent);
    *moved |= sent > 0;
    o->done = o->hdr_done == sizeof o->hdr && !o->at.left && o->pad_left == 0;
    return STITCH_OK;
}

/* ---- one-sided messages (transport.h's st_tp_rma_ops; docs/onesided.md) ---------------------------------- */

/* Whether a message of `bytes` payload to or from `peer` goes one-sided: its transport has the table and the
 * pair's threshold (the same at both ends) is met. */
static int st_is_rma(const st_mctx *c, int peer, size_t bytes)
{
    st_tp *t = c->pr->tp[peer];
    size_t thr = t && t->ops->rma ? t->ops->rma->threshold(t) : 0;
    return thr && bytes >= thr;
}

/* The sender's side: header, advert (checked against my call, step and bytes), put, completion. */
static stitch_status_t st_out_rma(st_mctx *c, st_out *o, int *moved)
{
    st_tp *t = c->pr->tp[o->x->dst];
    const st_tp_rma_ops *r = t->ops->rma;
    stitch_status_t st = STITCH_OK;
    char why[256];
    int rc;
    if (o->hdr_done < sizeof o->hdr) {
        size_t before = o->hdr_done;
        int sent = st_out_push(c, t, &o->hdr, sizeof o->hdr, &o->hdr_done, &st);
        *moved |= o->hdr_done != before;
        if (!sent)
            return st;
    }
    if (o->rma == ST_OR_ADVERT) {
        st_tp_adv a;
        if ((rc = r->next(t, &a, why, sizeof why)) <= 0)
            return rc < 0 ? st_broken(c, why) : STITCH_OK;
        *moved = 1;
        if (a.seq != o->hdr.seq || a.g != o->hdr.g || a.bytes != o->hdr.bytes)
            return st_mfail(c, STITCH_ERR_MISMATCH, "rank %d asks rank %d for a one-sided message of call number %llu, "
                            "step %u, %llu bytes, where rank %d sends call number %llu, step %u, %llu bytes",
                            o->x->dst, c->m.me, (unsigned long long)a.seq, a.g, (unsigned long long)a.bytes,
                            c->m.me, (unsigned long long)o->hdr.seq, o->hdr.g, (unsigned long long)o->hdr.bytes);
        o->rma = ST_OR_PUT;
    }
    if (o->rma == ST_OR_PUT) {
        struct iovec iov[ST_RMA_IOV];
        int n = 0;
        size_t len;
        st_pcur pc = o->at;
        for (; pc.left && n < ST_RMA_IOV; st_pairs_next(&c->m, &pc)) {
            char *src = st_pair(c, &pc, 0, &len);
            if (len)
                iov[n++] = (struct iovec){src, len * c->m.esize};
        }
        if ((rc = r->put(t, iov, pc.left ? 0 : n, why, sizeof why)) <= 0) /* too many pieces: cancelled */
            return rc < 0 ? st_broken(c, why) : STITCH_OK;
        *moved = 1;
        o->rma = rc == 1 ? ST_OR_WAIT : ST_OR_STREAM; /* streamed: st_out_progress goes on from the units */
    }
    if (o->rma == ST_OR_WAIT) {
        if ((rc = r->put_done(t, why, sizeof why)) < 0)
            return st_broken(c, why);
        if (rc)
            o->done = 1, *moved = 1;
    }
    return STITCH_OK;
}

/* Push as much of one message as the transport takes. Returns STITCH_OK (check o->done) or an error. */
static stitch_status_t st_out_progress(st_mctx *c, st_out *o, int *moved)
{
    st_tp *t = c->pr->tp[o->x->dst];
    stitch_status_t st = STITCH_OK;
    size_t before = o->hdr_done + o->unit_done;
    if (o->rma && o->rma != ST_OR_STREAM)
        return st_out_rma(c, o, moved);
    if (!o->staged && t->ops->sendv)
        return st_out_progress_v(c, o, moved);
    if (o->staged) {
        if (st_out_push(c, t, o->stage, o->staged, &o->hdr_done, &st))
            o->done = 1;
        goto out;
    }
    if (o->hdr_done < sizeof o->hdr && !st_out_push(c, t, &o->hdr, sizeof o->hdr, &o->hdr_done, &st))
        goto out;
    while (o->at.left) {
        size_t len, was = o->unit_done;
        const char *src = st_out_pair(c, o, &o->at, &len);
        len *= c->m.esize;
        size_t upto = o->cap - o->paid < len - was ? was + (o->cap - o->paid) : len; /* an early send's cap */
        int all = upto == was || st_out_push(c, t, src, upto, &o->unit_done, &st);
        o->paid += o->unit_done - was;
        if (!all || o->unit_done < len)
            goto out;
        *moved = 1;
        o->unit_done = 0;
        st_pairs_next(&c->m, &o->at);
    }
    if (o->pad_left) {
        size_t done = 64 - o->pad_left;
        if (!st_out_push(c, t, st_zeros, 64, &done, &st)) {
            o->pad_left = 64 - done;
            goto out;
        }
        o->pad_left = 0;
    }
    o->done = 1;
out:
    *moved |= o->hdr_done + o->unit_done != before;
    return st;
}

/* Push what an early send may send now: its header, and the payload that has landed (o->cap). It follows every
 * message of this step to the same peer on that stream, so it waits for them. *want: it has bytes to push that
 * the transport did not take (a sleeping rank then waits for room too). */
static stitch_status_t st_early_progress(st_mctx *c, st_out *o, int *moved, int *want)
{
    if (o->done || (o->hdr_done == sizeof o->hdr && o->paid == o->cap && o->at.left))
        return STITCH_OK; /* all sent, or all that has landed */
    for (int j = 0; j < c->nouts; j++)
        if (!c->outs[j].done && c->outs[j].x->dst == o->x->dst)
            return STITCH_OK; /* they are in progress, and say so themselves */
    size_t paid = o->paid;
    stitch_status_t st = st_out_progress(c, o, moved);
    st_msg_fused_bytes += o->paid - paid;
    if (!o->done && (o->hdr_done < sizeof o->hdr || o->paid < o->cap))
        *want = 1;
    return st;
}

/* This step's sends (*all_done when they are all pushed), then the next step's early ones (*early_want: one of
 * them could push more than the transport took). */
static stitch_status_t st_sends_progress(st_mctx *c, int *all_done, int *moved, int *early_want)
{
    *all_done = 1;
    for (int i = 0; i < c->nouts; i++) {
        st_out *o = &c->outs[i];
        if (o->done)
            continue;
        int blocked = 0; /* an earlier message to the same peer must go first */
        for (int j = 0; j < i && !blocked; j++)
            blocked = !c->outs[j].done && c->outs[j].x->dst == o->x->dst;
        stitch_status_t st = blocked ? STITCH_OK : st_out_progress(c, o, moved);
        if (st != STITCH_OK)
            return st;
        if (!o->done)
            *all_done = 0, c->wait_peer = o->x->dst;
    }
    for (int i = 0; i < c->nearly; i++) {
        stitch_status_t st = st_early_progress(c, &c->early[i], moved, early_want);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

/* Copy a small message whole into o->stage. The step never receives into a unit it sends (the schedule
 * guarantees it), so the units hold their final values for this step already. */
static void st_stage(const st_mctx *c, st_out *o)
{
    char *p = o->stage;
    size_t len;
    memcpy(p, &o->hdr, sizeof o->hdr);
    p += sizeof o->hdr;
    for (st_pcur pc = o->at; pc.left; st_pairs_next(&c->m, &pc)) {
        const char *src = st_pair(c, &pc, 0, &len);
        if (len)
            memcpy(p, src, len * c->m.esize);
        if (len && c->rec.r)
            st_replay_piece(&c->rec, src, len * c->m.esize);
        p += len * c->m.esize;
    }
    memset(p, 0, o->pad_left);
    o->staged = (size_t)(p - o->stage) + o->pad_left;
}

/* Stage a compact message (see above): its header and payload, unpadded. */
static void st_stage_compact(const st_mctx *c, st_out *o)
{
    st_msg_small h = {ST_MSG_COMPACT, o->hdr.g, o->hdr.seq, c->ckey};
    char *p = o->stage;
    size_t len;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    if (c->rec.r)
        st_replay_mark(&c->rec, ST_RM_SEND, (uint32_t)(o->x - c->m.e->sched.xfers), o->hdr.g, o->hdr.bytes);
    for (st_pcur pc = o->at; pc.left; st_pairs_next(&c->m, &pc)) {
        const char *src = st_pair(c, &pc, 0, &len);
        if (len)
            memcpy(p, src, len * c->m.esize);
        if (len && c->rec.r)
            st_replay_piece(&c->rec, src, len * c->m.esize);
        p += len * c->m.esize;
    }
    o->staged = (size_t)(p - o->stage);
    st_msg_compact_sent++;
}

/* Recording a tiny program (replay.c): a message that is not compact is the hello, or a small one staged whole
 * (its pieces follow from st_stage), or not a tiny program's. */
static void st_mrec_send(const st_mctx *c, const st_out *o, int small)
{
    if (o->x == &c->hello_x)
        st_replay_mark(&c->rec, ST_RM_HELLO, 0, 0, 0);
    else if (small && !st_is_rma(c, o->x->dst, o->hdr.bytes))
        st_replay_mark(&c->rec, ST_RM_SENDF, (uint32_t)(o->x - c->m.e->sched.xfers), o->hdr.g, o->hdr.bytes);
    else
        st_replay_refuse(&c->rec);
}

static void st_out_begin(st_mctx *c, st_out *o, const st_xfer *x, uint32_t g)
{
    memset(o, 0, offsetof(st_out, stage));
    o->cap = SIZE_MAX;
    o->x = x;
    o->hdr = c->fp;
    o->hdr.g = g;
    o->hdr.bytes = st_call_xfer_len(&c->m, x) * c->m.esize;
    o->pad_left = (64 - o->hdr.bytes % 64) % 64;
    st_pairs_begin(&c->m, x, &o->at);
    int compact = st_compact_for(c, x->dst, g, o->hdr.bytes), small = o->hdr.bytes + o->pad_left <= ST_SMALL_BYTES;
    if (c->rec.r && !compact)
        st_mrec_send(c, o, small);
    if (compact)
        st_stage_compact(c, o);
    else if (small)
        st_stage(c, o);
    else if (st_is_rma(c, x->dst, o->hdr.bytes))
        o->rma = ST_OR_ADVERT, o->hdr.pad[0] = 1; /* the flag tells the receiver what to expect after the header */
}

/* The step's messages, in plan order (a rooted call's hello first, at the very first step). */
static stitch_status_t st_sends_begin(st_mctx *c, int s)
{
    const st_plan *pl = &c->m.e->plan;
    int hello = c->hello && c->m.k == 0 && s == 0, n = pl->send_first[s + 1] - pl->send_first[s] + hello;
    if (n > c->pr->outs_cap) { /* kept in the communicator: a small call allocates nothing */
        st_out *more = realloc(c->pr->outs, sizeof *more * (size_t)n);
        if (!more)
            return st_mfail(c, STITCH_ERR_NO_MEMORY, "out of memory for %d sends", n);
        c->pr->outs = more, c->pr->outs_cap = n;
    }
    c->outs = c->pr->outs;
    c->nouts = 0;
    if (hello)
        st_out_begin(c, &c->outs[c->nouts++], &c->hello_x, ST_HELLO_G);
    for (int32_t i = pl->send_first[s]; i < pl->send_first[s + 1]; i++) {
        const st_xfer *x = &c->m.e->sched.xfers[pl->sends[i]];
        int j = 0;
        if (x->dst == c->m.me) /* local transfers are applied with the receives */
            continue;
        while (j < c->nearly && c->early[j].x != x)
            j++;
        if (j == c->nearly) {
            st_out_begin(c, &c->outs[c->nouts++], x, st_global_step(c, s));
            continue;
        }
        c->outs[c->nouts] = c->early[j]; /* begun in the last step, its units all landed: no cap any more */
        c->outs[c->nouts++].cap = SIZE_MAX;
    }
    c->nearly = 0;
    return STITCH_OK;
}

/* ---- fused receive-reduce-send ------------------------------------------------------------------------------
 * A unit that arrives (and is reduced) at step s and is sent on at step s + 1 (a ring's reduce-scatter and
 * all-gather phases, a chain's broadcast) would be written to memory by the receive and read back by the next
 * step's send: for units larger than the cache, from memory. Fused, the next step's message begins early and is
 * pushed piece by piece (ST_FUSE_CHUNK) right after each piece of the receive is applied, while it is in the
 * cache (NCCL's recvReduceSend, recvCopySend). The bytes are the same, computed by the same kernel in the same
 * order: the send only starts sooner. It never blocks the receive (a piece the transport does not take waits in
 * my unit, as without fusion), so it adds no wait between ranks, and it waits for this step's messages to the same
 * peer (streams stay in schedule order).
 *
 * Which receives fuse is a property of the plan (st_fwd_table, once per entry): receive x at step s into units U,
 * send y at step s + 1 of units U in the same order, with
 * - x the only transfer of step s that writes any unit of U (with two, a unit is final only after both),
 * - y the first message of step s + 1 to its peer (every other comes after it on that stream),
 * and per segment (st_fwd_begin) the same lengths pair by pair, and y not small (staged whole, ST_SMALL_BYTES). */

/* Does send y read exactly the units receive x writes, in the same order? */
static int st_same_units(const st_sched *sc, const st_xfer *x, const st_xfer *y)
{
    int32_t xr = x->drun0, xu, yr = y->run0, yu;
    if (x->nunits != y->nunits || x->nunits == 0)
        return 0;
    xu = sc->runs[xr].start, yu = sc->runs[yr].start;
    for (int32_t k = 0; k < x->nunits; k++, xu++, yu++) {
        st_pcur_settle(sc->runs, &xr, &xu);
        st_pcur_settle(sc->runs, &yr, &yu);
        if (xu != yu)
            return 0;
    }
    return 1;
}

/* The send of step s + 1 that forwards receive x (position i of plan.recvs, at step s), or -1; writes[u] counts the
 * transfers of step s that write my unit u. */
static int32_t st_fwd_of(const st_entry *e, int me, int s, const st_xfer *x, const int32_t *writes)
{
    const st_plan *pl = &e->plan;
    const st_sched *sc = &e->sched;
    if (x->src == me || s + 1 >= pl->nsteps)
        return -1;
    for (int32_t r = x->drun0; r < x->drun0 + x->dnruns; r++)
        for (int32_t u = sc->runs[r].start; u < sc->runs[r].start + sc->runs[r].len; u++)
            if (writes[u] != 1)
                return -1;
    for (int32_t j = pl->send_first[s + 1]; j < pl->send_first[s + 2]; j++) {
        const st_xfer *y = &sc->xfers[pl->sends[j]];
        int first = y->dst != me;
        for (int32_t k = pl->send_first[s + 1]; k < j && first; k++)
            first = sc->xfers[pl->sends[k]].dst != y->dst;
        if (first && st_same_units(sc, x, y))
            return j;
    }
    return -1;
}

/* The entry's table of fused forwards (comm.h's st_entry.fwd), made on the first call that may fuse; NULL when out
 * of memory (the call then runs unfused). */
static const int32_t *st_fwd_table(st_entry *e, int me)
{
    const st_plan *pl = &e->plan;
    int32_t nrecv = pl->recv_first[pl->nsteps], nu = e->sched.nunits + e->sched.nscratch;
    int32_t *writes = e->fwd ? NULL : calloc((size_t)nu + 1, sizeof *writes);
    if (e->fwd || !writes || !(e->fwd = malloc(sizeof *e->fwd * ((size_t)nrecv + 1)))) {
        free(writes);
        return e->fwd;
    }
    for (int s = 0; s < pl->nsteps; s++) {
        for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++) {
            const st_xfer *x = &e->sched.xfers[pl->recvs[i]];
            for (int32_t r = x->drun0; st_xfer_writes(x) && r < x->drun0 + x->dnruns; r++)
                for (int32_t u = e->sched.runs[r].start; u < e->sched.runs[r].start + e->sched.runs[r].len; u++)
                    writes[u]++;
        }
        for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++)
            e->fwd[i] = st_fwd_of(e, me, s, &e->sched.xfers[pl->recvs[i]], writes);
        for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++) { /* the counts back to 0 */
            const st_xfer *x = &e->sched.xfers[pl->recvs[i]];
            for (int32_t r = x->drun0; st_xfer_writes(x) && r < x->drun0 + x->dnruns; r++)
                for (int32_t u = e->sched.runs[r].start; u < e->sched.runs[r].start + e->sched.runs[r].len; u++)
                    writes[u] = 0;
        }
    }
    free(writes);
    return e->fwd;
}

/* Begin the early send that forwards receive x (position i of plan.recvs, at step s), whose header has just been
 * checked: its index in c->early, or -1 when this one does not fuse in this segment (lengths differ pair by pair,
 * a small message, out of memory). */
static int st_fwd_begin(st_mctx *c, const st_xfer *x, int s, int32_t i)
{
    if (!c->fwd || c->fwd[i] < 0)
        return -1;
    const st_xfer *y = &c->m.e->sched.xfers[c->m.e->plan.sends[c->fwd[i]]];
    if (!c->pr->tp[y->dst]->ops->fuse)
        return -1; /* tcp: the whole message in one send is faster (transport.h) */
    size_t bytes = st_call_xfer_len(&c->m, y) * c->m.esize, o1, o2;
    if (bytes + (64 - bytes % 64) % 64 <= ST_SMALL_BYTES || st_is_rma(c, y->dst, bytes))
        return -1; /* small, or one-sided: the put moves it straight from my units once they are all there */
    st_pcur px, py;
    st_pairs_begin(&c->m, x, &px);
    st_pairs_begin(&c->m, y, &py);
    for (; px.left; st_pairs_next(&c->m, &px), st_pairs_next(&c->m, &py))
        if (st_pair_len(&c->m, &px, &o1, &o2) != st_pair_len(&c->m, &py, &o1, &o2))
            return -1;
    if (c->nearly == c->pr->early_cap) {
        int cap = c->pr->early_cap ? 2 * c->pr->early_cap : 4;
        st_out *more = realloc(c->pr->early, sizeof *more * (size_t)cap);
        if (!more)
            return -1;
        c->pr->early = more, c->pr->early_cap = cap;
    }
    c->early = c->pr->early;
    st_out *o = &c->early[c->nearly];
    st_out_begin(c, o, y, st_global_step(c, s + 1));
    o->early = 1, o->cap = 0;
    return c->nearly++;
}

/* n more payload bytes of the receive that early send f forwards have landed in my units: push them on now. */
static stitch_status_t st_fwd_landed(st_mctx *c, int f, size_t n, int *moved)
{
    int want = 0;
    c->early[f].cap += n;
    return st_early_progress(c, &c->early[f], moved, &want);
}

/* ---- receiving -------------------------------------------------------------------------------------------- */

/* Apply the current pair of a transfer from src (NULL: from my source unit, a local transfer): one look at the
 * units' lengths for what st_pair (both sides) and st_pair_input would each look up again. Its length. */
static size_t st_apply_pair(st_mctx *c, const st_xfer *x, const st_pcur *pc, const char *src)
{
    size_t soff, doff, len = st_pair_len(&c->m, pc, &soff, &doff);
    if (!src)
        src = st_unit_src(&c->m, pc->su, soff);
    st_call_move(&c->m, x->op, st_unit_mine(&c->m, pc->du, doff), st_fresh_input(&c->m, pc->du, doff), src, len);
    st_unit_written(&c->m, pc->du);
    return len;
}

/* Apply a message whose payload is wholly at src. */
static void st_apply_whole(st_mctx *c, const st_xfer *x, const char *src)
{
    st_pcur pc;
    for (st_pairs_begin(&c->m, x, &pc); pc.left; st_pairs_next(&c->m, &pc))
        src += st_apply_pair(c, x, &pc, src) * c->m.esize;
}

/* A local transfer with `at`: my source units into my destination units, a real copy or reduce (the plan
 * guarantees that no transfer of the step writes what it reads). */
static void st_apply_local(st_mctx *c, const st_xfer *x)
{
    st_pcur pc;
    for (st_pairs_begin(&c->m, x, &pc); pc.left; st_pairs_next(&c->m, &pc))
        st_apply_pair(c, x, &pc, NULL);
}

/* The transport from `src`, peeked: *avail bytes at *p, or an error. */
static stitch_status_t st_peek(st_mctx *c, int src, const void **p, size_t *avail)
{
    char why[256];
    st_tp *t = c->pr->tp[src];
    ssize_t n = t->ops->peek(t, p, why, sizeof why);
    *avail = 0;
    if (n >= 0) {
        *avail = (size_t)n;
        return STITCH_OK;
    }
    return st_broken(c, why);
}

/* A rooted call's hello from the previous rank: a bare header, checked (root included) before anything else. */
static stitch_status_t st_hello_progress(st_mctx *c, int *moved)
{
    int prev = (c->m.me + c->m.p - 1) % c->m.p;
    const void *p;
    size_t avail;
    st_msg_hdr h;
    c->wait_peer = prev;
    stitch_status_t st = st_peek(c, prev, &p, &avail);
    if (st != STITCH_OK || avail < sizeof h)
        return st;
    memcpy(&h, p, sizeof h);
    if ((st = st_check_hdr(c, &h, prev, ST_HELLO_G, 0)) != STITCH_OK)
        return st;
    c->pr->tp[prev]->ops->consume(c->pr->tp[prev], sizeof h);
    c->in.hello = 0;
    *moved = 1;
    if (c->rec.r)
        st_replay_mark(&c->rec, ST_RM_HELLO_IN, 0, 0, 0);
    return STITCH_OK;
}

/* Recording a tiny program: message x (op ST_RM_RECV or ST_RM_RECVF) is applied whole from its payload at p, which
 * its moves read as ST_RR_LINES; then it is done. */
static void st_mrec_recv(st_mctx *c, const st_xfer *x, int op, const char *p, size_t bytes)
{
    c->rb.base[ST_RR_LINES] = (char *)p, c->rb.len[ST_RR_LINES] = bytes;
    st_replay_mark(&c->rec, op, (uint32_t)(x - c->m.e->sched.xfers), (uint32_t)c->in.i, bytes);
}

static void st_mrec_done(st_mctx *c)
{
    st_replay_mark(&c->rec, ST_RM_DONE, 0, 0, 0);
    c->rb.base[ST_RR_LINES] = NULL, c->rb.len[ST_RR_LINES] = 0;
}

/* ---- straight in ------------------------------------------------------------------------------------------
 * A message the receiver only copies (no reduction, not forwarded as it lands), over a transport with recv_into
 * (tcp), goes from the kernel straight into its destination pairs: one copy per byte, as the sender's side has,
 * where the staging ring would add a second. Bytes a peek already staged are copied out of the ring first. Copies
 * are bytewise, so a piece may end inside an element. Small messages stay on the ring path, where one read takes
 * several. While such a message is read, proc.c's wake-ups leave its peer's bytes in the kernel (pr->straight). */
#define ST_STRAIGHT_MIN ((size_t)64 << 10)

/* Whether transfer x's message may come straight in, as far as its header does not say (the forward does). */
static int st_straight_may(const st_mctx *c, const st_xfer *x)
{
    const st_tp *t = c->pr->tp[x->src];
    return t->ops->recv_into && x->op == ST_X_COPY && !t->ops->fuse && !c->m.rec && !st_straight_off &&
           x->src != c->m.me && st_call_xfer_len(&c->m, x) * c->m.esize >= ST_STRAIGHT_MIN;
}

/* Its header, read exactly (into c->in.hdr, over as many looks as it takes), so that no byte of the payload is
 * staged on the way; *whole: 1 once it is all there. */
static stitch_status_t st_straight_hdr(st_mctx *c, const st_xfer *x, int *whole)
{
    st_tp *t = c->pr->tp[x->src];
    char why[256];
    c->pr->straight = x->src;
    ssize_t n = t->ops->recv_into(t, c->in.hdr + c->in.hdr_got, sizeof c->in.hdr - c->in.hdr_got, why, sizeof why);
    if (n < 0)
        return st_broken(c, why);
    c->in.hdr_got += (size_t)n;
    *whole = c->in.hdr_got == sizeof c->in.hdr;
    return STITCH_OK;
}

/* Read what has come of the current pair straight into place; *got: 0 when nothing had. */
static stitch_status_t st_recv_straight(st_mctx *c, const st_xfer *x, int *got)
{
    st_tp *t = c->pr->tp[x->src];
    char why[256];
    size_t len;
    char *dst = st_pair(c, &c->in.at, 1, &len);
    len *= c->m.esize;
    ssize_t n = len > c->in.unit_done ? t->ops->recv_into(t, dst + c->in.unit_done, len - c->in.unit_done, why,
                                                          sizeof why) : 0;
    if (n < 0)
        return st_broken(c, why);
    *got = n > 0 || len == c->in.unit_done;
    c->in.unit_done += (size_t)n;
    st_msg_straight_bytes += (size_t)n;
    if (c->in.unit_done == len) {
        c->in.unit_done = 0;
        st_unit_written(&c->m, c->in.at.du);
        st_pairs_next(&c->m, &c->in.at);
    }
    return STITCH_OK;
}

/* The header of transfer x has arrived at p (avail bytes there): check it, then apply the message at once when it
 * is all there, else set up the piecewise receive. */
static stitch_status_t st_recv_header(st_mctx *c, const st_xfer *x, int s, const void *p, size_t avail)
{
    int read = p == c->in.hdr; /* read out of the stream already (st_straight_hdr) */
    st_tp *t = c->pr->tp[x->src];
    st_msg_hdr h;
    memcpy(&h, p, sizeof h);
    uint32_t g = st_global_step(c, s);
    size_t bytes = st_call_xfer_len(&c->m, x) * c->m.esize, pad = (64 - bytes % 64) % 64;
    stitch_status_t st = st_check_hdr(c, &h, x->src, g, bytes);
    if (st != STITCH_OK)
        return st;
    if (h.pad[0] != 0)
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: rank %d sent step %u's message one-sided where one on the "
                        "stream was due (STITCH_IB_RMA_BYTES)", c->m.me, x->src, g);
    c->in.fwd = st_fwd_begin(c, x, s, c->in.i);
    if (avail >= sizeof h + bytes + pad && (c->in.fwd < 0 || bytes <= ST_FUSE_CHUNK)) { /* apply, consume once */
        int moved = 0;
        if (c->rec.r && bytes + pad <= ST_SMALL_BYTES)
            st_mrec_recv(c, x, ST_RM_RECVF, (const char *)p + sizeof h, bytes);
        else if (c->rec.r) /* larger than a replay gathers (c->rx): not a tiny program's */
            st_replay_refuse(&c->rec);
        st_apply_whole(c, x, (const char *)p + sizeof h);
        if (c->rec.r)
            st_mrec_done(c);
        t->ops->consume(t, sizeof h + bytes + pad);
        c->in.i++;
        return c->in.fwd < 0 ? STITCH_OK : st_fwd_landed(c, c->in.fwd, bytes, &moved);
    }
    if (c->rec.r) /* applied piece by piece from wherever the pieces lie: this call is not its shape's program */
        st_replay_retry(&c->rec);
    if (!read)
        t->ops->consume(t, sizeof h);
    c->in.have_hdr = 1, c->in.hdr_got = 0;
    st_pairs_begin(&c->m, x, &c->in.at);
    c->in.unit_done = 0;
    c->in.pad_left = pad;
    c->in.straight = c->in.fwd < 0 && st_straight_may(c, x);
    c->pr->straight = c->in.straight ? x->src : -1;
    return STITCH_OK;
}

/* A compact message for transfer x has arrived at p (avail bytes there): check it and apply it whole, or name what
 * differs. *got: 0 while its payload is not all there (never over shm: it is one frame). */
static stitch_status_t st_recv_compact(st_mctx *c, const st_xfer *x, int s, const void *p, size_t avail, int *got)
{
    st_msg_small h;
    memcpy(&h, p, sizeof h);
    uint32_t g = st_global_step(c, s);
    size_t bytes = st_call_xfer_len(&c->m, x) * c->m.esize;
    if (h.g != g || h.seq != c->fp.seq || h.key != c->ckey || !st_compact_for(c, x->src, g, bytes)) {
        st_msg_hdr full = st_compact_unpack(&h, x->src, bytes);
        stitch_status_t st = st_check_hdr(c, &full, x->src, g, bytes);
        return st != STITCH_OK ? st : st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: rank %d sent a compact message for "
                                               "step %u, expected a full one", c->m.me, x->src, g);
    }
    if (avail < sizeof h + bytes)
        return *got = 0, STITCH_OK;
    if (c->rec.r)
        st_mrec_recv(c, x, ST_RM_RECV, (const char *)p + sizeof h, bytes);
    st_apply_whole(c, x, (const char *)p + sizeof h);
    if (c->rec.r)
        st_mrec_done(c);
    c->pr->tp[x->src]->ops->consume(c->pr->tp[x->src], sizeof h + bytes);
    c->in.i++;
    st_msg_compact_recv++;
    return STITCH_OK;
}

/* Apply what has arrived of the current pair (avail bytes at p), and push it on when fused; *got: 0 when nothing
 * could be applied. */
static stitch_status_t st_recv_piece(st_mctx *c, const st_xfer *x, const void *p, size_t avail, int *got)
{
    st_tp *t = c->pr->tp[x->src];
    size_t len;
    char *dst = st_pair(c, &c->in.at, 1, &len);
    len *= c->m.esize;
    size_t n = len - c->in.unit_done;
    if (avail < n)
        n = avail / c->m.esize * c->m.esize;
    if (c->in.fwd >= 0 && n > ST_FUSE_CHUNK) /* fused: apply a piece, push it on, the next */
        n = ST_FUSE_CHUNK;
    stitch_status_t st = STITCH_OK;
    *got = n > 0 || len == c->in.unit_done;
    if (!*got)
        return STITCH_OK;
    if (n) {
        const char *in = st_pair_input(c, &c->in.at);
        st_call_move(&c->m, x->op, dst + c->in.unit_done, in ? in + c->in.unit_done : NULL, p, n / c->m.esize);
        t->ops->consume(t, n);
        int moved = 0;
        if (c->in.fwd >= 0 && (st = st_fwd_landed(c, c->in.fwd, n, &moved)) != STITCH_OK)
            return st;
    }
    c->in.unit_done += n;
    if (c->in.unit_done == len) {
        c->in.unit_done = 0;
        st_unit_written(&c->m, c->in.at.du);
        st_pairs_next(&c->m, &c->in.at);
    }
    return st;
}

/* ---- one-sided receives -------------------------------------------------------------------------------------- */

/* Whether transfer y of the step touches a destination unit of x: writes it, or (a local transfer) reads it. */
static int st_units_meet(const st_mctx *c, const st_xfer *x, const st_xfer *y)
{
    st_pcur px, py;
    for (st_pairs_begin(&c->m, x, &px); px.left; st_pairs_next(&c->m, &px))
        for (st_pairs_begin(&c->m, y, &py); py.left; st_pairs_next(&c->m, &py))
            if (py.du == px.du || (y->src == c->m.me && py.su == px.du))
                return 1;
    return 0;
}

/* Where the message of receive i (transfer x, `bytes` of payload) may land in place: its destination, when the
 * stream path would only copy it there (no reduction), the destination is one contiguous range, nothing else
 * of the step touches its units (their bytes may then arrive at any moment between the advert and the landing
 * with the same result as a copy in schedule order), and it does not overlap the caller's input (which the
 * step's sends may read) unless the call is in place. NULL otherwise: it lands in pr->land. */
static char *st_direct(const st_mctx *c, int s, int32_t i, const st_xfer *x, size_t bytes)
{
    if (x->op != ST_X_COPY || c->m.rec || c->a->coll == STITCH_ALL_TO_ALL_V)
        return NULL;
    char *at = NULL, *end = NULL;
    size_t len;
    st_pcur pc;
    for (st_pairs_begin(&c->m, x, &pc); pc.left; st_pairs_next(&c->m, &pc)) {
        char *d = st_pair(c, &pc, 1, &len);
        if (!d || (at && d != end))
            return NULL;
        if (!at)
            at = end = d;
        end += len * c->m.esize;
    }
    if (!at || (size_t)(end - at) != bytes)
        return NULL;
    const char *in = c->a->send;
    size_t inb = (size_t)(c->m.a2a ? c->m.p : c->m.nblocks) * c->a->count * c->m.esize;
    if (in && in != c->a->recv && in < end && at < in + inb)
        return NULL;
    const st_plan *pl = &c->m.e->plan;
    for (int32_t j = pl->recv_first[s]; j < pl->recv_first[s + 1]; j++)
        if (j != i && st_units_meet(c, x, &c->m.e->sched.xfers[pl->recvs[j]]))
            return NULL;
    return at;
}

/* The step's receives as the one-sided path sees them, and a landing area for those that cannot land in place. */
static stitch_status_t st_rma_begin(st_mctx *c, int s)
{
    const st_plan *pl = &c->m.e->plan;
    int32_t first = pl->recv_first[s], n = pl->recv_first[s + 1] - first;
    size_t land = 0;
    c->rm_first = c->adv_next = first;
    if (n > c->pr->rm_cap) {
        st_rmode *more = realloc(c->pr->rm, sizeof *more * (size_t)n);
        if (!more)
            return st_mfail(c, STITCH_ERR_NO_MEMORY, "out of memory for %d receives", (int)n);
        c->pr->rm = more, c->pr->rm_cap = n;
    }
    c->rm = c->pr->rm;
    for (int32_t i = 0; i < n; i++) {
        const st_xfer *x = &c->m.e->sched.xfers[pl->recvs[first + i]];
        c->rm[i] = (st_rmode){ST_RM_NONE, 0, NULL};
        if (x->src == c->m.me || !c->pr->tp[x->src]->ops->rma) /* the stream's transports pay this test only */
            continue;
        size_t bytes = st_call_xfer_len(&c->m, x) * c->m.esize;
        if (!st_is_rma(c, x->src, bytes))
            continue;
        c->rm[i] = (st_rmode){ST_RM_TODO, land, st_direct(c, s, first + i, x, bytes)};
        land += (bytes + 63) & ~(size_t)63; /* in place too: its destination may not register (st_rma_adverts) */
    }
    if (land > c->pr->land_cap) { /* grows to the largest step's need, then stays (and stays registered) */
        size_t cap = (land + 4095) & ~(size_t)4095;
        char *fresh = aligned_alloc(4096, cap);
        if (!fresh)
            return st_mfail(c, STITCH_ERR_NO_MEMORY, "cannot allocate a %zu-byte landing area", cap);
        memset(fresh, 0, cap); /* touched now, as the rings are */
        if (c->pr->land)
            stitch_mr_invalidate(c->pr->land, c->pr->land_cap);
        free(c->pr->land);
        c->pr->land = fresh, c->pr->land_cap = cap;
    }
    return STITCH_OK;
}

/* Post the step's adverts, in schedule order (the sender takes them in the same order): in place if the
 * destination registers, else in the landing area, else "on the stream". Stops at the first the transport
 * cannot take now; the rest follow in a later look. */
static stitch_status_t st_rma_adverts(st_mctx *c, int s, int *moved)
{
    const st_plan *pl = &c->m.e->plan;
    char why[256];
    for (; c->adv_next < pl->recv_first[s + 1]; c->adv_next++) {
        st_rmode *r = &c->rm[c->adv_next - c->rm_first];
        if (r->mode != ST_RM_TODO)
            continue;
        const st_xfer *x = &c->m.e->sched.xfers[pl->recvs[c->adv_next]];
        st_tp *t = c->pr->tp[x->src];
        st_tp_adv a = {c->fp.seq, st_global_step(c, s), 0, st_call_xfer_len(&c->m, x) * c->m.esize};
        int rc = 2, mode = ST_RM_DIRECT;
        if (r->at)
            rc = t->ops->rma->advert(t, &a, r->at, why, sizeof why);
        if (rc == 2)
            mode = ST_RM_LAND, rc = t->ops->rma->advert(t, &a, c->pr->land + r->off, why, sizeof why);
        if (rc == 2)
            mode = ST_RM_STREAM, rc = t->ops->rma->advert(t, &a, NULL, why, sizeof why);
        if (rc < 0)
            return st_broken(c, why);
        if (rc == 0)
            return STITCH_OK;
        r->mode = mode, *moved = 1;
    }
    return STITCH_OK;
}

/* Apply what has landed of a message in the landing area (its first `got` bytes at base), pair by pair from where
 * the last look stopped (c->in.at, unit_done, land_done), whole elements only, as st_recv_piece does from a ring. */
static void st_land_apply(st_mctx *c, const st_xfer *x, const char *base, size_t got)
{
    size_t es = c->m.esize, len;
    while (c->in.at.left) {
        char *dst = st_pair(c, &c->in.at, 1, &len);
        len *= es;
        size_t n = len - c->in.unit_done, avail = got - c->in.land_done;
        if (avail < n)
            n = avail / es * es;
        if (n == 0 && len > c->in.unit_done)
            return;
        if (n) {
            const char *in = st_pair_input(c, &c->in.at);
            st_call_move(&c->m, x->op, dst + c->in.unit_done, in ? in + c->in.unit_done : NULL,
                         base + c->in.land_done, n / es);
        }
        c->in.unit_done += n, c->in.land_done += n;
        if (c->in.unit_done == len) {
            c->in.unit_done = 0;
            st_unit_written(&c->m, c->in.at.du);
            st_pairs_next(&c->m, &c->in.at);
        }
    }
}

/* The one-sided receive x (advertised as r says): its header from the stream, checked; then its outcome. Landed:
 * applied from the landing area (chunk by chunk as they land), or (in place) its units are written. Cancelled:
 * it goes on as a stream receive whose header was read (c->in.stream). *wait: nothing more to do until progress. */
static stitch_status_t st_recv_rma(st_mctx *c, const st_xfer *x, int s, const st_rmode *r, int *moved, int *wait)
{
    st_tp *t = c->pr->tp[x->src];
    size_t bytes = st_call_xfer_len(&c->m, x) * c->m.esize, avail;
    const void *p;
    char why[256];
    stitch_status_t st;
    *wait = 1;
    if (r->mode == ST_RM_TODO)
        return STITCH_OK; /* its advert is not out yet */
    if (!c->in.have_hdr) {
        st_msg_hdr h;
        if ((st = st_peek(c, x->src, &p, &avail)) != STITCH_OK || avail < sizeof h)
            return st;
        memcpy(&h, p, sizeof h);
        if ((st = st_check_hdr(c, &h, x->src, st_global_step(c, s), bytes)) != STITCH_OK)
            return st;
        if (h.pad[0] != 1)
            return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: rank %d sent step %u's message on the stream where a "
                            "one-sided one was due (STITCH_IB_RMA_BYTES)", c->m.me, x->src, h.g);
        t->ops->consume(t, sizeof h);
        c->in.have_hdr = 1, *moved = 1;
        st_pairs_begin(&c->m, x, &c->in.at);
        c->in.unit_done = c->in.land_done = 0;
    }
    size_t got = 0;
    int rc = t->ops->rma->landed(t, &got, why, sizeof why);
    if (rc < 0)
        return st_broken(c, why);
    if (rc != 2 && r->mode == ST_RM_LAND && (rc == 1 ? bytes : got) > c->in.land_done) {
        st_land_apply(c, x, c->pr->land + r->off, rc == 1 ? bytes : got);
        *moved = 1;
    }
    if (rc == 0)
        return STITCH_OK;
    *moved = 1, *wait = 0;
    if (rc == 2) { /* on the stream after all */
        c->in.stream = 1;
        st_pairs_begin(&c->m, x, &c->in.at);
        c->in.unit_done = 0;
        c->in.pad_left = (64 - bytes % 64) % 64;
        return STITCH_OK;
    }
    if (r->mode == ST_RM_STREAM)
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: rank %d wrote a message one-sided that was to come on "
                        "the stream", c->m.me, x->src);
    if (r->mode == ST_RM_DIRECT) {
        st_pcur pc;
        for (st_pairs_begin(&c->m, x, &pc); pc.left; st_pairs_next(&c->m, &pc))
            st_unit_written(&c->m, pc.du);
    }
    c->in.have_hdr = 0;
    c->in.i++;
    return STITCH_OK;
}

/* Consume what is available of the current receive. Sets *step_done when the step's receives are all applied. */
static stitch_status_t st_recv_progress(st_mctx *c, int s, int *step_done, int *moved)
{
    const st_plan *pl = &c->m.e->plan;
    stitch_status_t st;
    if (c->in.hello && ((st = st_hello_progress(c, moved)) != STITCH_OK || c->in.hello))
        return st;
    if (c->adv_next < pl->recv_first[s + 1] && (st = st_rma_adverts(c, s, moved)) != STITCH_OK)
        return st;
    for (;;) {
        if (c->in.i >= pl->recv_first[s + 1]) {
            *step_done = 1;
            return STITCH_OK;
        }
        const st_xfer *x = &c->m.e->sched.xfers[pl->recvs[c->in.i]];
        if (x->src == c->m.me) { /* local: a real copy or reduce with `at`; a copy onto itself is nothing to do */
            if (st_xfer_mapped(x))
                st_apply_local(c, x), *moved = 1;
            c->in.i++;
            continue;
        }
        st_tp *t = c->pr->tp[x->src];
        const void *p;
        size_t avail;
        c->wait_peer = x->src;
        const st_rmode *r = &c->rm[c->in.i - c->rm_first];
        if (r->mode != ST_RM_NONE && !c->in.stream) {
            int wait;
            if ((st = st_recv_rma(c, x, s, r, moved, &wait)) != STITCH_OK || wait)
                return st;
            continue;
        }
        if (c->in.have_hdr && c->in.at.left == 0 && c->in.pad_left == 0) { /* complete: never peek past it */
            c->in.have_hdr = 0, c->in.stream = 0, c->in.straight = 0;
            c->pr->straight = -1;
            c->in.i++;
            continue;
        }
        if (c->in.straight && c->in.at.left) {
            int got = 0;
            if ((st = st_recv_straight(c, x, &got)) != STITCH_OK || !got)
                return st;
            *moved = 1;
            continue;
        }
        if (!c->in.have_hdr && st_straight_may(c, x)) {
            int whole = 0;
            if ((st = st_straight_hdr(c, x, &whole)) != STITCH_OK || !whole)
                return st;
            if ((st = st_recv_header(c, x, s, c->in.hdr, sizeof c->in.hdr)) != STITCH_OK)
                return st;
            *moved = 1;
            continue;
        }
        if ((st = st_peek(c, x->src, &p, &avail)) != STITCH_OK)
            return st;
        if (!c->in.have_hdr) {
            uint32_t magic = 0;
            if (avail >= sizeof magic)
                memcpy(&magic, p, sizeof magic);
            if (avail < (magic == ST_MSG_COMPACT ? sizeof(st_msg_small) : sizeof(st_msg_hdr)))
                return STITCH_OK;
            int got = 1;
            st = magic == ST_MSG_COMPACT ? st_recv_compact(c, x, s, p, avail, &got) : st_recv_header(c, x, s, p, avail);
            if (st != STITCH_OK || !got)
                return st;
            *moved = 1;
            continue;
        }
        if (c->in.at.left) {
            int got = 0;
            if ((st = st_recv_piece(c, x, p, avail, &got)) != STITCH_OK || !got)
                return st;
            *moved = 1;
            continue;
        }
        size_t n = avail < c->in.pad_left ? avail : c->in.pad_left;
        if (n == 0)
            return STITCH_OK;
        t->ops->consume(t, n);
        c->in.pad_left -= n;
    }
}

/* ---- the step loop ------------------------------------------------------------------------------------ */

/* Do I still expect a header from peer j on its stream in this call? The hello, a receive of this step or a later
 * one not yet begun (the half-applied one has its header), every receive when a segment follows. A one-sided
 * receive has its header on the stream too. Scans the rest of the plan: only asked before sleeping, of a peer
 * whose stream holds a point-to-point message. */
static int st_expects_from(const st_mctx *c, int j)
{
    const st_plan *pl = &c->m.e->plan;
    const st_xfer *xs = c->m.e->sched.xfers;
    int32_t from = c->m.k + 1 < c->m.nseg ? 0 : c->in.i + (c->in.have_hdr ? 1 : 0);
    if (c->in.hello && j == (c->m.me + c->m.p - 1) % c->m.p)
        return 1;
    for (int32_t i = from; i < pl->recv_first[pl->nsteps]; i++)
        if (xs[pl->recvs[i]].src == j)
            return 1;
    return 0;
}

/* Before sleeping: check the headers that wait, unread, at the front of other peers' streams. Ranks that
 * disagree on the algorithm run different schedules, in which every rank may wait for a message nobody sends it
 * (ring against nhr on 3 ranks does) while the messages that were sent sit unread; this finds them, so the
 * disagreement fails at once, naming both sides, instead of at the timeout. Every stream but the one whose
 * message is half applied is at a message boundary (receives are consumed whole, in schedule order). A header of
 * my call must match my fingerprint; one of a later call is a peer that ran ahead (calls of count 0, or calls in
 * which it needed nothing from me), and fine; so is a point-to-point message from a peer that has sent me all
 * of this call (its isend after the collective: proc.p2p.iring.tcp found it failing as a mismatch). */
static stitch_status_t st_check_waiting(st_mctx *c, int s)
{
    const st_plan *pl = &c->m.e->plan;
    int busy = -1; /* the peer whose message is half applied, or half its header read */
    if ((c->in.have_hdr || c->in.hdr_got) && c->in.i < pl->recv_first[s + 1])
        busy = c->m.e->sched.xfers[pl->recvs[c->in.i]].src;
    for (int j = 0; j < c->m.p; j++) {
        const void *p;
        char why[256];
        st_msg_hdr h;
        if (j == c->m.me || j == busy)
            continue;
        st_tp *t = c->pr->tp[j];
        /* a broken stream is no error here: the peer may be done with me and gone; a receive reports it */
        ssize_t n = t->ops->peek(t, &p, why, sizeof why);
        if (n < 0)
            continue;
        if (!st_msg_compact_header(p, (size_t)n, j, &h)) { /* a full header, or not all of one yet */
            if ((size_t)n < sizeof h)
                continue;
            memcpy(&h, p, sizeof h);
        }
        if (h.magic == ST_MSG_MAGIC && h.src == j && h.seq != c->fp.seq)
            continue; /* a later call's: the peer ran ahead through calls that needed nothing from me */
        if (h.magic == ST_P2P_MSG_MAGIC && !st_expects_from(c, j))
            continue; /* a later send's */
        stitch_status_t st = st_check_fields(c, &h, j);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

static long st_ns_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000000000L + (now.tv_nsec - t0->tv_nsec);
}

/* The deadline passed. The peer I wait for may itself wait for another, so before blaming anyone ask every peer
 * where it is (st_proc_behind: a rank waiting in a call answers, a stopped one does not) and name the rank behind.
 * The question takes up to half the timeout, between 250 ms and 2 s: long enough for a waiting rank on a loaded
 * host to answer (it reads its control channel at least every ST_BLOCK_MS), short beside the timeout itself. */
static stitch_status_t st_mtimeout(st_mctx *c)
{
    char behind[320];
    int ask_ms = c->comm->timeout_ms / 2;
    ask_ms = ask_ms < 250 ? 250 : ask_ms > 2000 ? 2000 : ask_ms;
    if (st_proc_behind(c->pr, c->wait_peer, ask_ms, behind, sizeof behind) != 0)
        return st_aborted(c); /* a peer's abort (perhaps its own timeout, naming the same rank) came first */
    return st_mfail(c, STITCH_ERR_TIMEOUT, "rank %d timed out after %d ms waiting for rank %d (call number %llu); %s",
                    c->comm->rank, c->comm->timeout_ms, c->wait_peer, (unsigned long long)c->fp.seq, behind);
}

/* Nothing moved: poll again while the spin budget lasts (pr->spin_ns; yielding when oversubscribed), then say
 * *sleep: the caller arms the doorbell, looks once more and blocks (st_mstep). The clock is read on every 16th
 * fruitless poll only (a small call's wait is usually shorter), and the deadline starts at the first such read
 * after the call last moved (st_mstep): the timeout is how long the call goes without progress, not its length,
 * which on a loaded machine may be many timeouts for a call of thousands of segments (issue 18 item 9). */
/* One more spin: 1 to go on. Oversubscribed (more ranks than cores here), each spin yields, so a peer that shares
 * this core runs; on a crowded machine (st_crowded: other jobs hold the cores) spinning ends, sleep instead. */
static int st_spin_on(const st_mctx *c)
{
    return !c->pr->oversubscribed || !(st_crowded() || st_yield(c->pr->nlocal));
}

static stitch_status_t st_idle(st_mctx *c, int *spins, int *sleep)
{
    if (st_abort_is(&c->pr->abort))
        return st_aborted(c);
    int spin = c->pr->spin_ns > 0, crowded = 0;
    if (++*spins % 16 != 0 && spin && !(crowded = !st_spin_on(c)))
        return STITCH_OK;
    if (*spins % 4096 == 0 && st_proc_poll_ctrl(c->pr, 0) != 0)
        return st_aborted(c);
    if (!c->timing)
        st_deadline_start(&c->deadline, c->comm->timeout_ms), c->timing = 1;
    if (spin && *spins == 16)
        clock_gettime(CLOCK_MONOTONIC, &c->idle_since);
    if (!crowded && spin && (*spins == 16 || st_ns_since(&c->idle_since) < c->pr->spin_ns) && st_spin_on(c))
        return STITCH_OK;
    if (st_deadline_passed(&c->deadline))
        return st_mtimeout(c);
    *sleep = 1;
    return STITCH_OK;
}

/* Does step s of my plan move nothing between ranks (its transfers all local, no hello)? Then it is applied at once,
 * in plan order, without the machinery of sends, receives and waits: mesh_oneshot's reduce and copy steps, most of
 * an 8-byte call's steps. */
static int st_step_local(const st_mctx *c, int s)
{
    const st_plan *pl = &c->m.e->plan;
    const st_xfer *xs = c->m.e->sched.xfers;
    if (c->hello && c->m.k == 0 && s == 0)
        return 0;
    for (int32_t i = pl->send_first[s]; i < pl->send_first[s + 1]; i++)
        if (xs[pl->sends[i]].dst != c->m.me)
            return 0;
    for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++)
        if (xs[pl->recvs[i]].src != c->m.me)
            return 0;
    return 1;
}

/* A step of local transfers only (st_step_local): each a real copy or reduce with `at`, in plan order, as
 * st_recv_progress applies them. */
static void st_mstep_local(st_mctx *c, int s)
{
    const st_plan *pl = &c->m.e->plan;
    c->pr->prog = (st_progress){c->fp.seq, (uint32_t)c->m.k, (uint32_t)s};
    for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++) {
        const st_xfer *x = &c->m.e->sched.xfers[pl->recvs[i]];
        if (st_xfer_mapped(x))
            st_apply_local(c, x);
    }
}

/* Push the sends and apply the receives (or, replaying, the program's steps) until both are done. Going to sleep
 * takes two fruitless looks with the doorbell armed in between (proc.h), so peers only pay for a wake-up while we
 * really sleep. */
static stitch_status_t st_mreplay_progress(st_mctx *c, int *done, int *moved);

static stitch_status_t st_mloop(st_mctx *c, int s)
{
    stitch_status_t st = STITCH_OK;
    int spins = 0, armed = 0;
    uint32_t seen = 0;
    c->pr->prog = (st_progress){c->fp.seq, (uint32_t)c->m.k, (uint32_t)s}; /* what a peer's progress query hears */
    while (st == STITCH_OK) {
        int sends_done = 0, recvs_done = 0, moved = 0, sleep = 0, early_want = 0;
        if ((st = st_sends_progress(c, &sends_done, &moved, &early_want)) != STITCH_OK ||
            (st = c->rp ? st_mreplay_progress(c, &recvs_done, &moved) : st_recv_progress(c, s, &recvs_done, &moved)) !=
                STITCH_OK ||
            (sends_done && recvs_done) || moved) {
            if (armed)
                st_proc_disarm(c->pr), armed = 0;
            if (st != STITCH_OK || (sends_done && recvs_done))
                return st;
            spins = 0, c->timing = 0; /* progress: the timeout counts from the next idle look */
            continue;
        }
        if (armed) { /* the look after arming found nothing either: sleep (st_proc_block disarms) */
            st_proc_block(c->pr, ST_BLOCK_MS, !sends_done || early_want, seen);
            armed = 0;
            if (st_abort_is(&c->pr->abort))
                return st_aborted(c);
            continue;
        }
        if ((st = st_idle(c, &spins, &sleep)) == STITCH_OK && sleep && (st = st_check_waiting(c, s)) == STITCH_OK)
            seen = st_proc_arm(c->pr), armed = 1;
    }
    return st;
}

/* One step of the plan. */
static stitch_status_t st_mstep(st_mctx *c, int s)
{
    stitch_status_t st = st_sends_begin(c, s);
    if (st == STITCH_OK)
        st = st_rma_begin(c, s);
    c->in = (st_in){.i = c->m.e->plan.recv_first[s], .fwd = -1, .hello = c->hello && c->m.k == 0 && s == 0};
    return st == STITCH_OK ? st_mloop(c, s) : st;
}

/* ---- tiny calls, replayed ---------------------------------------------------------------------------------
 * A call whose messages are all step 0's and small (compact, or staged whole with a full header: ST_SMALL_BYTES),
 * and whose later steps are local (mesh_oneshot's all_reduce of a few elements, a rooted call's hello included: an
 * 8-byte call at np 2 cost ~3,200 instructions, ~2,000 of them the general path's walk of steps, transfers and
 * pairs, staging, and the receive's machinery; callgrind, docs/performance.md) is recorded on its first call of a
 * shape (replay.c: the moves, and marks for each message sent, with the pieces of my input it carries, and each
 * received, with the moves that apply it) and replayed on the next: the same messages, byte for byte, and the same
 * moves on what arrives. A message at the head of a stream that is not the one the program expects (another call's,
 * another fingerprint, a point-to-point message) is named as the general path names it. A small message that a
 * ring's wrap cut in two is gathered in c->rx; a recording that met one (applied piece by piece, from two places)
 * is dropped and made again on the next call. Peers need not agree on replaying: the wire is the same either way.
 * Most replayed calls take the fast path below (st_mfast) and never build the step loop's state. */

/* A program's message (its ST_RM_SEND, ST_RM_SENDF or ST_RM_HELLO, or ST_RM_RECV, ST_RM_RECVF or ST_RM_HELLO_IN) in
 * call m: the peer, the header as the wire carries it (the compact one from the program's key, a full one from the
 * program's header: the fingerprint when it was recorded), and its length in the stream, padding included. The fast
 * path and the full replay both build and check messages with it, so they send, and expect, the same bytes. Every
 * message of a program is step 0's. */
typedef struct st_pmsg {
    union {
        st_msg_small small;
        st_msg_hdr full;
    } head;
    size_t hlen, len;
    int peer, compact;
} st_pmsg;

static st_pmsg st_pmsg_of(const st_call *m, const st_rprog *r, const st_rmove *mv)
{
    int send = mv->op == ST_RM_SEND || mv->op == ST_RM_SENDF || mv->op == ST_RM_HELLO;
    int hello = mv->op == ST_RM_HELLO || mv->op == ST_RM_HELLO_IN;
    st_pmsg g; /* only what the kind uses is set: this runs for every message of a replayed call */
    g.compact = mv->op == ST_RM_SEND || mv->op == ST_RM_RECV;
    if (hello)
        g.peer = send ? (m->me + 1) % m->p : (m->me + m->p - 1) % m->p;
    else
        g.peer = send ? m->sched->xfers[mv->doff].dst : m->sched->xfers[mv->doff].src;
    if (g.compact) {
        g.head.small = (st_msg_small){ST_MSG_COMPACT, 0, m->fp.seq, r->key};
        g.hlen = sizeof g.head.small, g.len = g.hlen + mv->n;
        return g;
    }
    memcpy(&g.head.full, r->head, sizeof g.head.full);
    g.head.full.seq = m->fp.seq, g.head.full.src = send ? m->me : g.peer;
    g.head.full.g = hello ? ST_HELLO_G : 0, g.head.full.bytes = mv->n;
    g.hlen = sizeof g.head.full, g.len = g.hlen + mv->n + (64 - mv->n % 64) % 64;
    return g;
}

/* Stage the message of a ST_RM_SEND, ST_RM_SENDF or ST_RM_HELLO in the next send slot (pr->outs grows as
 * st_sends_begin grows it): its header and padding; its ST_RM_PIECEs follow, at o->paid. */
static stitch_status_t st_mreplay_send(st_mctx *c, const st_rmove *mv)
{
    st_pmsg g = st_pmsg_of(&c->m, c->rp, mv);
    if (c->nouts == c->pr->outs_cap) {
        int cap = c->pr->outs_cap ? 2 * c->pr->outs_cap : 4;
        st_out *more = realloc(c->pr->outs, sizeof *more * (size_t)cap);
        if (!more)
            return st_mfail(c, STITCH_ERR_NO_MEMORY, "out of memory for %d sends", cap);
        c->outs = c->pr->outs = more, c->pr->outs_cap = cap;
    }
    st_out *o = &c->outs[c->nouts++];
    o->x = mv->op == ST_RM_HELLO ? &c->hello_x : &c->m.e->sched.xfers[mv->doff];
    o->hdr_done = o->unit_done = 0, o->done = o->rma = 0;
    memcpy(o->stage, &g.head, g.hlen);
    memset(o->stage + g.hlen + mv->n, 0, g.len - g.hlen - mv->n);
    o->paid = g.hlen, o->staged = g.len;
    st_msg_compact_sent += (unsigned long long)g.compact;
    return STITCH_OK;
}

/* The head of g's stream (avail bytes at p) is not the message the program expects: name what differs as the
 * general path would (st_recv_compact, st_recv_header), or wait (*wait) while a compact one's payload is to come. */
static stitch_status_t st_mreplay_odd(st_mctx *c, const st_pmsg *g, size_t bytes, const void *p, size_t avail,
                                      int *wait)
{
    uint32_t magic;
    st_msg_hdr h;
    *wait = 1;
    memcpy(&magic, p, sizeof magic);
    if (magic == ST_MSG_COMPACT) {
        st_msg_small sm;
        memcpy(&sm, p, sizeof sm);
        if (g->compact && memcmp(&sm, &g->head.small, sizeof sm) == 0) /* its payload still to come */
            return STITCH_OK;
        h = st_compact_unpack(&sm, g->peer, bytes);
    } else if (avail < sizeof h) {
        return STITCH_OK;
    } else {
        memcpy(&h, p, sizeof h);
    }
    *wait = 0;
    stitch_status_t st = st_check_hdr(c, &h, g->peer, 0, bytes);
    if (st != STITCH_OK)
        return st;
    if (magic != ST_MSG_COMPACT && h.pad[0] != 0)
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: rank %d sent step 0's message one-sided where one on the "
                        "stream was due", c->m.me, g->peer);
    return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: rank %d sent step 0's message %s where %s one was due", c->m.me,
                    g->peer, magic == ST_MSG_COMPACT ? "compact" : "with a full header",
                    g->compact ? "a compact" : "a full-header");
}

/* A ST_RM_RECV or ST_RM_RECVF: is its message at the head of its stream, as expected? *got when it is whole there
 * (its payload is then the lines), or gathered in c->rx from the pieces it came in (a ring's wrap cuts a frame; a
 * compact message is never cut). */
static stitch_status_t st_mreplay_recv(st_mctx *c, const st_rmove *mv, int *got)
{
    st_pmsg g = st_pmsg_of(&c->m, c->rp, mv);
    st_tp *t = c->pr->tp[g.peer];
    const void *p;
    size_t avail;
    int wait;
    c->in.i = (int32_t)mv->soff, c->wait_peer = g.peer;
    *got = 0;
    if (g.len > sizeof c->rx) /* the recording takes only small ones (st_recv_header) */
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: a replayed message of %zu bytes", c->m.me, g.len);
    stitch_status_t st = st_peek(c, g.peer, &p, &avail);
    uint32_t magic = 0;
    if (st == STITCH_OK && avail >= sizeof magic)
        memcpy(&magic, p, sizeof magic);
    size_t need = magic == ST_MSG_COMPACT ? sizeof(st_msg_small) : sizeof(st_msg_hdr); /* a header of either kind */
    if (st != STITCH_OK || (c->rx_got == 0 && avail < need))
        return st;
    if (c->rx_got == 0 && (avail < g.hlen || memcmp(p, &g.head, g.hlen) != 0))
        return st_mreplay_odd(c, &g, mv->n, p, avail, &wait);
    if (c->rx_got == 0 && (avail >= g.len || g.compact)) {
        if (avail < g.len) /* a compact one's payload is still to come */
            return STITCH_OK;
        c->rb.base[ST_RR_LINES] = (char *)p + g.hlen;
        c->rp_peer = g.peer, c->rp_len = g.len, *got = 1;
        st_msg_compact_recv += (unsigned long long)g.compact;
        return STITCH_OK;
    }
    size_t n = avail < g.len - c->rx_got ? avail : g.len - c->rx_got;
    st_msg_replay_pieces += c->rx_got == 0;
    memcpy(c->rx + c->rx_got, p, n);
    t->ops->consume(t, n);
    c->rx_got += n;
    c->in.have_hdr = c->rx_got < g.len; /* the stream is mid-message: st_check_waiting must not read its head */
    if (c->rx_got == g.len) {
        c->rb.base[ST_RR_LINES] = c->rx + g.hlen;
        c->rp_peer = g.peer, c->rp_len = 0, c->rx_got = 0, *got = 1;
    }
    return STITCH_OK;
}

/* The program's steps from rp_i on, until one waits for a message (*done when none is left), or (lead) up to the
 * first ST_RM_RECV: every ST_RM_SEND comes before it (step 0 stages its sends before it receives), so the loop that
 * runs the rest pushes them all. */
static stitch_status_t st_mreplay_steps(st_mctx *c, int lead, int *done, int *moved)
{
    const st_rprog *r = c->rp;
    stitch_status_t st = STITCH_OK;
    for (; c->rp_i < r->nmoves; c->rp_i++) {
        const st_rmove *mv = &r->mv[c->rp_i];
        st_out *o = c->nouts ? &c->outs[c->nouts - 1] : NULL; /* a piece's message: a send came before it */
        int got;
        switch (mv->op) {
        case ST_RM_SEND:
        case ST_RM_SENDF:
        case ST_RM_HELLO:
            if ((st = st_mreplay_send(c, mv)) != STITCH_OK)
                return st;
            break;
        case ST_RM_PIECE: /* recorded right after its message's mark (st_stage, st_stage_compact) */
            if (!o)
                return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: a replayed program's piece before any message",
                                c->m.me);
            memcpy(o->stage + o->paid, c->rb.base[mv->sk] + mv->soff, mv->n);
            o->paid += mv->n;
            break;
        case ST_RM_RECV:
        case ST_RM_RECVF:
            if (lead)
                return STITCH_OK;
            if ((st = st_mreplay_recv(c, mv, &got)) != STITCH_OK || !got)
                return st;
            break;
        case ST_RM_DONE:
            if (c->rp_len)
                c->pr->tp[c->rp_peer]->ops->consume(c->pr->tp[c->rp_peer], c->rp_len);
            break;
        case ST_RM_HELLO_IN: /* st_hello_progress, as the general path checks it */
            c->in.hello = 1;
            if (lead || (st = st_hello_progress(c, moved)) != STITCH_OK || c->in.hello)
                return st;
            break;
        default:
            st_replay_move(mv, &c->m, &c->rb);
        }
        *moved = 1;
    }
    c->in.i = c->m.e->plan.recv_first[1];
    *done = 1;
    return STITCH_OK;
}

static stitch_status_t st_mreplay_progress(st_mctx *c, int *done, int *moved)
{
    return st_mreplay_steps(c, 0, done, moved);
}

/* A recorded call: its program's steps before the first message received (its sends staged) and the sends pushed
 * in order while the transports take them whole (the loop pushes the rest, as st_sends_progress keeps each stream's
 * order), then the loop that runs the rest. */
static stitch_status_t st_mreplay(st_mctx *c, size_t part)
{
    int done = 0, moved = 0;
    c->outs = c->pr->outs, c->nouts = 0;
    c->in = (st_in){.i = c->m.e->plan.recv_first[0], .fwd = -1};
    stitch_status_t st = st_mreplay_steps(c, 1, &done, &moved);
    if (st == STITCH_OK && c->nouts)
        c->outs[0].hdr_done = part; /* the first message's bytes the fast path sent (st_mfast) */
    for (int i = 0; st == STITCH_OK && i < c->nouts; i++) {
        st_out *o = &c->outs[i];
        if (!st_out_push(c, c->pr->tp[o->x->dst], o->stage, o->staged, &o->hdr_done, &st))
            break;
        o->done = 1;
    }
    st_msg_replays++;
    return st == STITCH_OK ? st_mloop(c, 0) : st;
}

/* ---- setting up a call -------------------------------------------------------------------------------- */

/* The message engine's part of a call's setup: my headers' fingerprint, the hello of a rooted call. */
static void st_mctx_init(st_mctx *c, stitch_comm_t *comm)
{
    const st_args *a = c->m.a;
    const st_entry *e = c->m.e;
    int rooted = st_coll_rooted((int)a->coll);
    c->comm = comm, c->a = a;
    c->pr = comm->proc;
    c->fp = (st_msg_hdr){ST_MSG_MAGIC, comm->rank, c->m.fp.seq, a->count, (int32_t)a->coll, (int32_t)a->dtype,
                         c->m.fp.op, c->m.fp.root,
                         st_reg_index(comm->reg, e->sched.algo), 0, 0, {0}};
    c->hello = rooted && c->m.p > 1 && c->m.nsteps > 0;
    c->compact = !st_msg_compact_off && st_compact_key(&c->fp, &c->ckey);
    c->hello_x = (st_xfer){.src = c->m.me, .dst = (c->m.me + 1) % c->m.p};
}

static stitch_status_t st_mrun(st_mctx *c, stitch_comm_t *comm);
static void st_mctx_begin(st_mctx *c, stitch_comm_t *comm);

/* May call m be a tiny program (recorded or replayed)? One segment, few enough bytes that its messages are staged
 * whole (ST_SMALL_BYTES); the recording refuses the rest (a larger message, a later step that talks to peers). */
static int st_mtiny_may(const st_call *m)
{
    return m->nseg == 1 && m->a->count * m->esize <= ST_SMALL_BYTES && m->a->coll != STITCH_ALL_TO_ALL_V &&
           !st_replay_off; /* all_to_all_v: its moves follow the count arrays, which a shape does not hold */
}

/* ---- the fast path of a replayed call ------------------------------------------------------------------------
 * Most replayed calls never wait: the peers' messages are there, or come within a few polls, and the rings take
 * mine. For those, st_mfast makes the program's steps straight from the call model, sending each message from a line
 * on the stack, with none of the step loop's state (st_mctx: 700 bytes zeroed and filled per call, the sends'
 * slots, the waiting machinery). At the first step that would wait (a send the ring does not take whole, a message
 * not there after ST_FAST_POLLS looks, or one that is not the one expected) it stops, and the full replay goes on
 * from that step, which it redoes whole (a send stopped there was not sent; a message was not consumed): so a
 * rank that waits, a mismatch, a dead peer or an abort are the full path's, as before. */
#define ST_FAST_POLLS 256

/* Is the head of t's stream `n` bytes that begin with the `wlen` bytes of `want`? Polls up to `polls` times while the
 * stream is empty (anything else there, or a broken stream, is for the full path to name). */
static const char *st_fast_look(st_tp *t, const void *want, size_t wlen, size_t n, int polls)
{
    char why[160];
    if (!t->ops->compact && polls > 1) /* a look is a system call (tcp): one */
        polls = 1;
    for (int i = 0; i < polls; i++) {
        const void *p;
        ssize_t got = t->ops->peek(t, &p, why, sizeof why);
        if (got >= (ssize_t)n && memcmp(p, want, wlen) == 0)
            return p;
        if (got != 0)
            return NULL;
        __builtin_ia32_pause();
    }
    return NULL;
}

/* The fast path's message being staged: the step that began it, where it goes, whether it is compact, its length so
 * far and its padding, and where it is staged (a buffer of sizeof(st_msg_hdr) + ST_SMALL_BYTES, left uninitialised:
 * a call writes only what it sends). */
typedef struct st_fline {
    int from, dst, compact;
    size_t len, pad;
    char *b;
} st_fline;

/* Send f's message, padded: 1 when it went whole; else 0 and *part the bytes the transport took (a compact message
 * or a bare header goes whole or not at all; a small one may be cut at a 64-byte multiple where the ring is short:
 * transport.h). */
static int st_fast_flush(st_proc *pr, st_fline *f, size_t *part)
{
    char why[160];
    st_tp *t = pr->tp[f->dst];
    memset(f->b + f->len, 0, f->pad);
    ssize_t n = t->ops->send(t, f->b, f->len + f->pad, why, sizeof why);
    if (n != (ssize_t)(f->len + f->pad)) {
        st_msg_replay_pieces += n > 0;
        return *part = n > 0 ? (size_t)n : 0, 0;
    }
    st_msg_compact_sent += (unsigned long long)f->compact;
    f->from = -1;
    return 1;
}

/* Program r's steps for call m until one would wait: returns its index (r->nmoves: the call is done), and in *part
 * the bytes of that step's message the transport took, when it took some but not all. */
static int st_mfast(const st_call *m, st_proc *pr, const st_rprog *r, st_replay_bases *b, size_t *part)
{
    int polls = st_msg_fast_off ? 0 : pr->oversubscribed ? 1 : ST_FAST_POLLS, peer = 0;
    size_t rlen = 0;
    char line[sizeof(st_msg_hdr) + ST_SMALL_BYTES];
    st_fline f = {.from = -1, .b = line};
    for (int i = 0; i < r->nmoves; i++) {
        const st_rmove *mv = &r->mv[i];
        if (f.from >= 0 && mv->op != ST_RM_PIECE && !st_fast_flush(pr, &f, part)) /* the staged message is whole */
            return f.from;
        st_pmsg g;
        const char *p;
        switch (mv->op) {
        case ST_RM_SEND:
        case ST_RM_SENDF:
        case ST_RM_HELLO:
            g = st_pmsg_of(m, r, mv);
            f.from = i, f.dst = g.peer, f.compact = g.compact, f.len = g.hlen, f.pad = g.len - g.hlen - mv->n;
            memcpy(f.b, &g.head, g.hlen);
            break;
        case ST_RM_PIECE:
            memcpy(f.b + f.len, b->base[mv->sk] + mv->soff, mv->n);
            f.len += mv->n;
            break;
        case ST_RM_HELLO_IN:
        case ST_RM_RECV:
        case ST_RM_RECVF:
            g = st_pmsg_of(m, r, mv);
            if (!(p = st_fast_look(pr->tp[g.peer], &g.head, g.hlen, g.len, polls)))
                return i;
            if (mv->op == ST_RM_HELLO_IN) {
                pr->tp[g.peer]->ops->consume(pr->tp[g.peer], g.len);
                break;
            }
            b->base[ST_RR_LINES] = (char *)p + g.hlen, peer = g.peer, rlen = g.len;
            st_msg_compact_recv += (unsigned long long)g.compact;
            break;
        case ST_RM_DONE:
            pr->tp[peer]->ops->consume(pr->tp[peer], rlen);
            b->base[ST_RR_LINES] = NULL;
            break;
        default:
            st_replay_move(mv, m, b);
        }
    }
    if (f.from >= 0 && !st_fast_flush(pr, &f, part))
        return f.from;
    st_msg_replays++, st_msg_replays_fast++;
    return r->nmoves;
}

stitch_status_t st_exec_msg(stitch_comm_t *comm, const st_args *a)
{
    st_mctx c; /* the call opened in place: an st_call is 256 bytes, and an 8-byte call ~1,500 instructions */
    stitch_status_t st = st_call_open(&c.m, comm, a);
    if (st != STITCH_OK || !c.m.e)
        return st;
    const st_rprog *r = st_mtiny_may(&c.m) ? st_replay_find(c.m.e, &c.m) : NULL;
    if (!r)
        return st_mrun(&c, comm);
    st_replay_bases b;
    size_t part = 0;
    st_replay_bases_of(&c.m, &b);
    int at = st_mfast(&c.m, comm->proc, r, &b, &part);
    if (at == r->nmoves)
        return STITCH_OK;
    st_mctx_begin(&c, comm); /* what st_mrun does before the replay, then the replay from step `at` */
    c.rb = b, c.rp = r, c.rp_i = at;
    return st_mreplay(&c, part);
}

stitch_status_t st_exec_msg_call(stitch_comm_t *comm, const st_call *m)
{
    st_mctx c;
    c.m = *m;
    return st_mrun(&c, comm);
}

/* Call c->m (opened): everything else in c starts zeroed. */
static void st_mctx_begin(st_mctx *c, stitch_comm_t *comm)
{
    memset((char *)c + sizeof c->m, 0, offsetof(st_mctx, rx) - sizeof c->m);
    st_mctx_init(c, comm);
}

static stitch_status_t st_mrun(st_mctx *c, stitch_comm_t *comm)
{
    stitch_status_t st = STITCH_OK;
    st_mctx_begin(c, comm);
    if (st_mtiny_may(&c->m)) { /* record: st_exec_msg found no program (another caller records again: slower only) */
        st_replay_bases_of(&c->m, &c->rb);
        if (st_replay_begin(&c->rec, (st_entry *)c->m.e, &c->m, &c->rb)) { /* the headers' fields (st_pmsg_of) */
            c->rec.r->key = c->ckey;
            memcpy(c->rec.r->head, &c->fp, sizeof c->fp);
        }
    }
    if (c->pr->fuse && c->m.nsteps > 1)
        c->fwd = st_fwd_table((st_entry *)c->m.e, c->m.me);
    for (size_t k = 0; st == STITCH_OK && k < c->m.nseg; k++) {
        st_call_segment_begin(&c->m, k);
        for (int s = 0; st == STITCH_OK && s < c->m.nsteps; s++) {
            if (c->nearly == 0 && st_step_local(c, s))
                st_mstep_local(c, s);
            else if (c->rec.r && s > 0) /* a later step that talks to peers: not a tiny program's */
                st_replay_refuse(&c->rec), st = st_mstep(c, s);
            else
                st = st_mstep(c, s);
        }
        if (st == STITCH_OK)
            st_call_segment_end(&c->m);
    }
    if (st == STITCH_OK)
        st_call_finish(&c->m);
    if (c->rec.r)
        st_replay_end(&c->rec, st == STITCH_OK);
    if (c->pr)
        c->pr->straight = -1; /* a failed call may stop in a straight message */
    for (int j = 0; st != STITCH_OK && c->pr && j < c->m.p; j++) /* failed: nothing one-sided may touch the buffers */
        if (j != c->m.me && c->pr->tp[j] && c->pr->tp[j]->ops->rma)
            c->pr->tp[j]->ops->rma->stop(c->pr->tp[j]);
    return st;
}
