#!/usr/bin/env bash
# run.sh - run a tests/torch script under torchrun with the stitch backend on the path, as a user would.
#
#   run.sh PYTHON MODULE_DIR|-REASON NP SCRIPT [ARGS...]
#
# PYTHON is the interpreter torch belongs to (/usr/bin/python3 on Debian; a `python3` earlier on PATH may have no
# torch). MODULE_DIR holds the built stitch_torch module; "-" followed by a reason means CMake did not build it, and
# the test is skipped (exit 77, ctest's SKIP_RETURN_CODE) with that reason, as when torch is missing here.
# torchrun is started through scripts/torchrun.py: /usr/bin/torchrun itself, plus the fix Debian's torch 1.13 needs
# under Python 3.11 (that file says why). The rendezvous is torchrun's c10d store on port 0 (--rdzv_endpoint=
# localhost:0: a port the kernel picks), not --standalone's fixed port 29400, which two torch tests run side by side
# would share (the second one's agent joins the first one's rendezvous). The whole run is bounded by $TORCH_TEST_TIMEOUT seconds (default 150).
set -uo pipefail
py=${1:?python}; mod=${2:?module dir}; np=${3:?np}; script=${4:?script}; shift 4
here=$(cd "$(dirname "$0")" && pwd)
if [ "${mod:0:1}" = "-" ]; then
    echo "SKIP: the PyTorch backend was not built: ${mod:1}"; exit 77
fi
if ! "$py" -c "import torch.distributed" 2>/dev/null; then
    echo "SKIP: $py cannot import torch.distributed (Debian: apt-get install python3-torch)"; exit 77
fi
limit=${TORCH_TEST_TIMEOUT:-150}
rdzv="--nnodes=1 --rdzv_backend=c10d --rdzv_endpoint=localhost:0"
echo "$ PYTHONPATH=$mod timeout $limit $py scripts/torchrun.py $rdzv --nproc_per_node=$np $script $*"
PYTHONPATH=$mod${PYTHONPATH:+:$PYTHONPATH} OMP_NUM_THREADS=1 timeout -k 5 "$limit" \
    "$py" "$here/../../scripts/torchrun.py" $rdzv --nproc_per_node="$np" "$script" "$@"
rc=$?
[ $rc = 124 ] && echo "FAIL: timed out after $limit s"
exit $rc
