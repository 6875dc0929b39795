#!/usr/bin/env bash
# bench_vs_mpi.sh - stitch all_reduce (fp32 sum, ring) against Open MPI's MPI_Allreduce on this machine, side by
# side, for -np 2 and 4, stitch over shm (auto) and tcp. Usage: scripts/bench_vs_mpi.sh [BUILD_DIR] [MAXBYTES] [FACTOR]
# Sizes run from 8 bytes up by FACTOR (default 4; 2 also gives 1K, 64K, 1M, 16M, 64M).
# The x columns are time ratios, stitch's time over MPI's (1.00: as fast; below 1: faster), so small sizes, whose
# bandwidths round to 0, compare too.
# Needs mpicc/mpirun (Debian: openmpi-bin libopenmpi-dev); skips with a reason otherwise.
set -euo pipefail
export LC_ALL=C # join needs one collation for its inputs
cd "$(dirname "$0")/.."
BUILD=${1:-build}; MAX=${2:-67108864}; FACTOR=${3:-4}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "skip: mpicc/mpirun not found"; exit 0; }
BIN=$BUILD/bin/mpi_allreduce_bench
mpicc -O2 -o "$BIN" tools/mpi_allreduce_bench.c
RUN="mpirun --allow-run-as-root --oversubscribe"
for np in 2 4; do
  $RUN -np $np "$BIN" 8 "$MAX" "$FACTOR" 3 20 > /tmp/bench_mpi.$$ 2>/dev/null
  for tp in auto tcp; do
    STITCH_TRANSPORT=$tp $RUN -x STITCH_TRANSPORT -np $np "$BUILD/bin/stitch-perf" all_reduce -a ring -b 8 \
      -e "$MAX" -f "$FACTOR" -c 0 -w 3 --iters 20 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1, $5, $7}' > /tmp/bench_st_$tp.$$
  done
  echo "# np=$np  (time in us, busbw in GB/s)"
  printf '%12s | %10s %8s | %10s %8s %6s | %10s %8s %6s\n' bytes mpi_us mpi_bw shm_us shm_bw x tcp_us tcp_bw x
  join <(awk '{print $1, $2, $3}' /tmp/bench_mpi.$$ | sort -k1,1) <(sort -k1,1 /tmp/bench_st_auto.$$) |
    join - <(sort -k1,1 /tmp/bench_st_tcp.$$) | sort -n |
    awk '{printf "%12s | %10.1f %8.3f | %10.1f %8.3f %6.2f | %10.1f %8.3f %6.2f\n", $1, $2, $3, $4, $5, $4/$2, $6, $7, $6/$2}'
  rm -f /tmp/bench_mpi.$$ /tmp/bench_st_auto.$$ /tmp/bench_st_tcp.$$
done
