/* exec.h - the executor: runs one rank's plan for one collective call over the threads transport. */
#ifndef ST_EXEC_H
#define ST_EXEC_H

#include <stddef.h>

#include "call.h"
#include "comm.h"

/* Run the collective; arguments are already checked (api.c). */
stitch_status_t st_exec(stitch_comm_t *comm, const st_args *a);

#endif
