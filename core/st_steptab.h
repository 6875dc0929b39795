/* st_steptab.h - the step-table format: the contract between the compiler (stitchc) and the runtime (libstitch).
 *
 * A catalogue is what `stitchc emit` writes as static const C data: one code array shared by every algorithm of
 * a .dsl file, a constant pool, the functions (`fn`) and one descriptor per (algorithm, collective). The code is
 * a small stack machine. Running it for one rank r of p ranks (core/st_sched.c) emits that rank's transfers,
 * step by step; running it for every rank gives the whole schedule, which both the verifier and the executor use,
 * so what is verified is exactly what runs. An algorithm that names its senders (`from`, ST_OP_FROM) also lets one
 * rank run only itself and those senders (st_sched_build_rank), which the verifier proves equal.
 *
 * Why bytecode and not a flat list of transfers: algorithms are parametric in p (and later in the topology), so
 * a table written for one p would not do. Expressions are kept, compiled; the instantiation evaluates them.
 * Every instruction carries its source line, so an evaluation error (division by zero, a runaway loop) names the
 * line of algos.dsl it came from; a SEND also carries its column, so the verifier can point at the very send.
 */
#ifndef ST_STEPTAB_H
#define ST_STEPTAB_H

#include <stdint.h>

#define ST_TABLE_VERSION 13

/* Collectives. The names are those of the DSL (`implements all_reduce`) and of the tools. */
#define ST_COLLECTIVES(X)                                                                                      \
    X(ALL_REDUCE, "all_reduce")                                                                                \
    X(REDUCE_SCATTER, "reduce_scatter")                                                                        \
    X(ALL_GATHER, "all_gather")                                                                                \
    X(BROADCAST, "broadcast")                                                                                  \
    X(REDUCE, "reduce")                                                                                        \
    X(SCATTER, "scatter")                                                                                      \
    X(GATHER, "gather")                                                                                        \
    X(ALL_TO_ALL, "all_to_all")                                                                                \
    X(ALL_TO_ALL_V, "all_to_all_v")

typedef enum st_coll {
#define ST_COLL_ENUM(id, name) ST_COLL_##id,
    ST_COLLECTIVES(ST_COLL_ENUM)
#undef ST_COLL_ENUM
    ST_COLL_COUNT
} st_coll;

/* What a transfer does at its destination. */
typedef enum st_xop { ST_X_COPY = 0, ST_X_REDUCE = 1 } st_xop;

/* Opcodes. Stack effects in brackets; `a` is the instruction's operand. Values are int64. */
typedef enum st_opcode {
    ST_OP_HALT,      /* end of the program (the entry algorithm returns here) */
    ST_OP_PUSH,      /* [-- a]            small immediate */
    ST_OP_CONST,     /* [-- k[a]]         constant pool entry */
    ST_OP_LOAD,      /* [-- slot[a]]      frame slot of the current function */
    ST_OP_STORE,     /* [v --]            slot[a] = v */
    ST_OP_LOADA,     /* [-- aslot[a]]     slot of the enclosing algorithm body's frame (a `fn` reading a `let`) */
    ST_OP_P,         /* [-- p]            ranks of the current context */
    ST_OP_R,         /* [-- r]            my rank in the current context */
    ST_OP_U,         /* [-- U]            units (error if `units` has not run yet) */
    ST_OP_ROOT,      /* [-- root]         the root of a rooted collective (0 for the others) */
    /* topology queries over the groups of the instantiation (one group of all ranks when none is given); the
     * plain forms ask level 0 (servers), the _AT forms level k, popped last (core/st_sched.h: st_topo) */
    ST_OP_GROUPS,    /* [-- G]            number of groups */
    ST_OP_GROUP,     /* [x -- g]          group of rank x */
    ST_OP_INDEX,     /* [x -- i]          index of rank x in its group */
    ST_OP_SIZE,      /* [g -- n]          members (ranks) of group g */
    ST_OP_MEMBER,    /* [g i -- x]        rank at index i of group g */
    ST_OP_LEVELS,    /* [-- L]            number of levels (1 without a topology) */
    ST_OP_GROUPS_AT, /* [k -- G] */
    ST_OP_GROUP_AT,  /* [x k -- g] */
    ST_OP_INDEX_AT,  /* [x k -- i] */
    ST_OP_SIZE_AT,   /* [g k -- n] */
    ST_OP_MEMBER_AT, /* [g i k -- x] */
    ST_OP_UNIFORM,   /* [-- b]            1 when every group has the same number of ranks */
    ST_OP_UNIFORM_AT, /* [k -- b] */
    ST_OP_DUP,       /* [v -- v v] */
    ST_OP_POP,       /* [v --] */
    /* binary [a b -- a op b]; DIV floors toward -inf, MOD is in [0, |b|); errors on b == 0, shifts outside 0..62 */
    ST_OP_ADD, ST_OP_SUB, ST_OP_MUL, ST_OP_DIV, ST_OP_MOD, ST_OP_SHL, ST_OP_SHR,
    ST_OP_BAND, ST_OP_BOR, ST_OP_BXOR,
    ST_OP_LT, ST_OP_LE, ST_OP_GT, ST_OP_GE, ST_OP_EQ, ST_OP_NE,
    ST_OP_MIN, ST_OP_MAX, ST_OP_GCD, ST_OP_LCM,
    /* unary [a -- op a] */
    ST_OP_NEG, ST_OP_BNOT, ST_OP_NOT,
    ST_OP_FLOOR_LOG2, /* error on a <= 0 */
    ST_OP_CEIL_LOG2,  /* HCCL's: right shifts of a-1 until zero; 0 for a <= 1 */
    ST_OP_POW2,       /* error outside 0..62 */
    ST_OP_JMP,       /* pc = a */
    ST_OP_JZ,        /* [c --] if c == 0: pc = a */
    ST_OP_CALL,      /* [args -- result] call function a (st_func), which returns with RET 1 */
    ST_OP_RET,       /* back to the caller; a = 1: [result -- result] (fn), a = 0: [--] (algorithm body) */
    ST_OP_UNITS,     /* [U --] declare the unit count; once per context; U in 1..ST_MAX_UNITS */
    ST_OP_SCRATCH,   /* [S --] declare S scratch units, numbered U .. U+S-1: per-rank space outside the vector,
                      * each as large as the largest unit (the largest declaration of a run wins) */
    ST_OP_STEP,      /* begin the next step */
    ST_OP_SET_ADD,   /* [u --] add unit u to the transfer set being built */
    ST_OP_SET_RANGE, /* [lo hi --] add units lo..hi (inclusive; empty when hi < lo) */
    ST_OP_SET_ALL,   /* add every unit 0..U-1 */
    ST_OP_SET_AT,    /* the units added from here on are the destination set (`at`), matched in order */
    ST_OP_SEND,      /* [dst --] emit a transfer of the set to dst; a & 1: reduce (else copy); a & 2: it has a
                      * destination set; clear both sets */
    ST_OP_LAYOUT,    /* from here to the end of the current algorithm body (phases included), every unit u of a
                      * send is sent as unit f(u), f = function a (-1: none); a renumbering such as NHR's tree map */
    ST_OP_PHASE,     /* run algorithm a's body (a fresh frame, RET 0 ends it) in the same context: same p, r and
                      * units; its `units` must agree with the caller's */
    ST_OP_REQUIRE,   /* [c --] c == 0: stop, refusing the instantiation (st_err.refused), not failing it */
    /* phases on sub-communicators (`phase COLL within MEMBERS [units ...] [root R] using ALGO`): */
    ST_OP_SUB_MEMBERS, /* [root -- m] the set built so far, in the order its units were added, is the member list
                        * of the next phase of algorithm a (ranks of the current context, distinct); root is the
                        * inner root as a rank of the current context (-1: the current root's place among the
                        * members, else 0); pushes 1 when my rank is a member, 0 when it sits the phase out */
    ST_OP_SUB_NBLOCKS, /* [-- n] blocks of that phase's collective for as many ranks as it has members */
    ST_OP_SUB_UNITS,   /* the set built so far is the next piece of the phase's units: one piece is split evenly
                        * over all the inner units, else piece b holds the inner units of block b */
    ST_OP_SUB_PHASE,   /* run algorithm a's body as my member index among the members' count of ranks, its unit u
                        * standing for its share of the pieces (none given: every unit of the current vector);
                        * a member that is not me sits the phase out; the sink sees where it begins and ends */
    /* the 2D split (spec 10): */
    ST_OP_SPLIT_RATIO, /* [q -- n]          floor(R * q), R the instantiation's split ratio (st_inst.split_ppm) */
    ST_OP_LANE,        /* a = 0: a `split` begins; 1: a lane begins, the set built so far is its units (disjoint
                        * from the other lanes'); 2: the lane ends; 3: the split ends. Lanes restart at the split's
                        * first step, the split lasts as long as its longest lane, and every send of a lane must
                        * read and write only the lane's units */
    /* one rank's plan without the other ranks' (core/st_plan.c): */
    ST_OP_FROM,        /* `from RANKS`: the set built so far (a = 1: every rank of the context) holds every rank
                        * that sends to me in the current algorithm body; told to the sink (st_vm_sink.from) */
    ST_OP_DST,         /* [dst -- dst] a send's destination, evaluated before its units: when the run only wants
                        * the sends to one rank (st_vm_sink.only_to) and dst is not it, pop dst and jump to a
                        * (just past the SEND), so a sender's run for one receiver skips its other units */
    ST_OP_SET_STRIDE,  /* [first last lo hi --], a = 1: [first last lo hi M --]: add the units of an affine
                        * comprehension `{ E : i in lo .. hi }` (lo <= hi) from its ends E(lo) = first and E(hi) =
                        * last, first + k (last - first) / (hi - lo) for k in 0 .. hi - lo, each taken modulo M
                        * (non-negative, as MOD) when a = 1: a strided range, kept as one piece (dsl/affine.h);
                        * a = 2: [a0 b0 a1 b1 lo hi --]: the ranges a(i) .. b(i) of `{ a .. b : i in lo .. hi }`
                        * with a and b affine (a(lo) = a0, a(hi) = a1, ...), one per i in order, as its loop adds */
    ST_OP_SUB_PIECES,  /* a = -1: a no-op. Else consts[a] = t, the pc of a SUB_PHASE, consts[a + 1] = n <=
                        * ST_KEY_SLOTS and consts[a + 2 ..] n slots of the body's frame: the code from here to t
                        * builds the phase's unit pieces from p, the units, the topology and those slots' values alone
                        * (no r, no root, in it or in the functions it calls), so a machine with an instantiation's
                        * cache (st_vm_cache) may take the pieces another rank built with the same values, members'
                        * count and units, and jump to t */
    ST_OP_MEMO,        /* [-- v] when taken: a = -1: a no-op. Else as SUB_PIECES's constants, t the pc of the
                        * MEMO_END that ends an expression computed from the same things alone: a machine with an
                        * instantiation's cache may push the value another rank computed with the same key and jump
                        * past t */
    ST_OP_MEMO_END,    /* [v -- v] the end of a MEMO's expression: its value, which the machine may keep */
    ST_OP_COUNT
} st_opcode;

typedef struct st_insn {
    uint8_t op;      /* st_opcode */
    int32_t a;       /* operand */
    int32_t line;    /* source line in the .dsl file (0 for none) */
    int32_t col;     /* source column of a SEND's `send` keyword, so diagnostics point at it (0 elsewhere) */
} st_insn;

/* A one-parameter function compiled to C (codegen/emit_native.c): *out = f(x) in a context of p ranks, 0; or -1
 * when it failed in any way, and the machine evaluates the function itself to say why. */
typedef int (*st_native_fn)(int64_t p, int64_t x, int64_t *out);

typedef struct st_func {
    const char *name;
    int32_t entry;   /* index in code */
    int32_t nparams; /* arguments arrive in slots 0..nparams-1 */
    int32_t nslots;  /* frame size, params included */
    int32_t flags;   /* ST_FUNC_* */
    st_native_fn native; /* the same function in C, or NULL (catalogues compiled at run time); not hashed: it
                          * computes what the code computes */
} st_func;

#define ST_FUNC_RANK_FREE 1 /* reads neither r, root nor the algorithm's lets: the same value on every rank, so a
                             * layout table made of it is computed once per instantiation, not once per rank */

typedef struct st_algo {
    const char *name;       /* as written in the .dsl file, e.g. "ring" */
    int32_t coll;           /* st_coll */
    int32_t entry;          /* index in code of the algorithm's body, which ends with RET 0 */
    int32_t nslots;         /* frame size of the body */
    int32_t line;           /* line of the `algorithm` keyword */
    int32_t flags;          /* ST_ALGO_USES_*: what the instantiation must vary when verifying */
} st_algo;

#define ST_ALGO_USES_ROOT 1 /* reads `root` */
#define ST_ALGO_USES_TOPO 2 /* asks topology queries (groups, sizes, members, levels) */
#define ST_ALGO_USES_SPLIT 4 /* reads the split ratio (`split_ratio(q)`) */
#define ST_ALGO_SENDS 8      /* its own body has a `send` (not propagated through phases) */
#define ST_ALGO_FROM 16      /* its own body has a `from` (not propagated): see core/st_plan.h */

/* The struct's tag is the public opaque type's (stitch.h: `typedef struct stitch_catalogue stitch_catalogue_t`), so
 * a user's emitted catalogue is passed to the runtime (stitch_config_t.catalogues) without a cast; only the
 * runtime and the compiler see this layout. */
typedef struct stitch_catalogue {
    int32_t version;        /* ST_TABLE_VERSION */
    const char *file;       /* the .dsl path as given to stitchc */
    uint64_t hash;          /* st_catalogue_hash, set by st_compile (dsl/sema.c) and written as is by `stitchc emit` */
    const st_insn *code;
    int32_t ncode;
    const int64_t *consts;
    int32_t nconsts;
    const st_func *funcs;
    int32_t nfuncs;
    const st_algo *algos;
    int32_t nalgos;
    /* The rank counts `stitchc emit` proved every algorithm for, with the verifier's default roots and layouts
     * (dsl/verify.h: every root up to p = 32, then a sample; every even grouping S x L and the default sweep of
     * layouts); 0, 0: none (compiled at run time, or emitted with --no-verify). Not part of the hash: it says what
     * was proved, not what runs. The runtime proves any instantiation this does not cover before running it
     * (dsl/verify.h: st_verify_covers, st_verify_inst; runtime/proof.c). */
    int32_t verified_pmin, verified_pmax;
} st_catalogue;

#define ST_KEY_SLOTS 8 /* slots a key (SUB_PIECES, MEMO) may name */

/* Limits that keep instantiation bounded whatever the table says. */
#define ST_MAX_UNITS (1 << 20)
#define ST_MAX_STACK 256
#define ST_MAX_CALL_DEPTH 200
#define ST_MAX_FRAME 4096

const char *st_coll_name(int coll);      /* "all_reduce", ...; "?" when out of range */
int st_coll_rooted(int coll);            /* broadcast, reduce, scatter, gather */
const char *st_coll_list(void);          /* "all_reduce, reduce_scatter, ..." for messages */
int st_coll_from_name(const char *name); /* -1 when unknown; case-insensitive */

/* Whether algorithm ai of cat gives a rank its own plan without the others' (core/st_sched.h:
 * st_sched_build_rank): NULL when every body it runs that sends names its senders (`from`) and none runs a phase on a
 * sub-communicator or a split; else why not, in words. Static: a configuration that replaces a role (st_inst.use)
 * by an algorithm without `from` loses the fast path at run time, which the build then reports. */
const char *st_algo_own_plan(const st_catalogue *cat, int ai);

/* A 64-bit FNV-1a hash of what runs: the code (opcodes and operands), the constants, the functions and the
 * algorithms (names, collectives, entries, frames, flags), each integer as 8 little-endian bytes. Source lines and
 * columns and the file name are left out, so an edit of comments or a moved file keeps the hash, and the hash is
 * the same on every host and build. Process-mode ranks compare it (runtime/registry.c) so that ranks built with
 * different algorithm files fail at init instead of running different schedules. */
uint64_t st_catalogue_hash(const st_catalogue *cat);
/* The same FNV-1a, one step: h (start from ST_HASH_INIT) extended by v's 8 little-endian bytes. The runtime
 * combines the hashes of a communicator's catalogues with it. */
#define ST_HASH_INIT 0xcbf29ce484222325ULL
uint64_t st_hash_int(uint64_t h, int64_t v);

#endif
