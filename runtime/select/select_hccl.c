/* select_hccl.c - policy hccl: HCCL's own selection rules (spec 13, with 7, 5.5 and 9.6), as a size table.
 *
 * HCCL decides per level: level0 inside a server is fixed by the hardware (a mesh), level1 between servers is
 * chosen by rules. stitch's whole-communicator algorithms stand for those decisions as follows (S servers = the
 * communicator's level-0 groups, L ranks in each, p = S L; bytes = the call's count times its dtype's size):
 *   one server (no groups, or one)   level0 alone: mesh; all_reduce up to 256 KiB mesh_oneshot (the mesh
 *                                    executor's one-shot path, NHR_ALLREDUCE_SMALL_SIZE, spec 5.5); ring where
 *                                    the topology says the server is no full mesh (`full_mesh: false`);
 *   one rank per server (L = 1)      level1 alone, over all p ranks:
 *       reduce_scatter, all_gather,  A2's alpha-beta comparison (GetDefaultAlgoLevel1V2, spec 13.2) with alpha =
 *       all_reduce                   60 us and the level-1 bandwidth: nhr when strictly cheaper than ring, rhd
 *                                    when strictly cheaper than both; all_reduce by nhr up to 256 KiB runs
 *                                    nhr_oneshot (spec 5.5);
 *       broadcast, reduce            GetDefaultAlgoLevel1V1: rhd for 8 or more servers or a power of two, else
 *                                    ring (13.2's comparison for them has no ring formula in the spec);
 *       scatter, gather              ring (HCCL has no RHD scatter or gather); all_to_all pairwise (spec 8);
 *   equal servers, L > 1             pipeline where section 7's rules take it (all_reduce: bytes / p >= 1 MiB;
 *                                    reduce_scatter and all_gather: bytes >= 32 KiB; never reduce_scatter or
 *                                    all_reduce under HCCL_DETERMINISTIC=true), else hier (level0 mesh, level1 by
 *                                    its role, which is V1's rule or HCCL_ALGO's level entry);
 *   unequal servers                  ahc for all_reduce, reduce_scatter, all_gather (spec 9.6, the default where
 *                                    servers differ); hier for the others (its own fallback on unequal groups).
 * RDMA-lite is taken as supported (the 1 MiB and 32 KiB thresholds, not 2 MiB); A3's rules (HD becomes NHR,
 * super-pods) and the 2-D Mesh+NHR rules of 950 (spec 10) are not modelled. An algorithm the registry lacks for
 * the collective falls back to ring, or the first one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "select.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define ST_HCCL_ALPHA 60e-6                 /* GetDefaultAlgoLevel1V2's alpha */
#define ST_HCCL_ONESHOT_MAX (256 * KiB)     /* NHR_ALLREDUCE_SMALL_SIZE */
#define ST_HCCL_PIPE_AR (1 * MiB)           /* all_reduce: per-rank slice bytes / (S L) */
#define ST_HCCL_PIPE_RSAG (32 * KiB)

static int st_ceil_log2(int n)
{
    int k = 0;
    for (unsigned v = n > 0 ? (unsigned)n - 1 : 0; v; v >>= 1)
        k++;
    return k;
}

/* 13.2's level-1 comparison on S servers for x bytes (all_reduce: doubled, x / L). */
static const char *st_hccl_v2(stitch_coll_t coll, int S, int L, double x, double bw)
{
    int pow2 = (S & (S - 1)) == 0, K = st_ceil_log2(S);
    double vol = coll == STITCH_ALL_REDUCE ? x / L : x * S * L, k = coll == STITCH_ALL_REDUCE ? 2 : 1;
    double share = (double)(S - 1) / S * vol / bw;
    double ring = k * ((S - 1) * ST_HCCL_ALPHA + share), nhr = k * (K * ST_HCCL_ALPHA + share);
    double hd = pow2 ? k * (K * ST_HCCL_ALPHA + share) : k * (K * ST_HCCL_ALPHA + (2.0 * S - 1) / S * vol / bw);
    const char *pick = nhr < ring ? "nhr" : "ring";
    double cost = nhr < ring ? nhr : ring;
    return hd < cost ? "rhd" : pick;
}

static const char *st_hccl_v1(int S)
{
    return S >= 8 || (S & (S - 1)) == 0 ? "rhd" : "ring";
}

/* HCCL's choice for one call of `bytes`. */
static const char *st_hccl_decide(const st_sel_env *env, const st_sel_shape *sh, stitch_coll_t coll, size_t bytes)
{
    int rsag = coll == STITCH_ALL_REDUCE || coll == STITCH_REDUCE_SCATTER || coll == STITCH_ALL_GATHER;
    if (sh->S == 1 && env->level0_ring) /* level0 on a server that is not a full mesh: Ring (spec 13.1) */
        return "ring";
    if (sh->S == 1)
        return coll == STITCH_ALL_REDUCE && bytes <= ST_HCCL_ONESHOT_MAX ? "mesh_oneshot" : "mesh";
    if (sh->L == 1 && sh->equal) {
        if (rsag) {
            int lv = env->links.nlevels > 1 ? 1 : 0;
            const char *a = st_hccl_v2(coll, sh->S, 1, (double)bytes, 1 / env->links.beta[lv]);
            if (coll == STITCH_ALL_REDUCE && a[0] == 'n' && bytes <= ST_HCCL_ONESHOT_MAX)
                return "nhr_oneshot";
            return a;
        }
        if (coll == STITCH_BROADCAST || coll == STITCH_REDUCE)
            return st_hccl_v1(sh->S);
        return coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V ? "pairwise" : "ring";
    }
    if (!sh->equal)
        return rsag ? "ahc" : "hier";
    if (env->level0_ring) /* pipeline's intra part is a mesh (spec 7: "level0 is mesh") */
        return "hier";
    if (coll == STITCH_ALL_REDUCE && !env->deterministic && bytes / (size_t)env->p >= ST_HCCL_PIPE_AR)
        return "pipeline";
    if ((coll == STITCH_ALL_GATHER || (coll == STITCH_REDUCE_SCATTER && !env->deterministic)) &&
        bytes >= ST_HCCL_PIPE_RSAG)
        return "pipeline";
    return "hier";
}

/* Where a decision may change: the class boundaries and the rules' own thresholds, ascending, from 0. */
static int st_breaks(const st_sel_env *env, size_t *b, int max)
{
    int n = 0;
    for (int k = 0; k < ST_SEL_CLASSES && n < max; k++) {
        size_t lo, hi;
        st_sel_class_range(k, &lo, &hi);
        b[n++] = lo;
    }
    size_t extra[] = {ST_HCCL_ONESHOT_MAX + 1, ST_HCCL_PIPE_RSAG, ST_HCCL_PIPE_AR * (size_t)env->p};
    for (size_t i = 0; i < sizeof extra / sizeof *extra && n < max; i++)
        b[n++] = extra[i];
    for (int i = 1; i < n; i++) /* insertion sort, dropping duplicates below */
        for (int j = i; j > 0 && b[j - 1] > b[j]; j--) {
            size_t x = b[j];
            b[j] = b[j - 1], b[j - 1] = x;
        }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || b[i] != b[m - 1])
            b[m++] = b[i];
    return m;
}

stitch_status_t st_sel_build_hccl(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err,
                                  size_t errlen)
{
    st_sel_shape sh = st_sel_shape_of(env);
    size_t b[ST_SEL_CLASSES + 8];
    int n = st_breaks(env, b, ST_SEL_CLASSES + 8);
    const st_algo *fallback = st_reg_find(env->reg, ST_DEFAULT_ALGO, coll);
    fallback = fallback ? fallback : st_reg_first(env->reg, coll);
    for (int i = 0; i < n; i++) {
        const st_algo *a = st_reg_find(env->reg, st_hccl_decide(env, &sh, coll, b[i]), coll);
        if (st_sel_add(out, b[i], i + 1 < n ? b[i + 1] - 1 : SIZE_MAX, a ? a : fallback) != 0) {
            snprintf(err, errlen, "selection (hccl) of %s: more than %d ranges", stitch_coll_name(coll),
                     ST_SEL_MAX_RANGES);
            return STITCH_ERR_INTERNAL;
        }
    }
    return STITCH_OK;
}
