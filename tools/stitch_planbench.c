/* stitch_planbench.c - how long one rank's plan takes to build, and how much it holds (docs/performance.md).
 *
 *   stitch-planbench [-n P,P,...] [-a ALGO,...] [-c COLL] [--rank R] [--whole] [--check]
 *
 * For each algorithm and p it builds rank R's plan (default p / 3) of the built-in catalogue the way a process rank
 * does (runtime/comm.c): its own part when the algorithm names its senders (`from`, st_sched_build_rank), else the
 * whole schedule. It prints the build time (best of three), the ranks instantiated and the bytes the plan holds
 * (the schedule part's transfers, runs and step index, and the plan's index arrays). --whole builds the whole
 * schedule instead (the path before `from`, and the threads engine's), for comparison. Topology-aware algorithms (ahc)
 * get two groups of unequal sizes, p/2 - p/8 and p/2 + p/8 (the LCM alignment when they share no factor).
 *
 * --check builds, for every rank, both its own plan and the whole schedule's part and compares them transfer by
 * transfer; it exits 1 on the first difference. The ctest run uses it over a grid of small p (tests/compiler.cmake).
 * A benchmark, not a timed test: nothing here fails on time.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry.h"
#include "st_sched.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const st_algo *find(const char *name, int coll)
{
    const st_catalogue *c = &st_builtin_catalogue;
    for (int i = 0; i < c->nalgos; i++)
        if (c->algos[i].coll == coll && strcmp(c->algos[i].name, name) == 0)
            return &c->algos[i];
    return NULL;
}

/* Two levels of two unequal groups for topology-aware algorithms. */
typedef struct topo_buf {
    st_topo t;
    int32_t *first, *members, *group_of, *index_of;
} topo_buf;

static int make_topo(topo_buf *b, int p)
{
    int sizes[2] = {p / 2 - p / 8, p - (p / 2 - p / 8)};
    b->first = malloc(sizeof(int32_t) * 3);
    b->members = malloc(sizeof(int32_t) * (size_t)p);
    b->group_of = malloc(sizeof(int32_t) * (size_t)p);
    b->index_of = malloc(sizeof(int32_t) * (size_t)p);
    if (!b->first || !b->members || !b->group_of || !b->index_of || sizes[0] < 1)
        return -1;
    return st_topo_uniform(&b->t, p, 2, sizes, b->first, b->members, b->group_of, b->index_of);
}

static void free_topo(topo_buf *b)
{
    free(b->first), free(b->members), free(b->group_of), free(b->index_of);
}

static int force_whole; /* --whole */

/* Rank's own plan as a process builds it: 0, or -1 with the reason printed. */
static int build(const st_algo *a, const st_inst *in, int rank, st_sched *s, int *runs)
{
    st_err err;
    int rc = force_whole ? 1 : st_sched_build_rank(&st_builtin_catalogue, a, in, rank, s, runs, &err);
    if (rc == 1) {
        *runs = in->p;
        rc = st_sched_build_ex(&st_builtin_catalogue, a, in, s, &err);
    }
    if (rc)
        fprintf(stderr, "stitch-planbench: %s %s p = %d: line %d: %s\n", a->name, st_coll_name(a->coll), in->p,
                err.line, err.msg);
    return rc ? -1 : 0;
}

static int same_runs(const st_sched *a, int ra, const st_sched *b, int rb, int n)
{
    return memcmp(&a->runs[ra], &b->runs[rb], sizeof(st_run) * (size_t)n) == 0;
}

/* Every rank's own plan against the whole schedule's part (st_plan_build on each). */
static int check(const st_algo *a, const st_inst *in)
{
    st_sched whole;
    st_err err;
    if (st_sched_build_ex(&st_builtin_catalogue, a, in, &whole, &err)) {
        if (err.refused)
            return 0; /* its `require` does not hold here (pipeline on unequal groups) */
        fprintf(stderr, "stitch-planbench: %s p = %d: %s\n", a->name, in->p, err.msg);
        return -1;
    }
    int bad = 0, fast = 0;
    for (int r = 0; r < in->p && !bad; r++) {
        st_sched own;
        int runs;
        int rc = st_sched_build_rank(&st_builtin_catalogue, a, in, r, &own, &runs, &err);
        if (rc == 1)
            break;
        fast = 1;
        st_plan pw, po;
        if (rc || st_plan_build(&whole, r, &pw) || st_plan_build(&own, r, &po)) {
            fprintf(stderr, "stitch-planbench: %s p = %d rank %d: %s\n", a->name, in->p, r, rc ? err.msg : "no memory");
            bad = 1;
            break;
        }
        bad = own.nsteps != whole.nsteps || own.nunits != whole.nunits || own.nscratch != whole.nscratch;
        for (int side = 0; side < 2 && !bad; side++) {
            const int32_t *fw = side ? pw.sends : pw.recvs, *fo = side ? po.sends : po.recvs;
            const int32_t *iw = side ? pw.send_first : pw.recv_first, *io = side ? po.send_first : po.recv_first;
            for (int st = 0; st <= whole.nsteps && !bad; st++)
                bad = iw[st] != io[st];
            for (int i = 0; i < iw[whole.nsteps] && !bad; i++) {
                const st_xfer *x = &whole.xfers[fw[i]], *y = &own.xfers[fo[i]];
                bad = x->step != y->step || x->src != y->src || x->dst != y->dst || x->op != y->op ||
                      x->nruns != y->nruns || x->dnruns != y->dnruns || x->line != y->line || x->col != y->col ||
                      st_xfer_mapped(x) != st_xfer_mapped(y) || !same_runs(&whole, x->run0, &own, y->run0, x->nruns) ||
                      !same_runs(&whole, x->drun0, &own, y->drun0, x->dnruns);
            }
        }
        if (bad)
            fprintf(stderr, "stitch-planbench: %s %s p = %d root %d: rank %d's own plan differs from the whole "
                    "schedule's\n", a->name, st_coll_name(a->coll), in->p, in->root, r);
        st_plan_free(&pw), st_plan_free(&po), st_sched_free(&own);
    }
    st_sched_free(&whole);
    return bad ? -1 : fast;
}

static int bench(const st_algo *a, const st_inst *in, int rank)
{
    double best = 1e30;
    int runs = 0;
    size_t bytes = 0;
    const char *how = "";
    for (int k = 0; k < 3; k++) {
        st_sched s;
        st_plan pl;
        double t0 = now();
        if (build(a, in, rank, &s, &runs) || st_plan_build(&s, rank, &pl))
            return -1;
        double t = now() - t0;
        if (t < best)
            best = t;
        bytes = st_sched_bytes(&s) + sizeof(int32_t) * (2 * ((size_t)pl.nsteps + 1) +
                                                         (size_t)pl.send_first[pl.nsteps] +
                                                         (size_t)pl.recv_first[pl.nsteps]);
        how = s.partial ? "own (from)" : "whole";
        int nsteps = s.nsteps;
        st_plan_free(&pl);
        st_sched_free(&s);
        if (k == 0)
            printf("%-8s %-12s %7d %6d %7d  %-11s", a->name, st_coll_name(a->coll), in->p, nsteps, runs, how);
        if (best > 2.0)
            break; /* one try is enough to say it is slow */
    }
    printf(" %12.3f %12zu\n", best * 1e3, bytes);
    return 0;
}

int main(int argc, char **argv)
{
    const char *ps = "1024,8192,65536", *algos = "ring,nhr,nb,rhd,ahc", *coll = "all_reduce";
    int do_check = 0, rank = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check"))
            do_check = 1;
        else if (!strcmp(argv[i], "--whole"))
            force_whole = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            ps = argv[++i];
        else if (!strcmp(argv[i], "-a") && i + 1 < argc)
            algos = argv[++i];
        else if (!strcmp(argv[i], "-c") && i + 1 < argc)
            coll = argv[++i];
        else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
            rank = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: stitch-planbench [-n P,P,...|-n A..B] [-a ALGO,...] [-c COLL] [--rank R] [--whole] [--check]\n");
            return 2;
        }
    }
    int c = st_coll_from_name(coll), lo = 0, hi = -1, failed = 0;
    if (c < 0) {
        fprintf(stderr, "stitch-planbench: unknown collective '%s'\n", coll);
        return 2;
    }
    if (sscanf(ps, "%d..%d", &lo, &hi) != 2)
        hi = -1;
    if (!do_check)
        printf("%-8s %-12s %7s %6s %7s  %-11s %12s %12s\n", "algo", "collective", "p", "steps", "ranks", "plan",
               "time_ms", "plan_bytes");
    char *list = strdup(algos);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const st_algo *a = find(name, c);
        if (!a) {
            fprintf(stderr, "stitch-planbench: no algorithm '%s' for %s\n", name, coll);
            failed = 1;
            continue;
        }
        const char *q = ps;
        for (int p = hi >= 0 ? lo : atoi(q); p > 0 && (hi < 0 || p <= hi);) {
            topo_buf tb = {0};
            st_inst in = {.p = p};
            if ((a->flags & ST_ALGO_USES_TOPO) && p >= 4 && make_topo(&tb, p) == 0)
                in.topo = &tb.t;
            for (int root = 0; root < (st_coll_rooted(c) && do_check ? p : 1); root++) {
                in.root = root;
                if (do_check) {
                    int rc = check(a, &in);
                    failed |= rc < 0;
                    if (rc >= 0 && root == 0 && p == (hi >= 0 ? lo : atoi(ps)))
                        printf("%s %s: %s\n", a->name, coll, rc ? "own plans equal the whole schedule's" :
                               "no fast path (whole schedule)");
                } else
                    failed |= bench(a, &in, rank >= 0 && rank < p ? rank : p / 3) != 0;
            }
            free_topo(&tb);
            if (hi >= 0)
                p++;
            else {
                q = strchr(q, ',');
                p = q ? atoi(++q) : 0;
            }
        }
    }
    free(list);
    return failed;
}
