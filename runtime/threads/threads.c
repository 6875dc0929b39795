/* threads.c - the threads backend: a communicator group whose ranks are threads of one process.
 *
 * stitch_comm_init_threads creates the job (what the p ranks share: slots, the abort object, the groups; job.h)
 * and p communicators at once, all or nothing. The groups come from the topology (STITCH_TOPO / config->topo:
 * every level of its layout, ranks in layout order; the topology is read once per job and every handle holds a
 * reference, topology.h) or from STITCH_GROUPS / config->groups (two levels). The configuration is resolved here
 * once (config.c reads the environment) and every algorithm name is checked against the communicator's registry
 * (the built-in catalogue and config->catalogues, registry.c) at this point, so a typo fails at init with the list
 * of valid names rather than at the first collective. Each handle holds one reference on the job;
 * the last stitch_comm_destroy frees it. Calls run on exec.c's engine: peers pull from each other's buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choose.h"
#include "comm.h"
#include "config.h"
#include "exec.h"
#include "groups.h"
#include "registry.h"
#include "p2p.h"
#include "split.h"
#include "topology.h"

static void st_threads_abort(stitch_comm_t *comm, const char *reason)
{
    st_job_abort(comm->job, reason);
}

static void st_threads_free(stitch_comm_t *comm)
{
    st_job_unref(comm->job);
    comm->job = NULL;
}

static const st_backend st_threads_backend = {st_exec, st_threads_abort, st_threads_free, 1, st_threads_split_offer,
                                               st_threads_split_join, st_threads_p2p,
                                               st_threads_p2p_wake, NULL, NULL};

static void st_set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

/* All p communicators or none: on failure the ones made so far are freed, then the job. The job takes `groups`;
 * each communicator takes a reference on `topo` (NULL: none). */
static stitch_status_t st_make_comms(int nranks, const st_settings *s, const st_choice *algos, const st_reg *reg,
                                     st_groups *groups, st_topology *topo, stitch_comm_t **comms)
{
    st_job *job = st_job_new(nranks);
    if (job) {
        job->groups = *groups, *groups = (st_groups){{0}, NULL};
        st_job_set_spin(job, s->spin_us);
    }
    stitch_comm_t **made = calloc((size_t)nranks, sizeof *made);
    int r = 0;
    for (; job && made && r < nranks; r++) {
        if (!(made[r] = st_comm_new(&st_threads_backend, r, nranks, s, algos, reg, topo)))
            break;
        made[r]->job = job;
        made[r]->abort = &job->abort;
        made[r]->groups = &job->groups;
    }
    if (job && made && r == nranks) {
        memcpy(comms, made, sizeof *made * (size_t)nranks);
        free(made);
        return STITCH_OK;
    }
    while (made && r-- > 0)
        st_comm_discard(made[r]);
    free(made);
    if (job)
        st_job_free(job);
    return STITCH_ERR_NO_MEMORY;
}

/* The job's topology and groups from the settings: the topology, read here once for the whole job (every level of
 * its layout; host names and devices are for process mode and not used here), else the groups spec, else none. */
static stitch_status_t st_threads_groups(const st_settings *s, int nranks, st_topology **topo, st_groups *g,
                                         char *why, size_t len)
{
    if (s->topo) {
        stitch_status_t st = st_topology_load(s->topo_source, s->topo, nranks, topo, why, len);
        if (st == STITCH_OK && st_topology_groups(*topo, NULL, g) != 0) {
            snprintf(why, len, "out of memory for the topology of %d ranks", nranks);
            st = STITCH_ERR_NO_MEMORY;
        }
        return st;
    }
    if (!s->groups)
        return STITCH_OK;
    char bad[400];
    int ngroups = 0, *sizes = malloc(sizeof *sizes * (size_t)nranks);
    stitch_status_t st = sizes ? st_parse_groups(s->groups, nranks, sizes, &ngroups, bad, sizeof bad)
                               : STITCH_ERR_NO_MEMORY;
    if (st == STITCH_ERR_CONFIG)
        snprintf(why, len, "%s=%s", s->groups_source, bad);
    else if (st == STITCH_OK && st_groups_uniform(g, nranks, ngroups, sizes) != 0)
        st = STITCH_ERR_NO_MEMORY;
    if (st == STITCH_ERR_NO_MEMORY)
        snprintf(why, len, "out of memory for the groups of %d ranks", nranks);
    free(sizes);
    return st;
}

stitch_status_t stitch_comm_init_threads(int nranks, const stitch_config_t *config, stitch_comm_t **comms,
                                         char *err, size_t errlen)
{
    char msg[2048];
    st_settings s;
    st_choice algos[STITCH_COLL_COUNT];
    if (!comms || nranks < 1 || nranks > ST_MAX_RANKS) {
        snprintf(msg, sizeof msg, "stitch_comm_init_threads: %s", !comms ? "comms is NULL"
                 : "nranks must be between 1 and 65536");
        st_set_err(err, errlen, msg);
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    char why[1900];
    st_reg *reg = NULL;
    st_groups groups = {{0}, NULL};
    st_topology *topo = NULL;
    stitch_status_t st = st_settings_load(config, &s, why, sizeof why);
    if (st == STITCH_OK)
        st = st_threads_groups(&s, nranks, &topo, &groups, why, sizeof why);
    if (st == STITCH_OK && (st = st_reg_new(config, s.algo_file, &reg, why, sizeof why)) == STITCH_OK &&
        (st = st_reg_verify(reg, nranks, st_groups_topo(&groups), why, sizeof why)) == STITCH_OK)
        st = st_resolve_algos(reg, &s, algos, why, sizeof why);
    if (st != STITCH_OK)
        snprintf(msg, sizeof msg, "stitch_comm_init_threads: %s", why);
    if (st == STITCH_OK && (st = st_make_comms(nranks, &s, algos, reg, &groups, topo, comms)) != STITCH_OK)
        snprintf(msg, sizeof msg, "stitch_comm_init_threads: out of memory creating %d communicators", nranks);
    st_groups_free(&groups);
    st_topology_unref(topo); /* the communicators hold theirs */
    st_reg_free(reg);
    if (st != STITCH_OK)
        st_set_err(err, errlen, msg);
    return st;
}

/* ---- stitch_comm_split (split.h) ----------------------------------------------------------------------------
 * The leader makes every member's handle at once, on a job of their own, and the blob carries the bundle; each
 * member takes its handle, and the last one frees the bundle. */
typedef struct st_bundle {
    _Atomic int left;
    int n;
    stitch_comm_t *comms[];
} st_bundle;

stitch_status_t st_threads_split_offer(stitch_comm_t *parent, st_split *sp, char *blob, char *err, size_t errlen)
{
    st_bundle *b = malloc(sizeof *b + sizeof *b->comms * (size_t)sp->n);
    if (!b || st_make_comms(sp->n, &parent->settings, parent->algo, sp->reg, &sp->groups, parent->topology,
                                b->comms) != STITCH_OK) {
        free(b);
        snprintf(err, errlen, "out of memory creating %d communicators", sp->n);
        return STITCH_ERR_NO_MEMORY;
    }
    atomic_init(&b->left, sp->n);
    b->n = sp->n;
    memcpy(blob, &b, sizeof b);
    return STITCH_OK;
}

stitch_status_t st_threads_split_join(stitch_comm_t *parent, st_split *sp, const char *blob, stitch_comm_t **out,
                                      char *err, size_t errlen)
{
    st_bundle *b;
    (void)parent, (void)err, (void)errlen;
    memcpy(&b, blob, sizeof b);
    *out = b->comms[sp->newrank];
    if (atomic_fetch_sub(&b->left, 1) == 1)
        free(b);
    return STITCH_OK;
}
