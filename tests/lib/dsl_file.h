/* dsl_file.h - a .dsl file compiled for a test program: parsed and checked, its diagnostics printed on stderr.
 * The caller frees what it gets (st_catalogue_free, st_diags_free, st_file_free) whether or not it compiled. */
#ifndef ST_TEST_DSL_FILE_H
#define ST_TEST_DSL_FILE_H

#include <stdio.h>

#include "diag.h"
#include "frontend.h"
#include "sema.h"

/* The catalogue of the file at path, or NULL (the reasons are on stderr). */
static inline st_catalogue *st_test_compile(const char *path, st_diags *d, st_file **f)
{
    st_diags_init(d, path, NULL, 0);
    *f = st_parse_path(path, d);
    st_catalogue *c = *f && d->nerrors == 0 ? st_compile(*f, d) : NULL;
    st_diags_print(d, stderr);
    return c;
}

#endif
