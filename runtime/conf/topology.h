/* topology.h - the topology value: a topology setting (STITCH_TOPO / stitch_config_t.topo) read once, shared by
 * reference.
 *
 * One value per job of thread ranks (the communicators stitch_comm_init_threads makes together) and one per process
 * rank (stitch_comm_init_rank): init reads the setting once (core/st_topofile_open: a YAML file or an inline layout),
 * and every communicator holds a reference, including those split or dup'ed from it, which share their parent's.
 * A read that fails fails init with the loader's `FILE:LINE:COL: error: ...`; nothing reads the file again.
 * Everything the runtime takes from a topology is an accessor here: the layout (the groups at every level), the
 * levels' names and figures (auto's links), the servers' host names (process placement), and the level 0 and 1
 * bandwidths of the 2-D split's formula. The value never changes once loaded, so readers take no lock; the count
 * of references is atomic (thread ranks drop theirs from their own threads).
 *
 * A NULL topology is "none given" (STITCH_GROUPS, or hosts): every accessor takes NULL and answers as for none.
 */
#ifndef ST_TOPOLOGY_H
#define ST_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include "groups.h"
#include "stitch.h"

struct st_layout;
struct st_level_info;
struct st_topofile;

typedef struct st_topology st_topology;

/* Read the topology setting `spec`, named `source` in messages (STITCH_TOPO, config->topo; NULL: the bare message),
 * for p ranks (p < 1: any number), into a new value holding one reference. STITCH_ERR_CONFIG with one line in err:
 * the loader's `FILE:LINE:COL: error: ...` after the source, a bad inline layout, or a rank count other than p
 * (naming the file and both counts); STITCH_ERR_NO_MEMORY. *out is NULL on failure. */
stitch_status_t st_topology_load(const char *source, const char *spec, int p, st_topology **out, char *err,
                                 size_t errlen);

/* Take another reference (NULL: none, returns NULL); drop one, freeing the value with the last. */
st_topology *st_topology_ref(st_topology *t);
void st_topology_unref(st_topology *t);
/* References held now (tests; 0 for NULL). */
int st_topology_refs(const st_topology *t);
/* Values st_topology_load made in this process (tests: one per init). */
unsigned long st_topology_loads(void);

/* The setting as given ("" for NULL) and the file's name ("" when none or inline). */
const char *st_topology_spec(const st_topology *t);
const char *st_topology_name(const st_topology *t);
/* Ranks of the layout (0 for NULL). */
int st_topology_ranks(const st_topology *t);
/* The layout, innermost level first (NULL for NULL). */
const struct st_layout *st_topology_layout(const st_topology *t);
/* Levels of the layout (0 for NULL). */
int st_topology_nlevels(const st_topology *t);
/* Whether the levels carry figures (a file; an inline layout has none). */
int st_topology_has_figures(const st_topology *t);
/* Level k's name and figures (k < st_topology_nlevels; all zero for an inline layout), NULL when out of range. */
const struct st_level_info *st_topology_level(const st_topology *t, int k);
/* The reduction bandwidth, bytes per second; 0 when not given. */
double st_topology_reduce_bandwidth(const st_topology *t);
/* Whether the servers have host names; server g's (g < the layout's level 0 groups), NULL when none. */
int st_topology_has_hosts(const st_topology *t);
const char *st_topology_host(const st_topology *t, int server);
/* Server g's device ids (count[0][g] of them), NULL when not given. */
const int32_t *st_topology_devices(const st_topology *t, int server);
/* The level 0 and 1 bandwidths the 2-D split's formula uses (spec 12.3); 0 and 0 when the topology has fewer than
 * two levels with figures (or none): the formula's fallback. */
void st_topology_split_bw(const st_topology *t, double bw[2]);
/* 1 when the topology is a file whose servers are not full meshes (level 0 `full_mesh: false`): level0 runs
 * ring, as HCCL does; 0 for a full mesh, an inline layout or NULL. */
int st_topology_level0_ring(const st_topology *t);
/* The whole file, for the tools that print it (stitch-info); NULL for NULL. */
const struct st_topofile *st_topology_file(const st_topology *t);

/* The groups of every level, ranks at layout positions by rank_at (groups.h's st_groups_layout). -1 when out of
 * memory; t NULL leaves the ranks ungrouped. */
int st_topology_groups(const st_topology *t, const int32_t *rank_at, st_groups *g);

/* A hash of what ranks must agree on: its layout, host names, devices and level figures (0 for NULL). */
uint64_t st_topology_hash(const st_topology *t);

#endif
