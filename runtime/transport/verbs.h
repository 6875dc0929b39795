/* verbs.h - the one seam between stitch and RDMA verbs: a table of functions with rdma-core's own types.
 *
 * Everything the verbs transport (tp_verbs.c) does to a device goes through an st_verbs_api, never through a
 * libibverbs symbol or one of verbs.h's inline functions or macros (ibv_post_send, ibv_poll_cq and ibv_reg_mr are
 * inline or macros in rdma-core 44, so a direct call would bypass the table). Two backends fill it:
 * - "libibverbs" (verbs_load.c): dlopen("libibverbs.so.1") at run time, symbols looked up with dlvsym at their
 *   version (IBVERBS_1.1 for the core calls), the data path (post_send, post_recv, poll_cq, req_notify_cq) through
 *   the context's ops as verbs.h's inline functions do. stitch never links -libverbs: it builds against the
 *   header and runs where rdma-core is absent (no library: the transport says so once under STITCH_DEBUG and
 *   process mode uses tcp).
 * - "fake" (tests/verbs/fakeverbs.c): the strict test-only emulator, which a test installs with st_verbs_set_api
 *   before it creates a communicator. Its objects are real `struct ibv_*` (the fields the transport reads are
 *   filled), so the transport cannot tell the two apart.
 *
 * Only what an RC transport with RDMA WRITE / WRITE_WITH_IMM, completion channels and async events needs is here;
 * a member is never NULL in a loaded table, so callers do not test for it.
 */
#ifndef ST_VERBS_H
#define ST_VERBS_H

#include <stddef.h>

#include <infiniband/verbs.h>

typedef struct st_verbs_api {
    const char *name; /* "libibverbs", "fake" */
    /* devices */
    struct ibv_device **(*get_device_list)(int *num);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *dev);
    struct ibv_context *(*open_device)(struct ibv_device *dev);
    int (*close_device)(struct ibv_context *ctx);
    int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
    int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
    /* protection domains and memory */
    struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    /* completion queues and their channels */
    struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
    int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
    struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *ch,
                                int comp_vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context);
    void (*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);
    /* queue pairs */
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
    int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init);
    int (*destroy_qp)(struct ibv_qp *qp);
    /* async events (port down, QP fatal): ctx->async_fd is pollable */
    int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *event);
    void (*ack_async_event)(struct ibv_async_event *event);
    /* the data path */
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
    int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
    int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
    int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
    /* names for messages */
    const char *(*wc_status_str)(enum ibv_wc_status status);
    const char *(*event_type_str)(enum ibv_event_type event);
} st_verbs_api;

/* The table in use: the one st_verbs_set_api installed, else libibverbs loaded once (thread-safe). NULL when
 * neither is available, with why in `why` ("libibverbs.so.1: cannot open shared object file" or "symbol
 * ibv_open_device@IBVERBS_1.1 missing"); the library path is STITCH_IBVERBS_LIB when set. */
const st_verbs_api *st_verbs_get(char *why, size_t whylen);

/* Install a table for this process (a test's emulator), or NULL to go back to libibverbs. Call it before any
 * communicator uses verbs; not thread-safe against a communicator being created. */
void st_verbs_set_api(const st_verbs_api *api);

#endif
