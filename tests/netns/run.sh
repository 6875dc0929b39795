#!/usr/bin/env bash
# run.sh - process mode across two "hosts": two network namespaces joined by a shaped veth pair.
#
#   tests/netns/run.sh STITCH-PERF [ifname|auto] [stitch-perf args...]
#
# NETNS_PLACEMENT says which namespace each rank runs in, one letter per rank: the default AABBB puts ranks 0 and
# 1 in namespace A, 2, 3 and 4 in B; ABABAB interleaves six ranks (STITCH_RANK/SIZE/ROOT, the root at the address
# of rank 0's namespace). A network namespace counts as a host (bootstrap.c's host id includes /proc/self/ns/net),
# so ranks of one namespace talk over shm and ranks of different ones over tcp across the veth; STITCH_DEBUG's
# summary line of every rank is checked for exactly that split, and its groups line for one group per namespace
# (placement.c: ordered by lowest rank, members in rank order, e.g. {0,2,4} {1,3,5}). With `ifname` every rank
# names its veth in
# STITCH_SOCKET_IFNAME; with `auto` the bootstrap must find the veth address itself (each namespace has only lo
# and the veth). The link is shaped with netem (1 ms delay, 1 Gbit/s), else tbf, else left as it is (noted).
#
# The addresses (10.250.77.0/24) exist only inside the two namespaces this script creates: no interface,
# route or packet of the host's own namespace is touched. Both namespaces (and with them the veth pair) are
# deleted by a trap on every exit path. Passes only when every rank exits 0 and ends with "0 failed".
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason when not root, ip/tc are missing, or namespaces cannot be
# created here (e.g. inside an unprivileged container); with STITCH_REQUIRE_NETNS=1 those are failures instead.
set -uo pipefail

perf=${1:?usage: run.sh STITCH-PERF [ifname|auto] [stitch-perf args...]}
mode=${2:-ifname}
shift $(($# >= 2 ? 2 : 1))
[ $# -gt 0 ] || set -- all_reduce -a ring -d fp32 -o sum -b 8 -e 1M -f 4 -c 1 -w 1 --iters 3 --timeout 30
args=("$@")
limit=${NETNS_TIMEOUT:-90}
placement=${NETNS_PLACEMENT:-AABBB}
[[ $placement =~ ^[AB]{1,16}$ ]] || { echo "FAIL: NETNS_PLACEMENT='$placement': expected 1 to 16 letters A or B"; exit 1; }
n=${#placement}

. "$(dirname "$0")/pair.sh"
netns_pair "" 77
port=29500
for side in "A $nsA $vA $ipA" "B $nsB $vB $ipB"; do
    set -- $side
    if ip netns exec "$2" tc qdisc add dev "$3" root netem delay 1ms rate 1gbit 2>"$work/err"; then
        shaped="netem delay 1ms rate 1gbit"
    elif ip netns exec "$2" tc qdisc add dev "$3" root tbf rate 1gbit burst 256kb latency 10ms 2>>"$work/err"; then
        shaped="tbf rate 1gbit (netem unavailable: $(head -1 "$work/err"))"
    else
        shaped="unshaped (neither netem nor tbf: $(head -1 "$work/err"))"
    fi
done
ranks_in() { local r out=""; for ((r = 0; r < n; r++)); do [ "${placement:r:1}" = "$1" ] && out+="${out:+,}$r"; done; echo "$out"; }
echo "# namespaces $nsA ($vA $ipA, ranks $(ranks_in A)) and $nsB ($vB $ipB, ranks $(ranks_in B)); link: $shaped; mode: $mode"
if command -v ping >/dev/null 2>&1 && ! ip netns exec "$nsA" ping -c 1 -W 2 "$ipB" >/dev/null 2>&1; then
    echo "# note: ping $ipB from $nsA failed"
fi

ns_of() { [ "${placement:$1:1}" = A ] && echo "$nsA" || echo "$nsB"; }
if_of() { [ "${placement:$1:1}" = A ] && echo "$vA" || echo "$vB"; }
root=$([ "${placement:0:1}" = A ] && echo $ipA || echo $ipB):$port
# The groups every rank must log: rank 0's namespace first (lowest rank), then the other's if it has ranks.
first=${placement:0:1} other=$([ "${placement:0:1}" = A ] && echo B || echo A)
if [ -n "$(ranks_in $other)" ]; then
    want_groups="2 groups by host: {$(ranks_in $first)} {$(ranks_in $other)}"
else
    want_groups="1 group by host (all ranks)"
fi
echo "$ STITCH_RANK=0..$((n - 1)) STITCH_SIZE=$n STITCH_ROOT=$root STITCH_SECRET=...$([ "$mode" = ifname ] && echo " STITCH_SOCKET_IFNAME=<veth>") timeout $limit stitch-perf ${args[*]}"
# A job across hosts runs with a secret (bootstrap.c: without one its key would be the public job id).
secret=netns-$$-$RANDOM$RANDOM
pids=()
for ((r = 0; r < n; r++)); do
    envs=(STITCH_RANK=$r STITCH_SIZE=$n STITCH_ROOT=$root STITCH_DEBUG=1 STITCH_SECRET=$secret)
    [ "$mode" = ifname ] && envs+=(STITCH_SOCKET_IFNAME=$(if_of $r))
    ip netns exec "$(ns_of $r)" env "${envs[@]}" timeout -k 5 "$limit" "$perf" "${args[@]}" >"$work/out.$r" 2>"$work/err.$r" &
    pids+=($!)
done

fail=0
for ((r = 0; r < n; r++)); do
    wait "${pids[$r]}"; s=$?
    mine=$(ranks_in "${placement:r:1}" | tr ',' ' ' | wc -w)
    want_shm=$((mine - 1)); want_tcp=$((n - mine))
    summary=$(grep -m1 "rank $r of $n on" "$work/err.$r")
    verdict=$(grep -E '^(# rank [0-9]+: )?[0-9]+ passed, [0-9]+ failed$' "$work/out.$r" | tail -1)
    echo "# rank $r ($(ns_of $r)): exit $s; ${summary#stitch: }; ${verdict:-no closing line}"
    if [ "$r" = 0 ]; then sed 's/^/#   /' "$work/out.0" | grep -E '^#   (# root| +[0-9])'; fi
    if [ $s -eq 124 ]; then echo "FAIL: rank $r was killed at the $limit s timeout"; fail=1
    elif [ $s -ne 0 ]; then echo "FAIL: rank $r exited $s"; fail=1; fi
    [[ $verdict =~ (^|[^0-9])[1-9][0-9]*\ passed,\ 0\ failed$ ]] ||
        { echo "FAIL: rank $r did not end with 'N passed, 0 failed' (N > 0)"; fail=1; }
    [[ $summary == *": $want_shm peers over shm, $want_tcp over tcp"* ]] ||
        { echo "FAIL: rank $r should have $want_shm shm and $want_tcp tcp peers"; fail=1; }
    grep -q "rank $r of $n: bootstrap from stitch" "$work/err.$r" ||
        { echo "FAIL: rank $r did not bootstrap from STITCH_RANK/SIZE/ROOT"; fail=1; }
    grep -qF "rank $r of $n: $want_groups" "$work/err.$r" ||
        { echo "FAIL: rank $r should log '$want_groups'"; fail=1; }
    if [ $fail -ne 0 ]; then sed "s/^/#   rank $r stderr: /" "$work/err.$r" | grep -v "bootstrap from" | head -20; fi
done
[ $fail -eq 0 ] && echo "PASS: $n ranks in 2 namespaces ($placement; $want_groups), every one ended with '0 failed'"
exit $fail
