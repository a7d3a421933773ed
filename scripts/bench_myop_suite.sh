#!/usr/bin/env bash
# Whole runs of BackendBench-py's custom_ops myop suite, ported (bench/myop_suite: a reference and
# three implementations, one correctness and one performance test each, on ones(8)): the wall time
# of a run where nothing but our own overhead can take time, timed and --correctness-only, and
# where it goes (results.json's phases). docs/PERFORMANCE.md, "Fast answers".
#
#   [RUNS=5] [ROOT=DIR] [ARGS="..."] [KEEP=DIR] scripts/bench_myop_suite.sh [BUILD_DIR]
#
# ROOT: another port of the suite (BUILD/bench_roots/myop_suite_cuda on a GPU machine), or any
# root, with ARGS selecting from it (ROOT=build/custom_ops ARGS="--ops myop --impls myop_cuda_vec":
# a kernel engineer's loop); ARGS: more flags for each run; KEEP: where each run's results.json
# and console output are kept (MODE-RUN.json, MODE-RUN.txt), and with TRACE=1 its timeline
# (MODE-RUN.trace: BACKENDBENCH_TRACE_BLOCKS, docs/RUNNING.md). PAUSE=S: seconds between runs (0:
# back to back; a run's workers end without the host waiting for the kernel's teardown of their
# device contexts, which a run started at once then meets in its own first contexts).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
root="${ROOT:-$build/bench_roots/myop_suite}"
runs="${RUNS:-5}"
[ -d "$root" ] || { echo "no root at $root (build with BACKENDBENCH_BUILD_BENCH=ON)" >&2; exit 1; }
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
echo "# git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), root $root, $runs runs each${ARGS:+, extra flags: $ARGS}"
echo
echo "| mode | run | wall s | inside timed regions s | worker-seconds: setup / reference / check / timing | verdicts |"
echo "|---|---|---|---|---|---|"
# One run first, not counted: what a first run on a machine pays once (the device peaks' cache,
# the page cache) is not what a kernel engineer's reruns pay.
"$build/backendbench" --custom-ops-root "$root" --log-dir "$logs/first" ${ARGS:-} > /dev/null 2>&1 || true
for mode in timed correctness-only; do
  flags=(); [ "$mode" = correctness-only ] && flags=(--correctness-only)
  walls=()
  for r in $(seq 1 "$runs"); do
    sleep "${PAUSE:-0}"
    rm -rf "$logs/run"
    start=$(date +%s.%N)
    trace=""; [ -n "${KEEP:-}" ] && [ -n "${TRACE:-}" ] && { mkdir -p "$KEEP"; trace="$KEEP/$mode-$r.trace"; rm -f "$trace"; }
    # shellcheck disable=SC2086
    BACKENDBENCH_TRACE_BLOCKS="$trace" "$build/backendbench" --custom-ops-root "$root" --log-dir "$logs/run" "${flags[@]}" ${ARGS:-} > "$logs/out.txt" 2>&1 || true
    end=$(date +%s.%N)
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf("%.3f", b - a)}')
    walls+=("$wall")
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$logs/run/results.json" "$KEEP/$mode-$r.json"; cp "$logs/out.txt" "$KEEP/$mode-$r.txt"; fi
    python3 - "$logs/run/results.json" "$mode" "$r" "$wall" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r.get("phases", {}).get("tests", {})
verdicts = {}
for t in r["tests"]:
    verdicts[t["verdict"]] = verdicts.get(t["verdict"], 0) + 1
print(f"| {sys.argv[2]} | {sys.argv[3]} | {float(sys.argv[4]):.2f} | {r.get('measured_time_s', 0):.3f} | "
      f"{p.get('setup_s', 0):.2f} / {p.get('reference_s', 0):.2f} / {p.get('check_s', 0):.2f} / {p.get('timing_s', 0):.2f} | "
      + ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items())) + " |")
PY
  done
  printf '%s\n' "${walls[@]}" | sort -n | awk -v m="$mode" '{a[NR]=$1} END {printf("%s: median %.2f s, min %.2f s, max %.2f s over %d runs\n", m, (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[1], a[NR], NR)}' >&2
done
