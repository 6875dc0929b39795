/* bootstrap.c - launcher detection, rendezvous at the root, the pairwise mesh and a barrier (bootstrap.h).
 *
 * Launchers, in this fixed order (the first whose variables are present wins; STITCH_DEBUG logs the choice):
 *   openmpi   OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK; root: 127.0.0.1 when every rank is on this host
 *             (OMPI_COMM_WORLD_LOCAL_SIZE == SIZE), else the mpirun host of OMPI_MCA_orte_hnp_uri (rank 0 runs
 *             there under mpirun's default mapping); port from OMPI_MCA_ess_base_jobid
 *   mpich     PMI_RANK/PMI_SIZE; root 127.0.0.1 unless STITCH_ROOT; port from PMI_KVSNAME / the parent pid
 *   slurm     SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID; root: first host of SLURM_STEP_NODELIST or
 *             SLURM_JOB_NODELIST; port from SLURM_JOB_ID and SLURM_STEP_ID
 *   torchrun  RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT; root port MASTER_PORT + 1 (MASTER_PORT itself
 *             is torchrun's own store)
 *   stitch    STITCH_RANK/STITCH_SIZE/STITCH_ROOT=host:port
 * Derived ports are 20000 + hash(job id) % 30000: every rank computes the same one without talking. These
 * variables are read only through st_launcher_env; the tunables (STITCH_SOCKET_IFNAME, STITCH_SECRET) come from
 * config.c's settings, by way of st_boot_opts and the caller.
 *
 * The job's secret, and what each mode guarantees. The key is SipHash-2-4 of the secret under two fixed keys.
 *   STITCH_SECRET set (any launcher, or over a unique id's): only processes given the secret can join or answer
 *       as a rank, on any network; as strong as the secret and as private as the way it reached the ranks (an
 *       environment variable is readable by the same uid and root). The way to run a job across hosts.
 *   unique id: its 128 random bits; as private as the channel that carried the id to the ranks.
 *   launcher, root on loopback (one host: Open MPI with all ranks local, MPICH without STITCH_ROOT, torchrun with
 *       MASTER_ADDR 127.0.0.1, STITCH_ROOT=127.x): rank 0 draws 128 random bits and hands them out over an
 *       abstract unix socket named after the uid and the job id, to processes of its own uid only (SO_PEERCRED),
 *       and each rank checks that the socket's owner has its uid. Someone on the network can reach nothing (the
 *       root listens on loopback only); another user of the host cannot learn the secret; a process of the same
 *       uid can (it could read the ranks' memory anyway). Another user can squat the socket's name (it is
 *       predictable): the job then fails at init, naming it, but never trusts that process.
 *   launcher, root elsewhere, no STITCH_SECRET: the key comes from the launcher's job id, which is public; it
 *       keeps jobs apart, not attackers out. Rank 0 warns once on stderr.
 *
 * Handshakes. Every connection (to the root, and each pairwise control and data channel) is mutually
 * authenticated before anything else crosses it: the acceptor sends a 16-byte random nonce, the connector its
 * hello (channel, rank, size, its own 16-byte nonce) with a mac, the acceptor an answer with its rank and a mac.
 * Each mac is SipHash under a key derived from the job key, a label and both nonces, so nothing recorded from one
 * connection verifies on another and neither direction's proof can be reflected as the other's. A rank that gets
 * no valid answer (an impostor holding a port, another job) fails at once (STITCH_ERR_CONFIG); a rank whose hello
 * fails the mac is told so (the answer's status) and fails at once, naming STITCH_SECRET. On the boot channel the
 * rank's entry and the table carry macs too; later frames on the channels do not (they are not encrypted either).
 * The messages, their macs and every check on what a peer sends are in handshake.c, apart from the sockets, so
 * that they can be fuzzed (tests/fuzz/fuzz_bootmsg.c); an accepted entry's strings are cut to their fields there.
 * The root listens on the root address only (where that is not an address of this host: on every interface,
 * said on stderr), other ranks on their own address.
 *
 * An acceptor serves all pending handshakes at once (poll over up to 128, the oldest dropped for a new one when
 * full), each with its own 2 s deadline, so silent or slow connections delay no real rank. Rejections are logged,
 * the first 3 per acceptor; the rest are counted and summed up once.
 *
 * A rank that failed init before its bootstrap (a bad setting or catalogue: proc.c) still joins phase 1 with its
 * entry marked failed and a report of why, on its authenticated link under its own mac; the root relays the first
 * such report (or its own failure) to every rank already waiting and to each later one as it arrives, in place of
 * the table. So one rank's mistake fails the job within the time the ranks take to arrive, every rank naming it,
 * instead of leaving the others to time out blaming the bootstrap. A rank that cannot authenticate (another
 * secret) cannot report, and is reported by nobody: the others time out, as before.
 *
 * Everything here blocks (init is not a hot path) but every read, write, connect and accept waits with poll
 * against a deadline, so no phase can hang.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"
#include "handshake.h"

#define ST_HANDSHAKE_MS 2000

/* A connection whose hello has not arrived yet. */
typedef struct st_pend {
    st_link l;
    struct sockaddr_in from;
    size_t got;          /* bytes of the hello so far */
    struct timespec at;  /* its own handshake deadline */
} st_pend;

#define ST_MAX_PENDING 128

/* The accepting side of a rank's listener, across the gather and the mesh: the handshakes in progress, the root's
 * local-secret socket, and the count of rejections for the rate-limited log. */
typedef struct st_acceptor {
    int lfd, ufd;               /* ufd: root of a loopback job without a secret, handing out `local`; else -1 */
    int rank, size;
    const uint64_t *key;
    unsigned char local[16];
    st_pend pend[ST_MAX_PENDING];
    int npend, rejected;
} st_acceptor;

static void st_derive_key(const char *secret, uint64_t key[2])
{
    static const uint64_t k0[2] = {0x7374697463682d6bULL, 0x6579302d626f6f74ULL};
    static const uint64_t k1[2] = {0x7374697463682d6bULL, 0x6579312d626f6f74ULL};
    key[0] = st_siphash(k0, secret, strlen(secret));
    key[1] = st_siphash(k1, secret, strlen(secret));
}

/* ---- environment ------------------------------------------------------------------------------------------ */

/* The one reader of the launchers' variables (config.c's header says why they are not tunables). */
const char *st_launcher_env(const char *name)
{
    return getenv(name);
}

static const char *st_env_or(const char *name, const char *unset)
{
    const char *v = st_launcher_env(name);
    return v ? v : unset;
}

static uint32_t st_fnv(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int st_port_of(const char *jobid)
{
    return 20000 + (int)(st_fnv(jobid) % 30000u);
}

static int st_int_env(const char *name, int *out)
{
    const char *v = st_launcher_env(name);
    char *end;
    if (!v || !*v)
        return 0;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1 << 30)
        return -1;
    *out = (int)x;
    return 1;
}

/* "host:port" into e->root_host / root_port. */
static int st_parse_hostport(const char *v, st_boot_env *e)
{
    const char *colon = strrchr(v, ':');
    char *end;
    if (!colon || colon == v || (size_t)(colon - v) >= sizeof e->root_host)
        return -1;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 1 || port > 65535)
        return -1;
    memcpy(e->root_host, v, (size_t)(colon - v));
    e->root_host[colon - v] = '\0';
    e->root_port = (int)port;
    return 0;
}

/* The first host of a Slurm node list: "n[01-04,7],m" -> "n01". */
static void st_slurm_first(const char *list, char *out, size_t len)
{
    size_t n = strcspn(list, ",[");
    snprintf(out, len, "%.*s", (int)n, list);
    if (list[n] == '[') {
        const char *num = list + n + 1;
        size_t k = strcspn(num, "-,]");
        snprintf(out + strlen(out), len - strlen(out), "%.*s", (int)k, num);
    }
}

/* The host of "jobid.0;tcp://192.0.2.2:40109;..." */
static int st_ompi_hnp_host(char *out, size_t len)
{
    const char *uri = st_launcher_env("OMPI_MCA_orte_hnp_uri"), *t = uri ? strstr(uri, "tcp://") : NULL;
    if (!t)
        return 0;
    t += 6;
    size_t n = strcspn(t, ",:;");
    snprintf(out, len, "%.*s", (int)n, t);
    return 1;
}

/* Rank, size, local rank from three variables; 1 found, 0 absent, -1 malformed. */
static int st_triple(st_boot_env *e, const char *r, const char *s, const char *l, char *err, size_t errlen)
{
    int a = st_int_env(r, &e->rank), b = st_int_env(s, &e->size);
    if (a == 0 && b == 0)
        return 0;
    if (a <= 0 || b <= 0 || e->size < 1 || e->rank >= e->size) {
        snprintf(err, errlen, "%s/%s: expected 0 <= rank < size, got '%s' and '%s'", r, s,
                 st_env_or(r, "(unset)"), st_env_or(s, "(unset)"));
        return -1;
    }
    e->local_rank = -1;
    if (l && st_int_env(l, &e->local_rank) < 0)
        e->local_rank = -1;
    return 1;
}

static int st_detect_launcher(st_boot_env *e, char *err, size_t errlen)
{
    int found, ls = 0;
    char jobid[128] = "";
    if ((found = st_triple(e, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", err,
                           errlen)) != 0) {
        snprintf(e->launcher, sizeof e->launcher, "openmpi");
        snprintf(jobid, sizeof jobid, "ompi:%s", st_env_or("OMPI_MCA_ess_base_jobid", ""));
        st_int_env("OMPI_COMM_WORLD_LOCAL_SIZE", &ls);
        if (ls == e->size || !st_ompi_hnp_host(e->root_host, sizeof e->root_host))
            snprintf(e->root_host, sizeof e->root_host, "127.0.0.1");
    } else if ((found = st_triple(e, "PMI_RANK", "PMI_SIZE", NULL, err, errlen)) != 0) {
        snprintf(e->launcher, sizeof e->launcher, "mpich");
        snprintf(jobid, sizeof jobid, "pmi:%s:%d", st_env_or("PMI_KVSNAME", ""), (int)getppid());
        snprintf(e->root_host, sizeof e->root_host, "127.0.0.1");
    } else if ((found = st_triple(e, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", err, errlen)) != 0) {
        const char *nl = st_env_or("SLURM_STEP_NODELIST", st_launcher_env("SLURM_JOB_NODELIST"));
        snprintf(e->launcher, sizeof e->launcher, "slurm");
        snprintf(jobid, sizeof jobid, "slurm:%s.%s", st_env_or("SLURM_JOB_ID", ""), st_env_or("SLURM_STEP_ID", ""));
        st_slurm_first(nl ? nl : "127.0.0.1", e->root_host, sizeof e->root_host);
    } else if ((found = st_triple(e, "RANK", "WORLD_SIZE", "LOCAL_RANK", err, errlen)) != 0) {
        const char *addr = st_launcher_env("MASTER_ADDR"), *port = st_launcher_env("MASTER_PORT");
        snprintf(e->launcher, sizeof e->launcher, "torchrun");
        if (found > 0 && (!addr || !port || atoi(port) < 1 || atoi(port) > 65534) && !st_launcher_env("STITCH_ROOT")) {
            snprintf(err, errlen, "torchrun-style RANK/WORLD_SIZE found but MASTER_ADDR/MASTER_PORT missing or bad");
            return -1;
        }
        snprintf(e->root_host, sizeof e->root_host, "%s", addr ? addr : "");
        e->root_port = port ? atoi(port) + 1 : 0;
        snprintf(jobid, sizeof jobid, "torchrun:%s:%s", addr ? addr : "", port ? port : "");
    } else if ((found = st_triple(e, "STITCH_RANK", "STITCH_SIZE", NULL, err, errlen)) != 0) {
        snprintf(e->launcher, sizeof e->launcher, "stitch");
        if (found > 0 && !st_launcher_env("STITCH_ROOT")) {
            snprintf(err, errlen, "STITCH_RANK/STITCH_SIZE set but STITCH_ROOT=host:port is missing");
            return -1;
        }
        snprintf(jobid, sizeof jobid, "stitch:%s", st_launcher_env("STITCH_ROOT"));
    }
    if (found <= 0)
        return found;
    if (!e->root_port)
        e->root_port = st_port_of(jobid);
    snprintf(e->secret, sizeof e->secret, "%s", jobid);
    return 1;
}

int st_boot_detect(st_boot_env *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    int found = st_detect_launcher(e, err, errlen);
    if (found <= 0)
        return found;
    const char *root = st_launcher_env("STITCH_ROOT");
    if (root && st_parse_hostport(root, e) != 0) {
        snprintf(err, errlen, "STITCH_ROOT='%s': expected host:port", root);
        return -1;
    }
    return 1;
}

/* ---- sockets with deadlines ------------------------------------------------------------------------------- */

static int st_resolve(const char *host, int port, struct sockaddr_in *sa, char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(err, errlen, "cannot resolve root host '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    memcpy(sa, res->ai_addr, sizeof *sa);
    sa->sin_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return 0;
}

/* Connect with retries until the deadline (the listener may not be up yet). */
static int st_connect(const struct sockaddr_in *sa, const struct timespec *at, char *err, size_t errlen)
{
    int last = 0;
    while (st_ms_left(at) > 0) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            snprintf(err, errlen, "socket: %s", strerror(errno));
            return -1;
        }
        int rc = connect(fd, (const struct sockaddr *)sa, sizeof *sa), soerr = 0;
        socklen_t sl = sizeof soerr;
        if (rc < 0 && errno == EINPROGRESS && st_poll1(fd, POLLOUT, at) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
            rc = 0;
        else if (rc < 0)
            last = soerr ? soerr : errno;
        if (rc == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        usleep(50000);
    }
    snprintf(err, errlen, "cannot connect to %s:%d before the deadline: %s", inet_ntoa(sa->sin_addr),
             ntohs(sa->sin_port), last ? strerror(last) : "timed out");
    return -1;
}

static int st_listen(uint32_t ip, int port, char *err, size_t errlen)
{
    struct sockaddr_in sa = {0};
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = ip;
    sa.sin_port = htons((uint16_t)port);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1024) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot listen on %s:%d: %s", inet_ntoa(sa.sin_addr), port, strerror(e));
        close(fd);
        errno = e; /* the caller tells EADDRNOTAVAIL apart */
        return -1;
    }
    return fd;
}

/* ---- addresses and host identity -------------------------------------------------------------------------- */

/* Does interface `name` pass STITCH_SOCKET_IFNAME ("eth,ib" prefixes; "^docker,lo" excludes)? */
static int st_if_ok(const char *name, const char *spec)
{
    int exclude = spec[0] == '^';
    const char *s = spec + exclude;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n && strncmp(name, s, n) == 0)
            return !exclude;
        s += n + (s[n] == ',');
    }
    return exclude;
}

static int st_ifname_addr(const char *spec, uint32_t *ip, char *err, size_t errlen)
{
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) {
        snprintf(err, errlen, "getifaddrs: %s", strerror(errno));
        return -1;
    }
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) && st_if_ok(i->ifa_name, spec))
            break;
    if (i)
        *ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(ifs);
    if (!i)
        snprintf(err, errlen, "STITCH_SOCKET_IFNAME='%s': no IPv4 interface that is up matches", spec);
    return i ? 0 : -1;
}

/* My address as peers should dial it: the interface of `ifname` (STITCH_SOCKET_IFNAME; NULL: not set), else the
 * source address the kernel would use to reach `toward` (a UDP connect sends nothing). */
static int st_local_addr(const struct sockaddr_in *toward, const char *ifname, uint32_t *ip, char *err, size_t errlen)
{
    if (ifname && *ifname)
        return st_ifname_addr(ifname, ip, err, errlen);
    struct sockaddr_in me = {0};
    socklen_t sl = sizeof me;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)toward, sizeof *toward) != 0 ||
        getsockname(fd, (struct sockaddr *)&me, &sl) != 0) {
        snprintf(err, errlen, "cannot find a local address toward %s: %s", inet_ntoa(toward->sin_addr), strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    *ip = me.sin_addr.s_addr;
    return 0;
}

static void st_read_small(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (f) {
        if (!fgets(out, (int)len, f))
            out[0] = '\0';
        fclose(f);
    }
}

/* Same hostname, same boot and same network namespace: the processes can share memory and see the same
 * loopback. Network namespaces count as hosts, which is what the netns tests rely on. */
static uint64_t st_host_id(char *hostname, size_t len)
{
    char boot[64], ns[64] = "", all[256];
    gethostname(hostname, len);
    hostname[len - 1] = '\0';
    st_read_small("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    snprintf(all, sizeof all, "%s|%s|%s", hostname, boot, ns);
    static const uint64_t k[2] = {1, 2};
    return st_siphash(k, all, strlen(all));
}

/* A unique id names a port that must still be free when rank 0 listens on it, perhaps much later; closing the
 * socket that found it would let any other bind(0) on the host (another job's rank listeners) take it meanwhile,
 * and rank 0 would fail with "Address already in use" (seen in proc.colls.algos3 under ctest -j2). So the port
 * stays reserved: a socket bound to it with SO_REUSEADDR but not listening. Linux's port choice for bind(0) and
 * connect() skips ports with a bound socket, yet a root that binds it with SO_REUSEADDR and listens is allowed
 * (no listener holds it), whether that root is this process, a child forked from it or one it exec'd. A root in
 * this process releases the reservation; the table keeps the last ST_RESERVED ids, releasing the oldest beyond. */
#define ST_RESERVED 8
static struct { uint32_t ip; int port, fd; } st_reserved[ST_RESERVED];
static int st_nreserved;
static atomic_flag st_reserved_busy = ATOMIC_FLAG_INIT; /* a spin lock: held for a few instructions, rarely */

static void st_reserved_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&st_reserved_busy, memory_order_acquire))
        ;
}

static void st_reserved_unlock(void)
{
    atomic_flag_clear_explicit(&st_reserved_busy, memory_order_release);
}

static void st_reserve(uint32_t ip, int port, int fd)
{
    st_reserved_lock();
    if (st_nreserved == ST_RESERVED) {
        close(st_reserved[0].fd);
        memmove(st_reserved, st_reserved + 1, sizeof st_reserved[0] * (ST_RESERVED - 1));
        st_nreserved--;
    }
    st_reserved[st_nreserved].ip = ip, st_reserved[st_nreserved].port = port, st_reserved[st_nreserved].fd = fd;
    st_nreserved++;
    st_reserved_unlock();
}

/* Close the reservation of ip:port made in this process, if any: its root now listens there. */
static void st_release_reserved(uint32_t ip, int port)
{
    st_reserved_lock();
    for (int i = 0; i < st_nreserved; i++) {
        if (st_reserved[i].ip != ip || st_reserved[i].port != port)
            continue;
        close(st_reserved[i].fd);
        st_reserved[i] = st_reserved[--st_nreserved];
        break;
    }
    st_reserved_unlock();
}

stitch_status_t st_boot_pick_root(const char *ifname, char *host, size_t hostlen, int *port, char *err, size_t errlen)
{
    struct sockaddr_in probe = {0}, sa = {0};
    uint32_t ip = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    probe.sin_family = AF_INET;
    probe.sin_port = htons(9);
    probe.sin_addr.s_addr = htonl(0xC0000201u); /* 192.0.2.1, TEST-NET: only the route is looked up */
    if (st_local_addr(&probe, ifname, &ip, err, errlen) != 0)
        ip = htonl(INADDR_LOOPBACK);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* a free port, reserved (see above) */
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&any, sizeof any) != 0 || getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        snprintf(err, errlen, "cannot reserve a port on %s: %s", inet_ntoa(any.sin_addr), strerror(errno));
        if (fd >= 0)
            close(fd);
        return STITCH_ERR_SYSTEM;
    }
    *port = ntohs(sa.sin_port);
    st_reserve(ip, *port, fd);
    struct in_addr a = {ip};
    snprintf(host, hostlen, "%s", inet_ntoa(a));
    return STITCH_OK;
}

/* ---- handshakes ------------------------------------------------------------------------------------------- */

/* Connector side, on a connected socket: read the acceptor's nonce, send my hello with my nonce, check the
 * acceptor's answer. 0 with *l filled; -1 with a message (the acceptor's rejection, or its failed proof). */
static int st_dial_hello(int fd, const uint64_t key[2], uint32_t channel, int rank, int size, int peer,
                         const struct timespec *at, st_link *l, char *err, size_t errlen)
{
    st_answer a;
    memset(l, 0, sizeof *l);
    l->fd = fd;
    l->h = (st_hello){ST_BOOT_MAGIC, channel, rank, size, {0}, 0};
    if (getrandom(l->nc, sizeof l->nc, 0) != sizeof l->nc) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return -1;
    }
    if (st_io_all(fd, l->na, sizeof l->na, 0, at, err, errlen) != 0)
        return -1;
    memcpy(l->h.nonce, l->nc, sizeof l->nc);
    l->h.mac = st_link_mac(key, 'C', l, &l->h, 16);
    if (st_io_all(fd, &l->h, sizeof l->h, 1, at, err, errlen) != 0 ||
        st_io_all(fd, &a, sizeof a, 0, at, err, errlen) != 0)
        return -1;
    l->refused = st_answer_check(key, l, &a, peer, err, errlen) != 0;
    return l->refused ? -1 : 0;
}

/* Dial `sa` and run the connector's handshake; the fd, or -1 with a message. */
static int st_dial(const struct sockaddr_in *sa, const uint64_t key[2], uint32_t channel, int rank, int size,
                   int peer, const struct timespec *at, st_link *l, char *err, size_t errlen)
{
    *l = (st_link){.fd = -1}; /* not refused, where the connection itself fails */
    int fd = st_connect(sa, at, err, errlen);
    if (fd >= 0 && st_dial_hello(fd, key, channel, rank, size, peer, at, l, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int st_boot_dial(int fd, const char *host, int port, const char *secret, int channel, int rank, int size, int peer,
                 int timeout_ms, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    struct timespec at;
    uint64_t key[2];
    st_link l;
    st_deadline_in(&at, timeout_ms);
    st_derive_key(secret, key);
    if (fd >= 0) { /* already connected */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        return st_dial_hello(fd, key, (uint32_t)channel, rank, size, peer, &at, &l, err, errlen) == 0 ? fd : -1;
    }
    if (st_resolve(host, port, &sa, err, errlen) != 0)
        return -1;
    return st_dial(&sa, key, (uint32_t)channel, rank, size, peer, &at, &l, err, errlen);
}

/* Rejections are logged, but only the first few of each acceptor: a scan or a flood must not fill the log. The
 * rest are counted and summed up once when the acceptor closes. */
#define ST_LOG_FIRST 3

static void st_acc_log(st_acceptor *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void st_acc_log(st_acceptor *a, const char *fmt, ...)
{
    if (a->rejected++ >= ST_LOG_FIRST)
        return;
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "stitch: bootstrap: rank %d %s%s\n", a->rank, line,
            a->rejected == ST_LOG_FIRST ? " (further rejections are counted, not shown)" : "");
}

static void st_pend_drop(st_acceptor *a, int i, uint32_t status, const char *why)
{
    st_pend *p = &a->pend[i];
    if (status) { /* tell a real rank with a different secret why, at once; the text reveals nothing */
        st_answer ans = {ST_BOOT_MAGIC, status, a->rank, 0, 0};
        (void)!send(p->l.fd, &ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    st_acc_log(a, "rejected a connection from %s:%d: %s", inet_ntoa(p->from.sin_addr), ntohs(p->from.sin_port), why);
    close(p->l.fd);
    a->pend[i] = a->pend[--a->npend];
}

/* Same-uid processes only: hand out the local secret (bootstrap.c's opening comment). */
static void st_serve_local(st_acceptor *a)
{
    int fd = accept4(a->ufd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (fd < 0)
        return;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != geteuid())
        st_acc_log(a, "refused the job's local secret to pid %d of uid %u (this job runs as uid %u)", (int)cr.pid,
                   (unsigned)cr.uid, (unsigned)geteuid());
    else
        (void)!send(fd, a->local, 16, MSG_NOSIGNAL | MSG_DONTWAIT); /* 16 bytes fit an empty socket buffer */
    close(fd);
}

static void st_accept_new(st_acceptor *a)
{
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    if (a->npend == ST_MAX_PENDING) { /* full: the oldest goes, so a flood cannot lock new connections out */
        int old = 0;
        for (int i = 1; i < a->npend; i++)
            if (st_ts_before(&a->pend[i].at, &a->pend[old].at))
                old = i;
        st_pend_drop(a, old, 0, "too many handshakes in progress");
    }
    int fd = accept4(a->lfd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return; /* EAGAIN or a connection reset before accept */
    /* Both ends of every channel without Nagle, as the dialer's st_connect: the control frames (an abort, then
     * the process exits) must leave at once, not wait behind an unacked byte and arrive after the data
     * channel's FIN, where exec_msg.c's st_broken looks for them. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    st_pend *p = &a->pend[a->npend++];
    memset(p, 0, sizeof *p);
    p->l.fd = fd, p->from = from;
    st_deadline_in(&p->at, ST_HANDSHAKE_MS);
    if (getrandom(p->l.na, sizeof p->l.na, 0) != sizeof p->l.na ||
        send(fd, p->l.na, sizeof p->l.na, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof p->l.na)
        st_pend_drop(a, a->npend - 1, 0, "cannot send the challenge");
}

/* Bytes arrived on pending connection i: 1 when its hello is complete and proves a rank of this job (answered,
 * moved to *out), 0 otherwise (still partial, or dropped). */
static int st_pend_read(st_acceptor *a, int i, st_link *out)
{
    st_pend *p = &a->pend[i];
    ssize_t n = recv(p->l.fd, (char *)&p->l.h + p->got, sizeof p->l.h - p->got, MSG_DONTWAIT);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            st_pend_drop(a, i, 0, n == 0 ? "closed before its hello" : strerror(errno));
        return 0;
    }
    if ((p->got += (size_t)n) < sizeof p->l.h)
        return 0;
    char why[160];
    int status = st_hello_check(a->key, &p->l, a->size, why, sizeof why);
    if (status != 0) {
        st_pend_drop(a, i, status < 0 ? 0 : (uint32_t)status, why);
        return 0;
    }
    *out = p->l;
    a->pend[i] = a->pend[--a->npend];
    return 1;
}

/* Send the acceptor's proof on an authenticated link (the caller has decided to keep it). */
static int st_answer_ok(st_acceptor *a, const st_link *l, const struct timespec *at, char *err, size_t errlen)
{
    st_answer ans = {ST_BOOT_MAGIC, 0, a->rank, 0, 0};
    ans.mac = st_answer_mac(a->key, l, &ans);
    return st_io_all(l->fd, &ans, sizeof ans, 1, at, err, errlen);
}

/* The next connection that proves it is a rank of this job, its handshake complete but not yet answered (the
 * caller answers with st_answer_ok or refuses with st_link_refuse). All handshakes run at once: each pending
 * connection has its own ST_HANDSHAKE_MS, and a silent one delays nobody. 0, or -1 at the deadline. */
static int st_acceptor_next(st_acceptor *a, st_link *out, const struct timespec *at, char *err, size_t errlen)
{
    struct pollfd pf[ST_MAX_PENDING + 2];
    for (;;) {
        long left = st_ms_left(at);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        for (int i = a->npend - 1; i >= 0; i--) /* expired handshakes */
            if (!st_ts_before(&now, &a->pend[i].at))
                st_pend_drop(a, i, 0, "no hello within 2 s");
        if (left <= 0) {
            snprintf(err, errlen, "timed out waiting for peers to connect");
            return -1;
        }
        int n = 0;
        pf[n++] = (struct pollfd){a->lfd, POLLIN, 0};
        if (a->ufd >= 0)
            pf[n++] = (struct pollfd){a->ufd, POLLIN, 0};
        for (int i = 0; i < a->npend; i++) {
            pf[n++] = (struct pollfd){a->pend[i].l.fd, POLLIN, 0};
            long ms = st_ms_left(&a->pend[i].at) + 1;
            left = ms < left ? ms : left;
        }
        int r = poll(pf, (nfds_t)n, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR) {
            snprintf(err, errlen, "poll: %s", strerror(errno));
            return -1;
        }
        if (r <= 0)
            continue;
        int base = a->ufd >= 0 ? 2 : 1;
        for (int i = n - 1; i >= base; i--) /* backwards: a drop moves the last entry into slot i - base */
            if (pf[i].revents && st_pend_read(a, i - base, out))
                return 0;
        if (a->ufd >= 0 && pf[1].revents)
            st_serve_local(a);
        if (pf[0].revents)
            st_accept_new(a);
    }
}

/* Refuse an authenticated link the caller cannot use (a duplicate, a channel out of order). */
static void st_link_refuse(st_acceptor *a, st_link *l, const char *why)
{
    st_answer ans = {ST_BOOT_MAGIC, ST_REJ_DUP, a->rank, 0, 0};
    (void)!send(l->fd, &ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT);
    st_acc_log(a, "dropped %s from rank %d (channel %u)", why, l->h.rank, l->h.channel);
    close(l->fd);
}

static void st_acceptor_close(st_acceptor *a)
{
    while (a->npend > 0) { /* still in their handshake when the job no longer needs anyone: not logged */
        close(a->pend[a->npend - 1].l.fd);
        a->npend--;
    }
    if (a->ufd >= 0)
        close(a->ufd);
    a->ufd = -1;
    if (a->rejected > ST_LOG_FIRST)
        fprintf(stderr, "stitch: bootstrap: rank %d rejected %d connections in all (%d not shown)\n", a->rank,
                a->rejected, a->rejected - ST_LOG_FIRST);
    a->rejected = 0;
}

/* ---- the phases ------------------------------------------------------------------------------------------- */

static void st_boot_free(st_boot *b)
{
    free(b->peers);
    free(b->ctrl);
    free(b->data);
    b->peers = NULL, b->ctrl = b->data = NULL;
}

void st_boot_close(st_boot *b)
{
    for (int i = 0; b->ctrl && i < b->size; i++) {
        if (b->ctrl[i] >= 0)
            close(b->ctrl[i]);
        if (b->data[i] >= 0)
            close(b->data[i]);
    }
    st_boot_free(b);
}

/* One rank's entry at the root, with its mac under the link's 'I' key. */
static int st_root_take(st_boot *b, st_acceptor *a, st_link *l, const struct timespec *at)
{
    char why[160];
    uint64_t mac;
    if (st_answer_ok(a, l, at, why, sizeof why) != 0 ||
        st_io_all(l->fd, &b->peers[l->h.rank], sizeof *b->peers, 0, at, why, sizeof why) != 0 ||
        st_io_all(l->fd, &mac, sizeof mac, 0, at, why, sizeof why) != 0) {
        st_acc_log(a, "dropped rank %d during its exchange: %s", l->h.rank, why);
        return -1;
    }
    if (st_peers_check(b->key, l, 'I', &b->peers[l->h.rank], 1, mac, why, sizeof why) != 0) {
        st_acc_log(a, "dropped rank %d: %s", l->h.rank, why);
        return -1;
    }
    return 0;
}

/* After the gather the root sends each rank a verdict, then its payload and mac: the table (ST_V_TABLE, len the
 * table's size, mac 'T' over the table), or a failure (ST_V_FAIL: the failed rank, its status and the text that
 * names it, mac 'F' over verdict and text). A rank that failed init sends the root the same failure frame after its
 * entry, under 'R'. The labels keep one kind of frame from being taken for another. */
typedef struct st_verdict {
    uint32_t kind, len;
    int32_t status, rank;
} st_verdict;
enum { ST_V_TABLE = 1, ST_V_FAIL = 2 };
#define ST_FAIL_TEXT 1024

/* The first failure the job heard of: the rank, its status, and the sentence every rank reports. */
typedef struct st_failure {
    int rank;
    stitch_status_t status;
    char text[ST_FAIL_TEXT];
} st_failure;

static uint64_t st_fail_mac(const uint64_t key[2], char label, const st_link *l, const st_verdict *v, const char *text)
{
    char buf[sizeof *v + ST_FAIL_TEXT];
    memcpy(buf, v, sizeof *v);
    memcpy(buf + sizeof *v, text, v->len);
    return st_link_mac(key, label, l, buf, sizeof *v + v->len);
}

static int st_fail_send(const uint64_t key[2], char label, const st_link *l, const st_failure *f,
                        const struct timespec *at, char *err, size_t errlen)
{
    st_verdict v = {ST_V_FAIL, (uint32_t)strnlen(f->text, ST_FAIL_TEXT - 1), (int32_t)f->status, f->rank};
    uint64_t mac = st_fail_mac(key, label, l, &v, f->text);
    if (st_io_all(l->fd, &v, sizeof v, 1, at, err, errlen) != 0 ||
        st_io_all(l->fd, (void *)f->text, v.len, 1, at, err, errlen) != 0)
        return -1;
    return st_io_all(l->fd, &mac, sizeof mac, 1, at, err, errlen);
}

/* The text and mac of a failure whose verdict `v` was read; 0 with *f filled, -1 with why. */
static int st_fail_recv(const uint64_t key[2], char label, const st_link *l, const st_verdict *v, st_failure *f,
                        const struct timespec *at, char *err, size_t errlen)
{
    uint64_t mac;
    if (v->kind != ST_V_FAIL || v->len >= ST_FAIL_TEXT || v->status == STITCH_OK) {
        snprintf(err, errlen, "a malformed failure report");
        return -1;
    }
    if (st_io_all(l->fd, f->text, v->len, 0, at, err, errlen) != 0 ||
        st_io_all(l->fd, &mac, sizeof mac, 0, at, err, errlen) != 0)
        return -1;
    f->text[v->len] = '\0';
    if (mac != st_fail_mac(key, label, l, v, f->text)) {
        snprintf(err, errlen, "a failure report without a valid mac");
        return -1;
    }
    f->rank = v->rank, f->status = (stitch_status_t)v->status;
    return 0;
}

/* The first failure wins: rank r's, said as the others will say it. */
static void st_failure_set(st_failure *f, const st_boot *b, int r, stitch_status_t status, const char *why)
{
    if (f->rank >= 0)
        return;
    f->rank = r, f->status = status;
    snprintf(f->text, sizeof f->text, "rank %d of %d (pid %u on %.64s) failed init: %.900s", r, b->size, b->peers[r].pid,
             b->peers[r].hostname, why);
}

/* The root heard of a failure: tell every rank that waits for the table, and let it go (fd -2: arrived, done). */
static void st_root_tell(const st_boot *b, st_link *links, const st_failure *f, const struct timespec *at)
{
    char why[160];
    for (int i = 1; i < b->size; i++)
        if (links[i].fd >= 0) {
            (void)st_fail_send(b->key, 'F', &links[i], f, at, why, sizeof why);
            close(links[i].fd);
            links[i].fd = -2;
        }
}

/* A rank that failed init sent its entry: read its report (after the entry, on the same link). */
static void st_root_hear(st_boot *b, st_acceptor *a, st_link *l, st_failure *f, const struct timespec *at)
{
    st_verdict v;
    st_failure got;
    char why[160];
    if (st_io_all(l->fd, &v, sizeof v, 0, at, why, sizeof why) != 0 || v.rank != l->h.rank ||
        st_fail_recv(b->key, 'R', l, &v, &got, at, why, sizeof why) != 0) {
        if (v.rank != l->h.rank)
            snprintf(why, sizeof why, "its report names another rank");
        st_acc_log(a, "rank %d failed init, but its report was unreadable: %s", l->h.rank, why);
        st_failure_set(f, b, l->h.rank, STITCH_ERR_CONFIG, "(its report was unreadable)");
        return;
    }
    st_failure_set(f, b, l->h.rank, got.status, got.text);
}

/* Phase 1 at the root: collect everyone's info, send the table back, each copy with its link's mac. When a rank
 * failed init (the root itself, or one whose entry says so), every rank that has arrived is told at once and every
 * later one as it arrives; -3 then, with the failure in *f. */
static int st_root_gather(st_boot *b, st_acceptor *a, const st_boot_opts *o, st_failure *f,
                          const struct timespec *at, char *err, size_t errlen)
{
    const int size = b->size; /* links' length: every loop below is bounded by it */
    st_link *links = malloc(sizeof *links * (size_t)size);
    size_t tl = sizeof *b->peers * (size_t)size;
    int got = 1, rc = 0;
    if (!links) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < size; i++)
        links[i].fd = -1;
    if (o->fail)
        st_failure_set(f, b, 0, o->fail_status, o->fail);
    while (rc == 0 && got < size) {
        st_link l;
        if (st_acceptor_next(a, &l, at, err, errlen) != 0) {
            snprintf(err + strlen(err), errlen - strlen(err), " (%d of %d ranks arrived; %d connections rejected, "
                     "see the log)", got, size, a->rejected);
            rc = -1;
        } else if (l.h.channel != ST_CH_BOOT || l.h.rank <= 0 || l.h.rank >= size || links[l.h.rank].fd != -1) {
            st_link_refuse(a, &l, l.h.channel != ST_CH_BOOT ? "a premature mesh hello" : "a duplicate hello");
        } else if (st_root_take(b, a, &l, at) != 0) {
            close(l.fd);
        } else {
            if (b->peers[l.h.rank].failed)
                st_root_hear(b, a, &l, f, at), close(l.fd), l.fd = -2;
            links[l.h.rank] = l, got++;
        }
        if (f->rank >= 0)
            st_root_tell(b, links, f, at);
    }
    for (int i = 1; rc == 0 && f->rank < 0 && i < size; i++) {
        st_verdict v = {ST_V_TABLE, (uint32_t)tl, 0, 0};
        uint64_t mac = st_link_mac(b->key, 'T', &links[i], b->peers, tl);
        if (st_io_all(links[i].fd, &v, sizeof v, 1, at, err, errlen) != 0 ||
            st_io_all(links[i].fd, b->peers, tl, 1, at, err, errlen) != 0 ||
            st_io_all(links[i].fd, &mac, sizeof mac, 1, at, err, errlen) != 0)
            rc = -1;
    }
    for (int i = 1; i < size; i++)
        if (links[i].fd >= 0)
            close(links[i].fd);
    free(links);
    if (f->rank >= 0 && rc != 0) /* the failure is the news; the ranks that never came are a footnote */
        snprintf(f->text + strlen(f->text), sizeof f->text - strlen(f->text), " (and %d of %d ranks never "
                 "arrived at the root)", size - got, size);
    return f->rank >= 0 ? -3 : rc;
}

/* The root's answer to my entry: the table, or the failure of a rank (-3, in *f). */
static int st_leaf_verdict(st_boot *b, const st_link *l, st_failure *f, const struct timespec *at, char *err,
                           size_t errlen)
{
    st_verdict v;
    uint64_t mac;
    size_t tl = sizeof *b->peers * (size_t)b->size;
    if (st_io_all(l->fd, &v, sizeof v, 0, at, err, errlen) != 0)
        return -1;
    if (v.kind == ST_V_FAIL)
        return st_fail_recv(b->key, 'F', l, &v, f, at, err, errlen) == 0 ? -3 : -1;
    if (v.kind != ST_V_TABLE || v.len != tl) {
        snprintf(err, errlen, "a malformed answer (kind %u, %u bytes)", v.kind, v.len);
        return -1;
    }
    if (st_io_all(l->fd, b->peers, tl, 0, at, err, errlen) != 0 ||
        st_io_all(l->fd, &mac, sizeof mac, 0, at, err, errlen) != 0)
        return -1;
    return st_peers_check(b->key, l, 'T', b->peers, (size_t)b->size, mac, err, errlen) == 0 ? 0 : -1;
}

static int st_leaf_gather(st_boot *b, const st_boot_opts *o, const struct sockaddr_in *root, st_failure *f,
                          const struct timespec *at, char *err, size_t errlen)
{
    char why[300];
    st_link l;
    uint64_t mac;
    int fd = st_dial(root, b->key, ST_CH_BOOT, b->rank, b->size, 0, at, &l, why, sizeof why);
    if (fd < 0) {
        snprintf(err, errlen, "rank %d: root: %s", b->rank, why);
        return l.refused ? -2 : -1;
    }
    mac = st_link_mac(b->key, 'I', &l, &b->peers[b->rank], sizeof *b->peers);
    int rc = st_io_all(fd, &b->peers[b->rank], sizeof *b->peers, 1, at, why, sizeof why);
    if (rc == 0)
        rc = st_io_all(fd, &mac, sizeof mac, 1, at, why, sizeof why);
    if (rc == 0 && o->fail) { /* my report; I wait for nothing more */
        st_failure_set(f, b, b->rank, o->fail_status, o->fail);
        snprintf(f->text, sizeof f->text, "%s", o->fail);
        rc = st_fail_send(b->key, 'R', &l, f, at, why, sizeof why) == 0 ? -3 : -1;
    } else if (rc == 0) {
        rc = st_leaf_verdict(b, &l, f, at, why, sizeof why);
    }
    if (rc == -1)
        snprintf(err, errlen, "rank %d: exchange with the root: %s", b->rank, why);
    close(fd);
    return rc;
}

/* Phase 2: I dial every lower rank, then accept every higher one. Rank 0 only accepts, so by induction every
 * dial meets an acceptor. Both ends of every channel have proved the key to each other (st_dial_hello). */
static int st_mesh(st_boot *b, st_acceptor *a, int (*need_data)(const st_boot *, int, void *), void *arg,
                   const struct timespec *at, char *err, size_t errlen)
{
    int expect = 0;
    char why[256];
    for (int j = 0; j < b->rank; j++) {
        for (int ch = ST_CH_CTRL; ch <= (need_data(b, j, arg) ? ST_CH_DATA : ST_CH_CTRL); ch++) {
            struct sockaddr_in sa = {0};
            st_link l;
            sa.sin_family = AF_INET, sa.sin_addr.s_addr = b->peers[j].ip, sa.sin_port = b->peers[j].port;
            int fd = st_dial(&sa, b->key, (uint32_t)ch, b->rank, b->size, j, at, &l, why, sizeof why);
            if (fd < 0) {
                snprintf(err, errlen, "rank %d: connecting to rank %d (%s): %s", b->rank, j, b->peers[j].hostname, why);
                return l.refused ? -2 : -1;
            }
            *(ch == ST_CH_CTRL ? &b->ctrl[j] : &b->data[j]) = fd;
        }
    }
    for (int j = b->rank + 1; j < b->size; j++)
        expect += 1 + (need_data(b, j, arg) != 0);
    while (expect > 0) {
        st_link l;
        if (st_acceptor_next(a, &l, at, why, sizeof why) != 0) {
            snprintf(err, errlen, "rank %d: waiting for higher ranks to connect: %s", b->rank, why);
            return -1;
        }
        int *slot = l.h.channel == ST_CH_CTRL ? &b->ctrl[l.h.rank] : l.h.channel == ST_CH_DATA ? &b->data[l.h.rank]
                                                                                                  : NULL;
        if (l.h.rank <= b->rank || !slot || *slot >= 0) {
            st_link_refuse(a, &l, "an unexpected hello");
            continue;
        }
        if (st_answer_ok(a, &l, at, why, sizeof why) != 0) {
            close(l.fd);
            snprintf(err, errlen, "rank %d: answering rank %d: %s", b->rank, l.h.rank, why);
            return -1;
        }
        *slot = l.fd, expect--;
    }
    return 0;
}

static int st_boot_alloc(st_boot *b, int rank, int size)
{
    memset(b, 0, sizeof *b);
    b->rank = rank, b->size = size;
    b->peers = calloc((size_t)size, sizeof *b->peers);
    b->ctrl = malloc(sizeof *b->ctrl * (size_t)size);
    b->data = malloc(sizeof *b->data * (size_t)size);
    if (!b->peers || !b->ctrl || !b->data) {
        st_boot_free(b);
        return -1;
    }
    for (int i = 0; i < size; i++)
        b->ctrl[i] = b->data[i] = -1;
    return 0;
}

/* My listener and my own entry of the table. The root listens on the root address only (a loopback root is not
 * reachable from the network at all); where that address is not one of this host's (NAT, a name that resolves
 * differently here), on every interface, said once on stderr. */
static int st_boot_me(st_boot *b, const st_boot_env *e, const st_boot_opts *o, const struct sockaddr_in *root,
                      char *err, size_t errlen)
{
    const char *ifname = o->ifname;
    st_peer_info *me = &b->peers[b->rank];
    struct sockaddr_in sa = {0};
    socklen_t sl = sizeof sa;
    uint32_t ip;
    int lfd;
    if (ntohl(root->sin_addr.s_addr) >> 24 == 127 && !(ifname && *ifname))
        ip = root->sin_addr.s_addr; /* a job on loopback stays on loopback */
    else if (st_local_addr(root, ifname, &ip, err, errlen) != 0)
        return -1;
    if (b->rank != 0) {
        lfd = st_listen(ip, 0, err, errlen);
    } else if ((lfd = st_listen(root->sin_addr.s_addr, e->root_port, err, errlen)) >= 0) {
        ip = root->sin_addr.s_addr; /* peers reach my listener where they reached the root */
        st_release_reserved(ip, e->root_port);
    } else if (errno == EADDRNOTAVAIL) {
        fprintf(stderr, "stitch: bootstrap: the root address %s is not an address of this host; listening on port "
                "%d of every interface\n", e->root_host, e->root_port);
        lfd = st_listen(INADDR_ANY, e->root_port, err, errlen);
    }
    if (lfd < 0 || getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    me->ip = ip, me->port = sa.sin_port, me->pid = (uint32_t)getpid();
    me->host = st_host_id(me->hostname, sizeof me->hostname);
    me->tag = o->tag, me->cats = o->cats, me->verbs = (uint8_t)o->verbs, me->failed = o->fail != NULL;
    snprintf(me->cats_text, sizeof me->cats_text, "%s", o->cats_text ? o->cats_text : "");
    return lfd;
}

/* ---- the job's secret ------------------------------------------------------------------------------------- */

/* The abstract unix socket where a loopback job's root hands out its local secret: per uid and job id, in the
 * network namespace of the job (abstract names are per namespace, as loopback is). */
static socklen_t st_local_name(const st_boot_env *e, struct sockaddr_un *su)
{
    static const uint64_t k[2] = {0x7374697463682d6cULL, 0x6f63616c2d6e616dULL};
    memset(su, 0, sizeof *su);
    su->sun_family = AF_UNIX;
    int n = snprintf(su->sun_path + 1, sizeof su->sun_path - 1, "stitch-boot-%u-%016llx", (unsigned)geteuid(),
                     (unsigned long long)st_siphash(k, e->secret, strlen(e->secret)));
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Root: a fresh random secret and the socket that gives it to processes of my uid. */
static int st_local_serve(const st_boot_env *e, unsigned char secret[16], char *err, size_t errlen)
{
    struct sockaddr_un su;
    socklen_t sl = st_local_name(e, &su);
    if (getrandom(secret, 16, 0) != 16) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&su, sl) != 0 || listen(fd, 1024) != 0) {
        snprintf(err, errlen, "cannot create the job's local rendezvous socket @%s: %s%s", su.sun_path + 1,
                 strerror(errno), errno == EADDRINUSE ? " (another job with this root address runs, or a process "
                 "holds the name; set STITCH_SECRET to avoid it)" : "");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Leaf: fetch the local secret from the root's socket, which must belong to my uid. */
static int st_local_fetch(const st_boot_env *e, unsigned char secret[16], const struct timespec *at, char *err,
                          size_t errlen)
{
    struct sockaddr_un su;
    socklen_t sl = st_local_name(e, &su);
    char why[128] = "the root has not created it";
    while (st_ms_left(at) > 0) {
        struct ucred cr;
        socklen_t cl = sizeof cr;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            snprintf(err, errlen, "socket: %s", strerror(errno));
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&su, sl) != 0) {
            snprintf(why, sizeof why, "%s", strerror(errno));
        } else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != geteuid()) {
            snprintf(why, sizeof why, "it is held by pid %d of uid %u, not this job's uid %u", (int)cr.pid,
                     (unsigned)cr.uid, (unsigned)geteuid());
        } else if (fcntl(fd, F_SETFL, O_NONBLOCK) == 0 && st_io_all(fd, secret, 16, 0, at, why, sizeof why) == 0) {
            close(fd);
            return 0;
        }
        close(fd);
        usleep(20000);
    }
    snprintf(err, errlen, "rank %d: no local secret from the root's socket @%s before the deadline: %s", e->rank,
             su.sun_path + 1, why);
    return -1;
}

static void st_hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* The key of this job (the opening comment says which secret in which mode). Rank 0 of a loopback job without a
 * secret also gets the socket that hands out the local secret (*ufd), which its acceptor serves. */
static int st_boot_key(const st_boot_env *e, const st_boot_opts *o, const struct sockaddr_in *root, st_boot *b,
                       int *ufd, unsigned char local[16], const struct timespec *at, char *err, size_t errlen)
{
    static int warned, warned_empty;
    char hex[33];
    *ufd = -1;
    if (o->secret_empty && e->rank == 0 && !warned_empty++)
        fprintf(stderr, "stitch: warning: STITCH_SECRET is set but empty, which means unset: this job runs on %s\n",
                e->secret_kind == ST_SECRET_RANDOM ? "the unique id's secret"
                : ntohl(root->sin_addr.s_addr) >> 24 == 127 ? "a secret the root hands to this uid's processes"
                                                           : "its job id, which is no secret");
    if (o->secret && *o->secret) {
        st_derive_key(o->secret, b->key);
        return 0;
    }
    if (e->secret_kind == ST_SECRET_RANDOM) {
        st_derive_key(e->secret, b->key);
        return 0;
    }
    if (ntohl(root->sin_addr.s_addr) >> 24 == 127) {
        if (e->rank == 0 ? (*ufd = st_local_serve(e, local, err, errlen)) < 0
                         : st_local_fetch(e, local, at, err, errlen) != 0)
            return -1;
        st_hex(local, 16, hex);
        st_derive_key(hex, b->key);
        return 0;
    }
    if (e->rank == 0 && !warned++)
        fprintf(stderr, "stitch: warning: this %s job spans hosts and has no STITCH_SECRET: its key comes from the "
                "job id, which is no secret, so anyone who can reach %s:%d can join it; set STITCH_SECRET to the "
                "same secret on every rank\n", e->launcher, e->root_host, e->root_port);
    st_derive_key(e->secret, b->key);
    return 0;
}

stitch_status_t st_boot_run(const st_boot_env *e, const st_boot_opts *o, st_boot *out, char *err, size_t errlen)
{
    struct sockaddr_in root;
    struct timespec at;
    char why[400];
    st_failure f = {-1, STITCH_OK, ""};
    st_acceptor a = {.lfd = -1, .ufd = -1, .rank = e->rank, .size = e->size, .key = out->key};
    st_deadline_in(&at, o->timeout_ms < 0 ? 24 * 3600 * 1000 : o->timeout_ms);
    if (st_boot_alloc(out, e->rank, e->size) != 0) {
        snprintf(err, errlen, "bootstrap: out of memory for %d ranks", e->size);
        return STITCH_ERR_NO_MEMORY;
    }
    if (st_resolve(e->root_host, e->root_port, &root, why, sizeof why) != 0) {
        snprintf(err, errlen, "bootstrap (%s): %s", e->launcher, why);
        st_boot_free(out);
        return STITCH_ERR_SYSTEM;
    }
    int rc = st_boot_key(e, o, &root, out, &a.ufd, a.local, &at, why, sizeof why), sys = rc != 0;
    if (rc == 0) {
        a.lfd = st_boot_me(out, e, o, &root, why, sizeof why);
        rc = sys = a.lfd < 0;
    }
    if (rc == 0)
        rc = e->rank == 0 ? st_root_gather(out, &a, o, &f, &at, why, sizeof why)
                          : st_leaf_gather(out, o, &root, &f, &at, why, sizeof why);
    if (a.ufd >= 0) { /* every rank has the local secret now: stop handing it out */
        close(a.ufd);
        a.ufd = -1;
    }
    if (rc == 0)
        rc = st_mesh(out, &a, o->need_data, o->arg, &at, why, sizeof why);
    st_acceptor_close(&a);
    if (a.lfd >= 0)
        close(a.lfd);
    if (rc == -3) { /* a rank failed init: its words, not the bootstrap's */
        snprintf(err, errlen, "%s", f.text);
        st_boot_close(out);
        return f.status;
    }
    if (rc != 0) {
        snprintf(err, errlen, "bootstrap (%s, root %s:%d, rank %d of %d): %s", e->launcher, e->root_host,
                 e->root_port, e->rank, e->size, why);
        st_boot_close(out);
        return sys ? STITCH_ERR_SYSTEM : rc == -2 ? STITCH_ERR_CONFIG : STITCH_ERR_TIMEOUT;
    }
    return STITCH_OK;
}

stitch_status_t st_boot_barrier(st_boot *b, int timeout_ms, char *err, size_t errlen)
{
    struct timespec at;
    char token = 'B', why[128];
    st_deadline_in(&at, timeout_ms < 0 ? 24 * 3600 * 1000 : timeout_ms);
    for (int i = 0; i < b->size; i++)
        if (i != b->rank && st_io_all(b->ctrl[i], &token, 1, 1, &at, why, sizeof why) != 0)
            goto fail;
    for (int i = 0; i < b->size; i++)
        if (i != b->rank && (st_io_all(b->ctrl[i], &token, 1, 0, &at, why, sizeof why) != 0 || token != 'B'))
            goto fail;
    return STITCH_OK;
fail:
    if (token != 'B')
        snprintf(why, sizeof why, "unexpected byte on a control channel");
    snprintf(err, errlen, "bootstrap barrier: rank %d: %s", b->rank, why);
    return STITCH_ERR_TIMEOUT;
}
