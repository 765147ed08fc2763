#!/usr/bin/env bash
# Benchmarks of the backend (ratios measured side by side in one run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FAKEGPU_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
export FAKEGPU_ISOLATED=1 FAKEGPU_REPORT=off
"$build/bin/bench_backend" "${1:-200000}"
# Start-up: a fresh process that loads the backend and calls cudaGetDeviceCount, against
# the same process without the backend.
python3 - "$build" <<'PY'
import os, statistics, subprocess, sys, time
build = sys.argv[1]
def sample(cmd, env):
    t = time.perf_counter(); subprocess.run(cmd, env=env, check=True); return time.perf_counter() - t
env = dict(os.environ)
with_b = [build + "/bin/workload", "alloc", "0", "1"]
base = ["/bin/true"]
a = [sample(with_b, env) for _ in range(15)]
b = [sample(base, env) for _ in range(15)]
print(f"{'start-up: workload (load + first calls) vs /bin/true':<52} {statistics.median(a)*1e3:8.2f} ms {statistics.median(b)*1e3:8.2f} ms  extra {(statistics.median(a)-statistics.median(b))*1e3:.2f} ms")
PY
