/* test_wait.c - how thread-ranks wait (job.c): STITCH_SPIN_US reaches the threads engine, a wait that polls not
 * at all still completes every call, and each slot says the CPU its rank last posted from.
 *
 * Before issue 21 the threads engine ignored STITCH_SPIN_US (its waits were 400 pauses and 16 yields, then the
 * futex) and its slots had no CPU: these checks did not compile. The spin-0 run drives every wait into the
 * futex path at once, with ranks running calls ahead of each other, and checks every result.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "runner.h"
#include "comm.h"
#include "job.h"
#include "stitch.h"

enum { P = 4, CALLS = 300 };

static stitch_comm_t *comms[P];

static void init(void)
{
    char err[512] = "";
    stitch_status_t st = stitch_comm_init_threads(P, NULL, comms, err, sizeof err);
    CHECK(st == STITCH_OK, "stitch_comm_init_threads: %s", err);
}

static void fini(void)
{
    for (int r = 0; r < P; r++)
        stitch_comm_destroy(comms[r]);
}

static void test_spin_setting(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    init();
    long want = P > cores ? 1000000 : 500000;
    CHECK(comms[0]->job->spin_ns == want, "default spin %ld ns, expected %ld (%ld cores)", comms[0]->job->spin_ns,
          want, cores);
    fini();
    setenv("STITCH_SPIN_US", "123", 1);
    init();
    CHECK(comms[0]->job->spin_ns == 123000, "STITCH_SPIN_US=123: spin %ld ns", comms[0]->job->spin_ns);
    fini();
}

/* Every rank: CALLS 8-byte all_reduces, each checked, none synchronised otherwise. */
static void rank_calls(void *ctx, int r)
{
    (void)ctx;
    for (int i = 0; i < CALLS; i++) {
        float in[2] = {(float)(r + i), 1.0f}, out[2] = {0, 0};
        stitch_status_t st = stitch_all_reduce(in, out, 2, STITCH_FP32, STITCH_SUM, comms[r]);
        CHECK(st == STITCH_OK, "rank %d call %d: %s", r, i, stitch_comm_last_error(comms[r]));
        float want = (float)(P * i + P * (P - 1) / 2);
        CHECK(out[0] == want && out[1] == (float)P, "rank %d call %d: %g %g, expected %g %d", r, i, out[0], out[1],
              want, P);
    }
}

static void test_no_spin(void)
{
    setenv("STITCH_SPIN_US", "0", 1);
    init();
    CHECK(comms[0]->job->spin_ns == 0, "STITCH_SPIN_US=0: spin %ld ns", comms[0]->job->spin_ns);
    st_run_ranks(P, rank_calls, NULL);
    fini();
}

static void test_slot_cpu(void)
{
    init();
    for (int r = 0; r < P; r++)
        CHECK(atomic_load(&comms[0]->job->slots[r].cpu) == -1, "slot %d: cpu before any call", r);
    st_run_ranks(P, rank_calls, NULL);
    long cores = sysconf(_SC_NPROCESSORS_CONF);
    for (int r = 0; r < P; r++) {
        int cpu = atomic_load(&comms[0]->job->slots[r].cpu);
        CHECK(cpu >= 0 && cpu < cores, "slot %d: cpu %d after calls (%ld cpus)", r, cpu, cores);
    }
    fini();
}

int main(int argc, char **argv)
{
    static const st_test tests[] = {
        {"spin_setting", test_spin_setting, 60},
        {"no_spin", test_no_spin, 120},
        {"slot_cpu", test_slot_cpu, 120},
    };
    return st_run_tests(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
