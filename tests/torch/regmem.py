"""regmem.py - tensors in a group's registered memory (stitch_torch.empty, stitch_mem_alloc), checked against values
computed here. tests/torch/all.py runs it after colls.py, so the default group's plans were built before its first
registered tensor (the first allocation makes them whole again).

- whole tensors and views of one (a slice, a reshape) on every rank: the collectives pull (stitch_torch.pull_calls
  counts each), exact; all_reduce in place and async, all_gather_into_tensor, reduce_scatter_tensor, broadcast;
- one rank with an ordinary tensor, a registered tensor under 256 KiB, a registered tensor of the default group
  used on a subgroup: each streams (no pull), exact;
- a loop of allocate, all_reduce, drop: the dead tensors' memory is freed (the process's stitch-mem mappings do not
  grow with the loop);
- the refusals: a negative dimension, a group of another backend; no elements gives an ordinary empty tensor;
- keep(): a tensor that all.py reads and writes after destroy_process_group (its memory outlives the group).
"""
import sys

import torch
import torch.distributed as dist

import stitch_torch

from common import expect, refused

N = 100_003  # fp32: 400 KB, past the pull engine's 256 KiB floor, and not a multiple of any rank count

kept = []


def pulled(what, fn, want):
    """Runs fn(); it must have pulled (want True) or streamed (False)."""
    before = stitch_torch.pull_calls()
    fn()
    did = stitch_torch.pull_calls() - before
    if (did > 0) != want:
        sys.exit(f"rank {dist.get_rank()}: {what}: {did} pull calls, expected {'some' if want else 'none'}")


def ramp(n, r, dtype=torch.float32):
    return (torch.arange(n, dtype=torch.float64) % 97 + r).to(dtype)


def total(n, p, dtype=torch.float32):
    return (torch.arange(n, dtype=torch.float64) % 97 * p + p * (p - 1) / 2).to(dtype)


def stitch_maps():
    with open("/proc/self/maps") as f:
        return sum("stitch-mem" in line for line in f)


def run_whole(me, p):
    t = stitch_torch.empty(N)
    if t.numel() != N or t.dtype != torch.float32:
        sys.exit(f"rank {me}: empty({N}) gave {t.numel()} elements of {t.dtype}")
    t.copy_(ramp(N, me))
    pulled("all_reduce, registered", lambda: dist.all_reduce(t), True)
    expect("all_reduce, registered", t, total(N, p))
    big = stitch_torch.empty((3, N), dtype=torch.float64)  # a view of its middle row, and a reshape
    row = big[1]
    row.copy_(ramp(N, me, torch.float64))
    pulled("all_reduce of a view", lambda: dist.all_reduce(row.view(-1, 1)), True)
    expect("all_reduce of a view", row, total(N, p, torch.float64))
    t.copy_(ramp(N, me))
    work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
    work.wait()
    expect("all_reduce MAX, async", t, ramp(N, p - 1))
    out = stitch_torch.empty(p * N, dtype=torch.int32)
    src = stitch_torch.empty(N, dtype=torch.int32)
    src.copy_(ramp(N, me, torch.int32))
    pulled("all_gather_into_tensor", lambda: dist.all_gather_into_tensor(out, src), True)
    expect("all_gather_into_tensor", out, torch.cat([ramp(N, r, torch.int32) for r in range(p)]))
    out.copy_(torch.cat([ramp(N, me + r, torch.int32) for r in range(p)]))
    pulled("reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(src, out), True)
    expect("reduce_scatter_tensor", src, sum(ramp(N, r + me, torch.int32) for r in range(p)).to(torch.int32))
    t.copy_(ramp(N, me))
    pulled("broadcast from the last rank", lambda: dist.broadcast(t, src=p - 1), True)
    expect("broadcast from the last rank", t, ramp(N, p - 1))


def run_streamed(me, p):
    t = stitch_torch.empty(N) if me != 0 else torch.empty(N)
    t.copy_(ramp(N, me))
    pulled("all_reduce, rank 0 unregistered", lambda: dist.all_reduce(t), False)
    expect("all_reduce, rank 0 unregistered", t, total(N, p))
    small = stitch_torch.empty(1000)
    small.copy_(ramp(1000, me))
    pulled("all_reduce, registered, 4000 bytes", lambda: dist.all_reduce(small), False)
    expect("all_reduce, registered, 4000 bytes", small, total(1000, p))
    if p >= 2:
        ranks = list(range(1, p)) if p > 2 else [0, 1]
        sub = dist.new_group(ranks=ranks, backend="stitch")
        if me in ranks:
            t.copy_(ramp(N, me))
            pulled("all_reduce on a subgroup, default group's memory", lambda: dist.all_reduce(t, group=sub), False)
            expect("all_reduce on a subgroup, default group's memory", t,
                   sum(ramp(N, r, torch.float64) for r in ranks).to(torch.float32))
        dist.destroy_process_group(sub)


def run_freed(me, p):
    counts = []
    for i in range(12):
        t = stitch_torch.empty(N + i)
        t.copy_(ramp(N + i, me))
        dist.all_reduce(t)
        expect(f"allocate, all_reduce, drop {i}", t, total(N + i, p))
        del t
        counts.append(stitch_maps())
    if counts[-1] > counts[1] + 2:
        sys.exit(f"rank {me}: the dead tensors' memory is not freed: stitch-mem mappings after each round {counts}")


def run():
    me, p = dist.get_rank(), dist.get_world_size()
    run_whole(me, p)
    run_streamed(me, p)
    run_freed(me, p)
    refused("empty with a negative dimension", lambda: stitch_torch.empty(3, -1), "negative dimension")
    gloo = dist.new_group(backend="gloo")
    refused("empty of a gloo group", lambda: stitch_torch.empty(8, group=gloo), "not stitch")
    dist.destroy_process_group(gloo)
    none = stitch_torch.empty(0, 5)
    if none.shape != (0, 5):
        sys.exit(f"rank {me}: empty(0, 5) has shape {tuple(none.shape)}")
    k = stitch_torch.empty(N)
    k.copy_(ramp(N, me))
    dist.all_reduce(k)
    kept.append((k, me, p))


def after_destroy():
    """After destroy_process_group: the kept tensor's memory is still there, readable and writable; dropping it
    destroys the communicator."""
    k, me, p = kept.pop()
    if not torch.equal(k, total(N, p)):
        sys.exit(f"rank {me}: a registered tensor changed after destroy_process_group")
    k.add_(1)
    if not torch.equal(k, total(N, p) + 1):
        sys.exit(f"rank {me}: a registered tensor cannot be written after destroy_process_group")
