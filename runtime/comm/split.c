/* split.c - stitch_comm_split, stitch_comm_dup and stitch_barrier, for every backend (split.h says how).
 *
 * Everything the ranks must agree on travels in the parent's own collectives, so a rank that is missing, or calls
 * something else, is caught by their checks (fingerprint mismatch, or the timeout naming the rank behind), and the
 * message only gains the prefix that says which call it was. The new topology is computed by every member from
 * the parent's, which every member holds alike, so nothing about it travels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "request.h"
#include "split.h"
#include "st_topo.h"

/* The blob a leader hands its members: its status first, so that a leader's failure reaches them. */
typedef struct st_blob {
    int32_t status;
    int32_t pad;
    char data[ST_SPLIT_BLOB];
} st_blob;

/* A parent collective failed: keep its message (it names the ranks), prefixed with the call it was part of. */
static stitch_status_t st_split_wrap(stitch_comm_t *comm, stitch_status_t st, const char *what)
{
    char msg[sizeof comm->last_error];
    snprintf(msg, sizeof msg, "%s", stitch_comm_last_error(comm));
    return st_comm_error(comm, st, "stitch_comm_split: %s (every rank of the communicator must call "
                         "stitch_comm_split at the same point): %s", what, msg);
}

/* ---- the members and their order ------------------------------------------------------------------------ */

static _Thread_local const int32_t *st_ck; /* the (color, key) pairs st_by_key compares by (qsort has no context) */

static int st_by_key(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    int32_t ka = st_ck[2 * a + 1], kb = st_ck[2 * b + 1];
    return ka != kb ? (ka < kb ? -1 : 1) : (a > b) - (a < b);
}

static int st_members(st_split *sp, const int32_t *ck, int p, int me)
{
    sp->members = malloc(sizeof *sp->members * (size_t)p);
    if (!sp->members)
        return -1;
    sp->n = 0;
    for (int r = 0; r < p; r++)
        if (ck[2 * r] == sp->color)
            sp->members[sp->n++] = r;
    st_ck = ck;
    qsort(sp->members, (size_t)sp->n, sizeof *sp->members, st_by_key);
    for (int i = 0; i < sp->n; i++)
        if (sp->members[i] == me)
            sp->newrank = i;
    return 0;
}

/* ---- the parent's topology restricted to the members ----------------------------------------------------- */

typedef struct st_restrict {
    const st_topo *t;
    int L;                 /* the parent's levels */
    const int32_t *newof;  /* per parent rank: its new rank, -1 when not a member */
    st_layout lay;
    int32_t *rank_at;      /* new ranks in the layout's order */
    int npos;
    char why[160];
} st_restrict;

static int st_int_cmp(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The parent group of level-k group g at level k + 1 (the outermost level is one group). */
static int st_parent_of(const st_restrict *r, int k, int g)
{
    if (k + 1 >= r->L - 1)
        return 0;
    st_topo_level lv = st_topo_level_of(r->t, k), up = st_topo_level_of(r->t, k + 1);
    return up.group_of[lv.members[lv.first[g]]];
}

/* Emit level-k group g with its members that stay; returns 1 when it keeps any, 0 when not, -1 on error. */
static int st_emit(st_restrict *r, int k, int g)
{
    if (k == 0) {
        st_topo_level lv = st_topo_level_of(r->t, 0);
        int c = 0, at = r->npos;
        for (int i = lv.first[g]; i < lv.first[g + 1]; i++)
            if (r->newof[lv.members[i]] >= 0)
                r->rank_at[r->npos++] = r->newof[lv.members[i]], c++;
        qsort(r->rank_at + at, (size_t)c, sizeof *r->rank_at, st_int_cmp); /* a server's members in new rank order */
        return c == 0 ? 0 : st_layout_leaf(&r->lay, r->L - 1, c, r->why, sizeof r->why) ? -1 : 1;
    }
    st_topo_level below = st_topo_level_of(r->t, k - 1);
    int m = 0;
    for (int h = 0; h < below.ngroups; h++) {
        if (st_parent_of(r, k - 1, h) != g)
            continue;
        int rc = st_emit(r, k - 1, h);
        if (rc < 0)
            return -1;
        m += rc;
    }
    return m == 0 ? 0 : st_layout_close(&r->lay, r->L - 1 - k, m, r->why, sizeof r->why) ? -1 : 1;
}

/* sp->groups: the parent's levels, each group keeping the members that stay (empty ones dropped). */
static stitch_status_t st_restrict_topo(stitch_comm_t *comm, st_split *sp)
{
    const st_topo *t = st_groups_topo(comm->groups);
    int L = st_topo_nlevels(t);
    memset(&sp->groups, 0, sizeof sp->groups);
    if (!t || L < 2)
        return STITCH_OK;
    st_restrict r = {.t = t, .L = L};
    int32_t *newof = malloc(sizeof *newof * (size_t)comm->p);
    r.rank_at = malloc(sizeof *r.rank_at * (size_t)sp->n);
    if (!newof || !r.rank_at) {
        free(newof), free(r.rank_at);
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_comm_split: out of memory");
    }
    for (int q = 0; q < comm->p; q++)
        newof[q] = -1;
    for (int i = 0; i < sp->n; i++)
        newof[sp->members[i]] = i;
    r.newof = newof;
    int rc = st_emit(&r, L - 1, 0);
    stitch_status_t st = STITCH_OK;
    if (rc < 0 || st_groups_layout(&sp->groups, &r.lay, r.rank_at) != 0)
        st = st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_comm_split: restricting the topology to %d ranks: %s",
                           sp->n, rc < 0 ? r.why : "out of memory");
    st_layout_free(&r.lay);
    free(newof), free(r.rank_at);
    return st;
}

/* ---- the call ------------------------------------------------------------------------------------------- */

static void st_split_free(st_split *sp)
{
    free(sp->members);
    st_groups_free(&sp->groups);
    st_reg_free(sp->reg);
}

/* The leader's part: verify the catalogues for the new shape and offer; its status and message go in the blob. */
static void st_offer(stitch_comm_t *comm, st_split *sp, st_blob *mine)
{
    char err[ST_SPLIT_BLOB];
    stitch_status_t st = comm->be->split_offer(comm, sp, mine->data, err, sizeof err);
    mine->status = st;
    if (st != STITCH_OK)
        memcpy(mine->data, err, sizeof err);
}

/* A member's part, once every leader's blob is here. */
static stitch_status_t st_join(stitch_comm_t *comm, st_split *sp, const st_blob *lead, stitch_comm_t **out)
{
    char err[1024];
    if (lead->status != STITCH_OK)
        return st_comm_error(comm, (stitch_status_t)lead->status, "stitch_comm_split: rank %d (the new rank 0 of "
                             "color %d) could not create the communicator: %.*s", sp->members[0], sp->color,
                             ST_SPLIT_BLOB, lead->data);
    stitch_status_t st = comm->be->split_join(comm, sp, lead->data, out, err, sizeof err);
    if (st != STITCH_OK)
        return st_comm_error(comm, st, "stitch_comm_split: rank %d of color %d (new rank %d of %d): %s", comm->rank,
                             sp->color, sp->newrank, sp->n, err);
    return STITCH_OK;
}

/* The new communicator's shape, and its catalogues verified for it (a catalogue compiled at run time was
 * verified for the parent's shape only). */
static stitch_status_t st_plan_split(stitch_comm_t *comm, st_split *sp, const int32_t *ck)
{
    char why[1024];
    stitch_status_t st;
    if (st_members(sp, ck, comm->p, comm->rank) != 0)
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_comm_split: out of memory");
    if ((st = st_restrict_topo(comm, sp)) != STITCH_OK)
        return st;
    if (!(sp->reg = st_reg_dup(comm->reg)))
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_comm_split: out of memory");
    if ((st = st_reg_verify(sp->reg, sp->n, st_groups_topo(&sp->groups), why, sizeof why)) != STITCH_OK)
        return st_comm_error(comm, st, "stitch_comm_split: color %d (%d ranks): %s", sp->color, sp->n, why);
    return STITCH_OK;
}

static stitch_status_t st_split_run(stitch_comm_t *comm, int color, int key, stitch_comm_t **out)
{
    int p = comm->p;
    int32_t pair[2] = {color < 0 ? -1 : color, key};
    int32_t *ck = malloc(sizeof *ck * 2 * (size_t)p);
    st_blob *blobs = malloc(sizeof *blobs * (size_t)p), mine;
    if (!ck || !blobs) {
        free(ck), free(blobs);
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_comm_split: out of memory for %d ranks", p);
    }
    st_split sp = {.color = pair[0]};
    stitch_status_t st = stitch_all_gather(pair, ck, 2, STITCH_INT32, comm);
    if (st != STITCH_OK)
        st = st_split_wrap(comm, st, "exchanging colors and keys failed");
    memset(&mine, 0, sizeof mine);
    /* a member's own failure to plan still takes part in the exchange below, so no peer waits for it; the leader
     * passes it on in its blob */
    stitch_status_t planned = st;
    if (st == STITCH_OK && sp.color >= 0 && (planned = st_plan_split(comm, &sp, ck)) == STITCH_OK &&
        sp.newrank == 0)
        st_offer(comm, &sp, &mine);
    else if (planned != STITCH_OK && sp.newrank == 0) {
        mine.status = planned;
        snprintf(mine.data, sizeof mine.data, "%s", stitch_comm_last_error(comm));
    }
    if (st == STITCH_OK && (st = stitch_all_gather(&mine, blobs, sizeof mine, STITCH_UINT8, comm)) != STITCH_OK)
        st = st_split_wrap(comm, st, "handing out the new communicators failed");
    if (st == STITCH_OK && sp.color >= 0)
        st = planned != STITCH_OK ? planned : st_join(comm, &sp, &blobs[sp.members[0]], out);
    st_split_free(&sp);
    free(ck), free(blobs);
    return st;
}

stitch_status_t stitch_comm_split(stitch_comm_t *comm, int color, int key, stitch_comm_t **newcomm)
{
    if (!st_comm_live(comm))
        return comm ? STITCH_ERR_INVALID_USAGE : STITCH_ERR_INVALID_ARGUMENT;
    st_nb_drain(comm); /* queued behind the pending non-blocking calls, before writing the last error */
    if (!newcomm) /* an argument error tells the peers at once, as a collective's does (api.c) */
        return st_comm_fail(comm, STITCH_ERR_INVALID_ARGUMENT, "stitch_comm_split: newcomm is NULL");
    *newcomm = NULL;
    if (!comm->be->split_offer || !comm->be->split_join) /* device communicators: every rank refuses alike */
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "stitch_comm_split: this communicator's backend cannot "
                             "split (device communicators: make another with stitch_comm_init_devices)");
    return st_split_run(comm, color, key, newcomm);
}

stitch_status_t stitch_comm_dup(stitch_comm_t *comm, stitch_comm_t **newcomm)
{
    return stitch_comm_split(comm, 0, st_comm_live(comm) ? comm->rank : 0, newcomm);
}

stitch_status_t stitch_barrier(stitch_comm_t *comm)
{
    unsigned char one = 1, got = 0;
    return stitch_all_reduce(&one, &got, 1, STITCH_UINT8, STITCH_MAX, comm);
}
