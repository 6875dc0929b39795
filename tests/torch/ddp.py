"""ddp.py - DistributedDataParallel on the stitch backend and on gloo, in the same torchrun job, must train a tiny
MLP to the same parameters (tests/torch.cmake runs it with /usr/bin/torchrun --nproc_per_node=3).

The default group is stitch (init_process_group("stitch"): the backend's creator gets torchrun's store); a second
group over the same ranks uses gloo. Two copies of one model (same seed, so the same initial parameters) train for
STEPS steps of SGD with momentum on the same per-rank batches, one wrapped in DDP over each group, and every rank
compares them after each step. tests/torch/all.py runs it after colls.py under one torchrun (tests/torch.cmake).

Tolerance. DDP divides each gradient by the world size and all-reduces the sum. stitch reduces every element in an
order fixed by its schedule, gloo in its own (its ring starts each chunk at a different rank), so a sum of three
fp32 values may differ in the last bit: bit-identity is not to be expected in fp32. The test runs twice: in
float64 the parameters must agree within 1e-12 relative (rounding differences of 1e-16 grown over a few steps),
and in float32 within 1e-5 relative and 1e-6 absolute. It prints the largest difference seen. Every rank also
checks that its stitch-trained parameters equal rank 0's bit for bit (DDP keeps replicas identical, and stitch's
all_reduce gives every rank the same bits).
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

import common

STEPS = 5


def model(dtype):
    torch.manual_seed(1234)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8)).to(dtype)


def batches(rank, dtype):
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own data, the same for both backends
    return [(torch.randn(12, 16, generator=g, dtype=dtype), torch.randn(12, 8, generator=g, dtype=dtype))
            for _ in range(STEPS)]


def train_both(rank, gloo_group, dtype, rtol, atol):
    nets = {}
    for name, group in (("stitch", None), ("gloo", gloo_group)):
        net = nn.parallel.DistributedDataParallel(model(dtype), process_group=group)
        nets[name] = (net, torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9))
    worst = 0.0
    for step, (x, y) in enumerate(batches(rank, dtype)):
        for net, opt in nets.values():
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            opt.step()
        for (n, a), b in zip(nets["stitch"][0].module.named_parameters(), nets["gloo"][0].module.parameters()):
            diff = (a.detach() - b.detach()).abs().max().item()
            worst = max(worst, diff)
            if not torch.allclose(a, b, rtol=rtol, atol=atol):
                sys.exit(f"rank {rank}: {dtype} step {step}: parameter {n} differs between stitch and gloo by "
                         f"{diff:.3g} (rtol {rtol}, atol {atol})")
    # Replicas on stitch must be bit-identical across ranks: compare with rank 0's by a broadcast over gloo.
    for n, a in nets["stitch"][0].module.named_parameters():
        ref = a.detach().clone()
        dist.broadcast(ref, 0, group=gloo_group)
        if not torch.equal(ref, a.detach()):
            sys.exit(f"rank {rank}: {dtype}: stitch replica of {n} differs from rank 0's")
    return worst


def run():
    """The comparison, with the default group (which must be stitch) and a gloo group made here."""
    rank, size = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "stitch", dist.get_backend()
    gloo = dist.new_group(backend="gloo")
    w64 = train_both(rank, gloo, torch.float64, 1e-12, 0.0)
    w32 = train_both(rank, gloo, torch.float32, 1e-5, 1e-6)
    dist.barrier()
    if rank == 0:
        print(f"ddp: {size} ranks, {STEPS} steps: stitch and gloo agree; largest difference "
              f"float64 {w64:.3g}, float32 {w32:.3g}")
    dist.destroy_process_group(gloo)


if __name__ == "__main__":
    common.main(run)
