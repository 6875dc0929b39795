/* st_model.h - the alpha-beta-gamma cost model of a schedule on a topology (docs/cost-model.md).
 *
 * Every transfer costs on the lowest topology level that holds both its ends: that level's alpha (latency, s) and
 * beta (s per byte, 1 / bandwidth); a reduce costs gamma (s per byte, 1 / reduce bandwidth) at its receiver. In
 * one step, a rank's transfers on one level share that rank's link of the level: the level costs it
 * alpha + max(bytes out, bytes in) * beta, once, however many peers (Mesh's p-1 transfers are one alpha and p-1
 * units of bytes). Links of different levels work at once, so a rank's step takes the slowest of its levels plus
 * gamma times the bytes it reduces. A step lasts as long as its slowest rank; the collective takes the sum of its
 * steps (they are synchronous: step s+1 starts when every rank has finished step s). Inside a phase on
 * sub-communicators (`phase ... within`) each part (the ranks of one member list) runs its steps on its own and
 * the phase lasts as long as its slowest part, whose steps are the ones reported: AHC's groups of 64 and 128 do
 * not wait for each other step by step, only at the phase's end. Local copies are free; local reduces cost gamma.
 * Empty transfers (zero bytes) cost nothing, as HCCL skips empty slices.
 *
 * The model reads the transfers of each rank in each step and nothing else. Two ways to get them:
 *   exact      instantiate the whole schedule (st_sched_build_ex) and cost every transfer: O(all transfers);
 *   symmetric  for p beyond what a schedule holds: run only the representatives, ranks 0 .. P-1, where P is the
 *              topology's period (1 flat; the size of the outermost groups below "everything" when every level
 *              is uniform, in rank order), and derive everyone else by shifting ranks by multiples of P. That is
 *              exact when the algorithm is shift-symmetric (rank r + kP does what rank r does with every peer
 *              shifted by kP and the same numbers of units); it is checked on sampled ranks, and a mismatch is
 *              an error, never a silent guess. Byte counts are those of the representatives' own units (unit
 *              sizes are balanced floor splits, so a shifted rank's units differ by at most one element each).
 * Either way one function (model_rank_xfers in st_model.c) yields "rank r's transfers in step s"; a faster
 * per-rank plan (issue 12 item 1) can replace the VM behind it without touching the costing.
 */
#ifndef ST_MODEL_H
#define ST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "st_sched.h"

typedef struct st_model_level {
    double alpha; /* seconds per step that uses the level */
    double beta;  /* seconds per byte on the level (1 / bandwidth) */
} st_model_level;

/* The machine: level k is where two ranks whose lowest common group is at level k talk (0: inside a server). A
 * topology with fewer levels than the model uses the model's outermost level for the rest; a model with fewer
 * levels than the topology uses its outermost level for the topology's outer levels. */
typedef struct st_model {
    int nlevels;                                 /* 1 .. ST_TOPO_MAX_LEVELS */
    st_model_level level[ST_TOPO_MAX_LEVELS];    /* innermost first */
    double gamma;                                /* seconds per byte reduced; 0: reductions are free */
} st_model;

/* A flat machine: one level. */
static inline st_model st_model_flat(double alpha, double beta, double gamma)
{
    st_model m = {.nlevels = 1, .gamma = gamma};
    m.level[0].alpha = alpha, m.level[0].beta = beta;
    return m;
}

struct st_topofile;
/* From a topology file (st_topofile.h): level k's latency and 1 / bandwidth, gamma = 1 / reduce_bandwidth (0 when
 * the file gives none). Returns 0, or -1 when tf has no levels. */
int st_model_from_topofile(const struct st_topofile *tf, st_model *m);

enum { ST_MODEL_AUTO, ST_MODEL_EXACT, ST_MODEL_SYMMETRIC, ST_MODEL_CLASSES };

/* ST_MODEL_CLASSES (issue 22 item 7): for layouts whose inner levels are uniform (servers of 8) and outer ones are
 * not (super-pods of 40,000 and 60,000 ranks). P is the period of the uniform levels (1 when even the servers
 * differ); the algorithm must be shift-symmetric with that period (checked on sampled ranks of every unequal group,
 * as the symmetric way checks its samples). Ranks then differ only in where their peers sit: for a send of
 * representative q at offset d, the level of the pair (q + kP, q + kP + d) changes with k only where an end crosses
 * the boundary of an unequal group or wraps around p. Each step's boundaries cut the copies k = 0 .. p/P - 1 into
 * intervals in which every class of ranks sees the same levels; the step is costed once per interval, on ranks
 * kP .. kP + P - 1 of its first k: time and memory O(steps x sends x unequal groups), not O(p^2), and exact. Which
 * levels the sends use where does not depend on the size: it is planned once per evaluation (each send's cell at
 * copy 0 and its moves where a level changes; steps with the same sends share the plan) and every size only sums
 * bytes and sweeps the moves.
 * AUTO takes it above exact_max where the levels are not all uniform. Phases on sub-communicators (hier's, AHC's)
 * have no classes yet: such an algorithm falls back to every rank, when that fits ST_MODEL_MAX_BYTES. */
#define ST_MODEL_MAX_BYTES (3.0 * (1 << 30)) /* the exact model refuses, with its estimate, beyond this */
#define ST_MODEL_MAX_INSNS 8e9 /* and beyond this many VM instructions (rank 0's times p): about half a minute */

#define ST_MODEL_EXACT_MAX 1024 /* AUTO evaluates every rank up to this p, the representatives above it (and every
                                 * rank again, up to ST_MODEL_EXACT_RANKS, when the algorithm is not shift-symmetric) */
#define ST_MODEL_MAX_RANKS (1 << 24)
#define ST_MODEL_EXACT_RANKS (1 << 20) /* the exact way runs every rank's program up to this p (a schedule holds
                                     * ST_MAX_RANKS), bounded in memory by its estimate against ST_MODEL_MAX_BYTES */

typedef struct st_model_opts {
    int method;       /* ST_MODEL_AUTO (0), ST_MODEL_EXACT, ST_MODEL_SYMMETRIC or ST_MODEL_CLASSES */
    int elem_size;    /* bytes per element (units are split in whole elements); 0: 1 */
    int per_rank;     /* also fill st_model_result.rank_time (exact only, nsteps * p doubles) */
    int exact_max;    /* ST_MODEL_AUTO: every rank up to this p, the symmetric way above it (falling back to every
                       * rank when the algorithm is not shift-symmetric); 0: ST_MODEL_EXACT_MAX. 1 makes AUTO as
                       * fast as it can be: a ring of 1024 ranks then costs one rank's transfers, not 2 million */
    int fallback_max; /* ST_MODEL_AUTO: the most ranks the every-rank fallback (no symmetry, or no classes) may run;
                       * above it the model refuses ("not priced at this scale", err->refused = 3) instead of
                       * costing every rank. 0: ST_MODEL_EXACT_RANKS. Selection sets it so that no candidate takes minutes */
    int64_t max_xfers; /* the most transfers the representatives (symmetric, classes) may send together, and when
                        * set (not 0) every rank's of the exact way too; beyond it the model stops their programs
                        * and refuses ("not priced at this scale", err->refused = 3). 0: ST_MODEL_MAX_XFERS for
                        * the representatives, what fits ST_MODEL_MAX_BYTES, and the exact way's own estimate.
                        * Selection sets less, so that a candidate of millions of transfers (ring or mesh at
                        * 1,000 ranks and beyond) is not priced rather than taking seconds */
} st_model_opts;

/* The representatives' transfers the symmetric and class-based ways hold at most by default: about 80 bytes each
 * (the log, its runs and the costing's index), within ST_MODEL_MAX_BYTES. */
#define ST_MODEL_MAX_XFERS ((int64_t)(ST_MODEL_MAX_BYTES / 80))

/* One step: its time and what set it (the slowest rank, the level and bytes of its slowest link). */
typedef struct st_model_step {
    double time;     /* seconds */
    int rank;        /* the slowest rank (-1: the step moves nothing) */
    int level;       /* its slowest level (-1: none, only reductions or nothing) */
    double bytes;    /* bytes on that level: max(out, in) */
    double reduced;  /* bytes the slowest rank reduces */
    int64_t nxfers;  /* transfers in the step (symmetric: counted over all ranks) */
} st_model_step;

typedef struct st_model_result {
    double time;          /* seconds: the sum of the steps */
    int p, nsteps;
    st_model_step *steps; /* nsteps */
    double *rank_time;    /* opts.per_rank: rank r's time in step s at [s * p + r]; else NULL */
    int method;           /* ST_MODEL_EXACT, ST_MODEL_SYMMETRIC or ST_MODEL_CLASSES, as it was run */
    int period;           /* symmetric and classes: P, the representatives 0 .. P-1 */
    int64_t intervals;    /* classes: the intervals costed over all steps (0 otherwise) */
    int64_t nxfers;       /* transfers costed (symmetric: of the representatives) */
} st_model_result;

/* Predict `algo` of `cat` instantiated as `in` (p, root, topology, use, split) moving `bytes` bytes: the
 * collective's whole vector as HCCL's cost tables count n (all_reduce, broadcast and reduce: the vector;
 * reduce_scatter and scatter: the input of p blocks; all_gather and gather: the output; all_to_all: one rank's
 * send buffer of p blocks). Returns 0, or -1 with the reason in err (an instantiation error keeps its .dsl line;
 * err->refused when a `require` refused). Free the result with st_model_result_free. */
int st_model_predict(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m,
                     double bytes, const st_model_opts *opts, st_model_result *out, st_err *err);

/* The same for several sizes at once: the ranks' programs run once, each size is costed (out[i] for bytes[i],
 * nsizes of them; on failure none is left to free). A selection table over many sizes should use this. */
int st_model_predict_n(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const st_model *m,
                       const double *bytes, int nsizes, const st_model_opts *opts, st_model_result *out,
                       st_err *err);

/* The same on a schedule already built, `t` the topology it was built for (NULL: flat). A schedule does not keep its
 * phases, so here every step is global (lockstep over all ranks, phases on sub-communicators included). */
int st_model_sched(const st_sched *s, const st_topo *t, const st_model *m, double bytes, const st_model_opts *opts,
                   st_model_result *out, st_err *err);

void st_model_result_free(st_model_result *r);

/* Bytes of one block of the collective's vector for `bytes` as st_model_predict counts them. */
double st_model_block_bytes(int coll, int p, double bytes);

/* nccl-tests' bus bandwidth factor: busbw = algbw * factor (all_reduce 2(p-1)/p; reduce_scatter, all_gather,
 * all_to_all (p-1)/p; broadcast, reduce, scatter, gather 1). */
double st_model_busbw_factor(int coll, int p);

/* The level (0 innermost) of the lowest group of t holding both a and b; 0 for a == b or a NULL t. */
int st_model_level_of(const st_topo *t, int a, int b);

#endif
