/* proc.h - a communicator whose ranks are processes (one per process, on one host or many): its transports,
 * its control channels, and how its executor waits (proc.c); the executor itself is exec_msg.c.
 *
 * Every pair of ranks has a tcp control channel for the communicator's whole life: it carries "abort, because
 * ...", "goodbye", and the progress queries and answers of a rank whose call timed out (st_proc_behind); its EOF
 * without a goodbye is how a dead peer is noticed (the kernel closes a killed process's sockets), whether or not
 * the pair exchanges data. Data goes over one transport per peer, the first in transport.c's table (shm for a
 * peer on my host, then tcp) that can connect the pair, unless STITCH_TRANSPORT forces one (transport.h).
 */
#ifndef ST_PROC_H
#define ST_PROC_H

#include <stdatomic.h>
#include <time.h>

#include "abort.h"
#include "bootstrap.h"
#include "groups.h"
#include "transport.h"

/* Where a rank is: the call (its number, comm->seq when it began), the segment and the step of the schedule. */
typedef struct st_progress {
    uint64_t call;
    uint32_t seg, step;
} st_progress;

typedef struct st_ctrl_in {
    char buf[720];
    size_t fill;
    int state; /* 0 open, 1 said goodbye, 2 closed without goodbye, 3 sent an abort */
    int asked, answered; /* st_proc_behind: a progress query went out to this peer; its answer came (in `at`) */
    st_progress at;
} st_ctrl_in;

typedef struct st_proc {
    int rank, size;
    st_boot boot;             /* the table and the control sockets (data sockets move into tp) */
    st_tp **tp;               /* per peer: its data transport, NULL for myself */
    st_ctrl_in *ctrl;         /* per peer */
    st_bell *bell;            /* mine (links.bell, in my shm segment); NULL when no peer rings it */
    int nlocal;               /* ranks of the communicator on my host, me included */
    long spin_ns;             /* how long a waiting rank polls before it blocks: STITCH_SPIN_US, else 500 us,
                               * 1000 us when oversubscribed (then it yields after every poll, see below) */
    int oversubscribed;       /* my host runs more ranks of the communicator than it has cores: a waiting rank
                               * calls sched_yield after every poll, so the peer it waits for gets the core
                               * (measured at np 4 on 2 cores: 8 B all_reduce ~75-140 us against ~210-290 us
                               * when it went straight to FUTEX_WAIT) */
    st_progress prog;         /* mine, while in a call: set by the executor at every step, sent to a peer that asks */
    st_abort abort;           /* the communicator's (comm->abort): set by this rank, or by a peer's abort frame or
                               * death as read from the control channels */
    st_groups groups;         /* the hosts, or STITCH_GROUPS (placement.c) */
    atomic_flag ctrl_tx;      /* held while a control frame is written: the executor answers queries, another
                               * thread may write abort frames */
    atomic_int ctrl_owner;    /* 1 once a thread has written (or is writing) the abort frames */
    struct st_out *outs;      /* the message executor's sends of a step (exec_msg.c), kept between calls */
    struct st_regmem *regmem; /* registered memory (regmem.h), made on first use (st_proc_regmem); NULL before */
    int pull_said;            /* STITCH_DEBUG: the pull engine's first call was logged (bit 1 direct, bit 2 cma) */
    int outs_cap;
    struct st_out *early;     /* the next step's sends begun early: fused receive-reduce-send (exec_msg.c) */
    int early_cap;
    int fuse;                 /* STITCH_FUSE */
    struct st_rmode *rm;      /* its one-sided receives of a step (exec_msg.c), and where they land: */
    int rm_cap;
    char *land;               /* the landing area of messages that cannot land in place (registered by the
                               * verbs cache on first use, so it stays for the communicator's life) */
    size_t land_cap;
    int straight;             /* the peer whose message the executor reads straight into place (exec_msg.c), so
                               * that a wake-up does not stage its bytes (st_data_ready); -1: none */
    struct pollfd *pfds;      /* scratch for waiting */
    int *pfd_peer;            /* per pfds entry: j for rank j's control socket, size + j for its data socket */
    st_links links;           /* which transport connects each peer, and their state (transport.h); last, as it
                               * is large and read only at setup and before sleeping */
} st_proc;

/* Make a communicator for rank env->rank of env->size; on failure return a status with a message in err. */
stitch_status_t st_proc_comm_new(const st_boot_env *env, const stitch_config_t *config, stitch_comm_t **out,
                                 char *err, size_t errlen);
/* A communicator split from a process-mode one (proc.c says what it inherits). */
struct st_reg;
struct st_choice;
struct st_topology;
stitch_status_t st_proc_comm_child(const st_boot_env *env, const struct st_settings *s, const struct st_choice *algo,
                                   const struct st_reg *reg, struct st_topology *topo, st_groups *groups,
                                   stitch_comm_t **out, char *err, size_t errlen);
void st_proc_free(st_proc *pr);   /* says goodbye, closes, unmaps */
void st_proc_abort(st_proc *pr, const char *reason); /* never blocks; the first reason wins */

/* Read what the control channels have (non-blocking). Returns 0, or -1 when a peer died or aborted (the
 * reason, naming the peer, is then pr->abort's and the communicator is aborted). */
int st_proc_poll_ctrl(st_proc *pr, int timeout_ms);

/* The process's registry of shared memory (regmem.h), made on first use with a watch on the control channels (a
 * gone peer holds no borrow; waits answer the peers' queries); NULL when out of memory. */
struct st_regmem *st_proc_regmem(st_proc *pr);

/* The deadline of a call passed while waiting for rank `waiting_for`: find the rank really behind before anyone
 * is blamed. Asks every connected peer for its progress over the control channels and waits up to wait_ms for the
 * answers, answering the peers' own queries meanwhile (every rank waiting in a call answers, within ST_BLOCK_MS;
 * a stopped rank, one busy outside stitch or an unreachable one does not). Writes into `out` a sentence naming
 * "rank R is behind" and why. Returns 0, or -1 when the communicator was aborted meanwhile (a peer's abort frame,
 * a dead peer: pr->abort says why). */
int st_proc_behind(st_proc *pr, int waiting_for, int wait_ms, char *out, size_t outlen);

/* Going to sleep is three calls: st_proc_arm (returns the doorbell's word; 0 when the rank has no bell or tcp peers
 * too, and sleeps in poll), one more look for progress, then st_proc_block with that word (it disarms). A ring after
 * the arm makes the block return at once instead of missing the wake-up; a peer that rings while we are not armed pays
 * no more than a load. When the second look finds progress, call st_proc_disarm instead of blocking. */
uint32_t st_proc_arm(st_proc *pr);
void st_proc_disarm(st_proc *pr);
/* Block until something may have changed (data, or space on a transport when want_out, a control frame) or
 * timeout_ms; disarms. */
void st_proc_block(st_proc *pr, int timeout_ms, int want_out, uint32_t seen);

#endif
