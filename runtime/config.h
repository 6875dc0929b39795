/* config.h - the runtime's tunables (declared in tunables.def), resolved once per communicator group from
 * stitch_config_t and the environment (config.c is the only place that calls getenv for them). */
#ifndef ST_CONFIG_H
#define ST_CONFIG_H

#include <stddef.h>

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

typedef struct st_settings {
    st_algo_spec algo;                         /* names not yet checked against the catalogue */
    const char *algo_source;                   /* "config->algo", "STITCH_ALGO" or "default", for messages */
    int timeout_ms;                            /* < 0: wait forever */
    size_t segment_bytes;                      /* vector bytes per pipeline segment */
    size_t oneshot_max;                        /* auto: small-message algorithm up to these bytes sent per rank */
    const char *groups;                        /* groups spec as given ("3x2", "2,2,2"); NULL: one group */
    const char *groups_source;                 /* "config->groups" or "STITCH_GROUPS", for messages */
    /* process mode */
    int transport;                             /* ST_TP_AUTO, or the index of the entry (st_tp_find) */
    size_t shm_ring_bytes, tcp_ring_bytes;     /* per ring, powers of two */
    long spin_us;                              /* -1: not set, proc.c decides from the ranks per core */
    char tcp_cc[16];                           /* STITCH_TCP_CC; "" when not set */
    const char *socket_ifname;                 /* interface spec for tcp and the bootstrap; NULL: not set */
    const char *secret;                        /* the job's shared secret; NULL: the launcher's or the id's */
} st_settings;

/* Fill `out`; on a malformed value return STITCH_ERR_CONFIG with what, where and why in err. */
stitch_status_t st_settings_load(const stitch_config_t *config, st_settings *out, char *err, size_t errlen);

/* Parse a groups spec for p ranks into sizes (room for p entries): "SxL" is S groups of L ranks, "a,b,c" groups
 * of those sizes; groups hold consecutive ranks and must add up to p. STITCH_ERR_CONFIG with why in err. */
stitch_status_t st_parse_groups(const char *spec, int p, int *sizes, int *ngroups, char *err, size_t errlen);

/* STITCH_DEBUG is set (and not "0"): log the launcher, addresses, transports and groups to stderr. Read on
 * every call, so it also works before any communicator exists (launcher detection). */
int st_debug(void);

/* Parse an algorithm spec: "name" for every collective, or "coll=name,..." per collective (later items win). */
stitch_status_t st_parse_algo_spec(const char *spec, st_algo_spec *out, char *err, size_t errlen);

#endif
