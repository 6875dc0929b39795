/* split_body.h - what a rank checks of stitch_comm_split, stitch_comm_dup and stitch_barrier, shared by the threads
 * tests (tests/runtime/test_split.c) and the process tests (tests/proc/test_proc_split.c): each body runs on one
 * rank's parent communicator and returns 0, or 1 with why in `why`.
 */
#ifndef ST_TEST_SPLIT_BODY_H
#define ST_TEST_SPLIT_BODY_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_body.h"
#include "stitch.h"

#define sb_fail pb_fail /* one failure helper for both bodies */

/* An all_reduce of n int32 on comm where element i of rank r is tag * 1000 + i (tag: the caller's, the same as the
 * sum of the tags of all ranks in `want_tags`); checks every element. */
__attribute__((unused))
static int sb_allreduce(stitch_comm_t *comm, int tag, long want_tags, const char *what, char *why, size_t len)
{
    enum { N = 3000 };
    int32_t *v = malloc(sizeof *v * N);
    int p = stitch_comm_size(comm);
    for (int i = 0; i < N; i++)
        v[i] = tag * 1000 + i;
    stitch_status_t st = stitch_all_reduce(v, v, N, STITCH_INT32, STITCH_SUM, comm);
    int bad = -1;
    for (int i = 0; st == STITCH_OK && i < N && bad < 0; i++)
        if (v[i] != (int32_t)(want_tags * 1000 + (long)p * i))
            bad = i;
    int rc = st != STITCH_OK ? sb_fail(why, len, "%s: all_reduce: %s: %s", what, stitch_strerror(st),
                                       stitch_comm_last_error(comm))
             : bad >= 0 ? sb_fail(why, len, "%s: all_reduce element %d is %d, want %ld", what, bad, v[bad],
                                  want_tags * 1000 + (long)p * bad)
                        : 0;
    free(v);
    return rc;
}

/* Split p ranks by parity with keys that reverse the order (the last rank takes no part), split each half again,
 * dup the result, and check sizes, ranks and an all_reduce of each, a grouped ring exchange on the half; then a
 * barrier on every one of them. */
__attribute__((unused))
static int sb_split_nested(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm), p = stitch_comm_size(comm);
    int color = me == p - 1 ? STITCH_UNDEFINED : me % 2;
    stitch_comm_t *half = (stitch_comm_t *)1, *quarter = NULL, *dup = NULL;
    stitch_status_t st = stitch_comm_split(comm, color, -me, &half);
    if (st != STITCH_OK)
        return sb_fail(why, len, "split: %s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
    if (color == STITCH_UNDEFINED) { /* the parent's barrier and all_reduce, as the others at the end */
        if (half)
            return sb_fail(why, len, "rank %d gave STITCH_UNDEFINED but got a communicator", me);
        if (stitch_barrier(comm) != STITCH_OK)
            return sb_fail(why, len, "barrier: %s", stitch_comm_last_error(comm));
        return sb_allreduce(comm, me, (long)p * (p - 1) / 2, "parent after", why, len);
    }
    int n = 0, newrank = 0;
    long tags = 0;
    for (int r = 0; r < p - 1; r++)
        if (r % 2 == color)
            n++, newrank += r > me, tags += r;
    if (!half || stitch_comm_size(half) != n || stitch_comm_rank(half) != newrank)
        return sb_fail(why, len, "rank %d: half has size %d rank %d, want %d and %d", me, stitch_comm_size(half),
                       stitch_comm_rank(half), n, newrank);
    if (sb_allreduce(half, me, tags, "half", why, len))
        return 1;
    /* nested: the half's ranks by the parity of their new rank, in the half's order */
    if ((st = stitch_comm_split(half, newrank % 2, newrank, &quarter)) != STITCH_OK)
        return sb_fail(why, len, "nested split: %s: %s", stitch_strerror(st), stitch_comm_last_error(half));
    long qtags = 0;
    int qn = 0;
    for (int r = 0, k = n - 1; r < p - 1; r++)
        if (r % 2 == color) { /* parent rank r has new rank n - 1 - (its position), k counts down */
            int nr = k--;
            if (nr % 2 == newrank % 2)
                qtags += r, qn++;
        }
    if (stitch_comm_size(quarter) != qn || stitch_comm_rank(quarter) != newrank / 2)
        return sb_fail(why, len, "rank %d: quarter has size %d rank %d, want %d and %d", me, stitch_comm_size(quarter),
                       stitch_comm_rank(quarter), qn, newrank / 2);
    if ((st = stitch_comm_dup(quarter, &dup)) != STITCH_OK)
        return sb_fail(why, len, "dup: %s: %s", stitch_strerror(st), stitch_comm_last_error(quarter));
    if (stitch_comm_size(dup) != qn || stitch_comm_rank(dup) != newrank / 2)
        return sb_fail(why, len, "dup differs from its parent");
    if (sb_allreduce(dup, me, qtags, "dup", why, len) || sb_allreduce(quarter, me, qtags, "quarter", why, len))
        return 1;
    if (pb_ring(half, why, len)) /* point-to-point on a sub-communicator, in its own ranks */
        return 1;
    stitch_comm_t *all[4] = {dup, quarter, half, comm};
    for (int i = 0; i < 4; i++)
        if ((st = stitch_barrier(all[i])) != STITCH_OK)
            return sb_fail(why, len, "barrier %d: %s: %s", i, stitch_strerror(st), stitch_comm_last_error(all[i]));
    /* the parent first: a parent may go before its children */
    stitch_comm_destroy(half);
    stitch_comm_destroy(dup);
    stitch_comm_destroy(quarter);
    return sb_allreduce(comm, me, (long)p * (p - 1) / 2, "parent after", why, len);
}

/* The children take the parent's algorithm choice as it is now. */
__attribute__((unused))
static int sb_inherits_choice(stitch_comm_t *comm, char *why, size_t len)
{
    stitch_comm_t *sub = NULL;
    stitch_status_t st = stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, "ring");
    if (st == STITCH_OK)
        st = stitch_comm_split(comm, 0, 0, &sub);
    if (st != STITCH_OK)
        return sb_fail(why, len, "%s: %s", stitch_strerror(st), stitch_comm_last_error(comm));
    const char *a = stitch_comm_algorithm(sub, STITCH_ALL_REDUCE);
    long p = stitch_comm_size(comm);
    int rc = !a || strcmp(a, "ring") != 0
                 ? sb_fail(why, len, "the child's all_reduce is '%s', not ring", a ? a : "(null)")
                 : sb_allreduce(sub, stitch_comm_rank(comm), p * (p - 1) / 2, "inherited ring", why, len);
    stitch_comm_destroy(sub);
    return rc;
}

/* Participation mismatch: every rank but `odd` splits, `odd` calls stitch_barrier instead (or nothing, when
 * `absent`): every splitting rank fails within the timeout, its message saying stitch_comm_split and naming odd. */
__attribute__((unused))
static int sb_mismatch(stitch_comm_t *comm, int odd, int absent, char *why, size_t len)
{
    int me = stitch_comm_rank(comm);
    char want[32];
    snprintf(want, sizeof want, "rank %d", odd);
    if (me == odd)
        return absent ? 0 : (stitch_barrier(comm), 0);
    stitch_comm_t *sub = NULL;
    stitch_status_t st = stitch_comm_split(comm, 0, me, &sub);
    const char *msg = stitch_comm_last_error(comm);
    if (st == STITCH_OK || sub)
        return sb_fail(why, len, "rank %d: split succeeded without rank %d", me, odd);
    if (!strstr(msg, "stitch_comm_split") || !strstr(msg, want))
        return sb_fail(why, len, "rank %d: %s: message does not say stitch_comm_split and %s: %s", me,
                       stitch_strerror(st), want, msg);
    return 0;
}

#endif
