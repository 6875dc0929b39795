/* hccl_algo.c - HCCL_ALGO's parser (spec 11.2), what a level means per collective and what a level1 entry runs on
 * a layout, and the split ratio's parser (12.1), on their own so that the compiler driver (stitchc sim) reads HCCL's
 * variables exactly as the runtime does (runtime/config.c calls them for the tunables; the declarations are in
 * config.h). It needs libc and stitch_coll_name (status.c) only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

/* ---- HCCL_ALGO (spec 11.2) ---------------------------------------------------------------------------------------
 * HCCL's parser, step by step and in its order, so that a value is accepted or rejected exactly as HCCL does and the
 * first problem HCCL would meet is the one reported: blanks removed; entries split on '/'; each entry common
 * ("level0:NA;level1:ring") or per operator ("allreduce=..."), not both, at most one common; levels split on ';',
 * at most 4; each "levelN:algo" with HCCL's case-sensitive names; a level at most once per entry; per-operator
 * entries with a known operator (stitch: in any case) and no level0 null. */
#define ST_HCCL_EXPECT "level0:NA;level1:<algo> or <op0>=level0:NA;level1:<algo0>/<op1>=level0:NA;level1:<algo1>"
#define ST_HCCL_MAX 1024  /* characters of an HCCL_ALGO value, blanks removed (stitch's limit) */
#define ST_HCCL_ITEMS 64  /* operator entries (stitch's limit; HCCL has 11 operator names) */

static const struct {
    const char *hccl, *stitch;
} st_hccl_algs[] = {
#define ST_HCCL_ALG_ROW(id, hccl, stitch) {hccl, stitch},
    ST_HCCL_ALG_LIST(ST_HCCL_ALG_ROW)
#undef ST_HCCL_ALG_ROW
};

const char *st_hccl_alg_name(int alg)
{
    return alg >= 0 && alg < ST_HA_COUNT ? st_hccl_algs[alg].hccl : NULL;
}

const char *st_hccl_alg_stitch(int alg)
{
    return alg >= 0 && alg < ST_HA_COUNT ? st_hccl_algs[alg].stitch : NULL;
}

/* HCCL's operator names and the stitch collectives each sets (-1: none; stitch has no point-to-point). */
static const struct {
    const char *op;
    int coll[2];
} st_hccl_ops[] = {
    {"broadcast", {STITCH_BROADCAST, -1}},       {"allreduce", {STITCH_ALL_REDUCE, -1}},
    {"reduce", {STITCH_REDUCE, -1}},             {"send", {-1, -1}},
    {"receive", {-1, -1}},                       {"allgather", {STITCH_ALL_GATHER, -1}},
    {"reducescatter", {STITCH_REDUCE_SCATTER, -1}}, {"alltoall", {STITCH_ALL_TO_ALL, STITCH_ALL_TO_ALL_V}},
    {"gather", {STITCH_GATHER, -1}},             {"scatter", {STITCH_SCATTER, -1}},
    {"sendrecv", {-1, -1}},
};
#define ST_HCCL_NOPS (int)(sizeof st_hccl_ops / sizeof *st_hccl_ops)

static int st_is_ahc(int alg)
{
    return alg == ST_HA_AHC || alg == ST_HA_AHC_BROKE;
}

/* Where an algorithm applies (spec 11.2, semantics): AHC to the three collectives it is written for, pairwise to
 * the all_to_alls; the rest everywhere. */
static int st_hccl_applies(int alg, stitch_coll_t c)
{
    if (st_is_ahc(alg))
        return c == STITCH_ALL_REDUCE || c == STITCH_REDUCE_SCATTER || c == STITCH_ALL_GATHER;
    if (alg == ST_HA_PAIRWISE)
        return c == STITCH_ALL_TO_ALL || c == STITCH_ALL_TO_ALL_V;
    return 1;
}

int st_hccl_level(const st_hccl_algo *h, stitch_coll_t c, int level)
{
    if ((unsigned)c >= STITCH_COLL_COUNT || level < 0 || level >= ST_HCCL_LEVELS)
        return ST_HA_DEFAULT;
    int a = h->level[c][level], l1 = h->level[c][1];
    if (level == 2 && st_is_ahc(l1) && st_hccl_applies(l1, c)) /* level1 AHC drives level2; HCCL ignores level2's */
        a = l1;
    return st_hccl_applies(a, c) ? a : ST_HA_DEFAULT;
}

typedef struct st_span {
    const char *s;
    size_t n;
} st_span;

typedef struct st_hccl_ctx {
    const char *name, *value; /* for messages: the variable (or config field) and its value as given */
    char *err;
    size_t errlen;
} st_hccl_ctx;

/* "NAME='VALUE': REASON; expected FORM", HCCL's expected form as its EI0001 report gives it. */
static stitch_status_t st_hccl_fail(const st_hccl_ctx *x, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(x->err, x->errlen, "%s='%s': %s; expected " ST_HCCL_EXPECT, x->name, x->value, why);
    return STITCH_ERR_CONFIG;
}

/* Split `in` on `sep` as HCCL does (SplitHcclOpType, SplitHcclAlgoLevel): at each piece, the first sep of the rest
 * may not be its first or last character; the piece is counted before the rest is looked at. 0 on success, -1 for
 * a sep first or last, -2 for more than max pieces (so "a;b;c;d;e;;" is -2, as in HCCL, and "a;b;" -1). */
static int st_hccl_split(st_span in, char sep, st_span *out, int max, int *n)
{
    *n = 0;
    for (st_span rest = in;;) {
        const char *at = memchr(rest.s, sep, rest.n);
        if (at && (at == rest.s || at == rest.s + rest.n - 1))
            return -1;
        size_t len = at ? (size_t)(at - rest.s) : rest.n;
        if (*n == max)
            return -2;
        out[(*n)++] = (st_span){rest.s, len};
        if (!at)
            return 0;
        rest = (st_span){at + 1, rest.n - len - 1};
    }
}

static int st_span_is(st_span a, const char *b)
{
    return a.n == strlen(b) && strncmp(a.s, b, a.n) == 0;
}

/* One "levelN:algo" (ParserHcclAlgoLevel). A token without ':' is both level and algorithm, as in HCCL. */
static stitch_status_t st_hccl_level_item(const st_hccl_ctx *x, st_span tok, int *level, int *alg)
{
    const char *colon = memchr(tok.s, ':', tok.n);
    if (colon && (colon == tok.s || colon == tok.s + tok.n - 1))
        return st_hccl_fail(x, "algo config is invalid: ':' first or last in '%.*s'", (int)tok.n, tok.s);
    st_span lv = {tok.s, colon ? (size_t)(colon - tok.s) : tok.n};
    st_span al = colon ? (st_span){colon + 1, tok.n - lv.n - 1} : tok;
    for (*level = 0; *level < ST_HCCL_LEVELS; ++*level) {
        char want[8];
        snprintf(want, sizeof want, "level%d", *level);
        if (st_span_is(lv, want))
            break;
    }
    if (*level == ST_HCCL_LEVELS)
        return st_hccl_fail(x, "algo config is invalid, level %.*s is not supported (levels: level0, level1, level2, "
                            "level3)", (int)lv.n, lv.s);
    for (*alg = ST_HA_DEFAULT + 1; *alg < ST_HA_COUNT; ++*alg)
        if (st_span_is(al, st_hccl_algs[*alg].hccl))
            return STITCH_OK;
    for (int a = ST_HA_DEFAULT + 1; a < ST_HA_COUNT; a++)
        if (al.n == strlen(st_hccl_algs[a].hccl) && strncasecmp(al.s, st_hccl_algs[a].hccl, al.n) == 0)
            return st_hccl_fail(x, "algo config is invalid, algo %.*s is not supported (algorithm names are "
                                "case-sensitive: %s)", (int)al.n, al.s, st_hccl_algs[a].hccl);
    return st_hccl_fail(x, "algo config is invalid, algo %.*s is not supported (algorithms: null, ring, pipeline, "
                        "fullmesh, H-D_R, pairwise, NHR, NHR_V1, AHC, AHC_BROKE, NB, NA)", (int)al.n, al.s);
}

/* One entry's level list (ParseAlgoString): split on ';' first, then each level in order. */
static stitch_status_t st_hccl_levels(const st_hccl_ctx *x, st_span list, unsigned char lv[ST_HCCL_LEVELS])
{
    st_span tok[ST_HCCL_LEVELS];
    memset(lv, ST_HA_DEFAULT, ST_HCCL_LEVELS); /* written whatever the outcome */
    int n, bad = st_hccl_split(list, ';', tok, ST_HCCL_LEVELS, &n);
    if (bad == -1)
        return st_hccl_fail(x, "algo config is invalid: an empty level in '%.*s' (';' first, last or doubled)",
                            (int)list.n, list.s);
    if (bad == -2)
        return st_hccl_fail(x, "algo config is invalid. algo level is more than %d in '%.*s'", ST_HCCL_LEVELS,
                            (int)list.n, list.s);
    for (int i = 0; i < n; i++) {
        int level = 0, alg = 0;
        stitch_status_t st = st_hccl_level_item(x, tok[i], &level, &alg);
        if (st != STITCH_OK)
            return st;
        if (lv[level] != ST_HA_DEFAULT)
            return st_hccl_fail(x, "algo config is invalid: level%d given twice in '%.*s'", level, (int)list.n,
                                list.s);
        lv[level] = (unsigned char)alg;
    }
    return STITCH_OK;
}

static int st_hccl_op(st_span op)
{
    for (int i = 0; i < ST_HCCL_NOPS; i++)
        if (op.n == strlen(st_hccl_ops[i].op) && strncasecmp(op.s, st_hccl_ops[i].op, op.n) == 0)
            return i;
    return -1;
}

/* The per-operator entries (SetSpecificAlgType): HCCL's first pass parses the entries named "others" (and would
 * apply them to every operator), the second then rejects "others" as an unknown operator, so such a value always
 * fails, and with the first problem of either pass. */
static stitch_status_t st_hccl_specific(const st_hccl_ctx *x, const st_span *ent, int n, st_hccl_algo *out)
{
    unsigned char lv[ST_HCCL_LEVELS];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            const char *eq = memchr(ent[i].s, '=', ent[i].n);
            st_span op = {ent[i].s, (size_t)(eq - ent[i].s)}, rest = {eq + 1, ent[i].n - op.n - 1};
            int others = op.n == 6 && strncasecmp(op.s, "others", 6) == 0, k = st_hccl_op(op);
            if (pass == 0 && !others)
                continue;
            if (pass == 1 && k < 0)
                return st_hccl_fail(x, "specific config optype[%.*s] is invalid (operators: broadcast, allreduce, "
                                    "reduce, send, receive, allgather, reducescatter, alltoall, gather, scatter, "
                                    "sendrecv; stitch takes them in any case)", (int)op.n, op.s);
            stitch_status_t st = st_hccl_levels(x, rest, lv);
            if (st != STITCH_OK)
                return st;
            if (pass == 0)
                continue;
            if (lv[0] == ST_HA_NULL)
                return st_hccl_fail(x, "specific config level0 not support null type (in '%.*s')", (int)ent[i].n,
                                    ent[i].s);
            for (int j = 0; j < 2; j++)
                if (st_hccl_ops[k].coll[j] >= 0) {
                    memcpy(out->level[st_hccl_ops[k].coll[j]], lv, ST_HCCL_LEVELS);
                    out->specific[st_hccl_ops[k].coll[j]] = 1;
                }
        }
    return STITCH_OK;
}

/* stitch's own checks of a value HCCL accepts: a name with no stitch algorithm, or (per operator) an algorithm
 * for a collective it is not written for, which HCCL would quietly replace by its default. */
static stitch_status_t st_hccl_stitch_checks(const st_hccl_ctx *x, const st_hccl_algo *h)
{
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        for (int l = 0; l < ST_HCCL_LEVELS; l++) {
            int a = h->level[c][l];
            if (a == ST_HA_NHR_V1) {
                snprintf(x->err, x->errlen, "%s='%s': level%d NHR_V1 is accepted by HCCL but stitch has no "
                         "implementation of it (HCCL's legacy NHR, spec 5.7); use NHR", x->name, x->value, l);
                return STITCH_ERR_CONFIG;
            }
            if (h->specific[c] && !st_hccl_applies(a, (stitch_coll_t)c)) {
                snprintf(x->err, x->errlen, "%s='%s': level%d %s is for %s only, not %s (HCCL would use its default "
                         "instead; stitch does not choose silently)", x->name, x->value, l, st_hccl_algs[a].hccl,
                         st_is_ahc(a) ? "allreduce, reducescatter and allgather" : "alltoall",
                         stitch_coll_name((stitch_coll_t)c));
                return STITCH_ERR_CONFIG;
            }
        }
    return STITCH_OK;
}

stitch_status_t st_parse_hccl_algo(const char *name, const char *value, st_hccl_algo *out, int *given, char *err,
                                   size_t errlen)
{
    const st_hccl_ctx x = {name, value, err, errlen};
    char buf[ST_HCCL_MAX + 1];
    size_t n = 0;
    memset(out, 0, sizeof *out);
    *given = 0;
    for (const char *s = value; *s; s++) /* HCCL removes spaces (only spaces) */
        if (*s != ' ') {
            if (n == ST_HCCL_MAX) {
                snprintf(err, errlen, "%s: longer than %d characters without blanks (stitch's limit)", name,
                         ST_HCCL_MAX);
                return STITCH_ERR_CONFIG;
            }
            buf[n++] = *s;
        }
    if (n == 0) /* empty: HCCL's built-in selection */
        return STITCH_OK;
    st_span ent[ST_HCCL_ITEMS];
    int nent, common = 0, specific = 0, bad = st_hccl_split((st_span){buf, n}, '/', ent, ST_HCCL_ITEMS, &nent);
    if (bad == -1)
        return st_hccl_fail(&x, "algo config is invalid: an empty operator entry ('/' first, last or doubled)");
    if (bad == -2)
        return st_hccl_fail(&x, "more than %d operator entries (stitch's limit)", ST_HCCL_ITEMS);
    for (int i = 0; i < nent; i++) {
        const char *eq = memchr(ent[i].s, '=', ent[i].n);
        if (eq == ent[i].s || (eq && eq == ent[i].s + ent[i].n - 1))
            return st_hccl_fail(&x, "algo config is invalid: '=' first or last in '%.*s'", (int)ent[i].n, ent[i].s);
        eq ? specific++ : common++;
    }
    if (common && specific)
        return st_hccl_fail(&x, "should not set both algo config way (a common entry and per-operator entries)");
    if (common > 1)
        return st_hccl_fail(&x, "should only set one common config (%d given)", common);
    stitch_status_t st;
    if (common) {
        unsigned char lv[ST_HCCL_LEVELS];
        if ((st = st_hccl_levels(&x, ent[0], lv)) != STITCH_OK)
            return st;
        for (int c = 0; c < STITCH_COLL_COUNT; c++)
            memcpy(out->level[c], lv, ST_HCCL_LEVELS);
    } else if ((st = st_hccl_specific(&x, ent, nent, out)) != STITCH_OK) {
        return st;
    }
    *given = 1;
    return st_hccl_stitch_checks(&x, out);
}

/* ---- what a level1 entry runs (spec 11.2's semantics, 7, 8, 9.6) -------------------------------------------------
 * HCCL_ALGO's level1 is how an HCCL user picks the algorithm between servers, and HCCL keeps it whatever the size.
 * Where it cannot run (one server: there is no level1; servers of unequal sizes for a level algorithm; a collective
 * it is not written for; pipeline's reductions under determinism) HCCL uses its default for the operator. */

int st_hccl_configured(const st_hccl_algo *h, stitch_coll_t c)
{
    if ((unsigned)c >= STITCH_COLL_COUNT)
        return ST_HA_DEFAULT;
    int a = h->level[c][1];
    return a == ST_HA_DEFAULT || a == ST_HA_NA || a == ST_HA_NULL ? ST_HA_DEFAULT : a;
}

static int st_is_rsag(stitch_coll_t c)
{
    return c == STITCH_ALL_REDUCE || c == STITCH_REDUCE_SCATTER || c == STITCH_ALL_GATHER;
}

static const char *st_l1_no(char *why, size_t len, const char *fmt, const char *a, const char *b)
{
    snprintf(why, len, fmt, a, b);
    return NULL;
}

const char *st_hccl_level1_run(int alg, stitch_coll_t c, int S, int L, int equal, int deterministic,
                               int level0_ring, const char **impl, char *why, size_t len)
{
    const char *name = st_hccl_alg_name(alg), *coll = stitch_coll_name(c), *mine = st_hccl_alg_stitch(alg);
    int a2a = c == STITCH_ALL_TO_ALL || c == STITCH_ALL_TO_ALL_V;
    *impl = NULL;
    why[0] = '\0';
    if (alg == ST_HA_PAIRWISE) /* the alltoall selector reads it directly: flat pairwise on any layout (spec 8) */
        return a2a ? (*impl = "pairwise") : st_l1_no(why, len, "level1 %s is for alltoall only, not %s", name, coll);
    if (alg == ST_HA_FULLMESH)
        return st_l1_no(why, len, "level1 %s is no algorithm between servers (HCCL warns and ignores it%s)", name, "");
    if (alg != ST_HA_RING && alg != ST_HA_HDR && alg != ST_HA_NHR && alg != ST_HA_NB && alg != ST_HA_PIPELINE &&
        !st_is_ahc(alg))
        return NULL; /* not a level1 choice (default, NA, null; NHR_V1 is refused by the parser) */
    if ((st_is_ahc(alg) || alg == ST_HA_PIPELINE) && !st_is_rsag(c) && !(alg == ST_HA_PIPELINE && a2a))
        return st_l1_no(why, len, "level1 %s is for allreduce, reducescatter and allgather%s", name,
                        alg == ST_HA_PIPELINE ? " (and alltoall)" : "");
    if (a2a && alg != ST_HA_PIPELINE)
        return st_l1_no(why, len, "level1 %s does not apply to %s (alltoall reads pairwise and pipeline only)", name,
                        coll);
    if (S < 2)
        return st_l1_no(why, len, "level1 %s: one server, so no level between servers (%s)", name, coll);
    if (st_is_ahc(alg)) /* any groups (spec 9) */
        return *impl = mine;
    if (!equal)
        return st_l1_no(why, len, "level1 %s needs the same number of ranks on every server (%s; AHC is HCCL's "
                        "algorithm for unequal servers)", name, coll);
    if (alg == ST_HA_PIPELINE) {
        if (level0_ring)
            return st_l1_no(why, len, "level1 %s needs servers that are full meshes (spec 7: level0 mesh; %s)", name,
                            coll);
        if (deterministic && c != STITCH_ALL_GATHER && !a2a) /* determinism is about reductions */
            return st_l1_no(why, len, "level1 %s does not run under HCCL_DETERMINISTIC (spec 7; %s)", name, coll);
        return *impl = mine;
    }
    *impl = mine; /* ring, H-D_R, NHR, NB: between servers; with several ranks per server, hier's level1 */
    return L == 1 ? mine : "hier";
}

/* ---- HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO (spec 12.1) ------------------------------------------------------ */

/* HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO: HCCL's IsValidNumberFormat (digits, optionally '.' and digits; set
 * but empty is invalid), then stitch's range check. The value is read digit by digit (strtod would take the
 * locale's decimal point). */
static int st_ratio(const char *v, double *out)
{
    const char *s = v;
    double r = 0, scale = 1;
    for (; *s >= '0' && *s <= '9'; s++)
        r = r * 10 + (*s - '0');
    if (s == v)
        return 0;
    if (*s == '.') {
        const char *f = ++s;
        for (; *s >= '0' && *s <= '9'; s++)
            r += (*s - '0') * (scale /= 10);
        if (s == f)
            return 0;
    }
    *out = r;
    return *s == '\0';
}

stitch_status_t st_parse_split_ratio(const char *name, const char *value, double *out, char *err, size_t errlen)
{
    double r;
    if (!st_ratio(value, &r)) {
        snprintf(err, errlen, "%s='%s': expected a non-negative number: digits, optionally a '.' and more digits, "
                 "such as 0.5", name, value);
        return STITCH_ERR_CONFIG;
    }
    if (r > 1) {
        snprintf(err, errlen, "%s='%s': out of range: stitch expects 0 to 1 (HCCL would warn and use 0.5)", name,
                 value);
        return STITCH_ERR_CONFIG;
    }
    *out = r;
    return STITCH_OK;
}
