/* verify_progress.h - `stitchc verify`'s progress line on a terminal (verify_progress.c). */
#ifndef ST_VERIFY_PROGRESS_H
#define ST_VERIFY_PROGRESS_H

#include <stdio.h>

#include "verify.h"

typedef struct st_progress {
    int on, shown;     /* stderr is a terminal; a line is drawn on it now */
    int npairs;
    double t0, last;   /* when verify started, when the line was last drawn */
    FILE *out;         /* where verify prints: stdout, or (on) a stream that clears the line first */
} st_progress;

/* Hooks o->progress when stderr is a terminal (and $TERM is not "dumb"); returns the stream st_verify must print
 * to (stdout when off). Nothing is drawn before half a second has passed, so short runs look as before. */
FILE *st_progress_start(st_progress *pr, st_verify_opts *o, int npairs);
/* Flushes verify's output and clears the line. */
void st_progress_end(st_progress *pr);

#endif
