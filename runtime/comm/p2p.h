/* p2p.h - point-to-point operations (stitch_send, stitch_recv) and groups of them (stitch_group_start/_end).
 *
 * p2p.c checks the arguments, records operations while a group is open (per thread), matches a rank's sends to
 * itself with its receives from itself, and hands the rest, all on one communicator, to the backend's p2p, which
 * runs them as one operation: every send is offered before any receive waits, and the backend progresses sends
 * and receives together until all are done, so no order of a group's operations on either side can deadlock.
 * Sends and receives between one ordered pair match in the order they were issued, by count and dtype; a
 * disagreement is STITCH_ERR_MISMATCH naming both ranks and both sides' operation.
 *
 * Backends: threads (p2p_threads.c: a mailbox per ordered pair in the job; the receiver copies straight from the
 * sender's buffer, so a send completes when its receive has) and processes (p2p_msg.c: a message on the pair's
 * data stream, a 64-byte header then the padded payload, as the collectives' messages; a send completes when the
 * stream has taken it).
 */
#ifndef ST_P2P_H
#define ST_P2P_H

#include <stddef.h>

#include "stitch.h"

enum { ST_P2P_SEND, ST_P2P_RECV };

typedef struct st_p2p_op {
    int kind;            /* ST_P2P_SEND or ST_P2P_RECV */
    int peer;
    const void *send;    /* ST_P2P_SEND */
    void *recv;          /* ST_P2P_RECV */
    size_t count;
    stitch_dtype_t dtype;
    int nth;             /* its place among the group's operations of its kind with the same peer, from 1 */
} st_p2p_op;

/* Operations that join a running p2p: the non-blocking ones (stitch_isend, stitch_irecv), which the progress thread
 * runs (p2p_nb.c). The backend's loop calls `more` at every look; it may append operations to `ops` (which it may
 * move: the loop reads ops and n again after each call), none to myself, each with its nth counted among the
 * feed's operations of its kind and peer; it returns -1 when out of memory. The loop calls `done` with the index
 * of each operation as it completes, and returns once every operation is done and `more` brings no new one. */
typedef struct st_p2p_feed {
    int (*more)(struct st_p2p_feed *f);
    void (*done)(struct st_p2p_feed *f, int i);
    /* Drop the operations `done` was called for, keeping the others' order (a run that never runs dry, a stream of
     * operations, would otherwise grow for ever); the loop drops the same from its own state at the same time. */
    void (*compact)(struct st_p2p_feed *f);
    st_p2p_op *ops;
    int n;
} st_p2p_feed;

/* The backends' p2p (st_backend.p2p): run ops[0..n) (none to myself) as one operation on comm, whose `busy` the
 * caller holds (or its progress thread runs); with a feed (then ops and n are the feed's), also the operations it
 * brings while the loop runs. On failure the communicator is aborted and its last error says what and which ranks;
 * the operations not yet done are not. */
struct stitch_comm;
stitch_status_t st_threads_p2p(struct stitch_comm *comm, const st_p2p_op *ops, int n, st_p2p_feed *feed);
stitch_status_t st_proc_p2p(struct stitch_comm *comm, const st_p2p_op *ops, int n, st_p2p_feed *feed);
/* st_backend.p2p_wake: ring the bell the loop sleeps on (threads: the job's p2p bell; processes: my doorbell, which
 * a rank with tcp peers does not sleep on: its poll wakes at least every 20 ms). */
void st_threads_p2p_wake(struct stitch_comm *comm);
void st_proc_p2p_wake(struct stitch_comm *comm);

/* An argument error of op for fn (peer, dtype, count, buffer, alignment) in why; 0 when none. */
int st_p2p_check(const struct stitch_comm *comm, const char *fn, const st_p2p_op *op, char *why, size_t len);

/* Is a group open on this thread? (api.c refuses collectives inside one.) */
int st_p2p_grouped(void);

/* "send of 7 fp32 to rank 3 (its 2nd to rank 3 in the group)", for messages. */
void st_p2p_describe(const st_p2p_op *op, int me, char *buf, size_t len);

/* A group that made no progress for the communicator's timeout: fails (aborts) comm with a message naming op, the
 * first of the rank's operations not done, and how many are left. */
stitch_status_t st_p2p_timeout(struct stitch_comm *comm, const char *fn, const st_p2p_op *op, int left);

#endif
