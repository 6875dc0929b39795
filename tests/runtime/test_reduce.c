/* test_reduce.c - the reduction kernels (runtime/reduce.c) and 16-bit float conversions (runtime/half.h).
 *
 * Every (dtype, op) is checked against a scalar reference written independently of the kernels: integer ops
 * computed in 64 bits and wrapped, fp16/bf16 results computed in double and rounded by a slow but obvious
 * frexp/nearbyint rounding, NaN handling spelt out with isnan. Lengths 0..67 at every alignment offset cover the
 * vectorised body and the scalar tails. Inputs are random bit patterns, so NaNs, infinities and subnormals occur.
 */
#include <math.h>
#include <stdint.h>

#include "half.h"
#include "reduce.h"
#include "runner.h"

/* ---- reference arithmetic -------------------------------------------------------------------------------- */

static double ref_half_to_double(uint16_t h, int mb, int eb)
{
    int bias = (1 << (eb - 1)) - 1, e = (h >> mb) & ((1 << eb) - 1), m = h & ((1 << mb) - 1);
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == (1 << eb) - 1)
        return m ? NAN : s * INFINITY;
    if (e == 0)
        return s * ldexp(m, 1 - bias - mb);
    return s * ldexp(m + (1 << mb), e - bias - mb);
}

/* Round to nearest even into a format with mb mantissa bits and eb exponent bits. */
static uint16_t ref_round(double x, int mb, int eb)
{
    int bias = (1 << (eb - 1)) - 1;
    uint16_t sign = signbit(x) ? 0x8000 : 0, inf = (uint16_t)(((1 << eb) - 1) << mb);
    if (isnan(x))
        return sign | inf | (uint16_t)(1 << (mb - 1));
    double a = fabs(x);
    if (a >= ldexp(2.0 - ldexp(1, -mb), bias) + ldexp(1, bias - mb - 1))
        return sign | inf;
    if (a < ldexp(1, 1 - bias))
        return sign | (uint16_t)nearbyint(ldexp(a, mb - (1 - bias)));
    int E;
    frexp(a, &E);
    E -= 1;
    double q = nearbyint(ldexp(a, mb - E));
    if (q == ldexp(1, mb + 1))
        q /= 2, E++;
    if (E > bias)
        return sign | inf;
    return sign | (uint16_t)((E + bias) << mb) | (uint16_t)((uint32_t)q - (1u << mb));
}

static double ref_fop(int op, double a, double b)
{
    switch (op) {
    case STITCH_SUM: return a + b;
    case STITCH_PROD: return a * b;
    case STITCH_MAX: return isnan(a) ? a : isnan(b) ? b : a > b ? a : b;
    default: return isnan(a) ? a : isnan(b) ? b : a < b ? a : b;
    }
}

static int64_t ref_iop(int op, int64_t a, int64_t b)
{
    switch (op) {
    case STITCH_SUM: return (int64_t)((uint64_t)a + (uint64_t)b);
    case STITCH_PROD: return (int64_t)((uint64_t)a * (uint64_t)b);
    case STITCH_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

/* ---- element access by dtype ----------------------------------------------------------------------------- */

static int64_t get_int(int dt, const void *p, size_t i)
{
    switch (dt) {
    case STITCH_INT8: return ((const int8_t *)p)[i];
    case STITCH_UINT8: return ((const uint8_t *)p)[i];
    case STITCH_INT16: return ((const int16_t *)p)[i];
    case STITCH_INT32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

/* Expected bits of element i after dst op= src, given the original dst. */
static uint64_t expect_bits(int dt, int op, const void *d0, const void *s, size_t i)
{
    int64_t r;
    switch (dt) {
    case STITCH_FP16:
    case STITCH_BF16: {
        int mb = dt == STITCH_FP16 ? 10 : 7, eb = dt == STITCH_FP16 ? 5 : 8;
        uint16_t a = ((const uint16_t *)d0)[i], b = ((const uint16_t *)s)[i];
        double x = ref_half_to_double(a, mb, eb), y = ref_half_to_double(b, mb, eb);
        double z = ref_fop(op, x, y);
        if ((op == STITCH_MAX || op == STITCH_MIN) && !isnan(z))
            return z == x && !(x == y) ? a : b; /* the chosen operand's bits (src when equal: +0/-0) */
        return ref_round(z, mb, eb);
    }
    case STITCH_FP32: {
        float a = ((const float *)d0)[i], b = ((const float *)s)[i];
        float z = op == STITCH_SUM ? a + b : op == STITCH_PROD ? a * b : (float)ref_fop(op, a, b);
        return st_f32_bits(z);
    }
    case STITCH_FP64: {
        double z = ref_fop(op, ((const double *)d0)[i], ((const double *)s)[i]);
        uint64_t u;
        memcpy(&u, &z, 8);
        return u;
    }
    default:
        r = ref_iop(op, get_int(dt, d0, i), get_int(dt, s, i));
        return (uint64_t)r & (stitch_dtype_size(dt) == 8 ? ~0ull : (1ull << (8 * stitch_dtype_size(dt))) - 1);
    }
}

static uint64_t got_bits(int dt, const void *p, size_t i)
{
    uint64_t u = 0;
    size_t es = stitch_dtype_size(dt);
    memcpy(&u, (const char *)p + i * es, es);
    return u;
}

static int is_nan_bits(int dt, uint64_t u)
{
    switch (dt) {
    case STITCH_FP16: return (u & 0x7fff) > 0x7c00;
    case STITCH_BF16: return (u & 0x7fff) > 0x7f80;
    case STITCH_FP32: return (u & 0x7fffffff) > 0x7f800000;
    case STITCH_FP64: return (u & ~(1ull << 63)) > 0x7ff0000000000000ull;
    default: return 0;
    }
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- tests ----------------------------------------------------------------------------------------------- */

static void check_one(int dt, int op, size_t n, size_t shift)
{
    size_t es = stitch_dtype_size(dt);
    _Alignas(64) unsigned char d[80 * 8 + 64], s[80 * 8 + 64], d0[80 * 8 + 64];
    for (size_t i = 0; i < sizeof d; i++)
        d[i] = (unsigned char)rnd(), s[i] = (unsigned char)rnd();
    unsigned char *dp = d + shift * es, *sp = s + ((shift * 3) % 8) * es;
    memcpy(d0, dp, n * es);
    st_reduce_kernel(dt, op)(dp, sp, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t want = expect_bits(dt, op, d0, sp, i), got = got_bits(dt, dp, i);
        if (is_nan_bits(dt, want) && is_nan_bits(dt, got))
            continue;
        CHECK(want == got, "%s %s n=%zu shift=%zu i=%zu: want %#llx got %#llx", stitch_dtype_name(dt),
              stitch_op_name(op), n, shift, i, (unsigned long long)want, (unsigned long long)got);
    }
}

static void test_kernels_vs_reference(void)
{
    for (int dt = 0; dt < STITCH_DTYPE_COUNT; dt++)
        for (int op = 0; op < STITCH_OP_COUNT; op++)
            for (size_t n = 0; n <= 67; n++)
                for (size_t shift = 0; shift < 8; shift++)
                    check_one(dt, op, n, shift);
}

/* Elements past n are never written. */
static void test_kernels_stay_in_bounds(void)
{
    for (int dt = 0; dt < STITCH_DTYPE_COUNT; dt++)
        for (int op = 0; op < STITCH_OP_COUNT; op++)
            for (size_t n = 0; n <= 67; n++) {
                size_t es = stitch_dtype_size(dt);
                unsigned char d[70 * 8], s[70 * 8], before[70 * 8];
                for (size_t i = 0; i < sizeof d; i++)
                    d[i] = (unsigned char)rnd(), s[i] = (unsigned char)rnd();
                memcpy(before, d, sizeof d);
                st_reduce_kernel(dt, op)(d, s, n);
                CHECK(memcmp(d + n * es, before + n * es, sizeof d - n * es) == 0, "%s %s n=%zu wrote past n",
                      stitch_dtype_name(dt), stitch_op_name(op), n);
            }
}

typedef struct half_case {
    int dtype, op;
    uint16_t a, b, want; /* want 0xffff: any NaN */
    const char *what;
} half_case;

static const half_case half_cases[] = {
    {STITCH_FP16, STITCH_SUM, 0x3c00, 0x1000, 0x3c00, "1 + 2^-11: tie rounds to even (down)"},
    {STITCH_FP16, STITCH_SUM, 0x3c01, 0x1000, 0x3c02, "1+2^-10 + 2^-11: tie rounds to even (up)"},
    {STITCH_FP16, STITCH_SUM, 0x3c00, 0x1001, 0x3c01, "just above the tie rounds up"},
    {STITCH_FP16, STITCH_SUM, 0x7bff, 0x4800, 0x7bff, "65504 + 8 stays finite"},
    {STITCH_FP16, STITCH_SUM, 0x7bff, 0x4c00, 0x7c00, "65504 + 16: tie at the top rounds to infinity"},
    {STITCH_FP16, STITCH_PROD, 0x7bff, 0x4000, 0x7c00, "65504 * 2 overflows to infinity"},
    {STITCH_FP16, STITCH_PROD, 0xfbff, 0x4000, 0xfc00, "-65504 * 2 overflows to -infinity"},
    {STITCH_FP16, STITCH_SUM, 0x0001, 0x0001, 0x0002, "subnormal + subnormal"},
    {STITCH_FP16, STITCH_PROD, 0x0001, 0x3800, 0x0000, "2^-24 * 0.5: tie rounds to even zero"},
    {STITCH_FP16, STITCH_PROD, 0x0003, 0x3800, 0x0002, "3*2^-24 * 0.5: tie rounds to even 2"},
    {STITCH_FP16, STITCH_SUM, 0x7e00, 0x3c00, 0xffff, "NaN + 1 is NaN"},
    {STITCH_FP16, STITCH_SUM, 0x7c01, 0x3c00, 0xffff, "signalling NaN + 1 is NaN"},
    {STITCH_FP16, STITCH_SUM, 0x7c00, 0xfc00, 0xffff, "inf + -inf is NaN"},
    {STITCH_FP16, STITCH_MAX, 0x7e00, 0x3c00, 0xffff, "max(NaN, 1) is NaN"},
    {STITCH_FP16, STITCH_MAX, 0x3c00, 0x7e00, 0xffff, "max(1, NaN) is NaN"},
    {STITCH_FP16, STITCH_MIN, 0x3c00, 0xfe00, 0xffff, "min(1, NaN) is NaN"},
    {STITCH_BF16, STITCH_SUM, 0x3f80, 0x3b80, 0x3f80, "1 + 2^-8: tie rounds to even (down)"},
    {STITCH_BF16, STITCH_SUM, 0x3f81, 0x3b80, 0x3f82, "1+2^-7 + 2^-8: tie rounds to even (up)"},
    {STITCH_BF16, STITCH_SUM, 0x7f7f, 0x7f7f, 0x7f80, "max + max overflows to infinity"},
    {STITCH_BF16, STITCH_SUM, 0x7fc1, 0x3f80, 0xffff, "NaN + 1 is NaN"},
    {STITCH_BF16, STITCH_SUM, 0x7f81, 0x3f80, 0xffff, "NaN with a low payload + 1 stays NaN"},
    {STITCH_BF16, STITCH_MAX, 0x3f80, 0xffc0, 0xffff, "max(1, NaN) is NaN"},
};

static void test_half_rounding_cases(void)
{
    for (size_t i = 0; i < sizeof half_cases / sizeof half_cases[0]; i++) {
        const half_case *c = &half_cases[i];
        uint16_t d = c->a, s = c->b;
        st_reduce_kernel(c->dtype, c->op)(&d, &s, 1);
        if (c->want == 0xffff)
            CHECK(is_nan_bits(c->dtype, d), "%s: got %#x, want NaN", c->what, d);
        else
            CHECK(d == c->want, "%s: got %#x, want %#x", c->what, d, c->want);
    }
}

/* Every fp16 and bf16 value survives the round trip through fp32 (NaN stays NaN), and conversion from fp32
 * matches the reference rounding for random floats. */
static void test_half_conversions(void)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t f16 = st_f32_to_fp16(st_fp16_to_f32((uint16_t)h)), b16 = st_f32_to_bf16(st_bf16_to_f32((uint16_t)h));
        if (is_nan_bits(STITCH_FP16, h))
            CHECK(is_nan_bits(STITCH_FP16, f16), "fp16 %#x: NaN lost", h);
        else
            CHECK(f16 == h, "fp16 %#x round-trips to %#x", h, f16);
        if (is_nan_bits(STITCH_BF16, h))
            CHECK(is_nan_bits(STITCH_BF16, b16), "bf16 %#x: NaN lost", h);
        else
            CHECK(b16 == h, "bf16 %#x round-trips to %#x", h, b16);
        CHECK(st_fp16_to_f32((uint16_t)h) == (float)ref_half_to_double((uint16_t)h, 10, 5) ||
                  is_nan_bits(STITCH_FP16, h), "fp16 %#x widens wrongly", h);
    }
    for (int i = 0; i < 2000000; i++) {
        float f = st_bits_f32((uint32_t)rnd());
        if (isnan(f))
            continue;
        CHECK(st_f32_to_fp16(f) == ref_round(f, 10, 5), "fp16 of %a: got %#x want %#x", f, st_f32_to_fp16(f),
              ref_round(f, 10, 5));
        CHECK(st_f32_to_bf16(f) == ref_round(f, 7, 8), "bf16 of %a: got %#x want %#x", f, st_f32_to_bf16(f),
              ref_round(f, 7, 8));
    }
}

/* The same inputs give the same bits, whatever the alignment the kernel runs at. */
static void test_kernels_deterministic(void)
{
    enum { N = 1000 };
    static _Alignas(64) float d1[N + 16], d2[N + 16], s1[N + 16], s2[N + 16];
    for (int i = 0; i < N; i++)
        d1[i] = d2[i + 1] = (float)(rnd() % 1000) / 7.0f, s1[i] = s2[i + 3] = (float)(rnd() % 1000) / 3.0f;
    for (int op = 0; op < STITCH_OP_COUNT; op++) {
        st_reduce_kernel(STITCH_FP32, op)(d1, s1, N);
        st_reduce_kernel(STITCH_FP32, op)(d2 + 1, s2 + 3, N);
        CHECK(memcmp(d1, d2 + 1, sizeof(float) * N) == 0, "op %s differs with alignment", stitch_op_name(op));
    }
}

static void test_kernel_lookup(void)
{
    CHECK(st_reduce_kernel(STITCH_DTYPE_COUNT, STITCH_SUM) == NULL, "bad dtype gives a kernel");
    CHECK(st_reduce_kernel(STITCH_FP32, STITCH_OP_COUNT) == NULL, "bad op gives a kernel");
    CHECK(st_reduce_kernel((stitch_dtype_t)-1, STITCH_SUM) == NULL, "negative dtype gives a kernel");
}

static const st_test tests[] = {
    {"kernels_vs_reference", test_kernels_vs_reference, 60},
    {"kernels_stay_in_bounds", test_kernels_stay_in_bounds, 30},
    {"half_rounding_cases", test_half_rounding_cases, 10},
    {"half_conversions", test_half_conversions, 60},
    {"kernels_deterministic", test_kernels_deterministic, 10},
    {"kernel_lookup", test_kernel_lookup, 10},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
