/* placement.c - process mode's groups: the ranks of each host, or an explicit spec (placement.h).
 *
 * By host. The bootstrap gives every rank the whole table of host ids (bootstrap.c's st_host_id: hostname, boot
 * id and network namespace), so every rank computes the same groups from it with no further talk: one group per
 * host id, ordered by its lowest rank, members in rank order (st_topo_by_key). Launchers place ranks in many
 * ways (by slot: 0 1 | 2 3; round-robin: 0 2 | 1 3), so members need not be consecutive; the algorithms see
 * groups only through member/index/group, which do not care. One host gives one group, as before.
 *
 * Explicit. STITCH_GROUPS / stitch_config_t.groups keep their meaning: groups of consecutive ranks. They are read
 * per process, so two ranks could be started with different values; each rank publishes a hash of its groups in
 * its bootstrap entry (0: by host), and a rank whose table shows another value fails init with both sides named,
 * instead of running a schedule its peers do not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define ST_LOG_GROUPS_CHARS 400 /* a debug line lists the groups up to about this many characters */

stitch_status_t st_placement_init(st_placement *pl, const st_settings *s, int p, char *err, size_t errlen)
{
    char why[256];
    int ngroups = 0, *sizes = s->groups ? malloc(sizeof *sizes * (size_t)p) : NULL;
    memset(pl, 0, sizeof *pl);
    pl->p = p;
    pl->key = calloc((size_t)p, sizeof *pl->key);
    if (!pl->key || (s->groups && !sizes)) {
        free(sizes);
        snprintf(err, errlen, "out of memory for the groups of %d ranks", p);
        return STITCH_ERR_NO_MEMORY;
    }
    if (!s->groups)
        return STITCH_OK;
    if (st_parse_groups(s->groups, p, sizes, &ngroups, why, sizeof why) != STITCH_OK) {
        free(sizes);
        snprintf(err, errlen, "%s=%s", s->groups_source, why);
        return STITCH_ERR_CONFIG;
    }
    for (int g = 0, r = 0; g < ngroups; g++)
        for (int i = 0; i < sizes[g]; i++)
            pl->key[r++] = (uint64_t)g;
    static const uint64_t k[2] = {0x67726f7570730000ULL, 3}; /* "groups" */
    pl->given = 1;
    pl->tag = st_siphash(k, pl->key, sizeof *pl->key * (size_t)p) | 1; /* never 0, which means "by host" */
    free(sizes);
    return STITCH_OK;
}

/* How rank i's entry says its groups are made, for the disagreement message. */
static void st_tag_text(const st_placement *pl, const st_settings *s, uint64_t tag, char *out, size_t len)
{
    if (tag == 0)
        snprintf(out, len, "groups by host (no STITCH_GROUPS or config->groups)");
    else if (tag == pl->tag)
        snprintf(out, len, "groups from %s='%s'", s->groups_source, s->groups);
    else
        snprintf(out, len, "groups from a different STITCH_GROUPS or config->groups");
}

static stitch_status_t st_check_tags(const st_placement *pl, const st_settings *s, const st_boot *b, char *err,
                                     size_t errlen)
{
    for (int i = 0; i < b->size; i++) {
        if (b->peers[i].tag == pl->tag)
            continue;
        char mine[200], theirs[200];
        st_tag_text(pl, s, pl->tag, mine, sizeof mine);
        st_tag_text(pl, s, b->peers[i].tag, theirs, sizeof theirs);
        snprintf(err, errlen, "ranks disagree on the groups: rank %d has %s but rank %d has %s (set the same "
                 "groups on every rank, or none)", b->rank, mine, i, theirs);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* "{0,2,4} {1,3}", cut short with "..." past ST_LOG_GROUPS_CHARS. */
static void st_groups_text(const st_topo *t, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int g = 0; g < t->ngroups && n + 24 < len; g++)
        for (int i = t->first[g]; i < t->first[g + 1] && n + 24 < len; i++)
            n += (size_t)snprintf(out + n, len - n, "%s%d%s", i == t->first[g] ? (g ? " {" : "{") : ",",
                                  t->members[i], i + 1 == t->first[g + 1] ? "}" : "");
    if (n + 24 >= len)
        snprintf(out + n, len - n, " ...");
}

static void st_log_groups(const st_placement *pl, const st_settings *s, const st_boot *b, const st_groups *g)
{
    char list[ST_LOG_GROUPS_CHARS + 32], how[160];
    if (pl->given)
        snprintf(how, sizeof how, "from %s='%s'", s->groups_source, s->groups);
    else
        snprintf(how, sizeof how, "by host");
    if (g->topo.ngroups == 0) {
        fprintf(stderr, "stitch: rank %d of %d: 1 group %s (all ranks)\n", b->rank, b->size, how);
        return;
    }
    st_groups_text(&g->topo, list, sizeof list);
    fprintf(stderr, "stitch: rank %d of %d: %d groups %s: %s\n", b->rank, b->size, g->topo.ngroups, how, list);
}

stitch_status_t st_placement_apply(st_placement *pl, const st_settings *s, const st_boot *b, st_groups *groups,
                                   char *err, size_t errlen)
{
    stitch_status_t st = st_check_tags(pl, s, b, err, errlen);
    if (st != STITCH_OK)
        return st;
    for (int i = 0; !pl->given && i < pl->p; i++)
        pl->key[i] = b->peers[i].host;
    if (st_groups_by_key(groups, pl->p, pl->key) != 0) {
        snprintf(err, errlen, "out of memory for the groups of %d ranks", pl->p);
        return STITCH_ERR_NO_MEMORY;
    }
    if (st_debug())
        st_log_groups(pl, s, b, groups);
    return STITCH_OK;
}

void st_placement_free(st_placement *pl)
{
    free(pl->key);
    pl->key = NULL;
}
