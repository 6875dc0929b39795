/* diag.h - compiler diagnostics, printed like gcc.
 *
 *   algos.dsl:41:17: error: unknown name 'grp'
 *      41 |     send unit grp to r + 1
 *         |               ^
 *
 * Every stage (lexer, parser, sema, verifier) appends to one st_diags; the driver prints them all at the end and
 * exits 1 when any is an error. The source text is kept by reference so the printer can show the line.
 */
#ifndef ST_DIAG_H
#define ST_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* A message keeps at most this many bytes of one name (a run of letters, digits and '_'), then "...". */
#define ST_DIAG_WORD_MAX 64

typedef enum st_severity { ST_SEV_ERROR, ST_SEV_WARNING, ST_SEV_NOTE } st_severity;

typedef struct st_diag {
    st_severity sev;
    int line, col;   /* 1-based; 0 when the message has no position */
    char *msg;       /* owned */
} st_diag;

typedef struct st_diags {
    const char *path; /* for printing; not owned */
    const char *src;  /* for showing the line; not owned, may be NULL */
    size_t len;
    st_diag *v;
    int n, cap;
    int nerrors;
    int limit;        /* stop recording errors after this many (0 = 100); a note says so */
} st_diags;

void st_diags_init(st_diags *d, const char *path, const char *src, size_t len);
void st_diags_free(st_diags *d);

/* Append a diagnostic. Formats with printf rules. Never fails (drops the message when out of memory). */
void st_diag_add(st_diags *d, st_severity sev, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void st_diag_vadd(st_diags *d, st_severity sev, int line, int col, const char *fmt, va_list ap);
#define st_error(d, pos, ...) st_diag_add((d), ST_SEV_ERROR, (pos).line, (pos).col, __VA_ARGS__)

/* Print all, in the order added, as `path:line:col: error: msg`, then the source line and a caret. */
void st_diags_print(const st_diags *d, FILE *out);
/* The same without the source lines: one `path:line:col: error: msg` line each (for messages kept in a buffer). */
void st_diags_print_brief(const st_diags *d, FILE *out);

#endif
