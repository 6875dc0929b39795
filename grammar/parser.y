/* parser.y - the stitch grammar, generated into build/gen/parser.c by lemon.
 *
 * Every node is allocated from the st_file's arena, so a parse abandoned half way leaks nothing and no symbol
 * needs a %destructor; %type only names the C type of a nonterminal's value. Lists are built left-recursively
 * with a tail pointer (a shallow parser stack, source order kept). The parser never prints: %syntax_error and
 * %stack_overflow record a diagnostic in the %extra_context and set ctx->failed, and the driver (dsl/frontend.c)
 * then skips to the next `algorithm` and starts a fresh parser. Any conflict fails the build.
 */
%name st_Parse
%token_prefix TK_
%token_type {st_token}
%extra_context {st_parse_ctx *ctx}
%stack_size 3000
%start_symbol file

/* Fix the token codes: keywords, then punctuation. */
%token ALGORITHM IMPLEMENTS UNITS LET FN STEP FOR IN IF THEN SEND TO REDUCE COPY ALL UNIT PHASE USING LAYOUT FROM
       SCRATCH AT WITHIN REQUIRE SPLIT LANE.
%token IDENT INT LBRACE RBRACE LPAREN RPAREN COMMA COLON SEMI ASSIGN DOTDOT.

/* Lowest first. ELSE ranks the `if..then..else` expression below every operator (it extends to the right). */
%right ELSE.
%left OR.
%left AND.
%right NOT.
%nonassoc EQ NE LT LE GT GE.
%left BOR.
%left BXOR.
%left BAND.
%left SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right BNOT.

%include {
#include <assert.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "front.h"
#include "frontend.h"
#include "parser.h"

static void *nalloc(st_parse_ctx *ctx, size_t n)
{
    void *p = st_arena_alloc(ctx->file->arena, n);
    if (!p)
        longjmp(ctx->oom, 1); /* the driver frees the parser; nothing here owns heap memory */
    return p;
}

static st_pos P(st_token t) { return (st_pos){t.line, t.col}; }
static st_str S(st_token t) { return (st_str){t.s, t.len}; }

/* Expression depth beyond brackets: report once, then let the driver resynchronise. */
static st_ex ex_make(st_parse_ctx *ctx, st_expr *e, int depth)
{
    if (depth > ST_MAX_EXPR_DEPTH && !ctx->failed) {
        st_error(ctx->d, e->pos, "expression nesting deeper than %d", ST_MAX_EXPR_DEPTH);
        ctx->failed = 1;
    }
    return (st_ex){e, depth};
}

static st_expr *ex_new(st_parse_ctx *ctx, st_expr_kind kind, st_token t)
{
    st_expr *e = nalloc(ctx, sizeof *e);
    e->kind = kind;
    e->pos = P(t);
    return e;
}

static int max2(int a, int b) { return a > b ? a : b; }

static st_ex ex_bin(st_parse_ctx *ctx, st_binop op, st_token t, st_ex a, st_ex b)
{
    st_expr *e = ex_new(ctx, ST_E_BIN, t);
    e->op = op, e->a = a.e, e->b = b.e;
    return ex_make(ctx, e, max2(a.depth, b.depth) + 1);
}

static st_ex ex_un(st_parse_ctx *ctx, st_unop op, st_token t, st_ex a)
{
    st_expr *e = ex_new(ctx, ST_E_UN, t);
    e->op = op, e->a = a.e;
    return ex_make(ctx, e, a.depth + 1);
}

static st_ex ex_leaf(st_parse_ctx *ctx, st_expr_kind kind, st_token t)
{
    st_expr *e = ex_new(ctx, kind, t);
    if (kind == ST_E_INT)
        e->ival = t.ival;
    else
        e->name = S(t);
    return (st_ex){e, 1};
}

static st_ex ex_call(st_parse_ctx *ctx, st_token t, st_exlist args)
{
    st_expr *e = ex_new(ctx, ST_E_CALL, t);
    e->name = S(t), e->args = args.head;
    return ex_make(ctx, e, args.depth + 1);
}

static st_ex ex_if(st_parse_ctx *ctx, st_token t, st_ex c, st_ex a, st_ex b)
{
    st_expr *e = ex_new(ctx, ST_E_IF, t);
    e->a = c.e, e->b = a.e, e->c = b.e;
    return ex_make(ctx, e, max2(c.depth, max2(a.depth, b.depth)) + 1);
}

static st_exlist exl_add(st_exlist l, st_ex x)
{
    if (l.tail)
        l.tail->next = x.e;
    else
        l.head = x.e;
    l.tail = x.e;
    l.depth = max2(l.depth, x.depth);
    return l;
}

static st_stmt *st_new(st_parse_ctx *ctx, st_stmt_kind kind, st_token kw)
{
    st_stmt *s = nalloc(ctx, sizeof *s);
    s->kind = kind;
    s->pos = P(kw);
    return s;
}

static st_slist sl_one(st_stmt *s) { return (st_slist){s, s}; }

/* Concatenate two statement lists (a statement may stand for zero or several: `;`, `let a = 1, b = 2`). */
static st_slist sl_cat(st_slist a, st_slist b)
{
    if (!a.head)
        return b;
    if (b.head) {
        a.tail->next = b.head;
        a.tail = b.tail;
    }
    return a;
}

static st_slist s_let(st_parse_ctx *ctx, st_token name, st_ex e)
{
    st_stmt *s = st_new(ctx, ST_S_LET, name);
    s->name = S(name), s->name_pos = P(name), s->expr = e.e;
    return sl_one(s);
}

static st_slist s_loop(st_parse_ctx *ctx, st_stmt_kind kind, st_token kw, st_token var, st_ex lo, st_ex hi,
                       st_slist body)
{
    st_stmt *s = st_new(ctx, kind, kw);
    s->name = S(var), s->name_pos = P(var), s->lo = lo.e, s->hi = hi.e, s->body = body.head;
    return sl_one(s);
}

static st_slist s_if(st_parse_ctx *ctx, st_token kw, st_ex c, st_slist then, st_slist els)
{
    st_stmt *s = st_new(ctx, ST_S_IF, kw);
    s->expr = c.e, s->body = then.head, s->else_body = els.head;
    return sl_one(s);
}

static st_slist s_send(st_parse_ctx *ctx, st_token kw, st_uset *u, st_ex to, st_uset *at, int xop)
{
    st_stmt *s = st_new(ctx, ST_S_SEND, kw);
    s->units = u, s->expr = to.e, s->at = at, s->xop = xop;
    return sl_one(s);
}

static st_uset *us_new(st_parse_ctx *ctx, st_uset_kind kind, st_pos pos)
{
    st_uset *u = nalloc(ctx, sizeof *u);
    u->kind = kind;
    u->pos = pos;
    return u;
}

static st_uset *us_range(st_parse_ctx *ctx, st_pos pos, st_ex lo, st_ex hi)
{
    st_uset *u = us_new(ctx, ST_US_RANGE, pos);
    u->lo = lo.e, u->hi = hi.e;
    return u;
}

static st_uset *us_comp(st_parse_ctx *ctx, st_token lb, st_ex elem, st_token var, st_ex lo, st_ex hi, st_expr *cond)
{
    st_uset *u = us_range(ctx, P(lb), lo, hi);
    u->kind = ST_US_COMP, u->elem = elem.e, u->var = S(var), u->var_pos = P(var), u->cond = cond;
    return u;
}

/* Phases on sub-communicators: the clauses after `within MEMBERS`, each at most once. */
static st_within *wi_new(st_parse_ctx *ctx, st_pos pos)
{
    st_within *w = nalloc(ctx, sizeof *w);
    w->pos = pos;
    return w;
}

static st_within *wi_units(st_parse_ctx *ctx, st_within *w, st_token kw, st_token *var, st_uset *u)
{
    if (w->units)
        st_error(ctx->d, P(kw), "a phase takes one 'units' clause");
    w->units = u, w->units_pos = P(kw);
    if (var)
        w->var = S(*var), w->var_pos = P(*var);
    return w;
}

static st_within *wi_clause(st_parse_ctx *ctx, st_within *w, st_token name, st_ex e)
{
    if (!st_str_eq(S(name), "root"))
        st_error(ctx->d, P(name), "unknown clause '%.*s' in a phase (expected 'units', 'root' or 'using')",
                 name.len > 64 ? 64 : name.len, name.s);
    else if (w->root)
        st_error(ctx->d, P(name), "a phase takes one 'root' clause");
    else
        w->root = e.e, w->root_pos = P(name);
    return w;
}

static st_plist pl_add(st_parse_ctx *ctx, st_plist l, st_token name)
{
    st_param *p = nalloc(ctx, sizeof *p);
    p->name = S(name), p->pos = P(name);
    if (l.tail)
        l.tail->next = p;
    else
        l.head = p;
    l.tail = p;
    return l;
}

static st_nlist nl_add(st_parse_ctx *ctx, st_nlist l, st_token name)
{
    st_name_list *n = nalloc(ctx, sizeof *n);
    n->name = S(name), n->pos = P(name);
    if (l.tail)
        l.tail->next = n;
    else
        l.head = n;
    l.tail = n;
    return l;
}

static void algo_add(st_parse_ctx *ctx, st_token name, st_nlist colls, st_slist body)
{
    st_algo_ast *a = nalloc(ctx, sizeof *a);
    a->name = S(name), a->pos = P(name), a->colls = colls.head, a->body = body.head;
    *ctx->tail = a;
    ctx->tail = &a->next;
}

/* Spelling of a terminal, quoted, for "expected ..." messages. */
static const char *tk_spell(int code)
{
    switch (code) {
    case TK_ALGORITHM: return "'algorithm'";
    case TK_IMPLEMENTS: return "'implements'";
    case TK_IN: return "'in'";
    case TK_THEN: return "'then'";
    case TK_ELSE: return "'else'";
    case TK_TO: return "'to'";
    case TK_USING: return "'using'";
    case TK_IDENT: return "identifier";
    case TK_LBRACE: return "'{'";
    case TK_RBRACE: return "'}'";
    case TK_LPAREN: return "'('";
    case TK_RPAREN: return "')'";
    case TK_COMMA: return "','";
    case TK_COLON: return "':'";
    case TK_ASSIGN: return "'='";
    case TK_DOTDOT: return "'..'";
    default: return NULL; /* not worth naming: the message says "unexpected" instead */
    }
}
}

%syntax_error {
    /* Collect what this state would have accepted, to say "expected X" where that is short and true. */
    /* Only a state whose default is an error knows its followers; after a default reduction the list would lie. */
    int ok[YYNTOKEN] = {0}, nok = 0, i;
    YYACTIONTYPE st = yypParser->yytos->stateno;
    for (i = 1; st <= YY_MAX_SHIFT && yy_default[st] == YY_ERROR_ACTION && i < YYNTOKEN; i++)
        if (yy_find_shift_action((YYCODETYPE)i, st) != YY_ERROR_ACTION)
            ok[i] = 1, nok++;
    st_syntax_error(ctx, yymajor, TOKEN, ok, nok, tk_spell);
}

%stack_overflow {
    if (!ctx->failed)
        st_error(ctx->d, ctx->tok, "nesting too deep for the parser");
    ctx->failed = 1;
}

/* Tokens own nothing (views into the source); this only keeps lemon's yy_destructor from leaving ctx unused. */
%token_destructor { (void)ctx; (void)yypminor; }

%type algo_colls {st_nlist}
%type stmts {st_slist}
%type stmt {st_slist}
%type block {st_slist}
%type lets {st_slist}
%type ifstmt {st_slist}
%type params {st_plist}
%type uset {st_uset *}
%type xop {int}
%type expr {st_ex}
%type within {st_within *}
%type lanes {st_slist}
%type args {st_exlist}
%type items {st_exlist}

file ::= algos.
algos ::= .
algos ::= algos algorithm.

algorithm ::= ALGORITHM IDENT(N) IMPLEMENTS algo_colls(C) LBRACE stmts(B) RBRACE. { algo_add(ctx, N, C, B); }
algo_colls(L) ::= coll_name(N). { L = nl_add(ctx, (st_nlist){0, 0}, N); }
algo_colls(L) ::= algo_colls(A) COMMA coll_name(N). { L = nl_add(ctx, A, N); }
/* `reduce` is both a transfer's operation and a collective's name */
%type coll_name {st_token}
coll_name(N) ::= IDENT(T). { N = T; }
coll_name(N) ::= REDUCE(T). { N = T; }

block(L) ::= LBRACE stmts(B) RBRACE. { L = B; }
stmts(L) ::= . { L = (st_slist){0, 0}; }
stmts(L) ::= stmts(A) stmt(S). { L = sl_cat(A, S); }

stmt(L) ::= SEMI. { L = (st_slist){0, 0}; }
stmt(L) ::= UNITS(K) expr(E). { L = sl_one(st_new(ctx, ST_S_UNITS, K)); L.head->expr = E.e; }
stmt(L) ::= UNITS(K) expr(E) SCRATCH expr(S). {
    L = sl_one(st_new(ctx, ST_S_UNITS, K));
    L.head->expr = E.e, L.head->scratch = S.e;
}
stmt(L) ::= LET(K) lets(B). {
    for (st_stmt *s = B.head; s; s = s->next)
        s->pos = P(K); /* every binding points at its `let` */
    L = B;
}
lets(L) ::= IDENT(N) ASSIGN expr(E). { L = s_let(ctx, N, E); }
lets(L) ::= lets(A) COMMA IDENT(N) ASSIGN expr(E). { L = sl_cat(A, s_let(ctx, N, E)); }
stmt(L) ::= FN(K) IDENT(N) LPAREN params(A) RPAREN ASSIGN expr(E). {
    st_stmt *s = st_new(ctx, ST_S_FN, K);
    s->name = S(N), s->name_pos = P(N), s->params = A.head, s->expr = E.e;
    L = sl_one(s);
}
params(L) ::= . { L = (st_plist){0, 0}; }
params(L) ::= IDENT(N). { L = pl_add(ctx, (st_plist){0, 0}, N); }
params(L) ::= params(A) COMMA IDENT(N). { L = pl_add(ctx, A, N); }
stmt(L) ::= STEP(K) block(B). { L = sl_one(st_new(ctx, ST_S_STEP, K)); L.head->body = B.head; }
stmt(L) ::= STEP(K) IDENT(V) IN expr(A) DOTDOT expr(B) block(C). { L = s_loop(ctx, ST_S_STEP, K, V, A, B, C); }
stmt(L) ::= FOR(K) IDENT(V) IN expr(A) DOTDOT expr(B) block(C). { L = s_loop(ctx, ST_S_FOR, K, V, A, B, C); }
stmt(L) ::= ifstmt(A). { L = A; }
ifstmt(L) ::= IF(K) expr(C) block(A). { L = s_if(ctx, K, C, A, (st_slist){0, 0}); }
ifstmt(L) ::= IF(K) expr(C) block(A) ELSE block(B). { L = s_if(ctx, K, C, A, B); }
ifstmt(L) ::= IF(K) expr(C) block(A) ELSE ifstmt(B). { L = s_if(ctx, K, C, A, B); }
stmt(L) ::= SEND(K) uset(U) TO expr(E) xop(X). { L = s_send(ctx, K, U, E, NULL, X); }
stmt(L) ::= SEND(K) uset(U) TO expr(E) AT uset(A) xop(X). { L = s_send(ctx, K, U, E, A, X); }
xop(X) ::= . { X = ST_X_COPY; }
xop(X) ::= COPY. { X = ST_X_COPY; }
xop(X) ::= REDUCE. { X = ST_X_REDUCE; }
stmt(L) ::= PHASE(K) coll_name(C) USING IDENT(A). {
    st_stmt *s = st_new(ctx, ST_S_PHASE, K);
    s->coll = S(C), s->coll_pos = P(C), s->algo = S(A), s->algo_pos = P(A);
    L = sl_one(s);
}
/* phase COLL within MEMBERS [units S | units b : S] [root R] using ALGO */
stmt(L) ::= PHASE(K) coll_name(C) WITHIN within(W) USING IDENT(A). {
    st_stmt *s = st_new(ctx, ST_S_PHASE, K);
    s->coll = S(C), s->coll_pos = P(C), s->algo = S(A), s->algo_pos = P(A), s->within = W;
    L = sl_one(s);
}
within(W) ::= uset(U). { W = wi_new(ctx, U->pos); W->ranks = U; }
within(W) ::= expr(E). { W = wi_new(ctx, E.e->pos); W->ranks_of = E.e; }
within(W) ::= within(A) UNITS(K) uset(U). { W = wi_units(ctx, A, K, NULL, U); }
within(W) ::= within(A) UNITS(K) IDENT(V) COLON uset(U). { W = wi_units(ctx, A, K, &V, U); }
within(W) ::= within(A) IDENT(N) expr(E). { W = wi_clause(ctx, A, N, E); }
/* split { lane S { ... } lane S { ... } ... }: lanes run side by side, each on its own units */
stmt(L) ::= SPLIT(K) LBRACE lanes(B) RBRACE. { L = sl_one(st_new(ctx, ST_S_SPLIT, K)); L.head->body = B.head; }
lanes(L) ::= . { L = (st_slist){0, 0}; }
lanes(L) ::= lanes(A) LANE(K) uset(U) block(B). {
    st_stmt *s = st_new(ctx, ST_S_LANE, K);
    s->units = U, s->body = B.head;
    L = sl_cat(A, sl_one(s));
}
stmt(L) ::= REQUIRE(K) expr(E). { L = sl_one(st_new(ctx, ST_S_REQUIRE, K)); L.head->expr = E.e; }
/* from RANKS: every rank that sends to me in this algorithm's body is among RANKS (core/st_plan.h) */
stmt(L) ::= FROM(K) uset(U). { L = sl_one(st_new(ctx, ST_S_FROM, K)); L.head->units = U; }
stmt(L) ::= LAYOUT(K) IDENT(F). {
    st_stmt *s = st_new(ctx, ST_S_LAYOUT, K);
    s->name = S(F), s->name_pos = P(F);
    L = sl_one(s);
}

uset(U) ::= ALL(K). { U = us_new(ctx, ST_US_ALL, P(K)); }
uset(U) ::= UNIT(K) expr(E). { U = us_new(ctx, ST_US_LIST, P(K)); U->items = E.e; }
uset(U) ::= expr(A) DOTDOT expr(B). { U = us_range(ctx, A.e->pos, A, B); }
uset(U) ::= LBRACE(K) items(I) RBRACE. { U = us_new(ctx, ST_US_LIST, P(K)); U->items = I.head; }
uset(U) ::= LBRACE(K) expr(E) COLON IDENT(V) IN expr(A) DOTDOT expr(B) RBRACE. {
    U = us_comp(ctx, K, E, V, A, B, NULL);
}
uset(U) ::= LBRACE(K) expr(E) COLON IDENT(V) IN expr(A) DOTDOT expr(B) IF expr(C) RBRACE. {
    U = us_comp(ctx, K, E, V, A, B, C.e);
}
uset(U) ::= LBRACE(K) expr(E) DOTDOT expr(F) COLON IDENT(V) IN expr(A) DOTDOT expr(B) RBRACE. {
    U = us_comp(ctx, K, E, V, A, B, NULL);
    U->elem_hi = F.e;
}
uset(U) ::= LBRACE(K) expr(E) DOTDOT expr(F) COLON IDENT(V) IN expr(A) DOTDOT expr(B) IF expr(C) RBRACE. {
    U = us_comp(ctx, K, E, V, A, B, C.e);
    U->elem_hi = F.e;
}
items(L) ::= expr(E). { L = exl_add((st_exlist){0, 0, 0}, E); }
items(L) ::= items(A) COMMA expr(E). { L = exl_add(A, E); }

expr(X) ::= INT(T). { X = ex_leaf(ctx, ST_E_INT, T); }
expr(X) ::= IDENT(T). { X = ex_leaf(ctx, ST_E_NAME, T); }
expr(X) ::= IDENT(T) LPAREN RPAREN. { X = ex_call(ctx, T, (st_exlist){0, 0, 0}); }
expr(X) ::= IDENT(T) LPAREN args(A) RPAREN. { X = ex_call(ctx, T, A); }
expr(X) ::= LPAREN expr(A) RPAREN. { X = A; }
expr(X) ::= IF(K) expr(C) THEN expr(A) ELSE expr(B). { X = ex_if(ctx, K, C, A, B); }
expr(X) ::= expr(A) OR(T) expr(B). { X = ex_bin(ctx, ST_B_OR, T, A, B); }
expr(X) ::= expr(A) AND(T) expr(B). { X = ex_bin(ctx, ST_B_AND, T, A, B); }
expr(X) ::= NOT(T) expr(A). { X = ex_un(ctx, ST_U_NOT, T, A); }
expr(X) ::= expr(A) EQ(T) expr(B). { X = ex_bin(ctx, ST_B_EQ, T, A, B); }
expr(X) ::= expr(A) NE(T) expr(B). { X = ex_bin(ctx, ST_B_NE, T, A, B); }
expr(X) ::= expr(A) LT(T) expr(B). { X = ex_bin(ctx, ST_B_LT, T, A, B); }
expr(X) ::= expr(A) LE(T) expr(B). { X = ex_bin(ctx, ST_B_LE, T, A, B); }
expr(X) ::= expr(A) GT(T) expr(B). { X = ex_bin(ctx, ST_B_GT, T, A, B); }
expr(X) ::= expr(A) GE(T) expr(B). { X = ex_bin(ctx, ST_B_GE, T, A, B); }
expr(X) ::= expr(A) BOR(T) expr(B). { X = ex_bin(ctx, ST_B_BOR, T, A, B); }
expr(X) ::= expr(A) BXOR(T) expr(B). { X = ex_bin(ctx, ST_B_BXOR, T, A, B); }
expr(X) ::= expr(A) BAND(T) expr(B). { X = ex_bin(ctx, ST_B_BAND, T, A, B); }
expr(X) ::= expr(A) SHL(T) expr(B). { X = ex_bin(ctx, ST_B_SHL, T, A, B); }
expr(X) ::= expr(A) SHR(T) expr(B). { X = ex_bin(ctx, ST_B_SHR, T, A, B); }
expr(X) ::= expr(A) PLUS(T) expr(B). { X = ex_bin(ctx, ST_B_ADD, T, A, B); }
expr(X) ::= expr(A) MINUS(T) expr(B). { X = ex_bin(ctx, ST_B_SUB, T, A, B); }
expr(X) ::= expr(A) STAR(T) expr(B). { X = ex_bin(ctx, ST_B_MUL, T, A, B); }
expr(X) ::= expr(A) SLASH(T) expr(B). { X = ex_bin(ctx, ST_B_DIV, T, A, B); }
expr(X) ::= expr(A) PERCENT(T) expr(B). { X = ex_bin(ctx, ST_B_MOD, T, A, B); }
expr(X) ::= MINUS(T) expr(A). [BNOT] { X = ex_un(ctx, ST_U_NEG, T, A); }
expr(X) ::= BNOT(T) expr(A). { X = ex_un(ctx, ST_U_BNOT, T, A); }
args(L) ::= expr(E). { L = exl_add((st_exlist){0, 0, 0}, E); }
args(L) ::= args(A) COMMA expr(E). { L = exl_add(A, E); }
