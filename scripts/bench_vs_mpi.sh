#!/usr/bin/env bash
# bench_vs_mpi.sh - stitch all_reduce (fp32 sum, ring) against Open MPI's MPI_Allreduce on this machine, side by
# side, for -np 2 and 4, like against like: stitch over shm (auto) against Open MPI's default (shared memory), and
# stitch over tcp (STITCH_TRANSPORT=tcp) against Open MPI forced over tcp on loopback (pml ob1, btl tcp,self,
# btl_tcp_if_include lo). Usage: scripts/bench_vs_mpi.sh [BUILD_DIR] [MAXBYTES] [FACTOR]
# Sizes run from 8 bytes up by FACTOR (default 4; 2 also gives 1K, 64K, 1M, 16M, 64M).
# The x columns are time ratios, stitch's time over MPI's on the same transport (1.00: as fast; below 1: faster),
# so small sizes, whose bandwidths round to 0, compare too.
# Needs mpicc/mpirun (Debian: openmpi-bin libopenmpi-dev); skips with a reason otherwise.
set -euo pipefail
export LC_ALL=C # join needs one collation for its inputs
cd "$(dirname "$0")/.."
BUILD=${1:-build}; MAX=${2:-67108864}; FACTOR=${3:-4}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "skip: mpicc/mpirun not found"; exit 0; }
BIN=$BUILD/bin/mpi_allreduce_bench
mpicc -O2 -o "$BIN" tools/mpi_allreduce_bench.c
RUN="mpirun --allow-run-as-root --oversubscribe"
MPI_TCP="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
for np in 2 4; do
  $RUN -np $np "$BIN" "$MAX" "$FACTOR" > /tmp/bench_mpi.$$ 2>/dev/null
  $RUN $MPI_TCP -np $np "$BIN" "$MAX" "$FACTOR" > /tmp/bench_mpi_tcp.$$ 2>/dev/null
  for tp in auto tcp; do
    STITCH_TRANSPORT=$tp $RUN -x STITCH_TRANSPORT -np $np "$BUILD/bin/stitch-perf" all_reduce -a ring -b 8 \
      -e "$MAX" -f "$FACTOR" -c 0 -w 3 --iters 20 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1, $5, $7}' > /tmp/bench_st_$tp.$$
  done
  echo "# np=$np  (time in us, busbw in GB/s; x = stitch time / MPI time on the same transport)"
  printf '%12s | %-41s | %s\n' "" "shared memory: MPI vs stitch (auto)" "tcp on loopback: MPI vs stitch"
  printf '%12s | %9s %7s %9s %7s %5s | %9s %7s %9s %7s %5s\n' bytes mpi_us mpi_bw shm_us shm_bw x mpi_us mpi_bw \
    tcp_us tcp_bw x
  join <(awk '{print $1, $2, $3}' /tmp/bench_mpi.$$ | sort -k1,1) <(sort -k1,1 /tmp/bench_st_auto.$$) |
    join - <(awk '{print $1, $2, $3}' /tmp/bench_mpi_tcp.$$ | sort -k1,1) |
    join - <(sort -k1,1 /tmp/bench_st_tcp.$$) | sort -n |
    awk '{printf "%12s | %9.1f %7.3f %9.1f %7.3f %5.2f | %9.1f %7.3f %9.1f %7.3f %5.2f\n", $1, $2, $3, $4, $5,
          $4/$2, $6, $7, $8, $9, $8/$6}'
  rm -f /tmp/bench_mpi.$$ /tmp/bench_mpi_tcp.$$ /tmp/bench_st_auto.$$ /tmp/bench_st_tcp.$$
done
