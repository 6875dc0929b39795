/* split_formula.c - spec 12.3's built-in split formula (core/st_sched.c st_split_formula_ppm) against hand-worked
 * numbers. The spec gives no worked figures, so each case below is worked in its comment from 12.3's definitions
 * (P_in = bw_in (L - 1), P_out = bw_out; ratio = T_clos / (T_clos + T_mesh), quantized to eighths in 1/8 .. 7/8;
 * all_gather capped at 0.5 and returned as R = 1 - ratio, 12.4's meaning). */
#include <stdio.h>

#include "st_sched.h"

typedef struct tcase {
    int coll, L, S;
    double bw_in, bw_out;
    int32_t want;
    const char *why;
} tcase;

static const tcase cases[] = {
    /* T_mesh = 21*3/(20*4*3*56) = 0.00469, T_clos = 1/(2*25) = 0.02: ratio 0.810, 6.48 eighths -> 6/8 */
    {ST_COLL_REDUCE_SCATTER, 4, 2, 56e9, 25e9, 750000, "RS 2x4 at 56 and 25 GB/s"},
    {ST_COLL_ALL_REDUCE, 4, 2, 56e9, 25e9, 750000, "all_reduce uses RS's coefficients"},
    /* 8 per server: T_mesh = 21/(20*8*56) = 0.00234, ratio 0.895 -> 7.16 -> 7/8 */
    {ST_COLL_REDUCE, 8, 2, 56e9, 25e9, 875000, "reduce 2x8"},
    /* equal links, L = S = 2: T_mesh = 21/(20*2) = 0.525, T_clos = 0.5: ratio 0.488, 3.90 -> 4/8 */
    {ST_COLL_REDUCE_SCATTER, 2, 2, 1, 1, 500000, "RS 2x2 on equal links"},
    /* broadcast drops the 21/20: T_mesh = 1/2, T_clos = 1/2, ratio 0.5 */
    {ST_COLL_BROADCAST, 2, 2, 1, 1, 500000, "broadcast 2x2 on equal links"},
    /* all_gather: T_mesh = (L-1)/P_in = 1, T_clos = (S-1)/P_out = 0.1: ratio 0.0909 -> 0.73 eighths -> 1/8 of
     * Mesh first, so R (the NHR-first share) = 7/8 */
    {ST_COLL_ALL_GATHER, 4, 2, 1, 10, 875000, "AG 2x4 with a fast level 1"},
    /* all_gather with a slow level 1: ratio 0.95, capped at 0.5 -> R = 0.5 */
    {ST_COLL_ALL_GATHER, 4, 2, 56e9, 25e9, 500000, "AG is capped at 0.5"},
    /* a slow level 0: ratio near 0 quantizes to the 1/8 floor */
    {ST_COLL_REDUCE_SCATTER, 8, 8, 1, 1e6, 125000, "RS clamped at 1/8"},
    /* missing inputs: the fallback 0.5 */
    {ST_COLL_REDUCE_SCATTER, 1, 8, 56e9, 25e9, 500000, "one rank per group"},
    {ST_COLL_REDUCE_SCATTER, 8, 1, 56e9, 25e9, 500000, "one group"},
    {ST_COLL_ALL_REDUCE, 4, 2, 0, 0, 500000, "no bandwidths (plain groups)"},
    {ST_COLL_ALL_REDUCE, 4, 2, 56e9, -1, 500000, "a negative bandwidth"},
};

int main(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tcase *c = &cases[i];
        int32_t got = st_split_formula_ppm(c->coll, c->L, c->S, c->bw_in, c->bw_out);
        if (got != c->want) {
            fprintf(stderr, "split formula, %s: got %d millionths, want %d\n", c->why, (int)got, (int)c->want);
            bad++;
        }
    }
    if (!bad)
        printf("split formula: %zu cases OK\n", sizeof cases / sizeof cases[0]);
    return bad != 0;
}
