/* abort.h - a communicator's abort: a flag and the reason, set once (the first reason wins), read by everyone.
 *
 * One object per group of ranks that fail together: the thread-ranks of one job share the job's; a process-mode
 * rank has its own, which its peers' abort frames set too (proc.c). A communicator points at the one it belongs
 * to (comm->abort), so every "was it aborted, and why" is one load and one function, whatever the backend.
 */
#ifndef ST_ABORT_H
#define ST_ABORT_H

#include <stdatomic.h>

#define ST_REASON_MAX 640

typedef struct st_abort {
    _Atomic int state; /* 0 running; 1 an aborter is writing `reason`; 2 aborted, reason readable */
    char reason[ST_REASON_MAX];
} st_abort;

/* Abort with `reason` (truncated to fit). Returns 1 when this call aborted it, 0 when it was aborted already (the
 * first reason is kept). Never blocks. */
int st_abort_set(st_abort *a, const char *reason);

/* Aborted (or being aborted)? An acquire load: what the aborter published before is visible after a 1. */
static inline int st_abort_is(const st_abort *a)
{
    return atomic_load_explicit(&((st_abort *)a)->state, memory_order_acquire) != 0;
}

/* The reason; "" while not aborted. A reader that sees an abort in progress waits the moment the aborter takes to
 * copy the reason, so an aborted communicator never reports an empty reason. */
const char *st_abort_reason(const st_abort *a);

#endif
