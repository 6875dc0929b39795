/* fake_engine.c - the emulator's RC engine: a requester and a responder half per QP, run inside verbs calls.
 *
 * Requester: cuts posted WRs into packets of the path MTU (reading the source buffers when each packet is cut, so a
 * buffer changed before its completion shows up at the peer), puts them into the peer QP's inbound ring, and turns
 * the peer's cumulative ACK and NAKs (in its own slot's mailbox) into completions, in order. A packet that is lost
 * (drop fault, port down, peer gone, peer QP not in RTR/RTS, wrong GID) or that the peer consumed without
 * acknowledging (wrong PSN) starts the retry timer: `timeout` expiries after retry_cnt retransmissions give
 * RETRY_EXC_ERR. Packets a live peer has not read yet never time out.
 * Responder: reads its ring in order, checks PSN, QP access, rkey, PD, range and MR access against this process's
 * tables, writes this process's memory, consumes receive WRs (RNR NAK when none), answers READs.
 * Errors: an error completion moves the QP to ERR, and every outstanding and later WR, send and receive, signalled
 * or not, completes with WR_FLUSH_ERR. Error completions carry garbage in the fields ibv_poll_cq(3) leaves undefined.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "fake_int.h"

static const uint32_t rnr_us[32] = {655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,   320,
                                    480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240, 15360,
                                    20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};

uint64_t fk_timeout_ns(int t)
{
    if (t == 0)
        return 0; /* infinite */
    uint64_t ns = (4096ull << t) / G.div;
    return ns < 200000 ? 200000 : ns;
}

uint64_t fk_rnr_ns(int t)
{
    return (uint64_t)rnr_us[t & 31] * 1000ull / G.div;
}

static uint32_t wire(const fk_qp *q, uint64_t ipsn)
{
    return (uint32_t)(q->psn_base + ipsn) & FK_PSN_MASK;
}

static fk_swr *swr(fk_qp *q, uint64_t i)
{
    return &q->sq[i % q->cap.max_send_wr];
}

static fk_rwr *rwr(fk_qp *q, uint64_t i)
{
    return &q->rq[i % q->cap.max_recv_wr];
}

fk_mr *fk_mr_by_lkey(uint32_t key)
{
    for (fk_mr *m = G.hl[key % 1024]; m; m = m->nl)
        if (m->mr.lkey == key)
            return m;
    return NULL;
}

fk_mr *fk_mr_by_rkey(uint32_t key)
{
    for (fk_mr *m = G.hr[key % 1024]; m; m = m->nr)
        if (m->mr.rkey == key)
            return m;
    return NULL;
}

void fk_publish_state(fk_qp *q)
{
    __atomic_store_n(&G.fab->qps[q->slot].state, (int32_t)q->qp.state, __ATOMIC_RELEASE);
}

/* ---- completions and events ----------------------------------------------------------------------------------- */
void fk_async(fk_ctx *c, enum ibv_event_type type, void *element)
{
    fk_aev *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    e->ev.event_type = type;
    if (type == IBV_EVENT_CQ_ERR)
        e->ev.element.cq = element;
    else if (type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_PORT_ACTIVE)
        e->ev.element.port_num = 1;
    else
        e->ev.element.qp = element;
    *c->aq_tail = e;
    c->aq_tail = &e->next;
    uint64_t one = 1;
    if (write(c->ctx.async_fd, &one, sizeof one) != (ssize_t)sizeof one)
        abort();
}

static void cq_overrun(fk_cq *cq)
{
    cq->overrun = 1;
    G.live.cq_overruns++;
    fprintf(stderr, "fakeverbs: CQ overrun on a CQ of %d entries: a completion was lost (IBV_EVENT_CQ_ERR, its QPs "
                    "go to ERR); size the CQ for every outstanding WR\n", cq->size);
    fk_async(cq->ctx, IBV_EVENT_CQ_ERR, &cq->cq);
    for (fk_qp *q = G.qps; q; q = q->next)
        if ((q->scq == cq || q->rcq == cq) && q->qp.state != IBV_QPS_ERR && q->qp.state != IBV_QPS_RESET)
            fk_qp_error(q);
}

void fk_cq_push(fk_cq *cq, fk_qp *q, const struct ibv_wc *wc, int is_send, uint64_t sqidx)
{
    if (cq->overrun)
        return; /* a CQ in error stays so */
    if (cq->count == cq->size) {
        cq_overrun(cq);
        return;
    }
    fk_cqe *e = &cq->e[(cq->head + cq->count) % cq->size];
    e->wc = *wc;
    e->qp = q;
    e->is_send = is_send;
    e->sqidx = sqidx;
    if (wc->status != IBV_WC_SUCCESS) {
        /* only wr_id, status, qp_num and vendor_err are defined: the rest is garbage, as on hardware */
        e->wc.opcode = (enum ibv_wc_opcode)0xa5;
        e->wc.byte_len = 0xa5a5a5a5u;
        e->wc.imm_data = 0xa5a5a5a5u;
        e->wc.wc_flags = 0xa5u & ~0u;
        e->wc.src_qp = 0xa5a5a5u;
        e->wc.slid = 0xa5a5;
        e->wc.vendor_err = 0xfa;
    }
    cq->count++;
    if (cq->armed && cq->chan) {
        cq->armed = 0;
        cq->ev_pending++;
        uint64_t one = 1; /* the channel's eventfd counts the events waiting */
        if (write(cq->chan->ch.fd, &one, sizeof one) != (ssize_t)sizeof one)
            abort();
    }
}

static void complete_send(fk_qp *q, uint64_t idx, enum ibv_wc_status st)
{
    fk_swr *w = swr(q, idx);
    if (st == IBV_WC_SUCCESS && !w->signaled)
        return;
    struct ibv_wc wc = {.wr_id = w->wr_id, .status = st, .qp_num = q->qp.qp_num};
    switch (w->opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: wc.opcode = IBV_WC_RDMA_WRITE; break;
    case IBV_WR_RDMA_READ: wc.opcode = IBV_WC_RDMA_READ; wc.byte_len = w->len; break;
    default: wc.opcode = IBV_WC_SEND; break;
    }
    fk_cq_push(q->scq, q, &wc, 1, idx);
}

void fk_flush_send(fk_qp *q, uint64_t idx)
{
    complete_send(q, idx, IBV_WC_WR_FLUSH_ERR);
}

void fk_flush_recv(fk_qp *q, uint64_t idx)
{
    struct ibv_wc wc = {.wr_id = rwr(q, idx)->wr_id, .status = IBV_WC_WR_FLUSH_ERR, .qp_num = q->qp.qp_num};
    fk_cq_push(q->rcq, q, &wc, 0, 0);
}

void fk_qp_error(fk_qp *q)
{
    q->qp.state = IBV_QPS_ERR;
    fk_publish_state(q);
    for (; q->sq_done < q->sq_post; q->sq_done++)
        fk_flush_send(q, q->sq_done);
    for (; q->rq_done < q->rq_post; q->rq_done++)
        fk_flush_recv(q, q->rq_done);
    q->rd.active = 0;
    q->deadline_ns = 0;
}

/* The send WR at the head failed: its error completion, then everything else flushes. */
static void fail_head(fk_qp *q, enum ibv_wc_status st)
{
    if (q->sq_done < q->sq_post)
        complete_send(q, q->sq_done++, st);
    fk_qp_error(q);
}

/* ---- the requester -------------------------------------------------------------------------------------------- */
static uint64_t wr_end(fk_qp *q, uint64_t i)
{
    fk_swr *w = swr(q, i);
    return w->ipsn0 + w->npkts;
}

/* Move una forward to `to` (internal PSN), completing the WRs it covers; a READ completes only by its responses. */
static void ack_upto(fk_qp *q, uint64_t to, uint64_t now)
{
    int moved = 0;
    while (q->una_ipsn < to && q->sq_done < q->sq_post) {
        fk_swr *w = swr(q, q->sq_done);
        if (w->opcode == IBV_WR_RDMA_READ)
            break;
        uint64_t end = wr_end(q, q->sq_done);
        uint64_t stop = to < end ? to : end;
        if (stop > q->una_ipsn) {
            q->una_ipsn = stop;
            moved = 1;
        }
        if (q->una_ipsn == end) {
            complete_send(q, q->sq_done++, IBV_WC_SUCCESS);
            moved = 1;
        } else
            break;
    }
    if (moved) {
        q->last_progress_ns = now;
        q->retry_left = q->a.retry_cnt;
        q->rnr_left = q->a.rnr_retry;
    }
}

static void rewind_tx(fk_qp *q, uint64_t to);

static uint64_t from_wire(fk_qp *q, uint32_t psn, int *ok)
{
    uint32_t d = (psn - wire(q, q->una_ipsn)) & FK_PSN_MASK;
    *ok = q->una_ipsn + d <= q->sent_hi;
    return q->una_ipsn + d;
}

static void requester_mail(fk_qp *q, uint64_t now)
{
    fk_qslot *me = &G.fab->qps[q->slot];
    uint32_t seq = __atomic_load_n(&me->nak_seq, __ATOMIC_ACQUIRE);
    if (seq != q->nak_seen) {
        q->nak_seen = seq;
        int ok;
        uint64_t at = from_wire(q, me->nak_psn, &ok);
        if (ok && at < q->sent_hi) {
            ack_upto(q, at, now); /* a NAK acknowledges what came before it */
            if (me->nak_kind == NAK_RNR) {
                if (q->a.rnr_retry != 7 && q->rnr_left-- <= 0) {
                    fail_head(q, IBV_WC_RNR_RETRY_EXC_ERR);
                    return;
                }
                rewind_tx(q, at);
                q->rnr_until_ns = now + fk_rnr_ns((int)me->nak_rnr);
                q->last_progress_ns = q->rnr_until_ns;
            } else {
                fail_head(q, me->nak_kind == NAK_ACCESS ? IBV_WC_REM_ACCESS_ERR
                           : me->nak_kind == NAK_INV_REQ ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR);
                return;
            }
        }
    }
    int ok;
    uint64_t to = from_wire(q, __atomic_load_n(&me->ack_psn, __ATOMIC_ACQUIRE), &ok);
    if (ok)
        ack_upto(q, to, now);
}

/* Can the peer still acknowledge what we gave it?  Rate-limited, since it may read /proc. */
static int peer_reachable(fk_qp *q, uint64_t now, int check_pid)
{
    fk_fabric *f = G.fab;
    if (q->peer_slot < 0)
        return 0;
    fk_qslot *s = &f->qps[q->peer_slot];
    if (__atomic_load_n(&s->qpn, __ATOMIC_ACQUIRE) != q->a.dest_qp_num)
        return 0;
    int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (st != IBV_QPS_RTR && st != IBV_QPS_RTS)
        return 0;
    int node = s->node, dev = s->dev;
    if (f->nodes[node].dead || f->nodes[node].port_down[dev] || f->nodes[G.node].dead ||
        f->nodes[G.node].port_down[q->ctx->dev->index])
        return 0;
    /* the address vector must name the node and device that own the QPN, as an IP route would */
    int gn, gd;
    if (fk_gid_node(&q->a.ah_attr.grh.dgid, dev, &gn, &gd) != 0 || gn != node || gd != dev)
        return 0;
    if (check_pid && !fk_pid_alive(s->pid))
        return 0;
    (void)now;
    return 1;
}

static int local_sge_ok(fk_qp *q, const struct ibv_sge *g, int need_write)
{
    fk_mr *m = fk_mr_by_lkey(g->lkey);
    if (!m || m->mr.pd != &q->pd->pd)
        return 0;
    if (need_write && !(m->access & IBV_ACCESS_LOCAL_WRITE))
        return 0;
    uint64_t a = (uint64_t)(uintptr_t)m->mr.addr;
    return g->addr >= a && g->addr + g->length <= a + m->mr.length && g->addr + g->length >= g->addr;
}

/* Copy `len` bytes at message offset `off` out of (or into) a WR's gather/scatter list. */
static void sg_copy(struct ibv_sge *sge, int nsge, uint64_t off, unsigned char *buf, uint32_t len, int into)
{
    for (int i = 0; i < nsge && len; i++) {
        if (off >= sge[i].length) {
            off -= sge[i].length;
            continue;
        }
        uint32_t n = sge[i].length - (uint32_t)off;
        if (n > len)
            n = len;
        unsigned char *p = (unsigned char *)(uintptr_t)(sge[i].addr + off);
        if (into)
            memcpy(p, buf, n);
        else
            memcpy(buf, p, n);
        buf += n;
        len -= n;
        off = 0;
    }
}

static int ring_put(int slot, uint32_t qpn, const fk_pkt *h, const void *data, uint64_t *pos)
{
    fk_qslot *s = &G.fab->qps[slot];
    fk_plock(&s->lock);
    int rc = 0;
    if (s->qpn != qpn)
        rc = -1;
    else if (s->head - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) >= FK_RING)
        rc = 1;
    else {
        fk_ringslot *r = &s->ring[s->head % FK_RING];
        r->h = *h;
        if (h->len)
            memcpy(r->data, data, h->len);
        __atomic_store_n(&s->head, s->head + 1, __ATOMIC_RELEASE);
        if (pos)
            *pos = s->head;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Cut and send packets; returns 1 when something went into the peer's ring. */
static int transmit(fk_qp *q, uint64_t now)
{
    static unsigned char buf[FK_PAYLOAD];
    int sent = 0;
    while (q->tx_ipsn < q->next_ipsn && now >= q->rnr_until_ns && q->tx_ipsn - q->una_ipsn < FK_WINDOW) {
        while (q->tx_wr < q->sq_post && wr_end(q, q->tx_wr) <= q->tx_ipsn)
            q->tx_wr++;
        if (q->tx_wr < q->sq_done)
            q->tx_wr = q->sq_done;
        fk_swr *w = swr(q, q->tx_wr);
        uint64_t k = q->tx_ipsn - w->ipsn0;
        if (w->lerr)
            break; /* reported when everything before it is acknowledged */
        int is_read = w->opcode == IBV_WR_RDMA_READ;
        fk_pkt h = {.type = PKT_REQ, .opcode = (uint8_t)w->opcode, .first = k == 0, .psn = wire(q, q->tx_ipsn),
                    .src_qpn = q->qp.qp_num, .dst_qpn = q->a.dest_qp_num, .rkey = w->rkey, .imm = w->imm,
                    .msg_len = w->len};
        h.off = is_read ? 0 : k * (uint64_t)q->mtu;
        h.len = is_read ? 0 : (uint32_t)(w->len - h.off < (uint64_t)q->mtu ? w->len - h.off : (uint64_t)q->mtu);
        h.last = is_read || k + 1 == w->npkts;
        h.raddr = w->raddr + h.off;
        if (h.first && (w->opcode == IBV_WR_RDMA_WRITE || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || is_read) &&
            fk_fault_hit(FK_RKEY, q))
            w->rkey ^= 0x5a5a0001u, h.rkey = w->rkey;
        if (!w->inl) {
            for (int i = 0; i < w->nsge; i++)
                if (!local_sge_ok(q, &w->sge[i], is_read)) {
                    w->lerr = 1;
                    break;
                }
            if (w->lerr)
                break;
        }
        if (h.len) {
            if (w->inl)
                memcpy(buf, w->inl + h.off, h.len);
            else
                sg_copy(w->sge, w->nsge, h.off, buf, h.len, 0);
        }
        int lost = fk_fault_hit(FK_DROP, q) || !peer_reachable(q, now, 0);
        if (!lost) {
            int rc = ring_put(q->peer_slot, q->a.dest_qp_num, &h, buf, &q->last_enq);
            if (rc == 1)
                break; /* ring full: try again at the next call */
            lost = rc != 0;
            sent |= rc == 0;
        }
        if (lost)
            q->lost = 1;
        if (q->tx_ipsn == q->una_ipsn)
            q->last_progress_ns = now; /* the retry timer (re)starts when the oldest packet goes (again) */
        q->tx_ipsn += is_read ? w->npkts : 1;
        if (q->tx_ipsn > q->sent_hi)
            q->sent_hi = q->tx_ipsn;
    }
    return sent;
}

/* Go back N: resend from the oldest unacknowledged packet (a READ restarts whole). */
static void rewind_tx(fk_qp *q, uint64_t to)
{
    if (q->sq_done < q->sq_post) {
        fk_swr *w = swr(q, q->sq_done);
        if (w->opcode == IBV_WR_RDMA_READ && to > w->ipsn0) {
            w->got = 0;
            q->una_ipsn = w->ipsn0;
            to = w->ipsn0;
        }
    }
    q->tx_ipsn = to;
    q->tx_wr = q->sq_done;
    q->lost = 0;
}

static void peer_lookup(fk_qp *q)
{
    for (int i = 0; i < FK_MAX_QPS; i++)
        if (__atomic_load_n(&G.fab->qps[i].qpn, __ATOMIC_ACQUIRE) == q->a.dest_qp_num) {
            q->peer_slot = i;
            return;
        }
}

static void requester(fk_qp *q, uint64_t now)
{
    if (q->qp.state != IBV_QPS_RTS)
        return;
    uint64_t peer_tail = q->peer_slot >= 0 ? __atomic_load_n(&G.fab->qps[q->peer_slot].tail, __ATOMIC_ACQUIRE) : 0;
    requester_mail(q, now);
    if (q->qp.state != IBV_QPS_RTS)
        return;
    /* a local error at the head: reported in order */
    if (q->sq_done < q->sq_post && swr(q, q->sq_done)->lerr && q->una_ipsn == swr(q, q->sq_done)->ipsn0) {
        fail_head(q, IBV_WC_LOC_PROT_ERR);
        return;
    }
    uint64_t T = fk_timeout_ns(q->a.timeout);
    /* the timer runs only while the oldest packet is out (not while a rewind waits to resend it) */
    if (q->una_ipsn < q->sent_hi && q->tx_ipsn > q->una_ipsn && now >= q->rnr_until_ns) {
        int held = 0;
        if (!q->lost && q->peer_slot >= 0 && peer_tail < q->last_enq) {
            /* the peer holds our packets unread: alive, it would have acknowledged them */
            held = peer_reachable(q, now, now >= q->next_live_check_ns);
            if (now >= q->next_live_check_ns)
                q->next_live_check_ns = now + (T ? T : 10000000);
        }
        if (held)
            q->last_progress_ns = now;
        else if (T && now >= q->last_progress_ns + T) { /* last_progress may be later than now */
            if (q->retry_left-- <= 0) {
                fail_head(q, IBV_WC_RETRY_EXC_ERR);
                return;
            }
            rewind_tx(q, q->una_ipsn);
            q->last_progress_ns = now;
        }
    }
    if (transmit(q, now))
        fk_kick_slot(q->peer_slot);
    q->deadline_ns = 0;
    if (q->una_ipsn < q->sent_hi || q->tx_ipsn < q->next_ipsn) {
        uint64_t d = q->rnr_until_ns > now ? q->rnr_until_ns : T ? q->last_progress_ns + T : 0;
        if (q->tx_ipsn < q->next_ipsn && !(q->rnr_until_ns > now))
            d = now + 1000000; /* ring full: look again in 1 ms */
        q->deadline_ns = d;
    }
}

/* ---- the responder -------------------------------------------------------------------------------------------- */
static void mailbox(fk_qp *q, int nak, uint32_t psn)
{
    if (q->peer_slot < 0)
        return;
    fk_qslot *s = &G.fab->qps[q->peer_slot];
    fk_plock(&s->lock);
    if (s->qpn == q->a.dest_qp_num) {
        __atomic_store_n(&s->ack_psn, q->epsn, __ATOMIC_RELEASE);
        if (nak) {
            s->nak_kind = (uint32_t)nak;
            s->nak_psn = psn;
            s->nak_rnr = q->a.min_rnr_timer;
            __atomic_add_fetch(&s->nak_seq, 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&s->lock);
    q->acked_pub = q->epsn;
    q->need_ack = 0;
    fk_kick_slot(q->peer_slot);
}

static void responder_fatal(fk_qp *q, int nak, uint32_t psn, enum ibv_wc_status recv_status)
{
    if (recv_status != IBV_WC_SUCCESS && q->rq_done < q->rq_post) {
        struct ibv_wc wc = {.wr_id = rwr(q, q->rq_done)->wr_id, .status = recv_status, .qp_num = q->qp.qp_num};
        fk_cq_push(q->rcq, q, &wc, 0, 0);
        q->rq_done++;
    }
    mailbox(q, nak, psn);
    fk_qp_error(q);
}

static int remote_ok(fk_qp *q, uint32_t rkey, uint64_t addr, uint64_t len, int access)
{
    fk_mr *m = fk_mr_by_rkey(rkey);
    if (!m || m->mr.pd != &q->pd->pd || !(m->access & access))
        return 0;
    uint64_t a = (uint64_t)(uintptr_t)m->mr.addr;
    return addr >= a && addr + len <= a + m->mr.length && addr + len >= addr;
}

/* READ responses still owed go into the requester's ring; 0 when all are out */
static int read_responses(fk_qp *q)
{
    static unsigned char buf[FK_PAYLOAD];
    while (q->rd.active) {
        uint64_t k = q->rd.off / (uint64_t)q->mtu;
        uint32_t n = q->rd.len - q->rd.off < (uint64_t)q->mtu ? (uint32_t)(q->rd.len - q->rd.off) : (uint32_t)q->mtu;
        fk_pkt h = {.type = PKT_RESP, .opcode = IBV_WR_RDMA_READ, .first = k == 0,
                    .last = q->rd.off + n >= q->rd.len, .psn = (q->rd.psn0 + (uint32_t)k) & FK_PSN_MASK,
                    .src_qpn = q->qp.qp_num, .dst_qpn = q->a.dest_qp_num, .len = n, .msg_len = q->rd.len,
                    .off = q->rd.off};
        if (n)
            memcpy(buf, (void *)(uintptr_t)(q->rd.raddr + q->rd.off), n);
        int rc = peer_reachable(q, 0, 0) ? ring_put(q->peer_slot, q->a.dest_qp_num, &h, buf, NULL) : -1;
        if (rc == 1) {
            fk_kick_slot(q->peer_slot); /* what went in; the rest when the requester has read it (deadline) */
            return 1;
        }
        q->rd.off += n;
        if (h.last)
            q->rd.active = 0;
    }
    fk_kick_slot(q->peer_slot);
    return 0;
}

/* A READ response for our own requester */
static void read_response(fk_qp *q, const fk_ringslot *r)
{
    if (q->qp.state != IBV_QPS_RTS || q->sq_done >= q->sq_post)
        return;
    fk_swr *w = swr(q, q->sq_done);
    if (w->opcode != IBV_WR_RDMA_READ || r->h.psn != wire(q, q->una_ipsn) || r->h.off != w->got)
        return; /* duplicate or out of order: dropped, the timer recovers */
    for (int i = 0; i < w->nsge; i++)
        if (!local_sge_ok(q, &w->sge[i], 1)) {
            fail_head(q, IBV_WC_LOC_PROT_ERR);
            return;
        }
    sg_copy(w->sge, w->nsge, r->h.off, (unsigned char *)r->data, r->h.len, 1);
    w->got += r->h.len;
    if (q->una_ipsn + 1 < w->ipsn0 + w->npkts)
        q->una_ipsn++;
    if (r->h.last) {
        q->una_ipsn = w->ipsn0 + w->npkts;
        complete_send(q, q->sq_done++, IBV_WC_SUCCESS);
    }
    q->last_progress_ns = fk_now();
    q->retry_left = q->a.retry_cnt;
}

static uint64_t rq_capacity(fk_qp *q, fk_rwr *r)
{
    uint64_t n = 0;
    for (int i = 0; i < r->nsge; i++)
        n += r->sge[i].length;
    (void)q;
    return n;
}

/* One request packet; returns 0 when handled (or dropped). */
static void request(fk_qp *q, const fk_ringslot *r)
{
    const fk_pkt *h = &r->h;
    if (q->qp.state != IBV_QPS_RTR && q->qp.state != IBV_QPS_RTS)
        return;
    if (G.fab->nodes[G.node].dead || G.fab->nodes[G.node].port_down[q->ctx->dev->index])
        return;
    if (h->psn != q->epsn) {
        if (((q->epsn - h->psn) & FK_PSN_MASK) < 0x800000)
            q->need_ack = 1; /* a duplicate: acknowledge again */
        return;              /* ahead: dropped, the requester retries */
    }
    int op = h->opcode;
    int imm = op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM;
    int needs_recv = imm || op == IBV_WR_SEND;
    int is_write = op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
    if (h->first) {
        /* each firing of the rnr fault is one RNR NAK (count=N: N of them, on this message's retransmissions) */
        if (needs_recv && (q->rq_done == q->rq_post || fk_fault_hit(FK_RNR, q))) {
            mailbox(q, NAK_RNR, h->psn);
            return;
        }
        if ((is_write && !(q->a.qp_access_flags & IBV_ACCESS_REMOTE_WRITE)) ||
            (op == IBV_WR_RDMA_READ && !(q->a.qp_access_flags & IBV_ACCESS_REMOTE_READ))) {
            responder_fatal(q, NAK_INV_REQ, h->psn, IBV_WC_SUCCESS);
            return;
        }
        if ((is_write || op == IBV_WR_RDMA_READ) && h->msg_len &&
            !remote_ok(q, h->rkey, h->raddr, h->msg_len,
                       is_write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ)) {
            responder_fatal(q, NAK_ACCESS, h->psn, IBV_WC_SUCCESS);
            return;
        }
        if (!is_write && op != IBV_WR_RDMA_READ && h->msg_len > rq_capacity(q, rwr(q, q->rq_done))) {
            responder_fatal(q, NAK_INV_REQ, h->psn, IBV_WC_LOC_LEN_ERR);
            return;
        }
        q->msg_off = 0;
    }
    if (op == IBV_WR_RDMA_READ) {
        uint32_t npkts = h->msg_len ? (h->msg_len + (uint32_t)q->mtu - 1) / (uint32_t)q->mtu : 1;
        q->rd.active = 1;
        q->rd.raddr = h->raddr;
        q->rd.off = 0;
        q->rd.len = h->msg_len;
        q->rd.psn0 = h->psn;
        q->epsn = (q->epsn + npkts) & FK_PSN_MASK;
        q->need_ack = 1;
        read_responses(q);
        return;
    }
    if (h->len) {
        if (is_write) {
            if (!remote_ok(q, h->rkey, h->raddr, h->len, IBV_ACCESS_REMOTE_WRITE)) {
                responder_fatal(q, NAK_ACCESS, h->psn, IBV_WC_SUCCESS); /* deregistered mid-message */
                return;
            }
            memcpy((void *)(uintptr_t)h->raddr, r->data, h->len);
        } else {
            fk_rwr *w = rwr(q, q->rq_done);
            for (int i = 0; i < w->nsge; i++)
                if (!local_sge_ok(q, &w->sge[i], 1)) {
                    responder_fatal(q, NAK_REM_OP, h->psn, IBV_WC_LOC_PROT_ERR);
                    return;
                }
            sg_copy(w->sge, w->nsge, h->off, (unsigned char *)r->data, h->len, 1);
        }
    }
    q->epsn = (q->epsn + 1) & FK_PSN_MASK;
    q->need_ack = 1;
    if (h->last && needs_recv) {
        struct ibv_wc wc = {.wr_id = rwr(q, q->rq_done)->wr_id, .status = IBV_WC_SUCCESS,
                            .opcode = is_write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV, .byte_len = h->msg_len,
                            .qp_num = q->qp.qp_num, .src_qp = h->src_qpn, .wc_flags = imm ? IBV_WC_WITH_IMM : 0,
                            .imm_data = imm ? h->imm : 0};
        q->rq_done++;
        fk_cq_push(q->rcq, q, &wc, 0, 0);
    }
}

static void responder(fk_qp *q)
{
    fk_qslot *s = &G.fab->qps[q->slot];
    if (q->rd.active && read_responses(q))
        return;
    uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE), t = s->tail;
    while (t < head) {
        const fk_ringslot *r = &s->ring[t++ % FK_RING];
        if (r->h.type == PKT_RESP)
            read_response(q, r);
        else
            request(q, r);
        if (q->rd.active)
            break; /* responses owed: no more requests until they are out */
    }
    if (q->need_ack && q->peer_slot >= 0 && q->qp.state != IBV_QPS_ERR)
        mailbox(q, 0, 0);
    /* the ring advances only after the ACK is out: a requester that sees its packets consumed then sees their ACK
     * (it reads the tail before the mailbox), so a slow responder never looks like a lost packet */
    __atomic_store_n(&s->tail, t, __ATOMIC_RELEASE);
}

/* ---- the loop ------------------------------------------------------------------------------------------------- */
void fk_chan_arm(fk_chan *ch)
{
    uint64_t d = 0;
    for (fk_qp *q = G.qps; q; q = q->next)
        if (q->deadline_ns && ((q->scq && q->scq->chan == ch) || (q->rcq && q->rcq->chan == ch)))
            if (!d || q->deadline_ns < d)
                d = q->deadline_ns;
    if (d == ch->armed_ns)
        return;
    struct itimerspec its = {0};
    if (d) {
        its.it_value.tv_sec = (time_t)(d / 1000000000ull);
        its.it_value.tv_nsec = (long)(d % 1000000000ull);
    }
    timerfd_settime(ch->tfd, TFD_TIMER_ABSTIME, &its, NULL);
    ch->armed_ns = d;
}

static void port_timers(uint64_t now)
{
    for (int d = 0; d < G.ndev; d++)
        if (G.port_up_ns[d] && now >= G.port_up_ns[d]) {
            G.port_up_ns[d] = 0;
            G.fab->nodes[G.node].port_down[d] = 0;
            for (fk_ctx *c = G.ctxs; c; c = c->next)
                if (c->dev->index == d)
                    fk_async(c, IBV_EVENT_PORT_ACTIVE, NULL);
        }
}

void fk_progress(void)
{
    if (!G.fab || G.node < 0)
        return;
    uint64_t now = fk_now();
    port_timers(now);
    for (fk_qp *q = G.qps; q; q = q->next) {
        if (q->peer_slot < 0 && (q->qp.state == IBV_QPS_RTR || q->qp.state == IBV_QPS_RTS))
            peer_lookup(q);
        responder(q);
    }
    for (fk_qp *q = G.qps; q; q = q->next) {
        requester(q, now);
        if (q->rd.active && (!q->deadline_ns || q->deadline_ns > now + 1000000))
            q->deadline_ns = now + 1000000; /* READ responses wait for room in the requester's ring */
    }
    for (fk_chan *ch = G.chans; ch; ch = ch->next) {
        if (ch->armed_ns && now >= ch->armed_ns) {
            uint64_t x;
            if (read(ch->tfd, &x, sizeof x) < 0) {
                /* not expired yet by the kernel's clock: fine */
            }
            ch->armed_ns = 1; /* force a re-arm below */
        }
        fk_chan_arm(ch);
    }
}
