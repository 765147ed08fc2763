#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmarks of the backend. These machines are shared and noisy: every figure is a ratio
# against a baseline measured side by side in the same run, or a median of many samples.
#   scripts/bench.sh [ITERATIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FAKEGPU_BUILD_DIR:-$root/build}
# As root, the packages the benchmarks compare against (pocl, Chromium) are installed first:
# the build looks for OpenCL's headers.
if [[ $(id -u) -eq 0 ]]; then "$root/scripts/deps.sh"; fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
export FAKEGPU_ISOLATED=1 FAKEGPU_REPORT=off
echo "== allocation and copies (targets: alloc+free <= 2x malloc+free, H2D copy <= 1.5x memcpy)"
"$build/bin/bench_backend" "${1:-200000}"
echo
echo "== kernels run on the host (targets: first launch <= 100 ms; empty launch + synchronize <= 5 us;" \
  "SAXPY 2^24, shared+shfl reduction 2^24, tiled SGEMM 512^3 <= 3x a C++ -O2 loop on one thread;" \
  "integer hash >= 0.5x pocl's CPU device)"
"$build/bin/bench_kernels"
echo
echo "== start-up: dlopen(libcudart.so.13) to the first cudaGetDeviceCount, fresh process each (target <= 5 ms)"
python3 - "$build" <<'PY'
import statistics, subprocess, sys
build = sys.argv[1]
samples = [float(subprocess.run([build + "/bin/bench_startup", build + "/lib"], check=True,
                                capture_output=True, text=True).stdout) for _ in range(31)]
print(f"start-up over 31 processes: median {statistics.median(samples) / 1000:.2f} ms, "
      f"min {min(samples) / 1000:.2f} ms, max {max(samples) / 1000:.2f} ms")
PY
echo
echo "== NVIDIA's runtime over the fake driver, side by side with the fake's (static cudaMalloc+cudaFree <= 1.5x the fake's and <= 3x malloc; start-up <= 10 ms; cuBLAS to cublasCreate <= 1 s)"
python3 "$root/scripts/bench_runtimes.py" "$build"
echo
echo "== /metrics rendering of fakegpu-trace's exporter (target: 1,000 processes x 8 devices <= 20 ms)"
"$build/bin/bench_metrics"
echo
echo "== the dashboard page: 500 processes x 8 devices, an hour of 1 s refreshes as history (headless Chromium)"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -n $chromium ]]; then
  coproc SERVE { "$build/bin/bench_metrics" --serve 500 8; }
  read -r _ url <&"${SERVE[0]}"
  profile=$(mktemp -d)
  flags=(--headless=new --disable-gpu --no-first-run "--user-data-dir=$profile")
  [[ $(id -u) -eq 0 ]] && flags+=(--no-sandbox)
  for _ in 1 2 3; do
    timeout 120 "$chromium" "${flags[@]}" --dump-dom "${url}?bench=3600" 2>/dev/null |
      sed -n 's|.*<pre id="bench-result">\([^<]*\)</pre>.*|\1|p'
  done
  eval "exec ${SERVE[1]}>&-"
  wait "$SERVE_PID" 2>/dev/null || true
  rm -rf "$profile"
else
  echo "SKIPPED: chromium is not installed (scripts/deps.sh installs it)"
fi
echo
# The collector: overhead per traced call (USDT, entry/return, bpftrace side by side, and the
# traced pair against the build before the BPF ring buffer), sustained 200k pairs/s, the highest
# sustained event rate, attach readiness. Needs root; installs bpftrace if missing.
# FAKEGPU_BENCH_BEFORE=/path/to/an/earlier/fakegpu-trace traces a fourth copy with that build;
# naming an earlier build directory, the fourth copy is that build's backend, traced by its tracer.
if [[ $(id -u) -eq 0 ]]; then
  command -v bpftrace >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null
  unset FAKEGPU_ISOLATED
  python3 "$root/scripts/bench_trace.py" "$build"
else
  echo "== fakegpu-trace benchmarks: SKIPPED (they load BPF programs: run sudo scripts/bench.sh)"
fi
