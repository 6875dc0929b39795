/* config.h - the runtime's tunables, resolved once per communicator group from stitch_config_t and the
 * environment (config.c is the only place that calls getenv). */
#ifndef ST_CONFIG_H
#define ST_CONFIG_H

#include <stddef.h>

#include "stitch.h"

#define ST_NAME_MAX 64

typedef struct st_settings {
    char algo[STITCH_COLL_COUNT][ST_NAME_MAX]; /* algorithm name per collective, not yet checked */
    const char *algo_source;                   /* "config->algo", "STITCH_ALGO" or "default", for messages */
    int timeout_ms;                            /* < 0: wait forever */
    size_t segment_bytes;                      /* vector bytes per pipeline segment */
} st_settings;

/* Fill `out`; on a malformed value return STITCH_ERR_CONFIG with what, where and why in err. */
stitch_status_t st_settings_load(const stitch_config_t *config, st_settings *out, char *err, size_t errlen);

/* Parse an algorithm spec: "name" for every collective, or "coll=name,..." per collective (later items win). */
stitch_status_t st_parse_algo_spec(const char *spec, char names[STITCH_COLL_COUNT][ST_NAME_MAX], char *err,
                                   size_t errlen);

#endif
