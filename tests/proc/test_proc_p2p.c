/* test_proc_p2p.c - stitch_send/stitch_recv and groups with ranks as processes, over shm and over tcp: the bodies
 * of the threads test (tests/runtime/p2p_body.h): ring exchange in both orders and every pair at once in a group,
 * with messages larger than the rings; a chain of blocking calls; a receive larger than its send; a group with an
 * unmatched receive (errors naming the ranks within the timeout, never a hang).
 *
 * The same with stitch_isend/stitch_irecv (iring: 8 rounds in flight and a collective between them; istream: 400 rounds, four in flight at any
 * time, as one run that drops its done operations as it goes; ioverlap: an irecv
 * pending while its rank tells the sender to send; ibigger_recv, iunmatched, iusage; iahead: a rank done with a
 * collective sends point-to-point while its neighbour still waits in the collective).
 *
 *   test_proc_p2p SCENARIO ...    ring, ring.tcp, all_pairs, all_pairs.tcp, chain, bigger_recv, unmatched, usage,
 *                                 iring, iring.tcp, ioverlap, ibigger_recv, iunmatched, iusage, istream, istream.tcp,
 *                                 iahead, iahead.tcp
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
    int unmatched = body == pb_unmatched || body == pb_iunmatched;
    if (unmatched && rank == 1) /* stay until rank 0 has timed out: an exit would abort it sooner */
        linger_wait(n - 1, 30);
    else if (unmatched)
        linger_done();
    return rc;
}

static int run_body(int n, int (*fn)(stitch_comm_t *, char *, size_t), const char *transport, int timeout_ms,
                    const char *what)
{
    body = fn;
    return run_timed(n, rank_main, transport, timeout_ms, what);
}

static int sc_ring(void) { return run_body(4, pb_ring, NULL, 60000, "ring"); }
static int sc_ring_tcp(void) { return run_body(3, pb_ring, "tcp", 60000, "ring.tcp"); }
static int sc_all_pairs(void) { return run_body(4, pb_all_pairs, NULL, 60000, "all_pairs"); }
static int sc_all_pairs_tcp(void) { return run_body(3, pb_all_pairs, "tcp", 60000, "all_pairs.tcp"); }
static int sc_chain(void) { return run_body(4, pb_chain, NULL, 60000, "chain"); }
static int sc_bigger_recv(void) { return run_body(3, pb_bigger_recv, NULL, 60000, "bigger_recv"); }
static int sc_unmatched(void) { return run_body(2, pb_unmatched, NULL, 1500, "unmatched"); }
static int sc_usage(void) { return run_body(3, pb_usage, NULL, 60000, "usage"); }
static int sc_iring(void) { return run_body(4, pb_iring, NULL, 60000, "iring"); }
static int sc_iring_tcp(void) { return run_body(3, pb_iring, "tcp", 60000, "iring.tcp"); }
/* A waiting rank looks at the heads of its streams at every idle moment (STITCH_SPIN_US=0): pb_iahead. */
static int sc_iahead(const char *transport, const char *what)
{
    setenv("STITCH_SPIN_US", "0", 1);
    return run_body(4, pb_iahead, transport, 60000, what);
}
static int sc_iahead_shm(void) { return sc_iahead(NULL, "iahead"); }
static int sc_iahead_tcp(void) { return sc_iahead("tcp", "iahead.tcp"); }
static int sc_istream(void) { return run_body(3, pb_istream, NULL, 60000, "istream"); }
static int sc_istream_tcp(void) { return run_body(2, pb_istream, "tcp", 60000, "istream.tcp"); }
static int sc_ioverlap(void) { return run_body(3, pb_ioverlap, NULL, 60000, "ioverlap"); }
static int sc_ibigger_recv(void) { return run_body(3, pb_ibigger_recv, NULL, 60000, "ibigger_recv"); }
static int sc_iunmatched(void) { return run_body(2, pb_iunmatched, NULL, 1500, "iunmatched"); }
static int sc_iusage(void) { return run_body(3, pb_iusage, NULL, 60000, "iusage"); }

static const proc_scenario scenarios[] = {
    {"ring", sc_ring},   {"ring.tcp", sc_ring_tcp},
    {"all_pairs", sc_all_pairs}, {"all_pairs.tcp", sc_all_pairs_tcp},
    {"chain", sc_chain}, {"bigger_recv", sc_bigger_recv}, {"unmatched", sc_unmatched}, {"usage", sc_usage},
    {"iring", sc_iring}, {"iring.tcp", sc_iring_tcp}, {"ioverlap", sc_ioverlap}, {"ibigger_recv", sc_ibigger_recv},
    {"iunmatched", sc_iunmatched}, {"iusage", sc_iusage}, {"istream", sc_istream}, {"istream.tcp", sc_istream_tcp},
    {"iahead", sc_iahead_shm}, {"iahead.tcp", sc_iahead_tcp},
};

int main(int argc, char **argv)
{
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
