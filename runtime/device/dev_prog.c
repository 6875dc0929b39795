/* dev_prog.c - a rank's program for one call: its plan walked with the call model, in exec.c's order, recorded.
 *
 * Nothing is re-derived: the call is opened with st_call_open (the same entry, layout, segments and fresh state
 * as the threads engine), its moves of my own buffers (copy-in, segment end, finish) come through call.h's hook,
 * and transfers are walked as exec.c's st_apply walks them (pairs, lengths, fresh sources, merging of adjacent
 * pieces). What changes is that no address is real: the call is opened with sendbuf and recvbuf replaced by
 * markers (a kind in the top bits, the offset from the lower of the two below), the communicator's scratch and
 * unit slots likewise, and a peer's blocks are addressed through a where of markers for its fields; the
 * interpreter (dev_logic.h) turns markers back into addresses at run time.
 *
 * A peer's where has the shape st_layout gives that peer (call.c): work, units, and alt for all_to_all and for
 * scatter's and gather's non-root ranks (their own block). Its input is decided at run time (dev_logic.h).
 * all_to_all_v is not recorded: a peer's sdispls would be needed at record time (STITCH_ERR_UNSUPPORTED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

#define ST_MARK_SHIFT 52
#define ST_MARK(kind) ((char *)((uintptr_t)(kind) << ST_MARK_SHIFT))

struct st_rec {
    st_recorder hook; /* first: the call model hands its moves to hook.move (call.h) */
    st_dprog *p;
    const st_call *m;
    int failed;
};

static void st_mark_split(const char *ptr, uint8_t *kind, uint64_t *off)
{
    uintptr_t u = (uintptr_t)ptr;
    *kind = ptr ? (uint8_t)(u >> ST_MARK_SHIFT) : ST_K_NONE;
    *off = u & (((uintptr_t)1 << ST_MARK_SHIFT) - 1);
}

static st_dop *st_emit(struct st_rec *R, int code)
{
    st_dprog *p = R->p;
    if (p->nops == p->cap) {
        uint32_t cap = p->cap ? 2 * p->cap : 64;
        st_dop *ops = realloc(p->ops, sizeof *ops * cap);
        if (!ops) {
            R->failed = 1;
            return NULL;
        }
        p->ops = ops, p->cap = cap;
    }
    st_dop *o = &p->ops[p->nops++];
    memset(o, 0, sizeof *o);
    o->code = (uint8_t)code;
    return o;
}

static void st_need(st_dprog *p, uint8_t kind, uint64_t end)
{
    if (kind < ST_K_COUNT && end > p->need[kind])
        p->need[kind] = (size_t)end;
}

/* One move of `n` elements; fsrc: the source while fresh at a peer that has an input (else NULL). */
static void st_emit_move(struct st_rec *R, const st_call *m, int op, int src_rank, const char *dst, const char *in,
                         const char *src, const char *fsrc, size_t n)
{
    st_dop *o = st_emit(R, ST_DOP_MOVE);
    if (!o)
        return;
    o->xop = op == ST_X_COPY ? ST_DX_COPY : in ? ST_DX_REDUCE3 : ST_DX_REDUCE;
    o->rank = src_rank;
    o->n = n;
    st_mark_split(dst, &o->dk, &o->doff);
    st_mark_split(src, &o->sk, &o->soff);
    st_mark_split(in, &o->ik, &o->ioff);
    st_mark_split(fsrc, &o->fk, &o->foff);
    o->fresh = fsrc != NULL;
    st_need(R->p, o->dk, o->doff + n * m->esize);
    if (src_rank == m->me)
        st_need(R->p, o->sk, o->soff + n * m->esize);
}

/* call.h's hook: the call model's moves of my own buffers (copy-in, segment end, finish). */
static void st_rec_move(st_recorder *hook, int op, char *dst, const char *in, const char *src, size_t n)
{
    struct st_rec *rec = (struct st_rec *)hook;
    st_emit_move(rec, rec->m, op, rec->m->me, dst, in, src, NULL, n);
}

static void st_emit_sync(struct st_rec *R, int code, int rank, uint32_t target, uint32_t step)
{
    st_dop *o = st_emit(R, code);
    if (o)
        o->rank = rank, o->target = target, o->step = step;
}

/* ---- a transfer, as exec.c's st_apply walks it ----------------------------------------------------------- */

/* The markers of peer q's where (see the top of this file). */
static st_where st_peer_where(const st_call *m, int q)
{
    st_where w;
    memset(&w, 0, sizeof w);
    w.alt_block = -1;
    w.work = ST_MARK(ST_K_PWORK);
    w.units = ST_MARK(ST_K_PUNITS);
    stitch_coll_t coll = m->a->coll;
    if (m->a2a)
        w.alt = ST_MARK(ST_K_PALT);
    else if ((coll == STITCH_SCATTER || coll == STITCH_GATHER) && q != m->a->root)
        w.alt = ST_MARK(ST_K_PALT), w.alt_block = q;
    return w;
}

typedef struct st_dpiece {
    const char *dst, *src, *in, *fsrc;
    size_t len;
} st_dpiece;

static int st_follows(const char *a, const char *b, size_t n)
{
    return a ? b == a + n : !b;
}

static int st_dpiece_follows(const st_dpiece *a, const st_dpiece *b, size_t es)
{
    size_t n = a->len * es;
    return a->len && st_follows(a->dst, b->dst, n) && st_follows(a->src, b->src, n) &&
           st_follows(a->in, b->in, n) && st_follows(a->fsrc, b->fsrc, n);
}

static void st_rec_xfer(struct st_rec *R, st_call *m, int32_t i)
{
    const st_xfer *x = &m->e->sched.xfers[m->e->plan.recvs[i]];
    const unsigned char *src_fresh = m->e->src_fresh + m->e->src_fresh_at[i];
    int local = x->src == m->me;
    st_where pw = local ? m->mine : st_peer_where(m, x->src), pwi = pw;
    pwi.input = ST_MARK(ST_K_PINPUT);
    st_dpiece run = {NULL, NULL, NULL, NULL, 0};
    st_pcur pc;
    st_pairs_begin(m, x, &pc);
    for (int32_t j = 0; pc.left; j++, st_pairs_next(m, &pc)) {
        size_t soff, doff, len = st_pair_len(m, &pc, &soff, &doff);
        int fresh = src_fresh[j] && !local && pc.su < m->nunits;
        st_dpiece piece = {st_unit_mine(m, pc.du, doff), st_unit_in(m, &pw, x->src, pc.su, soff, src_fresh[j]),
                           x->op == ST_X_COPY ? NULL : st_fresh_input(m, pc.du, doff),
                           fresh ? st_unit_in(m, &pwi, x->src, pc.su, soff, 1) : NULL, len};
        st_unit_written(m, pc.du);
        if (len == 0)
            continue;
        if (st_dpiece_follows(&run, &piece, m->esize)) {
            run.len += len;
            continue;
        }
        if (run.len)
            st_emit_move(R, m, x->op, x->src, run.dst, run.in, run.src, run.fsrc, run.len);
        run = piece;
    }
    if (run.len)
        st_emit_move(R, m, x->op, x->src, run.dst, run.in, run.src, run.fsrc, run.len);
}

/* ---- the step loop, as exec.c's ---------------------------------------------------------------------------- */

static void st_rec_readers(struct st_rec *R, const st_call *m, int s, uint32_t target_g)
{
    const st_plan *pl = &m->e->plan;
    for (int32_t i = pl->send_first[s]; i < pl->send_first[s + 1]; i++) {
        int dst = m->e->sched.xfers[pl->sends[i]].dst;
        if (dst != m->me)
            st_emit_sync(R, ST_DOP_WAIT, dst, 1 + target_g, target_g);
    }
}

static void st_rec_step(struct st_rec *R, st_call *m, size_t k, int s)
{
    const st_plan *pl = &m->e->plan;
    uint32_t g = (uint32_t)(k * (size_t)m->nsteps) + (uint32_t)s;
    if (g > 0)
        st_rec_readers(R, m, (s + m->nsteps - 1) % m->nsteps, g);
    for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++) {
        const st_xfer *x = &m->e->sched.xfers[pl->recvs[i]];
        int local = x->src == m->me;
        if (local && !st_xfer_mapped(x))
            continue;
        if (!local)
            st_emit_sync(R, ST_DOP_WAIT, x->src, 1 + g, g);
        st_rec_xfer(R, m, i);
    }
    if (s == m->nsteps - 1) {
        st_call_segment_end(m);
        if (k + 1 < m->nseg)
            st_call_segment_begin(m, k + 1);
    }
    st_emit_sync(R, ST_DOP_STEP, m->me, 2 + g, g);
    R->p->steps++;
}

static void st_rec_call(struct st_rec *R, st_call *m)
{
    st_call_segment_begin(m, 0);
    const char *w[4] = {m->mine.work, m->mine.input, m->mine.alt, m->mine.units};
    for (int k = 0; k < 4; k++)
        st_mark_split(w[k], &R->p->wk[k], &R->p->woff[k]);
    st_emit_sync(R, ST_DOP_PUBLISH, m->me, 1, 0);
    for (size_t k = 0; k < m->nseg; k++)
        for (int s = 0; s < m->nsteps; s++)
            st_rec_step(R, m, k, s);
    uint32_t total = (uint32_t)(m->nseg * (size_t)m->nsteps);
    if (m->nsteps == 0)
        st_call_segment_end(m);
    else
        st_rec_readers(R, m, m->nsteps - 1, total);
    if (m->a->coll == STITCH_REDUCE_SCATTER || m->a->coll == STITCH_SCATTER) { /* finish reads what others wrote */
        st_emit_sync(R, ST_DOP_SYNC, m->me, 0, total);
        R->p->syncs++;
    }
    st_call_finish(m);
}

/* ---- the call's markers ------------------------------------------------------------------------------------ */

/* sendbuf and recvbuf as markers of ST_K_USER, offsets from the lower: in-place forms keep their relation. */
static void st_mark_user(const st_args *a, st_args *fake, uintptr_t *lo)
{
    uintptr_t s = (uintptr_t)a->send, r = (uintptr_t)a->recv;
    *lo = !s ? r : !r ? s : s < r ? s : r;
    *fake = *a;
    fake->send = s ? ST_MARK(ST_K_USER) + (s - *lo) : NULL;
    fake->recv = r ? ST_MARK(ST_K_USER) + (r - *lo) : NULL;
}

stitch_status_t st_dev_record(stitch_comm_t *comm, const st_args *a, st_dprog *out)
{
    st_args fake;
    st_call m;
    memset(out, 0, sizeof *out);
    if (a->coll == STITCH_ALL_TO_ALL_V)
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: all_to_all_v does not run on devices yet (rank "
                             "%d); use all_to_all or the host API", a->fn, comm->rank);
    st_mark_user(a, &fake, &out->lo);
    char *scratch = comm->scratch, *units = comm->units;
    size_t ssize = comm->scratch_size, usize = comm->units_size;
    comm->scratch = ST_MARK(ST_K_SCRATCH), comm->units = ST_MARK(ST_K_UNITS);
    comm->scratch_size = comm->units_size = (size_t)1 << (ST_MARK_SHIFT - 1);
    stitch_status_t st = st_call_open(&m, comm, &fake);
    comm->scratch = scratch, comm->units = units, comm->scratch_size = ssize, comm->units_size = usize;
    if (st != STITCH_OK)
        return st;
    if (!m.e) {
        out->nothing = 1;
        return STITCH_OK;
    }
    struct st_rec R = {{st_rec_move}, out, &m, 0};
    m.rec = &R.hook;
    st_rec_call(&R, &m);
    if (R.failed) {
        st_dprog_free(out);
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "%s: rank %d: out of memory recording its program", a->fn,
                             comm->rank);
    }
    return STITCH_OK;
}

void st_dprog_free(st_dprog *p)
{
    free(p->ops);
    memset(p, 0, sizeof *p);
}
