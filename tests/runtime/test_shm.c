/* test_shm.c - the shm transport (runtime/tp_shm.c) on its own: a producer and a consumer end of one ring in
 * ordinary memory, driven from one thread, no communicator.
 *
 * A consumer takes a frame as published when the tag word at the position it expects holds that position + 1.
 * After the first lap that word may lie inside an older frame's payload, which holds any bytes the user sent; so
 * the producer must clear the tag at the position after each frame before it publishes the frame, or a payload
 * word equal to a future position + 1 passes for a frame (a forged length: a hang or a read past the ring). The
 * test plants exactly that word, for several frame sizes, and checks that an empty ring reads empty.
 */
#include <stdint.h>

#include "runner.h"
#include "transport.h"

#define CAP 4096

static st_bell bell; /* never slept on here */

static void send_all(st_tp *tx, const void *buf, size_t len)
{
    char err[64];
    CHECK(tx->ops->send(tx, buf, len, err, sizeof err) == (ssize_t)len, "a send of %zu bytes was not taken whole",
          len);
}

static void recv_all(st_tp *rx, size_t len)
{
    char err[64];
    const void *p;
    ssize_t n = rx->ops->peek(rx, &p, err, sizeof err);
    CHECK(n == (ssize_t)len, "peek shows %zd bytes, expected %zu", n, len);
    rx->ops->consume(rx, len);
}

/* Frame A's payload is words of value CAP + off + 1, B fills the ring to its end, C (of nc bytes, a frame of off
 * bytes) starts the second lap: the consumer then expects a frame at CAP + off, where A's payload lies. */
static void plant(size_t nc)
{
    size_t off = (16 + nc + 63) / 64 * 64, na = 1024, nb = CAP - (16 + na + 63) / 64 * 64 - 16;
    st_ring *ring = aligned_alloc(64, sizeof(st_ring) + CAP), *back = aligned_alloc(64, sizeof(st_ring) + CAP);
    CHECK(ring && back, "out of memory");
    memset(ring, 0, sizeof(st_ring) + CAP), memset(back, 0, sizeof(st_ring) + CAP);
    st_tp *tx = st_tp_shm_new(ring, back, CAP, &bell, 1), *rx = st_tp_shm_new(back, ring, CAP, &bell, 0);
    CHECK(tx && rx, "st_tp_shm_new failed");
    uint64_t a[1024 / 8], tag = CAP + off + 1;
    for (size_t i = 0; i < na / 8; i++)
        a[i] = tag;
    char b[CAP] = {0}, c[CAP] = {0};
    send_all(tx, a, na), recv_all(rx, na);
    send_all(tx, b, nb), recv_all(rx, nb);
    send_all(tx, c, nc), recv_all(rx, nc);
    const void *p;
    char err[64];
    ssize_t n = rx->ops->peek(rx, &p, err, sizeof err);
    CHECK(n == 0, "C of %zu bytes: an empty ring shows %zd bytes (a payload word %llu passed for a frame tag)", nc,
          n, (unsigned long long)tag);
    tx->ops->close(tx), rx->ops->close(rx);
    free(ring), free(back);
}

static void test_stale_payload(void)
{
    static const size_t sizes[] = {8, 48, 100, 200, 500, 900};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        plant(sizes[i]);
}

static const st_test tests[] = {
    {"stale_payload", test_stale_payload, 10},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
