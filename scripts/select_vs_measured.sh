#!/usr/bin/env bash
# select_vs_measured.sh [BUILD_DIR] [P] [MAXBYTES] - the cost model against measurement at P ranks: predicted and
# measured time of every algorithm, and policy model's pick against the measured fastest.
#
#   scripts/select_vs_measured.sh build 4 64M                       threads, all_reduce, 1 KiB .. 64 MiB
#   MODE=shm COLLS="all_reduce all_gather" scripts/select_vs_measured.sh build 4 16M
#
# 1. The topology: $TOPO if set, else `stitch-perf --calibrate` on $CALIB_P ranks (default 2) in the same MODE
#    (threads: -t; shm or tcp: mpirun -np with STITCH_TRANSPORT), its snippet with the layout set to P (printed).
#    CALIB_P=P calibrates at the job's own rank count (on a machine with fewer cores than ranks, the per-step
#    wake-ups of oversubscribed ranks then land in alpha).
# 2. Measured: `stitch-perf COLL -a ALGO -c 0 --place out` for every algorithm of $ALGOS that runs the collective on P ranks in one
#    group, sizes MIN .. MAXBYTES (factor 4), REPS rounds with the algorithms interleaved inside each round (so a
#    burst of load from another process spreads over all of them), the median of the rounds kept.
# 3. Predicted: `stitchc sim algos.dsl -a ALGO -c COLL --topo T -b SIZE --format json`'s time_us (the same size as
#    stitch-perf's column: the all_reduce vector, the reduce_scatter input, the all_gather output).
# 4. Picked: `stitch-info --selection --topo T -n P --policy model` (its bytes are per rank: SIZE / P for
#    reduce_scatter and all_gather).
# Prints one row per (size, algorithm): measured, predicted, predicted / measured; one row per size: the measured
# fastest, model's pick, the pick's loss (its measured time over the fastest's, minus 1); and a summary line per
# collective: hit rate (and how often the pick is within 10% of the fastest, about the rounds' spread here), median
# |predicted / measured - 1|, worst loss. The load (uptime) is printed before and after.
# A benchmark (docs/performance.md, "Calibration and selection against measurement"), not a test: its figures move
# with the load. Runs under `nice -n $NICE` (default -10 when root, else 0).
set -euo pipefail
B=${1:-build}; P=${2:-4}; MAX=${3:-64M}
MIN=${MIN:-1K}; REPS=${REPS:-3}; ITERS=${ITERS:-10}; MODE=${MODE:-threads}; COLLS=${COLLS:-all_reduce}
ALGOS=${ALGOS:-"ring mesh mesh_oneshot mesh_det rhd nhr nhr_oneshot nb"}
NICE=${NICE:-$([ "$(id -u)" = 0 ] && echo -10 || echo 0)}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

perf() { # perf NP ARGS...: stitch-perf on NP ranks in MODE
  local np=$1; shift
  if [ "$MODE" = threads ]; then nice -n "$NICE" "$B/bin/stitch-perf" "$@" -t "$np"
  else STITCH_TRANSPORT=$MODE nice -n "$NICE" mpirun --allow-run-as-root --oversubscribe -np "$np" \
         -x STITCH_TRANSPORT "$B/bin/stitch-perf" "$@"; fi
}
bytes() { numfmt --from=iec "$1"; }

echo "# select_vs_measured: $P ranks ($MODE), $COLLS, $MIN .. $MAX, $REPS rounds x $ITERS iterations, nice $NICE"
echo "# load before: $(uptime)"
if [ -n "${TOPO:-}" ]; then
  sed "s/^layout: .*/layout: $P/" "$TOPO" > "$tmp/topo.yaml"
else
  perf "${CALIB_P:-2}" --calibrate > "$tmp/calib" 2>&1 || { cat "$tmp/calib" >&2; exit 1; }
  grep '^# \(calibration\|check\|alpha\)' "$tmp/calib"
  sed -n '/^name:/,$p' "$tmp/calib" | grep -v '^#' | sed "s/^layout: .*/layout: $P/" > "$tmp/topo.yaml"
fi
echo "# topology (--topo):"; sed 's/^/#   /' "$tmp/topo.yaml"

for coll in $COLLS; do
  : > "$tmp/meas.$coll"
  for _ in $(seq "$REPS"); do
    for a in $ALGOS; do
      # out of place only: field 6 is its time (size count type redop root time algbw busbw #wrong ...)
      perf "$P" "$coll" -a "$a" -c 0 -b "$MIN" -e "$MAX" -f 4 -w 2 -n "$ITERS" --place out 2>/dev/null |
        awk -v a="$a" '/^ *[0-9]/ && NF >= 14 {print $1, a, $6}' >> "$tmp/meas.$coll" || true
    done
  done
  # predictions for every (size, algorithm) measured
  awk '{print $1, $2}' "$tmp/meas.$coll" | sort -u | while read -r b a; do
    t=$("$B/bin/stitchc" sim "$SRC/algos.dsl" -a "$a" -c "$coll" --topo "$tmp/topo.yaml" -b "$b" --format json \
        2>/dev/null | sed -n 's/.*"time_us": \([0-9.e+-]*\),.*"algbw_GBps".*/\1/p' | head -1)
    echo "$b $a ${t:-nan}"
  done > "$tmp/pred.$coll"
  "$B/bin/stitch-info" --selection --topo "$tmp/topo.yaml" -n "$P" --policy model |
    sed -n "/^  $coll /,/^  [a-z]/p" | sed '1!{/^  [a-z]/d}' |
    sed -n 's/.*\[\([^,]*\), \([^]]*\)\] *\([a-z_0-9]*\).*/\1|\2|\3/p' > "$tmp/table.$coll"
  awk -v P="$P" -v C="$coll" -v M="$MODE" '
    function bytes(s) { return s == "max" ? 1e30 : s ~ /KiB/ ? s * 1024 : s ~ /MiB/ ? s * 1048576 : s ~ /GiB/ ? s * 1073741824 : s + 0 }
    function median(v, n,   i, j, x) { for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
                                       return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    FILENAME ~ /table/ { split($0, f, "|"); lo[++nr] = f[1] == "0" ? 0 : bytes(f[1]); hi[nr] = bytes(f[2]); al[nr] = f[3]; next }
    FILENAME ~ /pred/ { pr[$1, $2] = $3; next }
    { k = $1 SUBSEP $2; cnt[k]++; v[k, cnt[k]] = $3; if (!($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 }
      if (!($2 in isalg)) { isalg[$2] = 1; algs[++na] = $2 } }
    END {
      printf "# %s, %d ranks (%s): time in us, measured = median of the rounds, predicted = stitchc sim on the topology above\n", C, P, M
      printf "%10s %-14s %12s %12s %8s\n", "bytes", "algorithm", "measured", "predicted", "pred/meas"
      for (s = 1; s <= ns; s++) for (i = 1; i <= na; i++) {
        b = sizes[s]; a = algs[i]; k = b SUBSEP a; if (!(k in cnt)) continue
        for (j = 1; j <= cnt[k]; j++) w[j] = v[k, j]
        t[b, a] = median(w, cnt[k]); p = pr[b, a]
        printf "%10d %-14s %12.1f %12s %8s\n", b, a, t[b, a], p == "nan" ? "-" : sprintf("%.1f", p), p == "nan" || t[b, a] <= 0 ? "-" : sprintf("%.2f", p / t[b, a])
        if (p != "nan" && t[b, a] > 0) { e = p / t[b, a] - 1; err[++ne] = e < 0 ? -e : e }
      }
      printf "# %s, %d ranks (%s): model pick (stitch-info --selection, bytes per rank) against the measured fastest\n", C, P, M
      printf "%10s %14s %12s %14s %12s %8s\n", "bytes", "fastest", "measured", "pick", "measured", "loss"
      for (s = 1; s <= ns; s++) {
        b = sizes[s]; best = ""; for (i = 1; i <= na; i++) { a = algs[i]; if ((b, a) in t && (best == "" || t[b, a] < t[b, best])) best = a }
        pb = C == "all_reduce" ? b : b / P; pick = "?"
        for (r = 1; r <= nr; r++) if (pb >= lo[r] && pb <= hi[r]) pick = al[r]
        loss = ((b, pick) in t) ? t[b, pick] / t[b, best] - 1 : 0
        printf "%10d %14s %12.1f %14s %12s %7.0f%%\n", b, best, t[b, best], pick, ((b, pick) in t) ? sprintf("%.1f", t[b, pick]) : "-", 100 * loss
        hits += pick == best; near += loss <= 0.1; n++; if (pick != best && loss > worst) worst = loss
      }
      printf "# summary %s p=%d %s: model picked the measured fastest at %d of %d sizes (%.0f%%), within 10%% of it at %d; median |pred/meas - 1| %.0f%% over %d points; worst loss %.0f%%\n",
        C, P, M, hits, n, n ? 100 * hits / n : 0, near, ne ? 100 * median(err, ne) : 0, ne, 100 * worst
    }' "$tmp/table.$coll" "$tmp/pred.$coll" "$tmp/meas.$coll"
done
echo "# load after: $(uptime)"
