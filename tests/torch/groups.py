"""groups.py - what the stitch backend adds beyond the collectives: new_group mapped onto stitch_comm_split,
send/recv, barrier, and their errors, checked against values computed here. tests/torch/all.py runs it with
colls.py and ddp.py under one torchrun (tests/torch.cmake); it needs 2 ranks or more.

- new_group: a group of every rank but rank 0 and a group of the first and last ranks are split from the default
  communicator (stitch_torch._backend.made_by_split says so), while the ranks outside take part with a negative
  color and get no group; a group asking for another timeout than the default group's gets a communicator of its
  own by a rendezvous (a split keeps its parent's timeout). Each group's all_reduce and send/recv are checked.
- send/recv around a ring in several dtypes, rank 0 sending first and the others receiving first (torch's send is
  blocking, so a ring where every rank sends first could wait for ever).
- the refusals, raised before any rank communicates: a send to oneself, a tag, a receive from any source; then a
  receive larger than its send on a group of its own, which fails inside libstitch (STITCH_ERR_MISMATCH naming both
  counts) and aborts that group only.
"""
import datetime
import sys

import torch
import torch.distributed as dist

from stitch_torch import _backend

from common import expect, refused
import common


def ring(group, ranks, dtypes, what):
    """Around the ring of `ranks` (global ranks, in group order): each sends its block to the next."""
    me = dist.get_rank()
    i, n = ranks.index(me), len(ranks)
    nxt, prv = ranks[(i + 1) % n], ranks[(i - 1) % n]
    for dt in dtypes:
        block = lambda r: torch.arange(5, dtype=torch.float64).add(r * 7 % 11).to(dt)  # noqa: E731
        got = torch.zeros(5, dtype=dt)
        if i == 0:
            dist.send(block(me), nxt, group=group)
            dist.recv(got, prv, group=group)
        else:
            dist.recv(got, prv, group=group)
            dist.send(block(me), nxt, group=group)
        expect(f"{what} recv {dt} from {prv}", got, block(prv))


def check_group(group, ranks, what):
    me = dist.get_rank()
    if me not in ranks:
        if group != dist.GroupMember.NON_GROUP_MEMBER:
            sys.exit(f"rank {me}: {what}: a group for a rank outside it")
        return
    if dist.get_world_size(group) != len(ranks) or dist.get_rank(group) != ranks.index(me):
        sys.exit(f"rank {me}: {what}: rank {dist.get_rank(group)} of {dist.get_world_size(group)}, expected "
                 f"{ranks.index(me)} of {len(ranks)}")
    t = torch.full((3,), float(me + 1))
    dist.all_reduce(t, group=group)
    expect(f"{what} all_reduce", t, torch.full((3,), float(sum(r + 1 for r in ranks))))
    if len(ranks) > 1:
        ring(group, ranks, [torch.float32, torch.int64], what)
    dist.barrier(group=group)


def run():
    rank, size = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "stitch" and size >= 2, (dist.get_backend(), size)
    world = dist.distributed_c10d._get_default_group()
    if _backend.made_by_split(world):
        sys.exit(f"rank {rank}: the default group claims to come from a split")

    ring(None, list(range(size)), [torch.int8, torch.uint8, torch.int32, torch.float16, torch.bfloat16,
                                   torch.float64], "world")
    dist.barrier()

    # Groups split from the default communicator; ranks outside take part with a negative color.
    groups = [(list(range(1, size)), "new_group 1..p-1"), (sorted({0, size - 1}), "new_group {0, p-1}")]
    for ranks, what in groups:
        g = dist.new_group(ranks)  # the default backend, stitch
        if rank in ranks and not _backend.made_by_split(g):
            sys.exit(f"rank {rank}: {what}: not made by stitch_comm_split")
        check_group(g, ranks, what)
        if rank in ranks:
            dist.destroy_process_group(g)
    # Another timeout than the default group's: a communicator of its own, by a rendezvous.
    g = dist.new_group(backend="stitch", timeout=datetime.timedelta(seconds=77))
    if _backend.made_by_split(g) or _backend.timeout_ms(g) != 77000:
        sys.exit(f"rank {rank}: new_group(timeout=77 s): split {_backend.made_by_split(g)}, timeout "
                 f"{_backend.timeout_ms(g)} ms; expected a rendezvous with 77000 ms")
    check_group(g, list(range(size)), "new_group(timeout=77 s)")
    dist.destroy_process_group(g)

    # Refused before communicating.
    t = torch.ones(2)
    refused("send to itself", lambda: dist.send(t, rank), "is this rank")
    refused("tag", lambda: dist.send(t, (rank + 1) % size, tag=3), "tag 3 is not supported")
    refused("any source", lambda: dist.recv(t), "a source rank is needed")
    refused("non-contiguous send", lambda: dist.send(torch.ones(3, 3).t(), (rank + 1) % size), "not contiguous")

    # A receive larger than its send, on a split group of its own: fails inside libstitch and aborts that group.
    g = dist.new_group()
    msg = None
    if rank == 0:
        msg = refused("receive larger than the send", lambda: dist.recv(torch.zeros(6), 1, group=g), "stitch recv: ")
    elif rank == 1:
        msg = refused("send to a larger receive", lambda: (dist.send(torch.ones(4), 0, group=g),
                                                           dist.barrier(group=g)), "stitch ")
    if rank <= 1 and not any(s in msg for s in ("count", "aborted")):
        sys.exit(f"rank {rank}: count mismatch: not stitch's message: {msg}")
    dist.destroy_process_group(g)
    dist.barrier()
    t = torch.ones(3)
    dist.all_reduce(t)
    expect("default group after the other's abort", t, torch.full((3,), float(size)))
    print(f"rank {rank}: groups and point-to-point: {common.checked} results exact; mismatch: {msg}")


if __name__ == "__main__":
    common.main(run)
