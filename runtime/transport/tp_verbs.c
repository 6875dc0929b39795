/* tp_verbs.c - the verbs transport: an entry of transport.c's table for pairs whose ranks both have a usable RDMA
 * device (st_peer_info.verbs, published in the bootstrap's first phase), one RC queue pair per peer, every call
 * through verbs.h's table (libibverbs loaded at run time, or a test's emulator).
 *
 * The stream (transport.h) over one-sided writes. Each rank registers, per verbs peer, a receive ring (a power of
 * two, STITCH_IB_RING_BYTES, REMOTE_WRITE) and a staging ring of the peer's ring size (LOCAL only); setup swaps
 * QPN, PSN, LID, GID, ring address, rkey and size over the pair's control channel. send copies the caller's
 * bytes into the staging ring at the stream position and posts an RDMA WRITE_WITH_IMM of them to the same offset
 * of the peer's ring, in pieces of at most 64 KiB (the receiver starts reducing a large message while the rest is
 * on the wire), the immediate holding the length. The receiver learns of the bytes only from the receive
 * completion the immediate consumes: RC completes them in order, and the bytes of a write are all visible once
 * its completion is (one write does not say which of its bytes land last, so no tag in the data could publish
 * them as a store does in shm). So the receive ring is a byte stream with tcp's staging ring's layout: 64-byte
 * aligned, a power of two, wrapping only at 64-byte stream positions (a write never wraps: it is cut at the
 * ring's end), and peek shows the bytes arrived, in place, for the executor to reduce from.
 *
 * Credits (verbs_logic.c's st_vcredit). consume returns the space with a zero-length WRITE_WITH_IMM whose
 * immediate carries the bytes freed and the data writes seen since the last credit: so both halves of the
 * flow control (ring bytes and the receiver's posted receives) travel in one message and no memory is polled.
 * A sender keeps at most ST_VCREDIT_WRITES data writes not covered by a credit, a receiver sends at most two
 * credits per data write, so 4 x ST_VCREDIT_WRITES receives per queue pair (reposted as each is polled) are
 * never exhausted and no RNR can occur (rnr_retry is still 7, the hardware's "forever", for safety).
 *
 * The one-sided path (transport.h's st_tp_rma_ops; docs/onesided.md). A zero-copy *stream* send cannot work: send
 * returns with the bytes accepted and the executor reuses that memory at once, so the write would have to complete
 * first, a round trip per send. Messages of STITCH_IB_RMA_BYTES and more (the larger of the pair's two values, 0
 * on either side: off) take a rendezvous instead, which the executor drives per message: the receiver writes an
 * advert (call, step, bytes, address, rkey) into a 16-slot advert ring the sender registered for it (its address
 * and key travel in the setup exchange), with an immediate that numbers it; the sender, after the message's
 * header on the stream, takes the advert, checks it against its own message and writes the payload from its own
 * buffer with plain RDMA WRITEs, the last WITH_IMM (RC places the earlier writes' bytes first), or, when it cannot
 * (a piece would not register, more than ST_VPUT_MAX pieces, or an advert saying "stream"), writes a zero-length
 * cancel and sends the payload on the stream after the header. Both ends register the caller's memory through the
 * communicator's cache (mr_cache.h): bounded, LRU, never evicting an entry a posted write or an open advert holds,
 * invalidated by stitch_mr_invalidate and by a check on every hit. Adverts and outcomes use receives too: at most
 * ST_VADV adverts are open per direction, each answered by exactly one put or cancel immediate, so ST_VRQ holds
 * them beside the stream's. A call that fails (for any cause) stops its pairs' one-sided work (st_vrma_stop: the
 * queue pair to the error state), so no write reads or lands in the caller's buffers after it returns.
 *
 * Waking. One completion queue per communicator with one completion channel, shared by every peer's QP (sends,
 * receives, credits). pollfd hands proc.c an epoll descriptor holding the channel, the context's async-event
 * descriptor and an eventfd: before a rank sleeps, pollfd arms the CQ and polls it once more, and signals the
 * eventfd when that found something, so no completion between the last look and the arm is slept through. Any
 * peek or send drains the channel, the async events and the CQ (the progress of every peer), so a level-triggered
 * poll never returns at once for an event already handled.
 *
 * Failures. An error completion (its wr_id names the peer), an async event on a QP (QP fatal, access error),
 * port down, device fatal or a CQ error end every stream of the communicator: the first cause is kept, and every
 * later send, and every peek once the bytes that arrived before are used, fails with it, naming the peer ("rank 2
 * (pid 41 on b): verbs on mlx5_0 port 1: an RDMA write to it completed with "transport retry counter exceeded"
 * (IBV_WC_RETRY_EXC_ERR...)"), which the executor turns into an abort that the control channels carry to every
 * rank. Every stream, not only the pair's: a rank waiting for a third peer, whose data now never comes, fails at
 * once instead of at its timeout (measured under ASan: a QP fatal on a pair whose sends were done left the ring
 * waiting 4 s for the timeout). One exception: a failed credit write breaks only its pair, because a peer that
 * has finished its part of the last call may destroy its queue pairs while a credit is on its way to it; that
 * write fails, and must not fail what this rank still does with the others (a peer that really died mid-call is
 * also seen by its control channel, proc.c) - unless data writes to that peer are still in flight, which the
 * failed QP then loses. The QP's timeout (4.096 us x 2^14, ~67 ms) and retry count (7) bound how long a
 * dead peer or path takes to surface, about 0.5 s; a peer process that dies is also seen at once by its control
 * channel (proc.c). Teardown destroys QPs, then MRs, the CQ, the channel, the PD and the context, on every path
 * (a failed setup too: what exists is freed, in that order).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "mr_cache.h"
#include "tp_verbs.h"
#include "transport.h"
#include "verbs.h"

#define ST_VCHUNK ((size_t)64 << 10)        /* bytes per data write */
#define ST_VADV 16                          /* one-sided: adverts outstanding per direction of a pair */
#define ST_VPARTS 8                         /* one-sided: immediates per put (its chunks), at most */
/* receives posted per QP: the stream's, the adverts that may arrive, each advert's chunks and outcome */
#define ST_VRQ (4 * ST_VCREDIT_WRITES + ST_VADV + ST_VADV * ST_VPARTS)
#define ST_VSQ (4 * ST_VCREDIT_WRITES)      /* send queue depth per QP */
#define ST_VMAGIC 0x53545632u               /* "STV2": the info carries the one-sided fields */
#define ST_VADV_MAGIC 0x53544144u           /* "STAD" */
#define ST_VPUT_MAX 16                      /* pieces of one put (coalesced); more: sent on the stream */
enum { ST_WR_RECV = 0, ST_WR_DATA = 1, ST_WR_CREDIT = 2, ST_WR_RMA = 3 };

/* Immediates of the one-sided path (bit 31 clear: not a credit; bit 30 set: not a data write's length, which is
 * at most ST_VCHUNK): the kind in bits 28-29, the advert's number (mod 2^16) in the low bits, checked in order. */
#define ST_VIMM_RMA 0x40000000u
enum { ST_VRMA_ADV = 0, ST_VRMA_PUT = 1, ST_VRMA_CANCEL = 2, ST_VRMA_PART = 3 };

/* A put of `bytes` lands in chunks of this many bytes (all but the last), each announced by an immediate, so the
 * receiver can apply the first while the rest is on the wire: at least 256 KiB, at most ST_VPARTS of them, a
 * multiple of 4096 (so of every element size). Both ends compute it from the advert's bytes. */
static size_t st_vchunk(uint64_t bytes)
{
    size_t c = (size_t)((bytes + ST_VPARTS - 1) / ST_VPARTS + 4095) & ~(size_t)4095;
    return c < ((size_t)256 << 10) ? (size_t)256 << 10 : c;
}

/* An advert as it lands in the sender's advert ring (one 64-byte slot each). */
typedef struct st_vadv {
    uint64_t seq, bytes, addr; /* addr 0: send it on the stream */
    uint32_t g, n, rkey, magic;
    char pad[24];
} st_vadv;
_Static_assert(sizeof(st_vadv) == 64, "one advert per 64-byte slot");

/* A one-sided work request posted and not completed: the cache entry it holds, whether it is a put's. */
typedef struct st_vrwr {
    st_mrc_ent *ent;
    int put;
} st_vrwr;

typedef struct st_vx st_vx;

/* One peer: its queue pair, my receive ring from it, my staging ring toward it, the credits both ways. */
typedef struct st_vpeer {
    st_tp base;
    st_vx *x;
    struct ibv_qp *qp;
    char *rx, *stage;
    struct ibv_mr *rx_mr, *stage_mr;
    uint64_t raddr;
    uint32_t rkey;
    st_vcredit in, out;   /* in: the ring I receive into; out: the peer's ring, as I fill it */
    int sq_used;
    int data_out;         /* data writes posted and not completed */
    uint32_t credit_due;  /* a credit consume could not post yet (send queue full): sent with the next */
    int broken;           /* this pair failed: why says how */
    char why[300];
    /* the one-sided path (st_tp_rma_ops): the pair's threshold, my advert ring (the peer's adverts land there)
     * and the slots I post mine from, the peer's ring */
    size_t rma;
    char *adv_rx, *adv_tx;
    struct ibv_mr *adv_rx_mr, *adv_tx_mr;
    uint64_t adv_raddr;
    uint32_t adv_rkey;
    /* as receiver: adverts posted, outcomes arrived and taken, and per slot the outcome and the cache entry */
    uint32_t adv_n, res_in, res_used;
    uint8_t res_kind[ST_VADV];
    uint8_t res_parts[ST_VADV]; /* chunks of the advert's put that have landed (its outcome not yet) */
    st_mrc_ent *res_ent[ST_VADV];
    /* as sender: adverts arrived and taken, the one taken last, one-sided WRs in flight (FIFO), puts' WRs */
    uint32_t adv_in, adv_used;
    st_vadv cur;
    int cur_valid;
    st_vrwr rfifo[ST_VSQ];
    uint32_t rf_head, rf_tail;
    int put_out;
    int rma_stopped;      /* its QP was put in the error state (st_vrma_stop) */
} st_vpeer;

/* What two ranks swap in setup, per pair. */
typedef struct st_vinfo {
    uint32_t magic, qpn, psn, rkey;
    uint64_t addr, cap;
    uint16_t lid;
    uint8_t mtu, link;
    uint32_t pad;
    uint8_t gid[16];
    uint64_t rma, adv_addr; /* my one-sided threshold (0: off); my advert ring */
    uint32_t adv_rkey, pad2;
} st_vinfo;

struct st_vx {
    const st_verbs_api *api;
    st_links *l;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    int epfd, evfd;
    int armed;
    uint8_t port;
    int gid_index, eth;
    struct ibv_port_attr pattr;
    union ibv_gid gid;
    char dev[64];
    st_vpeer *peer;       /* per rank; qp NULL for ranks not over verbs */
    int ready;            /* setup completed: every verbs peer's QP is connected */
    int broken;           /* a failure that ends every stream: the device's, or a pair's (below) */
    int broken_peer;      /* the pair that failed, -1 for the device (port down, CQ error) */
    char why[300];        /* how, said by every later send and peek */
    st_mrc mrc;           /* registrations of user memory for the one-sided path (mr_cache.h) */
    pthread_mutex_t mlock; /* guards mrc: stitch_mr_invalidate may come from any thread */
    st_vx *next_live;     /* the process's live st_vx, for stitch_mr_invalidate */
};

/* ---- the registration cache's callbacks, and every live cache of the process ------------------------------ */

static pthread_mutex_t st_vlive_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t st_vputs, st_vcancels; /* messages written one-sided, and sent on the stream after an advert */
static st_vx *st_vlive;             /* guarded by st_vlive_lock */
static st_mrc_stats st_vretired;    /* the counters of caches already torn down */

static void *st_vmrc_reg(void *ctx, void *lo, size_t len, int access, uint32_t *lkey, uint32_t *rkey)
{
    st_vx *x = ctx;
    int flags = access == ST_MRC_REMOTE ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
    struct ibv_mr *mr = x->api->reg_mr(x->pd, lo, len, flags);
    if (mr)
        *lkey = mr->lkey, *rkey = mr->rkey;
    return mr;
}

static void st_vmrc_dereg(void *ctx, void *mr)
{
    st_vx *x = ctx;
    x->api->dereg_mr(mr);
}

/* Every page of the range mapped: msync's ENOMEM says one is not (MS_ASYNC writes nothing back). */
static int st_vmrc_mapped(void *ctx, uintptr_t lo, size_t len)
{
    (void)ctx;
    return msync((void *)lo, len, MS_ASYNC) == 0 || errno != ENOMEM;
}

static void st_vstats_add(st_mrc_stats *to, const st_mrc_stats *s)
{
    to->regs += s->regs, to->hits += s->hits, to->evictions += s->evictions;
    to->invalidations += s->invalidations, to->refused += s->refused;
    to->pinned += s->pinned;
    if (s->pinned_max > to->pinned_max)
        to->pinned_max = s->pinned_max;
}

void st_tp_verbs_cache_stats(st_mrc_stats *out)
{
    pthread_mutex_lock(&st_vlive_lock);
    *out = st_vretired;
    out->pinned = 0;
    for (st_vx *x = st_vlive; x; x = x->next_live) {
        pthread_mutex_lock(&x->mlock);
        st_vstats_add(out, &x->mrc.st);
        pthread_mutex_unlock(&x->mlock);
    }
    pthread_mutex_unlock(&st_vlive_lock);
}

void st_tp_verbs_rma_counts(uint64_t *puts, uint64_t *cancels)
{
    *puts = __atomic_load_n(&st_vputs, __ATOMIC_RELAXED);
    *cancels = __atomic_load_n(&st_vcancels, __ATOMIC_RELAXED);
}

void st_tp_verbs_invalidate(const void *p, size_t len)
{
    pthread_mutex_lock(&st_vlive_lock);
    for (st_vx *x = st_vlive; x; x = x->next_live) {
        pthread_mutex_lock(&x->mlock);
        st_mrc_invalidate(&x->mrc, p, len);
        pthread_mutex_unlock(&x->mlock);
    }
    pthread_mutex_unlock(&st_vlive_lock);
}

static st_mrc_ent *st_vmrc_get(st_vx *x, const void *p, size_t len, int access)
{
    pthread_mutex_lock(&x->mlock);
    st_mrc_ent *e = st_mrc_get(&x->mrc, p, len, access);
    pthread_mutex_unlock(&x->mlock);
    return e;
}

static void st_vmrc_hold(st_vx *x, st_mrc_ent *e)
{
    pthread_mutex_lock(&x->mlock);
    e->busy++;
    pthread_mutex_unlock(&x->mlock);
}

static void st_vmrc_release(st_vx *x, st_mrc_ent *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&x->mlock);
    st_mrc_release(&x->mrc, e);
    pthread_mutex_unlock(&x->mlock);
}

/* ---- failures ----------------------------------------------------------------------------------------------- */

/* A broken pair's one-sided work stops at once: its queue pair goes to the error state (flushing what it holds)
 * when puts from the caller's buffers or adverts of them are outstanding, because the call fails now and its
 * caller may free those buffers: no write may read or land in them after (a registration keeps the pages, but an
 * emulator reads and writes the addresses themselves). */
static void st_vrma_stop(st_vx *x, st_vpeer *p)
{
    struct ibv_qp_attr a;
    if (p->rma_stopped || (p->put_out == 0 && p->adv_n == p->res_used))
        return;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_ERR;
    p->rma_stopped = x->api->modify_qp(p->qp, &a, IBV_QP_STATE) == 0;
}

/* A failure of the pair with `peer` (-1: of the device). The first cause of a pair is the one told (a QP in error
 * then flushes everything else). `credit`: it is a credit write's, which breaks only that pair (a peer done with
 * the communicator may have destroyed its QPs: tp_verbs.c's opening comment); any other ends every stream, so a
 * rank that waits for a third peer (whose data will never come now) fails at once rather than at its timeout. */
static void st_vx_break(st_vx *x, int peer, int credit, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void st_vx_break(st_vx *x, int peer, int credit, const char *fmt, ...)
{
    st_vpeer *p = peer >= 0 ? &x->peer[peer] : NULL;
    if (p && p->broken)
        return;
    credit = credit && p && p->data_out == 0; /* with data in flight, the data is lost too */
    char cause[256], why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    snprintf(why, sizeof why, "verbs on %.60s port %u: %.200s", x->dev, x->port, cause);
    if (p)
        p->broken = 1, memcpy(p->why, why, sizeof why);
    if (!credit && !x->broken)
        x->broken = 1, x->broken_peer = peer, memcpy(x->why, why, sizeof why);
    for (int j = 0; j < x->l->boot->size; j++)
        if (x->peer[j].qp && (&x->peer[j] == p || x->broken))
            st_vrma_stop(x, &x->peer[j]);
}

static int st_vbroken(const st_vpeer *p)
{
    return p->broken || p->x->broken;
}

/* The enum's name, for a message a user can search for; the library's own words come with it. */
static const char *st_wc_name(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_LOC_LEN_ERR: return "IBV_WC_LOC_LEN_ERR";
    case IBV_WC_LOC_QP_OP_ERR: return "IBV_WC_LOC_QP_OP_ERR";
    case IBV_WC_LOC_PROT_ERR: return "IBV_WC_LOC_PROT_ERR";
    case IBV_WC_WR_FLUSH_ERR: return "IBV_WC_WR_FLUSH_ERR";
    case IBV_WC_REM_INV_REQ_ERR: return "IBV_WC_REM_INV_REQ_ERR";
    case IBV_WC_REM_ACCESS_ERR: return "IBV_WC_REM_ACCESS_ERR";
    case IBV_WC_REM_OP_ERR: return "IBV_WC_REM_OP_ERR";
    case IBV_WC_RETRY_EXC_ERR: return "IBV_WC_RETRY_EXC_ERR";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "IBV_WC_RNR_RETRY_EXC_ERR";
    default: return "IBV_WC status";
    }
}

static const char *st_event_name(enum ibv_event_type t)
{
    switch (t) {
    case IBV_EVENT_QP_FATAL: return "IBV_EVENT_QP_FATAL";
    case IBV_EVENT_QP_REQ_ERR: return "IBV_EVENT_QP_REQ_ERR";
    case IBV_EVENT_QP_ACCESS_ERR: return "IBV_EVENT_QP_ACCESS_ERR";
    case IBV_EVENT_PORT_ERR: return "IBV_EVENT_PORT_ERR";
    case IBV_EVENT_DEVICE_FATAL: return "IBV_EVENT_DEVICE_FATAL";
    case IBV_EVENT_CQ_ERR: return "IBV_EVENT_CQ_ERR";
    default: return "IBV_EVENT";
    }
}

static const char *st_wr_what(int kind)
{
    return kind == ST_WR_RECV ? "a receive" : kind == ST_WR_DATA ? "an RDMA write to it"
           : kind == ST_WR_CREDIT ? "a credit write to it" : "a one-sided write to it (advert, put or cancel)";
}

/* ---- progress: completions, async events ------------------------------------------------------------------- */

static int st_vpost_recv(st_vpeer *p, int peer)
{
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)peer << 2 | ST_WR_RECV, .sg_list = NULL, .num_sge = 0}, *bad;
    return p->x->api->post_recv(p->qp, &wr, &bad);
}

static int st_vpost_write(st_vpeer *p, int kind, size_t off, size_t len, uint32_t imm)
{
    struct ibv_sge sge = {(uint64_t)(uintptr_t)(p->stage + off), (uint32_t)len, p->stage_mr ? p->stage_mr->lkey : 0};
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)p->base.peer << 2 | (uint64_t)kind;
    wr.sg_list = len ? &sge : NULL;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm);
    wr.wr.rdma.remote_addr = p->raddr + off;
    wr.wr.rdma.rkey = p->rkey;
    int rc = p->x->api->post_send(p->qp, &wr, &bad);
    if (rc == 0)
        p->sq_used++;
    else
        st_vx_break(p->x, p->base.peer, kind == ST_WR_CREDIT, "posting %s failed: %s", st_wr_what(kind),
                    strerror(rc));
    return rc;
}

/* Post a due credit when the send queue has room. */
static void st_vcredit_flush(st_vpeer *p)
{
    if (p->credit_due && p->sq_used < ST_VSQ && !st_vbroken(p) && st_vpost_write(p, ST_WR_CREDIT, 0, 0, p->credit_due) == 0)
        p->credit_due = 0;
}

/* A one-sided immediate: an advert landed in my ring (I am the sender), or an advert's outcome (I am the
 * receiver); each is numbered, and must come in order and only for an advert that exists. */
static void st_vrma_arrived(st_vpeer *p, int peer, uint32_t imm)
{
    uint32_t kind = (imm >> 28) & 3u, n = imm & 0xffffu;
    if (kind == ST_VRMA_ADV) {
        if (n != (p->adv_in & 0xffffu) || p->adv_in - p->adv_used >= ST_VADV)
            st_vx_break(p->x, peer, 0, "advert %u arrived where advert %u was due (%u not yet taken)", n,
                        p->adv_in & 0xffffu, p->adv_in - p->adv_used);
        else
            p->adv_in++;
    } else if (kind == ST_VRMA_PART) { /* a chunk of the put for the oldest advert without an outcome */
        uint8_t *parts = &p->res_parts[p->res_in % ST_VADV];
        if (n != (p->res_in & 0xffffu) || p->res_in == p->adv_n || *parts >= ST_VPARTS)
            st_vx_break(p->x, peer, 0, "a chunk of advert %u's put arrived out of turn (advert %u due, %u chunks)",
                        n, p->res_in & 0xffffu, *parts);
        else
            ++*parts;
    } else if (kind == ST_VRMA_PUT || kind == ST_VRMA_CANCEL) {
        if (n != (p->res_in & 0xffffu) || p->res_in == p->adv_n)
            st_vx_break(p->x, peer, 0, "the outcome of advert %u arrived where that of %u was due (%u adverts)", n,
                        p->res_in & 0xffffu, p->adv_n);
        else
            p->res_kind[p->res_in++ % ST_VADV] = (uint8_t)kind;
    }
}

static void st_vx_complete(st_vx *x, const struct ibv_wc *wc)
{
    int peer = (int)(wc->wr_id >> 2), kind = (int)(wc->wr_id & 3);
    if (peer < 0 || peer >= x->l->boot->size || !x->peer[peer].qp) {
        st_vx_break(x, -1, 0, "a completion with an unknown work request id %llu", (unsigned long long)wc->wr_id);
        return;
    }
    st_vpeer *p = &x->peer[peer];
    if (p->broken)
        return; /* its QP is in error: the rest are flushes */
    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status == IBV_WC_WR_FLUSH_ERR && (p->rma_stopped || x->broken))
            return; /* the flush of a queue pair stopped here after a failure (st_vrma_stop): that is the cause */
        st_vx_break(x, peer, kind == ST_WR_CREDIT, "%s completed with \"%s\" (%s, vendor error 0x%x)%s",
                    st_wr_what(kind), x->api->wc_status_str(wc->status), st_wc_name(wc->status), wc->vendor_err,
                    wc->status == IBV_WC_RETRY_EXC_ERR ? ": the peer or the path to it is gone"
                    : wc->status == IBV_WC_WR_FLUSH_ERR ? ": the queue pair to it went into the error state (an error "
                                                          "on the peer's side, or an async event here)"
                    : wc->status == IBV_WC_REM_ACCESS_ERR ? ": the peer refused the key or range of a write" : "");
        return;
    }
    if (kind != ST_WR_RECV) {
        p->sq_used--;
        p->data_out -= kind == ST_WR_DATA;
        if (kind == ST_WR_RMA) { /* in posting order, as RC completes a send queue */
            st_vrwr *r = &p->rfifo[p->rf_tail++ % ST_VSQ];
            st_vmrc_release(x, r->ent);
            p->put_out -= r->put;
            r->ent = NULL;
        }
        st_vcredit_flush(p);
        return;
    }
    uint32_t imm = ntohl(wc->imm_data);
    if (!(wc->wc_flags & IBV_WC_WITH_IMM))
        st_vx_break(x, peer, 0, "a receive completed without an immediate (opcode %d)", (int)wc->opcode);
    else if (imm & ST_VIMM_CREDIT)
        st_vcredit_returned(&p->out, imm);
    else if (imm & ST_VIMM_RMA)
        st_vrma_arrived(p, peer, imm);
    else if (p->in.head + imm - p->in.tail > p->in.cap)
        st_vx_break(x, peer, 0, "it wrote %u bytes past my ring's free space", imm);
    else
        st_vcredit_arrived(&p->in, imm);
    if (!st_vbroken(p) && st_vpost_recv(p, peer) != 0)
        st_vx_break(x, peer, 0, "reposting a receive failed");
}

static void st_vx_async(st_vx *x)
{
    struct ibv_async_event ev;
    while (x->api->get_async_event(x->ctx, &ev) == 0) {
        enum ibv_event_type t = ev.event_type;
        int peer = -1;
        if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR || t == IBV_EVENT_QP_ACCESS_ERR)
            for (int j = 0; j < x->l->boot->size; j++)
                if (x->peer[j].qp && x->peer[j].qp == ev.element.qp)
                    peer = j;
        int fatal = peer >= 0 || t == IBV_EVENT_PORT_ERR || t == IBV_EVENT_DEVICE_FATAL || t == IBV_EVENT_CQ_ERR ||
                    t == IBV_EVENT_SRQ_ERR;
        if (fatal && (t != IBV_EVENT_PORT_ERR || ev.element.port_num == x->port))
            st_vx_break(x, peer, 0, "async event \"%s\" (%s%s)", x->api->event_type_str(t), st_event_name(t),
                        peer >= 0 ? ", on the queue pair to it" : t == IBV_EVENT_PORT_ERR ? ": the port went down" : "");
        x->api->ack_async_event(&ev);
    }
}

/* Everything that happened: channel events, async events, completions; and credits that waited. */
static void st_vx_progress(st_vx *x)
{
    struct ibv_cq *cq;
    void *cqctx;
    uint64_t v;
    while (x->api->get_cq_event(x->ch, &cq, &cqctx) == 0) { /* the channel is non-blocking: -1 when none */
        x->api->ack_cq_events(cq, 1);
        x->armed = 0;
    }
    if (read(x->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
        st_vx_break(x, -1, 0, "reading its eventfd: %s", strerror(errno));
    struct ibv_wc wc[32];
    int n;
    while ((n = x->api->poll_cq(x->cq, 32, wc)) > 0)
        for (int i = 0; i < n; i++)
            st_vx_complete(x, &wc[i]);
    if (n < 0)
        st_vx_break(x, -1, 0, "polling the completion queue failed (%d)", n);
    st_vx_async(x); /* after the completions: a QP's event follows the error completion that caused it */
}

/* ---- the stream ---------------------------------------------------------------------------------------------- */

/* The failure as the stream to p reports it, naming the peer: its own pair's, the pair that failed, or this
 * stream's peer and every other when the device failed. */
static ssize_t st_vx_failed(const st_vpeer *p, char *err, size_t errlen)
{
    const st_vx *x = p->x;
    int who = p->broken || x->broken_peer < 0 ? p->base.peer : x->broken_peer;
    const st_peer_info *pi = &x->l->boot->peers[who];
    snprintf(err, errlen, "rank %d (pid %u on %s)%s: %s", who, pi->pid, pi->hostname,
             p->broken || x->broken_peer >= 0 ? "" : " and every other verbs peer", p->broken ? p->why : x->why);
    return -1;
}


static ssize_t st_vsend(st_tp *t, const void *buf, size_t len, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    st_vx *x = p->x;
    st_vx_progress(x);
    size_t done = 0;
    while (!st_vbroken(p) && done < len && p->sq_used < ST_VSQ - 1) { /* one slot kept for a credit */
        size_t n = st_vcredit_room(&p->out, len - done < ST_VCHUNK ? len - done : ST_VCHUNK);
        if (n == 0)
            break;
        size_t off = (size_t)(p->out.wpos & (p->out.cap - 1));
        memcpy(p->stage + off, (const char *)buf + done, n);
        if (st_vpost_write(p, ST_WR_DATA, off, n, (uint32_t)n) != 0)
            break;
        st_vcredit_wrote(&p->out, n);
        p->data_out++;
        done += n;
    }
    if (st_vbroken(p))
        return st_vx_failed(p, err, errlen);
    return (ssize_t)done;
}

static ssize_t st_vpeek(st_tp *t, const void **ptr, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    st_vx_progress(p->x);
    size_t used = (size_t)(p->in.head - p->in.tail), at = (size_t)(p->in.tail & (p->in.cap - 1));
    if (used == 0 && st_vbroken(p)) /* what arrived before the failure is still good */
        return st_vx_failed(p, err, errlen);
    size_t contig = p->in.cap - at;
    *ptr = p->rx + at;
    return (ssize_t)(used < contig ? used : contig);
}

static void st_vconsume(st_tp *t, size_t n)
{
    st_vpeer *p = (st_vpeer *)t;
    uint32_t imm = st_vcredit_consumed(&p->in, n);
    if (imm)
        p->credit_due = p->credit_due ? ((p->credit_due & ~ST_VIMM_CREDIT) + (imm & ~ST_VIMM_CREDIT)) | ST_VIMM_CREDIT
                                      : imm;
    st_vcredit_flush(p);
}

/* Arm the CQ before a sleep, then look once more: what came in between sets the eventfd, so poll returns. */
static int st_vpollfd(const st_tp *t, short *events)
{
    st_vx *x = ((const st_vpeer *)t)->x;
    *events = POLLIN;
    if (!x->armed && !x->broken) {
        if (x->api->req_notify_cq(x->cq, 0) == 0)
            x->armed = 1;
        struct ibv_wc wc[8];
        int n = x->api->poll_cq(x->cq, 8, wc), any = n != 0;
        for (int i = 0; i < n; i++)
            st_vx_complete(x, &wc[i]);
        uint64_t one = 1;
        if ((any || !x->armed) && write(x->evfd, &one, sizeof one) < 0)
            (void)0; /* a full eventfd counter is readable anyway */
    }
    return x->epfd;
}

static void st_vclose(st_tp *t)
{
    (void)t; /* the peer's resources are the entry's: teardown frees them */
}

/* ---- the one-sided path (transport.h's st_tp_rma_ops) ------------------------------------------------------ */

/* Post one one-sided work request: RDMA WRITE (imm_kind < 0) or WRITE_WITH_IMM of [laddr, laddr + len) to raddr,
 * holding `ent` until it completes. The caller made sure the send queue has room. */
static int st_vpost_rma(st_vpeer *p, uint64_t laddr, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey,
                        int imm_kind, uint32_t n, st_mrc_ent *ent, int put)
{
    struct ibv_sge sge = {laddr, (uint32_t)len, lkey};
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)p->base.peer << 2 | ST_WR_RMA;
    wr.sg_list = len ? &sge : NULL;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = imm_kind < 0 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(ST_VIMM_RMA | (uint32_t)(imm_kind < 0 ? 0 : imm_kind) << 28 | (n & 0xffffu));
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    int rc = p->x->api->post_send(p->qp, &wr, &bad);
    if (rc != 0) {
        st_vx_break(p->x, p->base.peer, 0, "posting a one-sided write failed: %s", strerror(rc));
        return rc;
    }
    p->sq_used++;
    p->rfifo[p->rf_head++ % ST_VSQ] = (st_vrwr){ent, put};
    p->put_out += put;
    return 0;
}

static size_t st_vrma_threshold(const st_tp *t)
{
    return ((const st_vpeer *)t)->rma;
}

static int st_vrma_advert(st_tp *t, const st_tp_adv *a, void *at, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    st_vx_progress(p->x);
    if (st_vbroken(p))
        return (int)st_vx_failed(p, err, errlen);
    if (p->adv_n - p->res_used >= ST_VADV || p->sq_used >= ST_VSQ - 1)
        return 0;
    st_mrc_ent *e = NULL;
    if (at && !(e = st_vmrc_get(p->x, at, a->bytes, ST_MRC_REMOTE)))
        return 2;
    uint32_t slot = p->adv_n % ST_VADV;
    st_vadv *v = (st_vadv *)(p->adv_tx + slot * sizeof *v);
    *v = (st_vadv){a->seq, a->bytes, (uint64_t)(uintptr_t)at, a->g, p->adv_n, e ? e->rkey : 0, ST_VADV_MAGIC, {0}};
    if (st_vpost_rma(p, (uint64_t)(uintptr_t)v, p->adv_tx_mr->lkey, sizeof *v, p->adv_raddr + slot * sizeof *v,
                     p->adv_rkey, ST_VRMA_ADV, p->adv_n, NULL, 0) != 0) {
        st_vmrc_release(p->x, e);
        return (int)st_vx_failed(p, err, errlen);
    }
    p->res_ent[slot] = e;
    p->adv_n++;
    return 1;
}

static int st_vrma_landed(st_tp *t, size_t *got, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    st_vx_progress(p->x);
    if (p->res_used == p->res_in) {
        const st_vadv *v = (const st_vadv *)(p->adv_tx + (p->res_used % ST_VADV) * sizeof *v);
        size_t part = (size_t)p->res_parts[p->res_used % ST_VADV] * st_vchunk(v->bytes);
        *got = part < v->bytes ? part : (size_t)v->bytes;
        return st_vbroken(p) ? (int)st_vx_failed(p, err, errlen) : 0;
    }
    uint32_t slot = p->res_used++ % ST_VADV;
    p->res_parts[slot] = 0;
    st_vmrc_release(p->x, p->res_ent[slot]);
    p->res_ent[slot] = NULL;
    return p->res_kind[slot] == ST_VRMA_PUT ? 1 : 2;
}

static int st_vrma_next(st_tp *t, st_tp_adv *a, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    st_vx_progress(p->x);
    if (p->adv_used == p->adv_in)
        return st_vbroken(p) ? (int)st_vx_failed(p, err, errlen) : 0;
    const st_vadv *v = (const st_vadv *)(p->adv_rx + (p->adv_used % ST_VADV) * sizeof *v);
    if (v->magic != ST_VADV_MAGIC || v->n != p->adv_used) {
        st_vx_break(p->x, p->base.peer, 0, "advert %u is malformed (magic %08x, number %u)", p->adv_used, v->magic,
                    v->n);
        return (int)st_vx_failed(p, err, errlen);
    }
    p->cur = *v, p->cur_valid = 1;
    p->adv_used++;
    *a = (st_tp_adv){v->seq, v->g, 0, v->bytes};
    return 1;
}

/* The pieces joined where one ends at the next's start; -1 when more than ST_VPUT_MAX remain. */
static int st_vcoalesce(const struct iovec *iov, int n, struct iovec *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!iov[i].iov_len)
            continue;
        if (m && (char *)out[m - 1].iov_base + out[m - 1].iov_len == (char *)iov[i].iov_base)
            out[m - 1].iov_len += iov[i].iov_len;
        else if (m == ST_VPUT_MAX)
            return -1;
        else
            out[m++] = iov[i];
    }
    return m;
}

/* Tell the receiver its advert's payload comes on the stream. */
static int st_vrma_cancel(st_vpeer *p, char *err, size_t errlen)
{
    if (st_vpost_rma(p, 0, 0, 0, 0, 0, ST_VRMA_CANCEL, p->cur.n, NULL, 0) != 0)
        return (int)st_vx_failed(p, err, errlen);
    p->cur_valid = 0;
    __atomic_fetch_add(&st_vcancels, 1, __ATOMIC_RELAXED);
    return 2;
}

static int st_vrma_put(st_tp *t, const struct iovec *iov, int n, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    struct iovec piece[ST_VPUT_MAX];
    st_mrc_ent *ent[ST_VPUT_MAX];
    st_vx_progress(p->x);
    if (st_vbroken(p))
        return (int)st_vx_failed(p, err, errlen);
    if (!p->cur_valid) {
        snprintf(err, errlen, "verbs to rank %d: a put without an advert taken (internal)", p->base.peer);
        return -1;
    }
    int m = st_vcoalesce(iov, n, piece);
    if (p->sq_used + (m > 0 ? m + ST_VPARTS : 1) > ST_VSQ - 1)
        return 0; /* one slot stays for a credit, as in st_vsend */
    size_t total = 0;
    for (int i = 0; i < m; i++)
        total += piece[i].iov_len;
    if (m > 0 && total != p->cur.bytes) {
        snprintf(err, errlen, "verbs to rank %d: a put of %zu bytes for an advert of %llu (internal)", p->base.peer,
                 total, (unsigned long long)p->cur.bytes);
        return -1;
    }
    if (m <= 0 || !p->cur.addr)
        return st_vrma_cancel(p, err, errlen);
    for (int i = 0; i < m; i++)
        if (piece[i].iov_len > ((size_t)1 << 30) || !(ent[i] = st_vmrc_get(p->x, piece[i].iov_base, piece[i].iov_len,
                                                                           ST_MRC_LOCAL))) {
            while (i-- > 0)
                st_vmrc_release(p->x, ent[i]);
            return st_vrma_cancel(p, err, errlen); /* over the bound, or it would not register: the stream */
        }
    /* Every piece cut at the chunk boundaries of the whole: a write ending on one carries a PART immediate, the
     * last one the PUT. Each write holds its piece's entry once (released as it completes): the first write uses
     * the hold st_vmrc_get took, the others take one more. */
    size_t chunk = st_vchunk(total), off = 0;
    for (int i = 0; i < m; i++)
        for (size_t done = 0; done < piece[i].iov_len;) {
            size_t len = piece[i].iov_len - done, to_edge = chunk - off % chunk;
            len = len < to_edge ? len : to_edge;
            int last = off + len == total, edge = (off + len) % chunk == 0;
            if (done > 0)
                st_vmrc_hold(p->x, ent[i]);
            if (st_vpost_rma(p, (uint64_t)(uintptr_t)piece[i].iov_base + done, ent[i]->lkey, len, p->cur.addr + off,
                             p->cur.rkey, last ? ST_VRMA_PUT : edge ? ST_VRMA_PART : -1, p->cur.n, ent[i], 1) != 0) {
                st_vmrc_release(p->x, ent[i]); /* this write's hold */
                while (++i < m)
                    st_vmrc_release(p->x, ent[i]);
                return (int)st_vx_failed(p, err, errlen);
            }
            done += len, off += len;
        }
    p->cur_valid = 0;
    __atomic_fetch_add(&st_vputs, 1, __ATOMIC_RELAXED);
    return 1;
}

static int st_vrma_put_done(st_tp *t, char *err, size_t errlen)
{
    st_vpeer *p = (st_vpeer *)t;
    st_vx_progress(p->x);
    if (st_vbroken(p))
        return (int)st_vx_failed(p, err, errlen);
    return p->put_out == 0;
}

static void st_vrma_forget(st_tp *t, const void *ptr, size_t len)
{
    st_vx *x = ((st_vpeer *)t)->x;
    pthread_mutex_lock(&x->mlock);
    st_mrc_invalidate(&x->mrc, ptr, len);
    pthread_mutex_unlock(&x->mlock);
}

static void st_vrma_stop_t(st_tp *t)
{
    st_vpeer *p = (st_vpeer *)t;
    if (p->put_out == 0 && p->adv_n == p->res_used)
        return; /* nothing of the caller's in flight: the pair stays as it is */
    st_vx_break(p->x, p->base.peer, 1, "the call failed with one-sided writes in flight");
    st_vrma_stop(p->x, p);
}

static const st_tp_rma_ops st_verbs_rma = {
    .threshold = st_vrma_threshold, .advert = st_vrma_advert, .landed = st_vrma_landed, .next = st_vrma_next,
    .put = st_vrma_put, .put_done = st_vrma_put_done, .forget = st_vrma_forget, .stop = st_vrma_stop_t};

static const st_tp_ops st_verbs_ops = {
    .name = "verbs", .send = st_vsend, .peek = st_vpeek, .consume = st_vconsume, .pollfd = st_vpollfd,
    .close = st_vclose, .sendv = NULL, .rma = &st_verbs_rma, .fuse = 1};

/* ---- choosing the device, port and GID ---------------------------------------------------------------------- */

/* RoCE GID types from sysfs (RXE, mlx5: "RoCE v2" / "IB/RoCE v1"); 0 where there is no such file (an emulator). */
static int st_gid_type(const char *dev, int port, int index)
{
    char path[256], v[32] = "";
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev, port, index);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(v, sizeof v, f))
        v[0] = '\0';
    fclose(f);
    return strstr(v, "v2") ? 2 : v[0] ? 1 : 0;
}

/* The GID index of an open port: st_gid_pick over its table. */
static int st_vgid(const st_verbs_api *a, struct ibv_context *ctx, const char *dev, int port,
                   const struct ibv_port_attr *pa, int force, char *why, size_t whylen)
{
    int n = pa->gid_tbl_len > 0 && pa->gid_tbl_len < 256 ? pa->gid_tbl_len : 256;
    st_gid_slot *s = calloc((size_t)n, sizeof *s);
    if (!s) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        union ibv_gid g;
        if (a->query_gid(ctx, (uint8_t)port, i, &g) == 0)
            memcpy(s[i].raw, g.raw, 16), s[i].type = st_gid_type(dev, port, i);
    }
    int gi = st_gid_pick(s, n, pa->link_layer == IBV_LINK_LAYER_ETHERNET, force, why, whylen);
    free(s);
    return gi;
}

/* The first device and ACTIVE port STITCH_IB_DEV allows (opened into x when x is given), with its GID. Returns
 * ST_VERBS_IB / _ETH, or ST_VERBS_NONE with why. */
static int st_vpick(const st_verbs_api *a, const st_settings *s, st_vx *x, char *why, size_t whylen)
{
    int num = 0, found = ST_VERBS_NONE;
    struct ibv_device **list = a->get_device_list(&num);
    char last[200] = "";
    if (!list || num == 0) {
        snprintf(why, whylen, "%s found no RDMA device%s%s", a->name, errno && !list ? ": " : "",
                 errno && !list ? strerror(errno) : "");
        if (list)
            a->free_device_list(list);
        return ST_VERBS_NONE;
    }
    snprintf(last, sizeof last, "no device and ACTIVE port matches STITCH_IB_DEV='%s'", s->ib_dev ? s->ib_dev : "");
    for (int d = 0; d < num && found == ST_VERBS_NONE; d++) {
        const char *name = a->get_device_name(list[d]);
        struct ibv_context *ctx = a->open_device(list[d]);
        struct ibv_device_attr da;
        if (!ctx) {
            snprintf(last, sizeof last, "opening %s failed: %s", name, strerror(errno));
            continue;
        }
        int nports = a->query_device(ctx, &da) == 0 ? da.phys_port_cnt : 1;
        for (int port = 1; port <= nports && found == ST_VERBS_NONE; port++) {
            struct ibv_port_attr pa;
            int m = st_ib_dev_match(s->ib_dev, name, port, why, whylen), gi;
            if (m < 0) {
                a->close_device(ctx), a->free_device_list(list);
                return ST_VERBS_NONE;
            }
            if (!m || a->query_port(ctx, (uint8_t)port, &pa) != 0)
                continue;
            if (pa.state != IBV_PORT_ACTIVE) {
                snprintf(last, sizeof last, "%s port %d is not ACTIVE (state %d)", name, port, (int)pa.state);
                continue;
            }
            if ((gi = st_vgid(a, ctx, name, port, &pa, s->ib_gid_index, last, sizeof last)) < 0)
                continue;
            found = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? ST_VERBS_ETH : ST_VERBS_IB;
            if (x) {
                x->ctx = ctx, x->port = (uint8_t)port, x->pattr = pa, x->gid_index = gi;
                x->eth = found == ST_VERBS_ETH;
                snprintf(x->dev, sizeof x->dev, "%s", name);
                if (a->query_gid(ctx, (uint8_t)port, gi, &x->gid) != 0)
                    memset(&x->gid, 0, sizeof x->gid);
            }
        }
        if (!x || found == ST_VERBS_NONE)
            a->close_device(ctx);
    }
    a->free_device_list(list);
    if (found == ST_VERBS_NONE)
        snprintf(why, whylen, "%s", last);
    return found;
}

static char st_vprobe_why[300];

int st_tp_verbs_probe(const st_settings *s, char *why, size_t whylen)
{
    char w[300];
    static int said;
    const st_verbs_api *a = st_verbs_get(w, sizeof w);
    int found = a ? st_vpick(a, s, NULL, w, sizeof w) : ST_VERBS_NONE;
    if (found != ST_VERBS_NONE) {
        st_vprobe_why[0] = '\0';
        return found;
    }
    snprintf(st_vprobe_why, sizeof st_vprobe_why, "%s%.270s", a ? "" : "verbs unavailable: ", w);
    snprintf(why, whylen, "%s", st_vprobe_why);
    if (st_debug() && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "stitch: pid %d: no verbs transport: %s; process mode uses tcp between hosts\n",
                (int)getpid(), st_vprobe_why);
    return ST_VERBS_NONE;
}

const char *st_tp_verbs_why(void)
{
    return st_vprobe_why;
}

/* ---- the entry ------------------------------------------------------------------------------------------------ */

static int st_verbs_can_connect(const st_peer_info *me, const st_peer_info *peer, char *why, size_t whylen)
{
    if (me->verbs != ST_VERBS_NONE && me->verbs == peer->verbs)
        return 1;
    if (me->verbs == ST_VERBS_NONE)
        snprintf(why, whylen, "this rank has no usable RDMA device (%s)",
                 st_vprobe_why[0] ? st_vprobe_why : "verbs not probed: STITCH_TRANSPORT names another transport");
    else if (peer->verbs == ST_VERBS_NONE)
        snprintf(why, whylen, "pid %u on %s has no usable RDMA device", peer->pid, peer->hostname);
    else
        snprintf(why, whylen, "their devices have different link layers (InfiniBand and Ethernet)");
    return 0;
}

/* Write or read all of buf on a control socket before the deadline. */
static int st_vio(int fd, void *buf, size_t len, int writing, const struct timespec *at)
{
    for (size_t done = 0; done < len;) {
        if (st_poll1(fd, writing ? POLLOUT : POLLIN, at) <= 0)
            return -1;
        ssize_t n = writing ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return -1;
        done += n > 0 ? (size_t)n : 0;
    }
    return 0;
}

static struct ibv_mr *st_vreg(st_vx *x, size_t cap, int remote, char **buf)
{
    if (!(*buf = aligned_alloc(4096, (cap + 4095) & ~(size_t)4095)))
        return NULL;
    memset(*buf, 0, cap); /* touched now: the first pass through a fresh ring costs no faults (tp_tcp.c) */
    return x->api->reg_mr(x->pd, *buf, cap, IBV_ACCESS_LOCAL_WRITE | (remote ? IBV_ACCESS_REMOTE_WRITE : 0));
}

/* The device, PD, channel, CQ and the epoll set; then per peer a ring, a QP in INIT with its receives posted. */
static int st_vx_open(st_vx *x, int npeers, char *why, size_t whylen)
{
    const st_settings *s = x->l->s;
    if (st_vpick(x->api, s, x, why, whylen) == ST_VERBS_NONE)
        return -1;
    struct epoll_event ev = {.events = EPOLLIN};
    if (!(x->pd = x->api->alloc_pd(x->ctx)) || !(x->ch = x->api->create_comp_channel(x->ctx)) ||
        !(x->cq = x->api->create_cq(x->ctx, npeers * (ST_VSQ + ST_VRQ) + 1, x, x->ch, 0))) {
        snprintf(why, whylen, "%s: creating %s failed: %s", x->dev, !x->pd ? "a PD" : !x->ch ? "a completion channel" :
                 "a CQ", strerror(errno));
        return -1;
    }
    if ((x->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 || (x->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
        fcntl(x->ch->fd, F_SETFL, fcntl(x->ch->fd, F_GETFL) | O_NONBLOCK) != 0 ||
        fcntl(x->ctx->async_fd, F_SETFL, fcntl(x->ctx->async_fd, F_GETFL) | O_NONBLOCK) != 0 ||
        epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->ch->fd, &ev) != 0 ||
        epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->ctx->async_fd, &ev) != 0 ||
        epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->evfd, &ev) != 0) {
        snprintf(why, whylen, "%s: setting up its wake-up descriptors: %s", x->dev, strerror(errno));
        return -1;
    }
    return 0;
}

static int st_vqp_init(st_vx *x, st_vpeer *p, int j, char *why, size_t whylen)
{
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof ia);
    ia.send_cq = ia.recv_cq = x->cq;
    ia.cap.max_send_wr = ST_VSQ, ia.cap.max_recv_wr = ST_VRQ;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.qp_type = IBV_QPT_RC;
    struct ibv_qp_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.qp_state = IBV_QPS_INIT, qa.pkey_index = 0, qa.port_num = x->port;
    qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    size_t cap = x->l->s->ib_ring_bytes;
    p->in.cap = cap;
    int rc;
    if (!(p->rx_mr = st_vreg(x, cap, 1, &p->rx)) || !(p->adv_rx_mr = st_vreg(x, 4096, 1, &p->adv_rx)) ||
        !(p->adv_tx_mr = st_vreg(x, 4096, 0, &p->adv_tx))) {
        snprintf(why, whylen, "registering a %zu-byte receive ring and the advert rings for rank %d: %s", cap, j,
                 strerror(errno));
        return -1;
    }
    if (!(p->qp = x->api->create_qp(x->pd, &ia))) {
        snprintf(why, whylen, "creating the queue pair for rank %d: %s", j, strerror(errno));
        return -1;
    }
    if ((rc = x->api->modify_qp(p->qp, &qa,
                                IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) != 0) {
        snprintf(why, whylen, "queue pair for rank %d to INIT: %s", j, strerror(rc));
        return -1;
    }
    for (int i = 0; i < ST_VRQ; i++)
        if ((rc = st_vpost_recv(p, j)) != 0) {
            snprintf(why, whylen, "posting receives for rank %d: %s", j, strerror(rc));
            return -1;
        }
    return 0;
}

static void st_vinfo_mine(const st_vx *x, const st_vpeer *p, st_vinfo *m)
{
    memset(m, 0, sizeof *m);
    m->magic = ST_VMAGIC, m->qpn = p->qp->qp_num, m->rkey = p->rx_mr->rkey;
    m->addr = (uint64_t)(uintptr_t)p->rx, m->cap = p->in.cap;
    m->lid = x->pattr.lid, m->mtu = (uint8_t)x->pattr.active_mtu, m->link = (uint8_t)(x->eth ? 2 : 1);
    unsigned r = 0;
    FILE *f = fopen("/dev/urandom", "r");
    if (!f || fread(&r, sizeof r, 1, f) != 1)
        r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
    if (f)
        fclose(f);
    m->psn = r & 0xffffff;
    memcpy(m->gid, x->gid.raw, 16);
    m->rma = x->l->s->ib_rma_bytes;
    m->adv_addr = (uint64_t)(uintptr_t)p->adv_rx, m->adv_rkey = p->adv_rx_mr->rkey;
}

/* RTR toward the peer's info, then RTS from my PSN. modify_qp(RTR) may answer ETIMEDOUT while the kernel
 * resolves the peer's address (RXE does): retried a few times, as NCCL does. */
static int st_vqp_connect(st_vx *x, st_vpeer *p, int j, const st_vinfo *mine, const st_vinfo *th, char *why,
                          size_t whylen)
{
    struct ibv_qp_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.qp_state = IBV_QPS_RTR;
    qa.path_mtu = (enum ibv_mtu)(th->mtu < mine->mtu ? th->mtu : mine->mtu);
    qa.dest_qp_num = th->qpn, qa.rq_psn = th->psn;
    qa.max_dest_rd_atomic = 1, qa.min_rnr_timer = 12;
    qa.ah_attr.dlid = th->lid, qa.ah_attr.port_num = x->port;
    if (x->eth || x->pattr.lid == 0) {
        qa.ah_attr.is_global = 1;
        memcpy(qa.ah_attr.grh.dgid.raw, th->gid, 16);
        qa.ah_attr.grh.sgid_index = (uint8_t)x->gid_index, qa.ah_attr.grh.hop_limit = 64;
    }
    int rc = 0, mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    for (int tries = 0; tries < 5 && (rc = x->api->modify_qp(p->qp, &qa, mask)) == ETIMEDOUT; tries++)
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    if (rc != 0) {
        snprintf(why, whylen, "queue pair for rank %d to RTR: %s", j, strerror(rc));
        return -1;
    }
    memset(&qa, 0, sizeof qa);
    qa.qp_state = IBV_QPS_RTS, qa.sq_psn = mine->psn, qa.max_rd_atomic = 1;
    qa.timeout = 14, qa.retry_cnt = 7, qa.rnr_retry = 7;
    if ((rc = x->api->modify_qp(p->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT |
                                                IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY)) != 0) {
        snprintf(why, whylen, "queue pair for rank %d to RTS: %s", j, strerror(rc));
        return -1;
    }
    if (th->magic != ST_VMAGIC || th->cap < 4096 || (th->cap & (th->cap - 1)) || th->cap > ((size_t)8 << 20)) {
        snprintf(why, whylen, "rank %d sent malformed connection data", j);
        return -1;
    }
    p->raddr = th->addr, p->rkey = th->rkey, p->out.cap = (size_t)th->cap;
    p->adv_raddr = th->adv_addr, p->adv_rkey = th->adv_rkey;
    p->rma = th->rma && mine->rma ? (th->rma > mine->rma ? th->rma : mine->rma) : 0; /* the same at both ends */
    if (!(p->stage_mr = st_vreg(x, p->out.cap, 0, &p->stage))) {
        snprintf(why, whylen, "registering a %zu-byte staging ring for rank %d: %s", p->out.cap, j, strerror(errno));
        return -1;
    }
    return 0;
}

static int st_is_verbs(const st_links *l, int self, int j)
{
    return j != l->boot->rank && l->use[j] == self;
}

/* Swap connection data with every verbs peer (all sends, then all receives: each fits a socket buffer), connect
 * the QPs, then swap a ready byte: no rank writes before its peer's QP can take it. */
static int st_vx_exchange(st_vx *x, int self, char *why, size_t whylen)
{
    st_boot *b = x->l->boot;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += x->l->timeout_ms < 0 ? 24 * 3600 : x->l->timeout_ms / 1000 + 1;
    st_vinfo *mine = calloc((size_t)b->size, sizeof *mine), th;
    int rc = mine ? 0 : -1;
    for (int j = 0; j < b->size && rc == 0; j++)
        if (st_is_verbs(x->l, self, j)) {
            st_vinfo_mine(x, &x->peer[j], &mine[j]);
            if ((rc = st_vio(b->ctrl[j], &mine[j], sizeof mine[j], 1, &at)) != 0)
                snprintf(why, whylen, "sending connection data to rank %d failed", j);
        }
    for (int j = 0; j < b->size && rc == 0; j++)
        if (st_is_verbs(x->l, self, j)) {
            if ((rc = st_vio(b->ctrl[j], &th, sizeof th, 0, &at)) != 0)
                snprintf(why, whylen, "receiving connection data from rank %d failed (timeout or closed)", j);
            else
                rc = st_vqp_connect(x, &x->peer[j], j, &mine[j], &th, why, whylen);
        }
    free(mine);
    char ready = 'V';
    for (int j = 0; j < b->size && rc == 0; j++)
        if (st_is_verbs(x->l, self, j) && (rc = st_vio(b->ctrl[j], &ready, 1, 1, &at)) != 0)
            snprintf(why, whylen, "sending ready to rank %d failed", j);
    for (int j = 0; j < b->size && rc == 0; j++)
        if (st_is_verbs(x->l, self, j) && ((rc = st_vio(b->ctrl[j], &ready, 1, 0, &at)) != 0 || ready != 'V')) {
            snprintf(why, whylen, "waiting for rank %d to be ready failed", j);
            rc = -1;
        }
    return rc;
}

static stitch_status_t st_verbs_setup(st_links *l, int self, char *err, size_t errlen)
{
    if (l->count[self] == 0)
        return STITCH_OK; /* no verbs peer: no device opened, nothing collective */
    st_boot *b = l->boot;
    char why[400];
    st_vx *x = calloc(1, sizeof *x);
    if (!x || !(x->peer = calloc((size_t)b->size, sizeof *x->peer))) {
        free(x);
        snprintf(err, errlen, "rank %d: verbs: out of memory", b->rank);
        return STITCH_ERR_NO_MEMORY;
    }
    l->state[self] = x;
    x->l = l, x->epfd = x->evfd = -1;
    pthread_mutex_init(&x->mlock, NULL);
    x->mrc = (st_mrc){.bound = l->s->ib_mr_cache_bytes, .reg = st_vmrc_reg, .dereg = st_vmrc_dereg,
                      .mapped = st_vmrc_mapped, .ctx = x};
    if (!(x->api = st_verbs_get(why, sizeof why))) {
        snprintf(err, errlen, "rank %d: verbs unavailable: %s", b->rank, why);
        return STITCH_ERR_SYSTEM;
    }
    for (int j = 0; j < b->size; j++)
        x->peer[j].base.peer = j, x->peer[j].x = x, x->peer[j].base.ops = &st_verbs_ops;
    int rc = st_vx_open(x, l->count[self], why, sizeof why);
    for (int j = 0; j < b->size && rc == 0; j++)
        if (st_is_verbs(l, self, j))
            rc = st_vqp_init(x, &x->peer[j], j, why, sizeof why);
    if (rc == 0)
        rc = st_vx_exchange(x, self, why, sizeof why);
    if (rc != 0) {
        snprintf(err, errlen, "rank %d: verbs%s%s: %s", b->rank, x->dev[0] ? " on " : "", x->dev, why);
        return STITCH_ERR_SYSTEM; /* teardown frees what exists; the peers fail at our control EOF or their timeout */
    }
    x->ready = 1;
    pthread_mutex_lock(&st_vlive_lock);
    x->next_live = st_vlive, st_vlive = x;
    pthread_mutex_unlock(&st_vlive_lock);
    size_t rma = 0;
    char rs[40] = "off";
    for (int j = 0; j < b->size; j++)
        rma = x->peer[j].rma > rma ? x->peer[j].rma : rma;
    if (rma)
        snprintf(rs, sizeof rs, "from %zu B", rma);
    snprintf(l->note[self], sizeof l->note[self], "verbs %s port %u %s, GID index %d, MTU %d, via %s, one-sided %s",
             x->dev, x->port, x->eth ? "RoCE" : "InfiniBand", x->gid_index, 128 << x->pattr.active_mtu, x->api->name,
             rs);
    return STITCH_OK;
}

static stitch_status_t st_verbs_connect(st_links *l, int self, int peer, st_tp **out, char *err, size_t errlen)
{
    st_vx *x = l->state[self];
    if (!x || !x->peer[peer].qp) {
        snprintf(err, errlen, "rank %d: verbs to rank %d: not set up", l->boot->rank, peer);
        return STITCH_ERR_INTERNAL;
    }
    *out = &x->peer[peer].base;
    return STITCH_OK;
}

/* Wait for my writes still in flight (a message sent at the end of the last call, a credit) before their queue
 * pairs go: send() returned when the write was posted, and destroying its QP now would lose it while the peer still
 * waits for those bytes (tcp's close delivers what the socket holds; this is the same promise). Bounded: a write to
 * a live peer completes in microseconds, one to a dead peer fails within the retry budget (~0.5 s); 2 s at most. */
static void st_vx_drain(st_vx *x)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int pending = 0;
        for (int j = 0; j < x->l->boot->size; j++)
            pending += x->peer[j].qp && !st_vbroken(&x->peer[j]) && x->peer[j].sq_used > 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!pending || (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > 2000)
            return;
        short ev;
        struct pollfd pf = {st_vpollfd(&x->peer[0].base, &ev), POLLIN, 0};
        (void)poll(&pf, 1, 1);
        st_vx_progress(x);
    }
}

static void st_verbs_teardown(st_links *l, int self)
{
    st_vx *x = l->state[self];
    if (!x)
        return;
    const st_verbs_api *a = x->api; /* x exists: st_verbs_setup ran, with l->boot set (st_links_open) */
    if (x->ready)
        st_vx_drain(x);
    for (int j = 0; x->peer && j < l->boot->size; j++)
        if (x->peer[j].qp)
            a->destroy_qp(x->peer[j].qp);
    if (x->ready) { /* out of the live list before the cache goes: stitch_mr_invalidate may run meanwhile */
        pthread_mutex_lock(&st_vlive_lock);
        for (st_vx **at = &st_vlive; *at; at = &(*at)->next_live)
            if (*at == x) {
                *at = x->next_live;
                break;
            }
        st_vstats_add(&st_vretired, &x->mrc.st);
        st_vretired.pinned = 0;
        pthread_mutex_unlock(&st_vlive_lock);
        if (st_debug())
            fprintf(stderr, "stitch: rank %d: verbs registration cache: %llu registrations, %llu hits, %llu "
                    "evictions, %llu invalidations, %llu refused, %zu bytes pinned at most (bound %zu)\n",
                    l->boot->rank, (unsigned long long)x->mrc.st.regs, (unsigned long long)x->mrc.st.hits,
                    (unsigned long long)x->mrc.st.evictions, (unsigned long long)x->mrc.st.invalidations,
                    (unsigned long long)x->mrc.st.refused, x->mrc.st.pinned_max, x->mrc.bound);
    }
    st_mrc_clear(&x->mrc); /* the queue pairs are gone: nothing is in flight */
    pthread_mutex_destroy(&x->mlock);
    for (int j = 0; x->peer && j < l->boot->size; j++) {
        st_vpeer *p = &x->peer[j];
        if (p->rx_mr)
            a->dereg_mr(p->rx_mr);
        if (p->stage_mr)
            a->dereg_mr(p->stage_mr);
        if (p->adv_rx_mr)
            a->dereg_mr(p->adv_rx_mr);
        if (p->adv_tx_mr)
            a->dereg_mr(p->adv_tx_mr);
        free(p->rx);
        free(p->stage);
        free(p->adv_rx);
        free(p->adv_tx);
    }
    if (x->cq)
        a->destroy_cq(x->cq); /* every channel event was acked when it was read */
    if (x->ch)
        a->destroy_comp_channel(x->ch);
    if (x->pd)
        a->dealloc_pd(x->pd);
    if (x->ctx)
        a->close_device(x->ctx);
    if (x->epfd >= 0)
        close(x->epfd);
    if (x->evfd >= 0)
        close(x->evfd);
    free(x->peer);
    free(x);
    l->state[self] = NULL;
}

/* STITCH_IB_DEV: matched against a dummy name, so a malformed list fails at init. */
static stitch_status_t st_verbs_check(const st_settings *s, char *err, size_t errlen)
{
    return s->ib_dev && st_ib_dev_match(s->ib_dev, "", 1, err, errlen) < 0 ? STITCH_ERR_CONFIG : STITCH_OK;
}

const st_transport st_transport_verbs = {
    .name = "verbs",
    .data_socket = 0,
    .wake = ST_WAKE_FD,
    .can_connect = st_verbs_can_connect,
    .setup = st_verbs_setup,
    .connect = st_verbs_connect,
    .teardown = st_verbs_teardown,
    .check = st_verbs_check,
};

/* ---- stitch-info ---------------------------------------------------------------------------------------------- */

static const char *st_port_state(int s)
{
    static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
    return s >= 0 && s < 6 ? names[s] : "?";
}

/* One port: state, link layer, MTU, its non-empty GIDs with their sysfs types. */
static void st_vdescribe_port(FILE *f, const st_verbs_api *a, struct ibv_context *ctx, const char *name, int port)
{
    struct ibv_port_attr pa;
    if (a->query_port(ctx, (uint8_t)port, &pa) != 0) {
        fprintf(f, "    port %d: query_port failed: %s\n", port, strerror(errno));
        return;
    }
    fprintf(f, "    port %d: %s, link layer %s, active MTU %d, LID %u\n", port, st_port_state(pa.state),
            pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand", 128 << pa.active_mtu,
            pa.lid);
    int n = pa.gid_tbl_len > 0 && pa.gid_tbl_len < 256 ? pa.gid_tbl_len : 16, shown = 0;
    for (int i = 0; i < n; i++) {
        union ibv_gid g;
        static const uint8_t zero[16];
        char text[64];
        if (a->query_gid(ctx, (uint8_t)port, i, &g) != 0 || memcmp(g.raw, zero, 16) == 0)
            continue;
        int t = st_gid_type(name, port, i);
        fprintf(f, "      GID %d: %s%s\n", i, inet_ntop(AF_INET6, g.raw, text, sizeof text) ? text : "?",
                t == 2 ? " (RoCE v2)" : t == 1 ? " (RoCE v1 / IB)" : "");
        shown++;
    }
    if (!shown)
        fprintf(f, "      no non-empty GID\n");
}

void st_tp_verbs_describe(FILE *f, const st_settings *s)
{
    char why[300];
    const st_verbs_api *a = st_verbs_get(why, sizeof why);
    if (!a) {
        fprintf(f, "verbs: unavailable: %s (process mode uses tcp between hosts)\n", why);
        return;
    }
    int num = 0;
    struct ibv_device **list = a->get_device_list(&num);
    fprintf(f, "verbs (%s): %d device%s\n", a->name, list ? num : 0, list && num == 1 ? "" : "s");
    for (int d = 0; list && d < num; d++) {
        const char *name = a->get_device_name(list[d]);
        struct ibv_context *ctx = a->open_device(list[d]);
        struct ibv_device_attr da;
        if (!ctx) {
            fprintf(f, "  %s: cannot open: %s\n", name, strerror(errno));
            continue;
        }
        int nports = a->query_device(ctx, &da) == 0 ? da.phys_port_cnt : 1;
        fprintf(f, "  %s: %d port%s\n", name, nports, nports == 1 ? "" : "s");
        for (int port = 1; port <= nports; port++)
            st_vdescribe_port(f, a, ctx, name, port);
        a->close_device(ctx);
    }
    if (list)
        a->free_device_list(list);
    int found = st_tp_verbs_probe(s, why, sizeof why);
    if (found == ST_VERBS_NONE)
        fprintf(f, "  the transport would not use verbs: %s\n", why);
}
