/* tp_tcp.c - the tcp transport: an entry of transport.c's table for any pair (the bootstrap reached every peer
 * over the network, so it always can, and is the last resort), one non-blocking socket per peer and direction pair
 * (the bootstrap's data socket), an rx staging ring.
 *
 * send() goes straight from the caller's buffer into the kernel (no staging on the way out; sendv gathers a
 * message's header, payload and padding into one sendmsg: measured, np 2 all_reduce over loopback, one call per
 * message instead of one per piece took 8 KB from 40 to 30 us and 32 KB from 50 to 32 us, medians of 7).
 * Incoming bytes are read into a power-of-two ring so the executor can reduce out of it in place (transport.h);
 * the ring is refilled on every peek, so the kernel's socket buffer keeps draining while the executor works on
 * what it already has. A large message the executor only copies skips the ring (recv_into: its header and payload
 * read from the kernel straight into place, exec_msg.c's "Straight in"): one copy on each side, as gloo's and MPI's
 * tcp paths make, where the ring made a second on the receiver's (measured on loopback, 1-64 MB: 1.03-1.39x the speed
 * at np 4, all_gather 1.03-1.51x at np 2, all_reduce at np 2 unchanged within the noise; docs/performance.md).
 * TCP_NODELAY because every message of a step is latency-bound at small sizes; a step's frames are written
 * back to back so Nagle would only delay the last one.
 *
 * TCP_NOTSENT_LOWAT keeps the socket's unsent queue short (ST_TCP_NOTSENT bytes; send() takes no more until
 * it drains, and the executor waits for POLLOUT). Bytes left unsent in the socket go out later from wherever
 * the kernel processes the peer's ACKs, often the other core while this process sends more from its own, and
 * on loopback and veth each core queues what it sends on its own backlog: one flow's packets then arrive out
 * of order, the receiver's duplicate ACKs trigger spurious fast retransmits, and cubic halves its window each
 * time. Measured (2-core VM, np 2 ring all_reduce 64 MB over a veth pair between two network namespaces, 3
 * runs each): cubic alone 27-131 ms, bimodal, with up to ~3000 retransmitted segments a run; with the low
 * water mark 27.5-27.9 ms and 0-1 retransmits (bbr: 78-84 ms, 7-33 thousand retransmits; 70-74 ms with it).
 * On loopback, 64 MB: cubic 28 and 79 ms in 2 runs (21 and 352 retransmits) -> 27-29 ms in 4 runs (0-4).
 * The entry's connect picks the congestion control (st_tcp_cc).
 *
 * Several sockets per peer were tried and measured (STITCH_TCP_CONNS: the stream striped over 1, 2 or 4
 * sockets in 256 KB chunks, round robin, one executor thread as here). They only looked useful while bbr's
 * pacing capped each socket (loopback 64 MB: 45 ms with 1, 26 ms with 4). With cubic and the low water mark
 * one socket is fastest, np 2 ring all_reduce, 5 runs interleaved, median ms for 1 / 2 / 4 sockets:
 *   loopback  4 MB 1.54 / 1.78 / 2.58   16 MB 7.1 / 7.9 / 9.4    64 MB 28.5 / 33.3 / 34.9
 *   veth      4 MB 1.91 / 2.98 / 3.12   16 MB 7.3 / 12.3 / 16.6  64 MB 29.0 / 46.2 / 71.4
 * so the transport keeps one socket per peer (more may pay where one flow cannot fill a NIC, e.g. RSS spreading
 * the receive work over cores, or a per-flow limit in the network: measure there before adding them back).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "transport.h"

#define ST_TCP_NOTSENT (128 << 10) /* unsent bytes a socket holds at most (TCP_NOTSENT_LOWAT, above) */

typedef struct st_tcp {
    st_tp base;
    int fd;
    int eof;
    int rx_errno;        /* a receive failed: every later peek says why (the kernel reports it only once) */
    int tx_short;        /* the last send took less than it was offered: wait for POLLOUT */
    char *ring;
    size_t cap;
    uint64_t head, tail; /* bytes read into the ring, bytes consumed */
} st_tcp;

/* What send() or sendmsg() returned, as the transport reports it: EAGAIN is 0, a short send is remembered
 * (the executor then waits for POLLOUT), a real failure says so. */
static ssize_t st_tcp_sent(st_tcp *c, ssize_t n, size_t len, char *err, size_t errlen)
{
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        snprintf(err, errlen, "tcp send to rank %d failed: %s", c->base.peer, strerror(errno));
        return -1;
    }
    n = n < 0 ? 0 : n;
    c->tx_short = (size_t)n < len;
    return n;
}

static ssize_t st_tcp_send(st_tp *t, const void *buf, size_t len, char *err, size_t errlen)
{
    st_tcp *c = (st_tcp *)t;
    if (len == 0)
        return 0;
    return st_tcp_sent(c, send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT), len, err, errlen);
}

static ssize_t st_tcp_sendv(st_tp *t, const struct iovec *iov, int iovcnt, char *err, size_t errlen)
{
    st_tcp *c = (st_tcp *)t;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len == 0)
        return 0;
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
    return st_tcp_sent(c, sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT), len, err, errlen);
}

/* Touch every page of the ring twice before the first message: once from the kernel, which writes through our address
 * when recv() copies in (a read of /dev/zero takes the same path), and once from user code (a store per page), which
 * later reads what recv() left. Measured on this project's VMs (a paravirtualised hypervisor whose shadow page tables
 * keep kernel-mode and user-mode mappings apart): the first kernel-mode and the first user-mode access to each page
 * trap separately, ~8 us each, so the first 4 MB through a fresh ring cost ~16 ms and every mid-size call of a new
 * communicator was 4-25x slower until the ring had wrapped once (np 2, 128 KB: ~330 us a call for the first 32 calls,
 * 70 us after). Either touch alone leaves the other trap in place (measured: memset only, /dev/zero only,
 * MADV_POPULATE_WRITE + memset). Best effort: without /dev/zero the first pass is only slower. */
static void st_tcp_prefault(char *buf, size_t len)
{
    int z = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    for (size_t done = 0; z >= 0 && done < len;) {
        ssize_t n = read(z, buf + done, len - done);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
        done += n > 0 ? (size_t)n : 0;
    }
    if (z >= 0)
        close(z);
    long pg = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < len; off += pg > 0 ? (size_t)pg : 4096)
        ((volatile char *)buf)[off] = 0;
}

/* Read what the kernel has into the free contiguous part of the ring. */
static int st_tcp_fill(st_tcp *c, char *err, size_t errlen)
{
    for (int i = 0; i < 2 && !c->eof && !c->rx_errno; i++) {
        size_t used = (size_t)(c->head - c->tail), at = (size_t)(c->head & (c->cap - 1));
        size_t room = c->cap - used, contig = c->cap - at;
        if (room == 0)
            return 0;
        ssize_t n = recv(c->fd, c->ring + at, room < contig ? room : contig, MSG_DONTWAIT);
        if (n > 0) {
            c->head += (uint64_t)n;
            if ((size_t)n < contig)
                return 0;
            continue; /* filled to the end of the ring: try the start too */
        }
        if (n == 0) {
            c->eof = 1;
            break;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        c->rx_errno = errno;
    }
    if (c->rx_errno) {
        snprintf(err, errlen, "tcp receive from rank %d failed: %s", c->base.peer, strerror(c->rx_errno));
        return -1;
    }
    return 0;
}

static ssize_t st_tcp_peek(st_tp *t, const void **ptr, char *err, size_t errlen)
{
    st_tcp *c = (st_tcp *)t;
    if (st_tcp_fill(c, err, errlen) < 0)
        return -1;
    size_t used = (size_t)(c->head - c->tail), at = (size_t)(c->tail & (c->cap - 1));
    if (used == 0 && c->eof) {
        snprintf(err, errlen, "rank %d closed its tcp connection (the process exited or died)", t->peer);
        return -1;
    }
    size_t contig = c->cap - at;
    *ptr = c->ring + at;
    return (ssize_t)(used < contig ? used : contig);
}

size_t st_tcp_piece; /* transport.h: a test hook */

/* The staged bytes first (a peek read them), then straight from the socket into dst: head and tail both move
 * past what bypassed the ring, which stays empty, and its positions are the stream's (the ring still wraps only
 * at multiples of its capacity, 64-byte stream positions). The end of the stream or a failed read, with nothing
 * copied, is said as peek says it. */
static ssize_t st_tcp_recv_into(st_tp *t, void *dst, size_t len, char *err, size_t errlen)
{
    st_tcp *c = (st_tcp *)t;
    if (st_tcp_piece && len > st_tcp_piece)
        len = st_tcp_piece;
    size_t used = (size_t)(c->head - c->tail), done = 0;
    while (used && done < len) {
        size_t at = (size_t)(c->tail & (c->cap - 1)), n = c->cap - at;
        n = n < used ? n : used;
        n = n < len - done ? n : len - done;
        memcpy((char *)dst + done, c->ring + at, n);
        c->tail += n, used -= n, done += n;
    }
    if (done == len)
        return (ssize_t)done;
    if (!c->eof && !c->rx_errno) {
        ssize_t n = recv(c->fd, (char *)dst + done, len - done, MSG_DONTWAIT);
        if (n > 0) {
            c->head += (uint64_t)n, c->tail += (uint64_t)n;
            return (ssize_t)(done + (size_t)n);
        }
        if (n == 0)
            c->eof = 1;
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            c->rx_errno = errno;
    }
    if (done || (!c->eof && !c->rx_errno))
        return (ssize_t)done;
    const void *p;
    return st_tcp_peek(t, &p, err, errlen) < 0 ? -1 : 0;
}

static void st_tcp_consume(st_tp *t, size_t n)
{
    ((st_tcp *)t)->tail += n;
}

static int st_tcp_pollfd(const st_tp *t, short *events)
{
    const st_tcp *c = (const st_tcp *)t;
    int room = !c->eof && c->head - c->tail < c->cap; /* a full ring takes nothing until the executor consumes */
    *events = (short)((room ? POLLIN : 0) | (c->tx_short ? POLLOUT : 0));
    return c->fd;
}

static void st_tcp_close(st_tp *t)
{
    st_tcp *c = (st_tcp *)t;
    close(c->fd);
    free(c->ring);
    free(c);
}

static const st_tp_ops st_tcp_ops = {
    .name = "tcp", .send = st_tcp_send, .peek = st_tcp_peek, .consume = st_tcp_consume, .pollfd = st_tcp_pollfd,
    .close = st_tcp_close, .sendv = st_tcp_sendv, .recv_into = st_tcp_recv_into};

st_tp *st_tp_tcp_new(int fd, int peer, size_t ring)
{
    st_tcp *c = calloc(1, sizeof *c);
    char *buf = aligned_alloc(64, (ring + 63) & ~(size_t)63);
    if (!c || !buf) {
        free(c);
        free(buf);
        close(fd);
        return NULL;
    }
    int one = 1;
    int buf4m = 4 << 20; /* best effort, none fatal if refused: no Nagle, room for a step's messages in flight */
    int notsent = ST_TCP_NOTSENT;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &notsent, sizeof notsent);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf4m, sizeof buf4m);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf4m, sizeof buf4m);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    st_tcp_prefault(buf, ring);
    c->base.ops = &st_tcp_ops;
    c->base.peer = peer;
    c->fd = fd;
    c->ring = buf;
    c->cap = ring;
    return &c->base;
}

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

/* ---- the entry ------------------------------------------------------------------------------------------------ */

static int st_tcp_can_connect(const st_peer_info *me, const st_peer_info *peer, char *why, size_t whylen)
{
    (void)me, (void)peer, (void)why, (void)whylen;
    return 1; /* every pair's control channel is a tcp connection already */
}

/* Nothing per communicator: the bootstrap made the sockets. On rank 0, STITCH_DEBUG says when the host's
 * tcp_slow_start_after_idle will slow the first large collectives down. */
static stitch_status_t st_tcp_setup(st_links *l, int self, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (l->count[self] > 0 && l->boot->rank == 0 && st_debug())
        st_tcp_idle_hint();
    return STITCH_OK;
}

/* The bootstrap's data socket to `peer` becomes the stream, under the congestion control STITCH_TCP_CC says. */
static stitch_status_t st_tcp_connect(st_links *l, int self, int peer, st_tp **out, char *err, size_t errlen)
{
    st_boot *b = l->boot;
    char why[256], used[96];
    if (b->data[peer] < 0) {
        snprintf(err, errlen, "rank %d: tcp to rank %d: no data socket (do STITCH_TRANSPORT and the hosts agree on "
                 "every rank?)", b->rank, peer);
        return STITCH_ERR_INTERNAL;
    }
    if (st_tcp_cc(b->data[peer], l->s->tcp_cc, used, sizeof used, why, sizeof why) != 0) {
        snprintf(err, errlen, "rank %d: tcp to rank %d: %s", b->rank, peer, why);
        return STITCH_ERR_CONFIG;
    }
    snprintf(l->note[self], sizeof l->note[self], "tcp congestion control %s", used);
    *out = st_tp_tcp_new(b->data[peer], peer, l->s->tcp_ring_bytes);
    b->data[peer] = -1; /* owned by the transport now, closed by it even on failure */
    if (*out)
        return STITCH_OK;
    snprintf(err, errlen, "rank %d: out of memory for the transport to rank %d", b->rank, peer);
    return STITCH_ERR_NO_MEMORY;
}

static void st_tcp_teardown(st_links *l, int self)
{
    (void)l, (void)self; /* the streams own their sockets */
}

const st_transport st_transport_tcp = {
    .name = "tcp",
    .data_socket = 1,
    .wake = ST_WAKE_FD,
    .can_connect = st_tcp_can_connect,
    .setup = st_tcp_setup,
    .connect = st_tcp_connect,
    .teardown = st_tcp_teardown,
};
