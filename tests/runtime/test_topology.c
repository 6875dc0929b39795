/* test_topology.c - the runtime on a topology (STITCH_TOPO, stitch_config_t.topo): threads mode's groups at every
 * level, the settings' precedence and errors, stitch_topo_ranks, and process mode's placement by host name.
 *
 * The levels reach the schedule: tests/runtime/levels.dsl holds an all_gather that uses every level (levels_ag)
 * and a copy broken to stop after two levels (levels_ag2). On a three-level topology the first must deliver every
 * element and the second must not; were the runtime to drop a level, both would pass (the check can fail). On two
 * levels both pass. Pipeline (equal servers) runs its three collectives on servers-2x8.yaml through the config
 * field. Every element is checked.
 *
 * Placement by host name (runtime/placement.c) is run on a made-up bootstrap table, so hosts other than this
 * machine can be named: ranks interleaved over three hosts in a three-level file, a rank on a host the file does
 * not name, a host with the wrong number of ranks, and ranks whose tags (topology hashes) differ.
 *
 * The topology is one value per init (runtime/conf/topology.h): 8 thread ranks read the file once and hold one
 * value, which their dup and split communicators share by reference (counted), and a malformed file is read once
 * and fails init with its FILE:LINE:COL.
 */
#include <stdint.h>

#include "comm.h"
#include "placement.h"
#include "runner.h"
#include "st_topofile.h"
#include "topology.h"
#include "st_test_levels.h"
#include "stitch.h"

#ifndef STITCH_SOURCE_DIR
#error "STITCH_SOURCE_DIR must name the source tree"
#endif
#define SRC(path) STITCH_SOURCE_DIR "/" path

#define MAXT 16
#define N 5 /* elements per rank */

static const stitch_catalogue_t *const levels_cat[] = {&st_test_levels};

/* ---- threads: a collective with every element checked ------------------------------------------------------- */

typedef struct job {
    stitch_comm_t **comms;
    int p;
    stitch_coll_t coll;
    int wrong[MAXT];
    stitch_status_t st[MAXT];
} job;

static int32_t value(int rank, int i)
{
    return rank * 1000 + i + 1;
}

static void run_rank(void *ctx, int r)
{
    job *j = ctx;
    int p = j->p;
    int32_t in[N * MAXT], out[N * MAXT];
    size_t incount = j->coll == STITCH_REDUCE_SCATTER ? (size_t)N * p : N;
    size_t outcount = j->coll == STITCH_ALL_GATHER ? (size_t)N * p : N;
    for (size_t i = 0; i < incount; i++)
        in[i] = value(r, (int)i);
    for (size_t i = 0; i < outcount; i++)
        out[i] = -1;
    if (j->coll == STITCH_ALL_GATHER)
        j->st[r] = stitch_all_gather(in, out, N, STITCH_INT32, j->comms[r]);
    else if (j->coll == STITCH_REDUCE_SCATTER)
        j->st[r] = stitch_reduce_scatter(in, out, N, STITCH_INT32, STITCH_SUM, j->comms[r]);
    else
        j->st[r] = stitch_all_reduce(in, out, N, STITCH_INT32, STITCH_SUM, j->comms[r]);
    for (size_t i = 0; i < outcount; i++) {
        int32_t want = 0;
        if (j->coll == STITCH_ALL_GATHER)
            want = value((int)i / N, (int)i % N);
        for (int q = 0; q < p && j->coll != STITCH_ALL_GATHER; q++)
            want += value(q, j->coll == STITCH_REDUCE_SCATTER ? r * N + (int)i : (int)i);
        j->wrong[r] += out[i] != want;
    }
}

/* Elements wrong over all ranks; -1 when a call failed. */
static int run_coll(stitch_comm_t **comms, int p, stitch_coll_t coll)
{
    job j = {comms, p, coll, {0}, {0}};
    st_run_ranks(p, run_rank, &j);
    int wrong = 0;
    for (int r = 0; r < p; r++) {
        if (j.st[r] != STITCH_OK) {
            printf("# rank %d: %s: %s\n", r, stitch_strerror(j.st[r]), stitch_comm_last_error(comms[r]));
            return -1;
        }
        wrong += j.wrong[r];
    }
    return wrong;
}

static void init(int p, const stitch_config_t *cfg, stitch_comm_t **comms)
{
    char err[1024] = "";
    stitch_status_t st = stitch_comm_init_threads(p, cfg, comms, err, sizeof err);
    CHECK(st == STITCH_OK, "init %d ranks: %s: %s", p, stitch_strerror(st), err);
}

static void destroy(stitch_comm_t **comms, int p)
{
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

/* Level k's group sizes, "4,2,3", as the public API reports them. */
static void level_text(stitch_comm_t *comm, int k, char *out, size_t len)
{
    int sizes[MAXT], n = stitch_comm_level_groups(comm, k, sizes, MAXT);
    size_t o = 0;
    out[0] = '\0';
    for (int g = 0; g < n; g++)
        o += (size_t)snprintf(out + o, len - o, "%s%d", g ? "," : "", sizes[g]);
}

static void check_levels(stitch_comm_t *comm, int nlevels, const char *const *want)
{
    char got[128];
    CHECK(stitch_comm_levels(comm) == nlevels, "%d levels, want %d", stitch_comm_levels(comm), nlevels);
    for (int k = 0; k < nlevels; k++) {
        level_text(comm, k, got, sizeof got);
        CHECK(strcmp(got, want[k]) == 0, "level %d: groups %s, want %s", k, got, want[k]);
    }
    CHECK(stitch_comm_level_groups(comm, nlevels, NULL, 0) == -1, "level %d exists", nlevels);
    int sizes[MAXT], n = stitch_comm_groups(comm, sizes, MAXT);
    level_text(comm, 0, got, sizeof got);
    CHECK(n == stitch_comm_level_groups(comm, 0, NULL, 0), "stitch_comm_groups is not level 0");
}

/* levels_ag right, and levels_ag2 refused on three levels (it is compiled unverified, so the runtime proves it for
 * the communicator's groups before it runs and finds it wrong: only so when every level reaches the instantiation),
 * or both right (fewer levels). */
static void check_level_algos(stitch_comm_t **comms, int p, int three)
{
    for (int r = 0; r < p; r++)
        CHECK(stitch_comm_set_algorithm(comms[r], STITCH_ALL_GATHER, "levels_ag") == STITCH_OK, "set levels_ag");
    int w = run_coll(comms, p, STITCH_ALL_GATHER);
    CHECK(w == 0, "levels_ag: %d elements wrong", w);
    for (int r = 0; r < p; r++)
        CHECK(stitch_comm_set_algorithm(comms[r], STITCH_ALL_GATHER, "levels_ag2") == STITCH_OK, "set levels_ag2");
    w = run_coll(comms, p, STITCH_ALL_GATHER);
    CHECK(three ? w < 0 && strstr(stitch_comm_last_error(comms[0]), "levels_ag2 all_gather is wrong for p = ") != NULL
                : w == 0, "levels_ag2 (stops after two levels): %d elements wrong on %s levels", w,
          three ? "three" : "two");
    printf("# levels_ag2 on %s levels: %s\n", three ? "three" : "two",
           three ? "refused as wrong before it ran (as it must)" : "right");
}

static void test_env_three_levels(void)
{
    static const char *const want[] = {"4,2,3", "6,3", "9"};
    stitch_comm_t *comms[MAXT];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.catalogues = levels_cat, cfg.ncatalogues = 1;
    setenv("STITCH_TOPO", SRC("topologies/three-level.yaml"), 1);
    init(9, &cfg, comms);
    check_levels(comms[0], 3, want);
    check_level_algos(comms, 9, 1);
    destroy(comms, 9);
}

/* An inline layout, a group of one at both levels; then two levels, where the broken copy is right too. */
static void test_inline_layout(void)
{
    static const char *const want3[] = {"1,2,2", "1,4", "5"}, *const want2[] = {"2,3", "5"};
    stitch_comm_t *comms[MAXT];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.catalogues = levels_cat, cfg.ncatalogues = 1;
    setenv("STITCH_TOPO", "[1],[2, 2]", 1);
    init(5, &cfg, comms);
    check_levels(comms[0], 3, want3);
    check_level_algos(comms, 5, 1);
    destroy(comms, 5);
    setenv("STITCH_TOPO", "2,3", 1);
    init(5, &cfg, comms);
    check_levels(comms[0], 2, want2);
    check_level_algos(comms, 5, 0);
    destroy(comms, 5);
}

/* config->topo (a file) wins over $STITCH_GROUPS; pipeline's three collectives on 2 servers of 8. */
static void test_config_pipeline(void)
{
    static const char *const want[] = {"8,8", "16"};
    static const stitch_coll_t colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER};
    stitch_comm_t *comms[MAXT];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.topo = SRC("topologies/servers-2x8.yaml"), cfg.algo = "pipeline";
    setenv("STITCH_GROUPS", "4x4", 1);
    init(16, &cfg, comms);
    check_levels(comms[0], 2, want);
    for (int c = 0; c < 3; c++) {
        CHECK(strcmp(stitch_comm_algorithm(comms[0], colls[c]), "pipeline") == 0, "not pipeline");
        int w = run_coll(comms, 16, colls[c]);
        CHECK(w == 0, "pipeline %s: %d elements wrong", stitch_coll_name(colls[c]), w);
    }
    destroy(comms, 16);
}

/* config->groups wins over $STITCH_TOPO; a one-level file is one group. */
static void test_groups_over_env(void)
{
    static const char *const want2[] = {"2,2", "4"}, *const want1[] = {"8"};
    stitch_comm_t *comms[MAXT];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.groups = "2,2";
    setenv("STITCH_TOPO", SRC("topologies/three-level.yaml"), 1);
    init(4, &cfg, comms);
    check_levels(comms[0], 2, want2);
    destroy(comms, 4);
    setenv("STITCH_TOPO", SRC("topologies/server-8.yaml"), 1);
    init(8, NULL, comms);
    check_levels(comms[0], 1, want1);
    CHECK(run_coll(comms, 8, STITCH_ALL_REDUCE) == 0, "all_reduce on one level");
    destroy(comms, 8);
}

typedef struct err_case {
    const char *env_topo, *env_groups, *cfg_topo, *cfg_groups;
    int p;
    const char *want; /* the message after "stitch_comm_init_threads: " */
} err_case;

static void test_errors(void)
{
    static const err_case cases[] = {
        {SRC("tests/topo/t_bad.yaml"), NULL, NULL, NULL, 4,
         "STITCH_TOPO: " SRC("tests/topo/t_bad.yaml") ":4:13: error: a group must hold at least 1 rank, not 0"},
        {"/nonexistent/t.yaml", NULL, NULL, NULL, 4, "STITCH_TOPO: /nonexistent/t.yaml: error: cannot read: "},
        {"2,2", "2x2", NULL, NULL, 4,
         "STITCH_TOPO='2,2' and STITCH_GROUPS='2x2' are both given: set one (the topology's layout gives the groups)"},
        {NULL, NULL, "2,2", "2x2", 4, "config->topo='2,2' and config->groups='2x2' are both given: set one"},
        {NULL, NULL, SRC("topologies/unequal-2-3.yaml"), NULL, 4,
         "config->topo='" SRC("topologies/unequal-2-3.yaml") "': the topology 'unequal-2-3' has 5 ranks (layout 2,3) "
         "but the communicator has 4"},
        {"[2,1],[3]", NULL, NULL, NULL, 5,
         "STITCH_TOPO='[2,1],[3]': the topology has 6 ranks (layout [2,1],[3]) but the communicator has 5"},
        {"[2,3", NULL, NULL, NULL, 5, "STITCH_TOPO='[2,3': bad layout '[2,3': column 5: expected ']'"},
        {"2,0", NULL, NULL, NULL, 2, "STITCH_TOPO='2,0': bad layout '2,0': column 4: a group must hold at least 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const err_case *c = &cases[i];
        stitch_comm_t *comms[MAXT] = {NULL};
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        char err[1024] = "", want[1024];
        cfg.topo = c->cfg_topo, cfg.groups = c->cfg_groups;
        c->env_topo ? setenv("STITCH_TOPO", c->env_topo, 1) : unsetenv("STITCH_TOPO");
        c->env_groups ? setenv("STITCH_GROUPS", c->env_groups, 1) : unsetenv("STITCH_GROUPS");
        stitch_status_t st = stitch_comm_init_threads(c->p, &cfg, comms, err, sizeof err);
        snprintf(want, sizeof want, "stitch_comm_init_threads: %s", c->want);
        CHECK(st == STITCH_ERR_CONFIG, "case %zu: %s, want STITCH_ERR_CONFIG", i, stitch_strerror(st));
        CHECK(strncmp(err, want, strlen(want)) == 0, "case %zu:\n got  %s\n want %s", i, err, want);
        CHECK(comms[0] == NULL, "case %zu: comms written on failure", i);
    }
}

static void test_topo_ranks(void)
{
    char err[512] = "";
    CHECK(stitch_topo_ranks(SRC("topologies/pods-64-128.yaml"), err, sizeof err) == 192, "pods: %s", err);
    CHECK(stitch_topo_ranks("[2,3],[4]", err, sizeof err) == 9, "inline: %s", err);
    CHECK(stitch_topo_ranks("3x2", err, sizeof err) == 6, "SxL: %s", err);
    CHECK(stitch_topo_ranks(SRC("tests/topo/t_bad.yaml"), err, sizeof err) == -1, "bad file loaded");
    CHECK(strncmp(err, SRC("tests/topo/t_bad.yaml") ":4:13: error: ", strlen(SRC("tests/topo/t_bad.yaml")) + 13) == 0,
          "bad file: %s", err);
    CHECK(stitch_topo_ranks(NULL, err, sizeof err) == -1, "NULL");
}

/* ---- process mode's placement, on a made-up bootstrap table --------------------------------------------------- */

#define HOSTS_YAML                                                                                                  \
    "name: hosts-3\n"                                                                                              \
    "levels:\n"                                                                                                    \
    "  - {name: server, bandwidth: 20 GB/s, latency: 1 us}\n"                                                      \
    "  - {name: pod, bandwidth: 10 GB/s, latency: 2 us}\n"                                                         \
    "  - {name: cluster, bandwidth: 1 GB/s, latency: 9 us}\n"                                                      \
    "layout:\n"                                                                                                    \
    "  - [{host: a, ranks: 2}, {host: c, ranks: 1}]\n"                                                             \
    "  - [{host: b, ranks: 3}]\n"

static char hosts_file[64];

static void write_hosts_file(void)
{
    snprintf(hosts_file, sizeof hosts_file, "/tmp/stitch_topo_hosts_XXXXXX");
    int fd = mkstemp(hosts_file);
    CHECK(fd >= 0 && write(fd, HOSTS_YAML, strlen(HOSTS_YAML)) == (ssize_t)strlen(HOSTS_YAML), "temp file");
    close(fd);
}

/* Place 6 ranks on `names` (per rank) with the file above; 0, or the status with the message in err. */
static stitch_status_t place(const char *const *names, uint64_t tag_of_5, st_groups *g, char *err, size_t len)
{
    st_settings s = {0};
    st_placement pl;
    st_peer_info peers[6];
    s.topo = hosts_file, s.topo_source = "STITCH_TOPO";
    stitch_status_t st = st_placement_init(&pl, &s, 6, err, len);
    CHECK(st == STITCH_OK, "placement init: %s", err);
    memset(peers, 0, sizeof peers);
    for (int r = 0; r < 6; r++) {
        snprintf(peers[r].hostname, sizeof peers[r].hostname, "%s", names[r]);
        peers[r].tag = r == 5 && tag_of_5 ? tag_of_5 : pl.tag;
    }
    st_boot b = {.rank = 0, .size = 6, .peers = peers};
    st = st_placement_apply(&pl, &s, &b, g, err, len);
    st_placement_free(&pl);
    return st;
}

static void check_level(const st_topo *t, int k, const char *want)
{
    st_topo_level lv = st_topo_level_of(t, k);
    char got[128] = "";
    size_t n = 0;
    for (int g = 0; g < lv.ngroups; g++)
        for (int i = lv.first[g]; i < lv.first[g + 1]; i++) {
            int r = lv.members[i];
            CHECK(lv.group_of[r] == g && lv.index_of[r] == i - lv.first[g], "level %d rank %d: group %d index %d",
                  k, r, lv.group_of[r], lv.index_of[r]);
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%d%s", i == lv.first[g] ? (g ? " {" : "{") : ",", r,
                                  i + 1 == lv.first[g + 1] ? "}" : "");
        }
    CHECK(strcmp(got, want) == 0, "level %d: %s, want %s", k, got, want);
}

static void test_place_hosts(void)
{
    static const char *const interleaved[] = {"b", "a.example.com", "c", "b", "a", "b"};
    static const char *const stranger[] = {"a", "a", "c", "b", "zzz", "b"};
    static const char *const crowded[] = {"a", "a", "a", "b", "b", "b"};
    char err[1024] = "";
    st_groups g = {{0}, NULL};
    write_hosts_file();
    stitch_status_t st = place(interleaved, 0, &g, err, sizeof err);
    CHECK(st == STITCH_OK, "interleaved: %s", err);
    CHECK(st_topo_nlevels(&g.topo) == 3, "%d levels", st_topo_nlevels(&g.topo));
    check_level(&g.topo, 0, "{1,4} {2} {0,3,5}"); /* the file's server order; a server's ranks in rank order */
    check_level(&g.topo, 1, "{1,4,2} {0,3,5}");   /* a pod's members: its servers' in layout order */
    st_groups_free(&g);
    st = place(stranger, 0, &g, err, sizeof err);
    CHECK(st == STITCH_ERR_CONFIG && strstr(err, "STITCH_TOPO='/tmp/stitch_topo_hosts_") &&
          strstr(err, "': rank 4 runs on host 'zzz', which the topology does not name (its hosts: a, c, b)"),
          "stranger: %s", err);
    st = place(crowded, 0, &g, err, sizeof err);
    CHECK(st == STITCH_ERR_CONFIG && strstr(err, "': host 'a' runs 3 ranks of the communicator but the topology "
                                                 "gives it 2"), "crowded: %s", err);
    st = place(interleaved, 0x1234565, &g, err, sizeof err); /* low bits 01: groups */
    CHECK(st == STITCH_ERR_CONFIG && strstr(err, "ranks disagree on the groups: rank 0 has the topology from "
                                                 "STITCH_TOPO='/tmp/stitch_topo_hosts_") &&
          strstr(err, "but rank 5 has groups from a different STITCH_GROUPS"), "tags: %s", err);
    st = place(interleaved, 0x1234567, &g, err, sizeof err); /* low bits 11: a topology */
    CHECK(st == STITCH_ERR_CONFIG && strstr(err, "but rank 5 has a different topology"), "topology tags: %s", err);
    st_groups_free(&g);
    unlink(hosts_file);
    printf("# placed by host: {1,4} {2} {0,3,5}, pods {1,4,2} {0,3,5}; errors named\n");
}

/* ---- the topology value: read once per init, shared by reference ---------------------------------------------- */

/* Two servers of 4 whose figures are far from select.c's defaults (fast inside, slow and far between): auto's
 * tables on it differ from the defaults' tables, so a communicator that read no figures would be caught. */
#define ONCE_YAML                                                                                                   \
    "name: once-4x2\n"                                                                                             \
    "levels:\n"                                                                                                    \
    "  - {name: server, bandwidth: 400 GB/s, latency: 0.1 us}\n"                                                   \
    "  - {name: cluster, bandwidth: 0.05 GB/s, latency: 2 ms}\n"                                                   \
    "reduce_bandwidth: 1000 GB/s\n"                                                                                \
    "layout: [4, 4]\n"

static void write_text(char *path, size_t len, const char *text)
{
    snprintf(path, len, "/tmp/stitch_topo_once_XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "temp file");
    close(fd);
}

typedef struct splitjob {
    stitch_comm_t **comms, **out;
    int color_mod; /* 0: dup; else color rank % color_mod */
    stitch_status_t st[MAXT];
} splitjob;

static void split_rank(void *arg, int r)
{
    splitjob *j = arg;
    j->st[r] = j->color_mod ? stitch_comm_split(j->comms[r], r % j->color_mod, r, &j->out[r])
                            : stitch_comm_dup(j->comms[r], &j->out[r]);
}

static void split_all(stitch_comm_t **comms, int p, int color_mod, stitch_comm_t **out)
{
    splitjob j = {comms, out, color_mod, {0}};
    st_run_ranks(p, split_rank, &j);
    for (int r = 0; r < p; r++)
        CHECK(j.st[r] == STITCH_OK, "rank %d: %s: %s", r, color_mod ? "split" : "dup",
              stitch_comm_last_error(comms[r]));
}

/* Every communicator of `comms` holds `t`. */
static void check_holds(stitch_comm_t **comms, int p, const st_topology *t, const char *what)
{
    for (int r = 0; r < p; r++)
        CHECK(comms[r]->topology == t, "%s: rank %d holds another topology value", what, r);
}

/* Whether two communicators' auto tables for all_reduce are the same ranges and algorithms. */
static int same_table(stitch_comm_t *a, stitch_comm_t *b)
{
    st_sel_table ta, tb;
    CHECK(st_sel_state_table(a, a->sel, STITCH_ALL_REDUCE, &ta) == STITCH_OK, "table a");
    CHECK(st_sel_state_table(b, b->sel, STITCH_ALL_REDUCE, &tb) == STITCH_OK, "table b");
    if (ta.n != tb.n)
        return 0;
    for (int i = 0; i < ta.n; i++)
        if (ta.r[i].lo != tb.r[i].lo || strcmp(ta.r[i].algo->name, tb.r[i].algo->name) != 0)
            return 0;
    return 1;
}

/* One init of 8 thread ranks reads the file once (st_topofile_loads) into one value (st_topology_loads) held by
 * every rank; collectives, dup and split read nothing more, and the new communicators share the value (its count
 * of references grows by theirs and falls back as they go). The dup's auto table is its parent's: it takes the
 * topology's figures from the shared value (a split communicator used to rebuild its links from the settings,
 * which it had not, and choose by select.c's defaults: the same groups without figures give another table). */
static void test_loaded_once(void)
{
    char path[64];
    stitch_comm_t *comms[MAXT], *dups[MAXT], *halves[MAXT], *plain[MAXT];
    write_text(path, sizeof path, ONCE_YAML);
    setenv("STITCH_SELECT", "model", 1);
    setenv("STITCH_TOPO", path, 1);
    unsigned long files = st_topofile_loads(), values = st_topology_loads();
    init(8, NULL, comms);
    CHECK(st_topofile_loads() == files + 1, "init of 8 ranks read the file %lu times", st_topofile_loads() - files);
    CHECK(st_topology_loads() == values + 1, "init of 8 ranks made %lu values", st_topology_loads() - values);
    st_topology *t = comms[0]->topology;
    CHECK(t && st_topology_refs(t) == 8, "references after init: %d, want 8", st_topology_refs(t));
    check_holds(comms, 8, t, "init");
    double bw[2];
    st_topology_split_bw(t, bw);
    CHECK(bw[0] == 400e9 && bw[1] == 0.05e9, "split bandwidths %g %g", bw[0], bw[1]);
    CHECK(run_coll(comms, 8, STITCH_ALL_REDUCE) == 0, "all_reduce on the topology");
    split_all(comms, 8, 0, dups);
    check_holds(dups, 8, t, "dup");
    CHECK(st_topology_refs(t) == 16, "references after dup: %d, want 16", st_topology_refs(t));
    split_all(comms, 8, 2, halves);
    check_holds(halves, 8, t, "split");
    CHECK(st_topology_refs(t) == 24, "references after split: %d, want 24", st_topology_refs(t));
    CHECK(run_coll(dups, 8, STITCH_ALL_REDUCE) == 0, "all_reduce on the dup");
    for (int h = 0; h < 2; h++) {
        stitch_comm_t *half[4] = {halves[h], halves[h + 2], halves[h + 4], halves[h + 6]};
        CHECK(run_coll(half, 4, STITCH_ALL_REDUCE) == 0, "all_reduce on half %d", h);
    }
    CHECK(same_table(comms[0], dups[0]), "the dup's auto table is not its parent's");
    CHECK(st_topofile_loads() == files + 1 && st_topology_loads() == values + 1,
          "dup and split read the topology again (%lu files, %lu values)", st_topofile_loads() - files,
          st_topology_loads() - values);
    destroy(halves, 8);
    CHECK(st_topology_refs(t) == 16, "references after the halves went: %d, want 16", st_topology_refs(t));
    destroy(dups, 8);
    CHECK(st_topology_refs(t) == 8, "references after the dups went: %d, want 8", st_topology_refs(t));
    /* the same groups without figures: the defaults' table, another one (so the check above can fail) */
    unsetenv("STITCH_TOPO");
    setenv("STITCH_GROUPS", "4,4", 1);
    init(8, NULL, plain);
    CHECK(plain[0]->topology == NULL, "groups alone made a topology value");
    CHECK(!same_table(comms[0], plain[0]), "the topology's figures change nothing: the dup check cannot fail");
    destroy(plain, 8);
    destroy(comms, 8);
    unsetenv("STITCH_GROUPS");
    /* an inline layout is a value too, made without reading a file */
    setenv("STITCH_TOPO", "4X2", 1);
    init(8, NULL, comms);
    CHECK(st_topofile_loads() == files + 1 && st_topology_loads() == values + 2, "inline: %lu files, %lu values",
          st_topofile_loads() - files, st_topology_loads() - values);
    CHECK(stitch_comm_levels(comms[0]) == 2 && stitch_comm_level_groups(comms[0], 0, NULL, 0) == 4,
          "4X2: %d levels, %d groups", stitch_comm_levels(comms[0]), stitch_comm_level_groups(comms[0], 0, NULL, 0));
    destroy(comms, 8);
    unsetenv("STITCH_TOPO");
    unsetenv("STITCH_SELECT");
    unlink(path);
    printf("# 8 thread ranks: 1 file read, 1 value with 8 references; dup and split share it (16, 24, back to 8)\n");
}

/* A malformed file fails init once, with the loader's FILE:LINE:COL, read once (not once per rank). */
static void test_malformed_once(void)
{
    stitch_comm_t *comms[MAXT] = {NULL};
    char err[1024] = "", want[512];
    setenv("STITCH_TOPO", SRC("tests/topo/t_bad.yaml"), 1);
    unsigned long files = st_topofile_loads(), values = st_topology_loads();
    stitch_status_t st = stitch_comm_init_threads(8, NULL, comms, err, sizeof err);
    snprintf(want, sizeof want, "stitch_comm_init_threads: STITCH_TOPO: %s:4:13: error: ",
             SRC("tests/topo/t_bad.yaml"));
    CHECK(st == STITCH_ERR_CONFIG && strncmp(err, want, strlen(want)) == 0, "%s: %s", stitch_strerror(st), err);
    CHECK(st_topofile_loads() == files + 1 && st_topology_loads() == values, "%lu reads, %lu values",
          st_topofile_loads() - files, st_topology_loads() - values);
    CHECK(comms[0] == NULL, "comms written on failure");
    unsetenv("STITCH_TOPO");
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"env_three_levels", test_env_three_levels, 60},
        {"inline_layout", test_inline_layout, 60},
        {"config_pipeline", test_config_pipeline, 60},
        {"groups_over_env", test_groups_over_env, 60},
        {"errors", test_errors, 30},
        {"topo_ranks", test_topo_ranks, 30},
        {"place_hosts", test_place_hosts, 30},
        {"loaded_once", test_loaded_once, 120},
        {"malformed_once", test_malformed_once, 30},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
