#!/usr/bin/env bash
# What the backward adds to a run's wall time: the same ops run in --mode fwd and in
# --mode fwd,bwd (and bwd alone), RUNS times each, interleaved; the median wall of each and the
# ratio (fwd,bwd) / fwd, which issue 42 bounds at 2 (the backward adds at most the forward's own
# cost). Usage: scripts/bench_backward_cost.sh BUILD_DIR [backendbench options...]
#   RUNS (default 5), OPS (default rmsnorm,softmax,layernorm).
set -euo pipefail
build="${1:?usage: bench_backward_cost.sh BUILD_DIR [options...]}"
shift
runs="${RUNS:-5}"
ops="${OPS:-rmsnorm,softmax,layernorm}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -A walls
for ((i = 0; i < runs; i++)); do
  for mode in fwd fwd,bwd bwd; do
    t0=$(date +%s.%N)
    "$build/backendbench" --custom-ops-root "$build/custom_ops" --ops "$ops" --mode "$mode" -q --log-dir "$logs/$mode" "$@" > /dev/null 2>&1 || true
    walls[$mode]+="$(echo "$(date +%s.%N) - $t0" | bc) "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
fwd=$(echo "${walls[fwd]}" | median)
both=$(echo "${walls[fwd,bwd]}" | median)
bwd=$(echo "${walls[bwd]}" | median)
tests() { jq '.tests | length' "$logs/$1/results.json"; }
printf 'ops %s, %s runs each, options: %s\n' "$ops" "$runs" "${*:-(none)}"
printf '  --mode fwd      median %6.2f s  (%s tests)\n' "$fwd" "$(tests fwd)"
printf '  --mode bwd      median %6.2f s  (%s tests)\n' "$bwd" "$(tests bwd)"
printf '  --mode fwd,bwd  median %6.2f s  (%s tests)\n' "$both" "$(tests fwd,bwd)"
printf '  (fwd,bwd) / fwd = %.2f (at most 2: the backward adds at most the forward'"'"'s cost)\n' "$(echo "$both / $fwd" | bc -l)"
