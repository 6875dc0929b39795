/* log.c - the one switch of the runtime's diagnostics on stderr (STITCH_DEBUG). */
#include <stdlib.h>
#include <string.h>

#include "base.h"

int st_debug(void)
{
    const char *v = getenv("STITCH_DEBUG");
    return v && *v && strcmp(v, "0") != 0;
}
