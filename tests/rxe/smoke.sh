#!/bin/sh
# smoke.sh - test rxe.smoke, run inside the rxe guest (tests/rxe/run.sh): libibverbs, its rxe provider and the
# kernel's rdma_rxe work together: ibv_devinfo opens rxe0, port 1 is PORT_ACTIVE on an Ethernet link (RoCE), and
# GID index 1 is the IPv4-mapped address of eth0 (::ffff:10.0.2.15, what the transport's RoCE v2 GID selection
# should find). With STITCH-INFO given (smoke.sh [STITCH-INFO]), stitch's own verbs table (runtime/verbs_load.c,
# dlopen of libibverbs) must see the same: rxe0, port 1 ACTIVE on Ethernet, GID 1 ::ffff:10.0.2.15. Exits 1 naming
# what is wrong.
fail() { echo "FAIL: $*"; exit 1; }
out=$(ibv_devinfo -v -d rxe0 2>&1) || { echo "$out"; fail "ibv_devinfo -d rxe0 exited $?"; }
echo "$out" | grep -E 'hca_id|state:|link_layer|active_mtu|GID\['
echo "$out" | grep -q 'state:[[:space:]]*PORT_ACTIVE' || fail "rxe0 port 1 is not PORT_ACTIVE"
echo "$out" | grep -q 'link_layer:[[:space:]]*Ethernet' || fail "rxe0 port 1's link layer is not Ethernet"
echo "$out" | grep -q 'GID\[ *1\]:.*::ffff:10\.0\.2\.15' || fail "GID[1] is not ::ffff:10.0.2.15 (eth0's address)"
echo "smoke: rxe0 ACTIVE, RoCE, GID[1] ::ffff:10.0.2.15"
[ $# -ge 1 ] || exit 0
info=$("$1" 2>&1) || { echo "$info"; fail "$1 exited $?"; }
verbs=$(echo "$info" | sed -n '/^verbs/,$p')
echo "$verbs"
echo "$verbs" | grep -q '^verbs (libibverbs): 1 device' || fail "stitch-info does not list one verbs device through libibverbs"
echo "$verbs" | grep -q '^  rxe0:' || fail "stitch-info does not list rxe0"
echo "$verbs" | grep -q 'port 1: ACTIVE, link layer Ethernet' || fail "stitch-info does not show rxe0 port 1 ACTIVE on Ethernet"
echo "$verbs" | grep -q 'GID 1: ::ffff:10\.0\.2\.15' || fail "stitch-info does not show GID 1 ::ffff:10.0.2.15"
echo "smoke: stitch-info sees rxe0 through stitch's verbs table"
