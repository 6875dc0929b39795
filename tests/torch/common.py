"""common.py - what the torch tests share (colls.py, groups.py, ddp.py, nonblocking.py): exact comparisons that exit
naming the rank, the check that a call raises a RuntimeError saying something, and the standalone entry point (one
script under torchrun: init_process_group("stitch"), its run(), destroy). tests/torch/all.py runs them all in one job.
"""
import sys

import torch
import torch.distributed as dist

import stitch_torch  # noqa: F401  (registers the "stitch" backend)

checked = 0  # results compared exactly, over every module


def expect(what, got, want):
    global checked
    checked += 1
    if not torch.equal(got, want):
        sys.exit(f"rank {dist.get_rank()}: {what}: got {got.tolist()}, expected {want.tolist()}")


def refused(what, fn, needle):
    """fn() must raise a RuntimeError whose text holds needle; its first line."""
    try:
        fn()
    except RuntimeError as e:
        if needle not in str(e):
            sys.exit(f"rank {dist.get_rank()}: {what}: the exception does not say {needle!r}: {e}")
        return str(e).splitlines()[0]
    sys.exit(f"rank {dist.get_rank()}: {what}: no exception")


def main(run):
    """A test module on its own under torchrun: run() on a default group of backend stitch."""
    dist.init_process_group("stitch")
    run()
    dist.destroy_process_group()
