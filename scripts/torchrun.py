#!/usr/bin/python3
"""torchrun.py - /usr/bin/torchrun (torch.distributed.run.main) with one fix that Debian's torch 1.13 needs under
Python 3.11; otherwise the same program, arguments and behaviour.

The bug: torch 1.13's Std.from_str("0") (the default of --redirects and --tee) looks the value up by iterating the
enum.IntFlag Std, and from Python 3.11 on iterating a Flag yields only its single-bit members, so NONE (0) and ALL
(3) are never found, from_str returns None and torchrun dies in to_map with "AttributeError: 'NoneType' object has
no attribute 'get'" before starting a worker. (Upstream PyTorch later looks the value up with Std(value).) Here
from_str is replaced by that lookup, only when the installed one is broken.

Use: /usr/bin/python3 scripts/torchrun.py --nproc_per_node=3 script.py ...   (as torchrun)

Installed, this script is bin/stitch-torchrun (bindings/torch/CMakeLists.txt writes it with its interpreter and
_PACKAGE_DIRS, the directories relative to the install prefix where `cmake --install` may have put the package
stitch_torch). It runs the stitch_torch installed with it: when that package's directory is not on sys.path (an
install under a prefix python3 does not search, such as /opt/stitch), the launcher puts it first on PYTHONPATH, for
itself and the workers it starts. Here (_PACKAGE_DIRS empty) PYTHONPATH is left as it is.
"""
import os
import re
import sys

_PACKAGE_DIRS = ()


def _find_package():
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    on_path = {os.path.realpath(p) for p in sys.path if p}
    for d in _PACKAGE_DIRS:
        d = os.path.realpath(os.path.join(prefix, d))
        if os.path.isfile(os.path.join(d, "stitch_torch", "__init__.py")):
            if d in on_path:
                return
            sys.path.insert(0, d)
            rest = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = d + os.pathsep + rest if rest else d
            return


_find_package()

from torch.distributed.elastic.multiprocessing import api  # noqa: E402


def _from_str(cls, vm):
    if re.match(api._VALUE_REGEX, vm):
        return cls(int(vm))
    if re.match(api._MAPPING_REGEX, vm):
        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError(f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>")


if api.Std.from_str("0") is None:
    api.Std.from_str = classmethod(_from_str)

from torch.distributed.run import main  # noqa: E402  (after the fix, which it uses)

if __name__ == "__main__":
    sys.exit(main())
