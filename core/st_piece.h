/* st_piece.h - strided unit sets: a piece is {first + stride k : k in 0 .. count - 1}.
 *
 * A send's affine comprehension (ST_OP_SET_STRIDE, dsl/affine.h) names its units by its two ends; the machine keeps
 * them as pieces, cut here into ascending ones (a range taken modulo p wraps around), and expands a piece into the
 * sink's ranges only when it must: a piece of stride 1 is one range, whatever its length.
 */
#ifndef ST_PIECE_H
#define ST_PIECE_H

#include <stdint.h>

typedef struct st_piece {
    int64_t first, stride, count; /* stride >= 0 once cut; count >= 1 */
} st_piece;

/* Cut {(first + stride k) mod m : k in 0 .. count - 1} (m > 0; m = 0: no modulo, and then first + stride (count - 1)
 * must not overflow) into ascending pieces, in order of k, calling emit(ctx, piece) for each. A modular range with
 * stride s makes about |s| count / m + 1 pieces: the stride is taken as the smaller of s mod m and s mod m - m in
 * size, so (r - 2 d i) mod p walks down in steps of 2d, not up in steps of p - 2d. Returns 0, or the first
 * non-zero value emit returned. */
int st_piece_cut(int64_t first, int64_t stride, int64_t count, int64_t m, int (*emit)(void *ctx, st_piece pc),
                 void *ctx);

#endif
