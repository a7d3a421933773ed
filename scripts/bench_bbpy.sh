#!/usr/bin/env bash
# BackendBench-py's own custom_ops folder, unchanged, through BackendBench-py and through
# backendbench (the interpreter kept warm between runs: round 1 starts it; and with none kept,
# BACKENDBENCH_KEEP_WARM=0), alternating ROUNDS times, in one call on the GPU machine (docs/PERFORMANCE.md,
# "Python folders"). Needs BackendBench-py at .bbpy/ (its README: copied from the anchors, carried)
# and a built backendbench (BUILD_DIR, default build-gpu). Each run's wall time, and ours' trace
# (BACKENDBENCH_TRACE_BLOCKS) and results under $OUT (or bbpy-logs/), in logs.tgz.
#
#   [ROUNDS=2] [BUILD_DIR=build-gpu] scripts/bench_bbpy.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bbpy-logs}"
build="${BUILD_DIR:-build-gpu}"
mkdir -p "$out"
export PATH=/opt/torch/.venv/bin:$PATH
now() { date +%s.%N; }
for round in $(seq 1 "${ROUNDS:-2}"); do
  s0=$(now)
  (cd .bbpy && PYTHONPATH=stubs:. timeout 300 python3 -m BackendBench.scripts.main --suite custom_ops --backend custom_ops \
     --custom-ops-root test/custom_ops --log-dir "/tmp/bbpy_theirs_$round") > "$out/theirs-r$round.log" 2>&1
  rc=$?
  theirs=$(python3 -c "print(f'{$(now) - $s0:.1f}')")
  s0=$(now)
  rm -f "/tmp/bbpy_ours_$round.trace"
  BACKENDBENCH_TRACE_BLOCKS="/tmp/bbpy_ours_$round.trace" timeout 300 "$build/backendbench" --suite custom_ops --backend custom_ops \
    --custom-ops-root .bbpy/test/custom_ops --log-dir "/tmp/bbpy_ours_$round" > "$out/ours-r$round.log" 2>&1
  rc2=$?
  ours=$(python3 -c "print(f'{$(now) - $s0:.1f}')")
  # The same run with the run's own warm interpreter, none kept between runs (BACKENDBENCH_KEEP_WARM=0).
  s0=$(now)
  BACKENDBENCH_KEEP_WARM=0 timeout 300 "$build/backendbench" --suite custom_ops --backend custom_ops \
    --custom-ops-root .bbpy/test/custom_ops --log-dir "/tmp/bbpy_own_$round" > "$out/own-r$round.log" 2>&1
  rc3=$?
  own=$(python3 -c "print(f'{$(now) - $s0:.1f}')")
  kept=$(python3 -c "import json; k=json.load(open('/tmp/bbpy_ours_$round/results.json'))['phases']['python_interpreter'].get('kept', {}); print(k.get('error') or f\"kept interpreter: run {k.get('runs', 0) + 1} it serves, waited {k.get('ready_wait_s', 0):.2f} s\")" 2>/dev/null)
  echo "round $round: BackendBench-py ${theirs} s (exit $rc), backendbench ${ours} s (exit $rc2; $kept), backendbench with no kept interpreter ${own} s (exit $rc3): $(grep -E 'passed' "$out/ours-r$round.log" | tail -1)"
  cp "/tmp/bbpy_ours_$round/results.json" "$out/ours-r$round.json" 2>/dev/null
  cp "/tmp/bbpy_ours_$round.trace" "$out/ours-r$round.trace" 2>/dev/null
done
# One archive: the device tool brings back a limited number of files.
(cd "$out" && tar czf logs.tgz ./*.log ./*.trace ./*.json 2>/dev/null && rm -f ./*.log ./*.trace ./*.json)
