/* proof.c - the proof of a plan before its first use (proof.h).
 *
 * An emitted catalogue was verified for a range of p (stitch_compile_dsl: 1..32 by default), every root up to
 * p = 32 and a sample above, on even groupings and a sweep of small layouts; a communicator may be of any p, any
 * groups and call any root. What the range did not instantiate exactly is verified here, for exactly the
 * instantiation the call is about to build (dsl/verify.h: st_verify_inst), before it runs.
 *
 * The verdicts are kept for the process, keyed by what the instantiation depends on: the catalogue's hash (of its
 * code: two catalogues with the same hash run the same schedules), the algorithm, p, root, split ratio, roles and a
 * hash of the groups. The thread ranks of a job, which build the same plans, and later communicators of the same
 * shape then pay once; a lock makes the first one prove and the others wait for its verdict. At most ST_PROOF_MAX
 * verdicts are kept; past that, proofs are not cached (they stay correct, only slower).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "proof.h"
#include "verify.h"

#define ST_PROOF_MAX 65536

typedef struct st_proof {
    uint64_t cat, topo, use;
    int32_t ai, p, root, split;
    char *why; /* NULL: proved (or refused by a require, which the instantiation reports); else the counterexample */
    struct st_proof *next;
} st_proof;

static pthread_mutex_t st_proof_lock = PTHREAD_MUTEX_INITIALIZER;
static st_proof *st_proofs;
static long st_nproofs;

static uint64_t st_hash_ints(uint64_t h, const int32_t *v, long n)
{
    for (long i = 0; v && i < n; i++)
        h = st_hash_int(h, v[i]);
    return h;
}

/* Every level's groups and members, in order: equal for equal groups. */
static uint64_t st_topo_hash(const st_topo *t, int p)
{
    uint64_t h = st_hash_int(ST_HASH_INIT, st_topo_nlevels(t));
    for (int k = 0; t && k < st_topo_nlevels(t); k++) {
        st_topo_level l = st_topo_level_of(t, k);
        h = st_hash_int(h, l.ngroups);
        h = st_hash_ints(h, l.first, l.first ? l.ngroups + 1 : 0);
        h = st_hash_ints(h, l.members, l.members ? p : 0);
    }
    return h;
}

static st_proof *st_proof_find(const st_proof *key)
{
    for (st_proof *e = st_proofs; e; e = e->next)
        if (e->cat == key->cat && e->topo == key->topo && e->use == key->use && e->ai == key->ai &&
            e->p == key->p && e->root == key->root && e->split == key->split)
            return e;
    return NULL;
}

/* Verify now; the verdict into a new record (NULL when out of memory: the verdict is then not kept). */
static stitch_status_t st_prove(const st_catalogue *cat, int ai, const st_inst *in, const st_proof *key, char *why,
                                size_t len)
{
    char msg[2048];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = st_verify_inst(cat, ai, in, msg, sizeof msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st_debug())
        fprintf(stderr, "stitch: proved %s %s for p = %d, root %d%s before its first use: %s in %.1f ms\n",
                cat->algos[ai].name, st_coll_name(cat->algos[ai].coll), in->p, in->root,
                in->topo ? " on its groups" : "", rc < 0 ? "wrong" : rc ? "refused by its require" : "verified",
                ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e6);
    st_proof *e = st_nproofs < ST_PROOF_MAX ? malloc(sizeof *e) : NULL;
    if (e) {
        *e = *key;
        e->why = rc < 0 ? strdup(msg) : NULL;
        if (rc < 0 && !e->why) {
            free(e);
            e = NULL;
        }
    }
    if (e) {
        e->next = st_proofs, st_proofs = e;
        st_nproofs++;
    }
    if (rc >= 0)
        return STITCH_OK;
    snprintf(why, len, "%s", msg);
    return STITCH_ERR_CONFIG;
}

stitch_status_t st_proof_check(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int exact, char *why,
                               size_t len)
{
    int ai = (int)(algo - cat->algos);
    int plain = !in->use && (!(algo->flags & ST_ALGO_USES_SPLIT) || !in->split_set ||
                             in->split_ppm == ST_SPLIT_DEFAULT_PPM);
    if ((exact && plain) || st_verify_covers(cat, ai, in))
        return STITCH_OK;
    st_proof key = {.cat = cat->hash, .topo = algo->flags & ST_ALGO_USES_TOPO ? st_topo_hash(in->topo, in->p) : 0,
                    .use = st_hash_ints(ST_HASH_INIT, in->use, in->use ? cat->nalgos : 0), .ai = ai, .p = in->p,
                    .root = in->root, .split = algo->flags & ST_ALGO_USES_SPLIT ? in->split_ppm : 0};
    stitch_status_t st = STITCH_OK;
    pthread_mutex_lock(&st_proof_lock);
    const st_proof *e = st_proof_find(&key);
    if (!e)
        st = st_prove(cat, ai, in, &key, why, len);
    else if (e->why) {
        snprintf(why, len, "%s", e->why);
        st = STITCH_ERR_CONFIG;
    }
    pthread_mutex_unlock(&st_proof_lock);
    return st;
}
