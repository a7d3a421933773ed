#!/usr/bin/env python3
"""The plainest Triton y = 3*x kernel and torch's copy over 1 GiB, timed as backendbench's peak
strategies are (best of 10 runs after 3 warm-ups, CUDA events) and by do_bench, next to the
peak backendbench measured (the `devices` of a results.json of a run that used the GPU); then
torch.matmul at 8192^3 in fp32, fp16 and bf16 by do_bench, next to backendbench's compute
peaks (every strategy it measured, per kind).

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
    compute = []
    for kind in results.get("devices", []):
        if kind.get("name") == "cuda" and kind.get("available"):
            ours = kind["devices"][0]["measured_bandwidth"]
            compute = kind["devices"][0].get("measured_compute", [])
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
    compute_table(compute)


def compute_table(ours):
    """backendbench's compute strategies against torch.matmul (cuBLAS) of 8192^3."""
    n = 8192
    flops = 2 * n ** 3
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for kind, dtype in [("fp32", torch.float32), ("fp16 tensor", torch.float16), ("bf16 tensor", torch.bfloat16)]:
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        ms = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
        rows.append((kind, flops / (ms * 1e-3) / 1e12))
        del a, b
    print("\n| kind | backendbench strategy | TFLOP/s |\n|---|---|---|")
    best = {}
    for c in ours:
        best[c["kind"]] = max(best.get(c["kind"], 0), c["tflops"])
        print(f"| {c['kind']} | {c.get('strategy', '')} | {c['tflops']:.1f} |")
    for kind, tf in rows:
        print(f"| {kind} | torch.matmul 8192^3 (do_bench median) | {tf:.1f} |")
    for kind, tf in rows:
        if kind in best:
            verdict = "met" if best[kind] >= 0.97 * tf else "MISSED"
            print(f"- {kind}: backendbench's peak {best[kind]:.1f} TFLOP/s against torch.matmul {tf:.1f}: {verdict} (within 3%)")


if __name__ == "__main__":
    main()
