/* comm.h - the communicator: one rank's handle on a job, its algorithm choice and its schedule cache.
 *
 * A communicator is used by one thread at a time (its rank's), so nothing in it is locked; what ranks share
 * lives in the job (job.h). That rule is checked, not assumed: every public function that runs on a communicator
 * takes `busy` first (st_comm_enter), so a second thread fails with STITCH_ERR_INVALID_USAGE instead of racing,
 * and a destroyed handle is kept, marked dead, so that using it again is detected (comm.c). Schedules are instantiated lazily, on the first collective that needs them, and kept
 * for the communicator's lifetime: a schedule depends only on (algorithm, p, root, groups), never on the
 * message; which algorithm a call runs may depend on its size (choose.h).
 */
#ifndef ST_COMM_H
#define ST_COMM_H

#include <stdarg.h>
#include <stdint.h>

#include "choose.h"
#include "job.h"
#include "st_sched.h"
#include "stitch.h"

/* A schedule instantiated for this communicator, with this rank's plan and its peers. */
typedef struct st_entry {
    int ready;
    int root;                 /* the root it was instantiated for (rooted collectives; 0 otherwise) */
    int needs_scratch;        /* this rank receives into blocks it keeps in scratch (call.c) */
    struct st_entry *next;    /* the same algorithm for other roots, most recently used first */
    st_sched sched;
    st_plan plan;
    int32_t *peers; /* distinct ranks this rank receives from or sends to, itself excluded */
    int npeers;
    unsigned char *fresh;     /* per unit, during a call: my unit still holds only the caller's input (call.h) */
    unsigned char *src_fresh; /* per unit of each transfer into me: the source's unit is still its input */
    int32_t *src_fresh_at;    /* per position in plan.recvs: where its units start in src_fresh */
    size_t *geo;              /* during a call: the current segment's unit geometry (st_call_geometry); it lives
                               * in fresh's allocation, freed with it */
} st_entry;

struct stitch_comm {
    _Atomic uint64_t magic;        /* ST_COMM_LIVE, ST_COMM_DEAD once destroyed (the handle is kept: comm.c) */
    _Atomic(const char *) busy;    /* the public function running on this communicator, or NULL */
    struct stitch_comm *dead_next; /* destroyed handles, for as long as the process lives (comm.c) */
    st_job *job;
    int rank, p;
    st_choice algo[STITCH_COLL_COUNT]; /* per collective: forced, or auto by size (choose.h) */
    size_t oneshot_vec;  /* auto: the small-message algorithm for vectors up to this many bytes (a rank sends
                          * STITCH_ONESHOT_BYTES at most: that over p - 1, once, not per call); 0 when p == 1 */
    st_entry *cache;     /* one entry per algorithm of the catalogue (rooted ones: a list per root) */
    uint64_t seq;        /* collectives called so far */
    uint32_t base;       /* my slot's `posted` between calls */
    char *scratch;       /* reduce_scatter's work buffer, kept between calls (first touch is slow) */
    size_t scratch_size;
    char *units;         /* the slots of scratch units (`units U scratch S`), kept between calls likewise */
    size_t units_size;
    int timeout_ms;
    size_t segment_bytes;
    char last_error[512];
    struct st_proc *proc; /* process mode (proc.h); NULL for thread communicators */
};

/* What both constructors (threads: comm.c, processes: proc.c) set alike: rank, size and the settings. */
void st_comm_settle(stitch_comm_t *comm, int rank, int p, const st_settings *s, const st_choice *algos);


#define ST_COMM_LIVE 0x6c69766573746368ull /* "hctsevil" */
#define ST_COMM_DEAD 0x6461656473746368ull

/* Take the communicator for `fn` (a public function's name) until st_comm_leave. STITCH_ERR_INVALID_ARGUMENT for
 * NULL; STITCH_ERR_INVALID_USAGE when it was destroyed or another thread is inside a call on it: the message
 * then goes to this thread's own record (stitch_comm_last_error from this thread), never into the communicator,
 * which the other thread may be writing. */
stitch_status_t st_comm_enter(stitch_comm_t *comm, const char *fn);
void st_comm_leave(stitch_comm_t *comm);
/* Not NULL and not destroyed: for the functions that only read a communicator. */
int st_comm_live(const stitch_comm_t *comm);

/* Record `fmt` as the last error and return status. */
stitch_status_t st_comm_error(stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, and abort the job with the message so that no peer waits for this rank in vain. */
stitch_status_t st_comm_fail(stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Abort the job with the last error as the reason ("rank r: ..."), over the control channels too in process mode,
 * and return status: how a rank tells its peers that its call failed. */
stitch_status_t st_comm_tell(stitch_comm_t *comm, stitch_status_t status);

/* The schedule of the algorithm this call runs (its collective's choice for its count and dtype) with this rank's
 * plan, instantiated on first use; rooted collectives are cached per (algorithm, root). */
struct st_args;
stitch_status_t st_comm_entry_for(stitch_comm_t *comm, const struct st_args *a, st_entry **out);

/* reduce_scatter's work buffer of at least `bytes`, 64-byte aligned. */
stitch_status_t st_comm_scratch(stitch_comm_t *comm, size_t bytes, const char *fn, char **out);
/* The slots of scratch units, at least `bytes`, 64-byte aligned; zeroed when (re)allocated, so the tail of a
 * slot that holds a shorter unit is never uninitialized memory. */
stitch_status_t st_comm_units(stitch_comm_t *comm, size_t bytes, const char *fn, char **out);

#endif
