/* topology.c - the topology value (topology.h): read once, shared by reference, read through accessors. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_topofile.h"
#include "topology.h"

struct st_topology {
    _Atomic int refs;
    st_topofile tf;
    int figures; /* read from a file (levels with figures), not an inline layout */
    char spec[];  /* the setting as given */
};

static _Atomic unsigned long st_made;

unsigned long st_topology_loads(void)
{
    return atomic_load(&st_made);
}

/* A mismatch of rank counts, named by the topology's name and layout. */
static void st_count_error(const char *pre, const st_topofile *tf, int p, char *err, size_t errlen)
{
    char shape[160];
    st_layout_format(&tf->layout, shape, sizeof shape);
    snprintf(err, errlen, "%sthe topology%s%s%s has %d rank%s (layout %s) but the communicator has %d", pre,
             tf->name[0] ? " '" : "", tf->name, tf->name[0] ? "'" : "", tf->layout.p, tf->layout.p == 1 ? "" : "s",
             shape, p);
}

stitch_status_t st_topology_load(const char *source, const char *spec, int p, st_topology **out, char *err,
                                 size_t errlen)
{
    char why[768], pre[320] = "";
    st_topofile tf;
    *out = NULL;
    if (source)
        snprintf(pre, sizeof pre, "%s='%s': ", source, spec);
    if (st_topofile_open(spec, &tf, why, sizeof why) != 0) {
        if (!*spec || st_topofile_is_layout(spec))
            snprintf(err, errlen, "%s%s", pre, why);
        else /* the loader's line names the file: `FILE:LINE:COL: error: ...` */
            snprintf(err, errlen, "%s%s%s", source ? source : "", source ? ": " : "", why);
        return STITCH_ERR_CONFIG;
    }
    if (p > 0 && tf.layout.p != p) {
        st_count_error(pre, &tf, p, err, errlen);
        st_topofile_free(&tf);
        return STITCH_ERR_CONFIG;
    }
    size_t n = strlen(spec) + 1;
    st_topology *t = malloc(sizeof *t + n);
    if (!t) {
        st_topofile_free(&tf);
        snprintf(err, errlen, "out of memory for the topology '%s'", spec);
        return STITCH_ERR_NO_MEMORY;
    }
    atomic_init(&t->refs, 1);
    t->tf = tf;
    t->figures = !st_topofile_is_layout(spec);
    memcpy(t->spec, spec, n);
    atomic_fetch_add(&st_made, 1);
    *out = t;
    return STITCH_OK;
}

st_topology *st_topology_ref(st_topology *t)
{
    if (t)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

void st_topology_unref(st_topology *t)
{
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    st_topofile_free(&t->tf);
    free(t);
}

int st_topology_refs(const st_topology *t)
{
    return t ? atomic_load(&((st_topology *)t)->refs) : 0;
}

/* ---- accessors ---------------------------------------------------------------------------------------------- */

const char *st_topology_spec(const st_topology *t)
{
    return t ? t->spec : "";
}

const char *st_topology_name(const st_topology *t)
{
    return t ? t->tf.name : "";
}

int st_topology_ranks(const st_topology *t)
{
    return t ? t->tf.layout.p : 0;
}

const st_layout *st_topology_layout(const st_topology *t)
{
    return t ? &t->tf.layout : NULL;
}

int st_topology_nlevels(const st_topology *t)
{
    return t ? t->tf.nlevels : 0;
}

int st_topology_has_figures(const st_topology *t)
{
    return t && t->figures;
}

const st_level_info *st_topology_level(const st_topology *t, int k)
{
    return t && k >= 0 && k < t->tf.nlevels ? &t->tf.level[k] : NULL;
}

double st_topology_reduce_bandwidth(const st_topology *t)
{
    return t ? t->tf.reduce_bandwidth : 0;
}

int st_topology_has_hosts(const st_topology *t)
{
    return t && t->tf.host;
}

const char *st_topology_host(const st_topology *t, int server)
{
    if (!t || !t->tf.host || server < 0 || server >= t->tf.layout.ngroups[0])
        return NULL;
    return t->tf.host[server];
}

const int32_t *st_topology_devices(const st_topology *t, int server)
{
    if (!t || !t->tf.devices || server < 0 || server >= t->tf.layout.ngroups[0])
        return NULL;
    return t->tf.devices[server];
}

void st_topology_split_bw(const st_topology *t, double bw[2])
{
    bw[0] = bw[1] = 0;
    if (t && t->figures && t->tf.nlevels >= 2)
        bw[0] = t->tf.level[0].bandwidth, bw[1] = t->tf.level[1].bandwidth;
}

int st_topology_level0_ring(const st_topology *t)
{
    return t && t->figures && t->tf.nlevels > 0 && !t->tf.level[0].full_mesh;
}

const st_topofile *st_topology_file(const st_topology *t)
{
    return t ? &t->tf : NULL;
}

int st_topology_groups(const st_topology *t, const int32_t *rank_at, st_groups *g)
{
    if (!t) {
        st_groups_free(g);
        return 0;
    }
    return st_groups_layout(g, &t->tf.layout, rank_at);
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

uint64_t st_topology_hash(const st_topology *t)
{
    if (!t)
        return 0;
    const st_topofile *tf = &t->tf;
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

/* ---- the public helper -------------------------------------------------------------------------------------- */

int stitch_topo_ranks(const char *topo, char *err, size_t errlen)
{
    st_topology *t;
    char why[1024];
    if (!topo) {
        snprintf(err ? err : why, err ? errlen : sizeof why, "stitch_topo_ranks: topo is NULL");
        return -1;
    }
    if (st_topology_load(NULL, topo, 0, &t, why, sizeof why) != STITCH_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s", why);
        return -1;
    }
    int p = st_topology_ranks(t);
    st_topology_unref(t);
    return p;
}
