/* test_proc_errors.c - how process-mode calls fail when one rank is wrong (ranks are forked processes).
 *
 *   test_proc_errors [scenario ...]      scenarios: argerror init.* (default: all)
 *
 * argerror: rank 1 of 3 calls all_reduce with a NULL sendbuf while the others wait inside the call with a 20 s
 * timeout. The argument error aborts the communicator over the control channels, so the others return
 * STITCH_ERR_ABORTED within a second with rank 1's message, not after the timeout.
 *
 * init.*: one rank of 4 fails init before its bootstrap, each scenario for one cause (a missing, a malformed or a
 * FIFO STITCH_ALGO_FILE, a bad STITCH_TOPO, STITCH_SEGMENT_BYTES=1), the root among them. The others, with the
 * default 300 s timeout, must fail within a few seconds too, with that rank's status, naming it and its reason
 * (the root relays it: bootstrap.h), not with a bootstrap timeout. Prints TAP.
 */
#include <sys/stat.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procrun.h"
#include "stitch.h"

static int body_argerror(stitch_comm_t *comm, int rank, int n, int out)
{
    float x[4] = {1, 2, 3, 4};
    (void)n;
    double t0 = now();
    if (rank == 1)
        usleep(200 * 1000); /* the others are inside the call by then (the test holds if they are not) */
    stitch_status_t st = stitch_all_reduce(rank == 1 ? NULL : x, x, 4, STITCH_FP32, STITCH_SUM, comm);
    say(out, "%.3f s: %s: %s\n", now() - t0, stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

static int sc_argerror(void)
{
    run r;
    setenv("STITCH_TIMEOUT", "20", 1);
    spawn(&r, 3, body_argerror, NULL);
    double took = reap(&r, 40);
    unsetenv("STITCH_TIMEOUT");
    int ok = took < 5 && r.status[1] == 3 && strstr(r.text[1], "STITCH_ERR_INVALID_ARGUMENT") != NULL;
    for (int i = 0; i < 3; i++) {
        if (i != 1)
            ok &= r.status[i] == 3 && strstr(r.text[i], "STITCH_ERR_ABORTED") != NULL &&
                  strstr(r.text[i], "rank 1: stitch_all_reduce: sendbuf is NULL with count 4") != NULL;
        printf("# argerror: rank %d exited %d: %s", i, r.status[i], r.text[i]);
    }
    printf("# argerror: all ranks done in %.3f s\n", took);
    return ok;
}

/* ---- one rank fails init ---------------------------------------------------------------------------------- */

static int body_none(stitch_comm_t *comm, int rank, int n, int out)
{
    (void)comm, (void)rank, (void)n;
    say(out, "init succeeded\n");
    return 1;
}

/* Rank `bad` of 4 gets `var` (NAME=value); every rank must exit 2 (init failed) within a few seconds, with
 * STITCH_ERR_CONFIG and `reason`; the others also with "rank <bad> of 4". */
static int init_fails(const char *what, int bad, const char *var, const char *reason)
{
    run r;
    char named[64];
    snprintf(named, sizeof named, "rank %d of 4 (pid ", bad);
    env_of_rank[bad] = var;
    spawn(&r, 4, body_none, NULL);
    double took = reap(&r, 30);
    env_of_rank[bad] = NULL;
    int ok = took < 10;
    for (int i = 0; i < 4; i++) {
        int good = r.status[i] == 2 && strstr(r.text[i], "STITCH_ERR_CONFIG") && strstr(r.text[i], reason) &&
                   (i == bad || strstr(r.text[i], named));
        printf("# %s: rank %d exited %d%s: %s%s", what, i, r.status[i], good ? "" : " (wrong)", r.text[i],
               strchr(r.text[i], '\n') ? "" : "\n");
        ok &= good;
    }
    printf("# %s: every rank done in %.3f s (limit 10)\n", what, took);
    return ok;
}

static int sc_init_algo_missing(void)
{
    return init_fails("init.algo_missing", 2, "STITCH_ALGO_FILE=/nonexistent/stitch-algos.dsl",
                      "/nonexistent/stitch-algos.dsl");
}

static int sc_init_algo_malformed(void)
{
    char path[] = "/tmp/stitch_init_fail_XXXXXX", var[80];
    int fd = mkstemp(path);
    const char *text = "algorithm all_reduce broken {\n  this is not stitch\n";
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        return 0;
    close(fd);
    snprintf(var, sizeof var, "STITCH_ALGO_FILE=%s", path);
    int ok = init_fails("init.algo_malformed", 1, var, ": error: ");
    unlink(path);
    return ok;
}

static int sc_init_algo_fifo(void)
{
    char path[64], var[100];
    snprintf(path, sizeof path, "/tmp/stitch_init_fifo_%d", (int)getpid());
    unlink(path);
    if (mkfifo(path, 0600) != 0)
        return 0;
    snprintf(var, sizeof var, "STITCH_ALGO_FILE=%s", path);
    int ok = init_fails("init.algo_fifo", 0, var, "not a regular file (a FIFO or pipe)");
    unlink(path);
    return ok;
}

static int sc_init_topo(void)
{
    return init_fails("init.topo", 3, "STITCH_TOPO=[2,3", "STITCH_TOPO='[2,3': bad layout");
}

static int sc_init_segment(void)
{
    return init_fails("init.segment", 0, "STITCH_SEGMENT_BYTES=1", "STITCH_SEGMENT_BYTES='1'");
}

static const proc_scenario scenarios[] = {
    {"argerror", sc_argerror},
    {"init.algo_missing", sc_init_algo_missing},
    {"init.algo_malformed", sc_init_algo_malformed},
    {"init.algo_fifo", sc_init_algo_fifo},
    {"init.topo", sc_init_topo},
    {"init.segment", sc_init_segment},
};

int main(int argc, char **argv)
{
    (void)all_ok; /* procrun.h's, unused here */
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
