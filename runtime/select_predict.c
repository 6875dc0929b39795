/* select_predict.c - the predictor policy `model` asks (select.h's seam): the cost model over the algorithm's
 * own schedule.
 *
 * The schedule is instantiated once for (algorithm, p, groups, roles) and priced at every size asked; a `require`
 * that does not hold (pipeline on unequal groups) makes the algorithm no candidate (1). The call's bytes (count
 * times dtype size, elements per rank as stitch.h counts them) become the collective's blocks: one block for
 * all_reduce, broadcast and reduce, p blocks of that size for the others (all_to_all: one rank's row).
 *
 * Interim costing, until core/st_model (issue 12 item 2) is merged: the same rules, written small. Per step and
 * rank, each level the rank's transfers use costs alpha + max(bytes out, bytes in) * beta (a rank's transfers of
 * one step share its link); levels work at once, so the rank's step is its slowest level plus gamma times the
 * bytes it reduces; the step is its slowest rank; the collective is the sum of its steps.
 */
#include <stdlib.h>
#include <string.h>

#include "select.h"

/* The lowest level of t whose group holds both a and b (0 for a NULL t or a == b). */
static int st_level_of(const st_topo *t, int a, int b)
{
    int n = st_topo_nlevels(t);
    for (int k = 0; k < n - 1; k++) {
        st_topo_level lv = st_topo_level_of(t, k);
        if (!lv.group_of || lv.group_of[a] == lv.group_of[b])
            return k;
    }
    return n > 0 ? n - 1 : 0;
}

static double st_units_bytes(const st_sched *s, int32_t run0, int32_t nruns, double unit)
{
    double u = 0;
    for (int i = 0; i < nruns; i++)
        u += s->runs[run0 + i].len;
    return u * unit;
}

/* Seconds of schedule s for blocks of `block` bytes. `acc` holds 3 * nlevels * p doubles of scratch. */
static double st_price(const st_sched *s, const st_topo *t, const st_sel_links *l, double block, double *acc)
{
    int p = s->p, nl = st_topo_nlevels(t);
    int nblocks = st_coll_nblocks(s->algo->coll, p);
    double unit = s->nunits > 0 ? block * nblocks / s->nunits : 0, total = 0;
    double *out = acc, *in = acc + (size_t)nl * p, *red = acc + 2 * (size_t)nl * p;
    for (int st = 0; st < s->nsteps; st++) {
        memset(acc, 0, sizeof *acc * (size_t)(2 * nl + 1) * (size_t)p);
        for (int i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
            const st_xfer *x = &s->xfers[i];
            double b = st_units_bytes(s, x->run0, x->nruns, unit);
            if (x->op == 1)
                red[x->dst] += b;
            if (x->src == x->dst)
                continue;
            int k = st_level_of(t, x->src, x->dst);
            out[(size_t)k * p + x->src] += b, in[(size_t)k * p + x->dst] += b;
        }
        double step = 0;
        for (int r = 0; r < p; r++) {
            double slow = 0;
            for (int k = 0; k < nl; k++) {
                double o = out[(size_t)k * p + r], n = in[(size_t)k * p + r], m = o > n ? o : n;
                double c = o > 0 || n > 0 ? l->alpha[k] + m * l->beta[k] : 0;
                slow = c > slow ? c : slow;
            }
            slow += red[r] * l->gamma;
            step = slow > step ? slow : step;
        }
        total += step;
    }
    return total;
}

int st_sel_predict_model(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                         const st_sel_links *links, const size_t *bytes, int n, double *t)
{
    (void)ctx;
    st_sched s;
    st_err err;
    if (st_sched_build_ex(cat, a, in, &s, &err) != 0)
        return 1; /* refused, or cannot be built for this p: no candidate either way */
    int nl = st_topo_nlevels(in->topo);
    double *acc = malloc(sizeof *acc * (size_t)(2 * nl + 1) * (size_t)in->p);
    if (!acc) {
        st_sched_free(&s);
        return -1;
    }
    for (int i = 0; i < n; i++)
        t[i] = st_price(&s, in->topo, links, (double)bytes[i], acc);
    free(acc);
    st_sched_free(&s);
    return 0;
}
