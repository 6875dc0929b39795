/* verify.h - proving a catalogue's algorithms correct for every rank count in a range.
 *
 * For each (algorithm, collective) and each p, the schedule is instantiated exactly as the runtime does it
 * (st_sched_build) and executed abstractly: every unit of every rank carries the set of ranks whose contribution
 * it holds. Checked: the collective's postcondition on every rank; no contribution reduced twice into a unit;
 * a rank only sends units it holds; within a step no rank reads (sends) a unit that it also writes (receives),
 * and no unit receives two copies; peers and units in range; the same step count on every rank. Sends and
 * receives match by construction (receives are derived from sends), and the executor's step protocol cannot
 * deadlock on a schedule whose ranks agree on the step count. Rooted collectives are tried with every root up to
 * p = ST_VERIFY_ALL_ROOTS and a sample above (roots 0..3, p/2, p-2, p-1 up to p = 64, then 0, 1, p/2, p-1),
 * whether or not the body reads `root`;
 * topology-aware ones with every even grouping S x L up to p = 64 and a sample above, and then over a sweep of
 * layouts, unequal ones included (st_verify_opts.sweep). Composites (a phase `within` a sub-communicator) cost far
 * more per instantiation: unless the sweep is long they get a sample of roots, of p above 32 and of layouts. A `require` that does not hold refuses an instantiation:
 * it is skipped and counted, and an algorithm refused by every instantiation of a sweep fails (nothing was proved).
 * For algorithms that name their senders (`from`), every rank's senders must cover the ranks that send to it, so
 * that its own plan (st_sched_build_rank) equals its part of the whole schedule; a few ranks' own plans are also
 * built and compared transfer by transfer (verify.c: fast_check). A missing sender is an error at the send.
 * Given layouts (`--layout`, `--topo`) replace the range: every algorithm is verified for their p, the
 * topology-aware ones on exactly those layouts, and a refusal there is a note, not a failure. The runtime's loader
 * gives one communicator's exact topology instead (st_verify_opts.exact_p), with its members as they are.
 */
#ifndef ST_VERIFY_H
#define ST_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "st_steptab.h"
#include "st_topo.h"

#define ST_VERIFY_ALL_ROOTS 32 /* every root is tried up to this p */
#define ST_VERIFY_ALL_ROOTS_COMPOSITE 8 /* the same for composites (phases on sub-communicators) but under --sweep long */

/* Layout sweeps for topology-aware algorithms, after the range's uniform groupings:
 *   default: one level of 1..8 ranks; every two-level layout of 1..3 groups of 1..8 ranks (584); three levels,
 *            1..2 pods of 1..2 servers of 1..3 ranks (156)
 *   long:    two levels with 1..4 groups of 1..8 (4680); three levels, 1..2 pods of 1..3 servers of 1..4 (7140)
 *   none:    the uniform groupings only */
enum { ST_SWEEP_DEFAULT, ST_SWEEP_NONE, ST_SWEEP_LONG };

typedef struct st_verify_opts {
    const char *algo; /* NULL: every algorithm */
    int coll;         /* -1: every collective */
    int pmin, pmax;
    int verbose;      /* print one line per (algorithm, collective) even on success */
    int sweep;        /* ST_SWEEP_*: layouts for topology-aware algorithms (0: the default sweep) */
    const st_layout *layouts; /* when set, these layouts (with their own p) replace the range and the sweep */
    const char *const *layout_names; /* how each is called in messages (e.g. the topology file), or NULL */
    int nlayouts;
    const int32_t *use; /* st_inst.use: roles replaced in every instantiation (NULL: none) */
    int split_set;      /* algorithms that read the 2D split ratio get split_ppm only; else R = 0.5 everywhere */
    int32_t split_ppm;  /* and a few more R (0, 0.3, 0.375, 1) up to p = ST_VERIFY_SPLIT_SWEEP_P */
    int exact_p;        /* > 0: instead of the range, the sweep and the layouts, exactly one communicator's shape:
                         * p = exact_p on exact_topo (NULL: one group), every root; a refusal is a note, as with
                         * given layouts (the runtime's loader, runtime/catalogue.c) */
    const st_topo *exact_topo;
    int all_roots;      /* every root of every p, not the sample above p = ST_VERIFY_ALL_ROOTS (`--all-roots`) */
    /* When set, called before each p of the range (p > 0) and before a pair's layout sweep (p = 0) with the pair's
     * number (1..) among those selected; `stitchc verify` draws a progress line on a terminal with it. Nothing is
     * printed by st_verify itself. */
    void (*progress)(void *ctx, const char *algo, int coll, int pair, int p, int pmin, int pmax);
    void *progress_ctx;
} st_verify_opts;

#define ST_VERIFY_SPLIT_SWEEP_P 16

/* Returns the number of (algorithm, collective) pairs that failed (0 = all verified), or -1 when the selection
 * matches nothing. For each failure prints the smallest counterexample (lowest p, first step) to `out` as
 * `FILE:LINE: error: ...`; on success prints one summary line per pair. */
int st_verify(const st_catalogue *cat, const st_verify_opts *o, FILE *out);

/* The holdings view (`stitchc show --format holdings`): the verifier's abstract execution of one schedule, printed
 * as what every unit of every rank holds before the first step and after each step, one line per rank:
 *   step 1  r0: u0={0..2} u1={0,1} u2={0}
 * `u0..2={0}` merges consecutive units that hold the same; `u7=u2{1}` is a unit holding unit 2's data (scratch
 * units and `at`); `-` is a rank that holds nothing. Ends with `# the postcondition holds` or `# error at
 * FILE:LINE[:COL]: ...` (the verifier's message; the state is printed up to the failing step). Returns 0, or -1
 * when out of memory. */
/* What an emitted catalogue proves at run time. `stitchc emit` records the range it verified (st_catalogue's
 * verified_pmin..verified_pmax, by the default options above); st_verify_covers says whether that verification
 * instantiated exactly `in` (the same p, root, groups, roles and split ratio) for algorithm ai of cat: 1 yes, 0 no
 * (no record, p outside it, a root or a layout it did not sample). The runtime proves whatever is not covered
 * with st_verify_inst before it runs it: 0 verified, 1 a `require` refuses it, -1 wrong, with the verifier's
 * `FILE:LINE[:COL]: error: ...` line in err. */
struct st_inst;
int st_verify_covers(const st_catalogue *cat, int ai, const struct st_inst *in);
int st_verify_inst(const st_catalogue *cat, int ai, const struct st_inst *in, char *err, size_t errlen);

struct st_sched;
int st_verify_holdings(const struct st_sched *s, FILE *out);

#endif
