/* conformance.c - the verbs conformance suite: the misuse cases of research/rdma-testing.md (section 5.4 and
 * Appendix A, measured on rdma_rxe) run through an st_verbs_api, against the emulator (default) or real libibverbs.
 *
 *   conformance [--fake | --real] [--out FILE] [--table] [--only NAME]   run the cases
 *   conformance --table FILE                                            print a result file as a table
 *   conformance --compare FAKE RXE                                      emulator against rxe, case by case
 *   conformance --both [DIR]            the emulator, then libibverbs (skip 77 without a device), then --compare;
 *                                       the two result files go to DIR/fake.txt and DIR/rxe.txt when DIR is given
 *   conformance --list                                                  the cases, kind and expectation
 *
 * Each case runs in a child process of its own (fresh device, PD, CQs and QPs; a hang is cut at 30 s) and yields
 * one line: name, kind, expected, got, PASS/FAIL, whether the implementation rejected the misuse (1/0), a note
 * (timings: reported, never compared). Kind `exact`: got must equal expected (Appendix A's rxe value); `class`:
 * got must be one of the '|'-separated alternatives (rows where implementations differ, e.g. rxe against mlx5).
 * --compare fails where the two files disagree on an exact case, or where the emulator rejected less than rxe on a
 * class case (the emulator more lenient than the kernel), or where a case is missing from either file.
 * --real takes libibverbs from st_verbs_get (runtime/verbs_load.c) and exits 77 (skip) naming why when there is no
 * library or no device. Exit status: 0 when every case passes (or the comparison agrees), 1 otherwise, 2 on usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakeverbs.h"
#include "vpair.h"

typedef struct res {
    char got[200];
    char note[120];
    int rej;
} res;

typedef struct ccase {
    const char *name;
    int exact;
    const char *expected;
    void (*fn)(const st_verbs_api *v, res *r);
} ccase;

static const char *status_name(int s)
{
    static const char *const n[] = {"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR",
                                    "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR",
                                    "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR",
                                    "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR",
                                    "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR",
                                    "GENERAL_ERR"};
    return s >= 0 && (size_t)s < sizeof n / sizeof n[0] ? n[s] : s == -1 ? "NONE" : "UNKNOWN";
}

static const char *err_name(int e)
{
    switch (e) {
    case 0: return "ok";
    case EINVAL: return "EINVAL";
    case ENODATA: return "ENODATA";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EBUSY: return "EBUSY";
    case ENOMEM: return "ENOMEM";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EFAULT: return "EFAULT";
    case EPERM: return "EPERM";
    default: return "E?";
    }
}

static const char *state_name(int s)
{
    static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    return s >= 0 && s < 7 ? n[s] : "?";
}

static int qstate(const st_verbs_api *v, struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    return v->query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 ? (int)a.qp_state : -1;
}

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* set up: a pair with options; on failure the case's result says so */
static int setup(const st_verbs_api *v, vpair *p, const vp_opts *o, res *r)
{
    char err[160];
    if (vp_open(p, v, NULL, err, sizeof err) != 0 || (o && vp_pair(p, o, err, sizeof err) != 0)) {
        snprintf(r->got, sizeof r->got, "setup: %s", err);
        return -1;
    }
    return 0;
}

/* a device, PD, two CQs and two QPs left in RESET */
static int setup_reset(const st_verbs_api *v, vpair *p, res *r)
{
    if (setup(v, p, NULL, r))
        return -1;
    p->o = (vp_opts){0};
    vp_defaults(&p->o);
    for (int i = 0; i < 2; i++) {
        p->cq[i] = v->create_cq(p->ctx, 16, NULL, NULL, 0);
        if (!p->cq[i] || !(p->qp[i] = vp_create_qp(p, i))) {
            snprintf(r->got, sizeof r->got, "setup: create: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void got_err(res *r, int rc)
{
    snprintf(r->got, sizeof r->got, "%s", err_name(rc));
    r->rej = rc != 0;
}

/* ---- memory and QP state ------------------------------------------------------------------------------------- */
static void c_reg_mr_rw_without_lw(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup(v, &p, NULL, r))
        return;
    static char b[64];
    errno = 0;
    struct ibv_mr *m = v->reg_mr(p.pd, b, sizeof b, IBV_ACCESS_REMOTE_WRITE);
    snprintf(r->got, sizeof r->got, "%s %s", m ? "MR" : "NULL", err_name(m ? 0 : errno));
    r->rej = !m;
    if (m)
        v->dereg_mr(m);
    vp_close(&p);
}

static void c_modify_reset_to_rts(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r))
        return;
    struct ibv_qp_attr a;
    vp_rts_attr(&p, &a, 0);
    got_err(r, v->modify_qp(p.qp[0], &a, VP_RTS_MASK));
    vp_close(&p);
}

static int to_init_both(const st_verbs_api *v, vpair *p)
{
    (void)v;
    return vp_to_init(p, p->qp[0], RW) || vp_to_init(p, p->qp[1], RW);
}

static void c_rtr_without_dest_qpn(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r) || to_init_both(v, &p))
        return;
    struct ibv_qp_attr a;
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    got_err(r, v->modify_qp(p.qp[0], &a, VP_RTR_MASK & ~IBV_QP_DEST_QPN));
    vp_close(&p);
}

static void c_rts_without_retry_cnt(const st_verbs_api *v, res *r)
{
    vpair p;
    vp_opts o = {.no_rts = {1, 1}};
    if (setup(v, &p, &o, r))
        return;
    struct ibv_qp_attr a;
    vp_rts_attr(&p, &a, 0);
    got_err(r, v->modify_qp(p.qp[0], &a, VP_RTS_MASK & ~IBV_QP_RETRY_CNT));
    vp_close(&p);
}

static void c_rtr_not_global(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r) || to_init_both(v, &p))
        return;
    struct ibv_qp_attr a;
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.ah_attr.is_global = 0;
    got_err(r, v->modify_qp(p.qp[0], &a, VP_RTR_MASK));
    vp_close(&p);
}

static int empty_gid_index(const st_verbs_api *v, vpair *p)
{
    struct ibv_port_attr pa;
    v->query_port(p->ctx, 1, &pa);
    for (int i = 0; i < pa.gid_tbl_len; i++) {
        union ibv_gid g;
        static const union ibv_gid zero;
        if (v->query_gid(p->ctx, 1, i, &g) == 0 && !memcmp(&g, &zero, sizeof g))
            return i;
    }
    return -1;
}

static void c_rtr_empty_sgid(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r) || to_init_both(v, &p))
        return;
    int e = empty_gid_index(v, &p);
    if (e < 0) {
        snprintf(r->got, sizeof r->got, "no empty GID slot");
        vp_close(&p);
        return;
    }
    struct ibv_qp_attr a;
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.ah_attr.grh.sgid_index = (uint8_t)e;
    got_err(r, v->modify_qp(p.qp[0], &a, VP_RTR_MASK));
    snprintf(r->note, sizeof r->note, "sgid_index %d", e);
    vp_close(&p);
}

static void c_rtr_mtu_above_active(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r) || to_init_both(v, &p))
        return;
    struct ibv_qp_attr a, q;
    struct ibv_qp_init_attr ia;
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.path_mtu = IBV_MTU_4096;
    int rc = v->modify_qp(p.qp[0], &a, VP_RTR_MASK);
    v->query_qp(p.qp[0], &q, IBV_QP_PATH_MTU, &ia);
    snprintf(r->got, sizeof r->got, "%s path_mtu=%d", err_name(rc), 128 << q.path_mtu);
    snprintf(r->note, sizeof r->note, "active mtu %d", 128 << p.mtu);
    r->rej = rc != 0;
    vp_close(&p);
}

static void c_rtr_unreachable_dgid(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r) || to_init_both(v, &p))
        return;
    struct ibv_qp_attr a;
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.ah_attr.grh.dgid.raw[15] = 99; /* a neighbour that does not exist: ::ffff:a.b.c.99 */
    double t0 = vp_now();
    int rc = v->modify_qp(p.qp[0], &a, VP_RTR_MASK);
    double t = vp_now() - t0;
    int st = qstate(v, p.qp[0]);
    vp_rts_attr(&p, &a, 0);
    int rts = v->modify_qp(p.qp[0], &a, VP_RTS_MASK);
    static char b[8];
    int post = vp_write(&p, 0, IBV_WR_SEND, b, 0, 0, 0, 0, 0, 0, 1);
    snprintf(r->got, sizeof r->got, "%s state=%s rts=%s post=%s", err_name(rc), state_name(st), err_name(rts),
             err_name(post));
    snprintf(r->note, sizeof r->note, "modify_qp took %.0f ms", t * 1e3);
    r->rej = rc != 0;
    vp_close(&p);
}

static void c_query_gid_empty(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup(v, &p, NULL, r))
        return;
    int e = empty_gid_index(v, &p);
    snprintf(r->got, sizeof r->got, e >= 0 ? "ok zero" : "no empty slot");
    vp_close(&p);
}

static void c_create_qp_caps(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup(v, &p, NULL, r))
        return;
    struct ibv_cq *cq = v->create_cq(p.ctx, 64, NULL, NULL, 0);
    struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
                                          .max_recv_sge = 1}};
    struct ibv_qp *qp = cq ? v->create_qp(p.pd, &ia) : NULL;
    if (qp) {
        snprintf(r->got, sizeof r->got, "send=%u recv=%u", ia.cap.max_send_wr, ia.cap.max_recv_wr);
        snprintf(r->note, sizeof r->note, "max_inline %u", ia.cap.max_inline_data);
        v->destroy_qp(qp);
    } else
        snprintf(r->got, sizeof r->got, "create_qp %s", err_name(errno));
    if (cq)
        v->destroy_cq(cq);
    vp_close(&p);
}

static void post_in_state(const st_verbs_api *v, res *r, int state, int recv)
{
    vpair p;
    if (setup_reset(v, &p, r))
        return;
    if (state >= IBV_QPS_INIT && to_init_both(v, &p)) {
        snprintf(r->got, sizeof r->got, "setup: INIT");
        vp_close(&p);
        return;
    }
    if (state >= IBV_QPS_RTR) {
        struct ibv_qp_attr a;
        vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
        v->modify_qp(p.qp[0], &a, VP_RTR_MASK);
    }
    static char b[8];
    got_err(r, recv ? vp_recv(&p, 0, NULL, 0, 0, 1) : vp_write(&p, 0, IBV_WR_SEND, b, 0, 0, 0, 0, 0, 0, 1));
    vp_close(&p);
}

static void c_post_send_init(const st_verbs_api *v, res *r) { post_in_state(v, r, IBV_QPS_INIT, 0); }
static void c_post_send_rtr(const st_verbs_api *v, res *r) { post_in_state(v, r, IBV_QPS_RTR, 0); }
static void c_post_recv_reset(const st_verbs_api *v, res *r) { post_in_state(v, r, IBV_QPS_RESET, 1); }
static void c_post_recv_init(const st_verbs_api *v, res *r) { post_in_state(v, r, IBV_QPS_INIT, 1); }

/* ---- data path ------------------------------------------------------------------------------------------------ */
typedef struct bufs {
    unsigned char src[8192], dst[8192];
    struct ibv_mr *ms, *md;
} bufs;

static int reg(const st_verbs_api *v, vpair *p, bufs *b, int dst_access, res *r)
{
    memset(b->src, 0x11, sizeof b->src);
    memset(b->dst, 0, sizeof b->dst);
    b->ms = v->reg_mr(p->pd, b->src, sizeof b->src, RW);
    b->md = v->reg_mr(p->pd, b->dst, sizeof b->dst, dst_access);
    if (!b->ms || !b->md) {
        snprintf(r->got, sizeof r->got, "setup: reg_mr %s", err_name(errno));
        return -1;
    }
    return 0;
}

static void unreg(const st_verbs_api *v, bufs *b)
{
    if (b->ms)
        v->dereg_mr(b->ms);
    if (b->md)
        v->dereg_mr(b->md);
}

static void c_write_imm_zero_sge(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){0}, r) || reg(v, &p, &b, RW, r))
        return;
    vp_recv(&p, 1, NULL, 0, 0, 7);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, b.src, 100, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0x1234abcd,
             IBV_SEND_SIGNALED, 1);
    struct ibv_wc s = {0}, w = {0};
    int ns = vp_wait(&p, p.cq[0], &s, 1, 5), nr = vp_wait(&p, p.cq[1], &w, 1, 5);
    snprintf(r->got, sizeof r->got, "send=%s/%s recv=%s/%s len=%u imm=%s", ns ? status_name(s.status) : "NONE",
             ns && s.opcode == IBV_WC_RDMA_WRITE ? "RDMA_WRITE" : "?", nr ? status_name(w.status) : "NONE",
             nr && w.opcode == IBV_WC_RECV_RDMA_WITH_IMM ? "RECV_RDMA_WITH_IMM" : "?", nr ? w.byte_len : 0,
             nr && (w.wc_flags & IBV_WC_WITH_IMM) && be32toh(w.imm_data) == 0x1234abcd ? "ok" : "bad");
    unreg(v, &b);
    vp_close(&p);
}

static void c_unsignaled_then_signaled(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){0}, r) || reg(v, &p, &b, RW, r))
        return;
    vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 64, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, 0, 1);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 64, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, IBV_SEND_SIGNALED, 2);
    struct ibv_wc wc[4];
    int n = vp_wait(&p, p.cq[0], wc, 4, 0.5);
    snprintf(r->got, sizeof r->got, "%d wr=%llu", n, n ? (unsigned long long)wc[0].wr_id : 0ull);
    unreg(v, &b);
    vp_close(&p);
}

/* One WRITE (or READ) from QP 0 with a flaw; got = requester status and both QP states. */
static void bad_write(const st_verbs_api *v, res *r, int flaw)
{
    vpair p;
    static bufs b;
    vp_opts o = {.access = {RW, flaw == 6 ? IBV_ACCESS_LOCAL_WRITE : RW}};
    int dst_access = flaw == 3 ? IBV_ACCESS_LOCAL_WRITE : flaw == 4 ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE
                                                                    : RW;
    if (setup(v, &p, &o, r) || reg(v, &p, &b, dst_access, r))
        return;
    uint32_t lkey = b.ms->lkey, rkey = b.md->rkey;
    uint64_t raddr = (uintptr_t)b.dst;
    int op = flaw == 4 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    if (flaw == 1)
        rkey ^= 0x00ff0f01u;
    if (flaw == 2)
        raddr += sizeof b.dst - 16;
    if (flaw == 5) {
        v->dereg_mr(b.md);
        b.md = NULL;
    }
    if (flaw == 7)
        lkey ^= 0x00ff0f01u;
    vp_write(&p, 0, op, b.src, 64, lkey, raddr, rkey, 0, IBV_SEND_SIGNALED, 1);
    struct ibv_wc wc = {0};
    int n = vp_wait(&p, p.cq[0], &wc, 1, 5);
    struct ibv_wc w2;
    vp_wait(&p, p.cq[1], &w2, 1, 0.05); /* the responder's view settles */
    if (flaw == 6 || flaw == 7)
        snprintf(r->got, sizeof r->got, "%s", n ? status_name(wc.status) : "NONE");
    else
        snprintf(r->got, sizeof r->got, "%s qp=%s/%s", n ? status_name(wc.status) : "NONE",
                 state_name(qstate(v, p.qp[0])), state_name(qstate(v, p.qp[1])));
    snprintf(r->note, sizeof r->note, "QPs %s/%s", state_name(qstate(v, p.qp[0])), state_name(qstate(v, p.qp[1])));
    r->rej = !n || wc.status != IBV_WC_SUCCESS;
    unreg(v, &b);
    vp_close(&p);
}

static void c_bad_rkey(const st_verbs_api *v, res *r) { bad_write(v, r, 1); }
static void c_write_out_of_bounds(const st_verbs_api *v, res *r) { bad_write(v, r, 2); }
static void c_mr_without_remote_write(const st_verbs_api *v, res *r) { bad_write(v, r, 3); }
static void c_read_without_remote_read(const st_verbs_api *v, res *r) { bad_write(v, r, 4); }
static void c_rkey_after_dereg(const st_verbs_api *v, res *r) { bad_write(v, r, 5); }
static void c_responder_qp_without_remote_write(const st_verbs_api *v, res *r) { bad_write(v, r, 6); }
static void c_bad_lkey(const st_verbs_api *v, res *r) { bad_write(v, r, 7); }

static void c_rnr_retry_0(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    vp_opts o = {.rnr_retry = 8 /* & 7 = 0 */, .min_rnr_timer = 1};
    if (setup(v, &p, &o, r) || reg(v, &p, &b, RW, r))
        return;
    vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, b.src, 64, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 1,
             IBV_SEND_SIGNALED, 1);
    struct ibv_wc wc = {0};
    int n = vp_wait(&p, p.cq[0], &wc, 1, 5);
    snprintf(r->got, sizeof r->got, "%s qp=%s/%s", n ? status_name(wc.status) : "NONE",
             state_name(qstate(v, p.qp[0])), state_name(qstate(v, p.qp[1])));
    r->rej = 1;
    unreg(v, &b);
    vp_close(&p);
}

static void c_rnr_retry_7_late_recv(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    vp_opts o = {.rnr_retry = 7, .min_rnr_timer = 12};
    if (setup(v, &p, &o, r) || reg(v, &p, &b, RW, r))
        return;
    vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, b.src, 64, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 1,
             IBV_SEND_SIGNALED, 1);
    struct ibv_wc wc = {0}, w2 = {0};
    int early = vp_wait(&p, p.cq[0], &wc, 1, 0.3);
    vp_recv(&p, 1, NULL, 0, 0, 9);
    double t0 = vp_now();
    int n = early ? 1 : vp_wait(&p, p.cq[0], &wc, 1, 5);
    int m = vp_wait(&p, p.cq[1], &w2, 1, 5);
    snprintf(r->got, sizeof r->got, "%s%s recv=%s", early ? "early " : "", n ? status_name(wc.status) : "NONE",
             m ? status_name(w2.status) : "NONE");
    snprintf(r->note, sizeof r->note, "done %.0f ms after the receive", (vp_now() - t0) * 1e3);
    unreg(v, &b);
    vp_close(&p);
}

static void c_send_larger_than_recv(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){0}, r) || reg(v, &p, &b, RW, r))
        return;
    vp_recv(&p, 1, b.dst, 16, b.md->lkey, 9);
    vp_write(&p, 0, IBV_WR_SEND, b.src, 64, b.ms->lkey, 0, 0, 0, IBV_SEND_SIGNALED, 1);
    struct ibv_wc s = {0}, w = {0};
    int ns = vp_wait(&p, p.cq[0], &s, 1, 5), nr = vp_wait(&p, p.cq[1], &w, 1, 5);
    snprintf(r->got, sizeof r->got, "%s/%s qp=%s/%s", ns ? status_name(s.status) : "NONE",
             nr ? status_name(w.status) : "NONE", state_name(qstate(v, p.qp[0])), state_name(qstate(v, p.qp[1])));
    r->rej = ns && s.status != IBV_WC_SUCCESS;
    unreg(v, &b);
    vp_close(&p);
}

static void c_peer_in_reset(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    vp_opts o = {.timeout = 1, .retry_cnt = 1};
    if (setup(v, &p, &o, r) || reg(v, &p, &b, RW, r))
        return;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
    v->modify_qp(p.qp[1], &a, IBV_QP_STATE);
    double t0 = vp_now();
    vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 64, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, IBV_SEND_SIGNALED, 1);
    struct ibv_wc wc = {0};
    int n = vp_wait(&p, p.cq[0], &wc, 1, 10);
    snprintf(r->got, sizeof r->got, "%s", n ? status_name(wc.status) : "NONE");
    snprintf(r->note, sizeof r->note, "after %.0f ms", (vp_now() - t0) * 1e3);
    r->rej = 1;
    unreg(v, &b);
    vp_close(&p);
}

static void c_forced_err_flush(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){0}, r) || reg(v, &p, &b, RW, r))
        return;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET}; /* the peer does not answer: the sends stay outstanding */
    v->modify_qp(p.qp[1], &a, IBV_QP_STATE);
    for (int i = 0; i < 3; i++)
        vp_recv(&p, 0, b.dst, 16, b.md->lkey, 100 + (uint64_t)i);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 16, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, 0, 1);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 16, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, IBV_SEND_SIGNALED, 2);
    a.qp_state = IBV_QPS_ERR;
    v->modify_qp(p.qp[0], &a, IBV_QP_STATE);
    struct ibv_wc wc[8];
    int n = vp_wait(&p, p.cq[0], wc, 8, 0.5), fl = 0;
    for (int i = 0; i < n; i++)
        fl += wc[i].status == IBV_WC_WR_FLUSH_ERR;
    int ps = vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 16, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, 0, 3);
    int pr = vp_recv(&p, 0, b.dst, 16, b.md->lkey, 4);
    int m = vp_wait(&p, p.cq[0], wc, 8, 0.5), fl2 = 0;
    for (int i = 0; i < m; i++)
        fl2 += wc[i].status == IBV_WC_WR_FLUSH_ERR;
    snprintf(r->got, sizeof r->got, "%dxWR_FLUSH_ERR of %d; later posts %s,%s: %dxWR_FLUSH_ERR", fl, n, err_name(ps),
             err_name(pr), fl2);
    unreg(v, &b);
    vp_close(&p);
}

static void c_inline_too_big(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){.max_inline = 64}, r) || reg(v, &p, &b, RW, r))
        return;
    got_err(r, vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 200, 0, (uintptr_t)b.dst, b.md->rkey, 0,
                        IBV_SEND_INLINE | IBV_SEND_SIGNALED, 1));
    unreg(v, &b);
    vp_close(&p);
}

static void c_sq_overpost(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){.sq = 16, .cq_size = 64}, r) || reg(v, &p, &b, RW, r))
        return;
    int rc = 0, i;
    for (i = 0; i < 20 && rc == 0; i++)
        rc = vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 8, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0,
                      IBV_SEND_SIGNALED, (uint64_t)i);
    if (rc)
        snprintf(r->got, sizeof r->got, "%s at %d", err_name(rc), i);
    else
        snprintf(r->got, sizeof r->got, "20 accepted");
    r->rej = rc != 0;
    struct ibv_wc wc[32];
    vp_wait(&p, p.cq[0], wc, 32, 0.3);
    unreg(v, &b);
    vp_close(&p);
}

static void c_cq_round(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup(v, &p, NULL, r))
        return;
    struct ibv_cq *cq = v->create_cq(p.ctx, 4, NULL, NULL, 0);
    snprintf(r->got, sizeof r->got, "cqe=%d", cq ? cq->cqe : -1);
    if (cq)
        v->destroy_cq(cq);
    vp_close(&p);
}

static void c_cq_overrun(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){.cq_size = 4, .sq = 16}, r) || reg(v, &p, &b, RW, r))
        return;
    for (int i = 0; i < 12; i++)
        vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 8, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, IBV_SEND_SIGNALED,
                 (uint64_t)i);
    struct timespec ts = {0, 200 * 1000000};
    nanosleep(&ts, NULL); /* let every write complete before the first poll (rxe completes in the kernel) */
    struct ibv_wc w2;
    v->poll_cq(p.cq[1], 1, &w2); /* the emulator progresses inside calls */
    struct ibv_wc wc[16];
    int n = vp_wait(&p, p.cq[0], wc, 16, 0.3), ok = 0;
    for (int i = 0; i < n; i++)
        ok += wc[i].status == IBV_WC_SUCCESS;
    int fl = fcntl(p.ctx->async_fd, F_GETFL);
    fcntl(p.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
    struct ibv_async_event ev;
    int cq_err = 0;
    while (v->get_async_event(p.ctx, &ev) == 0) {
        cq_err |= ev.event_type == IBV_EVENT_CQ_ERR;
        v->ack_async_event(&ev);
    }
    int st = qstate(v, p.qp[0]);
    if (cq_err || st == IBV_QPS_ERR)
        snprintf(r->got, sizeof r->got, "%s qp=%s", cq_err ? "CQ_ERR" : "no CQ_ERR", state_name(st));
    else
        snprintf(r->got, sizeof r->got, "%d delivered qp=%s", ok, state_name(st));
    snprintf(r->note, sizeof r->note, "%d successful of 12, cqe %d", ok, p.cq[0]->cqe);
    r->rej = cq_err || st == IBV_QPS_ERR;
    unreg(v, &b);
    vp_close(&p);
}

static void c_dealloc_pd_live_mr(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup(v, &p, NULL, r))
        return;
    struct ibv_pd *pd = v->alloc_pd(p.ctx);
    static char buf[64];
    struct ibv_mr *m = pd ? v->reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!m) {
        snprintf(r->got, sizeof r->got, "setup: %s", err_name(errno));
        vp_close(&p);
        return;
    }
    got_err(r, v->dealloc_pd(pd));
    v->dereg_mr(m);
    v->dealloc_pd(pd);
    vp_close(&p);
}

static void c_destroy_cq_live_qp(const st_verbs_api *v, res *r)
{
    vpair p;
    if (setup_reset(v, &p, r))
        return;
    got_err(r, v->destroy_cq(p.cq[0]));
    vp_close(&p);
}

static void c_responder_in_rtr(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){.no_rts = {0, 1}}, r) || reg(v, &p, &b, RW, r))
        return;
    vp_recv(&p, 1, NULL, 0, 0, 9);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, b.src, 64, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 1,
             IBV_SEND_SIGNALED, 1);
    struct ibv_wc s = {0}, w = {0};
    int ns = vp_wait(&p, p.cq[0], &s, 1, 5), nr = vp_wait(&p, p.cq[1], &w, 1, 5);
    snprintf(r->got, sizeof r->got, "%s recv=%s", ns ? status_name(s.status) : "NONE",
             nr ? status_name(w.status) : "NONE");
    unreg(v, &b);
    vp_close(&p);
}

static void c_write_4k_then_imm0(const st_verbs_api *v, res *r)
{
    vpair p;
    static bufs b;
    if (setup(v, &p, &(vp_opts){0}, r) || reg(v, &p, &b, RW, r))
        return;
    for (int i = 0; i < 4096; i++)
        b.src[i] = (unsigned char)(i * 13 + 5);
    vp_recv(&p, 1, NULL, 0, 0, 9);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE, b.src, 4096, b.ms->lkey, (uintptr_t)b.dst, b.md->rkey, 0, 0, 1);
    vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, NULL, 0, 0, (uintptr_t)b.dst, b.md->rkey, 1, IBV_SEND_SIGNALED, 2);
    struct ibv_wc w = {0}, s;
    int nr = vp_wait(&p, p.cq[1], &w, 1, 5);
    int vis = 0;
    while (vis < 4096 && b.dst[vis] == b.src[vis])
        vis++;
    snprintf(r->got, sizeof r->got, "%s len=%u visible=%d", nr ? status_name(w.status) : "NONE", nr ? w.byte_len : 0,
             vis);
    vp_wait(&p, p.cq[0], &s, 1, 5);
    unreg(v, &b);
    vp_close(&p);
}

/* Exact rows carry Appendix A's rxe result; class rows the alternatives implementations are known to give. */
static const ccase cases[] = {
    {"reg_mr_rw_without_lw", 1, "NULL EINVAL", c_reg_mr_rw_without_lw},
    {"modify_reset_to_rts", 1, "EINVAL", c_modify_reset_to_rts},
    {"rtr_without_dest_qpn", 1, "EINVAL", c_rtr_without_dest_qpn},
    {"rts_without_retry_cnt", 1, "EINVAL", c_rts_without_retry_cnt},
    {"rtr_not_global", 1, "EINVAL", c_rtr_not_global},
    {"rtr_empty_sgid", 1, "ENODATA", c_rtr_empty_sgid},
    {"rtr_mtu_above_active", 1, "ok path_mtu=4096", c_rtr_mtu_above_active},
    {"rtr_unreachable_dgid", 1, "ETIMEDOUT state=INIT rts=EINVAL post=EINVAL", c_rtr_unreachable_dgid},
    {"query_gid_empty", 1, "ok zero", c_query_gid_empty},
    {"create_qp_caps", 1, "send=16 recv=16", c_create_qp_caps},
    {"post_send_init", 1, "EINVAL", c_post_send_init},
    {"post_send_rtr", 1, "EINVAL", c_post_send_rtr},
    {"post_recv_reset", 1, "EINVAL", c_post_recv_reset},
    {"post_recv_init", 1, "ok", c_post_recv_init},
    {"write_imm_zero_sge", 1, "send=SUCCESS/RDMA_WRITE recv=SUCCESS/RECV_RDMA_WITH_IMM len=100 imm=ok",
     c_write_imm_zero_sge},
    {"unsignaled_then_signaled", 1, "1 wr=2", c_unsignaled_then_signaled},
    {"bad_rkey", 1, "REM_ACCESS_ERR qp=ERR/ERR", c_bad_rkey},
    {"write_out_of_bounds", 1, "REM_ACCESS_ERR qp=ERR/ERR", c_write_out_of_bounds},
    {"mr_without_remote_write", 1, "REM_ACCESS_ERR qp=ERR/ERR", c_mr_without_remote_write},
    {"read_without_remote_read", 1, "REM_ACCESS_ERR qp=ERR/ERR", c_read_without_remote_read},
    {"rkey_after_dereg", 1, "REM_ACCESS_ERR qp=ERR/ERR", c_rkey_after_dereg},
    {"responder_qp_without_remote_write", 1, "REM_INV_REQ_ERR", c_responder_qp_without_remote_write},
    {"bad_lkey", 0, "LOC_QP_OP_ERR|LOC_PROT_ERR", c_bad_lkey},
    {"rnr_retry_0", 1, "RNR_RETRY_EXC_ERR qp=ERR/RTS", c_rnr_retry_0},
    {"rnr_retry_7_late_recv", 1, "SUCCESS recv=SUCCESS", c_rnr_retry_7_late_recv},
    {"send_larger_than_recv", 0,
     "REM_OP_ERR/LOC_QP_OP_ERR qp=ERR/ERR|REM_INV_REQ_ERR/LOC_LEN_ERR qp=ERR/ERR|REM_OP_ERR/LOC_LEN_ERR qp=ERR/ERR|"
     "REM_INV_REQ_ERR/LOC_QP_OP_ERR qp=ERR/ERR",
     c_send_larger_than_recv},
    {"peer_in_reset", 1, "RETRY_EXC_ERR", c_peer_in_reset},
    /* A class: after ERR, ibv_post_recv(3) and Appendix A flush a later receive too; rxe on Debian's 6.1 kernels
     * (-47, -50, -57, measured in the guest) flushes the later send but leaves the later receive pending. The
     * emulator flushes both; the transport relies on neither (it never posts after an error). */
    {"forced_err_flush", 0,
     "5xWR_FLUSH_ERR of 5; later posts ok,ok: 2xWR_FLUSH_ERR|5xWR_FLUSH_ERR of 5; later posts ok,ok: 1xWR_FLUSH_ERR",
     c_forced_err_flush},
    {"inline_too_big", 1, "EINVAL", c_inline_too_big},
    {"sq_overpost", 0, "ENOMEM at 17|20 accepted", c_sq_overpost},
    {"cq_round", 1, "cqe=7", c_cq_round},
    {"cq_overrun", 0, "CQ_ERR qp=ERR|CQ_ERR qp=RTS|7 delivered qp=RTS", c_cq_overrun},
    {"dealloc_pd_live_mr", 1, "EBUSY", c_dealloc_pd_live_mr},
    {"destroy_cq_live_qp", 1, "EBUSY", c_destroy_cq_live_qp},
    {"responder_in_rtr", 1, "SUCCESS recv=SUCCESS", c_responder_in_rtr},
    {"write_4k_then_imm0", 1, "SUCCESS len=0 visible=4096", c_write_4k_then_imm0},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ---- running and reporting ------------------------------------------------------------------------------------ */
static int matches(const char *expected, const char *got)
{
    const char *p = expected;
    size_t n = strlen(got);
    while (p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, got, n))
            return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

static void run_case(const st_verbs_api *v, const ccase *c, res *r)
{
    memset(r, 0, sizeof *r);
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(r->got, sizeof r->got, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        res mine = {0};
        c->fn(v, &mine);
        if (write(fd[1], &mine, sizeof mine) != (ssize_t)sizeof mine)
            _exit(3);
        _exit(0);
    }
    close(fd[1]);
    struct pollfd pf = {.fd = fd[0], .events = POLLIN};
    if (pid < 0)
        snprintf(r->got, sizeof r->got, "fork: %s", strerror(errno));
    else if (poll(&pf, 1, 30000) == 1 && read(fd[0], r, sizeof *r) == (ssize_t)sizeof *r)
        waitpid(pid, NULL, 0);
    else {
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        snprintf(r->got, sizeof r->got, WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL ? "crashed (signal %d)" : "hang",
                 WTERMSIG(st));
    }
    close(fd[0]);
}

typedef struct line {
    char name[64], kind[8], expected[300], got[200], verdict[8], note[120];
    int rej;
} line;

static void print_table(const line *l, int n, FILE *out)
{
    fprintf(out, "%-34s %-5s %-4s %-50s %s\n", "case", "kind", "", "got", "expected (if it differs) / note");
    for (int i = 0; i < n; i++)
        fprintf(out, "%-34s %-5s %-4s %-50s %s%s%s\n", l[i].name, l[i].kind, l[i].verdict, l[i].got,
                strcmp(l[i].verdict, "PASS") ? "expected " : "", strcmp(l[i].verdict, "PASS") ? l[i].expected : "",
                l[i].note[0] ? l[i].note : "");
}

static int read_file(const char *path, line *l, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "conformance: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char buf[1024];
    int n = 0;
    while (n < max && fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        buf[strcspn(buf, "\n")] = 0;
        char *field[7] = {0};
        char *p = buf;
        for (int k = 0; k < 7 && p; k++) {
            field[k] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        if (!field[5]) {
            fprintf(stderr, "conformance: %s: malformed line '%s'\n", path, buf);
            fclose(f);
            return -1;
        }
        line *x = &l[n++];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", field[0]);
        snprintf(x->kind, sizeof x->kind, "%s", field[1]);
        snprintf(x->expected, sizeof x->expected, "%s", field[2]);
        snprintf(x->got, sizeof x->got, "%s", field[3]);
        snprintf(x->verdict, sizeof x->verdict, "%s", field[4]);
        x->rej = atoi(field[5]);
        if (field[6])
            snprintf(x->note, sizeof x->note, "%s", field[6]);
    }
    fclose(f);
    return n;
}

static int compare_lines(const line *a, int na, const line *b, int nb)
{
    int bad = 0;
    printf("%-34s %-5s %-8s %-45s %s\n", "case", "kind", "verdict", "emulator", "rxe");
    for (int i = 0; i < NCASES; i++) {
        const line *x = NULL, *y = NULL;
        for (int k = 0; k < na; k++)
            if (!strcmp(a[k].name, cases[i].name))
                x = &a[k];
        for (int k = 0; k < nb; k++)
            if (!strcmp(b[k].name, cases[i].name))
                y = &b[k];
        const char *verdict;
        if (!x || !y)
            verdict = "MISSING";
        else if (cases[i].exact)
            verdict = strcmp(x->got, y->got) ? "DIFFER" : "agree";
        else
            verdict = x->rej < y->rej ? "LENIENT" : x->rej > y->rej ? "stricter" : "agree";
        int fail = !strcmp(verdict, "MISSING") || !strcmp(verdict, "DIFFER") || !strcmp(verdict, "LENIENT");
        bad += fail;
        printf("%-34s %-5s %-8s %-45s %s\n", cases[i].name, cases[i].exact ? "exact" : "class", verdict,
               x ? x->got : "-", y ? y->got : "-");
    }
    printf("%d case(s) where the emulator disagrees with rxe or is more lenient\n", bad);
    return bad ? 1 : 0;
}

static int compare(const char *fake_path, const char *rxe_path)
{
    static line a[128], b[128];
    int na = read_file(fake_path, a, 128), nb = read_file(rxe_path, b, 128);
    if (na < 0 || nb < 0)
        return 2;
    return compare_lines(a, na, b, nb);
}

/* Run every case (or `only`) against v: one line each to out (may be NULL) and into l; returns how many failed. */
static int run_all(const st_verbs_api *v, const char *only, FILE *out, line *l, int *n)
{
    int failed = 0;
    *n = 0;
    if (out)
        fprintf(out, "# conformance against %s: name, kind, expected, got, verdict, rejected, note\n", v->name);
    for (int i = 0; i < NCASES; i++) {
        if (only && strcmp(only, cases[i].name))
            continue;
        res r;
        run_case(v, &cases[i], &r);
        int pass = matches(cases[i].expected, r.got);
        failed += !pass;
        line *x = &l[(*n)++];
        snprintf(x->name, sizeof x->name, "%s", cases[i].name);
        snprintf(x->kind, sizeof x->kind, "%s", cases[i].exact ? "exact" : "class");
        snprintf(x->expected, sizeof x->expected, "%s", cases[i].expected);
        snprintf(x->got, sizeof x->got, "%s", r.got);
        snprintf(x->verdict, sizeof x->verdict, "%s", pass ? "PASS" : "FAIL");
        snprintf(x->note, sizeof x->note, "%s", r.note);
        x->rej = r.rej;
        if (out) {
            fprintf(out, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", x->name, x->kind, x->expected, x->got, x->verdict, x->rej,
                    x->note);
            fflush(out);
        }
    }
    return failed;
}

/* libibverbs with a device, else NULL after printing why (the caller exits 77) */
static const st_verbs_api *real_api(void)
{
    char why[256] = "";
    st_verbs_set_api(NULL);
    const st_verbs_api *v = st_verbs_get(why, sizeof why);
    if (!v || strcmp(v->name, "libibverbs") != 0) {
        printf("conformance: skip: libibverbs unavailable: %s\n", why);
        return NULL;
    }
    int n = 0;
    struct ibv_device **l = v->get_device_list(&n);
    if (l)
        v->free_device_list(l);
    if (n == 0) {
        printf("conformance: skip: libibverbs has no device\n");
        return NULL;
    }
    return v;
}

/* --both: the emulator, then libibverbs, then the comparison (the rxe guest's one command) */
static int both(const char *dir)
{
    const st_verbs_api *r = real_api();
    if (!r)
        return 77;
    static line a[NCASES], b[NCASES];
    int na, nb;
    char path[512];
    FILE *fa = NULL, *fb = NULL;
    if (dir) {
        snprintf(path, sizeof path, "%s/fake.txt", dir);
        fa = fopen(path, "w");
        snprintf(path, sizeof path, "%s/rxe.txt", dir);
        fb = fopen(path, "w");
        if (!fa || !fb) {
            fprintf(stderr, "conformance: %s: %s\n", dir, strerror(errno));
            return 2;
        }
    }
    int fail_fake = run_all(st_fake_api(), NULL, fa, a, &na);
    int fail_real = run_all(r, NULL, fb, b, &nb);
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    printf("emulator: %d of %d case(s) meet the expectation; %s: %d of %d\n", na - fail_fake, na, r->name,
           nb - fail_real, nb);
    return compare_lines(a, na, b, nb) || fail_fake ? 1 : 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: conformance [--fake|--real] [--out FILE] [--table] [--only NAME]\n"
               "       conformance --table FILE | --compare FAKE RXE | --both [DIR] | --list\n");
}

int main(int argc, char **argv)
{
    int real = 0, table = 0;
    const char *out_path = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fake"))
            real = 0;
        else if (!strcmp(argv[i], "--real"))
            real = 1;
        else if (!strcmp(argv[i], "--table") && i + 1 < argc && argv[i + 1][0] != '-') {
            static line l[128];
            int n = read_file(argv[i + 1], l, 128);
            if (n < 0)
                return 2;
            print_table(l, n, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--table"))
            table = 1;
        else if (!strcmp(argv[i], "--compare") && i + 2 < argc)
            return compare(argv[i + 1], argv[i + 2]);
        else if (!strcmp(argv[i], "--both"))
            return both(i + 1 < argc ? argv[i + 1] : NULL);
        else if (!strcmp(argv[i], "--list")) {
            for (int k = 0; k < NCASES; k++)
                printf("%-34s %-5s %s\n", cases[k].name, cases[k].exact ? "exact" : "class", cases[k].expected);
            return 0;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out_path = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    const st_verbs_api *v = st_fake_api();
    if (real && !(v = real_api()))
        return 77;
    FILE *out = stdout;
    if (out_path && !(out = fopen(out_path, "w"))) {
        fprintf(stderr, "conformance: %s: %s\n", out_path, strerror(errno));
        return 2;
    }
    static line l[NCASES];
    int n;
    int failed = run_all(v, only, out, l, &n);
    if (out != stdout)
        fclose(out);
    if (table || out_path)
        print_table(l, n, stdout);
    printf("%d of %d case(s) passed against %s\n", n - failed, n, v->name);
    return failed ? 1 : 0;
}
