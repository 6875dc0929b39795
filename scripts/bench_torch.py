#!/usr/bin/python3
"""bench_torch.py - torch.distributed.all_reduce on the gloo and stitch backends, same machine, same run, printed
as nccl-tests prints (time per call and bus bandwidth for each, and their ratio), stitch twice: on an ordinary tensor
and on a tensor of the stitch group's registered memory (stitch_torch.empty: read in place by the host's peers).

    /usr/bin/python3 scripts/bench_torch.py [--procs 2,4] [-b 8] [-e 64M] [-f 4] [--dtype float32]
                                            [--secs 0.2] [--module-dir build/lib]

Without torchrun's variables it starts itself once per process count, under scripts/torchrun.py (torchrun, fixed for
Debian's torch 1.13 under Python 3.11), and each job prints its table. The rendezvous (c10d, one node) listens on a
port free when the job starts (the kernel's pick for a socket bound to port 0 on 127.0.0.1, then closed), not on
--standalone's fixed 29400, which another job on the host (a second bench, a test) may hold. Inside a job every
process makes a gloo group and a stitch group over all ranks; for each size it warms both up, then alternates
gloo and stitch rounds (each round a fixed number of calls, timed on every rank, the slowest rank's time kept) so
that a change in the machine's load hits both alike. The figure is the median round, per call.
busbw = algbw * 2 (p - 1) / p, algbw = bytes / time (nccl-tests' all_reduce convention). gloo/stitch, gloo/reg =
gloo time / stitch time (ordinary, registered tensor): above 1, stitch is faster. Sum over fp32 by default; the values are checked once per size.
"""
import argparse
import os
import statistics
import socket
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def args_of(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", default="2,4", help="process counts, one torchrun job each (default 2,4)")
    ap.add_argument("-b", "--begin", default="8", help="smallest message in bytes (default 8)")
    ap.add_argument("-e", "--end", default="64M", help="largest message in bytes (default 64M)")
    ap.add_argument("-f", "--factor", type=int, default=4, help="size multiplier (default 4)")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--secs", type=float, default=0.2, help="target seconds per round (default 0.2)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per backend and size (default 5)")
    ap.add_argument("--module-dir", default=os.path.join(HERE, "..", "build", "lib"),
                    help="where stitch_torch*.so is (default build/lib)")
    return ap.parse_args(argv)


def sizes(a):
    s, end = parse_size(a.begin), parse_size(a.end)
    while s <= end:
        yield s
        if s < end and s * a.factor > end:
            s = end  # always end on the largest size asked for
        else:
            s *= a.factor


def free_port():
    """A TCP port free on 127.0.0.1 now (another process could take it before torchrun binds it: unlikely)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(a):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.module_dir) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    for p in a.procs.split(","):
        cmd = [sys.executable, os.path.join(HERE, "torchrun.py"), "--nnodes=1", "--rdzv_backend=c10d",
               f"--rdzv_endpoint=127.0.0.1:{free_port()}", f"--rdzv_id={uuid.uuid4()}", f"--nproc_per_node={p}",
               os.path.abspath(__file__)] + sys.argv[1:]
        rc = subprocess.call(cmd, env=env)
        if rc:
            sys.exit(f"bench_torch: the job with {p} processes failed (exit {rc})")


def timed_round(dist, t, group, calls):
    dist.barrier(group=group)
    t0 = time.perf_counter()
    for _ in range(calls):
        dist.all_reduce(t, group=group)
    return (time.perf_counter() - t0) / calls


def bench(a):
    import torch
    import torch.distributed as dist
    import stitch_torch  # noqa: F401  (registers "stitch")

    dist.init_process_group("gloo")
    rank, p = dist.get_rank(), dist.get_world_size()
    groups = {"gloo": dist.group.WORLD, "stitch": dist.new_group(backend="stitch")}
    groups["registered"] = groups["stitch"]  # the stitch group on a tensor of its registered memory
    dtype = getattr(torch, a.dtype)
    esize = torch.tensor([], dtype=dtype).element_size()
    slowest = lambda x: (dist.all_reduce(x, op=dist.ReduceOp.MAX), x.item())[1]  # noqa: E731  over gloo
    if rank == 0:
        print(f"# all_reduce sum {a.dtype}, {p} processes on one host ({os.cpu_count()} CPUs), torch "
              f"{torch.__version__}; time per call (us, median of {a.rounds} rounds, slowest rank), busbw GB/s")
        print(f"# {'bytes':>10} {'count':>10} | {'gloo us':>10} {'busbw':>7} | {'stitch us':>10} {'busbw':>7} | "
              f"{'reg us':>10} {'busbw':>7} | {'gloo/stitch':>11} {'gloo/reg':>8}")
    for nbytes in sizes(a):
        n = max(1, nbytes // esize)
        ts = {"gloo": torch.ones(n, dtype=dtype)}
        ts["stitch"] = ts["gloo"]
        ts["registered"] = stitch_torch.empty(n, dtype=dtype, group=groups["stitch"])
        for name, g in groups.items():  # warm up and check the result once
            t = ts[name]
            t.fill_(1)
            dist.all_reduce(t, group=g)
            if t[0].item() != p or t[-1].item() != p:
                sys.exit(f"bench_torch: {name} all_reduce of {n} gave {t[0].item()}, expected {p}")
            t.fill_(1)
        # calls per round: enough for a.secs on the slowest column, from one call of each
        one = max(slowest(torch.tensor([timed_round(dist, ts[k], g, 1)], dtype=torch.float64))
                  for k, g in groups.items())
        calls = max(1, min(10000, int(a.secs / max(one, 1e-7))))
        calls = int(slowest(torch.tensor([float(calls)], dtype=torch.float64)))
        got = {name: [] for name in groups}
        for _ in range(a.rounds):
            for name, g in groups.items():  # interleaved: gloo, stitch, registered, gloo, ...
                got[name].append(slowest(torch.tensor([timed_round(dist, ts[name], g, calls)],
                                                      dtype=torch.float64)))
        if rank == 0:
            med = {k: statistics.median(v) for k, v in got.items()}
            bus = {k: n * esize / v * 2 * (p - 1) / p / 1e9 for k, v in med.items()}
            print(f"  {n * esize:>10} {n:>10} | {med['gloo'] * 1e6:>10.1f} {bus['gloo']:>7.3f} | "
                  f"{med['stitch'] * 1e6:>10.1f} {bus['stitch']:>7.3f} | "
                  f"{med['registered'] * 1e6:>10.1f} {bus['registered']:>7.3f} | "
                  f"{med['gloo'] / med['stitch']:>11.2f} {med['gloo'] / med['registered']:>8.2f}", flush=True)
        del ts
    dist.destroy_process_group(groups["stitch"])
    dist.destroy_process_group()


if __name__ == "__main__":
    a = args_of(sys.argv[1:])
    if "RANK" in os.environ and "LOCAL_WORLD_SIZE" in os.environ:
        bench(a)
    else:
        launch(a)
