/* sema.h - checking a parsed file and lowering it to step-table bytecode.
 *
 * st_compile resolves names (let, fn, loop variables, p, r, U, built-in functions, collectives, phase targets),
 * checks arity and placement (send only inside a step, step and units only at algorithm level, ...), reports every
 * error it finds with its position, and, when there is none, returns the catalogue: the same st_catalogue the
 * runtime reads from the generated C tables. The verifier, `stitchc show` and the emitter all start from it.
 */
#ifndef ST_SEMA_H
#define ST_SEMA_H

#include "ast.h"
#include "diag.h"
#include "st_steptab.h"

/* Returns a heap catalogue (free with st_catalogue_free) or NULL when there were errors (all in `d`). */
st_catalogue *st_compile(const st_file *f, st_diags *d);
void st_catalogue_free(st_catalogue *c);

/* Find an algorithm by name (case-insensitive) and collective (-1: the first of that name). NULL if none. */
const st_algo *st_catalogue_find(const st_catalogue *c, const char *name, int coll);

#endif
