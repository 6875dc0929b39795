/* test_placement.c - groups from host ids (st_topo_by_key), and pipeline on groups whose ranks are not consecutive.
 *
 * Process mode groups the ranks of each host (runtime/placement.c), and launchers may place ranks round-robin, so
 * a group's members need not be consecutive. The table below gives host ids per rank and the groups expected:
 * ordered by their lowest rank, members in rank order, whatever the ids' numeric order. Then pipeline's three
 * collectives are instantiated on such groups exactly as a communicator does (st_sched_build_ex) and run
 * abstractly: every unit of every rank carries the set of ranks whose contribution it holds, and the result must
 * be the collective's (the verifier, dsl/verify.c, does this for consecutive groups only).
 */
#include <stdint.h>

#include "registry.h"
#include "runner.h"
#include "st_sched.h"

#define MAXP 16

typedef struct topo_case {
    int p;
    uint64_t host[MAXP];
    const char *want; /* the groups as "{0,2,4} {1,3}" */
} topo_case;

static const topo_case topo_cases[] = {
    {5, {7, 9, 7, 9, 7}, "{0,2,4} {1,3}"},             /* round-robin over two hosts */
    {5, {9, 7, 9, 7, 9}, "{0,2,4} {1,3}"},             /* ids in the other numeric order: same groups */
    {5, {5, 5, 3, 3, 3}, "{0,1} {2,3,4}"},             /* by slot, sizes 2 + 3 */
    {6, {1, 2, 3, 1, 2, 3}, "{0,3} {1,4} {2,5}"},     /* three hosts, round-robin */
    {6, {4, 8, 8, 4, 9, 4}, "{0,3,5} {1,2} {4}"},     /* irregular */
    {4, {1, 1, 1, 1}, "{0,1,2,3}"},                    /* one host: one group */
    {4, {4, 3, 2, 1}, "{0} {1} {2} {3}"},              /* a host per rank */
    {1, {42}, "{0}"},
};

/* Build the groups of `host` and check every array against each other and against `want`. */
static void check_topo(int p, const uint64_t *host, st_topo *t, int32_t *mem, const char *want)
{
    int ng = st_topo_by_key(t, p, host, mem, mem + p + 1, mem + 2 * p + 1, mem + 3 * p + 1);
    CHECK(ng >= 1 && ng == t->ngroups, "p %d: %d groups", p, ng);
    char got[256] = "";
    size_t n = 0;
    for (int g = 0; g < ng; g++) {
        CHECK(t->first[g] < t->first[g + 1], "group %d is empty", g);
        for (int i = t->first[g]; i < t->first[g + 1]; i++) {
            int r = t->members[i];
            CHECK(t->group_of[r] == g && t->index_of[r] == i - t->first[g], "rank %d: group %d index %d", r,
                  t->group_of[r], t->index_of[r]);
            CHECK(host[r] == host[t->members[t->first[g]]], "rank %d is not on its group's host", r);
            CHECK(i == t->first[g] || t->members[i - 1] < r, "group %d is not in rank order", g);
            if (want)
                n += (size_t)snprintf(got + n, sizeof got - n, "%s%d%s", i == t->first[g] ? (g ? " {" : "{") : ",",
                                      r, i + 1 == t->first[g + 1] ? "}" : "");
        }
        CHECK(g == 0 || t->members[t->first[g - 1]] < t->members[t->first[g]], "groups not ordered by lowest rank");
    }
    CHECK(t->first[ng] == p, "groups hold %d of %d ranks", t->first[ng], p);
    CHECK(!want || strcmp(got, want) == 0, "got %s, want %s", got, want);
}

static void test_by_key(void)
{
    for (size_t c = 0; c < sizeof topo_cases / sizeof *topo_cases; c++) {
        int32_t mem[4 * MAXP + 1];
        st_topo t;
        check_topo(topo_cases[c].p, topo_cases[c].host, &t, mem, topo_cases[c].want);
    }
}

/* 65536 ranks on 4096 hosts, placed at random: the grouping is not quadratic, and still consistent. */
static void test_by_key_large(void)
{
    enum { P = 65536 };
    static uint64_t host[P];
    static int32_t mem[4 * P + 1];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int r = 0; r < P; r++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        host[r] = (x % 4096) * 0x100000001b3ull; /* ids spread over 64 bits, as hashes are */
    }
    st_topo t;
    double t0 = st_now();
    check_topo(P, host, &t, mem, NULL);
    CHECK(st_now() - t0 < 2.0, "grouping 65536 ranks took %.2f s", st_now() - t0);
    CHECK(t.ngroups == 4096, "%d groups", t.ngroups);
}

/* Run the schedule on contribution sets (bit q: rank q's input) and check the collective's result. */
static void run_abstract(const st_sched *s, int coll, uint64_t st[MAXP][MAXP])
{
    int p = s->p;
    for (int r = 0; r < p; r++)
        for (int u = 0; u < s->nunits; u++)
            st[r][u] = coll == STITCH_ALL_GATHER ? (u == r ? 1ull << r : 0) : 1ull << r;
    for (int step = 0; step < s->nsteps; step++) {
        uint64_t before[MAXP][MAXP];
        memcpy(before, st, sizeof before);
        for (int i = s->step_first[step]; i < s->step_first[step + 1]; i++) {
            const st_xfer *x = &s->xfers[i];
            CHECK(x->run0 == x->drun0, "pipeline does not use `at`");
            for (int k = 0; k < x->nruns; k++)
                for (int u = s->runs[x->run0 + k].start; u < s->runs[x->run0 + k].start + s->runs[x->run0 + k].len; u++) {
                    uint64_t v = before[x->src][u];
                    CHECK(v != 0, "step %d: rank %d sends unit %d it does not hold", step, x->src, u);
                    if (x->op == ST_X_REDUCE) {
                        CHECK((st[x->dst][u] & v) == 0, "step %d: unit %d reduced twice at rank %d", step, u, x->dst);
                        st[x->dst][u] |= v;
                    } else {
                        st[x->dst][u] = v;
                    }
                }
        }
    }
}

static void check_pipeline(int coll, int p, const uint64_t *host)
{
    int32_t mem[4 * MAXP + 1];
    st_topo t;
    check_topo(p, host, &t, mem, NULL);
    const st_algo *a = st_registry_find("pipeline", (stitch_coll_t)coll);
    CHECK(a != NULL, "no pipeline for %s", stitch_coll_name((stitch_coll_t)coll));
    st_inst in = {.p = p, .root = 0, .topo = &t};
    st_sched s;
    st_err err;
    CHECK(st_sched_build_ex(&st_builtin_catalogue, a, &in, &s, &err) == 0, "%s p %d: %s", stitch_coll_name(coll), p,
          err.msg);
    CHECK(s.nunits == p && s.nscratch == 0, "units %d scratch %d", s.nunits, s.nscratch);
    static uint64_t st[MAXP][MAXP];
    run_abstract(&s, coll, st);
    uint64_t all = p == 64 ? ~0ull : (1ull << p) - 1;
    for (int r = 0; r < p; r++)
        for (int u = 0; u < p; u++) {
            if (coll == STITCH_REDUCE_SCATTER && u != r)
                continue;
            uint64_t want = coll == STITCH_ALL_GATHER ? 1ull << u : all;
            CHECK(st[r][u] == want, "%s p %d: rank %d unit %d holds %#llx, want %#llx", stitch_coll_name(coll), p, r,
                  u, (unsigned long long)st[r][u], (unsigned long long)want);
        }
    st_sched_free(&s);
}

/* Equal-sized hosts (pipeline's requirement), ranks interleaved in several ways. */
static void test_pipeline_interleaved(void)
{
    static const uint64_t hosts[][MAXP] = {
        {1, 2, 1, 2, 1, 2},          /* {0,2,4} {1,3,5} */
        {1, 2, 2, 1, 2, 1},          /* {0,3,5} {1,2,4} */
        {3, 2, 1, 3, 2, 1},          /* {0,3} {1,4} {2,5} */
        {5, 6, 7, 5, 6, 7, 5, 6, 7}, /* {0,3,6} {1,4,7} {2,5,8} */
        {1, 2, 2, 1, 3, 3, 4, 4},    /* four hosts of two */
    };
    static const int ps[] = {6, 6, 6, 9, 8};
    static const int colls[] = {STITCH_ALL_REDUCE, STITCH_ALL_GATHER, STITCH_REDUCE_SCATTER};
    for (size_t h = 0; h < sizeof ps / sizeof *ps; h++)
        for (size_t c = 0; c < 3; c++)
            check_pipeline(colls[c], ps[h], hosts[h]);
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"by_key", test_by_key, 10},
        {"by_key_large", test_by_key_large, 30},
        {"pipeline_interleaved", test_pipeline_interleaved, 30},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
