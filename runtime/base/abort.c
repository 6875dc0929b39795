/* abort.c - the abort object (abort.h). */
#include <sched.h>
#include <string.h>

#include "abort.h"

int st_abort_set(st_abort *a, const char *reason)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&a->state, &expected, 1))
        return 0;
    strncpy(a->reason, reason ? reason : "", sizeof a->reason - 1);
    a->reason[sizeof a->reason - 1] = '\0';
    atomic_store(&a->state, 2);
    return 1;
}

const char *st_abort_reason(const st_abort *a)
{
    int state;
    while ((state = atomic_load_explicit(&((st_abort *)a)->state, memory_order_acquire)) == 1)
        sched_yield();
    return state == 2 ? a->reason : "";
}
