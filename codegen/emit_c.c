/* emit_c.c - writing a compiled catalogue as C step tables (`stitchc emit`).
 *
 * The output is plain static const data in the layout of core/st_steptab.h: one array each for code, constants,
 * functions and algorithms, then the catalogue that points at them. It is shaped for three readers:
 *   - the C compiler: warning-free under -Wall -Wextra -pedantic, no zero-length arrays (an empty part is NULL),
 *     and a _Static_assert that fails the build if the tables were generated for another step-table format;
 *   - a person debugging a schedule: every instruction carries its index and opcode name in a comment, and a
 *     `/ * algos.dsl:LINE * /` comment marks where the source line changes;
 *   - the build: output depends on the catalogue and the symbol only (no dates, no absolute paths added), so an
 *     unchanged .dsl gives a byte-identical file.
 * Opcodes are written as numbers, not enum names, so the layout is exactly what the runtime reads; the static
 * assertion on ST_OP_COUNT and ST_TABLE_VERSION catches any renumbering.
 *
 * The catalogue is `const st_catalogue SYMBOL`, whose struct is the public opaque `stitch_catalogue_t`, and it
 * carries st_catalogue_hash of its tables, computed here, so the runtime compares catalogues across processes
 * without hashing them itself. The header (--header) declares the symbol with the struct's tag alone and includes
 * nothing: a user's program includes it next to stitch.h and passes &SYMBOL in stitch_config_t.catalogues.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

static const char *const opcode_names[ST_OP_COUNT] = {
    [ST_OP_HALT] = "HALT",           [ST_OP_PUSH] = "PUSH",
    [ST_OP_CONST] = "CONST",         [ST_OP_LOAD] = "LOAD",
    [ST_OP_STORE] = "STORE",         [ST_OP_LOADA] = "LOADA",
    [ST_OP_P] = "P",                 [ST_OP_R] = "R",
    [ST_OP_U] = "U",                 [ST_OP_ROOT] = "ROOT",
    [ST_OP_GROUPS] = "GROUPS",       [ST_OP_GROUP] = "GROUP",
    [ST_OP_INDEX] = "INDEX",         [ST_OP_SIZE] = "SIZE",
    [ST_OP_MEMBER] = "MEMBER",       [ST_OP_LAYOUT] = "LAYOUT",
    [ST_OP_LEVELS] = "LEVELS",       [ST_OP_GROUPS_AT] = "GROUPS_AT",
    [ST_OP_GROUP_AT] = "GROUP_AT",   [ST_OP_INDEX_AT] = "INDEX_AT",
    [ST_OP_SIZE_AT] = "SIZE_AT",     [ST_OP_MEMBER_AT] = "MEMBER_AT",
    [ST_OP_UNIFORM] = "UNIFORM",     [ST_OP_UNIFORM_AT] = "UNIFORM_AT",
    [ST_OP_REQUIRE] = "REQUIRE",
    [ST_OP_DUP] = "DUP",             [ST_OP_POP] = "POP",
    [ST_OP_ADD] = "ADD",             [ST_OP_SUB] = "SUB",
    [ST_OP_MUL] = "MUL",             [ST_OP_DIV] = "DIV",
    [ST_OP_MOD] = "MOD",             [ST_OP_SHL] = "SHL",
    [ST_OP_SHR] = "SHR",             [ST_OP_BAND] = "BAND",
    [ST_OP_BOR] = "BOR",             [ST_OP_BXOR] = "BXOR",
    [ST_OP_LT] = "LT",               [ST_OP_LE] = "LE",
    [ST_OP_GT] = "GT",               [ST_OP_GE] = "GE",
    [ST_OP_EQ] = "EQ",               [ST_OP_NE] = "NE",
    [ST_OP_MIN] = "MIN",             [ST_OP_MAX] = "MAX",
    [ST_OP_GCD] = "GCD",             [ST_OP_LCM] = "LCM",
    [ST_OP_NEG] = "NEG",             [ST_OP_BNOT] = "BNOT",
    [ST_OP_NOT] = "NOT",             [ST_OP_FLOOR_LOG2] = "FLOOR_LOG2",
    [ST_OP_CEIL_LOG2] = "CEIL_LOG2", [ST_OP_POW2] = "POW2",
    [ST_OP_JMP] = "JMP",             [ST_OP_JZ] = "JZ",
    [ST_OP_CALL] = "CALL",           [ST_OP_RET] = "RET",
    [ST_OP_UNITS] = "UNITS",         [ST_OP_STEP] = "STEP",
    [ST_OP_SET_ADD] = "SET_ADD",     [ST_OP_SET_RANGE] = "SET_RANGE",
    [ST_OP_SET_ALL] = "SET_ALL",     [ST_OP_SEND] = "SEND",
    [ST_OP_SCRATCH] = "SCRATCH",     [ST_OP_SET_AT] = "SET_AT",
    [ST_OP_PHASE] = "PHASE",
    [ST_OP_SUB_MEMBERS] = "SUB_MEMBERS", [ST_OP_SUB_NBLOCKS] = "SUB_NBLOCKS",
    [ST_OP_SUB_UNITS] = "SUB_UNITS",     [ST_OP_SUB_PHASE] = "SUB_PHASE",
    [ST_OP_SPLIT_RATIO] = "SPLIT_RATIO", [ST_OP_LANE] = "LANE",
    [ST_OP_FROM] = "FROM",               [ST_OP_DST] = "DST",
    [ST_OP_SET_STRIDE] = "SET_STRIDE",   [ST_OP_SUB_PIECES] = "SUB_PIECES",
    [ST_OP_MEMO] = "MEMO",               [ST_OP_MEMO_END] = "MEMO_END",
};

const char *st_opcode_name(int op)
{
    if (op < 0 || op >= ST_OP_COUNT || !opcode_names[op])
        return "?";
    return opcode_names[op];
}

int st_c_identifier_ok(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (const char *c = s; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_') || (unsigned char)*c >= 0x80)
            return 0;
    return 1;
}

/* The last path component: comments say `algos.dsl:12`, not the build host's absolute path. */
static const char *base_name(const char *path)
{
    if (!path || !*path)
        return "<input>";
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* A C string literal. Everything outside printable ASCII is an octal escape (three digits, so a following digit
 * cannot extend it); `?` is escaped so no trigraph can form. NULL becomes a null pointer. */
static void put_c_string(FILE *out, const char *s)
{
    if (!s) {
        fputs("NULL", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\' || *c == '?')
            fprintf(out, "\\%c", *c);
        else if (*c >= 0x20 && *c < 0x7f)
            fputc(*c, out);
        else
            fprintf(out, "\\%03o", *c);
    }
    fputc('"', out);
}

/* Text inside a C comment: printable ASCII only, and never the closing `*` `/` pair. */
static void put_comment_text(FILE *out, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '*' && c[1] == '/')
            fputs("* ", out);
        else
            fputc(*c >= 0x20 && *c < 0x7f ? *c : '?', out);
    }
}

/* An int64 literal; INT64_MIN has no literal of its own. */
static void put_int64(FILE *out, int64_t v)
{
    if (v == INT64_MIN)
        fputs("(-INT64_C(9223372036854775807) - 1)", out);
    else
        fprintf(out, "INT64_C(%" PRId64 ")", v);
}

static void put_banner(FILE *out, const st_catalogue *cat)
{
    fputs("/* generated by stitchc from ", out);
    put_comment_text(out, base_name(cat->file));
    fputs("; do not edit.\n", out);
    fprintf(out, " * %d algorithms, %d functions, %d instructions, %d constants; step-table format %d.\n",
            (int)cat->nalgos, (int)cat->nfuncs, (int)cat->ncode, (int)cat->nconsts, (int)cat->version);
    if (cat->verified_pmax > 0)
        fprintf(out, " * Verified for p = %d..%d (default roots and layouts); other p are proved at run time. */\n",
                (int)cat->verified_pmin, (int)cat->verified_pmax);
    else
        fputs(" * Not verified (--no-verify): the runtime proves every instantiation before it runs it. */\n", out);
}

/* `/ * algorithm ring (reduce_scatter) * /` or `/ * fn name * /` where a body starts, for people reading the code. */
static void put_entry_labels(FILE *out, const st_catalogue *cat, int32_t pc)
{
    for (int32_t i = 0; i < cat->nalgos; i++) {
        if (cat->algos[i].entry != pc)
            continue;
        fputs("    /* algorithm ", out);
        put_comment_text(out, cat->algos[i].name ? cat->algos[i].name : "?");
        fprintf(out, " (%s) */\n", st_coll_name(cat->algos[i].coll));
    }
    for (int32_t i = 0; i < cat->nfuncs; i++) {
        if (cat->funcs[i].entry != pc)
            continue;
        fputs("    /* fn ", out);
        put_comment_text(out, cat->funcs[i].name ? cat->funcs[i].name : "?");
        fputs(" */\n", out);
    }
}

static void emit_code(FILE *out, const st_catalogue *cat, const char *sym)
{
    const char *file = base_name(cat->file);
    int32_t line = -1;
    fprintf(out, "static const st_insn %s_code[%d] = {\n", sym, (int)cat->ncode);
    for (int32_t i = 0; i < cat->ncode; i++) {
        const st_insn *in = &cat->code[i];
        put_entry_labels(out, cat, i);
        if (in->line != line) {
            line = in->line;
            fputs("    /* ", out);
            put_comment_text(out, file);
            fprintf(out, ":%d */\n", (int)line);
        }
        char init[64];
        snprintf(init, sizeof init, "{%d, %d, %d, %d},", (int)in->op, (int)in->a, (int)in->line, (int)in->col);
        fprintf(out, "    %-22s /* %5d %s */\n", init, (int)i, st_opcode_name(in->op));
    }
    fputs("};\n\n", out);
}

static void emit_consts(FILE *out, const st_catalogue *cat, const char *sym)
{
    fprintf(out, "static const int64_t %s_consts[%d] = {\n", sym, (int)cat->nconsts);
    for (int32_t i = 0; i < cat->nconsts; i++) {
        fputs("    ", out);
        put_int64(out, cat->consts[i]);
        fprintf(out, ", /* %d */\n", (int)i);
    }
    fputs("};\n\n", out);
}

static void emit_funcs(FILE *out, const st_catalogue *cat, const char *sym, const unsigned char *native)
{
    fprintf(out, "static const st_func %s_funcs[%d] = {\n", sym, (int)cat->nfuncs);
    for (int32_t i = 0; i < cat->nfuncs; i++) {
        const st_func *f = &cat->funcs[i];
        fputs("    {.name = ", out);
        put_c_string(out, f->name);
        fprintf(out, ", .entry = %d, .nparams = %d, .nslots = %d, .flags = %d", (int)f->entry, (int)f->nparams,
                (int)f->nslots, (int)f->flags);
        if (native && native[i])
            fprintf(out, ", .native = %s_native_entry_%d", sym, (int)i);
        fprintf(out, "}, /* %d */\n", (int)i);
    }
    fputs("};\n\n", out);
}

static void emit_algos(FILE *out, const st_catalogue *cat, const char *sym)
{
    const char *file = base_name(cat->file);
    fprintf(out, "static const st_algo %s_algos[%d] = {\n", sym, (int)cat->nalgos);
    for (int32_t i = 0; i < cat->nalgos; i++) {
        const st_algo *a = &cat->algos[i];
        fputs("    {.name = ", out);
        put_c_string(out, a->name);
        fprintf(out, ", .coll = %d, .entry = %d, .nslots = %d, .line = %d, .flags = %d}, /* %s, ", (int)a->coll,
                (int)a->entry, (int)a->nslots, (int)a->line, (int)a->flags, st_coll_name(a->coll));
        put_comment_text(out, file);
        fprintf(out, ":%d */\n", (int)a->line);
    }
    fputs("};\n\n", out);
}

/* `<symbol>_<part>` when the part is non-empty, else a null pointer: C has no zero-length arrays. */
static void put_part(FILE *out, const char *field, const char *sym, const char *part, int32_t n)
{
    if (n > 0)
        fprintf(out, "    .%s = %s_%s,\n", field, sym, part);
    else
        fprintf(out, "    .%s = NULL,\n", field);
    fprintf(out, "    .n%s = %d,\n", field, (int)n);
}

static void emit_catalogue(FILE *out, const st_catalogue *cat, const char *sym)
{
    fprintf(out, "extern const st_catalogue %s;\n", sym);
    fprintf(out, "const st_catalogue %s = {\n", sym);
    fprintf(out, "    .version = %d,\n", (int)cat->version);
    fputs("    .file = ", out);
    put_c_string(out, cat->file);
    fputs(",\n", out);
    fprintf(out, "    .hash = UINT64_C(0x%016" PRIx64 "), /* st_catalogue_hash */\n", st_catalogue_hash(cat));
    put_part(out, "code", sym, "code", cat->ncode);
    put_part(out, "consts", sym, "consts", cat->nconsts);
    put_part(out, "funcs", sym, "funcs", cat->nfuncs);
    put_part(out, "algos", sym, "algos", cat->nalgos);
    fprintf(out, "    .verified_pmin = %d,\n", (int)cat->verified_pmin);
    fprintf(out, "    .verified_pmax = %d, /* %s */\n", (int)cat->verified_pmax,
            cat->verified_pmax > 0 ? "proved for these p; others are proved at run time" : "never proved: the runtime "
            "proves what it runs");
    fputs("};\n", out);
}

static int emit_source(FILE *out, const st_catalogue *cat, const char *sym)
{
    put_banner(out, cat);
    fputs("#include <stddef.h>\n#include <stdint.h>\n\n#include \"st_arith.h\"\n#include \"st_steptab.h\"\n\n", out);
    fprintf(out,
            "_Static_assert(ST_TABLE_VERSION == %d && ST_OP_COUNT == %d,\n"
            "               \"these tables were generated for another step-table format; rerun stitchc\");\n\n",
            (int)cat->version, (int)ST_OP_COUNT);
    if (cat->ncode > 0)
        emit_code(out, cat, sym);
    if (cat->nconsts > 0)
        emit_consts(out, cat, sym);
    if (cat->nfuncs > 0) {
        unsigned char *native = malloc((size_t)cat->nfuncs);
        if (!native || st_emit_native(out, cat, sym, native)) {
            free(native);
            return -1;
        }
        emit_funcs(out, cat, sym, native);
        free(native);
    }
    if (cat->nalgos > 0)
        emit_algos(out, cat, sym);
    emit_catalogue(out, cat, sym);
    return 0;
}

static void emit_header(FILE *out, const st_catalogue *cat, const char *sym)
{
    char guard[256];
    size_t n = 0;
    for (const char *c = sym; *c && n + 3 < sizeof guard; c++)
        guard[n++] = (char)toupper((unsigned char)*c);
    guard[n] = '\0';
    put_banner(out, cat);
    fprintf(out, "#ifndef %s_H\n#define %s_H\n\n", guard, guard);
    fputs("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", out);
    fputs("/* stitch_catalogue_t of stitch.h (opaque): pass &SYMBOL in stitch_config_t.catalogues */\n", out);
    fprintf(out, "struct stitch_catalogue;\nextern const struct stitch_catalogue %s;\n\n", sym);
    fputs("#ifdef __cplusplus\n}\n#endif\n\n", out);
    fprintf(out, "#endif\n");
}

int st_emit_c(const st_catalogue *cat, const char *symbol, FILE *c_out, FILE *h_out)
{
    if (!cat || !c_out || !st_c_identifier_ok(symbol))
        return -1;
    if (emit_source(c_out, cat, symbol))
        return -1;
    if (fflush(c_out) != 0 || ferror(c_out))
        return -1;
    if (h_out) {
        emit_header(h_out, cat, symbol);
        if (fflush(h_out) != 0 || ferror(h_out))
            return -1;
    }
    return 0;
}
