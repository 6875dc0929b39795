/* base.h - the runtime's floor (runtime/base/): what every room may use and what uses no room. The log switch,
 * deadlines, the poll and io loop of non-blocking sockets, hashing; abort.h (the abort flag) and half.h (16-bit
 * floats) stand beside it. Nothing here includes a header of another room. */
#ifndef ST_BASE_H
#define ST_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- log.c ---- */

/* STITCH_DEBUG is set (and not "0"): read on every call, as it is needed before any settings exist. */
int st_debug(void);

/* ---- clock.c: deadlines on CLOCK_MONOTONIC ---- */

/* A deadline that may be "forever" (a negative timeout): the engines' waits. */
typedef struct st_deadline {
    int forever;
    struct timespec at; /* CLOCK_MONOTONIC */
} st_deadline;

void st_deadline_start(st_deadline *dl, int timeout_ms);
int st_deadline_passed(const st_deadline *dl); /* never for a deadline of "forever" */
/* *at = now + ms. */
void st_deadline_in(struct timespec *at, int ms);
/* Whether a is before b. */
int st_ts_before(const struct timespec *a, const struct timespec *b);
/* Milliseconds left until the CLOCK_MONOTONIC deadline `at` (negative once it passed). */
long st_ms_left(const struct timespec *at);
/* Yield the core (sched_yield); 1 when the machine is crowded: this yield and the thread's one before it took
 * longer than ST_YIELD_LONG_NS (time slices went to other work) and more tasks are runnable than `ours`, the
 * job's ranks on this host, could be (/proc/loadavg): a CPU hog, another job. A waiter that goes on yielding then
 * hands whole slices away and notices its peer milliseconds late. For ST_CROWDED_NS after, st_crowded says 1
 * (every thread of the process): the engines' waits neither spin nor yield but sleep on their doorbells, whose
 * wake-up the scheduler favours (docs/performance.md, "Waiting on a crowded machine"). Ranks that only share
 * cores with each other keep spinning: a long yield to a peer rank that was reducing is time well spent. */
#define ST_YIELD_LONG_NS 1000000L
#define ST_CROWDED_NS 100000000L
int st_yield(int ours);
int st_crowded(void);

/* ---- poll.c: non-blocking sockets against a deadline ---- */

/* Wait for `events` on fd until the deadline: 1 ready, 0 timed out, -1 error (errno). */
int st_poll1(int fd, short events, const struct timespec *at);
/* Read or write exactly len bytes before the deadline; 0, or -1 with a message. */
int st_io_all(int fd, void *buf, size_t len, int writing, const struct timespec *at, char *err, size_t errlen);

/* ---- siphash.c ---- */

/* SipHash-2-4 of msg under the 128-bit key. */
uint64_t st_siphash(const uint64_t key[2], const void *msg, size_t len);

#endif
