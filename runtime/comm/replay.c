/* replay.c - a tiny call's moves, recorded once and replayed (the threads engine's tiny calls, threads/exec.c, and
 * the message engine's, proc/exec_msg.c).
 *
 * A tiny call (exec.c: all_reduce or reduce of at most ST_TINY_BYTES, one segment, data between ranks at step 0
 * only, the peers' inputs read from their lines) costs what its instructions cost: the line crossing is one cache
 * line each way, and walking the plan (steps, transfers, pairs of units, lengths, fresh inputs, merged pieces)
 * took about 1,500 of a call's 2,500 instructions at p = 2 (callgrind of `stitch-perf -t 2 all_reduce -b 8`).
 * What that walk produces depends only on the entry (algorithm, root, plan) and the call's shape: count, dtype,
 * op, and how its sendbuf lies to its recvbuf (in place, apart, or at an offset). So the first call of a shape runs
 * the general path with call.h's recorder hook, which makes every move as st_call_move would and writes it down as
 * (role, offset) for its destination, source and input; the next calls of that shape skip the walk and make the
 * recorded moves, in their order, from the same kernels: the same moves on the same bytes, so the same result bits.
 *
 * The message engine records the same way, and adds marks for its messages (replay.h: where each step-0 message
 * goes, from which pieces of my input, and where each received one is applied), so a replayed call sends the
 * very bytes the general path would send, in the same order, and applies what arrives with the same moves.
 *
 * Roles: the call model's input, work blocks and scratch units (the communicator's, which move between calls), and
 * the lines: the peers' tiny lines of the call's parity (threads: rank q's at a fixed stride from rank 0's), or the
 * payload of the message being applied (messages). The roles never share a byte: the caller's buffers that a call
 * uses overlap only in an in-place form (the API refuses the rest), in which the call model has no separate input.
 * A pointer outside all of them, more than ST_REPLAY_MOVES steps, or a call its engine refuses, and the shape is not
 * recorded: its calls take the general path, as they would without this file.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm.h"
#include "replay.h"

#define ST_REPLAY_SHAPES 4

int st_replay_off;

/* An entry's programs, for the last ST_REPLAY_SHAPES shapes it ran tiny (a caller that alternates in place and out
 * of place, or two counts, keeps both). */
struct st_replay {
    int next; /* the program a new shape replaces */
    st_rprog prog[ST_REPLAY_SHAPES];
};

/* The bytes the call's sendbuf and recvbuf span (api.c checks them so). */
static void st_replay_extents(const st_call *m, size_t *ns, size_t *nr)
{
    size_t n = m->a->count * m->esize, pn = n * (size_t)m->p;
    switch (m->a->coll) {
    case STITCH_ALL_GATHER:
    case STITCH_GATHER: *ns = n, *nr = pn; break;
    case STITCH_SCATTER:
    case STITCH_REDUCE_SCATTER: *ns = pn, *nr = n; break;
    case STITCH_ALL_TO_ALL: *ns = *nr = pn; break;
    default: *ns = *nr = n;
    }
}

/* How the call's sendbuf lies to its recvbuf: the byte offset from recvbuf when the two overlap (0: in place;
 * all_gather's, gather's, scatter's and reduce_scatter's in-place forms put one at a block of the other, and which
 * moves the call makes depends on it: none for my own block in place), else apart (or one of them NULL), however
 * far. A program holds for the calls whose buffers lie alike: make test's proc.difftest.shm found a gather
 * recorded with the root's sendbuf at its block of recvbuf replayed for one whose sendbuf lay apart. */
static long long st_replay_rel(const st_call *m)
{
    const st_args *a = m->a;
    uintptr_t s = (uintptr_t)a->send, r = (uintptr_t)a->recv;
    size_t ns, nr;
    st_replay_extents(m, &ns, &nr);
    if (!a->send || !a->recv || (s != r && (s >= r + nr || r >= s + ns)))
        return LLONG_MIN;
    return s >= r ? (long long)(s - r) : -(long long)(r - s);
}

static st_rprog *st_replay_shape(const struct st_replay *rp, const st_call *m)
{
    const st_args *a = m->a;
    long long rel = rp ? st_replay_rel(m) : 0;
    for (int i = 0; rp && i < ST_REPLAY_SHAPES; i++) {
        const st_rprog *r = &rp->prog[i];
        if (r->count == a->count && r->dtype == (int)a->dtype && r->op == (int)a->op && r->rel == rel)
            return (st_rprog *)r;
    }
    return NULL;
}

const st_rprog *st_replay_find(const st_entry *e, const st_call *m)
{
    const st_rprog *r = st_replay_shape(e->replay, m);
    return r && r->state == 1 ? r : NULL;
}

/* ptr as (role, offset); 0 when no role holds ptr .. ptr + bytes (ST_RR_NONE for NULL). */
static int st_replay_role(const st_replay_bases *b, const char *ptr, size_t bytes, uint8_t *kind, uint32_t *off)
{
    *kind = ST_RR_NONE, *off = 0;
    if (!ptr)
        return 1;
    for (int k = ST_RR_INPUT; k < ST_RR_COUNT; k++) {
        const char *base = b->base[k];
        if (base && ptr >= base && (size_t)(ptr - base) <= b->len[k] && bytes <= b->len[k] - (size_t)(ptr - base) &&
            (size_t)(ptr - base) <= UINT32_MAX) {
            *kind = (uint8_t)k, *off = (uint32_t)(ptr - base);
            return 1;
        }
    }
    return 0;
}

/* The program's next step, or NULL (and the shape refused) when it is full or no longer being recorded. */
static st_rmove *st_replay_next(st_rprog *r)
{
    if (r->state != 0)
        return NULL;
    if (r->nmoves == ST_REPLAY_MOVES) {
        r->state = 2;
        return NULL;
    }
    return &r->mv[r->nmoves];
}

static void st_replay_record(st_recorder *hook, int op, char *dst, const char *in, const char *src, size_t n)
{
    st_replay_rec *rec = (st_replay_rec *)(void *)hook;
    const st_call *m = rec->m;
    st_rprog *r = rec->r;
    size_t bytes = n * m->esize;
    st_call_move_now(m, op, dst, in, src, n);
    st_rmove *mv = st_replay_next(r);
    if (!mv)
        return;
    if (n > UINT32_MAX || !st_replay_role(rec->b, dst, bytes, &mv->dk, &mv->doff) ||
        !st_replay_role(rec->b, src, bytes, &mv->sk, &mv->soff) ||
        !st_replay_role(rec->b, in, bytes, &mv->ik, &mv->ioff)) {
        r->state = 2;
        return;
    }
    mv->op = (uint8_t)op, mv->n = (uint32_t)n;
    r->nmoves++;
}

void st_replay_mark(const st_replay_rec *rec, int op, uint32_t doff, uint32_t soff, size_t n)
{
    st_rmove *mv = st_replay_next(rec->r);
    if (!mv)
        return;
    if (n > UINT32_MAX) {
        rec->r->state = 2;
        return;
    }
    *mv = (st_rmove){.op = (uint8_t)op, .n = (uint32_t)n, .doff = doff, .soff = soff};
    rec->r->nmoves++;
}

void st_replay_piece(const st_replay_rec *rec, const char *src, size_t bytes)
{
    st_rmove *mv = st_replay_next(rec->r);
    if (!mv)
        return;
    *mv = (st_rmove){.op = ST_RM_PIECE, .n = (uint32_t)bytes};
    if (bytes > UINT32_MAX || !st_replay_role(rec->b, src, bytes, &mv->sk, &mv->soff) || !mv->sk) {
        rec->r->state = 2;
        return;
    }
    rec->r->nmoves++;
}

void st_replay_refuse(const st_replay_rec *rec)
{
    if (rec->r->state == 0)
        rec->r->state = 2;
}

/* A role spans its buffer and no more: a byte past it may be another buffer of the call (make test's
 * proc.difftest.shm found all_to_all's sendbuf, p blocks, taken as p * p, the call model's block count, and a recvbuf
 * right after it recorded as part of it). */
void st_replay_bases_of(const st_call *m, st_replay_bases *b)
{
    size_t bytes = m->a->count * m->esize * (size_t)(m->a2a ? m->p : m->nblocks); /* a2a: my row of p blocks */
    *b = (st_replay_bases){{NULL}, {0}};
    b->base[ST_RR_INPUT] = (char *)m->mine.input, b->len[ST_RR_INPUT] = bytes;
    b->base[ST_RR_WORK] = (char *)m->mine.work, b->len[ST_RR_WORK] = bytes;
    b->base[ST_RR_UNITS] = (char *)m->mine.units;
    b->len[ST_RR_UNITS] = (size_t)m->sched->nscratch * m->slot_stride * m->esize;
}

int st_replay_begin(st_replay_rec *rec, st_entry *e, st_call *m, const st_replay_bases *b)
{
    st_rprog *r = st_replay_shape(e->replay, m);
    if (r && r->state == 2)
        return 0;
    if (!e->replay && !(e->replay = calloc(1, sizeof *e->replay)))
        return 0;
    if (!r) {
        r = &e->replay->prog[e->replay->next];
        e->replay->next = (e->replay->next + 1) % ST_REPLAY_SHAPES;
    }
    const st_args *a = m->a;
    *r = (st_rprog){.count = a->count, .dtype = (int)a->dtype, .op = (int)a->op, .rel = st_replay_rel(m)};
    *rec = (st_replay_rec){{st_replay_record}, m, r, b};
    m->rec = &rec->hook;
    return 1;
}

void st_replay_retry(const st_replay_rec *rec)
{
    if (rec->r->state == 0)
        rec->r->state = 3;
}

void st_replay_end(st_replay_rec *rec, int ok)
{
    rec->m->rec = NULL;
    if (rec->r->state == 3)
        rec->r->state = 2, ok = 0;
    if (rec->r->state == 0)
        rec->r->state = ok ? 1 : 2;
    if (!ok) /* a failed call may have stopped anywhere: record its shape again next time */
        rec->r->count = (size_t)-1;
}

void st_replay_run(const st_rprog *r, const st_call *m, const st_replay_bases *b)
{
    for (int i = 0; i < r->nmoves; i++)
        st_replay_move(&r->mv[i], m, b);
}
