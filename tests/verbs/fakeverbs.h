/* fakeverbs.h - the strict test-only verbs emulator behind an st_verbs_api (runtime/verbs.h); test code only.
 *
 * What it models (research/rdma-testing.md section 5): devices fake0..fake<N-1> (STITCH_FAKE_DEVICES, default 2),
 * one RoCE port each (link layer Ethernet, active MTU 1024, GID 0 link-local, GID 1 empty, GID 2 ::ffff:10.d.n.n,
 * the rest empty), PDs, MRs with random distinct lkey/rkey, CQs rounded up to 2^k-1 with overrun detected, completion
 * channels whose fd is pollable (an epoll fd: a Unix datagram socket peers kick plus a timerfd for retransmission),
 * async events on ctx->async_fd, RC QPs with the kernel's state/mask table, WRITE / WRITE_WITH_IMM / SEND /
 * SEND_WITH_IMM / READ, RNR, retry, flush on error, SQ depth (the mlx5 model: a slot frees when a polled completion
 * covers it), EBUSY for objects destroyed with live children.
 *
 * Progress happens inside verbs calls (post_*, poll_cq, get_cq_event, ...) and, for QPs whose CQs have a completion
 * channel, in a waker thread when a peer delivers or a timer expires: a plain RDMA WRITE lands in the responder's
 * memory then, and the requester completes when the responder has processed it. A channel's fd is readable exactly
 * when a CQ event waits (poll() then a blocking get_cq_event never hangs). Packets that sit unread in a live peer's ring are never timed out (the peer's NIC
 * would have acknowledged them); dropped packets, a dead peer, a peer QP not in RTR/RTS and a wrong PSN or GID are.
 *
 * As on hardware, packets sent to a QP not yet in RTR are lost: connect both sides before posting, or the sender
 * ends in RETRY_EXC_ERR after (retry_cnt + 1) scaled timeouts. Posted receive buffers are poisoned (0xfb) until
 * their completion; the source of a send is read when each packet is cut, so changing it before the completion
 * shows at the peer. Error completions carry garbage outside wr_id, status, qp_num and vendor_err.
 *
 * Fabric: all fake devices of a test share one fabric (QP registry, one inbound packet ring per QP). Threads of one
 * process share an anonymous one by default; processes share /dev/shm/stitch-fake-<id>, made by
 * st_fake_fabric_create in the launcher and found through STITCH_FAKE_FABRIC=<id>. Each process validates inbound
 * packets against its own MR table and writes only its own memory.
 *
 * Faults: STITCH_FAKE_FAULTS or st_fake_faults, "kind[:key=value,...];..." with kinds
 *   drop      outgoing request packets are lost (every=K, pct=P, else all after `after`) -> retransmits / RETRY_EXC
 *   rkey      the rkey of a WRITE/READ is corrupted -> REM_ACCESS_ERR
 *   qperr     the QP goes to ERR at a post_send (IBV_EVENT_QP_FATAL, WR_FLUSH_ERR for everything outstanding)
 *   portdown  the port goes down at a post_send: PORT_ERR event, query_port DOWN, packets both ways lost; ms=T back up
 *   deadpeer  at a post_send this process vanishes from the fabric (its QPs unreachable) -> peers get RETRY_EXC
 *   rnr       an inbound IMM/SEND is answered by `count` RNR NAKs even when a receive is posted
 * and keys node=N (only the process with fabric node index N), qp=N (only this process's N-th QP, from 0),
 * after=K (skip the first K matching events), count=C (fire C times; 0 = no limit), every=K, pct=P, seed=S, ms=T.
 * Deterministic given the seed; every firing is counted (st_fake_fired).
 */
#ifndef ST_FAKEVERBS_H
#define ST_FAKEVERBS_H

#include <stddef.h>
#include <stdint.h>

#include "verbs.h"

/* The emulator's table ("fake"). */
const st_verbs_api *st_fake_api(void);

/* Make a fabric for processes: writes its id into id (at least 32 bytes) and attaches this process to it; the
 * launcher then exports STITCH_FAKE_FABRIC=<id> to its children (forked children inherit it as well). Returns 0,
 * or -1 with errno. The segment is unlinked by st_fake_fabric_destroy (or the last st_fake_reset). */
int st_fake_fabric_create(char *id, size_t idlen);
void st_fake_fabric_destroy(const char *id);

/* Replace the fault list of this process (NULL or "" clears it). -1 with a message naming the bad item. */
int st_fake_faults(const char *spec, char *err, size_t errlen);

/* How many times faults of `kind` fired: in the whole fabric when it is shared by processes, else in this process. */
long st_fake_fired(const char *kind);

typedef struct st_fake_live {
    int contexts, pds, mrs, cqs, qps, channels;
    long cq_overruns; /* CQ overruns seen (each also raised IBV_EVENT_CQ_ERR) */
} st_fake_live;

/* Live objects in this process (all zero after a clean teardown). */
void st_fake_counts(st_fake_live *out);

/* Tunables for tests (also from the environment): the retry / RNR timers are the IB formulas divided by
 * STITCH_FAKE_TIME_DIV (default 16, so timeout=14 is 4.2 ms). */
void st_fake_set_time_div(unsigned div);

/* For the slot-claim race test: create_qp calls `hook` (in the creating process) after it has claimed its fabric
 * slot and before it fills the slot in (NULL: none); st_fake_qpn_visible says whether a peer looking up `qpn`
 * finds a slot holding it, as the engine's lookup does. */
void st_fake_set_claim_hook(void (*hook)(void));
int st_fake_qpn_visible(uint32_t qpn);

#endif
