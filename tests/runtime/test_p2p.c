/* test_p2p.c - stitch_send/stitch_recv, groups and stitch_isend/stitch_irecv on thread ranks: ring exchange in both
 * orders and every pair at once in a group (no deadlock, data checked), a chain of blocking calls, a receive larger
 * than its send and a group with an unmatched receive (errors naming the ranks, within the timeout), and the
 * group's usage rules; the same with isend/irecv (8 rounds in flight, a collective between them; a stream of 400 rounds four deep), and overlap: an
 * irecv pending while its rank runs on and tells the sender to send.
 * The process-mode twin is tests/proc/test_proc_p2p.c; the bodies are shared (p2p_body.h).
 */
#include "runner.h"
#include "p2p_body.h"

static void t_ring(void)
{
    for (int p = 1; p <= 5; p++)
        st_run_body(p, 60000, pb_ring);
}

static void t_all_pairs(void)
{
    st_run_body(1, 60000, pb_all_pairs);
    st_run_body(4, 60000, pb_all_pairs);
    st_run_body(7, 60000, pb_all_pairs);
}

static void t_chain(void)
{
    st_run_body(5, 60000, pb_chain);
}

static void t_bigger_recv(void)
{
    st_run_body(3, 60000, pb_bigger_recv);
}

static void t_unmatched(void)
{
    double t0 = st_now();
    st_run_body(2, 1500, pb_unmatched);
    CHECK(st_now() - t0 < 30, "took %.1f s", st_now() - t0);
}

static void t_usage(void)
{
    st_run_body(3, 60000, pb_usage);
}

static void t_iring(void)
{
    for (int p = 2; p <= 5; p++)
        st_run_body(p, 60000, pb_iring);
}

static void t_istream(void)
{
    st_run_body(2, 60000, pb_istream);
    st_run_body(3, 60000, pb_istream);
}

static void t_ioverlap(void)
{
    st_run_body(2, 60000, pb_ioverlap);
    st_run_body(3, 60000, pb_ioverlap);
}

static void t_ibigger_recv(void)
{
    st_run_body(3, 60000, pb_ibigger_recv);
}

static void t_iunmatched(void)
{
    double t0 = st_now();
    st_run_body(2, 1500, pb_iunmatched);
    CHECK(st_now() - t0 < 30, "took %.1f s", st_now() - t0);
}

static void t_iusage(void)
{
    st_run_body(3, 60000, pb_iusage);
}

static const st_test tests[] = {
    {"ring", t_ring, 120},           {"all_pairs", t_all_pairs, 120}, {"chain", t_chain, 60},
    {"bigger_recv", t_bigger_recv, 60}, {"unmatched", t_unmatched, 60}, {"usage", t_usage, 60},
    {"iring", t_iring, 120},         {"ioverlap", t_ioverlap, 60},    {"ibigger_recv", t_ibigger_recv, 60},
    {"iunmatched", t_iunmatched, 60}, {"iusage", t_iusage, 60},
    {"istream", t_istream, 120},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
