/* test_proc_p2p.c - stitch_send/stitch_recv and groups with ranks as processes, over shm and over tcp: the bodies
 * of the threads test (tests/runtime/p2p_body.h): ring exchange in both orders and every pair at once in a group,
 * with messages larger than the rings; a chain of blocking calls; a receive larger than its send; a group with an
 * unmatched receive (errors naming the ranks within the timeout, never a hang).
 *
 *   test_proc_p2p SCENARIO ...    ring, ring.tcp, all_pairs, all_pairs.tcp, chain, bigger_recv, unmatched, usage
 */
#include "procrun.h"
#include "p2p_body.h"

static int (*body)(stitch_comm_t *, char *, size_t);

static int rank_main(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    int rc = body(comm, why, sizeof why) != 0;
    if (rc)
        say(out, "%s\n", why);
    if (body == pb_unmatched && rank == 1) /* stay until rank 0 has timed out: an exit would abort it sooner */
        linger_wait(n - 1, 30);
    else if (body == pb_unmatched)
        linger_done();
    return rc;
}

static stitch_config_t cfg = STITCH_CONFIG_INIT;

static int run_body(int n, int (*fn)(stitch_comm_t *, char *, size_t), const char *transport, int timeout_ms,
                    const char *what)
{
    run r;
    body = fn;
    cfg.timeout_ms = timeout_ms;
    for (int i = 0; i < n; i++)
        config_of_rank[i] = &cfg;
    double t0 = now();
    linger_open();
    spawn(&r, n, rank_main, transport);
    reap(&r, DEADLINE_S);
    int ok = all_ok(&r, what);
    if (now() - t0 > 30)
        printf("# %s took %.1f s\n", what, now() - t0), ok = 0;
    return ok;
}

static int sc_ring(void) { return run_body(4, pb_ring, NULL, 60000, "ring"); }
static int sc_ring_tcp(void) { return run_body(3, pb_ring, "tcp", 60000, "ring.tcp"); }
static int sc_all_pairs(void) { return run_body(4, pb_all_pairs, NULL, 60000, "all_pairs"); }
static int sc_all_pairs_tcp(void) { return run_body(3, pb_all_pairs, "tcp", 60000, "all_pairs.tcp"); }
static int sc_chain(void) { return run_body(4, pb_chain, NULL, 60000, "chain"); }
static int sc_bigger_recv(void) { return run_body(3, pb_bigger_recv, NULL, 60000, "bigger_recv"); }
static int sc_unmatched(void) { return run_body(2, pb_unmatched, NULL, 1500, "unmatched"); }
static int sc_usage(void) { return run_body(3, pb_usage, NULL, 60000, "usage"); }

static const proc_scenario scenarios[] = {
    {"ring", sc_ring},   {"ring.tcp", sc_ring_tcp},
    {"all_pairs", sc_all_pairs}, {"all_pairs.tcp", sc_all_pairs_tcp},
    {"chain", sc_chain}, {"bigger_recv", sc_bigger_recv}, {"unmatched", sc_unmatched}, {"usage", sc_usage},
};

int main(int argc, char **argv)
{
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
