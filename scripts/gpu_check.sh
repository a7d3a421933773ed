#!/usr/bin/env bash
# On the GPU machine, in one call: build everything with that machine's nvcc, run the whole
# test suite with the GPU tests live, run the shipped ops (CPU and CUDA), and leave every log
# in one folder: $OUT if set (the device tool's), else gpu-logs/.
#
# The GPU image has no dlpack package: put Debian's dlpack/dlpack.h under .carry/include/
# (scripts/carry_dlpack.sh) and carry .carry, or pass DLPACK_INCLUDE_DIR.
#
# BENCH=1 adds the measurement benchmarks (scripts/bench_gpu_timing.sh: against ncu and
# do_bench; scripts/bench_stability.sh: five full runs); SKIP_TESTS=1 leaves out ctest and the
# fixtures, for a benchmark-only call; GPU_TESTS_ONLY=1 runs only the tests that use a device.
set -uo pipefail
cd "$(dirname "$0")/.."
# Logs go to a folder of their own; the device tool brings back only a few files from $OUT,
# so they travel as one archive (plus the benchmark tables).
out="${LOG_DIR:-gpu-logs}"
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

ctest_rc=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  # Serial: the GPU timing tests share the device with nothing else.
  : > "$out/ctest.log"
  if [ "${GPU_TESTS_ONLY:-0}" != 1 ]; then
    ctest --test-dir "$build" --output-on-failure --parallel 4 --timeout 600 -E 'DeviceTimer|Gpu\.|Paired\.|Catalogue\.' > "$out/ctest.log" 2>&1
    ctest_rc=$?
  fi
  ctest --test-dir "$build" --output-on-failure --timeout 600 -R 'DeviceTimer|Gpu\.|Device\.|Paired\.' >> "$out/ctest.log" 2>&1 || ctest_rc=1
  # The shipped ops' ctest tests (one per op x implementation) spread over this host's GPUs by
  # CTest's resource allocation, with the spec backendbench writes.
  "$build/backendbench" resource-spec -o "$out/resource_spec.json" > "$out/ctest_ops.log" 2>&1
  ctest --test-dir "$build" -L ops -j 8 --resource-spec-file "$out/resource_spec.json" -V --timeout 600 >> "$out/ctest_ops.log" 2>&1 || ctest_rc=1
  # The CUDA hostile fixtures as a user would see them (the illegal address is CRASH, the sweep goes on).
  "$build/backendbench" --custom-ops-root "$build/test_roots/gpu" --no-log --verbose > "$out/gpu_fixtures.log" 2>&1
  # The shipped ops and every hostile, adversarial and CUDA fixture in one sweep, checked
  # against test/fixtures/catalogue/expected.txt.
  scripts/sweep_catalogue.sh "$build" "$out/catalogue" > "$out/catalogue.log" 2>&1 || ctest_rc=1
fi
"$build/backendbench" --log-dir "$out/shipped" > "$out/shipped.log" 2>&1
run_rc=$?
# GPU_REPEAT=N: the GPU tests N more times (races show up as flaky verdicts).
repeat_rc=0
if [ "${GPU_REPEAT:-0}" -gt 0 ]; then
  (cd "$build" && ./bb_e2e_tests --gtest_filter='Gpu.*' --gtest_repeat="$GPU_REPEAT" && ./bb_unit_tests --gtest_filter='Device.*' --gtest_repeat="$GPU_REPEAT") \
    > "$out/gpu_repeat.log" 2>&1
  repeat_rc=$?
fi

echo "== machine"; grep -m1 -E "H100|H200|NVIDIA" "$out/machine.txt"
echo "== ctest (exit $ctest_rc)"; grep -E "tests passed|Skipped|\(Failed\)|Not Run|Timeout" "$out/ctest.log" | head -30
if [ -f "$out/ctest_ops.log" ]; then
  echo "== ctest -L ops over $(jq '.local[0].gpus | length' "$out/resource_spec.json" 2>/dev/null) GPU(s)"
  grep -E "tests passed|\(Failed\)" "$out/ctest_ops.log"
  echo "tests per GPU:"; grep -E "tests per device:" "$out/ctest_ops.log" | sort | uniq -c
fi
echo "== shipped ops (exit $run_rc)"; grep -vE "^\[" "$out/shipped.log" | tail -22
echo "== CUDA hostile fixtures"; grep -E "scale_cuda_(illegal|overflow)|sticky|passed," "$out/gpu_fixtures.log" | head -12
[ -f "$out/catalogue.log" ] && { echo "== catalogue sweep"; cat "$out/catalogue.log"; }
echo "== CUDA timings"; grep -E " on cuda" "$out/shipped.log" | grep performance | head -30
if [ "${GPU_REPEAT:-0}" -gt 0 ]; then
  echo "== GPU tests repeated $GPU_REPEAT times (exit $repeat_rc)"; grep -cE "^\[       OK \]" "$out/gpu_repeat.log"; grep -E "FAILED|SKIPPED \]" "$out/gpu_repeat.log" | sort | uniq -c | head
fi
echo "== efficiency (shipped ops sweep)"; grep -E "^timed " "$out/shipped.log"
if [ "${BENCH:-0}" = 1 ]; then
  scripts/bench_gpu_timing.sh "$build" "$out"
  echo "== peak bandwidth against Triton and torch"; python3 scripts/bench_peak_bandwidth.py "$out/shipped/results.json" | tee "$out/peak.md"
  echo "== stability"; scripts/bench_stability.sh "$build" "$out" "${STABILITY_RUNS:-5}"
fi
if [ -n "${OUT:-}" ] && [ "$OUT" != "$out" ]; then
  tar czf "$OUT/gpu-logs.tgz" -C "$out" . 2>/dev/null
  for f in timing_table.md stability.md; do [ -f "$out/$f" ] && cp "$out/$f" "$OUT/"; done
fi
[ "$ctest_rc" -eq 0 ] && [ "$run_rc" -eq 0 ] && [ "$repeat_rc" -eq 0 ]
