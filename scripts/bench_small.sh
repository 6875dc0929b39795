#!/usr/bin/env bash
# bench_small.sh - an 8-byte all_reduce (fp32 sum), side by side in one run: Open MPI's MPI_Allreduce, stitch's
# processes over shm (stitch-perf under mpirun) and stitch's thread ranks (stitch-perf -t NP, bound to CPUs when
# NP <= CPUs, as mpirun binds), for np 2 and 4, each stitch column for every build given (before and after a change).
# Every run is WARM warm-up calls and ITERS timed ones (the slowest rank's mean, as stitch-perf and
# tools/mpi_allreduce_bench.c both time); the runs are interleaved REPEAT times and each column shows the median
# and the range: on a shared VM another process taking a core for one time slice moves one run's mean by tens of
# microseconds, so one run compares the machine's load more than the libraries.
#
#   scripts/bench_small.sh [BEFORE_BUILD] [AFTER_BUILD] [MORE_BUILDS...]     (default: build build)
#   REPEAT=9 ITERS=1000 WARM=200 scripts/bench_small.sh ...
#   LABELS="nocompact main this" scripts/bench_small.sh B1 B2 B3    (column names; default: before, after, 3, ...)
#   THREADS=0: no thread columns
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || set -- build build
[ $# -ge 2 ] || set -- "$1" build
BUILDS=("$@")
read -r -a LABEL <<< "${LABELS:-before after $(seq -s ' ' 3 $#)}"
REPEAT=${REPEAT:-7}; ITERS=${ITERS:-1000}; WARM=${WARM:-200}; THREADS=${THREADS:-1}
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "skip: mpicc/mpirun not found"; exit 0; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
mpicc -O2 -o "$TMP/mpi_bench" tools/mpi_allreduce_bench.c
RUN="mpirun --allow-run-as-root --oversubscribe"
PERF="all_reduce -b 8 -e 8 -c 0 -w $WARM -n $ITERS --place out"

# the time in us of one run's 8-byte row (stitch-perf: column 6; the MPI bench: column 2)
st_time() { "$@" < /dev/null 2> "$TMP/err" | awk '$1 == 8 {print $6}' || { cat "$TMP/err" >&2; exit 1; }; }
mpi_time() { "$@" < /dev/null 2> "$TMP/err" | awk '$1 == 8 {print $2}' || { cat "$TMP/err" >&2; exit 1; }; }
stats() { sort -g "$1" | awk '{v[NR] = $1} END {printf "%7.2f [%.2f-%.2f]", v[int((NR + 1) / 2)], v[1], v[NR]}'; }

echo "# 8-byte all_reduce fp32 sum, us per call: median [min-max] of $REPEAT interleaved runs of $ITERS calls"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
COLS=(mpi)
for i in "${!BUILDS[@]}"; do COLS+=("shm$i"); done
if [ "$THREADS" != 0 ]; then for i in "${!BUILDS[@]}"; do COLS+=("thr$i"); done; fi
printf '%3s | %-22s' np "Open MPI"
for i in "${!BUILDS[@]}"; do printf ' | %-22s' "shm ${LABEL[$i]:-$i}"; done
if [ "$THREADS" != 0 ]; then for i in "${!BUILDS[@]}"; do printf ' | %-22s' "threads ${LABEL[$i]:-$i}"; done; fi
echo " | load after"
for np in 2 4; do
  BIND=$([ "$np" -le "$(nproc)" ] && echo --bind || true)
  for f in "${COLS[@]}"; do : > "$TMP/$f"; done
  for _ in $(seq "$REPEAT"); do
    mpi_time $RUN -np $np "$TMP/mpi_bench" 8 8 2 "$WARM" "$ITERS" >> "$TMP/mpi"
    for i in "${!BUILDS[@]}"; do st_time $RUN -np $np "${BUILDS[$i]}/bin/stitch-perf" $PERF >> "$TMP/shm$i"; done
    if [ "$THREADS" != 0 ]; then
      for i in "${!BUILDS[@]}"; do st_time "${BUILDS[$i]}/bin/stitch-perf" -t $np $BIND $PERF >> "$TMP/thr$i"; done
    fi
  done
  printf '%3s' $np
  for f in "${COLS[@]}"; do printf ' | %s' "$(stats "$TMP/$f")"; done
  echo " | $(cut -d' ' -f1-3 /proc/loadavg)"
done
