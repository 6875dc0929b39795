/* select_ahc.c - AHC's inner algorithms at run time (spec 9.6): what the roles ahc_intra and ahc_inter run.
 *
 * AHC and AHC_BROKE (algos.dsl: ahc, ahc_align, ahc_broke, and hier on unequal groups) run one algorithm inside the
 * groups (the role ahc_intra, HCCL's default NB) and one across them, per logical card (ahc_inter: Ring for up to 3
 * groups, else NB). The seed allows NB, NHR and Ring for either. STITCH_AHC_INTRA / STITCH_AHC_INTER (or
 * stitch_config_t.ahc_intra / .ahc_inter) fix one; auto (the default) lets the cost model choose, per communicator
 * and collective: it prices `ahc` of the collective with every allowed pair over its own schedule (select_predict.c,
 * the model policy's predictor, on the communicator's groups and link figures) at the sizes 1 KiB, 2 KiB ..
 * 256 MiB and keeps the pair with the least sum of relative times (each size's time over the best time at that
 * size, so no size range outweighs another); a tie goes to the earlier pair in the order nb, nhr, ring (intra
 * first). The choice depends only on what every rank agrees on (groups, figures, settings), so all ranks make it.
 * The instantiations the pairs make are proved before they run like any other (proof.c).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "select.h"

static const char *const st_ahc_role[2] = {"ahc_intra", "ahc_inter"};

int st_ahc_roles_apply(const st_catalogue *cat, int32_t *use, const int pick[2])
{
    int changed = 0;
    for (int i = 0; i < cat->nalgos; i++)
        for (int k = 0; k < 2; k++) {
            if (pick[k] == ST_AHC_AUTO || strcmp(cat->algos[i].name, st_ahc_role[k]) != 0)
                continue;
            const st_algo *with = st_cat_find(cat, st_ahc_inner_name(pick[k]), cat->algos[i].coll);
            if (with)
                use[i] = (int32_t)(with - cat->algos), changed = 1;
        }
    return changed;
}

#define ST_AHC_LO_LOG2 10 /* 1 KiB */
#define ST_AHC_HI_LOG2 28 /* 256 MiB */
#define ST_AHC_NSIZES (ST_AHC_HI_LOG2 - ST_AHC_LO_LOG2 + 1)

int st_ahc_choose(const st_catalogue *cat, stitch_coll_t coll, int p, const st_topo *topo, const int32_t *base,
                  const st_sel_links *links, const int want[2], int out[2])
{
    out[0] = want[0], out[1] = want[1];
    const st_algo *ahc = st_cat_find(cat, "ahc", coll);
    if ((want[0] != ST_AHC_AUTO && want[1] != ST_AHC_AUTO) || !ahc || !topo || topo->ngroups < 2)
        return 0; /* fixed, or nothing to price: the roles keep algos.dsl's rule where auto */
    int npair = 0, pairs[9][2];
    for (int a = ST_AHC_NB; a <= ST_AHC_RING; a++)
        for (int b = ST_AHC_NB; b <= ST_AHC_RING; b++)
            if ((want[0] == ST_AHC_AUTO || want[0] == a) && (want[1] == ST_AHC_AUTO || want[1] == b))
                pairs[npair][0] = a, pairs[npair][1] = b, npair++;
    size_t bytes[ST_AHC_NSIZES];
    double t[9][ST_AHC_NSIZES], best[ST_AHC_NSIZES];
    int ok[9] = {0};
    for (int k = 0; k < ST_AHC_NSIZES; k++)
        bytes[k] = (size_t)1 << (ST_AHC_LO_LOG2 + k), best[k] = DBL_MAX;
    int32_t *use = malloc(sizeof *use * ((size_t)cat->nalgos + 1));
    if (!use)
        return -1;
    for (int i = 0; i < npair; i++) {
        for (int j = 0; j < cat->nalgos; j++)
            use[j] = base ? base[j] : -1;
        st_ahc_roles_apply(cat, use, pairs[i]);
        st_inst in = {.p = p, .root = 0, .topo = topo, .use = use};
        int rc = st_sel_predict_model(NULL, cat, ahc, &in, links, bytes, ST_AHC_NSIZES, t[i]);
        ok[i] = rc == 0;
        for (int k = 0; ok[i] && k < ST_AHC_NSIZES; k++)
            best[k] = t[i][k] < best[k] ? t[i][k] : best[k];
    }
    free(use);
    double least = DBL_MAX;
    for (int i = 0; i < npair; i++) {
        double sum = 0;
        for (int k = 0; ok[i] && k < ST_AHC_NSIZES; k++)
            sum += best[k] > 0 ? t[i][k] / best[k] : 1;
        if (ok[i] && sum < least * (1 - 1e-9))
            least = sum, out[0] = pairs[i][0], out[1] = pairs[i][1];
    }
    return 0;
}

void st_ahc_text(const int want[2], const int got[2], char *buf, size_t len)
{
    static const char *const side[2] = {"intra", "inter"}, *const rule[2] = {"nb", "ring up to 3 groups, else nb"};
    int o = 0;
    for (int k = 0; k < 2 && o >= 0 && (size_t)o < len; k++)
        o += snprintf(buf + o, len - (size_t)o, "%s%s %s (%s)", k ? ", " : "", side[k],
                      got[k] == ST_AHC_AUTO ? rule[k] : st_ahc_inner_name(got[k]),
                      want[k] != ST_AHC_AUTO ? "configured" : got[k] != ST_AHC_AUTO ? "model" : "algos.dsl's rule");
}
