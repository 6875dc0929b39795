/* test_verbs_select.c - when the verbs transport is chosen, and what is said when it cannot be (no fake, no device):
 *
 *   select   st_tp_select on tables of two hosts: both ranks offering the same link layer get verbs under auto,
 *            one without a device or with another link layer gets tcp, one host gets shm; a forced verbs that
 *            cannot connect names the pair and the reason
 *   nolib    STITCH_IBVERBS_LIB=/nonexistent: the probe finds no verbs and says why (the path, dlopen's words),
 *            under STITCH_DEBUG once per process however often it is asked; the table of verbs functions is NULL
 *   forced   2 forked ranks with STITCH_TRANSPORT=verbs and no library: init fails on every rank, naming
 *            STITCH_TRANSPORT=verbs, the pair and why; with STITCH_IB_DEV naming no device (the library present or
 *            not) likewise; and under auto the same job runs (shm on one host) with the library missing
 *
 * Prints TAP (procrun.h's proc_main).
 */
#define _GNU_SOURCE
#include "../proc/procrun.h"

#include <fcntl.h>

#include "config.h"
#include "tp_verbs.h"
#include "transport.h"
#include "verbs.h"

static int fails(const char *what, const char *got)
{
    printf("# %s: %s\n", what, got);
    return 1;
}

/* ---- select ------------------------------------------------------------------------------------------------ */

static int sc_select(void)
{
    st_peer_info p[2];
    char err[600];
    int bad = 0, v = st_tp_find("verbs"), tcp = st_tp_find("tcp"), shm = st_tp_find("shm");
    if (v < 0)
        return fails("select", "no verbs entry in the table of this build");
    static const struct {
        int host0, host1, v0, v1, force, want; /* want: 0 shm, 1 verbs, 2 tcp, -1 error */
    } cases[] = {
        {1, 2, ST_VERBS_ETH, ST_VERBS_ETH, -1, 1}, {1, 2, ST_VERBS_IB, ST_VERBS_IB, -1, 1},
        {1, 2, ST_VERBS_ETH, ST_VERBS_NONE, -1, 2}, {1, 2, ST_VERBS_NONE, ST_VERBS_ETH, -1, 2},
        {1, 2, ST_VERBS_ETH, ST_VERBS_IB, -1, 2}, {1, 1, ST_VERBS_ETH, ST_VERBS_ETH, -1, 0},
        {1, 1, ST_VERBS_ETH, ST_VERBS_ETH, 1, 1}, {1, 2, ST_VERBS_NONE, ST_VERBS_NONE, 1, -1},
        {1, 2, ST_VERBS_ETH, ST_VERBS_NONE, 1, -1}, {1, 2, ST_VERBS_NONE, ST_VERBS_NONE, -1, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memset(p, 0, sizeof p);
        p[0].host = (uint64_t)cases[i].host0, p[1].host = (uint64_t)cases[i].host1;
        p[0].verbs = (uint8_t)cases[i].v0, p[1].verbs = (uint8_t)cases[i].v1;
        p[0].pid = 100, p[1].pid = 101;
        snprintf(p[0].hostname, sizeof p[0].hostname, "a");
        snprintf(p[1].hostname, sizeof p[1].hostname, "%s", cases[i].host0 == cases[i].host1 ? "a" : "b");
        int force = cases[i].force == 1 ? v : ST_TP_AUTO;
        int want = cases[i].want == 0 ? shm : cases[i].want == 1 ? v : cases[i].want == 2 ? tcp : -1;
        for (int me = 0; me < 2; me++) { /* both ends decide alike */
            err[0] = '\0';
            int got = st_tp_select(p, me, 1 - me, force, err, sizeof err);
            if (got != want) {
                printf("# select case %zu from rank %d: got entry %d, want %d (%s)\n", i, me, got, want, err);
                bad = 1;
            }
            if (want < 0 && (!strstr(err, "STITCH_TRANSPORT=verbs cannot connect rank") ||
                             !strstr(err, "no usable RDMA device"))) {
                printf("# select case %zu: the error does not say which pair and why: %s\n", i, err);
                bad = 1;
            }
        }
    }
    return bad;
}

/* ---- nolib ------------------------------------------------------------------------------------------------- */

static int sc_nolib(void)
{
    char why[400] = "", log[4096] = "";
    st_settings s;
    setenv("STITCH_IBVERBS_LIB", "/nonexistent/libibverbs.so.1", 1);
    setenv("STITCH_DEBUG", "1", 1);
    if (st_settings_load(NULL, &s, why, sizeof why) != STITCH_OK)
        return fails("nolib: settings", why);
    fflush(stderr);
    int saved = dup(2), fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    if (fd < 0 || saved < 0)
        return fails("nolib", "no temporary file");
    dup2(fd, 2);
    int a = st_tp_verbs_probe(&s, why, sizeof why), b = st_tp_verbs_probe(&s, why, sizeof why);
    const st_verbs_api *api = st_verbs_get(NULL, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, log, sizeof log - 1, 0);
    close(fd);
    log[n > 0 ? n : 0] = '\0';
    unsetenv("STITCH_DEBUG");
    int bad = 0;
    if (a != ST_VERBS_NONE || b != ST_VERBS_NONE || api)
        bad = fails("nolib", "verbs was found through a library that does not exist");
    if (!strstr(why, "/nonexistent/libibverbs.so.1") || !strstr(why, "verbs unavailable"))
        bad = fails("nolib: the reason does not name the library", why);
    const char *first = strstr(log, "no verbs transport");
    if (!first || strstr(first + 1, "no verbs transport") || !strstr(log, "uses tcp"))
        bad = fails("nolib: STITCH_DEBUG should say why exactly once, and that tcp is used", log);
    return bad;
}

/* ---- forced ------------------------------------------------------------------------------------------------ */

static int body_one_call(stitch_comm_t *comm, int rank, int n, int out)
{
    int32_t v = rank + 1, sum = 0;
    stitch_status_t st = stitch_all_reduce(&v, &sum, 1, STITCH_INT32, STITCH_SUM, comm);
    if (st != STITCH_OK || sum != n * (n + 1) / 2) {
        say(out, "all_reduce: %s %d\n", stitch_strerror(st), sum);
        return 1;
    }
    return 0;
}

/* Run 2 ranks under the environment given; each must fail at init with all of `needles`, or succeed (NULL). */
static int forced_case(const char *transport, const char *lib, const char *dev, const char *const *needles)
{
    run r;
    if (lib)
        setenv("STITCH_IBVERBS_LIB", lib, 1);
    else
        unsetenv("STITCH_IBVERBS_LIB");
    if (dev)
        setenv("STITCH_IB_DEV", dev, 1);
    else
        unsetenv("STITCH_IB_DEV");
    spawn(&r, 2, body_one_call, transport);
    reap(&r, DEADLINE_S);
    unsetenv("STITCH_IBVERBS_LIB"), unsetenv("STITCH_IB_DEV");
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        if (!needles) {
            if (r.status[i] != 0)
                bad = 1, printf("# auto, lib %s: rank %d exited %d: %s\n", lib ? lib : "default", i, r.status[i],
                                r.text[i]);
            continue;
        }
        if (r.status[i] != 2)
            bad = 1, printf("# %s, lib %s, dev %s: rank %d exited %d, not at init: %s\n", transport,
                            lib ? lib : "default", dev ? dev : "any", i, r.status[i], r.text[i]);
        for (int k = 0; needles[k]; k++)
            if (!strstr(r.text[i], needles[k]))
                bad = 1, printf("# rank %d's error lacks '%s': %s\n", i, needles[k], r.text[i]);
    }
    return bad;
}

static int sc_forced(void)
{
    static const char *const nolib[] = {"STITCH_TRANSPORT=verbs cannot connect rank", "no usable RDMA device",
                                        "/nonexistent/libibverbs.so.1", NULL};
    /* with a device present the reason names STITCH_IB_DEV; without one, that there is none */
    static const char *const nodev[] = {"STITCH_TRANSPORT=verbs cannot connect rank", "no usable RDMA device", NULL};
    int bad = forced_case("verbs", "/nonexistent/libibverbs.so.1", NULL, nolib);
    bad |= forced_case("verbs", NULL, "no_such_dev0", nodev);
    bad |= forced_case(NULL, "/nonexistent/libibverbs.so.1", NULL, NULL);
    return bad;
}

/* proc_main wants 1 for a pass; the scenarios above count failures. */
static int ok_select(void) { return !sc_select(); }
static int ok_nolib(void) { return !sc_nolib(); }
static int ok_forced(void) { return !sc_forced(); }

int main(int argc, char **argv)
{
    (void)all_ok; /* procrun.h's, unused here */
    static const proc_scenario scenarios[] = {{"select", ok_select}, {"nolib", ok_nolib}, {"forced", ok_forced}};
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
