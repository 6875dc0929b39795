/* request.h - non-blocking collectives: the requests (request.c) and the queue each communicator runs them from
 * (progress.c).
 *
 * A non-blocking call (stitch_iall_reduce, ..., api_nb.c) is queued on its communicator as a request and runs
 * later on the communicator's progress thread, which takes the queue in call order and runs each call through
 * the blocking path (api.c's st_collective_run: the argument checks, the abort check, the backend's run). Calls
 * therefore complete in call order, whatever mix of blocking and non-blocking calls the ranks make, and a call's
 * failure reaches its request as the blocking call's would reach its caller: status and message.
 *
 * Who owns what. The communicator's engine state (seq, cache, scratch, last_error) belongs to the progress
 * thread while any request is pending, and to the caller's thread otherwise. The caller's blocking calls take
 * `busy` and then wait until the queue is empty (st_nb_drain, from st_comm_enter), which is how they queue
 * behind the pending requests; non-blocking calls take `busy` without waiting (st_comm_enter_nowait) and touch
 * only the queue. The progress thread never takes `busy`.
 *
 * Handles. A stitch_request_t * is not a pointer: it encodes a slot of a process-wide table (slots are never
 * freed, only reused) and the slot's generation at the time it was handed out, which stitch_request_free
 * advances. A freed handle's generation no longer matches its slot's, so using it is detected without reading
 * freed memory, and a reused slot does not pass an old handle for the new request.
 */
#ifndef ST_REQUEST_H
#define ST_REQUEST_H

#include <pthread.h>
#include <stdint.h>

#include "abort.h"
#include "call.h"
#include "p2p.h"
#include "stitch.h"

/* One request: a slot of the table (request.c). */
typedef struct st_req {
    _Atomic uint32_t gen;  /* the generation a live handle carries; advanced when the request is freed */
    uint32_t index;        /* its number in the table */
    pthread_mutex_t mu;    /* guards done, status, msg; cv signals done */
    pthread_cond_t cv;
    int done;
    stitch_status_t status;
    char msg[ST_REASON_MAX]; /* the failed call's message; "" on success */
    /* the call, filled at issue and read by the progress thread only */
    stitch_comm_t *comm;
    st_args a;
    size_t *v;             /* all_to_all_v: the caller's four arrays, copied (4 * p elements); NULL otherwise */
    unsigned char one, got; /* stitch_ibarrier's buffers */
    int is_p2p;            /* stitch_isend, stitch_irecv: `op` is the call (a.fn its name), not `a` */
    st_p2p_op op;
    struct st_req *next;   /* the communicator's queue; the table's free list */
    /* the call of the slot's last freed request, for the message of a stale handle (under the table's lock) */
    const char *freed_fn;
    stitch_comm_t *freed_comm;
    int freed_rank;
} st_req;

/* A new request (done = 0) and its handle; NULL when out of memory or out of slots. */
st_req *st_req_new(stitch_request_t **handle);
/* Give a request that was never queued back to the table (its handle becomes stale). */
void st_req_discard(st_req *r);
/* The call is over: status, and its message when it failed; wakes the waiters. The progress thread's last touch. */
void st_req_complete(st_req *r, stitch_status_t status, const char *msg);

/* api.c: a collective's body once the caller holds the communicator (its checks, the abort check, the backend's
 * run), for the caller's thread and the progress thread alike. An argument error aborts the communicator. */
stitch_status_t st_collective_run(stitch_comm_t *comm, const st_args *a);

/* progress.c: queue r (filled) on its communicator, starting the progress thread at the first request. The
 * caller holds `busy`. STITCH_ERR_SYSTEM with why in `why` when the thread cannot start. */
stitch_status_t st_nb_post(stitch_comm_t *comm, st_req *r, char *why, size_t len);
/* Wait until no request of comm is pending (none queued, none running). No-op on a communicator that never had
 * one. */
void st_nb_drain(stitch_comm_t *comm);
/* The queue's first request when it is a point-to-point one (taken off the queue, still pending), else NULL: the
 * progress thread's (progress.c) way of feeding a point-to-point run. */
typedef st_req *st_nb_take_fn(stitch_comm_t *comm);
/* p2p_nb.c: run r, a point-to-point request the progress thread took, with the point-to-point requests queued
 * right behind it (and those queued while they run, got by take) as one operation; returns how many requests it
 * completed. */
int st_nb_p2p_run(stitch_comm_t *comm, st_req *r, st_nb_take_fn *take);
/* Stop and join the progress thread, free the queue (destroy, after st_nb_drain). */
void st_nb_free(stitch_comm_t *comm);

#endif
