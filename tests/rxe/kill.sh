#!/usr/bin/env bash
# kill.sh - run inside the rxe guest (tests/rxe/run.sh) by rxe.kill: a rank killed mid-collective over verbs.
#
#   kill.sh STITCH-PERF
#
# 4 processes (torchrun-style variables, STITCH_TRANSPORT=verbs, STITCH_TIMEOUT=$KILL_TIMEOUT) run a long ring
# all_reduce (64 KiB to 16 MiB, 10 iterations each). Once rank 0 has printed its first row (the first size is done,
# the next is in flight; polled every 0.1 s, at most 120 s) rank 2 gets SIGKILL. Passes when every survivor exits
# non-zero within 2 x STITCH_TIMEOUT (+ 5 s of slack for TCG) and its stderr names "rank 2"; a survivor still
# running after that is a hang: it is killed and the test fails. Guest time is slow but the bound is on the
# guest's own clock, so it means what it says (no rank waits longer than the timeout allows).
set -uo pipefail
perf=${1:?usage: kill.sh STITCH-PERF}
limit=${KILL_TIMEOUT:-10}
# RXE_GUEST_TRANSPORT (default verbs) lets the script itself be tried on the host over tcp
transport=${RXE_GUEST_TRANSPORT:-verbs}
work=$(mktemp -d) || exit 1
port=$((22000 + $$ % 10000))
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
for r in 0 1 2 3; do
    # no `timeout` wrapper: the pid must be stitch-perf's own, so that SIGKILL hits the rank
    env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r LOCAL_WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        STITCH_TRANSPORT=$transport STITCH_TIMEOUT=$limit STITCH_DEBUG=1 \
        "$perf" all_reduce -a ring -d fp32 -o sum -b 64K -e 16M -f 4 -c 1 -w 1 --iters 10 \
        > "$work/out.$r" 2> "$work/err.$r" &
    pids+=($!)
done
i=0
until grep -qE '^ +[0-9]+ +[0-9]+ ' "$work/out.0" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 1200 ] || ! kill -0 "${pids[0]}" 2>/dev/null; then
        echo "FAIL: rank 0 printed no row (exited or 120 s passed)"; tail -n 5 "$work"/err.*; exit 1
    fi
    sleep 0.1
done
grep -h -E 'rank [0-9]+ of 4 on' "$work"/err.* | sed 's/^/# /'
kill -9 "${pids[2]}"
wait "${pids[2]}" 2>/dev/null
t0=$(date +%s%N)
bound=$((2 * limit + 5))
ok=1
for r in 0 1 3; do
    while kill -0 "${pids[$r]}" 2>/dev/null && [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt $bound ]; do sleep 0.1; done
    if kill -0 "${pids[$r]}" 2>/dev/null; then
        echo "FAIL: rank $r still running ${bound} s after rank 2 was killed (a hang)"; ok=0; continue
    fi
    wait "${pids[$r]}"; s=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    msg=$(grep -m1 'error' "$work/err.$r")
    echo "# rank $r: exit $s after ${ms} ms (guest clock): $msg"
    [ $s -ne 0 ] || { echo "FAIL: rank $r exited 0 although rank 2 died mid-collective"; ok=0; }
    grep -q 'rank 2' "$work/err.$r" || { echo "FAIL: rank $r's error does not name rank 2"; ok=0; }
done
[ $ok = 1 ] || exit 1
echo "kill: rank 2 killed mid-all_reduce over $transport; ranks 0, 1, 3 ended in an error naming it within ${bound} s"
