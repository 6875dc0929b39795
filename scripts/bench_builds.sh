#!/usr/bin/env bash
# bench_builds.sh - large collectives of two or more stitch builds (before and after a change), side by side in one
# run, with Open MPI's MPI_Allreduce on the same transport for scale: stitch-perf under mpirun for every np, every
# collective and every build in turn, interleaved REPEAT times; each cell is the median time in us, and the last
# ratio is the first build's time over the second's (above 1: the second is faster). The bench's own algorithm
# choice is shown (the last build's). This VM's figures move by tens of percent from minute to minute: read the
# ratios of a row, over several rounds.
#
#   scripts/bench_builds.sh BEFORE_BUILD AFTER_BUILD [MORE_BUILDS...]
#   TRANSPORT=shm|tcp (default tcp; Open MPI then runs --mca btl tcp,self)  NPS="2 4"  COLLS="all_reduce all_gather"
#   MIN=1M MAX=64M REPEAT=5 ITERS=5 LABELS="before after"
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/bench_builds.sh BEFORE_BUILD AFTER_BUILD [MORE_BUILDS...]" >&2; exit 2; }
BUILDS=("$@")
read -r -a LABEL <<< "${LABELS:-before after $(seq -s ' ' 3 $#)}"
TRANSPORT=${TRANSPORT:-tcp}; NPS=${NPS:-2 4}; COLLS=${COLLS:-all_reduce all_gather}
MIN=${MIN:-1M}; MAX=${MAX:-64M}; REPEAT=${REPEAT:-5}; ITERS=${ITERS:-5}
command -v mpirun >/dev/null || { echo "skip: mpirun not found"; exit 0; }
for b in "${BUILDS[@]}"; do [ -x "$b/bin/stitch-perf" ] || { echo "no $b/bin/stitch-perf" >&2; exit 2; }; done
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
RUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
MPI_BTL=""; [ "$TRANSPORT" = tcp ] && MPI_BTL="--mca pml ob1 --mca btl tcp,self"
HAVE_MPI=0
if command -v mpicc >/dev/null && mpicc -O2 -o "$TMP/mpi_bench" tools/mpi_allreduce_bench.c 2>/dev/null; then HAVE_MPI=1; fi
bytes() { numfmt --from=iec "$1"; }
# one run's rows into $TMP/all as "np coll label bytes us algorithm"; a run that fails is said and left out
keep() { # LABEL NP COLL US_COLUMN HAS_ALGO(1: the last column names the algorithm) COMMAND...
    local label=$1 np=$2 coll=$3 us=$4 algo=$5
    shift 5
    if ! "$@" > "$TMP/out" 2> "$TMP/err" < /dev/null; then
        echo "# np $np $coll $label: the run failed (left out): $(tail -1 "$TMP/err")" >&2
        return 0
    fi
    grep -E '^ +[0-9]+ ' "$TMP/out" | awk -v np="$np" -v c="$coll" -v b="$label" -v u="$us" -v a="$algo" \
        '{print np, c, b, $1, $u, (a ? $NF : "-")}' >> "$TMP/all" || true
}
for r in $(seq "$REPEAT"); do
    for np in $NPS; do
        for c in $COLLS; do
            for i in "${!BUILDS[@]}"; do
                keep "${LABEL[$i]}" "$np" "$c" 6 1 $RUN -x STITCH_TRANSPORT="$TRANSPORT" -np "$np" \
                    "${BUILDS[$i]}/bin/stitch-perf" "$c" -b "$MIN" -e "$MAX" -f 4 -c 0 -w 2 -n "$ITERS" --place out
            done
            if [ "$c" = all_reduce ] && [ $HAVE_MPI = 1 ]; then
                keep OpenMPI "$np" all_reduce 2 0 $RUN $MPI_BTL -np "$np" "$TMP/mpi_bench" "$(bytes "$MIN")" \
                    "$(bytes "$MAX")" 4 2 "$ITERS"
            fi
        done
    done
done
python3 - "$TMP/all" "$TRANSPORT" "$REPEAT" "${LABEL[@]:0:${#BUILDS[@]}}" <<'PY'
import collections, statistics, sys
path, transport, repeat, labels = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
d, algo = collections.defaultdict(list), {}
for line in open(path):
    np_, coll, label, size, us, a = line.split()
    d[(int(np_), coll, int(size), label)].append(float(us))
    if label == labels[-1]:
        algo[(int(np_), coll, int(size))] = a
cols = ["OpenMPI"] + labels
print("# %s; time per call in us, median of %s interleaved rounds; %s/%s: the first build's time over the second's"
      % (transport, repeat, labels[0], labels[1]))
print("np coll        %10s " % "bytes" + " ".join("%10s" % c for c in cols) + " %12s  algorithm" % "ratio")
for key in sorted({k[:3] for k in d}):
    med = {c: statistics.median(d[key + (c,)]) if d.get(key + (c,)) else float("nan") for c in cols}
    print("%-2d %-11s %10d " % key + " ".join("%10.0f" % med[c] for c in cols) +
          " %12.2f  %s" % (med[labels[0]] / med[labels[1]], algo.get(key, "")))
PY
