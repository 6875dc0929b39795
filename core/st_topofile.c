/* st_topofile.c - the topology file loader (see st_topofile.h; the form is documented in topologies/README.md).
 *
 * Two passes. libyaml's event parser builds a small tree of our own (scalars, sequences, mappings, each with its
 * 1-based line and column), refusing what we never want to interpret: aliases (so nothing expands), nesting
 * deeper than ST_TOPOFILE_MAX_DEPTH (libyaml has no limit of its own), several documents. Before that the text is
 * scanned for NUL bytes and tabs in indentation, which libyaml reports in words that do not say what to fix.
 * The second pass reads the tree: keys (unknown ones get the nearest known key suggested), quantities with their
 * units, and the layout through the builder shared with the command line (core/st_topo.c), so `--layout` and
 * `layout:` accept the same shapes under the same limits. The first error ends the load.
 */
#include "st_topofile.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "st_readfile.h"

enum { N_SCALAR, N_SEQ, N_MAP };

typedef struct node {
    int kind;
    int line, col; /* 1-based */
    int plain;     /* a plain scalar: its text starts at col, so a column inside it can be pointed at */
    char *s;       /* scalar text, NUL-terminated (may hold no NUL inside: the file has none) */
    size_t len;
    struct node **kids; /* sequence items; mapping keys and values alternating */
    int n, cap;
} node;

typedef struct ctx {
    const char *path;
    char *err;
    size_t errlen;
    st_topofile *t;
    int nhosts;    /* servers that name a host */
} ctx;

static int fail_at(ctx *c, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail_at(ctx *c, int line, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s:%d:%d: error: %s", c->path, line, col, msg);
    return -1;
}

/* A scalar quoted for a message: at most 40 bytes, unprintable bytes as \xNN. */
static const char *quote(char buf[200], const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char *o = buf;
    size_t n = len > 40 ? 40 : len;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f)
            *o++ = (char)ch;
        else
            *o++ = '\\', *o++ = 'x', *o++ = hex[ch >> 4], *o++ = hex[ch & 15];
    }
    if (len > n)
        memcpy(o, "...", 3), o += 3;
    *o = 0;
    return buf;
}

/* ---- pass 1: text to tree ------------------------------------------------------------------------------------ */

static void node_free(node *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->n; i++)
        node_free(n->kids[i]); /* depth is bounded by ST_TOPOFILE_MAX_DEPTH */
    free(n->kids);
    free(n->s);
    free(n);
}

static int add_kid(node *p, node *k)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 4;
        node **v = realloc(p->kids, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        p->kids = v, p->cap = cap;
    }
    p->kids[p->n++] = k;
    return 0;
}

/* Line and column (1-based, bytes) of byte `off` of the text. */
static void offset_pos(const char *text, size_t len, size_t off, int *line, int *col)
{
    *line = 1, *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
}

/* NUL bytes (binary input) and tabs in indentation, found before libyaml sees them. */
static int prescan(ctx *c, const char *text, size_t len)
{
    const char *nul = memchr(text, 0, len);
    int line, col;
    if (nul) {
        offset_pos(text, len, (size_t)(nul - text), &line, &col);
        return fail_at(c, line, col, "NUL byte: a topology file is YAML text, not binary data");
    }
    size_t i = 0;
    line = 1;
    while (i < len) {
        size_t j = i;
        while (j < len && (text[j] == ' ' || text[j] == '\t'))
            j++;
        const char *tab = memchr(text + i, '\t', j - i);
        if (tab && j < len && text[j] != '\n' && text[j] != '\r' && text[j] != '#')
            return fail_at(c, line, (int)(tab - (text + i)) + 1, "tab in indentation: YAML indents with spaces only");
        const char *nl = memchr(text + j, '\n', len - j);
        if (!nl)
            break;
        i = (size_t)(nl - text) + 1;
        line++;
    }
    return 0;
}

static int yaml_fail(ctx *c, yaml_parser_t *y, const char *text, size_t len)
{
    int line, col;
    const char *problem = y->problem ? y->problem : "malformed YAML";
    if (y->error == YAML_MEMORY_ERROR)
        return fail_at(c, 1, 1, "out of memory");
    if (y->error == YAML_READER_ERROR) { /* the reader knows a byte offset, not a mark */
        offset_pos(text, len, y->problem_offset, &line, &col);
        return fail_at(c, line, col, "%s (the file must be UTF-8 text)", problem);
    }
    line = (int)y->problem_mark.line + 1, col = (int)y->problem_mark.column + 1;
    if (y->context)
        return fail_at(c, line, col, "%s (%s at line %d, column %d)", problem, y->context,
                       (int)y->context_mark.line + 1, (int)y->context_mark.column + 1);
    return fail_at(c, line, col, "%s", problem);
}

/* The explicit tag of a node's event (`!!python/object:os.system`, `!foo`); NULL when it has none. */
static const char *event_tag(const yaml_event_t *ev)
{
    const yaml_char_t *t = ev->type == YAML_SCALAR_EVENT           ? ev->data.scalar.tag
                           : ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.tag
                                                                   : ev->data.mapping_start.tag;
    return (const char *)t;
}

/* Parse the one document of the text into *root. */
static int build_tree(ctx *c, const char *text, size_t len, node **root)
{
    yaml_parser_t y;
    yaml_event_t ev;
    node *stack[ST_TOPOFILE_MAX_DEPTH + 1];
    int depth = 0, rc = -1, done = 0, docs = 0;
    *root = NULL;
    if (!yaml_parser_initialize(&y)) {
        fail_at(c, 1, 1, "out of memory");
        return -1; /* *root stays NULL: the caller must not interpret it */
    }
    yaml_parser_set_input_string(&y, (const unsigned char *)text, len);
    while (!done) {
        if (!yaml_parser_parse(&y, &ev)) {
            yaml_fail(c, &y, text, len);
            goto out;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        node *n = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                fail_at(c, line, col, "a second YAML document: a topology file holds one");
                goto fail_ev;
            }
            break;
        case YAML_ALIAS_EVENT:
            fail_at(c, line, col, "aliases (*%s) are not supported in a topology file",
                    ev.data.alias.anchor ? (const char *)ev.data.alias.anchor : "");
            goto fail_ev;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (event_tag(&ev)) { /* !!python/object:..., !!str: a type we never want to interpret, or to ignore */
                char q[200];
                const char *tag = event_tag(&ev), *core = "tag:yaml.org,2002:";
                char shown[300];
                snprintf(shown, sizeof shown, "%s%s", strncmp(tag, core, strlen(core)) ? "" : "!!",
                         tag + (strncmp(tag, core, strlen(core)) ? 0 : strlen(core))); /* as written: !!str */
                tag = shown;
                fail_at(c, line, col, "YAML tags (here '%s') are not supported in a topology file: write the plain "
                        "value", quote(q, tag, strlen(tag)));
                goto fail_ev;
            }
            if (depth == 0 && *root) { /* libyaml gives a document one root node: cannot happen */
                fail_at(c, line, col, "a second root node in one YAML document");
                goto fail_ev;
            }
            if (!(n = calloc(1, sizeof *n)))
                goto oom;
            n->line = line, n->col = col;
            n->kind = ev.type == YAML_SCALAR_EVENT ? N_SCALAR : ev.type == YAML_SEQUENCE_START_EVENT ? N_SEQ : N_MAP;
            if (n->kind == N_SCALAR) {
                n->len = ev.data.scalar.length;
                n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if (!(n->s = malloc(n->len + 1))) {
                    free(n);
                    goto oom;
                }
                memcpy(n->s, ev.data.scalar.value, n->len);
                n->s[n->len] = 0;
            }
            if (depth == 0 ? (*root = n, 0) : add_kid(stack[depth - 1], n)) {
                node_free(n);
                goto oom;
            }
            if (n->kind != N_SCALAR) {
                if (depth == ST_TOPOFILE_MAX_DEPTH) {
                    fail_at(c, line, col, "nesting deeper than %d lists and mappings", ST_TOPOFILE_MAX_DEPTH);
                    goto fail_ev;
                }
                stack[depth++] = n;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth == 0) { /* libyaml balances starts and ends: cannot happen */
                fail_at(c, line, col, "the end of a list or mapping that was never begun");
                goto fail_ev;
            }
            depth--;
            break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    if (!*root) {
        fail_at(c, 1, 1, "empty topology: expected a mapping with `levels` and `layout`");
        goto out;
    }
    rc = 0;
    goto out;
oom:
    fail_at(c, 1, 1, "out of memory");
fail_ev:
    yaml_event_delete(&ev);
out:
    yaml_parser_delete(&y);
    if (rc) {
        node_free(*root);
        *root = NULL;
    }
    return rc;
}

/* ---- pass 2: tree to topology -------------------------------------------------------------------------------- */

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[64];
    if (la > 40 || lb > 40)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best, diag = up;
        }
    }
    return row[lb];
}

/* The known word nearest to s, when near enough to be a likely typo; NULL otherwise. */
static const char *nearest(const char *s, const char *const *known)
{
    const char *best = NULL;
    int bd = 99;
    for (int i = 0; known[i]; i++) {
        int d = edit_distance(s, known[i]);
        if (d < bd)
            bd = d, best = known[i];
    }
    int len = (int)strlen(s);
    return bd <= (len < 6 ? 2 : 3) ? best : NULL;
}

static void list_words(char *buf, size_t len, const char *const *known)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; known[i] && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i == 0 ? "" : known[i + 1] ? ", " : " or ", known[i]);
}

/* Check a mapping's keys: scalars, known, not repeated. vals[i] receives the value of known[i] (or NULL). */
static int map_keys(ctx *c, const node *m, const char *const *known, const node **vals, const char *what)
{
    char q[200], list[200];
    for (int i = 0; known[i]; i++)
        vals[i] = NULL;
    for (int i = 0; i + 1 < m->n; i += 2) {
        const node *k = m->kids[i];
        if (k->kind != N_SCALAR)
            return fail_at(c, k->line, k->col, "a key of %s must be a word", what);
        int j = 0;
        while (known[j] && strcmp(known[j], k->s) != 0)
            j++;
        if (!known[j]) {
            const char *near = nearest(k->s, known);
            if (near)
                return fail_at(c, k->line, k->col, "unknown key '%s' in %s; did you mean '%s'?",
                               quote(q, k->s, k->len), what, near);
            list_words(list, sizeof list, known);
            return fail_at(c, k->line, k->col, "unknown key '%s' in %s (known keys: %s)", quote(q, k->s, k->len),
                           what, list);
        }
        if (vals[j])
            return fail_at(c, k->line, k->col, "key '%s' given twice in %s", known[j], what);
        vals[j] = m->kids[i + 1];
    }
    return 0;
}

static int want_scalar(ctx *c, const node *n, const char *what)
{
    if (n->kind != N_SCALAR)
        return fail_at(c, n->line, n->col, "%s must be a single value, not a %s", what,
                       n->kind == N_SEQ ? "list" : "mapping");
    return 0;
}

/* A name: 1 .. ST_TOPOFILE_NAME_MAX - 1 printable bytes. */
static int get_name(ctx *c, const node *n, const char *what, char *out, size_t cap)
{
    char q[200];
    if (want_scalar(c, n, what))
        return -1;
    if (n->len == 0 || n->len >= cap)
        return fail_at(c, n->line, n->col, "%s must be 1 to %zu characters long", what, cap - 1);
    for (size_t i = 0; i < n->len; i++)
        if ((unsigned char)n->s[i] < 0x20 || n->s[i] == 0x7f)
            return fail_at(c, n->line, n->col, "%s '%s' holds a control character", what, quote(q, n->s, n->len));
    memcpy(out, n->s, n->len + 1);
    return 0;
}

/* true or false (YAML's lower-case forms only). */
static int get_bool(ctx *c, const node *n, const char *what, int *out)
{
    char q[200];
    if (want_scalar(c, n, what))
        return -1;
    if (n->len == 4 && memcmp(n->s, "true", 4) == 0)
        *out = 1;
    else if (n->len == 5 && memcmp(n->s, "false", 5) == 0)
        *out = 0;
    else
        return fail_at(c, n->line, n->col, "%s must be true or false, not '%s'", what, quote(q, n->s, n->len));
    return 0;
}

typedef struct unit {
    const char *name;
    double factor;
} unit;

static const unit bandwidth_units[] = {{"B/s", 1},       {"KB/s", 1e3},          {"MB/s", 1e6},
                                       {"GB/s", 1e9},    {"KiB/s", 1024.0},      {"MiB/s", 1048576.0},
                                       {"GiB/s", 1073741824.0}, {"Gb/s", 1e9 / 8}, {NULL, 0}};
static const unit latency_units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {NULL, 0}};

/* What a quantity may be: a bandwidth from 1 B/s to 1 PB/s, a latency from 0 to 1000 s. Beyond them a figure is
 * a typo (1e-320 B/s, 1e308 ms), and would make every prediction of the cost model inf or 0. */
#define ST_BW_MIN 1.0
#define ST_BW_MAX 1e15
#define ST_LAT_MAX 1e3

/* `56 GB/s`, `6.25 GB/s`, `1 us`, `1.5e3 ns`: a decimal number, optional spaces, a unit of the table (exact
 * case: Gb/s is bits, GB/s bytes). Bandwidths must be > 0, latencies >= 0, both within the limits above. */
static int get_quantity(ctx *c, const node *n, const char *what, const unit *units, int positive, double *out)
{
    char q[200], list[200];
    const char *names[12];
    int nu = 0;
    for (; units[nu].name; nu++)
        names[nu] = units[nu].name;
    names[nu] = NULL;
    list_words(list, sizeof list, names);
    if (want_scalar(c, n, what))
        return -1;
    const char *s = n->s, *p = s;
    int at = n->plain ? n->col : 0; /* column of s[0], when known */
#define COL(ptr) (at ? at + (int)((ptr) - s) : n->col)
    if (*p == '-' || *p == '+') {
        if (*p == '-')
            return fail_at(c, n->line, n->col, "%s must be %s, not '%s'", what, positive ? "positive" : "0 or more",
                           quote(q, n->s, n->len));
        p++;
    }
    const char *num = p;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p);)
            p++;
    if (p == num || (p == num + 1 && *num == '.'))
        return fail_at(c, n->line, COL(num), "%s '%s' does not start with a number (e.g. %s)", what,
                       quote(q, n->s, n->len), units == latency_units ? "1 us" : "25 GB/s");
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        if (*e == '+' || *e == '-')
            e++;
        if (isdigit((unsigned char)*e)) {
            while (isdigit((unsigned char)*e))
                e++;
            p = e;
        }
    }
    char numbuf[80];
    size_t nl = (size_t)(p - num);
    if (nl >= sizeof numbuf)
        return fail_at(c, n->line, COL(num), "%s: number too long", what);
    memcpy(numbuf, num, nl);
    numbuf[nl] = 0;
    double v = strtod(numbuf, NULL);
    while (*p == ' ')
        p++;
    if (!*p)
        return fail_at(c, n->line, n->col, "%s '%s' has no unit (write one of %s)", what, quote(q, n->s, n->len),
                       list);
    int u = 0;
    while (units[u].name && strcmp(units[u].name, p) != 0)
        u++;
    if (!units[u].name) {
        const char *near = nearest(p, names);
        if (near)
            return fail_at(c, n->line, COL(p), "unknown unit '%s' for %s; did you mean '%s'? (units: %s)",
                           quote(q, p, strlen(p)), what, near, list);
        return fail_at(c, n->line, COL(p), "unknown unit '%s' for %s (units: %s)", quote(q, p, strlen(p)), what,
                       list);
    }
#undef COL
    v *= units[u].factor;
    if (!isfinite(v) || (positive && v <= 0))
        return fail_at(c, n->line, n->col, "%s must be %s, not '%s'", what, positive ? "positive" : "finite",
                       quote(q, n->s, n->len));
    if (positive ? v < ST_BW_MIN || v > ST_BW_MAX : v > ST_LAT_MAX)
        return fail_at(c, n->line, n->col, "%s '%s' is out of range: %s", what, quote(q, n->s, n->len),
                       positive ? "1 B/s to 1 PB/s (1e15 B/s)" : "0 to 1000 s");
    *out = v;
    return 0;
}

static const char *const top_keys[] = {"name", "levels", "reduce_bandwidth", "layout", NULL};
static const char *const level_keys[] = {"name", "bandwidth", "latency", "full_mesh", NULL};
static const char *const server_keys[] = {"host", "ranks", "devices", NULL};

static int read_levels(ctx *c, const node *n)
{
    const node *v[4];
    char what[64];
    if (n->kind != N_SEQ || n->n == 0)
        return fail_at(c, n->line, n->col, "`levels` must be a list of levels, innermost first (e.g. - {name: "
                       "server, bandwidth: 56 GB/s, latency: 1 us})");
    if (n->n > ST_TOPO_MAX_LEVELS)
        return fail_at(c, n->kids[ST_TOPO_MAX_LEVELS]->line, n->kids[ST_TOPO_MAX_LEVELS]->col,
                       "more than %d levels", ST_TOPO_MAX_LEVELS);
    for (int k = 0; k < n->n; k++) {
        const node *l = n->kids[k];
        st_level_info *li = &c->t->level[k];
        snprintf(what, sizeof what, "level %d", k);
        if (l->kind != N_MAP)
            return fail_at(c, l->line, l->col, "level %d must be a mapping {name: ..., bandwidth: ..., latency: ...}",
                           k);
        if (map_keys(c, l, level_keys, v, what))
            return -1;
        for (int i = 0; i < 3; i++) /* name, bandwidth, latency; full_mesh is optional */
            if (!v[i])
                return fail_at(c, l->line, l->col, "level %d has no `%s`", k, level_keys[i]);
        li->full_mesh = 1;
        if (v[3] && get_bool(c, v[3], "full_mesh", &li->full_mesh))
            return -1;
        if (v[3] && k > 0)
            return fail_at(c, v[3]->line, v[3]->col, "`full_mesh` describes a server's links (level 0), not level %d",
                           k);
        if (get_name(c, v[0], "a level's name", li->name, sizeof li->name) ||
            get_quantity(c, v[1], "bandwidth", bandwidth_units, 1, &li->bandwidth) ||
            get_quantity(c, v[2], "latency", latency_units, 0, &li->latency))
            return -1;
        for (int j = 0; j < k; j++)
            if (strcmp(c->t->level[j].name, li->name) == 0)
                return fail_at(c, v[0]->line, v[0]->col, "level name '%s' is also level %d's", li->name, j);
    }
    c->t->nlevels = n->n;
    return 0;
}

/* A whole number, for counts of ranks and device ids: plain digits with an optional '-', capped (anything above
 * 10^9 is out of every range we accept, and is reported as such by the caller). */
static int get_int(ctx *c, const node *n, const char *what, long long *out)
{
    char q[200];
    if (want_scalar(c, n, what))
        return -1;
    if (!n->plain) /* "2" is text in YAML: a count written as one is a slip (a generator quoting everything) */
        return fail_at(c, n->line, n->col, "expected %s (a whole number), not the quoted text '%s': write numbers "
                       "without quotes", what, quote(q, n->s, n->len));
    const char *p = n->s;
    int neg = *p == '-';
    p += neg;
    long long v = 0;
    if (!isdigit((unsigned char)*p))
        return fail_at(c, n->line, n->col, "expected %s (a whole number), not '%s'", what, quote(q, n->s, n->len));
    for (; isdigit((unsigned char)*p); p++)
        v = v > 1000000000LL ? v : v * 10 + (*p - '0');
    if (*p)
        return fail_at(c, n->line, n->col, "expected %s (a whole number), not '%s'", what, quote(q, n->s, n->len));
    *out = neg ? -v : v;
    return 0;
}

/* Server g's host and devices; the arrays grow by doubling, in step with the layout's servers. */
static int set_server_extra(ctx *c, int g, const char *host, int32_t *dev)
{
    st_topofile *t = c->t;
    if (g >= t->nslots) {
        int cap = t->nslots ? 2 * t->nslots : 16;
        char **h = realloc(t->host, sizeof *h * (size_t)cap);
        if (h)
            t->host = h;
        int32_t **d = h ? realloc(t->devices, sizeof *d * (size_t)cap) : NULL;
        if (!h || !d) {
            free(dev);
            return fail_at(c, 1, 1, "out of memory");
        }
        t->devices = d;
        for (int i = t->nslots; i < cap; i++)
            t->host[i] = NULL, t->devices[i] = NULL;
        t->nslots = cap;
    }
    t->devices[g] = dev;
    if (host && !(t->host[g] = strdup(host)))
        return fail_at(c, 1, 1, "out of memory");
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `{host: node07, ranks: 8}`, `{host: node07, devices: [0, 1]}`: a server. */
static int read_server(ctx *c, const node *n, int depth)
{
    const node *v[3];
    char host[ST_TOPOFILE_HOST_MAX] = "", why[200], q[200];
    long long ranks = -1;
    if (map_keys(c, n, server_keys, v, "a server"))
        return -1;
    if (v[0]) {
        if (get_name(c, v[0], "a host name", host, sizeof host))
            return -1;
        for (size_t i = 0; host[i]; i++)
            if (!isalnum((unsigned char)host[i]) && !strchr(".-_:", host[i]))
                return fail_at(c, v[0]->line, v[0]->col, "host name '%s' is not a host name (letters, digits, "
                               "'.', '-', '_', ':')", quote(q, host, strlen(host)));
    }
    if (v[1] && get_int(c, v[1], "a count of ranks", &ranks))
        return -1;
    int32_t *dev = NULL;
    if (v[2]) {
        const node *d = v[2];
        if (d->kind != N_SEQ || d->n == 0)
            return fail_at(c, d->line, d->col, "`devices` must be a list of device numbers, one per rank");
        if (ranks >= 0 && ranks != d->n)
            return fail_at(c, d->line, d->col, "%d devices for %lld ranks", d->n, ranks);
        ranks = d->n;
        if (!(dev = malloc(sizeof *dev * (size_t)d->n)))
            return fail_at(c, d->line, d->col, "out of memory");
        for (int i = 0; i < d->n; i++) {
            long long x = -1;
            if (get_int(c, d->kids[i], "a device number", &x) ||
                (x < 0 || x > INT32_MAX ? fail_at(c, d->kids[i]->line, d->kids[i]->col, "device number %lld is "
                                                  "out of range 0..%d", x, INT32_MAX) : 0)) {
                free(dev);
                return -1;
            }
            dev[i] = (int32_t)x;
        }
        int32_t *sorted = malloc(sizeof *sorted * (size_t)d->n);
        if (!sorted) {
            free(dev);
            return fail_at(c, d->line, d->col, "out of memory");
        }
        memcpy(sorted, dev, sizeof *sorted * (size_t)d->n);
        qsort(sorted, (size_t)d->n, sizeof *sorted, cmp_i32);
        for (int i = 1; i < d->n; i++)
            if (sorted[i] == sorted[i - 1]) {
                long long x = sorted[i];
                free(sorted);
                free(dev);
                return fail_at(c, d->line, d->col, "device %lld is listed twice", x);
            }
        free(sorted);
    }
    if (ranks < 0) {
        free(dev);
        return fail_at(c, n->line, n->col, "a server needs `ranks` (a count) or `devices` (a list)");
    }
    if (st_layout_leaf(&c->t->layout, depth, ranks, why, sizeof why)) {
        free(dev);
        const node *at = v[1] ? v[1] : n;
        return fail_at(c, at->line, at->col, "%s", why);
    }
    if (host[0])
        c->nhosts++;
    return set_server_extra(c, c->t->layout.ngroups[0] - 1, host[0] ? host : NULL, dev);
}

static int read_layout(ctx *c, const node *n, int depth)
{
    char why[200];
    long long count = -1;
    if (n->kind == N_SCALAR) {
        if (get_int(c, n, "a count of ranks", &count))
            return -1;
        if (st_layout_leaf(&c->t->layout, depth, count, why, sizeof why))
            return fail_at(c, n->line, n->col, "%s", why);
        return set_server_extra(c, c->t->layout.ngroups[0] - 1, NULL, NULL);
    }
    if (n->kind == N_MAP)
        return read_server(c, n, depth);
    for (int i = 0; i < n->n; i++)
        if (read_layout(c, n->kids[i], depth + 1))
            return -1;
    if (st_layout_close(&c->t->layout, depth, n->n, why, sizeof why))
        return fail_at(c, n->line, n->col, "%s", why);
    return 0;
}

static int interpret(ctx *c, const node *root)
{
    const node *v[5];
    st_topofile *t = c->t;
    if (root->kind != N_MAP)
        return fail_at(c, root->line, root->col, "a topology is a mapping with `levels` and `layout` (and "
                       "optionally `name` and `reduce_bandwidth`)");
    if (map_keys(c, root, top_keys, v, "the topology"))
        return -1;
    if (!v[1])
        return fail_at(c, root->line, root->col, "no `levels`: list the levels, innermost first");
    if (!v[3])
        return fail_at(c, root->line, root->col, "no `layout`: give the ranks' nesting, e.g. `layout: [8, 8]`");
    if (v[0] && get_name(c, v[0], "the topology's name", t->name, sizeof t->name))
        return -1;
    if (read_levels(c, v[1]))
        return -1;
    if (v[2] && get_quantity(c, v[2], "reduce_bandwidth", bandwidth_units, 1, &t->reduce_bandwidth))
        return -1;
    int declared = t->nlevels;
    if (read_layout(c, v[3], 0))
        return -1;
    if (t->layout.nlevels != declared) {
        int deep = t->layout.nlevels - 1, want = declared - 1;
        return fail_at(c, v[3]->line, v[3]->col, "the layout has %d level%s (counts of ranks %d list%s deep) but "
                       "`levels` lists %d; with %d level%s the counts sit %d list%s deep", t->layout.nlevels,
                       t->layout.nlevels == 1 ? "" : "s", deep, deep == 1 ? "" : "s", declared, declared,
                       declared == 1 ? "" : "s", want, want == 1 ? "" : "s");
    }
    if (c->nhosts && c->nhosts != t->layout.ngroups[0]) {
        int g = 0;
        while (t->host[g])
            g++;
        return fail_at(c, v[3]->line, v[3]->col, "server %d names no host, but others do: name every server's "
                       "host or none", g);
    }
    if (c->nhosts) { /* one server per host: sorted copies find a repeated name in O(n log n) */
        char **names = malloc(sizeof *names * (size_t)c->nhosts);
        if (!names)
            return fail_at(c, 1, 1, "out of memory");
        memcpy(names, t->host, sizeof *names * (size_t)c->nhosts);
        qsort(names, (size_t)c->nhosts, sizeof *names, cmp_str);
        for (int i = 1; i < c->nhosts; i++)
            if (strcmp(names[i], names[i - 1]) == 0) {
                char q[200];
                quote(q, names[i], strlen(names[i]));
                free(names);
                return fail_at(c, v[3]->line, v[3]->col, "host '%s' is named by two servers", q);
            }
        free(names);
    }
    if (!c->nhosts) { /* keep host NULL when no server names one, as documented */
        free(t->host); /* every entry is NULL */
        t->host = NULL;
    }
    return 0;
}

int st_topofile_parse(const char *path, const char *text, size_t len, st_topofile *t, char *err, size_t errlen)
{
    ctx c = {path, err, errlen, t, 0};
    node *root = NULL;
    memset(t, 0, sizeof *t);
    int rc = prescan(&c, text, len) || build_tree(&c, text, len, &root) || interpret(&c, root) ? -1 : 0;
    node_free(root);
    if (rc)
        st_topofile_free(t);
    return rc;
}

/* Files read so far by this process (st_topofile_loads): the runtime reads one per job or process, tests count. */
static _Atomic unsigned long st_loads;

unsigned long st_topofile_loads(void)
{
    return atomic_load(&st_loads);
}

int st_topofile_load(const char *path, st_topofile *t, char *err, size_t errlen)
{
    char *text, why[200];
    size_t len;
    memset(t, 0, sizeof *t);
    atomic_fetch_add(&st_loads, 1);
    if (st_read_regular(path, ST_TOPOFILE_MAX_BYTES, "topology file", &text, &len, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: error: %s", path, why);
        return -1;
    }
    int rc = st_topofile_parse(path, text, len, t, err, errlen);
    free(text);
    return rc;
}

void st_topofile_free(st_topofile *t)
{
    for (int g = 0; g < t->nslots; g++) {
        if (t->host)
            free(t->host[g]);
        if (t->devices)
            free(t->devices[g]);
    }
    free(t->host);
    free(t->devices);
    st_layout_free(&t->layout);
    memset(t, 0, sizeof *t);
}

/* ---- a topology setting: a file or an inline layout ------------------------------------------------------------ */

int st_topofile_is_layout(const char *spec)
{
    if (!*spec)
        return 0;
    for (const char *c = spec; *c; c++)
        if (!strchr("0123456789,[]xX \t", *c))
            return 0;
    return 1;
}

int st_topofile_open(const char *spec, st_topofile *t, char *err, size_t errlen)
{
    char why[512];
    memset(t, 0, sizeof *t);
    if (!*spec) {
        snprintf(err, errlen, "empty: expected a topology file (YAML, see topologies/) or a layout such as 2,3");
        return -1;
    }
    if (!st_topofile_is_layout(spec))
        return st_topofile_load(spec, t, err, errlen);
    if (st_layout_parse(spec, &t->layout, why, sizeof why) != 0) {
        snprintf(err, errlen, "bad layout '%s': %s (expected counts of ranks such as 2,3, nested lists such as "
                 "[2,3],[4] for three levels, or SxL)", spec, why);
        return -1;
    }
    t->nlevels = t->layout.nlevels;
    return 0;
}
