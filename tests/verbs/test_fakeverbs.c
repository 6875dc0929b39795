/* test_fakeverbs.c - self-tests of the verbs emulator (tests/verbs/fakeverbs.h): one scenario per argument.
 *
 * basic     WRITE, WRITE_WITH_IMM into a zero-SGE receive, SEND(_WITH_IMM), READ, multi-packet messages; data
 *           checked, completion fields, unsignalled WRs, no leaks after teardown
 * keys      random distinct lkey/rkey; bad rkey, out of range, MR without REMOTE_WRITE, dereg'd rkey, bad lkey,
 *           PD mismatch: the right error completion and both QPs in ERR
 * states    the QP state machine and its masks; post in the wrong state; EBUSY for live children
 * flush     an error flushes every outstanding and later WR (send and receive, signalled or not)
 * rnr       rnr_retry=0 without a receive -> RNR_RETRY_EXC_ERR (responder stays RTS); rnr_retry=7 waits for a late
 *           receive
 * retry     peer QP in RESET: RETRY_EXC_ERR after (retry_cnt+1) timeouts, within 2x of the configured time;
 *           a wrong PSN also ends in RETRY_EXC_ERR
 * limits    SQ depth (ENOMEM until a polled completion frees slots), CQ rounding and overrun (CQ_ERR event)
 * channel   a completion channel's fd wakes poll() when another thread's QP delivers, and on a retry timeout; it is
 *           readable only when an event waits
 * faults    each fault kind fires, is counted and has its effect
 * threads   two threads, two QPs each way, 500 messages with data checks
 * procs     fork: a parent and a child on a shared fabric (st_fake_fabric_create) exchange QPNs over a pipe, write
 *           to each other, the child blocks in poll() on its channel and is woken; a child stopped (SIGSTOP) far
 *           longer than the retry time is not taken for dead; then the child dies and the parent gets RETRY_EXC_ERR
 * claim     two processes create QPs at once: the child creates its QP while the parent's create_qp holds a fabric
 *           slot it has claimed but not filled in (st_fake_set_claim_hook); both QPNs must stay visible to peers.
 *           Before the fix the two took the same slot and the child's QPN vanished: its peers' writes ended in
 *           RETRY_EXC_ERR, about one run in a hundred of verbs.proc.colls
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fakeverbs.h"
#include "vpair.h"

static const st_verbs_api *V;

static void open_pair(vpair *p, const vp_opts *o)
{
    char err[256];
    if (vp_open(p, V, NULL, err, sizeof err) != 0 || vp_pair(p, o, err, sizeof err) != 0) {
        fprintf(stderr, "setup: %s\n", err);
        exit(1);
    }
}

static int qp_state(vpair *p, int i)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    V->query_qp(p->qp[i], &a, IBV_QP_STATE, &ia);
    return a.qp_state;
}

static void no_leaks(void)
{
    st_fake_live l;
    st_fake_counts(&l);
    EXPECT(l.contexts == 0 && l.pds == 0 && l.mrs == 0 && l.cqs == 0 && l.qps == 0 && l.channels == 0);
}

static int rw_access(void)
{
    return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
}

/* ---- basic ---------------------------------------------------------------------------------------------------- */
static void t_basic(void)
{
    vpair p;
    open_pair(&p, NULL);
    enum { N = 10000 };
    unsigned char *src = malloc(N), *dst = calloc(1, N), *rbuf = calloc(1, N);
    for (int i = 0; i < N; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    struct ibv_mr *ms = V->reg_mr(p.pd, src, N, rw_access());
    struct ibv_mr *md = V->reg_mr(p.pd, dst, N, rw_access());
    struct ibv_mr *mr = V->reg_mr(p.pd, rbuf, N, IBV_ACCESS_LOCAL_WRITE);
    CHECK(ms && md && mr);
    EXPECT(ms->lkey != ms->rkey && ms->lkey != md->lkey && ms->rkey != md->rkey);
    struct ibv_wc wc[4];
    /* WRITE of 10000 bytes (10 packets at MTU 1024), signalled */
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, src, N, ms->lkey, (uintptr_t)dst, md->rkey, 0, IBV_SEND_SIGNALED, 1) ==
           0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 1 &&
           wc[0].opcode == IBV_WC_RDMA_WRITE && wc[0].qp_num == p.qp[0]->qp_num);
    EXPECT(memcmp(src, dst, N) == 0);
    /* WRITE_WITH_IMM of 100 bytes into a zero-SGE receive: byte_len 100, imm intact */
    EXPECT(vp_recv(&p, 1, NULL, 0, 0, 77) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, src + 1, 100, ms->lkey, (uintptr_t)dst + 5000, md->rkey,
                    0xabcd1234u, IBV_SEND_SIGNALED, 2) == 0);
    EXPECT(vp_wait(&p, p.cq[1], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 77 &&
           wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc[0].byte_len == 100 && (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
           be32toh(wc[0].imm_data) == 0xabcd1234u && wc[0].src_qp == p.qp[0]->qp_num);
    EXPECT(memcmp(dst + 5000, src + 1, 100) == 0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 2 && wc[0].opcode == IBV_WC_RDMA_WRITE);
    /* unsignalled WRITE then signalled WRITE: one completion */
    EXPECT(vp_write(&p, 1, IBV_WR_RDMA_WRITE, dst, 10, md->lkey, (uintptr_t)src, ms->rkey, 0, 0, 3) == 0);
    EXPECT(vp_write(&p, 1, IBV_WR_RDMA_WRITE, dst, 10, md->lkey, (uintptr_t)src, ms->rkey, 0, IBV_SEND_SIGNALED, 4) ==
           0);
    EXPECT(vp_wait(&p, p.cq[1], wc, 2, 0.3) == 1 && wc[0].wr_id == 4);
    /* SEND_WITH_IMM of 3000 bytes into a 4000-byte receive, inline SEND of 40 */
    EXPECT(vp_recv(&p, 1, rbuf, 4000, mr->lkey, 78) == 0);
    EXPECT(rbuf[0] == 0xfb && rbuf[3999] == 0xfb); /* poisoned while posted */
    EXPECT(vp_write(&p, 0, IBV_WR_SEND_WITH_IMM, src, 3000, ms->lkey, 0, 0, 9, IBV_SEND_SIGNALED, 5) == 0);
    EXPECT(vp_wait(&p, p.cq[1], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RECV &&
           wc[0].byte_len == 3000 && (wc[0].wc_flags & IBV_WC_WITH_IMM) && be32toh(wc[0].imm_data) == 9);
    EXPECT(memcmp(rbuf, src, 3000) == 0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 5) == 1 && wc[0].opcode == IBV_WC_SEND);
    EXPECT(vp_recv(&p, 1, rbuf, 4000, mr->lkey, 79) == 0);
    unsigned char small[40];
    memset(small, 0x3c, sizeof small);
    EXPECT(vp_write(&p, 0, IBV_WR_SEND, small, 40, 0, 0, 0, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE, 6) == 0);
    memset(small, 0, sizeof small); /* inline: the data was copied at post */
    EXPECT(vp_wait(&p, p.cq[1], wc, 1, 5) == 1 && wc[0].byte_len == 40 && !(wc[0].wc_flags & IBV_WC_WITH_IMM) &&
           rbuf[0] == 0x3c && rbuf[39] == 0x3c);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 5) == 1);
    /* READ of 5000 bytes */
    memset(dst, 0, N);
    EXPECT(vp_write(&p, 1, IBV_WR_RDMA_READ, dst, 5000, md->lkey, (uintptr_t)src + 100, ms->rkey, 0,
                    IBV_SEND_SIGNALED, 7) == 0);
    EXPECT(vp_wait(&p, p.cq[1], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS &&
           wc[0].opcode == IBV_WC_RDMA_READ);
    EXPECT(memcmp(dst, src + 100, 5000) == 0);
    /* zero-length WRITE_WITH_IMM after 4 KB: byte_len 0 and the 4 KB visible */
    memset(dst, 0, N);
    EXPECT(vp_recv(&p, 1, NULL, 0, 0, 80) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, src, 4096, ms->lkey, (uintptr_t)dst, md->rkey, 0, 0, 8) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, NULL, 0, 0, (uintptr_t)dst, md->rkey, 1, IBV_SEND_SIGNALED, 9) ==
           0);
    EXPECT(vp_wait(&p, p.cq[1], wc, 1, 5) == 1 && wc[0].byte_len == 0 && memcmp(dst, src, 4096) == 0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 9);
    EXPECT(qp_state(&p, 0) == IBV_QPS_RTS && qp_state(&p, 1) == IBV_QPS_RTS);
    /* 200 KB each way: more than a ring holds (32 packets), so the requester and the READ responder wait for room */
    enum { B = 200000 };
    unsigned char *bs = malloc(B), *bd = calloc(1, B);
    for (int i = 0; i < B; i++)
        bs[i] = (unsigned char)(i * 31 + 7);
    struct ibv_mr *mbs = V->reg_mr(p.pd, bs, B, rw_access()), *mbd = V->reg_mr(p.pd, bd, B, rw_access());
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, bs, B, mbs->lkey, (uintptr_t)bd, mbd->rkey, 0, IBV_SEND_SIGNALED, 10) ==
           0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 10) == 1 && wc[0].status == IBV_WC_SUCCESS && memcmp(bs, bd, B) == 0);
    memset(bd, 0, B);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_READ, bd, B, mbd->lkey, (uintptr_t)bs, mbs->rkey, 0, IBV_SEND_SIGNALED, 11) ==
           0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 10) == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].byte_len == B &&
           memcmp(bs, bd, B) == 0);
    V->dereg_mr(mbs);
    V->dereg_mr(mbd);
    free(bs);
    free(bd);
    V->dereg_mr(ms);
    V->dereg_mr(md);
    V->dereg_mr(mr);
    vp_close(&p);
    free(src);
    free(dst);
    free(rbuf);
    no_leaks();
}

/* ---- keys ----------------------------------------------------------------------------------------------------- */
/* Post one WRITE from QP 0 with the given keys; returns the requester's status and the QP states. */
static int one_write(int access, int mr_access, int bad, int *st0, int *st1)
{
    vpair p;
    vp_opts o = {.access = {rw_access(), access}};
    open_pair(&p, &o);
    static unsigned char src[256], dst[256];
    struct ibv_mr *ms = V->reg_mr(p.pd, src, sizeof src, rw_access());
    struct ibv_mr *md = V->reg_mr(p.pd, dst, sizeof dst, mr_access);
    CHECK(ms && md);
    uint32_t lkey = ms->lkey, rkey = md->rkey;
    uint64_t raddr = (uintptr_t)dst, len = 64;
    if (bad == 1)
        rkey ^= 0x1000;
    if (bad == 2)
        raddr += 250;
    if (bad == 3)
        lkey = ms->rkey; /* the rkey used as an lkey */
    if (bad == 4) {
        V->dereg_mr(md);
        md = NULL;
    }
    int opcode = bad == 5 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    EXPECT(vp_write(&p, 0, opcode, src, (uint32_t)len, lkey, raddr, rkey, 0, IBV_SEND_SIGNALED, 1) == 0);
    struct ibv_wc wc;
    int status = vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 ? (int)wc.status : -1;
    EXPECT(wc.wr_id == 1);
    /* the responder goes to ERR when it rejects; give it a call to see the packet */
    struct ibv_wc w2;
    V->poll_cq(p.cq[1], 1, &w2);
    *st0 = qp_state(&p, 0);
    *st1 = qp_state(&p, 1);
    V->dereg_mr(ms);
    if (md)
        V->dereg_mr(md);
    vp_close(&p);
    return status;
}

static void t_keys(void)
{
    int s0, s1;
    EXPECT(one_write(rw_access(), rw_access(), 0, &s0, &s1) == IBV_WC_SUCCESS && s0 == IBV_QPS_RTS);
    EXPECT(one_write(rw_access(), rw_access(), 1, &s0, &s1) == IBV_WC_REM_ACCESS_ERR && s0 == IBV_QPS_ERR &&
           s1 == IBV_QPS_ERR);
    EXPECT(one_write(rw_access(), rw_access(), 2, &s0, &s1) == IBV_WC_REM_ACCESS_ERR && s1 == IBV_QPS_ERR);
    EXPECT(one_write(rw_access(), IBV_ACCESS_LOCAL_WRITE, 0, &s0, &s1) == IBV_WC_REM_ACCESS_ERR);
    EXPECT(one_write(rw_access(), rw_access(), 4, &s0, &s1) == IBV_WC_REM_ACCESS_ERR);
    EXPECT(one_write(rw_access(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 5, &s0, &s1) ==
           IBV_WC_REM_ACCESS_ERR);
    EXPECT(one_write(IBV_ACCESS_LOCAL_WRITE, rw_access(), 0, &s0, &s1) == IBV_WC_REM_INV_REQ_ERR);
    EXPECT(one_write(rw_access(), rw_access(), 3, &s0, &s1) == IBV_WC_LOC_PROT_ERR && s0 == IBV_QPS_ERR &&
           s1 == IBV_QPS_RTS);
    /* reg_mr: REMOTE_WRITE needs LOCAL_WRITE */
    vpair p;
    open_pair(&p, NULL);
    char b[64];
    errno = 0;
    EXPECT(V->reg_mr(p.pd, b, sizeof b, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL);
    /* an MR of another PD is not ours */
    struct ibv_pd *pd2 = V->alloc_pd(p.ctx);
    struct ibv_mr *m2 = V->reg_mr(pd2, b, sizeof b, rw_access());
    struct ibv_mr *m1 = V->reg_mr(p.pd, b, sizeof b, rw_access());
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, b, 8, m1->lkey, (uintptr_t)b + 8, m2->rkey, 0, IBV_SEND_SIGNALED, 1) ==
           0);
    struct ibv_wc wc;
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 && wc.status == IBV_WC_REM_ACCESS_ERR);
    EXPECT(V->dealloc_pd(pd2) == EBUSY);
    V->dereg_mr(m2);
    V->dereg_mr(m1);
    EXPECT(V->dealloc_pd(pd2) == 0);
    vp_close(&p);
    no_leaks();
}

/* ---- states --------------------------------------------------------------------------------------------------- */
static void t_states(void)
{
    vpair p;
    char err[128];
    CHECK(vp_open(&p, V, NULL, err, sizeof err) == 0);
    p.o = (vp_opts){0};
    vp_defaults(&p.o);
    p.cq[0] = V->create_cq(p.ctx, 16, NULL, NULL, 0);
    p.cq[1] = V->create_cq(p.ctx, 16, NULL, NULL, 0);
    p.qp[0] = vp_create_qp(&p, 0);
    p.qp[1] = vp_create_qp(&p, 1);
    CHECK(p.qp[0] && p.qp[1]);
    EXPECT(p.qp[0]->qp_num != p.qp[1]->qp_num && p.qp[0]->qp_num != 0);
    struct ibv_qp_attr a;
    char b[8];
    /* post_recv in RESET: EINVAL; post_send in RESET: EINVAL */
    EXPECT(vp_recv(&p, 0, NULL, 0, 0, 1) == EINVAL);
    EXPECT(vp_write(&p, 0, IBV_WR_SEND, b, 0, 0, 0, 0, 0, 0, 1) == EINVAL);
    /* RESET -> RTS and RESET -> RTR: EINVAL */
    vp_rts_attr(&p, &a, 0);
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTS_MASK) == EINVAL);
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTR_MASK) == EINVAL);
    /* INIT without ACCESS_FLAGS: EINVAL; with a mask not allowed: EINVAL */
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = 1};
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL);
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
                                         IBV_QP_SQ_PSN) == EINVAL);
    a.port_num = 2;
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
    EXPECT(vp_to_init(&p, p.qp[0], rw_access()) == 0 && qp_state(&p, 0) == IBV_QPS_INIT);
    EXPECT(vp_to_init(&p, p.qp[1], rw_access()) == 0);
    /* post_recv in INIT is fine; post_send in INIT is not */
    EXPECT(vp_recv(&p, 0, NULL, 0, 0, 1) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_SEND, b, 0, 0, 0, 0, 0, 0, 1) == EINVAL);
    /* RTR without DEST_QPN, with is_global=0, with an empty sgid, to an unknown dgid */
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTR_MASK & ~IBV_QP_DEST_QPN) == EINVAL);
    a.ah_attr.is_global = 0;
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTR_MASK) == EINVAL);
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.ah_attr.grh.sgid_index = 1; /* empty in the fake's table */
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTR_MASK) == ENODATA);
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.ah_attr.grh.dgid.raw[15] ^= 0x80;
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTR_MASK) == ETIMEDOUT && qp_state(&p, 0) == IBV_QPS_INIT);
    vp_rtr_attr(&p, &a, p.qp[1]->qp_num, 0);
    a.path_mtu = IBV_MTU_4096; /* above the active 1024: accepted, as rxe does */
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTR_MASK) == 0 && qp_state(&p, 0) == IBV_QPS_RTR);
    EXPECT(vp_write(&p, 0, IBV_WR_SEND, b, 0, 0, 0, 0, 0, 0, 1) == EINVAL);
    /* RTS without RETRY_CNT */
    vp_rts_attr(&p, &a, 0);
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTS_MASK & ~IBV_QP_RETRY_CNT) == EINVAL);
    a.retry_cnt = 9;
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTS_MASK) == EINVAL);
    vp_rts_attr(&p, &a, 0);
    EXPECT(V->modify_qp(p.qp[0], &a, VP_RTS_MASK) == 0 && qp_state(&p, 0) == IBV_QPS_RTS);
    /* RTS -> RTS with an optional attribute only; then ERR and RESET */
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .min_rnr_timer = 3};
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER) == 0);
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE | IBV_QP_TIMEOUT) == EINVAL);
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_ERR};
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE) == 0 && qp_state(&p, 0) == IBV_QPS_ERR);
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE) == 0 && qp_state(&p, 0) == IBV_QPS_RESET);
    /* EBUSY: a CQ with a live QP, a PD with a live QP, a device with a live PD */
    EXPECT(V->destroy_cq(p.cq[0]) == EBUSY);
    EXPECT(V->dealloc_pd(p.pd) == EBUSY);
    EXPECT(V->close_device(p.ctx) == EBUSY);
    /* unsupported QP type and opcode fail loudly */
    struct ibv_qp_init_attr ia = {.send_cq = p.cq[0], .recv_cq = p.cq[0], .qp_type = IBV_QPT_UD,
                                  .cap = {.max_send_wr = 1, .max_recv_wr = 1}};
    EXPECT(V->create_qp(p.pd, &ia) == NULL);
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_sge = 31;
    EXPECT(V->create_qp(p.pd, &ia) == NULL && errno == EINVAL);
    vp_close(&p);
    no_leaks();
}

/* ---- flush ---------------------------------------------------------------------------------------------------- */
static void t_flush(void)
{
    vpair p;
    open_pair(&p, NULL);
    static unsigned char buf[4096];
    struct ibv_mr *m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    struct ibv_qp_attr r = {.qp_state = IBV_QPS_RESET}; /* the peer does not answer: the sends stay outstanding */
    EXPECT(V->modify_qp(p.qp[1], &r, IBV_QP_STATE) == 0);
    for (int i = 0; i < 3; i++)
        EXPECT(vp_recv(&p, 0, buf, 16, m->lkey, 100 + i) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 16, m->lkey, (uintptr_t)buf + 100, m->rkey, 0, 0, 1) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 16, m->lkey, (uintptr_t)buf + 100, m->rkey, 0, IBV_SEND_SIGNALED,
                    2) == 0);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    EXPECT(V->modify_qp(p.qp[0], &a, IBV_QP_STATE) == 0);
    struct ibv_wc wc[8];
    int n = vp_wait(&p, p.cq[0], wc, 8, 0.2);
    EXPECT(n == 5);
    int flushed = 0;
    for (int i = 0; i < n; i++)
        flushed += wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].qp_num == p.qp[0]->qp_num;
    EXPECT(flushed == 5);
    /* later posts are accepted and flush */
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 16, m->lkey, (uintptr_t)buf, m->rkey, 0, 0, 3) == 0);
    EXPECT(vp_recv(&p, 0, buf, 16, m->lkey, 4) == 0);
    EXPECT(vp_wait(&p, p.cq[0], wc, 8, 0.2) == 2 && wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].wr_id == 3 &&
           wc[1].wr_id == 4);
    V->dereg_mr(m);
    vp_close(&p);
    no_leaks();
}

/* ---- rnr ------------------------------------------------------------------------------------------------------ */
static void t_rnr(void)
{
    vpair p;
    vp_opts o = {.rnr_retry = 8 /* & 7 = 0 */, .min_rnr_timer = 1};
    open_pair(&p, &o);
    static unsigned char buf[256];
    struct ibv_mr *m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, buf, 16, m->lkey, (uintptr_t)buf + 64, m->rkey, 1,
                    IBV_SEND_SIGNALED, 1) == 0);
    struct ibv_wc wc;
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 && wc.status == IBV_WC_RNR_RETRY_EXC_ERR);
    EXPECT(qp_state(&p, 0) == IBV_QPS_ERR && qp_state(&p, 1) == IBV_QPS_RTS);
    V->dereg_mr(m);
    vp_close(&p);
    /* rnr_retry=7: waits until the receive is posted 50 ms later */
    o.rnr_retry = 7;
    o.min_rnr_timer = 14;
    open_pair(&p, &o);
    m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, buf, 16, m->lkey, (uintptr_t)buf + 64, m->rkey, 1,
                    IBV_SEND_SIGNALED, 1) == 0);
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 0.05) == 0);
    EXPECT(vp_recv(&p, 1, NULL, 0, 0, 9) == 0);
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 && wc.status == IBV_WC_SUCCESS);
    EXPECT(vp_wait(&p, p.cq[1], &wc, 1, 5) == 1 && wc.wr_id == 9);
    V->dereg_mr(m);
    vp_close(&p);
    no_leaks();
}

/* ---- retry ---------------------------------------------------------------------------------------------------- */
static void t_retry(void)
{
    /* timeout 18 = 1.07 s / 16 = 67 ms per try, retry_cnt 3: 4 tries, about 268 ms */
    vpair p;
    vp_opts o = {.timeout = 18, .retry_cnt = 3};
    open_pair(&p, &o);
    static unsigned char buf[256];
    struct ibv_mr *m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
    EXPECT(V->modify_qp(p.qp[1], &a, IBV_QP_STATE) == 0);
    double t0 = vp_now();
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 16, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, IBV_SEND_SIGNALED,
                    1) == 0);
    struct ibv_wc wc;
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 && wc.status == IBV_WC_RETRY_EXC_ERR);
    double t = vp_now() - t0, want = 4 * (4.096e-6 * (1 << 18)) / 16;
    printf("retry exceeded after %.0f ms (configured %.0f ms)\n", t * 1e3, want * 1e3);
    EXPECT(t >= want * 0.9 && t <= want * 2);
    V->dereg_mr(m);
    vp_close(&p);
    /* a wrong PSN: the responder drops everything, the requester retries and gives up */
    o = (vp_opts){.timeout = 10, .retry_cnt = 1};
    open_pair(&p, &o);
    m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
    V->modify_qp(p.qp[1], &a, IBV_QP_STATE);
    vp_to_init(&p, p.qp[1], rw_access());
    vp_rtr_attr(&p, &a, p.qp[0]->qp_num, 555); /* QP 0 sends from 100 */
    EXPECT(V->modify_qp(p.qp[1], &a, VP_RTR_MASK) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 16, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, IBV_SEND_SIGNALED,
                    1) == 0);
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 && wc.status == IBV_WC_RETRY_EXC_ERR);
    V->dereg_mr(m);
    vp_close(&p);
    no_leaks();
}

/* ---- limits --------------------------------------------------------------------------------------------------- */
static void t_limits(void)
{
    vpair p;
    vp_opts o = {.sq = 16, .cq_size = 64};
    open_pair(&p, &o);
    static unsigned char buf[256];
    struct ibv_mr *m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    int ok = 0, rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++)
        if ((rc = vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0,
                           i % 4 == 3 ? IBV_SEND_SIGNALED : 0, (uint64_t)i)) == 0)
            ok++;
    EXPECT(ok == 16 && rc == ENOMEM);
    /* completions done but not polled: still full */
    struct ibv_wc wc[8];
    for (int i = 0; i < 50; i++)
        V->poll_cq(p.cq[1], 1, wc);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, 0, 99) == ENOMEM);
    /* polling the first signalled completion (wr 3) frees 4 slots */
    EXPECT(vp_wait(&p, p.cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 3);
    for (int i = 0; i < 4; i++)
        EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, 0, 100) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, 0, 100) == ENOMEM);
    /* inline over max_inline: EINVAL */
    static unsigned char big[200];
    EXPECT(vp_write(&p, 1, IBV_WR_RDMA_WRITE, big, 200, 0, (uintptr_t)buf, m->rkey, 0, IBV_SEND_INLINE, 1) == EINVAL);
    V->dereg_mr(m);
    vp_close(&p);
    /* CQ of 4 is 7; 12 signalled completions overrun it: CQ_ERR, the QP in ERR, counted */
    o = (vp_opts){.cq_size = 4, .sq = 16};
    open_pair(&p, &o);
    EXPECT(p.cq[0]->cqe == 7);
    m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    st_fake_live before, after;
    st_fake_counts(&before);
    for (int i = 0; i < 12; i++)
        vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, IBV_SEND_SIGNALED, 1);
    for (int i = 0; i < 20; i++)
        V->poll_cq(p.cq[1], 1, wc);
    st_fake_counts(&after);
    EXPECT(after.cq_overruns == before.cq_overruns + 1);
    EXPECT(qp_state(&p, 0) == IBV_QPS_ERR);
    fcntl(p.ctx->async_fd, F_SETFL, O_NONBLOCK);
    struct ibv_async_event ev;
    EXPECT(V->get_async_event(p.ctx, &ev) == 0 && ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == p.cq[0]);
    V->ack_async_event(&ev);
    EXPECT(V->get_async_event(p.ctx, &ev) == -1 && errno == EAGAIN);
    V->dereg_mr(m);
    vp_close(&p);
    no_leaks();
}

/* ---- channel -------------------------------------------------------------------------------------------------- */
struct chan_arg {
    vpair *p;
    struct ibv_mr *m;
    unsigned char *buf;
};

static void *writer(void *arg)
{
    struct chan_arg *c = arg;
    struct timespec ts = {0, 30 * 1000000};
    nanosleep(&ts, NULL); /* the main thread is in poll() by then (it does not matter if not) */
    vp_write(c->p, 0, IBV_WR_RDMA_WRITE_WITH_IMM, c->buf, 8, c->m->lkey, (uintptr_t)c->buf + 64, c->m->rkey, 5, 0, 1);
    struct ibv_wc wc;
    for (int i = 0; i < 100; i++)
        V->poll_cq(c->p->cq[0], 1, &wc); /* drives the requester */
    return NULL;
}

static void t_channel(void)
{
    vpair p;
    vp_opts o = {.channel = 1};
    open_pair(&p, &o);
    static unsigned char buf[256];
    struct ibv_mr *m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    EXPECT(vp_recv(&p, 1, NULL, 0, 0, 7) == 0);
    EXPECT(V->req_notify_cq(p.cq[1], 0) == 0);
    struct chan_arg a = {&p, m, buf};
    pthread_t t;
    pthread_create(&t, NULL, writer, &a);
    struct pollfd pf = {.fd = p.ch->fd, .events = POLLIN};
    EXPECT(poll(&pf, 1, 5000) == 1);
    struct ibv_cq *cq;
    void *cctx;
    EXPECT(V->get_cq_event(p.ch, &cq, &cctx) == 0 && cq == p.cq[1]);
    V->ack_cq_events(cq, 1);
    struct ibv_wc wc;
    EXPECT(vp_wait(&p, p.cq[1], &wc, 1, 5) == 1 && wc.wr_id == 7);
    pthread_join(t, NULL);
    /* readable only when an event waits: a plain WRITE into the armed CQ's QP raises none */
    EXPECT(V->req_notify_cq(p.cq[1], 0) == 0);
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, IBV_SEND_SIGNALED,
                    3) == 0);
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 && wc.status == IBV_WC_SUCCESS);
    EXPECT(poll(&pf, 1, 50) == 0);
    /* a retry timeout wakes a process blocked on the channel: peer in RESET, nobody else calls verbs */
    struct ibv_qp_attr ra = {.qp_state = IBV_QPS_RESET};
    V->modify_qp(p.qp[1], &ra, IBV_QP_STATE);
    vp_wait(&p, p.cq[0], &wc, 1, 0.01);
    EXPECT(V->req_notify_cq(p.cq[0], 0) == 0);
    double t0 = vp_now();
    EXPECT(vp_write(&p, 0, IBV_WR_RDMA_WRITE, buf, 8, m->lkey, (uintptr_t)buf + 64, m->rkey, 0, IBV_SEND_SIGNALED,
                    2) == 0);
    EXPECT(V->get_cq_event(p.ch, &cq, &cctx) == 0 && cq == p.cq[0]); /* blocking */
    V->ack_cq_events(cq, 1);
    EXPECT(vp_wait(&p, p.cq[0], &wc, 1, 1) == 1 && wc.status == IBV_WC_RETRY_EXC_ERR);
    printf("blocked get_cq_event woke with RETRY_EXC_ERR after %.0f ms\n", (vp_now() - t0) * 1e3);
    V->dereg_mr(m);
    vp_close(&p);
    no_leaks();
}

/* ---- faults --------------------------------------------------------------------------------------------------- */
static int fault_run(const char *spec, int opcode, int *st1, double *secs)
{
    char err[200];
    CHECK(st_fake_faults(spec, err, sizeof err) == 0);
    vpair p;
    vp_opts o = {.timeout = 12, .retry_cnt = 2, .rnr_retry = 2, .min_rnr_timer = 1};
    open_pair(&p, &o);
    static unsigned char buf[8192];
    struct ibv_mr *m = V->reg_mr(p.pd, buf, sizeof buf, rw_access());
    for (int i = 0; i < 4; i++)
        vp_recv(&p, 1, NULL, 0, 0, 50 + i);
    double t0 = vp_now();
    int status = IBV_WC_SUCCESS;
    struct ibv_wc wc;
    for (int i = 0; i < 4 && status == IBV_WC_SUCCESS; i++) {
        vp_write(&p, 0, opcode, buf, 3000, m->lkey, (uintptr_t)buf + 4096, m->rkey, 1, IBV_SEND_SIGNALED, 1);
        status = vp_wait(&p, p.cq[0], &wc, 1, 5) == 1 ? (int)wc.status : -1;
    }
    *secs = vp_now() - t0;
    for (int i = 0; i < 10; i++)
        V->poll_cq(p.cq[1], 1, &wc);
    *st1 = qp_state(&p, 1);
    /* drain async events (PORT_ERR, QP_FATAL) so the QP can be destroyed */
    fcntl(p.ctx->async_fd, F_SETFL, O_NONBLOCK);
    struct ibv_async_event ev;
    while (V->get_async_event(p.ctx, &ev) == 0)
        V->ack_async_event(&ev);
    V->dereg_mr(m);
    vp_close(&p);
    st_fake_faults(NULL, err, sizeof err);
    return status;
}

static void t_faults(void)
{
    int st1;
    double s;
    long f0 = st_fake_fired("drop");
    /* every 3rd packet lost: retransmissions recover */
    EXPECT(fault_run("drop:every=3", IBV_WR_RDMA_WRITE, &st1, &s) == IBV_WC_SUCCESS);
    EXPECT(st_fake_fired("drop") > f0);
    /* everything lost after the 2nd packet: retry exceeded */
    f0 = st_fake_fired("drop");
    EXPECT(fault_run("drop:after=2", IBV_WR_RDMA_WRITE, &st1, &s) == IBV_WC_RETRY_EXC_ERR);
    EXPECT(st_fake_fired("drop") >= f0 + 3);
    EXPECT(fault_run("rkey:after=1", IBV_WR_RDMA_WRITE, &st1, &s) == IBV_WC_REM_ACCESS_ERR && st1 == IBV_QPS_ERR);
    EXPECT(st_fake_fired("rkey") == 1);
    EXPECT(fault_run("qperr:after=2", IBV_WR_RDMA_WRITE, &st1, &s) == IBV_WC_WR_FLUSH_ERR);
    EXPECT(st_fake_fired("qperr") == 1);
    EXPECT(fault_run("portdown:after=1", IBV_WR_RDMA_WRITE, &st1, &s) == IBV_WC_RETRY_EXC_ERR);
    EXPECT(st_fake_fired("portdown") == 1);
    EXPECT(fault_run("deadpeer:after=1", IBV_WR_RDMA_WRITE, &st1, &s) == IBV_WC_RETRY_EXC_ERR);
    EXPECT(st_fake_fired("deadpeer") == 1);
    /* 2 RNR NAKs with rnr_retry 2: recovers; 3: RNR_RETRY_EXC_ERR */
    EXPECT(fault_run("rnr:count=2", IBV_WR_RDMA_WRITE_WITH_IMM, &st1, &s) == IBV_WC_SUCCESS);
    EXPECT(st_fake_fired("rnr") == 2);
    EXPECT(fault_run("rnr:count=3", IBV_WR_RDMA_WRITE_WITH_IMM, &st1, &s) == IBV_WC_RNR_RETRY_EXC_ERR);
    EXPECT(st_fake_fired("rnr") == 5);
    /* deterministic given the seed: the same run drops the same packets */
    long d0 = st_fake_fired("drop");
    int r1 = fault_run("drop:pct=20,seed=5", IBV_WR_RDMA_WRITE, &st1, &s);
    long d1 = st_fake_fired("drop");
    int r2 = fault_run("drop:pct=20,seed=5", IBV_WR_RDMA_WRITE, &st1, &s);
    long d2 = st_fake_fired("drop");
    printf("drop:pct=20,seed=5 dropped %ld then %ld packets, status %d then %d\n", d1 - d0, d2 - d1, r1, r2);
    EXPECT(d1 - d0 == d2 - d1 && d1 > d0 && r1 == r2);
    /* the parser names what is wrong */
    char err[200];
    EXPECT(st_fake_faults("drop:every=x", err, sizeof err) == -1 && strstr(err, "every=x"));
    EXPECT(st_fake_faults("bogus", err, sizeof err) == -1 && strstr(err, "bogus"));
    EXPECT(st_fake_faults("drop:pct=30,seed=7", err, sizeof err) == 0);
    st_fake_faults("", err, sizeof err);
    no_leaks();
}

/* ---- threads -------------------------------------------------------------------------------------------------- */
enum { TMSG = 500, TLEN = 1500 };
struct side {
    vpair *p;
    int me;
    unsigned char *src, *dst;
    struct ibv_mr *msrc, *mdst;
    uint64_t peer_addr;
    uint32_t peer_rkey;
    int bad;
};

static void *side_run(void *arg)
{
    struct side *s = arg;
    vpair *p = s->p;
    int sent = 0, recvd = 0, done = 0, outstanding = 0;
    for (int i = 0; i < 8; i++)
        vp_recv(p, s->me, NULL, 0, 0, (uint64_t)i);
    double end = vp_now() + 30;
    while ((recvd < TMSG || done < TMSG) && vp_now() < end) {
        if (sent < TMSG && outstanding < 4) {
            int slot = sent % 8;
            memset(s->src + slot * TLEN, (unsigned char)sent, TLEN);
            if (vp_write(p, s->me, IBV_WR_RDMA_WRITE_WITH_IMM, s->src + slot * TLEN, TLEN, s->msrc->lkey,
                         s->peer_addr + (uint64_t)slot * TLEN, s->peer_rkey, (uint32_t)sent, IBV_SEND_SIGNALED,
                         (uint64_t)slot) == 0) {
                sent++;
                outstanding++;
            }
        }
        struct ibv_wc wc[8];
        int n = V->poll_cq(p->cq[s->me], 8, wc);
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                s->bad++;
                return NULL;
            }
            if (wc[i].opcode == IBV_WC_RDMA_WRITE) {
                done++;
                outstanding--;
            } else {
                uint32_t k = be32toh(wc[i].imm_data);
                if (s->dst[(k % 8) * TLEN] != (unsigned char)k || s->dst[(k % 8) * TLEN + TLEN - 1] != (unsigned char)k)
                    s->bad++;
                recvd++;
                vp_recv(p, s->me, NULL, 0, 0, 0);
            }
        }
    }
    if (recvd < TMSG || done < TMSG)
        s->bad++;
    return NULL;
}

static void t_threads(void)
{
    vpair p;
    vp_opts o = {.cq_size = 64, .sq = 16, .rq = 16};
    open_pair(&p, &o);
    struct side s[2];
    for (int i = 0; i < 2; i++) {
        s[i] = (struct side){.p = &p, .me = i, .src = malloc(8 * TLEN), .dst = calloc(8, TLEN)};
        s[i].msrc = V->reg_mr(p.pd, s[i].src, 8 * TLEN, rw_access());
        s[i].mdst = V->reg_mr(p.pd, s[i].dst, 8 * TLEN, rw_access());
    }
    /* the receiver can be overwritten while it checks: a window of 8 slots with at most 4 in flight keeps a slot
     * untouched until its IMM is seen */
    for (int i = 0; i < 2; i++) {
        s[i].peer_addr = (uintptr_t)s[1 - i].dst;
        s[i].peer_rkey = s[1 - i].mdst->rkey;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, side_run, &s[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    EXPECT(s[0].bad == 0 && s[1].bad == 0);
    for (int i = 0; i < 2; i++) {
        V->dereg_mr(s[i].msrc);
        V->dereg_mr(s[i].mdst);
        free(s[i].src);
        free(s[i].dst);
    }
    vp_close(&p);
    no_leaks();
}

/* ---- processes ------------------------------------------------------------------------------------------------ */
struct card {
    uint32_t qpn, rkey;
    uint64_t addr;
    union ibv_gid gid;
};

/* One side of a process pair: its own device, PD, channel, CQ, QP; connect to `peer`. */
typedef struct pside {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    unsigned char buf[8192];
    struct card me;
} pside;

static void pside_open(pside *s)
{
    vpair p;
    char err[100];
    CHECK(vp_open(&p, V, NULL, err, sizeof err) == 0);
    s->ctx = p.ctx;
    s->pd = p.pd;
    s->ch = V->create_comp_channel(s->ctx);
    s->cq = V->create_cq(s->ctx, 64, NULL, s->ch, 0);
    struct ibv_qp_init_attr ia = {.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
                                          .max_recv_sge = 1}};
    s->qp = V->create_qp(s->pd, &ia);
    s->mr = V->reg_mr(s->pd, s->buf, sizeof s->buf, rw_access());
    CHECK(s->ch && s->cq && s->qp && s->mr);
    s->me = (struct card){.qpn = s->qp->qp_num, .rkey = s->mr->rkey, .addr = (uintptr_t)s->buf, .gid = p.gid};
    p.o = (vp_opts){0};
    vp_defaults(&p.o);
    CHECK(vp_to_init(&p, s->qp, rw_access()) == 0);
}

static void pside_connect(pside *s, const struct card *peer, int timeout)
{
    vpair p = {.v = V, .ctx = s->ctx, .gid = peer->gid, .mtu = IBV_MTU_1024};
    p.o = (vp_opts){.timeout = timeout, .retry_cnt = 2};
    vp_defaults(&p.o);
    union ibv_gid g;
    p.gid_index = 2;
    V->query_gid(s->ctx, 1, 2, &g);
    struct ibv_qp_attr a;
    vp_rtr_attr(&p, &a, peer->qpn, 0);
    CHECK(V->modify_qp(s->qp, &a, VP_RTR_MASK) == 0);
    vp_rts_attr(&p, &a, 0);
    CHECK(V->modify_qp(s->qp, &a, VP_RTS_MASK) == 0);
}

static void pside_close(pside *s)
{
    V->destroy_qp(s->qp);
    V->dereg_mr(s->mr);
    V->destroy_cq(s->cq);
    V->destroy_comp_channel(s->ch);
    V->dealloc_pd(s->pd);
    V->close_device(s->ctx);
}

static int wait_event(pside *s, double secs, struct ibv_wc *wc)
{
    /* block in poll() on the channel fd, as a transport does */
    double end = vp_now() + secs;
    for (;;) {
        int n = V->poll_cq(s->cq, 1, wc);
        if (n)
            return n;
        V->req_notify_cq(s->cq, 0);
        if ((n = V->poll_cq(s->cq, 1, wc)))
            return n;
        int ms = (int)((end - vp_now()) * 1e3);
        if (ms <= 0)
            return 0;
        struct pollfd pf = {.fd = s->ch->fd, .events = POLLIN};
        if (poll(&pf, 1, ms) == 1) {
            struct ibv_cq *cq;
            void *c;
            if (V->get_cq_event(s->ch, &cq, &c) == 0)
                V->ack_cq_events(cq, 1);
        }
    }
}

static void t_procs(void)
{
    char id[64];
    CHECK(st_fake_fabric_create(id, sizeof id) == 0);
    setenv("STITCH_FAKE_FABRIC", id, 1);
    int up[2], down[2];
    CHECK(pipe(up) == 0 && pipe(down) == 0);
    pid_t child = fork();
    if (child == 0) {
        pside s;
        pside_open(&s);
        struct card peer;
        CHECK(write(up[1], &s.me, sizeof s.me) == sizeof s.me);
        CHECK(read(down[0], &peer, sizeof peer) == sizeof peer);
        pside_connect(&s, &peer, 12);
        fcntl(s.ch->fd, F_SETFL, O_NONBLOCK);
        struct ibv_sge sge = {.addr = 0, .length = 0, .lkey = 0};
        struct ibv_recv_wr rw = {.wr_id = 5, .sg_list = &sge, .num_sge = 0}, *bad;
        V->post_recv(s.qp, &rw, &bad);
        char go = 1;
        CHECK(write(up[1], &go, 1) == 1);
        struct ibv_wc wc;
        /* blocked in poll(): the parent's WRITE_WITH_IMM must wake it */
        int ok = wait_event(&s, 10, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 5 &&
                 s.buf[0] == 0x5e && s.buf[4999] == 0x5e;
        /* answer with a WRITE of our own into the parent's buffer */
        memset(s.buf + 5000, 0x6f, 1000);
        struct ibv_sge ss = {.addr = (uintptr_t)s.buf + 5000, .length = 1000, .lkey = s.mr->lkey};
        struct ibv_send_wr sw = {.wr_id = 6, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                                 .send_flags = IBV_SEND_SIGNALED}, *sbad;
        sw.wr.rdma.remote_addr = peer.addr + 100;
        sw.wr.rdma.rkey = peer.rkey;
        ok = ok && V->post_send(s.qp, &sw, &sbad) == 0 && wait_event(&s, 10, &wc) == 1 &&
             wc.status == IBV_WC_SUCCESS && wc.wr_id == 6;
        /* a receive for the WRITE_IMM the parent sends while we are stopped, then wait in poll() to be killed */
        V->post_recv(s.qp, &rw, &bad);
        CHECK(write(up[1], &ok, sizeof ok) == sizeof ok);
        for (;;)
            wait_event(&s, 10, &wc);
    }
    pside s;
    pside_open(&s);
    struct card peer;
    CHECK(read(up[0], &peer, sizeof peer) == sizeof peer);
    CHECK(write(down[1], &s.me, sizeof s.me) == sizeof s.me);
    pside_connect(&s, &peer, 12);
    EXPECT(memcmp(&peer.gid, &s.me.gid, sizeof peer.gid) != 0); /* two nodes, two GIDs */
    struct ibv_sge rs = {0};
    struct ibv_recv_wr rw = {.wr_id = 8, .sg_list = &rs, .num_sge = 0}, *rbad;
    V->post_recv(s.qp, &rw, &rbad);
    char go;
    CHECK(read(up[0], &go, 1) == 1);
    struct timespec ts = {0, 50 * 1000000};
    nanosleep(&ts, NULL); /* let the child block in poll() (a bounded wait; correctness does not depend on it) */
    memset(s.buf, 0x5e, 5000);
    struct ibv_sge ss = {.addr = (uintptr_t)s.buf, .length = 5000, .lkey = s.mr->lkey};
    struct ibv_send_wr sw = {.wr_id = 1, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                             .send_flags = IBV_SEND_SIGNALED}, *sbad;
    sw.wr.rdma.remote_addr = peer.addr;
    sw.wr.rdma.rkey = peer.rkey;
    EXPECT(V->post_send(s.qp, &sw, &sbad) == 0);
    struct ibv_wc wc[2];
    int got = 0;
    double end = vp_now() + 10;
    while (got < 2 && vp_now() < end) {
        int n = wait_event(&s, 10, &wc[got]);
        if (n > 0) {
            EXPECT(wc[got].status == IBV_WC_SUCCESS);
            got += n;
        }
    }
    EXPECT(got == 2);
    EXPECT(s.buf[100] == 0x6f && s.buf[1099] == 0x6f);
    int ok = 0;
    CHECK(read(up[0], &ok, sizeof ok) == sizeof ok);
    EXPECT(ok == 1);
    /* the child stopped (SIGSTOP) for 40 scaled timeouts is not dead: its unread packets wait, then complete */
    kill(child, SIGSTOP);
    nanosleep(&ts, NULL);
    sw.wr_id = 3;
    EXPECT(V->post_send(s.qp, &sw, &sbad) == 0);
    EXPECT(vp_wait(&(vpair){.v = V}, s.cq, wc, 1, 0.2) == 0); /* timeout 12: 1 ms per try, 3 tries */
    kill(child, SIGCONT);
    EXPECT(wait_event(&s, 10, wc) == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 3);
    /* the child dies (and stays a zombie until we reap it): the next WRITE ends in RETRY_EXC_ERR */
    kill(child, SIGKILL);
    nanosleep(&ts, NULL);
    sw.wr_id = 2;
    double t0 = vp_now();
    EXPECT(V->post_send(s.qp, &sw, &sbad) == 0);
    EXPECT(wait_event(&s, 10, wc) == 1 && wc[0].status == IBV_WC_RETRY_EXC_ERR && wc[0].wr_id == 2);
    printf("dead peer process: RETRY_EXC_ERR after %.0f ms\n", (vp_now() - t0) * 1e3);
    int status;
    waitpid(child, &status, 0);
    pside_close(&s);
    st_fake_fabric_destroy(id);
    no_leaks();
}

static int claim_go[2], claim_done[2];
static uint32_t claim_child_qpn;

/* Runs inside the parent's create_qp, between claiming a slot and filling it in: the child creates its QP now. */
static void claim_hook(void)
{
    char go = 1;
    CHECK(write(claim_go[1], &go, 1) == 1);
    CHECK(read(claim_done[0], &claim_child_qpn, sizeof claim_child_qpn) == sizeof claim_child_qpn);
}

static void t_claim(void)
{
    char id[64];
    CHECK(st_fake_fabric_create(id, sizeof id) == 0);
    setenv("STITCH_FAKE_FABRIC", id, 1);
    CHECK(pipe(claim_go) == 0 && pipe(claim_done) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char go;
        CHECK(read(claim_go[0], &go, 1) == 1);
        pside s;
        pside_open(&s);
        uint32_t qpn = s.qp->qp_num;
        CHECK(write(claim_done[1], &qpn, sizeof qpn) == sizeof qpn);
        CHECK(read(claim_go[0], &go, 1) == 1); /* the parent has looked */
        pside_close(&s);
        _exit(0);
    }
    st_fake_set_claim_hook(claim_hook);
    pside s;
    pside_open(&s);
    st_fake_set_claim_hook(NULL);
    EXPECT(st_fake_qpn_visible(s.qp->qp_num));
    EXPECT(st_fake_qpn_visible(claim_child_qpn));
    EXPECT(claim_child_qpn != s.qp->qp_num);
    char go = 1;
    CHECK(write(claim_go[1], &go, 1) == 1);
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pside_close(&s);
    st_fake_fabric_destroy(id);
    no_leaks();
}

int main(int argc, char **argv)
{
    V = st_fake_api();
    if (argc != 2) {
        fprintf(stderr, "usage: test_fakeverbs basic|keys|states|flush|rnr|retry|limits|channel|faults|threads|procs\n");
        return 2;
    }
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"basic", t_basic},   {"keys", t_keys},       {"states", t_states}, {"flush", t_flush},
                 {"rnr", t_rnr},       {"retry", t_retry},     {"limits", t_limits}, {"channel", t_channel},
                 {"faults", t_faults}, {"threads", t_threads}, {"procs", t_procs},
                 {"claim", t_claim}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            cases[i].fn();
            return st_check_summary(argv[1]);
        }
    fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    return 2;
}
