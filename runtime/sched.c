/* sched.c - instantiate a step table for p ranks (see sched.h).
 *
 * The VM runs each rank's program; the sink below records its transfers in rank order, each transfer's units
 * normalised to sorted, merged runs. A stable counting sort by step then gives the schedule order (step, src,
 * emission order), which is also the order in which a receiver applies several reductions into one unit: the
 * fixed order that makes results deterministic.
 */
#include "sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

typedef struct range {
    int64_t lo, hi;
} range;

typedef struct builder {
    const st_catalogue *cat;
    const st_algo *algo;
    int p, rank, nsteps;  /* nsteps: steps this rank has begun */
    st_xfer *x;
    int nx, capx;
    st_run *runs;
    int nruns, capruns;
    range *tmp;
    int captmp;
} builder;

static int grow(void **v, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int cap2 = *cap ? *cap : 64;
    while (cap2 < need) {
        if (cap2 > (1 << 29))
            return -1;
        cap2 *= 2;
    }
    void *n = realloc(*v, size * (size_t)cap2);
    if (!n)
        return -1;
    *v = n;
    *cap = cap2;
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int where(builder *b, int line, st_err *err, const char *what)
{
    err->line = line;
    snprintf(err->msg, sizeof err->msg, "%s (p = %d, rank %d)", what, b->p, b->rank);
    return -1;
}

static int on_step(void *ctx, int line, st_err *err)
{
    builder *b = ctx;
    b->nsteps++;
    return 0;
}

/* Sort and merge the ranges into runs appended to b->runs; returns the number of units. */
static int64_t add_runs(builder *b, const int64_t *lo, const int64_t *hi, int n, int *nruns)
{
    if (grow((void **)&b->tmp, &b->captmp, n, sizeof(range)))
        return -1;
    for (int i = 0; i < n; i++)
        b->tmp[i] = (range){lo[i], hi[i]};
    qsort(b->tmp, (size_t)n, sizeof(range), cmp_range);
    int64_t units = 0;
    *nruns = 0;
    for (int i = 0; i < n;) {
        range cur = b->tmp[i++];
        while (i < n && b->tmp[i].lo <= cur.hi + 1) {
            if (b->tmp[i].hi > cur.hi)
                cur.hi = b->tmp[i].hi;
            i++;
        }
        if (grow((void **)&b->runs, &b->capruns, b->nruns + 1, sizeof(st_run)))
            return -1;
        b->runs[b->nruns++] = (st_run){(int32_t)cur.lo, (int32_t)(cur.hi - cur.lo + 1)};
        units += cur.hi - cur.lo + 1;
        (*nruns)++;
    }
    return units;
}

static int on_send(void *ctx, int64_t dst, int op, const int64_t *lo, const int64_t *hi, int nsrc, int n, int line,
                   st_err *err)
{
    builder *b = ctx;
    char what[200];
    if (b->nsteps == 0)
        return where(b, line, err, "send outside any step");
    if (dst < 0 || dst >= b->p) {
        snprintf(what, sizeof what, "send to rank %lld, outside 0..%d", (long long)dst, b->p - 1);
        return where(b, line, err, what);
    }
    for (int i = 0; i < n; i++)
        if (lo[i] < 0 || hi[i] >= 2 * (int64_t)ST_MAX_UNITS) {
            snprintf(what, sizeof what, "unit %lld is out of range", (long long)(lo[i] < 0 ? lo[i] : hi[i]));
            return where(b, line, err, what);
        }
    if (grow((void **)&b->x, &b->capx, b->nx + 1, sizeof(st_xfer)))
        return where(b, line, err, "out of memory");
    st_xfer *x = &b->x[b->nx];
    *x = (st_xfer){.step = b->nsteps - 1, .src = b->rank, .dst = (int32_t)dst, .op = op, .run0 = b->nruns,
                   .line = line};
    int64_t units = add_runs(b, lo, hi, nsrc, &x->nruns);
    if (units < 0)
        return where(b, line, err, "out of memory");
    x->nunits = (int32_t)units;
    x->drun0 = x->run0;
    x->dnruns = x->nruns;
    if (n > nsrc) {
        x->drun0 = b->nruns;
        int64_t dunits = add_runs(b, lo + nsrc, hi + nsrc, n - nsrc, &x->dnruns);
        if (dunits < 0)
            return where(b, line, err, "out of memory");
        if (dunits != units) {
            snprintf(what, sizeof what, "send of %lld units at %lld places: `at` must name as many units",
                     (long long)units, (long long)dunits);
            return where(b, line, err, what);
        }
    }
    b->nx++;
    return 0;
}

/* Check this rank's units against U (+ scratch) and its step count against rank 0's. */
static int check_rank(builder *b, int first_x, int64_t nunits, int64_t nscratch, int64_t *U, int *nsteps, st_err *err)
{
    char what[200];
    if (b->rank == 0) {
        *U = nunits;
        *nsteps = b->nsteps;
    } else if (nunits != *U) {
        snprintf(what, sizeof what, "rank %d declares %lld units but rank 0 declares %lld", b->rank,
                 (long long)nunits, (long long)*U);
        return where(b, b->algo->line, err, what);
    } else if (b->nsteps != *nsteps) {
        snprintf(what, sizeof what, "rank %d has %d steps but rank 0 has %d (step structure must not depend on r)",
                 b->rank, b->nsteps, *nsteps);
        return where(b, b->algo->line, err, what);
    }
    for (int i = first_x; i < b->nx; i++) {
        const st_xfer *x = &b->x[i];
        const st_run *last = &b->runs[x->run0 + x->nruns - 1], *dlast = &b->runs[x->drun0 + x->dnruns - 1];
        int64_t top = last->start + last->len > dlast->start + dlast->len ? last->start + last->len
                                                                           : dlast->start + dlast->len;
        if (top > nunits + nscratch) {
            snprintf(what, sizeof what, "send of unit %lld, outside 0..%lld", (long long)top - 1,
                     (long long)(nunits + nscratch - 1));
            return where(b, x->line, err, what);
        }
    }
    return 0;
}

/* Stable counting sort of the transfers by step. */
static int order_by_step(builder *b, st_sched *s)
{
    s->step_first = calloc((size_t)s->nsteps + 1, sizeof(int32_t));
    s->xfers = malloc(sizeof(st_xfer) * (size_t)(b->nx ? b->nx : 1));
    if (!s->step_first || !s->xfers)
        return -1;
    for (int i = 0; i < b->nx; i++)
        s->step_first[b->x[i].step + 1]++;
    for (int i = 0; i < s->nsteps; i++)
        s->step_first[i + 1] += s->step_first[i];
    int32_t *fill = malloc(sizeof(int32_t) * ((size_t)s->nsteps + 1));
    if (!fill)
        return -1;
    memcpy(fill, s->step_first, sizeof(int32_t) * ((size_t)s->nsteps + 1));
    for (int i = 0; i < b->nx; i++)
        s->xfers[fill[b->x[i].step]++] = b->x[i];
    free(fill);
    s->nxfers = b->nx;
    return 0;
}

int st_sched_build(const st_catalogue *cat, const st_algo *algo, int p, st_sched *out, st_err *err)
{
    st_inst in = {.p = p};
    return st_sched_build_ex(cat, algo, &in, out, err);
}

int st_sched_build_ex(const st_catalogue *cat, const st_algo *algo, const st_inst *in, st_sched *out, st_err *err)
{
    int p = in->p;
    builder b = {.cat = cat, .algo = algo, .p = p};
    st_vm_cache cache = {NULL, -1, 0};
    st_vm_sink sink = {&b, &cache, on_step, on_send};
    int64_t U = 0, nunits, nscratch, S = 0;
    int nsteps = 0;
    memset(out, 0, sizeof *out);
    if (p < 1 || p > ST_MAX_RANKS || in->root < 0 || in->root >= p ||
        ((algo->coll == ST_COLL_ALL_TO_ALL || algo->coll == ST_COLL_ALL_TO_ALL_V) && p > 1024)) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg, "p = %d or root = %d is out of range (p in 1..%d, 1..1024 for all_to_all, root in 0..p-1)", p,
                 in->root, ST_MAX_RANKS);
        return -1;
    }
    for (b.rank = 0; b.rank < p; b.rank++) {
        int first_x = b.nx;
        b.nsteps = 0;
        if (st_vm_run(cat, algo, in, b.rank, &sink, &nunits, &nscratch, err) ||
            check_rank(&b, first_x, nunits, nscratch, &U, &nsteps, err))
            goto fail;
        if (nscratch > S)
            S = nscratch;
    }
    int nblocks = st_coll_nblocks(algo->coll, p);
    if (U < 1) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg, "%s declares no units (p = %d)", algo->name, p);
        goto fail;
    }
    if (U % nblocks) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg,
                 "%s implements %s, whose %d blocks need units to be a multiple of %d, but it declares %lld (p = %d)",
                 algo->name, st_coll_name(algo->coll), nblocks, nblocks, (long long)U, p);
        goto fail;
    }
    *out = (st_sched){.cat = cat, .algo = algo, .p = p, .nunits = (int)U, .nsteps = nsteps, .nscratch = (int)S,
                      .root = in->root, .runs = b.runs, .nruns = b.nruns};
    b.runs = NULL;
    if (order_by_step(&b, out)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        err->line = 0;
        st_sched_free(out);
        goto fail;
    }
    free(b.x);
    free(b.tmp);
    free(cache.tab);
    return 0;
fail:
    free(b.x);
    free(b.runs);
    free(b.tmp);
    free(cache.tab);
    return -1;
}

void st_sched_free(st_sched *s)
{
    free(s->xfers);
    free(s->step_first);
    free(s->runs);
    memset(s, 0, sizeof *s);
}

int st_coll_nblocks(int coll, int p)
{
    switch (coll) {
    case ST_COLL_ALL_REDUCE:
    case ST_COLL_BROADCAST:
    case ST_COLL_REDUCE: return 1;
    case ST_COLL_ALL_TO_ALL:
    case ST_COLL_ALL_TO_ALL_V: return p * p;
    default: return p;
    }
}

int st_topo_uniform(st_topo *t, int p, int ngroups, const int *sizes, int32_t *first, int32_t *members,
                    int32_t *group_of, int32_t *index_of)
{
    int x = 0;
    first[0] = 0;
    for (int g = 0; g < ngroups; g++) {
        if (sizes[g] < 1 || x + sizes[g] > p)
            return -1;
        for (int i = 0; i < sizes[g]; i++, x++) {
            members[x] = x;
            group_of[x] = g;
            index_of[x] = i;
        }
        first[g + 1] = x;
    }
    if (x != p)
        return -1;
    *t = (st_topo){ngroups, first, members, group_of, index_of};
    return 0;
}

typedef struct st_keyed {
    uint64_t key;
    int32_t rank;
} st_keyed;

static int st_keyed_cmp(const void *a, const void *b)
{
    const st_keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Sorting (key, rank) finds each rank's lowest same-key rank in O(p log p): a host per rank at p = 65536 is
 * possible, and a search among the groups found so far would be quadratic there. The lowest rank of each key
 * lands in index_of for a moment; group ids are then handed out in rank order, so group g's lowest rank is below
 * group g + 1's. */
int st_topo_by_key(st_topo *t, int p, const uint64_t *key, int32_t *first, int32_t *members, int32_t *group_of,
                   int32_t *index_of)
{
    st_keyed *k = malloc(sizeof *k * (size_t)p);
    int32_t *fill = calloc((size_t)p, sizeof *fill);
    if (!k || !fill) {
        free(k);
        free(fill);
        return -1;
    }
    for (int r = 0; r < p; r++)
        k[r] = (st_keyed){key[r], r};
    qsort(k, (size_t)p, sizeof *k, st_keyed_cmp);
    for (int i = 0; i < p; i++) /* lowest rank of the key */
        index_of[k[i].rank] = i > 0 && k[i].key == k[i - 1].key ? index_of[k[i - 1].rank] : k[i].rank;
    int ngroups = 0;
    for (int r = 0; r < p; r++)
        group_of[r] = index_of[r] == r ? ngroups++ : group_of[index_of[r]];
    memset(first, 0, sizeof *first * (size_t)(ngroups + 1));
    for (int r = 0; r < p; r++)
        first[group_of[r] + 1]++;
    for (int g = 0; g < ngroups; g++)
        first[g + 1] += first[g];
    for (int r = 0; r < p; r++) { /* members in rank order */
        int g = group_of[r];
        index_of[r] = fill[g]++;
        members[first[g] + index_of[r]] = r;
    }
    free(k);
    free(fill);
    *t = (st_topo){ngroups, first, members, group_of, index_of};
    return ngroups;
}

void st_unit_span(int nunits, int nblocks, size_t n, int u, size_t *off, size_t *len)
{
    size_t per = (size_t)(nunits / nblocks), b = (size_t)u / per, j = (size_t)u % per;
    /* n * j may exceed 64 bits only for n above 2^43 elements, far beyond any buffer */
    size_t lo = n * j / per, hi = n * (j + 1) / per;
    *off = b * n + lo;
    *len = hi - lo;
}

static int index_side(const st_sched *s, int rank, int recv, int32_t **first, int32_t **list)
{
    *first = calloc((size_t)s->nsteps + 1, sizeof(int32_t));
    int n = 0;
    for (int i = 0; i < s->nxfers; i++)
        n += (recv ? s->xfers[i].dst : s->xfers[i].src) == rank;
    *list = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!*first || !*list)
        return -1;
    n = 0;
    for (int st = 0; st < s->nsteps; st++) {
        (*first)[st] = n;
        for (int i = s->step_first[st]; i < s->step_first[st + 1]; i++)
            if ((recv ? s->xfers[i].dst : s->xfers[i].src) == rank)
                (*list)[n++] = i;
    }
    (*first)[s->nsteps] = n;
    return 0;
}

int st_plan_build(const st_sched *s, int rank, st_plan *out)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    out->nsteps = s->nsteps;
    if (index_side(s, rank, 1, &out->recv_first, &out->recvs) ||
        index_side(s, rank, 0, &out->send_first, &out->sends)) {
        st_plan_free(out);
        return -1;
    }
    return 0;
}

void st_plan_free(st_plan *pl)
{
    free(pl->recv_first);
    free(pl->recvs);
    free(pl->send_first);
    free(pl->sends);
    memset(pl, 0, sizeof *pl);
}
