#!/usr/bin/env bash
# ahc.sh - issue 10 item 10, the seed's claim measured: AHC all_reduce against flat ring and the hierarchical ring
# on two unequal "hosts" (2 + 3 ranks) joined by a tbf-shaped veth slower than shared memory.
#
#   tests/netns/ahc.sh STITCH-PERF
#
# Two network namespaces stand for two hosts (bootstrap.c's host id includes /proc/self/ns/net, so placement.c
# makes one group per namespace): ranks 0 and 1 in namespace A, 2, 3 and 4 in B, shm inside a namespace and tcp
# across the veth pair, each end of which is shaped with `tbf rate $NETNS_RATE` (both directions: each side's
# egress). For context the same algorithms run with all 5 ranks in namespace A and STITCH_GROUPS=2,3 (the same
# groups, every byte over shm). Every run is `stitch-perf all_reduce -a ALGO -d fp32 -o sum -c 1` at the sizes
# $NETNS_SIZES, the algorithms interleaved, $NETNS_REPS rounds; the table gives per (link, size, algorithm) the
# median of the rounds' times (stitch-perf's time: the slowest rank's mean of --iters calls), its busbw
# (nccl-tests' 2(p-1)/p factor), the busbw over flat ring's, and with python3 and stitchc next to STITCH-PERF the
# bytes each algorithm sends over the link per direction for a vector of n bytes (crosslink.py on the schedule).
#
# The "hierarchical ring" on 2 + 3 is nhr, HCCL's nonuniform hierarchical ring (spec 5): `hier` runs AHC itself on
# unequal groups (spec 1.3's decomposition needs a same-index partner in every group) and `pipeline` refuses them
# (docs/performance.md, "AHC on a converged link", says more).
#
# Passes when every run of every rank exits 0 with "N passed, 0 failed", every rank has the right shm/tcp split and
# groups {0,1} {2,3,4}, and the table has a row for every size and algorithm. The busbw ratio is reported, never
# asserted: on a VM of 2 shared cores it is noise-bound. NETNS_TABLE=FILE also writes the table there.
# Knobs (environment): NETNS_RATE (default 1gbit), NETNS_BURST (1mb), NETNS_LATENCY (20ms), NETNS_ALGOS
# ("ring nhr ahc"), NETNS_SIZES ("-b 16M -e 64M -f 4"), NETNS_ITERS (3), NETNS_REPS (3), NETNS_TIMEOUT (seconds
# per run, 120), NETNS_SHM (1: also the shm context runs; 0: not).
#
# The addresses (10.250.78.0/24) exist only inside the two namespaces this script creates; nothing of the host's
# own namespace is touched (the sysctl below is per namespace). A trap deletes both namespaces on every exit path.
# Exit 77 (ctest SKIP_RETURN_CODE) when not root, ip/tc/tbf are missing, or namespaces cannot be created here;
# with STITCH_REQUIRE_NETNS=1 those are failures instead.
set -uo pipefail

perf=${1:?usage: ahc.sh STITCH-PERF}
rate=${NETNS_RATE:-1gbit} burst=${NETNS_BURST:-1mb} latency=${NETNS_LATENCY:-20ms}
read -ra algos <<<"${NETNS_ALGOS:-ring nhr ahc}"
read -ra sizes <<<"${NETNS_SIZES:--b 16M -e 64M -f 4}"
iters=${NETNS_ITERS:-3} reps=${NETNS_REPS:-3} limit=${NETNS_TIMEOUT:-120} shm=${NETNS_SHM:-1}
[[ $reps =~ ^[1-9]$ && $iters =~ ^[1-9][0-9]?$ && $limit =~ ^[1-9][0-9]{0,3}$ ]] ||
    { echo "FAIL: NETNS_REPS 1..9, NETNS_ITERS 1..99, NETNS_TIMEOUT 1..9999 (got $reps, $iters, $limit)"; exit 1; }
n=5 placement=AABBB

. "$(dirname "$0")/pair.sh"
netns_pair ahc 78 awk
port=29510
for side in "$nsA $vA $ipA" "$nsB $vB $ipB"; do
    set -- $side
    # The claim is about a shaped link: without tbf there is nothing to measure.
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency "$latency" 2>"$work/err" ||
        skip "cannot shape $2 with tbf: $(head -1 "$work/err")"
    # Per namespace: a connection idle between calls would go back to slow start (docs/performance.md).
    ip netns exec "$1" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0 2>/dev/null
done
shaped="tbf rate $rate burst $burst latency $latency, each direction"
echo "# namespaces $nsA ($vA $ipA, ranks 0,1) and $nsB ($vB $ipB, ranks 2,3,4); link: $shaped"

# One job: 5 ranks of stitch-perf, rank r in namespace ${1:r:1}; $2 extra environment; $3 the algorithm; $4 a tag.
# Rank 0's table rows go to $work/rows as "TAG ALGO SIZE TIME_US BUSBW". Returns 1 on any failed check.
secret=ahc-$$-$RANDOM$RANDOM
job() {
    local pl=$1 extra=$2 algo=$3 tag=$4 r s fail=0 pids=() ns root=$ipA:$port mine want verdict
    local args=(all_reduce -a "$algo" -d fp32 -o sum "${sizes[@]}" -c 1 -w 1 -n "$iters" --timeout "$limit"
                --place out)
    for ((r = 0; r < n; r++)); do
        [ "${pl:r:1}" = A ] && ns=$nsA || ns=$nsB
        ip netns exec "$ns" env STITCH_RANK=$r STITCH_SIZE=$n STITCH_ROOT=$root STITCH_DEBUG=1 \
            STITCH_SECRET=$secret $extra nice -n -15 timeout -k 5 "$limit" "$perf" "${args[@]}" \
            >"$work/out.$r" 2>"$work/err.$r" &
        pids+=($!)
    done
    for ((r = 0; r < n; r++)); do
        wait "${pids[$r]}"; s=$?
        mine=${pl//[^${pl:r:1}]/}; mine=${#mine} # ranks in my namespace
        want="$((mine - 1)) peers over shm, $((n - mine)) over tcp"
        verdict=$(grep -E '^(# rank [0-9]+: )?[0-9]+ passed, [0-9]+ failed$' "$work/out.$r" | tail -1)
        if [ $s -ne 0 ]; then echo "FAIL: $tag $algo: rank $r exited $s$([ $s = 124 ] && echo " (the $limit s timeout)")"; fail=1; fi
        [[ $verdict =~ (^|[^0-9])[1-9][0-9]*\ passed,\ 0\ failed$ ]] ||
            { echo "FAIL: $tag $algo: rank $r did not end with 'N passed, 0 failed' (${verdict:-no closing line})"; fail=1; }
        grep -q "rank $r of $n on.*: $want" "$work/err.$r" ||
            { echo "FAIL: $tag $algo: rank $r should have $want"; fail=1; }
        grep -qE "rank $r of $n: 2 groups .*: \{0,1\} \{2,3,4\}$" "$work/err.$r" ||
            { echo "FAIL: $tag $algo: rank $r should log the groups {0,1} {2,3,4}"; fail=1; }
        [ $fail -ne 0 ] && { sed "s/^/#   rank $r: /" "$work/err.$r" | grep -v "bootstrap from" | head -8; return 1; }
    done
    # the out-of-place columns: time $6, busbw $8 (size count type redop root time algbw busbw #wrong ...)
    awk -v t="$tag" -v a="$algo" '/^ +[0-9]+ +[0-9]+ +fp32/ { print t, a, $1, $6, $8 }' "$work/out.0" >>"$work/rows"
}

links=(veth)
[ "$shm" = 1 ] && links+=(shm)
echo "$ ranks 0..4 in ${placement}: STITCH_RANK/SIZE/ROOT/SECRET nice -n -15 stitch-perf all_reduce -a ALGO -d fp32 -o sum ${sizes[*]} -c 1 -w 1 -n $iters --place out"
echo "# algorithms: ${algos[*]}; $reps rounds, interleaved; shm context: all ranks in $nsA with STITCH_GROUPS=2,3"
: >"$work/rows"
fail=0
t0=$SECONDS
for ((k = 1; k <= reps; k++)); do
    for link in "${links[@]}"; do
        for algo in "${algos[@]}"; do
            if [ "$link" = veth ]; then job $placement "" "$algo" veth || fail=1
            else job AAAAA STITCH_GROUPS=2,3 "$algo" shm || fail=1; fi
        done
    done
done
[ $fail -eq 0 ] || exit 1

# Bytes on the link per direction, in n, from the schedules (optional: needs python3 and stitchc).
here=$(cd "$(dirname "$0")" && pwd)
stitchc=$(dirname "$perf")/stitchc
for algo in "${algos[@]}"; do
    b=-
    if command -v python3 >/dev/null 2>&1 && [ -x "$stitchc" ]; then
        b=$("$stitchc" show "$here/../../algos.dsl" -a "$algo" -c all_reduce --layout 2,3 --format json 2>/dev/null |
            python3 "$here/crosslink.py" 2>/dev/null | sed -n 's/.*most per direction=\([0-9.]*\)n.*/\1/p')
    fi
    echo "$algo ${b:--}"
done >"$work/bytes"

# Medians: per (link, size, algorithm), the middle run by time (the lower middle for an even count).
table=$(awk -v reps="$reps" -v rate="$rate" '
    FNR == NR { bytes[$1] = $2; next }
    { key = $1 " " $3 " " $2; n[key]++; t[key, n[key]] = $4; bw[key, n[key]] = $5
      if (!(key in seen)) { seen[key] = 1; order[++keys] = key } }
    END {
        printf "# %-5s %10s  %-10s %12s %12s %8s %13s  %s\n", "link", "size", "algorithm", "time(us)", "busbw(GB/s)",
               "x ring", "link bytes", "busbw of each round"
        for (i = 1; i <= keys; i++) {
            key = order[i]; m = n[key]
            for (a = 1; a <= m; a++) idx[a] = a
            for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (t[key, idx[b]] < t[key, idx[a]]) { x = idx[a]; idx[a] = idx[b]; idx[b] = x }
            mid = idx[int((m + 1) / 2)]; split(key, f, " ")
            med_t[key] = t[key, mid]; med_bw[key] = bw[key, mid]
            all = ""; for (a = 1; a <= m; a++) all = all (a > 1 ? " " : "") bw[key, a]
            runs[key] = all
        }
        for (i = 1; i <= keys; i++) {
            key = order[i]; split(key, f, " "); ring = f[1] " " f[2] " ring"
            x = (ring in med_bw && med_bw[ring] > 0) ? sprintf("%.2f", med_bw[key] / med_bw[ring]) : "-"
            lb = (f[3] in bytes && bytes[f[3]] != "-") ? bytes[f[3]] "n" : "-"
            printf "  %-5s %10s  %-10s %12.1f %12.3f %8s %13s  %s\n", f[1], f[2], f[3], med_t[key], med_bw[key], x, lb, runs[key]
        }
    }' "$work/bytes" "$work/rows")
echo "$table"
[ -n "${NETNS_TABLE:-}" ] && echo "$table" >"$NETNS_TABLE"
echo "# $((SECONDS - t0)) s; link bytes: what one direction of the link carries for an all_reduce of n bytes"
for size in $(awk '$1 == "veth" { print $3 }' "$work/rows" | sort -un); do
    for algo in "${algos[@]}"; do
        grep -q "^veth $algo $size " "$work/rows" || { echo "FAIL: no veth row for $algo at $size bytes"; fail=1; }
    done
done
[ -s "$work/rows" ] || { echo "FAIL: no rows measured"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: ${#algos[@]} algorithms x $reps rounds on 2 + 3 ranks across $shaped, every run ended with '0 failed'"
exit $fail
