#!/usr/bin/env bash
# verify_progress.sh - `stitchc verify` on a long range draws a progress line on a terminal and nothing elsewhere.
# Under `script` (a pseudo-terminal for stdout and stderr): verify's stdout lines arrive whole, each after the
# progress line was erased ("\r\033[K"), and when the run took a second or more the line was drawn (it appears after
# half a second, at the next p) and names the pair and p. With stderr a file: stderr is empty and stdout has the
# same lines as on the terminal (timings aside). Skips (77) without util-linux's `script`.
#
#   verify_progress.sh STITCHC ALGOS.DSL WORKDIR
stitchc=${1:?stitchc}; dsl=${2:?algos.dsl}; work=${3:?workdir}
command -v script >/dev/null 2>&1 || { echo "skip: no 'script' (util-linux) to run stitchc on a pseudo-terminal"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
args=(verify "$dsl" -a ring -c all_reduce --ranks 1..256)
fail=0
bad() { echo "FAIL: $*"; fail=1; }

echo "$ script -qec 'stitchc ${args[*]}' /dev/null"
TERM=xterm script -qec "$(printf '%q ' "$stitchc" "${args[@]}")" /dev/null >"$work/tty" </dev/null || bad "exit status $? on the terminal"
echo "$ stitchc ${args[*]} 2>stderr"
"$stitchc" "${args[@]}" >"$work/out" 2>"$work/err" || bad "exit status $? off the terminal"
[ -s "$work/err" ] && bad "stderr is not empty off a terminal: $(head -c 300 "$work/err")"

# the terminal's stream: the progress draws, then verify's lines (CR LF from the terminal)
tr -d '\r' <"$work/tty" | sed 's/\x1b\[K/\n/g' >"$work/tty.lines"
draws=$(grep -c '^verify: pair 1 of 1: ring all_reduce: p = [0-9]* (1\.\.256), [0-9]* s$' "$work/tty.lines")
echo "# $draws progress draws; the last: $(grep '^verify: pair' "$work/tty.lines" | tail -1)"
grep -v '^verify: pair' "$work/tty.lines" | grep -v '^$' | sed 's/ [0-9.]* s$/ T s/' >"$work/tty.rest"
sed 's/ [0-9.]* s$/ T s/' "$work/out" >"$work/out.rest"
diff "$work/out.rest" "$work/tty.rest" >/dev/null || bad "verify's lines differ on the terminal: $(diff "$work/out.rest" "$work/tty.rest" | head -5)"
secs=$(sed -n 's/^verified 1 (algorithm, collective) pairs for p = 1\.\.256 in \([0-9]*\)\..*/\1/p' "$work/out")
[ -n "$secs" ] || bad "no closing 'verified 1 ... pairs' line"
if [ "${secs:-0}" -ge 1 ] && [ "$draws" -eq 0 ]; then bad "the run took ${secs} s and drew no progress line"; fi
# every progress draw is erased before verify's next line: no line starts with verify's text after a draw
grep -q '^verify: pair.*verified' "$work/tty.lines" && bad "a verify line was printed on the progress line"
[ $fail -eq 0 ] && echo "PASS: progress on the terminal ($draws draws), none off it; verify's lines unchanged"
exit $fail
