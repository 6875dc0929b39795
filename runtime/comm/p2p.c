/* p2p.c - stitch_send, stitch_recv, stitch_group_start, stitch_group_end (p2p.h says how they run).
 *
 * A group is the calling thread's: its operations are recorded, with their buffers, until stitch_group_end (the
 * record's memory is kept for the thread's next group and freed when the thread exits). It
 * holds the operations of one communicator (a group across communicators would need their backends progressed
 * together, which neither does yet: refused, not run in an order that could deadlock). An argument error aborts
 * the communicator at once, as it does for a collective (api.c), so that no peer waits for an operation that will
 * never come.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "p2p.h"

static _Thread_local struct {
    int open;
    stitch_comm_t *comm;
    st_p2p_op *ops;
    int n, cap;
} st_grp;

/* The thread's record of operations is kept from group to group and freed when the thread exits, by the
 * destructor of a key whose value is the record (set on every move). */
static pthread_key_t st_grp_key;
static pthread_once_t st_grp_once = PTHREAD_ONCE_INIT;
static int st_grp_keyed; /* pthread_key_create succeeded (else the record lives as long as the process) */

static void st_grp_free(void *ops)
{
    free(ops);
    st_grp.ops = NULL, st_grp.cap = 0, st_grp.n = 0;
}

static void st_grp_key_make(void)
{
    st_grp_keyed = pthread_key_create(&st_grp_key, st_grp_free) == 0;
}

int st_p2p_grouped(void)
{
    return st_grp.open;
}

static const char *st_nth(int n, char *buf, size_t len)
{
    const char *suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd"
                         : n % 10 == 3 ? "rd" : "th";
    snprintf(buf, len, "%d%s", n, suffix);
    return buf;
}

void st_p2p_describe(const st_p2p_op *op, int me, char *buf, size_t len)
{
    char nth[16];
    int send = op->kind == ST_P2P_SEND;
    (void)me;
    snprintf(buf, len, "%s of %zu %s %s rank %d (its %s %s rank %d)", send ? "a send" : "a receive", op->count,
             stitch_dtype_name(op->dtype), send ? "to" : "from", op->peer, st_nth(op->nth, nth, sizeof nth),
             send ? "send to" : "receive from", op->peer);
}

stitch_status_t st_p2p_timeout(struct stitch_comm *comm, const char *fn, const st_p2p_op *op, int left)
{
    char what[200];
    st_p2p_describe(op, comm->rank, what, sizeof what);
    return st_comm_fail(comm, STITCH_ERR_TIMEOUT, "%s: rank %d waited %d ms without progress for rank %d: no match "
                        "for %s of rank %d (%d of its operations left)", fn, comm->rank, comm->timeout_ms, op->peer,
                        what, comm->rank, left);
}

int st_p2p_check(const stitch_comm_t *comm, const char *fn, const st_p2p_op *op, char *why, size_t len)
{
    const void *buf = op->kind == ST_P2P_SEND ? op->send : op->recv;
    const char *name = op->kind == ST_P2P_SEND ? "sendbuf" : "recvbuf";
    size_t es = (unsigned)op->dtype < STITCH_DTYPE_COUNT ? stitch_dtype_size(op->dtype) : 1;
    if (op->peer < 0 || op->peer >= comm->p)
        snprintf(why, len, "%s: peer %d is not a rank of this communicator (0..%d)", fn, op->peer, comm->p - 1);
    else if ((unsigned)op->dtype >= STITCH_DTYPE_COUNT)
        snprintf(why, len, "%s: dtype %d is not a stitch_dtype_t (0..%d)", fn, (int)op->dtype, STITCH_DTYPE_COUNT - 1);
    else if (op->count > (size_t)PTRDIFF_MAX / es)
        snprintf(why, len, "%s: count %zu of %s does not fit in memory", fn, op->count, stitch_dtype_name(op->dtype));
    else if (op->count && !buf)
        snprintf(why, len, "%s: %s is NULL with count %zu", fn, name, op->count);
    else if (op->count && (uintptr_t)buf % es != 0)
        snprintf(why, len, "%s: %s %p is not aligned to %zu bytes as %s requires", fn, name, buf, es,
                 stitch_dtype_name(op->dtype));
    else
        return 0;
    return -1;
}

/* The k-th operation of op's kind with op's peer, counting those already recorded. */
static int st_count_same(const st_p2p_op *ops, int n, const st_p2p_op *op)
{
    int k = 1;
    for (int i = 0; i < n; i++)
        k += ops[i].kind == op->kind && ops[i].peer == op->peer;
    return k;
}

static stitch_status_t st_record(stitch_comm_t *comm, const char *fn, st_p2p_op *op)
{
    if (st_grp.comm && st_grp.comm != comm)
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: this group already holds operations on another "
                             "communicator; a group holds the operations of one communicator", fn);
    if (st_grp.n == st_grp.cap) {
        int cap = st_grp.cap ? 2 * st_grp.cap : 16;
        st_p2p_op *ops = realloc(st_grp.ops, sizeof *ops * (size_t)cap);
        if (!ops)
            return st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: out of memory recording the group", fn);
        st_grp.ops = ops, st_grp.cap = cap;
        pthread_once(&st_grp_once, st_grp_key_make);
        if (st_grp_keyed)
            pthread_setspecific(st_grp_key, ops);
    }
    op->nth = st_count_same(st_grp.ops, st_grp.n, op);
    st_grp.ops[st_grp.n++] = *op;
    st_grp.comm = comm;
    return STITCH_OK;
}

/* My sends to myself against my receives from myself, in order: copied here; the rest go to the backend, in
 * `rest` (n entries of room). */
static stitch_status_t st_self(stitch_comm_t *comm, const char *fn, const st_p2p_op *ops, int n, st_p2p_op *rest,
                               int *nrest)
{
    int me = comm->rank, ns = 0, nr = 0, m = 0;
    for (int i = 0; i < n; i++) {
        if (ops[i].peer != me) {
            rest[m++] = ops[i];
            continue;
        }
        ops[i].kind == ST_P2P_SEND ? ns++ : nr++;
    }
    *nrest = m;
    if (ns != nr)
        return st_comm_fail(comm, STITCH_ERR_MISMATCH, "%s: rank %d has %d send%s to itself but %d receive%s from "
                            "itself", fn, me, ns, ns == 1 ? "" : "s", nr, nr == 1 ? "" : "s");
    for (int s = 0, r = 0; s < n && r < n; s++, r++) {
        while (s < n && (ops[s].peer != me || ops[s].kind != ST_P2P_SEND))
            s++;
        while (r < n && (ops[r].peer != me || ops[r].kind != ST_P2P_RECV))
            r++;
        if (s == n || r == n)
            break;
        if (ops[s].count != ops[r].count || ops[s].dtype != ops[r].dtype)
            return st_comm_fail(comm, STITCH_ERR_MISMATCH, "%s: rank %d sends itself %zu %s but receives %zu %s",
                                fn, me, ops[s].count, stitch_dtype_name(ops[s].dtype), ops[r].count,
                                stitch_dtype_name(ops[r].dtype));
        if (ops[s].count)
            memmove(ops[r].recv, ops[s].send, ops[s].count * stitch_dtype_size(ops[s].dtype));
    }
    return STITCH_OK;
}

/* Run ops as one operation on comm. */
static stitch_status_t st_p2p_run(stitch_comm_t *comm, const char *fn, const st_p2p_op *ops, int n)
{
    stitch_status_t st = st_comm_enter(comm, fn);
    if (st != STITCH_OK)
        return st;
    st_p2p_op *rest = malloc(sizeof *rest * (size_t)(n ? n : 1));
    int m = 0;
    if (!rest)
        st = st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: out of memory", fn);
    else if (st_abort_is(comm->abort))
        st = st_comm_error(comm, STITCH_ERR_ABORTED, "%s: communicator aborted earlier: %s", fn,
                           st_abort_reason(comm->abort));
    else if (!comm->be->p2p)
        st = st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: this communicator's backend has no point-to-point", fn);
    else if ((st = st_self(comm, fn, ops, n, rest, &m)) == STITCH_OK && m > 0)
        st = comm->be->p2p(comm, rest, m, NULL);
    free(rest);
    st_comm_leave(comm);
    return st;
}

static stitch_status_t st_one(stitch_comm_t *comm, const char *fn, st_p2p_op *op)
{
    stitch_status_t st = st_comm_enter(comm, fn);
    if (st != STITCH_OK)
        return st;
    char why[ST_REASON_MAX];
    if (st_p2p_check(comm, fn, op, why, sizeof why) != 0) /* the peer must not wait for this operation: */
        st = st_comm_tell(comm, st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s", why));
    st_comm_leave(comm);
    if (st != STITCH_OK)
        return st;
    if (st_grp.open)
        return st_record(comm, fn, op);
    op->nth = 1;
    return st_p2p_run(comm, fn, op, 1);
}

stitch_status_t stitch_send(const void *sendbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm)
{
    st_p2p_op op = {.kind = ST_P2P_SEND, .peer = peer, .send = sendbuf, .count = count, .dtype = dtype};
    return st_one(comm, "stitch_send", &op);
}

stitch_status_t stitch_recv(void *recvbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm)
{
    st_p2p_op op = {.kind = ST_P2P_RECV, .peer = peer, .recv = recvbuf, .count = count, .dtype = dtype};
    return st_one(comm, "stitch_recv", &op);
}

stitch_status_t stitch_group_start(void)
{
    if (st_grp.open)
        return STITCH_ERR_INVALID_USAGE; /* groups do not nest */
    st_grp.open = 1, st_grp.n = 0, st_grp.comm = NULL;
    return STITCH_OK;
}

stitch_status_t stitch_group_end(void)
{
    if (!st_grp.open)
        return STITCH_ERR_INVALID_USAGE;
    st_grp.open = 0;
    stitch_status_t st = st_grp.n ? st_p2p_run(st_grp.comm, "stitch_group_end", st_grp.ops, st_grp.n) : STITCH_OK;
    st_grp.n = 0, st_grp.comm = NULL;
    return st;
}
