/* comm.h - the communicator: one rank's handle, its backend, its algorithm choice and its schedule cache.
 *
 * Backends. How the ranks of a communicator reach each other is its backend (st_backend): threads of one process
 * pulling from each other's buffers (threads.c, engine exec.c), or processes exchanging messages over transports
 * (proc.c, engine exec_msg.c). Everything else - argument checks, the schedule cache, errors, abort, destroy - is
 * written once, here and in api.c, and calls the backend through its table; only a backend's own files touch its
 * state (comm->job, comm->proc).
 *
 * A communicator is used by one thread at a time (its rank's), so nothing in it is locked; what ranks share
 * lives in the backend (the job of thread ranks, job.h). That rule is checked, not assumed: every public function
 * that runs on a communicator takes `busy` first (st_comm_enter), so a second thread fails with
 * STITCH_ERR_INVALID_USAGE instead of racing, and a destroyed handle is kept, marked dead, so that using it again is
 * detected (comm.c). Non-blocking calls are run by the communicator's progress thread, which owns the state while
 * any is pending and never takes `busy`; st_comm_enter waits for it to finish them (request.h). Schedules are
 * instantiated lazily, on the first collective that needs them, and kept for the communicator's lifetime: a
 * schedule depends only on (algorithm, p, root, groups), never on the message; which algorithm a call runs may
 * depend on its size (choose.h).
 */
#ifndef ST_COMM_H
#define ST_COMM_H

#include <stdarg.h>
#include <stdint.h>

#include "abort.h"
#include "choose.h"
#include "groups.h"
#include "select.h"
#include "st_sched.h"
#include "stitch.h"
#include "topology.h"

struct st_args;
struct st_job;
struct st_proc;
struct st_split;
struct st_p2p_op;
struct st_p2p_feed;
struct st_nbq;
/* A block stitch_mem_alloc gave out of plain memory (mem.c), listed on its communicator; freed by mem.c or, the
 * ones left, when the communicator is. */
typedef struct st_plainmem {
    void *ptr;
    struct st_plainmem *next;
} st_plainmem;
/* What the communicator does with its queue of non-blocking calls (progress.c fills it with the queue): wait until
 * none is pending, and stop the progress thread and free the queue. Called through here, not by name, so that the
 * communicator does not call up into the requests above it. */
typedef struct st_nb_ops {
    void (*drain)(stitch_comm_t *comm);
    void (*free)(stitch_comm_t *comm);
} st_nb_ops;

/* What a kind of communicator does differently: one table per backend (threads.c, proc.c). */
typedef struct st_backend {
    /* Run one collective call; its arguments are checked (api.c) and the communicator is not aborted. */
    stitch_status_t (*run)(stitch_comm_t *comm, const struct st_args *a);
    /* Abort the communicator with `reason` (the first reason wins) and tell the peers, so that none waits for this
     * rank in vain. Never blocks; callable from any thread. */
    void (*abort)(stitch_comm_t *comm, const char *reason);
    /* Free what the backend owns (the job reference; the transports and control channels, saying goodbye). */
    void (*free)(stitch_comm_t *comm);
    /* The engine reads peers' units where they are and needs every rank's transfers (threads: call.c's
     * src_fresh), so a rank keeps the whole schedule; else (processes) it builds only its own plan when the
     * algorithm names its senders (`from`, comm.c). */
    int whole_schedule;
    /* stitch_comm_split's two steps of this backend (split.h): the leader of a color makes what its members join
     * with, into a blob; each member joins with its leader's blob. */
    stitch_status_t (*split_offer)(stitch_comm_t *parent, struct st_split *sp, char *blob, char *err, size_t errlen);
    stitch_status_t (*split_join)(stitch_comm_t *parent, struct st_split *sp, const char *blob, stitch_comm_t **out,
                                  char *err, size_t errlen);
    /* Point-to-point (p2p.h): run a group's operations on this communicator (none to myself) as one, and those a
     * feed brings meanwhile (feed NULL: none). */
    stitch_status_t (*p2p)(stitch_comm_t *comm, const struct st_p2p_op *ops, int n, struct st_p2p_feed *feed);
    /* Wake this rank's point-to-point loop if it sleeps, so that its feed brings an operation just queued (any
     * thread; p2p.h). NULL: the loop needs no waking. */
    void (*p2p_wake)(stitch_comm_t *comm);
    /* stitch_mem_alloc / stitch_mem_free (mem.c checks the arguments): memory peers can read in place. NULL: plain
     * aligned memory, which thread ranks read in place already (mem.c). */
    stitch_status_t (*mem_alloc)(stitch_comm_t *comm, size_t bytes, void **ptr);
    stitch_status_t (*mem_free)(stitch_comm_t *comm, void *ptr);
} st_backend;

/* A schedule instantiated for this communicator, with this rank's plan and its peers. */
/* The algorithms policy hccl_guide may name between servers inside hier (select_guide.c). */
#define ST_L1_VARIANTS 4
extern const char *const st_l1_variants[ST_L1_VARIANTS]; /* ring, rhd, nhr, nb */
int st_l1_variant(const char *name); /* its index, -1 for NULL or another name */

typedef struct st_entry {
    int ready;
    int root;                 /* the root it was instantiated for (rooted collectives; 0 otherwise) */
    const char *level1;       /* the algorithm the role level1 runs in it where a size range says so (hccl_guide's
                               * hier, st_sel_range.between); NULL: the communicator's roles */
    int needs_scratch;        /* this rank receives into blocks it keeps in scratch (call.c) */
    struct st_entry *next;    /* the same algorithm for other roots, most recently used first */
    st_sched sched;
    st_plan plan;
    int32_t *peers; /* distinct ranks this rank receives from or sends to, itself excluded */
    int npeers;
    unsigned char *fresh;     /* per unit, during a call: my unit still holds only the caller's input (call.h) */
    unsigned char *src_fresh; /* per unit of each transfer into me: the source's unit is still its input */
    int32_t *src_fresh_at;    /* per position in plan.recvs: where its units start in src_fresh */
    int remote_once;          /* threads (exec.c's st_tiny): only step 0 moves data between ranks: 1 yes, 2 no,
                               * 0 not known yet */
    int32_t *fwd;             /* process mode, made on first use (exec_msg.c): per position in plan.recvs, the
                               * send of the next step that forwards what it writes (fused), or -1 */
    size_t *geo;              /* during a call: the current segment's unit geometry (st_call_geometry); it lives
                               * in fresh's allocation, freed with it */
    struct st_replay *replay; /* the programs of the last few tiny calls' shapes (replay.c: the threads engine's
                               * moves, or the message engine's moves and messages), one allocation; NULL: none yet */
} st_entry;

struct stitch_comm {
    _Atomic uint64_t magic;        /* ST_COMM_LIVE, ST_COMM_DEAD once destroyed (the handle is kept: comm.c) */
    _Atomic(const char *) busy;    /* the public function running on this communicator, or NULL */
    struct stitch_comm *dead_next; /* destroyed handles, for as long as the process lives (comm.c) */
    const st_backend *be;
    st_abort *abort;            /* whether the communicator is aborted, and why: shared by the job's thread ranks,
                                 * a process rank's own (which its peers' abort frames set) */
    const st_groups *groups;    /* the ranks' groups (the job's, or a process rank's own) */
    int rank, p;
    st_choice algo[STITCH_COLL_COUNT]; /* per collective: forced, or auto by size (choose.h) */
    struct st_sel_state *sel; /* auto's tables (select.h), built per collective on its first auto call */
    st_reg *reg;         /* the algorithms this communicator sees (registry.h), owned */
    st_entry *cache;     /* one entry per algorithm of reg, by its number (rooted ones: a list per root) */
    struct st_entry_memo { /* per collective, st_comm_entry_for's last answer and what it was asked (plan.c) */
        st_entry *e;       /* NULL: none yet */
        st_choice choice;  /* algo[coll] then */
        size_t count;
        int dtype, op, root;
    } memo[STITCH_COLL_COUNT];
    int32_t *use[STITCH_COLL_COUNT]; /* per collective called: HCCL_ALGO's level entries as role replacements in the
                                      * built-in catalogue (st_inst.use, choose.h's st_hccl_use); NULL: none */
    int32_t *use_l1[STITCH_COLL_COUNT][ST_L1_VARIANTS]; /* policy hccl_guide: `use` with the role level1 running
                                      * st_l1_variants[i] instead, for a range naming it (st_sel_range.between);
                                      * NULL: none (other policies, or the collective lacks that algorithm) */
    int ahc[STITCH_COLL_COUNT][2]; /* AHC's inner algorithms per collective (st_ahc_inner; auto: algos.dsl's rule),
                                    * resolved with the groups on first use (comm_ahc.c) */
    unsigned ahc_ready;  /* bit c: ahc[c] resolved */
    uint64_t seq;        /* collectives called so far */
    uint32_t base;       /* my slot's `posted` between calls (processes: my board's, exec_pull.c) */
    int whole_schedule;  /* build whole schedules from now on, whatever the backend's default (processes with
                          * registered memory: the pull engine reads peers' units where they are) */
    struct st_plainmem *plainmem; /* stitch_mem_alloc's blocks where the backend has no allocator (mem.c) */
    char *scratch;       /* reduce_scatter's work buffer, kept between calls (first touch is slow) */
    size_t scratch_size;
    char *units;         /* the slots of scratch units (`units U scratch S`), kept between calls likewise */
    size_t units_size;
    int timeout_ms;
    size_t segment_bytes;
    struct st_topology *topology; /* the job's or process's topology (topology.h), one reference; NULL: none given.
                                   * The 2D split's R as given is settings.split_ratio; without it, 12.3's formula
                                   * takes the topology's level 0 and 1 bandwidths (st_topology_split_bw) */
    st_settings settings; /* as resolved at init, for the communicators split from this one (split.c); the
                           * strings a config may own (groups, topo, hccl_algo's text, the algorithm file) are
                           * dropped: the topology, choices and catalogues pass on from the communicator itself */
    char last_error[512];
    struct st_job *job;   /* the threads backend's (threads.c, exec.c) */
    struct st_proc *proc; /* the processes backend's (proc.c, exec_msg.c) */
    struct st_dcomm *dev; /* the device backend's (device/dev_comm.c), beside the job it was made from */
    struct st_nbq *nb;    /* the queue of non-blocking calls and its progress thread (progress.c); NULL until the
                           * first one, which also sets nb_ops */
    const struct st_nb_ops *nb_ops;
};

/* A new communicator of backend `be` for rank `rank` of p with the settings, a copy of the registry and a reference
 * on the topology (NULL: none), its cache empty; the backend then sets abort, groups and its own state. NULL when
 * out of memory. */
stitch_comm_t *st_comm_new(const st_backend *be, int rank, int p, const st_settings *s, const st_choice *algos,
                           const st_reg *reg, struct st_topology *topo);
/* auto's tables of a communicator (select_comm.c): the settings they depend on, copied from s; NULL when out of
 * memory. */
typedef struct st_sel_state st_sel_state;
st_sel_state *st_sel_state_new(const st_settings *s);
void st_sel_state_free(st_sel_state *st);
/* Replace the predictor of policy model (tests); call before the first collective. */
void st_sel_state_set_predict(st_sel_state *st, st_predict_fn fn);
/* The algorithm auto runs for a call of coll with `bytes` (count * dtype size), the table built on first use;
 * NULL when the table could not be built (the collective's fallback choice runs: STITCH_DEBUG says why). */
const st_algo *st_sel_state_pick(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll, size_t bytes);
/* The same, with the range's `between` (the role level1's algorithm it names, or NULL) in *between. */
const st_algo *st_sel_state_pick_l1(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll, size_t bytes,
                                    const char **between);
/* A copy of coll's table (built if not yet) and the status of building it. */
stitch_status_t st_sel_state_table(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll,
                                   st_sel_table *out);

/* AHC's inner algorithms (STITCH_AHC_INTRA / _INTER, or the cost model's choice under auto: select_ahc.c) written
 * into the communicator's role replacements (use, use_l1) for calls of coll, once, when the groups are known: every user of the
 * roles (st_comm_inst, the selection's env) calls it first. The communicator is one thread's at a time, so the
 * const is cast away for this one-time fill. -1 when out of memory (the roles then keep algos.dsl's rule). */
int st_comm_ahc_ready(const stitch_comm_t *comm, stitch_coll_t coll);
/* "intra nb, inter ring (model)" for coll: what AHC runs inside and across groups and what chose it. */
void st_comm_ahc_text(const stitch_comm_t *comm, stitch_coll_t coll, char *buf, size_t len);

/* Free a communicator that was never handed out (its backend state already freed or never made). */
void st_comm_discard(stitch_comm_t *comm);


#define ST_COMM_LIVE 0x6c69766573746368ull /* "hctsevil" */
#define ST_COMM_DEAD 0x6461656473746368ull

/* Take the communicator for `fn` (a public function's name) until st_comm_leave. STITCH_ERR_INVALID_ARGUMENT for
 * NULL; STITCH_ERR_INVALID_USAGE when it was destroyed or another thread is inside a call on it: the message
 * then goes to this thread's own record (stitch_comm_last_error from this thread), never into the communicator,
 * which the other thread may be writing. Once taken, it waits until the communicator's pending non-blocking calls
 * are over (request.h): the caller's call runs after them, and its state is the caller's again. */
stitch_status_t st_comm_enter(stitch_comm_t *comm, const char *fn);
/* The same without waiting for the pending calls: for the non-blocking calls, which only queue (api_nb.c). */
stitch_status_t st_comm_enter_nowait(stitch_comm_t *comm, const char *fn);
void st_comm_leave(stitch_comm_t *comm);
/* Record `fmt` in this thread's own record for comm (what stitch_comm_last_error returns to this thread until its
 * next call on comm) and return status: for messages that must not touch the communicator, whose last_error the
 * progress thread may be writing. */
stitch_status_t st_comm_note(const stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Not NULL and not destroyed: for the functions that only read a communicator. */
int st_comm_live(const stitch_comm_t *comm);

/* Record `fmt` as the last error and return status. */
stitch_status_t st_comm_error(stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, and abort the communicator with the message so that no peer waits for this rank in vain. */
stitch_status_t st_comm_fail(stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Abort the communicator with the last error as the reason ("rank r: ..."), through the backend (which tells the
 * peers), and return status: how a rank tells its peers that its call failed. */
stitch_status_t st_comm_tell(stitch_comm_t *comm, stitch_status_t status);

/* The schedule of the algorithm this call runs (its collective's choice for its count and dtype) with this rank's
 * plan, instantiated on first use; rooted collectives are cached per (algorithm, root). plan.c. */
struct st_args;
stitch_status_t st_comm_entry_for(stitch_comm_t *comm, const struct st_args *a, st_entry **out);
/* Whole schedules from now on (comm->whole_schedule), and the cached entries built as a rank's own plan forgotten,
 * to be built whole on their next use (a process rank's first stitch_mem_alloc: the pull engine cannot run an own
 * plan). Between calls only: no call holds an entry. comm.c. */
void st_comm_plans_whole(stitch_comm_t *comm);

/* The algorithm of coll's choice for this count and dtype (NULL: none); the 2-D split's ratio in ppm for it on
 * topo. For plan.c, which builds the entries. */
const st_algo *st_comm_pick(const stitch_comm_t *comm, stitch_coll_t coll, size_t count, stitch_dtype_t dtype);
/* The same, with the algorithm the range names for the role level1 in *level1 (NULL: the communicator's roles). */
const st_algo *st_comm_pick_l1(const stitch_comm_t *comm, stitch_coll_t coll, size_t count, stitch_dtype_t dtype,
                               const char **level1);
int32_t st_comm_split_ppm(const stitch_comm_t *comm, const st_algo *algo, const st_topo *topo);
/* "split ratio 0.375 (HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO)": R for `algo` and where it came from (12.2's
 * priority: config->split_ratio, the variable, the formula or its fallback), for STITCH_DEBUG. */
void st_comm_split_text(const stitch_comm_t *comm, const st_algo *algo, const st_topo *topo, char *buf, size_t len);
/* How `algo` is instantiated on this communicator for `root` (p, groups, roles, split ratio): what plans and proofs
 * are made for. */
st_inst st_comm_inst(const stitch_comm_t *comm, const st_algo *algo, int root);
/* The same with the role level1 running `level1` (an st_l1_variants name; NULL: the communicator's roles). */
st_inst st_comm_inst_l1(const stitch_comm_t *comm, const st_algo *algo, int root, const char *level1);


/* reduce_scatter's work buffer of at least `bytes`, 64-byte aligned. */
stitch_status_t st_comm_scratch(stitch_comm_t *comm, size_t bytes, const char *fn, char **out);
/* The slots of scratch units, at least `bytes`, 64-byte aligned; zeroed when (re)allocated, so the tail of a
 * slot that holds a shorter unit is never uninitialized memory. */
stitch_status_t st_comm_units(stitch_comm_t *comm, size_t bytes, const char *fn, char **out);

#endif
