/* tp_shm.c - the shared-memory transport: an entry of transport.c's table for ranks of one host, its segments,
 * and a single-producer single-consumer ring of frames per direction and pair.
 *
 * The ring a rank receives into lives in that rank's own segment (every local rank's segment is mapped into
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
 *
 * Segments (the entry's setup). Each rank makes one segment holding its doorbell and one ring per other rank of
 * its host (the rings it receives from), and every rank maps every segment of its host. The segments have no name
 * at all: each is a memfd, and its descriptor goes to the other ranks of the host over an authenticated abstract-namespace Unix
 * socket (SCM_RIGHTS; shmfd.c: same user by SO_PEERCRED, then a proof of the job's key both ways). So no death,
 * SIGKILL or Ctrl-C at any moment of setup, can leave a file in /dev/shm; the memory goes away with the last
 * descriptor or mapping. Why not named segments unlinked early: a name must live until every peer has opened it,
 * which takes a round trip with the peers, and a rank killed in that window (measured: 14 of 16 kills 5-40 ms
 * after launch) left its 12.6 MB segment behind for good; no ordering of shm_open and shm_unlink closes that
 * window, and an exit handler does not run on SIGKILL. The cost is one Unix connection per pair of ranks of a host,
 * once, at setup; and memfd_create needs Linux 3.17. Only the job's own user gets in, as with the 0600 files before.
 * Order: make mine and listen, barrier, swap and map, touch, barrier (st_shm_setup). Every rank runs it, with
 * or without a peer on its host (its barriers run over all ranks); and every rank of a host uses shm or none does,
 * since the choice depends only on the hosts (transport.c), so the swap always meets every rank of the host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "shmfd.h"
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

static const st_tp_ops st_shm_ops = {
    .name = "shm", .send = st_shm_send, .peek = st_shm_peek, .consume = st_shm_consume, .pollfd = st_shm_pollfd,
    .close = st_shm_close, .sendv = NULL, .compact = 1, .fuse = 1};

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

/* ---- the entry: segments, connections --------------------------------------------------------------------- */

#define ST_RING_HDR offsetof(st_ring, data)

/* The entry's state per communicator: every segment of my host I mapped, mine included. */
typedef struct st_shm_segs {
    void **seg;        /* per rank: its mapped segment, NULL for ranks of other hosts */
    size_t seg_bytes, ring_bytes;
} st_shm_segs;

static int st_shm_can_connect(const st_peer_info *me, const st_peer_info *peer, char *why, size_t whylen)
{
    if (me->host == peer->host)
        return 1;
    snprintf(why, whylen, "shared memory connects ranks of one host, and these are on different hosts (or "
             "network namespaces)");
    return 0;
}

/* Index of ring "from rank `from`" inside `owner`'s segment: from's position among the other ranks of the host. */
static int st_ring_index(const st_boot *b, int owner, int from)
{
    int k = 0;
    for (int i = 0; i < from; i++)
        k += i != owner && b->peers[i].host == b->peers[owner].host;
    return k;
}

static st_ring *st_ring_at(const st_shm_segs *m, const st_boot *b, int owner, int from)
{
    char *base = (char *)m->seg[owner] + 4096;
    return (st_ring *)(base + (size_t)st_ring_index(b, owner, from) * (ST_RING_HDR + m->ring_bytes));
}

/* Fault the pages this process will use of a segment in now, writable, rather than on the first message: a fault costs
 * microseconds natively, and under a hypervisor with shadow page tables the first user access to each page of
 * each mapping traps again, invisible to the guest's fault counters (measured: ~40 ms over the first pass
 * through a 4 MB ring, which made every mid-size call of a fresh communicator 10-50x slower). MADV_POPULATE_WRITE
 * (Linux 5.14) makes the guest pages; then one store per page, of the value already there, from this process.
 * Called before the second setup barrier, before any rank produces into any ring, so the stores race with
 * nothing; each process touches only its own segment and, in each peer's, the bell and the ring it fills. */
static void st_seg_touch(void *p, size_t bytes)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096; /* rings do not start on a page: widen to whole pages */
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(page - 1), hi = ((uintptr_t)p + bytes + page - 1) & ~(uintptr_t)(page - 1);
#ifdef MADV_POPULATE_WRITE
    (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* best effort: EINVAL on older kernels */
#endif
    for (uintptr_t a = lo; a < hi; a += page) {
        volatile char *q = (char *)a;
        *q = *q;
    }
}

/* Map a segment's descriptor, checking its size: a shorter one (a peer with another STITCH_SHM_RING_BYTES) would
 * fault at the first access past its end. */
static void *st_seg_map(int fd, size_t bytes, char *err, size_t errlen)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "fstat: %s", strerror(errno));
        return NULL;
    }
    if ((size_t)sb.st_size != bytes) {
        snprintf(err, errlen, "its segment is %lld bytes, mine %zu (is STITCH_SHM_RING_BYTES the same on every rank?)",
                 (long long)sb.st_size, bytes);
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "mmap(%zu): %s", bytes, strerror(errno));
        return NULL;
    }
    return p;
}

/* Make mine (a memfd), listen for the swap, barrier (every socket listens), swap descriptors with the ranks of
 * my host and map those of my shm peers, barrier (every rank has touched what it will use before anyone
 * produces). Every rank takes part in both barriers (they run over all ranks), whether or not it has a peer on its
 * host. */
static stitch_status_t st_shm_setup(st_links *l, int self, char *err, size_t errlen)
{
    st_boot *b = l->boot;
    st_shm_segs *m = calloc(1, sizeof *m);
    char why[300];
    int nlocal = st_host_ranks(b), myfd = -1, lfd = -1, *fds = NULL, timeout_ms = l->timeout_ms;
    const int size = b->size; /* fds[] spans the ranks: the same bound for every loop over it */
    int use = l->count[self] > 0;
    if (!m || !(m->seg = calloc((size_t)size, sizeof *m->seg))) {
        free(m);
        snprintf(err, errlen, "rank %d: shared memory: out of memory", b->rank);
        return STITCH_ERR_NO_MEMORY;
    }
    l->state[self] = m;
    m->ring_bytes = l->s->shm_ring_bytes;
    m->seg_bytes = 4096 + (size_t)(nlocal > 1 ? nlocal - 1 : 0) * (ST_RING_HDR + m->ring_bytes);
    if (use) {
        if ((myfd = st_shmfd_create(m->seg_bytes, why, sizeof why)) < 0 ||
            !(m->seg[b->rank] = st_seg_map(myfd, m->seg_bytes, why, sizeof why)) ||
            (lfd = st_shmfd_listen(b, why, sizeof why)) < 0 || !(fds = malloc((size_t)size * sizeof *fds))) {
            snprintf(err, errlen, "rank %d: shared memory: %s", b->rank, fds || lfd < 0 ? why : "out of memory");
            if (myfd >= 0)
                close(myfd);
            if (lfd >= 0)
                close(lfd);
            return STITCH_ERR_SYSTEM; /* the peers' barrier fails at our control EOF */
        }
        l->bell = m->seg[b->rank];
        st_bell_init(l->bell); /* before the barrier: no peer rings it yet */
        snprintf(l->note[self], sizeof l->note[self], "doorbells ordered by %s", st_bell_mode());
        st_seg_touch(m->seg[b->rank], m->seg_bytes); /* the rings I consume from */
        for (int i = 0; i < size; i++)
            fds[i] = -1;
    }
    stitch_status_t st = st_boot_barrier(b, timeout_ms, err, errlen);
    if (use && st == STITCH_OK && st_shmfd_swap(b, lfd, myfd, fds, timeout_ms < 0 ? 24 * 3600 * 1000 : timeout_ms,
                                                why, sizeof why) != 0) {
        snprintf(err, errlen, "rank %d: shared memory: %s", b->rank, why);
        st = STITCH_ERR_SYSTEM;
    }
    for (int i = 0; use && i < size; i++) {
        if (st == STITCH_OK && i != b->rank && l->use[i] == self &&
            !(m->seg[i] = st_seg_map(fds[i], m->seg_bytes, why, sizeof why))) {
            snprintf(err, errlen, "rank %d: shared memory of rank %d: %s", b->rank, i, why);
            st = STITCH_ERR_SYSTEM;
        } else if (st == STITCH_OK && i != b->rank && m->seg[i]) {
            st_seg_touch(m->seg[i], 4096); /* its doorbell, */
            st_seg_touch(st_ring_at(m, b, i, b->rank), ST_RING_HDR + m->ring_bytes); /* the ring I produce into */
        }
        if (fds[i] >= 0)
            close(fds[i]); /* the mapping keeps the memory */
    }
    if (myfd >= 0)
        close(myfd);
    if (lfd >= 0)
        close(lfd);
    free(fds);
    if (st == STITCH_OK)
        st = st_boot_barrier(b, timeout_ms, err, errlen);
    return st;
}

/* My rings with `peer`: the one I produce into lives in its segment, the one I consume from in mine; its doorbell
 * is the first line of its segment. */
static stitch_status_t st_shm_connect(st_links *l, int self, int peer, st_tp **out, char *err, size_t errlen)
{
    const st_shm_segs *m = l->state[self];
    int me = l->boot->rank;
    *out = st_tp_shm_new(st_ring_at(m, l->boot, peer, me), st_ring_at(m, l->boot, me, peer), m->ring_bytes,
                         (st_bell *)m->seg[peer], peer);
    if (*out)
        return STITCH_OK;
    snprintf(err, errlen, "rank %d: out of memory for the transport to rank %d", me, peer);
    return STITCH_ERR_NO_MEMORY;
}

static void st_shm_teardown(st_links *l, int self)
{
    st_shm_segs *m = l->state[self];
    for (int j = 0; m && l->boot && j < l->boot->size; j++)
        if (m->seg[j])
            munmap(m->seg[j], m->seg_bytes);
    if (m)
        free(m->seg);
    free(m);
    l->state[self] = NULL;
    l->bell = NULL;
}

const st_transport st_transport_shm = {
    .name = "shm",
    .data_socket = 0,
    .wake = ST_WAKE_BELL,
    .can_connect = st_shm_can_connect,
    .setup = st_shm_setup,
    .connect = st_shm_connect,
    .teardown = st_shm_teardown,
};
