/* fake_int.h - the emulator's private types, shared by fakeverbs.c (objects and the verbs table), fake_engine.c
 * (the RC engine: requester, responder, timers, completions) and fake_fabric.c (the shared segment, faults, kicks).
 *
 * Locking: one mutex per process (G.lock) guards every process-local object and is held by every verbs call while
 * it runs the engine; it is released before a call blocks (get_cq_event, get_async_event). Shared-segment state is
 * touched under each QP slot's robust process-shared mutex by producers, and lock-free (acquire/release) by the
 * slot's owner, the ring's only consumer.
 */
#ifndef ST_FAKE_INT_H
#define ST_FAKE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "fakeverbs.h"

#define FK_MAX_NODES 64
#define FK_MAX_QPS 1024
#define FK_MAX_DEVS 4
#define FK_RING 32         /* packets in each QP's inbound ring */
#define FK_PAYLOAD 4096    /* largest packet payload (path MTU 4096) */
#define FK_GIDS 16         /* GID table length */
#define FK_PSN_MASK 0xffffffu
#define FK_SLOT_CLAIMED 0xffffffffu /* a QP slot being filled in: no QPN (24 bits) matches it */
#define FK_WINDOW 1024     /* most unacknowledged packets per QP */
#define FK_MAGIC 0x5354464b41424931ull /* "STFKABI1" */

enum { FK_DROP, FK_RKEY, FK_QPERR, FK_PORTDOWN, FK_DEADPEER, FK_RNR, FK_NKINDS };
enum { PKT_REQ = 1, PKT_RESP = 2 };
enum { NAK_RNR = 1, NAK_ACCESS, NAK_INV_REQ, NAK_REM_OP };

/* ---- the shared fabric ---------------------------------------------------------------------------------------- */
typedef struct fk_pkt {
    uint8_t type, opcode, first, last;
    uint32_t psn;            /* 24-bit wire PSN */
    uint32_t src_qpn, dst_qpn;
    uint32_t rkey, imm;      /* imm: big-endian as posted */
    uint32_t len, msg_len;   /* this packet's payload; the whole message */
    uint64_t raddr, off;     /* remote address of this packet's payload; its offset in the message */
} fk_pkt;

typedef struct fk_ringslot {
    fk_pkt h;
    unsigned char data[FK_PAYLOAD];
} fk_ringslot;

typedef struct fk_qslot {
    pthread_mutex_t lock;    /* producers (the peer's requester and responder) and slot (re)use */
    uint32_t qpn;            /* 0: free */
    int32_t node, dev, pid;
    int32_t state;           /* the owner's ibv_qp_state, mirrored for peers */
    uint32_t kick[2];        /* channel serials of the send and recv CQ (0: none) */
    /* mailbox written by the peer's responder: cumulative ACK and the last NAK */
    uint32_t ack_psn;
    uint32_t nak_seq, nak_kind, nak_psn, nak_rnr;
    uint64_t head, tail;     /* ring counters: head by producers, tail by the owner */
    fk_ringslot ring[FK_RING];
} fk_qslot;

typedef struct fk_node {
    int32_t used, pid, dead;
    int32_t port_down[FK_MAX_DEVS];
} fk_node;

typedef struct fk_fabric {
    uint64_t magic, uid;
    pthread_mutex_t lock;
    uint32_t next_qpn;
    int32_t nnodes;
    long fired[FK_NKINDS];
    fk_node nodes[FK_MAX_NODES];
    fk_qslot qps[FK_MAX_QPS];
} fk_fabric;

/* ---- process-local objects ------------------------------------------------------------------------------------ */
typedef struct fk_dev {
    struct ibv_device dev; /* first: the table hands out &dev */
    int index;
} fk_dev;

typedef struct fk_ctx fk_ctx;
typedef struct fk_qp fk_qp;
typedef struct fk_cq fk_cq;

typedef struct fk_aev {
    struct ibv_async_event ev;
    struct fk_aev *next;
} fk_aev;

struct fk_ctx {
    struct ibv_context ctx;
    fk_dev *dev;
    int npd, ncq, nchan;
    fk_aev *aq, **aq_tail;    /* async events not yet returned */
    int aev_unacked;
    fk_ctx *next;
};

typedef struct fk_pd {
    struct ibv_pd pd;
    int nmr, nqp;
} fk_pd;

typedef struct fk_mr {
    struct ibv_mr mr;
    int access;
    struct fk_mr *nl, *nr; /* hash chains by lkey and rkey */
} fk_mr;

typedef struct fk_chan {
    struct ibv_comp_channel ch; /* ch.fd: an eventfd counting the CQ events waiting, readable iff one waits */
    int sock, tfd;              /* kicks from peers and the retransmission timer, watched by the waker thread */
    uint32_t serial;
    int ncq;
    uint64_t armed_ns; /* the timerfd's deadline (0: disarmed) */
    struct fk_chan *next;
} fk_chan;

typedef struct fk_cqe {
    struct ibv_wc wc;
    fk_qp *qp;
    uint64_t sqidx; /* for send completions: the SQ slot it frees up to */
    int is_send;
} fk_cqe;

struct fk_cq {
    struct ibv_cq cq;
    fk_ctx *ctx;
    fk_chan *chan;
    int size, head, count, nqp;
    fk_cqe *e;
    int armed, overrun;
    unsigned ev_pending, ev_got, ev_acked;
    fk_cq *next;
};

typedef struct fk_swr {
    uint64_t wr_id;
    int opcode, signaled, nsge;
    unsigned flags;
    struct ibv_sge *sge;     /* into the QP's pool */
    unsigned char *inl;      /* inline data copied at post */
    uint32_t len, imm, rkey;
    uint64_t raddr;
    uint64_t ipsn0;          /* first internal PSN */
    uint32_t npkts;
    uint64_t got;            /* READ: bytes received */
    int lerr;                /* local error found when cut into packets */
} fk_swr;

typedef struct fk_rwr {
    uint64_t wr_id;
    int nsge;
    struct ibv_sge *sge;
} fk_rwr;

struct fk_qp {
    struct ibv_qp qp;
    fk_ctx *ctx;
    fk_pd *pd;
    fk_cq *scq, *rcq;
    int slot;                /* index in fabric->qps */
    int ordinal;             /* n-th QP of this process (fault selector qp=) */
    struct ibv_qp_cap cap;
    int sq_sig_all;
    struct ibv_qp_attr a;    /* attributes as set by modify_qp */
    int mtu;                 /* packet payload in bytes */
    /* send queue (monotonic counters; slot = counter % cap.max_send_wr) */
    fk_swr *sq;
    struct ibv_sge *sq_sge;
    uint64_t sq_post, sq_done, sq_free;
    /* internal PSNs: wire = (psn_base + i) & mask */
    uint32_t psn_base;
    uint64_t next_ipsn, tx_ipsn, una_ipsn, sent_hi;
    uint64_t tx_wr;          /* the WR holding tx_ipsn */
    uint64_t last_enq;       /* peer ring head after our last enqueue */
    int lost;                /* a packet since the last rewind was dropped */
    int retry_left, rnr_left;
    uint64_t last_progress_ns, rnr_until_ns, next_live_check_ns, deadline_ns;
    uint32_t nak_seen;
    int peer_slot;           /* -1 until RTR */
    /* receive queue */
    fk_rwr *rq;
    struct ibv_sge *rq_sge;
    uint64_t rq_post, rq_done;
    /* responder */
    uint32_t epsn;           /* next expected wire PSN */
    uint32_t acked_pub;      /* last ACK published */
    int need_ack;
    uint64_t msg_off;        /* SEND: bytes placed in the current message */
    int msg_bad;             /* the current inbound message was rejected */
    int rnr_fault_left;      /* rnr fault: NAKs still to send */
    struct {
        int active;
        uint64_t raddr, off;
        uint32_t len, psn0;
    } rd;                    /* READ responses still to send */
    int ev_unacked;
    fk_qp *next;
};

/* ---- faults --------------------------------------------------------------------------------------------------- */
typedef struct fk_fault {
    int kind, node, qp;
    long after, count, every, pct, ms;
    uint64_t rng;
    long seen, fired;
} fk_fault;

#define FK_MAX_FAULTS 16

/* ---- the process ---------------------------------------------------------------------------------------------- */
typedef struct fk_global {
    pthread_mutex_t lock;
    pid_t pid;
    fk_fabric *fab;
    size_t fab_size;
    int fab_shared;          /* a /dev/shm segment (processes) rather than this process's heap */
    int node;                /* this process's node index, -1 until a device is opened */
    int ndev;
    fk_dev *devs;
    fk_ctx *ctxs;
    fk_qp *qps;
    fk_cq *cqs;
    fk_chan *chans;
    fk_mr *hl[1024], *hr[1024];
    st_fake_live live;
    fk_fault faults[FK_MAX_FAULTS];
    int nfaults, faults_loaded;
    long fired_local[FK_NKINDS];
    int kick_sock;
    int waker_ep;            /* the waker thread's epoll over every channel's sock and tfd; -1 until the first */
    uint32_t serial;
    unsigned div;
    uint64_t rng;
    int qp_ordinal;
    int active_mtu;          /* enum ibv_mtu */
    uint64_t port_up_ns[FK_MAX_DEVS]; /* portdown with ms=: when the port comes back */
    void (*claim_hook)(void); /* st_fake_set_claim_hook */
} fk_global;

extern fk_global G;

/* fake_fabric.c */
void fk_enter(void);                       /* lock G, fork check, environment loaded once */
void fk_leave(void);
int fk_attach(void);                       /* fabric and node index; 0 or -1 */
void fk_plock(pthread_mutex_t *m);
uint64_t fk_now(void);
uint64_t fk_rand(uint64_t *state);
void fk_kick_serial(pid_t pid, uint32_t serial);
void fk_kick_slot(int slot);
int fk_fault_hit(int kind, const fk_qp *q);
const fk_fault *fk_fault_last(int kind);
void fk_gid(int node, int dev, int index, union ibv_gid *gid);
int fk_gid_node(const union ibv_gid *gid, int dev_hint, int *node, int *dev);
int fk_pid_alive(pid_t pid);
void fk_load_env(void);

/* fake_engine.c */
void fk_progress(void);
void fk_qp_error(fk_qp *q);
void fk_cq_push(fk_cq *cq, fk_qp *q, const struct ibv_wc *wc, int is_send, uint64_t sqidx);
void fk_async(fk_ctx *c, enum ibv_event_type type, void *element);
void fk_publish_state(fk_qp *q);
uint64_t fk_timeout_ns(int t);
uint64_t fk_rnr_ns(int t);
void fk_flush_send(fk_qp *q, uint64_t idx);
void fk_flush_recv(fk_qp *q, uint64_t idx);
fk_mr *fk_mr_by_lkey(uint32_t key);
fk_mr *fk_mr_by_rkey(uint32_t key);
void fk_chan_arm(fk_chan *ch);
int fk_waker_add(fk_chan *ch);             /* fakeverbs.c: watch a channel (starts the thread once) */

#endif
