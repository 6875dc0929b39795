/* mr_cache.h - the registration cache of the verbs transport's one-sided path (mr_cache.c): memory regions for
 * buffers the user did not register, kept between calls so that a warm cache registers nothing.
 *
 * Pure logic over three callbacks (register, deregister, "is this range still mapped"), so tests drive it with
 * counters instead of a device (tests/tpverbs/test_verbs_logic.c, scenario mrc). The rules:
 * - a request [addr, addr + len) is served by an entry whose page-aligned range covers it and whose access is at
 *   least the one asked for (remote-writable serves a local read too); a hit costs no registration;
 * - a miss registers the request's pages joined with every idle entry it overlaps or touches (those are dropped):
 *   slices of one buffer used in turn (a ring's steps) grow into one registration of the whole buffer;
 * - pinned bytes never exceed the bound (STITCH_IB_MR_CACHE_BYTES): idle entries are evicted least recently used
 *   first; an entry in use by a transfer in flight (busy) is never evicted; when the bound cannot be met the
 *   request fails (NULL, errno ENOSPC) and the caller moves that message on the stream instead;
 * - invalidation: st_mrc_invalidate (stitch_mr_invalidate, the explicit API: the caller frees or remaps the
 *   range) drops every entry overlapping it, a busy one when its transfer ends; and every hit first asks `mapped`
 *   whether the entry's whole range is still mapped (msync(MS_ASYNC): ENOMEM when a page is not): a buffer freed
 *   with munmap (glibc does so for large blocks) and a smaller one mapped at its address is re-registered. What is
 *   NOT detected: a range unmapped and mapped again in full at the same address between two calls (the old pages
 *   stay pinned by the stale registration, and RDMA would use them): that case needs stitch_mr_invalidate.
 */
#ifndef ST_MR_CACHE_H
#define ST_MR_CACHE_H

#include <stddef.h>
#include <stdint.h>

enum { ST_MRC_LOCAL = 0, ST_MRC_REMOTE = 1 }; /* access: read by my writes; written by a peer's */
#define ST_MRC_MAX 64                         /* entries at most: more are evicted as the bound is */

typedef struct st_mrc_ent {
    uintptr_t lo, hi;   /* page-aligned range; hi == 0: the slot is free */
    void *mr;           /* the registration the callbacks made (struct ibv_mr *) */
    uint32_t lkey, rkey;
    int access;
    int busy;           /* transfers in flight that use it */
    int dead;           /* invalidated while busy: deregistered when busy returns to 0 */
    uint64_t used;      /* LRU stamp */
} st_mrc_ent;

typedef struct st_mrc_stats {
    uint64_t regs, hits, evictions, invalidations, refused; /* refused: requests the bound could not take */
    size_t pinned, pinned_max;
} st_mrc_stats;

typedef struct st_mrc {
    size_t bound;
    uint64_t clock;
    st_mrc_ent ent[ST_MRC_MAX];
    st_mrc_stats st;
    /* the registration of [lo, lo + len): its handle and keys, or NULL with errno */
    void *(*reg)(void *ctx, void *lo, size_t len, int access, uint32_t *lkey, uint32_t *rkey);
    void (*dereg)(void *ctx, void *mr);
    int (*mapped)(void *ctx, uintptr_t lo, size_t len); /* 1 when every page of the range is mapped */
    void *ctx;
} st_mrc;

/* An entry covering [addr, addr + len) with at least `access`, marked busy (st_mrc_release when the transfer
 * using it is over); NULL with errno (ENOSPC: over the bound with every other entry busy or the range alone
 * larger; else the registration's). */
st_mrc_ent *st_mrc_get(st_mrc *c, const void *addr, size_t len, int access);
void st_mrc_release(st_mrc *c, st_mrc_ent *e);
/* Drop every entry overlapping [addr, addr + len) (a busy one when its transfer ends). */
void st_mrc_invalidate(st_mrc *c, const void *addr, size_t len);
/* Deregister everything (teardown: the queue pairs are gone, nothing is in flight any more). */
void st_mrc_clear(st_mrc *c);

#endif
