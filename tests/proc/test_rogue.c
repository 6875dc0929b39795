/* test_rogue.c - the bootstrap against an attacker who can reach its ports (loopback only), and against a rank with
 * the wrong secret.
 *
 *   test_rogue [scenario ...]     scenarios: join stall pairwise impostor wrong_secret warn empty_secret debug_once (default: all)
 *
 *   join          a launcher job (STITCH_RANK/SIZE/ROOT on loopback, no STITCH_SECRET): a rogue that knows the
 *                 port and everything public (the job id the key was once derived from) is refused by the root
 *                 and gets no table; the root is not reachable on the host's other address; the real rank then
 *                 joins and the job completes
 *   stall         40 silent and 40 garbage connections to the root's port before the real ranks: the job still
 *                 completes within 5 s, and rank 0 logs at most 5 bootstrap lines about them
 *   pairwise      a rogue on rank 1's own listener, claiming to be rank 2's control channel, queued before the
 *                 real rank 2: refused (rejected, or cut off unanswered once rank 1 has its real peers), and the
 *                 job completes
 *   impostor      a rogue that holds the root's port (unique id) and answers like a root: the rank refuses it
 *                 (mutual authentication) and fails at once, naming it
 *   wrong_secret  one rank of three with a different STITCH_SECRET fails at once saying so; the others time out
 *   debug_once    STITCH_DEBUG=1, stitch_launcher() asked twice before init: rank 0 logs its bootstrap line once
 *   empty_secret  STITCH_SECRET= on every rank: the job runs as without one, and rank 0 says once that it is empty
 *   warn          a launcher job rooted at the host's non-loopback address warns once without STITCH_SECRET (its
 *                 key is public), not at all with it; both complete (skipped where the host has only loopback)
 *
 * Every rank is a forked process; every run is bounded (reap's deadline kills leftovers). Prints TAP.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bootstrap.h"
#include "procrun.h"

static int body_sum(stitch_comm_t *comm, int rank, int n, int out)
{
    int v[4] = {rank, 1, 2, 3}, w[4] = {0};
    stitch_status_t st = stitch_all_reduce(v, w, 4, STITCH_INT32, STITCH_SUM, comm);
    if (st != STITCH_OK || w[0] != n * (n - 1) / 2 || w[1] != n) {
        say(out, "all_reduce: %s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
        return 1;
    }
    return 0;
}

/* How the ranks of a scenario find each other: a unique id, or STITCH_RANK/SIZE/ROOT=127.0.0.1:port. */
typedef struct job {
    int n, launcher, port;
    stitch_unique_id_t id;
    char host[128];
    const char *secret[MAXR]; /* STITCH_SECRET per rank; NULL: unset */
    char errfile[64];         /* rank 0's stderr goes here when set */
    int debug;                /* STITCH_DEBUG=1, and stitch_launcher() asked twice before init (as stitch-perf does) */
} job;

static int free_port(void)
{
    struct sockaddr_in sa = {0};
    socklen_t sl = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_family = AF_INET, sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || getsockname(fd, (struct sockaddr *)&sa, &sl))
        exit(1);
    close(fd);
    return ntohs(sa.sin_port);
}

static void job_init(job *j, int n, int launcher)
{
    memset(j, 0, sizeof *j);
    j->n = n, j->launcher = launcher;
    if (launcher) {
        j->port = free_port();
        snprintf(j->host, sizeof j->host, "127.0.0.1");
        return;
    }
    char text[sizeof j->id.internal + 1];
    if (stitch_get_unique_id(&j->id) != STITCH_OK)
        exit(1);
    memcpy(text, j->id.internal, sizeof j->id.internal); /* "stitch1 host:port secret" */
    text[sizeof j->id.internal] = '\0';
    char *hp = text + 8, *colon = strchr(hp, ':');
    *colon = '\0';
    snprintf(j->host, sizeof j->host, "%s", hp);
    j->port = atoi(colon + 1);
}

/* The key a launcher job once had, from public facts only: what a rogue would try. */
static void public_secret(const job *j, char *out, size_t len)
{
    snprintf(out, len, "stitch:%s:%d", j->host, j->port);
}

/* Fork rank i of job j into the next slot of r (the scenarios fork in rank order, so slot = rank, but for the
 * impostor's lone rank 1). */
static void fork_rank(run *r, job *j, int i)
{
    int p[2];
    if (pipe(p) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid < 0)
        exit(1);
    if (pid == 0) {
        close(p[0]);
        char v[200];
        static const char *const clear[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK",
                                            "STITCH_SECRET"};
        for (size_t k = 0; k < sizeof clear / sizeof *clear; k++)
            unsetenv(clear[k]);
        if (j->secret[i])
            setenv("STITCH_SECRET", j->secret[i], 1);
        if (i == 0 && j->errfile[0]) {
            if (!freopen(j->errfile, "w", stderr))
                _exit(9);
            setvbuf(stderr, NULL, _IONBF, 0); /* as stderr is: the rank ends with _exit */
        }
        stitch_comm_t *comm = NULL;
        char err[1024] = "";
        stitch_status_t st;
        if (j->launcher) {
            snprintf(v, sizeof v, "%d", i), setenv("STITCH_RANK", v, 1);
            snprintf(v, sizeof v, "%d", j->n), setenv("STITCH_SIZE", v, 1);
            snprintf(v, sizeof v, "%s:%d", j->host, j->port), setenv("STITCH_ROOT", v, 1);
            if (j->debug && (setenv("STITCH_DEBUG", "1", 1) != 0 || !stitch_launcher() || !stitch_launcher()))
                _exit(8);
            st = stitch_comm_init_env(&comm, NULL, err, sizeof err);
        } else {
            st = stitch_comm_init_rank(&comm, j->n, j->id, i, NULL, err, sizeof err);
        }
        if (st != STITCH_OK) {
            say(p[1], "init: %s: %s\n", stitch_strerror(st), err);
            _exit(2);
        }
        int rc = body_sum(comm, i, j->n, p[1]);
        stitch_comm_destroy(comm);
        _exit(rc);
    }
    close(p[1]);
    r->pid[r->n] = pid, r->fd[r->n] = p[0];
    r->n++;
}

/* A TCP connection to host:port, retried for up to 5 s while nobody listens yet; -1 when it never succeeds. */
static int dial_raw(const char *host, int port)
{
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET, sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, host, &sa.sin_addr);
    for (double t0 = now(); now() - t0 < 5;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            return fd;
        close(fd);
        usleep(10000);
    }
    return -1;
}

/* Lines of `path` that contain `part`. */
static int count_lines(const char *path, const char *part)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, part) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* ---- scenarios -------------------------------------------------------------------------------------------- */

static int sc_join(void)
{
    job j;
    run r;
    char secret[200], why[512] = "";
    int ok = 1;
    job_init(&j, 2, 1);
    memset(&r, 0, sizeof r);
    setenv("STITCH_TIMEOUT", "10", 1);
    fork_rank(&r, &j, 0);
    public_secret(&j, secret, sizeof secret);
    /* as rank 1 on the boot channel: a rogue that got in would next send its entry and read the table */
    int fd = st_boot_dial(-1, j.host, j.port, secret, 0, 1, 2, 0, 5000, why, sizeof why);
    printf("# join: the rogue with the public key %s: %s\n", fd < 0 ? "was refused" : "GOT IN", why);
    ok &= fd < 0 && strstr(why, "rejected") != NULL;
    if (fd >= 0)
        close(fd);
    /* the root asked for 127.0.0.1 listens there only */
    char other[64];
    int port2;
    if (st_boot_pick_root(NULL, other, sizeof other, &port2, why, sizeof why) == STITCH_OK &&
        strncmp(other, "127.", 4) != 0) {
        struct sockaddr_in sa = {0};
        int s = socket(AF_INET, SOCK_STREAM, 0), c;
        sa.sin_family = AF_INET, sa.sin_port = htons((uint16_t)j.port);
        inet_pton(AF_INET, other, &sa.sin_addr);
        c = connect(s, (struct sockaddr *)&sa, sizeof sa);
        printf("# join: the root's port on %s: %s\n", other, c == 0 ? "REACHABLE" : strerror(errno));
        ok &= c != 0;
        close(s);
    } else {
        printf("# join: no address but loopback here: the bind check is skipped\n");
    }
    double t0 = now();
    fork_rank(&r, &j, 1);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    ok &= all_ok(&r, "join");
    printf("# join: the real job completed %.2f s after the real rank 1 started\n", now() - t0);
    return ok;
}

static int sc_stall(void)
{
    job j;
    run r;
    int fds[80], nfd = 0;
    job_init(&j, 3, 0);
    memset(&r, 0, sizeof r);
    snprintf(j.errfile, sizeof j.errfile, "/tmp/stitch-rogue-%d.err", (int)getpid());
    setenv("STITCH_TIMEOUT", "20", 1);
    fork_rank(&r, &j, 0);
    for (int i = 0; i < 80; i++) {
        int fd = dial_raw(j.host, j.port);
        if (fd < 0)
            break;
        if (i % 2) { /* garbage: a hello that is not one */
            char junk[40];
            memset(junk, 'x', sizeof junk);
            if (write(fd, junk, sizeof junk) < 0)
                break;
        }
        fds[nfd++] = fd;
    }
    double t0 = now();
    fork_rank(&r, &j, 1);
    fork_rank(&r, &j, 2);
    reap(&r, 30);
    double took = now() - t0;
    unsetenv("STITCH_TIMEOUT");
    for (int i = 0; i < nfd; i++)
        close(fds[i]);
    int lines = count_lines(j.errfile, "stitch: bootstrap:");
    int ok = nfd == 80 && all_ok(&r, "stall") && took < 5 && lines <= 5;
    printf("# stall: %d rogue connections held; the job took %.2f s (at most 5); rank 0 logged %d bootstrap lines "
           "(at most 5)\n", nfd, took, lines);
    unlink(j.errfile);
    return ok;
}

/* The TCP port rank `pid` listens on at 127.0.0.1 (its sockets' inodes, looked up in /proc/net/tcp); 0: none. */
static int listen_port_of(pid_t pid)
{
    char path[64], link[64], line[512];
    unsigned long inodes[64];
    int n = 0, port = 0;
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) && n < 64;) {
        char fp[340];
        snprintf(fp, sizeof fp, "%s/%s", path, e->d_name);
        ssize_t k = readlink(fp, link, sizeof link - 1);
        if (k > 0 && (link[k] = '\0', sscanf(link, "socket:[%lu]", &inodes[n]) == 1))
            n++;
    }
    if (d)
        closedir(d);
    FILE *f = fopen("/proc/net/tcp", "r");
    while (f && !port && fgets(line, sizeof line, f)) {
        unsigned a, p, st;
        unsigned long ino;
        if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*d %*d %lu", &a, &p, &st, &ino) == 4 &&
            st == 0x0A && a == htonl(INADDR_LOOPBACK))
            for (int i = 0; i < n; i++)
                port = inodes[i] == ino ? (int)p : port;
    }
    if (f)
        fclose(f);
    return port;
}

static int sc_pairwise(void)
{
    job j;
    run r;
    char secret[200], why[512] = "";
    int port = 0;
    job_init(&j, 3, 1);
    memset(&r, 0, sizeof r);
    setenv("STITCH_TIMEOUT", "10", 1);
    fork_rank(&r, &j, 0);
    fork_rank(&r, &j, 1);
    for (double t0 = now(); !port && now() - t0 < 5; usleep(10000)) /* rank 1 listens from its start */
        port = listen_port_of(r.pid[1]);
    int fd = port ? dial_raw("127.0.0.1", port) : -1; /* queued on rank 1's listener before rank 2 exists */
    public_secret(&j, secret, sizeof secret);
    int pp[2];
    if (pipe(pp) != 0)
        exit(1);
    pid_t rogue = fork();
    if (rogue == 0) { /* rank 1 answers only once the gather is done, so the rogue waits in a child */
        close(pp[0]);
        int got = st_boot_dial(fd, NULL, 0, secret, 1, 2, 3, 1, 15000, why, sizeof why);
        say(pp[1], "%s", got < 0 ? why : "joined");
        _exit(got < 0 ? 0 : 1);
    }
    close(pp[1]);
    if (fd >= 0)
        close(fd);
    fork_rank(&r, &j, 2);
    reap(&r, 20);
    int st = -1;
    ssize_t k = read(pp[0], why, sizeof why - 1);
    why[k > 0 ? k : 0] = '\0';
    close(pp[0]);
    waitpid(rogue, &st, 0);
    unsetenv("STITCH_TIMEOUT");
    int ok = all_ok(&r, "pairwise");
    printf("# pairwise: rank 1 listens on port %d; the rogue claiming rank 2's control channel: %s\n", port, why);
    /* Refused either way: rejected for its mac when its hello came before rank 2's, or cut off unanswered when rank
     * 1 had all its peers first (a pending handshake delays nobody). */
    return ok && port && fd >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int sc_impostor(void)
{
    job j;
    run r;
    job_init(&j, 2, 0);
    memset(&r, 0, sizeof r);
    struct sockaddr_in sa = {0};
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sa.sin_family = AF_INET, sa.sin_port = htons((uint16_t)j.port);
    inet_pton(AF_INET, j.host, &sa.sin_addr);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 8) != 0) {
        printf("# impostor: cannot take the root's port %s:%d: %s\n", j.host, j.port, strerror(errno));
        return 0;
    }
    setenv("STITCH_TIMEOUT", "10", 1);
    double t0 = now();
    fork_rank(&r, &j, 1); /* rank 0 never comes: the impostor is in its place */
    struct pollfd pf = {lfd, POLLIN, 0};
    int fd = poll(&pf, 1, 5000) == 1 ? accept(lfd, NULL, NULL) : -1;
    char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    if (fd >= 0) { /* a root's challenge, then whatever a root might say after a hello, with no key behind it */
        struct pollfd q = {fd, POLLIN, 0};
        if (write(fd, junk, 16) != 16 || poll(&q, 1, 5000) != 1 || read(fd, junk + 64, 40) <= 0 ||
            write(fd, junk, sizeof junk) < 0)
            printf("# impostor: the rank did not send a hello\n");
    }
    reap(&r, 15);
    double took = now() - t0;
    unsetenv("STITCH_TIMEOUT");
    if (fd >= 0)
        close(fd);
    close(lfd);
    printf("# impostor: rank 1 exited %d after %.2f s: %s", r.status[0], took, r.text[0]);
    return fd >= 0 && r.status[0] == 2 && strstr(r.text[0], "did not prove that it knows the job secret") && took < 5;
}

static int sc_wrong_secret(void)
{
    job j;
    run r;
    job_init(&j, 3, 0);
    memset(&r, 0, sizeof r);
    j.secret[2] = "not the job's secret";
    setenv("STITCH_TIMEOUT", "4", 1);
    double t0 = now();
    for (int i = 0; i < 3; i++)
        fork_rank(&r, &j, i);
    struct pollfd pf = {r.fd[2], POLLIN, 0}; /* rank 2 reports its failure, well before the others time out */
    double rank2 = poll(&pf, 1, 15000) == 1 ? now() - t0 : 0;
    reap(&r, 15);
    unsetenv("STITCH_TIMEOUT");
    printf("# wrong_secret: rank 2 failed after %.2f s: %s# rank 0: %s", rank2, r.text[2], r.text[0]);
    return r.status[2] == 2 && rank2 > 0 && rank2 < 2 && strstr(r.text[2], "STITCH_ERR_CONFIG") && strstr(r.text[2], "wrong job secret") &&
           strstr(r.text[2], "STITCH_SECRET") && r.status[0] == 2 && strstr(r.text[0], "2 of 3 ranks arrived");
}

/* A launcher job whose root is the host's own non-loopback address: without STITCH_SECRET it runs on the public
 * job id and rank 0 says so, once; with STITCH_SECRET on every rank it runs silently. */
static int sc_warn(void)
{
    char host[64], why[256];
    int port, ok = 1;
    if (st_boot_pick_root(NULL, host, sizeof host, &port, why, sizeof why) != STITCH_OK || !strncmp(host, "127.", 4)) {
        printf("# warn: no address but loopback here: skipped\n");
        return 1;
    }
    setenv("STITCH_TIMEOUT", "10", 1);
    for (int with = 0; with < 2; with++) {
        job j;
        run r;
        job_init(&j, 2, 1);
        memset(&r, 0, sizeof r);
        snprintf(j.host, sizeof j.host, "%s", host);
        snprintf(j.errfile, sizeof j.errfile, "/tmp/stitch-rogue-%d.err", (int)getpid());
        j.secret[0] = j.secret[1] = with ? "a secret both ranks have" : NULL;
        fork_rank(&r, &j, 0);
        fork_rank(&r, &j, 1);
        reap(&r, 20);
        int lines = count_lines(j.errfile, "has no STITCH_SECRET");
        ok &= all_ok(&r, with ? "warn, with STITCH_SECRET" : "warn") && lines == !with;
        printf("# warn: root %s, %s STITCH_SECRET: rank 0 warned %d times\n", host, with ? "with" : "without", lines);
        unlink(j.errfile);
    }
    unsetenv("STITCH_TIMEOUT");
    return ok;
}

/* STITCH_SECRET= (set, empty) on every rank of a loopback launcher job: empty means unset, as for every variable,
 * and the job runs; but rank 0 says so once, as a secret set to nothing is likely a mistake. */
static int sc_empty_secret(void)
{
    job j;
    run r;
    job_init(&j, 2, 1);
    memset(&r, 0, sizeof r);
    snprintf(j.errfile, sizeof j.errfile, "/tmp/stitch-rogue-%d.err", (int)getpid());
    j.secret[0] = j.secret[1] = "";
    setenv("STITCH_TIMEOUT", "10", 1);
    fork_rank(&r, &j, 0);
    fork_rank(&r, &j, 1);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    int lines = count_lines(j.errfile, "STITCH_SECRET is set but empty");
    printf("# empty_secret: rank 0 warned %d times\n", lines);
    unlink(j.errfile);
    return all_ok(&r, "empty_secret") && lines == 1;
}

/* STITCH_DEBUG=1 in a launcher job whose ranks ask stitch_launcher() before init: rank 0 logs its bootstrap line
 * once, from init, not once per question. */
static int sc_debug_once(void)
{
    job j;
    run r;
    job_init(&j, 2, 1);
    memset(&r, 0, sizeof r);
    snprintf(j.errfile, sizeof j.errfile, "/tmp/stitch-rogue-%d.err", (int)getpid());
    j.debug = 1;
    setenv("STITCH_TIMEOUT", "10", 1);
    fork_rank(&r, &j, 0);
    fork_rank(&r, &j, 1);
    reap(&r, 20);
    unsetenv("STITCH_TIMEOUT");
    int lines = count_lines(j.errfile, "bootstrap from stitch");
    printf("# debug_once: rank 0 logged its bootstrap line %d times\n", lines);
    unlink(j.errfile);
    return all_ok(&r, "debug_once") && lines == 1;
}

static const proc_scenario scenarios[] = {
    {"join", sc_join}, {"stall", sc_stall}, {"pairwise", sc_pairwise}, {"impostor", sc_impostor},
    {"wrong_secret", sc_wrong_secret}, {"warn", sc_warn}, {"empty_secret", sc_empty_secret},
    {"debug_once", sc_debug_once},
};

int main(int argc, char **argv)
{
    (void)spawn; /* procrun.h's: this program forks its ranks one at a time */
    return proc_main(scenarios, (int)(sizeof scenarios / sizeof *scenarios), argc, argv);
}
