/* device.h - the device layer: accelerators behind a table, and the device engine's internal interfaces.
 *
 * A device communicator (stitch_comm_init_devices) is a thread-mode communicator group (threads.c makes the job,
 * the registry and the groups) whose backend is this engine: a collective takes device pointers, records the
 * rank's program from its plan (dev_prog.c, the call model of call.c walked as exec.c walks it), and launches it
 * on the rank's stream through the entry of the table below; the call returns at once. What the ranks share
 * (st_dslot per rank, the abort word st_dctl) lives in memory every rank's kernels reach.
 *
 * The table. Everything that differs between kinds of accelerator is one entry (st_dev_ops): CUDA
 * (dev_cuda.cu, the only file that calls the CUDA runtime), and "host", which runs the same interpreter
 * (dev_logic.h) on host threads with host memory and no real streams, so that CI tests the whole device path
 * (API, programs, flags, channels) without an accelerator. An NPU backend (Ascend ACL) is one more entry:
 * docs/devices.md maps each operation onto ACL's.
 *
 * Rules every entry keeps:
 * - alloc and alloc_shared return zeroed memory; alloc_shared's is reachable from the host without
 *   synchronising (the abort word: the host raises it, kernels spin on it);
 * - nothing in the enqueue path (alloc_async, free_async, upload, launch, query) waits for the device: a rank
 *   that blocked there could keep its peers' kernels, which wait for its flags, from finishing (deadlock);
 * - launch makes all the rank's blocks resident at once with its peers' on the same device (a rank's kernel
 *   spins on flags its peers' kernels set).
 */
#ifndef ST_DEVICE_H
#define ST_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "comm.h"
#include "dev_ops.h"


/* ---- programs (dev_prog.c) --------------------------------------------------------------------------------- */

typedef struct st_dprog {
    st_dop *ops;
    uint32_t nops, cap;
    uint32_t steps;           /* STEP ops: the counter's advance is steps + 1 */
    uint32_t syncs;           /* SYNC ops: barriers without a post (the rank's barriers are steps + 1 + syncs) */
    size_t need[ST_K_COUNT];  /* bytes of SCRATCH and UNITS the program reaches */
    uint8_t wk[4];            /* what I publish (ST_W_*): kinds and offsets */
    uint64_t woff[4];
    uintptr_t lo;             /* ST_K_USER's base: the lower of sendbuf and recvbuf */
    int nothing;              /* count 0: no launch */
} st_dprog;

/* Record rank comm's program for the call a (its buffers device pointers): STITCH_OK, or an error recorded on
 * comm. The call is counted (comm->seq) as the host engines count it. */
stitch_status_t st_dev_record(stitch_comm_t *comm, const st_args *a, st_dprog *out);
void st_dprog_free(st_dprog *p);

/* ---- the device communicator (dev_comm.c) ---------------------------------------------------------------- */

/* What the local ranks share: slots and the abort word (one allocation each, by rank 0's device). */
typedef struct st_djob {
    const st_dev_ops *ops;
    int p;
    st_dslot *slots;   /* device memory */
    st_dctl *ctl;      /* shared (host-visible) */
    int slots_device;
    _Atomic int refs;
} st_djob;

typedef struct st_dcomm {
    st_djob *job;
    int device;
    void *stream, *own_stream; /* the stream calls go on; the one made at init (freed at destroy) */
    void *scratch, *units;     /* device memory of the SCRATCH and UNITS kinds, grown stream-ordered */
    size_t scratch_size, units_size;
    uint32_t arrive;           /* my slot's arrive counter between calls */
    uint32_t max_blocks;       /* my channels at most: the entry's bound, and my share of my device's */
    void *prog;                /* the last program uploaded (device memory), reused while the call repeats */
    st_dop *last;              /* its host copy, to compare with */
    size_t last_bytes;
} st_dcomm;

#endif
