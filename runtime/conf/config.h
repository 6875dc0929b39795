/* config.h - the runtime's tunables (declared in tunables.def), resolved once per communicator group from
 * stitch_config_t and the environment (config.c is the only place that calls getenv for them). Priority:
 * the communicator's stitch_config_t, then the environment, then the built-in default; st_origin records which
 * one gave each value. */
#ifndef ST_CONFIG_H
#define ST_CONFIG_H

#include <stddef.h>

#include "base.h"
#include "stitch.h"

#define ST_NAME_MAX 64
#define ST_DEFAULT_ALGO "ring"
#define ST_SECRET_MAX 255 /* characters of STITCH_SECRET */

/* STITCH_TRANSPORT: how a process-mode pair moves its data: auto, or an entry of transport.c's table. */
enum { ST_TP_AUTO = -1 };

/* An algorithm choice as written: `every` applies to each collective that has an algorithm of that name (the
 * others keep the default), `coll[c]` to collective c only and must exist; "" when not given. */
typedef struct st_algo_spec {
    char every[ST_NAME_MAX];
    char coll[STITCH_COLL_COUNT][ST_NAME_MAX];
} st_algo_spec;

/* Where a value came from. */
typedef enum st_source { ST_SRC_DEFAULT, ST_SRC_ENV, ST_SRC_COMM } st_source;
const char *st_source_name(st_source src); /* "default", "environment", "communicator" */

/* The tunables, numbered in tunables.def's order, with their declaration (name, default text or NULL, meaning). */
enum {
#define ST_TUNABLE(name, load, def, meaning) ST_T_##name,
#include "tunables.def"
    ST_TUNABLE_COUNT
};
typedef struct st_tunable_decl {
    const char *name, *def, *meaning;
} st_tunable_decl;
const st_tunable_decl *st_tunable_decl_of(int i); /* NULL when i is out of range */

/* HCCL_ALGO (spec 11): HCCL's algorithm names, in the order of its parser's table, after "not given". */
#define ST_HCCL_LEVELS 4 /* level0 .. level3 */
#define ST_HCCL_ALG_LIST(X)                                                                                    \
    X(DEFAULT, "default", NULL) X(NULL, "null", NULL) X(RING, "ring", "ring") X(PIPELINE, "pipeline", "pipeline")  \
    X(FULLMESH, "fullmesh", "mesh") X(HDR, "H-D_R", "rhd") X(PAIRWISE, "pairwise", "pairwise") X(NHR, "NHR", "nhr") \
    X(NHR_V1, "NHR_V1", NULL) X(AHC, "AHC", "ahc") X(AHC_BROKE, "AHC_BROKE", "ahc_broke") X(NB, "NB", "nb")          \
    X(NA, "NA", NULL)
typedef enum st_hccl_alg {
#define ST_HCCL_ALG_ENUM(id, hccl, stitch) ST_HA_##id,
    ST_HCCL_ALG_LIST(ST_HCCL_ALG_ENUM)
#undef ST_HCCL_ALG_ENUM
    ST_HA_COUNT
} st_hccl_alg;
const char *st_hccl_alg_name(int alg);   /* HCCL's spelling ("H-D_R"), "default" for ST_HA_DEFAULT */
const char *st_hccl_alg_stitch(int alg); /* stitch's algorithm of that name ("rhd"); NULL: none (default, null, NA,
                                          * NHR_V1) */

/* HCCL_ALGO as parsed: per stitch collective and level, the algorithm written (ST_HA_DEFAULT where no entry gave
 * that level). A common entry applies to every collective; a per-operator entry to its collectives (alltoall to
 * all_to_all and all_to_all_v, as HCCL copies it to alltoallv; send, receive and sendrecv to none). */
typedef struct st_hccl_algo {
    unsigned char level[STITCH_COLL_COUNT][ST_HCCL_LEVELS];
    unsigned char specific[STITCH_COLL_COUNT]; /* 1: set by a per-operator entry */
} st_hccl_algo;

/* What a level means for collective c after HCCL's rules (spec 9.6, 11.2): level1 AHC or AHC_BROKE drives level2
 * too; AHC and AHC_BROKE apply to all_reduce, reduce_scatter and all_gather only, pairwise to the all_to_alls only
 * (ST_HA_DEFAULT elsewhere). */
int st_hccl_level(const st_hccl_algo *h, stitch_coll_t c, int level);

/* The level1 entry that chooses collective c's algorithm (spec 11.2): ring, H-D_R, NHR, NB, pipeline, pairwise,
 * AHC, AHC_BROKE (or fullmesh, which HCCL ignores), as written, whether or not it applies to c; ST_HA_DEFAULT where
 * level1 is not given, NA or null. */
int st_hccl_configured(const st_hccl_algo *h, stitch_coll_t c);

/* What level1 `alg` runs for collective c on S servers (the level-0 groups; 1: no groups) of L ranks each (equal: all
 * the same size), HCCL's way (spec 7, 8, 9.6, 11.2): ring, H-D_R, NHR and NB that algorithm over all ranks where
 * every server holds one rank, "hier" (level0 in the server, the algorithm between servers: its role level1) where
 * they hold several; pipeline on equal full-mesh servers (level0_ring 0; not reductions under determinism); AHC
 * and AHC_BROKE on any servers; pairwise for the all_to_alls on any layout. *impl is the stitch algorithm that
 * must implement c (the one run, or hier's level1) for it to run. NULL where HCCL would use its default
 * instead, with why in `why` ("" for an entry that chooses nothing). */
const char *st_hccl_level1_run(int alg, stitch_coll_t c, int S, int L, int equal, int deterministic,
                               int level0_ring, const char **impl, char *why, size_t len);

/* Parse an HCCL_ALGO value; `name` is what messages call it ("HCCL_ALGO", "config->hccl_algo"). *given is 0 when
 * the value holds no entry (empty or blanks: HCCL's built-in selection). STITCH_ERR_CONFIG with the message. */
stitch_status_t st_parse_hccl_algo(const char *name, const char *value, st_hccl_algo *out, int *given, char *err,
                                   size_t errlen);

/* Parse an HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO value (spec 12.1's strict format, then stitch's 0..1; `name`
 * for messages) into *out. STITCH_ERR_CONFIG with the message. */
stitch_status_t st_parse_split_ratio(const char *name, const char *value, double *out, char *err, size_t errlen);

typedef struct st_settings {
    st_algo_spec algo;                         /* names not yet checked against the catalogue */
    const char *algo_source;                   /* "config->algo", "STITCH_ALGO" or "default", for messages */
    int timeout_ms;                            /* < 0: wait forever */
    size_t segment_bytes;                      /* vector bytes per pipeline segment */
    size_t oneshot_max;                        /* auto, policy size: mesh_oneshot up to these bytes sent per rank */
    int select;                                /* auto's policy: st_sel_policy (select.h) */
    const char *groups;                        /* groups spec as given ("3x2", "2,2,2"); NULL: one group */
    const char *groups_source;                 /* "config->groups" or "STITCH_GROUPS", for messages */
    const char *topo;                          /* topology file or inline layout (groups.h); NULL: not given */
    const char *topo_source;                   /* "config->topo" or "STITCH_TOPO", for messages */
    const char *algo_file;                     /* STITCH_ALGO_FILE: a .dsl compiled at init; NULL: none */
    /* process mode */
    int transport;                             /* ST_TP_AUTO, or the index of the entry (st_tp_find) */
    const char *transport_name;                /* as given, until st_tp_settings_check resolves it (then NULL) */
    size_t shm_ring_bytes, tcp_ring_bytes;     /* per ring, powers of two */
    long spin_us;                              /* -1: not set, proc.c decides from the ranks per core */
    long cma;                                  /* STITCH_CMA: 1 pull unregistered buffers with process_vm_readv */
    int fuse;                                  /* STITCH_FUSE: exec_msg.c forwards units as they land (1) or not */
    char tcp_cc[16];                           /* STITCH_TCP_CC; "" when not set */
    const char *socket_ifname;                 /* interface spec for tcp and the bootstrap; NULL: not set */
    const char *secret;                        /* the job's shared secret; NULL: the launcher's or the id's */
    int secret_empty;                          /* STITCH_SECRET is set but empty (so secret is NULL): warned */
    const char *ib_dev;                        /* STITCH_IB_DEV (tp_verbs.h's st_ib_dev_match); NULL: any */
    int ib_gid_index;                          /* STITCH_IB_GID_INDEX; -1: chosen (st_gid_pick) */
    size_t ib_ring_bytes;                      /* STITCH_IB_RING_BYTES: each verbs receive ring, 4 KiB to 8 MiB */
    size_t ib_rma_bytes;                       /* STITCH_IB_RMA_BYTES: one-sided from this payload; 0: never */
    size_t ib_mr_cache_bytes;                  /* STITCH_IB_MR_CACHE_BYTES: bytes the MR cache may pin */
    /* HCCL's variables */
    st_hccl_algo hccl_algo;                    /* all ST_HA_DEFAULT when not given */
    const char *hccl_algo_text;                /* as given; NULL: not given */
    const char *hccl_algo_source;              /* "config->hccl_algo" or "HCCL_ALGO"; NULL: not given */
    double split_ratio;                        /* R of the 2-D Mesh+NHR split, 0..1; < 0: not given (formula) */
    const char *split_source;                  /* "config->split_ratio" or the variable's name; NULL: not given */
    int deterministic;                         /* 0: false, 1: true (stitch is deterministic either way), 2: strict
                                                * (one reduction order per element: mesh_strict) */
    int ahc_inner[2];                          /* STITCH_AHC_INTRA, STITCH_AHC_INTER: st_ahc_inner (0: auto) */
    int level0_ring;                           /* the topology file's servers are not full meshes (level 0
                                                * `full_mesh: false`): level0 runs Ring, not Mesh. Not a tunable:
                                                * st_comm_new sets it from the file, split communicators inherit it */
} st_settings;

/* Where each tunable's value came from, and the text that was loaded: the variable's value, the declared default,
 * or the communicator's field written as text (in buf); text NULL: unset with no default. Kept apart from
 * st_settings so that equal settings compare equal whatever gave them. */
typedef struct st_origin {
    st_source source[ST_TUNABLE_COUNT];
    const char *text[ST_TUNABLE_COUNT];
    char buf[ST_TUNABLE_COUNT][48];
} st_origin;

/* Fill `out` from the table, recording in *origin (when not NULL) where each value came from; on a malformed
 * value return STITCH_ERR_CONFIG with what, where and why in err. The values that a room above owns (a transport's
 * name, STITCH_IB_DEV) are kept as text here and checked by st_settings_load. */
stitch_status_t st_settings_read_origin(const stitch_config_t *config, st_settings *out, st_origin *origin,
                                        char *err, size_t errlen);
/* st_settings_read_origin, then every transport's check of its own settings (comm/settings.c): what init and
 * stitch-info call. */
stitch_status_t st_settings_load(const stitch_config_t *config, st_settings *out, char *err, size_t errlen);
stitch_status_t st_settings_load_origin(const stitch_config_t *config, st_settings *out, st_origin *origin,
                                        char *err, size_t errlen);

/* Only what a bootstrap needs (STITCH_TIMEOUT, STITCH_SOCKET_IFNAME, STITCH_SECRET), for a rank whose settings
 * failed to load but which must still reach the rendezvous to tell the others why (proc.c). A malformed one of
 * these three leaves its default (the timeout) or none; STITCH_ERR_CONFIG then, else STITCH_OK. */
stitch_status_t st_settings_load_boot(const stitch_config_t *config, st_settings *out);

/* auto's policies: STITCH_SELECT's values (select.h builds the tables under them). */
typedef enum st_sel_policy {
    ST_SEL_MODEL, ST_SEL_HCCL, ST_SEL_SIZE, ST_SEL_HCCL_GUIDE, ST_SEL_POLICY_COUNT
} st_sel_policy;
const char *st_sel_policy_name(int policy); /* "model", "hccl", "size", "hccl_guide" */
int st_sel_policy_find(const char *name);   /* -1 when unknown (any case) */

/* AHC's inner algorithms (spec 9.6: NB, NHR or Ring inside and across groups), STITCH_AHC_INTRA / _INTER's
 * values; auto: the cost model picks per communicator and collective (select/select_ahc.c). */
typedef enum st_ahc_inner { ST_AHC_AUTO, ST_AHC_NB, ST_AHC_NHR, ST_AHC_RING, ST_AHC_INNER_COUNT } st_ahc_inner;
const char *st_ahc_inner_name(int v); /* "auto", "nb", "nhr", "ring" */
int st_ahc_inner_find(const char *name); /* -1 when unknown (any case) */

/* Parse a groups spec for p ranks into sizes (room for p entries): "SxL" is S groups of L ranks, "a,b,c" groups
 * of those sizes; groups hold consecutive ranks and must add up to p. STITCH_ERR_CONFIG with why in err. */
stitch_status_t st_parse_groups(const char *spec, int p, int *sizes, int *ngroups, char *err, size_t errlen);

/* The number of ranks a groups spec adds up to ("3x2": 6, "2,3": 5), or -1 when it is malformed for every count
 * (what stitch-info can check before any communicator exists). */
int st_groups_count(const char *spec);

/* st_debug (STITCH_DEBUG: the launcher, addresses, transports, groups and plans on stderr) is base.h's. */

/* Parse an algorithm spec: "name" for every collective, or "coll=name,..." per collective (later items win). */
stitch_status_t st_parse_algo_spec(const char *spec, st_algo_spec *out, char *err, size_t errlen);

#endif
