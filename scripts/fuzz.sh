#!/usr/bin/env bash
# Builds the libFuzzer target (test/fuzz) with clang and runs it.
#   scripts/fuzz.sh [SECONDS] [libFuzzer options...]     default 60 s
# The seed corpus is made from the repository: every manifest (shipped ops, fixtures, the
# malformed corpus) as target 0, the expressions of test/fuzz/corpus/expressions.txt as target
# 1, every .npy file as target 2, and the inputs of past findings (test/fuzz/corpus/regressions). New inputs the fuzzer finds go to $FUZZ_DIR/corpus (kept
# between runs); a crash leaves its input in $FUZZ_DIR. Exit 77 when clang is missing (ctest
# reads it as skipped), else libFuzzer's status.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
clangxx="${CLANGXX:-$(command -v clang++-15 || command -v clang++ || true)}"
if [ -z "$clangxx" ]; then echo "fuzz: no clang++ (apt-get install clang-15 libfuzzer-15-dev)"; exit 77; fi
build="$(realpath -m "${FUZZ_BUILD_DIR:-build-fuzz}")"
dir="$(realpath -m "${FUZZ_DIR:-$build/run}")"
cmake -S test/fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$clangxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" > "$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }
seeds="$dir/seeds"
rm -rf "$seeds"
mkdir -p "$seeds" "$dir/corpus"
i=0
while IFS= read -r f; do
  { printf '\000'; cat "$f"; } > "$seeds/manifest_$i"
  i=$((i + 1))
done < <(find custom_ops test/fixtures -name '*.yaml' | sort)
i=0
while IFS= read -r line; do
  { printf '\001'; printf '%s' "$line"; } > "$seeds/expr_$i"
  i=$((i + 1))
done < test/fuzz/corpus/expressions.txt
i=0
while IFS= read -r f; do
  { printf '\002'; cat "$f"; } > "$seeds/npy_$i"
  i=$((i + 1))
done < <(find test/fixtures -name '*.npy' | sort)
# Inputs that once crashed a parser (test/fuzz/corpus/regressions): they stay in the seeds.
cp test/fuzz/corpus/regressions/* "$seeds/" 2>/dev/null || true
cd "$dir"
exec "$build/fuzz_inputs" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 "$@" corpus seeds
