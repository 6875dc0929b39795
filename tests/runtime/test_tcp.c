/* test_tcp.c - the tcp transport (runtime/tp_tcp.c) on its own, over real loopback sockets, no communicator.
 *
 * What the executor relies on (transport.h): an ordered, intact byte stream per direction, whatever sizes the
 * sender's send and sendv calls and the receiver's consumes come in, with sends that accept only part of what
 * they are given when the kernel's buffers are full, and a staging ring that wraps. Each test pushes tens of
 * megabytes through both directions at once in random-sized pieces (a fixed seed: runs are repeatable) and
 * checks every byte against a pattern of its stream position; a tiny ring on one side makes every peek short
 * and every message wrap; receives alternate between the ring and recv_into (straight into the caller's buffer). The tests also check that the partial paths really ran (short sends, short peeks),
 * so a change that makes them unreachable here does not pass silently.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>

#include "runner.h"
#include "transport.h"

/* A connected loopback tcp pair: *a and *b are the two ends. */
static void tcp_pair(int *a, int *b)
{
    struct sockaddr_in sa = {0};
    socklen_t sl = sizeof sa;
    sa.sin_family = AF_INET, sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0 && bind(l, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(l, 1) == 0, "listen: %s",
          strerror(errno));
    CHECK(getsockname(l, (struct sockaddr *)&sa, &sl) == 0, "getsockname: %s", strerror(errno));
    *a = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(*a >= 0 && connect(*a, (struct sockaddr *)&sa, sizeof sa) == 0, "connect: %s", strerror(errno));
    *b = accept(l, NULL, NULL);
    CHECK(*b >= 0, "accept: %s", strerror(errno));
    close(l);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static size_t rnd(size_t lo, size_t hi) /* uniform enough in [lo, hi] */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (size_t)(rng % (hi - lo + 1));
}

static unsigned char pattern(uint64_t pos, int dir)
{
    return (unsigned char)((pos * 2654435761u >> 7) ^ (pos >> 17) ^ (unsigned)dir * 0x5a);
}

/* One direction of a stream in flight: what was sent, what was checked, how often the partial paths ran. */
typedef struct flow {
    st_tp *tx, *rx;
    int dir;
    uint64_t sent, got, total;
    size_t max_send, max_bite;
    long short_sends, short_peeks;
    unsigned char *src;
    unsigned char *into; /* non-NULL: every other receive is recv_into this buffer (max_bite bytes) */
    long intos;          /* recv_into calls that took bytes */
} flow;

static void flow_send(flow *f)
{
    if (f->sent == f->total)
        return;
    size_t want = rnd(1, f->max_send), left = (size_t)(f->total - f->sent);
    want = want < left ? want : left;
    for (size_t i = 0; i < want; i++)
        f->src[i] = pattern(f->sent + i, f->dir);
    char err[256] = "";
    ssize_t n;
    if (rnd(0, 1)) { /* every other call a gather list of three pieces, some possibly empty */
        size_t a = rnd(0, want), b = rnd(a, want);
        struct iovec iov[3] = {{f->src, a}, {f->src + a, b - a}, {f->src + b, want - b}};
        n = f->tx->ops->sendv(f->tx, iov, 3, err, sizeof err);
        CHECK(n >= 0, "sendv: %s", err);
    } else {
        n = f->tx->ops->send(f->tx, f->src, want, err, sizeof err);
        CHECK(n >= 0, "send: %s", err);
    }
    f->short_sends += (size_t)n < want;
    f->sent += (uint64_t)n; /* the bytes not taken are offered again, regenerated, by the next call */
}

/* A receive straight into f->into, as the executor reads a copied message (exec_msg.c): whatever the ring staged
 * first, then the kernel's bytes, in stream order. */
static void flow_recv_into(flow *f)
{
    char err[256] = "";
    ssize_t n = f->rx->ops->recv_into(f->rx, f->into, rnd(1, f->max_bite), err, sizeof err);
    CHECK(n >= 0, "recv_into: %s", err);
    for (ssize_t i = 0; i < n; i++)
        CHECK(f->into[i] == pattern(f->got + (uint64_t)i, f->dir), "direction %d: byte %llu is %u straight in, "
              "expected %u", f->dir, (unsigned long long)(f->got + (uint64_t)i), f->into[i],
              pattern(f->got + (uint64_t)i, f->dir));
    f->got += (uint64_t)n;
    f->intos += n > 0;
}

static void flow_recv(flow *f)
{
    const void *p;
    char err[256] = "";
    if (f->into && rnd(0, 1)) {
        flow_recv_into(f);
        return;
    }
    ssize_t avail = f->rx->ops->peek(f->rx, &p, err, sizeof err);
    CHECK(avail >= 0, "peek: %s", err);
    if (avail == 0)
        return;
    size_t bite = rnd(1, f->max_bite);
    bite = bite < (size_t)avail ? bite : (size_t)avail;
    f->short_peeks += (uint64_t)avail < f->sent - f->got;
    for (size_t i = 0; i < bite; i++)
        CHECK(((const unsigned char *)p)[i] == pattern(f->got + i, f->dir), "direction %d: byte %llu is %u, "
              "expected %u", f->dir, (unsigned long long)(f->got + i), ((const unsigned char *)p)[i],
              pattern(f->got + i, f->dir));
    f->rx->ops->consume(f->rx, bite);
    f->got += bite;
}

/* Both directions at once between two transports over one loopback pair, rings of ring_a and ring_b bytes; with
 * `into`, receives alternate at random between peek and recv_into. */
static void run_streams(size_t ring_a, size_t ring_b, uint64_t total, size_t max_send, size_t max_bite, int into)
{
    int fa, fb;
    tcp_pair(&fa, &fb);
    st_tp *a = st_tp_tcp_new(fa, 1, ring_a), *b = st_tp_tcp_new(fb, 0, ring_b);
    CHECK(a && b, "st_tp_tcp_new failed");
    short ev;
    CHECK(strcmp(a->ops->name, "tcp") == 0 && a->ops->pollfd(a, &ev) == fa && ev == POLLIN,
          "name %s, pollfd %d (fd %d), events %d", a->ops->name, a->ops->pollfd(a, &ev), fa, ev);
    flow f[2] = {{a, b, 0, 0, 0, total, max_send, max_bite, 0, 0, malloc(max_send), into ? malloc(max_bite) : NULL, 0},
                 {b, a, 1, 0, 0, total, max_send, max_bite, 0, 0, malloc(max_send), into ? malloc(max_bite) : NULL, 0}};
    CHECK(f[0].src && f[1].src && (!into || (f[0].into && f[1].into)), "out of memory");
    double t0 = st_now();
    while (f[0].got < total || f[1].got < total) {
        CHECK(st_now() - t0 < 40, "stuck: sent %llu/%llu, received %llu/%llu",
              (unsigned long long)f[0].sent, (unsigned long long)f[1].sent, (unsigned long long)f[0].got,
              (unsigned long long)f[1].got);
        for (int d = 0; d < 2; d++) {
            flow_send(&f[d]);
            flow_recv(&f[d]);
        }
    }
    for (int d = 0; d < 2; d++) {
        CHECK(f[d].short_sends > 0, "direction %d: no send was ever short: the test no longer fills the socket", d);
        CHECK(f[d].short_peeks > 0, "direction %d: no peek was ever short", d);
        CHECK(!into || f[d].intos > 0, "direction %d: no recv_into took a byte", d);
        free(f[d].src);
        free(f[d].into);
    }
    a->ops->close(a);
    b->ops->close(b);
}

/* 24 MB each way, a 4 KB ring on one side: every receive is many short peeks across wraps, and the sender,
 * offering up to 256 KB at a time, outruns the 4 KB bites until the kernel's buffers are full. */
static void test_stream_tiny_ring(void)
{
    run_streams(4096, 4096, 24u << 20, 256u << 10, 4096, 0);
}

/* Default-sized rings, sends and consumes of any size from 1 byte up: the ring fills, wraps mid-piece. */
static void test_stream_big_ring(void)
{
    run_streams(4u << 20, 1u << 16, 32u << 20, 1u << 20, 300000, 0);
}

/* Receives alternating between the staging ring (peek, consume) and recv_into, in random sizes: the stream stays
 * whole and in order whichever way each byte came, through 4 KB rings that wrap and default-sized ones. */
static void test_stream_into(void)
{
    run_streams(4096, 4096, 16u << 20, 256u << 10, 5000, 1);
    run_streams(4u << 20, 1u << 16, 24u << 20, 1u << 20, 300000, 1);
}

/* The peer closes: what was sent before the close is still delivered whole, then peek fails with a message
 * that names the peer. */
static void test_peer_closed(void)
{
    int fa, fb;
    tcp_pair(&fa, &fb);
    st_tp *a = st_tp_tcp_new(fa, 3, 4096), *b = st_tp_tcp_new(fb, 7, 4096); /* a is rank 7, b rank 3 */
    CHECK(a && b, "st_tp_tcp_new failed");
    char err[256] = "", msg[100];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (char)i;
    CHECK(a->ops->send(a, msg, sizeof msg, err, sizeof err) == (ssize_t)sizeof msg, "send: %s", err);
    a->ops->close(a);
    size_t got = 0;
    ssize_t n;
    const void *p;
    double t0 = st_now();
    while ((n = b->ops->peek(b, &p, err, sizeof err)) >= 0 && st_now() - t0 < 10) {
        CHECK(n == 0 || memcmp(p, msg + got, (size_t)n) == 0, "byte %zu differs", got);
        b->ops->consume(b, (size_t)n);
        got += (size_t)n;
    }
    CHECK(got == sizeof msg, "received %zu of %zu bytes before the error", got, sizeof msg);
    CHECK(strcmp(err, "rank 7 closed its tcp connection (the process exited or died)") == 0, "message: %s", err);
    b->ops->close(b);
}

/* The peer closes while a receiver reads straight: a peek first stages what came (and sees the end), recv_into then
 * hands over the staged bytes and after them fails, every time, with peek's message (it said "nothing now" once the
 * end had been seen by a peek, and a rank would have waited for the control channel to learn of the death). */
static void test_peer_closed_into(void)
{
    int fa, fb;
    tcp_pair(&fa, &fb);
    st_tp *a = st_tp_tcp_new(fa, 3, 4096), *b = st_tp_tcp_new(fb, 7, 4096);
    CHECK(a && b, "st_tp_tcp_new failed");
    char err[256] = "", msg[100], got[100];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (char)(i * 7);
    CHECK(a->ops->send(a, msg, sizeof msg, err, sizeof err) == (ssize_t)sizeof msg, "send: %s", err);
    a->ops->close(a);
    const void *p;
    ssize_t n = 0;
    double t0 = st_now();
    while (n < (ssize_t)sizeof msg && st_now() - t0 < 10) /* until the peek has staged it all */
        CHECK((n = b->ops->peek(b, &p, err, sizeof err)) >= 0, "peek: %s", err);
    size_t have = 0;
    while (have < sizeof got && (n = b->ops->recv_into(b, got + have, 30, err, sizeof err)) > 0)
        have += (size_t)n;
    CHECK(have == sizeof got && memcmp(got, msg, sizeof msg) == 0, "straight in: %zu bytes, or other bytes", have);
    for (int i = 0; i < 3; i++) {
        err[0] = 0;
        n = i < 2 ? b->ops->recv_into(b, got, sizeof got, err, sizeof err) : b->ops->peek(b, &p, err, sizeof err);
        CHECK(n < 0 && strcmp(err, "rank 7 closed its tcp connection (the process exited or died)") == 0,
              "after the end, call %d returned %zd: %s", i, n, err);
    }
    b->ops->close(b);
}

static const st_test tests[] = {
    {"stream_tiny_ring", test_stream_tiny_ring, 60},
    {"stream_big_ring", test_stream_big_ring, 60},
    {"stream_into", test_stream_into, 90},
    {"peer_closed", test_peer_closed, 30},
    {"peer_closed_into", test_peer_closed_into, 30},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
