#!/usr/bin/env bash
# Installs the Debian packages BackendBench builds against. Idempotent; needs root (or sudo).
set -euo pipefail
pkgs=(cmake ninja-build g++ libyaml-cpp-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev
      libcli11-dev nlohmann-json3-dev libdlpack-dev libbenchmark-dev libssl-dev
      # Python implementations: the embedded interpreter (the worker's bridge) and PyTorch
      python3-dev python3-torch
      # reports and sweeps: JUnit validation (xmllint), the HTML report in a real browser, a real
      # one-node Slurm for the sharding test
      libxml2-utils chromium slurmctld slurmd slurm-client munge
      # the libFuzzer target over the manifest parser, the expressions and the .npy reader
      clang-15 libfuzzer-15-dev)
# HIP 5.2 (compiles the HIP runtime plugin and HIP kernels offline; no AMD GPU needed). The CUDA
# parts build wherever nvcc is found (CUDA is not a Debian package here). NO_HIP=1 skips these.
[ "${NO_HIP:-0}" = 1 ] || pkgs+=(hipcc libamdhip64-dev rocm-device-libs)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
