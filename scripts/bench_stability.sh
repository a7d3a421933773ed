#!/usr/bin/env bash
# On the GPU machine: the shipped CUDA implementations' performance sweep, N full runs (default
# 5), and how far their medians and the overall geomean speedup move between runs.
#   scripts/bench_stability.sh [build dir] [out dir] [runs]
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-gpu}"
out="${2:-${OUT:-gpu-logs}}"
runs="${3:-5}"
mkdir -p "$out"
impls=myop_cuda_naive,myop_cuda_vec,rmsnorm_cuda_block,rmsnorm_cuda_warp
files=()
for i in $(seq 1 "$runs"); do
  "$build/backendbench" --impls "$impls" --log-dir "$out/stability_$i" \
    > "$out/stability_$i.log" 2>&1
  files+=("$out/stability_$i/results.json")
done
python3 scripts/stability_report.py "${files[@]}" | tee "$out/stability.md"
