/* p2p_msg.c - point-to-point on process ranks (p2p.h): a message on the pair's data stream.
 *
 * A message is what the collectives send (exec_msg.c): a 64-byte header, the payload, padding to 64 bytes, so the
 * transports' rules hold (transport.h: a header is never split, an element never straddles two regions). The
 * header carries its own magic, so a collective that finds one where its own message should be, or a receive that
 * finds a collective's, knows that the two ranks are at different operations. A rank progresses all its group's
 * operations in one loop: the first unfinished send to each peer pushes what its stream takes, the first
 * unfinished receive from each peer applies what has arrived; so no order of the operations on either side can
 * deadlock, and a message larger than the rings flows while both sides work. A send is done when the stream has
 * taken it; its receiver checks the header (count and dtype), and on a mismatch aborts the communicator with a
 * message naming both ranks, which reaches the sender over the control channels.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "base.h"
#include "p2p.h"
#include "exec_msg.h"
#include "proc.h"

#define ST_BLOCK_MS 20

typedef struct st_p2p_hdr {
    uint32_t magic;
    int32_t src;
    uint64_t count;
    int32_t dtype, nth;
    uint64_t bytes;
    char pad[32];
} st_p2p_hdr;
_Static_assert(sizeof(st_p2p_hdr) == 64, "a message header is 64 bytes (transport.h)");

static const char st_zero64[64];

/* One operation's progress: the bytes of its message (header, payload, padding) done so far. */
typedef struct st_mstate {
    st_p2p_hdr hdr;
    size_t done, total, bytes;
    int finished;
} st_mstate;

typedef struct st_mrun {
    stitch_comm_t *comm;
    st_proc *pr;
    const char *fn;
    const st_p2p_op *ops;
    st_mstate *ms;
    int n, left;
    st_p2p_feed *feed; /* the non-blocking operations that join the loop (p2p.h); NULL: none */
    int cap;           /* ms's room */
} st_mrun;

static size_t st_padded(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

/* The first unfinished operation of op's kind and peer is op itself: operations of a pair go in order. */
static int st_first(const st_mrun *r, int i)
{
    for (int j = 0; j < i; j++)
        if (!r->ms[j].finished && r->ops[j].kind == r->ops[i].kind && r->ops[j].peer == r->ops[i].peer)
            return 0;
    return 1;
}

static void st_finished(st_mrun *r, int i)
{
    r->ms[i].finished = 1, r->left--;
    if (r->feed)
        r->feed->done(r->feed, i);
}

/* Add ops[r->n..n) to the run (ops is where they all are now): their messages' headers. */
static stitch_status_t st_madd(st_mrun *r, const st_p2p_op *ops, int n)
{
    if (n > r->cap) {
        int cap = n > 2 * r->cap ? n : 2 * r->cap;
        st_mstate *ms = realloc(r->ms, sizeof *ms * (size_t)cap);
        if (!ms)
            return st_comm_fail(r->comm, STITCH_ERR_NO_MEMORY, "%s: out of memory", r->fn);
        r->ms = ms, r->cap = cap;
    }
    r->ops = ops;
    for (int i = r->n; i < n; i++) {
        st_mstate *m = &r->ms[i];
        *m = (st_mstate){{0}, 0, 0, 0, 0};
        m->bytes = ops[i].count * stitch_dtype_size(ops[i].dtype);
        m->total = 64 + st_padded(m->bytes);
        m->hdr = (st_p2p_hdr){ST_P2P_MSG_MAGIC, r->comm->rank, ops[i].count, (int32_t)ops[i].dtype, ops[i].nth,
                              m->bytes, {0}};
        r->n++, r->left++;
    }
    return STITCH_OK;
}

/* The operations the feed brought since the last look; first, when most of those in hand are done, drop them. */
static stitch_status_t st_mtake(st_mrun *r)
{
    if (!r->feed)
        return STITCH_OK;
    if (r->n - r->left >= 64 && r->n - r->left >= r->left) {
        int m = 0;
        for (int i = 0; i < r->n; i++)
            if (!r->ms[i].finished)
                r->ms[m++] = r->ms[i];
        r->feed->compact(r->feed);
        r->n = m, r->ops = r->feed->ops;
    }
    if (r->feed->more(r->feed) != 0)
        return st_comm_fail(r->comm, STITCH_ERR_NO_MEMORY, "%s: out of memory for the operations", r->fn);
    return r->feed->n > r->n ? st_madd(r, r->feed->ops, r->feed->n) : STITCH_OK;
}

static stitch_status_t st_aborted(st_mrun *r)
{
    return st_comm_error(r->comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted: %s", r->fn, r->comm->rank,
                         st_abort_reason(&r->pr->abort));
}

/* The stream to or from `peer` broke (err): a peer's abort, already on the control channel when it closed its
 * streams, explains that better than the broken pipe or reset it caused (exec_msg.c's st_broken likewise). */
static stitch_status_t st_broken(st_mrun *r, const char *doing, int peer, const char *err)
{
    if (st_proc_poll_ctrl(r->pr, 0) != 0)
        return st_aborted(r);
    return st_comm_fail(r->comm, STITCH_ERR_SYSTEM, "%s: rank %d: %s rank %d: %s", r->fn, r->comm->rank, doing, peer,
                        err);
}

/* Push what the stream takes of send i: the header alone, then payload, then padding, each its own send. */
static stitch_status_t st_push(st_mrun *r, int i, int *moved)
{
    st_mstate *m = &r->ms[i];
    st_tp *t = r->pr->tp[r->ops[i].peer];
    char err[256];
    while (m->done < m->total) {
        const char *at;
        size_t len;
        if (m->done < 64)
            at = (const char *)&m->hdr + m->done, len = 64 - m->done;
        else if (m->done < 64 + m->bytes)
            at = (const char *)r->ops[i].send + (m->done - 64), len = 64 + m->bytes - m->done;
        else
            at = st_zero64, len = m->total - m->done;
        ssize_t k = t->ops->send(t, at, len, err, sizeof err);
        if (k < 0)
            return st_broken(r, "sending to", r->ops[i].peer, err);
        if (k == 0)
            return STITCH_OK;
        m->done += (size_t)k, *moved = 1;
    }
    st_finished(r, i);
    return STITCH_OK;
}

static stitch_status_t st_bad_hdr(st_mrun *r, int i, const st_p2p_hdr *h)
{
    const st_p2p_op *op = &r->ops[i];
    char what[200];
    st_p2p_describe(op, r->comm->rank, what, sizeof what);
    if (h->magic != ST_P2P_MSG_MAGIC)
        return st_comm_fail(r->comm, STITCH_ERR_MISMATCH, "%s: rank %d sent %s where rank %d expects %s", r->fn,
                            op->peer, h->magic == ST_MSG_MAGIC || h->magic == ST_MSG_COMPACT ?
                            "a collective's message" : "something else",
                            r->comm->rank, what);
    return st_comm_fail(r->comm, STITCH_ERR_MISMATCH, "%s: rank %d sends %llu %s to rank %d but rank %d receives %zu "
                        "%s from rank %d (send and receive number %d between them in this group); a send and its "
                        "receive must agree on count and dtype", r->fn, op->peer, (unsigned long long)h->count,
                        stitch_dtype_name((stitch_dtype_t)h->dtype), r->comm->rank, r->comm->rank, op->count,
                        stitch_dtype_name(op->dtype), op->peer, op->nth);
}

/* Apply what has arrived for receive i. */
static stitch_status_t st_pull(st_mrun *r, int i, int *moved)
{
    st_mstate *m = &r->ms[i];
    const st_p2p_op *op = &r->ops[i];
    st_tp *t = r->pr->tp[op->peer];
    size_t es = stitch_dtype_size(op->dtype);
    char err[256];
    while (m->done < m->total) {
        const void *ptr;
        ssize_t k = t->ops->peek(t, &ptr, err, sizeof err);
        if (k < 0)
            return st_broken(r, "receiving from", op->peer, err);
        size_t n = (size_t)k;
        if (m->done == 0) { /* the header, whole; a collective's compact message is all there is at 48 bytes */
            uint32_t magic = 0;
            if (n >= sizeof magic)
                memcpy(&magic, ptr, sizeof magic);
            if (n < 64 && magic != ST_MSG_COMPACT)
                return STITCH_OK;
            const st_p2p_hdr *h = ptr;
            if (h->magic != ST_P2P_MSG_MAGIC || h->count != op->count || h->dtype != (int32_t)op->dtype)
                return st_bad_hdr(r, i, h);
            t->ops->consume(t, 64);
            m->done = 64, *moved = 1;
            continue;
        }
        if (m->done < 64 + m->bytes) {
            size_t want = 64 + m->bytes - m->done;
            n = (n < want ? n : want) / es * es; /* whole elements: a part may show while it arrives */
            if (n == 0)
                return STITCH_OK;
            memcpy((char *)op->recv + (m->done - 64), ptr, n);
        } else if (n > m->total - m->done) {
            n = m->total - m->done;
        }
        if (n == 0)
            return STITCH_OK;
        t->ops->consume(t, n);
        m->done += n, *moved = 1;
    }
    st_finished(r, i);
    return STITCH_OK;
}

static stitch_status_t st_mtimeout(st_mrun *r)
{
    int i = 0;
    while (r->ms[i].finished)
        i++;
    return st_p2p_timeout(r->comm, r->fn, &r->ops[i], r->left);
}

/* One look at every operation that may move. */
static stitch_status_t st_look(st_mrun *r, int *moved, int *sending)
{
    stitch_status_t st = STITCH_OK;
    *sending = 0;
    for (int i = 0; i < r->n && st == STITCH_OK; i++) {
        if (r->ms[i].finished || !st_first(r, i))
            continue;
        if (r->ops[i].kind == ST_P2P_SEND)
            st = st_push(r, i, moved), *sending |= !r->ms[i].finished;
        else
            st = st_pull(r, i, moved);
    }
    return st;
}

static stitch_status_t st_mloop(st_mrun *r)
{
    st_deadline dl;
    int idle = 0;
    st_deadline_start(&dl, r->comm->timeout_ms);
    for (;;) {
        int moved = 0, sending = 0;
        stitch_status_t st = st_mtake(r);
        if (st != STITCH_OK)
            return st;
        if (r->left == 0)
            break;
        if ((st = st_look(r, &moved, &sending)) != STITCH_OK)
            return st;
        if (moved) {
            idle = 0;
            st_deadline_start(&dl, r->comm->timeout_ms);
            continue;
        }
        if (st_proc_poll_ctrl(r->pr, 0) != 0)
            return st_aborted(r);
        if (st_deadline_passed(&dl))
            return st_mtimeout(r);
        if (++idle < 64) {
            sched_yield();
            continue;
        }
        uint32_t seen = st_proc_arm(r->pr); /* then one more look (the feed too), so a ring after the arm is not lost */
        int had = r->n;
        if ((st = st_mtake(r)) == STITCH_OK)
            st = st_look(r, &moved, &sending);
        if (st != STITCH_OK || moved || r->n > had || r->left == 0) {
            st_proc_disarm(r->pr);
            if (st != STITCH_OK)
                return st;
            idle = 0;
            continue;
        }
        st_proc_block(r->pr, ST_BLOCK_MS, sending, seen);
    }
    return STITCH_OK;
}

void st_proc_p2p_wake(stitch_comm_t *comm)
{
    if (comm->proc->bell)
        st_bell_ring(comm->proc->bell);
}

stitch_status_t st_proc_p2p(stitch_comm_t *comm, const st_p2p_op *ops, int n, st_p2p_feed *feed)
{
    st_mrun r = {comm, comm->proc, feed ? "stitch_isend/irecv" : n == 1 ? (ops[0].kind == ST_P2P_SEND ?
                 "stitch_send" : "stitch_recv") : "stitch_group_end", ops, NULL, 0, 0, feed, 0};
    stitch_status_t st = st_madd(&r, ops, n);
    if (st == STITCH_OK)
        st = st_mloop(&r);
    free(r.ms);
    return st;
}
