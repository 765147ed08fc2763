#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the reliability numbers the README's "Reliability" section records: the bad-input
# matrix, host memory kept per create/destroy cycle of each handle type, 1,000 processes
# SIGKILLed while allocating, and the fuzzing long run (scripts/fuzz.sh).
#   scripts/reliability.sh [--fuzz-execs N]   N executions over all fuzz targets
#                                             (default 10000000; 0 skips fuzzing)
# Uses the build in $FAKEGPU_BUILD_DIR (default build/), building what is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FAKEGPU_BUILD_DIR:-$root/build}
fuzz_execs=10000000
while [ $# -gt 0 ]; do
  case $1 in
    --fuzz-execs) fuzz_execs=${2:?--fuzz-execs needs a number}; shift 2 ;;
    -h|--help) sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reliability.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $fuzz_execs in ''|*[!0-9]*) echo "reliability.sh: --fuzz-execs wants a whole number, not '$fuzz_execs'" >&2; exit 2 ;; esac
[ -d "$build" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
build=$(cd "$build" && pwd)
cmake --build "$build" -j"$(nproc)" >/dev/null

echo "== bad-input matrix (tests/badinput)"
for family in driver runtime nvml; do
  "$build/tests/badinput_matrix" --family "$family" | tail -n 2
done

echo "== host memory kept per create/destroy cycle, 100,000 cycles (tests/backend/test_driver_handles.cpp)"
"$build/tests/backend_tests" "driver: 100\,000 create/destroy cycles of each handle type keep at most 8 bytes each" -s |
  sed -n 's/^  \(.*bytes kept per cycle\)$/  \1/p'

echo "== 1,000 processes SIGKILLed while allocating (tests/integration/test_ledger.py)"
if python3 "$root/tests/integration/test_ledger.py" --build "$build" \
  Reclaim.test_a_thousand_processes_killed_while_allocating_leave_nothing_booked >/dev/null 2>&1; then
  echo "  1000 killed; 0 bytes booked afterwards on either device, in the ledger and in NVML"
else
  echo "  FAILED: run tests/integration/test_ledger.py Reclaim.test_a_thousand_processes_killed_while_allocating_leave_nothing_booked"
  exit 1
fi

if [ "$fuzz_execs" -gt 0 ]; then
  echo "== fuzzing, $fuzz_execs executions over all targets (scripts/fuzz.sh)"
  "$root/scripts/fuzz.sh" --runs "$fuzz_execs" --build "$build"
fi
