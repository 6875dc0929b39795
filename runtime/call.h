/* call.h - the call model (call.c): what one collective call is, for both executors (exec.c, exec_msg.c). */
#ifndef ST_CALL_H
#define ST_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "st_steptab.h"
#include "stitch.h"

typedef struct st_args {
    const char *fn; /* "stitch_all_reduce", for messages */
    stitch_coll_t coll;
    const void *send;
    void *recv;
    size_t count;
    stitch_dtype_t dtype;
    stitch_op_t op; /* ignored by the collectives that do not reduce */
    int root;       /* rooted collectives (broadcast, reduce, scatter, gather); 0 otherwise */
    const size_t *scounts, *sdispls, *rcounts, *rdispls; /* all_to_all_v, in elements; NULL otherwise */
} st_args;

/* What every rank must agree on for one collective call. */
typedef struct st_fingerprint {
    uint64_t seq;        /* collectives called on this communicator before this one */
    int32_t coll, dtype, op; /* op is -1 where the collective does not reduce */
    int32_t root;        /* -1 for collectives without a root */
    size_t count;        /* 0 for all_to_all_v, whose counts are checked pair by pair (exec.c) */
    const st_algo *algo;
} st_fingerprint;

/* Does the collective reduce (take an op)? */
int st_coll_reduces(stitch_coll_t coll);

/* A call's segments, for both executors: the elements of a block per segment (*seg) and their number, so that
 * one segment of all nblocks blocks holds about segment_bytes; one segment when the schedule has no steps, and
 * for all_to_all_v (its blocks differ in length, and the ranks could not agree on a count without talking). */
void st_call_segments(const st_args *a, size_t segment_bytes, int nblocks, int nsteps, size_t *seg, size_t *nseg);

/* Elements of a scratch unit's slot in segment k: the largest unit of that segment. */
size_t st_call_slot_len(const st_args *a, size_t seg, int units_per_block, size_t k);

/* Both executors' check of a peer's fingerprint: 0 when it equals mine, else 1 with the text of the first field
 * that differs on each side ("count 7", "algorithm ring"), in buffers of len bytes. */
int st_fp_differ(const st_fingerprint *mine, const st_fingerprint *theirs, char *mine_s, char *theirs_s, size_t len);

/* Check what the executors assume of a plan beyond st_sched_build's checks: within a step, no unit a rank sends
 * is also written into it by a receive or by its own `at` transfers (peers read while it writes; its own would
 * depend on their order), and no rank reduces a unit into itself without `at`.
 * Fills e->peers and the fresh tables. On failure explains in err. */
struct st_entry;
stitch_status_t st_exec_prepare_entry(struct st_entry *e, int rank, char *err, size_t errlen);

#endif
