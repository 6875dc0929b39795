#!/bin/sh
# compare_check.sh CONFORMANCE - `conformance --compare` on doctored result files: a run compared with itself
# agrees; a copy where the "rxe" side rejects a class case the emulator accepts (the emulator more lenient), or
# differs on an exact case, or lacks a case, fails naming the case.
set -u
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" --fake --out "$dir/fake.txt" > /dev/null || { echo "the emulator run failed"; cat "$dir/fake.txt"; exit 1; }
"$bin" --compare "$dir/fake.txt" "$dir/fake.txt" > "$dir/out" || { echo "a run disagrees with itself"; cat "$dir/out"; exit 1; }
# the emulator accepts (rejected=0) where "rxe" rejected: LENIENT
awk -F'\t' 'BEGIN{OFS="\t"} $1=="sq_overpost"{$4="20 accepted"; $6=0} {print}' "$dir/fake.txt" > "$dir/lenient_fake.txt"
awk -F'\t' 'BEGIN{OFS="\t"} $1=="sq_overpost"{$6=1} {print}' "$dir/fake.txt" > "$dir/strict_rxe.txt"
if "$bin" --compare "$dir/lenient_fake.txt" "$dir/strict_rxe.txt" > "$dir/out"; then echo "lenient not caught"; exit 1; fi
grep -q "^sq_overpost .*LENIENT" "$dir/out" || { echo "LENIENT not named"; cat "$dir/out"; exit 1; }
# an exact case that differs
awk -F'\t' 'BEGIN{OFS="\t"} $1=="rtr_empty_sgid"{$4="EINVAL"} {print}' "$dir/fake.txt" > "$dir/other.txt"
if "$bin" --compare "$dir/fake.txt" "$dir/other.txt" > "$dir/out"; then echo "exact difference not caught"; exit 1; fi
grep -q "^rtr_empty_sgid .*DIFFER" "$dir/out" || { echo "DIFFER not named"; cat "$dir/out"; exit 1; }
# a stricter emulator on a class case is fine
if ! "$bin" --compare "$dir/strict_rxe.txt" "$dir/lenient_fake.txt" > "$dir/out"; then echo "stricter emulator rejected"; cat "$dir/out"; exit 1; fi
# a missing case
grep -v "^cq_round	" "$dir/fake.txt" > "$dir/short.txt"
if "$bin" --compare "$dir/fake.txt" "$dir/short.txt" > "$dir/out"; then echo "missing case not caught"; exit 1; fi
grep -q "^cq_round .*MISSING" "$dir/out" || { echo "MISSING not named"; exit 1; }
echo "compare: ok"
