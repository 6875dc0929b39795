#!/bin/sh
# scale_bench.sh - issue 22 item 7's benchmark: time and peak memory of `stitchc sim` and `stitch-info --selection`
# on two unequal super-pods (scripts/gen_superpods.sh) of 1k .. 1M ranks.
#
#   scale_bench.sh [-b BUILD_DIR] [-t SECONDS] [-c COLL] [SIZE ...]
#
# SIZE is 1k, 2k, 10k, 100k or 1m (default: 1k 10k 100k 1m). Each command runs under /usr/bin/time -v (package
# `time`) with a wall-clock limit of SECONDS (default 600; `timeout`): one line per command,
#   SIZE RANKS TOOL ALGO seconds=S peak_mb=M rc=RC [refused|timeout]
# rc is the command's status; a refusal (the model refusing with its message, e.g. a fuel or memory limit) is an
# expected result, printed with its first line, not a failure of this script. The script exits 0 unless a command
# crashed (a signal other than the timeout's) or the tools are missing. A benchmark: nothing here fails on time.
set -eu
BUILD=build
LIMIT=600
COLL=all_reduce
while [ $# -gt 0 ]; do
    case $1 in
    -b) BUILD=$2; shift 2 ;;
    -t) LIMIT=$2; shift 2 ;;
    -c) COLL=$2; shift 2 ;;
    -*) echo "usage: $0 [-b BUILD_DIR] [-t SECONDS] [-c COLL] [SIZE ...]" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- 1k 10k 100k 1m
HERE=$(cd "$(dirname "$0")" && pwd)
STITCHC=$BUILD/bin/stitchc
INFO=$BUILD/bin/stitch-info
ALGOS=$HERE/../algos.dsl
for f in "$STITCHC" "$INFO" /usr/bin/time; do
    [ -x "$f" ] || { echo "$0: $f missing (build first; /usr/bin/time is the package 'time')" >&2; exit 2; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bad=0

# run SIZE RANKS TOOL ALGO CMD... : one line of figures
run() {
    size=$1 ranks=$2 tool=$3 algo=$4
    shift 4
    set +e
    /usr/bin/time -v -o "$TMP/time" timeout "$LIMIT" "$@" > "$TMP/out" 2> "$TMP/err"
    rc=$?
    set -e
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; printf "%.2f", s }' "$TMP/time")
    kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$TMP/time")
    mb=$(awk -v k="${kb:-0}" 'BEGIN { printf "%.0f", k / 1024 }')
    note=""
    if [ "$rc" -eq 124 ]; then
        note="timeout (${LIMIT} s)"
    elif [ "$rc" -ne 0 ]; then
        msg=$(grep -v '^Command ' "$TMP/err" | head -n 1)
        if [ "$rc" -gt 128 ]; then
            note="crashed: $msg"
            bad=1
        else
            note="refused: $msg"
        fi
    fi
    printf '%-5s %8d %-11s %-6s seconds=%-8s peak_mb=%-6s rc=%d %s\n' "$size" "$ranks" "$tool" "$algo" "$secs" "$mb" "$rc" "$note"
    if [ "$tool" = stitch-info ] && [ "$rc" -eq 0 ]; then
        # the first line of all_reduce's table, to show what was chosen
        grep -m 1 -E '^ *[0-9]' "$TMP/out" | sed 's/^/      /' || true
    fi
}

echo "# scale_bench.sh: $COLL on two unequal super-pods of servers of 16 (gen_superpods.sh), limit $LIMIT s"
for size in "$@"; do
    case $size in
    1k) a=25 b=38 ;;
    2k) a=50 b=75 ;;
    10k) a=250 b=375 ;;
    100k) a=2500 b=3750 ;;
    1m) a=25000 b=37500 ;;
    *) echo "$0: unknown size '$size' (1k 2k 10k 100k 1m)" >&2; exit 2 ;;
    esac
    ranks=$(( (a + b) * 16 ))
    topo=$TMP/superpods-$size.yaml
    sh "$HERE/gen_superpods.sh" 16 $a $b > "$topo"
    for algo in rhd nhr nb ring; do
        run "$size" "$ranks" "stitchc-sim" "$algo" "$STITCHC" sim "$ALGOS" -a "$algo" -c "$COLL" --topo "$topo" --bytes 64MiB
    done
    run "$size" "$ranks" "stitch-info" "select" "$INFO" --selection --topo "$topo"
done
exit $bad
