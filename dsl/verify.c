/* verify.c - prove each algorithm of a catalogue correct for every p in a range (see verify.h).
 *
 * Abstract execution over units: the value of unit u at rank x is the set of ranks whose contribution it holds
 * (a bitset of p bits). Initially every rank holds what the collective's contract gives it ({x} in every unit
 * for reductions, its own block for all_gather, the root's data at the root for broadcast and scatter, ...). A copy replaces the destination's set, a reduce unions it and must find the two sets disjoint.
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

#include "st_sched.h"

/* The abstract state is sparse: a rank has a cell only for the units it has held or been asked about, so an
 * all_to_all with p*p units costs O(p) cells per rank, not O(p*p). Each cell carries the unit's contributor set
 * (an index into a pool of W-word bitsets) and this step's hazard marks. */
typedef struct cell {
    int32_t unit;          /* -1: a free slot */
    int32_t rmark, wmark;  /* step + 1 of the last read / write */
    int32_t wsrc, wcopy;   /* source of that write, and whether it copied */
    int32_t tag;           /* which vector unit's data it holds (scratch units and `at` move data between units) */
    int32_t wxfer;         /* the transfer that wrote it last (an index in the schedule), -1: none yet */
    uint32_t val;          /* its set: pool + val * W */
} cell;

typedef struct rank_cells {
    cell *v;
    uint32_t cap, n;       /* cap is a power of two */
} rank_cells;

typedef struct absstate {
    const st_sched *s;
    int p, U, W;           /* W: 64-bit words per set */
    rank_cells *ranks;     /* p */
    uint64_t *pool;
    size_t npool, cappool; /* in sets */
    int nomem;
    char msg[600];
    int line, col;         /* where the failure points: a send's line and column, or the algorithm's line */
    char lint[300];        /* the first transfer that changed nothing (a warning, not a failure); "" when none */
    int lint_line, lint_col;
    FILE *trace;           /* the holdings view: what every unit holds, printed after each step */
} absstate;

static cell *probe(rank_cells *rc, int u)
{
    uint32_t i = ((uint32_t)u * 2654435761u) & (rc->cap - 1);
    while (rc->v[i].unit != -1 && rc->v[i].unit != u)
        i = (i + 1) & (rc->cap - 1);
    return &rc->v[i];
}

static int grow_cells(rank_cells *rc)
{
    rank_cells n = {calloc(rc->cap ? 2 * (size_t)rc->cap : 64, sizeof(cell)), rc->cap ? 2 * rc->cap : 64, rc->n};
    if (!n.v)
        return -1;
    for (uint32_t i = 0; i < n.cap; i++)
        n.v[i].unit = -1;
    for (uint32_t i = 0; i < rc->cap; i++)
        if (rc->v[i].unit != -1)
            *probe(&n, rc->v[i].unit) = rc->v[i];
    free(rc->v);
    *rc = n;
    return 0;
}

/* The cell of unit u at rank x; created empty when `create`, else NULL if absent. Creating may move other cells
 * and sets: callers re-fetch after a create. */
static cell *cell_of(absstate *a, int x, int u, int create)
{
    rank_cells *rc = &a->ranks[x];
    if (rc->cap) {
        cell *c = probe(rc, u);
        if (c->unit == u)
            return c;
    }
    if (!create)
        return NULL;
    if ((rc->n + 1) * 10 > rc->cap * 7 && grow_cells(rc))
        goto nomem;
    if (a->npool == a->cappool) {
        size_t cap = a->cappool ? 2 * a->cappool : 1024;
        uint64_t *pool = realloc(a->pool, cap * a->W * sizeof(uint64_t));
        if (!pool)
            goto nomem;
        a->pool = pool;
        a->cappool = cap;
    }
    cell *c = probe(rc, u);
    *c = (cell){.unit = u, .tag = u, .wxfer = -1, .val = (uint32_t)a->npool++};
    memset(a->pool + (size_t)c->val * a->W, 0, sizeof(uint64_t) * a->W);
    rc->n++;
    return c;
nomem:
    a->nomem = 1;
    return NULL;
}

static uint64_t *set_of(absstate *a, const cell *c)
{
    return a->pool + (size_t)c->val * a->W;
}

static const uint64_t zero_set[(ST_MAX_RANKS + 63) / 64];

/* The set of unit u at rank x (the empty set when it has no cell). */
static const uint64_t *value(absstate *a, int x, int u)
{
    cell *c = cell_of(a, x, u, 0);
    return c ? set_of(a, c) : zero_set;
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

/* "{0,1,3}", runs of three or more as "{0..5,7}"; at most `max` items (members or runs) shown, then ",..."
 * (max 0: all). */
static void set_text_max(const absstate *a, const uint64_t *v, char *buf, size_t len, int max)
{
    size_t o = (size_t)snprintf(buf, len, "{");
    int shown = 0;
    for (int x = 0; x < a->p && o < len; x++) {
        if (!(v[x / 64] >> (x % 64) & 1))
            continue;
        int y = x;
        while (y + 1 < a->p && (v[(y + 1) / 64] >> ((y + 1) % 64) & 1))
            y++;
        if (max && shown == max) {
            o += (size_t)snprintf(buf + o, len - o, ",...");
            break;
        }
        if (y - x >= 2)
            o += (size_t)snprintf(buf + o, len - o, shown ? ",%d..%d" : "%d..%d", x, y);
        else
            o += (size_t)snprintf(buf + o, len - o, shown ? ",%d" : "%d", x), y = x;
        shown++;
        x = y;
    }
    if (o < len)
        snprintf(buf + o, len - o, "}");
}

static void set_text(const absstate *a, const uint64_t *v, char *buf, size_t len)
{
    set_text_max(a, v, buf, len, 8);
}

static int failf(absstate *a, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int failf(absstate *a, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
    a->line = line;
    a->col = 0;
    return -1;
}

/* A failure at transfer x: points at its send statement. */
static int failx(absstate *a, const st_xfer *x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int failx(absstate *a, const st_xfer *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
    a->line = x->line;
    a->col = x->col;
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

/* The blocks whose units rank x holds before the first step (post = 0) or must hold after the last (post = 1),
 * as a progression lo, lo + stride, ... (n blocks), so that no loop runs over all p * U pairs: an all_to_all has
 * U = p * p units. init_holder and post_want decide each unit of these blocks. */
static void blocks_of(const absstate *a, int x, int post, int *lo, int *stride, int *n)
{
    int p = a->p, root = a->s->root, all = st_coll_nblocks(a->s->algo->coll, p);
    *lo = 0, *stride = 1, *n = all;
    switch (a->s->algo->coll) {
    case ST_COLL_REDUCE_SCATTER: if (post) *lo = x, *n = 1; break;
    case ST_COLL_REDUCE: if (post && x != root) *n = 0; break;
    case ST_COLL_ALL_GATHER: if (!post) *lo = x, *n = 1; break;
    case ST_COLL_GATHER: if (!post) *lo = x, *n = 1; else if (x != root) *n = 0; break;
    case ST_COLL_BROADCAST: if (!post && x != root) *n = 0; break;
    case ST_COLL_SCATTER: if (!post && x != root) *n = 0; else if (post) *lo = x, *n = 1; break;
    case ST_COLL_ALL_TO_ALL:
    case ST_COLL_ALL_TO_ALL_V: *lo = post ? x : x * p, *stride = post ? p : 1, *n = p; break;
    default: break; /* all_reduce: every block, before and after */
    }
}

static void init_state(absstate *a)
{
    int per = a->U / st_coll_nblocks(a->s->algo->coll, a->p), lo, stride, n;
    for (int x = 0; x < a->p; x++) {
        blocks_of(a, x, 0, &lo, &stride, &n);
        for (int i = 0; i < n; i++)
            for (int u = (lo + i * stride) * per; u < (lo + i * stride + 1) * per; u++) {
                int h = init_holder(a, x, u);
                cell *c = h >= 0 ? cell_of(a, x, u, 1) : NULL;
                if (c)
                    set_of(a, c)[h / 64] |= 1ull << (h % 64);
            }
    }
}

/* The transfer's (source unit, destination unit) pairs: its runs and its `at` runs, matched in order. */
typedef struct unit_pairs {
    const st_sched *s;
    const st_xfer *x;
    int k, dk, u, du;      /* run indices and positions */
} unit_pairs;

static unit_pairs pairs_of(const st_sched *s, const st_xfer *x)
{
    return (unit_pairs){s, x, 0, 0, s->runs[x->run0].start, s->runs[x->drun0].start};
}

static int next_pair(unit_pairs *it, int *su, int *du)
{
    const st_sched *s = it->s;
    const st_xfer *x = it->x;
    if (it->k >= x->nruns)
        return 0;
    *su = it->u++;
    *du = it->du++;
    if (it->u == s->runs[x->run0 + it->k].start + s->runs[x->run0 + it->k].len && ++it->k < x->nruns)
        it->u = s->runs[x->run0 + it->k].start;
    if (it->du == s->runs[x->drun0 + it->dk].start + s->runs[x->drun0 + it->dk].len && ++it->dk < x->dnruns)
        it->du = s->runs[x->drun0 + it->dk].start;
    return 1;
}

/* Why a unit may not be both sent and written in one step, and what to write instead. */
static const char hazard_hint[] = "receive into a scratch unit (`at`) and combine it in the next step: the "
                                  "runtime reads a sender's unit while the step's receives are applied";

/* Pass A of a step: hazards and "sends only what it holds". */
static int check_unit(absstate *a, int step, const st_xfer *x, int u, int du)
{
    cell *sc = cell_of(a, x->src, u, 0);
    if (!sc || empty(a, set_of(a, sc)))
        return failx(a, x, "at step %d rank %d sends unit %d to rank %d but holds no data for it", step,
                     x->src, u, x->dst);
    if (x->src == x->dst && u == du)
        return 0; /* a local transfer onto itself is a no-op */
    if (sc->wmark == step + 1)
        return failx(a, x, "at step %d rank %d sends unit %d while it also receives it in the same step "
                     "(from rank %d): read/write hazard; %s", step, x->src, u, sc->wsrc, hazard_hint);
    sc->rmark = step + 1;
    cell *dc = cell_of(a, x->dst, du, 1);
    if (!dc)
        return failx(a, x, "out of memory");
    if (dc->rmark == step + 1)
        return failx(a, x, "at step %d rank %d receives unit %d from rank %d while it also sends it in the "
                     "same step: read/write hazard; %s", step, x->dst, du, x->src, hazard_hint);
    if (dc->wmark == step + 1 && (dc->wcopy || x->op == ST_X_COPY))
        return failx(a, x, "at step %d unit %d of rank %d is written by rank %d and by rank %d, and one of "
                     "them copies: the result would depend on arrival order", step, du, x->dst, dc->wsrc, x->src);
    dc->wmark = step + 1;
    dc->wcopy = x->op == ST_X_COPY;
    dc->wsrc = x->src;
    return 0;
}

static int check_step(absstate *a, int step)
{
    const st_sched *s = a->s;
    for (int i = s->step_first[step]; i < s->step_first[step + 1]; i++) {
        unit_pairs it = pairs_of(s, &s->xfers[i]);
        for (int u, du; next_pair(&it, &u, &du);)
            if (check_unit(a, step, &s->xfers[i], u, du))
                return -1;
    }
    return 0;
}

/* Pass B of a step: apply the transfers in schedule order. The destination's cell exists (pass A made it). *same
 * is cleared unless the transfer copies what the destination already holds. */
static int apply_unit(absstate *a, int step, const st_xfer *x, int u, int du, int *same)
{
    char have[120], brings[120];
    cell *dc = cell_of(a, x->dst, du, 0), *sc = cell_of(a, x->src, u, 0);
    uint64_t *d = set_of(a, dc);
    const uint64_t *v = set_of(a, sc);
    dc->wxfer = (int32_t)(x - a->s->xfers);
    if (x->op == ST_X_COPY) {
        *same &= !empty(a, d) && dc->tag == sc->tag && memcmp(d, v, sizeof(uint64_t) * a->W) == 0;
        memcpy(d, v, sizeof(uint64_t) * a->W);
        dc->tag = sc->tag;
        return 0;
    }
    if (empty(a, d))
        return failx(a, x, "at step %d rank %d reduces into unit %d, which it does not hold", step, x->dst, du);
    if (dc->tag != sc->tag)
        return failx(a, x, "at step %d rank %d reduces unit %d's data (from rank %d) into unit %d, which "
                     "holds unit %d's data", step, x->dst, sc->tag, x->src, du, dc->tag);
    for (int w = 0; w < a->W; w++)
        if (d[w] & v[w]) {
            set_text(a, d, have, sizeof have);
            set_text(a, v, brings, sizeof brings);
            return failx(a, x, "at step %d rank %d reduces unit %d from rank %d twice over: it holds %s and "
                         "receives %s (a contribution reduced twice)", step, x->dst, du, x->src, have, brings);
        }
    for (int w = 0; w < a->W; w++)
        d[w] |= v[w];
    return 0;
}

/* A step whose every transfer copies what its destination already holds changes nothing: right, but a redundant
 * step (one ring step too many, most often). The first such step is kept for a warning (not a failure). A step
 * where only some transfers are redundant is not: a broadcast's all_gather phase hands the root its own pieces. */
static void lint_step(absstate *a, int step, const st_xfer *first, int first_du, int nsame, int n)
{
    char have[120];
    if (a->lint[0] || n == 0 || nsame != n)
        return;
    set_text(a, value(a, first->dst, first_du), have, sizeof have);
    snprintf(a->lint, sizeof a->lint, "step %d changes nothing: each of its %d transfers sends data its destination "
             "already holds (here rank %d's send to rank %d, whose unit %d holds %s): a redundant step", step, n,
             first->src, first->dst, first_du, have);
    a->lint_line = first->line, a->lint_col = first->col;
}

static int apply_step(absstate *a, int step)
{
    const st_sched *s = a->s;
    const st_xfer *first = NULL;
    int n = 0, nsame = 0, first_du = 0;
    for (int i = s->step_first[step]; i < s->step_first[step + 1]; i++) {
        const st_xfer *x = &s->xfers[i];
        if (x->src == x->dst && !st_xfer_mapped(x))
            continue;
        unit_pairs it = pairs_of(s, x);
        int same = x->op == ST_X_COPY, pairs = 0;
        for (int u, du; next_pair(&it, &u, &du);) {
            if (x->src == x->dst && u == du)
                continue;
            if (!first && !pairs)
                first_du = du;
            pairs++;
            if (apply_unit(a, step, x, u, du, &same))
                return -1;
        }
        if (pairs) {
            first = first ? first : x;
            n++, nsame += same;
        }
    }
    lint_step(a, step, first, first_du, nsame, n);
    return 0;
}

/* A postcondition failure points at the send that wrote the unit last (or at the algorithm when none did) and
 * says what the unit holds and what it should hold. */
static int post_fail(absstate *a, const cell *c, int x, int u, const char *holds, const char *should)
{
    if (!c || c->wxfer < 0)
        return failf(a, a->s->algo->line, "after the last step unit %d of rank %d holds %s but should hold %s; no "
                     "send ever writes it", u, x, holds, should);
    const st_xfer *w = &a->s->xfers[c->wxfer];
    return failx(a, w, "after the last step unit %d of rank %d holds %s but should hold %s; this send wrote it last, "
                 "at step %d from rank %d (%s)", u, x, holds, should, w->step, w->src,
                 w->op == ST_X_COPY ? "copy" : "reduce");
}

static int check_unit_post(absstate *a, int x, int u)
{
    char have[120], holds[160], should[160];
    int want = post_want(a, x, u);
    if (want == -2)
        return 0;
    const uint64_t *v = value(a, x, u);
    const cell *c = cell_of(a, x, u, 0);
    int n = count(a, v);
    int right_tag = !c || c->tag == u || n == 0;
    if (right_tag && ((want == -1 && n == a->p) || (want >= 0 && n == 1 && (v[want / 64] >> (want % 64) & 1))))
        return 0;
    set_text(a, v, have, sizeof have);
    if (right_tag)
        snprintf(holds, sizeof holds, "%s", n ? have : "nothing");
    else
        snprintf(holds, sizeof holds, "unit %d's data %s", c->tag, have);
    if (want == -1)
        snprintf(should, sizeof should, "the contributions of all %d ranks {0..%d}", a->p, a->p - 1);
    else
        snprintf(should, sizeof should, "rank %d's data {%d}", want, want);
    if (!right_tag)
        snprintf(should + strlen(should), sizeof should - strlen(should), " of unit %d", u);
    return post_fail(a, c, x, u, holds, should);
}

static int check_post(absstate *a)
{
    int per = a->U / st_coll_nblocks(a->s->algo->coll, a->p), lo, stride, n;
    for (int x = 0; x < a->p; x++) {
        blocks_of(a, x, 1, &lo, &stride, &n);
        for (int i = 0; i < n; i++)
            for (int u = (lo + i * stride) * per; u < (lo + i * stride + 1) * per; u++)
                if (check_unit_post(a, x, u))
                    return -1;
    }
    return 0;
}

static int cmp_int(const void *x, const void *y)
{
    return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* One rank's holdings: `u0..2={0} u3={0,1} u7=u2{1}` (unit 7 holds unit 2's data), runs of consecutive units
 * with the same set and their own data merged; `-` when it holds nothing. */
static void trace_rank(absstate *a, int x, int *units)
{
    rank_cells *rc = &a->ranks[x];
    int n = 0;
    for (uint32_t i = 0; i < rc->cap; i++)
        if (rc->v[i].unit != -1 && !empty(a, set_of(a, &rc->v[i])))
            units[n++] = rc->v[i].unit;
    qsort(units, (size_t)n, sizeof *units, cmp_int);
    char set[4096];
    for (int i = 0; i < n;) {
        const cell *c = cell_of(a, x, units[i], 0);
        int j = i + 1;
        while (j < n && units[j] == units[j - 1] + 1 && c->tag == c->unit) {
            const cell *d = cell_of(a, x, units[j], 0);
            if (d->tag != d->unit || memcmp(set_of(a, c), set_of(a, d), sizeof(uint64_t) * (size_t)a->W))
                break;
            j++;
        }
        set_text_max(a, set_of(a, c), set, sizeof set, 0);
        fputc(' ', a->trace);
        if (j - i > 1)
            fprintf(a->trace, "u%d..%d=%s", units[i], units[j - 1], set);
        else if (c->tag != c->unit)
            fprintf(a->trace, "u%d=u%d%s", c->unit, c->tag, set);
        else
            fprintf(a->trace, "u%d=%s", c->unit, set);
        i = j;
    }
    if (n == 0)
        fputs(" -", a->trace);
    fputc('\n', a->trace);
}

/* The holdings of every rank after step `step` (-1: before the first step). */
static void trace_state(absstate *a, int step)
{
    int *units = malloc(sizeof(int) * ((size_t)a->U + (size_t)a->s->nscratch + 1));
    int wstep = snprintf(NULL, 0, "step %d", a->s->nsteps > 0 ? a->s->nsteps - 1 : 0);
    char label[32];
    if (!units) {
        a->nomem = 1;
        return;
    }
    if (step < 0)
        snprintf(label, sizeof label, "before");
    else
        snprintf(label, sizeof label, "step %d", step);
    if (wstep < 6)
        wstep = 6;
    for (int x = 0; x < a->p; x++) {
        fprintf(a->trace, "%-*s  r%-*d:", wstep, x ? "" : label, snprintf(NULL, 0, "%d", a->p - 1), x);
        trace_rank(a, x, units);
    }
    free(units);
}

static int run_abstract(absstate *a)
{
    int rc = -1;
    a->ranks = calloc((size_t)a->p, sizeof(rank_cells));
    if (!a->ranks) {
        failf(a, 0, "out of memory for p = %d", a->p);
        return -1;
    }
    init_state(a);
    if (a->trace)
        trace_state(a, -1);
    for (int st = 0; st < a->s->nsteps && !a->nomem; st++) {
        if (check_step(a, st) || apply_step(a, st))
            goto out;
        if (a->trace)
            trace_state(a, st);
    }
    rc = a->nomem ? failf(a, 0, "out of memory for p = %d, %d units", a->p, a->U) : check_post(a);
out:
    for (int x = 0; x < a->p; x++)
        free(a->ranks[x].v);
    free(a->ranks);
    free(a->pool);
    return rc;
}

/* What the runtime checks before it runs a rank's plan (st_sched.h: st_rank_check, the very function call.c calls),
 * for every rank: storage (an all_to_all forwarding through third ranks without scratch, receiving into the
 * caller's input), local self-reduces, same-step read/write. The transfers are bucketed by source and by
 * destination (a stable counting sort keeps schedule order), so all ranks cost O(transfers + units). */
static int runtime_check(absstate *a)
{
    const st_sched *s = a->s;
    int p = s->p, rc = 0;
    int32_t *sfirst = calloc((size_t)p + 1, sizeof(int32_t)), *rfirst = calloc((size_t)p + 1, sizeof(int32_t));
    int32_t *sends = malloc(sizeof(int32_t) * ((size_t)s->nxfers + 1)), *recvs = malloc(sizeof(int32_t) * ((size_t)s->nxfers + 1));
    unsigned char *marks = calloc((size_t)s->nunits + (size_t)s->nscratch + 1, 1);
    if (!sfirst || !rfirst || !sends || !recvs || !marks) {
        rc = failf(a, 0, "out of memory for p = %d", p);
        goto out;
    }
    for (int i = 0; i < s->nxfers; i++)
        sfirst[s->xfers[i].src + 1]++, rfirst[s->xfers[i].dst + 1]++;
    for (int x = 0; x < p; x++)
        sfirst[x + 1] += sfirst[x], rfirst[x + 1] += rfirst[x];
    for (int i = 0; i < s->nxfers; i++)
        sends[sfirst[s->xfers[i].src]++] = i, recvs[rfirst[s->xfers[i].dst]++] = i;
    for (int x = p; x > 0; x--) /* the fills moved each start to the next rank's: move them back */
        sfirst[x] = sfirst[x - 1], rfirst[x] = rfirst[x - 1];
    sfirst[0] = rfirst[0] = 0;
    for (int x = 0; x < p && !rc; x++) {
        st_err err;
        if (st_rank_check(s, x, sends + sfirst[x], sfirst[x + 1] - sfirst[x], recvs + rfirst[x],
                          rfirst[x + 1] - rfirst[x], marks, NULL, &err)) {
            snprintf(a->msg, sizeof a->msg, "the runtime would refuse it: %s", err.msg);
            a->line = err.line ? err.line : s->algo->line;
            a->col = err.line ? err.col : 0;
            rc = -1;
        }
    }
out:
    free(sfirst);
    free(rfirst);
    free(sends);
    free(recvs);
    free(marks);
    return rc;
}

int st_verify_holdings(const st_sched *s, FILE *out)
{
    absstate a = {.s = s, .p = s->p, .U = s->nunits, .W = (s->p + 63) / 64, .trace = out};
    int rc = run_abstract(&a);
    a.trace = NULL;
    if (rc == 0)
        rc = runtime_check(&a);
    if (rc && a.col > 0)
        fprintf(out, "# error at %s:%d:%d: %s\n", s->cat->file, a.line, a.col, a.msg);
    else if (rc)
        fprintf(out, "# error at %s:%d: %s\n", s->cat->file, a.line, a.msg);
    else
        fputs("# the postcondition holds\n", out);
    return a.nomem ? -1 : 0;
}

/* ---- the fast per-rank plan (st_sched_build_rank) against the whole schedule ---------------------------------- */

/* Two transfers of two schedules are the same: step, peers, operation, source line, and the same units. */
static int same_xfer(const st_sched *a, const st_xfer *x, const st_sched *b, const st_xfer *y)
{
    if (x->step != y->step || x->src != y->src || x->dst != y->dst || x->op != y->op || x->nunits != y->nunits ||
        x->line != y->line || x->col != y->col || x->nruns != y->nruns || x->dnruns != y->dnruns ||
        st_xfer_mapped(x) != st_xfer_mapped(y))
        return 0;
    return memcmp(&a->runs[x->run0], &b->runs[y->run0], sizeof(st_run) * (size_t)x->nruns) == 0 &&
           memcmp(&a->runs[x->drun0], &b->runs[y->drun0], sizeof(st_run) * (size_t)x->dnruns) == 0;
}

/* Rank x's part of s (its sends and receives, in schedule order) against its fast plan f. Returns 0, or -1 with
 * the first difference in a->msg at the send it is about. */
static int same_part(absstate *a, const st_sched *s, const st_sched *f, int x)
{
    int j = 0;
    if (f->nsteps != s->nsteps || f->nunits != s->nunits || f->nscratch != s->nscratch)
        return failf(a, s->algo->line, "rank %d's own plan (`from`) has %d steps, %d units and %d scratch units, "
                     "the whole schedule %d, %d and %d", x, f->nsteps, f->nunits, f->nscratch, s->nsteps,
                     s->nunits, s->nscratch);
    for (int i = 0; i < s->nxfers; i++) {
        const st_xfer *y = &s->xfers[i];
        if (y->src != x && y->dst != x)
            continue;
        if (j < f->nxfers && same_xfer(s, y, f, &f->xfers[j])) {
            j++;
            continue;
        }
        if (y->dst == x && y->src != x)
            return failx(a, y, "rank %d sends to rank %d in step %d, but rank %d's `from` does not name rank %d "
                         "(its own plan would miss this receive)", y->src, x, y->step + 1, x, y->src);
        return failx(a, y, "rank %d's own plan differs from the whole schedule at this transfer (step %d)", x,
                     y->step + 1);
    }
    if (j < f->nxfers)
        return failx(a, &f->xfers[j], "rank %d's own plan has a transfer the whole schedule lacks (step %d)", x,
                     f->xfers[j].step + 1);
    return 0;
}

/* The ranks whose own plan is built and compared transfer by transfer, a cross-check of the construction (the
 * proof is cover_check, for every rank): with roots 0 and 1, every rank up to p = 4, then ranks 1 and p - 1 (a
 * rank's own plan runs its senders: all of them for Mesh, so every rank would cost p runs each). */
static int sample_rank(const st_inst *in, int x)
{
    return in->root <= 1 && (in->p <= 4 || x == 1 || x == in->p - 1);
}

/* Every rank's `from` (as the whole build recorded it in snd) names every rank that sends to it in s, and the
 * largest scratch among them is s's. Returns 0, or -1 with the first sender missing in a, at its send. */
static int cover_check(absstate *a, const st_sched *s, const st_senders *snd)
{
    int p = s->p, rc = 0;
    size_t W = (size_t)(p + 63) / 64;
    uint64_t *named = calloc((size_t)p * W, sizeof(uint64_t));
    if (!named)
        return failf(a, 0, "out of memory for p = %d", p);
    for (int x = 0; x < p && !rc; x++)
        for (int i = snd->first[x]; i < snd->first[x + 1] && !rc; i++) {
            if (snd->from[i].lo < 0 || snd->from[i].hi >= p) {
                rc = failf(a, s->algo->line, "rank %d's `from` names a rank outside 0..%d", x, p - 1);
                break;
            }
            for (int64_t y = snd->from[i].lo; y <= snd->from[i].hi; y++)
                named[(size_t)x * W + (size_t)y / 64] |= 1ULL << (y % 64);
        }
    for (int i = 0; i < s->nxfers && !rc; i++) {
        const st_xfer *y = &s->xfers[i];
        if (y->src != y->dst && !(named[(size_t)y->dst * W + (size_t)y->src / 64] >> (y->src % 64) & 1))
            rc = failx(a, y, "rank %d sends to rank %d in step %d, but rank %d's `from` does not name rank %d (its "
                       "own plan would miss this receive)", y->src, y->dst, y->step + 1, y->dst, y->src);
    }
    for (int x = 0; x < p && !rc; x++) {
        int64_t most = snd->scratch[x];
        for (int y = 0; y < p; y++)
            if ((named[(size_t)x * W + (size_t)y / 64] >> (y % 64) & 1) && snd->scratch[y] > most)
                most = snd->scratch[y];
        if (most != s->nscratch)
            rc = failf(a, s->algo->line, "rank %d and the ranks its `from` names declare %lld scratch units, the "
                       "whole schedule %d: its own plan would differ", x, (long long)most, s->nscratch);
    }
    free(named);
    return rc;
}

/* Every rank's fast plan equals its part of the whole schedule s: the senders of every rank cover its part, and
 * for a sample of ranks the plan is built and compared transfer by transfer. Returns 0 (*fast: 1 when the
 * instantiation has a fast path), or -1 with the difference in a. */
static int fast_check(absstate *a, const st_sched *s, const st_inst *in, const st_senders *snd, int *fast)
{
    *fast = 0;
    if (snd->slow)
        return 0;
    if (cover_check(a, s, snd))
        return -1;
    *fast = 1;
    for (int x = 0; x < s->p; x++) {
        st_sched f;
        st_err err;
        int runs, rc;
        if (!sample_rank(in, x))
            continue;
        rc = st_sched_build_rank(s->cat, s->algo, in, x, &f, &runs, &err);
        if (rc != 0) {
            *fast = 0;
            return failf(a, err.line ? err.line : s->algo->line, "rank %d's own plan (`from`): %s", x,
                         rc > 0 ? "has no fast path, but its senders said it has" : err.msg);
        }
        rc = same_part(a, s, &f, x);
        st_sched_free(&f);
        if (rc)
            return *fast = 0, -1;
    }
    return 0;
}

/* "p = 6", "p = 6, root 3", "p = 6 as 3x2", "p = 5 as 2,3" */
static void inst_text(const st_algo *al, const st_inst *in, const char *shape, char *buf, size_t len)
{
    int o = snprintf(buf, len, "p = %d", in->p);
    if (st_coll_rooted(al->coll))
        o += snprintf(buf + o, len - (size_t)o, ", root %d", in->root);
    if (al->flags & ST_ALGO_USES_SPLIT)
        o += snprintf(buf + o, len - (size_t)o, ", split %g", in->split_ppm / 1e6);
    if (in->topo && shape)
        snprintf(buf + o, len - (size_t)o, " as %s", shape);
}

/* Verify one instantiation. Returns 0, 1 when a `require` refused it, or -1 with the failure printed. A transfer
 * that changes nothing is a warning (`FILE:LINE:COL: warning:`), printed once per algorithm (*warned). */
static int verify_one(const st_catalogue *cat, const st_algo *al, const st_inst *in, const char *shape,
                      int *nsteps, int *nxfers, int *fast, int *warned, FILE *out)
{
    st_sched s;
    st_err err;
    char what[200];
    inst_text(al, in, shape, what, sizeof what);
    st_senders snd;
    if (st_sched_build_senders(cat, al, in, &s, &snd, &err)) {
        st_senders_free(&snd);
        if (err.refused)
            return 1;
        fprintf(out, "%s:%d: error: %s %s cannot be instantiated for %s: %s\n", cat->file,
                err.line ? err.line : al->line, al->name, st_coll_name(al->coll), what, err.msg);
        return -1;
    }
    absstate a = {.s = &s, .p = in->p, .U = s.nunits, .W = (in->p + 63) / 64};
    int rc = run_abstract(&a);
    if (rc == 0)
        rc = runtime_check(&a);
    if (rc == 0)
        rc = fast_check(&a, &s, in, &snd, fast);
    st_senders_free(&snd);
    if (rc == 0 && a.lint[0] && !*warned) { /* once per algorithm: the first instantiation that shows it */
        *warned = 1;
        fprintf(out, "%s:%d:%d: warning: %s %s for %s: %s\n", cat->file, a.lint_line, a.lint_col, al->name,
                st_coll_name(al->coll), what, a.lint);
    }
    if (rc && a.col > 0)
        fprintf(out, "%s:%d:%d: error: %s %s is wrong for %s: %s\n", cat->file, a.line, a.col, al->name,
                st_coll_name(al->coll), what, a.msg);
    else if (rc)
        fprintf(out, "%s:%d: error: %s %s is wrong for %s: %s\n", cat->file, a.line, al->name,
                st_coll_name(al->coll), what, a.msg);
    *nsteps = s.nsteps;
    *nxfers = s.nxfers;
    st_sched_free(&s);
    return rc;
}

/* Whether algorithm ai runs a phase on a sub-communicator, itself or through the phases it runs (sema rules out
 * cycles; the depth bound is only a guard). */
static int is_composite(const st_catalogue *cat, int ai, int depth)
{
    for (int pc = cat->algos[ai].entry; depth < 64 && pc >= 0 && pc < cat->ncode; pc++) {
        const st_insn *in = &cat->code[pc];
        if (in->op == ST_OP_RET && in->a == 0)
            break;
        if (in->op == ST_OP_SUB_PHASE || (in->op == ST_OP_PHASE && is_composite(cat, in->a, depth + 1)))
            return 1;
    }
    return 0;
}

/* Roots to try for a rooted collective, whether or not its body reads `root`: the contract (who starts with the
 * data, who must end with it) depends on the root even when the schedule does not, and an algorithm that ignores
 * the root is wrong for every root but one. Every root up to p = ST_VERIFY_ALL_ROOTS; above, a sample that covers
 * both ends, the middle and odd/even: roots 0..3, p/2, p-2, p-1 up to p = 64, then 0, 1, p/2, p-1
 * (docs/language.md, section 7, says so; the long sweep to p = 512 stays within minutes). A composite in the
 * default sweep (`sample`, see st_verify) gets every root up to p = ST_VERIFY_ALL_ROOTS_COMPOSITE and then
 * 0, 1, p/2, p-1. Collectives without a root are tried once, with root 0. */
static int next_root(const st_algo *al, int p, int root, int sample)
{
    if (!st_coll_rooted(al->coll))
        return root < 0 ? 0 : p;
    if (sample < 0 || p <= (sample ? ST_VERIFY_ALL_ROOTS_COMPOSITE : ST_VERIFY_ALL_ROOTS))
        return root + 1; /* sample < 0: every root (one communicator's exact shape, st_verify_opts.exact_p) */
    int small = p <= 64 && !sample ? 3 : 1; /* roots 0 .. small are tried */
    if (root < small)
        return root + 1;
    if (root < p / 2)
        return p / 2;
    if (root < p - 2 && p <= 64)
        return p - 2;
    return root < p - 1 ? p - 1 : p;
}

/* Groupings (S groups of L ranks) to try for topology-aware algorithms: every divisor L of p up to p = 64, then
 * the extremes and a few in between (L = 1, 2, 3, 4, p/4, p/3, p/2, p). */
static int try_grouping(int p, int L)
{
    if (p % L)
        return 0;
    return p <= 64 || L <= 4 || L == p / 4 || L == p / 3 || L == p / 2 || L == p;
}

/* One (algorithm, collective) being verified: what its instantiations share, and what they came to. */
typedef struct tally {
    const int32_t *use; /* st_inst.use: roles replaced (NULL: none) */
    int split_set;      /* st_verify_opts: one R given */
    int32_t split_ppm;
    int sample;         /* a composite in the default sweep: fewer roots, groupings and layouts (st_verify); -1:
                         * every root whatever p (exact_p) */
    int all_roots;      /* every root whatever p (`stitchc verify --all-roots`); the rest of the sample stays */
    int nsteps, nxfers; /* of the last one verified */
    int done, refused;
    int fast;           /* instantiations whose every rank's own plan (`from`) was proved equal to its part */
    int warned;         /* a redundant transfer was reported (once per algorithm) */
} tally;

/* ", roots" when every root of every p was tried, else which roots were: above some p they are a sample, and a
 * reader of the summary must not take it for a proof of every root (`--all-roots` tries them all). */
static void roots_text(const st_algo *al, const tally *t, int pmax, char *buf, size_t len)
{
    int rs = t->all_roots ? -1 : t->sample;
    int all = rs ? ST_VERIFY_ALL_ROOTS_COMPOSITE : ST_VERIFY_ALL_ROOTS;
    if (!st_coll_rooted(al->coll))
        snprintf(buf, len, "%s", "");
    else if (rs < 0 || pmax <= all)
        snprintf(buf, len, "%s", ", roots");
    else if (rs)
        snprintf(buf, len, ", every root up to p = %d, then roots 0, 1, p/2, p-1 only (--all-roots: every root)",
                 all);
    else
        snprintf(buf, len, ", every root up to p = %d, then roots 0..3, p/2, p-2, p-1 only%s (--all-roots: every "
                 "root)", all, pmax > 64 ? " (0, 1, p/2, p-1 above p = 64)" : "");
}

/* Verify every root (or sample) of p on topology `topo` (NULL: none), described as `shape`. */
static int verify_roots(const st_catalogue *cat, const st_algo *al, int p, const st_topo *topo, const char *shape,
                        tally *t, FILE *out)
{
    int rc = 0, rs = t->all_roots ? -1 : t->sample;
    /* the 2D split ratio: the one given, else the default 0.5 and, for small p, the ends and two inner values */
    static const int32_t splits[] = {ST_SPLIT_DEFAULT_PPM, 0, 300000, 375000, 1000000};
    int nsplits = !(al->flags & ST_ALGO_USES_SPLIT) || t->split_set ? 1 : p <= ST_VERIFY_SPLIT_SWEEP_P ? 5 : 1;
    /* a refusal (rc 1) goes on to the next root; a failure (-1) stops, so that no later root's success hides it */
    for (int k = 0; k < nsplits && rc >= 0; k++)
        for (int root = next_root(al, p, -1, rs); root < p && rc >= 0; root = next_root(al, p, root, rs)) {
            st_inst in = {.p = p, .root = root, .topo = topo, .use = t->use, .split_set = 1,
                          .split_ppm = t->split_set ? t->split_ppm : splits[k]};
            int fast = 0;
            rc = verify_one(cat, al, &in, shape, &t->nsteps, &t->nxfers, &fast, &t->warned, out);
            if (rc == 1)
                t->refused++;
            else if (rc == 0)
                t->done++, t->fast += fast;
        }
    return rc < 0 ? -1 : rc;
}

/* Verify for p with every root (or sample) and, for topology-aware algorithms, every uniform grouping. */
static int verify_p(const st_catalogue *cat, const st_algo *al, int p, tally *t, FILE *out)
{
    int32_t *arr = malloc(sizeof(int32_t) * (4 * (size_t)p + 2));
    int *sizes = malloc(sizeof(int) * (size_t)p);
    int rc = 0;
    if (!arr || !sizes) {
        fprintf(out, "%s: error: out of memory\n", cat->file);
        rc = -1;
    }
    for (int L = 1; L <= p && rc >= 0; L++) {
        st_topo topo;
        char shape[40];
        int G = p / L, uses_topo = al->flags & ST_ALGO_USES_TOPO;
        if (!try_grouping(p, L) || (!uses_topo && L != p))
            continue;
        for (int g = 0; g < G; g++)
            sizes[g] = L;
        st_topo_uniform(&topo, p, G, sizes, arr, arr + G + 1, arr + G + 1 + p, arr + G + 1 + 2 * p);
        snprintf(shape, sizeof shape, "%dx%d", G, L);
        rc = verify_roots(cat, al, p, uses_topo ? &topo : NULL, shape, t, out);
    }
    free(arr);
    free(sizes);
    return rc < 0 ? -1 : 0;
}

/* Whether every level of topo has groups of one size. */
static int equal_groups(const st_topo *topo)
{
    for (int k = 0; k + 1 < st_topo_nlevels(topo); k++) {
        st_topo_level l = st_topo_level_of(topo, k);
        for (int g = 1; l.first && g < l.ngroups; g++)
            if (l.first[g + 1] - l.first[g] != l.first[1] - l.first[0])
                return 0;
    }
    return 1;
}

/* Verify on one layout: its p, and its topology for a topology-aware algorithm. Returns 0, 1 (refused), -1. */
static int verify_layout(const st_catalogue *cat, const st_algo *al, const st_layout *l, const char *name,
                         tally *t, FILE *out)
{
    st_topo topo;
    void *mem;
    char shape[200];
    if (st_topo_build(l, &topo, &mem)) {
        fprintf(out, "%s: error: out of memory\n", cat->file);
        return -1;
    }
    if (name)
        snprintf(shape, sizeof shape, "%s", name);
    else
        st_layout_format(l, shape, sizeof shape);
    int rc = verify_roots(cat, al, l->p, al->flags & ST_ALGO_USES_TOPO ? &topo : NULL, shape, t, out);
    if (rc < 0 && (al->flags & ST_ALGO_USES_TOPO) && t->done > 0 && !equal_groups(&topo))
        fprintf(out, "%s:%d: note: %s %s holds on the layouts of equal groups tried before %s; if it needs "
                "groups of equal size, add `require uniform()` to it (`require uniform(k)` for level k), so that unequal "
                "layouts refuse it instead of running it wrong\n", cat->file, al->line, al->name,
                st_coll_name(al->coll), shape);
    free(mem);
    return rc;
}

/* ---- the layout sweep ------------------------------------------------------------------------------------------ */

typedef struct sweeper {
    const st_catalogue *cat;
    const st_algo *al;
    tally *t;
    FILE *out;
} sweeper;

static int sweep_text(sweeper *w, const char *text)
{
    st_layout l;
    char why[160];
    if (st_layout_parse(text, &l, why, sizeof why)) { /* cannot happen: the texts are ours */
        fprintf(w->out, "%s: error: sweep layout '%s': %s\n", w->cat->file, text, why);
        return -1;
    }
    int rc = verify_layout(w->cat, w->al, &l, NULL, w->t, w->out);
    st_layout_free(&l);
    return rc < 0 ? -1 : 0;
}

/* Next tuple of n values in 1..max, odometer style; 0 after the last. */
static int odometer(int *a, int n, int max)
{
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] < max) {
            a[i]++;
            return 1;
        }
        a[i] = 1;
    }
    return 0;
}

/* Every list of 1..maxn counts in 1..maxs, written "a,b,c" into texts (each of `len` bytes); returns how many. */
static int lists(int maxn, int maxs, char *texts, size_t len)
{
    int a[8], count = 0;
    for (int n = 1; n <= maxn; n++) {
        for (int i = 0; i < n; i++)
            a[i] = 1;
        do {
            size_t o = 0;
            char *t = texts ? texts + (size_t)count * len : NULL;
            for (int i = 0; i < n && t; i++)
                o += (size_t)snprintf(t + o, len - o, "%s%d", i ? "," : "", a[i]);
            count++;
        } while (odometer(a, n, maxs));
    }
    return count;
}

/* The layouts after the range: one server of 1..8; two levels, 1..G servers of 1..8; three levels, 1..2 pods of
 * servers. A composite (hier, ahc, ...) costs tens of times more per instantiation than a flat algorithm (it
 * instantiates its inner algorithms for every part), so by default it gets every layout of one and two servers but
 * only every COMPOSITE_STRIDE-th of three servers and of the pods (11: 8 and 64 are neither 0 nor 1 modulo 11, so
 * the sample spreads over every size at every position and every p, and it holds spec 9's 7,5,3); `--sweep long`
 * tries them all. */
#define COMPOSITE_STRIDE 11

static int sweep(const st_catalogue *cat, const st_algo *al, int which, tally *t, FILE *out)
{
    sweeper w = {cat, al, t, out};
    int long_ = which == ST_SWEEP_LONG, rc = 0;
    int stride = t->sample ? COMPOSITE_STRIDE : 1, kept = 0;
    int G = long_ ? 4 : 3, pods = 2, servers = long_ ? 3 : 2, size = long_ ? 4 : 3;
    for (int n = 1; n <= 8 && !rc; n++) { /* one level: a single server */
        st_layout l = {0};
        char why[160];
        if (st_layout_leaf(&l, 0, n, why, sizeof why) == 0)
            rc = verify_layout(cat, al, &l, NULL, t, out) < 0 ? -1 : 0;
        st_layout_free(&l);
    }
    int n2 = lists(G, 8, NULL, 0), n3 = lists(servers, size, NULL, 0);
    char *two = malloc((size_t)n2 * 16), *pod = malloc((size_t)n3 * 16), text[128];
    if (!two || !pod) {
        fprintf(out, "%s: error: out of memory\n", cat->file);
        rc = -1;
    }
    if (!rc) {
        lists(G, 8, two, 16);
        lists(servers, size, pod, 16);
    }
    int all2 = lists(2, 8, NULL, 0); /* one or two servers: always every layout */
    for (int i = 0; i < n2 && !rc; i++) /* two levels */
        if (i < all2 || kept++ % stride == 0)
            rc = sweep_text(&w, two + (size_t)i * 16);
    for (int np = 1; np <= pods && !rc; np++) { /* three levels: pods of servers */
        int a[8];
        for (int i = 0; i < np; i++)
            a[i] = 1;
        do {
            size_t o = 0;
            for (int i = 0; i < np; i++)
                o += (size_t)snprintf(text + o, sizeof text - o, "%s[%s]", i ? "," : "", pod + (size_t)(a[i] - 1) * 16);
            if (kept++ % stride == 0)
                rc = sweep_text(&w, text);
        } while (!rc && odometer(a, np, n3));
    }
    free(two);
    free(pod);
    return rc;
}

int st_verify(const st_catalogue *cat, const st_verify_opts *o, FILE *out)
{
    int matched = 0, failed = 0;
    for (int i = 0; i < cat->nalgos; i++) {
        const st_algo *al = &cat->algos[i];
        int uses_topo = al->flags & ST_ALGO_USES_TOPO;
        if ((o->algo && strcasecmp(o->algo, al->name) != 0) || (o->coll >= 0 && o->coll != al->coll))
            continue;
        matched++;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        /* composites (is_composite) cost tens of times more per instantiation than flat algorithms: by default
         * they get fewer roots (next_root), above p = 32 only every p divisible by 12 and the last (each with
         * every grouping), and fewer layouts (sweep), so that the default verify stays near ten seconds; given
         * layouts and --sweep long get everything */
        int sample = !o->layouts && !o->exact_p && o->sweep != ST_SWEEP_LONG && is_composite(cat, i, 0);
        tally t = {.use = o->use, .split_set = o->split_set, .split_ppm = o->split_ppm,
                   .sample = o->exact_p > 0 ? -1 : sample, .all_roots = o->all_roots};
        int bad = 0, pmax = o->pmax;
        char range[64];
        if (o->exact_p > 0) {
            bad = verify_roots(cat, al, o->exact_p, uses_topo ? o->exact_topo : NULL, "the communicator's groups", &t,
                               out) < 0;
            if (bad && uses_topo && o->exact_topo && !equal_groups(o->exact_topo))
                fprintf(out, "%s:%d: note: the communicator's groups are of unequal sizes; if %s %s needs groups of "
                        "equal size, add `require uniform()` to it (`require uniform(k)` for level k), so that such "
                        "a communicator refuses it instead\n", cat->file, al->line, al->name, st_coll_name(al->coll));
            pmax = o->exact_p;
            if (!bad && t.refused > 0)
                fprintf(out, "not applicable: %s %s for p = %d (its `require` does not hold)\n", al->name,
                        st_coll_name(al->coll), o->exact_p);
            snprintf(range, sizeof range, "p = %d", o->exact_p);
        } else if (o->layouts) {
            for (int k = 0; k < o->nlayouts && !bad; k++) {
                const char *name = o->layout_names ? o->layout_names[k] : NULL;
                char shape[200];
                int before = t.refused;
                bad = verify_layout(cat, al, &o->layouts[k], name, &t, out) < 0;
                pmax = o->layouts[k].p;
                if (!bad && t.refused > before) {
                    st_layout_format(&o->layouts[k], shape, sizeof shape);
                    fprintf(out, "not applicable: %s %s on %s (its `require` does not hold)\n", al->name,
                            st_coll_name(al->coll), name ? name : shape);
                }
            }
            snprintf(range, sizeof range, "the given layout%s", o->nlayouts == 1 ? "" : "s");
        } else {
            for (int p = o->pmin; p <= o->pmax && !bad; p++) {
                if (sample && p > 32 && p % 12 != 0 && p != o->pmax) /* composites: 36, 48, 60, ..., pmax */
                    continue;
                if (o->progress)
                    o->progress(o->progress_ctx, al->name, al->coll, matched, p, o->pmin, o->pmax);
                bad = verify_p(cat, al, p, &t, out) != 0;
            }
            int nsteps = t.nsteps, nxfers = t.nxfers; /* the summary quotes p = pmax */
            if (!bad && uses_topo && o->sweep != ST_SWEEP_NONE) {
                if (o->progress)
                    o->progress(o->progress_ctx, al->name, al->coll, matched, 0, o->pmin, o->pmax);
                bad = sweep(cat, al, o->sweep, &t, out) != 0;
            }
            t.nsteps = nsteps, t.nxfers = nxfers;
            if (!bad && t.done == 0 && t.refused > 0) {
                fprintf(out, "%s:%d: error: %s %s: its `require` refused every instantiation tried (%d), so "
                        "nothing was proved\n", cat->file, al->line, al->name, st_coll_name(al->coll), t.refused);
                bad = 1;
            }
            snprintf(range, sizeof range, "p = %d..%d", o->pmin, o->pmax);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        failed += bad;
        char refused[64] = "";
        if (t.refused)
            snprintf(refused, sizeof refused, ", %d refused by require", t.refused);
        char roots[160];
        roots_text(al, &t, pmax, roots, sizeof roots);
        if (!bad && t.done > 0)
            fprintf(out, "verified %-12s %-15s %s%s%s%s%s   (p = %d: %d steps, %d transfers)  %.3f s\n",
                    al->name, st_coll_name(al->coll), range, roots,
                    uses_topo ? (o->layouts ? "" : o->sweep == ST_SWEEP_NONE ? ", SxL groupings"
                                 : ", SxL groupings and layouts") : "",
                    refused, t.fast == t.done ? ", own plans (from)" : t.fast ? ", some own plans (from)" : "", pmax, t.nsteps, t.nxfers,
                    (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    return matched ? failed : -1;
}

/* ---- what an emitted catalogue proved, and the proof of one instantiation (the runtime's) ------------------- */

/* S groups of L consecutive ranks on two levels, as verify_p builds them: *L is set. */
static int uniform_groups(const st_topo *topo, int p, int *L)
{
    if (!topo || (topo->nlevels != 0 && topo->nlevels != 2) || topo->ngroups < 1 || p % topo->ngroups)
        return 0;
    *L = p / topo->ngroups;
    for (int g = 0; g <= topo->ngroups; g++)
        if (topo->first[g] != g * *L)
            return 0;
    for (int x = 0; x < p; x++)
        if (topo->members[x] != x)
            return 0;
    return 1;
}

/* Whether the default verification of cat->verified_pmin..verified_pmax (what `stitchc emit` runs) instantiated
 * exactly `in`: the same p, root, groups, roles and split ratio. Mirrors st_verify's choices for a range
 * (next_root, try_grouping, the composites' sample of p), so the two cannot drift apart. */
int st_verify_covers(const st_catalogue *cat, int ai, const st_inst *in)
{
    const st_algo *al = &cat->algos[ai];
    int p = in->p, L = p, sample = is_composite(cat, ai, 0);
    if (cat->verified_pmax <= 0 || p < cat->verified_pmin || p > cat->verified_pmax)
        return 0;
    for (int i = 0; in->use && i < cat->nalgos; i++)
        if (in->use[i] >= 0)
            return 0; /* a role replaced: a composition the range never saw */
    if ((al->flags & ST_ALGO_USES_SPLIT) && in->split_set && in->split_ppm != ST_SPLIT_DEFAULT_PPM) {
        static const int32_t swept[] = {0, 300000, 375000, 1000000};
        int hit = 0;
        for (int k = 0; k < 4 && p <= ST_VERIFY_SPLIT_SWEEP_P; k++)
            hit |= in->split_ppm == swept[k];
        if (!hit)
            return 0;
    }
    if ((al->flags & ST_ALGO_USES_TOPO) && !(uniform_groups(in->topo, p, &L) && try_grouping(p, L)))
        return 0; /* no groups, unequal or permuted ones: proved per communicator, not from the range */
    if (sample && !(p <= 32 || p % 12 == 0 || p == cat->verified_pmax))
        return 0;
    for (int r = next_root(al, p, -1, sample); r < p; r = next_root(al, p, r, sample))
        if (r == in->root)
            return 1;
    return 0;
}

int st_verify_inst(const st_catalogue *cat, int ai, const st_inst *in, char *err, size_t errlen)
{
    char *report = NULL;
    size_t len = 0;
    int nsteps, nxfers, fast, warned = 1; /* a run-time proof reports errors only: lint is stitchc's */
    FILE *mem = open_memstream(&report, &len);
    if (!mem) {
        snprintf(err, errlen, "%s: out of memory verifying %s", cat->file, cat->algos[ai].name);
        return -1;
    }
    int rc = verify_one(cat, &cat->algos[ai], in, in->topo ? "the communicator's groups" : NULL, &nsteps, &nxfers,
                        &fast, &warned, mem);
    if (fclose(mem) != 0) {
        free(report);
        snprintf(err, errlen, "%s: out of memory verifying %s", cat->file, cat->algos[ai].name);
        return -1;
    }
    while (len > 0 && report[len - 1] == '\n')
        report[--len] = '\0';
    snprintf(err, errlen, "%s", rc < 0 ? report : "");
    free(report);
    return rc;
}
