#!/usr/bin/env bash
# On the GPU machine: the y = 3*x float32 kernel (shipped myop_cuda_naive) at 64K, 1M, 16M and
# 128M elements, timed in one call by backendbench (cold, the default; also hot and without
# the blocking kernel), by Nsight Compute (gpu__time_duration.sum, --clock-control none, its
# default cache control flushing caches before each kernel) and by triton.testing.do_bench;
# prints the table that docs/PERFORMANCE.md keeps.
#   scripts/bench_gpu_timing.sh [build dir] [out dir]
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-gpu}"
out="${2:-${OUT:-gpu-logs}}"
mkdir -p "$out"
root="$build/bench_roots/gpu_timing"
rm -rf "$root" && mkdir -p "$root/myop"
cp bench/gpu_timing/gen_input.yaml "$root/myop/"
cp "$build/custom_ops/myop/myop_cuda_naive.so" "$build/custom_ops/myop/myop_reference.so" "$root/myop/"
plugin="$root/myop/myop_cuda_naive.so"
export PYTHONUNBUFFERED=1

run_ours() {  # label, extra flags
  local label="$1"; shift
  "$build/backendbench" --custom-ops-root "$root" --impls myop_cuda_naive --log-dir "$out/ours_$label" "$@" > "$out/ours_$label.log" 2>&1 \
    || { echo "backendbench ($label) failed:"; tail -20 "$out/ours_$label.log"; }
}
run_ours cold
run_ours hot --hot
run_ours noblock --disable-blocking-kernel

ncu --csv --metrics gpu__time_duration.sum --clock-control none -k regex:scale_kernel --log-file "$out/ncu.csv" \
  python3 scripts/gpu_timing_compare.py driver --plugin "$plugin" --mode ncu > "$out/ncu_driver.log" 2>&1 \
  || { echo "ncu failed:"; tail -20 "$out/ncu_driver.log"; }
python3 scripts/gpu_timing_compare.py driver --plugin "$plugin" --mode dobench > "$out/dobench.json" 2> "$out/dobench.log" \
  || { echo "do_bench failed:"; tail -20 "$out/dobench.log"; }

echo "== y = 3*x float32: cold median against ncu ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F))"
python3 scripts/gpu_timing_compare.py table \
  --ours "$out/ours_cold/results.json,label=backendbench cold (median less the events' own cost),field=kernel_median_s" \
  --ours "$out/ours_cold/results.json,label=cold: events' median" \
  --ours "$out/ours_noblock/results.json,label=cold: no blocking kernel" --ours "$out/ours_hot/results.json,label=hot" \
  --ncu "$out/ncu.csv" --dobench "$out/dobench.json" | tee "$out/timing_table.md"
grep -hE "PASS .*performance" "$out/ours_cold.log" | sed 's/^/  /'
grep -hE "^cuda:0" "$out/ours_cold.log" | head -1
