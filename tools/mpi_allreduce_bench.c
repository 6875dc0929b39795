/* mpi_allreduce_bench.c - the reference for scripts/bench_vs_mpi.sh: MPI_Allreduce fp32 sum timed like
 * stitch-perf (warm-up, then iters calls between barriers, max over ranks), printing "bytes time_us busbw".
 * Built by the script with mpicc; not part of the CMake build, so stitch builds where MPI is absent. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, p;
    size_t maxb = argc > 1 ? strtoull(argv[1], NULL, 10) : 64u << 20, factor = argc > 2 ? strtoull(argv[2], NULL, 10) : 4;
    if (factor < 2)
        factor = 2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    float *a = malloc(maxb), *b = malloc(maxb);
    memset(a, 0, maxb), memset(b, 0, maxb);
    for (size_t bytes = 8; bytes <= maxb; bytes *= factor) {
        int n = (int)(bytes / 4), iters = bytes >= (8u << 20) ? 5 : 20;
        for (int i = 0; i < 3; i++)
            MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%12zu %12.2f %10.3f\n", bytes, tmax * 1e6, (double)bytes / tmax / 1e9 * 2.0 * (p - 1) / p);
    }
    free(a), free(b);
    MPI_Finalize();
    return 0;
}
