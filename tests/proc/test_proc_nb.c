/* test_proc_nb.c - the non-blocking collectives with ranks as processes (each rank's calls run on its own progress
 * thread), over shm and tcp: the bodies of the threads test (tests/runtime/nb_body.h) - 1,000 calls in flight with
 * data checked in call order, test/wait/wait_all/free, blocking and non-blocking mixed, stitch_comm_abort and a
 * silent rank failing every pending request with their message, bad input, destroy with requests pending - and a
 * peer killed while the survivors' requests are pending: every one fails within the timeout, never a hang.
 *
 *   test_proc_nb SCENARIO ...    flight, flight.tcp, mix, mix.tcp, semantics, bad, abort, absent, killed, destroy
 */
#include "procrun.h"
#include "nb_body.h"

static int (*body)(stitch_comm_t *, char *, size_t);

/* The ranks that must outlive their peers' failure (the aborting rank, the silent one, the one whose argument
 * error aborts) stay until the others are done, so that the peers fail by the abort or the timeout, not by an exit. */
static int rank_main(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    int rc = body(comm, why, sizeof why) != 0;
    if (rc)
        say(out, "%s\n", why);
    int stays = (body == nb_abort || body == nb_absent) ? n - 1 : body == nb_bad ? 0 : -1;
    if (rank == stays)
        linger_wait(n - 1, 30);
    else if (stays >= 0)
        linger_done();
    return rc;
}

static int run_body(int n, int (*fn)(stitch_comm_t *, char *, size_t), const char *transport, int timeout_ms,
                    const char *what)
{
    body = fn;
    return run_timed(n, rank_main, transport, timeout_ms, what);
}

/* ---- a peer killed with requests pending ---------------------------------------------------------------- */

enum { KILL_DONE = 20, KILL_PENDING = 40, KILLED = 1 };

/* The victim completes the first KILL_DONE calls with its peers, then waits for each survivor's word on a
 * duplicate communicator (sent once the survivor's next KILL_PENDING requests are made) and dies. */
static int victim(stitch_comm_t *comm, stitch_comm_t *dup, nb_call *calls, int n, int out)
{
    stitch_request_t *reqs[KILL_DONE];
    for (int k = 0; k < KILL_DONE; k++)
        if (nb_issue(&calls[k], comm, &reqs[k]) != STITCH_OK)
            return say(out, "victim: call %d could not be made\n", k), 1;
    if (stitch_wait_all(KILL_DONE, reqs) != STITCH_OK)
        return say(out, "victim: %s\n", stitch_comm_last_error(comm)), 1;
    for (int q = 0; q < n; q++) {
        int32_t word;
        if (q != KILLED && stitch_recv(&word, 1, STITCH_INT32, q, dup) != STITCH_OK)
            return say(out, "victim: no word from rank %d: %s\n", q, stitch_comm_last_error(dup)), 1;
    }
    raise(SIGKILL);
    return 1;
}

static int survivor(stitch_comm_t *comm, stitch_comm_t *dup, nb_call *calls, int me, int n, int out)
{
    enum { N = KILL_DONE + KILL_PENDING };
    stitch_request_t *reqs[N];
    for (int k = 0; k < N; k++) {
        if (nb_issue(&calls[k], comm, &calls[k].req) != STITCH_OK)
            return say(out, "rank %d: call %d could not be made\n", me, k), 1;
        reqs[k] = calls[k].req;
        if (k == KILL_DONE - 1 && stitch_wait_all(KILL_DONE, reqs) != STITCH_OK)
            return say(out, "rank %d: before the kill: %s\n", me, stitch_comm_last_error(comm)), 1;
    }
    int32_t word = me;
    if (stitch_send(&word, 1, STITCH_INT32, KILLED, dup) != STITCH_OK)
        return say(out, "rank %d: word to the victim: %s\n", me, stitch_comm_last_error(dup)), 1;
    double t0 = now();
    stitch_status_t st = stitch_wait_all(N, reqs);
    double took = now() - t0;
    char why[512];
    for (int k = 0; k < KILL_DONE; k++)
        if (nb_check(&calls[k], me, n, why, sizeof why))
            return say(out, "%s\n", why), 1;
    for (int k = KILL_DONE; k < N; k++) {
        const char *msg = stitch_request_error(reqs[k]);
        if (stitch_wait(reqs[k]) == STITCH_OK || !strstr(msg, "rank 1"))
            return say(out, "rank %d: call %d after the kill: %s: '%s'\n", me, k, stitch_strerror(st), msg), 1;
    }
    if (took > 20)
        return say(out, "rank %d: the pending requests took %.1f s to fail\n", me, took), 1;
    say(out, "rank %d: %d pending requests failed %.2f s after the word: %s\n", me, KILL_PENDING, took,
        stitch_request_error(reqs[KILL_DONE]));
    return 0;
}

static int killed_main(stitch_comm_t *comm, int me, int n, int out)
{
    stitch_comm_t *dup = NULL;
    nb_call *calls = nb_calls(KILL_DONE + KILL_PENDING, me, n);
    if (!calls || stitch_comm_dup(comm, &dup) != STITCH_OK)
        return say(out, "rank %d: dup: %s\n", me, stitch_comm_last_error(comm)), 1;
    int rc = me == KILLED ? victim(comm, dup, calls, n, out) : survivor(comm, dup, calls, me, n, out);
    stitch_comm_destroy(dup);
    nb_free_calls(calls, KILL_DONE + KILL_PENDING);
    return rc;
}

static int sc_killed(void)
{
    run r;
    run_timed_cfg.timeout_ms = 2000;
    for (int i = 0; i < 3; i++)
        config_of_rank[i] = &run_timed_cfg;
    spawn(&r, 3, killed_main, NULL);
    reap(&r, DEADLINE_S);
    int ok = r.status[KILLED] == 128 + SIGKILL;
    for (int i = 0; i < 3; i++) {
        if (i != KILLED && r.status[i] != 0)
            ok = 0;
        printf("# killed: rank %d exited %d: %s", i, r.status[i], r.text[i][0] ? r.text[i] : "\n");
    }
    return ok;
}

static int sc_flight(void) { return run_body(4, nb_flight, NULL, 60000, "flight"); }
static int sc_flight_tcp(void) { return run_body(3, nb_flight, "tcp", 60000, "flight.tcp"); }
static int sc_mix(void) { return run_body(4, nb_mix, NULL, 60000, "mix"); }
static int sc_mix_tcp(void) { return run_body(3, nb_mix, "tcp", 60000, "mix.tcp"); }
static int sc_semantics(void) { return run_body(3, nb_semantics, NULL, 60000, "semantics"); }
static int sc_bad(void) { return run_body(3, nb_bad, NULL, 60000, "bad"); }
static int sc_abort(void) { return run_body(4, nb_abort, NULL, 60000, "abort"); }
static int sc_absent(void) { return run_body(3, nb_absent, NULL, 1500, "absent"); }
static int sc_destroy(void) { return run_body(4, nb_destroy, NULL, 60000, "destroy"); }

static const proc_scenario scenarios[] = {
    {"flight", sc_flight}, {"flight.tcp", sc_flight_tcp}, {"mix", sc_mix},         {"mix.tcp", sc_mix_tcp},
    {"semantics", sc_semantics}, {"bad", sc_bad},         {"abort", sc_abort},     {"absent", sc_absent},
    {"killed", sc_killed}, {"destroy", sc_destroy},
};

int main(int argc, char **argv)
{
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
