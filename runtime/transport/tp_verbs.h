/* tp_verbs.h - what of the verbs transport (tp_verbs.c) others see: the probe that fills st_peer_info.verbs,
 * and the pure decisions the transport makes (device choice, GID choice, credits), apart so tests can feed them
 * recorded tables without a device.
 */
#ifndef ST_TP_VERBS_H
#define ST_TP_VERBS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "mr_cache.h"

struct st_settings;

/* st_peer_info.verbs: what a rank can offer the verbs entry. Two ranks connect over verbs when both offer the
 * same link layer. */
enum { ST_VERBS_NONE = 0, ST_VERBS_IB = 1, ST_VERBS_ETH = 2 };

/* Whether this process has a usable device under the settings (STITCH_IB_DEV): ST_VERBS_IB or _ETH, or
 * ST_VERBS_NONE with why ("libibverbs.so.1: cannot open shared object file..."), which is also kept for
 * st_tp_verbs_why. Under STITCH_DEBUG the first NONE is said once per process. */
int st_tp_verbs_probe(const struct st_settings *s, char *why, size_t whylen);
/* This process's last probe's reason for NONE ("" when it found a device or never ran). */
const char *st_tp_verbs_why(void);

/* stitch-info: every device, port (state, link layer, MTU) and non-empty GID the table shows, or why none, and
 * why the transport would not use them under the settings. */
void st_tp_verbs_describe(FILE *f, const struct st_settings *s);

/* ---- pure logic ---------------------------------------------------------------------------------------- */

/* STITCH_IB_DEV, in the manner of NCCL_IB_HCA: a comma-separated list of "name" or "name:port"; names match as
 * prefixes, or exactly with a leading '='; a leading '^' excludes the listed ones instead. NULL or "" matches
 * every device and port. 1 when (dev, port) is allowed, 0 when not, -1 when the spec is malformed (why says). */
int st_ib_dev_match(const char *spec, const char *dev, int port, char *why, size_t whylen);

/* One GID slot as query_gid and sysfs show it: type 0 unknown, 1 RoCE v1 / IB, 2 RoCE v2. */
typedef struct st_gid_slot {
    uint8_t raw[16];
    int type;
} st_gid_slot;

/* The GID index to use among n slots: `force` (>= 0: STITCH_IB_GID_INDEX) when that slot is non-empty; else on
 * Ethernet (RoCE) the best non-empty slot: RoCE v2 before v1 or unknown, an IPv4-mapped address before a global
 * IPv6 one before a link-local one, the lowest index among equals; on InfiniBand the first non-empty slot.
 * -1 with why when there is none. */
int st_gid_pick(const st_gid_slot *slots, int n, int eth, int force, char *why, size_t whylen);

/* Credit accounting of one direction of a pair (tp_verbs.c's rules, which the test exercises without verbs).
 * The sender mirrors the receiver's ring: it may write while its bytes in flight (written, not yet returned by a
 * credit) fit the ring and its writes not yet covered by a credit stay under ST_VCREDIT_WRITES (the receiver
 * posts enough receives for that many data writes plus the credits it sends back). The receiver returns credit
 * when at least a quarter of the ring is freed and a new data write was seen since its last credit, or when it
 * has consumed everything that arrived; so it sends at most two credits per data write, and a sender waiting for
 * room always gets one once the receiver has used what it holds. */
enum { ST_VCREDIT_WRITES = 64 };
typedef struct st_vcredit {
    size_t cap;          /* the receiver's ring, a power of two <= 8 MiB (credits carry 24 bits of bytes) */
    uint64_t wpos;       /* sender: bytes written */
    uint64_t acked;      /* sender: bytes the receiver returned */
    uint32_t uncovered;  /* sender: data writes not yet covered by a credit */
    uint64_t head, tail; /* receiver: bytes arrived, consumed */
    uint64_t reported;   /* receiver: bytes consumed and returned */
    uint32_t seen;       /* receiver: data writes arrived since the last credit */
} st_vcredit;

/* Sender: bytes it may write now, as one write of at most `len` (cut at the ring's end); 0: wait for credit. */
size_t st_vcredit_room(const st_vcredit *c, size_t len);
/* Sender: a data write of n bytes was posted. */
void st_vcredit_wrote(st_vcredit *c, size_t n);
/* Receiver: a data write of n bytes arrived. */
void st_vcredit_arrived(st_vcredit *c, size_t n);
/* Receiver: n bytes consumed; returns the credit to send now as its immediate (0: none yet). */
uint32_t st_vcredit_consumed(st_vcredit *c, size_t n);
/* Sender: a credit's immediate arrived. */
void st_vcredit_returned(st_vcredit *c, uint32_t imm);

/* ---- the one-sided path's registration cache (mr_cache.h), over every communicator of the process -------- */

/* Counters of every verbs registration cache of this process, the live ones and those torn down (pinned: what the
 * live ones pin now): a test reads `regs` before and after a steady-state run. */
void st_tp_verbs_cache_stats(st_mrc_stats *out);
/* Messages of this process written one-sided (puts) and sent on the stream after an advert (cancels). */
void st_tp_verbs_rma_counts(uint64_t *puts, uint64_t *cancels);
/* stitch_mr_invalidate's work: drop every cached registration overlapping the range, in every communicator. */
void st_tp_verbs_invalidate(const void *p, size_t len);

#define ST_VIMM_CREDIT 0x80000000u /* immediate: a credit (writes << 24 | bytes), else a data write's length */

#endif
