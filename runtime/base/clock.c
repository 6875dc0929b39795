/* clock.c - deadlines on CLOCK_MONOTONIC: the engines' waits and the sockets' timeouts count against them. */
#include <time.h>

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
