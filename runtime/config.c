/* config.c - every tunable of the runtime, read in this one place.
 *
 * Tunables (environment variable, meaning, default):
 *   STITCH_ALGO            algorithm: "rhd" for every collective that has one of that name (the others   auto
 *                          keep auto), or "all_reduce=rhd,all_gather=mesh" per collective (must exist);
 *                          "auto" chooses per call by size (choose.c); stitch_config_t.algo takes precedence
 *   STITCH_ONESHOT_BYTES   auto: all_reduce runs mesh_oneshot while a rank sends at most this many     48 KiB
 *                          bytes with it (vector bytes * (p - 1)), ring above; 0 never; suffixes k, m
 *                          (measured, shm, 2-core VM: np 2, 64 KiB vectors 9.9 us one-shot, 7.6 ring;
 *                          np 4, 16 KiB vectors 25 us one-shot, 78 ring, 34-38 mesh/rhd)
 *   STITCH_TIMEOUT         seconds a collective may wait for peers, a positive decimal (e.g. 0.2)       300
 *                          (stitch_config_t.timeout_ms takes precedence)
 *   STITCH_SEGMENT_BYTES   bytes of the vector processed per pipeline segment; suffixes k, m          4 MiB
 *                          (64 MiB fp32 ring all_reduce on the 2-core VM, p = 2 and 4: 256 KiB-1 MiB
 *                          were 1.5-3x slower than 2-8 MiB, per-step synchronisation outweighing cache
 *                          locality; 4 MiB was best or within noise of it)
 *   STITCH_GROUPS          groups of consecutive ranks (servers) for topology-aware algorithms   one group
 *                          (pipeline): "SxL" = S groups of L ranks, or sizes "2,2,2"; must add up to
 *                          the number of ranks (checked at init); stitch_config_t.groups takes precedence.
 *                          Process mode, when neither is given: one group per host, of the ranks on it   per host
 *                          (need not be consecutive ranks; proc.c)
 * Process mode (one rank per process; thread communicators check these but do not use them):
 *   STITCH_TRANSPORT       auto | shm | tcp: auto uses shm between ranks of one host, tcp across hosts    auto
 *                          (transport.c's table); a forced one that cannot connect a pair is an error
 *   STITCH_SHM_RING_BYTES  bytes of each shm ring (one per ordered pair of ranks on a host), a power of     4M
 *                          two from 4096 to 1G; suffixes k, m
 *   STITCH_TCP_RING_BYTES  bytes of each tcp receive staging ring, likewise                                4M
 *   STITCH_TCP_CC          congestion control of the tcp data sockets: a name the kernel knows (cubic,   bbr ->
 *                          reno, dctcp, ...), or "system" to keep the host's; unset, a host default of   cubic,
 *                          bbr is replaced with cubic and any other kept (tp_tcp.c's st_tcp_cc: why)     else kept
 *   STITCH_SPIN_US         microseconds a waiting rank polls before it sleeps on the doorbell, 0 to      500
 *                          10000000; unset: 500, or 1000 when the host runs more ranks of the
 *                          communicator than it has cores (proc.c says why)
 *   STITCH_SOCKET_IFNAME   interfaces for the bootstrap and tcp: "eth0", prefixes "eth,ib", "^docker,lo"   the
 *                          to exclude (bootstrap.c)                                         route to the root
 *   STITCH_SECRET          the job's shared secret for the rendezvous's keyed hash, at most 255      see
 *                          characters (longer is an error: never cut); required in practice for     bootstrap.c
 *                          a job across hosts (bootstrap.c says what each launcher mode guarantees)
 *   STITCH_DEBUG           log launcher, addresses, transports and groups to stderr (any value but "0")   off
 * A malformed value is an error at communicator creation, never a silent default: a typo in a timeout
 * would otherwise surface as a hang hours later. Numbers are plain decimal digits (no sign, blank, hex, exponent,
 * inf or nan; the timeout may have a fraction), set-but-empty is malformed, and a limit is checked before a
 * k/m suffix scales the number, so no value wraps around to a small one.
 *
 * What is not read here: the launchers' own variables (OMPI_*, PMI_*, SLURM_*, RANK/WORLD_SIZE/LOCAL_RANK/
 * MASTER_ADDR/MASTER_PORT, and stitch's STITCH_RANK/STITCH_SIZE/STITCH_ROOT). They are not tunables but the
 * launcher's description of the job, needed before any communicator or configuration exists (stitch_launcher,
 * stitch_get_unique_id), and which of them count depends on which launcher is found: bootstrap.c reads them,
 * all through one function (st_launcher_env), next to the detection that interprets them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "st_steptab.h"
#include "transport.h"

#define ST_DEFAULT_TIMEOUT_MS (300 * 1000)
#define ST_DEFAULT_SEGMENT_BYTES ((size_t)4 << 20)
#define ST_DEFAULT_ONESHOT_BYTES ((size_t)48 << 10)

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
static stitch_status_t st_parse_timeout(const char *v, int *ms, char *err, size_t errlen)
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
        snprintf(err, errlen, "STITCH_TIMEOUT='%s': expected a positive decimal number of seconds such as 30 or 0.5 "
                 "(at most 2000000)", v);
        return STITCH_ERR_CONFIG;
    }
    *ms = (int)total;
    return STITCH_OK;
}

/* A byte count with an optional k or m suffix, between lo and 1 GiB (STITCH_SEGMENT_BYTES, STITCH_ONESHOT_BYTES,
 * the ring sizes). The number is checked against the limit before the suffix scales it, so no value wraps. */
static stitch_status_t st_parse_bytes(const char *name, const char *v, size_t lo, size_t *bytes, char *err,
                                      size_t errlen)
{
    const unsigned long long hi = 1ull << 30;
    const char *s = v;
    unsigned long long n;
    int ok = st_digits(&s, hi, &n), shift = 0;
    if (*s == 'k' || *s == 'K')
        shift = 10, s++;
    else if (*s == 'm' || *s == 'M')
        shift = 20, s++;
    if (!ok || *s || n > hi >> shift || n << shift < lo) {
        snprintf(err, errlen, "%s='%s': expected bytes between %zu and 1G in decimal (suffix k or m)", name, v, lo);
        return STITCH_ERR_CONFIG;
    }
    *bytes = (size_t)(n << shift);
    return STITCH_OK;
}

/* STITCH_SHM_RING_BYTES, STITCH_TCP_RING_BYTES: a power of two with an optional k or m suffix, 4 KiB to 1 GiB. */
static stitch_status_t st_parse_pow2(const char *name, size_t def, size_t *out, char *err, size_t errlen)
{
    const char *v = getenv(name);
    *out = def;
    if (!v)
        return STITCH_OK;
    if (st_parse_bytes(name, v, 4096, out, err, errlen) != STITCH_OK || (*out & (*out - 1))) {
        snprintf(err, errlen, "%s='%s': expected a power of two between 4096 and 1G (suffix k or m)", name, v);
        *out = def;
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* STITCH_TRANSPORT: auto, or the name of an entry of transport.c's table (shm, tcp); unset or empty is auto. */
static stitch_status_t st_parse_transport(int *out, char *err, size_t errlen)
{
    const char *t = getenv("STITCH_TRANSPORT");
    char names[128];
    *out = ST_TP_AUTO;
    if (!t || !*t || strcmp(t, "auto") == 0 || (*out = st_tp_find(t)) >= 0)
        return STITCH_OK;
    st_tp_names(names, sizeof names);
    snprintf(err, errlen, "STITCH_TRANSPORT='%s': expected auto, %s", t, names);
    return STITCH_ERR_CONFIG;
}

/* STITCH_SPIN_US: microseconds, 0 to 10 s; unset or empty is -1 (decided later from the ranks per core). */
static stitch_status_t st_parse_spin(long *out, char *err, size_t errlen)
{
    const char *v = getenv("STITCH_SPIN_US"), *s = v;
    unsigned long long us;
    *out = -1;
    if (!v)
        return STITCH_OK;
    if (!st_digits(&s, 10000000, &us) || *s) {
        snprintf(err, errlen, "STITCH_SPIN_US='%s': expected microseconds between 0 and 10000000", v);
        return STITCH_ERR_CONFIG;
    }
    *out = (long)us;
    return STITCH_OK;
}

/* STITCH_TCP_CC: a congestion control name for the kernel to accept or refuse (proc.c), or "system"; "" unset. */
static stitch_status_t st_parse_tcp_cc(char *out, size_t len, char *err, size_t errlen)
{
    const char *v = getenv("STITCH_TCP_CC");
    out[0] = '\0';
    if (!v || !*v)
        return STITCH_OK;
    if (strlen(v) >= len) {
        snprintf(err, errlen, "STITCH_TCP_CC='%s': a congestion control name has at most %zu characters", v, len - 1);
        return STITCH_ERR_CONFIG;
    }
    snprintf(out, len, "%s", v);
    return STITCH_OK;
}

/* The process-mode tunables; unset strings are NULL. */
static stitch_status_t st_load_proc(st_settings *out, char *err, size_t errlen)
{
    stitch_status_t st = st_parse_transport(&out->transport, err, errlen);
    if (st == STITCH_OK)
        st = st_parse_pow2("STITCH_SHM_RING_BYTES", (size_t)4 << 20, &out->shm_ring_bytes, err, errlen);
    if (st == STITCH_OK)
        st = st_parse_pow2("STITCH_TCP_RING_BYTES", (size_t)4 << 20, &out->tcp_ring_bytes, err, errlen);
    if (st == STITCH_OK)
        st = st_parse_spin(&out->spin_us, err, errlen);
    if (st == STITCH_OK)
        st = st_parse_tcp_cc(out->tcp_cc, sizeof out->tcp_cc, err, errlen);
    const char *ifname = getenv("STITCH_SOCKET_IFNAME"), *secret = getenv("STITCH_SECRET");
    out->socket_ifname = ifname && *ifname ? ifname : NULL;
    out->secret = secret && *secret ? secret : NULL;
    if (st == STITCH_OK && out->secret && strlen(out->secret) > ST_SECRET_MAX) {
        /* never cut: two secrets that differ only past the cut would make the same key */
        snprintf(err, errlen, "STITCH_SECRET: %zu characters, at most %d", strlen(out->secret), ST_SECRET_MAX);
        st = STITCH_ERR_CONFIG;
    }
    return st;
}

int st_debug(void)
{
    const char *v = getenv("STITCH_DEBUG");
    return v && *v && strcmp(v, "0") != 0;
}

static stitch_status_t st_load_algo(const stitch_config_t *config, st_settings *out, char *err, size_t errlen)
{
    const char *env = getenv("STITCH_ALGO");
    const char *spec = "auto";
    out->algo_source = "default";
    if (config && config->algo)
        spec = config->algo, out->algo_source = "config->algo";
    else if (env)
        spec = env, out->algo_source = "STITCH_ALGO";
    char why[256];
    if (st_parse_algo_spec(spec, &out->algo, why, sizeof why) != STITCH_OK) {
        snprintf(err, errlen, "%s='%s': %s", out->algo_source, spec, why);
        return STITCH_ERR_CONFIG;
    }
    return STITCH_OK;
}

/* One positive size of a groups spec; advances *s past it. */
static int st_group_size(const char **s, int p)
{
    char *end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno || v < 1 || v > p || !isdigit((unsigned char)**s))
        return -1;
    *s = end;
    return (int)v;
}

stitch_status_t st_parse_groups(const char *spec, int p, int *sizes, int *ngroups, char *err, size_t errlen)
{
    const char *s = spec;
    int n = 0, total = 0, v = st_group_size(&s, p);
    if (v > 0 && (*s == 'x' || *s == 'X')) { /* S x L */
        s++;
        int l = st_group_size(&s, p);
        if (l > 0 && *s == '\0' && (long)v * l == p)
            for (n = 0; n < v; n++)
                sizes[n] = l;
        total = n ? p : -1;
    } else {
        while (v > 0 && n < p && total + v <= p) {
            sizes[n++] = v, total += v;
            if (*s != ',')
                break;
            s++;
            v = st_group_size(&s, p);
        }
        if (v <= 0)
            total = -1;
    }
    if (total != p || *s != '\0') {
        snprintf(err, errlen, "'%s': expected SxL (S groups of L ranks, S * L = %d) or group sizes adding up to "
                 "%d, e.g. \"2,2\"", spec, p, p);
        return STITCH_ERR_CONFIG;
    }
    *ngroups = n;
    return STITCH_OK;
}

stitch_status_t st_settings_load(const stitch_config_t *config, st_settings *out, char *err, size_t errlen)
{
    stitch_status_t st = st_load_algo(config, out, err, errlen);
    if (st != STITCH_OK)
        return st;
    out->timeout_ms = ST_DEFAULT_TIMEOUT_MS;
    const char *env = getenv("STITCH_TIMEOUT");
    if (config && config->timeout_ms != 0)
        out->timeout_ms = config->timeout_ms;
    else if (env && (st = st_parse_timeout(env, &out->timeout_ms, err, errlen)) != STITCH_OK)
        return st;
    out->segment_bytes = ST_DEFAULT_SEGMENT_BYTES;
    env = getenv("STITCH_SEGMENT_BYTES");
    if (env && (st = st_parse_bytes("STITCH_SEGMENT_BYTES", env, 4096, &out->segment_bytes, err, errlen)) != STITCH_OK)
        return st;
    out->oneshot_max = ST_DEFAULT_ONESHOT_BYTES;
    env = getenv("STITCH_ONESHOT_BYTES");
    if (env && (st = st_parse_bytes("STITCH_ONESHOT_BYTES", env, 0, &out->oneshot_max, err, errlen)) != STITCH_OK)
        return st;
    out->groups = config && config->groups ? config->groups : getenv("STITCH_GROUPS");
    out->groups_source = config && config->groups ? "config->groups" : "STITCH_GROUPS";
    return st_load_proc(out, err, errlen);
}
