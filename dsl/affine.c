/* affine.c - affine comprehension elements (see affine.h). */
#include "affine.h"

#include <string.h>

static int same_name(st_str a, st_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.s, b.s, (size_t)a.len) == 0);
}

/* Combine two operands' classes under + or -: linear if either is, not affine if either is not. */
static int sum_class(int x, int y)
{
    if (x == ST_AFF_NOT || y == ST_AFF_NOT)
        return ST_AFF_NOT;
    return x > y ? x : y;
}

static int args_free(const st_expr *a, st_str var)
{
    for (; a; a = a->next)
        if (st_affine_in(a, var) != ST_AFF_FREE)
            return 0;
    return 1;
}

int st_affine_in(const st_expr *e, st_str var)
{
    switch (e->kind) {
    case ST_E_INT: return ST_AFF_FREE;
    case ST_E_NAME: return same_name(e->name, var) ? ST_AFF_LINEAR : ST_AFF_FREE;
    case ST_E_CALL: return args_free(e->args, var) ? ST_AFF_FREE : ST_AFF_NOT;
    case ST_E_UN: {
        int x = st_affine_in(e->a, var);
        return e->op == ST_U_NEG || x == ST_AFF_FREE ? x : ST_AFF_NOT;
    }
    case ST_E_IF:
        return args_free(e->a, var) && st_affine_in(e->b, var) == ST_AFF_FREE &&
                       st_affine_in(e->c, var) == ST_AFF_FREE ? ST_AFF_FREE : ST_AFF_NOT;
    case ST_E_BIN: {
        int x = st_affine_in(e->a, var), y = st_affine_in(e->b, var);
        if (e->op == ST_B_ADD || e->op == ST_B_SUB)
            return sum_class(x, y);
        if (e->op == ST_B_MUL && x != ST_AFF_NOT && y != ST_AFF_NOT && (x == ST_AFF_FREE || y == ST_AFF_FREE))
            return x > y ? x : y;
        return x == ST_AFF_FREE && y == ST_AFF_FREE ? ST_AFF_FREE : ST_AFF_NOT;
    }
    }
    return ST_AFF_NOT;
}

int st_affine_comp(const st_uset *u, const st_expr **base, const st_expr **mod)
{
    if (u->kind != ST_US_COMP || u->cond || u->elem_hi)
        return 0;
    const st_expr *e = u->elem;
    *mod = NULL;
    if (e->kind == ST_E_BIN && e->op == ST_B_MOD && st_affine_in(e->b, u->var) == ST_AFF_FREE) {
        *mod = e->b;
        e = e->a;
    }
    *base = e;
    return st_affine_in(e, u->var) != ST_AFF_NOT;
}
