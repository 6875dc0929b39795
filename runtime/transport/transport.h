/* transport.h - how two ranks of a process-mode communicator move data: a table of transports, each of which says
 * whether it can connect a pair and connects it, and the byte stream every connection is.
 *
 * Transports as plug-ins. st_transports (transport.c) lists them in preference order: shm (ranks of one host),
 * then verbs (tp_verbs.c: both ranks have a usable RDMA device; in builds with <infiniband/verbs.h>), then tcp (any
 * pair: the bootstrap has already reached every peer over the network). st_tp_select picks, for
 * one pair, the first entry that can connect it, or the entry STITCH_TRANSPORT names, and fails naming the pair
 * when that one cannot (STITCH_TRANSPORT=shm across hosts). It is the only place the choice is made: the
 * bootstrap asks it which pairs need a tcp data socket (st_tp_need_data) and st_links_open asks it which
 * transport connects each peer, and both ends of a pair get the same answer because can_connect looks only at
 * the table every rank holds (st_peer_info). Per communicator, every rank runs every entry's setup in table order
 * (collective steps are allowed: shm's barriers run over all ranks), then connect per peer it chose, and at the
 * end teardown (st_links_close). STITCH_DEBUG's summary counts peers per entry.
 *
 * How a transport joins (verbs, a device): its own file (listed in CMakeLists.txt) defines `const st_transport
 * st_transport_verbs`, and transport.c's table gets one entry, `&st_transport_verbs`, where it ranks (before tcp),
 * with its extern declaration above the table; STITCH_TRANSPORT accepts its name from then on. Its can_connect
 * needs something about the peer in the table (its device's subnet, say): a field of st_peer_info, published in
 * the bootstrap's first phase (bootstrap.c), the one change to shared code besides the entry. What it exchanges
 * per pair (queue pair numbers, the rkey of the ring it receives into) goes over the control channels in its
 * setup, as shm's descriptors go over Unix sockets in its own.
 *
 * Threads are not an entry. A thread-mode communicator's ranks share one address space and the threads executor
 * (exec.c) reads a peer's buffer directly, with no stream, no framing and no waiting on an fd or a doorbell of
 * another process; it is a separate backend of the communicator, not a way to move a process-mode stream.
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
 * - how a blocked rank wakes is the entry's `wake`: a pollable fd (tcp), or the doorbell in its shm segment,
 *   which its peers ring (proc.c decides how to sleep from the mix); the fd is polled only for what would be
 *   progress, so a level-triggered poll never returns at once for an idle peer's writable socket or for bytes of
 *   a peer the executor does not read yet (proc.c pulls those into the rx ring after a wake-up, so they stop
 *   reporting).
 *
 * RDMA (the paragraph below is the plan as it was; the one-sided table above is what came of it). The verbs transport (tp_verbs.c) fits this table as it
 * is, as planned here (its credits travel as immediates, not as a tail written back: tp_verbs.c says why): its setup
 * registers, per peer, a receive ring in the shm frame layout (tp_shm.c) and swaps ring addresses and rkeys over
 * the control channels; `send` posts an RDMA write with immediate of a frame into the peer's ring, `peek` polls
 * the receive CQ for the immediate (one RDMA write does not say which of its bytes land last, so the frame tag
 * alone cannot publish it as a store does in shm), `consume` returns credit by writing the ring's tail back,
 * `pollfd` is the completion channel's fd (wake ST_WAKE_FD). Registration happens once, in setup, inside the
 * transport. The one-sided path that skips the ring (register the user's work buffer, write straight into the
 * peer's) needs the executor to learn the peer's buffer address and key per call, which is a change of the call
 * model, not of this table. When it comes it will be a second, optional table
 * reached from the entry (`const st_tp_rma_ops *rma`: reg(links, buf, len) -> key, dereg, write(t, local range,
 * remote key and offset, immediate), completion), looked at once per communicator, so the stream path pays nothing
 * for it. The stream table had two members reserved for it (reg, write) that no transport implemented and every
 * caller would have had to test for NULL; they are gone.
 */
#ifndef ST_TRANSPORT_H
#define ST_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "bootstrap.h"

typedef struct st_tp st_tp;

/* ---- the one-sided table (tp_verbs.c's; docs/onesided.md) ----------------------------------------------------
 * A rendezvous per large message, in schedule order on each pair. The receiver advertises where the message may
 * land (`advert`: the destination itself when the step allows, else a scratch area; or nowhere: "send it on the
 * stream"), the key travelling with the address; the sender sends the message's header on the stream as always,
 * takes the next advert (`next`), checks that it is for the same call, step and bytes, and writes the payload
 * from its own buffer into the advertised place (`put`: RDMA WRITE, the last with an immediate), or, when it
 * cannot (its buffer would not register, or the advert said so), tells the receiver with a cancel and sends the
 * payload on the stream. The receiver, at the message in schedule order, reads the header from the stream and
 * waits for `landed`. Registrations of the buffers on both sides come from the transport's cache (mr_cache.h).
 * Return values: 1 done, 0 not now (try again after progress), -1 broken (err says why); landed and put as
 * documented below. */
typedef struct st_tp_adv {
    uint64_t seq;   /* the call */
    uint32_t g;     /* the global step */
    uint32_t pad;
    uint64_t bytes; /* the payload */
} st_tp_adv;

typedef struct st_tp_rma_ops {
    /* Payload bytes from which a message on this pair goes one-sided; 0: never. The same at both ends. */
    size_t (*threshold)(const st_tp *t);
    /* Receiver: advertise the next one-sided message from the peer, to land at `at` (a.bytes there, the key
     * from the cache), or, at NULL, to come on the stream. 1 posted; 2 `at` would not register (nothing
     * posted: advertise another place or NULL); 0 not now; -1. */
    int (*advert)(st_tp *t, const st_tp_adv *a, void *at, char *err, size_t errlen);
    /* Receiver: the oldest advert's outcome: 1 the payload landed, 2 it comes on the stream; 0 not yet, with
     * *got the bytes from its start that have landed so far (a put lands in chunks, in order); -1. */
    int (*landed)(st_tp *t, size_t *got, char *err, size_t errlen);
    /* Sender: the next advert from the peer into *a; 1, 0 none yet, -1. */
    int (*next)(st_tp *t, st_tp_adv *a, char *err, size_t errlen);
    /* Sender: write the n pieces (the payload in order) to the place the last `next` gave: 1 posted (then wait
     * for put_done), 2 cancelled (the payload goes on the stream), 0 not now, -1. */
    int (*put)(st_tp *t, const struct iovec *iov, int n, char *err, size_t errlen);
    /* Sender: 1 when every put to the peer has completed (its buffers are mine again), 0 not yet, -1. */
    int (*put_done)(st_tp *t, char *err, size_t errlen);
    /* Memory [p, p + len) is about to be freed: drop its cached registrations. */
    void (*forget)(st_tp *t, const void *p, size_t len);
    /* The call failed (any cause: a peer's abort, a timeout, a mismatch): no put from or into the caller's
     * buffers may go on after it returns, so the pair's one-sided work is stopped (the pair breaks with it). */
    void (*stop)(st_tp *t);
} st_tp_rma_ops;

typedef struct st_tp_ops {
    const char *name; /* "shm", "verbs", "tcp" */
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
    /* Optional: send as of a gather list, the pieces in order as one stream (what send returns). tcp has it:
     * a message's header, payload spans and padding go in one system call instead of one each (NULL: shm,
     * whose sends are stores into a ring and cost no call). */
    ssize_t (*sendv)(st_tp *t, const struct iovec *iov, int iovcnt, char *err, size_t errlen);
    /* Optional: the next up to len bytes of the stream into dst, the staged ones copied out first and the rest read
     * straight from the kernel into dst, with no staging (tcp: what gloo and MPI's tcp paths do for a plain copy);
     * how many (0: none now), -1 broken (err says why). The executor takes a large message that it only copies
     * this way (exec_msg.c, "Straight in"). NULL: every byte through peek (shm, whose ring is the one copy). */
    ssize_t (*recv_into)(st_tp *t, void *dst, size_t len, char *err, size_t errlen);
    /* Optional: the one-sided table (verbs); NULL: every message on the stream. */
    const st_tp_rma_ops *rma;
    /* Sends of at most 48 bytes arrive whole, as one piece that peek shows alone, whatever their length: the
     * executor's compact messages (exec_msg.c) need no padding to 64 bytes (shm: one frame, one ring line). 0: the
     * stream takes only 64-byte messages (tcp's staging ring wraps at 64-byte positions). */
    int compact;
    /* The executor's fused forwards (exec_msg.c: a received piece sent on while it is in the cache) pay here:
     * shm, whose sends are stores the receiver then reads, and verbs (not measured: as before). 0: tcp, where a
     * forward's 64 KiB pieces cost a system call each against one for the whole message, and the kernel copies
     * the bytes anyway: ring all_reduce at np 2, 512 KB to 32 MB, was 15-25% slower fused (docs/performance.md). */
    int fuse;
} st_tp_ops;

struct st_tp {
    const st_tp_ops *ops;
    int peer; /* rank at the other end, for messages */
};

/* ---- the streams of the two entries, and the doorbell ------------------------------------------------------- */

/* tcp: test hook: nonzero, recv_into takes at most this many bytes a call (the tests cut headers and elements). */
extern size_t st_tcp_piece;
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

/* ---- the table of transports (transport.c) ---------------------------------------------------------------- */

struct st_settings;
typedef struct st_links st_links;

enum { ST_WAKE_FD, ST_WAKE_BELL }; /* st_transport.wake */
#define ST_TP_MAX 8                 /* entries the table may hold (st_links' arrays) */

typedef struct st_transport {
    const char *name;  /* what STITCH_TRANSPORT and STITCH_DEBUG call it: "shm", "tcp" */
    int data_socket;   /* the bootstrap opens a tcp data socket for each pair this transport connects */
    int wake;          /* ST_WAKE_FD: its pollfd wakes a blocked rank; ST_WAKE_BELL: its peers ring my doorbell */
    /* Can it connect the ranks `me` and `peer`? 1 or 0 with why (a clause: "they are on different hosts").
     * Must look at the two entries of the table only, and be symmetric: both ends decide alone. */
    int (*can_connect)(const st_peer_info *me, const st_peer_info *peer, char *why, size_t whylen);
    /* Per communicator, on every rank, for every entry in table order, whether or not this rank has a peer on it
     * (collective steps are allowed). `self` is the entry's index: its state is l->state[self]. */
    stitch_status_t (*setup)(st_links *l, int self, char *err, size_t errlen);
    /* The connection to `peer`, which st_tp_select gave this entry. */
    stitch_status_t (*connect)(st_links *l, int self, int peer, st_tp **out, char *err, size_t errlen);
    /* Free l->state[self], after every connection is closed; also after a failed or a skipped setup. */
    void (*teardown)(st_links *l, int self);
    /* Its own settings, when they are loaded (st_tp_settings_check): STITCH_ERR_CONFIG with why. NULL: none. */
    stitch_status_t (*check)(const struct st_settings *s, char *err, size_t errlen);
} st_transport;

extern const st_transport *const st_transports[];
extern const int st_ntransports;

/* The transports of one communicator: which connects each peer, and their per-communicator state. */
struct st_links {
    struct st_boot *boot;          /* the table, the control sockets (barriers), the data sockets (tcp takes them) */
    const struct st_settings *s;   /* ring sizes, STITCH_TRANSPORT, STITCH_TCP_CC */
    int timeout_ms;                /* for setup's collective steps; < 0: a day */
    int *use;                      /* per rank: the entry that connects it, -1 for me */
    int count[ST_TP_MAX];          /* peers per entry */
    int by_fd, by_bell;            /* peers whose entry wakes me by a pollfd, by my doorbell */
    void *state[ST_TP_MAX];        /* each entry's own, made by its setup */
    st_bell *bell;                 /* my doorbell, when an entry's peers ring it (shm); NULL otherwise */
    char note[ST_TP_MAX][128];     /* what STITCH_DEBUG adds about an entry in use ("tcp congestion control cubic") */
};

/* STITCH_TRANSPORT's value: the index of the entry called `name`, or -1. */
int st_tp_find(const char *name);
/* The entries' names for a message: "shm or tcp". */
void st_tp_names(char *out, size_t len);
/* The transports' part of loading the settings: STITCH_TRANSPORT's name resolved to an entry (s->transport), then
 * every entry's own check. STITCH_ERR_CONFIG with what and why. */
stitch_status_t st_tp_settings_check(struct st_settings *s, char *err, size_t errlen);

/* The entry that connects ranks me and peer of the table `peers`: the first that can, or `force` (an index,
 * ST_TP_AUTO (config.h) for none) when it can. -1 with a message naming the pair when none can. */
int st_tp_select(const st_peer_info *peers, int me, int peer, int force, char *err, size_t errlen);

/* The bootstrap's need_data (bootstrap.h), arg the st_settings: whether st_tp_select's entry for the pair wants
 * a data socket (0 when none can connect it: st_links_open then says why). */
int st_tp_need_data(const struct st_boot *b, int peer, void *arg);

/* Choose every peer's entry, run every entry's setup, connect every peer into tp[] (size entries, NULL for me).
 * On failure the caller still closes what tp[] holds, then calls st_links_close. */
stitch_status_t st_links_open(st_links *l, struct st_boot *b, const struct st_settings *s, int timeout_ms,
                              st_tp **tp, char *err, size_t errlen);
void st_links_close(st_links *l); /* every entry's teardown; a zeroed st_links is fine */

/* For STITCH_DEBUG: "1 peers over shm, 2 over tcp" (an entry between the two, verbs, only when it has peers: "1
 * peers over shm, 2 over verbs, 0 over tcp") and the notes of the entries in use ("; tcp ..."). */
void st_links_describe(const st_links *l, char *counts, size_t clen, char *notes, size_t nlen);

/* Ranks of the table on my host, me included. */
int st_host_ranks(const struct st_boot *b);

#endif
