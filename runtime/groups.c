/* groups.c - filling and freeing a communicator's groups (groups.h). */
#include <stdlib.h>

#include "groups.h"

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

void st_groups_free(st_groups *g)
{
    free(g->mem);
    *g = (st_groups){{0}, NULL};
}
