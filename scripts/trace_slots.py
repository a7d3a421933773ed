#!/usr/bin/env python3
"""Where a run's worker time went, from its timeline (BACKENDBENCH_TRACE_BLOCKS=FILE): the
requests' round trips summed by side and command, the timed blocks' host and measured time, the
waits before timed blocks, and the workers' starts (how many, how long each: device contexts
and Python workers). docs/PERFORMANCE.md ("Many GPUs") compares two runs' summaries.

    scripts/trace_slots.py TRACE.jsonl [TRACE2.jsonl ...]
"""
import collections
import json
import statistics
import sys


def summary(path):
    lines = [json.loads(line) for line in open(path) if line.strip()]
    total = collections.Counter()
    for l in lines:
        side, cmd = l.get("side", ""), l.get("cmd", "")
        if cmd == "block":
            total["timed blocks: host"] += l.get("host_s", 0) or 0
            total["timed blocks: measured"] += l.get("measured_s", 0) or 0
        elif cmd == "quiet":
            for k in ("spare_s", "starts_s", "stock_s"):
                total["waits before timing: " + k] += l.get(k, 0) or 0
        elif cmd:
            total[f"{side}: {cmd}"] += l.get("round_trip_s", 0) or 0
    print(f"== {path}")
    for key, seconds in total.most_common(20):
        print(f"{seconds:9.2f} s  {key}")
    for cmd in ("warm", "warm_spare", "warm_for_timing", "retire"):
        v = [l.get("round_trip_s", 0) for l in lines if l.get("side") == "start" and l.get("cmd") == cmd]
        if v:
            print(f"starts: {cmd:16} {len(v):4}  median {statistics.median(v):.3f} s  max {max(v):.3f} s  sum {sum(v):.1f} s")
    waits = [l for l in lines if l.get("cmd") == "job_wait"]
    if waits:
        print(f"jobs: {len(waits)}, {sum(1 for l in waits if l.get('fresh'))} started their own worker; waited {sum(l['round_trip_s'] for l in waits):.2f} s in all")
    forks = [l for l in lines if l.get("what") == "python_fork"]
    if forks:
        ok = [l.get("s", 0) for l in forks if l.get("ok")]
        print(f"Python workers forked from the warm interpreter: {len(ok)} of {len(forks)}" + (f", max {max(ok):.3f} s" if ok else ""))


for p in sys.argv[1:]:
    summary(p)
