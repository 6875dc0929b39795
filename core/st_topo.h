/* st_topo.h - nested layouts of ranks (servers in pods in clusters) and the multi-level st_topo built from one.
 *
 * A layout is what a topology file's `layout:` and the tools' `--layout` describe: nested lists, outermost first,
 * whose innermost entries are counts of ranks. `2,3` is two servers of 2 and 3 ranks (two levels: the servers,
 * then everything); `[8,8],[8,8,8]` is two pods of 2 and 3 servers of 8 (three levels). Ranks are numbered in
 * layout order. In memory a layout is, per level k (0 innermost), the list of its groups in order, each with the
 * number of what it holds: ranks at level 0, groups of level k - 1 above. The outermost level has one group.
 *
 * The builder (st_layout_leaf / st_layout_close) is shared by the command-line parser here and the YAML loader
 * (core/st_topofile.c), so both accept exactly the same shapes with the same limits. Nothing here allocates
 * per rank except st_topo_build, whose result is one block freed with free().
 */
#ifndef ST_TOPO_H
#define ST_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "st_sched.h"

/* Ranks a layout (a topology file's, --layout's) may hold: far more than a schedule (ST_MAX_RANKS), since the
 * tools describe and simulate clusters without instantiating every rank (st_model's classes); a layout's arrays
 * take 16 bytes per rank. */
#define ST_LAYOUT_MAX_RANKS 1000000

typedef struct st_layout {
    int nlevels;                        /* 1 .. ST_TOPO_MAX_LEVELS; 0 while building, before the first count */
    int p;                              /* ranks: the sum of count[0] */
    int ngroups[ST_TOPO_MAX_LEVELS];    /* groups of each level; the outermost has 1 */
    int32_t *count[ST_TOPO_MAX_LEVELS]; /* count[k][g]: ranks in group g of level 0, or level k-1 groups in it */
    int cap[ST_TOPO_MAX_LEVELS];
} st_layout;

/* Builder, fed in document order. `depth` counts the lists around an entry, the outermost list being depth 1
 * (the bare count of a one-level layout is at depth 0). st_layout_leaf adds a count of n ranks at `depth`;
 * st_layout_close ends a list at `depth` that held m entries. Each returns 0, or -1 with the reason in `why`:
 * a count below 1, an empty list, a count at another depth than the first one, too many ranks (ST_LAYOUT_MAX_RANKS)
 * or levels (ST_TOPO_MAX_LEVELS), out of memory. */
int st_layout_leaf(st_layout *l, int depth, long long n, char *why, size_t whylen);
int st_layout_close(st_layout *l, int depth, int m, char *why, size_t whylen);
void st_layout_free(st_layout *l);

/* The command line's form: the contents of the outermost list, e.g. `2,3`, `[2,3],[4]`, `8`; or `SxL`, S groups of
 * L ranks (the old `-g` form). Spaces are allowed. Returns 0, or -1 with the reason in `why` (which names the
 * offending character's 1-based column). */
int st_layout_parse(const char *s, st_layout *l, char *why, size_t whylen);

/* A groups spec, the one grammar of STITCH_GROUPS, config->groups and stitchc -g: "SxL" (or "SXL"), S groups of
 * L ranks, or "a,b,c", groups of those sizes; groups hold consecutive ranks. Every size is 1 .. cap, and so is
 * the total. The sizes go to sizes[] (room for cap entries; NULL: only count) and their number to *ngroups.
 * Returns the total of ranks, or -1 when malformed. */
int st_groups_spec(const char *spec, int cap, int *sizes, int *ngroups);

/* The command line's form of l ("2,3", "[2,3],[4]"); a one-level layout prints as its count with "(one level)". */
void st_layout_format(const st_layout *l, char *buf, size_t len);

/* Build the topology of layout l into *t. The arrays live in one block returned in *mem (free() it after the last
 * use of *t; *t may be copied). Returns 0, or -1 when out of memory. */
int st_topo_build(const st_layout *l, st_topo *t, void **mem);

#endif
