/* test_verifyrange.c - nothing runs unproved (issue 18, items 2, 3 and 5).
 *
 * Scenarios (thread ranks):
 *   late33    late33.dsl, emitted with stitch_add_dsl's default range (1..32): right on 32 ranks; on 33, which the
 *             range does not hold, the all_gather is proved before it runs and refused with the counterexample on
 *             every rank, instead of giving wrong blocks
 *   root5     root5.dsl (a broadcast wrong only for root 5 when p > 32): loaded at run time (stitch_catalogue_load),
 *             init of 40 ranks fails naming root 5; emitted for 1..64, whose check of p = 40 samples roots 0..3,
 *             20, 38, 39, root 0 runs right and root 5 is refused before it runs
 *   require   even.dsl (`require p % 2 == 0`): stitch_comm_set_algorithm refuses it on 3 ranks with the require's
 *             line and keeps the previous choice; on 4 ranks it is accepted and runs
 *   large     the built-in catalogue (verified for 1..32) on 40, 64 and 100 ranks: broadcast ring from roots 0, 5
 *             and p-1 and all_gather ring run right; prints what the proofs outside the range cost
 *
 *   test_verifyrange [scenario ...]    TAP; no names: all
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "st_test_even.h"
#include "st_test_late33.h"
#include "st_test_root5.h"
#include "stitch.h"

#define N 5 /* elements per block */
#define MAXP 100

static int contains(const char *text, const char *want, const char *what)
{
    if (text && strstr(text, want))
        return 1;
    printf("# %s: '%s' lacks '%s'\n", what, text ? text : "(null)", want);
    return 0;
}

static int32_t in_at(int r, int i)
{
    return (int32_t)(r * 1000 + i + 1);
}

typedef struct trank {
    stitch_comm_t *comm;
    stitch_coll_t coll;
    int root;
    stitch_status_t st;
    int wrong; /* elements that differ from the oracle */
    char err[1024];
} trank;

/* One all_gather or broadcast of N elements per block on this rank, checked against the oracle. */
static void *rank_main(void *arg)
{
    trank *t = arg;
    int r = stitch_comm_rank(t->comm), p = stitch_comm_size(t->comm);
    int n = t->coll == STITCH_ALL_GATHER ? N * p : N;
    int32_t in[N], *out = calloc((size_t)n, sizeof *out);
    for (int i = 0; i < N; i++)
        in[i] = in_at(r, i);
    if (t->coll == STITCH_ALL_GATHER)
        t->st = stitch_all_gather(in, out, N, STITCH_INT32, t->comm);
    else
        t->st = stitch_broadcast(in, out, N, STITCH_INT32, t->root, t->comm);
    for (int i = 0; t->st == STITCH_OK && i < n; i++)
        t->wrong += out[i] != (t->coll == STITCH_ALL_GATHER ? in_at(i / N, i % N) : in_at(t->root, i));
    snprintf(t->err, sizeof t->err, "%s", t->st == STITCH_OK ? "" : stitch_comm_last_error(t->comm));
    free(out);
    return NULL;
}

/* Run coll on every rank of comms; the ranks' results in t. */
static void run(stitch_comm_t **comms, int p, stitch_coll_t coll, int root, trank *t)
{
    pthread_t th[MAXP];
    for (int r = 0; r < p; r++) {
        t[r] = (trank){.comm = comms[r], .coll = coll, .root = root};
        pthread_create(&th[r], NULL, rank_main, &t[r]);
    }
    for (int r = 0; r < p; r++)
        pthread_join(th[r], NULL);
}

/* 1 when every rank got the right data. */
static int all_right(stitch_comm_t **comms, int p, stitch_coll_t coll, int root, const char *what)
{
    trank t[MAXP];
    run(comms, p, coll, root, t);
    int ok = 1;
    for (int r = 0; r < p; r++)
        if (t[r].st != STITCH_OK || t[r].wrong) {
            printf("# %s: rank %d: %s, %d wrong elements: %s\n", what, r, stitch_strerror(t[r].st), t[r].wrong,
                   t[r].err);
            ok = 0;
        }
    return ok;
}

/* 1 when no rank returned data and every rank's error says `want`. */
static int all_refused(stitch_comm_t **comms, int p, stitch_coll_t coll, int root, const char *want,
                       const char *what)
{
    trank t[MAXP];
    run(comms, p, coll, root, t);
    int ok = 1;
    for (int r = 0; r < p; r++) {
        if (t[r].st == STITCH_OK) {
            printf("# %s: rank %d ran it (%d wrong elements)\n", what, r, t[r].wrong);
            ok = 0;
        }
    }
    /* the rank that proved it says why; the others may report the abort that names it */
    int said = 0;
    for (int r = 0; r < p; r++)
        said |= strstr(t[r].err, want) != NULL;
    if (!said)
        printf("# %s: no rank's error says '%s' (rank 0: %s)\n", what, want, t[0].err);
    return ok && said;
}

static int init(int p, const stitch_catalogue_t *const *cats, int ncats, const char *algo, stitch_comm_t **comms)
{
    char err[2048] = "";
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.catalogues = cats, cfg.ncatalogues = ncats, cfg.algo = algo;
    if (stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) == STITCH_OK)
        return 1;
    printf("# init of %d ranks: %s\n", p, err);
    return 0;
}

static void destroy_all(stitch_comm_t **comms, int p)
{
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static int sc_late33(void)
{
    static const stitch_catalogue_t *const cats[] = {&st_test_late33};
    stitch_comm_t *comms[MAXP];
    int ok = init(32, cats, 1, "all_gather=late33", comms);
    if (ok) {
        ok &= all_right(comms, 32, STITCH_ALL_GATHER, 0, "late33 on 32 ranks");
        destroy_all(comms, 32);
    }
    if (ok && (ok = init(33, cats, 1, "all_gather=late33", comms))) {
        ok &= all_refused(comms, 33, STITCH_ALL_GATHER, 0, "late33 all_gather is wrong for p = 33", "late33 on 33");
        destroy_all(comms, 33);
    }
    return ok;
}

static int sc_root5(void)
{
    char err[4096] = "";
    stitch_catalogue_t *loaded = NULL;
    stitch_comm_t *comms[MAXP];
    int ok = stitch_catalogue_load(ALGO_DIR "/root5.dsl", &loaded, err, sizeof err) == STITCH_OK;
    if (!ok)
        printf("# load: %s\n", err);
    if (ok) {
        const stitch_catalogue_t *cats[] = {loaded};
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        cfg.catalogues = cats, cfg.ncatalogues = 1, cfg.algo = "broadcast=root5";
        ok &= stitch_comm_init_threads(40, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG;
        ok &= contains(err, "root5 broadcast is wrong for p = 40, root 5", "loaded, init of 40 ranks");
        stitch_catalogue_free(loaded);
    }
    static const stitch_catalogue_t *const emitted[] = {&st_test_root5};
    if (ok && (ok = init(40, emitted, 1, "broadcast=root5", comms))) {
        ok &= all_right(comms, 40, STITCH_BROADCAST, 0, "emitted, root 0");
        ok &= all_right(comms, 40, STITCH_BROADCAST, 7, "emitted, root 7 (proved at first use)");
        ok &= all_refused(comms, 40, STITCH_BROADCAST, 5, "root5 broadcast is wrong for p = 40, root 5",
                          "emitted, root 5");
        destroy_all(comms, 40);
    }
    return ok;
}

static int sc_require(void)
{
    static const stitch_catalogue_t *const cats[] = {&st_test_even};
    stitch_comm_t *comms[MAXP];
    int ok = init(3, cats, 1, NULL, comms);
    for (int r = 0; ok && r < 3; r++) {
        stitch_status_t st = stitch_comm_set_algorithm(comms[r], STITCH_ALL_GATHER, "evenring");
        ok &= st == STITCH_ERR_UNSUPPORTED;
        ok &= contains(stitch_comm_last_error(comms[r]), "even.dsl:4: the algorithm's `require` at line 4 does not "
                       "hold", "set_algorithm on 3 ranks");
        ok &= contains(stitch_comm_algorithm(comms[r], STITCH_ALL_GATHER), "auto", "the choice is kept");
        /* the name for every collective that has it: refused the same way */
        ok &= stitch_comm_set_algorithm(comms[r], STITCH_COLL_COUNT, "evenring") == STITCH_ERR_UNSUPPORTED;
    }
    if (ok) {
        ok &= all_right(comms, 3, STITCH_ALL_GATHER, 0, "3 ranks after the refusal");
        destroy_all(comms, 3);
    }
    if (ok && (ok = init(4, cats, 1, NULL, comms))) {
        for (int r = 0; r < 4; r++)
            ok &= stitch_comm_set_algorithm(comms[r], STITCH_ALL_GATHER, "evenring") == STITCH_OK;
        ok &= ok && all_right(comms, 4, STITCH_ALL_GATHER, 0, "evenring on 4 ranks");
        destroy_all(comms, 4);
    }
    return ok;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int sc_large(void)
{
    static const int ps[] = {40, 64, 100};
    stitch_comm_t *comms[MAXP];
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++) {
        int p = ps[k];
        double t0 = now();
        if (!(ok = init(p, NULL, 0, "ring", comms)))
            break;
        double t1 = now();
        const int roots[] = {0, 5, p - 1};
        for (int i = 0; i < 3; i++)
            ok &= all_right(comms, p, STITCH_BROADCAST, roots[i], "built-in ring broadcast");
        ok &= all_right(comms, p, STITCH_ALL_GATHER, 0, "built-in ring all_gather");
        double t2 = now();
        for (int i = 0; i < 3; i++) /* again: the plans and their proofs are cached */
            ok &= all_right(comms, p, STITCH_BROADCAST, roots[i], "built-in ring broadcast, again");
        double t3 = now();
        printf("# p = %d: init %.3f s, first calls (4 plans built and proved) %.3f s, the same calls again %.3f s\n", p,
               t1 - t0, t2 - t1, t3 - t2);
        destroy_all(comms, p);
    }
    return ok;
}

static const struct {
    const char *name;
    int (*fn)(void);
} scenarios[] = {{"late33", sc_late33}, {"root5", sc_root5}, {"require", sc_require}, {"large", sc_large}};
#define NSC (int)(sizeof scenarios / sizeof *scenarios)

int main(int argc, char **argv)
{
    int n = 0, failed = 0;
    for (int i = 0; i < NSC; i++) {
        int want = argc < 2;
        for (int a = 1; a < argc; a++)
            want |= strcmp(argv[a], scenarios[i].name) == 0;
        if (!want)
            continue;
        int ok = scenarios[i].fn();
        printf("%s %d - %s\n", ok ? "ok" : "not ok", ++n, scenarios[i].name);
        failed += !ok;
    }
    printf("1..%d\n", n);
    return failed ? 1 : 0;
}
