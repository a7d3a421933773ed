#!/usr/bin/env bash
# Self-speedup on the CPU: the paired fixture's scale_good timed against itself (its op's
# baseline) RUNS times, every block traced (BACKENDBENCH_TRACE_BLOCKS). Per case and run it
# prints the speedup, its interval, whether the interval missed 1.00 (as the e2e test reads it:
# low < 1.005 and high >= 0.995 holds), the CPU both sides were pinned to, and the pairs'
# ratio over the last half of the pairing: a per-process bias shows there as a steady value
# away from 1.00, which no number of pairs averages away. With LOAD=1 another run loops
# alongside, as ctest -j2 does on the 2-core VM.
#
#   scripts/self_speedup_cpu.sh [BUILD_DIR] [RUNS] [OUT_DIR]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
runs="${2:-10}"
out="${3:-$build/self_speedup_cpu}"
root="$build/test_roots/paired"
[ -f "$root/scale/scale_good.so" ] || { echo "no $root/scale/scale_good.so: build the tests first" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out"
load_pid=""
if [ "${LOAD:-0}" = 1 ]; then
  (while [ ! -f "$out/stop" ]; do
     "$build/backendbench" --custom-ops-root "$root" --impls scale_good --log-dir "$out/load1" > /dev/null 2>&1
     "$build/backendbench" --ops myop,rmsnorm --log-dir "$out/load2" > /dev/null 2>&1
   done) &
  load_pid=$!
  sleep 1
fi
for i in $(seq 1 "$runs"); do
  BACKENDBENCH_TRACE_BLOCKS="$out/trace$i.jsonl" "$build/backendbench" --custom-ops-root "$root" --impls scale_good \
    --log-dir "$out/logs$i" ${EXTRA_ARGS:-} > "$out/run$i.log" 2>&1
done
[ -n "$load_pid" ] && { touch "$out/stop"; wait "$load_pid"; }
python3 - "$out" "$runs" <<'PY' | tee "$out/report.txt"
import json, sys, statistics, collections
out, runs = sys.argv[1], int(sys.argv[2])
misses = collections.Counter(); total = collections.Counter(); worst = collections.defaultdict(float)
for i in range(1, runs + 1):
    r = json.load(open(f"{out}/logs{i}/results.json"))
    blocks = collections.defaultdict(lambda: {"baseline": [], "impl": []})
    for line in open(f"{out}/trace{i}.jsonl"):
        b = json.loads(line)
        if b.get("cmd") == "block":
            blocks[b["case"]][b["side"]].append(b["median_s"])
    for t in r["tests"]:
        if "speedup" not in t:
            continue
        c = t["case"]; lo, s, hi = t["speedup_low"], t["speedup"], t["speedup_high"]
        miss = not (lo < 1.005 and hi >= 0.995)
        ratios = [b / m for b, m in zip(blocks[c]["baseline"], blocks[c]["impl"])]
        tail = statistics.median(ratios[len(ratios) // 2:]) if ratios else float("nan")
        total[c] += 1; misses[c] += miss; worst[c] = max(worst[c], abs(tail - 1))
        print(f"run {i:2} {c:28} {s:.4f} [{lo:.4f}, {hi:.4f}] {t['speedup_pairs']:3.0f} pairs {t['timing']['stop']:11}"
              f" cpu {t['timing'].get('pinned_cpu', '-')!s:2} tail {tail:.4f} median {statistics.median(blocks[c]['impl']) * 1e6:8.2f} us"
              + ("  MISS" if miss else ""))
for c in total:
    print(f"{c:28} missed {misses[c]} of {total[c]}; largest steady tail {worst[c] * 100:.2f}%")
PY
