/* piece_cut.c - st_piece_cut (core/st_piece.h) against the loop it replaces: for many (first, stride, count, m),
 * the pieces are ascending and name exactly the units {(first + stride k) mod m}, and a modular range makes no more
 * pieces than its wraps around m (two for NHR's and NB's sets). Exit 1 on the first difference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_piece.h"

#define MAXU 4096

typedef struct got {
    unsigned char seen[MAXU];
    int npieces, bad;
} got;

static int collect(void *ctx, st_piece pc)
{
    got *g = ctx;
    g->npieces++;
    if (pc.stride < 0 || pc.count < 1)
        g->bad = 1;
    for (int64_t k = 0; k < pc.count && !g->bad; k++) {
        int64_t u = pc.first + pc.stride * k;
        if (u < 0 || u >= MAXU)
            g->bad = 1;
        else
            g->seen[u] = 1;
    }
    return 0;
}

static int64_t fmod64(int64_t a, int64_t m)
{
    int64_t v = a % m;
    return v < 0 ? v + m : v;
}

static int one(int64_t first, int64_t stride, int64_t count, int64_t m)
{
    got g;
    unsigned char want[MAXU];
    memset(&g, 0, sizeof g);
    memset(want, 0, sizeof want);
    for (int64_t k = 0; k < count; k++)
        want[m ? fmod64(first + stride * k, m) : first + stride * k] = 1;
    st_piece_cut(first, stride, count, m, collect, &g);
    int64_t s = m ? fmod64(stride, m) : 0;
    if (m && s > m - s)
        s = m - s;
    int64_t wraps = m ? (s * count) / m + 2 : 1;
    if (g.bad || memcmp(g.seen, want, MAXU) != 0 || g.npieces > wraps) {
        fprintf(stderr, "piece_cut: first %lld stride %lld count %lld m %lld: %d pieces, %s\n", (long long)first,
                (long long)stride, (long long)count, (long long)m, g.npieces, g.bad ? "bad piece" : "wrong units");
        return 1;
    }
    return 0;
}

int main(void)
{
    int bad = 0, n = 0;
    for (int64_t m = 1; m <= 70 && !bad; m++)
        for (int64_t first = -2 * m; first <= 2 * m && !bad; first += 3)
            for (int64_t stride = -2 * m; stride <= 2 * m && !bad; stride++)
                for (int64_t count = 1; count <= m + 3 && !bad; count += 2, n++)
                    bad = one(first, stride, count, m);
    for (int64_t stride = -40; stride <= 40 && !bad; stride++) /* no modulo: one ascending piece */
        for (int64_t count = 1; count <= 50 && !bad; count++, n++)
            bad = one(2100, stride, count, 0);
    /* NB's reduce-scatter at p = 1000: (r + d + 2 d i) mod p, i < c, and NHR's (r - d - 2 d i) mod p */
    for (int64_t d = 1; d < 1000 && !bad; d *= 2)
        for (int64_t r = 0; r < 1000 && !bad; r += 37, n += 2)
            bad = one(r + d, 2 * d, (999 + d) / (2 * d), 1000) || one(r - d, -2 * d, (999 + d) / (2 * d), 1000);
    if (!bad)
        printf("piece_cut: %d strided sets cut exactly\n", n);
    return bad;
}
