/* select.c - auto's size table (select.h): building it under a policy, checking it, looking a call up in it.
 *
 * Policy model asks the predictor (select.h's seam) for every candidate at the top of every size class and keeps,
 * per class, the least predicted time; equal times (within ST_SEL_TIE) go to the candidate that comes first in the
 * catalogue, so a role (level1, ahc_intra...) never displaces the algorithm it names. Adjacent classes with the
 * same winner merge
 * into one range. A size class costs one prediction per candidate, and a candidate's schedule is built once for all
 * classes, so a table costs what instantiating each candidate once costs; the communicator builds a collective's
 * table on the first auto call of that collective (comm.c), never for collectives it does not call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "select.h"
#include "st_topofile.h"
#include "topology.h"

int st_sel_check(const st_sel_table *t, char *err, size_t errlen)
{
    if (t->n < 1) {
        snprintf(err, errlen, "the table has no range");
        return -1;
    }
    for (int i = 0; i < t->n; i++) {
        const st_sel_range *r = &t->r[i];
        if (!r->algo) {
            snprintf(err, errlen, "range %d [%zu, %zu] names no algorithm", i, r->lo, r->hi);
            return -1;
        }
        if (r->hi < r->lo) {
            snprintf(err, errlen, "range %d [%zu, %zu] ends before it starts", i, r->lo, r->hi);
            return -1;
        }
        size_t want = i == 0 ? 0 : t->r[i - 1].hi + 1;
        if (i > 0 && t->r[i - 1].hi == SIZE_MAX) {
            snprintf(err, errlen, "range %d [%zu, %zu] comes after a range ending at the largest size: an overlap", i,
                     r->lo, r->hi);
            return -1;
        }
        if (r->lo != want) {
            snprintf(err, errlen, "range %d [%zu, %zu] starts at %zu, where %zu was due: %s", i, r->lo, r->hi, r->lo,
                     want, r->lo > want ? "a gap" : "an overlap");
            return -1;
        }
    }
    if (t->r[t->n - 1].hi != SIZE_MAX) {
        snprintf(err, errlen, "the last range ends at %zu, not at the largest size: a gap", t->r[t->n - 1].hi);
        return -1;
    }
    return 0;
}

const st_algo *st_sel_lookup(const st_sel_table *t, size_t bytes, int *range)
{
    int lo = 0, hi = t->n - 1;
    while (lo < hi) { /* the first range whose top is at least bytes */
        int mid = (lo + hi) / 2;
        if (t->r[mid].hi < bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (range)
        *range = t->n ? lo : -1;
    return t->n ? t->r[lo].algo : NULL;
}

/* ---- link figures ------------------------------------------------------------------------------------------ */

/* The development VM's shared-memory transport, `stitch-perf --calibrate` (docs/performance.md, "Calibration"):
 * a message's fixed cost, a byte's copy and a byte's fp32 sum. Threads are faster and tcp slower; a topology file
 * (STITCH_TOPO) with the machine's own figures replaces these. */
#define ST_SEL_ALPHA 5e-6
#define ST_SEL_BETA (1 / 6e9)
#define ST_SEL_GAMMA (1 / 3e9)

void st_sel_links_default(st_sel_links *out)
{
    memset(out, 0, sizeof *out);
    out->nlevels = ST_TOPO_MAX_LEVELS;
    for (int k = 0; k < ST_TOPO_MAX_LEVELS; k++)
        out->alpha[k] = ST_SEL_ALPHA, out->beta[k] = ST_SEL_BETA;
    out->gamma = ST_SEL_GAMMA;
}

void st_sel_links_from(const st_topology *t, st_sel_links *out)
{
    st_sel_links_default(out);
    int n = st_topology_nlevels(t);
    for (int k = 0; k < n && k < ST_TOPO_MAX_LEVELS; k++) {
        const st_level_info *lv = st_topology_level(t, k);
        if (lv->bandwidth > 0)
            out->alpha[k] = lv->latency, out->beta[k] = 1 / lv->bandwidth;
    }
    for (int k = n; k > 0 && k < ST_TOPO_MAX_LEVELS; k++) /* levels above the file's: its outermost */
        out->alpha[k] = out->alpha[k - 1], out->beta[k] = out->beta[k - 1];
    if (st_topology_reduce_bandwidth(t) > 0)
        out->gamma = 1 / st_topology_reduce_bandwidth(t);
}

/* ---- policies ---------------------------------------------------------------------------------------------- */

/* The built-in catalogue's roles (algos.dsl, "Composition on sub-communicators"): algorithms that only choose
 * another of the catalogue's, which auto prices under its own name. Pricing them again cost as much as the rest
 * of the selection together at 100,000 ranks, and a table naming `level0` where it runs mesh says less. */
static int st_builtin_role(const st_reg *reg, const st_algo *a)
{
    static const char *const role[] = {"level0", "level1", "ahc_intra", "ahc_inter"};
    if (st_reg_cat(reg, a) != &st_builtin_catalogue)
        return 0;
    for (size_t k = 0; k < sizeof role / sizeof *role; k++)
        if (strcmp(a->name, role[k]) == 0)
            return 1;
    return 0;
}

/* The algorithms auto may choose for coll: the built-in catalogue's but its roles, or every one where it has
 * none. */
static int st_candidates(const st_reg *reg, stitch_coll_t coll, const st_algo **out, int max)
{
    int n = 0, total = st_reg_count(reg);
    for (int pass = 0; pass < 2 && n == 0; pass++)
        for (int i = 0; i < total && n < max; i++) {
            const st_algo *a = st_reg_algo(reg, i);
            if (a->coll == (int32_t)coll && (pass == 1 || st_reg_cat(reg, a) == &st_builtin_catalogue) &&
                !st_builtin_role(reg, a))
                out[n++] = a;
        }
    return n;
}

static st_inst st_sel_inst(const st_sel_env *env, const st_reg *reg, const st_algo *a)
{
    st_inst in = {.p = env->p, .root = 0, .topo = env->topo,
                  .use = st_reg_cat(reg, a) == &st_builtin_catalogue ? env->use[a->coll] : NULL};
    return in;
}

#define ST_SEL_MAX_CAND 64
/* Predictions closer than this (relative) are a tie, kept by the earlier candidate: mesh and mesh_det differ only
 * in rounding, and a table should not flip between them from one size class to the next. */
#define ST_SEL_TIE 1e-6

static stitch_status_t st_build_model(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err,
                                      size_t errlen)
{
    const st_algo *cand[ST_SEL_MAX_CAND];
    int n = st_candidates(env->reg, coll, cand, ST_SEL_MAX_CAND), usable = 0;
    const st_algo *unpriced = NULL;
    size_t bytes[ST_SEL_CLASSES];
    double best[ST_SEL_CLASSES], t[ST_SEL_CLASSES];
    const st_algo *who[ST_SEL_CLASSES] = {0};
    st_predict_fn predict = env->predict ? env->predict : st_sel_predict_model;
    for (int k = 0; k < ST_SEL_CLASSES; k++)
        bytes[k] = (size_t)1 << (k < ST_SEL_TOP_LOG2 ? k : ST_SEL_TOP_LOG2);
    for (int i = 0; i < n; i++) {
        st_inst in = st_sel_inst(env, env->reg, cand[i]);
        int rc = predict(env->ctx, st_reg_cat(env->reg, cand[i]), cand[i], &in, &env->links, bytes, ST_SEL_CLASSES, t);
        if (rc < 0) {
            snprintf(err, errlen, "selection: out of memory predicting '%s' for %s", cand[i]->name,
                     stitch_coll_name(coll));
            return STITCH_ERR_NO_MEMORY;
        }
        if (rc == 2 && !unpriced)
            unpriced = cand[i]; /* not priced at this scale: the choice when no candidate is */
        if (rc > 0)
            continue;
        usable++;
        for (int k = 0; k < ST_SEL_CLASSES; k++)
            if (!who[k] || t[k] < best[k] * (1 - ST_SEL_TIE))
                who[k] = cand[i], best[k] = t[k];
    }
    if (n > 0 && usable == 0 && unpriced) { /* every runnable candidate is beyond the model's budget here */
        for (int k = 0; k < ST_SEL_CLASSES; k++)
            who[k] = unpriced;
        usable = 1;
    }
    if (n > 0 && usable == 0) {
        snprintf(err, errlen, "selection: no algorithm of %s can run on %d ranks in %d groups", stitch_coll_name(coll),
                 env->p, env->topo ? env->topo->ngroups : 1);
        return STITCH_ERR_UNSUPPORTED;
    }
    for (int k = 0; usable && k < ST_SEL_CLASSES; k++) {
        size_t lo, hi;
        st_sel_class_range(k, &lo, &hi);
        st_sel_add(out, lo, hi, who[k]); /* at most ST_SEL_CLASSES <= ST_SEL_MAX_RANGES ranges */
    }
    return STITCH_OK;
}

/* The rule stitch had before the model (STITCH_ONESHOT_BYTES counts what a rank sends: vector bytes * (p - 1)). */
static stitch_status_t st_build_size(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out)
{
    const st_algo *big = st_reg_find(env->reg, ST_DEFAULT_ALGO, coll);
    big = big ? big : st_reg_first(env->reg, coll);
    const st_algo *small = coll == STITCH_ALL_REDUCE ? st_reg_find(env->reg, "mesh_oneshot", coll) : NULL;
    size_t vec = env->p > 1 ? env->oneshot_max / (size_t)(env->p - 1) : 0;
    if (!big)
        return STITCH_OK;
    if (small && vec > 0)
        st_sel_add(out, 0, vec, small);
    st_sel_add(out, small && vec > 0 ? vec + 1 : 0, SIZE_MAX, big);
    return STITCH_OK;
}

stitch_status_t st_sel_build(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err, size_t errlen)
{
    out->n = 0, out->configured = 0, out->note[0] = '\0';
    if (!st_reg_first(env->reg, coll))
        return STITCH_OK;
    stitch_status_t st;
    int policy = env->policy;
    if (env->level1[coll]) {
        if (st_sel_build_configured(env, coll, out))
            return STITCH_OK;
        policy = ST_SEL_HCCL; /* HCCL's default for the operator, out->note says why */
    }
    switch (policy) {
    case ST_SEL_HCCL: st = st_sel_build_hccl(env, coll, out, err, errlen); break;
    case ST_SEL_SIZE: st = st_build_size(env, coll, out); break;
    case ST_SEL_HCCL_GUIDE: st = st_sel_build_guide(env, coll, out, err, errlen); break;
    default: st = st_build_model(env, coll, out, err, errlen); break;
    }
    if (st != STITCH_OK)
        return st;
    char why[256];
    if (st_sel_check(out, why, sizeof why) != 0) {
        snprintf(err, errlen, "selection (%s) of %s: %s", st_sel_policy_name(policy), stitch_coll_name(coll),
                 why);
        return STITCH_ERR_INTERNAL;
    }
    return STITCH_OK;
}

/* ---- printing ---------------------------------------------------------------------------------------------- */

void st_sel_fmt_bytes(size_t b, char *out, size_t len)
{
    static const char *const unit[] = {"", " KiB", " MiB", " GiB", " TiB"};
    int u = 0;
    size_t v = b;
    if (b == SIZE_MAX) {
        snprintf(out, len, "max");
        return;
    }
    while (u < 4 && v >= 1024 && v % 1024 == 0)
        v /= 1024, u++;
    snprintf(out, len, "%zu%s", v, unit[u]);
}

void st_sel_print(FILE *f, const char *prefix, stitch_coll_t coll, const st_sel_table *t)
{
    if (t->n == 0) {
        fprintf(f, "%s%-16s (no algorithm)\n", prefix, stitch_coll_name(coll));
        return;
    }
    for (int i = 0; i < t->n; i++) {
        char lo[32], hi[32], range[80], name[96], conf[300] = "";
        st_sel_fmt_bytes(t->r[i].lo, lo, sizeof lo);
        st_sel_fmt_bytes(t->r[i].hi, hi, sizeof hi);
        snprintf(range, sizeof range, "[%s, %s]", lo, hi);
        snprintf(name, sizeof name, "%s%s%s%s", t->r[i].algo->name, t->r[i].between ? " (level1 " : "",
                 t->r[i].between ? t->r[i].between : "", t->r[i].between ? ")" : "");
        if (t->configured)
            snprintf(conf, sizeof conf, "  configured: level1 %s%s%s", st_hccl_alg_name(t->configured),
                     t->note[0] ? ", not run: " : "", t->note[0] ? (i ? "HCCL's default" : t->note) : "");
        fprintf(f, "%s%-16s %-26s %s%s\n", prefix, i ? "" : stitch_coll_name(coll), range, name, conf);
    }
}
