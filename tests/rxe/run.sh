#!/usr/bin/env bash
# run.sh - run a command on real kernel verbs: a QEMU guest booting Debian's stock 6.1 kernel with rdma_rxe
# (soft-RoCE) on a virtio NIC, the host's root read-only over virtio-9p, rxe0 created on eth0, the command run
# chrooted into the host's tree (so binaries built here run unchanged). The guest's /tmp, /dev/shm and /run are the
# host's under a writable tmpfs of its own (overlays, init.sh), so a checkout anywhere, /tmp included, is seen as it
# is on the host; no path travels on the kernel command line, so spaces in paths are fine (test rxe.paths). Tier 2
# of issue 11; the recipe is ../shared/research/rdma-testing.md section 4.
#
#   run.sh CACHE_DIR [--] COMMAND [ARG...]   boot, run COMMAND in the guest (in this directory, with this
#                                             shell's STITCH_*, HCCL_*, ASAN_/UBSAN_/LSAN_OPTIONS), print its
#                                             output, exit with its status
#   run.sh --prepare CACHE_DIR               only install, fetch the kernel and build the initramfs
#
# CACHE_DIR (the build tree's rxe/, from tests/rxe.cmake) holds the unpacked kernel, the initramfs and one folder
# per run (runs/run.XXXXXX: cmd.sh, out.log, rc, console.log; removed after a passing run, kept after a failing
# one). The initramfs (busybox + the modules, tests/rxe/init.sh as /init) is rebuilt only when missing or when
# init.sh, this script or the kernel changed (a stamp holds their hash); a lock serialises concurrent builders.
#
# What it needs, from Debian: RXE_PKGS below. As root it installs what is missing (apt-get); otherwise it skips
# (exit 77, ctest's SKIP_RETURN_CODE) naming the missing packages. STITCH_REQUIRE_RXE=1 (.ci/run) makes every skip
# a failure. The kernel is pinned in one place, RXE_KERNEL: fetched with `apt-get download`, unpacked with
# `dpkg-deb -x`, never installed; when the archive no longer has it the run fails saying to change RXE_KERNEL.
#
# The guest runs under TCG, QEMU's software emulation (these VMs' nested /dev/kvm, where present, does not boot
# a guest: QEMU aborts on an MSR with -cpu host and hangs without it). Timing in the guest means nothing: TCG is
# many times slower than the host and its clock is not the host's; rxe here is an oracle for verbs semantics (states, access
# checks, error completions, flushes), never for performance. The wall time printed at the end is the cost of the
# run, for CI budgeting only.
#
# Tunables: RXE_TIMEOUT (seconds for boot + command, default 600; QEMU is killed after it and the run fails),
# RXE_SMP (guest CPUs, default 2), RXE_MEM (MiB, default 2048), RXE_KEEP=1 (keep the run folder even when the
# run passed).
set -uo pipefail

# The one pin of the guest kernel: the newest ABI in bookworm-security when this was written (6.1.192-3), the one
# research/rdma-testing.md's Appendix A was measured on (6.1.0-47 and -50 gave the same conformance table). Debian
# keeps only a few ABI versions (`apt-get update; apt-cache search linux-image-6.1.0-`); when this one is gone,
# change it here (any 6.1.0-NN-amd64 works). The environment may override it for one run (to compare kernels).
RXE_KERNEL=${RXE_KERNEL:-6.1.0-57-amd64}
# qemu-system-x86 (the emulator), busybox-static (the initramfs's userland), libibverbs1 + ibverbs-providers
# (libibverbs and its rxe provider, used in the guest from the host's tree), ibverbs-utils (ibv_devinfo, the smoke
# test), iproute2 (the `rdma` tool that creates rxe0), util-linux (flock) and coreutils (timeout).
RXE_PKGS="qemu-system-x86 busybox-static libibverbs1 ibverbs-providers ibverbs-utils iproute2 util-linux coreutils"
# The modules the guest loads (their dependencies are added from each module's modinfo). crc32_generic is
# nobody's declared dependency but rdma_rxe needs a "crc32" from the crypto API and there is no modprobe to
# load it on demand. overlay: the guest's /tmp, /dev/shm and /run (init.sh).
RXE_MODULES="virtio_pci virtio_net 9pnet_virtio 9p overlay crc32_generic rdma_rxe"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
skip() {
    if [ "${STITCH_REQUIRE_RXE:-0}" != 0 ]; then echo "FAIL (STITCH_REQUIRE_RXE=1, would skip): $*"; exit 1; fi
    echo "SKIP: $*"; exit 77
}
die() { echo "rxe: error: $*" >&2; exit 1; }

prepare_only=0
if [ "${1:-}" = --prepare ]; then prepare_only=1; shift; fi
[ $# -ge 1 ] || die "usage: run.sh [--prepare] CACHE_DIR [--] COMMAND [ARG...]"
cache=$1; shift
[ "${1:-}" = -- ] && shift
[ $prepare_only = 1 ] || [ $# -ge 1 ] || die "no command to run in the guest"
mkdir -p "$cache" || die "cannot create $cache"
cache=$(cd "$cache" && pwd)

# --- packages -------------------------------------------------------------------------------------------------
ensure_packages() {
    local p missing=""
    for p in $RXE_PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    [ "$(id -u)" = 0 ] || skip "missing Debian packages:$missing (as root this script installs them: apt-get install$missing)"
    command -v apt-get >/dev/null 2>&1 || skip "missing packages:$missing and no apt-get here"
    echo "rxe: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -q --no-install-recommends $missing || { apt-get update -q && apt-get install -y -q --no-install-recommends $missing; }; } \
        > "$cache/apt.log" 2>&1 || { tail -20 "$cache/apt.log"; die "apt-get install$missing failed (log: $cache/apt.log)"; }
}

# --- the kernel: downloaded and unpacked once ---------------------------------------------------------------
ensure_kernel() {
    kdir=$cache/linux-$RXE_KERNEL
    [ -f "$kdir/boot/vmlinuz-$RXE_KERNEL" ] && return 0
    local pkg=linux-image-$RXE_KERNEL
    if ! apt-cache show "$pkg" >/dev/null 2>&1; then
        [ "$(id -u)" = 0 ] && apt-get update -q > "$cache/apt.log" 2>&1
        apt-cache show "$pkg" >/dev/null 2>&1 || die "the Debian archive no longer has $pkg: change RXE_KERNEL in $here/run.sh to one that \`apt-cache search linux-image-6.1.0-\` lists ($(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null | cut -d' ' -f1 | tr '\n' ' '))"
    fi
    local dl=$cache/deb
    rm -rf "$dl" "$kdir.tmp" && mkdir -p "$dl" || die "cannot create $dl"
    # apt-get download writes into the current directory; as root apt warns that _apt cannot write there (harmless)
    (cd "$dl" && apt-get download "$pkg" > "$cache/download.log" 2>&1) ||
        { cat "$cache/download.log"; die "apt-get download $pkg failed (see above; RXE_KERNEL in $here/run.sh pins it)"; }
    dpkg-deb -x "$dl"/"$pkg"_*.deb "$kdir.tmp" || die "dpkg-deb -x of $pkg failed"
    rm -rf "$dl"
    mv "$kdir.tmp" "$kdir" || die "cannot move the unpacked kernel into $kdir"
}

# --- the initramfs --------------------------------------------------------------------------------------------
# Each module's dependencies come first, read from its .modinfo's depends= (no depmod or modinfo needed: kmod is
# not among the host's packages).
declare -A modpath modseen
modorder=()
add_module() {
    local m=$1 d deps
    [ -n "${modseen[$m]:-}" ] && return 0
    modseen[$m]=1
    [ -n "${modpath[$m]:-}" ] || die "module $m not found in $kdir (is CONFIG for it =m in $RXE_KERNEL?)"
    deps=$(tr '\0' '\n' < "${modpath[$m]}" | sed -n 's/^depends=//p' | head -1)
    for d in ${deps//,/ }; do add_module "$d"; done
    modorder+=("$m")
}

build_initramfs() {
    local mdir=$kdir/lib/modules/$RXE_KERNEL f n stage
    while IFS= read -r f; do
        n=$(basename "$f" .ko); modpath[${n//-/_}]=$f
    done < <(find "$mdir/kernel" -name '*.ko')
    for n in $RXE_MODULES; do add_module "$n"; done
    stage=$cache/initramfs.stage
    rm -rf "$stage" && mkdir -p "$stage"/{bin,dev,proc,sys,tmp,host,lib/modules} || die "cannot create $stage"
    cp /bin/busybox "$stage/bin/busybox" && cp "$here/init.sh" "$stage/init" && chmod 755 "$stage/init" || die "cannot fill $stage"
    for n in "${modorder[@]}"; do cp "${modpath[$n]}" "$stage/lib/modules/$n.ko" || die "cannot copy $n"; done
    printf '%s\n' "${modorder[@]}" > "$stage/modules.list"
    (cd "$stage" && find . | sort | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$initrd.tmp" || die "cpio of $stage failed"
    mv "$initrd.tmp" "$initrd" && rm -rf "$stage"
    echo "rxe: built $initrd (${#modorder[@]} modules: ${modorder[*]})"
}

ensure_initramfs() {
    initrd=$cache/initramfs-$RXE_KERNEL.cpio.gz
    local want have=""
    want=$( { echo "$RXE_KERNEL $RXE_MODULES"; cat "$here/init.sh" "$here/run.sh"; } | sha256sum | cut -d' ' -f1)
    [ -f "$initrd.stamp" ] && have=$(cat "$initrd.stamp")
    if [ -f "$initrd" ] && [ "$have" = "$want" ]; then return 0; fi
    build_initramfs
    echo "$want" > "$initrd.stamp"
}

command -v flock >/dev/null 2>&1 || skip "flock not found (Debian: util-linux)"
exec 9> "$cache/.lock"
flock 9
ensure_packages
ensure_kernel
ensure_initramfs
flock -u 9
exec 9>&-
[ $prepare_only = 1 ] && { echo "rxe: ready in $cache (kernel $RXE_KERNEL)"; exit 0; }

# --- one run ----------------------------------------------------------------------------------------------------
mkdir -p "$cache/runs" && run=$(mktemp -d "$cache/runs/run.XXXXXX") || die "cannot create a run folder in $cache/runs"
chmod 755 "$run"
{
    echo "# written by tests/rxe/run.sh on the host; run by the guest's /init chrooted into the host's tree"
    echo "export PATH=$(printf %q "$PATH") HOME=/tmp"
    while IFS= read -r v; do printf 'export %s=%q\n' "$v" "${!v}"; done \
        < <(compgen -e | grep -E '^(STITCH_|HCCL_|ASAN_OPTIONS$|UBSAN_OPTIONS$|LSAN_OPTIONS$|RXE_GUEST_)')
    printf 'cd %q || exit 125\n' "$PWD"
    printf 'exec'; printf ' %q' "$@"; printf '\n'
} > "$run/cmd.sh"

limit=${RXE_TIMEOUT:-600}
t0=$(date +%s%N)
# No option ROM on the NIC (romfile=): nothing network-boots, and ipxe is not needed. panic=-1 with -no-reboot
# turns a guest panic into QEMU exiting instead of a hang. no_timer_check: on a loaded host the emulated 8254 can
# miss the kernel's IO-APIC timer check, which then panics ("IO-APIC + timer doesn't work!", seen here at a load of
# 18 on 2 cores). QEMU's option syntax escapes a comma by doubling it.
timeout -k 10 "$limit" qemu-system-x86_64 -accel tcg,thread=multi -smp "${RXE_SMP:-2}" -m "${RXE_MEM:-2048}" \
    -kernel "$kdir/boot/vmlinuz-$RXE_KERNEL" -initrd "$initrd" \
    -append "console=ttyS0 rdinit=/init panic=-1 no_timer_check quiet" \
    -display none -monitor none -serial "file:$run/console.log" -no-reboot \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=${run//,/,,},mount_tag=rxerun,security_model=none,multidevs=remap" \
    -netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile= \
    < /dev/null > "$run/qemu.log" 2>&1
qrc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))

[ -f "$run/out.log" ] && cat "$run/out.log"
rc=$(cat "$run/rc" 2>/dev/null)
printf 'rxe: guest wall time %d.%d s (TCG, boot + command; guest timing means nothing)\n' $((ms / 1000)) $((ms % 1000 / 100))
case $rc in
    [0-9]*) ;;
    *)
        if [ $qrc = 124 ] || [ $qrc = 137 ]; then echo "rxe: FAIL: the guest did not finish within RXE_TIMEOUT=${limit}s (QEMU killed)"
        elif [ -n "$rc" ]; then echo "rxe: FAIL: guest $rc"
        else echo "rxe: FAIL: the guest ended without a result (QEMU exit $qrc)"; fi
        echo "--- qemu ($run/qemu.log)"; tail -20 "$run/qemu.log"
        echo "--- guest console, last lines ($run/console.log)"; tail -40 "$run/console.log"
        exit 1 ;;
esac
if [ "$rc" = 0 ] && [ "${RXE_KEEP:-0}" = 0 ]; then rm -rf "$run"; else echo "rxe: run folder kept: $run"; fi
exit "$rc"
