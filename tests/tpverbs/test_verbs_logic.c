/* test_verbs_logic.c - the verbs transport's pure decisions (runtime/verbs_logic.c), no device and no verbs call:
 *
 *   dev     STITCH_IB_DEV matching (NCCL_IB_HCA's forms: prefixes, =exact, ^exclude, name:port, malformed lists)
 *   gid     GID choice on recorded tables: RXE on Debian's 6.1 (RoCE v2 only), mlx5 RoCE (v1/v2 pairs), the
 *           emulator's (an empty slot between two), InfiniBand, an empty table, STITCH_IB_GID_INDEX on a full
 *           and on an empty slot
 *   credit  a sender and a receiver of one stream with writes and credits in flight, random sizes and consume
 *           patterns, seeded: the sender never overruns the ring, the receiver never needs more than the receives
 *           posted (ST_VCREDIT_WRITES data writes plus two credits per write), and once the receiver has consumed
 *           everything, the credits in flight return the whole ring (no deadlock)
 *   mrc     the one-sided path's registration cache (mr_cache.c) on counting callbacks: hits, slices joining,
 *           LRU eviction under the bound, busy entries never evicted, refusals, invalidation (explicit, busy,
 *           and a range found unmapped)
 *
 * Prints TAP; the scenario is the first argument (ctest: verbs.logic.<name>).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mr_cache.h"
#include "tp_verbs.h"


/* ---- dev ---------------------------------------------------------------------------------------------------- */

static void t_dev(void)
{
    static const struct {
        const char *spec, *dev;
        int port, want;
    } cases[] = {
        {NULL, "mlx5_0", 1, 1},         {"", "rxe0", 1, 1},           {"mlx5", "mlx5_0", 1, 1},
        {"mlx5", "rxe0", 1, 0},         {"=mlx5", "mlx5_0", 1, 0},    {"=mlx5_0", "mlx5_0", 2, 1},
        {"mlx5_0:1", "mlx5_0", 1, 1},   {"mlx5_0:1", "mlx5_0", 2, 0}, {"rxe0,mlx5_1:2", "mlx5_1", 2, 1},
        {"rxe0,mlx5_1:2", "mlx5_1", 1, 0}, {"^mlx5_1", "mlx5_0", 1, 1}, {"^mlx5_1", "mlx5_1", 1, 0},
        {"^=mlx5", "mlx5_0", 1, 1},     {"^rxe0:1", "rxe0", 2, 1},    {"a,,b", "a", 1, -1},
        {"rxe0:", "rxe0", 1, -1},       {"rxe0:x", "rxe0", 1, -1},    {"rxe0:0", "rxe0", 1, -1},
        {":1", "rxe0", 1, -1},          {"rxe0:256", "rxe0", 1, -1},  {",", "rxe0", 1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char why[200] = "";
        int got = st_ib_dev_match(cases[i].spec, cases[i].dev, cases[i].port, why, sizeof why);
        EXPECT(got == cases[i].want, "STITCH_IB_DEV='%s' on %s:%d: got %d, want %d (%s)", cases[i].spec,
               cases[i].dev, cases[i].port, got, cases[i].want, why);
        EXPECT(got >= 0 || strstr(why, "STITCH_IB_DEV"), "the error does not name STITCH_IB_DEV: '%s'", why);
    }
}

/* ---- gid ---------------------------------------------------------------------------------------------------- */

#define LL {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x12, 0x34, 0x56}
#define V4 {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 15}
#define G6 {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
#define Z {0}

static void t_gid(void)
{
    /* RXE, Debian 6.1, rxe0 on a virtio NIC with 10.0.2.15 (the guest of tests/rxe): every slot RoCE v2 */
    static const st_gid_slot rxe[] = {{LL, 2}, {V4, 2}, {Z, 0}, {Z, 0}};
    /* mlx5 RoCE: each address twice, v1 then v2, then a global IPv6 address */
    static const st_gid_slot mlx5[] = {{LL, 1}, {LL, 2}, {V4, 1}, {V4, 2}, {G6, 1}, {G6, 2}};
    /* the emulator (tests/verbs/fakeverbs.h): link-local, an empty slot, IPv4-mapped; no sysfs, types unknown */
    static const st_gid_slot fake[] = {{LL, 0}, {Z, 0}, {V4, 0}, {Z, 0}};
    /* InfiniBand: the port GID (subnet prefix fe80::, the GUID) */
    static const st_gid_slot ib[] = {{LL, 0}, {Z, 0}};
    static const st_gid_slot empty[] = {{Z, 0}, {Z, 0}, {Z, 0}};
    /* a RoCE port with only a global IPv6 address and its link-local one, v1 only */
    static const st_gid_slot v6[] = {{LL, 1}, {G6, 1}};
    const struct {
        const char *what;
        const st_gid_slot *s;
        int n, eth, force, want;
    } cases[] = {
        {"rxe", rxe, 4, 1, -1, 1},     {"mlx5", mlx5, 6, 1, -1, 3},   {"fake", fake, 4, 1, -1, 2},
        {"ib", ib, 2, 0, -1, 0},       {"empty", empty, 3, 1, -1, -1}, {"v6", v6, 2, 1, -1, 1},
        {"force 0", rxe, 4, 1, 0, 0},  {"force empty", fake, 4, 1, 1, -1}, {"force past", rxe, 4, 1, 9, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char why[200] = "";
        int got = st_gid_pick(cases[i].s, cases[i].n, cases[i].eth, cases[i].force, why, sizeof why);
        EXPECT(got == cases[i].want, "%s: got GID index %d, want %d (%s)", cases[i].what, got, cases[i].want, why);
        EXPECT(got >= 0 || why[0], "%s: no reason given", cases[i].what);
        EXPECT(cases[i].force < 0 || got >= 0 || strstr(why, "STITCH_IB_GID_INDEX"), "%s: '%s'", cases[i].what, why);
    }
}

/* ---- credit ------------------------------------------------------------------------------------------------- */

/* A stream's two halves and what is on the wire between them, in order each way (RC). */
typedef struct wire {
    st_vcredit s, r;            /* s: the sender's view; r: the receiver's */
    uint32_t fwd[4096];         /* data writes in flight (lengths) */
    int nf, hf;
    uint32_t back[4096];        /* credits in flight */
    int nb, hb;
    int recv_used;              /* receiver's receives consumed by data writes not yet polled... */
    int recv_back;              /* sender's receives consumed by credits not yet polled */
    long writes, credits;
} wire;

static unsigned rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

/* One random event; returns 1 when something happened. */
static int step(wire *w, unsigned *seed, int drain)
{
    int what = drain ? (int)(rnd(seed) % 3) + 1 : (int)(rnd(seed) % 4);
    if (what == 0) { /* the sender writes */
        size_t want = 1 + rnd(seed) % (rnd(seed) % 4 == 0 ? 100000 : 300);
        size_t n = st_vcredit_room(&w->s, want);
        if (n == 0)
            return 0;
        EXPECT(w->s.wpos + n - w->s.acked <= w->s.cap, "sender overruns the ring");
        st_vcredit_wrote(&w->s, n);
        w->fwd[(w->hf + w->nf++) % 4096] = (uint32_t)n;
        w->recv_used++;
        w->writes++;
        EXPECT(w->recv_used + w->recv_back <= 4 * ST_VCREDIT_WRITES, "receives exhausted: %d data + %d credits",
               w->recv_used, w->recv_back);
        return 1;
    }
    if (what == 1 && w->nf) { /* a data write arrives at the receiver (polled) */
        uint32_t n = w->fwd[w->hf];
        w->hf = (w->hf + 1) % 4096, w->nf--;
        EXPECT(w->r.head + n - w->r.tail <= w->r.cap, "the ring overflows at the receiver");
        st_vcredit_arrived(&w->r, n);
        w->recv_used--;
        return 1;
    }
    if (what == 2 && w->r.head > w->r.tail) { /* the receiver consumes part or all of what it has */
        size_t have = (size_t)(w->r.head - w->r.tail), n = drain || rnd(seed) % 2 ? have : 1 + rnd(seed) % have;
        uint32_t imm = st_vcredit_consumed(&w->r, n);
        if (imm) {
            EXPECT(imm & ST_VIMM_CREDIT, "a credit without its flag");
            w->back[(w->hb + w->nb++) % 4096] = imm;
            w->recv_back++;
            w->credits++;
        }
        return 1;
    }
    if (what == 3 && w->nb) { /* a credit arrives at the sender */
        st_vcredit_returned(&w->s, w->back[w->hb]);
        w->hb = (w->hb + 1) % 4096, w->nb--;
        w->recv_back--;
        return 1;
    }
    return 0;
}

static void t_credit(void)
{
    static const size_t caps[] = {4096, 65536, (size_t)8 << 20};
    for (size_t c = 0; c < 3; c++)
        for (unsigned seed0 = 1; seed0 <= 20; seed0++) {
            wire *w = calloc(1, sizeof *w);
            unsigned seed = seed0;
            w->s.cap = w->r.cap = caps[c];
            for (int i = 0; i < 20000; i++)
                step(w, &seed, 0);
            for (int i = 0; i < 1000000 && (w->nf || w->nb || w->r.head != w->r.tail); i++)
                step(w, &seed, 1);
            EXPECT(!w->nf && !w->nb && w->r.head == w->r.tail, "cap %zu seed %u: did not drain", caps[c], seed0);
            EXPECT(w->s.wpos == w->s.acked, "cap %zu seed %u: %llu bytes never returned after the receiver consumed "
                   "everything (a sender waiting for room would hang)", caps[c], seed0,
                   (unsigned long long)(w->s.wpos - w->s.acked));
            EXPECT(w->s.uncovered == 0, "cap %zu seed %u: %u writes never covered", caps[c], seed0, w->s.uncovered);
            EXPECT(w->credits <= 2 * w->writes, "cap %zu seed %u: %ld credits for %ld writes", caps[c], seed0,
                   w->credits, w->writes);
            EXPECT(w->writes > 100, "cap %zu seed %u: only %ld writes: the stream stalled", caps[c], seed0, w->writes);
            free(w);
        }
}

/* ---- mrc: the registration cache (mr_cache.c) on counting callbacks ---------------------------------------- */

typedef struct mrc_world {
    int live, regs;          /* registrations alive, made */
    uintptr_t unmapped_lo, unmapped_hi; /* a range `mapped` says is gone */
} mrc_world;

static void *w_reg(void *ctx, void *lo, size_t len, int access, uint32_t *lkey, uint32_t *rkey)
{
    mrc_world *w = ctx;
    (void)lo, (void)len, (void)access;
    w->live++, w->regs++;
    *lkey = *rkey = (uint32_t)w->regs;
    return malloc(1);
}

static void w_dereg(void *ctx, void *mr)
{
    ((mrc_world *)ctx)->live--;
    free(mr);
}

static int w_mapped(void *ctx, uintptr_t lo, size_t len)
{
    mrc_world *w = ctx;
    return lo + len <= w->unmapped_lo || lo >= w->unmapped_hi;
}

#define MB ((uintptr_t)1 << 20)

static void t_mrc(void)
{
    mrc_world w = {0, 0, 0, 0};
    st_mrc c = {.bound = 4 * MB, .reg = w_reg, .dereg = w_dereg, .mapped = w_mapped, .ctx = &w};
    char *base = (char *)(64 * MB); /* addresses only: the callbacks never touch memory */
    /* a hit registers nothing; a remote entry serves a local request, not the other way round */
    st_mrc_ent *a = st_mrc_get(&c, base + 100, 5000, ST_MRC_REMOTE);
    CHECK(a && w.regs == 1 && a->lo == (uintptr_t)base && a->hi == (uintptr_t)base + 8192, "first registration");
    st_mrc_release(&c, a);
    st_mrc_ent *b = st_mrc_get(&c, base + 200, 100, ST_MRC_LOCAL);
    CHECK(b == a && w.regs == 1 && c.st.hits == 1, "a covered request is a hit (regs %d)", w.regs);
    st_mrc_release(&c, b);
    /* slices of one buffer in turn join into one registration */
    for (int i = 0; i < 4; i++) {
        st_mrc_ent *e = st_mrc_get(&c, base + 8192 + (size_t)i * 65536, 65536, ST_MRC_REMOTE);
        CHECK(e != NULL, "slice %d", i);
        if (e)
            st_mrc_release(&c, e);
    }
    st_mrc_ent *whole = st_mrc_get(&c, base, 8192 + 4 * 65536, ST_MRC_REMOTE);
    CHECK(whole && whole->lo == (uintptr_t)base && whole->hi == (uintptr_t)base + 8192 + 4 * 65536 && w.live == 1,
          "the slices joined: live %d", w.live);
    if (whole)
        st_mrc_release(&c, whole);
    /* LRU eviction under the bound; a busy entry is never evicted; too much busy: refused (ENOSPC) */
    st_mrc_ent *x1 = st_mrc_get(&c, base + 8 * MB, MB, ST_MRC_LOCAL);       /* pinned: 0.26 + 1 MiB */
    st_mrc_ent *x2 = st_mrc_get(&c, base + 16 * MB, 3 * MB, ST_MRC_LOCAL);  /* over 4 MiB: the oldest idle goes */
    CHECK(x1 && x2 && c.st.evictions == 1 && c.st.pinned == 4 * MB, "evicted %llu, pinned %zu",
          (unsigned long long)c.st.evictions, c.st.pinned);
    errno = 0;
    st_mrc_ent *x3 = st_mrc_get(&c, base + 24 * MB, MB, ST_MRC_LOCAL); /* x1, x2 busy: cannot fit */
    CHECK(!x3 && errno == ENOSPC && c.st.refused == 1 && x1 && x1->hi && x2->hi, "busy entries stay, the request "
          "is refused (errno %d)", errno);
    CHECK(!st_mrc_get(&c, base + 32 * MB, 5 * MB, ST_MRC_LOCAL) && errno == ENOSPC, "larger than the bound");
    st_mrc_release(&c, x1);
    x3 = st_mrc_get(&c, base + 24 * MB, MB, ST_MRC_LOCAL); /* x1 idle now: evicted for it */
    CHECK(x3 && c.st.evictions == 2 && c.st.pinned == 4 * MB && c.st.pinned_max == 4 * MB, "x1 evicted for x3");
    /* invalidation: an idle entry goes at once, a busy one when released */
    int live = w.live;
    st_mrc_invalidate(&c, base + 16 * MB + 4096, 1); /* x2, busy */
    CHECK(w.live == live && x2->dead, "a busy entry stays until released");
    st_mrc_release(&c, x2);
    CHECK(w.live == live - 1, "released, the invalidated entry is deregistered");
    st_mrc_ent *again = st_mrc_get(&c, base + 16 * MB, 4096, ST_MRC_LOCAL);
    CHECK(again && again->lo == (uintptr_t)base + 16 * MB && again->hi == (uintptr_t)base + 16 * MB + 4096,
          "re-registered after invalidation");
    if (again)
        st_mrc_release(&c, again);
    /* a range no longer all mapped is noticed on the next hit */
    if (x3)
        st_mrc_release(&c, x3);
    int regs = w.regs;
    w.unmapped_lo = (uintptr_t)base + 24 * MB + MB / 2, w.unmapped_hi = (uintptr_t)base + 26 * MB;
    st_mrc_ent *y = st_mrc_get(&c, base + 24 * MB, 4096, ST_MRC_LOCAL);
    CHECK(y && w.regs == regs + 1 && y->hi == (uintptr_t)base + 24 * MB + 4096, "a stale entry was used");
    if (y)
        st_mrc_release(&c, y);
    st_mrc_clear(&c);
    CHECK(w.live == 0 && c.st.pinned == 0, "clear: %d live, %zu pinned", w.live, c.st.pinned);
}

int main(int argc, char **argv)
{
    const char *sc = argc > 1 ? argv[1] : "all";
    int all = strcmp(sc, "all") == 0, ran = 0;
    if (all || strcmp(sc, "dev") == 0)
        t_dev(), ran++;
    if (all || strcmp(sc, "gid") == 0)
        t_gid(), ran++;
    if (all || strcmp(sc, "credit") == 0)
        t_credit(), ran++;
    if (all || strcmp(sc, "mrc") == 0)
        t_mrc(), ran++;
    if (!ran) {
        fprintf(stderr, "usage: test_verbs_logic [dev|gid|credit|all]\n");
        return 2;
    }
    return st_check_summary(sc);
}
