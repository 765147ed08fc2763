#!/usr/bin/env bash
# Installs the Debian 12 packages fakegpu needs (as root; a no-op when all are present).
set -euo pipefail
PKGS=(build-essential cmake pkg-config python3 binutils
      nlohmann-json3-dev libcli11-dev catch2 robin-map-dev systemtap-sdt-dev libzstd-dev liblz4-dev
      clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libboost-dev
      python3-numba
      libjs-chart.js prometheus chromium)  # the dashboard's charts; its Prometheus and browser tests
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
