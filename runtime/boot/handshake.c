/* handshake.c - the bootstrap's messages, their macs and the checks on what a peer sends (handshake.h). */
#include <stdio.h>
#include <string.h>

#include "handshake.h"

/* Both sides prove knowledge of the key over the two fresh nonces, each under its own derived key (a label per
 * direction and per frame), so nothing recorded from one connection is accepted on another and neither side's
 * proof can be reflected back as the other's. */
static void st_conn_key(const uint64_t key[2], char label, const st_link *l, uint64_t out[2])
{
    unsigned char buf[34];
    buf[0] = (unsigned char)label;
    memcpy(buf + 2, l->na, 16);
    memcpy(buf + 18, l->nc, 16);
    for (int i = 0; i < 2; i++) {
        buf[1] = (unsigned char)i;
        out[i] = st_siphash(key, buf, sizeof buf);
    }
}

uint64_t st_link_mac(const uint64_t key[2], char label, const st_link *l, const void *msg, size_t len)
{
    uint64_t k[2];
    st_conn_key(key, label, l, k);
    return st_siphash(k, msg, len);
}

uint64_t st_answer_mac(const uint64_t key[2], const st_link *l, const st_answer *a)
{
    unsigned char buf[32];
    memcpy(buf, a, 16);          /* magic, status, rank, pad */
    memcpy(buf + 16, &l->h, 16); /* the hello it answers: magic, channel, rank, size */
    return st_link_mac(key, 'A', l, buf, sizeof buf);
}

const char *st_reject_text(uint32_t status)
{
    switch (status) {
    case ST_REJ_SECRET: return "wrong job secret (its hello's mac does not verify)";
    case ST_REJ_FIT: return "its rank, size or channel does not fit this job";
    case ST_REJ_DUP: return "the acceptor already has that rank's connection";
    default: return "rejected";
    }
}

int st_hello_check(const uint64_t key[2], st_link *l, int size, char *why, size_t whylen)
{
    const st_hello *h = &l->h;
    memcpy(l->nc, h->nonce, sizeof l->nc);
    if (h->magic != ST_BOOT_MAGIC) {
        snprintf(why, whylen, "not a stitch hello");
        return -1;
    }
    if (h->mac != st_link_mac(key, 'C', l, h, 16)) {
        snprintf(why, whylen, "wrong job secret (bad mac)");
        return ST_REJ_SECRET;
    }
    if (h->size != size || h->rank < 0 || h->rank >= size || h->channel > ST_CH_DATA) {
        snprintf(why, whylen, "rank %d of %d (channel %u) does not fit this job of %d ranks", (int)h->rank,
                 (int)h->size, (unsigned)h->channel, size);
        return ST_REJ_FIT;
    }
    return 0;
}

int st_answer_check(const uint64_t key[2], const st_link *l, const st_answer *a, int peer, char *why, size_t whylen)
{
    if (a->magic == ST_BOOT_MAGIC && a->status != 0) {
        snprintf(why, whylen, "it rejected this rank's hello: %s%s", st_reject_text(a->status),
                 a->status == ST_REJ_SECRET ? "; every rank of a job needs the same STITCH_SECRET (or none)" : "");
        return -1;
    }
    if (a->magic != ST_BOOT_MAGIC || a->rank != peer || a->mac != st_answer_mac(key, l, a)) {
        snprintf(why, whylen, "it did not prove that it knows the job secret: not rank %d of this job (another job "
                 "on that port, or an impostor)", peer);
        return -1;
    }
    return 0;
}

int st_peers_check(const uint64_t key[2], const st_link *l, char label, st_peer_info *e, size_t n, uint64_t mac,
                   char *why, size_t whylen)
{
    if (mac != st_link_mac(key, label, l, e, sizeof *e * n)) {
        snprintf(why, whylen, label == 'T' ? "the peer table does not carry a valid mac"
                                           : "its entry does not carry a valid mac");
        return -1;
    }
    /* A rank that holds the key is still not trusted to terminate its strings (another build, a bug): every
     * reader prints them with %s. */
    for (size_t i = 0; i < n; i++) {
        e[i].hostname[sizeof e[i].hostname - 1] = '\0';
        e[i].cats_text[sizeof e[i].cats_text - 1] = '\0';
    }
    return 0;
}
