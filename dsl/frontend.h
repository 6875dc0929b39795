/* frontend.h - text to syntax tree.
 *
 * st_parse runs the re2c lexer and the lemon parser over a whole buffer. It never crashes, hangs or aborts on
 * any input: NUL bytes, invalid UTF-8, binary garbage, megabyte lines and deep nesting (limit ST_MAX_NESTING,
 * reported as an error) all end in diagnostics. It records every error where recovery is sensible (the parser
 * resynchronises at the next statement or algorithm), so one run shows them all.
 */
#ifndef ST_FRONTEND_H
#define ST_FRONTEND_H

#include "ast.h"
#include "diag.h"

#define ST_MAX_NESTING 200 /* brackets, braces and parentheses open at once */

/* Parse `len` bytes of `src` (which need not be NUL-terminated) read from `path`. Always returns a file (its
 * algorithm list may be partial or empty when there were errors) unless out of memory (NULL). Errors and
 * warnings go to `d`, which must be initialised with the same path; st_parse points d->src at the file's own
 * copy of the text so diagnostics can show source lines. Free with st_file_free (after printing `d`). */
st_file *st_parse(const char *path, const char *src, size_t len, st_diags *d);

/* Read a whole file and parse it. On a read error, adds `path: error: cannot read: <strerror>` and returns NULL. */
st_file *st_parse_path(const char *path, st_diags *d);

#endif
