/* frontend.h - text to syntax tree.
 *
 * st_parse runs the re2c lexer and the lemon parser over a whole buffer. It never crashes, hangs or aborts on
 * any input: NUL bytes, invalid UTF-8, binary garbage, megabyte lines and deep nesting (limit ST_MAX_NESTING,
 * reported as an error) all end in diagnostics. It records every error where recovery is sensible (the parser
 * resynchronises at the next statement or algorithm), so one run shows them all. A leading UTF-8 byte-order mark
 * is dropped before lexing (editors on Windows write one), so columns on line 1 count from after it. Files are
 * read by st_read_source, which accepts only regular files of at most ST_MAX_SOURCE bytes.
 */
#ifndef ST_FRONTEND_H
#define ST_FRONTEND_H

#include "ast.h"
#include "diag.h"

#define ST_MAX_NESTING 200        /* brackets, braces and parentheses open at once */
#define ST_MAX_SOURCE (16 << 20)  /* bytes in a source file: 16 MiB, many times the catalogue */

/* Parse `len` bytes of `src` (which need not be NUL-terminated) read from `path`. Always returns a file (its
 * algorithm list may be partial or empty when there were errors) unless out of memory (NULL). Errors and
 * warnings go to `d`, which must be initialised with the same path; st_parse points d->src at the file's own
 * copy of the text so diagnostics can show source lines. Free with st_file_free (after printing `d`). */
st_file *st_parse(const char *path, const char *src, size_t len, st_diags *d);

/* Read the whole of a regular file of at most ST_MAX_SOURCE bytes into a malloc'd buffer (*text, *len).
 * The file is opened without blocking and then checked through its descriptor, so a FIFO, a device (/dev/zero,
 * a terminal) or a directory is refused at once rather than read forever, and nothing can be swapped in between
 * a check and the open. Returns 0; -1 when the file cannot be opened (errno set); -2 when it is not a regular
 * file, is too large or cannot be read. On failure `why` holds the reason as a message (`cannot read: ...`,
 * `not a regular file (a FIFO or pipe); ...`, `file too large (...); the limit for a source file is 16 MiB`). */
int st_read_source(const char *path, char **text, size_t *len, char *why, size_t whycap);

/* st_read_source and st_parse. On a read failure adds `path: error: <why>` and returns NULL. */
st_file *st_parse_path(const char *path, st_diags *d);

#endif
