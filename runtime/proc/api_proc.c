/* api_proc.c - the public entry points of process mode: unique ids, init by rank, init from a launcher.
 *
 * A unique id (as NCCL's) is 128 bytes: "stitch1 host:port secret" in text, the secret 128 random bits in hex.
 * One process calls stitch_get_unique_id on the host where rank 0 will run and passes the id to every rank
 * (over MPI, a file, a command line); rank 0 then listens on host:port and both ends of every connection prove
 * knowledge of the secret to each other. stitch_comm_init_env does the same from a launcher's environment, with
 * the secrets bootstrap.c describes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bootstrap.h"
#include "comm.h"
#include "config.h"
#include "proc.h"

static void st_put_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

stitch_status_t stitch_get_unique_id(stitch_unique_id_t *id)
{
    char host[64], why[256];
    int port;
    unsigned char rnd[16];
    if (!id)
        return STITCH_ERR_INVALID_ARGUMENT;
    const char *root = st_launcher_env("STITCH_ROOT");
    st_settings s;
    if (st_settings_load(NULL, &s, why, sizeof why) != STITCH_OK)
        return STITCH_ERR_CONFIG; /* stitch_comm_init_rank would fail with the same setting, and say why */
    if (st_boot_pick_root(s.socket_ifname, host, sizeof host, &port, why, sizeof why) != STITCH_OK)
        return STITCH_ERR_SYSTEM;
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        return STITCH_ERR_SYSTEM;
    memset(id, 0, sizeof *id);
    int n = root ? snprintf(id->internal, sizeof id->internal, "stitch1 %s ", root)
                 : snprintf(id->internal, sizeof id->internal, "stitch1 %s:%d ", host, port);
    for (int i = 0; i < 16 && n + 2 < (int)sizeof id->internal; i++, n += 2)
        snprintf(id->internal + n, sizeof id->internal - (size_t)n, "%02x", rnd[i]);
    return STITCH_OK;
}

static int st_parse_id(const stitch_unique_id_t *id, st_boot_env *e)
{
    char text[sizeof id->internal + 1], *hp, *secret, *save = NULL;
    memcpy(text, id->internal, sizeof id->internal);
    text[sizeof id->internal] = '\0';
    if (strncmp(text, "stitch1 ", 8) != 0 || !(hp = strtok_r(text + 8, " ", &save)) ||
        !(secret = strtok_r(NULL, " ", &save)))
        return -1;
    char *colon = strrchr(hp, ':');
    if (!colon || atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
        return -1;
    *colon = '\0';
    snprintf(e->root_host, sizeof e->root_host, "%s", hp);
    e->root_port = atoi(colon + 1);
    snprintf(e->secret, sizeof e->secret, "%s", secret); /* STITCH_SECRET, if set, replaces it (bootstrap.c) */
    e->secret_kind = ST_SECRET_RANDOM;
    return 0;
}

stitch_status_t stitch_comm_init_rank(stitch_comm_t **comm, int nranks, stitch_unique_id_t id, int rank,
                                      const stitch_config_t *config, char *err, size_t errlen)
{
    st_boot_env e;
    memset(&e, 0, sizeof e);
    if (!comm || nranks < 1 || nranks > 65536 || rank < 0 || rank >= nranks) {
        st_put_err(err, errlen, "stitch_comm_init_rank: need comm != NULL and 0 <= rank < nranks <= 65536");
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    if (st_parse_id(&id, &e) != 0) {
        st_put_err(err, errlen, "stitch_comm_init_rank: malformed unique id (not from stitch_get_unique_id)");
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    snprintf(e.launcher, sizeof e.launcher, "unique-id");
    e.rank = rank, e.size = nranks, e.local_rank = -1;
    return st_proc_comm_new(&e, config, comm, err, errlen);
}

stitch_status_t stitch_comm_init_env(stitch_comm_t **comm, const stitch_config_t *config, char *err, size_t errlen)
{
    st_boot_env e;
    char why[400];
    if (!comm) {
        st_put_err(err, errlen, "stitch_comm_init_env: comm is NULL");
        return STITCH_ERR_INVALID_ARGUMENT;
    }
    int found = st_boot_detect(&e, why, sizeof why);
    if (found <= 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "stitch_comm_init_env: %s", found < 0 ? why
                 : "no launcher environment found (Open MPI, MPICH, Slurm, torchrun or STITCH_RANK/SIZE/ROOT)");
        st_put_err(err, errlen, msg);
        return STITCH_ERR_CONFIG;
    }
    if (st_debug()) /* here, once per communicator: stitch_launcher detects too, as often as it is asked */
        fprintf(stderr, "stitch: rank %d of %d: bootstrap from %s (tried openmpi, mpich, slurm, torchrun, stitch), "
                "root %s:%d\n", e.rank, e.size, e.launcher, e.root_host, e.root_port);
    return st_proc_comm_new(&e, config, comm, err, errlen);
}

const char *stitch_launcher(void)
{
    static __thread st_boot_env e;
    char why[256];
    return st_boot_detect(&e, why, sizeof why) != 0 ? e.launcher : NULL;
}
