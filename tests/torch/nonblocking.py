"""nonblocking.py - async_op=True on the stitch backend is real: a call returns while it is in flight, its Work and
future complete when libstitch's request does, and failures and timeouts reach them. tests/torch/all.py runs it with
the others under one torchrun (tests/torch.cmake); it needs 2 ranks or more. Nothing here waits by sleeping: a rank
that must still be busy when another checks on it waits for a message on a gloo group.

- overlap: rank 0's async all_reduce is not complete when rank 0 tells the others (over gloo) to call theirs, which
  they do only on that word; its future then completes with the sum, and a .then() on it runs. The same for an
  irecv whose sender sends only on rank 0's word.
- independence: rank 0's isend completes (wait() returns) while its earlier irecv is still pending (the receive's
  sender waits for rank 0's word, sent after the wait).
- in flight: every collective kind issued async at once (list forms included, whose outputs are copied when the
  request completes) and waited for in reverse order; a ring of isend/irecv four rounds deep in both orders; and
  batch_isend_irecv.
- errors: a count mismatch fails every rank's Work (wait raises stitch's message, is_completed, the future raises;
  torch 1.13 deprecates is_success and cannot return exception() to Python); Work.wait(timeout) raises while the
  call is in flight and the Work completes afterwards; a group whose timeout is 2 s fails rank 0's all_reduce that
  no peer joins, with stitch's message naming the ranks, within that timeout.
"""
import datetime
import sys
import time

import torch
import torch.distributed as dist

from common import expect, refused
import common


def word(gloo, src):
    """The message that synchronises: src tells every other rank to go on (a broadcast over gloo)."""
    dist.broadcast(torch.ones(1), src, group=gloo)


def overlap(rank, size, gloo):
    t = torch.full((1000,), float(rank + 1))
    want = torch.full((1000,), float(size * (size + 1) // 2))
    if rank == 0:
        w = dist.all_reduce(t, async_op=True)
        if w.is_completed():
            sys.exit("rank 0: the async all_reduce completed before any other rank called it")
        then = w.get_future().then(lambda f: f.value()[0] * 2)
        word(gloo, 0)
        w.wait()
        expect("overlap: .then() of the all_reduce's future", then.wait(), want * 2)
    else:
        word(gloo, 0)
        dist.all_reduce(t)
    expect("overlap: all_reduce", t, want)
    data = lambda: torch.arange(3000, dtype=torch.int32) * 3 + 1  # noqa: E731
    if rank == 0:
        got = torch.zeros(3000, dtype=torch.int32)
        w = dist.irecv(got, 1)
        if w.is_completed():
            sys.exit("rank 0: the irecv completed before rank 1 was told to send")
        word(gloo, 0)
        w.wait()
        expect("overlap: irecv", got, data())
    else:
        word(gloo, 0)
        if rank == 1:
            dist.isend(data(), 0).wait()


def independence(rank, gloo):
    if rank == 0:
        got = torch.zeros(5)
        r = dist.irecv(got, 1)
        dist.isend(torch.full((5,), 7.0), 1).wait()  # must not wait for the irecv before it
        if r.is_completed():
            sys.exit("rank 0: the irecv completed before rank 1 was told to send")
        word(gloo, 0)
        r.wait()
        expect("independence: irecv after the isend's wait", got, torch.full((5,), 8.0))
    else:
        if rank == 1:
            got = torch.zeros(5)
            dist.irecv(got, 0).wait()
            expect("independence: rank 1's irecv", got, torch.full((5,), 7.0))
        word(gloo, 0)
        if rank == 1:
            dist.isend(torch.full((5,), 8.0), 0).wait()


def in_flight(rank, size):
    n = 6
    mine = torch.arange(n, dtype=torch.float32) + rank
    every = [torch.arange(n, dtype=torch.float32) + r for r in range(size)]
    works, checks = [], []
    a = mine.clone()
    works.append(dist.all_reduce(a, async_op=True))
    checks.append(lambda: expect("in flight: all_reduce", a, sum(every)))
    outs = [torch.zeros(n) for _ in range(size)]
    works.append(dist.all_gather(outs, mine, async_op=True))
    checks.append(lambda: [expect(f"in flight: all_gather block {r}", outs[r], every[r]) for r in range(size)])
    rs = torch.zeros(n)
    works.append(dist.reduce_scatter(rs, [mine * (j + 1) for j in range(size)], async_op=True))
    checks.append(lambda: expect("in flight: reduce_scatter", rs, sum(every) * (rank + 1)))
    b = mine.clone()
    works.append(dist.broadcast(b, src=size - 1, async_op=True))
    checks.append(lambda: expect("in flight: broadcast", b, every[size - 1]))
    a2a = torch.zeros(size * 2)
    works.append(dist.all_to_all_single(a2a, torch.arange(size * 2, dtype=torch.float32) + 10 * rank, async_op=True))
    checks.append(lambda: expect("in flight: all_to_all_single", a2a, torch.tensor(
        [10.0 * r + 2 * rank + k for r in range(size) for k in range(2)])))
    gathered = [torch.zeros(n) for _ in range(size)] if rank == 0 else None
    works.append(dist.gather(mine, gathered, dst=0, async_op=True))
    checks.append(lambda: rank != 0 or [expect(f"in flight: gather {r}", gathered[r], every[r]) for r in range(size)])
    works.append(dist.barrier(async_op=True))
    # a ring of isend/irecv four rounds deep, both orders on alternate ranks and rounds
    right, left = (rank + 1) % size, (rank - 1) % size
    ins = [torch.zeros(100, dtype=torch.int64) for _ in range(4)]
    block = lambda src, rnd: torch.arange(100, dtype=torch.int64) + 1000 * src + 7 * rnd  # noqa: E731
    for rnd in range(4):
        pair = [lambda: dist.isend(block(rank, rnd), right), lambda: dist.irecv(ins[rnd], left)]
        for issue in (pair if (rank + rnd) % 2 else pair[::-1]):
            works.append(issue())
    for w in reversed(works):
        w.wait()
    for c in checks:
        c()
    for rnd in range(4):
        expect(f"in flight: ring round {rnd}", ins[rnd], block(left, rnd))
    got = torch.zeros(4, dtype=torch.float64)
    ops = [dist.P2POp(dist.irecv, got, left), dist.P2POp(dist.isend, torch.full((4,), float(rank), dtype=torch.float64), right)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    expect("batch_isend_irecv", got, torch.full((4,), float(left), dtype=torch.float64))


def errors(rank, size, gloo):
    # A count mismatch on a group of its own: every rank's Work fails with stitch's message.
    g = dist.new_group()
    w = dist.all_reduce(torch.ones(5 if rank == 0 else 4), group=g, async_op=True)
    msg = refused("async count mismatch", w.wait, "stitch all_reduce: ")
    if not w.is_completed():
        sys.exit(f"rank {rank}: the failed Work is not completed")
    refused("its future", w.get_future().wait, "stitch all_reduce: ")
    dist.destroy_process_group(g)
    # Work.wait(timeout) gives up while the call is in flight; the call completes once the others join.
    t = torch.full((3,), float(rank))
    if rank == 0:
        w = dist.all_reduce(t, async_op=True)
        refused("Work.wait(50 ms)", lambda: w.wait(timeout=datetime.timedelta(milliseconds=50)),
                "not complete after 50 ms")
        word(gloo, 0)
        w.wait()
    else:
        word(gloo, 0)
        dist.all_reduce(t)
    expect("all_reduce after Work.wait's timeout", t, torch.full((3,), float(size * (size - 1) // 2)))
    # The group's timeout reaches the request: rank 0's all_reduce, which no peer joins, fails after 2 s.
    g = dist.new_group(backend="stitch", timeout=datetime.timedelta(seconds=2))
    timed = None
    if rank == 0:
        w = dist.all_reduce(torch.ones(3), group=g, async_op=True)
        t0 = time.monotonic()
        timed = refused("the group's timeout", w.wait, "timed out")
        took = time.monotonic() - t0
        if "rank 0" not in timed or "waiting for rank" not in timed or took > 30:
            sys.exit(f"rank 0: group timeout after {took:.1f} s: {timed}")
    word(gloo, 0)  # the peers go on (and destroy the group) only once rank 0 has failed
    dist.destroy_process_group(g)
    return msg, timed


def run():
    rank, size = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "stitch" and size >= 2, (dist.get_backend(), size)
    gloo = dist.new_group(backend="gloo")
    overlap(rank, size, gloo)
    independence(rank, gloo)
    in_flight(rank, size)
    mismatch, timed = errors(rank, size, gloo)
    dist.destroy_process_group(gloo)
    t = torch.ones(3)
    dist.all_reduce(t)
    expect("default group after the others' failures", t, torch.full((3,), float(size)))
    print(f"rank {rank}: async_op: {common.checked} results exact; mismatch: {mismatch}"
          + (f"; group timeout: {timed}" if timed else ""))


if __name__ == "__main__":
    common.main(run)
