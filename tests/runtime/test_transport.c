/* test_transport.c - choosing a transport per pair (runtime/transport.c): the table's order, STITCH_TRANSPORT, and
 * the error when a forced transport cannot connect a pair. No sockets: the bootstrap's table is made up here.
 *
 * Each case is a communicator's table (a host letter and a pid per rank; hostnames may repeat across hosts, as
 * in two network namespaces of one machine, whose host identities differ) and a STITCH_TRANSPORT value, and the
 * expected transport of every pair as rows: 's' shm, 't' tcp, 'x' none (an error naming the pair), '-' myself.
 * For every pair the test also asks the bootstrap's question (st_tp_need_data: a tcp data socket?) from both
 * ends, which must agree with each other and with the choice, and runs st_links_open's first step, which must
 * fail naming the pair where a row says 'x' (before this table, STITCH_TRANSPORT=shm across hosts quietly used
 * tcp for those pairs).
 */
#include <stdint.h>

#include "config.h"
#include "runner.h"
#include "transport.h"

typedef struct tp_case {
    const char *what;
    const char *hosts;     /* a letter per rank: its host identity */
    const char *names;     /* a letter per rank: its hostname ("host-A"), NULL: as hosts */
    const char *pids;      /* a digit per rank */
    const char *transport; /* STITCH_TRANSPORT: "auto", "shm", "tcp" */
    const char *expect;    /* rows of the pair matrix, '|' between rows */
} tp_case;

static const tp_case cases[] = {
    {"one host, three processes", "AAA", NULL, "123", "auto", "-ss|s-s|ss-"},
    {"one process, two ranks", "AA", NULL, "11", "auto", "-s|s-"},
    {"two hosts, 2 + 1", "AAB", NULL, "123", "auto", "-st|s-t|tt-"},
    {"two hosts, interleaved", "ABAB", NULL, "1234", "auto", "-tst|t-ts|st-t|tst-"},
    {"two namespaces of one machine (same hostname)", "AAB", "AAA", "123", "auto", "-st|s-t|tt-"},
    {"tcp forced on one host", "AAA", NULL, "123", "tcp", "-tt|t-t|tt-"},
    {"tcp forced across hosts", "AAB", NULL, "123", "tcp", "-tt|t-t|tt-"},
    {"shm forced on one host", "AAA", NULL, "123", "shm", "-ss|s-s|ss-"},
    {"shm forced across hosts", "AAB", NULL, "123", "shm", "-sx|s-x|xx-"},
    {"shm forced across namespaces", "AB", "AA", "12", "shm", "-x|x-"},
};

static char expected(const tp_case *c, int i, int j)
{
    int n = (int)strlen(c->hosts);
    return c->expect[i * (n + 1) + j];
}

static void table(const tp_case *c, st_peer_info *peers, int n)
{
    memset(peers, 0, (size_t)n * sizeof *peers);
    for (int i = 0; i < n; i++) {
        peers[i].host = 0x1000u + (uint64_t)c->hosts[i];
        peers[i].pid = (uint32_t)(c->pids[i] - '0');
        snprintf(peers[i].hostname, sizeof peers[i].hostname, "host-%c", (c->names ? c->names : c->hosts)[i]);
    }
}

/* rank i's view of the pair (i, j): the choice and the bootstrap's data socket question */
static void check_pair(const tp_case *c, st_boot *b, st_settings *s, int i, int j)
{
    char err[512] = "", want[256];
    char e = expected(c, i, j);
    int t = st_tp_select(b->peers, i, j, s->transport, err, sizeof err);
    char got = t < 0 ? 'x' : st_transports[t]->name[0];
    CHECK(got == e, "%s (STITCH_TRANSPORT=%s): ranks %d and %d got '%c', expected '%c' (%s)", c->what, c->transport,
          i, j, got, e, err);
    if (e == 'x') {
        snprintf(want, sizeof want, "STITCH_TRANSPORT=%s cannot connect rank %d (pid %u on %s) and rank %d (pid %u "
                 "on %s)", c->transport, i, b->peers[i].pid, b->peers[i].hostname, j, b->peers[j].pid,
                 b->peers[j].hostname);
        CHECK(strstr(err, want) && strstr(err, "different hosts"),
              "%s: the message\n  %s\ndoes not say\n  %s: ...different hosts", c->what, err, want);
    }
    b->rank = i;
    int mine = st_tp_need_data(b, j, s);
    b->rank = j;
    int theirs = st_tp_need_data(b, i, s);
    CHECK(mine == theirs, "%s: ranks %d and %d disagree on a data socket (%d, %d)", c->what, i, j, mine, theirs);
    CHECK(mine == (e == 't'), "%s: ranks %d and %d: data socket %d for '%c'", c->what, i, j, mine, e);
}

/* st_links_open chooses every peer first, before any setup: where a row has 'x' it fails there, naming the pair. */
static void check_open(const tp_case *c, st_boot *b, st_settings *s, int i)
{
    int n = b->size, bad = -1;
    for (int j = n - 1; j >= 0; j--)
        bad = expected(c, i, j) == 'x' ? j : bad;
    if (bad < 0)
        return; /* connecting for real needs sockets: the proc tests do that */
    st_links l;
    st_tp *tp[8] = {0};
    char err[700] = "", want[64];
    memset(&l, 0, sizeof l);
    b->rank = i;
    stitch_status_t st = st_links_open(&l, b, s, 1000, tp, err, sizeof err);
    snprintf(want, sizeof want, "rank %d: STITCH_TRANSPORT=%s cannot connect rank %d ", i, c->transport, i);
    CHECK(st == STITCH_ERR_CONFIG && strstr(err, want), "%s: rank %d: st_links_open gave %d '%s', expected "
          "STITCH_ERR_CONFIG with '%s'", c->what, i, (int)st, err, want);
    for (int j = 0; j < n; j++)
        CHECK(tp[j] == NULL, "%s: rank %d connected rank %d before failing", c->what, i, j);
    st_links_close(&l);
}

static void test_select(void)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const tp_case *c = &cases[k];
        int n = (int)strlen(c->hosts);
        st_peer_info peers[8];
        st_boot b = {0};
        st_settings s;
        memset(&s, 0, sizeof s);
        CHECK(n <= 8 && (int)strlen(c->expect) == n * (n + 1) - 1, "case %s is malformed", c->what);
        s.transport = strcmp(c->transport, "auto") == 0 ? ST_TP_AUTO : st_tp_find(c->transport);
        CHECK(strcmp(c->transport, "auto") == 0 || s.transport >= 0, "no transport named %s", c->transport);
        table(c, peers, n);
        b.peers = peers, b.size = n;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i != j)
                    check_pair(c, &b, &s, i, j);
        for (int i = 0; i < n; i++)
            check_open(c, &b, &s, i);
    }
}

/* STITCH_TRANSPORT's names are the table's, in preference order. */
static void test_names(void)
{
    char names[64];
    st_tp_names(names, sizeof names);
#ifdef STITCH_HAVE_VERBS /* the verbs entry (tp_verbs.c) goes between them */
    CHECK(strcmp(names, "shm, verbs or tcp") == 0, "names: '%s'", names);
    CHECK(st_tp_find("shm") == 0 && st_tp_find("verbs") == 1 && st_tp_find("tcp") == 2, "shm, verbs, then tcp");
    CHECK(st_ntransports == 3, "%d entries", st_ntransports);
#else
    CHECK(strcmp(names, "shm or tcp") == 0, "names: '%s'", names);
    CHECK(st_tp_find("shm") == 0 && st_tp_find("tcp") == 1, "shm first, then tcp");
    CHECK(st_ntransports == 2, "%d entries", st_ntransports);
#endif
    CHECK(st_tp_find("auto") == -1 && st_tp_find("ib") == -1 && st_tp_find("") == -1, "unknown names");
}

static const st_test tests[] = {
    {"select", test_select, 10},
    {"names", test_names, 10},
};

int main(int argc, char **argv)
{
    return st_run_tests(tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
