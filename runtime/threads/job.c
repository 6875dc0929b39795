/* job.c - lifetime, abort and the post/wait protocol of the job shared by a group of thread-ranks (job.h).
 *
 * Waiting is tiered because the machine may run more ranks than cores (16 threads on 2 cores in the tests):
 * poll for a while (job->spin_ns, 500 us by default, the process engine's budget; a peer on another core usually
 * posts within microseconds), yielding the core after every poll when the job has more ranks than cores (the
 * peer we wait for is then often queued on ours), then sleep on the futex. Sleeps are bounded
 * (ST_SLEEP_SLICE_MS) so the deadline is honoured and an abort that races with falling asleep is still seen;
 * st_job_abort also wakes every slot explicitly, so aborts are normally noticed at once. (That race is the one
 * wake-up this protocol can lose: the abort's store and wake land between a sleeper's look at the abort state and
 * its FUTEX_WAIT, which then waits on an unchanged `posted`. A post cannot be lost; see below.) The timeout is
 * per wait and counts from the first sleep (job.h).
 *
 * The poll phase is timed, not counted, and it yields the core when the peer shares it, even when the job fits
 * the cores. Ranks that are threads are not bound to cores, and after a futex wake-up the kernel tends to queue
 * the woken thread on the waker's core (wake-affine): the two ranks then share one core while the other runs
 * other work. A waiter that only paused would hold the core its peer needs for its whole budget, sleep, be woken
 * onto the same core, and so on: 1-4 ms per 8-byte all_reduce at p = 2 on a loaded 2-core VM (perf stat: 0.33
 * CPUs used, 5 migrations in 23 s). But a waiter that yields while its peer runs elsewhere gives its core to
 * other processes for a slice: yielding every 16 polls cost 24-35 us a call with the ranks bound to their own
 * cores on that loaded VM, where processes that only pause took 0.8 us (and a yield every 256 polls still
 * looked worse than none: 1.1-9.5 us against 1.2-6.5, 8 interleaved runs). So each slot says which CPU its
 * rank last posted from (sched_getcpu, a few ns), and a waiter yields after every poll while that is its own
 * CPU, else only pauses. A peer woken onto my core that has not posted since is not seen: that costs one
 * budget, after which I sleep, it runs and posts from my CPU, and from then on we yield to each other. The old
 * phases (400 pauses, 34 us on this VM's EPYC, then 16 yields, then the futex) ended most small calls in a
 * yield or a sleep: 2-28 us on a quiet VM, 130-160 us on a loaded one.
 *
 * Memory order: the owner's seq_cst store of `posted` followed by its load of `sleepers`, against the waiter's
 * increment of `sleepers` followed by its load of `posted`, guarantees that either the waiter sees the new value
 * or the owner sees the sleeper and wakes it (and FUTEX_WAIT re-checks the value in the kernel). Borrows work
 * the same way: a reader's increment of `readers` then its load of the abort state, against the abort's store
 * then the failing owner's loads of `readers` (all seq_cst): either the reader sees the abort and backs off
 * without reading, or the owner sees the borrow and waits for its end.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "job.h"

#define ST_SPINS 400
#define ST_YIELDS 16
#define ST_CLOCK_EVERY 64
#define ST_WHERE_EVERY 16
#define ST_SLEEP_SLICE_MS 50

void (*st_job_preempt)(void);
st_job_waiting st_job_wait = {ST_SPINS, ST_YIELDS, ST_SLEEP_SLICE_MS};

st_job *st_job_new(int p)
{
    st_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    job->slots = aligned_alloc(64, sizeof(st_slot) * (size_t)p);
    if (!job->slots) {
        free(job);
        return NULL;
    }
    memset(job->slots, 0, sizeof(st_slot) * (size_t)p);
    for (int i = 0; i < p; i++)
        atomic_init(&job->slots[i].cpu, -1);
    job->p = p;
    atomic_init(&job->refs, p);
    st_job_set_spin(job, -1);
    return job;
}

void st_job_free(st_job *job)
{
    st_groups_free(&job->groups);
    st_job_part *p2p = atomic_load(&job->p2p);
    if (p2p)
        p2p->free(p2p);
    free(job->slots);
    free(job);
}

void st_job_unref(st_job *job)
{
    if (atomic_fetch_sub(&job->refs, 1) == 1)
        st_job_free(job);
}

static long st_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

void st_job_abort(st_job *job, const char *reason)
{
    st_abort_set(&job->abort, reason);
    for (int i = 0; i < job->p; i++)
        st_futex(&job->slots[i].posted, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

int st_job_aborted(const st_job *job)
{
    return st_abort_is(&job->abort);
}

const char *st_job_reason(const st_job *job)
{
    return st_abort_reason(&job->abort);
}

void st_post(st_slot *slot, uint32_t value)
{
    ST_PREEMPT();
    int cpu = sched_getcpu(); /* a few ns (rseq) */
    if (atomic_load_explicit(&slot->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&slot->cpu, cpu, memory_order_relaxed);
    atomic_store(&slot->posted, value);
    ST_PREEMPT();
    if (atomic_load(&slot->sleepers) != 0)
        st_futex(&slot->posted, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

int st_slot_borrow(st_job *job, st_slot *slot)
{
    atomic_fetch_add(&slot->readers, 1); /* seq_cst against st_job_abort's store, then the owner's drain */
    ST_PREEMPT();
    if (!atomic_load(&job->abort.state))
        return 0;
    atomic_fetch_sub(&slot->readers, 1);
    return -1;
}

void st_slot_return(st_slot *slot)
{
    ST_PREEMPT();
    atomic_fetch_sub_explicit(&slot->readers, 1, memory_order_release);
}

/* A borrower that saw no abort finishes one transfer (a memory copy or reduction) and returns: spin, then yield,
 * then sleep in short naps while the machine is oversubscribed. */
void st_slot_drain(st_slot *slot)
{
    for (long i = 0; atomic_load(&slot->readers) != 0; i++) {
        if (i < ST_SPINS)
            __builtin_ia32_pause();
        else if (i < ST_SPINS + ST_YIELDS)
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 50000}, NULL);
    }
}

/* Where rank q stands, for a message. */
static void st_describe(st_job *job, int q, char *buf, size_t len)
{
    st_slot *s = &job->slots[q];
    uint64_t calls = atomic_load_explicit(&s->calls, memory_order_relaxed);
    uint32_t base = atomic_load_explicit(&s->call_base, memory_order_relaxed);
    uint32_t steps = atomic_load_explicit(&s->call_steps, memory_order_relaxed);
    int32_t rel = (int32_t)(atomic_load_explicit(&s->posted, memory_order_relaxed) - base);
    uint32_t done = rel > 1 ? (uint32_t)rel - 1 : 0; /* steps completed: posted is base + 1 + done */
    if (calls == 0)
        snprintf(buf, len, "rank %d, which has entered no call yet", q);
    else if (rel > 0 && done >= steps) /* finished its last call: it has not entered the next */
        snprintf(buf, len, "rank %d, which has not entered call number %llu", q, (unsigned long long)calls);
    else
        snprintf(buf, len, "rank %d, at step %u of %u of call number %llu", q, done, steps,
                 (unsigned long long)(calls - 1));
}

void st_job_behind(st_job *job, int me, char *buf, size_t len)
{
    uint32_t mine = atomic_load(&job->slots[me].posted);
    int32_t least = INT32_MAX;
    int first = -1, more = 0;
    for (int q = 0; q < job->p; q++) {
        int32_t d = (int32_t)(atomic_load(&job->slots[q].posted) - mine);
        if (q == me || d > least)
            continue;
        more = d == least ? more + 1 : 0;
        if (d < least)
            least = d, first = q;
    }
    if (first < 0) {
        snprintf(buf, len, "no other rank");
        return;
    }
    st_describe(job, first, buf, len);
    size_t n = strlen(buf);
    if (more && n < len)
        snprintf(buf + n, len - n, " (and %d more as far behind)", more);
}

/* Time left before the deadline, capped at one sleep slice; 0 when it has passed. */
static int st_slice(const st_deadline *dl, struct timespec *ts)
{
    long long left_ns = (long long)st_job_wait.slice_ms * 1000000LL;
    if (!dl->forever) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long d = (long long)(dl->at.tv_sec - now.tv_sec) * 1000000000LL + (dl->at.tv_nsec - now.tv_nsec);
        if (d <= 0)
            return 0;
        if (d < left_ns)
            left_ns = d;
    }
    ts->tv_sec = (time_t)(left_ns / 1000000000LL);
    ts->tv_nsec = (long)(left_ns % 1000000000LL);
    return 1;
}

static int st_ready(st_job *job, st_slot *slot, uint32_t target, stitch_status_t *st)
{
    if (st_reached(atomic_load_explicit(&slot->posted, memory_order_acquire), target))
        return *st = STITCH_OK, 1;
    if (atomic_load_explicit(&job->abort.state, memory_order_relaxed))
        return *st = STITCH_ERR_ABORTED, 1;
    return 0;
}

/* The clock starts here: a wait that ends while spinning or yielding never reads it. */
static stitch_status_t st_sleep(st_job *job, st_slot *slot, uint32_t target, int timeout_ms, int *sys_errno)
{
    stitch_status_t st;
    struct timespec ts;
    st_deadline dl;
    st_deadline_start(&dl, timeout_ms);
    while (!st_ready(job, slot, target, &st)) {
        if (!st_slice(&dl, &ts))
            return STITCH_ERR_TIMEOUT;
        atomic_fetch_add(&slot->sleepers, 1);
        ST_PREEMPT();
        uint32_t seen = atomic_load(&slot->posted);
        long rc = 0;
        ST_PREEMPT();
        if (!st_reached(seen, target) && !atomic_load(&job->abort.state))
            rc = st_futex(&slot->posted, FUTEX_WAIT_PRIVATE, seen, &ts);
        int e = errno;
        atomic_fetch_sub(&slot->sleepers, 1);
        if (rc != 0 && e != EAGAIN && e != EINTR && e != ETIMEDOUT) {
            *sys_errno = e;
            return STITCH_ERR_SYSTEM;
        }
    }
    return st;
}

static long st_ns_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - t0->tv_sec) * 1000000000L + (now.tv_nsec - t0->tv_nsec);
}

void st_job_set_spin(st_job *job, long spin_us)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    job->oversubscribed = cores > 0 && job->p > cores;
    job->spin_ns = 1000 * (spin_us >= 0 ? spin_us : job->oversubscribed ? 1000 : 500);
}

/* Poll until the budget is spent (the clock read every ST_CLOCK_EVERY polls only, the first read starting the
 * budget), then sleep: polling is only ever the first phase of a wait. A test that sets st_job_wait's spins and
 * yields to 0 sends every wait that is not over at once to sleep. */
stitch_status_t st_wait(st_job *job, st_slot *slot, uint32_t target, int timeout_ms, int *sys_errno)
{
    stitch_status_t st;
    struct timespec t0;
    int beside = 0; /* the peer last posted from my CPU: it cannot run while I poll here */
    ST_PREEMPT();
    long budget = st_job_wait.spins || st_job_wait.yields ? job->spin_ns : 0;
    for (long i = 1; budget > 0 || i == 1; i++) {
        if (st_ready(job, slot, target, &st))
            return st;
        if (i % ST_WHERE_EVERY == 1) { /* -1 (not known yet, or no getcpu) is never beside */
            int cpu = sched_getcpu();
            beside = cpu >= 0 && atomic_load_explicit(&slot->cpu, memory_order_relaxed) == cpu;
        }
        if (job->oversubscribed || beside)
            sched_yield();
        else
            __builtin_ia32_pause();
        if (i % ST_CLOCK_EVERY != 0)
            continue;
        if (i == ST_CLOCK_EVERY)
            clock_gettime(CLOCK_MONOTONIC, &t0);
        if (budget <= 0 || (i > ST_CLOCK_EVERY && st_ns_since(&t0) >= budget))
            break;
    }
    return st_sleep(job, slot, target, timeout_ms, sys_errno);
}
