#!/usr/bin/env bash
# Installs what is needed, builds, and runs the shipped ops: verdicts and timings on the console,
# full results under bb-logs/. Arguments go to backendbench (e.g. --ops myop).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
exec "${BUILD_DIR:-build}/backendbench" "$@"
