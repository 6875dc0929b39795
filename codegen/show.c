/* show.c - a schedule as people read it (`stitchc show`): a text table, or JSON for scripts; pictures (SVG, DOT)
 * live in show_svg.c and share the unit-set notation and the heading line defined here.
 *
 * The schedule always comes from st_sched_build, the same instantiation the verifier checks and the runtime runs,
 * so a view can never disagree with what executes. This file only formats it:
 *   table  one header line, then per step one line per rank: its sends, then its receives, units as compact sets
 *          (`{0..3,7}`), like the worked examples of spec/algorithms.md;
 *   json   one object with a stable key order, transfers in schedule order, units as half-open [start, end) ranges,
 *          laid out one transfer per line so golden files diff well;
 *   holdings  what every unit of every rank holds before the first step and after each one, from the verifier's
 *          abstract execution (st_verify_holdings), ending with the verifier's verdict.
 * Unit runs are printed as the schedule holds them (sorted and merged by st_sched_build), so a view shows the
 * schedule's own data, not a re-derivation.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "verify.h"

/* The runs of one transfer: st_sched_build stores them sorted and merged, so they are printed as they are. */
typedef struct runs {
    const st_run *v;
    int n;
} runs;

static runs xfer_runs(const st_sched *s, const st_xfer *x)
{
    return (runs){s->runs + x->run0, x->nruns};
}

static const char *xop_name(int op)
{
    return op == ST_X_REDUCE ? "reduce" : op == ST_X_COPY ? "copy" : "?";
}

/* ---- table ---------------------------------------------------------------------------------------------------- */

static int digits(int v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* One run as the spec writes it, after a comma unless it is the first: `0..3`, `4,5` or `7`. */
static int run_text(char *buf, size_t size, const st_run *r, int first)
{
    int lo = r->start, hi = r->start + r->len - 1;
    const char *sep = first ? "" : ",";
    if (hi == lo + 1)
        return snprintf(buf, size, "%s%d,%d", sep, lo, hi);
    if (hi > lo)
        return snprintf(buf, size, "%s%d..%d", sep, lo, hi);
    return snprintf(buf, size, "%s%d", sep, lo);
}

/* `{0..3,7}`: inclusive ranges in unit numbers. With a limit, whole runs are left out from the first one that would
 * take the text past `limit` characters (room kept for `,...}`); the first run is always written. */
int st_show_units(FILE *out, const st_sched *s, const st_xfer *x, int limit)
{
    runs u = xfer_runs(s, x);
    char piece[48];
    int n = 1;
    if (out)
        fputc('{', out);
    for (int i = 0; i < u.n; i++) {
        int k = run_text(piece, sizeof piece, &u.v[i], i == 0);
        int tail = i + 1 < u.n ? 5 : 1; /* ",...}" may still follow, or just "}" */
        if (limit > 0 && i > 0 && n + k + tail > limit) {
            if (out)
                fputs(",...}", out);
            return n + 5;
        }
        if (out)
            fputs(piece, out);
        n += k;
    }
    if (out)
        fputc('}', out);
    return n + 1;
}

/* One transfer as seen from `rank`: `->r1 {4} reduce`, `<-r4 {3} reduce`, or `local {2} copy`. */
static void put_rank_xfer(FILE *out, const st_sched *s, const st_xfer *x, int rank)
{
    if (x->src == x->dst)
        fputs("local ", out);
    else if (x->src == rank)
        fprintf(out, "->r%d ", (int)x->dst);
    else
        fprintf(out, "<-r%d ", (int)x->src);
    st_show_units(out, s, x, 0);
    if (st_xfer_mapped(x)) { /* `at`: where the units land */
        st_xfer at = *x;
        at.run0 = x->drun0;
        at.nruns = x->dnruns;
        fputs(" at ", out);
        st_show_units(out, s, &at, 0);
    }
    fprintf(out, " %s", xop_name(x->op));
}

/* One side of `rank` in step `st`, in schedule order: its sends (local transfers included) or its receives. */
static void put_rank_side(FILE *out, const st_sched *s, int st, int rank, int recv)
{
    int n = 0;
    for (int32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
        const st_xfer *x = &s->xfers[i];
        if (recv ? x->dst == rank && x->src != rank : x->src == rank) {
            fputs(n++ ? "   " : "", out);
            put_rank_xfer(out, s, x, rank);
        }
    }
}

/* A rank's sends or receives as a string (malloc'd; NULL when out of memory). */
static char *rank_side(const st_sched *s, int st, int rank, int recv)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return NULL;
    put_rank_side(mem, s, st, rank, recv);
    if (fclose(mem) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* One step: a line per rank, the receives lined up in one column after the widest sends. */
static int put_step(FILE *out, const st_sched *s, int st, int wstep, int wrank)
{
    char **sends = calloc((size_t)s->p, sizeof *sends);
    size_t wsend = 0;
    int rc = sends ? 0 : -1;
    for (int rank = 0; rc == 0 && rank < s->p; rank++) {
        sends[rank] = rank_side(s, st, rank, 0);
        if (!sends[rank])
            rc = -1;
        else if (strlen(sends[rank]) > wsend)
            wsend = strlen(sends[rank]);
    }
    for (int rank = 0; rc == 0 && rank < s->p; rank++) {
        char label[32], *recvs = rank_side(s, st, rank, 1);
        if (!recvs) {
            rc = -1;
            break;
        }
        snprintf(label, sizeof label, "r%d:", rank);
        if (rank == 0)
            fprintf(out, "step %*d  %-*s ", wstep, st, wrank, label);
        else
            fprintf(out, "%*s%-*s ", 5 + wstep + 2, "", wrank, label);
        if (!*sends[rank] && !*recvs)
            fputs("-\n", out);
        else if (!*recvs)
            fprintf(out, "%s\n", sends[rank]);
        else
            fprintf(out, "%-*s   %s\n", (int)wsend, sends[rank], recvs);
        free(recvs);
    }
    for (int rank = 0; sends && rank < s->p; rank++)
        free(sends[rank]);
    free(sends);
    return rc;
}

/* `groups 2+3` in the table header, `"groups": [2, 3]` in JSON. */
static void put_groups(FILE *out, const st_topo *t, const char *sep)
{
    for (int g = 0; g < t->ngroups; g++)
        fprintf(out, "%s%d", g ? sep : "", (int)(t->first[g + 1] - t->first[g]));
}

void st_show_heading(FILE *out, const st_sched *s, const st_inst *in)
{
    fprintf(out, "%s %s, p = %d", s->algo->name, st_coll_name(s->algo->coll), s->p);
    if (st_coll_rooted(s->algo->coll))
        fprintf(out, ", root = %d", s->root);
    if (in->topo) {
        fputs(", groups ", out);
        put_groups(out, in->topo, "+");
    }
    fprintf(out, ", U = %d units, %d steps", s->nunits, s->nsteps);
    if (s->nscratch)
        fprintf(out, ", %d scratch units", s->nscratch);
}

static int show_table(const st_sched *s, const st_inst *in, FILE *out)
{
    fputs("# ", out);
    st_show_heading(out, s, in);
    fputc('\n', out);
    int wstep = digits(s->nsteps > 0 ? s->nsteps - 1 : 0);
    int wrank = digits(s->p - 1) + 2; /* "r", the number, ":" */
    for (int st = 0; st < s->nsteps; st++)
        if (put_step(out, s, st, wstep, wrank) != 0)
            return -1;
    return 0;
}

/* ---- json ----------------------------------------------------------------------------------------------------- */

static void put_json_string(FILE *out, const char *str)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)(str ? str : ""); *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", out);
        else if (*c == '\t')
            fputs("\\t", out);
        else if (*c < 0x20 || *c == 0x7f || *c >= 0x80)
            fprintf(out, "\\u%04x", *c); /* bytes, not code points: names are ASCII; this keeps JSON valid */
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void put_json_xfer(FILE *out, const st_sched *s, const st_xfer *x)
{
    runs u = xfer_runs(s, x);
    fprintf(out, "{\"src\": %d, \"dst\": %d, \"units\": [", (int)x->src, (int)x->dst);
    for (int i = 0; i < u.n; i++)
        fprintf(out, "%s[%d, %d]", i ? ", " : "", (int)u.v[i].start, (int)(u.v[i].start + u.v[i].len));
    if (st_xfer_mapped(x)) { /* `at`: the destination units, matched in order */
        fputs("], \"at\": [", out);
        for (int i = 0; i < x->dnruns; i++) {
            const st_run *r = &s->runs[x->drun0 + i];
            fprintf(out, "%s[%d, %d]", i ? ", " : "", (int)r->start, (int)(r->start + r->len));
        }
    }
    fprintf(out, "], \"op\": \"%s\", \"line\": %d}", xop_name(x->op), (int)x->line);
}

static int show_json(const st_sched *s, const st_inst *in, FILE *out)
{
    fputs("{\"algorithm\": ", out);
    put_json_string(out, s->algo->name);
    fputs(", \"collective\": ", out);
    put_json_string(out, st_coll_name(s->algo->coll));
    fprintf(out, ", \"ranks\": %d", s->p);
    if (st_coll_rooted(s->algo->coll))
        fprintf(out, ", \"root\": %d", s->root);
    if (in->topo) {
        fputs(", \"groups\": [", out);
        put_groups(out, in->topo, ", ");
        fputc(']', out);
    }
    fprintf(out, ", \"units\": %d, \"steps\": [", s->nunits);
    for (int st = 0; st < s->nsteps; st++) {
        fprintf(out, "%s\n  {\"step\": %d, \"transfers\": [", st ? "," : "", st);
        int32_t first = s->step_first[st], end = s->step_first[st + 1];
        for (int32_t i = first; i < end; i++) {
            fputs(i > first ? ",\n    " : "\n    ", out);
            put_json_xfer(out, s, &s->xfers[i]);
        }
        fputs(end > first ? "\n  ]}" : "]}", out);
    }
    fputs(s->nsteps ? "\n]}\n" : "]}\n", out);
    return 0;
}

/* ---- holdings: what each unit holds after each step (the verifier's abstract execution, dsl/verify.c) --------- */

static int show_holdings(const st_sched *s, const st_inst *in, FILE *out)
{
    fputs("# ", out);
    st_show_heading(out, s, in);
    fputs("\n# what each unit holds: the ranks whose contributions are in it\n", out);
    return st_verify_holdings(s, out);
}

/* ---- entry ---------------------------------------------------------------------------------------------------- */

int st_show_format_known(const char *format)
{
    static const char *const known[] = {"table", "json", "svg", "dot", "holdings"};
    for (size_t i = 0; format && i < sizeof known / sizeof known[0]; i++)
        if (strcmp(format, known[i]) == 0)
            return 1;
    return 0;
}

int st_show(const st_catalogue *cat, const st_algo *algo, int p, const char *format, FILE *out, st_err *err)
{
    st_inst in = {.p = p, .root = 0, .topo = NULL};
    return st_show_ex(cat, algo, &in, format, out, err);
}

int st_show_ex(const st_catalogue *cat, const st_algo *algo, const st_inst *in, const char *format, FILE *out,
               st_err *err)
{
    int (*fmt)(const st_sched *, const st_inst *, FILE *) = NULL;
    err->line = 0;
    int picture = 0; /* svg and dot draw every rank: bounded by ST_SHOW_PICTURE_MAX_RANKS */
    if (format && strcmp(format, "table") == 0)
        fmt = show_table;
    else if (format && strcmp(format, "json") == 0)
        fmt = show_json;
    else if (format && strcmp(format, "svg") == 0)
        fmt = st_show_svg, picture = 1;
    else if (format && strcmp(format, "dot") == 0)
        fmt = st_show_dot, picture = 1;
    else if (format && strcmp(format, "holdings") == 0)
        fmt = show_holdings;
    if (!fmt) {
        snprintf(err->msg, sizeof err->msg, "unknown format '%s' (expected one of: %s)", format ? format : "",
                 ST_SHOW_FORMATS);
        return -1;
    }
    if (picture && in->p > ST_SHOW_PICTURE_MAX_RANKS) {
        snprintf(err->msg, sizeof err->msg, "format '%s' draws at most %d ranks, not %d (use table or json)",
                 format, ST_SHOW_PICTURE_MAX_RANKS, in->p);
        return -1;
    }
    st_sched s;
    if (st_sched_build_ex(cat, algo, in, &s, err) != 0)
        return -1;
    int rc = fmt(&s, in, out);
    st_sched_free(&s);
    if (rc != 0) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(err->msg, sizeof err->msg, "write error");
        return -1;
    }
    return 0;
}
