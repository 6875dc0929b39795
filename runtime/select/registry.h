/* registry.h - the algorithms a communicator sees: the built-in catalogue (st_builtin_catalogue, generated from
 * algos.dsl) first, then the user's catalogues from stitch_config_t.catalogues, in the order given. */
#ifndef ST_REGISTRY_H
#define ST_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "stitch.h"
#include "st_sched.h"
#include "st_steptab.h"

extern const st_catalogue st_builtin_catalogue;

/* The algorithm `name` (case-insensitive) implementing `coll` in the built-in catalogue, or NULL. */
const st_algo *st_registry_find(const char *name, stitch_coll_t coll);

/* One communicator's registry (each communicator owns one; registry.c says why it is per communicator). Its
 * algorithms are numbered 0..nalgos-1 in catalogue order: the schedule cache and process mode's message headers
 * use that number, which is the same on every rank because the ranks' registries are checked to be equal. */
typedef struct st_reg st_reg;

/* The registry of `config` (NULL: the built-in catalogue alone) and, when algo_file is not NULL, of that .dsl file
 * (STITCH_ALGO_FILE), compiled now and listed last. STITCH_ERR_INVALID_ARGUMENT for a malformed list,
 * STITCH_ERR_CONFIG for a catalogue of another step-table format, a file that does not compile (the compiler's
 * lines) or a name defined twice for one collective (both files named), with why in err. */
stitch_status_t st_reg_new(const stitch_config_t *config, const char *algo_file, st_reg **out, char *err,
                           size_t errlen);
/* Verify every catalogue of reg that was compiled at run time for exactly this communicator: p ranks on topo
 * (NULL: one group), every root. STITCH_ERR_CONFIG with the verifier's counterexample in err (catalogue.c). The
 * registry remembers which it proved (st_reg_exact), so that their plans are not proved again (proof.h); emitted
 * catalogues are proved by the range they record, and per plan outside it. */
stitch_status_t st_reg_verify(st_reg *reg, int p, const st_topo *topo, char *err, size_t errlen);
/* 1 when `cat` is one of reg's and st_reg_verify proved it for this communicator's exact shape. */
int st_reg_exact(const st_reg *reg, const st_catalogue *cat);
st_reg *st_reg_dup(const st_reg *reg); /* NULL when out of memory */
void st_reg_free(st_reg *reg);

/* The algorithm `name` (case-insensitive) implementing `coll`, or NULL. */
const st_algo *st_reg_find(const st_reg *reg, const char *name, stitch_coll_t coll);
/* The first algorithm implementing `coll` (the default where there is no "ring"), or NULL. */
const st_algo *st_reg_first(const st_reg *reg, stitch_coll_t coll);

int st_reg_count(const st_reg *reg);
/* The algorithm `name` (any case) implementing coll in one catalogue, or NULL. */
const st_algo *st_cat_find(const st_catalogue *cat, const char *name, int32_t coll);
/* The number of `algo` (one of this registry's), -1 when it is not; and back (NULL when out of range). */
int st_reg_index(const st_reg *reg, const st_algo *algo);
const st_algo *st_reg_algo(const st_reg *reg, int index);
/* The catalogue `algo` comes from (its code is what the schedule runs), NULL when it is not one of this registry's. */
const st_catalogue *st_reg_cat(const st_reg *reg, const st_algo *algo);

/* "ring, mesh, rhd": the names implementing `coll`, for error messages; "(none)" when there are none. */
void st_reg_names(const st_reg *reg, stitch_coll_t coll, char *buf, size_t len);
/* "algos.dsl+mine.dsl": the catalogues' files, for messages. */
void st_reg_describe(const st_reg *reg, char *buf, size_t len);
/* The catalogues' hashes combined in order: equal registries have equal hashes. */
uint64_t st_reg_hash(const st_reg *reg);

/* Every rank of a process-mode job publishes its registry's hash and description (st_reg_hash, st_reg_describe)
 * in its bootstrap entry; fail (STITCH_ERR_CONFIG, both ranks and both sides named in err) when any rank's differs
 * from rank 0's. Every rank sees the same table, so every rank reports the same pair. */
struct st_boot;
stitch_status_t st_reg_check_peers(const struct st_boot *b, char *err, size_t errlen);

#endif
