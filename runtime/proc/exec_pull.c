/* exec_pull.c - the processes backend's run: processes on one host whose buffers are all registered (regmem.h)
 * pull from each other's memory as thread ranks do (threads/exec.c); any other call goes to the message engine
 * (exec_msg.c).
 *
 * Agreement, per call. Every rank knows whether its own buffers are registered, not whether its peers' are, and
 * the engines cannot mix within a call (a receiver that pulls and a sender that streams would wait for each other).
 * So a call that may pull (ST_PULL_MIN_BYTES or more, every rank on one host, not all_to_all_v: all facts every
 * rank shares) starts with a hello from every rank to every other, over the transports, in stream order before the
 * call's messages: a message header (the call's fingerprint, checked as the message engine checks it, and step
 * ST_PULL_G) and its handles (regmem.h: my board, and the segments holding my work, input, alt and scratch-unit
 * regions of the call) or "not registered", and the addresses of those regions in its own process. Every rank then
 * holds every rank's answer and makes the same choice: the pull engine when all say registered; else, when every
 * rank sets STITCH_CMA=1, the pull engine reading peers' regions with process_vm_readv (below); else the message
 * engine with the call as opened.
 *
 * The pull engine is threads/exec.c's protocol over shared memory: the call model (call.c) says where every unit
 * is by an st_where; a peer's st_where is its handles mapped into my address space (each region checked against
 * the extent the call reads from it, and borrowed for the call). My counter is the `posted` word of my board
 * segment; comm->base (unused otherwise in process mode) is its value between calls, the same on every rank
 * because every rank runs the same pull calls. Step g: wait until the ranks that read from me at step g - 1 posted
 * base + 1 + g, apply each transfer into me once its source posted base + 1 + g (reading the source's units in
 * place, reduction order fixed by the schedule), post base + 2 + g. At the end wait for the last step's readers.
 * The fingerprints were checked in the hello, so the threads engine's slot of two fingerprints has no equivalent.
 * Scratch (reduce_scatter's work buffer, scratch units) moves to registered scratch segments of the registry,
 * since peers read it too. The pull engine needs the whole schedule (src_fresh: which of a peer's units still
 * hold its input): a rank whose entry is an own plan (built before this communicator had registered memory)
 * answers "not registered" for it.
 *
 * Waiting. Poll the peer's counter, yielding the core after every look, then sleep on it with FUTEX_WAIT
 * (shared: the word lives in a memfd mapped by several processes) in slices of ST_PULL_SLICE_MS, reading the
 * control channels before each: a peer's abort or death (its control socket closes) ends the wait within a slice.
 * A wait fails after the communicator's timeout without the peer posting, naming the rank behind (proc.c).
 * Why yield on every look, where the threads engine pauses unless its peer last ran on its own CPU: these calls
 * move 256 KiB or more, so the microsecond a yield adds to noticing a post is nothing, while a rank that pauses
 * holds a core its peer (or the peer's neighbour on a loaded host) may be queued for. Measured on the 2-core VM
 * under a load average of 17-20 (other jobs), 1 MB all_reduce at np 2, 100 calls: 1.5-3.5 ms a call when the
 * spin paused (STITCH_SPIN_US 500 and 5000) against 0.23 ms when every wait went to sleep at once (0), and thread
 * mode's 0.31 ms; the same processes yielding on every look: see docs/performance.md.
 *
 * CMA (STITCH_CMA=1, off by default: docs/performance.md has the figures). The same protocol, with a peer's
 * st_where holding addresses in the peer's process, never dereferenced here: a copy is one process_vm_readv straight
 * into my unit, a reduce reads ST_CMA_STAGE bytes at a time into a stage and reduces from there. The boards are
 * registered segments as above, and each peer borrows my board for the call, which stands for my buffers: a failed
 * call returns once no live peer holds it. A read the kernel refuses (another user, Yama, seccomp) fails the call
 * naming process_vm_readv; an address that is not mapped in the peer fails likewise (EFAULT), never here.
 *
 * Failure. Any failure aborts the communicator (the peers hear it over the control channels); this rank returns
 * its borrows and waits, up to the timeout, until no live peer borrows its segments any more (borrows are counted
 * per reader rank, so a dead one's are not waited for), so its caller may reuse them at once. A forged or stale handle (regmem.c refuses it) fails the call on the rank that read it, and so on
 * every rank.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "exec_msg.h"
#include "exec_pull.h"
#include "proc.h"
#include "pull.h"
#include "regmem.h"
#include "registry.h"

#define ST_PULL_G (UINT32_MAX - 1) /* the hello's step number in its header */
#define ST_PULL_SLICE_MS 20
enum { ST_R_WORK, ST_R_INPUT, ST_R_ALT, ST_R_UNITS, ST_R_N }; /* the regions of an st_where */

_Atomic long st_pull_calls;
void (*st_pull_step_hook)(uint64_t call, uint32_t g);
void (*st_pull_hello_hook)(struct st_reg_handle *board, struct st_reg_handle *regions, int n);

typedef struct st_hello {
    uint32_t ok;  /* every region of my call is registered */
    uint32_t cma; /* STITCH_CMA=1 here, and my board is made: peers may pull my regions with process_vm_readv */
    st_reg_handle board, r[ST_R_N];
    uint64_t addr[ST_R_N]; /* my regions in my address space, for process_vm_readv */
    char pad2[56];
} st_hello;
_Static_assert(sizeof(st_hello) % 64 == 0, "a hello is padded to 64 bytes as messages are");

typedef struct st_hello_in {
    union {
        struct {
            st_msg_hdr h;
            st_hello b;
        } m;
        char bytes[sizeof(st_msg_hdr) + sizeof(st_hello)];
    } u;
    size_t got, sent;
} st_hello_in;

typedef struct st_pctx {
    st_call m;
    stitch_comm_t *comm;
    const st_args *a;
    st_proc *pr;
    uint32_t base;
    st_seg_hdr *mine;            /* my board */
    st_where *pw;                /* per rank: where its blocks are, mapped here (mine for me) */
    st_seg_hdr **board;          /* per rank: its board, mapped here */
    st_seg_hdr **held;           /* the segments I borrowed, to return */
    int nheld;
    st_seg_hdr *used[ST_R_N + 1]; /* my segments of this call and my board, to drain on failure */
    st_hello_in *hi;             /* per rank: the hello exchange */
    st_hello hello;              /* mine */
    int cma;                     /* peers' regions are addresses in their processes, read with process_vm_readv */
    char *stage;                 /* cma: where a piece to reduce is read to */
} st_pctx;

#define ST_CMA_STAGE ((size_t)256 << 10) /* bytes read per process_vm_readv of a reduce: stays in cache */

/* ---- which engine ------------------------------------------------------------------------------------------ */

static int st_pull_may(const stitch_comm_t *comm, const st_args *a)
{
    const st_proc *pr = comm->proc;
    return comm->p > 1 && pr->nlocal == comm->p && a->coll != STITCH_ALL_TO_ALL_V &&
           a->count * stitch_dtype_size(a->dtype) >= ST_PULL_MIN_BYTES;
}

/* Bytes of region i the call may touch at any rank: what a peer checks a handle against. */
static size_t st_extent(const st_call *m, int i)
{
    size_t n = m->a->count * m->esize, p = (size_t)m->p;
    if (i == ST_R_UNITS)
        return (size_t)m->sched->nscratch * m->slot_stride * m->esize;
    if (i == ST_R_ALT)
        return m->a2a ? p * n : n;
    return m->a2a ? p * n : (size_t)st_coll_nblocks(m->a->coll, m->p) * n;
}

static const char *st_region(const st_where *w, int i)
{
    return i == ST_R_WORK ? w->work : i == ST_R_INPUT ? w->input : i == ST_R_ALT ? w->alt : w->units;
}

/* The handles of my regions in h->r, 1 when all are registered (else 0). Scratch of the call model moves to
 * registered scratch once the caller's own regions are registered (peers read it as they read the rest). */
static int st_hello_regions(st_pctx *c, st_regmem *r, st_hello *h)
{
    st_where *w = &c->m.mine;
    char err[256];
    char *moved;
    int scratch_work = w->work && w->work == c->comm->scratch;
    for (int i = 0; i < ST_R_N; i++)
        if (st_region(w, i) && !(i == ST_R_WORK && scratch_work) && i != ST_R_UNITS &&
            !st_regmem_find(r, st_region(w, i), st_extent(&c->m, i), &h->r[i]))
            return 0;
    if (!st_regmem_board(r, &h->board, err, sizeof err))
        return 0;
    if (scratch_work) {
        if (!(moved = st_regmem_scratch(r, 0, c->comm->scratch_size, 0, c->comm->timeout_ms, err, sizeof err)))
            return 0;
        w->work = moved;
    }
    if (w->units) {
        if (!(moved = st_regmem_scratch(r, 1, c->comm->units_size, 1, c->comm->timeout_ms, err, sizeof err)))
            return 0;
        w->units = moved;
    }
    for (int i = 0; i < ST_R_N; i++)
        if (st_region(w, i) && !st_regmem_find(r, st_region(w, i), st_extent(&c->m, i), &h->r[i]))
            return 0;
    return 1;
}

/* My answer: whether my regions are all registered (and their handles), whether peers may read them with
 * process_vm_readv (and their addresses, as the call will use them). */
static void st_hello_make(st_pctx *c)
{
    char err[256];
    st_hello *h = &c->hello;
    memset(h, 0, sizeof *h);
    for (int i = 0; i < ST_R_N; i++)
        h->r[i].fd = -1;
    if (!c->m.e->sched.partial) { /* the pull engine needs the whole schedule (the top of this file) */
        if (c->comm->settings.cma == 1)
            (void)st_proc_regmem(c->pr);
        st_regmem *r = c->pr->regmem;
        h->cma = r && c->comm->settings.cma == 1 && st_regmem_board(r, &h->board, err, sizeof err) != NULL;
        h->ok = r && st_hello_regions(c, r, h);
    }
    for (int i = 0; i < ST_R_N; i++) /* after any move of the scratch */
        h->addr[i] = (uintptr_t)st_region(&c->m.mine, i);
    if (h->ok && st_pull_hello_hook)
        st_pull_hello_hook(&h->board, h->r, ST_R_N);
}

/* ---- errors ------------------------------------------------------------------------------------------------ */

static stitch_status_t st_paborted(st_pctx *c)
{
    return st_comm_error(c->comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted: %s", c->a->fn,
                         c->comm->rank, st_abort_reason(&c->pr->abort));
}

static stitch_status_t st_ptimeout(st_pctx *c, int peer, const char *what)
{
    char behind[320];
    int ask_ms = c->comm->timeout_ms / 2;
    ask_ms = ask_ms < 250 ? 250 : ask_ms > 2000 ? 2000 : ask_ms;
    if (st_proc_behind(c->pr, peer, ask_ms, behind, sizeof behind) != 0)
        return st_paborted(c);
    return st_comm_fail(c->comm, STITCH_ERR_TIMEOUT, "%s: rank %d timed out after %d ms waiting for rank %d (%s, "
                        "call number %llu); %s", c->a->fn, c->comm->rank, c->comm->timeout_ms, peer, what,
                        (unsigned long long)c->m.fp.seq, behind);
}

/* Idle once more: yield or pause while the spin budget lasts, then let the caller sleep (*sleep). Fails on an
 * abort, or when the deadline (started at the first sleep) passed. */
typedef struct st_idler {
    long polls;
    int timing;
    struct timespec t0;
    st_deadline dl;
} st_idler;

static stitch_status_t st_idle(st_pctx *c, st_idler *w, int peer, const char *what, int *sleep)
{
    *sleep = 0;
    sched_yield(); /* every poll: see "Waiting" at the top of this file */
    if (++w->polls % 16 != 0)
        return STITCH_OK;
    if (st_abort_is(&c->pr->abort))
        return st_paborted(c);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (w->polls == 16)
        w->t0 = now;
    long ns = (now.tv_sec - w->t0.tv_sec) * 1000000000L + (now.tv_nsec - w->t0.tv_nsec);
    if (ns < c->pr->spin_ns)
        return STITCH_OK;
    if (st_proc_poll_ctrl(c->pr, 0) != 0)
        return st_paborted(c);
    if (!w->timing)
        st_deadline_start(&w->dl, c->comm->timeout_ms), w->timing = 1;
    else if (st_deadline_passed(&w->dl))
        return st_ptimeout(c, peer, what);
    *sleep = 1;
    return STITCH_OK;
}

/* ---- the hello ----------------------------------------------------------------------------------------------- */

/* The header's fingerprint against mine (the message engine's check, by the same function): a mismatch names
 * both sides' first differing field. */
static stitch_status_t st_hello_check(st_pctx *c, int src, const st_msg_hdr *h)
{
    char mine[96], theirs[96], why[160];
    stitch_status_t foreign = st_msg_foreign(h, src, c->comm->rank, c->m.fp.seq, c->a->coll, why, sizeof why);
    if (foreign != STITCH_OK)
        return st_comm_fail(c->comm, foreign, "%s: %s", c->a->fn, why);
    st_fingerprint f = {h->seq, h->coll, h->dtype, h->op, h->root, (size_t)h->count, st_reg_algo(c->comm->reg, h->algo)};
    int me = c->comm->rank, lo = me < src;
    if (st_fp_differ(&c->m.fp, &f, mine, theirs, sizeof mine))
        return st_comm_fail(c->comm, STITCH_ERR_MISMATCH, "%s: rank %d has %s but rank %d has %s", c->a->fn,
                            lo ? me : src, lo ? mine : theirs, lo ? src : me, lo ? theirs : mine);
    if (h->g != ST_PULL_G || h->bytes != sizeof(st_hello))
        return st_comm_fail(c->comm, STITCH_ERR_MISMATCH, "%s: rank %d expected rank %d's hello of call number %llu "
                            "but got its message for step %u (the two run different engines: a bug)", c->a->fn, me,
                            src, (unsigned long long)c->m.fp.seq, h->g);
    return STITCH_OK;
}

/* Push my hello to every peer and take theirs, as far as the streams allow now. *left: hellos not done. */
static stitch_status_t st_hello_progress(st_pctx *c, int *left, int *moved, int *waiting_for)
{
    char why[256];
    const size_t n = sizeof c->hi[0].u.bytes;
    *left = 0;
    for (int j = 0; j < c->m.p; j++) {
        st_hello_in *hi = &c->hi[j];
        st_tp *t = c->pr->tp[j];
        if (j == c->m.me)
            continue;
        if (hi->sent < n) {
            ssize_t k = t->ops->send(t, (const char *)&c->hi[c->m.me].u.bytes + hi->sent, n - hi->sent, why,
                                     sizeof why);
            if (k < 0)
                return st_proc_poll_ctrl(c->pr, 0) != 0 ? st_paborted(c)
                       : st_comm_fail(c->comm, STITCH_ERR_SYSTEM, "%s: rank %d: %s", c->a->fn, c->m.me, why);
            hi->sent += (size_t)k, *moved |= k > 0;
        }
        while (hi->got < n) {
            const void *p;
            ssize_t k = t->ops->peek(t, &p, why, sizeof why);
            if (k < 0)
                return st_proc_poll_ctrl(c->pr, 0) != 0 ? st_paborted(c)
                       : st_comm_fail(c->comm, STITCH_ERR_SYSTEM, "%s: rank %d: %s", c->a->fn, c->m.me, why);
            size_t take = (size_t)k < n - hi->got ? (size_t)k : n - hi->got;
            st_msg_hdr ch; /* a peer that runs the message engine on a call of a few bytes: a disagreement */
            if (hi->got == 0 && st_msg_compact_header(p, (size_t)k, j, &ch))
                return st_hello_check(c, j, &ch);
            if (take == 0)
                break;
            memcpy(hi->u.bytes + hi->got, p, take);
            t->ops->consume(t, take);
            hi->got += take, *moved = 1;
            if (hi->got >= sizeof(st_msg_hdr) && hi->got - take < sizeof(st_msg_hdr)) {
                stitch_status_t st = st_hello_check(c, j, &hi->u.m.h);
                if (st != STITCH_OK)
                    return st;
            }
        }
        if (hi->sent < n || hi->got < n)
            ++*left, *waiting_for = j;
    }
    return STITCH_OK;
}

/* The hello round: every rank's answer, then in *all 1 when every rank's buffers are registered, else 2 when every
 * rank may be read with process_vm_readv, else 0. */
static stitch_status_t st_hello_run(st_pctx *c, int *all)
{
    st_hello_in *me = &c->hi[c->m.me];
    const st_fingerprint *f = &c->m.fp;
    me->u.m.h = (st_msg_hdr){ST_MSG_MAGIC, c->m.me, f->seq, c->a->count, f->coll, f->dtype, f->op, f->root,
                             st_reg_index(c->comm->reg, c->m.e->sched.algo), ST_PULL_G, sizeof(st_hello), {0}};
    me->u.m.b = c->hello;
    st_idler w = {0};
    for (;;) {
        int left = 0, moved = 0, sleep = 0, peer = -1;
        stitch_status_t st = st_hello_progress(c, &left, &moved, &peer);
        if (st != STITCH_OK)
            return st;
        if (left == 0)
            break;
        if (moved) {
            w = (st_idler){0};
            continue;
        }
        if ((st = st_idle(c, &w, peer, "its answer to whether its buffers are registered", &sleep)) != STITCH_OK)
            return st;
        if (sleep) {
            uint32_t seen = st_proc_arm(c->pr);
            st_proc_block(c->pr, ST_PULL_SLICE_MS, 1, seen);
        }
    }
    int reg = 1, cma = 1;
    for (int j = 0; j < c->m.p; j++) {
        const st_hello *h = j == c->m.me ? &c->hello : &c->hi[j].u.m.b;
        reg &= h->ok != 0, cma &= h->cma != 0;
    }
    *all = reg ? 1 : cma ? 2 : 0;
    return STITCH_OK;
}

/* ---- borrowing the peers' memory ------------------------------------------------------------------------------ */

static stitch_status_t st_borrow(st_pctx *c, int q, const st_reg_handle *h, size_t len, st_seg_hdr **seg, char **at)
{
    char err[400];
    if (st_regmem_borrow(c->pr->regmem, q, c->pr->boot.peers[q].pid, h, len, seg, at, err, sizeof err) != 0)
        return st_comm_fail(c->comm, STITCH_ERR_INVALID_ARGUMENT, "%s: rank %d: %s", c->a->fn, c->m.me, err);
    c->held[c->nheld++] = *seg;
    return STITCH_OK;
}

/* Peer q's board and regions, mapped here and borrowed for the call. */
static stitch_status_t st_borrow_peer(st_pctx *c, int q)
{
    const st_hello *h = &c->hi[q].u.m.b;
    st_where *w = &c->pw[q];
    char *at;
    stitch_status_t st = st_borrow(c, q, &h->board, 0, &c->board[q], &at);
    memset(w, 0, sizeof *w);
    w->alt_block = !c->m.a2a && h->r[ST_R_ALT].fd >= 0 ? q : -1; /* scatter's, gather's non-roots: their own */
    if (c->cma) { /* addresses in q's process, read only through process_vm_readv */
        w->work = (char *)(uintptr_t)h->addr[ST_R_WORK], w->input = (char *)(uintptr_t)h->addr[ST_R_INPUT];
        w->alt = (char *)(uintptr_t)h->addr[ST_R_ALT], w->units = (char *)(uintptr_t)h->addr[ST_R_UNITS];
        w->alt_block = !c->m.a2a && w->alt ? q : -1;
        return st;
    }
    for (int i = 0; st == STITCH_OK && i < ST_R_N; i++) {
        st_seg_hdr *seg;
        if (h->r[i].fd < 0)
            continue;
        if ((st = st_borrow(c, q, &h->r[i], st_extent(&c->m, i), &seg, &at)) != STITCH_OK)
            break;
        if (i == ST_R_WORK)
            w->work = at;
        else if (i == ST_R_INPUT)
            w->input = at;
        else if (i == ST_R_ALT)
            w->alt = at;
        else
            w->units = at;
    }
    return st;
}

/* ---- the steps (threads/exec.c's protocol, its loop in comm/pull.c) ---------------------------------------------- */

static long st_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static void st_ppost(void *ctx, uint32_t v)
{
    st_pctx *c = ctx;
    atomic_store(&c->mine->posted, v); /* seq_cst, then the load of sleepers: job.c's argument */
    if (atomic_load(&c->mine->sleepers) != 0)
        st_futex(&c->mine->posted, FUTEX_WAKE, INT_MAX, NULL);
}

/* Wait for rank `peer` to post base + 1 + g. */
static stitch_status_t st_pwait(void *ctx, int peer, uint32_t g)
{
    st_pctx *c = ctx;
    st_seg_hdr *b = c->board[peer];
    uint32_t target = c->base + 1 + g;
    st_idler w = {0};
    for (;;) {
        uint32_t v = atomic_load_explicit(&b->posted, memory_order_acquire);
        int sleep = 0;
        if ((int32_t)(v - target) >= 0)
            return STITCH_OK;
        stitch_status_t st = st_idle(c, &w, peer, "the step before", &sleep);
        if (st != STITCH_OK)
            return st;
        if (!sleep)
            continue;
        struct timespec slice = {0, ST_PULL_SLICE_MS * 1000000L};
        atomic_fetch_add(&b->sleepers, 1);
        if ((int32_t)(atomic_load(&b->posted) - target) < 0)
            st_futex(&b->posted, FUTEX_WAIT, atomic_load(&b->posted), &slice);
        atomic_fetch_sub(&b->sleepers, 1);
    }
}

/* n elements of rank q's memory at src (an address in q's process) to dst: a copy read straight into dst, a
 * reduce read into the stage piece by piece, each piece then reduced from there. */
static stitch_status_t st_cma_move(st_pctx *c, int q, int op, char *dst, const char *in, const char *src, size_t n)
{
    size_t es = c->m.esize, per = op == ST_X_COPY ? n : ST_CMA_STAGE / es;
    for (size_t done = 0, k; done < n; done += k) {
        k = n - done < per ? n - done : per;
        char *to = op == ST_X_COPY ? dst + done * es : c->stage;
        for (size_t got = 0; got < k * es;) {
            struct iovec l = {to + got, k * es - got}, r = {(void *)(src + done * es + got), k * es - got};
            ssize_t more = process_vm_readv((pid_t)c->pr->boot.peers[q].pid, &l, 1, &r, 1, 0);
            if (more <= 0)
                return st_comm_fail(c->comm, STITCH_ERR_SYSTEM, "%s: rank %d: process_vm_readv of %zu bytes from "
                                    "rank %d failed: %s (STITCH_CMA=0 streams instead)", c->a->fn, c->m.me, k * es,
                                    q, more < 0 ? strerror(errno) : "nothing read");
            got += (size_t)more;
        }
        if (op != ST_X_COPY)
            st_call_move(&c->m, op, dst + done * es, in ? in + done * es : NULL, c->stage, k);
    }
    return STITCH_OK;
}

static stitch_status_t st_pmove(void *ctx, int q, int op, char *dst, const char *in, const char *src, size_t n)
{
    st_pctx *c = ctx;
    if (!c->cma || q == c->m.me || n == 0) {
        st_call_move(&c->m, op, dst, in, src, n);
        return STITCH_OK;
    }
    return st_cma_move(c, q, op, dst, in, src, n);
}

/* Apply transfer recvs[i] of my plan in the current segment (pull.h's st_pull_xfer), reading its source's units
 * through the source's st_where as mapped here, or with process_vm_readv. */
static stitch_status_t st_papply(void *ctx, int32_t i, int src, uint32_t g)
{
    st_pctx *c = ctx;
    (void)g;
    return st_pull_xfer(&c->m, i, &c->pw[src], 0, st_pmove, c);
}

static void st_pstep_begin(void *ctx, size_t k, int s, uint32_t g)
{
    st_pctx *c = ctx;
    c->pr->prog = (st_progress){c->m.fp.seq, (uint32_t)k, (uint32_t)s}; /* what a peer's progress query hears */
    if (st_pull_step_hook)
        st_pull_step_hook(c->m.fp.seq, g);
}

static uint32_t st_ptotal(const st_pctx *c)
{
    return st_pull_total(&c->m);
}

static stitch_status_t st_prun(st_pctx *c)
{
    st_pull p = {&c->m, c->base, 0, c, st_pwait, st_papply, st_ppost, st_pstep_begin};
    st_call_segment_begin(&c->m, 0);
    st_ppost(c, c->base + 1);
    return st_pull_steps(&p);
}

/* ---- a call ------------------------------------------------------------------------------------------------------ */

/* The pull engine on a call every rank agreed to pull. */
static stitch_status_t st_pull_run(st_pctx *c)
{
    stitch_status_t st = STITCH_OK;
    st_regmem *r = c->pr->regmem;
    char err[256];
    st_reg_handle h;
    c->mine = st_regmem_board(r, &h, err, sizeof err);
    c->board[c->m.me] = c->mine;
    c->used[ST_R_N] = c->mine; /* peers borrow it for the call (in cma mode the only borrow) */
    if (c->cma && !(c->stage = aligned_alloc(64, ST_CMA_STAGE)))
        st = st_comm_fail(c->comm, STITCH_ERR_NO_MEMORY, "%s: out of memory", c->a->fn);
    c->pw[c->m.me] = c->m.mine;
    for (int i = 0; i < ST_R_N && !c->cma; i++) /* my segments of the call, to drain if it fails */
        if (st_region(&c->m.mine, i) && st_regmem_find(r, st_region(&c->m.mine, i), 0, &h))
            c->used[i] = (st_seg_hdr *)(st_region(&c->m.mine, i) - h.off - ST_SEG_HDR);
    for (int i = 0; st == STITCH_OK && i < c->m.e->npeers; i++)
        st = st_borrow_peer(c, c->m.e->peers[i]);
    if (st == STITCH_OK)
        st = st_prun(c);
    for (int i = 0; i < c->nheld; i++)
        st_regmem_return(c->held[i], c->m.me);
    if (st == STITCH_OK) {
        c->comm->base = c->base + 1 + st_ptotal(c);
        atomic_fetch_add(&st_pull_calls, 1);
        return st;
    }
    if (!st_abort_is(&c->pr->abort))
        st_comm_tell(c->comm, st);
    for (int i = 0; i <= ST_R_N; i++) /* a failed call returns when no peer reads its buffers (bounded) */
        if (c->used[i])
            (void)st_regmem_drain(c->pr->regmem, c->used[i], c->comm->timeout_ms);
    return st;
}

stitch_status_t st_exec_proc(stitch_comm_t *comm, const st_args *a)
{
    if (!st_pull_may(comm, a))
        return st_exec_msg(comm, a);
    st_pctx c;
    memset(&c, 0, sizeof c);
    stitch_status_t st = st_call_open(&c.m, comm, a);
    if (st != STITCH_OK || !c.m.e)
        return st;
    int p = comm->p, all = 0;
    c.comm = comm, c.a = a, c.pr = comm->proc, c.base = comm->base;
    c.pw = calloc((size_t)p, sizeof *c.pw);
    c.board = calloc((size_t)p, sizeof *c.board);
    c.held = calloc((size_t)p * (ST_R_N + 1), sizeof *c.held);
    c.hi = calloc((size_t)p, sizeof *c.hi);
    if (!c.pw || !c.board || !c.held || !c.hi)
        st = st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: out of memory", a->fn);
    if (st == STITCH_OK) {
        st_hello_make(&c);
        st = st_hello_run(&c, &all);
    }
    c.cma = all == 2;
    if (st == STITCH_OK && all && st_debug() && !(c.pr->pull_said & all)) {
        c.pr->pull_said |= all;
        fprintf(stderr, "stitch: rank %d of %d: %s %s of %zu elements pulls %s (the first such call)\n", c.m.me, p,
                stitch_coll_name(a->coll), a->fn, a->count,
                all == 1 ? "from registered memory" : "with process_vm_readv (STITCH_CMA=1)");
    }
    if (st == STITCH_OK)
        st = all ? st_pull_run(&c) : st_exec_msg_call(comm, &c.m);
    free(c.stage);
    free(c.pw);
    free(c.board);
    free(c.held);
    free(c.hi);
    return st;
}
