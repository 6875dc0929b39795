/* exec_msg.c - the executor of process mode: one rank runs its plan of a schedule over message transports.
 *
 * Model. As in exec.c every rank keeps the whole vector in a work buffer (all_reduce and all_gather: recvbuf,
 * the input copied in first when out of place; reduce_scatter: a scratch of p * count). A transfer (src, dst,
 * units, copy|reduce) at step s is a message from src to dst: a 64-byte header, then the units' elements in run
 * order, padded to 64 bytes (small ones staged and sent in one piece, below). The receiver applies it in schedule order, straight out of the transport's buffer
 * (shm ring or tcp staging ring), piece by piece as bytes arrive, so transfer and reduction overlap and no
 * scratch copy is made. Within one step a rank pushes all its sends and applies all its receives concurrently
 * (a busy peer never blocks us: each pair is an ordered stream with its own buffer); the step ends when both
 * are done. The schedule guarantees (st_exec_prepare_entry) that a step never receives into a unit it sends.
 *
 * Segments. A vector larger than the segment size runs the whole schedule once per segment, as in exec.c; the
 * messages of segment k + 1 follow those of segment k on each stream, so a fast peer runs ahead into the next
 * segment while a slow one is still reducing (pipelining limited only by the ring sizes).
 *
 * Fingerprints. Every header carries the call's fingerprint (call number, collective, algorithm, count, dtype,
 * op, root) and the global step; the receiver checks it before applying anything, so ranks that disagree fail
 * with a message naming both sides' values. Because each pair's messages come in schedule order, a header that
 * does not match is always a real disagreement, never a reordering.
 *
 * Small messages. What a small message costs is synchronisation, not bytes: every transport send publishes a
 * head and rings a doorbell, every consume publishes a tail and rings one back, and each is a cache line that
 * crosses cores. So a message whose padded payload fits ST_SMALL_BYTES is staged whole at the start of its step
 * and sent in one call, and a receiver that finds a whole message contiguous in the buffer applies it and
 * consumes it at once (one send, one consume per message, not three of each). The fingerprint stays in every
 * header (64 bytes are no dearer than 16 to copy through a ring), but is checked with plain compares; the
 * field-by-field text is only made when something differs.
 *
 * Waiting. Spin on progress a while (a peer on another core answers within microseconds; pr->spin_ns), then
 * block in st_proc_block (futex on the shm doorbell or poll on the sockets), always in slices short enough to
 * honour the deadline and notice a dead peer (control channels, proc.c). When the host has more ranks than
 * cores the spin yields the core after every poll, so the peer we wait for, often queued on our own core, runs
 * at once. The clock is read every 16th poll only. 8 ranks on 2 cores still progress.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "exec_msg.h"
#include "proc.h"
#include "reduce.h"
#include "registry.h"

#define ST_MSG_MAGIC 0x53544d31u /* "STM1" */
/* <sched.h> is shadowed by runtime/sched.h inside the runtime: declare the one function we need. */
int sched_yield(void);

#define ST_BLOCK_MS 20 /* a sleeping rank wakes at least this often to check the deadline and dead peers */

typedef struct st_msg_hdr {
    uint32_t magic;
    int32_t src;
    uint64_t seq;
    uint64_t count;
    int32_t coll, dtype, op, root, algo;
    uint32_t g;
    uint64_t bytes; /* payload, before padding */
    char pad[8];
} st_msg_hdr;
_Static_assert(sizeof(st_msg_hdr) == 64, "message headers are 64 bytes: payloads stay aligned in the rings");

static const char st_zeros[64];

/* A message whose padded payload is at most this many bytes is staged whole (header, payload, padding) at the
 * start of its step and handed to the transport in one send: one ring update and one doorbell instead of three,
 * which is most of the cost of a small message (the copy of a few hundred bytes is not). */
#define ST_SMALL_BYTES 1024

/* A send in progress: header, then units of the transfer, then padding; or, when small, the staged copy. */
typedef struct st_out {
    const st_xfer *x;
    st_msg_hdr hdr;
    size_t hdr_done;
    size_t staged;      /* bytes in stage (0: not staged); hdr_done counts what of it is sent */
    int32_t run, unit;  /* cursor: run index and unit within it */
    size_t unit_done;   /* bytes of the current unit's span already sent */
    size_t pad_left;
    int done;
    char stage[sizeof(st_msg_hdr) + ST_SMALL_BYTES];
} st_out;

/* The receive in progress. */
typedef struct st_in {
    int32_t i;          /* position in plan.recvs; the step's end when done */
    int have_hdr;
    int32_t run, unit;
    size_t unit_done;
    size_t pad_left;
} st_in;

typedef struct st_mctx {
    stitch_comm_t *comm;
    st_proc *pr;
    const st_args *a;
    const st_entry *e;
    st_reduce_fn kernel;
    size_t esize;
    char *work;
    int nblocks, units_per_block, nsteps;
    size_t seg, nseg;
    st_msg_hdr fp;      /* the fingerprint fields of my headers */
    struct timespec deadline;
    st_out *outs;
    int nouts, nouts_cap;
    st_in in;
    int wait_peer;      /* whom the last unfinished work waits for, for timeout messages */
    struct timespec idle_since; /* when the current run of fruitless progress checks began */
} st_mctx;

/* ---- errors ---------------------------------------------------------------------------------------------- */

static stitch_status_t st_mfail(st_mctx *c, stitch_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static stitch_status_t st_mfail(st_mctx *c, stitch_status_t st, const char *fmt, ...)
{
    char msg[512], reason[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    st_comm_error(c->comm, st, "%s: %s", c->a->fn, msg);
    snprintf(reason, sizeof reason, "rank %d: %s", c->comm->rank, c->comm->last_error);
    st_proc_abort(c->pr, reason);
    st_job_abort(c->comm->job, reason);
    return st;
}

/* The communicator was aborted (by a peer's frame, a dead peer, or stitch_comm_abort): say why. */
static stitch_status_t st_aborted(st_mctx *c)
{
    return st_comm_error(c->comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted: %s", c->a->fn,
                         c->comm->rank, c->pr->reason[0] ? c->pr->reason : st_job_reason(c->comm->job));
}

/* ---- fingerprints ---------------------------------------------------------------------------------------- */

static const char *st_algo_name(int32_t idx)
{
    return idx >= 0 && idx < st_registry_count() ? st_builtin_catalogue.algos[idx].name : "?";
}

static int st_hdr_field(const st_msg_hdr *h, int i, char *buf, size_t len)
{
    switch (i) {
    case 0: snprintf(buf, len, "call number %llu", (unsigned long long)h->seq); return 1;
    case 1: snprintf(buf, len, "collective %s", stitch_coll_name((stitch_coll_t)h->coll)); return 1;
    case 2: snprintf(buf, len, "algorithm %s", st_algo_name(h->algo)); return 1;
    case 3: snprintf(buf, len, "count %llu", (unsigned long long)h->count); return 1;
    case 4: snprintf(buf, len, "dtype %s", stitch_dtype_name((stitch_dtype_t)h->dtype)); return 1;
    case 5: snprintf(buf, len, "op %s", h->op < 0 ? "none" : stitch_op_name((stitch_op_t)h->op)); return 1;
    case 6: snprintf(buf, len, "root %d", h->root); return 1;
    default: return 0;
    }
}

static stitch_status_t st_check_hdr(st_mctx *c, const st_msg_hdr *h, int src, uint32_t g, size_t bytes)
{
    char mine[96], theirs[96];
    const st_msg_hdr *f = &c->fp;
    /* The common case, every field as expected, costs a few compares; only a disagreement is formatted. */
    if (h->magic == ST_MSG_MAGIC && h->src == src && h->seq == f->seq && h->count == f->count &&
        h->coll == f->coll && h->dtype == f->dtype && h->op == f->op && h->root == f->root && h->algo == f->algo &&
        h->g == g && h->bytes == bytes)
        return STITCH_OK;
    if (h->magic != ST_MSG_MAGIC || h->src != src)
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: malformed message from rank %d (magic %08x, src %d)",
                        c->comm->rank, src, h->magic, h->src);
    for (int i = 0; st_hdr_field(&c->fp, i, mine, sizeof mine); i++) {
        st_hdr_field(h, i, theirs, sizeof theirs);
        if (strcmp(mine, theirs) == 0 && (i != 2 || h->algo == c->fp.algo))
            continue;
        int me = c->comm->rank, lo = me < src;
        return st_mfail(c, STITCH_ERR_MISMATCH, "rank %d has %s but rank %d has %s", lo ? me : src,
                        lo ? mine : theirs, lo ? src : me, lo ? theirs : mine);
    }
    if (h->g != g || h->bytes != bytes)
        return st_mfail(c, STITCH_ERR_INTERNAL, "rank %d: message from rank %d is for step %u with %llu bytes, "
                        "expected step %u with %zu bytes", c->comm->rank, src, h->g, (unsigned long long)h->bytes,
                        g, bytes);
    return STITCH_OK;
}

/* ---- spans ------------------------------------------------------------------------------------------------ */

/* Elements of the work buffer that unit u covers in segment k (as exec.c's st_span). */
static void st_mspan(const st_mctx *c, size_t k, int u, size_t *off, size_t *len)
{
    size_t n = c->a->count - k * c->seg;
    if (n > c->seg)
        n = c->seg;
    size_t o;
    st_unit_span(c->e->sched.nunits, c->nblocks, n, u, &o, len);
    size_t b = (size_t)(u / c->units_per_block);
    *off = b * c->a->count + k * c->seg + (o - b * n);
}

static size_t st_xfer_bytes(const st_mctx *c, const st_xfer *x, size_t k)
{
    size_t total = 0;
    for (int32_t r = x->run0; r < x->run0 + x->nruns; r++)
        for (int32_t u = c->e->sched.runs[r].start; u < c->e->sched.runs[r].start + c->e->sched.runs[r].len; u++) {
            size_t off, len;
            st_mspan(c, k, u, &off, &len);
            total += len;
        }
    return total * c->esize;
}

/* Advance a (run, unit) cursor of transfer x; 0 past the end. */
static int st_next_unit(const st_mctx *c, const st_xfer *x, int32_t *run, int32_t *unit)
{
    const st_run *r = &c->e->sched.runs[*run];
    if (++*unit < r->start + r->len)
        return 1;
    if (++*run >= x->run0 + x->nruns)
        return 0;
    *unit = c->e->sched.runs[*run].start;
    return 1;
}

/* ---- sending ---------------------------------------------------------------------------------------------- */

static int st_out_push(st_mctx *c, st_tp *t, const void *buf, size_t len, size_t *done, stitch_status_t *st)
{
    char why[256];
    ssize_t n = t->ops->send(t, (const char *)buf + *done, len - *done, why, sizeof why);
    if (n < 0) {
        *st = st_mfail(c, STITCH_ERR_SYSTEM, "rank %d: %s", c->comm->rank, why);
        return 0;
    }
    *done += (size_t)n;
    return *done == len;
}

/* ---- sending through a gather list (transports with sendv: tcp) ---- */

#define ST_IOV 16 /* pieces per call: header, units, padding; a message with more units takes more calls */

/* Mark n more bytes of o as sent: header first, then the units in order, then the padding. */
static void st_out_advance(const st_mctx *c, st_out *o, size_t k, size_t n)
{
    size_t h = sizeof o->hdr - o->hdr_done < n ? sizeof o->hdr - o->hdr_done : n;
    o->hdr_done += h, n -= h;
    while (o->run >= 0) { /* units of no elements are passed over even when n is spent */
        size_t off, len;
        st_mspan(c, k, o->unit, &off, &len);
        size_t left = len * c->esize - o->unit_done;
        if (left > n) {
            o->unit_done += n;
            return;
        }
        n -= left, o->unit_done = 0;
        if (!st_next_unit(c, o->x, &o->run, &o->unit))
            o->run = -1;
    }
    o->pad_left -= n; /* what is left of n is padding */
}

/* The unsent rest of o (up to ST_IOV pieces) in one sendv: on tcp one system call per message rather than one
 * for the header, one per unit and one for the padding, which is most of what a mid-size message costs there. */
static stitch_status_t st_out_progress_v(st_mctx *c, st_out *o, size_t k, int *moved)
{
    st_tp *t = c->pr->tp[o->x->dst];
    struct iovec iov[ST_IOV];
    int n = 0;
    char why[256];
    if (o->hdr_done < sizeof o->hdr)
        iov[n++] = (struct iovec){(char *)&o->hdr + o->hdr_done, sizeof o->hdr - o->hdr_done};
    int32_t r = o->run, u = o->unit;
    for (size_t done = o->unit_done; r >= 0 && n < ST_IOV - 1; done = 0) {
        size_t off, len;
        st_mspan(c, k, u, &off, &len);
        iov[n++] = (struct iovec){c->work + off * c->esize + done, len * c->esize - done};
        if (!st_next_unit(c, o->x, &r, &u))
            r = -1;
    }
    if (r < 0 && o->pad_left)
        iov[n++] = (struct iovec){(void *)st_zeros, o->pad_left};
    ssize_t sent = t->ops->sendv(t, iov, n, why, sizeof why);
    if (sent < 0)
        return st_mfail(c, STITCH_ERR_SYSTEM, "rank %d: %s", c->comm->rank, why);
    st_out_advance(c, o, k, (size_t)sent);
    *moved |= sent > 0;
    o->done = o->hdr_done == sizeof o->hdr && o->run < 0 && o->pad_left == 0;
    return STITCH_OK;
}

/* Push as much of one message as the transport takes. Returns STITCH_OK (check o->done) or an error. */
static stitch_status_t st_out_progress(st_mctx *c, st_out *o, size_t k, int *moved)
{
    st_tp *t = c->pr->tp[o->x->dst];
    stitch_status_t st = STITCH_OK;
    size_t before = o->hdr_done + o->unit_done;
    if (!o->staged && t->ops->sendv)
        return st_out_progress_v(c, o, k, moved);
    if (o->staged) {
        if (st_out_push(c, t, o->stage, o->staged, &o->hdr_done, &st))
            o->done = 1;
        goto out;
    }
    if (o->hdr_done < sizeof o->hdr && !st_out_push(c, t, &o->hdr, sizeof o->hdr, &o->hdr_done, &st))
        goto out;
    while (o->run >= 0) {
        size_t off, len;
        st_mspan(c, k, o->unit, &off, &len);
        len *= c->esize;
        if (!st_out_push(c, t, c->work + off * c->esize, len, &o->unit_done, &st))
            goto out;
        *moved = 1;
        o->unit_done = 0;
        if (!st_next_unit(c, o->x, &o->run, &o->unit))
            o->run = -1;
    }
    if (o->pad_left) {
        size_t done = 64 - o->pad_left;
        if (!st_out_push(c, t, st_zeros, 64, &done, &st)) {
            o->pad_left = 64 - done;
            goto out;
        }
        o->pad_left = 0;
    }
    o->done = 1;
out:
    *moved |= o->hdr_done + o->unit_done != before;
    return st;
}

static stitch_status_t st_sends_progress(st_mctx *c, size_t k, int *all_done, int *moved)
{
    *all_done = 1;
    for (int i = 0; i < c->nouts; i++) {
        st_out *o = &c->outs[i];
        if (o->done)
            continue;
        int blocked = 0; /* an earlier message to the same peer must go first */
        for (int j = 0; j < i && !blocked; j++)
            blocked = !c->outs[j].done && c->outs[j].x->dst == o->x->dst;
        stitch_status_t st = blocked ? STITCH_OK : st_out_progress(c, o, k, moved);
        if (st != STITCH_OK)
            return st;
        if (!o->done)
            *all_done = 0, c->wait_peer = o->x->dst;
    }
    return STITCH_OK;
}

/* Copy a small message whole into o->stage. The step never receives into a unit it sends (the schedule
 * guarantees it), so the units hold their final values for this step already. */
static void st_stage(const st_mctx *c, st_out *o, size_t k)
{
    char *p = o->stage;
    memcpy(p, &o->hdr, sizeof o->hdr);
    p += sizeof o->hdr;
    for (int32_t r = o->run, u = o->unit; r >= 0;) {
        size_t off, len;
        st_mspan(c, k, u, &off, &len);
        memcpy(p, c->work + off * c->esize, len * c->esize);
        p += len * c->esize;
        if (!st_next_unit(c, o->x, &r, &u))
            r = -1;
    }
    memset(p, 0, o->pad_left);
    o->staged = (size_t)(p - o->stage) + o->pad_left;
}

static stitch_status_t st_sends_begin(st_mctx *c, size_t k, int s)
{
    const st_plan *pl = &c->e->plan;
    int n = pl->send_first[s + 1] - pl->send_first[s];
    if (n > c->nouts_cap) {
        st_out *more = realloc(c->outs, sizeof *more * (size_t)n);
        if (!more)
            return st_mfail(c, STITCH_ERR_NO_MEMORY, "out of memory for %d sends", n);
        c->outs = more, c->nouts_cap = n;
    }
    c->nouts = 0;
    for (int32_t i = pl->send_first[s]; i < pl->send_first[s + 1]; i++) {
        const st_xfer *x = &c->e->sched.xfers[pl->sends[i]];
        if (x->dst == c->comm->rank)
            continue;
        st_out *o = &c->outs[c->nouts++];
        memset(o, 0, sizeof *o);
        o->x = x;
        o->hdr = c->fp;
        o->hdr.g = (uint32_t)(k * (size_t)c->nsteps) + (uint32_t)s;
        o->hdr.bytes = st_xfer_bytes(c, x, k);
        o->pad_left = (64 - o->hdr.bytes % 64) % 64;
        o->run = x->nruns > 0 ? x->run0 : -1;
        o->unit = x->nruns > 0 ? c->e->sched.runs[x->run0].start : 0;
        if (o->hdr.bytes + o->pad_left <= ST_SMALL_BYTES)
            st_stage(c, o, k);
    }
    return STITCH_OK;
}

/* ---- receiving -------------------------------------------------------------------------------------------- */

static void st_apply_bytes(st_mctx *c, const st_xfer *x, size_t off, const char *src, size_t n)
{
    char *dst = c->work + off;
    if (x->op == ST_X_COPY)
        memcpy(dst, src, n);
    else
        c->kernel(dst, src, n / c->esize);
}

/* Apply a message whose payload is wholly at src. */
static void st_apply_whole(st_mctx *c, const st_xfer *x, size_t k, const char *src)
{
    for (int32_t r = x->nruns > 0 ? x->run0 : -1, u = x->nruns > 0 ? c->e->sched.runs[x->run0].start : 0; r >= 0;) {
        size_t off, len;
        st_mspan(c, k, u, &off, &len);
        st_apply_bytes(c, x, off * c->esize, src, len * c->esize);
        src += len * c->esize;
        if (!st_next_unit(c, x, &r, &u))
            r = -1;
    }
}

/* Consume what is available of the current receive. Sets *step_done when the step's receives are all applied. */
static stitch_status_t st_recv_progress(st_mctx *c, size_t k, int s, int *step_done, int *moved)
{
    const st_plan *pl = &c->e->plan;
    char why[256];
    for (;;) {
        while (c->in.i < pl->recv_first[s + 1] && c->e->sched.xfers[pl->recvs[c->in.i]].src == c->comm->rank)
            c->in.i++; /* a copy onto itself: nothing to do (a reduce is refused when the plan is cached) */
        if (c->in.i >= pl->recv_first[s + 1]) {
            *step_done = 1;
            return STITCH_OK;
        }
        const st_xfer *x = &c->e->sched.xfers[pl->recvs[c->in.i]];
        st_tp *t = c->pr->tp[x->src];
        const void *p;
        c->wait_peer = x->src;
        if (c->in.have_hdr && c->in.run < 0 && c->in.pad_left == 0) { /* complete: never peek past it */
            c->in.have_hdr = 0;
            c->in.i++;
            continue;
        }
        ssize_t avail = t->ops->peek(t, &p, why, sizeof why);
        if (avail < 0) {
            if (st_proc_poll_ctrl(c->pr, 0) != 0) /* a peer's abort explains a closed stream better */
                return st_aborted(c);
            return st_mfail(c, STITCH_ERR_SYSTEM, "rank %d: %s", c->comm->rank, why);
        }
        if (!c->in.have_hdr) {
            if ((size_t)avail < sizeof(st_msg_hdr))
                return STITCH_OK;
            st_msg_hdr h;
            memcpy(&h, p, sizeof h);
            uint32_t g = (uint32_t)(k * (size_t)c->nsteps) + (uint32_t)s;
            size_t bytes = st_xfer_bytes(c, x, k);
            stitch_status_t st = st_check_hdr(c, &h, x->src, g, bytes);
            if (st != STITCH_OK)
                return st;
            size_t pad = (64 - bytes % 64) % 64;
            *moved = 1;
            if ((size_t)avail >= sizeof h + bytes + pad) { /* all here and contiguous: apply, consume once */
                st_apply_whole(c, x, k, (const char *)p + sizeof h);
                t->ops->consume(t, sizeof h + bytes + pad);
                c->in.i++;
                continue;
            }
            t->ops->consume(t, sizeof h);
            c->in.have_hdr = 1;
            c->in.run = x->nruns > 0 ? x->run0 : -1;
            c->in.unit = x->nruns > 0 ? c->e->sched.runs[x->run0].start : 0;
            c->in.unit_done = 0;
            c->in.pad_left = (64 - bytes % 64) % 64;
            continue;
        }
        if (c->in.run >= 0) {
            size_t off, len;
            st_mspan(c, k, c->in.unit, &off, &len);
            len *= c->esize;
            size_t n = len - c->in.unit_done;
            if ((size_t)avail < n)
                n = (size_t)avail / c->esize * c->esize;
            if (n == 0 && len > c->in.unit_done)
                return STITCH_OK;
            st_apply_bytes(c, x, off * c->esize + c->in.unit_done, p, n);
            t->ops->consume(t, n);
            *moved = 1;
            c->in.unit_done += n;
            if (c->in.unit_done == len) {
                c->in.unit_done = 0;
                if (!st_next_unit(c, x, &c->in.run, &c->in.unit))
                    c->in.run = -1;
            }
            continue;
        }
        if (c->in.pad_left) {
            size_t n = (size_t)avail < c->in.pad_left ? (size_t)avail : c->in.pad_left;
            if (n == 0)
                return STITCH_OK;
            t->ops->consume(t, n);
            c->in.pad_left -= n;
        }
    }
}

/* ---- the step loop ------------------------------------------------------------------------------------ */

static int st_past(const struct timespec *at)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > at->tv_sec || (now.tv_sec == at->tv_sec && now.tv_nsec >= at->tv_nsec);
}

static long st_ns_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000000000L + (now.tv_nsec - t0->tv_nsec);
}

/* Nothing moved: poll again while the spin budget lasts (pr->spin_ns; yielding when oversubscribed), then say
 * *sleep: the caller arms the doorbell, looks once more and blocks (st_mstep). The clock is read on every 16th
 * fruitless poll only, and the deadline only once the spin is over. */
static stitch_status_t st_idle(st_mctx *c, int *spins, int *sleep)
{
    if (atomic_load(&c->pr->aborted) || st_job_aborted(c->comm->job))
        return st_aborted(c);
    if ((*spins)++ == 0)
        clock_gettime(CLOCK_MONOTONIC, &c->idle_since);
    if (c->pr->spin_ns > 0 && (*spins % 16 != 0 || st_ns_since(&c->idle_since) < c->pr->spin_ns)) {
        if (c->pr->oversubscribed)
            sched_yield(); /* a peer that shares this core runs now */
        if (*spins % 4096 == 0 && st_proc_poll_ctrl(c->pr, 0) != 0)
            return st_aborted(c);
        return STITCH_OK;
    }
    if (c->comm->timeout_ms >= 0 && st_past(&c->deadline))
        return st_mfail(c, STITCH_ERR_TIMEOUT, "rank %d timed out after %d ms waiting for rank %d (call number "
                        "%llu)", c->comm->rank, c->comm->timeout_ms, c->wait_peer, (unsigned long long)c->fp.seq);
    *sleep = 1;
    return STITCH_OK;
}

/* One step: push the sends and apply the receives until both are done. Going to sleep takes two fruitless
 * looks with the doorbell armed in between (proc.h), so peers only pay for a wake-up while we really sleep. */
static stitch_status_t st_mstep(st_mctx *c, size_t k, int s)
{
    stitch_status_t st = st_sends_begin(c, k, s);
    int spins = 0, armed = 0;
    uint32_t seen = 0;
    c->in = (st_in){.i = c->e->plan.recv_first[s]};
    while (st == STITCH_OK) {
        int sends_done = 0, recvs_done = 0, moved = 0, sleep = 0;
        if ((st = st_sends_progress(c, k, &sends_done, &moved)) != STITCH_OK ||
            (st = st_recv_progress(c, k, s, &recvs_done, &moved)) != STITCH_OK || (sends_done && recvs_done) ||
            moved) {
            if (armed)
                st_proc_disarm(c->pr), armed = 0;
            if (st != STITCH_OK || (sends_done && recvs_done))
                return st;
            spins = 0;
            continue;
        }
        if (armed) { /* the look after arming found nothing either: sleep (st_proc_block disarms) */
            st_proc_block(c->pr, ST_BLOCK_MS, !sends_done, seen);
            armed = 0;
            if (atomic_load(&c->pr->aborted))
                return st_aborted(c);
            continue;
        }
        if ((st = st_idle(c, &spins, &sleep)) == STITCH_OK && sleep)
            seen = st_proc_arm(c->pr), armed = 1;
    }
    return st;
}

/* ---- setting up a call -------------------------------------------------------------------------------- */

static stitch_status_t st_mctx_init(st_mctx *c, stitch_comm_t *comm, const st_args *a, st_entry *e)
{
    memset(c, 0, sizeof *c);
    c->comm = comm, c->pr = comm->proc, c->a = a, c->e = e;
    c->esize = stitch_dtype_size(a->dtype);
    c->kernel = a->coll == STITCH_ALL_GATHER ? NULL : st_reduce_kernel(a->dtype, a->op);
    c->nblocks = st_coll_nblocks(a->coll, comm->p);
    c->units_per_block = e->sched.nunits / c->nblocks;
    c->nsteps = e->sched.nsteps;
    c->fp = (st_msg_hdr){ST_MSG_MAGIC, comm->rank, comm->seq, a->count, (int32_t)a->coll, (int32_t)a->dtype,
                         a->coll == STITCH_ALL_GATHER ? -1 : (int32_t)a->op, 0, st_registry_index(comm->algo[a->coll]),
                         0, 0, {0}};
    size_t per_block = comm->segment_bytes / ((size_t)c->nblocks * c->esize);
    c->seg = a->count, c->nseg = 1;
    if (per_block == 0)
        per_block = 1;
    if (c->nsteps > 0 && a->count > per_block)
        c->seg = per_block, c->nseg = (a->count + per_block - 1) / per_block;
    clock_gettime(CLOCK_MONOTONIC, &c->deadline);
    if (comm->timeout_ms > 0) {
        c->deadline.tv_sec += comm->timeout_ms / 1000;
        c->deadline.tv_nsec += (long)(comm->timeout_ms % 1000) * 1000000L;
        if (c->deadline.tv_nsec >= 1000000000L)
            c->deadline.tv_sec++, c->deadline.tv_nsec -= 1000000000L;
    }
    size_t one = a->count * c->esize;
    if (a->coll == STITCH_REDUCE_SCATTER) {
        stitch_status_t st = st_comm_scratch(comm, one * (size_t)comm->p, a->fn, &c->work);
        if (st == STITCH_OK)
            memcpy(c->work, a->send, one * (size_t)comm->p);
        return st;
    }
    c->work = a->recv;
    if (a->coll == STITCH_ALL_REDUCE && a->send != a->recv)
        memcpy(c->work, a->send, one);
    if (a->coll == STITCH_ALL_GATHER && (const char *)a->send != c->work + one * (size_t)comm->rank)
        memcpy(c->work + one * (size_t)comm->rank, a->send, one);
    return STITCH_OK;
}

stitch_status_t st_exec_msg(stitch_comm_t *comm, const st_args *a)
{
    st_entry *e;
    st_mctx c;
    if (atomic_load(&comm->proc->aborted) || st_job_aborted(comm->job))
        return st_comm_error(comm, STITCH_ERR_ABORTED, "%s: communicator aborted earlier: %s", a->fn,
                             comm->proc->reason[0] ? comm->proc->reason : st_job_reason(comm->job));
    if ((unsigned)a->coll > STITCH_ALL_GATHER)
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: not yet implemented for communicators whose "
                             "ranks are processes", a->fn);
    stitch_status_t st = st_comm_entry(comm, a->coll, a->fn, &e);
    if (st != STITCH_OK)
        return st;
    if (e->uses_at) /* every rank has the same schedule: all of them refuse alike */
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: algorithm '%s' uses scratch units or `at`, which "
                             "communicators whose ranks are processes do not run yet", a->fn, e->sched.algo->name);
    if (a->count == 0) {
        comm->seq++;
        return STITCH_OK;
    }
    if ((st = st_mctx_init(&c, comm, a, e)) != STITCH_OK)
        return st;
    comm->seq++;
    for (size_t k = 0; st == STITCH_OK && k < c.nseg; k++)
        for (int s = 0; st == STITCH_OK && s < c.nsteps; s++)
            st = st_mstep(&c, k, s);
    if (st == STITCH_OK && a->coll == STITCH_REDUCE_SCATTER)
        memmove(a->recv, c.work + a->count * c.esize * (size_t)comm->rank, a->count * c.esize);
    free(c.outs);
    return st;
}
