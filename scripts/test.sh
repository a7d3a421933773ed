#!/usr/bin/env bash
# Installs what is needed, builds everything (tests and benchmarks too), and runs every test
# under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh test
scripts/build.sh -DBACKENDBENCH_BUILD_TESTS=ON -DBACKENDBENCH_BUILD_BENCH=ON
# No Python interpreter kept warm past the tests (docs/PYTHON.md): the one test of it asks for its own.
export BACKENDBENCH_KEEP_WARM="${BACKENDBENCH_KEEP_WARM:-0}"
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)" --timeout 600
