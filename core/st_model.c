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
} sizing;

/* Elements of units [a, b) of one block (a, b within the block's per units): floor splits, so a telescoping sum. */
static double block_elems(const sizing *z, int64_t per, int64_t a, int64_t b)
{
    return floor(z->n * (double)b / (double)per) - floor(z->n * (double)a / (double)per);
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
    while (start < end) {
        int64_t b = start / per, j = start % per, stop = (b + 1) * per < end ? (b + 1) * per : end;
        e += block_elems(z, per, j, j + (stop - start));
        start = stop;
    }
    return e * z->elem;
}

/* ---- the accumulator ------------------------------------------------------------------------------------------- */

typedef struct acc {
    const st_model *m;
    int n, L;                /* slots (ranks or classes), levels */
    double *out, *in, *red;  /* n * L, n * L, n */
    unsigned char *seen;     /* n */
    int32_t *touched;
    int ntouched;
    double *rank_time;       /* NULL, or this step's row of n */
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
    sizing z = {U, st_coll_nblocks(coll, p), floor(st_model_block_bytes(coll, p, bytes) / elem), elem};
    return z;
}

int st_model_sched(const st_sched *s, const st_topo *t, const st_model *m, double bytes, const st_model_opts *opts,
                   st_model_result *out, st_err *err)
{
    int per_rank = opts && opts->per_rank;
    acc a;
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

/* ---- symmetric: representatives -------------------------------------------------------------------------------- */

typedef struct rx {         /* one send of a representative, before its steps are placed */
    int32_t step, dst, op, run0, nruns;
} rx;

typedef struct mark {
    int32_t step, begin;
} mark;

typedef struct rank_log {   /* what model_rank_xfers saw of one rank */
    int p, rank, nsteps, lane_base, lane_max, in_lane;
    rx *x;
    int nx, capx;
    st_run *runs;
    int nruns, capruns;
    mark *w;
    int nw, capw;
    int64_t U;
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

static int log_within(void *ctx, int begin, const int32_t *members, int n, int line, st_err *err)
{
    rank_log *g = ctx;
    (void)members, (void)n, (void)line;
    if (g->in_lane)
        return 0;
    if (grow((void **)&g->w, &g->capw, g->nw + 1, sizeof(mark)))
        return oom(err);
    g->w[g->nw++] = (mark){g->nsteps, begin};
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
    if (g->nsteps == 0 || dst < 0 || dst >= g->p) {
        err->line = line;
        snprintf(err->msg, sizeof err->msg, "send outside any step or to rank %lld, outside 0..%d (p = %d, rank %d)",
                 (long long)dst, g->p - 1, g->p, g->rank);
        return -1;
    }
    int64_t (*r)[2] = malloc(sizeof *r * (size_t)(nsrc ? nsrc : 1));
    if (!r || grow((void **)&g->x, &g->capx, g->nx + 1, sizeof(rx))) {
        free(r);
        return oom(err);
    }
    for (int i = 0; i < nsrc; i++)
        r[i][0] = lo[i], r[i][1] = hi[i];
    qsort(r, (size_t)nsrc, sizeof *r, cmp_i64);
    rx *x = &g->x[g->nx++];
    *x = (rx){g->nsteps - 1, (int32_t)dst, op, g->nruns, 0};
    for (int i = 0; i < nsrc;) {
        int64_t a = r[i][0], b = r[i][1];
        for (i++; i < nsrc && r[i][0] <= b + 1; i++)
            if (r[i][1] > b)
                b = r[i][1];
        if (grow((void **)&g->runs, &g->capruns, g->nruns + 1, sizeof(st_run))) {
            free(r);
            return oom(err);
        }
        g->runs[g->nruns++] = (st_run){(int32_t)a, (int32_t)(b - a + 1)};
        x->nruns++;
    }
    free(r);
    return 0;
}

static void log_free(rank_log *g)
{
    free(g->x), free(g->runs), free(g->w);
}

/* The seam: rank r's transfers, step by step, into g. Today the VM runs r's program (its sends; receives come from
 * the symmetry); a per-rank plan that also yields receives can take its place. */
static int model_rank_xfers(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int r, rank_log *g,
                            st_err *err)
{
    st_vm_cache cache = {NULL, -1, 0};
    st_vm_sink sink = {g, &cache, log_step, log_send, log_within, log_lane};
    int64_t nunits, nscratch;
    memset(g, 0, sizeof *g);
    g->p = in->p, g->rank = r;
    int rc = st_vm_run(cat, algo, in, r, &sink, &nunits, &nscratch, err);
    free(cache.tab);
    g->U = nunits;
    return rc;
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
        int64_t ua = 0, ub = 0;
        for (int k = 0; k < a->nruns; k++)
            ua += q->runs[a->run0 + k].len;
        for (int k = 0; k < b->nruns; k++)
            ub += s->runs[b->run0 + k].len;
        if (a->step != b->step || a->op != b->op || ua != ub || ((int64_t)a->dst + shift) % p != b->dst)
            return 0;
    }
    return 1;
}

/* Run the sampled ranks beyond the representatives and compare. */
static int check_samples(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const rank_log *reps, int P,
                         st_err *err)
{
    int p = in->p, copies = p / P;
    int js[3] = {1, copies / 2, copies - 1}, qs[3] = {0, P / 2, P - 1};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int j = js[a], q = qs[b];
            if (j < 1 || j >= copies || (a > 0 && js[a] == js[a - 1]) || (b > 0 && qs[b] == qs[b - 1]))
                continue;
            rank_log s;
            int r = q + j * P;
            if (model_rank_xfers(cat, algo, in, r, &s, err)) {
                log_free(&s);
                return -1;
            }
            int ok = same_shifted(&reps[q], &s, j * P, p);
            log_free(&s);
            if (!ok) {
                err->line = algo->line;
                snprintf(err->msg, sizeof err->msg, "%s is not shift-symmetric for p = %d: rank %d does not do what "
                         "rank %d does with every peer shifted by %d, so the symmetric model does not apply (the "
                         "exact one does up to p = %d)", algo->name, p, r, q, j * P, ST_MAX_RANKS);
                return -1;
            }
        }
    return 0;
}

static int symmetric(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m, double bytes,
                     const st_model_opts *opts, st_model_result *out, st_err *err)
{
    int p = in->p, P = topo_period(in->topo, p), nw = 0, rc = -1, nsteps = 0;
    if (P > ST_MODEL_EXACT_MAX) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "the layout has no symmetry the model can use (levels not uniform, or "
                 "groups of %d ranks): p = %d needs the exact model, which holds up to p = %d", P, p, ST_MAX_RANKS);
        return -1;
    }
    rank_log *reps = calloc((size_t)P, sizeof *reps);
    int32_t *seglen = NULL;
    acc a = {0};
    if (!reps)
        return oom(err);
    for (int q = 0; q < P; q++) {
        if (model_rank_xfers(cat, algo, in, q, &reps[q], err))
            goto done;
        if (reps[q].nw != reps[0].nw || reps[q].U != reps[0].U) {
            err->line = algo->line;
            snprintf(err->msg, sizeof err->msg, "rank %d and rank 0 differ in units or phases (p = %d)", q, p);
            goto done;
        }
    }
    if (reps[0].U < 1) {
        err->line = algo->line;
        snprintf(err->msg, sizeof err->msg, "%s declares no units (p = %d)", algo->name, p);
        goto done;
    }
    if (check_samples(cat, algo, in, reps, P, err))
        goto done;
    /* stretches between marks last as long as their longest representative */
    nw = reps[0].nw;
    seglen = calloc((size_t)nw + 1, sizeof(int32_t));
    if (!seglen) {
        oom(err);
        goto done;
    }
    for (int q = 0; q < P; q++)
        for (int k = 0; k <= nw; k++) {
            const rank_log *g = &reps[q];
            int32_t len = (k < nw ? g->w[k].step : g->nsteps) - (k > 0 ? g->w[k - 1].step : 0);
            if (len > seglen[k])
                seglen[k] = len;
        }
    for (int k = 0; k <= nw; k++)
        nsteps += seglen[k];
    for (int q = 0; q < P; q++) { /* local steps to global ones */
        rank_log *g = &reps[q];
        int k = 0, local = 0, global = 0;
        for (int i = 0; i < g->nx; i++) {
            for (; k < nw && g->x[i].step >= g->w[k].step; k++)
                global += seglen[k], local = g->w[k].step;
            g->x[i].step = global + (g->x[i].step - local);
        }
    }
    if (result_init(out, p, nsteps, 0, ST_MODEL_SYMMETRIC) || acc_init(&a, m, P, st_topo_nlevels(in->topo))) {
        oom(err);
        goto done;
    }
    out->period = P;
    sizing z = make_sizing(algo->coll, p, reps[0].U, bytes, opts);
    /* the representatives' sends by global step (inside split lanes a rank's sends are not in step order) */
    int64_t total = 0;
    for (int q = 0; q < P; q++)
        total += reps[q].nx;
    int64_t *first = calloc((size_t)nsteps + 2, sizeof(int64_t));
    int32_t (*by)[2] = malloc(sizeof *by * (size_t)(total ? total : 1));
    if (!first || !by) {
        free(first), free(by);
        oom(err);
        goto done;
    }
    for (int q = 0; q < P; q++)
        for (int i = 0; i < reps[q].nx; i++)
            first[reps[q].x[i].step + 1]++;
    for (int st = 0; st < nsteps; st++)
        first[st + 1] += first[st];
    for (int q = 0; q < P; q++)
        for (int i = 0; i < reps[q].nx; i++) {
            int64_t k = first[reps[q].x[i].step]++;
            by[k][0] = q, by[k][1] = i;
        }
    for (int st = nsteps; st > 0; st--) /* back to the starts */
        first[st] = first[st - 1];
    first[0] = 0;
    for (int st = 0; st < nsteps; st++) {
        for (int64_t k = first[st]; k < first[st + 1]; k++) {
            int q = by[k][0];
            const rank_log *g = &reps[q];
            const rx *x = &g->x[by[k][1]];
            double b = 0;
            for (int j = 0; j < x->nruns; j++)
                b += run_bytes(&z, g->runs[x->run0 + j].start, g->runs[x->run0 + j].len);
            int local = x->dst == q;
            acc_add(&a, q, x->dst % P, local ? 0 : st_model_level_of(in->topo, q, x->dst), b, x->op, local);
        }
        acc_step(&a, &out->steps[st]);
        out->steps[st].nxfers = (first[st + 1] - first[st]) * (p / P);
    }
    out->nxfers = total;
    free(first), free(by);
    result_sum(out);
    rc = 0;
done:
    if (rc)
        st_model_result_free(out);
    for (int q = 0; q < P; q++)
        log_free(&reps[q]);
    free(reps);
    free(seglen);
    acc_free(&a);
    return rc;
}

int st_model_predict(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m,
                     double bytes, const st_model_opts *opts, st_model_result *out, st_err *err)
{
    int method = opts ? opts->method : ST_MODEL_AUTO;
    memset(out, 0, sizeof *out);
    err->refused = 0;
    if (m->nlevels < 1)
        return fail(err, 0, "the model has no levels");
    if (in->p < 1 || in->p > ST_MODEL_MAX_RANKS) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "p = %d is out of range 1..%d", in->p, ST_MODEL_MAX_RANKS);
        return -1;
    }
    if (method == ST_MODEL_AUTO)
        method = in->p <= ST_MODEL_EXACT_MAX ? ST_MODEL_EXACT : ST_MODEL_SYMMETRIC;
    if (method == ST_MODEL_SYMMETRIC && !(opts && opts->per_rank))
        return symmetric(cat, algo, in, m, bytes, opts, out, err);
    st_sched s;
    if (st_sched_build_ex(cat, algo, in, &s, err) != 0)
        return -1;
    int rc = st_model_sched(&s, in->topo, m, bytes, opts, out, err);
    st_sched_free(&s);
    return rc;
}
