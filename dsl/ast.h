/* ast.h - the syntax tree of a stitch DSL file.
 *
 * The parser (grammar/parser.y) builds it; sema (dsl/sema.c) checks it and lowers it to step-table bytecode.
 * Every node lives in one arena owned by the st_file, so a parse that stops half way (syntax errors, limits)
 * frees everything with st_file_free and no grammar rule needs a destructor. Names are views (pointer, length)
 * into the source text, which the st_file also owns. Positions are 1-based line and column (bytes).
 */
#ifndef ST_AST_H
#define ST_AST_H

#include <stddef.h>
#include <stdint.h>

#include "st_steptab.h" /* st_xop */

typedef struct st_pos {
    int line, col; /* 1-based */
} st_pos;

typedef struct st_str {
    const char *s; /* not NUL-terminated: a view into the source */
    int len;
} st_str;

/* Operators of expressions. Comparisons and logic yield 0 or 1. */
typedef enum st_binop {
    ST_B_ADD, ST_B_SUB, ST_B_MUL, ST_B_DIV, ST_B_MOD, /* DIV floors toward -inf, MOD is non-negative */
    ST_B_SHL, ST_B_SHR, ST_B_BAND, ST_B_BOR, ST_B_BXOR,
    ST_B_LT, ST_B_LE, ST_B_GT, ST_B_GE, ST_B_EQ, ST_B_NE,
    ST_B_AND, ST_B_OR /* short-circuit */
} st_binop;

typedef enum st_unop { ST_U_NEG, ST_U_BNOT, ST_U_NOT } st_unop;

typedef enum st_expr_kind {
    ST_E_INT,  /* ival */
    ST_E_NAME, /* name */
    ST_E_BIN,  /* binop, a, b */
    ST_E_UN,   /* unop, a */
    ST_E_CALL, /* name, args (linked through next) */
    ST_E_IF    /* a = condition, b = then, c = else */
} st_expr_kind;

typedef struct st_expr {
    st_expr_kind kind;
    st_pos pos;
    int64_t ival;
    st_str name;
    int op; /* st_binop or st_unop */
    struct st_expr *a, *b, *c;
    struct st_expr *args; /* CALL: first argument */
    struct st_expr *next; /* next argument in a call */
} st_expr;

/* A set of units. */
typedef enum st_uset_kind {
    ST_US_ALL,   /* all                         : every unit 0 .. U-1 */
    ST_US_LIST,  /* unit e   |   { e1, e2, ... } : the listed units (items linked through next) */
    ST_US_RANGE, /* lo .. hi                     : inclusive range */
    ST_US_COMP   /* { elem : var in lo .. hi [if cond] } */
} st_uset_kind;

typedef struct st_uset {
    st_uset_kind kind;
    st_pos pos;
    st_expr *items;     /* LIST */
    st_expr *lo, *hi;   /* RANGE, COMP */
    st_expr *elem;      /* COMP */
    st_str var;         /* COMP */
    st_pos var_pos;     /* COMP */
    st_expr *cond;      /* COMP, may be NULL */
    st_expr *elem_hi;   /* COMP of ranges, `{ a .. b : v in lo .. hi }`: elem is a, elem_hi is b (NULL: one unit) */
} st_uset;

/* `phase COLL within MEMBERS [units S | units b : S] [root R] using ALGO`: a phase on a sub-communicator. */
typedef struct st_within {
    st_uset *ranks;     /* the members as a set (`a .. b`, `{...}`, `all`), in the order written; or NULL */
    st_expr *ranks_of;  /* the members as `group(g)` or `index(i)` (when ranks is NULL) */
    st_pos pos;         /* of the members */
    st_uset *units;     /* the caller's units the phase runs on (NULL: all of the vector) */
    st_str var;         /* `units b : S`: S is the units of the phase's block b (len 0: one set for all) */
    st_pos var_pos, units_pos;
    st_expr *root;      /* the phase's root, a rank of the caller (NULL: the caller's root's place, else 0) */
    st_pos root_pos;
} st_within;

typedef struct st_param {
    st_str name;
    st_pos pos;
    struct st_param *next;
} st_param;

typedef enum st_stmt_kind {
    ST_S_UNITS, /* units expr [scratch expr]                    (algorithm level) */
    ST_S_LET,   /* let name = expr                              (one binding; `let a = 1, b = 2` gives two) */
    ST_S_FN,    /* fn name(params) = expr                       (algorithm level) */
    ST_S_STEP,  /* step [var in lo .. hi] { body }              (algorithm level; a family when var is set) */
    ST_S_FOR,   /* for var in lo .. hi { body }                 (anywhere) */
    ST_S_IF,    /* if expr { body } [else { else_body }]        (anywhere; `else if` nests an IF in else_body) */
    ST_S_SEND,  /* send uset to expr [at uset] [copy|reduce]    (inside a step) */
    ST_S_PHASE, /* phase coll using algo                        (algorithm level) */
    ST_S_LAYOUT, /* layout fn                                   (algorithm level): renumber units of later sends */
    ST_S_SPLIT, /* split { lanes }                              (outside steps): body is the LANE statements */
    ST_S_LANE,  /* lane uset { body }                           (in a split): units is the lane's units */
    ST_S_FROM,  /* from uset                                    (outside steps): units is the set of ranks that
                 * send to me in this body (a superset will do; the verifier proves it covers them) */
    ST_S_REQUIRE /* require expr                                (outside steps): the instantiation is refused when
                  * expr is 0 on some rank (verify skips it; the runtime names the line) */
} st_stmt_kind;

typedef struct st_stmt {
    st_stmt_kind kind;
    st_pos pos;           /* of the keyword */
    st_str name;          /* LET, FN: bound name; STEP, FOR: loop variable (len 0 for a plain step); LAYOUT: fn */
    st_pos name_pos;
    st_param *params;     /* FN */
    st_expr *expr;        /* UNITS, LET, FN body, IF condition, SEND destination, REQUIRE condition */
    st_expr *lo, *hi;     /* STEP (family), FOR: inclusive bounds */
    st_uset *units;       /* SEND; LANE: the lane's units; FROM: the ranks */
    st_uset *at;          /* SEND: destination units (NULL: the same as `units`) */
    st_expr *scratch;     /* UNITS: scratch units after the vector's (NULL: none) */
    int xop;              /* SEND: st_xop */
    st_str coll, algo;    /* PHASE: collective and algorithm names */
    st_pos coll_pos, algo_pos;
    struct st_stmt *body; /* STEP, FOR, IF then-branch, SPLIT (its lanes), LANE */
    struct st_stmt *else_body; /* IF */
    st_within *within;    /* PHASE on a sub-communicator (NULL: a plain phase) */
    struct st_stmt *next;
} st_stmt;

typedef struct st_name_list {
    st_str name;
    st_pos pos;
    struct st_name_list *next;
} st_name_list;

typedef struct st_algo_ast {
    st_str name;
    st_pos pos;            /* of the name */
    st_name_list *colls;   /* implements a, b, ... */
    st_stmt *body;
    struct st_algo_ast *next;
} st_algo_ast;

typedef struct st_arena st_arena;

typedef struct st_file {
    char *path;            /* owned copy */
    char *src;             /* owned copy of the text, NUL-terminated (the text itself may hold NULs) */
    size_t len;
    st_algo_ast *algos;    /* in source order */
    st_arena *arena;
} st_file;

/* Arena allocation: zeroed memory that lives until st_file_free. Returns NULL only when out of memory. */
void *st_arena_alloc(st_arena *a, size_t size);
st_arena *st_arena_new(void);
void st_arena_free(st_arena *a);

void st_file_free(st_file *f);

/* Compare a view with a C string. */
int st_str_eq(st_str s, const char *c);

#endif
