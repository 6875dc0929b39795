/* catalogue.h - catalogues compiled while the program runs (stitch_catalogue_load, STITCH_ALGO_FILE), kept alive by
 * reference counts, and the check that one holds for the communicator that will run it (catalogue.c says why). */
#ifndef ST_CATALOGUE_H
#define ST_CATALOGUE_H

#include <stddef.h>

#include "st_sched.h"
#include "st_steptab.h"
#include "stitch.h"

/* Compile `path` into a new loaded catalogue (one reference, the caller's). `what` names the setting in messages
 * ("STITCH_ALGO_FILE", "stitch_catalogue_load"). STITCH_ERR_CONFIG with the compiler's `FILE:LINE:COL: error: ...`
 * lines in err when the file cannot be read, does not compile or defines no algorithm; STITCH_ERR_NO_MEMORY. */
stitch_status_t st_cat_load(const char *path, const char *what, st_catalogue **out, char *err, size_t errlen);

/* Take a reference on `cat` when it is a loaded catalogue (1), else do nothing (0: static tables, which live
 * forever). */
int st_cat_ref(const st_catalogue *cat);
/* Drop one; the last frees it. Nothing for a catalogue that is not a loaded one. */
void st_cat_unref(const st_catalogue *cat);
/* 1 when `cat` was compiled at run time (and so was not verified at build time). */
int st_cat_is_loaded(const st_catalogue *cat);

/* Verify every algorithm of `cat` for exactly p ranks on `topo` (NULL: one group), every root, as that
 * communicator will instantiate them. STITCH_ERR_CONFIG with the verifier's `FILE:LINE[:COL]: error: ...` lines
 * in err when one is wrong; an algorithm whose `require` refuses this shape is not an error (it cannot run here,
 * and says so when chosen). */
stitch_status_t st_cat_verify(const st_catalogue *cat, int p, const st_topo *topo, char *err, size_t errlen);

#endif
