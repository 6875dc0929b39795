/* api_nb.c - the non-blocking calls of stitch.h (stitch_iall_reduce, ..., stitch_ibarrier, stitch_isend,
 * stitch_irecv): each queues its call as a request on the communicator (progress.c runs it, p2p_nb.c the
 * point-to-point ones; request.h says who owns what meanwhile).
 *
 * Issuing checks only what the caller's thread may check without the communicator's engine state, which the
 * progress thread may be using: the communicator (NULL, destroyed, another thread inside a call), the request
 * out-parameter, a group open on this thread, a device communicator, and a send's or receive's arguments (which
 * need nothing but the communicator's size). A collective's own argument checks run with the call, as the blocking
 * path's, and their error is the request's. An issue error's message goes to this thread's record
 * (stitch_comm_last_error from this thread), never into the communicator. A NULL `req`, a send's or receive's
 * argument error or a failure to queue aborts the communicator, as a blocking call's argument error does: the
 * peers would otherwise wait for a call that never comes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "p2p.h"
#include "request.h"

/* Abort comm with this rank's issue error, so that no peer waits for the call, and return st. */
static stitch_status_t st_nb_refuse(stitch_comm_t *comm, stitch_status_t st, const char *fn, const char *why)
{
    char reason[ST_REASON_MAX];
    snprintf(reason, sizeof reason, "rank %d: %s: %s", comm->rank, fn, why);
    comm->be->abort(comm, reason);
    return st_comm_note(comm, st, "%s: %s (the communicator is aborted: the peers would wait for this call)", fn, why);
}

/* all_to_all_v's four arrays, copied so that the caller may reuse them at once (NULL ones stay NULL: the call's
 * checks report them). */
static int st_nb_copy_v(stitch_comm_t *comm, st_req *r)
{
    const size_t *in[4] = {r->a.scounts, r->a.sdispls, r->a.rcounts, r->a.rdispls};
    const size_t **out[4] = {&r->a.scounts, &r->a.sdispls, &r->a.rcounts, &r->a.rdispls};
    size_t p = (size_t)comm->p;
    if (!(r->v = malloc(sizeof *r->v * 4 * p)))
        return -1;
    for (int k = 0; k < 4; k++)
        if (in[k]) {
            memcpy(r->v + (size_t)k * p, in[k], sizeof *r->v * p);
            *out[k] = r->v + (size_t)k * p;
        }
    return 0;
}

/* A non-blocking send or receive's own error (its arguments; none to oneself) in why, else 0. */
static int st_nb_check_op(stitch_comm_t *comm, const char *fn, const st_p2p_op *op, char *why, size_t len)
{
    if (st_p2p_check(comm, fn, op, why, len) != 0)
        return -1;
    if (op->peer != comm->rank)
        return 0;
    snprintf(why, len, "peer %d is this rank: a non-blocking %s with oneself is not supported (use stitch_send and "
             "stitch_recv inside a group)", op->peer, op->kind == ST_P2P_SEND ? "send" : "receive");
    return -1;
}

/* Queue a's call on comm, or op's (stitch_isend, stitch_irecv; NULL for a collective); *req its request. */
static stitch_status_t st_nb_issue(stitch_comm_t *comm, const st_args *a, int barrier, const st_p2p_op *op,
                                   stitch_request_t **req)
{
    char why[400];
    if (req)
        *req = NULL;
    stitch_status_t st = st_comm_enter_nowait(comm, a->fn);
    if (st != STITCH_OK)
        return st;
    st_req *r = NULL;
    if (st_p2p_grouped()) /* as the blocking collective: refused, not recorded, nothing aborted */
        st = st_comm_note(comm, STITCH_ERR_UNSUPPORTED, "%s: called inside stitch_group_start/_end; a group holds "
                          "blocking point-to-point operations only (the group is their non-blocking form)", a->fn);
    else if (comm->dev) /* every rank refuses alike */
        st = st_comm_note(comm, STITCH_ERR_UNSUPPORTED, "%s: device communicators have no non-blocking calls (their "
                          "collectives already return at once, enqueued on the stream)", a->fn);
    else if (!req)
        st = st_nb_refuse(comm, STITCH_ERR_INVALID_ARGUMENT, a->fn, "req is NULL");
    else if (op && st_nb_check_op(comm, a->fn, op, why, sizeof why) != 0)
        st = st_nb_refuse(comm, STITCH_ERR_INVALID_ARGUMENT, a->fn, why);
    else if (!(r = st_req_new(req)))
        st = st_nb_refuse(comm, STITCH_ERR_NO_MEMORY, a->fn, "out of memory (or of request slots) for the request");
    else {
        r->a = *a;
        if (op)
            r->is_p2p = 1, r->op = *op;
        if (barrier)
            r->one = 1, r->a.send = &r->one, r->a.recv = &r->got;
        if (a->coll == STITCH_ALL_TO_ALL_V && st_nb_copy_v(comm, r) != 0)
            st = st_nb_refuse(comm, STITCH_ERR_NO_MEMORY, a->fn, "out of memory copying the counts");
        else if ((st = st_nb_post(comm, r, why, sizeof why)) != STITCH_OK)
            st = st_nb_refuse(comm, st, a->fn, why);
        if (st != STITCH_OK)
            st_req_discard(r), *req = NULL;
    }
    st_comm_leave(comm);
    return st;
}

stitch_status_t stitch_iall_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                   stitch_op_t op, stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_iall_reduce", .coll = STITCH_ALL_REDUCE, .send = sendbuf, .recv = recvbuf,
                 .count = count, .dtype = dtype, .op = op};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                       stitch_op_t op, stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_ireduce_scatter", .coll = STITCH_REDUCE_SCATTER, .send = sendbuf, .recv = recvbuf,
                 .count = recvcount, .dtype = dtype, .op = op};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_iall_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype,
                                   stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_iall_gather", .coll = STITCH_ALL_GATHER, .send = sendbuf, .recv = recvbuf,
                 .count = sendcount, .dtype = dtype};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_ibroadcast(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype, int root,
                                  stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_ibroadcast", .coll = STITCH_BROADCAST, .send = sendbuf, .recv = recvbuf,
                 .count = count, .dtype = dtype, .root = root};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_ireduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                               stitch_op_t op, int root, stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_ireduce", .coll = STITCH_REDUCE, .send = sendbuf, .recv = recvbuf, .count = count,
                 .dtype = dtype, .op = op, .root = root};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_iscatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                int root, stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_iscatter", .coll = STITCH_SCATTER, .send = sendbuf, .recv = recvbuf,
                 .count = recvcount, .dtype = dtype, .root = root};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_igather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype, int root,
                               stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_igather", .coll = STITCH_GATHER, .send = sendbuf, .recv = recvbuf,
                 .count = sendcount, .dtype = dtype, .root = root};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_iall_to_all(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                   stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_iall_to_all", .coll = STITCH_ALL_TO_ALL, .send = sendbuf, .recv = recvbuf,
                 .count = count, .dtype = dtype};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

stitch_status_t stitch_iall_to_all_v(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                                     void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                                     stitch_dtype_t dtype, stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {"stitch_iall_to_all_v", STITCH_ALL_TO_ALL_V, sendbuf, recvbuf, 0, dtype, STITCH_SUM, 0,
                 sendcounts, sdispls, recvcounts, rdispls};
    return st_nb_issue(comm, &a, 0, NULL, req);
}

/* stitch_barrier's all_reduce of one uint8 (split.c), its buffers in the request. */
stitch_status_t stitch_ibarrier(stitch_comm_t *comm, stitch_request_t **req)
{
    st_args a = {.fn = "stitch_ibarrier", .coll = STITCH_ALL_REDUCE, .count = 1, .dtype = STITCH_UINT8,
                 .op = STITCH_MAX};
    return st_nb_issue(comm, &a, 1, NULL, req);
}

/* The p2p_nb.c run takes the operation; a carries only its name. */
stitch_status_t stitch_isend(const void *sendbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm,
                             stitch_request_t **req)
{
    st_args a = {.fn = "stitch_isend"};
    st_p2p_op op = {.kind = ST_P2P_SEND, .peer = peer, .send = sendbuf, .count = count, .dtype = dtype};
    return st_nb_issue(comm, &a, 0, &op, req);
}

stitch_status_t stitch_irecv(void *recvbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm,
                             stitch_request_t **req)
{
    st_args a = {.fn = "stitch_irecv"};
    st_p2p_op op = {.kind = ST_P2P_RECV, .peer = peer, .recv = recvbuf, .count = count, .dtype = dtype};
    return st_nb_issue(comm, &a, 0, &op, req);
}
