#!/usr/bin/env bash
# bench_vs_mpi.sh - stitch's all_reduce (fp32 sum) against Open MPI's MPI_Allreduce and gloo on this machine, side by
# side in one run, for -np 2 and 4, like against like, with the copy bound of each size measured in the same run:
#
#   shared memory   Open MPI's default (tools/mpi_allreduce_bench.c) | stitch processes under mpirun, ordinary buffers
#                   (the message engine over shm rings)
#   registered      stitch processes under mpirun on stitch_mem_alloc's registered memory (stitch-perf --mem
#                   registered: the pull engine reads the peers' units in place, see scripts/bench_regmem.sh)
#   threads         stitch ranks as threads of one process (stitch-perf -t NP --bind: rank r's thread on CPU r mod
#                   CPUs, as mpirun binds its processes by default when np <= cores; above that nothing is bound)
#   copy bound      tools/copy_bench (built by CMake): NP threads each memcpy the size from a buffer of its own to
#                   another, at once; the figure shown is the busbw an all_reduce taking that time would report,
#                       copy busbw = bytes / t_copy * 2 (NP - 1) / NP,
#                   the least any all_reduce on shared memory must move: every rank reads its input once and writes
#                   its output once. thr/cpy = threads' busbw / copy busbw (1.00: at the bound)
#   tcp on loopback Open MPI forced over tcp (pml ob1, btl tcp,self, btl_tcp_if_include lo) | stitch
#                   STITCH_TRANSPORT=tcp
#   torch           torch.distributed all_reduce on gloo | on stitch's backend | on stitch's backend with a tensor of
#                   the group's registered memory (stitch_torch.empty) (scripts/bench_torch.py, one round of each per
#                   repetition); needs /usr/bin/python3 with torch (Debian: python3-torch) and
#                   BUILD/lib/stitch_torch/ (the backend); TORCH=0 leaves the group out, and so does its absence (said so)
#
# Both MPI and stitch are timed the same way (tools/mpi_allreduce_bench.c mirrors stitch-perf: warm-up, barrier, iters
# calls, barrier; slowest rank; stitch-perf's out-of-place columns, --place out), with the same warm-up and iteration
# counts: sizes up to 64 KiB get 200 warm-up calls and 2000 timed ones (latency), larger sizes 3 and 20. Each run
# (every column's) is repeated REPEAT times, all interleaved, and each size shows its median run: with more ranks
# than cores every library varies run to run by tens of percent, and one run of each side compares the noise as much
# as the libraries.
#
#   scripts/bench_vs_mpi.sh [BUILD_DIR] [MAXBYTES] [FACTOR]      sizes 8 B, 8*FACTOR, ... MAXBYTES (default 64M, 4)
#   ALGO=ring scripts/bench_vs_mpi.sh ...                          force stitch's algorithm (default: auto)
#   REPEAT=5 scripts/bench_vs_mpi.sh ...                           runs per column, the median shown (default 3)
#   TORCH=0 scripts/bench_vs_mpi.sh ...                            without the torch columns
#   MIN=16777216 scripts/bench_vs_mpi.sh build 67108864 2          sizes from MIN (default 8): 16M, 32M, 64M
#
# Ratios: x = stitch's time over the other library's on the same transport (1.00: as fast; below 1: faster), so
# small sizes, whose bandwidths round to 0, compare too; reg/thr and thr/cpy are busbw ratios (above 1: the first is
# faster); g/s, g/r = gloo's time over stitch's on an ordinary and on a registered tensor (above 1: stitch is
# faster). The last column is the algorithm stitch ran over shm (auto picks by size). Registered memory pulls only
# from 256 KiB (exec_pull.h's ST_PULL_MIN_BYTES); below that the registered columns run the message engine too. Needs mpicc/mpirun (Debian: openmpi-bin
# libopenmpi-dev); skips with a reason otherwise. scripts/plot_perf.py draws the output (a line per *_bw column).
set -euo pipefail
export LC_ALL=C # join needs one collation for its inputs
cd "$(dirname "$0")/.."
BUILD=${1:-build}; MAX=${2:-67108864}; FACTOR=${3:-4}; MIN=${MIN:-8}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "skip: mpicc/mpirun not found"; exit 0; }
[ -x "$BUILD/bin/copy_bench" ] || { echo "bench_vs_mpi.sh: $BUILD/bin/copy_bench is not built (cmake --build $BUILD)" >&2; exit 2; }
BIN=$BUILD/bin/mpi_allreduce_bench
mpicc -O2 -o "$BIN" tools/mpi_allreduce_bench.c
RUN="mpirun --allow-run-as-root --oversubscribe"
MPI_TCP="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
ALGO_ARGS=${ALGO:+-a $ALGO}
REPEAT=${REPEAT:-3}
case $REPEAT in '' | *[!0-9]* | 0) echo "REPEAT='$REPEAT': expected a positive number of runs" >&2; exit 2 ;; esac
case $MIN in '' | *[!0-9]* | 0) echo "MIN='$MIN': expected a number of bytes (no suffix)" >&2; exit 2 ;; esac
case $MAX in '' | *[!0-9]*) echo "MAXBYTES='$MAX': expected a number of bytes (no suffix)" >&2; exit 2 ;; esac
case $FACTOR in '' | *[!0-9]* | 0 | 1) echo "FACTOR='$FACTOR': expected a whole number of 2 or more" >&2; exit 2 ;; esac
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

# The torch columns: on unless TORCH=0, and only where torch and the backend's module are there.
TORCH_NOTE=
if [ "${TORCH:-1}" = 0 ]; then
  TORCH_NOTE="torch columns left out (TORCH=0)"
elif ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  TORCH_NOTE="torch columns skipped: /usr/bin/python3 has no torch (Debian: apt-get install python3-torch)"
elif ! ls "$BUILD"/lib/stitch_torch/_backend*.so >/dev/null 2>&1; then
  TORCH_NOTE="torch columns skipped: no $BUILD/lib/stitch_torch/_backend*.so (stitch's torch backend is not built)"
fi

# The two size ranges with their warm-up and timed calls: latency up to 64 KiB, bandwidth above.
ranges() {
  local small=$MIN big=$MIN
  if [ "$MIN" -gt 65536 ]; then echo "$MIN $MAX 3 20"; return 0; fi
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

# One run of one column: the command's numeric rows, fields FIELDS (bytes, time, busbw[, algorithm]), appended to
# $TMP/NAME. A failing run stops the script with its own error output, not a silently short table.
side() {
  local name=$1 fields=$2
  shift 2
  local try=1
  # (mpirun reads stdin: keep it off the list of ranges.) stitch's bootstrap under mpirun listens on a port derived
  # from the job id (runtime/boot/bootstrap.c), which another program on a shared host may hold: such a run is tried
  # again, up to 3 times, with the next job id.
  while ! "$@" < /dev/null > "$TMP/out" 2> "$TMP/err"; do
    if [ $try -lt 3 ] && grep -q "Address already in use" "$TMP/err"; then
      echo "# (retried: port in use: $(grep -o 'cannot listen on [^:]*:[0-9]*' "$TMP/err" | head -1))" >&2
      try=$((try + 1))
      continue
    fi
    echo "bench_vs_mpi.sh: this run failed: $*" >&2
    cat "$TMP/err" >&2
    exit 1
  done
  awk -v f="$fields" 'BEGIN {n = split(f, k, ",")} $1 ~ /^[0-9]+$/ {
    line = $k[1]; for (i = 2; i <= n; i++) line = line " " $k[i]; print line}' "$TMP/out" >> "$TMP/$name"
}

# One torch job (np processes, every size, one round of gloo, stitch, stitch on a registered tensor): its rows into
# $TMP/gloo, $TMP/torch and $TMP/treg.
torch_side() {
  local np=$1
  if ! /usr/bin/python3 scripts/bench_torch.py --procs "$np" -b "$MIN" -e "$MAX" -f "$FACTOR" --rounds 1 --secs 0.1 \
       --module-dir "$BUILD/lib" < /dev/null > "$TMP/out" 2> "$TMP/err"; then
    echo "bench_vs_mpi.sh: this run failed: scripts/bench_torch.py --procs $np" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  # "  bytes count | gloo_us busbw | stitch_us busbw | reg_us busbw | ratios"
  awk '$1 ~ /^[0-9]+$/ {print $1, $4, $5 >> g; print $1, $7, $8 >> t; print $1, $10, $11 >> r}' g="$TMP/gloo" \
    t="$TMP/torch" r="$TMP/treg" "$TMP/out"
}

PERF=$BUILD/bin/stitch-perf
echo "# bench_vs_mpi.sh on $(hostname), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$TORCH_NOTE" ] || echo "# $TORCH_NOTE"
for np in 2 4; do
  cols="mpi mpi_tcp st_shm st_reg st_tcp st_thr copy gloo torch treg"
  for f in $cols; do : > "$TMP/$f"; done
  BIND=$([ "$np" -le "$(nproc)" ] && echo --bind || true)
  for _ in $(seq "$REPEAT"); do
    while read -r lo hi warm iters; do
      side mpi 1,2,3 $RUN -np $np "$BIN" "$lo" "$hi" "$FACTOR" "$warm" "$iters"
      side mpi_tcp 1,2,3 $RUN $MPI_TCP -np $np "$BIN" "$lo" "$hi" "$FACTOR" "$warm" "$iters"
      for tp in shm tcp; do
        side st_$tp 1,6,8,14 env STITCH_TRANSPORT=$tp $RUN -x STITCH_TRANSPORT -np $np "$PERF" \
          all_reduce $ALGO_ARGS -b "$lo" -e "$hi" -f "$FACTOR" -c 0 -w "$warm" -n "$iters" --place out
      done
      side st_reg 1,6,8 $RUN -np $np "$PERF" all_reduce $ALGO_ARGS -b "$lo" -e "$hi" -f "$FACTOR" -c 0 -w "$warm" \
        -n "$iters" --place out --mem registered
      side st_thr 1,6,8 "$PERF" all_reduce -t $np $BIND $ALGO_ARGS -b "$lo" -e "$hi" -f "$FACTOR" \
        -c 0 -w "$warm" -n "$iters" --place out
      side copy 1,2,3 "$BUILD/bin/copy_bench" $np "$lo" "$hi" "$FACTOR" "$warm" "$iters"
    done < <(ranges)
    [ -n "$TORCH_NOTE" ] || torch_side $np
  done
  for f in $cols; do median "$TMP/$f" | sort -k1,1 > "$TMP/$f.med"; done
  echo "# np=$np  (time in us, busbw in GB/s; x = stitch time / other time on the same transport; reg/thr, thr/cpy:" \
       "busbw ratios; g/s, g/r = gloo time / stitch time, ordinary and registered tensor; median of $REPEAT; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
  head1=$(printf '%12s | %-41s | %-23s | %-23s | %-23s | %-41s |' "" "shared memory: MPI vs stitch" \
    "stitch registered" "stitch threads" "copy bound (memcpy)" "tcp on loopback: MPI vs stitch")
  head2=$(printf '%12s | %9s %7s %9s %7s %5s | %9s %7s %5s | %9s %7s %5s | %9s %7s %5s | %9s %7s %9s %7s %5s |' \
    bytes mpi_us mpi_bw shm_us shm_bw x reg_us reg_bw reg/thr thr_us thr_bw x cpy_us cpy_bw thr/cpy \
    mpi_us mpi_bw tcp_us tcp_bw x)
  # joined fields: 1 bytes | 2,3 mpi | 4,5,6 shm+algo | 7,8 mpi_tcp | 9,10,11 tcp+algo | 12,13 reg | 14,15 thr |
  # 16,17 copy | 18,19 gloo | 20,21 torch | 22,23 torch on a registered tensor
  joined=$(join "$TMP/mpi.med" "$TMP/st_shm.med" | join - "$TMP/mpi_tcp.med" | join - "$TMP/st_tcp.med" |
    join - "$TMP/st_reg.med" | join - "$TMP/st_thr.med" | join - "$TMP/copy.med")
  if [ -z "$TORCH_NOTE" ]; then
    joined=$(echo "$joined" | join - "$TMP/gloo.med" | join - "$TMP/torch.med" | join - "$TMP/treg.med")
    head1="$head1$(printf ' %-41s | %-23s |' "torch: gloo vs stitch" "torch: registered tensor")"
    head2="$head2$(printf ' %9s %7s %9s %7s %5s | %9s %7s %5s |' gloo_us gloo_bw tch_us tch_bw g/s treg_us treg_bw g/r)"
  fi
  printf '%s\n%s algorithm\n' "$head1" "$head2"
  echo "$joined" | sort -n | awk -v torch=$([ -z "$TORCH_NOTE" ] && echo 1 || echo 0) '
    function r(a, b) { return b > 0 ? a / b : 0 }
    {line = sprintf("%12s | %9.1f %7.3f %9.1f %7.3f %5.2f | %9.1f %7.3f %7.2f | %9.1f %7.3f %5.2f | %9.1f %7.3f %7.2f |" \
            " %9.1f %7.3f %9.1f %7.3f %5.2f |", $1, $2, $3, $4, $5, r($4, $2), $12, $13, r($13, $15), $14, $15,
            r($14, $2), $16, $17, r($15, $17), $7, $8, $9, $10, r($9, $7))
     if (torch) line = line sprintf(" %9.1f %7.3f %9.1f %7.3f %5.2f | %9.1f %7.3f %5.2f |", $18, $19, $20, $21,
                                    r($18, $20), $22, $23, r($18, $22))
     print line, $6}'
done
