/* p2p_body.h - what a rank checks of stitch_send/stitch_recv and groups, shared by the threads tests
 * (tests/runtime/test_p2p.c) and the process tests (tests/proc/test_proc_p2p.c). Each body runs on one rank and
 * returns 0, or 1 with why in `why`.
 */
#ifndef ST_TEST_P2P_BODY_H
#define ST_TEST_P2P_BODY_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stitch.h"

static int pb_fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
__attribute__((unused))
static int pb_fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return 1;
}

__attribute__((unused))
static int32_t pb_val(int src, int dst, int round, size_t i)
{
    return (int32_t)(src * 1000003 + dst * 7919 + round * 104729 + (int32_t)i);
}

__attribute__((unused))
static int pb_check(const int32_t *v, size_t n, int src, int dst, int round, const char *what, char *why, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != pb_val(src, dst, round, i))
            return pb_fail(why, len, "%s: element %zu from rank %d to %d (round %d) is %d, want %d", what, i, src,
                           dst, round, v[i], pb_val(src, dst, round, i));
    return 0;
}

/* Ring exchange in a group, both orders (send first, receive first) on alternate ranks and rounds, at sizes from
 * one element to more than a transport's ring: nothing may deadlock, and every element arrives. */
__attribute__((unused))
static int pb_ring(stitch_comm_t *comm, char *why, size_t len)
{
    static const size_t sizes[] = {0, 1, 1000, 1u << 20};
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), right = (me + 1) % p, left = (me + p - 1) % p;
    int32_t *out = malloc(sizeof *out << 20), *in = malloc(sizeof *in << 20);
    int rc = 0;
    for (int round = 0; round < 8 && !rc; round++) {
        size_t n = sizes[round % 4];
        for (size_t i = 0; i < n; i++)
            out[i] = pb_val(me, right, round, i);
        int send_first = (me + round) % 2;
        stitch_status_t st = stitch_group_start();
        if (send_first)
            st = st ? st : stitch_send(out, n, STITCH_INT32, right, comm);
        st = st ? st : stitch_recv(in, n, STITCH_INT32, left, comm);
        if (!send_first)
            st = st ? st : stitch_send(out, n, STITCH_INT32, right, comm);
        stitch_status_t end = stitch_group_end();
        st = st ? st : end;
        if (st != STITCH_OK)
            rc = pb_fail(why, len, "rank %d round %d: %s: %s", me, round, stitch_strerror(st),
                         stitch_comm_last_error(comm));
        else
            rc = pb_check(in, n, left, me, round, "ring", why, len);
    }
    free(out), free(in);
    return rc;
}

/* Every rank sends to every rank (itself included) and receives from every one, two messages per pair, the
 * operations in an order of its own (a rotation by rank, sends and receives interleaved differently per rank). */
__attribute__((unused))
static int pb_all_pairs(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 3001 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm);
    int32_t *out = malloc(sizeof *out * N * 2 * (size_t)p), *in = malloc(sizeof *in * N * 2 * (size_t)p);
    for (int q = 0; q < p; q++)
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < N; i++)
                out[((size_t)q * 2 + (size_t)k) * N + i] = pb_val(me, q, k, i);
    stitch_status_t st = stitch_group_start();
    for (int j = 0; j < p && st == STITCH_OK; j++) {
        int q = (me + j) % p, recv_first = (me * 7 + j) % 3 == 0;
        for (int k = 0; k < 2 && st == STITCH_OK; k++) {
            int32_t *o = out + ((size_t)q * 2 + (size_t)k) * N, *r = in + ((size_t)q * 2 + (size_t)k) * N;
            st = recv_first ? stitch_recv(r, N, STITCH_INT32, q, comm) : stitch_send(o, N, STITCH_INT32, q, comm);
            if (st == STITCH_OK)
                st = recv_first ? stitch_send(o, N, STITCH_INT32, q, comm) : stitch_recv(r, N, STITCH_INT32, q, comm);
        }
    }
    stitch_status_t end = stitch_group_end();
    st = st ? st : end;
    int rc = st != STITCH_OK ? pb_fail(why, len, "rank %d: %s: %s", me, stitch_strerror(st),
                                       stitch_comm_last_error(comm))
                             : 0;
    for (int q = 0; q < p && !rc; q++)
        for (int k = 0; k < 2 && !rc; k++)
            rc = pb_check(in + ((size_t)q * 2 + (size_t)k) * N, N, q, me, k, "all pairs", why, len);
    free(out), free(in);
    return rc;
}

/* Without a group: a chain 0 -> 1 -> ... -> p-1 of blocking sends and receives, then a barrier. */
__attribute__((unused))
static int pb_chain(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 70000 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm);
    int32_t *v = malloc(sizeof *v * N);
    stitch_status_t st = STITCH_OK;
    if (me > 0)
        st = stitch_recv(v, N, STITCH_INT32, me - 1, comm);
    if (st == STITCH_OK && me > 0 && pb_check(v, N, 0, 0, 0, "chain", why, len)) {
        free(v);
        return 1;
    }
    for (size_t i = 0; me == 0 && i < N; i++)
        v[i] = pb_val(0, 0, 0, i);
    if (st == STITCH_OK && me < p - 1)
        st = stitch_send(v, N, STITCH_INT32, me + 1, comm);
    if (st == STITCH_OK)
        st = stitch_barrier(comm);
    free(v);
    return st != STITCH_OK ? pb_fail(why, len, "rank %d: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm))
                           : 0;
}

/* A receive larger than its send (rank 1 receives 20 of rank 0's 10): both ranks fail, naming both counts. */
__attribute__((unused))
static int pb_bigger_recv(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm);
    int32_t v[20] = {0};
    stitch_status_t st;
    if (me == 0) {
        st = stitch_send(v, 10, STITCH_INT32, 1, comm);
        if (st == STITCH_OK) /* processes: the stream took it; the receiver's abort reaches the next call */
            st = stitch_barrier(comm);
    } else if (me == 1) {
        st = stitch_recv(v, 20, STITCH_INT32, 0, comm);
    } else {
        st = stitch_barrier(comm);
    }
    const char *msg = stitch_comm_last_error(comm);
    if (st == STITCH_OK)
        return pb_fail(why, len, "rank %d: the mismatched send/receive succeeded", me);
    if (!strstr(msg, "rank 0 sends 10 int32 to rank 1") || !strstr(msg, "rank 1 receives 20 int32"))
        return pb_fail(why, len, "rank %d: %s: message does not name both sides: %s", me, stitch_strerror(st), msg);
    return 0;
}

/* A group with an unmatched receive: rank 0 sends to 1 and receives from 1, rank 1 only receives. Rank 0 fails
 * within the timeout naming rank 1 and the receive; rank 1's group succeeds (its next call would fail with rank
 * 0's message, but it would time out at the same moment, so the test does not race the two). */
__attribute__((unused))
static int pb_unmatched(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm);
    int32_t a[4] = {1, 2, 3, 4}, b[4];
    stitch_status_t st = stitch_group_start();
    if (me == 0) {
        stitch_send(a, 4, STITCH_INT32, 1, comm);
        stitch_recv(b, 4, STITCH_INT32, 1, comm);
    } else if (me == 1) {
        stitch_recv(b, 4, STITCH_INT32, 0, comm);
    }
    st = stitch_group_end();
    const char *msg = stitch_comm_last_error(comm);
    if (me == 0)
        return st == STITCH_ERR_TIMEOUT && strstr(msg, "rank 1") && strstr(msg, "a receive of 4 int32 from rank 1")
                   ? 0
                   : pb_fail(why, len, "rank 0: %s: %s", stitch_strerror(st), msg);
    return st == STITCH_OK ? 0 : pb_fail(why, len, "rank %d: its group failed: %s", me, msg);
}

/* Usage: a collective inside a group is refused and not recorded; nesting and an end without a start are usage
 * errors; the group still ends. */
__attribute__((unused))
static int pb_usage(stitch_comm_t *comm, char *why, size_t len)
{
    int32_t v = 1;
    if (stitch_group_end() != STITCH_ERR_INVALID_USAGE)
        return pb_fail(why, len, "end without start was not refused");
    stitch_group_start();
    if (stitch_group_start() != STITCH_ERR_INVALID_USAGE)
        return pb_fail(why, len, "a nested start was not refused");
    stitch_status_t st = stitch_all_reduce(&v, &v, 1, STITCH_INT32, STITCH_SUM, comm);
    if (st != STITCH_ERR_UNSUPPORTED || !strstr(stitch_comm_last_error(comm), "stitch_group_start"))
        return pb_fail(why, len, "all_reduce in a group: %s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
    if (stitch_group_end() != STITCH_OK)
        return pb_fail(why, len, "an empty group did not end");
    st = stitch_all_reduce(&v, &v, 1, STITCH_INT32, STITCH_SUM, comm);
    return st == STITCH_OK && v == stitch_comm_size(comm) ? 0 : pb_fail(why, len, "all_reduce after: %s",
                                                                           stitch_comm_last_error(comm));
}

#endif
