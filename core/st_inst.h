/* st_inst.h - what instantiating a schedule is given and may answer: the topology's levels, the instantiation's
 * inputs (st_inst), its error (st_err), and the collectives' block counts. Types only, apart from the schedule
 * (st_sched.h) and the machine (st_vm.h), so both can use them without using each other. */
#ifndef ST_INST_H
#define ST_INST_H

#include <stdint.h>

/* An instantiation error: what went wrong, for which p and rank, and the .dsl line it comes from (0: none). */
typedef struct st_err {
    int line;
    char msg[512];
    int col;            /* the column of the send at `line`, when the error is about one (0: none) */
    int refused;        /* a `require` did not hold: the algorithm does not apply to this instantiation (its
                         * topology, p or root), which is a refusal, not a fault of the algorithm */
} st_err;

/* One level of a topology: group g holds members[first[g] .. first[g+1]) (ranks, in index order); sizes may
 * differ. NULL arrays (the outermost level, which is always one group) mean one group of all p ranks in rank
 * order. */
typedef struct st_topo_level {
    int ngroups;
    const int32_t *first;    /* ngroups + 1 */
    const int32_t *members;  /* p ranks */
    const int32_t *group_of; /* per rank */
    const int32_t *index_of; /* per rank */
} st_topo_level;

/* Ranks in levels (servers, pods, super-pods) as the topology queries of the language see them. Level 0 is the
 * innermost: its groups are servers, and its fields come first, as before levels existed, so code that reads
 * ngroups/first/members/group_of/index_of sees the servers. Level k + 1 groups are made of whole level-k groups;
 * the outermost level, nlevels - 1, is one group of all ranks in rank order and is not stored. Levels 1 ..
 * nlevels - 2 are upper[0 .. nlevels - 3]. nlevels 0 (a value built field by field, without levels) reads as 2:
 * the groups, then everything. core/st_topo.h builds one from a nested layout; st_topo_level_of reads any level. */
typedef struct st_topo {
    int ngroups;
    const int32_t *first;    /* ngroups + 1 */
    const int32_t *members;  /* p ranks */
    const int32_t *group_of; /* per rank */
    const int32_t *index_of; /* per rank */
    int nlevels;             /* 1 .. ST_TOPO_MAX_LEVELS; 0 reads as 2 */
    const st_topo_level *upper; /* levels 1 .. nlevels - 2 */
} st_topo;

#define ST_TOPO_MAX_LEVELS 8

/* The number of levels of t (1 for NULL: one group of all ranks). */
int st_topo_nlevels(const st_topo *t);
/* Level k (0 <= k < st_topo_nlevels(t)) of t; NULL t is one level of one group. */
st_topo_level st_topo_level_of(const st_topo *t, int k);

/* Everything an instantiation depends on besides the table. */
typedef struct st_inst {
    int p;
    int root;              /* rooted collectives; 0 otherwise */
    const st_topo *topo;   /* NULL: one group of all p ranks */
    const int32_t *use;    /* per algorithm of the catalogue: the one a phase naming it runs instead, of the same
                            * collective (-1: itself); NULL: none. How a configuration replaces a role (algos.dsl's
                            * level0, level1, ahc_intra, ahc_inter) without touching the composites that name it */
    int split_set;         /* split_ppm was given; 0: R = 0.5 (ST_SPLIT_DEFAULT_PPM) */
    int32_t split_ppm;     /* R, the 2D split ratio of spec 10/12 in its 12.4 meaning, in millionths 0 .. 1000000;
                            * the language reads it as split_ratio(q) = floor(R * q). Computed once per
                            * communicator (runtime/comm.c), given by `stitchc --split` */
} st_inst;

#define ST_SPLIT_DEFAULT_PPM 500000 /* R when none is given: HCCL's fallback (spec 12.3) */

/* Number of blocks of the collective's vector for p ranks: 1 for all_reduce, broadcast and reduce; p for
 * reduce_scatter, all_gather, scatter and gather (block b is rank b's part); p * p for all_to_all and
 * all_to_all_v (block i * p + j is what rank i sends to rank j). */
int st_coll_nblocks(int coll, int p);

#endif
