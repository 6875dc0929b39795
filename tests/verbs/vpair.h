/* vpair.h - two RC QPs on one device, connected to each other, through any st_verbs_api: the setup shared by the
 * emulator's self-tests (test_fakeverbs.c) and the conformance suite (conformance.c), which runs the same code
 * against rdma_rxe. Header-only (static functions) so the conformance program needs nothing but the table.
 */
#ifndef ST_VPAIR_H
#define ST_VPAIR_H

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs.h"

typedef struct vp_opts {
    int cq_size;          /* each QP's own CQ; default 64 */
    int sq, rq;           /* queue depths; default 16 */
    int max_inline;       /* default 64 */
    int access[2];        /* QP access flags; default LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ */
    int timeout, retry_cnt, rnr_retry, min_rnr_timer; /* default 14, 7, 7, 12 */
    int no_rts[2];        /* leave QP i in RTR */
    int channel;          /* CQs on a completion channel */
} vp_opts;

typedef struct vpair {
    const st_verbs_api *v;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq[2];
    struct ibv_qp *qp[2];
    int gid_index;
    union ibv_gid gid;
    enum ibv_mtu mtu;
    vp_opts o;
} vpair;

static inline double vp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* First non-empty GID of the form ::ffff:a.b.c.d (RoCE v2 over IPv4), else the first non-empty; -1 if none. */
static inline int vp_pick_gid(const st_verbs_api *v, struct ibv_context *ctx, int len, union ibv_gid *out)
{
    int any = -1;
    for (int i = 0; i < len; i++) {
        union ibv_gid g;
        if (v->query_gid(ctx, 1, i, &g) != 0)
            continue;
        static const union ibv_gid zero;
        if (!memcmp(&g, &zero, sizeof g))
            continue;
        static const unsigned char v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (!memcmp(g.raw, v4, 12)) {
            *out = g;
            return i;
        }
        if (any < 0) {
            any = i;
            *out = g;
        }
    }
    return any;
}

/* Open the first device (or `name`), a PD and port data; 0 or -1 with a message in err. */
static inline int vp_open(vpair *p, const st_verbs_api *v, const char *name, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->v = v;
    int n = 0;
    struct ibv_device **l = v->get_device_list(&n);
    if (!l || n == 0) {
        snprintf(err, errlen, "no verbs device");
        if (l)
            v->free_device_list(l);
        return -1;
    }
    struct ibv_device *d = l[0];
    for (int i = 0; name && i < n; i++)
        if (!strcmp(v->get_device_name(l[i]), name))
            d = l[i];
    p->ctx = v->open_device(d);
    v->free_device_list(l);
    if (!p->ctx) {
        snprintf(err, errlen, "open_device: %s", strerror(errno));
        return -1;
    }
    struct ibv_port_attr pa;
    if (v->query_port(p->ctx, 1, &pa) != 0) {
        snprintf(err, errlen, "query_port failed");
        return -1;
    }
    p->mtu = pa.active_mtu;
    p->gid_index = vp_pick_gid(v, p->ctx, pa.gid_tbl_len, &p->gid);
    p->pd = v->alloc_pd(p->ctx);
    if (!p->pd || p->gid_index < 0) {
        snprintf(err, errlen, p->pd ? "no usable GID" : "alloc_pd failed");
        return -1;
    }
    return 0;
}

static inline void vp_defaults(vp_opts *o)
{
    if (!o->cq_size)
        o->cq_size = 64;
    if (!o->sq)
        o->sq = 16;
    if (!o->rq)
        o->rq = 16;
    if (!o->max_inline)
        o->max_inline = 64;
    for (int i = 0; i < 2; i++)
        if (!o->access[i])
            o->access[i] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (!o->timeout)
        o->timeout = 14;
    if (!o->retry_cnt)
        o->retry_cnt = 7;
    if (!o->rnr_retry)
        o->rnr_retry = 7;
    if (!o->min_rnr_timer)
        o->min_rnr_timer = 12;
}

static inline struct ibv_qp *vp_create_qp(vpair *p, int i)
{
    struct ibv_qp_init_attr ia = {.send_cq = p->cq[i], .recv_cq = p->cq[i], .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = (uint32_t)p->o.sq, .max_recv_wr = (uint32_t)p->o.rq,
                                          .max_send_sge = 2, .max_recv_sge = 2,
                                          .max_inline_data = (uint32_t)p->o.max_inline}};
    return p->v->create_qp(p->pd, &ia);
}

static inline int vp_to_init(vpair *p, struct ibv_qp *qp, int access)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                            .qp_access_flags = (unsigned)access};
    return p->v->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static inline void vp_rtr_attr(vpair *p, struct ibv_qp_attr *a, uint32_t dest_qpn, uint32_t rq_psn)
{
    memset(a, 0, sizeof *a);
    a->qp_state = IBV_QPS_RTR;
    a->path_mtu = p->mtu;
    a->dest_qp_num = dest_qpn;
    a->rq_psn = rq_psn;
    a->max_dest_rd_atomic = 1;
    a->min_rnr_timer = (uint8_t)p->o.min_rnr_timer;
    a->ah_attr.is_global = 1;
    a->ah_attr.grh.dgid = p->gid;
    a->ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
    a->ah_attr.grh.hop_limit = 1;
    a->ah_attr.port_num = 1;
}

#define VP_RTR_MASK                                                                                                  \
    (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |        \
     IBV_QP_MIN_RNR_TIMER)
#define VP_RTS_MASK                                                                                                  \
    (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static inline void vp_rts_attr(vpair *p, struct ibv_qp_attr *a, uint32_t sq_psn)
{
    memset(a, 0, sizeof *a);
    a->qp_state = IBV_QPS_RTS;
    a->timeout = (uint8_t)p->o.timeout;
    a->retry_cnt = (uint8_t)(p->o.retry_cnt & 7);
    a->rnr_retry = (uint8_t)(p->o.rnr_retry & 7);
    a->sq_psn = sq_psn;
    a->max_rd_atomic = 1;
}

/* CQs, two QPs, both to RTS (or RTR where no_rts); PSNs 100 (qp0 sends) and 200 (qp1 sends). */
static inline int vp_pair(vpair *p, const vp_opts *o, char *err, size_t errlen)
{
    p->o = o ? *o : (vp_opts){0};
    vp_defaults(&p->o);
    const st_verbs_api *v = p->v;
    if (p->o.channel && !(p->ch = v->create_comp_channel(p->ctx))) {
        snprintf(err, errlen, "create_comp_channel: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        p->cq[i] = v->create_cq(p->ctx, p->o.cq_size, NULL, p->ch, 0);
        if (!p->cq[i] || !(p->qp[i] = vp_create_qp(p, i))) {
            snprintf(err, errlen, "create_cq/create_qp: %s", strerror(errno));
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        struct ibv_qp_attr a;
        int rc = vp_to_init(p, p->qp[i], p->o.access[i]);
        if (!rc) {
            vp_rtr_attr(p, &a, p->qp[1 - i]->qp_num, i ? 100 : 200);
            rc = v->modify_qp(p->qp[i], &a, VP_RTR_MASK);
        }
        if (!rc && !p->o.no_rts[i]) {
            vp_rts_attr(p, &a, i ? 200 : 100);
            rc = v->modify_qp(p->qp[i], &a, VP_RTS_MASK);
        }
        if (rc) {
            snprintf(err, errlen, "modify_qp of QP %d: %s", i, strerror(rc));
            return -1;
        }
    }
    return 0;
}

static inline void vp_close(vpair *p)
{
    const st_verbs_api *v = p->v;
    if (!v)
        return;
    for (int i = 0; i < 2; i++) {
        if (p->qp[i])
            v->destroy_qp(p->qp[i]);
        p->qp[i] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        if (p->cq[i])
            v->destroy_cq(p->cq[i]);
        p->cq[i] = NULL;
    }
    if (p->ch)
        v->destroy_comp_channel(p->ch);
    if (p->pd)
        v->dealloc_pd(p->pd);
    if (p->ctx)
        v->close_device(p->ctx);
    memset(p, 0, sizeof *p);
}

/* Poll cq until n completions or `secs` pass; returns how many arrived. */
static inline int vp_wait(vpair *p, struct ibv_cq *cq, struct ibv_wc *wc, int n, double secs)
{
    int got = 0;
    double end = vp_now() + secs;
    while (got < n && vp_now() < end) {
        int r = p->v->poll_cq(cq, n - got, wc + got);
        if (r < 0)
            return got;
        got += r;
    }
    return got;
}

static inline int vp_write(vpair *p, int from, int opcode, void *buf, uint32_t len, uint32_t lkey, uint64_t raddr,
                           uint32_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = len || buf ? 1 : 0,
                             .opcode = (enum ibv_wr_opcode)opcode, .send_flags = flags,
                             .imm_data = htobe32(imm)}, *bad = NULL;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return p->v->post_send(p->qp[from], &wr, &bad);
}

static inline int vp_recv(vpair *p, int at, void *buf, uint32_t len, uint32_t lkey, uint64_t wr_id)
{
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = buf ? 1 : 0}, *bad = NULL;
    return p->v->post_recv(p->qp[at], &wr, &bad);
}

#endif
