/* test_split.c - stitch_comm_split, stitch_comm_dup and stitch_barrier on thread ranks: nested splits with data,
 * STITCH_UNDEFINED, inherited choices, a user catalogue and the topology restricted to the members, and a rank
 * that takes no part (a clear error naming it within the timeout, never a hang). The process-mode twin is
 * tests/proc/test_proc_split.c; the bodies are shared (split_body.h).
 */
#include "runner.h"
#include "split_body.h"
#include "st_test_levels.h"

typedef struct ctx {
    stitch_comm_t **comms;
    int (*body)(stitch_comm_t *comm, char *why, size_t len);
    int odd, absent;
    char why[64][512];
    int rc[64];
} ctx;

static void rank_main(void *arg, int r)
{
    ctx *c = arg;
    if (c->body)
        c->rc[r] = c->body(c->comms[r], c->why[r], sizeof c->why[r]);
    else
        c->rc[r] = sb_mismatch(c->comms[r], c->odd, c->absent, c->why[r], sizeof c->why[r]);
}

static void run_body(int p, const stitch_config_t *cfg, ctx *c)
{
    stitch_comm_t *comms[64];
    char err[1024] = "";
    stitch_status_t st = stitch_comm_init_threads(p, cfg, comms, err, sizeof err);
    CHECK(st == STITCH_OK, "init: %s", err);
    c->comms = comms;
    st_run_ranks(p, rank_main, c);
    for (int r = 0; r < p; r++) {
        CHECK(c->rc[r] == 0, "rank %d: %s", r, c->why[r]);
        stitch_comm_destroy(comms[r]);
    }
}

static void t_nested(void)
{
    static ctx c = {.body = sb_split_nested};
    for (int p = 2; p <= 9; p += 7) { /* 2: one rank alone, 9: halves of 4 */
        memset(c.rc, 0, sizeof c.rc);
        run_body(p, NULL, &c);
    }
}

static void t_inherit(void)
{
    static ctx c = {.body = sb_inherits_choice};
    run_body(5, NULL, &c);
}

/* A user catalogue on a three-level topology "[2,2],[2,2]": the children find levels_ag by name and run it on the
 * parent's levels restricted to them; their levels and groups are checked. */
static const stitch_catalogue_t *const levels_cat[] = {&st_test_levels};

static int levels_body(stitch_comm_t *comm, char *why, size_t len)
{
    int me = stitch_comm_rank(comm);
    stitch_comm_t *pod = NULL, *odd = NULL;
    /* by pod (ranks 0-3, 4-7) in reverse order, and by parity (one rank of each server) */
    stitch_status_t st = stitch_comm_split(comm, me / 4, -me, &pod);
    if (st == STITCH_OK)
        st = stitch_comm_split(comm, me % 2, me, &odd);
    if (st != STITCH_OK)
        return sb_fail(why, len, "split: %s", stitch_comm_last_error(comm));
    int sizes[8];
    /* pod: the servers {me^1 pairs} in new ranks: servers of 2, 2; one pod; 3 levels */
    if (stitch_comm_levels(pod) != 3 || stitch_comm_level_groups(pod, 0, sizes, 8) != 2 || sizes[0] != 2 ||
        sizes[1] != 2 || stitch_comm_level_groups(pod, 1, sizes, 8) != 1 || sizes[0] != 4)
        return sb_fail(why, len, "rank %d: pod's topology: %d levels, %d servers", me, stitch_comm_levels(pod),
                       stitch_comm_level_groups(pod, 0, NULL, 0));
    /* odd: one rank per server: 4 servers of 1, 2 pods of 2 */
    if (stitch_comm_levels(odd) != 3 || stitch_comm_level_groups(odd, 0, sizes, 8) != 4 || sizes[0] != 1 ||
        stitch_comm_level_groups(odd, 1, sizes, 8) != 2 || sizes[0] != 2 || sizes[1] != 2)
        return sb_fail(why, len, "rank %d: odd's topology: %d levels, %d servers, %d pods", me,
                       stitch_comm_levels(odd), stitch_comm_level_groups(odd, 0, NULL, 0),
                       stitch_comm_level_groups(odd, 1, NULL, 0));
    stitch_comm_t *sub[2] = {pod, odd};
    for (int i = 0; i < 2; i++) {
        int n = stitch_comm_size(sub[i]), r = stitch_comm_rank(sub[i]);
        int32_t mine[4], all[4 * 8];
        for (int k = 0; k < 4; k++)
            mine[k] = r * 100 + k;
        if ((st = stitch_comm_set_algorithm(sub[i], STITCH_ALL_GATHER, "levels_ag")) != STITCH_OK ||
            (st = stitch_all_gather(mine, all, 4, STITCH_INT32, sub[i])) != STITCH_OK)
            return sb_fail(why, len, "rank %d: levels_ag on child %d: %s: %s", me, i, stitch_strerror(st),
                           stitch_comm_last_error(sub[i]));
        for (int q = 0; q < n; q++)
            for (int k = 0; k < 4; k++)
                if (all[q * 4 + k] != q * 100 + k)
                    return sb_fail(why, len, "rank %d child %d: block %d element %d is %d", me, i, q, k,
                                   all[q * 4 + k]);
    }
    stitch_comm_destroy(pod);
    stitch_comm_destroy(odd);
    return 0;
}

static void t_catalogue_topo(void)
{
    static ctx c = {.body = levels_body};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.topo = "[2,2],[2,2]";
    cfg.catalogues = levels_cat, cfg.ncatalogues = 1;
    run_body(8, &cfg, &c);
}

static void mismatch(int absent)
{
    static ctx c;
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.timeout_ms = 1500;
    c.odd = 2, c.absent = absent;
    double t0 = st_now();
    run_body(4, &cfg, &c);
    CHECK(st_now() - t0 < 30, "took %.1f s", st_now() - t0);
}

static void t_mismatch(void)
{
    mismatch(0);
}

static void t_absent(void)
{
    mismatch(1);
}

/* One rank's argument error (newcomm NULL) fails every rank at once with its message, not after the timeout. */
static int null_body(stitch_comm_t *comm, char *why, size_t len)
{
    stitch_comm_t *sub = NULL;
    int me = stitch_comm_rank(comm);
    stitch_status_t st = stitch_comm_split(comm, 0, 0, me == 1 ? NULL : &sub);
    if (st == STITCH_OK || !strstr(stitch_comm_last_error(comm), "newcomm is NULL"))
        return sb_fail(why, len, "rank %d: %s: %s", me, stitch_strerror(st), stitch_comm_last_error(comm));
    return 0;
}

static void t_null_newcomm(void)
{
    static ctx c = {.body = null_body};
    stitch_config_t cfg = STITCH_CONFIG_INIT;
    cfg.timeout_ms = 20000;
    double t0 = st_now();
    run_body(3, &cfg, &c);
    CHECK(st_now() - t0 < 10, "took %.1f s: the peers waited for their timeout", st_now() - t0);
}

static const st_test tests[] = {
    {"null_newcomm", t_null_newcomm, 60},
    {"nested", t_nested, 60},
    {"inherit", t_inherit, 60},
    {"catalogue_topo", t_catalogue_topo, 60},
    {"mismatch", t_mismatch, 60},
    {"absent", t_absent, 60},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
