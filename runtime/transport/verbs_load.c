/* verbs_load.c - the "libibverbs" backend of verbs.h's table: libibverbs opened at run time, never linked.
 *
 * dlopen(STITCH_IBVERBS_LIB, else "libibverbs.so.1", the SONAME: "libibverbs.so" exists only with the -dev
 * package), RTLD_NOW | RTLD_LOCAL, once per process (pthread_once). Every core call is looked up with dlvsym at
 * IBVERBS_1.1, the ABI every rdma-core since 2006 exports (its 1.0 twins take other structs); the two calls that
 * only ever had one version (ibv_create_comp_channel, ibv_destroy_comp_channel) at IBVERBS_1.0. One missing
 * symbol and the whole table is refused, with the symbol in `why`. The data path (post_send, post_recv, poll_cq,
 * req_notify_cq) is not exported at all: verbs.h's inline functions call through the context's ops, and so do
 * the wrappers here. ibv_query_port is a macro in rdma-core 44 (the extended query first, then the 1.1 symbol,
 * whose struct is a prefix of today's): the wrapper zeroes the whole attribute and calls the 1.1 symbol, so the
 * fields a provider does not fill read 0.
 *
 * STITCH_IBVERBS_LIB is read here with getenv, once, before any communicator's settings exist (the table is
 * per process); config.c checks the same variable as a tunable so a bad value is named at init.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

static const st_verbs_api *st_verbs_installed; /* st_verbs_set_api's, or NULL */
static st_verbs_api st_verbs_lib;
static int st_verbs_lib_ok;
static char st_verbs_lib_why[256];
static pthread_once_t st_verbs_once = PTHREAD_ONCE_INIT;

/* The core calls as libibverbs exports them (1.1 signatures; query_port's is the compat struct, see above). */
static int (*st_lib_query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *);

static int st_lib_query_port_w(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
    memset(attr, 0, sizeof *attr);
    return st_lib_query_port(ctx, port, attr);
}

static int st_lib_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return qp->context->ops.post_send(qp, wr, bad);
}

static int st_lib_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return qp->context->ops.post_recv(qp, wr, bad);
}

static int st_lib_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    return cq->context->ops.poll_cq(cq, n, wc);
}

static int st_lib_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    return cq->context->ops.req_notify_cq(cq, solicited_only);
}

/* One symbol at its version into *slot; 0, or -1 with why. */
static int st_sym(void *h, const char *name, const char *ver, void **slot)
{
    *slot = dlvsym(h, name, ver);
    if (*slot)
        return 0;
    snprintf(st_verbs_lib_why, sizeof st_verbs_lib_why, "symbol %s@%s missing", name, ver);
    return -1;
}

#define ST_SYM(field, name, ver) st_sym(h, name, ver, (void **)&a->field)

static void st_verbs_load(void)
{
    const char *env = getenv("STITCH_IBVERBS_LIB");
    const char *path = env && *env ? env : "libibverbs.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(st_verbs_lib_why, sizeof st_verbs_lib_why, "%s", e ? e : path);
        return;
    }
    st_verbs_api *a = &st_verbs_lib;
    const char *v = "IBVERBS_1.1";
    if (ST_SYM(get_device_list, "ibv_get_device_list", v) || ST_SYM(free_device_list, "ibv_free_device_list", v) ||
        ST_SYM(get_device_name, "ibv_get_device_name", v) || ST_SYM(open_device, "ibv_open_device", v) ||
        ST_SYM(close_device, "ibv_close_device", v) || ST_SYM(query_device, "ibv_query_device", v) ||
        st_sym(h, "ibv_query_port", v, (void **)&st_lib_query_port) || ST_SYM(query_gid, "ibv_query_gid", v) ||
        ST_SYM(alloc_pd, "ibv_alloc_pd", v) || ST_SYM(dealloc_pd, "ibv_dealloc_pd", v) ||
        ST_SYM(reg_mr, "ibv_reg_mr", v) || ST_SYM(dereg_mr, "ibv_dereg_mr", v) ||
        ST_SYM(create_comp_channel, "ibv_create_comp_channel", "IBVERBS_1.0") ||
        ST_SYM(destroy_comp_channel, "ibv_destroy_comp_channel", "IBVERBS_1.0") ||
        ST_SYM(create_cq, "ibv_create_cq", v) || ST_SYM(destroy_cq, "ibv_destroy_cq", v) ||
        ST_SYM(get_cq_event, "ibv_get_cq_event", v) || ST_SYM(ack_cq_events, "ibv_ack_cq_events", v) ||
        ST_SYM(create_qp, "ibv_create_qp", v) || ST_SYM(modify_qp, "ibv_modify_qp", v) ||
        ST_SYM(query_qp, "ibv_query_qp", v) || ST_SYM(destroy_qp, "ibv_destroy_qp", v) ||
        ST_SYM(get_async_event, "ibv_get_async_event", v) || ST_SYM(ack_async_event, "ibv_ack_async_event", v) ||
        ST_SYM(wc_status_str, "ibv_wc_status_str", v) || ST_SYM(event_type_str, "ibv_event_type_str", v)) {
        char sym[200];
        snprintf(sym, sizeof sym, "%.150s", st_verbs_lib_why);
        snprintf(st_verbs_lib_why, sizeof st_verbs_lib_why, "%.100s: %.150s", path, sym);
        dlclose(h);
        return;
    }
    a->name = "libibverbs";
    a->query_port = st_lib_query_port_w;
    a->post_send = st_lib_post_send;
    a->post_recv = st_lib_post_recv;
    a->poll_cq = st_lib_poll_cq;
    a->req_notify_cq = st_lib_req_notify_cq;
    st_verbs_lib_ok = 1; /* the handle stays open for the life of the process: providers hold pointers into it */
}

const st_verbs_api *st_verbs_get(char *why, size_t whylen)
{
    const st_verbs_api *a = __atomic_load_n(&st_verbs_installed, __ATOMIC_ACQUIRE);
    if (a)
        return a;
    pthread_once(&st_verbs_once, st_verbs_load);
    if (st_verbs_lib_ok)
        return &st_verbs_lib;
    if (why && whylen)
        snprintf(why, whylen, "%s", st_verbs_lib_why);
    return NULL;
}

void st_verbs_set_api(const st_verbs_api *api)
{
    __atomic_store_n(&st_verbs_installed, api, __ATOMIC_RELEASE);
}
