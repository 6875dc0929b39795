/* coll_data.h - the data of a collective test case, shared by the thread-mode (test_collectives.c) and the
 * process-mode (tests/proc/test_proc_colls.c) tests: inputs that encode (rank, index) with values whose reduction
 * is exact in any order (nccl-tests' trick), the expected output of every rank, the buffers of each in-place form
 * and the call itself. Small integers for sum, +-1 and 2 for prod, any small integers for max/min, so the expected
 * result is known exactly for every dtype; data that only moves (broadcast, scatter, gather, all_to_all(_v),
 * all_gather) uses the max/min values of a code naming its source (rank, or (from, to) pair) and index. A gap of
 * all_to_all_v's receive buffer must stay untouched (0xab bytes).
 */
#ifndef ST_TEST_COLL_DATA_H
#define ST_TEST_COLL_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "stitch.h"

typedef struct coll_case {
    int coll, dtype, op;
    size_t count;
    int inplace; /* 0 out of place; 1 the first in-place form; 2 reduce_scatter's recv = send + rank * count;
                  * 3 odd ranks in place (form 1), even ranks out of place */
    int shift;   /* buffers start this many elements after a 64-byte boundary */
    int root;    /* rooted collectives */
} coll_case;

/* ---- values ---------------------------------------------------------------------------------------------- */

static int is_signed(int dt)
{
    return dt != STITCH_UINT8;
}

/* Input element i of rank r for a case with reduction op (all_gather uses the max/min values). */
static int64_t value(int dt, int op, int r, size_t i)
{
    uint64_t h = (uint64_t)r * 131u + (uint64_t)i * 71u + (uint64_t)(i >> 7) * 13u;
    switch (op) {
    case STITCH_SUM: return is_signed(dt) ? (int64_t)(h % 9) - 4 : (int64_t)(h % 9);
    case STITCH_PROD:
        if (h % 11 == 0)
            return 2;
        return is_signed(dt) && (h / 11) % 3 == 0 ? -1 : 1;
    default: return is_signed(dt) ? (int64_t)(h % 201) - 100 : (int64_t)(h % 201);
    }
}

static void store(int dt, void *buf, size_t i, int64_t v)
{
    switch (dt) {
    case STITCH_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case STITCH_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case STITCH_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case STITCH_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case STITCH_INT64: ((int64_t *)buf)[i] = v; break;
    case STITCH_FP16: ((uint16_t *)buf)[i] = st_f32_to_fp16((float)v); break;
    case STITCH_BF16: ((uint16_t *)buf)[i] = st_f32_to_bf16((float)v); break;
    case STITCH_FP32: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = (double)v; break;
    }
}

static double load(int dt, const void *buf, size_t i)
{
    switch (dt) {
    case STITCH_INT8: return ((const int8_t *)buf)[i];
    case STITCH_UINT8: return ((const uint8_t *)buf)[i];
    case STITCH_INT16: return ((const int16_t *)buf)[i];
    case STITCH_INT32: return ((const int32_t *)buf)[i];
    case STITCH_INT64: return (double)((const int64_t *)buf)[i];
    case STITCH_FP16: return st_fp16_to_f32(((const uint16_t *)buf)[i]);
    case STITCH_BF16: return st_bf16_to_f32(((const uint16_t *)buf)[i]);
    case STITCH_FP32: return ((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

/* The reduction over ranks of element i, wrapped to the type as the kernels wrap. */
static double expected(int dt, int op, int p, size_t i)
{
    int64_t acc = value(dt, op, 0, i);
    for (int q = 1; q < p; q++) {
        int64_t v = value(dt, op, q, i);
        acc = op == STITCH_SUM ? acc + v : op == STITCH_PROD ? acc * v : op == STITCH_MAX ? (v > acc ? v : acc)
                                                                                         : (v < acc ? v : acc);
    }
    unsigned char tmp[8];
    store(dt, tmp, 0, acc);
    return load(dt, tmp, 0);
}

typedef struct bufs {
    unsigned char *a, *b; /* 64-byte aligned, big enough for every case of the team */
} bufs;

static int moves_only(int coll)
{
    return coll != STITCH_ALL_REDUCE && coll != STITCH_REDUCE_SCATTER && coll != STITCH_REDUCE;
}

/* The code of data moving from rank `from` to rank `to` (all_to_all), or from rank `from` (the others). */
static int src_code(int coll, int from, int to)
{
    return coll == STITCH_ALL_TO_ALL || coll == STITCH_ALL_TO_ALL_V ? 1000 + from * 64 + to : from;
}

/* all_to_all_v: elements from i to j, and where block j sits in a buffer of p blocks of up to count + 2 elements
 * (reverse order, one element of gap after each). */
static size_t v_count(const coll_case *c, int i, int j)
{
    return (size_t)((i + 2 * j) % 3) + c->count;
}

static size_t v_displ(const coll_case *c, int p, int j)
{
    return (size_t)(p - 1 - j) * (c->count + 3);
}

/* The elements of the input and of the output buffer of rank r. */
static void extents(const coll_case *c, int p, int r, size_t *nin, size_t *nout)
{
    size_t n = c->count, pn = (size_t)p * n;
    int root = r == c->root;
    switch (c->coll) {
    case STITCH_REDUCE_SCATTER: *nin = pn, *nout = n; return;
    case STITCH_ALL_GATHER: *nin = n, *nout = pn; return;
    case STITCH_BROADCAST: *nin = root ? n : 0, *nout = n; return;
    case STITCH_REDUCE: *nin = n, *nout = root ? n : 0; return;
    case STITCH_SCATTER: *nin = root ? pn : 0, *nout = n; return;
    case STITCH_GATHER: *nin = n, *nout = root ? pn : 0; return;
    case STITCH_ALL_TO_ALL: *nin = *nout = pn; return;
    case STITCH_ALL_TO_ALL_V: *nin = *nout = (size_t)p * (n + 3); return;
    default: *nin = *nout = n; return;
    }
}

/* The input value at input index i of rank r. */
static int64_t in_value(const coll_case *c, int p, int r, size_t i)
{
    size_t n = c->count;
    if (!moves_only(c->coll))
        return value(c->dtype, c->op, r, i);
    if (c->coll == STITCH_SCATTER) /* block b goes to rank b */
        return value(c->dtype, STITCH_MAX, src_code(c->coll, (int)(i / n), 0), i % n);
    if (c->coll == STITCH_ALL_TO_ALL)
        return value(c->dtype, STITCH_MAX, src_code(c->coll, r, (int)(i / n)), i % n);
    if (c->coll == STITCH_ALL_TO_ALL_V)
        for (int j = 0; j < p; j++)
            if (i >= v_displ(c, p, j) && i < v_displ(c, p, j) + v_count(c, r, j))
                return value(c->dtype, STITCH_MAX, src_code(c->coll, r, j), i - v_displ(c, p, j));
    return value(c->dtype, STITCH_MAX, r, i);
}

/* Fill the input and choose the buffers as the case says. Buffers a rank does not use are NULL out of place. */
static void setup(const coll_case *c, int p, int r, bufs *m, void **send, void **recv)
{
    size_t es = stitch_dtype_size(c->dtype), n = c->count, sh = (size_t)c->shift * es, nin, nout;
    int inplace = c->inplace == 3 ? r % 2 : c->inplace, root = r == c->root;
    unsigned char *in = m->a + sh, *out = m->b + sh;
    extents(c, p, r, &nin, &nout);
    memset(m->b, 0xab, (size_t)p * (n + 3) * es + sh);
    if (inplace && (c->coll == STITCH_ALL_GATHER || (c->coll == STITCH_GATHER && root)))
        in = out + (size_t)r * n * es;
    if (inplace && (c->coll == STITCH_BROADCAST || c->coll == STITCH_REDUCE) && root)
        in = out;
    if (inplace && c->coll == STITCH_SCATTER && root)
        in = out, out = in + (size_t)r * n * es;
    for (size_t i = 0; i < nin; i++)
        store(c->dtype, in, i, in_value(c, p, r, i));
    *send = nin || inplace ? in : NULL;
    *recv = nout || inplace ? out : NULL;
    if (inplace && c->coll == STITCH_ALL_REDUCE)
        *recv = in;
    if (inplace && c->coll == STITCH_REDUCE_SCATTER)
        *recv = inplace == 1 ? in : in + (size_t)r * n * es;
}

/* The expected value at output index i of rank r; *skip for gaps that must stay untouched (0xab bytes). */
static double out_value(const coll_case *c, int p, int r, size_t i, int *skip)
{
    size_t n = c->count;
    *skip = 0;
    switch (c->coll) {
    case STITCH_ALL_REDUCE:
    case STITCH_REDUCE: return expected(c->dtype, c->op, p, i);
    case STITCH_REDUCE_SCATTER: return expected(c->dtype, c->op, p, (size_t)r * n + i);
    case STITCH_BROADCAST: return (double)value(c->dtype, STITCH_MAX, c->root, i);
    case STITCH_SCATTER: return (double)value(c->dtype, STITCH_MAX, r, i);
    case STITCH_ALL_TO_ALL: return (double)value(c->dtype, STITCH_MAX, src_code(c->coll, (int)(i / n), r), i % n);
    case STITCH_ALL_TO_ALL_V: /* from rank q at rdispls[q] = q * (n + 3) */
        if (i % (n + 3) >= v_count(c, (int)(i / (n + 3)), r))
            return *skip = 1, 0;
        return (double)value(c->dtype, STITCH_MAX, src_code(c->coll, (int)(i / (n + 3)), r), i % (n + 3));
    default: return (double)value(c->dtype, STITCH_MAX, (int)(i / n), i % n); /* all_gather, gather */
    }
}

/* out, which setup leaves NULL only for a buffer without elements: a NULL receive buffer of nout > 0 elements is
 * this test's own bug, and ends it (a function of its own: verify stays small enough for the analyzer to follow). */
static const void *require_out(const coll_case *c, int r, const void *out, size_t nout)
{
    if (nout && !out) {
        fprintf(stderr, "coll_data.h: verify: %s rank %d: a NULL receive buffer of %zu elements\n",
                stitch_coll_name(c->coll), r, nout);
        abort();
    }
    return out;
}

static int verify(const coll_case *c, int p, int r, const void *out, size_t *bad)
{
    size_t nin, nout, es = stitch_dtype_size(c->dtype);
    extents(c, p, r, &nin, &nout);
    out = require_out(c, r, out, nout);
    for (size_t i = 0; i < nout; i++) {
        int skip;
        double want = out_value(c, p, r, i, &skip);
        unsigned char untouched[8];
        memset(untouched, 0xab, sizeof untouched);
        if (skip ? memcmp((const char *)out + i * es, untouched, es) != 0 : load(c->dtype, out, i) != want)
            return *bad = i, 0;
    }
    return 1;
}

static stitch_status_t call(const coll_case *c, int p, const void *send, void *recv, stitch_comm_t *comm)
{
    size_t sc[64], sd[64], rc[64], rd[64];
    int me = stitch_comm_rank(comm);
    switch (c->coll) {
    case STITCH_ALL_REDUCE: return stitch_all_reduce(send, recv, c->count, c->dtype, c->op, comm);
    case STITCH_REDUCE_SCATTER: return stitch_reduce_scatter(send, recv, c->count, c->dtype, c->op, comm);
    case STITCH_ALL_GATHER: return stitch_all_gather(send, recv, c->count, c->dtype, comm);
    case STITCH_BROADCAST: return stitch_broadcast(send, recv, c->count, c->dtype, c->root, comm);
    case STITCH_REDUCE: return stitch_reduce(send, recv, c->count, c->dtype, c->op, c->root, comm);
    case STITCH_SCATTER: return stitch_scatter(send, recv, c->count, c->dtype, c->root, comm);
    case STITCH_GATHER: return stitch_gather(send, recv, c->count, c->dtype, c->root, comm);
    case STITCH_ALL_TO_ALL: return stitch_all_to_all(send, recv, c->count, c->dtype, comm);
    default:
        for (int q = 0; q < p; q++)
            sc[q] = v_count(c, me, q), sd[q] = v_displ(c, p, q), rc[q] = v_count(c, q, me), rd[q] = (size_t)q * (c->count + 3);
        return stitch_all_to_all_v(send, sc, sd, recv, rc, rd, c->dtype, comm);
    }
}

/* ---- order-dependent data --------------------------------------------------------------------------------- */

/* Rank r's input for the bit-identity tests (thread mode: test_collectives.c det, process mode against it:
 * test_proc_colls.c det): n fp32 values in [-500, 500) whose sum depends on the order of the additions. */
static void det_input(int r, size_t n, float *in)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 1000.0 - 500.0);
    }
}

#endif
