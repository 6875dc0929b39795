/* p2p_threads.c - point-to-point on thread ranks (p2p.h): a mailbox per ordered pair in the job.
 *
 * Pair (s, d) has one offer at a time. The sender fills it (its buffer, count, dtype, number) and publishes it
 * (OFFERED, release); the receiver whose next receive from s it is claims it (CLAIMED, a compare-and-swap), copies
 * straight from the sender's buffer, writes its verdict and empties it (EMPTY, release): then the send is done.
 * A sender that gives up (timeout, abort, a mismatch elsewhere) withdraws an offer not yet claimed, or waits for
 * the copy of a claimed one to end, so its buffer is never read after it returns. Nothing here depends on timing:
 * a rank runs all its group's operations in one loop, offering its sends first, and sleeps on the job's p2p bell
 * (a futex word every offer and every emptying bumps) only after a fruitless look.
 *
 * The mailboxes are made on first use: the job's box (p rows, one per receiver) by a compare-and-swap on
 * job->p2p, a row (p pairs, one per sender) likewise, so a job that never sends pays nothing.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "comm.h"
#include "job.h"
#include "p2p.h"

enum { ST_EMPTY, ST_OFFERED, ST_CLAIMED };

typedef struct st_pair {
    _Alignas(64) _Atomic uint32_t state;
    uint64_t seq;        /* the offer's number among the pair's sends, from 1 */
    const void *buf;
    size_t count;
    int dtype;
    int verdict;         /* written by the receiver before EMPTY: 0, or 1 when the receive did not match */
    size_t rcount;       /* the receiver's count and dtype, for the sender's message */
    int rdtype;
    uint64_t sent;       /* the sender's own: sends completed */
    uint64_t recvd;      /* the receiver's own: receives completed */
} st_pair;

struct st_p2p_box {
    st_job_part part; /* first: the job frees the box through part.free (job.h) */
    int p;
    _Atomic uint32_t bell, sleepers;
    _Atomic(st_pair *) rows[]; /* per receiver: p pairs, by sender */
};

static void st_p2p_box_free(st_job_part *part)
{
    struct st_p2p_box *box = (struct st_p2p_box *)part;
    for (int d = 0; box && d < box->p; d++)
        free(atomic_load(&box->rows[d]));
    free(box);
}

static struct st_p2p_box *st_box(st_job *job)
{
    st_job_part *have = atomic_load_explicit(&job->p2p, memory_order_acquire);
    if (have)
        return (struct st_p2p_box *)have;
    struct st_p2p_box *box = calloc(1, sizeof *box + sizeof *box->rows * (size_t)job->p);
    if (!box)
        return NULL;
    box->part.free = st_p2p_box_free;
    box->p = job->p;
    if (!atomic_compare_exchange_strong(&job->p2p, &have, &box->part)) {
        free(box);
        return (struct st_p2p_box *)have;
    }
    return box;
}

static st_pair *st_pair_of(struct st_p2p_box *box, int src, int dst)
{
    st_pair *row = atomic_load_explicit(&box->rows[dst], memory_order_acquire), *none = NULL;
    if (!row) {
        row = aligned_alloc(64, sizeof *row * (size_t)box->p);
        if (!row)
            return NULL;
        memset(row, 0, sizeof *row * (size_t)box->p);
        if (!atomic_compare_exchange_strong(&box->rows[dst], &none, row)) {
            free(row);
            row = none;
        }
    }
    return &row[src];
}

static void st_ring(struct st_p2p_box *box)
{
    atomic_fetch_add(&box->bell, 1);
    if (atomic_load(&box->sleepers))
        syscall(SYS_futex, (uint32_t *)&box->bell, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void st_nap(struct st_p2p_box *box, uint32_t seen)
{
    struct timespec ts = {0, 50 * 1000000L}; /* an abort does not ring this bell: look again at least this often */
    atomic_fetch_add(&box->sleepers, 1);
    syscall(SYS_futex, (uint32_t *)&box->bell, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    atomic_fetch_sub(&box->sleepers, 1);
}

/* One operation's progress. */
typedef struct st_pstate {
    st_pair *pair;
    uint64_t seq; /* its number among the pair's operations of its kind, over the communicator's life */
    int posted, done;
} st_pstate;

typedef struct st_prun {
    stitch_comm_t *comm;
    const char *fn;
    const st_p2p_op *ops;
    st_pstate *ps;
    int n, left;
    struct st_p2p_box *box;
    st_p2p_feed *feed; /* the non-blocking operations that join the loop (p2p.h); NULL: none */
    int cap;           /* ps's room */
} st_prun;

static stitch_status_t st_mismatch(st_prun *r, const st_p2p_op *op, size_t scount, int sdtype, size_t rcount,
                                   int rdtype)
{
    int me = r->comm->rank, s = op->kind == ST_P2P_SEND ? me : op->peer, d = op->kind == ST_P2P_SEND ? op->peer : me;
    char nth[32];
    snprintf(nth, sizeof nth, "%d", op->nth);
    return st_comm_fail(r->comm, STITCH_ERR_MISMATCH, "%s: rank %d sends %zu %s to rank %d but rank %d receives %zu "
                        "%s from rank %d (send and receive number %s between them); a send and its receive must "
                        "agree on count and dtype", r->fn, s, scount, stitch_dtype_name((stitch_dtype_t)sdtype), d, d,
                        rcount, stitch_dtype_name((stitch_dtype_t)rdtype), s, nth);
}

static int st_try_send(st_prun *r, int i, stitch_status_t *st)
{
    const st_p2p_op *op = &r->ops[i];
    st_pstate *ps = &r->ps[i];
    st_pair *pr = ps->pair;
    if (!ps->posted) {
        if (ps->seq != pr->sent + 1 || atomic_load_explicit(&pr->state, memory_order_acquire) != ST_EMPTY)
            return 0;
        pr->seq = ps->seq, pr->buf = op->send, pr->count = op->count, pr->dtype = (int)op->dtype;
        atomic_store_explicit(&pr->state, ST_OFFERED, memory_order_release);
        st_ring(r->box);
        ps->posted = 1;
        return 1;
    }
    if (atomic_load_explicit(&pr->state, memory_order_acquire) != ST_EMPTY)
        return 0;
    ps->done = 1, r->left--;
    pr->sent++;
    if (!pr->verdict && r->feed)
        r->feed->done(r->feed, i);
    if (pr->verdict)
        *st = st_mismatch(r, op, op->count, op->dtype, pr->rcount, pr->rdtype);
    return 1;
}

static int st_try_recv(st_prun *r, int i, stitch_status_t *st)
{
    const st_p2p_op *op = &r->ops[i];
    st_pstate *ps = &r->ps[i];
    st_pair *pr = ps->pair;
    uint32_t offered = ST_OFFERED;
    if (ps->seq != pr->recvd + 1 || atomic_load_explicit(&pr->state, memory_order_acquire) != ST_OFFERED ||
        pr->seq != ps->seq || !atomic_compare_exchange_strong(&pr->state, &offered, ST_CLAIMED))
        return 0;
    int bad = pr->count != op->count || pr->dtype != (int)op->dtype;
    if (!bad && op->count)
        memcpy(op->recv, pr->buf, op->count * stitch_dtype_size(op->dtype));
    size_t scount = pr->count;
    int sdtype = pr->dtype;
    pr->verdict = bad, pr->rcount = op->count, pr->rdtype = (int)op->dtype;
    pr->recvd++;
    atomic_store_explicit(&pr->state, ST_EMPTY, memory_order_release);
    st_ring(r->box);
    ps->done = 1, r->left--;
    if (bad)
        *st = st_mismatch(r, op, scount, sdtype, op->count, op->dtype);
    else if (r->feed)
        r->feed->done(r->feed, i);
    return 1;
}

/* Give up: withdraw my offers not yet claimed, wait out the copies of claimed ones. */
static void st_withdraw(st_prun *r)
{
    for (int i = 0; i < r->n; i++) {
        st_pstate *ps = &r->ps[i];
        uint32_t offered = ST_OFFERED;
        if (r->ops[i].kind != ST_P2P_SEND || !ps->posted || ps->done)
            continue;
        if (!atomic_compare_exchange_strong(&ps->pair->state, &offered, ST_EMPTY))
            while (atomic_load_explicit(&ps->pair->state, memory_order_acquire) != ST_EMPTY)
                sched_yield(); /* the receiver is copying: it is bounded */
    }
}

static stitch_status_t st_timeout(st_prun *r)
{
    int i = 0;
    while (r->ps[i].done)
        i++;
    return st_p2p_timeout(r->comm, r->fn, &r->ops[i], r->left);
}

/* Add ops[r->n..n) to the run (ops is where they all are now): their pairs, and their numbers among the pair's
 * operations of their kind, counting mine not yet done (the counters change only in my own loop). */
static stitch_status_t st_add(st_prun *r, const st_p2p_op *ops, int n)
{
    if (n > r->cap) {
        int cap = n > 2 * r->cap ? n : 2 * r->cap;
        st_pstate *ps = r->box ? realloc(r->ps, sizeof *ps * (size_t)cap) : NULL;
        if (!ps)
            return st_comm_fail(r->comm, STITCH_ERR_NO_MEMORY, "%s: out of memory for the mailboxes", r->fn);
        r->ps = ps, r->cap = cap;
    }
    r->ops = ops;
    for (int i = r->n; i < n; i++) {
        int me = r->comm->rank, send = ops[i].kind == ST_P2P_SEND;
        st_pair *pair = st_pair_of(r->box, send ? me : ops[i].peer, send ? ops[i].peer : me);
        if (!pair)
            return st_comm_fail(r->comm, STITCH_ERR_NO_MEMORY, "%s: out of memory for the mailboxes", r->fn);
        uint64_t ahead = 0;
        for (int j = 0; j < r->n; j++)
            ahead += !r->ps[j].done && r->ps[j].pair == pair && ops[j].kind == ops[i].kind;
        /* an if, not a conditional expression, which a compiler may turn into loads of both (the peer writes the
         * other) */
        r->ps[i] = (st_pstate){pair, 0, 0, 0};
        if (send)
            r->ps[i].seq = pair->sent + ahead + 1;
        else
            r->ps[i].seq = pair->recvd + ahead + 1;
        r->n++, r->left++;
    }
    return STITCH_OK;
}

/* The operations the feed brought since the last look; first, when most of those in hand are done, drop them. */
static stitch_status_t st_take(st_prun *r)
{
    if (!r->feed)
        return STITCH_OK;
    if (r->n - r->left >= 64 && r->n - r->left >= r->left) {
        int m = 0;
        for (int i = 0; i < r->n; i++)
            if (!r->ps[i].done)
                r->ps[m++] = r->ps[i];
        r->feed->compact(r->feed);
        r->n = m, r->ops = r->feed->ops;
    }
    if (r->feed->more(r->feed) != 0)
        return st_comm_fail(r->comm, STITCH_ERR_NO_MEMORY, "%s: out of memory for the operations", r->fn);
    return r->feed->n > r->n ? st_add(r, r->feed->ops, r->feed->n) : STITCH_OK;
}

static stitch_status_t st_loop(st_prun *r)
{
    st_deadline dl;
    int idle = 0;
    st_deadline_start(&dl, r->comm->timeout_ms);
    for (;;) {
        uint32_t seen = atomic_load(&r->box->bell);
        stitch_status_t st = st_take(r);
        int moved = 0;
        if (st != STITCH_OK)
            return st;
        if (r->left == 0)
            break;
        for (int i = 0; i < r->n && st == STITCH_OK; i++)
            if (!r->ps[i].done)
                moved += r->ops[i].kind == ST_P2P_SEND ? st_try_send(r, i, &st) : st_try_recv(r, i, &st);
        if (st != STITCH_OK)
            return st;
        if (moved) {
            idle = 0;
            st_deadline_start(&dl, r->comm->timeout_ms);
            continue;
        }
        if (st_job_aborted(r->comm->job))
            return st_comm_error(r->comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted: %s", r->fn,
                                 r->comm->rank, st_job_reason(r->comm->job));
        if (st_deadline_passed(&dl))
            return st_timeout(r);
        if (++idle < 64)
            sched_yield();
        else
            st_nap(r->box, seen);
    }
    return STITCH_OK;
}

void st_threads_p2p_wake(stitch_comm_t *comm)
{
    st_job_part *have = atomic_load_explicit(&comm->job->p2p, memory_order_acquire);
    if (have)
        st_ring((struct st_p2p_box *)have);
}

stitch_status_t st_threads_p2p(stitch_comm_t *comm, const st_p2p_op *ops, int n, st_p2p_feed *feed)
{
    st_prun r = {comm, feed ? "stitch_isend/irecv" : n == 1 ? (ops[0].kind == ST_P2P_SEND ? "stitch_send" :
                 "stitch_recv") : "stitch_group_end", ops, NULL, 0, 0, st_box(comm->job), feed, 0};
    stitch_status_t st = st_add(&r, ops, n);
    if (st == STITCH_OK)
        st = st_loop(&r);
    if (st != STITCH_OK)
        st_withdraw(&r);
    free(r.ps);
    return st;
}
