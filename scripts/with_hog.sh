#!/usr/bin/env bash
# with_hog.sh [-n N] COMMAND... - run COMMAND beside N busy-looping CPU hogs (default: twice the core count), the way
# a shared CI machine loads a test run; the hogs end with COMMAND (or its interruption), and its exit status is
# COMMAND's. `make test-loaded` runs the default suite this way.
set -euo pipefail
n=$(( 2 * $(nproc) ))
if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
if [ $# -eq 0 ]; then echo "usage: $0 [-n N] COMMAND..." >&2; exit 2; fi
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT INT TERM
for _ in $(seq "$n"); do
    ( trap - EXIT INT TERM; while :; do :; done ) &
    pids+=($!)
done
echo "with_hog: $n CPU hogs beside: $*" >&2
rc=0
"$@" || rc=$?
exit $rc
