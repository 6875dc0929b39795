/* sema.c - check a parsed file and lower it to step-table bytecode (see sema.h and core/st_steptab.h).
 *
 * One walk does both: names are resolved while code is generated, so an error and the code it would have
 * produced come from the same place and cannot disagree. Code generation goes on after an error (into a
 * catalogue that is then thrown away) so that one run reports every error of the file.
 *
 * Frames: an algorithm body has one frame holding its `let`s and loop variables (plus hidden loop bounds); a `fn`
 * has its own frame for its parameters and reads the body's top-level `let`s through LOADA. Algorithms are
 * compiled into one shared code array; `phase` calls another algorithm's body, so composition costs no copy.
 */
#include "sema.h"

#include "affine.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum where { AT_TOP, AT_NESTED, AT_STEP } where;

typedef struct sym {
    st_str name;
    st_pos pos;
    int is_fn;
    int slot;     /* variable: slot in its frame */
    int in_fn;    /* variable lives in a fn frame (1) or in the algorithm frame (0) */
    int fn;       /* function: index in funcs */
    int nparams;
    uint32_t hash;
    int shadow;   /* the previous symbol of the same hash bucket, still in scope (-1: none) */
} sym;

typedef struct cg {
    st_diags *d;
    st_catalogue *cat;
    int capcode, capconsts, capfuncs, capalgos;
    sym *syms;           /* a stack: scopes end by popping back to a mark (unbind_to) */
    int nsyms, capsyms;
    int *buckets;        /* hash of a name -> its innermost symbol; chains run through sym.shadow */
    int nbuckets;        /* a power of two, at least nsyms, or 0 */
    int in_fn;           /* compiling a fn body */
    int nslots, fn_nslots;
    int cur_algo_first;  /* index of the first descriptor of the algorithm being compiled */
    int line;
    int nomem;
    st_pos *algo_pos;    /* per descriptor: where its algorithm's name is */
    int flags;           /* ST_ALGO_* of the algorithm being compiled */
    int fns_left;        /* its top-level functions not yet defined */
    st_pos root_pos;     /* its first use of `root` */
    int cap_algo_pos;
} cg;

typedef struct builtin {
    const char *name;
    int arity; /* -2: two or more */
    int op;
    int op_at; /* the topology queries: the form with one more argument, the level (0: none) */
} builtin;

/* The topology queries take an optional last argument, the level: `group(x)` is `group(x, 0)`. */
static const builtin builtins[] = {
    {"floor_log2", 1, ST_OP_FLOOR_LOG2, 0}, {"ceil_log2", 1, ST_OP_CEIL_LOG2, 0}, {"pow2", 1, ST_OP_POW2, 0},
    {"gcd", 2, ST_OP_GCD, 0}, {"lcm", 2, ST_OP_LCM, 0}, {"min", -2, ST_OP_MIN, 0}, {"max", -2, ST_OP_MAX, 0},
    {"groups", 0, ST_OP_GROUPS, ST_OP_GROUPS_AT}, {"group", 1, ST_OP_GROUP, ST_OP_GROUP_AT},
    {"index", 1, ST_OP_INDEX, ST_OP_INDEX_AT}, {"size", 1, ST_OP_SIZE, ST_OP_SIZE_AT},
    {"member", 2, ST_OP_MEMBER, ST_OP_MEMBER_AT}, {"levels", 0, ST_OP_LEVELS, 0},
    {"uniform", 0, ST_OP_UNIFORM, ST_OP_UNIFORM_AT}, {"split_ratio", 1, ST_OP_SPLIT_RATIO, 0},
};

static const char *const reserved[] = {"p", "r", "U", "root"};

/* ---- growing arrays ---------------------------------------------------------------------------------------- */

static int grow(cg *g, void **v, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *n = realloc(*v, size * (size_t)cap2);
    if (!n) {
        g->nomem = 1;
        return -1;
    }
    *v = n;
    *cap = cap2;
    return 0;
}

static int emit(cg *g, int op, int64_t a)
{
    st_catalogue *c = g->cat;
    if (grow(g, (void **)&c->code, &g->capcode, c->ncode + 1, sizeof(st_insn)))
        return 0;
    if (op == ST_OP_PUSH && (a < INT32_MIN || a > INT32_MAX)) {
        if (grow(g, (void **)&c->consts, &g->capconsts, c->nconsts + 1, sizeof(int64_t)))
            return 0;
        ((int64_t *)c->consts)[c->nconsts] = a;
        op = ST_OP_CONST;
        a = c->nconsts++;
    }
    ((st_insn *)c->code)[c->ncode] = (st_insn){(uint8_t)op, (int32_t)a, g->line, 0};
    return c->ncode++;
}

/* A constant pool entry; its index, or -1 out of memory. */
static int add_const(cg *g, int64_t v)
{
    st_catalogue *c = g->cat;
    if (grow(g, (void **)&c->consts, &g->capconsts, c->nconsts + 1, sizeof(int64_t)))
        return -1;
    ((int64_t *)c->consts)[c->nconsts] = v;
    return c->nconsts++;
}

/* A keyed region's constants (ST_OP_SUB_PIECES, ST_OP_MEMO): its end, then room for the key's count and slots,
 * which mark_keys fills once every function is compiled; the index of the first, or -1 out of memory. */
static int key_consts(cg *g, int end)
{
    int at = add_const(g, end);
    for (int k = 0; k < 1 + ST_KEY_SLOTS; k++)
        add_const(g, 0);
    return g->nomem ? -1 : at;
}

static void patch(cg *g, int at, int target)
{
    if (!g->nomem && at >= 0 && at < g->cat->ncode)
        ((st_insn *)g->cat->code)[at].a = target;
}

static char *dup_str(st_str s)
{
    char *c = malloc((size_t)s.len + 1);
    if (c) {
        memcpy(c, s.s, (size_t)s.len);
        c[s.len] = 0;
    }
    return c;
}

/* ---- symbols ----------------------------------------------------------------------------------------------- */

static int str_eq_ci(st_str s, const char *c)
{
    return (int)strlen(c) == s.len && strncasecmp(s.s, c, (size_t)s.len) == 0;
}

#define st_error_note(d, pos, ...) st_diag_add((d), ST_SEV_NOTE, (pos).line, (pos).col, __VA_ARGS__)

/* Names are looked up through a hash table over the symbol stack, so a body of 100,000 `let`s compiles in linear
 * time (a scan of the stack made it quadratic: 14 s). A bucket holds the newest symbol of its chain, and each
 * symbol remembers the one it hid, so popping a scope restores the buckets exactly. */
static uint32_t name_hash(st_str name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int i = 0; i < name.len; i++)
        h = (h ^ (unsigned char)name.s[i]) * 16777619u;
    return h;
}

static sym *lookup(cg *g, st_str name)
{
    if (!g->nbuckets)
        return NULL;
    uint32_t h = name_hash(name);
    for (int i = g->buckets[h & (uint32_t)(g->nbuckets - 1)]; i >= 0; i = g->syms[i].shadow)
        if (g->syms[i].hash == h && g->syms[i].name.len == name.len &&
            memcmp(g->syms[i].name.s, name.s, (size_t)name.len) == 0)
            return &g->syms[i];
    return NULL;
}

/* Link syms[i] at the head of its bucket. */
static void link_sym(cg *g, int i)
{
    int *head = &g->buckets[g->syms[i].hash & (uint32_t)(g->nbuckets - 1)];
    g->syms[i].shadow = *head;
    *head = i;
}

/* Keep at least one bucket per symbol: double the table and relink the stack oldest first. */
static int reserve_buckets(cg *g, int need)
{
    if (need <= g->nbuckets)
        return 0;
    int n = g->nbuckets ? g->nbuckets : 256;
    while (n < need)
        n *= 2;
    int *b = malloc(sizeof *b * (size_t)n);
    if (!b) {
        g->nomem = 1;
        return -1;
    }
    free(g->buckets);
    g->buckets = b;
    g->nbuckets = n;
    for (int i = 0; i < n; i++)
        b[i] = -1;
    for (int i = 0; i < g->nsyms; i++)
        link_sym(g, i);
    return 0;
}

/* End the scopes opened since `mark` (a value of nsyms): pop their symbols, newest first. */
static void unbind_to(cg *g, int mark)
{
    for (int i = g->nsyms - 1; i >= mark; i--)
        g->buckets[g->syms[i].hash & (uint32_t)(g->nbuckets - 1)] = g->syms[i].shadow;
    g->nsyms = mark;
}

static const builtin *find_builtin(st_str name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (st_str_eq(name, builtins[i].name))
            return &builtins[i];
    return NULL;
}

/* Bind a new name in the current scope; reports rebinding of any visible or reserved name. */
static sym *bind(cg *g, st_str name, st_pos pos)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (st_str_eq(name, reserved[i])) {
            st_error(g->d, pos, "cannot bind '%s': it is a built-in name", reserved[i]);
            return NULL;
        }
    if (find_builtin(name)) {
        st_error(g->d, pos, "cannot bind '%.*s': it is a built-in function", name.len, name.s);
        return NULL;
    }
    sym *old = lookup(g, name);
    if (old) {
        st_error(g->d, pos, "'%.*s' is already defined", name.len, name.s);
        st_error_note(g->d, old->pos, "previous definition of '%.*s' is here", name.len, name.s);
        return NULL;
    }
    if (grow(g, (void **)&g->syms, &g->capsyms, g->nsyms + 1, sizeof(sym)) || reserve_buckets(g, g->nsyms + 1))
        return NULL;
    int i = g->nsyms++;
    g->syms[i] = (sym){.name = name, .pos = pos, .hash = name_hash(name)};
    link_sym(g, i);
    return &g->syms[i];
}

static int new_slot(cg *g)
{
    return g->in_fn ? g->fn_nslots++ : g->nslots++;
}

static sym *bind_var(cg *g, st_str name, st_pos pos)
{
    int slot = new_slot(g);
    sym *s = bind(g, name, pos);
    if (s) {
        s->slot = slot;
        s->in_fn = g->in_fn;
    }
    return s;
}

/* ---- expressions ------------------------------------------------------------------------------------------- */

static void expr(cg *g, const st_expr *e);

static const int binop_code[] = {
    [ST_B_ADD] = ST_OP_ADD, [ST_B_SUB] = ST_OP_SUB, [ST_B_MUL] = ST_OP_MUL, [ST_B_DIV] = ST_OP_DIV,
    [ST_B_MOD] = ST_OP_MOD, [ST_B_SHL] = ST_OP_SHL, [ST_B_SHR] = ST_OP_SHR, [ST_B_BAND] = ST_OP_BAND,
    [ST_B_BOR] = ST_OP_BOR, [ST_B_BXOR] = ST_OP_BXOR, [ST_B_LT] = ST_OP_LT, [ST_B_LE] = ST_OP_LE,
    [ST_B_GT] = ST_OP_GT, [ST_B_GE] = ST_OP_GE, [ST_B_EQ] = ST_OP_EQ, [ST_B_NE] = ST_OP_NE,
};

static void name_expr(cg *g, const st_expr *e)
{
    if (st_str_eq(e->name, "p")) {
        emit(g, ST_OP_P, 0);
        return;
    }
    if (st_str_eq(e->name, "r")) {
        emit(g, ST_OP_R, 0);
        return;
    }
    if (st_str_eq(e->name, "U")) {
        emit(g, ST_OP_U, 0);
        return;
    }
    if (st_str_eq(e->name, "root")) {
        if (!(g->flags & ST_ALGO_USES_ROOT))
            g->root_pos = e->pos;
        g->flags |= ST_ALGO_USES_ROOT;
        emit(g, ST_OP_ROOT, 0);
        return;
    }
    sym *s = lookup(g, e->name);
    if (!s) {
        if (find_builtin(e->name))
            st_error(g->d, e->pos, "'%.*s' is a built-in function; call it as %.*s(...)", e->name.len,
                     e->name.s, e->name.len, e->name.s);
        else
            st_error(g->d, e->pos, "unknown name '%.*s'", e->name.len, e->name.s);
    } else if (s->is_fn)
        st_error(g->d, e->pos, "'%.*s' is a function; call it as %.*s(...)", e->name.len, e->name.s,
                 e->name.len, e->name.s);
    else if (g->in_fn && !s->in_fn)
        emit(g, ST_OP_LOADA, s->slot);
    else
        emit(g, ST_OP_LOAD, s->slot);
}

static int count_args(const st_expr *e)
{
    int n = 0;
    for (const st_expr *a = e->args; a; a = a->next)
        n++;
    return n;
}

/* A function may be called from the algorithm's body once it and every function it may call are defined: each
 * reads only `let`s defined before it, so those have their values by then. `seen` (nfuncs bytes) breaks cycles. */
static int fn_ready(const st_catalogue *c, int f, unsigned char *seen)
{
    if (c->funcs[f].entry < 0)
        return 0;
    if (seen[f])
        return 1;
    seen[f] = 1;
    for (int pc = c->funcs[f].entry; pc >= 0 && pc < c->ncode && c->code[pc].op != ST_OP_RET; pc++)
        if (c->code[pc].op == ST_OP_CALL && !fn_ready(c, c->code[pc].a, seen))
            return 0;
    return 1;
}

static int fn_callable(cg *g, int f)
{
    if (g->nomem)
        return 1;
    unsigned char *seen = calloc((size_t)g->cat->nfuncs + 1, 1);
    if (!seen) {
        g->nomem = 1;
        return 1;
    }
    int ok = fn_ready(g->cat, f, seen);
    free(seen);
    return ok;
}

static void call_expr(cg *g, const st_expr *e)
{
    int n = count_args(e);
    const builtin *b = find_builtin(e->name);
    sym *s = lookup(g, e->name);
    if (!b && (!s || !s->is_fn)) {
        if (s)
            st_error(g->d, e->pos, "'%.*s' is not a function", e->name.len, e->name.s);
        else
            st_error(g->d, e->pos, "unknown function '%.*s'", e->name.len, e->name.s);
        return;
    }
    int want = b ? b->arity : s->nparams;
    int leveled = b && b->op_at && n == want + 1;
    if (b && b->op_at && !leveled && n != want) {
        st_error(g->d, e->pos, "'%.*s' takes %d or %d arguments (the last one a level), %d given", e->name.len,
                 e->name.s, want, want + 1, n);
        return;
    }
    if (!leveled && ((want >= 0 && n != want) || (want == -2 && n < 2))) {
        st_error(g->d, e->pos, "'%.*s' takes %s%d argument%s, %d given", e->name.len, e->name.s,
                 want == -2 ? "at least " : "", want == -2 ? 2 : want, (want == 1) ? "" : "s", n);
        return;
    }
    if (!b && !g->in_fn && g->fns_left > 0 && !fn_callable(g, s->fn)) {
        /* a function may read `let`s defined before it; calls from the body after its definition (and those of
         * the functions it calls) guarantee that those have their values */
        st_error(g->d, e->pos, "'%.*s' is called before the algorithm's last function is defined; define "
                 "functions first", e->name.len, e->name.s);
        return;
    }
    int i = 0;
    for (const st_expr *a = e->args; a; a = a->next, i++) {
        expr(g, a);
        if (b && want == -2 && i > 0)
            emit(g, b->op, 0); /* min/max fold left */
    }
    if (b && b->op >= ST_OP_GROUPS && b->op <= ST_OP_UNIFORM_AT)
        g->flags |= ST_ALGO_USES_TOPO;
    if (b && b->op == ST_OP_SPLIT_RATIO)
        g->flags |= ST_ALGO_USES_SPLIT;
    if (b && want != -2)
        emit(g, leveled ? b->op_at : b->op, 0);
    else if (!b)
        emit(g, ST_OP_CALL, s->fn);
}

/* `a and b`, `a or b`: short-circuit, result 0 or 1. */
static void logic_expr(cg *g, const st_expr *e)
{
    int is_and = e->op == ST_B_AND;
    expr(g, e->a);
    int jz = emit(g, ST_OP_JZ, 0);
    if (is_and) {
        expr(g, e->b);
        emit(g, ST_OP_NOT, 0);
        emit(g, ST_OP_NOT, 0);
    } else
        emit(g, ST_OP_PUSH, 1);
    int jend = emit(g, ST_OP_JMP, 0);
    patch(g, jz, g->cat->ncode);
    if (is_and)
        emit(g, ST_OP_PUSH, 0);
    else {
        expr(g, e->b);
        emit(g, ST_OP_NOT, 0);
        emit(g, ST_OP_NOT, 0);
    }
    patch(g, jend, g->cat->ncode);
}

static void expr(cg *g, const st_expr *e)
{
    int saved = g->line;
    g->line = e->pos.line;
    switch (e->kind) {
    case ST_E_INT: emit(g, ST_OP_PUSH, e->ival); break;
    case ST_E_NAME: name_expr(g, e); break;
    case ST_E_CALL: call_expr(g, e); break;
    case ST_E_UN:
        expr(g, e->a);
        emit(g, e->op == ST_U_NEG ? ST_OP_NEG : e->op == ST_U_BNOT ? ST_OP_BNOT : ST_OP_NOT, 0);
        break;
    case ST_E_BIN:
        if (e->op == ST_B_AND || e->op == ST_B_OR) {
            logic_expr(g, e);
            break;
        }
        expr(g, e->a);
        expr(g, e->b);
        g->line = e->pos.line;
        emit(g, binop_code[e->op], 0);
        break;
    case ST_E_IF: {
        expr(g, e->a);
        int jz = emit(g, ST_OP_JZ, 0);
        expr(g, e->b);
        int jend = emit(g, ST_OP_JMP, 0);
        patch(g, jz, g->cat->ncode);
        expr(g, e->c);
        patch(g, jend, g->cat->ncode);
        break;
    }
    }
    g->line = saved;
}

/* ---- statements -------------------------------------------------------------------------------------------- */

static void stmts(cg *g, const st_stmt *s, where at);

/* The end of a counted loop whose variable is in slot vs: vs += 1, back to top; the loop's exit jump jz lands here. */
static void counted_loop_end(cg *g, int vs, int top, int jz)
{
    emit(g, ST_OP_LOAD, vs);
    emit(g, ST_OP_PUSH, 1);
    emit(g, ST_OP_ADD, 0);
    emit(g, ST_OP_STORE, vs);
    emit(g, ST_OP_JMP, top);
    patch(g, jz, g->cat->ncode);
}

/* Does the expression call a function of the algorithm (not a builtin)? */
static int calls_fn(cg *g, const st_expr *e)
{
    if (!e)
        return 0;
    if (e->kind == ST_E_CALL) {
        const sym *f = lookup(g, e->name);
        if (f && f->is_fn)
            return 1;
        for (const st_expr *a = e->args; a; a = a->next)
            if (calls_fn(g, a))
                return 1;
        return 0;
    }
    return calls_fn(g, e->a) || calls_fn(g, e->b) || calls_fn(g, e->c);
}

/* An expression of the algorithm's body: one that calls a function is wrapped in MEMO .. MEMO_END, so that ranks
 * whose key (mark_keys) is the same compute it once per instantiation. */
static void body_expr(cg *g, const st_expr *e)
{
    if (g->in_fn || !calls_fn(g, e)) {
        expr(g, e);
        return;
    }
    int memo = emit(g, ST_OP_MEMO, -1);
    expr(g, e);
    int end = emit(g, ST_OP_MEMO_END, 0), at = key_consts(g, end);
    if (at >= 0)
        patch(g, memo, at);
}

/* for var in lo .. hi: `body(g, arg)` compiles the loop body with var bound. */
static void loop(cg *g, st_str var, st_pos var_pos, const st_expr *lo, const st_expr *hi,
                 void (*body)(cg *, const void *, where), const void *arg, where at)
{
    int mark = g->nsyms;
    int vslot = new_slot(g), hslot = new_slot(g);
    body_expr(g, lo); /* both bounds are evaluated once, before the variable is in scope */
    emit(g, ST_OP_STORE, vslot);
    body_expr(g, hi);
    emit(g, ST_OP_STORE, hslot);
    sym *v = bind(g, var, var_pos);
    if (v) {
        v->slot = vslot;
        v->in_fn = g->in_fn;
    }
    int top = g->cat->ncode;
    emit(g, ST_OP_LOAD, vslot);
    emit(g, ST_OP_LOAD, hslot);
    emit(g, ST_OP_LE, 0);
    int jz = emit(g, ST_OP_JZ, 0);
    body(g, arg, at);
    counted_loop_end(g, vslot, top, jz);
    unbind_to(g, mark);
}

static void body_stmts(cg *g, const void *arg, where at)
{
    stmts(g, arg, at);
}

static void step_body(cg *g, const void *arg, where at)
{
    int mark = g->nsyms;
    emit(g, ST_OP_STEP, 0);
    stmts(g, arg, AT_STEP);
    unbind_to(g, mark);
}

static void comp_elem(cg *g, const void *arg, where at)
{
    const st_uset *u = arg;
    int jz = -1;
    if (u->cond) {
        expr(g, u->cond);
        jz = emit(g, ST_OP_JZ, 0);
    }
    expr(g, u->elem);
    if (u->elem_hi) { /* `{ a .. b : v in ... }`: a run of units per value */
        expr(g, u->elem_hi);
        emit(g, ST_OP_SET_RANGE, 0);
    } else
        emit(g, ST_OP_SET_ADD, 0);
    if (jz >= 0)
        patch(g, jz, g->cat->ncode);
}

/* `{ a .. b : i in lo .. hi }` (or `{ a : i in ... }`) with a and b affine in i and no filter (dsl/affine.h): the
 * ends a(lo), b(lo), a(hi), b(hi), then lo and hi, and SET_STRIDE 2, which adds the range a(i) .. b(i) for every i
 * in order, as the loop would, in one instruction instead of a dozen per value (the 2D algorithm's lanes name p
 * ranges each); nothing when hi < lo. Returns 0 when an end is not affine. */
static int strided_ranges(cg *g, const st_uset *u)
{
    const st_expr *ends[2] = {u->elem, u->elem_hi ? u->elem_hi : u->elem};
    if (u->cond || st_affine_in(ends[0], u->var) == ST_AFF_NOT || st_affine_in(ends[1], u->var) == ST_AFF_NOT)
        return 0;
    int mark = g->nsyms;
    int ls = new_slot(g), hs = new_slot(g), vs = new_slot(g);
    expr(g, u->lo);
    emit(g, ST_OP_STORE, ls);
    expr(g, u->hi);
    emit(g, ST_OP_STORE, hs);
    sym *v = bind(g, u->var, u->var_pos);
    if (v) {
        v->slot = vs;
        v->in_fn = g->in_fn;
    }
    emit(g, ST_OP_LOAD, ls);
    emit(g, ST_OP_LOAD, hs);
    emit(g, ST_OP_LE, 0);
    int jz = emit(g, ST_OP_JZ, 0);
    for (int at = 0; at < 2; at++) {
        emit(g, ST_OP_LOAD, at ? hs : ls);
        emit(g, ST_OP_STORE, vs);
        expr(g, ends[0]);
        expr(g, ends[1]);
    }
    emit(g, ST_OP_LOAD, ls);
    emit(g, ST_OP_LOAD, hs);
    g->line = u->pos.line;
    emit(g, ST_OP_SET_STRIDE, 2);
    patch(g, jz, g->cat->ncode);
    unbind_to(g, mark);
    return 1;
}

static void uset(cg *g, const st_uset *u)
{
    switch (u->kind) {
    case ST_US_ALL: emit(g, ST_OP_SET_ALL, 0); break;
    case ST_US_LIST:
        for (const st_expr *e = u->items; e; e = e->next) {
            expr(g, e);
            emit(g, ST_OP_SET_ADD, 0);
        }
        break;
    case ST_US_RANGE:
        expr(g, u->lo);
        expr(g, u->hi);
        emit(g, ST_OP_SET_RANGE, 0);
        break;
    case ST_US_COMP:
        if (!strided_ranges(g, u))
            loop(g, u->var, u->var_pos, u->lo, u->hi, comp_elem, u, AT_STEP);
        break;
    }
}

/* A send's `{ E : i in lo .. hi }` with E affine in i (dsl/affine.h): the ends E(lo) and E(hi), then lo, hi and M
 * for a top-level `% M`, and SET_STRIDE (a = 1 with M); nothing when hi < lo. Returns 0 when E is not affine. */
static int strided_uset(cg *g, const st_uset *u)
{
    const st_expr *base, *mod;
    if (!st_affine_comp(u, &base, &mod))
        return 0;
    int mark = g->nsyms;
    int ls = new_slot(g), hs = new_slot(g), vs = new_slot(g);
    expr(g, u->lo);
    emit(g, ST_OP_STORE, ls);
    expr(g, u->hi);
    emit(g, ST_OP_STORE, hs);
    sym *v = bind(g, u->var, u->var_pos);
    if (v) {
        v->slot = vs;
        v->in_fn = g->in_fn;
    }
    emit(g, ST_OP_LOAD, ls);
    emit(g, ST_OP_LOAD, hs);
    emit(g, ST_OP_LE, 0);
    int jz = emit(g, ST_OP_JZ, 0);
    for (int end = 0; end < 2; end++) {
        emit(g, ST_OP_LOAD, end ? hs : ls);
        emit(g, ST_OP_STORE, vs);
        expr(g, base);
    }
    emit(g, ST_OP_LOAD, ls);
    emit(g, ST_OP_LOAD, hs);
    if (mod)
        expr(g, mod);
    g->line = u->pos.line;
    emit(g, ST_OP_SET_STRIDE, mod != NULL);
    patch(g, jz, g->cat->ncode);
    unbind_to(g, mark);
    return 1;
}

/* A send's units: a strided comprehension as one piece, anything else as uset does. */
static void send_uset(cg *g, const st_uset *u)
{
    if (!strided_uset(g, u))
        uset(g, u);
}

/* Top-level functions are declared before the body is compiled, so they may call each other in any order. */
static void declare_fns(cg *g, const st_stmt *s)
{
    st_catalogue *c = g->cat;
    for (; s; s = s->next) {
        if (s->kind != ST_S_FN)
            continue;
        int nparams = 0;
        for (const st_param *q = s->params; q; q = q->next)
            nparams++;
        if (grow(g, (void **)&c->funcs, &g->capfuncs, c->nfuncs + 1, sizeof(st_func)))
            return;
        int fi = c->nfuncs++;
        ((st_func *)c->funcs)[fi] = (st_func){.name = dup_str(s->name), .entry = -1, .nparams = nparams, .nslots = nparams};
        g->fns_left++;
        sym *f = bind(g, s->name, s->name_pos);
        if (f) {
            f->is_fn = 1;
            f->fn = fi;
            f->nparams = nparams;
        }
    }
}

static void fn_stmt(cg *g, const st_stmt *s)
{
    st_catalogue *c = g->cat;
    sym *f = lookup(g, s->name);
    if (!f || !f->is_fn || c->funcs[f->fn].entry >= 0)
        return; /* a duplicate, already reported */
    int fi = f->fn; /* binding the parameters may move the symbol stack, and f with it */
    g->fns_left--;
    int jover = emit(g, ST_OP_JMP, 0);
    int entry = c->ncode;
    int mark = g->nsyms;
    g->in_fn = 1;
    g->fn_nslots = 0;
    for (const st_param *q = s->params; q; q = q->next)
        bind_var(g, q->name, q->pos);
    expr(g, s->expr);
    emit(g, ST_OP_RET, 1);
    ((st_func *)c->funcs)[fi].entry = entry;
    ((st_func *)c->funcs)[fi].nslots = g->fn_nslots;
    g->in_fn = 0;
    unbind_to(g, mark);
    patch(g, jover, c->ncode);
}

/* A collective's name as written: its st_coll, or -1 after reporting an unknown name (-2: out of memory). */
static int coll_of(cg *g, st_str name, st_pos pos)
{
    char *cn = dup_str(name);
    int coll = cn ? st_coll_from_name(cn) : -2;
    if (coll == -2)
        g->nomem = 1;
    else if (coll < 0)
        st_error(g->d, pos, "unknown collective '%s' (known: %s)", cn, st_coll_list());
    free(cn);
    return coll;
}

static void within_stmt(cg *g, const st_stmt *s, int coll, int ai);

static void phase_stmt(cg *g, const st_stmt *s)
{
    char *cname = dup_str(s->coll), *aname = dup_str(s->algo);
    int coll = coll_of(g, s->coll, s->coll_pos);
    if (!cname || !aname)
        g->nomem = 1;
    else if (coll >= 0) {
        const st_algo *a = st_catalogue_find(g->cat, aname, coll);
        if (!a)
            st_error(g->d, s->algo_pos, "no algorithm '%s' implements %s in this file", aname, cname);
        else if (s->within)
            within_stmt(g, s, coll, (int)(a - g->cat->algos));
        else
            emit(g, ST_OP_PHASE, a - g->cat->algos);
    }
    free(cname);
    free(aname);
}

/* ---- phases on sub-communicators ----------------------------------------------------------------------------- */

/* `for v in 0 .. n - 1 { body }` with n the value of opcode bound_op (-1: already on the stack), v in a fresh slot;
 * returns the slot. */
static int counted_loop_begin(cg *g, int bound_op, int *top, int *jz)
{
    int vs = new_slot(g), hs = new_slot(g);
    emit(g, ST_OP_PUSH, 0);
    emit(g, ST_OP_STORE, vs);
    if (bound_op >= 0)
        emit(g, bound_op, 0);
    emit(g, ST_OP_STORE, hs);
    *top = g->cat->ncode;
    emit(g, ST_OP_LOAD, vs);
    emit(g, ST_OP_LOAD, hs);
    emit(g, ST_OP_LT, 0);
    *jz = emit(g, ST_OP_JZ, 0);
    return vs;
}

/* `within group(x)`: the members of rank x's group in index order; `within index(x)`: the rank at x's index in
 * every group that has one, in group order. Both are loops over the topology queries, so they serve any topology. */
static void within_topo(cg *g, const st_expr *e)
{
    int is_group = e->kind == ST_E_CALL && st_str_eq(e->name, "group");
    if (e->kind != ST_E_CALL || (!is_group && !st_str_eq(e->name, "index")) || count_args(e) != 1) {
        st_error(g->d, e->pos, "a phase's members are group(X) (the ranks of rank X's group), index(X) (the ranks at "
                 "rank X's index in every group), a range A .. B, a set {...} or all");
        return;
    }
    int xs = new_slot(g), top, jz;
    expr(g, e->args);
    emit(g, is_group ? ST_OP_GROUP : ST_OP_INDEX, 0); /* the rank's group, or its index */
    emit(g, ST_OP_STORE, xs);
    if (is_group) { /* bound: size(x) */
        emit(g, ST_OP_LOAD, xs);
        emit(g, ST_OP_SIZE, 0);
    }
    int vs = counted_loop_begin(g, is_group ? -1 : ST_OP_GROUPS, &top, &jz);
    int jskip = -1;
    if (!is_group) { /* only groups that have an index i */
        emit(g, ST_OP_LOAD, xs);
        emit(g, ST_OP_LOAD, vs);
        emit(g, ST_OP_SIZE, 0);
        emit(g, ST_OP_LT, 0);
        jskip = emit(g, ST_OP_JZ, 0);
    }
    emit(g, ST_OP_LOAD, is_group ? xs : vs);
    emit(g, ST_OP_LOAD, is_group ? vs : xs);
    emit(g, ST_OP_MEMBER, 0);
    emit(g, ST_OP_SET_ADD, 0);
    if (jskip >= 0)
        patch(g, jskip, g->cat->ncode);
    counted_loop_end(g, vs, top, jz);
    g->flags |= ST_ALGO_USES_TOPO;
}

static void within_ranks(cg *g, const st_within *w)
{
    if (!w->ranks)
        within_topo(g, w->ranks_of);
    else if (w->ranks->kind == ST_US_ALL) { /* every rank of the current context */
        emit(g, ST_OP_PUSH, 0);
        emit(g, ST_OP_P, 0);
        emit(g, ST_OP_PUSH, 1);
        emit(g, ST_OP_SUB, 0);
        emit(g, ST_OP_SET_RANGE, 0);
    } else
        uset(g, w->ranks);
}

/* phase COLL within MEMBERS [units S | units b : S] [root R] using ALGO:
 *   MEMBERS (SET_*), R or -1, SUB_MEMBERS a, JZ over the units (a rank that sits out needs none),
 *   S, SUB_UNITS  |  for b in 0 .. SUB_NBLOCKS - 1 { S(b), SUB_UNITS },  SUB_PHASE a */
static void within_stmt(cg *g, const st_stmt *s, int coll, int ai)
{
    const st_within *w = s->within;
    int mark = g->nsyms;
    within_ranks(g, w);
    if (w->root) {
        if (!st_coll_rooted(coll))
            st_error(g->d, w->root_pos, "'root' given for a phase of %s, a collective without a root",
                     st_coll_name(coll));
        expr(g, w->root);
    } else
        emit(g, ST_OP_PUSH, -1);
    g->line = s->pos.line;
    emit(g, ST_OP_SUB_MEMBERS, ai);
    int jz = emit(g, ST_OP_JZ, 0), pieces = w->units ? emit(g, ST_OP_SUB_PIECES, -1) : -1;
    if (w->units && !w->var.len) {
        uset(g, w->units);
        emit(g, ST_OP_SUB_UNITS, 0);
    } else if (w->units) {
        int top, jend;
        int vs = counted_loop_begin(g, ST_OP_SUB_NBLOCKS, &top, &jend);
        sym *v = bind(g, w->var, w->var_pos);
        if (v) {
            v->slot = vs;
            v->in_fn = 0;
        }
        uset(g, w->units);
        emit(g, ST_OP_SUB_UNITS, 0);
        counted_loop_end(g, vs, top, jend);
    }
    patch(g, jz, g->cat->ncode);
    g->line = s->pos.line;
    int phase = emit(g, ST_OP_SUB_PHASE, ai), at = pieces >= 0 ? key_consts(g, phase) : -1;
    if (at >= 0)
        patch(g, pieces, at);
    unbind_to(g, mark);
}

static void layout_stmt(cg *g, const st_stmt *s)
{
    sym *f = lookup(g, s->name);
    if (!f || !f->is_fn)
        st_error(g->d, s->name_pos, "layout needs a function of one unit defined before it; '%.*s' is %s",
                 s->name.len, s->name.s, f ? "not a function" : "not defined");
    else if (f->nparams != 1)
        st_error(g->d, s->name_pos, "layout function '%.*s' takes %d parameters; it must take one (the unit)",
                 s->name.len, s->name.s, f->nparams);
    else
        emit(g, ST_OP_LAYOUT, f->fn);
}

/* split { lane S { ... } ... }: LANE 0, then per lane its units, LANE 1, its body, LANE 2; LANE 3 at the end.
 * The machine restarts each lane at the split's first step and checks that a lane's sends stay in its units. */
static void split_stmt(cg *g, const st_stmt *s, where at)
{
    emit(g, ST_OP_LANE, 0);
    for (const st_stmt *l = s->body; l; l = l->next) {
        g->line = l->pos.line;
        uset(g, l->units);
        emit(g, ST_OP_LANE, 1);
        int mark = g->nsyms;
        stmts(g, l->body, at);
        unbind_to(g, mark);
        g->line = l->pos.line;
        emit(g, ST_OP_LANE, 2);
    }
    g->line = s->pos.line;
    emit(g, ST_OP_LANE, 3);
}

static void if_stmt(cg *g, const st_stmt *s, where at)
{
    expr(g, s->expr);
    int jz = emit(g, ST_OP_JZ, 0);
    int mark = g->nsyms;
    stmts(g, s->body, at);
    unbind_to(g, mark);
    int jend = emit(g, ST_OP_JMP, 0);
    patch(g, jz, g->cat->ncode);
    stmts(g, s->else_body, at);
    unbind_to(g, mark);
    patch(g, jend, g->cat->ncode);
}

static const char *placement_error(const st_stmt *s, where at)
{
    switch (s->kind) {
    case ST_S_UNITS: return at == AT_STEP ? "'units' inside a step; declare units at algorithm level" : NULL;
    case ST_S_FN: return at != AT_TOP ? "'fn' must be defined at the top level of an algorithm" : NULL;
    case ST_S_STEP: return at == AT_STEP ? "'step' inside a step" : NULL;
    case ST_S_PHASE: return at == AT_STEP ? "'phase' inside a step; phases are made of steps" : NULL;
    case ST_S_SEND: return at != AT_STEP ? "'send' outside a step; wrap it in step { ... }" : NULL;
    case ST_S_LAYOUT: return at == AT_STEP ? "'layout' inside a step; it applies to an algorithm's steps" : NULL;
    case ST_S_SPLIT: return at == AT_STEP ? "'split' inside a step; lanes are made of steps" : NULL;
    case ST_S_FROM: return at == AT_STEP ? "'from' inside a step; name the ranks that send to me outside the steps"
                                         : NULL;
    case ST_S_REQUIRE: return at == AT_STEP ? "'require' inside a step; state what the algorithm needs before its "
                                              "steps" : NULL;
    default: return NULL;
    }
}

static void stmt(cg *g, const st_stmt *s, where at)
{
    const char *bad = placement_error(s, at);
    g->line = s->pos.line;
    if (bad) {
        st_error(g->d, s->pos, "%s", bad);
        return;
    }
    where inner = at == AT_TOP ? AT_NESTED : at;
    switch (s->kind) {
    case ST_S_UNITS:
        expr(g, s->expr);
        emit(g, ST_OP_UNITS, 0);
        if (s->scratch) {
            expr(g, s->scratch);
            emit(g, ST_OP_SCRATCH, 0);
        }
        break;
    case ST_S_LET: {
        body_expr(g, s->expr);
        sym *v = bind_var(g, s->name, s->name_pos);
        emit(g, ST_OP_STORE, v ? v->slot : new_slot(g));
        break;
    }
    case ST_S_FN: fn_stmt(g, s); break;
    case ST_S_STEP:
        if (s->name.len)
            loop(g, s->name, s->name_pos, s->lo, s->hi, step_body, s->body, at);
        else
            step_body(g, s->body, at);
        break;
    case ST_S_FOR: loop(g, s->name, s->name_pos, s->lo, s->hi, body_stmts, s->body, inner); break;
    case ST_S_IF: if_stmt(g, s, inner); break;
    case ST_S_SEND: { /* the destination first, so a run that wants only the sends to one rank skips the units */
        expr(g, s->expr);
        g->line = s->pos.line;
        int dst = emit(g, ST_OP_DST, 0);
        send_uset(g, s->units);
        if (s->at) {
            emit(g, ST_OP_SET_AT, 0);
            uset(g, s->at);
        }
        g->line = s->pos.line;
        int at_send = emit(g, ST_OP_SEND, s->xop | (s->at ? 2 : 0));
        patch(g, dst, g->cat->ncode);
        if (!g->nomem && at_send >= 0 && at_send < g->cat->ncode)
            ((st_insn *)g->cat->code)[at_send].col = s->pos.col; /* the verifier points at the send */
        g->flags |= ST_ALGO_SENDS;
        break;
    }
    case ST_S_FROM:
        if (s->units->kind != ST_US_ALL)
            uset(g, s->units);
        g->line = s->pos.line;
        emit(g, ST_OP_FROM, s->units->kind == ST_US_ALL);
        g->flags |= ST_ALGO_FROM;
        break;
    case ST_S_PHASE: phase_stmt(g, s); break;
    case ST_S_LAYOUT: layout_stmt(g, s); break;
    case ST_S_SPLIT: split_stmt(g, s, inner); break;
    case ST_S_LANE: break; /* only inside a split, which compiles its lanes */
    case ST_S_REQUIRE:
        expr(g, s->expr);
        g->line = s->pos.line;
        emit(g, ST_OP_REQUIRE, 0);
        break;
    }
}

static void stmts(cg *g, const st_stmt *s, where at)
{
    for (; s; s = s->next)
        stmt(g, s, at);
}

/* ---- algorithms -------------------------------------------------------------------------------------------- */

/* Pass 1: one descriptor per (algorithm, collective), so phases may name algorithms defined later. */
static void declare_algos(cg *g, const st_file *f)
{
    st_catalogue *c = g->cat;
    for (const st_algo_ast *a = f->algos; a; a = a->next) {
        if (!a->colls)
            st_error(g->d, a->pos, "algorithm '%.*s' implements no collective", a->name.len, a->name.s);
        for (const st_name_list *n = a->colls; n; n = n->next) {
            char *cn = dup_str(n->name), *an = dup_str(a->name);
            int coll = coll_of(g, n->name, n->pos);
            if (!cn || !an)
                g->nomem = 1;
            else if (coll < 0)
                ; /* reported */
            else if (st_catalogue_find(c, an, coll)) {
                st_error(g->d, a->pos, "algorithm '%s' already implements %s", an, cn);
                for (const st_algo_ast *o = f->algos; o != a; o = o->next)
                    for (const st_name_list *on = o->colls; on; on = on->next)
                        if (str_eq_ci(o->name, an) && str_eq_ci(on->name, cn))
                            st_error_note(g->d, on->pos, "previous definition of %s %s is here", an, cn);
            } else if (!grow(g, (void **)&c->algos, &g->capalgos, c->nalgos + 1, sizeof(st_algo)) &&
                       !grow(g, (void **)&g->algo_pos, &g->cap_algo_pos, c->nalgos + 1, sizeof(st_pos))) {
                g->algo_pos[c->nalgos] = a->pos;
                ((st_algo *)c->algos)[c->nalgos++] = (st_algo){an, coll, -1, 0, a->pos.line, 0};
                an = NULL;
            }
            free(cn);
            free(an);
        }
    }
}

static void compile_algo(cg *g, const st_algo_ast *a)
{
    unbind_to(g, 0);
    g->nslots = 0;
    g->flags = 0;
    g->fns_left = 0;
    g->line = a->pos.line;
    int entry = g->cat->ncode;
    declare_fns(g, a->body);
    stmts(g, a->body, AT_TOP);
    g->line = a->pos.line;
    emit(g, ST_OP_RET, 0);
    for (int i = 0; i < g->cat->nalgos; i++) {
        st_algo *d = (st_algo *)&g->cat->algos[i];
        if (d->line == a->pos.line && d->entry < 0 && st_str_eq(a->name, d->name)) {
            d->entry = entry;
            d->nslots = g->nslots;
            d->flags = g->flags;
            if ((g->flags & ST_ALGO_USES_ROOT) && !st_coll_rooted(d->coll))
                st_error(g->d, g->root_pos, "'root' used in '%s', which implements %s, a collective without a root",
                         d->name, st_coll_name(d->coll));
        }
    }
}

/* A phase cycle would recurse forever at instantiation; find one by walking PHASE edges from each algorithm. */
static int reaches(const st_catalogue *c, int from, int target, int depth)
{
    if (depth > c->nalgos)
        return 0;
    for (int pc = c->algos[from].entry; pc >= 0 && pc < c->ncode; pc++) {
        const st_insn *in = &c->code[pc];
        if (in->op == ST_OP_RET && in->a == 0)
            break; /* the body's end: fn bodies inside it return with RET 1 */
        if ((in->op == ST_OP_PHASE || in->op == ST_OP_SUB_PHASE) &&
            (in->a == target || reaches(c, in->a, target, depth + 1)))
            return 1;
    }
    return 0;
}

/* A function is rank-free when its code reads no r, root or algorithm `let` and calls only rank-free functions
 * (a fixpoint: assume all are, strike out until nothing changes). */
static int fn_rank_free(const st_catalogue *c, int f)
{
    for (int pc = c->funcs[f].entry; pc >= 0 && pc < c->ncode; pc++) {
        const st_insn *in = &c->code[pc];
        if (in->op == ST_OP_RET)
            return 1; /* a fn body is one expression: its only RET is its end */
        if (in->op == ST_OP_R || in->op == ST_OP_ROOT || in->op == ST_OP_LOADA ||
            (in->op == ST_OP_CALL && !(c->funcs[in->a].flags & ST_FUNC_RANK_FREE)))
            return 0;
    }
    return 0;
}

/* Add a slot to key[0 .. *n) unless it is there; -1 when the key would pass ST_KEY_SLOTS. */
static int key_add(int64_t *key, int *n, int32_t slot)
{
    for (int k = 0; k < *n; k++)
        if (key[k] == slot)
            return 0;
    if (*n == ST_KEY_SLOTS)
        return -1;
    key[(*n)++] = slot;
    return 0;
}

/* Function f's part of a key: the algorithm's slots it and the functions it calls read through LOADA, added to
 * key[0 .. *n); -1 when one of them reads r or root, or the key would pass ST_KEY_SLOTS. */
static int fn_key(const st_catalogue *c, int f, unsigned char *seen, int64_t *key, int *n)
{
    if (seen[f])
        return 0;
    seen[f] = 1;
    for (int pc = c->funcs[f].entry; pc >= 0 && pc < c->ncode && c->code[pc].op != ST_OP_RET; pc++) {
        const st_insn *in = &c->code[pc];
        if (in->op == ST_OP_R || in->op == ST_OP_ROOT)
            return -1;
        if (in->op == ST_OP_CALL && (in->a < 0 || in->a >= c->nfuncs || fn_key(c, in->a, seen, key, n)))
            return -1;
        if (in->op == ST_OP_LOADA && key_add(key, n, in->a))
            return -1;
    }
    return 0;
}

/* The key of the region code[from .. to): the body's slots it loads without storing them itself (lets, loop
 * variables) and those its functions read; -1 when it reads r or root, or the key is too long. */
static int region_key(const st_catalogue *c, int from, int to, unsigned char *seen, int64_t *key)
{
    int n = 0;
    memset(seen, 0, (size_t)c->nfuncs);
    for (int pc = from; pc < to; pc++) {
        const st_insn *in = &c->code[pc];
        int local = 0;
        if (in->op == ST_OP_R || in->op == ST_OP_ROOT || in->op == ST_OP_LOADA)
            return -1;
        if (in->op == ST_OP_CALL && (in->a < 0 || in->a >= c->nfuncs || fn_key(c, in->a, seen, key, &n)))
            return -1;
        if (in->op != ST_OP_LOAD)
            continue;
        for (int q = from; q < to && !local; q++) /* a slot the region stores itself (a loop variable) is its own */
            local = c->code[q].op == ST_OP_STORE && c->code[q].a == in->a;
        if (!local && key_add(key, &n, in->a))
            return -1;
    }
    return n;
}

/* Fill the keys of SUB_PIECES and MEMO regions (key_consts), or drop the region's promise (a = -1). */
static void mark_keys(st_catalogue *c, int *nomem)
{
    unsigned char *seen = malloc((size_t)c->nfuncs + 1);
    int64_t *consts = (int64_t *)c->consts;
    if (!seen) {
        *nomem = 1;
        return;
    }
    for (int pc = 0; pc < c->ncode; pc++) {
        st_insn *in = (st_insn *)&c->code[pc];
        if ((in->op != ST_OP_SUB_PIECES && in->op != ST_OP_MEMO) || in->a < 0)
            continue;
        int64_t key[ST_KEY_SLOTS];
        int n = region_key(c, pc + 1, (int)consts[in->a], seen, key);
        if (n < 0) {
            in->a = -1; /* its constants stay, unused */
            continue;
        }
        consts[in->a + 1] = n;
        memcpy(&consts[in->a + 2], key, sizeof(int64_t) * (size_t)n);
    }
    free(seen);
}

static void mark_rank_free(st_catalogue *c)
{
    for (int i = 0; i < c->nfuncs; i++)
        ((st_func *)c->funcs)[i].flags |= ST_FUNC_RANK_FREE;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < c->nfuncs; i++)
            if ((c->funcs[i].flags & ST_FUNC_RANK_FREE) && !fn_rank_free(c, i)) {
                ((st_func *)c->funcs)[i].flags &= ~ST_FUNC_RANK_FREE;
                changed = 1;
            }
    }
}

/* A phase's needs are its caller's: an algorithm that runs a rooted or topology-aware phase must be verified
 * with every root and grouping too. Iterates to a fixpoint (phases form a DAG once cycles are ruled out). */
static void propagate_flags(st_catalogue *c)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < c->nalgos; i++) {
            st_algo *a = (st_algo *)&c->algos[i];
            for (int pc = a->entry; pc >= 0 && pc < c->ncode; pc++) {
                const st_insn *in = &c->code[pc];
                if (in->op == ST_OP_RET && in->a == 0)
                    break;
                if (in->op != ST_OP_PHASE && in->op != ST_OP_SUB_PHASE)
                    continue;
                int add = c->algos[in->a].flags & ~a->flags & ~(ST_ALGO_SENDS | ST_ALGO_FROM);
                if (!st_coll_rooted(a->coll))
                    add &= ~ST_ALGO_USES_ROOT; /* a collective without a root runs its phases with root 0 */
                if (add) {
                    a->flags |= add;
                    changed = 1;
                }
            }
        }
    }
}

static void check_cycles(cg *g)
{
    for (int i = 0; i < g->cat->nalgos; i++)
        if (reaches(g->cat, i, i, 0))
            st_error(g->d, g->algo_pos[i], "algorithm '%s' (%s) reaches itself through phases",
                     g->cat->algos[i].name, st_coll_name(g->cat->algos[i].coll));
}

st_catalogue *st_compile(const st_file *f, st_diags *d)
{
    cg g = {.d = d};
    int errors_before = d->nerrors;
    g.cat = calloc(1, sizeof *g.cat);
    if (!g.cat)
        return NULL;
    g.cat->version = ST_TABLE_VERSION;
    g.cat->file = strdup(f->path ? f->path : "?");
    declare_algos(&g, f);
    for (const st_algo_ast *a = f->algos; a; a = a->next)
        compile_algo(&g, a);
    if (d->nerrors == errors_before && !g.nomem)
        check_cycles(&g);
    if (d->nerrors == errors_before && !g.nomem) {
        propagate_flags(g.cat);
        mark_rank_free(g.cat);
        mark_keys(g.cat, &g.nomem);
        g.cat->hash = st_catalogue_hash(g.cat); /* last: what `stitchc emit` writes and the runtime compares */
    }
    free(g.syms);
    free(g.buckets);
    free(g.algo_pos);
    if (g.nomem)
        st_diag_add(d, ST_SEV_ERROR, 0, 0, "out of memory");
    if (d->nerrors != errors_before || g.nomem) {
        st_catalogue_free(g.cat);
        return NULL;
    }
    return g.cat;
}

void st_catalogue_free(st_catalogue *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nfuncs; i++)
        free((char *)c->funcs[i].name);
    for (int i = 0; i < c->nalgos; i++)
        free((char *)c->algos[i].name);
    free((void *)c->code);
    free((void *)c->consts);
    free((void *)c->funcs);
    free((void *)c->algos);
    free((char *)c->file);
    free(c);
}

const st_algo *st_catalogue_find(const st_catalogue *c, const char *name, int coll)
{
    for (int i = 0; i < c->nalgos; i++)
        if (strcasecmp(c->algos[i].name, name) == 0 && (coll < 0 || c->algos[i].coll == coll))
            return &c->algos[i];
    return NULL;
}
