/* request.c - request handles and what a caller does with them: stitch_test, stitch_wait, stitch_wait_all,
 * stitch_request_error, stitch_request_free (request.h says how handles detect staleness).
 *
 * The table. Slots are made in chunks of ST_REQ_CHUNK and never freed: a handle's slot is always memory that can be
 * read, so a stale or forged handle is checked against the slot's generation, never dereferenced blindly. A
 * handle is the slot's number plus one in the low half of a uintptr_t (so it is never NULL) and the generation in
 * the high half. Freed slots go on a free list and are reused first; the generation makes a handle of the slot's
 * earlier life stale (detected until the generation wraps, 2^32 reuses of one slot on 64-bit machines).
 *
 * Waiting. Each slot has its own mutex and condition variable, so that waiting on one request wakes only its
 * waiters; the progress thread signals it when the call is over (st_req_complete). A request outlives its
 * communicator (stitch_comm_destroy waits for the pending ones), so nothing here touches the communicator except
 * to leave the failed call's message for stitch_comm_last_error in the waiting thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "request.h"

#define ST_REQ_CHUNK 1024
#define ST_REQ_CHUNKS 4096 /* 4 Mi requests alive at once */
#define ST_REQ_HALF (sizeof(uintptr_t) * 4)
#define ST_REQ_LOW (((uintptr_t)1 << ST_REQ_HALF) - 1)

static pthread_mutex_t st_req_lock = PTHREAD_MUTEX_INITIALIZER;
static st_req *_Atomic st_req_chunk[ST_REQ_CHUNKS];
static _Atomic uint32_t st_req_made; /* slots made: every slot below this number is initialised */
static st_req *st_req_free_list;

static st_req *st_req_slot(uint32_t i)
{
    return &atomic_load_explicit(&st_req_chunk[i / ST_REQ_CHUNK], memory_order_acquire)[i % ST_REQ_CHUNK];
}

static stitch_request_t *st_req_handle(uint32_t i, uintptr_t gen)
{
    return (stitch_request_t *)((gen << ST_REQ_HALF) | ((uintptr_t)i + 1));
}

/* A slot from the free list, else a new one (a new chunk when the last is full); the lock is held. */
static st_req *st_req_take(uint32_t *index)
{
    uint32_t made = atomic_load_explicit(&st_req_made, memory_order_relaxed);
    if (st_req_free_list) {
        st_req *r = st_req_free_list;
        st_req_free_list = r->next;
        *index = r->index;
        return r;
    }
    if (made / ST_REQ_CHUNK >= ST_REQ_CHUNKS || (uintptr_t)made + 1 >= ST_REQ_LOW)
        return NULL;
    if (made % ST_REQ_CHUNK == 0) {
        st_req *chunk = calloc(ST_REQ_CHUNK, sizeof *chunk);
        if (!chunk)
            return NULL;
        for (int i = 0; i < ST_REQ_CHUNK; i++) {
            chunk[i].index = made + (uint32_t)i;
            pthread_mutex_init(&chunk[i].mu, NULL);
            pthread_cond_init(&chunk[i].cv, NULL);
        }
        atomic_store_explicit(&st_req_chunk[made / ST_REQ_CHUNK], chunk, memory_order_release);
    }
    atomic_store_explicit(&st_req_made, made + 1, memory_order_release);
    *index = made;
    return st_req_slot(made);
}

st_req *st_req_new(stitch_request_t **handle)
{
    uint32_t i;
    pthread_mutex_lock(&st_req_lock);
    st_req *r = st_req_take(&i);
    if (r) {
        r->done = 0, r->status = STITCH_OK, r->msg[0] = '\0';
        r->comm = NULL, r->v = NULL, r->next = NULL, r->is_p2p = 0;
        memset(&r->a, 0, sizeof r->a);
        *handle = st_req_handle(i, (uintptr_t)atomic_load(&r->gen) & ST_REQ_LOW);
    }
    pthread_mutex_unlock(&st_req_lock);
    return r;
}

/* Back to the free list; its handles are stale from here on. */
static void st_req_release(st_req *r)
{
    free(r->v);
    r->v = NULL;
    pthread_mutex_lock(&st_req_lock);
    r->freed_fn = r->a.fn, r->freed_comm = r->comm, r->freed_rank = r->comm ? r->comm->rank : -1;
    atomic_fetch_add(&r->gen, 1);
    r->next = st_req_free_list, st_req_free_list = r;
    pthread_mutex_unlock(&st_req_lock);
}

void st_req_discard(st_req *r)
{
    st_req_release(r);
}

void st_req_complete(st_req *r, stitch_status_t status, const char *msg)
{
    free(r->v); /* the call is over: its copy of the caller's arrays is not read again */
    r->v = NULL;
    pthread_mutex_lock(&r->mu);
    r->status = status;
    snprintf(r->msg, sizeof r->msg, "%s", status == STITCH_OK || !msg ? "" : msg);
    r->done = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* ---- handles to requests ----------------------------------------------------------------------------------- */

typedef enum { ST_REQ_OK, ST_REQ_NULL, ST_REQ_FORGED, ST_REQ_STALE } st_req_why;

/* The live request a handle names, or NULL and why not. */
static st_req *st_req_of(const stitch_request_t *handle, st_req_why *why)
{
    uintptr_t h = (uintptr_t)handle, low = h & ST_REQ_LOW;
    uintptr_t gen = h >> ST_REQ_HALF;
    if (!h) {
        *why = ST_REQ_NULL;
        return NULL;
    }
    if (low == 0 || low - 1 >= atomic_load_explicit(&st_req_made, memory_order_acquire)) {
        *why = ST_REQ_FORGED;
        return NULL;
    }
    st_req *r = st_req_slot((uint32_t)(low - 1));
    if (((uintptr_t)atomic_load(&r->gen) & ST_REQ_LOW) != gen) { /* 32-bit machines keep 16 bits of it */
        *why = ST_REQ_STALE;
        return NULL;
    }
    *why = ST_REQ_OK;
    return r;
}

/* Why the last handle this thread gave names no live request (stitch_request_error returns it). */
static _Thread_local char st_req_text[ST_REASON_MAX];

/* Refuse `handle` in `fn`, saying why. A freed request whose slot has not been freed again since names its call
 * and rank, also to stitch_comm_last_error of its communicator in this thread (communicator handles are never
 * freed, comm.c). */
static stitch_status_t st_req_refuse(const stitch_request_t *handle, st_req_why why, const char *fn)
{
    uintptr_t h = (uintptr_t)handle, gen = h >> ST_REQ_HALF;
    if (why != ST_REQ_STALE) {
        snprintf(st_req_text, sizeof st_req_text, "%s: %s", fn, why == ST_REQ_NULL ? "the request is NULL" :
                 "not a request (no stitch_i* call returned this handle)");
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    st_req *r = st_req_slot((uint32_t)((h & ST_REQ_LOW) - 1));
    pthread_mutex_lock(&st_req_lock);
    int last_life = ((gen + 1) & ST_REQ_LOW) == ((uintptr_t)atomic_load(&r->gen) & ST_REQ_LOW) && r->freed_fn;
    const char *call = r->freed_fn;
    stitch_comm_t *comm = r->freed_comm;
    int rank = r->freed_rank;
    pthread_mutex_unlock(&st_req_lock);
    if (last_life)
        snprintf(st_req_text, sizeof st_req_text, "%s: the request of %s on rank %d was freed (stitch_request_free); "
                 "a freed request cannot be used again", fn, call, rank);
    else
        snprintf(st_req_text, sizeof st_req_text, "%s: the request was freed (stitch_request_free), and its slot has "
                 "served other requests since; a freed request cannot be used again", fn);
    if (last_life && comm)
        st_comm_note(comm, STITCH_ERR_INVALID_USAGE, "%s", st_req_text);
    return STITCH_ERR_INVALID_USAGE;
}

/* The live request `handle` names, in *out; else NULL and the refusal of `handle` in `fn`, saying why. */
static stitch_status_t st_req_get(const stitch_request_t *handle, const char *fn, st_req **out)
{
    st_req_why why;
    *out = st_req_of(handle, &why);
    return *out ? STITCH_OK : st_req_refuse(handle, why, fn);
}

/* A finished request's status, its message left for stitch_comm_last_error in this thread when it failed. */
static stitch_status_t st_req_result(st_req *r)
{
    if (r->status != STITCH_OK)
        st_comm_note(r->comm, r->status, "%s", r->msg);
    return r->status;
}

stitch_status_t stitch_test(stitch_request_t *req, int *done)
{
    st_req *r;
    if (done)
        *done = 0;
    stitch_status_t st = st_req_get(req, "stitch_test", &r);
    if (st != STITCH_OK)
        return st;
    if (!done)
        return STITCH_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&r->mu);
    int over = r->done;
    pthread_mutex_unlock(&r->mu);
    *done = over;
    return over ? st_req_result(r) : STITCH_OK;
}

stitch_status_t stitch_wait(stitch_request_t *req)
{
    st_req *r;
    stitch_status_t st = st_req_get(req, "stitch_wait", &r);
    if (st != STITCH_OK)
        return st;
    pthread_mutex_lock(&r->mu);
    while (!r->done)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return st_req_result(r);
}

/* Every request is waited for, whatever the others' outcome, so that no buffer is still in use on return. Last
 * first: requests are usually in call order, and one communicator's complete in that order, so the last one's
 * wait is the only one that sleeps (first to last, every completion would wake this thread for the next: 20,000
 * requests in flight took 59 us each instead of 10, on two cores). The status is still the first failure's in
 * array order. */
stitch_status_t stitch_wait_all(int n, stitch_request_t **reqs)
{
    stitch_status_t first = STITCH_OK;
    if (n < 0 || (n > 0 && !reqs))
        return STITCH_ERR_INVALID_ARGUMENT;
    for (int i = n - 1; i >= 0; i--) {
        stitch_status_t st = stitch_wait(reqs[i]);
        if (st != STITCH_OK)
            first = st;
    }
    if (first != STITCH_OK) /* the message of the first failure, not of the last */
        for (int i = 0; i < n; i++) {
            st_req_why why;
            st_req *r = st_req_of(reqs[i], &why);
            if (r && r->status != STITCH_OK) {
                st_req_result(r);
                break;
            }
            if (!r)
                break;
        }
    return first;
}

const char *stitch_request_error(const stitch_request_t *req)
{
    st_req *r;
    if (st_req_get(req, "stitch_request_error", &r) != STITCH_OK)
        return st_req_text;
    pthread_mutex_lock(&r->mu);
    const char *msg = r->done ? r->msg : "";
    pthread_mutex_unlock(&r->mu);
    return msg;
}

stitch_status_t stitch_request_free(stitch_request_t *req)
{
    st_req *r;
    stitch_status_t st = st_req_get(req, "stitch_request_free", &r);
    if (st != STITCH_OK)
        return st;
    pthread_mutex_lock(&r->mu);
    int over = r->done;
    pthread_mutex_unlock(&r->mu);
    if (!over)
        return st_comm_note(r->comm, STITCH_ERR_INVALID_USAGE, "stitch_request_free: the request of %s on rank %d "
                            "is still pending (wait for it first); it is not freed", r->a.fn, r->comm->rank);
    st_req_release(r);
    return STITCH_OK;
}
