/* mem.c - stitch_mem_alloc and stitch_mem_free: the checks, then the backend's allocator (processes: shared
 * segments, proc/regmem.c), or where the backend has none (threads, whose ranks read each other's buffers in
 * place anyway) plain 4096-byte aligned memory, listed on the communicator so that a pointer it never gave out, or
 * one freed already, is refused rather than passed to free(). */
#include <stdint.h>
#include <stdlib.h>

#include "comm.h"

static stitch_status_t st_plain_alloc(stitch_comm_t *comm, size_t bytes, void **ptr)
{
    st_plainmem *m = malloc(sizeof *m);
    void *p = m && bytes <= SIZE_MAX - 4095 ? aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095) : NULL;
    if (!p) {
        free(m);
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_mem_alloc: cannot allocate %zu bytes", bytes);
    }
    *m = (st_plainmem){p, comm->plainmem};
    comm->plainmem = m;
    *ptr = p;
    return STITCH_OK;
}

static stitch_status_t st_plain_free(stitch_comm_t *comm, void *ptr)
{
    st_plainmem **at = &comm->plainmem;
    while (*at && (*at)->ptr != ptr)
        at = &(*at)->next;
    if (!*at)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "stitch_mem_free: rank %d: %p is not a live buffer "
                             "of stitch_mem_alloc on this communicator (never allocated here, a slice of one, or "
                             "freed already)", comm->rank, ptr);
    st_plainmem *m = *at;
    *at = m->next;
    free(m->ptr);
    free(m);
    return STITCH_OK;
}

stitch_status_t stitch_mem_alloc(stitch_comm_t *comm, size_t bytes, void **ptr)
{
    stitch_status_t st = st_comm_enter(comm, "stitch_mem_alloc");
    if (st != STITCH_OK)
        return st;
    if (!ptr || bytes == 0)
        st = st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "stitch_mem_alloc: rank %d: %s", comm->rank,
                           !ptr ? "ptr is NULL" : "bytes is 0");
    else
        st = comm->be->mem_alloc ? comm->be->mem_alloc(comm, bytes, ptr) : st_plain_alloc(comm, bytes, ptr);
    st_comm_leave(comm);
    return st;
}

stitch_status_t stitch_mem_free(stitch_comm_t *comm, void *ptr)
{
    stitch_status_t st = st_comm_enter(comm, "stitch_mem_free");
    if (st != STITCH_OK)
        return st;
    if (ptr)
        st = comm->be->mem_free ? comm->be->mem_free(comm, ptr) : st_plain_free(comm, ptr);
    st_comm_leave(comm);
    return st;
}
