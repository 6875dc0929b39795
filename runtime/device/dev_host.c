/* dev_host.c - the "host" entry of the device layer: the device engine on host threads, for testing without an
 * accelerator.
 *
 * Memory is host memory, a stream is nothing (every operation completes before it returns), and launch runs the
 * rank's program (dev_logic.h, the code the CUDA kernel runs) on the calling thread as block 0 and on nblocks - 1
 * helper threads as the other blocks, each block one worker: the channels, their barrier and the dealing of
 * chunks are exercised as on a GPU. A launch that fails (timeout, abort) returns STITCH_OK like an asynchronous
 * one: the failure is in the abort word and the next call reports it, so the host entry tests that path too.
 * Ranks must be threads that call at once (a synchronous launch waits for its peers, as threads ranks do).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

static int st_host_probe(int *n, char *why, size_t len)
{
    *n = 1;
    return 1;
}

static stitch_status_t st_host_bind(int device, char *err, size_t len)
{
    return STITCH_OK;
}

static stitch_status_t st_host_alloc(int device, size_t bytes, void **out, char *err, size_t len)
{
    size_t size = (bytes + 63) & ~(size_t)63;
    *out = aligned_alloc(64, size ? size : 64);
    if (!*out) {
        snprintf(err, len, "cannot allocate %zu bytes", size);
        return STITCH_ERR_NO_MEMORY;
    }
    memset(*out, 0, size);
    return STITCH_OK;
}

static void st_host_free(int device, void *p)
{
    free(p);
}

static stitch_status_t st_host_alloc_shared(size_t bytes, void **out, char *err, size_t len)
{
    return st_host_alloc(0, bytes, out, err, len);
}

static void st_host_free_shared(void *p)
{
    free(p);
}

static stitch_status_t st_host_map_peer(int device, int peer, char *err, size_t len)
{
    return STITCH_OK;
}

static char st_host_stream_token;

static stitch_status_t st_host_stream_new(int device, void **out, char *err, size_t len)
{
    *out = &st_host_stream_token;
    return STITCH_OK;
}

static void st_host_stream_free(int device, void *stream)
{
}

static int st_host_check_ptr(const void *p, int device, char *why, size_t len)
{
    return 0;
}

static stitch_status_t st_host_alloc_async(int device, size_t bytes, void *stream, void **out, char *err,
                                           size_t len)
{
    return st_host_alloc(device, bytes, out, err, len);
}

static void st_host_free_async(int device, void *p, void *stream)
{
    free(p);
}

static stitch_status_t st_host_upload(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len)
{
    memcpy(dst, src, bytes);
    return STITCH_OK;
}

typedef struct st_host_block {
    const st_drun *r;
    uint32_t blk, nblk;
    pthread_t th;
} st_host_block;

static void *st_host_block_main(void *arg)
{
    st_host_block *b = arg;
    st_dl_run(b->r, b->blk, b->nblk, 0, 1);
    return NULL;
}

static stitch_status_t st_host_launch(const st_drun *r, uint32_t nblocks, void *stream, char *err, size_t len)
{
    st_host_block *b = calloc(nblocks, sizeof *b);
    if (!b) {
        snprintf(err, len, "out of memory for %u blocks", nblocks);
        return STITCH_ERR_NO_MEMORY;
    }
    uint32_t started = 1;
    for (uint32_t i = 0; i < nblocks; i++)
        b[i] = (st_host_block){r, i, nblocks, 0};
    for (; started < nblocks; started++)
        if (pthread_create(&b[started].th, NULL, st_host_block_main, &b[started]) != 0)
            break;
    if (started < nblocks) { /* the blocks started would wait for the missing ones at the first barrier */
        __atomic_store_n(&r->ctl->abort, 1, __ATOMIC_RELEASE);
        snprintf(err, len, "cannot start a thread for block %u of %u", started, nblocks);
    }
    st_host_block_main(&b[0]);
    for (uint32_t i = 1; i < started; i++)
        pthread_join(b[i].th, NULL);
    free(b);
    return started < nblocks ? STITCH_ERR_SYSTEM : STITCH_OK;
}

static stitch_status_t st_host_query(void *stream, char *err, size_t len)
{
    return STITCH_OK;
}

static stitch_status_t st_host_copy(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len)
{
    memcpy(dst, src, bytes);
    return STITCH_OK;
}

const st_dev_ops st_dev_host = {
    .name = "host",
    .block_bytes = 64, /* several channels from a few elements on: the tests exercise the channels' logic */
    .max_blocks = 3,
    .device_blocks = 0,
    .probe = st_host_probe,
    .bind = st_host_bind,
    .alloc = st_host_alloc,
    .free = st_host_free,
    .alloc_shared = st_host_alloc_shared,
    .free_shared = st_host_free_shared,
    .map_peer = st_host_map_peer,
    .stream_new = st_host_stream_new,
    .stream_free = st_host_stream_free,
    .check_ptr = st_host_check_ptr,
    .alloc_async = st_host_alloc_async,
    .free_async = st_host_free_async,
    .upload = st_host_upload,
    .download = st_host_upload,
    .launch = st_host_launch,
    .query = st_host_query,
    .sync = st_host_query,
    .copy = st_host_copy,
};
