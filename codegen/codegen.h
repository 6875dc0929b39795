/* codegen.h - what stitchc produces from a compiled catalogue: C step tables, and views of a schedule for people.
 *
 * Both start from the in-memory st_catalogue that st_compile returns (dsl/sema.h), so what is emitted, shown and
 * verified is one and the same thing. The C emitter writes the catalogue back out as static const data that the
 * runtime links (runtime/steptab.h is the contract); the views instantiate a schedule with st_sched_build
 * (runtime/sched.h), exactly as the runtime does, and print it as a table or as JSON. Neither re-derives a
 * schedule on its own.
 */
#ifndef ST_CODEGEN_H
#define ST_CODEGEN_H

#include <stdio.h>

#include "sched.h"
#include "steptab.h"

/* The name of an opcode as written in steptab.h without the ST_OP_ prefix ("PUSH", "SET_RANGE", ...), or "?"
 * when out of range. Used in the emitted tables' comments and in disassembly. */
const char *st_opcode_name(int op);

/* Non-zero when `s` is a valid C identifier (the emitter's --symbol). */
int st_c_identifier_ok(const char *s);

/* Write `cat` as C source defining `const st_catalogue <symbol>` to c_out, and, when h_out is not NULL, a header
 * declaring it. The output depends on the catalogue and the symbol only (no dates, no host names), so the same
 * input gives a byte-identical file. Returns 0, or -1 when the symbol is not a C identifier or a write failed. */
int st_emit_c(const st_catalogue *cat, const char *symbol, FILE *c_out, FILE *h_out);

/* The formats st_show knows, for help texts: "table" and "json". */
#define ST_SHOW_FORMATS "table, json"

/* Instantiate `algo` for p ranks and print its schedule to `out`:
 *   table  a header line, then per step one line per rank: its sends, then its receives
 *            # ring all_reduce, p = 5, U = 5 units, 8 steps
 *            step 0  r0: ->r1 {4} reduce   <-r4 {3} reduce
 *   json   exactly one JSON object; units as half-open [start, end) ranges, transfers in schedule order
 * Returns 0, or -1 with a message in err (unknown format, the schedule cannot be built, a write failed). */
int st_show(const st_catalogue *cat, const st_algo *algo, int p, const char *format, FILE *out, st_err *err);

/* The same for a full instantiation: a root for rooted collectives, groups for topology queries. The views then
 * name the root (table header; "root" key in JSON, present only for rooted collectives) and the group sizes
 * (table header; "groups" key in JSON, present only when in->topo is set). */
int st_show_ex(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const char *format, FILE *out,
               st_err *err);

#endif
