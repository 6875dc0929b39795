/* dev_cuda.cu - the CUDA entry of the device layer: every call of the CUDA runtime in stitch is in this file.
 *
 * The kernel is the interpreter of dev_logic.h, one launch per rank and call: blocks are the rank's channels,
 * ST_CUDA_THREADS threads each. Ranks sharing a GPU each launch on their own stream and spin on each other's
 * flags, so their kernels must be resident together: the ranks of one device share 128 blocks (dev_comm.c: at
 * most 64 per rank, 128 / ranks per device), which fit an H100/H200 (132 SMs, 4 blocks of 512 threads each)
 * with room to spare.
 *
 * Nothing on the enqueue path waits for the device: scratch and programs are allocated and freed stream-ordered
 * (cudaMallocAsync/cudaFreeAsync; cudaFree would wait for every kernel, including peers' kernels that wait for
 * this rank's next launch). The abort word lives in mapped pinned memory, so the host raises it and reads a
 * kernel's failure without synchronising.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "dev_ops.h"

#define ST_CUDA_THREADS 512

static stitch_status_t st_cuda_err(cudaError_t e, const char *what, char *err, size_t len)
{
    if (e == cudaSuccess)
        return STITCH_OK;
    snprintf(err, len, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return e == cudaErrorMemoryAllocation ? STITCH_ERR_NO_MEMORY : STITCH_ERR_DEVICE;
}

__global__ void __launch_bounds__(ST_CUDA_THREADS) st_cuda_kernel(st_drun r)
{
    st_dl_run(&r, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x);
}

static int st_cuda_probe(int *n, char *why, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(why, len, "no usable CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return 0;
    }
    if (count == 0) {
        snprintf(why, len, "no CUDA device (cudaGetDeviceCount gives 0)");
        return 0;
    }
    *n = count;
    return 1;
}

static stitch_status_t st_cuda_bind(int device, char *err, size_t len)
{
    return st_cuda_err(cudaSetDevice(device), "cudaSetDevice", err, len);
}

static stitch_status_t st_cuda_alloc(int device, size_t bytes, void **out, char *err, size_t len)
{
    stitch_status_t st = st_cuda_bind(device, err, len);
    if (st == STITCH_OK)
        st = st_cuda_err(cudaMalloc(out, bytes), "cudaMalloc", err, len);
    if (st == STITCH_OK && (st = st_cuda_err(cudaMemset(*out, 0, bytes), "cudaMemset", err, len)) != STITCH_OK)
        cudaFree(*out);
    if (st != STITCH_OK)
        *out = NULL;
    return st;
}

static void st_cuda_free(int device, void *p)
{
    cudaSetDevice(device);
    cudaFree(p);
}

static stitch_status_t st_cuda_alloc_shared(size_t bytes, void **out, char *err, size_t len)
{
    stitch_status_t st =
        st_cuda_err(cudaHostAlloc(out, bytes, cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc", err, len);
    if (st == STITCH_OK)
        memset(*out, 0, bytes);
    else
        *out = NULL;
    return st;
}

static void st_cuda_free_shared(void *p)
{
    cudaFreeHost(p);
}

static stitch_status_t st_cuda_map_peer(int device, int peer, char *err, size_t len)
{
    int can = 0;
    stitch_status_t st = st_cuda_err(cudaDeviceCanAccessPeer(&can, device, peer), "cudaDeviceCanAccessPeer", err, len);
    if (st != STITCH_OK)
        return st;
    if (!can) {
        snprintf(err, len, "device %d cannot access device %d's memory (no peer access: cudaDeviceCanAccessPeer)",
                 device, peer);
        return STITCH_ERR_DEVICE;
    }
    if ((st = st_cuda_bind(device, err, len)) != STITCH_OK)
        return st;
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
        e = cudaSuccess, cudaGetLastError();
    if ((st = st_cuda_err(e, "cudaDeviceEnablePeerAccess", err, len)) != STITCH_OK)
        return st;
    /* scratch comes from the peer's default pool (cudaMallocAsync), which peer access does not open by itself */
    cudaMemPool_t pool;
    cudaMemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = cudaMemLocationTypeDevice, d.location.id = device, d.flags = cudaMemAccessFlagsProtReadWrite;
    if ((st = st_cuda_err(cudaDeviceGetDefaultMemPool(&pool, peer), "cudaDeviceGetDefaultMemPool", err, len)) !=
        STITCH_OK)
        return st;
    return st_cuda_err(cudaMemPoolSetAccess(pool, &d, 1), "cudaMemPoolSetAccess", err, len);
}

static stitch_status_t st_cuda_stream_new(int device, void **out, char *err, size_t len)
{
    cudaStream_t s = NULL;
    stitch_status_t st = st_cuda_bind(device, err, len);
    if (st == STITCH_OK)
        st = st_cuda_err(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate", err, len);
    *out = s;
    return st;
}

static void st_cuda_stream_free(int device, void *stream)
{
    cudaSetDevice(device);
    cudaStreamDestroy((cudaStream_t)stream);
}

static int st_cuda_check_ptr(const void *p, int device, char *why, size_t len)
{
    cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, len, "is not memory CUDA knows (cudaPointerGetAttributes: %s)", cudaGetErrorString(e));
        return -1;
    }
    if (at.type == cudaMemoryTypeUnregistered || at.type == cudaMemoryTypeHost) {
        snprintf(why, len, "is %s host memory (cudaPointerGetAttributes), not device memory",
                 at.type == cudaMemoryTypeHost ? "pinned" : "pageable");
        return -1;
    }
    if (at.type == cudaMemoryTypeDevice && at.device != device) {
        snprintf(why, len, "is memory of device %d", at.device);
        return -1;
    }
    return 0;
}

static stitch_status_t st_cuda_alloc_async(int device, size_t bytes, void *stream, void **out, char *err, size_t len)
{
    cudaStream_t s = (cudaStream_t)stream;
    stitch_status_t st = st_cuda_err(cudaMallocAsync(out, bytes, s), "cudaMallocAsync", err, len);
    if (st == STITCH_OK && (st = st_cuda_err(cudaMemsetAsync(*out, 0, bytes, s), "cudaMemsetAsync", err, len)) !=
                               STITCH_OK)
        cudaFreeAsync(*out, s);
    if (st != STITCH_OK)
        *out = NULL, cudaGetLastError();
    return st;
}

static void st_cuda_free_async(int device, void *p, void *stream)
{
    cudaFreeAsync(p, (cudaStream_t)stream);
}

static stitch_status_t st_cuda_upload(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len)
{
    /* from pageable memory: staged by the driver before this returns, so src may change afterwards */
    return st_cuda_err(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream),
                       "cudaMemcpyAsync", err, len);
}

static stitch_status_t st_cuda_download(void *dst, const void *src, size_t bytes, void *stream, char *err,
                                        size_t len)
{
    return st_cuda_err(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream),
                       "cudaMemcpyAsync", err, len);
}

static stitch_status_t st_cuda_launch(const st_drun *r, uint32_t nblocks, void *stream, char *err, size_t len)
{
    st_cuda_kernel<<<nblocks, ST_CUDA_THREADS, 0, (cudaStream_t)stream>>>(*r);
    return st_cuda_err(cudaGetLastError(), "kernel launch", err, len);
}

static stitch_status_t st_cuda_query(void *stream, char *err, size_t len)
{
    cudaError_t e = cudaStreamQuery((cudaStream_t)stream);
    return e == cudaErrorNotReady ? STITCH_OK : st_cuda_err(e, "cudaStreamQuery", err, len);
}

static stitch_status_t st_cuda_sync(void *stream, char *err, size_t len)
{
    return st_cuda_err(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize", err, len);
}

static stitch_status_t st_cuda_copy(void *dst, const void *src, size_t bytes, void *stream, char *err, size_t len)
{
    return st_cuda_err(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream),
                       "cudaMemcpyAsync", err, len);
}

extern "C" const st_dev_ops st_dev_cuda = {
    "cuda",
    256u << 10,
    64,
    128, /* 128 blocks of 512 threads: a quarter of an H100/H200's 132 SMs x 4 slots, enough to saturate HBM */
    st_cuda_probe,
    st_cuda_bind,
    st_cuda_alloc,
    st_cuda_free,
    st_cuda_alloc_shared,
    st_cuda_free_shared,
    st_cuda_map_peer,
    st_cuda_stream_new,
    st_cuda_stream_free,
    st_cuda_check_ptr,
    st_cuda_alloc_async,
    st_cuda_free_async,
    st_cuda_upload,
    st_cuda_download,
    st_cuda_launch,
    st_cuda_query,
    st_cuda_sync,
    st_cuda_copy,
};
