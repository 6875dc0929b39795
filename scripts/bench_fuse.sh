#!/usr/bin/env bash
# bench_fuse.sh - fused receive-reduce-send (runtime/proc/exec_msg.c) against STITCH_FUSE=0, side by side in one
# run: stitch-perf all_reduce (fp32 sum, out of place) under mpirun over shm at np 2 and 4, 4, 16 and 64 MB, the
# two settings interleaved REPEAT times; each column is the median busbw (GB/s) with its range.
#
#   scripts/bench_fuse.sh [BUILD_DIR]            REPEAT=3 ALGO=ring scripts/bench_fuse.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}; REPEAT=${REPEAT:-3}
command -v mpirun >/dev/null || { echo "skip: mpirun not found"; exit 0; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
RUN="mpirun --allow-run-as-root --oversubscribe"
stats() { sort -g "$1" | awk '{v[NR] = $1} END {printf "%6.2f [%.2f-%.2f]", v[int((NR + 1) / 2)], v[1], v[NR]}'; }
echo "# all_reduce fp32 busbw GB/s over shm: median [min-max] of $REPEAT interleaved runs (-w 3 -n 20)"
printf '%3s %10s | %-20s | %-20s | %6s | %s\n' np bytes "fused" "STITCH_FUSE=0" ratio algorithm
for np in 2 4; do
  rm -f "$TMP"/f1.* "$TMP"/f0.*
  for _ in $(seq "$REPEAT"); do
    for fuse in 1 0; do
      env STITCH_FUSE=$fuse STITCH_TRANSPORT=shm $RUN -x STITCH_FUSE -x STITCH_TRANSPORT -np $np \
        "$BUILD/bin/stitch-perf" all_reduce ${ALGO:+-a $ALGO} -b 4M -e 64M -f 4 -c 0 -w 3 -n 20 --place out \
        < /dev/null 2> "$TMP/err" > "$TMP/out" || { cat "$TMP/err" >&2; exit 1; }
      awk -v d="$TMP" -v f=$fuse '$1 ~ /^[0-9]+$/ {print $8 >> (d "/f" f "." $1); print $NF > (d "/algo." $1)}' "$TMP/out"
    done
  done
  for b in 4194304 16777216 67108864; do
    printf '%3s %10s | %s | %s | %6.2f | %s\n' $np $b "$(stats "$TMP/f1.$b")" "$(stats "$TMP/f0.$b")" \
      "$(paste <(sort -g "$TMP/f1.$b") <(sort -g "$TMP/f0.$b") | awk '{a[NR] = $1; b[NR] = $2} END {m = int((NR + 1) / 2); print a[m] / b[m]}')" \
      "$(cat "$TMP/algo.$b")"
  done
done
