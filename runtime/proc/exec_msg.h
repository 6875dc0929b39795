/* exec_msg.h - the executor of process-mode communicators (exec_msg.c), over the transports of transport.h. */
#ifndef ST_EXEC_MSG_H
#define ST_EXEC_MSG_H

#include "call.h"
#include "comm.h"
#include <stdint.h>

/* The processes backend's run (proc.c): one call; its arguments are checked and the communicator is not aborted
 * (api.c). */
stitch_status_t st_exec_msg(stitch_comm_t *comm, const st_args *a);
/* The same for a call already opened (st_call_open, with something to do): the pull engine's fallback
 * (exec_pull.c), which opens the call to learn where its buffers are before it knows which engine runs it. */
stitch_status_t st_exec_msg_call(stitch_comm_t *comm, const st_call *m);

/* Every message starts with this header (exec_msg.c says what it carries); the pull engine's hello too, so that a
 * rank that looks at the head of a stream (st_check_waiting) recognises a later call's message, whichever engine
 * sent it. */
#define ST_MSG_MAGIC 0x53544d31u /* "STM1" */
#define ST_P2P_MSG_MAGIC 0x53545031u /* p2p_msg.c's point-to-point messages, "STP1" */
#define ST_MSG_COMPACT 0x53544d32u /* a compact message (exec_msg.c), shorter than a header, "STM2" */
typedef struct st_msg_hdr {
    uint32_t magic;
    int32_t src;
    uint64_t seq;
    uint64_t count;
    int32_t coll, dtype, op, root, algo;
    uint32_t g;
    uint64_t bytes; /* payload, before padding */
    char pad[8];
} st_msg_hdr;
_Static_assert(sizeof(st_msg_hdr) == 64, "message headers are 64 bytes: no transport splits one (transport.h)");

/* The n bytes at p begin a compact message (exec_msg.c: a message of a few bytes over shm, shorter than a header):
 * 1 and *h the full header it stands for (from `src`, payload bytes 0), so that a rank that finds one at the head
 * of a stream checks its fingerprint as a header's; 0 when they do not. */
int st_msg_compact_header(const void *p, size_t n, int src, st_msg_hdr *h);

/* A header found where a collective's message from `src` is due, in call number `seq` of collective `coll` on rank
 * `me`: STITCH_OK when it is a collective's message from src (its fingerprint still to check), else the status
 * and the sentence naming it in why: a point-to-point message (STITCH_ERR_MISMATCH), or not a message of ours
 * (STITCH_ERR_INTERNAL). For both engines' checks (exec_pull.c's hello too). */
stitch_status_t st_msg_foreign(const st_msg_hdr *h, int src, int me, uint64_t seq, stitch_coll_t coll, char *why,
                               size_t whylen);

/* Counters for the tests: compact messages this process sent and received whole (checked, applied). */
extern unsigned long long st_msg_compact_sent, st_msg_compact_recv;
/* Test hook: nonzero sends every message with a full header, as before compact messages (every rank alike). */
extern int st_msg_compact_off;
/* Counter for the tests: tiny calls this process replayed (exec_msg.c, replay.c); replay.h's st_replay_off turns
 * replaying off. */
extern unsigned long long st_msg_replays;
/* Of those, the calls that ran to their end on the fast path (st_mfast, no waiting); test hook: nonzero sends every
 * replayed call to the full replay at its first message received. */
extern unsigned long long st_msg_replays_fast;
extern int st_msg_fast_off;
/* Replayed messages that went or came in pieces (a ring's wrap cuts a small one): sent in part by the fast path,
 * gathered by the full replay. */
extern unsigned long long st_msg_replay_pieces;
/* Payload bytes this process read straight into place (exec_msg.c, "Straight in"); test hook: nonzero stages every
 * byte in the transport's buffer as before (a rank's own choice: the bytes on the wire are the same). */
extern unsigned long long st_msg_straight_bytes;
extern int st_straight_off;

#endif
