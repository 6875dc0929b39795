/* split.h - sub-communicators (stitch_comm_split, stitch_comm_dup): what split.c decides for every backend, and the
 * two steps each backend does its own way.
 *
 * split.c exchanges (color, key) over the parent with an all_gather, works out each color's members in new rank
 * order and the parent's topology restricted to them, and then, per color, the new rank 0 (the leader) makes what
 * the members need to join (backend's split_offer) and writes it into a blob of ST_SPLIT_BLOB bytes; a second
 * all_gather over the parent hands every rank every leader's blob, and each member joins with its leader's
 * (split_join). Threads: the leader creates all the members' handles at once and the blob carries them; processes:
 * the blob is the address and secret of a new bootstrap, which the members then run among themselves.
 */
#ifndef ST_SPLIT_H
#define ST_SPLIT_H

#include <stdint.h>

#include "comm.h"
#include "groups.h"

#define ST_SPLIT_BLOB 120

/* What a member of a color knows about its new communicator. */
typedef struct st_split {
    int color, n, newrank;
    int32_t *members;  /* parent ranks, by new rank */
    st_groups groups;  /* the parent's topology restricted to the members, in new ranks; none: one group */
    st_reg *reg;       /* the parent's catalogues, verified for n ranks and these groups (the backends copy it) */
} st_split;

/* The backends' two steps (st_backend.split_offer / split_join). offer runs on the leader only and fills blob (or
 * fails with the reason in err); join runs on every member with its leader's blob and makes *out. Both take the
 * settings and algorithm choices from the parent. */
stitch_status_t st_threads_split_offer(stitch_comm_t *parent, st_split *sp, char *blob, char *err, size_t errlen);
stitch_status_t st_threads_split_join(stitch_comm_t *parent, st_split *sp, const char *blob, stitch_comm_t **out,
                                      char *err, size_t errlen);
stitch_status_t st_proc_split_offer(stitch_comm_t *parent, st_split *sp, char *blob, char *err, size_t errlen);
stitch_status_t st_proc_split_join(stitch_comm_t *parent, st_split *sp, const char *blob, stitch_comm_t **out,
                                   char *err, size_t errlen);

#endif
