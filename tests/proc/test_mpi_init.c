/* test_mpi_init.c - stitch_comm_init_mpi under mpirun: every rank makes a stitch communicator from
 * MPI_COMM_WORLD, runs an fp32 sum all_reduce (in place and out of place) and checks it against the closed form
 * and against MPI_Allreduce. Prints launch.sh's verdict line ("N passed, 0 failed"; "# rank R: ..." on the others).
 */
#include <stdio.h>
#include <stdlib.h>

#include "stitch_mpi.h"

enum { N = 1000 };

static int check(const float *got, const float *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, passed = 0, failed = 0;
    char err[512] = "";
    stitch_comm_t *comm = NULL;
    static float in[N], out[N], ref[N], mpi[N];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    stitch_status_t st = stitch_comm_init_mpi(&comm, MPI_COMM_WORLD, NULL, err, sizeof err);
    if (st != STITCH_OK) {
        fprintf(stderr, "rank %d: stitch_comm_init_mpi: %s: %s\n", rank, stitch_strerror(st), err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < N; i++) {
        in[i] = (float)(rank + 1) + (float)(i % 7);
        ref[i] = (float)(size * (size + 1) / 2) + (float)(size * (i % 7)); /* small integers: exact in fp32 */
    }
    MPI_Allreduce(in, mpi, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    st = stitch_all_reduce(in, out, N, STITCH_FP32, STITCH_SUM, comm);
    if (st == STITCH_OK && check(out, ref, N) && check(out, mpi, N))
        passed++;
    else
        failed++, fprintf(stderr, "rank %d: out-of-place all_reduce: %s %s\n", rank, stitch_strerror(st),
                          stitch_comm_last_error(comm));
    st = stitch_all_reduce(in, in, 1, STITCH_FP32, STITCH_SUM, comm); /* 4 bytes, in place */
    if (st == STITCH_OK && in[0] == ref[0])
        passed++;
    else
        failed++, fprintf(stderr, "rank %d: in-place all_reduce: %s\n", rank, stitch_strerror(st));
    stitch_comm_destroy(comm);
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    else
        printf("# rank %d: %d passed, %d failed\n", rank, passed, failed);
    MPI_Finalize();
    return failed != 0;
}
