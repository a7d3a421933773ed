#!/usr/bin/env python3
"""The plainest Triton y = 3*x kernel and torch's copy over 1 GiB, timed as backendbench's peak
strategies are (best of 10 runs after 3 warm-ups, CUDA events) and by do_bench, next to the
peak backendbench measured (the `devices` of a results.json of a run that used the GPU).

  bench_peak_bandwidth.py RESULTS_JSON

Prints a Markdown table for docs/PERFORMANCE.md. Bytes moved: read plus written."""
import json
import sys

import torch
import triton
import triton.language as tl
import triton.testing


@triton.jit
def triple(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 3 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def best_of_events(fn, runs=13, warmups=3):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = None
    for r in range(runs):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop)
        if r >= warmups and (best is None or ms < best):
            best = ms
    return best


def main():
    results = json.load(open(sys.argv[1]))
    ours = None
    for kind in results.get("devices", []):
        if kind.get("name") == "cuda" and kind.get("available"):
            ours = kind["devices"][0]["measured_bandwidth"]
    n = (1 << 30) // 4
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    moved = 2 * n * 4
    grid = (triton.cdiv(n, 1024),)
    run_triton = lambda: triple[grid](x, y, n, BLOCK=1024)
    run_copy = lambda: y.copy_(x)
    rows = []
    for name, fn in [("Triton y = 3*x (BLOCK 1024)", run_triton), ("torch copy_", run_copy)]:
        ev = best_of_events(fn)
        db = triton.testing.do_bench(fn, return_mode="median")
        rows.append((name, moved / (ev * 1e-3) / 1e9, moved / (db * 1e-3) / 1e9))
    print("| strategy | GB/s, best of 10 (events) | GB/s, do_bench median |")
    print("|---|---|---|")
    if ours:
        for s in ours.get("strategies", []):
            mark = " **(peak)**" if s["strategy"] == ours.get("strategy") else ""
            print(f"| backendbench: {s['strategy']}{mark} | {s['gbps']:.0f} | |")
    for name, ev, db in rows:
        print(f"| {name} | {ev:.0f} | {db:.0f} |")
    if ours:
        best_other = max(r[1] for r in rows)
        verdict = "met" if ours["copy_gbps"] >= best_other else "MISSED"
        print(f"\nbackendbench's peak {ours['copy_gbps']:.0f} GB/s against the best of Triton/torch {best_other:.0f} GB/s "
              f"under the same conditions: {verdict}")


if __name__ == "__main__":
    main()
