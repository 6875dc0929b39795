/* pull.h - the pull protocol's step loop (pull.c), written once for the two engines that read their peers' units in
 * place: ranks as threads (threads/exec.c: peers' slots in one process, borrows per transfer) and processes on
 * registered memory (proc/exec_pull.c: peers' boards and regions in memfd segments, borrowed for the call).
 *
 * The protocol (threads/exec.c's opening comment has it whole), with `base` my counter's value when the call
 * starts: for each step g, (a) wait until the ranks that read from me at step g - 1 have posted base + 1 + g (they
 * are done reading, I may overwrite), (b) for each transfer into me, in schedule order, wait for its source to post
 * base + 1 + g and apply it, (c) post base + 2 + g; at the end wait for the last step's readers. What differs
 * between the engines (how a counter is waited for and posted, how a peer's units are reached, borrowed and
 * copied) is theirs, behind the functions of an st_pull. */
#ifndef ST_PULL_H
#define ST_PULL_H

#include <stdint.h>

#include "call.h"

typedef struct st_pull {
    st_call *m;
    uint32_t base;
    int tiny;  /* threads' tiny call: sources are not waited for (st_check_peers saw their lines), no reader is
                * waited for, only the last step posts */
    void *ctx; /* the engine's, handed to the functions below */
    /* Wait until rank `peer` posted base + 1 + g. */
    stitch_status_t (*wait)(void *ctx, int peer, uint32_t g);
    /* Apply transfer recvs[i] of my plan, whose source `src` has finished step g - 1 (or is me). */
    stitch_status_t (*apply)(void *ctx, int32_t i, int src, uint32_t g);
    /* Post v on my counter. */
    void (*post)(void *ctx, uint32_t v);
    /* Called before each step, or NULL. */
    void (*step_begin)(void *ctx, size_t k, int s, uint32_t g);
} st_pull;

/* Steps of the whole call: every segment's. */
static inline uint32_t st_pull_total(const st_call *m)
{
    return (uint32_t)(m->nseg * (size_t)m->nsteps);
}

/* Every step of every segment, from segment 0 (begun, base + 1 posted by the caller), then the last step's readers,
 * then st_call_finish. */
stitch_status_t st_pull_steps(const st_pull *p);

/* Moves n elements of rank `src`'s memory at `from` into dst (op: ST_X_COPY or a reduce with my input `in`). */
typedef stitch_status_t (*st_pull_move_fn)(void *ctx, int src, int op, char *dst, const char *in, const char *from,
                                           size_t n);

/* Apply transfer recvs[i] of my plan in the current segment: source unit j of the transfer, read at its source
 * through the st_where w (my own for a local transfer), goes into my destination unit j (`at`; the same units
 * without it), adjacent units read and written alike merged into one move. move NULL: st_call_move. input_only:
 * w holds only the source's input (threads' tiny call), and a unit that is not still fresh there is an error. */
stitch_status_t st_pull_xfer(st_call *m, int32_t i, const st_where *w, int input_only, st_pull_move_fn move,
                             void *ctx);

#endif
