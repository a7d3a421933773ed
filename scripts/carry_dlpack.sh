#!/usr/bin/env bash
# Copies this machine's dlpack header (Debian's libdlpack-dev) into .carry/include, for the GPU
# machine whose image lacks it (the device tool carries .carry with the working tree).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .carry/include/dlpack
cp /usr/include/dlpack/dlpack.h .carry/include/dlpack/
echo ".carry/include/dlpack/dlpack.h"
