/* st_readfile.h - read a whole regular file, bounded, without blocking (the DSL front end and the topology loader).
 *
 * The file is opened without blocking and then checked through its descriptor, so a FIFO, a device (/dev/zero, a
 * terminal) or a directory is refused at once rather than read forever, and nothing can be swapped in between a
 * check and the open. The size limit is checked before and after reading (a file that grows is caught too).
 */
#ifndef ST_READFILE_H
#define ST_READFILE_H

#include <stddef.h>

/* Read all of `path` (a regular file of at most `max` bytes; `max` a whole number of MiB, for the message) into a
 * malloc'd buffer (*text, *len). Returns 0; -1 when the file cannot be opened (errno set); -2 when it is not a
 * regular file, is too large or cannot be read. On failure `why` holds the reason (`cannot read: ...`, `not a
 * regular file (a FIFO or pipe); only regular files are read`, `file too large (N bytes); the limit for a <what>
 * is M MiB`). */
int st_read_regular(const char *path, size_t max, const char *what, char **text, size_t *len, char *why,
                    size_t whycap);

#endif
