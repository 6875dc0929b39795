/* split_proc.c - stitch_comm_split's two steps in process mode (split.h): the leader reserves a port for a new
 * bootstrap and draws a secret; the members run that bootstrap among themselves, as stitch_comm_init_rank would
 * with a unique id, and connect over the transports the parent's settings choose. The blob travels over the
 * parent's own channels (an all_gather), whose peers proved the parent's secret, so the new secret stays among
 * the job's ranks. STITCH_ROOT is not used here: it names the parent's root, which a child may not reuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bootstrap.h"
#include "proc.h"
#include "split.h"

/* The blob: "host port secret", text. */
stitch_status_t st_proc_split_offer(stitch_comm_t *parent, st_split *sp, char *blob, char *err, size_t errlen)
{
    char host[64], secret[33];
    unsigned char rnd[16];
    int port;
    (void)sp;
    stitch_status_t st = st_boot_pick_root(parent->settings.socket_ifname, host, sizeof host, &port, err, errlen);
    if (st != STITCH_OK)
        return st;
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) {
        snprintf(err, errlen, "getrandom failed drawing the new communicator's secret");
        return STITCH_ERR_SYSTEM;
    }
    for (int i = 0; i < 16; i++)
        snprintf(secret + 2 * i, 3, "%02x", rnd[i]);
    snprintf(blob, ST_SPLIT_BLOB, "%s %d %s", host, port, secret);
    return STITCH_OK;
}

stitch_status_t st_proc_split_join(stitch_comm_t *parent, st_split *sp, const char *blob, stitch_comm_t **out,
                                   char *err, size_t errlen)
{
    st_boot_env e;
    char text[ST_SPLIT_BLOB + 1];
    memset(&e, 0, sizeof e);
    memcpy(text, blob, ST_SPLIT_BLOB);
    text[ST_SPLIT_BLOB] = '\0';
    if (sscanf(text, "%255s %d %159s", e.root_host, &e.root_port, e.secret) != 3) {
        snprintf(err, errlen, "malformed address from the new rank 0 ('%s')", text);
        return STITCH_ERR_INTERNAL;
    }
    snprintf(e.launcher, sizeof e.launcher, "split");
    e.secret_kind = ST_SECRET_RANDOM;
    e.rank = sp->newrank, e.size = sp->n, e.local_rank = -1;
    return st_proc_comm_child(&e, &parent->settings, parent->algo, sp->reg, parent->topology, &sp->groups, out,
                              err, errlen);
}
