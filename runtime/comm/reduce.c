/* reduce.c - the reduction kernels declared in reduce.h.
 *
 * Each kernel is a simple counted loop over restrict-qualified pointers, written so that gcc -O3 vectorises it
 * (check with -fopt-info-vec): no early exits, selects instead of branches, and the operation for a type given
 * by a macro so all 72 kernels (two- and three-operand forms) share one shape. Integer sum and prod are computed
 * in an unsigned type at least as wide as int, so overflow wraps instead of being undefined (uint16 * uint16
 * would be promoted to int and overflow). The 16-bit float kernels go through fp32 with the conversions of
 * half.h. On baseline x86-64 (SSE2) everything vectorises except int64 prod/max/min, which lack vector
 * instructions there.
 *
 * On x86-64 with glibc every kernel is also built for AVX2 and picked at load time (gcc's target_clones, an ifunc):
 * the library stays baseline x86-64, and a CPU with AVX2 reduces twice as wide. Measured on the 2-core VM (AMD
 * EPYC), fp32 sum all_reduce of 16 MB at np 2 over shm, stitch-perf, 4 runs each: 1.61-1.73 ms with AVX2 kernels
 * against 1.67-1.79 ms with SSE2 ones, a gain of a few percent, within the runs' spread. Every element is one
 * operation rounded once, so both give the same bits (the AVX2 build is what the tests run here).
 */
#include <stdint.h>

#include "half.h"
#include "reduce.h"

/* Not under ThreadSanitizer: the ifunc resolvers run at load time, before TSan is set up, and crash. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__) && \
    !defined(__SANITIZE_THREAD__)
#define ST_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ST_CLONES
#endif

/* Binary operations on one element; U is the unsigned type the integer arithmetic is done in. */
#define ST_ISUM(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define ST_IPROD(T, U, a, b) ((T)((U)(a) * (U)(b)))
#define ST_MAX(T, U, a, b) ((a) > (b) ? (a) : (b))
#define ST_MIN(T, U, a, b) ((a) < (b) ? (a) : (b))
#define ST_FSUM(T, U, a, b) ((a) + (b))
#define ST_FPROD(T, U, a, b) ((a) * (b))
/* NaN-propagating: a NaN in a wins (a != a), else the comparison is false for a NaN in b, which then wins.
 * `|` rather than `||`: no short circuit, so no control flow to stop vectorisation. */
#define ST_FMAX(T, U, a, b) ((((a) > (b)) | ((a) != (a))) ? (a) : (b))
#define ST_FMIN(T, U, a, b) ((((a) < (b)) | ((a) != (a))) ? (a) : (b))

/* A kernel over a type whose elements are operated on directly: the two-operand form (dst op= src) and the
 * three-operand form (dst = a op b), from one body. */
#define ST_KERNEL(name, T, U, OP)                                                                              \
    ST_CLONES static void name(void *dstv, const void *srcv, size_t n)                                         \
    {                                                                                                          \
        T *restrict dst = dstv;                                                                                \
        const T *restrict src = srcv;                                                                          \
        for (size_t i = 0; i < n; i++)                                                                         \
            dst[i] = OP(T, U, dst[i], src[i]);                                                                 \
    }                                                                                                          \
    ST_CLONES static void name##3(void *dstv, const void *av, const void *bv, size_t n)                        \
    {                                                                                                          \
        T *restrict dst = dstv;                                                                                \
        const T *restrict a = av, *restrict b = bv;                                                            \
        for (size_t i = 0; i < n; i++)                                                                         \
            dst[i] = OP(T, U, a[i], b[i]);                                                                     \
    }

/* A kernel over a 16-bit float storage type: widen both, operate in fp32, round once. */
#define ST_KERNEL16(name, TO_F32, FROM_F32, OP)                                                                \
    ST_CLONES static void name(void *dstv, const void *srcv, size_t n)                                         \
    {                                                                                                          \
        uint16_t *restrict dst = dstv;                                                                         \
        const uint16_t *restrict src = srcv;                                                                   \
        for (size_t i = 0; i < n; i++) {                                                                       \
            float a = TO_F32(dst[i]), b = TO_F32(src[i]);                                                      \
            dst[i] = FROM_F32(OP(float, float, a, b));                                                         \
        }                                                                                                      \
    }                                                                                                          \
    ST_CLONES static void name##3(void *dstv, const void *av, const void *bv, size_t n)                        \
    {                                                                                                          \
        uint16_t *restrict dst = dstv;                                                                         \
        const uint16_t *restrict pa = av, *restrict pb = bv;                                                   \
        for (size_t i = 0; i < n; i++) {                                                                       \
            float a = TO_F32(pa[i]), b = TO_F32(pb[i]);                                                        \
            dst[i] = FROM_F32(OP(float, float, a, b));                                                         \
        }                                                                                                      \
    }

/* The four ops of an integer type. */
#define ST_INT_KERNELS(tag, T, U)                                                                              \
    ST_KERNEL(st_sum_##tag, T, U, ST_ISUM)                                                                     \
    ST_KERNEL(st_prod_##tag, T, U, ST_IPROD)                                                                   \
    ST_KERNEL(st_max_##tag, T, U, ST_MAX)                                                                      \
    ST_KERNEL(st_min_##tag, T, U, ST_MIN)
#define ST_FLOAT_KERNELS(tag, T)                                                                               \
    ST_KERNEL(st_sum_##tag, T, T, ST_FSUM)                                                                     \
    ST_KERNEL(st_prod_##tag, T, T, ST_FPROD)                                                                   \
    ST_KERNEL(st_max_##tag, T, T, ST_FMAX)                                                                     \
    ST_KERNEL(st_min_##tag, T, T, ST_FMIN)
#define ST_HALF_KERNELS(tag, TO, FROM)                                                                         \
    ST_KERNEL16(st_sum_##tag, TO, FROM, ST_FSUM)                                                               \
    ST_KERNEL16(st_prod_##tag, TO, FROM, ST_FPROD)                                                             \
    ST_KERNEL16(st_max_##tag, TO, FROM, ST_FMAX)                                                               \
    ST_KERNEL16(st_min_##tag, TO, FROM, ST_FMIN)

ST_INT_KERNELS(i8, int8_t, uint32_t)
ST_INT_KERNELS(u8, uint8_t, uint32_t)
ST_INT_KERNELS(i16, int16_t, uint32_t)
ST_INT_KERNELS(i32, int32_t, uint32_t)
ST_INT_KERNELS(i64, int64_t, uint64_t)
ST_HALF_KERNELS(f16, st_fp16_to_f32, st_f32_to_fp16)
ST_HALF_KERNELS(bf16, st_bf16_to_f32, st_f32_to_bf16)
ST_FLOAT_KERNELS(f32, float)
ST_FLOAT_KERNELS(f64, double)

#define ST_ROW(tag) {st_sum_##tag, st_prod_##tag, st_max_##tag, st_min_##tag}
#define ST_ROW3(tag) {st_sum_##tag##3, st_prod_##tag##3, st_max_##tag##3, st_min_##tag##3}

/* Rows in stitch_dtype_t order, columns in stitch_op_t order. */
static const st_reduce_fn st_kernels[STITCH_DTYPE_COUNT][STITCH_OP_COUNT] = {
    [STITCH_INT8] = ST_ROW(i8),   [STITCH_UINT8] = ST_ROW(u8), [STITCH_INT16] = ST_ROW(i16),
    [STITCH_INT32] = ST_ROW(i32), [STITCH_INT64] = ST_ROW(i64), [STITCH_FP16] = ST_ROW(f16),
    [STITCH_BF16] = ST_ROW(bf16), [STITCH_FP32] = ST_ROW(f32), [STITCH_FP64] = ST_ROW(f64),
};
static const st_reduce3_fn st_kernels3[STITCH_DTYPE_COUNT][STITCH_OP_COUNT] = {
    [STITCH_INT8] = ST_ROW3(i8),   [STITCH_UINT8] = ST_ROW3(u8), [STITCH_INT16] = ST_ROW3(i16),
    [STITCH_INT32] = ST_ROW3(i32), [STITCH_INT64] = ST_ROW3(i64), [STITCH_FP16] = ST_ROW3(f16),
    [STITCH_BF16] = ST_ROW3(bf16), [STITCH_FP32] = ST_ROW3(f32), [STITCH_FP64] = ST_ROW3(f64),
};

st_reduce_fn st_reduce_kernel(stitch_dtype_t dtype, stitch_op_t op)
{
    if ((unsigned)dtype >= STITCH_DTYPE_COUNT || (unsigned)op >= STITCH_OP_COUNT)
        return NULL;
    return st_kernels[dtype][op];
}

st_reduce3_fn st_reduce3_kernel(stitch_dtype_t dtype, stitch_op_t op)
{
    if ((unsigned)dtype >= STITCH_DTYPE_COUNT || (unsigned)op >= STITCH_OP_COUNT)
        return NULL;
    return st_kernels3[dtype][op];
}
