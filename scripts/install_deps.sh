#!/usr/bin/env bash
# Installs the Debian packages BackendBench needs. Idempotent; needs root (or sudo).
#   scripts/install_deps.sh run    what building the tool and running the shipped ops need
#   scripts/install_deps.sh test   that, and what the tests and benchmarks need (the default)
set -euo pipefail
profile="${1:-test}"
case "$profile" in run|test) ;; *) echo "install_deps: unknown profile '$profile' (expected run or test)" >&2; exit 2 ;; esac
# The tool: the build, its libraries, and the embedded Python of the .py implementations' bridge.
pkgs=(cmake ninja-build g++ pkgconf libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev
      libdlpack-dev libssl-dev python3-dev)
# HIP 5.2 (compiles the HIP runtime plugin and HIP kernels offline). The CUDA parts build wherever
# nvcc is found (CUDA is not a Debian package here). A run installs HIP only on a host with an
# AMD GPU (/dev/kfd); the tests always build it. NO_HIP=1 skips it.
hip=(hipcc libamdhip64-dev rocm-device-libs)
if [ "$profile" = test ]; then
  pkgs+=(libgtest-dev libgmock-dev
         # the micro-benchmarks of host internals (bench/)
         libbenchmark-dev
         # the Python implementations' tests run them on CPU PyTorch
         python3-torch
         # reports and sweeps: JUnit validation (xmllint), the HTML report in a real browser, a
         # real one-node Slurm for the sharding test
         libxml2-utils chromium slurmctld slurmd slurm-client munge
         # the libFuzzer target over the manifest parser, the expressions and the .npy reader
         clang-15 libfuzzer-15-dev
         # scripts/code_sizes.py (ctest Structure.CodeSizes): each definition's first and last line
         universal-ctags)
  [ "${NO_HIP:-0}" = 1 ] || pkgs+=("${hip[@]}")
elif [ "${NO_HIP:-0}" != 1 ] && [ -e /dev/kfd ]; then
  pkgs+=("${hip[@]}")
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present ($profile)"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
