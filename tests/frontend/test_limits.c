/* test_limits.c - the front end's resource limits: what it reads, how long it takes, how much it says.
 *
 * Each check is a function that returns the number of failures. Inputs that used to hang or grow without bound
 * (a FIFO, /dev/zero) run under an alarm, so a regression ends this test within seconds instead of hanging the
 * suite; the 100,000-`let` file is timed against a bound that the old quadratic name lookup (14 s) missed by far.
 */
#undef NDEBUG
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "frontend.h"
#include "sema.h"

static char dir[] = "/tmp/stitch-limits-XXXXXX";

static int fail(const char *what, const char *got)
{
    fprintf(stderr, "FAIL %s\n--- got (at most 2000 bytes):\n%.2000s\n", what, got ? got : "(nothing)");
    return 1;
}

/* Parse `path` and (when it parsed without errors and `compile`) compile it; returns the printed diagnostics. */
static char *diags_of(const char *path, const char *src, size_t len, int compile)
{
    st_diags d;
    char *out = NULL;
    size_t outlen = 0;
    st_diags_init(&d, path, NULL, 0);
    st_file *f = src ? st_parse(path, src, len, &d) : st_parse_path(path, &d);
    if (f && compile && d.nerrors == 0)
        st_catalogue_free(st_compile(f, &d));
    FILE *o = open_memstream(&out, &outlen);
    st_diags_print(&d, o);
    fclose(o);
    st_diags_free(&d);
    if (f)
        st_file_free(f);
    return out;
}

/* The file at `path` must be refused with exactly `want`, without reading it. */
static int refused(const char *path, const char *want)
{
    alarm(10); /* before the fix a FIFO blocked in open and /dev/zero was read forever */
    char *got = diags_of(path, NULL, 0, 0);
    alarm(0);
    int bad = strcmp(got, want) != 0 ? fail(path, got) : 0;
    free(got);
    return bad;
}

static int check_not_regular(void)
{
    char fifo[64], want[160];
    snprintf(fifo, sizeof fifo, "%s/fifo.dsl", dir);
    if (mkfifo(fifo, 0600) != 0)
        return fail("mkfifo", NULL);
    snprintf(want, sizeof want, "%s: error: not a regular file (a FIFO or pipe); only regular files are read\n", fifo);
    int bad = refused(fifo, want);
    unlink(fifo);
    bad += refused("/dev/zero",
                   "/dev/zero: error: not a regular file (a character device); only regular files are read\n");
    snprintf(want, sizeof want, "%s: error: not a regular file (a directory); only regular files are read\n", dir);
    return bad + refused(dir, want);
}

/* A (sparse) file one byte over ST_MAX_SOURCE is refused by its size; one of exactly the limit is read. */
static int check_size(void)
{
    char path[64], want[200];
    snprintf(path, sizeof path, "%s/big.dsl", dir);
    FILE *f = fopen(path, "w");
    if (!f || ftruncate(fileno(f), ST_MAX_SOURCE + 1) != 0)
        return fail("creating a big file", NULL);
    fclose(f);
    snprintf(want, sizeof want, "%s: error: file too large (%d bytes); the limit for a source file is 16 MiB\n", path,
             ST_MAX_SOURCE + 1);
    int bad = refused(path, want);
    if (truncate(path, ST_MAX_SOURCE) != 0)
        return bad + fail("truncate", NULL);
    char *got = diags_of(path, NULL, 0, 0); /* 16 MiB of NUL bytes: stray bytes up to the error limit */
    if (!strstr(got, "error: stray '\\x00' in program") || strstr(got, "too large"))
        bad += fail("a file of exactly ST_MAX_SOURCE bytes", got);
    free(got);
    unlink(path);
    return bad;
}

/* A leading UTF-8 byte-order mark is not text; one anywhere else is still a stray byte. */
static int check_bom(void)
{
    static const char ok[] = "\xef\xbb\xbf" "algorithm a implements x { units p + q }";
    char *got = diags_of("t.dsl", ok, sizeof ok - 1, 0);
    int bad = strcmp(got, "") != 0 ? fail("leading BOM", got) : 0;
    free(got);
    got = diags_of("t.dsl", ok, sizeof ok - 1, 1); /* columns count from after the mark */
    if (!strstr(got, "t.dsl:1:38: error: unknown name 'q'\n"))
        bad += fail("column after a BOM", got);
    free(got);
    static const char mid[] = "algorithm a implements x {} \xef\xbb\xbf";
    got = diags_of("t.dsl", mid, sizeof mid - 1, 0);
    if (!strstr(got, "t.dsl:1:29: error: stray '\\xef' in program"))
        bad += fail("BOM after the start", got);
    free(got);
    return bad;
}

/* A megabyte identifier is named by its first ST_DIAG_WORD_MAX bytes and "...", not echoed in full. */
static int check_long_name(void)
{
    size_t n = 1 << 20;
    const char *pre = "algorithm a implements all_gather { units p let b = ", *post = " }";
    char *src = malloc(strlen(pre) + n + strlen(post) + 1);
    CHECK(src);
    strcpy(src, pre);
    memset(src + strlen(pre), 'z', n);
    strcpy(src + strlen(pre) + n, post);
    char *got = diags_of("t.dsl", src, strlen(src), 1);
    char want[200];
    snprintf(want, sizeof want, "t.dsl:1:53: error: unknown name '%.*s...'\n", ST_DIAG_WORD_MAX,
             src + strlen(pre));
    int bad = strncmp(got, want, strlen(want)) != 0 || strlen(got) > 1000 ? fail("1 MB identifier", got) : 0;
    free(got);
    free(src);
    return bad;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* 100,000 `let`s compile in linear time. In the algorithm before them (the first, so the symbol stack is still
 * small) a function of 70 parameters moves the stack while its parameters are bound: the function's own symbol
 * must not be used through a stale pointer then (ASan saw it). Names bound in a loop go out of scope after it. */
static int check_many_lets(void)
{
    enum { N = 100000 };
    size_t cap = (size_t)N * 32 + 4096, o = 0;
    char *src = malloc(cap);
    CHECK(src);
    o += (size_t)snprintf(src + o, cap - o, "algorithm s implements all_gather {\n  units p\n  fn f(");
    for (int i = 0; i < 70; i++)
        o += (size_t)snprintf(src + o, cap - o, "%sa%d", i ? ", " : "", i);
    o += (size_t)snprintf(src + o, cap - o, ") = a0\n  let y = f(");
    for (int i = 0; i < 70; i++)
        o += (size_t)snprintf(src + o, cap - o, "%s0", i ? ", " : "");
    /* a name bound inside a loop is free again after it; shadowing a visible name is an error */
    o += (size_t)snprintf(src + o, cap - o, ")\n  for i in 0 .. 1 { let x = i }\n  let x = 2\n"
                                            "  for j in 0 .. 1 { let x = j }\n}\n");
    o += (size_t)snprintf(src + o, cap - o, "algorithm big implements all_gather {\n  units p\n");
    for (int i = 0; i < N; i++)
        o += (size_t)snprintf(src + o, cap - o, "  let v%d = %d\n", i, i);
    o += (size_t)snprintf(src + o, cap - o, "  step t in 0 .. p - 2 {\n"
                          "    send unit (r - t + v%d - v%d) %% p to (r + 1) %% p\n  }\n}\n", N - 1, N - 1);
    double t0 = seconds();
    char *got = diags_of("t.dsl", src, o, 1);
    double dt = seconds() - t0;
    int bad = 0;
    if (strcmp(got, "") == 0 || !strstr(got, "error: 'x' is already defined") || strstr(got, "big"))
        bad += fail("100,000 lets and scopes", got);
    printf("100,000 lets: parsed and compiled in %.3f s\n", dt);
    if (dt > 3.0) /* 0.07 s with the hash table, 14 s with the old linear lookup */
        bad += fail("100,000 lets take too long", "");
    free(got);
    free(src);
    return bad;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    int fails = check_not_regular() + check_size() + check_bom() + check_long_name() + check_many_lets();
    rmdir(dir);
    printf("%s: %d failure%s\n", fails ? "FAIL" : "ok", fails, fails == 1 ? "" : "s");
    return fails != 0;
}
