# pair.sh - sourced by the netns tests (run.sh, ahc.sh): two network namespaces joined by a veth pair, each end
# addressed and up, removed with everything running in them by a trap on every exit path.
#
#   netns_pair TAG OCTET [TOOL...]   namespaces stitch-TAGa-$$ / stitch-TAGb-$$ ($nsA, $nsB), veths $vA / $vB,
#                                    addresses 10.250.OCTET.1 / .2 ($ipA, $ipB), a scratch folder $work
#
# skip: exit 77 (ctest SKIP_RETURN_CODE) with the reason when not root, a tool is missing or namespaces cannot be
# made here (an unprivileged container); STITCH_REQUIRE_NETNS=1 (set by .ci/run) makes that a failure instead, so
# CI cannot pass without running these.

skip() {
    if [ "${STITCH_REQUIRE_NETNS:-0}" != 0 ]; then echo "FAIL (STITCH_REQUIRE_NETNS=1, would skip): $*"; exit 1; fi
    echo "SKIP: $*"; exit 77
}

netns_cleanup() {
    ip netns pids "$nsA" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns pids "$nsB" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$nsA" 2>/dev/null
    ip netns del "$nsB" 2>/dev/null
    rm -rf "$work"
}

netns_pair() {
    local tag=$1 octet=$2 c side
    shift 2
    [ "$(id -u)" = 0 ] || skip "network namespaces need root (uid $(id -u))"
    for c in ip tc timeout "$@"; do
        command -v "$c" >/dev/null 2>&1 || skip "'$c' not found (Debian: apt-get install iproute2; make deps installs it)"
    done
    # interface names stay within 15 characters
    nsA=stitch-${tag}a-$$ nsB=stitch-${tag}b-$$ vA=st${tag:0:2}a$$ vB=st${tag:0:2}b$$
    ipA=10.250.$octet.1 ipB=10.250.$octet.2
    work=$(mktemp -d) || exit 1
    trap netns_cleanup EXIT
    trap 'exit 130' INT TERM HUP
    ip netns add "$nsA" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
    ip netns add "$nsB" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
    # The pair is born inside the namespaces: it never exists in the host's.
    ip -n "$nsA" link add "$vA" type veth peer name "$vB" netns "$nsB" 2>"$work/err" ||
        skip "cannot create a veth pair between namespaces: $(cat "$work/err")"
    for side in "$nsA $vA $ipA" "$nsB $vB $ipB"; do
        set -- $side
        ip -n "$1" link set lo up && ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up ||
            { echo "FAIL: configuring $2 in $1"; exit 1; }
    done
}
