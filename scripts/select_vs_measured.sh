#!/usr/bin/env bash
# select_vs_measured.sh [BUILD_DIR] [P] [MAXBYTES] - policy model's all_reduce choice against the measured best.
#
# Runs `stitch-perf all_reduce -a ALGO -n P -c 0` (threads) for every all_reduce algorithm of the built-in
# catalogue that runs on P ranks in one group, sizes 256 B .. MAXBYTES (factor 4), prints the measured time of each,
# the fastest, and what `stitch-info --selection -n P` (policy model, this environment's STITCH_TOPO figures or the
# built-in defaults) picks; then how often the pick is the fastest and how much slower it is when it is not.
# A benchmark (docs/performance.md, "Selection against measurement"), not a test: its figures move with the load.
set -euo pipefail
B=${1:-build}; P=${2:-4}; MAX=${3:-4194304}
ALGOS=${ALGOS:-"ring mesh mesh_oneshot mesh_det rhd nhr nhr_oneshot nb"}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for a in $ALGOS; do
  "$B/bin/stitch-perf" all_reduce -a "$a" -n "$P" -c 0 -b 256 -e "$MAX" -f 4 --iters 50 |
    awk -v a="$a" '/^ *[0-9]/ && NF >= 9 {print $1, a, $5}' >> "$tmp/meas"
done
"$B/bin/stitch-info" --selection -n "$P" --policy model |
  sed -n '/^  all_reduce/,/^  reduce_scatter/p' | grep -v '^  reduce_scatter' |
  sed -n 's/.*\[\([^,]*\), \([^]]*\)\] *\([a-z_0-9]*\).*/\1|\2|\3/p' > "$tmp/table"
awk -v P="$P" '
  function bytes(s) { return s == "max" ? 1e30 : s ~ /KiB/ ? s * 1024 : s ~ /MiB/ ? s * 1048576 : s ~ /GiB/ ? s * 1073741824 : s + 0 }
  FNR == NR { split($0, f, "|"); lo[NR] = f[1]; hi[NR] = f[2]; al[NR] = f[3]; nr = NR; next }
  { t[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 } ; names[$2] = 1 }
  END {
    printf "# all_reduce, %d ranks (threads), time in us; pick = policy model (stitch-info --selection)\n", P
    printf "%10s", "bytes"; for (a in names) { order[++na] = a } ; for (i = 1; i <= na; i++) printf " %12s", order[i]
    printf " %14s %14s %8s\n", "fastest", "pick", "loss"
    for (s = 1; s <= ns; s++) {
      b = sizes[s]; best = ""; for (i = 1; i <= na; i++) { a = order[i]; if (best == "" || t[b, a] < t[b, best]) best = a }
      pick = ""; for (r = 1; r <= nr; r++) { l = lo[r] == "0" ? 0 : bytes(lo[r]); if (b >= l && b <= bytes(hi[r])) pick = al[r] }
      printf "%10d", b; for (i = 1; i <= na; i++) printf " %12.1f", t[b, order[i]]
      loss = (pick in names) ? t[b, pick] / t[b, best] - 1 : 0
      printf " %14s %14s %7.0f%%\n", best, pick, 100 * loss
      hits += pick == best; n++; if (pick != best) { miss++; sum += loss; if (loss > worst) worst = loss }
    }
    printf "# model picked the measured fastest at %d of %d sizes; elsewhere %.0f%% slower on average, %.0f%% at worst\n",
      hits, n, miss ? 100 * sum / miss : 0, 100 * worst
  }' "$tmp/table" "$tmp/meas"
