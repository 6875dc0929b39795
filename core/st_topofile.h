/* st_topofile.h - topology files (YAML, read with libyaml): levels with their links, and a nested layout of ranks.
 *
 *   name: pods-64-128
 *   levels:                       # innermost first
 *     - {name: server,  bandwidth: 56 GB/s,   latency: 1 us}   # full_mesh: false for servers linked in a ring
 *     - {name: pod,     bandwidth: 25 GB/s,   latency: 5 us}
 *     - {name: cluster, bandwidth: 6.25 GB/s, latency: 10 us}
 *   reduce_bandwidth: 100 GB/s    # gamma = 1 / reduce_bandwidth
 *   layout:                       # nested lists, outermost first; a number is a count of ranks
 *     - [8, 8, 8, 8, 8, 8, 8, 8]
 *     - [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8]
 *
 * A server (a count of ranks) may also be written `{host: node07, ranks: 8}` or with the devices its ranks use,
 * `{host: node07, devices: [0, 1, 2, 3]}`; topologies/README.md is the reference for the form and its units.
 *
 * The loader is a plain library (libyaml and libc only), for stitchc, stitch-info and the runtime alike. It never
 * crashes, hangs or allocates without bound on any input: files are read by st_read_regular (regular files of at
 * most ST_TOPOFILE_MAX_BYTES), nesting is limited to ST_TOPOFILE_MAX_DEPTH collections, aliases are refused (no
 * expansion bombs), and the layout is limited to ST_LAYOUT_MAX_RANKS ranks and ST_TOPO_MAX_LEVELS levels. Every error is
 * one line `FILE:LINE:COL: error: ...` (1-based; libyaml's marks are 0-based), or `FILE: error: ...` when the file
 * cannot be read at all.
 */
#ifndef ST_TOPOFILE_H
#define ST_TOPOFILE_H

#include <stddef.h>
#include <stdint.h>

#include "st_topo.h"

#define ST_TOPOFILE_MAX_BYTES (16 << 20) /* 16 MiB: a layout of 1,000,000 one-rank servers fits in a fifth of it */
#define ST_TOPOFILE_MAX_DEPTH 32        /* collections open at once */
#define ST_TOPOFILE_NAME_MAX 64         /* names of the topology and its levels, host names: bytes, with the NUL */
#define ST_TOPOFILE_HOST_MAX 256

typedef struct st_level_info {
    char name[ST_TOPOFILE_NAME_MAX];
    double bandwidth; /* bytes per second, > 0 */
    double latency;   /* seconds, >= 0 */
    int full_mesh;    /* level 0 only (`full_mesh: true|false`, default true): every two ranks of a server have a
                       * link of their own, so HCCL runs Mesh inside it; false: Ring (spec 13.1: level0 is fixed
                       * by the hardware). 1 on the other levels */
} st_level_info;

typedef struct st_topofile {
    char name[ST_TOPOFILE_NAME_MAX];      /* "" when not given */
    int nlevels;                          /* layout.nlevels */
    st_level_info level[ST_TOPO_MAX_LEVELS]; /* innermost first */
    double reduce_bandwidth;              /* bytes per second reduced; 0 when not given */
    st_layout layout;
    char **host;                          /* per server (layout.ngroups[0]): its host name; NULL when none has one */
    int32_t **devices;                    /* per server: its ranks' device ids; NULL (or a NULL entry): not given */
    int nslots;                           /* entries allocated in host and devices (the loader's own) */
} st_topofile;

/* Read and check a topology file. Returns 0, or -1 with one line `FILE:LINE:COL: error: ...` (no newline) in err;
 * *t is then empty (st_topofile_free is harmless on it). */
int st_topofile_load(const char *path, st_topofile *t, char *err, size_t errlen);

/* The same on text already in memory (len bytes, any content); `path` only names it in messages. */
int st_topofile_parse(const char *path, const char *text, size_t len, st_topofile *t, char *err, size_t errlen);

void st_topofile_free(st_topofile *t);

/* A topology setting (STITCH_TOPO, config->topo, stitchc --topo, stitch-info --topo): a YAML file, or a layout
 * written inline as on the command line ("2,3", "[2,3],[4]", "3x2"). A value made only of digits, ',', '[', ']',
 * 'x' (or 'X') and blanks is a layout (a file with such a name is written "./2,3"); an inline layout has no level
 * names, figures or hosts. The one loader of every reader: 0, or -1 with one line in err (the file loader's
 * `FILE:LINE:COL: error: ...`, or "bad layout '...': ..." / "empty: ..." without a file name); *t is then empty. */
int st_topofile_open(const char *spec, st_topofile *t, char *err, size_t errlen);
int st_topofile_is_layout(const char *spec);

/* How many files st_topofile_load has read in this process (tests count the runtime's reads: one per job). */
unsigned long st_topofile_loads(void);

#endif
