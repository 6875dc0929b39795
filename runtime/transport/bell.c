/* bell.c - the doorbell a rank sleeps on in process mode (transport.h has the protocol), and its fences.
 *
 * The Dekker pair needs a full fence on both sides between the store and the load: the ringer's "publish, load
 * sleeping" and the sleeper's "sleeping++, look again". But the two sides are not alike: a ring comes after every
 * send (millions a second, each on the critical path of a small message), an arm only when a rank has spun for
 * hundreds of microseconds and is about to sleep. On the 2-core VM the ringer's fence, which waits for the frame's
 * stores to leave the store buffer, was most of st_shm_send: an 8-byte all_reduce at np 2 took 0.66-0.85 us with
 * it and 0.48-0.56 us without (stitch-perf, 20000 calls, 6 runs each).
 *
 * So the fence is asymmetric, as in userspace RCU: a process that registered for
 * MEMBARRIER_CMD_GLOBAL_EXPEDITED rings with a compiler barrier only, and every sleeper, after sleeping++, calls
 * membarrier(GLOBAL_EXPEDITED), which runs a full barrier on every CPU that runs a registered process at that
 * moment. That barrier stands in for the ringer's fence: either the ringer's load of `sleeping` comes after it
 * (and sees the sleeper), or the ringer's publish came before it (and the sleeper's second look sees it). The
 * membarrier costs ~1.6 us here, once per sleep. Any mix is safe: a process that could not register (an old
 * kernel, a seccomp filter) keeps the fence on all its rings, and a rank whose own membarrier fails sets its
 * bell's `fence` word (before any peer looks at the bell), which makes every ringer fence for it; the word shares
 * the cache line of `sleeping`, so reading it costs nothing more.
 *
 * A forked child clears the registration flag (pthread_atfork) and fences until it sets up its own bell and
 * registers: conservative, as the kernel may well keep the parent's registration across fork. A membarrier that
 * fails in a sleep (it should not once the query said yes) turns this rank's bell to `fence` for later sleeps;
 * the sleep in progress may then miss a ring, which costs at most its slice (20 ms), never a hang.
 */
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

static pthread_mutex_t st_bell_lock = PTHREAD_MUTEX_INITIALIZER;
static int st_bell_ready;      /* this process's fences are set up */
static int st_bell_registered; /* registered for GLOBAL_EXPEDITED: my rings need no fence of their own */
static int st_bell_expedited;  /* my own membarrier(GLOBAL_EXPEDITED) works: my sleeps fence the ringers */
static int st_bell_atfork_installed;

static void st_bell_forked(void)
{
    pthread_mutex_init(&st_bell_lock, NULL); /* another thread may have held it at the fork */
    st_bell_ready = 0;
    __atomic_store_n(&st_bell_registered, 0, __ATOMIC_RELAXED);
}

void st_bell_init(st_bell *mine)
{
    pthread_mutex_lock(&st_bell_lock);
    if (!st_bell_ready) {
        long have = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        int reg = have > 0 && (have & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                  syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
        st_bell_expedited = have > 0 && (have & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                            syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0;
        __atomic_store_n(&st_bell_registered, reg, __ATOMIC_RELAXED);
        if (!st_bell_atfork_installed)
            st_bell_atfork_installed = pthread_atfork(NULL, NULL, st_bell_forked) == 0;
        st_bell_ready = 1;
    }
    mine->fence = !st_bell_expedited;
    pthread_mutex_unlock(&st_bell_lock);
}

const char *st_bell_mode(void)
{
    return __atomic_load_n(&st_bell_registered, __ATOMIC_RELAXED) ? "membarrier" : "fence";
}

void st_bell_ring(st_bell *b)
{
    if (__atomic_load_n(&st_bell_registered, __ATOMIC_RELAXED) && !__atomic_load_n(&b->fence, __ATOMIC_RELAXED))
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the sleeper's membarrier is our fence */
    else
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* what we published, before we look at `sleeping` */
    if (__atomic_load_n(&b->sleeping, __ATOMIC_RELAXED)) {
        __atomic_add_fetch(&b->word, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &b->word, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
}

uint32_t st_bell_arm(st_bell *b)
{
    __atomic_add_fetch(&b->sleeping, 1, __ATOMIC_SEQ_CST); /* a full barrier for the fencing ringers */
    /* and one for the ringers that do not fence (else my bell's `fence` makes them) */
    if (st_bell_expedited && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0) {
        st_bell_expedited = 0;
        __atomic_store_n(&b->fence, 1, __ATOMIC_SEQ_CST);
    }
    return __atomic_load_n(&b->word, __ATOMIC_SEQ_CST);
}

void st_bell_sleep(st_bell *b, uint32_t seen, int timeout_ms)
{
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    if (__atomic_load_n(&b->word, __ATOMIC_SEQ_CST) == seen)
        syscall(SYS_futex, &b->word, FUTEX_WAIT, seen, &ts, NULL, 0); /* EAGAIN/EINTR/ETIMEDOUT: just return */
}

void st_bell_disarm(st_bell *b)
{
    __atomic_sub_fetch(&b->sleeping, 1, __ATOMIC_SEQ_CST);
}
