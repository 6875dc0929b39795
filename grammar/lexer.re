/* lexer.re - the stitch tokenizer, generated into build/gen/lexer.c by re2c.
 *
 * It scans the st_file's NUL-terminated copy of the text with re2c's sentinel-with-bounds-check scheme
 * (re2c:eof = 0), so NUL bytes inside the text are ordinary (stray) bytes and only the NUL at `lim` ends input.
 * Tokens are views into that copy; the line and column come from a counter bumped at each newline, so nothing is
 * allocated per token. Lexical errors (stray bytes, literals too large) are recorded and lexing goes on, so a
 * file with many of them reports them all in one run.
 */
#include <inttypes.h>
#include <limits.h>

#include "front.h"
#include "parser.h"

void st_lex_init(st_lexer *lx, const char *src, size_t len, st_diags *d)
{
    lx->cur = (const unsigned char *)src;
    lx->lim = lx->cur + len;
    lx->line_start = lx->cur;
    lx->line = 1;
    lx->d = d;
}

/* Columns and lines are ints; a multi-gigabyte line saturates instead of wrapping. */
static int col_of(const st_lexer *lx, const unsigned char *p)
{
    size_t c = (size_t)(p - lx->line_start) + 1;
    return c > INT_MAX ? INT_MAX : (int)c;
}

static int emit(st_lexer *lx, st_token *t, const unsigned char *tok, int code)
{
    size_t len = (size_t)(lx->cur - tok);
    t->s = (const char *)tok;
    t->len = len > INT_MAX ? INT_MAX : (int)len;
    t->line = lx->line;
    t->col = col_of(lx, tok);
    t->ival = 0;
    return code;
}

static void too_large(st_lexer *lx, st_token *t)
{
    char q[ST_QUOTE_MAX];
    st_diag_add(lx->d, ST_SEV_ERROR, t->line, t->col, "integer literal '%s' is too large", st_quote(q, t->s, t->len));
    t->ival = 0;
}

/* Decimal or hex (after the 0x) digits to a value, reporting overflow past INT64_MAX. */
static void int_value(st_lexer *lx, st_token *t, int base)
{
    const char *p = t->s + (base == 16 ? 2 : 0), *e = t->s + t->len;
    uint64_t v = 0;
    for (; p < e; p++) {
        int dig = *p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10;
        if (v > ((uint64_t)INT64_MAX - (uint64_t)dig) / (uint64_t)base) {
            too_large(lx, t);
            return;
        }
        v = v * (uint64_t)base + (uint64_t)dig;
    }
    t->ival = (int64_t)v;
}

static void stray(st_lexer *lx, const unsigned char *tok)
{
    char q[ST_QUOTE_MAX];
    st_diag_add(lx->d, ST_SEV_ERROR, lx->line, col_of(lx, tok), "stray '%s' in program",
                st_quote(q, (const char *)tok, 1));
}

int st_lex(st_lexer *lx, st_token *t)
{
    const unsigned char *mark;
    for (;;) {
        const unsigned char *tok = lx->cur;
        if (st_diags_full(lx->d))
            return emit(lx, t, lx->cur, 0);
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = "lx->cur";
        re2c:define:YYLIMIT = "lx->lim";
        re2c:define:YYMARKER = "mark";
        re2c:yyfill:enable = 0;
        re2c:eof = 0;

        $                { lx->cur = lx->lim; return emit(lx, t, lx->lim, 0); }
        [ \t\r\v\f]+     { continue; }
        "\n"             { lx->line += lx->line < INT_MAX; lx->line_start = lx->cur; continue; }
        "#" [^\n]*       { continue; }

        "algorithm"      { return emit(lx, t, tok, TK_ALGORITHM); }
        "implements"     { return emit(lx, t, tok, TK_IMPLEMENTS); }
        "units"          { return emit(lx, t, tok, TK_UNITS); }
        "let"            { return emit(lx, t, tok, TK_LET); }
        "fn"             { return emit(lx, t, tok, TK_FN); }
        "step"           { return emit(lx, t, tok, TK_STEP); }
        "for"            { return emit(lx, t, tok, TK_FOR); }
        "in"             { return emit(lx, t, tok, TK_IN); }
        "if"             { return emit(lx, t, tok, TK_IF); }
        "then"           { return emit(lx, t, tok, TK_THEN); }
        "else"           { return emit(lx, t, tok, TK_ELSE); }
        "send"           { return emit(lx, t, tok, TK_SEND); }
        "to"             { return emit(lx, t, tok, TK_TO); }
        "reduce"         { return emit(lx, t, tok, TK_REDUCE); }
        "copy"           { return emit(lx, t, tok, TK_COPY); }
        "all"            { return emit(lx, t, tok, TK_ALL); }
        "unit"           { return emit(lx, t, tok, TK_UNIT); }
        "and"            { return emit(lx, t, tok, TK_AND); }
        "or"             { return emit(lx, t, tok, TK_OR); }
        "not"            { return emit(lx, t, tok, TK_NOT); }
        "phase"          { return emit(lx, t, tok, TK_PHASE); }
        "using"          { return emit(lx, t, tok, TK_USING); }
        "layout"         { return emit(lx, t, tok, TK_LAYOUT); }
        "from"           { return emit(lx, t, tok, TK_FROM); }
        "scratch"        { return emit(lx, t, tok, TK_SCRATCH); }
        "at"             { return emit(lx, t, tok, TK_AT); }
        "within"         { return emit(lx, t, tok, TK_WITHIN); }
        "require"        { return emit(lx, t, tok, TK_REQUIRE); }
        "split"          { return emit(lx, t, tok, TK_SPLIT); }
        "lane"           { return emit(lx, t, tok, TK_LANE); }
        "true"           { emit(lx, t, tok, TK_INT); t->ival = 1; return TK_INT; }
        "false"          { return emit(lx, t, tok, TK_INT); }

        [A-Za-z_][A-Za-z0-9_]* { return emit(lx, t, tok, TK_IDENT); }
        [0-9]+           { emit(lx, t, tok, TK_INT); int_value(lx, t, 10); return TK_INT; }
        "0x" [0-9a-fA-F]+ { emit(lx, t, tok, TK_INT); int_value(lx, t, 16); return TK_INT; }

        "{"  { return emit(lx, t, tok, TK_LBRACE); }
        "}"  { return emit(lx, t, tok, TK_RBRACE); }
        "("  { return emit(lx, t, tok, TK_LPAREN); }
        ")"  { return emit(lx, t, tok, TK_RPAREN); }
        ","  { return emit(lx, t, tok, TK_COMMA); }
        ":"  { return emit(lx, t, tok, TK_COLON); }
        ";"  { return emit(lx, t, tok, TK_SEMI); }
        "="  { return emit(lx, t, tok, TK_ASSIGN); }
        ".." { return emit(lx, t, tok, TK_DOTDOT); }
        "+"  { return emit(lx, t, tok, TK_PLUS); }
        "-"  { return emit(lx, t, tok, TK_MINUS); }
        "*"  { return emit(lx, t, tok, TK_STAR); }
        "/"  { return emit(lx, t, tok, TK_SLASH); }
        "%"  { return emit(lx, t, tok, TK_PERCENT); }
        "<<" { return emit(lx, t, tok, TK_SHL); }
        ">>" { return emit(lx, t, tok, TK_SHR); }
        "&"  { return emit(lx, t, tok, TK_BAND); }
        "|"  { return emit(lx, t, tok, TK_BOR); }
        "^"  { return emit(lx, t, tok, TK_BXOR); }
        "~"  { return emit(lx, t, tok, TK_BNOT); }
        "==" { return emit(lx, t, tok, TK_EQ); }
        "!=" { return emit(lx, t, tok, TK_NE); }
        "<"  { return emit(lx, t, tok, TK_LT); }
        "<=" { return emit(lx, t, tok, TK_LE); }
        ">"  { return emit(lx, t, tok, TK_GT); }
        ">=" { return emit(lx, t, tok, TK_GE); }

        *    { stray(lx, tok); continue; }
        */
    }
}
