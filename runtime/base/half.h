/* half.h - IEEE binary16 (fp16) and bfloat16 (bf16) to and from fp32, rounding to nearest, ties to even.
 *
 * Reductions of 16-bit floats convert both operands to fp32, apply the op and round once (see reduce.c). These
 * helpers are pure integer and float arithmetic with no table and few branches, so that gcc can if-convert and
 * vectorise the reduction loops that inline them, and so that results do not depend on F16C or AVX512-FP16
 * being present. Widening is exact. Narrowing: overflow gives infinity, NaN stays NaN (made quiet, sign kept),
 * subnormals are produced and rounded correctly. The fp16 routines follow Fabian Giesen's well-known
 * branch-light conversions ("half_to_float", "float_to_half_fast3_rtne").
 */
#ifndef ST_HALF_H
#define ST_HALF_H

#include <stdint.h>
#include <string.h>

/* The device engine's step logic (device/dev_logic.h) reduces with these same conversions on the GPU. */
#ifdef __CUDACC__
#define ST_HALF_FN static __host__ __device__ inline
#else
#define ST_HALF_FN static inline
#endif

ST_HALF_FN uint32_t st_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

ST_HALF_FN float st_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

ST_HALF_FN float st_bf16_to_f32(uint16_t h)
{
    return st_bits_f32((uint32_t)h << 16);
}

/* Round the low 16 bits away, to nearest even; a NaN keeps its sign and top payload bits and is made quiet so
 * that truncation cannot turn it into an infinity. */
ST_HALF_FN uint16_t st_f32_to_bf16(float f)
{
    uint32_t u = st_f32_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x40u;
    uint32_t is_nan = -(uint32_t)((u & 0x7fffffffu) > 0x7f800000u); /* all ones for NaN: a select, no branch */
    return (uint16_t)((nan & is_nan) | (rounded & ~is_nan));
}

/* Every path is computed and the right one picked with masks (st_pick), so the reduction loops have no
 * control flow and vectorise; the discarded float operations cannot trap under the default environment. */
ST_HALF_FN uint32_t st_pick(uint32_t mask, uint32_t yes, uint32_t no)
{
    return (yes & mask) | (no & ~mask);
}

ST_HALF_FN float st_fp16_to_f32(uint16_t h)
{
    const uint32_t shifted_exp = 0x7c00u << 13;
    uint32_t o = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t exp = shifted_exp & o;
    o += (uint32_t)(127 - 15) << 23;
    /* infinity or NaN: exponent all ones, payload kept */
    uint32_t special = o + ((uint32_t)(128 - 16) << 23);
    /* zero or subnormal: renormalise with one exact float subtraction */
    uint32_t sub = st_f32_bits(st_bits_f32(o + (1u << 23)) - st_bits_f32(113u << 23));
    o = st_pick(-(uint32_t)(exp == shifted_exp), special, o);
    o = st_pick(-(uint32_t)(exp == 0), sub, o);
    return st_bits_f32(o | (uint32_t)(h & 0x8000u) << 16);
}

ST_HALF_FN uint16_t st_f32_to_fp16(float in)
{
    const uint32_t f32_inf = 255u << 23, f16_max = (127u + 16u) << 23;
    const uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t f = st_f32_bits(in);
    uint32_t sign = f & 0x80000000u;
    f ^= sign;
    /* too large becomes infinity; NaN stays NaN, made quiet */
    uint32_t special = 0x7c00u | (0x200u & -(uint32_t)(f > f32_inf));
    /* subnormal result: adding the magic number lets the FPU round at the right bit (to nearest even) */
    uint32_t sub = st_f32_bits(st_bits_f32(f) + st_bits_f32(denorm_magic)) - denorm_magic;
    /* normal result: rebias the exponent and round the 13 dropped bits to nearest even */
    uint32_t norm = (f + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((f >> 13) & 1u)) >> 13;
    uint32_t o = st_pick(-(uint32_t)(f < (113u << 23)), sub, norm);
    o = st_pick(-(uint32_t)(f >= f16_max), special, o);
    return (uint16_t)(o | sign >> 16);
}

#endif
