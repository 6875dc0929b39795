/* tp_shm.c - the shared-memory transport: a single-producer single-consumer ring of frames per direction and pair.
 *
 * The ring a rank receives into lives in that rank's own segment (proc.c maps every local rank's segment into
 * every local rank; the segments are memfds with no name, so a crash leaves nothing in /dev/shm: shmfd.c). The producer copies straight
 * from its work buffer into the ring, the consumer reduces straight out of it: one copy each way and no scratch.
 *
 * Frames. Every send writes one frame at the next 64-byte position of the ring: a 16-byte header (tag, payload
 * length, kind), the payload, padding to 64 bytes. The tag is the frame's absolute ring position + 1, stored last
 * with release: the consumer polls the tag word of the position it expects next, and seeing its own position
 * there means the whole frame is written (old laps hold smaller positions, a fresh ring zeros). So a small
 * message costs the consumer one cache-line transfer before it can read (the frame's first line), not two (a
 * separate head counter, then the data): measured on the 2-core VM, 8-byte all_reduce at np 2, with the
 * symmetric exchange of a bare cache line taking ~310 ns there. A frame never wraps: when it would not fit before
 * the end, it is cut there (or a skip frame fills the rest and it starts at offset 0). Frames hold at most
 * ST_FRAME_MAX payload bytes, so the consumer starts reducing a large message while the producer still writes
 * it; a partial send takes a multiple of 64 bytes, so neither an element nor a 64-byte message header (which
 * starts a send) is ever split between frames, and the executor's contiguity rules (transport.h) hold.
 *
 * Why two copies. Cross-memory attach (process_vm_readv: the receiver reads the sender's units directly, one
 * copy) measured 2.8 GB/s for 1 MiB reads on the 2-core development VM, against ~10 GB/s for memcpy of the same
 * sizes in the same run, so large messages go through the rings too (docs/performance.md).
 *
 * Fences. The consumer stores `tail` (ring bytes freed) with release after it is done with a frame; the producer
 * loads it with acquire before overwriting them, and only when the tail it loaded last shows too little room.
 * After publishing, each side rings the other's doorbell, so a peer asleep on FUTEX_WAIT wakes up; a ring is a
 * load unless that peer has armed its bell to sleep (bell.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport.h"

#define ST_FRAME_HDR 16
#define ST_FRAME_MAX ((size_t)64 << 10)
enum { ST_FRAME_DATA = 0, ST_FRAME_SKIP = 1 };

typedef struct st_frame {
    uint64_t tag; /* position + 1; stored last */
    uint32_t len; /* payload bytes (a skip frame: 0) */
    uint32_t kind;
} st_frame;

typedef struct st_shm {
    st_tp base;
    st_ring *out, *in;
    size_t cap;
    st_bell *peer_bell;
    uint64_t wpos;     /* producer: where my next frame goes (ring bytes ever used) */
    uint64_t out_tail; /* producer: the consumer's tail as last loaded */
    uint64_t rpos;     /* consumer: the frame I read (or wait for) */
    size_t rlen, rdone; /* consumer: its payload length and what of it is consumed; rlen == SIZE_MAX: not seen yet */
} st_shm;

static size_t st_round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Publish a frame of `size` ring bytes at position pos: clear the tag where the next frame goes, write the header
 * fields, then the tag with release. The consumer reads the next tag only after this one, so it sees the clear:
 * after the first lap that word lies in an older frame's payload, whose bytes are the user's, and one equal to the
 * next position + 1 would otherwise pass for a frame (test_shm.c plants one). The line is free: st_shm_send keeps
 * one line of room beyond its frames. */
static void st_frame_put(st_shm *s, uint64_t pos, size_t size, uint32_t len, uint32_t kind)
{
    st_frame *f = (st_frame *)(s->out->data + (pos & (s->cap - 1)));
    ((st_frame *)(s->out->data + ((pos + size) & (s->cap - 1))))->tag = 0;
    f->len = len, f->kind = kind;
    __atomic_store_n(&f->tag, pos + 1, __ATOMIC_RELEASE);
}

/* Ring bytes free for the producer, reloading the consumer's tail only when `need` does not fit. */
static size_t st_room(st_shm *s, size_t need)
{
    if (s->cap - (size_t)(s->wpos - s->out_tail) < need) /* the tail line is the consumer's: touch it rarely */
        s->out_tail = __atomic_load_n(&s->out->tail, __ATOMIC_ACQUIRE);
    return s->cap - (size_t)(s->wpos - s->out_tail);
}

/* One frame of up to ST_FRAME_MAX bytes of buf, or a multiple of 64 of them when the room is short (a 64-byte
 * aligned piece of the stream, such as a message header, never straddles two frames), after a skip frame when
 * the ring's end is too short for even that. Returns the payload bytes taken, 0 when the ring is full. */
static ssize_t st_shm_send(st_tp *t, const void *buf, size_t len, char *err, size_t errlen)
{
    st_shm *s = (st_shm *)t;
    (void)err, (void)errlen;
    size_t want = len < ST_FRAME_MAX ? len : ST_FRAME_MAX, full = st_round64(ST_FRAME_HDR + want);
    size_t to_end = s->cap - (size_t)(s->wpos & (s->cap - 1));
    size_t skip = to_end < full && to_end < 128 ? to_end : 0; /* 128: a header and a 64-byte piece */
    size_t room = st_room(s, skip + full + 64);
    if (room < 64)
        return 0;
    room -= 64; /* the line after my frames, whose tag st_frame_put clears */
    if (want == 0 || (room < skip + 128 && room < skip + full))
        return 0;
    size_t limit = skip ? s->cap : to_end; /* a frame never wraps */
    size_t space = room - skip < limit ? room - skip : limit;
    size_t n = space >= full ? want : (space - ST_FRAME_HDR) & ~(size_t)63;
    if (n == 0)
        return 0;
    if (skip) {
        st_frame_put(s, s->wpos, skip, 0, ST_FRAME_SKIP);
        s->wpos += skip;
    }
    memcpy(s->out->data + (s->wpos & (s->cap - 1)) + ST_FRAME_HDR, buf, n);
    st_frame_put(s, s->wpos, st_round64(ST_FRAME_HDR + n), (uint32_t)n, ST_FRAME_DATA);
    s->wpos += st_round64(ST_FRAME_HDR + n);
    st_bell_ring(s->peer_bell);
    return (ssize_t)n;
}

static ssize_t st_shm_peek(st_tp *t, const void **ptr, char *err, size_t errlen)
{
    st_shm *s = (st_shm *)t;
    (void)err, (void)errlen;
    while (s->rlen == SIZE_MAX) {
        const st_frame *f = (const st_frame *)(s->in->data + (s->rpos & (s->cap - 1)));
        if (__atomic_load_n(&f->tag, __ATOMIC_ACQUIRE) != s->rpos + 1)
            return 0;
        if (f->kind == ST_FRAME_SKIP) {
            s->rpos += s->cap - (size_t)(s->rpos & (s->cap - 1));
            continue;
        }
        s->rlen = f->len, s->rdone = 0;
    }
    *ptr = s->in->data + (s->rpos & (s->cap - 1)) + ST_FRAME_HDR + s->rdone;
    return (ssize_t)(s->rlen - s->rdone);
}

static void st_shm_consume(st_tp *t, size_t n)
{
    st_shm *s = (st_shm *)t;
    s->rdone += n;
    if (s->rdone < s->rlen)
        return; /* the frame's space is freed as a whole */
    s->rpos += st_round64(ST_FRAME_HDR + s->rlen);
    s->rlen = SIZE_MAX;
    __atomic_store_n(&s->in->tail, s->rpos, __ATOMIC_RELEASE);
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
    s->rlen = SIZE_MAX;
    return &s->base;
}
