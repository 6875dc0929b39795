/* call.c - the call model both executors run: one collective call as blocks, units, segments and pairs.
 *
 * The threads executor (exec.c: peers' memory read in place under borrows) and the message executor (exec_msg.c:
 * byte streams over shm or tcp) are two progress engines over this model; what a call is does not depend on how
 * its bytes travel, so every layout or geometry fix is made here, once.
 *
 * Model. Every rank sees the collective's vector as `nblocks` blocks (st_sched.h: 1, p or p * p) and keeps each
 * block it holds somewhere; where is the layout of the call (st_layout), chosen so that data is copied as little
 * as possible:
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
 * The layout is an st_where: `work` (block b at work + b * count) and one exception `alt` (block alt_block lives
 * there); for all_to_all, `work` is the send buffer and `alt` the receive buffer. The threads engine publishes
 * its st_where in its slot and peers address my blocks through it; the message engine keeps it for itself. One
 * table serves both: the message engine could copy its inputs in (no peer reads its memory), but the lazy policy
 * costs it nothing and saves broadcast's root and reduce a pass over the input. Which blocks of a rank are its
 * caller's input (read-only), its output, scratch or nothing is a function of (collective, p, root, rank) alone
 * (st_block_class in st_sched.c), so a plan is checked once when it enters the cache (st_exec_prepare_entry:
 * st_rank_check, the same check `stitchc verify` runs for every rank): it must never receive into an input block
 * or into a block without storage, and never send a block without storage; an all_to_all that forwards blocks
 * through third ranks parks them in scratch units (`units p * p scratch S`), else STITCH_ERR_UNSUPPORTED.
 *
 * Scratch units and `at`. Units nunits .. nunits + nscratch - 1 (`units U scratch S`) are slots in a per-rank
 * area outside the vector (comm->units, grown per communicator), each as large as the largest unit of the
 * segment. A transfer moves pairs of units (st_pcur): source unit j goes to destination unit j (`at`; the same
 * units without it); a pair moves the vector unit's length when one side is a slot and the slot's length between
 * slots (st_pair_len; a slot's tail past its data never reaches the vector). A slot is never fresh: it starts
 * empty and is only read after being written.
 *
 * Segments. A large vector is cut into segments (the same sub-range of every block) and the whole schedule runs
 * once per segment, so the data a step touches stays in cache. Each segment's unit geometry (offsets and lengths)
 * is computed once, when the segment begins, into a table kept in the plan's entry. all_to_all_v runs as one
 * segment: its blocks have different lengths and the ranks could not agree on a segment count without talking.
 *
 * Lazy input. When the caller's input is not already in the work buffer (all_reduce out of place,
 * reduce_scatter, reduce, broadcast's root out of place), it is never copied in as a whole: st_where.input says
 * where it is, laid out as the work buffer. A unit not yet written in the current segment ("fresh") is read from
 * the input (by the threads engine's peers: known from the schedule, precomputed per transfer in src_fresh), and
 * the first reduction into a fresh unit reads the input directly (dst = input op peer). Only output units still
 * fresh at the end of a segment are copied. This saves a whole pass over the vector, most of the cost where
 * memory bandwidth is the limit. reduce_scatter copies its block out at the end (threads: after the last wait,
 * since recvbuf may lie inside sendbuf, which peers may be reading); scatter's root copies its own block out too.
 *
 * Threads are not a transport of transport.h. The threads engine pulls a peer's units in place, under a borrow
 * on the peer's slot, and reduces straight from them; a byte-stream transport (send/peek/consume) cannot express
 * that without a copy per transfer, and shm already gives processes the streamed path. A future threads transport
 * would use the one-sided interface of the plug-in table (writes into registered memory); the call model here is
 * what both would share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"

int st_coll_reduces(stitch_coll_t coll)
{
    return coll == STITCH_ALL_REDUCE || coll == STITCH_REDUCE_SCATTER || coll == STITCH_REDUCE;
}

void st_call_segments(const st_args *a, size_t segment_bytes, int nblocks, int nsteps, size_t *seg, size_t *nseg)
{
    size_t per_block = segment_bytes / ((size_t)nblocks * stitch_dtype_size(a->dtype));
    if (per_block == 0)
        per_block = 1;
    *seg = a->count, *nseg = 1;
    if (nsteps > 0 && a->count > per_block && a->coll != STITCH_ALL_TO_ALL_V) {
        *seg = per_block;
        *nseg = (a->count + per_block - 1) / per_block;
    }
}

/* Elements of the largest unit of segment k: the size of a scratch unit's slot in that segment. */
size_t st_call_slot_len(const st_args *a, size_t seg, int units_per_block, size_t k)
{
    size_t n = a->count - k * seg;
    if (n > seg)
        n = seg;
    return (n + (size_t)units_per_block - 1) / (size_t)units_per_block;
}

/* ---- one call in progress ------------------------------------------------------------------------------- */

static void st_call_init(st_call *c, stitch_comm_t *comm, const st_args *a, const st_entry *e)
{
    int reduces = st_coll_reduces(a->coll), rooted = st_coll_rooted((int)a->coll);
    c->comm = comm, c->a = a, c->e = e, c->sched = &e->sched;
    c->me = comm->rank, c->p = comm->p;
    c->esize = stitch_dtype_size(a->dtype);
    c->kernel = reduces ? st_reduce_kernel(a->dtype, a->op) : NULL;
    c->kernel3 = reduces ? st_reduce3_kernel(a->dtype, a->op) : NULL;
    c->fresh = e->fresh;
    c->geo = e->geo;
    c->mine.alt_block = -1;
    c->mine.scounts = a->scounts, c->mine.sdispls = a->sdispls, c->mine.rdispls = a->rdispls;
    c->nunits = e->sched.nunits;
    c->nblocks = st_coll_nblocks(a->coll, comm->p);
    c->units_per_block = e->sched.nunits / c->nblocks;
    c->nsteps = e->sched.nsteps;
    c->a2a = a->coll == STITCH_ALL_TO_ALL || a->coll == STITCH_ALL_TO_ALL_V;
    c->fp = (st_fingerprint){comm->seq, (int32_t)a->coll, (int32_t)a->dtype, reduces ? (int32_t)a->op : -1,
                             rooted ? a->root : -1, a->count, e->sched.algo};
    st_call_segments(a, comm->segment_bytes, c->nblocks, c->nsteps, &c->seg, &c->nseg);
}

static stitch_status_t st_call_units(st_call *c)
{
    if (c->sched->nscratch == 0)
        return STITCH_OK;
    char *units;
    c->slot_stride = st_call_slot_len(c->a, c->seg, c->units_per_block, 0);
    stitch_status_t st = st_comm_units(c->comm, (size_t)c->sched->nscratch * c->slot_stride * c->esize, c->a->fn,
                                       &units);
    c->mine.units = units;
    return st;
}

static void st_call_geometry(st_call *c, size_t k)
{
    size_t *geo = c->e->geo, n = c->a->count - k * c->seg;
    if (n > c->seg)
        n = c->seg;
    c->k = k;
    c->slot_len = st_call_slot_len(c->a, c->seg, c->units_per_block, k);
    for (int u = 0; u < c->nunits; u++) {
        size_t nb = n, o, len;
        int b = u / c->units_per_block;
        if (c->a->coll == STITCH_ALL_TO_ALL_V)
            nb = b / c->p == c->me ? c->a->scounts[b % c->p] : b % c->p == c->me ? c->a->rcounts[b / c->p] : 0;
        st_unit_span(c->nunits, c->nblocks, nb, u, &o, &len);
        geo[2 * u] = o - (size_t)b * nb + k * c->seg;
        geo[2 * u + 1] = len;
    }
}

size_t st_call_xfer_len(const st_call *c, const st_xfer *x)
{
    size_t total = 0, soff, doff;
    st_pcur pc;
    for (st_pairs_begin(c, x, &pc); pc.left; st_pairs_next(c, &pc))
        total += st_pair_len(c, &pc, &soff, &doff);
    return total;
}

/* ---- the layout: where my blocks are ---------------------------------------------------------------------- */

/* A scratch of `blocks` blocks as the work buffer. */
static stitch_status_t st_scratch(st_call *c, size_t blocks)
{
    char *work = NULL;
    stitch_status_t st = st_comm_scratch(c->comm, blocks * c->a->count * c->esize, c->a->fn, &work);
    c->mine.work = work;
    return st;
}

/* The same, when the plan receives into scratch at all. */
static stitch_status_t st_use_scratch(st_call *c, size_t blocks)
{
    return c->e->needs_scratch ? st_scratch(c, blocks) : STITCH_OK;
}

/* Where my blocks live for this call: the table at the top of this file. */
static stitch_status_t st_layout(st_call *c)
{
    const st_args *a = c->a;
    int me = c->me, root = me == a->root;
    size_t p = (size_t)c->p;
    st_where *w = &c->mine;
    switch (a->coll) {
    case STITCH_ALL_REDUCE: /* the vector; lazy out of place */
    case STITCH_BROADCAST:  /* the root lazy out of place; the others have no input */
        w->work = a->recv;
        w->input = (a->coll == STITCH_ALL_REDUCE || root) && a->send != a->recv ? a->send : NULL;
        return STITCH_OK;
    case STITCH_REDUCE_SCATTER:
        w->input = a->send;
        return st_scratch(c, p);
    case STITCH_REDUCE: /* every rank's input is lazy; only the root has an output */
        w->input = root && a->send == a->recv ? NULL : a->send;
        if (root)
            w->work = a->recv;
        return root ? STITCH_OK : st_use_scratch(c, 1);
    case STITCH_SCATTER: /* the root's input is its blocks; the others' own block is their output */
        if (root)
            w->work = a->send;
        else
            w->alt = a->recv, w->alt_block = me;
        return root ? STITCH_OK : st_use_scratch(c, p);
    case STITCH_GATHER: /* the root's output is its blocks; the others' own block is their input */
        if (root)
            w->work = a->recv;
        else
            w->alt = a->send, w->alt_block = me;
        return root ? STITCH_OK : st_use_scratch(c, p);
    case STITCH_ALL_TO_ALL:
    case STITCH_ALL_TO_ALL_V:
        w->work = a->send, w->alt = a->recv;
        return STITCH_OK;
    default: /* all_gather */
        w->work = a->recv;
        return STITCH_OK;
    }
}

/* When the input is not lazy, my own input block of segment k goes where the layout keeps it, unless it is there
 * already: all_gather's and gather's root's block of the output, all_to_all's (me, me) from sendbuf to recvbuf. */
static void st_copy_in(const st_call *c, size_t k)
{
    const st_args *a = c->a;
    int me = c->me;
    size_t off = k * c->seg, n = a->count - off, es = c->esize;
    const char *src = NULL;
    char *dst = NULL;
    if (n > c->seg)
        n = c->seg;
    if (a->coll == STITCH_ALL_GATHER || (a->coll == STITCH_GATHER && me == a->root)) {
        src = (const char *)a->send + off * es;
        dst = (char *)c->mine.work + ((size_t)me * a->count + off) * es;
    } else if (c->a2a) {
        if (a->coll == STITCH_ALL_TO_ALL_V)
            n = a->scounts[me];
        src = st_block_in(c, &c->mine, me, me * c->p + me) + off * es; /* my row's (me, me): in sendbuf */
        dst = (char *)c->mine.alt + ((a->rdispls ? a->rdispls[me] : (size_t)me * a->count) + off) * es;
    }
    if (src && src != dst && n)
        st_call_move(c, ST_X_COPY, dst, NULL, src, n);
}

void st_call_segment_begin(st_call *c, size_t k)
{
    st_call_geometry(c, k);
    if (c->mine.input)
        memset(c->fresh, 1, (size_t)c->nunits);
    else
        st_copy_in(c, k);
}

void st_call_segment_end(st_call *c)
{
    if (!c->mine.input)
        return;
    stitch_coll_t coll = c->a->coll;
    int first = 0, last = c->nunits;
    if (coll == STITCH_REDUCE_SCATTER)
        first = c->me * c->units_per_block, last = first + c->units_per_block;
    if (coll == STITCH_REDUCE && c->me != c->a->root)
        last = 0;
    for (int u = first; u < last; u++) {
        size_t off, len = st_unit_len(c, u, &off);
        if (c->fresh[u] && len)
            st_call_move(c, ST_X_COPY, st_unit_mine(c, u, off), NULL, st_unit_src(c, u, off), len);
        c->fresh[u] = 0;
    }
}

void st_call_finish(const st_call *c)
{
    const st_args *a = c->a;
    size_t bytes = a->count * c->esize, mine = (size_t)c->me * bytes;
    if (a->coll == STITCH_REDUCE_SCATTER)
        st_call_move(c, ST_X_COPY, a->recv, NULL, c->mine.work + mine, a->count);
    if (a->coll == STITCH_SCATTER && c->me == a->root && (const char *)a->send + mine != a->recv)
        st_call_move(c, ST_X_COPY, a->recv, NULL, (const char *)a->send + mine, a->count);
}

stitch_status_t st_call_open(st_call *c, stitch_comm_t *comm, const st_args *a)
{
    st_entry *e;
    memset(c, 0, sizeof *c);
    stitch_status_t st = st_comm_entry_for(comm, a, &e);
    if (st != STITCH_OK)
        return st;
    if (a->count == 0 && a->coll != STITCH_ALL_TO_ALL_V) { /* every rank agrees: nothing to do */
        comm->seq++;
        return STITCH_OK;
    }
    st_call_init(c, comm, a, e);
    if ((st = st_layout(c)) != STITCH_OK || (st = st_call_units(c)) != STITCH_OK)
        return st;
    comm->seq++;
    return STITCH_OK;
}

/* ---- fingerprints -------------------------------------------------------------------------------------- */

/* Text of field `i` of a fingerprint; 0 past the last field. */
static int st_fp_field(const st_fingerprint *f, int i, char *buf, size_t len)
{
    switch (i) {
    case 0: snprintf(buf, len, "call number %llu", (unsigned long long)f->seq); return 1;
    case 1: snprintf(buf, len, "collective %s", stitch_coll_name((stitch_coll_t)f->coll)); return 1;
    case 2: snprintf(buf, len, "count %zu", f->count); return 1;
    case 3: snprintf(buf, len, "dtype %s", stitch_dtype_name((stitch_dtype_t)f->dtype)); return 1;
    case 4: snprintf(buf, len, "op %s", f->op < 0 ? "none" : stitch_op_name((stitch_op_t)f->op)); return 1;
    case 5:
        if (f->root < 0)
            snprintf(buf, len, "no root");
        else
            snprintf(buf, len, "root %d", (int)f->root);
        return 1;
    case 6: /* last: auto's choice follows the count */
        snprintf(buf, len, "algorithm %s", f->algo ? f->algo->name : "?");
        return 1;
    default: return 0;
    }
}

int st_fp_differ(const st_fingerprint *mine, const st_fingerprint *theirs, char *mine_s, char *theirs_s, size_t len)
{
    /* the text only when something differs: formatting every field cost ~1 us per peer on every call */
    if (mine->seq == theirs->seq && mine->coll == theirs->coll && mine->count == theirs->count &&
        mine->dtype == theirs->dtype && mine->op == theirs->op && mine->root == theirs->root &&
        mine->algo == theirs->algo)
        return 0;
    for (int i = 0; st_fp_field(mine, i, mine_s, len); i++) {
        st_fp_field(theirs, i, theirs_s, len);
        if (strcmp(mine_s, theirs_s) != 0 || (i == 6 && mine->algo != theirs->algo))
            return 1;
    }
    return 0;
}

