/* comm.c - what every communicator has whatever its backend (comm.h): settings, last error, abort, destroy, its
 * registry of algorithms (the built-in catalogue and config->catalogues, registry.c) and the schedule cache. The
 * constructors are the backends' (threads.c, proc.c).
 *
 * Misuse that can be detected cheaply is. A handle is taken by each public function that runs on it (`busy`,
 * an atomic compare-and-swap), so two threads calling on one communicator get STITCH_ERR_INVALID_USAGE rather
 * than a silent race. stitch_comm_destroy frees everything a handle owns except the handle itself (about 1 KB),
 * which it marks dead and keeps on a list for the life of the process: a later call or a second destroy with it
 * reads defined memory and fails with STITCH_ERR_INVALID_USAGE. (Freeing the handle would make that undefined,
 * and malloc could hand its address to a new communicator, so a stale handle would pass for a live one.) A
 * usage error's message is kept per thread (the communicator may be in another thread's hands), and
 * stitch_comm_last_error returns it to the thread that got the error.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "choose.h"
#include "comm.h"
#include "config.h"
#include "proof.h"
#include "registry.h"

/* This thread's last usage error, for the communicator it concerns. */
static _Thread_local struct {
    const stitch_comm_t *comm;
    char msg[ST_REASON_MAX];
} st_usage;

/* Destroyed handles: never freed, so using one is detected (see the top of this file). */
static pthread_mutex_t st_dead_lock = PTHREAD_MUTEX_INITIALIZER;
static stitch_comm_t *st_dead;

static void st_vformat(stitch_comm_t *comm, const char *fmt, va_list ap)
{
    if (st_usage.comm == comm) /* a newer error of this thread's on this communicator */
        st_usage.comm = NULL;
    vsnprintf(comm->last_error, sizeof comm->last_error, fmt, ap);
}

int st_comm_live(const stitch_comm_t *comm)
{
    return comm && atomic_load_explicit(&((stitch_comm_t *)comm)->magic, memory_order_acquire) == ST_COMM_LIVE;
}

static stitch_status_t st_usage_error(const stitch_comm_t *comm, const char *fn, const char *holder)
{
    st_usage.comm = comm;
    if (!holder)
        snprintf(st_usage.msg, sizeof st_usage.msg, "%s: the communicator was destroyed", fn);
    else if (strcmp(holder, "stitch_comm_destroy") == 0)
        snprintf(st_usage.msg, sizeof st_usage.msg, "%s: another thread is destroying the communicator", fn);
    else
        snprintf(st_usage.msg, sizeof st_usage.msg, "%s: another thread is inside %s on this communicator (a "
                 "communicator is used by one thread at a time)", fn, holder);
    return STITCH_ERR_INVALID_USAGE;
}

stitch_status_t st_comm_enter_nowait(stitch_comm_t *comm, const char *fn)
{
    const char *holder = NULL;
    if (!comm)
        return STITCH_ERR_INVALID_ARGUMENT;
    if (!st_comm_live(comm))
        return st_usage_error(comm, fn, NULL);
    if (!atomic_compare_exchange_strong(&comm->busy, &holder, fn))
        return st_usage_error(comm, fn, holder);
    if (st_usage.comm == comm)
        st_usage.comm = NULL;
    return STITCH_OK;
}

stitch_status_t st_comm_enter(stitch_comm_t *comm, const char *fn)
{
    stitch_status_t st = st_comm_enter_nowait(comm, fn);
    if (st == STITCH_OK && comm->nb_ops)
        comm->nb_ops->drain(comm); /* queued behind the pending non-blocking calls */
    return st;
}

stitch_status_t st_comm_note(const stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st_usage.msg, sizeof st_usage.msg, fmt, ap);
    va_end(ap);
    st_usage.comm = comm;
    return status;
}

void st_comm_leave(stitch_comm_t *comm)
{
    atomic_store_explicit(&comm->busy, NULL, memory_order_release);
}

stitch_status_t st_comm_error(stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st_vformat(comm, fmt, ap);
    va_end(ap);
    return status;
}

stitch_status_t st_comm_tell(stitch_comm_t *comm, stitch_status_t status)
{
    char reason[ST_REASON_MAX];
    snprintf(reason, sizeof reason, "rank %d: %s", comm->rank, comm->last_error);
    comm->be->abort(comm, reason);
    return status;
}

stitch_status_t st_comm_fail(stitch_comm_t *comm, stitch_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st_vformat(comm, fmt, ap);
    va_end(ap);
    return st_comm_tell(comm, status);
}

static void st_entry_free(st_entry *e)
{
    if (!e->ready)
        return;
    e->ready = 0;
    st_plan_free(&e->plan);
    st_sched_free(&e->sched);
    free(e->peers);
    free(e->fresh);
    free(e->src_fresh);
    free(e->src_fresh_at);
    free(e->fwd);
    free(e->replay);
    e->fwd = NULL;
    e->replay = NULL;
    e->remote_once = 0;
}

/* An algorithm's entries: the first lives in the cache array, the others (other roots) were allocated. */
static void st_entry_list_free(st_entry *head)
{
    st_entry_free(head);
    for (st_entry *e = head->next, *next; e; e = next) {
        next = e->next;
        st_entry_free(e);
        free(e);
    }
    head->next = NULL;
}

void st_comm_plans_whole(stitch_comm_t *comm)
{
    if (comm->whole_schedule)
        return;
    comm->whole_schedule = 1;
    for (int i = 0; comm->cache && i < st_reg_count(comm->reg); i++) {
        int own = 0;
        for (st_entry *e = &comm->cache[i]; e && e->ready; e = e->next)
            own |= e->sched.partial;
        if (own)
            st_entry_list_free(&comm->cache[i]);
    }
    memset(comm->memo, 0, sizeof comm->memo); /* it may name a freed entry */
}

/* What a handle owns, not the handle. */
static void st_comm_release(stitch_comm_t *comm)
{
    for (int i = 0; comm->cache && i < st_reg_count(comm->reg); i++)
        st_entry_list_free(&comm->cache[i]);
    free(comm->cache);
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        free(comm->use[c]), comm->use[c] = NULL;
        for (int v = 0; v < ST_L1_VARIANTS; v++)
            free(comm->use_l1[c][v]), comm->use_l1[c][v] = NULL;
    }
    st_reg_free(comm->reg);
    comm->reg = NULL;
    st_sel_state_free(comm->sel);
    comm->sel = NULL;
    free(comm->scratch);
    free(comm->units);
    for (st_plainmem *m = comm->plainmem, *next; m; m = next) /* stitch_mem_alloc's, never freed (mem.c) */
        next = m->next, free(m->ptr), free(m);
    comm->plainmem = NULL;
    comm->cache = NULL, comm->scratch = comm->units = NULL;
    comm->scratch_size = comm->units_size = 0;
    st_topology_unref(comm->topology);
    comm->topology = NULL;
}

/* R for one instantiation of `algo` (12.2's priority), in millionths, 12.4's meaning: the communicator's config,
 * then the environment (both in its settings), else the built-in formula (12.3) per collective from the topology's
 * level 0 and 1 bandwidths. Plain groups (STITCH_GROUPS, an inline layout, process hosts) have no bandwidths: the
 * formula's fallback, R = 0.5. */
int32_t st_comm_split_ppm(const stitch_comm_t *comm, const st_algo *algo, const st_topo *topo)
{
    if (comm->settings.split_ratio >= 0)
        return (int32_t)lround(comm->settings.split_ratio * 1e6);
    double bw[2];
    st_topology_split_bw(comm->topology, bw);
    int S = topo ? topo->ngroups : 1, L = topo && S > 0 ? comm->p / S : comm->p;
    return st_split_formula_ppm(algo->coll, L, S, bw[0], bw[1]);
}

void st_comm_split_text(const stitch_comm_t *comm, const st_algo *algo, const st_topo *topo, char *buf, size_t len)
{
    double r = st_comm_split_ppm(comm, algo, topo) / 1e6;
    int S = topo ? topo->ngroups : 1, L = topo && S > 0 ? comm->p / S : comm->p;
    double bw[2];
    st_topology_split_bw(comm->topology, bw);
    if (comm->settings.split_ratio >= 0)
        snprintf(buf, len, "split ratio %g (%s)", r, comm->settings.split_source ? comm->settings.split_source
                 : "given");
    else if (bw[0] > 0 && bw[1] > 0)
        snprintf(buf, len, "split ratio %g (the formula, spec 12.3: L = %d, S = %d, level bandwidths %g and %g B/s)",
                 r, L, S, bw[0], bw[1]);
    else
        snprintf(buf, len, "split ratio %g (the formula's fallback, spec 12.3: no level bandwidths)", r);
}

/* HCCL_ALGO's level0 entries other than NA and null: HCCL warns and ignores them (spec 11.2); rank 0 says so
 * under STITCH_DEBUG. */
static void st_comm_level0_note(const st_settings *s, int rank)
{
    if (!s->hccl_algo_source || rank != 0 || !st_debug())
        return;
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        int a = s->hccl_algo.level[c][0];
        if (a != ST_HA_DEFAULT && a != ST_HA_NA && a != ST_HA_NULL) {
            fprintf(stderr, "stitch: rank 0: %s level0 %s is not supported and is ignored, as in HCCL: a server runs "
                    "%s (its topology's `full_mesh`)\n", s->hccl_algo_source, st_hccl_alg_name(a),
                    s->level0_ring ? "ring" : "mesh");
            return;
        }
    }
}

static int st_comm_l1_init(stitch_comm_t *comm);

stitch_comm_t *st_comm_new(const st_backend *be, int rank, int p, const st_settings *s0, const st_choice *algos,
                           const st_reg *reg, st_topology *topo)
{
    st_settings eff = *s0, *s = &eff; /* with the topology file's level0 (split communicators inherit it) */
    if (st_topology_level0_ring(topo))
        eff.level0_ring = 1;
    st_comm_level0_note(s, rank);
    stitch_comm_t *comm = calloc(1, sizeof *comm);
    if (!comm)
        return NULL;
    comm->reg = st_reg_dup(reg);
    comm->cache = comm->reg ? calloc((size_t)st_reg_count(reg) + 1, sizeof *comm->cache) : NULL;
    comm->sel = st_sel_state_new(s);
    if (!comm->cache || !comm->sel) {
        st_reg_free(comm->reg);
        free(comm->cache);
        st_sel_state_free(comm->sel);
        free(comm);
        return NULL;
    }
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        if (st_hccl_use(s, &st_builtin_catalogue, (stitch_coll_t)c, &comm->use[c]) != 0) {
            st_comm_discard(comm);
            return NULL;
        }
    if (s->select == ST_SEL_HCCL_GUIDE && st_comm_l1_init(comm) != 0) {
        st_comm_discard(comm);
        return NULL;
    }
    comm->be = be;
    atomic_store(&comm->magic, ST_COMM_LIVE);
    comm->rank = rank, comm->p = p;
    memcpy(comm->algo, algos, sizeof comm->algo);
    comm->settings = *s;
    comm->settings.groups = comm->settings.topo = comm->settings.algo_file = NULL;
    comm->settings.hccl_algo_text = NULL;
    comm->timeout_ms = s->timeout_ms;
    comm->segment_bytes = s->segment_bytes;
    comm->topology = st_topology_ref(topo);
    return comm;
}

void st_comm_discard(stitch_comm_t *comm)
{
    st_comm_release(comm);
    free(comm);
}

/* The handle stays `busy` for good: no function can take it again, and each says it was destroyed. */
stitch_status_t stitch_comm_destroy(stitch_comm_t *comm)
{
    stitch_status_t st = st_comm_enter(comm, "stitch_comm_destroy");
    if (st != STITCH_OK)
        return st;
    if (comm->nb_ops) /* its pending calls are over (st_comm_enter waited): the progress thread stops */
        comm->nb_ops->free(comm);
    atomic_store_explicit(&comm->magic, ST_COMM_DEAD, memory_order_release);
    comm->be->free(comm);
    comm->abort = NULL, comm->groups = NULL;
    st_comm_release(comm);
    pthread_mutex_lock(&st_dead_lock);
    comm->dead_next = st_dead, st_dead = comm;
    pthread_mutex_unlock(&st_dead_lock);
    return STITCH_OK;
}

int stitch_comm_rank(const stitch_comm_t *comm)
{
    return st_comm_live(comm) ? comm->rank : -1;
}

int stitch_comm_size(const stitch_comm_t *comm)
{
    return st_comm_live(comm) ? comm->p : -1;
}

int stitch_comm_levels(const stitch_comm_t *comm)
{
    return st_comm_live(comm) ? st_topo_nlevels(st_groups_topo(comm->groups)) : -1;
}

int stitch_comm_level_groups(const stitch_comm_t *comm, int level, int *sizes, int max)
{
    if (!st_comm_live(comm))
        return -1;
    const st_topo *t = st_groups_topo(comm->groups);
    if (level < 0 || level >= st_topo_nlevels(t))
        return -1;
    st_topo_level lv = st_topo_level_of(t, level);
    if (!lv.first) { /* the outermost level: one group of all ranks */
        if (sizes && max > 0)
            sizes[0] = comm->p;
        return 1;
    }
    for (int g = 0; sizes && g < lv.ngroups && g < max; g++)
        sizes[g] = lv.first[g + 1] - lv.first[g];
    return lv.ngroups;
}

int stitch_comm_groups(const stitch_comm_t *comm, int *sizes, int max)
{
    return stitch_comm_level_groups(comm, 0, sizes, max);
}

/* How `algo` is instantiated on this communicator for `root`: its p and groups, and for the built-in catalogue the
 * roles the configuration replaces; the 2D split ratio where the algorithm reads it. */
const char *const st_l1_variants[ST_L1_VARIANTS] = {"ring", "rhd", "nhr", "nb"};

int st_l1_variant(const char *name)
{
    for (int i = 0; name && i < ST_L1_VARIANTS; i++)
        if (strcmp(name, st_l1_variants[i]) == 0)
            return i;
    return -1;
}

/* Policy hccl_guide names the algorithm between servers per size range (hier's role level1): the communicator's
 * roles with level1 replaced by each variant the collective has. */
static int st_comm_l1_init(stitch_comm_t *comm)
{
    const st_catalogue *cat = &st_builtin_catalogue;
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        for (int v = 0; v < ST_L1_VARIANTS; v++) {
            const st_algo *with = st_cat_find(cat, st_l1_variants[v], c);
            if (!with)
                continue;
            int32_t *u = malloc(sizeof *u * ((size_t)cat->nalgos + 1));
            if (!u)
                return -1;
            for (int i = 0; i < cat->nalgos; i++) {
                u[i] = comm->use[c] ? comm->use[c][i] : -1;
                if (strcmp(cat->algos[i].name, "level1") == 0 && cat->algos[i].coll == c)
                    u[i] = (int32_t)(with - cat->algos);
            }
            comm->use_l1[c][v] = u;
        }
    return 0;
}

st_inst st_comm_inst_l1(const stitch_comm_t *comm, const st_algo *algo, int root, const char *level1)
{
    st_inst in = st_comm_inst(comm, algo, root);
    int v = st_l1_variant(level1);
    if (v >= 0 && in.use == comm->use[algo->coll] && comm->use_l1[algo->coll][v])
        in.use = comm->use_l1[algo->coll][v];
    return in;
}

st_inst st_comm_inst(const stitch_comm_t *comm, const st_algo *algo, int root)
{
    const st_topo *topo = st_groups_topo(comm->groups);
    const st_catalogue *cat = st_reg_cat(comm->reg, algo);
    st_comm_ahc_ready(comm, (stitch_coll_t)algo->coll); /* AHC's inner algorithms in the roles first */
    st_inst in = {.p = comm->p, .root = root, .topo = topo,
                  .use = cat == &st_builtin_catalogue ? comm->use[algo->coll] : NULL};
    if (algo->flags & ST_ALGO_USES_SPLIT)
        in.split_set = 1, in.split_ppm = st_comm_split_ppm(comm, algo, topo);
    return in;
}

/* Whether algo's schedule builds for `root`: 1 yes, 0 its `require` refuses (why in err), -1 another fault. */
static int st_comm_builds(const stitch_comm_t *comm, const st_algo *algo, int root, st_err *err)
{
    st_inst in = st_comm_inst(comm, algo, root);
    st_sched s;
    if (st_sched_build_ex(st_reg_cat(comm->reg, algo), algo, &in, &s, err) == 0) {
        st_sched_free(&s);
        return 1;
    }
    return err->refused ? 0 : -1;
}

/* 0 when `algo` can run on this communicator, else -1 with why: its `require` refuses the communicator's p or
 * groups, which the first call would otherwise find (and abort every rank with). An algorithm that reads the root
 * is refused only when its require refuses every root (a require on p or groups, `uniform()`, does); one that
 * refuses some roots only leaves those to the call that names them. Roots past 0 are tried only after root 0 is
 * refused, so an algorithm that runs costs one build here. */
static int st_comm_refuses(const stitch_comm_t *comm, const st_algo *algo, char *why, size_t len)
{
    const st_catalogue *cat = st_reg_cat(comm->reg, algo);
    st_err err = {0};
    if (st_comm_builds(comm, algo, 0, &err) != 0)
        return 0; /* it builds, or another fault: the call reports that, as it would have */
    for (int root = 1; root < comm->p && (algo->flags & ST_ALGO_USES_ROOT); root++) {
        st_err other = {0};
        if (st_comm_builds(comm, algo, root, &other) != 0)
            return 0;
    }
    int sizes[8], n = stitch_comm_groups(comm, sizes, 8), o = 0;
    char groups[80] = "";
    for (int g = 0; g < n && g < 8 && o < (int)sizeof groups - 12; g++)
        o += snprintf(groups + o, sizeof groups - (size_t)o, "%s%d", g ? "," : "", sizes[g]);
    snprintf(why, len, "algorithm '%s' of %s cannot run on this communicator (p = %d, groups %s%s): %s:%d: %s",
             algo->name, stitch_coll_name((stitch_coll_t)algo->coll), comm->p, groups, n > 8 ? ",..." : "",
             cat->file, err.line ? err.line : algo->line, err.msg);
    return -1;
}

static stitch_status_t st_set_one(stitch_comm_t *comm, stitch_coll_t coll, const char *name)
{
    st_choice before = comm->algo[coll];
    char why[768];
    if (st_choice_set(comm->reg, &comm->algo[coll], coll, name) != 0) {
        char msg[ST_NAMES_LEN + 200];
        st_unknown_algo(comm->reg, msg, sizeof msg, "stitch_comm_set_algorithm", name, coll);
        return st_comm_error(comm, STITCH_ERR_UNKNOWN_ALGORITHM, "%s", msg);
    }
    if (!comm->algo[coll].is_auto && st_comm_refuses(comm, comm->algo[coll].algo, why, sizeof why) != 0) {
        comm->algo[coll] = before;
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "stitch_comm_set_algorithm: %s (the choice is unchanged)",
                             why);
    }
    return STITCH_OK;
}

static stitch_status_t st_set_algorithm(stitch_comm_t *comm, stitch_coll_t coll, const char *name)
{
    if (!name || (unsigned)coll > STITCH_COLL_COUNT)
        return st_comm_error(comm, STITCH_ERR_INVALID_ARGUMENT, "stitch_comm_set_algorithm: %s",
                             !name ? "name is NULL" : "coll is not a stitch_coll_t");
    if (coll != STITCH_COLL_COUNT)
        return st_set_one(comm, coll, name);
    /* every collective that has an algorithm of that name; an error only when none has */
    int found = 0;
    st_choice before[STITCH_COLL_COUNT];
    char why[768];
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        before[c] = comm->algo[c];
        found |= st_choice_set(comm->reg, &comm->algo[c], (stitch_coll_t)c, name) == 0;
    }
    for (int c = 0; found && c < STITCH_COLL_COUNT; c++) {
        const st_choice *now = &comm->algo[c];
        int unchanged = now->algo == before[c].algo && !before[c].is_auto;
        if (now->is_auto || unchanged || st_comm_refuses(comm, now->algo, why, sizeof why) == 0)
            continue;
        memcpy(comm->algo, before, sizeof before); /* all or nothing */
        return st_comm_error(comm, STITCH_ERR_UNSUPPORTED, "stitch_comm_set_algorithm: %s (no choice is changed)",
                             why);
    }
    if (found)
        return STITCH_OK;
    char msg[ST_NAMES_LEN + 200];
    st_unknown_algo(comm->reg, msg, sizeof msg, "stitch_comm_set_algorithm", name, STITCH_COLL_COUNT);
    return st_comm_error(comm, STITCH_ERR_UNKNOWN_ALGORITHM, "%s", msg);
}

stitch_status_t stitch_comm_set_algorithm(stitch_comm_t *comm, stitch_coll_t coll, const char *name)
{
    stitch_status_t st = st_comm_enter(comm, "stitch_comm_set_algorithm");
    if (st != STITCH_OK)
        return st;
    st = st_set_algorithm(comm, coll, name);
    st_comm_leave(comm);
    return st;
}

const char *stitch_comm_algorithm(const stitch_comm_t *comm, stitch_coll_t coll)
{
    if (!st_comm_live(comm) || (unsigned)coll >= STITCH_COLL_COUNT || !comm->algo[coll].algo)
        return NULL;
    return comm->algo[coll].is_auto ? ST_AUTO_NAME : comm->algo[coll].algo->name;
}

/* The algorithm a call of count elements of dtype runs: its collective's choice (choose.h), auto's looked up in
 * the collective's table (select.h); the collective's fallback when that table could not be built. */
const st_algo *st_comm_pick_l1(const stitch_comm_t *comm, stitch_coll_t coll, size_t count, stitch_dtype_t dtype,
                               const char **level1)
{
    const st_choice *c = &comm->algo[coll];
    *level1 = NULL;
    if (comm->settings.deterministic == 2 && (coll == STITCH_ALL_REDUCE || coll == STITCH_REDUCE_SCATTER)) {
        /* HCCL_DETERMINISTIC=strict: one reduction order per element (ranks 0..p-1 in a fixed tree) whatever the
         * algorithm chosen, the count or the layout, as HCCL's order-preserving executor does (spec 14.3) */
        const st_algo *strict = st_reg_find(comm->reg, "mesh_strict", coll);
        if (strict)
            return strict;
    }
    if (!c->is_auto || !c->algo)
        return c->algo;
    const st_algo *a = st_sel_state_pick_l1(comm, comm->sel, coll, count * stitch_dtype_size(dtype), level1);
    if (!a)
        *level1 = NULL;
    else if (st_l1_variant(*level1) < 0 || !comm->use_l1[coll][st_l1_variant(*level1)])
        *level1 = NULL; /* nothing replaces the role (another policy's table, or no such algorithm) */
    else
        *level1 = st_l1_variants[st_l1_variant(*level1)]; /* one pointer per name: plan.c's entries compare it */
    return a ? a : c->algo;
}

const st_algo *st_comm_pick(const stitch_comm_t *comm, stitch_coll_t coll, size_t count, stitch_dtype_t dtype)
{
    const char *level1;
    return st_comm_pick_l1(comm, coll, count, dtype, &level1);
}

const char *stitch_comm_algorithm_for(const stitch_comm_t *comm, stitch_coll_t coll, size_t count,
                                      stitch_dtype_t dtype)
{
    if (!st_comm_live(comm) || (unsigned)coll >= STITCH_COLL_COUNT || (unsigned)dtype >= STITCH_DTYPE_COUNT)
        return NULL;
    const st_algo *a = st_comm_pick(comm, coll, count, dtype);
    return a ? a->name : NULL;
}

/* Takes no `busy`: it is meant for other threads. A destroyed handle is ignored. The reason names the rank: in a
 * thread job every rank shares one abort, and its peers' messages would not say who gave up. */
void stitch_comm_abort(stitch_comm_t *comm)
{
    char reason[64];
    if (!st_comm_live(comm))
        return;
    snprintf(reason, sizeof reason, "stitch_comm_abort was called on rank %d", comm->rank);
    comm->be->abort(comm, reason);
}

const char *stitch_comm_last_error(const stitch_comm_t *comm)
{
    if (comm && st_usage.comm == comm)
        return st_usage.msg;
    if (comm && !st_comm_live(comm))
        return "the communicator was destroyed";
    return comm ? comm->last_error : "";
}

/* Grow *buf to at least `bytes` (64-byte aligned; zeroed if `zero`). The old buffer is no longer read by peers:
 * every rank waits for its readers before a call returns. */
static stitch_status_t st_grow(stitch_comm_t *comm, char **buf, size_t *have, size_t bytes, int zero,
                               const char *fn, char **out)
{
    if (bytes > *have) {
        size_t size = (bytes + 63) & ~(size_t)63;
        char *fresh = aligned_alloc(64, size);
        if (!fresh)
            return st_comm_fail(comm, STITCH_ERR_NO_MEMORY, "%s: cannot allocate %zu bytes of scratch", fn, size);
        if (zero)
            memset(fresh, 0, size);
        if (*buf)
            stitch_mr_invalidate(*buf, *have); /* the verbs cache may hold it (one-sided path) */
        free(*buf);
        *buf = fresh;
        *have = size;
    }
    *out = *buf;
    return STITCH_OK;
}

stitch_status_t st_comm_scratch(stitch_comm_t *comm, size_t bytes, const char *fn, char **out)
{
    return st_grow(comm, &comm->scratch, &comm->scratch_size, bytes, 0, fn, out);
}

stitch_status_t st_comm_units(stitch_comm_t *comm, size_t bytes, const char *fn, char **out)
{
    return st_grow(comm, &comm->units, &comm->units_size, bytes, 1, fn, out);
}
