#!/usr/bin/env bash
# Where a sweep's wall time goes on a host of several GPUs, in one call: builds the host and the
# shipped ops (no tests), then runs, each with its timeline (BACKENDBENCH_TRACE_BLOCKS) kept:
#   gpu-0, gpu-all    the shipped CUDA and Triton-AOT implementations, --devices 0 / all
#   default-0, default-all   the default shipped run (CPU tests too), --devices 0 / all
# (RUNS picks which, in order; ROUNDS repeats the list, alternating). Each run's results.json
# and trace go to $OUT (or scaling-logs/) as <run>-r<round>.tgz; a table of wall, throughput and
# the workers' busy seconds ends the output. scripts/trace_slots.py reads a trace: per slot,
# where the time went.
#
#   [RUNS="gpu-0 gpu-all"] [ROUNDS=1] [EXTRA_ARGS=...] scripts/bench_scaling.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-scaling-logs}"
build="${BUILD_DIR:-build-gpu}"
mkdir -p "$out"
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_HIP=OFF)
if [ ! -f /usr/include/dlpack/dlpack.h ] && [ -f "$PWD/.carry/include/dlpack/dlpack.h" ]; then cmake_args+=(-DDLPACK_INCLUDE_DIR="$PWD/.carry/include"); fi
{ date -u; nvidia-smi -L; nproc; git rev-parse --short HEAD 2>/dev/null; } > "$out/machine.txt" 2>&1
if [ -z "${NO_BUILD:-}" ]; then
  t0=$(date +%s)
  if ! { cmake -S . -B "$build" "${cmake_args[@]}" && cmake --build "$build" --parallel "$(nproc)"; } > "$out/build.log" 2>&1; then
    tail -30 "$out/build.log"; echo "bench_scaling: BUILD FAILED"; exit 1
  fi
  echo "built in $(( $(date +%s) - t0 )) s"
fi
bb="$build/backendbench"
impls=vector_add_cuda,mul3_cuda,mul4_cuda,softmax_cuda,layernorm_cuda,linear_gelu_cuda,inplace_rmsnorm_cuda,myop_cuda_naive,myop_cuda_vec,rmsnorm_cuda_block,rmsnorm_cuda_warp
[[ -e "$build/custom_ops/vector_add/vector_add_triton.so" ]] && impls+=,vector_add_triton
# The per-device peak-bandwidth cache warmed, so no run pays for it.
"$bb" --impls "$impls" --devices all --ops myop --correctness-only --no-log -q > /dev/null 2>&1
for round in $(seq 1 "${ROUNDS:-1}"); do
  for run in ${RUNS:-gpu-0 gpu-all}; do
    devices="${run#*-}"
    args=(--devices "$devices")
    [[ $run == gpu-* ]] && args+=(--impls "$impls")
    d="/tmp/scaling/$run-r$round"
    rm -rf "$d"; mkdir -p "$d"
    s0=$(date +%s%N)
    # shellcheck disable=SC2086
    BACKENDBENCH_TRACE_BLOCKS="$d/trace.jsonl" timeout "${RUN_TIMEOUT:-300}" "$bb" "${args[@]}" ${EXTRA_ARGS:-} --log-dir "$d/logs" > "$d/run.log" 2>&1
    rc=$?
    echo "$run round $round: exit $rc in $(( ($(date +%s%N) - s0) / 1000000 )) ms: $(grep -E 'passed' "$d/run.log" | tail -1)"
    tar czf "$out/$run-r$round.tgz" -C /tmp/scaling "$run-r$round"
  done
done
python3 - /tmp/scaling <<'PY' | tee "$out/scaling.md"
import json, sys, glob, os
print("| run | tests | wall s | tests/s | plan s | run s | workers (name: tests, busy s) |")
print("|---|---|---|---|---|---|---|")
for d in sorted(glob.glob(sys.argv[1] + "/*/")):
    p = d + "logs/results.json"
    if not os.path.exists(p): print(f"| {d} | no results |"); continue
    j = json.load(open(p)); ph = j.get("phases", {})
    ws = "; ".join(f"{w['name']}: {w['tests']}, {w['busy_s']:.1f}" for w in j.get("workers", []) if w["tests"])
    n = len(j["tests"])
    print(f"| {os.path.basename(d.rstrip('/'))} | {n} | {j['wall_time_s']:.1f} | {n / j['wall_time_s']:.2f} | {ph.get('plan_s', 0):.2f} | {ph.get('run_s', 0):.2f} | {ws} |")
PY
