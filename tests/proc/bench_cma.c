/* bench_cma.c - how fast cross-memory attach (process_vm_readv, Linux's CMA) moves data between two processes of
 * this host, as the fallback for unregistered buffers would use it (issue 21 item 1): the kernel copies a peer's
 * buffer into mine, one copy, where the message engine copies twice (into the ring, out of it).
 *
 *   bench_cma [MAXBYTES [ITERS]]     sizes 1 MB, 4 MB, ... MAXBYTES (default 64 MB), ITERS timed calls (default 10)
 *
 * Two processes (forked: the buffers are at the same addresses in both) each run, per size:
 *   all_gather: process_vm_readv of the peer's N-byte input into the peer's block of my output;
 *   all_reduce: the peer's N-byte input in 1 MB pieces into a staging buffer (in cache), each piece then added to
 *               my input into my output (fp32): CMA cannot reduce in place, so this is one kernel copy and a
 *               reduce, against the message engine's user copy into the ring and reduce out of it.
 * A pipe barrier before and after the timed calls; the time is the slower process's, busbw as stitch-perf's for
 * p = 2 (N / t for both collectives). The data is checked. Prints one line per size and collective; exit 1 when
 * process_vm_readv fails (not permitted here: ptrace scope, seccomp) or the data is wrong.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PIECE ((size_t)1 << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Both processes pass: each writes a byte to the other and reads the other's. */
static void barrier(int wr, int rd)
{
    char b = 1;
    if (write(wr, &b, 1) != 1 || read(rd, &b, 1) != 1)
        exit(3);
}

static int readv_all(pid_t peer, void *dst, const void *src, size_t n)
{
    while (n > 0) {
        struct iovec l = {dst, n}, r = {(void *)src, n};
        ssize_t k = process_vm_readv(peer, &l, 1, &r, 1, 0);
        if (k <= 0)
            return -1;
        dst = (char *)dst + k, src = (const char *)src + k, n -= (size_t)k;
    }
    return 0;
}

/* One collective ITERS times; returns seconds per call, or -1 on failure. */
static double run(int coll, pid_t peer, int me, float *in, float *out, float *stage, size_t n, int iters, int wr,
                  int rd)
{
    size_t bytes = n * sizeof(float);
    barrier(wr, rd);
    double t0 = now();
    for (int it = 0; it < iters; it++) {
        if (coll == 0) { /* all_gather: the peer's block of out */
            if (readv_all(peer, out + (size_t)(1 - me) * n, in, bytes) != 0)
                return -1;
            continue;
        }
        for (size_t off = 0; off < n; off += PIECE / sizeof(float)) {
            size_t k = n - off < PIECE / sizeof(float) ? n - off : PIECE / sizeof(float);
            if (readv_all(peer, stage, in + off, k * sizeof(float)) != 0)
                return -1;
            for (size_t i = 0; i < k; i++)
                out[off + i] = in[off + i] + stage[i];
        }
    }
    double t = (now() - t0) / iters;
    barrier(wr, rd);
    return t;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)64 << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    size_t nmax = max / sizeof(float);
    float *in = aligned_alloc(4096, max), *out = aligned_alloc(4096, 2 * max), *stage = aligned_alloc(4096, PIECE);
    int p01[2], p10[2], res[2];
    if (!in || !out || !stage || pipe(p01) || pipe(p10) || pipe(res) || iters < 1)
        return 2;
    pid_t parent = getpid(), child = fork();
    if (child < 0)
        return 2;
    int me = child == 0, wr = me ? p10[1] : p01[1], rd = me ? p01[0] : p10[0];
    pid_t peer = me ? parent : child;
    for (size_t i = 0; i < nmax; i++)
        in[i] = (float)((i % 97) + 1000 * me);
    memset(out, 0, 2 * max);
    int bad = 0;
    if (!me)
        printf("# process_vm_readv between 2 processes, fp32; busbw GB/s as stitch-perf's for p = 2 (N / t)\n"
               "# coll          bytes   time(us)  busbw\n");
    for (size_t bytes = (size_t)1 << 20; bytes <= max && !bad; bytes *= 4)
        for (int coll = 0; coll < 2 && !bad; coll++) {
            size_t n = bytes / sizeof(float);
            double t = run(coll, peer, me, in, out, stage, n, 1, wr, rd); /* warm-up: first touch, page tables */
            t = t < 0 ? t : run(coll, peer, me, in, out, stage, n, iters, wr, rd);
            double theirs;
            if (me) { /* the child's time goes to the parent, which prints the slower */
                if (write(res[1], &t, sizeof t) != (ssize_t)sizeof t)
                    return 3;
            } else if (read(res[0], &theirs, sizeof theirs) == (ssize_t)sizeof theirs) {
                t = t < 0 || theirs < 0 ? -1 : t > theirs ? t : theirs;
            }
            for (size_t i = 0; i < n && t >= 0; i += 4093) {
                float want = coll == 0 ? (float)((i % 97) + 1000 * (1 - me))
                                       : (float)(2 * (i % 97) + 1000);
                bad |= (coll == 0 ? out[(size_t)(1 - me) * n + i] : out[i]) != want;
            }
            if (t < 0) {
                fprintf(stderr, "bench_cma: process_vm_readv failed (not permitted here?)\n");
                bad = 1;
            } else if (!me) {
                printf("%-10s %10zu %10.1f %6.2f\n", coll ? "all_reduce" : "all_gather", bytes, t * 1e6,
                       (double)bytes / t / 1e9);
            }
        }
    if (me)
        _exit(bad);
    int st;
    waitpid(child, &st, 0);
    bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    if (bad)
        fprintf(stderr, "bench_cma: wrong data or a failed read\n");
    free(in);
    free(out);
    free(stage);
    return bad;
}
