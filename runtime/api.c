/* api.c - the collectives of stitch.h: argument checks, then the executor.
 *
 * Every check says what is wrong, where, and what would be right, because a collective called with bad arguments
 * is usually one rank's bug among many. An argument error is reported before the call takes part in the
 * protocol: the communicator stays usable and the call counts as not made (the other ranks, if they did call,
 * wait for this rank until it calls correctly or their timeout expires).
 */
#include <stdint.h>
#include <stdio.h>

#include "exec.h"
#include "exec_msg.h"

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
    if (a->coll != STITCH_ALL_GATHER && (unsigned)a->op >= STITCH_OP_COUNT)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: op %d is not a stitch_op_t (0..%d)", a->fn,
                             (int)a->op, STITCH_OP_COUNT - 1);
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
    size_t mine = (size_t)comm->rank * a->count * stitch_dtype_size(a->dtype);
    const char *form;
    if (!st_overlap(b->send, b->send_bytes, b->recv, b->recv_bytes))
        return STITCH_OK;
    switch (a->coll) {
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

static stitch_status_t st_check(stitch_comm_t *comm, const st_args *a)
{
    stitch_status_t st = st_check_types(comm, a);
    size_t es = stitch_dtype_size(a->dtype), p = (size_t)comm->p;
    if (st != STITCH_OK || a->count == 0)
        return st;
    if ((st = st_check_buffer(comm, a, "sendbuf", a->send)) != STITCH_OK ||
        (st = st_check_buffer(comm, a, "recvbuf", a->recv)) != STITCH_OK)
        return st;
    if (a->count > (size_t)PTRDIFF_MAX / p / es)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT,
                             "%s: count %zu of %s times %zu ranks does not fit in memory (overflows ptrdiff_t)",
                             a->fn, a->count, stitch_dtype_name(a->dtype), p);
    size_t one = a->count * es, all = one * p;
    st_bufs b = {a->send, a->recv, one, one};
    if (a->coll == STITCH_REDUCE_SCATTER)
        b.send_bytes = all;
    if (a->coll == STITCH_ALL_GATHER)
        b.recv_bytes = all;
    return st_check_overlap(comm, a, &b);
}

static stitch_status_t st_collective(stitch_comm_t *comm, const st_args *a)
{
    if (!comm)
        return STITCH_ERR_INVALID_ARGUMENT;
    stitch_status_t st = st_check(comm, a);
    if (st == STITCH_OK && comm->proc) /* ranks are processes */
        return st_exec_msg(comm, a);
    return st != STITCH_OK ? st : st_exec(comm, a);
}

stitch_status_t stitch_all_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                  stitch_op_t op, stitch_comm_t *comm)
{
    st_args a = {"stitch_all_reduce", STITCH_ALL_REDUCE, sendbuf, recvbuf, count, dtype, op};
    return st_collective(comm, &a);
}

stitch_status_t stitch_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                      stitch_op_t op, stitch_comm_t *comm)
{
    st_args a = {"stitch_reduce_scatter", STITCH_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op};
    return st_collective(comm, &a);
}

stitch_status_t stitch_all_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype,
                                  stitch_comm_t *comm)
{
    st_args a = {"stitch_all_gather", STITCH_ALL_GATHER, sendbuf, recvbuf, sendcount, dtype, STITCH_SUM};
    return st_collective(comm, &a);
}
