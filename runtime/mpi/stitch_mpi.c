/* stitch_mpi.c - stitch_comm_init_mpi (stitch_mpi.h): the unique-id handshake of stitch_comm_init_rank, carried
 * by MPI_Bcast. Rank 0 broadcasts its status with the id, so when it cannot make one every rank returns the same
 * error instead of the others waiting for a root that never listens. Kept out of libstitch so that the library
 * builds and links where MPI is absent.
 */
#include <stdio.h>
#include <string.h>

#include "stitch_mpi.h"

static stitch_status_t st_mpi_fail(char *err, size_t errlen, stitch_status_t st, const char *what, int rc)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, text, &len);
    if (err && errlen)
        snprintf(err, errlen, "stitch_comm_init_mpi: %s%s%s", what, text[0] ? ": " : "", text);
    return st;
}

stitch_status_t stitch_comm_init_mpi(stitch_comm_t **comm, MPI_Comm mpi_comm, const stitch_config_t *config,
                                     char *err, size_t errlen)
{
    struct {
        int status; /* rank 0's stitch_get_unique_id result */
        stitch_unique_id_t id;
    } msg;
    int inited = 0, rank, size, rc;
    if (!comm)
        return st_mpi_fail(err, errlen, STITCH_ERR_INVALID_ARGUMENT, "comm is NULL", MPI_SUCCESS);
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited)
        return st_mpi_fail(err, errlen, STITCH_ERR_INVALID_ARGUMENT, "MPI is not initialised (call MPI_Init first)",
                           MPI_SUCCESS);
    if ((rc = MPI_Comm_rank(mpi_comm, &rank)) != MPI_SUCCESS || (rc = MPI_Comm_size(mpi_comm, &size)) != MPI_SUCCESS)
        return st_mpi_fail(err, errlen, STITCH_ERR_SYSTEM, "MPI_Comm_rank/MPI_Comm_size", rc);
    memset(&msg, 0, sizeof msg);
    if (rank == 0)
        msg.status = (int)stitch_get_unique_id(&msg.id);
    if ((rc = MPI_Bcast(&msg, (int)sizeof msg, MPI_BYTE, 0, mpi_comm)) != MPI_SUCCESS)
        return st_mpi_fail(err, errlen, STITCH_ERR_SYSTEM, "MPI_Bcast of the unique id", rc);
    if (msg.status != STITCH_OK) {
        char what[160];
        snprintf(what, sizeof what, "rank 0 could not make a unique id: %s",
                 stitch_strerror((stitch_status_t)msg.status));
        return st_mpi_fail(err, errlen, (stitch_status_t)msg.status, what, MPI_SUCCESS);
    }
    return stitch_comm_init_rank(comm, size, msg.id, rank, config, err, errlen);
}
