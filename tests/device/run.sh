#!/bin/bash
# run.sh - the device check on a machine with a GPU (docs/devices.md). Runs what scripts/device_build.sh built here
# and carried over (build-cuda/: test_device, stitch-perf, stitch-info, libyaml): the device tests (every algorithm
# x collective on p = 1..8 ranks sharing GPU 0, fp32/fp16/bf16/int32, sizes 0, 1, 7, 13 and 64 MB, checked on the
# host against an exact oracle; bit-identity with the threads engine; errors), compute-sanitizer memcheck and
# racecheck on a small subset (one rank), and stitch-perf --device cuda with the copy bound (targets: all_reduce busbw at
# 256 MB >= 70% of the copy bound for p = 2, 4, 8; an 8-byte all_reduce <= 15 us).
#
#   bash tests/device/run.sh [BUILD_DIR]     # default build-cuda; BUDGET=seconds (default 470)
#
# Each step says what it runs and ends PASS, FAIL (exit status; 124 = its timeout) or SKIP (why); logs go to
# $OUT/device-logs (or /tmp/device-logs). A step that would not fit the remaining budget is skipped, saying so.
# The last line is "N passed, N failed" (skips are listed above it); the exit status is 0 only with none failed.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build-cuda}
BUDGET=${BUDGET:-470}
LOG=${OUT:-/tmp}/device-logs
rm -rf "$LOG"
mkdir -p "$LOG"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pass=0 fail=0 skip=0
summary=()

note() { printf '%s\n' "$*"; }
result() { # result NAME PASS|FAIL|SKIP WHY
  case $2 in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; SKIP) skip=$((skip + 1)) ;; esac
  summary+=("$2 $1${3:+: $3}")
  note "== $2 $1${3:+: $3}"
}
fits() { # fits SECONDS: is there budget left for a step of that timeout?
  [ $((SECONDS + $1)) -le "$BUDGET" ]
}
step() { # step NAME TIMEOUT CMD...: run with a timeout, log, classify (77: skipped)
  local name=$1 t=$2
  shift 2
  if ! fits "$t"; then result "$name" SKIP "not started: ${SECONDS}s used of the ${BUDGET}s budget"; return 1; fi
  note "== $name: $* (timeout ${t}s)"
  local t0=$SECONDS
  timeout -k 10 "$t" "$@" >"$LOG/$name.log" 2>&1
  local rc=$?
  tail -n "${TAIL:-6}" "$LOG/$name.log" | sed 's/^/   /'
  if [ $rc -eq 0 ]; then result "$name" PASS "$((SECONDS - t0))s"
  elif [ $rc -eq 77 ]; then result "$name" SKIP "$(grep -m1 SKIP "$LOG/$name.log")"
  else result "$name" FAIL "exit $rc after $((SECONDS - t0))s$([ $rc -eq 124 ] && echo ' (timed out)'), log $LOG/$name.log"; fi
  return $rc
}

note "== device check $(date -u +%FT%TZ) on $(hostname); build dir $B; budget ${BUDGET}s"
command -v nvidia-smi >/dev/null && timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/   gpu: /'
if [ ! -x "$B/bin/test_device" ]; then
  result carried-build FAIL "$B/bin/test_device is missing: run scripts/device_build.sh here and carry $B"
  note "$pass passed, $fail failed"
  exit 1
fi
if ! "$B/bin/stitch-info" >"$LOG/stitch-info.log" 2>&1; then
  result carried-build FAIL "$B/bin/stitch-info does not run here: $(head -c 300 "$LOG/stitch-info.log")"
  note "$pass passed, $fail failed"
  exit 1
fi
grep '^devices:' "$LOG/stitch-info.log" | sed 's/^/   /'
if grep -q 'devices: cuda built.*[1-9][0-9]* devices\? here' "$LOG/stitch-info.log"; then
  result device-found PASS "$(grep -m1 'devices: cuda' "$LOG/stitch-info.log")"
else
  why=$(grep -m1 'devices: cuda' "$LOG/stitch-info.log")
  result device-found FAIL "no CUDA device: ${why:-stitch-info says nothing}"
  note "   every GPU step is skipped: no device"
  note "$pass passed, $fail failed"
  exit 1
fi

T="$B/bin/test_device --backend=cuda"
TAIL=4 step errors 90 $T errors
TAIL=4 step small 90 $T small
TAIL=4 step matrix 240 $T matrix
TAIL=4 step identical 120 $T identical

# ---- the benchmark: busbw against the copy bound, and the 8-byte latency ----------------------------------------
for p in 2 4 8; do
  TAIL=12 step "perf-p$p" 90 "$B/bin/stitch-perf" all_reduce --device cuda -t $p -b 16 -e 256M -f 16 -w 5 -n 20 --place out
  row=$(grep -sE '^ +268435456 ' "$LOG/perf-p$p.log" | tail -1)
  if [ ! -s "$LOG/perf-p$p.log" ]; then :
  elif [ -z "$row" ]; then result "target-busbw-p$p" FAIL "no 256 MB row in $LOG/perf-p$p.log"
  else
    ratio=$(awk '{print $NF}' <<<"$row")
    if awk -v r="$ratio" 'BEGIN{exit !(r >= 0.70)}'; then result "target-busbw-p$p" PASS "ratio $ratio >= 0.70"
    else result "target-busbw-p$p" FAIL "ratio $ratio < 0.70 (busbw $(awk '{print $8}' <<<"$row") GB/s)"; fi
  fi
  TAIL=3 step "latency-p$p" 60 "$B/bin/stitch-perf" all_reduce --device cuda -t $p -b 8 -e 8 -w 200 -n 2000 --place out
  us=$(grep -sE '^ +8 ' "$LOG/latency-p$p.log" | tail -1 | awk '{print $6}') # the out-of-place time
  if [ ! -s "$LOG/latency-p$p.log" ]; then :
  elif [ -z "$us" ]; then result "target-8B-p$p" FAIL "no 8-byte row in $LOG/latency-p$p.log"
  elif awk -v t="$us" 'BEGIN{exit !(t <= 15)}'; then result "target-8B-p$p" PASS "$us us <= 15"
  else result "target-8B-p$p" FAIL "$us us > 15"; fi
done

# ---- compute-sanitizer on a small subset ------------------------------------------------------------------------
CS=$(command -v compute-sanitizer || true)
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$CS" ] && [ -x "$c" ] && CS=$c
done
if [ -z "$CS" ]; then
  result memcheck SKIP "compute-sanitizer not found (PATH, /usr/local/cuda)"
  result racecheck SKIP "compute-sanitizer not found (PATH, /usr/local/cuda)"
else
  # one rank (small_p1): the sanitizer serialises kernel launches, and ranks sharing a GPU spin on each other's
  # flags, so p >= 2 would wait for the communicator's timeout instead of running
  TAIL=6 step memcheck 150 "$CS" --tool memcheck --target-processes all --error-exitcode 9 $T small_p1
  TAIL=6 step racecheck 120 "$CS" --tool racecheck --target-processes all --error-exitcode 9 $T small_p1
fi

# ---- 64 MB per rank, every algorithm x collective at p = 8 (last: the longest) ----------------------------------
TAIL=4 step large $((BUDGET - SECONDS > 240 ? 240 : (BUDGET - SECONDS > 30 ? BUDGET - SECONDS - 5 : 30))) $T large

note ""
note "== summary (${SECONDS}s; logs in $LOG)"
for s in "${summary[@]}"; do note "   $s"; done
note "$pass passed, $fail failed"
[ $fail -eq 0 ]
