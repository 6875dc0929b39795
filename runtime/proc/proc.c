/* proc.c - process-mode communicators: bootstrap, transports (transport.h: chosen, set up and connected by
 * st_links_open), control channels, waiting (proc.h).
 *
 * Tunables of process mode (STITCH_TRANSPORT, STITCH_SHM_RING_BYTES, STITCH_TCP_RING_BYTES, STITCH_TCP_CC, STITCH_IB_*,
 * STITCH_SPIN_US, STITCH_SOCKET_IFNAME, STITCH_SECRET) are read and checked by config.c with the others and arrive here in
 * st_settings. STITCH_SPIN_US unset means 500 us, or 1000 us when the host runs more ranks of the communicator
 * than it has cores: such a rank yields the core after every fruitless poll, so the peer it waits for (often on
 * the same core) runs at once instead of after a futex round trip.
 *
 * Groups. Topology-aware algorithms see the ranks of each host as a group, whatever their rank order, unless
 * STITCH_GROUPS / stitch_config_t.groups or a topology (STITCH_TOPO / stitch_config_t.topo: every level, placed
 * by the file's host names or in rank order) say otherwise (placement.c, after the bootstrap).
 *
 * Control frames are 16-byte headers (magic, kind, length) + text: abort (with the reason), goodbye, and a
 * progress query and its answer (st_progress). Abort frames are written once, by the thread that wins
 * ctrl_owner; answers by the executor while it waits (it reads the channels then); ctrl_tx keeps the two from
 * interleaving on a socket.
 *
 * Who is behind. A rank whose call times out asks every peer for its progress and waits a bounded time for the
 * answers, answering its peers' queries meanwhile (st_proc_behind). Every rank waiting inside a call reads its
 * control channels at least every 20 ms (exec_msg.c's ST_BLOCK_MS, or each poll with tcp peers), so a rank that
 * stays silent is stopped, busy outside stitch, or unreachable: that is the rank behind. One mechanism for shm
 * and tcp peers alike: every pair has a control channel, and the answer's latency matters only once, at a
 * timeout. If all answer, the one at the earliest (call, segment, step) is named.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "comm.h"
#include "config.h"
#include "exec_msg.h"
#include "exec_pull.h"
#include "placement.h"
#include "proc.h"
#include "registry.h"
#include "regmem.h"
#include "p2p.h"
#include "split.h"
#include "tp_verbs.h"

#define ST_CTRL_MAGIC 0x53544331u /* "STC1" */
enum { ST_CTRL_ABORT = 2, ST_CTRL_BYE = 3, ST_CTRL_QUERY = 4, ST_CTRL_ANSWER = 5 };

typedef struct st_ctrl_hdr {
    uint32_t magic, kind, len, pad;
} st_ctrl_hdr;

/* ---- the communicator ------------------------------------------------------------------------------------- */

static int st_proc_alloc(st_proc *pr, int size)
{
    pr->tp = calloc((size_t)size, sizeof *pr->tp);
    pr->ctrl = calloc((size_t)size, sizeof *pr->ctrl);
    pr->pfds = calloc((size_t)size * 2, sizeof *pr->pfds);
    pr->pfd_peer = calloc((size_t)size * 2, sizeof *pr->pfd_peer);
    pr->straight = -1;
    return pr->tp && pr->ctrl && pr->pfds && pr->pfd_peer ? 0 : -1;
}

static void st_proc_release(st_proc *pr)
{
    for (int j = 0; pr->tp && j < pr->size; j++)
        if (pr->tp[j])
            pr->tp[j]->ops->close(pr->tp[j]);
    st_links_close(&pr->links); /* unmaps the shm segments */
    if (pr->boot.ctrl)
        st_boot_close(&pr->boot);
    free(pr->tp);
    free(pr->ctrl);
    free(pr->pfds);
    free(pr->pfd_peer);
    free(pr->outs);
    st_regmem_free(pr->regmem);
    free(pr->early);
    free(pr->rm);
    free(pr->land); /* its cached registration went with the transports */
    st_groups_free(&pr->groups);
    free(pr);
}

static stitch_status_t st_proc_connect(st_proc *pr, const st_boot_env *env, const st_settings *s, uint64_t tag,
                                       const st_reg *reg, int timeout_ms, char *err, size_t errlen)
{
    char cats[64], counts[160], notes[256];
    st_reg_describe(reg, cats, sizeof cats);
    st_boot_opts o = {timeout_ms, s->socket_ifname, tag, st_tp_need_data, (void *)s, s->secret, st_reg_hash(reg),
                      cats, ST_VERBS_NONE, NULL, STITCH_OK, s->secret_empty};
#ifdef STITCH_HAVE_VERBS
    int vi = st_tp_find("verbs");
    if (s->transport == ST_TP_AUTO || s->transport == vi) /* a device to offer the peers (tp_verbs.c) */
        o.verbs = st_tp_verbs_probe(s, counts, sizeof counts);
#endif
    stitch_status_t st = st_boot_run(env, &o, &pr->boot, err, errlen);
    if (st == STITCH_OK)
        st = st_links_open(&pr->links, &pr->boot, s, timeout_ms, pr->tp, err, errlen);
    if (st == STITCH_OK) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        pr->bell = pr->links.bell;
        pr->nlocal = st_host_ranks(&pr->boot);
        pr->oversubscribed = cores > 0 && pr->nlocal > cores;
        /* 500 us, not less: a rank that sleeps between the frames of a large message pays a futex wake-up per
         * frame (16 MB all_reduce at np 2: 2.1-2.8 ms with 500 us against 2.4-3.1 ms with 50 us, 3 runs each) */
        pr->spin_ns = 1000 * (s->spin_us >= 0 ? s->spin_us : pr->oversubscribed ? 1000 : 500);
        pr->fuse = s->fuse;
    }
    if (st == STITCH_OK && st_debug()) {
        st_links_describe(&pr->links, counts, sizeof counts, notes, sizeof notes);
        fprintf(stderr, "stitch: rank %d of %d on %s (pid %u): %s; %d ranks on this host, spin %ld us before "
                "sleeping%s\n", pr->rank, pr->size, pr->boot.peers[pr->rank].hostname, pr->boot.peers[pr->rank].pid,
                counts, pr->nlocal, pr->spin_ns / 1000, notes);
    }
    return st;
}

static void st_proc_backend_abort(stitch_comm_t *comm, const char *reason)
{
    st_proc_abort(comm->proc, reason);
}

static void st_proc_backend_free(stitch_comm_t *comm)
{
    st_proc_free(comm->proc);
    comm->proc = NULL;
}

static int st_proc_peer_gone(void *ctx, int j)
{
    const st_proc *pr = ctx;
    return pr->ctrl[j].state == 1 || pr->ctrl[j].state == 2;
}

static void st_proc_nap(void *ctx)
{
    (void)st_proc_poll_ctrl(ctx, 1);
}

st_regmem *st_proc_regmem(st_proc *pr)
{
    if (!pr->regmem)
        pr->regmem = st_regmem_new(pr->rank, pr->size, (st_regmem_watch){pr, st_proc_peer_gone, st_proc_nap});
    return pr->regmem;
}

/* stitch_mem_alloc: a shared segment (regmem.h). From the first one on, plans are made whole, those made before
 * included: the pull engine needs every rank's transfers (exec_pull.c). */
static stitch_status_t st_proc_mem_alloc(stitch_comm_t *comm, size_t bytes, void **ptr)
{
    st_proc *pr = comm->proc;
    char err[256];
    if (!st_proc_regmem(pr))
        return st_comm_error(comm, STITCH_ERR_NO_MEMORY, "stitch_mem_alloc: rank %d: out of memory", pr->rank);
    st_comm_plans_whole(comm);
    stitch_status_t st = st_regmem_alloc(pr->regmem, bytes, 0, ptr, err, sizeof err);
    return st == STITCH_OK ? st : st_comm_error(comm, st, "stitch_mem_alloc: rank %d: %s", pr->rank, err);
}

static stitch_status_t st_proc_mem_free(stitch_comm_t *comm, void *ptr)
{
    st_proc *pr = comm->proc;
    char err[256] = "";
    stitch_status_t st = !pr->regmem ? STITCH_ERR_INVALID_ARGUMENT
                         : st_regmem_release(pr->regmem, ptr, 0, comm->timeout_ms, err, sizeof err);
    if (!pr->regmem)
        snprintf(err, sizeof err, "%p is not a buffer of stitch_mem_alloc (none was allocated on this communicator)",
                 ptr);
    if (st == STITCH_OK && err[0]) /* freed, but a peer never returned its borrow: say so, without failing */
        st_comm_error(comm, STITCH_OK, "stitch_mem_free: rank %d: %s", pr->rank, err);
    return st == STITCH_OK ? st : st_comm_error(comm, st, "stitch_mem_free: rank %d: %s", pr->rank, err);
}

static const st_backend st_proc_backend = {st_exec_proc, st_proc_backend_abort, st_proc_backend_free, 0,
                                            st_proc_split_offer, st_proc_split_join, st_proc_p2p, st_proc_p2p_wake,
                                            st_proc_mem_alloc, st_proc_mem_free};

/* Takes reg (the communicator keeps its own copy); the communicator holds a reference on topo (NULL: none). */
static stitch_comm_t *st_proc_shell(const st_boot_env *env, const st_settings *s, const st_choice *algo, st_reg *reg,
                                    st_topology *topo)
{
    stitch_comm_t *comm = st_comm_new(&st_proc_backend, env->rank, env->size, s, algo, reg, topo);
    st_proc *pr = calloc(1, sizeof *pr);
    st_reg_free(reg);
    if (!comm || !pr || st_proc_alloc(pr, env->size) != 0) {
        if (pr)
            st_proc_release(pr);
        if (comm)
            st_comm_discard(comm);
        return NULL;
    }
    pr->rank = env->rank, pr->size = env->size;
    comm->proc = pr;
    comm->whole_schedule = s->cma == 1; /* STITCH_CMA: the pull engine needs every rank's transfers (exec_pull.c) */
    comm->abort = &pr->abort;
    comm->groups = &pr->groups;
    return comm;
}

/* Bootstrap, transports, then the checks and groups from the table everyone now holds. */
static stitch_status_t st_proc_join(stitch_comm_t *comm, const st_boot_env *env, const st_settings *s,
                                    st_placement *pl, char *err, size_t errlen)
{
    int boot_ms = s->timeout_ms < 0 ? -1 : s->timeout_ms;
    stitch_status_t st = st_proc_connect(comm->proc, env, s, pl->tag, comm->reg, boot_ms, err, errlen);
    if (st == STITCH_OK)
        st = st_reg_check_peers(&comm->proc->boot, err, errlen);
    return st == STITCH_OK ? st_placement_apply(pl, s, &comm->proc->boot, &comm->proc->groups, err, errlen) : st;
}

/* This rank failed init before its bootstrap (st, why): the others would wait for it until their timeout, then
 * blame the bootstrap. So it still runs phase 1, with what it needs of its settings (st_settings_load_boot), to give
 * the root its reason; the root tells every rank (bootstrap.h). What the bootstrap itself says is not this rank's
 * news: its caller gets its own reason. */
static void st_proc_report(const st_boot_env *env, const stitch_config_t *config, stitch_status_t st,
                           const char *why)
{
    st_settings s;
    st_boot b;
    char ignored[1200];
    (void)st_settings_load_boot(config, &s);
    st_boot_opts o = {s.timeout_ms, s.socket_ifname, 0, NULL, NULL, s.secret, 0, NULL, ST_VERBS_NONE, why, st,
                      s.secret_empty};
    if (st_boot_run(env, &o, &b, ignored, sizeof ignored) == STITCH_OK) /* cannot be: a failed rank gets no table */
        st_boot_close(&b);
}

/* Settings, catalogues, algorithms and the placement: what a rank finds out alone, before the bootstrap. */
static stitch_status_t st_proc_prepare(const st_boot_env *env, const stitch_config_t *config, st_settings *s,
                                       st_choice *algo, st_reg **reg, st_placement *pl, char *why, size_t whylen)
{
    stitch_status_t st = st_settings_load(config, s, why, whylen);
    if (st == STITCH_OK && (st = st_reg_new(config, s->algo_file, reg, why, whylen)) == STITCH_OK)
        st = st_resolve_algos(*reg, s, algo, why, whylen);
    if (st == STITCH_OK && (st = st_placement_init(pl, s, env->size, why, whylen)) != STITCH_OK)
        st_placement_free(pl);
    if (st != STITCH_OK) {
        st_reg_free(*reg);
        *reg = NULL;
    }
    return st;
}

stitch_status_t st_proc_comm_new(const st_boot_env *env, const stitch_config_t *config, stitch_comm_t **out,
                                 char *err, size_t errlen)
{
    st_settings s;
    st_choice algo[STITCH_COLL_COUNT];
    st_reg *reg = NULL;
    st_placement pl;
    char why[1536];
    stitch_status_t st = st_proc_prepare(env, config, &s, algo, &reg, &pl, why, sizeof why);
    if (st != STITCH_OK) {
        st_proc_report(env, config, st, why);
        snprintf(err, errlen, "stitch_comm_init_rank: %s", why);
        return st;
    }
    stitch_comm_t *comm = st_proc_shell(env, &s, algo, reg, pl.topo); /* takes reg; the topology read once */
    if (!comm) {
        st_placement_free(&pl);
        st_proc_report(env, config, STITCH_ERR_NO_MEMORY, "out of memory");
        snprintf(err, errlen, "stitch_comm_init_rank: out of memory");
        return STITCH_ERR_NO_MEMORY;
    }
    st = st_proc_join(comm, env, &s, &pl, why, sizeof why);
    /* a catalogue compiled at run time is verified once the groups are known (every rank holds the same table and
     * groups, so every rank comes to the same verdict) */
    if (st == STITCH_OK)
        st = st_reg_verify(comm->reg, env->size, st_groups_topo(&comm->proc->groups), why, sizeof why);
    st_placement_free(&pl);
    if (st != STITCH_OK) {
        snprintf(err, errlen, "stitch_comm_init_rank: %s", why);
        stitch_comm_destroy(comm);
        return st;
    }
    *out = comm;
    return STITCH_OK;
}

/* A communicator split from a process-mode parent (split_proc.c): the parent's settings, choices and catalogues
 * (`reg`, verified for it), a bootstrap of its own among its members, the parent's topology value (`topo`, shared:
 * a reference, not a read) and its groups restricted to them (`groups`, taken; none: the hosts', as placement
 * finds them). */
stitch_status_t st_proc_comm_child(const st_boot_env *env, const st_settings *s, const st_choice *algo,
                                   const st_reg *reg, st_topology *topo, st_groups *groups, stitch_comm_t **out,
                                   char *err, size_t errlen)
{
    st_reg *mine = st_reg_dup(reg);
    stitch_comm_t *comm = mine ? st_proc_shell(env, s, algo, mine, topo) : NULL; /* takes mine */
    if (!comm) {
        snprintf(err, errlen, "out of memory");
        return STITCH_ERR_NO_MEMORY;
    }
    st_placement pl;
    stitch_status_t st = st_placement_init(&pl, s, env->size, err, errlen);
    if (st == STITCH_OK)
        st = st_proc_join(comm, env, s, &pl, err, errlen);
    st_placement_free(&pl);
    if (st != STITCH_OK) {
        stitch_comm_destroy(comm);
        return st;
    }
    if (groups->topo.ngroups > 0) {
        st_groups_free(&comm->proc->groups);
        comm->proc->groups = *groups;
        memset(groups, 0, sizeof *groups);
    }
    *out = comm;
    return STITCH_OK;
}

/* ---- control frames --------------------------------------------------------------------------------------- */

/* One frame to rank j. The channel is otherwise idle, so a frame this small fits its buffer: the send does not
 * block and is not cut short. ctrl_tx keeps two threads' frames (an answer, an abort) from interleaving. */
static void st_ctrl_send(st_proc *pr, int j, uint32_t kind, const void *payload, size_t n)
{
    struct {
        st_ctrl_hdr h;
        char text[640];
    } f;
    n = n < sizeof f.text ? n : sizeof f.text;
    f.h = (st_ctrl_hdr){ST_CTRL_MAGIC, kind, (uint32_t)n, 0};
    if (n)
        memcpy(f.text, payload, n);
    while (atomic_flag_test_and_set(&pr->ctrl_tx))
        ;
    if (pr->boot.ctrl && pr->boot.ctrl[j] >= 0)
        (void)!send(pr->boot.ctrl[j], &f, sizeof f.h + n, MSG_NOSIGNAL | MSG_DONTWAIT);
    atomic_flag_clear(&pr->ctrl_tx);
}

static void st_ctrl_send_all(st_proc *pr, uint32_t kind, const char *text)
{
    for (int j = 0; pr->boot.ctrl && j < pr->size; j++)
        st_ctrl_send(pr, j, kind, text, text ? strlen(text) : 0);
}

void st_proc_abort(st_proc *pr, const char *reason)
{
    int expected = 0;
    st_abort_set(&pr->abort, reason);
    if (atomic_compare_exchange_strong(&pr->ctrl_owner, &expected, 1))
        st_ctrl_send_all(pr, ST_CTRL_ABORT, reason);
    if (pr->bell)
        st_bell_ring(pr->bell); /* wake my own executor if it sleeps */
}

void st_proc_free(st_proc *pr)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&pr->ctrl_owner, &expected, 1))
        st_ctrl_send_all(pr, ST_CTRL_BYE, NULL);
    st_proc_release(pr);
}

/* One peer's control channel has bytes (or EOF): parse complete frames. 0, or -1 on death/abort. */
static int st_ctrl_read(st_proc *pr, int j)
{
    st_ctrl_in *c = &pr->ctrl[j];
    const st_peer_info *pi = &pr->boot.peers[j];
    char msg[900];
    ssize_t n = recv(pr->boot.ctrl[j], c->buf + c->fill, sizeof c->buf - c->fill, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n <= 0) {
        close(pr->boot.ctrl[j]);
        pr->boot.ctrl[j] = -1;
        if (c->state != 0)
            return 0;
        c->state = 2;
        snprintf(msg, sizeof msg, "rank %d (pid %u on %s) died: its control connection closed without a goodbye%s%s",
                 j, pi->pid, pi->hostname, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
        st_proc_abort(pr, msg);
        return -1;
    }
    c->fill += (size_t)n;
    st_ctrl_hdr h;
    while (c->fill >= sizeof h) {
        memcpy(&h, c->buf, sizeof h);
        if (h.magic != ST_CTRL_MAGIC || h.len > sizeof c->buf - sizeof h) {
            snprintf(msg, sizeof msg, "rank %d sent a malformed control frame", j);
            st_proc_abort(pr, msg);
            return -1;
        }
        if (c->fill < sizeof h + h.len)
            break;
        if (h.kind == ST_CTRL_BYE) {
            c->state = 1;
        } else if (h.kind == ST_CTRL_QUERY) { /* a peer's call timed out: where am I */
            if (!st_abort_is(&pr->abort))
                st_ctrl_send(pr, j, ST_CTRL_ANSWER, &pr->prog, sizeof pr->prog);
        } else if (h.kind == ST_CTRL_ANSWER) {
            if (h.len == sizeof c->at)
                memcpy(&c->at, c->buf + sizeof h, sizeof c->at), c->answered = 1;
        } else {
            c->state = 3;
            snprintf(msg, sizeof msg, "rank %d aborted: %.*s", j, (int)h.len, c->buf + sizeof h);
            st_proc_abort(pr, msg);
        }
        memmove(c->buf, c->buf + sizeof h + h.len, c->fill - sizeof h - h.len);
        c->fill -= sizeof h + h.len;
    }
    return st_abort_is(&pr->abort) ? -1 : 0;
}

/* Fill pfds with the control fds (and, when `data`, the tcp data fds for what would be progress on them, POLLOUT
 * only when `want_out`); returns how many. pfd_peer says whose each entry is: j for rank j's control socket,
 * size + j for its data socket. */
static int st_fill_pfds(st_proc *pr, int data, int want_out)
{
    int n = 0;
    for (int j = 0; j < pr->size; j++) {
        short ev = 0;
        int fd = data && pr->tp[j] ? pr->tp[j]->ops->pollfd(pr->tp[j], &ev) : -1;
        if (pr->boot.ctrl[j] >= 0)
            pr->pfds[n] = (struct pollfd){pr->boot.ctrl[j], POLLIN, 0}, pr->pfd_peer[n++] = j;
        ev &= (short)(want_out ? POLLIN | POLLOUT : POLLIN);
        if (fd >= 0 && ev)
            pr->pfds[n] = (struct pollfd){fd, ev, 0}, pr->pfd_peer[n++] = pr->size + j;
    }
    return n;
}

static int st_ctrl_ready(st_proc *pr, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (pr->pfd_peer[i] < pr->size && pr->pfds[i].revents && pr->boot.ctrl[pr->pfd_peer[i]] >= 0)
            rc |= st_ctrl_read(pr, pr->pfd_peer[i]);
    return rc;
}

/* Bytes arrived from peers: move them into their rx rings now. The executor reads one peer at a time, and the
 * bytes of another stay readable in the kernel until it gets there; left there they would end the next poll at
 * once, again and again (measured: np 3 on 2 cores, mesh all_reduce 16 MB, STITCH_SPIN_US=0: ~340 polls and
 * 700 fruitless recvs per call on one rank, burning the core its peers needed). A read error or EOF is left for
 * the executor's own peek to report. */
static void st_data_ready(st_proc *pr, int n)
{
    char why[8];
    const void *p;
    for (int i = 0; i < n; i++)
        if (pr->pfd_peer[i] >= pr->size && pr->pfd_peer[i] - pr->size != pr->straight &&
            (pr->pfds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            (void)pr->tp[pr->pfd_peer[i] - pr->size]->ops->peek(pr->tp[pr->pfd_peer[i] - pr->size], &p, why,
                                                                sizeof why);
}

int st_proc_poll_ctrl(st_proc *pr, int timeout_ms)
{
    int n = st_fill_pfds(pr, 0, 0);
    if (st_abort_is(&pr->abort))
        return -1;
    if (n == 0 || poll(pr->pfds, (nfds_t)n, timeout_ms) <= 0)
        return st_abort_is(&pr->abort) ? -1 : 0;
    return st_ctrl_ready(pr, n);
}

/* A rank sleeps on its doorbell only when all its peers ring it (shm); with tcp peers too it polls the sockets in
 * short slices instead, and arming the bell would only cost a membarrier and make every shm peer's ring wake a
 * futex nobody waits on. */
static int st_sleeps_on_bell(const st_proc *pr)
{
    return pr->bell && pr->links.by_fd == 0;
}

uint32_t st_proc_arm(st_proc *pr)
{
    return st_sleeps_on_bell(pr) ? st_bell_arm(pr->bell) : 0;
}

void st_proc_disarm(st_proc *pr)
{
    if (st_sleeps_on_bell(pr))
        st_bell_disarm(pr->bell);
}

void st_proc_block(st_proc *pr, int timeout_ms, int want_out, uint32_t seen)
{
    if (st_sleeps_on_bell(pr)) {
        /* `seen` was read when the caller armed, before its last look for progress: reading it here instead
         * would miss a ring that came in between, and sleep the whole timeout with data waiting. The abort
         * flag is looked at after the arm too (st_proc_poll_ctrl), so stitch_comm_abort's ring is not lost. */
        if (st_proc_poll_ctrl(pr, 0) == 0)
            st_bell_sleep(pr->bell, seen, timeout_ms);
        st_bell_disarm(pr->bell);
        return;
    }
    int n = st_fill_pfds(pr, 1, want_out); /* a send waiting for socket space wakes on POLLOUT */
    if (pr->links.by_bell > 0 && timeout_ms > 1)
        timeout_ms = 1; /* shm data cannot wake poll: check it often */
    if (poll(pr->pfds, (nfds_t)n, timeout_ms) > 0) {
        st_ctrl_ready(pr, n);
        st_data_ready(pr, n);
    }
    st_proc_disarm(pr);
}

/* ---- who is behind ---------------------------------------------------------------------------------------- */

static int st_prog_before(const st_progress *a, const st_progress *b)
{
    return a->call != b->call ? a->call < b->call : a->seg != b->seg ? a->seg < b->seg : a->step < b->step;
}

/* Ask every open channel, then read answers (and answer the peers' queries) until all came or wait_ms passed. */
static int st_ask_progress(st_proc *pr, int wait_ms)
{
    struct timespec t0, now;
    int missing = 0;
    for (int j = 0; j < pr->size; j++) {
        st_ctrl_in *c = &pr->ctrl[j];
        c->asked = j != pr->rank && pr->boot.ctrl[j] >= 0 && c->state == 0;
        c->answered = 0;
        if (c->asked)
            st_ctrl_send(pr, j, ST_CTRL_QUERY, NULL, 0), missing++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long left = wait_ms; missing > 0 && left > 0;) {
        if (st_proc_poll_ctrl(pr, left < 20 ? (int)left : 20) != 0)
            return -1;
        missing = 0;
        for (int j = 0; j < pr->size; j++)
            missing += pr->ctrl[j].asked && !pr->ctrl[j].answered;
        clock_gettime(CLOCK_MONOTONIC, &now);
        left = wait_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
    }
    return 0;
}

/* Everyone answered: name the one at the earliest progress, unless that is where I am too. */
static void st_all_answered(st_proc *pr, char *out, size_t outlen)
{
    int low = pr->rank;
    for (int j = 0; j < pr->size; j++)
        if (pr->ctrl[j].asked && st_prog_before(&pr->ctrl[j].at, low == pr->rank ? &pr->prog : &pr->ctrl[low].at))
            low = j;
    if (low == pr->rank)
        snprintf(out, outlen, "every rank answered a progress query and none is behind call %llu step %u (all "
                 "waiting: ranks that run different schedules, or a lost message)",
                 (unsigned long long)pr->prog.call, pr->prog.step);
    else
        snprintf(out, outlen, "rank %d is behind: it is waiting at call %llu segment %u step %u, while I am at call "
                 "%llu segment %u step %u", low, (unsigned long long)pr->ctrl[low].at.call, pr->ctrl[low].at.seg,
                 pr->ctrl[low].at.step, (unsigned long long)pr->prog.call, pr->prog.seg, pr->prog.step);
}

static int st_silent(const st_proc *pr, int j)
{
    return j >= 0 && j < pr->size && pr->ctrl[j].asked && !pr->ctrl[j].answered;
}

int st_proc_behind(st_proc *pr, int waiting_for, int wait_ms, char *out, size_t outlen)
{
    if (st_ask_progress(pr, wait_ms) != 0)
        return -1;
    int first = st_silent(pr, waiting_for) ? waiting_for : -1, others = 0; /* the one I wait for, if silent */
    for (int j = 0; j < pr->size && first < 0; j++)
        first = st_silent(pr, j) ? j : -1;
    if (first < 0) {
        st_all_answered(pr, out, outlen);
        return 0;
    }
    char more[128] = "";
    for (int j = 0; j < pr->size; j++) {
        size_t len = strlen(more);
        if (j != first && st_silent(pr, j) && len + 16 < sizeof more)
            snprintf(more + len, sizeof more - len, "%s%d", others++ ? ", " : "", j);
    }
    snprintf(out, outlen, "rank %d is behind: it did not answer a progress query within %d ms (stopped, busy "
             "outside stitch, or unreachable)%s%s", first, wait_ms, others ? "; nor did rank(s) " : "", more);
    return 0;
}
