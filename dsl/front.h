/* front.h - private glue between the re2c lexer (grammar/lexer.re), the lemon parser (grammar/parser.y) and the
 * driver (dsl/frontend.c). Not installed, not used outside the front end.
 *
 * Tokens are views (pointer, length) into the st_file's copy of the source, with the line and column of their
 * first byte worked out incrementally by the lexer as it crosses newlines, so no token ever allocates. The parse
 * context is lemon's %extra_context: it carries the file under construction, the diagnostics, and the flags the
 * driver reads after each token to decide whether to resynchronise.
 */
#ifndef ST_FRONT_H
#define ST_FRONT_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"

#define ST_MAX_EXPR_DEPTH 1000 /* operator nesting without brackets (a+a+a..., - - -x): keeps later passes' recursion shallow */
#define ST_QUOTE_MAX 200       /* buffer for st_quote: 40 source bytes, each up to \xNN, plus "..." */

typedef struct st_token {
    const char *s; /* first byte in the source */
    int len;
    int line, col;
    int64_t ival; /* INT tokens: the value (0 after an overflow error) */
} st_token;

typedef struct st_lexer {
    const unsigned char *cur, *lim; /* lim points at the NUL sentinel after the text */
    const unsigned char *line_start;
    int line;
    st_diags *d;
} st_lexer;

/* Values of nonterminals. Lists keep a tail pointer so appending is O(1); expressions carry their depth. */
typedef struct st_ex {
    st_expr *e;
    int depth;
} st_ex;
typedef struct st_exlist {
    st_expr *head, *tail;
    int depth;
} st_exlist;
typedef struct st_slist {
    st_stmt *head, *tail;
} st_slist;
typedef struct st_plist {
    st_param *head, *tail;
} st_plist;
typedef struct st_nlist {
    st_name_list *head, *tail;
} st_nlist;

typedef struct st_parse_ctx {
    st_file *file;
    st_algo_ast **tail; /* where the next complete algorithm goes */
    st_diags *d;
    st_token tok;       /* the token being fed: position for errors raised without one (stack overflow) */
    int depth;          /* open brackets */
    int failed;         /* this parser instance gave up; the driver skips to the next algorithm */
    jmp_buf oom;        /* the arena ran dry inside a grammar action */
} st_parse_ctx;

void st_lex_init(st_lexer *lx, const char *src, size_t len, st_diags *d);
/* Next token; its TK_ code, or 0 at end of input (also when too many errors were recorded). */
int st_lex(st_lexer *lx, st_token *t);

/* `s` quoted for a message without the surrounding quotes: printable bytes as is, others as \xNN, cut at 40
 * bytes with "...". Returns buf. */
const char *st_quote(char buf[ST_QUOTE_MAX], const char *s, int len);
/* True when the error limit of `d` has been passed and the front end should stop. */
int st_diags_full(const st_diags *d);

/* Called from %syntax_error: records the message for the offending token `major` (0 = end of input), given
 * which terminals the parser state accepts (ok[code] != 0) and how to spell them (NULL: not worth naming). */
void st_syntax_error(st_parse_ctx *ctx, int major, st_token tok, const int *ok, int nok, const char *(*spell)(int));

/* lemon's generated entry points (%name st_Parse). */
void *st_ParseAlloc(void *(*malloc_fn)(size_t), st_parse_ctx *ctx);
void st_ParseFree(void *p, void (*free_fn)(void *));
void st_ParseInit(void *p, st_parse_ctx *ctx);
void st_ParseFinalize(void *p);
void st_Parse(void *p, int major, st_token minor);

#endif
