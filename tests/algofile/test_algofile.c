/* test_algofile.c - algorithm files compiled while the program runs (issue 13, item 3): stitch_catalogue_load /
 * stitch_catalogue_free and STITCH_ALGO_FILE (runtime/catalogue.c).
 *
 * star.dsl (all_reduce and broadcast `star`) and double_ring.dsl are not in algos.dsl; syntax.dsl has a syntax
 * error at 5:24, wrong.dsl compiles but is wrong for p >= 2, builtin_name.dsl defines an all_reduce `ring`.
 * Scenarios:
 *   hash         the loaded catalogue equals, field by field and hash included, the tables `stitchc emit` wrote for
 *                the same file (compiled into this program with stitch_compile_dsl)
 *   api          a loaded catalogue in config->catalogues on 1..5 thread ranks, freed right after init (the
 *                communicators keep it), `star` forced by name (config->algo, stitch_comm_set_algorithm), data
 *                checked; argument errors
 *   env          STITCH_ALGO_FILE on threads: star chosen by config->algo and STITCH_ALGO; the same name from the
 *                file and a loaded catalogue fails init naming both
 *   errors       adversarial files through stitch_catalogue_load and STITCH_ALGO_FILE: missing, a directory, a FIFO
 *                (must not block), /dev/zero, empty, 17 MiB, binary junk, a syntax error (FILE:LINE:COL), a built-in
 *                name, a file that fails verification at init, STITCH_ALGO_FILE set but empty (which is unset)
 *   proc         STITCH_ALGO_FILE on 4 processes (shm) and 2 (tcp), star forced, data checked
 *   proc.differ  rank 3 loads double_ring.dsl, the others star.dsl: every rank fails init naming both files
 *   proc.wrong   every rank loads wrong.dsl: every rank fails init with the verifier's counterexample
 *   proc.groups  ingroup.dsl (right for one group only) on 4 processes in groups 2x2: verified on those groups
 *                after the bootstrap, every rank fails init
 *
 *   test_algofile [scenario ...]    TAP; no names: all. ALGOFILE_DIR is tests/algofile (a compile definition).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "procrun.h"
#include "st_steptab.h"
#include "st_test_double_ring.h"
#include "st_test_star.h"
#include "stitch.h"

#define N 37 /* elements per rank: not a multiple of any p */
#define DIR ALGOFILE_DIR

static int contains(const char *text, const char *want, const char *what)
{
    if (strstr(text, want))
        return 1;
    printf("# %s: '%s' lacks '%s'\n", what, text, want);
    return 0;
}

/* ---- hash: loaded == emitted ------------------------------------------------------------------------------ */

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Every field the runtime reads (the file name aside: emitted tables keep the path stitchc was given). */
static int same_catalogue(const st_catalogue *got, const st_catalogue *want, const char *what)
{
    int ok = got->version == want->version && got->hash == want->hash && got->hash != 0 &&
             got->hash == st_catalogue_hash(got) && got->ncode == want->ncode && got->nconsts == want->nconsts &&
             got->nfuncs == want->nfuncs && got->nalgos == want->nalgos;
    for (int32_t i = 0; ok && i < got->ncode; i++) {
        const st_insn *g = &got->code[i], *w = &want->code[i];
        ok = g->op == w->op && g->a == w->a && g->line == w->line && g->col == w->col;
    }
    for (int32_t i = 0; ok && i < got->nconsts; i++)
        ok = got->consts[i] == want->consts[i];
    for (int32_t i = 0; ok && i < got->nfuncs; i++) {
        const st_func *g = &got->funcs[i], *w = &want->funcs[i];
        ok = same_str(g->name, w->name) && g->entry == w->entry && g->nparams == w->nparams &&
             g->nslots == w->nslots && g->flags == w->flags;
    }
    for (int32_t i = 0; ok && i < got->nalgos; i++) {
        const st_algo *g = &got->algos[i], *w = &want->algos[i];
        ok = same_str(g->name, w->name) && g->coll == w->coll && g->entry == w->entry && g->nslots == w->nslots &&
             g->line == w->line && g->flags == w->flags;
    }
    if (!ok)
        printf("# %s: loaded (hash %016llx, %d insns) differs from emitted (hash %016llx, %d insns)\n", what,
               (unsigned long long)got->hash, (int)got->ncode, (unsigned long long)want->hash, (int)want->ncode);
    return ok;
}

static int sc_hash(void)
{
    static const struct {
        const char *file;
        const st_catalogue *emitted;
    } cases[] = {{DIR "/star.dsl", &st_test_star}, {DIR "/double_ring.dsl", &st_test_double_ring}};
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        stitch_catalogue_t *cat = NULL;
        char err[1024] = "";
        if (stitch_catalogue_load(cases[i].file, &cat, err, sizeof err) != STITCH_OK) {
            printf("# load %s: %s\n", cases[i].file, err);
            return 0;
        }
        ok &= same_catalogue(cat, cases[i].emitted, cases[i].file);
        stitch_catalogue_free(cat);
    }
    ok &= st_test_star.hash != st_test_double_ring.hash;
    return ok;
}

/* ---- runs ------------------------------------------------------------------------------------------------- */

static int32_t in_at(int r, int i)
{
    return (int32_t)(r * 1000 + i * 7 + 1);
}

/* all_reduce (sum) then broadcast from root p - 1, N elements with data; 0 when right, else -1 with why. */
static int run_colls(stitch_comm_t *comm, char *why, size_t len)
{
    int r = stitch_comm_rank(comm), p = stitch_comm_size(comm);
    int32_t in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = in_at(r, i), out[i] = -1;
    stitch_status_t st = stitch_all_reduce(in, out, N, STITCH_INT32, STITCH_SUM, comm);
    for (int i = 0; st == STITCH_OK && i < N; i++) {
        int32_t want = 0;
        for (int q = 0; q < p; q++)
            want += in_at(q, i);
        if (out[i] != want) {
            snprintf(why, len, "rank %d: all_reduce element %d is %d, want %d", r, i, (int)out[i], (int)want);
            return -1;
        }
    }
    if (st == STITCH_OK)
        st = stitch_broadcast(in, out, N, STITCH_INT32, p - 1, comm);
    for (int i = 0; st == STITCH_OK && i < N; i++)
        if (out[i] != in_at(p - 1, i)) {
            snprintf(why, len, "rank %d: broadcast element %d is %d", r, i, (int)out[i]);
            return -1;
        }
    if (st != STITCH_OK)
        snprintf(why, len, "rank %d: %s: %s", r, stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? 0 : -1;
}

typedef struct trank {
    stitch_comm_t *comm;
    char why[512];
    int rc;
} trank;

static void *thread_main(void *arg)
{
    trank *t = arg;
    t->rc = run_colls(t->comm, t->why, sizeof t->why);
    return NULL;
}

static int run_threads(stitch_comm_t **comms, int p)
{
    pthread_t th[8];
    trank t[8];
    int ok = 1;
    for (int r = 0; r < p; r++) {
        t[r] = (trank){.comm = comms[r]};
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

static int runs_star(stitch_comm_t *comm)
{
    const char *a = stitch_comm_algorithm_for(comm, STITCH_ALL_REDUCE, N, STITCH_INT32);
    const char *b = stitch_comm_algorithm_for(comm, STITCH_BROADCAST, N, STITCH_INT32);
    if (a && b && strcmp(a, "star") == 0 && strcmp(b, "star") == 0)
        return 1;
    printf("# runs %s / %s, want star\n", a ? a : "(null)", b ? b : "(null)");
    return 0;
}

static void destroy_all(stitch_comm_t **comms, int p)
{
    for (int r = 0; r < p; r++)
        stitch_comm_destroy(comms[r]);
}

static int sc_api(void)
{
    int ok = 1;
    char err[2048] = "";
    for (int p = 1; p <= 5 && ok; p++) {
        stitch_catalogue_t *cat = NULL;
        stitch_comm_t *comms[8];
        if (stitch_catalogue_load(DIR "/star.dsl", &cat, err, sizeof err) != STITCH_OK) {
            printf("# load: %s\n", err);
            return 0;
        }
        const stitch_catalogue_t *cats[] = {cat};
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        cfg.algo = "star", cfg.catalogues = cats, cfg.ncatalogues = 1;
        stitch_status_t st = stitch_comm_init_threads(p, &cfg, comms, err, sizeof err);
        stitch_catalogue_free(cat); /* the communicators hold their own references */
        if (st != STITCH_OK) {
            printf("# init p %d: %s\n", p, err);
            return 0;
        }
        ok &= runs_star(comms[0]) && run_threads(comms, p);
        for (int r = 0; r < p && ok; r++)
            ok &= stitch_comm_set_algorithm(comms[r], STITCH_COLL_COUNT, "auto") == STITCH_OK &&
                  stitch_comm_set_algorithm(comms[r], STITCH_ALL_REDUCE, "STAR") == STITCH_OK &&
                  stitch_comm_set_algorithm(comms[r], STITCH_BROADCAST, "star") == STITCH_OK;
        ok &= ok && runs_star(comms[0]) && run_threads(comms, p);
        destroy_all(comms, p);
    }
    stitch_catalogue_t *cat = NULL;
    ok &= stitch_catalogue_load(NULL, &cat, err, sizeof err) == STITCH_ERR_INVALID_ARGUMENT &&
          contains(err, "path is NULL", "NULL path");
    ok &= stitch_catalogue_load(DIR "/star.dsl", NULL, err, sizeof err) == STITCH_ERR_INVALID_ARGUMENT;
    ok &= stitch_catalogue_load(DIR "/nope.dsl", &cat, NULL, 0) == STITCH_ERR_CONFIG && cat == NULL;
    stitch_catalogue_free(NULL);
    stitch_catalogue_free((stitch_catalogue_t *)&st_test_star); /* emitted tables: ignored */
    return ok;
}

static int sc_env(void)
{
    int ok = 1;
    char err[2048] = "";
    stitch_comm_t *comms[8];
    setenv("STITCH_ALGO_FILE", DIR "/star.dsl", 1);
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.algo = "star";
    if (stitch_comm_init_threads(4, &cfg, comms, err, sizeof err) != STITCH_OK) {
        printf("# init with STITCH_ALGO_FILE: %s\n", err);
        ok = 0;
    } else {
        ok &= runs_star(comms[0]) && run_threads(comms, 4);
        destroy_all(comms, 4);
    }
    setenv("STITCH_ALGO", "all_reduce=star,broadcast=star", 1);
    if (stitch_comm_init_threads(3, NULL, comms, err, sizeof err) != STITCH_OK) {
        printf("# init with STITCH_ALGO: %s\n", err);
        ok = 0;
    } else {
        ok &= runs_star(comms[0]) && run_threads(comms, 3);
        destroy_all(comms, 3);
    }
    unsetenv("STITCH_ALGO");
    /* the same file loaded by the program too: star is defined twice */
    stitch_catalogue_t *cat = NULL;
    if (stitch_catalogue_load(DIR "/star.dsl", &cat, err, sizeof err) == STITCH_OK) {
        const stitch_catalogue_t *cats[] = {cat};
        cfg.catalogues = cats, cfg.ncatalogues = 1;
        ok &= stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG &&
              contains(err, "algorithm 'star' for all_reduce is defined twice: by star.dsl (config->catalogues[0]) "
                       "and by star.dsl (STITCH_ALGO_FILE)", "twice");
        stitch_catalogue_free(cat);
    }
    unsetenv("STITCH_ALGO_FILE");
    /* without the file, star is unknown again */
    ok &= stitch_comm_init_threads(2, &(stitch_config_t){.algo = "star"}, comms, err, sizeof err) == STITCH_ERR_CONFIG
          && contains(err, "unknown algorithm 'star'", "without the file");
    return ok;
}

/* ---- adversarial files -------------------------------------------------------------------------------------- */

static char tmpdir[64];

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    return f && fclose(f) == 0 && ok;
}

/* `path` refused by stitch_catalogue_load (when `api`) and by STITCH_ALGO_FILE at init with err containing want
 * (and, when given, want2); neither may block (the FIFO) thanks to alarm(). */
static int refused(const char *path, int api, const char *want, const char *want2)
{
    char err[2048] = "";
    int ok = 1;
    alarm(30); /* a blocking open or read would hang here: SIGALRM ends the test instead */
    if (api) {
        stitch_catalogue_t *cat = NULL;
        stitch_status_t st = stitch_catalogue_load(path, &cat, err, sizeof err);
        if (st != STITCH_ERR_CONFIG || cat) {
            printf("# load %s: %s (%s), want a config error\n", path, stitch_strerror(st), err);
            ok = 0;
        }
        ok &= contains(err, want, path) && (!want2 || contains(err, want2, path));
    }
    stitch_comm_t *comms[4] = {NULL, NULL, NULL, NULL};
    setenv("STITCH_ALGO_FILE", path, 1);
    stitch_status_t st = stitch_comm_init_threads(4, NULL, comms, err, sizeof err);
    unsetenv("STITCH_ALGO_FILE");
    alarm(0);
    if (st != STITCH_ERR_CONFIG || comms[0]) {
        printf("# STITCH_ALGO_FILE=%s: %s (%s), want a config error\n", path, stitch_strerror(st), err);
        if (st == STITCH_OK)
            destroy_all(comms, 4);
        return 0;
    }
    return ok && contains(err, want, path) && (!want2 || contains(err, want2, path));
}

static int sc_errors(void)
{
    char path[128], fifo[128], empty[128], huge[128], junk[128];
    int ok = 1;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/stitch-algofile-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("# mkdtemp: %s\n", strerror(errno));
        return 0;
    }
    ok &= refused(DIR "/nope.dsl", 1, "nope.dsl: error: cannot open: No such file or directory", NULL);
    ok &= refused(DIR, 1, "error: not a regular file (a directory)", NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo.dsl", tmpdir);
    if (mkfifo(fifo, 0600) != 0) {
        printf("# mkfifo: %s\n", strerror(errno));
        ok = 0;
    } else {
        ok &= refused(fifo, 1, "fifo.dsl: error: not a regular file (a FIFO or pipe)", NULL);
    }
    ok &= refused("/dev/zero", 1, "/dev/zero: error: not a regular file (a character device)", NULL);
    snprintf(empty, sizeof empty, "%s/empty.dsl", tmpdir);
    ok &= write_file(empty, "", 0) && refused(empty, 1, "empty.dsl: error: the file defines no algorithm", NULL);
    snprintf(huge, sizeof huge, "%s/huge.dsl", tmpdir);
    int fd = open(huge, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ok &= fd >= 0 && ftruncate(fd, 17 << 20) == 0; /* sparse: nothing is written */
    if (fd >= 0)
        close(fd);
    ok &= refused(huge, 1, "huge.dsl: error: file too large (17825792 bytes); the limit for a source file is 16 MiB",
                  NULL);
    unsigned char bytes[4096];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)((i * 2654435761u) >> 13);
    snprintf(junk, sizeof junk, "%s/junk.bin", tmpdir);
    ok &= write_file(junk, bytes, sizeof bytes) && refused(junk, 1, "does not compile:\n", "junk.bin:1:");
    ok &= refused(DIR "/syntax.dsl", 1, "syntax.dsl does not compile:\n",
                  "/syntax.dsl:5:24: error: expected expression before 'reduce'");
    /* a built-in name and a file that does not verify load fine; init refuses them */
    ok &= refused(DIR "/builtin_name.dsl", 0, "algorithm 'ring' for all_reduce is defined twice: by algos.dsl (built "
                  "in) and by builtin_name.dsl (STITCH_ALGO_FILE)", NULL);
    ok &= refused(DIR "/wrong.dsl", 0, "1 (algorithm, collective) pair fails verification for this communicator "
                  "(p = 4); nothing runs:\n", "/wrong.dsl:3: error: lonely all_reduce is wrong for p = 4");
    stitch_catalogue_t *cat = NULL;
    char err[2048] = "";
    stitch_comm_t *comms[2] = {NULL, NULL};
    if (stitch_catalogue_load(DIR "/wrong.dsl", &cat, err, sizeof err) != STITCH_OK) {
        printf("# load wrong.dsl: %s\n", err);
        ok = 0;
    } else {
        const stitch_catalogue_t *cats[] = {cat};
        stitch_config_t cfg = STITCH_CONFIG_INIT;
        cfg.catalogues = cats, cfg.ncatalogues = 1;
        ok &= stitch_comm_init_threads(1, &cfg, comms, err, sizeof err) == STITCH_OK; /* right for p = 1 */
        if (comms[0])
            stitch_comm_destroy(comms[0]);
        ok &= stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG &&
              contains(err, "lonely all_reduce is wrong for p = 2", "wrong.dsl in config->catalogues");
        stitch_catalogue_free(cat);
    }
    setenv("STITCH_ALGO_FILE", "", 1); /* empty is unset, as for every variable (tunables.def) */
    ok &= stitch_comm_init_threads(2, NULL, comms, err, sizeof err) == STITCH_OK;
    for (int i = 0; i < 2 && ok; i++)
        stitch_comm_destroy(comms[i]);
    unsetenv("STITCH_ALGO_FILE");
    snprintf(path, sizeof path, "rm -rf '%s'", tmpdir);
    ok &= system(path) == 0;
    return ok;
}

/* ---- processes ------------------------------------------------------------------------------------------------ */

static int body_run(stitch_comm_t *comm, int rank, int n, int out)
{
    char why[512];
    if (!runs_star(comm)) {
        say(out, "rank %d does not run star\n", rank);
        return 1;
    }
    if (run_colls(comm, why, sizeof why) != 0) {
        say(out, "%s\n", why);
        return 1;
    }
    return 0;
}

static int body_never(stitch_comm_t *comm, int rank, int n, int out)
{
    say(out, "rank %d: init succeeded\n", rank);
    return 1;
}

static int all_fail_with(const run *r, const char *want1, const char *want2)
{
    int ok = 1;
    for (int i = 0; i < r->n; i++) {
        if (r->status[i] != 2)
            printf("# rank %d exited %d: %s\n", i, r->status[i], r->text[i]), ok = 0;
        ok &= contains(r->text[i], want1, "init") && contains(r->text[i], want2, "init");
    }
    return ok;
}

static stitch_config_t star_cfg[MAXR];

static void set_configs(int n)
{
    for (int i = 0; i < n; i++) {
        star_cfg[i] = (stitch_config_t)STITCH_CONFIG_INIT;
        star_cfg[i].algo = "all_reduce=star,broadcast=star";
        config_of_rank[i] = &star_cfg[i];
    }
}

static void clear_configs(void)
{
    memset(config_of_rank, 0, sizeof config_of_rank);
    memset(env_of_rank, 0, sizeof env_of_rank);
    unsetenv("STITCH_ALGO_FILE");
}

static int sc_proc(void)
{
    run r;
    int ok = 1;
    setenv("STITCH_ALGO_FILE", DIR "/star.dsl", 1); /* the ranks inherit it */
    set_configs(4);
    spawn(&r, 4, body_run, "shm");
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "shm np4");
    spawn(&r, 2, body_run, "tcp");
    reap(&r, DEADLINE_S);
    ok &= all_ok(&r, "tcp np2");
    clear_configs();
    return ok;
}

static int sc_proc_differ(void)
{
    run r;
    static char star[] = "STITCH_ALGO_FILE=" DIR "/star.dsl", other[] = "STITCH_ALGO_FILE=" DIR "/double_ring.dsl";
    for (int i = 0; i < 4; i++)
        env_of_rank[i] = i == 3 ? other : star;
    spawn(&r, 4, body_never, NULL);
    reap(&r, DEADLINE_S);
    int ok = all_fail_with(&r, "ranks disagree on the algorithm catalogues: rank 0 has algos.dsl+star.dsl (hash ",
                           ") but rank 3 has algos.dsl+double_ring.dsl (hash ");
    clear_configs();
    return ok;
}

static int sc_proc_wrong(void)
{
    run r;
    setenv("STITCH_ALGO_FILE", DIR "/wrong.dsl", 1);
    spawn(&r, 3, body_never, NULL);
    reap(&r, DEADLINE_S);
    int ok = all_fail_with(&r, "fails verification for this communicator (p = 3",
                           "/wrong.dsl:3: error: lonely all_reduce is wrong for p = 3");
    clear_configs();
    return ok;
}

static int sc_proc_groups(void)
{
    run r;
    setenv("STITCH_ALGO_FILE", DIR "/ingroup.dsl", 1);
    for (int i = 0; i < 4; i++)
        groups_of_rank[i] = "2x2";
    spawn(&r, 4, body_never, NULL);
    reap(&r, DEADLINE_S);
    int ok = all_fail_with(&r, "(p = 4, its groups); nothing runs",
                           "/ingroup.dsl:7:17: error: ingroup all_reduce is wrong for p = 4 as the communicator's "
                           "groups");
    memset(groups_of_rank, 0, sizeof groups_of_rank);
    clear_configs();
    return ok;
}

int main(int argc, char **argv)
{
    static const proc_scenario sc[] = {
        {"hash", sc_hash}, {"api", sc_api}, {"env", sc_env}, {"errors", sc_errors},
        {"proc", sc_proc}, {"proc.differ", sc_proc_differ}, {"proc.wrong", sc_proc_wrong},
        {"proc.groups", sc_proc_groups},
    };
    return proc_main(sc, (int)(sizeof sc / sizeof *sc), argc, argv);
}
