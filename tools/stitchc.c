/* stitchc.c - the compiler driver: `stitchc check | verify | show | sim | emit FILE ...`.
 *
 * Every subcommand starts the same way: parse the file, compile it to an in-memory catalogue (dsl/sema.h) and
 * print the diagnostics to stderr; then it verifies, shows, simulates (core/st_model.h, the cost model; written by
 * codegen/sim_out.c) or emits that catalogue. sim reads HCCL_ALGO with the runtime's own parser
 * (runtime/hccl_algo.c), maps it onto roles as runtime/choose.c does and picks its level1 algorithm as
 * runtime/select/select_conf.c does (st_hccl_level1_run). emit verifies first (p = 1..32
 * unless --ranks says otherwise) and writes nothing for a catalogue that fails; --no-verify skips that, with a
 * note. Input files go through st_read_source: regular files of at most 16 MiB, never standard input. The driver
 * owns nothing clever: argument parsing, file handling and exit codes. Exit codes are a contract that scripts and
 * ctest use:
 *   0  success
 *   1  the input has errors, verification failed, or a file could not be read or written
 *   2  the command line is wrong (unknown subcommand or option, a missing or malformed value)
 * Options are parsed by a small table per subcommand rather than getopt_long, so every mistake is reported in
 * one form (`stitchc: error: ...` and a hint to `--help`) and options may come before or after FILE.
 */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdarg.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "codegen.h"
#include "compile.h"
#include "config.h" /* runtime/: HCCL_ALGO's parser, shared with the runtime (hccl_algo.c) */
#include "diag.h"
#include "frontend.h"
#include "st_model.h"
#include "st_sched.h"
#include "st_topo.h"
#include "st_topofile.h"
#include "st_size.h"
#include "sema.h"
#include "verify.h"
#include "verify_progress.h"

#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* emit verifies for these rank counts unless told otherwise: algos.dsl takes 0.4 s for 1..32 (2.6 s for 1..64),
 * and every build of libstitch runs it. */
#define EMIT_PMIN 1
#define EMIT_PMAX 32
#define EMIT_RANKS "1..32"

/* ---- messages ------------------------------------------------------------------------------------------------ */

static void vtool_error(const char *fmt, va_list ap)
{
    fputs("stitchc: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tool_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtool_error(fmt, ap);
    va_end(ap);
}

/* A command-line mistake: the message, a hint, exit status 2. */
static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtool_error(fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "Try 'stitchc %s --help'.\n", cmd);
    else
        fputs("Try 'stitchc --help'.\n", stderr);
    return EXIT_USAGE;
}

/* ---- options ------------------------------------------------------------------------------------------------- */

enum opt_id { O_HELP, O_VERBOSE, O_ALGO, O_COLL, O_RANKS, O_NRANKS, O_ROOT, O_GROUPS, O_FORMAT, O_OUTPUT, O_HEADER,
              O_SYMBOL, O_NO_VERIFY, O_ALL_ROOTS, O_LAYOUT, O_TOPO, O_SWEEP, O_USE, O_SPLIT, O_BYTES, O_INTRA,
              O_INTER, O_METHOD,
              O_DTYPE, O_LATENCY, O_BANDWIDTH, O_REDUCE_BW, O_COUNT };

typedef struct opt_spec {
    enum opt_id id;
    char short_name; /* 0: none */
    const char *long_name;
    int has_arg;
} opt_spec;

/* What a subcommand's command line said. NULL / 0 for what was not given. */
typedef struct args {
    const char *file;
    const char *val[O_COUNT];
    int seen[O_COUNT];
} args;

typedef struct command {
    const char *name;
    const char *synopsis; /* the usage line after `stitchc ` */
    const char *summary;
    const char *usage; /* the whole --help text after the usage line */
    const opt_spec *opts;
    int (*run)(const args *a);
} command;

static const opt_spec *find_long(const opt_spec *opts, const char *name, size_t len)
{
    for (const opt_spec *o = opts; o->long_name; o++)
        if (strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
    return NULL;
}

static const opt_spec *find_short(const opt_spec *opts, char c)
{
    for (const opt_spec *o = opts; o->long_name; o++)
        if (o->short_name && o->short_name == c)
            return o;
    return NULL;
}

/* One option at argv[*i]; advances *i past its value. Returns 0 or the usage exit status. */
static int parse_option(const command *c, int argc, char **argv, int *i, args *a)
{
    const char *arg = argv[*i], *value = NULL;
    const opt_spec *o;
    if (arg[1] == '-') {
        const char *eq = strchr(arg + 2, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        o = find_long(c->opts, arg + 2, len);
        if (o && eq)
            value = eq + 1;
        if (o && eq && !o->has_arg)
            return usage_error(c->name, "option '--%s' takes no value", o->long_name);
    } else {
        o = arg[2] == '\0' ? find_short(c->opts, arg[1]) : NULL;
        if (!o && arg[2] != '\0' && find_short(c->opts, arg[1]) && find_short(c->opts, arg[1])->has_arg) {
            o = find_short(c->opts, arg[1]); /* -aring */
            value = arg + 2;
        }
    }
    if (!o)
        return usage_error(c->name, "unknown option '%s' for '%s'", arg, c->name);
    if (o->has_arg && !value) {
        if (*i + 1 >= argc)
            return usage_error(c->name, "option '%s' needs a value", arg);
        value = argv[++*i];
    }
    if (a->seen[o->id] && o->has_arg)
        return usage_error(c->name, "option '--%s' given twice", o->long_name);
    a->seen[o->id] = 1;
    a->val[o->id] = value;
    return 0;
}

/* argv[0] is the subcommand. Exactly one FILE unless --help was given. */
static int parse_args(const command *c, int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_files && strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (!only_files && arg[0] == '-' && arg[1] != '\0') {
            int rc = parse_option(c, argc, argv, &i, a);
            if (rc)
                return rc;
        } else if (!only_files && strcmp(arg, "-") == 0) {
            /* FILE must be a regular file (the front end refuses pipes, so it cannot hang on one) */
            return usage_error(c->name, "reading standard input ('-') is not supported; name a file");
        } else if (a->file) {
            return usage_error(c->name, "more than one input file ('%s' and '%s')", a->file, arg);
        } else {
            a->file = arg;
        }
    }
    if (!a->file && !a->seen[O_HELP])
        return usage_error(c->name, "no input file");
    return 0;
}

/* ---- values -------------------------------------------------------------------------------------------------- */

/* A decimal integer in [lo, hi], the whole string. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || !(*s == '-' || (*s >= '0' && *s <= '9')))
        return -1;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* `A..B` or `A`, with 1 <= A <= B <= ST_MAX_RANKS. */
static int parse_ranks(const char *s, int *pmin, int *pmax)
{
    const char *dots = strstr(s, "..");
    char first[32];
    long a, b;
    size_t n = dots ? (size_t)(dots - s) : strlen(s);
    if (n == 0 || n >= sizeof first)
        return -1;
    memcpy(first, s, n);
    first[n] = '\0';
    if (parse_int(first, 1, ST_MAX_RANKS, &a) != 0)
        return -1;
    b = a;
    if (dots && parse_int(dots + 2, 1, ST_MAX_RANKS, &b) != 0)
        return -1;
    if (a > b)
        return -1;
    *pmin = (int)a;
    *pmax = (int)b;
    return 0;
}

/* The usage error for a --ranks value parse_ranks refused (verify says the same in its own words). */
static int bad_ranks(const char *cmd, const char *s)
{
    return usage_error(cmd, "bad rank range '%s' (expected A..B or A, with 1 <= A <= B <= %d)", s, ST_MAX_RANKS);
}

/* -g 2,3: group sizes for the topology queries, consecutive ranks, summing to p. The arrays are owned by `g`. */
typedef struct groups {
    int n;
    int *sizes;
    int32_t *first, *members, *group_of, *index_of;
    st_topo topo;
    st_layout layout; /* --layout, --topo */
    void *mem;        /* st_topo_build's arrays */
} groups;

static void groups_free(groups *g)
{
    st_layout_free(&g->layout);
    free(g->mem);
    free(g->sizes);
    free(g->first);
    free(g->members);
    free(g->group_of);
    free(g->index_of);
}

/* Returns 0, -1 for a malformed list, -2 when out of memory. */
static int parse_groups(const char *s, int p, groups *g)
{
    memset(g, 0, sizeof *g);
    g->sizes = malloc(sizeof *g->sizes * (size_t)p);
    g->first = malloc(sizeof *g->first * ((size_t)p + 1));
    g->members = malloc(sizeof *g->members * (size_t)p);
    g->group_of = malloc(sizeof *g->group_of * (size_t)p);
    g->index_of = malloc(sizeof *g->index_of * (size_t)p);
    if (!g->sizes || !g->first || !g->members || !g->group_of || !g->index_of)
        return -2;
    if (st_groups_spec(s, p, g->sizes, &g->n) != p) /* st_topo.h: STITCH_GROUPS's grammar too */
        return -1;
    return st_topo_uniform(&g->topo, p, g->n, g->sizes, g->first, g->members, g->group_of, g->index_of);
}

/* The rank count a -g value stands for: the sum of N,N,... or S * L; 0 when malformed (parse_groups says why). */
static int groups_total(const char *s)
{
    int n, total = st_groups_spec(s, ST_MAX_RANKS, NULL, &n);
    return total > 0 ? total : 0;
}

/* --split R: HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO's strict form (digits, optionally '.' and digits), 0..1, as
 * millionths (digits past the sixth are dropped). -1 when malformed or out of range. */
static long parse_split(const char *v)
{
    long whole = 0, frac = 0, scale = 100000;
    const char *s = v;
    for (; *s >= '0' && *s <= '9' && whole <= 1; s++)
        whole = whole * 10 + (*s - '0');
    if (s == v)
        return -1;
    if (*s == '.') {
        const char *f = ++s;
        for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
            frac += (*s - '0') * scale;
        if (s == f)
            return -1;
    }
    long ppm = whole * 1000000 + frac;
    return *s || ppm > 1000000 ? -1 : ppm;
}

/* --use ROLE=ALGO[,ROLE=ALGO...]: phases that name ROLE run ALGO instead, for every collective both implement (the
 * hook a configuration such as HCCL_ALGO's level entries uses). Fills *use (nalgos entries, -1: unchanged; the
 * caller frees it); returns 0, or prints the usage error and returns EXIT_USAGE. */
static int parse_use(const char *cmd, const st_catalogue *cat, const char *spec, int32_t **use)
{
    *use = malloc(sizeof(int32_t) * (size_t)(cat->nalgos + 1));
    char *copy = strdup(spec), *save = NULL;
    if (!*use || !copy) {
        free(copy);
        tool_error("out of memory");
        return EXIT_FAIL;
    }
    for (int i = 0; i < cat->nalgos; i++)
        (*use)[i] = -1;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int replaced = 0, known = 0;
        if (!eq || eq == item || !eq[1]) {
            usage_error(cmd, "bad --use item '%s' (expected ROLE=ALGO)", item);
            free(copy);
            return EXIT_USAGE;
        }
        *eq = '\0';
        for (int i = 0; i < cat->nalgos; i++) {
            if (strcasecmp(cat->algos[i].name, item) != 0)
                continue;
            known = 1;
            const st_algo *with = st_catalogue_find(cat, eq + 1, cat->algos[i].coll);
            if (with)
                (*use)[i] = (int32_t)(with - cat->algos), replaced = 1;
        }
        if (!known || !replaced) {
            usage_error(cmd, known ? "--use %s=%s: '%s' implements none of the collectives of '%s'"
                                   : "--use %s=%s: no algorithm '%s' in the file", item, eq + 1, known ? eq + 1 : item,
                        item);
            free(copy);
            return EXIT_USAGE;
        }
    }
    free(copy);
    return 0;
}

/* -c COLL: a collective name, or the usage error listing the known ones. */
static int parse_coll(const char *cmd, const char *s, int *coll)
{
    *coll = st_coll_from_name(s);
    if (*coll >= 0)
        return 0;
    return usage_error(cmd, "unknown collective '%s' (known: %s)", s, st_coll_list());
}

/* --layout L or --topo FILE: a nested layout of ranks (st_topo.h), from the command line or a topology file.
 * Returns 0 (nothing given: l->nlevels == 0), EXIT_USAGE or EXIT_FAIL after saying why. `name` receives what
 * messages call it (the file's path, or the layout's own text). */
static int layout_arg(const char *cmd, const args *a, st_layout *l, char *name, size_t namelen)
{
    char why[512];
    memset(l, 0, sizeof *l);
    name[0] = 0;
    if (a->val[O_LAYOUT] && a->val[O_TOPO])
        return usage_error(cmd, "--layout and --topo exclude each other");
    if (a->val[O_LAYOUT]) {
        if (st_layout_parse(a->val[O_LAYOUT], l, why, sizeof why) != 0)
            return usage_error(cmd, "bad layout '%s': %s (expected counts of ranks such as 2,3, nested lists such "
                               "as [2,3],[4] for three levels, or SxL)", a->val[O_LAYOUT], why);
        st_layout_format(l, name, namelen);
        return 0;
    }
    if (a->val[O_TOPO]) {
        st_topofile tf;
        if (st_topofile_open(a->val[O_TOPO], &tf, why, sizeof why) != 0) {
            fprintf(stderr, "%s\n", why);
            return EXIT_FAIL;
        }
        *l = tf.layout; /* the layout changes hands; the rest of the file is not needed here */
        memset(&tf.layout, 0, sizeof tf.layout);
        st_topofile_free(&tf);
        snprintf(name, namelen, "%s", a->val[O_TOPO]);
    }
    return 0;
}

/* ---- compiling ----------------------------------------------------------------------------------------------- */

/* The parsed file and its catalogue (dsl/compile.h: the same pipeline the runtime's loader runs). */
typedef st_unit unit;

/* Parse and compile; prints every diagnostic. Returns 0 when there were no errors. Always call unit_free. */
static int compile_file(const char *path, unit *u)
{
    int rc = st_unit_compile(u, path);
    if (u->open_errno) { /* a missing file is a tool error, said the way every tool says it */
        tool_error("cannot open '%s': %s", path, strerror(u->open_errno));
        return -1;
    }
    st_diags_print(&u->d, stderr);
    return rc;
}

static void unit_free(unit *u)
{
    st_unit_free(u);
}

/* ---- check --------------------------------------------------------------------------------------------------- */

static int run_check(const args *a)
{
    unit u;
    int rc = compile_file(a->file, &u) == 0 ? 0 : EXIT_FAIL;
    if (rc == 0 && a->seen[O_VERBOSE]) {
        printf("%s: %d algorithms OK\n", a->file, (int)u.cat->nalgos);
        for (int32_t i = 0; i < u.cat->nalgos; i++) { /* which give a rank its own plan (`from`) */
            const char *why = st_algo_own_plan(u.cat, i);
            printf("  %-12s %-15s %s%s\n", u.cat->algos[i].name, st_coll_name(u.cat->algos[i].coll),
                   why ? "whole schedule: " : "own plan (from)", why ? why : "");
        }
    }
    unit_free(&u);
    return rc;
}

/* ---- verify -------------------------------------------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How many (algorithm, collective) pairs the selection covers; names match as st_catalogue_find does. */
static int count_pairs(const st_catalogue *cat, const st_verify_opts *o)
{
    int n = 0;
    for (int32_t i = 0; i < cat->nalgos; i++)
        if ((!o->algo || strcasecmp(o->algo, cat->algos[i].name) == 0) && (o->coll < 0 || o->coll == cat->algos[i].coll))
            n++;
    return n;
}

static int run_verify(const args *a)
{
    st_verify_opts o = {.algo = a->val[O_ALGO], .coll = -1, .pmin = 1, .pmax = 64, .verbose = a->seen[O_VERBOSE],
                        .all_roots = a->seen[O_ALL_ROOTS]};
    if (a->val[O_COLL] && parse_coll("verify", a->val[O_COLL], &o.coll) != 0)
        return EXIT_USAGE;
    if (a->val[O_RANKS] && parse_ranks(a->val[O_RANKS], &o.pmin, &o.pmax) != 0)
        return usage_error("verify", "bad rank range '%s' (expected A..B or A, with 1 <= A <= B <= %d)",
                           a->val[O_RANKS], ST_MAX_RANKS);
    if (a->val[O_SWEEP]) {
        const char *w = a->val[O_SWEEP];
        o.sweep = !strcmp(w, "default") ? ST_SWEEP_DEFAULT : !strcmp(w, "long") ? ST_SWEEP_LONG
                : !strcmp(w, "none") ? ST_SWEEP_NONE : -1;
        if (o.sweep < 0)
            return usage_error("verify", "unknown sweep '%s' (known: default, long, none)", w);
    }
    /* -g N,N,... is verify's old spelling of --layout N,N,... (two levels: the groups, then everything) */
    if (a->val[O_GROUPS] && (a->val[O_LAYOUT] || a->val[O_TOPO]))
        return usage_error("verify", "-g and --%s exclude each other", a->val[O_LAYOUT] ? "layout" : "topo");
    if (a->val[O_RANKS] && (a->val[O_LAYOUT] || a->val[O_TOPO] || a->val[O_GROUPS]))
        return usage_error("verify", "--ranks and --%s exclude each other (a layout has its own p)",
                           a->val[O_LAYOUT] ? "layout" : a->val[O_TOPO] ? "topo" : "groups");
    args la = *a;
    if (a->val[O_GROUPS])
        la.val[O_LAYOUT] = a->val[O_GROUPS];
    st_layout layout;
    char lname[256];
    const char *names[1] = {lname};
    int lrc = layout_arg("verify", &la, &layout, lname, sizeof lname);
    if (lrc)
        return lrc;
    if (layout.nlevels) {
        o.layouts = &layout, o.nlayouts = 1, o.layout_names = names;
        o.pmin = o.pmax = layout.p;
    }
    unit u;
    if (compile_file(a->file, &u) != 0) {
        unit_free(&u);
        st_layout_free(&layout);
        return EXIT_FAIL;
    }
    double t0 = now_seconds();
    int32_t *use = NULL;
    if (a->val[O_USE] && parse_use("verify", u.cat, a->val[O_USE], &use) != 0) {
        free(use);
        unit_free(&u);
        st_layout_free(&layout);
        return EXIT_USAGE;
    }
    o.use = use;
    if (a->val[O_SPLIT]) {
        long split = parse_split(a->val[O_SPLIT]);
        if (split < 0) {
            free(use);
            unit_free(&u);
            st_layout_free(&layout);
            return usage_error("verify", "bad split ratio '%s' (expected 0 to 1: digits, optionally '.' and digits)",
                               a->val[O_SPLIT]);
        }
        o.split_set = 1, o.split_ppm = (int32_t)split;
    }
    st_progress progress; /* a progress line on stderr when it is a terminal (verify_progress.c) */
    FILE *out = st_progress_start(&progress, &o, count_pairs(u.cat, &o));
    int failed = st_verify(u.cat, &o, out);
    st_progress_end(&progress);
    free(use);
    double dt = now_seconds() - t0;
    int pairs = count_pairs(u.cat, &o);
    int rc = 0;
    if (failed < 0) {
        tool_error("no algorithm in '%s' matches%s%s%s%s", a->file, o.algo ? " -a " : "", o.algo ? o.algo : "",
                   o.coll >= 0 ? " -c " : "", o.coll >= 0 ? st_coll_name(o.coll) : "");
        rc = EXIT_FAIL;
    } else if (failed > 0) {
        printf("FAILED %d of %d (algorithm, collective) pairs for p = %d..%d in %.2f s\n", failed, pairs, o.pmin,
               o.pmax, dt);
        rc = EXIT_FAIL;
    } else {
        printf("verified %d (algorithm, collective) pairs for p = %d..%d in %.2f s\n", pairs, o.pmin, o.pmax, dt);
    }
    unit_free(&u);
    st_layout_free(&layout);
    return rc;
}

/* ---- show ---------------------------------------------------------------------------------------------------- */

/* The error for an algorithm that is not there, listing what is: `ring (reduce_scatter, all_gather), ...`. */
static void not_found(const st_catalogue *cat, const char *file, const char *name, int coll)
{
    fprintf(stderr, "stitchc: error: no algorithm '%s'%s%s in '%s'; available:", name,
            coll >= 0 ? " implementing " : "", coll >= 0 ? st_coll_name(coll) : "", file);
    int listed = 0;
    for (int32_t i = 0; i < cat->nalgos; i++) {
        int32_t first = 0;
        while (strcmp(cat->algos[first].name, cat->algos[i].name) != 0)
            first++;
        if (first < i)
            continue; /* listed with the first algorithm of that name */
        fprintf(stderr, "%s %s (", listed++ ? "," : "", cat->algos[i].name);
        for (int32_t j = i, n = 0; j < cat->nalgos; j++)
            if (strcmp(cat->algos[j].name, cat->algos[i].name) == 0)
                fprintf(stderr, "%s%s", n++ ? ", " : "", st_coll_name(cat->algos[j].coll));
        fputc(')', stderr);
    }
    fputs(listed ? "\n" : " none\n", stderr);
}

/* The instantiation `show` asks for: p, root and groups (-g) or a layout (--layout, --topo), checked against each
 * other. A layout gives p, so -n may be left out. */
static int show_inst(const args *a, st_inst *in, groups *g)
{
    long p, root = 0;
    char lname[256];
    if (a->val[O_GROUPS] && (a->val[O_LAYOUT] || a->val[O_TOPO]))
        return usage_error("show", "-g and --%s exclude each other", a->val[O_LAYOUT] ? "layout" : "topo");
    int lrc = layout_arg("show", a, &g->layout, lname, sizeof lname);
    if (lrc)
        return lrc;
    if (g->layout.nlevels) {
        if (a->val[O_NRANKS] && (parse_int(a->val[O_NRANKS], 1, ST_MAX_RANKS, &p) != 0 || p != g->layout.p))
            return usage_error("show", "-n %s disagrees with the layout %s, which has %d ranks", a->val[O_NRANKS],
                               lname, g->layout.p);
        p = g->layout.p;
        if (a->val[O_ROOT] && parse_int(a->val[O_ROOT], 0, p - 1, &root) != 0)
            return usage_error("show", "bad root '%s' (expected 0..%ld)", a->val[O_ROOT], p - 1);
        if (st_topo_build(&g->layout, &g->topo, &g->mem) != 0) {
            tool_error("out of memory");
            return EXIT_FAIL;
        }
        *in = (st_inst){.p = (int)p, .root = (int)root, .topo = &g->topo};
        return 0;
    }
    if (!a->val[O_NRANKS] && !a->val[O_GROUPS])
        return usage_error("show", "missing -n P");
    if (!a->val[O_NRANKS]) /* the groups give p */
        p = groups_total(a->val[O_GROUPS]) > 0 ? groups_total(a->val[O_GROUPS]) : 1;
    else if (parse_int(a->val[O_NRANKS], 1, ST_MAX_RANKS, &p) != 0)
        return usage_error("show", "bad rank count '%s' (expected 1..%d)", a->val[O_NRANKS], ST_MAX_RANKS);
    if (a->val[O_ROOT] && parse_int(a->val[O_ROOT], 0, p - 1, &root) != 0)
        return usage_error("show", "bad root '%s' (expected 0..%ld)", a->val[O_ROOT], p - 1);
    *in = (st_inst){.p = (int)p, .root = (int)root, .topo = NULL};
    if (!a->val[O_GROUPS])
        return 0;
    int rc = parse_groups(a->val[O_GROUPS], (int)p, g);
    if (rc == -2) {
        tool_error("out of memory");
        return EXIT_FAIL;
    }
    if (rc != 0)
        return usage_error("show", "bad groups '%s' (expected sizes N,N,... of at least 1 that add up to p = %ld, or SxL with S * L = p)",
                           a->val[O_GROUPS], p);
    in->topo = &g->topo;
    return 0;
}

static int show_compiled(const args *a, const st_inst *in, int coll, const char *format)
{
    unit u;
    int rc = EXIT_FAIL;
    if (compile_file(a->file, &u) == 0) {
        const st_algo *algo = st_catalogue_find(u.cat, a->val[O_ALGO], coll);
        st_err err = {.msg = ""};
        st_inst with = *in;
        int32_t *use = NULL;
        long split = a->val[O_SPLIT] ? parse_split(a->val[O_SPLIT]) : 0;
        if (split < 0)
            rc = usage_error("show", "bad split ratio '%s' (expected 0 to 1: digits, optionally '.' and digits)",
                             a->val[O_SPLIT]);
        else if (a->val[O_USE] && (rc = parse_use("show", u.cat, a->val[O_USE], &use)) != 0)
            ;
        else if ((with.use = use, with.split_set = a->val[O_SPLIT] != NULL, with.split_ppm = (int32_t)split,
                  rc = EXIT_FAIL, !algo))
            not_found(u.cat, a->file, a->val[O_ALGO], coll);
        else if (st_show_ex(u.cat, algo, &with, format, stdout, &err) == 0)
            rc = 0;
        else if (err.line > 0) /* evaluating the algorithm failed: point at its line */
            fprintf(stderr, "%s:%d: error: %s\n", a->file, err.line, err.msg);
        else
            tool_error("%s", err.msg);
        free(use);
    }
    unit_free(&u);
    return rc;
}

static int run_show(const args *a)
{
    const char *format = a->val[O_FORMAT] ? a->val[O_FORMAT] : "table";
    int coll = -1;
    if (!a->val[O_ALGO])
        return usage_error("show", "missing -a ALGO");
    if (a->val[O_COLL] && parse_coll("show", a->val[O_COLL], &coll) != 0)
        return EXIT_USAGE;
    if (!st_show_format_known(format))
        return usage_error("show", "unknown format '%s' (known: %s)", format, ST_SHOW_FORMATS);
    st_inst in;
    groups g = {0};
    int rc = show_inst(a, &in, &g);
    if (rc == 0)
        rc = show_compiled(a, &in, coll, format);
    groups_free(&g);
    return rc;
}

/* ---- emit ---------------------------------------------------------------------------------------------------- */

/* Output goes to PATH.tmp and is renamed into place only when complete, so a failed run leaves no file behind
 * and a build never sees half a table. */
typedef struct outfile {
    const char *path;
    char *tmp;
    FILE *fp;
} outfile;

static int outfile_open(outfile *o, const char *path)
{
    o->path = path;
    o->fp = NULL;
    o->tmp = malloc(strlen(path) + 5);
    if (!o->tmp) {
        tool_error("out of memory");
        return -1;
    }
    sprintf(o->tmp, "%s.tmp", path);
    o->fp = fopen(o->tmp, "w");
    if (!o->fp) {
        tool_error("cannot open '%s': %s", o->tmp, strerror(errno));
        return -1;
    }
    return 0;
}

/* Close and, when `keep`, rename into place; otherwise remove. Returns 0 when the file is in place. */
static int outfile_close(outfile *o, int keep)
{
    int rc = keep ? 0 : -1;
    if (o->fp && fclose(o->fp) != 0 && keep) {
        tool_error("cannot write '%s': %s", o->tmp, strerror(errno));
        rc = -1;
    }
    if (o->fp && rc == 0 && rename(o->tmp, o->path) != 0) {
        tool_error("cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
        rc = -1;
    }
    if (o->fp && rc != 0)
        remove(o->tmp);
    o->fp = NULL;
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}

/* Open PATH.tmp (and the header's) before anything slow, so that an unwritable output is said at once, not after the
 * verification. */
static int emit_open(outfile *c, outfile *h, const args *a)
{
    return outfile_open(c, a->val[O_OUTPUT]) == 0 && (!a->val[O_HEADER] || outfile_open(h, a->val[O_HEADER]) == 0)
               ? 0
               : -1;
}

/* Write the tables when `ok` (else only remove the temporary files) and rename them into place. */
static int emit_files(outfile *c, outfile *h, const st_catalogue *cat, const char *symbol, int ok)
{
    const char *hpath = h->path;
    if (ok && st_emit_c(cat, symbol, c->fp, hpath ? h->fp : NULL) != 0) {
        tool_error("cannot write '%s'%s%s%s: %s", c->tmp, hpath ? " or '" : "", hpath ? h->tmp : "", hpath ? "'" : "",
                   strerror(errno));
        ok = 0;
    }
    /* The header first: a build that sees the new .c also sees its header. */
    int hrc = hpath ? outfile_close(h, ok) : 0;
    int crc = outfile_close(c, ok && hrc == 0);
    if (hpath && hrc == 0 && crc != 0)
        remove(hpath);
    return ok && hrc == 0 && crc == 0 ? 0 : -1;
}

/* Copy the verifier's report to stderr without the `verified ...` line of each pair that passed: what is left are
 * the diagnostics of the pairs that failed. */
static void print_failures(const char *report)
{
    for (const char *line = report; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (strncmp(line, "verified ", 9) != 0)
            fwrite(line, 1, len, stderr);
        line += len;
    }
}

/* Emit compiles only what verifies: tables that were never proved give wrong results silently at run time. Returns
 * 0 when every (algorithm, collective) pair of the file verifies for p = pmin..pmax (or the file has none). */
static int verify_for_emit(const unit *u, const char *file, int pmin, int pmax)
{
    char *report = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&report, &len);
    if (!mem) {
        tool_error("out of memory");
        return -1;
    }
    st_verify_opts o = {.coll = -1, .pmin = pmin, .pmax = pmax};
    int failed = st_verify(u->cat, &o, mem);
    if (fclose(mem) != 0) {
        tool_error("out of memory");
        failed = failed > 0 ? failed : 1;
    } else if (failed > 0) {
        print_failures(report);
        tool_error("%d (algorithm, collective) pair%s of '%s' failed verification for p = %d..%d; nothing written "
                   "(--no-verify emits it anyway)", failed, failed == 1 ? "" : "s", file, pmin, pmax);
    }
    free(report);
    return failed > 0 ? -1 : 0;
}

static int run_emit(const args *a)
{
    const char *symbol = a->val[O_SYMBOL] ? a->val[O_SYMBOL] : "st_builtin_catalogue";
    int pmin = EMIT_PMIN, pmax = EMIT_PMAX, verify = !a->seen[O_NO_VERIFY];
    if (!a->val[O_OUTPUT])
        return usage_error("emit", "missing -o OUT.c");
    if (!st_c_identifier_ok(symbol))
        return usage_error("emit", "symbol '%s' is not a C identifier", symbol);
    if (!verify && a->val[O_RANKS])
        return usage_error("emit", "--ranks and --no-verify exclude each other");
    if (a->val[O_RANKS] && parse_ranks(a->val[O_RANKS], &pmin, &pmax) != 0)
        return bad_ranks("emit", a->val[O_RANKS]);
    unit u;
    outfile c = {0}, h = {0};
    int rc = EXIT_FAIL;
    if (compile_file(a->file, &u) == 0) {
        if (!verify)
            fprintf(stderr, "stitchc: note: '%s' is emitted without verification (--no-verify)\n", a->file);
        int opened = emit_open(&c, &h, a) == 0;
        int ok = opened && (!verify || verify_for_emit(&u, a->file, pmin, pmax) == 0);
        if (ok && verify) /* the tables say what was proved, so the runtime proves the rest (st_verify_covers) */
            u.cat->verified_pmin = pmin, u.cat->verified_pmax = pmax;
        if (emit_files(&c, &h, u.cat, symbol, ok) == 0)
            rc = 0;
    }
    unit_free(&u);
    return rc;
}

/* ---- sim ----------------------------------------------------------------------------------------------------- */

/* -b 256M: a whole number of bytes, with an optional binary suffix. -1 when malformed. */
static double parse_size(const char *s)
{
    unsigned long long v;
    return st_parse_size(s, 1000000000000000000ull, &v) ? (double)v : -1; /* st_size.h: 1e18 at most */
}

/* A positive decimal (or 0 when zero_ok). -1 when malformed. */
static double parse_real(const char *s, int zero_ok)
{
    char *end;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : -1;
    if (!s || !*s || errno || *end || !isfinite(v) || v < 0 || (v == 0 && !zero_ok))
        return -1;
    return v;
}

/* Make every phase naming `role` run `name`, for the collectives `name` implements. Returns how many it replaced. */
static int set_role(const st_catalogue *cat, int32_t *use, const char *role, const char *name)
{
    int n = 0;
    for (int i = 0; i < cat->nalgos; i++) {
        if (strcasecmp(cat->algos[i].name, role) != 0)
            continue;
        const st_algo *with = st_catalogue_find(cat, name, cat->algos[i].coll);
        if (with)
            use[i] = (int32_t)(with - cat->algos), n++;
    }
    return n;
}

/* The machine and the layout of a sim: from --topo, --layout (with --latency/--bandwidth), or -n. */
typedef struct sim_machine {
    st_model model;
    st_topo topo;
    int has_topo, p;
    st_layout layout;
    void *mem;
    int32_t *arrays; /* --layout SxL beyond ST_MAX_RANKS: st_topo_uniform's arrays, one block */
    double split_bw[2]; /* --topo FILE: its level 0 and 1 bandwidths, for the split ratio's formula (0: none) */
    int level0_ring;    /* --topo FILE whose servers are not full meshes (level 0 `full_mesh: false`) */
    int *sizes;
    char name[300];
} sim_machine;

static void sim_machine_free(sim_machine *m)
{
    st_layout_free(&m->layout);
    free(m->mem);
    free(m->arrays);
    free(m->sizes);
}

/* SxL with S * L above what a layout holds (ST_MAX_RANKS) but within the model's range: built directly. */
static int big_uniform(const char *s, sim_machine *m)
{
    long S, L;
    char x, rest;
    if (sscanf(s, "%ld%c%ld%c", &S, &x, &L, &rest) != 3 || x != 'x' || S < 1 || L < 1 ||
        S * L <= ST_MAX_RANKS || S * L > ST_MODEL_MAX_RANKS)
        return -1;
    long p = S * L;
    m->sizes = malloc(sizeof(int) * (size_t)S);
    m->arrays = malloc(sizeof(int32_t) * (size_t)(4 * p + 1));
    if (!m->sizes || !m->arrays)
        return -2;
    for (long g = 0; g < S; g++)
        m->sizes[g] = (int)L;
    int32_t *a = m->arrays;
    if (st_topo_uniform(&m->topo, (int)p, (int)S, m->sizes, a, a + p + 1, a + 2 * p + 1, a + 3 * p + 1) != 0)
        return -1;
    m->has_topo = 1, m->p = (int)p;
    snprintf(m->name, sizeof m->name, "%ldx%ld", S, L);
    return 0;
}

static int sim_machine_get(const args *a, sim_machine *m)
{
    char why[512];
    memset(m, 0, sizeof *m);
    int given = !!a->val[O_TOPO] + !!a->val[O_LAYOUT] + !!a->val[O_NRANKS];
    if (given != 1)
        return usage_error("sim", given ? "--topo, --layout and -n exclude each other" : "missing --topo FILE, "
                           "--layout L or -n P");
    if (a->val[O_TOPO] && (a->val[O_LATENCY] || a->val[O_BANDWIDTH] || a->val[O_REDUCE_BW]))
        return usage_error("sim", "--latency, --bandwidth and --reduce-bandwidth describe a machine without "
                           "--topo; the topology file has its own");
    double lat = a->val[O_LATENCY] ? parse_real(a->val[O_LATENCY], 1) : 1;
    double bw = a->val[O_BANDWIDTH] ? parse_real(a->val[O_BANDWIDTH], 0) : 25;
    double rbw = a->val[O_REDUCE_BW] ? parse_real(a->val[O_REDUCE_BW], 1) : 100;
    if (lat < 0 || bw < 0 || rbw < 0)
        return usage_error("sim", "bad %s '%s' (expected a decimal number%s)", lat < 0 ? "--latency" : bw < 0 ?
                           "--bandwidth" : "--reduce-bandwidth", lat < 0 ? a->val[O_LATENCY] : bw < 0 ?
                           a->val[O_BANDWIDTH] : a->val[O_REDUCE_BW], bw < 0 ? " above 0" : " of at least 0");
    m->model.nlevels = ST_TOPO_MAX_LEVELS;
    for (int k = 0; k < ST_TOPO_MAX_LEVELS; k++)
        m->model.level[k] = (st_model_level){lat * 1e-6, 1.0 / (bw * 1e9)};
    m->model.gamma = rbw > 0 ? 1.0 / (rbw * 1e9) : 0;
    if (a->val[O_NRANKS]) {
        long p;
        if (parse_int(a->val[O_NRANKS], 1, ST_MODEL_MAX_RANKS, &p) != 0)
            return usage_error("sim", "bad rank count '%s' (expected 1..%d)", a->val[O_NRANKS], ST_MODEL_MAX_RANKS);
        m->p = (int)p;
        snprintf(m->name, sizeof m->name, "flat");
        return 0;
    }
    if (a->val[O_LAYOUT]) {
        int big = big_uniform(a->val[O_LAYOUT], m);
        if (big == -2) {
            tool_error("out of memory");
            return EXIT_FAIL;
        }
        if (big == 0)
            return 0;
        if (st_layout_parse(a->val[O_LAYOUT], &m->layout, why, sizeof why) != 0)
            return usage_error("sim", "bad layout '%s': %s (expected counts of ranks such as 2,3, nested lists such "
                               "as [2,3],[4] for three levels, or SxL)", a->val[O_LAYOUT], why);
        st_layout_format(&m->layout, m->name, sizeof m->name);
    } else {
        st_topofile tf;
        if (st_topofile_open(a->val[O_TOPO], &tf, why, sizeof why) != 0) {
            fprintf(stderr, "%s\n", why);
            return EXIT_FAIL;
        }
        st_model_from_topofile(&tf, &m->model);
        m->level0_ring = !tf.level[0].full_mesh;
        if (tf.nlevels >= 2) /* as the runtime reads them (comm.c, st_comm_split_init) */
            m->split_bw[0] = tf.level[0].bandwidth, m->split_bw[1] = tf.level[1].bandwidth;
        m->layout = tf.layout;
        memset(&tf.layout, 0, sizeof tf.layout);
        st_topofile_free(&tf);
        snprintf(m->name, sizeof m->name, "%s", a->val[O_TOPO]);
    }
    if (st_topo_build(&m->layout, &m->topo, &m->mem) != 0) {
        tool_error("out of memory");
        return EXIT_FAIL;
    }
    m->has_topo = 1, m->p = m->layout.p;
    return 0;
}

/* HCCL_ALGO as the runtime reads it (runtime/select/select_conf.c and choose.c's st_hccl_use): the algorithm the
 * level1 entry runs for coll on the machine's servers into *pick (st_hccl_level1_run: nhr on one-rank servers, hier
 * on several, pipeline, ahc...; NULL: none, with why in `why` where the entry cannot run there), its level0 and
 * level1 entries as roles. */
static int sim_hccl(const st_catalogue *cat, const sim_machine *mach, int coll, int32_t *use, const char **pick,
                    char *why, size_t len)
{
    const char *v = getenv("HCCL_ALGO");
    st_hccl_algo h;
    int given;
    char err[600];
    *pick = NULL, why[0] = '\0';
    if (!v)
        return 0;
    if (st_parse_hccl_algo("HCCL_ALGO", v, &h, &given, err, sizeof err) != STITCH_OK) {
        tool_error("%s", err);
        return EXIT_FAIL;
    }
    if (!given)
        return 0;
    int S = 1, L = mach->p, equal = 1;
    if (mach->has_topo && mach->topo.ngroups > 1) {
        S = mach->topo.ngroups, L = mach->topo.first[1] - mach->topo.first[0];
        for (int g = 1; g < S; g++)
            equal &= mach->topo.first[g + 1] - mach->topo.first[g] == L;
    }
    int alg = st_hccl_configured(&h, (stitch_coll_t)coll);
    const char *impl;
    if (alg)
        *pick = st_hccl_level1_run(alg, (stitch_coll_t)coll, S, L, equal, 0, mach->level0_ring, &impl, why, len);
    int a = st_hccl_level(&h, (stitch_coll_t)coll, 1); /* level0 entries: ignored, as HCCL ignores them */
    int whole = a == ST_HA_AHC || a == ST_HA_AHC_BROKE || a == ST_HA_PIPELINE || a == ST_HA_PAIRWISE;
    if (!whole && a != ST_HA_FULLMESH && st_hccl_alg_stitch(a))
        set_role(cat, use, "level1", st_hccl_alg_stitch(a));
    return 0;
}

/* The 2D split ratio as the runtime takes it (spec 12.2; runtime/comm/comm.c): --split (the communicator's config),
 * else HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO (the runtime's parser), else the built-in formula (12.3) from the
 * topology file's level 0 and 1 bandwidths (its fallback, 0.5, without them). *ppm gets R in millionths, `from`
 * where it came from. */
static int sim_split(const args *a, const sim_machine *mach, const st_algo *algo, int32_t *ppm, char *from,
                     size_t len)
{
    const char *var = "HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO", *env = getenv(var);
    char err[400];
    double r;
    if (a->val[O_SPLIT]) {
        long split = parse_split(a->val[O_SPLIT]);
        if (split < 0)
            return usage_error("sim", "bad split ratio '%s' (expected 0 to 1: digits, optionally '.' and digits)",
                               a->val[O_SPLIT]);
        *ppm = (int32_t)split;
        snprintf(from, len, "--split, as the communicator's config");
    } else if (env && *env) { /* set but empty is unset, as for every variable the runtime reads */
        if (st_parse_split_ratio(var, env, &r, err, sizeof err) != STITCH_OK) {
            tool_error("%s", err);
            return EXIT_FAIL;
        }
        *ppm = (int32_t)lround(r * 1e6);
        snprintf(from, len, "%s", var);
    } else {
        int S = mach->has_topo ? mach->topo.ngroups : 1, L = S > 0 ? mach->p / S : mach->p;
        *ppm = st_split_formula_ppm(algo->coll, L, S, mach->split_bw[0], mach->split_bw[1]);
        if (mach->split_bw[0] > 0 && mach->split_bw[1] > 0)
            snprintf(from, len, "the formula, spec 12.3: L = %d, S = %d, level bandwidths %g and %g B/s", L, S,
                     mach->split_bw[0], mach->split_bw[1]);
        else
            snprintf(from, len, "the formula's fallback, spec 12.3: no level bandwidths (a --topo file gives them)");
    }
    return 0;
}

/* The roles: HCCL_ALGO's, then --use, then --intra and --inter. *algo_name may come from HCCL_ALGO. */
static int sim_roles(const args *a, const st_catalogue *cat, const sim_machine *mach, int coll, int32_t **use,
                     const char **algo_name)
{
    const char *pick;
    char why[200];
    int32_t *extra = NULL;
    *use = malloc(sizeof(int32_t) * (size_t)(cat->nalgos + 1));
    if (!*use) {
        tool_error("out of memory");
        return EXIT_FAIL;
    }
    for (int i = 0; i < cat->nalgos; i++)
        (*use)[i] = -1;
    if (mach->level0_ring) /* as st_hccl_use: a server that is not a full mesh runs ring at level0 */
        set_role(cat, *use, "level0", "ring");
    int rc = sim_hccl(cat, mach, coll, *use, &pick, why, sizeof why);
    if (rc)
        return rc;
    if (!pick && why[0] && !*algo_name)
        return usage_error("sim", "missing -a ALGO (HCCL_ALGO's %s, where HCCL would run its default)", why);
    if (pick && *algo_name && strcasecmp(pick, *algo_name) != 0)
        fprintf(stderr, "stitchc: note: -a %s is simulated; HCCL_ALGO's level1 would pick '%s' without it\n",
                *algo_name, pick);
    if (!*algo_name)
        *algo_name = pick;
    if (a->val[O_USE]) {
        if ((rc = parse_use("sim", cat, a->val[O_USE], &extra)) != 0) {
            free(extra);
            return rc;
        }
        for (int i = 0; i < cat->nalgos; i++)
            if (extra[i] >= 0)
                (*use)[i] = extra[i];
        free(extra);
    }
    const char *roles[2][2] = {{"ahc_intra", "level0"}, {"ahc_inter", "level1"}};
    const char *vals[2] = {a->val[O_INTRA], a->val[O_INTER]};
    for (int k = 0; k < 2; k++) {
        if (!vals[k])
            continue;
        int n = set_role(cat, *use, roles[k][0], vals[k]) + set_role(cat, *use, roles[k][1], vals[k]);
        if (!n)
            return usage_error("sim", "--%s %s: no algorithm '%s' implements a collective of the roles %s and %s",
                               k ? "inter" : "intra", vals[k], vals[k], roles[k][0], roles[k][1]);
    }
    return 0;
}

static int sim_options(const args *a, st_model_opts *o, double *bytes, const char **format)
{
    *format = a->val[O_FORMAT] ? a->val[O_FORMAT] : "table";
    if (!st_sim_format_known(*format))
        return usage_error("sim", "unknown format '%s' (known: %s)", *format, ST_SIM_FORMATS);
    if (!a->val[O_BYTES])
        return usage_error("sim", "missing -b BYTES");
    if ((*bytes = parse_size(a->val[O_BYTES])) < 0)
        return usage_error("sim", "bad size '%s' (expected a whole number of bytes, optionally with K, M, G or T: "
                           "256M)", a->val[O_BYTES]);
    memset(o, 0, sizeof *o);
    const char *m = a->val[O_METHOD] ? a->val[O_METHOD] : "auto";
    o->method = !strcmp(m, "auto") ? ST_MODEL_AUTO : !strcmp(m, "exact") ? ST_MODEL_EXACT
              : !strcmp(m, "symmetric") ? ST_MODEL_SYMMETRIC : !strcmp(m, "classes") ? ST_MODEL_CLASSES : -1;
    if (o->method < 0)
        return usage_error("sim", "unknown method '%s' (known: auto, exact, symmetric, classes)", m);
    int dt = stitch_dtype_from_name(a->val[O_DTYPE] ? a->val[O_DTYPE] : "fp32");
    if (dt < 0)
        return usage_error("sim", "unknown dtype '%s' (known: int8, uint8, int16, int32, int64, fp16, bf16, fp32, fp64)", a->val[O_DTYPE]);
    o->elem_size = (int)stitch_dtype_size((stitch_dtype_t)dt);
    if (!strcmp(*format, "svg"))
        o->per_rank = 1, o->method = ST_MODEL_EXACT;
    return 0;
}

static int sim_run(const args *a, const unit *u, sim_machine *mach, const st_model_opts *o, double bytes,
                   const char *format)
{
    int coll = -1;
    long root = 0;
    if (a->val[O_COLL] && parse_coll("sim", a->val[O_COLL], &coll) != 0)
        return EXIT_USAGE;
    const char *name = a->val[O_ALGO];
    if (!name && coll < 0)
        return usage_error("sim", "missing -a ALGO");
    if (a->val[O_ROOT] && parse_int(a->val[O_ROOT], 0, mach->p - 1, &root) != 0)
        return usage_error("sim", "bad root '%s' (expected 0..%d)", a->val[O_ROOT], mach->p - 1);
    if (coll < 0) { /* the first collective -a implements */
        const st_algo *first = st_catalogue_find(u->cat, name, -1);
        if (!first) {
            not_found(u->cat, a->file, name, -1);
            return EXIT_FAIL;
        }
        coll = first->coll;
    }
    int32_t *use = NULL;
    int rc = sim_roles(a, u->cat, mach, coll, &use, &name);
    if (rc == 0 && !name)
        rc = usage_error("sim", "missing -a ALGO (HCCL_ALGO's level1 chooses no algorithm for %s)",
                         st_coll_name(coll));
    const st_algo *algo = rc == 0 ? st_catalogue_find(u->cat, name, coll) : NULL;
    if (rc == 0 && !algo) {
        not_found(u->cat, a->file, name, coll);
        rc = EXIT_FAIL;
    }
    int32_t split = ST_SPLIT_DEFAULT_PPM;
    char split_from[300];
    if (rc == 0 && (rc = sim_split(a, mach, algo, &split, split_from, sizeof split_from)) == 0 &&
        (algo->flags & ST_ALGO_USES_SPLIT))
        fprintf(stderr, "stitchc: note: split ratio %g (%s)\n", split / 1e6, split_from);
    if (rc == 0 && o->per_rank && mach->p > ST_SHOW_PICTURE_MAX_RANKS)
        rc = usage_error("sim", "--format svg draws at most %d ranks, not %d (use table or json)",
                         ST_SHOW_PICTURE_MAX_RANKS, mach->p);
    if (rc) {
        free(use);
        return rc;
    }
    st_inst in = {.p = mach->p, .root = (int)root, .topo = mach->has_topo ? &mach->topo : NULL, .use = use,
                  .split_set = 1, .split_ppm = split};
    st_model_result r;
    st_err err = {.msg = ""};
    if (st_model_predict(u->cat, algo, &in, &mach->model, bytes, o, &r, &err) != 0) {
        if (err.line > 0)
            fprintf(stderr, "%s:%d: error: %s\n", a->file, err.line, err.msg);
        else
            tool_error("%s", err.msg);
        free(use);
        return EXIT_FAIL;
    }
    st_sim_info info = {algo->name, coll, bytes, mach->name};
    rc = st_sim_write(&r, &info, format, stdout) == 0 ? 0 : EXIT_FAIL;
    st_model_result_free(&r);
    free(use);
    return rc;
}

static int run_sim(const args *a)
{
    st_model_opts o;
    double bytes = 0;
    const char *format = "table";
    int rc = sim_options(a, &o, &bytes, &format);
    if (rc)
        return rc;
    sim_machine mach;
    if ((rc = sim_machine_get(a, &mach)) != 0) {
        sim_machine_free(&mach);
        return rc;
    }
    unit u;
    rc = compile_file(a->file, &u) == 0 ? sim_run(a, &u, &mach, &o, bytes, format) : EXIT_FAIL;
    unit_free(&u);
    sim_machine_free(&mach);
    return rc;
}

/* ---- the command table --------------------------------------------------------------------------------------- */

#define OPT_HELP {O_HELP, 'h', "help", 0}
#define OPT_END {O_HELP, 0, NULL, 0}

static const opt_spec check_opts[] = {OPT_HELP, {O_VERBOSE, 'v', "verbose", 0}, OPT_END};
static const opt_spec verify_opts[] = {
    OPT_HELP, {O_VERBOSE, 'v', "verbose", 0}, {O_ALGO, 'a', "algorithm", 1}, {O_COLL, 'c', "collective", 1},
    {O_RANKS, 0, "ranks", 1}, {O_LAYOUT, 'l', "layout", 1}, {O_TOPO, 't', "topo", 1}, {O_SWEEP, 0, "sweep", 1},
    {O_GROUPS, 'g', "groups", 1}, {O_USE, 0, "use", 1}, {O_SPLIT, 0, "split", 1},
    {O_ALL_ROOTS, 0, "all-roots", 0}, OPT_END};
static const opt_spec show_opts[] = {
    OPT_HELP, {O_ALGO, 'a', "algorithm", 1}, {O_COLL, 'c', "collective", 1}, {O_NRANKS, 'n', "ranks", 1},
    {O_ROOT, 0, "root", 1}, {O_GROUPS, 'g', "groups", 1}, {O_LAYOUT, 'l', "layout", 1}, {O_TOPO, 't', "topo", 1},
    {O_FORMAT, 'f', "format", 1}, {O_USE, 0, "use", 1}, {O_SPLIT, 0, "split", 1}, OPT_END};
static const opt_spec sim_opts[] = {
    OPT_HELP, {O_ALGO, 'a', "algorithm", 1}, {O_COLL, 'c', "collective", 1}, {O_NRANKS, 'n', "ranks", 1},
    {O_ROOT, 0, "root", 1}, {O_LAYOUT, 'l', "layout", 1}, {O_TOPO, 't', "topo", 1}, {O_BYTES, 'b', "bytes", 1},
    {O_FORMAT, 'f', "format", 1}, {O_INTRA, 0, "intra", 1}, {O_INTER, 0, "inter", 1}, {O_USE, 0, "use", 1},
    {O_SPLIT, 0, "split", 1}, {O_METHOD, 0, "method", 1}, {O_DTYPE, 'd', "dtype", 1}, {O_LATENCY, 0, "latency", 1},
    {O_BANDWIDTH, 0, "bandwidth", 1}, {O_REDUCE_BW, 0, "reduce-bandwidth", 1}, OPT_END};
static const opt_spec emit_opts[] = {OPT_HELP, {O_OUTPUT, 'o', "output", 1}, {O_HEADER, 0, "header", 1},
                                     {O_SYMBOL, 0, "symbol", 1}, {O_RANKS, 0, "ranks", 1},
                                     {O_NO_VERIFY, 0, "no-verify", 0}, OPT_END};

static const command commands[] = {
    {"check", "check FILE [-v]", "parse and check a .dsl file",
     "Parse FILE and check every algorithm. Prints diagnostics to stderr; exits 1 on any error. With -v, lists\n"
     "which algorithms give a rank its own plan without the others' (`from`) and why the others do not.\n\n"
     "  -v, --verbose   print 'FILE: N algorithms OK' on success\n"
     "  -h, --help      this text\n",
     check_opts, run_check},
    {"verify", "verify FILE [-a ALGO] [-c COLL] [--ranks A..B | --layout L | --topo T.yaml] [--sweep S] [--use R=A] [--split R]"
     " [--all-roots] [-v]",
     "prove the algorithms correct for a range of rank counts",
     "Compile FILE and prove each (algorithm, collective) pair for every p in the range: the collective's\n"
     "postcondition, no double reduction, sends only of held units, no read/write conflicts in a step, and\n"
     "everything the runtime checks before it runs a plan (where each rank keeps each block). Rooted\n"
     "collectives are tried with every root up to p = 32, then a sample (roots 0..3, p/2, p-2, p-1 up to\n"
     "p = 64, then 0, 1, p/2, p-1; docs/language.md, section 7), which each summary line names; --all-roots\n"
     "tries every root. Algorithms that ask the topology are tried with every even grouping\n"
     "S x L of each p, then on a sweep of layouts, unequal ones included; an instantiation that the\n"
     "algorithm's `require` refuses is skipped and counted.\n"
     "Exits 0 when everything is verified, 1 otherwise (with the smallest counterexample).\n\n"
     "  -a, --algorithm ALGO    only this algorithm\n"
     "  -c, --collective COLL   only this collective\n"
     "      --ranks A..B        rank counts A to B inclusive, or A alone (default 1..64; 1 <= A <= B <= 65536)\n"
     "  -l, --layout L          instead of a range: this layout only (its p), e.g. 2,3 (two servers of 2 and 3\n"
     "                          ranks), [2,3],[4] (three levels: two pods), 3x2\n"
     "  -g, --groups N,N,...    the same as --layout N,N,...\n"
     "  -t, --topo T.yaml       instead of a range: the layout of a topology file (topologies/README.md), or an\n"
     "                          inline layout as STITCH_TOPO takes it (2,3 or 2X3)\n"
     "      --sweep S           layouts tried after the range: default (1..3 groups of 1..8 ranks, and\n"
     "                          1..2 pods of 1..2 servers of 1..3), long (1..4 groups; pods of up to 3\n"
     "                          servers of 1..4) or none\n"
     "      --use ROLE=ALGO,...  phases that name ROLE (level0, level1, ahc_intra, ahc_inter) run ALGO instead\n"
     "      --split R           algorithms that read the 2D split ratio (split_ratio) are verified with this R\n"
     "                          only (default: R = 0.5 everywhere, and 0, 0.3, 0.375 and 1 up to p = 16)\n"
     "      --all-roots         rooted collectives: every root of every p, not a sample above p = 32\n"
     "  -v, --verbose           one line per pair\n"
     "  -h, --help              this text\n",
     verify_opts, run_verify},
    {"show", "show FILE -a ALGO [-c COLL] (-n P [-g N,N,...] | -g N,N,... | --layout L | --topo T.yaml) [--root R] [--use R=A] [--split R] [--format table|json|svg|dot|holdings]", "print or draw an algorithm's schedule for p ranks",
     "Compile FILE, instantiate ALGO for P ranks and print its schedule.\n\n"
     "  -a, --algorithm ALGO    the algorithm (required)\n"
     "  -c, --collective COLL   which of its collectives (default: the first it implements)\n"
     "  -n, --ranks P           number of ranks, 1..65536 (required unless -g gives them)\n"
     "      --root R            the root of a rooted collective, 0..P-1 (default 0)\n"
     "  -g, --groups N,N,...    group sizes for topology queries, consecutive ranks, summing to P\n"
     "                          (default: one group of all P ranks)\n"
     "  -l, --layout L          a layout of ranks (P is its count, -n may be left out): 2,3 is -g 2,3;\n"
     "                          [2,3],[4] is three levels (two pods of servers); 3x2 is -g 2,2,2\n"
     "  -t, --topo T.yaml       the layout of a topology file (topologies/README.md), or an inline layout as\n"
     "                          STITCH_TOPO takes it (2,3 or 2X3)\n"
     "      --use ROLE=ALGO,...  phases that name ROLE (level0, level1, ahc_intra, ahc_inter) run ALGO instead\n"
     "      --split R           the 2D split ratio R (spec 12.4's meaning), 0..1 as digits with an optional\n"
     "                          '.' and digits (HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO's form); default: 0.5\n"
     "  -f, --format FORMAT     table (default), json, svg (a picture: ranks as lanes, steps as columns,\n"
     "                          one arrow per transfer; at most 256 ranks), dot (the same for Graphviz) or\n"
     "                          holdings (what every unit of every rank holds before the first step and\n"
     "                          after each step, as the verifier computes it: u0..2={0,1} is units 0 to 2\n"
     "                          holding the contributions of ranks 0 and 1; ends with the verifier's verdict)\n"
     "  -h, --help              this text\n",
     show_opts, run_show},
    {"sim", "sim FILE -a ALGO [-c COLL] (--topo T.yaml | --layout L | -n P) -b BYTES [--format table|json|svg] [--intra A] [--inter A]",
     "predict an algorithm's time with the cost model",
     "Compile FILE and predict how long ALGO takes for BYTES on a machine, with the alpha-beta-gamma model of\n"
     "docs/cost-model.md: per step and in total, with algbw and busbw (nccl-tests' meaning).\n\n"
     "  -a, --algorithm ALGO    the algorithm; may be left out when HCCL_ALGO's level1 names a whole-communicator\n"
     "                          algorithm (AHC, AHC_BROKE, pipeline, pairwise), as at run time\n"
     "  -c, --collective COLL   which of its collectives (default: the first it implements)\n"
     "  -t, --topo T.yaml       the machine: layout, levels with bandwidth and latency, reduce_bandwidth\n"
     "  -l, --layout L          a layout without a file (2,3; [2,3],[4]; SxL up to 16777216 ranks); every level\n"
     "                          then has --latency and --bandwidth\n"
     "  -n, --ranks P           P ranks on one level (flat), 1..16777216\n"
     "  -b, --bytes BYTES       n as HCCL's cost tables count it: the all_reduce/broadcast/reduce vector, the\n"
     "                          reduce_scatter/scatter input, the all_gather/gather output, an all_to_all rank's\n"
     "                          send buffer; a suffix K, M, G or T multiplies by 2^10, 2^20, 2^30, 2^40 (256M)\n"
     "  -f, --format FORMAT     table (default; equal consecutive steps folded), json (one object: algorithm,\n"
     "                          collective, ranks, bytes, time_us, algbw_GBps, busbw_GBps, steps[{time_us, ...}])\n"
     "                          or svg (a timeline per rank; exact model, at most 256 ranks)\n"
     "      --intra ALGO        the algorithm inside groups of composites: roles ahc_intra and level0\n"
     "      --inter ALGO        the algorithm across groups: roles ahc_inter and level1\n"
     "      --use ROLE=ALGO,...  any role, as for show (applied after HCCL_ALGO, before --intra/--inter)\n"
     "      --split R           the 2D split ratio (as for show); without it, as at run time:\n"
     "                          HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO, else spec 12.3's formula from the\n"
     "                          --topo file's level bandwidths (0.5 without them); a note on stderr says which\n"
     "      --root R            the root of a rooted collective (default 0)\n"
     "  -d, --dtype DTYPE       element type: units are split in whole elements (default fp32)\n"
     "      --method M          auto (default: exact up to 4096 ranks, symmetric above), exact (every rank's\n"
     "                          transfers, up to 65536 ranks), symmetric (representative ranks, checked shifts)\n"
     "                          or classes (unequal groups: one rank per class of alike ranks; auto's choice\n"
     "                          above 1024 ranks where the levels are not all uniform; up to 1,000,000 ranks)\n"
     "      --latency US        without --topo: every level's latency in microseconds (default 1)\n"
     "      --bandwidth GBPS    without --topo: every level's bandwidth in GB/s, 10^9 bytes (default 25)\n"
     "      --reduce-bandwidth GBPS  without --topo: bytes reduced per second in GB/s (default 100; 0: free)\n"
     "  -h, --help              this text\n\n"
     "HCCL_ALGO is honoured as at run time: its level1 entry replaces the role level1 (level0 entries are\n"
     "ignored, as HCCL ignores them: level0 is ring where the --topo file says `full_mesh: false`, else mesh),\n"
     "and when -a is not given its level1 chooses as at run time, fitted to the machine: ring, H-D_R, NHR, NB\n"
     "themselves on one-rank servers and hier on several; pipeline, AHC, AHC_BROKE, pairwise (-a wins, with a\n"
     "note, as the communicator's own choice beats the environment).\n",
     sim_opts, run_sim},
    {"emit", "emit FILE -o OUT.c [--header OUT.h] [--symbol NAME] [--ranks A..B | --no-verify]",
     "verify, then generate C step tables",
     "Compile FILE, verify every (algorithm, collective) pair as 'stitchc verify' does, and write the catalogue as\n"
     "C source defining 'const st_catalogue SYMBOL' (st_steptab.h). Nothing is written when FILE has errors or a\n"
     "pair fails verification (the verifier's counterexample is printed, exit 1).\n\n"
     "  -o, --output OUT.c      the C file (required)\n"
     "      --header OUT.h      also write a header declaring the symbol\n"
     "      --symbol NAME       the catalogue's name (default st_builtin_catalogue)\n"
     "      --ranks A..B        verify for rank counts A to B, or A alone (default " EMIT_RANKS ")\n"
     "      --no-verify         emit without verifying (a note on stderr says so)\n"
     "  -h, --help              this text\n",
     emit_opts, run_emit},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void print_command_help(int i)
{
    printf("usage: stitchc %s\n\n%s", commands[i].synopsis, commands[i].usage);
    if (find_short(commands[i].opts, 'c'))
        printf("\ncollectives: %s\n", st_coll_list());
}

static void print_help(void)
{
    puts("usage: stitchc COMMAND FILE [OPTIONS]\n\n"
         "The stitch compiler: checks, verifies, shows and emits collective algorithms written in the stitch DSL.\n\n"
         "commands:");
    for (int i = 0; i < NCOMMANDS; i++)
        printf("  %-8s %s\n", commands[i].name, commands[i].summary);
    puts("  help     this text, or 'stitchc help COMMAND' for one command\n\n"
         "'stitchc COMMAND --help' describes a command's options.\n"
         "Exit status: 0 success, 1 errors in the input or failed verification, 2 bad command line.");
}

static int find_command(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return i;
    return -1;
}

static int run_help(int argc, char **argv)
{
    if (argc < 3) {
        print_help();
        return 0;
    }
    int i = find_command(argv[2]);
    if (i < 0)
        return usage_error(NULL, "unknown command '%s'", argv[2]);
    print_command_help(i);
    return 0;
}

int main(int argc, char **argv)
{
    /* verify builds and frees thousands of schedules of megabytes each: keep freed memory in the heap instead of
     * returning it to the kernel and faulting it in again (that was a third of a long sweep's time) */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (argc < 2)
        return usage_error(NULL, "no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return run_help(argc, argv);
    if (strcmp(cmd, "--version") == 0) {
        printf("stitchc 0.1 (step-table format %d)\n", ST_TABLE_VERSION);
        return 0;
    }
    int i = find_command(cmd);
    if (i < 0)
        return usage_error(NULL, cmd[0] == '-' ? "unknown option '%s'" : "unknown command '%s'", cmd);
    args a;
    int rc = parse_args(&commands[i], argc - 1, argv + 1, &a);
    if (rc)
        return rc;
    if (a.seen[O_HELP]) {
        print_command_help(i);
        return 0;
    }
    rc = commands[i].run(&a);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tool_error("cannot write to standard output: %s", strerror(errno));
        return EXIT_FAIL;
    }
    return rc;
}
