/* transport.h - byte streams between two ranks of a process-mode communicator: one small table per transport.
 *
 * Why streams. The message executor (exec_msg.c) sends a deterministic sequence of framed messages to each peer
 * and knows exactly which message comes next from each; all it needs from a transport is an ordered, reliable
 * byte stream per direction, pushed and drained without blocking. Receiving is "peek, use, consume": the
 * executor reduces straight out of the transport's own buffer (the shm ring, the tcp staging ring), so no
 * scratch copy sits between the wire and the reduction, and a large message is reduced piece by piece as it
 * arrives (transfer and reduction overlap).
 *
 * Rules every transport keeps, which the executor relies on:
 * - what peek shows is contiguous, and neither a 64-byte message header nor an element is ever split between
 *   two regions (it may show partly while it arrives): the executor's messages are a header, then units sent one
 *   by one, padded to 64 bytes; tcp's staging ring is 64-byte aligned with a power-of-two capacity, so it wraps
 *   only at 64-byte stream positions, where no element straddles; shm cuts a send into frames only at 64-byte
 *   multiples from the send's start, and a header starts a send, a unit an element (tp_shm.c);
 * - send and peek never block; 0 means "not now", -1 means the stream is broken and err says why;
 * - `wake` is what a blocked rank sleeps on: a pollable fd (tcp) or the shm doorbell (proc.c decides how);
 *   the fd is polled only for what would be progress, so a level-triggered poll never returns at once for an
 *   idle peer's writable socket or for bytes of a peer the executor does not read yet (proc.c pulls those into
 *   the rx ring after a wake-up, so they stop reporting).
 *
 * RDMA later. A verbs transport fits the same table: `send` posts RDMA writes with immediate into a ring the
 * peer registered at connect time (the shm frame layout, in registered memory), `peek` polls the CQ. The two
 * optional members reg/write are reserved for a one-sided large-message path (register the work buffer once,
 * write straight into the peer's); no transport implements them yet and callers must check for NULL.
 */
#ifndef ST_TRANSPORT_H
#define ST_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef struct st_tp st_tp;

typedef struct st_tp_ops {
    const char *name; /* "shm", "tcp" */
    /* Accept up to len bytes of the stream; returns how many (0: full now), or -1 with a message in err. */
    ssize_t (*send)(st_tp *t, const void *buf, size_t len, char *err, size_t errlen);
    /* Point *ptr at the next readable bytes; returns how many are contiguous (0: none now), -1 on error/EOF. */
    ssize_t (*peek)(st_tp *t, const void **ptr, char *err, size_t errlen);
    void (*consume)(st_tp *t, size_t n);
    /* What a blocked rank polls for: an fd and in *events what on it means progress (POLLIN while the rx buffer
     * has room, so bytes the kernel holds could move in; POLLOUT while the last send was cut short). A
     * transport that asks for nothing sets *events to 0. -1: no fd at all (shm). */
    int (*pollfd)(const st_tp *t, short *events);
    void (*close)(st_tp *t);
    /* reserved for one-sided transports (RDMA): register memory, write into a registered remote range */
    int (*reg)(st_tp *t, void *buf, size_t len, uint64_t *key);
    int (*write)(st_tp *t, const void *buf, size_t len, uint64_t rkey, size_t roff);
    /* Optional: send as of a gather list, the pieces in order as one stream (what send returns). tcp has it:
     * a message's header, payload spans and padding go in one system call instead of one each (NULL: shm,
     * whose sends are stores into a ring and cost no call). */
    ssize_t (*sendv)(st_tp *t, const struct iovec *iov, int iovcnt, char *err, size_t errlen);
} st_tp_ops;

struct st_tp {
    const st_tp_ops *ops;
    int peer; /* rank at the other end, for messages */
};

/* tcp: takes ownership of a connected socket (made non-blocking, TCP_NODELAY); rx ring of `ring` bytes
 * (a power of two, >= 4096). NULL when out of memory (fd is closed then). */
st_tp *st_tp_tcp_new(int fd, int peer, size_t ring);

/* shm: a single-producer single-consumer ring of frames in shared memory (tp_shm.c). */
typedef struct st_ring {
    _Alignas(64) uint64_t tail; /* ring bytes ever freed; only the consumer stores it (__atomic release) */
    _Alignas(64) char data[];
} st_ring;

/* The doorbell of one rank, slept on with FUTEX_WAIT (shared, not private: it lives in a segment mapped by
 * several processes). Whoever gives the rank something to do (data in, space freed, an abort) rings it, but a
 * ring costs only a load of `sleeping` unless the rank is about to sleep: a busy pair then never writes each
 * other's bell line. The protocol is a Dekker pair (bell.c says how it is fenced):
 *   sleeper: seen = st_bell_arm (sleeping++), look for progress again, st_bell_sleep(seen), st_bell_disarm;
 *   ringer:  publish (frame, tail, abort flag), st_bell_ring: load sleeping, and only if set bump word and
 *            FUTEX_WAKE.
 * Either the ringer sees sleeping set and bumps the word (the futex then does not sleep, or wakes), or the
 * sleeper's second look sees what the ringer published. */
typedef struct st_bell {
    _Alignas(64) uint32_t word;
    uint32_t sleeping;
    uint32_t fence; /* set by the owner when its membarrier fails: ringers must then fence (bell.c) */
} st_bell;

/* My own bell, before any peer can see it: sets up this process's fences (bell.c) and the bell's `fence`. */
void st_bell_init(st_bell *mine);
/* "membarrier" or "fence": how this process's rings are ordered (for the debug log). */
const char *st_bell_mode(void);
void st_bell_ring(st_bell *b);
uint32_t st_bell_arm(st_bell *b);
/* Sleep until the bell's word differs from `seen` or timeout_ms passes (EINTR and spurious wake-ups return). */
void st_bell_sleep(st_bell *b, uint32_t seen, int timeout_ms);
void st_bell_disarm(st_bell *b);

/* An shm endpoint: `out` is the ring I produce into (lives in the peer's segment), `in` the ring the peer
 * produces into (in mine); `peer_bell` is rung after producing or consuming, so the peer notices. */
st_tp *st_tp_shm_new(st_ring *out, st_ring *in, size_t cap, st_bell *peer_bell, int peer);

#endif
