/* select.h - what `auto` runs: a table of message-size ranges per collective, computed once per communicator.
 *
 * A communicator whose collective is `auto` (the default; a name in STITCH_ALGO, HCCL_ALGO's whole-communicator
 * entries or stitch_comm_set_algorithm override it: choose.c) looks the call's bytes up in that collective's
 * table. The bytes are the call's count times its dtype's size: elements per rank as stitch.h counts them
 * (all_reduce's vector, reduce_scatter's output block, all_gather's input block). A table covers every byte count
 * from 0 to SIZE_MAX with ranges that neither leave gaps nor overlap (st_sel_check), each naming one algorithm that
 * can run on the communicator (its p and groups). Three policies fill it (STITCH_SELECT):
 *   model  the candidate with the least predicted time, per power-of-two size class (select.c): the candidates are
 *          the built-in catalogue's algorithms of the collective (a user's catalogue only where the built-in one
 *          has none), less those that refuse the instantiation (a `require` that does not hold: pipeline and
 *          mesh_nhr_2d on unequal groups) or that the predictor cannot price;
 *   hccl   HCCL's rules as the A2 code has them (spec 13.2, 7, 5.5, 9.6), exact thresholds (select_hccl.c);
 *   hccl_guide  HCCL's documented selection (spec 13.1, the user guide's table: select_guide.c);
 *   size   the fixed rule stitch had before the model: all_reduce mesh_oneshot while a rank sends at most
 *          STITCH_ONESHOT_BYTES, ring above; ring (or the first algorithm) elsewhere.
 * The table depends only on (collective, p, groups, link figures, policy), which every rank of a communicator
 * agrees on, so every rank picks the same algorithm for the same call.
 */
#ifndef ST_SELECT_H
#define ST_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"
#include "st_sched.h"
#include "stitch.h"

/* The policies (st_sel_policy, st_sel_policy_name, st_sel_policy_find) are STITCH_SELECT's values: config.h. */

/* Size classes: class 0 is 0 and 1 byte, class k (1 <= k < ST_SEL_CLASSES - 1) is (2^(k-1), 2^k], the last one
 * everything above. The model is asked at each class's top (the last class at 2^ST_SEL_TOP_LOG2). */
#define ST_SEL_CLASSES 42
#define ST_SEL_TOP_LOG2 (ST_SEL_CLASSES - 1)
int st_sel_class(size_t bytes);
void st_sel_class_range(int k, size_t *lo, size_t *hi);

typedef struct st_sel_range {
    size_t lo, hi;       /* bytes [lo, hi], both included */
    const st_algo *algo;
    const char *between; /* the algorithm between servers the policy meant, where `algo` does not say it (a static
                          * name: hccl_guide's level1 inside hier); NULL: algo says it all */
} st_sel_range;

#define ST_SEL_MAX_RANGES 64
typedef struct st_sel_table {
    int n;
    st_sel_range r[ST_SEL_MAX_RANGES];
    int configured; /* HCCL_ALGO's level1 entry that chose (st_hccl_alg), ST_HA_DEFAULT (0): a policy chose */
    char note[224]; /* configured but HCCL's default runs: why ("" when the configured algorithm runs) */
} st_sel_table;

/* Append [lo, hi] -> algo, merged into the last range when it continues it with the same algorithm. -1 when full. */
int st_sel_add(st_sel_table *t, size_t lo, size_t hi, const st_algo *algo);
/* The same with the range's `between`. */
int st_sel_add_between(st_sel_table *t, size_t lo, size_t hi, const st_algo *algo, const char *between);
/* 0 when the ranges start at 0, end at SIZE_MAX, each starts right after the one before, and each names an
 * algorithm; else -1 with the first fault in err ("range 2 [..] starts at X, after 4096: a gap"). */
int st_sel_check(const st_sel_table *t, char *err, size_t errlen);
/* The algorithm of the range holding `bytes` (*range: its index; may be NULL), NULL for an empty table. */
const st_algo *st_sel_lookup(const st_sel_table *t, size_t bytes, int *range);

/* Link figures of the levels (innermost first: level 0 inside a group), as the model reads them: alpha seconds
 * per transfer, beta seconds per byte, gamma seconds per byte reduced. */
typedef struct st_sel_links {
    int nlevels;
    double alpha[ST_TOPO_MAX_LEVELS], beta[ST_TOPO_MAX_LEVELS];
    double gamma;
} st_sel_links;

/* Figures when no topology file gives them: this machine's shared-memory transport as `stitch-perf --calibrate`
 * measured it (select.c says when and where), for every level. */
void st_sel_links_default(st_sel_links *out);
struct st_topology;
/* The topology's figures (levels it has; a level without bandwidth, e.g. an inline layout, keeps the default); NULL:
 * the defaults. */
void st_sel_links_from(const struct st_topology *t, st_sel_links *out);

/* The predictor: the time in seconds algorithm `a` of catalogue `cat` takes on instantiation `in` (p, groups,
 * roles) for calls of bytes[i] bytes (as above), i < n, into t[i]. Returns 0, 1 when the algorithm does not apply
 * there (refused), 2 when not priced at this scale (the model's budget: no candidate either, but the choice when
 * no candidate is priced), -1 when out of memory. The seam between selection and the cost model. */
typedef int (*st_predict_fn)(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                             const st_sel_links *links, const size_t *bytes, int n, double *t);
/* The cost model of core/ (st_model), behind that seam (select_predict.c). */
int st_sel_predict_model(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                         const st_sel_links *links, const size_t *bytes, int n, double *t);

/* What a decision depends on. */
typedef struct st_sel_env {
    const st_reg *reg;
    int p;
    const st_topo *topo;                    /* the groups; NULL: one group of all ranks */
    const int32_t *use[STITCH_COLL_COUNT];  /* HCCL_ALGO's role replacements per collective (st_hccl_use), or NULL */
    unsigned char level1[STITCH_COLL_COUNT]; /* HCCL_ALGO's level1 entry that chooses (st_hccl_configured), or 0 */
    st_sel_links links;
    int policy;                             /* st_sel_policy */
    size_t oneshot_max;                     /* policy size: STITCH_ONESHOT_BYTES */
    int deterministic;                      /* HCCL_DETERMINISTIC=true: policy hccl runs no pipeline */
    int level0_ring;                        /* servers that are not full meshes: HCCL's policies run ring in one */
    st_predict_fn predict;                  /* policy model; NULL: st_sel_predict_model */
    void *ctx;
} st_sel_env;

/* Fill `out` with collective coll's table under env's policy; checked (st_sel_check) before it is returned.
 * STITCH_ERR_UNSUPPORTED when no algorithm of coll can run there, STITCH_ERR_NO_MEMORY, or STITCH_ERR_INTERNAL
 * for a table that fails its check, with why in err. An empty table (n 0) with STITCH_OK: the registry has no
 * algorithm for coll. */
stitch_status_t st_sel_build(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err, size_t errlen);

/* The servers: the level-0 groups (S = 1 without groups), L ranks in the first, equal: all of the same size. */
typedef struct st_sel_shape {
    int S, L, equal;
} st_sel_shape;
st_sel_shape st_sel_shape_of(const st_sel_env *env);

/* The table of a collective HCCL_ALGO's level1 entry chooses for (env->level1[coll], select_conf.c): 1 with its
 * one algorithm for every size (st_hccl_level1_run) in out; 0 where that cannot run, with out empty, out->configured
 * set and why in out->note: st_sel_build then lays HCCL's default (policy hccl) in it. */
int st_sel_build_configured(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out);

/* Policy hccl_guide's table (select_guide.c): HCCL's documented selection (spec 13.1); the same contract. */
stitch_status_t st_sel_build_guide(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err,
                                   size_t errlen);

/* Policy hccl's table (select_hccl.c); the same contract. */
stitch_status_t st_sel_build_hccl(const st_sel_env *env, stitch_coll_t coll, st_sel_table *out, char *err,
                                  size_t errlen);

/* AHC's inner algorithms (select_ahc.c; values st_ahc_inner, config.h). Replace the roles ahc_intra and ahc_inter
 * in `use` (cat->nalgos entries) by pick[0] and pick[1] where not auto; 1 when something was replaced. */
int st_ahc_roles_apply(const st_catalogue *cat, int32_t *use, const int pick[2]);
/* The pair ahc of coll runs on p ranks in topo's groups: want's fixed sides kept, the auto ones the cost model's
 * choice over `base` (the other roles' replacements, or NULL) and the link figures; a side stays auto where nothing
 * can be priced (no ahc of coll, fewer than 2 groups). 0, or -1 when out of memory. */
int st_ahc_choose(const st_catalogue *cat, stitch_coll_t coll, int p, const st_topo *topo, const int32_t *base,
                  const st_sel_links *links, const int want[2], int out[2]);

/* "intra nb (model), inter ring (configured)": the pair `got` st_ahc_choose gave for `want`, and what chose each. */
void st_ahc_text(const int want[2], const int got[2], char *buf, size_t len);

/* "[0, 48 KiB]" style text of a byte count (exact: 49152 is "48 KiB", 49153 is "49153"; SIZE_MAX is "max"). */
void st_sel_fmt_bytes(size_t b, char *out, size_t len);

/* Print coll's table as "  all_reduce        [0, 16 KiB]  mesh_oneshot" lines to f, with a prefix per line. */
#include <stdio.h>
void st_sel_print(FILE *f, const char *prefix, stitch_coll_t coll, const st_sel_table *t);

#endif
