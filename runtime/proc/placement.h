/* placement.h - which ranks of a process-mode communicator form a group (placement.c).
 *
 * Topology-aware algorithms (pipeline) see groups of ranks (st_topo). In process mode they are the hosts: the
 * ranks whose bootstrap host ids are equal, in any rank order; STITCH_GROUPS / stitch_config_t.groups, when
 * given, replace them with groups of consecutive ranks; STITCH_TOPO / stitch_config_t.topo with every level of a
 * topology, its servers placed by host name when the file names hosts, else in rank order. Every rank must build
 * the same groups, or the ranks would run different schedules: host ids and names come from the bootstrap's
 * table, which every rank holds whole, and an explicit spec or topology is checked to be the same on every rank
 * (its tag travels in that table).
 */
#ifndef ST_PLACEMENT_H
#define ST_PLACEMENT_H

#include <stdint.h>

#include "bootstrap.h"
#include "config.h"
#include "groups.h"
#include "topology.h"

typedef struct st_placement {
    int p;
    uint64_t *key; /* per rank: its group's key (explicit spec: the group's number; by host: filled from the table) */
    int given;     /* the groups come from STITCH_GROUPS / config->groups (s->groups_source) */
    st_topology *topo; /* they come from STITCH_TOPO / config->topo (s->topo_source), read here: one reference */
    uint64_t tag;  /* what every rank must agree on: 0 for "by host", else a hash of the explicit groups (low bits
                    * 01) or of the topology (low bits 11) */
} st_placement;

/* Before the bootstrap: parse an explicit groups spec, or read the topology, for p ranks (STITCH_ERR_CONFIG with
 * the reason: a bad spec or file, a topology of another rank count). */
stitch_status_t st_placement_init(st_placement *pl, const st_settings *s, int p, char *err, size_t errlen);

/* After it: check that every rank's tag (b->peers[i].tag) is mine, take the host ids when no spec was given (or
 * place the ranks on the topology's hosts by name), and fill `groups` (STITCH_DEBUG logs them). STITCH_ERR_CONFIG
 * when ranks disagree, or when the ranks' hosts do not match the topology's (a host not in it, or a host running
 * another number of ranks than the topology gives it). */
stitch_status_t st_placement_apply(st_placement *pl, const st_settings *s, const st_boot *b, st_groups *groups,
                                   char *err, size_t errlen);

void st_placement_free(st_placement *pl);

#endif
