/* test_topofile.c - the topology loader (core/st_topofile.c) and layouts (core/st_topo.c).
 *
 *   test_topofile DIR    DIR holds the topologies/ examples: every example loads, with the p and levels listed below
 *
 * Then, table-driven: malformed texts each give exactly one `t.yaml:LINE:COL: error: ...` message; a FIFO, a
 * directory and a missing file are refused without blocking; --layout texts parse (or fail) as expected; and a
 * built three-level topology answers the level queries as the layout says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "st_topo.h"
#include "st_topofile.h"


static const struct example {
    const char *file;
    int p, nlevels, nservers, hosts;
} examples[] = {
    {"server-8.yaml", 8, 1, 1, 0},       {"servers-2x8.yaml", 16, 2, 2, 0},  {"unequal-2-3.yaml", 5, 2, 2, 1},
    {"unequal-7-5-3.yaml", 15, 2, 3, 0}, {"unequal-1-4.yaml", 5, 2, 2, 1},   {"pods-64-128.yaml", 192, 3, 24, 0},
    {"three-level.yaml", 9, 3, 3, 0},    {"dev-vm.yaml", 2, 1, 1, 0},      {"pods-64-128-flat.yaml", 192, 2, 2, 0},
    {"flat-16.yaml", 16, 1, 1, 0},       {"servers-2x4-ring.yaml", 8, 2, 2, 0}, {"server-4-ring.yaml", 4, 1, 1, 0},
};

static void check_examples(const char *dir)
{
    for (size_t i = 0; i < sizeof examples / sizeof *examples; i++) {
        char path[4096], err[512];
        st_topofile t;
        snprintf(path, sizeof path, "%s/%s", dir, examples[i].file);
        int rc = st_topofile_load(path, &t, err, sizeof err);
        EXPECT(rc == 0, "%s: %s", examples[i].file, err);
        if (rc)
            continue;
        int ring = strstr(examples[i].file, "-ring") != NULL; /* full_mesh: false on level 0, true elsewhere */
        EXPECT(t.level[0].full_mesh == !ring && (t.nlevels < 2 || t.level[1].full_mesh == 1), "%s: full_mesh %d",
               examples[i].file, t.level[0].full_mesh);
        EXPECT(t.layout.p == examples[i].p && t.nlevels == examples[i].nlevels &&
                   t.layout.ngroups[0] == examples[i].nservers && (t.host != NULL) == examples[i].hosts,
               "%s: p %d levels %d servers %d hosts %d", examples[i].file, t.layout.p, t.nlevels, t.layout.ngroups[0],
               t.host != NULL);
        st_topofile_free(&t);
    }
}

/* A header of two levels, for the cases about other keys. */
#define L2 "levels:\n  - {name: server, bandwidth: 56 GB/s, latency: 1 us}\n  - {name: net, bandwidth: 25 GB/s, latency: 5 us}\n"

static const struct bad {
    const char *text;
    size_t len; /* 0: strlen */
    const char *want;
} bad[] = {
    /* broken YAML */
    {L2 "layout: [2, 3\n", 0, "t.yaml:5:1: error: did not find expected ',' or ']' (while parsing a flow sequence at line 4, column 9)"},
    {"levels: [\n  {name: a\n", 0, "t.yaml:3:1: error: did not find expected ',' or '}' (while parsing a flow mapping at line 2, column 3)"},
    {"levels: - x\n", 0, "t.yaml:1:9: error: block sequence entries are not allowed in this context"},
    {"", 0, "t.yaml:1:1: error: empty topology: expected a mapping with `levels` and `layout`"},
    {"- 1\n- 2\n", 0, "t.yaml:1:1: error: a topology is a mapping with `levels` and `layout` (and optionally `name` and `reduce_bandwidth`)"},
    {L2 "layout: [2, 3]\n---\nname: x\n", 0, "t.yaml:5:1: error: a second YAML document: a topology file holds one"},
    {"a: &x 1\nlevels: *x\n", 0, "t.yaml:2:9: error: aliases (*x) are not supported in a topology file"},
    /* units */
    {"levels:\n  - {name: s, bandwidth: 56 GBps, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:29: error: unknown unit 'GBps' for bandwidth; did you mean 'GB/s'? (units: B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s or Gb/s)"},
    {"levels:\n  - {name: s, bandwidth: 56, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:26: error: bandwidth '56' has no unit (write one of B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s or Gb/s)"},
    {"levels:\n  - {name: s, bandwidth: 56 GB/s, latency: 1 sec}\nlayout: 8\n", 0,
     "t.yaml:2:46: error: unknown unit 'sec' for latency (units: ns, us or ms)"},
    {"levels:\n  - {name: s, bandwidth: -5 GB/s, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:26: error: bandwidth must be positive, not '-5 GB/s'"},
    {"levels:\n  - {name: s, bandwidth: 0 GB/s, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:26: error: bandwidth must be positive, not '0 GB/s'"},
    {"levels:\n  - {name: s, bandwidth: fast, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:26: error: bandwidth 'fast' does not start with a number (e.g. 25 GB/s)"},
    {"levels:\n  - {name: s, bandwidth: 5 GB/s, latency: -1 us}\nlayout: 8\n", 0,
     "t.yaml:2:43: error: latency must be 0 or more, not '-1 us'"},
    /* out of range: subnormal, or so large that every prediction is inf (issue 18) */
    {"levels:\n  - {name: s, bandwidth: 1e-320 B/s, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:26: error: bandwidth '1e-320 B/s' is out of range: 1 B/s to 1 PB/s (1e15 B/s)"},
    {"levels:\n  - {name: s, bandwidth: 5 GB/s, latency: 1e308 ms}\nlayout: 8\n", 0,
     "t.yaml:2:43: error: latency '1e308 ms' is out of range: 0 to 1000 s"},
    {"levels:\n  - {name: s, bandwidth: 2e6 GB/s, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:26: error: bandwidth '2e6 GB/s' is out of range: 1 B/s to 1 PB/s (1e15 B/s)"},
    {L2 "reduce_bandwidth: 0.5 B/s\nlayout: [2, 3]\n", 0, "t.yaml:4:19: error: reduce_bandwidth '0.5 B/s' is out of range: 1 B/s to 1 PB/s (1e15 B/s)"},
    /* tags: refused, never ignored */
    {L2 "layout: !!python/object:os.system [2, 3]\n", 0,
     "t.yaml:4:9: error: YAML tags (here '!!python/object:os.system') are not supported in a topology file: write the "
     "plain value"},
    {"levels:\n  - {name: !!str s, bandwidth: 5 GB/s, latency: 1 us}\nlayout: 8\n", 0,
     "t.yaml:2:12: error: YAML tags (here '!!str') are not supported in a topology file: write the plain value"},
    /* quoted counts are text */
    {L2 "layout: [\"2\", 3]\n", 0,
     "t.yaml:4:10: error: expected a count of ranks (a whole number), not the quoted text '2': write numbers without quotes"},
    {L2 "layout: [{host: a, ranks: '2'}, {host: b, ranks: 3}]\n", 0, "t.yaml:4:27: error: expected a count of ranks (a whole number), not the quoted text '2': write numbers "
     "without quotes"},
    /* sizes */
    {L2 "layout: [2, 0]\n", 0, "t.yaml:4:13: error: a group must hold at least 1 rank, not 0"},
    {L2 "layout: [2, -3]\n", 0, "t.yaml:4:13: error: a group must hold at least 1 rank, not -3"},
    {L2 "layout: [2, 2.5]\n", 0, "t.yaml:4:13: error: expected a count of ranks (a whole number), not '2.5'"},
    {L2 "layout: [2, []]\n", 0, "t.yaml:4:13: error: an empty list: a group must hold at least one entry"},
    {L2 "layout: [600000, 600000]\n", 0, "t.yaml:4:18: error: the layout holds more than 1000000 ranks"},
    /* depth */
    {L2 "layout: 8\n", 0, "t.yaml:4:9: error: the layout has 1 level (counts of ranks 0 lists deep) but `levels` lists 2; with 2 levels the counts sit 1 list deep"},
    {L2 "layout: [[2], [3]]\n", 0, "t.yaml:4:9: error: the layout has 3 levels (counts of ranks 2 lists deep) but `levels` lists 2; with 2 levels the counts sit 1 list deep"},
    {L2 "layout: [[2], 3]\n", 0, "t.yaml:4:15: error: a count of ranks 1 list deep, but the first one is 2 deep: every server must be at the same depth"},
    {L2 "layout: [[[[[[[[[8]]]]]]]]]\n", 0, "t.yaml:4:18: error: layout nested 9 lists deep; at most 8 levels are supported"},
    {L2 "layout: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[8]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", 0,
     "t.yaml:4:40: error: nesting deeper than 32 lists and mappings"},
    /* keys */
    {L2 "layuot: [2, 3]\n", 0, "t.yaml:4:1: error: unknown key 'layuot' in the topology; did you mean 'layout'?"},
    {L2 "layout: [2, 3]\nbanana: 1\n", 0, "t.yaml:5:1: error: unknown key 'banana' in the topology (known keys: name, levels, reduce_bandwidth or layout)"},
    {"levels:\n  - {name: s, bandwidth: 5 GB/s, latency: 1 us, full_mesh: no}\nlayout: 8\n", 0,
     "t.yaml:2:60: error: full_mesh must be true or false, not 'no'"},
    {"levels:\n  - {name: s, bandwidth: 5 GB/s, latency: 1 us, full_mesh: [true]}\nlayout: 8\n", 0,
     "t.yaml:2:60: error: full_mesh must be a single value, not a list"},
    {"levels:\n  - {name: s, bandwidth: 5 GB/s, latency: 1 us}\n  - {name: n, bandwidth: 5 GB/s, latency: 1 us, full_mesh: false}\nlayout: [1, 2]\n", 0,
     "t.yaml:3:60: error: `full_mesh` describes a server's links (level 0), not level 1"},
    {"levels:\n  - {name: s, bandwith: 5 GB/s, latency: 1 us}\nlayout: 8\n", 0, "t.yaml:2:15: error: unknown key 'bandwith' in level 0; did you mean 'bandwidth'?"},
    {"levels:\n  - {name: s, latency: 1 us}\nlayout: 8\n", 0, "t.yaml:2:5: error: level 0 has no `bandwidth`"},
    {L2 "layout: [{host: a, rank: 2}, 3]\n", 0, "t.yaml:4:20: error: unknown key 'rank' in a server; did you mean 'ranks'?"},
    {L2 "layout: [2, 3]\nlayout: [2, 3]\n", 0, "t.yaml:5:1: error: key 'layout' given twice in the topology"},
    {"name: x\nlayout: 8\n", 0, "t.yaml:1:1: error: no `levels`: list the levels, innermost first"},
    /* hosts and devices */
    {L2 "layout: [{host: a, ranks: 2}, 3]\n", 0, "t.yaml:4:9: error: server 1 names no host, but others do: name every server's host or none"},
    {L2 "layout: [{host: a, ranks: 2}, {host: a, ranks: 1}]\n", 0, "t.yaml:4:9: error: host 'a' is named by two servers"},
    {L2 "layout: [{host: a, devices: [0, 1, 0]}, 3]\n", 0, "t.yaml:4:29: error: device 0 is listed twice"},
    {L2 "layout: [{host: a, ranks: 3, devices: [0, 1]}, 3]\n", 0, "t.yaml:4:39: error: 2 devices for 3 ranks"},
    /* tabs, binary */
    {"levels:\n\t- {name: s, bandwidth: 5 GB/s, latency: 1 us}\nlayout: 8\n", 0, "t.yaml:2:1: error: tab in indentation: YAML indents with spaces only"},
    {"levels:\n  - {name: s\0, bandwidth: 5 GB/s}\n", 35, "t.yaml:2:13: error: NUL byte: a topology file is YAML text, not binary data"},
    {"levels: \xff\xfe\n", 0, "t.yaml:1:9: error: invalid leading UTF-8 octet (the file must be UTF-8 text)"},
};

static void check_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[512] = "";
        st_topofile t;
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
        int rc = st_topofile_parse("t.yaml", bad[i].text, len, &t, err, sizeof err);
        EXPECT(rc == -1 && strcmp(err, bad[i].want) == 0, "case %zu:\n  want %s\n  got  %s (rc %d)", i, bad[i].want,
               err, rc);
        if (rc == 0)
            st_topofile_free(&t);
    }
    /* above a schedule's 65536 ranks: a layout holds up to a million (issue 22 item 7) */
    const char *big = L2 "layout: [60000, 6000]\n";
    char err[512] = "";
    st_topofile t;
    int rc = st_topofile_parse("t.yaml", big, strlen(big), &t, err, sizeof err);
    CHECK(rc == 0 && t.layout.p == 66000, "66000 ranks: rc %d %s", rc, err);
    if (rc == 0)
        st_topofile_free(&t);
}

/* Files that are not regular are refused at once, never read or waited on. */
static void check_files(void)
{
    char dir[] = "/tmp/st_topofile_XXXXXX", fifo[64], err[512];
    st_topofile t;
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(fifo, sizeof fifo, "%s/fifo.yaml", dir);
    EXPECT(mkfifo(fifo, 0600) == 0, "mkfifo");
    EXPECT(st_topofile_load(fifo, &t, err, sizeof err) == -1, "FIFO accepted");
    char want[256];
    snprintf(want, sizeof want, "%s: error: not a regular file (a FIFO or pipe); only regular files are read", fifo);
    EXPECT(strcmp(err, want) == 0, "FIFO: %s", err);
    EXPECT(st_topofile_load(dir, &t, err, sizeof err) == -1 && strstr(err, "(a directory)"), "directory: %s", err);
    EXPECT(st_topofile_load("/nonexistent/t.yaml", &t, err, sizeof err) == -1 &&
               strcmp(err, "/nonexistent/t.yaml: error: cannot read: No such file or directory") == 0, "missing: %s", err);
    unlink(fifo);
    rmdir(dir);
}

static void check_layouts(void)
{
    static const struct {
        const char *text, *canon; /* canon NULL: must fail */
        int p, nlevels;
    } cases[] = {
        {"2,3", "2,3", 5, 2},      {"3x2", "2,2,2", 6, 2},         {" [2, 3] , [4] ", "[2,3],[4]", 9, 3},
        {"8", "8", 8, 2},          {"[[1]],[[2,3]]", "[[1]],[[2,3]]", 6, 4},
        {"2,0", NULL, 0, 0},       {"[2],3", NULL, 0, 0},          {"2,,3", NULL, 0, 0},
        {"[2,3", NULL, 0, 0},      {"2,3]", NULL, 0, 0},           {"", NULL, 0, 0},
        {"99999999999", NULL, 0, 0}, {"0x4", NULL, 0, 0},          {"[]", NULL, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        st_layout l;
        char why[200], text[200];
        int rc = st_layout_parse(cases[i].text, &l, why, sizeof why);
        if (!cases[i].canon) {
            EXPECT(rc == -1, "'%s' accepted", cases[i].text);
            continue;
        }
        EXPECT(rc == 0, "'%s': %s", cases[i].text, why);
        if (rc)
            continue;
        st_layout_format(&l, text, sizeof text);
        EXPECT(strcmp(text, cases[i].canon) == 0 && l.p == cases[i].p && l.nlevels == cases[i].nlevels,
               "'%s' gave %s, p %d, %d levels", cases[i].text, text, l.p, l.nlevels);
        st_layout_free(&l);
    }
}

/* [4,2],[3]: servers {0..3} {4,5} {6,7,8}; pods {0..5} {6..8}; everything. */
static void check_levels(void)
{
    st_layout l;
    st_topo t;
    void *mem;
    char why[200];
    EXPECT(st_layout_parse("[4,2],[3]", &l, why, sizeof why) == 0, "parse: %s", why);
    EXPECT(st_topo_build(&l, &t, &mem) == 0, "build");
    EXPECT(st_topo_nlevels(&t) == 3, "levels %d", st_topo_nlevels(&t));
    st_topo_level s = st_topo_level_of(&t, 0), pod = st_topo_level_of(&t, 1), all = st_topo_level_of(&t, 2);
    EXPECT(s.ngroups == 3 && pod.ngroups == 2 && all.ngroups == 1 && !all.first, "groups %d %d %d", s.ngroups,
           pod.ngroups, all.ngroups);
    EXPECT(s.group_of[5] == 1 && s.index_of[5] == 1 && s.group_of[6] == 2 && s.index_of[8] == 2, "level 0");
    EXPECT(pod.group_of[5] == 0 && pod.index_of[5] == 5 && pod.group_of[6] == 1 && pod.index_of[8] == 2 &&
               pod.first[1] == 6 && pod.first[2] == 9, "level 1");
    EXPECT(t.ngroups == 3 && t.first[2] == 6, "level 0 fields");
    free(mem);
    st_layout_free(&l);
    /* st_topo_uniform (the runtime's) is two levels; none is one */
    EXPECT(st_topo_nlevels(NULL) == 1 && st_topo_level_of(NULL, 0).ngroups == 1, "no topology");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_topofile TOPOLOGIES_DIR\n");
        return 2;
    }
    check_examples(argv[1]);
    check_bad();
    check_files();
    check_layouts();
    check_levels();
    return st_check_summary("test_topofile");
}
