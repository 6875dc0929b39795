/* dev_ops.h - the device layer's table (device.h says what a device communicator is and the rules every entry
 * keeps). Its own header, in C that C++ reads too, because the CUDA entry (dev_cuda.cu) is compiled by nvcc as C++
 * and must not see the runtime's C11 headers (_Atomic).
 */
#ifndef ST_DEV_OPS_H
#define ST_DEV_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "dev_logic.h"
#include "stitch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct st_dev_ops {
    const char *name; /* "cuda", "host": what stitch_comm_init_devices and stitch-perf --device take */
    /* A call's channels (blocks): one per block_bytes it moves, at most max_blocks, and at most device_blocks
     * shared by the ranks of one device (0: no such bound), which must all be resident at once. */
    uint32_t block_bytes, max_blocks, device_blocks;
    /* Usable here? 1 with the number of devices, or 0 with why ("no CUDA device: cudaGetDeviceCount: ..."). */
    int (*probe)(int *ndevices, char *why, size_t len);
    /* Make `device` current for the calling thread. */
    stitch_status_t (*bind)(int device, char *err, size_t len);
    stitch_status_t (*alloc)(int device, size_t bytes, void **out, char *err, size_t len);
    void (*free)(int device, void *p);
    stitch_status_t (*alloc_shared)(size_t bytes, void **out, char *err, size_t len);
    void (*free_shared)(void *p);
    /* Let kernels on `device` read and write memory of `peer` (CUDA peer access; nothing on one device). */
    stitch_status_t (*map_peer)(int device, int peer, char *err, size_t len);
    stitch_status_t (*stream_new)(int device, void **out, char *err, size_t len);
    void (*stream_free)(int device, void *stream);
    /* Is p memory of `device` that kernels can use? 0, or -1 with a clause ("is host memory", "is on device 1"). */
    int (*check_ptr)(const void *p, int device, char *why, size_t len);
    /* Stream-ordered, never waiting for the device: */
    stitch_status_t (*alloc_async)(int device, size_t bytes, void *stream, void **out, char *err, size_t len);
    void (*free_async)(int device, void *p, void *stream);
    stitch_status_t (*upload)(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len);
    /* Device to host, stream-ordered (stitch-perf and the tests read results back; then they synchronize). */
    stitch_status_t (*download)(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len);
    stitch_status_t (*launch)(const st_drun *r, uint32_t nblocks, void *stream, char *err, size_t len);
    /* An error the stream's work hit (a kernel fault), without waiting: STITCH_OK while none. */
    stitch_status_t (*query)(void *stream, char *err, size_t len);
    stitch_status_t (*sync)(void *stream, char *err, size_t len);
    /* The device's copy rate's reference: a stream-ordered device-to-device copy (stitch-perf's bound). */
    stitch_status_t (*copy)(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len);
} st_dev_ops;

/* The entry called `name`, or NULL with why (unknown name; "cuda" in a build without the toolkit). */
const st_dev_ops *st_dev_find(const char *name, char *why, size_t len);
/* For stitch-info: whether the CUDA entry is built, and why not. */
const char *st_dev_cuda_build_note(void);

extern const st_dev_ops st_dev_host;
extern const st_dev_ops st_dev_cuda; /* only in builds with the CUDA backend (STITCH_HAVE_CUDA) */

#ifdef __cplusplus
}
#endif

#endif
