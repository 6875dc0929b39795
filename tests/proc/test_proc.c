/* test_proc.c - process-mode communicators: ranks are forked processes of this test, joined by a unique id.
 *
 *   test_proc [scenario ...]      scenarios: shm tcp odd kill mismatch abort groups topo topo_once shmleak stall
 *                                 stall.tcp
 *                                 shmleak.long stall.long (default: all but the .long ones)
 *
 * Every scenario forks its ranks, bounds the whole run with a deadline (children that outlive it are killed
 * and the scenario fails), and checks exit codes and the error text each rank reports through a pipe. The
 * checks are exact values (sums of small integers), so any reduction order gives the same result. Prints TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "procrun.h"
#include "st_topofile.h"
#include "stitch.h"
#include "topology.h"

/* ---- rank bodies ------------------------------------------------------------------------------------------ */

static int check_coll(stitch_comm_t *comm, int rank, int n, int out, stitch_coll_t coll, size_t count)
{
    size_t total = coll == STITCH_ALL_REDUCE ? count : count * (size_t)n;
    float *in = malloc(sizeof(float) * total), *res = malloc(sizeof(float) * total);
    stitch_status_t st;
    for (size_t i = 0; i < total; i++)
        in[i] = (float)((i * 7 + (size_t)rank * 3) % 64), res[i] = -1;
    if (coll == STITCH_ALL_REDUCE)
        st = stitch_all_reduce(in, res, count, STITCH_FP32, STITCH_SUM, comm);
    else if (coll == STITCH_REDUCE_SCATTER)
        st = stitch_reduce_scatter(in, res, count, STITCH_FP32, STITCH_SUM, comm);
    else
        st = stitch_all_gather(in, res, count, STITCH_FP32, comm);
    int bad = 0;
    if (st != STITCH_OK) {
        say(out, "%s count %zu: %s: %s\n", stitch_coll_name(coll), count, stitch_strerror(st),
            stitch_comm_last_error(comm));
        bad = 1;
    }
    size_t nout = coll == STITCH_REDUCE_SCATTER ? count : total;
    for (size_t i = 0; !bad && i < nout; i++) {
        double want = 0;
        if (coll == STITCH_ALL_GATHER) {
            size_t q = i / count, j = i % count;
            want = (double)((j * 7 + q * 3) % 64);
        } else {
            size_t g = coll == STITCH_REDUCE_SCATTER ? (size_t)rank * count + i : i;
            for (int q = 0; q < n; q++)
                want += (double)((g * 7 + (size_t)q * 3) % 64);
        }
        if (res[i] != (float)want) {
            say(out, "%s count %zu: element %zu is %g, expected %g\n", stitch_coll_name(coll), count, i, res[i], want);
            bad = 1;
        }
    }
    free(in);
    free(res);
    return bad;
}

static int body_data(stitch_comm_t *comm, int rank, int n, int out)
{
    static const size_t counts[] = {1, 2, 7, 1000, 65536, 3 << 20};
    int bad = 0;
    for (size_t c = 0; c < sizeof counts / sizeof *counts && !bad; c++)
        for (int coll = 0; coll < 3 && !bad; coll++)
            bad = check_coll(comm, rank, n, out, (stitch_coll_t)coll, counts[c]);
    if (!bad && stitch_comm_set_algorithm(comm, STITCH_ALL_REDUCE, "rhd") == STITCH_OK)
        bad = check_coll(comm, rank, n, out, STITCH_ALL_REDUCE, 100003);
    return bad;
}

static int body_long(stitch_comm_t *comm, int rank, int n, int out)
{
    size_t count = 4 << 20;
    float *buf = calloc(count, sizeof *buf);
    (void)n;
    for (int i = 0; i < 100000; i++) {
        stitch_status_t st = stitch_all_reduce(buf, buf, count, STITCH_FP32, STITCH_SUM, comm);
        if (st != STITCH_OK) {
            say(out, "rank %d: %s: %s\n", rank, stitch_strerror(st), stitch_comm_last_error(comm));
            free(buf);
            return 3;
        }
        if (i == 0) /* init is done and every rank is in the loop */
            say(out, "ready\n");
    }
    free(buf);
    return 0;
}

static int body_mismatch(stitch_comm_t *comm, int rank, int n, int out)
{
    size_t count = rank == 1 ? 2000 : 1000;
    float *buf = calloc(count, sizeof *buf);
    (void)n;
    stitch_status_t st = stitch_all_reduce(buf, buf, count, STITCH_FP32, STITCH_SUM, comm);
    free(buf);
    if (st == STITCH_OK)
        return 0;
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return 3;
}

static int body_abort(stitch_comm_t *comm, int rank, int n, int out)
{
    float x = 1;
    (void)n;
    if (rank == 0) {
        stitch_comm_abort(comm);
        return 3;
    }
    stitch_status_t st = stitch_all_reduce(&x, &x, 1, STITCH_FP32, STITCH_SUM, comm);
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : 3;
}

/* ---- scenarios -------------------------------------------------------------------------------------------- */

/* The run's segments left in /dev/shm: "stitch-<key>-<rank 0's pid>-<rank>" (proc.c). Only this run's count:
 * other jobs on the machine (other test runs) may hold segments of their own at this moment. */
static int shm_leftovers(const run *r)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    char mine[32];
    int n = 0;
    snprintf(mine, sizeof mine, "-%d-", (int)r->rank0);
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "stitch-", 7) == 0 && strstr(e->d_name, mine) != NULL;
    if (d)
        closedir(d);
    return n;
}

static int sc_data(int n, const char *transport)
{
    run r;
    spawn(&r, n, body_data, transport);
    reap(&r, DEADLINE_S);
    int left = shm_leftovers(&r);
    if (left)
        printf("# %s: %d shm segments of this run left in /dev/shm\n", transport ? transport : "auto", left);
    return all_ok(&r, transport) && left == 0;
}

static int sc_shm(void) { return sc_data(4, "shm"); }
static int sc_tcp(void) { return sc_data(3, "tcp"); }
static int sc_odd(void) { return sc_data(5, NULL); }

/* Process mode honours STITCH_GROUPS (pipeline on 2 groups of 2 consecutive ranks, data checked), and ranks given
 * different groups fail init, every one, naming the disagreement instead of running different schedules. */
static int body_pipeline(stitch_comm_t *comm, int rank, int n, int out)
{
    int sizes[4], ng = stitch_comm_groups(comm, sizes, 4), bad = ng != 2 || sizes[0] != 2 || sizes[1] != 2;
    if (bad)
        say(out, "rank %d: stitch_comm_groups gave %d groups\n", rank, ng);
    if (!bad && stitch_comm_set_algorithm(comm, STITCH_COLL_COUNT, "pipeline") != STITCH_OK)
        bad = 1, say(out, "rank %d: %s\n", rank, stitch_comm_last_error(comm));
    for (int coll = 0; coll < 3 && !bad; coll++)
        bad = check_coll(comm, rank, n, out, (stitch_coll_t)coll, 1000);
    return bad;
}

static int sc_groups(void)
{
    run r;
    int ok = 1, named = 0;
    for (int i = 0; i < 4; i++)
        groups_of_rank[i] = "2x2";
    spawn(&r, 4, body_pipeline, NULL);
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "groups 2x2");
    groups_of_rank[3] = "1,3";
    setenv("STITCH_TIMEOUT", "10", 1);
    spawn(&r, 4, body_pipeline, NULL);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    for (int i = 0; i < 4; i++) {
        groups_of_rank[i] = NULL;
        named += r.status[i] == 2 && strstr(r.text[i], "ranks disagree on the groups") != NULL &&
                 strstr(r.text[i], i == 3 ? "rank 3 has groups from STITCH_GROUPS='1,3'" : "but rank 3 has groups "
                                            "from a different STITCH_GROUPS") != NULL;
    }
    printf("# groups: 2x2 on every rank %s; 1,3 on rank 3: %d of 4 ranks failed init naming it; rank 0 said: %s",
           ok ? "passed" : "failed", named, r.text[0]);
    return ok && named == 4;
}

/* ---- topologies (STITCH_TOPO, config->topo): placed in rank order, or by this host's name ------------------- */

#ifndef STITCH_SOURCE_DIR
#error "STITCH_SOURCE_DIR must name the source tree"
#endif

/* Each rank's levels as "2,3|5", checked against `want`; then every collective of `colls` with data. */
static const char *topo_want;
static const char *topo_algo;
static rank_fn topo_body; /* topo_run's ranks' body: body_topo when NULL */

static int body_topo(stitch_comm_t *comm, int rank, int n, int out)
{
    char got[128] = "";
    size_t o = 0;
    int sizes[16], bad = 0;
    for (int k = 0; k < stitch_comm_levels(comm); k++) {
        int ng = stitch_comm_level_groups(comm, k, sizes, 16);
        for (int g = 0; g < ng; g++)
            o += (size_t)snprintf(got + o, sizeof got - o, "%s%d", g ? "," : k ? "|" : "", sizes[g]);
    }
    if (strcmp(got, topo_want) != 0)
        say(out, "rank %d: levels %s, want %s\n", rank, got, topo_want), bad = 1;
    if (!bad && topo_algo && stitch_comm_set_algorithm(comm, STITCH_COLL_COUNT, topo_algo) != STITCH_OK)
        bad = 1, say(out, "rank %d: %s\n", rank, stitch_comm_last_error(comm));
    for (int coll = 0; coll < 3 && !bad; coll++)
        bad = check_coll(comm, rank, n, out, (stitch_coll_t)coll, 1000);
    return bad;
}

/* A topology file in /tmp with the given layout; its path is returned in `path` (the caller unlinks it). */
static void topo_file(char *path, size_t len, const char *layout)
{
    char text[512];
    snprintf(path, len, "/tmp/stitch_proc_topo_XXXXXX");
    int fd = mkstemp(path);
    int n = snprintf(text, sizeof text, "name: proc-test\nlevels:\n  - {name: server, bandwidth: 10 GB/s, latency: 1 us}\n"
                     "  - {name: cluster, bandwidth: 1 GB/s, latency: 10 us}\nlayout: ");
    n += snprintf(text + n, sizeof text - (size_t)n, "%s\n", layout);
    if (fd < 0 || write(fd, text, (size_t)n) != n)
        perror("topology file"), exit(1);
    close(fd);
}

/* Runs n ranks with config->topo = topo on every rank (rank `odd` gets `other`) and counts the ranks that failed
 * init with a message containing `want` (NULL: that all passed). */
static int topo_run(int n, const char *topo, int odd, const char *other, const char *want, const char *what)
{
    static stitch_config_t cfg[MAXR];
    run r;
    for (int i = 0; i < n; i++) {
        cfg[i] = (stitch_config_t)STITCH_CONFIG_INIT;
        cfg[i].topo = i == odd ? other : topo;
        config_of_rank[i] = &cfg[i];
    }
    if (want)
        setenv("STITCH_TIMEOUT", "10", 1);
    spawn(&r, n, topo_body ? topo_body : body_topo, NULL);
    reap(&r, want ? 20 : DEADLINE_S);
    unsetenv("STITCH_TIMEOUT");
    int named = 0;
    for (int i = 0; i < n; i++) {
        config_of_rank[i] = NULL;
        named += want && r.status[i] == 2 && strstr(r.text[i], want) != NULL;
    }
    if (!want)
        return all_ok(&r, what);
    if (named != n)
        printf("# %s: %d of %d ranks failed init naming it; rank 0 said: %s", what, named, n, r.text[0]);
    return named == n;
}

static int sc_topo(void)
{
    char by_order[64], mine[64], two_hosts[64], want[256], host[64] = "", layout[256];
    int ok = 1;
    gethostname(host, sizeof host - 1);
    topo_file(by_order, sizeof by_order, "[2, 3]");
    snprintf(layout, sizeof layout, "[{host: %s, ranks: 4}]", host);
    topo_file(mine, sizeof mine, layout);
    snprintf(layout, sizeof layout, "[{host: %s, ranks: 2}, {host: stitch-no-such-host, ranks: 2}]", host);
    topo_file(two_hosts, sizeof two_hosts, layout);
    /* 5 ranks in rank order, 2 + 3 (no hosts named); any algorithm, data checked */
    topo_want = "2,3|5", topo_algo = NULL;
    ok &= topo_run(5, by_order, -1, NULL, NULL, "2+3 by rank order");
    /* every rank on this host, which the file names: one server of 4; pipeline (one server is uniform) */
    topo_want = "4|4", topo_algo = "pipeline";
    ok &= topo_run(4, mine, -1, NULL, NULL, "this host named");
    /* this host runs 4 ranks but the file gives it 2: every rank fails, naming the host and both counts */
    snprintf(want, sizeof want, "': host '%s' runs 4 ranks of the communicator but the topology gives it 2", host);
    ok &= topo_run(4, two_hosts, -1, NULL, want, "host count mismatch");
    /* the shipped 2 + 3 file names node01 and node02 */
    snprintf(want, sizeof want, "unequal-2-3.yaml': rank 0 runs on host '%s', which the topology does not name (its "
             "hosts: node01, node02)", host);
    ok &= topo_run(5, STITCH_SOURCE_DIR "/topologies/unequal-2-3.yaml", -1, NULL, want, "hosts not in the file");
    /* rank 3 gives another topology of 4 ranks: every rank fails, naming the disagreement */
    ok &= topo_run(4, "2,2", 3, "[2,2]", "ranks disagree on the groups: rank ", "different topologies");
    unlink(by_order), unlink(mine), unlink(two_hosts);
    printf("# topo: 2+3 in rank order, this host named, count mismatch, unknown hosts, disagreement: %s\n",
           ok ? "passed" : "failed");
    return ok;
}

/* One read per process: the rank read the file once into one value (its parent, this test, reads none), which
 * its dup shares (two references, nothing read again) and gives back when destroyed. */
static int body_topo_once(stitch_comm_t *comm, int rank, int n, int out)
{
    st_topology *t = comm->topology;
    stitch_comm_t *dup = NULL;
    if (st_topofile_loads() != 1 || st_topology_loads() != 1 || !t || st_topology_refs(t) != 1) {
        say(out, "rank %d: after init %lu file reads, %lu values, %d references (want 1, 1, 1)\n", rank,
            st_topofile_loads(), st_topology_loads(), st_topology_refs(t));
        return 1;
    }
    if (stitch_comm_dup(comm, &dup) != STITCH_OK) {
        say(out, "rank %d: dup: %s\n", rank, stitch_comm_last_error(comm));
        return 1;
    }
    int bad = dup->topology != t || st_topology_refs(t) != 2 || st_topofile_loads() != 1 || st_topology_loads() != 1;
    if (bad)
        say(out, "rank %d: the dup %s the value; %d references, %lu file reads, %lu values (want 2, 1, 1)\n", rank,
            dup->topology == t ? "shares" : "does not share", st_topology_refs(t), st_topofile_loads(),
            st_topology_loads());
    bad = bad || check_coll(dup, rank, n, out, STITCH_ALL_REDUCE, 1000);
    stitch_comm_destroy(dup);
    if (!bad && st_topology_refs(t) != 1) {
        say(out, "rank %d: %d references after the dup went, want 1\n", rank, st_topology_refs(t));
        bad = 1;
    }
    return bad;
}

/* Each process rank reads the topology once and its dup shares the value (body_topo_once); a malformed file fails
 * init on every rank with the loader's FILE:LINE:COL. */
static int sc_topo_once(void)
{
    char path[64];
    int ok = 1;
    topo_file(path, sizeof path, "[2, 3]");
    topo_want = "2,3|5", topo_algo = NULL, topo_body = body_topo_once;
    ok &= topo_run(5, path, -1, NULL, NULL, "read once, shared by the dup");
    topo_body = NULL;
    ok &= topo_run(4, STITCH_SOURCE_DIR "/tests/topo/t_bad.yaml", -1, NULL,
                   STITCH_SOURCE_DIR "/tests/topo/t_bad.yaml:4:13: error: a group must hold at least 1 rank",
                   "malformed file");
    unlink(path);
    printf("# topo_once: one read per rank, shared by its dup; a malformed file named with its line and column on "
           "every rank: %s\n", ok ? "passed" : "failed");
    return ok;
}

/* A rank killed in a loop of 16 MB all_reduces: the others fail at once naming it. Over tcp most of a call is
 * spent reading copied messages straight into place (exec_msg.c), where the death shows as the end of a stream. */
static int kill_over(const char *transport)
{
    run r;
    setenv("STITCH_TIMEOUT", "3", 1);
    spawn(&r, 4, body_long, transport);
    if (!await_ready(&r, -1, 60))
        printf("# kill: not every rank reached the loop\n");
    kill(r.pid[2], SIGKILL);
    double t0 = now();
    reap(&r, 10);
    double took = now() - t0;
    unsetenv("STITCH_TIMEOUT");
    int ok = took < 6.0 && shm_leftovers(&r) == 0;
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        int named = strstr(r.text[i], "rank 2") != NULL;
        if (r.status[i] != 3 || !named) {
            printf("# kill: rank %d exited %d (want 3) with '%s'\n", i, r.status[i], r.text[i]);
            ok = 0;
        }
    }
    printf("# kill: survivors done %.3f s after the kill; /dev/shm stitch entries: %d; rank 0 said: %s", took,
           shm_leftovers(&r), r.text[0]);
    return ok;
}

/* Over tcp, rank 1 expects rank 0's all_gather block of 400 KB, which it would read straight into place (its
 * header read exactly, exec_msg.c), after the hello of a call that may pull (exec_pull.c), and rank 0 sends it a
 * point-to-point message of that size instead: rank 1 names it from its header (the hello's check called it
 * malformed, an internal error, before the engines shared st_msg_foreign). Rank 0's send may complete (the kernel
 * holds the bytes) or fail with rank 1's abort, which it names. */
static int body_p2p_straight(stitch_comm_t *comm, int rank, int n, int out)
{
    size_t count = 100000;
    float *buf = calloc(count * (size_t)n, sizeof *buf);
    stitch_status_t st = !buf  ? STITCH_ERR_NO_MEMORY
                         : rank == 0 ? stitch_send(buf, count, STITCH_FP32, 1, comm)
                                     : stitch_all_gather(buf, buf + count, count, STITCH_FP32, comm);
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    free(buf);
    return st == STITCH_OK ? 0 : 3;
}

static int sc_p2p_straight(void)
{
    run r;
    double took = spawn_with_timeout(&r, 2, body_p2p_straight, "tcp", "10", 40);
    for (int i = 0; i < 2; i++)
        printf("# p2p.straight: rank %d exited %d: %s", i, r.status[i], r.text[i]);
    /* a failed send names rank 1's reason, which its abort frame carried before its streams closed (it said "tcp send
     * to rank 1 failed: Broken pipe" before p2p_msg.c looked at the control channel first) */
    int sender_ok = r.status[0] == 0 ||
                    (r.status[0] == 3 && strstr(r.text[0], "point-to-point message where rank 1 expects") != NULL);
    return took < 8 && sender_ok && r.status[1] == 3 &&
           strstr(r.text[1], "STITCH_ERR_MISMATCH") &&
           strstr(r.text[1], "rank 0 sent a point-to-point message where rank 1 expects") != NULL;
}

static int sc_kill(void) { return kill_over(NULL); }
static int sc_kill_tcp(void) { return kill_over("tcp"); }

static int sc_mismatch(void)
{
    run r;
    setenv("STITCH_TIMEOUT", "5", 1);
    spawn(&r, 3, body_mismatch, NULL);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    int ok = 1, named = 0;
    for (int i = 0; i < 3; i++) {
        ok &= r.status[i] == 3;
        named += strstr(r.text[i], "count 1000") && strstr(r.text[i], "count 2000");
        printf("# mismatch: rank %d exited %d: %s", i, r.status[i], r.text[i]);
    }
    return ok && named >= 2;
}

static int sc_abort(void)
{
    run r;
    setenv("STITCH_TIMEOUT", "5", 1);
    spawn(&r, 3, body_abort, NULL);
    double took = reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    int ok = took < 4;
    for (int i = 1; i < 3; i++) {
        ok &= r.status[i] == 3 && strstr(r.text[i], "abort") != NULL;
        printf("# abort: rank %d exited %d: %s", i, r.status[i], r.text[i]);
    }
    return ok;
}

/* ---- faults during setup: nothing may be left in /dev/shm ------------------------------------------------- */

/* A rank that got through setup makes one small call (it fails at once when a peer is dead) and ends. */
static int body_brief(stitch_comm_t *comm, int rank, int n, int out)
{
    float x = (float)rank;
    (void)n, (void)out;
    (void)stitch_all_reduce(&x, &x, 1, STITCH_FP32, STITCH_SUM, comm);
    return 0;
}

#define SHM_NAMES 256

/* The names in /dev/shm that start with "stitch", into names[] (at most SHM_NAMES). */
static int shm_list(char names[][64])
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) && n < SHM_NAMES)
        if (strncmp(e->d_name, "stitch", 6) == 0)
            snprintf(names[n++], 64, "%.63s", e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* Does `name` hold `pid` as a whole number (delimited by non-digits)? */
static int names_pid(const char *name, int pid)
{
    char want[16];
    int len = snprintf(want, sizeof want, "%d", pid);
    for (const char *p = strstr(name, want); p; p = strstr(p + 1, want))
        if ((p == name || p[-1] < '0' || p[-1] > '9') && (p[len] < '0' || p[len] > '9'))
            return 1;
    return 0;
}

/* The stitch names in /dev/shm now that were not in before[] and belong to this run: other jobs on the machine
 * (other test runs) may create and leave names of their own meanwhile, so only a name that holds the pid of one
 * of this run's ranks counts. Prints each one. */
static int shm_new(const run *r, const pid_t *pids, char before[][64], int nbefore)
{
    static char after[SHM_NAMES][64];
    int nafter = shm_list(after), leaked = 0;
    for (int i = 0; i < nafter; i++) {
        int old = 0, ours = 0;
        for (int j = 0; j < nbefore && !old; j++)
            old = strcmp(after[i], before[j]) == 0;
        for (int k = 0; k < r->n && !old && !ours; k++)
            ours = names_pid(after[i], (int)pids[k]);
        if (!old && ours) {
            printf("# left in /dev/shm: %s\n", after[i]);
            leaked++;
        }
    }
    return leaked;
}

/* One job of n ranks over shm, signalled `delay_us` after the last fork: SIGKILL to rank `victim`, or, when victim
 * is -1, SIGINT to every rank (a Ctrl-C reaches the whole foreground process group). The survivors see the death
 * and end (STITCH_TIMEOUT bounds what they wait for); whatever outlives 10 s is killed. Returns the run's new
 * /dev/shm names. */
static int setup_fault(int n, int victim, long delay_us, double *took)
{
    static char before[SHM_NAMES][64];
    pid_t pids[MAXR];
    run r;
    int nbefore = shm_list(before);
    spawn(&r, n, body_brief, "shm");
    memcpy(pids, r.pid, sizeof pids);
    usleep((useconds_t)delay_us);
    for (int i = 0; i < n; i++)
        if (victim < 0 || i == victim)
            kill(r.pid[i], victim < 0 ? SIGINT : SIGKILL);
    *took = reap(&r, 10);
    return shm_new(&r, pids, before, nbefore);
}

/* Kills at `nkill` times spread over 0..40 ms after launch (the victim rotating), then `nint` Ctrl-Cs at times
 * over the same window: no run may leave a file in /dev/shm. */
static int shm_faults(int nkill, int nint)
{
    int leaked_runs = 0, total = 0;
    double worst = 0, took;
    setenv("STITCH_TIMEOUT", "0.5", 1); /* what a survivor waits for a rank killed in the rendezvous */
    for (int i = 0; i < nkill + nint; i++) {
        int kill_run = i < nkill, k = kill_run ? i : i - nkill, of = kill_run ? nkill : nint;
        long delay_us = of > 1 ? 40000L * k / (of - 1) : 0;
        int left = setup_fault(4, kill_run ? k % 4 : -1, delay_us, &took);
        if (left)
            printf("# %s at %ld ms: %d names left\n", kill_run ? "SIGKILL of one rank" : "SIGINT to all",
                   delay_us / 1000, left);
        leaked_runs += left > 0, total += left;
        worst = took > worst ? took : worst;
    }
    unsetenv("STITCH_TIMEOUT");
    printf("# shm faults: %d SIGKILLs and %d SIGINTs at 0..40 ms after launch: %d runs left %d names in /dev/shm; "
           "slowest run ended %.2f s after the signal\n", nkill, nint, leaked_runs, total, worst);
    return leaked_runs == 0;
}

static int sc_shmleak(void) { return shm_faults(12, 4); }
static int sc_shmleak_long(void) { return shm_faults(64, 32); }

/* ---- a stopped rank is the one named -------------------------------------------------------------------- */

/* All-reduces of alternating sizes (so the ring, rhd and one-shot algorithms all run) until one fails. */
static int body_loop(stitch_comm_t *comm, int rank, int n, int out)
{
    static const size_t counts[] = {1000, 1, 70000, 16};
    size_t most = 70000;
    float *buf = calloc(most, sizeof *buf);
    (void)n;
    for (long i = 0; i < 10000000; i++) {
        stitch_status_t st = stitch_all_reduce(buf, buf, counts[i % 4], STITCH_FP32, STITCH_SUM, comm);
        if (st != STITCH_OK) {
            say(out, "rank %d: %s: %s\n", rank, stitch_strerror(st), stitch_comm_last_error(comm));
            free(buf);
            return 3;
        }
        if (i == 3) /* every size once: init is done and every rank is in the loop */
            say(out, "ready\n");
    }
    free(buf);
    return 0;
}

/* Has child `pid` ended (without reaping it: reap() does that)? */
static int ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* n ranks loop on all_reduce with STITCH_TIMEOUT=1; once every rank has said it is in the loop ("ready": init
 * is done, whatever the machine's load), rank `victim` gets SIGSTOP. Every survivor must
 * end with an error that names the victim as the rank behind ("rank V is behind"), not the neighbour it waited
 * for. The victim is killed once the survivors are done (or after 15 s). Returns the survivors naming it. */
static int stall_run(int n, int victim, const char *transport, int *survivors)
{
    run r;
    char want[32];
    snprintf(want, sizeof want, "rank %d is behind", victim);
    setenv("STITCH_TIMEOUT", "1", 1);
    spawn(&r, n, body_loop, transport);
    if (!await_ready(&r, -1, 60))
        printf("# stall %s np %d: not every rank reached the loop\n", transport, n);
    kill(r.pid[victim], SIGSTOP);
    double t0 = now();
    for (int done = 0; !done && now() - t0 < 15;) {
        done = 1;
        for (int i = 0; i < n; i++)
            done &= i == victim || ended(r.pid[i]);
        if (!done)
            usleep(20 * 1000);
    }
    double took = now() - t0;
    kill(r.pid[victim], SIGKILL);
    kill(r.pid[victim], SIGCONT);
    reap(&r, 10);
    unsetenv("STITCH_TIMEOUT");
    int named = 0;
    *survivors = n - 1;
    for (int i = 0; i < n; i++) {
        if (i == victim)
            continue;
        int ok = r.status[i] == 3 && strstr(r.text[i], want) != NULL;
        named += ok;
        if (!ok)
            printf("# stall %s np %d, rank %d stopped: rank %d exited %d: %s", transport, n, victim, i, r.status[i],
                   r.text[i]);
    }
    printf("# stall %s np %d, rank %d stopped: %d of %d survivors named it, done %.2f s after the stop; rank %d "
           "said: %s", transport, n, victim, named, n - 1, took, victim == 0 ? 1 : 0, r.text[victim == 0 ? 1 : 0]);
    return named;
}

static int stall_runs(const char *transport, int reps)
{
    static const int shapes[][2] = {{4, 2}, {3, 1}, {5, 3}, {4, 0}, {5, 4}};
    int named = 0, total = 0, s;
    for (int i = 0; i < reps; i++) {
        named += stall_run(shapes[i % 5][0], shapes[i % 5][1], transport, &s);
        total += s;
    }
    return named == total;
}

static int sc_stall(void) { return stall_runs("shm", 2); }
static int sc_stall_tcp(void) { return stall_runs("tcp", 2); }
static int sc_stall_long(void) { return stall_runs("shm", 10) & stall_runs("tcp", 10); }

static const proc_scenario scenarios[] = {
    {"shm", sc_shm}, {"tcp", sc_tcp}, {"odd", sc_odd}, {"kill", sc_kill}, {"kill.tcp", sc_kill_tcp}, {"p2p.straight", sc_p2p_straight}, {"mismatch", sc_mismatch},
    {"abort", sc_abort}, {"groups", sc_groups}, {"topo", sc_topo}, {"topo_once", sc_topo_once}, {"shmleak", sc_shmleak}, {"stall", sc_stall},
    {"stall.tcp", sc_stall_tcp}, {"shmleak.long", sc_shmleak_long}, {"stall.long", sc_stall_long},
};

int main(int argc, char **argv)
{
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
