#!/usr/bin/env bash
# bench.sh - run inside the rxe guest (tests/rxe/run.sh): the verbs transport's one-sided path against its stream
# path on real kernel verbs (rdma_rxe), busbw of all_reduce and all_gather fp32 at 4 and 16 MB on 2 processes,
# each rank's output checked. Not a ctest (figures, not a check; docs/onesided.md has the command and the table):
#
#   tests/rxe/run.sh build/rxe -- tests/rxe/bench.sh build/bin/stitch-perf tests/proc/launch.sh
#
# One job per (collective, mode): STITCH_IB_RMA_BYTES=0 (every message on the stream: a copy into the staging
# ring, an RDMA write into the peer's ring, the receiver reduces or copies out of it) against the default 64k
# (messages from 64 KiB written from the sender's buffer into the receiver's destination or landing area). The
# guest runs under TCG: its absolute figures mean little, the ratio of the two columns is the point.
set -uo pipefail
perf=${1:?usage: bench.sh STITCH-PERF LAUNCH.SH}
launch=${2:?launch.sh}
export STITCH_SPIN_US=${STITCH_SPIN_US:-0} # 2 processes on 2 emulated CPUs (colls.sh says why)
for coll in all_reduce all_gather; do
    for rma in 0 64k; do
        echo "=== $coll, 2 processes over verbs, STITCH_IB_RMA_BYTES=$rma"
        LAUNCH_TIMEOUT=${RXE_GUEST_LAUNCH_TIMEOUT:-400} "$launch" torchrun 2 STITCH_TRANSPORT=verbs \
            STITCH_IB_RMA_BYTES=$rma -- "$perf" "$coll" -d fp32 -o sum -b 4M -e 16M -f 4 -c 1 -w 2 -n 5 \
            --place out --timeout 120 2>&1 | grep -E '^ *[0-9]+ +[0-9]+|passed|failed|busbw' | head -n 12
    done
done
