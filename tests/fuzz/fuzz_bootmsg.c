/* fuzz_bootmsg.c - libFuzzer entry point for the bootstrap's handshake: every check a rank applies to bytes a peer
 * sends (runtime/handshake.h), as bootstrap.c applies them, and then what the bootstrap's readers do with an
 * accepted table (print its strings).
 *
 * The input is what a rogue client or a rogue acceptor sends:
 *   byte 0      flags: 1 sign the hello, 2 sign the entry, 4 sign the answer, 8 sign the table (with the job's key,
 *               as a process that holds the secret would: otherwise the fuzzer would never get past the macs)
 *   byte 1      the job's size, 1 + byte % 16
 *   then        a hello (partial when the input ends: never judged, as the acceptor waits for the rest), an
 *               entry with its mac, an answer, and the table with its mac; what the input lacks is zero.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handshake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct st_reader {
    const uint8_t *p;
    size_t left;
} st_reader;

/* The next len bytes of the input into out, zeros past its end; how many were there. */
static size_t take(st_reader *r, void *out, size_t len)
{
    size_t n = len < r->left ? len : r->left;
    memcpy(out, r->p, n);
    memset((char *)out + n, 0, len - n);
    r->p += n, r->left -= n;
    return n;
}

/* What the readers of the table do with it (transport.c, placement.c, registry.c): print it, its strings with %s,
 * which an accepted entry must allow whatever its sender wrote. */
static size_t print_peers(const st_peer_info *e, size_t n)
{
    char line[512];
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (strnlen(e[i].hostname, sizeof e[i].hostname) == sizeof e[i].hostname ||
            strnlen(e[i].cats_text, sizeof e[i].cats_text) == sizeof e[i].cats_text)
            abort(); /* accepted with a string that does not end within its field */
        total += (size_t)snprintf(line, sizeof line, "rank %zu (pid %u on %s): catalogues %016llx (%.*s)", i,
                                  e[i].pid, e[i].hostname, (unsigned long long)e[i].cats,
                                  (int)sizeof e[i].cats_text, e[i].cats_text);
    }
    return total;
}

/* The acceptor (the root, rank 0): judge the hello, then the entry of a rank that proved itself. */
static void acceptor(const uint64_t key[2], st_reader *r, int flags, int size, st_link *l)
{
    char why[256];
    if (take(r, &l->h, sizeof l->h) < sizeof l->h)
        return;
    if (flags & 1) {
        memcpy(l->nc, l->h.nonce, sizeof l->nc);
        l->h.mac = st_link_mac(key, 'C', l, &l->h, 16);
    }
    int status = st_hello_check(key, l, size, why, sizeof why);
    if (status < 0 ? strcmp(why, "not a stitch hello") != 0 : status != 0 && status != ST_REJ_SECRET &&
        status != ST_REJ_FIT)
        abort(); /* a verdict the acceptor would not know how to answer */
    if (status != 0 || l->h.channel != ST_CH_BOOT)
        return;
    st_peer_info entry;
    uint64_t mac;
    take(r, &entry, sizeof entry);
    take(r, &mac, sizeof mac);
    if (flags & 2)
        mac = st_link_mac(key, 'I', l, &entry, sizeof entry);
    if (st_peers_check(key, l, 'I', &entry, 1, mac, why, sizeof why) == 0)
        print_peers(&entry, 1);
}

/* The connector (rank 1 dialling the root): judge the answer, then the table. */
static void connector(const uint64_t key[2], st_reader *r, int flags, int size, st_link *l)
{
    char why[256];
    st_answer a;
    l->h = (st_hello){ST_BOOT_MAGIC, ST_CH_BOOT, 1, size, {0}, 0};
    memcpy(l->h.nonce, l->nc, sizeof l->nc);
    take(r, &a, sizeof a);
    if (flags & 4)
        a.mac = st_answer_mac(key, l, &a);
    if (st_answer_check(key, l, &a, 0, why, sizeof why) != 0)
        return;
    st_peer_info *table = malloc(sizeof *table * (size_t)size);
    uint64_t mac;
    if (!table)
        return;
    take(r, table, sizeof *table * (size_t)size);
    take(r, &mac, sizeof mac);
    if (flags & 8)
        mac = st_link_mac(key, 'T', l, table, sizeof *table * (size_t)size);
    if (st_peers_check(key, l, 'T', table, (size_t)size, mac, why, sizeof why) == 0)
        print_peers(table, (size_t)size);
    free(table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t key[2] = {0x66757a7a2d6b6579ULL, 0x626f6f746d736721ULL};
    st_reader r = {data, size};
    uint8_t head[2];
    take(&r, head, sizeof head);
    int flags = head[0], n = 1 + head[1] % 16;
    st_link l;
    memset(&l, 0, sizeof l);
    l.fd = -1;
    memset(l.na, 0xa5, sizeof l.na);
    acceptor(key, &r, flags, n, &l);
    memset(l.nc, 0x5a, sizeof l.nc);
    connector(key, &r, flags, n, &l);
    return 0;
}
