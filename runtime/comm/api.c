/* api.c - the collectives of stitch.h: argument checks, then the executor.
 *
 * Every check says what is wrong, where, and what would be right, because a collective called with bad arguments
 * is usually one rank's bug among many. An argument error is found before the call takes part in the
 * protocol, and it aborts the communicator at once, as a mismatch does (st_comm_tell): the other ranks would
 * otherwise wait for this rank's call until their timeout. Their calls (current or next) fail with
 * STITCH_ERR_ABORTED and this rank's message as the reason; in process mode the abort travels over the control
 * channels. Only a NULL communicator and a usage error (a destroyed communicator, or another thread's call in
 * progress on it: comm.c) leave the communicator as it was, since then this call has no right to touch it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "call.h"
#include "comm.h"
#include "p2p.h"
#include "request.h"

/* The buffers of one call and how long each is in bytes. */
typedef struct st_bufs {
    const char *send, *recv;
    size_t send_bytes, recv_bytes;
} st_bufs;

static stitch_status_t st_check_types(stitch_comm_t *comm, const st_args *a)
{
    if ((unsigned)a->dtype >= STITCH_DTYPE_COUNT)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: dtype %d is not a stitch_dtype_t (0..%d)",
                             a->fn, (int)a->dtype, STITCH_DTYPE_COUNT - 1);
    if (st_coll_reduces(a->coll) && (unsigned)a->op >= STITCH_OP_COUNT)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: op %d is not a stitch_op_t (0..%d)", a->fn,
                             (int)a->op, STITCH_OP_COUNT - 1);
    if (st_coll_rooted((int)a->coll) && (a->root < 0 || a->root >= comm->p))
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: root %d is not a rank of this communicator "
                             "(0..%d)", a->fn, a->root, comm->p - 1);
    return STITCH_OK;
}

static stitch_status_t st_check_buffer(stitch_comm_t *comm, const st_args *a, const char *name, const void *buf)
{
    size_t es = stitch_dtype_size(a->dtype);
    if (!buf)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: %s is NULL with count %zu", a->fn, name,
                             a->count);
    if ((uintptr_t)buf % es != 0)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT,
                             "%s: %s %p is not aligned to %zu bytes as %s requires", a->fn, name, buf, es,
                             stitch_dtype_name(a->dtype));
    return STITCH_OK;
}

static int st_overlap(const char *a, size_t na, const char *b, size_t nb)
{
    return (uintptr_t)a < (uintptr_t)b + nb && (uintptr_t)b < (uintptr_t)a + na;
}

/* Overlapping buffers must be exactly one of the in-place forms of stitch.h. */
static stitch_status_t st_check_overlap(stitch_comm_t *comm, const st_args *a, const st_bufs *b)
{
    size_t one = a->count * stitch_dtype_size(a->dtype), mine = (size_t)comm->rank * one;
    const char *form;
    if (!b->send_bytes || !b->recv_bytes || !st_overlap(b->send, b->send_bytes, b->recv, b->recv_bytes))
        return STITCH_OK;
    switch (a->coll) {
    case STITCH_BROADCAST: /* the root's vector in place */
    case STITCH_REDUCE:
        if (b->recv == b->send)
            return STITCH_OK;
        form = "recvbuf == sendbuf at the root";
        break;
    case STITCH_SCATTER: /* the root's block stays in its input */
        if (b->recv == b->send + (size_t)a->root * one)
            return STITCH_OK;
        form = "recvbuf == sendbuf + root * recvcount at the root";
        break;
    case STITCH_GATHER: /* the root's input already at its block of the output */
        if (b->send == b->recv + (size_t)a->root * one)
            return STITCH_OK;
        form = "sendbuf == recvbuf + root * sendcount at the root";
        break;
    case STITCH_ALL_TO_ALL:
    case STITCH_ALL_TO_ALL_V:
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: recvbuf overlaps sendbuf (recvbuf - sendbuf = "
                             "%td bytes); %s has no in-place form", a->fn, b->recv - b->send,
                             stitch_coll_name(a->coll));
    case STITCH_ALL_REDUCE: /* the vector in place */
        if (b->recv == b->send)
            return STITCH_OK;
        form = "recvbuf == sendbuf";
        break;
    case STITCH_REDUCE_SCATTER: /* output at the start of the input, or at my block of it */
        if (b->recv == b->send || b->recv == b->send + mine)
            return STITCH_OK;
        form = "recvbuf == sendbuf or recvbuf == sendbuf + rank * recvcount";
        break;
    default: /* all_gather: input already at my block of the output */
        if (b->send == b->recv + mine)
            return STITCH_OK;
        form = "sendbuf == recvbuf + rank * sendcount";
        break;
    }
    return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT,
                         "%s: recvbuf overlaps sendbuf partially (recvbuf - sendbuf = %td bytes); the in-place "
                         "forms are %s", a->fn, b->recv - b->send, form);
}

/* all_to_all_v: the receive range of one peer, [at, at + n) elements of recvbuf. */
typedef struct st_range {
    size_t at, n;
    int q;
} st_range;

static int st_range_cmp(const void *x, const void *y)
{
    const st_range *a = x, *b = y;
    return a->at != b->at ? (a->at < b->at ? -1 : 1) : (a->q > b->q) - (a->q < b->q);
}

static stitch_status_t st_overlap_error(stitch_comm_t *comm, const st_args *a, int q1, int q2)
{
    int lo = q1 < q2 ? q1 : q2, hi = q1 < q2 ? q2 : q1;
    return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: the receive ranges of rank %d (rdispls[%d] = %zu, "
                         "recvcounts[%d] = %zu) and rank %d (rdispls[%d] = %zu, recvcounts[%d] = %zu) overlap in "
                         "recvbuf; each peer needs a part of its own", a->fn, lo, lo, a->rdispls[lo], lo,
                         a->rcounts[lo], hi, hi, a->rdispls[hi], hi, a->rcounts[hi]);
}

/* all_to_all_v: no two peers' receive ranges may overlap (the data of one would be lost under the other's).
 * Displacements that ascend with the rank, the usual layout, are checked in one pass; others are sorted, after
 * which an overlap, if any, shows between neighbours: O(p log p). Empty ranges overlap nothing. */
static stitch_status_t st_check_v_disjoint(stitch_comm_t *comm, const st_args *a)
{
    const size_t *n = a->rcounts, *d = a->rdispls;
    int prev = -1, p = comm->p, sorted = 1;
    for (int q = 0; q < p && sorted; q++) {
        if (!n[q])
            continue;
        if (prev >= 0 && d[q] < d[prev])
            sorted = 0;
        else if (prev >= 0 && d[q] < d[prev] + n[prev])
            return st_overlap_error(comm, a, prev, q);
        prev = q;
    }
    if (sorted)
        return STITCH_OK;
    st_range *r = malloc(sizeof *r * (size_t)p);
    if (!r)
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "%s: out of memory checking rdispls", a->fn);
    int m = 0;
    for (int q = 0; q < p; q++)
        if (n[q])
            r[m++] = (st_range){d[q], n[q], q};
    qsort(r, (size_t)m, sizeof *r, st_range_cmp);
    int bad = -1;
    for (int i = 1; i < m && bad < 0; i++)
        if (r[i].at < r[i - 1].at + r[i - 1].n)
            bad = i;
    stitch_status_t st = bad < 0 ? STITCH_OK : st_overlap_error(comm, a, r[bad - 1].q, r[bad].q);
    free(r);
    return st;
}

/* all_to_all_v: the elements one side's counts and displacements reach (*extent), or an error. */
static stitch_status_t st_check_v_side(stitch_comm_t *comm, const st_args *a, const char *side,
                                       const size_t *counts, const size_t *displs, size_t *extent)
{
    size_t es = stitch_dtype_size(a->dtype), limit = (size_t)PTRDIFF_MAX / es;
    *extent = 0;
    if (!counts || !displs)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: %s%s is NULL", a->fn, side,
                             !counts ? "counts" : "displs");
    for (int q = 0; q < comm->p; q++) {
        if (counts[q] > limit || displs[q] > limit - counts[q])
            return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: %sdispls[%d] + %scounts[%d] = %zu + %zu "
                                 "elements of %s does not fit in memory", a->fn, side, q, side, q, displs[q],
                                 counts[q], stitch_dtype_name(a->dtype));
        if (counts[q] && displs[q] + counts[q] > *extent)
            *extent = displs[q] + counts[q];
    }
    return STITCH_OK;
}

/* The elements of sendbuf and recvbuf this rank uses (0: unused, may be NULL). */
static stitch_status_t st_extents(stitch_comm_t *comm, const st_args *a, size_t *ns, size_t *nr)
{
    size_t n = a->count, p = (size_t)comm->p, es = stitch_dtype_size(a->dtype);
    int root = comm->rank == a->root;
    stitch_status_t st;
    if (a->coll == STITCH_ALL_TO_ALL_V) {
        int me = comm->rank;
        if ((st = st_check_v_side(comm, a, "send", a->scounts, a->sdispls, ns)) != STITCH_OK ||
            (st = st_check_v_side(comm, a, "recv", a->rcounts, a->rdispls, nr)) != STITCH_OK)
            return st;
        if (a->scounts[me] != a->rcounts[me])
            return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: rank %d sends itself %zu elements "
                                 "(sendcounts[%d]) but expects %zu (recvcounts[%d])", a->fn, me, a->scounts[me], me,
                                 a->rcounts[me], me);
        return st_check_v_disjoint(comm, a);
    }
    if (n > (size_t)PTRDIFF_MAX / p / es)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT,
                             "%s: count %zu of %s times %zu ranks does not fit in memory (overflows ptrdiff_t)",
                             a->fn, n, stitch_dtype_name(a->dtype), p);
    switch (a->coll) {
    case STITCH_REDUCE_SCATTER: *ns = n * p, *nr = n; break;
    case STITCH_ALL_GATHER: *ns = n, *nr = n * p; break;
    case STITCH_BROADCAST: *ns = root ? n : 0, *nr = n; break;
    case STITCH_REDUCE: *ns = n, *nr = root ? n : 0; break;
    case STITCH_SCATTER: *ns = root ? n * p : 0, *nr = n; break;
    case STITCH_GATHER: *ns = n, *nr = root ? n * p : 0; break;
    case STITCH_ALL_TO_ALL: *ns = *nr = n * p; break;
    default: *ns = *nr = n; break;
    }
    return STITCH_OK;
}

static stitch_status_t st_check(stitch_comm_t *comm, const st_args *a)
{
    stitch_status_t st = st_check_types(comm, a);
    size_t es = stitch_dtype_size(a->dtype), ns = 0, nr = 0;
    if (st != STITCH_OK || (a->count == 0 && a->coll != STITCH_ALL_TO_ALL_V))
        return st;
    if ((st = st_extents(comm, a, &ns, &nr)) != STITCH_OK)
        return st;
    if ((ns && (st = st_check_buffer(comm, a, "sendbuf", a->send)) != STITCH_OK) ||
        (nr && (st = st_check_buffer(comm, a, "recvbuf", a->recv)) != STITCH_OK))
        return st;
    st_bufs b = {a->send, a->recv, ns * es, nr * es};
    return st_check_overlap(comm, a, &b);
}

stitch_status_t st_collective_run(stitch_comm_t *comm, const st_args *a)
{
    stitch_status_t st = st_check(comm, a);
    if (st != STITCH_OK)
        return st_comm_tell(comm, st); /* the peers must not wait for this call */
    if (st_abort_is(comm->abort))
        return st_comm_error(comm, STITCH_ERR_ABORTED, "%s: communicator aborted earlier: %s", a->fn,
                             st_abort_reason(comm->abort));
    return comm->be->run(comm, a); /* ranks are threads, or processes */
}

static stitch_status_t st_collective(stitch_comm_t *comm, const st_args *a)
{
    stitch_status_t st = st_comm_enter(comm, a->fn);
    if (st != STITCH_OK)
        return st;
    if (st_p2p_grouped()) /* refused, not recorded: the peers' groups do not hold it either */
        st = st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: called inside stitch_group_start/_end; a group holds "
                           "point-to-point operations only", a->fn);
    else
        st = st_collective_run(comm, a);
    st_comm_leave(comm);
    return st;
}

stitch_status_t stitch_all_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                  stitch_op_t op, stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_all_reduce", .coll = STITCH_ALL_REDUCE, .send = sendbuf, .recv = recvbuf,
                 .count = count, .dtype = dtype, .op = op};
    return st_collective(comm, &a);
}

stitch_status_t stitch_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                      stitch_op_t op, stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_reduce_scatter", .coll = STITCH_REDUCE_SCATTER, .send = sendbuf, .recv = recvbuf,
                 .count = recvcount, .dtype = dtype, .op = op};
    return st_collective(comm, &a);
}

stitch_status_t stitch_all_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype,
                                  stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_all_gather", .coll = STITCH_ALL_GATHER, .send = sendbuf, .recv = recvbuf,
                 .count = sendcount, .dtype = dtype};
    return st_collective(comm, &a);
}

stitch_status_t stitch_broadcast(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype, int root,
                                 stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_broadcast", .coll = STITCH_BROADCAST, .send = sendbuf, .recv = recvbuf,
                 .count = count, .dtype = dtype, .root = root};
    return st_collective(comm, &a);
}

stitch_status_t stitch_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                              stitch_op_t op, int root, stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_reduce", .coll = STITCH_REDUCE, .send = sendbuf, .recv = recvbuf, .count = count,
                 .dtype = dtype, .op = op, .root = root};
    return st_collective(comm, &a);
}

stitch_status_t stitch_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype, int root,
                               stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_scatter", .coll = STITCH_SCATTER, .send = sendbuf, .recv = recvbuf,
                 .count = recvcount, .dtype = dtype, .root = root};
    return st_collective(comm, &a);
}

stitch_status_t stitch_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype, int root,
                              stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_gather", .coll = STITCH_GATHER, .send = sendbuf, .recv = recvbuf, .count = sendcount,
                 .dtype = dtype, .root = root};
    return st_collective(comm, &a);
}

stitch_status_t stitch_all_to_all(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                  stitch_comm_t *comm)
{
    st_args a = {.fn = "stitch_all_to_all", .coll = STITCH_ALL_TO_ALL, .send = sendbuf, .recv = recvbuf,
                 .count = count, .dtype = dtype};
    return st_collective(comm, &a);
}

/* count is 0: the counts differ per pair and are checked pair by pair during the call (exec.c). */
stitch_status_t stitch_all_to_all_v(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                                    void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                                    stitch_dtype_t dtype, stitch_comm_t *comm)
{
    st_args a = {"stitch_all_to_all_v", STITCH_ALL_TO_ALL_V, sendbuf, recvbuf, 0, dtype, STITCH_SUM, 0,
                 sendcounts, sdispls, recvcounts, rdispls};
    return st_collective(comm, &a);
}
