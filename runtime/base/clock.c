/* clock.c - deadlines on CLOCK_MONOTONIC: the engines' waits and the sockets' timeouts count against them. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

void st_deadline_start(st_deadline *dl, int timeout_ms)
{
    dl->forever = timeout_ms < 0;
    clock_gettime(CLOCK_MONOTONIC, &dl->at);
    if (dl->forever)
        return;
    dl->at.tv_sec += timeout_ms / 1000;
    dl->at.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl->at.tv_nsec >= 1000000000L)
        dl->at.tv_sec++, dl->at.tv_nsec -= 1000000000L;
}

int st_deadline_passed(const st_deadline *dl)
{
    struct timespec now;
    if (dl->forever)
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > dl->at.tv_sec || (now.tv_sec == dl->at.tv_sec && now.tv_nsec >= dl->at.tv_nsec);
}

void st_deadline_in(struct timespec *at, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, at);
    at->tv_sec += ms / 1000;
    at->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at->tv_nsec >= 1000000000L)
        at->tv_sec++, at->tv_nsec -= 1000000000L;
}

int st_ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

long st_ms_left(const struct timespec *at)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (at->tv_sec - now.tv_sec) * 1000 + (at->tv_nsec - now.tv_nsec) / 1000000;
}

static long long st_crowded_until; /* CLOCK_MONOTONIC ns; read and written relaxed by any thread */

static long long st_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Tasks running or queued to run on the machine now (/proc/loadavg's fourth field, the reader included); -1. */
static int st_running_tasks(void)
{
    char buf[128];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC), running = -1;
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
        buf[n] = 0;
        if (sscanf(buf, "%*s %*s %*s %d/", &running) != 1)
            running = -1;
    }
    return running;
}

int st_yield(int ours)
{
    static __thread int streak; /* long yields in a row: one alone is a stray tick or a neighbour's burst */
    long long t0 = st_now_ns();
    sched_yield();
    long long t1 = st_now_ns();
    if (t1 - t0 <= ST_YIELD_LONG_NS) {
        streak = 0;
        return 0;
    }
    if (++streak < 2 || st_running_tasks() <= ours)
        return 0;
    __atomic_store_n(&st_crowded_until, t1 + ST_CROWDED_NS, __ATOMIC_RELAXED);
    return 1;
}

int st_crowded(void)
{
    long long until = __atomic_load_n(&st_crowded_until, __ATOMIC_RELAXED);
    return until != 0 && st_now_ns() < until;
}
