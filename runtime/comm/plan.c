/* plan.c - a communicator's cached, checked plans: an algorithm's entry for a root is built on first use (its
 * schedule, this rank's plan), checked once as it enters the cache (every unit written before it is read, the
 * peers listed, the lazy-input tables), and kept for as long as the communicator lives. The call model (call.c)
 * asks for an entry; the communicator (comm.c) picks the algorithm and reports the errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"
#include "proof.h"
#include "registry.h"

/* Ranks whose program this process has run to build plans, over all its communicators (STITCH_DEBUG shows it):
 * p per whole schedule, 1 + the named senders per own plan. */
static long long st_ranks_instantiated;

static stitch_status_t st_entry_build(stitch_comm_t *comm, const st_algo *algo, st_entry *e, const char *fn)
{
    st_err err;
    char why[1536];
    const st_topo *topo = st_groups_topo(comm->groups);
    const st_catalogue *cat = st_reg_cat(comm->reg, algo);
    st_inst in = st_comm_inst_l1(comm, algo, e->root, e->level1);
    /* nothing runs unproved: an instantiation the catalogue's verification did not cover is verified first */
    stitch_status_t proved = st_proof_check(cat, algo, &in, st_reg_exact(comm->reg, cat), why, sizeof why);
    if (proved != STITCH_OK)
        return st_comm_fail(comm, proved, "%s: algorithm '%s' of %s was not proved for %d ranks (root %d) and fails "
                            "verification for them, so it does not run: %s", fn, algo->name,
                            stitch_coll_name((stitch_coll_t)algo->coll), comm->p, e->root, why);
    /* A process rank builds only its own part when the algorithm names its senders (`from`, st_sched_build_rank):
     * O(its transfers) instead of every rank's. The threads engine keeps the whole schedule (st_backend). */
    int runs = comm->p, rc = 1;
    if (!comm->be->whole_schedule && !comm->whole_schedule)
        rc = st_sched_build_rank(cat, algo, &in, comm->rank, &e->sched, &runs, &err);
    if (rc == 1)
        runs = comm->p, rc = st_sched_build_ex(cat, algo, &in, &e->sched, &err);
    long long total = __atomic_add_fetch(&st_ranks_instantiated, runs, __ATOMIC_RELAXED);
    if (rc == 0 && st_debug()) { /* every call of this algorithm (and root) runs this plan, with this ratio */
        char split[200] = "", ahc[120] = "";
        if (in.split_set)
            split[0] = ';', split[1] = ' ', st_comm_split_text(comm, algo, topo, split + 2, sizeof split - 2);
        if (cat == &st_builtin_catalogue && (strncmp(algo->name, "ahc", 3) == 0 || strcmp(algo->name, "hier") == 0) &&
            topo && topo->ngroups > 1) /* the algorithms that may run AHC: its inner ones */
            memcpy(ahc, "; AHC ", 6), st_comm_ahc_text(comm, (stitch_coll_t)algo->coll, ahc + 6, sizeof ahc - 6);
        fprintf(stderr, "stitch: rank %d of %d: plan of %s%s%s%s %s (root %d): %s, %d ranks instantiated (%lld so far)%s%s\n",
                comm->rank, comm->p, algo->name, e->level1 ? " (level1 " : "", e->level1 ? e->level1 : "",
                e->level1 ? ")" : "", stitch_coll_name((stitch_coll_t)algo->coll), e->root,
                e->sched.partial ? "own plan (from)" : "whole schedule", runs, total, split, ahc);
    }
    if (rc != 0)
        return st_comm_fail(comm, STITCH_ERR_UNSUPPORTED, "%s: cannot instantiate algorithm '%s' of %s for %d ranks "
                            "(root %d, %d groups): %s", fn, algo->name, stitch_coll_name((stitch_coll_t)algo->coll),
                            comm->p, e->root, topo ? topo->ngroups : 1, err.msg);
    if (st_plan_build(&e->sched, comm->rank, &e->plan) != 0) {
        st_sched_free(&e->sched);
        return st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: out of memory building rank %d's plan of '%s'", fn,
                            comm->rank, algo->name);
    }
    stitch_status_t st = st_exec_prepare_entry(e, comm->rank, why, sizeof why);
    if (st != STITCH_OK) {
        st_plan_free(&e->plan);
        st_sched_free(&e->sched);
        return st_comm_fail(comm, st, "%s: algorithm '%s' for %d ranks cannot run: %s", fn, algo->name, comm->p, why);
    }
    e->ready = 1;
    return STITCH_OK;
}

/* HCCL's Pipeline restrictions (spec 7, 14.1): its reduce_scatter and all_reduce (SDMA inline reduce) take no int64
 * and no prod, and it does not run under HCCL_DETERMINISTIC (strict never gets here: mesh_strict runs). Its
 * all_gather and all_to_all(v) reduce nothing and run on any dtype, as in HCCL. What the built-in pipeline may not
 * run, or NULL. */
static const char *st_pipeline_refuses(const stitch_comm_t *comm, const st_algo *algo, const st_args *a)
{
    if (strcmp(algo->name, "pipeline") != 0 || st_reg_cat(comm->reg, algo) != &st_builtin_catalogue ||
        (a->coll != STITCH_ALL_REDUCE && a->coll != STITCH_REDUCE_SCATTER))
        return NULL;
    return a->dtype == STITCH_INT64 ? "int64 data"
         : a->op == STITCH_PROD ? "the prod reduction"
         : comm->settings.deterministic ? "HCCL_DETERMINISTIC=true" : NULL;
}

/* The algorithm's entry for `root`, found in its list or built. Rooted collectives get one entry per root even
 * when the schedule does not read `root`: where a rank keeps its blocks (its input, output or scratch) depends on
 * the root, so the plan must be checked for the root it runs with. A list holds at most p entries, for as long as
 * the communicator lives.
 * The answer depends on the collective's choice (comm->algo), the count, dtype, op and root, and on the settings,
 * fixed for the communicator's life; so a call that asks what the collective's last call asked, under the same
 * choice, gets the last answer (comm->memo): auto's look-up, the pipeline's refusals and the walk of the list cost
 * ~250 instructions, a sixth of an 8-byte all_reduce's on shm (callgrind, docs/performance.md). Entries live as
 * long as the communicator. */
static stitch_status_t st_entry_find(stitch_comm_t *comm, const st_args *a, st_entry **out);

stitch_status_t st_comm_entry_for(stitch_comm_t *comm, const st_args *a, st_entry **out)
{
    struct st_entry_memo *mm = &comm->memo[a->coll];
    const st_choice *ch = &comm->algo[a->coll];
    if (mm->e && mm->count == a->count && mm->dtype == (int)a->dtype && mm->op == (int)a->op &&
        mm->root == a->root && mm->choice.algo == ch->algo && mm->choice.is_auto == ch->is_auto) {
        *out = mm->e;
        return STITCH_OK;
    }
    stitch_status_t st = st_entry_find(comm, a, out);
    *mm = (struct st_entry_memo){st == STITCH_OK ? *out : NULL, *ch, a->count, (int)a->dtype, (int)a->op, a->root};
    return st;
}

static stitch_status_t st_entry_find(stitch_comm_t *comm, const st_args *a, st_entry **out)
{
    const char *level1;
    const st_algo *algo = st_comm_pick_l1(comm, a->coll, a->count, a->dtype, &level1);
    const char *fn = a->fn;
    int root = a->root;
    if (!algo)
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: the catalogue has no algorithm for %s", fn,
                             stitch_coll_name(a->coll));
    /* Forced (STITCH_ALGO, config->algo), pipeline runs whatever it is given: the restrictions are those of HCCL's
     * hardware (the SDMA inline reduce), not of stitch's engines, which reduce every dtype and op in a fixed order. */
    const char *no = comm->algo[a->coll].is_auto ? st_pipeline_refuses(comm, algo, a) : NULL;
    if (no) { /* auto (a policy's table, or HCCL_ALGO's level1): HCCL's fallback for what it does not support */
        const st_algo *h = st_reg_find(comm->reg, "hier", a->coll);
        if (st_debug() && comm->rank == 0 && h && !comm->cache[st_reg_index(comm->reg, h)].ready) /* once */
            fprintf(stderr, "stitch: rank 0: %s: pipeline does not take %s (spec 7, 14.1): %s runs\n",
                    stitch_coll_name(a->coll), no, h ? "hier" : "the collective's fallback");
        algo = h ? h : comm->algo[a->coll].algo, level1 = NULL;
        if (!algo || st_pipeline_refuses(comm, algo, a))
            return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: pipeline does not take %s, and %s has no other "
                                 "algorithm here", fn, no, stitch_coll_name(a->coll));
    }
    st_entry *head = &comm->cache[st_reg_index(comm->reg, algo)], *e = head;
    root = st_coll_rooted(algo->coll) ? root : 0;
    while (e->ready && !(e->root == root && e->level1 == level1) && e->next)
        e = e->next;
    if (e->ready && e->root == root && e->level1 == level1) {
        *out = e;
        return STITCH_OK;
    }
    if (head->ready) { /* a new entry after the head */
        if (!(e = calloc(1, sizeof *e)))
            return st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: out of memory caching a schedule", fn);
        e->next = head->next, head->next = e;
    }
    e->root = root, e->level1 = level1;
    stitch_status_t st = st_entry_build(comm, algo, e, fn);
    if (st != STITCH_OK && e != head)
        head->next = e->next, free(e);
    *out = st == STITCH_OK ? e : head;
    return st;
}

/* ---- checking a plan once, when it enters the cache ---------------------------------------------------- */

static stitch_status_t st_collect_peers(st_entry *e, int rank)
{
    const st_sched *s = &e->sched;
    unsigned char *seen = calloc((size_t)s->p, 1);
    e->peers = malloc(sizeof *e->peers * (size_t)s->p);
    if (!seen || !e->peers) {
        free(seen);
        free(e->peers);
        e->peers = NULL;
        return STITCH_ERR_NO_MEMORY;
    }
    e->npeers = 0;
    for (int i = 0; i < s->nxfers; i++) {
        const st_xfer *x = &s->xfers[i];
        int q = x->src == rank ? x->dst : x->dst == rank ? x->src : rank;
        if (q != rank && !seen[q])
            seen[q] = 1, e->peers[e->npeers++] = q;
    }
    free(seen);
    return STITCH_OK;
}

/* fw[u] = the first step at which rank q's vector unit u is written (nsteps when never): by a peer, or by q's own
 * `at` transfers. */
static void st_first_writes(const st_sched *s, int q, int32_t *fw)
{
    for (int u = 0; u < s->nunits; u++)
        fw[u] = s->nsteps;
    for (int i = 0; i < s->nxfers; i++) {
        const st_xfer *x = &s->xfers[i];
        for (int32_t r = x->drun0; x->dst == q && st_xfer_writes(x) && r < x->drun0 + x->dnruns; r++)
            for (int32_t u = s->runs[r].start; u < s->runs[r].start + s->runs[r].len; u++)
                if (u < s->nunits && x->step < fw[u])
                    fw[u] = x->step;
    }
}

/* For every source unit of every transfer into `rank`: is the source's unit still its input at that step? A
 * scratch unit never is: it starts empty and is only read after being written. */
static int st_fresh_tables(st_entry *e)
{
    const st_sched *s = &e->sched;
    const st_plan *pl = &e->plan;
    int32_t nrecv = pl->recv_first[pl->nsteps], total = 0, q = -1;
    for (int32_t i = 0; i < nrecv; i++)
        total += s->xfers[pl->recvs[i]].nunits;
    int32_t *fw = malloc(sizeof *fw * ((size_t)s->nunits + 1));
    e->src_fresh_at = malloc(sizeof *e->src_fresh_at * ((size_t)nrecv + 1));
    e->src_fresh = malloc((size_t)total + 1);
    if (!fw || !e->src_fresh_at || !e->src_fresh) {
        free(fw);
        return 0;
    }
    for (int32_t i = 0, j = 0; i < nrecv; i++) {
        const st_xfer *x = &s->xfers[pl->recvs[i]];
        if (x->src != q)
            st_first_writes(s, q = x->src, fw);
        e->src_fresh_at[i] = j;
        for (int32_t r = x->run0; r < x->run0 + x->nruns; r++)
            for (int32_t u = s->runs[r].start; u < s->runs[r].start + s->runs[r].len; u++)
                e->src_fresh[j++] = u < s->nunits && x->step < fw[u];
    }
    free(fw);
    return 1;
}

/* What the executors rely on (st_sched.h: st_rank_check, shared with the verifier, so that `stitchc verify` rejects
 * exactly what is refused here). The error names the step, the rank, the unit and the send's line. */
static int st_check_plan(st_entry *e, int rank, unsigned char *marks, char *err, size_t errlen)
{
    const st_plan *pl = &e->plan;
    st_err why;
    if (st_rank_check(&e->sched, rank, pl->sends, pl->send_first[pl->nsteps], pl->recvs, pl->recv_first[pl->nsteps],
                      marks, &e->needs_scratch, &why) == 0)
        return 1;
    if (why.line > 0)
        snprintf(err, errlen, "%s (%s:%d:%d)", why.msg, e->sched.cat->file, why.line, why.col);
    else
        snprintf(err, errlen, "%s", why.msg);
    return 0;
}

stitch_status_t st_exec_prepare_entry(st_entry *e, int rank, char *err, size_t errlen)
{
    unsigned char *marks = calloc((size_t)e->sched.nunits + (size_t)e->sched.nscratch + 1, 1);
    if (!marks) {
        snprintf(err, errlen, "out of memory checking the plan");
        return STITCH_ERR_NO_MEMORY;
    }
    int ok = st_check_plan(e, rank, marks, err, errlen);
    free(marks);
    if (!ok)
        return STITCH_ERR_UNSUPPORTED;
    /* the geometry table shares fresh's allocation, so whoever frees an entry's tables frees it too */
    size_t nfresh = ((size_t)e->sched.nunits + 1 + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t);
    e->fresh = malloc(nfresh + sizeof *e->geo * 2 * (size_t)e->sched.nunits);
    e->geo = e->fresh ? (size_t *)(void *)(e->fresh + nfresh) : NULL;
    if (!e->fresh || !st_fresh_tables(e) || st_collect_peers(e, rank) != STITCH_OK) {
        free(e->fresh);
        free(e->src_fresh);
        free(e->src_fresh_at);
        e->fresh = e->src_fresh = NULL;
        e->geo = NULL;
        e->src_fresh_at = NULL;
        snprintf(err, errlen, "out of memory listing the peers");
        return STITCH_ERR_NO_MEMORY;
    }
    return STITCH_OK;
}
