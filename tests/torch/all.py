"""all.py - the torch backend's test under one torchrun, to pay PyTorch's start-up once: init_process_group("stitch")
with torchrun's store, then colls.py's checks (every collective and dtype, the errors), groups.py's (new_group by
stitch_comm_split, send/recv, barrier, their errors), regmem.py's (tensors in registered memory, one of them kept
past destroy_process_group), nonblocking.py's (async_op=True: overlap, isend/irecv, errors and timeouts reaching the
Work) and ddp.py's comparison of DistributedDataParallel on stitch and on gloo. tests/torch.cmake runs it as ctest torch.np3, and from a staged install on 2 and 3 processes
(tests/torch/installed.sh), where STITCH_TORCH_EXPECT_DIR names the directory the package must come from.
"""
import os
import sys

import torch.distributed as dist

import stitch_torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import colls  # noqa: E402
import ddp  # noqa: E402
import groups  # noqa: E402
import nonblocking  # noqa: E402
import regmem  # noqa: E402

if __name__ == "__main__":
    want = os.environ.get("STITCH_TORCH_EXPECT_DIR")
    got = os.path.dirname(os.path.dirname(os.path.realpath(stitch_torch.__file__)))
    if want and got != os.path.realpath(want):
        sys.exit(f"stitch_torch was imported from {got}, not from {want}")
    dist.init_process_group("stitch")
    colls.run()
    groups.run()
    regmem.run()
    nonblocking.run()
    ddp.run()
    dist.destroy_process_group()
    regmem.after_destroy()
