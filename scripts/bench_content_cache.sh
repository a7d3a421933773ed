#!/usr/bin/env bash
# What result caches keyed by the inputs' content gain on a compute-bound op (issue 39 item 1;
# docs/RELIABILITY.md, limits): the fixture root test_roots/content_cache (op poly: a degree-63
# polynomial per element, 1M floats timed) run RUNS times, each implementation's speedup against
# the reference, the honest ones beside the caches (C++ whole-input hash, C++ address and one
# element in 16, PyTorch whole-input hash).
#
#   [RUNS=3] [ARGS="--devices cpu"] scripts/bench_content_cache.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $(nproc) cores, git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
for r in $(seq "${RUNS:-3}"); do
  "$build/backendbench" --custom-ops-root "$build/test_roots/content_cache" ${ARGS:-} --log-dir "$out/r$r" -q > "$out/r$r.txt" 2>&1
  echo "run $r: exit $?"
  python3 - "$out/r$r/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for i in sorted(r["scores"]["implementations"], key=lambda i: i["impl"]):
    s = i.get("speedup")
    verdicts = sorted({t["verdict"] for t in r["tests"] if t["impl"] == i["impl"]})
    lo, hi = i.get("speedup_low") or 0, i.get("speedup_high") or 0
    figure = "-" if s is None else f"{s:8.2f}x [{lo:.2f}, {hi:.2f}]"
    print(f"  {i['impl']:24} {figure}  {' '.join(verdicts)}")
PY
done
