#!/usr/bin/env bash
# tests/install/run.sh - the packaging, as a user meets it (tests/install.cmake; issue 13, items 1 and 2):
#   1. `cmake --install` into a staging directory (DESTDIR=<build>/install-test/stage, prefix /opt/stitch), and the
#      files a user needs are there: headers, libstitch.so with its soname links, libstitch.a, the tools, algos.dsl,
#      the docs, the CMake package and stitch.pc;
#   2. libstitch.so exports exactly the functions stitch.h declares (nm -D): no st_* internal, no stitch_* that the
#      header does not declare, none missing;
#   3. examples/app built against the staged install with find_package(stitch) + stitch_add_dsl, and again with its
#      Makefile and `pkg-config --cflags --libs stitch`; both binaries run `star` (algos_extra.dsl, not in algos.dsl)
#      on 1..8 thread ranks and check the sums, and load the staged libstitch.so, not the build tree's; a third build
#      links stitch::stitch_static (the complete libstitch.a) and loads no libstitch.so;
#   4. stitch_add_dsl on a wrong algorithm fails the build with stitchc's counterexample (FILE:LINE: error: ...),
#      the file named as given inside the project and by its absolute path outside it;
#   5. the README's advice for a pkg-config program of a non-system prefix: linked with
#      -Wl,-rpath,$(pkg-config --variable=libdir stitch), it runs without LD_LIBRARY_PATH, on the staged library;
#   6. where stitch was built with MPI (stitch_mpi.h installed): tests/install/mpi_app built with
#      find_package(stitch COMPONENTS mpi) (stitch::stitch_mpi) and with `pkg-config --cflags --libs stitch_mpi`,
#      each run under mpirun on 2 processes (skipped, saying so, where mpirun is absent).
#
#   run.sh BUILD_DIR SOURCE_DIR CMAKE C_COMPILER SANITIZE
# Exit 0 when all holds, 1 with what failed, 77 (skip, with the reason) in a sanitizer build: the staged shared
# library would carry the sanitizer runtime, which a plain program cannot load first.
set -euo pipefail
build=$1 src=$2 cmake=$3 cc=$4 sanitize=${5:-}

if [ -n "$sanitize" ] && [ "$sanitize" != OFF ] && [ "$sanitize" != 0 ]; then
    echo "skip: a sanitizer build (STITCH_SANITIZE=$sanitize): the installed libstitch.so needs its runtime loaded first"
    exit 77
fi
for tool in nm readelf pkg-config make; do
    command -v $tool >/dev/null || { echo "FAIL: $tool is not installed (make deps)"; exit 1; }
done

work=$build/install-test
prefix=/opt/stitch
stage=$work/stage$prefix
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

echo "== cmake --install $build (DESTDIR=$work/stage, prefix $prefix)"
DESTDIR=$work/stage "$cmake" --install "$build" --prefix $prefix >"$work/install.log" || { cat "$work/install.log"; fail "install"; }

version=$(sed -n 's/^Version: //p' "$stage/lib/pkgconfig/stitch.pc")
major=${version%%.*}
for f in include/stitch.h include/stitch/st_steptab.h lib/libstitch.so.$version lib/libstitch.a bin/stitchc \
         bin/stitch-perf bin/stitch-info share/stitch/algos.dsl share/doc/stitch/README.md \
         share/doc/stitch/docs/language.md share/doc/stitch/examples/app/algos_extra.dsl lib/pkgconfig/stitch.pc \
         lib/cmake/stitch/stitchConfig.cmake lib/cmake/stitch/stitchConfigVersion.cmake \
         lib/cmake/stitch/StitchDsl.cmake; do
    [ -f "$stage/$f" ] || fail "$prefix/$f is not installed"
done
[ "$(readlink "$stage/lib/libstitch.so.$major")" = "libstitch.so.$version" ] || fail "libstitch.so.$major -> libstitch.so.$version missing"
[ "$(readlink "$stage/lib/libstitch.so")" = "libstitch.so.$major" ] || fail "libstitch.so -> libstitch.so.$major missing"
soname=$(readelf -d "$stage/lib/libstitch.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libstitch.so.$major" ] || fail "soname is '$soname', expected libstitch.so.$major"
echo "version $version, soname $soname"

echo "== nm -D: exports against the declarations of stitch.h"
nm -D --defined-only "$stage/lib/libstitch.so.$version" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sort -u >"$work/exports"
# A declaration starts a line with its return type; the comments (" * ...") never do.
sed -nE 's/^[a-z][a-z_ *]*[ *](stitch_[a-z0-9_]+)\(.*/\1/p' "$stage/include/stitch.h" | sort -u >"$work/declared"
if ! diff -u "$work/declared" "$work/exports" >"$work/exports.diff"; then
    cat "$work/exports.diff"
    fail "libstitch.so exports differ from stitch.h's declarations (- declared only, + exported only)"
fi
echo "$(wc -l <"$work/exports") symbols, all stitch_* and all declared in stitch.h"

run_app() { # run_app NAME BINARY: runs it, checks `star` ran, and that it loaded the staged library
    local out=$work/$1.out
    LD_LIBRARY_PATH=$stage/lib "$2" >"$out" 2>&1 || { cat "$out"; fail "$1: the example failed"; }
    grep -q "^all_reduce star p = 8: ok" "$out" || { cat "$out"; fail "$1: no star run"; }
    # ldd's output is kept first: `ldd | grep -q` under pipefail fails when grep stops reading early.
    local libs
    libs=$(LD_LIBRARY_PATH=$stage/lib ldd "$2")
    grep -q "libstitch.so.$major => $stage/lib/" <<<"$libs" || {
        echo "$libs"; fail "$1: does not load $stage/lib/libstitch.so.$major"; }
    tail -1 "$out"
}

echo "== examples/app with find_package(stitch) + stitch_add_dsl"
"$cmake" -S "$src/examples/app" -B "$work/app-cmake" -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_C_COMPILER="$cc" \
    >"$work/app-cmake.log" 2>&1 && "$cmake" --build "$work/app-cmake" >>"$work/app-cmake.log" 2>&1 ||
    { cat "$work/app-cmake.log"; fail "examples/app did not build with find_package(stitch)"; }
grep -q "stitchc emit algos_extra.dsl" "$work/app-cmake.log" || fail "stitch_add_dsl did not run stitchc emit"
run_app app-cmake "$work/app-cmake/app"

echo "== examples/app with find_package(stitch), linked with stitch::stitch_static (libstitch.a)"
"$cmake" -S "$src/examples/app" -B "$work/app-static" -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_C_COMPILER="$cc" \
    -DAPP_STATIC=ON >"$work/app-static.log" 2>&1 && "$cmake" --build "$work/app-static" >>"$work/app-static.log" 2>&1 ||
    { cat "$work/app-static.log"; fail "examples/app did not build with stitch::stitch_static"; }
libs=$(ldd "$work/app-static/app")
! grep -q libstitch <<<"$libs" || { echo "$libs"; fail "app-static loads a libstitch.so"; }
LD_LIBRARY_PATH= "$work/app-static/app" >"$work/app-static.out" 2>&1 || { cat "$work/app-static.out"; fail "app-static failed"; }
tail -1 "$work/app-static.out"

echo "== stitch_add_dsl on a wrong algorithm: the build fails with stitchc's counterexample"
mkdir -p "$work/bad"
cat >"$work/bad/bad.dsl" <<'DSL'
# rank 0 gathers the sum, but nobody sends it back: wrong for every p > 1
algorithm half implements all_reduce {
  units 1
  step t in 1 .. p - 1 {
    if r == t { send unit 0 to 0 reduce }
  }
}
DSL
cat >"$work/bad/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(bad LANGUAGES C)
find_package(stitch REQUIRED)
file(WRITE ${CMAKE_BINARY_DIR}/main.c "int main(void) { return 0; }\n")
add_executable(bad ${CMAKE_BINARY_DIR}/main.c)
if(NOT BAD_DSL)
  set(BAD_DSL bad.dsl)
endif()
stitch_add_dsl(bad ${BAD_DSL} RANKS 1..4)
target_link_libraries(bad PRIVATE stitch::stitch)
CMAKE
"$cmake" -S "$work/bad" -B "$work/bad/build" -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_C_COMPILER="$cc" \
    >"$work/bad.log" 2>&1 || { cat "$work/bad.log"; fail "the wrong-algorithm project did not configure"; }
if "$cmake" --build "$work/bad/build" >>"$work/bad.log" 2>&1; then
    cat "$work/bad.log"; fail "a wrong algorithm built"
fi
grep -q "^bad.dsl:2: error: half all_reduce is wrong for p = 2" "$work/bad.log" || {
    cat "$work/bad.log"; fail "the failed build does not show stitchc's counterexample"; }
grep "error: half" "$work/bad.log"
# the same file outside the project's source tree: named by its absolute path, not ../../../..
mkdir -p "$work/outside" && cp "$work/bad/bad.dsl" "$work/outside/bad.dsl"
"$cmake" -S "$work/bad" -B "$work/bad/build-outside" -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_C_COMPILER="$cc" \
    -DBAD_DSL="$work/outside/bad.dsl" >"$work/bad-outside.log" 2>&1 || { cat "$work/bad-outside.log"; fail "the outside-file project did not configure"; }
if "$cmake" --build "$work/bad/build-outside" >>"$work/bad-outside.log" 2>&1; then
    cat "$work/bad-outside.log"; fail "a wrong algorithm outside the source tree built"
fi
grep -q "^$work/outside/bad.dsl:2: error: half all_reduce is wrong for p = 2" "$work/bad-outside.log" || {
    cat "$work/bad-outside.log"; fail "a file outside the source tree is not named by its absolute path"; }

echo "== examples/app with pkg-config --cflags --libs stitch (examples/app/Makefile)"
mkdir -p "$work/app-pc"
PKG_CONFIG_PATH=$stage/lib/pkgconfig make -C "$work/app-pc" -f "$src/examples/app/Makefile" SRCDIR="$src/examples/app" \
    CC="$cc" >"$work/app-pc.log" 2>&1 || { cat "$work/app-pc.log"; fail "examples/app did not build with pkg-config"; }
grep -q "$stage/lib/pkgconfig/../../bin/stitchc emit" "$work/app-pc.log" || { cat "$work/app-pc.log"; fail "the staged stitchc did not emit the tables"; }
run_app app-pc "$work/app-pc/app"

echo "== at run time (README): the pkg-config program linked with -Wl,-rpath,\$(pkg-config --variable=libdir stitch)"
# (Not checked: that it fails without; a libstitch.so.0 on the loader's own path, e.g. package.deb's while it runs,
# would let it start.)
libdir=$(PKG_CONFIG_PATH=$stage/lib/pkgconfig pkg-config --variable=libdir stitch)
# shellcheck disable=SC2046  # the flags are words
"$cc" -o "$work/app-pc/app-rpath" "$work/app-pc/main.o" "$work/app-pc/app_algos.o" \
    $(PKG_CONFIG_PATH=$stage/lib/pkgconfig pkg-config --libs stitch) -pthread -Wl,-rpath,"$libdir" ||
    fail "linking app-pc with -Wl,-rpath,$libdir"
env -u LD_LIBRARY_PATH "$work/app-pc/app-rpath" >"$work/app-rpath.out" 2>&1 || { cat "$work/app-rpath.out"; fail "app-rpath"; }
grep -q "^all_reduce star p = 8: ok" "$work/app-rpath.out" || { cat "$work/app-rpath.out"; fail "app-rpath: no star run"; }
libs=$(env -u LD_LIBRARY_PATH ldd "$work/app-pc/app-rpath")
got=$(sed -n "s/^\s*libstitch.so.$major => \(\S*\).*/\1/p" <<<"$libs")
[ "$(readlink -f "$got")" = "$(readlink -f "$stage/lib/libstitch.so.$major")" ] || { echo "$libs"; fail "app-rpath loads '$got'"; }
echo "-Wl,-rpath,$libdir: runs"

if [ -f "$stage/include/stitch_mpi.h" ]; then
    for f in lib/libstitch_mpi.a lib/pkgconfig/stitch_mpi.pc lib/cmake/stitch/stitchMpiTargets.cmake; do
        [ -f "$stage/$f" ] || fail "$prefix/$f is not installed (stitch_mpi.h is)"
    done
    echo "== tests/install/mpi_app with find_package(stitch COMPONENTS mpi) (stitch::stitch_mpi)"
    "$cmake" -S "$src/tests/install/mpi_app" -B "$work/mpi-cmake" -DCMAKE_PREFIX_PATH="$stage" \
        -DCMAKE_C_COMPILER="$cc" >"$work/mpi-cmake.log" 2>&1 && "$cmake" --build "$work/mpi-cmake" >>"$work/mpi-cmake.log" 2>&1 ||
        { cat "$work/mpi-cmake.log"; fail "mpi_app did not build with stitch::stitch_mpi"; }
    echo "== tests/install/mpi_app with pkg-config --cflags --libs stitch_mpi"
    flags=$(PKG_CONFIG_PATH=$stage/lib/pkgconfig pkg-config --cflags --libs stitch_mpi) || fail "pkg-config stitch_mpi"
    echo "$cc mpi_app.c $flags"
    # shellcheck disable=SC2086  # the flags are words
    "$cc" -o "$work/mpi-pc" "$src/tests/install/mpi_app/mpi_app.c" $flags >"$work/mpi-pc.log" 2>&1 ||
        { cat "$work/mpi-pc.log"; fail "mpi_app did not build with pkg-config stitch_mpi"; }
    if command -v mpirun >/dev/null; then
        for app in "$work/mpi-cmake/mpi_app" "$work/mpi-pc"; do
            out=$(LD_LIBRARY_PATH=$stage/lib timeout -k 5 60 mpirun --allow-run-as-root --oversubscribe \
                  -x LD_LIBRARY_PATH -np 2 "$app" 2>&1) || { echo "$out"; fail "$app under mpirun"; }
            [ "$(grep -c '^rank [01] of 2: ok$' <<<"$out")" = 2 ] || { echo "$out"; fail "$app: not 2 ranks ok"; }
            echo "$app: 2 ranks ok"
        done
    else
        echo "mpirun not installed: the MPI programs were built, not run"
    fi
fi
echo "ok"
