#!/bin/busybox sh
# init.sh - /init of the rxe guest's initramfs (tests/rxe/run.sh builds the initramfs and boots it; read run.sh's
# opening comment first). It runs under busybox as PID 1 in a Debian 6.1 kernel and:
#   1. loads the modules listed in /modules.list, in that order (run.sh resolved their dependencies on the host;
#      the initramfs has no modprobe, so nothing auto-loads, crc32_generic included: rdma_rxe asks the crypto API
#      for "crc32" and `rdma link add` fails with ENOENT without it),
#   2. mounts the host's root read-only over virtio-9p at /host (tag hostroot) and the run folder read-write at its
#      host path inside it (tag rxerun), then proc, sysfs, devtmpfs and tmpfs for /tmp, /dev/shm and /run (stitch's
#      process mode needs writable shared memory and Unix sockets),
#   3. addresses eth0 (QEMU's slirp user network, 10.0.2.15/24) and lo, creates rxe0 on eth0 with the host's
#      `rdma` tool, waits for its port to be ACTIVE,
#   4. runs the run folder's cmd.sh chrooted into /host, its output into out.log, and writes its exit status to rc
#      (both in the run folder, so the host reads them), then powers off.
# The kernel command line carries rxe.run=<run folder's host path>. Every failure before the command writes
# "RXE-INIT-FAIL: why" to the console and to the run folder's rc file as `init: why`, then powers off: the host
# reports it and never waits for the timeout. Nothing here is timed: under TCG guest time means nothing.
/bin/busybox --install -s /bin
export PATH=/bin

off() { sync; poweroff -f; reboot -f; }
fail() {
    echo "RXE-INIT-FAIL: $*"
    [ -n "$run" ] && [ -d "/host$run" ] && echo "init: $*" > "/host$run/rc" 2>/dev/null
    off
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
run=
for w in $(cat /proc/cmdline); do
    case $w in rxe.run=*) run=${w#rxe.run=} ;; esac
done

while read -r m; do
    insmod "/lib/modules/$m.ko" 2>/tmp/insmod.err || fail "insmod $m: $(cat /tmp/insmod.err)"
done < /modules.list

[ -n "$run" ] || fail "no rxe.run=<folder> on the kernel command line"
mkdir -p /host
# msize 512 KiB: far fewer round trips than the 8 KiB default when the guest loads the host's binaries.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,ro hostroot /host || fail "mount of the host root over 9p"
mount -t proc proc /host/proc || fail "mount /host/proc"
mount -t sysfs sys /host/sys || fail "mount /host/sys"
mount -t devtmpfs dev /host/dev || fail "mount /host/dev"
for d in /host/tmp /host/dev/shm /host/run; do
    mkdir -p "$d" 2>/dev/null
    mount -t tmpfs -o mode=1777 tmpfs "$d" || fail "tmpfs on $d"
done
# After the tmpfs mounts, so a run folder under /tmp is not hidden by them (mkdir only matters there).
mkdir -p "/host$run" 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 rxerun "/host$run" || fail "mount of the run folder $run"

hostname rxe-guest
ip link set lo up || fail "lo up"
ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up || fail "eth0 (virtio-net) up"
ip route add default via 10.0.2.2 2>/dev/null
chroot /host rdma link add rxe0 type rxe netdev eth0 > /tmp/rdma.err 2>&1 || fail "rdma link add rxe0: $(cat /tmp/rdma.err)"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
    i=$((i + 1))
    [ $i -le 100 ] || fail "rxe0 port 1 not ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state 2>&1)"
    sleep 0.1
done
echo "RXE-INIT-READY: rxe0 $(cat /sys/class/infiniband/rxe0/ports/1/state) on eth0"

chroot /host /bin/bash "$run/cmd.sh" > "/host$run/out.log" 2>&1
rc=$?
echo "$rc" > "/host$run/rc"
echo "RXE-GUEST-RC: $rc"
umount "/host$run"
off
