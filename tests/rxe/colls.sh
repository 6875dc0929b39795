#!/usr/bin/env bash
# colls.sh - run inside the rxe guest (tests/rxe/run.sh) by the rxe.colls.* tests: collectives on 4 processes
# over verbs (STITCH_TRANSPORT=verbs, rxe0), every element of every rank's output checked by stitch-perf (-c 1).
#
#   colls.sh STITCH-PERF LAUNCH.SH COLL ALGO...
#
# Each algorithm is one torchrun-style job of 4 processes under tests/proc/launch.sh, which passes only when every
# rank exits 0 and ends with "N passed, 0 failed". STITCH_DEBUG's per-rank summary must show verbs to every peer
# (so a silent fallback to tcp or shm cannot pass). Sizes 8 B to 256 KiB cover one element, a few MTUs and many
# segments; broadcast runs at root 1. Timing in the guest means nothing (TCG): only correctness is judged.
# STITCH_SPIN_US defaults to 0 here: 4 processes share 2 emulated CPUs, where spinning only steals the peers' time
# (it halves the run); the completions are then waited for on the completion channel, the transport's blocking
# path. kill.sh keeps the default spin.
set -uo pipefail
perf=${1:?usage: colls.sh STITCH-PERF LAUNCH.SH COLL ALGO...}
launch=${2:?launch.sh}
coll=${3:?collective}
shift 3
[ $# -ge 1 ] || { echo "colls.sh: no algorithm given" >&2; exit 2; }
# RXE_GUEST_TRANSPORT (default verbs) lets the script itself be tried on the host over tcp
transport=${RXE_GUEST_TRANSPORT:-verbs}
export STITCH_SPIN_US=${STITCH_SPIN_US:-0}
root=()
[ "$coll" = broadcast ] && root=(-r 1)
failed=()
for algo in "$@"; do
    echo "=== $coll -a $algo, 4 processes over $transport"
    log=$(mktemp)
    LAUNCH_TIMEOUT=${RXE_GUEST_LAUNCH_TIMEOUT:-240} "$launch" torchrun 4 STITCH_TRANSPORT=$transport STITCH_DEBUG=1 -- \
        "$perf" "$coll" -a "$algo" "${root[@]}" -d fp32 -o sum -b 8 -e 256K -f 8 -c 1 -w 1 --iters 1 --timeout 60 \
        > "$log" 2>&1
    s=$?
    grep -vE '^stitch(\[| debug|:)' "$log" | grep -vE '^#  ' | tail -n 25
    # every rank's transport summary (STITCH_DEBUG) must name verbs, and none may name tcp or shm as its data path
    sums=$(grep -E "rank [0-9]+ of 4 on" "$log")
    echo "$sums"
    nverbs=$(echo "$sums" | grep -cE "\b3 (peers )?over $transport")
    if [ $s -ne 0 ]; then failed+=("$algo (launch.sh exit $s)")
    elif [ "$nverbs" -ne 4 ]; then failed+=("$algo (only $nverbs of 4 ranks report 3 peers over $transport)"); fi
    rm -f "$log"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "colls: $coll over $transport: ${#failed[@]} of $# algorithms failed: ${failed[*]}"
    exit 1
fi
echo "colls: $coll over $transport: $# algorithms ($*) on 4 processes, 0 failed"
