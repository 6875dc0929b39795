/* pieces_check.c - which phases promise keyed unit pieces (ST_OP_SUB_PIECES with constants) against the
 * `# promise:` line written above each algorithm of pieces.dsl: one + (promised) or - (built by every rank) per
 * phase on a sub-communicator, in the order of the code; and likewise its MEMO regions against a `# memo:` line. `stitchc verify pieces.dsl` is the other half: a wrong
 * promise shares a rank's pieces with ranks whose pieces differ, and the schedule comes out wrong. */
#include <stdio.h>
#include <string.h>

#include "dsl_file.h"
#include "frontend.h"
#include "sema.h"

/* The promises of algorithm ai's body's instructions `op`, as + and -, into buf. */
static void promises(const st_catalogue *c, int ai, int op, char *buf, size_t len)
{
    size_t n = 0;
    for (int pc = c->algos[ai].entry; pc >= 0 && pc < c->ncode && n + 1 < len; pc++) {
        const st_insn *in = &c->code[pc];
        if (in->op == ST_OP_RET && in->a == 0)
            break;
        if (in->op == op)
            buf[n++] = in->a >= 0 ? '+' : '-';
    }
    buf[n] = 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pieces_check PIECES.dsl\n");
        return 2;
    }
    st_diags d;
    st_file *f;
    st_catalogue *c = st_test_compile(argv[1], &d, &f);
    FILE *in = fopen(argv[1], "r");
    if (!c || !in) {
        fprintf(stderr, "pieces_check: cannot compile or read %s\n", argv[1]);
        return 1;
    }
    char line[512], want[64] = "", wmemo[64] = "", name[64], got[64];
    int bad = 0, checked = 0;
    while (fgets(line, sizeof line, in)) {
        if (sscanf(line, "# promise: %63s", want) == 1 || sscanf(line, "# memo: %63s", wmemo) == 1)
            continue;
        if (!want[0] || sscanf(line, "algorithm %63s implements", name) != 1)
            continue;
        const st_algo *a = st_catalogue_find(c, name, ST_COLL_REDUCE_SCATTER);
        if (!a) {
            fprintf(stderr, "pieces_check: %s reduce_scatter not in the catalogue\n", name);
            bad++;
        } else {
            promises(c, (int)(a - c->algos), ST_OP_SUB_PIECES, got, sizeof got);
            if (strcmp(got, want)) {
                fprintf(stderr, "pieces_check: %s promises %s, want %s\n", name, got[0] ? got : "nothing", want);
                bad++;
            }
            promises(c, (int)(a - c->algos), ST_OP_MEMO, got, sizeof got);
            if (wmemo[0] && strcmp(got, wmemo)) {
                fprintf(stderr, "pieces_check: %s memos %s, want %s\n", name, got[0] ? got : "nothing", wmemo);
                bad++;
            }
            checked++;
        }
        want[0] = wmemo[0] = 0;
    }
    fclose(in);
    if (checked == 0) {
        fprintf(stderr, "pieces_check: no `# promise:` line in %s\n", argv[1]);
        bad++;
    }
    if (!bad)
        printf("pieces_check: %d algorithms promise as written\n", checked);
    st_catalogue_free(c);
    st_diags_free(&d);
    st_file_free(f);
    return bad != 0;
}
