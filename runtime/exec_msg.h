/* exec_msg.h - the executor of process-mode communicators (exec_msg.c), over the transports of transport.h. */
#ifndef ST_EXEC_MSG_H
#define ST_EXEC_MSG_H

#include "exec.h"

/* Run the collective on a communicator with comm->proc set; arguments are already checked (api.c). */
stitch_status_t st_exec_msg(stitch_comm_t *comm, const st_args *a);

#endif
