/* fuzz_topofile.c - libFuzzer entry point for the topology loader: parse the bytes as a topology file, and when
 * they load, build the topology and read every level of it, as stitchc and the runtime would.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "st_topofile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_topofile t;
    char err[512];
    if (st_topofile_parse("fuzz.yaml", (const char *)data, size, &t, err, sizeof err) != 0)
        return 0;
    st_topo topo;
    void *mem;
    if (st_topo_build(&t.layout, &topo, &mem) == 0) {
        long sum = 0;
        for (int k = 0; k < st_topo_nlevels(&topo); k++) {
            st_topo_level l = st_topo_level_of(&topo, k);
            for (int g = 0; l.first && g < l.ngroups; g++)
                sum += l.first[g + 1] - l.first[g];
            if (l.first && sum != t.layout.p)
                abort(); /* the groups of a level must hold every rank once */
            sum = 0;
        }
        free(mem);
    }
    st_topofile_free(&t);
    return 0;
}
