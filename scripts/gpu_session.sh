#!/usr/bin/env bash
# One device call of this issue's GPU checks: build (tests on unless TESTS=OFF), the CUDA attack
# fixtures, the self-speedup experiment, the GPU tests, the catalogue, the shipped sweep (or one
# SHARD=i/n of it, default options), one op (SWEEP_ARGS), the fast-answer figures (fast: the ported
# myop suite and one implementation's loop, scripts/bench_myop_suite.sh); logs under $OUT (or
# gpu-logs/), text only; TRACE=1: each fast run's and the sweep's timeline too (fast.tgz,
# sweep.tgz: BACKENDBENCH_TRACE_BLOCKS). MICRO_FILTER: some of the micro-benchmarks. FAST_PAUSE:
# seconds between the fast runs. The GPU tests: Gpu.* end to end, and the unit tests that need a device
# (Device*, GpuReference*: the shipped references on CUDA against their CPU code). ncu: the
# cold timing against Nsight Compute and do_bench (scripts/bench_gpu_timing.sh). python: the
# Python implementations of myop and vector_add, and a BackendBench-py folder on the GPU. pytests:
# the PythonImpl.* end-to-end tests; bbpy: BackendBench-py's folder through both (bench_bbpy.sh);
# pystarts: what Python workers cost to start (bench_python_starts.sh). liger: a folder of real
# Triton kernels (bench_liger_ops.sh; Liger-Kernel's source carried as .liger/src).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-logs}"
mkdir -p "$out"
b=build-gpu
{ date -u; nvidia-smi -L; } > "$out/machine.txt" 2>&1
if ! { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DDLPACK_INCLUDE_DIR="$PWD/.carry/include" \
         -DBACKENDBENCH_BUILD_TESTS="${TESTS:-ON}" -DBACKENDBENCH_BUILD_BENCH=ON &&
       cmake --build $b --parallel "$(nproc)"; } > "$out/build.log" 2>&1; then
  tail -30 "$out/build.log"; echo BUILD FAILED; exit 1
fi
echo "built at $(date -u +%T)"
for step in ${STEPS:-micro attacks self gputests}; do
  t0=$(date +%s)
  case $step in
    micro) LD_BIND_NOW=1 timeout 60 $b/bb_micro_bench ${MICRO_FILTER:+--benchmark_filter="$MICRO_FILTER"} > "$out/micro.txt" 2>&1 ;;
    attacks) timeout "${ATTACKS_TIMEOUT:-200}" scripts/gpu_attacks.sh $b /tmp/atk > "$out/attacks.txt" 2>&1; cp /tmp/atk/run.log "$out/attacks_run.log" ;;
    self) timeout "${SELF_TIMEOUT:-300}" scripts/self_speedup.sh $b /tmp/self > "$out/self.txt" 2>&1; cp /tmp/self/blocks.tgz "$out/"; for f in /tmp/self/run_*.log; do tail -n 3 "$f"; done >> "$out/self.txt" ;;
    gputests) timeout "${GPU_TESTS_TIMEOUT:-200}" $b/bb_e2e_tests --gtest_filter="${GPU_FILTER:-Gpu.*}" > "$out/gputests.txt" 2>&1
              timeout "${GPU_TESTS_TIMEOUT:-200}" $b/bb_unit_tests --gtest_filter="${GPU_UNIT_FILTER:-Device*:GpuReference*}" >> "$out/gputests.txt" 2>&1 ;;
    sweep) rm -f /tmp/sweep.trace
           BACKENDBENCH_TRACE_BLOCKS="${TRACE:+/tmp/sweep.trace}" timeout "${SWEEP_TIMEOUT:-500}" $b/backendbench --custom-ops-root $b/custom_ops --log-dir /tmp/sweep ${SHARD:+--shard "$SHARD"} \
             ${SWEEP_ARGS:-} > "$out/sweep.txt" 2>&1; echo "exit $?" >> "$out/sweep.txt"
           if [ -f /tmp/sweep.trace ]; then tar czf "$out/sweep.tgz" -C /tmp sweep.trace sweep/results.json
           else cp /tmp/sweep/results.json "$out/sweep_results.json" 2>/dev/null; fi ;;
    fast) for spec in "$b/bench_roots/myop_suite_cuda|" "$b/custom_ops|--ops myop --impls myop_cuda_vec"; do
            ROOT="${spec%%|*}" ARGS="${spec#*|}" RUNS="${FAST_RUNS:-3}" PAUSE="${FAST_PAUSE:-0}" KEEP="$out/fast/$(basename "${spec%%|*}")" timeout "${FAST_TIMEOUT:-300}" \
              scripts/bench_myop_suite.sh $b >> "$out/fast.txt" 2>&1
          done
          (cd "$out" && tar czf fast.tgz fast && rm -rf fast) ;;
    python) # Python implementations (Triton JIT, PyTorch) beside the CUDA plugins of myop and vector_add,
            # then the BackendBench-py fixture folder drawing its tensors on the GPU.
            for what in "ops|--custom-ops-root $b/custom_ops --ops myop,vector_add" "bbpy|--custom-ops-root /tmp/bbpy_cuda"; do
              name="${what%%|*}"
              if [ "$name" = bbpy ]; then
                rm -rf /tmp/bbpy_cuda && cp -r test/fixtures/bbpy /tmp/bbpy_cuda
                sed -i 's/torch.randn(\([^)]*\))/torch.randn(\1, device="cuda")/g' /tmp/bbpy_cuda/axpy/gen_input.py
              fi
              s0=$(date +%s.%N)
              # shellcheck disable=SC2086
              timeout "${PYTHON_TIMEOUT:-300}" $b/backendbench ${what#*|} --log-dir "/tmp/py_$name" ${PYTHON_ARGS:-} > "$out/python_$name.txt" 2>&1
              echo "exit $? after $(echo "$(date +%s.%N) - $s0" | bc) s" >> "$out/python_$name.txt"
              cp "/tmp/py_$name/results.json" "$out/python_${name}_results.json" 2>/dev/null
            done ;;
    pytests) timeout "${PY_TESTS_TIMEOUT:-200}" $b/bb_e2e_tests --gtest_filter="${PY_FILTER:-PythonImpl.*}" > "$out/pytests.txt" 2>&1 ;;
    bbpy) OUT="$out/bbpy" BUILD_DIR=$b timeout "${BBPY_TIMEOUT:-300}" scripts/bench_bbpy.sh > "$out/bbpy.txt" 2>&1 ;;
    liger) OUT="$out/liger" BUILD_DIR=$b RUNS="${LIGER_RUNS:-warm empty}" timeout "${LIGER_TIMEOUT:-400}" scripts/bench_liger_ops.sh > "$out/liger.txt" 2>&1 ;;
    pystarts) OUT="$out/pystarts" BUILD_DIR=$b timeout "${PYSTARTS_TIMEOUT:-200}" scripts/bench_python_starts.sh > "$out/pystarts.txt" 2>&1 ;;
    ncu) timeout "${NCU_TIMEOUT:-400}" scripts/bench_gpu_timing.sh $b /tmp/ncu > "$out/ncu.txt" 2>&1 ;;
    catalogue) timeout "${CATALOGUE_TIMEOUT:-500}" scripts/sweep_catalogue.sh $b /tmp/cat > "$out/catalogue.txt" 2>&1; cp /tmp/cat/sweep.log "$out/" ;;
  esac
  echo "$step: rc $? in $(( $(date +%s) - t0 )) s"
done
