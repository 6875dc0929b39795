/* replay.h - a tiny call's moves, recorded on its first call and replayed on the next ones (replay.c). */
#ifndef ST_REPLAY_H
#define ST_REPLAY_H

#include "call.h"

/* Where a recorded move's pointers point: a role, whose base each call finds anew, and an offset from it. */
enum { ST_RR_NONE, ST_RR_INPUT, ST_RR_WORK, ST_RR_UNITS, ST_RR_LINES, ST_RR_COUNT };

/* One call's bases of the roles: where the call model keeps my input, my blocks and my scratch units (its st_where:
 * only the buffers the call uses, whatever else the caller passed), and the peers' tiny hand-overs of this call's
 * parity (rank q's at q slots from rank 0's, job.h). */
typedef struct st_replay_bases {
    char *base[ST_RR_COUNT];
    size_t len[ST_RR_COUNT]; /* the bytes a role spans: recording refuses a pointer outside every role */
} st_replay_bases;

/* A recording in progress: call.h's recorder hook, which makes each move and writes it down. */
typedef struct st_replay_rec {
    st_recorder hook; /* first */
    st_call *m;
    struct st_rprog *r;
    const st_replay_bases *b;
} st_replay_rec;

/* The program of entry e for call m, if one was recorded for its shape; NULL: run the general path (and record). */
const struct st_rprog *st_replay_find(const struct st_entry *e, const st_call *m);

/* Start recording call m into e's program (made on first use); 0 when it cannot (no memory, or a shape found not to
 * fit): run it unrecorded. */
int st_replay_begin(st_replay_rec *rec, struct st_entry *e, st_call *m, const st_replay_bases *b);

/* The call ran to its end (ok) or failed: the program is kept only if it ran whole and every move was recorded. */
void st_replay_end(st_replay_rec *rec, int ok);

/* Make the program's moves for call m, in their order: the same moves, bit for bit, as the general path's. */
void st_replay_run(const struct st_rprog *r, const st_call *m, const st_replay_bases *b);

#endif
