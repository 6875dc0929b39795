#!/usr/bin/env bash
# conform.sh - run inside the rxe guest (tests/rxe/run.sh) by rxe.conformance: the verbs conformance suite
# (tests/verbs/conformance.c, owned by the emulator's side) against rdma_rxe and against the emulator, then
# compared case by case.
#
#   conform.sh CONFORMANCE
#
# 1. `conformance --real`: every case through libibverbs on rxe0 (stitch's verbs table); fails where rxe's result is
#    not the one the suite expects (Appendix A's, measured on 6.1.0-57; this guest runs RXE_KERNEL).
# 2. `conformance --fake`: the same cases through the strict emulator, in the same guest.
# 3. `conformance --compare fake rxe`: fails where the two disagree on an exact case, or the emulator is more
#    lenient than rxe (rejected less) on a class case.
# Both tables are printed (the rxe one is the report's conformance table). Passes only when all three pass. The
# cases' timings (retry-exceeded after N ms) are guest time under TCG and mean nothing.
set -uo pipefail
conf=${1:?usage: conform.sh CONFORMANCE}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
ok=1
echo "=== conformance --real (libibverbs on rxe0, kernel $(uname -r))"
"$conf" --real --out "$work/rxe.txt" > "$work/real.log" 2>&1; s=$?
cat "$work/real.log"
[ $s = 0 ] || { echo "FAIL: conformance --real exited $s (rxe is not what the suite expects, or no device)"; ok=0; }
echo "=== conformance --fake (the emulator)"
"$conf" --fake --out "$work/fake.txt" > "$work/fake.log" 2>&1; s=$?
tail -n 1 "$work/fake.log"
[ $s = 0 ] || { cat "$work/fake.log"; echo "FAIL: conformance --fake exited $s"; ok=0; }
if [ -s "$work/rxe.txt" ] && [ -s "$work/fake.txt" ]; then
    echo "=== conformance --compare fake rxe"
    "$conf" --compare "$work/fake.txt" "$work/rxe.txt"; s=$?
    [ $s = 0 ] || { echo "FAIL: conformance --compare exited $s (the emulator disagrees with rxe)"; ok=0; }
else
    echo "FAIL: a result file is missing or empty: no comparison"; ok=0
fi
[ $ok = 1 ] || exit 1
echo "conformance: rxe meets every case, the emulator agrees with rxe on every exact case and is nowhere more lenient"
