/* frontend.c - the driver that runs the lexer and the lemon parser over a buffer (st_parse, st_parse_path).
 *
 * The driver, not the grammar, owns recovery and limits, because both need to see every token: it counts open
 * brackets (ST_MAX_NESTING), and after a parser instance fails (syntax error, nesting, stack overflow) it skips
 * tokens to the next `algorithm` that can start a definition and starts a fresh parser there, so each broken
 * algorithm costs one error and the ones after it are still checked. Complete algorithms are linked into the
 * file by the grammar as they are reduced, so a failure keeps everything before it.
 *
 * Reading a file (st_read_source) is bounded too: core/st_readfile.c opens without blocking, checks with fstat
 * on that descriptor, reads only regular files of at most ST_MAX_SOURCE bytes; a FIFO or /dev/zero would otherwise
 * hang the compiler or fill memory. The topology loader (core/st_topofile.c) reads its files the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front.h"
#include "st_readfile.h"
#include "frontend.h"
#include "parser.h"

const char *st_quote(char buf[ST_QUOTE_MAX], const char *s, int len)
{
    static const char hex[] = "0123456789abcdef";
    char *o = buf;
    int n = len > 40 ? 40 : len;
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > 0x20 && c < 0x7f) {
            *o++ = (char)c;
        } else {
            *o++ = '\\', *o++ = 'x', *o++ = hex[c >> 4], *o++ = hex[c & 15];
        }
    }
    if (len > n)
        memcpy(o, "...", 3), o += 3;
    *o = 0;
    return buf;
}

int st_diags_full(const st_diags *d)
{
    return d->nerrors > (d->limit > 0 ? d->limit : 100);
}

/* The short list of what the parser state accepts, e.g. "'to'" or "',' or '{'"; empty when it is long or holds
 * tokens not worth naming, and the message says "unexpected X" instead. */
static void expected_list(char *buf, size_t cap, const int *ok, const char *(*spell)(int))
{
    const char *names[3];
    int n = 0;
    buf[0] = 0;
    for (int i = 1; i <= TK_BNOT; i++) {
        int binop = i >= TK_OR && i <= TK_PERCENT && i != TK_NOT;
        if (!ok[i] || (binop && ok[TK_PLUS]))
            continue; /* after a complete expression any operator could follow: not worth listing */
        if (n == 3 || !spell(i))
            return; /* too many, or one not worth naming */
        names[n++] = spell(i);
    }
    size_t o = 0;
    for (int i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
}

void st_syntax_error(st_parse_ctx *ctx, int major, st_token tok, const int *ok, int nok, const char *(*spell)(int))
{
    char q[ST_QUOTE_MAX], want[128];
    (void)nok;
    if (ctx->failed)
        return;
    ctx->failed = 1;
    expected_list(want, sizeof want, ok, spell);
    if (ok[TK_INT])
        snprintf(want, sizeof want, "expression");
    st_quote(q, tok.s, tok.len);
    if (major == 0 && ok[TK_INT])
        st_error(ctx->d, tok, "expected expression at end of input");
    else if (major == 0)
        st_error(ctx->d, tok, "unexpected end of input%s", ok[TK_RBRACE] ? " (missing '}'?)" : "");
    else if (major == TK_ALGORITHM && ok[TK_RBRACE])
        st_error(ctx->d, tok, "expected '}' before 'algorithm'");
    else if (want[0])
        st_error(ctx->d, tok, "expected %s before '%s'", want, q);
    else
        st_error(ctx->d, tok, "unexpected '%s'", q);
}

typedef struct st_driver {
    st_parse_ctx ctx;
    st_lexer lx;
    void *parser;
    int skipping;      /* after a failure: dropping tokens until an `algorithm` can restart */
    st_token last;     /* most recent token, for the position of "end of input" */
} st_driver;

static void restart(st_driver *dr)
{
    st_ParseFinalize(dr->parser);
    st_ParseInit(dr->parser, &dr->ctx);
    dr->ctx.failed = 0;
    dr->ctx.depth = 0;
    dr->skipping = 0;
}

/* Brackets are counted before the parser sees them, so the limit holds however the grammar nests. */
static int nesting_ok(st_driver *dr, int code, st_token t)
{
    if (code == TK_LBRACE || code == TK_LPAREN) {
        if (++dr->ctx.depth > ST_MAX_NESTING) {
            if (!dr->skipping && !dr->ctx.failed)
                st_error(dr->ctx.d, t, "nesting deeper than %d", ST_MAX_NESTING);
            return 0;
        }
    } else if ((code == TK_RBRACE || code == TK_RPAREN) && dr->ctx.depth > 0) {
        dr->ctx.depth--;
    }
    return 1;
}

/* An `algorithm` can restart parsing when it is outside every bracket or at the start of a line. */
static int can_restart(const st_driver *dr, int code, st_token t)
{
    return code == TK_ALGORITHM && (dr->ctx.depth == 0 || t.col == 1);
}

static void feed(st_driver *dr, int code, st_token t)
{
    if (dr->skipping && can_restart(dr, code, t))
        restart(dr);
    if (!nesting_ok(dr, code, t))
        dr->ctx.failed = 1;
    if (dr->skipping || dr->ctx.failed) {
        dr->skipping = 1;
        return;
    }
    dr->ctx.tok = t;
    st_Parse(dr->parser, code, t);
    if (dr->ctx.failed) {
        dr->skipping = 1;
        if (can_restart(dr, code, t)) { /* `algorithm` ended a broken definition: it starts the next one */
            restart(dr);
            feed(dr, code, t);
        }
    }
}

static void run(st_driver *dr)
{
    st_token t = {0};
    int code;
    dr->last = (st_token){dr->ctx.file->src, 0, 1, 1, 0};
    while ((code = st_lex(&dr->lx, &t)) != 0) {
        feed(dr, code, t);
        dr->last = t;
    }
    if (dr->skipping || st_diags_full(dr->ctx.d))
        return;
    t = dr->last; /* end of input: just after the last token */
    t.s += t.len, t.col += t.len, t.len = 0;
    dr->ctx.tok = t;
    st_Parse(dr->parser, 0, t);
}

/* The parse proper; -1 when the arena ran out of memory inside a grammar action. */
static int run_guarded(st_driver *dr)
{
    if (setjmp(dr->ctx.oom))
        return -1;
    run(dr);
    return 0;
}

static st_file *file_new(const char *path, const char *src, size_t len)
{
    st_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = strdup(path ? path : "");
    f->src = malloc(len + 1);
    f->arena = st_arena_new();
    if (!f->path || !f->src || !f->arena) {
        st_file_free(f);
        return NULL;
    }
    if (len)
        memcpy(f->src, src, len);
    f->src[len] = 0;
    f->len = len;
    return f;
}

st_file *st_parse(const char *path, const char *src, size_t len, st_diags *d)
{
    if (len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0)
        src += 3, len -= 3; /* a UTF-8 byte-order mark, as some editors write: not part of the text */
    st_file *f = file_new(path, src, len);
    if (!f) {
        st_diag_add(d, ST_SEV_ERROR, 0, 0, "out of memory");
        return NULL;
    }
    d->src = f->src;
    d->len = f->len;
    st_driver *dr = calloc(1, sizeof *dr);
    if (dr) {
        dr->ctx.file = f;
        dr->ctx.tail = &f->algos;
        dr->ctx.d = d;
        st_lex_init(&dr->lx, f->src, f->len, d);
        dr->parser = st_ParseAlloc(malloc, &dr->ctx);
    }
    if (!dr || !dr->parser || run_guarded(dr) < 0) {
        if (dr && dr->parser)
            st_ParseFree(dr->parser, free);
        free(dr);
        d->src = NULL, d->len = 0; /* the text goes with the file */
        st_file_free(f);
        st_diag_add(d, ST_SEV_ERROR, 0, 0, "out of memory");
        return NULL;
    }
    st_ParseFree(dr->parser, free);
    free(dr);
    return f;
}

int st_read_source(const char *path, char **text, size_t *len, char *why, size_t whycap)
{
    return st_read_regular(path, ST_MAX_SOURCE, "source file", text, len, why, whycap);
}

st_file *st_parse_path(const char *path, st_diags *d)
{
    size_t len;
    char *buf, why[160];
    if (st_read_source(path, &buf, &len, why, sizeof why) != 0) {
        st_diag_add(d, ST_SEV_ERROR, 0, 0, "%s", why);
        return NULL;
    }
    st_file *f = st_parse(path, buf, len, d);
    free(buf);
    return f;
}
