/* stitch.h - the public interface of libstitch: collectives whose algorithms are written in the stitch DSL.
 *
 * Model. A communicator is one rank's handle on a group of p ranks. In the embedded default all p ranks are
 * threads of one process: stitch_comm_init_threads creates the p handles at once, and each application thread
 * then calls the collectives with its own handle (like ncclCommInitAll plus one thread per device). Collectives
 * are blocking (their non-blocking forms, stitch_iall_reduce and the others, return a request) and must be called
 * by every rank of the communicator, in the same order, with matching arguments; a mismatch is detected and
 * reported as STITCH_ERR_MISMATCH on the ranks involved.
 *
 * Buffers. Out-of-place and in-place are both allowed: all_reduce with send == recv; reduce_scatter with
 * send == recv or recv == send + rank * count; all_gather with send == recv + rank * count. Counts of 0 are valid
 * no-ops that still synchronise nothing and return STITCH_OK. Buffers must be aligned for their type.
 *
 * Results are deterministic: the same inputs give bit-identical outputs on every rank and on every run (each unit
 * is reduced in an order fixed by the schedule, then copied). fp16 and bf16 are reduced by converting both
 * operands to fp32, applying the op and rounding once to nearest-even per reduction step.
 *
 * Errors. Every call returns a stitch_status_t; stitch_strerror names the code and stitch_comm_last_error gives the
 * text of the communicator's last failure (what, where, why). After a failure inside a collective (timeout,
 * mismatch, abort) the communicator is aborted: further collectives return STITCH_ERR_ABORTED; destroy it. An
 * argument error (STITCH_ERR_INVALID_ARGUMENT: a NULL buffer, a bad dtype, overlapping buffers, ...) aborts the
 * communicator too, at once, so that the other ranks do not wait for this rank's call until their timeout: their
 * calls fail with STITCH_ERR_ABORTED and this rank's message (in process mode over the control channels). A
 * timeout names the peer the rank waited for and the rank furthest behind (thread mode: by the call and step every
 * rank publishes), which is usually the one to look at.
 *
 * Usage errors. A communicator is used by one thread at a time: a call made while another thread is inside a call
 * on it fails with STITCH_ERR_INVALID_USAGE naming the call in progress, and changes nothing (the call in progress
 * goes on; its peers are not told). A destroyed handle is detected likewise: collectives, stitch_comm_destroy and
 * stitch_comm_set_algorithm return STITCH_ERR_INVALID_USAGE, stitch_comm_rank/size/groups -1, the algorithm
 * queries NULL, stitch_comm_abort does nothing. This works because a destroyed handle is not freed: it is kept,
 * marked dead (about 1 KB, for the life of the process), so that it is never handed out again. A pointer that was
 * never a communicator is not detected. The message of a usage error is kept per thread:
 * stitch_comm_last_error(comm) returns it in the thread that got the error.
 *
 * Ownership. The caller owns the buffers; stitch never keeps a pointer to them after a call returns (a non-blocking
 * call: after its request is complete), also when it fails: a failed call returns only once no peer reads its
 * buffers, so they may be freed at once. Communicators
 * are owned by the caller and freed with stitch_comm_destroy (each handle once, from any thread, after the last
 * call on it, stitch_comm_abort included, has returned).
 */
#ifndef STITCH_H
#define STITCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header: project(VERSION) in CMakeLists.txt, which checks that these agree. stitch_version()
 * gives the library's ("0.1.0"): a program can compare it with the header it was compiled against. The shared
 * library's soname changes with the major version (libstitch.so.0). */
#define STITCH_VERSION_MAJOR 0
#define STITCH_VERSION_MINOR 1
#define STITCH_VERSION_PATCH 0
const char *stitch_version(void);

/* Status codes: 0 is success, the rest negative. One list, so stitch_strerror cannot drift. */
#define STITCH_STATUS_LIST(X)                                                                                  \
    X(OK, 0, "success")                                                                                        \
    X(ERR_INVALID_ARGUMENT, -1, "invalid argument")                                                            \
    X(ERR_NO_MEMORY, -2, "out of memory")                                                                      \
    X(ERR_UNKNOWN_ALGORITHM, -3, "unknown algorithm")                                                          \
    X(ERR_UNSUPPORTED, -4, "unsupported combination")                                                          \
    X(ERR_MISMATCH, -5, "ranks called the collective with different arguments")                               \
    X(ERR_TIMEOUT, -6, "timed out waiting for a peer")                                                         \
    X(ERR_ABORTED, -7, "communicator aborted")                                                                 \
    X(ERR_SYSTEM, -8, "system call failed")                                                                    \
    X(ERR_INTERNAL, -9, "internal error")                                                                      \
    X(ERR_CONFIG, -10, "invalid configuration")                                                                \
    X(ERR_INVALID_USAGE, -11, "communicator used wrongly (destroyed, or in use by another thread)")            \
    X(ERR_DEVICE, -12, "device (accelerator) runtime error")

typedef enum stitch_status {
#define STITCH_STATUS_ENUM(name, value, text) STITCH_##name = value,
    STITCH_STATUS_LIST(STITCH_STATUS_ENUM)
#undef STITCH_STATUS_ENUM
} stitch_status_t;

typedef enum stitch_dtype {
    STITCH_INT8, STITCH_UINT8, STITCH_INT16, STITCH_INT32, STITCH_INT64,
    STITCH_FP16, STITCH_BF16, STITCH_FP32, STITCH_FP64,
    STITCH_DTYPE_COUNT
} stitch_dtype_t;

typedef enum stitch_op { STITCH_SUM, STITCH_PROD, STITCH_MAX, STITCH_MIN, STITCH_OP_COUNT } stitch_op_t;

/* In the order of the DSL's list (core/st_steptab.h), which registry.c checks. */
typedef enum stitch_coll {
    STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER, STITCH_BROADCAST, STITCH_REDUCE, STITCH_SCATTER,
    STITCH_GATHER, STITCH_ALL_TO_ALL, STITCH_ALL_TO_ALL_V, STITCH_COLL_COUNT
} stitch_coll_t;

typedef struct stitch_comm stitch_comm_t;

/* A catalogue of algorithms compiled from a .dsl file (opaque; its layout is private to libstitch). libstitch has
 * one built in (algos.dsl). Your own: the CMake function stitch_add_dsl(target file.dsl [RANKS A..B] [NAME name])
 * (find_package(stitch); in stitch's own tree also stitch_compile_dsl(target file.dsl NAME)) verifies the file and
 * compiles it into `target` as `const stitch_catalogue_t NAME`; `#include "NAME.h"` (generated, on the
 * target's include path), or declare `extern const stitch_catalogue_t NAME;`, and give &NAME to a communicator in
 * stitch_config_t.catalogues. Its algorithms are then chosen by name like the built-in ones (config->algo,
 * STITCH_ALGO, stitch_comm_set_algorithm). Names must be unique per collective across the built-in catalogue and
 * yours (init fails naming both files otherwise). In process mode every rank must give the same catalogues in the
 * same order: init compares a hash of them across ranks and fails naming both sides. (`stitchc emit FILE -o OUT.c
 * --header OUT.h --symbol NAME` does the same by hand; compile OUT.c with st_steptab.h on the include path: core/
 * in the source tree, <includedir>/stitch once installed, `pkg-config --variable=steptabdir stitch`.)
 * A .dsl file can also be compiled while the program runs: stitch_catalogue_load below, or STITCH_ALGO_FILE. */
typedef struct stitch_catalogue stitch_catalogue_t;

/* Compile the .dsl file `path` now, with stitchc's front end (same rules, same limits: a regular file of at most
 * 16 MiB; a FIFO, directory or device is refused without blocking), into a catalogue to pass in
 * stitch_config_t.catalogues. Its hash is the one `stitchc emit` writes for the same file, so in process mode a
 * rank that loads the file and one that links its emitted tables agree. It is not verified here: every
 * communicator given it verifies it for its own rank count and groups at init, and fails init (STITCH_ERR_CONFIG,
 * the verifier's counterexample in err) when an algorithm is wrong there. Returns STITCH_ERR_CONFIG with the
 * compiler's `FILE:LINE:COL: error: ...` lines in err when the file cannot be read, does not compile or defines no
 * algorithm; STITCH_ERR_INVALID_ARGUMENT for a NULL path or out. STITCH_ALGO_FILE=path does the same for every
 * communicator, which then owns the catalogue (listed after config->catalogues). */
stitch_status_t stitch_catalogue_load(const char *path, stitch_catalogue_t **out, char *err, size_t errlen);
/* Drop the reference stitch_catalogue_load gave (once per load). Communicators made with it hold their own, so
 * it may be freed right after init; it goes when the last of them is destroyed. NULL, or a catalogue emitted at
 * build time, is ignored. */
void stitch_catalogue_free(stitch_catalogue_t *cat);

/* Communicator settings. Zero-initialise (STITCH_CONFIG_INIT) and set what you need; unset fields fall back to
 * the environment, then to built-in defaults. */
typedef struct stitch_config {
    const char *algo;  /* algorithm for every collective, e.g. "ring", or "all_reduce=rhd,..."; NULL: $STITCH_ALGO,
                        * else "auto": chosen per call by size (all_reduce: mesh_oneshot for small messages, ring
                        * above; the others ring, or the catalogue's first where there is no ring) */
    int timeout_ms;    /* how long a collective may go without progress (its peers not moving) before it fails;
                        * a long call that keeps moving never times out. 0: $STITCH_TIMEOUT (seconds), else
                        * 300 s; < 0 waits forever */
    const char *groups; /* ranks grouped into servers for topology-aware algorithms (pipeline): "3x2" is 3 groups
                         * of 2 consecutive ranks, "2,2,2" gives the sizes; NULL: $STITCH_GROUPS, else one group
                         * (process mode: one group per host, whatever the ranks' order) */
    const stitch_catalogue_t *const *catalogues; /* ncatalogues more catalogues of algorithms, searched after the
                                                  * built-in one; the array is read at init only (the catalogues are
                                                  * static data, used for the communicator's life) */
    int ncatalogues;
    /* HCCL's settings (docs/algorithms.md, "HCCL's configuration"), each over its environment variable: */
    const char *hccl_algo; /* as HCCL_ALGO: "level0:NA;level1:AHC" or "allreduce=level0:NA;level1:ring/...", per
                            * level (level0 inside a group, level1 between groups, ...); NULL: $HCCL_ALGO */
    double split_ratio;    /* R of the two-dimension Mesh+NHR split, in (0, 1]; 0: not set (as in HCCL's config):
                            * $HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO, else the built-in formula */
    int deterministic;     /* STITCH_DETERMINISTIC_*; 0 (UNSET): $HCCL_DETERMINISTIC, else false */
    const char *topo; /* the ranks' topology: a YAML topology file (topologies/README.md) or a layout written
                       * inline, "2,3" (two levels: servers of 2 and 3 ranks) or "[2,3],[4]" (three); its layout
                       * gives the groups at every level and must hold exactly the communicator's ranks. NULL:
                       * $STITCH_TOPO. Exclusive with `groups` (both set: init fails naming both); set here, it
                       * wins over $STITCH_GROUPS, as `groups` wins over $STITCH_TOPO. Process mode: ranks are
                       * placed by the file's host names when it names hosts, else in rank order, and every rank
                       * must give the same topology (init compares a hash across ranks) */
    const char *ahc_intra; /* AHC's (and AHC_BROKE's) algorithm inside groups: "auto", "nb", "nhr" or "ring";
                            * NULL: $STITCH_AHC_INTRA, else auto (the cost model picks per communicator) */
    const char *ahc_inter; /* the same across groups (spec 9.6); NULL: $STITCH_AHC_INTER, else auto */
} stitch_config_t;

/* stitch_config_t.deterministic. stitch's results are deterministic (bit-identical run to run) whatever it says;
 * STRICT (one reduction order per element whatever the count, algorithm or layout, spec 14.2) makes all_reduce and
 * reduce_scatter run mesh_strict, HCCL's order-preserving tree over ranks 0..p-1, whatever algorithm was chosen. */
enum {
    STITCH_DETERMINISTIC_UNSET = 0,
    STITCH_DETERMINISTIC_FALSE = 1,
    STITCH_DETERMINISTIC_TRUE = 2,
    STITCH_DETERMINISTIC_STRICT = 3
};

#define STITCH_CONFIG_INIT {NULL, 0, NULL, NULL, 0, NULL, 0.0, STITCH_DETERMINISTIC_UNSET, NULL, NULL, NULL}

/* Create p communicators whose ranks are threads of this process; comms[i] is rank i. On failure nothing is
 * left allocated and comms is untouched. A bad configuration (unknown algorithm in the config or in
 * STITCH_ALGO, a malformed STITCH_TIMEOUT) fails here with STITCH_ERR_CONFIG and a message in `err` (if not NULL). */
stitch_status_t stitch_comm_init_threads(int nranks, const stitch_config_t *config, stitch_comm_t **comms,
                                         char *err, size_t errlen);
stitch_status_t stitch_comm_destroy(stitch_comm_t *comm);

int stitch_comm_rank(const stitch_comm_t *comm);
int stitch_comm_size(const stitch_comm_t *comm);

/* The groups topology-aware algorithms (pipeline) see: the topology's servers (STITCH_TOPO /
 * stitch_config_t.topo), STITCH_GROUPS / stitch_config_t.groups, else in process mode one group per host. Returns
 * the number of groups (1: not grouped; -1: comm is NULL) and writes the first `max` group sizes, in group order,
 * to sizes (may be NULL when max is 0). The same as stitch_comm_level_groups(comm, 0, sizes, max). */
int stitch_comm_groups(const stitch_comm_t *comm, int *sizes, int max);
/* The number of levels of the communicator's topology (1: one group of all ranks; 2: groups, then everything; a
 * three-level topology file: 3), or -1 when comm is NULL. */
int stitch_comm_levels(const stitch_comm_t *comm);
/* The groups of level `level` (0: servers, innermost; the last level is one group of all ranks): their number, or
 * -1 for a NULL comm or a level out of range; the first `max` sizes, in ranks, in group order, go to sizes. */
int stitch_comm_level_groups(const stitch_comm_t *comm, int level, int *sizes, int max);
/* The number of ranks a topology setting (a file or an inline layout, as stitch_config_t.topo) holds, or -1 with
 * the reason in err (the loader's `FILE:LINE:COL: error: ...`). For tools that size a job from its topology. */
int stitch_topo_ranks(const char *topo, char *err, size_t errlen);

/* Choose the algorithm for one collective (or for all, with STITCH_COLL_COUNT); "auto" restores the choice by
 * size. Every rank must make the same
 * choice before its next collective; the fingerprint check catches ranks that do not. An algorithm whose `require`
 * does not hold on this communicator (its p or groups) is refused here: STITCH_ERR_UNSUPPORTED, with the require's
 * file and line in stitch_comm_last_error, and the choice (every collective's, for STITCH_COLL_COUNT) unchanged.
 * A rooted algorithm is refused when its require holds for no root; one it holds for some roots only is left to
 * the call naming a root it refuses (which then fails). */
stitch_status_t stitch_comm_set_algorithm(stitch_comm_t *comm, stitch_coll_t coll, const char *name);
/* The choice for a collective: an algorithm's name, or "auto". */
const char *stitch_comm_algorithm(const stitch_comm_t *comm, stitch_coll_t coll);
/* The algorithm a call of `count` elements of `dtype` runs (what "auto" picks for that size); NULL for a NULL
 * comm or an out-of-range coll or dtype. */
const char *stitch_comm_algorithm_for(const stitch_comm_t *comm, stitch_coll_t coll, size_t count,
                                      stitch_dtype_t dtype);

/* The collectives. `count` is elements per rank as in NCCL: all_reduce's vector length, reduce_scatter's output
 * length (input is count * p), all_gather's input length (output is count * p). */
stitch_status_t stitch_all_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                  stitch_op_t op, stitch_comm_t *comm);
stitch_status_t stitch_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                      stitch_op_t op, stitch_comm_t *comm);
stitch_status_t stitch_all_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype,
                                  stitch_comm_t *comm);

/* Rooted collectives: `root` is a rank, the same on every rank (else STITCH_ERR_MISMATCH). Buffers a rank does not
 * use may be NULL. broadcast: count elements from the root's sendbuf to every rank's recvbuf (the root in place
 * with sendbuf == recvbuf). reduce: the reduction of every rank's sendbuf into the root's recvbuf (in place:
 * sendbuf == recvbuf at the root). scatter: block r of the root's sendbuf (p * recvcount elements) to rank r's
 * recvbuf (the root in place: recvbuf == sendbuf + root * recvcount). gather: every rank's sendbuf to block r of
 * the root's recvbuf (p * sendcount elements; the root in place: sendbuf == recvbuf + root * sendcount). */
stitch_status_t stitch_broadcast(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype, int root,
                                 stitch_comm_t *comm);
stitch_status_t stitch_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                              stitch_op_t op, int root, stitch_comm_t *comm);
stitch_status_t stitch_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype, int root,
                               stitch_comm_t *comm);
stitch_status_t stitch_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype, int root,
                              stitch_comm_t *comm);

/* all_to_all: block j of sendbuf (count elements) goes to rank j, block i of recvbuf comes from rank i; the
 * buffers (p * count elements each) must not overlap. all_to_all_v as MPI_Alltoallv, in elements: sendcounts[j]
 * elements from sendbuf + sdispls[j] to rank j, recvcounts[i] from rank i into recvbuf + rdispls[i] (the receive
 * ranges of different peers must not overlap: STITCH_ERR_INVALID_ARGUMENT naming both; send ranges may); my
 * recvcounts[i] must equal rank i's sendcounts[me] (else STITCH_ERR_MISMATCH on the receiver). Every rank calls
 * all_to_all_v even when all its counts are 0. */
stitch_status_t stitch_all_to_all(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                  stitch_comm_t *comm);
stitch_status_t stitch_all_to_all_v(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                                    void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                                    stitch_dtype_t dtype, stitch_comm_t *comm);

/* Registered memory (NCCL's ncclMemAlloc and user buffer registration): a buffer of `bytes` (> 0; 4096-byte
 * aligned) that the communicator's peers can read in place. A collective whose buffers, on every rank, lie wholly in
 * such memory (a whole buffer or any slice of one) moves each byte once: a rank reduces or copies straight out of its
 * peer's buffer, with no ring between them. In process mode the memory is a shared segment (a memfd) that the
 * host's other ranks map on first use; when all ranks are on one host and every rank's buffers of a call (of at
 * least 256 KiB) are registered, the ranks agree on it in the call (a short hello) and pull, as threads do;
 * otherwise the call streams messages as ever, with the same results. A process rank's first allocation makes its
 * plans whole (every rank's transfers, which the pull engine reads): plans made before it are built again on
 * their next use, once.
 * In thread mode it is plain aligned memory: thread ranks always read each other's buffers in place. Memory
 * belongs to the communicator it was allocated on and goes with stitch_comm_destroy. stitch_mem_free takes the
 * pointer stitch_mem_alloc gave (not a slice; not twice: STITCH_ERR_INVALID_ARGUMENT) and, in process mode, waits
 * until no peer's call reads it (at most the communicator's timeout; a peer that died reading it keeps only its own
 * mapping). Both take the communicator like a collective (STITCH_ERR_INVALID_USAGE while another thread is in a
 * call on it). */
stitch_status_t stitch_mem_alloc(stitch_comm_t *comm, size_t bytes, void **ptr);
stitch_status_t stitch_mem_free(stitch_comm_t *comm, void *ptr);

/* Process mode: one rank per process, on one host or many (shm between processes of a host, tcp between hosts).
 * NCCL-style: one process calls stitch_get_unique_id on the host where rank 0 will run, hands the id to every
 * rank, and each calls stitch_comm_init_rank. stitch_comm_init_env reads a launcher's environment instead (Open
 * MPI, MPICH Hydra, Slurm, torchrun, or STITCH_RANK/STITCH_SIZE/STITCH_ROOT=host:port, in that order);
 * stitch_launcher names the launcher found ("openmpi", ...) or returns NULL. Both block until every rank has
 * joined or the timeout passes. A rank whose init fails (a bad setting, STITCH_ALGO_FILE or STITCH_TOPO) still
 * joins the rendezvous to say why, and every rank then fails with its status and "rank R of N (...) failed init:
 * why" (so that rank, too, waits for the others to arrive). A job across hosts started by a launcher needs STITCH_SECRET (the same on every
 * rank) to keep others out; runtime/bootstrap.c says what each mode guarantees without it. Environment:
 * STITCH_TRANSPORT=auto|shm|tcp, STITCH_SOCKET_IFNAME, STITCH_SECRET,
 * STITCH_SPIN_US, STITCH_SHM_RING_BYTES, STITCH_TCP_RING_BYTES, STITCH_DEBUG (runtime/tunables.def declares them all),
 * STITCH_ROOT (runtime/bootstrap.c). */
typedef struct stitch_unique_id {
    char internal[128];
} stitch_unique_id_t;

stitch_status_t stitch_get_unique_id(stitch_unique_id_t *id);
stitch_status_t stitch_comm_init_rank(stitch_comm_t **comm, int nranks, stitch_unique_id_t id, int rank,
                                      const stitch_config_t *config, char *err, size_t errlen);
stitch_status_t stitch_comm_init_env(stitch_comm_t **comm, const stitch_config_t *config, char *err, size_t errlen);
const char *stitch_launcher(void);

/* ---- device communicators (docs/devices.md) ----------------------------------------------------------------
 * Ranks as threads of one process, each on an accelerator, NCCL's way: the collectives above take DEVICE
 * pointers of the rank's device and are enqueued on the communicator's stream; they return at once, without
 * waiting for the device. Several ranks may share one device (each has its own stream and buffers). An error the
 * device finds later (a peer that never called: timeout; a fault) is reported by the rank's next call and by
 * stitch_comm_get_async_error; the communicator is then aborted.
 * backend: "cuda" (NULL means "cuda"), or "host" (the same engine on host threads and host memory: for tests, its
 * calls complete before they return, so every rank must call from its own thread). devices[i] is rank i's device
 * (NULL: rank i on device i modulo the number of devices: on one GPU every rank shares it). Fails with
 * STITCH_ERR_UNSUPPORTED when the backend is not built (stitch-info says why) and STITCH_ERR_DEVICE when no device
 * is usable, with the reason in err. all_to_all_v is not supported on devices yet. */
stitch_status_t stitch_comm_init_devices(int nranks, const char *backend, const int *devices,
                                         const stitch_config_t *config, stitch_comm_t **comms, char *err,
                                         size_t errlen);
/* Devices of the backend here, or -1 with why (not built, no driver, no device). */
int stitch_device_count(const char *backend, char *why, size_t len);
/* The stream the rank's collectives are enqueued on (a cudaStream_t); NULL restores the rank's own stream, made at
 * init. The caller keeps its stream alive until the communicator is destroyed or given another. */
stitch_status_t stitch_comm_set_stream(stitch_comm_t *comm, void *stream);
void *stitch_comm_stream(const stitch_comm_t *comm);
int stitch_comm_device(const stitch_comm_t *comm); /* the rank's device; -1 for a host communicator */
/* STITCH_OK, with *async_error the error the device found in an earlier call (STITCH_OK while none; the message in
 * stitch_comm_last_error), without waiting. */
stitch_status_t stitch_comm_get_async_error(stitch_comm_t *comm, stitch_status_t *async_error);
/* Wait until the calls enqueued on the rank's stream are done; their error, if any. */
stitch_status_t stitch_comm_synchronize(stitch_comm_t *comm);

/* Sub-communicators (MPI_Comm_split, ncclCommSplit). stitch_comm_split is collective over `comm`: every rank calls
 * it, in the same place of its sequence of calls. Ranks that give the same color >= 0 form one new communicator,
 * ranked by key (ties by their rank in comm); a negative color (STITCH_UNDEFINED) takes no part and gets *newcomm
 * = NULL. The new communicator is of comm's kind (threads or processes: process ranks bootstrap a new job among
 * themselves, over the transports comm's settings choose) and inherits comm's settings (timeout, transports,
 * tunables, HCCL settings), its catalogues (built-in, config->catalogues, STITCH_ALGO_FILE) and its algorithm
 * choices as they are now (stitch_comm_set_algorithm included); its topology is comm's restricted to its ranks
 * (the groups of every level that keep a member, members in new rank order). A rank that does not call it while
 * the others do, or calls another collective instead, makes it fail on every rank (STITCH_ERR_MISMATCH or
 * STITCH_ERR_TIMEOUT, the message naming the ranks, prefixed "stitch_comm_split"); comm is then aborted, as after
 * any failed collective. stitch_comm_dup is a split with one color and the ranks' own order. Destroy the new
 * communicator with stitch_comm_destroy, in any order relative to comm. */
#define STITCH_UNDEFINED (-1)
stitch_status_t stitch_comm_split(stitch_comm_t *comm, int color, int key, stitch_comm_t **newcomm);
stitch_status_t stitch_comm_dup(stitch_comm_t *comm, stitch_comm_t **newcomm);

/* Return once every rank of comm has entered stitch_barrier. It is a collective like the others (an all_reduce of
 * one uint8 with max, so it matches only another stitch_barrier or that exact all_reduce). */
stitch_status_t stitch_barrier(stitch_comm_t *comm);

/* Point-to-point (ncclSend/ncclRecv). stitch_send sends `count` elements of sendbuf to rank `peer`; stitch_recv
 * receives `count` elements from `peer` into recvbuf. Sends and receives between one pair of ranks match in the
 * order they are issued, and a send and its receive must agree on count and dtype: a receive larger or smaller
 * than its send fails on the receiver with STITCH_ERR_MISMATCH naming both ranks and both counts, and aborts the
 * communicator, so the sender's call (or its next one) fails with that message too. Outside a group, a receive
 * returns once its data is in recvbuf; a send returns once its receive has copied the data (threads) or once the
 * transport has taken it (processes, where it may be buffered); do not rely on either: two ranks that each send
 * to the other before receiving can deadlock until the timeout (as in NCCL), so put such exchanges in a group.
 * A rank may send to itself inside a group that also receives from itself. Errors, timeouts and aborts are those
 * of the collectives (stitch.h's top): a timeout names the peer and the operation that found no match.
 *
 * Groups (ncclGroupStart/ncclGroupEnd). Between stitch_group_start and stitch_group_end on a thread, stitch_send and
 * stitch_recv check their arguments and record the operation (returning STITCH_OK); stitch_group_end issues them
 * all as one operation that completes without deadlock whatever their order on either side (a rank progresses all
 * its operations together: a send never waits for a receive of its own group). A group holds operations on one
 * communicator (another: STITCH_ERR_UNSUPPORTED); groups do not nest (a second start, or an end without a start:
 * STITCH_ERR_INVALID_USAGE); a collective called inside a group is refused with STITCH_ERR_UNSUPPORTED and not
 * recorded. A group whose operations a peer does not match (it issued fewer, or other counts) fails on the rank
 * left waiting once the timeout passes without progress, naming the peer and the operation; its peers' next calls
 * fail with that message. The buffers of a grouped operation must stay valid until stitch_group_end returns. */
stitch_status_t stitch_send(const void *sendbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm);
stitch_status_t stitch_recv(void *recvbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm);
stitch_status_t stitch_group_start(void);
stitch_status_t stitch_group_end(void);

/* Non-blocking collectives (MPI_Iallreduce; torch's async_op=True). Each takes its blocking form's arguments and
 * `req`, and returns at once with *req, a request for the call; the call itself runs on the communicator's progress
 * thread (started by its first non-blocking call, stopped by stitch_comm_destroy), with no help from the caller.
 *
 * Order. A rank's calls on a communicator, blocking and non-blocking, run in the order it makes them, and every rank
 * must make the same sequence, as for blocking calls (a stitch_iall_reduce matches a peer's stitch_all_reduce;
 * stitch_ibarrier a peer's stitch_barrier). Requests of one communicator complete in call order: when one is
 * complete, so is every earlier one. Any number may be in flight.
 *
 * While a request is pending its buffers are the library's: do not read its recvbuf nor write its sendbuf until
 * stitch_wait has returned or stitch_test has said done (then the library no longer touches them, also when the
 * call failed). all_to_all_v's count and displacement arrays are copied when the call is made. Every other call on
 * the communicator (a blocking collective, stitch_barrier, stitch_send/recv, stitch_group_end, stitch_comm_split,
 * stitch_comm_dup, stitch_comm_set_algorithm, stitch_comm_destroy) is queued behind the pending requests: it first
 * waits until all of them are complete, then runs (so it fails with STITCH_ERR_ABORTED when one of them aborted the
 * communicator). stitch_comm_abort never waits, and the queries (stitch_comm_rank, _size, _groups, _algorithm,
 * _algorithm_for) may be called meanwhile. The one-thread-at-a-time rule holds for making calls, not for waiting:
 * requests may be tested and waited for from any thread.
 *
 * Errors. Making the call fails (*req = NULL, nothing queued) only for a NULL or destroyed comm or another thread
 * inside a call on it (as a blocking call), inside a group or on a device communicator (STITCH_ERR_UNSUPPORTED),
 * or a NULL req or no memory (which also abort the communicator, so the peers do not wait for the call); the
 * message is in stitch_comm_last_error(comm) in that thread. Everything else, argument errors included, is the
 * call's outcome: stitch_wait and stitch_test (once done) return the status the blocking call would have returned
 * and stitch_request_error gives its message (also stitch_comm_last_error(comm) in the thread that waited). A
 * failed call aborts the communicator as a blocking one does, so every pending request after it fails, with
 * STITCH_ERR_ABORTED and a message carrying the first failure's; after stitch_comm_abort (any rank, any thread) the
 * running call and every queued one fail with the abort's message. Timeouts are the blocking calls': a pending
 * request fails once its call makes no progress for the timeout. While requests are pending, the communicator's
 * own stitch_comm_last_error belongs to them: read each request's with stitch_request_error.
 *
 * Requests are the caller's: free each with stitch_request_free once complete. A request outlives its
 * communicator: stitch_comm_destroy waits until its pending requests are complete, and they must still be freed. A
 * NULL request is STITCH_ERR_INVALID_ARGUMENT; a freed one (a double free, a wait after free) is detected and is
 * STITCH_ERR_INVALID_USAGE (a request handle carries a generation, so a freed handle stays stale when its memory
 * serves a newer request); stitch_request_free of a pending request is STITCH_ERR_INVALID_USAGE and changes
 * nothing. stitch_request_error names these misuses too. */
typedef struct stitch_request stitch_request_t;

stitch_status_t stitch_iall_reduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                   stitch_op_t op, stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                       stitch_op_t op, stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_iall_gather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype,
                                   stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_ibroadcast(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype, int root,
                                  stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_ireduce(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                               stitch_op_t op, int root, stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_iscatter(const void *sendbuf, void *recvbuf, size_t recvcount, stitch_dtype_t dtype,
                                int root, stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_igather(const void *sendbuf, void *recvbuf, size_t sendcount, stitch_dtype_t dtype, int root,
                               stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_iall_to_all(const void *sendbuf, void *recvbuf, size_t count, stitch_dtype_t dtype,
                                   stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_iall_to_all_v(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                                     void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                                     stitch_dtype_t dtype, stitch_comm_t *comm, stitch_request_t **req);
stitch_status_t stitch_ibarrier(stitch_comm_t *comm, stitch_request_t **req);
/* Non-blocking point-to-point (MPI_Isend/MPI_Irecv; torch's isend/irecv): stitch_send's and stitch_recv's
 * arguments and matching (a pair's messages in issue order, count and dtype agreeing: a receive larger or smaller
 * than its send fails with STITCH_ERR_MISMATCH naming both ranks). Sends and receives queued next to each other on
 * a communicator run together, as a group whose operations keep arriving: any order of isends and irecvs between
 * two ranks completes without deadlock, and each request completes as soon as its own operation does (a send: once
 * its receive has the data, or the transport has taken it). They keep call order with the other calls: a
 * collective issued after them starts once they are done, so an isend that the peer matches only after that
 * collective fails at the timeout (as in NCCL). Their arguments are checked when the call is made (an error there
 * aborts the communicator, as for stitch_send); a send or receive with oneself is refused (use a group). */
stitch_status_t stitch_isend(const void *sendbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm,
                             stitch_request_t **req);
stitch_status_t stitch_irecv(void *recvbuf, size_t count, stitch_dtype_t dtype, int peer, stitch_comm_t *comm,
                             stitch_request_t **req);

/* Without waiting: *done = 1 and the call's status when the request is complete, else *done = 0 and STITCH_OK. */
stitch_status_t stitch_test(stitch_request_t *req, int *done);
/* Wait until the request is complete; the call's status (again on every later wait, until it is freed). */
stitch_status_t stitch_wait(stitch_request_t *req);
/* Wait for reqs[0..n): every one is waited for, whatever the others' outcome. STITCH_OK when every call
 * succeeded, else the status of the first failure in array order (a bad handle's error included). */
stitch_status_t stitch_wait_all(int n, stitch_request_t **reqs);
/* The failed call's message ("" while pending or when it succeeded), or why req is not a request (NULL, freed).
 * Valid until the request is freed. */
const char *stitch_request_error(const stitch_request_t *req);
stitch_status_t stitch_request_free(stitch_request_t *req);

/* Make every rank's current and future collectives on this communicator fail with STITCH_ERR_ABORTED; their
 * message says "stitch_comm_abort was called on rank R". Never blocks; safe from any thread. */
void stitch_comm_abort(stitch_comm_t *comm);

/* Memory [ptr, ptr + bytes) is about to be freed or remapped: drop the registrations the verbs transport cached
 * for it (its one-sided path registers the buffers of large messages once and keeps them; docs/onesided.md).
 * Call it before freeing a buffer that was passed to collectives over verbs and whose
 * address may be mapped again in full (a freed buffer that a smaller one replaces is noticed without it). Safe
 * from any thread, cheap when nothing is cached; a registration in use by a transfer in flight goes when it ends. */
void stitch_mr_invalidate(const void *ptr, size_t bytes);

const char *stitch_strerror(stitch_status_t status);
const char *stitch_comm_last_error(const stitch_comm_t *comm); /* "" when none */

const char *stitch_dtype_name(stitch_dtype_t dtype); /* "fp32", ...; NULL when out of range */
size_t stitch_dtype_size(stitch_dtype_t dtype);      /* 0 when out of range */
const char *stitch_op_name(stitch_op_t op);          /* "sum", ... */
const char *stitch_coll_name(stitch_coll_t coll);    /* "all_reduce", ... */
int stitch_dtype_from_name(const char *name);        /* -1 when unknown */
int stitch_op_from_name(const char *name);
int stitch_coll_from_name(const char *name);

/* Algorithms compiled into this library (the built-in catalogue) for a collective: writes up to `max` names,
 * returns how many exist. */
int stitch_algorithms(stitch_coll_t coll, const char **names, int max);

#ifdef __cplusplus
}
#endif

#endif
