#!/usr/bin/env bash
# die_at.sh - a rank of stitch-perf dies in one phase (the test hook STITCH_PERF_DIE_AT=RANK:PHASE, described in
# tools/stitch_perf.c at phase_name), and every survivor must say so: a line naming itself, the phase it was in and
# the dead rank, and its closing "N passed, N failed" line.
#
#   die_at.sh threads|proc STITCH-PERF NP DEAD PHASE SEEN [stitch-perf args...]
#
# PHASE is the hook's (init, check, warm-up, barrier, timed-loop); SEEN is the phase the survivors must report
# (thread mode: a survivor notices the abort in its next library call, and the benchmark's pthread barriers are
# not library calls, so a death at init or at a barrier is seen in the first call after it).
#   threads: one process of NP rank threads; rank 0 reports every rank: "size S: rank R: SEEN: ... on rank DEAD"
#            for each survivor, "rank DEAD: PHASE: ... STITCH_PERF_DIE_AT" for the dead one; exit status 1.
#   proc:    NP processes under STITCH_RANK/SIZE/ROOT (loopback); the dead one ends by SIGKILL, each survivor exits
#            1 and prints "rank R: SEEN: ... rank DEAD (pid ...) died" on its own stderr.
# Nothing is timed: the hook places the death, and the library's timeout (STITCH_TIMEOUT, 20 s here) only bounds a
# broken run; the whole run is killed after $DIE_AT_LIMIT seconds (default 120).
set -uo pipefail
mode=${1:?mode}; perf=${2:?stitch-perf}; np=${3:?np}; dead=${4:?dead rank}; phase=${5:?phase}; seen=${6:?seen}
shift 6
limit=${DIE_AT_LIMIT:-120}
seen=${seen/timed-loop/timed loop}
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=1; }
export STITCH_PERF_DIE_AT=$dead:$phase STITCH_TIMEOUT=20
unset STITCH_RANK STITCH_SIZE STITCH_ROOT OMPI_COMM_WORLD_RANK PMI_RANK SLURM_PROCID RANK WORLD_SIZE

# closing LINE_REGEX FILE: the last line of FILE (stdout) must match
closing() {
    local last; last=$(tail -n 1 "$2")
    [[ $last =~ $1 ]] || bad "$3: closing line is '$last', expected a match for '$1'"
}

case $mode in
threads)
    echo "$ STITCH_PERF_DIE_AT=$STITCH_PERF_DIE_AT stitch-perf $* -t $np"
    timeout -k 5 "$limit" "$perf" "$@" -t "$np" >"$d/out" 2>"$d/err"; rc=$?
    cat "$d/out" "$d/err"
    [ $rc -eq 1 ] || bad "exit status $rc, expected 1"
    closing "^[0-9]+ passed, [1-9][0-9]* failed$" "$d/out" "stitch-perf"
    grep -qE '^# Out of bounds values : [0-9]+ FAILED$' "$d/out" || bad "no '# Out of bounds values : N FAILED' line"
    for ((r = 0; r < np; r++)); do
        if [ $r -eq "$dead" ]; then
            want="^stitch-perf: error: size [0-9]+: rank $r: ${phase/timed-loop/timed loop}: .*STITCH_PERF_DIE_AT"
        else
            want="^stitch-perf: error: size [0-9]+: rank $r: $seen: .*on rank $dead\$"
        fi
        grep -Eq "$want" "$d/err" || bad "no line matching '$want'"
    done
    ;;
proc)
    port=$((40000 + ($$ % 5000) * 2))
    echo "$ STITCH_RANK=0..$((np - 1)) STITCH_SIZE=$np STITCH_ROOT=127.0.0.1:$port" \
         "STITCH_PERF_DIE_AT=$STITCH_PERF_DIE_AT stitch-perf $*"
    pids=()
    for ((r = 0; r < np; r++)); do
        STITCH_RANK=$r STITCH_SIZE=$np STITCH_ROOT=127.0.0.1:$port \
            timeout -s KILL "$limit" "$perf" "$@" >"$d/out.$r" 2>"$d/err.$r" &
        pids+=($!)
    done
    for ((r = 0; r < np; r++)); do
        wait "${pids[$r]}"; rc=$?
        echo "== rank $r exited $rc"; cat "$d/out.$r" "$d/err.$r"
        if [ $r -eq "$dead" ]; then
            [ $rc -eq 137 ] || bad "rank $r exited $rc, expected 137 (its own SIGKILL)"
            continue
        fi
        [ $rc -eq 1 ] || bad "rank $r exited $rc, expected 1"
        want="^stitch-perf: error: (size [0-9]+: )?rank $r: $seen: .*rank $dead \\(pid [0-9]+ on [^)]*\\) died"
        grep -Eq "$want" "$d/err.$r" || bad "rank $r: no line matching '$want'"
        if [ $r -eq 0 ]; then
            closing "^0 passed, [1-9][0-9]* failed$" "$d/out.$r" "rank 0"
        else
            closing "^# rank $r: 0 passed, [1-9][0-9]* failed$" "$d/out.$r" "rank $r"
        fi
    done
    ;;
*)
    echo "die_at.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
[ $fails -eq 0 ] && echo "PASS"
exit $fails
