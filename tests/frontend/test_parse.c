/* test_parse.c - table-driven tests of the front end: each row is a snippet, the syntax tree it must give (as an
 * S-expression) and the exact text of the diagnostics printed for it.
 *
 * Asserting the whole printed text (message, position, source line, caret) pins the gcc-like format as well as the
 * wording, so a change in either shows up here first. Positions are dumped as @line:col for rows that ask.
 */
#undef NDEBUG
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frontend.h"

typedef struct buf {
    char *s;
    size_t len;
    FILE *f;
} buf;

static int show_pos;

static void pos(FILE *o, st_pos p)
{
    if (show_pos)
        fprintf(o, "@%d:%d", p.line, p.col);
}

static void name(FILE *o, st_str s, st_pos p)
{
    fprintf(o, "%.*s", s.len, s.s);
    pos(o, p);
}

static const char *const binops[] = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^",
                                     "<", "<=", ">", ">=", "==", "!=", "and", "or"};
static const char *const unops[] = {"neg", "~", "not"};

static void expr(FILE *o, const st_expr *e)
{
    switch (e->kind) {
    case ST_E_INT: fprintf(o, "%" PRId64, e->ival); pos(o, e->pos); return;
    case ST_E_NAME: name(o, e->name, e->pos); return;
    case ST_E_BIN: fprintf(o, "(%s", binops[e->op]); break;
    case ST_E_UN: fprintf(o, "(%s", unops[e->op]); break;
    case ST_E_CALL: fprintf(o, "(call %.*s", e->name.len, e->name.s); break;
    case ST_E_IF: fprintf(o, "(if"); break;
    }
    pos(o, e->pos);
    const st_expr *kids[] = {e->a, e->b, e->c};
    for (int i = 0; i < 3; i++)
        if (kids[i])
            fputc(' ', o), expr(o, kids[i]);
    for (const st_expr *a = e->args; a; a = a->next)
        fputc(' ', o), expr(o, a);
    fputc(')', o);
}

static void uset(FILE *o, const st_uset *u)
{
    static const char *const kinds[] = {"all", "(list", "(range", "(comp"};
    fputs(kinds[u->kind], o);
    pos(o, u->pos);
    if (u->kind == ST_US_ALL)
        return;
    for (const st_expr *e = u->items; e; e = e->next)
        fputc(' ', o), expr(o, e);
    if (u->kind == ST_US_COMP)
        fputc(' ', o), expr(o, u->elem), fputc(' ', o), name(o, u->var, u->var_pos);
    if (u->lo)
        fputc(' ', o), expr(o, u->lo), fputc(' ', o), expr(o, u->hi);
    if (u->cond)
        fputc(' ', o), expr(o, u->cond);
    fputc(')', o);
}

static void stmts(FILE *o, const st_stmt *s);

static void stmt(FILE *o, const st_stmt *s)
{
    static const char *const kinds[] = {"units", "let", "fn", "step", "for", "if", "send", "phase", "layout"};
    fprintf(o, "(%s", kinds[s->kind]);
    pos(o, s->pos);
    if (s->name.len)
        fputc(' ', o), name(o, s->name, s->name_pos);
    if (s->kind == ST_S_FN) {
        fputs(" (", o);
        for (const st_param *p = s->params; p; p = p->next)
            fprintf(o, "%s", p == s->params ? "" : " "), name(o, p->name, p->pos);
        fputc(')', o);
    }
    if (s->kind == ST_S_SEND)
        fputc(' ', o), uset(o, s->units);
    if (s->kind == ST_S_PHASE)
        fputc(' ', o), name(o, s->coll, s->coll_pos), fputc(' ', o), name(o, s->algo, s->algo_pos);
    if (s->lo)
        fputc(' ', o), expr(o, s->lo), fputc(' ', o), expr(o, s->hi);
    if (s->expr)
        fputc(' ', o), expr(o, s->expr);
    if (s->kind == ST_S_SEND)
        fputs(s->xop == ST_X_REDUCE ? " reduce" : " copy", o);
    if (s->kind == ST_S_IF) {
        fputs(" (then", o), stmts(o, s->body), fputc(')', o);
        if (s->else_body)
            fputs(" (else", o), stmts(o, s->else_body), fputc(')', o);
    } else {
        stmts(o, s->body);
    }
    fputc(')', o);
}

static void stmts(FILE *o, const st_stmt *s)
{
    for (; s; s = s->next)
        fputc(' ', o), stmt(o, s);
}

static void dump(FILE *o, const st_file *f)
{
    for (const st_algo_ast *a = f->algos; a; a = a->next) {
        fprintf(o, "%s(algorithm ", a == f->algos ? "" : " ");
        name(o, a->name, a->pos);
        fputs(" (", o);
        for (const st_name_list *n = a->colls; n; n = n->next)
            fprintf(o, "%s", n == a->colls ? "" : " "), name(o, n->name, n->pos);
        fputc(')', o);
        stmts(o, a->body);
        fputc(')', o);
    }
}

/* A snippet wrapped in an algorithm body. */
#define A(body) "algorithm a implements x { " body " }"
#define WRAP(tree) "(algorithm a (x) " tree ")"

typedef struct row {
    const char *src;
    const char *ast;   /* S-expression of the whole file */
    const char *diags; /* exact printed diagnostics, path "t.dsl" */
    int positions;     /* dump @line:col */
} row;

static const row rows[] = {
    /* --- empty and trivial files --- */
    {"", "", "", 0},
    {"# only a comment\n\n", "", "", 0},
    {"algorithm a implements x, y {}", "(algorithm a (x y))", "", 0},
    {"algorithm a implements x {} algorithm b implements y {}", "(algorithm a (x)) (algorithm b (y))", "", 0},
    /* --- statements --- */
    {A("units p"), WRAP("(units p)"), "", 0},
    {A("let a = 1, b = a + 2"), WRAP("(let a 1) (let b (+ a 2))"), "", 0},
    {A("fn f() = 1 fn g(x, y) = x"), WRAP("(fn f () 1) (fn g (x y) x)"), "", 0},
    {A("step { }"), WRAP("(step)"), "", 0},
    {A("step k in 0 .. p - 2 { ; }"), WRAP("(step k 0 (- p 2))"), "", 0},
    {A("for s in 0 .. 3 { step { } }"), WRAP("(for s 0 3 (step))"), "", 0},
    {A("if a { units 1 }"), WRAP("(if a (then (units 1)))"), "", 0},
    {A("if a { } else { units 2 }"), WRAP("(if a (then) (else (units 2)))"), "", 0},
    {A("if a { } else if b { } else { }"), WRAP("(if a (then) (else (if b (then))))"), "", 0},
    {A("send all to 0"), WRAP("(send all 0 copy)"), "", 0},
    {A("send unit r to 1 copy"), WRAP("(send (list r) 1 copy)"), "", 0},
    {A("send 0 .. 3 to r reduce"), WRAP("(send (range 0 3) r reduce)"), "", 0},
    {A("send { 1, 2, 3 } to r"), WRAP("(send (list 1 2 3) r copy)"), "", 0},
    {A("send { u : u in 0 .. 7 } to r"), WRAP("(send (comp u u 0 7) r copy)"), "", 0},
    {A("send { 2 * u : u in 0 .. 7 if u & 1 == 0 } to r"),
     WRAP("(send (comp (* 2 u) u 0 7 (== (& u 1) 0)) r copy)"), "", 0},
    {A("phase all_gather using ring ;;"), WRAP("(phase all_gather ring)"), "", 0},
    /* --- expressions: precedence and associativity --- */
    {A("units 1 + 2 * 3 - 4"), WRAP("(units (- (+ 1 (* 2 3)) 4))"), "", 0},
    {A("units a or b and not c == d"), WRAP("(units (or a (and b (not (== c d)))))"), "", 0},
    {A("units a | b ^ c & d << 1 + 2"), WRAP("(units (| a (^ b (& c (<< d (+ 1 2))))))"), "", 0},
    {A("units - ~ x % 3 / 2"), WRAP("(units (/ (% (neg (~ x)) 3) 2))"), "", 0},
    {A("units a >> 1 != b"), WRAP("(units (!= (>> a 1) b))"), "", 0},
    {A("units if a then b else if c then d else e + 1"), WRAP("(units (if a b (if c d (+ e 1))))"), "", 0},
    {A("units f(g(1), (2), h())"), WRAP("(units (call f (call g 1) 2 (call h)))"), "", 0},
    {A("units true + false + 0x1F + 9223372036854775807"),
     WRAP("(units (+ (+ (+ 1 0) 31) 9223372036854775807))"), "", 0},
    {A("units a < b > c"), "",
     "t.dsl:1:40: error: unexpected '>'\n"
     "    1 | algorithm a implements x { units a < b > c }\n"
     "      |                                        ^\n", 0},
    /* --- positions --- */
    {"algorithm ring implements rs {\n  units p\n  step k in 0 .. p - 2 {\n\tsend unit a / b to 1 reduce\n  }\n}",
     "(algorithm ring@1:11 (rs@1:27) (units@2:3 p@2:9) (step@3:3 k@3:8 0@3:13 (-@3:20 p@3:18 2@3:22) "
     "(send@4:2 (list@4:7 (/@4:14 a@4:12 b@4:16)) 1@4:21 reduce)))",
     "", 1},
    {A("let a = 1, b = 2 send { u : v in 0 .. 1 if c } to 0"),
     "(algorithm a@1:11 (x@1:24) (let@1:28 a@1:32 1@1:36) (let@1:28 b@1:39 2@1:43) "
     "(send@1:45 (comp@1:50 u@1:52 v@1:56 0@1:61 1@1:66 c@1:71) 0@1:78 copy))",
     "", 1},
    /* --- lexical errors: reported, lexing goes on --- */
    {A("units 1 @ $"), "",
     "t.dsl:1:36: error: stray '@' in program\n"
     "    1 | algorithm a implements x { units 1 @ $ }\n"
     "      |                                    ^\n"
     "t.dsl:1:38: error: stray '$' in program\n"
     "    1 | algorithm a implements x { units 1 @ $ }\n"
     "      |                                      ^\n", 0},
    {"units\x01!.", "",
     "t.dsl:1:1: error: expected 'algorithm' before 'units'\n"
     "    1 | units !.\n"
     "      | ^\n"
     "t.dsl:1:6: error: stray '\\x01' in program\n"
     "    1 | units !.\n"
     "      |      ^\n"
     "t.dsl:1:7: error: stray '!' in program\n"
     "    1 | units !.\n"
     "      |       ^\n"
     "t.dsl:1:8: error: stray '.' in program\n"
     "    1 | units !.\n"
     "      |        ^\n", 0},
    {A("units 9223372036854775808 + 0x8000000000000000"), "",
     "t.dsl:1:34: error: integer literal '9223372036854775808' is too large\n"
     "    1 | algorithm a implements x { units 9223372036854775808 + 0x8000000000000000 }\n"
     "      |                                  ^\n"
     "t.dsl:1:56: error: integer literal '0x8000000000000000' is too large\n"
     "    1 | algorithm a implements x { units 9223372036854775808 + 0x8000000000000000 }\n"
     "      |                                                        ^\n", 0},
    /* --- syntax errors --- */
    {A("units }"), "",
     "t.dsl:1:34: error: expected expression before '}'\n"
     "    1 | algorithm a implements x { units } }\n"
     "      |                                  ^\n", 0},
    {A("step { send all r }"), "",
     "t.dsl:1:44: error: expected 'to' before 'r'\n"
     "    1 | algorithm a implements x { step { send all r } }\n"
     "      |                                            ^\n", 0},
    {A("send all to to"), "",
     "t.dsl:1:40: error: expected expression before 'to'\n"
     "    1 | algorithm a implements x { send all to to }\n"
     "      |                                        ^\n", 0},
    {"algorithm a { }", "",
     "t.dsl:1:13: error: expected 'implements' before '{'\n"
     "    1 | algorithm a { }\n"
     "      |             ^\n", 0},
    {"algorithm a implements x {\n  step {\n", "",
     "t.dsl:2:9: error: unexpected end of input (missing '}'?)\n"
     "    2 |   step {\n"
     "      |         ^\n", 0},
    {"algorithm a implements x { units", "",
     "t.dsl:1:33: error: expected expression at end of input\n"
     "    1 | algorithm a implements x { units\n"
     "      |                                 ^\n", 0},
    {"algorithm a implements x { units p\nalgorithm b implements y { units q }", "(algorithm b (y) (units q))",
     "t.dsl:2:1: error: expected '}' before 'algorithm'\n"
     "    2 | algorithm b implements y { units q }\n"
     "      | ^\n", 0},
    {"algorithm a implements x { units ) }\nalgorithm b implements y { units q }\n"
     "algorithm c implements z { let = }\n",
     "(algorithm b (y) (units q))",
     "t.dsl:1:34: error: expected expression before ')'\n"
     "    1 | algorithm a implements x { units ) }\n"
     "      |                                  ^\n"
     "t.dsl:3:32: error: expected identifier before '='\n"
     "    3 | algorithm c implements z { let = }\n"
     "      |                                ^\n", 0},
    {A("units aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "",
     "t.dsl:1:85: error: unexpected 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'\n"
     "    1 | algorithm a implements x { units aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa }\n"
     "      |                                                                                     ^\n", 0},
};

static char *run(const char *src, size_t len, const char **ast, int positions)
{
    static char tree[4096];
    st_diags d;
    st_diags_init(&d, "t.dsl", NULL, 0);
    st_file *f = st_parse("t.dsl", src, len, &d);
    CHECK(f && d.src == f->src && d.len == len);
    char *out = NULL;
    size_t outlen = 0;
    FILE *o = fmemopen(tree, sizeof tree, "w");
    show_pos = positions;
    dump(o, f);
    fclose(o);
    *ast = tree;
    o = open_memstream(&out, &outlen);
    st_diags_print(&d, o);
    fclose(o);
    st_file_free(f);
    st_diags_free(&d);
    return out;
}

static int check_rows(void)
{
    int fails = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        const char *ast;
        char *diags = run(r->src, strlen(r->src), &ast, r->positions);
        int ok_ast = r->diags[0] && !r->ast[0] ? 1 : strcmp(ast, r->ast) == 0;
        if (!ok_ast || strcmp(diags, r->diags) != 0) {
            fprintf(stderr, "row %zu: %s\n  ast:   %s\n  want:  %s\n  diags:\n%s  want:\n%s\n", i, r->src, ast, r->ast,
                    diags, r->diags);
            fails++;
        }
        free(diags);
    }
    return fails;
}

/* Inputs built at run time: NUL bytes, a megabyte line, deep nesting, endless errors. */
static char *repeat(const char *pre, const char *unit, size_t n, const char *post, size_t *len)
{
    size_t ul = strlen(unit), pl = strlen(pre), ql = strlen(post);
    char *s = malloc(pl + ul * n + ql + 1);
    CHECK(s);
    memcpy(s, pre, pl);
    for (size_t i = 0; i < n; i++)
        memcpy(s + pl + i * ul, unit, ul);
    memcpy(s + pl + ul * n, post, ql + 1);
    *len = pl + ul * n + ql;
    return s;
}

static int has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

static int check_limits(void)
{
    size_t len;
    const char *ast;
    char *s, *out;

    out = run(A("units 1\0 + 2"), sizeof A("units 1\0 + 2") - 1, &ast, 0);
    CHECK(has(out, "t.dsl:1:35: error: stray '\\x00' in program\n"));
    free(out);

    s = repeat("algorithm a implements x { units ", "(", 100000, "1 }", &len);
    out = run(s, len, &ast, 0);
    CHECK(has(out, "t.dsl:1:233: error: nesting deeper than 200\n") && !has(out, "error: unexpected"));
    free(out), free(s);

    s = repeat("algorithm a implements x { ", "if a { ", 100000, "", &len);
    out = run(s, len, &ast, 0);
    CHECK(has(out, "error: nesting deeper than 200\n"));
    free(out), free(s);

    s = repeat("algorithm a implements x { units 1", " + 1", 5000, " }", &len); /* flat but deep tree */
    out = run(s, len, &ast, 0);
    CHECK(has(out, "error: expression nesting deeper than 1000\n"));
    free(out), free(s);

    s = repeat("algorithm a implements x { units ", "- ", 100000, "1 }", &len);
    out = run(s, len, &ast, 0);
    CHECK(has(out, "error: nesting too deep for the parser\n"));
    free(out), free(s);

    s = repeat("algorithm a implements x { units ", "@", 1 << 20, "1 }", &len); /* a megabyte line of errors: stops at the limit */
    out = run(s, len, &ast, 0);
    CHECK(has(out, "t.dsl: note: too many errors; stopping\n"));
    free(out), free(s);

    s = repeat("algorithm a implements x { units 0", "+1", 200, " }", &len); /* 200 levels: allowed */
    out = run(s, len, &ast, 0);
    CHECK(out[0] == 0);
    free(out), free(s);
    return 0;
}

int main(void)
{
    int fails = check_rows() + check_limits();
    printf("%s: %d failure%s\n", fails ? "FAIL" : "ok", fails, fails == 1 ? "" : "s");
    return fails != 0;
}
