#!/usr/bin/env bash
# On the GPU machine, in one call: build everything with that machine's nvcc, run the whole
# test suite with the GPU tests live, run the shipped ops (CPU and CUDA), and leave every log
# in one folder: $OUT if set (the device tool's), else gpu-logs/.
#
# The GPU image has no dlpack package: put Debian's dlpack/dlpack.h under .carry/include/
# (scripts/carry_dlpack.sh) and carry .carry, or pass DLPACK_INCLUDE_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-logs}"
build="${BUILD_DIR:-build-gpu}"
mkdir -p "$out"

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}")
if [ ! -f /usr/include/dlpack/dlpack.h ]; then
  for d in "${DLPACK_INCLUDE_DIR:-}" "$PWD/.carry/include"; do
    if [ -n "$d" ] && [ -f "$d/dlpack/dlpack.h" ]; then cmake_args+=(-DDLPACK_INCLUDE_DIR="$d"); break; fi
  done
fi

{ date -u; nvidia-smi; nvcc --version; cmake --version | head -1; nproc; } > "$out/machine.txt" 2>&1

if ! { cmake -S . -B "$build" "${cmake_args[@]}" && cmake --build "$build" --parallel "$(nproc)"; } > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "gpu_check: BUILD FAILED"
  exit 1
fi

ctest --test-dir "$build" --output-on-failure --parallel 4 --timeout 600 > "$out/ctest.log" 2>&1
ctest_rc=$?
"$build/backendbench" --log-dir "$out/shipped" > "$out/shipped.log" 2>&1
run_rc=$?

echo "== machine"; grep -m1 -E "H100|H200|NVIDIA" "$out/machine.txt"
echo "== ctest (exit $ctest_rc)"; grep -E "tests passed|Skipped|\(Failed\)|Not Run|Timeout" "$out/ctest.log" | head -30
echo "== shipped ops (exit $run_rc)"; grep -vE "^\[" "$out/shipped.log" | tail -22
echo "== CUDA timings"; grep -E " on cuda" "$out/shipped.log" | grep performance | head -30
[ "$ctest_rc" -eq 0 ] && [ "$run_rc" -eq 0 ]
