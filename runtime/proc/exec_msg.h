/* exec_msg.h - the executor of process-mode communicators (exec_msg.c), over the transports of transport.h. */
#ifndef ST_EXEC_MSG_H
#define ST_EXEC_MSG_H

#include "call.h"
#include "comm.h"

/* The processes backend's run (proc.c): one call; its arguments are checked and the communicator is not aborted
 * (api.c). */
stitch_status_t st_exec_msg(stitch_comm_t *comm, const st_args *a);

#endif
