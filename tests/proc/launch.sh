#!/usr/bin/env bash
# launch.sh - run stitch-perf in launcher mode (one rank per process) the way a user would, and judge every rank.
#
#   launch.sh mpirun   NP [NAME=value ...] -- STITCH-PERF ARGS...   Open MPI's mpirun -np NP
#   launch.sh torchrun NP [NAME=value ...] -- STITCH-PERF ARGS...   NP processes with RANK/WORLD_SIZE/LOCAL_RANK/
#                                                                   MASTER_ADDR=127.0.0.1/MASTER_PORT, as torchrun
#                                                                   sets them (torchrun itself is not needed)
#
# Passes when every process exits 0 and every rank's closing line (rank 0: "N passed, 0 failed", the others:
# "# rank R: N passed, 0 failed") says 0 failed. The whole run is bounded by $LAUNCH_TIMEOUT seconds (default 90).
# With $LAUNCH_EXPECT set, every rank must also print a line matching that extended regex (e.g. a STITCH_DEBUG line).
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason when the launcher is not installed.
set -uo pipefail

mode=${1:?mode}; np=${2:?np}; shift 2
envs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "usage: launch.sh mpirun|torchrun NP [NAME=value ...] -- stitch-perf args..." >&2; exit 2; }
limit=${LAUNCH_TIMEOUT:-90}
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out".*' EXIT

case $mode in
mpirun)
    if ! command -v mpirun >/dev/null 2>&1; then
        echo "SKIP: mpirun not found (Debian: apt-get install openmpi-bin; make deps installs it)"; exit 77
    fi
    if ! mpirun --version 2>&1 | grep -q "Open MPI"; then
        echo "SKIP: mpirun is not Open MPI's ($(mpirun --version 2>&1 | head -1)); these tests use its options"; exit 77
    fi
    xs=()
    for e in "${envs[@]}"; do xs+=(-x "$e"); done
    echo "$ ${envs[*]} timeout $limit mpirun --allow-run-as-root --oversubscribe ${xs[*]} -np $np $*"
    timeout -k 5 "$limit" mpirun --allow-run-as-root --oversubscribe "${xs[@]}" -np "$np" "$@" >"$out" 2>&1
    rc=$?
    ;;
torchrun)
    # MASTER_PORT is torchrun's own store; stitch's root listens on MASTER_PORT + 1. A port from our pid keeps
    # concurrent runs apart.
    port=$((21000 + ($$ % 20000) * 2))
    echo "$ RANK=0..$((np - 1)) WORLD_SIZE=$np MASTER_ADDR=127.0.0.1 MASTER_PORT=$port ${envs[*]} timeout $limit $*"
    pids=()
    for ((r = 0; r < np; r++)); do
        env "${envs[@]}" RANK=$r WORLD_SIZE=$np LOCAL_RANK=$r LOCAL_WORLD_SIZE=$np MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$port timeout -k 5 "$limit" "$@" >"$out.$r" 2>&1 &
        pids+=($!)
    done
    rc=0
    for ((r = 0; r < np; r++)); do
        wait "${pids[$r]}"; s=$?
        [ $s -eq 0 ] || { echo "# rank $r exited $s"; rc=1; }
        cat "$out.$r" >>"$out"
    done
    ;;
*)
    echo "launch.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac

cat "$out"
verdicts=$(grep -cE '^(# rank [0-9]+: )?[0-9]+ passed, 0 failed$' "$out")
if [ "$rc" -ne 0 ]; then
    echo "FAIL: the launch exited $rc (124: killed at the ${limit} s timeout)"; exit 1
fi
if [ "$verdicts" -ne "$np" ]; then
    echo "FAIL: $verdicts of $np ranks ended with '0 failed'"; exit 1
fi
if [ -n "${LAUNCH_EXPECT:-}" ] && [ "$(grep -cE "$LAUNCH_EXPECT" "$out")" -lt "$np" ]; then
    echo "FAIL: fewer than $np lines match '$LAUNCH_EXPECT'"; exit 1
fi
echo "PASS: all $np ranks ended with '0 failed'"
