#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, configures, builds and runs the whole test suite.
#   scripts/test.sh [ctest args…]     e.g. scripts/test.sh -R backend
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
build=${FAKEGPU_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# A hung test fails after 5 minutes instead of eating the whole CI budget.
ctest --output-on-failure --timeout 300 -j"$(nproc)" "$@"
