/* comm_ahc.c - a communicator's AHC inner algorithms (comm.h: st_comm_ahc_ready; the choice is select_ahc.c's).
 *
 * Resolved per collective on first use, not at creation: the groups are known only then (process mode places
 * ranks after the bootstrap), and a communicator that never calls a collective never pays for pricing it. The
 * replacements go into the same role arrays HCCL_ALGO's level entries fill (st_hccl_use), so plans, proofs and
 * the size tables all see them. Above ST_AHC_PRICE_MAX ranks auto is not priced (the model would run every rank's
 * program nine times at the first call): algos.dsl's rule stays, as HCCL's.
 */
#include <stdlib.h>

#include "comm.h"
#include "config.h"
#include "groups.h"
#include "select.h"

#define ST_AHC_PRICE_MAX 4096

static int st_ahc_fill(int32_t **use, const st_catalogue *cat, const int pick[2])
{
    if (!*use) {
        if (!(*use = malloc(sizeof **use * ((size_t)cat->nalgos + 1))))
            return -1;
        for (int i = 0; i < cat->nalgos; i++)
            (*use)[i] = -1;
    }
    st_ahc_roles_apply(cat, *use, pick);
    return 0;
}

int st_comm_ahc_ready(const stitch_comm_t *cc, stitch_coll_t coll)
{
    stitch_comm_t *comm = (stitch_comm_t *)cc; /* one thread's at a time (comm.h): a one-time fill */
    if ((unsigned)coll >= STITCH_COLL_COUNT || (comm->ahc_ready >> coll & 1u))
        return 0;
    const st_catalogue *cat = &st_builtin_catalogue;
    const int *want = comm->settings.ahc_inner;
    int *pick = comm->ahc[coll];
    pick[0] = want[0], pick[1] = want[1];
    if (comm->p <= ST_AHC_PRICE_MAX) {
        st_sel_links links;
        st_sel_links_from(comm->topology, &links);
        if (st_ahc_choose(cat, coll, comm->p, st_groups_topo(comm->groups), comm->use[coll], &links, want, pick) != 0)
            return -1;
    }
    comm->ahc_ready |= 1u << coll;
    if (pick[0] == ST_AHC_AUTO && pick[1] == ST_AHC_AUTO)
        return 0;
    if (st_ahc_fill(&comm->use[coll], cat, pick) != 0)
        return -1;
    for (int v = 0; v < ST_L1_VARIANTS; v++)
        if (comm->use_l1[coll][v])
            st_ahc_roles_apply(cat, comm->use_l1[coll][v], pick);
    return 0;
}

void st_comm_ahc_text(const stitch_comm_t *comm, stitch_coll_t coll, char *buf, size_t len)
{
    st_comm_ahc_ready(comm, coll);
    st_ahc_text(comm->settings.ahc_inner, comm->ahc[coll], buf, len);
}
