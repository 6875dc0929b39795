/* test_proc_stress.c - the threads stress's rooted streams (tests/runtime/rooted_stream.h) in process mode: ranks
 * as forked processes over shm, rotating and random roots, count-0 calls, tree algorithms, each rank napping at
 * random between calls so that it falls behind or runs ahead; every result exact, no error of any kind. Issue 18
 * item 1's false mismatch never showed in process mode (a message carries its call's fingerprint); this keeps it so.
 */
#include "procrun.h"
#include "rooted_stream.h"

static const stitch_coll_t rooted[] = {STITCH_SCATTER, STITCH_GATHER, STITCH_BROADCAST, STITCH_REDUCE};
static rs_stream stream;

static int body(stitch_comm_t *comm, int rank, int n, int out)
{
    char err[600] = "";
    int failed;
    (void)n;
    stitch_status_t st = rs_run_rank(&stream, comm, rank, err, sizeof err, &failed);
    if (st == STITCH_OK)
        return 0;
    say(out, "call %d: %s: %s\n", failed, stitch_strerror(st), err);
    return 1;
}

/* One run of the stream on p processes with `algo` (stitch_config_t.algo) on every rank. */
static int run_stream(int p, const char *algo, const stitch_coll_t *colls, int ncolls, int ncalls, uint64_t seed)
{
    static stitch_config_t cfg;
    run r;
    cfg = (stitch_config_t){0};
    cfg.algo = algo;
    cfg.timeout_ms = 60000;
    for (int i = 0; i < p; i++)
        config_of_rank[i] = &cfg;
    stream = (rs_stream){p, ncalls, seed, colls, ncolls};
    spawn(&r, p, body, NULL);
    double took = reap(&r, DEADLINE_S);
    printf("# %s on %d ranks: %d calls in %.2f s\n", algo, p, ncalls, took);
    return all_ok(&r, algo);
}

static int sc_scatter_mesh(void)
{
    return run_stream(3, "scatter=mesh", rooted, 1, 400, 1);
}

static int sc_mixed(void)
{
    return run_stream(4, "scatter=nhr,gather=mesh,broadcast=nb_binary,reduce=nhr_oneshot", rooted, 4, 300, 2) &&
           run_stream(5, "scatter=nb,gather=ring,broadcast=nhr,reduce=rhd", rooted, 4, 300, 3) &&
           run_stream(3, "scatter=mesh,gather=mesh,broadcast=mesh,reduce=mesh", rooted, 4, 300, 4);
}

int main(int argc, char **argv)
{
    static const proc_scenario sc[] = {{"scatter_mesh", sc_scatter_mesh}, {"mixed", sc_mixed}};
    return proc_main(sc, (int)(sizeof sc / sizeof *sc), argc, argv);
}
