/* st_vm.h - the step-table stack machine: runs one rank's program and reports what it emits.
 *
 * The machine knows nothing of schedules: it calls the sink for `units`, each `step` and each `send`, and the
 * sink (core/st_sched.c) assembles them. Every run is bounded: a fuel budget of instructions, a value stack, a
 * call depth and a frame size; any excess, and every arithmetic error, stops the run with a message that names
 * the .dsl line.
 *
 * A phase on a sub-communicator runs the called algorithm in a context of its own (p = the members, r = my
 * place among them, its units standing for pieces of the caller's); the machine maps every transfer of that
 * context back to the caller's ranks and units before the sink sees it, so the sink only ever sees ranks and
 * units of the whole instantiation.
 *
 * For one rank's plan without the others' (core/st_plan.c) the machine also reports each body's `from` (the ranks
 * that may send to me, mapped to ranks of the whole instantiation like a send's peer) and can run a sender for one
 * receiver only (st_vm_sink.only_to), skipping the units of its other sends.
 */
#ifndef ST_VM_H
#define ST_VM_H

#include <stdint.h>

#include "st_inst.h"
#include "st_steptab.h"

/* What a keyed region's result depends on besides the instantiation (st_steptab.h: SUB_PIECES, MEMO): the region
 * (the pc of its opening instruction), the units of the context, and the values of its key slots. */
typedef struct st_vm_key {
    int32_t pc, n;   /* pc -1: none (a free table entry, no region pending) */
    int64_t nunits, v[ST_KEY_SLOTS];
} st_vm_key;

/* The unit pieces of a SUB_PIECES region as the first rank built them with its key, for `nmembers` members. */
typedef struct st_vm_pieces {
    st_vm_key key;
    int32_t nmembers;
    int npieces, nruns;
    int32_t *pfirst; /* npieces + 1 */
    int64_t *plo, *phi;
} st_vm_pieces;

/* A MEMO region's value as the first rank computed it with its key. */
typedef struct st_vm_memo {
    st_vm_key key;
    int64_t value;
} st_vm_memo;

#define ST_VM_MEMOS (1 << 14) /* the most entries of a cache's table of MEMO values (it starts at 64 and doubles when
                               * 3/4 full); at 3/4 of this no more are kept */
#define ST_VM_MAX_PIECES 256 /* pieces a cache keeps (phases times keys); the rest are built by every rank */
#define ST_VM_MAX_PIECE_RUNS (1 << 22) /* and their runs in all (64 MB) */

/* What a rank's run may share with the other ranks of one instantiation: a layout table of a rank-free function
 * (ST_FUNC_RANK_FREE), and the results of keyed regions (a phase's pieces, a MEMO's value) by key. Start from
 * ST_VM_CACHE_INIT; st_vm_cache_free. */
typedef struct st_vm_cache {
    int64_t *tab; /* owned by the cache's owner, who frees it */
    int32_t fn;
    int64_t n;
    st_vm_pieces *pieces;
    int npieces;
    int64_t nruns;  /* the pieces' runs in all */
    st_vm_memo *memos; /* capmemos entries (a power of two), open addressing; NULL until the first is kept */
    int nmemos, capmemos;
    int64_t insns; /* instructions the runs with this cache have taken so far (a layout's table not counted) */
} st_vm_cache;

#define ST_VM_CACHE_INIT {NULL, -1, 0, NULL, 0, 0, NULL, 0, 0, 0}
void st_vm_cache_free(st_vm_cache *c);

typedef struct st_vm_sink {
    void *ctx;
    st_vm_cache *cache; /* may be NULL */
    /* Each returns 0 to go on, or -1 after writing a message into err to stop the run. */
    int (*step)(void *ctx, int line, st_err *err);
    /* The transfer's units as inclusive ranges [lo[i], hi[i]], unsorted, possibly overlapping: ranges
     * 0..nsrc-1 are the source units, nsrc..nranges-1 the destination units (none: the same units). */
    int (*send)(void *ctx, int64_t dst, int op, const int64_t *lo, const int64_t *hi, int nsrc, int nranges,
                int line, int col, st_err *err);
    /* A phase on a sub-communicator (`phase ... within`) begins (begin = 1) or ends (begin = 0). At its beginning,
     * `members` are its ranks as ranks of the whole instantiation, in member order (n of them), or n = 0 when
     * this rank sits it out. May be NULL when the sink does not care. */
    int (*within)(void *ctx, int begin, const int32_t *members, int n, int line, st_err *err);
    /* A split's lanes: what 0 a split begins, 1 a lane begins, 2 it ends, 3 the split ends (ST_OP_LANE). A lane's
     * steps start over at the split's first step; the split lasts as long as its longest lane. May be NULL only
     * for a sink that does not count steps. */
    int (*lane)(void *ctx, int what, int line, st_err *err);
    /* `from RANKS` ran: n inclusive ranges [lo[i], hi[i]] of ranks of the whole instantiation hold every rank that
     * sends to me in the algorithm body that said it. n = -1 (lo, hi NULL): a body that sends but says no `from`
     * began, so my senders are unknown. May be NULL. */
    int (*from)(void *ctx, const int64_t *lo, const int64_t *hi, int n, int line, st_err *err);
    /* Rank + 1 of the one destination this run is for (0: every send): a sender's run for one receiver's plan
     * skips its sends to other ranks without building their units (ST_OP_DST). */
    int64_t only_to;
} st_vm_sink;

#define ST_VM_FUEL (1L << 28) /* instructions per rank and run */
#define ST_VM_UNIT_FUEL (1L << 12) /* and per unit of a layout's table, which has a budget of its own */

/* Run algo's body for rank r of the instantiation `in`. On success returns 0 and stores the declared unit count
 * in *nunits (0 when the program declared none) and the scratch units in *nscratch. On failure returns -1 with
 * the reason in err. */
int st_vm_run(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int r, const st_vm_sink *sink,
              int64_t *nunits, int64_t *nscratch, st_err *err);

/* Function f (one parameter) of cat at x, in the context of the instantiation `in` (its p; rank 0), evaluated by
 * the machine itself, never by the function's native C (st_func.native): the reference that the emitted C is
 * checked against (tests/compiler/emit_check.c). Returns 0, or -1 with a message in err. */
int st_vm_eval(const st_catalogue *cat, int32_t f, const st_inst *in, int64_t x, int64_t *out, st_err *err);

#endif
