/* diag.c - collecting diagnostics and printing them the way gcc does.
 *
 * Messages are formatted when added (so callers may pass views that die soon after) and printed together at the
 * end with the source line and a caret. The error limit lives here so every stage shares it: errors past the
 * limit are counted but not kept, and the first one dropped adds a note. Printing never trusts a position: a
 * line or column outside the text just omits the source line or clamps the caret. Names quoted in a message are
 * cut at ST_DIAG_WORD_MAX bytes (the source line under it is a window of ST_SHOW_MAX), so no diagnostic grows
 * with the input.
 */
#include <stdlib.h>
#include <string.h>

#include "diag.h"

#define ST_DEFAULT_LIMIT 100
#define ST_SHOW_MAX 240 /* longest excerpt of a source line shown under a message */

void st_diags_init(st_diags *d, const char *path, const char *src, size_t len)
{
    memset(d, 0, sizeof *d);
    d->path = path;
    d->src = src;
    d->len = len;
}

void st_diags_free(st_diags *d)
{
    for (int i = 0; i < d->n; i++)
        free(d->v[i].msg);
    free(d->v);
    d->v = NULL;
    d->n = d->cap = 0;
}

static void push(st_diags *d, st_severity sev, int line, int col, char *msg)
{
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 16;
        st_diag *v = realloc(d->v, (size_t)cap * sizeof *v);
        if (!v) {
            free(msg);
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = (st_diag){sev, line, col, msg};
}

static int word_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* `msg` with every run of identifier bytes longer than ST_DIAG_WORD_MAX cut to that many and "...": a message
 * quotes names from the source, and a megabyte identifier must not come back a megabyte long. Frees msg. */
static char *clip_words(char *msg)
{
    size_t n = strlen(msg), run = 0, o = 0;
    char *out = malloc(n + n / ST_DIAG_WORD_MAX * 3 + 4);
    if (!out)
        return msg; /* unclipped beats lost */
    for (size_t i = 0; i <= n; i++) {
        run = i < n && word_byte(msg[i]) ? run + 1 : 0;
        if (run <= ST_DIAG_WORD_MAX)
            out[o++] = msg[i];
        else if (run == ST_DIAG_WORD_MAX + 1)
            memcpy(out + o, "...", 3), o += 3;
    }
    free(msg);
    return out;
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

void st_diag_vadd(st_diags *d, st_severity sev, int line, int col, const char *fmt, va_list ap)
{
    if (sev == ST_SEV_ERROR) {
        int limit = d->limit > 0 ? d->limit : ST_DEFAULT_LIMIT;
        if (d->nerrors < 0x7fffffff)
            d->nerrors++;
        if (d->nerrors == limit + 1) {
            char *note = strdup("too many errors; stopping");
            if (note)
                push(d, ST_SEV_NOTE, 0, 0, note);
        }
        if (d->nerrors > limit)
            return;
    }
    char *msg = vformat(fmt, ap);
    if (msg)
        push(d, sev, line, col, clip_words(msg));
}

void st_diag_add(st_diags *d, st_severity sev, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st_diag_vadd(d, sev, line, col, fmt, ap);
    va_end(ap);
}

/* Start of line `line` (1-based) in the text and its length, or NULL when there is no such line. */
static const char *find_line(const st_diags *d, int line, size_t *len)
{
    const char *p = d->src, *end = d->src + d->len;
    for (int l = 1; l < line; l++) {
        p = memchr(p, '\n', (size_t)(end - p));
        if (!p)
            return NULL;
        p++;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *len = (size_t)((nl ? nl : end) - p);
    return p;
}

/* The source line (a window of it when long) and a caret under byte column `col`. Control bytes other than tab
 * are shown as spaces so the terminal is not disturbed and the caret still lines up. */
static void show_line(const st_diags *d, FILE *out, int line, int col)
{
    size_t len, c = col > 0 ? (size_t)col - 1 : 0, from = 0;
    const char *s = d->src ? find_line(d, line, &len) : NULL;
    if (!s)
        return;
    if (c > len)
        c = len;
    if (len > ST_SHOW_MAX && c > ST_SHOW_MAX / 2)
        from = c - ST_SHOW_MAX / 2;
    size_t to = len - from > ST_SHOW_MAX ? from + ST_SHOW_MAX : len;
    fprintf(out, "%5d | %s", line, from ? "..." : "");
    for (size_t i = from; i < to; i++) {
        unsigned char b = (unsigned char)s[i];
        fputc(b == '\t' || b >= 0x20 ? b : ' ', out);
    }
    fprintf(out, "%s\n      | %s", to < len ? "..." : "", from ? "   " : "");
    for (size_t i = from; i < c; i++)
        fputc(s[i] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

/* Every diagnostic's first line; with `source`, each followed by its source line and a caret. */
static void print_all(const st_diags *d, FILE *out, int source)
{
    static const char *const names[] = {"error", "warning", "note"};
    const char *path = d->path ? d->path : "<input>";
    for (int i = 0; i < d->n; i++) {
        const st_diag *g = &d->v[i];
        const char *sev = (unsigned)g->sev < 3 ? names[g->sev] : "error";
        if (g->line > 0) {
            fprintf(out, "%s:%d:%d: %s: %s\n", path, g->line, g->col, sev, g->msg);
            if (source)
                show_line(d, out, g->line, g->col);
        } else {
            fprintf(out, "%s: %s: %s\n", path, sev, g->msg);
        }
    }
}

void st_diags_print(const st_diags *d, FILE *out)
{
    print_all(d, out, 1);
}

void st_diags_print_brief(const st_diags *d, FILE *out)
{
    print_all(d, out, 0);
}
