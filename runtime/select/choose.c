/* choose.c - which algorithm a collective call runs.
 *
 * A user who names an algorithm gets it for every call. Otherwise (the default, or the name "auto") the runtime
 * chooses per call by size from the communicator's table (select.h: policy model, hccl, hccl_guide or size,
 * STITCH_SELECT);
 * the choice kept here for auto is only the fallback where that table cannot be built: ring, or the registry's
 * first algorithm for a collective without ring (all_to_all).
 * Names are looked up in the communicator's registry (registry.c), whose built-in catalogue comes first: a user's
 * catalogue adds algorithms to force by name, and is auto's choice only for a collective the built-in catalogue
 * lacks.
 * HCCL_ALGO (or stitch_config_t.hccl_algo) chooses through its level1 entry (ring, H-D_R, NHR, NB, pipeline,
 * pairwise, AHC, AHC_BROKE): its collectives stay auto, and their size table holds the configured algorithm for
 * every size, fitted to the layout, or HCCL's default where it cannot run (select_conf.c). Its level0 and level1
 * entries also replace the roles the composites name (st_hccl_use). Between a STITCH_ALGO-style choice and an
 * HCCL_ALGO one for the same collective, the one from the communicator's config beats the environment; from the
 * same place, the stitch name wins, as it names the algorithm itself where HCCL_ALGO names a level's.
 * The choice depends only on (collective, count, dtype, p, groups), which every rank of a correct call agrees on; ranks
 * whose counts differ may choose differently, and the fingerprint (which names the count before the algorithm)
 * says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "choose.h"
#include "registry.h"

void st_all_names(const st_reg *reg, char *buf, size_t len)
{
    size_t used = 0;
    for (int c = 0; c < STITCH_COLL_COUNT && used < len; c++) {
        char known[200];
        st_reg_names(reg, (stitch_coll_t)c, known, sizeof known);
        int n = snprintf(buf + used, len - used, "%s%s: %s", c ? "; " : "", stitch_coll_name((stitch_coll_t)c), known);
        used += n > 0 ? (size_t)n : 0;
    }
}

static st_choice st_auto(const st_reg *reg, stitch_coll_t coll)
{
    const st_algo *a = st_reg_find(reg, ST_DEFAULT_ALGO, coll);
    st_choice c = {a ? a : st_reg_first(reg, coll), 1};
    return c;
}

int st_choice_set(const st_reg *reg, st_choice *c, stitch_coll_t coll, const char *name)
{
    if (strcasecmp(name, ST_AUTO_NAME) == 0) {
        *c = st_auto(reg, coll);
        return c->algo ? 0 : -1;
    }
    const st_algo *a = st_reg_find(reg, name, coll);
    if (!a)
        return -1;
    *c = (st_choice){a, 0};
    return 0;
}

/* One collective: its own item must exist; a name for every collective falls back to auto where the collective
 * has no algorithm of that name. */
static int st_resolve_one(const st_reg *reg, const st_algo_spec *spec, stitch_coll_t c, st_choice *out)
{
    if (spec->coll[c][0])
        return st_choice_set(reg, out, c, spec->coll[c]);
    if (spec->every[0] && st_choice_set(reg, out, c, spec->every) == 0)
        return 0;
    return st_choice_set(reg, out, c, ST_AUTO_NAME);
}

static int st_every_used(const st_reg *reg, const st_algo_spec *spec)
{
    if (!spec->every[0] || strcasecmp(spec->every, ST_AUTO_NAME) == 0)
        return 1;
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        if (!spec->coll[c][0] && st_reg_find(reg, spec->every, (stitch_coll_t)c))
            return 1;
    return 0;
}

void st_unknown_algo(const st_reg *reg, char *out, size_t len, const char *where, const char *name, int coll)
{
    char known[ST_NAMES_LEN];
    if (coll < STITCH_COLL_COUNT) {
        st_reg_names(reg, (stitch_coll_t)coll, known, sizeof known);
        snprintf(out, len, "%s: unknown algorithm '%s' for %s (known: auto, %s)", where, name,
                 stitch_coll_name((stitch_coll_t)coll), known);
    } else {
        st_all_names(reg, known, sizeof known);
        snprintf(out, len, "%s: unknown algorithm '%s' (known: auto; %s)", where, name, known);
    }
}

int st_hccl_choice(const st_settings *s, stitch_coll_t coll)
{
    return s->hccl_algo_source ? st_hccl_configured(&s->hccl_algo, coll) : ST_HA_DEFAULT;
}

static int st_whole(int a)
{
    return a == ST_HA_AHC || a == ST_HA_AHC_BROKE || a == ST_HA_PIPELINE || a == ST_HA_PAIRWISE;
}

/* The stitch algorithm a level's role runs instead of its default, or NULL. Level0 is the hardware's (spec 11.2:
 * HCCL ignores HCCL_ALGO's level0 entries with a warning; 13.1: level0 is fixed by the server's topology): ring
 * where the servers are not full meshes, else the role's own mesh. Level1: HCCL_ALGO's entry (not a
 * whole-communicator algorithm). */
static const char *st_role_algo(const st_settings *s, stitch_coll_t coll, int level)
{
    if (level == 0)
        return s->level0_ring ? "ring" : NULL;
    if (!s->hccl_algo_source)
        return NULL;
    int a = st_hccl_level(&s->hccl_algo, coll, level);
    if (st_whole(a) || a == ST_HA_FULLMESH) /* level1 fullmesh: HCCL warns and ignores it */
        return NULL;
    return st_hccl_alg_stitch(a);
}

int st_hccl_use(const st_settings *s, const st_catalogue *cat, stitch_coll_t coll, int32_t **use)
{
    static const char *const role[] = {"level0", "level1"};
    int replaced = 0;
    *use = NULL;
    if (!s->hccl_algo_source && !s->level0_ring)
        return 0;
    int32_t *u = malloc(sizeof *u * ((size_t)cat->nalgos + 1));
    if (!u)
        return -1;
    for (int i = 0; i < cat->nalgos; i++) {
        u[i] = -1;
        for (int k = 0; k < 2; k++) {
            const char *name = strcasecmp(cat->algos[i].name, role[k]) == 0 ? st_role_algo(s, coll, k) : NULL;
            const st_algo *with = name ? st_cat_find(cat, name, cat->algos[i].coll) : NULL;
            if (with)
                u[i] = (int32_t)(with - cat->algos), replaced = 1;
        }
    }
    if (replaced)
        *use = u;
    else
        free(u);
    return 0;
}

/* 2: the communicator's config, 1: the environment, 0: the default ("config->algo", "STITCH_ALGO", "default"). */
static int st_source_rank(const char *source)
{
    return strncmp(source, "config->", 8) == 0 ? 2 : strcmp(source, "default") != 0;
}

/* HCCL_ALGO's level1 choices over the STITCH_ALGO-style ones they outrank: the collective is auto again, and its
 * table holds the configured algorithm (select_conf.c). A per-operator entry naming a whole-communicator algorithm
 * must exist for its collective (elsewhere an entry that cannot run gives HCCL's default, and STITCH_DEBUG says so). */
static stitch_status_t st_apply_hccl(const st_reg *reg, const st_settings *s, st_choice out[STITCH_COLL_COUNT],
                                     char *err, size_t errlen)
{
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        int alg = st_hccl_choice(s, (stitch_coll_t)c);
        if (!alg)
            continue;
        const char *pick = st_hccl_alg_stitch(alg);
        if (s->hccl_algo.specific[c] && st_whole(alg) && !st_reg_find(reg, pick, (stitch_coll_t)c)) {
            char known[ST_NAMES_LEN];
            st_reg_names(reg, (stitch_coll_t)c, known, sizeof known);
            snprintf(err, errlen, "%s='%s': level1 %s is stitch's algorithm '%s', which the catalogues have no %s "
                     "of (known: %s)", s->hccl_algo_source, s->hccl_algo_text, st_hccl_alg_name(alg), pick,
                     stitch_coll_name((stitch_coll_t)c), known);
            return STITCH_ERR_CONFIG;
        }
        int mine = !out[c].is_auto && st_source_rank(s->algo_source) >= st_source_rank(s->hccl_algo_source);
        if (!mine)
            out[c] = st_auto(reg, (stitch_coll_t)c);
    }
    return STITCH_OK;
}

stitch_status_t st_resolve_algos(const st_reg *reg, const st_settings *s, st_choice out[STITCH_COLL_COUNT],
                                 char *err, size_t errlen)
{
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        if (st_resolve_one(reg, &s->algo, (stitch_coll_t)c, &out[c]) != 0) {
            st_unknown_algo(reg, err, errlen, s->algo_source, s->algo.coll[c], c);
            return STITCH_ERR_CONFIG;
        }
    if (!st_every_used(reg, &s->algo)) {
        st_unknown_algo(reg, err, errlen, s->algo_source, s->algo.every, STITCH_COLL_COUNT);
        return STITCH_ERR_CONFIG;
    }
    return st_apply_hccl(reg, s, out, err, errlen);
}
