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


def per_slot(path):
    """Each slot's wall, from its first job to its last job's end, and what filled it: waits for
    workers (job_wait, quiet), each side's requests, timed blocks' host time, and what is left
    (the driver's own work between requests). A slot's requests carry `slot` (device:index)."""
    lines = [json.loads(line) for line in open(path) if line.strip()]
    # A slot is named "cuda:1#0" or "cpu#3", a test's slot "cuda:1" or "cpu:0": the CPU's slots are one here.
    def key(name):
        name = name.split("#")[0]
        return "cpu" if name.startswith("cpu") else name
    jobs = collections.defaultdict(list)  # slot -> [(start, end)]
    opened = {}
    for l in lines:
        side = l.get("side", "")
        if l.get("cmd") == "job":
            opened[side] = l["t"]
        elif l.get("cmd") == "job_done" and side in opened:
            jobs[key(side)].append((opened.pop(side), l["t"]))
    if not jobs:
        return
    spent = collections.defaultdict(collections.Counter)
    for l in lines:
        slot, cmd = l.get("slot"), l.get("cmd", "")
        slot = key(slot) if slot else slot
        if not slot:
            if l.get("cmd") == "quiet":
                spent[key(l.get("side", ""))]["wait: before timing"] += sum(l.get(k, 0) or 0 for k in ("spare_s", "starts_s", "stock_s"))
            continue
        if cmd == "job_wait":
            spent[slot]["wait: job's workers"] += l.get("round_trip_s", 0) or 0
        elif cmd == "block":
            spent[slot]["timed blocks: host"] += l.get("host_s", 0) or 0
        elif cmd:
            spent[slot][l.get("side", "") + ": " + cmd] += l.get("round_trip_s", 0) or 0
    print(f"== per slot: {path}")
    for slot in sorted(jobs):
        spans = jobs[slot]
        first, last = min(a for a, _ in spans), max(b for _, b in spans)
        in_jobs = sum(b - a for a, b in spans)
        accounted = sum(spent[slot].values())
        print(f"{slot}: jobs {len(spans)}, first job at {first:.2f} s, last ends {last:.2f} s, in jobs {in_jobs:.2f} s, "
              f"between jobs {last - first - in_jobs:.2f} s, unaccounted in jobs {in_jobs - accounted:.2f} s")
        for key, seconds in spent[slot].most_common(8):
            print(f"    {seconds:7.2f} s  {key}")


for p in sys.argv[1:]:
    summary(p)
    per_slot(p)
