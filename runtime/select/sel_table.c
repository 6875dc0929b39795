/* sel_table.c - the size table's bricks: size classes (powers of two) and ranges appended in order. Every
 * policy's builder (select.c, select_hccl.c) lays its table with them; select.c checks and looks it up. */
#include <stddef.h>
#include <stdint.h>

#include "select.h"

int st_sel_class(size_t bytes)
{
    int k = 0;
    while (k < ST_SEL_CLASSES - 1 && ((size_t)1 << k) < bytes)
        k++;
    return k;
}

void st_sel_class_range(int k, size_t *lo, size_t *hi)
{
    *lo = k == 0 ? 0 : ((size_t)1 << (k - 1)) + 1;
    *hi = k == ST_SEL_CLASSES - 1 ? SIZE_MAX : (size_t)1 << k;
}

int st_sel_add(st_sel_table *t, size_t lo, size_t hi, const st_algo *algo)
{
    if (t->n > 0 && t->r[t->n - 1].algo == algo && t->r[t->n - 1].hi != SIZE_MAX && t->r[t->n - 1].hi + 1 == lo) {
        t->r[t->n - 1].hi = hi;
        return 0;
    }
    if (t->n == ST_SEL_MAX_RANGES)
        return -1;
    t->r[t->n++] = (st_sel_range){lo, hi, algo};
    return 0;
}
