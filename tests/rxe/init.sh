#!/bin/busybox sh
# init.sh - /init of the rxe guest's initramfs (tests/rxe/run.sh builds the initramfs and boots it; read run.sh's
# opening comment first). It runs under busybox as PID 1 in a Debian 6.1 kernel and:
#   1. loads the modules listed in /modules.list, in that order (run.sh resolved their dependencies on the host;
#      the initramfs has no modprobe, so nothing auto-loads, crc32_generic included: rdma_rxe asks the crypto API
#      for "crc32" and `rdma link add` fails with ENOENT without it),
#   2. mounts the run folder (tag rxerun) read-write at /rxe, outside the chroot, and the host's root read-only
#      over virtio-9p at /host (tag hostroot), then proc, sysfs and devtmpfs in it; /tmp, /dev/shm and /run (stitch's
#      process mode needs writable shared memory and Unix sockets) become overlays: the host's directory (seen
#      through /hostro, a bind of the 9p root taken before anything is mounted in /host) under a tmpfs of the
#      guest's own. The guest so sees everything of the host's, a checkout under /tmp included (issue 25), and its
#      writes there stay in the guest,
#   3. addresses eth0 (QEMU's slirp user network, 10.0.2.15/24) and lo, creates rxe0 on eth0 with the host's
#      `rdma` tool, waits for its port to be ACTIVE,
#   4. runs the run folder's cmd.sh (given to bash as its -c script, so the run folder need not be visible in the
#      chroot) chrooted into /host, its output into out.log, and writes its exit status to rc (both in the run
#      folder, so the host reads them), then powers off.
# Nothing comes on the kernel command line: a path there would be split at its spaces. Every failure before the
# command writes "RXE-INIT-FAIL: why" to the console and, once /rxe is mounted, to its rc file as `init: why`,
# then powers off: the host reports it and never waits for the timeout. Nothing here is timed: under TCG guest
# time means nothing.
/bin/busybox --install -s /bin
export PATH=/bin

off() { sync; poweroff -f; reboot -f; }
fail() {
    echo "RXE-INIT-FAIL: $*"
    [ -f /rxe/cmd.sh ] && echo "init: $*" > /rxe/rc 2>/dev/null
    off
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

while read -r m; do
    insmod "/lib/modules/$m.ko" 2>/tmp/insmod.err || fail "insmod $m: $(cat /tmp/insmod.err)"
done < /modules.list

# msize 512 KiB: far fewer round trips than the 8 KiB default when the guest loads the host's binaries.
opts=trans=virtio,version=9p2000.L,msize=524288
mkdir -p /rxe /host /hostro /scratch
mount -t 9p -o $opts rxerun /rxe || fail "mount of the run folder over 9p (tag rxerun)"
[ -f /rxe/cmd.sh ] || fail "no cmd.sh in the run folder"
mount -t 9p -o $opts,ro hostroot /host || fail "mount of the host root over 9p"
# Before anything is mounted in /host: /hostro/tmp is the host's /tmp, /hostro/dev/shm the host's /dev/shm.
mount -o bind /host /hostro || fail "bind of /host on /hostro"
mount -t proc proc /host/proc || fail "mount /host/proc"
mount -t sysfs sys /host/sys || fail "mount /host/sys"
mount -t devtmpfs dev /host/dev || fail "mount /host/dev"
# One tmpfs holds every overlay's upper and work directories (overlayfs wants them on one file system).
mount -t tmpfs -o mode=755 scratch /scratch || fail "tmpfs on /scratch"
# A host without one of them (a bare container) gets a plain tmpfs there, as it has nothing to shadow.
for d in tmp dev/shm run; do
    u=/scratch/$(echo $d | tr / _)
    mkdir -p "$u/upper" "$u/work" "/host/$d" 2>/dev/null
    chmod 1777 "$u/upper"
    if [ -d "/hostro/$d" ]; then
        mount -t overlay -o "lowerdir=/hostro/$d,upperdir=$u/upper,workdir=$u/work" overlay "/host/$d" ||
            fail "overlay on /$d (the host's /$d under a tmpfs)"
    else
        mount -t tmpfs -o mode=1777 tmpfs "/host/$d" || fail "tmpfs on /$d"
    fi
done

hostname rxe-guest
ip link set lo up || fail "lo up"
ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up || fail "eth0 (virtio-net) up"
ip route add default via 10.0.2.2 2>/dev/null
chroot /host rdma link add rxe0 type rxe netdev eth0 > /tmp/rdma.err 2>&1 ||
    fail "rdma link add rxe0: $(cat /tmp/rdma.err)"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
    i=$((i + 1))
    [ $i -le 100 ] || fail "rxe0 port 1 not ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state 2>&1)"
    sleep 0.1
done
echo "RXE-INIT-READY: rxe0 $(cat /sys/class/infiniband/rxe0/ports/1/state) on eth0"

chroot /host /bin/bash -c "$(cat /rxe/cmd.sh)" rxe-cmd > /rxe/out.log 2>&1
rc=$?
echo "$rc" > /rxe/rc
echo "RXE-GUEST-RC: $rc"
umount /rxe
off
