/* exec.c - the threads engine: one rank runs its plan of a schedule for one collective call, ranks being threads.
 *
 * The call model (blocks, layout, units, segments, pairs, lazy input, the plan check) is call.c's; this file is
 * how thread ranks move the data: zero-copy pull. A rank publishes its st_where (where its blocks are) in its
 * slot; a transfer (src, dst, units, copy|reduce) at step s is executed by its receiver, which reads the sender's
 * units in place and copies or reduces into its own. Transfers into one rank within a step are applied in schedule
 * order, so the reduction order, hence the result bits, is fixed by the schedule alone. A peer's unit still fresh
 * (call.c) is read from the peer's input, known from the schedule (e->src_fresh), not from the peer's state.
 *
 * Protocol, per call, with `base` the value of every rank's counter when the call starts (the same on all ranks
 * because all run the same number of steps): publish the layout and the call's fingerprint, post base + 1;
 * check the fingerprint of every peer of the plan up front (not at first contact: a rank whose call has fewer
 * steps could otherwise leave a peer waiting for a step that never comes, instead of a prompt mismatch; a peer
 * that only sends to me may finish the call and publish the next one's fingerprint before I look, hence two
 * fingerprints per slot, by call parity, and a rank about to overwrite one waits until the peers of that call
 * have checked it: st_wait_checked);
 * then for each step g: (a) wait until the ranks that read from me at step
 * g - 1 have posted base + 1 + g (they are done reading, I may overwrite), (b) for each transfer into me wait for
 * its source to post base + 1 + g (its step g - 1 is complete, its data is the step's input) and apply it,
 * (c) post base + 2 + g. At the end wait for the last step's readers, so the caller may reuse its buffers.
 * The global step number g runs over all segments; the inputs copied in for segment k + 1 (call.c) are copied
 * just before the last step of segment k posts, so peers that pass that post find them.
 * all_to_all_v's counts differ per pair, so they are not in the fingerprint: a receiver checks its recvcounts[q]
 * against q's sendcounts[me] when it applies a transfer from q (q is inside the call then, its arrays valid).
 * A local transfer with `at` (Mesh's local reduce tree) is a real copy or reduce within my own storage, applied
 * in schedule order with my receives.
 *
 * Failure. Every failure inside a call (timeout, mismatch, abort) aborts the job, and a rank whose call failed
 * returns only when no peer reads its buffers any more: a peer reads them (and the all_to_all_v arrays) only
 * under a borrow on the owner's slot, taken per transfer and refused once the job is aborted, and the failing
 * owner waits for the borrows to end (job.h). Its caller may then free the buffers at once. A rank that times
 * out names, besides the peer it waited for, the rank furthest behind by the progress every slot publishes.
 *
 * Tiny calls. An 8-byte all_reduce costs what its synchronisation costs: mesh_oneshot (auto's choice) reads the peers'
 * inputs at step 0 and reduces locally at steps 1 and 2, and the protocol made two round trips of it (the step's post
 * and wait, then at step 1 the wait for my readers of step 0, which lets me overwrite what they read), a borrow (an
 * atomic add and subtract on the peer's slot line) per transfer, and a post per step; and each peer check read three
 * lines the peer had just written (its counter, its fingerprint, its data), each a cache line crossing cores (1.4 us at
 * p = 2 on the 2-core VM against Open MPI's 0.5: docs/performance.md). A call of all_reduce, reduce or broadcast with
 * at most ST_TINY_BYTES of input, one segment, and a schedule whose only transfers between ranks are at step 0 is tiny
 * (st_tiny: the same answer on every rank, from the fingerprint's fields and the schedule). Every rank writes its
 * input, its fingerprint's fields packed (st_tiny_key) and the call number into its slot's hand-over (job.h's
 * st_tiny_line, one per call parity: the check and the first 40 bytes in one line), the number last with release, then
 * posts base + 1; a peer polls that line briefly (st_tiny_poll), and when it shows the call with its own key has my
 * check (and an 8-byte call's data) in one fetch. Otherwise (late, sleeping, or a different fingerprint) it takes the
 * full path: wait for the counter, compare the whole fingerprint (a mismatch is named as always), and the hand-over,
 * written before the post, is then there. Peers read the input from the hand-over, with no borrow (the slot is the
 * job's, alive while any rank is). At step 0 every unit a peer reads from me is still my input (st_fresh_tables:
 * nothing is written before step 0, and a step never writes a unit it sends), so the values and the result are bit for
 * bit the same. Nobody reads my buffers, so I never wait for my readers, at a step or at the end; nor does anyone wait
 * for my steps after step 0, so I post only base + 1 and the call's final value. The line of a parity is rewritten two
 * calls later only after the peers of that call have finished it (st_wait_checked, which guards the fingerprint the
 * same way, and which takes a peer's line of the call in between as proof that it has). A tiny call's moves are
 * recorded on the first call of its shape and replayed on the next (replay.c; st_run_tiny).
 *
 * Threads are not a transport in transport.h's table: a byte stream cannot express reading a peer's units in
 * place under a borrow (see the end of call.c's opening comment).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "pull.h"
#include "reduce.h"
#include "replay.h"

/* One collective call in progress: the call model (call.h) and the protocol's state. */
typedef struct st_ctx {
    st_call m;
    stitch_comm_t *comm; /* m.comm and m.a, by their short names */
    const st_args *a;
    uint32_t base;
    int tiny; /* peers read my input from my slot (st_tiny) */
    uint64_t key; /* a tiny call's st_tiny_key */
} st_ctx;

/* ---- tiny calls ---------------------------------------------------------------------------------------- */

/* A tiny call's fingerprint fields but the call number and the algorithm, packed exactly: a count of at most
 * ST_TINY_BYTES elements fits 16 bits, a root 16 (p <= 65536; -1, all_reduce's, is 0xffff, told apart by coll). */
_Static_assert(ST_TINY_BYTES <= 0xffff, "a tiny call's count fits the key's 16 bits");
static uint64_t st_tiny_key(const st_fingerprint *f)
{
    return (uint64_t)(uint8_t)f->coll | (uint64_t)(uint8_t)f->dtype << 8 | (uint64_t)(uint8_t)(f->op + 1) << 16 |
           (uint64_t)(uint16_t)f->count << 24 | (uint64_t)(uint16_t)f->root << 40;
}

/* What a tiny call hands over: every rank's input (all_reduce, reduce), the root's alone (broadcast: the others
 * hand over their key only, and their sendbuf, unused, may be anything). */
static const void *st_tiny_input(const st_ctx *c)
{
    return c->a->coll == STITCH_BROADCAST && c->m.me != c->a->root ? NULL : c->a->send;
}

/* Has peer q handed over this tiny call's input, with my fingerprint? One line read (job.h's st_tiny_line). */
static int st_tiny_seen(const st_ctx *c, int q)
{
    const st_tiny_line *tl = &c->comm->job->slots[q].tiny[c->m.fp.seq & 1];
    return atomic_load_explicit(&tl->seq, memory_order_acquire) == c->m.fp.seq + 1 && tl->key == c->key &&
           tl->algo == c->m.fp.algo;
}

/* Poll q's line a little while it is not there (not when the job has more ranks than cores: the waits of
 * job.c know how to yield); 0 sends the caller to the full wait on q's counter and the full check. */
static int st_tiny_poll(const st_ctx *c, int q)
{
    int polls = c->comm->job->oversubscribed ? 1 : 256;
    for (int i = 0; i < polls; i++) {
        if (st_tiny_seen(c, q))
            return 1;
        __builtin_ia32_pause();
    }
    return 0;
}

static uint32_t st_total_steps(const st_ctx *c)
{
    return st_pull_total(&c->m);
}

/* ---- waiting, with the error message for each way a wait can end ---------------------------------------- */

static stitch_status_t st_wait_error(st_ctx *c, stitch_status_t st, int peer, uint32_t g, int sys_errno)
{
    stitch_comm_t *comm = c->comm;
    const char *fn = c->a->fn;
    int S = c->m.nsteps ? c->m.nsteps : 1;
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
                            comm->timeout_ms, peer, (unsigned long long)c->m.fp.seq, behind);
    if (st == STITCH_ERR_TIMEOUT)
        return st_comm_fail(comm, st, "%s: rank %d timed out after %d ms waiting for rank %d at step %d of %d "
                            "(segment %zu of %zu): the peer did not finish the step before; furthest behind: %s",
                            fn, comm->rank, comm->timeout_ms, peer, step, c->m.nsteps, seg, c->m.nseg, behind);
    return st_comm_fail(comm, st, "%s: rank %d: futex wait on rank %d's counter failed: %s", fn, comm->rank, peer,
                        strerror(sys_errno));
}

/* Rank `peer` did not check my fingerprint of call number `seq` (st_wait_checked). */
static stitch_status_t st_kept_error(st_ctx *c, stitch_status_t st, int peer, uint64_t seq, int sys_errno)
{
    stitch_comm_t *comm = c->comm;
    const char *fn = c->a->fn;
    char behind[200];
    if (st == STITCH_ERR_ABORTED)
        return st_comm_error(comm, st, "%s: communicator aborted while rank %d waited for rank %d to check its "
                             "call number %llu: %s", fn, comm->rank, peer, (unsigned long long)seq,
                             st_job_reason(comm->job));
    if (st != STITCH_ERR_TIMEOUT)
        return st_comm_fail(comm, st, "%s: rank %d: futex wait on rank %d's counter failed: %s", fn, comm->rank,
                            peer, strerror(sys_errno));
    st_job_behind(comm->job, comm->rank, behind, sizeof behind);
    return st_comm_fail(comm, st, "%s: rank %d timed out after %d ms before call number %llu waiting for rank %d, "
                        "which has not checked call number %llu; furthest behind: %s", fn, comm->rank,
                        comm->timeout_ms, (unsigned long long)c->m.fp.seq, peer, (unsigned long long)seq, behind);
}

/* Wait for rank `peer` to post base + 1 + g. */
static stitch_status_t st_wait_peer(st_ctx *c, int peer, uint32_t g)
{
    int sys_errno = 0;
    stitch_status_t st = st_wait(c->comm->job, &c->comm->job->slots[peer], c->base + 1 + g, c->comm->timeout_ms,
                                &sys_errno);
    ST_PREEMPT(); /* between seeing the post and reading what it covers */
    return st == STITCH_OK ? st : st_wait_error(c, st, peer, g, sys_errno);
}

/* ---- fingerprints -------------------------------------------------------------------------------------- */

/* STITCH_OK when equal, else a mismatch naming the first differing field, lower rank first. */
static stitch_status_t st_fp_compare(st_ctx *c, int peer, const st_fingerprint *theirs)
{
    char mine_s[96], theirs_s[96];
    if (!st_fp_differ(&c->m.fp, theirs, mine_s, theirs_s, sizeof mine_s))
        return STITCH_OK;
    int me = c->comm->rank, lo = me < peer;
    return st_comm_fail(c->comm, STITCH_ERR_MISMATCH, "%s: rank %d has %s but rank %d has %s", c->a->fn,
                        lo ? me : peer, lo ? mine_s : theirs_s, lo ? peer : me, lo ? theirs_s : mine_s);
}

/* After an abort while checking: report a mismatch with any peer that has published this call, if there is one;
 * it explains the abort better than "aborted" (the rank that noticed first aborted the others). */
static stitch_status_t st_scan_mismatch(st_ctx *c, stitch_status_t st)
{
    const st_entry *e = c->m.e;
    for (int i = 0; i < e->npeers; i++) {
        st_slot *s = &c->comm->job->slots[e->peers[i]];
        uint32_t v = atomic_load_explicit(&s->posted, memory_order_acquire);
        if (st_reached(v, c->base + 1) && !st_reached(v, c->base + 1 + st_total_steps(c)) &&
            st_fp_compare(c, e->peers[i], &s->fp[c->m.fp.seq & 1]) != STITCH_OK)
            return STITCH_ERR_MISMATCH;
    }
    return st;
}

static stitch_status_t st_check_peers(st_ctx *c)
{
    const st_entry *e = c->m.e;
    for (int i = 0; i < e->npeers; i++) {
        int q = e->peers[i];
        if (c->tiny && st_tiny_poll(c, q))
            continue; /* its data is there, and its fingerprint is mine */
        stitch_status_t st = st_wait_peer(c, q, 0);
        if (st == STITCH_ERR_ABORTED)
            return st_scan_mismatch(c, st);
        if (st == STITCH_OK)
            st = st_fp_compare(c, q, &c->comm->job->slots[q].fp[c->m.fp.seq & 1]);
        if (st == STITCH_OK && c->tiny && !st_tiny_seen(c, q)) /* posted after its line, same fingerprint */
            st = st_comm_fail(c->comm, STITCH_ERR_INTERNAL, "%s: rank %d: rank %d posted a tiny call without its "
                              "input", c->a->fn, c->m.me, q);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

/* ---- moving data --------------------------------------------------------------------------------------- */

/* all_to_all_v: my recvcounts[q] must be q's sendcounts[me]. */
static stitch_status_t st_check_counts(st_ctx *c, int q, const st_slot *s)
{
    int me = c->m.me;
    size_t mine = c->a->rcounts[q], theirs = s->where.scounts[me];
    if (mine == theirs)
        return STITCH_OK;
    return st_comm_fail(c->comm, STITCH_ERR_MISMATCH, "%s: rank %d expects %zu elements from rank %d "
                        "(recvcounts[%d]) but rank %d sends it %zu (sendcounts[%d])", c->a->fn, me, mine, q, q, q,
                        theirs, me);
}

/* Apply transfer recvs[i] of my plan in the current segment (pull.h's st_pull_xfer), reading its source's units
 * through the st_where the source publishes (my own for a local transfer; a tiny call's source: its input in its
 * slot). */
static stitch_status_t st_apply(st_ctx *c, int32_t i)
{
    st_call *m = &c->m;
    const st_xfer *x = &m->e->sched.xfers[m->e->plan.recvs[i]];
    const st_slot *q = &c->comm->job->slots[x->src];
    st_where tw; /* a tiny call: the source's input in its slot */
    const st_where *w = &q->where;
    if (c->tiny && x->src != m->me) {
        tw = (st_where){.input = (const char *)q->tiny[m->fp.seq & 1].head};
        w = &tw;
    }
    stitch_status_t st;
    if (c->a->coll == STITCH_ALL_TO_ALL_V && (st = st_check_counts(c, x->src, q)) != STITCH_OK)
        return st;
    return st_pull_xfer(m, i, w, w == &tw, NULL, NULL);
}

/* st_apply of a transfer from a peer, whose buffers I may read only under a borrow on its slot (job.h): the
 * peer's call may have failed, and then it returns (and its caller frees the buffers) once no borrow is held. */
static stitch_status_t st_apply_borrowed(st_ctx *c, int32_t i, int src, uint32_t g)
{
    st_slot *q = &c->comm->job->slots[src];
    if (st_slot_borrow(c->comm->job, q) != 0)
        return st_wait_error(c, STITCH_ERR_ABORTED, src, g, 0);
    stitch_status_t st = st_apply(c, i);
    st_slot_return(q);
    return st;
}

/* ---- the step loop ------------------------------------------------------------------------------------- */

/* pull.h's functions for the threads engine. */
static stitch_status_t st_pull_wait_cb(void *ctx, int peer, uint32_t g)
{
    return st_wait_peer(ctx, peer, g);
}

static stitch_status_t st_pull_apply_cb(void *ctx, int32_t i, int src, uint32_t g)
{
    st_ctx *c = ctx;
    if (src == c->comm->rank || c->tiny) /* mine, or the peer's line, seen by st_check_peers: no borrow */
        return st_apply(c, i);
    return st_apply_borrowed(c, i, src, g);
}

static void st_pull_post_cb(void *ctx, uint32_t v)
{
    st_ctx *c = ctx;
    st_post(&c->comm->job->slots[c->comm->rank], v);
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
    st_pull p = {&c->m, c->base, c->tiny, c, st_pull_wait_cb, st_pull_apply_cb, st_pull_post_cb, NULL};
    return st_pull_steps(&p);
}

/* Before my fingerprint of this call goes into fp[seq & 1]: the peers of the call whose fingerprint is there
 * (the last one of the same parity that posted, two calls ago or more) must have checked it. A rank runs ahead of
 * a peer that is still checking it whenever it has nothing to wait for (a scatter's receiver, a leaf, count-0
 * calls in between), so with two slots it would otherwise overwrite a fingerprint still to be read, and the peer
 * would see a mismatch that is not there. Waiting, rather than keeping every call's fingerprint until all have
 * read it, bounds the memory; it costs nothing in step with the peers, and it cannot deadlock: I wait for peers
 * to post base' + 2 of an earlier call while my own counter is already past it (every wait in this engine is for
 * a value my counter has reached, so the rank furthest behind never waits). Then this call is remembered. */
static stitch_status_t st_wait_checked(st_ctx *c)
{
    st_job *job = c->comm->job;
    st_fp_kept *k = &job->slots[c->comm->rank].kept[c->m.fp.seq & 1];
    for (int i = 0; i < k->npeers; i++) {
        int q = k->peers[i], sys_errno = 0;
        /* q has handed over a later call's tiny input: it finished call k->seq (no load of its counter's line) */
        uint64_t later = atomic_load_explicit(&job->slots[q].tiny[(k->seq + 1) & 1].seq, memory_order_acquire);
        if ((int64_t)(later - (k->seq + 2)) >= 0)
            continue;
        stitch_status_t st = st_wait(job, &job->slots[q], k->base + 2, c->comm->timeout_ms, &sys_errno);
        if (st != STITCH_OK)
            return st_kept_error(c, st, q, k->seq, sys_errno);
    }
    *k = (st_fp_kept){c->m.fp.seq, c->base, st_total_steps(c) ? c->m.e->npeers : 0, c->m.e->peers};
    return STITCH_OK;
}

_Thread_local unsigned long st_exec_replays; /* tiny calls this thread replayed (replay.c): for the tests */

/* The roles of replay.c for this call: the call model's input, work blocks and scratch units, the peers' lines. */
static void st_tiny_bases(const st_ctx *c, st_replay_bases *b)
{
    st_replay_bases_of(&c->m, b);
    b->base[ST_RR_LINES] = (char *)c->comm->job->slots[0].tiny[c->m.fp.seq & 1].head;
    b->len[ST_RR_LINES] = (size_t)(c->m.p - 1) * sizeof(st_slot) + ST_TINY_BYTES;
}

/* A tiny call after its post-free preliminaries: its shape's recorded moves once the peers' lines are seen
 * (replay.c), or else the steps, recorded for the next call of the shape. Either way the call's last post is
 * base + 1 + its steps. */
static stitch_status_t st_run_tiny(st_ctx *c, st_slot *me)
{
    st_replay_bases b;
    st_tiny_bases(c, &b);
    const st_rprog *r = st_replay_off ? NULL : st_replay_find(c->m.e, &c->m);
    stitch_status_t st;
    if (r) {
        st_post(me, c->base + 1);
        if ((st = st_check_peers(c)) != STITCH_OK)
            return st;
        st_replay_run(r, &c->m, &b);
        st_post(me, c->base + 1 + st_total_steps(c));
        st_exec_replays++;
        return STITCH_OK;
    }
    st_replay_rec rec;
    int recording = !st_replay_off && st_replay_begin(&rec, (st_entry *)c->m.e, &c->m, &b);
    st_call_segment_begin(&c->m, 0);
    st_post(me, c->base + 1);
    st = st_run_steps(c);
    if (recording)
        st_replay_end(&rec, st == STITCH_OK);
    return st;
}

static stitch_status_t st_run_call(st_ctx *c)
{
    st_slot *me = &c->comm->job->slots[c->comm->rank];
    stitch_status_t st = st_wait_checked(c);
    if (st != STITCH_OK)
        return st_fail_call(c, st);
    atomic_store_explicit(&me->call_base, c->base, memory_order_relaxed); /* progress, for st_job_behind */
    atomic_store_explicit(&me->call_steps, st_total_steps(c), memory_order_relaxed);
    atomic_store_explicit(&me->calls, c->m.fp.seq + 1, memory_order_relaxed);
    me->where = c->m.mine;
    me->fp[c->m.fp.seq & 1] = c->m.fp;
    if (c->tiny) { /* the line first, then the post (a peer that waits on the counter finds the line) */
        st_tiny_line *tl = &me->tiny[c->m.fp.seq & 1];
        if (st_tiny_input(c))
            memcpy(tl->head, st_tiny_input(c), c->a->count * c->m.esize);
        tl->key = c->key, tl->algo = c->m.fp.algo;
        atomic_store_explicit(&tl->seq, c->m.fp.seq + 1, memory_order_release);
    }
    ST_PREEMPT();
    if (c->tiny)
        st = st_run_tiny(c, me);
    else {
        st_call_segment_begin(&c->m, 0);
        st_post(me, c->base + 1);
        st = st_run_steps(c);
    }
    return st == STITCH_OK ? st : st_fail_call(c, st);
}

/* ---- setting up a call --------------------------------------------------------------------------------- */

_Thread_local unsigned long st_exec_tiny_calls; /* tiny calls this thread ran: for the tests */

/* Does the schedule move data between ranks at step 0 only (the rest local)? The threads engine holds the whole
 * schedule, so every rank answers alike; kept in the entry (e->remote_once: 0 not known yet, 1 yes, 2 no). */
static int st_remote_once(st_entry *e)
{
    if (!e->remote_once) {
        const st_sched *sc = &e->sched;
        int once = sc->nsteps > 0;
        for (int32_t i = sc->nsteps > 0 ? sc->step_first[1] : 0; once && i < sc->nxfers; i++)
            once = sc->xfers[i].src == sc->xfers[i].dst;
        e->remote_once = once ? 1 : 2;
    }
    return e->remote_once == 1;
}

/* Is the call tiny (see the top of this file)? Every rank answers alike: the collective, count and dtype are in the
 * fingerprint, the schedule is the algorithm's, and so few bytes make one segment whatever STITCH_SEGMENT_BYTES. */
static int st_tiny(const st_ctx *c)
{
    stitch_coll_t coll = c->a->coll;
    return (coll == STITCH_ALL_REDUCE || coll == STITCH_REDUCE || coll == STITCH_BROADCAST) && c->m.nseg == 1 &&
           c->a->count * c->m.esize <= ST_TINY_BYTES &&
           (st_tiny_input(c) || (coll == STITCH_BROADCAST && c->m.me != c->a->root)) &&
           st_remote_once((st_entry *)c->m.e);
}

stitch_status_t st_exec(stitch_comm_t *comm, const st_args *a)
{
    st_ctx c;
    stitch_status_t st = st_call_open(&c.m, comm, a);
    if (st != STITCH_OK || !c.m.e)
        return st;
    c.comm = comm, c.a = a;
    c.base = comm->base;
    c.tiny = st_tiny(&c);
    c.key = st_tiny_key(&c.m.fp);
    st_exec_tiny_calls += (unsigned long)c.tiny;
    if ((st = st_run_call(&c)) == STITCH_OK)
        comm->base = c.base + 1 + st_total_steps(&c);
    return st;
}
