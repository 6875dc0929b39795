#!/bin/sh
# fuzz.sh BUILD_DIR SECONDS [NAME...] - run each libFuzzer target fuzz-NAME of BUILD_DIR (a STITCH_FUZZ=ON tree)
# for SECONDS, one after the other, from its seed corpus tests/fuzz/corpus/NAME; then print the executions per
# target and in all. Exit 1 when a target crashed, leaked, hung past its per-input limit or ran out of memory: its
# log and the input that did it (crash-*, leak-*, timeout-*, oom-*) are in BUILD_DIR/fuzz/NAME/. Add such an input
# to tests/fuzz/corpus/NAME once fixed: the fuzz_replay_NAME tests replay it in every build.
#
# New inputs go to BUILD_DIR/fuzz/NAME/corpus (kept between runs, so a later run starts where this one ended); the
# seed corpus is only read. `make fuzz` runs this with NAME = frontend topofile bootmsg algofile.
set -u
build=$1 secs=$2
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
total=0 failed=""
for name in "$@"; do
  bin=$build/bin/fuzz-$name work=$build/fuzz/$name
  mkdir -p "$work/corpus"
  # Inputs are kept short (the targets' costs grow with them; what they find needs no more); the DSL targets get
  # the grammar's tokens as a dictionary.
  set -- -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
         -artifact_prefix="$work/"
  case $name in frontend|algofile) set -- "$@" -dict="$src/tests/fuzz/dict/stitch.dict" ;; esac
  echo "fuzz: $name for $secs s (log: $work/log)"
  "$bin" "$@" "$work/corpus" "$src/tests/fuzz/corpus/$name" >"$work/log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log" | tail -1)
  runs=${runs:-0} took=${took:-0}
  total=$((total + runs))
  rate=$([ "$took" -gt 0 ] && echo $((runs / took)) || echo "-")
  if [ $rc -ne 0 ]; then
    failed="$failed $name"
    echo "fuzz: $name FAILED (exit $rc) after $runs executions; the input and the report:" >&2
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* >&2 2>/dev/null
    grep -m1 -E "ERROR|runtime error|SUMMARY" "$work/log" >&2
  fi
  echo "fuzz: $name: $runs executions in $took s ($rate/s)"
done
echo "fuzz: $total executions in all${failed:+; FAILED:$failed}"
[ -z "$failed" ]
