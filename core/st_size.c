/* st_size.c - byte sizes (st_size.h). Exact integer arithmetic throughout: no value wraps, none is rounded. */
#include "st_size.h"

/* The decimal digits at *s into *v, 0 when there are none or they pass max; *ndigits counts them. */
static int st_size_digits(const char **s, unsigned long long max, unsigned long long *v, int *ndigits)
{
    const char *p = *s;
    int ok = 1;
    *v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (*v > (max - d) / 10)
            ok = 0;
        else
            *v = *v * 10 + d;
    }
    *ndigits = (int)(p - *s);
    *s = p;
    return ok && *ndigits > 0;
}

/* The multiple at *s (K, M, G, T, then optional "i" and "B"; or a bare "B"): its power of two. */
static int st_size_shift(const char **s)
{
    static const char up[] = "KMGT", low[] = "kmgt";
    int shift = 0;
    for (int i = 0; i < 4; i++)
        if (**s == up[i] || **s == low[i])
            shift = 10 * (i + 1);
    if (shift) {
        (*s)++;
        if (**s == 'i')
            (*s)++;
    }
    if (**s == 'B')
        (*s)++;
    return shift;
}

int st_parse_size(const char *text, unsigned long long max, unsigned long long *out)
{
    const char *s = text;
    unsigned long long whole, frac = 0, den = 1;
    int n, nfrac = 0;
    if (!s || !st_size_digits(&s, ~0ull, &whole, &n))
        return 0;
    if (*s == '.') {
        s++;
        if (!st_size_digits(&s, 999999, &frac, &nfrac) || nfrac > 6)
            return 0;
        for (int i = 0; i < nfrac; i++)
            den *= 10;
    }
    int shift = st_size_shift(&s);
    if (*s || (nfrac && !shift) || whole > (max >> shift))
        return 0;
    unsigned long long part = frac << shift; /* frac < 10^6 < 2^20, shift <= 40: no wrap */
    if (part % den)
        return 0;
    unsigned long long bytes = (whole << shift) + part / den;
    if (bytes > max)
        return 0;
    *out = bytes;
    return 1;
}
