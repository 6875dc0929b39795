/* mpi_app.c - a user's MPI program on an installed stitch (tests/install/run.sh builds it with
 * find_package(stitch COMPONENTS mpi) and with `pkg-config --cflags --libs stitch_mpi`, then runs it under mpirun):
 * stitch_comm_init_mpi over MPI_COMM_WORLD, one all_reduce checked against the sum of the ranks, and
 * "rank R of N: ok" on each rank.
 */
#include <mpi.h>
#include <stdio.h>

#include "stitch_mpi.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char err[256] = "";
    stitch_comm_t *comm = NULL;
    stitch_status_t st = stitch_comm_init_mpi(&comm, MPI_COMM_WORLD, NULL, err, sizeof err);
    if (st != STITCH_OK) {
        fprintf(stderr, "stitch_comm_init_mpi: %s: %s\n", stitch_strerror(st), err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank = stitch_comm_rank(comm), size = stitch_comm_size(comm);
    double x = rank + 1;
    st = stitch_all_reduce(&x, &x, 1, STITCH_FP64, STITCH_SUM, comm);
    double want = size * (size + 1) / 2.0;
    if (st != STITCH_OK || x != want) {
        fprintf(stderr, "rank %d: all_reduce: %s, %g (expected %g): %s\n", rank, stitch_strerror(st), x, want,
                stitch_comm_last_error(comm));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("rank %d of %d: ok\n", rank, size);
    stitch_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
