/* exec.h - the threads engine (exec.c): runs one rank's plan for one collective call, pulling from peers' buffers. */
#ifndef ST_EXEC_H
#define ST_EXEC_H

#include <stddef.h>

#include "call.h"
#include "comm.h"
#include "job.h"

/* The threads backend's run (threads.c): one call; its arguments are checked and the communicator is not aborted
 * (api.c). */
stitch_status_t st_exec(stitch_comm_t *comm, const st_args *a);

#endif
