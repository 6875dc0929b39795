#!/usr/bin/env bash
# tests/package/run.sh - the Debian packages (cmake/package.cmake), as an infrastructure team meets them
# (tests/package.cmake):
#   1. `cpack -G DEB` from the build tree makes libstitch0, libstitch-dev, stitch-tools (and python3-stitch-torch
#      where bindings/torch is built), no other package, each holding what it should;
#   2. as root: `dpkg -i` of them into this system; then, with no PATH, CMAKE_PREFIX_PATH, PKG_CONFIG_PATH,
#      LD_LIBRARY_PATH or PYTHONPATH of ours: /usr/bin/stitch-perf runs a small all_reduce; examples/app builds with
#      find_package(stitch) (an external CMake project, stitch_add_dsl with the installed stitchc) and with its
#      pkg-config Makefile, and both run against /usr/lib/libstitch.so.0; tests/install/mpi_app builds with
#      `pkg-config stitch_mpi` and runs under mpirun (where MPI is there); the torch backend imports from
#      /usr/lib/python3/dist-packages and tests/package/torch_smoke.py runs under /usr/bin/stitch-torchrun;
#   3. `dpkg --purge` of them leaves no file of theirs, and no directory that was not there before (the __pycache__
#      python3 wrote beside the torch package included: its prerm removes it).
#
#   run.sh BUILD_DIR SOURCE_DIR CMAKE CPACK C_COMPILER SANITIZE TORCH(ON|OFF)
# Exit 0 when all holds, 1 with what failed, 77 (skip, with the reason): a sanitizer build (its library needs the
# sanitizer runtime first), no dpkg here, not root (after step 1), or a stitch already on this system that is not
# this test's (a package of that name installed, or one of the packages' files present). Runs of this test are
# serialized by a lock (/var/lock/stitch-package-test.lock); a run killed while its packages were installed (the
# marker /var/lib/stitch-package-test.installed says so) has them removed by the next one. STITCH_REQUIRE_PACKAGE=1
# (set by .ci/run) makes every skip but the sanitizer build's a failure, so CI cannot pass without installing them.
set -euo pipefail
build=$1 src=$2 cmake=$3 cpack=$4 cc=$5 sanitize=${6:-} torch=${7:-OFF}

if [ -n "$sanitize" ] && [ "$sanitize" != OFF ] && [ "$sanitize" != 0 ]; then
    echo "SKIP: a sanitizer build (STITCH_SANITIZE=$sanitize): the packaged libstitch.so needs its runtime loaded first"
    exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
skip() {
    if [ "${STITCH_REQUIRE_PACKAGE:-0}" != 0 ]; then echo "FAIL (STITCH_REQUIRE_PACKAGE=1, would skip): $*"; exit 1; fi
    echo "SKIP: $*"; exit 77
}
for tool in dpkg dpkg-deb dpkg-query; do
    command -v $tool >/dev/null || skip "no $tool: not a Debian system"
done
for tool in file readelf pkg-config make flock; do
    command -v $tool >/dev/null || fail "$tool is not installed (make deps)"
done

work=$build/package-test
rm -rf "$work" && mkdir -p "$work"
pkgs=(libstitch0 libstitch-dev stitch-tools)
case $torch in ON | 1 | TRUE) pkgs+=(python3-stitch-torch) ;; esac

echo "== cpack -G DEB --config $build/CPackConfig.cmake -B $work/debs"
(cd "$work" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/debs") >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack"; }
debs=()
for p in "${pkgs[@]}"; do
    f=$(ls "$work"/debs/"${p}"_*.deb 2>/dev/null) || fail "no package $p ($(ls "$work"/debs/*.deb))"
    debs+=("$f")
    dpkg-deb -c "$f" | awk '{print substr($6, 2)}' >"$work/$p.list"  # ./usr/lib/x -> /usr/lib/x
done
n=$(ls "$work"/debs/*.deb | wc -l)
[ "$n" = ${#pkgs[@]} ] || fail "cpack made $n packages, expected ${#pkgs[@]}: $(cd "$work/debs" && echo *.deb)"
has() { grep -qx "$2" "$work/$1.list" || fail "package $1 lacks $2"; }
has libstitch0 "/usr/lib/libstitch.so.0"
has libstitch0 "/usr/lib/libstitch.so.0.[0-9.]*"
for f in /usr/include/stitch.h /usr/lib/libstitch.so /usr/lib/libstitch.a /usr/lib/pkgconfig/stitch.pc \
         /usr/lib/cmake/stitch/stitchConfig.cmake /usr/share/stitch/algos.dsl; do
    has libstitch-dev "$f"
done
if grep -qx /usr/include/stitch_mpi.h "$work/libstitch-dev.list"; then
    has libstitch-dev /usr/lib/pkgconfig/stitch_mpi.pc
    has libstitch-dev /usr/lib/cmake/stitch/stitchMpiTargets.cmake
fi
for f in stitchc stitch-perf stitch-info; do has stitch-tools /usr/bin/$f; done
if [ ${#pkgs[@]} = 4 ]; then
    has python3-stitch-torch "/usr/lib/python3/dist-packages/stitch_torch/__init__.py"
    has python3-stitch-torch "/usr/bin/stitch-torchrun"
fi
for p in "${pkgs[@]}"; do echo "$(basename "$(ls "$work"/debs/"${p}"_*.deb)"): $(grep -vc '/$' "$work/$p.list") files"; done

# python3-stitch-torch depends on Debian's python3-torch: installed only where that package is.
if [ ${#pkgs[@]} = 4 ] && ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "ok installed"; then
    echo "note: python3-torch is not installed as a Debian package here: python3-stitch-torch is built, not installed"
    unset 'pkgs[3]' 'debs[3]'
fi

if [ "$(id -u)" != 0 ]; then
    skip "not root: the packages were built and their contents checked; installing them (dpkg -i) needs root"
fi

# One run at a time on this machine; a killed run's packages are removed first.
exec 9>/var/lock/stitch-package-test.lock
flock -w 600 9 || fail "another run of this test held /var/lock/stitch-package-test.lock for 10 minutes"
marker=/var/lib/stitch-package-test.installed
if [ -f "$marker" ]; then
    echo "== a killed run left its packages installed: dpkg --purge $(cat "$marker")"
    # shellcheck disable=SC2046  # the names are words
    dpkg --purge $(cat "$marker") >"$work/purge-stale.log" 2>&1 || { cat "$work/purge-stale.log"; fail "purge"; }
    rm -f "$marker"
fi
for p in "${pkgs[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        skip "package $p is installed on this machine, not by this test: not touching it"
    fi
done
cat "$work"/*.list | grep -v '/$' | sort -u >"$work/files"
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then
        skip "$f exists already (a stitch installed by other means): not touching it"
    fi
done <"$work/files"
cat "$work"/*.list | grep '/$' | sed 's|/$||' | sort -u >"$work/dirs"
while read -r d; do [ -d "$d" ] && echo "$d"; done <"$work/dirs" >"$work/dirs.before" || true

echo "${pkgs[*]}" >"$marker"
purge() { dpkg --purge "${pkgs[@]}" >"$work/purge.log" 2>&1 && rm -f "$marker"; }
trap 'purge || true' EXIT
echo "== dpkg -i $(cd "$work/debs" && echo *.deb)"
dpkg -i "${debs[@]}" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "dpkg -i"; }

# Nothing of ours on any search path: the packages must be found where the system looks.
unset CMAKE_PREFIX_PATH PKG_CONFIG_PATH LD_LIBRARY_PATH PYTHONPATH
libreal=$(readlink -f /usr/lib/libstitch.so.0)
loads_system_lib() { # BINARY: its libstitch.so.0 is the package's
    local libs got
    libs=$(ldd "$1")
    got=$(sed -n 's/^\s*libstitch.so.0 => \(\S*\).*/\1/p' <<<"$libs")
    [ -n "$got" ] && [ "$(readlink -f "$got")" = "$libreal" ] || { echo "$libs"; fail "$1 does not load /usr/lib/libstitch.so.0"; }
}

echo "== /usr/bin/stitch-perf all_reduce -b 8 -e 1K -f 4 -c 1 --layout 2"
[ "$(dpkg -S /usr/bin/stitch-perf | cut -d: -f1)" = stitch-tools ] || fail "/usr/bin/stitch-perf is not stitch-tools'"
/usr/bin/stitch-perf all_reduce -b 8 -e 1K -f 4 -c 1 --layout 2 >"$work/perf.out" 2>&1 || { cat "$work/perf.out"; fail "stitch-perf"; }
grep -q "Avg bus bandwidth" "$work/perf.out" || { cat "$work/perf.out"; fail "stitch-perf printed no table"; }
tail -2 "$work/perf.out"

echo "== examples/app with find_package(stitch), no CMAKE_PREFIX_PATH"
"$cmake" -S "$src/examples/app" -B "$work/app-cmake" -DCMAKE_C_COMPILER="$cc" >"$work/app-cmake.log" 2>&1 &&
    "$cmake" --build "$work/app-cmake" >>"$work/app-cmake.log" 2>&1 || { cat "$work/app-cmake.log"; fail "examples/app with CMake"; }
grep -qx "stitch_DIR:PATH=/usr/lib/cmake/stitch" "$work/app-cmake/CMakeCache.txt" ||
    fail "find_package(stitch) did not find /usr/lib/cmake/stitch: $(grep stitch_DIR "$work/app-cmake/CMakeCache.txt")"
grep -q "stitchc emit algos_extra.dsl" "$work/app-cmake.log" || fail "stitch_add_dsl did not run stitchc emit"
"$work/app-cmake/app" >"$work/app-cmake.out" 2>&1 || { cat "$work/app-cmake.out"; fail "examples/app (CMake) failed"; }
grep -q "^all_reduce star p = 8: ok" "$work/app-cmake.out" || { cat "$work/app-cmake.out"; fail "app (CMake): no star run"; }
loads_system_lib "$work/app-cmake/app"
tail -1 "$work/app-cmake.out"

echo "== examples/app with pkg-config (examples/app/Makefile), no PKG_CONFIG_PATH"
mkdir -p "$work/app-pc"
make -C "$work/app-pc" -f "$src/examples/app/Makefile" SRCDIR="$src/examples/app" CC="$cc" >"$work/app-pc.log" 2>&1 ||
    { cat "$work/app-pc.log"; fail "examples/app with pkg-config"; }
stitchc=$(sed -n 's/^\(\S*stitchc\) emit .*/\1/p' "$work/app-pc.log")
[ "$(readlink -f "$stitchc")" = /usr/bin/stitchc ] || { cat "$work/app-pc.log"; fail "the Makefile ran '$stitchc', not /usr/bin/stitchc"; }
"$work/app-pc/app" >"$work/app-pc.out" 2>&1 || { cat "$work/app-pc.out"; fail "examples/app (pkg-config) failed"; }
grep -q "^all_reduce star p = 8: ok" "$work/app-pc.out" || { cat "$work/app-pc.out"; fail "app (pkg-config): no star run"; }
loads_system_lib "$work/app-pc/app"
tail -1 "$work/app-pc.out"

if [ -f /usr/lib/pkgconfig/stitch_mpi.pc ] && pkg-config --exists stitch_mpi 2>/dev/null; then
    echo "== tests/install/mpi_app with pkg-config stitch_mpi"
    # shellcheck disable=SC2046  # the flags are words
    "$cc" -o "$work/mpi-pc" "$src/tests/install/mpi_app/mpi_app.c" $(pkg-config --cflags --libs stitch_mpi) \
        >"$work/mpi-pc.log" 2>&1 || { cat "$work/mpi-pc.log"; fail "mpi_app with pkg-config stitch_mpi"; }
    loads_system_lib "$work/mpi-pc"
    if command -v mpirun >/dev/null; then
        out=$(timeout -k 5 60 mpirun --allow-run-as-root --oversubscribe -np 2 "$work/mpi-pc" 2>&1) ||
            { echo "$out"; fail "mpi_app under mpirun"; }
        [ "$(grep -c '^rank [01] of 2: ok$' <<<"$out")" = 2 ] || { echo "$out"; fail "mpi_app: not 2 ranks ok"; }
        echo "mpi_app: 2 ranks ok"
    fi
fi

if [ ${#pkgs[@]} = 4 ]; then
    pydir=$(sed -n 's|/stitch_torch/__init__.py$||p' "$work/python3-stitch-torch.list")
    echo "== /usr/bin/stitch-torchrun (2 processes) tests/package/torch_smoke.py, stitch_torch from $pydir"
    # python3 may write stitch_torch/__pycache__/ (not the package's): the prerm must remove it, checked below.
    (cd / && unset PYTHONDONTWRITEBYTECODE && STITCH_TORCH_EXPECT_DIR=$pydir OMP_NUM_THREADS=1 timeout -k 5 150 /usr/bin/stitch-torchrun --nnodes=1 \
        --rdzv_backend=c10d --rdzv_endpoint=localhost:0 --nproc_per_node=2 "$src/tests/package/torch_smoke.py") \
        >"$work/torch.out" 2>&1 || { cat "$work/torch.out"; fail "the torch backend from the package"; }
    [ "$(grep -c '^rank [01]: ok$' "$work/torch.out")" = 2 ] || { cat "$work/torch.out"; fail "torch: not 2 ranks ok"; }
    [ -d "$pydir/stitch_torch/__pycache__" ] || fail "python3 wrote no $pydir/stitch_torch/__pycache__ to clean up"
    echo "torch: 2 ranks ok"
fi

echo "== dpkg --purge ${pkgs[*]}"
purge || { cat "$work/purge.log"; fail "dpkg --purge"; }
trap - EXIT
for p in "${pkgs[@]}"; do
    ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || fail "$p is still installed"
done
left=0
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then echo "left behind: $f"; left=1; fi
done <"$work/files"
while read -r d; do
    if [ -d "$d" ] && ! grep -qx "$d" "$work/dirs.before"; then echo "left behind: $d/ ($(ls -A "$d" | head -3))"; left=1; fi
done <"$work/dirs"
[ $left = 0 ] || fail "the packages' removal left files behind"
echo "removed: no file left, no directory that was not there before"
echo "ok"
