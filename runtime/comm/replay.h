/* replay.h - a tiny call's moves, recorded on its first call and replayed on the next ones (replay.c), by the threads
 * engine (threads/exec.c) and the message engine (proc/exec_msg.c). */
#ifndef ST_REPLAY_H
#define ST_REPLAY_H

#include "call.h"

/* Where a recorded move's pointers point: a role, whose base each call finds anew, and an offset from it. */
enum { ST_RR_NONE, ST_RR_INPUT, ST_RR_WORK, ST_RR_UNITS, ST_RR_LINES, ST_RR_COUNT };

/* One call's bases of the roles: where the call model keeps my input, my blocks and my scratch units (its st_where:
 * only the buffers the call uses, whatever else the caller passed), and ST_RR_LINES: for the threads engine the
 * peers' tiny hand-overs of this call's parity (rank q's at q slots from rank 0's, job.h), for the message engine
 * the payload of the message being applied (in the transport's buffer). */
typedef struct st_replay_bases {
    char *base[ST_RR_COUNT];
    size_t len[ST_RR_COUNT]; /* the bytes a role spans: recording refuses a pointer outside every role */
} st_replay_bases;

/* One step of a program: a move (op ST_X_COPY or a reduce: n elements, each pointer a role and an offset), or one of
 * the message engine's marks, which say where its step-0 messages go and come (exec_msg.c interprets them):
 *   ST_RM_SEND   a compact message (exec_msg.c) of n payload bytes for transfer sched.xfers[doff], step soff; its
 *                pieces follow
 *   ST_RM_SENDF  the same with a full header, its payload padded to 64 bytes (a small message, staged whole)
 *   ST_RM_PIECE  n bytes of that payload, from (sk, soff)
 *   ST_RM_RECV   the compact message of transfer sched.xfers[doff], n payload bytes, receive soff of my plan: from
 *                here to its ST_RM_DONE its payload is ST_RR_LINES
 *   ST_RM_RECVF  the same with a full header
 *   ST_RM_DONE   that message is applied: consume it
 *   ST_RM_HELLO  a rooted call's hello to the next rank (a bare header; exec_msg.c)
 *   ST_RM_HELLO_IN  the previous rank's hello: check it, consume it */
enum { ST_RM_SEND = 0xf0, ST_RM_SENDF, ST_RM_PIECE, ST_RM_RECV, ST_RM_RECVF, ST_RM_DONE, ST_RM_HELLO, ST_RM_HELLO_IN };

typedef struct st_rmove {
    uint8_t op, dk, sk, ik;
    uint32_t n;
    uint32_t doff, soff, ioff;
} st_rmove;

#define ST_REPLAY_MOVES 128

/* One shape's program. */
typedef struct st_rprog {
    size_t count; /* the shape: */
    int dtype, op;
    long long rel; /* how sendbuf lies to recvbuf (replay.c's st_replay_rel) */
    int state; /* 0 recording, 1 recorded, 2 refused (a pointer outside the roles, too many moves, or its engine said
                * so: st_replay_refuse), 3 this call's recording is not one (st_replay_retry) */
    int nmoves;
    uint64_t key;           /* what the engine keeps with the program: the message engine's compact key, */
    unsigned char head[64]; /* and its full header's fields (exec_msg.c's st_pmsg_of) */
    st_rmove mv[ST_REPLAY_MOVES];
} st_rprog;

/* A recording in progress: call.h's recorder hook, which makes each move and writes it down. */
typedef struct st_replay_rec {
    st_recorder hook; /* first */
    st_call *m;
    st_rprog *r;
    const st_replay_bases *b; /* the caller's: it may move ST_RR_LINES while recording */
} st_replay_rec;

/* Tests: every tiny call takes the general path, unrecorded (both engines). */
extern int st_replay_off;

/* The bases of call m's input, work blocks and scratch units; ST_RR_LINES empty. */
void st_replay_bases_of(const st_call *m, st_replay_bases *b);

/* The program of entry e for call m, if one was recorded for its shape; NULL: run the general path (and record). */
const st_rprog *st_replay_find(const struct st_entry *e, const st_call *m);

/* Start recording call m into e's program (made on first use); 0 when it cannot (no memory, or a shape found not to
 * fit): run it unrecorded. */
int st_replay_begin(st_replay_rec *rec, struct st_entry *e, st_call *m, const st_replay_bases *b);

/* The message engine's marks (ST_RM_SEND, ST_RM_RECV, ST_RM_DONE) and a message's pieces (src, bytes), in order. */
void st_replay_mark(const st_replay_rec *rec, int op, uint32_t doff, uint32_t soff, size_t n);
void st_replay_piece(const st_replay_rec *rec, const char *src, size_t bytes);

/* What the call does is not a program's (its engine says: a message not sent or received whole, a later step that
 * talks to peers): its calls of this shape take the general path. */
void st_replay_refuse(const st_replay_rec *rec);

/* This call went a way that its shape's calls need not go (a message that arrived in pieces): record the shape again
 * on its next call. */
void st_replay_retry(const st_replay_rec *rec);

/* The call ran to its end (ok) or failed: the program is kept only if it ran whole and every move was recorded. */
void st_replay_end(st_replay_rec *rec, int ok);

/* Make move mv of a program for call m: the same move, bit for bit, as the general path's. */
static inline void st_replay_move(const st_rmove *mv, const st_call *m, const st_replay_bases *b)
{
    char *dst = b->base[mv->dk] + mv->doff;
    const char *src = b->base[mv->sk] + mv->soff, *in = mv->ik ? b->base[mv->ik] + mv->ioff : NULL;
    st_call_move_now(m, mv->op, dst, in, src, mv->n);
}

/* Make the program's moves for call m, in their order (a program without marks: the threads engine's). */
void st_replay_run(const st_rprog *r, const st_call *m, const st_replay_bases *b);

#endif
