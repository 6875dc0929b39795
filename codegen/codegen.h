/* codegen.h - what stitchc produces from a compiled catalogue: C step tables, and views of a schedule for people.
 *
 * Both start from the in-memory st_catalogue that st_compile returns (dsl/sema.h), so what is emitted, shown and
 * verified is one and the same thing. The C emitter writes the catalogue back out as static const data that the
 * runtime links (core/st_steptab.h is the contract); the views instantiate a schedule with st_sched_build
 * (core/st_sched.h), exactly as the runtime does, and print it as a table, as JSON, or draw it (SVG, Graphviz DOT).
 * Neither re-derives a schedule on its own.
 */
#ifndef ST_CODEGEN_H
#define ST_CODEGEN_H

#include <stdio.h>

#include "st_model.h"
#include "st_sched.h"
#include "st_steptab.h"

/* The name of an opcode as written in st_steptab.h without the ST_OP_ prefix ("PUSH", "SET_RANGE", ...), or "?"
 * when out of range. Used in the emitted tables' comments and in disassembly. */
const char *st_opcode_name(int op);

/* Non-zero when `s` is a valid C identifier (the emitter's --symbol). */
int st_c_identifier_ok(const char *s);

/* Write `cat` as C source defining `const st_catalogue <symbol>` to c_out, and, when h_out is not NULL, a header
 * declaring it. The output depends on the catalogue and the symbol only (no dates, no host names), so the same
 * input gives a byte-identical file. Returns 0, or -1 when the symbol is not a C identifier or a write failed
 * or memory ran out. */
int st_emit_c(const st_catalogue *cat, const char *symbol, FILE *c_out, FILE *h_out);

/* Write C for the functions of `cat` that are arithmetic on their parameters and p only (emit_native.c), named
 * <sym>_native_<index>, and set entry[f] = 1 (nfuncs bytes) for each one-parameter function f that has an entry
 * `<sym>_native_entry_<f>` of type st_native_fn. The output needs st_arith.h. Returns 0, or -1 out of memory. */
int st_emit_native(FILE *out, const st_catalogue *cat, const char *sym, unsigned char *entry);

/* The formats st_show knows, for help texts, and a check for the driver (non-zero when st_show accepts it). */
#define ST_SHOW_FORMATS "table, json, svg, dot, holdings"
int st_show_format_known(const char *format);

/* The pictures draw every rank, so they stop at this many ranks (a table or JSON has no such limit). */
#define ST_SHOW_PICTURE_MAX_RANKS 256

/* Instantiate `algo` for p ranks and print its schedule to `out`:
 *   table  a header line, then per step one line per rank: its sends, then its receives
 *            # ring all_reduce, p = 5, U = 5 units, 8 steps
 *            step 0  r0: ->r1 {4} reduce   <-r4 {3} reduce
 *   json   exactly one JSON object; units as half-open [start, end) ranges, transfers in schedule order
 *   svg    a standalone SVG 1.1 picture: ranks as lanes, steps as columns, one arrow per transfer (show_svg.c)
 *   dot    a Graphviz digraph: one node per (rank, step boundary), one edge per transfer (show_svg.c)
 *   holdings  what each unit of each rank holds after each step (dsl/verify.h: st_verify_holdings)
 * Returns 0, or -1 with a message in err (unknown format, the schedule cannot be built, a write failed). */
int st_show(const st_catalogue *cat, const st_algo *algo, int p, const char *format, FILE *out, st_err *err);

/* The same for a full instantiation: a root for rooted collectives, groups for topology queries. The views then
 * name the root (table header; "root" key in JSON, present only for rooted collectives) and the group sizes
 * (table header; "groups" key in JSON, present only when in->topo is set). */
int st_show_ex(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const char *format, FILE *out,
               st_err *err);

/* ---- shared by the views (show.c, show_svg.c) ---- */

/* The heading of every view, without a newline: `ring all_reduce, p = 5, U = 5 units, 8 steps`, with
 * `, root = R` for rooted collectives and `, groups 2+3` when in->topo is set. */
void st_show_heading(FILE *out, const st_sched *s, const st_inst *in);

/* x's units as a compact set, `{0..3,7}`. limit > 0 leaves out whole runs past `limit` characters and ends with
 * `,...}` (`{0..3,7,...}`); 0 writes all. out may be NULL to measure. Returns the number of characters. */
int st_show_units(FILE *out, const st_sched *s, const st_xfer *x, int limit);

/* The picture writers, as st_show_ex calls them with a built schedule; 0, or -1 when out of memory. */
int st_show_svg(const st_sched *s, const st_inst *in, FILE *out);
int st_show_dot(const st_sched *s, const st_inst *in, FILE *out);

/* ---- stitchc sim: a cost-model prediction (sim_out.c) ---- */

#define ST_SIM_FORMATS "table, json, svg"
int st_sim_format_known(const char *format);

/* What the prediction was for, as the writer names it. */
typedef struct st_sim_info {
    const char *algo;      /* the algorithm as run (after HCCL_ALGO) */
    int coll;
    double bytes;          /* the collective's n (st_model_predict) */
    const char *topo_name; /* "flat", a layout or a file */
} st_sim_info;

/* Write r as a table, one JSON object, or an SVG timeline per rank (r->rank_time needed: -1 without it). */
int st_sim_write(const st_model_result *r, const st_sim_info *info, const char *format, FILE *out);

#endif
