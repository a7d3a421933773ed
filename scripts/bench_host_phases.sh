#!/usr/bin/env bash
# The host's own time on one large case: generating its inputs (`inputs_s`) and checking a call's
# outputs (`check_s`: buffer copies, the call, the element comparison), from results.json's
# phases, with the host loops on one core (taskset) against every core. docs/PERFORMANCE.md,
# "Host overhead".
#
#   [N=16777216] [IMPL=vector_add_cpp] [RUNS=3] scripts/bench_host_phases.sh [BUILD_DIR]
#
# The case is vector_add's, one correctness case of two N-element float32 randn inputs, in a root
# of its own built from BUILD_DIR's vector_add plugins (IMPL=vector_add_cuda on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
n="${N:-16777216}"
impl="${IMPL:-vector_add_cpp}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/vector_add"
cp "$build"/custom_ops/vector_add/*.so "$root/vector_add/"
cat > "$root/vector_add/gen_input.yaml" <<EOF
op: vector_add
seed: 11
devices: [cpu, cuda, hip]
inputs: [{name: x}, {name: y}]
outputs: [{name: out, shape: x, dtype: x}]
tests:
  correctness:
    - name: big
      inputs:
        x: {shape: [$n], dtype: float32, init: randn}
        y: {shape: [$n], dtype: float32, init: randn}
EOF
cores=$(nproc)
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $cores cores"
echo "# git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $impl, two $n-element float32 inputs"
echo
echo "| cores | run | inputs_s | check_s | reference_s | test s | verdict |"
echo "|---|---|---|---|---|---|---|"
for mode in 1 "$cores"; do
  pin=(); [ "$mode" = 1 ] && pin=(taskset -c 0)
  for i in $(seq "${RUNS:-3}"); do
    rm -f "$root/logs/results.json"  # a run that writes none must not report the previous one's
    "${pin[@]}" "$build/backendbench" --custom-ops-root "$root" --impls "$impl" --correctness-only \
      --log-dir "$root/logs" > /dev/null || true
    if [ ! -f "$root/logs/results.json" ]; then echo "| $mode | $i | - | - | - | - | no results.json |"; continue; fi
    python3 - "$root/logs/results.json" "$mode" "$i" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tests"][0]
p = t.get("phases", {})
print(f"| {sys.argv[2]} | {sys.argv[3]} | {p.get('inputs_s', 0):.3f} | {p.get('check_s', 0):.3f} | "
      f"{p.get('reference_s', 0):.3f} | {t['duration_s']:.2f} | {t['verdict']} |")
PY
  done
done
