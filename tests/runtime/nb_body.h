/* nb_body.h - what a rank checks of the non-blocking collectives (stitch_iall_reduce, ..., stitch_test/wait/
 * wait_all, stitch_request_free), shared by the threads tests (tests/runtime/test_nb.c) and the process tests
 * (tests/proc/test_proc_nb.c). Each body runs on one rank and returns 0, or 1 with why in `why`.
 *
 * Every call k of a sequence is one of ten kinds (the nine collectives and the barrier) by k, with a count and a
 * root from k, and data that names (k, rank, element), so that a call run out of order or mixed up with another
 * shows as wrong data or a mismatch. Nothing waits by time: ranks that must be in a given state first are told by
 * a message (a point-to-point on a duplicate communicator).
 */
#ifndef ST_TEST_NB_BODY_H
#define ST_TEST_NB_BODY_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stitch.h"

static int nb_fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
__attribute__((unused))
static int nb_fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return 1;
}

enum { NB_KINDS = 10, NB_BARRIER = 9, NB_MAXP = 16 };

/* One call of a sequence, with its buffers. */
typedef struct nb_call {
    int k, kind, root;
    size_t n;
    int32_t *send, *recv;
    size_t sc[NB_MAXP], sd[NB_MAXP], rc[NB_MAXP], rd[NB_MAXP]; /* all_to_all_v */
    stitch_request_t *req;
} nb_call;

static int32_t nb_val(int k, int r, size_t i)
{
    return (int32_t)(k * 1009 + r * 31 + (int)i * 7);
}

/* all_to_all_v: elements from rank s to rank d in call k. */
static size_t nb_vcount(int k, int s, int d)
{
    return (size_t)((s + 2 * d + k) % 3);
}

/* Call k of p ranks as rank me: its kind, count, root, and its input (the output filled with -1). */
static int nb_make(nb_call *c, int k, int me, int p)
{
    memset(c, 0, sizeof *c);
    c->k = k, c->kind = k % NB_KINDS, c->root = (k / NB_KINDS + k) % p;
    c->n = k % 13 == 12 ? 0 : 1 + (size_t)(k % 4);
    size_t cap = (size_t)p * (c->n + 3);
    c->send = malloc(sizeof *c->send * cap), c->recv = malloc(sizeof *c->recv * cap);
    if (!c->send || !c->recv)
        return -1;
    for (size_t j = 0; j < cap; j++)
        c->send[j] = nb_val(k, me, j), c->recv[j] = -1;
    if (c->kind == STITCH_ALL_TO_ALL_V) {
        size_t so = 0, ro = 0;
        for (int q = 0; q < p; q++) {
            c->sc[q] = nb_vcount(k, me, q), c->sd[q] = so, so += c->sc[q];
            c->rc[q] = nb_vcount(k, q, me), c->rd[q] = ro, ro += c->rc[q];
            for (size_t i = 0; i < c->sc[q]; i++)
                c->send[c->sd[q] + i] = nb_val(k, me, (size_t)q * 100 + i);
        }
    }
    return 0;
}

static void nb_free_call(nb_call *c)
{
    free(c->send), free(c->recv);
    c->send = c->recv = NULL;
}

/* Make call c, blocking (req NULL) or not. */
static stitch_status_t nb_issue(nb_call *c, stitch_comm_t *comm, stitch_request_t **req)
{
    const int32_t *s = c->send;
    int32_t *r = c->recv;
    size_t n = c->n;
    switch (c->kind) {
    case STITCH_ALL_REDUCE:
        return req ? stitch_iall_reduce(s, r, n, STITCH_INT32, STITCH_SUM, comm, req)
                   : stitch_all_reduce(s, r, n, STITCH_INT32, STITCH_SUM, comm);
    case STITCH_REDUCE_SCATTER:
        return req ? stitch_ireduce_scatter(s, r, n, STITCH_INT32, STITCH_SUM, comm, req)
                   : stitch_reduce_scatter(s, r, n, STITCH_INT32, STITCH_SUM, comm);
    case STITCH_ALL_GATHER:
        return req ? stitch_iall_gather(s, r, n, STITCH_INT32, comm, req)
                   : stitch_all_gather(s, r, n, STITCH_INT32, comm);
    case STITCH_BROADCAST:
        return req ? stitch_ibroadcast(s, r, n, STITCH_INT32, c->root, comm, req)
                   : stitch_broadcast(s, r, n, STITCH_INT32, c->root, comm);
    case STITCH_REDUCE:
        return req ? stitch_ireduce(s, r, n, STITCH_INT32, STITCH_SUM, c->root, comm, req)
                   : stitch_reduce(s, r, n, STITCH_INT32, STITCH_SUM, c->root, comm);
    case STITCH_SCATTER:
        return req ? stitch_iscatter(s, r, n, STITCH_INT32, c->root, comm, req)
                   : stitch_scatter(s, r, n, STITCH_INT32, c->root, comm);
    case STITCH_GATHER:
        return req ? stitch_igather(s, r, n, STITCH_INT32, c->root, comm, req)
                   : stitch_gather(s, r, n, STITCH_INT32, c->root, comm);
    case STITCH_ALL_TO_ALL:
        return req ? stitch_iall_to_all(s, r, n, STITCH_INT32, comm, req)
                   : stitch_all_to_all(s, r, n, STITCH_INT32, comm);
    case STITCH_ALL_TO_ALL_V:
        return req ? stitch_iall_to_all_v(s, c->sc, c->sd, r, c->rc, c->rd, STITCH_INT32, comm, req)
                   : stitch_all_to_all_v(s, c->sc, c->sd, r, c->rc, c->rd, STITCH_INT32, comm);
    default:
        return req ? stitch_ibarrier(comm, req) : stitch_barrier(comm);
    }
}

/* Element j of call c's output at rank me, and how many there are (0: this rank has no output). */
static size_t nb_expect(const nb_call *c, int me, int p, size_t j, int32_t *want)
{
    size_t n = c->n;
    int32_t sum = 0;
    switch (c->kind) {
    case STITCH_ALL_REDUCE:
    case STITCH_REDUCE:
        for (int r = 0; r < p; r++)
            sum += nb_val(c->k, r, j);
        *want = sum;
        return c->kind == STITCH_REDUCE && me != c->root ? 0 : n;
    case STITCH_REDUCE_SCATTER:
        for (int r = 0; r < p; r++)
            sum += nb_val(c->k, r, (size_t)me * n + j);
        *want = sum;
        return n;
    case STITCH_ALL_GATHER:
    case STITCH_GATHER:
        *want = nb_val(c->k, (int)(j / (n ? n : 1)), j % (n ? n : 1));
        return c->kind == STITCH_GATHER && me != c->root ? 0 : n * (size_t)p;
    case STITCH_BROADCAST:
        *want = nb_val(c->k, c->root, j);
        return n;
    case STITCH_SCATTER:
        *want = nb_val(c->k, c->root, (size_t)me * n + j);
        return n;
    case STITCH_ALL_TO_ALL:
        *want = nb_val(c->k, (int)(j / (n ? n : 1)), (size_t)me * n + j % (n ? n : 1));
        return n * (size_t)p;
    case STITCH_ALL_TO_ALL_V: {
        size_t total = 0;
        for (int s = 0; s < p; s++) {
            if (j >= c->rd[s] && j < c->rd[s] + c->rc[s])
                *want = nb_val(c->k, s, (size_t)me * 100 + (j - c->rd[s]));
            total += c->rc[s];
        }
        return total;
    }
    default:
        return 0;
    }
}

static const char *nb_kind_name(int kind)
{
    return kind == NB_BARRIER ? "barrier" : stitch_coll_name((stitch_coll_t)kind);
}

/* Call c's output against what it must be. */
static int nb_check(const nb_call *c, int me, int p, char *why, size_t len)
{
    int32_t want = 0;
    size_t total = nb_expect(c, me, p, 0, &want);
    for (size_t j = 0; j < total; j++) {
        nb_expect(c, me, p, j, &want);
        if (c->recv[j] != want)
            return nb_fail(why, len, "rank %d call %d (%s, count %zu, root %d): element %zu is %d, want %d", me, c->k,
                           nb_kind_name(c->kind), c->n, c->root, j, c->recv[j], want);
    }
    return 0;
}

static int nb_failed(stitch_comm_t *comm, const nb_call *c, stitch_status_t st, const char *what, char *why,
                     size_t len)
{
    return nb_fail(why, len, "rank %d call %d (%s) %s: %s: %s", stitch_comm_rank(comm), c->k, nb_kind_name(c->kind),
                   what, stitch_strerror(st), c->req ? stitch_request_error(c->req) : stitch_comm_last_error(comm));
}

/* Calls 0..n of a sequence, made for rank me of p (NULL when out of memory). */
static nb_call *nb_calls(int n, int me, int p)
{
    nb_call *calls = calloc((size_t)n, sizeof *calls);
    for (int k = 0; calls && k < n; k++)
        if (nb_make(&calls[k], k, me, p) != 0)
            return NULL; /* the test fails; what is left leaks with the test's process */
    return calls;
}

static void nb_free_calls(nb_call *calls, int n)
{
    for (int k = 0; calls && k < n; k++) {
        if (calls[k].req)
            stitch_request_free(calls[k].req);
        nb_free_call(&calls[k]);
    }
    free(calls);
}

/* 1,000 non-blocking calls in flight at once on one communicator (every kind, rotating roots, counts 0 to 4), made
 * without waiting. Waiting on the last must find every earlier one complete (call order); then every call's data. */
__attribute__((unused))
static int nb_flight(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 1000 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0;
    nb_call *calls = nb_calls(N, me, p);
    stitch_request_t *reqs[N];
    if (!calls)
        return nb_fail(why, len, "rank %d: out of memory", me);
    for (int k = 0; k < N && !rc; k++) {
        stitch_status_t st = nb_issue(&calls[k], comm, &calls[k].req);
        reqs[k] = calls[k].req;
        if (st != STITCH_OK || !calls[k].req)
            rc = nb_failed(comm, &calls[k], st, "could not be made", why, len);
    }
    stitch_status_t st = rc ? STITCH_OK : stitch_wait(reqs[N - 1]);
    if (!rc && st != STITCH_OK)
        rc = nb_failed(comm, &calls[N - 1], st, "failed", why, len);
    for (int k = 0; k < N - 1 && !rc; k++) {
        int done = -1;
        if ((st = stitch_test(reqs[k], &done)) != STITCH_OK || done != 1)
            rc = nb_fail(why, len, "rank %d: call %d is not complete (test: %s, done %d) after call %d is", me, k,
                         stitch_strerror(st), done, N - 1);
    }
    if (!rc && (st = stitch_wait_all(N, reqs)) != STITCH_OK)
        rc = nb_fail(why, len, "rank %d: wait_all: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    for (int k = 0; k < N && !rc; k++)
        rc = nb_check(&calls[k], me, p, why, len);
    nb_free_calls(calls, N);
    return rc;
}

/* Blocking and non-blocking calls mixed, each rank mixing differently (a peer's blocking call matches my
 * non-blocking one), with stitch_comm_set_algorithm, a grouped ring exchange and barriers among them: each blocking
 * call returns after every earlier request is complete, and every call's data is right. */
__attribute__((unused))
static int nb_mix(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 300 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0, right = (me + 1) % p, left = (me + p - 1) % p;
    nb_call *calls = nb_calls(N, me, p);
    if (!calls)
        return nb_fail(why, len, "rank %d: out of memory", me);
    for (int k = 0; k < N && !rc; k++) {
        nb_call *c = &calls[k];
        int blocking = (k + me) % 3 == 0;
        stitch_status_t st = nb_issue(c, comm, blocking ? NULL : &c->req);
        if (st != STITCH_OK)
            rc = nb_failed(comm, c, st, blocking ? "failed (blocking)" : "could not be made", why, len);
        for (int j = 0; j < k && blocking && !rc; j++) { /* a blocking call runs after every earlier one */
            int done = -1;
            if (calls[j].req && (stitch_test(calls[j].req, &done) != STITCH_OK || done != 1))
                rc = nb_fail(why, len, "rank %d: call %d is not complete after blocking call %d returned", me, j, k);
        }
        if (!rc && k % 50 == 49) /* queued behind the pending requests, as every rank's */
            if ((st = stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, k % 100 == 49 ? "ring" : "auto")) != 0)
                rc = nb_fail(why, len, "rank %d: set_algorithm after call %d: %s: %s", me, k, stitch_strerror(st),
                             stitch_comm_last_error(comm));
        if (!rc && k % 40 == 39) {
            int32_t out = nb_val(k, me, 0), in = -1;
            stitch_group_start();
            stitch_send(&out, 1, STITCH_INT32, right, comm);
            stitch_recv(&in, 1, STITCH_INT32, left, comm);
            if ((st = stitch_group_end()) != STITCH_OK || in != nb_val(k, left, 0))
                rc = nb_fail(why, len, "rank %d: ring exchange after call %d: %s (got %d, want %d): %s", me, k,
                             stitch_strerror(st), in, nb_val(k, left, 0), stitch_comm_last_error(comm));
        }
    }
    for (int k = 0; k < N && !rc; k++) {
        stitch_status_t st = calls[k].req ? stitch_wait(calls[k].req) : STITCH_OK;
        rc = st != STITCH_OK ? nb_failed(comm, &calls[k], st, "failed", why, len)
                             : nb_check(&calls[k], me, p, why, len);
    }
    nb_free_calls(calls, N);
    return rc;
}

/* The rules of test, wait, wait_all and free: a request that is surely pending (a peer has not made its call: it
 * waits for a message on a duplicate communicator that this rank sends only after its checks) tests not done and
 * cannot be freed; once complete, wait and test give its status again and again, and it frees once. */
__attribute__((unused))
static int nb_semantics(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0, done = -1, token = 7;
    stitch_comm_t *dup = NULL;
    nb_call c;
    stitch_status_t st = stitch_comm_dup(comm, &dup);
    if (st != STITCH_OK)
        return nb_fail(why, len, "rank %d: dup: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    if (nb_make(&c, 0, me, p) != 0) /* call 0: an all_reduce */
        return nb_fail(why, len, "rank %d: out of memory", me);
    if (me == 1 && (st = stitch_recv(&token, 1, STITCH_INT32, 0, dup)) != STITCH_OK)
        rc = nb_fail(why, len, "rank 1: recv on dup: %s", stitch_strerror(st));
    if (!rc && (st = nb_issue(&c, comm, &c.req)) != STITCH_OK)
        rc = nb_failed(comm, &c, st, "could not be made", why, len);
    if (!rc && me == 0 && p > 1) {
        if ((st = stitch_test(c.req, &done)) != STITCH_OK || done != 0)
            rc = nb_fail(why, len, "rank 0: a pending request tests %s, done %d", stitch_strerror(st), done);
        else if ((st = stitch_request_free(c.req)) != STITCH_ERR_INVALID_USAGE ||
                 !strstr(stitch_comm_last_error(comm), "still pending"))
            rc = nb_fail(why, len, "rank 0: freeing a pending request gave %s: %s", stitch_strerror(st),
                         stitch_comm_last_error(comm));
        else if (strcmp(stitch_request_error(c.req), "") != 0)
            rc = nb_fail(why, len, "rank 0: a pending request's error is '%s'", stitch_request_error(c.req));
        else if ((st = stitch_send(&token, 1, STITCH_INT32, 1, dup)) != STITCH_OK)
            rc = nb_fail(why, len, "rank 0: send on dup: %s", stitch_strerror(st));
    }
    for (int i = 0; i < 2 && !rc; i++)
        if ((st = stitch_wait(c.req)) != STITCH_OK)
            rc = nb_failed(comm, &c, st, "wait", why, len);
    if (!rc && ((st = stitch_test(c.req, &done)) != STITCH_OK || done != 1))
        rc = nb_fail(why, len, "rank %d: a complete request tests %s, done %d", me, stitch_strerror(st), done);
    if (!rc && (stitch_test(c.req, NULL) != STITCH_ERR_INVALID_ARGUMENT || stitch_wait_all(0, NULL) != STITCH_OK ||
                stitch_wait_all(-1, &c.req) != STITCH_ERR_INVALID_ARGUMENT ||
                stitch_wait_all(1, NULL) != STITCH_ERR_INVALID_ARGUMENT || stitch_wait_all(1, &c.req) != STITCH_OK))
        rc = nb_fail(why, len, "rank %d: test(req, NULL) or wait_all's argument checks", me);
    if (!rc && strcmp(stitch_request_error(c.req), "") != 0)
        rc = nb_fail(why, len, "rank %d: a successful request's error is '%s'", me, stitch_request_error(c.req));
    if (!rc)
        rc = nb_check(&c, me, p, why, len);
    if (!rc && (st = stitch_request_free(c.req)) != STITCH_OK)
        rc = nb_fail(why, len, "rank %d: free: %s", me, stitch_strerror(st));
    c.req = NULL;
    nb_free_call(&c);
    stitch_comm_destroy(dup);
    return rc;
}

/* Bad input: NULL, forged, freed and reused handles; an i-call inside a group; a NULL req; wait_all over a freed
 * handle among good ones. Then rank 0 makes a call with a NULL sendbuf: its request fails with the argument error,
 * which aborts the communicator, and every other rank's pending requests fail naming it. */
__attribute__((unused))
static int nb_bad(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0, done = 5;
    stitch_request_t *forged = (stitch_request_t *)(uintptr_t)0x7eadbeefu, *r = NULL, *r2 = NULL, *old;
    int32_t x = me, y = 0;
    stitch_status_t st;
    if (stitch_wait(NULL) != STITCH_ERR_INVALID_ARGUMENT || stitch_test(NULL, &done) != STITCH_ERR_INVALID_ARGUMENT ||
        done != 0 || stitch_request_free(NULL) != STITCH_ERR_INVALID_ARGUMENT ||
        !strstr(stitch_request_error(NULL), "NULL"))
        return nb_fail(why, len, "rank %d: a NULL request is not refused with STITCH_ERR_INVALID_ARGUMENT", me);
    if (stitch_wait(forged) != STITCH_ERR_INVALID_ARGUMENT ||
        stitch_request_free(forged) != STITCH_ERR_INVALID_ARGUMENT ||
        !strstr(stitch_request_error(forged), "not a request"))
        return nb_fail(why, len, "rank %d: a forged handle: %s", me, stitch_request_error(forged));
    if ((st = stitch_iall_reduce(&x, &y, 1, STITCH_INT32, STITCH_SUM, comm, &r)) != STITCH_OK ||
        (st = stitch_wait(r)) != STITCH_OK || y != p * (p - 1) / 2)
        return nb_fail(why, len, "rank %d: all_reduce: %s, %d: %s", me, stitch_strerror(st), y,
                       stitch_request_error(r));
    old = r;
    if ((st = stitch_request_free(r)) != STITCH_OK)
        return nb_fail(why, len, "rank %d: free: %s", me, stitch_strerror(st));
    if (stitch_request_free(r) != STITCH_ERR_INVALID_USAGE || stitch_wait(r) != STITCH_ERR_INVALID_USAGE ||
        stitch_test(r, &done) != STITCH_ERR_INVALID_USAGE || !strstr(stitch_request_error(r), "freed"))
        return nb_fail(why, len, "rank %d: a freed request is not refused with STITCH_ERR_INVALID_USAGE: %s", me,
                       stitch_request_error(r));
    /* the message names the call and rank, unless another rank's thread has reused and freed the slot since */
    char named[64];
    snprintf(named, sizeof named, "the request of stitch_iall_reduce on rank %d was freed", me);
    const char *text = stitch_request_error(r);
    if (!strstr(text, named) && !strstr(text, "served other requests since"))
        return nb_fail(why, len, "rank %d: the message of a freed request: %s", me, text);
    if (strstr(text, named) && (stitch_wait(r), !strstr(stitch_comm_last_error(comm), named)))
        return nb_fail(why, len, "rank %d: last_error after a wait on a freed request: %s", me,
                       stitch_comm_last_error(comm));
    /* the slot is reused: the old handle stays stale, the new one works */
    if ((st = stitch_ibarrier(comm, &r2)) != STITCH_OK || r2 == old || stitch_wait(old) != STITCH_ERR_INVALID_USAGE)
        return nb_fail(why, len, "rank %d: a reused slot: %s, same handle %d", me, stitch_strerror(st), r2 == old);
    stitch_request_t *mixed[3] = {r2, old, r2};
    if ((st = stitch_wait_all(3, mixed)) != STITCH_ERR_INVALID_USAGE || stitch_test(r2, &done) != STITCH_OK || !done)
        return nb_fail(why, len, "rank %d: wait_all over a freed handle gave %s, the good one done %d", me,
                       stitch_strerror(st), done);
    stitch_request_free(r2);
    r = NULL;
    stitch_group_start();
    st = stitch_iall_reduce(&x, &y, 1, STITCH_INT32, STITCH_SUM, comm, &r);
    stitch_group_end();
    if (st != STITCH_ERR_UNSUPPORTED || r != NULL || !strstr(stitch_comm_last_error(comm), "group"))
        return nb_fail(why, len, "rank %d: an i-call in a group gave %s: %s", me, stitch_strerror(st),
                       stitch_comm_last_error(comm));
    /* the argument error: rank 0's request fails with it; the others' (they made theirs) fail naming it */
    nb_call c[4];
    for (int k = 0; k < 4; k++)
        if (nb_make(&c[k], k, me, p) != 0)
            return nb_fail(why, len, "rank %d: out of memory", me);
    int32_t *kept = c[1].send;
    if (me == 0)
        c[1].send = NULL;
    for (int k = 0; k < 4 && !rc; k++)
        if ((st = nb_issue(&c[k], comm, &c[k].req)) != STITCH_OK)
            rc = nb_failed(comm, &c[k], st, "could not be made", why, len);
    for (int k = 0; k < 4 && !rc; k++) {
        st = stitch_wait(c[k].req);
        const char *msg = stitch_request_error(c[k].req);
        stitch_status_t want = k == 0                ? STITCH_OK
                               : me == 0 && k == 1 ? STITCH_ERR_INVALID_ARGUMENT
                                                   : STITCH_ERR_ABORTED;
        if (st != want || (k > 0 && !strstr(msg, "sendbuf is NULL")))
            rc = nb_fail(why, len, "rank %d: call %d around rank 0's argument error (call 1) gave %s, want %s: %s", me,
                         k, stitch_strerror(st), stitch_strerror(want), msg);
        else if (k > 0 && strcmp(stitch_comm_last_error(comm), msg) != 0)
            rc = nb_fail(why, len, "rank %d: last_error after a failed wait is '%s', not the request's '%s'", me,
                         stitch_comm_last_error(comm), msg);
    }
    c[1].send = kept;
    for (int k = 0; k < 4; k++)
        stitch_request_free(c[k].req), nb_free_call(&c[k]);
    /* a NULL req: refused, and the communicator is aborted (already, here) */
    if (!rc && stitch_iall_reduce(&x, &y, 1, STITCH_INT32, STITCH_SUM, comm, NULL) != STITCH_ERR_INVALID_ARGUMENT)
        rc = nb_fail(why, len, "rank %d: a NULL req is not refused", me);
    return rc;
}

/* stitch_comm_abort on the last rank while the others' requests are pending (or before they are made): every
 * request of every rank fails with STITCH_ERR_ABORTED and the abort's message. The aborting rank's own requests,
 * made after its abort, fail alike. Odd ranks destroy the communicator with their requests pending, before
 * waiting: destroy returns once they have failed. */
__attribute__((unused))
static int nb_abort(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 60 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0;
    char want[64];
    snprintf(want, sizeof want, "stitch_comm_abort was called on rank %d", p - 1);
    nb_call *calls = nb_calls(N, me, p);
    if (!calls)
        return nb_fail(why, len, "rank %d: out of memory", me);
    if (me == p - 1)
        stitch_comm_abort(comm);
    for (int k = 0; k < N && !rc; k++) {
        stitch_status_t st = nb_issue(&calls[k], comm, &calls[k].req);
        if (st != STITCH_OK)
            rc = nb_failed(comm, &calls[k], st, "could not be made", why, len);
    }
    stitch_status_t st = me % 2 ? stitch_comm_destroy(comm) : STITCH_OK;
    if (!rc && st != STITCH_OK)
        rc = nb_fail(why, len, "rank %d: destroy with requests pending on an aborted communicator: %s", me,
                     stitch_strerror(st));
    for (int k = 0; k < N && !rc; k++) {
        int done = -1;
        if (me % 2 && (stitch_test(calls[k].req, &done), done != 1))
            rc = nb_fail(why, len, "rank %d: call %d is pending after destroy", me, k);
        st = stitch_wait(calls[k].req);
        if (!rc && (st != STITCH_ERR_ABORTED || !strstr(stitch_request_error(calls[k].req), want)))
            rc = nb_fail(why, len, "rank %d call %d did not fail with the abort: %s: %s", me, k, stitch_strerror(st),
                         stitch_request_error(calls[k].req));
    }
    nb_free_calls(calls, N);
    return rc;
}

/* stitch_comm_destroy with requests pending: it waits for them; they complete with their data and are freed
 * after. The handle is then dead to new calls. */
__attribute__((unused))
static int nb_destroy(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 200 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0;
    nb_call *calls = nb_calls(N, me, p);
    stitch_request_t *reqs[N], *late = NULL;
    if (!calls)
        return nb_fail(why, len, "rank %d: out of memory", me);
    for (int k = 0; k < N && !rc; k++) {
        stitch_status_t st = nb_issue(&calls[k], comm, &calls[k].req);
        reqs[k] = calls[k].req;
        if (st != STITCH_OK)
            rc = nb_failed(comm, &calls[k], st, "could not be made", why, len);
    }
    stitch_status_t st = stitch_comm_destroy(comm);
    if (!rc && st != STITCH_OK)
        rc = nb_fail(why, len, "rank %d: destroy with pending requests: %s", me, stitch_strerror(st));
    for (int k = 0; k < N && !rc; k++) {
        int done = -1;
        if ((st = stitch_test(reqs[k], &done)) != STITCH_OK || done != 1)
            rc = nb_fail(why, len, "rank %d: call %d after destroy: %s, done %d: %s", me, k, stitch_strerror(st), done,
                         stitch_request_error(reqs[k]));
    }
    for (int k = 0; k < N && !rc; k++)
        rc = nb_check(&calls[k], me, p, why, len);
    if (!rc && (st = stitch_ibarrier(comm, &late)) != STITCH_ERR_INVALID_USAGE)
        rc = nb_fail(why, len, "rank %d: an i-call on a destroyed communicator gave %s", me, stitch_strerror(st));
    nb_free_calls(calls, N);
    return rc;
}

/* The last rank makes no call (it stays, silent): the others' requests fail once the timeout passes without
 * progress, the first with STITCH_ERR_TIMEOUT naming the silent rank, every later one with a message carrying it. */
__attribute__((unused))
static int nb_absent(stitch_comm_t *comm, char *why, size_t len)
{
    enum { N = 30 };
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm), rc = 0;
    char want[32];
    if (me == p - 1)
        return 0;
    snprintf(want, sizeof want, "rank %d", p - 1);
    nb_call *calls = nb_calls(N, me, p);
    if (!calls)
        return nb_fail(why, len, "rank %d: out of memory", me);
    stitch_request_t *reqs[N];
    for (int k = 0; k < N && !rc; k++) {
        stitch_status_t st = nb_issue(&calls[k], comm, &calls[k].req);
        reqs[k] = calls[k].req;
        if (st != STITCH_OK)
            rc = nb_failed(comm, &calls[k], st, "could not be made", why, len);
    }
    if (!rc && stitch_wait_all(N, reqs) == STITCH_OK)
        rc = nb_fail(why, len, "rank %d: every call succeeded without rank %d", me, p - 1);
    for (int k = 0; k < N && !rc; k++) {
        stitch_status_t st = stitch_wait(reqs[k]);
        const char *msg = stitch_request_error(reqs[k]);
        if (st == STITCH_OK || !strstr(msg, want) || (k > 0 && st != STITCH_ERR_ABORTED))
            rc = nb_failed(comm, &calls[k], st, "did not fail naming the silent rank", why, len);
    }
    nb_free_calls(calls, N);
    return rc;
}

#endif
