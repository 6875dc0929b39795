/* st_sched.c - instantiate a step table for p ranks (see st_sched.h).
 *
 * The VM runs each rank's program; the sink below records its transfers in rank order, each transfer's units
 * normalised to sorted, merged runs. A stable counting sort by step then gives the schedule order (step, src,
 * emission order), which is also the order in which a receiver applies several reductions into one unit: the
 * fixed order that makes results deterministic.
 *
 * Phases on sub-communicators (`phase ... within`) may last longer in one part than in another (groups of
 * different sizes), so each rank's steps are counted locally and placed afterwards: the sink records where each
 * such phase begins and ends on each rank, every rank must see the same sequence of them, and each stretch between
 * two of these marks lasts, globally, as long as its longest rank (a part that finishes early idles to the end of
 * the phase). Outside those phases every rank must have the same number of steps, as before. The members every
 * rank names for a phase must agree: a rank's part is the same list on each of its members.
 *
 * A split's lanes (`split { lane S { ... } ... }`, the 2D algorithm's concurrent parts) share global steps: each
 * lane's steps start over at the split's first step (on_lane), so a rank's transfers are no longer emitted in step
 * order, which the counting sort does not need; a split is stretched like a phase on a sub-communicator, the
 * phases inside its lanes are not (see on_lane).
 *
 * One rank's part (st_sched_build_rank) uses the same builder on fewer runs: the rank's own, which also collects
 * the senders its bodies name (`from`), then each of those with the machine told to keep only sends to the rank
 * (st_vm_sink.only_to); a sort by (step, src, emission) gives the whole schedule's order. Phases on
 * sub-communicators and splits need every rank's step counts to be placed, so they end that path (fast_within).
 */
#include "st_sched.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_vm.h"

typedef st_rank_range range;

/* A phase on a sub-communicator beginning or ending, as one rank saw it. */
typedef struct wmark {
    int32_t step;         /* steps the rank had begun before it */
    int32_t begin;        /* 1: begins, 0: ends */
    int32_t m0, n;        /* begins: its members are mem[m0 .. m0 + n); n = 0: the rank sits it out */
    int32_t line;
} wmark;

typedef struct builder {
    const st_catalogue *cat;
    const st_algo *algo;
    int p, rank, nsteps;  /* nsteps: steps this rank has begun */
    wmark *w;             /* every rank's marks, rank by rank: rank x's are w[wfirst[x] .. wfirst[x + 1]) */
    int nw, capw;
    int32_t *wfirst, *xfirst; /* p + 1 each; xfirst: rank x's transfers are x[xfirst[x] .. xfirst[x + 1]) */
    int32_t *mem;
    int nmem, capmem;
    int32_t *seglen;      /* per stretch between marks (rank 0's marks + 1): its longest length over the ranks */
    st_xfer *x;
    int nx, capx;
    st_run *runs;
    int nruns, capruns;
    range *tmp, *tmp2;    /* a send's ranges being sorted, and the merge's other buffer */
    int captmp, captmp2;
    uint64_t *bits;       /* a send's units as a bitmap, where that is cheaper than sorting (add_runs) */
    int capbits;
    int lane_base, lane_max, in_lane; /* a split: its first step, its longest lane so far, inside a lane */
    range *from;          /* one rank's plan (st_sched_build_rank): the `from` ranges its own run named */
    int nfrom, capfrom;
    int slow;             /* that run cannot give its plan alone: a body without `from`, or a phase on a
                           * sub-communicator or a split, whose steps are placed by the longest rank's */
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

static int on_within(void *ctx, int begin, const int32_t *members, int n, int line, st_err *err);

/* A split's lanes share its steps: each lane starts over at the split's first step, and the split ends after its
 * longest lane. The split itself is marked like a phase on a sub-communicator with no members to check, so it
 * lasts, globally, as long as its longest rank (a lane whose phase runs only in the root's group is empty
 * elsewhere). Inside a lane, phases on sub-communicators are not stretched (their marks are not recorded): a
 * lane's phases follow one another on each rank's own count, and the verifier proves what that gives. */
static int on_lane(void *ctx, int what, int line, st_err *err)
{
    builder *b = ctx;
    if (what == 0) {
        b->lane_base = b->lane_max = b->nsteps;
        return on_within(ctx, 1, NULL, 0, line, err);
    }
    if (what == 1)
        b->nsteps = b->lane_base, b->in_lane = 1;
    else if (what == 2) {
        if (b->nsteps > b->lane_max)
            b->lane_max = b->nsteps;
        b->in_lane = 0;
    } else {
        b->nsteps = b->lane_max;
        return on_within(ctx, 0, NULL, 0, line, err);
    }
    return 0;
}

static int on_within(void *ctx, int begin, const int32_t *members, int n, int line, st_err *err)
{
    builder *b = ctx;
    if (b->in_lane)
        return 0;
    if (grow((void **)&b->w, &b->capw, b->nw + 1, sizeof(wmark)) ||
        grow((void **)&b->mem, &b->capmem, b->nmem + n, sizeof(int32_t)))
        return where(b, line, err, "out of memory");
    b->w[b->nw++] = (wmark){b->nsteps, begin, b->nmem, n, line};
    if (n)
        memcpy(b->mem + b->nmem, members, sizeof(int32_t) * (size_t)n);
    b->nmem += n;
    return 0;
}

/* Merge the ascending stretches a[i0 .. i1) and a[i1 .. i2) into out[i0 .. i2). */
static void merge_two(const range *a, int i0, int i1, int i2, range *out)
{
    int i = i0, j = i1, k = i0;
    while (i < i1 && j < i2)
        out[k++] = a[j].lo < a[i].lo ? a[j++] : a[i++];
    while (i < i1)
        out[k++] = a[i++];
    while (j < i2)
        out[k++] = a[j++];
}

/* Sort b->tmp[0 .. n) by lo: a natural merge sort, linear when the ranges come in a few ascending stretches (a
 * strided set taken modulo p is two), n log n at worst. Returns 0, or -1 when out of memory. */
static int sort_ranges(builder *b, int n)
{
    int descents = 0;
    for (int i = 1; i < n; i++)
        descents += b->tmp[i].lo < b->tmp[i - 1].lo;
    if (descents == 0)
        return 0;
    if (grow((void **)&b->tmp2, &b->captmp2, n, sizeof(range)))
        return -1;
    range *a = b->tmp, *o = b->tmp2;
    while (descents > 0) {
        descents = 0;
        for (int i0 = 0; i0 < n;) {
            int i1 = i0 + 1, i2;
            while (i1 < n && a[i1].lo >= a[i1 - 1].lo)
                i1++;
            for (i2 = i1 + (i1 < n); i2 < n && a[i2].lo >= a[i2 - 1].lo;)
                i2++;
            merge_two(a, i0, i1, i2, o);
            descents += i2 < n;
            i0 = i2;
        }
        range *t = a;
        a = o, o = t;
    }
    if (a != b->tmp)
        memcpy(b->tmp, a, sizeof(range) * (size_t)n);
    return 0;
}

static int append_run(builder *b, int64_t lo, int64_t hi, int *nruns)
{
    if (grow((void **)&b->runs, &b->capruns, b->nruns + 1, sizeof(st_run)))
        return -1;
    b->runs[b->nruns++] = (st_run){(int32_t)lo, (int32_t)(hi - lo + 1)};
    (*nruns)++;
    return 0;
}

/* add_runs through a bitmap of units 0 .. end-1: linear in the ranges and in end / 64, where sorting many
 * scattered units (a layout's images, one range each) would cost n log n. */
static int64_t add_runs_bits(builder *b, const int64_t *lo, const int64_t *hi, int n, int64_t end, int *nruns)
{
    int nw = (int)((end + 63) / 64);
    if (grow((void **)&b->bits, &b->capbits, nw, sizeof(uint64_t)))
        return -1;
    uint64_t *w = b->bits;
    memset(w, 0, sizeof(uint64_t) * (size_t)nw);
    for (int i = 0; i < n; i++)
        for (int64_t u = lo[i]; u <= hi[i];) {
            int64_t top = u | 63; /* the last unit of u's word */
            int64_t last = hi[i] < top ? hi[i] : top;
            w[u / 64] |= (~(uint64_t)0 >> (63 - (last - u))) << (u % 64);
            u = last + 1;
        }
    int64_t units = 0, start = -1;
    *nruns = 0;
    for (int64_t k = 0; k < nw; k++) {
        uint64_t x = w[k];
        if (start < 0 && x == 0)
            continue;
        if (start >= 0 && x == ~(uint64_t)0)
            continue;
        for (int j = 0; j < 64; j++) { /* a word where a run starts or ends */
            int on = (int)(x >> j & 1);
            int64_t u = k * 64 + j;
            if (on && start < 0)
                start = u;
            else if (!on && start >= 0) {
                if (append_run(b, start, u - 1, nruns))
                    return -1;
                units += u - start;
                start = -1;
            }
        }
    }
    if (start >= 0) {
        if (append_run(b, start, (int64_t)nw * 64 - 1, nruns))
            return -1;
        units += (int64_t)nw * 64 - start;
    }
    return units;
}

/* Sort and merge the ranges into runs appended to b->runs; returns the number of units. */
static int64_t add_runs(builder *b, const int64_t *lo, const int64_t *hi, int n, int *nruns)
{
    int64_t end = 0;
    for (int i = 0; i < n; i++)
        if (hi[i] >= lo[i] && hi[i] + 1 > end)
            end = hi[i] + 1;
    if (n >= 64 && end / 64 <= 4 * (int64_t)n) /* many ranges in a small span: a bitmap is cheaper */
        return add_runs_bits(b, lo, hi, n, end, nruns);
    if (grow((void **)&b->tmp, &b->captmp, n, sizeof(range)))
        return -1;
    for (int i = 0; i < n; i++)
        b->tmp[i] = (range){lo[i], hi[i]};
    if (sort_ranges(b, n))
        return -1;
    int64_t units = 0;
    *nruns = 0;
    for (int i = 0; i < n;) {
        range cur = b->tmp[i++];
        while (i < n && b->tmp[i].lo <= cur.hi + 1) {
            if (b->tmp[i].hi > cur.hi)
                cur.hi = b->tmp[i].hi;
            i++;
        }
        if (append_run(b, cur.lo, cur.hi, nruns))
            return -1;
        units += cur.hi - cur.lo + 1;
    }
    return units;
}

static int on_send(void *ctx, int64_t dst, int op, const int64_t *lo, const int64_t *hi, int nsrc, int n, int line,
                   int col, st_err *err)
{
    builder *b = ctx;
    char what[200];
    if (b->nsteps == 0 || (b->in_lane && b->nsteps <= b->lane_base))
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
                   .line = line, .col = col};
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

/* Length of stretch k of this rank's steps: between its marks k - 1 and k (the start and the end at the ends). */
static int32_t stretch(const builder *b, const wmark *w, int nw, int k)
{
    return (k < nw ? w[k].step : b->nsteps) - (k > 0 ? w[k - 1].step : 0);
}

/* This rank's marks against rank 0's: the same phases on sub-communicators in the same order, the same number of
 * steps outside them; inside them the longest rank sets the length. */
static int check_marks(builder *b, st_err *err)
{
    char what[300];
    /* b->w is allocated with the first mark, so no marks at all leaves it NULL (and NULL + 0 is undefined) */
    const wmark *w0 = b->w, *w = w0 ? w0 + b->wfirst[b->rank] : NULL;
    int nw = w ? b->nw - b->wfirst[b->rank] : 0, depth = 0;
    if (b->rank == 0) {
        b->seglen = malloc(sizeof(int32_t) * ((size_t)nw + 1));
        if (!b->seglen)
            return where(b, b->algo->line, err, "out of memory");
        for (int k = 0; k <= nw; k++)
            b->seglen[k] = stretch(b, w, nw, k);
        return 0;
    }
    int nw0 = w0 ? b->wfirst[1] : 0;
    for (int k = 0; k < nw && k < nw0; k++)
        if (w[k].begin != w0[k].begin) {
            snprintf(what, sizeof what, "rank %d %s a phase on a sub-communicator where rank 0 %s one (phases must "
                     "not depend on r)", b->rank, w[k].begin ? "begins" : "ends", w0[k].begin ? "begins" : "ends");
            return where(b, w[k].line, err, what);
        }
    if (nw != nw0) {
        snprintf(what, sizeof what, "rank %d runs %d phases on sub-communicators but rank 0 runs %d (phases must not "
                 "depend on r)", b->rank, nw / 2, nw0 / 2);
        return where(b, b->algo->line, err, what);
    }
    for (int k = 0; k <= nw; k++) {
        int32_t len = stretch(b, w, nw, k);
        if (depth == 0 && len != b->seglen[k]) {
            if (nw == 0)
                snprintf(what, sizeof what, "rank %d has %d steps but rank 0 has %d (step structure must not depend "
                         "on r)", b->rank, b->nsteps, b->seglen[0]);
            else
                snprintf(what, sizeof what, "rank %d has %d steps but rank 0 has %d outside its phases on "
                         "sub-communicators (step structure must not depend on r)", b->rank, len, b->seglen[k]);
            return where(b, b->algo->line, err, what);
        }
        if (len > b->seglen[k])
            b->seglen[k] = len;
        if (k < nw)
            depth += w[k].begin ? 1 : -1;
    }
    return 0;
}

static uint32_t hash_ranks(const int32_t *v, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint32_t)v[i]) * 16777619u;
    return h;
}

/* "{0,2,5}", at most 8 ranks shown. */
static void ranks_text(const int32_t *v, int n, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "{");
    for (int i = 0; i < n && i <= 8 && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, i == 8 ? ",..." : i ? ",%d" : "%d", v[i]);
    if (o < len)
        snprintf(buf + o, len - o, "}");
}

/* The members of mark w. A schedule whose phases all have no members has no list at all (b->mem NULL), and NULL + 0
 * is undefined: an empty one then. */
static const int32_t *members_of(const builder *b, const wmark *w)
{
    static const int32_t none[1];
    return b->mem ? b->mem + w->m0 : none;
}

/* Every member of a phase's part must run it with the same members, in the same order. */
static int check_members(builder *b, st_err *err)
{
    int nw = b->wfirst[1], p = b->p;
    uint32_t *h = malloc(sizeof(uint32_t) * (size_t)p);
    if (!h)
        return where(b, b->algo->line, err, "out of memory");
    for (int k = 0; k < nw; k++) {
        if (!b->w[k].begin)
            continue;
        for (int x = 0; x < p; x++) {
            const wmark *w = &b->w[b->wfirst[x] + k];
            h[x] = hash_ranks(members_of(b, w), w->n);
        }
        for (int x = 0; x < p; x++) {
            const wmark *w = &b->w[b->wfirst[x] + k];
            const int32_t *mx = members_of(b, w);
            for (int i = 0; i < w->n; i++) {
                int y = mx[i];
                const wmark *v = &b->w[b->wfirst[y] + k];
                if (v->n == w->n && h[y] == h[x] &&
                    (i > 0 || memcmp(members_of(b, v), mx, sizeof(int32_t) * (size_t)w->n) == 0))
                    continue;
                char mine[120], theirs[120], what[400];
                ranks_text(mx, w->n, mine, sizeof mine);
                ranks_text(members_of(b, v), v->n, theirs, sizeof theirs);
                b->rank = x;
                if (v->n == 0)
                    snprintf(what, sizeof what, "rank %d runs a phase with the members %s, but rank %d sits it out",
                             x, mine, y);
                else
                    snprintf(what, sizeof what, "rank %d runs a phase with the members %s, but rank %d runs it with "
                             "%s (the members of a part must agree)", x, mine, y, theirs);
                free(h);
                return where(b, w->line, err, what);
            }
        }
    }
    free(h);
    return 0;
}

/* Place every rank's steps on the global steps: stretch k of a rank starts where the longest rank's did. */
static int place_steps(builder *b)
{
    int nw = b->wfirst[1], total = 0;
    for (int k = 0; k <= nw; k++)
        total += b->seglen[k];
    for (int x = 0; x < b->p && nw > 0; x++) {
        const wmark *w = b->w + b->wfirst[x];
        int k = 0, local = 0, global = 0;
        for (int i = b->xfirst[x]; i < b->xfirst[x + 1]; i++) {
            for (; k < nw && b->x[i].step >= w[k].step; k++) { /* into the next stretch */
                global += b->seglen[k];
                local = w[k].step;
            }
            b->x[i].step = global + (b->x[i].step - local);
        }
    }
    return total;
}

/* Check this rank's units against U (+ scratch) and its steps against rank 0's. */
static int check_rank(builder *b, int first_x, int64_t nunits, int64_t nscratch, int64_t *U, st_err *err)
{
    char what[200];
    if (b->rank == 0) {
        *U = nunits;
    } else if (nunits != *U) {
        snprintf(what, sizeof what, "rank %d declares %lld units but rank 0 declares %lld", b->rank,
                 (long long)nunits, (long long)*U);
        return where(b, b->algo->line, err, what);
    }
    if (check_marks(b, err))
        return -1;
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

/* The whole build recording every rank's senders (st_sched_build_senders): ranges in rank order. */
static int full_from(void *ctx, const int64_t *lo, const int64_t *hi, int n, int line, st_err *err)
{
    builder *b = ctx;
    if (n < 0) {
        b->slow = 1;
        return 0;
    }
    if (grow((void **)&b->from, &b->capfrom, b->nfrom + n, sizeof(range)))
        return where(b, line, err, "out of memory");
    for (int i = 0; i < n; i++)
        b->from[b->nfrom++] = (range){lo[i], hi[i]};
    return 0;
}

void st_senders_free(st_senders *snd)
{
    free(snd->first);
    free(snd->from);
    free(snd->scratch);
    memset(snd, 0, sizeof *snd);
}

static void builder_free(builder *b)
{
    free(b->from);
    b->from = NULL;
    free(b->x);
    free(b->tmp);
    free(b->tmp2);
    free(b->bits);
    free(b->w);
    free(b->wfirst);
    free(b->xfirst);
    free(b->mem);
    free(b->seglen);
}

int st_sched_build(const st_catalogue *cat, const st_algo *algo, int p, st_sched *out, st_err *err)
{
    st_inst in = {.p = p};
    return st_sched_build_ex(cat, algo, &in, out, err);
}

static int full_from(void *ctx, const int64_t *lo, const int64_t *hi, int n, int line, st_err *err);

int st_sched_build_ex(const st_catalogue *cat, const st_algo *algo, const st_inst *in, st_sched *out, st_err *err)
{
    return st_sched_build_senders(cat, algo, in, out, NULL, err);
}

int st_sched_build_senders(const st_catalogue *cat, const st_algo *algo, const st_inst *in, st_sched *out,
                           st_senders *snd, st_err *err)
{
    int p = in->p;
    builder b = {.cat = cat, .algo = algo, .p = p};
    st_vm_cache cache = ST_VM_CACHE_INIT;
    st_vm_sink sink = {&b, &cache, on_step, on_send, on_within, on_lane, snd ? full_from : NULL, 0};
    if (snd) {
        memset(snd, 0, sizeof *snd);
        snd->first = calloc((size_t)p + 2, sizeof(int32_t));
        snd->scratch = calloc((size_t)p + 1, sizeof(int64_t));
        if (!snd->first || !snd->scratch) {
            err->line = 0;
            snprintf(err->msg, sizeof err->msg, "out of memory");
            st_senders_free(snd);
            return -1;
        }
    }
    int64_t U = 0, nunits, nscratch, S = 0;
    int nsteps = 0;
    memset(out, 0, sizeof *out);
    err->refused = 0;
    if (p < 1 || p > ST_MAX_RANKS || in->root < 0 || in->root >= p ||
        ((algo->coll == ST_COLL_ALL_TO_ALL || algo->coll == ST_COLL_ALL_TO_ALL_V) && p > 1024)) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg, "p = %d or root = %d is out of range (p in 1..%d, 1..1024 for all_to_all, root in 0..p-1)", p,
                 in->root, ST_MAX_RANKS);
        return -1;
    }
    b.wfirst = malloc(sizeof(int32_t) * ((size_t)p + 1));
    b.xfirst = malloc(sizeof(int32_t) * ((size_t)p + 1));
    if (!b.wfirst || !b.xfirst) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        goto fail;
    }
    for (b.rank = 0; b.rank < p; b.rank++) {
        int first_x = b.nx;
        b.nsteps = 0;
        b.wfirst[b.rank] = b.nw;
        if (snd)
            snd->first[b.rank] = b.nfrom;
        b.xfirst[b.rank] = b.nx;
        if (st_vm_run(cat, algo, in, b.rank, &sink, &nunits, &nscratch, err) ||
            check_rank(&b, first_x, nunits, nscratch, &U, err))
            goto fail;
        if (nscratch > S)
            S = nscratch;
        if (snd)
            snd->scratch[b.rank] = nscratch;
    }
    b.wfirst[p] = b.nw;
    if (snd) { /* the senders' ranges move to snd; a phase on a sub-communicator or a split: no fast path */
        snd->first[p] = b.nfrom;
        snd->from = b.from;
        b.from = NULL;
        snd->slow = b.slow || b.nw > 0;
    }
    b.xfirst[p] = b.nx;
    if (b.nw > 0 && check_members(&b, err))
        goto fail;
    nsteps = place_steps(&b);
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
    builder_free(&b);
    st_vm_cache_free(&cache);
    return 0;
fail:
    free(b.runs);
    builder_free(&b);
    st_vm_cache_free(&cache);
    return -1;
}

/* ---- one rank's plan without the others' (st_sched_build_rank) ------------------------------------------------- */

static int fast_within(void *ctx, int begin, const int32_t *members, int n, int line, st_err *err)
{
    builder *b = ctx;
    b->slow = 1;
    return where(b, line, err, "a phase on a sub-communicator or a split (its steps depend on every rank's)");
}

static int fast_lane(void *ctx, int what, int line, st_err *err)
{
    return fast_within(ctx, 1, NULL, 0, line, err);
}

static int fast_from(void *ctx, const int64_t *lo, const int64_t *hi, int n, int line, st_err *err)
{
    builder *b = ctx;
    if (n < 0) {
        b->slow = 1;
        return where(b, line, err, "a body that sends says no `from`");
    }
    if (grow((void **)&b->from, &b->capfrom, b->nfrom + n, sizeof(range)))
        return where(b, line, err, "out of memory");
    for (int i = 0; i < n; i++)
        b->from[b->nfrom++] = (range){lo[i], hi[i]};
    return 0;
}

/* Schedule order for one rank's transfers: (step, src, order of emission), as st_sched_build's counting sort. */
typedef struct order_key {
    int32_t step, src, i;
} order_key;

static int cmp_order(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Units of the transfers from index first on inside 0..U+S-1 (what check_rank checks in the full build). */
static int check_units(builder *b, int first, int64_t top, st_err *err)
{
    for (int i = first; i < b->nx; i++) {
        const st_xfer *x = &b->x[i];
        for (int k = 0; k < 2; k++) {
            const st_run *r = &b->runs[(k ? x->drun0 + x->dnruns : x->run0 + x->nruns) - 1];
            if (r->start + r->len > top) {
                char what[200];
                snprintf(what, sizeof what, "send of unit %lld, outside 0..%lld", (long long)(r->start + r->len - 1),
                         (long long)top - 1);
                b->rank = x->src;
                return where(b, x->line, err, what);
            }
        }
    }
    return 0;
}

/* The senders my run named, sorted, without repeats and without me: the ranks to run for my receives. */
static int senders(builder *b, int rank, int32_t **out, int *n)
{
    if (b->nfrom > 1) /* qsort must not see a NULL array, even empty */
        qsort(b->from, (size_t)b->nfrom, sizeof(range), cmp_range);
    int64_t count = 0, next = 0;
    for (int i = 0; i < b->nfrom; i++) {
        int64_t lo = b->from[i].lo > next ? b->from[i].lo : next;
        if (b->from[i].hi >= lo)
            count += b->from[i].hi - lo + 1 - (rank >= lo && rank <= b->from[i].hi), next = b->from[i].hi + 1;
    }
    *n = 0;
    *out = malloc(sizeof(int32_t) * (size_t)(count ? count : 1));
    if (!*out)
        return -1;
    next = 0;
    for (int i = 0; i < b->nfrom; i++) {
        for (int64_t x = b->from[i].lo > next ? b->from[i].lo : next; x <= b->from[i].hi; x++)
            if (x != rank)
                (*out)[(*n)++] = (int32_t)x;
        if (b->from[i].hi + 1 > next)
            next = b->from[i].hi + 1;
    }
    return 0;
}

/* Sort my transfers into schedule order and hand them to out (runs stay where they are). */
static int place_mine(builder *b, st_sched *out)
{
    order_key *key = malloc(sizeof(order_key) * (size_t)(b->nx ? b->nx : 1));
    out->xfers = malloc(sizeof(st_xfer) * (size_t)(b->nx ? b->nx : 1));
    out->step_first = calloc((size_t)out->nsteps + 1, sizeof(int32_t));
    if (!key || !out->xfers || !out->step_first) {
        free(key);
        return -1;
    }
    for (int i = 0; i < b->nx; i++)
        key[i] = (order_key){b->x[i].step, b->x[i].src, i};
    qsort(key, (size_t)b->nx, sizeof(order_key), cmp_order);
    for (int i = 0; i < b->nx; i++) {
        out->xfers[i] = b->x[key[i].i];
        out->step_first[out->xfers[i].step + 1]++;
    }
    for (int i = 0; i < out->nsteps; i++)
        out->step_first[i + 1] += out->step_first[i];
    out->nxfers = b->nx;
    free(key);
    return 0;
}

/* Rank's own run: its transfers into b, the ranks that may send to it into *from (sorted, no repeats, not rank).
 * Returns 0, 1 (no fast path: b->slow) or -1. */
static int own_run(builder *b, const st_vm_sink *sink, const st_inst *in, int32_t **from, int *nfrom, int64_t *U,
                   int64_t *S, st_err *err)
{
    int p = in->p;
    *from = NULL;
    *nfrom = 0;
    err->refused = 0;
    if (p < 1 || p > ST_MAX_RANKS || b->rank < 0 || b->rank >= p || in->root < 0 || in->root >= p) {
        err->line = b->algo->line;
        snprintf(err->msg, sizeof err->msg, "p = %d, rank %d or root = %d is out of range", p, b->rank, in->root);
        return -1;
    }
    if (st_vm_run(b->cat, b->algo, in, b->rank, sink, U, S, err))
        return b->slow ? 1 : -1;
    if (senders(b, b->rank, from, nfrom))
        return where(b, b->algo->line, err, "out of memory");
    return 0;
}

int st_sched_senders(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int rank, int32_t **from,
                     int *nfrom, int64_t *nscratch, st_err *err)
{
    builder b = {.cat = cat, .algo = algo, .p = in->p, .rank = rank};
    st_vm_cache cache = ST_VM_CACHE_INIT;
    st_vm_sink sink = {&b, &cache, on_step, on_send, fast_within, fast_lane, fast_from, 0};
    int64_t U;
    int rc = own_run(&b, &sink, in, from, nfrom, &U, nscratch, err);
    free(b.runs);
    builder_free(&b);
    st_vm_cache_free(&cache);
    return rc;
}

int st_sched_build_rank(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int rank, st_sched *out,
                        int *nruns, st_err *err)
{
    int p = in->p, rc, ns = 0;
    builder b = {.cat = cat, .algo = algo, .p = p, .rank = rank};
    st_vm_cache cache = ST_VM_CACHE_INIT;
    st_vm_sink sink = {&b, &cache, on_step, on_send, fast_within, fast_lane, fast_from, 0};
    int64_t U, S, nunits, nscratch;
    int32_t *from = NULL;
    memset(out, 0, sizeof *out);
    *nruns = 1;
    rc = own_run(&b, &sink, in, &from, &ns, &U, &S, err);
    if (rc)
        goto out;
    rc = -1;
    int nsteps = b.nsteps;
    sink.only_to = rank + 1;
    for (int i = 0; i < ns; i++) {
        b.rank = from[i];
        b.nsteps = 0;
        ++*nruns;
        if (st_vm_run(cat, algo, in, b.rank, &sink, &nunits, &nscratch, err)) {
            rc = b.slow ? 1 : -1;
            goto out;
        }
        if (nunits != U || b.nsteps != nsteps) {
            char what[240];
            snprintf(what, sizeof what, "rank %d has %lld units and %d steps but rank %d %lld and %d", b.rank,
                     (long long)nunits, b.nsteps, rank, (long long)U, nsteps);
            where(&b, algo->line, err, what);
            goto out;
        }
        if (nscratch > S)
            S = nscratch;
    }
    b.rank = rank;
    int nblocks = st_coll_nblocks(algo->coll, p);
    if (U < 1 || U % nblocks) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg, "%s implements %s, whose %d blocks need units to be a multiple of %d, "
                 "but it declares %lld (p = %d)", algo->name, st_coll_name(algo->coll), nblocks, nblocks,
                 (long long)U, p);
        goto out;
    }
    if (check_units(&b, 0, U + S, err))
        goto out;
    *out = (st_sched){.cat = cat, .algo = algo, .p = p, .nunits = (int)U, .nsteps = nsteps, .nscratch = (int)S,
                      .root = in->root, .runs = b.runs, .nruns = b.nruns, .partial = 1, .rank = rank};
    b.runs = NULL;
    if (place_mine(&b, out)) {
        where(&b, 0, err, "out of memory");
        st_sched_free(out);
        goto out;
    }
    rc = 0;
out:
    free(b.runs);
    free(from);
    builder_free(&b);
    st_vm_cache_free(&cache);
    return rc;
}

size_t st_sched_bytes(const st_sched *s)
{
    return sizeof(st_xfer) * (size_t)s->nxfers + sizeof(st_run) * (size_t)s->nruns +
           sizeof(int32_t) * ((size_t)s->nsteps + 1);
}

void st_sched_free(st_sched *s)
{
    free(s->xfers);
    free(s->step_first);
    free(s->runs);
    memset(s, 0, sizeof *s);
}

int32_t st_split_formula_ppm(int coll, int L, int S, double bw_in, double bw_out)
{
    if (L < 2 || S < 2 || !(bw_in > 0 && bw_in < 1e300) || !(bw_out > 0 && bw_out < 1e300))
        return ST_SPLIT_DEFAULT_PPM;
    double p_in = bw_in * (L - 1), p_out = bw_out, t_mesh, t_clos;
    if (coll == ST_COLL_ALL_GATHER) {
        t_mesh = (L - 1) / p_in;
        t_clos = (S - 1) / p_out;
    } else {
        t_mesh = (coll == ST_COLL_BROADCAST ? 1.0 : 21.0 / 20) * (L - 1) / (L * p_in);
        t_clos = (double)(S - 1) / (S * p_out);
    }
    double ratio = t_clos / (t_clos + t_mesh);
    if (coll == ST_COLL_ALL_GATHER && ratio > 0.5)
        ratio = 0.5;
    long eighths = lround(ratio * 8);
    eighths = eighths < 1 ? 1 : eighths > 7 ? 7 : eighths;
    return (int32_t)((coll == ST_COLL_ALL_GATHER ? 8 - eighths : eighths) * 125000);
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
    *t = (st_topo){.ngroups = ngroups, .first = first, .members = members, .group_of = group_of,
                   .index_of = index_of, .nlevels = 2};
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
    *t = (st_topo){.ngroups = ngroups, .first = first, .members = members, .group_of = group_of,
                   .index_of = index_of, .nlevels = 2};
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

/* ---- what the executors rely on (st_sched.h) ------------------------------------------------------------------ */

int st_block_class(int coll, int p, int root, int x, int b)
{
    switch (coll) {
    case ST_COLL_REDUCE_SCATTER: return ST_B_SCRATCH;
    case ST_COLL_REDUCE: return x == root ? ST_B_OUTPUT : ST_B_SCRATCH;
    case ST_COLL_SCATTER: return x == root ? ST_B_INPUT : b == x ? ST_B_OUTPUT : ST_B_SCRATCH;
    case ST_COLL_GATHER: return x == root ? ST_B_OUTPUT : b == x ? ST_B_INPUT : ST_B_SCRATCH;
    case ST_COLL_ALL_TO_ALL:
    case ST_COLL_ALL_TO_ALL_V: return b / p == x ? ST_B_INPUT : b % p == x ? ST_B_OUTPUT : ST_B_NONE;
    default: return ST_B_OUTPUT;
    }
}

static int check_fail(st_err *err, const st_xfer *x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int check_fail(st_err *err, const st_xfer *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->line = x ? x->line : 0;
    err->col = x ? x->col : 0;
    return -1;
}

/* A reduce of units into themselves (no `at`) would double them. all_to_all_v's blocks have per-pair lengths,
 * so scratch slots (sized by the largest unit) cannot be sized for it. */
static int check_local(const st_sched *s, int rank, const int32_t *sends, int nsends, st_err *err)
{
    for (int i = 0; i < nsends; i++) {
        const st_xfer *x = &s->xfers[sends[i]];
        if (x->dst == rank && x->op != ST_X_COPY && !st_xfer_mapped(x))
            return check_fail(err, x, "at step %d rank %d reduces units into themselves (a local reduce needs "
                              "`at` to name other units)", x->step, rank);
    }
    if (s->nscratch > 0 && s->algo->coll == ST_COLL_ALL_TO_ALL_V)
        return check_fail(err, NULL, "scratch units are not supported for all_to_all_v (its blocks differ in "
                          "length, so a scratch slot has no one size)");
    return 0;
}

/* One side of one transfer: every vector unit received (or written by my own `at` transfers) must land in
 * writable storage, every vector unit sent must exist. */
static int check_storage(const st_sched *s, int rank, const st_xfer *x, int recv, int *needs_scratch, st_err *err)
{
    int coll = s->algo->coll, p = s->p, upb = s->nunits / st_coll_nblocks(coll, p);
    int32_t r0 = recv ? x->drun0 : x->run0, nr = recv ? x->dnruns : x->nruns;
    for (int32_t r = r0; r < r0 + nr; r++) /* block by block: every unit of a block is kept alike */
        for (int32_t u = s->runs[r].start; u < s->runs[r].start + s->runs[r].len && u < s->nunits;
             u = (u / upb + 1) * upb) {
            int b = u / upb, k = st_block_class(coll, p, s->root, rank, b);
            *needs_scratch |= recv && k == ST_B_SCRATCH;
            if (k == ST_B_NONE)
                return check_fail(err, x, "at step %d rank %d would %s unit %d (block %d: from rank %d to rank %d), "
                                  "which it has no storage for: in an all_to_all a rank keeps only the blocks it "
                                  "sends (its sendbuf) and those it receives (its recvbuf); to pass a block through "
                                  "a third rank, park it there in a scratch unit (`units p * p scratch S` and "
                                  "`send ... at`)", x->step, rank, recv ? "receive" : "send", u, b, b / p, b % p);
            if (recv && k == ST_B_INPUT)
                return check_fail(err, x, "at step %d rank %d would receive unit %d (block %d), which it keeps only "
                                  "in its caller's input (the send buffer, never written): receive it into a scratch "
                                  "unit (`units U scratch S` and `send ... at`)", x->step, rank, u, b);
        }
    return 0;
}

static void mark_units(const st_sched *s, int32_t r0, int32_t nr, unsigned char *marks, unsigned char v)
{
    for (int32_t r = r0; r < r0 + nr; r++)
        memset(marks + s->runs[r].start, v, (size_t)s->runs[r].len);
}

static int first_marked(const st_sched *s, const st_xfer *x, const unsigned char *marks)
{
    for (int32_t r = x->run0; r < x->run0 + x->nruns; r++) {
        const unsigned char *m = memchr(marks + s->runs[r].start, 1, (size_t)s->runs[r].len);
        if (m)
            return (int)(m - marks);
    }
    return -1;
}

/* The transfers of one step: units written into `rank` (by peers or by its own `at` transfers) must not be read
 * from it in that step, by peers (they read while it writes) or by its own `at` transfers (the result would
 * depend on the order of the transfers within the step). Scratch units included. */
static int check_step(const st_sched *s, int rank, const int32_t *sends, int ns, const int32_t *recvs, int nr,
                      unsigned char *marks, st_err *err)
{
    int bad = -1;
    const st_xfer *at = NULL;
    for (int i = 0; i < nr; i++)
        if (st_xfer_writes(&s->xfers[recvs[i]]))
            mark_units(s, s->xfers[recvs[i]].drun0, s->xfers[recvs[i]].dnruns, marks, 1);
    for (int i = 0; i < ns && bad < 0; i++)
        if (st_xfer_writes(at = &s->xfers[sends[i]]))
            bad = first_marked(s, at, marks);
    for (int i = 0; i < nr; i++)
        mark_units(s, s->xfers[recvs[i]].drun0, s->xfers[recvs[i]].dnruns, marks, 0);
    if (bad < 0)
        return 0;
    return check_fail(err, at, "at step %d rank %d sends unit %d while it also receives into it in the same step: "
                      "the executors read a sender's unit while its receives are applied, so a unit sent in a step "
                      "must not be written in that step; receive into a scratch unit (`at`) and combine it in the "
                      "next step", at->step, rank, bad);
}

int st_rank_check(const st_sched *s, int rank, const int32_t *sends, int nsends, const int32_t *recvs, int nrecvs,
                  unsigned char *marks, int *needs_scratch, st_err *err)
{
    int scratch = 0;
    err->col = 0;
    if (check_local(s, rank, sends, nsends, err))
        return -1;
    /* receives first: a block sent from nowhere was first received into nowhere, which is the error to name */
    for (int i = 0; i < nrecvs; i++)
        if (st_xfer_writes(&s->xfers[recvs[i]]) && check_storage(s, rank, &s->xfers[recvs[i]], 1, &scratch, err))
            return -1;
    for (int i = 0; i < nsends; i++)
        if (st_xfer_writes(&s->xfers[sends[i]]) && check_storage(s, rank, &s->xfers[sends[i]], 0, &scratch, err))
            return -1;
    if (needs_scratch)
        *needs_scratch = scratch;
    /* step by step over the steps this rank takes part in (both lists are in step order) */
    for (int si = 0, ri = 0; si < nsends || ri < nrecvs;) {
        int step = si < nsends ? s->xfers[sends[si]].step : INT32_MAX;
        if (ri < nrecvs && s->xfers[recvs[ri]].step < step)
            step = s->xfers[recvs[ri]].step;
        int s0 = si, r0 = ri;
        while (si < nsends && s->xfers[sends[si]].step == step)
            si++;
        while (ri < nrecvs && s->xfers[recvs[ri]].step == step)
            ri++;
        if (check_step(s, rank, sends + s0, si - s0, recvs + r0, ri - r0, marks, err))
            return -1;
    }
    return 0;
}
