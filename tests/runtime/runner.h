/* runner.h - a tiny test runner for the runtime tests: each test runs in a child process with a timeout, results
 * are printed as TAP. A crash, a failed CHECK (tests/lib/check.h) or a hang in one test cannot take the others
 * down, and a test may change the environment (setenv) without leaking it.
 * Usage: prog [--list] [name ...] (no names: all tests).
 */
#ifndef ST_TEST_RUNNER_H
#define ST_TEST_RUNNER_H

#undef NDEBUG
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "tunables_env.h"

typedef struct st_test {
    const char *name;
    void (*fn)(void);
    int timeout_s;
} st_test;

/* Run fn(ctx, rank) on p threads at once (ranks 0..p-1, at most 64) and join them all. */
typedef struct st_rank_arg {
    void (*fn)(void *ctx, int rank);
    void *ctx;
    int rank;
} st_rank_arg;

static inline void *st_rank_main(void *arg)
{
    st_rank_arg *a = arg;
    a->fn(a->ctx, a->rank);
    return NULL;
}

static inline void st_run_ranks(int p, void (*fn)(void *ctx, int rank), void *ctx)
{
    pthread_t th[64];
    st_rank_arg args[64];
    CHECK(p >= 1 && p <= 64, "st_run_ranks: p = %d", p);
    for (int r = 0; r < p; r++) {
        args[r] = (st_rank_arg){fn, ctx, r};
        CHECK(pthread_create(&th[r], NULL, st_rank_main, &args[r]) == 0, "pthread_create");
    }
    for (int r = 0; r < p; r++)
        pthread_join(th[r], NULL);
}

static double st_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int st_selected(const char *name, int argc, char **argv)
{
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        any = 1;
        if (strcmp(argv[i], name) == 0)
            return 1;
    }
    return !any;
}

static int st_run_one(const st_test *t, int number)
{
    double t0 = st_now();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        alarm((unsigned)t->timeout_s);
        t->fn();
        fflush(NULL);
        _exit(0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("%s %d - %s # %.2f s", ok ? "ok" : "not ok", number, t->name, st_now() - t0);
    if (WIFSIGNALED(status))
        printf(" (%s)", WTERMSIG(status) == SIGALRM ? "timed out" : strsignal(WTERMSIG(status)));
    printf("\n");
    return !ok;
}

/* The runtime's environment variables come from the test itself, never from the caller's shell (tunables_env.h
 * says which a run may pass in). */
static int st_run_tests(const st_test *tests, int n, int argc, char **argv)
{
    st_test_clear_tunables();
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--list") == 0) {
            for (int j = 0; j < n; j++)
                printf("%s\n", tests[j].name);
            return 0;
        }
    int failed = 0, ran = 0;
    printf("TAP version 13\n");
    for (int i = 0; i < n; i++)
        if (st_selected(tests[i].name, argc, argv))
            ran++;
    printf("1..%d\n", ran);
    for (int i = 0, k = 0; i < n; i++)
        if (st_selected(tests[i].name, argc, argv))
            failed += st_run_one(&tests[i], ++k);
    return failed ? 1 : 0;
}

/* ---- one body per thread rank ------------------------------------------------------------------------------ */

#include "stitch.h"

/* A body of the shared bodies (p2p_body.h, nb_body.h): runs on one rank, returns 0, or 1 with why in `why`. */
typedef int (*st_body_fn)(stitch_comm_t *comm, char *why, size_t len);

typedef struct st_body_ctx {
    stitch_comm_t **comms;
    st_body_fn body;
    char why[64][512];
    int rc[64];
} st_body_ctx;

static inline void st_body_rank(void *arg, int r)
{
    st_body_ctx *c = arg;
    c->rc[r] = c->body(c->comms[r], c->why[r], sizeof c->why[r]);
}

/* Run body on p thread ranks of one communicator with this timeout; CHECK that every rank returned 0, then destroy
 * the communicators (a body may have destroyed its own already: refused, harmless). */
static inline void st_run_body(int p, int timeout_ms, st_body_fn body)
{
    static st_body_ctx c;
    stitch_comm_t *comms[64];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[1024] = "";
    cfg.timeout_ms = timeout_ms;
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "init: %s", err);
    c.comms = comms, c.body = body;
    memset(c.rc, 0, sizeof c.rc);
    st_run_ranks(p, st_body_rank, &c);
    for (int r = 0; r < p; r++) {
        CHECK(c.rc[r] == 0, "p %d rank %d: %s", p, r, c.why[r]);
        stitch_comm_destroy(comms[r]);
    }
}

#endif
