/* regmem.c - registered memory of process mode (regmem.h): memfd segments with a header page, the registry of
 * mine, and the peers' segments I have mapped.
 *
 * Why /proc/<pid>/fd and not a socket. A segment is made by one rank alone, at any time (stitch_mem_alloc is not
 * collective), so there is no moment at which every rank of the host could swap descriptors as tp_shm.c does at
 * setup. Opening the owner's descriptor through /proc needs what reading the owner's memory would need
 * (PTRACE_MODE_READ: the same user, as the bootstrap's SO_PEERCRED check already demands of shm peers) and
 * nothing from the owner, and the owner's pid comes from the authenticated table, not from the handle. A handle
 * that names the wrong file (a stale fd number now used by another memfd, a forged one) finds a header that does
 * not match and is refused: the generation is 64 random bits, so a handle cannot be made up or outlive its
 * segment.
 *
 * The peers' segments I map are kept (one mapping per segment) for as long as the segment is live: a call that
 * borrows a segment I mapped before costs one header check. A mapping whose segment was freed is dropped the next
 * time that peer's segments are borrowed (regmem.h: my mapping stays valid until then).
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "regmem.h"

#define ST_SEG_MAGIC 0x31474553444d5453ull /* "STMDSEG1" */

typedef struct st_seg { /* one of mine */
    st_seg_hdr *hdr;     /* the mapping: header page, then the bytes */
    size_t map_bytes;
    int fd;
    struct st_seg *next;
} st_seg;

typedef struct st_pmap { /* a peer's, mapped here */
    int peer;
    uint64_t id, gen;
    st_seg_hdr *hdr;
    size_t map_bytes;
    struct st_pmap *next;
} st_pmap;

struct st_regmem {
    int rank, size;
    st_regmem_watch watch;
    uint64_t next_id;
    st_seg *mine;
    st_pmap *peers;
    st_seg_hdr *board;
    st_reg_handle board_h;
    char *scratch[2];
    size_t scratch_size[2];
};

st_regmem *st_regmem_new(int rank, int size, st_regmem_watch watch)
{
    st_regmem *r = calloc(1, sizeof *r);
    if (r)
        r->rank = rank, r->size = size, r->watch = watch, r->next_id = 1;
    return r;
}

static void st_seg_unmap(st_seg *s)
{
    munmap(s->hdr, s->map_bytes);
    close(s->fd);
    free(s);
}

void st_regmem_free(st_regmem *r)
{
    if (!r)
        return;
    for (st_seg *s = r->mine, *next; s; s = next)
        next = s->next, st_seg_unmap(s);
    for (st_pmap *m = r->peers, *next; m; m = next)
        next = m->next, munmap(m->hdr, m->map_bytes), free(m);
    free(r);
}

/* ---- my segments ------------------------------------------------------------------------------------------ */

static uint64_t st_random64(void)
{
    uint64_t v = 0;
    while (v == 0)
        if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
            v = (uint64_t)rand() << 32 ^ (uint64_t)rand() ^ (uint64_t)getpid() << 16; /* never on Linux >= 3.17 */
    return v;
}

stitch_status_t st_regmem_alloc(st_regmem *r, size_t bytes, int internal, void **ptr, char *err, size_t errlen)
{
    size_t map = ST_SEG_HDR + ((bytes + 4095) & ~(size_t)4095);
    if (bytes == 0 || bytes > ((size_t)1 << 48)) {
        snprintf(err, errlen, "cannot register %zu bytes (1 to 2^48)", bytes);
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    st_seg *s = calloc(1, sizeof *s);
    int fd = s ? memfd_create("stitch-mem", MFD_CLOEXEC) : -1;
    void *base = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)map) == 0)
        base = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        snprintf(err, errlen, "cannot make a shared segment of %zu bytes: %s", bytes,
                 s ? strerror(errno) : "out of memory");
        if (fd >= 0)
            close(fd);
        free(s);
        return STITCH_ERR_NO_MEMORY;
    }
    st_seg_hdr *h = base;
    h->magic = ST_SEG_MAGIC, h->id = r->next_id++, h->gen = st_random64(), h->bytes = map - ST_SEG_HDR;
    h->owner = r->rank, h->internal = (uint32_t)internal; /* the rest is zero: a new memfd */
    atomic_store(&h->state, ST_SEG_LIVE);
    s->hdr = h, s->map_bytes = map, s->fd = fd;
    s->next = r->mine, r->mine = s;
    *ptr = (char *)base + ST_SEG_HDR;
    return STITCH_OK;
}

static st_seg *st_seg_containing(const st_regmem *r, const char *p, size_t len)
{
    for (st_seg *s = r->mine; s; s = s->next) {
        const char *lo = (const char *)s->hdr + ST_SEG_HDR, *hi = lo + s->hdr->bytes;
        if (atomic_load_explicit(&s->hdr->state, memory_order_relaxed) == ST_SEG_LIVE && p >= lo && p <= hi &&
            len <= (size_t)(hi - p))
            return s;
    }
    return NULL;
}

/* Does a rank that may still read hold a borrow on seg? */
static int st_seg_read(const st_regmem *r, st_seg_hdr *seg)
{
    const st_regmem_watch *w = &r->watch;
    int n = w->gone ? r->size : ST_SEG_RANKS;
    if (atomic_load(&seg->readers) != 0)
        return 1;
    for (int j = 0; j < n && j < ST_SEG_RANKS; j++)
        if (atomic_load(&seg->by[j]) != 0 && !(w->gone && w->gone(w->ctx, j)))
            return 1;
    return 0;
}

int st_regmem_drain(const st_regmem *r, st_seg_hdr *seg, int timeout_ms)
{
    st_deadline dl;
    st_deadline_start(&dl, timeout_ms);
    for (long n = 0; st_seg_read(r, seg); n++) {
        if (n < 1000) {
            sched_yield();
            continue;
        }
        if (st_deadline_passed(&dl))
            return -1;
        if (r->watch.nap)
            r->watch.nap(r->watch.ctx); /* answers the peers' progress queries */
        else
            usleep(1000);
    }
    return 0;
}

stitch_status_t st_regmem_release(st_regmem *r, void *ptr, int internal, int timeout_ms, char *err, size_t errlen)
{
    st_seg **at = &r->mine;
    while (*at && (char *)(*at)->hdr + ST_SEG_HDR != (char *)ptr)
        at = &(*at)->next;
    st_seg *s = *at;
    if (!s || (int)s->hdr->internal != internal) {
        snprintf(err, errlen, "%p is not %s", ptr,
                 s ? "the caller's memory (the engine's own)"
                   : st_seg_containing(r, ptr, 0) ? "the start of a registered buffer (a slice of one)"
                                                  : "a live buffer of stitch_mem_alloc on this communicator (never "
                                                    "allocated here, or freed already)");
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    atomic_store(&s->hdr->state, ST_SEG_FREED); /* seq_cst against a borrower's readers + 1, then its look */
    int drained = st_regmem_drain(r, s->hdr, timeout_ms) == 0;
    *at = s->next;
    if (r->board == s->hdr)
        r->board = NULL;
    st_seg_unmap(s); /* a reader that never returned (dead, stuck) keeps its own mapping: nothing it reads goes */
    if (!drained)
        snprintf(err, errlen, "freed after %d ms with a peer still reading it (dead or stuck)", timeout_ms);
    return STITCH_OK;
}

int st_regmem_find(const st_regmem *r, const void *ptr, size_t len, st_reg_handle *h)
{
    st_seg *s = st_seg_containing(r, ptr, len);
    if (!s)
        return 0;
    *h = (st_reg_handle){s->fd, 0, s->hdr->id, s->hdr->gen, (size_t)((const char *)ptr - (char *)s->hdr) - ST_SEG_HDR};
    return 1;
}

st_seg_hdr *st_regmem_board(st_regmem *r, st_reg_handle *h, char *err, size_t errlen)
{
    void *p;
    if (!r->board && st_regmem_alloc(r, 64, 1, &p, err, errlen) == STITCH_OK) {
        r->board = (st_seg_hdr *)((char *)p - ST_SEG_HDR);
        st_regmem_find(r, p, 0, &r->board_h);
    }
    if (r->board)
        *h = r->board_h;
    return r->board;
}

char *st_regmem_scratch(st_regmem *r, int which, size_t bytes, int zero, int timeout_ms, char *err,
                        size_t errlen)
{
    if (bytes <= r->scratch_size[which] && r->scratch[which])
        return r->scratch[which];
    void *p;
    if (r->scratch[which]) /* no call reads it now: every rank waits for its readers before a call returns */
        (void)st_regmem_release(r, r->scratch[which], 1, timeout_ms, err, errlen);
    r->scratch[which] = NULL, r->scratch_size[which] = 0;
    if (st_regmem_alloc(r, bytes, 1, &p, err, errlen) != STITCH_OK)
        return NULL;
    if (zero)
        memset(p, 0, bytes);
    r->scratch[which] = p, r->scratch_size[which] = bytes;
    return p;
}

/* ---- peers' segments -------------------------------------------------------------------------------------- */

/* Drop my mappings of `peer`'s segments that were freed since: their pages go once nobody maps them. */
static void st_pmap_sweep(st_regmem *r, int peer)
{
    for (st_pmap **at = &r->peers; *at;) {
        st_pmap *m = *at;
        if (m->peer == peer && atomic_load(&m->hdr->state) != ST_SEG_LIVE &&
            atomic_load(r->rank < ST_SEG_RANKS ? &m->hdr->by[r->rank] : &m->hdr->readers) == 0) {
            *at = m->next;
            munmap(m->hdr, m->map_bytes);
            free(m);
        } else {
            at = &m->next;
        }
    }
}

/* Map the file the handle names and check its header. NULL with a message. */
static st_pmap *st_pmap_open(int peer, unsigned pid, const st_reg_handle *h, char *err, size_t errlen)
{
    char path[64];
    struct stat sb;
    snprintf(path, sizeof path, "/proc/%u/fd/%d", pid, h->fd);
    int fd = h->fd >= 0 ? open(path, O_RDWR | O_CLOEXEC) : -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, h->fd < 0 ? "no descriptor" : errno == ENOENT ?
                 "no such descriptor (the segment was freed, or a stale or forged handle)" : strerror(errno));
        return NULL;
    }
    void *base = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size > ST_SEG_HDR)
        base = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        snprintf(err, errlen, "%s is not a segment that can be mapped", path);
        return NULL;
    }
    st_seg_hdr *s = base;
    if (s->magic != ST_SEG_MAGIC || s->owner != peer || s->id != h->id || s->gen != h->gen ||
        s->bytes > (size_t)sb.st_size - ST_SEG_HDR) {
        snprintf(err, errlen, "%s is not segment %llu generation %016llx of rank %d (%s)", path,
                 (unsigned long long)h->id, (unsigned long long)h->gen, peer,
                 s->magic != ST_SEG_MAGIC ? "not a stitch segment" : s->owner != peer ? "another rank's"
                 : s->id != h->id ? "another segment: stale or forged handle" : "another generation: stale or forged "
                 "handle");
        munmap(base, (size_t)sb.st_size);
        return NULL;
    }
    st_pmap *m = malloc(sizeof *m);
    if (!m) {
        munmap(base, (size_t)sb.st_size);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *m = (st_pmap){peer, h->id, h->gen, s, (size_t)sb.st_size, NULL};
    return m;
}

int st_regmem_borrow(st_regmem *r, int peer, unsigned pid, const st_reg_handle *h, size_t len, st_seg_hdr **seg,
                     char **at, char *err, size_t errlen)
{
    char why[256];
    st_pmap *m;
    st_pmap_sweep(r, peer);
    for (m = r->peers; m && !(m->peer == peer && m->id == h->id); m = m->next)
        ;
    if (m && m->gen != h->gen) {
        snprintf(err, errlen, "rank %d's registered segment %llu has generation %016llx, the handle says %016llx "
                 "(stale or forged handle)", peer, (unsigned long long)h->id, (unsigned long long)m->gen,
                 (unsigned long long)h->gen);
        return -1;
    }
    if (!m) { /* not mapped yet: map, check, keep */
        if (!(m = st_pmap_open(peer, pid, h, why, sizeof why))) {
            snprintf(err, errlen, "rank %d's registered buffer refused: %s", peer, why);
            return -1;
        }
        m->next = r->peers, r->peers = m;
    }
    if (h->off > m->hdr->bytes || len > m->hdr->bytes - h->off) {
        snprintf(err, errlen, "rank %d's handle reaches past its registered segment %llu: bytes %llu..%llu of %llu "
                 "(forged handle)", peer, (unsigned long long)h->id, (unsigned long long)h->off,
                 (unsigned long long)(h->off + len), (unsigned long long)m->hdr->bytes);
        return -1;
    }
    _Atomic uint32_t *mine = r->rank < ST_SEG_RANKS ? &m->hdr->by[r->rank] : &m->hdr->readers;
    atomic_fetch_add(mine, 1); /* seq_cst: then the state; the free stores the state, then reads this */
    if (atomic_load(&m->hdr->state) != ST_SEG_LIVE) {
        atomic_fetch_sub(mine, 1);
        snprintf(err, errlen, "rank %d freed its registered segment %llu while this call was to read it", peer,
                 (unsigned long long)h->id);
        return -1;
    }
    *seg = m->hdr;
    *at = (char *)m->hdr + ST_SEG_HDR + h->off;
    return 0;
}

void st_regmem_return(st_seg_hdr *seg, int me)
{
    atomic_fetch_sub_explicit(me < ST_SEG_RANKS ? &seg->by[me] : &seg->readers, 1, memory_order_release);
}
