#!/usr/bin/env bash
# select_vs_measured_smoke.sh SRC BUILD - runs scripts/select_vs_measured.sh on 2 thread ranks, tiny sizes, one round,
# and checks that its output is well formed, never its figures: the calibration line and topology snippet, one row per
# (size, algorithm) with a measured and a predicted time (so stitch-perf, --calibrate's snippet and stitchc sim all
# worked together), one pick row per size and a summary line per collective. Timing is not judged.
set -uo pipefail
src=${1:?src}; build=${2:?build}
out=$(NICE=0 REPS=1 ITERS=1 MIN=1K ALGOS="ring mesh" COLLS="all_reduce all_gather" \
      timeout 240 "$src/scripts/select_vs_measured.sh" "$build" 2 4K 2>&1)
rc=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc = 0 ] || fail "the script exited $rc"
grep -Eq '^# load before: .*load average' <<<"$out" || fail "no load line"
grep -Eq '^# calibration \(threads, 2 ranks\): alpha [-0-9.e]+ s, beta [-0-9.e]+ s/B, gamma [-0-9.e]+ s/B' <<<"$out" ||
  fail "no calibration line"
grep -Eq '^#     - \{name: threads, bandwidth: [0-9.e+]+ GB/s, latency: [0-9.e+]+ us\}$' <<<"$out" || fail "no topology level"
for coll in all_reduce all_gather; do
  rows=$(awk -v c="$coll" '/^# / { cur = $2 } cur == c "," && /^ *[0-9]+ [a-z_]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$/ && NF == 5' <<<"$out" | wc -l)
  [ "$rows" = 4 ] || fail "$coll: $rows rows with measured and predicted times, not 4 (2 sizes x ring, mesh)"
  grep -Eq "^# summary $coll p=2 threads: model picked the measured fastest at [0-2] of 2 sizes \([0-9]+%\), within 10% of it at [0-2]; median \|pred/meas - 1\| [0-9]+% over 4 points; worst loss [0-9]+%$" <<<"$out" ||
    fail "$coll: no well-formed summary line"
done
echo "PASS"
