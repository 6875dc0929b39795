/* dev_logic.h - the step logic of the device engine, written once: the interpreter of one rank's program for one
 * collective call. It compiles as plain C for the host (dev_host.c: ranks and channels as host threads, flags as
 * host atomics; that is how CI tests it) and with nvcc for the device (dev_cuda.cu: one kernel per rank, channels
 * as thread blocks, flags in device memory).
 *
 * The program (st_dop[]) is recorded on the host by dev_prog.c from the same per-rank plan and the same call model
 * (call.c) the threads engine runs (exec.c), in exec.c's order: publish where my blocks are and post base + 1; per
 * step wait for the ranks that read me at the step before, then per transfer into me wait for its source and copy
 * or reduce its units (read in place from the source's buffers), then post base + 2 + g; at the end wait for the
 * last readers. Transfers into a rank are applied in schedule order and each element is reduced with reduce.c's
 * semantics (16-bit floats through fp32, rounded once), so the result bits are the host path's.
 *
 * Addresses. A program holds no address: a reference is a kind and a byte offset. My own kinds resolve against
 * the buffers of the call (st_drun.bases); a peer's against the where it publishes at the start of the call
 * (its work, input, alt and units, as in exec.c's slot). A peer's unit still fresh (its input, lazy) is read from
 * its input when it has one, else from its work: that depends on the peer's call (in place or not), so a move
 * carries both references and picks at run time, as st_unit_in does.
 *
 * Channels. Every worker (a device thread; a host thread in the host build) of the rank runs the whole program;
 * a move's elements are dealt out by their absolute index in the destination buffer, in chunks of 16 bytes, so
 * every write to one element within a step is made by the same worker in program order (reduction order kept,
 * no race between transfers into one unit). A step ends with a barrier of all the rank's blocks (the next step may read what another block
 * wrote), then block 0 posts; so does the publication at the start (after the copy-in).
 */
#ifndef ST_DEV_LOGIC_H
#define ST_DEV_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "half.h"
#include "stitch.h"

/* ---- the program and what ranks share ------------------------------------------------------------------ */

enum { ST_DOP_PUBLISH, ST_DOP_WAIT, ST_DOP_MOVE, ST_DOP_STEP, ST_DOP_SYNC }; /* SYNC: a barrier, no post */
enum { ST_DX_COPY, ST_DX_REDUCE, ST_DX_REDUCE3 }; /* dst = src; dst = dst op src; dst = in op src */

/* Kinds of a reference: my call's buffers (USER: sendbuf and recvbuf, as offsets from the lower of the two, so
 * that in-place forms keep their relation), then the fields of a peer's published where. */
enum { ST_K_NONE, ST_K_USER, ST_K_SCRATCH, ST_K_UNITS, ST_K_PWORK, ST_K_PINPUT, ST_K_PALT, ST_K_PUNITS, ST_K_COUNT };
enum { ST_W_WORK, ST_W_INPUT, ST_W_ALT, ST_W_UNITS }; /* st_dslot.where */

typedef struct st_dop {
    uint8_t code, xop;  /* ST_DOP_*, ST_DX_* */
    uint8_t dk, sk;     /* kinds of the destination and of the source */
    uint8_t ik, fk;     /* kind of `in` (REDUCE3), of the fresh source (a peer's input, when it has one) */
    uint8_t fresh, pad;
    int32_t rank;       /* WAIT: the peer waited for; MOVE: the source rank */
    uint32_t target;    /* PUBLISH, WAIT, STEP: the counter's value, relative to the call's base */
    uint32_t step;      /* for messages: the global step */
    uint64_t doff, soff, ioff, foff; /* bytes from the kind's base */
    uint64_t n;         /* MOVE: elements */
} st_dop;

/* One rank's shared state, in memory every rank of the job reaches (device memory on CUDA). */
typedef struct st_dslot {
    uint32_t posted;    /* the step counter: only the owner stores it (release), peers load it (acquire) */
    uint32_t pad0[31];
    uint32_t arrive;    /* the owner's blocks arriving at a step's barrier; grows by nblocks per step */
    uint32_t pad1[31];
    uint64_t where[4];  /* ST_W_*: valid once posted reaches the call's base + 1 */
    uint64_t pad2[12];
} st_dslot;

/* The job's abort word and its first failure, in memory the host reads without synchronising (pinned on CUDA). */
enum { ST_DERR_NONE, ST_DERR_TIMEOUT, ST_DERR_ABORTED };
typedef struct st_dctl {
    uint32_t abort;     /* nonzero: every spin of every rank stops */
    uint32_t code;      /* ST_DERR_*: the first failure (0 until one) */
    int32_t rank, peer; /* who waited, for whom */
    uint32_t step;      /* at which global step (the program's) */
    uint32_t claimed;   /* set by the first failing rank, which then writes the fields above */
} st_dctl;

/* One launch: a rank's program and the call's buffers. */
typedef struct st_drun {
    const st_dop *ops;
    uint32_t nops;
    int32_t me, p;
    uint32_t base;          /* my posted value when the call starts (equal on every rank) */
    uint32_t arrive;        /* my slot's arrive counter when the call starts */
    int32_t dtype, op;
    uint32_t esize;
    st_dslot *slots;        /* p slots */
    st_dctl *ctl;
    uint64_t bases[ST_K_COUNT]; /* my kinds' real addresses (0 for the peer kinds) */
    uint64_t where[4];      /* what I publish */
    uint64_t timeout_ns;    /* 0: wait for ever */
} st_drun;

/* ---- what differs between the two builds: qualifiers, atomics, time, barriers ---------------------------- */

#ifdef __CUDACC__
#define ST_DL static __device__ __forceinline__
ST_DL uint32_t st_dl_load(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
ST_DL void st_dl_store(uint32_t *p, uint32_t v)
{
    __threadfence_system();
    asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
ST_DL uint32_t st_dl_add(uint32_t *p, uint32_t v)
{
    __threadfence();
    return atomicAdd(p, v);
}
ST_DL uint32_t st_dl_cas(uint32_t *p, uint32_t old, uint32_t v)
{
    return atomicCAS(p, old, v);
}
ST_DL uint64_t st_dl_now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
ST_DL void st_dl_relax(void)
{
}
ST_DL uint64_t st_dl_ld64(const uint64_t *p)
{
    return __ldcg((const unsigned long long *)p);
}
#define ST_DL_SYNC() __syncthreads()
#define ST_DL_ALL(x) __syncthreads_and(x)
#else
#include <sched.h>
#include <time.h>
#define ST_DL static inline
ST_DL uint32_t st_dl_load(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
ST_DL void st_dl_store(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
ST_DL uint32_t st_dl_add(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
ST_DL uint32_t st_dl_cas(uint32_t *p, uint32_t old, uint32_t v)
{
    __atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return old;
}
ST_DL uint64_t st_dl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
ST_DL void st_dl_relax(void)
{
    sched_yield(); /* host ranks may outnumber the cores many times over */
}
ST_DL uint64_t st_dl_ld64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
#define ST_DL_SYNC() ((void)0) /* a host "block" is one thread */
#define ST_DL_ALL(x) (x)
#endif

/* ---- one element, with reduce.c's semantics --------------------------------------------------------------- */

#define ST_DL_ARITH(a, b, op, isf)                                                                             \
    ((op) == STITCH_SUM    ? (a) + (b)                                                                         \
     : (op) == STITCH_PROD ? (a) * (b)                                                                         \
     : (op) == STITCH_MAX  ? ((((a) > (b)) | ((isf) && (a) != (a))) ? (a) : (b))                               \
                           : ((((a) < (b)) | ((isf) && (a) != (a))) ? (a) : (b)))

/* d = a op b for one element of dtype dt (integers wrap: computed unsigned). */
ST_DL void st_dl_elem(int dt, int op, unsigned char *d, const unsigned char *a, const unsigned char *b)
{
    switch (dt) {
#define ST_DL_INT(T, U)                                                                                        \
    {                                                                                                          \
        T x, y, r;                                                                                             \
        memcpy(&x, a, sizeof x), memcpy(&y, b, sizeof y);                                                      \
        if (op == STITCH_SUM)                                                                                  \
            r = (T)((U)x + (U)y);                                                                              \
        else if (op == STITCH_PROD)                                                                            \
            r = (T)((U)x * (U)y);                                                                              \
        else                                                                                                   \
            r = op == STITCH_MAX ? (x > y ? x : y) : (x < y ? x : y);                                          \
        memcpy(d, &r, sizeof r);                                                                               \
        return;                                                                                                \
    }
    case STITCH_INT8: ST_DL_INT(int8_t, uint32_t)
    case STITCH_UINT8: ST_DL_INT(uint8_t, uint32_t)
    case STITCH_INT16: ST_DL_INT(int16_t, uint32_t)
    case STITCH_INT32: ST_DL_INT(int32_t, uint32_t)
    case STITCH_INT64: ST_DL_INT(int64_t, uint64_t)
#undef ST_DL_INT
    case STITCH_FP16:
    case STITCH_BF16: {
        uint16_t x, y, r;
        memcpy(&x, a, 2), memcpy(&y, b, 2);
        float fx = dt == STITCH_FP16 ? st_fp16_to_f32(x) : st_bf16_to_f32(x);
        float fy = dt == STITCH_FP16 ? st_fp16_to_f32(y) : st_bf16_to_f32(y);
        float fr = ST_DL_ARITH(fx, fy, op, 1);
        r = dt == STITCH_FP16 ? st_f32_to_fp16(fr) : st_f32_to_bf16(fr);
        memcpy(d, &r, 2);
        return;
    }
    case STITCH_FP32: {
        float x, y, r;
        memcpy(&x, a, 4), memcpy(&y, b, 4);
        r = ST_DL_ARITH(x, y, op, 1);
        memcpy(d, &r, 4);
        return;
    }
    default: {
        double x, y, r;
        memcpy(&x, a, 8), memcpy(&y, b, 8);
        r = ST_DL_ARITH(x, y, op, 1);
        memcpy(d, &r, 8);
        return;
    }
    }
}

/* ---- a move: elements dealt out to workers by their index in the destination ------------------------------ */

#define ST_DL_CHUNK 16 /* bytes: the unit a worker owns; a multiple of every element size */

typedef struct st_dl_chunk {
    uint64_t w[2];
} st_dl_chunk;

#ifdef __CUDACC__
ST_DL void st_dl_get(st_dl_chunk *c, const unsigned char *p, size_t bytes)
{
    if (bytes == ST_DL_CHUNK && ((uintptr_t)p & 15) == 0) {
        uint4 v = __ldcg((const uint4 *)p);
        memcpy(c, &v, 16);
    } else
        for (size_t i = 0; i < bytes; i++)
            ((unsigned char *)c)[i] = __ldcg((const unsigned char *)p + i);
}
ST_DL void st_dl_put(unsigned char *p, const st_dl_chunk *c, size_t bytes)
{
    if (bytes == ST_DL_CHUNK && ((uintptr_t)p & 15) == 0) {
        uint4 v;
        memcpy(&v, c, 16);
        __stcg((uint4 *)p, v);
    } else
        for (size_t i = 0; i < bytes; i++)
            p[i] = ((const unsigned char *)c)[i];
}
#else
ST_DL void st_dl_get(st_dl_chunk *c, const unsigned char *p, size_t bytes)
{
    memcpy(c, p, bytes);
}
ST_DL void st_dl_put(unsigned char *p, const st_dl_chunk *c, size_t bytes)
{
    memcpy(p, c, bytes);
}
#endif

/* A whole aligned chunk in registers: a op s, lane by lane at offsets known at compile time. */
#ifdef __CUDACC__
typedef uint4 st_dl_vec;
ST_DL st_dl_vec st_dl_ld16(const unsigned char *p)
{
    return __ldcg((const uint4 *)p);
}
ST_DL void st_dl_st16(unsigned char *p, st_dl_vec v)
{
    __stcg((uint4 *)p, v);
}
#else
typedef struct st_dl_vec {
    uint64_t w[2];
} st_dl_vec;
ST_DL st_dl_vec st_dl_ld16(const unsigned char *p)
{
    st_dl_vec v;
    memcpy(&v, p, 16);
    return v;
}
ST_DL void st_dl_st16(unsigned char *p, st_dl_vec v)
{
    memcpy(p, &v, 16);
}
#endif

ST_DL void st_dl_chunk_op(const st_drun *r, st_dl_chunk *d, const st_dl_chunk *a, const st_dl_chunk *s,
                          uint64_t len);

ST_DL st_dl_vec st_dl_op16(const st_drun *r, st_dl_vec a, st_dl_vec s)
{
    st_dl_chunk ca, cs, cd;
    st_dl_vec d;
    memcpy(&ca, &a, 16), memcpy(&cs, &s, 16);
    st_dl_chunk_op(r, &cd, &ca, &cs, ST_DL_CHUNK);
    memcpy(&d, &cd, 16);
    return d;
}

/* d = a op s over the len bytes of a chunk. A whole chunk has a trip count known at compile time per element size,
 * so the device keeps the chunk in registers instead of indexing it in local memory. */
#define ST_DL_LANES(ES)                                                                                        \
    for (int i = 0; i < ST_DL_CHUNK / (ES); i++)                                                               \
        st_dl_elem(r->dtype, r->op, (unsigned char *)d + i * (ES), (const unsigned char *)a + i * (ES),       \
                   (const unsigned char *)s + i * (ES));
ST_DL void st_dl_chunk_op(const st_drun *r, st_dl_chunk *d, const st_dl_chunk *a, const st_dl_chunk *s, uint64_t len)
{
    uint64_t es = r->esize;
    if (len == ST_DL_CHUNK && es == 4) {
        ST_DL_LANES(4)
    } else if (len == ST_DL_CHUNK && es == 2) {
        ST_DL_LANES(2)
    } else if (len == ST_DL_CHUNK && es == 8) {
        ST_DL_LANES(8)
    } else {
        for (uint64_t i = 0; i < len; i += es)
            st_dl_elem(r->dtype, r->op, (unsigned char *)d + i, (const unsigned char *)a + i,
                       (const unsigned char *)s + i);
    }
}

/* One chunk at a time, any length and alignment: the ends of a move and misaligned pieces. */
ST_DL void st_dl_move_chunk(const st_drun *r, int xop, unsigned char *dst, const unsigned char *src,
                            const unsigned char *in, uint64_t at, uint64_t len)
{
    st_dl_chunk s, a, d;
    st_dl_get(&s, src + at, len);
    if (xop == ST_DX_COPY) {
        st_dl_put(dst + at, &s, len);
        return;
    }
    st_dl_get(&a, xop == ST_DX_REDUCE3 ? in + at : dst + at, len);
    st_dl_chunk_op(r, &d, &a, &s, len);
    st_dl_put(dst + at, &d, len);
}

/* Apply n elements: dst = src, dst = dst op src, or dst = in op src. Worker `w` of `nw` takes the 16-byte
 * chunks of the destination buffer (by offset from its base: `dabs` is the byte offset of dst there) whose index
 * is w modulo nw. Whole chunks whose three addresses are 16-byte aligned go ST_DL_BATCH at a time, all their
 * loads issued before any store, so a thread keeps several reads in flight (what saturates HBM); safe because a
 * move's destination never overlaps its sources other than itself (a reduce reads the destination chunk it then
 * writes, in the same thread). */
#define ST_DL_BATCH 4
ST_DL void st_dl_move(const st_drun *r, int xop, unsigned char *dst, uint64_t dabs, const unsigned char *src,
                      const unsigned char *in, uint64_t n, uint32_t w, uint32_t nw)
{
    uint64_t es = r->esize, bytes = n * es;
    uint64_t first = dabs / ST_DL_CHUNK, last = (dabs + bytes + ST_DL_CHUNK - 1) / ST_DL_CHUNK;
    uint64_t c = first + ((w + nw - first % nw) % nw);
    const unsigned char *a = xop == ST_DX_REDUCE3 ? in : dst;
    /* the whole chunks: from the first chunk boundary at or after dst, to the last before its end */
    uint64_t full_lo = (dabs + ST_DL_CHUNK - 1) / ST_DL_CHUNK, full_hi = (dabs + bytes) / ST_DL_CHUNK;
    uint64_t skew = ST_DL_CHUNK - dabs % ST_DL_CHUNK;
    int aligned = ((uintptr_t)(dst + (dabs % ST_DL_CHUNK ? skew : 0)) % ST_DL_CHUNK) == 0 &&
                  ((uintptr_t)(src + (dabs % ST_DL_CHUNK ? skew : 0)) % ST_DL_CHUNK) == 0 &&
                  (xop == ST_DX_COPY || ((uintptr_t)(a + (dabs % ST_DL_CHUNK ? skew : 0)) % ST_DL_CHUNK) == 0);
    for (; c < last; c += nw) {
        if (aligned && c >= full_lo && c + (uint64_t)(ST_DL_BATCH - 1) * nw < full_hi)
            break; /* a batch of whole aligned chunks from here on */
        uint64_t lo = c * ST_DL_CHUNK, hi = lo + ST_DL_CHUNK;
        lo = lo < dabs ? dabs : lo;
        hi = hi > dabs + bytes ? dabs + bytes : hi;
        st_dl_move_chunk(r, xop, dst, src, in, lo - dabs, hi - lo);
    }
    for (; aligned && c + (uint64_t)(ST_DL_BATCH - 1) * nw < full_hi; c += (uint64_t)nw * ST_DL_BATCH) {
        st_dl_vec sv[ST_DL_BATCH], av[ST_DL_BATCH];
        uint64_t at = c * ST_DL_CHUNK - dabs, step = (uint64_t)nw * ST_DL_CHUNK;
#ifdef __CUDACC__
#pragma unroll
#endif
        for (int k = 0; k < ST_DL_BATCH; k++) {
            sv[k] = st_dl_ld16(src + at + k * step);
            if (xop != ST_DX_COPY)
                av[k] = st_dl_ld16(a + at + k * step);
        }
#ifdef __CUDACC__
#pragma unroll
#endif
        for (int k = 0; k < ST_DL_BATCH; k++)
            st_dl_st16(dst + at + k * step, xop == ST_DX_COPY ? sv[k] : st_dl_op16(r, av[k], sv[k]));
    }
    for (; c < last; c += nw) { /* what is left after the batches */
        uint64_t lo = c * ST_DL_CHUNK, hi = lo + ST_DL_CHUNK;
        lo = lo < dabs ? dabs : lo;
        hi = hi > dabs + bytes ? dabs + bytes : hi;
        st_dl_move_chunk(r, xop, dst, src, in, lo - dabs, hi - lo);
    }
}

/* ---- the interpreter ------------------------------------------------------------------------------------ */

ST_DL int st_dl_reached(uint32_t posted, uint32_t target)
{
    return (int32_t)(posted - target) >= 0;
}

/* Record the first failure and raise the abort word. */
ST_DL void st_dl_fail(const st_drun *r, uint32_t code, int peer, uint32_t step)
{
    if (st_dl_cas(&r->ctl->claimed, 0, 1) == 0) {
        r->ctl->rank = r->me, r->ctl->peer = peer, r->ctl->step = step;
        st_dl_store(&r->ctl->code, code);
    }
    st_dl_store(&r->ctl->abort, 1);
}

/* Spin until *word reaches target: 1, or 0 after a failure (recorded). */
ST_DL int st_dl_spin(const st_drun *r, const uint32_t *word, uint32_t target, int peer, uint32_t step)
{
    uint64_t t0 = 0;
    for (uint32_t i = 0;; i++) {
        if (st_dl_reached(st_dl_load(word), target))
            return 1;
        st_dl_relax();
        if ((i & 255) != 255)
            continue;
        if (st_dl_load(&r->ctl->abort)) {
            st_dl_fail(r, ST_DERR_ABORTED, peer, step);
            return 0;
        }
        uint64_t now = st_dl_now();
        if (t0 == 0)
            t0 = now;
        else if (r->timeout_ns && now - t0 > r->timeout_ns) {
            st_dl_fail(r, ST_DERR_TIMEOUT, peer, step);
            return 0;
        }
    }
}

/* A reference's address: my kinds from the call's bases, a peer's from its published where. */
ST_DL unsigned char *st_dl_addr(const st_drun *r, int kind, uint64_t off, int rank)
{
    if (kind == ST_K_NONE)
        return NULL;
    if (kind < ST_K_PWORK)
        return (unsigned char *)(uintptr_t)(r->bases[kind] + off);
    return (unsigned char *)(uintptr_t)(st_dl_ld64(&r->slots[rank].where[kind - ST_K_PWORK]) + off);
}

ST_DL void st_dl_do_move(const st_drun *r, const st_dop *o, uint32_t w, uint32_t nw)
{
    int sk = o->sk;
    uint64_t soff = o->soff;
    if (o->fresh && st_dl_ld64(&r->slots[o->rank].where[ST_W_INPUT])) /* the peer's unit is still its input */
        sk = o->fk, soff = o->foff;
    st_dl_move(r, o->xop, st_dl_addr(r, o->dk, o->doff, r->me), o->doff, st_dl_addr(r, sk, soff, o->rank),
               st_dl_addr(r, o->ik, o->ioff, r->me), o->n, w, nw);
}

/* Run the program as block `blk` of `nblk`, thread `tid` of `nthr`: 1 when done, 0 after a failure. */
ST_DL int st_dl_run(const st_drun *r, uint32_t blk, uint32_t nblk, uint32_t tid, uint32_t nthr)
{
    st_dslot *mine = &r->slots[r->me];
    uint32_t epoch = 0, w = blk * nthr + tid, nw = nblk * nthr;
    for (uint32_t i = 0; i < r->nops; i++) {
        const st_dop *o = &r->ops[i];
        int ok = 1;
        switch (o->code) {
        case ST_DOP_WAIT:
            if (tid == 0)
                ok = st_dl_spin(r, &r->slots[o->rank].posted, r->base + o->target, o->rank, o->step);
            if (!ST_DL_ALL(ok))
                return 0;
            break;
        case ST_DOP_MOVE:
            st_dl_do_move(r, o, w, nw);
            break;
        default: /* PUBLISH, STEP, SYNC: every block of mine is done with what came before (the copy-in, the step,
                  * the last segment's copies), then block 0 publishes where my blocks are (PUBLISH) and posts */
            epoch++;
            ST_DL_SYNC();
            if (tid == 0) {
                st_dl_add(&mine->arrive, 1); /* all wait: the next step may read what another block wrote */
                ok = st_dl_spin(r, &mine->arrive, r->arrive + epoch * nblk, r->me, o->step);
                if (ok && blk == 0 && o->code == ST_DOP_PUBLISH)
                    for (int k = 0; k < 4; k++)
                        mine->where[k] = r->where[k];
                if (ok && blk == 0 && o->code != ST_DOP_SYNC)
                    st_dl_store(&mine->posted, r->base + o->target);
            }
            if (!ST_DL_ALL(ok))
                return 0;
            break;
        }
    }
    return 1;
}

#endif
