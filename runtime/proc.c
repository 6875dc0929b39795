/* proc.c - process-mode communicators: transports per peer, shm segments, control channels, waiting (proc.h).
 *
 * Tunables of process mode (STITCH_TRANSPORT, STITCH_SHM_RING_BYTES, STITCH_TCP_RING_BYTES, STITCH_TCP_CC,
 * STITCH_SPIN_US, STITCH_SOCKET_IFNAME, STITCH_SECRET) are read and checked by config.c with the others and arrive here in
 * st_settings. STITCH_SPIN_US unset means 500 us, or 1000 us when the host runs more ranks of the communicator
 * than it has cores: such a rank yields the core after every fruitless poll, so the peer it waits for (often on
 * the same core) runs at once instead of after a futex round trip.
 *
 * Groups. Topology-aware algorithms see the ranks of each host as a group, whatever their rank order, unless
 * STITCH_GROUPS / stitch_config_t.groups say otherwise (placement.c, after the bootstrap).
 *
 * Shared memory. Each rank makes one segment holding its doorbell and one ring per other rank of its host (the
 * rings it receives from), and every rank maps every segment of its host. The segments have no name at all: each
 * is a memfd, and its descriptor goes to the other ranks of the host over an authenticated abstract-namespace Unix
 * socket (SCM_RIGHTS; shmfd.c: same user by SO_PEERCRED, then a proof of the job's key both ways). So no death,
 * SIGKILL or Ctrl-C at any moment of setup, can leave a file in /dev/shm; the memory goes away with the last
 * descriptor or mapping. Why not named segments unlinked early: a name must live until every peer has opened it,
 * which takes a round trip with the peers, and a rank killed in that window (measured: 14 of 16 kills 5-40 ms
 * after launch) left its 12.6 MB segment behind for good; no ordering of shm_open and shm_unlink closes that
 * window, and an exit handler does not run on SIGKILL. The cost is one Unix connection per pair of ranks of a host,
 * once, at setup; and memfd_create needs Linux 3.17. Only the job's own user gets in, as with the 0600 files before.
 * Order: make mine and listen, barrier, swap and map, touch, barrier (st_shm_setup).
 *
 * Control frames are 16-byte headers (magic, kind, length) + text: abort (with the reason), goodbye, and a
 * progress query and its answer (st_progress). Abort frames are written once, by the thread that wins
 * ctrl_owner; answers by the executor while it waits (it reads the channels then); ctrl_tx keeps the two from
 * interleaving on a socket.
 *
 * Who is behind. A rank whose call times out asks every peer for its progress and waits a bounded time for the
 * answers, answering its peers' queries meanwhile (st_proc_behind). Every rank waiting inside a call reads its
 * control channels at least every 20 ms (exec_msg.c's ST_BLOCK_MS, or each poll with tcp peers), so a rank that
 * stays silent is stopped, busy outside stitch, or unreachable: that is the rank behind. One mechanism for shm
 * and tcp peers alike: every pair has a control channel, and the answer's latency matters only once, at a
 * timeout. If all answer, the one at the earliest (call, segment, step) is named.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm.h"
#include "config.h"
#include "placement.h"
#include "proc.h"
#include "registry.h"
#include "shmfd.h"

#define ST_CTRL_MAGIC 0x53544331u /* "STC1" */
enum { ST_CTRL_ABORT = 2, ST_CTRL_BYE = 3, ST_CTRL_QUERY = 4, ST_CTRL_ANSWER = 5 };

typedef struct st_ctrl_hdr {
    uint32_t magic, kind, len, pad;
} st_ctrl_hdr;

/* ---- choosing transports ---------------------------------------------------------------------------------- */

static int st_same_host(const st_boot *b, int peer)
{
    return b->peers[peer].host == b->peers[b->rank].host;
}

static int st_need_data(const st_boot *b, int peer, void *arg)
{
    const st_settings *s = arg;
    return s->transport == ST_TP_TCP || !st_same_host(b, peer);
}

/* ---- shared memory ---------------------------------------------------------------------------------------- */

#define ST_RING_HDR offsetof(st_ring, data)

/* Index of ring "from rank `from`" inside `owner`'s segment: from's position among the other ranks of the host. */
static int st_ring_index(const st_boot *b, int owner, int from)
{
    int k = 0;
    for (int i = 0; i < from; i++)
        k += i != owner && b->peers[i].host == b->peers[owner].host;
    return k;
}

static st_ring *st_ring_at(const st_proc *pr, int owner, int from)
{
    char *base = (char *)pr->seg[owner] + 4096;
    return (st_ring *)(base + (size_t)st_ring_index(&pr->boot, owner, from) * (ST_RING_HDR + pr->ring_bytes));
}

/* Fault the pages this process will use of a segment in now, writable, rather than on the first message: a fault costs
 * microseconds natively, and under a hypervisor with shadow page tables the first user access to each page of
 * each mapping traps again, invisible to the guest's fault counters (measured: ~40 ms over the first pass
 * through a 4 MB ring, which made every mid-size call of a fresh communicator 10-50x slower). MADV_POPULATE_WRITE
 * (Linux 5.14) makes the guest pages; then one store per page, of the value already there, from this process.
 * Called before the second setup barrier, before any rank produces into any ring, so the stores race with
 * nothing; each process touches only its own segment and, in each peer's, the bell and the ring it fills. */
static void st_seg_touch(void *p, size_t bytes)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096; /* rings do not start on a page: widen to whole pages */
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(page - 1), hi = ((uintptr_t)p + bytes + page - 1) & ~(uintptr_t)(page - 1);
#ifdef MADV_POPULATE_WRITE
    (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* best effort: EINVAL on older kernels */
#endif
    for (uintptr_t a = lo; a < hi; a += page) {
        volatile char *q = (char *)a;
        *q = *q;
    }
}

/* Map a segment's descriptor, checking its size: a shorter one (a peer with another STITCH_SHM_RING_BYTES) would
 * fault at the first access past its end. */
static void *st_seg_map(int fd, size_t bytes, char *err, size_t errlen)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "fstat: %s", strerror(errno));
        return NULL;
    }
    if ((size_t)sb.st_size != bytes) {
        snprintf(err, errlen, "its segment is %lld bytes, mine %zu (is STITCH_SHM_RING_BYTES the same on every rank?)",
                 (long long)sb.st_size, bytes);
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "mmap(%zu): %s", bytes, strerror(errno));
        return NULL;
    }
    return p;
}

static int st_local_count(const st_boot *b)
{
    int n = 0;
    for (int i = 0; i < b->size; i++)
        n += st_same_host(b, i);
    return n;
}

/* Make mine (a memfd), listen for the swap, barrier (every socket listens), swap descriptors with the ranks of
 * my host and map theirs, barrier (every rank has touched what it will use before anyone produces). Every rank
 * takes part in both barriers (they run over all ranks), whether or not it has a peer on its host. */
static stitch_status_t st_shm_setup(st_proc *pr, const st_settings *s, int timeout_ms, char *err, size_t errlen)
{
    st_boot *b = &pr->boot;
    char why[300];
    int nlocal = st_local_count(b), myfd = -1, lfd = -1, *fds = NULL;
    int use = s->transport != ST_TP_TCP && nlocal > 1;
    pr->seg_bytes = 4096 + (size_t)(nlocal > 1 ? nlocal - 1 : 0) * (ST_RING_HDR + pr->ring_bytes);
    if (use) {
        if ((myfd = st_shmfd_create(pr->seg_bytes, why, sizeof why)) < 0 ||
            !(pr->seg[b->rank] = st_seg_map(myfd, pr->seg_bytes, why, sizeof why)) ||
            (lfd = st_shmfd_listen(b, why, sizeof why)) < 0 || !(fds = malloc((size_t)b->size * sizeof *fds))) {
            snprintf(err, errlen, "rank %d: shared memory: %s", b->rank, fds || lfd < 0 ? why : "out of memory");
            if (myfd >= 0)
                close(myfd);
            if (lfd >= 0)
                close(lfd);
            return STITCH_ERR_SYSTEM; /* the peers' barrier fails at our control EOF */
        }
        pr->bell = pr->seg[b->rank];
        st_bell_init(pr->bell); /* before the barrier: no peer rings it yet */
        st_seg_touch(pr->seg[b->rank], pr->seg_bytes); /* the rings I consume from */
        for (int i = 0; i < b->size; i++)
            fds[i] = -1;
    }
    stitch_status_t st = st_boot_barrier(b, timeout_ms, err, errlen);
    if (use && st == STITCH_OK && st_shmfd_swap(b, lfd, myfd, fds, timeout_ms < 0 ? 24 * 3600 * 1000 : timeout_ms,
                                                why, sizeof why) != 0) {
        snprintf(err, errlen, "rank %d: shared memory: %s", b->rank, why);
        st = STITCH_ERR_SYSTEM;
    }
    for (int i = 0; use && i < b->size; i++) {
        if (st == STITCH_OK && i != b->rank && !st_need_data(b, i, (void *)s) &&
            !(pr->seg[i] = st_seg_map(fds[i], pr->seg_bytes, why, sizeof why))) {
            snprintf(err, errlen, "rank %d: shared memory of rank %d: %s", b->rank, i, why);
            st = STITCH_ERR_SYSTEM;
        } else if (st == STITCH_OK && i != b->rank && pr->seg[i]) {
            st_seg_touch(pr->seg[i], 4096); /* its doorbell, */
            st_seg_touch(st_ring_at(pr, i, b->rank), ST_RING_HDR + pr->ring_bytes); /* the ring I produce into */
        }
        if (fds[i] >= 0)
            close(fds[i]); /* the mapping keeps the memory */
    }
    if (myfd >= 0)
        close(myfd);
    if (lfd >= 0)
        close(lfd);
    free(fds);
    if (st == STITCH_OK)
        st = st_boot_barrier(b, timeout_ms, err, errlen);
    return st;
}

/* ---- tcp congestion control -------------------------------------------------------------------------------- */

/* Put a data socket under the congestion control STITCH_TCP_CC names; by default replace bbr with cubic.
 * Why bbr goes: it paces at the bandwidth it has measured over the last few round trips, and a collective's
 * traffic is bursts (a step's messages, then a reduction with nothing sent) over round trips of microseconds,
 * so the estimate collapses during every pause and the next burst is paced at a fraction of the link.
 * Measured on this project's 2-core VM (host default bbr), np 2 ring all_reduce 64 MB, with tp_tcp.c's
 * TCP_NOTSENT_LOWAT in place: over a veth pair between two network namespaces bbr 70-74 ms, cubic 27.5-27.9 ms
 * (3 runs each); on loopback bbr 56-60 ms, cubic 27-29 ms; reno measures as cubic, and the socket buffer sizes
 * made no difference once cubic was in place. This overrides a host's choice only when that choice is bbr,
 * which was made for other traffic than this (STITCH_TCP_CC=system keeps it). Best effort: a kernel without
 * cubic, or a user the host does not allow it (net.ipv4.tcp_allowed_congestion_control), keeps the host's
 * choice; a name given in STITCH_TCP_CC must be accepted. STITCH_DEBUG's summary line says what the sockets use. */
static int st_tcp_cc(int fd, const char *want, char *used, size_t usedlen, char *err, size_t errlen)
{
    char cur[16] = "";
    socklen_t len = sizeof cur - 1;
    (void)getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cur, &len);
    const char *to = strcmp(want, "system") == 0 ? NULL : want[0] ? want : strcmp(cur, "bbr") == 0 ? "cubic" : NULL;
    if (to && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, to, (socklen_t)strlen(to)) == 0)
        snprintf(used, usedlen, "%s", to);
    else if (to && want[0]) { /* asked for by name: say so rather than run under another */
        snprintf(err, errlen, "STITCH_TCP_CC='%s': the kernel refused it (%s); see "
                 "/proc/sys/net/ipv4/tcp_allowed_congestion_control", want, strerror(errno));
        return -1;
    } else if (to)
        snprintf(used, usedlen, "%s (%s refused: %s)", cur, to, strerror(errno));
    else
        snprintf(used, usedlen, "%s", cur);
    return 0;
}

/* Linux shrinks a tcp connection's congestion window back to its initial size after an idle period longer than
 * its retransmission timeout (200 ms at least; 1 s before the first round-trip sample) unless
 * net.ipv4.tcp_slow_start_after_idle is 0, a host setting no socket option overrides. A training step's compute
 * phase is such a period. Measured on loopback, np 2 (stitch-perf all_reduce -b 128K -e 64M -w 3 --iters 20, the
 * connections idle while the ranks fill their 64 MB buffers): the first size took 185-203 us a call against
 * 27-33 us with the setting 0. Say so in the debug log, where a user looking at tcp speed looks. */
static void st_tcp_idle_hint(void)
{
    char v[8] = "";
    FILE *f = fopen("/proc/sys/net/ipv4/tcp_slow_start_after_idle", "r");
    if (f) {
        if (!fgets(v, sizeof v, f))
            v[0] = '\0';
        fclose(f);
    }
    if (v[0] == '1')
        fprintf(stderr, "stitch: net.ipv4.tcp_slow_start_after_idle is 1 on this host: after an idle period longer "
                "than its retransmission timeout (200 ms or more), tcp restarts in slow start and the first large "
                "collectives are slower; "
                "`sysctl -w net.ipv4.tcp_slow_start_after_idle=0` (as root) avoids it\n");
}

/* ---- the communicator ------------------------------------------------------------------------------------- */

static stitch_status_t st_make_tps(st_proc *pr, const st_settings *s, char *err, size_t errlen)
{
    st_boot *b = &pr->boot;
    char why[256];
    for (int j = 0; j < b->size; j++) {
        if (j == b->rank)
            continue;
        if (b->data[j] >= 0) {
            if (st_tcp_cc(b->data[j], s->tcp_cc, pr->tcp_cc, sizeof pr->tcp_cc, why, sizeof why) != 0) {
                snprintf(err, errlen, "rank %d: tcp to rank %d: %s", b->rank, j, why);
                return STITCH_ERR_CONFIG;
            }
            pr->tp[j] = st_tp_tcp_new(b->data[j], j, s->tcp_ring_bytes);
            b->data[j] = -1; /* owned by the transport now, closed by it even on failure */
            pr->ntcp++;
        } else {
            st_bell *peer_bell = pr->seg[j];
            pr->tp[j] = st_tp_shm_new(st_ring_at(pr, j, b->rank), st_ring_at(pr, b->rank, j), pr->ring_bytes,
                                      peer_bell, j);
            pr->nshm++;
        }
        if (!pr->tp[j]) {
            snprintf(err, errlen, "rank %d: out of memory for the transport to rank %d", b->rank, j);
            return STITCH_ERR_NO_MEMORY;
        }
    }
    return STITCH_OK;
}

static int st_proc_alloc(st_proc *pr, int size)
{
    pr->tp = calloc((size_t)size, sizeof *pr->tp);
    pr->ctrl = calloc((size_t)size, sizeof *pr->ctrl);
    pr->seg = calloc((size_t)size, sizeof *pr->seg);
    pr->pfds = calloc((size_t)size * 2, sizeof *pr->pfds);
    pr->pfd_peer = calloc((size_t)size * 2, sizeof *pr->pfd_peer);
    return pr->tp && pr->ctrl && pr->seg && pr->pfds && pr->pfd_peer ? 0 : -1;
}

static void st_proc_release(st_proc *pr)
{
    for (int j = 0; pr->tp && j < pr->size; j++)
        if (pr->tp[j])
            pr->tp[j]->ops->close(pr->tp[j]);
    for (int j = 0; pr->seg && j < pr->size; j++)
        if (pr->seg[j])
            munmap(pr->seg[j], pr->seg_bytes);
    if (pr->boot.ctrl)
        st_boot_close(&pr->boot);
    free(pr->tp);
    free(pr->ctrl);
    free(pr->seg);
    free(pr->pfds);
    free(pr->pfd_peer);
    free(pr->outs);
    free(pr);
}

static stitch_status_t st_proc_connect(st_proc *pr, const st_boot_env *env, const st_settings *s, uint64_t tag,
                                       int timeout_ms, char *err, size_t errlen)
{
    st_boot_opts o = {timeout_ms, s->socket_ifname, tag, st_need_data, (void *)s, s->secret};
    pr->ring_bytes = s->shm_ring_bytes;
    stitch_status_t st = st_boot_run(env, &o, &pr->boot, err, errlen);
    if (st == STITCH_OK)
        st = st_shm_setup(pr, s, timeout_ms, err, errlen);
    if (st == STITCH_OK)
        st = st_make_tps(pr, s, err, errlen);
    if (st == STITCH_OK) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        pr->nlocal = st_local_count(&pr->boot);
        pr->oversubscribed = cores > 0 && pr->nlocal > cores;
        /* 500 us, not less: a rank that sleeps between the frames of a large message pays a futex wake-up per
         * frame (16 MB all_reduce at np 2: 2.1-2.8 ms with 500 us against 2.4-3.1 ms with 50 us, 3 runs each) */
        pr->spin_ns = 1000 * (s->spin_us >= 0 ? s->spin_us : pr->oversubscribed ? 1000 : 500);
    }
    if (st == STITCH_OK && st_debug())
        fprintf(stderr, "stitch: rank %d of %d on %s (pid %u): %d peers over shm, %d over tcp; %d ranks on this host, "
                "spin %ld us before sleeping%s%s%s%s\n", pr->rank, pr->size, pr->boot.peers[pr->rank].hostname,
                pr->boot.peers[pr->rank].pid, pr->nshm, pr->ntcp, pr->nlocal, pr->spin_ns / 1000,
                pr->bell ? "; doorbells ordered by " : "", pr->bell ? st_bell_mode() : "",
                pr->ntcp ? "; tcp congestion control " : "", pr->ntcp ? pr->tcp_cc : "");
    if (st == STITCH_OK && st_debug() && pr->ntcp && pr->rank == 0)
        st_tcp_idle_hint();
    return st;
}

static stitch_comm_t *st_proc_shell(const st_boot_env *env, const st_settings *s, const st_choice *algo)
{
    stitch_comm_t *comm = calloc(1, sizeof *comm);
    if (!comm)
        return NULL;
    comm->cache = calloc((size_t)st_registry_count() + 1, sizeof *comm->cache);
    comm->job = st_job_new(1); /* in process mode only its abort flag, reason and groups (topo) are used */
    comm->proc = calloc(1, sizeof *comm->proc);
    if (!comm->cache || !comm->job || !comm->proc || st_proc_alloc(comm->proc, env->size) != 0) {
        if (comm->proc)
            st_proc_release(comm->proc);
        if (comm->job)
            st_job_unref(comm->job);
        free(comm->cache);
        free(comm);
        return NULL;
    }
    st_comm_settle(comm, env->rank, env->size, s, algo);
    comm->proc->rank = env->rank, comm->proc->size = env->size;
    return comm;
}

/* Bootstrap, transports, then the groups from the table everyone now holds. */
static stitch_status_t st_proc_join(stitch_comm_t *comm, const st_boot_env *env, const st_settings *s,
                                    st_placement *pl, char *err, size_t errlen)
{
    int boot_ms = s->timeout_ms < 0 ? -1 : s->timeout_ms;
    stitch_status_t st = st_proc_connect(comm->proc, env, s, pl->tag, boot_ms, err, errlen);
    return st == STITCH_OK ? st_placement_apply(pl, s, &comm->proc->boot, comm->job, err, errlen) : st;
}

stitch_status_t st_proc_comm_new(const st_boot_env *env, const stitch_config_t *config, stitch_comm_t **out,
                                 char *err, size_t errlen)
{
    st_settings s;
    st_choice algo[STITCH_COLL_COUNT];
    char why[512];
    stitch_status_t st = st_settings_load(config, &s, why, sizeof why);
    if (st == STITCH_OK)
        st = st_resolve_algos(&s, algo, why, sizeof why);
    if (st != STITCH_OK) {
        snprintf(err, errlen, "stitch_comm_init_rank: %s", why);
        return st;
    }
    stitch_comm_t *comm = st_proc_shell(env, &s, algo);
    if (!comm) {
        snprintf(err, errlen, "stitch_comm_init_rank: out of memory");
        return STITCH_ERR_NO_MEMORY;
    }
    st_placement pl;
    if ((st = st_placement_init(&pl, &s, env->size, why, sizeof why)) == STITCH_OK)
        st = st_proc_join(comm, env, &s, &pl, why, sizeof why);
    st_placement_free(&pl);
    if (st != STITCH_OK) {
        snprintf(err, errlen, "stitch_comm_init_rank: %s", why);
        stitch_comm_destroy(comm);
        return st;
    }
    *out = comm;
    return STITCH_OK;
}

/* ---- control frames --------------------------------------------------------------------------------------- */

/* One frame to rank j. The channel is otherwise idle, so a frame this small fits its buffer: the send does not
 * block and is not cut short. ctrl_tx keeps two threads' frames (an answer, an abort) from interleaving. */
static void st_ctrl_send(st_proc *pr, int j, uint32_t kind, const void *payload, size_t n)
{
    struct {
        st_ctrl_hdr h;
        char text[640];
    } f;
    n = n < sizeof f.text ? n : sizeof f.text;
    f.h = (st_ctrl_hdr){ST_CTRL_MAGIC, kind, (uint32_t)n, 0};
    if (n)
        memcpy(f.text, payload, n);
    while (atomic_flag_test_and_set(&pr->ctrl_tx))
        ;
    if (pr->boot.ctrl && pr->boot.ctrl[j] >= 0)
        (void)!send(pr->boot.ctrl[j], &f, sizeof f.h + n, MSG_NOSIGNAL | MSG_DONTWAIT);
    atomic_flag_clear(&pr->ctrl_tx);
}

static void st_ctrl_send_all(st_proc *pr, uint32_t kind, const char *text)
{
    for (int j = 0; pr->boot.ctrl && j < pr->size; j++)
        st_ctrl_send(pr, j, kind, text, text ? strlen(text) : 0);
}

void st_proc_abort(st_proc *pr, const char *reason)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&pr->ctrl_owner, &expected, 1)) {
        snprintf(pr->reason, sizeof pr->reason, "%.600s", reason);
        atomic_store(&pr->aborted, 1);
        st_ctrl_send_all(pr, ST_CTRL_ABORT, reason);
    }
    if (pr->bell)
        st_bell_ring(pr->bell); /* wake my own executor if it sleeps */
}

void st_proc_free(st_proc *pr)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&pr->ctrl_owner, &expected, 1))
        st_ctrl_send_all(pr, ST_CTRL_BYE, NULL);
    st_proc_release(pr);
}

/* One peer's control channel has bytes (or EOF): parse complete frames. 0, or -1 on death/abort. */
static int st_ctrl_read(st_proc *pr, int j)
{
    st_ctrl_in *c = &pr->ctrl[j];
    const st_peer_info *pi = &pr->boot.peers[j];
    char msg[900];
    ssize_t n = recv(pr->boot.ctrl[j], c->buf + c->fill, sizeof c->buf - c->fill, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n <= 0) {
        close(pr->boot.ctrl[j]);
        pr->boot.ctrl[j] = -1;
        if (c->state != 0)
            return 0;
        c->state = 2;
        snprintf(msg, sizeof msg, "rank %d (pid %u on %s) died: its control connection closed without a goodbye%s%s",
                 j, pi->pid, pi->hostname, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
        st_proc_abort(pr, msg);
        return -1;
    }
    c->fill += (size_t)n;
    st_ctrl_hdr h;
    while (c->fill >= sizeof h) {
        memcpy(&h, c->buf, sizeof h);
        if (h.magic != ST_CTRL_MAGIC || h.len > sizeof c->buf - sizeof h) {
            snprintf(msg, sizeof msg, "rank %d sent a malformed control frame", j);
            st_proc_abort(pr, msg);
            return -1;
        }
        if (c->fill < sizeof h + h.len)
            break;
        if (h.kind == ST_CTRL_BYE) {
            c->state = 1;
        } else if (h.kind == ST_CTRL_QUERY) { /* a peer's call timed out: where am I */
            if (!atomic_load(&pr->aborted))
                st_ctrl_send(pr, j, ST_CTRL_ANSWER, &pr->prog, sizeof pr->prog);
        } else if (h.kind == ST_CTRL_ANSWER) {
            if (h.len == sizeof c->at)
                memcpy(&c->at, c->buf + sizeof h, sizeof c->at), c->answered = 1;
        } else {
            c->state = 3;
            snprintf(msg, sizeof msg, "rank %d aborted: %.*s", j, (int)h.len, c->buf + sizeof h);
            st_proc_abort(pr, msg);
        }
        memmove(c->buf, c->buf + sizeof h + h.len, c->fill - sizeof h - h.len);
        c->fill -= sizeof h + h.len;
    }
    return atomic_load(&pr->aborted) ? -1 : 0;
}

/* Fill pfds with the control fds (and, when `data`, the tcp data fds for what would be progress on them, POLLOUT
 * only when `want_out`); returns how many. pfd_peer says whose each entry is: j for rank j's control socket,
 * size + j for its data socket. */
static int st_fill_pfds(st_proc *pr, int data, int want_out)
{
    int n = 0;
    for (int j = 0; j < pr->size; j++) {
        short ev = 0;
        int fd = data && pr->tp[j] ? pr->tp[j]->ops->pollfd(pr->tp[j], &ev) : -1;
        if (pr->boot.ctrl[j] >= 0)
            pr->pfds[n] = (struct pollfd){pr->boot.ctrl[j], POLLIN, 0}, pr->pfd_peer[n++] = j;
        ev &= (short)(want_out ? POLLIN | POLLOUT : POLLIN);
        if (fd >= 0 && ev)
            pr->pfds[n] = (struct pollfd){fd, ev, 0}, pr->pfd_peer[n++] = pr->size + j;
    }
    return n;
}

static int st_ctrl_ready(st_proc *pr, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (pr->pfd_peer[i] < pr->size && pr->pfds[i].revents && pr->boot.ctrl[pr->pfd_peer[i]] >= 0)
            rc |= st_ctrl_read(pr, pr->pfd_peer[i]);
    return rc;
}

/* Bytes arrived from peers: move them into their rx rings now. The executor reads one peer at a time, and the
 * bytes of another stay readable in the kernel until it gets there; left there they would end the next poll at
 * once, again and again (measured: np 3 on 2 cores, mesh all_reduce 16 MB, STITCH_SPIN_US=0: ~340 polls and
 * 700 fruitless recvs per call on one rank, burning the core its peers needed). A read error or EOF is left for
 * the executor's own peek to report. */
static void st_data_ready(st_proc *pr, int n)
{
    char why[8];
    const void *p;
    for (int i = 0; i < n; i++)
        if (pr->pfd_peer[i] >= pr->size && (pr->pfds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            (void)pr->tp[pr->pfd_peer[i] - pr->size]->ops->peek(pr->tp[pr->pfd_peer[i] - pr->size], &p, why,
                                                                sizeof why);
}

int st_proc_poll_ctrl(st_proc *pr, int timeout_ms)
{
    int n = st_fill_pfds(pr, 0, 0);
    if (atomic_load(&pr->aborted))
        return -1;
    if (n == 0 || poll(pr->pfds, (nfds_t)n, timeout_ms) <= 0)
        return atomic_load(&pr->aborted) ? -1 : 0;
    return st_ctrl_ready(pr, n);
}

/* A rank sleeps on its doorbell only when all its peers are on shm; with tcp peers too it polls the sockets in
 * short slices instead, and arming the bell would only cost a membarrier and make every shm peer's ring wake a
 * futex nobody waits on. */
static int st_sleeps_on_bell(const st_proc *pr)
{
    return pr->bell && pr->ntcp == 0;
}

uint32_t st_proc_arm(st_proc *pr)
{
    return st_sleeps_on_bell(pr) ? st_bell_arm(pr->bell) : 0;
}

void st_proc_disarm(st_proc *pr)
{
    if (st_sleeps_on_bell(pr))
        st_bell_disarm(pr->bell);
}

void st_proc_block(st_proc *pr, int timeout_ms, int want_out, uint32_t seen)
{
    if (st_sleeps_on_bell(pr)) {
        /* `seen` was read when the caller armed, before its last look for progress: reading it here instead
         * would miss a ring that came in between, and sleep the whole timeout with data waiting. The abort
         * flag is looked at after the arm too (st_proc_poll_ctrl), so stitch_comm_abort's ring is not lost. */
        if (st_proc_poll_ctrl(pr, 0) == 0)
            st_bell_sleep(pr->bell, seen, timeout_ms);
        st_bell_disarm(pr->bell);
        return;
    }
    int n = st_fill_pfds(pr, 1, want_out); /* a send waiting for socket space wakes on POLLOUT */
    if (pr->nshm > 0 && timeout_ms > 1)
        timeout_ms = 1; /* shm data cannot wake poll: check it often */
    if (poll(pr->pfds, (nfds_t)n, timeout_ms) > 0) {
        st_ctrl_ready(pr, n);
        st_data_ready(pr, n);
    }
    st_proc_disarm(pr);
}

/* ---- who is behind ---------------------------------------------------------------------------------------- */

static int st_prog_before(const st_progress *a, const st_progress *b)
{
    return a->call != b->call ? a->call < b->call : a->seg != b->seg ? a->seg < b->seg : a->step < b->step;
}

/* Ask every open channel, then read answers (and answer the peers' queries) until all came or wait_ms passed. */
static int st_ask_progress(st_proc *pr, int wait_ms)
{
    struct timespec t0, now;
    int missing = 0;
    for (int j = 0; j < pr->size; j++) {
        st_ctrl_in *c = &pr->ctrl[j];
        c->asked = j != pr->rank && pr->boot.ctrl[j] >= 0 && c->state == 0;
        c->answered = 0;
        if (c->asked)
            st_ctrl_send(pr, j, ST_CTRL_QUERY, NULL, 0), missing++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long left = wait_ms; missing > 0 && left > 0;) {
        if (st_proc_poll_ctrl(pr, left < 20 ? (int)left : 20) != 0)
            return -1;
        missing = 0;
        for (int j = 0; j < pr->size; j++)
            missing += pr->ctrl[j].asked && !pr->ctrl[j].answered;
        clock_gettime(CLOCK_MONOTONIC, &now);
        left = wait_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
    }
    return 0;
}

/* Everyone answered: name the one at the earliest progress, unless that is where I am too. */
static void st_all_answered(st_proc *pr, char *out, size_t outlen)
{
    int low = pr->rank;
    for (int j = 0; j < pr->size; j++)
        if (pr->ctrl[j].asked && st_prog_before(&pr->ctrl[j].at, low == pr->rank ? &pr->prog : &pr->ctrl[low].at))
            low = j;
    if (low == pr->rank)
        snprintf(out, outlen, "every rank answered a progress query and none is behind call %llu step %u (all "
                 "waiting: ranks that run different schedules, or a lost message)",
                 (unsigned long long)pr->prog.call, pr->prog.step);
    else
        snprintf(out, outlen, "rank %d is behind: it is waiting at call %llu segment %u step %u, while I am at call "
                 "%llu segment %u step %u", low, (unsigned long long)pr->ctrl[low].at.call, pr->ctrl[low].at.seg,
                 pr->ctrl[low].at.step, (unsigned long long)pr->prog.call, pr->prog.seg, pr->prog.step);
}

static int st_silent(const st_proc *pr, int j)
{
    return j >= 0 && j < pr->size && pr->ctrl[j].asked && !pr->ctrl[j].answered;
}

int st_proc_behind(st_proc *pr, int waiting_for, int wait_ms, char *out, size_t outlen)
{
    if (st_ask_progress(pr, wait_ms) != 0)
        return -1;
    int first = st_silent(pr, waiting_for) ? waiting_for : -1, others = 0; /* the one I wait for, if silent */
    for (int j = 0; j < pr->size && first < 0; j++)
        first = st_silent(pr, j) ? j : -1;
    if (first < 0) {
        st_all_answered(pr, out, outlen);
        return 0;
    }
    char more[128] = "";
    for (int j = 0; j < pr->size; j++) {
        size_t len = strlen(more);
        if (j != first && st_silent(pr, j) && len + 16 < sizeof more)
            snprintf(more + len, sizeof more - len, "%s%d", others++ ? ", " : "", j);
    }
    snprintf(out, outlen, "rank %d is behind: it did not answer a progress query within %d ms (stopped, busy "
             "outside stitch, or unreachable)%s%s", first, wait_ms, others ? "; nor did rank(s) " : "", more);
    return 0;
}
