/* p2p_nb.c - the progress thread's side of stitch_isend and stitch_irecv (issued in api_nb.c): a point-to-point
 * request runs with the point-to-point requests queued behind it as one backend operation (p2p.h), which keeps
 * taking those queued while it runs (a feed).
 *
 * Why a feed. A send may complete only once its receive has begun (threads: the receiver copies from the sender's
 * buffer), so two ranks that each isend and then irecv would wait for each other if each request ran alone, and
 * whether the irecv is already queued when the isend starts depends on timing. Run together, a rank progresses all
 * its pending sends and receives at once, as in a group, whatever their order: no deadlock, nothing timed. Each
 * request completes as soon as its own operation does. A collective queued behind them waits until they are all
 * done (call order, as NCCL's stream order: a send not matched before a later collective cannot complete).
 *
 * A failure (a mismatch, the timeout, an abort) fails every request of the run not yet complete, with the
 * communicator's message, which names the ranks and the operation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "comm.h"
#include "p2p.h"
#include "request.h"

typedef struct st_nbfeed {
    st_p2p_feed f;          /* first: the backend hands it back to more and done */
    stitch_comm_t *comm;
    st_nb_take_fn *take;    /* the queue's next point-to-point request (progress.c) */
    st_req **reqs;          /* reqs[i] is f.ops[i]'s request */
    unsigned char *over;    /* over[i]: reqs[i] is complete (and no longer ours) */
    int cap;
    int taken;              /* requests taken off the queue, all told (compact drops the completed from the arrays) */
    st_req *lost;           /* a request taken off the queue that there was no room to add */
} st_nbfeed;

/* Add r's operation, numbered among the run's operations of its kind and peer. */
static int st_nbf_push(st_nbfeed *nf, st_req *r)
{
    int n = nf->f.n;
    nf->taken++;
    if (n == nf->cap) {
        int cap = nf->cap ? 2 * nf->cap : 16;
        st_p2p_op *ops = realloc(nf->f.ops, sizeof *ops * (size_t)cap);
        if (ops)
            nf->f.ops = ops;
        st_req **reqs = ops ? realloc(nf->reqs, sizeof *reqs * (size_t)cap) : NULL;
        if (reqs)
            nf->reqs = reqs;
        unsigned char *over = reqs ? realloc(nf->over, (size_t)cap) : NULL;
        if (!over) {
            nf->lost = r;
            return -1;
        }
        nf->over = over, nf->cap = cap;
    }
    st_p2p_op op = r->op;
    op.nth = 1;
    for (int i = 0; i < n; i++)
        op.nth += nf->f.ops[i].kind == op.kind && nf->f.ops[i].peer == op.peer;
    nf->f.ops[n] = op, nf->reqs[n] = r, nf->over[n] = 0;
    nf->f.n = n + 1;
    return 0;
}

static int st_nbf_more(st_p2p_feed *f)
{
    st_nbfeed *nf = (st_nbfeed *)f;
    st_req *r;
    while ((r = nf->take(nf->comm)))
        if (st_nbf_push(nf, r) != 0)
            return -1;
    return 0;
}

static void st_nbf_compact(st_p2p_feed *f)
{
    st_nbfeed *nf = (st_nbfeed *)f;
    int m = 0;
    for (int i = 0; i < f->n; i++)
        if (!nf->over[i])
            f->ops[m] = f->ops[i], nf->reqs[m] = nf->reqs[i], nf->over[m] = 0, m++;
    f->n = m;
}

static void st_nbf_done(st_p2p_feed *f, int i)
{
    st_nbfeed *nf = (st_nbfeed *)f;
    nf->over[i] = 1;
    st_req_complete(nf->reqs[i], STITCH_OK, NULL);
}

int st_nb_p2p_run(stitch_comm_t *comm, st_req *r, st_nb_take_fn *take)
{
    st_nbfeed nf = {{st_nbf_more, st_nbf_done, st_nbf_compact, NULL, 0}, comm, take, NULL, NULL, 0, 0, NULL};
    stitch_status_t st;
    if (st_nbf_push(&nf, r) != 0)
        st = st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: rank %d: out of memory for the operation", r->a.fn,
                          comm->rank);
    else if (st_abort_is(comm->abort))
        st = st_comm_error(comm, STITCH_ERR_ABORTED, "%s: rank %d: communicator aborted earlier: %s", r->a.fn,
                           comm->rank, st_abort_reason(comm->abort));
    else if (!comm->be->p2p)
        st = st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "%s: this communicator's backend has no point-to-point",
                           r->a.fn);
    else
        st = comm->be->p2p(comm, nf.f.ops, nf.f.n, &nf.f);
    for (int i = 0; st != STITCH_OK && i < nf.f.n; i++)
        if (!nf.over[i])
            st_req_complete(nf.reqs[i], st, comm->last_error);
    if (nf.lost)
        st_req_complete(nf.lost, st, comm->last_error);
    free(nf.f.ops);
    free(nf.reqs);
    free(nf.over);
    return nf.taken;
}
