#!/usr/bin/env bash
# paths.sh - test rxe.paths (issue 25), run on the host: the rxe harness works from a checkout under /tmp whose path
# has a space in it. The guest once mounted a bare tmpfs on /tmp, hiding such a build tree (every rxe test failed
# with `cd: .../build/tests: No such file or directory`), and took the run folder's path from the kernel command
# line, where a space splits it.
#
#   paths.sh CACHE_DIR STITCH-INFO
#
# It lays out the smallest tree that rxe.smoke needs under "/tmp/stitch rxe paths.XXXXXX": src/tests/rxe/ (copies
# of run.sh, init.sh, smoke.sh), build/bin/stitch-info (a copy; libstitch is linked in statically), build/tests/
# (the working directory, as ctest gives it) and build/rxe/ (the cache: links to CACHE_DIR's kernel and initramfs,
# so nothing is downloaded or rebuilt, while the run folder is created in the tree). Then, from build/tests, the
# copied run.sh runs the copied smoke.sh on the copied stitch-info: one guest boot. It passes when that run passes;
# it skips (77) where run.sh skips, saying why. The tree is removed after a pass and kept (its path printed) after
# a failure.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${1:?usage: paths.sh CACHE_DIR STITCH-INFO}
info=${2:?usage: paths.sh CACHE_DIR STITCH-INFO}

# Installs, downloads and builds what is missing (once per build tree, under run.sh's lock); exits 77 with the reason
# where the guest cannot be started.
"$here/run.sh" --prepare "$cache" || exit $?
cache=$(cd "$cache" && pwd)

tree=$(mktemp -d "/tmp/stitch rxe paths.XXXXXX") || { echo "FAIL: cannot create a tree under /tmp"; exit 1; }
mkdir -p "$tree/src/tests/rxe" "$tree/build/bin" "$tree/build/tests" "$tree/build/rxe" &&
    cp "$here/run.sh" "$here/init.sh" "$here/smoke.sh" "$tree/src/tests/rxe/" &&
    cp "$info" "$tree/build/bin/stitch-info" &&
    ln -s "$cache"/linux-* "$cache"/initramfs-* "$tree/build/rxe/" || { echo "FAIL: cannot fill $tree"; exit 1; }

echo "rxe.paths: rxe.smoke from \"$tree\" (cwd build/tests)"
(cd "$tree/build/tests" &&
    "$tree/src/tests/rxe/run.sh" "$tree/build/rxe" -- "$tree/src/tests/rxe/smoke.sh" "$tree/build/bin/stitch-info")
s=$?
case $s in
    0|77) rm -rf "$tree" ;;
    *) echo "FAIL: rxe.smoke from \"$tree\" exited $s (tree kept)" ;;
esac
exit $s
