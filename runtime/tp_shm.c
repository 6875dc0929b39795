/* tp_shm.c - the shared-memory transport: a single-producer single-consumer byte ring per direction and pair.
 *
 * The ring a rank receives into lives in that rank's own segment (proc.c maps every local rank's segment into
 * every local rank, then unlinks them all, so a crash leaves nothing in /dev/shm). The producer copies straight
 * from its work buffer into the ring, the consumer reduces straight out of it: one copy each way and no scratch.
 *
 * Fences. head and tail are plain 64-bit counters, each stored by one side only: the producer writes the data,
 * then stores head with release; the consumer loads head with acquire before reading the data, and stores tail
 * with release after it is done with the bytes; the producer loads tail with acquire before overwriting them.
 * After each of its stores a side rings the other's doorbell, so a peer asleep on FUTEX_WAIT wakes up; a ring
 * is a fence and a load unless that peer has armed its bell to sleep (transport.h).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

typedef struct st_shm {
    st_tp base;
    st_ring *out, *in;
    size_t cap;
    st_bell *peer_bell;
} st_shm;

void st_bell_ring(st_bell *b)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* what we published, before we look at `sleeping` */
    if (__atomic_load_n(&b->sleeping, __ATOMIC_SEQ_CST)) {
        __atomic_add_fetch(&b->word, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &b->word, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
}

uint32_t st_bell_arm(st_bell *b)
{
    __atomic_add_fetch(&b->sleeping, 1, __ATOMIC_SEQ_CST); /* a full barrier: the next look comes after it */
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

static ssize_t st_shm_send(st_tp *t, const void *buf, size_t len, char *err, size_t errlen)
{
    st_shm *s = (st_shm *)t;
    uint64_t head = s->out->head, tail = __atomic_load_n(&s->out->tail, __ATOMIC_ACQUIRE);
    size_t room = s->cap - (size_t)(head - tail), done = 0;
    (void)err, (void)errlen;
    while (done < len && room > 0) {
        size_t at = (size_t)(head & (s->cap - 1)), n = s->cap - at;
        n = n < room ? n : room;
        n = n < len - done ? n : len - done;
        memcpy(s->out->data + at, (const char *)buf + done, n);
        head += n, done += n, room -= n;
    }
    if (done) {
        __atomic_store_n(&s->out->head, head, __ATOMIC_RELEASE);
        st_bell_ring(s->peer_bell);
    }
    return (ssize_t)done;
}

static ssize_t st_shm_peek(st_tp *t, const void **ptr, char *err, size_t errlen)
{
    st_shm *s = (st_shm *)t;
    uint64_t head = __atomic_load_n(&s->in->head, __ATOMIC_ACQUIRE), tail = s->in->tail;
    size_t used = (size_t)(head - tail), at = (size_t)(tail & (s->cap - 1)), contig = s->cap - at;
    (void)err, (void)errlen;
    *ptr = s->in->data + at;
    return (ssize_t)(used < contig ? used : contig);
}

static void st_shm_consume(st_tp *t, size_t n)
{
    st_shm *s = (st_shm *)t;
    __atomic_store_n(&s->in->tail, s->in->tail + n, __ATOMIC_RELEASE);
    st_bell_ring(s->peer_bell);
}

static int st_shm_pollfd(const st_tp *t, short *events)
{
    (void)t;
    *events = 0;
    return -1;
}

static void st_shm_close(st_tp *t)
{
    free(t); /* the rings belong to the segments, which proc.c unmaps */
}

static const st_tp_ops st_shm_ops = {"shm", st_shm_send, st_shm_peek, st_shm_consume, st_shm_pollfd, st_shm_close,
                                     NULL, NULL, NULL};

st_tp *st_tp_shm_new(st_ring *out, st_ring *in, size_t cap, st_bell *peer_bell, int peer)
{
    st_shm *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->base.ops = &st_shm_ops;
    s->base.peer = peer;
    s->out = out, s->in = in, s->cap = cap, s->peer_bell = peer_bell;
    return &s->base;
}
