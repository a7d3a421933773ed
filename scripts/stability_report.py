#!/usr/bin/env python3
"""How far repeated runs of the same sweep disagree: per (implementation, case) the spread of the
reported medians, (max - min) / min over the runs, for cases of at least 1M elements; the
overall geomean speedup of each run and its spread; and each run's wall time against the time
spent inside timed regions.   stability_report.py results1.json results2.json ..."""
import json
import math
import re
import sys


def elements(case):
    dims = [int(v) for k, v in re.findall(r"(n|rows|cols)=(\d+)", case)]
    return math.prod(dims) if dims else 0


def main(paths):
    docs = [json.load(open(p)) for p in paths]
    medians = {}
    for d in docs:
        for r in d["tests"]:
            if r.get("kind") == "performance" and r.get("verdict") == "PASS" and "timing" in r:
                medians.setdefault((r["impl"], r["case"]), []).append(r["timing"]["median_s"])
    print(f"| implementation | case | elements | medians over {len(docs)} runs (µs) | spread |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for (impl, case), ms in sorted(medians.items()):
        n = elements(case)
        spread = (max(ms) - min(ms)) / min(ms)
        big = n >= 1 << 20
        if big and len(ms) == len(docs):
            worst = max(worst, spread)
        print(f"| {impl} | {case} | {n} | {', '.join(f'{m * 1e6:.2f}' for m in ms)} | {spread * 100:.2f}%{'' if big else ' (under 1M: not a target)'} |")
    geo = [d["scores"]["geomean_speedup"] for d in docs]
    print()
    print(f"- largest spread of a median, cases of 1M elements or more: {worst * 100:.2f}% (target 1%)")
    if all(g is not None for g in geo):
        gs = (max(geo) - min(geo)) / min(geo)
        print(f"- geomean speedup per run: {', '.join(f'{g:.4f}' for g in geo)}; spread {gs * 100:.2f}% (target 1%)")
    for i, d in enumerate(docs, 1):
        wall, measured = d.get("wall_time_s", 0), d.get("measured_time_s", 0)
        if measured:
            print(f"- run {i}: wall {wall:.1f} s, inside timed regions {measured:.2f} s, wall/measured {wall / measured:.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
