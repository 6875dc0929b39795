/* version.c - stitch_version(): the library's version, from the stitch.h it was built with (whose STITCH_VERSION_*
 * CMakeLists.txt checks against project(VERSION)). A program compiled against another stitch.h can tell. */
#include "stitch.h"

#define ST_STR_(x) #x
#define ST_STR(x) ST_STR_(x)

const char *stitch_version(void)
{
    return ST_STR(STITCH_VERSION_MAJOR) "." ST_STR(STITCH_VERSION_MINOR) "." ST_STR(STITCH_VERSION_PATCH);
}
