/* emit_native.c - rank-free functions as C (`stitchc emit`): what a layout such as NHR's tree map costs at scale.
 *
 * A layout function is evaluated once per unit, p units, each evaluation a recursion of log p calls: on the step
 * machine that was 31-37 ms of a plan at p = 8,192 and past the fuel at p = 1,000,000. A function whose code is
 * arithmetic on its parameters and p only (PUSH, CONST, LOAD, STORE, P, DUP, POP, the binary and unary operators,
 * forward JMP and JZ, CALL of another such function, RET 1) is written here as a C function that computes exactly
 * what the machine computes: the same operations of st_arith.h, in the same order, on the same values.
 *
 * A native function never explains a failure. Division by zero, overflow, ST_MAX_CALL_DEPTH nested calls or more
 * than ST_NATIVE_CALLS calls make it return -1, and the machine then evaluates the function itself and says
 * what went wrong and where (core/st_vm.c, layout_table). So a native function either agrees with the machine or
 * leaves the answer to it.
 *
 * A call of the function itself whose result it returns at once becomes a jump back to its start, as a loop
 * (NHR's place recurses once per round); every pass still counts as a call, and as one level deeper, so the
 * loop stops where the machine's recursion would (its call depth counted from the function: the machine also
 * counts the frames below, so a native function may finish a little deeper than the machine could; where it
 * does, it computes the value the machine would have had room to compute).
 *
 * The analysis is a single forward pass (jumps go forward only): every instruction reached gets the stack depth
 * it runs at, which must agree where paths meet; a stack value becomes a local named by that depth, a slot a
 * local named by its number, so the C compiler keeps both in registers. Labels are written only where a jump
 * lands, so the output stays warning-free under -Wall -Wextra -pedantic.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

#define NATIVE_MAX_CODE 4096 /* instructions of one function */
#define NATIVE_MAX_STACK 64  /* stack depth inside one function */

static int is_binary(int op) { return op >= ST_OP_ADD && op <= ST_OP_LCM; }
static int is_unary(int op) { return op >= ST_OP_NEG && op <= ST_OP_POW2; }

/* One function's shape: the stack depth at each of its instructions (-1: not reached), its extent, its deepest
 * stack, and the instructions that are jump targets. */
typedef struct shape {
    int32_t begin, end; /* [begin, end) in the catalogue's code */
    int depth[NATIVE_MAX_CODE];
    unsigned char target[NATIVE_MAX_CODE];
    int maxdepth;
} shape;

/* Depth after `in` at depth d, or -1 when the instruction is not one a native function may run. */
static int stack_after(const st_catalogue *cat, const st_insn *in, int d)
{
    int op = in->op;
    if (op == ST_OP_PUSH || op == ST_OP_CONST || op == ST_OP_LOAD || op == ST_OP_P || op == ST_OP_DUP)
        return op == ST_OP_DUP && d < 1 ? -1 : d + 1;
    if (op == ST_OP_STORE || op == ST_OP_POP || op == ST_OP_JZ)
        return d >= 1 ? d - 1 : -1;
    if (is_binary(op))
        return d >= 2 ? d - 1 : -1;
    if (is_unary(op) || op == ST_OP_JMP)
        return op == ST_OP_JMP || d >= 1 ? d : -1;
    if (op == ST_OP_CALL) {
        if (in->a < 0 || in->a >= cat->nfuncs)
            return -1;
        int n = cat->funcs[in->a].nparams;
        return d >= n ? d - n + 1 : -1;
    }
    return -1;
}

static int reach(shape *s, int32_t pc, int d)
{
    int32_t i = pc - s->begin;
    if (i < 0 || i >= NATIVE_MAX_CODE || d > NATIVE_MAX_STACK)
        return -1;
    if (s->depth[i] >= 0)
        return s->depth[i] == d ? 0 : -1; /* paths meet at different depths */
    s->depth[i] = d;
    if (d > s->maxdepth)
        s->maxdepth = d;
    return 0;
}

/* Fill s for function f from its code alone (calls are checked later); -1 when it is not native material. */
static int shape_of(const st_catalogue *cat, int32_t f, shape *s)
{
    const st_func *fn = &cat->funcs[f];
    memset(s, 0, sizeof *s);
    memset(s->depth, -1, sizeof s->depth);
    s->begin = fn->entry;
    if (fn->nparams < 0 || fn->nslots < fn->nparams || fn->entry < 0 || fn->entry >= cat->ncode)
        return -1;
    if (reach(s, fn->entry, 0))
        return -1;
    int32_t last = fn->entry; /* the furthest instruction some path still reaches */
    for (int32_t pc = fn->entry; pc <= last; pc++) {
        if (pc >= cat->ncode || pc - s->begin >= NATIVE_MAX_CODE)
            return -1;
        int d = s->depth[pc - s->begin];
        if (d < 0)
            continue;
        const st_insn *in = &cat->code[pc];
        if (in->op == ST_OP_RET) {
            if (in->a != 1 || d < 1)
                return -1;
            continue;
        }
        if ((in->op == ST_OP_LOAD || in->op == ST_OP_STORE) && (in->a < 0 || in->a >= fn->nslots))
            return -1;
        if (in->op == ST_OP_CONST && (in->a < 0 || in->a >= cat->nconsts))
            return -1;
        int after = stack_after(cat, in, d);
        if (after < 0)
            return -1;
        if (in->op == ST_OP_JMP || in->op == ST_OP_JZ) {
            if (in->a <= pc || reach(s, in->a, after))
                return -1; /* backward: a loop, which the machine's fuel bounds and C would not */
            s->target[in->a - s->begin] = 1;
            if (in->a > last)
                last = in->a;
        }
        if (in->op != ST_OP_JMP) {
            if (reach(s, pc + 1, after))
                return -1;
            if (pc + 1 > last)
                last = pc + 1;
        }
    }
    s->end = last + 1;
    return 0;
}

/* ok[f] = 1 for the functions that can be native: their own code qualifies and every function they call does. */
static void native_set(const st_catalogue *cat, unsigned char *ok, shape *scratch)
{
    for (int32_t f = 0; f < cat->nfuncs; f++)
        ok[f] = shape_of(cat, f, scratch) == 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t f = 0; f < cat->nfuncs; f++) {
            if (!ok[f])
                continue;
            shape_of(cat, f, scratch);
            for (int32_t pc = scratch->begin; pc < scratch->end; pc++)
                if (scratch->depth[pc - scratch->begin] >= 0 && cat->code[pc].op == ST_OP_CALL &&
                    !ok[cat->code[pc].a]) {
                    ok[f] = 0;
                    changed = 1;
                    break;
                }
        }
    }
}

/* used[f] = 1 for the functions written out: the one-parameter ones (the table names them) and what they call. */
static void used_set(const st_catalogue *cat, const unsigned char *ok, unsigned char *used, shape *scratch)
{
    for (int32_t f = 0; f < cat->nfuncs; f++)
        used[f] = ok[f] && cat->funcs[f].nparams == 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t f = 0; f < cat->nfuncs; f++) {
            if (!used[f])
                continue;
            shape_of(cat, f, scratch);
            for (int32_t pc = scratch->begin; pc < scratch->end; pc++)
                if (scratch->depth[pc - scratch->begin] >= 0 && cat->code[pc].op == ST_OP_CALL &&
                    !used[cat->code[pc].a]) {
                    used[cat->code[pc].a] = 1;
                    changed = 1;
                }
        }
    }
}

static void put_value(FILE *out, int64_t v)
{
    if (v == INT64_MIN)
        fputs("(-INT64_C(9223372036854775807) - 1)", out);
    else
        fprintf(out, "INT64_C(%" PRId64 ")", v);
}

/* One instruction at stack depth d (the slots are v0, v1, ..., the stack s0, s1, ...; t a call's result). */
static void put_insn(FILE *out, const st_catalogue *cat, const char *sym, const st_insn *in, int d)
{
    int op = in->op;
    fprintf(out, "    ");
    switch (op) {
    case ST_OP_PUSH: fprintf(out, "s%d = %d;", d, (int)in->a); break;
    case ST_OP_CONST: fprintf(out, "s%d = ", d); put_value(out, cat->consts[in->a]); fputc(';', out); break;
    case ST_OP_LOAD: fprintf(out, "s%d = v%d;", d, (int)in->a); break;
    case ST_OP_STORE: fprintf(out, "v%d = s%d;", (int)in->a, d - 1); break;
    case ST_OP_P: fprintf(out, "s%d = c->p;", d); break;
    case ST_OP_DUP: fprintf(out, "s%d = s%d;", d, d - 1); break;
    case ST_OP_POP: fputc(';', out); break;
    case ST_OP_JMP: fprintf(out, "goto L%d;", (int)in->a); break;
    case ST_OP_JZ: fprintf(out, "if (!s%d) goto L%d;", d - 1, (int)in->a); break;
    case ST_OP_RET: fprintf(out, "*out = s%d; return 0;", d - 1); break;
    case ST_OP_CALL: {
        int n = cat->funcs[in->a].nparams;
        fprintf(out, "if (%s_native_%d(c, depth + 1, ", sym, (int)in->a);
        for (int i = 0; i < n; i++)
            fprintf(out, "s%d, ", d - n + i);
        fprintf(out, "&t))\n        return -1;\n    s%d = t;", d - n);
        break;
    }
    default:
        if (is_binary(op))
            fprintf(out, "if (st_ar_binary(%d, s%d, s%d, &s%d)) return -1;", op, d - 2, d - 1, d - 2);
        else
            fprintf(out, "if (st_ar_unary(%d, s%d, &s%d)) return -1;", op, d - 1, d - 1);
    }
    fprintf(out, " /* %s */\n", st_opcode_name(op));
}

/* The parameters arrive as the slots v0, v1, ... they are. */
static void put_signature(FILE *out, const st_catalogue *cat, const char *sym, int32_t f)
{
    fprintf(out, "static int %s_native_%d(st_native_ctx *c, int depth, ", sym, (int)f);
    for (int i = 0; i < cat->funcs[f].nparams; i++)
        fprintf(out, "int64_t v%d, ", i);
    fputs("int64_t *out)", out);
}

/* Declarations of the names up to n (exclusive) from `first`: `    int64_t s0 = 0, s1 = 0;`. */
static void put_locals(FILE *out, char prefix, int first, int n)
{
    if (first >= n)
        return;
    fputs("    int64_t", out);
    for (int i = first; i < n; i++)
        fprintf(out, "%s %c%d = 0", i > first ? "," : "", prefix, i);
    fputs(";\n", out);
}

/* A call of f itself whose result f returns at once (through jumps, perhaps): the C loops instead of calling. */
static int tail_self(const st_catalogue *cat, const shape *s, int32_t f, int32_t pc)
{
    if (cat->code[pc].op != ST_OP_CALL || cat->code[pc].a != f)
        return 0;
    int32_t q = pc + 1;
    while (q < s->end && cat->code[q].op == ST_OP_JMP)
        q = cat->code[q].a;
    return q < s->end && cat->code[q].op == ST_OP_RET;
}

/* A tail call at stack depth d: the arguments become the parameters, and the body starts again (no deeper: the
 * machine's tail calls reuse their frame too, core/st_vm.c; the calls budget still bounds the loop). */
static void put_tail(FILE *out, const st_catalogue *cat, int32_t f, int d)
{
    int n = cat->funcs[f].nparams;
    fputs("   ", out);
    for (int i = 0; i < n; i++)
        fprintf(out, " v%d = s%d;", i, d - n + i);
    fputs(" goto top; /* CALL (itself, returning its result: a loop) */\n", out);
}

static void put_function(FILE *out, const st_catalogue *cat, const char *sym, int32_t f, const shape *s)
{
    const st_func *fn = &cat->funcs[f];
    fprintf(out, "/* fn %s */\n", fn->name ? fn->name : "?");
    put_signature(out, cat, sym, f);
    fputs("\n{\n", out);
    put_locals(out, 's', 0, s->maxdepth);
    put_locals(out, 'v', fn->nparams, fn->nslots);
    int calls = 0, tail = 0;
    for (int32_t pc = s->begin; pc < s->end; pc++)
        if (s->depth[pc - s->begin] >= 0) {
            int self = tail_self(cat, s, f, pc);
            tail |= self;
            calls |= cat->code[pc].op == ST_OP_CALL && !self;
        }
    if (calls)
        fputs("    int64_t t = 0;\n", out);
    if (tail)
        fputs("top:\n", out);
    fputs("    if (depth >= ST_MAX_CALL_DEPTH || --c->calls < 0)\n        return -1;\n", out);
    for (int32_t pc = s->begin; pc < s->end; pc++) {
        int d = s->depth[pc - s->begin];
        if (s->target[pc - s->begin])
            fprintf(out, "L%d:;\n", (int)pc);
        if (d >= 0 && tail_self(cat, s, f, pc))
            put_tail(out, cat, f, d);
        else if (d >= 0)
            put_insn(out, cat, sym, &cat->code[pc], d);
    }
    fputs("}\n\n", out);
}

/* The entry the function table names: p and the argument, a fresh call budget. */
static void put_entry(FILE *out, const char *sym, int32_t f)
{
    fprintf(out,
            "static int %s_native_entry_%d(int64_t p, int64_t x, int64_t *out)\n{\n"
            "    st_native_ctx c = {p, ST_NATIVE_CALLS};\n"
            "    return %s_native_%d(&c, 0, x, out);\n}\n\n",
            sym, (int)f, sym, (int)f);
}

int st_emit_native(FILE *out, const st_catalogue *cat, const char *sym, unsigned char *entry)
{
    memset(entry, 0, (size_t)cat->nfuncs);
    unsigned char *ok = calloc((size_t)cat->nfuncs + 1, 2);
    shape *s = malloc(sizeof *s);
    if (!ok || !s) {
        free(ok);
        free(s);
        return -1;
    }
    unsigned char *used = ok + cat->nfuncs;
    native_set(cat, ok, s);
    used_set(cat, ok, used, s);
    int any = 0;
    for (int32_t f = 0; f < cat->nfuncs; f++)
        if (used[f]) {
            if (!any)
                fputs("/* Native rank-free functions (codegen/emit_native.c): the machine's arithmetic in C; on any "
                      "failure the\n * machine evaluates the function itself and says why. */\n",
                      out);
            any = 1;
            put_signature(out, cat, sym, f);
            fputs(";\n", out);
        }
    if (any)
        fputc('\n', out);
    for (int32_t f = 0; f < cat->nfuncs; f++)
        if (used[f]) {
            shape_of(cat, f, s);
            put_function(out, cat, sym, f, s);
            if (cat->funcs[f].nparams == 1) {
                put_entry(out, sym, f);
                entry[f] = 1;
            }
        }
    free(ok);
    free(s);
    return 0;
}
