/* st_model.c - the alpha-beta-gamma cost model (see st_model.h and docs/cost-model.md).
 *
 * Costing is one accumulator (acc_*): per step it sums, for every rank that takes part, the bytes it sends and
 * receives on each level and the bytes it reduces, then turns each rank's sums into its time and keeps the
 * slowest. Only the ranks a step touches are visited and reset, so a step costs O(its transfers), never O(p).
 *
 * The exact way feeds it a whole schedule. The symmetric way runs the VM for the representatives 0 .. P-1 only
 * (model_rank_xfers, the one place that knows where a rank's transfers come from), places their steps as the
 * schedule builder does (phases on sub-communicators last as long as their longest rank), and feeds the
 * accumulator with rank classes: a send of representative q to rank d is q's send and the receive of class
 * d mod P, which is what every rank of that class receives once the algorithm is shift-symmetric. Sampled ranks
 * beyond the representatives are run too and compared with their shifted representative; a difference is an
 * error that names both ranks.
 */
#include "st_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_topofile.h"
#include "st_vm.h"

int st_model_from_topofile(const struct st_topofile *tf, st_model *m)
{
    memset(m, 0, sizeof *m);
    if (tf->nlevels < 1)
        return -1;
    m->nlevels = tf->nlevels;
    for (int k = 0; k < tf->nlevels; k++)
        m->level[k] = (st_model_level){tf->level[k].latency, 1.0 / tf->level[k].bandwidth};
    m->gamma = tf->reduce_bandwidth > 0 ? 1.0 / tf->reduce_bandwidth : 0;
    return 0;
}

double st_model_block_bytes(int coll, int p, double bytes)
{
    if (coll == ST_COLL_ALL_TO_ALL || coll == ST_COLL_ALL_TO_ALL_V)
        return bytes / p;
    return bytes / st_coll_nblocks(coll, p);
}

double st_model_busbw_factor(int coll, int p)
{
    switch (coll) {
    case ST_COLL_ALL_REDUCE:
        return 2.0 * (p - 1) / p;
    case ST_COLL_REDUCE_SCATTER:
    case ST_COLL_ALL_GATHER:
    case ST_COLL_ALL_TO_ALL:
    case ST_COLL_ALL_TO_ALL_V:
        return (double)(p - 1) / p;
    default:
        return 1;
    }
}

int st_model_level_of(const st_topo *t, int a, int b)
{
    int n = st_topo_nlevels(t);
    if (a == b || !t)
        return 0;
    for (int k = 0; k < n - 1; k++) {
        st_topo_level l = st_topo_level_of(t, k);
        if (!l.group_of || l.group_of[a] == l.group_of[b])
            return k;
    }
    return n - 1;
}

void st_model_result_free(st_model_result *r)
{
    free(r->steps);
    free(r->rank_time);
    memset(r, 0, sizeof *r);
}

static int fail(st_err *err, int line, const char *msg)
{
    err->line = line;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return -1;
}

/* ---- unit sizes ------------------------------------------------------------------------------------------------ */

typedef struct sizing {
    int64_t U, nblocks;
    double n;        /* elements per block */
    double elem;     /* bytes per element */
    int64_t per, ni; /* units and (when whole, below) elements per block, as integers */
    int whole;       /* the blocks hold whole units (U a multiple of nblocks) and n < 2^53: integer counting */
} sizing;

/* Elements of units [a, b) of one block (a, b within the block's per units): floor splits, so a telescoping sum. */
static double block_elems(const sizing *z, int64_t per, int64_t a, int64_t b)
{
    return floor(z->n * (double)b / (double)per) - floor(z->n * (double)a / (double)per);
}

/* The elements of the vector's units before unit x (x <= U), blocks of whole units: block x / per holds n, and
 * its units split n by floors, so floor(n x / per) exactly, in integers (a double lost the floor's last unit from
 * n x = 2^53 on: 1,000,000 ranks of 8 units at 1 GiB). */
static int64_t elems_before(const sizing *z, int64_t x)
{
    int64_t nx;
    if (!__builtin_mul_overflow(z->ni, x, &nx))
        return nx / z->per;
    return (int64_t)((__int128)z->ni * x / z->per);
}

/* Bytes of units [start, start + len); scratch units (at U and above) are slots of the largest unit. */
static double run_bytes(const sizing *z, int64_t start, int64_t len)
{
    int64_t per = z->U / z->nblocks, end = start + len;
    double e = 0;
    if (end > z->U) {
        int64_t s0 = start > z->U ? start : z->U;
        e += (double)(end - s0) * ceil(z->n / (double)per);
        end = z->U;
    }
    if (z->whole && start < end)
        return (e + (double)(elems_before(z, end) - elems_before(z, start))) * z->elem;
    while (start < end) {
        int64_t b = start / per, j = start % per, stop = (b + 1) * per < end ? (b + 1) * per : end;
        e += block_elems(z, per, j, j + (stop - start));
        start = stop;
    }
    return e * z->elem;
}

/* sum_{i < n} floor((a i + b) / m), a, b >= 0, m > 0: the Euclid-like reduction (as in AtCoder's floor_sum), in
 * O(log m) steps instead of n terms. */
static unsigned __int128 floor_sum(unsigned __int128 n, unsigned __int128 m, unsigned __int128 a, unsigned __int128 b)
{
    unsigned __int128 sum = 0;
    for (;;) {
        if (a >= m) {
            sum += n * (n - 1) / 2 * (a / m);
            a %= m;
        }
        if (b >= m) {
            sum += n * (b / m);
            b %= m;
        }
        unsigned __int128 y = a * n + b;
        if (y < m)
            return sum;
        n = y / m;
        b = y % m;
        unsigned __int128 t = m;
        m = a;
        a = t;
    }
}

/* A progression of runs: units [start + k stride, ... + len) for k < count (stride > len once count > 1). */
typedef struct prog {
    int32_t start, len, stride, count;
} prog;

#define ST_PROG_SUM_MIN 32 /* from this many runs a progression is summed by floor_sum, not run by run */

/* Bytes of a progression: run by run, or (blocks of whole units, below the scratch units) as the difference of
 * two floor sums, sum_k floor(n (start + len + k stride) / per) - floor(n (start + k stride) / per). */
static double prog_bytes(const sizing *z, const prog *g)
{
    int64_t last_end = (int64_t)g->start + (int64_t)g->stride * (g->count - 1) + g->len;
    if (g->count < ST_PROG_SUM_MIN || !z->whole || last_end > z->U) {
        double b = 0;
        for (int64_t k = 0; k < g->count; k++)
            b += run_bytes(z, g->start + k * g->stride, g->len);
        return b;
    }
    unsigned __int128 n = (unsigned __int128)z->ni, a = n * (unsigned)g->stride;
    unsigned __int128 hi = floor_sum((unsigned)g->count, (unsigned __int128)z->per, a,
                                     n * (unsigned)(g->start + g->len));
    unsigned __int128 lo = floor_sum((unsigned)g->count, (unsigned __int128)z->per, a, n * (unsigned)g->start);
    return (double)(int64_t)(hi - lo) * z->elem;
}

/* ---- the accumulator ------------------------------------------------------------------------------------------- */

typedef struct acc {
    const st_model *m;
    int n, L;                /* slots (ranks or classes), levels */
    double *out, *in, *red;  /* n * L, n * L, n */
    unsigned char *seen;     /* n */
    int32_t *touched;
    int ntouched;
    double *rank_time;       /* NULL; st_model_sched: this step's row of n; cost_logs: the whole nsteps * n */
    const st_topo *topo;     /* cost_logs: the levels of the ranks */
} acc;

static int acc_init(acc *a, const st_model *m, int n, int L)
{
    memset(a, 0, sizeof *a);
    a->m = m, a->n = n, a->L = L;
    a->out = calloc((size_t)n * (size_t)L, sizeof(double));
    a->in = calloc((size_t)n * (size_t)L, sizeof(double));
    a->red = calloc((size_t)n, sizeof(double));
    a->seen = calloc((size_t)n, 1);
    a->touched = malloc(sizeof(int32_t) * (size_t)n);
    return a->out && a->in && a->red && a->seen && a->touched ? 0 : -1;
}

static void acc_free(acc *a)
{
    free(a->out), free(a->in), free(a->red), free(a->seen), free(a->touched);
}

static void touch(acc *a, int x)
{
    if (!a->seen[x])
        a->seen[x] = 1, a->touched[a->ntouched++] = x;
}

/* A transfer from slot src to slot dst on `level`; local transfers move nothing on a link. */
static void acc_add(acc *a, int src, int dst, int level, double bytes, int op, int local)
{
    if (bytes <= 0)
        return; /* HCCL skips empty slices, handshake and all */
    if (level >= a->L)
        level = a->L - 1;
    touch(a, src), touch(a, dst);
    if (!local) {
        a->out[(size_t)src * a->L + level] += bytes;
        a->in[(size_t)dst * a->L + level] += bytes;
    }
    if (op == ST_X_REDUCE)
        a->red[dst] += bytes;
}

static const st_model_level *model_level(const st_model *m, int k)
{
    return &m->level[k < m->nlevels ? k : m->nlevels - 1];
}

/* Close a step: every touched slot's time, the slowest into *st; resets what it read. */
static void acc_step(acc *a, st_model_step *st)
{
    *st = (st_model_step){.rank = -1, .level = -1};
    for (int i = 0; i < a->ntouched; i++) {
        int x = a->touched[i], lv = -1;
        double link = 0, bytes = 0;
        for (int k = 0; k < a->L; k++) {
            double o = a->out[(size_t)x * a->L + k], in = a->in[(size_t)x * a->L + k], b = o > in ? o : in;
            if (b > 0) {
                const st_model_level *ml = model_level(a->m, k);
                double t = ml->alpha + b * ml->beta;
                if (t > link || lv < 0)
                    link = t, lv = k, bytes = b;
            }
            a->out[(size_t)x * a->L + k] = a->in[(size_t)x * a->L + k] = 0;
        }
        double t = link + a->red[x] * a->m->gamma;
        if (a->rank_time)
            a->rank_time[x] = t;
        if (st->rank < 0 || t > st->time)
            *st = (st_model_step){t, x, lv, bytes, a->red[x], st->nxfers};
        a->red[x] = 0;
        a->seen[x] = 0;
    }
    a->ntouched = 0;
}

static int result_init(st_model_result *out, int p, int nsteps, int per_rank, int method)
{
    memset(out, 0, sizeof *out);
    out->p = p, out->nsteps = nsteps, out->method = method, out->period = p;
    out->steps = calloc((size_t)(nsteps ? nsteps : 1), sizeof(st_model_step));
    if (per_rank)
        out->rank_time = calloc((size_t)(nsteps ? nsteps : 1) * (size_t)p, sizeof(double));
    return out->steps && (!per_rank || out->rank_time) ? 0 : -1;
}

static void result_sum(st_model_result *out)
{
    out->time = 0;
    for (int s = 0; s < out->nsteps; s++)
        out->time += out->steps[s].time;
}

/* ---- exact: a whole schedule ----------------------------------------------------------------------------------- */

static sizing make_sizing(int coll, int p, int64_t U, double bytes, const st_model_opts *o)
{
    double elem = o && o->elem_size > 0 ? o->elem_size : 1;
    sizing z = {U, st_coll_nblocks(coll, p), floor(st_model_block_bytes(coll, p, bytes) / elem), elem, 0, 0, 0};
    z.per = z.U / z.nblocks;
    z.whole = z.per > 0 && z.U % z.nblocks == 0 && z.n >= 0 && z.n < 9007199254740992.0; /* 2^53 */
    z.ni = z.whole ? (int64_t)z.n : 0;
    return z;
}

int st_model_sched(const st_sched *s, const st_topo *t, const st_model *m, double bytes, const st_model_opts *opts,
                   st_model_result *out, st_err *err)
{
    int per_rank = opts && opts->per_rank;
    acc a = {0};
    if (m->nlevels < 1)
        return fail(err, 0, "the model has no levels");
    if (result_init(out, s->p, s->nsteps, per_rank, ST_MODEL_EXACT) || acc_init(&a, m, s->p, st_topo_nlevels(t))) {
        st_model_result_free(out);
        acc_free(&a);
        return fail(err, 0, "out of memory");
    }
    sizing z = make_sizing(s->algo->coll, s->p, s->nunits, bytes, opts);
    for (int st = 0; st < s->nsteps; st++) {
        for (int i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
            const st_xfer *x = &s->xfers[i];
            double b = 0;
            for (int k = 0; k < x->nruns; k++)
                b += run_bytes(&z, s->runs[x->run0 + k].start, s->runs[x->run0 + k].len);
            int local = x->src == x->dst;
            acc_add(&a, x->src, x->dst, local ? 0 : st_model_level_of(t, x->src, x->dst), b, x->op, local);
        }
        a.rank_time = per_rank ? out->rank_time + (size_t)st * (size_t)s->p : NULL;
        acc_step(&a, &out->steps[st]);
        out->steps[st].nxfers = s->step_first[st + 1] - s->step_first[st];
    }
    out->nxfers = s->nxfers;
    result_sum(out);
    acc_free(&a);
    return 0;
}

/* ---- evaluating ranks: all of them (exact) or the representatives (symmetric) ----------------------------------- */

typedef struct rx {         /* one send, before its step is placed */
    int32_t step, dst, op, nunits;
    double bytes;
} rx;

typedef struct mark {
    int32_t step, begin;
    uint64_t key;           /* begins: its members' hash (the part); 0 for a split, which all ranks run together */
} mark;

typedef struct rank_log {   /* what model_rank_xfers saw of one rank */
    int p, rank, nsteps, lane_base, lane_max, in_lane;
    rx *x;
    int nx, capx;
    prog *runs;             /* the sends' source units, sorted and merged, in progressions of equal runs */
    int32_t *run0;          /* per send, its first progression (its last is the next send's first - 1) */
    int nruns, capruns, caprun0;
    mark *w;
    int nw, capw;
    int64_t U;
    int64_t cap;            /* the most sends the log may take (0: no limit); *capped when a send went beyond */
    int capped;
    const st_algo *whole;   /* the classes' representatives: refuse at the first phase on a part (log_within) */
} rank_log;

static int grow(void **v, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap : 64;
    while (c < need) {
        if (c > (1 << 28))
            return -1;
        c *= 2;
    }
    void *n = realloc(*v, size * (size_t)c);
    if (!n)
        return -1;
    *v = n, *cap = c;
    return 0;
}

static int oom(st_err *err)
{
    return fail(err, 0, "out of memory");
}

static int log_step(void *ctx, int line, st_err *err)
{
    (void)line, (void)err;
    ((rank_log *)ctx)->nsteps++;
    return 0;
}

static uint64_t hash_members(const int32_t *v, int n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uint32_t)v[i]) * 1099511628211ull;
    return h | 1; /* never 0, the key of "everyone" */
}

static int log_within(void *ctx, int begin, const int32_t *members, int n, int line, st_err *err)
{
    rank_log *g = ctx;
    (void)line;
    if (g->in_lane)
        return 0;
    /* Classes cost every step in lockstep: a phase on a part of the ranks (which runs on its own) has no class yet,
     * and the first one refuses the classes (refused 2: the caller may fall back to every rank) without running
     * the rest of the program or the other representatives. */
    if (g->whole && begin && members) {
        err->line = g->whole->line;
        snprintf(err->msg, sizeof err->msg, "%s runs phases on sub-communicators, which the classes of an unequal "
                 "layout do not model yet (p = %d)", g->whole->name, g->p);
        err->refused = 2;
        return -1;
    }
    if (grow((void **)&g->w, &g->capw, g->nw + 1, sizeof(mark)))
        return oom(err);
    g->w[g->nw++] = (mark){g->nsteps, begin, begin && members ? hash_members(members, n) : 0};
    return 0;
}

/* A split's lanes share its steps, exactly as core/st_sched.c's on_lane places them. */
static int log_lane(void *ctx, int what, int line, st_err *err)
{
    rank_log *g = ctx;
    if (what == 0) {
        g->lane_base = g->lane_max = g->nsteps;
        return log_within(ctx, 1, NULL, 0, line, err);
    }
    if (what == 1)
        g->nsteps = g->lane_base, g->in_lane = 1;
    else if (what == 2) {
        if (g->nsteps > g->lane_max)
            g->lane_max = g->nsteps;
        g->in_lane = 0;
    } else {
        g->nsteps = g->lane_max;
        return log_within(ctx, 0, NULL, 0, line, err);
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The source ranges, sorted and merged into runs (as st_sched.c does, so unit counts agree with the schedule). */
static int log_send(void *ctx, int64_t dst, int op, const int64_t *lo, const int64_t *hi, int nsrc, int n, int line,
                    int col, st_err *err)
{
    rank_log *g = ctx;
    (void)n, (void)col;
    if (g->cap && g->nx >= g->cap) {
        g->capped = 1;
        return fail(err, line, "over the model's budget of transfers");
    }
    if (g->nsteps == 0 || dst < 0 || dst >= g->p) {
        err->line = line;
        snprintf(err->msg, sizeof err->msg, "send outside any step or to rank %lld, outside 0..%d (p = %d, rank %d)",
                 (long long)dst, g->p - 1, g->p, g->rank);
        return -1;
    }
    int64_t (*r)[2] = malloc(sizeof *r * (size_t)(nsrc ? nsrc : 1));
    if (!r || grow((void **)&g->x, &g->capx, g->nx + 1, sizeof(rx)) ||
        grow((void **)&g->run0, &g->caprun0, g->nx + 1, sizeof(int32_t))) {
        free(r);
        return oom(err);
    }
    for (int i = 0; i < nsrc; i++)
        r[i][0] = lo[i], r[i][1] = hi[i];
    int sorted = 1; /* the VM mostly emits ranges in order: sorting them is then a waste at p = 1,000,000 */
    for (int i = 1; i < nsrc && sorted; i++)
        sorted = r[i - 1][0] <= r[i][0];
    if (!sorted)
        qsort(r, (size_t)nsrc, sizeof *r, cmp_i64);
    g->run0[g->nx] = g->nruns;
    rx *x = &g->x[g->nx++];
    *x = (rx){g->nsteps - 1, (int32_t)dst, op, 0, 0};
    for (int i = 0; i < nsrc;) {
        int64_t a = r[i][0], b = r[i][1];
        for (i++; i < nsrc && r[i][0] <= b + 1; i++)
            if (r[i][1] > b)
                b = r[i][1];
        x->nunits += (int32_t)(b - a + 1);
        prog *last = g->nruns > g->run0[g->nx - 1] ? &g->runs[g->nruns - 1] : NULL;
        if (last && last->len == b - a + 1 &&
            (last->count == 1 || a - last->start == (int64_t)last->stride * last->count) &&
            a - last->start <= INT32_MAX) { /* one more run of the progression */
            if (last->count == 1)
                last->stride = (int32_t)(a - last->start);
            last->count++;
            continue;
        }
        if (grow((void **)&g->runs, &g->capruns, g->nruns + 1, sizeof(prog))) {
            free(r);
            return oom(err);
        }
        g->runs[g->nruns++] = (prog){(int32_t)a, (int32_t)(b - a + 1), 0, 1};
    }
    free(r);
    return 0;
}

static void log_free(rank_log *g)
{
    free(g->x), free(g->runs), free(g->run0), free(g->w);
    memset(g, 0, sizeof *g);
}

/* Each send's bytes for one size of the collective. */
static void log_bytes(rank_log *g, const sizing *z)
{
    for (int i = 0; i < g->nx; i++) {
        int end = i + 1 < g->nx ? g->run0[i + 1] : g->nruns;
        g->x[i].bytes = 0;
        for (int k = g->run0[i]; k < end; k++)
            g->x[i].bytes += prog_bytes(z, &g->runs[k]);
    }
}

/* The seam: rank r's transfers, step by step, into g (its sends; receives come from the other ranks' sends, or
 * from the symmetry). Today the VM runs r's program; a per-rank plan can take its place. */
static int model_rank_xfers(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int r, rank_log *g,
                            st_vm_cache *cache, int64_t cap, int classes, st_err *err)
{
    st_vm_sink sink = {.ctx = g, .cache = cache, .step = log_step, .send = log_send, .within = log_within,
                       .lane = log_lane};
    int64_t nunits, nscratch;
    memset(g, 0, sizeof *g);
    g->p = in->p, g->rank = r, g->cap = cap, g->whole = classes ? algo : NULL;
    if (st_vm_run(cat, algo, in, r, &sink, &nunits, &nscratch, err))
        return -1;
    g->U = nunits;
    if (nunits < 1 || nunits % st_coll_nblocks(algo->coll, in->p)) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg, "%s declares %lld units, not a positive multiple of %s's %d blocks "
                 "(p = %d)", algo->name, (long long)nunits, st_coll_name(algo->coll),
                 st_coll_nblocks(algo->coll, in->p), in->p);
        return -1;
    }
    return 0;
}

/* The period P of t's symmetry: every level uniform and in rank order, P the size of the outermost stored
 * level's groups (1 without levels). p when there is none. */
static int topo_period(const st_topo *t, int p)
{
    int n = st_topo_nlevels(t), P = 1;
    for (int k = 0; k < n - 1; k++) {
        st_topo_level l = st_topo_level_of(t, k);
        int size = p / l.ngroups;
        if (size * l.ngroups != p)
            return p;
        for (int g = 0; g <= l.ngroups; g++)
            if (l.first[g] != g * size)
                return p;
        for (int x = 0; x < p; x++)
            if (l.members[x] != x)
                return p;
        P = size;
    }
    return P;
}

/* Does sample rank r = q + shift do what representative q does, every peer shifted and the same unit counts? */
static int same_shifted(const rank_log *q, const rank_log *s, int shift, int p)
{
    if (q->nx != s->nx || q->nw != s->nw || q->nsteps != s->nsteps || q->U != s->U)
        return 0;
    for (int i = 0; i < q->nw; i++)
        if (q->w[i].step != s->w[i].step || q->w[i].begin != s->w[i].begin)
            return 0;
    for (int i = 0; i < q->nx; i++) {
        const rx *a = &q->x[i], *b = &s->x[i];
        if (a->step != b->step || a->op != b->op || a->nunits != b->nunits || ((int64_t)a->dst + shift) % p != b->dst)
            return 0;
    }
    return 1;
}

/* Run sampled ranks r = q + j P (j in js, q in 0, P/2 and P-1) and compare them with their representative q. */
static int check_copies(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const rank_log *reps, int P,
                        const int *js, int njs, st_vm_cache *cache, st_err *err)
{
    int p = in->p, copies = p / P;
    int qs[3] = {0, P / 2, P - 1};
    for (int a = 0; a < njs; a++)
        for (int b = 0; b < 3; b++) {
            int j = js[a], q = qs[b];
            if (j < 1 || j >= copies || (a > 0 && js[a] == js[a - 1]) || (b > 0 && qs[b] == qs[b - 1]))
                continue;
            rank_log s;
            int r = q + j * P;
            if (model_rank_xfers(cat, algo, in, r, &s, cache, 0, 0, err)) {
                log_free(&s);
                return -1;
            }
            int ok = same_shifted(&reps[q], &s, j * P, p);
            log_free(&s);
            if (!ok) {
                err->line = algo->line;
                snprintf(err->msg, sizeof err->msg, "%s is not shift-symmetric for p = %d: rank %d does not do what "
                         "rank %d does with every peer shifted by %d, so the symmetric model does not apply (the "
                         "exact one does up to p = %d)", algo->name, p, r, q, j * P, ST_MODEL_EXACT_RANKS);
                err->refused = 2; /* not the algorithm's fault: st_model_predict may fall back */
                return -1;
            }
        }
    return 0;
}

/* Run the sampled ranks beyond the representatives and compare. */
static int check_samples(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const rank_log *reps, int P,
                         st_vm_cache *cache, st_err *err)
{
    int copies = in->p / P, js[3] = {1, copies / 2, copies - 1};
    return check_copies(cat, algo, in, reps, P, js, 3, cache, err);
}

/* ---- classes: unequal groups (st_model.h, ST_MODEL_CLASSES) ------------------------------------------------------ */

typedef struct classes {
    int P, K, p;      /* the period of the uniform inner levels, K = p / P copies */
    int64_t *bound;   /* 0, the first rank of every group of the other levels, p: sorted, without repeats */
    int nbound;
    int nlv;          /* the topology's levels */
    const int32_t *gof[ST_TOPO_MAX_LEVELS]; /* per level below the outermost, each rank's group (NULL: one) */
} classes;

static void classes_free(classes *cl)
{
    free(cl->bound);
    memset(cl, 0, sizeof *cl);
}

static int cmp_i64v(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Is level l made of groups of consecutive ranks in rank order (all of one size `*size` when uniform)? */
static int level_in_order(const st_topo_level *l, int p, int *uniform, int *size)
{
    *size = p / l->ngroups;
    *uniform = *size * l->ngroups == p;
    for (int g = 0; g <= l->ngroups && *uniform; g++)
        *uniform = l->first[g] == (int64_t)g * *size;
    for (int x = 0; x < p; x++)
        if (l->members[x] != x)
            return 0;
    return 1;
}

/* t's classes: 0 with *cl filled; 1 when t has none (a level out of rank order, or every level uniform: the
 * symmetric way then applies); -1 out of memory. */
static int topo_classes(const st_topo *t, int p, classes *cl)
{
    int n = st_topo_nlevels(t), prefix = 1, any = 0;
    memset(cl, 0, sizeof *cl);
    cl->P = 1, cl->p = p;
    int64_t nb = 2;
    for (int k = 0; k < n - 1; k++) {
        st_topo_level l = st_topo_level_of(t, k);
        int uniform, size;
        if (!level_in_order(&l, p, &uniform, &size))
            return 1;
        if (prefix && uniform)
            cl->P = size;
        else
            prefix = 0, any = 1, nb += l.ngroups;
    }
    if (!any)
        return 1;
    cl->K = p / cl->P;
    cl->nlv = n < ST_TOPO_MAX_LEVELS ? n : ST_TOPO_MAX_LEVELS;
    for (int k = 0; k < cl->nlv - 1; k++)
        cl->gof[k] = st_topo_level_of(t, k).group_of;
    cl->bound = malloc(sizeof(int64_t) * (size_t)nb);
    if (!cl->bound)
        return -1;
    cl->bound[cl->nbound++] = 0, cl->bound[cl->nbound++] = p;
    prefix = 1;
    for (int k = 0; k < n - 1; k++) {
        st_topo_level l = st_topo_level_of(t, k);
        int uniform, size;
        level_in_order(&l, p, &uniform, &size);
        if (prefix && uniform)
            continue;
        prefix = 0;
        for (int g = 1; g < l.ngroups; g++)
            cl->bound[cl->nbound++] = l.first[g];
    }
    qsort(cl->bound, (size_t)cl->nbound, sizeof(int64_t), cmp_i64v);
    int m = 0;
    for (int i = 0; i < cl->nbound; i++)
        if (m == 0 || cl->bound[i] != cl->bound[m - 1])
            cl->bound[m++] = cl->bound[i];
    cl->nbound = m;
    return 0;
}

/* Samples for the classes: the copies at both sides of every unequal group's first rank (at most 24 groups,
 * spread evenly), and the first, middle and last copies. */
static int check_classes(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const rank_log *reps,
                         const classes *cl, st_vm_cache *cache, st_err *err)
{
    int js[3 + 2 * 24], n = 0, inner = cl->nbound - 2;
    js[n++] = 1, js[n++] = cl->K / 2, js[n++] = cl->K - 1;
    for (int i = 0; i < 24 && i < inner; i++) {
        int64_t b = cl->bound[1 + (inner <= 24 ? i : (int64_t)i * inner / 24)];
        js[n++] = (int)(b / cl->P), js[n++] = (int)(b / cl->P) - 1;
    }
    qsort(js, (size_t)n, sizeof *js, cmp_int);
    return check_copies(cat, algo, in, reps, cl->P, js, n, cache, err);
}

/* ---- costing the logs: stretches, parts, steps ------------------------------------------------------------------
 * The steps between two marks (phases on sub-communicators beginning or ending) form a stretch. In a stretch every
 * slot belongs to a part: the members of the innermost phase it is in (everyone outside phases). Parts run on
 * their own, each step of a part as long as its slowest slot, and the stretch lasts as long as its slowest part,
 * whose steps are the ones reported. Outside phases there is one part and this is plain lockstep. */

typedef struct costing {
    const st_model *m;
    int nslots, P, p, nw, nsteps;
    rank_log *logs;       /* nslots */
    int32_t *seglen;      /* nw + 1 */
    int32_t *part;        /* per slot: its part in the current stretch */
    int nparts;
    st_model_step *rec;   /* nparts * len of the current stretch */
    double *sum;          /* per part */
    struct cplan *plan;   /* classes: the size-independent part, built at the first size */
} costing;

typedef struct keyed {
    uint64_t key;
    int32_t slot;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->slot > y->slot) - (x->slot < y->slot);
}

/* The key of slot q in stretch k: the innermost phase open after its mark k - 1. */
static uint64_t stretch_key(const rank_log *g, int k)
{
    int depth = 0;
    uint64_t stack[64];
    for (int i = 0; i < k && i < g->nw; i++) {
        if (g->w[i].begin) {
            if (depth < 64)
                stack[depth] = g->w[i].key;
            depth++;
        } else if (depth > 0) {
            depth--;
        }
    }
    return depth > 0 && depth <= 64 ? stack[depth - 1] : 0;
}

static int assign_parts(costing *c, int k, keyed *tmp)
{
    for (int q = 0; q < c->nslots; q++)
        tmp[q] = (keyed){c->nw ? stretch_key(&c->logs[q], k) : 0, q};
    qsort(tmp, (size_t)c->nslots, sizeof *tmp, cmp_keyed);
    c->nparts = 0;
    for (int i = 0; i < c->nslots; i++) {
        if (i == 0 || tmp[i].key != tmp[i - 1].key)
            c->nparts++;
        c->part[tmp[i].slot] = c->nparts - 1;
    }
    return c->nparts;
}

/* A slot's time from the accumulator's sums, leaving them. */
static double slot_peek(const acc *a, int x, int *level, double *bytes)
{
    double link = 0;
    *level = -1, *bytes = 0;
    for (int k = 0; k < a->L; k++) {
        double o = a->out[(size_t)x * a->L + k], in = a->in[(size_t)x * a->L + k], b = o > in ? o : in;
        if (b > 0) {
            const st_model_level *ml = model_level(a->m, k);
            double t = ml->alpha + b * ml->beta;
            if (t > link || *level < 0)
                link = t, *level = k, *bytes = b;
        }
    }
    return link + a->red[x] * a->m->gamma;
}

/* A slot's time in a step, from the accumulator's sums (and reset them). */
static double slot_time(acc *a, int x, int *level, double *bytes)
{
    double t = slot_peek(a, x, level, bytes);
    memset(&a->out[(size_t)x * a->L], 0, (size_t)a->L * sizeof *a->out);
    memset(&a->in[(size_t)x * a->L], 0, (size_t)a->L * sizeof *a->in);
    return t;
}

static int cost_logs(costing *c, acc *a, st_model_result *out, st_err *err)
{
    int64_t total = 0;
    for (int q = 0; q < c->nslots; q++)
        total += c->logs[q].nx;
    int64_t *first = calloc((size_t)c->nsteps + 2, sizeof(int64_t));
    int32_t (*by)[2] = malloc(sizeof *by * (size_t)(total ? total : 1));
    keyed *tmp = malloc(sizeof *tmp * (size_t)c->nslots);
    if (!c->part) /* kept across the sizes of one evaluation */
        c->part = malloc(sizeof(int32_t) * (size_t)c->nslots);
    if (!first || !by || !tmp || !c->part) {
        free(first), free(by), free(tmp);
        return oom(err);
    }
    /* every slot's sends by global step (inside split lanes a rank's sends are not in step order) */
    for (int q = 0; q < c->nslots; q++)
        for (int i = 0; i < c->logs[q].nx; i++)
            first[c->logs[q].x[i].step + 1]++;
    for (int s = 0; s < c->nsteps; s++)
        first[s + 1] += first[s];
    for (int q = 0; q < c->nslots; q++)
        for (int i = 0; i < c->logs[q].nx; i++) {
            int64_t k = first[c->logs[q].x[i].step]++;
            by[k][0] = q, by[k][1] = i;
        }
    for (int s = c->nsteps; s > 0; s--)
        first[s] = first[s - 1];
    first[0] = 0;
    int rc = 0, g0 = 0;
    for (int k = 0; k <= c->nw && rc == 0; g0 += c->seglen[k], k++) {
        int len = c->seglen[k], np = assign_parts(c, k, tmp);
        if (len == 0)
            continue;
        free(c->rec), free(c->sum);
        c->rec = calloc((size_t)np * (size_t)len, sizeof(st_model_step));
        c->sum = calloc((size_t)np, sizeof(double));
        if (!c->rec || !c->sum) {
            rc = oom(err);
            break;
        }
        for (int i = 0; i < np * len; i++)
            c->rec[i].rank = c->rec[i].level = -1;
        for (int j = 0; j < len; j++) {
            int s = g0 + j;
            for (int64_t e = first[s]; e < first[s + 1]; e++) {
                int q = by[e][0];
                const rx *x = &c->logs[q].x[by[e][1]];
                int dst = x->dst, local = dst == q; /* slot q is rank q, the representative of its class */
                acc_add(a, q, dst % c->P, local ? 0 : st_model_level_of(a->topo, q, dst), x->bytes, x->op, local);
            }
            for (int i = 0; i < a->ntouched; i++) {
                int x = a->touched[i], lv;
                double b, t = slot_time(a, x, &lv, &b);
                st_model_step *r = &c->rec[(size_t)c->part[x] * len + j];
                if (a->rank_time)
                    a->rank_time[(size_t)s * c->p + x] = t;
                if (r->rank < 0 || t > r->time)
                    *r = (st_model_step){t, x, lv, b, a->red[x], 0};
                a->red[x] = 0, a->seen[x] = 0;
            }
            a->ntouched = 0;
        }
        int crit = 0;
        for (int pt = 0; pt < np; pt++) {
            for (int j = 0; j < len; j++)
                c->sum[pt] += c->rec[(size_t)pt * len + j].time;
            if (c->sum[pt] > c->sum[crit])
                crit = pt;
        }
        for (int j = 0; j < len; j++) {
            out->steps[g0 + j] = c->rec[(size_t)crit * len + j];
            out->steps[g0 + j].nxfers = (first[g0 + j + 1] - first[g0 + j]) * (c->p / c->P);
        }
    }
    out->nxfers = total;
    free(first), free(by), free(tmp);
    return rc;
}

/* ---- costing with classes ----------------------------------------------------------------------------------------
 * What a send of representative q to dst does at copy k (rank q + kP's send and the receive of class dst mod P) uses
 * a level that changes with k only where an end crosses a bound: that does not depend on the size. So a plan is
 * built once per evaluation (cplan): per step, the accumulator cells each send adds to at copy 0 and, sorted by
 * copy, the moves of a send from one cell to another; steps with the same sends (the same pairs q -> dst in the
 * same order, as ring's 2(p-1) steps) share one shape. Each size then sums its bytes at copy 0 and sweeps the
 * moves, re-timing only the slots a move touched: O(sends + moves) per step and size, not O(intervals x sends). */

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* The level of the pair (a, b) on the classes' topology (st_model_level_of without the calls). */
static inline int cl_level(const classes *cl, int64_t a, int64_t b)
{
    if (a == b)
        return 0;
    for (int k = 0; k < cl->nlv - 1; k++)
        if (!cl->gof[k] || cl->gof[k][a] == cl->gof[k][b])
            return k;
    return cl->nlv - 1;
}

typedef struct cmove {   /* at copy k, send pos of the step moves its bytes from cell `from` to cell `to` */
    int64_t k;
    int32_t pos, from, to;
} cmove;

typedef struct cshape {  /* the size-independent part of a step */
    int32_t step;        /* the first step of this shape */
    int32_t nsend;
    int64_t cell0;       /* into cplan.cell: per send its out and in cells at copy 0 (-1: a local send) */
    int64_t mv, nmv;     /* into cplan.mv, sorted by copy */
    uint64_t hash;
} cshape;

typedef struct cplan {
    int64_t *first;      /* nsteps + 1: the sends of step s are by[first[s] .. first[s + 1]) */
    int32_t (*by)[2];    /* (slot, index in its log) */
    int32_t *shape;      /* per step */
    cshape *sh;
    int64_t nsh, capsh;
    int32_t (*cell)[2];
    int64_t ncell, capcell;
    cmove *mv;
    int64_t nmv, capmv;
    int32_t *htab;       /* open addressing: shape index + 1 */
    int64_t hcap;
    int64_t intervals;
    /* the sweep's scratch: per slot its place in the touched list, and the slots a copy's moves touched */
    int32_t *posof, *dirty;
    unsigned char *isdirty;
} cplan;

static void cplan_free(cplan *pl)
{
    if (!pl)
        return;
    free(pl->first), free(pl->by), free(pl->shape), free(pl->sh), free(pl->cell), free(pl->mv), free(pl->htab);
    free(pl->posof), free(pl->dirty), free(pl->isdirty);
    free(pl);
}

static int grow64(void **v, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    int64_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, size * (size_t)c);
    if (!n)
        return -1;
    *v = n, *cap = c;
    return 0;
}

static int cmp_i64v(const void *a, const void *b);

static int cmp_cmove(const void *a, const void *b)
{
    const cmove *x = a, *y = b;
    return x->k < y->k ? -1 : x->k > y->k ? 1 : (x->pos > y->pos) - (x->pos < y->pos);
}

static uint64_t step_hash(const costing *c, const cplan *pl, int s)
{
    uint64_t h = 1469598103934665603ull;
    for (int64_t e = pl->first[s]; e < pl->first[s + 1]; e++) {
        int q = pl->by[e][0];
        h = (h ^ (uint64_t)(uint32_t)q) * 1099511628211ull;
        h = (h ^ (uint64_t)(uint32_t)c->logs[q].x[pl->by[e][1]].dst) * 1099511628211ull;
    }
    return h;
}

static int same_sends(const costing *c, const cplan *pl, int s, int t)
{
    if (pl->first[s + 1] - pl->first[s] != pl->first[t + 1] - pl->first[t])
        return 0;
    for (int64_t i = 0; i < pl->first[s + 1] - pl->first[s]; i++) {
        const int32_t *a = pl->by[pl->first[s] + i], *b = pl->by[pl->first[t] + i];
        if (a[0] != b[0] || c->logs[a[0]].x[a[1]].dst != c->logs[b[0]].x[b[1]].dst)
            return 0;
    }
    return 1;
}

/* The shape of step s: each send's cells at copy 0 and its moves where a level changes. */
static int build_shape(const costing *c, cplan *pl, const classes *cl, int s, int64_t *ks)
{
    int64_t P = cl->P, p = cl->p, PL = (int64_t)cl->P * cl->nlv;
    int L = cl->nlv;
    cshape *sh = &pl->sh[pl->nsh];
    int64_t n = pl->first[s + 1] - pl->first[s], mv0 = pl->nmv;
    *sh = (cshape){s, (int32_t)n, pl->ncell, pl->nmv, 0, 0};
    if (grow64((void **)&pl->cell, &pl->capcell, pl->ncell + n, sizeof *pl->cell))
        return -1;
    for (int64_t i = 0; i < n; i++) {
        int q = pl->by[pl->first[s] + i][0];
        int64_t dst = c->logs[q].x[pl->by[pl->first[s] + i][1]].dst, D = dst - q, cls = dst % P;
        int32_t *cell = pl->cell[pl->ncell + i];
        if (dst == q) {
            cell[0] = cell[1] = -1;
            continue;
        }
        /* the out level of (kP + q, (dst + kP) mod p), the in level of (S, R), R = kP + cls, S = R - D mod p */
#define OUTLV(k) cl_level(cl, (k) * P + q, ((k) * P + dst) % p)
#define INLV(k) cl_level(cl, ((((k) * P + cls - D) % p) + p) % p, (k) * P + cls)
        int lo = OUTLV(0), li = INLV(0), nk = 0;
        cell[0] = (int32_t)(q * L + lo), cell[1] = (int32_t)(PL + cls * L + li);
        for (int b = 0; b < cl->nbound; b++) {
            int64_t v = cl->bound[b];
            int64_t cand[7] = {ceil_div(v - q, P), ceil_div(v - dst, P), ceil_div(v - dst + p, P),
                               ceil_div(v - cls, P), ceil_div(v + D - cls, P), ceil_div(v + D - cls - p, P),
                               ceil_div(v + D - cls + p, P)};
            for (int j = 0; j < 7; j++)
                if (cand[j] >= 1 && cand[j] < cl->K)
                    ks[nk++] = cand[j];
        }
        if (nk > 1)
            qsort(ks, (size_t)nk, sizeof *ks, cmp_i64v);
        for (int j = 0; j < nk; j++) {
            if (j > 0 && ks[j] == ks[j - 1])
                continue;
            int64_t k = ks[j];
            int a = OUTLV(k), r = INLV(k);
            if (grow64((void **)&pl->mv, &pl->capmv, pl->nmv + 2, sizeof *pl->mv))
                return -1;
            if (a != lo)
                pl->mv[pl->nmv++] = (cmove){k, (int32_t)i, (int32_t)(q * L + lo), (int32_t)(q * L + a)};
            if (r != li)
                pl->mv[pl->nmv++] = (cmove){k, (int32_t)i, (int32_t)(PL + cls * L + li), (int32_t)(PL + cls * L + r)};
            lo = a, li = r;
        }
#undef OUTLV
#undef INLV
    }
    pl->ncell += n;
    sh->nmv = pl->nmv - mv0;
    qsort(pl->mv + mv0, (size_t)sh->nmv, sizeof *pl->mv, cmp_cmove);
    return 0;
}

/* The plan: sends by step, and each step's shape (shared by steps with the same sends). */
static int plan_classes(costing *c, const classes *cl, cplan **out, st_err *err)
{
    cplan *pl = calloc(1, sizeof *pl);
    int64_t total = 0;
    int64_t *ks = NULL;
    if (!pl)
        return oom(err);
    *out = pl;
    for (int q = 0; q < c->nslots; q++)
        total += c->logs[q].nx;
    pl->first = calloc((size_t)c->nsteps + 2, sizeof(int64_t));
    pl->by = malloc(sizeof *pl->by * (size_t)(total ? total : 1));
    pl->shape = malloc(sizeof(int32_t) * (size_t)(c->nsteps ? c->nsteps : 1));
    pl->hcap = 64;
    while (pl->hcap < 2 * (int64_t)c->nsteps)
        pl->hcap *= 2;
    pl->htab = calloc((size_t)pl->hcap, sizeof(int32_t));
    pl->posof = malloc(sizeof(int32_t) * (size_t)c->nslots);
    pl->dirty = malloc(sizeof(int32_t) * (size_t)c->nslots);
    pl->isdirty = calloc((size_t)c->nslots, 1);
    ks = malloc(sizeof(int64_t) * (size_t)(7 * cl->nbound + 1));
    if (!pl->first || !pl->by || !pl->shape || !pl->htab || !pl->posof || !pl->dirty || !pl->isdirty || !ks) {
        free(ks);
        return oom(err);
    }
    for (int q = 0; q < c->nslots; q++)
        for (int i = 0; i < c->logs[q].nx; i++)
            pl->first[c->logs[q].x[i].step + 1]++;
    for (int s = 0; s < c->nsteps; s++)
        pl->first[s + 1] += pl->first[s];
    for (int q = 0; q < c->nslots; q++)
        for (int i = 0; i < c->logs[q].nx; i++) {
            int64_t k = pl->first[c->logs[q].x[i].step]++;
            pl->by[k][0] = q, pl->by[k][1] = i;
        }
    for (int s = c->nsteps; s > 0; s--)
        pl->first[s] = pl->first[s - 1];
    pl->first[0] = 0;
    for (int s = 0; s < c->nsteps; s++) {
        uint64_t h = step_hash(c, pl, s);
        int64_t slot = (int64_t)(h & (uint64_t)(pl->hcap - 1)), found = -1;
        for (; pl->htab[slot]; slot = (slot + 1) & (pl->hcap - 1)) {
            int32_t j = pl->htab[slot] - 1;
            if (pl->sh[j].hash == h && same_sends(c, pl, s, pl->sh[j].step)) {
                found = j;
                break;
            }
        }
        if (found < 0) {
            if (grow64((void **)&pl->sh, &pl->capsh, pl->nsh + 1, sizeof *pl->sh) ||
                build_shape(c, pl, cl, s, ks)) {
                free(ks);
                return oom(err);
            }
            pl->sh[pl->nsh].hash = h;
            found = pl->nsh++;
            pl->htab[slot] = (int32_t)found + 1;
        }
        pl->shape[s] = (int32_t)found;
        const cshape *sh = &pl->sh[found];
        int64_t iv = 1;
        for (int64_t j = 0; j < sh->nmv; j++)
            iv += j == 0 || pl->mv[sh->mv + j].k != pl->mv[sh->mv + j - 1].k;
        pl->intervals += iv;
    }
    free(ks);
    return 0;
}

static double *cell_ref(acc *a, int64_t PL, int32_t cell)
{
    return cell < PL ? &a->out[cell] : &a->in[cell - PL];
}

static const int32_t *sort_posof;
static int cmp_by_pos(const void *a, const void *b)
{
    int32_t x = sort_posof[*(const int32_t *)a], y = sort_posof[*(const int32_t *)b];
    return (x > y) - (x < y);
}

/* Every step in lockstep (one part: no phase on a sub-communicator), each costed at every copy where a level
 * changes; the slowest (copy, slot) first in copy order, then in the order the step touches its slots, as costing
 * each interval in full would find it. */
static int cost_classes(costing *c, acc *a, classes *cl, st_model_result *out, st_err *err)
{
    if (!c->plan && plan_classes(c, cl, &c->plan, err))
        return -1;
    cplan *pl = c->plan;
    int64_t P = cl->P, PL = (int64_t)cl->P * a->L, total = 0;
    for (int q = 0; q < c->nslots; q++)
        total += c->logs[q].nx;
    for (int s = 0; s < c->nsteps; s++) {
        const cshape *sh = &pl->sh[pl->shape[s]];
        const int32_t (*cell)[2] = (const int32_t (*)[2])pl->cell + sh->cell0;
        st_model_step best = {.rank = -1, .level = -1};
        int64_t e0 = pl->first[s];
        for (int32_t i = 0; i < sh->nsend; i++) {
            int q = pl->by[e0 + i][0];
            const rx *x = &c->logs[q].x[pl->by[e0 + i][1]];
            if (x->bytes <= 0)
                continue;
            if (cell[i][0] < 0) {
                if (!a->seen[q])
                    pl->posof[q] = a->ntouched;
                touch(a, q);
                if (x->op == ST_X_REDUCE)
                    a->red[q] += x->bytes;
                continue;
            }
            int cls = (int)(x->dst % P);
            if (!a->seen[q])
                pl->posof[q] = a->ntouched;
            touch(a, q);
            if (!a->seen[cls])
                pl->posof[cls] = a->ntouched;
            touch(a, cls);
            a->out[cell[i][0]] += x->bytes;
            a->in[cell[i][1] - PL] += x->bytes;
            if (x->op == ST_X_REDUCE)
                a->red[cls] += x->bytes;
        }
        for (int j = 0; j < a->ntouched; j++) {
            int x = a->touched[j], lv;
            double b, t = slot_peek(a, x, &lv, &b);
            if (best.rank < 0 || t > best.time)
                best = (st_model_step){t, x, lv, b, a->red[x], 0};
        }
        for (int64_t j = 0; j < sh->nmv;) {
            int64_t k = pl->mv[sh->mv + j].k;
            int nd = 0;
            for (; j < sh->nmv && pl->mv[sh->mv + j].k == k; j++) {
                const cmove *m = &pl->mv[sh->mv + j];
                int q = pl->by[e0 + m->pos][0];
                double b = c->logs[q].x[pl->by[e0 + m->pos][1]].bytes;
                if (b <= 0)
                    continue;
                *cell_ref(a, PL, m->from) -= b;
                *cell_ref(a, PL, m->to) += b;
                int x = (int)((m->from < PL ? m->from : m->from - PL) / a->L);
                if (!pl->isdirty[x])
                    pl->isdirty[x] = 1, pl->dirty[nd++] = x;
            }
            if (nd > 1) {
                sort_posof = pl->posof;
                qsort(pl->dirty, (size_t)nd, sizeof *pl->dirty, cmp_by_pos);
            }
            for (int d = 0; d < nd; d++) {
                int x = pl->dirty[d], lv;
                double b, t = slot_peek(a, x, &lv, &b);
                pl->isdirty[x] = 0;
                if (best.rank < 0 || t > best.time)
                    best = (st_model_step){t, (int)(k * P + x), lv, b, a->red[x], 0};
            }
        }
        for (int j = 0; j < a->ntouched; j++) {
            int x = a->touched[j];
            for (int l = 0; l < a->L; l++)
                a->out[(size_t)x * a->L + l] = a->in[(size_t)x * a->L + l] = 0;
            a->red[x] = 0, a->seen[x] = 0;
        }
        a->ntouched = 0;
        out->steps[s] = best;
        out->steps[s].nxfers = (int64_t)sh->nsend * cl->K;
    }
    out->intervals = pl->intervals;
    out->nxfers = total;
    return 0;
}

/* The exact way's cost from rank 0's: memory (its transfers and runs times p) and time (its VM instructions times
 * p), each against the model's bound; -1 with the estimate in err beyond either. */
static int exact_too_big(const st_algo *algo, const st_inst *in, const rank_log *g0, int64_t insns, st_err *err)
{
    static const char why[] = "the layout gives no classes of alike ranks (uniform inner levels, in rank order) or "
                              "the algorithm is not shift-symmetric on it";
    double per = (double)g0->nx * (sizeof(rx) + sizeof(int32_t) + 2 * sizeof(int32_t)) +
                 (double)g0->nruns * sizeof(prog) + 256, need = per * in->p, work = (double)insns * in->p;
    err->line = 0;
    if (need > ST_MODEL_MAX_BYTES) {
        snprintf(err->msg, sizeof err->msg, "simulating %s on every one of the %d ranks would take about %.1f GB "
                 "(rank 0 alone sends %d transfers), over the model's %.1f GB: %s", algo->name, in->p, need / 1e9,
                 g0->nx, ST_MODEL_MAX_BYTES / 1e9, why);
        return -1;
    }
    if (work > ST_MODEL_MAX_INSNS) {
        snprintf(err->msg, sizeof err->msg, "simulating %s on every one of the %d ranks would run about %.1f billion "
                 "instructions (rank 0 alone %lld), over the model's %.1f billion: %s", algo->name, in->p, work / 1e9,
                 (long long)insns, ST_MODEL_MAX_INSNS / 1e9, why);
        return -1;
    }
    return 0;
}

/* Evaluate slots 0 .. P-1 (P = p: every rank, exact; else the representatives of a shift symmetry): the programs
 * run once, then each size is costed. */
static int evaluate(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m,
                    const double *bytes, int nsizes, const st_model_opts *opts, int P, classes *cl,
                    st_model_result *outs, st_err *err)
{
    int p = in->p, rc = -1, nsteps = 0, nw, done_sizes = 0;
    rank_log *logs = calloc((size_t)P, sizeof *logs);
    st_vm_cache cache = ST_VM_CACHE_INIT; /* rank-free layout tables (NHR's tree map), computed once for all ranks */
    costing c = {.m = m, .nslots = P, .P = P, .p = p, .logs = logs};
    acc a = {0};
    if (!logs)
        return oom(err);
    int64_t budget = opts && opts->max_xfers > 0 ? opts->max_xfers : ST_MODEL_MAX_XFERS, held = 0;
    for (int q = 0; q < P; q++) {
        /* the budget binds the representatives, and every rank too where the caller set it (the selection) */
        int64_t cap = P < p || (opts && opts->max_xfers > 0) ? (budget - held > 1 ? budget - held : 1) : 0;
        if (model_rank_xfers(cat, algo, in, q, &logs[q], &cache, cap, cl != NULL, err)) {
            if (logs[q].capped) {
                err->line = 0;
                snprintf(err->msg, sizeof err->msg, "not priced at this scale: the %d %s of %s on p = %d send more "
                         "than %lld transfers, the model's budget here (%lld held when rank %d stopped)", P,
                         P < p ? "representatives" : "ranks", algo->name, p, (long long)budget,
                         (long long)(held + logs[q].nx), q);
                err->refused = 3;
            }
            goto done;
        }
        held += logs[q].nx;
        if (logs[q].nw != logs[0].nw || logs[q].U != logs[0].U) {
            err->line = algo->line;
            snprintf(err->msg, sizeof err->msg, "rank %d and rank 0 differ in units or in phases on "
                     "sub-communicators (p = %d)", q, p);
            goto done;
        }
        if (q == 0 && P == p && exact_too_big(algo, in, &logs[0], cache.insns, err))
            goto done;
    }
    if (P < p && (cl ? check_classes(cat, algo, in, logs, cl, &cache, err)
                     : check_samples(cat, algo, in, logs, P, &cache, err)))
        goto done;
    /* stretches between marks last as long as their longest rank; local steps become global ones */
    nw = c.nw = logs[0].nw;
    c.seglen = calloc((size_t)nw + 1, sizeof(int32_t));
    if (!c.seglen) {
        oom(err);
        goto done;
    }
    for (int q = 0; q < P; q++)
        for (int k = 0; k <= nw; k++) {
            const rank_log *g = &logs[q];
            int32_t len = (k < nw ? g->w[k].step : g->nsteps) - (k > 0 ? g->w[k - 1].step : 0);
            if (len > c.seglen[k])
                c.seglen[k] = len;
        }
    for (int k = 0; k <= nw; k++)
        nsteps += c.seglen[k];
    for (int q = 0; q < P; q++) {
        rank_log *g = &logs[q];
        int k = 0, local = 0, global = 0;
        for (int i = 0; i < g->nx; i++) {
            for (; k < nw && g->x[i].step >= g->w[k].step; k++)
                global += c.seglen[k], local = g->w[k].step;
            g->x[i].step = global + (g->x[i].step - local);
        }
    }
    c.nsteps = nsteps;
    int per_rank = opts && opts->per_rank && P == p;
    if (acc_init(&a, m, P, st_topo_nlevels(in->topo))) {
        oom(err);
        goto done;
    }
    a.topo = in->topo;
    for (; done_sizes < nsizes; done_sizes++) {
        st_model_result *out = &outs[done_sizes];
        sizing z = make_sizing(algo->coll, p, logs[0].U, bytes[done_sizes], opts);
        for (int q = 0; q < P; q++)
            log_bytes(&logs[q], &z);
        if (result_init(out, p, nsteps, per_rank, P == p ? ST_MODEL_EXACT : cl ? ST_MODEL_CLASSES
                                                                                 : ST_MODEL_SYMMETRIC)) {
            st_model_result_free(out);
            oom(err);
            goto done;
        }
        a.rank_time = out->rank_time;
        out->period = P;
        if (cl ? cost_classes(&c, &a, cl, out, err) : cost_logs(&c, &a, out, err)) {
            st_model_result_free(out);
            goto done;
        }
        result_sum(out);
    }
    rc = 0;
done:
    for (int i = 0; rc && i < done_sizes; i++)
        st_model_result_free(&outs[i]);
    for (int q = 0; q < P; q++)
        log_free(&logs[q]);
    free(logs);
    free(c.seglen), free(c.part), free(c.rec), free(c.sum);
    cplan_free(c.plan);
    st_vm_cache_free(&cache);
    acc_free(&a);
    return rc;
}

int st_model_predict_n(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m,
                       const double *bytes, int nsizes, const st_model_opts *opts, st_model_result *out, st_err *err)
{
    int method = opts ? opts->method : ST_MODEL_AUTO, p = in->p;
    int exact_max = opts && opts->exact_max > 0 ? opts->exact_max : ST_MODEL_EXACT_MAX;
    memset(out, 0, sizeof *out * (size_t)(nsizes > 0 ? nsizes : 0));
    err->refused = 0;
    if (m->nlevels < 1)
        return fail(err, 0, "the model has no levels");
    if (p < 1 || p > ST_MODEL_MAX_RANKS || in->root < 0 || in->root >= p) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "p = %d or root = %d is out of range (p in 1..%d, root in 0..p-1)", p,
                 in->root, ST_MODEL_MAX_RANKS);
        return -1;
    }
    if (nsizes < 1)
        return fail(err, 0, "no size to predict");
    if (method == ST_MODEL_EXACT || (method == ST_MODEL_AUTO && p <= exact_max) ||
        (opts && opts->per_rank)) {
        if (p > ST_MODEL_EXACT_RANKS) {
            err->line = 0;
            snprintf(err->msg, sizeof err->msg, "the exact model holds up to p = %d, not %d", ST_MODEL_EXACT_RANKS, p);
            return -1;
        }
        return evaluate(cat, algo, in, m, bytes, nsizes, opts, p, NULL, out, err);
    }
    int P = topo_period(in->topo, p), rc = -1;
    classes cl;
    /* A rooted collective's ranks never do what another does shifted (the root differs), nor alike in classes:
     * running the representatives only to find that out cost up to 0.75 s a candidate at 100,000 ranks. */
    int rooted = st_coll_rooted(algo->coll) && p > 1;
    int has = P == p && p > 1 && !rooted ? topo_classes(in->topo, p, &cl) : 1;
    if (has < 0)
        return oom(err);
    if (rooted) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "%s has a root, so its ranks are not alike: p = %d needs the exact "
                 "model, which holds up to p = %d", st_coll_name(algo->coll), p, ST_MODEL_EXACT_RANKS);
        err->refused = 2;
    } else if (method == ST_MODEL_CLASSES && has) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "the layout has no classes of ranks (every level uniform, or a level "
                 "out of rank order), p = %d", p);
    } else if (has == 0 && cl.P <= ST_MODEL_EXACT_MAX) {
        rc = evaluate(cat, algo, in, m, bytes, nsizes, opts, cl.P, &cl, out, err);
    } else if (P > ST_MODEL_EXACT_MAX || has == 0) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "the layout has no symmetry the model can use (levels not uniform, or "
                 "groups of %d ranks): p = %d needs the exact model, which holds up to p = %d", has ? P : cl.P, p,
                 ST_MODEL_EXACT_RANKS);
        err->refused = 2;
    } else {
        rc = evaluate(cat, algo, in, m, bytes, nsizes, opts, P, NULL, out, err);
    }
    if (has == 0)
        classes_free(&cl);
    int fb_max = opts && opts->fallback_max > 0 && opts->fallback_max < ST_MODEL_EXACT_RANKS ? opts->fallback_max
                                                                                          : ST_MODEL_EXACT_RANKS;
    /* a caller that bounds the every-rank fallback (the selection) hears "not priced" beyond it, whatever p */
    if (rc != 0 && method == ST_MODEL_AUTO && err->refused == 2 && p > fb_max &&
        (p <= ST_MODEL_EXACT_RANKS || (opts && opts->fallback_max > 0))) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "not priced at this scale: p = %d has no symmetry the model can use for "
                 "this algorithm, and costing every rank is allowed up to p = %d here", p, fb_max);
        err->refused = 3;
        return -1;
    }
    if (rc != 0 && method == ST_MODEL_AUTO && err->refused == 2 && p <= ST_MODEL_EXACT_RANKS) {
        err->refused = 0; /* no symmetry to use: every rank, as long as a schedule can hold them */
        rc = evaluate(cat, algo, in, m, bytes, nsizes, opts, p, NULL, out, err);
    }
    if (err->refused == 2)
        err->refused = 0;
    return rc;
}

int st_model_predict(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m,
                     double bytes, const st_model_opts *opts, st_model_result *out, st_err *err)
{
    return st_model_predict_n(cat, algo, in, m, &bytes, 1, opts, out, err);
}
