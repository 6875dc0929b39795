#!/usr/bin/env python3
"""Run clang's static analyzer over the project's own C sources, as a build compiled them.

usage: scripts/analyze.py BUILD_DIR [-j N] [PATH_PREFIX ...]

BUILD_DIR must have been configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (the Makefile's `make werror` does
this for build-werror-clang). Every C file under runtime/, core/, dsl/, codegen/, tools/, tests/ and bindings/ (or
the prefixes given) is analyzed with the flags its build used; generated files (under the build directory) are
not. Each finding is printed as clang prints it (file:line:col: error: ... [checker], then notes: the path to
it); the exit status is 1 if there was any, 2 if clang could not run. Found by it first: a status returned unset
when a straight tcp header was not all there (exec_msg.c), which only ASan's stack made visible in a test.
"""
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

DEFAULT_DIRS = ("runtime/", "core/", "dsl/", "codegen/", "tools/", "tests/", "bindings/")


def usage(msg):
    sys.stderr.write("analyze.py: error: %s\nusage: scripts/analyze.py BUILD_DIR [-j N] [PATH_PREFIX ...]\n" % msg)
    sys.exit(2)


def parse(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if argv else 2)
    build, jobs, prefixes, rest = argv[0], os.cpu_count() or 1, [], argv[1:]
    while rest:
        a = rest.pop(0)
        if a == "-j":
            if not rest or not rest[0].isdigit() or int(rest[0]) < 1:
                usage("-j needs a positive number")
            jobs = int(rest.pop(0))
        else:
            prefixes.append(a)
    return build, jobs, tuple(prefixes) or DEFAULT_DIRS


def analyzer_command(entry):
    """The entry's compile command with the compiler told to analyze, and no object written."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = ["clang", "--analyze", "-Xanalyzer", "-analyzer-werror", "-Xanalyzer", "-analyzer-output=text"], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c" and not a.startswith("-W"):
            out.append(a)
    return out


def main():
    build, jobs, prefixes = parse(sys.argv[1:])
    path = os.path.join(build, "compile_commands.json")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(path) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        usage("%s: %s (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" % (path, e))
    todo = []
    for e in entries:
        rel = os.path.relpath(e["file"], root)
        if rel.endswith(".c") and rel.startswith(prefixes):
            todo.append((rel, e))
    if not todo:
        usage("%s lists no C file under %s" % (path, " ".join(prefixes)))

    def run(item):
        rel, e = item
        p = subprocess.run(analyzer_command(e), cwd=e["directory"], capture_output=True, text=True)
        return rel, p.returncode, p.stderr

    bad = 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for rel, rc, err in pool.map(run, sorted(todo, key=lambda t: t[0])):
            if rc != 0 or err.strip():
                bad += 1
                sys.stdout.write(err if err.strip() else "%s: clang exited with %d\n" % (rel, rc))
    print("analyze.py: %d of %d files with findings" % (bad, len(todo)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
