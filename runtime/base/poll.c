/* poll.c - non-blocking sockets against a deadline: wait for one fd, move exactly n bytes. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base.h"

int st_poll1(int fd, short events, const struct timespec *at)
{
    for (;;) {
        long left = st_ms_left(at);
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* Read or write exactly len bytes before the deadline; 0, or -1 with a message. */
int st_io_all(int fd, void *buf, size_t len, int writing, const struct timespec *at, char *err, size_t errlen)
{
    size_t done = 0;
    while (done < len) {
        int r = st_poll1(fd, writing ? POLLOUT : POLLIN, at);
        if (r <= 0) {
            snprintf(err, errlen, "%s", r == 0 ? "timed out" : strerror(errno));
            return -1;
        }
        ssize_t n = writing ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
        if (n == 0 && !writing) {
            snprintf(err, errlen, "connection closed by the other side");
            return -1;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(err, errlen, "%s", strerror(errno));
            return -1;
        }
        done += n > 0 ? (size_t)n : 0;
    }
    return 0;
}
