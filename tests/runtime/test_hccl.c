/* test_hccl.c - HCCL's configuration variables (runtime/config.c, spec sections 11.2, 12.1, 14.2): every rejection
 * rule of HCCL_ALGO with its exact message, the forms it accepts and what they store, the split ratio's and
 * determinism's rules, and the priority communicator > environment > default with each value's source recorded
 * (st_origin); then what the runtime selects from HCCL_ALGO (choose.c).
 *
 * The tables go through st_settings_load, the loader communicator creation calls; a few rows also go through
 * stitch_comm_init_threads to show that init fails with the same message.
 */
#include <math.h>

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

/* HCCL_DETERMINISTIC: false, true, strict in any case; empty is unset (HCCL's GetEnv); strict is not implemented. */
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
        CHECK(st == STITCH_ERR_CONFIG && strcmp(err, "HCCL_DETERMINISTIC=strict: stitch has no strict "
              "(order-preserving) mode: its results are deterministic run to run (true), but the reduction order "
              "depends on the count; use true") == 0, "'%s': %s", strict[i], err);
    }
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.deterministic = 9;
    CHECK(st_settings_load(&cfg, &s, err, sizeof err) == STITCH_ERR_CONFIG &&
          strcmp(err, "config->deterministic=9: expected STITCH_DETERMINISTIC_FALSE, _TRUE or _STRICT (or 0: not "
                      "set)") == 0, "%s", err);
    cfg.deterministic = STITCH_DETERMINISTIC_STRICT;
    CHECK(st_settings_load(&cfg, &s, err, sizeof err) == STITCH_ERR_CONFIG &&
          strncmp(err, "config->deterministic=strict: stitch has no strict", 50) == 0, "%s", err);
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

/* What the runtime selects: level1 pipeline / pairwise over the whole communicator; the other levels are kept,
 * not selected; STITCH_ALGO against HCCL_ALGO by where each comes from. */
static void expect_algos(const stitch_config_t *cfg, const char *ar, const char *rs, const char *a2a)
{
    stitch_comm_t *comms[4];
    char err[1024];
    CHECK(stitch_comm_init_threads(4, cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), ar) == 0 &&
          strcmp(stitch_comm_algorithm(comms[0], STITCH_REDUCE_SCATTER), rs) == 0 &&
          strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_TO_ALL), a2a) == 0, "got %s %s %s, want %s %s %s",
          stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), stitch_comm_algorithm(comms[0], STITCH_REDUCE_SCATTER),
          stitch_comm_algorithm(comms[0], STITCH_ALL_TO_ALL), ar, rs, a2a);
    for (int r = 0; r < 4; r++)
        stitch_comm_destroy(comms[r]);
}

static void test_selection(void)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    setenv("HCCL_ALGO", "level0:NA;level1:pipeline", 1);
    expect_algos(NULL, "pipeline", "pipeline", "auto");
    setenv("HCCL_ALGO", "allreduce=level1:pipeline/alltoall=level1:pairwise", 1);
    expect_algos(NULL, "pipeline", "auto", "pairwise");
    setenv("HCCL_ALGO", "level0:NA;level1:ring", 1); /* a level of the decomposition: kept, not selected */
    expect_algos(NULL, "auto", "auto", "auto");
    setenv("HCCL_ALGO", "level1:pipeline", 1);
    setenv("STITCH_ALGO", "rhd", 1); /* both from the environment: stitch's own name wins where it exists */
    expect_algos(NULL, "rhd", "rhd", "auto");
    cfg.hccl_algo = "level1:pipeline"; /* the communicator's HCCL_ALGO beats the environment's STITCH_ALGO */
    expect_algos(&cfg, "pipeline", "pipeline", "auto");
    cfg.algo = "mesh"; /* both from the communicator: stitch's name */
    expect_algos(&cfg, "mesh", "mesh", "mesh");
    unsetenv("STITCH_ALGO");
    unsetenv("HCCL_ALGO");

    /* a per-operator entry must exist for its collective */
    stitch_comm_t *comms[2];
    char err[1024], known[512];
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

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"algo_rejections", test_algo_rejections, 20},
        {"algo_accepted", test_algo_accepted, 20},
        {"split_ratio", test_split_ratio, 20},
        {"deterministic", test_deterministic, 20},
        {"priority", test_priority, 20},
        {"selection", test_selection, 30},
        {"roles", test_roles, 60},
        {"split_units", test_split_units, 60},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
