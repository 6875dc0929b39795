/* verbs_logic.c - the verbs transport's pure decisions (tp_verbs.h): which device and port STITCH_IB_DEV allows,
 * which GID a RoCE port uses, and the credit accounting of a stream. No verbs call here, so tests run them on
 * recorded tables on any machine (tests/verbs/test_verbs_logic.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_verbs.h"

/* ---- STITCH_IB_DEV ------------------------------------------------------------------------------------------ */

int st_ib_dev_match(const char *spec, const char *dev, int port, char *why, size_t whylen)
{
    if (!spec || !*spec)
        return 1;
    int exclude = 0, exact = 0;
    if (*spec == '^')
        exclude = 1, spec++;
    if (*spec == '=')
        exact = 1, spec++;
    int hit = 0;
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[128];
        if (len == 0 || len >= sizeof item) {
            snprintf(why, whylen, "STITCH_IB_DEV='%s': expected names or name:port separated by commas", spec);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        int want_port = 0;
        char *colon = strchr(item, ':');
        if (colon) {
            char *e;
            long v = strtol(colon + 1, &e, 10);
            if (colon == item || *e || e == colon + 1 || v < 1 || v > 255) {
                snprintf(why, whylen, "STITCH_IB_DEV: '%s': expected name:port with a port from 1 to 255", item);
                return -1;
            }
            *colon = '\0', want_port = (int)v;
        }
        int name_ok = exact ? strcmp(item, dev) == 0 : strncmp(item, dev, strlen(item)) == 0;
        if (name_ok && (want_port == 0 || want_port == port))
            hit = 1;
        p += len + (end ? 1 : 0);
    }
    return exclude ? !hit : hit;
}

/* ---- GID choice --------------------------------------------------------------------------------------------- */

static int st_gid_zero(const uint8_t *g)
{
    for (int i = 0; i < 16; i++)
        if (g[i])
            return 0;
    return 1;
}

/* How routable an address is: 2 IPv4-mapped (::ffff:a.b.c.d), 1 global IPv6, 0 link-local (fe80::/10). */
static int st_gid_reach(const uint8_t *g)
{
    static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(g, v4, sizeof v4) == 0)
        return 2;
    return g[0] == 0xfe && (g[1] & 0xc0) == 0x80 ? 0 : 1;
}

int st_gid_pick(const st_gid_slot *slots, int n, int eth, int force, char *why, size_t whylen)
{
    if (force >= 0) {
        if (force < n && !st_gid_zero(slots[force].raw))
            return force;
        snprintf(why, whylen, "STITCH_IB_GID_INDEX=%d: %s", force,
                 force < n ? "that GID slot is empty" : "the port's GID table is shorter");
        return -1;
    }
    int best = -1, best_score = -1;
    for (int i = 0; i < n; i++) {
        if (st_gid_zero(slots[i].raw))
            continue; /* RXE and mlx5 answer an empty slot with success and a zero GID */
        if (!eth)
            return i;
        int score = (slots[i].type == 2 ? 8 : 0) + st_gid_reach(slots[i].raw);
        if (score > best_score)
            best = i, best_score = score;
    }
    if (best < 0)
        snprintf(why, whylen, "the port's GID table (%d slots) has no non-empty GID (no IP address on the RoCE "
                 "interface?)", n);
    return best;
}

/* ---- credits ------------------------------------------------------------------------------------------------ */

size_t st_vcredit_room(const st_vcredit *c, size_t len)
{
    if (c->uncovered >= ST_VCREDIT_WRITES)
        return 0;
    size_t room = c->cap - (size_t)(c->wpos - c->acked);
    size_t to_end = c->cap - (size_t)(c->wpos & (c->cap - 1));
    size_t n = len < room ? len : room;
    return n < to_end ? n : to_end;
}

void st_vcredit_wrote(st_vcredit *c, size_t n)
{
    c->wpos += n;
    c->uncovered++;
}

void st_vcredit_arrived(st_vcredit *c, size_t n)
{
    c->head += n;
    c->seen++;
}

uint32_t st_vcredit_consumed(st_vcredit *c, size_t n)
{
    c->tail += n;
    size_t freed = (size_t)(c->tail - c->reported);
    int empty = c->tail == c->head;
    if (freed == 0 || !(empty || (freed >= c->cap / 4 && c->seen > 0)))
        return 0;
    uint32_t imm = ST_VIMM_CREDIT | (c->seen << 24) | (uint32_t)freed;
    c->reported = c->tail, c->seen = 0;
    return imm;
}

void st_vcredit_returned(st_vcredit *c, uint32_t imm)
{
    c->acked += imm & 0xffffffu;
    c->uncovered -= (imm >> 24) & 0x7fu;
}
