/* test_proc_split.c - stitch_comm_split, stitch_comm_dup and stitch_barrier with ranks as processes: each child
 * bootstraps a job of its own among its members over the parent's transports (shm, or tcp when forced), and the
 * bodies of the threads test (tests/runtime/split_body.h) check sizes, ranks and data, nested splits, the parent's
 * inherited choice, and a rank that calls something else or nothing (an error naming it within the timeout).
 *
 *   test_proc_split SCENARIO ...    nested, nested.tcp, inherit, mismatch, absent
 */
#include "procrun.h"
#include "split_body.h"

static int nested_rank(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    (void)rank, (void)n;
    if (sb_split_nested(comm, why, sizeof why) != 0) {
        say(out, "%s\n", why);
        return 1;
    }
    return 0;
}

static int inherit_rank(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    (void)rank, (void)n;
    if (sb_inherits_choice(comm, why, sizeof why) != 0) {
        say(out, "%s\n", why);
        return 1;
    }
    return 0;
}

static int absent_flag;

static int mismatch_rank(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    int rc = sb_mismatch(comm, 2, absent_flag, why, sizeof why) != 0;
    if (rc)
        say(out, "%s\n", why);
    if (rank == 2 && absent_flag) /* stay alive without calling, as a rank busy elsewhere would, until the others failed */
        linger_wait(n - 1, 30);
    else if (absent_flag)
        linger_done();
    return rc;
}

static int run_scenario(int n, rank_fn fn, const char *transport, const char *what)
{
    run r;
    spawn(&r, n, fn, transport);
    reap(&r, DEADLINE_S);
    return all_ok(&r, what);
}

static int sc_nested(void)
{
    return run_scenario(5, nested_rank, NULL, "nested");
}

static int sc_nested_tcp(void)
{
    return run_scenario(5, nested_rank, "tcp", "nested.tcp");
}

static int sc_inherit(void)
{
    return run_scenario(3, inherit_rank, NULL, "inherit");
}

static stitch_config_t short_timeout = STITCH_CONFIG_INIT;

static int mismatch_run(int absent, const char *what)
{
    short_timeout.timeout_ms = 1500;
    for (int i = 0; i < 4; i++)
        config_of_rank[i] = &short_timeout;
    absent_flag = absent;
    linger_open();
    double t0 = now();
    int ok = run_scenario(4, mismatch_rank, NULL, what);
    for (int i = 0; i < 4; i++)
        config_of_rank[i] = NULL;
    if (now() - t0 > 30)
        printf("# %s took %.1f s\n", what, now() - t0), ok = 0;
    return ok;
}

static int sc_mismatch(void)
{
    return mismatch_run(0, "mismatch");
}

static int sc_absent(void)
{
    return mismatch_run(1, "absent");
}

static const proc_scenario scenarios[] = {
    {"nested", sc_nested}, {"nested.tcp", sc_nested_tcp}, {"inherit", sc_inherit},
    {"mismatch", sc_mismatch}, {"absent", sc_absent},
};

int main(int argc, char **argv)
{
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
