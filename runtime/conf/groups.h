/* groups.h - the groups a communicator's ranks form (servers, hosts, pods: the levels of a topology), for
 * topology-aware algorithms.
 *
 * A st_topo (core/st_sched.h) with the memory behind its arrays: level 0 is the servers (what stitch_comm_groups
 * reports), higher levels group whole servers (pods, clusters). Thread communicators share their job's (from
 * STITCH_TOPO / stitch_config_t.topo, or STITCH_GROUPS / stitch_config_t.groups); a process-mode rank owns one,
 * filled after the bootstrap from the hosts, the topology (placed by its host names, or in rank order) or the
 * groups (placement.c). No groups (ngroups 0) means one group of all ranks.
 *
 * A topology setting (STITCH_TOPO, stitch_config_t.topo) is a YAML file read by core/st_topofile.c, or a layout
 * written inline as on stitch-perf's command line ("2,3", "[2,3],[4]", "3x2"): a value made only of digits, ',',
 * '[', ']', 'x' and blanks is a layout (a file with such a name is written "./2,3"). st_topo_setting_load reads
 * either into a st_topofile (an inline layout has no level names, bandwidths or hosts).
 */
#ifndef ST_GROUPS_H
#define ST_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "st_sched.h"
#include "stitch.h"

/* core/st_topo.h and st_topofile.h by their tags only: this header reaches exec.c (through comm.h), which has a
 * st_layout of its own. */
struct st_layout;
struct st_topofile;

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

/* Is a topology setting an inline layout rather than a file (see above)? */
int st_topo_is_layout(const char *spec);
/* 1 when the topology setting `spec` is a file whose servers are not full meshes (level 0 `full_mesh: false`), 0
 * otherwise (a layout, a full mesh, or a file that does not load: init reports that). */
int st_topo_level0_ring(const char *spec);

/* Read a topology setting `spec`, named `source` in messages (STITCH_TOPO, config->topo; NULL: the bare message),
 * for p ranks (p < 1: any number). STITCH_ERR_CONFIG with one line in err: the loader's `FILE:LINE:COL: error: ...`
 * after the source, a bad inline layout, or a rank count other than p (naming the file and both counts); *tf is
 * then empty. */
stitch_status_t st_topo_setting_load(const char *source, const char *spec, int p, struct st_topofile *tf,
                                     char *err, size_t errlen);

/* A hash of what ranks must agree on in a topology: its layout, host names, devices and level figures. */
uint64_t st_topo_hash(const struct st_topofile *tf);

#endif
