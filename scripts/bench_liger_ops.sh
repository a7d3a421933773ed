#!/usr/bin/env bash
# A folder of real third-party Triton kernels (bench/liger_ops: four LLM ops through
# Liger-Kernel, eager PyTorch as the baseline), run as a new user would, on the GPU machine
# (docs/PERFORMANCE.md, "A folder of real Triton kernels"). Needs Liger-Kernel's source at
# LIGER_SRC (default .liger/src: carried, never committed) and a built backendbench (BUILD_DIR,
# default build-gpu). Runs, each with its timeline and results under $OUT (or liger-logs/):
#   warm      the folder, default options, on device 0 (DEVICES)
#   empty     the same under `env -i` (no USER, no HOME: as under cron, CI runners, containers)
# then a table: verdicts, wall, plan, measured (inside timed regions), wall/measured, the warm
# interpreter's import and forks, and the Python workers' starts.
#
#   [RUNS="warm empty"] [DEVICES=0] [LIGER_SRC=.liger/src] [BUILD_DIR=build-gpu] scripts/bench_liger_ops.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-liger-logs}"
build="${BUILD_DIR:-build-gpu}"
src="$(realpath "${LIGER_SRC:-.liger/src}")"
mkdir -p "$out"
[ -d "$src/liger_kernel" ] || { echo "bench_liger_ops: no Liger-Kernel source at $src"; exit 2; }
py="$(command -v python3)"
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
"$py" -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)" > "$out/versions.txt" 2>&1
PYTHONPATH="$src" "$py" -c "import time; t = time.time(); import liger_kernel.ops.rms_norm; print(f'liger_kernel.ops imported in {time.time() - t:.2f} s')" >> "$out/versions.txt" 2>&1
cat "$out/versions.txt"
for run in ${RUNS:-warm empty}; do
  d="/tmp/liger/$run"
  rm -rf "$d"; mkdir -p "$d"
  args=(--custom-ops-root bench/liger_ops --devices "${DEVICES:-0}" --python "$py" --log-dir "$d/logs" ${EXTRA_ARGS:-})
  s0=$(date +%s%N)
  if [ "$run" = empty ]; then
    env -i PATH=/usr/bin:/bin PYTHONPATH="$src" BACKENDBENCH_TRACE_BLOCKS="$d/trace.jsonl" timeout "${RUN_TIMEOUT:-400}" "$build/backendbench" "${args[@]}" > "$d/run.log" 2>&1
  else
    PYTHONPATH="$src" BACKENDBENCH_TRACE_BLOCKS="$d/trace.jsonl" timeout "${RUN_TIMEOUT:-400}" "$build/backendbench" "${args[@]}" > "$d/run.log" 2>&1
  fi
  rc=$?
  echo "$run: exit $rc in $(( ($(date +%s%N) - s0) / 1000000 )) ms: $(grep -E 'passed' "$d/run.log" | tail -1)"
  tar czf "$out/$run.tgz" -C /tmp/liger "$run"
done
"$py" - /tmp/liger <<'PY' | tee "$out/liger.md"
import collections, glob, json, os, sys
print("| run | tests | verdicts | wall s | plan s | measured s | wall/measured | import s | forks | fork s max |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d in sorted(glob.glob(sys.argv[1] + "/*/")):
    p = d + "logs/results.json"
    name = os.path.basename(d.rstrip("/"))
    if not os.path.exists(p): print(f"| {name} | no results |"); continue
    j = json.load(open(p)); ph = j.get("phases", {}); pi = ph.get("python_interpreter", {})
    v = collections.Counter(t.get("verdict", "?") for t in j["tests"])
    measured = j.get("measured_time_s", 0) or 0
    ratio = f"{j['wall_time_s'] / measured:.1f}" if measured else "-"
    print(f"| {name} | {len(j['tests'])} | {', '.join(f'{k} {n}' for k, n in sorted(v.items()))} | {j['wall_time_s']:.1f} | {ph.get('plan_s', 0):.2f} | "
          f"{measured:.1f} | {ratio} | {pi.get('import_s', '-')} | {pi.get('forks', '-')} | {pi.get('fork_s_max', '-')} |")
PY
