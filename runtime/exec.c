/* exec.c - the executor: one rank runs its plan of a schedule for one collective call, threads transport.
 *
 * Model. Every rank sees the collective's vector as `nblocks` blocks (st_sched.h: 1, p or p * p) and keeps each block
 * it holds somewhere; where is the layout of the call (st_ctx_init), chosen so that data is copied as little as
 * possible:
 *   all_reduce, all_gather, broadcast     recvbuf (broadcast's root reads its sendbuf lazily, see below)
 *   reduce_scatter                        a scratch of p blocks; my block is copied to recvbuf at the end
 *   reduce                                root: recvbuf; others: a scratch, only when the plan receives into it
 *   scatter                               root: its sendbuf; others: a scratch of p blocks (only when they forward),
 *                                         except their own block, which is recvbuf itself
 *   gather                                root: recvbuf; others: a scratch (when they forward), their own block
 *                                         being their sendbuf
 *   all_to_all(_v)                        unit (i, j) = data from i to j: at rank x block (x, j) is in sendbuf
 *                                         (block j, or sdispls[j]), block (i, x) in recvbuf; (x, x) is copied by
 *                                         the runtime before the first step; other blocks have no storage
 * A slot publishes `work` (block b at work + b * count) and one exception `alt` (block alt_block lives there);
 * for all_to_all, `work` is the send buffer and `alt` the receive buffer. Which blocks of a rank are its
 * caller's input (read-only), its output, scratch or nothing is a function of (collective, p, root, rank)
 * alone (st_block_class in st_sched.c), so a plan is checked once when it enters the cache (st_rank_check, the
 * same check `stitchc verify` runs for every rank): it must never receive into an input block or into a block
 * without storage, and never send a block without storage; an all_to_all that forwards blocks through third
 * ranks parks them in scratch units (`units p * p scratch S`), else STITCH_ERR_UNSUPPORTED.
 *
 * A transfer (src, dst, units, copy|reduce) at step s is executed by its receiver, which reads the sender's
 * blocks directly (zero-copy pull) and copies or reduces into its own. Transfers into one rank within a step are
 * applied in schedule order, so the reduction order, hence the result bits, is fixed by the schedule alone.
 *
 * Protocol, per call, with `base` the value of every rank's counter when the call starts (the same on all ranks
 * because all run the same number of steps): publish the layout and the call's fingerprint, post base + 1;
 * check the fingerprint of every peer of the plan up front (not at first contact: a rank whose call has fewer
 * steps could otherwise leave a peer waiting for a step that never comes, instead of a prompt mismatch; a peer
 * that only sends to me may finish the call and publish the next one's fingerprint before I look, hence two
 * fingerprints per slot, by call parity);
 * then for each step g: (a) wait until the ranks that read from me at step
 * g - 1 have posted base + 1 + g (they are done reading, I may overwrite), (b) for each transfer into me wait for
 * its source to post base + 1 + g (its step g - 1 is complete, its data is the step's input) and apply it,
 * (c) post base + 2 + g. At the end wait for the last step's readers, so the caller may reuse its buffers.
 * all_to_all_v's counts differ per pair, so they are not in the fingerprint: a receiver checks its recvcounts[q]
 * against q's sendcounts[me] when it applies a transfer from q (q is inside the call then, its arrays valid).
 *
 * Failure. Every failure inside a call (timeout, mismatch, abort) aborts the job, and a rank whose call failed
 * returns only when no peer reads its buffers any more: a peer reads them (and the all_to_all_v arrays) only
 * under a borrow on the owner's slot, taken per transfer and refused once the job is aborted, and the failing
 * owner waits for the borrows to end (job.h). Its caller may then free the buffers at once. A rank that times
 * out names, besides the peer it waited for, the rank furthest behind by the progress every slot publishes.
 *
 * Scratch units and `at`. Units nunits .. nunits + nscratch - 1 (`units U scratch S`) are slots in a per-rank
 * area outside the vector (comm->units, grown per communicator, published as the slot's `units` so peers read
 * it zero-copy), each as large as the largest unit of the segment. A transfer with `at` reads its source units
 * and writes its destination units pairwise in order; it moves the vector unit's length when one side is a slot
 * and the slot's length between slots (a slot's tail past its data never reaches the vector). A local transfer
 * with `at` (Mesh's local reduce tree) is a real copy or reduce within my own storage, applied in schedule order
 * with my receives. A slot is never fresh: it starts empty and is only read after being written.
 *
 * Segments. A large vector is cut into segments (the same sub-range of every block) and the whole schedule runs
 * once per segment, so the data a step touches stays in cache; the global step number g runs over all
 * segments. Inputs copied in (all_gather's and gather's own block, all_to_all's (x, x)) for segment k + 1 are
 * copied just before the last step of segment k posts. all_to_all_v runs as one segment: its blocks have
 * different lengths and the ranks could not agree on a segment count without talking.
 *
 * Lazy input. When the caller's input is not already in the work buffer (all_reduce out of place,
 * reduce_scatter, reduce, broadcast's root out of place), it is never copied in as a whole. A rank publishes its
 * input pointer too; a unit that its owner has not yet written in the current segment ("fresh": known from the
 * schedule, precomputed per transfer) is read by peers straight from the owner's input, and the first reduction
 * into a fresh unit of mine reads my input directly (dst = input op peer). Only output units still fresh at the
 * end of a segment are copied. This saves a whole pass over the vector, most of the cost where memory bandwidth
 * is the limit. reduce_scatter copies its block out after the last wait, since recvbuf may lie inside sendbuf,
 * which peers may be reading; scatter's root copies its own block out then too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "reduce.h"
#include "registry.h"

/* One collective call in progress. */
typedef struct st_ctx {
    stitch_comm_t *comm;
    const st_args *a;
    const st_entry *e;
    st_reduce_fn kernel;
    st_reduce3_fn kernel3;
    size_t esize;
    char *work;         /* my blocks (see the layout above); NULL when the plan never needs them */
    const char *in;     /* lazy input: the caller's input, laid out as the work buffer; NULL when not lazy */
    char *alt;          /* block alt_block lives here instead */
    int alt_block;
    char *units;        /* the slots of scratch units; NULL when the schedule has none */
    size_t slot_stride; /* elements between slots: the largest unit of the first (largest) segment */
    int nunits;         /* vector units; unit u >= nunits is slot u - nunits */
    unsigned char *fresh;
    int nblocks, units_per_block, nsteps;
    int a2a;            /* all_to_all or all_to_all_v */
    size_t seg, nseg;   /* elements of a block per segment; segments */
    uint32_t base;
    st_deadline dl;
    st_fingerprint fp;
} st_ctx;

static const st_xfer *st_x(const st_ctx *c, int32_t i)
{
    return &c->e->sched.xfers[i];
}

static uint32_t st_total_steps(const st_ctx *c)
{
    return (uint32_t)(c->nseg * (size_t)c->nsteps);
}

/* ---- waiting, with the error message for each way a wait can end ---------------------------------------- */

static stitch_status_t st_wait_error(st_ctx *c, stitch_status_t st, int peer, uint32_t g, int sys_errno)
{
    stitch_comm_t *comm = c->comm;
    const char *fn = c->a->fn;
    int S = c->nsteps ? c->nsteps : 1;
    size_t seg = g / (uint32_t)S;
    int step = (int)(g % (uint32_t)S);
    if (st == STITCH_ERR_ABORTED)
        return st_comm_error(comm, st, "%s: communicator aborted while rank %d waited for rank %d at step %d "
                             "(segment %zu): %s", fn, comm->rank, peer, step, seg, st_job_reason(comm->job));
    char behind[200];
    if (st == STITCH_ERR_TIMEOUT) /* the peer I waited for may itself wait for a rank further behind */
        st_job_behind(comm->job, comm->rank, behind, sizeof behind);
    if (st == STITCH_ERR_TIMEOUT && g == 0)
        return st_comm_fail(comm, st, "%s: rank %d timed out after %d ms waiting for rank %d, which has not "
                            "entered this call (call number %llu); furthest behind: %s", fn, comm->rank,
                            comm->timeout_ms, peer, (unsigned long long)c->fp.seq, behind);
    if (st == STITCH_ERR_TIMEOUT)
        return st_comm_fail(comm, st, "%s: rank %d timed out after %d ms waiting for rank %d at step %d of %d "
                            "(segment %zu of %zu): the peer did not finish the step before; furthest behind: %s",
                            fn, comm->rank, comm->timeout_ms, peer, step, c->nsteps, seg, c->nseg, behind);
    return st_comm_fail(comm, st, "%s: rank %d: futex wait on rank %d's counter failed: %s", fn, comm->rank, peer,
                        strerror(sys_errno));
}

/* Wait for rank `peer` to post base + 1 + g. */
static stitch_status_t st_wait_peer(st_ctx *c, int peer, uint32_t g)
{
    int sys_errno = 0;
    stitch_status_t st = st_wait(c->comm->job, &c->comm->job->slots[peer], c->base + 1 + g, &c->dl, &sys_errno);
    return st == STITCH_OK ? st : st_wait_error(c, st, peer, g, sys_errno);
}

/* ---- fingerprints -------------------------------------------------------------------------------------- */

/* STITCH_OK when equal, else a mismatch naming the first differing field, lower rank first. */
static stitch_status_t st_fp_compare(st_ctx *c, int peer, const st_fingerprint *theirs)
{
    char mine_s[96], theirs_s[96];
    if (!st_fp_differ(&c->fp, theirs, mine_s, theirs_s, sizeof mine_s))
        return STITCH_OK;
    int me = c->comm->rank, lo = me < peer;
    return st_comm_fail(c->comm, STITCH_ERR_MISMATCH, "%s: rank %d has %s but rank %d has %s", c->a->fn,
                        lo ? me : peer, lo ? mine_s : theirs_s, lo ? peer : me, lo ? theirs_s : mine_s);
}

/* After an abort while checking: report a mismatch with any peer that has published this call, if there is one;
 * it explains the abort better than "aborted" (the rank that noticed first aborted the others). */
static stitch_status_t st_scan_mismatch(st_ctx *c, stitch_status_t st)
{
    const st_entry *e = c->e;
    for (int i = 0; i < e->npeers; i++) {
        st_slot *s = &c->comm->job->slots[e->peers[i]];
        uint32_t v = atomic_load_explicit(&s->posted, memory_order_acquire);
        if (st_reached(v, c->base + 1) && !st_reached(v, c->base + 1 + st_total_steps(c)) &&
            st_fp_compare(c, e->peers[i], &s->fp[c->fp.seq & 1]) != STITCH_OK)
            return STITCH_ERR_MISMATCH;
    }
    return st;
}

static stitch_status_t st_check_peers(st_ctx *c)
{
    const st_entry *e = c->e;
    for (int i = 0; i < e->npeers; i++) {
        int q = e->peers[i];
        stitch_status_t st = st_wait_peer(c, q, 0);
        if (st == STITCH_ERR_ABORTED)
            return st_scan_mismatch(c, st);
        if (st == STITCH_OK)
            st = st_fp_compare(c, q, &c->comm->job->slots[q].fp[c->fp.seq & 1]);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

/* ---- where blocks live ----------------------------------------------------------------------------------- */

/* Where rank x (whose slot is q) keeps block b; NULL when it keeps it nowhere (or nowhere yet: no scratch). */
static const char *st_block_at(const st_ctx *c, const st_slot *q, int x, int b)
{
    size_t es = c->esize, n = c->a->count, p = (size_t)c->comm->p;
    if (c->a2a) {
        size_t i = (size_t)b / p, j = (size_t)b % p;
        if (i == (size_t)x)
            return q->work + (q->sdispls ? q->sdispls[j] : j * n) * es;
        if (j == (size_t)x)
            return q->alt + (q->rdispls ? q->rdispls[i] : i * n) * es;
        return NULL;
    }
    if (q->alt && b == q->alt_block)
        return q->alt;
    return q->work ? q->work + (size_t)b * n * es : NULL;
}

/* Elements of block b that my unit-u data covers in segment k: [*off, *off + *len) from the block's start.
 * st_unit_span over the segment's blocks; units never straddle blocks. all_to_all_v's blocks have their own
 * lengths (my counts: the blocks I touch are my row and my column). */
static int st_span(const st_ctx *c, size_t k, int u, size_t *off, size_t *len)
{
    int b = u / c->units_per_block, me = c->comm->rank, p = c->comm->p;
    size_t n = c->a->count - k * c->seg, o;
    if (n > c->seg)
        n = c->seg;
    if (c->a->coll == STITCH_ALL_TO_ALL_V)
        n = b / p == me ? c->a->scounts[b % p] : b % p == me ? c->a->rcounts[b / p] : 0;
    st_unit_span(c->e->sched.nunits, c->nblocks, n, u, &o, len);
    *off = o - (size_t)b * n + k * c->seg;
    return b;
}

/* ---- moving data --------------------------------------------------------------------------------------- */

enum { ST_COPY, ST_REDUCE, ST_REDUCE_INPUT };

/* A contiguous piece of one transfer: len elements from src into dst. */
typedef struct st_piece {
    char *dst;
    const char *src;
    size_t len;
    int mode;
} st_piece;

static void st_move(const st_ctx *c, const st_piece *m)
{
    if (m->len == 0)
        return;
    if (m->mode == ST_COPY)
        memcpy(m->dst, m->src, m->len * c->esize);
    else if (m->mode == ST_REDUCE)
        c->kernel(m->dst, m->src, m->len);
    else /* lazy input is only used with a plain layout: my input sits at the same offset as the work buffer */
        c->kernel3(m->dst, c->in + (m->dst - c->work), m->src, m->len);
}

/* all_to_all_v: my recvcounts[q] must be q's sendcounts[me]. */
static stitch_status_t st_check_counts(st_ctx *c, int q, const st_slot *s)
{
    int me = c->comm->rank;
    size_t mine = c->a->rcounts[q], theirs = s->scounts[me];
    if (mine == theirs)
        return STITCH_OK;
    return st_comm_fail(c->comm, STITCH_ERR_MISMATCH, "%s: rank %d expects %zu elements from rank %d "
                        "(recvcounts[%d]) but rank %d sends it %zu (sendcounts[%d])", c->a->fn, me, mine, q, q, q,
                        theirs, me);
}

static size_t st_slot_len(const st_ctx *c, size_t k)
{
    return st_call_slot_len(c->a, c->seg, c->units_per_block, k);
}

/* Where unit u of rank x (whose slot is q) lies in segment k, and its length: a vector unit in its block, or in
 * x's input while it is still fresh there; a scratch unit in x's slots. */
static const char *st_unit_at(const st_ctx *c, size_t k, const st_slot *q, int x, int u, int fresh, size_t *len)
{
    size_t off, es = c->esize;
    if (u >= c->nunits) {
        *len = st_slot_len(c, k);
        return q->units + (size_t)(u - c->nunits) * c->slot_stride * es;
    }
    int b = st_span(c, k, u, &off, len);
    const char *base = fresh && q->input ? q->input + (size_t)b * c->a->count * es : st_block_at(c, q, x, b);
    return base + off * es;
}

/* Walks the units of runs [r0, ...) in order; the caller takes no more than the runs hold. */
typedef struct st_cursor {
    int32_t r, u;
} st_cursor;

static int32_t st_next_unit(const st_run *runs, st_cursor *cu)
{
    while (cu->u >= runs[cu->r].start + runs[cu->r].len)
        cu->u = runs[++cu->r].start;
    return cu->u++;
}

/* Elements a pair of units moves: the vector unit's when one side is a slot (a slot is as large as the largest
 * unit; it holds the data of the vector unit it was filled from, whose length the vector side knows); the
 * slot's for slot to slot (the tail past the data's own length is harmless: it never reaches the vector). */
static size_t st_pair_len(const st_ctx *c, int su, size_t slen, int du, size_t dlen)
{
    if (su < c->nunits && du < c->nunits)
        return slen < dlen ? slen : dlen;
    return su < c->nunits ? slen : dlen;
}

/* Apply transfer recvs[i] of my plan for segment k: source unit j of the transfer (read at its source, in my
 * storage for a local transfer) goes into destination unit j (`at`; the same units without it), merging adjacent
 * units read and written alike. */
static stitch_status_t st_apply(st_ctx *c, int32_t i, size_t k)
{
    const st_xfer *x = st_x(c, c->e->plan.recvs[i]);
    const st_run *runs = c->e->sched.runs;
    int me = c->comm->rank;
    const st_slot *q = &c->comm->job->slots[x->src], *mine = &c->comm->job->slots[me];
    const unsigned char *src_fresh = c->e->src_fresh + c->e->src_fresh_at[i];
    size_t es = c->esize;
    stitch_status_t st;
    if (c->a->coll == STITCH_ALL_TO_ALL_V && (st = st_check_counts(c, x->src, q)) != STITCH_OK)
        return st;
    if (x->nunits == 0)
        return STITCH_OK;
    st_piece run = {NULL, NULL, 0, ST_COPY};
    st_cursor from = {x->run0, runs[x->run0].start}, to = {x->drun0, runs[x->drun0].start};
    for (int32_t j = 0; j < x->nunits; j++) {
        int su = st_next_unit(runs, &from), du = st_next_unit(runs, &to), vec = du < c->nunits;
        int mode = x->op == ST_X_COPY ? ST_COPY : vec && c->in && c->fresh[du] ? ST_REDUCE_INPUT : ST_REDUCE;
        size_t slen, dlen;
        const char *src = st_unit_at(c, k, q, x->src, su, src_fresh[j], &slen);
        char *dst = (char *)st_unit_at(c, k, mine, me, du, 0, &dlen);
        size_t len = st_pair_len(c, su, slen, du, dlen);
        if (vec && c->in)
            c->fresh[du] = 0;
        if (len == 0)
            continue;
        if (run.len && dst == run.dst + run.len * es && src == run.src + run.len * es && mode == run.mode) {
            run.len += len;
            continue;
        }
        st_move(c, &run);
        run = (st_piece){dst, src, len, mode};
    }
    st_move(c, &run);
    return STITCH_OK;
}

/* st_apply of a transfer from a peer, whose buffers I may read only under a borrow on its slot (job.h): the
 * peer's call may have failed, and then it returns (and its caller frees the buffers) once no borrow is held. */
static stitch_status_t st_apply_borrowed(st_ctx *c, int32_t i, size_t k, int src, uint32_t g)
{
    st_slot *q = &c->comm->job->slots[src];
    if (st_slot_borrow(c->comm->job, q) != 0)
        return st_wait_error(c, STITCH_ERR_ABORTED, src, g, 0);
    stitch_status_t st = st_apply(c, i, k);
    st_slot_return(q);
    return st;
}

/* Lazy input: copy unit u of segment k in, unless it is there already. */
static void st_materialize(const st_ctx *c, size_t k, int u)
{
    size_t off, len;
    if (!c->fresh[u])
        return;
    c->fresh[u] = 0;
    int b = st_span(c, k, u, &off, &len);
    size_t at = ((size_t)b * c->a->count + off) * c->esize;
    memcpy(c->work + at, c->in + at, len * c->esize);
}

/* When the input is not lazy, my own input block goes where the layout keeps it, unless it is there already:
 * all_gather's and gather's root's block of the output, all_to_all's (me, me) from sendbuf to recvbuf. */
static void st_copy_in(const st_ctx *c, size_t k)
{
    const st_args *a = c->a;
    int me = c->comm->rank;
    size_t off = k * c->seg, n = a->count - off, es = c->esize;
    const char *src = NULL;
    char *dst = NULL;
    if (n > c->seg)
        n = c->seg;
    if (a->coll == STITCH_ALL_GATHER || (a->coll == STITCH_GATHER && me == a->root)) {
        src = (const char *)a->send + off * es;
        dst = c->work + ((size_t)me * a->count + off) * es;
    } else if (c->a2a) {
        const st_slot *s = &c->comm->job->slots[me];
        int b = me * c->comm->p + me;
        if (a->coll == STITCH_ALL_TO_ALL_V)
            n = a->scounts[me];
        src = st_block_at(c, s, me, b) + off * es;
        dst = a->coll == STITCH_ALL_TO_ALL_V ? c->alt + (a->rdispls[me] + off) * es
                                             : c->alt + ((size_t)me * a->count + off) * es;
    }
    if (src && src != dst && n)
        memcpy(dst, src, n * es);
}

/* After the last wait: reduce_scatter's block of the scratch to recvbuf (recvbuf may lie inside sendbuf, which
 * peers read fresh units from); scatter's root's own block, unless in place. */
static void st_copy_out(const st_ctx *c)
{
    const st_args *a = c->a;
    size_t bytes = a->count * c->esize, mine = (size_t)c->comm->rank * bytes;
    if (a->coll == STITCH_REDUCE_SCATTER)
        memcpy(a->recv, c->work + mine, bytes);
    if (a->coll == STITCH_SCATTER && c->comm->rank == a->root && (const char *)a->send + mine != a->recv)
        memcpy(a->recv, (const char *)a->send + mine, bytes);
}

static void st_begin_segment(const st_ctx *c, size_t k)
{
    if (c->in)
        memset(c->fresh, 1, (size_t)c->e->sched.nunits);
    else
        st_copy_in(c, k);
}

/* The output units still fresh get my input: all of all_reduce's, broadcast's and the root's of reduce; my block
 * of reduce_scatter's; none at the other ranks of reduce (they have no output). */
static void st_end_segment(const st_ctx *c, size_t k)
{
    if (!c->in)
        return;
    stitch_coll_t coll = c->a->coll;
    int me = c->comm->rank, first = 0, last = c->e->sched.nunits;
    if (coll == STITCH_REDUCE_SCATTER)
        first = me * c->units_per_block, last = first + c->units_per_block;
    if (coll == STITCH_REDUCE && me != c->a->root)
        last = 0;
    for (int u = first; u < last; u++)
        st_materialize(c, k, u);
}

/* ---- the step loop ------------------------------------------------------------------------------------- */

/* (a) of the protocol: the ranks that read from me at step `s` have posted base + 1 + target_g. */
static stitch_status_t st_wait_readers(st_ctx *c, int s, uint32_t target_g)
{
    const st_plan *pl = &c->e->plan;
    for (int32_t i = pl->send_first[s]; i < pl->send_first[s + 1]; i++) {
        int dst = st_x(c, pl->sends[i])->dst;
        stitch_status_t st = dst == c->comm->rank ? STITCH_OK : st_wait_peer(c, dst, target_g);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

static stitch_status_t st_step(st_ctx *c, size_t k, int s)
{
    const st_plan *pl = &c->e->plan;
    uint32_t g = (uint32_t)(k * (size_t)c->nsteps) + (uint32_t)s;
    stitch_status_t st = STITCH_OK;
    if (g > 0 && (st = st_wait_readers(c, (s + c->nsteps - 1) % c->nsteps, g)) != STITCH_OK)
        return st;
    for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++) {
        const st_xfer *x = st_x(c, pl->recvs[i]);
        int local = x->src == c->comm->rank;
        if (local && !st_xfer_mapped(x)) /* a copy onto itself (a reduce is refused when the plan is cached) */
            continue;
        if (local)
            st = st_apply(c, i, k);
        else if ((st = st_wait_peer(c, x->src, g)) == STITCH_OK)
            st = st_apply_borrowed(c, i, k, x->src, g);
        if (st != STITCH_OK)
            return st;
    }
    if (s == c->nsteps - 1) {
        st_end_segment(c, k);
        if (k + 1 < c->nseg)
            st_begin_segment(c, k + 1);
    }
    st_post(&c->comm->job->slots[c->comm->rank], c->base + 2 + g);
    return STITCH_OK;
}

/* A failed call returns only when no peer can read my buffers any more: the job is aborted (every failure in a
 * call aborts it; this makes sure), so no new borrow succeeds, and the current ones end. */
static stitch_status_t st_fail_call(st_ctx *c, stitch_status_t st)
{
    st_slot *me = &c->comm->job->slots[c->comm->rank];
    if (!st_job_aborted(c->comm->job))
        st_comm_tell(c->comm, st);
    st_slot_drain(me);
    return st;
}

static stitch_status_t st_run_steps(st_ctx *c)
{
    stitch_status_t st;
    if ((st = st_check_peers(c)) != STITCH_OK)
        return st;
    for (size_t k = 0; k < c->nseg; k++)
        for (int s = 0; s < c->nsteps; s++)
            if ((st = st_step(c, k, s)) != STITCH_OK)
                return st;
    if (c->nsteps == 0)
        st_end_segment(c, 0);
    else if ((st = st_wait_readers(c, c->nsteps - 1, st_total_steps(c))) != STITCH_OK)
        return st;
    st_copy_out(c);
    return STITCH_OK;
}

static stitch_status_t st_run_call(st_ctx *c)
{
    st_slot *me = &c->comm->job->slots[c->comm->rank];
    stitch_status_t st;
    atomic_store_explicit(&me->call_base, c->base, memory_order_relaxed); /* progress, for st_job_behind */
    atomic_store_explicit(&me->call_steps, st_total_steps(c), memory_order_relaxed);
    atomic_store_explicit(&me->calls, c->fp.seq + 1, memory_order_relaxed);
    me->work = c->work;
    me->input = c->in;
    me->alt = c->alt;
    me->alt_block = c->alt_block;
    me->units = c->units;
    me->scounts = c->a->scounts;
    me->sdispls = c->a->sdispls;
    me->rdispls = c->a->rdispls;
    me->fp[c->fp.seq & 1] = c->fp;
    st_begin_segment(c, 0);
    st_post(me, c->base + 1);
    st = st_run_steps(c);
    return st == STITCH_OK ? st : st_fail_call(c, st);
}

/* ---- setting up a call --------------------------------------------------------------------------------- */

/* A scratch of `blocks` blocks as the work buffer, when the plan receives into scratch at all. */
static stitch_status_t st_use_scratch(st_ctx *c, size_t blocks)
{
    if (!c->e->needs_scratch)
        return STITCH_OK;
    return st_comm_scratch(c->comm, blocks * c->a->count * c->esize, c->a->fn, &c->work);
}

/* Where my blocks live for this call (the table at the top of this file). */
static stitch_status_t st_layout(st_ctx *c)
{
    const st_args *a = c->a;
    int me = c->comm->rank, root = me == a->root;
    char *send = (char *)a->send; /* never written: st_exec_prepare_entry refuses plans that would */
    size_t p = (size_t)c->comm->p;
    switch (a->coll) {
    case STITCH_ALL_REDUCE: /* the vector; lazy out of place */
    case STITCH_BROADCAST:  /* the root lazy out of place; the others have no input */
        c->work = a->recv;
        c->in = (a->coll == STITCH_ALL_REDUCE || root) && a->send != a->recv ? a->send : NULL;
        return STITCH_OK;
    case STITCH_REDUCE_SCATTER:
        c->in = a->send;
        return st_comm_scratch(c->comm, p * a->count * c->esize, a->fn, &c->work);
    case STITCH_REDUCE: /* every rank's input is lazy; only the root has an output */
        c->in = root && a->send == a->recv ? NULL : a->send;
        if (root)
            c->work = a->recv;
        return root ? STITCH_OK : st_use_scratch(c, 1);
    case STITCH_SCATTER: /* the root's input is its blocks; the others' own block is their output */
        if (root)
            c->work = send;
        else
            c->alt = a->recv, c->alt_block = me;
        return root ? STITCH_OK : st_use_scratch(c, p);
    case STITCH_GATHER: /* the root's output is its blocks; the others' own block is their input */
        if (root)
            c->work = a->recv;
        else
            c->alt = send, c->alt_block = me;
        return root ? STITCH_OK : st_use_scratch(c, p);
    case STITCH_ALL_TO_ALL:
    case STITCH_ALL_TO_ALL_V:
        c->work = send, c->alt = a->recv, c->a2a = 1;
        return STITCH_OK;
    default: /* all_gather */
        c->work = a->recv;
        return STITCH_OK;
    }
}

static stitch_status_t st_ctx_init(st_ctx *c, stitch_comm_t *comm, const st_args *a, st_entry *e)
{
    memset(c, 0, sizeof *c);
    c->comm = comm, c->a = a, c->e = e;
    c->esize = stitch_dtype_size(a->dtype);
    int reduces = st_coll_reduces(a->coll), rooted = st_coll_rooted((int)a->coll);
    c->kernel = reduces ? st_reduce_kernel(a->dtype, a->op) : NULL;
    c->kernel3 = reduces ? st_reduce3_kernel(a->dtype, a->op) : NULL;
    c->fresh = e->fresh;
    c->alt_block = -1;
    c->nblocks = st_coll_nblocks(a->coll, comm->p);
    c->units_per_block = e->sched.nunits / c->nblocks;
    c->nsteps = e->sched.nsteps;
    c->base = comm->base;
    c->fp = (st_fingerprint){comm->seq, (int32_t)a->coll, (int32_t)a->dtype, reduces ? (int32_t)a->op : -1,
                             rooted ? a->root : -1, a->count, e->sched.algo};
    c->nunits = e->sched.nunits;
    st_call_segments(a, comm->segment_bytes, c->nblocks, c->nsteps, &c->seg, &c->nseg);
    st_deadline_start(&c->dl, comm->timeout_ms);
    stitch_status_t st = st_layout(c);
    if (st != STITCH_OK || e->sched.nscratch == 0)
        return st;
    c->slot_stride = st_slot_len(c, 0);
    return st_comm_units(comm, (size_t)e->sched.nscratch * c->slot_stride * c->esize, a->fn, &c->units);
}

stitch_status_t st_exec(stitch_comm_t *comm, const st_args *a)
{
    st_entry *e;
    st_ctx c;
    if (st_job_aborted(comm->job))
        return st_comm_error(comm, STITCH_ERR_ABORTED, "%s: communicator aborted earlier: %s", a->fn,
                             st_job_reason(comm->job));
    stitch_status_t st = st_comm_entry_for(comm, a, &e);
    if (st != STITCH_OK)
        return st;
    if (a->count == 0 && a->coll != STITCH_ALL_TO_ALL_V) { /* every rank agrees: nothing to do */
        comm->seq++;
        return STITCH_OK;
    }
    if ((st = st_ctx_init(&c, comm, a, e)) != STITCH_OK)
        return st;
    comm->seq++;
    if ((st = st_run_call(&c)) == STITCH_OK)
        comm->base = c.base + 1 + st_total_steps(&c);
    return st;
}
