/* st_sched.h - a step table instantiated for p ranks: the schedule, and each rank's plan.
 *
 * st_sched_build runs the table's code once per rank (core/st_vm.c) and gathers every rank's transfers into one
 * schedule: steps, each a list of transfers (src, dst, unit runs, copy or reduce). Only senders are written in the
 * DSL; a rank's receives are the transfers whose dst it is, so sends and receives match by construction. The
 * verifier (dsl/verify.c) checks the schedule; the executors (runtime/exec.c, exec_msg.c) run a rank's plan.
 * A schedule depends on (algorithm, p) only, never on the message size, so communicators cache it.
 *
 * Units map to elements by st_unit_span: the collective's vector is `nblocks` blocks of `n` elements (one block
 * for all_reduce; p blocks for reduce_scatter and all_gather, block b being rank b's output or input), and the U
 * units are spread evenly over the blocks, U/nblocks per block, each a balanced floor split of its block.
 */
#ifndef ST_SCHED_H
#define ST_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "st_inst.h"
#include "st_steptab.h"

typedef struct st_run {
    int32_t start, len; /* units [start, start + len) */
} st_run;

typedef struct st_xfer {
    int32_t step;
    int32_t src, dst;   /* dst == src is a local copy or reduce */
    int32_t op;         /* st_xop: 0 copy, 1 reduce */
    int32_t run0;       /* first run in st_sched.runs: the units read at src */
    int32_t nruns;
    int32_t nunits;
    int32_t drun0;      /* the units written at dst, matched in order with the source units; the same runs as */
    int32_t dnruns;     /* the source's (drun0 == run0) unless the send said `at` */
    int32_t line, col;  /* .dsl line and column of the send statement (col 0: unknown) */
} st_xfer;

typedef struct st_sched {
    const st_catalogue *cat;
    const st_algo *algo;
    int p, nunits, nsteps;
    int nscratch;       /* scratch units, numbered nunits .. nunits + nscratch - 1 */
    int root;
    st_xfer *xfers;     /* ordered by (step, src, order of emission) */
    int nxfers;
    int32_t *step_first; /* nsteps + 1 entries: step s holds xfers [step_first[s], step_first[s+1]) */
    st_run *runs;
    int nruns;
    int partial, rank;  /* partial: only rank `rank`'s transfers, its sends and its receives (st_sched_build_rank) */
} st_sched;

/* Spec 12.3's built-in split formula (HCCL's CalcParallelDataSplitRatio) for collective `coll` on S groups of L
 * ranks, returned as R in 12.4's meaning, in millionths. HCCL's port counts become bandwidths: P_in = bw_in *
 * (L - 1) (the level-0 links a Mesh step uses at once), P_out = bw_out (one inter-group link per rank). Time
 * coefficients: reduce_scatter, all_reduce and reduce T_mesh = 21(L-1)/(20 L P_in); broadcast (scatter type)
 * (L-1)/(L P_in); all_gather (L-1)/P_in; T_clos = (S-1)/(S P_out), all_gather (S-1)/P_out. ratio = T_clos /
 * (T_clos + T_mesh), all_gather min(ratio, 0.5), quantized to the nearest eighth in 1/8 .. 7/8. For all_gather
 * the ratio is the Mesh-first share, so R = 1 - ratio (12.3's last line). A missing input (L or S below 2, a
 * bandwidth not positive or not finite) gives the fallback 0.5. */
int32_t st_split_formula_ppm(int coll, int L, int S, double bw_in, double bw_out);

/* Instantiate `algo` of `cat` for p ranks (1 <= p <= ST_MAX_RANKS). Checks what the runtime relies on for
 * memory safety: every peer in 0..p-1, every unit in 0..U-1, U divisible by the collective's block count, every
 * rank with the same number of steps. On failure returns -1 and explains in `err` (line, p, rank). */
#define ST_MAX_RANKS 65536
int st_sched_build(const st_catalogue *cat, const st_algo *algo, int p, st_sched *out, st_err *err);
int st_sched_build_ex(const st_catalogue *cat, const st_algo *algo, const st_inst *in, st_sched *out, st_err *err);

/* One rank's part of the schedule without the other ranks' plans: rank's sends and its receives, in schedule order,
 * with the whole schedule's p, nunits, nscratch and nsteps; st_plan_build(out, rank) gives its plan as from the
 * whole schedule. The transfers of rank r of p, step by step: out->xfers[out->step_first[s] ..
 * out->step_first[s + 1]) holds step s's, those with src == r its sends, dst == r its receives.
 *
 * How: rank's own run gives its sends and, through its bodies' `from` statements, the ranks that may send to it;
 * each of those is run for rank's receives only (st_vm_sink.only_to), so the work is O(rank's own transfers plus
 * the named senders' steps), not O(every rank's transfers). *nruns counts the ranks run (rank's own included).
 * The verifier proves, for every instantiation it checks, that the result equals the whole schedule's part for
 * every rank (dsl/verify.c); elsewhere it rests on the algorithm's `from` being right.
 *
 * Returns 0; 1 when this instantiation has no fast path (a body that sends without `from`, a phase on a
 * sub-communicator or a split: their steps are placed by the longest rank's, which needs every rank): use
 * st_sched_build_ex; -1 on an error, explained in err. */
int st_sched_build_rank(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int rank, st_sched *out,
                        int *nruns, st_err *err);

/* Every rank's senders as its `from` statements name them, recorded by a whole build (st_sched_build_senders):
 * rank x's are the inclusive ranges from[first[x] .. first[x + 1]); scratch[x] is the scratch x declared. slow: the
 * instantiation has no fast path (a body sends without `from`, or a phase on a sub-communicator or a split). */
typedef struct st_rank_range {
    int64_t lo, hi;
} st_rank_range;

typedef struct st_senders {
    int slow;
    int32_t *first;
    st_rank_range *from;
    int64_t *scratch;
} st_senders;

/* st_sched_build_ex, also filling *snd (free it with st_senders_free, also after a failure). */
int st_sched_build_senders(const st_catalogue *cat, const st_algo *algo, const st_inst *in, st_sched *out,
                           st_senders *snd, st_err *err);
void st_senders_free(st_senders *snd);

/* Only rank's own run: the ranks its `from` statements name as its possible senders (sorted, without repeats and
 * without rank; *from is malloc'ed) and its scratch units. Returns 0, 1 (no fast path) or -1, as above. The
 * verifier checks with it that every rank's senders cover the whole schedule's, which, with the sender runs
 * being the same machine filtered by destination, is what makes the fast plan equal. */
int st_sched_senders(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int rank, int32_t **from,
                     int *nfrom, int64_t *nscratch, st_err *err);

/* Memory a schedule holds: its transfers, runs and step index, in bytes. */
size_t st_sched_bytes(const st_sched *s);

/* Fill `t` (whose arrays must hold p, p, p and ngroups + 1 entries) with ngroups groups of consecutive ranks of the
 * given sizes: two levels, the groups and everything. Returns -1 when the sizes do not add up to p or a size is < 1. */
int st_topo_uniform(st_topo *t, int p, int ngroups, const int *sizes, int32_t *first, int32_t *members,
                    int32_t *group_of, int32_t *index_of);
/* Fill `t` (arrays as for st_topo_uniform, `first` with room for p + 1) with one group per distinct key[r], e.g.
 * the ranks' host ids: groups ordered by their lowest rank, members in rank order, so a group's ranks need not be
 * consecutive (hosts A B A B A give {0, 2, 4}, {1, 3}); two levels, as st_topo_uniform. Returns the number of
 * groups, -1 when out of memory. */
int st_topo_by_key(st_topo *t, int p, const uint64_t *key, int32_t *first, int32_t *members, int32_t *group_of,
                   int32_t *index_of);
void st_sched_free(st_sched *s);


/* Elements [*off, *off + *len) of the vector that unit u covers, for blocks of n elements. (Scratch units are not
 * in the vector: each is a slot as large as the largest unit, in a per-rank scratch area.) */
void st_unit_span(int nunits, int nblocks, size_t n, int u, size_t *off, size_t *len);

/* One rank's view of a schedule, for the executor. */
typedef struct st_plan {
    int rank, nsteps;
    int32_t *recv_first; /* nsteps + 1: transfers into me at step s are recvs[recv_first[s] .. recv_first[s+1]) */
    int32_t *recvs;      /* indices into st_sched.xfers, in schedule order (deterministic reduction order) */
    int32_t *send_first; /* nsteps + 1, likewise for the transfers I am the source of */
    int32_t *sends;
} st_plan;

int st_plan_build(const st_sched *s, int rank, st_plan *out); /* 0, or -1 when out of memory */

/* Does the transfer write other units than it reads (`at`)? */
static inline int st_xfer_mapped(const st_xfer *x)
{
    return x->drun0 != x->run0;
}

/* Does x write into its destination's units? A copy onto itself without `at` writes nothing: it is skipped. */
static inline int st_xfer_writes(const st_xfer *x)
{
    return x->src != x->dst || st_xfer_mapped(x);
}
void st_plan_free(st_plan *pl);

/* ---- what the executors rely on, checked once per rank before a plan runs ----------------------------------
 * The runtime (call.c, when a schedule enters a communicator's cache) and the verifier (dsl/verify.c, for every
 * rank of every instantiation) call the same check, so `stitchc verify` rejects exactly the schedules the runtime
 * would refuse, with the same words. */

/* Where rank x keeps block b of the collective's vector, whatever the call's buffers (call.c's layout table):
 * in its caller's input (read-only: never received into), its output, a runtime scratch, or nowhere (an
 * all_to_all rank keeps only its own row, in sendbuf, and its own column, in recvbuf). Scratch units
 * (`units U scratch S`) always have storage. */
enum { ST_B_NONE, ST_B_INPUT, ST_B_OUTPUT, ST_B_SCRATCH };
int st_block_class(int coll, int p, int root, int x, int b);

/* Check one rank's part of schedule s: `sends` and `recvs` are the indices (into s->xfers, in schedule order) of
 * the transfers it is the source of and the destination of (a local transfer is in both). Refused: a local
 * reduce of units into themselves (no `at`); scratch units in an all_to_all_v; receiving into a block kept only
 * in the caller's input or kept nowhere, or sending a block kept nowhere; within a step, sending a unit that the
 * same step writes (the executors read a sender's unit while its receives are applied, not a snapshot).
 * `marks` holds nunits + nscratch zeroed bytes and is left zeroed. Sets *needs_scratch (may be NULL) when the
 * rank receives into a block kept in scratch. Returns 0, or -1 with the reason in err (line and column of the
 * send). */
int st_rank_check(const st_sched *s, int rank, const int32_t *sends, int nsends, const int32_t *recvs, int nrecvs,
                  unsigned char *marks, int *needs_scratch, st_err *err);

#endif
