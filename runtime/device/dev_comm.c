/* dev_comm.c - device communicators: init over the layer's entry, the backend that enqueues a call, async errors.
 *
 * Init makes a thread-mode group (stitch_comm_init_threads: job, registry, groups, algorithm choice) and then
 * turns each handle into a device rank: its device and stream, and the backend below. What the local ranks share
 * (one st_dslot per rank, the abort word) is allocated once, on rank 0's device, and every other device is given
 * peer access to it and to each other. A call records the rank's program (dev_prog.c), makes sure its scratch
 * is large enough, uploads the program unless it is the last one again, and launches it on the stream: the host
 * never waits. An error the device finds later (a peer that never came: timeout; a fault) is kept in the abort
 * word and the stream, and reported by this rank's next call and by stitch_comm_get_async_error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "job.h"


/* ---- the table ------------------------------------------------------------------------------------------- */

const char *st_dev_cuda_build_note(void)
{
#ifdef STITCH_HAVE_CUDA
    return "built (nvcc, sm_90)";
#else
    return "not built: " STITCH_CUDA_WHY;
#endif
}

const st_dev_ops *st_dev_find(const char *name, char *why, size_t len)
{
    if (name && strcmp(name, "host") == 0)
        return &st_dev_host;
#ifdef STITCH_HAVE_CUDA
    if (!name || strcmp(name, "cuda") == 0)
        return &st_dev_cuda;
#endif
    if (!name || strcmp(name, "cuda") == 0)
        snprintf(why, len, "the CUDA backend is %s", st_dev_cuda_build_note());
    else
        snprintf(why, len, "unknown device backend '%s' (cuda or host)", name);
    return NULL;
}

int stitch_device_count(const char *backend, char *why, size_t len)
{
    char tmp[256];
    const st_dev_ops *ops = st_dev_find(backend, why ? why : tmp, why ? len : sizeof tmp);
    int n = 0;
    if (!ops || !ops->probe(&n, why ? why : tmp, why ? len : sizeof tmp))
        return -1;
    return n;
}

/* ---- the shared job ---------------------------------------------------------------------------------------- */

static void st_djob_unref(st_djob *j)
{
    if (!j || atomic_fetch_sub(&j->refs, 1) != 1)
        return;
    if (j->slots)
        j->ops->free(j->slots_device, j->slots);
    if (j->ctl)
        j->ops->free_shared(j->ctl);
    free(j);
}

/* ---- the backend ------------------------------------------------------------------------------------------- */

static void st_dev_abort(stitch_comm_t *comm, const char *reason)
{
    st_job_abort(comm->job, reason);
    if (comm->dev && comm->dev->job->ctl) /* kernels spinning on a flag stop */
        __atomic_store_n(&comm->dev->job->ctl->abort, 1, __ATOMIC_RELEASE);
}

static void st_dcomm_free(st_dcomm *d)
{
    const st_dev_ops *ops = d->job->ops;
    char err[256];
    if (d->stream) {
        ops->bind(d->device, err, sizeof err);
        ops->sync(d->stream, err, sizeof err); /* destroy waits for the calls enqueued, as ncclCommDestroy */
    }
    if (d->scratch)
        ops->free_async(d->device, d->scratch, d->stream);
    if (d->units)
        ops->free_async(d->device, d->units, d->stream);
    if (d->prog)
        ops->free_async(d->device, d->prog, d->stream);
    if (d->stream)
        ops->sync(d->stream, err, sizeof err);
    if (d->own_stream)
        ops->stream_free(d->device, d->own_stream);
    free(d->last);
    st_djob_unref(d->job);
    free(d);
}

static void st_dev_free(stitch_comm_t *comm)
{
    if (comm->dev)
        st_dcomm_free(comm->dev);
    comm->dev = NULL;
    st_job_unref(comm->job);
    comm->job = NULL;
}

/* What the device said about an earlier call, as this rank's error; STITCH_OK while nothing. */
static stitch_status_t st_dev_async(stitch_comm_t *comm, const char *fn)
{
    st_dcomm *d = comm->dev;
    st_dctl *ctl = d->job->ctl;
    char why[300];
    uint32_t code = __atomic_load_n(&ctl->code, __ATOMIC_ACQUIRE);
    stitch_status_t st = d->job->ops->query(d->stream, why, sizeof why);
    if (st != STITCH_OK)
        return st_comm_fail(comm, STITCH_ERR_DEVICE, "%s: rank %d (device %d): an earlier call failed on the "
                            "device: %s", fn, comm->rank, d->device, why);
    if (code == ST_DERR_TIMEOUT)
        return st_comm_fail(comm, STITCH_ERR_TIMEOUT, "%s: rank %d: an earlier call failed on the device: rank %d "
                            "timed out after %d ms waiting for rank %d at step %u", fn, comm->rank, ctl->rank,
                            comm->timeout_ms, ctl->peer, ctl->step);
    if (code != 0 || __atomic_load_n(&ctl->abort, __ATOMIC_ACQUIRE))
        return st_comm_fail(comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted while a call ran on the "
                            "device%s%s", fn, comm->rank, st_job_aborted(comm->job) ? ": " : "",
                            st_job_reason(comm->job));
    return STITCH_OK;
}

static stitch_status_t st_dev_check_ptr(stitch_comm_t *comm, const st_args *a, const char *name, const void *p)
{
    char why[200];
    if (!p || comm->dev->job->ops->check_ptr(p, comm->dev->device, why, sizeof why) == 0)
        return STITCH_OK;
    return st_comm_fail(comm, STITCH_ERR_INVALID_ARGUMENT, "%s: rank %d: %s %p %s; a device communicator takes "
                        "memory of its rank's device (%d)", a->fn, comm->rank, name, p, why, comm->dev->device);
}

/* Grow a stream-ordered buffer: the old one is freed after the calls before on this stream (the last reader of
 * my buffers is my own previous kernel, which waits for its readers before it ends). */
static stitch_status_t st_dev_grow(stitch_comm_t *comm, const char *fn, void **buf, size_t *have, size_t need)
{
    st_dcomm *d = comm->dev;
    char err[300];
    if (need <= *have)
        return STITCH_OK;
    size_t size = (need + 4095) & ~(size_t)4095;
    void *fresh = NULL;
    if (d->job->ops->alloc_async(d->device, size, d->stream, &fresh, err, sizeof err) != STITCH_OK)
        return st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: rank %d (device %d): cannot allocate %zu bytes of "
                            "scratch: %s", fn, comm->rank, d->device, size, err);
    if (*buf)
        d->job->ops->free_async(d->device, *buf, d->stream);
    *buf = fresh, *have = size;
    return STITCH_OK;
}

/* The program on the device: the last one again, or uploaded into a new stream-ordered buffer. */
static stitch_status_t st_dev_program(stitch_comm_t *comm, const char *fn, const st_dprog *p)
{
    st_dcomm *d = comm->dev;
    size_t bytes = sizeof *p->ops * p->nops;
    char err[300];
    if (d->prog && d->last_bytes == bytes && memcmp(d->last, p->ops, bytes) == 0)
        return STITCH_OK;
    if (d->prog)
        d->job->ops->free_async(d->device, d->prog, d->stream);
    d->prog = NULL;
    free(d->last);
    d->last = malloc(bytes);
    if (!d->last)
        return st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: rank %d: out of memory", fn, comm->rank);
    memcpy(d->last, p->ops, bytes);
    d->last_bytes = bytes;
    void *dp = NULL;
    if (d->job->ops->alloc_async(d->device, bytes, d->stream, &dp, err, sizeof err) != STITCH_OK ||
        d->job->ops->upload(dp, p->ops, bytes, d->stream, err, sizeof err) != STITCH_OK) {
        if (dp)
            d->job->ops->free_async(d->device, dp, d->stream);
        d->last_bytes = 0;
        return st_comm_fail(comm, STITCH_ERR_DEVICE, "%s: rank %d (device %d): cannot upload its program (%zu "
                            "bytes): %s", fn, comm->rank, d->device, bytes, err);
    }
    d->prog = dp;
    return STITCH_OK;
}

/* The call's channels: one per block_bytes of the vector a rank holds, at most the rank's max_blocks (the ranks
 * of one device are resident at once). */
static uint32_t st_dev_blocks(const st_dcomm *d, const st_args *a, int p)
{
    size_t bytes = a->count * stitch_dtype_size(a->dtype);
    if (a->coll != STITCH_ALL_REDUCE && a->coll != STITCH_BROADCAST && a->coll != STITCH_REDUCE)
        bytes *= (size_t)p;
    size_t n = bytes / d->job->ops->block_bytes + 1;
    return (uint32_t)(n < d->max_blocks ? n : d->max_blocks);
}

static stitch_status_t st_dev_launch(stitch_comm_t *comm, const st_args *a, const st_dprog *p)
{
    st_dcomm *d = comm->dev;
    st_drun r;
    char err[300];
    memset(&r, 0, sizeof r);
    r.ops = d->prog, r.nops = p->nops, r.me = comm->rank, r.p = comm->p;
    r.base = comm->base, r.arrive = d->arrive;
    r.dtype = (int32_t)a->dtype, r.op = (int32_t)a->op, r.esize = (uint32_t)stitch_dtype_size(a->dtype);
    r.slots = d->job->slots, r.ctl = d->job->ctl;
    r.bases[ST_K_USER] = p->lo;
    r.bases[ST_K_SCRATCH] = (uint64_t)(uintptr_t)d->scratch;
    r.bases[ST_K_UNITS] = (uint64_t)(uintptr_t)d->units;
    for (int k = 0; k < 4; k++)
        r.where[k] = p->wk[k] == ST_K_NONE ? 0 : r.bases[p->wk[k]] + p->woff[k];
    r.timeout_ns = comm->timeout_ms < 0 ? 0 : (uint64_t)comm->timeout_ms * 1000000u;
    uint32_t nblocks = st_dev_blocks(d, a, comm->p);
    if (d->job->ops->launch(&r, nblocks, d->stream, err, sizeof err) != STITCH_OK)
        return st_comm_fail(comm, STITCH_ERR_DEVICE, "%s: rank %d (device %d): launch failed: %s", a->fn, comm->rank,
                            d->device, err);
    comm->base += 1 + p->steps;
    d->arrive += (p->steps + 1 + p->syncs) * nblocks; /* every barrier: steps, publication, syncs */
    return STITCH_OK;
}

static stitch_status_t st_dev_run(stitch_comm_t *comm, const st_args *a)
{
    st_dcomm *d = comm->dev;
    st_dprog p;
    char err[300];
    stitch_status_t st;
    if ((st = st_dev_async(comm, a->fn)) != STITCH_OK)
        return st;
    if ((st = st_dev_check_ptr(comm, a, "sendbuf", a->send)) != STITCH_OK ||
        (st = st_dev_check_ptr(comm, a, "recvbuf", a->recv)) != STITCH_OK)
        return st;
    if (d->job->ops->bind(d->device, err, sizeof err) != STITCH_OK)
        return st_comm_fail(comm, STITCH_ERR_DEVICE, "%s: rank %d: %s", a->fn, comm->rank, err);
    if ((st = st_dev_record(comm, a, &p)) != STITCH_OK)
        return st_comm_tell(comm, st);
    if (!p.nothing && (st = st_dev_grow(comm, a->fn, &d->scratch, &d->scratch_size, p.need[ST_K_SCRATCH])) ==
                          STITCH_OK &&
        (st = st_dev_grow(comm, a->fn, &d->units, &d->units_size, p.need[ST_K_UNITS])) == STITCH_OK &&
        (st = st_dev_program(comm, a->fn, &p)) == STITCH_OK)
        st = st_dev_launch(comm, a, &p);
    st_dprog_free(&p);
    return st;
}

/* no split and no point-to-point on device communicators yet: split.c and p2p.c refuse them (NULL entries) */
static const st_backend st_dev_backend = {st_dev_run, st_dev_abort, st_dev_free, 1, NULL, NULL, NULL, NULL, NULL, NULL};

/* ---- init ---------------------------------------------------------------------------------------------------- */

static stitch_status_t st_dev_fail(char *err, size_t errlen, stitch_status_t st, const char *fmt, const char *a,
                                   const char *b)
{
    if (err && errlen) {
        char msg[600];
        snprintf(msg, sizeof msg, fmt, a, b);
        snprintf(err, errlen, "stitch_comm_init_devices: %s", msg);
    }
    return st;
}

/* Every device of the group reaches every other's memory (slots on rank 0's device, peers' buffers). */
static stitch_status_t st_dev_peers(const st_dev_ops *ops, int nranks, const int *dev, char *why, size_t len)
{
    for (int i = 0; i < nranks; i++)
        for (int j = 0; j < nranks; j++)
            if (dev[i] != dev[j] && ops->map_peer(dev[i], dev[j], why, len) != STITCH_OK)
                return STITCH_ERR_DEVICE;
    return STITCH_OK;
}

static st_djob *st_djob_new(const st_dev_ops *ops, int nranks, int device, char *why, size_t len)
{
    st_djob *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    j->ops = ops, j->p = nranks, j->slots_device = device;
    atomic_init(&j->refs, 1);
    void *slots = NULL, *ctl = NULL;
    if (ops->bind(device, why, len) != STITCH_OK ||
        ops->alloc(device, sizeof(st_dslot) * (size_t)nranks, &slots, why, len) != STITCH_OK ||
        ops->alloc_shared(sizeof(st_dctl), &ctl, why, len) != STITCH_OK) {
        j->slots = slots;
        j->ctl = ctl;
        st_djob_unref(j);
        return NULL;
    }
    j->slots = slots, j->ctl = ctl;
    return j;
}

static stitch_status_t st_dev_attach(stitch_comm_t *comm, st_djob *job, int device, int sharing, char *why,
                                     size_t len)
{
    st_dcomm *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(why, len, "out of memory");
        return STITCH_ERR_NO_MEMORY;
    }
    d->job = job, d->device = device;
    d->max_blocks = job->ops->max_blocks;
    if (job->ops->device_blocks && job->ops->device_blocks / (uint32_t)sharing < d->max_blocks)
        d->max_blocks = job->ops->device_blocks / (uint32_t)sharing;
    if (d->max_blocks == 0)
        d->max_blocks = 1;
    atomic_fetch_add(&job->refs, 1);
    comm->dev = d;
    comm->be = &st_dev_backend;
    comm->segment_bytes = (size_t)1 << 40; /* one segment: the program stays short; there is no cache to fit */
    if (job->ops->bind(device, why, len) != STITCH_OK ||
        job->ops->stream_new(device, &d->own_stream, why, len) != STITCH_OK)
        return STITCH_ERR_DEVICE;
    d->stream = d->own_stream;
    return STITCH_OK;
}

stitch_status_t stitch_comm_init_devices(int nranks, const char *backend, const int *devices,
                                         const stitch_config_t *config, stitch_comm_t **comms, char *err,
                                         size_t errlen)
{
    char why[400];
    int ndev = 0;
    const st_dev_ops *ops = st_dev_find(backend, why, sizeof why);
    if (!comms || nranks < 1 || nranks > ST_MAX_RANKS)
        return st_dev_fail(err, errlen, STITCH_ERR_INVALID_ARGUMENT, "%s%s", !comms ? "comms is NULL" :
                           "nranks must be between 1 and 65536", "");
    if (!ops)
        return st_dev_fail(err, errlen, STITCH_ERR_UNSUPPORTED, "%s%s", why, "");
    if (!ops->probe(&ndev, why, sizeof why))
        return st_dev_fail(err, errlen, STITCH_ERR_DEVICE, "%s: %s", ops->name, why);
    int *dev = malloc(sizeof *dev * (size_t)nranks);
    if (!dev)
        return st_dev_fail(err, errlen, STITCH_ERR_NO_MEMORY, "out of memory%s%s", "", "");
    for (int i = 0; i < nranks; i++) {
        dev[i] = devices ? devices[i] : i % ndev;
        if (dev[i] < 0 || dev[i] >= ndev) {
            snprintf(why, sizeof why, "devices[%d] is %d but %s has %d device%s (0..%d)", i, dev[i], ops->name, ndev,
                     ndev == 1 ? "" : "s", ndev - 1);
            free(dev);
            return st_dev_fail(err, errlen, STITCH_ERR_INVALID_ARGUMENT, "%s%s", why, "");
        }
    }
    stitch_comm_t **made = calloc((size_t)nranks, sizeof *made);
    stitch_status_t st = made ? stitch_comm_init_threads(nranks, config, made, err, errlen) : STITCH_ERR_NO_MEMORY;
    if (st != STITCH_OK) {
        free(dev), free(made);
        return st == STITCH_ERR_NO_MEMORY && !made ? st_dev_fail(err, errlen, st, "out of memory%s%s", "", "") : st;
    }
    st_djob *job = st_djob_new(ops, nranks, dev[0], why, sizeof why);
    st = job ? st_dev_peers(ops, nranks, dev, why, sizeof why) : STITCH_ERR_DEVICE;
    for (int i = 0; i < nranks && st == STITCH_OK; i++) {
        int sharing = 0;
        for (int j = 0; j < nranks; j++)
            sharing += dev[j] == dev[i];
        st = st_dev_attach(made[i], job, dev[i], sharing, why, sizeof why);
    }
    st_djob_unref(job); /* each rank holds its own reference */
    if (st != STITCH_OK) {
        for (int i = 0; i < nranks; i++)
            stitch_comm_destroy(made[i]);
        free(dev), free(made);
        return st_dev_fail(err, errlen, st, "%s: %s", ops->name, why);
    }
    memcpy(comms, made, sizeof *made * (size_t)nranks);
    free(dev), free(made);
    return STITCH_OK;
}

/* ---- the stream and the async error ------------------------------------------------------------------------ */

static stitch_status_t st_dev_enter(stitch_comm_t *comm, const char *fn)
{
    stitch_status_t st = st_comm_enter(comm, fn);
    if (st == STITCH_OK && !comm->dev) {
        st_comm_leave(comm);
        return st_comm_error(comm, STITCH_ERR_INVALID_USAGE, "%s: rank %d is not a device communicator "
                             "(stitch_comm_init_devices)", fn, comm->rank);
    }
    return st;
}

stitch_status_t stitch_comm_set_stream(stitch_comm_t *comm, void *stream)
{
    stitch_status_t st = st_dev_enter(comm, "stitch_comm_set_stream");
    if (st != STITCH_OK)
        return st;
    comm->dev->stream = stream ? stream : comm->dev->own_stream;
    st_comm_leave(comm);
    return STITCH_OK;
}

void *stitch_comm_stream(const stitch_comm_t *comm)
{
    return st_comm_live(comm) && comm->dev ? comm->dev->stream : NULL;
}

stitch_status_t stitch_comm_get_async_error(stitch_comm_t *comm, stitch_status_t *async_error)
{
    stitch_status_t st = st_dev_enter(comm, "stitch_comm_get_async_error");
    if (st != STITCH_OK)
        return st;
    *async_error = st_dev_async(comm, "stitch_comm_get_async_error");
    st_comm_leave(comm);
    return STITCH_OK;
}

stitch_status_t stitch_comm_synchronize(stitch_comm_t *comm)
{
    char why[300];
    stitch_status_t st = st_dev_enter(comm, "stitch_comm_synchronize");
    if (st != STITCH_OK)
        return st;
    st_dcomm *d = comm->dev;
    if (d->job->ops->bind(d->device, why, sizeof why) != STITCH_OK ||
        d->job->ops->sync(d->stream, why, sizeof why) != STITCH_OK)
        st = st_comm_fail(comm, STITCH_ERR_DEVICE, "stitch_comm_synchronize: rank %d (device %d): %s", comm->rank,
                          d->device, why);
    else
        st = st_dev_async(comm, "stitch_comm_synchronize");
    st_comm_leave(comm);
    return st;
}

int stitch_comm_device(const stitch_comm_t *comm)
{
    return st_comm_live(comm) && comm->dev ? comm->dev->device : -1;
}
