/* sel_table.c - the size table's bricks: size classes (powers of two), ranges appended in order, the servers'
 * shape. Every policy's builder (select.c, select_hccl.c, select_guide.c, select_conf.c) lays its table with them;
 * select.c checks and looks it up. */
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

st_sel_shape st_sel_shape_of(const st_sel_env *env)
{
    st_sel_shape sh = {1, env->p, 1};
    const st_topo *t = env->topo;
    if (!t || t->ngroups <= 1)
        return sh;
    sh.S = t->ngroups, sh.L = t->first[1] - t->first[0];
    for (int g = 1; g < t->ngroups; g++)
        sh.equal &= t->first[g + 1] - t->first[g] == sh.L;
    return sh;
}

int st_sel_add(st_sel_table *t, size_t lo, size_t hi, const st_algo *algo)
{
    return st_sel_add_between(t, lo, hi, algo, NULL);
}

int st_sel_add_between(st_sel_table *t, size_t lo, size_t hi, const st_algo *algo, const char *between)
{
    const st_sel_range *last = t->n > 0 ? &t->r[t->n - 1] : NULL;
    if (last && last->algo == algo && last->between == between && last->hi != SIZE_MAX && last->hi + 1 == lo) {
        t->r[t->n - 1].hi = hi;
        return 0;
    }
    if (t->n == ST_SEL_MAX_RANGES)
        return -1;
    t->r[t->n++] = (st_sel_range){lo, hi, algo, between};
    return 0;
}
