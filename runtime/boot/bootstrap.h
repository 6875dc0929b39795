/* bootstrap.h - how the ranks of a process-mode communicator find each other (bootstrap.c).
 *
 * Three phases, all over TCP and all bounded by a deadline: (1) every rank connects to the root (rank 0's
 * address, from the launcher's environment or a unique id) and sends its listen address and host identity;
 * the root answers everyone with the whole table (an allgather); (2) every pair of ranks connects directly:
 * a control channel always, and a data channel when the pair's data goes over tcp; (3) a barrier over the
 * control channels. Both ends of every connection prove they belong to the job with a keyed hash (SipHash-2-4)
 * over fresh challenges from each side; anything else is logged (rate-limited) and dropped, never trusted and
 * never waited on for long. bootstrap.c's opening comment says which secret each launcher mode uses and what it
 * guarantees.
 */
#ifndef ST_BOOTSTRAP_H
#define ST_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base.h"
#include "stitch.h"

/* Where a job's ranks come from. */
typedef struct st_boot_env {
    char launcher[32]; /* "openmpi", "mpich", "slurm", "torchrun", "stitch", "unique-id" */
    int rank, size, local_rank;
    char root_host[256];
    int root_port;
    char secret[160];  /* the unique id's random secret, or the launcher's job id (public: names the job) */
    int secret_kind;   /* ST_SECRET_RANDOM (unique id) or ST_SECRET_JOBID (launcher) */
} st_boot_env;
enum { ST_SECRET_JOBID = 0, ST_SECRET_RANDOM = 1 };

/* Fill `e` from the environment, launchers tried in a fixed order: Open MPI, MPICH Hydra, Slurm, torchrun,
 * stitch's own STITCH_RANK/STITCH_SIZE/STITCH_ROOT. STITCH_ROOT overrides the root a launcher gives (STITCH_SECRET,
 * a tunable, overrides the secret in st_proc_comm_new). Returns 1 when found, 0 when no launcher is present, -1
 * with a message when one is present but incomplete. */
int st_boot_detect(st_boot_env *e, char *err, size_t errlen);

/* getenv for the launchers' own variables (OMPI_*, PMI_*, SLURM_*, RANK..., STITCH_RANK/SIZE/ROOT): the one place
 * outside config.c that reads the environment (config.c's header says why). */
const char *st_launcher_env(const char *name);

/* What every rank tells the others. */
typedef struct st_peer_info {
    uint32_t ip;       /* network order */
    uint16_t port;     /* network order */
    uint8_t verbs;     /* st_boot_opts.verbs: the link layer of a usable RDMA device (tp_verbs.h), 0: none */
    uint8_t failed;    /* st_boot_opts.fail was set: the rank's report of why follows its entry */
    uint32_t pid;
    uint64_t host;     /* identity of the host (hostname, boot id, network namespace): equal means shm works */
    uint64_t tag;      /* the caller's st_boot_opts.tag, for checks of what every rank must agree on */
    char hostname[64];
    uint64_t cats;     /* st_boot_opts.cats: the hash of the rank's algorithm catalogues (registry.c) */
    char cats_text[64]; /* st_boot_opts.cats_text, cut short: their files, for the message when hashes differ */
} st_peer_info;

typedef struct st_boot {
    int rank, size;
    st_peer_info *peers; /* size entries */
    int *ctrl;           /* per rank: control socket, -1 for myself */
    int *data;           /* per rank: data socket, -1 when the pair does not use tcp for data */
    uint64_t key[2];     /* the job's connection key */
} st_boot;

/* What the caller decides for a bootstrap (from its st_settings). need_data(boot, peer, arg) says whether the pair
 * (me, peer) needs a data socket; it must give the same answer on both sides (it sees the whole table). */
typedef struct st_boot_opts {
    int timeout_ms;       /* the whole bootstrap; < 0: a day */
    const char *ifname;   /* STITCH_SOCKET_IFNAME; NULL: the interface routing toward the root */
    uint64_t tag;         /* published as my st_peer_info.tag (placement.c: how my groups are made) */
    int (*need_data)(const st_boot *, int, void *);
    void *arg;
    const char *secret;   /* STITCH_SECRET; NULL: the unique id's, a loopback job's local one, or the job id */
    uint64_t cats;        /* published as my st_peer_info.cats (registry.c checks that every rank agrees) */
    const char *cats_text; /* published as my st_peer_info.cats_text; NULL: "" */
    int verbs;            /* published as my st_peer_info.verbs (proc.c probes the device before the bootstrap) */
    const char *fail;     /* not NULL: this rank failed init (why); it joins phase 1 only to tell the job */
    stitch_status_t fail_status;
    int secret_empty;     /* STITCH_SECRET was set but empty: rank 0 warns */
} st_boot_opts;

/* Run the three phases. On failure nothing is left open. A rank that failed init before its bootstrap (o->fail)
 * still runs phase 1, so that the root learns why: the root then tells every rank, at once or as it arrives, and
 * every rank's st_boot_run returns the failed rank's status with "rank R (pid, host) failed init: why" in err, the
 * first failure reported. The failed rank's own call returns its o->fail_status. The report and the root's word
 * travel on authenticated links, with macs, like the table. */
stitch_status_t st_boot_run(const st_boot_env *e, const st_boot_opts *o, st_boot *out, char *err, size_t errlen);
void st_boot_close(st_boot *b); /* closes the sockets still owned (entries set to -1 are skipped) */

/* Barrier over the control sockets (blocking, bounded). */
stitch_status_t st_boot_barrier(st_boot *b, int timeout_ms, char *err, size_t errlen);

/* The connecting side of one handshake, as a rank dials the root (channel 0) or a peer (1 control, 2 data): on
 * `fd` (connected; -1: connect to host:port), prove `secret` to the acceptor and check its proof of being rank
 * `peer`. The fd, or -1 with why. For tests that play a rogue client; the bootstrap itself runs the same code. */
int st_boot_dial(int fd, const char *host, int port, const char *secret, int channel, int rank, int size, int peer,
                 int timeout_ms, char *err, size_t errlen);

/* A fresh root address for a unique id: this host's address (the interface of `ifname`, STITCH_SOCKET_IFNAME, or
 * the one routing to the default gateway, else loopback) and a free port. */
stitch_status_t st_boot_pick_root(const char *ifname, char *host, size_t hostlen, int *port, char *err,
                                  size_t errlen);

#endif
