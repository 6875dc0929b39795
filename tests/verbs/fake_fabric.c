/* fake_fabric.c - the emulator's shared fabric, node identity, kicks across processes, and fault injection.
 *
 * The fabric is one fk_fabric: the QP registry with an inbound packet ring and an ACK/NAK mailbox per QP, and one
 * node per process (its pid, whether a deadpeer fault removed it, which ports are down). Threads of one process use
 * an anonymous shared mapping made on first use (a forked child shares it too); processes started apart use
 * /dev/shm/stitch-fake-<id>, made by st_fake_fabric_create and named by STITCH_FAKE_FABRIC.
 *
 * Kicks: each completion channel has a Unix datagram socket bound to the abstract name
 * "stfk.<fabric uid>.<pid>.<serial>". Whoever puts a packet into a QP's ring, or an ACK into its mailbox, sends one
 * byte to the channels of that QP's CQs (their serials are in the QP's slot). A waker thread in the receiving
 * process (fakeverbs.c) runs the engine on it, so a process blocked in poll() on a channel's fd wakes exactly when
 * a CQ event is there, as with a real NIC.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_int.h"

fk_global G = {.lock = PTHREAD_MUTEX_INITIALIZER, .node = -1, .kick_sock = -1, .waker_ep = -1};

static const char *kind_names[FK_NKINDS] = {"drop", "rkey", "qperr", "portdown", "deadpeer", "rnr"};

uint64_t fk_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t fk_rand(uint64_t *s)
{
    /* splitmix64: deterministic, good enough for keys and fault choices */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fk_plock(pthread_mutex_t *m)
{
    /* a process killed while holding a slot lock leaves it to the next locker (robust mutex) */
    if (pthread_mutex_lock(m) == EOWNERDEAD)
        pthread_mutex_consistent(m);
}

static void init_mutex(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
}

static void fabric_init(fk_fabric *f)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        seed = (uint64_t)fk_now() ^ (uint64_t)getpid();
    f->uid = fk_rand(&seed);
    init_mutex(&f->lock);
    f->next_qpn = 0x11 + (uint32_t)(fk_rand(&seed) % 0x1000); /* like a NIC: not 0, not predictable */
    for (int i = 0; i < FK_MAX_QPS; i++)
        init_mutex(&f->qps[i].lock);
    __atomic_store_n(&f->magic, FK_MAGIC, __ATOMIC_RELEASE);
}

static fk_fabric *map_segment(int fd, int create)
{
    size_t size = sizeof(fk_fabric);
    if (create && ftruncate(fd, (off_t)size) != 0)
        return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int open_named(const char *id)
{
    char name[96];
    snprintf(name, sizeof name, "/stitch-fake-%s", id);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0)
        return -1;
    fk_fabric *f = map_segment(fd, 0);
    close(fd);
    if (!f)
        return -1;
    if (__atomic_load_n(&f->magic, __ATOMIC_ACQUIRE) != FK_MAGIC) {
        munmap(f, sizeof *f);
        errno = EPROTO;
        return -1;
    }
    G.fab = f;
    G.fab_size = sizeof *f;
    G.fab_shared = 1;
    return 0;
}

int st_fake_fabric_create(char *id, size_t idlen)
{
    fk_enter();
    int rc = -1;
    if (G.live.contexts) {
        errno = EBUSY; /* devices are open on the old fabric */
        goto out;
    }
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = fk_now();
    char buf[64], name[96];
    snprintf(buf, sizeof buf, "%d-%08x", (int)getpid(), (unsigned)r);
    snprintf(name, sizeof name, "/stitch-fake-%s", buf);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        goto out;
    fk_fabric *f = map_segment(fd, 1);
    close(fd);
    if (!f) {
        shm_unlink(name);
        goto out;
    }
    fabric_init(f);
    if (G.fab)
        munmap(G.fab, G.fab_size);
    G.fab = f;
    G.fab_size = sizeof *f;
    G.fab_shared = 1;
    G.node = -1;
    if (snprintf(id, idlen, "%s", buf) >= (int)idlen) {
        errno = ENAMETOOLONG;
        goto out;
    }
    rc = 0;
out:
    fk_leave();
    return rc;
}

void st_fake_fabric_destroy(const char *id)
{
    char name[96];
    snprintf(name, sizeof name, "/stitch-fake-%s", id);
    shm_unlink(name);
}

int fk_attach(void)
{
    if (!G.fab) {
        const char *id = getenv("STITCH_FAKE_FABRIC");
        if (id && *id) {
            if (open_named(id) != 0) {
                fprintf(stderr, "fakeverbs: STITCH_FAKE_FABRIC=%s: cannot attach: %s\n", id, strerror(errno));
                return -1;
            }
        } else {
            void *p = mmap(NULL, sizeof(fk_fabric), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                return -1;
            G.fab = p;
            G.fab_size = sizeof(fk_fabric);
            G.fab_shared = 0;
            fabric_init(G.fab);
        }
    }
    if (G.node < 0) {
        fk_fabric *f = G.fab;
        fk_plock(&f->lock);
        int n = f->nnodes < FK_MAX_NODES ? f->nnodes++ : -1;
        if (n >= 0) {
            memset(&f->nodes[n], 0, sizeof f->nodes[n]);
            f->nodes[n].used = 1;
            f->nodes[n].pid = getpid();
        }
        pthread_mutex_unlock(&f->lock);
        if (n < 0) {
            fprintf(stderr, "fakeverbs: more than %d processes on one fabric\n", FK_MAX_NODES);
            errno = ENOSPC;
            return -1;
        }
        G.node = n;
    }
    return 0;
}

/* After fork the child keeps the parent's heap objects; they are the parent's, so the child forgets them (without
 * freeing: the parent frees its own) and takes a node of its own on first use. */
static void forget_parent(void)
{
    G.pid = getpid();
    G.node = -1;
    G.ctxs = NULL;
    G.qps = NULL;
    G.cqs = NULL;
    G.chans = NULL;
    memset(G.hl, 0, sizeof G.hl);
    memset(G.hr, 0, sizeof G.hr);
    memset(&G.live, 0, sizeof G.live);
    memset(G.fired_local, 0, sizeof G.fired_local);
    if (G.kick_sock >= 0)
        close(G.kick_sock);
    G.kick_sock = -1;
    if (G.waker_ep >= 0)
        close(G.waker_ep); /* the parent's waker thread did not come along */
    G.waker_ep = -1;
    G.qp_ordinal = 0;
}

void fk_enter(void)
{
    pthread_mutex_lock(&G.lock);
    if (G.pid != getpid()) {
        int first = G.pid == 0;
        forget_parent();
        if (first || !G.faults_loaded)
            fk_load_env();
    }
}

void fk_leave(void)
{
    pthread_mutex_unlock(&G.lock);
}

void fk_load_env(void)
{
    const char *s = getenv("STITCH_FAKE_DEVICES");
    G.ndev = s && atoi(s) > 0 ? atoi(s) : 2;
    if (G.ndev > FK_MAX_DEVS)
        G.ndev = FK_MAX_DEVS;
    s = getenv("STITCH_FAKE_TIME_DIV");
    if (!G.div)
        G.div = s && atoi(s) > 0 ? (unsigned)atoi(s) : 16;
    s = getenv("STITCH_FAKE_MTU");
    int mtu = s ? atoi(s) : 1024;
    G.active_mtu = mtu == 256 ? IBV_MTU_256 : mtu == 512 ? IBV_MTU_512 : mtu == 2048 ? IBV_MTU_2048
                 : mtu == 4096 ? IBV_MTU_4096 : IBV_MTU_1024;
    if (getrandom(&G.rng, sizeof G.rng, 0) != (ssize_t)sizeof G.rng)
        G.rng = fk_now();
    s = getenv("STITCH_FAKE_FAULTS");
    G.faults_loaded = 1;
    if (s && *s) {
        char err[256];
        pthread_mutex_unlock(&G.lock); /* st_fake_faults takes the lock */
        int rc = st_fake_faults(s, err, sizeof err);
        pthread_mutex_lock(&G.lock);
        if (rc != 0) {
            fprintf(stderr, "fakeverbs: STITCH_FAKE_FAULTS: %s\n", err);
            abort();
        }
    }
}

void st_fake_set_time_div(unsigned div)
{
    fk_enter();
    G.div = div ? div : 16;
    fk_leave();
}

void st_fake_set_claim_hook(void (*hook)(void))
{
    fk_enter();
    G.claim_hook = hook;
    fk_leave();
}

int st_fake_qpn_visible(uint32_t qpn)
{
    if (!G.fab)
        return 0;
    for (int i = 0; i < FK_MAX_QPS; i++)
        if (__atomic_load_n(&G.fab->qps[i].qpn, __ATOMIC_ACQUIRE) == qpn)
            return 1;
    return 0;
}

/* ---- GIDs: 0 link-local, 1 empty, 2 ::ffff:10.<dev>.<node/256>.<node%256+1>, the rest empty ------------------ */
void fk_gid(int node, int dev, int index, union ibv_gid *gid)
{
    memset(gid, 0, sizeof *gid);
    if (index == 0) {
        gid->raw[0] = 0xfe;
        gid->raw[1] = 0x80;
        gid->raw[8] = 0x02;
        gid->raw[11] = 0xff;
        gid->raw[12] = 0xfe;
        gid->raw[13] = (uint8_t)dev;
        gid->raw[14] = (uint8_t)(node >> 8);
        gid->raw[15] = (uint8_t)(node + 1);
    } else if (index == 2) {
        gid->raw[10] = 0xff;
        gid->raw[11] = 0xff;
        gid->raw[12] = 10;
        gid->raw[13] = (uint8_t)dev;
        gid->raw[14] = (uint8_t)(node >> 8);
        gid->raw[15] = (uint8_t)(node + 1);
    }
}

/* Which node and device own gid (index 0 or 2 of some port); 0 or -1 */
int fk_gid_node(const union ibv_gid *gid, int dev_hint, int *node, int *dev)
{
    int nn = __atomic_load_n(&G.fab->nnodes, __ATOMIC_ACQUIRE);
    for (int n = 0; n < nn; n++)
        for (int d = 0; d < FK_MAX_DEVS; d++)
            for (int i = 0; i <= 2; i += 2) {
                union ibv_gid g;
                fk_gid(n, d, i, &g);
                if (memcmp(&g, gid, sizeof g) == 0) {
                    *node = n;
                    *dev = d;
                    return 0;
                }
            }
    (void)dev_hint;
    return -1;
}

/* A zombie counts as dead: the kill tests leave killed ranks unreaped until the launcher waits. */
int fk_pid_alive(pid_t pid)
{
    if (pid == getpid())
        return 1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* ---- kicks ---------------------------------------------------------------------------------------------------- */
void fk_kick_serial(pid_t pid, uint32_t serial)
{
    if (!serial)
        return;
    if (G.kick_sock < 0)
        G.kick_sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "stfk.%016llx.%d.%u", (unsigned long long)G.fab->uid,
                     (int)pid, serial);
    char b = 1;
    /* EAGAIN: the receiver already has kicks queued, so it is readable anyway */
    (void)sendto(G.kick_sock, &b, 1, MSG_DONTWAIT, (struct sockaddr *)&a,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n));
}

void fk_kick_slot(int slot)
{
    fk_qslot *s = &G.fab->qps[slot];
    pid_t pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
    uint32_t k0 = __atomic_load_n(&s->kick[0], __ATOMIC_ACQUIRE);
    uint32_t k1 = __atomic_load_n(&s->kick[1], __ATOMIC_ACQUIRE);
    fk_kick_serial(pid, k0);
    if (k1 != k0)
        fk_kick_serial(pid, k1);
}

/* ---- faults --------------------------------------------------------------------------------------------------- */
static int parse_item(char *item, fk_fault *f, char *err, size_t errlen)
{
    char *colon = strchr(item, ':');
    if (colon)
        *colon = 0;
    f->kind = -1;
    for (int k = 0; k < FK_NKINDS; k++)
        if (strcmp(item, kind_names[k]) == 0)
            f->kind = k;
    if (f->kind < 0) {
        snprintf(err, errlen, "unknown fault kind '%s' (drop, rkey, qperr, portdown, deadpeer, rnr)", item);
        return -1;
    }
    f->node = -1;
    f->qp = -1;
    f->count = f->kind == FK_DROP ? 0 : 1;
    uint64_t seed = 1;
    for (char *kv = colon ? strtok(colon + 1, ",") : NULL; kv; kv = strtok(NULL, ",")) {
        char *eq = strchr(kv, '=');
        char *end = NULL;
        long v = eq ? strtol(eq + 1, &end, 10) : 0;
        if (!eq || end == eq + 1 || *end || v < 0) {
            snprintf(err, errlen, "%s: '%s' is not key=number", kind_names[f->kind], kv);
            return -1;
        }
        *eq = 0;
        if (!strcmp(kv, "node"))
            f->node = (int)v;
        else if (!strcmp(kv, "qp"))
            f->qp = (int)v;
        else if (!strcmp(kv, "after"))
            f->after = v;
        else if (!strcmp(kv, "count"))
            f->count = v;
        else if (!strcmp(kv, "every"))
            f->every = v;
        else if (!strcmp(kv, "pct"))
            f->pct = v;
        else if (!strcmp(kv, "seed"))
            seed = (uint64_t)v;
        else if (!strcmp(kv, "ms"))
            f->ms = v;
        else {
            snprintf(err, errlen, "%s: unknown key '%s' (node, qp, after, count, every, pct, seed, ms)",
                     kind_names[f->kind], kv);
            return -1;
        }
    }
    if (f->pct > 100) {
        snprintf(err, errlen, "%s: pct=%ld is over 100", kind_names[f->kind], f->pct);
        return -1;
    }
    f->rng = seed * 0x2545f4914f6cdd1dull + (uint64_t)f->kind;
    return 0;
}

int st_fake_faults(const char *spec, char *err, size_t errlen)
{
    fk_fault list[FK_MAX_FAULTS];
    int n = 0;
    char *copy = strdup(spec ? spec : "");
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        if (!*item)
            continue;
        if (n == FK_MAX_FAULTS) {
            snprintf(err, errlen, "more than %d faults", FK_MAX_FAULTS);
            free(copy);
            return -1;
        }
        memset(&list[n], 0, sizeof list[n]);
        if (parse_item(item, &list[n], err, errlen) != 0) {
            free(copy);
            return -1;
        }
        n++;
    }
    free(copy);
    fk_enter();
    memcpy(G.faults, list, sizeof list[0] * (size_t)n);
    G.nfaults = n;
    /* a new list also ends what the old one did to this process: its ports come up, it is alive again */
    if (G.fab && G.node >= 0) {
        G.fab->nodes[G.node].dead = 0;
        for (int d = 0; d < FK_MAX_DEVS; d++) {
            G.fab->nodes[G.node].port_down[d] = 0;
            G.port_up_ns[d] = 0;
        }
    }
    fk_leave();
    return 0;
}

static const fk_fault *last_fired[FK_NKINDS];

/* Called under G.lock at each event of `kind` (q: the QP concerned, or NULL); 1 when a fault fires now. */
int fk_fault_hit(int kind, const fk_qp *q)
{
    for (int i = 0; i < G.nfaults; i++) {
        fk_fault *f = &G.faults[i];
        if (f->kind != kind || (f->node >= 0 && f->node != G.node) || (f->qp >= 0 && (!q || q->ordinal != f->qp)))
            continue;
        f->seen++;
        if (f->seen <= f->after || (f->count && f->fired >= f->count))
            continue;
        if (f->every && (f->seen - f->after) % f->every != 0)
            continue;
        if (f->pct && (long)(fk_rand(&f->rng) % 100) >= f->pct)
            continue;
        f->fired++;
        G.fired_local[kind]++;
        if (G.fab)
            __atomic_add_fetch(&G.fab->fired[kind], 1, __ATOMIC_RELAXED);
        last_fired[kind] = f;
        return 1;
    }
    return 0;
}

const fk_fault *fk_fault_last(int kind)
{
    return last_fired[kind];
}

long st_fake_fired(const char *kind)
{
    long n = -1;
    fk_enter();
    for (int k = 0; k < FK_NKINDS; k++)
        if (strcmp(kind, kind_names[k]) == 0)
            n = G.fab && G.fab_shared ? __atomic_load_n(&G.fab->fired[k], __ATOMIC_RELAXED) : G.fired_local[k];
    fk_leave();
    return n;
}

void st_fake_counts(st_fake_live *out)
{
    fk_enter();
    *out = G.live;
    fk_leave();
}
