/* p2p_body.h - what a rank checks of stitch_send/stitch_recv, groups and stitch_isend/stitch_irecv, shared by the threads tests
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
    if (st == STITCH_OK && me == 0) { /* recorded, not issued: STITCH_OK */
        if ((st = stitch_send(a, 4, STITCH_INT32, 1, comm)) == STITCH_OK)
            st = stitch_recv(b, 4, STITCH_INT32, 1, comm);
    } else if (st == STITCH_OK && me == 1) {
        st = stitch_recv(b, 4, STITCH_INT32, 0, comm);
    }
    if (st != STITCH_OK) {
        stitch_group_end();
        return pb_fail(why, len, "rank %d: group start or a grouped call: %s: %s", me, stitch_strerror(st),
                       stitch_comm_last_error(comm));
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

/* ---- non-blocking send and receive (stitch_isend, stitch_irecv) ---------------------------------------------- */

/* Ring exchange with isend/irecv, both orders on alternate ranks and rounds, 8 rounds in flight before any wait, a
 * non-blocking all_reduce between rounds 3 and 4 (call order with the p2p around it), sizes from none to more than
 * a transport's ring: nothing may deadlock, every element arrives. Two ranks or more (none to oneself). */
__attribute__((unused))
static int pb_iring(stitch_comm_t *comm, char *why, size_t len)
{
    enum { ROUNDS = 8 };
    static const size_t sizes[] = {0, 1, 1000, 1u << 20};
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), right = (me + 1) % p, left = (me + p - 1) % p;
    int32_t *out[ROUNDS], *in[ROUNDS], sum = me, all = 0;
    stitch_request_t *reqs[2 * ROUNDS + 1];
    int nreq = 0, rc = 0;
    stitch_status_t st = STITCH_OK;
    for (int round = 0; round < ROUNDS && st == STITCH_OK; round++) {
        size_t n = sizes[round % 4];
        out[round] = malloc(sizeof(int32_t) * (n ? n : 1)), in[round] = malloc(sizeof(int32_t) * (n ? n : 1));
        for (size_t i = 0; i < n; i++)
            out[round][i] = pb_val(me, right, round, i);
        if (round == 4)
            st = stitch_iall_reduce(&sum, &all, 1, STITCH_INT32, STITCH_SUM, comm, &reqs[nreq++]);
        if ((me + round) % 2) {
            st = st ? st : stitch_isend(out[round], n, STITCH_INT32, right, comm, &reqs[nreq++]);
            st = st ? st : stitch_irecv(in[round], n, STITCH_INT32, left, comm, &reqs[nreq++]);
        } else {
            st = st ? st : stitch_irecv(in[round], n, STITCH_INT32, left, comm, &reqs[nreq++]);
            st = st ? st : stitch_isend(out[round], n, STITCH_INT32, right, comm, &reqs[nreq++]);
        }
    }
    if (st != STITCH_OK)
        return pb_fail(why, len, "rank %d: issuing: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    st = stitch_wait_all(nreq, reqs);
    if (st != STITCH_OK)
        rc = pb_fail(why, len, "rank %d: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    else if (all != p * (p - 1) / 2)
        rc = pb_fail(why, len, "rank %d: the all_reduce between the rounds gave %d, want %d", me, all,
                     p * (p - 1) / 2);
    for (int round = 0; round < ROUNDS; round++) {
        if (!rc)
            rc = pb_check(in[round], sizes[round % 4], left, me, round, "iring", why, len);
        free(out[round]), free(in[round]);
    }
    for (int k = 0; k < nreq; k++)
        stitch_request_free(reqs[k]);
    return rc;
}

/* A rank that runs ahead into point-to-point, ordered by messages: four ranks, 50 rounds of a mesh gather to rank 2
 * (each rank sends rank 2 its block; a rooted call's hello goes round the ring). Rank 1, done with the gather at
 * once, isends rank 2 a message and then tells rank 3, on a second communicator, to start its gather; so rank 2,
 * still in the gather waiting for rank 3, has rank 1's message at the head of that stream while it idles. It
 * must not take it for a mismatch (proc.p2p.iring.tcp found that, about once in 50 runs; the scenarios run this
 * with STITCH_SPIN_US=0, so an idle rank looks at its streams' heads at once). Four process ranks: rank 1's
 * wait relies on a process transport taking a small send whole (with threads a send waits for its receive). */
__attribute__((unused))
static int pb_iahead(stitch_comm_t *comm, char *why, size_t len)
{
    enum { ROUNDS = 50, ROOT = 2 };
    int me = stitch_comm_rank(comm), rc = 0;
    stitch_comm_t *side = NULL;
    stitch_status_t st = stitch_comm_set_algorithm(comm, STITCH_GATHER, "mesh");
    st = st ? st : stitch_comm_dup(comm, &side);
    if (st != STITCH_OK)
        return pb_fail(why, len, "rank %d: setting up: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    for (int round = 0; round < ROUNDS && !rc; round++) {
        int32_t mine = pb_val(me, ROOT, round, 0), all[4] = {0}, note = round, got = -1;
        stitch_request_t *req = NULL;
        if (me == 3 && (st = stitch_recv(&got, 1, STITCH_INT32, 1, side)) != STITCH_OK)
            rc = pb_fail(why, len, "rank 3: round %d: the go from rank 1: %s: %s", round, stitch_strerror(st),
                         stitch_comm_last_error(side));
        st = rc ? STITCH_OK : stitch_gather(&mine, all, 1, STITCH_INT32, ROOT, comm);
        if (!rc && st != STITCH_OK)
            rc = pb_fail(why, len, "rank %d: round %d: gather: %s: %s", me, round, stitch_strerror(st),
                         stitch_comm_last_error(comm));
        for (int r = 0; !rc && me == ROOT && r < 4; r++)
            if (all[r] != pb_val(r, ROOT, round, 0))
                rc = pb_fail(why, len, "rank 2: round %d: the gather's block %d is %d, want %d", round, r, all[r],
                             pb_val(r, ROOT, round, 0));
        if (!rc && me == 1) { /* the message first, wholly taken by the stream, then the go */
            st = stitch_isend(&note, 1, STITCH_INT32, ROOT, comm, &req);
            st = st ? st : stitch_wait(req);
            st = st ? st : stitch_send(&note, 1, STITCH_INT32, 3, side);
        } else if (!rc && me == ROOT) {
            st = stitch_irecv(&got, 1, STITCH_INT32, 1, comm, &req);
            st = st ? st : stitch_wait(req);
            if (st == STITCH_OK && got != round)
                rc = pb_fail(why, len, "rank 2: round %d: rank 1's message is %d", round, got);
        }
        stitch_request_free(req);
        if (!rc && st != STITCH_OK)
            rc = pb_fail(why, len, "rank %d: round %d: the message from rank 1: %s: %s", me, round,
                         stitch_strerror(st), stitch_comm_last_error(comm));
    }
    stitch_comm_destroy(side);
    return rc;
}

/* A stream: 400 rounds of ring exchange with isend/irecv, each round waited for four rounds later, so that
 * operations are always in flight and one run of them goes on (p2p_nb.c drops the done ones as it goes: p2p.h's
 * compact); every element checked. Two ranks or more. */
__attribute__((unused))
static int pb_istream(stitch_comm_t *comm, char *why, size_t len)
{
    enum { ROUNDS = 400, WINDOW = 4, N = 64 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), right = (me + 1) % p, left = (me + p - 1) % p;
    int32_t out[WINDOW][N], in[WINDOW][N];
    stitch_request_t *reqs[WINDOW][2];
    int rc = 0;
    for (int round = 0; round < ROUNDS + WINDOW && !rc; round++) {
        int w = round % WINDOW;
        if (round >= WINDOW) { /* round - WINDOW's slot: wait, check, free */
            stitch_status_t st = stitch_wait_all(2, reqs[w]);
            if (st != STITCH_OK)
                rc = pb_fail(why, len, "rank %d round %d: %s: %s", me, round - WINDOW, stitch_strerror(st),
                             stitch_comm_last_error(comm));
            else
                rc = pb_check(in[w], N, left, me, round - WINDOW, "stream", why, len);
            stitch_request_free(reqs[w][0]), stitch_request_free(reqs[w][1]);
        }
        if (round >= ROUNDS || rc)
            continue;
        for (size_t i = 0; i < N; i++)
            out[w][i] = pb_val(me, right, round, i);
        stitch_status_t st;
        if ((me + round) % 2) {
            st = stitch_isend(out[w], N, STITCH_INT32, right, comm, &reqs[w][0]);
            st = st ? st : stitch_irecv(in[w], N, STITCH_INT32, left, comm, &reqs[w][1]);
        } else {
            st = stitch_irecv(in[w], N, STITCH_INT32, left, comm, &reqs[w][1]);
            st = st ? st : stitch_isend(out[w], N, STITCH_INT32, right, comm, &reqs[w][0]);
        }
        if (st != STITCH_OK)
            return pb_fail(why, len, "rank %d round %d: issuing: %s", me, round, stitch_comm_last_error(comm));
    }
    return rc;
}

/* Real overlap: rank 0's irecv from rank 1 is pending while rank 0 runs on - it sees the request not done, then
 * tells rank 1 (a message on a duplicate communicator) to send, which rank 1 does only on that word; so the receive
 * cannot have been done in the call. The other ranks only take part in the dup. */
__attribute__((unused))
static int pb_ioverlap(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 5000 };
    int me = stitch_comm_rank(comm), rc = 0, done = -1;
    int32_t *v = calloc(N, sizeof *v), word = 7;
    stitch_comm_t *dup = NULL;
    stitch_request_t *req = NULL;
    if (stitch_comm_dup(comm, &dup) != STITCH_OK)
        return free(v), pb_fail(why, len, "rank %d: dup: %s", me, stitch_comm_last_error(comm));
    if (me == 0) {
        stitch_status_t st = stitch_irecv(v, N, STITCH_INT32, 1, comm, &req);
        st = st ? st : stitch_test(req, &done);
        if (st == STITCH_OK && done)
            rc = pb_fail(why, len, "rank 0: the irecv is done before rank 1 was told to send");
        st = st ? st : stitch_send(&word, 1, STITCH_INT32, 1, dup);
        st = st ? st : stitch_wait(req);
        if (st != STITCH_OK)
            rc = pb_fail(why, len, "rank 0: %s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
        rc = rc ? rc : pb_check(v, N, 1, 0, 0, "overlap", why, len);
    } else if (me == 1) {
        for (size_t i = 0; i < N; i++)
            v[i] = pb_val(1, 0, 0, i);
        int32_t got = 0;
        stitch_status_t st = stitch_recv(&got, 1, STITCH_INT32, 0, dup);
        st = st ? st : stitch_isend(v, N, STITCH_INT32, 0, comm, &req);
        st = st ? st : stitch_wait(req);
        if (st != STITCH_OK || got != word)
            rc = pb_fail(why, len, "rank 1: %s: %s (word %d)", stitch_strerror(st), stitch_comm_last_error(comm),
                         got);
    }
    if (req)
        stitch_request_free(req);
    stitch_comm_destroy(dup);
    free(v);
    return rc;
}

/* An irecv larger than its isend (rank 1 receives 20 of rank 0's 10): both ranks fail naming both counts; the
 * others learn of it at their barrier. */
__attribute__((unused))
static int pb_ibigger_recv(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm);
    int32_t v[20] = {0};
    stitch_request_t *req = NULL;
    stitch_status_t st;
    if (me == 0)
        st = stitch_isend(v, 10, STITCH_INT32, 1, comm, &req);
    else if (me == 1)
        st = stitch_irecv(v, 20, STITCH_INT32, 0, comm, &req);
    else
        st = stitch_barrier(comm);
    const char *msg = stitch_comm_last_error(comm);
    if (req) {
        st = stitch_wait(req);
        msg = stitch_request_error(req);
        if (st == STITCH_OK && me == 0) /* processes: the stream took it; the receiver's abort reaches the barrier */
            st = stitch_barrier(comm), msg = stitch_comm_last_error(comm);
    }
    int rc = 0;
    if (st == STITCH_OK)
        rc = pb_fail(why, len, "rank %d: the mismatched isend/irecv succeeded", me);
    else if (!strstr(msg, "rank 0 sends 10 int32 to rank 1") || !strstr(msg, "rank 1 receives 20 int32"))
        rc = pb_fail(why, len, "rank %d: %s: message does not name both sides: %s", me, stitch_strerror(st), msg);
    if (req)
        stitch_request_free(req);
    return rc;
}

/* Unmatched: rank 0 isends to rank 1 and irecvs from it, rank 1 only irecvs. Rank 0's irecv fails within the
 * timeout naming rank 1 and the receive; its isend and rank 1's irecv succeed. */
__attribute__((unused))
static int pb_iunmatched(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm), rc = 0;
    int32_t a[4] = {1, 2, 3, 4}, b[4];
    stitch_request_t *reqs[2] = {NULL, NULL};
    if (me == 0) {
        stitch_isend(a, 4, STITCH_INT32, 1, comm, &reqs[0]);
        stitch_irecv(b, 4, STITCH_INT32, 1, comm, &reqs[1]);
        stitch_status_t s0 = stitch_wait(reqs[0]), s1 = stitch_wait(reqs[1]);
        const char *msg = stitch_request_error(reqs[1]);
        if (s0 != STITCH_OK || s1 != STITCH_ERR_TIMEOUT || !strstr(msg, "rank 1") ||
            !strstr(msg, "a receive of 4 int32 from rank 1"))
            rc = pb_fail(why, len, "rank 0: isend %s, irecv %s: %s", stitch_strerror(s0), stitch_strerror(s1), msg);
    } else if (me == 1) {
        stitch_irecv(b, 4, STITCH_INT32, 0, comm, &reqs[0]);
        stitch_status_t st = stitch_wait(reqs[0]);
        if (st != STITCH_OK || b[3] != 4)
            rc = pb_fail(why, len, "rank 1: its irecv: %s: %s", stitch_strerror(st), stitch_request_error(reqs[0]));
    }
    for (int k = 0; k < 2; k++)
        if (reqs[k])
            stitch_request_free(reqs[k]);
    return rc;
}

/* Usage: an isend inside a group is refused, not recorded, nothing aborted; a request waited for after it was
 * freed is refused, naming the call and the rank. Two ranks or more. */
__attribute__((unused))
static int pb_iusage(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), right = (me + 1) % p, left = (me + p - 1) % p;
    int32_t out = me, in = -1;
    stitch_request_t *reqs[2] = {NULL, NULL};
    stitch_group_start();
    stitch_status_t st = stitch_isend(&out, 1, STITCH_INT32, right, comm, &reqs[0]);
    stitch_group_end();
    if (st != STITCH_ERR_UNSUPPORTED || reqs[0] || !strstr(stitch_comm_last_error(comm), "group"))
        return pb_fail(why, len, "rank %d: isend in a group: %s: %s", me, stitch_strerror(st),
                       stitch_comm_last_error(comm));
    st = stitch_irecv(&in, 1, STITCH_INT32, left, comm, &reqs[1]);
    st = st ? st : stitch_isend(&out, 1, STITCH_INT32, right, comm, &reqs[0]);
    st = st ? st : stitch_wait_all(2, reqs);
    if (st != STITCH_OK || in != left)
        return pb_fail(why, len, "rank %d: exchange: %s: %s (got %d)", me, stitch_strerror(st),
                       stitch_comm_last_error(comm), in);
    if ((st = stitch_barrier(comm)) != STITCH_OK) /* every rank's requests are made: no slot is reused below */
        return pb_fail(why, len, "rank %d: barrier: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    stitch_request_free(reqs[0]);
    stitch_request_free(reqs[1]);
    char want[64];
    snprintf(want, sizeof want, "stitch_isend on rank %d", me);
    st = stitch_wait(reqs[0]);
    if (st != STITCH_ERR_INVALID_USAGE || !strstr(stitch_comm_last_error(comm), want))
        return pb_fail(why, len, "rank %d: wait after free: %s: %s", me, stitch_strerror(st),
                       stitch_comm_last_error(comm));
    return 0;
}

#endif
