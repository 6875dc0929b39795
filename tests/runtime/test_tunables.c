/* test_tunables.c - the tunables' one declaration (runtime/tunables.def) against what is written elsewhere:
 * README.md's tunables table names exactly the declared variables, the tests' clearing list (tunables_env.h)
 * keeps only declared ones, and every declared default loads (config.c parses it like a user's value) to the
 * settings the runtime has always had.
 *
 * Usage: test_runtime_tunables [--readme PATH] [name ...]; the README defaults to the source tree's.
 */
#include "config.h"
#include "runner.h"
#include "stitch.h"

#ifndef STITCH_README
#error "STITCH_README: the path of README.md (tests/runtime.cmake defines it)"
#endif

#define NTUN (sizeof st_test_tunables / sizeof *st_test_tunables)
#define MAXROWS 64

static const char *readme_path = STITCH_README;

static int declared(const char *name, size_t len)
{
    for (size_t i = 0; i < NTUN; i++)
        if (strlen(st_test_tunables[i]) == len && strncmp(st_test_tunables[i], name, len) == 0)
            return 1;
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "cannot open %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    CHECK(n < sizeof buf - 1 && !ferror(f), "cannot read %s (or larger than 1 MiB)", path);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The names in the first column of the table under "## Tunables" ("| `STITCH_X` | ..."), into rows[] as
 * pointer + length; the count, or -1 when there is no such section. */
static int table_rows(const char *text, const char *rows[], size_t lens[])
{
    const char *s = strstr(text, "\n## Tunables\n");
    if (!s)
        return -1;
    int n = 0;
    for (s = strchr(s + 1, '\n'); s && strncmp(s, "\n## ", 4) != 0; s = strchr(s + 1, '\n')) {
        const char *name = s + 1;
        if (strncmp(name, "| `", 3) != 0)
            continue;
        name += 3;
        size_t len = strcspn(name, "`\n");
        CHECK(n < MAXROWS, "more than %d rows", MAXROWS);
        rows[n] = name, lens[n++] = len;
    }
    return n;
}

/* Every disagreement between README text and the declaration, one line each, into out; how many there are. */
static int readme_problems(const char *text, char *out, size_t outlen)
{
    const char *rows[MAXROWS];
    size_t lens[MAXROWS], used = 0;
    int n = table_rows(text, rows, lens), problems = 0;
    out[0] = '\0';
#define PROBLEM(...) (problems++, used += (size_t)snprintf(out + used, used < outlen ? outlen - used : 0, __VA_ARGS__))
    if (n < 0) {
        PROBLEM("README.md has no \"## Tunables\" section\n");
        return problems;
    }
    for (size_t i = 0; i < NTUN; i++) {
        int found = 0;
        for (int r = 0; r < n; r++)
            found += lens[r] == strlen(st_test_tunables[i]) && strncmp(rows[r], st_test_tunables[i], lens[r]) == 0;
        if (found != 1)
            PROBLEM("%s is declared in runtime/tunables.def but README.md's tunables table has %d rows for it\n",
                    st_test_tunables[i], found);
    }
    for (int r = 0; r < n; r++)
        if (!declared(rows[r], lens[r]))
            PROBLEM("README.md's tunables table lists %.*s, which runtime/tunables.def does not declare\n",
                    (int)lens[r], rows[r]);
#undef PROBLEM
    return problems;
}

static void test_readme(void)
{
    static char report[8192];
    int problems = readme_problems(read_file(readme_path), report, sizeof report);
    CHECK(problems == 0, "%s: %d problem(s):\n%s", readme_path, problems, report);
}

/* The check itself can fail: the README with one row taken out, and with one row too many. */
static void test_readme_check_fails(void)
{
    static char text[1 << 20], report[8192];
    snprintf(text, sizeof text, "%s", read_file(readme_path));
    char *row = strstr(text, "\n| `STITCH_TIMEOUT` |");
    CHECK(row != NULL, "no STITCH_TIMEOUT row in %s", readme_path);
    char *end = strchr(row + 1, '\n');
    memmove(row, end, strlen(end) + 1);
    CHECK(readme_problems(text, report, sizeof report) == 1, "a missing row: %s", report);
    CHECK(strstr(report, "STITCH_TIMEOUT is declared in runtime/tunables.def but README.md's tunables table has "
                         "0 rows for it") != NULL, "%s", report);

    snprintf(text, sizeof text, "%s", read_file(readme_path));
    row = strstr(text, "\n| `STITCH_TIMEOUT` |");
    CHECK(row != NULL, "no STITCH_TIMEOUT row");
    char tail[1 << 16];
    snprintf(tail, sizeof tail, "%s", row);
    snprintf(row, sizeof text - (size_t)(row - text), "\n| `STITCH_NOT_A_TUNABLE` | made up | 0 |%s", tail);
    CHECK(readme_problems(text, report, sizeof report) == 1, "an extra row: %s", report);
    CHECK(strstr(report, "lists STITCH_NOT_A_TUNABLE, which runtime/tunables.def does not declare") != NULL, "%s",
          report);
}

/* The tests keep only declared variables, and clear every other declared one. */
static void test_clear_list(void)
{
    for (size_t k = 0; k < sizeof st_test_tunables_kept / sizeof *st_test_tunables_kept; k++)
        CHECK(declared(st_test_tunables_kept[k], strlen(st_test_tunables_kept[k])),
              "tunables_env.h keeps %s, which runtime/tunables.def does not declare", st_test_tunables_kept[k]);
    for (size_t i = 0; i < NTUN; i++)
        setenv(st_test_tunables[i], "1", 1);
    st_test_clear_tunables();
    for (size_t i = 0; i < NTUN; i++)
        CHECK((getenv(st_test_tunables[i]) != NULL) == st_test_tunable_kept(st_test_tunables[i]), "%s: %s",
              st_test_tunables[i], getenv(st_test_tunables[i]) ? "still set" : "cleared");
}

/* Nothing set: the defaults the runtime had before they moved into tunables.def as text. Each declared default
 * set explicitly loads to the same settings. */
static void test_defaults(void)
{
    st_settings s, d;
    char err[512] = "";
    for (size_t i = 0; i < NTUN; i++)
        unsetenv(st_test_tunables[i]);
    CHECK(st_settings_load(NULL, &s, err, sizeof err) == STITCH_OK, "%s", err);
    CHECK(s.timeout_ms == 300 * 1000, "timeout %d ms", s.timeout_ms);
    CHECK(s.segment_bytes == (size_t)4 << 20, "segment %zu", s.segment_bytes);
    CHECK(s.oneshot_max == (size_t)48 << 10, "oneshot %zu", s.oneshot_max);
    CHECK(s.shm_ring_bytes == (size_t)4 << 20 && s.tcp_ring_bytes == (size_t)4 << 20, "rings %zu %zu",
          s.shm_ring_bytes, s.tcp_ring_bytes);
    CHECK(s.transport == ST_TP_AUTO && s.spin_us == -1 && s.tcp_cc[0] == '\0', "transport %d spin %ld cc '%s'",
          s.transport, s.spin_us, s.tcp_cc);
    CHECK(!s.groups && !s.socket_ifname && !s.secret, "unset strings are NULL");
    CHECK(strcmp(s.algo.every, "auto") == 0 && strcmp(s.algo_source, "default") == 0, "algo '%s' from %s",
          s.algo.every, s.algo_source);
    CHECK(strcmp(s.groups_source, "STITCH_GROUPS") == 0, "groups from %s", s.groups_source);

    static const char *const defaults[] = {
#define ST_TUNABLE(name, load, def, meaning) def,
#include "tunables.def"
    };
    s.algo_source = NULL;
    for (size_t i = 0; i < NTUN; i++) {
        if (!defaults[i])
            continue;
        setenv(st_test_tunables[i], defaults[i], 1);
        stitch_status_t st = st_settings_load(NULL, &d, err, sizeof err);
        unsetenv(st_test_tunables[i]);
        CHECK(st == STITCH_OK, "%s='%s', its declared default: %s", st_test_tunables[i], defaults[i], err);
        d.algo_source = NULL;
        CHECK(memcmp(&s, &d, sizeof s) == 0, "%s='%s' loads other settings than leaving it unset",
              st_test_tunables[i], defaults[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--readme") == 0) {
        readme_path = argv[2];
        argv[2] = argv[0];
        argv += 2, argc -= 2;
    }
    static const st_test tests[] = {
        {"readme", test_readme, 10},
        {"readme_check_fails", test_readme_check_fails, 10},
        {"clear_list", test_clear_list, 10},
        {"defaults", test_defaults, 10},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
