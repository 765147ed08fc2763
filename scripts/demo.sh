#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds fakegpu and runs a small multi-process workload on the fake GPUs: several
# processes on several devices share the host-wide device ledger, one leaks, one grows
# until the device is full. Prints what each did and the backends' exit reports.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
build=${FAKEGPU_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FAKEGPU_LEDGER="$work/ledger" FAKEGPU_REPORT="$work/report-%p.json"
export FAKEGPU_DEVICES="a100-80gb:2,t4:1"
run="$build/bin/fakegpu-run"
wl="$build/bin/workload"

trace="$build/bin/fakegpu-trace"
# The newest table the monitor printed: from its last header line to the end.
last_table() { awk '/^fakegpu-trace  / {n = 0} {t[n++] = $0} END {for (i = 0; i < n; i++) print t[i]}' "$1"; }
observer=""
if [[ $(id -u) -eq 0 ]]; then
  # The observer: every process on the host that uses the backend, refreshed each second.
  # It also serves the dashboard, /metrics and the JSON API on a free loopback port
  # (FAKEGPU_DEMO_LISTEN=HOST:PORT to choose).
  "$trace" monitor -i 1 --listen "${FAKEGPU_DEMO_LISTEN:-127.0.0.1:0}" >"$work/monitor.out" 2>"$work/monitor.err" &
  observer=$!
  # Wait for its "ready" line (probes live) rather than a guessed delay.
  for _ in $(seq 300); do grep -q "ready:" "$work/monitor.err" 2>/dev/null && break; read -rt 0.05 <> <(:) || true; done
  grep "ready:" "$work/monitor.err" || { cat "$work/monitor.err"; exit 1; }
  url=$(sed -n 's|^fakegpu-trace: serving \(http://[^ ]*\) .*|\1|p' "$work/monitor.err")
  echo "== dashboard: $url  (Prometheus: ${url}metrics; JSON: ${url}api/v1/summary)"
else
  echo "(not root: the fakegpu-trace observer is skipped; run sudo scripts/demo.sh to see it)"
fi
echo "== fake devices: $FAKEGPU_DEVICES (ledger $FAKEGPU_LEDGER)"
# Two holders keep their memory until their input closes; the view below is taken once
# both have said they hold it (their first output line), not after a guessed delay.
for i in 0 1; do mkfifo "$work/in$i" "$work/out$i"; done
"$run" "$wl" alloc 0 512 hold <"$work/in0" >"$work/out0" &
holders=($!)
"$run" "$wl" alloc 1 1024 hold <"$work/in1" >"$work/out1" &
holders+=($!)
exec 5>"$work/in0" 6>"$work/in1"
head -n 1 "$work/out0"
head -n 1 "$work/out1"
"$run" "$wl" leak 1 256
"$run" "$wl" grow 2 2048
echo
echo "== what NVML (nvidia-smi, nvitop, pynvml) sees now, from another process"
FAKEGPU_REPORT=off python3 "$root/scripts/smi.py" "$build/lib/libnvidia-ml.so.1"
if [[ -n $observer ]]; then
  echo
  echo "== fakegpu-trace monitor's live table while they hold it"
  # The first table rendered after everything above ran (the monitor refreshes each second).
  tables=$(grep -c '^fakegpu-trace  ' "$work/monitor.out" || true)
  for _ in $(seq 100); do
    (($(grep -c '^fakegpu-trace  ' "$work/monitor.out" || true) > tables + 1)) && break
    read -rt 0.05 <> <(:) || true
  done
  last_table "$work/monitor.out"
  echo
  echo "== the same from ${url}metrics (per-process series)"
  python3 - "${url}metrics" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
for line in text.splitlines():
    if line.startswith(("fakegpu_process_memory_bytes{", "fakegpu_device_memory_used_bytes{")) and not line.endswith(" 0"):
        print(line)
PY
fi
exec 5>&- 6>&-  # the holders free their memory and exit
wait "${holders[@]}"
if [[ -n $observer ]]; then
  kill -INT "$observer"
  wait "$observer" || true
  echo
  echo "== fakegpu-trace monitor's final table (after Ctrl-C)"
  last_table "$work/monitor.out"
  echo
  echo "== the CI wrapper: fakegpu-trace run --fail-on-leak -- workload leak 0 128"
  set +e
  "$trace" run --fail-on-leak --summary "$work/summary.json" -- "$run" "$wl" leak 0 128 >/dev/null 2>"$work/run.err"
  status=$?
  set -e
  python3 - "$work/summary.json" "$status" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
v = s["verdict"]
print(f"exit status {sys.argv[2]} ({v['status']}): " + "; ".join(v["reasons"]))
PY
fi
echo
echo "== exit reports (device peaks and leaks)"
python3 - "$work" <<'PY'
import glob, json, sys
for path in sorted(glob.glob(sys.argv[1] + "/report-*.json")):
    r = json.load(open(path))
    peaks = ", ".join(f"dev{d['index']} peak {d['used_memory_peak'] >> 20} MiB" for d in r["devices"] if d["used_memory_peak"])
    leak = r["leaks"]
    print(f"pid {r['pid']}: {peaks}; leaked {leak['count']} allocation(s), {leak['bytes'] >> 20} MiB")
PY
