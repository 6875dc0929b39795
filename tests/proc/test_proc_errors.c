/* test_proc_errors.c - how process-mode calls fail when one rank is wrong (ranks are forked processes).
 *
 *   test_proc_errors [scenario ...]      scenarios: argerror (default: all)
 *
 * argerror: rank 1 of 3 calls all_reduce with a NULL sendbuf while the others wait inside the call with a 20 s
 * timeout. The argument error aborts the communicator over the control channels, so the others return
 * STITCH_ERR_ABORTED within a second with rank 1's message, not after the timeout. Prints TAP.
 */
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

static const proc_scenario scenarios[] = {
    {"argerror", sc_argerror},
};

int main(int argc, char **argv)
{
    (void)all_ok; /* procrun.h's, unused here */
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
