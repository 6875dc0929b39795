#!/usr/bin/env bash
# bench_regmem.sh - processes on registered memory (stitch-perf --mem registered under mpirun: the pull engine)
# against processes on plain memory (the message engine over shm; and with STITCH_CMA=1, the pull engine reading
# them with process_vm_readv) and ranks as threads (stitch-perf -t NP), side by
# side in one run: all_reduce fp32 sum, out-of-place busbw in GB/s, 1, 4, 16 and 64 MB, np 2 and 4. The three runs
# are interleaved REPEAT times (default 3) and each cell is the median: this VM's figures move by tens of percent
# from minute to minute. mpirun runs unbound (--bind-to none), as the threads are.
#
#   scripts/bench_regmem.sh [BUILD_DIR]          REPEAT=5 ALGO=ring scripts/bench_regmem.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}; REPEAT=${REPEAT:-3}
command -v mpirun >/dev/null || { echo "skip: mpirun not found"; exit 0; }
PERF=$BUILD/bin/stitch-perf
ARGS="all_reduce -d fp32 -o sum -b 1M -e 64M -f 4 -c 1 -w 3 -n 10 --place out ${ALGO:+-a $ALGO}"
RUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
rows() { grep -E '^ +[0-9]+ ' | awk -v tag="$1" '{print tag, $1, $8}'; }
for r in $(seq "$REPEAT"); do
    for np in 2 4; do
        $RUN -np "$np" "$PERF" $ARGS --mem registered 2>/dev/null | rows "$np reg" >>"$TMP/all"
        $RUN -np "$np" "$PERF" $ARGS 2>/dev/null | rows "$np plain" >>"$TMP/all"
        $RUN -x STITCH_CMA=1 -np "$np" "$PERF" $ARGS 2>/dev/null | rows "$np cma" >>"$TMP/all"
        "$PERF" $ARGS -t "$np" 2>/dev/null | rows "$np threads" >>"$TMP/all"
    done
done
python3 - "$TMP/all" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    np_, kind, size, bw = line.split()
    d[(int(np_), kind, int(size))].append(float(bw))
print("np  bytes     registered  plain(shm)  plain+CMA  threads | reg/threads  reg/plain  cma/plain  (busbw GB/s, medians of %d)"
      % max(len(v) for v in d.values()))
for np_ in (2, 4):
    for size in sorted({k[2] for k in d if k[0] == np_}):
        m = {k: statistics.median(d[(np_, k, size)]) if d[(np_, k, size)] else float('nan')
             for k in ('reg', 'plain', 'cma', 'threads')}
        print("%-3d %-9s %10.2f  %10.2f  %9.2f  %7.2f | %11.2f  %9.2f  %9.2f" % (np_, "%dM" % (size >> 20), m['reg'],
              m['plain'], m['cma'], m['threads'], m['reg'] / m['threads'], m['reg'] / m['plain'], m['cma'] / m['plain']))
PY
