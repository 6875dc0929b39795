/* test_hccl.c - HCCL's configuration variables (runtime/config.c, spec sections 11.2, 12.1, 14.2): every rejection
 * rule of HCCL_ALGO with its exact message, the forms it accepts and what they store, the split ratio's and
 * determinism's rules, and the priority communicator > environment > default with each value's source recorded
 * (st_origin); then what the runtime selects from HCCL_ALGO (choose.c).
 *
 * The tables go through st_settings_load, the loader communicator creation calls; a few rows also go through
 * stitch_comm_init_threads to show that init fails with the same message.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "choose.h"
#include "comm.h"
#include "config.h"
#include "runner.h"
#include "stitch.h"

#define FORMS "; expected level0:NA;level1:<algo> or <op0>=level0:NA;level1:<algo0>/<op1>=level0:NA;level1:<algo1>"
#define ALGS "(algorithms: null, ring, pipeline, fullmesh, H-D_R, pairwise, NHR, NHR_V1, AHC, AHC_BROKE, NB, NA)"
#define OPS                                                                                                    \
    "(operators: broadcast, allreduce, reduce, send, receive, allgather, reducescatter, alltoall, gather, "    \
    "scatter, sendrecv; stitch takes them in any case)"

typedef struct bad_case {
    const char *rule; /* spec 11.2's item */
    const char *value, *message;
} bad_case;

/* Every rejection of spec 11.2, in HCCL's order, and stitch's own (last rows). The message is compared whole. */
static const bad_case bad_algo[] = {
    {"2: '/' first", "/level1:ring",
     "HCCL_ALGO='/level1:ring': algo config is invalid: an empty operator entry ('/' first, last or doubled)" FORMS},
    {"2: '/' last", "level1:ring/",
     "HCCL_ALGO='level1:ring/': algo config is invalid: an empty operator entry ('/' first, last or doubled)" FORMS},
    {"2: '/' doubled", "allreduce=level1:ring//allgather=level1:NB",
     "HCCL_ALGO='allreduce=level1:ring//allgather=level1:NB': algo config is invalid: an empty operator entry ('/' "
     "first, last or doubled)" FORMS},
    {"3: '=' first", "=level1:ring",
     "HCCL_ALGO='=level1:ring': algo config is invalid: '=' first or last in '=level1:ring'" FORMS},
    {"3: '=' last", "allreduce=", "HCCL_ALGO='allreduce=': algo config is invalid: '=' first or last in 'allreduce='"
     FORMS},
    {"3: both ways", "level1:ring/allreduce=level1:NB",
     "HCCL_ALGO='level1:ring/allreduce=level1:NB': should not set both algo config way (a common entry and "
     "per-operator entries)" FORMS},
    {"3: two common", "level1:ring/level1:NB",
     "HCCL_ALGO='level1:ring/level1:NB': should only set one common config (2 given)" FORMS},
    {"4: ';' first", ";level1:ring",
     "HCCL_ALGO=';level1:ring': algo config is invalid: an empty level in ';level1:ring' (';' first, last or doubled)"
     FORMS},
    {"4: ';' last", "level0:NA;level1:ring;",
     "HCCL_ALGO='level0:NA;level1:ring;': algo config is invalid: an empty level in 'level0:NA;level1:ring;' (';' "
     "first, last or doubled)" FORMS},
    {"4: ';' doubled", "level0:NA;;level1:ring",
     "HCCL_ALGO='level0:NA;;level1:ring': algo config is invalid: an empty level in 'level0:NA;;level1:ring' (';' "
     "first, last or doubled)" FORMS},
    {"4: more than 4 levels", "level0:NA;level1:ring;level2:NB;level3:NB;level0:NA",
     "HCCL_ALGO='level0:NA;level1:ring;level2:NB;level3:NB;level0:NA': algo config is invalid. algo level is more "
     "than 4 in 'level0:NA;level1:ring;level2:NB;level3:NB;level0:NA'" FORMS},
    {"4: the fifth counted before the rest", "a;b;c;d;e;;",
     "HCCL_ALGO='a;b;c;d;e;;': algo config is invalid. algo level is more than 4 in 'a;b;c;d;e;;'" FORMS},
    {"5: ':' first", "level0:NA;:ring",
     "HCCL_ALGO='level0:NA;:ring': algo config is invalid: ':' first or last in ':ring'" FORMS},
    {"5: ':' last", "level1:", "HCCL_ALGO='level1:': algo config is invalid: ':' first or last in 'level1:'" FORMS},
    {"5: unknown level", "level4:ring",
     "HCCL_ALGO='level4:ring': algo config is invalid, level level4 is not supported (levels: level0, level1, "
     "level2, level3)" FORMS},
    {"5: level names are case-sensitive", "Level1:ring",
     "HCCL_ALGO='Level1:ring': algo config is invalid, level Level1 is not supported (levels: level0, level1, "
     "level2, level3)" FORMS},
    {"5: unknown algorithm", "level1:FOO",
     "HCCL_ALGO='level1:FOO': algo config is invalid, algo FOO is not supported " ALGS FORMS},
    {"5: algorithm names are case-sensitive", "level1:nhr",
     "HCCL_ALGO='level1:nhr': algo config is invalid, algo nhr is not supported (algorithm names are "
     "case-sensitive: NHR)" FORMS},
    {"5: stitch's name is not HCCL's", "level1:rhd",
     "HCCL_ALGO='level1:rhd': algo config is invalid, algo rhd is not supported " ALGS FORMS},
    {"5: a token without ':' is an unknown level", "ring",
     "HCCL_ALGO='ring': algo config is invalid, level ring is not supported (levels: level0, level1, level2, "
     "level3)" FORMS},
    {"5: ... and a bare level name an unknown algorithm", "level0",
     "HCCL_ALGO='level0': algo config is invalid, algo level0 is not supported " ALGS FORMS},
    {"5: the level is checked before the algorithm", "level9:FOO",
     "HCCL_ALGO='level9:FOO': algo config is invalid, level level9 is not supported (levels: level0, level1, "
     "level2, level3)" FORMS},
    {"6: a level twice", "level1:ring;level1:NB",
     "HCCL_ALGO='level1:ring;level1:NB': algo config is invalid: level1 given twice in 'level1:ring;level1:NB'"
     FORMS},
    {"6: a level twice, same algorithm", "level0:NA;level0:NA",
     "HCCL_ALGO='level0:NA;level0:NA': algo config is invalid: level0 given twice in 'level0:NA;level0:NA'" FORMS},
    {"7: unknown operator", "bcast=level1:ring",
     "HCCL_ALGO='bcast=level1:ring': specific config optype[bcast] is invalid " OPS FORMS},
    {"7: stitch's collective name is not an operator", "all_reduce=level1:ring",
     "HCCL_ALGO='all_reduce=level1:ring': specific config optype[all_reduce] is invalid " OPS FORMS},
    {"7: level0 null per operator", "allreduce=level0:null;level1:AHC",
     "HCCL_ALGO='allreduce=level0:null;level1:AHC': specific config level0 not support null type (in "
     "'allreduce=level0:null;level1:AHC')" FORMS},
    {"7: others is rejected by the second pass", "others=level1:ring",
     "HCCL_ALGO='others=level1:ring': specific config optype[others] is invalid " OPS FORMS},
    {"7: ... after the first pass parsed it", "allreduce=level1:ring/others=level1:FOO",
     "HCCL_ALGO='allreduce=level1:ring/others=level1:FOO': algo config is invalid, algo FOO is not supported " ALGS
     FORMS},
    {"7: operators in order", "allreduce=level1:FOO/bogus=level1:ring",
     "HCCL_ALGO='allreduce=level1:FOO/bogus=level1:ring': algo config is invalid, algo FOO is not supported " ALGS
     FORMS},
    {"1: only spaces are removed", "level1:\tring",
     "HCCL_ALGO='level1:\tring': algo config is invalid, algo \tring is not supported " ALGS FORMS},
    /* stitch's own, after HCCL's parser accepted the value */
    {"stitch: NHR_V1 has no implementation", "level0:NA;level1:NHR_V1",
     "HCCL_ALGO='level0:NA;level1:NHR_V1': level1 NHR_V1 is accepted by HCCL but stitch has no implementation of it "
     "(HCCL's legacy NHR, spec 5.7); use NHR"},
    {"stitch: AHC per operator for another collective", "broadcast=level1:AHC",
     "HCCL_ALGO='broadcast=level1:AHC': level1 AHC is for allreduce, reducescatter and allgather only, not broadcast "
     "(HCCL would use its default instead; stitch does not choose silently)"},
    {"stitch: pairwise per operator for another collective", "allgather=level1:pairwise",
     "HCCL_ALGO='allgather=level1:pairwise': level1 pairwise is for alltoall only, not all_gather (HCCL would use "
     "its default instead; stitch does not choose silently)"},
};

static void load_env(const char *var, const char *value, st_settings *s, stitch_status_t *st, char *err,
                     size_t errlen)
{
    setenv(var, value, 1);
    err[0] = '\0';
    *st = st_settings_load(NULL, s, err, errlen);
    unsetenv(var);
}

static void test_algo_rejections(void)
{
    for (size_t i = 0; i < sizeof bad_algo / sizeof *bad_algo; i++) {
        st_settings s;
        stitch_status_t st;
        char err[1024];
        load_env("HCCL_ALGO", bad_algo[i].value, &s, &st, err, sizeof err);
        CHECK(st == STITCH_ERR_CONFIG, "rule %s: '%s' was accepted", bad_algo[i].rule, bad_algo[i].value);
        CHECK(strcmp(err, bad_algo[i].message) == 0, "rule %s:\n got  %s\n want %s", bad_algo[i].rule, err,
              bad_algo[i].message);
    }
    /* the same message from communicator creation, and from the config field under its own name */
    stitch_comm_t *comms[2];
    char err[1024];
    setenv("HCCL_ALGO", "level1:FOO", 1);
    CHECK(stitch_comm_init_threads(2, NULL, comms, err, sizeof err) == STITCH_ERR_CONFIG, "init accepted FOO");
    CHECK(strcmp(err, "stitch_comm_init_threads: HCCL_ALGO='level1:FOO': algo config is invalid, algo FOO is not "
                      "supported " ALGS FORMS) == 0, "%s", err);
    unsetenv("HCCL_ALGO");
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.hccl_algo = "level1:ring;level1:NB";
    CHECK(stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG, "init accepted config");
    CHECK(strcmp(err, "stitch_comm_init_threads: config->hccl_algo='level1:ring;level1:NB': algo config is invalid: "
                      "level1 given twice in 'level1:ring;level1:NB'" FORMS) == 0, "%s", err);
}

/* Accepted values and what they store: levels per collective ("-" not given), as HCCL's names. */
typedef struct good_case {
    const char *value;
    int given;
    const char *all_reduce, *broadcast, *all_to_all_v; /* "l0 l1 l2 l3" after st_hccl_level */
} good_case;

static const good_case good_algo[] = {
    {"", 0, "- - - -", "- - - -", "- - - -"},
    {"   ", 0, "- - - -", "- - - -", "- - - -"},
    {"level1:NHR", 1, "- NHR - -", "- NHR - -", "- NHR - -"},
    {"level0:NA;level1:ring", 1, "NA ring - -", "NA ring - -", "NA ring - -"},
    {"level2:NB;level1:H-D_R", 1, "- H-D_R NB -", "- H-D_R NB -", "- H-D_R NB -"},
    {" level0 : NA ; level1 : NB ", 1, "NA NB - -", "NA NB - -", "NA NB - -"},
    {"level3:ring", 1, "- - - ring", "- - - ring", "- - - ring"},
    /* level1 AHC drives level2 (HCCL ignores level2's own entry) and applies to RS, AG, AR only */
    {"level0:NA;level1:AHC", 1, "NA AHC AHC -", "NA - - -", "NA - - -"},
    {"level0:null;level1:AHC_BROKE;level2:ring", 1, "null AHC_BROKE AHC_BROKE -", "null - ring -", "null - ring -"},
    /* per operator; alltoall sets all_to_all_v too; operator names in any case (HCCL: lower case only) */
    {"allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:H-D_R", 1, "NA ring - -", "- - - -", "- - - -"},
    {"AllReduce=level1:AHC/Broadcast=level1:NB/ALLTOALL=level1:pairwise", 1, "- AHC AHC -", "- NB - -",
     "- pairwise - -"},
    {"send=level1:ring/receive=level1:ring/sendrecv=level1:ring", 1, "- - - -", "- - - -", "- - - -"},
    {"allreduce=level1:ring/allreduce=level1:NB", 1, "- NB - -", "- - - -", "- - - -"}, /* the last one wins */
    {"level0:fullmesh;level1:pipeline", 1, "fullmesh pipeline - -", "fullmesh pipeline - -",
     "fullmesh pipeline - -"},
};

static void levels_text(const st_hccl_algo *h, stitch_coll_t c, char *out, size_t len)
{
    size_t used = 0;
    for (int l = 0; l < ST_HCCL_LEVELS; l++) {
        int a = st_hccl_level(h, c, l);
        used += (size_t)snprintf(out + used, len - used, "%s%s", l ? " " : "", a == ST_HA_DEFAULT ? "-"
                                 : st_hccl_alg_name(a));
    }
}

static void test_algo_accepted(void)
{
    for (size_t i = 0; i < sizeof good_algo / sizeof *good_algo; i++) {
        const good_case *g = &good_algo[i];
        st_settings s;
        stitch_status_t st;
        char err[1024], got[64];
        load_env("HCCL_ALGO", g->value, &s, &st, err, sizeof err);
        CHECK(st == STITCH_OK, "'%s': %s", g->value, err);
        CHECK((s.hccl_algo_source != NULL) == g->given, "'%s': given %d", g->value, s.hccl_algo_source != NULL);
        const char *want[] = {g->all_reduce, g->broadcast, g->all_to_all_v};
        const stitch_coll_t colls[] = {STITCH_ALL_REDUCE, STITCH_BROADCAST, STITCH_ALL_TO_ALL_V};
        for (int k = 0; k < 3; k++) {
            levels_text(&s.hccl_algo, colls[k], got, sizeof got);
            CHECK(strcmp(got, want[k]) == 0, "'%s' %s: got '%s', want '%s'", g->value, stitch_coll_name(colls[k]),
                  got, want[k]);
        }
    }
}

/* HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO: spec 12.1's valid and invalid examples, and stitch's range check. */
static void test_split_ratio(void)
{
    static const struct {
        const char *value;
        double want;
    } good[] = {{"0", 0}, {"1", 1}, {"0.5", 0.5}, {"00.25", 0.25}, {"1.000", 1}, {"0.125", 0.125}};
    static const char *const badfmt[] = {".5", "5.", "-0.1", "+0.1", "1e-1", "0.5x", " 0.5", "0.5 ", "1..2",
                                         "0.1.2", "inf", "nan", "0x1"};
    st_settings s;
    stitch_status_t st;
    char err[512], want[512];
    const char *var = "HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO";
    CHECK(st_settings_load(NULL, &s, err, sizeof err) == STITCH_OK && s.split_ratio < 0, "unset: %g", s.split_ratio);
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        load_env(var, good[i].value, &s, &st, err, sizeof err);
        CHECK(st == STITCH_OK && fabs(s.split_ratio - good[i].want) < 1e-12, "'%s': %s, %g", good[i].value, err,
              s.split_ratio);
    }
    for (size_t i = 0; i < sizeof badfmt / sizeof *badfmt; i++) {
        load_env(var, badfmt[i], &s, &st, err, sizeof err);
        snprintf(want, sizeof want, "%s='%s': expected a non-negative number: digits, optionally a '.' and more "
                 "digits, such as 0.5", var, badfmt[i]);
        CHECK(st == STITCH_ERR_CONFIG && strcmp(err, want) == 0, "'%s':\n got  %s\n want %s", badfmt[i], err, want);
    }
    /* HCCL's format, but above 1: HCCL warns and uses 0.5; stitch refuses */
    static const char *const range[] = {"7", "1.5", "1.0000001"};
    for (size_t i = 0; i < sizeof range / sizeof *range; i++) {
        load_env(var, range[i], &s, &st, err, sizeof err);
        snprintf(want, sizeof want, "%s='%s': out of range: stitch expects 0 to 1 (HCCL would warn and use 0.5)", var,
                 range[i]);
        CHECK(st == STITCH_ERR_CONFIG && strcmp(err, want) == 0, "'%s':\n got  %s\n want %s", range[i], err, want);
    }
    /* the config field: 0 is "not set" (as in HCCL), anything outside (0, 1] or NaN an error */
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    const double badcfg[] = {-0.5, 1.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof badcfg / sizeof *badcfg; i++) {
        cfg.split_ratio = badcfg[i];
        CHECK(st_settings_load(&cfg, &s, err, sizeof err) == STITCH_ERR_CONFIG, "config %g accepted", badcfg[i]);
        snprintf(want, sizeof want, "config->split_ratio=%g: expected a number in (0, 1] (0: not set)", badcfg[i]);
        CHECK(strcmp(err, want) == 0, "got %s, want %s", err, want);
    }
}

/* HCCL_DETERMINISTIC: false, true, strict in any case; empty is unset (HCCL's GetEnv). */
static void test_deterministic(void)
{
    static const struct {
        const char *value;
        int want;
    } good[] = {{"false", 0}, {"FALSE", 0}, {"true", 1}, {"True", 1}, {"TRUE", 1}, {"", 0}};
    static const char *const bad[] = {"yes", "1", "0", " true", "true ", "on", "strictly"};
    st_settings s;
    stitch_status_t st;
    char err[512], want[512];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        load_env("HCCL_DETERMINISTIC", good[i].value, &s, &st, err, sizeof err);
        CHECK(st == STITCH_OK && s.deterministic == good[i].want, "'%s': %s, %d", good[i].value, err,
              s.deterministic);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        load_env("HCCL_DETERMINISTIC", bad[i], &s, &st, err, sizeof err);
        snprintf(want, sizeof want, "HCCL_DETERMINISTIC='%s': should be true, false or strict (in any case)", bad[i]);
        CHECK(st == STITCH_ERR_CONFIG && strcmp(err, want) == 0, "'%s':\n got  %s\n want %s", bad[i], err, want);
    }
    static const char *const strict[] = {"strict", "STRICT", "Strict"};
    for (size_t i = 0; i < sizeof strict / sizeof *strict; i++) {
        load_env("HCCL_DETERMINISTIC", strict[i], &s, &st, err, sizeof err);
        CHECK(st == STITCH_OK && s.deterministic == 2, "'%s': %s", strict[i], err);
    }
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.deterministic = 9;
    CHECK(st_settings_load(&cfg, &s, err, sizeof err) == STITCH_ERR_CONFIG &&
          strcmp(err, "config->deterministic=9: expected STITCH_DETERMINISTIC_FALSE, _TRUE or _STRICT (or 0: not "
                      "set)") == 0, "%s", err);
    cfg.deterministic = STITCH_DETERMINISTIC_STRICT;
    CHECK(st_settings_load(&cfg, &s, err, sizeof err) == STITCH_OK && s.deterministic == 2, "%s", err);
}

/* communicator > environment > default, each recorded in st_origin; the config's value wins even when the
 * environment's is malformed (the variable is then not read). */
static void test_priority(void)
{
    st_settings s;
    st_origin o;
    char err[512];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    CHECK(st_settings_load_origin(NULL, &s, &o, err, sizeof err) == STITCH_OK, "%s", err);
    for (int i = 0; i < ST_TUNABLE_COUNT; i++)
        CHECK(o.source[i] == ST_SRC_DEFAULT, "%s from %s", st_tunable_decl_of(i)->name, st_source_name(o.source[i]));
    CHECK(o.text[ST_T_STITCH_TIMEOUT] && strcmp(o.text[ST_T_STITCH_TIMEOUT], "300") == 0, "default text");
    CHECK(!o.text[ST_T_HCCL_ALGO] && !s.hccl_algo_source && s.split_ratio < 0 && s.deterministic == 0, "unset");

    setenv("HCCL_ALGO", "level1:NB", 1);
    setenv("HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO", "0.25", 1);
    setenv("HCCL_DETERMINISTIC", "true", 1);
    setenv("STITCH_TIMEOUT", "7", 1);
    CHECK(st_settings_load_origin(NULL, &s, &o, err, sizeof err) == STITCH_OK, "%s", err);
    CHECK(strcmp(st_source_name(o.source[ST_T_HCCL_ALGO]), "environment") == 0, "HCCL_ALGO from env");
    CHECK(o.source[ST_T_HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO] == ST_SRC_ENV &&
          o.source[ST_T_HCCL_DETERMINISTIC] == ST_SRC_ENV && o.source[ST_T_STITCH_TIMEOUT] == ST_SRC_ENV &&
          o.source[ST_T_STITCH_ALGO] == ST_SRC_DEFAULT, "sources");
    CHECK(strcmp(s.hccl_algo_source, "HCCL_ALGO") == 0 && s.hccl_algo.level[STITCH_ALL_REDUCE][1] == ST_HA_NB &&
          s.split_ratio == 0.25 && s.deterministic == 1 && s.timeout_ms == 7000, "environment values");

    cfg.hccl_algo = "allreduce=level1:ring";
    cfg.split_ratio = 0.75;
    cfg.deterministic = STITCH_DETERMINISTIC_FALSE;
    cfg.timeout_ms = 1234;
    cfg.algo = "mesh";
    setenv("HCCL_DETERMINISTIC", "garbage", 1); /* not read: the config sets it */
    CHECK(st_settings_load_origin(&cfg, &s, &o, err, sizeof err) == STITCH_OK, "%s", err);
    for (int i = 0; i < ST_TUNABLE_COUNT; i++) {
        int comm = i == ST_T_HCCL_ALGO || i == ST_T_HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO ||
                   i == ST_T_HCCL_DETERMINISTIC || i == ST_T_STITCH_TIMEOUT || i == ST_T_STITCH_ALGO;
        CHECK((o.source[i] == ST_SRC_COMM) == comm, "%s from %s", st_tunable_decl_of(i)->name,
              st_source_name(o.source[i]));
    }
    CHECK(strcmp(st_source_name(ST_SRC_COMM), "communicator") == 0 && strcmp(st_source_name(ST_SRC_DEFAULT),
          "default") == 0, "source names");
    CHECK(strcmp(o.text[ST_T_HCCL_ALGO], "allreduce=level1:ring") == 0 &&
          strcmp(o.text[ST_T_HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO], "0.75") == 0 &&
          strcmp(o.text[ST_T_HCCL_DETERMINISTIC], "false") == 0 &&
          strcmp(o.text[ST_T_STITCH_TIMEOUT], "timeout_ms=1234") == 0, "config texts");
    CHECK(strcmp(s.hccl_algo_source, "config->hccl_algo") == 0 &&
          s.hccl_algo.level[STITCH_ALL_REDUCE][1] == ST_HA_RING && s.hccl_algo.level[STITCH_BROADCAST][1] ==
          ST_HA_DEFAULT && s.split_ratio == 0.75 && s.deterministic == 0 && s.timeout_ms == 1234, "config values");
}

/* What the runtime selects from HCCL_ALGO's level1 (select_conf.c): the configured algorithm at every size, fitted
 * to the layout (one rank per server: the algorithm itself; several: hier with it between servers), HCCL's default
 * where it cannot run; STITCH_ALGO against HCCL_ALGO by where each comes from. */
static const size_t sel_sizes[] = {4, 1024, 256 << 10, 1 << 20, 16 << 20, (size_t)1 << 30};
#define NSIZES (int)(sizeof sel_sizes / sizeof *sel_sizes)

/* On p thread ranks with cfg (topo: a layout, or NULL): the choice of coll is `choice` ("auto" or a name) and a
 * call of every size in sel_sizes runs `runs` (NULL: not checked). */
static void expect_runs(const stitch_config_t *cfg0, const char *topo, int p, stitch_coll_t coll, const char *choice,
                        const char *runs)
{
    stitch_config_t cfg = cfg0 ? *cfg0 : (stitch_config_t)STITCH_CONFIG_INIT;
    stitch_comm_t *comms[16];
    char err[1024];
    cfg.topo = topo ? topo : cfg.topo;
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    const char *got = stitch_comm_algorithm(comms[0], coll);
    CHECK(strcmp(got, choice) == 0, "%s on %s: choice %s, want %s", stitch_coll_name(coll), topo ? topo : "-", got,
          choice);
    for (int i = 0; runs && i < NSIZES; i++) {
        const char *a = stitch_comm_algorithm_for(comms[0], coll, sel_sizes[i] / 4, STITCH_FP32);
        CHECK(a && strcmp(a, runs) == 0, "%s on %s, %zu bytes: runs %s, want %s", stitch_coll_name(coll),
              topo ? topo : "-", sel_sizes[i], a ? a : "(null)", runs);
    }
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static void test_selection(void)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    /* the cases: one rank per server runs the algorithm itself; 2x4 runs hier (level1 ring: test_roles) */
    setenv("HCCL_ALGO", "level0:NA;level1:NHR", 1);
    expect_runs(NULL, "1,1,1,1,1", 5, STITCH_ALL_REDUCE, "auto", "nhr");
    expect_runs(NULL, "1,1,1,1,1", 5, STITCH_ALL_GATHER, "auto", "nhr");
    setenv("HCCL_ALGO", "allreduce=level0:NA;level1:NHR/allgather=level1:NB", 1); /* per operator */
    expect_runs(NULL, "1,1,1,1,1", 5, STITCH_ALL_REDUCE, "auto", "nhr");
    expect_runs(NULL, "1,1,1,1,1", 5, STITCH_ALL_GATHER, "auto", "nb");
    expect_runs(NULL, "2,2,2", 6, STITCH_ALL_GATHER, "auto", "hier");
    setenv("HCCL_ALGO", "level0:NA;level1:H-D_R", 1);
    expect_runs(NULL, "1,1,1,1,1", 5, STITCH_ALL_REDUCE, "auto", "rhd");
    expect_runs(NULL, "1,1,1,1,1,1,1", 7, STITCH_BROADCAST, "auto", "rhd");
    setenv("HCCL_ALGO", "level0:NA;level1:ring", 1);
    for (int policy = 0; policy < 3; policy++) { /* no policy overrides it by size (policy hccl took pipeline) */
        static const char *const pol[] = {"model", "hccl", "size"};
        setenv("STITCH_SELECT", pol[policy], 1);
        expect_runs(NULL, "4,4", 8, STITCH_ALL_REDUCE, "auto", "hier");
        expect_runs(NULL, "4,4", 8, STITCH_REDUCE_SCATTER, "auto", "hier");
    }
    unsetenv("STITCH_SELECT");
    /* where it cannot run, HCCL's default (policy hccl): one server (no level1), a collective it is not for */
    expect_runs(NULL, NULL, 4, STITCH_ALL_REDUCE, "auto", NULL);
    stitch_comm_t *one[4];
    char err[1024];
    CHECK(stitch_comm_init_threads(4, NULL, one, err, sizeof err) == STITCH_OK, "%s", err);
    CHECK(strcmp(stitch_comm_algorithm_for(one[0], STITCH_ALL_REDUCE, 16, STITCH_FP32), "mesh_oneshot") == 0 &&
          strcmp(stitch_comm_algorithm_for(one[0], STITCH_ALL_REDUCE, 1 << 20, STITCH_FP32), "mesh") == 0,
          "one server: %s %s", stitch_comm_algorithm_for(one[0], STITCH_ALL_REDUCE, 16, STITCH_FP32),
          stitch_comm_algorithm_for(one[0], STITCH_ALL_REDUCE, 1 << 20, STITCH_FP32));
    for (int r = 0; r < 4; r++)
        stitch_comm_destroy(one[r]);
    expect_runs(NULL, "1,1,1,1", 4, STITCH_ALL_TO_ALL, "auto", "pairwise");
    setenv("HCCL_ALGO", "level0:NA;level1:pipeline", 1);
    expect_runs(NULL, "2,2", 4, STITCH_ALL_REDUCE, "auto", "pipeline");
    expect_runs(NULL, "2,2", 4, STITCH_REDUCE_SCATTER, "auto", "pipeline");
    expect_runs(NULL, "2,3", 5, STITCH_ALL_REDUCE, "auto", "ahc"); /* unequal servers: HCCL's AHC */
    /* spec 7: pipeline is an alltoall algorithm too (issue 22: level1:pipeline silently ran mesh) */
    expect_runs(NULL, "2,2", 4, STITCH_ALL_TO_ALL, "auto", "pipeline");
    expect_runs(NULL, "3,3", 6, STITCH_ALL_TO_ALL_V, "auto", "pipeline");
    expect_runs(NULL, "2,3", 5, STITCH_ALL_TO_ALL, "auto", NULL); /* unequal servers: HCCL's default */
    setenv("HCCL_DETERMINISTIC", "true", 1); /* determinism is about reductions: alltoall keeps pipeline */
    expect_runs(NULL, "2,2", 4, STITCH_ALL_TO_ALL, "auto", "pipeline");
    expect_runs(NULL, "2,2", 4, STITCH_ALL_GATHER, "auto", "pipeline");
    unsetenv("HCCL_DETERMINISTIC");
    setenv("HCCL_ALGO", "allreduce=level1:pipeline/alltoall=level1:pairwise", 1);
    expect_runs(NULL, "2,2", 4, STITCH_ALL_REDUCE, "auto", "pipeline");
    expect_runs(NULL, NULL, 4, STITCH_ALL_TO_ALL, "auto", "pairwise"); /* pairwise on any layout (spec 8) */
    setenv("HCCL_ALGO", "level1:pipeline", 1);
    setenv("STITCH_ALGO", "rhd", 1); /* both from the environment: stitch's own name wins where it exists */
    expect_runs(NULL, "2,2", 4, STITCH_ALL_REDUCE, "rhd", "rhd");
    expect_runs(NULL, "2,2", 4, STITCH_ALL_TO_ALL, "auto", NULL);
    cfg.hccl_algo = "level1:pipeline"; /* the communicator's HCCL_ALGO beats the environment's STITCH_ALGO */
    expect_runs(&cfg, "2,2", 4, STITCH_ALL_REDUCE, "auto", "pipeline");
    cfg.algo = "mesh"; /* both from the communicator: stitch's name */
    expect_runs(&cfg, "2,2", 4, STITCH_ALL_REDUCE, "mesh", "mesh");
    expect_runs(&cfg, "2,2", 4, STITCH_ALL_TO_ALL, "mesh", "mesh");
    unsetenv("STITCH_ALGO");
    unsetenv("HCCL_ALGO");

    /* a per-operator entry naming a whole-communicator algorithm must exist for its collective */
    stitch_comm_t *comms[2];
    char known[512];
    setenv("HCCL_ALGO", "broadcast=level1:pipeline", 1);
    CHECK(stitch_comm_init_threads(2, NULL, comms, err, sizeof err) == STITCH_ERR_CONFIG, "accepted");
    const char *names[64];
    int n = stitch_algorithms(STITCH_BROADCAST, names, 64);
    size_t used = 0;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", names[i]);
    char want[1024];
    snprintf(want, sizeof want, "stitch_comm_init_threads: HCCL_ALGO='broadcast=level1:pipeline': level1 pipeline "
             "is stitch's algorithm 'pipeline', which the catalogues have no broadcast of (known: %s)", known);
    CHECK(strcmp(err, want) == 0, "\n got  %s\n want %s", err, want);
}

/* HCCL_ALGO's level entries replace the roles the composites name: hier's all_reduce over 4 groups of 2 runs its
 * level1 phase (across the groups) with rhd by default (4 is a power of two: 2 steps each way) and with ring when
 * HCCL_ALGO says level1:ring (3 steps each way), and the result is right either way. */
typedef struct roles_ctx {
    stitch_comm_t **comms;
    int32_t nsteps[8]; /* per rank: what it read of its schedule (steps, units) */
} roles_ctx;

static void roles_rank(void *arg, int r)
{
    roles_ctx *x = arg;
    stitch_comm_t *comm = x->comms[r];
    int32_t v[6];
    for (int i = 0; i < 6; i++)
        v[i] = r * 10 + i;
    CHECK(stitch_all_reduce(v, v, 6, STITCH_INT32, STITCH_SUM, comm) == STITCH_OK, "%s",
          stitch_comm_last_error(comm));
    for (int i = 0; i < 6; i++)
        CHECK(v[i] == 280 + 8 * i, "rank %d: v[%d] = %d, want %d", r, i, (int)v[i], 280 + 8 * i);
    const st_algo *hier = st_reg_find(comm->reg, "hier", STITCH_ALL_REDUCE);
    x->nsteps[r] = comm->cache[st_reg_index(comm->reg, hier)].sched.nsteps;
}

/* 8 thread ranks with cfg each run fn once; what rank 0 put in nsteps[0]. */
static int32_t run8(const stitch_config_t *cfg, void (*fn)(void *, int))
{
    stitch_comm_t *comms[8];
    char err[1024];
    CHECK(stitch_comm_init_threads(8, cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    roles_ctx x = {comms, {0}};
    st_run_ranks(8, fn, &x);
    for (int r = 0; r < 8; r++)
        stitch_comm_destroy(comms[r]);
    return x.nsteps[0];
}

static int32_t roles_steps(const char *hccl_algo)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.algo = "all_reduce=hier", cfg.groups = "4x2", cfg.hccl_algo = hccl_algo;
    return run8(&cfg, roles_rank);
}

static void test_roles(void)
{
    int32_t plain = roles_steps(NULL), ring = roles_steps("level0:NA;level1:ring"),
            nb = roles_steps("allreduce=level0:NA;level1:NB"), other = roles_steps("allgather=level0:NA;level1:ring");
    CHECK(ring == plain + 2, "level1:ring gave %d steps, without HCCL_ALGO %d", (int)ring, (int)plain);
    CHECK(nb == plain && other == plain, "level1:NB %d, another operator's entry %d, plain %d", (int)nb, (int)other,
          (int)plain);
    /* not forced: HCCL_ALGO's level1 ring alone makes all_reduce run hier with ring between the servers */
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.groups = "4x2", cfg.hccl_algo = "level0:NA;level1:ring";
    int32_t chosen = run8(&cfg, roles_rank);
    CHECK(chosen == ring, "level1:ring alone gave %d steps, forced hier with it %d", (int)chosen, (int)ring);
}

/* Level0 is the server's hardware (spec 13.1, 11.2): a topology whose level 0 says `full_mesh: false` runs ring
 * inside a server (hier's level0 phases; HCCL's policies on one server), a full mesh mesh; HCCL_ALGO's level0
 * entries are accepted and ignored, as HCCL ignores them. */
static const char *level0_file(char *path, size_t len, const char *layout, int full_mesh)
{
    snprintf(path, len, "/tmp/test_hccl_l0_%d_%d_%s.yaml", (int)getpid(), full_mesh, layout[0] == '[' ? "2" : "1");
    FILE *f = fopen(path, "w");
    CHECK(f, "%s", path);
    fprintf(f, "levels:\n  - {name: server, bandwidth: 56 GB/s, latency: 1 us, full_mesh: %s}\n%s"
               "layout: %s\n", full_mesh ? "true" : "false",
            layout[0] == '[' ? "  - {name: net, bandwidth: 25 GB/s, latency: 5 us}\n" : "", layout);
    fclose(f);
    return path;
}

static int32_t level0_hier_steps(const char *layout, int full_mesh, const char *hccl_algo)
{
    char path[128];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.algo = "all_reduce=hier", cfg.topo = level0_file(path, sizeof path, layout, full_mesh);
    cfg.hccl_algo = hccl_algo;
    int32_t n = run8(&cfg, roles_rank);
    unlink(path);
    return n;
}

static void test_level0(void)
{
    int32_t mesh = level0_hier_steps("[2, 2, 2, 2]", 1, NULL), ring = level0_hier_steps("[2, 2, 2, 2]", 0, NULL);
    int32_t ignored = level0_hier_steps("[2, 2, 2, 2]", 1, "level0:ring;level1:H-D_R");
    /* 4 servers of 2: a ring of 2 takes one step each way, like the mesh; 2 servers of 4 show the difference */
    CHECK(ring == mesh && ignored == mesh, "servers of 2: mesh %d ring %d, level0:ring given %d", (int)mesh, (int)ring,
          (int)ignored);
    char path[128];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    for (int fm = 0; fm < 2; fm++) {
        cfg.topo = level0_file(path, sizeof path, "[4, 4]", fm);
        cfg.algo = "all_reduce=hier";
        stitch_comm_t *comms[8];
        char err[1024];
        CHECK(stitch_comm_init_threads(8, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
        roles_ctx x = {comms, {0}};
        st_run_ranks(8, roles_rank, &x);
        for (int r = 0; r < 8; r++)
            stitch_comm_destroy(comms[r]);
        unlink(path);
        /* mesh RS 1 + rhd AR of 2 servers + mesh AG 1, or ring RS 3 + the same + ring AG 3 */
        static int32_t ring4; /* fm 0 runs first */
        if (fm == 0)
            ring4 = x.nsteps[0];
        else
            CHECK(ring4 == x.nsteps[0] + 4, "servers of 4: not a full mesh %d steps, full mesh %d", (int)ring4,
                  (int)x.nsteps[0]);
    }
    /* one server that is not a full mesh: HCCL's policies run ring at every size, HCCL_ALGO level0 or not */
    static const char *const pol[] = {"hccl", "hccl_guide"};
    for (int i = 0; i < 2; i++) {
        setenv("STITCH_SELECT", pol[i], 1);
        stitch_config_t one = STITCH_CONFIG_INIT;
        one.hccl_algo = i ? "level0:fullmesh" : NULL;
        expect_runs(&one, level0_file(path, sizeof path, "4", 0), 4, STITCH_ALL_REDUCE, "auto", "ring");
        expect_runs(&one, path, 4, STITCH_ALL_GATHER, "auto", "ring");
        unlink(path);
        expect_runs(&one, level0_file(path, sizeof path, "4", 1), 4, STITCH_ALL_GATHER, "auto", "mesh");
        unlink(path);
    }
    unsetenv("STITCH_SELECT");
}

/* Policy hccl_guide names the algorithm between servers per size range and hier runs it (comm.c's use_l1): on 3
 * servers of 2 a small all_reduce runs hier with rhd between the servers (the guide's RHD below 256 MB), where hier's
 * own role would run ring (3 servers: V1's rule), and the 256 MB rule names ring; the result is right. */
static void guide_rank(void *arg, int r)
{
    roles_ctx *x = arg;
    stitch_comm_t *comm = x->comms[r];
    int32_t v[7];
    for (int i = 0; i < 7; i++)
        v[i] = r * 10 + i;
    CHECK(stitch_all_reduce(v, v, 7, STITCH_INT32, STITCH_SUM, comm) == STITCH_OK, "%s",
          stitch_comm_last_error(comm));
    for (int i = 0; i < 7; i++)
        CHECK(v[i] == 150 + 6 * i, "rank %d: v[%d] = %d, want %d", r, i, (int)v[i], 150 + 6 * i);
    const st_algo *hier = st_reg_find(comm->reg, "hier", STITCH_ALL_REDUCE);
    const st_entry *e = &comm->cache[st_reg_index(comm->reg, hier)];
    x->nsteps[r] = e->ready && e->level1 && strcmp(e->level1, "rhd") == 0 ? e->sched.nsteps : -1;
}

static void test_guide_level1(void)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.topo = "3x2";
    setenv("STITCH_SELECT", "hccl_guide", 1);
    stitch_comm_t *comms[6];
    char err[1024];
    CHECK(stitch_comm_init_threads(6, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    const char *l1;
    const st_algo *small = st_comm_pick_l1(comms[0], STITCH_ALL_REDUCE, 256, STITCH_FP32, &l1);
    CHECK(small && strcmp(small->name, "hier") == 0 && l1 && strcmp(l1, "rhd") == 0, "1 KiB: %s level1 %s",
          small ? small->name : "-", l1 ? l1 : "-");
    const st_algo *big = st_comm_pick_l1(comms[0], STITCH_BROADCAST, (size_t)64 << 20, STITCH_FP32, &l1);
    CHECK(big && strcmp(big->name, "hier") == 0 && l1 && strcmp(l1, "ring") == 0, "256 MiB broadcast: %s level1 %s",
          big ? big->name : "-", l1 ? l1 : "-");
    roles_ctx x = {comms, {0}};
    st_run_ranks(6, guide_rank, &x);
    for (int r = 0; r < 6; r++)
        stitch_comm_destroy(comms[r]);
    unsetenv("STITCH_SELECT");
    /* hier forced: its own role (ring between 3 servers: 2 steps each way, rhd folds 3 into 2: 1 + 2) */
    cfg.algo = "all_reduce=hier";
    CHECK(stitch_comm_init_threads(6, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    roles_ctx y = {comms, {0}};
    st_run_ranks(6, guide_rank, &y);
    for (int r = 0; r < 6; r++)
        stitch_comm_destroy(comms[r]);
    CHECK(x.nsteps[0] > 0 && y.nsteps[0] == -1, "hccl_guide ran hier with rhd: %d steps; forced hier %d (want -1: "
          "no rhd variant)", (int)x.nsteps[0], (int)y.nsteps[0]);
}

/* HCCL_DETERMINISTIC=strict: every element of an all_reduce is the sum over ranks 0..p-1 in one fixed tree (spec
 * 14.3: n = p; A[i - M] += A[i] for i = M..n-1 with M the largest power of two below n; n = M), whatever algorithm is
 * asked for, the layout or the count: fp32 data where the order shows (1e8 and small values of both signs), every
 * all_reduce algorithm of the catalogue forced in turn and auto, 5 ranks flat and as 2,3, 8 ranks as 4x2, counts
 * 1, 7 and 300; each result bit-identical to the tree's, and reduce_scatter's blocks too. */
#define STRICT_MAX 300
typedef struct strict_ctx {
    stitch_comm_t **comms;
    int p, count;
    stitch_coll_t coll;
    float out[8][STRICT_MAX];
} strict_ctx;

static float strict_in(int r, int i)
{
    float big = (r + i) % 3 == 0 ? 1e8f : 1.0f;
    return big * (float)((r * 31 + i * 17) % 7 - 3) + 0.1f * (float)(r + 1) + 1e-3f * (float)(i % 5);
}

static float strict_tree(int p, int i)
{
    float a[8];
    for (int q = 0; q < p; q++)
        a[q] = strict_in(q, i);
    for (int n = p; n > 1;) {
        int M = 1;
        while (M * 2 < n)
            M *= 2;
        for (int k = M; k < n; k++)
            a[k - M] = a[k - M] + a[k];
        n = M;
    }
    return a[0];
}

static void strict_rank(void *arg, int r)
{
    strict_ctx *x = arg;
    float in[8 * STRICT_MAX];
    int n = x->coll == STITCH_ALL_REDUCE ? x->count : x->count * x->p;
    for (int i = 0; i < n; i++)
        in[i] = strict_in(r, i);
    stitch_status_t st = x->coll == STITCH_ALL_REDUCE
                       ? stitch_all_reduce(in, x->out[r], (size_t)x->count, STITCH_FP32, STITCH_SUM, x->comms[r])
                       : stitch_reduce_scatter(in, x->out[r], (size_t)x->count, STITCH_FP32, STITCH_SUM, x->comms[r]);
    CHECK(st == STITCH_OK, "%s", stitch_comm_last_error(x->comms[r]));
}

static void strict_run(const char *topo, int p, const char *algo, stitch_coll_t coll, int count)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char spec[80];
    cfg.deterministic = STITCH_DETERMINISTIC_STRICT, cfg.topo = topo;
    if (algo) {
        snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), algo);
        cfg.algo = spec;
    }
    stitch_comm_t *comms[8];
    char err[1024];
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    static strict_ctx x;
    x = (strict_ctx){.comms = comms, .p = p, .count = count, .coll = coll};
    st_run_ranks(p, strict_rank, &x);
    const char *ran = stitch_comm_algorithm_for(comms[0], coll, (size_t)count, STITCH_FP32);
    CHECK(ran && strcmp(ran, "mesh_strict") == 0, "%s asked, %s ran", algo ? algo : "auto", ran ? ran : "-");
    for (int r = 0; r < p; r++)
        for (int i = 0; i < count; i++) {
            float want = strict_tree(p, coll == STITCH_ALL_REDUCE ? i : r * count + i);
            CHECK(memcmp(&x.out[r][i], &want, sizeof want) == 0, "%s %s on %s, count %d: rank %d [%d] = %.9g, the "
                  "tree gives %.9g", stitch_coll_name(coll), algo ? algo : "auto", topo ? topo : "-", count, r, i,
                  (double)x.out[r][i], (double)want);
        }
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static void test_strict(void)
{
    static const struct {
        const char *topo;
        int p;
    } shapes[] = {{NULL, 5}, {"2,3", 5}, {"4x2", 8}};
    static const int counts[] = {1, 7, STRICT_MAX};
    const char *names[64];
    int n = stitch_algorithms(STITCH_ALL_REDUCE, names, 64), runs = 0;
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++) {
            strict_run(shapes[k].topo, shapes[k].p, NULL, STITCH_ALL_REDUCE, counts[c]);
            strict_run(shapes[k].topo, shapes[k].p, NULL, STITCH_REDUCE_SCATTER, counts[c] < 40 ? counts[c] : 37);
            for (int a = 0; a < n; a++, runs++)
                strict_run(shapes[k].topo, shapes[k].p, names[a], STITCH_ALL_REDUCE, counts[c]);
        }
    /* the data does tell orders apart: a left-to-right sum differs from the tree somewhere */
    int differs = 0;
    for (int i = 0; i < STRICT_MAX && !differs; i++) {
        float left = 0;
        for (int q = 0; q < 5; q++)
            left = left + strict_in(q, i);
        float tree = strict_tree(5, i);
        differs = memcmp(&left, &tree, sizeof left) != 0;
    }
    CHECK(differs, "the adversarial data sums alike in every order: the test would not see a wrong order");
    printf("# %d forced all_reduce runs, all bit-identical to the tree\n", runs);
}

/* Where the configured level1 cannot run, rank 0 says so once under STITCH_DEBUG, naming what runs instead. */
static void test_fallback_note(void)
{
    char path[] = "/tmp/test_hccl_noteXXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    CHECK(fd >= 0 && saved >= 0, "mkstemp/dup");
    fflush(stderr);
    dup2(fd, 2);
    setenv("STITCH_DEBUG", "1", 1);
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.hccl_algo = "level0:NA;level1:NHR";
    stitch_comm_t *comms[4];
    char err[1024];
    stitch_status_t st = stitch_comm_init_threads(4, &cfg, comms, err, sizeof err);
    for (int i = 0; st == STITCH_OK && i < 3; i++)
        stitch_comm_algorithm_for(comms[i % 2], STITCH_ALL_REDUCE, (size_t)1 << (4 * i), STITCH_FP32);
    for (int r = 0; st == STITCH_OK && r < 4; r++)
        stitch_comm_destroy(comms[r]);
    unsetenv("STITCH_DEBUG");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK(st == STITCH_OK, "%s", err);
    char text[8192];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    text[n > 0 ? n : 0] = '\0';
    const char *want = "stitch: rank 0: HCCL_ALGO all_reduce: level1 NHR: one server, so no level between servers "
                       "(all_reduce); HCCL's default runs (policy hccl)\n";
    const char *at = strstr(text, want);
    CHECK(at && !strstr(at + 1, want), "the note %s:\n%s", at ? "twice" : "missing", text);
}

/* The split ratio R reaches the schedule: mesh_nhr_2d's all_reduce on 2 groups of 4 has 2p units at R = 0.5
 * (the default without bandwidths), 10p at R = 0.3 (from stitch_config_t.split_ratio, or from
 * HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO when the config leaves it unset), and the result is right each time. */
static void split_rank(void *arg, int r)
{
    roles_ctx *x = arg;
    stitch_comm_t *comm = x->comms[r];
    int32_t v[13];
    for (int i = 0; i < 13; i++)
        v[i] = r * 10 + i;
    CHECK(stitch_all_reduce(v, v, 13, STITCH_INT32, STITCH_SUM, comm) == STITCH_OK, "%s",
          stitch_comm_last_error(comm));
    for (int i = 0; i < 13; i++)
        CHECK(v[i] == 280 + 8 * i, "rank %d: v[%d] = %d, want %d", r, i, (int)v[i], 280 + 8 * i);
    const st_algo *a = st_reg_find(comm->reg, "mesh_nhr_2d", STITCH_ALL_REDUCE);
    x->nsteps[r] = comm->cache[st_reg_index(comm->reg, a)].sched.nunits;
}

static int32_t split_units(double ratio)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.algo = "all_reduce=mesh_nhr_2d", cfg.groups = "2x4", cfg.split_ratio = ratio;
    return run8(&cfg, split_rank);
}

static void test_split_units(void)
{
    int32_t half = split_units(0), cfg = split_units(0.3);
    setenv("HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO", "0.3", 1);
    int32_t env = split_units(0), both = split_units(0.5);
    CHECK(half == 16 && cfg == 80 && env == 80 && both == 16, "units: default %d, config 0.3 %d, environment 0.3 %d, "
          "config 0.5 over environment 0.3 %d; want 16 80 80 16", (int)half, (int)cfg, (int)env, (int)both);
}

/* STITCH_AHC_INTRA / STITCH_AHC_INTER and config->ahc_intra / ->ahc_inter (issue 22 item 6): the values in any
 * case, a bad one refused with what it takes, the config over the variable, and the pair in the plans. */
typedef struct ahc_ctx {
    stitch_comm_t **comms;
    int p;
} ahc_ctx;

static void ahc_rank(void *arg, int r)
{
    ahc_ctx *x = arg;
    stitch_comm_t *comm = x->comms[r];
    int32_t v[7];
    for (int i = 0; i < 7; i++)
        v[i] = r * 10 + i;
    CHECK(stitch_all_reduce(v, v, 7, STITCH_INT32, STITCH_SUM, comm) == STITCH_OK, "%s", stitch_comm_last_error(comm));
    int sum = 10 * x->p * (x->p - 1) / 2;
    for (int i = 0; i < 7; i++)
        CHECK(v[i] == sum + x->p * i, "rank %d: v[%d] = %d, want %d", r, i, (int)v[i], sum + x->p * i);
}

/* ahc's all_reduce on `topo` with cfg: the data right on every rank, and rank 0's pair into got. */
static void ahc_run(stitch_config_t cfg, const char *topo, int p, int got[2])
{
    stitch_comm_t *comms[16];
    char err[1024];
    cfg.topo = topo, cfg.algo = "ahc";
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    ahc_ctx x = {comms, p};
    st_run_ranks(p, ahc_rank, &x);
    got[0] = comms[0]->ahc[STITCH_ALL_REDUCE][0], got[1] = comms[0]->ahc[STITCH_ALL_REDUCE][1];
    for (int r = 1; r < p; r++) /* every rank made the same choice */
        CHECK(comms[r]->ahc[STITCH_ALL_REDUCE][0] == got[0] && comms[r]->ahc[STITCH_ALL_REDUCE][1] == got[1],
              "rank %d chose differently", r);
    const st_catalogue *cat = &st_builtin_catalogue;
    for (int i = 0; got[0] && i < cat->nalgos; i++) /* the role inside groups runs the chosen algorithm */
        if (strcmp(cat->algos[i].name, "ahc_intra") == 0) {
            const st_algo *want = st_cat_find(cat, st_ahc_inner_name(got[0]), cat->algos[i].coll);
            CHECK(want && comms[0]->use[STITCH_ALL_REDUCE][i] == (int32_t)(want - cat->algos), "ahc_intra of %s",
                  stitch_coll_name((stitch_coll_t)cat->algos[i].coll));
        }
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static void test_ahc_inner(void)
{
    static const struct { const char *v; int want; } good[] = {{"auto", ST_AHC_AUTO}, {"nb", ST_AHC_NB},
                                                              {"NHR", ST_AHC_NHR}, {"Ring", ST_AHC_RING}};
    st_settings s;
    stitch_status_t st;
    char err[1024];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        for (int k = 0; k < 2; k++) {
            load_env(k ? "STITCH_AHC_INTER" : "STITCH_AHC_INTRA", good[i].v, &s, &st, err, sizeof err);
            CHECK(st == STITCH_OK && s.ahc_inner[k] == good[i].want && s.ahc_inner[!k] == ST_AHC_AUTO, "'%s': %s",
                  good[i].v, err);
        }
    load_env("STITCH_AHC_INTER", "bruck", &s, &st, err, sizeof err);
    CHECK(st == STITCH_ERR_CONFIG && strcmp(err, "STITCH_AHC_INTER='bruck': expected auto, nb, nhr or ring (AHC's "
                                                 "algorithm across groups, spec 9.6)") == 0, "%s", err);
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.ahc_inter = "nhr"; /* the communicator's field over the variable */
    setenv("STITCH_AHC_INTER", "ring", 1);
    CHECK(st_settings_load(&cfg, &s, err, sizeof err) == STITCH_OK && s.ahc_inner[1] == ST_AHC_NHR, "%s", err);
    cfg.ahc_intra = "nbx";
    stitch_comm_t *comms[5];
    CHECK(stitch_comm_init_threads(5, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG &&
          strstr(err, "config->ahc_intra='nbx': expected auto, nb, nhr or ring (AHC's algorithm inside groups"),
          "%s", err);
    unsetenv("STITCH_AHC_INTER");
    int got[2];
    cfg = (stitch_config_t)STITCH_CONFIG_INIT;
    cfg.ahc_intra = "ring", cfg.ahc_inter = "nhr";
    ahc_run(cfg, "3,5", 8, got);
    CHECK(got[0] == ST_AHC_RING && got[1] == ST_AHC_NHR, "3,5: %d %d", got[0], got[1]);
    cfg.ahc_intra = "nhr", cfg.ahc_inter = "nb";
    ahc_run(cfg, "2,3,4", 9, got);
    CHECK(got[0] == ST_AHC_NHR && got[1] == ST_AHC_NB, "2,3,4: %d %d", got[0], got[1]);
    cfg.ahc_intra = cfg.ahc_inter = NULL; /* auto: the model chooses both sides, the same on every rank */
    ahc_run(cfg, "2,3,4", 9, got);
    CHECK(got[0] != ST_AHC_AUTO && got[1] != ST_AHC_AUTO, "auto: the model chose nothing (%d %d)", got[0], got[1]);
    printf("# auto on 2,3,4: intra %s, inter %s\n", st_ahc_inner_name(got[0]), st_ahc_inner_name(got[1]));
}

/* HCCL's Pipeline restrictions (spec 7, 14.1): chosen by HCCL_ALGO's level1 (auto), pipeline's all_reduce of int64
 * or prod runs hier; forced, pipeline runs it itself (the restriction is HCCL's hardware's). Either way the data is
 * right. */
typedef struct pipe_ctx {
    stitch_comm_t **comms;
    int forced;
} pipe_ctx;

static void pipe_rank(void *arg, int r)
{
    pipe_ctx *x = arg;
    stitch_comm_t *comm = x->comms[r];
    int64_t v[5];
    float f[5];
    for (int i = 0; i < 5; i++)
        v[i] = ((int64_t)1 << 40) + r + i, f[i] = 1.0f + (float)r;
    stitch_status_t st = stitch_all_reduce(v, v, 5, STITCH_INT64, STITCH_SUM, comm);
    CHECK(st == STITCH_OK, "rank %d: %s", r, stitch_comm_last_error(comm));
    for (int i = 0; i < 5; i++)
        CHECK(v[i] == ((int64_t)4 << 40) + 6 + 4 * i, "rank %d: v[%d] = %lld", r, i, (long long)v[i]);
    CHECK(stitch_all_reduce(f, f, 5, STITCH_FP32, STITCH_PROD, comm) == STITCH_OK && f[0] == 24.0f, "rank %d: %s",
          r, stitch_comm_last_error(comm));
}

static void test_pipeline_restrictions(void)
{
    stitch_comm_t *comms[4];
    char err[1024];
    for (int forced = 1; forced >= 0; forced--) {
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        cfg.topo = "2,2";
        if (forced)
            cfg.algo = "pipeline";
        else
            cfg.hccl_algo = "level0:NA;level1:pipeline";
        CHECK(stitch_comm_init_threads(4, &cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
        pipe_ctx x = {comms, forced};
        st_run_ranks(4, pipe_rank, &x);
        for (int r = 0; r < 4; r++)
            stitch_comm_destroy(comms[r]);
    }
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"ahc_inner", test_ahc_inner, 60},
        {"pipeline_restrictions", test_pipeline_restrictions, 60},
        {"algo_rejections", test_algo_rejections, 20},
        {"algo_accepted", test_algo_accepted, 20},
        {"split_ratio", test_split_ratio, 20},
        {"deterministic", test_deterministic, 20},
        {"priority", test_priority, 20},
        {"selection", test_selection, 30},
        {"roles", test_roles, 60},
        {"fallback_note", test_fallback_note, 30},
        {"level0", test_level0, 60},
        {"guide_level1", test_guide_level1, 60},
        {"strict", test_strict, 120},
        {"split_units", test_split_units, 60},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
