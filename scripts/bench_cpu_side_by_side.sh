#!/usr/bin/env bash
# Timed CPU tests side by side on a host of many cores: do they cost timing fidelity? The shipped
# ops' CPU implementations (every *_cpp and myop_vec), timed, with one CPU worker (-j 1) and with
# the default (a quarter of the physical cores, at most 8, each pairing on a core of its own),
# alternating ROUNDS times in one call. Per test: the implementation's median and its speedup
# against the baseline, side by side against one at a time; the table ends with their geometric
# means and extremes, the walls, and the CPU topology (hyperthread siblings). Logs under $OUT
# (or cpu-logs/).
#
#   [ROUNDS=1] [BUILD_DIR=build-gpu] [SIDE_J=] scripts/bench_cpu_side_by_side.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-cpu-logs}"
build="${BUILD_DIR:-build-gpu}"
mkdir -p "$out"
{ nproc; lscpu 2>/dev/null | grep -E "^(Model name|Socket|Core|Thread|NUMA node\(s\))"; for c in 0 1 2 3; do echo "cpu$c siblings: $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null)"; done; } > "$out/topology.txt" 2>&1
cat "$out/topology.txt"
impls=$(cd "$build/custom_ops" && ls */*_cpp.so myop/myop_vec.so 2>/dev/null | sed 's#.*/##; s#\.so$##' | paste -sd,)
echo "implementations: $impls"
for round in $(seq 1 "${ROUNDS:-1}"); do
  for mode in one side; do
    d="/tmp/cpu_side/$mode-r$round"
    rm -rf "$d"; mkdir -p "$d"
    j=(); [ "$mode" = one ] && j=(-j 1); [ "$mode" = side ] && [ -n "${SIDE_J:-}" ] && j=(-j "$SIDE_J")
    s0=$(date +%s%N)
    timeout "${RUN_TIMEOUT:-400}" "$build/backendbench" --impls "$impls" "${j[@]}" --log-dir "$d/logs" > "$d/run.log" 2>&1
    echo "$mode round $round: exit $? in $(( ($(date +%s%N) - s0) / 1000000 )) ms: $(grep -E 'passed' "$d/run.log" | tail -1)"
    cp "$d/logs/results.json" "$out/$mode-r$round.json" 2>/dev/null
  done
done
python3 - "$out" <<'PY' | tee "$out/side_by_side.md"
import glob, json, math, os, sys
def load(p):
    j = json.load(open(p))
    t = {(x["op"], x["impl"], x["case"]): x for x in j["tests"] if x.get("timing")}
    return j, t
for one_p in sorted(glob.glob(sys.argv[1] + "/one-r*.json")):
    side_p = one_p.replace("/one-", "/side-")
    if not os.path.exists(side_p): continue
    j1, a = load(one_p); j2, b = load(side_p)
    print(f"\n{os.path.basename(one_p)} against {os.path.basename(side_p)}: wall {j1['wall_time_s']:.1f} s (jobs {j1['options'].get('jobs')}) / {j2['wall_time_s']:.1f} s (jobs {j2['options'].get('jobs')})\n")
    print("| test | median one, µs | side / one | speedup one | speedup side | intervals overlap |")
    print("|---|---|---|---|---|---|")
    med, spd, overlap, n = [], [], 0, 0
    for k in sorted(set(a) & set(b)):
        x, y = a[k], b[k]
        m1, m2 = x["timing"]["median_s"], y["timing"]["median_s"]
        if not m1 or not m2: continue
        med.append(m2 / m1)
        s1, s2 = x.get("speedup"), y.get("speedup")
        ov = "-"
        if s1 and s2:
            spd.append(s2 / s1); n += 1
            ok = x.get("speedup_low", s1) <= y.get("speedup_high", s2) and y.get("speedup_low", s2) <= x.get("speedup_high", s1)
            overlap += ok; ov = "yes" if ok else "**no**"
        print(f"| {k[1]} {k[2]} | {m1 * 1e6:.1f} | {m2 / m1:.3f} | {s1 or '-'} | {s2 or '-'} | {ov} |")
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    print(f"\nmedians side/one: geomean {g(med):.3f}, {min(med, default=0):.3f}-{max(med, default=0):.3f} over {len(med)} tests; "
          f"speedups side/one: geomean {g(spd):.3f}, {min(spd, default=0):.3f}-{max(spd, default=0):.3f}; intervals overlap {overlap}/{n}")
PY
