/* compile.h - one .dsl file to a catalogue: read, parse, compile (the front end's whole pipeline, in one place).
 *
 * `stitchc` (every subcommand) and the runtime's loader (runtime/catalogue.c: stitch_catalogue_load and
 * STITCH_ALGO_FILE) both call st_unit_compile, so a file is read with the same limits (st_read_source: regular
 * files of at most 16 MiB, opened without blocking), parsed and checked with the same rules, and gives the same
 * st_catalogue, hash included, whether it is emitted as C tables or compiled when a program runs.
 */
#ifndef ST_COMPILE_H
#define ST_COMPILE_H

#include "ast.h"
#include "diag.h"
#include "st_steptab.h"

/* The parsed file and its catalogue. The syntax tree is kept until st_unit_free because the diagnostics show its
 * text. */
typedef struct st_unit {
    st_diags d;        /* every diagnostic, not yet printed */
    st_file *f;        /* NULL when the file could not be read, or out of memory */
    st_catalogue *cat; /* NULL when there were errors */
    int open_errno;    /* the file could not be opened at all (errno; nothing in d): the caller says so its way */
} st_unit;

/* Read, parse and compile `path` (kept by reference: it must outlive u). Returns 0 when the catalogue was made
 * without errors; otherwise -1 with the reasons in u->d (a file that is not regular or too large is
 * `PATH: error: why`) or, for a file that cannot be opened, u->open_errno. Out of memory is an error in u->d.
 * Always call st_unit_free. */
int st_unit_compile(st_unit *u, const char *path);
void st_unit_free(st_unit *u);

/* st_diags_print_brief into a malloc'd string (`PATH:LINE:COL: error: message` lines, each ending in '\n'); NULL
 * when out of memory. For messages that go into a buffer rather than to a terminal. */
char *st_diags_brief(const st_diags *d);

#endif
