#!/usr/bin/env bash
# installed.sh - the torch backend as an installed user meets it (tests/torch.cmake, torch.installed): `cmake
# --install` of the build tree into a fresh prefix (not a system one), then, with nothing of the build tree on any
# path:
#   1. `import stitch_torch` with PYTHONPATH set to the directory the install printed for the package (what a user
#      of a non-system prefix does), from the installed files only (its __file__ and _backend's are the prefix's);
#   2. the installed launcher <prefix>/bin/stitch-torchrun, PYTHONPATH unset (it finds the package under its own
#      prefix; all.py checks it imported that one), runs tests/torch/all.py (every collective, new_group by split, send/recv, barrier, errors, and DDP on
#      stitch against gloo) on 2 and then 3 processes.
#
#   installed.sh CMAKE BUILD_DIR PYTHON MODULE|-REASON
# MODULE "-" followed by a reason: the backend was not built, skip (77) with that reason. Each torchrun is bounded by
# $TORCH_TEST_TIMEOUT seconds (default 150).
set -uo pipefail
cmake=${1:?cmake} build=${2:?build dir} py=${3:?python} mod=${4:?module}
here=$(cd "$(dirname "$0")" && pwd)
if [ "${mod:0:1}" = "-" ]; then
    echo "SKIP: the PyTorch backend was not built: ${mod:1}"; exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
work=$build/torch-installed
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
cd "$work" || fail "cd $work"   # not the build tree: no build/lib on sys.path by accident

echo "== $cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >install.log 2>&1 || { cat install.log; fail "install"; }
init=$(sed -n 's/^-- Installing: \(.*\)\/stitch_torch\/__init__.py$/\1/p' install.log)
[ -n "$init" ] || { cat install.log; fail "the install put no stitch_torch/__init__.py"; }
case $init in "$prefix"/*) ;; *) fail "the package went to $init, outside the prefix $prefix" ;; esac
[ -x "$prefix/bin/stitch-torchrun" ] || fail "no $prefix/bin/stitch-torchrun"
echo "package in ${init#"$prefix/"}"

echo "== PYTHONPATH=$init $py -c 'import stitch_torch'"
PYTHONPATH=$init "$py" -c "
import os, sys, torch.distributed as dist, stitch_torch
from stitch_torch import _backend
for m in (stitch_torch, _backend):
    if not os.path.realpath(m.__file__).startswith(os.path.realpath(sys.argv[1]) + os.sep):
        sys.exit(f'{m.__name__} was loaded from {m.__file__}, not from the install {sys.argv[1]}')
assert hasattr(dist.Backend, 'STITCH'), 'import stitch_torch did not register the backend'
print('import stitch_torch: ok,', stitch_torch.__file__)" "$prefix" || fail "import stitch_torch from the install"

limit=${TORCH_TEST_TIMEOUT:-150}
rdzv="--nnodes=1 --rdzv_backend=c10d --rdzv_endpoint=localhost:0"  # not --standalone's fixed port (run.sh says why)
for np in 2 3; do
    echo "== timeout $limit $prefix/bin/stitch-torchrun $rdzv --nproc_per_node=$np $here/all.py (no PYTHONPATH)"
    env -u PYTHONPATH OMP_NUM_THREADS=1 STITCH_TORCH_EXPECT_DIR="$init" timeout -k 5 "$limit" "$prefix/bin/stitch-torchrun" $rdzv \
        --nproc_per_node=$np "$here/all.py"
    rc=$?
    [ $rc = 124 ] && fail "$np processes: timed out after $limit s"
    [ $rc = 0 ] || fail "$np processes: exit $rc"
done
echo "ok"
