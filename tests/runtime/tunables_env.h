/* tunables_env.h - the runtime's tunables a test clears before it runs, expanded from runtime/tunables.def so a
 * new tunable is cleared without touching the tests (runner.h, procrun.h; test_tunables.c checks the lists).
 *
 * A test's scenarios assume the defaults, whatever the caller's shell exported, except for what the run itself
 * may pass in on purpose: the ring sizes (ctest sets STITCH_SHM_RING_BYTES for the tinyring runs), the interface
 * (a host where the default route is not the way between its ranks) and STITCH_DEBUG (to see what a failing
 * test did). Those are named here; every other declared tunable is cleared.
 */
#ifndef ST_TEST_TUNABLES_ENV_H
#define ST_TEST_TUNABLES_ENV_H

#include <stdlib.h>
#include <string.h>

static const char *const st_test_tunables_kept[] = {"STITCH_SHM_RING_BYTES", "STITCH_TCP_RING_BYTES",
                                                    "STITCH_SOCKET_IFNAME", "STITCH_DEBUG"};

static const char *const st_test_tunables[] = {
#define ST_TUNABLE(name, load, def, meaning) #name,
#include "../../runtime/tunables.def"
};

static int st_test_tunable_kept(const char *name)
{
    for (size_t i = 0; i < sizeof st_test_tunables_kept / sizeof *st_test_tunables_kept; i++)
        if (strcmp(name, st_test_tunables_kept[i]) == 0)
            return 1;
    return 0;
}

/* Clear every declared tunable but the kept ones. */
static void st_test_clear_tunables(void)
{
    for (size_t i = 0; i < sizeof st_test_tunables / sizeof *st_test_tunables; i++)
        if (!st_test_tunable_kept(st_test_tunables[i]))
            unsetenv(st_test_tunables[i]);
}

#endif
