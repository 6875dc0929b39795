/* call.c - the call model both executors run: one collective call as blocks, units, segments and pairs.
 *
 * The threads executor (exec.c) and the message executor (exec_msg.c) are two progress engines over this model;
 * what a call is does not depend on how its bytes travel. Here: the call's arguments (st_args) and fingerprint,
 * its segments and scratch slot length, and the check a plan passes once, when it enters a communicator's cache
 * (st_exec_prepare_entry: st_rank_check, the same check `stitchc verify` runs, then the tables the engines use:
 * the peers, and which source units are still their owner's input at each transfer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"

int st_coll_reduces(stitch_coll_t coll)
{
    return coll == STITCH_ALL_REDUCE || coll == STITCH_REDUCE_SCATTER || coll == STITCH_REDUCE;
}

void st_call_segments(const st_args *a, size_t segment_bytes, int nblocks, int nsteps, size_t *seg, size_t *nseg)
{
    size_t per_block = segment_bytes / ((size_t)nblocks * stitch_dtype_size(a->dtype));
    if (per_block == 0)
        per_block = 1;
    *seg = a->count, *nseg = 1;
    if (nsteps > 0 && a->count > per_block && a->coll != STITCH_ALL_TO_ALL_V) {
        *seg = per_block;
        *nseg = (a->count + per_block - 1) / per_block;
    }
}

/* Elements of the largest unit of segment k: the size of a scratch unit's slot in that segment. */
size_t st_call_slot_len(const st_args *a, size_t seg, int units_per_block, size_t k)
{
    size_t n = a->count - k * seg;
    if (n > seg)
        n = seg;
    return (n + (size_t)units_per_block - 1) / (size_t)units_per_block;
}

/* ---- fingerprints -------------------------------------------------------------------------------------- */

/* Text of field `i` of a fingerprint; 0 past the last field. */
static int st_fp_field(const st_fingerprint *f, int i, char *buf, size_t len)
{
    switch (i) {
    case 0: snprintf(buf, len, "call number %llu", (unsigned long long)f->seq); return 1;
    case 1: snprintf(buf, len, "collective %s", stitch_coll_name((stitch_coll_t)f->coll)); return 1;
    case 2: snprintf(buf, len, "count %zu", f->count); return 1;
    case 3: snprintf(buf, len, "dtype %s", stitch_dtype_name((stitch_dtype_t)f->dtype)); return 1;
    case 4: snprintf(buf, len, "op %s", f->op < 0 ? "none" : stitch_op_name((stitch_op_t)f->op)); return 1;
    case 5:
        if (f->root < 0)
            snprintf(buf, len, "no root");
        else
            snprintf(buf, len, "root %d", (int)f->root);
        return 1;
    case 6: /* last: auto's choice follows the count */
        snprintf(buf, len, "algorithm %s", f->algo ? f->algo->name : "?");
        return 1;
    default: return 0;
    }
}

int st_fp_differ(const st_fingerprint *mine, const st_fingerprint *theirs, char *mine_s, char *theirs_s, size_t len)
{
    for (int i = 0; st_fp_field(mine, i, mine_s, len); i++) {
        st_fp_field(theirs, i, theirs_s, len);
        if (strcmp(mine_s, theirs_s) != 0 || (i == 6 && mine->algo != theirs->algo))
            return 1;
    }
    return 0;
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
    e->fresh = malloc((size_t)e->sched.nunits + 1);
    if (!e->fresh || !st_fresh_tables(e) || st_collect_peers(e, rank) != STITCH_OK) {
        free(e->fresh);
        free(e->src_fresh);
        free(e->src_fresh_at);
        e->fresh = e->src_fresh = NULL;
        e->src_fresh_at = NULL;
        snprintf(err, errlen, "out of memory listing the peers");
        return STITCH_ERR_NO_MEMORY;
    }
    return STITCH_OK;
}
