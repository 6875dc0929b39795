"""stitch_torch - the torch.distributed backend "stitch" (libstitch's collectives and point-to-point on CPU tensors).

`import stitch_torch` registers the backend: init_process_group("stitch") and new_group(backend="stitch") then make
stitch groups (the C++ side is the extension module stitch_torch._backend, bindings/torch/stitch_torch.cpp).

new_group maps onto stitch_comm_split. torch calls a backend's creator on the new group's members only, while a
split is collective over the parent communicator; so this package wraps torch's _new_process_group_helper (which
every rank of the default group calls, in the same order, for every new_group): when the default group is stitch's
and the new group asks for stitch with the default group's timeout (a split keeps its parent's), every rank splits
the default communicator, members with color 0 and their rank in the group as key, the others with a negative
color, and the creator adopts the new communicator instead of a rendezvous through the store. Otherwise (another
default backend, another timeout, a torch whose helper has other parameters) the group has a communicator of its
own, by a rendezvous through the group's store.

empty() gives tensors in a group's registered memory (stitch_mem_alloc): a collective of that group whose tensors
are such memory on every rank reads them in place between the processes of a host (no copy through a ring), as
NCCL's ncclMemAlloc buffers are; pull_calls() counts the calls that did.
"""
import functools
import inspect

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as _c10d

from . import _backend

__all__ = ["empty", "pull_calls"]

def empty(*size, dtype=None, group=None):
    """An uninitialised CPU tensor of `size` (ints, or one tuple) and `dtype` (default: torch's default dtype) in the
    registered memory of `group`'s communicator (default: the default group; its backend must be stitch).

    A collective of that group whose tensors lie in such memory on every rank (whole, or any slice or view of one)
    moves each byte once between the processes of a host: a rank reduces or copies straight out of its peer's
    tensor. Other tensors, tensors of another group's memory, and a rank whose tensor is not registered make the
    call stream as usual, with the same result. The memory is a shared segment the host's other ranks map; it is
    freed when the tensor is (before the group's next call, which first waits for the group's calls in flight), and
    it keeps the group's communicator alive, also after destroy_process_group, for as long as it lives.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    pg = group if group is not None else _c10d._get_default_group()
    proto = torch.empty(0, dtype=dtype if dtype is not None else torch.get_default_dtype())
    return _backend.empty(pg, [int(d) for d in size], proto)


def pull_calls():
    """How many collectives of this process, over all its stitch groups, read their peers' tensors in place
    (registered memory; or STITCH_CMA=1): a way to see that empty()'s tensors did what they are for."""
    return _backend.pull_calls()


# The communicator split for the group being created, between the split and the creator's call (torch creates one
# group at a time on a process's main thread).
_pending = []


def _create(store, rank, size, timeout):
    """The creator registered for "stitch": adopts the pending split communicator, else a rendezvous."""
    if _pending:
        return _backend.adopt(_pending.pop(), rank, size)
    return _backend.create_process_group(store, rank, size, timeout)


def _split_default(args):
    """For a new stitch group: the split of the default group's communicator (collective over it), as a SplitComm
    (empty on a rank outside the group), or None when the group is to have a communicator of its own."""
    ranks = args.get("global_ranks_in_group")
    if not ranks or str(args.get("backend")).lower() != "stitch" or not _c10d.is_initialized():
        return None  # the default group itself, or another backend
    world = _c10d._get_default_group()
    timeout = args.get("timeout")
    if not _backend.is_stitch(world) or timeout is None:
        return None
    if int(timeout.total_seconds() * 1000) != _backend.timeout_ms(world):
        return None
    me = world.rank()
    if me in ranks:
        return _backend.split(world, 0, list(ranks).index(me))
    return _backend.split(world, -1, 0)


def _wrap(helper):
    sig = inspect.signature(helper)
    if not {"global_ranks_in_group", "backend", "timeout"} <= set(sig.parameters):
        return helper  # another torch: every group by a rendezvous

    @functools.wraps(helper)
    def new_process_group_helper(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        split = _split_default(bound.arguments)
        if split is None or split.empty:
            return helper(*args, **kwargs)
        _pending.append(split)
        try:
            return helper(*args, **kwargs)
        finally:
            _pending.clear()  # not adopted (the helper failed first): the SplitComm destroys the communicator

    new_process_group_helper._stitch_wrapped = True
    return new_process_group_helper


if not hasattr(dist.Backend, "STITCH"):
    dist.Backend.register_backend("stitch", _create)
if not getattr(_c10d._new_process_group_helper, "_stitch_wrapped", False):
    _c10d._new_process_group_helper = _wrap(_c10d._new_process_group_helper)
