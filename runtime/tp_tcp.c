/* tp_tcp.c - the tcp transport: one non-blocking socket per peer and direction pair, an rx staging ring.
 *
 * send() goes straight from the caller's buffer into the kernel (no staging on the way out; sendv gathers a
 * message's header, payload and padding into one sendmsg: measured, np 2 all_reduce over loopback, one call per
 * message instead of one per piece took 8 KB from 40 to 30 us and 32 KB from 50 to 32 us, medians of 7).
 * Incoming bytes are read into a power-of-two ring so the executor can reduce out of it in place (transport.h);
 * the ring is refilled on every peek, so the kernel's socket buffer keeps draining while the executor works on
 * what it already has.
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
 * proc.c picks the congestion control (st_tcp_cc).
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

static const st_tp_ops st_tcp_ops = {"tcp", st_tcp_send, st_tcp_peek, st_tcp_consume, st_tcp_pollfd, st_tcp_close,
                                     NULL, NULL, st_tcp_sendv};

st_tp *st_tp_tcp_new(int fd, int peer, size_t ring)
{
    st_tcp *c = calloc(1, sizeof *c);
    char *buf = aligned_alloc(64, ring);
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
