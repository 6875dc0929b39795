/* settings.c - loading the settings whole: conf/'s table, then what the rooms above it own (each transport checks
 * its own values through its table entry). conf/ calls no room above it; this file is where the two meet. */
#include "config.h"
#include "transport.h"

stitch_status_t st_settings_load_origin(const stitch_config_t *config, st_settings *out, st_origin *origin,
                                        char *err, size_t errlen)
{
    stitch_status_t st = st_settings_read_origin(config, out, origin, err, errlen);
    return st != STITCH_OK ? st : st_tp_settings_check(out, err, errlen);
}

stitch_status_t st_settings_load(const stitch_config_t *config, st_settings *out, char *err, size_t errlen)
{
    return st_settings_load_origin(config, out, NULL, err, errlen);
}
