/* st_piece.c - strided unit sets (see st_piece.h). */
#include "st_piece.h"

static int64_t floor_mod(int64_t a, int64_t m)
{
    int64_t v = a % m;
    return v < 0 ? v + m : v;
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* {u + s j : j < t} in ascending order. */
static st_piece ascending(int64_t u, int64_t s, int64_t t)
{
    if (s >= 0)
        return (st_piece){u, s, t};
    return (st_piece){u + s * (t - 1), -s, t};
}

int st_piece_cut(int64_t first, int64_t stride, int64_t count, int64_t m, int (*emit)(void *ctx, st_piece pc),
                 void *ctx)
{
    if (count <= 0)
        return 0;
    if (m == 0)
        return emit(ctx, ascending(first, stride, count));
    int64_t u = floor_mod(first, m), s = floor_mod(stride, m);
    if (s > m - s)
        s -= m; /* walk the shorter way round */
    if (s == 0)
        return emit(ctx, (st_piece){u, 0, 1}); /* the same unit count times */
    int64_t period = m / gcd(s < 0 ? -s : s, m);
    if (count > period)
        count = period; /* the units repeat from there on */
    for (int64_t k = 0; k < count;) {
        /* steps that stay inside 0 .. m - 1 from u, u included */
        int64_t t = s > 0 ? (m - 1 - u) / s + 1 : u / -s + 1;
        if (t > count - k)
            t = count - k;
        int rc = emit(ctx, ascending(u, s, t));
        if (rc)
            return rc;
        k += t;
        u = (int64_t)(((__int128)u + (__int128)s * t) % m);
        if (u < 0)
            u += m;
    }
    return 0;
}
