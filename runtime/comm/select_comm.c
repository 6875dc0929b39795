/* select_comm.c - a communicator's auto tables (select.h): built on the first auto call of each collective, kept
 * for the communicator's life, and logged once per (collective, size class) under STITCH_DEBUG (looked at on the
 * first pick of each, so that later picks read no environment).
 *
 * A table is built lazily because building one instantiates every candidate (policy model), and a communicator
 * that never calls a collective should not pay for it; after that a call's choice is a binary search, without a
 * lock once the table is published (built[] is stored with release, loaded with acquire). Building is locked:
 * stitch_comm_algorithm_for reads a communicator without taking it (comm.h), so two threads may ask for the same
 * collective's table at once. Settings that the table depends on (policy, STITCH_ONESHOT_BYTES, determinism,
 * level0, HCCL_ALGO's level1 entries) are copied at creation; the groups, the links (the topology's figures) and
 * HCCL_ALGO's roles are the communicator's own. A collective HCCL_ALGO's level1 chooses for gets the configured
 * algorithm's table (select_conf.c); where HCCL's default runs instead, rank 0 says why once under STITCH_DEBUG.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choose.h"
#include "comm.h"
#include "config.h"
#include "groups.h"
#include "select.h"

struct st_sel_state {
    pthread_mutex_t lock;
    int policy, deterministic, level0_ring;
    size_t oneshot_max;
    st_predict_fn predict; /* NULL: the model */
    unsigned char level1[STITCH_COLL_COUNT]; /* HCCL_ALGO's level1 entry that chooses (choose.h), or 0 */
    unsigned char built[STITCH_COLL_COUNT];
    stitch_status_t status[STITCH_COLL_COUNT];
    st_sel_table table[STITCH_COLL_COUNT];
    uint64_t logged[STITCH_COLL_COUNT]; /* size classes whose first pick has looked at STITCH_DEBUG */
};

st_sel_state *st_sel_state_new(const st_settings *s)
{
    st_sel_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    pthread_mutex_init(&st->lock, NULL);
    st->policy = s->select, st->deterministic = s->deterministic, st->oneshot_max = s->oneshot_max;
    st->level0_ring = s->level0_ring;
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        st->level1[c] = (unsigned char)st_hccl_choice(s, (stitch_coll_t)c);
    return st;
}

void st_sel_state_free(st_sel_state *st)
{
    if (!st)
        return;
    pthread_mutex_destroy(&st->lock);
    free(st);
}

void st_sel_state_set_predict(st_sel_state *st, st_predict_fn fn)
{
    st->predict = fn;
}

static void st_sel_env_of(const stitch_comm_t *comm, const st_sel_state *st, st_sel_env *env)
{
    memset(env, 0, sizeof *env);
    env->reg = comm->reg, env->p = comm->p, env->topo = st_groups_topo(comm->groups);
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        env->use[c] = comm->use[c];
    st_sel_links_from(comm->topology, &env->links); /* the topology's figures, else the defaults */
    env->policy = st->policy, env->oneshot_max = st->oneshot_max;
    env->deterministic = st->deterministic, env->predict = st->predict, env->level0_ring = st->level0_ring;
    memcpy(env->level1, st->level1, sizeof env->level1);
}

/* Build coll's table if it is not yet; the caller holds the lock. */
static void st_sel_ensure(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll)
{
    if (st->built[coll])
        return;
    st_sel_env env;
    char why[512];
    st_comm_ahc_ready(comm, coll); /* AHC's inner algorithms in the roles before any candidate is priced */
    st_sel_env_of(comm, st, &env);
    st->status[coll] = st_sel_build(&env, coll, &st->table[coll], why, sizeof why);
    if (st->status[coll] != STITCH_OK) {
        st->table[coll].n = 0;
        if (st_debug())
            fprintf(stderr, "stitch: rank %d: auto %s: %s; %s runs\n", comm->rank, stitch_coll_name(coll), why,
                    comm->algo[coll].algo ? comm->algo[coll].algo->name : "nothing");
    } else if (st->table[coll].note[0] && st_debug() && comm->rank == 0) { /* once per communicator */
        fprintf(stderr, "stitch: rank 0: HCCL_ALGO %s: %s (policy hccl)\n", stitch_coll_name(coll),
                st->table[coll].note);
    }
    __atomic_store_n(&st->built[coll], 1, __ATOMIC_RELEASE); /* the table is never written again */
}

const st_algo *st_sel_state_pick(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll, size_t bytes)
{
    return st_sel_state_pick_l1(comm, st, coll, bytes, NULL);
}

const st_algo *st_sel_state_pick_l1(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll, size_t bytes,
                                    const char **between)
{
    int range, k = st_sel_class(bytes);
    const st_algo *a;
    /* Every auto call comes here: once the table is built and the size class's first pick has looked at
     * STITCH_DEBUG (a getenv, a scan of the environment: hundreds of instructions under a launcher, more than the
     * rest of an 8-byte call's choice), a lookup needs no lock and no getenv. */
    if (__atomic_load_n(&st->built[coll], __ATOMIC_ACQUIRE) &&
        (__atomic_load_n(&st->logged[coll], __ATOMIC_ACQUIRE) >> k & 1)) {
        a = st_sel_lookup(&st->table[coll], bytes, &range);
        if (between)
            *between = a ? st->table[coll].r[range].between : NULL;
        return a;
    }
    pthread_mutex_lock(&st->lock);
    st_sel_ensure(comm, st, coll);
    a = st_sel_lookup(&st->table[coll], bytes, &range);
    if (between)
        *between = a ? st->table[coll].r[range].between : NULL;
    if (!(st->logged[coll] >> k & 1) && a && st_debug()) {
        char lo[32], hi[32], clo[32], chi[32];
        size_t cl, ch;
        st_sel_class_range(k, &cl, &ch);
        st_sel_fmt_bytes(st->table[coll].r[range].lo, lo, sizeof lo);
        st_sel_fmt_bytes(st->table[coll].r[range].hi, hi, sizeof hi);
        st_sel_fmt_bytes(cl, clo, sizeof clo);
        st_sel_fmt_bytes(ch, chi, sizeof chi);
        char by[48];
        if (st->table[coll].configured)
            snprintf(by, sizeof by, "HCCL_ALGO level1 %s%s", st_hccl_alg_name(st->table[coll].configured),
                     st->table[coll].note[0] ? ", HCCL's default" : "");
        else
            snprintf(by, sizeof by, "%s", st_sel_policy_name(st->policy));
        fprintf(stderr, "stitch: rank %d: auto (%s) %s, size class [%s, %s]: %s (range [%s, %s])\n", comm->rank, by,
                stitch_coll_name(coll), clo, chi, a->name, lo, hi);
    }
    __atomic_fetch_or(&st->logged[coll], (uint64_t)1 << k, __ATOMIC_RELEASE); /* asked: STITCH_DEBUG's say is had */
    pthread_mutex_unlock(&st->lock);
    return a;
}

stitch_status_t st_sel_state_table(const stitch_comm_t *comm, st_sel_state *st, stitch_coll_t coll,
                                   st_sel_table *out)
{
    pthread_mutex_lock(&st->lock);
    st_sel_ensure(comm, st, coll);
    *out = st->table[coll];
    stitch_status_t status = st->status[coll];
    pthread_mutex_unlock(&st->lock);
    return status;
}
