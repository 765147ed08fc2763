#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages fakegpu needs (as root; a no-op when all are present).
set -euo pipefail
PKGS=(build-essential cmake pkg-config python3 binutils
      nlohmann-json3-dev libcli11-dev catch2 robin-map-dev systemtap-sdt-dev libzstd-dev liblz4-dev
      clang clang-format clang-tidy llvm llvm-14-dev libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libboost-dev
      python3-numba
      libjs-chart.js prometheus chromium  # the dashboard's charts; its Prometheus and browser tests
      pocl-opencl-icd ocl-icd-opencl-dev opencl-headers)  # bench_kernels' baseline: OpenCL C on pocl's CPU device
# The other architecture's UAPI headers: the BPF programs are compiled for it too (ctest bpf:cross_arch_object).
case $(uname -m) in
  x86_64) PKGS+=(linux-libc-dev-arm64-cross) ;;
  aarch64) PKGS+=(linux-libc-dev-amd64-cross) ;;
esac
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "fakegpu: missing packages: ${missing[*]} — run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "fakegpu: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
