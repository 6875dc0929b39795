/* select_guide.c - policy hccl_guide: the selection HCCL's user guide documents (spec 13.1, [H] algo_intro.md and
 * HCCL_ALGO.md), as a size table. Policy hccl (select_hccl.c) follows the A2 code instead (spec 13.2); the two
 * disagree, and docs/algorithms.md ("Three policies") shows where.
 *
 * S servers = the communicator's level-0 groups (1 without groups), L ranks in each, p = S L; n = the call's data as
 * HCCL's tables count it (the whole vector: the call's bytes for all_reduce, broadcast and reduce, bytes x p for
 * the others, all_to_all a rank's whole row); MB = MiB. The guide, row by row:
 *   one server                  level0 alone, fixed by the hardware: mesh (spec 13.1, "Level0 fixed by hardware
 *                               topology"), ring where the topology says the server is no full mesh.
 *   all_to_all, all_to_all_v    Pipeline for large data with several ranks per server (n >= 1 MB x p, equal
 *                               servers, L > 1): stitch's pipeline all_to_all and all_to_all_v (algos.dsl; a
 *                               catalogue without them: hier, HCCL's staged alltoall); below that, and on
 *                               one-rank or unequal servers, Pairwise ("up to 1 MB x ranks"; stitch has no other
 *                               algorithm between one-rank servers).
 *   all_reduce, reduce_scatter, Pipeline for large data with several ranks per server: n >= 1 MB x p, equal servers,
 *   all_gather                  L > 1 (not reduce_scatter or all_reduce under HCCL_DETERMINISTIC: spec 7).
 *   between servers             RHD for a power-of-two server count at any size, or below 256 MB at any count;
 *                               Ring for fewer than 32 servers, not a power of two, at >= 256 MB; NHR beyond 32
 *                               servers at >= 256 MB. The guide names NHR and NB alike for "many servers"; NHR is
 *                               taken because HCCL's own defaults name it where they go past HD (A3 turns HD into
 *                               NHR, 950's default is NHR, level2 defaults to NHR: spec 13.1, 13.2).
 *                               On one-rank servers that algorithm runs over all ranks; on equal servers of L > 1
 *                               ranks hier runs (mesh inside, the algorithm between servers; the range's `between`
 *                               names it, and the communicator runs hier with it as role level1: comm.c,
 *                               use_l1); on unequal servers AHC for all_reduce, reduce_scatter and all_gather
 *                               (HCCL's algorithm for them, spec 9.6) and hier for the rest. A collective without
 *                               the algorithm (scatter and gather have no RHD, gather and reduce no NHR) runs Ring,
 *                               HCCL's level1 default (spec 13.2, V1).
 */
#include <stdint.h>
#include <stdio.h>

#include "select.h"

#define MiB ((size_t)1 << 20)
#define ST_GUIDE_BIG (256 * MiB)   /* "256 MB" */
#define ST_GUIDE_PIPE MiB          /* "1 MB x ranks" */
#define ST_GUIDE_MANY 32           /* "32 servers" */

typedef struct st_guide_pick {
    const char *algo, *between; /* what runs; between: the algorithm between servers when algo is hier */
} st_guide_pick;

static int st_has(const st_sel_env *env, const char *name, stitch_coll_t coll)
{
    return st_reg_find(env->reg, name, coll) != NULL;
}

/* The guide's algorithm between S servers for n bytes of data, one the collective has. */
static const char *st_guide_between(const st_sel_env *env, stitch_coll_t coll, int S, double n)
{
    const char *a = (S & (S - 1)) == 0 || n < (double)ST_GUIDE_BIG ? "rhd" : S < ST_GUIDE_MANY ? "ring" : "nhr";
    return st_has(env, a, coll) ? a : "ring";
}

static st_guide_pick st_guide_decide(const st_sel_env *env, const st_sel_shape *sh, stitch_coll_t coll,
                                     size_t bytes)
{
    int p = env->p, a2a = coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V;
    double n = st_coll_nblocks(coll, p) == 1 ? (double)bytes : (double)bytes * p;
    int pipe = sh->S > 1 && sh->L > 1 && sh->equal && !env->level0_ring && n >= (double)ST_GUIDE_PIPE * p;
    if (sh->S == 1)
        return (st_guide_pick){env->level0_ring ? "ring" : "mesh", NULL};
    if (a2a) {
        if (!pipe)
            return (st_guide_pick){"pairwise", NULL};
        return (st_guide_pick){st_has(env, "pipeline", coll) ? "pipeline" : "hier", NULL};
    }
    int rsag = coll == STITCH_ALL_REDUCE || coll == STITCH_REDUCE_SCATTER || coll == STITCH_ALL_GATHER;
    if (rsag && pipe && (coll == STITCH_ALL_GATHER || !env->deterministic))
        return (st_guide_pick){"pipeline", NULL};
    const char *x = st_guide_between(env, coll, sh->S, n);
    if (!sh->equal)
        return (st_guide_pick){rsag ? "ahc" : "hier", NULL};
    return sh->L == 1 ? (st_guide_pick){x, NULL} : (st_guide_pick){"hier", x};
}

/* (Pipeline's intra part is a mesh, spec 7: servers that are not full meshes run hier instead.) */

/* Where a decision may change: 0, 256 MB and 1 MB x p in the call's bytes (n / p where n counts p blocks). */
static int st_guide_breaks(const st_sel_env *env, stitch_coll_t coll, size_t *b)
{
    size_t per = st_coll_nblocks(coll, env->p) == 1 ? 1 : (size_t)env->p;
    size_t x[] = {(ST_GUIDE_BIG + per - 1) / per, ST_GUIDE_PIPE * (size_t)env->p / per};
    int n = 0;
    b[n++] = 0;
    if (x[0] > x[1]) {
        size_t t = x[0];
        x[0] = x[1], x[1] = t;
    }
    for (int i = 0; i < 2; i++)
        if (x[i] > b[n - 1])
            b[n++] = x[i];
    return n;
}

stitch_status_t st_sel_build_guide(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err,
                                   size_t errlen)
{
    st_sel_shape sh = st_sel_shape_of(env);
    size_t b[3];
    int n = st_guide_breaks(env, coll, b);
    const st_algo *fallback = st_reg_find(env->reg, "ring", coll);
    fallback = fallback ? fallback : st_reg_first(env->reg, coll);
    for (int i = 0; i < n; i++) {
        st_guide_pick g = st_guide_decide(env, &sh, coll, b[i]);
        const st_algo *a = st_reg_find(env->reg, g.algo, coll);
        if (st_sel_add_between(out, b[i], i + 1 < n ? b[i + 1] - 1 : SIZE_MAX, a ? a : fallback,
                               a ? g.between : NULL) != 0) {
            snprintf(err, errlen, "selection (hccl_guide) of %s: more than %d ranges", stitch_coll_name(coll),
                     ST_SEL_MAX_RANGES);
            return STITCH_ERR_INTERNAL;
        }
    }
    return STITCH_OK;
}
