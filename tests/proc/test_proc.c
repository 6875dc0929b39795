/* test_proc.c - process-mode communicators: ranks are forked processes of this test, joined by a unique id.
 *
 *   test_proc [scenario ...]      scenarios: shm tcp odd kill mismatch abort groups (default: all)
 *
 * Every scenario forks its ranks, bounds the whole run with a deadline (children that outlive it are killed
 * and the scenario fails), and checks exit codes and the error text each rank reports through a pipe. The
 * checks are exact values (sums of small integers), so any reduction order gives the same result. Prints TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procrun.h"
#include "stitch.h"

/* ---- rank bodies ------------------------------------------------------------------------------------------ */

static int check_coll(stitch_comm_t *comm, int rank, int n, int out, stitch_coll_t coll, size_t count)
{
    size_t total = coll == STITCH_ALL_REDUCE ? count : count * (size_t)n;
    float *in = malloc(sizeof(float) * total), *res = malloc(sizeof(float) * total);
    stitch_status_t st;
    for (size_t i = 0; i < total; i++)
        in[i] = (float)((i * 7 + (size_t)rank * 3) % 64), res[i] = -1;
    if (coll == STITCH_ALL_REDUCE)
        st = stitch_all_reduce(in, res, count, STITCH_FP32, STITCH_SUM, comm);
    else if (coll == STITCH_REDUCE_SCATTER)
        st = stitch_reduce_scatter(in, res, count, STITCH_FP32, STITCH_SUM, comm);
    else
        st = stitch_all_gather(in, res, count, STITCH_FP32, comm);
    int bad = 0;
    if (st != STITCH_OK) {
        say(out, "%s count %zu: %s: %s\n", stitch_coll_name(coll), count, stitch_strerror(st),
            stitch_comm_last_error(comm));
        bad = 1;
    }
    size_t nout = coll == STITCH_REDUCE_SCATTER ? count : total;
    for (size_t i = 0; !bad && i < nout; i++) {
        double want = 0;
        if (coll == STITCH_ALL_GATHER) {
            size_t q = i / count, j = i % count;
            want = (double)((j * 7 + q * 3) % 64);
        } else {
            size_t g = coll == STITCH_REDUCE_SCATTER ? (size_t)rank * count + i : i;
            for (int q = 0; q < n; q++)
                want += (double)((g * 7 + (size_t)q * 3) % 64);
        }
        if (res[i] != (float)want) {
            say(out, "%s count %zu: element %zu is %g, expected %g\n", stitch_coll_name(coll), count, i, res[i], want);
            bad = 1;
        }
    }
    free(in);
    free(res);
    return bad;
}

static int body_data(stitch_comm_t *comm, int rank, int n, int out)
{
    static const size_t counts[] = {1, 2, 7, 1000, 65536, 3 << 20};
    int bad = 0;
    for (size_t c = 0; c < sizeof counts / sizeof *counts && !bad; c++)
        for (int coll = 0; coll < 3 && !bad; coll++)
            bad = check_coll(comm, rank, n, out, (stitch_coll_t)coll, counts[c]);
    if (!bad && stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, "rhd") == STITCH_OK)
        bad = check_coll(comm, rank, n, out, STITCH_ALL_REDUCE, 100003);
    return bad;
}

static int body_long(stitch_comm_t *comm, int rank, int n, int out)
{
    size_t count = 4 << 20;
    float *buf = calloc(count, sizeof *buf);
    (void)n;
    for (int i = 0; i < 100000; i++) {
        stitch_status_t st = stitch_all_reduce(buf, buf, count, STITCH_FP32, STITCH_SUM, comm);
        if (st != STITCH_OK) {
            say(out, "rank %d: %s: %s\n", rank, stitch_strerror(st), stitch_comm_last_error(comm));
            free(buf);
            return 3;
        }
    }
    free(buf);
    return 0;
}

static int body_mismatch(stitch_comm_t *comm, int rank, int n, int out)
{
    size_t count = rank == 1 ? 2000 : 1000;
    float *buf = calloc(count, sizeof *buf);
    (void)n;
    stitch_status_t st = stitch_all_reduce(buf, buf, count, STITCH_FP32, STITCH_SUM, comm);
    free(buf);
    if (st == STITCH_OK)
        return 0;
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return 3;
}

static int body_abort(stitch_comm_t *comm, int rank, int n, int out)
{
    float x = 1;
    (void)n;
    if (rank == 0) {
        stitch_comm_abort(comm);
        return 3;
    }
    stitch_status_t st = stitch_all_reduce(&x, &x, 1, STITCH_FP32, STITCH_SUM, comm);
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

/* ---- scenarios -------------------------------------------------------------------------------------------- */

/* The run's segments left in /dev/shm: "stitch-<key>-<rank 0's pid>-<rank>" (proc.c). Only this run's count:
 * other jobs on the machine (other test runs) may hold segments of their own at this moment. */
static int shm_leftovers(const run *r)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    char mine[32];
    int n = 0;
    snprintf(mine, sizeof mine, "-%d-", (int)r->rank0);
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "stitch-", 7) == 0 && strstr(e->d_name, mine) != NULL;
    if (d)
        closedir(d);
    return n;
}

static int sc_data(int n, const char *transport)
{
    run r;
    spawn(&r, n, body_data, transport);
    reap(&r, DEADLINE_S);
    int left = shm_leftovers(&r);
    if (left)
        printf("# %s: %d shm segments of this run left in /dev/shm\n", transport ? transport : "auto", left);
    return all_ok(&r, transport) && left == 0;
}

static int sc_shm(void) { return sc_data(4, "shm"); }
static int sc_tcp(void) { return sc_data(3, "tcp"); }
static int sc_odd(void) { return sc_data(5, NULL); }

/* Process mode honours STITCH_GROUPS (pipeline on 2 groups of 2 consecutive ranks, data checked), and ranks given
 * different groups fail init, every one, naming the disagreement instead of running different schedules. */
static int body_pipeline(stitch_comm_t *comm, int rank, int n, int out)
{
    int sizes[4], ng = stitch_comm_groups(comm, sizes, 4), bad = ng != 2 || sizes[0] != 2 || sizes[1] != 2;
    if (bad)
        say(out, "rank %d: stitch_comm_groups gave %d groups\n", rank, ng);
    if (!bad && stitch_comm_set_algorithm(comm, STITCH_COLL_COUNT, "pipeline") != STITCH_OK)
        bad = 1, say(out, "rank %d: %s\n", rank, stitch_comm_last_error(comm));
    for (int coll = 0; coll < 3 && !bad; coll++)
        bad = check_coll(comm, rank, n, out, (stitch_coll_t)coll, 1000);
    return bad;
}

static int sc_groups(void)
{
    run r;
    int ok = 1, named = 0;
    for (int i = 0; i < 4; i++)
        groups_of_rank[i] = "2x2";
    spawn(&r, 4, body_pipeline, NULL);
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "groups 2x2");
    groups_of_rank[3] = "1,3";
    setenv("STITCH_TIMEOUT", "10", 1);
    spawn(&r, 4, body_pipeline, NULL);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    for (int i = 0; i < 4; i++) {
        groups_of_rank[i] = NULL;
        named += r.status[i] == 2 && strstr(r.text[i], "ranks disagree on the groups") != NULL &&
                 strstr(r.text[i], i == 3 ? "rank 3 has groups from STITCH_GROUPS='1,3'" : "but rank 3 has groups "
                                            "from a different STITCH_GROUPS") != NULL;
    }
    printf("# groups: 2x2 on every rank %s; 1,3 on rank 3: %d of 4 ranks failed init naming it; rank 0 said: %s",
           ok ? "passed" : "failed", named, r.text[0]);
    return ok && named == 4;
}

static int sc_kill(void)
{
    run r;
    setenv("STITCH_TIMEOUT", "3", 1);
    spawn(&r, 4, body_long, NULL);
    usleep(1500 * 1000);
    kill(r.pid[2], SIGKILL);
    double t0 = now();
    reap(&r, 10);
    double took = now() - t0;
    unsetenv("STITCH_TIMEOUT");
    int ok = took < 6.0 && shm_leftovers(&r) == 0;
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        int named = strstr(r.text[i], "rank 2") != NULL;
        if (r.status[i] != 3 || !named) {
            printf("# kill: rank %d exited %d (want 3) with '%s'\n", i, r.status[i], r.text[i]);
            ok = 0;
        }
    }
    printf("# kill: survivors done %.3f s after the kill; /dev/shm stitch entries: %d; rank 0 said: %s", took,
           shm_leftovers(&r), r.text[0]);
    return ok;
}

static int sc_mismatch(void)
{
    run r;
    setenv("STITCH_TIMEOUT", "5", 1);
    spawn(&r, 3, body_mismatch, NULL);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    int ok = 1, named = 0;
    for (int i = 0; i < 3; i++) {
        ok &= r.status[i] == 3;
        named += strstr(r.text[i], "count 1000") && strstr(r.text[i], "count 2000");
        printf("# mismatch: rank %d exited %d: %s", i, r.status[i], r.text[i]);
    }
    return ok && named >= 2;
}

static int sc_abort(void)
{
    run r;
    setenv("STITCH_TIMEOUT", "5", 1);
    spawn(&r, 3, body_abort, NULL);
    double took = reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    int ok = took < 4;
    for (int i = 1; i < 3; i++) {
        ok &= r.status[i] == 3 && strstr(r.text[i], "abort") != NULL;
        printf("# abort: rank %d exited %d: %s", i, r.status[i], r.text[i]);
    }
    return ok;
}

static const struct {
    const char *name;
    int (*fn)(void);
} scenarios[] = {
    {"shm", sc_shm}, {"tcp", sc_tcp}, {"odd", sc_odd}, {"kill", sc_kill}, {"mismatch", sc_mismatch},
    {"abort", sc_abort}, {"groups", sc_groups},
};

int main(int argc, char **argv)
{
    int n = (int)(sizeof scenarios / sizeof *scenarios), failed = 0, k = 0;
    signal(SIGPIPE, SIG_IGN);
    proc_test_env();
    for (int a = 1; a < argc; a++) {
        int known = 0;
        for (int i = 0; i < n; i++)
            known |= strcmp(argv[a], scenarios[i].name) == 0;
        if (!known) {
            printf("Bail out! unknown scenario '%s'\n", argv[a]);
            return 1;
        }
    }
    printf("1..%d\n", argc > 1 ? argc - 1 : n);
    for (int i = 0; i < n; i++) {
        int want = argc == 1;
        for (int a = 1; a < argc; a++)
            want |= strcmp(argv[a], scenarios[i].name) == 0;
        if (!want)
            continue;
        fflush(stdout);
        int ok = scenarios[i].fn();
        printf("%s %d - %s\n", ok ? "ok" : "not ok", ++k, scenarios[i].name);
        failed += !ok;
    }
    return failed ? 1 : 0;
}
