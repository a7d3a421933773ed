#!/usr/bin/env bash
# What a Python implementation's worker costs to start, on the GPU machine: the shipped ops that
# ship .py implementations (myop, vector_add: PyTorch and Triton JIT beside CUDA plugins), run
# with their timeline (BACKENDBENCH_TRACE_BLOCKS); a table of each Python worker's warm-up
# (PyTorch and Triton imported), each job's wait for its workers, and its first prepare (the
# file's own import). Needs a built backendbench (BUILD_DIR, default build-gpu); logs under $OUT.
#
#   [OPS=myop,vector_add] [BUILD_DIR=build-gpu] scripts/bench_python_starts.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-python-starts-logs}"
build="${BUILD_DIR:-build-gpu}"
mkdir -p "$out"
rm -f /tmp/pystarts.trace
s0=$(date +%s%N)
BACKENDBENCH_TRACE_BLOCKS=/tmp/pystarts.trace "$build/backendbench" --ops "${OPS:-myop,vector_add}" --log-dir /tmp/pystarts > "$out/pystarts.log" 2>&1
echo "exit $? in $(( ($(date +%s%N) - s0) / 1000000 )) ms: $(grep -E ' passed,' "$out/pystarts.log" | tail -1)"
grep -E "^wall|where the time" "$out/pystarts.log"
cp /tmp/pystarts.trace "$out/pystarts.trace"
python3 - /tmp/pystarts.trace <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ready = [l for l in lines if l.get("what") == "warm_interpreter_ready"]
if ready:
    print(f"| the warm interpreter's imports (PyTorch, Triton), once, s | {ready[0].get('import_s', 0):.2f} (ready at t = {ready[0]['t']:.2f}) |")
forks = [l for l in lines if l.get("what") == "python_fork"]
if forks:
    ok = sorted(l.get("s", 0) for l in forks if l.get("ok"))
    print(f"| Python workers forked from it | {len(ok)} of {len(forks)} |")
    if ok:
        print(f"| each fork, s: min / median / max (the first waits for the imports) | {ok[0]:.3f} / {ok[len(ok)//2]:.3f} / {ok[-1]:.3f} |")
        later = sorted(l.get("s", 0) for l in forks if l.get("ok") and l["t"] > ready[0]["t"] + 0.05) if ready else []
        if later:
            print(f"| each fork after the interpreter was ready, s: median / max | {later[len(later)//2]:.3f} / {later[-1]:.3f} |")
warms = [l for l in lines if l.get("side") == "start" and l.get("python")]
print(f"| Python worker warm-ups | {len(warms)} |")
if warms:
    py = sorted(l.get("worker_steps", {}).get("python_s", 0) for l in warms)
    print(f"| their imports (PyTorch, Triton), s: min / median / max | {py[0]:.2f} / {py[len(py)//2]:.2f} / {py[-1]:.2f} |")
first = {}
for l in lines:
    if l.get("cmd") == "prepare" and str(l.get("impl", "")).endswith(".py") and l.get("side") == "impl" and l["impl"] not in first:
        first[l["impl"]] = l.get("worker_steps", {}).get("load_s", 0)
for impl, s in first.items():
    print(f"| first prepare of {impl.split('/')[-1]} (its import alone), s | {s:.3f} |")
for w in (l for l in lines if l.get("cmd") == "job_wait"):
    print(f"| job of {w['impl']}: waited for its workers to start ({'its own worker started now' if w.get('fresh') else 'its worker started ahead'}), s | {w['round_trip_s']:.3f} |")
quiet = [l for l in lines if l.get("cmd") == "quiet"]
print(f"| waits before timing (quiet), s: total | {sum(q.get('spare_s', 0) + q.get('starts_s', 0) + q.get('stock_s', 0) for q in quiet):.2f} |")
PY
