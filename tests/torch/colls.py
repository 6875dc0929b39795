"""colls.py - every collective of the stitch torch.distributed backend, for every dtype stitch has, against
values computed here; then the errors: what the backend refuses (a Python exception before any rank communicates)
and a failure inside libstitch (ranks disagree on the count: every rank gets a Python exception carrying stitch's
message). tests/torch/all.py runs it with ddp.py under one torchrun (tests/torch.cmake); on its own:
/usr/bin/python3 scripts/torchrun.py --standalone --nproc_per_node=3 tests/torch/colls.py (PYTHONPATH=build/lib).

Inputs are small integers (at most 5 per element, products of at most 3 of them), exact in every dtype, int8 and
float16 included, so every comparison is exact.
"""
import sys

import torch
import torch.distributed as dist

from common import expect, refused
import common

DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
N = 6  # elements per rank (per block where a collective has blocks)


def val(r, i):
    return r % 3 + 1 + i % 3  # 1..5


def mk(vals, dt):
    return torch.tensor(vals, dtype=torch.float64).to(dt)


def check_dtype(rank, size, dt):
    name = str(dt).replace("torch.", "")
    mine = mk([val(rank, i) for i in range(N)], dt)
    every = [[val(r, i) for i in range(N)] for r in range(size)]
    reduce_fns = {dist.ReduceOp.SUM: sum, dist.ReduceOp.PRODUCT: lambda xs: xs[0] * xs[1] * xs[2] if len(xs) == 3
                  else torch.tensor(xs).prod().item(), dist.ReduceOp.MIN: min, dist.ReduceOp.MAX: max}
    for op, fn in reduce_fns.items():
        t = mine.clone()
        dist.all_reduce(t, op=op)
        expect(f"all_reduce {op} {name}", t, mk([fn([e[i] for e in every]) for i in range(N)], dt))
    t = mine.clone()
    dist.reduce(t, dst=1 % size, op=dist.ReduceOp.SUM)
    if rank == 1 % size:
        expect(f"reduce {name}", t, mk([sum(e[i] for e in every) for i in range(N)], dt))
    else:
        expect(f"reduce {name} (non-root unchanged)", t, mine)
    t = mine.clone()
    dist.broadcast(t, src=size - 1)
    expect(f"broadcast {name}", t, mk(every[size - 1], dt))
    outs = [torch.zeros(N, dtype=dt) for _ in range(size)]
    dist.all_gather(outs, mine)
    for r in range(size):
        expect(f"all_gather {name} block {r}", outs[r], mk(every[r], dt))
    out = torch.zeros(size * N, dtype=dt)
    dist.all_gather_into_tensor(out, mine)
    expect(f"all_gather_into_tensor {name}", out, mk(sum(every, []), dt))
    # reduce_scatter: rank r contributes block j = val(r, j*N + i); rank j gets the sum over r of its block.
    blocks = [mk([val(rank, j * N + i) for i in range(N)], dt) for j in range(size)]
    want = mk([sum(val(r, rank * N + i) for r in range(size)) for i in range(N)], dt)
    out = torch.zeros(N, dtype=dt)
    dist.reduce_scatter(out, blocks)
    expect(f"reduce_scatter {name}", out, want)
    out = torch.zeros(N, dtype=dt)
    dist.reduce_scatter_tensor(out, torch.cat(blocks), op=dist.ReduceOp.MIN)
    expect(f"reduce_scatter_tensor min {name}", out,
           mk([min(val(r, rank * N + i) for r in range(size)) for i in range(N)], dt))
    # all_to_all: element k of the block from r to j is (r * size + j + k) % 5 + 1.
    a2a = lambda r, j, n: [(r * size + j + k) % 5 + 1 for k in range(n)]  # noqa: E731
    out = torch.zeros(size * 2, dtype=dt)
    dist.all_to_all_single(out, mk(sum((a2a(rank, j, 2) for j in range(size)), []), dt))
    expect(f"all_to_all_single {name}", out, mk(sum((a2a(r, rank, 2) for r in range(size)), []), dt))
    cnt = lambda r, j: (r + j) % 3 + 1  # noqa: E731  rows from r to j, rows of 2 elements
    send = mk(sum((a2a(rank, j, 2 * cnt(rank, j)) for j in range(size)), []), dt).view(-1, 2)
    out = torch.zeros(sum(cnt(r, rank) for r in range(size)), 2, dtype=dt)
    dist.all_to_all_single(out, send, output_split_sizes=[cnt(r, rank) for r in range(size)],
                           input_split_sizes=[cnt(rank, j) for j in range(size)])
    expect(f"all_to_all_single splits {name}", out.view(-1),
           mk(sum((a2a(r, rank, 2 * cnt(r, rank)) for r in range(size)), []), dt))
    outs = [torch.zeros(cnt(r, rank), dtype=dt) for r in range(size)]
    dist.all_to_all(outs, [mk(a2a(rank, j, cnt(rank, j)), dt) for j in range(size)])
    for r in range(size):
        expect(f"all_to_all {name} from {r}", outs[r], mk(a2a(r, rank, cnt(r, rank)), dt))
    gathered = [torch.zeros(N, dtype=dt) for _ in range(size)] if rank == 0 else None
    dist.gather(mine, gathered, dst=0)
    if rank == 0:
        for r in range(size):
            expect(f"gather {name} block {r}", gathered[r], mk(every[r], dt))
    out = torch.zeros(N, dtype=dt)
    dist.scatter(out, [mk(a2a(0, j, N), dt) for j in range(size)] if rank == size - 1 else None, src=size - 1)
    expect(f"scatter {name}", out, mk(a2a(0, rank, N), dt))
    dist.barrier()


def run():
    """Every check, on the default group (which must be stitch); the failure inside libstitch on a group of its own,
    which it leaves aborted, so that the default group stays usable."""
    rank, size = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "stitch", dist.get_backend()
    for dt in DTYPES:
        check_dtype(rank, size, dt)
    # Refused before communicating: every rank raises on its own, and the group stays usable.
    refused("bool", lambda: dist.all_reduce(torch.ones(3, dtype=torch.bool)), "dtype Bool is not supported")
    refused("complex", lambda: dist.broadcast(torch.ones(3, dtype=torch.complex64), 0), "is not supported")
    refused("non-contiguous", lambda: dist.all_reduce(torch.ones(4, 4).t()), "not contiguous")
    refused("AVG", lambda: dist.all_reduce(torch.ones(3), op=dist.ReduceOp.AVG), "no AVG")
    refused("BAND", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32), op=dist.ReduceOp.BAND),
            "is not supported")
    refused("sizes", lambda: dist.all_gather_into_tensor(torch.zeros(5), torch.ones(2)), "expected")
    t = torch.ones(3)
    dist.all_reduce(t)
    expect("all_reduce after refusals", t, torch.full((3,), float(size)))
    # A subgroup of the first and last ranks: its own communicator, with group ranks 0 and 1.
    sub = dist.new_group([0, size - 1], backend="stitch")
    if rank in (0, size - 1):
        t = torch.full((4,), float(rank + 1))
        dist.all_reduce(t, group=sub)
        expect("all_reduce on the subgroup", t, torch.full((4,), float(1 + size)))
        t = torch.full((2,), float(rank))
        dist.broadcast(t, src=size - 1, group=sub)  # src is a global rank; the group's root is its rank 1
        expect("broadcast on the subgroup", t, torch.full((2,), float(size - 1)))
        dist.destroy_process_group(sub)
    # A failure inside libstitch: rank 0 gives 5 elements, the others 4. Every rank must raise with stitch's text.
    g = dist.new_group(backend="stitch")
    msg = refused("count mismatch", lambda: dist.all_reduce(torch.ones(5 if rank == 0 else 4), group=g),
                  "stitch all_reduce: ")
    if not any(s in msg for s in ("ranks called the collective with different arguments", "communicator aborted")):
        sys.exit(f"rank {rank}: count mismatch: not stitch's message: {msg}")
    refused("after the abort", lambda: dist.all_reduce(torch.ones(4), group=g), "communicator aborted")
    dist.destroy_process_group(g)
    t = torch.ones(3)
    dist.all_reduce(t)
    expect("default group after the other's abort", t, torch.full((3,), float(size)))
    print(f"rank {rank}: {common.checked} results exact over {len(DTYPES)} dtypes; errors raised; mismatch: {msg}")


if __name__ == "__main__":
    common.main(run)
