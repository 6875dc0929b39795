/* groups.c - filling and freeing a communicator's groups (groups.h); a topology's are topology.c's to make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "st_topo.h"

int st_groups_uniform(st_groups *g, int p, int ngroups, const int *sizes)
{
    size_t n = (size_t)p;
    int32_t *m = malloc(sizeof *m * (3 * n + (size_t)ngroups + 1));
    st_topo t;
    if (!m || st_topo_uniform(&t, p, ngroups, sizes, m, m + ngroups + 1, m + ngroups + 1 + n,
                              m + ngroups + 1 + 2 * n) != 0) {
        free(m);
        return -1;
    }
    free(g->mem);
    g->mem = m, g->topo = t;
    return 0;
}

int st_groups_by_key(st_groups *g, int p, const uint64_t *key)
{
    size_t n = (size_t)p;
    int32_t *m = malloc(sizeof *m * (4 * n + 1));
    st_topo t;
    if (!m || st_topo_by_key(&t, p, key, m, m + n + 1, m + 2 * n + 1, m + 3 * n + 1) < 0) {
        free(m);
        return -1;
    }
    free(g->mem);
    g->mem = m;
    g->topo = t.ngroups > 1 ? t : (st_topo){0}; /* one group is no grouping: as without groups */
    return 0;
}

/* Level lv of a topology built over layout positions, renumbered to ranks: members hold positions and group_of /
 * index_of are indexed by position; afterwards members hold ranks and the others are indexed by rank. */
static int st_level_permute(const st_topo_level *lv, int p, const int32_t *rank_at)
{
    int32_t *members = (int32_t *)lv->members, *group_of = (int32_t *)lv->group_of;
    int32_t *index_of = (int32_t *)lv->index_of, *tmp = malloc(sizeof *tmp * 2 * (size_t)p);
    if (!tmp)
        return -1;
    for (int pos = 0; pos < p; pos++)
        tmp[rank_at[pos]] = group_of[pos], tmp[p + rank_at[pos]] = index_of[pos];
    for (int i = 0; i < p; i++)
        members[i] = rank_at[members[i]], group_of[i] = tmp[i], index_of[i] = tmp[p + i];
    free(tmp);
    return 0;
}

int st_groups_layout(st_groups *g, const st_layout *l, const int32_t *rank_at)
{
    st_topo t;
    void *mem = NULL;
    if (st_topo_build(l, &t, &mem) != 0)
        return -1;
    for (int k = 0; rank_at && k < st_topo_nlevels(&t) - 1; k++) {
        st_topo_level lv = st_topo_level_of(&t, k);
        if (st_level_permute(&lv, l->p, rank_at) != 0) {
            free(mem);
            return -1;
        }
    }
    free(g->mem);
    g->mem = mem, g->topo = t;
    return 0;
}

void st_groups_free(st_groups *g)
{
    free(g->mem);
    *g = (st_groups){{0}, NULL};
}
