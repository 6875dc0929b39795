/* rooted_stream.h - a long stream of rooted calls (scatter, gather, broadcast, reduce of int32) with rotating and
 * random roots and counts from 0 up to two segments, the same on every rank from a seed, each result checked
 * exactly (and what a rank should not receive left alone); shared by the threads stress (test_threads_stress.c)
 * and its process-mode twin (tests/proc/test_proc_stress.c).
 */
#ifndef ST_TEST_ROOTED_STREAM_H
#define ST_TEST_ROOTED_STREAM_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "stitch.h"

#define MAXCOUNT 1500 /* elements of int32 per rank and block: 6 KB, two segments of the smallest size */
#define GUARD 8

/* ---- randomness ---------------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull, x ^= x >> 33;
    return x;
}

static _Thread_local uint64_t local_rng; /* each thread's own stream: delays, not arguments */

static uint64_t local_rnd(void)
{
    if (!local_rng)
        local_rng = mix((uint64_t)(uintptr_t)&local_rng ^ (uint64_t)getpid() << 32 ^
                        (uint64_t)time(NULL) * 1000003u ^ (uint64_t)clock()) | 1;
    local_rng ^= local_rng << 13, local_rng ^= local_rng >> 7, local_rng ^= local_rng << 17;
    return local_rng;
}

static void nap_us(long us)
{
    nanosleep(&(struct timespec){0, us * 1000}, NULL);
}

typedef struct call {
    stitch_coll_t coll;
    int root;
    size_t count;
} call;

/* A stream of calls, the same on every rank: ncalls of the collectives colls[0 .. ncolls - 1], from the seed. */
typedef struct rs_stream {
    int p, ncalls;
    uint64_t seed;
    const stitch_coll_t *colls;
    int ncolls;
} rs_stream;

static const size_t counts[] = {0, 1, 1, 2, 3, 7, 17, 64, 100, MAXCOUNT};

/* Call i of the batch: the same on every rank. Roots rotate (i % p) with a random one now and then. */
static call call_of(const rs_stream *b, int i)
{
    uint64_t x = mix(b->seed ^ (uint64_t)i * 0x9e3779b97f4a7c15ull);
    call c;
    c.coll = b->colls[x % (uint64_t)b->ncolls];
    c.root = (x >> 8) % 5 == 0 ? (int)((x >> 16) % (uint64_t)b->p) : i % b->p;
    c.count = counts[(x >> 24) % (sizeof counts / sizeof *counts)];
    return c;
}

static int32_t value(int i, int r, size_t j)
{
    return (int32_t)(((size_t)i * 7 + (size_t)r * 13 + j) % 1000);
}

static stitch_status_t run_call(const rs_stream *b, stitch_comm_t *comm, int r, int i, const call *c,
                                int32_t *send, int32_t *recv)
{
    int p = b->p, root = c->root, me_root = r == root;
    size_t n = c->count;
    switch (c->coll) {
    case STITCH_SCATTER:
        for (size_t k = 0; me_root && k < (size_t)p * n; k++)
            send[k] = value(i, root, k);
        return stitch_scatter(me_root ? send : NULL, recv, n, STITCH_INT32, root, comm);
    case STITCH_GATHER:
        for (size_t k = 0; k < n; k++)
            send[k] = value(i, r, k);
        return stitch_gather(send, me_root ? recv : NULL, n, STITCH_INT32, root, comm);
    case STITCH_BROADCAST:
        for (size_t k = 0; me_root && k < n; k++)
            send[k] = value(i, root, k);
        return stitch_broadcast(me_root ? send : NULL, recv, n, STITCH_INT32, root, comm);
    case STITCH_ALL_REDUCE:
        for (size_t k = 0; k < n; k++)
            send[k] = value(i, r, k);
        return stitch_all_reduce(send, recv, n, STITCH_INT32, STITCH_SUM, comm);
    default: /* reduce */
        for (size_t k = 0; k < n; k++)
            send[k] = value(i, r, k);
        return stitch_reduce(send, me_root ? recv : NULL, n, STITCH_INT32, STITCH_SUM, root, comm);
    }
}

/* The result of call i at rank r, element k of what it receives; -1: none expected (recv left alone). */
static long expected(const rs_stream *b, int r, int i, const call *c, size_t k)
{
    int p = b->p, root = c->root;
    size_t n = c->count;
    switch (c->coll) {
    case STITCH_SCATTER: return k < n ? value(i, root, (size_t)r * n + k) : -1;
    case STITCH_GATHER: return r == root && k < (size_t)p * n ? value(i, (int)(k / (n ? n : 1)), k % (n ? n : 1)) : -1;
    case STITCH_BROADCAST: return k < n ? value(i, root, k) : -1;
    default: { /* reduce, all_reduce */
        if ((r != root && c->coll != STITCH_ALL_REDUCE) || k >= n)
            return -1;
        long sum = 0;
        for (int q = 0; q < p; q++)
            sum += value(i, q, k);
        return sum;
    }
    }
}

#define UNTOUCHED (-777)

static int check_call(const rs_stream *b, int r, int i, const call *c, const int32_t *recv, size_t len, char *err,
                      size_t errlen)
{
    for (size_t k = 0; k < len; k++) {
        long want = expected(b, r, i, c, k);
        if (want < 0)
            want = UNTOUCHED;
        if (recv[k] != want) {
            snprintf(err, errlen, "call %d (%s, root %d, count %zu): rank %d element %zu is %d, "
                     "expected %ld", i, stitch_coll_name(c->coll), c->root, c->count, r, k, recv[k], want);
            return 0;
        }
    }
    return 1;
}

/* Rank r's part of the stream on comm, napping or yielding at random between calls (so that it falls behind or runs
 * ahead of its peers): STITCH_OK, or the failing call's status (STITCH_ERR_INTERNAL for a wrong result) with its
 * number in *failed and a message in err. */
static stitch_status_t rs_run_rank(const rs_stream *b, stitch_comm_t *comm, int r, char *err, size_t errlen,
                                   int *failed)
{
    size_t len = (size_t)b->p * MAXCOUNT + GUARD;
    int32_t *send = malloc(len * sizeof *send), *recv = malloc(len * sizeof *recv);
    stitch_status_t st = send && recv ? STITCH_OK : STITCH_ERR_NO_MEMORY;
    *failed = -1;
    for (int i = 0; i < b->ncalls && st == STITCH_OK; i++) {
        call c = call_of(b, i);
        for (size_t k = 0; k < len; k++)
            recv[k] = UNTOUCHED;
        uint64_t d = local_rnd() % 64;
        if (d == 0)
            nap_us((long)(local_rnd() % 500));
        else if (d < 8)
            sched_yield();
        if ((st = run_call(b, comm, r, i, &c, send, recv)) != STITCH_OK)
            snprintf(err, errlen, "%s", stitch_comm_last_error(comm));
        else if (!check_call(b, r, i, &c, recv, len, err, errlen))
            st = STITCH_ERR_INTERNAL;
        if (st != STITCH_OK)
            *failed = i;
    }
    free(send);
    free(recv);
    return st;
}

#endif
