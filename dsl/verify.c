/* verify.c - prove each algorithm of a catalogue correct for every p in a range (see verify.h).
 *
 * Abstract execution over units: the value of unit u at rank x is the set of ranks whose contribution it holds
 * (a bitset of p bits). Initially rank x holds {x} in every unit it owns (all units for reductions; its own block
 * for all_gather). A copy replaces the destination's set, a reduce unions it and must find the two sets disjoint.
 * Each step is first checked for hazards (a rank reading a unit it writes in the same step, two writes of one
 * unit where one is a copy), then applied in schedule order, so the abstract state evolves exactly like the
 * runtime's buffers. Ranges are swept from the smallest p up, so the first failure is the smallest example.
 */
#include "verify.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sched.h"

typedef struct absstate {
    const st_sched *s;
    int p, U, W;           /* W: 64-bit words per set */
    uint64_t *val;         /* p * U * W */
    int *rmark, *wmark;    /* p * U: step + 1 of the last read / write */
    int *wcopy;            /* p * U: the last write of this step was a copy (1) or reduce (0) */
    int *wsrc;             /* p * U: source of that write */
    char msg[600];
    int line;
} absstate;

static uint64_t *at(absstate *a, int rank, int u)
{
    return a->val + ((size_t)rank * a->U + u) * a->W;
}

static int empty(const absstate *a, const uint64_t *v)
{
    for (int i = 0; i < a->W; i++)
        if (v[i])
            return 0;
    return 1;
}

static int count(const absstate *a, const uint64_t *v)
{
    int n = 0;
    for (int i = 0; i < a->W; i++)
        n += __builtin_popcountll(v[i]);
    return n;
}

/* "{0,1,3}" (at most 8 members shown). */
static void set_text(const absstate *a, const uint64_t *v, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "{");
    int shown = 0;
    for (int x = 0; x < a->p && o < len; x++)
        if (v[x / 64] >> (x % 64) & 1) {
            if (shown == 8) {
                o += (size_t)snprintf(buf + o, len - o, ",...");
                break;
            }
            o += (size_t)snprintf(buf + o, len - o, shown ? ",%d" : "%d", x);
            shown++;
        }
    if (o < len)
        snprintf(buf + o, len - o, "}");
}

static int failf(absstate *a, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int failf(absstate *a, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
    a->line = line;
    return -1;
}

static int block_of(const absstate *a, int u)
{
    return u / (a->U / st_coll_nblocks(a->s->algo->coll, a->p));
}

/* Who holds what before the first step: -1 nothing, else the one contributor. */
static int init_holder(const absstate *a, int x, int u)
{
    int root = a->s->root, b = block_of(a, u);
    switch (a->s->algo->coll) {
    case ST_COLL_ALL_GATHER:
    case ST_COLL_GATHER: return b == x ? x : -1;
    case ST_COLL_BROADCAST:
    case ST_COLL_SCATTER: return x == root ? root : -1;
    case ST_COLL_ALL_TO_ALL:
    case ST_COLL_ALL_TO_ALL_V: return b / a->p == x ? x : -1;
    default: return x; /* all_reduce, reduce_scatter, reduce */
    }
}

/* What unit u of rank x must hold after the last step: -2 don't care, -1 all p contributions, else one rank's. */
static int post_want(const absstate *a, int x, int u)
{
    int root = a->s->root, b = block_of(a, u);
    switch (a->s->algo->coll) {
    case ST_COLL_ALL_REDUCE: return -1;
    case ST_COLL_REDUCE_SCATTER: return b == x ? -1 : -2;
    case ST_COLL_REDUCE: return x == root ? -1 : -2;
    case ST_COLL_ALL_GATHER: return b;
    case ST_COLL_GATHER: return x == root ? b : -2;
    case ST_COLL_BROADCAST: return root;
    case ST_COLL_SCATTER: return b == x ? root : -2;
    default: return b % a->p == x ? b / a->p : -2; /* all_to_all(_v): block i*p+j goes from i to j */
    }
}

static void init_state(absstate *a)
{
    for (int x = 0; x < a->p; x++)
        for (int u = 0; u < a->U; u++) {
            int h = init_holder(a, x, u);
            if (h >= 0)
                at(a, x, u)[h / 64] |= 1ull << (h % 64);
        }
}

/* Pass A of a step: hazards and "sends only what it holds". */
static int check_step(absstate *a, int step)
{
    const st_sched *s = a->s;
    for (int i = s->step_first[step]; i < s->step_first[step + 1]; i++) {
        const st_xfer *x = &s->xfers[i];
        for (int k = 0; k < x->nruns; k++) {
            const st_run *rn = &s->runs[x->run0 + k];
            for (int u = rn->start; u < rn->start + rn->len; u++) {
                size_t si = (size_t)x->src * a->U + u, di = (size_t)x->dst * a->U + u;
                if (empty(a, at(a, x->src, u)))
                    return failf(a, x->line, "at step %d rank %d sends unit %d to rank %d but holds no data for it",
                                 step, x->src, u, x->dst);
                if (x->src == x->dst)
                    continue; /* a local transfer within one buffer is a no-op */
                if (a->wmark[si] == step + 1)
                    return failf(a, x->line, "at step %d rank %d sends unit %d while it also receives it in the "
                                 "same step (from rank %d): read/write hazard", step, x->src, u, a->wsrc[si]);
                a->rmark[si] = step + 1;
                if (a->rmark[di] == step + 1)
                    return failf(a, x->line, "at step %d rank %d receives unit %d from rank %d while it also "
                                 "sends it in the same step: read/write hazard", step, x->dst, u, x->src);
                if (a->wmark[di] == step + 1 && (a->wcopy[di] || x->op == ST_X_COPY))
                    return failf(a, x->line, "at step %d unit %d of rank %d is written by rank %d and by rank %d, "
                                 "and one of them copies: the result would depend on arrival order", step, u,
                                 x->dst, a->wsrc[di], x->src);
                a->wmark[di] = step + 1;
                a->wcopy[di] = x->op == ST_X_COPY;
                a->wsrc[di] = x->src;
            }
        }
    }
    return 0;
}

/* Pass B of a step: apply the transfers in schedule order. */
static int apply_step(absstate *a, int step)
{
    const st_sched *s = a->s;
    char have[120], brings[120];
    for (int i = s->step_first[step]; i < s->step_first[step + 1]; i++) {
        const st_xfer *x = &s->xfers[i];
        for (int k = 0; k < x->nruns; k++) {
            const st_run *rn = &s->runs[x->run0 + k];
            for (int u = rn->start; u < rn->start + rn->len; u++) {
                uint64_t *d = at(a, x->dst, u), *v = at(a, x->src, u);
                if (x->src == x->dst)
                    continue;
                if (x->op == ST_X_COPY) {
                    memcpy(d, v, sizeof(uint64_t) * a->W);
                    continue;
                }
                if (empty(a, d))
                    return failf(a, x->line, "at step %d rank %d reduces into unit %d, which it does not hold",
                                 step, x->dst, u);
                for (int w = 0; w < a->W; w++)
                    if (d[w] & v[w]) {
                        set_text(a, d, have, sizeof have);
                        set_text(a, v, brings, sizeof brings);
                        return failf(a, x->line, "at step %d rank %d reduces unit %d from rank %d twice over: it "
                                     "holds %s and receives %s (a contribution reduced twice)", step, x->dst, u,
                                     x->src, have, brings);
                    }
                for (int w = 0; w < a->W; w++)
                    d[w] |= v[w];
            }
        }
    }
    return 0;
}

static int check_post(absstate *a)
{
    char have[120];
    for (int x = 0; x < a->p; x++)
        for (int u = 0; u < a->U; u++) {
            uint64_t *v = at(a, x, u);
            int want = post_want(a, x, u), n = count(a, v);
            if (want == -2 || (want == -1 && n == a->p) || (want >= 0 && n == 1 && (v[want / 64] >> (want % 64) & 1)))
                continue;
            set_text(a, v, have, sizeof have);
            if (want == -1)
                return failf(a, a->s->algo->line, "after the last step unit %d of rank %d holds the contributions "
                             "of %s, not of all %d ranks", u, x, have, a->p);
            return failf(a, a->s->algo->line, "after the last step unit %d of rank %d holds %s, not rank %d's data",
                         u, x, have, want);
        }
    return 0;
}

static int run_abstract(absstate *a)
{
    size_t n = (size_t)a->p * a->U;
    a->val = calloc(n * a->W, sizeof(uint64_t));
    a->rmark = calloc(n, sizeof(int));
    a->wmark = calloc(n, sizeof(int));
    a->wcopy = calloc(n, sizeof(int));
    a->wsrc = calloc(n, sizeof(int));
    int rc = -1;
    if (!a->val || !a->rmark || !a->wmark || !a->wcopy || !a->wsrc) {
        failf(a, 0, "out of memory for p = %d, %d units", a->p, a->U);
        goto out;
    }
    init_state(a);
    for (int st = 0; st < a->s->nsteps; st++)
        if (check_step(a, st) || apply_step(a, st))
            goto out;
    rc = check_post(a);
out:
    free(a->val);
    free(a->rmark);
    free(a->wmark);
    free(a->wcopy);
    free(a->wsrc);
    return rc;
}

/* "p = 6", "p = 6, root 3", "p = 6 as 3x2" */
static void inst_text(const st_algo *al, const st_inst *in, char *buf, size_t len)
{
    int o = snprintf(buf, len, "p = %d", in->p);
    if (al->flags & ST_ALGO_USES_ROOT)
        o += snprintf(buf + o, len - (size_t)o, ", root %d", in->root);
    if (in->topo)
        snprintf(buf + o, len - (size_t)o, " as %dx%d", in->topo->ngroups, in->p / in->topo->ngroups);
}

/* Verify one instantiation. Returns 0, or -1 with the failure printed. */
static int verify_one(const st_catalogue *cat, const st_algo *al, const st_inst *in, int *nsteps, int *nxfers,
                      FILE *out)
{
    st_sched s;
    st_err err;
    char what[80];
    inst_text(al, in, what, sizeof what);
    if (st_sched_build_ex(cat, al, in, &s, &err)) {
        fprintf(out, "%s:%d: error: %s %s cannot be instantiated for %s: %s\n", cat->file,
                err.line ? err.line : al->line, al->name, st_coll_name(al->coll), what, err.msg);
        return -1;
    }
    absstate a = {.s = &s, .p = in->p, .U = s.nunits, .W = (in->p + 63) / 64};
    int rc = run_abstract(&a);
    if (rc)
        fprintf(out, "%s:%d: error: %s %s is wrong for %s: %s\n", cat->file, a.line, al->name,
                st_coll_name(al->coll), what, a.msg);
    *nsteps = s.nsteps;
    *nxfers = s.nxfers;
    st_sched_free(&s);
    return rc;
}

/* Roots to try: all of them up to p = 16, then a sample that covers both ends, the middle and odd/even. */
static int next_root(const st_algo *al, int p, int root)
{
    if (!(al->flags & ST_ALGO_USES_ROOT))
        return root < 0 ? 0 : p;
    if (p <= 16)
        return root + 1;
    static const int sample[] = {0, 1, 2, 3};
    for (size_t i = 0; i < sizeof sample / sizeof *sample; i++)
        if (sample[i] > root)
            return sample[i];
    if (root < p / 2)
        return p / 2;
    if (root < p - 2)
        return p - 2;
    return root + 1;
}

/* Verify for p with every root (or sample) and, for topology-aware algorithms, every uniform grouping. */
static int verify_p(const st_catalogue *cat, const st_algo *al, int p, int *nsteps, int *nxfers, FILE *out)
{
    int32_t *arr = malloc(sizeof(int32_t) * (4 * (size_t)p + 2));
    int *sizes = malloc(sizeof(int) * (size_t)p);
    int rc = 0;
    if (!arr || !sizes) {
        fprintf(out, "%s: error: out of memory\n", cat->file);
        rc = -1;
    }
    for (int L = 1; L <= p && !rc; L++) {
        st_topo topo;
        int G = p / L, uses_topo = al->flags & ST_ALGO_USES_TOPO;
        if (p % L || (!uses_topo && L != p))
            continue;
        for (int g = 0; g < G; g++)
            sizes[g] = L;
        st_topo_uniform(&topo, p, G, sizes, arr, arr + G + 1, arr + G + 1 + p, arr + G + 1 + 2 * p);
        for (int root = next_root(al, p, -1); root < p && !rc; root = next_root(al, p, root)) {
            st_inst in = {.p = p, .root = root, .topo = uses_topo ? &topo : NULL};
            rc = verify_one(cat, al, &in, nsteps, nxfers, out);
        }
    }
    free(arr);
    free(sizes);
    return rc;
}

int st_verify(const st_catalogue *cat, const st_verify_opts *o, FILE *out)
{
    int matched = 0, failed = 0;
    for (int i = 0; i < cat->nalgos; i++) {
        const st_algo *al = &cat->algos[i];
        if ((o->algo && strcasecmp(o->algo, al->name) != 0) || (o->coll >= 0 && o->coll != al->coll))
            continue;
        matched++;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int nsteps = 0, nxfers = 0, bad = 0;
        for (int p = o->pmin; p <= o->pmax && !bad; p++)
            bad = verify_p(cat, al, p, &nsteps, &nxfers, out) != 0;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        failed += bad;
        if (!bad)
            fprintf(out, "verified %-12s %-15s p = %d..%d%s%s   (p = %d: %d steps, %d transfers)  %.3f s\n",
                    al->name, st_coll_name(al->coll), o->pmin, o->pmax,
                    al->flags & ST_ALGO_USES_ROOT ? ", roots" : "",
                    al->flags & ST_ALGO_USES_TOPO ? ", SxL groupings" : "", o->pmax, nsteps, nxfers,
                    (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    return matched ? failed : -1;
}
