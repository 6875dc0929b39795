/* test_errors.c - how libstitch fails: argument checks, configuration, mismatched calls, timeouts and aborts.
 *
 * Every failure must come back as a status with a message that says what, where and why, and no failure may
 * leave a rank hanging: a mismatch or a missing rank ends every involved rank's call within the timeout, and an
 * abort from any thread ends them at once. Messages are checked by substring so that wording can improve
 * without breaking the tests, but the facts (names, counts, ranks) must be there.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "config.h"
#include "runner.h"
#include "stitch.h"

static void check_contains(const char *text, const char *part)
{
    CHECK(strstr(text, part) != NULL, "message \"%s\" lacks \"%s\"", text, part);
}

static void make_comms(int p, const char *algo, int timeout_ms, stitch_comm_t **comms)
{
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = algo;
    cfg.timeout_ms = timeout_ms;
    stitch_status_t st = stitch_comm_init_threads(p, &cfg, comms, err, sizeof err);
    CHECK(st == STITCH_OK, "init: %s", err);
}

static void destroy_comms(int p, stitch_comm_t **comms)
{
    for (int r = 0; r < p; r++)
        CHECK(stitch_comm_destroy(comms[r]) == STITCH_OK, "destroy rank %d", r);
}

/* ---- names ----------------------------------------------------------------------------------------------- */

static void test_names(void)
{
    static const stitch_status_t all[] = {
#define X(name, value, text) STITCH_##name,
        STITCH_STATUS_LIST(X)
#undef X
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(stitch_strerror(all[i]), stitch_strerror(all[j])) != 0, "codes %d and %d share text",
                  all[i], all[j]);
    check_contains(stitch_strerror(STITCH_ERR_TIMEOUT), "STITCH_ERR_TIMEOUT");
    check_contains(stitch_strerror((stitch_status_t)-99), "unknown");
    for (int d = 0; d < STITCH_DTYPE_COUNT; d++) {
        CHECK(stitch_dtype_from_name(stitch_dtype_name(d)) == d, "dtype %d does not round-trip", d);
        CHECK(stitch_dtype_size(d) > 0, "dtype %d has no size", d);
    }
    CHECK(stitch_dtype_from_name("FP32") == STITCH_FP32, "names are case-insensitive");
    CHECK(stitch_dtype_size(STITCH_BF16) == 2 && stitch_dtype_size(STITCH_INT64) == 8, "sizes");
    CHECK(stitch_dtype_name(STITCH_DTYPE_COUNT) == NULL && stitch_dtype_size(-1) == 0, "out of range dtype");
    CHECK(stitch_dtype_from_name("float") == -1 && stitch_dtype_from_name(NULL) == -1, "unknown dtype name");
    for (int o = 0; o < STITCH_OP_COUNT; o++)
        CHECK(stitch_op_from_name(stitch_op_name(o)) == o, "op %d does not round-trip", o);
    for (int c = 0; c < STITCH_COLL_COUNT; c++)
        CHECK(stitch_coll_from_name(stitch_coll_name(c)) == c, "coll %d does not round-trip", c);
    CHECK(stitch_op_name(STITCH_OP_COUNT) == NULL && stitch_coll_name(STITCH_COLL_COUNT) == NULL, "out of range");
    const char *names[8];
    for (int c = 0; c < STITCH_COLL_COUNT; c++) {
        int n = stitch_algorithms(c, names, 8);
        CHECK(n >= 1, "no algorithm for %s", stitch_coll_name(c));
        int ring = 0;
        for (int i = 0; i < n && i < 8; i++)
            ring |= strcmp(names[i], "ring") == 0;
        CHECK(ring || c >= STITCH_ALL_TO_ALL, "no ring for %s", stitch_coll_name(c));
    }
}

/* ---- argument checks ------------------------------------------------------------------------------------- */

typedef struct arg_case {
    const char *what;
    int coll;
    long send_off, recv_off; /* bytes from the start of the buffer; -1: NULL */
    size_t count;
    int dtype, op;
    stitch_status_t want;
    const char *message; /* substring */
} arg_case;

/* All on rank 1 of 2 (recv = send + 1 * count elements is rank 1's in-place form). */
static const arg_case arg_cases[] = {
    {"sendbuf NULL", STITCH_ALL_REDUCE, -1, 0, 4, STITCH_FP32, STITCH_SUM, STITCH_ERR_INVALID_ARGUMENT,
     "stitch_all_reduce: sendbuf is NULL with count 4"},
    {"recvbuf NULL", STITCH_ALL_GATHER, 0, -1, 4, STITCH_FP32, STITCH_SUM, STITCH_ERR_INVALID_ARGUMENT,
     "stitch_all_gather: recvbuf is NULL with count 4"},
    {"bad dtype", STITCH_ALL_REDUCE, 0, 4096, 4, 99, STITCH_SUM, STITCH_ERR_INVALID_ARGUMENT,
     "dtype 99 is not a stitch_dtype_t"},
    {"negative dtype", STITCH_REDUCE_SCATTER, 0, 4096, 4, -1, STITCH_SUM, STITCH_ERR_INVALID_ARGUMENT,
     "dtype -1 is not"},
    {"bad op", STITCH_REDUCE_SCATTER, 0, 4096, 4, STITCH_FP32, 7, STITCH_ERR_INVALID_ARGUMENT,
     "stitch_reduce_scatter: op 7 is not a stitch_op_t"},
    {"misaligned fp32", STITCH_ALL_REDUCE, 1, 4096, 4, STITCH_FP32, STITCH_SUM, STITCH_ERR_INVALID_ARGUMENT,
     "is not aligned to 4 bytes as fp32 requires"},
    {"misaligned fp64 recv", STITCH_ALL_REDUCE, 0, 4100, 4, STITCH_FP64, STITCH_SUM, STITCH_ERR_INVALID_ARGUMENT,
     "recvbuf"},
    {"all_reduce partial overlap", STITCH_ALL_REDUCE, 0, 4, 8, STITCH_FP32, STITCH_SUM,
     STITCH_ERR_INVALID_ARGUMENT, "stitch_all_reduce: recvbuf overlaps sendbuf partially"},
    {"reduce_scatter overlap not at my block", STITCH_REDUCE_SCATTER, 0, 4, 8, STITCH_FP32, STITCH_SUM,
     STITCH_ERR_INVALID_ARGUMENT, "recvbuf == sendbuf + rank * recvcount"},
    {"all_gather input at rank 0's block", STITCH_ALL_GATHER, 0, 0, 8, STITCH_FP32, STITCH_SUM,
     STITCH_ERR_INVALID_ARGUMENT, "sendbuf == recvbuf + rank * sendcount"},
    {"all_gather input overlapping the output's end", STITCH_ALL_GATHER, 60, 0, 8, STITCH_FP32, STITCH_SUM,
     STITCH_ERR_INVALID_ARGUMENT, "overlaps"},
    {"count times ranks overflows", STITCH_REDUCE_SCATTER, 0, 4096, SIZE_MAX / 4, STITCH_FP32, STITCH_SUM,
     STITCH_ERR_INVALID_ARGUMENT, "does not fit"},
    {"count 0 with NULL buffers is fine", STITCH_ALL_REDUCE, -1, -1, 0, STITCH_FP32, STITCH_SUM, STITCH_OK, ""},
    {"count 0 ignores a bad op? no: types first", STITCH_ALL_REDUCE, -1, -1, 0, STITCH_FP32, 9,
     STITCH_ERR_INVALID_ARGUMENT, "op 9"},
};

static stitch_status_t call(int coll, const void *s, void *r, size_t n, int dt, int op, stitch_comm_t *c)
{
    switch (coll) {
    case STITCH_ALL_REDUCE: return stitch_all_reduce(s, r, n, dt, op, c);
    case STITCH_REDUCE_SCATTER: return stitch_reduce_scatter(s, r, n, dt, op, c);
    default: return stitch_all_gather(s, r, n, dt, c);
    }
}

static void *ar_rank(void *arg)
{
    stitch_comm_t *c = arg;
    float v[4] = {1, 2, 3, 4};
    stitch_status_t st = stitch_all_reduce(v, v, 4, STITCH_FP32, STITCH_SUM, c);
    CHECK(st == STITCH_OK && v[3] == 8, "rank %d after argument errors: %s", stitch_comm_rank(c),
          stitch_comm_last_error(c));
    return NULL;
}

/* Each case on fresh communicators: an argument error aborts the communicator (it tells the peers, which would
 * otherwise wait for this call), so rank 0's next call fails at once with rank 1's message as the reason. */
static void test_bad_arguments(void)
{
    stitch_comm_t *comms[2];
    static _Alignas(64) unsigned char buf[8192];
    CHECK(stitch_all_reduce(buf, buf, 4, STITCH_FP32, STITCH_SUM, NULL) == STITCH_ERR_INVALID_ARGUMENT, "NULL comm");
    for (size_t i = 0; i < sizeof arg_cases / sizeof arg_cases[0]; i++) {
        const arg_case *c = &arg_cases[i];
        void *s = c->send_off < 0 ? NULL : buf + c->send_off, *r = c->recv_off < 0 ? NULL : buf + c->recv_off;
        make_comms(2, "ring", 5000, comms);
        stitch_status_t st = call(c->coll, s, r, c->count, c->dtype, c->op, comms[1]);
        CHECK(st == c->want, "%s: got %s (%s)", c->what, stitch_strerror(st), stitch_comm_last_error(comms[1]));
        if (st != STITCH_OK) {
            check_contains(stitch_comm_last_error(comms[1]), c->message);
            float v[4] = {1, 2, 3, 4};
            CHECK(stitch_all_reduce(v, v, 4, STITCH_FP32, STITCH_SUM, comms[0]) == STITCH_ERR_ABORTED,
                  "%s: rank 0 after rank 1's argument error: %s", c->what, stitch_comm_last_error(comms[0]));
            check_contains(stitch_comm_last_error(comms[0]), "rank 1: ");
            check_contains(stitch_comm_last_error(comms[0]), c->message);
        } else { /* a count-0 call is a call: every rank makes it, or the next one is a mismatch */
            CHECK(call(c->coll, s, r, c->count, c->dtype, c->op, comms[0]) == STITCH_OK, "rank 0's count 0");
            pthread_t t[2];
            for (int q = 0; q < 2; q++)
                pthread_create(&t[q], NULL, ar_rank, comms[q]);
            for (int q = 0; q < 2; q++)
                pthread_join(t[q], NULL);
        }
        destroy_comms(2, comms);
    }
    CHECK(stitch_comm_destroy(NULL) == STITCH_ERR_INVALID_ARGUMENT, "destroy NULL");
}

static void *bad_rank(void *arg)
{
    float v[4];
    usleep(50 * 1000); /* let rank 0 be waiting already (it returns just as well if not) */
    CHECK(stitch_all_reduce(NULL, v, 4, STITCH_FP32, STITCH_SUM, arg) == STITCH_ERR_INVALID_ARGUMENT, "rank 1");
    return NULL;
}

/* Rank 0 waits inside the call while rank 1 makes an argument error: rank 0 returns at once, not after its
 * 5 s timeout, with rank 1's message. */
static void test_argument_error_tells_peers(void)
{
    stitch_comm_t *comms[2];
    pthread_t t;
    float v[4] = {1, 2, 3, 4};
    make_comms(2, "ring", 5000, comms);
    CHECK(pthread_create(&t, NULL, bad_rank, comms[1]) == 0, "pthread_create");
    double t0 = st_now();
    stitch_status_t st = stitch_all_reduce(v, v, 4, STITCH_FP32, STITCH_SUM, comms[0]);
    double took = st_now() - t0;
    pthread_join(t, NULL);
    CHECK(st == STITCH_ERR_ABORTED, "rank 0 got %s: %s", stitch_strerror(st), stitch_comm_last_error(comms[0]));
    CHECK(took < 1.0, "rank 0 returned after %.2f s", took);
    check_contains(stitch_comm_last_error(comms[0]), "rank 1: stitch_all_reduce: sendbuf is NULL with count 4");
    destroy_comms(2, comms);
}

/* A destroyed handle is detected: every function fails (or returns its "none" value) instead of reading freed
 * memory, a second destroy included. Run under ASan this would report a use-after-free if the handle were freed. */
static void test_destroyed(void)
{
    stitch_comm_t *comms[2];
    float v[4] = {1, 2, 3, 4};
    make_comms(2, "ring", 1000, comms);
    destroy_comms(2, comms);
    CHECK(stitch_all_reduce(v, v, 4, STITCH_FP32, STITCH_SUM, comms[0]) == STITCH_ERR_INVALID_USAGE, "all_reduce");
    check_contains(stitch_comm_last_error(comms[0]), "stitch_all_reduce: the communicator was destroyed");
    CHECK(stitch_comm_destroy(comms[1]) == STITCH_ERR_INVALID_USAGE, "double destroy");
    check_contains(stitch_comm_last_error(comms[1]), "stitch_comm_destroy: the communicator was destroyed");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_ALL_REDUCE, "ring") == STITCH_ERR_INVALID_USAGE, "set");
    CHECK(stitch_comm_rank(comms[0]) == -1 && stitch_comm_size(comms[0]) == -1, "rank and size");
    CHECK(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE) == NULL, "algorithm");
    CHECK(stitch_comm_groups(comms[0], NULL, 0) == -1, "groups");
    stitch_comm_abort(comms[0]); /* ignored */
    check_contains(stitch_strerror(STITCH_ERR_INVALID_USAGE), "STITCH_ERR_INVALID_USAGE");
}

static void *reduce_rank0(void *arg)
{
    stitch_comm_t *c = arg;
    float v[4] = {1, 2, 3, 4};
    stitch_status_t st = stitch_all_reduce(v, v, 4, STITCH_FP32, STITCH_SUM, c);
    CHECK(st == STITCH_OK && v[3] == 8, "the call in progress: %s (%s)", stitch_strerror(st),
          stitch_comm_last_error(c));
    return NULL;
}

/* Rank 0's call in test_concurrent_calls. The main thread polls the communicator with set_algorithm, so this
 * call may find set_algorithm inside: that is the same usage error seen from the other side, it changes nothing,
 * and the call is made again until it gets in. */
static void *reduce_rank0_entering(void *arg)
{
    stitch_comm_t *c = arg;
    float v[4] = {1, 2, 3, 4};
    stitch_status_t st;
    while ((st = stitch_all_reduce(v, v, 4, STITCH_FP32, STITCH_SUM, c)) == STITCH_ERR_INVALID_USAGE &&
           strstr(stitch_comm_last_error(c), "another thread is inside stitch_comm_set_algorithm"))
        sched_yield();
    CHECK(st == STITCH_OK && v[3] == 8, "the call in progress: %s (%s)", stitch_strerror(st),
          stitch_comm_last_error(c));
    return NULL;
}

/* A second thread's call on a communicator that is inside a call fails with STITCH_ERR_INVALID_USAGE naming the
 * call in progress, and changes nothing: that call then completes normally. */
static void test_concurrent_calls(void)
{
    stitch_comm_t *comms[2];
    pthread_t t;
    float w[8] = {0};
    make_comms(2, "ring", 5000, comms);
    CHECK(pthread_create(&t, NULL, reduce_rank0_entering, comms[0]) == 0, "pthread_create");
    /* set_algorithm takes the communicator too and is harmless: it fails once the other thread is inside */
    stitch_status_t st = STITCH_OK;
    for (double t0 = st_now(); st == STITCH_OK && st_now() - t0 < 30.0;)
        if ((st = stitch_comm_set_algorithm(comms[0], STITCH_ALL_GATHER, "ring")) == STITCH_OK)
            usleep(100); /* poll: the other thread enters at its own pace */
    CHECK(st == STITCH_ERR_INVALID_USAGE, "set_algorithm during a call: %s", stitch_strerror(st));
    check_contains(stitch_comm_last_error(comms[0]), "another thread is inside stitch_all_reduce");
    st = stitch_all_gather(w, w, 4, STITCH_FP32, comms[0]);
    CHECK(st == STITCH_ERR_INVALID_USAGE, "all_gather during a call: %s", stitch_strerror(st));
    check_contains(stitch_comm_last_error(comms[0]), "stitch_all_gather: another thread is inside stitch_all_reduce");
    CHECK(stitch_comm_destroy(comms[0]) == STITCH_ERR_INVALID_USAGE, "destroy during a call");
    reduce_rank0(comms[1]); /* rank 1 joins: rank 0's call completes */
    pthread_join(t, NULL);
    destroy_comms(2, comms);
}

static void test_bad_init(void)
{
    stitch_comm_t *comms[2] = {NULL, NULL};
    char err[512] = "";
    CHECK(stitch_comm_init_threads(0, NULL, comms, err, sizeof err) == STITCH_ERR_INVALID_ARGUMENT, "p = 0");
    check_contains(err, "nranks");
    CHECK(stitch_comm_init_threads(2, NULL, NULL, err, sizeof err) == STITCH_ERR_INVALID_ARGUMENT, "NULL comms");
    CHECK(stitch_comm_init_threads(2, NULL, comms, NULL, 0) == STITCH_OK, "NULL err buffer is allowed");
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), "auto") == 0, "default algorithm is auto");
    destroy_comms(2, comms);
}

/* auto under policy size (STITCH_SELECT=size, the rule auto had before the cost model): all_reduce runs
 * mesh_oneshot while a rank sends at most STITCH_ONESHOT_BYTES with it, ring above; a forced name holds for every
 * size; "auto" brings the choice by size back. (The other policies: tests/runtime/test_select.c.) */
static void test_auto_choice(void)
{
    stitch_comm_t *comms[4];
    setenv("STITCH_SELECT", "size", 1);
    make_comms(4, NULL, 0, comms); /* 48 KiB default: 3 peers * 4096 floats = 49152 bytes */
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_REDUCE, 4096, STITCH_FP32), "mesh_oneshot") == 0,
          "small all_reduce");
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_REDUCE, 4097, STITCH_FP32), "ring") == 0,
          "large all_reduce");
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_GATHER, 1, STITCH_FP32), "ring") == 0,
          "all_gather has no small choice");
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_TO_ALL, 1, STITCH_FP32), "mesh") == 0,
          "no ring: the catalogue's first");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_ALL_REDUCE, "rhd") == STITCH_OK, "force rhd");
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_REDUCE, 1, STITCH_FP32), "rhd") == 0, "forced");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_ALL_REDUCE, "AUTO") == STITCH_OK, "back to auto");
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_REDUCE, 1, STITCH_FP32), "mesh_oneshot") == 0,
          "auto again");
    CHECK(stitch_comm_algorithm_for(comms[0], STITCH_ALL_REDUCE, 1, STITCH_DTYPE_COUNT) == NULL, "bad dtype");
    destroy_comms(4, comms);
    setenv("STITCH_ONESHOT_BYTES", "0", 1);
    make_comms(4, NULL, 0, comms);
    unsetenv("STITCH_ONESHOT_BYTES");
    CHECK(strcmp(stitch_comm_algorithm_for(comms[0], STITCH_ALL_REDUCE, 1, STITCH_FP32), "ring") == 0,
          "STITCH_ONESHOT_BYTES=0 turns it off");
    destroy_comms(4, comms);
    unsetenv("STITCH_SELECT");
}

/* ---- configuration --------------------------------------------------------------------------------------- */

static void test_unknown_algorithm(void)
{
    stitch_comm_t *comms[2] = {NULL, NULL};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    char err[512];
    cfg.algo = "nosuch";
    CHECK(stitch_comm_init_threads(2, &cfg, comms, err, sizeof err) == STITCH_ERR_CONFIG, "config->algo nosuch");
    check_contains(err, "unknown algorithm 'nosuch'");
    check_contains(err, "known: ");
    check_contains(err, "ring");
    CHECK(comms[0] == NULL && comms[1] == NULL, "comms touched on failure");

    make_comms(2, "ring", 0, comms);
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_ALL_GATHER, "nosuch") == STITCH_ERR_UNKNOWN_ALGORITHM, "set");
    check_contains(stitch_comm_last_error(comms[0]), "stitch_comm_set_algorithm: unknown algorithm 'nosuch' for "
                                                     "all_gather (known: ");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_COLL_COUNT, "nosuch") == STITCH_ERR_UNKNOWN_ALGORITHM, "all");
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), "ring") == 0, "failed set changed nothing");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_COLL_COUNT, "MESH") == STITCH_OK, "case-insensitive");
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_REDUCE_SCATTER), "mesh") == 0, "set for every coll");
    CHECK(stitch_comm_set_algorithm(comms[0], STITCH_ALL_REDUCE, NULL) == STITCH_ERR_INVALID_ARGUMENT, "NULL name");
    destroy_comms(2, comms);
}

typedef struct env_case {
    const char *var, *value;
    stitch_status_t want;
    const char *message;
} env_case;

static const env_case env_cases[] = {
    {"STITCH_ALGO", "garbage", STITCH_ERR_CONFIG, "STITCH_ALGO: unknown algorithm 'garbage' (known: auto; all_reduce: "},
    {"STITCH_ALGO", "all_reduce=", STITCH_ERR_CONFIG, "malformed item 'all_reduce='"},
    {"STITCH_ALGO", "bcast=ring", STITCH_ERR_CONFIG, "unknown collective 'bcast' (known: all_reduce, "},
    {"STITCH_ALGO", "broadcast=nb_binary,all_to_all=pairwise", STITCH_OK, ""},
    {"STITCH_GROUPS", "3x2", STITCH_ERR_CONFIG, "STITCH_GROUPS='3x2': expected SxL (S groups of L ranks, S * L = 2)"},
    {"STITCH_GROUPS", "1,2", STITCH_ERR_CONFIG, "STITCH_GROUPS='1,2'"},
    {"STITCH_GROUPS", "1,,1", STITCH_ERR_CONFIG, "STITCH_GROUPS='1,,1'"},
    {"STITCH_GROUPS", "0x2", STITCH_ERR_CONFIG, "STITCH_GROUPS='0x2'"},
    {"STITCH_GROUPS", "2x1", STITCH_OK, ""},
    {"STITCH_GROUPS", "1,1", STITCH_OK, ""},
    {"STITCH_ALGO", "ring,,mesh", STITCH_ERR_CONFIG, "malformed"},
    {"STITCH_ALGO", "all_gather=nosuch", STITCH_ERR_CONFIG, "unknown algorithm 'nosuch' for all_gather"},
    {"STITCH_ALGO", " Mesh ", STITCH_OK, ""},
    {"STITCH_ALGO", "all_reduce=rhd, all_gather=mesh", STITCH_OK, ""},
    {"STITCH_TIMEOUT", "abc", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='abc': expected a positive decimal number of seconds"},
    {"STITCH_TIMEOUT", "0", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='0'"},
    {"STITCH_TIMEOUT", "-1", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='-1'"},
    {"STITCH_TIMEOUT", "5s", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='5s'"},
    {"STITCH_TIMEOUT", "nan", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='nan'"},
    {"STITCH_TIMEOUT", "0.25", STITCH_OK, ""},
    {"STITCH_SEGMENT_BYTES", "12", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='12'"},
    {"STITCH_SEGMENT_BYTES", "256k", STITCH_OK, ""},
    {"STITCH_ONESHOT_BYTES", "-1", STITCH_ERR_CONFIG, "STITCH_ONESHOT_BYTES='-1': expected bytes between 0 and 1G"},
    {"STITCH_ONESHOT_BYTES", "16k", STITCH_OK, ""},
    {"STITCH_ALGO", "auto", STITCH_OK, ""},
    /* process-mode tunables: checked by every communicator's settings (config.c), used by process mode */
#ifdef STITCH_HAVE_VERBS
    {"STITCH_TRANSPORT", "ib", STITCH_ERR_CONFIG, "STITCH_TRANSPORT='ib': expected auto, shm, verbs or tcp"},
#else
    {"STITCH_TRANSPORT", "ib", STITCH_ERR_CONFIG, "STITCH_TRANSPORT='ib': expected auto, shm or tcp"},
#endif
    {"STITCH_TRANSPORT", "tcp", STITCH_OK, ""},
    {"STITCH_SHM_RING_BYTES", "3000", STITCH_ERR_CONFIG,
     "STITCH_SHM_RING_BYTES='3000': expected a power of two between 4096 and 1G (a size such as 65536, 64K or 1MiB)"},
    {"STITCH_TCP_RING_BYTES", "96k", STITCH_ERR_CONFIG, "STITCH_TCP_RING_BYTES='96k': expected a power of two"},
    {"STITCH_TCP_RING_BYTES", "64k", STITCH_OK, ""},
    {"STITCH_SPIN_US", "-5", STITCH_ERR_CONFIG, "STITCH_SPIN_US='-5': expected microseconds between 0 and 10000000"},
    {"STITCH_SPIN_US", "10us", STITCH_ERR_CONFIG, "STITCH_SPIN_US='10us'"},
    {"STITCH_SPIN_US", "0", STITCH_OK, ""},
    {"STITCH_IB_GID_INDEX", "256", STITCH_ERR_CONFIG,
     "STITCH_IB_GID_INDEX='256': expected a GID index between 0 and 255"},
    {"STITCH_IB_GID_INDEX", "1x", STITCH_ERR_CONFIG, "STITCH_IB_GID_INDEX='1x'"},
    {"STITCH_IB_GID_INDEX", "3", STITCH_OK, ""},
    /* every numeric tunable: decimal digits only (no sign, blank, hex or exponent), nothing after the number or
     * its suffix, and no value whose suffix overflows (these wrapped to small values once) */
    {"STITCH_TIMEOUT", "0x10", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='0x10': expected a positive decimal number"},
    {"STITCH_TIMEOUT", "inf", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='inf'"},
    {"STITCH_TIMEOUT", "1e3", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='1e3'"},
    {"STITCH_TIMEOUT", "+5", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='+5'"},
    {"STITCH_TIMEOUT", " 5", STITCH_ERR_CONFIG, "STITCH_TIMEOUT=' 5'"},
    {"STITCH_TIMEOUT", "5 ", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='5 '"},
    {"STITCH_TIMEOUT", "-0.5", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='-0.5'"},
    {"STITCH_TIMEOUT", "0.0", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='0.0'"},
    {"STITCH_TIMEOUT", "1.", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='1.'"},
    {"STITCH_TIMEOUT", "2000001", STITCH_ERR_CONFIG, "at most 2000000"},
    {"STITCH_TIMEOUT", "99999999999999999999999", STITCH_ERR_CONFIG, "STITCH_TIMEOUT='9999"},
    {"STITCH_SEGMENT_BYTES", "18014398509481988k", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='18014398509481988k'"},
    {"STITCH_SEGMENT_BYTES", "17592186044420m", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='17592186044420m'"},
    {"STITCH_SEGMENT_BYTES", "99999999999999999999", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='9999"},
    {"STITCH_SEGMENT_BYTES", " 4096", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES=' 4096'"},
    {"STITCH_SEGMENT_BYTES", "+4096", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='+4096'"},
    {"STITCH_SEGMENT_BYTES", "0x1000", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='0x1000'"},
    {"STITCH_SEGMENT_BYTES", "4kk", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='4kk'"},
    {"STITCH_SEGMENT_BYTES", "k", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='k'"},
    {"STITCH_SEGMENT_BYTES", "1025m", STITCH_ERR_CONFIG, "STITCH_SEGMENT_BYTES='1025m'"},
    {"STITCH_ONESHOT_BYTES", "18014398509481984k", STITCH_ERR_CONFIG, "STITCH_ONESHOT_BYTES='18014398509481984k'"},
    {"STITCH_ONESHOT_BYTES", "17592186044416m", STITCH_ERR_CONFIG, "STITCH_ONESHOT_BYTES='17592186044416m'"},
    {"STITCH_ONESHOT_BYTES", " 0", STITCH_ERR_CONFIG, "STITCH_ONESHOT_BYTES=' 0'"},
    {"STITCH_SHM_RING_BYTES", "17592186044417m", STITCH_ERR_CONFIG, "STITCH_SHM_RING_BYTES='17592186044417m'"},
    {"STITCH_SHM_RING_BYTES", "18014398509481988k", STITCH_ERR_CONFIG, "STITCH_SHM_RING_BYTES='18014398509481988k'"},
    {"STITCH_SHM_RING_BYTES", "+64k", STITCH_ERR_CONFIG, "STITCH_SHM_RING_BYTES='+64k'"},
    {"STITCH_TCP_RING_BYTES", "17592186044417m", STITCH_ERR_CONFIG, "STITCH_TCP_RING_BYTES='17592186044417m'"},
    {"STITCH_TCP_RING_BYTES", " 64k", STITCH_ERR_CONFIG, "STITCH_TCP_RING_BYTES=' 64k'"},
    {"STITCH_SPIN_US", " 5", STITCH_ERR_CONFIG, "STITCH_SPIN_US=' 5'"},
    {"STITCH_SPIN_US", "+5", STITCH_ERR_CONFIG, "STITCH_SPIN_US='+5'"},
    {"STITCH_SPIN_US", "0x10", STITCH_ERR_CONFIG, "STITCH_SPIN_US='0x10'"},
    {"STITCH_SPIN_US", "99999999999999999999", STITCH_ERR_CONFIG, "STITCH_SPIN_US='9999"},
    {"STITCH_SPIN_US", "10000001", STITCH_ERR_CONFIG, "STITCH_SPIN_US='10000001'"},
    {"STITCH_SECRET", "a-secret-of-256-characters-is-too-long-"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
     STITCH_ERR_CONFIG, "STITCH_SECRET: 256 characters, at most 255"},
    {"STITCH_SECRET", "a good secret", STITCH_OK, ""},
};

/* Good values parse to what they say (config.c directly): suffixes, the largest values, fractions of seconds. */
static const struct {
    const char *var, *value;
    size_t want;
} value_cases[] = {
    {"STITCH_TIMEOUT", "0.25", 250},          {"STITCH_TIMEOUT", "1.0001", 1001},
    {"STITCH_TIMEOUT", "2000000", 2000000000}, {"STITCH_TIMEOUT", "0.0000001", 1},
    {"STITCH_SEGMENT_BYTES", "1m", 1 << 20},  {"STITCH_SEGMENT_BYTES", "1048576K", 1 << 30},
    {"STITCH_SEGMENT_BYTES", "1024M", 1 << 30}, {"STITCH_SEGMENT_BYTES", "4096", 4096},
    {"STITCH_ONESHOT_BYTES", "0", 0},         {"STITCH_ONESHOT_BYTES", "007k", 7168},
    {"STITCH_SHM_RING_BYTES", "64k", 65536},  {"STITCH_TCP_RING_BYTES", "1024m", 1 << 30},
    {"STITCH_SPIN_US", "10000000", 10000000}, {"STITCH_SPIN_US", "0", 0},
    /* one size grammar (core/st_size.h) with stitchc sim -b and stitch-perf -b/-e */
    {"STITCH_SEGMENT_BYTES", "1MiB", 1 << 20}, {"STITCH_SEGMENT_BYTES", "1MB", 1 << 20},
    {"STITCH_SEGMENT_BYTES", "1G", 1 << 30},   {"STITCH_ONESHOT_BYTES", "1.5KiB", 1536},
    {"STITCH_SEGMENT_BYTES", "1M", 1 << 20},   {"STITCH_SEGMENT_BYTES", "1048576", 1 << 20},
};

static size_t setting_of(const st_settings *s, const char *var)
{
    if (strcmp(var, "STITCH_TIMEOUT") == 0)
        return (size_t)s->timeout_ms;
    if (strcmp(var, "STITCH_SEGMENT_BYTES") == 0)
        return s->segment_bytes;
    if (strcmp(var, "STITCH_ONESHOT_BYTES") == 0)
        return s->oneshot_max;
    if (strcmp(var, "STITCH_SHM_RING_BYTES") == 0)
        return s->shm_ring_bytes;
    if (strcmp(var, "STITCH_TCP_RING_BYTES") == 0)
        return s->tcp_ring_bytes;
    return (size_t)s->spin_us;
}

static void test_config_values(void)
{
    for (size_t i = 0; i < sizeof value_cases / sizeof value_cases[0]; i++) {
        st_settings s;
        char err[512] = "";
        setenv(value_cases[i].var, value_cases[i].value, 1);
        stitch_status_t st = st_settings_load(NULL, &s, err, sizeof err);
        unsetenv(value_cases[i].var);
        CHECK(st == STITCH_OK, "%s='%s': %s", value_cases[i].var, value_cases[i].value, err);
        CHECK(setting_of(&s, value_cases[i].var) == value_cases[i].want, "%s='%s' gave %zu, want %zu",
              value_cases[i].var, value_cases[i].value, setting_of(&s, value_cases[i].var), value_cases[i].want);
    }
}

/* One rule for every variable: set but empty is unset (HCCL's rule for its own variables). Each tunable set to ""
 * loads exactly what the unset environment loads; only STITCH_SECRET's is flagged, for rank 0's warning. */
static void test_empty_is_unset(void)
{
    st_settings unset, empty;
    char err[512] = "";
    CHECK(st_settings_load(NULL, &unset, err, sizeof err) == STITCH_OK, "unset: %s", err);
    for (int i = 0; st_tunable_decl_of(i); i++) {
        const char *var = st_tunable_decl_of(i)->name;
        err[0] = '\0';
        setenv(var, "", 1);
        stitch_status_t st = st_settings_load(NULL, &empty, err, sizeof err);
        unsetenv(var);
        int flagged = empty.secret_empty;
        empty.secret_empty = 0;
        CHECK(st == STITCH_OK, "%s='': %s (empty should mean unset)", var, err);
        CHECK(st != STITCH_OK || memcmp(&unset, &empty, sizeof unset) == 0, "%s='' loads other settings than unset",
              var);
        CHECK(flagged == (strcmp(var, "STITCH_SECRET") == 0), "%s='': secret_empty %d", var, flagged);
    }
}

static void test_environment(void)
{
    for (size_t i = 0; i < sizeof env_cases / sizeof env_cases[0]; i++) {
        const env_case *c = &env_cases[i];
        stitch_comm_t *comms[2];
        char err[512] = "";
        setenv(c->var, c->value, 1);
        stitch_status_t st = stitch_comm_init_threads(2, NULL, comms, err, sizeof err);
        unsetenv(c->var);
        CHECK(st == c->want, "%s='%s': got %s (%s)", c->var, c->value, stitch_strerror(st), err);
        if (st == STITCH_OK)
            destroy_comms(2, comms);
        else
            check_contains(err, c->message);
    }
    /* per-collective choice, and config->algo over the environment */
    stitch_comm_t *comms[2];
    setenv("STITCH_ALGO", "all_reduce=rhd,all_gather=mesh", 1);
    make_comms(2, NULL, 0, comms);
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), "rhd") == 0, "all_reduce=rhd");
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_REDUCE_SCATTER), "auto") == 0, "default for the rest");
    CHECK(strcmp(stitch_comm_algorithm(comms[1], STITCH_ALL_GATHER), "mesh") == 0, "all_gather=mesh");
    destroy_comms(2, comms);
    /* a plain name applies where it exists; the other collectives keep the default */
    const char *names[32];
    int n = stitch_algorithms(STITCH_ALL_REDUCE, names, 32);
    for (int i = 0; i < n && i < 32; i++) {
        setenv("STITCH_ALGO", names[i], 1);
        make_comms(2, NULL, 0, comms);
        CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), names[i]) == 0, "%s", names[i]);
        destroy_comms(2, comms);
    }
    setenv("STITCH_ALGO", "garbage", 1);
    make_comms(2, "mesh", 0, comms);
    CHECK(strcmp(stitch_comm_algorithm(comms[0], STITCH_ALL_REDUCE), "mesh") == 0, "config wins over env");
    destroy_comms(2, comms);
}

/* ---- failures inside a collective ------------------------------------------------------------------------ */

typedef struct rank_call {
    stitch_comm_t *comm;
    int coll, dtype;
    size_t count;
    int skip; /* this rank does not call */
    stitch_status_t st;
    double seconds;
    char msg[512];
} rank_call;

static void *rank_main(void *arg)
{
    rank_call *rc = arg;
    static _Thread_local double buf[4 * 1024 * 8];
    if (rc->skip)
        return NULL;
    double t0 = st_now();
    /* in place; for all_gather the input sits at my block of the output */
    size_t mine = rc->coll == STITCH_ALL_GATHER ? (size_t)stitch_comm_rank(rc->comm) * rc->count : 0;
    rc->st = call(rc->coll, (char *)buf + mine * stitch_dtype_size(rc->dtype), buf, rc->count, rc->dtype,
                  STITCH_SUM, rc->comm);
    rc->seconds = st_now() - t0;
    snprintf(rc->msg, sizeof rc->msg, "%s", stitch_comm_last_error(rc->comm));
    return NULL;
}

static void run_ranks(int p, rank_call *rc)
{
    pthread_t t[16];
    for (int r = 0; r < p; r++)
        CHECK(pthread_create(&t[r], NULL, rank_main, &rc[r]) == 0, "pthread_create");
    for (int r = 0; r < p; r++)
        pthread_join(t[r], NULL);
}

/* Rank 2 of 4 calls with a different count (or dtype): it and the ranks that meet it report a mismatch naming
 * both values, the others an abort; nobody hangs; later calls fail at once. */
static void mismatch(const char *algo, int coll, int dtype2, size_t count2, const char *a, const char *b)
{
    enum { P = 4 };
    stitch_comm_t *comms[P];
    rank_call rc[P];
    make_comms(P, algo, 5000, comms);
    for (int r = 0; r < P; r++)
        rc[r] = (rank_call){comms[r], coll, r == 2 ? dtype2 : STITCH_FP32, r == 2 ? count2 : 1024, 0, 0, 0, ""};
    run_ranks(P, rc);
    CHECK(rc[2].st == STITCH_ERR_MISMATCH, "%s: rank 2 got %s: %s", algo, stitch_strerror(rc[2].st), rc[2].msg);
    for (int r = 0; r < P; r++) {
        CHECK(rc[r].st == STITCH_ERR_MISMATCH || rc[r].st == STITCH_ERR_ABORTED, "%s rank %d: %s", algo, r,
              stitch_strerror(rc[r].st));
        CHECK(rc[r].seconds < 2.0, "%s rank %d took %.2f s", algo, r, rc[r].seconds);
        if (rc[r].st == STITCH_ERR_MISMATCH) {
            check_contains(rc[r].msg, a);
            check_contains(rc[r].msg, b);
            check_contains(rc[r].msg, "rank 2 has");
        } else {
            check_contains(rc[r].msg, "aborted");
        }
    }
    rc[0].skip = 0;
    rank_main(&rc[0]);
    CHECK(rc[0].st == STITCH_ERR_ABORTED, "a later call on an aborted communicator: %s", stitch_strerror(rc[0].st));
    destroy_comms(P, comms);
}

static void test_mismatch(void)
{
    for (int coll = 0; coll < STITCH_BROADCAST; coll++) { /* the rooted ones and all_to_all: test_collectives.c */
        const char *names[32];
        char spec[128];
        int n = stitch_algorithms(coll, names, 32);
        for (int i = 0; i < n && i < 32; i++) {
            snprintf(spec, sizeof spec, "%s=%s", stitch_coll_name(coll), names[i]);
            if (coll == STITCH_ALL_REDUCE) { /* with mesh_oneshot: two tiny calls (4096 and 4000 bytes: threads'
                                              * ST_TINY_BYTES), then a tiny one against one that is not (8000) */
                mismatch(spec, coll, STITCH_FP32, 1000, "count 1024", "count 1000");
                mismatch(spec, coll, STITCH_FP32, 2000, "count 1024", "count 2000");
            }
            else if (coll == STITCH_REDUCE_SCATTER)
                mismatch(spec, coll, STITCH_FP64, 1024, "dtype fp32", "dtype fp64");
            else
                mismatch(spec, coll, STITCH_FP32, 1, "count 1024", "count 1");
        }
    }
}

/* Rank 2 of 3 never calls: the others fail within the timeout, naming the missing rank. */
static void timeout_case(int timeout_ms)
{
    enum { P = 3 };
    stitch_comm_t *comms[P];
    rank_call rc[P];
    make_comms(P, "ring", timeout_ms, comms);
    for (int r = 0; r < P; r++)
        rc[r] = (rank_call){comms[r], STITCH_ALL_REDUCE, STITCH_FP32, 1024, r == 2, 0, 0, ""};
    run_ranks(P, rc);
    int timeouts = 0;
    for (int r = 0; r < 2; r++) {
        CHECK(rc[r].st == STITCH_ERR_TIMEOUT || rc[r].st == STITCH_ERR_ABORTED, "rank %d: %s", r,
              stitch_strerror(rc[r].st));
        CHECK(rc[r].seconds >= 0.15 && rc[r].seconds < 1.5, "rank %d returned after %.3f s", r, rc[r].seconds);
        check_contains(rc[r].msg, "timed out after 200 ms waiting for rank 2");
        timeouts += rc[r].st == STITCH_ERR_TIMEOUT;
    }
    CHECK(timeouts >= 1, "nobody reported the timeout");
    rc[2].skip = 0;
    rank_main(&rc[2]);
    CHECK(rc[2].st == STITCH_ERR_ABORTED, "the late rank: %s", stitch_strerror(rc[2].st));
    destroy_comms(P, comms);
}

static void test_timeout(void)
{
    timeout_case(200);
    setenv("STITCH_TIMEOUT", "0.2", 1);
    timeout_case(0);
}

/* Rank 3 of 4 stalls (does not call) after one good call: every other rank fails within the timeout naming
 * rank 3 as the rank furthest behind, including rank 1, whose own neighbours (0 and 2) are not missing but
 * waiting for rank 3 (ring: rank 1 times out waiting for rank 0). */
static void test_stall_named(void)
{
    enum { P = 4 };
    stitch_comm_t *comms[P];
    rank_call rc[P];
    make_comms(P, "ring", 300, comms);
    for (int call_no = 0; call_no < 2; call_no++) {
        for (int r = 0; r < P; r++)
            rc[r] = (rank_call){comms[r], STITCH_ALL_REDUCE, STITCH_FP32, 4096, call_no == 1 && r == 3, 0, 0, ""};
        run_ranks(P, rc);
    }
    for (int r = 0; r < 3; r++) {
        CHECK(rc[r].st == STITCH_ERR_TIMEOUT || rc[r].st == STITCH_ERR_ABORTED, "rank %d: %s", r,
              stitch_strerror(rc[r].st));
        check_contains(rc[r].msg, "furthest behind: rank 3, which has not entered call number 1");
    }
    destroy_comms(P, comms);
}

/* all_to_all_v refuses receive ranges that overlap (the later writer would win), naming both peers, whether the
 * displacements ascend with the rank or not; empty ranges overlap nothing, and a permuted layout is fine. */
typedef struct v_case {
    size_t rcounts[4], rdispls[4];
    const char *message; /* NULL: accepted */
} v_case;

static const v_case v_cases[] = {
    {{3, 3, 3, 3}, {0, 2, 5, 8}, "the receive ranges of rank 0 (rdispls[0] = 0, recvcounts[0] = 3) and rank 1 "
                                 "(rdispls[1] = 2, recvcounts[1] = 3) overlap"},
    {{3, 3, 3, 3}, {6, 0, 4, 10}, "the receive ranges of rank 0 (rdispls[0] = 6, recvcounts[0] = 3) and rank 2"},
    {{3, 3, 3, 3}, {9, 6, 0, 0}, "rank 2 (rdispls[2] = 0, recvcounts[2] = 3) and rank 3 (rdispls[3] = 0"},
    {{3, 3, 3, 3}, {0, 3, 6, 8}, "rank 2 (rdispls[2] = 6, recvcounts[2] = 3) and rank 3"},
};

static void *v_rank(void *arg)
{
    stitch_comm_t *c = arg;
    int me = stitch_comm_rank(c);
    float s[4] = {(float)me, (float)me + 10}, r[4] = {-1, -1, -1, -1};
    size_t sc[2] = {1, 1}, sd[2] = {0, 1}, rc[2] = {1, 1}, rd[2] = {3, 1}; /* rank 0's block at 3, rank 1's at 1 */
    stitch_status_t st = stitch_all_to_all_v(s, sc, sd, r, rc, rd, STITCH_FP32, c);
    CHECK(st == STITCH_OK, "permuted rdispls: %s", stitch_comm_last_error(c));
    CHECK(r[3] == (float)(me == 0 ? 0 : 10) && r[1] == (float)(me == 0 ? 1 : 11), "rank %d got %g %g", me, r[3],
          r[1]);
    return NULL;
}

static void test_a2av_overlap(void)
{
    stitch_comm_t *comms[4];
    float send[16] = {0}, recv[16];
    size_t sc[4] = {3, 3, 3, 3}, sd[4] = {0, 3, 6, 9};
    for (size_t i = 0; i < sizeof v_cases / sizeof v_cases[0]; i++) {
        const v_case *c = &v_cases[i];
        size_t mine[4];
        memcpy(mine, sc, sizeof mine);
        mine[0] = c->rcounts[0]; /* rank 0 sends itself what it expects */
        make_comms(4, "mesh", 500, comms);
        stitch_status_t st = stitch_all_to_all_v(send, mine, sd, recv, c->rcounts, c->rdispls, STITCH_FP32, comms[0]);
        CHECK(st == STITCH_ERR_INVALID_ARGUMENT, "case %zu: got %s (%s)", i, stitch_strerror(st),
              stitch_comm_last_error(comms[0]));
        check_contains(stitch_comm_last_error(comms[0]), c->message);
        destroy_comms(4, comms);
    }
    make_comms(2, "mesh", 5000, comms);
    pthread_t t[2];
    for (int r = 0; r < 2; r++)
        CHECK(pthread_create(&t[r], NULL, v_rank, comms[r]) == 0, "pthread_create");
    for (int r = 0; r < 2; r++)
        pthread_join(t[r], NULL);
    destroy_comms(2, comms);
}

static void *abort_later(void *arg)
{
    usleep(100 * 1000);
    stitch_comm_abort(arg);
    return NULL;
}

/* Rank 0 waits for rank 1, which never calls; another thread aborts through rank 1's handle. */
static void test_abort(void)
{
    stitch_comm_t *comms[2];
    rank_call rc = {0};
    pthread_t t;
    make_comms(2, "ring", 60000, comms);
    rc.comm = comms[0], rc.coll = STITCH_ALL_REDUCE, rc.dtype = STITCH_FP32, rc.count = 1024;
    CHECK(pthread_create(&t, NULL, abort_later, comms[1]) == 0, "pthread_create");
    rank_main(&rc);
    pthread_join(t, NULL);
    CHECK(rc.st == STITCH_ERR_ABORTED, "got %s", stitch_strerror(rc.st));
    CHECK(rc.seconds < 1.0, "abort took %.3f s to be noticed", rc.seconds);
    check_contains(rc.msg, "stitch_comm_abort");
    stitch_comm_abort(comms[0]); /* twice is fine */
    destroy_comms(2, comms);
}

/* A count-0 call returns at once even when no other rank calls. */
static void test_count_zero(void)
{
    stitch_comm_t *comms[3];
    make_comms(3, "mesh", 1000, comms);
    for (int coll = 0; coll < STITCH_COLL_COUNT; coll++)
        for (int r = 0; r < 3; r++)
            CHECK(call(coll, NULL, NULL, 0, STITCH_INT8, STITCH_MAX, comms[r]) == STITCH_OK, "coll %d", coll);
    destroy_comms(3, comms);
}

static const st_test tests[] = {
    {"names", test_names, 10},
    {"bad_arguments", test_bad_arguments, 20},
    {"argument_error_tells_peers", test_argument_error_tells_peers, 20},
    {"destroyed", test_destroyed, 10},
    {"concurrent_calls", test_concurrent_calls, 20},
    {"a2av_overlap", test_a2av_overlap, 20},
    {"stall_named", test_stall_named, 20},
    {"bad_init", test_bad_init, 10},
    {"auto_choice", test_auto_choice, 10},
    {"unknown_algorithm", test_unknown_algorithm, 10},
    {"empty_is_unset", test_empty_is_unset, 10},
    {"environment", test_environment, 10},
    {"config_values", test_config_values, 10},
    {"mismatch", test_mismatch, 60},
    {"timeout", test_timeout, 20},
    {"abort", test_abort, 20},
    {"count_zero", test_count_zero, 10},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
