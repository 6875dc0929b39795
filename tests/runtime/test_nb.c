/* test_nb.c - the non-blocking collectives on thread ranks (issue 23 item 3): 1,000 calls in flight on one
 * communicator with data checked in call order, test/wait/wait_all/free semantics, blocking and non-blocking calls
 * mixed, stitch_comm_abort failing every pending request with its message, a silent rank failing them by timeout,
 * bad input (NULL, forged, freed and reused handles; a NULL req; an argument error), destroy with requests
 * pending, and a device communicator's refusal. The process-mode twin is tests/proc/test_proc_nb.c; the bodies are
 * shared (nb_body.h).
 */
#include "runner.h"
#include "nb_body.h"

static void t_flight(void)
{
    for (int p = 1; p <= 5; p += 2)
        st_run_body(p, 60000, nb_flight);
    st_run_body(4, 60000, nb_flight);
}

static void t_mix(void)
{
    st_run_body(2, 60000, nb_mix);
    st_run_body(4, 60000, nb_mix);
}

static void t_semantics(void)
{
    st_run_body(2, 60000, nb_semantics);
    st_run_body(3, 60000, nb_semantics);
}

static void t_bad(void)
{
    st_run_body(3, 60000, nb_bad);
}

static void t_abort(void)
{
    st_run_body(4, 60000, nb_abort);
}

static void t_absent(void)
{
    double t0 = st_now();
    st_run_body(3, 1500, nb_absent);
    CHECK(st_now() - t0 < 30, "took %.1f s", st_now() - t0);
}

static void t_destroy(void)
{
    st_run_body(4, 60000, nb_destroy);
}

/* Device communicators (the host backend here) refuse non-blocking calls: theirs already return at once. */
static void t_device(void)
{
    stitch_comm_t *comms[2];
    stitch_request_t *req = (stitch_request_t *)&comms; /* must come back NULL */
    char err[512] = "";
    int32_t x = 1, y = 0;
    CHECK(stitch_comm_init_devices(2, "host", NULL, NULL, comms, err, sizeof err) == STITCH_OK, "init: %s", err);
    stitch_status_t st = stitch_iall_reduce(&x, &y, 1, STITCH_INT32, STITCH_SUM, comms[0], &req);
    CHECK(st == STITCH_ERR_UNSUPPORTED && req == NULL && strstr(stitch_comm_last_error(comms[0]), "device"),
          "%s: %s", stitch_strerror(st), stitch_comm_last_error(comms[0]));
    for (int r = 0; r < 2; r++)
        CHECK(stitch_comm_destroy(comms[r]) == STITCH_OK, "destroy %d", r);
}

static const st_test tests[] = {
    {"flight", t_flight, 240}, {"mix", t_mix, 120},       {"semantics", t_semantics, 60}, {"bad", t_bad, 60},
    {"abort", t_abort, 60},    {"absent", t_absent, 60}, {"destroy", t_destroy, 60},   {"device", t_device, 60},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
