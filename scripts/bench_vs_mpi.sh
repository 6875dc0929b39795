#!/usr/bin/env bash
# bench_vs_mpi.sh - stitch's all_reduce (fp32 sum) against Open MPI's MPI_Allreduce on this machine, side by side,
# for -np 2 and 4, like against like: stitch over shm against Open MPI's default (shared memory), and stitch over
# tcp (STITCH_TRANSPORT=tcp) against Open MPI forced over tcp on loopback (pml ob1, btl tcp,self,
# btl_tcp_if_include lo). Both sides are timed the same way (tools/mpi_allreduce_bench.c mirrors stitch-perf:
# warm-up, barrier, iters calls, barrier; slowest rank; stitch-perf's out-of-place columns, --place out), with the
# same warm-up and iteration counts: sizes up to 64 KiB get 200 warm-up calls and 2000 timed ones (latency), larger
# sizes 3 and 20. Each of the four runs
# (MPI shm, MPI tcp, stitch shm, stitch tcp) is repeated REPEAT times, the four interleaved, and each size shows
# its median run: with more ranks than cores both libraries vary run to run by tens of percent, and one run of
# each side compares the noise as much as the libraries.
#
#   scripts/bench_vs_mpi.sh [BUILD_DIR] [MAXBYTES] [FACTOR]      sizes 8 B, 8*FACTOR, ... MAXBYTES (default 64M, 4)
#   ALGO=ring scripts/bench_vs_mpi.sh ...                          force stitch's algorithm (default: auto)
#   REPEAT=5 scripts/bench_vs_mpi.sh ...                           runs per side, the median shown (default 3)
#
# A third stitch column runs the same sizes with ranks as threads of one process (stitch-perf -t NP --bind:
# rank r's thread bound to CPU r mod CPUs, as mpirun binds its processes by default when np <= cores; above that
# neither side is bound), interleaved with the others; its x is its time over MPI's shared-memory time.
#
# The x columns are time ratios, stitch's time over MPI's on the same transport (1.00: as fast; below 1: faster),
# so small sizes, whose bandwidths round to 0, compare too. The last column is the algorithm stitch ran (auto
# picks by size). Needs mpicc/mpirun (Debian: openmpi-bin libopenmpi-dev); skips with a reason otherwise.
set -euo pipefail
export LC_ALL=C # join needs one collation for its inputs
cd "$(dirname "$0")/.."
BUILD=${1:-build}; MAX=${2:-67108864}; FACTOR=${3:-4}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "skip: mpicc/mpirun not found"; exit 0; }
BIN=$BUILD/bin/mpi_allreduce_bench
mpicc -O2 -o "$BIN" tools/mpi_allreduce_bench.c
RUN="mpirun --allow-run-as-root --oversubscribe"
MPI_TCP="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
ALGO_ARGS=${ALGO:+-a $ALGO}
REPEAT=${REPEAT:-3}
case $REPEAT in '' | *[!0-9]* | 0) echo "REPEAT='$REPEAT': expected a positive number of runs" >&2; exit 2 ;; esac
case $MAX in '' | *[!0-9]*) echo "MAXBYTES='$MAX': expected a number of bytes (no suffix)" >&2; exit 2 ;; esac
case $FACTOR in '' | *[!0-9]* | 0 | 1) echo "FACTOR='$FACTOR': expected a whole number of 2 or more" >&2; exit 2 ;; esac
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

# The two size ranges with their warm-up and timed calls: latency up to 64 KiB, bandwidth above.
ranges() {
  local small=8 big=8
  while [ $((big * FACTOR)) -le "$MAX" ] && [ $((big * FACTOR)) -le 65536 ]; do big=$((big * FACTOR)); done
  echo "$small $big 200 2000"
  [ $((big * FACTOR)) -le "$MAX" ] && echo "$((big * FACTOR)) $MAX 3 20"
  return 0
}

# Rows "bytes time ..." of several runs: per size, the row of the median time (the lower middle one when even).
median() {
  sort -k1,1n -k2,2g "$1" | awk '{row[$1] = row[$1] (row[$1] == "" ? "" : "\n") $0; cnt[$1]++}
    END {for (b in row) {split(row[b], r, "\n"); print r[int((cnt[b] + 1) / 2)]}}'
}

# One run of one side: the command's numeric rows, fields FIELDS (bytes, time, busbw[, algorithm]), appended to
# $TMP/NAME. A failing run stops the script with its own error output, not a silently short table.
side() {
  local name=$1 fields=$2
  shift 2
  if ! "$@" < /dev/null > "$TMP/out" 2> "$TMP/err"; then # (mpirun reads stdin: keep it off the list of ranges)
    echo "bench_vs_mpi.sh: this run failed: $*" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  awk -v f="$fields" 'BEGIN {n = split(f, k, ",")} $1 ~ /^[0-9]+$/ {
    line = $k[1]; for (i = 2; i <= n; i++) line = line " " $k[i]; print line}' "$TMP/out" >> "$TMP/$name"
}

for np in 2 4; do
  : > "$TMP/mpi"; : > "$TMP/mpi_tcp"; : > "$TMP/st_shm"; : > "$TMP/st_tcp"; : > "$TMP/st_thr"
  BIND=$([ "$np" -le "$(nproc)" ] && echo --bind || true)
  for _ in $(seq "$REPEAT"); do
    while read -r lo hi warm iters; do
      side mpi 1,2,3 $RUN -np $np "$BIN" "$lo" "$hi" "$FACTOR" "$warm" "$iters"
      side mpi_tcp 1,2,3 $RUN $MPI_TCP -np $np "$BIN" "$lo" "$hi" "$FACTOR" "$warm" "$iters"
      for tp in shm tcp; do
        side st_$tp 1,6,8,14 env STITCH_TRANSPORT=$tp $RUN -x STITCH_TRANSPORT -np $np "$BUILD/bin/stitch-perf" \
          all_reduce $ALGO_ARGS -b "$lo" -e "$hi" -f "$FACTOR" -c 0 -w "$warm" -n "$iters" --place out
      done
      side st_thr 1,6,8 "$BUILD/bin/stitch-perf" all_reduce -t $np $BIND $ALGO_ARGS -b "$lo" -e "$hi" -f "$FACTOR" \
        -c 0 -w "$warm" -n "$iters" --place out
    done < <(ranges)
  done
  for f in mpi mpi_tcp st_shm st_tcp st_thr; do median "$TMP/$f" > "$TMP/$f.med"; done
  echo "# np=$np  (time in us, busbw in GB/s; x = stitch time / MPI time on the same transport; median of $REPEAT)"
  printf '%12s | %-41s | %-23s | %-41s |\n' "" "shared memory: MPI vs stitch" "stitch threads" \
    "tcp on loopback: MPI vs stitch"
  printf '%12s | %9s %7s %9s %7s %5s | %9s %7s %5s | %9s %7s %9s %7s %5s | %s\n' bytes mpi_us mpi_bw shm_us shm_bw \
    x thr_us thr_bw x mpi_us mpi_bw tcp_us tcp_bw x algorithm
  join <(sort -k1,1 "$TMP/mpi.med") <(sort -k1,1 "$TMP/st_shm.med") | join - <(sort -k1,1 "$TMP/mpi_tcp.med") |
    join - <(sort -k1,1 "$TMP/st_tcp.med") | join - <(sort -k1,1 "$TMP/st_thr.med") | sort -n |
    awk '{printf "%12s | %9.1f %7.3f %9.1f %7.3f %5.2f | %9.1f %7.3f %5.2f | %9.1f %7.3f %9.1f %7.3f %5.2f | %s\n",
          $1, $2, $3, $4, $5, $4/$2, $12, $13, $12/$2, $7, $8, $9, $10, $9/$7, $6}'
done
