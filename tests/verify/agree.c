/* agree.c - the verifier and the runtime agree on what a schedule may do (issue 8, item 12).
 *
 *   verify_agree FILE.dsl P [runtime-refuses|runtime-accepts] [TEXT]
 *
 * Compiles FILE, and for every algorithm, every root 0..P-1 of a rooted collective (root 0 otherwise) and every
 * rank, asks the runtime whether it would run the rank's plan: st_exec_prepare_entry, the very function a
 * communicator calls when a schedule enters its cache. Then runs `stitchc verify` on the same catalogue for p = P
 * (st_verify). Fails unless: the runtime refuses some plan exactly when the verifier fails; the expectation (the
 * third argument) holds; and TEXT, when given, appears both in the runtime's refusal and in the verifier's
 * output. Exit 0 when all hold, 1 otherwise, with what differed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "diag.h"
#include "exec.h"
#include "frontend.h"
#include "st_sched.h"
#include "sema.h"
#include "verify.h"

/* The runtime's verdict on one instantiation: 0 every rank's plan is accepted, 1 some rank's is refused (the
 * first refusal in `why`), -1 the schedule cannot be built at all. */
static int runtime_verdict(const st_catalogue *cat, const st_algo *al, int p, int root, char *why, size_t len)
{
    st_inst in = {.p = p, .root = root};
    st_entry e;
    st_err err;
    memset(&e, 0, sizeof e);
    if (st_sched_build_ex(cat, al, &in, &e.sched, &err) != 0)
        return -1;
    int refused = 0;
    for (int rank = 0; rank < p && !refused; rank++) {
        if (st_plan_build(&e.sched, rank, &e.plan) != 0) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        refused = st_exec_prepare_entry(&e, rank, why, len) != STITCH_OK;
        free(e.fresh);
        free(e.src_fresh);
        free(e.src_fresh_at);
        free(e.peers);
        e.fresh = e.src_fresh = NULL, e.src_fresh_at = e.peers = NULL;
        st_plan_free(&e.plan);
    }
    st_sched_free(&e.sched);
    return refused;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s FILE.dsl P runtime-refuses|runtime-accepts [TEXT]\n", argv[0]);
        return 2;
    }
    const char *text = argc > 4 ? argv[4] : NULL;
    int p = atoi(argv[2]), want_refused = strcmp(argv[3], "runtime-refuses") == 0, bad = 0;
    st_diags d;
    st_diags_init(&d, argv[1], NULL, 0);
    st_file *f = st_parse_path(argv[1], &d);
    st_catalogue *cat = f && d.nerrors == 0 ? st_compile(f, &d) : NULL;
    if (!cat) {
        st_diags_print(&d, stderr);
        return 1;
    }
    char why[512] = "", first[512] = "";
    int refused = 0;
    for (int i = 0; i < cat->nalgos; i++)
        for (int root = 0; root < (st_coll_rooted(cat->algos[i].coll) ? p : 1); root++) {
            int v = runtime_verdict(cat, &cat->algos[i], p, root, why, sizeof why);
            if (v > 0 && !refused)
                snprintf(first, sizeof first, "%s", why);
            refused |= v > 0;
        }
    char *out = NULL;
    size_t outlen = 0;
    FILE *mem = open_memstream(&out, &outlen);
    st_verify_opts o = {.coll = -1, .pmin = p, .pmax = p};
    int failed = st_verify(cat, &o, mem);
    fclose(mem);
    printf("runtime: %s%s%s\nverify:\n%s", refused ? "refuses: " : "accepts every plan", first,
           refused ? "" : "", out);
    if (refused != want_refused)
        bad = printf("FAIL: the runtime %s, expected it to %s\n", refused ? "refuses" : "accepts", argv[3] + 8);
    if (refused != (failed != 0))
        bad = printf("FAIL: the runtime %s but verify %s\n", refused ? "refuses" : "accepts",
                     failed ? "fails" : "passes");
    if (text && (!strstr(first, text) || !strstr(out, text)))
        bad = printf("FAIL: '%s' is not in both the runtime's refusal and verify's output\n", text);
    free(out);
    st_catalogue_free(cat);
    st_file_free(f);
    st_diags_free(&d);
    return bad ? 1 : 0;
}
