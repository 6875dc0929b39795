/* emit_check.c - the emitted C tables are the catalogue they were emitted from.
 *
 * `stitchc emit` writes algos.dsl as C (st_test_catalogue, compiled into this program with -Werror, so the
 * emitted file must be warning-free). This program compiles the same .dsl in memory and checks, field by field,
 * that the linked catalogue equals it, then instantiates every algorithm from both for a few rank counts and
 * compares the schedules. A difference means the emitter lost or changed something the runtime would read.
 *
 * The emitted functions that are native C (codegen/emit_native.c) are run against the step machine on a grid of
 * p and arguments, edges included: both must succeed with the same value or both fail. Functions named n_* of one
 * parameter must be native and v_* must not (tests/compiler/native.dsl), and some function must be native (NHR's
 * tree map, in algos.dsl), so the comparison cannot pass by comparing nothing.
 *
 *   emit_check FILE.dsl    exit 0 when equal; otherwise one line per difference and exit 1
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "codegen.h"
#include "dsl_file.h"
#include "emitted_catalogue.h"
#include "frontend.h"
#include "sema.h"
#include "st_sched.h"
#include "st_vm.h"


static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_opcode_names(void)
{
    for (int op = 0; op < ST_OP_COUNT; op++)
        EXPECT(strcmp(st_opcode_name(op), "?") != 0, "opcode %d has no name in codegen/opcodes.c", op);
    EXPECT(strcmp(st_opcode_name(ST_OP_COUNT), "?") == 0, "st_opcode_name(ST_OP_COUNT) should be \"?\"");
}

static void check_tables(const st_catalogue *want, const st_catalogue *got)
{
    EXPECT(got->version == want->version, "version %d, want %d", got->version, want->version);
    EXPECT(same_str(got->file, want->file), "file '%s', want '%s'", got->file, want->file);
    EXPECT(got->hash == st_catalogue_hash(want) && got->hash != 0, "hash %016llx, want %016llx",
           (unsigned long long)got->hash, (unsigned long long)st_catalogue_hash(want));
    EXPECT(got->ncode == want->ncode, "ncode %d, want %d", got->ncode, want->ncode);
    for (int32_t i = 0; i < got->ncode && i < want->ncode; i++) {
        const st_insn *g = &got->code[i], *w = &want->code[i];
        EXPECT(g->op == w->op && g->a == w->a && g->line == w->line && g->col == w->col,
               "code[%d] = {%d, %d, %d, %d}, want {%d, %d, %d, %d}", i, g->op, g->a, g->line, g->col, w->op, w->a,
               w->line, w->col);
    }
    EXPECT(got->nconsts == want->nconsts, "nconsts %d, want %d", got->nconsts, want->nconsts);
    for (int32_t i = 0; i < got->nconsts && i < want->nconsts; i++)
        EXPECT(got->consts[i] == want->consts[i], "consts[%d] = %lld, want %lld", i, (long long)got->consts[i],
               (long long)want->consts[i]);
    EXPECT(got->nfuncs == want->nfuncs, "nfuncs %d, want %d", got->nfuncs, want->nfuncs);
    for (int32_t i = 0; i < got->nfuncs && i < want->nfuncs; i++) {
        const st_func *g = &got->funcs[i], *w = &want->funcs[i];
        EXPECT(same_str(g->name, w->name) && g->entry == w->entry && g->nparams == w->nparams &&
                   g->nslots == w->nslots && g->flags == w->flags, "funcs[%d] (%s) differs", i, w->name);
    }
    EXPECT(got->nalgos == want->nalgos, "nalgos %d, want %d", got->nalgos, want->nalgos);
    for (int32_t i = 0; i < got->nalgos && i < want->nalgos; i++) {
        const st_algo *g = &got->algos[i], *w = &want->algos[i];
        EXPECT(same_str(g->name, w->name) && g->coll == w->coll && g->entry == w->entry &&
                   g->nslots == w->nslots && g->line == w->line && g->flags == w->flags,
               "algos[%d] (%s) differs", i, w->name);
    }
}

/* Both catalogues give the same schedule (or the same failure) for p ranks. */
static void check_schedule(const st_catalogue *want, const st_catalogue *got, int32_t i, int p)
{
    st_sched a, b;
    st_err ea = {.msg = ""}, eb = {.msg = ""};
    int ra = st_sched_build(want, &want->algos[i], p, &a, &ea);
    int rb = st_sched_build(got, &got->algos[i], p, &b, &eb);
    EXPECT(ra == rb && strcmp(ea.msg, eb.msg) == 0, "%s, p = %d: build '%s' vs '%s'", want->algos[i].name, p,
           ea.msg, eb.msg);
    if (ra == 0 && rb == 0) {
        EXPECT(a.nunits == b.nunits && a.nsteps == b.nsteps && a.nxfers == b.nxfers && a.nruns == b.nruns &&
                   (a.nxfers == 0 || memcmp(a.xfers, b.xfers, sizeof *a.xfers * (size_t)a.nxfers) == 0) &&
                   (a.nruns == 0 || memcmp(a.runs, b.runs, sizeof *a.runs * (size_t)a.nruns) == 0),
               "%s %s, p = %d: schedules differ", want->algos[i].name, st_coll_name(want->algos[i].coll), p);
    }
    if (ra == 0)
        st_sched_free(&a);
    if (rb == 0)
        st_sched_free(&b);
}

/* Function f, native and on the machine, at x for p ranks: the same value, or both fail. */
static void check_native_at(const st_catalogue *cat, int32_t f, int p, int64_t x)
{
    st_inst in = {.p = p};
    st_err err = {.msg = ""};
    int64_t want = 0, got = 0;
    int rw = st_vm_eval(cat, f, &in, x, &want, &err);
    int rg = cat->funcs[f].native(p, x, &got);
    EXPECT(rw == rg && (rw != 0 || want == got), "%s(%lld) at p = %d: machine %s %lld (%s), native %s %lld",
           cat->funcs[f].name, (long long)x, p, rw ? "fails" : "gives", (long long)want, err.msg,
           rg ? "fails" : "gives", (long long)got);
}

static void check_natives(const st_catalogue *cat)
{
    static const int64_t edges[] = {INT64_MIN, INT64_MIN + 1, -(INT64_C(1) << 40), -1000, 199, 200, 201,
                                    INT64_C(1) << 31, INT64_C(1) << 40, INT64_MAX - 1, INT64_MAX};
    static const int ps[] = {65, 100, 127, 128, 1000, 8192};
    int natives = 0;
    for (int32_t f = 0; f < cat->nfuncs; f++) {
        const st_func *fn = &cat->funcs[f];
        if (fn->name && fn->nparams == 1 && strncmp(fn->name, "n_", 2) == 0)
            EXPECT(fn->native, "%s is not native", fn->name);
        if (fn->name && strcmp(fn->name, "spin") == 0)
            EXPECT(fn->native, "spin (a loop the budgets end) is not native");
        if (fn->name && strncmp(fn->name, "v_", 2) == 0)
            EXPECT(!fn->native, "%s is native, but it asks the machine (a let, the topology)", fn->name);
        if (!fn->native)
            continue;
        natives++;
        if (fn->name && strcmp(fn->name, "spin") == 0) { /* the machine runs out of fuel: 2^28 instructions */
            check_native_at(cat, f, 4, 1000);
            check_native_at(cat, f, 4, INT64_MAX);
            continue;
        }
        for (int p = 1; p <= 64; p++) {
            for (int64_t x = -3; x <= p + 3; x++)
                check_native_at(cat, f, p, x);
            for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
                check_native_at(cat, f, p, edges[i]);
        }
        for (size_t k = 0; k < sizeof ps / sizeof *ps; k++)
            for (int64_t x = -1; x <= ps[k]; x += 1 + ps[k] / 512)
                check_native_at(cat, f, ps[k], x);
    }
    EXPECT(natives > 0, "no function of the emitted catalogue is native");
    printf("emit_check: %d native functions agree with the machine\n", natives);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: emit_check FILE.dsl\n");
        return 2;
    }
    st_diags d;
    st_file *f;
    st_catalogue *cat = st_test_compile(argv[1], &d, &f);
    if (!cat) {
        fprintf(stderr, "emit_check: %s does not compile\n", argv[1]);
        return 1;
    }
    check_opcode_names();
    check_tables(cat, &st_test_catalogue);
    if (st_checks_failed == 0) {
        for (int32_t i = 0; i < cat->nalgos; i++)
            for (int p = 1; p <= 9; p++)
                check_schedule(cat, &st_test_catalogue, i, p);
        check_natives(&st_test_catalogue);
    }
    printf("emit_check: %d algorithms, %d instructions: %s\n", cat->nalgos, cat->ncode,
           st_checks_failed ? "DIFFERENT" : "identical");
    st_catalogue_free(cat);
    st_diags_free(&d);
    if (f)
        st_file_free(f);
    return st_check_summary("emit_check");
}
