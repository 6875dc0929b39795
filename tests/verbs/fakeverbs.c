/* fakeverbs.c - the emulator's verbs table: devices, ports, PDs, MRs, CQs, channels, QPs and the post/poll calls,
 * with the checks a real stack makes (research/rdma-testing.md 5.2 and 5.4; tests/verbs/conformance.c holds each
 * one against rdma_rxe). fake_engine.c moves the packets, fake_fabric.c holds the shared fabric and the faults.
 *
 * Strictness beyond rxe, on purpose: the SQ frees a slot only when a polled completion covers it (ENOMEM past the
 * depth, as on mlx5), a CQ overrun raises IBV_EVENT_CQ_ERR and moves its QPs to ERR instead of dropping entries
 * silently, and destroying a CQ, QP or device with unacknowledged events or live children returns EBUSY with a
 * message instead of blocking or leaking. Unsupported opcodes, flags, QP types and SRQs fail loudly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <stdint.h>
#include <unistd.h>

#include "fake_int.h"

#define LOUD(...) fprintf(stderr, "fakeverbs: " __VA_ARGS__)

static int fail(int err)
{
    errno = err;
    return err;
}

static void *fail_null(int err)
{
    errno = err;
    return NULL;
}

/* ---- devices -------------------------------------------------------------------------------------------------- */
static void make_devs(void)
{
    if (G.devs)
        return;
    G.devs = calloc((size_t)G.ndev, sizeof *G.devs);
    if (!G.devs)
        abort();
    for (int i = 0; i < G.ndev; i++) {
        fk_dev *d = &G.devs[i];
        d->index = i;
        d->dev.node_type = IBV_NODE_CA;
        d->dev.transport_type = IBV_TRANSPORT_IB;
        snprintf(d->dev.name, sizeof d->dev.name, "fake%d", i);
        snprintf(d->dev.dev_name, sizeof d->dev.dev_name, "uverbs%d", i);
        snprintf(d->dev.dev_path, sizeof d->dev.dev_path, "/sys/class/infiniband_verbs/uverbs%d", i);
        snprintf(d->dev.ibdev_path, sizeof d->dev.ibdev_path, "/sys/class/infiniband/fake%d", i);
    }
}

static struct ibv_device **fk_get_device_list(int *num)
{
    fk_enter();
    make_devs();
    struct ibv_device **l = calloc((size_t)G.ndev + 1, sizeof *l);
    for (int i = 0; l && i < G.ndev; i++)
        l[i] = &G.devs[i].dev;
    if (num)
        *num = l ? G.ndev : 0;
    fk_leave();
    return l;
}

static void fk_free_device_list(struct ibv_device **l)
{
    free(l);
}

static const char *fk_get_device_name(struct ibv_device *dev)
{
    return dev->name;
}

static int fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int fk_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int fk_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int fk_req_notify_cq(struct ibv_cq *cq, int solicited_only);

static struct ibv_context *fk_open_device(struct ibv_device *dev)
{
    fk_enter();
    make_devs();
    fk_dev *d = NULL;
    for (int i = 0; i < G.ndev; i++)
        if (dev == &G.devs[i].dev)
            d = &G.devs[i];
    struct ibv_context *ret = NULL;
    if (!d) {
        LOUD("open_device: not a fake device\n");
        errno = ENODEV;
        goto out;
    }
    if (fk_attach() != 0)
        goto out;
    fk_ctx *c = calloc(1, sizeof *c);
    if (!c)
        goto out;
    c->dev = d;
    c->ctx.device = dev;
    c->ctx.cmd_fd = -1;
    c->ctx.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
    c->ctx.num_comp_vectors = 1;
    c->ctx.ops.post_send = fk_post_send;
    c->ctx.ops.post_recv = fk_post_recv;
    c->ctx.ops.poll_cq = fk_poll_cq;
    c->ctx.ops.req_notify_cq = fk_req_notify_cq;
    pthread_mutex_init(&c->ctx.mutex, NULL);
    c->aq_tail = &c->aq;
    c->next = G.ctxs;
    G.ctxs = c;
    G.live.contexts++;
    ret = &c->ctx;
out:
    fk_leave();
    return ret;
}

static int fk_close_device(struct ibv_context *ctx)
{
    fk_enter();
    fk_ctx *c = (fk_ctx *)ctx;
    int rc = 0;
    if (c->npd || c->ncq || c->nchan) {
        LOUD("close_device(%s) with %d PDs, %d CQs and %d completion channels still alive\n", c->dev->dev.name,
             c->npd, c->ncq, c->nchan);
        rc = fail(EBUSY);
        goto out;
    }
    for (fk_ctx **p = &G.ctxs; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    while (c->aq) {
        fk_aev *e = c->aq;
        c->aq = e->next;
        free(e);
    }
    close(c->ctx.async_fd);
    pthread_mutex_destroy(&c->ctx.mutex);
    free(c);
    G.live.contexts--;
out:
    fk_leave();
    return rc;
}

static int fk_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
    fk_ctx *c = (fk_ctx *)ctx;
    memset(a, 0, sizeof *a);
    snprintf(a->fw_ver, sizeof a->fw_ver, "fakeverbs 1.0");
    a->node_guid = htobe64(0x0200000000000000ull | ((uint64_t)G.node << 8) | (uint64_t)c->dev->index);
    a->sys_image_guid = a->node_guid;
    a->max_mr_size = 1ull << 40;
    a->page_size_cap = 0xfffff000;
    a->vendor_id = 0xfa4e;
    a->vendor_part_id = 1;
    a->hw_ver = 1;
    a->max_qp = FK_MAX_QPS;
    a->max_qp_wr = 32768;
    a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
    a->max_sge = 30;
    a->max_sge_rd = 30;
    a->max_cq = 16384;
    a->max_cqe = (1 << 22) - 1;
    a->max_mr = 1 << 20;
    a->max_pd = 1 << 16;
    a->max_qp_rd_atom = 16;
    a->max_qp_init_rd_atom = 16;
    a->max_res_rd_atom = 16 * FK_MAX_QPS;
    a->atomic_cap = IBV_ATOMIC_NONE;
    a->max_pkeys = 1;
    a->local_ca_ack_delay = 15;
    a->phys_port_cnt = 1;
    return 0;
}

static int fk_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a)
{
    if (port != 1)
        return fail(EINVAL);
    fk_enter();
    fk_ctx *c = (fk_ctx *)ctx;
    int down = G.fab && G.node >= 0 && G.fab->nodes[G.node].port_down[c->dev->index];
    memset(a, 0, sizeof *a);
    a->state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
    a->max_mtu = IBV_MTU_4096;
    a->active_mtu = (enum ibv_mtu)G.active_mtu;
    a->gid_tbl_len = FK_GIDS;
    a->port_cap_flags = 0;
    a->max_msg_sz = 1u << 31;
    a->pkey_tbl_len = 1;
    a->max_vl_num = 1;
    a->active_width = 2;  /* 4x */
    a->active_speed = 32; /* EDR */
    a->phys_state = down ? 3 : 5; /* Disabled : LinkUp */
    a->link_layer = IBV_LINK_LAYER_ETHERNET;
    fk_leave();
    return 0;
}

static int fk_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
    if (port != 1 || index < 0 || index >= FK_GIDS)
        return fail(EINVAL);
    fk_enter();
    fk_gid(G.node, ((fk_ctx *)ctx)->dev->index, index, gid);
    fk_leave();
    return 0;
}

/* ---- PDs and MRs ---------------------------------------------------------------------------------------------- */
static struct ibv_pd *fk_alloc_pd(struct ibv_context *ctx)
{
    fk_enter();
    fk_pd *p = calloc(1, sizeof *p);
    if (p) {
        p->pd.context = ctx;
        p->pd.handle = (uint32_t)G.live.pds;
        ((fk_ctx *)ctx)->npd++;
        G.live.pds++;
    }
    fk_leave();
    return p ? &p->pd : fail_null(ENOMEM);
}

static int fk_dealloc_pd(struct ibv_pd *pd)
{
    fk_enter();
    fk_pd *p = (fk_pd *)pd;
    int rc = 0;
    if (p->nmr || p->nqp) {
        rc = fail(EBUSY); /* rxe: 16 with a live MR */
    } else {
        ((fk_ctx *)pd->context)->npd--;
        G.live.pds--;
        free(p);
    }
    fk_leave();
    return rc;
}

static uint32_t new_key(void)
{
    for (;;) {
        uint32_t k = (uint32_t)fk_rand(&G.rng);
        if (k && !fk_mr_by_lkey(k) && !fk_mr_by_rkey(k))
            return k;
    }
}

static struct ibv_mr *fk_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    const int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;
    if (access & ~known) {
        LOUD("reg_mr: access flags 0x%x are not emulated\n", access & ~known);
        return fail_null(EINVAL);
    }
    /* ibv_reg_mr(3): remote write or atomic needs local write (rxe: EINVAL) */
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
        return fail_null(EINVAL);
    if (len && !addr)
        return fail_null(EFAULT);
    fk_enter();
    fk_mr *m = calloc(1, sizeof *m);
    if (m) {
        m->mr.context = pd->context;
        m->mr.pd = pd;
        m->mr.addr = addr;
        m->mr.length = len;
        m->access = access;
        m->mr.lkey = new_key();
        m->nl = G.hl[m->mr.lkey % 1024];
        G.hl[m->mr.lkey % 1024] = m;
        m->mr.rkey = new_key();
        m->nr = G.hr[m->mr.rkey % 1024];
        G.hr[m->mr.rkey % 1024] = m;
        ((fk_pd *)pd)->nmr++;
        G.live.mrs++;
    }
    fk_leave();
    return m ? &m->mr : fail_null(ENOMEM);
}

static int fk_dereg_mr(struct ibv_mr *mr)
{
    fk_enter();
    fk_mr *m = (fk_mr *)mr;
    for (fk_mr **p = &G.hl[mr->lkey % 1024]; *p; p = &(*p)->nl)
        if (*p == m) {
            *p = m->nl;
            break;
        }
    for (fk_mr **p = &G.hr[mr->rkey % 1024]; *p; p = &(*p)->nr)
        if (*p == m) {
            *p = m->nr;
            break;
        }
    ((fk_pd *)mr->pd)->nmr--;
    G.live.mrs--;
    memset(m, 0xa5, sizeof *m); /* the keys die at once */
    free(m);
    fk_leave();
    return 0;
}

/* ---- completion channels and CQs ------------------------------------------------------------------------------ */
static void drain_fd(int fd)
{
    char b[64];
    while (read(fd, b, sizeof b) > 0) {
    }
}

static int chan_alive(const fk_chan *ch)
{
    for (fk_chan *c = G.chans; c; c = c->next)
        if (c == ch)
            return 1;
    return 0;
}

/* The waker thread: when a peer kicks a channel's socket or its retransmission timer expires, run the engine, so
 * that the channel's fd (an eventfd) turns readable exactly when a CQ event results, as a NIC's interrupt would.
 * One per process, started with the first channel, blocked in epoll_wait the rest of the time. */
static void *waker(void *arg)
{
    int ep = (int)(intptr_t)arg;
    struct epoll_event ev[16];
    for (;;) {
        int n = epoll_wait(ep, ev, 16, -1);
        if (n < 0 && errno != EINTR)
            return NULL;
        fk_enter();
        if (G.waker_ep != ep) { /* after fork: not this process's */
            fk_leave();
            return NULL;
        }
        for (int i = 0; i < n; i++) {
            fk_chan *ch = ev[i].data.ptr;
            if (!chan_alive(ch)) /* destroyed since epoll_wait returned */
                continue;
            drain_fd(ch->sock);
            drain_fd(ch->tfd);
            ch->armed_ns = 1; /* the timer was read: arm it again */
        }
        fk_progress();
        fk_leave();
    }
}

int fk_waker_add(fk_chan *ch)
{
    if (G.waker_ep < 0) {
        int ep = epoll_create1(EPOLL_CLOEXEC);
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (ep < 0 || pthread_create(&t, &a, waker, (void *)(intptr_t)ep) != 0) {
            pthread_attr_destroy(&a);
            if (ep >= 0)
                close(ep);
            return -1;
        }
        pthread_attr_destroy(&a);
        G.waker_ep = ep;
    }
    struct epoll_event e1 = {.events = EPOLLIN, .data.ptr = ch}, e2 = {.events = EPOLLIN, .data.ptr = ch};
    if (epoll_ctl(G.waker_ep, EPOLL_CTL_ADD, ch->sock, &e1) || epoll_ctl(G.waker_ep, EPOLL_CTL_ADD, ch->tfd, &e2))
        return -1;
    return 0;
}

static struct ibv_comp_channel *fk_create_comp_channel(struct ibv_context *ctx)
{
    fk_enter();
    fk_chan *ch = fk_attach() == 0 ? calloc(1, sizeof *ch) : NULL;
    struct ibv_comp_channel *ret = NULL;
    if (!ch)
        goto out;
    ch->serial = ++G.serial;
    ch->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ch->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "stfk.%016llx.%d.%u",
                     (unsigned long long)G.fab->uid, (int)getpid(), ch->serial);
    if (ch->sock < 0 || ch->tfd < 0 || ch->ch.fd < 0 ||
        bind(ch->sock, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) ||
        fk_waker_add(ch)) {
        int e = errno;
        if (G.waker_ep >= 0 && ch->sock >= 0)
            epoll_ctl(G.waker_ep, EPOLL_CTL_DEL, ch->sock, NULL);
        close(ch->sock);
        close(ch->tfd);
        close(ch->ch.fd);
        free(ch);
        errno = e;
        goto out;
    }
    ch->ch.context = ctx;
    ch->next = G.chans;
    G.chans = ch;
    ((fk_ctx *)ctx)->nchan++;
    G.live.channels++;
    ret = &ch->ch;
out:
    fk_leave();
    return ret;
}

static int fk_destroy_comp_channel(struct ibv_comp_channel *c)
{
    fk_enter();
    fk_chan *ch = (fk_chan *)c;
    int rc = 0;
    if (ch->ncq) {
        rc = fail(EBUSY);
        goto out;
    }
    for (fk_chan **p = &G.chans; *p; p = &(*p)->next)
        if (*p == ch) {
            *p = ch->next;
            break;
        }
    epoll_ctl(G.waker_ep, EPOLL_CTL_DEL, ch->sock, NULL);
    epoll_ctl(G.waker_ep, EPOLL_CTL_DEL, ch->tfd, NULL);
    close(ch->sock);
    close(ch->tfd);
    close(ch->ch.fd);
    ((fk_ctx *)c->context)->nchan--;
    G.live.channels--;
    free(ch);
out:
    fk_leave();
    return rc;
}

static struct ibv_cq *fk_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *ch,
                                   int comp_vector)
{
    if (cqe < 1 || cqe > (1 << 22) - 1 || comp_vector < 0 || comp_vector >= ctx->num_comp_vectors ||
        (ch && ch->context != ctx))
        return fail_null(EINVAL);
    fk_enter();
    fk_cq *cq = calloc(1, sizeof *cq);
    int size = 1;
    while (size < cqe + 1)
        size <<= 1;
    size--; /* rxe: 4 -> 7 */
    if (cq)
        cq->e = calloc((size_t)size, sizeof *cq->e);
    if (!cq || !cq->e) {
        free(cq);
        fk_leave();
        return fail_null(ENOMEM);
    }
    cq->size = size;
    cq->ctx = (fk_ctx *)ctx;
    cq->chan = (fk_chan *)ch;
    cq->cq.context = ctx;
    cq->cq.channel = ch;
    cq->cq.cq_context = cq_context;
    cq->cq.cqe = size;
    pthread_mutex_init(&cq->cq.mutex, NULL);
    pthread_cond_init(&cq->cq.cond, NULL);
    if (cq->chan)
        cq->chan->ncq++;
    cq->next = G.cqs;
    G.cqs = cq;
    cq->ctx->ncq++;
    G.live.cqs++;
    fk_leave();
    return &cq->cq;
}

static int fk_destroy_cq(struct ibv_cq *c)
{
    fk_enter();
    fk_cq *cq = (fk_cq *)c;
    int rc = 0;
    if (cq->nqp) {
        rc = fail(EBUSY); /* rxe: 16 with a live QP */
        goto out;
    }
    if (cq->ev_got != cq->ev_acked) {
        /* ibv_destroy_cq would block forever here */
        LOUD("destroy_cq with %u completion events not acknowledged (ibv_ack_cq_events)\n",
             cq->ev_got - cq->ev_acked);
        rc = fail(EBUSY);
        goto out;
    }
    for (fk_cq **p = &G.cqs; *p; p = &(*p)->next)
        if (*p == cq) {
            *p = cq->next;
            break;
        }
    if (cq->chan) {
        uint64_t one;
        for (; cq->ev_pending; cq->ev_pending--) /* events raised but never fetched leave the fd's count */
            if (read(cq->chan->ch.fd, &one, sizeof one) != (ssize_t)sizeof one)
                break;
        cq->chan->ncq--;
    }
    cq->ctx->ncq--;
    G.live.cqs--;
    pthread_mutex_destroy(&cq->cq.mutex);
    pthread_cond_destroy(&cq->cq.cond);
    free(cq->e);
    free(cq);
out:
    fk_leave();
    return rc;
}

static int fk_req_notify_cq(struct ibv_cq *c, int solicited_only)
{
    fk_enter();
    fk_cq *cq = (fk_cq *)c;
    int rc = 0;
    if (!cq->chan)
        rc = fail(EINVAL);
    else
        cq->armed = 1; /* the next completion (solicited or not: stricter is wakeups, never fewer) */
    fk_leave();
    return rc;
}

static int fk_get_cq_event(struct ibv_comp_channel *c, struct ibv_cq **out, void **ctxp)
{
    fk_chan *ch = (fk_chan *)c;
    for (;;) {
        fk_enter();
        fk_progress();
        fk_leave();
        /* one event per count of the eventfd: blocks (or EAGAIN on a non-blocking fd) until one is raised */
        uint64_t one;
        if (read(c->fd, &one, sizeof one) != (ssize_t)sizeof one) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        fk_enter();
        for (fk_cq *cq = G.cqs; cq; cq = cq->next)
            if (cq->chan == ch && cq->ev_pending) {
                cq->ev_pending--;
                cq->ev_got++;
                *out = &cq->cq;
                *ctxp = cq->cq.cq_context;
                fk_leave();
                return 0;
            }
        fk_leave(); /* its CQ is gone: wait for the next */
    }
}

static void fk_ack_cq_events(struct ibv_cq *c, unsigned n)
{
    fk_enter();
    ((fk_cq *)c)->ev_acked += n;
    fk_leave();
}

/* ---- QPs ------------------------------------------------------------------------------------------------------ */
static struct ibv_qp *fk_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    if (ia->qp_type != IBV_QPT_RC) {
        LOUD("create_qp: only RC QPs are emulated (qp_type %d)\n", ia->qp_type);
        return fail_null(EOPNOTSUPP);
    }
    if (ia->srq) {
        LOUD("create_qp: SRQs are not emulated\n");
        return fail_null(EOPNOTSUPP);
    }
    struct ibv_qp_cap *cap = &ia->cap;
    if (!ia->send_cq || !ia->recv_cq || ia->send_cq->context != pd->context || ia->recv_cq->context != pd->context ||
        cap->max_send_wr < 1 || cap->max_send_wr > 32768 || cap->max_recv_wr < 1 || cap->max_recv_wr > 32768 ||
        cap->max_send_sge > 30 || cap->max_recv_sge > 30 || cap->max_inline_data > 256)
        return fail_null(EINVAL);
    fk_enter();
    struct ibv_qp *ret = NULL;
    fk_qp *q = calloc(1, sizeof *q);
    if (!q || fk_attach() != 0)
        goto nomem;
    q->cap = *cap;
    if (q->cap.max_send_sge < 1)
        q->cap.max_send_sge = 1;
    if (q->cap.max_recv_sge < 1)
        q->cap.max_recv_sge = 1;
    q->sq = calloc(q->cap.max_send_wr, sizeof *q->sq);
    q->sq_sge = calloc((size_t)q->cap.max_send_wr * q->cap.max_send_sge, sizeof *q->sq_sge);
    q->rq = calloc(q->cap.max_recv_wr, sizeof *q->rq);
    q->rq_sge = calloc((size_t)q->cap.max_recv_wr * q->cap.max_recv_sge, sizeof *q->rq_sge);
    if (!q->sq || !q->sq_sge || !q->rq || !q->rq_sge)
        goto nomem;
    for (uint32_t i = 0; i < q->cap.max_send_wr; i++)
        q->sq[i].sge = &q->sq_sge[(size_t)i * q->cap.max_send_sge];
    for (uint32_t i = 0; i < q->cap.max_recv_wr; i++)
        q->rq[i].sge = &q->rq_sge[(size_t)i * q->cap.max_recv_sge];
    /* a slot in the fabric, with a QPN never used before in it. The slot is claimed under the fabric's lock (marked
     * FK_SLOT_CLAIMED, which no peer's QPN matches) before it is filled in under its own: a slot found free and
     * claimed only later could be found free by another process in between, and the later of the two would
     * overwrite the other's QPN, leaving its peers sending into the void until RETRY_EXC_ERR. */
    fk_fabric *f = G.fab;
    fk_plock(&f->lock);
    q->slot = -1;
    for (int i = 0; i < FK_MAX_QPS && q->slot < 0; i++)
        if (!__atomic_load_n(&f->qps[i].qpn, __ATOMIC_ACQUIRE)) {
            q->slot = i;
            __atomic_store_n(&f->qps[i].qpn, FK_SLOT_CLAIMED, __ATOMIC_RELEASE);
        }
    uint32_t qpn = f->next_qpn++ & FK_PSN_MASK;
    pthread_mutex_unlock(&f->lock);
    if (G.claim_hook && q->slot >= 0)
        G.claim_hook();
    if (q->slot < 0) {
        LOUD("create_qp: more than %d QPs in the fabric\n", FK_MAX_QPS);
        free(q->sq);
        free(q->sq_sge);
        free(q->rq);
        free(q->rq_sge);
        free(q);
        errno = ENOMEM;
        goto out;
    }
    fk_qslot *s = &f->qps[q->slot];
    fk_plock(&s->lock);
    s->node = G.node;
    s->dev = ((fk_ctx *)pd->context)->dev->index;
    s->pid = getpid();
    s->state = IBV_QPS_RESET;
    s->kick[0] = ((fk_cq *)ia->send_cq)->chan ? ((fk_cq *)ia->send_cq)->chan->serial : 0;
    s->kick[1] = ((fk_cq *)ia->recv_cq)->chan ? ((fk_cq *)ia->recv_cq)->chan->serial : 0;
    s->head = s->tail = 0;
    s->ack_psn = s->nak_seq = 0;
    __atomic_store_n(&s->qpn, qpn, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->lock);
    q->ctx = (fk_ctx *)pd->context;
    q->pd = (fk_pd *)pd;
    q->scq = (fk_cq *)ia->send_cq;
    q->rcq = (fk_cq *)ia->recv_cq;
    q->sq_sig_all = ia->sq_sig_all;
    q->ordinal = G.qp_ordinal++;
    q->peer_slot = -1;
    q->qp.context = pd->context;
    q->qp.qp_context = ia->qp_context;
    q->qp.pd = pd;
    q->qp.send_cq = ia->send_cq;
    q->qp.recv_cq = ia->recv_cq;
    q->qp.qp_num = qpn;
    q->qp.handle = qpn;
    q->qp.state = IBV_QPS_RESET;
    q->qp.qp_type = IBV_QPT_RC;
    pthread_mutex_init(&q->qp.mutex, NULL);
    pthread_cond_init(&q->qp.cond, NULL);
    cap->max_send_sge = q->cap.max_send_sge;
    cap->max_recv_sge = q->cap.max_recv_sge;
    q->pd->nqp++;
    q->scq->nqp++;
    q->rcq->nqp++;
    q->next = G.qps;
    G.qps = q;
    G.live.qps++;
    ret = &q->qp;
    goto out;
nomem:
    if (q) {
        free(q->sq);
        free(q->sq_sge);
        free(q->rq);
        free(q->rq_sge);
        free(q);
    }
    errno = ENOMEM;
out:
    fk_leave();
    return ret;
}

/* remove a QP's completions still in a CQ (as mlx5 does at destroy) */
static void purge_cq(fk_cq *cq, fk_qp *q)
{
    int n = 0;
    for (int i = 0; i < cq->count; i++) {
        fk_cqe e = cq->e[(cq->head + i) % cq->size];
        if (e.qp != q)
            cq->e[(cq->head + n++) % cq->size] = e;
    }
    cq->count = n;
}

static void discard_inline(fk_qp *q)
{
    for (uint32_t i = 0; i < q->cap.max_send_wr; i++) {
        free(q->sq[i].inl);
        q->sq[i].inl = NULL;
    }
}

static int fk_destroy_qp(struct ibv_qp *qp)
{
    fk_enter();
    fk_qp *q = (fk_qp *)qp;
    int rc = 0;
    if (q->ev_unacked) {
        LOUD("destroy_qp with %d async events not acknowledged (ibv_ack_async_event)\n", q->ev_unacked);
        rc = fail(EBUSY);
        goto out;
    }
    fk_qslot *s = &G.fab->qps[q->slot];
    fk_plock(&s->lock);
    __atomic_store_n(&s->qpn, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&s->state, IBV_QPS_RESET, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->lock);
    for (fk_qp **p = &G.qps; *p; p = &(*p)->next)
        if (*p == q) {
            *p = q->next;
            break;
        }
    purge_cq(q->scq, q);
    if (q->rcq != q->scq)
        purge_cq(q->rcq, q);
    q->pd->nqp--;
    q->scq->nqp--;
    q->rcq->nqp--;
    G.live.qps--;
    discard_inline(q);
    free(q->sq);
    free(q->sq_sge);
    free(q->rq);
    free(q->rq_sge);
    pthread_mutex_destroy(&q->qp.mutex);
    pthread_cond_destroy(&q->qp.cond);
    free(q);
out:
    fk_leave();
    return rc;
}

/* The kernel's table for RC (ib_modify_qp_is_ok): required and optional masks besides IBV_QP_STATE. */
static int masks_ok(int cur, int next, int mask)
{
    int req = 0, opt = 0;
    if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
        return (mask & ~IBV_QP_STATE) == 0;
    if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
        req = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    else if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT)
        opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
        req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
              IBV_QP_MIN_RNR_TIMER;
        opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
    } else if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
        req = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
        opt = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE;
    } else if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS)
        opt = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER;
    else
        return 0;
    mask &= ~IBV_QP_STATE;
    return (mask & req) == req && (mask & ~(req | opt)) == 0;
}

static int attr_values(fk_qp *q, struct ibv_qp_attr *a, int mask)
{
    if ((mask & IBV_QP_PORT) && a->port_num != 1)
        return EINVAL;
    if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
        return EINVAL;
    if ((mask & IBV_QP_ACCESS_FLAGS) &&
        (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                IBV_ACCESS_REMOTE_ATOMIC)))
        return EINVAL;
    if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
        return EINVAL;
    if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > 16)
        return EINVAL;
    if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > 16)
        return EINVAL;
    if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
        return EINVAL;
    if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
        return EINVAL;
    if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
        return EINVAL;
    if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
        return EINVAL;
    if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > FK_PSN_MASK)
        return EINVAL;
    if (mask & IBV_QP_AV) {
        struct ibv_ah_attr *ah = &a->ah_attr;
        if (ah->port_num != 1 || !ah->is_global) /* RoCE: a GRH is required */
            return EINVAL;
        if (ah->grh.sgid_index >= FK_GIDS)
            return EINVAL;
        union ibv_gid g;
        fk_gid(G.node, q->ctx->dev->index, ah->grh.sgid_index, &g);
        static const union ibv_gid zero;
        if (!memcmp(&g, &zero, sizeof g))
            return ENODATA; /* rxe: an empty sgid_index */
        int n, d;
        if (fk_gid_node(&ah->grh.dgid, 0, &n, &d) != 0)
            return ETIMEDOUT; /* rxe: neighbour resolution fails in modify_qp */
    }
    return 0;
}

static int fk_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    fk_enter();
    fk_qp *q = (fk_qp *)qp;
    int cur = q->qp.state;
    int next = (mask & IBV_QP_STATE) ? (int)attr->qp_state : cur;
    int rc = 0;
    if ((mask & IBV_QP_CUR_STATE) && (int)attr->cur_qp_state != cur)
        rc = EINVAL;
    else if (!(mask & IBV_QP_STATE) || !masks_ok(cur, next, mask))
        rc = EINVAL;
    else
        rc = attr_values(q, attr, mask);
    if (rc) {
        fk_leave();
        return fail(rc);
    }
    struct ibv_qp_attr *a = &q->a;
    if (mask & IBV_QP_ACCESS_FLAGS)
        a->qp_access_flags = attr->qp_access_flags;
    if (mask & IBV_QP_PKEY_INDEX)
        a->pkey_index = attr->pkey_index;
    if (mask & IBV_QP_PORT)
        a->port_num = attr->port_num;
    if (mask & IBV_QP_AV)
        a->ah_attr = attr->ah_attr;
    if (mask & IBV_QP_PATH_MTU)
        a->path_mtu = attr->path_mtu;
    if (mask & IBV_QP_DEST_QPN)
        a->dest_qp_num = attr->dest_qp_num;
    if (mask & IBV_QP_RQ_PSN)
        a->rq_psn = attr->rq_psn & FK_PSN_MASK;
    if (mask & IBV_QP_SQ_PSN)
        a->sq_psn = attr->sq_psn & FK_PSN_MASK;
    if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
        a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
    if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
        a->max_rd_atomic = attr->max_rd_atomic;
    if (mask & IBV_QP_MIN_RNR_TIMER)
        a->min_rnr_timer = attr->min_rnr_timer;
    if (mask & IBV_QP_TIMEOUT)
        a->timeout = attr->timeout;
    if (mask & IBV_QP_RETRY_CNT)
        a->retry_cnt = attr->retry_cnt;
    if (mask & IBV_QP_RNR_RETRY)
        a->rnr_retry = attr->rnr_retry;
    fk_qslot *s = &G.fab->qps[q->slot];
    if (next == IBV_QPS_RESET) {
        discard_inline(q);
        q->sq_post = q->sq_done = q->sq_free = q->rq_post = q->rq_done = 0;
        q->next_ipsn = q->tx_ipsn = q->una_ipsn = q->sent_hi = q->tx_wr = 0;
        q->rd.active = 0;
        q->peer_slot = -1;
        q->deadline_ns = 0;
        __atomic_store_n(&s->tail, __atomic_load_n(&s->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
        memset(a, 0, sizeof *a);
    } else if (next == IBV_QPS_RTR && cur == IBV_QPS_INIT) {
        q->epsn = a->rq_psn;
        int pm = (int)a->path_mtu, m = 128 << (pm < G.active_mtu ? pm : G.active_mtu);
        q->mtu = m > FK_PAYLOAD ? FK_PAYLOAD : m;
        q->peer_slot = -1;
        __atomic_store_n(&s->tail, __atomic_load_n(&s->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    } else if (next == IBV_QPS_RTS && cur == IBV_QPS_RTR) {
        q->psn_base = a->sq_psn;
        q->next_ipsn = q->tx_ipsn = q->una_ipsn = q->sent_hi = 0;
        q->retry_left = a->retry_cnt;
        q->rnr_left = a->rnr_retry;
        q->lost = 0;
        q->rnr_until_ns = 0;
        __atomic_store_n(&s->ack_psn, a->sq_psn, __ATOMIC_RELEASE);
        q->nak_seen = __atomic_load_n(&s->nak_seq, __ATOMIC_ACQUIRE);
    }
    q->qp.state = (enum ibv_qp_state)next;
    if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR)
        fk_qp_error(q);
    fk_publish_state(q);
    fk_progress();
    fk_leave();
    return 0;
}

static int fk_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
    fk_enter();
    fk_qp *q = (fk_qp *)qp;
    *attr = q->a;
    attr->qp_state = q->qp.state;
    attr->cur_qp_state = q->qp.state;
    attr->cap = q->cap;
    if (init) {
        memset(init, 0, sizeof *init);
        init->qp_context = q->qp.qp_context;
        init->send_cq = q->qp.send_cq;
        init->recv_cq = q->qp.recv_cq;
        init->cap = q->cap;
        init->qp_type = IBV_QPT_RC;
        init->sq_sig_all = q->sq_sig_all;
    }
    fk_leave();
    return 0;
}

/* ---- async events --------------------------------------------------------------------------------------------- */
static int fk_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
    fk_ctx *c = (fk_ctx *)ctx;
    fk_enter();
    fk_progress();
    fk_leave();
    uint64_t one;
    if (read(ctx->async_fd, &one, sizeof one) != (ssize_t)sizeof one)
        return -1; /* EAGAIN on a non-blocking fd */
    fk_enter();
    fk_aev *e = c->aq;
    c->aq = e->next;
    if (!c->aq)
        c->aq_tail = &c->aq;
    *ev = e->ev;
    free(e);
    c->aev_unacked++;
    if (ev->event_type == IBV_EVENT_QP_FATAL)
        ((fk_qp *)ev->element.qp)->ev_unacked++;
    fk_leave();
    return 0;
}

static void fk_ack_async_event(struct ibv_async_event *ev)
{
    fk_enter();
    if (ev->event_type == IBV_EVENT_QP_FATAL)
        ((fk_qp *)ev->element.qp)->ev_unacked--;
    for (fk_ctx *c = G.ctxs; c; c = c->next)
        if (c->aev_unacked) {
            c->aev_unacked--;
            break;
        }
    fk_leave();
}

/* ---- the data path -------------------------------------------------------------------------------------------- */
static int send_wr_ok(fk_qp *q, const struct ibv_send_wr *w)
{
    const unsigned known = IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
    switch (w->opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_READ: break;
    default: LOUD("post_send: opcode %d is not emulated\n", w->opcode); return EINVAL;
    }
    if (w->send_flags & ~known) {
        LOUD("post_send: send flags 0x%x are not emulated\n", w->send_flags & ~known);
        return EINVAL;
    }
    if (w->num_sge < 0 || w->num_sge > (int)q->cap.max_send_sge)
        return EINVAL;
    uint64_t len = 0;
    for (int i = 0; i < w->num_sge; i++)
        len += w->sg_list[i].length;
    if (len > (1u << 31))
        return EINVAL;
    if (w->send_flags & IBV_SEND_INLINE) {
        if (w->opcode == IBV_WR_RDMA_READ || len > q->cap.max_inline_data)
            return EINVAL; /* rxe: 22 for 200 B over max_inline 64 */
    }
    if (q->sq_post - q->sq_free >= q->cap.max_send_wr)
        return ENOMEM; /* the mlx5 model: slots free when a polled completion covers them */
    return 0;
}

static void enqueue_send(fk_qp *q, const struct ibv_send_wr *w)
{
    fk_swr *s = &q->sq[q->sq_post % q->cap.max_send_wr];
    free(s->inl);
    memset(s, 0, offsetof(fk_swr, sge));
    s->inl = NULL;
    s->wr_id = w->wr_id;
    s->opcode = w->opcode;
    s->flags = w->send_flags;
    s->signaled = q->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);
    s->nsge = w->num_sge;
    uint64_t len = 0;
    for (int i = 0; i < w->num_sge; i++) {
        s->sge[i] = w->sg_list[i];
        len += w->sg_list[i].length;
    }
    s->len = (uint32_t)len;
    if (w->send_flags & IBV_SEND_INLINE) {
        s->inl = malloc(len ? len : 1);
        if (!s->inl)
            abort();
        uint64_t off = 0;
        for (int i = 0; i < w->num_sge; i++) {
            memcpy(s->inl + off, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
            off += w->sg_list[i].length;
        }
    }
    s->imm = w->imm_data;
    s->raddr = w->wr.rdma.remote_addr;
    s->rkey = w->wr.rdma.rkey;
    uint64_t mtu = q->mtu ? (uint64_t)q->mtu : 1024; /* posts in ERR before RTR flush anyway */
    s->npkts = len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
    s->ipsn0 = q->next_ipsn;
    s->got = 0;
    s->lerr = 0;
    q->next_ipsn += s->npkts;
    q->sq_post++;
}

static int fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    fk_enter();
    fk_qp *q = (fk_qp *)qp;
    int rc = 0;
    for (; wr; wr = wr->next) {
        if (q->qp.state != IBV_QPS_RTS && q->qp.state != IBV_QPS_ERR) {
            rc = EINVAL; /* rxe: 22 in INIT and RTR */
            break;
        }
        if ((rc = send_wr_ok(q, wr)) != 0)
            break;
        enqueue_send(q, wr);
        if (q->qp.state == IBV_QPS_ERR) {
            fk_flush_send(q, q->sq_done++); /* posts in ERR complete at once with WR_FLUSH_ERR */
            continue;
        }
        if (fk_fault_hit(FK_QPERR, q)) {
            fk_qp_error(q);
            fk_async(q->ctx, IBV_EVENT_QP_FATAL, &q->qp);
        } else if (fk_fault_hit(FK_PORTDOWN, q)) {
            int d = q->ctx->dev->index;
            G.fab->nodes[G.node].port_down[d] = 1;
            const fk_fault *f = fk_fault_last(FK_PORTDOWN);
            G.port_up_ns[d] = f && f->ms ? fk_now() + (uint64_t)f->ms * 1000000ull : 0;
            for (fk_ctx *c = G.ctxs; c; c = c->next)
                if (c->dev->index == d)
                    fk_async(c, IBV_EVENT_PORT_ERR, NULL);
        } else if (fk_fault_hit(FK_DEADPEER, q)) {
            G.fab->nodes[G.node].dead = 1;
        }
    }
    if (rc && bad)
        *bad = wr;
    fk_progress();
    fk_leave();
    return rc ? fail(rc) : 0;
}

static int fk_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    fk_enter();
    fk_qp *q = (fk_qp *)qp;
    int rc = 0;
    for (; wr; wr = wr->next) {
        if (q->qp.state == IBV_QPS_RESET) {
            rc = EINVAL; /* rxe: 22 in RESET, 0 in INIT */
            break;
        }
        if (wr->num_sge < 0 || wr->num_sge > (int)q->cap.max_recv_sge) {
            rc = EINVAL;
            break;
        }
        if (q->rq_post - q->rq_done >= q->cap.max_recv_wr) {
            rc = ENOMEM;
            break;
        }
        fk_rwr *r = &q->rq[q->rq_post % q->cap.max_recv_wr];
        r->wr_id = wr->wr_id;
        r->nsge = wr->num_sge;
        for (int i = 0; i < wr->num_sge; i++) {
            r->sge[i] = wr->sg_list[i];
            /* a posted receive buffer belongs to the NIC until its completion: poison it, so code that reads it
             * early (or expects it untouched) sees garbage; only where a registered MR covers it */
            fk_mr *m = fk_mr_by_lkey(r->sge[i].lkey);
            uint64_t a = m ? (uint64_t)(uintptr_t)m->mr.addr : 0;
            if (m && (m->access & IBV_ACCESS_LOCAL_WRITE) && r->sge[i].addr >= a &&
                r->sge[i].addr + r->sge[i].length <= a + m->mr.length)
                memset((void *)(uintptr_t)r->sge[i].addr, 0xfb, r->sge[i].length);
        }
        q->rq_post++;
        if (q->qp.state == IBV_QPS_ERR)
            fk_flush_recv(q, q->rq_done++);
    }
    if (rc && bad)
        *bad = wr;
    fk_progress();
    fk_leave();
    return rc ? fail(rc) : 0;
}

static int fk_poll_cq(struct ibv_cq *c, int n, struct ibv_wc *wc)
{
    fk_enter();
    fk_cq *cq = (fk_cq *)c;
    fk_progress();
    int got = 0;
    while (got < n && cq->count) {
        fk_cqe *e = &cq->e[cq->head];
        wc[got++] = e->wc;
        if (e->is_send && e->qp && e->sqidx + 1 > e->qp->sq_free)
            e->qp->sq_free = e->sqidx + 1;
        cq->head = (cq->head + 1) % cq->size;
        cq->count--;
    }
    fk_leave();
    return got;
}

/* ---- names ---------------------------------------------------------------------------------------------------- */
static const char *fk_wc_status_str(enum ibv_wc_status s)
{
    static const char *const n[] = {"success", "local length error", "local QP operation error",
                                    "local EE context operation error", "local protection error",
                                    "Work Request Flushed Error", "memory management operation error",
                                    "bad response error", "local access error", "remote invalid request error",
                                    "remote access error", "remote operation error", "transport retry counter exceeded",
                                    "RNR retry counter exceeded", "local RDD violation error",
                                    "remote invalid RD request", "aborted error", "invalid EE context number",
                                    "invalid EE context state", "fatal error", "response timeout error",
                                    "general error"};
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "unknown";
}

static const char *fk_event_type_str(enum ibv_event_type e)
{
    static const char *const n[] = {"CQ error", "local work queue catastrophic error", "invalid request local work "
                                    "queue error", "local access violation work queue error", "communication "
                                    "established", "send queue drained", "path migrated", "path migration request "
                                    "error", "local catastrophic error", "port active", "port error", "LID change",
                                    "P_Key change", "SM change", "SRQ catastrophic error", "SRQ limit reached",
                                    "last WQE reached", "client reregistration", "GID table change", "WQ fatal"};
    return (unsigned)e < sizeof n / sizeof n[0] ? n[e] : "unknown";
}

static const st_verbs_api fake_api = {
    .name = "fake",
    .get_device_list = fk_get_device_list,
    .free_device_list = fk_free_device_list,
    .get_device_name = fk_get_device_name,
    .open_device = fk_open_device,
    .close_device = fk_close_device,
    .query_device = fk_query_device,
    .query_port = fk_query_port,
    .query_gid = fk_query_gid,
    .alloc_pd = fk_alloc_pd,
    .dealloc_pd = fk_dealloc_pd,
    .reg_mr = fk_reg_mr,
    .dereg_mr = fk_dereg_mr,
    .create_comp_channel = fk_create_comp_channel,
    .destroy_comp_channel = fk_destroy_comp_channel,
    .create_cq = fk_create_cq,
    .destroy_cq = fk_destroy_cq,
    .get_cq_event = fk_get_cq_event,
    .ack_cq_events = fk_ack_cq_events,
    .create_qp = fk_create_qp,
    .modify_qp = fk_modify_qp,
    .query_qp = fk_query_qp,
    .destroy_qp = fk_destroy_qp,
    .get_async_event = fk_get_async_event,
    .ack_async_event = fk_ack_async_event,
    .post_send = fk_post_send,
    .post_recv = fk_post_recv,
    .poll_cq = fk_poll_cq,
    .req_notify_cq = fk_req_notify_cq,
    .wc_status_str = fk_wc_status_str,
    .event_type_str = fk_event_type_str,
};

const st_verbs_api *st_fake_api(void)
{
    return &fake_api;
}
