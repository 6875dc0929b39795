/* test_select.c - auto's size tables (runtime/select.h): every collective's table is gap-free and overlap-free on
 * several layouts and rank counts under every policy, and names only algorithms that instantiate there; the
 * checker itself rejects gaps, overlaps, short tables and empty ranges; policy hccl reproduces spec 13's decisions
 * (one row per documented case); policy model keeps the least predicted time through the predictor seam (a fake
 * predictor, so the expected table is known exactly), skips a refusing candidate and keeps ties with the earlier
 * one; STITCH_ALGO, HCCL_ALGO and stitch_comm_set_algorithm override the policy; a bad STITCH_SELECT fails init;
 * STITCH_DEBUG logs once per (collective, size class).
 */
#include <fcntl.h>
#include <stdint.h>

#include "comm.h"
#include "config.h"
#include "groups.h"
#include "registry.h"
#include "runner.h"
#include "select.h"
#include "st_topo.h"
#include "stitch.h"

/* env over `layout` ("" or a count: one group; "2,3", "8,8", "[2,3],[4]"), groups into *g. */
static void env_for(const char *layout, int p, st_reg *reg, st_groups *g, st_sel_env *env)
{
    memset(g, 0, sizeof *g);
    memset(env, 0, sizeof *env);
    if (layout[0]) {
        st_layout l = {0};
        char why[256];
        CHECK(st_layout_parse(layout, &l, why, sizeof why) == 0, "layout %s: %s", layout, why);
        if (l.nlevels > 1)
            CHECK(st_groups_layout(g, &l, NULL) == 0, "groups");
        p = l.p;
        st_layout_free(&l);
    }
    env->reg = reg, env->p = p, env->topo = st_groups_topo(g), env->oneshot_max = 48 << 10;
    st_sel_links_default(&env->links);
}

static st_reg *builtin(void)
{
    st_reg *reg = NULL;
    char why[256];
    CHECK(st_reg_new(NULL, NULL, &reg, why, sizeof why) == STITCH_OK, "%s", why);
    return reg;
}

/* Does `a` instantiate (not refused) on env's p and groups? */
static int runs_there(const st_sel_env *env, const st_algo *a)
{
    st_inst in = {.p = env->p, .topo = env->topo};
    st_sched s;
    st_err err;
    if (st_sched_build_ex(&st_builtin_catalogue, a, &in, &s, &err) != 0)
        return 0;
    st_sched_free(&s);
    return 1;
}

static void test_tables_cover(void)
{
    static const struct {
        const char *layout;
        int p;
    } shapes[] = {{"", 1}, {"", 2}, {"", 3}, {"", 4}, {"", 5}, {"", 8}, {"", 16}, {"2,3", 0}, {"1,4", 0},
                  {"8,8", 0}, {"1,1,1,1", 0}, {"7,5,3", 0}, {"[2,2],[2,2]", 0}, {"[2,3],[4]", 0}};
    st_reg *reg = builtin();
    int tables = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int pol = 0; pol < ST_SEL_POLICY_COUNT; pol++) {
            st_groups g;
            st_sel_env env;
            env_for(shapes[i].layout, shapes[i].p, reg, &g, &env);
            env.policy = pol;
            for (int c = 0; c < STITCH_COLL_COUNT; c++) {
                st_sel_table t;
                char why[512] = "";
                stitch_status_t st = st_sel_build(&env, (stitch_coll_t)c, &t, why, sizeof why);
                CHECK(st == STITCH_OK, "%s p=%d %s %s: %s", shapes[i].layout, env.p, st_sel_policy_name(pol),
                      stitch_coll_name((stitch_coll_t)c), why);
                CHECK(st_sel_check(&t, why, sizeof why) == 0, "%s %s: %s", shapes[i].layout,
                      stitch_coll_name((stitch_coll_t)c), why);
                for (int r = 0; r < t.n; r++)
                    CHECK(runs_there(&env, t.r[r].algo), "%s p=%d %s %s: %s cannot run there", shapes[i].layout,
                          env.p, st_sel_policy_name(pol), stitch_coll_name((stitch_coll_t)c), t.r[r].algo->name);
                tables++;
            }
            st_groups_free(&g);
        }
    printf("# %d tables checked\n", tables);
    st_reg_free(reg);
}

/* The checker must fail on each kind of fault. */
static void test_check_rejects(void)
{
    const st_algo *a = st_registry_find("ring", STITCH_ALL_REDUCE);
    static const struct {
        int n;
        size_t lo[3], hi[3];
        const char *want;
    } bad[] = {
        {0, {0}, {0}, "no range"},
        {2, {0, 101}, {99, SIZE_MAX}, "a gap"},
        {2, {0, 50}, {99, SIZE_MAX}, "an overlap"},
        {2, {1, 100}, {99, SIZE_MAX}, "a gap"},
        {1, {0}, {1000}, "not at the largest size: a gap"},
        {2, {0, 10}, {SIZE_MAX, SIZE_MAX}, "an overlap"},
        {2, {0, 100}, {99, 50}, "ends before it starts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        st_sel_table t = {.n = bad[i].n};
        char why[256] = "";
        for (int r = 0; r < t.n; r++)
            t.r[r] = (st_sel_range){.lo = bad[i].lo[r], .hi = bad[i].hi[r], .algo = a};
        CHECK(st_sel_check(&t, why, sizeof why) == -1 && strstr(why, bad[i].want), "case %zu: '%s'", i, why);
    }
    st_sel_table ok = {.n = 2, .r = {{0, 99, a, NULL}, {100, SIZE_MAX, NULL, NULL}}};
    char why[256] = "";
    CHECK(st_sel_check(&ok, why, sizeof why) == -1 && strstr(why, "names no algorithm"), "'%s'", why);
    ok.r[1].algo = a;
    CHECK(st_sel_check(&ok, why, sizeof why) == 0, "a good table: %s", why);
    CHECK(st_sel_lookup(&ok, 99, NULL) == a && st_sel_lookup(&ok, SIZE_MAX, NULL) == a, "lookup");
}

/* Spec 13 (with 7, 5.5, 9.6): HCCL's documented decisions, one per row. */
static void test_hccl_rules(void)
{
    static const struct {
        const char *layout;
        int p, det;
        stitch_coll_t coll;
        size_t bytes;
        const char *want, *why;
    } rows[] = {
        {"", 4, 0, STITCH_ALL_REDUCE, 256 << 10, "mesh_oneshot", "one server: level0 mesh, one-shot to 256 KiB"},
        {"", 4, 0, STITCH_ALL_REDUCE, (256 << 10) + 1, "mesh", "one server above 256 KiB: mesh"},
        {"", 8, 0, STITCH_ALL_GATHER, 1 << 30, "mesh", "one server: level0 mesh"},
        {"", 8, 0, STITCH_ALL_TO_ALL, 1, "mesh", "one server: full mesh"},
        {"1,1", 0, 0, STITCH_ALL_REDUCE, 1 << 20, "ring", "13.2 V2, S=2: nhr ties ring, not strictly cheaper"},
        {"1,1,1", 0, 0, STITCH_REDUCE_SCATTER, 1 << 20, "ring", "13.2 V2, S=3: ceil(log2 3) = 2 = S-1"},
        {"1,1,1,1", 0, 0, STITCH_REDUCE_SCATTER, 1 << 20, "nhr", "13.2 V2, S=4: 2 alpha < 3 alpha"},
        {"1,1,1,1,1", 0, 0, STITCH_ALL_GATHER, 1 << 30, "nhr", "13.2 V2, S=5: HD's (2S-1)/S volume loses"},
        {"1,1,1,1", 0, 0, STITCH_ALL_REDUCE, 256 << 10, "nhr_oneshot", "5.5: NHR one-shot to 256 KiB"},
        {"1,1,1,1", 0, 0, STITCH_ALL_REDUCE, (256 << 10) + 1, "nhr", "5.5: above 256 KiB, NHR"},
        {"1,1,1,1", 0, 0, STITCH_BROADCAST, 1, "rhd", "13.2 V1: a power of two"},
        {"1,1,1,1,1,1", 0, 0, STITCH_REDUCE, 1, "ring", "13.2 V1: 6 servers, not a power of two, < 8"},
        {"1,1,1,1,1,1,1,1,1", 0, 0, STITCH_BROADCAST, 1, "rhd", "13.2 V1: 8 servers or more"},
        {"1,1,1", 0, 0, STITCH_SCATTER, 1, "ring", "no RHD scatter"},
        {"1,1,1", 0, 0, STITCH_ALL_TO_ALL, 1, "pairwise", "spec 8: between servers"},
        {"8,8", 0, 0, STITCH_ALL_REDUCE, (16u << 20) - 1, "hier", "7: slice bytes/(S L) under 1 MiB"},
        {"8,8", 0, 0, STITCH_ALL_REDUCE, 16u << 20, "pipeline", "7: slice bytes/(S L) = 1 MiB"},
        {"8,8", 0, 1, STITCH_ALL_REDUCE, 1u << 30, "hier", "7: no pipeline all_reduce when deterministic"},
        {"8,8", 0, 0, STITCH_REDUCE_SCATTER, (32 << 10) - 1, "hier", "7: under 32 KiB"},
        {"8,8", 0, 0, STITCH_REDUCE_SCATTER, 32 << 10, "pipeline", "7: 32 KiB"},
        {"8,8", 0, 1, STITCH_REDUCE_SCATTER, 1 << 20, "hier", "7: no pipeline reduce_scatter when deterministic"},
        {"8,8", 0, 1, STITCH_ALL_GATHER, 32 << 10, "pipeline", "7: all_gather pipelines even when deterministic"},
        {"8,8", 0, 0, STITCH_BROADCAST, 1 << 30, "hier", "1.3: level0 then level1"},
        {"2,3", 0, 0, STITCH_ALL_REDUCE, 1, "ahc", "9.6: unequal servers"},
        {"2,3", 0, 0, STITCH_ALL_GATHER, 1 << 30, "ahc", "9.6: unequal servers"},
        {"2,3", 0, 0, STITCH_BROADCAST, 1, "hier", "hier's own fallback on unequal groups"},
    };
    st_reg *reg = builtin();
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        st_groups g;
        st_sel_env env;
        st_sel_table t;
        char why[512] = "";
        env_for(rows[i].layout, rows[i].p, reg, &g, &env);
        env.policy = ST_SEL_HCCL, env.deterministic = rows[i].det;
        CHECK(st_sel_build(&env, rows[i].coll, &t, why, sizeof why) == STITCH_OK, "%s", why);
        const st_algo *a = st_sel_lookup(&t, rows[i].bytes, NULL);
        CHECK(a && strcmp(a->name, rows[i].want) == 0, "row %zu (%s p=%d %s %zu bytes; %s): got %s, want %s", i,
              rows[i].layout, env.p, stitch_coll_name(rows[i].coll), rows[i].bytes, rows[i].why,
              a ? a->name : "NULL", rows[i].want);
        st_groups_free(&g);
    }
    st_reg_free(reg);
}

/* A predictor with known answers: ring 10 + b, mesh 1 + 2b (cheaper up to 8 bytes), mesh_det the same as mesh (a
 * tie: mesh, which comes first, keeps it), rhd refuses, the rest never win. */
static int fake_predict(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                        const st_sel_links *links, const size_t *bytes, int n, double *t)
{
    (void)ctx, (void)cat, (void)in, (void)links;
    if (strcmp(a->name, "rhd") == 0)
        return 1;
    for (int i = 0; i < n; i++) {
        double b = (double)bytes[i];
        t[i] = strcmp(a->name, "ring") == 0 ? 10 + b : strncmp(a->name, "mesh", 4) == 0 && !strstr(a->name, "one")
               ? 1 + 2 * b : 1e30;
    }
    return 0;
}

static int refuse_all(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                      const st_sel_links *links, const size_t *bytes, int n, double *t)
{
    (void)ctx, (void)cat, (void)a, (void)in, (void)links, (void)bytes, (void)n, (void)t;
    return 1;
}

/* A predictor that counts the roles it is asked to price (they only choose another candidate) and lets ring win. */
static int count_roles(void *ctx, const st_catalogue *cat, const st_algo *a, const st_inst *in,
                       const st_sel_links *links, const size_t *bytes, int n, double *t)
{
    (void)cat, (void)in, (void)links, (void)bytes;
    static const char *const role[] = {"level0", "level1", "ahc_intra", "ahc_inter"};
    for (size_t k = 0; k < sizeof role / sizeof *role; k++)
        *(int *)ctx += strcmp(a->name, role[k]) == 0;
    for (int i = 0; i < n; i++)
        t[i] = strcmp(a->name, "ring") == 0 ? 1 : 2;
    return 0;
}

static void test_model_skips_roles(void)
{
    st_reg *reg = builtin();
    st_groups g;
    st_sel_env env;
    st_sel_table t;
    char why[512] = "";
    int asked = 0;
    env_for("[2,2],[2,2]", 0, reg, &g, &env);
    env.policy = ST_SEL_MODEL, env.predict = count_roles, env.ctx = &asked;
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        CHECK(st_sel_build(&env, (stitch_coll_t)c, &t, why, sizeof why) == STITCH_OK, "%s", why);
    CHECK(asked == 0, "the model priced %d roles (level0, level1, ahc_intra, ahc_inter)", asked);
    st_groups_free(&g);
    st_reg_free(reg);
}

static void test_model_seam(void)
{
    st_reg *reg = builtin();
    st_groups g;
    st_sel_env env;
    st_sel_table t;
    char why[512] = "";
    env_for("", 4, reg, &g, &env);
    env.policy = ST_SEL_MODEL, env.predict = fake_predict;
    CHECK(st_sel_build(&env, STITCH_ALL_REDUCE, &t, why, sizeof why) == STITCH_OK, "%s", why);
    CHECK(t.n == 2 && strcmp(t.r[0].algo->name, "mesh") == 0 && t.r[0].lo == 0 && t.r[0].hi == 8 &&
          strcmp(t.r[1].algo->name, "ring") == 0 && t.r[1].lo == 9 && t.r[1].hi == SIZE_MAX,
          "got %d ranges, first %s [%zu, %zu]", t.n, t.r[0].algo->name, t.r[0].lo, t.r[0].hi);
    env.predict = refuse_all;
    CHECK(st_sel_build(&env, STITCH_ALL_REDUCE, &t, why, sizeof why) == STITCH_ERR_UNSUPPORTED &&
          strstr(why, "no algorithm of all_reduce can run on 4 ranks"), "'%s'", why);
    /* the real model: pipeline refuses unequal groups, so it is never a candidate there */
    env_for("2,3", 0, reg, &g, &env);
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        CHECK(st_sel_build(&env, (stitch_coll_t)c, &t, why, sizeof why) == STITCH_OK, "%s", why);
        for (int r = 0; r < t.n; r++)
            CHECK(strcmp(t.r[r].algo->name, "pipeline") != 0, "pipeline chosen on 2,3");
    }
    st_groups_free(&g);
    st_reg_free(reg);
}

static void make(int p, const stitch_config_t *cfg, stitch_comm_t **comms)
{
    char err[1024] = "";
    CHECK(stitch_comm_init_threads(p, cfg, comms, err, sizeof err) == STITCH_OK, "%s", err);
}

static void destroy(int p, stitch_comm_t **comms)
{
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static const char *pick(stitch_comm_t *c, stitch_coll_t coll, size_t count)
{
    const char *a = stitch_comm_algorithm_for(c, coll, count, STITCH_INT8);
    return a ? a : "NULL";
}

/* The policies through the public API, and what overrides them. */
static void test_overrides(void)
{
    stitch_comm_t *comms[4];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.groups = "2x2";
    setenv("STITCH_SELECT", "hccl", 1);
    make(4, &cfg, comms);
    CHECK(strcmp(pick(comms[0], STITCH_ALL_REDUCE, 1), "hier") == 0, "hccl, 2x2, 1 byte: %s",
          pick(comms[0], STITCH_ALL_REDUCE, 1));
    CHECK(strcmp(pick(comms[0], STITCH_ALL_REDUCE, 4u << 20), "pipeline") == 0, "hccl, 2x2, 4 MiB");
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), "auto") == 0, "still auto");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_ALL_REDUCE, "rhd") == STITCH_OK, "force");
    CHECK(strcmp(pick(comms[0], STITCH_ALL_REDUCE, 4u << 20), "rhd") == 0, "forced by set_algorithm");
    destroy(4, comms);
    setenv("STITCH_ALGO", "all_reduce=ring", 1);
    make(4, &cfg, comms);
    CHECK(strcmp(pick(comms[0], STITCH_ALL_REDUCE, 1), "ring") == 0 &&
          strcmp(pick(comms[0], STITCH_ALL_REDUCE, 4u << 20), "ring") == 0, "STITCH_ALGO beats the policy");
    CHECK(strcmp(pick(comms[0], STITCH_ALL_GATHER, 1 << 20), "pipeline") == 0, "the others keep it");
    destroy(4, comms);
    unsetenv("STITCH_ALGO");
    setenv("HCCL_ALGO", "level0:NA;level1:pipeline", 1);
    setenv("STITCH_SELECT", "model", 1);
    make(4, &cfg, comms);
    CHECK(strcmp(pick(comms[0], STITCH_ALL_REDUCE, 1), "pipeline") == 0, "HCCL_ALGO beats the policy");
    destroy(4, comms);
    unsetenv("HCCL_ALGO");
    setenv("STITCH_SELECT", "size", 1); /* the old rule: 48 KiB sent by a rank, 3 peers: 16 KiB vectors */
    make(4, NULL, comms);
    CHECK(strcmp(pick(comms[0], STITCH_ALL_REDUCE, 16384), "mesh_oneshot") == 0 &&
          strcmp(pick(comms[0], STITCH_ALL_REDUCE, 16385), "ring") == 0, "size policy");
    destroy(4, comms);
    setenv("STITCH_SELECT", "fastest", 1);
    char err[512] = "";
    CHECK(stitch_comm_init_threads(4, NULL, comms, err, sizeof err) == STITCH_ERR_CONFIG &&
          strstr(err, "STITCH_SELECT='fastest': expected model, hccl, hccl_guide or size"), "'%s'", err);
    unsetenv("STITCH_SELECT");
}

/* Policy hccl_guide against the guide's table written out plainly (spec 13.1 and the reading of it; the
 * policy is select_guide.c): S servers of L ranks, n = the call's data (bytes for all_reduce, broadcast, reduce;
 * bytes x p for the rest), between[] gets hier's level1 where hier runs. */
static const char *guide_oracle(int S, int L, stitch_coll_t c, size_t bytes, const char **between)
{
    const size_t MB = (size_t)1 << 20;
    int p = S * L, whole = c == STITCH_ALL_REDUCE || c == STITCH_BROADCAST || c == STITCH_REDUCE;
    double n = whole ? (double)bytes : (double)bytes * p;
    int a2a = c == STITCH_ALL_TO_ALL || c == STITCH_ALL_TO_ALL_V, large = n >= (double)MB * p;
    *between = NULL;
    if (S == 1) /* level0 alone: mesh (all_to_all_v has none: its only algorithm) */
        return c == STITCH_ALL_TO_ALL_V ? "pairwise" : "mesh";
    if (a2a) /* pairwise up to 1 MB x ranks; above it, with several ranks per server, pipeline */
        return L > 1 && large ? "pipeline" : "pairwise";
    if (L > 1 && large && (c == STITCH_ALL_REDUCE || c == STITCH_REDUCE_SCATTER || c == STITCH_ALL_GATHER))
        return "pipeline";
    const char *x;
    if ((S & (S - 1)) == 0)
        x = "rhd"; /* power of two: RHD at any size */
    else if (n < 256.0 * MB)
        x = "rhd"; /* below 256 MB: RHD at any count */
    else if (S < 32)
        x = "ring";
    else
        x = "nhr";
    if ((c == STITCH_SCATTER || c == STITCH_GATHER) && x[0] == 'r' && x[1] == 'h')
        x = "ring"; /* no RHD scatter or gather */
    if ((c == STITCH_GATHER || c == STITCH_REDUCE) && x[0] == 'n')
        x = "ring"; /* no NHR gather or reduce */
    if (L == 1)
        return x;
    *between = x;
    return "hier";
}

static void test_guide_table(void)
{
    st_reg *reg = builtin();
    static const int Ls[] = {1, 2, 8};
    long checked = 0;
    for (int li = 0; li < 3; li++)
        for (int S = 1; S <= 130; S += Ls[li] == 1 ? 1 : 7) {
            char layout[32];
            st_groups g;
            st_sel_env env;
            snprintf(layout, sizeof layout, "%dx%d", S, Ls[li]);
            env_for(layout, 0, reg, &g, &env);
            env.policy = ST_SEL_HCCL_GUIDE;
            for (int c = 0; c < STITCH_COLL_COUNT; c++) {
                st_sel_table t;
                char why[512] = "";
                CHECK(st_sel_build(&env, (stitch_coll_t)c, &t, why, sizeof why) == STITCH_OK, "%s", why);
                size_t per = c == STITCH_ALL_REDUCE || c == STITCH_BROADCAST || c == STITCH_REDUCE ? 1 : (size_t)env.p;
                size_t sizes[40];
                int n = 0;
                for (size_t b = 1024; b <= ((size_t)4 << 30); b *= 2)
                    sizes[n++] = b;
                size_t edges[] = {(((size_t)256 << 20) + per - 1) / per, ((size_t)1 << 20) * (size_t)env.p / per};
                for (int e = 0; e < 2; e++)
                    sizes[n++] = edges[e], sizes[n++] = edges[e] - 1;
                for (int i = 0; i < n; i++) {
                    const char *between, *want = guide_oracle(S, Ls[li], (stitch_coll_t)c, sizes[i], &between);
                    int r;
                    const st_algo *a = st_sel_lookup(&t, sizes[i], &r);
                    const char *got_between = t.r[r].between;
                    CHECK(a && strcmp(a->name, want) == 0 &&
                              (between ? got_between && strcmp(between, got_between) == 0 : !got_between),
                          "%s %s %zu bytes: %s (level1 %s), want %s (level1 %s)", layout,
                          stitch_coll_name((stitch_coll_t)c), sizes[i], a ? a->name : "-",
                          got_between ? got_between : "-", want, between ? between : "-");
                    checked++;
                }
            }
            st_groups_free(&g);
        }
    printf("# %ld decisions checked\n", checked);
    st_reg_free(reg);
}

/* STITCH_DEBUG: one line per (collective, size class) however often it is asked. */
static void test_debug_once(void)
{
    stitch_comm_t *comms[2];
    char path[] = "/tmp/st_select_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    make(2, NULL, comms);
    setenv("STITCH_DEBUG", "1", 1);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    size_t sizes[] = {1000, 1000, 1024, 600, 1025, 2048, 1000}; /* classes (512, 1 KiB] and (1 KiB, 2 KiB] */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        pick(comms[0], STITCH_ALL_REDUCE, sizes[i]);
        pick(comms[0], STITCH_ALL_GATHER, sizes[i]);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("STITCH_DEBUG");
    destroy(2, comms);
    char buf[8192] = "";
    FILE *f = fopen(path, "r");
    CHECK(f, "reopen");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    int lines = 0;
    for (const char *s = buf; (s = strstr(s, "auto (model) ")); s++)
        lines++;
    CHECK(lines == 4, "want 4 lines (2 collectives x 2 classes), got %d:\n%s", lines, buf);
    CHECK(strstr(buf, "stitch: rank 0: auto (model) all_reduce, size class [513, 1 KiB]: "), "%s", buf);
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"tables_cover", test_tables_cover, 120},
        {"check_rejects", test_check_rejects, 10},
        {"hccl_rules", test_hccl_rules, 20},
        {"guide_table", test_guide_table, 60},
        {"model_seam", test_model_seam, 30},
        {"model_skips_roles", test_model_skips_roles, 30},
        {"overrides", test_overrides, 30},
        {"debug_once", test_debug_once, 20},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
