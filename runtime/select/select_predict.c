/* select_predict.c - the predictor policy `model` asks (select.h's seam): the cost model over the algorithm's
 * own schedule.
 *
 * The schedule is instantiated once for (algorithm, p, groups, roles) and priced at every size asked; a `require`
 * that does not hold (pipeline on unequal groups) makes the algorithm no candidate (1). The call's bytes (count
 * times dtype size, elements per rank as stitch.h counts them) become the collective's blocks: one block for
 * all_reduce, broadcast and reduce, p blocks of that size for the others (all_to_all: one rank's row).
 *
 * The costing is core/st_model's (docs/cost-model.md): per step and rank, each level the rank's transfers use
 * costs alpha + max(bytes out, bytes in) * beta, levels work at once, reductions cost gamma, a step is its slowest
 * rank, the collective the sum of its steps, and a phase on sub-communicators (AHC's groups) lasts as long as its
 * slowest group. It is st_model_predict_n, exactly what `stitchc sim` prints: the ranks' programs run once per
 * candidate and every size class is priced from that run (every rank up to ST_MODEL_EXACT_MAX ranks, the
 * representatives of a shift-symmetric algorithm above).
 */
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "st_model.h"

#define ST_SEL_EXACT_MAX 64
#define ST_SEL_FALLBACK_MAX 1024
#define ST_SEL_MAX_XFERS ((int64_t)1 << 17) /* the transfers a candidate's representatives, or every rank where none
                                            * stand for the others, may send to be priced: about 0.4 s of costing
                                            * over the 42 size classes on a shared 2-core machine */

/* The model's bytes (the whole vector as HCCL's tables count n) for a call of `bytes` per rank as stitch.h counts. */
static double st_model_bytes(int coll, int p, size_t bytes)
{
    return st_coll_nblocks(coll, p) == 1 ? (double)bytes : (double)bytes * p;
}

int st_sel_predict_model(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                         const st_sel_links *links, const size_t *bytes, int n, double *t)
{
    (void)ctx;
    st_model m = {.nlevels = links->nlevels, .gamma = links->gamma};
    for (int k = 0; k < links->nlevels; k++)
        m.level[k].alpha = links->alpha[k], m.level[k].beta = links->beta[k];
    double *nb = malloc((size_t)n * sizeof *nb);
    st_model_result *r = malloc((size_t)n * sizeof *r);
    /* Above ST_SEL_EXACT_MAX ranks the representatives (the symmetric or class-based model, exact fallback where
     * the algorithm has no symmetry), and no every-rank fallback above ST_SEL_FALLBACK_MAX: such a candidate is
     * not priced at this scale (issue 22 item 7: a selection on 100,000 ranks in seconds), nor is one whose
     * representatives send more than ST_SEL_MAX_XFERS transfers (ring and mesh at 100,000 ranks and beyond). */
    st_model_opts opts = {.method = ST_MODEL_AUTO, .elem_size = 1, .exact_max = ST_SEL_EXACT_MAX,
                          .fallback_max = ST_SEL_FALLBACK_MAX, .max_xfers = ST_SEL_MAX_XFERS};
    st_err err;
    int rc = 1; /* out of memory, refused (a require), or not priced: no candidate either way */
    if (nb && r) {
        for (int i = 0; i < n; i++)
            nb[i] = st_model_bytes(a->coll, in->p, bytes[i]);
        if (st_model_predict_n(cat, a, in, &m, nb, n, &opts, r, &err) == 0) {
            for (int i = 0; i < n; i++)
                t[i] = r[i].time, st_model_result_free(&r[i]);
            rc = 0;
        } else if (err.refused == 3) {
            rc = 2; /* not priced at this scale */
        }
    }
    free(nb);
    free(r);
    return rc;
}
