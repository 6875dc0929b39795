"""torch_smoke.py - the installed python3-stitch-torch package in use (tests/package/run.sh runs it under
/usr/bin/stitch-torchrun on 2 processes): the backend imported from /usr/lib/python3's dist-packages, an all_reduce
on the default group and one on a new_group (split from it), each checked, and "rank R: ok" per rank.
"""
import os
import sys

import torch
import torch.distributed as dist

import stitch_torch

want = os.environ["STITCH_TORCH_EXPECT_DIR"]
if not os.path.realpath(stitch_torch.__file__).startswith(os.path.realpath(want) + os.sep):
    sys.exit(f"stitch_torch was imported from {stitch_torch.__file__}, not from {want}")
dist.init_process_group("stitch")
rank, size = dist.get_rank(), dist.get_world_size()
t = torch.full((4,), float(rank + 1))
dist.all_reduce(t)
g = dist.new_group()
u = torch.full((4,), float(rank + 1))
dist.all_reduce(u, group=g)
want_sum = size * (size + 1) / 2
if t.tolist() != [want_sum] * 4 or u.tolist() != [want_sum] * 4:
    sys.exit(f"rank {rank}: all_reduce gave {t.tolist()} and {u.tolist()}, expected {want_sum}")
dist.destroy_process_group()
print(f"rank {rank}: ok")
