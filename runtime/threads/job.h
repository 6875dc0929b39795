/* job.h - the object shared by the p thread-ranks of a communicator group: one slot per rank, an abort flag.
 *
 * A slot is what a rank publishes to its peers for the current collective: a pointer to its work buffer (peers
 * read it directly: zero-copy pull), the call's fingerprint (checked by peers before they touch the buffer), and
 * `posted`, a 32-bit counter that only the owner increases. "posted >= v" (compared modulo 2^32) is the whole
 * protocol: the owner stores with release after writing, readers load with acquire before reading; a waiter that
 * has spun long enough sleeps on the counter word with FUTEX_WAIT, and the owner wakes sleepers only when the
 * slot's `sleepers` count says some exist. Slots are cache-line aligned so ranks do not false-share.
 *
 * A peer reads an owner's buffers only while it holds a borrow on the owner's slot (`readers`); a borrow fails
 * once the job is aborted, and an owner whose call fails waits for the borrows to end before it returns
 * (st_slot_drain), so a caller may free its buffers as soon as any call returns. A slot also says how far its
 * rank has got (the call it entered last, that call's base and steps, and `posted`), so that a rank that times
 * out can name the rank that is really behind rather than the neighbour it happened to wait for.
 */
#ifndef ST_JOB_H
#define ST_JOB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "abort.h"
#include "base.h"
#include "call.h"
#include "groups.h"
#include "st_sched.h"
#include "st_steptab.h"
#include "stitch.h"

/* The call whose fingerprint a slot's fp[i] holds, as its owner remembers it: its number, its base and the peers
 * of its plan (its entry's list, which lives as long as the communicator). Until each of those peers has posted
 * base + 2 (it passes its check of the call before it posts after step 0) the fingerprint must stay. */
typedef struct st_fp_kept {
    uint64_t seq;
    uint32_t base;
    int npeers;
    const int32_t *peers;
} st_fp_kept;

/* A tiny call's input, copied into its rank's slot (exec.c's st_tiny): at most this many bytes. Up to 2 KiB the tiny
 * path (no borrow, no wait for readers, one post a call, the moves replayed) beat the general one at p = 2 by 2x
 * (docs/performance.md, "Tiny thread calls replayed": 1 KiB ~1.0 -> 0.55 us), at 4 KiB it is even; mesh_oneshot,
 * auto's pick for small calls, reads every peer's input whole either way. */
#define ST_TINY_BYTES 4096

/* A tiny call's hand-over (exec.c): its first cache line holds the call number, the fingerprint's small fields and
 * the first 40 bytes of the input, so a peer that finds `seq` and the call's key as it expects them has my
 * fingerprint's check (and an 8-byte call's data) in one line fetched; longer inputs go on in the lines after. */
typedef struct st_tiny_line {
    _Alignas(64) _Atomic uint64_t seq; /* the call number + 1, stored last (release); 0: none yet */
    uint64_t key;                      /* the fingerprint's small fields packed (exec.c's st_tiny_key) */
    const st_algo *algo;               /* and its algorithm */
    unsigned char head[ST_TINY_BYTES]; /* the input */
} st_tiny_line;
_Static_assert(sizeof(st_tiny_line) == 4096 + 64, "a tiny call's hand-over: the check in the first line");

typedef struct st_slot {
    _Alignas(64) _Atomic uint32_t posted;
    _Atomic uint32_t sleepers;
    _Atomic int32_t cpu;   /* the CPU this rank ran on when it last posted, -1 unknown: a waiter on the same CPU
                            * yields instead of pausing (job.c); written only when it changes */
    st_where where;        /* where my blocks are (call.h); valid once posted reaches the call's base + 1, until
                            * the call ends */
    st_fingerprint fp[2];  /* by the parity of the call number: a peer may be one call ahead of a rank that is
                            * still checking its fingerprint (it finished the call without waiting for that rank);
                            * further ahead it waits (st_fp_kept) */
    _Atomic uint64_t calls;             /* progress: calls this rank has entered (the last is number calls - 1) */
    _Atomic uint32_t call_base, call_steps; /* that call's first value of `posted` and its number of steps */
    _Alignas(64) _Atomic uint32_t readers; /* peers reading this rank's buffers now (st_slot_borrow) */
    _Alignas(64) st_fp_kept kept[2];       /* the owner's own: who may still check fp[i] (exec.c) */
    st_tiny_line tiny[2];                  /* a tiny call's input, by call parity like fp (exec.c) */
} st_slot;

/* A part of the job that another file makes on first use and the job frees with it, by the part's own free (so
 * the job knows nothing of what it holds): the point-to-point mailboxes. */
typedef struct st_job_part {
    void (*free)(struct st_job_part *self);
} st_job_part;

typedef struct st_job {
    int p;
    _Atomic int refs;        /* communicators not yet destroyed */
    st_abort abort;          /* the communicators' abort (abort.h): every rank's comm->abort points here */
    st_slot *slots;
    st_groups groups;        /* STITCH_TOPO or STITCH_GROUPS (or the config fields); none: one group of all ranks */
    long spin_ns;            /* how long a wait polls before it sleeps (st_job_set_spin) */
    int oversubscribed;      /* more ranks than cores: a polling wait yields the core after every poll */
    _Atomic(st_job_part *) p2p; /* point-to-point mailboxes, made on first use (p2p_threads.c) */
} st_job;

st_job *st_job_new(int p);
void st_job_unref(st_job *job); /* frees on the last reference */
void st_job_free(st_job *job);  /* at once: a job no communicator was made for */
/* How waits poll before they sleep: spin_us microseconds (STITCH_SPIN_US), or when negative the process
 * engine's default, 500 us, 1000 us when the job has more ranks than the machine has cores. */
void st_job_set_spin(st_job *job, long spin_us);

/* Abort the job: every wait returns STITCH_ERR_ABORTED promptly. Only the first reason is kept. Never blocks. */
void st_job_abort(st_job *job, const char *reason);
int st_job_aborted(const st_job *job);
const char *st_job_reason(const st_job *job); /* "" while the reason is not written */

/* posted >= target, modulo 2^32 (targets are never more than 2^31 ahead). */
static inline int st_reached(uint32_t posted, uint32_t target)
{
    return (int32_t)(posted - target) >= 0;
}

void st_post(st_slot *slot, uint32_t value);

/* Before reading a peer's buffers: 0 and the borrow is held until st_slot_return, or -1 (nothing held) when the
 * job is aborted, since the owner may then be returning. */
int st_slot_borrow(st_job *job, st_slot *slot);
void st_slot_return(st_slot *slot);
/* The owner, after its call failed and the job is aborted: wait until no peer holds a borrow on its slot. Each
 * borrow covers one transfer, so this is short. */
void st_slot_drain(st_slot *slot);

/* Describe the ranks furthest behind rank `me` (all ranks compared by `posted`, which every rank counts alike):
 * "rank 3, which has not entered call number 5", with their call and step. */
void st_job_behind(st_job *job, int me, char *buf, size_t len);

/* Tests only (tests/runtime/test_threads_stress.c): when set, called at every point of the post/wait/borrow
 * protocol where a rank being preempted could expose a race (the test's hook yields or naps at random); NULL in a
 * program, which then pays one predictable branch per point. Set before any communicator exists. */
extern void (*st_job_preempt)(void);
#define ST_PREEMPT()                                                                                           \
    do {                                                                                                       \
        if (__builtin_expect(st_job_preempt != NULL, 0))                                                       \
            st_job_preempt();                                                                                  \
    } while (0)

/* How a wait spends its time (job.c): it polls for the job's spin budget (STITCH_SPIN_US), then futex-sleeps in
 * slices of at most `slice_ms`; a borrow drain pauses `spins` times, then yields `yields` times, then naps. Tests
 * only may change it, before any communicator exists: no spins and no yields send every wait that is not over at
 * once to sleep, and a long slice turns a lost wake-up (which the slice would hide as a 50 ms delay) into a
 * timeout. */
typedef struct st_job_waiting {
    int spins, yields, slice_ms;
} st_job_waiting;
extern st_job_waiting st_job_wait;

/* Wait until slot->posted reaches target. STITCH_OK, STITCH_ERR_ABORTED, STITCH_ERR_TIMEOUT once this wait has
 * lasted timeout_ms (< 0: never), or STITCH_ERR_SYSTEM with the errno in *sys_errno. The timeout is per wait, not
 * per call: a call of thousands of steps on a machine 10x oversubscribed may take far longer than the timeout while
 * every peer keeps posting, and only a peer that stops for the whole timeout is a failure. */
stitch_status_t st_wait(st_job *job, st_slot *slot, uint32_t target, int timeout_ms, int *sys_errno);

#endif
