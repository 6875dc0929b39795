/* transport.c - the table of transports and the one function that chooses among them (transport.h).
 *
 * Preference order is table order, as in NCCL's ncclTransports: the first entry that can connect a pair connects
 * it. shm before tcp because a copy through a shared ring beats the kernel's loopback (docs/performance.md); verbs
 * goes between them (tcp reaches every pair, so it stays last, the one that always can). verbs is in the table only
 * in builds that found <infiniband/verbs.h> (STITCH_HAVE_VERBS); its library is looked for at run time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "transport.h"
#ifdef STITCH_HAVE_VERBS
#include "tp_verbs.h"
#endif

extern const st_transport st_transport_shm, st_transport_tcp;
#ifdef STITCH_HAVE_VERBS
extern const st_transport st_transport_verbs;
#endif

const st_transport *const st_transports[] = {&st_transport_shm,
#ifdef STITCH_HAVE_VERBS
                                             &st_transport_verbs,
#endif
                                             &st_transport_tcp};
const int st_ntransports = (int)(sizeof st_transports / sizeof *st_transports);
_Static_assert(sizeof st_transports / sizeof *st_transports <= ST_TP_MAX, "raise ST_TP_MAX (transport.h)");

void stitch_mr_invalidate(const void *ptr, size_t bytes)
{
#ifdef STITCH_HAVE_VERBS
    st_tp_verbs_invalidate(ptr, bytes);
#else
    (void)ptr, (void)bytes; /* no verbs in this build: nothing is ever registered */
#endif
}

int st_tp_find(const char *name)
{
    for (int i = 0; i < st_ntransports; i++)
        if (strcmp(st_transports[i]->name, name) == 0)
            return i;
    return -1;
}

stitch_status_t st_tp_settings_check(st_settings *s, char *err, size_t errlen)
{
    const char *v = s->transport_name ? s->transport_name : "";
    char names[128];
    s->transport = ST_TP_AUTO;
    s->transport_name = NULL; /* equal settings compare equal whatever text gave them */
    if (*v && strcmp(v, "auto") != 0 && (s->transport = st_tp_find(v)) < 0) {
        st_tp_names(names, sizeof names);
        snprintf(err, errlen, "STITCH_TRANSPORT='%s': expected auto, %s", v, names);
        return STITCH_ERR_CONFIG;
    }
    for (int i = 0; i < st_ntransports; i++)
        if (st_transports[i]->check && st_transports[i]->check(s, err, errlen) != STITCH_OK)
            return STITCH_ERR_CONFIG;
    return STITCH_OK;
}

void st_tp_names(char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < st_ntransports && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", i == 0 ? "" : i + 1 < st_ntransports ? ", " : " or ",
                               st_transports[i]->name);
}

int st_tp_select(const st_peer_info *peers, int me, int peer, int force, char *err, size_t errlen)
{
    const st_peer_info *a = &peers[me], *b = &peers[peer];
    char why[160], all[512] = "";
    if (force >= 0) {
        if (st_transports[force]->can_connect(a, b, why, sizeof why))
            return force;
        snprintf(err, errlen, "STITCH_TRANSPORT=%s cannot connect rank %d (pid %u on %s) and rank %d (pid %u on %s): "
                 "%s", st_transports[force]->name, me, a->pid, a->hostname, peer, b->pid, b->hostname, why);
        return -1;
    }
    for (int i = 0; i < st_ntransports; i++) {
        if (st_transports[i]->can_connect(a, b, why, sizeof why))
            return i;
        size_t at = strlen(all);
        snprintf(all + at, sizeof all - at, "%s%s: %s", at ? "; " : "", st_transports[i]->name, why);
    }
    snprintf(err, errlen, "no transport can connect rank %d (pid %u on %s) and rank %d (pid %u on %s): %s", me,
             a->pid, a->hostname, peer, b->pid, b->hostname, all);
    return -1;
}

int st_tp_need_data(const st_boot *b, int peer, void *arg)
{
    const st_settings *s = arg;
    char why[8];
    int t = st_tp_select(b->peers, b->rank, peer, s->transport, why, sizeof why);
    return t >= 0 && st_transports[t]->data_socket;
}

int st_host_ranks(const st_boot *b)
{
    int n = 0;
    for (int i = 0; i < b->size; i++)
        n += b->peers[i].host == b->peers[b->rank].host;
    return n;
}

/* Every peer's entry, counted per entry and per way of waking me. */
static stitch_status_t st_links_choose(st_links *l, char *err, size_t errlen)
{
    const st_boot *b = l->boot;
    char why[700];
    if (!(l->use = malloc((size_t)b->size * sizeof *l->use))) {
        snprintf(err, errlen, "rank %d: out of memory", b->rank);
        return STITCH_ERR_NO_MEMORY;
    }
    for (int j = 0; j < b->size; j++) {
        l->use[j] = j == b->rank ? -1 : st_tp_select(b->peers, b->rank, j, l->s->transport, why, sizeof why);
        if (j != b->rank && l->use[j] < 0) {
            snprintf(err, errlen, "rank %d: %s", b->rank, why);
            return STITCH_ERR_CONFIG;
        }
        if (j != b->rank) {
            l->count[l->use[j]]++;
            *(st_transports[l->use[j]]->wake == ST_WAKE_BELL ? &l->by_bell : &l->by_fd) += 1;
        }
    }
    return STITCH_OK;
}

stitch_status_t st_links_open(st_links *l, st_boot *b, const st_settings *s, int timeout_ms, st_tp **tp, char *err,
                              size_t errlen)
{
    l->boot = b, l->s = s, l->timeout_ms = timeout_ms;
    stitch_status_t st = st_links_choose(l, err, errlen);
    for (int i = 0; i < st_ntransports && st == STITCH_OK; i++)
        st = st_transports[i]->setup(l, i, err, errlen);
    for (int j = 0; j < b->size && st == STITCH_OK; j++)
        if (j != b->rank)
            st = st_transports[l->use[j]]->connect(l, l->use[j], j, &tp[j], err, errlen);
    return st;
}

void st_links_close(st_links *l)
{
    for (int i = 0; i < st_ntransports; i++)
        st_transports[i]->teardown(l, i);
    free(l->use);
    l->use = NULL;
}

void st_links_describe(const st_links *l, char *counts, size_t clen, char *notes, size_t nlen)
{
    size_t c = 0, n = 0;
    counts[0] = notes[0] = '\0';
    for (int i = 0; i < st_ntransports; i++) {
        /* shm and tcp, first and last, are always said; one between (verbs) only when it connects a peer, so a
         * job without RDMA is summed up as before ("1 peers over shm, 3 over tcp", which tests/netns looks for) */
        int said = i == 0 || i == st_ntransports - 1 || l->count[i] > 0;
        if (c < clen && said)
            c += (size_t)snprintf(counts + c, clen - c, i ? ", %d over %s" : "%d peers over %s", l->count[i],
                                  st_transports[i]->name);
        if (l->note[i][0] && n < nlen)
            n += (size_t)snprintf(notes + n, nlen - n, "; %s", l->note[i]);
    }
}
