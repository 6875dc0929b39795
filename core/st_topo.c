/* st_topo.c - nested layouts and the multi-level topologies built from them (see st_topo.h), and the level view
 * of any st_topo (st_topo_nlevels, st_topo_level_of: st_sched.h).
 */
#include "st_topo.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int st_topo_nlevels(const st_topo *t)
{
    return !t ? 1 : t->nlevels > 0 ? t->nlevels : 2;
}

st_topo_level st_topo_level_of(const st_topo *t, int k)
{
    int n = st_topo_nlevels(t);
    if (!t || k >= n - 1)
        return (st_topo_level){.ngroups = 1}; /* the outermost level: everything, in rank order */
    if (k == 0)
        return (st_topo_level){t->ngroups, t->first, t->members, t->group_of, t->index_of};
    return t->upper[k - 1];
}

static int append(st_layout *l, int k, int32_t v)
{
    if (l->ngroups[k] == l->cap[k]) {
        int cap = l->cap[k] ? 2 * l->cap[k] : 8;
        int32_t *c = realloc(l->count[k], sizeof *c * (size_t)cap);
        if (!c)
            return -1;
        l->count[k] = c, l->cap[k] = cap;
    }
    l->count[k][l->ngroups[k]++] = v;
    return 0;
}

int st_layout_leaf(st_layout *l, int depth, long long n, char *why, size_t whylen)
{
    if (n < 1) {
        snprintf(why, whylen, "a group must hold at least 1 rank, not %lld", n);
        return -1;
    }
    if (l->nlevels == 0) {
        if (depth + 1 > ST_TOPO_MAX_LEVELS) {
            snprintf(why, whylen, "layout nested %d lists deep; at most %d levels are supported", depth,
                     ST_TOPO_MAX_LEVELS);
            return -1;
        }
        l->nlevels = depth + 1;
    } else if (depth != l->nlevels - 1) {
        snprintf(why, whylen, "a count of ranks %d list%s deep, but the first one is %d deep: every server must be "
                 "at the same depth", depth, depth == 1 ? "" : "s", l->nlevels - 1);
        return -1;
    }
    if (n > ST_LAYOUT_MAX_RANKS - l->p) {
        snprintf(why, whylen, "the layout holds more than %d ranks", ST_LAYOUT_MAX_RANKS);
        return -1;
    }
    l->p += (int)n;
    if (append(l, 0, (int32_t)n)) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

int st_layout_close(st_layout *l, int depth, int m, char *why, size_t whylen)
{
    if (m < 1) {
        snprintf(why, whylen, "an empty list: a group must hold at least one entry");
        return -1;
    }
    int k = l->nlevels - 1 - depth; /* >= 1: a non-empty list holds a count, deeper than itself */
    if (l->nlevels == 0 || k < 1) {
        snprintf(why, whylen, "a list deeper than the layout's counts of ranks");
        return -1;
    }
    if (append(l, k, m)) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

void st_layout_free(st_layout *l)
{
    for (int k = 0; k < ST_TOPO_MAX_LEVELS; k++)
        free(l->count[k]);
    memset(l, 0, sizeof *l);
}

/* ---- the command line's form -------------------------------------------------------------------------------- */

typedef struct lparse {
    const char *s0, *s;
    st_layout *l;
    char *why;
    size_t whylen;
} lparse;

static void skip_space(lparse *q)
{
    while (*q->s == ' ' || *q->s == '\t')
        q->s++;
}

static int lfail(lparse *q, const char *what)
{
    char tail[160];
    snprintf(tail, sizeof tail, "%s", q->why); /* the builder's reason, if any */
    if (what)
        snprintf(q->why, q->whylen, "column %d: %s", (int)(q->s - q->s0) + 1, what);
    else
        snprintf(q->why, q->whylen, "column %d: %s", (int)(q->s - q->s0) + 1, tail);
    return -1;
}

/* The entries of a list at `depth` (its own depth), up to the end of the text or its ']'. */
static int parse_list(lparse *q, int depth)
{
    int m = 0;
    for (;;) {
        skip_space(q);
        if (*q->s == '[') {
            if (depth + 1 >= ST_TOPO_MAX_LEVELS)
                return lfail(q, "nested too deep");
            q->s++;
            if (parse_list(q, depth + 1))
                return -1;
            if (*q->s != ']')
                return lfail(q, "expected ']'");
            q->s++;
        } else if (isdigit((unsigned char)*q->s)) {
            long long n = 0;
            while (isdigit((unsigned char)*q->s) && n <= ST_LAYOUT_MAX_RANKS)
                n = n * 10 + (*q->s++ - '0');
            if (isdigit((unsigned char)*q->s) || st_layout_leaf(q->l, depth + 1, n, q->why, q->whylen))
                return isdigit((unsigned char)*q->s) ? lfail(q, "count too large") : lfail(q, NULL);
        } else {
            return lfail(q, *q->s ? "expected a count of ranks or '['" : "expected a count of ranks or '[' at the end");
        }
        m++;
        skip_space(q);
        if (*q->s != ',')
            break;
        q->s++;
    }
    return st_layout_close(q->l, depth, m, q->why, q->whylen) ? lfail(q, NULL) : 0;
}

int st_layout_parse(const char *s, st_layout *l, char *why, size_t whylen)
{
    memset(l, 0, sizeof *l);
    why[0] = 0;
    long S, L;
    char x, rest;
    /* SxL: S groups of L ranks; SXL as well, as STITCH_GROUPS and st_groups_spec read it */
    if (sscanf(s, "%ld%c%ld%c", &S, &x, &L, &rest) == 3 && (x == 'x' || x == 'X')) {
        if (S < 1 || L < 1 || S > ST_LAYOUT_MAX_RANKS || L > ST_LAYOUT_MAX_RANKS || S * L > ST_LAYOUT_MAX_RANKS) {
            snprintf(why, whylen, "%ldx%ld: want S >= 1 groups of L >= 1 ranks, at most %d ranks", S, L,
                     ST_LAYOUT_MAX_RANKS);
            return -1;
        }
        for (long g = 0; g < S; g++)
            if (st_layout_leaf(l, 1, L, why, whylen))
                goto fail;
        if (st_layout_close(l, 0, (int)S, why, whylen))
            goto fail;
        return 0;
    }
    lparse q = {s, s, l, why, whylen};
    if (parse_list(&q, 0))
        goto fail;
    skip_space(&q);
    if (*q.s) {
        lfail(&q, *q.s == ']' ? "unmatched ']'" : "expected ','");
        goto fail;
    }
    return 0;
fail:
    st_layout_free(l);
    return -1;
}

/* Level k's group g, written out in the command line's form. */
static size_t format_group(const st_layout *l, int k, int g, int *next, char *buf, size_t len, size_t o)
{
    if (k == 0) {
        o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%d", l->count[0][g]);
        return o;
    }
    int m = l->count[k][g];
    for (int i = 0; i < m; i++) {
        if (i)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, ",");
        if (k > 1)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "[");
        o = format_group(l, k - 1, next[k - 1]++, next, buf, len, o);
        if (k > 1)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "]");
    }
    return o;
}

void st_layout_format(const st_layout *l, char *buf, size_t len)
{
    int next[ST_TOPO_MAX_LEVELS] = {0};
    if (len == 0)
        return;
    buf[0] = 0;
    if (l->nlevels == 1) {
        snprintf(buf, len, "%d (one level)", l->p);
        return;
    }
    size_t o = format_group(l, l->nlevels - 1, 0, next, buf, len, 0);
    if (o >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
}

/* ---- building the topology ------------------------------------------------------------------------------------ */

int st_topo_build(const st_layout *l, st_topo *t, void **mem)
{
    int n = l->nlevels, p = l->p, stored = n > 1 ? n - 1 : 1; /* levels 0 .. n-2 (one group for n == 1) */
    size_t words = 0;
    for (int k = 0; k < stored; k++)
        words += (size_t)(n > 1 ? l->ngroups[k] : 1) + 1 + 3 * (size_t)p;
    char *m = malloc(sizeof(st_topo_level) * ST_TOPO_MAX_LEVELS + sizeof(int32_t) * words);
    *mem = m;
    if (!m)
        return -1;
    st_topo_level *lv = (st_topo_level *)m;
    int32_t *w = (int32_t *)(lv + ST_TOPO_MAX_LEVELS);
    int32_t *starts = NULL; /* level k-1's first[] */
    for (int k = 0; k < stored; k++) {
        int ng = n > 1 ? l->ngroups[k] : 1;
        int32_t *first = w, *members = first + ng + 1, *group_of = members + p, *index_of = group_of + p;
        w = index_of + p;
        first[0] = 0;
        int sub = 0; /* level k-1 groups consumed */
        for (int g = 0; g < ng; g++) {
            if (k == 0)
                first[g + 1] = first[g] + (n > 1 ? l->count[0][g] : p);
            else
                first[g + 1] = starts[sub += l->count[k][g]];
            for (int x = first[g]; x < first[g + 1]; x++)
                members[x] = x, group_of[x] = g, index_of[x] = x - first[g];
        }
        lv[k] = (st_topo_level){ng, first, members, group_of, index_of};
        starts = first;
    }
    *t = (st_topo){.ngroups = lv[0].ngroups, .first = lv[0].first, .members = lv[0].members,
                   .group_of = lv[0].group_of, .index_of = lv[0].index_of, .nlevels = n, .upper = lv + 1};
    return 0;
}

/* One size of a groups spec, 1 .. cap, digits only; advances *s past it. -1 when there is none. */
static long st_spec_size(const char **s, long cap)
{
    long v = 0;
    const char *p = *s;
    for (; isdigit((unsigned char)*p) && v <= cap; p++)
        v = v * 10 + (*p - '0');
    if (p == *s || v < 1 || v > cap)
        return -1;
    *s = p;
    return v;
}

int st_groups_spec(const char *spec, int cap, int *sizes, int *ngroups)
{
    const char *s = spec;
    long n = 0, total = 0, v = st_spec_size(&s, cap);
    if (v > 0 && (*s == 'x' || *s == 'X')) { /* S x L */
        s++;
        long l = st_spec_size(&s, cap);
        if (l <= 0 || *s || v * l > cap)
            return -1;
        for (n = 0; sizes && n < v; n++)
            sizes[n] = (int)l;
        *ngroups = (int)v;
        return (int)(v * l);
    }
    for (;;) {
        if (v <= 0 || total + v > cap)
            return -1;
        if (sizes)
            sizes[n] = (int)v;
        n++, total += v;
        if (*s != ',')
            break;
        s++;
        v = st_spec_size(&s, cap);
    }
    if (*s)
        return -1;
    *ngroups = (int)n;
    return (int)total;
}
