#!/usr/bin/env bash
# The op library's GPU implementations, timed by backendbench itself: a table of each
# performance case's median, GB/s and percent of the device's measured peak bandwidth (the
# `peak_bandwidth_pct` of results.json), in Markdown for docs/PERFORMANCE.md.
#
#   [OPS=a,b] [IMPLS=x,y] scripts/bench_op_library.sh [BUILD_DIR] [OUT_DIR]
#
# OPS and IMPLS narrow the sweep (the whole library takes about ten minutes on the H100: every
# correctness case too, and the CPU reference of each 64M-element performance case).
set -uo pipefail
build="${1:-build}"
out="${2:-$build/op_library}"
mkdir -p "$out"
impls=vector_add_cuda,mul3_cuda,mul4_cuda,softmax_cuda,layernorm_cuda,linear_gelu_cuda,inplace_rmsnorm_cuda,myop_cuda_naive,myop_cuda_vec,rmsnorm_cuda_block,rmsnorm_cuda_warp
# The Triton plugin where the build made one (Triton found a GPU at build time).
[[ -e "$build/custom_ops/vector_add/vector_add_triton.so" ]] && impls+=,vector_add_triton
"$build/backendbench" --ops "${OPS:-vector_add,mul3,mul4,softmax,layernorm,linear_gelu,inplace_rmsnorm_,myop,rmsnorm}" \
  --impls "${IMPLS:-$impls}" --log-dir "$out/logs" > "$out/run.log" 2>&1
rc=$?
grep -E "^(tests|wall)|cuda:0:" "$out/run.log"
python3 - "$out/logs/results.json" <<'PY' | tee "$out/op_library.md"
import json, sys
r = json.load(open(sys.argv[1]))
print("| implementation | case | median µs | GB/s | % of measured peak | verdict |")
print("|---|---|---|---|---|---|")
for t in r["tests"]:
    if t["kind"] != "performance":
        continue
    print(f"| {t['impl']} | {t['case']} | {t.get('timing', {}).get('median_s', 0) * 1e6:.1f} | {t.get('gbps', 0):.0f} | "
          f"{t.get('peak_bandwidth_pct', 0):.1f} | {t['verdict']} |")
bad = [(t["impl"], t["case"], t["verdict"]) for t in r["tests"] if t["verdict"] != "PASS"]
print(f"\n{len(r['tests'])} tests, {len(bad)} not PASS" + (f": {bad[:10]}" if bad else ""))
PY
exit $rc
