/* parse_main.c - st-parse: parse one .dsl file and print its diagnostics to stderr, exit 1 on errors.
 *
 * The golden diagnostics test (frontend.cmake, through tests/lib/run.cmake) runs it on each
 * tests/frontend/bad/NAME.dsl; it is also the quickest way to see what the front end says about a file.
 * `--count` prints the number of algorithms parsed.
 */
#include <stdio.h>
#include <string.h>

#include "frontend.h"

int main(int argc, char **argv)
{
    int count = argc > 2 && strcmp(argv[1], "--count") == 0;
    if (argc != 2 + count) {
        fprintf(stderr, "usage: st-parse [--count] FILE.dsl\n");
        return 2;
    }
    const char *path = argv[1 + count];
    st_diags d;
    st_diags_init(&d, path, NULL, 0);
    st_file *f = st_parse_path(path, &d);
    st_diags_print(&d, stderr);
    if (count && f) {
        int n = 0;
        for (const st_algo_ast *a = f->algos; a; a = a->next)
            n++;
        printf("%d algorithm%s\n", n, n == 1 ? "" : "s");
    }
    int rc = d.nerrors > 0;
    st_file_free(f);
    st_diags_free(&d);
    return rc;
}
