#!/usr/bin/env bash
# What the walls of issue 39 cost a run: the same commands with every wall up, then with the
# system call filter, the filesystem view, the seal of the worker's code and all three turned
# off (BACKENDBENCH_SANDBOX_OFF), each
# timed by hyperfine (RUNS runs after one warm-up), in one call so that the ratios compare.
# Commands: the shipped ops --correctness-only, the ported BackendBench-py myop suite (timed),
# and one op's loop (timed: --ops myop --impls IMPL, myop_cpp by default; myop_cuda_vec on a GPU).
# docs/PERFORMANCE.md, "The cost of the defences".
#
#   [RUNS=5] [IMPL=myop_cpp] scripts/bench_defences.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
bb="$build/backendbench"
runs="${RUNS:-5}"
impl="${IMPL:-myop_cpp}"
suite="$build/bench_roots/myop_suite"
[[ "$impl" == *cuda* && -d "$build/bench_roots/myop_suite_cuda" ]] && suite="$build/bench_roots/myop_suite_cuda"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $(nproc) cores, git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $runs runs each"
for what in "shipped ops, --correctness-only|--custom-ops-root $build/custom_ops --correctness-only" \
            "myop suite (ported), timed|--custom-ops-root $suite" \
            "--ops myop --impls $impl, timed|--custom-ops-root $build/custom_ops --ops myop --impls $impl"; do
  name="${what%%|*}"
  args="${what#*|} --log-dir $out/logs -q"
  echo
  echo "## $name"
  hyperfine -N -i -r "$runs" -w 1 --style basic --export-markdown "$out/table.md" \
    -n "every wall" "$bb $args" \
    -n "no system call filter" "env BACKENDBENCH_SANDBOX_OFF=seccomp $bb $args" \
    -n "no filesystem view" "env BACKENDBENCH_SANDBOX_OFF=landlock $bb $args" \
    -n "no code seal" "env BACKENDBENCH_SANDBOX_OFF=mseal $bb $args" \
    -n "none of them" "env BACKENDBENCH_SANDBOX_OFF=seccomp,landlock,mseal $bb $args" > /dev/null
  cat "$out/table.md"
done
