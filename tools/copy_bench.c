/* copy_bench.c - the copy bound of scripts/bench_vs_mpi.sh: what an all_reduce on one host could at best cost if
 * every rank only read its input once and wrote its output once. NRANKS threads each memcpy BYTES from a buffer of
 * their own to another of their own, all at once (the ranks of an all_reduce share the machine's memory bandwidth
 * and its cores alike), timed as stitch-perf times a size: warm-up copies, barrier, t0, `iters` copies, barrier,
 * t1; the slowest thread's (t1 - t0) / iters. Each size prints "bytes time_us busbw", busbw being what an
 * all_reduce of that size taking that time would report (nccl-tests' convention):
 *
 *     busbw = bytes / time * 2 (p - 1) / p          (p = NRANKS)
 *
 * so stitch's busbw over this figure is the fraction of the copy bound it reaches (its time over the copies' time,
 * inverted). No all_reduce can move less memory than this on shared memory: each rank's input is read and its
 * output written at least once (stitch's pull engines read the peers' units in place, so they come close).
 *
 *   copy_bench NRANKS MINBYTES MAXBYTES FACTOR WARMUP ITERS     (bench_vs_mpi.sh's size ranges)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct job {
    int nranks, warmup, iters;
    size_t minb, maxb, factor;
    pthread_barrier_t bar;
    double *secs; /* per thread, per size: the thread's time per copy */
} job;

typedef struct worker {
    job *j;
    int id;
    char *src, *dst;
} worker;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
    worker *w = arg;
    job *j = w->j;
    int k = 0;
    for (size_t bytes = j->minb; bytes <= j->maxb; bytes *= j->factor, k++) {
        for (int i = 0; i < j->warmup; i++)
            memcpy(w->dst, w->src, bytes);
        pthread_barrier_wait(&j->bar);
        double t0 = now();
        for (int i = 0; i < j->iters; i++) {
            memcpy(w->dst, w->src, bytes);
            __asm__ volatile("" ::: "memory"); /* every copy is made */
        }
        pthread_barrier_wait(&j->bar);
        j->secs[(size_t)k * (size_t)j->nranks + (size_t)w->id] = (now() - t0) / j->iters;
    }
    return NULL;
}

static size_t arg(int argc, char **argv, int i, size_t def)
{
    return argc > i ? strtoull(argv[i], NULL, 10) : def;
}

/* Every thread's buffers, the threads, and a line per size; 1 (said) when a buffer cannot be had. */
static int bench(job *j, worker *w, pthread_t *t)
{
    for (int i = 0; i < j->nranks; i++) {
        w[i] = (worker){j, i, aligned_alloc(64, (j->maxb + 63) / 64 * 64), aligned_alloc(64, (j->maxb + 63) / 64 * 64)};
        if (!w[i].src || !w[i].dst)
            return fprintf(stderr, "copy_bench: out of memory for %zu bytes\n", j->maxb), 1;
        memset(w[i].src, 1, j->maxb), memset(w[i].dst, 0, j->maxb); /* the pages are there before timing */
    }
    pthread_barrier_init(&j->bar, NULL, (unsigned)j->nranks);
    for (int i = 0; i < j->nranks; i++)
        if (pthread_create(&t[i], NULL, run, &w[i]) != 0) {
            fprintf(stderr, "copy_bench: cannot start thread %d\n", i);
            exit(1); /* the threads started wait at the barrier, on these buffers: exit ends them */
        }
    for (int i = 0; i < j->nranks; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&j->bar);
    int k = 0, p = j->nranks;
    for (size_t bytes = j->minb; bytes <= j->maxb; bytes *= j->factor, k++) {
        double worst = 0;
        for (int i = 0; i < p; i++)
            if (j->secs[(size_t)k * (size_t)p + (size_t)i] > worst)
                worst = j->secs[(size_t)k * (size_t)p + (size_t)i];
        printf("%12zu %12.2f %10.3f\n", bytes, worst * 1e6,
               p > 1 ? (double)bytes / worst / 1e9 * 2.0 * (p - 1) / p : (double)bytes / worst / 1e9);
    }
    return 0;
}

int main(int argc, char **argv)
{
    job j = {.nranks = (int)arg(argc, argv, 1, 2), .warmup = (int)arg(argc, argv, 5, 3),
             .iters = (int)arg(argc, argv, 6, 20), .minb = arg(argc, argv, 2, 8), .maxb = arg(argc, argv, 3, 64u << 20),
             .factor = arg(argc, argv, 4, 4)};
    if (argc < 2 || j.nranks < 1 || j.nranks > 4096) {
        fprintf(stderr, "usage: copy_bench NRANKS [MINBYTES MAXBYTES FACTOR WARMUP ITERS]\n");
        return 2;
    }
    if (j.maxb > ((size_t)1 << 40) || j.factor > ((size_t)1 << 20)) { /* sizes * factor never wraps */
        fprintf(stderr, "copy_bench: error: MAXBYTES %zu or FACTOR %zu too large (at most 1 TiB and 2^20)\n", j.maxb,
                j.factor);
        return 2;
    }
    if (j.factor < 2)
        j.factor = 2;
    if (j.minb < 1)
        j.minb = 1;
    if (j.iters < 1)
        j.iters = 1;
    int nsizes = 0, rc = 1;
    for (size_t b = j.minb; b <= j.maxb; b *= j.factor)
        nsizes++;
    worker *w = calloc((size_t)j.nranks, sizeof *w); /* zeroed: the buffers not had yet are NULL */
    pthread_t *t = calloc((size_t)j.nranks, sizeof *t);
    j.secs = calloc((size_t)nsizes * (size_t)j.nranks + 1, sizeof *j.secs);
    if (!w || !t || !j.secs)
        fprintf(stderr, "copy_bench: out of memory\n");
    else
        rc = bench(&j, w, t);
    for (int i = 0; w && i < j.nranks; i++)
        free(w[i].src), free(w[i].dst);
    free(w), free(t), free(j.secs);
    return rc;
}
