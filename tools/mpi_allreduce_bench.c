/* mpi_allreduce_bench.c - the reference for scripts/bench_vs_mpi.sh: MPI_Allreduce fp32 sum timed exactly as
 * stitch-perf times a size (warm-up calls, barrier, t0, `iters` calls, barrier, t1; the slowest rank's
 * (t1 - t0) / iters), printing "bytes time_us busbw" per size. Built by the script with mpicc; not part of the
 * CMake build, so stitch builds where MPI is absent.
 *
 *   mpi_allreduce_bench MINBYTES MAXBYTES FACTOR WARMUP ITERS     (stitch-perf's -b -e -f -w --iters)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t arg(int argc, char **argv, int i, size_t def)
{
    return argc > i ? strtoull(argv[i], NULL, 10) : def;
}

int main(int argc, char **argv)
{
    int rank, p;
    size_t minb = arg(argc, argv, 1, 8), maxb = arg(argc, argv, 2, 64u << 20), factor = arg(argc, argv, 3, 4);
    int warmup = (int)arg(argc, argv, 4, 5), iters = (int)arg(argc, argv, 5, 20);
    if (factor < 2)
        factor = 2;
    if (minb < 4)
        minb = 4;
    if (iters < 1)
        iters = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    float *a = malloc(maxb), *b = malloc(maxb);
    if (!a || !b) {
        fprintf(stderr, "mpi_allreduce_bench: out of memory for %zu bytes\n", maxb);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(a, 0, maxb), memset(b, 0, maxb);
    for (size_t bytes = minb; bytes <= maxb; bytes *= factor) {
        int n = (int)(bytes / 4);
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%12zu %12.2f %10.3f\n", bytes, tmax * 1e6, (double)bytes / tmax / 1e9 * 2.0 * (p - 1) / p);
    }
    free(a), free(b);
    MPI_Finalize();
    return 0;
}
