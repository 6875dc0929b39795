/* progress.c - a communicator's queue of non-blocking calls and the progress thread that runs them (request.h).
 *
 * One thread per communicator, started by its first non-blocking call and stopped by stitch_comm_destroy. It
 * takes the queue in call order and runs each call through the blocking path, so what a call does, how it fails
 * and how its peers learn of it are the blocking call's; the request only carries the outcome back. Point-to-point
 * requests next to each other in the queue run together, as a group whose operations keep arriving (p2p_nb.c). Progress
 * needs no help from the caller: the thread runs whether or not anyone tests or waits.
 *
 * `pending` counts the queued calls and the one running. While it is above 0 the communicator's engine state is
 * the thread's; the caller's blocking calls wait for it to reach 0 (st_nb_drain) before they touch that state, and
 * the queue's lock orders the two: the thread's writes happen before its decrement, the caller's reads after it
 * sees 0.
 *
 * The thread starts with every signal blocked, so that a program's signal handlers keep running on its own
 * threads.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "request.h"

typedef struct st_nbq {
    pthread_mutex_t mu;
    pthread_cond_t work; /* the thread: a call was queued, or stop */
    pthread_cond_t idle; /* drainers: pending fell to 0 */
    st_req *head, *tail;
    int pending;         /* queued + running */
    int stop;
    stitch_comm_t *comm;
    pthread_t thread;
} st_nbq;

/* The queue's first request when it is a point-to-point one (st_nb_take_fn). */
static st_req *st_nb_take_p2p(stitch_comm_t *comm)
{
    st_nbq *q = comm->nb;
    pthread_mutex_lock(&q->mu);
    st_req *r = q->head;
    if (r && r->is_p2p) {
        q->head = r->next;
        if (!q->head)
            q->tail = NULL;
        r->next = NULL;
    } else {
        r = NULL;
    }
    pthread_mutex_unlock(&q->mu);
    return r;
}

/* Run r's call and hand its outcome to the request (point-to-point: to it and those run with it, p2p_nb.c); how
 * many requests are over. */
static int st_nb_run(stitch_comm_t *comm, st_req *r)
{
    if (r->is_p2p)
        return st_nb_p2p_run(comm, r, st_nb_take_p2p);
    stitch_status_t st = st_collective_run(comm, &r->a);
    st_req_complete(r, st, comm->last_error);
    return 1;
}

static void *st_nb_main(void *arg)
{
    st_nbq *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop)
            pthread_cond_wait(&q->work, &q->mu);
        if (!q->head)
            break;
        st_req *r = q->head;
        q->head = r->next;
        if (!q->head)
            q->tail = NULL;
        r->next = NULL;
        pthread_mutex_unlock(&q->mu);
        int over = st_nb_run(q->comm, r); /* r (and those run with it) are the caller's from here on */
        pthread_mutex_lock(&q->mu);
        if ((q->pending -= over) == 0)
            pthread_cond_broadcast(&q->idle);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static st_nbq *st_nb_start(stitch_comm_t *comm, char *why, size_t len)
{
    st_nbq *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(why, len, "out of memory for the request queue");
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->idle, NULL);
    q->comm = comm;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&q->thread, NULL, st_nb_main, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(why, len, "cannot start the progress thread: %s", strerror(rc));
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->work);
        pthread_cond_destroy(&q->idle);
        free(q);
        return NULL;
    }
    return q;
}

static const st_nb_ops st_nb_queue_ops = {st_nb_drain, st_nb_free};

stitch_status_t st_nb_post(stitch_comm_t *comm, st_req *r, char *why, size_t len)
{
    if (!comm->nb && !(comm->nb = st_nb_start(comm, why, len)))
        return STITCH_ERR_SYSTEM;
    comm->nb_ops = &st_nb_queue_ops;
    st_nbq *q = comm->nb;
    r->comm = comm;
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
    q->pending++;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    if (r->is_p2p && comm->be->p2p_wake) /* a running point-to-point loop may take it (p2p_nb.c) */
        comm->be->p2p_wake(comm);
    return STITCH_OK;
}

void st_nb_drain(stitch_comm_t *comm)
{
    st_nbq *q = comm->nb;
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    while (q->pending > 0)
        pthread_cond_wait(&q->idle, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

void st_nb_free(stitch_comm_t *comm)
{
    st_nbq *q = comm->nb;
    if (!q)
        return;
    st_nb_drain(comm);
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    free(q);
    comm->nb = NULL;
}
