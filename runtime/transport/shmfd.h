/* shmfd.h - nameless shared memory for the ranks of one host: memfd segments whose descriptors are swapped over
 * authenticated abstract Unix sockets (shmfd.c). */
#ifndef ST_SHMFD_H
#define ST_SHMFD_H

#include <stddef.h>

#include "bootstrap.h"

/* A memfd of `bytes` (zeros), close-on-exec; -1 with a message. */
int st_shmfd_create(size_t bytes, char *err, size_t errlen);
/* My socket for the swap, listening; call before a barrier that precedes every rank's st_shmfd_swap. -1 with a
 * message. */
int st_shmfd_listen(const st_boot *b, char *err, size_t errlen);
/* Give myfd to every other rank of my host and take theirs: fds[r] gets rank r's descriptor (the caller closes
 * them; entries of other hosts are left alone). Bounded by timeout_ms; fails at once when a rank of my host
 * closes its control channel before its swap with me. 0, or -1 with a message. */
int st_shmfd_swap(const st_boot *b, int lfd, int myfd, int *fds, int timeout_ms, char *err, size_t errlen);

#endif
