/* pull.c - the pull protocol's step loop and a transfer's walk over its units (pull.h), shared by the threads
 * engine (threads/exec.c) and the processes' pull engine on registered memory (proc/exec_pull.c). */
#include "pull.h"

#include "comm.h"

static const st_xfer *st_x(const st_call *m, int32_t i)
{
    return &m->e->sched.xfers[i];
}

/* (a) of the protocol: the ranks that read from me at step `s` have posted base + 1 + target_g. */
static stitch_status_t st_pull_readers(const st_pull *p, int s, uint32_t target_g)
{
    const st_plan *pl = &p->m->e->plan;
    for (int32_t i = pl->send_first[s]; i < pl->send_first[s + 1]; i++) {
        int dst = st_x(p->m, pl->sends[i])->dst;
        stitch_status_t st = dst == p->m->me ? STITCH_OK : p->wait(p->ctx, dst, target_g);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

static stitch_status_t st_pull_step(const st_pull *p, size_t k, int s)
{
    st_call *m = p->m;
    const st_plan *pl = &m->e->plan;
    uint32_t g = (uint32_t)(k * (size_t)m->nsteps) + (uint32_t)s;
    stitch_status_t st = STITCH_OK;
    if (p->step_begin)
        p->step_begin(p->ctx, k, s, g);
    if (g > 0 && !p->tiny && (st = st_pull_readers(p, (s + m->nsteps - 1) % m->nsteps, g)) != STITCH_OK)
        return st;
    for (int32_t i = pl->recv_first[s]; i < pl->recv_first[s + 1]; i++) {
        const st_xfer *x = st_x(m, pl->recvs[i]);
        int local = x->src == m->me;
        if (local && !st_xfer_mapped(x)) /* a copy onto itself (a reduce is refused when the plan is cached) */
            continue;
        if (!local && !p->tiny && (st = p->wait(p->ctx, x->src, g)) != STITCH_OK)
            return st;
        if ((st = p->apply(p->ctx, i, x->src, g)) != STITCH_OK)
            return st;
    }
    if (s == m->nsteps - 1) {
        st_call_segment_end(m);
        if (k + 1 < m->nseg) /* its copied-in inputs are there before peers see this post */
            st_call_segment_begin(m, k + 1);
    }
    if (!p->tiny || s == m->nsteps - 1) /* nobody waits for a tiny call's steps but the last (and base + 1) */
        p->post(p->ctx, p->base + 2 + g);
    return STITCH_OK;
}

stitch_status_t st_pull_steps(const st_pull *p)
{
    st_call *m = p->m;
    stitch_status_t st;
    for (size_t k = 0; k < m->nseg; k++)
        for (int s = 0; s < m->nsteps; s++)
            if ((st = st_pull_step(p, k, s)) != STITCH_OK)
                return st;
    if (m->nsteps == 0)
        st_call_segment_end(m);
    else if (!p->tiny && (st = st_pull_readers(p, m->nsteps - 1, st_pull_total(m))) != STITCH_OK)
        return st; /* (a tiny call's readers read my slot, not my buffers) */
    st_call_finish(m);
    return STITCH_OK;
}

/* ---- one transfer ----------------------------------------------------------------------------------------- */

/* A contiguous piece of one transfer: len elements from src into dst; in: my input under dst (dst is fresh). */
typedef struct st_piece {
    char *dst;
    const char *src, *in;
    size_t len;
} st_piece;

/* Does piece b continue piece a in all three buffers? */
static int st_piece_follows(const st_piece *a, const st_piece *b, size_t es)
{
    size_t n = a->len * es;
    return a->len && b->dst == a->dst + n && b->src == a->src + n && (a->in ? b->in == a->in + n : !b->in);
}

static stitch_status_t st_pull_move(st_call *m, const st_xfer *x, const st_piece *r, st_pull_move_fn move, void *ctx)
{
    if (move)
        return move(ctx, x->src, x->op, r->dst, r->in, r->src, r->len);
    st_call_move(m, x->op, r->dst, r->in, r->src, r->len);
    return STITCH_OK;
}

stitch_status_t st_pull_xfer(st_call *m, int32_t i, const st_where *w, int input_only, st_pull_move_fn move,
                             void *ctx)
{
    const st_xfer *x = st_x(m, m->e->plan.recvs[i]);
    const unsigned char *src_fresh = m->e->src_fresh + m->e->src_fresh_at[i];
    stitch_status_t st;
    st_piece run = {NULL, NULL, NULL, 0};
    st_pcur pc;
    st_pairs_begin(m, x, &pc);
    for (int32_t j = 0; pc.left; j++, st_pairs_next(m, &pc)) {
        size_t soff, doff, len = st_pair_len(m, &pc, &soff, &doff);
        if (input_only && (pc.su >= m->nunits || !src_fresh[j])) /* st_tiny: impossible in a one-step plan */
            return st_comm_fail(m->comm, STITCH_ERR_INTERNAL, "%s: rank %d: a tiny call reads unit %d of rank %d "
                                "that is not its input", m->a->fn, m->me, pc.su, x->src);
        st_piece piece = {st_unit_mine(m, pc.du, doff), st_unit_in(m, w, x->src, pc.su, soff, src_fresh[j]),
                          x->op == ST_X_COPY ? NULL : st_fresh_input(m, pc.du, doff), len};
        st_unit_written(m, pc.du);
        if (len == 0)
            continue;
        if (!piece.dst) /* st_rank_check refuses such a plan */
            return st_comm_fail(m->comm, STITCH_ERR_INTERNAL, "%s: rank %d: the plan writes unit %d, which this "
                                "rank keeps nowhere", m->a->fn, m->me, pc.du);
        if (st_piece_follows(&run, &piece, m->esize)) {
            run.len += len;
            continue;
        }
        if ((st = st_pull_move(m, x, &run, move, ctx)) != STITCH_OK)
            return st;
        run = piece;
    }
    return st_pull_move(m, x, &run, move, ctx);
}
