#!/usr/bin/env bash
# What fresh inputs for every timed CPU sample cost (issue 39 item 1; docs/PERFORMANCE.md, "Fresh
# inputs"): the same timed commands with them and without (BACKENDBENCH_SANDBOX_OFF=fresh), one
# warm-up each, then RUNS pairs alternating (with, without), in one call so that the ratios
# compare (no hyperfine needed: the GPU machine has none); the median wall of each, and the
# host's time making the inputs (fresh_inputs_s, summed over the last run's tests).
# Commands: the ported BackendBench-py myop suite (C plugins), one op's loop (--ops myop --impls
# IMPL, myop_cpp by default), and the shipped ops' CPU implementations (SHIPPED=0 leaves it out).
#
# GPU=1 (on the GPU machine): the suite ported to CUDA, IMPL myop_cuda_vec, and the shipped ops'
# CUDA implementations on device 0 (fresh inputs made on the device from the host's seed).
#
#   [RUNS=5] [IMPL=myop_cpp] [SHIPPED=1] [GPU=0] scripts/bench_fresh_inputs.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
bb="$build/backendbench"
runs="${RUNS:-5}"
gpu="${GPU:-0}"
impl="${IMPL:-$([[ $gpu == 1 ]] && echo myop_cuda_vec || echo myop_cpp)}"
suite="$build/bench_roots/myop_suite$([[ $gpu == 1 ]] && echo _cuda)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $(nproc) cores, git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $runs runs each"
commands=("myop suite (ported), timed|--custom-ops-root $suite"
          "--ops myop --impls $impl, timed|--custom-ops-root $build/custom_ops --ops myop --impls $impl")
if [[ "${SHIPPED:-1}" == 1 && $gpu == 1 ]]; then
  cuda_impls=$(ls "$build"/custom_ops/*/*cuda*.so | xargs -n1 basename | sed 's/\.so$//' | grep -v _reference | paste -sd, -)
  commands+=("the shipped ops' CUDA implementations on device 0, timed|--custom-ops-root $build/custom_ops --impls $cuda_impls --devices 0")
elif [[ "${SHIPPED:-1}" == 1 ]]; then
  cpu_impls=$(ls "$build"/custom_ops/*/*.so | xargs -n1 basename | sed 's/\.so$//' | grep -v -e _reference -e cuda -e hip -e triton | paste -sd, -)
  commands+=("the shipped ops' CPU implementations, timed|--custom-ops-root $build/custom_ops --impls $cpu_impls")
fi
for what in "${commands[@]}"; do
  name="${what%%|*}"
  read -r -a args <<< "${what#*|}"
  echo
  echo "## $name"
  run_side() {  # on: every wall; off: without fresh inputs
    local off=""
    [[ $1 == off ]] && off=fresh
    BACKENDBENCH_SANDBOX_OFF="$off" "$bb" "${args[@]}" --log-dir "$out/$1" -q > /dev/null 2>&1 || true
  }
  run_side on; run_side off  # warm-up
  : > "$out/walls"
  for r in $(seq "$runs"); do
    for side in on off; do
      s0=$(date +%s%N)
      run_side "$side"
      echo "$side $(( ($(date +%s%N) - s0) / 1000000 ))" >> "$out/walls"
    done
  done
  python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
walls = {"on": [], "off": []}
for line in open(out + "/walls"):
    side, ms = line.split()
    walls[side].append(int(ms) / 1000)
for side, label in (("on", "fresh inputs"), ("off", "without (BACKENDBENCH_SANDBOX_OFF=fresh)")):
    r = json.load(open(f"{out}/{side}/results.json"))
    t = r.get("phases", {}).get("tests", {})
    verdicts = {}
    for x in r["tests"]: verdicts[x["verdict"]] = verdicts.get(x["verdict"], 0) + 1
    w = walls[side]
    print(f"| {label} | {statistics.median(w):.2f} s ({min(w):.2f}-{max(w):.2f}) | {len(r['tests'])} tests {verdicts} | "
          f"making inputs {t.get('fresh_inputs_s', 0):.3f} s, timing {t.get('timing_s', 0):.2f} s (summed over tests) |")
print(f"ratio of medians: {statistics.median(walls['on']) / statistics.median(walls['off']):.3f}")
PY
done
