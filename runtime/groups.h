/* groups.h - the groups a communicator's ranks form (servers, hosts), for topology-aware algorithms.
 *
 * A st_topo (core/st_sched.h) with the memory behind its arrays. Thread communicators share their job's
 * (STITCH_GROUPS / stitch_config_t.groups); a process-mode rank owns one, filled after the bootstrap from the hosts
 * or the same settings (placement.c). No groups (ngroups 0) means one group of all ranks.
 */
#ifndef ST_GROUPS_H
#define ST_GROUPS_H

#include <stdint.h>

#include "st_sched.h"

typedef struct st_groups {
    st_topo topo;
    int32_t *mem; /* topo's arrays */
} st_groups;

/* ngroups groups of consecutive ranks of the given sizes over p ranks (they add up to p: config.c checks). -1 when
 * out of memory or the sizes do not add up. */
int st_groups_uniform(st_groups *g, int p, int ngroups, const int *sizes);

/* One group per distinct key[r] over p ranks (members need not be consecutive: st_topo_by_key). A single group
 * leaves the ranks ungrouped. -1 when out of memory. */
int st_groups_by_key(st_groups *g, int p, const uint64_t *key);

/* The groups as algorithms take them: NULL when there are none. */
static inline const st_topo *st_groups_topo(const st_groups *g)
{
    return g->topo.ngroups > 0 ? &g->topo : NULL;
}

void st_groups_free(st_groups *g);

#endif
