/* mr_cache.c - the one-sided path's registration cache (mr_cache.h says the rules): a fixed array of entries,
 * searched linearly (a communicator's working set is a few buffers), LRU by a stamp. No verbs call here: the
 * callbacks register, deregister and look at the mapping, so the logic runs in tests without a device.
 */
#include <errno.h>
#include <string.h>

#include "mr_cache.h"

#define ST_PAGE ((uintptr_t)4096)

static void st_mrc_drop(st_mrc *c, st_mrc_ent *e)
{
    c->dereg(c->ctx, e->mr);
    c->st.pinned -= e->hi - e->lo;
    memset(e, 0, sizeof *e);
}

/* The idle entry used least recently, or NULL. */
static st_mrc_ent *st_mrc_lru(st_mrc *c)
{
    st_mrc_ent *best = NULL;
    for (int i = 0; i < ST_MRC_MAX; i++) {
        st_mrc_ent *e = &c->ent[i];
        if (e->hi && !e->busy && (!best || e->used < best->used))
            best = e;
    }
    return best;
}

/* A hit: an entry covering [lo, hi) with the access, still mapped. A covering entry whose range is no longer all
 * mapped is stale (its buffer was freed): dropped, or marked dead when busy. */
static st_mrc_ent *st_mrc_find(st_mrc *c, uintptr_t lo, uintptr_t hi, int access)
{
    for (int i = 0; i < ST_MRC_MAX; i++) {
        st_mrc_ent *e = &c->ent[i];
        if (!e->hi || e->dead || e->lo > lo || e->hi < hi || e->access < access)
            continue;
        if (c->mapped(c->ctx, e->lo, e->hi - e->lo))
            return e;
        c->st.invalidations++;
        if (e->busy)
            e->dead = 1;
        else
            st_mrc_drop(c, e);
    }
    return NULL;
}

st_mrc_ent *st_mrc_get(st_mrc *c, const void *addr, size_t len, int access)
{
    uintptr_t lo = (uintptr_t)addr & ~(ST_PAGE - 1), hi = ((uintptr_t)addr + len + ST_PAGE - 1) & ~(ST_PAGE - 1);
    st_mrc_ent *e = st_mrc_find(c, lo, hi, access);
    if (e) {
        c->st.hits++;
        e->used = ++c->clock, e->busy++;
        return e;
    }
    /* Join the idle live entries that overlap or touch the range (slices of one buffer become one); one no longer
     * all mapped (a freed buffer's) is dropped instead. */
    for (int i = 0; i < ST_MRC_MAX; i++) {
        e = &c->ent[i];
        if (!e->hi || e->busy || e->dead || e->hi < lo || e->lo > hi)
            continue;
        uintptr_t jlo = e->lo < lo ? e->lo : lo, jhi = e->hi > hi ? e->hi : hi;
        if (!c->mapped(c->ctx, e->lo, e->hi - e->lo)) { /* stale: its buffer was freed */
            c->st.invalidations++;
            st_mrc_drop(c, e);
            continue;
        }
        if (jhi - jlo > c->bound)
            continue; /* joined it would not fit: the request goes alone */
        access = e->access > access ? e->access : access;
        lo = jlo, hi = jhi;
        st_mrc_drop(c, e);
    }
    if (hi - lo > c->bound) {
        c->st.refused++;
        errno = ENOSPC;
        return NULL;
    }
    st_mrc_ent *slot = NULL;
    for (;;) {
        slot = NULL;
        for (int i = 0; i < ST_MRC_MAX && !slot; i++)
            if (!c->ent[i].hi)
                slot = &c->ent[i];
        if (slot && c->st.pinned + (hi - lo) <= c->bound)
            break;
        st_mrc_ent *victim = st_mrc_lru(c);
        if (!victim) {
            c->st.refused++;
            errno = ENOSPC;
            return NULL;
        }
        c->st.evictions++;
        st_mrc_drop(c, victim);
    }
    uint32_t lkey = 0, rkey = 0;
    void *mr = c->reg(c->ctx, (void *)lo, hi - lo, access, &lkey, &rkey);
    if (!mr)
        return NULL;
    c->st.regs++;
    c->st.pinned += hi - lo;
    if (c->st.pinned > c->st.pinned_max)
        c->st.pinned_max = c->st.pinned;
    *slot = (st_mrc_ent){lo, hi, mr, lkey, rkey, access, 1, 0, ++c->clock};
    return slot;
}

void st_mrc_release(st_mrc *c, st_mrc_ent *e)
{
    if (--e->busy == 0 && e->dead)
        st_mrc_drop(c, e);
}

void st_mrc_invalidate(st_mrc *c, const void *addr, size_t len)
{
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    for (int i = 0; i < ST_MRC_MAX; i++) {
        st_mrc_ent *e = &c->ent[i];
        if (!e->hi || e->dead || e->hi <= lo || e->lo >= hi)
            continue;
        c->st.invalidations++;
        if (e->busy)
            e->dead = 1;
        else
            st_mrc_drop(c, e);
    }
}

void st_mrc_clear(st_mrc *c)
{
    for (int i = 0; i < ST_MRC_MAX; i++)
        if (c->ent[i].hi)
            st_mrc_drop(c, &c->ent[i]);
}
