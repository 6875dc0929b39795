/* select_conf.c - a collective HCCL_ALGO's level1 entry chooses for (spec 11.2): the configured algorithm for every
 * size, composed with the server-internal one where servers hold several ranks, or HCCL's default where it cannot
 * run.
 *
 * In HCCL, level1 is how a user picks the algorithm between servers, and no size overrides it: ring, H-D_R, NHR and
 * NB run over all ranks where each server holds one, and as the level between servers of the hierarchical
 * decomposition (hier, whose role level1 HCCL_ALGO's entry replaces: choose.c's st_hccl_use) where servers hold
 * several; pipeline, AHC, AHC_BROKE and pairwise are whole-communicator algorithms. The layout rules are
 * st_hccl_level1_run's (conf/hccl_algo.c, shared with stitchc). Where the entry cannot run here (one server, unequal
 * servers, a collective it is not written for, or one stitch has no implementation of) the table is HCCL's default
 * for the operator, policy hccl's (select_hccl.c), and out->note says why; the communicator says so once under
 * STITCH_DEBUG (comm/select_comm.c) and stitch-info --selection prints it.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "select.h"

int st_sel_build_configured(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out)
{
    int alg = env->level1[coll];
    st_sel_shape sh = st_sel_shape_of(env);
    const char *impl;
    char why[sizeof out->note - 40];
    const char *name = st_hccl_level1_run(alg, coll, sh.S, sh.L, sh.equal, env->deterministic, env->level0_ring,
                                          &impl, why, sizeof why);
    const st_algo *a = name ? st_reg_find(env->reg, name, coll) : NULL;
    if (name && (!a || !st_reg_find(env->reg, impl, coll))) {
        snprintf(why, sizeof why, "level1 %s: stitch has no %s of %s", st_hccl_alg_name(alg), stitch_coll_name(coll),
                 a ? impl : name);
        a = NULL;
    }
    out->n = 0, out->configured = alg;
    if (a) {
        st_sel_add_between(out, 0, SIZE_MAX, a, strcmp(name, "hier") == 0 ? impl : NULL);
        out->note[0] = '\0';
        return 1;
    }
    snprintf(out->note, sizeof out->note, "%s; HCCL's default runs", why[0] ? why : "not applicable");
    return 0;
}
