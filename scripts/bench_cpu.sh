#!/usr/bin/env bash
# CPU figures for docs/PERFORMANCE.md, in one run on one machine:
#  1. the shipped ops' timings (median, IQR, samples, speedup, GB/s) with default settings;
#  2. the host's own overhead: a correctness sweep in worker processes (the default) against
#     the same sweep in-process (--no-isolate), each repeated, as tests per second.
# Usage: scripts/bench_cpu.sh [build dir]   (builds nothing; run scripts/build.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
bin="$build/backendbench"
out="$(mktemp -d)"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
echo "# git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

"$bin" --log-dir "$out/shipped" > /dev/null
python3 - "$out/shipped/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("\n## Shipped ops, CPU timing (backendbench defaults)\n")
print("| implementation | case | median | IQR | samples | stop | speedup | GB/s |")
print("|---|---|---|---|---|---|---|---|")
for t in r["tests"]:
    if "timing" not in t:
        continue
    tm = t["timing"]
    print(f"| {t['impl']} | {t['case']} | {tm['median_s']*1e6:.1f} us | {tm['iqr_s']*1e6:.1f} us | {tm['samples']} | {tm['stop']} "
          f"| {t.get('speedup', float('nan')):.2f}x | {t.get('gbps', float('nan')):.1f} |")
s = r["scores"]
print(f"\ngeomean speedup {s['geomean_speedup']:.3f}x, correctness {s['correctness_rate']*100:.1f}%, wall {r['wall_time_s']:.1f} s")
PY

echo
echo "## Host overhead: correctness sweep of the shipped ops (myop 29 cases x 2 implementations, rmsnorm 34 x 1)"
echo
echo "| mode | run | wall s | tests | tests/s |"
echo "|---|---|---|---|---|"
for mode in isolated in-process; do
  flag=""; [ "$mode" = in-process ] && flag="--no-isolate"
  for i in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" --correctness-only $flag --log-dir "$out/$mode$i" > /dev/null
    end=$(date +%s.%N)
    n=$(python3 -c "import json;print(len(json.load(open('$out/$mode$i/results.json'))['tests']))")
    python3 -c "w=$end-$start; print(f'| $mode | $i | {w:.2f} | $n | {$n/w:.0f} |')"
  done
done
rm -rf "$out"
