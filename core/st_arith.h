/* st_arith.h - the step-table machine's integer arithmetic, defined once for the two that compute it: the VM
 * (core/st_vm.c), which says why an operation failed, and the native functions `stitchc emit` writes for rank-free
 * functions (codegen/emit_native.c), which only say that it failed and leave the telling to the VM.
 *
 * Values are int64. DIV floors toward -inf, MOD is in [0, |b|); division and modulo by zero, overflow, shift counts
 * outside 0..62 (0..63 right), floor_log2 of a non-positive value and pow2 outside 0..62 fail (st_steptab.h).
 * Installed beside st_steptab.h: the C that `stitchc emit` writes includes it.
 */
#ifndef ST_ARITH_H
#define ST_ARITH_H

#include <stdint.h>

#include "st_steptab.h"

static inline int64_t st_ar_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static inline int64_t st_ar_gcd(int64_t a, int64_t b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* *v = a op b for a binary opcode; 0, or -1 when the operation fails (or op is not binary). */
static inline int st_ar_binary(int op, int64_t a, int64_t b, int64_t *v)
{
    switch (op) {
    case ST_OP_ADD: return __builtin_add_overflow(a, b, v) ? -1 : 0;
    case ST_OP_SUB: return __builtin_sub_overflow(a, b, v) ? -1 : 0;
    case ST_OP_MUL: return __builtin_mul_overflow(a, b, v) ? -1 : 0;
    case ST_OP_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return -1;
        *v = st_ar_floor_div(a, b);
        return 0;
    case ST_OP_MOD: /* non-negative: in [0, |b|) */
        if (b == 0)
            return -1;
        *v = b == -1 ? 0 : a % b;
        if (*v < 0)
            *v = (int64_t)((uint64_t)*v + (b < 0 ? -(uint64_t)b : (uint64_t)b));
        return 0;
    case ST_OP_SHL:
        if (b < 0 || b > 62 || a > (INT64_MAX >> b) || a < (INT64_MIN >> b))
            return -1;
        *v = (int64_t)((uint64_t)a << b);
        return 0;
    case ST_OP_SHR:
        if (b < 0 || b > 63)
            return -1;
        *v = a >> b;
        return 0;
    case ST_OP_BAND: *v = a & b; return 0;
    case ST_OP_BOR: *v = a | b; return 0;
    case ST_OP_BXOR: *v = a ^ b; return 0;
    case ST_OP_LT: *v = a < b; return 0;
    case ST_OP_LE: *v = a <= b; return 0;
    case ST_OP_GT: *v = a > b; return 0;
    case ST_OP_GE: *v = a >= b; return 0;
    case ST_OP_EQ: *v = a == b; return 0;
    case ST_OP_NE: *v = a != b; return 0;
    case ST_OP_MIN: *v = a < b ? a : b; return 0;
    case ST_OP_MAX: *v = a > b ? a : b; return 0;
    case ST_OP_GCD: *v = st_ar_gcd(a, b); return 0;
    case ST_OP_LCM: {
        int64_t g = st_ar_gcd(a, b);
        if (g == 0) {
            *v = 0;
            return 0;
        }
        if (__builtin_mul_overflow(a / g, b, v))
            return -1;
        if (*v < 0)
            *v = -*v;
        return 0;
    }
    default: return -1;
    }
}

/* *v = op a for a unary opcode; 0, or -1 when the operation fails (or op is not unary). */
static inline int st_ar_unary(int op, int64_t a, int64_t *v)
{
    switch (op) {
    case ST_OP_NEG:
        if (a == INT64_MIN)
            return -1;
        *v = -a;
        return 0;
    case ST_OP_BNOT: *v = ~a; return 0;
    case ST_OP_NOT: *v = !a; return 0;
    case ST_OP_FLOOR_LOG2:
        if (a <= 0)
            return -1;
        *v = 63 - __builtin_clzll((unsigned long long)a);
        return 0;
    case ST_OP_CEIL_LOG2: /* HCCL's CalcCeilLog2: right shifts of a-1 until zero, i.e. the bit length of a-1 */
        *v = a > 1 ? 64 - __builtin_clzll((unsigned long long)(a - 1)) : 0;
        return 0;
    case ST_OP_POW2:
        if (a < 0 || a > 62)
            return -1;
        *v = (int64_t)1 << a;
        return 0;
    default: return -1;
    }
}

/* What a native function's calls share: the context's p and the calls left (a runaway recursion fails, and the VM
 * then evaluates the function and reports its fuel). */
typedef struct st_native_ctx {
    int64_t p;
    long calls;
} st_native_ctx;

#define ST_NATIVE_CALLS (1L << 20) /* calls per evaluation */

#endif
