/* handshake.h - the bootstrap's messages (hello, answer, a rank's entry, the table), their macs, and the checks a
 * rank applies to what a peer sends (handshake.c).
 *
 * No I/O here: bootstrap.c moves the bytes and decides what to do with a verdict; these functions only judge
 * bytes, so every check a rogue client can reach runs in the fuzz target tests/fuzz/fuzz_bootmsg.c exactly as in a
 * job. bootstrap.c's opening comment describes the protocol and what each mode of secret guarantees.
 */
#ifndef ST_HANDSHAKE_H
#define ST_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

#define ST_BOOT_MAGIC 0x53544231u /* "STB1" */

enum { ST_CH_BOOT, ST_CH_CTRL, ST_CH_DATA };

/* Connector -> acceptor, after the acceptor's 16-byte nonce: who I am, my nonce, my proof. */
typedef struct st_hello {
    uint32_t magic, channel;
    int32_t rank, size;
    unsigned char nonce[16];
    uint64_t mac; /* SipHash of the first 16 bytes under the link's 'C' key */
} st_hello;

/* Acceptor -> connector: accepted (status 0, with the acceptor's proof) or why not (no proof: nothing to prove). */
typedef struct st_answer {
    uint32_t magic, status;
    int32_t rank, pad; /* the acceptor's rank */
    uint64_t mac;      /* SipHash of these 16 bytes and the hello's first 16 under the link's 'A' key */
} st_answer;
enum { ST_REJ_SECRET = 1, ST_REJ_FIT = 2, ST_REJ_DUP = 3 };

/* One authenticated (or authenticating) connection: its hello and both nonces, from which its keys derive. */
typedef struct st_link {
    int fd, refused;              /* refused: the connector's handshake failed on the secret (either side's) */
    st_hello h;
    unsigned char na[16], nc[16]; /* the acceptor's and the connector's nonce */
} st_link;

/* The mac of msg under the link's key for `label` ('C' hello, 'A' answer, 'I' a rank's entry, 'T' the table). */
uint64_t st_link_mac(const uint64_t key[2], char label, const st_link *l, const void *msg, size_t len);
/* The acceptor's proof in answer `a` to the hello of l. */
uint64_t st_answer_mac(const uint64_t key[2], const st_link *l, const st_answer *a);
/* What a rejection's status means, for the rejected rank's message. */
const char *st_reject_text(uint32_t status);

/* Acceptor: the complete hello in l->h (l->na is mine; l->nc is taken from the hello). 0 when it proves a rank of
 * this job of `size` ranks on a known channel; otherwise the status to answer with (ST_REJ_SECRET, ST_REJ_FIT), or
 * -1 for bytes that are no stitch hello at all (not answered), with why. */
int st_hello_check(const uint64_t key[2], st_link *l, int size, char *why, size_t whylen);

/* Connector: the acceptor's answer `a` to my hello on l, where I dialled rank `peer`. 0 when it proves that rank
 * of this job; -1 with why otherwise (it refused my hello, and its status says why, or it proved nothing). */
int st_answer_check(const uint64_t key[2], const st_link *l, const st_answer *a, int peer, char *why, size_t whylen);

/* n entries of the table as they arrived on l (a rank's own entry at the root: label 'I', n = 1; the whole table
 * at a rank: 'T', n = size) with their mac. 0 when the mac verifies, the entries then made safe to use (each
 * string ends within its field: they are printed with %s); -1 with why. */
int st_peers_check(const uint64_t key[2], const st_link *l, char label, st_peer_info *e, size_t n, uint64_t mac,
                   char *why, size_t whylen);

#endif
