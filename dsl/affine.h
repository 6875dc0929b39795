/* affine.h - is a comprehension's element affine in its variable? (the strided unit sets of sends)
 *
 * `send { E : i in lo .. hi }` names the units E(lo), ..., E(hi). When E is affine in i, E = A + B*i with A and B
 * free of i, those units are a strided range: the compiler evaluates E at both ends only (ST_OP_SET_STRIDE), so a
 * set of c units costs O(1) instructions instead of c loop iterations, and the machine keeps it as one piece.
 * A top-level `E % M` with M free of i is the same range taken modulo M (NHR's and NB's `(r + d + 2 d i) % p`).
 *
 * Why two ends are enough, errors included: every subexpression of an affine E is itself affine or free of i, so
 * over lo .. hi its values lie between its values at the ends; an overflow at some i overflows at an end too, and
 * what could fail otherwise (a division, a call) is free of i and fails at lo as the loop would.
 */
#ifndef ST_AFFINE_H
#define ST_AFFINE_H

#include "ast.h"

enum { ST_AFF_NOT = -1, ST_AFF_FREE = 0, ST_AFF_LINEAR = 1 };

/* ST_AFF_FREE when e does not read var, ST_AFF_LINEAR when it is A + B*var (sums, differences, negation and
 * products with a factor free of var), ST_AFF_NOT otherwise. */
int st_affine_in(const st_expr *e, st_str var);

/* The strided form of a comprehension `{ elem : var in lo .. hi }` (no filter, one unit per value): 1 with
 * *base = elem or, for a top-level `X % M` with M free of var and X affine, *base = X and *mod = M; else 0. */
int st_affine_comp(const st_uset *u, const st_expr **base, const st_expr **mod);

#endif
