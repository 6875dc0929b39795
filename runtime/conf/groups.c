/* groups.c - filling and freeing a communicator's groups, and reading a topology setting (groups.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "st_topofile.h"

int st_groups_uniform(st_groups *g, int p, int ngroups, const int *sizes)
{
    size_t n = (size_t)p;
    int32_t *m = malloc(sizeof *m * (3 * n + (size_t)ngroups + 1));
    st_topo t;
    if (!m || st_topo_uniform(&t, p, ngroups, sizes, m, m + ngroups + 1, m + ngroups + 1 + n,
                              m + ngroups + 1 + 2 * n) != 0) {
        free(m);
        return -1;
    }
    free(g->mem);
    g->mem = m, g->topo = t;
    return 0;
}

int st_groups_by_key(st_groups *g, int p, const uint64_t *key)
{
    size_t n = (size_t)p;
    int32_t *m = malloc(sizeof *m * (4 * n + 1));
    st_topo t;
    if (!m || st_topo_by_key(&t, p, key, m, m + n + 1, m + 2 * n + 1, m + 3 * n + 1) < 0) {
        free(m);
        return -1;
    }
    free(g->mem);
    g->mem = m;
    g->topo = t.ngroups > 1 ? t : (st_topo){0}; /* one group is no grouping: as without groups */
    return 0;
}

/* Level lv of a topology built over layout positions, renumbered to ranks: members hold positions and group_of /
 * index_of are indexed by position; afterwards members hold ranks and the others are indexed by rank. */
static int st_level_permute(const st_topo_level *lv, int p, const int32_t *rank_at)
{
    int32_t *members = (int32_t *)lv->members, *group_of = (int32_t *)lv->group_of;
    int32_t *index_of = (int32_t *)lv->index_of, *tmp = malloc(sizeof *tmp * 2 * (size_t)p);
    if (!tmp)
        return -1;
    for (int pos = 0; pos < p; pos++)
        tmp[rank_at[pos]] = group_of[pos], tmp[p + rank_at[pos]] = index_of[pos];
    for (int i = 0; i < p; i++)
        members[i] = rank_at[members[i]], group_of[i] = tmp[i], index_of[i] = tmp[p + i];
    free(tmp);
    return 0;
}

int st_groups_layout(st_groups *g, const st_layout *l, const int32_t *rank_at)
{
    st_topo t;
    void *mem = NULL;
    if (st_topo_build(l, &t, &mem) != 0)
        return -1;
    for (int k = 0; rank_at && k < st_topo_nlevels(&t) - 1; k++) {
        st_topo_level lv = st_topo_level_of(&t, k);
        if (st_level_permute(&lv, l->p, rank_at) != 0) {
            free(mem);
            return -1;
        }
    }
    free(g->mem);
    g->mem = mem, g->topo = t;
    return 0;
}

void st_groups_free(st_groups *g)
{
    free(g->mem);
    *g = (st_groups){{0}, NULL};
}

/* ---- topology settings ------------------------------------------------------------------------------------- */

int st_topo_is_layout(const char *spec)
{
    if (!*spec)
        return 0;
    for (const char *c = spec; *c; c++)
        if (!strchr("0123456789,[]x \t", *c))
            return 0;
    return 1;
}

stitch_status_t st_topo_setting_load(const char *source, const char *spec, int p, st_topofile *tf, char *err,
                                     size_t errlen)
{
    char why[768], shape[160], pre[320] = "";
    memset(tf, 0, sizeof *tf);
    if (source)
        snprintf(pre, sizeof pre, "%s='%s': ", source, spec);
    if (!*spec) {
        snprintf(err, errlen, "%sempty: expected a topology file (YAML, see topologies/) or a layout such as 2,3",
                 pre);
        return STITCH_ERR_CONFIG;
    }
    if (st_topo_is_layout(spec)) {
        if (st_layout_parse(spec, &tf->layout, why, sizeof why) != 0) {
            snprintf(err, errlen, "%sbad layout '%s': %s (expected counts of ranks such as 2,3, nested lists such "
                     "as [2,3],[4] for three levels, or SxL)", pre, spec, why);
            return STITCH_ERR_CONFIG;
        }
        tf->nlevels = tf->layout.nlevels;
        for (int k = 0; k < ST_TOPO_MAX_LEVELS; k++) /* a layout says nothing of the links: full meshes */
            tf->level[k].full_mesh = 1;
    } else if (st_topofile_load(spec, tf, why, sizeof why) != 0) {
        /* the loader's line names the file: `FILE:LINE:COL: error: ...` */
        snprintf(err, errlen, "%s%s%s", source ? source : "", source ? ": " : "", why);
        return STITCH_ERR_CONFIG;
    }
    if (p > 0 && tf->layout.p != p) {
        st_layout_format(&tf->layout, shape, sizeof shape);
        snprintf(err, errlen, "%sthe topology%s%s%s has %d rank%s (layout %s) but the communicator has %d", pre,
                 tf->name[0] ? " '" : "", tf->name, tf->name[0] ? "'" : "", tf->layout.p, tf->layout.p == 1 ? "" : "s",
                 shape, p);
        st_topofile_free(tf);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* FNV-1a, 64 bits: the tag need only tell different topologies apart, not resist an adversary (every rank is
 * the same job's, authenticated by the bootstrap). */
static uint64_t st_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t st_topo_hash(const st_topofile *tf)
{
    const st_layout *l = &tf->layout;
    uint64_t h = st_fnv(0xcbf29ce484222325ull, &l->nlevels, sizeof l->nlevels);
    for (int k = 0; k < l->nlevels; k++) {
        h = st_fnv(h, &l->ngroups[k], sizeof l->ngroups[k]);
        h = st_fnv(h, l->count[k], sizeof *l->count[k] * (size_t)l->ngroups[k]);
        h = st_fnv(h, tf->level[k].name, strlen(tf->level[k].name) + 1);
        h = st_fnv(h, &tf->level[k].bandwidth, sizeof tf->level[k].bandwidth);
        h = st_fnv(h, &tf->level[k].latency, sizeof tf->level[k].latency);
    }
    h = st_fnv(h, &tf->reduce_bandwidth, sizeof tf->reduce_bandwidth);
    for (int g = 0; g < l->ngroups[0]; g++) {
        if (tf->host && tf->host[g])
            h = st_fnv(h, tf->host[g], strlen(tf->host[g]) + 1);
        if (tf->devices && tf->devices[g])
            h = st_fnv(h, tf->devices[g], sizeof *tf->devices[g] * (size_t)l->count[0][g]);
    }
    return h;
}

int stitch_topo_ranks(const char *topo, char *err, size_t errlen)
{
    st_topofile tf;
    char why[1024];
    if (!topo) {
        snprintf(err ? err : why, err ? errlen : sizeof why, "stitch_topo_ranks: topo is NULL");
        return -1;
    }
    if (st_topo_setting_load(NULL, topo, 0, &tf, why, sizeof why) != STITCH_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s", why);
        return -1;
    }
    int p = tf.layout.p;
    st_topofile_free(&tf);
    return p;
}

int st_topo_level0_ring(const char *spec)
{
    st_topofile tf;
    char why[256];
    if (!spec || st_topo_is_layout(spec) || st_topo_setting_load(NULL, spec, 0, &tf, why, sizeof why) != STITCH_OK)
        return 0;
    int ring = !tf.level[0].full_mesh;
    st_topofile_free(&tf);
    return ring;
}
