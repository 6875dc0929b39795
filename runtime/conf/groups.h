/* groups.h - the groups a communicator's ranks form (servers, hosts, pods: the levels of a topology), for
 * topology-aware algorithms.
 *
 * A st_topo (core/st_sched.h) with the memory behind its arrays: level 0 is the servers (what stitch_comm_groups
 * reports), higher levels group whole servers (pods, clusters). Thread communicators share their job's (from
 * STITCH_TOPO / stitch_config_t.topo, or STITCH_GROUPS / stitch_config_t.groups); a process-mode rank owns one,
 * filled after the bootstrap from the hosts, the topology (placed by its host names, or in rank order) or the
 * groups (placement.c). No groups (ngroups 0) means one group of all ranks.
 * A topology's groups come from its value (topology.h, st_topology_groups).
 */
#ifndef ST_GROUPS_H
#define ST_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "st_sched.h"
#include "stitch.h"

/* core/st_topo.h by its tag only: this header reaches exec.c (through comm.h), which has a
 * st_layout of its own. */
struct st_layout;

typedef struct st_groups {
    st_topo topo;
    void *mem; /* topo's arrays (and its levels) */
} st_groups;

/* ngroups groups of consecutive ranks of the given sizes over p ranks (they add up to p: config.c checks). -1 when
 * out of memory or the sizes do not add up. */
int st_groups_uniform(st_groups *g, int p, int ngroups, const int *sizes);

/* One group per distinct key[r] over p ranks (members need not be consecutive: st_topo_by_key). A single group
 * leaves the ranks ungrouped. -1 when out of memory. */
int st_groups_by_key(st_groups *g, int p, const uint64_t *key);

/* Every level of layout l (st_topo_build). rank_at[pos] is the rank at position pos of the layout order (NULL:
 * rank pos), a permutation of 0..l->p-1: a group's members are its positions' ranks, in layout order, so with
 * servers filled in rank order (placement.c) level 0's members are in rank order. -1 when out of memory. */
int st_groups_layout(st_groups *g, const struct st_layout *l, const int32_t *rank_at);

/* The groups as algorithms take them: NULL when there are none. */
static inline const st_topo *st_groups_topo(const st_groups *g)
{
    return g->topo.ngroups > 0 ? &g->topo : NULL;
}

void st_groups_free(st_groups *g);

#endif
