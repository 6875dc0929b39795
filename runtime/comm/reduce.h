/* reduce.h - element-wise reduction kernels: dst[i] = dst[i] op src[i] for every (dtype, op) of stitch.h.
 *
 * One function per (dtype, op), chosen once per collective call with st_reduce_kernel, so the executor's inner
 * loop is a plain call with no switch. The semantics every rank relies on for bit-identical results:
 * - integers: sum and prod wrap modulo 2^bits (computed in unsigned arithmetic), max/min as usual;
 * - fp16/bf16: both operands widened to fp32, the op applied, the result rounded once to nearest even;
 * - floats max/min propagate NaN: if dst[i] is NaN the result is dst[i], else if src[i] is NaN it is src[i];
 *   between +0 and -0 (equal) the result is src[i]. The result depends on operand order, which the schedule
 *   fixes, so it is still the same on every rank.
 */
#ifndef ST_REDUCE_H
#define ST_REDUCE_H

#include <stddef.h>

#include "stitch.h"

typedef void (*st_reduce_fn)(void *dst, const void *src, size_t n);
/* dst[i] = a[i] op b[i], the three buffers distinct: lets the executor fuse "copy my input in" with the first
 * reduction into a unit, saving a pass over memory. Same results as copying a to dst then st_reduce_fn. */
typedef void (*st_reduce3_fn)(void *dst, const void *a, const void *b, size_t n);

/* NULL when dtype or op is out of range. */
st_reduce_fn st_reduce_kernel(stitch_dtype_t dtype, stitch_op_t op);
st_reduce3_fn st_reduce3_kernel(stitch_dtype_t dtype, stitch_op_t op);

#endif
