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
 *
 * Topology. STITCH_TOPO / stitch_config_t.topo (a file, or an inline layout: groups.h) gives every level. Each rank
 * reads it before the bootstrap and publishes a hash of it (layout, hosts, devices, level figures) as its tag, so
 * ranks given different files, or files that differ, fail init like different groups do. When the file names
 * hosts, ranks are placed by name after the bootstrap: rank r belongs to the server whose host is r's host name
 * (gethostname, as the bootstrap table carries it; a file's `node01` also matches a rank's `node01.example.com`),
 * the servers keep the file's order, and a server's ranks are its host's ranks in rank order. Every rank sees the
 * same table, so every rank reaches the same placement or the same error: a rank on a host the file does not name,
 * or a host running another number of ranks than its server holds. Without host names the servers take the ranks
 * in rank order. Devices are not used by this runtime (ranks are processes of the CPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "st_topo.h"

#define ST_LOG_GROUPS_CHARS 400 /* a debug line lists the groups up to about this many characters */

/* Explicit groups (STITCH_GROUPS, config->groups): rank r's key is the index of its group. */
static stitch_status_t st_placement_groups(st_placement *pl, const st_settings *s, int p, char *err, size_t errlen)
{
    char why[256];
    int ngroups = 0, *sizes = malloc(sizeof *sizes * (size_t)p);
    if (!sizes) {
        snprintf(err, errlen, "out of memory for the groups of %d ranks", p);
        return STITCH_ERR_NO_MEMORY;
    }
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
    pl->tag = (st_siphash(k, pl->key, sizeof *pl->key * (size_t)p) & ~2ull) | 1; /* low bits 01: never 0, which
                                                                                   * means "by host" */
    free(sizes);
    return STITCH_OK;
}

stitch_status_t st_placement_init(st_placement *pl, const st_settings *s, int p, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    pl->p = p;
    pl->key = calloc((size_t)p, sizeof *pl->key);
    if (!pl->key) {
        snprintf(err, errlen, "out of memory for the groups of %d ranks", p);
        return STITCH_ERR_NO_MEMORY;
    }
    if (s->topo) {
        stitch_status_t st = st_topology_load(s->topo_source, s->topo, p, &pl->topo, err, errlen);
        pl->tag = st_topology_hash(pl->topo) | 3; /* low bits 11: a topology */
        return st;
    }
    return s->groups ? st_placement_groups(pl, s, p, err, errlen) : STITCH_OK;
}

/* How rank i's entry says its groups are made, for the disagreement message. */
static void st_tag_text(const st_placement *pl, const st_settings *s, uint64_t tag, char *out, size_t len)
{
    if (tag == 0)
        snprintf(out, len, "groups by host (no STITCH_GROUPS or config->groups, no STITCH_TOPO or config->topo)");
    else if (tag == pl->tag && pl->topo)
        snprintf(out, len, "the topology from %s='%s'", s->topo_source, s->topo);
    else if (tag == pl->tag)
        snprintf(out, len, "groups from %s='%s'", s->groups_source, s->groups);
    else if ((tag & 3) == 3)
        snprintf(out, len, "a different topology (another STITCH_TOPO or config->topo, or a file that differs)");
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
                 "groups or topology on every rank, or none)", b->rank, mine, i, theirs);
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
    char list[ST_LOG_GROUPS_CHARS + 32], how[400];
    if (pl->topo)
        snprintf(how, sizeof how, "from %s='%s' (%d levels, %s)", s->topo_source, s->topo,
                 st_topology_nlevels(pl->topo), st_topology_has_hosts(pl->topo) ? "placed by host name"
                                                                               : "in rank order");
    else if (pl->given)
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

/* One server's host name, for the sorted index of st_place_hosts. */
typedef struct st_host_ent {
    const char *name;
    int server;
} st_host_ent;

static int st_host_cmp(const void *a, const void *b)
{
    return strcmp(((const st_host_ent *)a)->name, ((const st_host_ent *)b)->name);
}

/* The server of a rank on host `name`: its name, else its first component; -1 when the file has neither. */
static int st_host_find(const st_host_ent *ent, int n, const char *name)
{
    char shortname[64];
    st_host_ent key = {name, 0}, *e = bsearch(&key, ent, (size_t)n, sizeof *ent, st_host_cmp);
    const char *dot = strchr(name, '.');
    if (!e && dot && (size_t)(dot - name) < sizeof shortname) {
        memcpy(shortname, name, (size_t)(dot - name));
        shortname[dot - name] = '\0';
        key.name = shortname;
        e = bsearch(&key, ent, (size_t)n, sizeof *ent, st_host_cmp);
    }
    return e ? e->server : -1;
}

/* The topology's hosts, for a message: "node01, node02", cut short. */
static void st_hosts_text(const st_topology *t, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int g = 0; g < st_topology_layout(t)->ngroups[0] && n + 8 < len; g++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", g ? ", " : "", st_topology_host(t, g));
    if (n + 8 >= len)
        snprintf(out + (len > 8 ? len - 8 : 0), 8, ", ...");
}

/* rank_at[pos] (layout order) from the ranks' host names: server g's positions take its host's ranks in rank
 * order. STITCH_ERR_CONFIG naming the first rank whose host is not in the file, or the first server whose host
 * runs another number of ranks. */
static stitch_status_t st_place_hosts(const st_placement *pl, const st_settings *s, const st_boot *b,
                                      int32_t *rank_at, char *err, size_t errlen)
{
    const st_layout *l = st_topology_layout(pl->topo);
    int ns = l->ngroups[0], p = pl->p;
    st_host_ent *ent = malloc(sizeof *ent * (size_t)ns);
    int32_t *srv = malloc(sizeof *srv * (size_t)p), *next = calloc((size_t)ns + 1, sizeof *next);
    stitch_status_t st = ent && srv && next ? STITCH_OK : STITCH_ERR_NO_MEMORY;
    char hosts[300];
    for (int g = 0; st == STITCH_OK && g < ns; g++)
        ent[g] = (st_host_ent){st_topology_host(pl->topo, g), g};
    if (st == STITCH_OK)
        qsort(ent, (size_t)ns, sizeof *ent, st_host_cmp);
    for (int r = 0; st == STITCH_OK && r < p; r++) {
        if ((srv[r] = st_host_find(ent, ns, b->peers[r].hostname)) < 0) {
            st_hosts_text(pl->topo, hosts, sizeof hosts);
            snprintf(err, errlen, "%s='%s': rank %d runs on host '%s', which the topology does not name (its hosts: "
                     "%s)", s->topo_source, s->topo, r, b->peers[r].hostname, hosts);
            st = STITCH_ERR_CONFIG;
        } else {
            next[srv[r] + 1]++;
        }
    }
    for (int g = 0; st == STITCH_OK && g < ns; g++) {
        if (next[g + 1] != l->count[0][g]) {
            snprintf(err, errlen, "%s='%s': host '%s' runs %d rank%s of the communicator but the topology gives it "
                     "%d", s->topo_source, s->topo, st_topology_host(pl->topo, g), next[g + 1],
                     next[g + 1] == 1 ? "" : "s", l->count[0][g]);
            st = STITCH_ERR_CONFIG;
        }
        next[g + 1] += next[g]; /* now server g + 1's first position */
    }
    for (int r = 0; st == STITCH_OK && r < p; r++)
        rank_at[next[srv[r]]++] = r;
    if (st == STITCH_ERR_NO_MEMORY)
        snprintf(err, errlen, "out of memory placing %d ranks on %d hosts", p, ns);
    free(ent);
    free(srv);
    free(next);
    return st;
}

static stitch_status_t st_place_topo(const st_placement *pl, const st_settings *s, const st_boot *b,
                                     st_groups *groups, char *err, size_t errlen)
{
    int hosts = st_topology_has_hosts(pl->topo);
    int32_t *rank_at = hosts ? malloc(sizeof *rank_at * (size_t)pl->p) : NULL;
    stitch_status_t st = hosts && !rank_at ? STITCH_ERR_NO_MEMORY : STITCH_OK;
    if (st == STITCH_OK && hosts)
        st = st_place_hosts(pl, s, b, rank_at, err, errlen);
    if (st == STITCH_OK && st_topology_groups(pl->topo, rank_at, groups) != 0)
        st = STITCH_ERR_NO_MEMORY;
    if (st == STITCH_ERR_NO_MEMORY)
        snprintf(err, errlen, "out of memory for the topology of %d ranks", pl->p);
    free(rank_at);
    return st;
}

stitch_status_t st_placement_apply(st_placement *pl, const st_settings *s, const st_boot *b, st_groups *groups,
                                   char *err, size_t errlen)
{
    stitch_status_t st = st_check_tags(pl, s, b, err, errlen);
    if (st != STITCH_OK)
        return st;
    if (pl->topo) {
        if ((st = st_place_topo(pl, s, b, groups, err, errlen)) == STITCH_OK && st_debug())
            st_log_groups(pl, s, b, groups);
        return st;
    }
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
    st_topology_unref(pl->topo);
    pl->topo = NULL;
}
