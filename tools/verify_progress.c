/* verify_progress.c - `stitchc verify`'s progress line: on a terminal, a long range (stitchc verify --ranks 1..256
 * takes seconds per pair) shows which pair and which p it is at, redrawn at most ten times a second on stderr as
 * "\r\033[K" + text, never ending in a newline. Only when stderr is a terminal: output to a file or a pipe (what the
 * tests compare) is unchanged. verify's own lines go to stdout through a stream that erases the progress line before
 * each write, so the two never share a line of the terminal. */
#define _GNU_SOURCE /* fopencookie */
#include "verify_progress.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "st_steptab.h" /* st_coll_name */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void clear(st_progress *pr)
{
    if (pr->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        pr->shown = 0;
    }
}

static ssize_t write_out(void *cookie, const char *buf, size_t n)
{
    clear(cookie);
    size_t done = fwrite(buf, 1, n, stdout);
    fflush(stdout);
    return done == n ? (ssize_t)n : -1;
}

static void draw(void *ctx, const char *algo, int coll, int pair, int p, int pmin, int pmax)
{
    st_progress *pr = ctx;
    double t = now();
    if (t - pr->t0 < 0.5 || t - pr->last < 0.1)
        return;
    pr->last = t;
    if (p > 0)
        fprintf(stderr, "\r\033[Kverify: pair %d of %d: %s %s: p = %d (%d..%d), %.0f s", pair, pr->npairs, algo,
                st_coll_name(coll), p, pmin, pmax, t - pr->t0);
    else
        fprintf(stderr, "\r\033[Kverify: pair %d of %d: %s %s: the layouts, %.0f s", pair, pr->npairs, algo,
                st_coll_name(coll), t - pr->t0);
    fflush(stderr);
    pr->shown = 1;
}

FILE *st_progress_start(st_progress *pr, st_verify_opts *o, int npairs)
{
    const char *term = getenv("TERM");
    *pr = (st_progress){.npairs = npairs, .t0 = now(), .out = stdout};
    if (!isatty(STDERR_FILENO) || (term && strcmp(term, "dumb") == 0))
        return stdout;
    FILE *f = fopencookie(pr, "w", (cookie_io_functions_t){.write = write_out});
    if (f == NULL || setvbuf(f, NULL, _IOLBF, 0) != 0) { /* no progress, rather than no output */
        if (f)
            fclose(f);
        return stdout;
    }
    fflush(stdout);
    pr->on = 1, pr->out = f;
    o->progress = draw, o->progress_ctx = pr;
    return f;
}

void st_progress_end(st_progress *pr)
{
    if (pr->out && pr->out != stdout)
        fclose(pr->out); /* flushes through write_out */
    pr->out = stdout;
    clear(pr);
}
