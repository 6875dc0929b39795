/* choose.h - which algorithm a collective call runs: the one the user forced, or "auto" (select.h decides). */
#ifndef ST_CHOOSE_H
#define ST_CHOOSE_H

#include <stddef.h>

#include "config.h"
#include "registry.h"
#include "st_steptab.h"

/* One collective's choice. Forced (a name in STITCH_ALGO, stitch_config_t.algo or stitch_comm_set_algorithm):
 * `algo` for every call. Auto (the default, or the name "auto"): the communicator's size table decides per call
 * (select.h); `algo` is the fallback where that table cannot be built (ring, or the registry's first). */
typedef struct st_choice {
    const st_algo *algo;
    int is_auto;
} st_choice;

#define ST_AUTO_NAME "auto"

/* Names are looked up in the communicator's registry (registry.h): the built-in catalogue, then the user's. */

/* Resolve every collective's choice from the settings (STITCH_ALGO / config->algo, then HCCL_ALGO's
 * whole-communicator entries, choose.c says how they combine). Unknown names fail with the list of known ones. */
stitch_status_t st_resolve_algos(const st_reg *reg, const st_settings *s, st_choice out[STITCH_COLL_COUNT],
                                 char *err, size_t errlen);

/* The level1 entry of HCCL_ALGO (or stitch_config_t.hccl_algo) that chooses coll's algorithm (st_hccl_configured),
 * ST_HA_DEFAULT where none is given. Where it is, and no STITCH_ALGO-style name outranks it, coll is auto and its
 * size table is the configured algorithm's (select.h, st_sel_build_configured). */
int st_hccl_choice(const st_settings *s, stitch_coll_t coll);

/* The roles' replacements (st_inst.use) for calls of collective `coll`: the role `level0` runs ring where the
 * topology's servers are not full meshes (s->level0_ring; HCCL_ALGO's level0 entries are ignored, as HCCL ignores
 * them), and HCCL_ALGO's level1 entry replaces the role `level1` (algos.dsl's composites name them: hier's phases
 * inside and across groups), in every collective the roles are called for, when the entry names a stitch algorithm
 * that implements it (ring, fullmesh as mesh, H-D_R as rhd, NHR, NB; not the whole-communicator ones AHC,
 * AHC_BROKE, pipeline, pairwise, nor NA). *use gets cat->nalgos entries (-1: unchanged;
 * the caller frees it), or NULL when nothing is replaced. -1 when out of memory. */
int st_hccl_use(const st_settings *s, const st_catalogue *cat, stitch_coll_t coll, int32_t **use);

/* Set one collective's choice to `name` ("auto" or an algorithm of the registry); -1 when unknown for coll. */
int st_choice_set(const st_reg *reg, st_choice *c, stitch_coll_t coll, const char *name);

/* "WHERE: unknown algorithm 'NAME' for COLL (known: auto, ...)", or, for coll == STITCH_COLL_COUNT (a name meant
 * for every collective), the same with every collective's names. */
#define ST_NAMES_LEN 1024
void st_unknown_algo(const st_reg *reg, char *out, size_t len, const char *where, const char *name, int coll);

/* The names of every collective's algorithms, for messages. */
void st_all_names(const st_reg *reg, char *buf, size_t len);

#endif
