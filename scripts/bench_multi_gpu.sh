#!/usr/bin/env bash
# Multi-GPU scaling of a sweep, on a machine with several GPUs, in one call: builds the host,
# the CUDA runtime plugin and the shipped CUDA kernels (no tests), then runs the same sweep of
# the shipped CUDA implementations with one GPU (--devices 0) and with every GPU
# (--devices all), alternating, ROUNDS times each, timed and correctness-only; reports
# throughput (tests per second of wall time) and the ratio, and checks that both give the
# same verdict for every test. Logs go to $OUT (the device tool's) or multi-gpu-logs/.
#
#   scripts/bench_multi_gpu.sh            # ROUNDS=2 IMPLS=... EXTRA_ARGS=...
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-multi-gpu-logs}"
build="${BUILD_DIR:-build-gpu}"
mkdir -p "$out"
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_HIP=OFF)
if [ ! -f /usr/include/dlpack/dlpack.h ] && [ -f "$PWD/.carry/include/dlpack/dlpack.h" ]; then cmake_args+=(-DDLPACK_INCLUDE_DIR="$PWD/.carry/include"); fi
{ date -u; nvidia-smi; nproc; } > "$out/machine.txt" 2>&1
if ! { cmake -S . -B "$build" "${cmake_args[@]}" && cmake --build "$build" --parallel "$(nproc)"; } > "$out/build.log" 2>&1; then
  tail -30 "$out/build.log"; echo "bench_multi_gpu: BUILD FAILED"; exit 1
fi
bb="$build/backendbench"
impls="${IMPLS:-myop_cuda_naive,myop_cuda_vec,rmsnorm_cuda_block,rmsnorm_cuda_warp}"
ngpu=$(nvidia-smi -L | grep -c '^GPU')
# Warm the per-device peak-bandwidth cache, so neither side pays for it.
"$bb" --impls "$impls" --devices all --ops myop --correctness-only --no-log -q > /dev/null 2>&1
for round in $(seq 1 "${ROUNDS:-2}"); do
  for mode in timed correctness; do
    flag=""; [ "$mode" = correctness ] && flag="--correctness-only"
    for devices in 0 all; do
      d="$out/r${round}-${mode}-${devices}"
      "$bb" --impls "$impls" --devices "$devices" $flag ${EXTRA_ARGS:-} -q --log-dir "$d" > "$d.log" 2>&1
      echo "round $round $mode --devices $devices: exit $? $(grep -E 'passed,' "$d.log")"
    done
  done
done
python3 - "$out" "$ngpu" <<'PY' | tee "$out/scaling.md"
import json, sys, glob, statistics
out, n = sys.argv[1], int(sys.argv[2])
def load(d):
    j = json.load(open(d + "/results.json"))
    return j, {(t["op"], t["impl"], t["case"]): t["verdict"] for t in j["tests"]}
print(f"| sweep | GPUs | tests | wall s (each round) | tests/s | scaling | verdicts identical |")
print(f"|---|---|---|---|---|---|---|")
for mode in ("timed", "correctness"):
    rows = {}
    for devices in ("0", "all"):
        runs = [load(d) for d in sorted(glob.glob(f"{out}/r*-{mode}-{devices}"))]
        walls = [j["wall_time_s"] for j, _ in runs]
        rows[devices] = (runs, walls, len(runs[0][1]) / statistics.median(walls))
    same = all(v == rows["0"][0][0][1] for _, v in rows["0"][0] + rows["all"][0])
    for devices, (runs, walls, tput) in rows.items():
        k = 1 if devices == "0" else n
        scale = tput / rows["0"][2]
        print(f"| {mode} | {k} | {len(runs[0][1])} | {', '.join(f'{w:.1f}' for w in walls)} | {tput:.2f} | "
              f"{scale:.2f}x ({scale / k:.2f} x N) | {'yes' if same else 'NO'} |")
print()
print("| run | wall s | plan s | devices s | run s | workers: tests, jobs, starts, busy s |")
print("|---|---|---|---|---|---|")
for d in sorted(glob.glob(f"{out}/r*-*-*/")):
    j = json.load(open(d + "results.json"))
    ph = j.get("phases", {})
    ws = "; ".join(f"{w['name']}: {w['tests']}, {w['jobs']}, {w['worker_starts']}, {w['busy_s']:.1f}" for w in j.get("workers", []) if w["tests"])
    print(f"| {d.rstrip('/').split('/')[-1]} | {j['wall_time_s']:.1f} | {ph.get('plan_s', 0):.2f} | {ph.get('devices_s', 0):.2f} | {ph.get('run_s', 0):.2f} | {ws} |")
PY
