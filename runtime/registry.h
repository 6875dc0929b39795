/* registry.h - the algorithms compiled into libstitch (st_builtin_catalogue, generated from algos.dsl). */
#ifndef ST_REGISTRY_H
#define ST_REGISTRY_H

#include <stddef.h>

#include "stitch.h"
#include "st_steptab.h"

extern const st_catalogue st_builtin_catalogue;

/* The algorithm `name` (case-insensitive) implementing `coll`, or NULL. */
const st_algo *st_registry_find(const char *name, stitch_coll_t coll);

/* The first algorithm implementing `coll` in the catalogue (the default where there is no "ring"), or NULL. */
const st_algo *st_registry_first(stitch_coll_t coll);

/* Position of `algo` in the catalogue: communicators index their schedule cache with it. */
int st_registry_index(const st_algo *algo);
int st_registry_count(void);

/* "ring, mesh, rhd": the names implementing `coll`, for error messages. */
void st_registry_names(stitch_coll_t coll, char *buf, size_t len);

#endif
