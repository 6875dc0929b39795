/* exec_pull.h - the processes backend's run (exec_pull.c): the pull engine on registered memory when every rank's
 * buffers of the call are registered, else the message engine (exec_msg.c). */
#ifndef ST_EXEC_PULL_H
#define ST_EXEC_PULL_H

#include <stdatomic.h>
#include <stdint.h>

#include "call.h"
#include "comm.h"

/* Calls whose vector (count times the dtype's size) is smaller than this never ask: the question costs a message
 * to and from every peer, which a small call would feel. Every rank knows the count, so all ask or none does. */
#define ST_PULL_MIN_BYTES ((size_t)256 << 10)

/* One call; its arguments are checked and the communicator is not aborted (api.c). */
stitch_status_t st_exec_proc(stitch_comm_t *comm, const st_args *a);

/* Calls this process ran with the pull engine: tests see which engine ran. */
extern _Atomic long st_pull_calls;

/* Tests only (tests/proc/test_proc_regmem.c), NULL in a program: called before every step of the pull engine
 * with the call's number and the step (to kill a rank mid-call), and on my hello's handles before they are sent
 * (to forge one). */
struct st_reg_handle;
extern void (*st_pull_step_hook)(uint64_t call, uint32_t g);
extern void (*st_pull_hello_hook)(struct st_reg_handle *board, struct st_reg_handle *regions, int n);

#endif
