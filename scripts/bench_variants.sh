#!/usr/bin/env bash
# What value variants cost (docs/MANIFEST.md, "Value variants"): the shipped ops' correctness
# sweep with `--variants none` and with the default variants, alternating, ROUNDS times each.
#   scripts/bench_variants.sh [BUILD_DIR]   (ROUNDS=3 by default; extra options in ARGS)
set -euo pipefail
build="${1:-build}"
rounds="${ROUNDS:-3}"
out="$(mktemp -d)"
for ((i = 1; i <= rounds; ++i)); do
  for set in none default; do
    start=$(date +%s.%N)
    "$build/backendbench" --correctness-only --variants "$set" --log-dir "$out/$set-$i" ${ARGS:-} > "$out/$set-$i.log" 2>&1 || true
    end=$(date +%s.%N)
    tests=$(grep -o 'tests [0-9]*' "$out/$set-$i.log" | head -1 | cut -d' ' -f2)
    printf '%-8s round %d: %6.2f s, %s tests (%s)\n' "$set" "$i" "$(echo "$end - $start" | bc)" "$tests" \
      "$(grep -o '[0-9]* passed, [0-9]* failed, [0-9]* skipped' "$out/$set-$i.log")"
  done
done
rm -rf "$out"
