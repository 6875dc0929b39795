/* main.c - examples/app: an application's own all_reduce algorithm (`star`, algos_extra.dsl) run by an installed
 * libstitch, next to the built-in ones.
 *
 * For p = 1, 2, 3, 5 and 8 ranks (threads of this process) it makes communicators that see the catalogue
 * app_algos (compiled from algos_extra.dsl at build time, declared in the generated app_algos.h), forces `star`
 * for all_reduce, sums int32 vectors whose exact result is known, and checks every element on every rank; then it
 * runs the built-in `ring` on the same communicators, to show both side by side. It also checks that the library
 * is the version of the header it was compiled against. Exit status 0 when everything is right, 1 otherwise.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stitch.h>

#include "app_algos.h"

#define COUNT 1001 /* not a multiple of any p */

typedef struct rank_job {
    stitch_comm_t *comm;
    const char *algo;
    int failures;
} rank_job;

static int32_t input(int rank, int i)
{
    return rank * 100000 + i;
}

/* One rank: all_reduce with `algo`, then compare with the sum computed here. */
static void *run_rank(void *arg)
{
    rank_job *job = arg;
    int r = stitch_comm_rank(job->comm), p = stitch_comm_size(job->comm);
    int32_t *send = malloc(COUNT * sizeof *send), *recv = malloc(COUNT * sizeof *recv);
    if (!send || !recv) {
        job->failures++;
        goto out;
    }
    for (int i = 0; i < COUNT; i++)
        send[i] = input(r, i);
    stitch_status_t st = stitch_comm_set_algorithm(job->comm, STITCH_ALL_REDUCE, job->algo);
    if (st == STITCH_OK)
        st = stitch_all_reduce(send, recv, COUNT, STITCH_INT32, STITCH_SUM, job->comm);
    if (st != STITCH_OK) {
        fprintf(stderr, "rank %d: all_reduce with %s: %s: %s\n", r, job->algo, stitch_strerror(st),
                stitch_comm_last_error(job->comm));
        job->failures++;
        goto out;
    }
    for (int i = 0; i < COUNT; i++) {
        int32_t want = 0;
        for (int q = 0; q < p; q++)
            want += input(q, i);
        if (recv[i] != want) {
            fprintf(stderr, "rank %d: %s: element %d is %d, expected %d\n", r, job->algo, i, (int)recv[i], (int)want);
            job->failures++;
            break;
        }
    }
out:
    free(send);
    free(recv);
    return NULL;
}

/* Every rank of comms runs all_reduce with `algo` on its own thread; the number of ranks that failed. */
static int run_all(stitch_comm_t **comms, int p, const char *algo)
{
    pthread_t threads[8];
    rank_job jobs[8];
    int failures = 0;
    for (int r = 0; r < p; r++) {
        jobs[r] = (rank_job){.comm = comms[r], .algo = algo};
        if (pthread_create(&threads[r], NULL, run_rank, &jobs[r]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    for (int r = 0; r < p; r++) {
        pthread_join(threads[r], NULL);
        failures += jobs[r].failures;
    }
    return failures;
}

int main(void)
{
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", STITCH_VERSION_MAJOR, STITCH_VERSION_MINOR, STITCH_VERSION_PATCH);
    printf("stitch %s (header %s)\n", stitch_version(), header);
    if (strcmp(header, stitch_version()) != 0) {
        fprintf(stderr, "libstitch is %s but stitch.h is %s\n", stitch_version(), header);
        return 1;
    }

    /* The application's catalogue, searched after the built-in one. */
    static const stitch_catalogue_t *const catalogues[] = {&app_algos};
    stitch_config_t config = STITCH_CONFIG_INIT;
    config.catalogues = catalogues;
    config.ncatalogues = 1;

    static const int sizes[] = {1, 2, 3, 5, 8};
    int failures = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int p = sizes[k];
        stitch_comm_t *comms[8];
        char err[512];
        stitch_status_t st = stitch_comm_init_threads(p, &config, comms, err, sizeof err);
        if (st != STITCH_OK) {
            fprintf(stderr, "init of %d ranks: %s: %s\n", p, stitch_strerror(st), err);
            return 1;
        }
        const char *algos[] = {"star", "ring"};
        for (int a = 0; a < 2; a++) {
            int bad = run_all(comms, p, algos[a]);
            printf("all_reduce %-4s p = %d: %s\n", algos[a], p, bad ? "FAILED" : "ok");
            failures += bad;
        }
        for (int r = 0; r < p; r++)
            stitch_comm_destroy(comms[r]);
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
