/* fuzz_algofile.c - libFuzzer entry point for what STITCH_ALGO_FILE and stitch_catalogue_load do with a file: read
 * it, compile it into a catalogue (front end, sema, step tables), then verify that catalogue for the communicators
 * a small job would make (runtime/catalogue.c: st_cat_verify for its p, and for groups), and free it.
 *
 * p is kept small (1..4, and the unequal groups 1,2) so that an input costs milliseconds, not the build's 1..32
 * sweep: the fuzzer is after crashes, leaks and hangs in the pipeline, which small shapes reach. The bytes go to a
 * memfd read through /proc/self/fd, so the loader's own reading (regular files only, bounded) runs as well.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "catalogue.h"
#include "st_topo.h"
#include "stitch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a memfd that holds exactly the input. */
static const char *as_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        if ((fd = memfd_create("fuzz.dsl", MFD_CLOEXEC)) < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        abort();
    return path;
}

/* The unequal layout 1,2: groups of different sizes, where `require uniform()` and the levels matter. */
static void verify_groups(const st_catalogue *cat)
{
    st_layout lay = {0};
    st_topo topo;
    void *mem = NULL;
    char why[128], err[4096];
    if (st_layout_parse("1,2", &lay, why, sizeof why) != 0 || st_topo_build(&lay, &topo, &mem) != 0)
        abort();
    st_cat_verify(cat, lay.p, &topo, err, sizeof err);
    free(mem);
    st_layout_free(&lay);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stitch_catalogue_t *cat = NULL;
    char err[4096];
    if (stitch_catalogue_load(as_file(data, size), &cat, err, sizeof err) != STITCH_OK)
        return 0;
    for (int p = 1; p <= 4; p++)
        st_cat_verify(cat, p, NULL, err, sizeof err);
    verify_groups(cat);
    stitch_catalogue_free(cat);
    return 0;
}
