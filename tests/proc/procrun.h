/* procrun.h - forking the ranks of a process-mode test and collecting what they report, shared by test_proc.c and
 * test_proc_colls.c. spawn() forks n ranks that join one unique id and run a body; reap() collects each rank's
 * exit code and the text it wrote to its pipe (say()), and kills whatever outlives the deadline.
 */
#ifndef ST_TEST_PROCRUN_H
#define ST_TEST_PROCRUN_H

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stitch.h"
#include "../runtime/tunables_env.h"

#define MAXR 16
#define DEADLINE_S 60

typedef struct run {
    int n;
    pid_t pid[MAXR];
    pid_t rank0;        /* rank 0's pid, kept after reaping: it names the run's shm segments */
    int fd[MAXR];       /* read end: the child's report */
    int status[MAXR];
    char text[MAXR][2048];
} run;

typedef int (*rank_fn)(stitch_comm_t *comm, int rank, int n, int out);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void say(int out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int out, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (write(out, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : strlen(buf)) < 0)
        _exit(9);
}

static const char *groups_of_rank[MAXR]; /* STITCH_GROUPS per rank, set in the child before init; NULL: unset */
static const stitch_config_t *config_of_rank[MAXR]; /* stitch_comm_init_rank's config per rank; NULL: none */
static const char *env_of_rank[MAXR]; /* one more "NAME=value" per rank, put in the child's environment before init */
/* Run in each child after stitch_comm_destroy, with its report pipe and the body's exit code; returns the code the
 * child exits with (a test's own checks of what destroy left behind: the verbs emulator's leak counters). NULL:
 * the body's code. */
static int (*after_destroy)(int out, int rc);

/* The settings the scenarios assume are the defaults, whatever the caller's shell exported (the ring sizes stay:
 * ctest sets them for the tinyring runs; tunables_env.h names what stays). */
static void proc_test_env(void)
{
    st_test_clear_tunables();
}

/* Fork n ranks that each init from `id` and run fn; exit code = fn's return. */
/* A rank that must stay alive, without calling, until its peers have finished (so that they fail by their own
 * timeout, not by its exit): the peers each write a byte when they are done, it reads n - 1 of them. Synchronised by
 * messages; the bound only keeps a broken test from hanging. Open before spawn (the ranks inherit the pipe). */
static int linger_fd[2] = {-1, -1};

static inline void linger_open(void)
{
    if (linger_fd[0] >= 0)
        close(linger_fd[0]), close(linger_fd[1]);
    if (pipe(linger_fd) != 0)
        linger_fd[0] = linger_fd[1] = -1;
}

static inline void linger_done(void)
{
    char b = 1;
    if (linger_fd[1] >= 0 && write(linger_fd[1], &b, 1) != 1)
        linger_fd[1] = -1;
}

static inline void linger_wait(int peers, int bound_s)
{
    char b;
    for (int got = 0; got < peers && linger_fd[0] >= 0;) {
        struct pollfd pf = {linger_fd[0], POLLIN, 0};
        if (poll(&pf, 1, bound_s * 1000) <= 0 || read(linger_fd[0], &b, 1) != 1)
            return;
        got++;
    }
}

static void spawn(run *r, int n, rank_fn fn, const char *transport)
{
    stitch_unique_id_t id;
    if (n < 1 || n > MAXR) { /* r's arrays hold MAXR ranks */
        fprintf(stderr, "spawn: %d ranks, 1..%d supported\n", n, MAXR);
        exit(1);
    }
    memset(r, 0, sizeof *r);
    r->n = n;
    if (stitch_get_unique_id(&id) != STITCH_OK) {
        fprintf(stderr, "stitch_get_unique_id failed\n");
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        int p[2];
        if (pipe(p) != 0) {
            perror("pipe");
            exit(1);
        }
        pid_t pid = fork();
        if (pid < 0) { /* the ranks already started wait for this one: end them, and the test */
            perror("fork");
            for (int j = 0; j < i; j++)
                kill(r->pid[j], SIGKILL), waitpid(r->pid[j], NULL, 0);
            exit(1);
        }
        if (pid == 0) {
            close(p[0]);
            if (transport)
                setenv("STITCH_TRANSPORT", transport, 1);
            if (groups_of_rank[i])
                setenv("STITCH_GROUPS", groups_of_rank[i], 1);
            if (env_of_rank[i])
                putenv((char *)env_of_rank[i]);
            stitch_comm_t *comm = NULL;
            char err[1024] = "";
            stitch_status_t st = stitch_comm_init_rank(&comm, n, id, i, config_of_rank[i], err, sizeof err);
            if (st != STITCH_OK) {
                say(p[1], "init: %s: %s\n", stitch_strerror(st), err);
                _exit(2);
            }
            int rc = fn(comm, i, n, p[1]);
            stitch_comm_destroy(comm);
            _exit(after_destroy ? after_destroy(p[1], rc) : rc);
        }
        close(p[1]);
        r->pid[i] = pid, r->fd[i] = p[0];
        if (i == 0)
            r->rank0 = pid;
    }
}

/* Every rank exited 0; otherwise print each failed rank's code and report, labelled `what` (NULL: "auto", as a
 * transport of NULL, the default, is passed), and return 0. */
static int all_ok(const run *r, const char *what)
{
    int ok = 1;
    for (int i = 0; i < r->n; i++)
        if (r->status[i] != 0) {
            printf("# %s: rank %d exited %d: %s\n", what ? what : "auto", i, r->status[i], r->text[i]);
            ok = 0;
        }
    return ok;
}

/* Wait until every rank but `except` (-1: none) has said "ready\n" on its report pipe (a rank function's first
 * words, when it has them: how a test knows the ranks are where it wants them, instead of sleeping and hoping).
 * Whatever else a rank writes first (it failed) is kept for reap. 1 when all are ready, 0 when one ended or
 * `limit` seconds passed first. */
static inline int await_ready(run *r, int except, double limit)
{
    double t0 = now();
    int ok = 1;
    for (int i = 0; i < r->n && ok; i++) {
        size_t got = strlen(r->text[i]);
        while (i != except && ok) {
            struct pollfd pf = {r->fd[i], POLLIN, 0};
            char c = '\0';
            if (now() - t0 > limit) {
                ok = 0;
                break;
            }
            if (poll(&pf, 1, 50) <= 0 || !pf.revents)
                continue;
            if (read(r->fd[i], &c, 1) != 1) {
                ok = 0;
                break;
            }
            if (got < sizeof r->text[i] - 1)
                r->text[i][got++] = c, r->text[i][got] = '\0';
            if (c == '\n') {
                if (got >= 6 && strcmp(r->text[i] + got - 6, "ready\n") == 0) {
                    got -= 6, r->text[i][got] = '\0';
                    break;
                }
                ok = 0; /* a report, not "ready": the rank failed */
            }
        }
    }
    return ok;
}

/* Collect reports and exit codes; kill whatever outlives the deadline. Returns seconds taken. */
static double reap(run *r, double limit)
{
    double t0 = now();
    const int n = r->n; /* spawn's, at most MAXR; read() into r->text must not make it look changed */
    int left = n;
    size_t fill[MAXR] = {0};
    for (int i = 0; i < n; i++)
        fill[i] = strlen(r->text[i]); /* what await_ready read that was not its report stays first */
    while (left > 0) {
        struct pollfd pf[MAXR];
        for (int i = 0; i < n; i++)
            pf[i] = (struct pollfd){r->fd[i], POLLIN, 0};
        poll(pf, (nfds_t)n, 50);
        for (int i = 0; i < n; i++) {
            if (r->fd[i] < 0 || !pf[i].revents)
                continue;
            ssize_t k = read(r->fd[i], r->text[i] + fill[i], sizeof r->text[i] - 1 - fill[i]);
            if (k > 0)
                fill[i] += (size_t)k;
            else
                close(r->fd[i]), r->fd[i] = -1;
        }
        for (int i = 0; i < n; i++) {
            int st;
            if (r->pid[i] > 0 && waitpid(r->pid[i], &st, WNOHANG) == r->pid[i]) {
                r->status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                r->pid[i] = 0, left--;
            }
        }
        if (now() - t0 > limit) {
            for (int i = 0; i < n; i++)
                if (r->pid[i] > 0) {
                    kill(r->pid[i], SIGKILL);
                    waitpid(r->pid[i], NULL, 0);
                    r->status[i] = 200, r->pid[i] = 0, left--;
                    snprintf(r->text[i] + fill[i], sizeof r->text[i] - fill[i], "(killed at the test deadline)");
                }
        }
    }
    /* A rank that wrote its report and exited after the last poll left it in the pipe: read it to EOF now (every
     * writer has exited, so this cannot block). Without this a report was lost now and then, and the rank looked
     * as if it had failed silently. */
    for (int i = 0; i < n; i++) {
        ssize_t k = 1;
        while (r->fd[i] >= 0 && fill[i] < sizeof r->text[i] - 1 && k > 0)
            if ((k = read(r->fd[i], r->text[i] + fill[i], sizeof r->text[i] - 1 - fill[i])) > 0)
                fill[i] += (size_t)k;
        if (r->fd[i] >= 0)
            close(r->fd[i]);
    }
    return now() - t0;
}

/* A program of scenarios, run as `prog [NAME...]` in TAP: no names runs every scenario whose name lacks ".long"
 * (those sit behind ctest's long label), names run those; an unknown name bails out. */
typedef struct proc_scenario {
    const char *name;
    int (*fn)(void);
} proc_scenario;

__attribute__((unused)) static int proc_main(const proc_scenario *sc, int n, int argc, char **argv)
{
    int failed = 0, k = 0, nlong = 0;
    signal(SIGPIPE, SIG_IGN);
    proc_test_env();
    for (int a = 1; a < argc; a++) {
        int known = 0;
        for (int i = 0; i < n; i++)
            known |= strcmp(argv[a], sc[i].name) == 0;
        if (!known) {
            printf("Bail out! unknown scenario '%s'\n", argv[a]);
            return 1;
        }
    }
    for (int i = 0; i < n; i++)
        nlong += strstr(sc[i].name, ".long") != NULL;
    printf("1..%d\n", argc > 1 ? argc - 1 : n - nlong);
    for (int i = 0; i < n; i++) {
        int want = argc == 1 && !strstr(sc[i].name, ".long");
        for (int a = 1; a < argc; a++)
            want |= strcmp(argv[a], sc[i].name) == 0;
        if (!want)
            continue;
        fflush(stdout);
        int ok = sc[i].fn();
        printf("%s %d - %s\n", ok ? "ok" : "not ok", ++k, sc[i].name);
        failed += !ok;
    }
    return failed ? 1 : 0;
}

/* spawn and reap with STITCH_TIMEOUT=timeout_s on every rank (a scenario whose ranks are to fail, and fast): how
 * many seconds reap took, deadline_s at most. */
static inline double spawn_with_timeout(run *r, int n, rank_fn fn, const char *transport, const char *timeout_s,
                                        double deadline_s)
{
    setenv("STITCH_TIMEOUT", timeout_s, 1);
    spawn(r, n, fn, transport);
    double took = reap(r, deadline_s);
    unsetenv("STITCH_TIMEOUT");
    return took;
}

/* Run fn on n process ranks over `transport` (NULL: the default) with this timeout on every rank, the linger pipe
 * open; 1 when every rank exited 0 (all_ok prints the rest) within 30 s, else 0. */
static stitch_config_t run_timed_cfg = STITCH_CONFIG_INIT;

static inline int run_timed(int n, rank_fn fn, const char *transport, int timeout_ms, const char *what)
{
    run r;
    run_timed_cfg.timeout_ms = timeout_ms;
    for (int i = 0; i < n; i++)
        config_of_rank[i] = &run_timed_cfg;
    double t0 = now();
    linger_open();
    spawn(&r, n, fn, transport);
    reap(&r, DEADLINE_S);
    int ok = all_ok(&r, what);
    if (now() - t0 > 30)
        printf("# %s took %.1f s\n", what, now() - t0), ok = 0;
    return ok;
}

#endif
