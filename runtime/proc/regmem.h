/* regmem.h - registered memory of a process-mode communicator (regmem.c): the segments stitch_mem_alloc makes
 * (memfds the host's other ranks map), the registry that recognises them in a call, and the peers' segments this
 * rank has mapped, validated and borrowed.
 *
 * A segment is a memfd: a 4 KiB header page, then the caller's bytes. The header says whose it is (the owner's
 * rank, a segment id unique in the owner's registry, a random 64-bit generation), how many bytes it holds, whether
 * it is live, and how many peers read it now (`readers`, the borrows). One segment per rank, its board, also
 * carries the counter the pull engine posts (exec_pull.c). A handle names a peer's segment on the wire: its fd
 * number in the owner, its id and generation, and an offset; a peer maps it through /proc/<owner pid>/fd/<fd> (the
 * owner's pid from the bootstrap's table, never from the handle) and refuses it unless the header there has the
 * magic, the owner, the id and the generation of the handle, the segment is live and the range read lies inside
 * it. A reader borrows a segment for a call (readers + 1, then the state looked at: Dekker against the free, which
 * marks it freed, then waits for readers to reach 0), so a free waits for the calls reading it and a reader that
 * comes after the free is refused. A reader's mapping is its own: the owner's munmap leaves it valid (the pages
 * live until the last mapping goes), so no reader ever touches unmapped memory, whatever the owner does.
 */
#ifndef ST_REGMEM_H
#define ST_REGMEM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "stitch.h"

#define ST_SEG_HDR 4096 /* the header page before a segment's bytes */
#define ST_SEG_RANKS 960 /* readers counted per rank (the rest of the header page); higher ranks share `readers` */

typedef struct st_seg_hdr {
    uint64_t magic, id, gen, bytes; /* bytes: after the header page */
    int32_t owner;
    uint32_t internal;              /* the board or the engine's scratch: not the caller's to free */
    _Alignas(64) _Atomic uint32_t state; /* ST_SEG_LIVE, then ST_SEG_FREED */
    _Atomic uint32_t readers;             /* borrows of ranks ST_SEG_RANKS and up */
    _Alignas(64) _Atomic uint32_t posted; /* the board's: the pull engine's counter (exec_pull.c) */
    _Atomic uint32_t sleepers;
    _Alignas(64) _Atomic uint32_t by[ST_SEG_RANKS]; /* borrows of rank j: a wait for borrows skips dead ranks */
} st_seg_hdr;
_Static_assert(sizeof(st_seg_hdr) <= ST_SEG_HDR, "the header fits its page");

enum { ST_SEG_LIVE = 1, ST_SEG_FREED = 2 };

/* A segment on the wire: the owner's fd number, the segment's id and generation, an offset into its bytes.
 * fd < 0: no segment (the region is not used by the call). */
typedef struct st_reg_handle {
    int32_t fd;
    uint32_t pad;
    uint64_t id, gen, off;
} st_reg_handle;

typedef struct st_regmem st_regmem;

/* How the registry sees the process it serves without calling into it (the process fills it in): whether rank j is
 * gone (died or said goodbye: it reads nothing any more, its borrows are not waited for), and a short nap that
 * answers the peers' control queries meanwhile. A zero watch: every rank may read, a nap is a 1 ms sleep. */
typedef struct st_regmem_watch {
    void *ctx;
    int (*gone)(void *ctx, int rank);
    void (*nap)(void *ctx);
} st_regmem_watch;

/* The registry of one process-mode communicator; NULL when out of memory. */
st_regmem *st_regmem_new(int rank, int size, st_regmem_watch watch);
/* Unmap everything: my segments (whatever peers still map stays theirs) and my mappings of peers'. */
void st_regmem_free(st_regmem *r);

/* stitch_mem_alloc / stitch_mem_free on a process-mode communicator. Free waits up to timeout_ms (< 0: for ever)
 * for the peers that read the segment to end their calls, napping through the watch meanwhile. */
stitch_status_t st_regmem_alloc(st_regmem *r, size_t bytes, int internal, void **ptr, char *err, size_t errlen);
stitch_status_t st_regmem_release(st_regmem *r, void *ptr, int internal, int timeout_ms,
                                  char *err, size_t errlen);

/* Is [ptr, ptr + len) inside one of my live segments? 1 with its handle, else 0. */
int st_regmem_find(const st_regmem *r, const void *ptr, size_t len, st_reg_handle *h);
/* My board (made on first use): its header, whose `posted` I post; NULL with a message when it cannot be made. */
st_seg_hdr *st_regmem_board(st_regmem *r, st_reg_handle *h, char *err, size_t errlen);

/* Map (or find mapped) rank `peer`'s segment of handle h, check it (magic, owner, id, generation, live, and
 * [h->off, h->off + len) inside it) and borrow it: *seg its header, *at the mapped address of h->off. 0, or -1
 * with a message saying what was refused and why (the caller fails the call). */
int st_regmem_borrow(st_regmem *r, int peer, unsigned pid, const st_reg_handle *h, size_t len, st_seg_hdr **seg,
                     char **at, char *err, size_t errlen);
void st_regmem_return(st_seg_hdr *seg, int me);

/* The engine's scratch in registered memory: at least `bytes`, 64-byte aligned, grown by a new segment (the old one
 * freed: a new call's peers map the new one); zeroed when (re)made if `zero`. which: 0 the work scratch, 1 the
 * scratch units. NULL with a message. */
char *st_regmem_scratch(st_regmem *r, int which, size_t bytes, int zero, int timeout_ms,
                        char *err, size_t errlen);

/* Wait until no live peer reads my segment `seg`, up to timeout_ms, napping through r's watch (a gone rank's
 * borrows are not waited for): a failed call returns only when its
 * buffers are no longer read (as in threads mode). 0, or -1 on timeout. */
int st_regmem_drain(const st_regmem *r, st_seg_hdr *seg, int timeout_ms);

#endif
