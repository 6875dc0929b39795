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
 * warning here (stderr), not a failure. Bad command lines exit 2.
 *
 * No --topo yet: the topology loader (YAML) is not in this tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choose.h"
#include "config.h"
#include "registry.h"
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
            "\n"
            "Exit status: 0, or 1 when a variable's value is malformed (the message names it, as communicator\n"
            "creation would), 2 for a bad command line.\n");
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
    if (st_reg_new(NULL, &reg, why, sizeof why) != STITCH_OK || st_resolve_algos(reg, s, ch, why, sizeof why)) {
        printf("  none: %s\n", why);
        fprintf(stderr, PROG ": warning: a communicator with the built-in catalogue alone would fail: %s\n", why);
        st_reg_free(reg);
        return;
    }
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        int alg;
        const char *hccl = st_hccl_pick(s, (stitch_coll_t)c, &alg);
        printf("  %-16s", stitch_coll_name((stitch_coll_t)c));
        if (!ch[c].algo)
            printf("(none)\n");
        else if (ch[c].is_auto && ch[c].small)
            printf("auto: %s while a rank sends at most %zu bytes with it, %s above\n", ch[c].small->name,
                   s->oneshot_max, ch[c].algo->name);
        else if (ch[c].is_auto)
            printf("auto: %s\n", ch[c].algo->name);
        else
            printf("%s (%s)\n", ch[c].algo->name, hccl && strcmp(hccl, ch[c].algo->name) == 0
                   ? s->hccl_algo_source : s->algo_source);
    }
    st_reg_free(reg);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    static st_settings s;
    static st_origin o;
    char err[1024];
    if (st_settings_load_origin(NULL, &s, &o, err, sizeof err) != STITCH_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    printf("stitch %d.%d (libstitch; step tables format %d)\n\n", STITCH_VERSION_MAJOR, STITCH_VERSION_MINOR,
           ST_TABLE_VERSION);
    print_algorithms();
    print_tunables(&o);
    print_hccl_levels(&s, &o);
    print_selection(&s);
    return 0;
}
