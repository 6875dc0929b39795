/* st_steptab.c - names of the collectives, shared by the compiler and the runtime. */
#include <strings.h>

#include "st_steptab.h"

static const char *const coll_names[] = {
#define ST_COLL_NAME(id, name) name,
    ST_COLLECTIVES(ST_COLL_NAME)
#undef ST_COLL_NAME
};

const char *st_coll_name(int coll)
{
    if (coll < 0 || coll >= ST_COLL_COUNT)
        return "?";
    return coll_names[coll];
}

int st_coll_from_name(const char *name)
{
    for (int i = 0; i < ST_COLL_COUNT; i++)
        if (strcasecmp(name, coll_names[i]) == 0)
            return i;
    return -1;
}

int st_coll_rooted(int coll)
{
    return coll == ST_COLL_BROADCAST || coll == ST_COLL_REDUCE || coll == ST_COLL_SCATTER || coll == ST_COLL_GATHER;
}

const char *st_coll_list(void)
{
#define ST_COLL_STR(id, name) ", " name
    return &ST_COLLECTIVES(ST_COLL_STR)[2];
#undef ST_COLL_STR
}
