/* siphash.c - SipHash-2-4: the bootstrap's authentication and the hashes of tables and catalogues compared
 * across ranks. */
#include <string.h>

#include "base.h"

#define ST_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define ST_SIPROUND(v0, v1, v2, v3)                                                                            \
    do {                                                                                                     \
        v0 += v1; v1 = ST_ROTL(v1, 13); v1 ^= v0; v0 = ST_ROTL(v0, 32);                                      \
        v2 += v3; v3 = ST_ROTL(v3, 16); v3 ^= v2;                                                            \
        v0 += v3; v3 = ST_ROTL(v3, 21); v3 ^= v0;                                                            \
        v2 += v1; v1 = ST_ROTL(v1, 17); v1 ^= v2; v2 = ST_ROTL(v2, 32);                                      \
    } while (0)

uint64_t st_siphash(const uint64_t key[2], const void *msg, size_t len)
{
    const unsigned char *m = msg;
    uint64_t v0 = 0x736f6d6570736575ULL ^ key[0], v1 = 0x646f72616e646f6dULL ^ key[1];
    uint64_t v2 = 0x6c7967656e657261ULL ^ key[0], v3 = 0x7465646279746573ULL ^ key[1];
    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t w;
        memcpy(&w, m + i, 8);
        v3 ^= w;
        ST_SIPROUND(v0, v1, v2, v3);
        ST_SIPROUND(v0, v1, v2, v3);
        v0 ^= w;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < (len & 7); i++)
        b |= (uint64_t)m[full + i] << (8 * i);
    v3 ^= b;
    ST_SIPROUND(v0, v1, v2, v3);
    ST_SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        ST_SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
