#!/usr/bin/env bash
# Installs what a run needs, builds the tool and the shipped ops (no tests, no benchmarks), and
# runs them: verdicts and timings on the console, full results under bb-logs/. Arguments go to
# backendbench (e.g. --ops myop). scripts/test.sh installs and builds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh run
scripts/build.sh -DBACKENDBENCH_BUILD_TESTS=OFF -DBACKENDBENCH_BUILD_BENCH=OFF
exec "${BUILD_DIR:-build}/backendbench" "$@"
