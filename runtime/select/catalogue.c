/* catalogue.c - catalogues compiled while the program runs: stitch_catalogue_load / stitch_catalogue_free and
 * STITCH_ALGO_FILE (read by the registry, registry.c).
 *
 * The file goes through the compiler's own front end (dsl/compile.h: st_unit_compile, the pipeline `stitchc`
 * runs), so it is read with the same limits (regular files of at most 16 MiB, opened without blocking: a FIFO,
 * a directory or /dev/zero is refused at once), checked with the same rules and gives the same st_catalogue,
 * hash included, as `stitchc emit` writes for the same file: a rank that loads a file and one that links its
 * emitted tables agree at the process-mode hash check. Errors are the compiler's `FILE:LINE:COL: error: ...`
 * lines, without the source excerpts, which STITCH_DEBUG prints to stderr too.
 *
 * Tables emitted at build time were verified then, for the range they record (stitch_compile_dsl, p = 1..32 by
 * default; outside it the runtime proves each plan before its first use, runtime/proof.c); a loaded file was not,
 * so the registry verifies every loaded catalogue for the exact communicator that will run it (st_cat_verify: its p,
 * its groups at every level with their actual members, every root) before init returns, and init fails with the
 * verifier's counterexample otherwise: nothing unproved runs.
 *
 * Lifetime. A loaded catalogue is counted: the loader's reference (stitch_catalogue_load's caller, or the
 * registry that loaded STITCH_ALGO_FILE) and one per registry that lists it (each communicator owns a registry),
 * so a program may free its catalogue right after init and the communicators keep it. Emitted tables are static
 * data and are never counted; the set of loaded catalogues (a short list under a mutex) is how they are told
 * apart, since an emitted catalogue's struct must not be read past its end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "compile.h"
#include "config.h"
#include "sema.h"
#include "verify.h"

typedef struct st_loaded {
    st_catalogue *cat;
    long refs;
    struct st_loaded *next;
} st_loaded;

static pthread_mutex_t st_loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static st_loaded *st_loaded_list;

/* The record of `cat` (lock held), or NULL. */
static st_loaded **st_loaded_find(const st_catalogue *cat)
{
    for (st_loaded **l = &st_loaded_list; *l; l = &(*l)->next)
        if ((*l)->cat == cat)
            return l;
    return NULL;
}

int st_cat_ref(const st_catalogue *cat)
{
    pthread_mutex_lock(&st_loaded_lock);
    st_loaded **l = cat ? st_loaded_find(cat) : NULL;
    if (l)
        (*l)->refs++;
    pthread_mutex_unlock(&st_loaded_lock);
    return l != NULL;
}

void st_cat_unref(const st_catalogue *cat)
{
    st_loaded *dead = NULL;
    pthread_mutex_lock(&st_loaded_lock);
    st_loaded **l = cat ? st_loaded_find(cat) : NULL;
    if (l && --(*l)->refs == 0) {
        dead = *l;
        *l = dead->next;
    }
    pthread_mutex_unlock(&st_loaded_lock);
    if (dead) {
        st_catalogue_free(dead->cat);
        free(dead);
    }
}

int st_cat_is_loaded(const st_catalogue *cat)
{
    pthread_mutex_lock(&st_loaded_lock);
    int loaded = cat && st_loaded_find(cat) != NULL;
    pthread_mutex_unlock(&st_loaded_lock);
    return loaded;
}

/* `text` into err after `head`, without its last newline. */
static void st_put_lines(char *err, size_t errlen, const char *head, const char *text)
{
    size_t n = text ? strlen(text) : 0;
    while (n > 0 && text[n - 1] == '\n')
        n--;
    snprintf(err, errlen, "%s%.*s", head, (int)(n > 1u << 20 ? 1u << 20 : n), text ? text : "");
}

/* The failure of a compile: the compiler's lines (and, under STITCH_DEBUG, the full diagnostics on stderr). */
static stitch_status_t st_compile_error(const st_unit *u, const char *path, const char *what, char *err,
                                        size_t errlen)
{
    char head[512];
    if (u->open_errno) {
        snprintf(err, errlen, "%s: %s: error: cannot open: %s", what, path, strerror(u->open_errno));
        return STITCH_ERR_CONFIG;
    }
    if (st_debug()) {
        fprintf(stderr, "stitch: %s: %s does not compile:\n", what, path);
        st_diags_print(&u->d, stderr);
    }
    char *lines = st_diags_brief(&u->d);
    if (!lines) {
        snprintf(err, errlen, "%s: %s: out of memory", what, path);
        return STITCH_ERR_NO_MEMORY;
    }
    snprintf(head, sizeof head, "%s: %s does not compile:\n", what, path);
    st_put_lines(err, errlen, head, lines);
    free(lines);
    return STITCH_ERR_CONFIG;
}

stitch_status_t st_cat_load(const char *path, const char *what, st_catalogue **out, char *err, size_t errlen)
{
    st_unit u;
    st_loaded *rec = malloc(sizeof *rec);
    if (!rec) {
        snprintf(err, errlen, "%s: out of memory", what);
        return STITCH_ERR_NO_MEMORY;
    }
    stitch_status_t st = STITCH_OK;
    if (st_unit_compile(&u, path) != 0)
        st = st_compile_error(&u, path, what, err, errlen);
    else if (u.cat->nalgos == 0) {
        snprintf(err, errlen, "%s: %s: error: the file defines no algorithm (nothing to load)", what, path);
        st = STITCH_ERR_CONFIG;
    }
    if (st != STITCH_OK) {
        st_unit_free(&u);
        free(rec);
        return st;
    }
    *rec = (st_loaded){u.cat, 1, NULL};
    *out = u.cat;
    u.cat = NULL; /* the catalogue owns its names and file; the syntax tree goes */
    st_unit_free(&u);
    pthread_mutex_lock(&st_loaded_lock);
    rec->next = st_loaded_list;
    st_loaded_list = rec;
    pthread_mutex_unlock(&st_loaded_lock);
    if (st_debug())
        fprintf(stderr, "stitch: %s: loaded %s: %d algorithms, hash %016llx\n", what, path, (int)(*out)->nalgos,
                (unsigned long long)(*out)->hash);
    return STITCH_OK;
}

/* The verifier's report without its success lines: the counterexamples. */
static void st_failures_only(char *report)
{
    char *w = report;
    for (const char *line = report; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (strncmp(line, "verified ", 9) != 0 && strncmp(line, "not applicable: ", 16) != 0) {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
}

stitch_status_t st_cat_verify(const st_catalogue *cat, int p, const st_topo *topo, char *err, size_t errlen)
{
    char *report = NULL, head[512];
    size_t len = 0;
    FILE *mem = open_memstream(&report, &len);
    if (!mem) {
        snprintf(err, errlen, "out of memory verifying %s", cat->file);
        return STITCH_ERR_NO_MEMORY;
    }
    st_verify_opts o = {.coll = -1, .exact_p = p, .exact_topo = topo};
    int failed = st_verify(cat, &o, mem);
    if (fclose(mem) != 0) {
        free(report);
        snprintf(err, errlen, "out of memory verifying %s", cat->file);
        return STITCH_ERR_NO_MEMORY;
    }
    if (st_debug())
        fprintf(stderr, "stitch: verifying %s for p = %d%s:\n%s", cat->file, p, topo ? " and its groups" : "", report);
    stitch_status_t st = STITCH_OK;
    if (failed > 0) {
        st_failures_only(report);
        snprintf(head, sizeof head, "%s: %d (algorithm, collective) pair%s fail%s verification for this communicator "
                 "(p = %d%s); nothing runs:\n", cat->file, failed, failed == 1 ? "" : "s", failed == 1 ? "s" : "",
                 p, topo ? ", its groups" : "");
        st_put_lines(err, errlen, head, report);
        st = STITCH_ERR_CONFIG;
    }
    free(report);
    return st;
}

stitch_status_t stitch_catalogue_load(const char *path, stitch_catalogue_t **out, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || errlen == 0)
        err = dummy, errlen = sizeof dummy;
    if (!path || !out) {
        snprintf(err, errlen, "stitch_catalogue_load: %s is NULL", !path ? "path" : "out");
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    st_catalogue *cat = NULL;
    stitch_status_t st = st_cat_load(path, "stitch_catalogue_load", &cat, err, errlen);
    if (st == STITCH_OK)
        *out = cat;
    return st;
}

void stitch_catalogue_free(stitch_catalogue_t *cat)
{
    st_cat_unref(cat);
}
