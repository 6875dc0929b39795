"""all.py - the torch backend's test under one torchrun, to pay PyTorch's start-up once: init_process_group("stitch")
with torchrun's store, then colls.py's checks (every collective and dtype, the errors), groups.py's (new_group by
stitch_comm_split, send/recv, barrier, their errors) and ddp.py's comparison of DistributedDataParallel on stitch
and on gloo. tests/torch.cmake runs it as ctest torch.np3, and from a staged install on 2 and 3 processes.
"""
import os
import sys

import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import colls  # noqa: E402
import ddp  # noqa: E402
import groups  # noqa: E402

if __name__ == "__main__":
    dist.init_process_group("stitch")
    colls.run()
    groups.run()
    ddp.run()
    dist.destroy_process_group()
