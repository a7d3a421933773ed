#!/usr/bin/env bash
# The CUDA attack fixtures (test/fixtures/adversarial/scale_cuda_*) against the defences, on the GPU
# machine: one root with the CPU reference, scale_cuda_good as the CUDA baseline (so that a
# timing attack has a speedup to inflate) and every CUDA fixture, the performance case at 4096
# and 16M floats. Prints each implementation's verdict and speedup per case.
#
#   scripts/gpu_attacks.sh [BUILD_DIR] [OUT_DIR]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build-gpu}" && pwd)"
out="${2:-$build/gpu_attacks}"
rm -rf "$out" && mkdir -p "$out/root/scale"
{
  sed 's/^tests:$//; /^  correctness:/,$d' "$here/test/fixtures/gpu/gen_input.yaml"
  cat <<'YAML'
baseline: {cpu: reference, cuda: scale_cuda_good}
tests:
  correctness:
    - name: small
      params: {n: [16, 1000]}
      inputs: {x: {shape: [n]}}
  performance:
    - name: big
      params: {n: [4096, 4194304, 16777216]}
      inputs: {x: {shape: [n]}}
YAML
} > "$out/root/scale/gen_input.yaml"
cp "$build/test_roots/gpu/scale/scale_reference.so" "$out/root/scale/" 2>/dev/null || cp "$build/test_roots/hostile/scale/scale_reference.so" "$out/root/scale/"
for so in "$build"/test_roots/gpu/scale/scale_cuda_*.so; do cp "$so" "$out/root/scale/"; done
"$build/backendbench" --custom-ops-root "$out/root" --log-dir "$out/logs" --test-timeout "${TEST_TIMEOUT:-20}" ${EXTRA_ARGS:-} > "$out/run.log" 2>&1
echo "gpu_attacks: exit $?"
python3 - "$out/logs/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for t in r["tests"]:
    if t["kind"] != "performance" and t["verdict"] == "PASS":
        continue
    s = t.get("speedup")
    print(f'{t["impl"]:32} {t["case"]:40} {t["verdict"]:12} {"" if s is None else f"{s:.2f}x"} {t.get("message", "")[:160]}')
PY
