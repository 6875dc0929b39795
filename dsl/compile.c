/* compile.c - st_unit_compile: the pipeline from a path to a catalogue, shared by stitchc and the runtime's loader
 * (compile.h says why one copy). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "frontend.h"
#include "sema.h"

int st_unit_compile(st_unit *u, const char *path)
{
    char *text = NULL, why[160];
    size_t len = 0;
    memset(u, 0, sizeof *u);
    st_diags_init(&u->d, path, NULL, 0);
    int rd = st_read_source(path, &text, &len, why, sizeof why);
    if (rd == -1) {
        u->open_errno = errno ? errno : EIO;
        return -1;
    }
    if (rd != 0) /* not a regular file, too large: `FILE: error: why` */
        st_diag_add(&u->d, ST_SEV_ERROR, 0, 0, "%s", why);
    else
        u->f = st_parse(path, text, len, &u->d);
    free(text);
    if (rd == 0 && !u->f)
        st_diag_add(&u->d, ST_SEV_ERROR, 0, 0, "out of memory reading the file");
    if (u->f && u->d.nerrors == 0)
        u->cat = st_compile(u->f, &u->d);
    return u->cat && u->d.nerrors == 0 ? 0 : -1;
}

void st_unit_free(st_unit *u)
{
    st_catalogue_free(u->cat);
    st_diags_free(&u->d);
    if (u->f)
        st_file_free(u->f);
    memset(u, 0, sizeof *u);
}

char *st_diags_brief(const st_diags *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    st_diags_print_brief(d, out);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
