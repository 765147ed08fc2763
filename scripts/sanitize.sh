#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The unit and backend tiers under sanitizers, each build in its own directory and holding
# only what those tiers need (target sanitized_tests):
#   build-asan  ASan + UBSan: both tiers whole; a leak, a bad access or undefined
#               behaviour fails the test.
#   build-tsan  TSan: the tests whose threads share state (Catch2 tag [threads]): the
#               ledger's shards, the arena, the runtime's and driver's per-thread state, the
#               HTTP server's published state.
#   scripts/sanitize.sh [address|thread] [ctest args…]   both when no kind is named
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
kinds=(address thread)
case ${1:-} in
  address | thread)
    kinds=("$1")
    shift
    ;;
esac
jobs=$(nproc)
for kind in "${kinds[@]}"; do
  if [[ $kind == address ]]; then
    build=${FAKEGPU_ASAN_BUILD_DIR:-$root/build-asan}
    sanitize=address,undefined
  else
    build=${FAKEGPU_TSAN_BUILD_DIR:-$root/build-tsan}
    sanitize=thread
  fi
  echo "fakegpu: unit and backend tiers under -fsanitize=$sanitize in $build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFAKEGPU_SANITIZE=$sanitize >/dev/null
  cmake --build "$build" -j"$jobs" --target sanitized_tests
  # Sanitized code runs several times slower: a hung test still fails within 10 minutes.
  (cd "$build" && ctest --output-on-failure --timeout 600 -j"$jobs" "$@")
done
