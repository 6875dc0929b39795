/* stitch_mpi.h - make a stitch communicator from an MPI communicator (library stitch_mpi, built when CMake
 * finds MPI). A header of its own rather than a block in stitch.h: stitch.h stays free of <mpi.h> and of any
 * macro a user must define to match how the library was built, and only programs that already use MPI include
 * this one (and link stitch_mpi, which brings MPI::MPI_C).
 */
#ifndef STITCH_MPI_H
#define STITCH_MPI_H

#include <mpi.h>

#include "stitch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over mpi_comm (every rank calls it, MPI initialised): rank 0 of mpi_comm makes a unique id, MPI
 * broadcasts it, and each rank calls stitch_comm_init_rank with its rank and size in mpi_comm. The new
 * communicator has the same ranks in the same order and does not use MPI afterwards; *comm is the caller's,
 * freed with stitch_comm_destroy (mpi_comm may be freed first). Returns STITCH_ERR_INVALID_ARGUMENT when MPI is
 * not initialised, STITCH_ERR_SYSTEM when an MPI call or rank 0's unique id fails (every rank fails alike). */
stitch_status_t stitch_comm_init_mpi(stitch_comm_t **comm, MPI_Comm mpi_comm, const stitch_config_t *config,
                                     char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
