/* call.h - the call model (call.c): what one collective call is, for both executors (exec.c, exec_msg.c). */
#ifndef ST_CALL_H
#define ST_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reduce.h"
#include "st_sched.h"
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
    size_t count;        /* 0 for all_to_all_v, whose counts each engine checks pair by pair */
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

/* ---- one call in progress ------------------------------------------------------------------------------------
 * Every rank sees the collective's vector as `nblocks` blocks (st_sched.h: 1, p or p * p) of `count` elements,
 * cut into units; scratch units (`units U scratch S`) are slots outside the vector. Where a rank keeps its blocks
 * for the call is an st_where: the threads engine publishes its own in its slot (peers read through it), the
 * message engine keeps it for itself. Block, unit and pair addresses are functions of an st_where and the call. */

/* Where a rank's blocks are for the current call. */
typedef struct st_where {
    const char *work;      /* block b at work + b * count; NULL when the plan never needs them */
    const char *input;     /* lazy input: the caller's input laid out as `work`, read for units still fresh;
                            * NULL when the input is not lazy */
    const char *alt;       /* block alt_block lives here, not in work (all_to_all: the recv buffer); NULL: none */
    int32_t alt_block;
    const char *units;     /* scratch unit nunits + i at units + i * slot_stride elements; NULL: no scratch */
    const size_t *scounts, *sdispls, *rdispls; /* all_to_all_v: the caller's arrays, in elements */
} st_where;

struct st_entry;

/* The call as both engines see it: arguments, schedule, where my blocks are, the current segment's geometry. */
typedef struct st_call {
    stitch_comm_t *comm;
    const st_args *a;
    const struct st_entry *e;
    const st_sched *sched;
    st_reduce_fn kernel;    /* reducing collectives; NULL otherwise */
    st_reduce3_fn kernel3;
    size_t esize;
    int me, p;
    int nunits;             /* vector units; unit u >= nunits is slot u - nunits */
    int nblocks, units_per_block, nsteps;
    int a2a;                /* all_to_all(_v): my row in sendbuf (work), my column in recvbuf (alt) */
    size_t seg, nseg;       /* elements of a block per segment; segments */
    size_t slot_stride;     /* elements between slots: the largest unit of the first (largest) segment */
    st_where mine;
    unsigned char *fresh;   /* per vector unit, while mine.input: my unit still holds only my input (this segment) */
    size_t k;               /* the current segment (st_call_geometry), and its geometry: */
    const size_t *geo;      /* vector unit u's offset from its block's start at geo[2u], its elements at geo[2u+1] */
    size_t slot_len;        /* a slot's elements in this segment */
    st_fingerprint fp;
    struct st_recorder *rec; /* set: moves are handed to it, not made (the device engine's, device/dev_prog.c) */
} st_call;

/* A recorder of the call model's moves: the device engine records a rank's program with one (device/dev_prog.c).
 * The hook points down from the device layer to here, so the call model knows no engine. */
typedef struct st_recorder {
    void (*move)(struct st_recorder *r, int op, char *dst, const char *in, const char *src, size_t n);
} st_recorder;

/* Start a call on comm: its plan (instantiated on first use, st_comm_entry_for), the call model set up (sizes,
 * kernels, segments, fingerprint, where my blocks are, the slots of scratch units), the call counted in comm->seq.
 * STITCH_OK with c->e NULL when there is nothing to do (count 0: every rank agrees without talking). On failure
 * the message is recorded and the call is not counted. */
stitch_status_t st_call_open(st_call *c, stitch_comm_t *comm, const st_args *a);

/* Segment k becomes the current one: its geometry (computed once per segment rather than on every access: the
 * divisions were 28% of an 8-byte all_reduce's profile in process mode), then my units all fresh again (lazy
 * input), or else my own input block's part of the segment copied in where the layout keeps it. */
void st_call_segment_begin(st_call *c, size_t k);

/* The end of the current segment: the output units still fresh get my input (all of all_reduce's, broadcast's
 * and the root's of reduce; my block of reduce_scatter's; none at the other ranks of reduce: no output). */
void st_call_segment_end(st_call *c);

/* After the last step (threads: after the last readers are done): reduce_scatter's block of the scratch to
 * recvbuf (recvbuf may lie inside sendbuf, which peers read fresh units from); scatter's root's own block, unless
 * in place. */
void st_call_finish(const st_call *c);

/* Where rank x keeps block b by its st_where w; NULL when it keeps it nowhere (or nowhere yet: no scratch). */
static inline const char *st_block_in(const st_call *c, const st_where *w, int x, int b)
{
    size_t es = c->esize, n = c->a->count, p = (size_t)c->p;
    if (c->a2a) {
        size_t i = (size_t)b / p, j = (size_t)b % p;
        if (i == (size_t)x)
            return w->work + (w->sdispls ? w->sdispls[j] : j * n) * es;
        if (j == (size_t)x)
            return w->alt + (w->rdispls ? w->rdispls[i] : i * n) * es;
        return NULL;
    }
    if (w->alt && b == w->alt_block)
        return w->alt;
    return w->work ? w->work + (size_t)b * n * es : NULL;
}

/* Elements of unit u in the current segment and (vector units) its offset from its block's start; units never
 * straddle blocks. all_to_all_v's blocks have my counts: the blocks I touch are my row and my column. */
static inline size_t st_unit_len(const st_call *c, int u, size_t *off)
{
    if (u >= c->nunits) {
        *off = 0;
        return c->slot_len;
    }
    *off = c->geo[2 * u];
    return c->geo[2 * u + 1];
}

/* Where unit u (offset off, from st_unit_len) of rank x lies by its st_where w: a vector unit in its block, or in
 * x's input while it is still `fresh` there; a scratch unit in x's slots. NULL where x keeps it nowhere. */
static inline const char *st_unit_in(const st_call *c, const st_where *w, int x, int u, size_t off, int fresh)
{
    if (u >= c->nunits)
        return w->units + (size_t)(u - c->nunits) * c->slot_stride * c->esize;
    int b = u / c->units_per_block;
    if (fresh && w->input)
        return w->input + ((size_t)b * c->a->count + off) * c->esize;
    const char *base = st_block_in(c, w, x, b);
    return base ? base + off * c->esize : NULL;
}

/* Unit u of mine, where I write it (the plan never writes an input block: st_rank_check). */
static inline char *st_unit_mine(const st_call *c, int u, size_t off)
{
    return (char *)st_unit_in(c, &c->mine, c->me, u, off, 0);
}

/* Unit u of mine as a source: my input while the unit is fresh (lazy input), else my storage. */
static inline const char *st_unit_src(const st_call *c, int u, size_t off)
{
    return st_unit_in(c, &c->mine, c->me, u, off, c->mine.input && u < c->nunits && c->fresh[u]);
}

/* A reduce into my unit du (offset off) while it is fresh reads my input there (dst = input op src: one pass
 * instead of a copy and a reduce): that input, or NULL. */
static inline const char *st_fresh_input(const st_call *c, int du, size_t off)
{
    if (!c->mine.input || du >= c->nunits || !c->fresh[du])
        return NULL;
    return c->mine.input + ((size_t)(du / c->units_per_block) * c->a->count + off) * c->esize;
}

/* My unit du has been written: it holds data of this segment now. */
static inline void st_unit_written(st_call *c, int du)
{
    if (c->mine.input && du < c->nunits)
        c->fresh[du] = 0;
}

/* The pairs of units a transfer moves: its source unit su goes to its destination unit du (the same unit without
 * `at`); sr and dr are their runs. `left` counts the pairs still to move, the current one included: 0 at the end. */
typedef struct st_pcur {
    int32_t sr, su, dr, du, left;
} st_pcur;

static inline void st_pcur_settle(const st_run *runs, int32_t *r, int32_t *u)
{
    while (*u >= runs[*r].start + runs[*r].len)
        *u = runs[++*r].start;
}

static inline void st_pairs_begin(const st_call *c, const st_xfer *x, st_pcur *pc)
{
    const st_run *runs = c->sched->runs;
    *pc = (st_pcur){x->run0, 0, x->drun0, 0, x->nunits};
    if (pc->left == 0)
        return;
    pc->su = runs[x->run0].start, pc->du = runs[x->drun0].start;
    st_pcur_settle(runs, &pc->sr, &pc->su);
    st_pcur_settle(runs, &pc->dr, &pc->du);
}

/* Move to the next pair; 0 past the last. */
static inline int st_pairs_next(const st_call *c, st_pcur *pc)
{
    const st_run *runs = c->sched->runs;
    if (pc->left == 0 || --pc->left == 0)
        return 0;
    pc->su++, pc->du++;
    st_pcur_settle(runs, &pc->sr, &pc->su);
    st_pcur_settle(runs, &pc->dr, &pc->du);
    return 1;
}

/* Elements the current pair moves in the current segment, and its units' offsets: the vector unit's length when
 * one side is a slot (a slot is as large as the largest unit; it holds the data of the vector unit it was filled
 * from, whose length the vector side knows); the slot's between slots (the tail past the data's own length is
 * harmless: it never reaches the vector). Sender and receiver compute the same lengths: they depend on the
 * schedule and the call only (all_to_all_v, whose blocks have per-pair lengths, has no scratch units). */
static inline size_t st_pair_len(const st_call *c, const st_pcur *pc, size_t *soff, size_t *doff)
{
    size_t slen = st_unit_len(c, pc->su, soff), dlen = st_unit_len(c, pc->du, doff);
    int svec = pc->su < c->nunits, dvec = pc->du < c->nunits;
    return svec && dvec ? (slen < dlen ? slen : dlen) : svec ? slen : dlen;
}

/* Elements transfer x moves in the current segment: what its message carries. */
size_t st_call_xfer_len(const st_call *c, const st_xfer *x);

/* Apply n elements at src to dst: a copy, a reduce, or (in not NULL: dst is fresh) dst = in op src; st_call_move
 * hands it to the call's recorder where there is one (the recorders make it with st_call_move_now, or not at all). */
static inline void st_call_move_now(const st_call *c, int op, char *dst, const char *in, const char *src, size_t n)
{
    if (op == ST_X_COPY)
        memcpy(dst, src, n * c->esize);
    else if (in)
        c->kernel3(dst, in, src, n);
    else
        c->kernel(dst, src, n);
}

static inline void st_call_move(const st_call *c, int op, char *dst, const char *in, const char *src, size_t n)
{
    if (n == 0)
        return;
    if (c->rec)
        c->rec->move(c->rec, op, dst, in, src, n);
    else
        st_call_move_now(c, op, dst, in, src, n);
}

#endif
