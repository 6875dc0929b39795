/* shmfd.c - the shared memory of process mode has no name: each rank's segment is a memfd, and its descriptor
 * goes to the other ranks of its host over a Unix socket (SCM_RIGHTS), so that no death, at any moment, can
 * leave a file in /dev/shm (proc.c's opening comment says why this and not an early unlink).
 *
 * Sockets. Every rank that shares memory listens on an abstract-namespace Unix socket (no file either: the name
 * goes away with the socket, and with the process) named "stitch-shm-<h>-<rank>", h a SipHash under the job's
 * key of the peer table, so two jobs (or two communicators of one job) on a host never meet. For each pair of
 * ranks of a host, the lower rank connects to the higher one's socket and the two swap descriptors over that
 * one connection. A rank first connects to every higher rank, one after the other, then accepts from every
 * lower one: the highest rank only accepts, so by induction from the top every connect is answered (a rank
 * blocks in a connect's handshake only until the higher rank is done with its own connects). Every step waits
 * with poll against the caller's deadline.
 *
 * Authentication. An abstract socket has no file permissions: anyone in the network namespace can connect to
 * it, and anyone can bind a name first. So both ends check, before anything else, that the other end runs as
 * their own user (SO_PEERCRED; another user is dropped at once, without reading a byte), then prove to each
 * other that they hold the job's key: each sends a random 128-bit nonce, then SipHash(key, label, its rank, the
 * other's rank, the other's nonce); the ranks are in the message in a fixed order, so a proof reflected back to
 * its sender does not verify. A descriptor is sent only after the other end's proof verified. A connection to
 * my socket that fails a check is closed and not counted; I go on accepting until the ranks I expect came or
 * the deadline passed.
 */
#define _GNU_SOURCE /* memfd_create, SO_PEERCRED, struct ucred, accept4 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "shmfd.h"

#define ST_FDX_MAGIC 0x53544658u /* "STFX" */

typedef struct st_fdx_hello {
    uint32_t magic;
    int32_t rank;
    uint64_t nonce[2];
} st_fdx_hello;

/* ---- deadlines and whole reads/writes --------------------------------------------------------------------- */

/* Send or receive exactly len bytes, with one descriptor riding on the first byte when fd_io is not NULL (sent:
 * *fd_io; received: stored in *fd_io). 0, or -1 with a message. */
static int st_fdx_io(int s, void *buf, size_t len, int writing, int *fd_io, const struct timespec *at, char *err,
                     size_t errlen)
{
    size_t done = 0;
    while (done < len) {
        int r = st_poll1(s, writing ? POLLOUT : POLLIN, at);
        if (r <= 0) {
            snprintf(err, errlen, "%s", r == 0 ? "timed out" : strerror(errno));
            return -1;
        }
        union {
            struct cmsghdr h;
            char space[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = {(char *)buf + done, len - done};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
        int with_fd = fd_io && done == 0;
        if (with_fd) {
            memset(&ctl, 0, sizeof ctl);
            m.msg_control = ctl.space, m.msg_controllen = sizeof ctl.space;
        }
        if (with_fd && writing) {
            struct cmsghdr *c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(c), fd_io, sizeof(int));
        }
        ssize_t n = writing ? sendmsg(s, &m, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recvmsg(s, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n == 0 && !writing) {
            snprintf(err, errlen, "connection closed by the other side");
            return -1;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(err, errlen, "%s", strerror(errno));
            return -1;
        }
        if (n > 0 && with_fd && !writing) {
            struct cmsghdr *c = CMSG_FIRSTHDR(&m);
            if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
                c->cmsg_len != CMSG_LEN(sizeof(int))) {
                snprintf(err, errlen, "no descriptor came with the message%s",
                         m.msg_flags & MSG_CTRUNC ? " (truncated: descriptor limit?)" : "");
                return -1;
            }
            memcpy(fd_io, CMSG_DATA(c), sizeof(int));
        }
        done += n > 0 ? (size_t)n : 0;
    }
    return 0;
}

/* ---- naming and authentication ------------------------------------------------------------------------------ */

static int st_same_host(const st_boot *b, int i)
{
    return b->peers[i].host == b->peers[b->rank].host;
}

/* The abstract address of rank r's socket (sun_path[0] is 0); returns the address length. */
static socklen_t st_fdx_addr(const st_boot *b, int r, struct sockaddr_un *sa)
{
    uint64_t v[4], h = 0;
    for (int i = 0; i < b->size; i++) { /* the fields every rank holds alike (not the struct's padding) */
        const st_peer_info *p = &b->peers[i];
        v[0] = p->ip, v[1] = p->port, v[2] = p->pid, v[3] = p->host ^ h;
        h = st_siphash(b->key, v, sizeof v);
    }
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    int n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "stitch-shm-%016llx-%d", (unsigned long long)h, r);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The proof that `from` holds the key, for `to`, over to's nonce. */
static uint64_t st_fdx_proof(const st_boot *b, int from, int to, const uint64_t nonce[2])
{
    uint64_t m[5] = {0x73746974636873ull /* "stitchs" */, (uint64_t)from, (uint64_t)to, nonce[0], nonce[1]};
    return st_siphash(b->key, m, sizeof m);
}

/* The other end of s runs as my user. */
static int st_fdx_same_user(int s, char *err, size_t errlen)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) {
        snprintf(err, errlen, "SO_PEERCRED: %s", strerror(errno));
        return -1;
    }
    if (cr.uid != geteuid()) {
        snprintf(err, errlen, "pid %d of user %u is not this job's user %u", (int)cr.pid, (unsigned)cr.uid,
                 (unsigned)geteuid());
        return -1;
    }
    return 0;
}

/* Both ends run this over one connection: hellos, proofs, then descriptors. `peer` is the rank the other end must
 * be (-1 on the accepting side: any lower rank of my host not yet served, told in `served`); its descriptor goes to
 * fds[peer]. Returns the peer's rank, or -1 with a message. */
static int st_fdx_swap1(const st_boot *b, int s, int peer, const int *served, int myfd, int *fds,
                        const struct timespec *at, char *err, size_t errlen)
{
    st_fdx_hello mine = {ST_FDX_MAGIC, b->rank, {0, 0}}, theirs;
    uint64_t proof, their_proof;
    char why[160];
    int fd = -1;
    if (st_fdx_same_user(s, err, errlen) != 0)
        return -1;
    if (getrandom(mine.nonce, sizeof mine.nonce, 0) != (ssize_t)sizeof mine.nonce) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return -1;
    }
    if (st_fdx_io(s, &mine, sizeof mine, 1, NULL, at, why, sizeof why) != 0 ||
        st_fdx_io(s, &theirs, sizeof theirs, 0, NULL, at, why, sizeof why) != 0)
        goto fail;
    int r = theirs.rank;
    int ok = theirs.magic == ST_FDX_MAGIC && r >= 0 && r < b->size && r != b->rank && st_same_host(b, r) &&
             (peer >= 0 ? r == peer : r < b->rank && !served[r]);
    if (!ok) {
        snprintf(why, sizeof why, "a hello from no rank expected here (magic %08x, rank %d)", theirs.magic, r);
        goto fail;
    }
    proof = st_fdx_proof(b, b->rank, r, theirs.nonce);
    if (st_fdx_io(s, &proof, sizeof proof, 1, NULL, at, why, sizeof why) != 0 ||
        st_fdx_io(s, &their_proof, sizeof their_proof, 0, NULL, at, why, sizeof why) != 0)
        goto fail;
    if (their_proof != st_fdx_proof(b, r, b->rank, mine.nonce)) {
        snprintf(why, sizeof why, "the other end claims rank %d but does not hold the job's key", r);
        goto fail;
    }
    char one = 'F', got = 0;
    if (st_fdx_io(s, &one, 1, 1, &myfd, at, why, sizeof why) != 0 ||
        st_fdx_io(s, &got, 1, 0, &fd, at, why, sizeof why) != 0)
        goto fail;
    fds[r] = fd;
    return r;
fail:
    snprintf(err, errlen, "%s", why);
    return -1;
}

/* ---- the calls ------------------------------------------------------------------------------------------------ */

int st_shmfd_create(size_t bytes, char *err, size_t errlen)
{
    int fd = memfd_create("stitch-shm", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        snprintf(err, errlen, "ftruncate(memfd, %zu): %s", bytes, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int st_shmfd_listen(const st_boot *b, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    socklen_t len = st_fdx_addr(b, b->rank, &sa);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, len) != 0 || listen(s, SOMAXCONN) != 0) {
        snprintf(err, errlen, "unix socket @%s: %s", sa.sun_path + 1, strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    return s;
}

/* Connect to rank r's socket: a full backlog (EAGAIN) is waited out until the deadline. */
static int st_fdx_connect(const st_boot *b, int r, const struct timespec *at, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    socklen_t len = st_fdx_addr(b, r, &sa);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    while (connect(s, (struct sockaddr *)&sa, len) != 0) {
        if ((errno != EAGAIN && errno != EINTR) || st_ms_left(at) <= 0) {
            snprintf(err, errlen, "connect to @%s: %s", sa.sun_path + 1,
                     errno == ECONNREFUSED ? "nobody listens (does that rank share memory? STITCH_TRANSPORT must "
                                             "be the same on every rank)" : strerror(errno));
            close(s);
            return -1;
        }
        usleep(1000);
    }
    return s;
}

/* Wait for a connection on lfd, watching the control channels of the lower ranks still expected: one that closes
 * (the rank died, or gave up on an error of its own) ends the wait at once rather than at the deadline. POLLRDHUP
 * only: a barrier byte a faster peer already sent on its channel must stay unread. 1: a connection waits; 0 or -1
 * with a message in why. */
static int st_fdx_accept_wait(const st_boot *b, int lfd, const int *served, const struct timespec *at, char *why,
                              size_t whylen)
{
    struct pollfd *pf = calloc((size_t)b->size + 1, sizeof *pf);
    int *who = calloc((size_t)b->size + 1, sizeof *who), n = 1, rc = -1;
    if (!pf || !who) {
        snprintf(why, whylen, "out of memory");
        goto done;
    }
    pf[0] = (struct pollfd){lfd, POLLIN, 0};
    for (int r = 0; r < b->rank; r++)
        if (st_same_host(b, r) && !served[r] && b->ctrl[r] >= 0)
            who[n] = r, pf[n++] = (struct pollfd){b->ctrl[r], POLLRDHUP, 0};
    for (;;) {
        long left = st_ms_left(at);
        if (left <= 0) {
            snprintf(why, whylen, "timed out");
            rc = 0;
            break;
        }
        int k = poll(pf, (nfds_t)n, left > 1000 ? 1000 : (int)left);
        if (k < 0 && errno != EINTR) {
            snprintf(why, whylen, "poll: %s", strerror(errno));
            break;
        }
        int gone = -1;
        for (int i = 1; k > 0 && i < n && gone < 0; i++)
            gone = pf[i].revents ? who[i] : -1;
        if (gone >= 0) {
            snprintf(why, whylen, "rank %d closed its control connection first (it died, or failed)", gone);
            break;
        }
        if (k > 0 && pf[0].revents) {
            rc = 1;
            break;
        }
    }
done:
    free(pf);
    free(who);
    return rc;
}

int st_shmfd_swap(const st_boot *b, int lfd, int myfd, int *fds, int timeout_ms, char *err, size_t errlen)
{
    struct timespec at;
    char why[256];
    int expect = 0, *served = calloc((size_t)b->size, sizeof *served);
    if (!served) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += timeout_ms / 1000, at.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L)
        at.tv_sec++, at.tv_nsec -= 1000000000L;
    for (int r = b->rank + 1; r < b->size; r++) { /* first every higher rank of my host */
        if (!st_same_host(b, r))
            continue;
        int s = st_fdx_connect(b, r, &at, why, sizeof why);
        int got = s < 0 ? -1 : st_fdx_swap1(b, s, r, served, myfd, fds, &at, why, sizeof why);
        if (s >= 0)
            close(s);
        if (got < 0) {
            snprintf(err, errlen, "descriptor swap with rank %d: %s", r, why);
            free(served);
            return -1;
        }
    }
    for (int r = 0; r < b->rank; r++)
        expect += st_same_host(b, r);
    while (expect > 0) { /* then every lower one; a connection that fails a check is dropped, not counted */
        int r = st_fdx_accept_wait(b, lfd, served, &at, why, sizeof why);
        int s = r > 0 ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK) : -1;
        if (r <= 0) {
            snprintf(err, errlen, "descriptor swap: %d lower ranks of this host did not connect: %s", expect, why);
            free(served);
            return -1;
        }
        if (s < 0)
            continue; /* the connection went away before we took it (ECONNABORTED), or EAGAIN */
        int got = st_fdx_swap1(b, s, -1, served, myfd, fds, &at, why, sizeof why);
        close(s);
        if (got >= 0)
            served[got] = 1, expect--;
        else
            fprintf(stderr, "stitch: rank %d: dropped a connection to its shared-memory socket: %s\n", b->rank, why);
    }
    free(served);
    return 0;
}
