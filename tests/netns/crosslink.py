#!/usr/bin/env python3
"""crosslink.py - how many bytes of a schedule cross between groups (the converged link of tests/netns/ahc.sh).

    stitchc show algos.dsl -a ALGO -c all_reduce --layout 2,3 --format json | tests/netns/crosslink.py

Reads one `stitchc show --format json` schedule and prints, in units of the vector's size n (a unit is n/U; the
runtime's balanced split makes that exact up to one element): the bytes that go from group g to group h for every
ordered pair, the most any one direction carries, the steps that use the link, and a lower bound for the link's
share of the time, the sum over steps of the step's busiest direction (steps whose transfers must wait for the
previous step's data cannot overlap on the link). With every rank of a group behind one shaped link (one veth,
one tbf per direction) the time on the link is at least max-direction bytes / rate, whatever the algorithm.
"""
import json
import sys


def main():
    s = json.load(sys.stdin)
    sizes = s.get("groups") or [s["ranks"]]
    group = []
    for g, m in enumerate(sizes):
        group += [g] * m
    U = s["units"]
    total = {}
    steps_on_link = 0
    bound = 0.0
    for st in s["steps"]:
        here = {}
        for t in st["transfers"]:
            a, b = group[t["src"]], group[t["dst"]]
            if a == b:
                continue
            n = sum(e - b0 for b0, e in t["units"])
            here[(a, b)] = here.get((a, b), 0) + n
        if here:
            steps_on_link += 1
            bound += max(here.values()) / U
            for k, v in here.items():
                total[k] = total.get(k, 0) + v
    dirs = " ".join(f"{a}->{b}:{v / U:.3f}n" for (a, b), v in sorted(total.items()))
    most = max(total.values()) / U if total else 0.0
    print(f"{s['algorithm']} {s['collective']} groups {','.join(map(str, sizes))}: U={U} steps={len(s['steps'])} "
          f"link steps={steps_on_link} most per direction={most:.3f}n step-bound={bound:.3f}n ({dirs})")


if __name__ == "__main__":
    main()
