/* test_p2p_exit.c - a thread's group record is freed when the thread exits (p2p.c keeps it from group to group).
 * Four threads in turn each run a group on one communicator (a send to itself and its receive, rank 0 of 1), check
 * the data and exit; the process then exits normally, not through the test runner's _exit, so that under
 * AddressSanitizer (make sanitize) LeakSanitizer checks it: before the fix each thread left its record behind
 * ("Direct leak of 10240 byte(s) in 4 object(s) ... st_record"). Without a sanitizer it checks the groups only.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "stitch.h"

static void *one_thread(void *arg)
{
    stitch_comm_t *comm = arg;
    int32_t a[40], b[40] = {0};
    for (int i = 0; i < 40; i++)
        a[i] = 3 * i + 1;
    stitch_group_start();
    for (int i = 0; i < 20; i++) /* 40 operations: the record grows past its first 16 */
        stitch_send(&a[2 * i], 2, STITCH_INT32, 0, comm);
    for (int i = 0; i < 20; i++)
        stitch_recv(&b[2 * i], 2, STITCH_INT32, 0, comm);
    stitch_status_t st = stitch_group_end();
    for (int i = 0; st == STITCH_OK && i < 40; i++)
        if (b[i] != a[i]) {
            fprintf(stderr, "element %d is %d, want %d\n", i, b[i], a[i]);
            return (void *)1;
        }
    if (st != STITCH_OK)
        fprintf(stderr, "group: %s: %s\n", stitch_strerror(st), stitch_comm_last_error(comm));
    return st == STITCH_OK ? NULL : (void *)1;
}

int main(void)
{
    stitch_comm_t *comm;
    char err[256] = "";
    if (stitch_comm_init_threads(1, NULL, &comm, err, sizeof err) != STITCH_OK) {
        fprintf(stderr, "init: %s\n", err);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        void *rc = NULL;
        if (pthread_create(&t, NULL, one_thread, comm) != 0)
            return fprintf(stderr, "pthread_create\n"), 1;
        pthread_join(t, &rc);
        bad |= rc != NULL;
    }
    stitch_comm_destroy(comm);
    printf("%s: 4 threads each ran a group of 40 operations and exited\n", bad ? "FAIL" : "ok");
    return bad;
}
