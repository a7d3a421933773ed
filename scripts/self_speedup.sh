#!/usr/bin/env bash
# Self-speedup on a device: an implementation timed against itself must read 1.00 within its
# interval. Two libraries with the same code (the shipped myop_cuda_naive and a copy of it,
# myop_cuda_twin) are each timed against the other as the op's baseline (two runs), every
# timed block traced (BACKENDBENCH_TRACE_BLOCKS); per case it prints the speedup and interval,
# and from the trace the ratio of the pairs where the baseline ran first against those where
# the implementation did (an order effect), so that a bias can be told from the role, the
# process or the order.
#
#   scripts/self_speedup.sh [BUILD_DIR] [OUT_DIR]      (EXTRA_ARGS: more backendbench flags)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build-gpu}" && pwd)"
out="${2:-$build/self_speedup}"
rm -rf "$out" && mkdir -p "$out"
for base in myop_cuda_naive myop_cuda_twin; do
  other=myop_cuda_twin; [ $base = myop_cuda_twin ] && other=myop_cuda_naive
  root="$out/root_$base"
  mkdir -p "$root/myop"
  sed "s/cuda: myop_cuda_naive/cuda: $base/" "$build/custom_ops/myop/gen_input.yaml" > "$root/myop/gen_input.yaml"
  cp "$build/custom_ops/myop/myop_reference.so" "$build/custom_ops/myop/myop_cuda_naive.so" "$root/myop/"
  cp "$build/custom_ops/myop/myop_cuda_naive.so" "$root/myop/myop_cuda_twin.so"
  BACKENDBENCH_TRACE_BLOCKS="$out/trace_$base.jsonl" "$build/backendbench" --custom-ops-root "$root" --ops myop \
    --impls $other --log-dir "$out/logs_$base" ${EXTRA_ARGS:-} > "$out/run_$base.log" 2>&1
  echo "baseline $base: exit $?"
done
(cd "$out" && tar czf blocks.tgz trace_*.jsonl logs_*/results.json)
python3 - "$out" <<'PY'
import json, sys, statistics, collections, math
out = sys.argv[1]
for base in ("myop_cuda_naive", "myop_cuda_twin"):
    r = json.load(open(f"{out}/logs_{base}/results.json"))
    blocks = collections.defaultdict(lambda: {"baseline": [], "impl": []})
    for line in open(f"{out}/trace_{base}.jsonl"):
        b = json.loads(line)
        blocks[(b["impl"].rsplit("/", 1)[-1][:-3], b["case"])][b["side"]].append(b["median_s"])
    print(f"baseline {base}:")
    for t in r["tests"]:
        if "speedup" not in t:
            continue
        impl = t["impl"].split("__")[-1]
        bl = blocks[(impl, t["case"])]
        ratios = [b / i for b, i in zip(bl["baseline"], bl["impl"])]
        # Pair p runs the baseline first when p is even (paired_timer.cpp).
        first = [x for p, x in enumerate(ratios) if p % 2 == 0]
        second = [x for p, x in enumerate(ratios) if p % 2 == 1]
        gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
        print(f"  {impl:16} {t['case']:42} {t['speedup']:.4f} [{t['speedup_low']:.4f}, {t['speedup_high']:.4f}]"
              f"  baseline-first {gm(first):.4f}  impl-first {gm(second):.4f}  median {statistics.median(bl['impl'])*1e6:.2f} us")
PY
