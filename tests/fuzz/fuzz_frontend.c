/* fuzz_frontend.c - libFuzzer entry point for the front end: parse, print the diagnostics, free.
 *
 * Printing is part of the target because the printer reads the source through positions the lexer and parser
 * computed; a wrong line or column shows up there as an out-of-bounds read. Output goes to /dev/null.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        return 0;
    st_diags d;
    st_diags_init(&d, "fuzz.dsl", NULL, 0);
    st_file *f = st_parse("fuzz.dsl", (const char *)data, size, &d);
    st_diags_print(&d, devnull);
    st_file_free(f);
    st_diags_free(&d);
    return 0;
}
