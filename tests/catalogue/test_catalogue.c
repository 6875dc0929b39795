/* test_catalogue.c - a user's own algorithm file, compiled into this program with stitch_compile_dsl, run by
 * libstitch on threads and on processes (issue 9, item 4).
 *
 * mine.dsl defines `backring` (reduce_scatter, all_gather, all_reduce), which algos.dsl does not have; other.dsl
 * `backmesh` (all_gather); clash.dsl an all_gather `ring`, which algos.dsl has too. Scenarios:
 *   threads         backring forced by name (config->algo, stitch_comm_set_algorithm) on 1..5 thread ranks, data
 *                   checked; a communicator without the catalogue beside it keeps auto's choices
 *   unknown         an unknown name lists the user's algorithms with the built-in ones; backring without the
 *                   catalogue is unknown
 *   duplicate       a name defined twice (clash.dsl, or a catalogue given twice) fails init naming both files;
 *                   malformed catalogue lists fail with what is wrong
 *   proc            backring on 3 processes over shm and 2 over tcp, data checked
 *   proc.mismatch   two processes forcing backring and ring: the mismatch names both algorithms (the header's
 *                   algorithm number is looked up in the communicator's registry)
 *   proc.differ     a rank without the catalogue, and ranks with the same two catalogues in another order: every
 *                   rank fails init with a message naming both sides
 *
 *   test_catalogue [scenario ...]    TAP; no names: all
 */
#include <pthread.h>

#include "procrun.h"
#include "st_test_clash.h"
#include "st_test_mine.h"
#include "st_test_other.h"
#include "stitch.h"

#define N 37 /* elements per rank: not a multiple of any p, so units differ in length */

static const stitch_catalogue_t *const mine[] = {&st_test_mine};
static const stitch_catalogue_t *const mine_other[] = {&st_test_mine, &st_test_other};
static const stitch_catalogue_t *const other_mine[] = {&st_test_other, &st_test_mine};

static const stitch_coll_t colls[] = {STITCH_ALL_REDUCE, STITCH_REDUCE_SCATTER, STITCH_ALL_GATHER};

static int contains(const char *text, const char *want, const char *what)
{
    if (strstr(text, want))
        return 1;
    printf("# %s: '%s' lacks '%s'\n", what, text, want);
    return 0;
}

/* Rank r's input element i, and what each collective must give rank r at i. */
static int32_t in_at(int r, int i)
{
    return (int32_t)(r * 1000 + i * 7 + 1);
}

static int32_t sum_at(int p, int i)
{
    int32_t s = 0;
    for (int q = 0; q < p; q++)
        s += in_at(q, i);
    return s;
}

/* One collective of N elements per rank with data; 0 when the result is right, else -1 with why. */
static int run_coll(stitch_comm_t *comm, stitch_coll_t coll, char *why, size_t len)
{
    int r = stitch_comm_rank(comm), p = stitch_comm_size(comm);
    int32_t *in = malloc(sizeof *in * (size_t)N * (size_t)p), *out = calloc((size_t)N * (size_t)p, sizeof *out);
    stitch_status_t st = STITCH_ERR_NO_MEMORY;
    int bad = -1;
    if (in && out) {
        for (int i = 0; i < N * p; i++)
            in[i] = in_at(r, i);
        if (coll == STITCH_ALL_REDUCE)
            st = stitch_all_reduce(in, out, N, STITCH_INT32, STITCH_SUM, comm);
        else if (coll == STITCH_REDUCE_SCATTER)
            st = stitch_reduce_scatter(in, out, N, STITCH_INT32, STITCH_SUM, comm);
        else
            st = stitch_all_gather(in, out, N, STITCH_INT32, comm);
        int n = coll == STITCH_ALL_GATHER ? N * p : N;
        for (int i = 0; st == STITCH_OK && bad < 0 && i < n; i++) {
            int32_t want = coll == STITCH_ALL_REDUCE ? sum_at(p, i)
                         : coll == STITCH_REDUCE_SCATTER ? sum_at(p, r * N + i) : in_at(i / N, i % N);
            if (out[i] != want)
                bad = i;
        }
    }
    if (st != STITCH_OK)
        snprintf(why, len, "rank %d: %s: %s: %s", r, stitch_coll_name(coll), stitch_strerror(st),
                 stitch_comm_last_error(comm));
    else if (bad >= 0)
        snprintf(why, len, "rank %d: %s with %s: element %d is %d", r, stitch_coll_name(coll),
                 stitch_comm_algorithm_for(comm, coll, N, STITCH_INT32), bad, (int)out[bad]);
    free(in);
    free(out);
    return st == STITCH_OK && bad < 0 ? 0 : -1;
}

/* ---- threads -------------------------------------------------------------------------------------------------- */

typedef struct trank {
    stitch_comm_t *comm;
    stitch_coll_t coll;
    char why[512];
    int rc;
} trank;

static void *thread_main(void *arg)
{
    trank *t = arg;
    t->rc = run_coll(t->comm, t->coll, t->why, sizeof t->why);
    return NULL;
}

/* Run `coll` on every thread rank of comms; 1 when every rank got the right data. */
static int run_threads(stitch_comm_t **comms, int p, stitch_coll_t coll)
{
    pthread_t th[8];
    trank t[8];
    int ok = 1;
    for (int r = 0; r < p; r++) {
        t[r] = (trank){.comm = comms[r], .coll = coll};
        if (pthread_create(&th[r], NULL, thread_main, &t[r]) != 0)
            return 0;
    }
    for (int r = 0; r < p; r++) {
        pthread_join(th[r], NULL);
        if (t[r].rc != 0)
            printf("# threads p %d: %s\n", p, t[r].why), ok = 0;
    }
    return ok;
}

static int is_algo(stitch_comm_t *comm, stitch_coll_t coll, const char *want)
{
    const char *got = stitch_comm_algorithm_for(comm, coll, N, STITCH_INT32);
    if (got && strcmp(got, want) == 0)
        return 1;
    printf("# %s runs '%s', want '%s'\n", stitch_coll_name(coll), got ? got : "(null)", want);
    return 0;
}

static void destroy_all(stitch_comm_t **comms, int p)
{
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static int sc_threads(void)
{
    int ok = 1;
    char err[1024] = "";
    for (int p = 1; p <= 5 && ok; p++) {
        stitch_comm_t *comms[8], *plain[8];
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        cfg.algo = "backring", cfg.catalogues = mine, cfg.ncatalogues = 1;
        if (stitch_comm_init_threads(p, &cfg, comms, err, sizeof err) != STITCH_OK) {
            printf("# init p %d: %s\n", p, err);
            return 0;
        }
        /* a communicator without the catalogue, alive at the same time, is not affected by it */
        if (stitch_comm_init_threads(p, NULL, plain, err, sizeof err) != STITCH_OK) {
            printf("# init p %d without catalogues: %s\n", p, err);
            destroy_all(comms, p);
            return 0;
        }
        for (size_t c = 0; c < sizeof colls / sizeof *colls && ok; c++) {
            ok &= is_algo(comms[0], colls[c], "backring") && run_threads(comms, p, colls[c]);
            ok &= strcmp(stitch_comm_algorithm(plain[0], colls[c]), "auto") == 0 && run_threads(plain, p, colls[c]);
        }
        /* back to auto, and forced again through stitch_comm_set_algorithm */
        for (int r = 0; r < p && ok; r++)
            ok &= stitch_comm_set_algorithm(comms[r], STITCH_COLL_COUNT, "auto") == STITCH_OK;
        /* auto's built-in choice, not the user's backring (ring under policy size; policy model's own pick on
         * one group is mesh: tests/runtime/test_select.c covers the policies) */
        ok &= ok && (is_algo(comms[0], STITCH_ALL_GATHER, "ring") || is_algo(comms[0], STITCH_ALL_GATHER, "mesh"));
        for (int r = 0; r < p && ok; r++)
            ok &= stitch_comm_set_algorithm(comms[r], STITCH_ALL_GATHER, "BackRing") == STITCH_OK;
        ok &= ok && is_algo(comms[0], STITCH_ALL_GATHER, "backring") && run_threads(comms, p, STITCH_ALL_GATHER);
        destroy_all(comms, p);
        destroy_all(plain, p);
    }
    return ok;
}

static int sc_unknown(void)
{
    char err[1024] = "";
    stitch_comm_t *comms[2] = {NULL, NULL};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    int ok = 1;
    cfg.catalogues = mine, cfg.ncatalogues = 1;
    cfg.algo = "nosuch";
    ok &= stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG;
    ok &= contains(err, "unknown algorithm 'nosuch' (known: auto; all_reduce: ring, ", "every collective");
    ok &= contains(err, ", backring; reduce_scatter: ", "every collective");
    cfg.algo = "all_gather=nosuch";
    ok &= stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG;
    ok &= contains(err, "unknown algorithm 'nosuch' for all_gather (known: auto, ring, ", "all_gather") &&
          contains(err, ", backring)", "all_gather");
    cfg.algo = "backring", cfg.ncatalogues = 0;
    ok &= stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG;
    ok &= contains(err, "unknown algorithm 'backring'", "without the catalogue");
    ok &= comms[0] == NULL && comms[1] == NULL;
    cfg.algo = NULL, cfg.ncatalogues = 1;
    if (stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) != STITCH_OK) {
        printf("# init: %s\n", err);
        return 0;
    }
    ok &= stitch_comm_set_algorithm(comms[0], STITCH_BROADCAST, "nosuch") == STITCH_ERR_UNKNOWN_ALGORITHM;
    ok &= contains(stitch_comm_last_error(comms[0]), "unknown algorithm 'nosuch' for broadcast (known: auto, ring",
                   "set_algorithm");
    ok &= stitch_comm_set_algorithm(comms[0], STITCH_BROADCAST, "backring") == STITCH_ERR_UNKNOWN_ALGORITHM;
    ok &= stitch_comm_set_algorithm(comms[0], STITCH_COLL_COUNT, "nosuch") == STITCH_ERR_UNKNOWN_ALGORITHM;
    ok &= contains(stitch_comm_last_error(comms[0]), "all_gather: ring, mesh, ", "set_algorithm, every collective") &&
          contains(stitch_comm_last_error(comms[0]), ", backring;", "set_algorithm, every collective");
    destroy_all(comms, 2);
    return ok;
}

static int init_fails(const stitch_catalogue_t *const *cats, int n, stitch_status_t want, const char *message)
{
    char err[1024] = "";
    stitch_comm_t *comms[2] = {NULL, NULL};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.catalogues = cats, cfg.ncatalogues = n;
    stitch_status_t st = stitch_comm_init_threads(2, &cfg, comms, err, sizeof err);
    if (st != want || comms[0] || comms[1]) {
        printf("# %s: status %s (%s), want %s\n", message, stitch_strerror(st), err, stitch_strerror(want));
        if (st == STITCH_OK)
            destroy_all(comms, 2);
        return 0;
    }
    return contains(err, message, "init");
}

static int sc_duplicate(void)
{
    static const stitch_catalogue_t *const clash[] = {&st_test_mine, &st_test_clash};
    static const stitch_catalogue_t *const twice[] = {&st_test_mine, &st_test_other, &st_test_mine};
    static const stitch_catalogue_t *const with_null[] = {&st_test_mine, NULL};
    int ok = 1;
    ok &= init_fails(clash, 2, STITCH_ERR_CONFIG, "stitch_comm_init_threads: algorithm 'ring' for all_gather is "
                     "defined twice: by algos.dsl (built in) and by clash.dsl (config->catalogues[1])");
    ok &= init_fails(twice, 3, STITCH_ERR_CONFIG, "algorithm 'backring' for reduce_scatter is defined twice: by "
                     "mine.dsl (config->catalogues[0]) and by mine.dsl (config->catalogues[2])");
    ok &= init_fails(with_null, 2, STITCH_ERR_INVALID_ARGUMENT, "config->catalogues[1] is NULL");
    ok &= init_fails(NULL, 1, STITCH_ERR_INVALID_ARGUMENT, "config->ncatalogues is 1 but config->catalogues is NULL");
    ok &= init_fails(mine, -1, STITCH_ERR_INVALID_ARGUMENT, "config->ncatalogues is -1");
    return ok;
}

/* ---- processes ------------------------------------------------------------------------------------------------ */

static int body_run(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    for (size_t c = 0; c < sizeof colls / sizeof *colls; c++) {
        const char *a = stitch_comm_algorithm_for(comm, colls[c], N, STITCH_INT32);
        if (!a || strcmp(a, "backring") != 0) {
            say(out, "rank %d: %s runs %s, not backring\n", rank, stitch_coll_name(colls[c]), a ? a : "(null)");
            return 1;
        }
        if (run_coll(comm, colls[c], why, sizeof why) != 0) {
            say(out, "%s\n", why);
            return 1;
        }
    }
    return 0;
}

static void set_configs(stitch_config_t *cfg, int n, const char *algo, const stitch_catalogue_t *const *cats,
                        int ncats)
{
    for (int i = 0; i < n; i++) {
        cfg[i] = (stitch_config_t)STITCH_CONFIG_INIT;
        cfg[i].algo = algo, cfg[i].catalogues = cats, cfg[i].ncatalogues = ncats;
        config_of_rank[i] = &cfg[i];
    }
}

static void clear_configs(void)
{
    memset(config_of_rank, 0, sizeof config_of_rank);
}

static int sc_proc(void)
{
    stitch_config_t cfg[3];
    run r;
    int ok = 1;
    set_configs(cfg, 3, "backring", mine, 1);
    spawn(&r, 3, body_run, "shm");
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "shm np3");
    spawn(&r, 2, body_run, "tcp");
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "tcp np2");
    clear_configs();
    return ok;
}

static int body_mismatch(stitch_comm_t *comm, int rank, int n, int out)
{
    int32_t v[N] = {0};
    stitch_status_t st = stitch_all_reduce(v, v, N, STITCH_INT32, STITCH_SUM, comm);
    say(out, "%s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_ERR_MISMATCH ? 0 : 1;
}

static int sc_proc_mismatch(void)
{
    stitch_config_t cfg[2];
    run r;
    int ok = 1;
    set_configs(cfg, 2, "backring", mine, 1);
    cfg[1].algo = "ring";
    spawn(&r, 2, body_mismatch, NULL);
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "mismatch");
    /* whichever rank noticed first names both; the other may only have been aborted by it */
    int named = 0;
    for (int i = 0; i < 2; i++)
        named |= strstr(r.text[i], "algorithm backring but rank 1 has") && strstr(r.text[i], "algorithm ring");
    if (!named)
        printf("# no rank names backring against ring: '%s' / '%s'\n", r.text[0], r.text[1]);
    clear_configs();
    return ok && named;
}

static int body_never(stitch_comm_t *comm, int rank, int n, int out)
{
    say(out, "rank %d: init succeeded\n", rank);
    return 1;
}

/* Every rank fails init (exit 2, procrun.h) with a message containing each of want[]. */
static int all_fail_with(const run *r, const char *const *want, int nwant)
{
    int ok = 1;
    for (int i = 0; i < r->n; i++) {
        if (r->status[i] != 2)
            printf("# rank %d exited %d: %s\n", i, r->status[i], r->text[i]), ok = 0;
        for (int k = 0; k < nwant; k++)
            ok &= contains(r->text[i], want[k], "init");
    }
    return ok;
}

static int sc_proc_differ(void)
{
    stitch_config_t cfg[3];
    run r;
    int ok = 1;
    /* rank 2 without the catalogue */
    set_configs(cfg, 3, NULL, mine, 1);
    cfg[2].ncatalogues = 0;
    spawn(&r, 3, body_never, NULL);
    reap(&r, DEADLINE_S);
    const char *want1[] = {"invalid configuration: stitch_comm_init_rank: ranks disagree on the algorithm "
                           "catalogues: rank 0 has algos.dsl+mine.dsl (hash ", ") but rank 2 has algos.dsl (hash "};
    ok &= all_fail_with(&r, want1, 2);
    /* the same two catalogues in another order: the algorithms' numbers differ, so this must fail too */
    set_configs(cfg, 2, NULL, mine_other, 2);
    cfg[1].catalogues = other_mine;
    spawn(&r, 2, body_never, NULL);
    reap(&r, DEADLINE_S);
    const char *want2[] = {"rank 0 has algos.dsl+mine.dsl+other.dsl (hash ", ") but rank 1 has "
                           "algos.dsl+other.dsl+mine.dsl (hash "};
    ok &= all_fail_with(&r, want2, 2);
    clear_configs();
    return ok;
}

int main(int argc, char **argv)
{
    static const proc_scenario sc[] = {
        {"threads", sc_threads}, {"unknown", sc_unknown}, {"duplicate", sc_duplicate}, {"proc", sc_proc},
        {"proc.mismatch", sc_proc_mismatch}, {"proc.differ", sc_proc_differ},
    };
    return proc_main(sc, (int)(sizeof sc / sizeof *sc), argc, argv);
}
