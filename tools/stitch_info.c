/* stitch_info.c - stitch-info: what this libstitch is and how a communicator created now would be configured, in
 * the manner of ompi_info / ucc_info.
 *
 *   stitch-info [-h|--help]
 *
 * Prints the version; the algorithms compiled in (the built-in catalogue), per collective; every tunable of
 * runtime/tunables.def (STITCH_* and HCCL_*) with its effective value and where it came from ("environment" or
 * "default"; a communicator's stitch_config_t would make it "communicator"); HCCL_ALGO per collective and level
 * after HCCL's rules (level1 AHC drives level2); and the algorithm each collective would run. The values are
 * loaded by the library's own loader (st_settings_load_origin), so a malformed value fails here with the message
 * communicator creation would give, naming the variable, and exit status 1. Algorithm names are checked against
 * the built-in catalogue only: a communicator given its own catalogues may know more, so an unknown name is a
 * warning here (stderr), not a failure. STITCH_GROUPS is checked as init checks it: a spec malformed for every
 * rank count exits 1 with the reason. Then the verbs devices the transport sees: per device its ports (state, link
 * layer, active MTU, LID) and non-empty GIDs, or why there are none (no libibverbs, no device). Bad command lines
 * exit 2.
 *
 *   stitch-info --topo FILE     (or with STITCH_TOPO set)
 *
 * also prints the topology, read by the runtime's own loader (a YAML file through core/st_topofile.c, or an inline
 * layout such as [2,3],[4]: runtime/groups.h): its name, rank count and layout; per level its name, bandwidth and
 * latency with alpha = latency and beta = 1 / bandwidth, its groups and their sizes (ranks, and for the upper
 * levels the lower-level groups each holds); gamma = 1 / reduce_bandwidth; the convergence ratio of every boundary;
 * the host names and devices. The convergence ratio C is spec 9.7's "bandwidth convergence ratio between groups and
 * inside" (its cost term (G-1)C/(G m) n beta scales the inside per-byte cost beta): C = beta_outer / beta_inner =
 * the inner level's bandwidth over the outer level's, one per boundary (level k / level k+1); C > 1 is a converged
 * (slower) link between groups. A file that does not load exits 1 with the loader's one line
 * `FILE:LINE:COL: error: ...` on stderr, as stitchc prints it.
 *
 *   stitch-info --selection [--topo FILE] [-n P] [--policy model|hccl|hccl_guide|size]
 *   stitch-info --selection --servers A..B [--per-server L] [--policy ...]
 *
 * prints only auto's decision (runtime/select.h): per collective, size ranges without gaps or overlaps and the
 * algorithm each runs, built by the runtime's own code for P ranks (default 8) in one group, or the topology's
 * ranks and groups (its link figures feed policy model), or STITCH_GROUPS's groups (P defaults to their ranks; a
 * P they do not add up to exits 1 with init's message); a collective forced by STITCH_ALGO shows its one
 * algorithm, one HCCL_ALGO's level1 chooses for shows the configured entry beside what runs per size (the
 * configured algorithm fitted to the layout, or HCCL's default and why). Exit 1 when a table cannot be built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choose.h"
#include "config.h"
#include "groups.h"
#include "registry.h"
#include "select.h"
#include "st_topofile.h"
#include "topology.h"
#include "dev_ops.h"
#include "tp_verbs.h"
#include "stitch.h"

#define PROG "stitch-info"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [options]\n"
            "\n"
            "Show this libstitch's version, its compiled-in algorithms, and the configuration a communicator created\n"
            "now would get from the environment: every tunable (STITCH_* and HCCL_*) with its value and where it\n"
            "came from (environment or default; a stitch_config_t field would make it communicator), HCCL_ALGO per\n"
            "collective and level, and the algorithm each collective would run.\n"
            "\n"
            "options:\n"
            "  -h, --help   print this help and exit\n"
            "  --topo FILE  also print a topology (default: $STITCH_TOPO when set): levels with alpha = latency,\n"
            "               beta = 1/bandwidth, gamma = 1/reduce_bandwidth, groups and sizes, the convergence\n"
            "               ratio of each boundary (inner bandwidth / outer bandwidth), hosts; FILE may also be a\n"
            "               layout such as 2,3 or [2,3],[4]\n"
            "  --selection  print only auto's table instead: per collective, the size ranges (bytes = count x dtype\n"
            "               size of a call) and the algorithm each runs, for the topology of --topo (or\n"
            "               $STITCH_TOPO; its figures feed the model) or -n P ranks in one group (default 8)\n"
            "  -n P         with --selection: P ranks (with --topo: must be the topology's rank count)\n"
            "  --servers A..B  with --selection: instead, the tables for A..B servers, compact (one line per\n"
            "               server count and collective: each range's first byte count and algorithm)\n"
            "  --per-server L  with --servers: L ranks per server (default 1)\n"
            "  --policy X   with --selection: model, hccl, hccl_guide or size instead of\n"
            "               $STITCH_SELECT\n"
            "\n"
            "Exit status: 0, or 1 when a variable's value is malformed (the message names it, as communicator\n"
            "creation would) or the topology does not load (its FILE:LINE:COL: error), 2 for a bad command line.\n");
}

/* The device layer's entries (docs/devices.md): the CUDA one built or not and why, and its devices here. */
static void print_devices(void)
{
    char why[300];
    int n = stitch_device_count("cuda", why, sizeof why);
    printf("devices: cuda %s", st_dev_cuda_build_note());
    if (n >= 0)
        printf("; %d device%s here\n", n, n == 1 ? "" : "s");
    else if (strstr(st_dev_cuda_build_note(), "not built"))
        printf("\n");
    else
        printf("; none usable here: %s\n", why);
    printf("devices: host (the device engine on host threads, for tests) built\n");
}

static void print_algorithms(void)
{
    printf("Algorithms (built-in catalogue, algos.dsl):\n");
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        const char *names[128];
        int n = stitch_algorithms((stitch_coll_t)c, names, 128);
        printf("  %-16s", stitch_coll_name((stitch_coll_t)c));
        for (int i = 0; i < n && i < 128; i++)
            printf("%s%s", i ? ", " : "", names[i]);
        printf("%s\n", n ? "" : "(none)");
    }
}

static void print_tunables(const st_origin *o)
{
    printf("\nConfiguration (value, source: communicator > environment > default):\n");
    for (int i = 0; i < ST_TUNABLE_COUNT; i++) {
        const st_tunable_decl *d = st_tunable_decl_of(i);
        char shown[300];
        if (o->text[i])
            snprintf(shown, sizeof shown, "'%s'", o->text[i]);
        else
            snprintf(shown, sizeof shown, "(unset)");
        printf("  %-40s %-24s %s\n", d->name, shown, st_source_name(o->source[i]));
        printf("  %-40s %s\n", "", d->meaning);
    }
}

/* HCCL_ALGO per collective and level, after HCCL's rules; "-" where the level is not given. */
static void print_hccl_levels(const st_settings *s, const st_origin *o)
{
    const char *from = st_source_name(o->source[ST_T_HCCL_ALGO]);
    if (!s->hccl_algo_source) {
        printf("\nHCCL_ALGO levels: none given (every level: stitch's own choice)\n");
        return;
    }
    printf("\nHCCL_ALGO levels, from the %s: '%s'\n"
           "(level0 inside a group, level1 between groups, level2 between groups of groups; '-': not given)\n", from,
           s->hccl_algo_text);
    printf("  %-16s %-10s %-10s %-10s %-10s %s\n", "collective", "level0", "level1", "level2", "level3", "from");
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        printf("  %-16s", stitch_coll_name((stitch_coll_t)c));
        for (int l = 0; l < ST_HCCL_LEVELS; l++) {
            int a = st_hccl_level(&s->hccl_algo, (stitch_coll_t)c, l);
            printf(" %-10s", a == ST_HA_DEFAULT ? "-" : st_hccl_alg_name(a));
        }
        printf(" %s%s\n", from, s->hccl_algo.specific[c] ? " (per-operator entry)" : "");
    }
    if (st_hccl_level(&s->hccl_algo, STITCH_ALL_REDUCE, 1) == ST_HA_AHC ||
        st_hccl_level(&s->hccl_algo, STITCH_ALL_REDUCE, 1) == ST_HA_AHC_BROKE)
        printf("  (level1 AHC drives level2 too, as in HCCL)\n");
}

/* The choice a communicator made now would have, with the built-in catalogue. */
static void print_selection(const st_settings *s)
{
    st_reg *reg = NULL;
    st_choice ch[STITCH_COLL_COUNT];
    char why[1024];
    printf("\nSelection (a communicator with the built-in catalogue):\n");
    if (st_reg_new(NULL, NULL, &reg, why, sizeof why) != STITCH_OK || st_resolve_algos(reg, s, ch, why, sizeof why)) {
        printf("  none: %s\n", why);
        fprintf(stderr, PROG ": warning: a communicator with the built-in catalogue alone would fail: %s\n", why);
        st_reg_free(reg);
        return;
    }
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        int alg = st_hccl_choice(s, (stitch_coll_t)c);
        printf("  %-16s", stitch_coll_name((stitch_coll_t)c));
        if (!ch[c].algo)
            printf("(none)\n");
        else if (ch[c].is_auto && alg)
            printf("auto: %s level1 %s, fitted to the layout (--selection prints the choice)\n", s->hccl_algo_source,
                   st_hccl_alg_name(alg));
        else if (ch[c].is_auto)
            printf("auto: policy %s (STITCH_SELECT; --selection prints its table)\n", st_sel_policy_name(s->select));
        else
            printf("%s (%s)\n", ch[c].algo->name, s->algo_source);
    }
    st_reg_free(reg);
}

/* ---- --selection: auto's table per collective ------------------------------------------------------------- */

/* STITCH_GROUPS (s->groups) as init checks it: malformed for every rank count, or (p > 0) not adding up to p, is
 * an error with init's message; 0 with the sizes in *sizes (malloc'd) and their count, p = what they add up to. */
static int check_groups(const st_settings *s, int *p, int **sizes, int *ngroups, char *err, size_t len)
{
    int n = st_groups_count(s->groups);
    char why[512];
    *sizes = NULL, *ngroups = 0;
    if (n < 0) {
        snprintf(err, len, "%s='%s': expected SxL (S groups of L ranks) or group sizes such as \"2,2\", adding up to "
                 "the communicator's ranks", s->groups_source, s->groups);
        return -1;
    }
    *p = *p > 0 ? *p : n;
    if (!(*sizes = malloc(sizeof **sizes * (size_t)*p)) ||
        st_parse_groups(s->groups, *p, *sizes, ngroups, why, sizeof why) != STITCH_OK) {
        snprintf(err, len, "%s=%s", s->groups_source, *sizes ? why : "out of memory"); /* as placement.c says it */
        free(*sizes), *sizes = NULL;
        return -1;
    }
    return 0;
}

/* The groups of a topology setting, or of STITCH_GROUPS, or p ranks in one group, as a communicator of p ranks
 * would have them (*p: the ranks, when the setting decides). */
static int selection_shape(const st_settings *s, const char *topo, int *p, st_topology **t, st_groups *g, char *err,
                           size_t len)
{
    memset(g, 0, sizeof *g);
    *t = NULL;
    if (!topo && s->groups) {
        int *sizes, ng;
        if (check_groups(s, p, &sizes, &ng, err, len) != 0)
            return -1;
        int rc = ng > 1 && st_groups_uniform(g, *p, ng, sizes) != 0;
        free(sizes);
        if (rc)
            snprintf(err, len, "out of memory");
        return -rc;
    }
    if (!topo)
        return 0;
    if (st_topology_load(NULL, topo, *p, t, err, len) != STITCH_OK) /* the runtime's loader */
        return -1;
    if (st_topology_nlevels(*t) > 1 && st_topology_groups(*t, NULL, g) != 0) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    return 0;
}

/* AHC's inner algorithms for coll as a communicator of env's shape resolves them (comm_ahc.c): into *use, and
 * in text which (empty where AHC cannot run: no ahc of coll, fewer than 2 groups). */
static int ahc_roles(const st_settings *s, int c, const st_sel_env *env, int32_t **use, char *text, size_t len)
{
    const st_catalogue *cat = &st_builtin_catalogue;
    int got[2];
    text[0] = '\0';
    if (st_ahc_choose(cat, (stitch_coll_t)c, env->p, env->topo, *use, &env->links, s->ahc_inner, got) != 0)
        return -1;
    if (got[0] != ST_AHC_AUTO || got[1] != ST_AHC_AUTO) {
        int fresh = !*use;
        if (fresh && !(*use = malloc(sizeof **use * ((size_t)cat->nalgos + 1))))
            return -1;
        for (int i = 0; fresh && i < cat->nalgos; i++)
            (*use)[i] = -1;
        st_ahc_roles_apply(cat, *use, got);
    }
    if (st_cat_find(cat, "ahc", c) && env->topo && env->topo->ngroups > 1)
        st_ahc_text(s->ahc_inner, got, text, len);
    return 0;
}

/* Returns the exit status: 0, 1 when the topology does not load or a table cannot be built. */
static int print_selection_tables(const st_settings *s, const char *topo, int p, int policy)
{
    st_topology *tp;
    st_groups g;
    st_reg *reg = NULL;
    st_choice ch[STITCH_COLL_COUNT];
    char err[1024];
    int rc = 0;
    topo = topo ? topo : s->topo;
    if (selection_shape(s, topo, &p, &tp, &g, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    p = topo ? st_topology_ranks(tp) : p > 0 ? p : 8;
    st_sel_env env = {.p = p, .topo = st_groups_topo(&g), .policy = policy < 0 ? s->select : policy,
                      .oneshot_max = s->oneshot_max, .deterministic = s->deterministic};
    st_sel_links_from(tp, &env.links);
    st_settings sv = *s; /* the topology file's level0, as st_comm_new takes it */
    sv.level0_ring = env.level0_ring = st_topology_level0_ring(tp);
    s = &sv;
    int32_t *use[STITCH_COLL_COUNT] = {0};
    char ahc[STITCH_COLL_COUNT][160] = {{0}};
    if (st_reg_new(NULL, NULL, &reg, err, sizeof err) != STITCH_OK || st_resolve_algos(reg, s, ch, err, sizeof err)) {
        fprintf(stderr, PROG ": %s\n", err);
        rc = 1;
    }
    env.reg = reg;
    printf("\nSelection table (policy %s; %d ranks; %s%s; bytes = count x dtype size per call):\n",
           st_sel_policy_name(env.policy), p, topo ? "topology " : s->groups ? "groups " : "one group",
           topo ? topo : s->groups ? s->groups : "");
    for (int c = 0; !rc && c < STITCH_COLL_COUNT; c++) {
        st_sel_table t;
        if (st_hccl_use(s, &st_builtin_catalogue, (stitch_coll_t)c, &use[c]) != 0) {
            rc = 1;
            break;
        }
        if (ahc_roles(s, c, &env, &use[c], ahc[c], sizeof ahc[c]) != 0) {
            rc = 1;
            break;
        }
        env.use[c] = use[c];
        env.level1[c] = (unsigned char)st_hccl_choice(s, (stitch_coll_t)c);
        if (ch[c].algo && !ch[c].is_auto) {
            printf("  %-16s %-26s %s (forced)\n", stitch_coll_name((stitch_coll_t)c), "[0, max]", ch[c].algo->name);
            continue;
        }
        stitch_status_t st = st_sel_build(&env, (stitch_coll_t)c, &t, err, sizeof err);
        if (st == STITCH_ERR_UNSUPPORTED) { /* e.g. all_to_all's p^2 units beyond 1024 ranks: the others still print */
            printf("  %-16s %-26s none (%s)\n", stitch_coll_name((stitch_coll_t)c), "[0, max]", err);
            continue;
        }
        if (st != STITCH_OK) {
            fprintf(stderr, PROG ": %s\n", err);
            rc = 1;
            break;
        }
        st_sel_print(stdout, "  ", (stitch_coll_t)c, &t);
    }
    for (int c = 0, head = 0; !rc && c < STITCH_COLL_COUNT; c++)
        if (ahc[c][0]) /* where AHC (ahc, ahc_align, ahc_broke; hier on unequal groups) can run */
            printf("%s  %-16s %s\n", head++ ? "" : "AHC's algorithms inside / across groups (STITCH_AHC_INTRA, "
                   "STITCH_AHC_INTER):\n", stitch_coll_name((stitch_coll_t)c), ahc[c]);
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        free(use[c]);
    st_reg_free(reg);
    st_groups_free(&g);
    st_topology_unref(tp);
    return rc;
}

/* --servers A..B: the policy's tables, compact, for S = A..B servers of L ranks each: one line per (S, collective),
 * "SxL collective lo:algo lo:algo ...", each range by its first byte count (hier's level1 after '/' where the policy
 * names it). What HCCL's policies decide on every server count, for a golden file (tests/info/golden/). STITCH_ALGO
 * and HCCL_ALGO are not applied. Returns the exit status. */
static int print_selection_sweep(const st_settings *s, int policy, int first, int last, int L)
{
    st_reg *reg = NULL;
    char err[1024];
    int rc = 0;
    if (st_reg_new(NULL, NULL, &reg, err, sizeof err) != STITCH_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    printf("# stitch-info --selection --policy %s --servers %d..%d --per-server %d (bytes = count x dtype size)\n",
           st_sel_policy_name(policy), first, last, L);
    for (int S = first; !rc && S <= last; S++) {
        int *sizes = malloc(sizeof *sizes * (size_t)S);
        st_groups g;
        memset(&g, 0, sizeof g);
        for (int i = 0; sizes && i < S; i++)
            sizes[i] = L;
        if (!sizes || (S > 1 && st_groups_uniform(&g, S * L, S, sizes) != 0)) {
            fprintf(stderr, PROG ": out of memory\n");
            free(sizes);
            rc = 1;
            break;
        }
        st_sel_env env = {.reg = reg, .p = S * L, .topo = st_groups_topo(&g), .policy = policy,
                          .oneshot_max = s->oneshot_max, .deterministic = s->deterministic};
        st_sel_links_default(&env.links);
        for (int c = 0; !rc && c < STITCH_COLL_COUNT; c++) {
            st_sel_table t;
            if (st_sel_build(&env, (stitch_coll_t)c, &t, err, sizeof err) != STITCH_OK) {
                fprintf(stderr, PROG ": %dx%d: %s\n", S, L, err);
                rc = 1;
                break;
            }
            printf("%dx%d %s", S, L, stitch_coll_name((stitch_coll_t)c));
            for (int i = 0; i < t.n; i++) {
                char lo[32];
                st_sel_fmt_bytes(t.r[i].lo, lo, sizeof lo);
                for (char *q = lo; *q; q++)
                    *q = *q == ' ' ? '_' : *q;
                printf(" %s:%s%s%s", lo, t.r[i].algo->name, t.r[i].between ? "/" : "",
                       t.r[i].between ? t.r[i].between : "");
            }
            printf("\n");
        }
        st_groups_free(&g);
        free(sizes);
    }
    st_reg_free(reg);
    return rc;
}

/* ---- the topology ------------------------------------------------------------------------------------------ */

static void fmt_bandwidth(double bw, char *out, size_t len)
{
    if (bw <= 0)
        snprintf(out, len, "-");
    else if (bw >= 1e9)
        snprintf(out, len, "%g GB/s", bw / 1e9);
    else if (bw >= 1e6)
        snprintf(out, len, "%g MB/s", bw / 1e6);
    else
        snprintf(out, len, "%g B/s", bw);
}

static void fmt_latency(double s, char *out, size_t len)
{
    if (s >= 1e-3)
        snprintf(out, len, "%g ms", s * 1e3);
    else if (s >= 1e-6 || s == 0)
        snprintf(out, len, "%g us", s * 1e6);
    else
        snprintf(out, len, "%g ns", s * 1e9);
}

/* The groups' sizes of one level, runs of equal ones shortened: "8 x24", "64 (8), 128 (16)". */
static void fmt_sizes(const int *ranks, const int32_t *holds, int ng, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int g = 0; g < ng && n + 32 < len;) {
        int run = 1;
        while (g + run < ng && ranks[g + run] == ranks[g] && (!holds || holds[g + run] == holds[g]))
            run++;
        n += (size_t)snprintf(out + n, len - n, "%s%d", g ? ", " : "", ranks[g]);
        if (holds)
            n += (size_t)snprintf(out + n, len - n, " (%d)", holds[g]);
        if (run > 1)
            n += (size_t)snprintf(out + n, len - n, " x%d", run);
        g += run;
    }
    if (n + 32 >= len)
        snprintf(out + n, len - n, ", ...");
}

static int print_levels(const st_topofile *tf)
{
    const st_layout *l = &tf->layout;
    int *ranks[ST_TOPO_MAX_LEVELS] = {0}, ok = 1, nlevels = l->nlevels;
    char bw[32], lat[32], sizes[400];
    printf("  %-5s %-12s %-12s %-9s %-10s %-11s %-7s %s\n", "level", "name", "bandwidth", "latency", "alpha (s)",
           "beta (s/B)", "groups", "sizes in ranks (level below's groups)");
    for (int k = 0; k < nlevels && ok; k++) {
        const st_level_info *v = &tf->level[k];
        ok = (ranks[k] = calloc((size_t)l->ngroups[k], sizeof *ranks[k])) != NULL;
        for (int g = 0, next = 0; ok && g < l->ngroups[k]; g++) {
            ranks[k][g] = k == 0 ? l->count[0][g] : 0;
            /* level k's counts sum to level k - 1's groups (st_layout): next stays below them */
            for (int i = 0; k > 0 && i < l->count[k][g] && next < l->ngroups[k - 1]; i++)
                ranks[k][g] += ranks[k - 1][next++];
        }
        if (!ok)
            break;
        fmt_bandwidth(v->bandwidth, bw, sizeof bw);
        fmt_latency(v->latency, lat, sizeof lat);
        fmt_sizes(ranks[k], k ? l->count[k] : NULL, l->ngroups[k], sizes, sizeof sizes);
        if (v->bandwidth > 0)
            printf("  %-5d %-12s %-12s %-9s %-10.4g %-11.4g %-7d %s\n", k, v->name, bw, lat, v->latency,
                   1 / v->bandwidth, l->ngroups[k], sizes);
        else /* an inline layout: no links */
            printf("  %-5d %-12s %-12s %-9s %-10s %-11s %-7d %s\n", k, "-", "-", "-", "-", "-", l->ngroups[k], sizes);
    }
    for (int k = 0; k < nlevels; k++)
        free(ranks[k]);
    if (ok && tf->level[0].bandwidth > 0) /* spec 13.1: level0 is the hardware's */
        printf("  servers (level 0): %s\n", tf->level[0].full_mesh ? "full mesh (level0 runs mesh)"
               : "not a full mesh, full_mesh: false (level0 runs ring)");
    return ok;
}

static void print_convergence(const st_topofile *tf)
{
    if (tf->nlevels < 2 || tf->level[0].bandwidth <= 0) {
        printf("  convergence ratio: none (%s)\n", tf->nlevels < 2 ? "one level" : "an inline layout has no links");
        return;
    }
    printf("  convergence ratio C = inner bandwidth / outer bandwidth (spec 9.7; C > 1: converged link):\n");
    for (int k = 0; k + 1 < tf->nlevels; k++)
        printf("    level%d %s / level%d %s: %.4g\n", k, tf->level[k].name, k + 1, tf->level[k + 1].name,
               tf->level[k].bandwidth / tf->level[k + 1].bandwidth);
}

static void print_hosts(const st_topofile *tf)
{
    if (!tf->host) {
        printf("  hosts: none named (process mode groups the ranks by the layout, in rank order)\n");
        return;
    }
    printf("  hosts (process mode places ranks by these names):\n");
    for (int g = 0, first = 0; g < tf->layout.ngroups[0]; first += tf->layout.count[0][g], g++) {
        int n = tf->layout.count[0][g];
        printf("    %-24s %d rank%s (layout positions %d..%d)", tf->host[g], n, n == 1 ? "" : "s", first,
               first + n - 1);
        for (int i = 0; tf->devices && tf->devices[g] && i < n; i++)
            printf("%s%d", i ? "," : ", devices ", tf->devices[g][i]);
        printf("\n");
    }
}

/* Returns the exit status: 0, or 1 when the topology does not load. */
static int print_topology(const char *spec, const char *from)
{
    st_topology *t;
    char err[1024], shape[200];
    if (st_topology_load(from, spec, 0, &t, err, sizeof err) != STITCH_OK) { /* the runtime's loader */
        fprintf(stderr, "%s%s\n", from ? PROG ": " : "", err);
        return 1;
    }
    const st_topofile *tf = st_topology_file(t);
    st_layout_format(&tf->layout, shape, sizeof shape);
    printf("\nTopology%s%s%s (%s, from %s):\n", tf->name[0] ? " '" : "", tf->name, tf->name[0] ? "'" : "", spec,
           from ? "the environment" : "--topo");
    printf("  ranks: %d; levels: %d; layout: %s\n", tf->layout.p, tf->nlevels, shape);
    int ok = print_levels(tf);
    if (tf->reduce_bandwidth > 0) {
        char bw[32];
        fmt_bandwidth(tf->reduce_bandwidth, bw, sizeof bw);
        printf("  reduce bandwidth: %s; gamma = 1/reduce_bandwidth = %.4g s/B\n", bw, 1 / tf->reduce_bandwidth);
    } else {
        printf("  reduce bandwidth: not given (no gamma)\n");
    }
    print_convergence(tf);
    print_hosts(tf);
    st_topology_unref(t);
    if (!ok)
        fprintf(stderr, PROG ": out of memory\n");
    return ok ? 0 : 1;
}

/* The value of option `name` at argv[*i] ("--name V" or "--name=V"), NULL when it is not that option; *bad when it
 * is but has no value. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *bad)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0 || (argv[*i][n] != '\0' && argv[*i][n] != '='))
        return NULL;
    const char *v = argv[*i][n] == '=' ? argv[*i] + n + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    *bad = !v;
    return v;
}

int main(int argc, char **argv)
{
    const char *topo = NULL, *ranks = NULL, *policy = NULL, *servers = NULL, *per = NULL;
    int selection = 0;
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        const char *v;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--selection") == 0) {
            selection = 1;
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--topo", &bad)) || bad) {
            if (bad || topo) {
                fprintf(stderr, PROG ": %s\n", bad ? "--topo needs a FILE (see --help)" : "--topo is given once");
                return 2;
            }
            topo = v;
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "-n", &bad)) || bad || (v = opt_value(argc, argv, &i, "--ranks", &bad))) {
            if (bad) {
                fprintf(stderr, PROG ": -n needs a number of ranks (see --help)\n");
                return 2;
            }
            ranks = v;
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--policy", &bad)) || bad) {
            if (bad || st_sel_policy_find(v) < 0) {
                fprintf(stderr, PROG ": --policy needs model, hccl, hccl_guide or size (see --help)\n");
                return 2;
            }
            policy = v;
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--servers", &bad)) || bad) {
            if (bad) {
                fprintf(stderr, PROG ": --servers needs A..B (see --help)\n");
                return 2;
            }
            servers = v;
            continue;
        }
        if ((v = opt_value(argc, argv, &i, "--per-server", &bad)) || bad) {
            if (bad) {
                fprintf(stderr, PROG ": --per-server needs a number of ranks (see --help)\n");
                return 2;
            }
            per = v;
            continue;
        }
        fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    int first = 0, last = 0, L = 1, used = 0;
    if (servers && (sscanf(servers, "%d..%d%n", &first, &last, &used) != 2 || servers[used] || first < 1 ||
                    last < first || last > 100000)) {
        fprintf(stderr, PROG ": --servers '%s': expected A..B, 1 <= A <= B <= 100000\n", servers);
        return 2;
    }
    if (per && (sscanf(per, "%d%n", &L, &used) != 1 || per[used] || L < 1 || (long)L * last > ST_MAX_RANKS)) {
        fprintf(stderr, PROG ": --per-server '%s': expected ranks per server, at most %d ranks in all\n", per,
                ST_MAX_RANKS);
        return 2;
    }
    if ((servers || per) && (!selection || topo || ranks || (per && !servers))) {
        fprintf(stderr, PROG ": --servers (and --per-server) go with --selection, without --topo and -n\n");
        return 2;
    }
    char *end = NULL;
    long p = ranks ? strtol(ranks, &end, 10) : 0;
    if (ranks && (end == ranks || *end || p < 1 || p > ST_MAX_RANKS)) {
        fprintf(stderr, PROG ": -n '%s': expected a number of ranks from 1 to %d\n", ranks, ST_MAX_RANKS);
        return 2;
    }
    if ((ranks || policy) && !selection) {
        fprintf(stderr, PROG ": -n and --policy go with --selection (see --help)\n");
        return 2;
    }
    static st_settings s;
    static st_origin o;
    char err[1024];
    if (st_settings_load_origin(NULL, &s, &o, err, sizeof err) != STITCH_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    if (servers)
        return print_selection_sweep(&s, policy ? st_sel_policy_find(policy) : s.select, first, last, L);
    if (selection)
        return print_selection_tables(&s, topo, (int)p, policy ? st_sel_policy_find(policy) : -1);
    int gp = 0, *gsizes, ng;
    if (s.groups && check_groups(&s, &gp, &gsizes, &ng, err, sizeof err) != 0) { /* as init would refuse it */
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    if (s.groups)
        free(gsizes);
    printf("stitch %d.%d (libstitch; step tables format %d)\n\n", STITCH_VERSION_MAJOR, STITCH_VERSION_MINOR,
           ST_TABLE_VERSION);
    print_algorithms();
    print_tunables(&o);
    print_hccl_levels(&s, &o);
    print_selection(&s);
#ifdef STITCH_HAVE_VERBS
    st_tp_verbs_describe(stdout, &s);
#else
    printf("verbs: not built (no <infiniband/verbs.h> at build time: libibverbs-dev)\n");
#endif
    print_devices();
    if (topo)
        return print_topology(topo, NULL);
    return s.topo ? print_topology(s.topo, s.topo_source) : 0;
}
