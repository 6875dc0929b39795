/* test_p2p.c - stitch_send/stitch_recv and groups on thread ranks: ring exchange in both orders and every pair at
 * once in a group (no deadlock, data checked), a chain of blocking calls, a receive larger than its send and a
 * group with an unmatched receive (errors naming the ranks, within the timeout), and the group's usage rules.
 * The process-mode twin is tests/proc/test_proc_p2p.c; the bodies are shared (p2p_body.h).
 */
#include "runner.h"
#include "p2p_body.h"

typedef struct ctx {
    stitch_comm_t **comms;
    int (*body)(stitch_comm_t *comm, char *why, size_t len);
    char why[64][512];
    int rc[64];
} ctx;

static void rank_main(void *arg, int r)
{
    ctx *c = arg;
    c->rc[r] = c->body(c->comms[r], c->why[r], sizeof c->why[r]);
}

static void run_body(int p, int timeout_ms, int (*body)(stitch_comm_t *, char *, size_t))
{
    static ctx c;
    stitch_comm_t *comms[64];
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[1024] = "";
    cfg.timeout_ms = timeout_ms;
    CHECK(stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK, "init: %s", err);
    c.comms = comms, c.body = body;
    memset(c.rc, 0, sizeof c.rc);
    st_run_ranks(p, rank_main, &c);
    for (int r = 0; r < p; r++) {
        CHECK(c.rc[r] == 0, "p %d rank %d: %s", p, r, c.why[r]);
        stitch_comm_destroy(comms[r]);
    }
}

static void t_ring(void)
{
    for (int p = 1; p <= 5; p++)
        run_body(p, 60000, pb_ring);
}

static void t_all_pairs(void)
{
    run_body(1, 60000, pb_all_pairs);
    run_body(4, 60000, pb_all_pairs);
    run_body(7, 60000, pb_all_pairs);
}

static void t_chain(void)
{
    run_body(5, 60000, pb_chain);
}

static void t_bigger_recv(void)
{
    run_body(3, 60000, pb_bigger_recv);
}

static void t_unmatched(void)
{
    double t0 = st_now();
    run_body(2, 1500, pb_unmatched);
    CHECK(st_now() - t0 < 30, "took %.1f s", st_now() - t0);
}

static void t_usage(void)
{
    run_body(3, 60000, pb_usage);
}

static const st_test tests[] = {
    {"ring", t_ring, 120},           {"all_pairs", t_all_pairs, 120}, {"chain", t_chain, 60},
    {"bigger_recv", t_bigger_recv, 60}, {"unmatched", t_unmatched, 60}, {"usage", t_usage, 60},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
