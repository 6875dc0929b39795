/* check.h - the one set of checks for stitch's C tests (every test program under tests/ that judges results).
 *
 *   CHECK(cond, fmt, ...)    fatal: prints "FILE:LINE: CHECK(cond) failed: message" on stderr and exits 1 (a
 *                            runner.h test runs in its own child, so only that test ends)
 *   EXPECT(cond, fmt, ...)   counted: prints "FILE:LINE: EXPECT(cond) failed: message" on stderr and goes on
 *   st_check_summary(name)   prints "NAME: ok (N checks)" or "NAME: FAILED (F of N checks)" on stdout and returns
 *                            the exit status (0 or 1): `return st_check_summary(argv[0]);` ends a test program
 *
 * The message is a printf format and its arguments, and may be left out (CHECK(p != NULL)). The counters are the
 * program's own: one test program is one translation unit that includes this header (static state, no library).
 */
#ifndef ST_TEST_CHECK_H
#define ST_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int st_checks_run;    /* CHECKs and EXPECTs evaluated */
static int st_checks_failed; /* EXPECTs that failed (a failed CHECK exits) */

__attribute__((format(printf, 4, 5), unused)) static void st_check_failed(const char *file, int line,
                                                                           const char *what, const char *fmt, ...)
{
    fprintf(stderr, "%s:%d: %s failed", file, line, what);
    if (fmt[0] == ' ' && fmt[1] != '\0') { /* the macros put one space before the caller's format */
        va_list ap;
        va_start(ap, fmt);
        fputc(':', stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
}

#define ST_CHECK_AT_(what, cond, fatal, ...)                                                                        \
    do {                                                                                                           \
        st_checks_run++;                                                                                           \
        if (!(cond)) {                                                                                             \
            st_check_failed(__FILE__, __LINE__, what, " " __VA_ARGS__);                                              \
            if (fatal)                                                                                             \
                exit(1);                                                                                           \
            st_checks_failed++;                                                                                    \
        }                                                                                                          \
    } while (0)

/* (the condition is spelled here, before its macros expand: CHECK(p == NULL) says NULL, not ((void *)0)) */
#define CHECK(cond, ...) ST_CHECK_AT_("CHECK(" #cond ")", cond, 1, __VA_ARGS__)
#define EXPECT(cond, ...) ST_CHECK_AT_("EXPECT(" #cond ")", cond, 0, __VA_ARGS__)

/* The closing line and the exit status: 1 when any EXPECT failed. */
__attribute__((unused)) static int st_check_summary(const char *name)
{
    if (st_checks_failed)
        printf("%s: FAILED (%d of %d checks)\n", name, st_checks_failed, st_checks_run);
    else
        printf("%s: ok (%d checks)\n", name, st_checks_run);
    fflush(stdout);
    return st_checks_failed ? 1 : 0;
}

#endif
