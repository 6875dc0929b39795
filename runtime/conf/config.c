/* config.c - every tunable of the runtime, read in this one place.
 *
 * The tunables (STITCH_* environment variables) are declared in tunables.def, with their defaults, meanings and
 * notes; that file is the reference. Here each one has a loader, st_load_<name>, that checks its value (the
 * declared default when the variable is unset) and stores it in st_settings; st_settings_load walks the table
 * the declaration expands into, so nothing else in the runtime calls getenv for a tunable. A malformed value is
 * an error with what, where and why, never a silent default (tunables.def says why, and what counts as a number).
 * A stitch_config_t field, where one exists, wins over the variable; st_settings_load_origin records for every
 * tunable whether the communicator, the environment or the default gave its value (stitch-info prints it).
 *
 * HCCL's variables are read here too, with HCCL's own rules: HCCL_ALGO by a parser that follows HCCL's
 * (hccl_algo.c, shared with stitchc sim; spec 11.2: the same accepted values, the same rejections in the same order, each message naming the variable,
 * its value, HCCL's reason and HCCL's expected form), except that operator names may be in any case;
 * HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO (12.1) and HCCL_DETERMINISTIC (14.2) likewise. Where HCCL accepts a
 * value stitch cannot honour (NHR_V1, strict determinism, a ratio above 1) stitch fails init and says why.
 *
 * What is not read here: the launchers' own variables (OMPI_*, PMI_*, SLURM_*, RANK/WORLD_SIZE/LOCAL_RANK/
 * MASTER_ADDR/MASTER_PORT, and stitch's STITCH_RANK/STITCH_SIZE/STITCH_ROOT). They are not tunables but the
 * launcher's description of the job, needed before any communicator or configuration exists (stitch_launcher,
 * stitch_get_unique_id), and which of them count depends on which launcher is found: bootstrap.c reads them,
 * all through one function (st_launcher_env), next to the detection that interprets them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "st_size.h"
#include "st_topo.h"
#include "st_steptab.h"

/* Copy one item of the spec, [s, s + n), into dst without surrounding blanks; 0 when it is empty or too long. */
static int st_copy_item(char dst[ST_NAME_MAX], const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0 || n >= ST_NAME_MAX)
        return 0;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 1;
}

/* One item: "name" or "coll=name". */
static stitch_status_t st_parse_item(const char *item, size_t n, st_algo_spec *out, char *err, size_t errlen)
{
    const char *eq = memchr(item, '=', n);
    char coll[ST_NAME_MAX], name[ST_NAME_MAX];
    if (!eq) {
        if (!st_copy_item(name, item, n))
            goto bad;
        strcpy(out->every, name);
        for (int c = 0; c < STITCH_COLL_COUNT; c++) /* a later plain name overrides earlier coll=name items */
            out->coll[c][0] = '\0';
        return STITCH_OK;
    }
    if (!st_copy_item(coll, item, (size_t)(eq - item)) || !st_copy_item(name, eq + 1, n - (size_t)(eq - item) - 1))
        goto bad;
    int c = stitch_coll_from_name(coll);
    if (c < 0) {
        snprintf(err, errlen, "unknown collective '%s' (known: %s)", coll, st_coll_list());
        return STITCH_ERR_CONFIG;
    }
    strcpy(out->coll[c], name);
    return STITCH_OK;
bad:
    snprintf(err, errlen, "malformed item '%.*s': expected an algorithm name or collective=name", (int)n, item);
    return STITCH_ERR_CONFIG;
}

stitch_status_t st_parse_algo_spec(const char *spec, st_algo_spec *out, char *err, size_t errlen)
{
    const char *s = spec;
    memset(out, 0, sizeof *out);
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        stitch_status_t st = st_parse_item(s, n, out, err, errlen);
        if (st != STITCH_OK)
            return st;
        if (!comma)
            return STITCH_OK;
        s = comma + 1;
    }
}

/* Decimal digits at *s, at least one, into *out; advances *s. 0 when there is no digit or the value passes max
 * (the digits are still consumed, so the caller's message shows the whole value). strto* are not used: they
 * accept blanks, signs, hex and (strtod) exponents, inf and nan, and read the decimal point from the locale. */
static int st_digits(const char **s, unsigned long long max, unsigned long long *out)
{
    const char *p = *s;
    unsigned long long v = 0;
    int ok = 1;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (max - d) / 10)
            ok = 0;
        else
            v = v * 10 + d;
    }
    ok &= p != *s;
    *s = p;
    *out = v;
    return ok;
}

/* STITCH_TIMEOUT: "S" or "S.F", decimal, positive, at most 2000000 s, nothing else; rounded up to milliseconds. */
static stitch_status_t st_parse_timeout(const char *name, const char *v, int *ms, char *err, size_t errlen)
{
    const char *s = v;
    unsigned long long sec, total;
    int ok = st_digits(&s, 2000000, &sec);
    total = sec * 1000;
    if (ok && *s == '.') {
        const char *f = ++s;
        int below_ms = 0;
        for (unsigned scale = 100; *s >= '0' && *s <= '9'; s++, scale /= 10)
            if (scale)
                total += (unsigned)(*s - '0') * scale; /* the first three digits are milliseconds */
            else
                below_ms |= *s != '0';                 /* anything finer rounds up to the next one */
        total += (unsigned)below_ms;
        ok = s > f;
    }
    if (!ok || *s || total == 0 || total > 2000000000ull) {
        snprintf(err, errlen, "%s='%s': expected a positive decimal number of seconds such as 30 or 0.5 "
                 "(at most 2000000)", name, v);
        return STITCH_ERR_CONFIG;
    }
    *ms = (int)total;
    return STITCH_OK;
}

/* A byte count between lo and 1 GiB in st_size.h's grammar (1048576, 1M, 1m, 1MiB: STITCH_SEGMENT_BYTES,
 * STITCH_ONESHOT_BYTES, the ring sizes); no value wraps. */
static stitch_status_t st_parse_bytes(const char *name, const char *v, size_t lo, size_t *bytes, char *err,
                                      size_t errlen)
{
    const unsigned long long hi = 1ull << 30;
    unsigned long long n;
    if (!st_parse_size(v, hi, &n) || n < lo) {
        snprintf(err, errlen, "%s='%s': expected bytes between %zu and 1G (a size such as 65536, 64K or 1MiB)", name, v, lo);
        return STITCH_ERR_CONFIG;
    }
    *bytes = (size_t)n;
    return STITCH_OK;
}

/* STITCH_SHM_RING_BYTES, STITCH_TCP_RING_BYTES: a power of two with an optional k or m suffix, 4 KiB to 1 GiB. */
static stitch_status_t st_parse_pow2(const char *name, const char *v, size_t *out, char *err, size_t errlen)
{
    if (st_parse_bytes(name, v, 4096, out, err, errlen) != STITCH_OK || (*out & (*out - 1))) {
        snprintf(err, errlen, "%s='%s': expected a power of two between 4096 and 1G (a size such as 65536, 64K or 1MiB)", name, v);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

stitch_status_t st_parse_groups(const char *spec, int p, int *sizes, int *ngroups, char *err, size_t errlen)
{
    if (st_groups_spec(spec, p, sizes, ngroups) != p) { /* st_topo.h: the one grammar, stitchc -g's too */
        snprintf(err, errlen, "'%s': expected SxL (S groups of L ranks, S * L = %d) or group sizes adding up to "
                 "%d, e.g. \"2,2\"", spec, p, p);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

int st_groups_count(const char *spec)
{
    char *end;
    long a = strtol(spec, &end, 10), n = a;
    if ((*end == 'x' || *end == 'X') && a > 0 && a <= ST_MAX_RANKS)
        n = a * strtol(end + 1, NULL, 10);
    else
        for (const char *s = end; *s == ',' && n > 0 && n <= ST_MAX_RANKS; s = end)
            n += strtol(s + 1, &end, 10);
    int *sizes = n > 0 && n <= ST_MAX_RANKS ? malloc(sizeof *sizes * (size_t)n) : NULL;
    int ng, ok = sizes && st_parse_groups(spec, (int)n, sizes, &ng, NULL, 0) == STITCH_OK; /* its rules decide */
    free(sizes);
    return ok ? (int)n : -1;
}

/* ---- the loaders, one per tunable, named by tunables.def --------------------------------------------------------
 * Each gets the variable's value (env, NULL when unset) and the declaration (t: the name for messages, the
 * default text), and sets its fields of out whether or not the variable is set. */
typedef struct st_tunable st_tunable;
typedef stitch_status_t st_load_fn(const st_tunable *t, const char *env, const stitch_config_t *config,
                                   st_settings *out, char *err, size_t errlen);
struct st_tunable {
    const char *name;
    const char *def; /* the text loaded when the variable is unset; NULL: unset means not given */
    st_load_fn *load;
};

/* What a loader with a default checks: the environment's value, else the declared default. */
static const char *st_value(const st_tunable *t, const char *env)
{
    return env ? env : t->def;
}

/* STITCH_ALGO: config->algo, else the variable, else the default; algo_source says which, for messages. */
static stitch_status_t st_load_algo(const st_tunable *t, const char *env, const stitch_config_t *config,
                                    st_settings *out, char *err, size_t errlen)
{
    const char *spec = t->def;
    out->algo_source = "default";
    if (config && config->algo)
        spec = config->algo, out->algo_source = "config->algo";
    else if (env)
        spec = env, out->algo_source = t->name;
    char why[256];
    if (st_parse_algo_spec(spec, &out->algo, why, sizeof why) != STITCH_OK) {
        snprintf(err, errlen, "%s='%s': %s", out->algo_source, spec, why);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* STITCH_TIMEOUT: config->timeout_ms when it is not 0 (the variable is then not read). */
static stitch_status_t st_load_timeout(const st_tunable *t, const char *env, const stitch_config_t *config,
                                       st_settings *out, char *err, size_t errlen)
{
    if (config && config->timeout_ms != 0) {
        out->timeout_ms = config->timeout_ms;
        return STITCH_OK;
    }
    return st_parse_timeout(t->name, st_value(t, env), &out->timeout_ms, err, errlen);
}

static stitch_status_t st_load_segment(const st_tunable *t, const char *env, const stitch_config_t *config,
                                       st_settings *out, char *err, size_t errlen)
{
    return st_parse_bytes(t->name, st_value(t, env), 4096, &out->segment_bytes, err, errlen);
}

static stitch_status_t st_load_oneshot(const st_tunable *t, const char *env, const stitch_config_t *config,
                                       st_settings *out, char *err, size_t errlen)
{
    return st_parse_bytes(t->name, st_value(t, env), 0, &out->oneshot_max, err, errlen);
}

static const char *const st_policy_names[ST_SEL_POLICY_COUNT] = {"model", "hccl", "size", "hccl_guide"};

const char *st_sel_policy_name(int policy)
{
    return policy >= 0 && policy < ST_SEL_POLICY_COUNT ? st_policy_names[policy] : "?";
}

int st_sel_policy_find(const char *name)
{
    for (int i = 0; i < ST_SEL_POLICY_COUNT; i++)
        if (strcasecmp(name, st_policy_names[i]) == 0)
            return i;
    return -1;
}

/* STITCH_SELECT: auto's policy (select.h), one of its names in any case. */
static stitch_status_t st_load_select(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    (void)config;
    const char *v = st_value(t, env);
    out->select = st_sel_policy_find(v);
    if (out->select < 0) {
        snprintf(err, errlen, "%s='%s': expected model, hccl, hccl_guide or size", t->name, v);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

static const char *const st_ahc_names[ST_AHC_INNER_COUNT] = {"auto", "nb", "nhr", "ring"};

const char *st_ahc_inner_name(int v)
{
    return v >= 0 && v < ST_AHC_INNER_COUNT ? st_ahc_names[v] : "?";
}

int st_ahc_inner_find(const char *name)
{
    for (int i = 0; name && i < ST_AHC_INNER_COUNT; i++)
        if (strcasecmp(name, st_ahc_names[i]) == 0)
            return i;
    return -1;
}

/* STITCH_AHC_INTRA, STITCH_AHC_INTER (config->ahc_intra, ->ahc_inter first): auto, nb, nhr or ring in any case. */
static stitch_status_t st_load_ahc(const st_tunable *t, const char *env, const stitch_config_t *config,
                                   st_settings *out, char *err, size_t errlen, int k)
{
    const char *given = config ? (k ? config->ahc_inter : config->ahc_intra) : NULL;
    const char *v = given ? given : st_value(t, env);
    out->ahc_inner[k] = st_ahc_inner_find(v);
    if (out->ahc_inner[k] < 0) {
        snprintf(err, errlen, "%s='%s': expected auto, nb, nhr or ring (AHC's algorithm %s groups, spec 9.6)",
                 given ? (k ? "config->ahc_inter" : "config->ahc_intra") : t->name, v, k ? "across" : "inside");
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

static stitch_status_t st_load_ahc_intra(const st_tunable *t, const char *env, const stitch_config_t *config,
                                         st_settings *out, char *err, size_t errlen)
{
    return st_load_ahc(t, env, config, out, err, errlen, 0);
}

static stitch_status_t st_load_ahc_inter(const st_tunable *t, const char *env, const stitch_config_t *config,
                                         st_settings *out, char *err, size_t errlen)
{
    return st_load_ahc(t, env, config, out, err, errlen, 1);
}

/* STITCH_GROUPS: kept as text (config->groups first) and parsed at init, when the number of ranks is known. */
static stitch_status_t st_load_groups(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    int given = config && config->groups;
    out->groups = given ? config->groups : env;
    out->groups_source = given ? "config->groups" : t->name;
    return STITCH_OK;
}

/* STITCH_TOPO: kept as text (config->topo first) and read at init (topology.h's st_topology_load, once per job or
 * process), when the number of ranks is known. Runs after st_load_groups: the topology and the groups are one
 * setting in two forms, so the communicator's form wins over the environment's, and both forms at the same level
 * are an error naming both. */
static stitch_status_t st_load_topo(const st_tunable *t, const char *env, const stitch_config_t *config,
                                    st_settings *out, char *err, size_t errlen)
{
    int comm_topo = config && config->topo, comm_groups = config && config->groups;
    out->topo = comm_topo ? config->topo : env;
    out->topo_source = comm_topo ? "config->topo" : t->name;
    if (comm_topo && !comm_groups)
        out->groups = NULL, out->groups_source = NULL; /* config->topo over $STITCH_GROUPS */
    else if (comm_groups && !comm_topo)
        out->topo = NULL, out->topo_source = NULL; /* config->groups over $STITCH_TOPO */
    if (out->topo && out->groups) {
        snprintf(err, errlen, "%s='%s' and %s='%s' are both given: set one (the topology's layout gives the "
                 "groups)", out->topo_source, out->topo, out->groups_source, out->groups);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* STITCH_ALGO_FILE: a path, read at init by the registry (runtime/catalogue.c). */
static stitch_status_t st_load_algo_file(const st_tunable *t, const char *env, const stitch_config_t *config,
                                         st_settings *out, char *err, size_t errlen)
{
    out->algo_file = env;
    return STITCH_OK;
}

/* STITCH_TRANSPORT: auto, or the name of an entry of transport.c's table (shm, tcp); empty is auto. */
static stitch_status_t st_load_transport(const st_tunable *t, const char *env, const stitch_config_t *config,
                                         st_settings *out, char *err, size_t errlen)
{
    out->transport = ST_TP_AUTO;
    out->transport_name = st_value(t, env); /* resolved and checked against the table by st_tp_settings_check */
    return STITCH_OK;
}

static stitch_status_t st_load_shm_ring(const st_tunable *t, const char *env, const stitch_config_t *config,
                                        st_settings *out, char *err, size_t errlen)
{
    return st_parse_pow2(t->name, st_value(t, env), &out->shm_ring_bytes, err, errlen);
}

static stitch_status_t st_load_tcp_ring(const st_tunable *t, const char *env, const stitch_config_t *config,
                                        st_settings *out, char *err, size_t errlen)
{
    return st_parse_pow2(t->name, st_value(t, env), &out->tcp_ring_bytes, err, errlen);
}

/* An optional decimal from 0 to max: -1 when unset; `what` names what was expected ("microseconds"). */
static stitch_status_t st_parse_optional(const st_tunable *t, const char *env, unsigned long long max,
                                         const char *what, long *out, char *err, size_t errlen)
{
    const char *s = env;
    unsigned long long v;
    *out = -1;
    if (!env)
        return STITCH_OK;
    if (!st_digits(&s, max, &v) || *s) {
        snprintf(err, errlen, "%s='%s': expected %s between 0 and %llu", t->name, env, what, max);
        return STITCH_ERR_CONFIG;
    }
    *out = (long)v;
    return STITCH_OK;
}

/* STITCH_SPIN_US: microseconds, 0 to 10 s; unset is -1 (proc.c decides from the ranks per core). */
static stitch_status_t st_load_spin(const st_tunable *t, const char *env, const stitch_config_t *config,
                                    st_settings *out, char *err, size_t errlen)
{
    return st_parse_optional(t, env, 10000000, "microseconds", &out->spin_us, err, errlen);
}

/* STITCH_CMA: 0 or 1 (proc/exec_pull.c; docs/performance.md says why the default is 0). */
static stitch_status_t st_load_cma(const st_tunable *t, const char *env, const stitch_config_t *config,
                                   st_settings *out, char *err, size_t errlen)
{
    return st_parse_optional(t, st_value(t, env), 1, "0 or 1", &out->cma, err, errlen);
}

/* STITCH_FUSE: 0 or 1 (exec_msg.c). */
static stitch_status_t st_load_fuse(const st_tunable *t, const char *env, const stitch_config_t *config,
                                    st_settings *out, char *err, size_t errlen)
{
    (void)config;
    if (!env)
        env = t->def;
    if (strcmp(env, "0") != 0 && strcmp(env, "1") != 0) {
        snprintf(err, errlen, "%s='%s': expected 0 or 1", t->name, env);
        return STITCH_ERR_CONFIG;
    }
    out->fuse = env[0] == '1';
    return STITCH_OK;
}

/* STITCH_TCP_CC: a congestion control name for the kernel to accept or refuse (proc.c), or "system"; "" unset. */
static stitch_status_t st_load_tcp_cc(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    out->tcp_cc[0] = '\0';
    if (!env || !*env)
        return STITCH_OK;
    if (strlen(env) >= sizeof out->tcp_cc) {
        snprintf(err, errlen, "%s='%s': a congestion control name has at most %zu characters", t->name, env,
                 sizeof out->tcp_cc - 1);
        return STITCH_ERR_CONFIG;
    }
    snprintf(out->tcp_cc, sizeof out->tcp_cc, "%s", env);
    return STITCH_OK;
}

/* STITCH_SOCKET_IFNAME: interpreted by bootstrap.c; unset or empty is NULL. */
static stitch_status_t st_load_ifname(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    out->socket_ifname = env && *env ? env : NULL;
    return STITCH_OK;
}

/* STITCH_IB_DEV: checked by the verbs entry (st_tp_settings_check), so a malformed list fails at init. */
static stitch_status_t st_load_ib_dev(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    out->ib_dev = env && *env ? env : NULL;
    return STITCH_OK;
}

/* STITCH_IB_GID_INDEX: 0 to 255; unset is -1 (the transport picks, st_gid_pick). */
static stitch_status_t st_load_ib_gid(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    long v;
    stitch_status_t st = st_parse_optional(t, env, 255, "a GID index", &v, err, errlen);
    out->ib_gid_index = (int)v;
    return st;
}

/* STITCH_IB_RING_BYTES: a power of two, 4 KiB to 8 MiB (a credit's immediate carries 24 bits of bytes). */
static stitch_status_t st_load_ib_ring(const st_tunable *t, const char *env, const stitch_config_t *config,
                                       st_settings *out, char *err, size_t errlen)
{
    const char *v = st_value(t, env);
    if (st_parse_pow2(t->name, v, &out->ib_ring_bytes, err, errlen) != STITCH_OK ||
        out->ib_ring_bytes > ((size_t)8 << 20)) {
        snprintf(err, errlen, "%s='%s': expected a power of two between 4096 and 8M (a size such as 65536, 64K or 1MiB)", t->name, v);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* STITCH_IB_RMA_BYTES: 0 (off), or 4096 to 1 GiB. */
static stitch_status_t st_load_ib_rma(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    const char *v = st_value(t, env);
    if (strcmp(v, "0") == 0) {
        out->ib_rma_bytes = 0;
        return STITCH_OK;
    }
    return st_parse_bytes(t->name, v, 4096, &out->ib_rma_bytes, err, errlen);
}

/* STITCH_IB_MR_CACHE_BYTES: 4 KiB to 1 GiB. */
static stitch_status_t st_load_ib_mr_cache(const st_tunable *t, const char *env, const stitch_config_t *config,
                                           st_settings *out, char *err, size_t errlen)
{
    return st_parse_bytes(t->name, st_value(t, env), 4096, &out->ib_mr_cache_bytes, err, errlen);
}

/* STITCH_IBVERBS_LIB: read by verbs_load.c itself (once per process, before any settings); only its form here. */
static stitch_status_t st_load_ibverbs_lib(const st_tunable *t, const char *env, const stitch_config_t *config,
                                           st_settings *out, char *err, size_t errlen)
{
    (void)out;
    return STITCH_OK;
}

/* STITCH_SECRET: unset (or empty) is NULL: bootstrap.c then uses the launcher's or the id's, and warns where
 * that is no secret. An empty one is flagged: it is likely a mistake (STITCH_SECRET=$UNSET_VARIABLE), and rank 0
 * says so whatever the mode (bootstrap.c). */
static stitch_status_t st_load_secret(const st_tunable *t, const char *env, const stitch_config_t *config,
                                      st_settings *out, char *err, size_t errlen)
{
    const char *raw = getenv(t->name);
    out->secret = env;
    out->secret_empty = raw && !*raw;
    if (out->secret && strlen(out->secret) > ST_SECRET_MAX) {
        /* never cut: two secrets that differ only past the cut would make the same key */
        snprintf(err, errlen, "%s: %zu characters, at most %d", t->name, strlen(out->secret), ST_SECRET_MAX);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* STITCH_DEBUG: nothing to store; st_debug reads it on every call, as it is needed before any settings exist. */
static stitch_status_t st_load_debug(const st_tunable *t, const char *env, const stitch_config_t *config,
                                     st_settings *out, char *err, size_t errlen)
{
    return STITCH_OK;
}

/* HCCL_ALGO: config->hccl_algo, else the variable (HCCL reads an empty one as unset). */
static stitch_status_t st_load_hccl_algo(const st_tunable *t, const char *env, const stitch_config_t *config,
                                         st_settings *out, char *err, size_t errlen)
{
    const char *v = env, *name = t->name;
    int given = 0;
    if (config && config->hccl_algo)
        v = config->hccl_algo, name = "config->hccl_algo";
    if (!v)
        return STITCH_OK;
    stitch_status_t st = st_parse_hccl_algo(name, v, &out->hccl_algo, &given, err, errlen);
    if (st == STITCH_OK && given)
        out->hccl_algo_text = v, out->hccl_algo_source = name;
    return st;
}

static stitch_status_t st_load_split_ratio(const st_tunable *t, const char *env, const stitch_config_t *config,
                                           st_settings *out, char *err, size_t errlen)
{
    out->split_ratio = -1, out->split_source = NULL;
    if (config && config->split_ratio != 0) { /* 0 is "not set", as in HCCL's communicator config */
        double r = config->split_ratio;
        if (!(r > 0 && r <= 1)) { /* also NaN */
            snprintf(err, errlen, "config->split_ratio=%g: expected a number in (0, 1] (0: not set)", r);
            return STITCH_ERR_CONFIG;
        }
        out->split_ratio = r, out->split_source = "config->split_ratio";
        return STITCH_OK;
    }
    if (!env)
        return STITCH_OK;
    stitch_status_t st = st_parse_split_ratio(t->name, env, &out->split_ratio, err, errlen);
    if (st == STITCH_OK)
        out->split_source = t->name;
    return st;
}

/* HCCL_DETERMINISTIC: false, true or strict in any case (HCCL upper-cases it); empty is unset, as in HCCL. */
static stitch_status_t st_load_deterministic(const st_tunable *t, const char *env, const stitch_config_t *config,
                                             st_settings *out, char *err, size_t errlen)
{
    static const char *const names[] = {"false", "true", "strict"};
    int level = 0;
    const char *name = t->name;
    if (config && config->deterministic != STITCH_DETERMINISTIC_UNSET) {
        level = config->deterministic - STITCH_DETERMINISTIC_FALSE;
        if (level < 0 || level > 2) {
            snprintf(err, errlen, "config->deterministic=%d: expected STITCH_DETERMINISTIC_FALSE, _TRUE or _STRICT "
                     "(or 0: not set)", config->deterministic);
            return STITCH_ERR_CONFIG;
        }
        name = "config->deterministic";
    } else if (env && *env) {
        for (level = 0; level < 3 && strcasecmp(env, names[level]) != 0; level++)
            ;
        if (level == 3) {
            snprintf(err, errlen, "%s='%s': should be true, false or strict (in any case)", t->name, env);
            return STITCH_ERR_CONFIG;
        }
    }
    (void)name;
    out->deterministic = level; /* strict: all_reduce and reduce_scatter run mesh_strict (comm.c, st_comm_pick_l1) */
    return STITCH_OK;
}

static const st_tunable st_tunables[] = {
#define ST_TUNABLE(name, load, def, meaning) {#name, def, st_load_##load},
#include "tunables.def"
};

static const st_tunable_decl st_decls[] = {
#define ST_TUNABLE(name, load, def, meaning) {#name, def, meaning},
#include "tunables.def"
};

const st_tunable_decl *st_tunable_decl_of(int i)
{
    return i >= 0 && i < ST_TUNABLE_COUNT ? &st_decls[i] : NULL;
}

const char *st_source_name(st_source src)
{
    return src == ST_SRC_COMM ? "communicator" : src == ST_SRC_ENV ? "environment" : "default";
}

/* The communicator's value of tunable i as text (a string field itself, a number written into buf), or NULL when
 * the config does not set it. Mirrors the loaders' "config first" rule. */
static const char *st_config_text(int i, const stitch_config_t *c, char *buf, size_t len)
{
    static const char *const det[] = {"false", "true", "strict"};
    if (!c)
        return NULL;
    switch (i) {
    case ST_T_STITCH_ALGO:
        return c->algo;
    case ST_T_STITCH_GROUPS:
        return c->groups;
    case ST_T_STITCH_TOPO:
        return c->topo;
    case ST_T_HCCL_ALGO:
        return c->hccl_algo;
    case ST_T_STITCH_AHC_INTRA:
        return c->ahc_intra;
    case ST_T_STITCH_AHC_INTER:
        return c->ahc_inter;
    case ST_T_STITCH_TIMEOUT:
        if (c->timeout_ms == 0)
            return NULL;
        snprintf(buf, len, "timeout_ms=%d", c->timeout_ms);
        return buf;
    case ST_T_HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO:
        if (c->split_ratio == 0)
            return NULL;
        snprintf(buf, len, "%g", c->split_ratio);
        return buf;
    case ST_T_HCCL_DETERMINISTIC:
        if (c->deterministic == STITCH_DETERMINISTIC_UNSET)
            return NULL;
        if (c->deterministic >= STITCH_DETERMINISTIC_FALSE && c->deterministic <= STITCH_DETERMINISTIC_STRICT)
            return det[c->deterministic - STITCH_DETERMINISTIC_FALSE];
        snprintf(buf, len, "%d", c->deterministic);
        return buf;
    default:
        return NULL;
    }
}

stitch_status_t st_settings_read_origin(const stitch_config_t *config, st_settings *out, st_origin *origin,
                                        char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (origin)
        memset(origin, 0, sizeof *origin);
    for (int i = 0; i < ST_TUNABLE_COUNT; i++) {
        const st_tunable *t = &st_tunables[i];
        const char *env = getenv(t->name);
        if (env && !*env)
            env = NULL; /* set but empty is unset, for every variable (HCCL's rule for its own; tunables.def) */
        if (origin) {
            const char *comm = st_config_text(i, config, origin->buf[i], sizeof origin->buf[i]);
            origin->source[i] = comm ? ST_SRC_COMM : env ? ST_SRC_ENV : ST_SRC_DEFAULT;
            origin->text[i] = comm ? comm : env ? env : t->def;
        }
        stitch_status_t st = t->load(t, env, config, out, err, errlen);
        if (st != STITCH_OK)
            return st;
    }
    return STITCH_OK;
}

stitch_status_t st_settings_load_boot(const stitch_config_t *config, st_settings *out)
{
    static const int need[] = {ST_T_STITCH_TIMEOUT, ST_T_STITCH_SOCKET_IFNAME, ST_T_STITCH_SECRET};
    char why[256];
    stitch_status_t st = STITCH_OK;
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < sizeof need / sizeof *need; k++) {
        const st_tunable *t = &st_tunables[need[k]];
        const char *env = getenv(t->name);
        if (t->load(t, env && *env ? env : NULL, config, out, why, sizeof why) != STITCH_OK) {
            st = STITCH_ERR_CONFIG; /* a bad one keeps its default (timeout) or none (ifname, secret) */
            if (need[k] == ST_T_STITCH_TIMEOUT)
                st_parse_timeout(t->name, t->def, &out->timeout_ms, why, sizeof why);
            else if (need[k] == ST_T_STITCH_SECRET)
                out->secret = NULL;
        }
    }
    return st;
}

