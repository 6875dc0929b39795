/* st_readfile.c - reading a whole input file without ever blocking or filling memory (see st_readfile.h).
 *
 * Shared by the DSL front end (dsl/frontend.c, st_read_source) and the topology loader (core/st_topofile.c): one
 * open that cannot block, fstat on that descriptor, only regular files, at most `max` bytes.
 */
#include "st_readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What kind of thing a non-regular file is, for the message that refuses it. */
static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO or pipe" : S_ISCHR(m) ? "a character device" : S_ISDIR(m) ? "a directory"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

/* Read all of `fd` up to max + 1 bytes (one more than allowed, so a file that grew past the limit after
 * fstat is still caught). Returns the buffer, or NULL with errno set. */
static char *read_all(int fd, size_t max, size_t hint, size_t *len)
{
    size_t cap = hint < max ? hint + 1 : (size_t)max + 1, n = 0;
    char *buf = malloc(cap);
    while (buf && n <= max) {
        if (n == cap) {
            size_t cap2 = cap * 2 > (size_t)max + 1 ? (size_t)max + 1 : cap * 2;
            char *nb = realloc(buf, cap2);
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb, cap = cap2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got == 0)
            break;
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        n += (size_t)got;
    }
    if (!buf)
        errno = ENOMEM;
    *len = n;
    return buf;
}

int st_read_regular(const char *path, size_t max, const char *what, char **text, size_t *len, char *why,
                    size_t whycap)
{
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, before fstat could refuse it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    *text = NULL;
    *len = 0;
    if (fd < 0) {
        int e = errno;
        snprintf(why, whycap, "cannot read: %s", strerror(e));
        errno = e;
        return -1;
    }
    int rc = -2;
    if (fstat(fd, &st) != 0)
        snprintf(why, whycap, "cannot read: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, whycap, "not a regular file (%s); only regular files are read", file_kind(st.st_mode));
    else if ((unsigned long long)st.st_size > max)
        snprintf(why, whycap, "file too large (%lld bytes); the limit for a %s is %zu MiB", (long long)st.st_size,
                 what, max >> 20);
    else if (!(*text = read_all(fd, max, (size_t)st.st_size, len)))
        snprintf(why, whycap, "cannot read: %s", strerror(errno));
    else if (*len > max)
        snprintf(why, whycap, "file too large (it grew past %zu MiB while being read); the limit for a %s is %zu MiB",
                 max >> 20, what, max >> 20);
    else
        rc = 0;
    if (rc != 0) {
        free(*text);
        *text = NULL;
    }
    close(fd);
    return rc;
}

