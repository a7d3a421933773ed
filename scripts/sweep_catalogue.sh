#!/usr/bin/env bash
# The whole fault catalogue in one sweep: the shipped ops plus every hostile, adversarial and
# CUDA fixture under one root, as a nightly run would meet them. Checks each implementation's
# verdict and whether it was scored against test/fixtures/catalogue/expected.txt, and that the
# shipped ops pass every test. Exit 0 when all holds, 1 otherwise.
#
#   scripts/sweep_catalogue.sh [BUILD_DIR] [OUT_DIR]
#
# CUDA fixtures are checked where the build has them and a CUDA device answers. Timing as by
# default: a timed test may take --test-timeout (8 s) plus four times the timing budget.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
out="${2:-$build/catalogue}"
rm -rf "$out" && mkdir -p "$out/root/scale"

# The root: the shipped ops as built, and one `scale` folder holding every fixture with one
# reference (the CUDA manifest: the op is declared for cpu and cuda).
cp -r "$build"/custom_ops/* "$out/root/"
cp "$here/test/fixtures/gpu/gen_input.yaml" "$out/root/scale/"
cp "$build"/test_roots/hostile/scale/*.so "$build"/test_roots/clock/scale/scale_clock_restore.so "$out/root/scale/"
if [ -d "$build/test_roots/gpu/scale" ]; then
  for so in "$build"/test_roots/gpu/scale/scale_cuda_*.so; do [ -e "$so" ] && cp "$so" "$out/root/scale/"; done
fi

# The Python implementations on CUDA (streams of their own: python_witness.cpp), SKIPPED without a device.
cp "$build"/test_roots/gpu_python/scale/scale_py_*.py "$out/root/scale/" 2>/dev/null
cuda=no
if ls "$out"/root/scale/scale_cuda_*.so > /dev/null 2>&1 && command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then cuda=yes; fi

start=$(date +%s)
# CATALOGUE_OPS=scale: the fixtures alone (a device call too short for the shipped ops).
"$build/backendbench" --custom-ops-root "$out/root" --log-dir "$out/logs" --random-cases 2 --check-determinism \
  --test-timeout "${TEST_TIMEOUT:-8}" ${CATALOGUE_OPS:+--ops "$CATALOGUE_OPS"} > "$out/sweep.log" 2>&1
rc=$?
echo "catalogue sweep: exit $rc in $(( $(date +%s) - start )) s (cuda fixtures checked: $cuda); log: $out/sweep.log"

python3 - "$out/logs/results.json" "$here/test/fixtures/catalogue/expected.txt" "$cuda" "$rc" <<'PY'
import json, sys
results_path, expected_path, cuda, rc = sys.argv[1], sys.argv[2], sys.argv[3] == "yes", int(sys.argv[4])
problems = []
try:
    results = json.load(open(results_path))
except Exception as e:
    print(f"catalogue: no results ({results_path}: {e})"); sys.exit(1)
if rc != 1:
    problems.append(f"exit status {rc}, expected 1 (some implementations fail, the sweep completes)")
if not results.get("complete", False):
    problems.append("results.json is not marked complete")
tests = {}
for t in results["tests"]:
    tests.setdefault(t["impl"], []).append(t)
scored = {i["impl"]: i for i in results["scores"]["implementations"]}
# Scored: fully correct, so it counts in the scores (and gets a speedup where its device has a
# baseline). Never scored: no speedup either.
is_scored = lambda impl: impl in scored and scored[impl].get("fully_correct", False)
has_speedup = lambda impl: impl in scored and scored[impl].get("speedup") is not None
first_case = "correctness/small[n=16]"
rows = []
for line in open(expected_path):
    line = line.split("#", 1)[0].split()
    if not line:
        continue
    name, device, verdict, want_scored = line
    impl = "scale__" + name
    if device == "cuda" and not cuda:
        rows.append((name, device, verdict, "(no CUDA device: not run)", "")); continue
    got = next((t["verdict"] for t in tests.get(impl, []) if t["case"] == first_case), "(none)")
    got_scored = "yes" if is_scored(impl) else "no"
    rows.append((name, device, verdict, got, got_scored))
    if got not in verdict.split("|"):
        problems.append(f"{name}: {first_case} is {got}, expected {verdict}")
    if want_scored in ("yes", "no") and got_scored != want_scored:
        problems.append(f"{name}: scored {got_scored}, expected {want_scored}")
    if want_scored == "no" and has_speedup(impl):
        problems.append(f"{name}: has a speedup, but it is not correct")
    # "any": an attack the walls leave doing the work: scored or not, never faster than honest.
    if want_scored == "any" and has_speedup(impl) and scored[impl]["speedup"] >= 3.0:
        problems.append(f"{name}: a speedup of {scored[impl]['speedup']:.2f}: the attack gained")
# The shipped ops: every test passes and every implementation is scored.
shipped = sorted(i for i in tests if not i.startswith("scale__"))
not_run = []
for impl in shipped:
    # An implementation for a device this host lacks is SKIPPED throughout; a CUDA one must run
    # where a CUDA device answers.
    if all(t["verdict"] == "SKIPPED" for t in tests[impl]) and not (cuda and "_cuda" in impl):
        not_run.append(impl); continue
    bad = [t["case"] + " " + t["verdict"] for t in tests[impl] if t["verdict"] != "PASS"]
    if bad:
        problems.append(f"{impl}: {len(bad)} test(s) not PASS, e.g. {bad[0]}")
    if not is_scored(impl) and not impl.endswith("reference"):
        problems.append(f"{impl}: a shipped implementation that was not scored")
n_shipped = sum(len(tests[i]) for i in shipped)
if not_run:
    print(f"skipped here (no device for them): {', '.join(not_run)}")
print(f"{len(results['tests'])} tests: {n_shipped} of the shipped ops ({len(shipped)} implementations), "
      f"{len(results['tests']) - n_shipped} of the fixtures")
print("| fixture | device | expected | got | scored |")
print("|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
for p in problems:
    print("MISMATCH:", p)
print("catalogue:", "as documented" if not problems else f"{len(problems)} mismatch(es)")
sys.exit(1 if problems else 0)
PY
