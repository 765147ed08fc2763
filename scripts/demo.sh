#!/usr/bin/env bash
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

echo "== fake devices: $FAKEGPU_DEVICES (ledger $FAKEGPU_LEDGER)"
# Two holders keep their memory until their input closes; the view below is taken once
# both have said they hold it (their first output line), not after a guessed delay.
for i in 0 1; do mkfifo "$work/in$i" "$work/out$i"; done
"$run" "$wl" alloc 0 512 hold <"$work/in0" >"$work/out0" &
"$run" "$wl" alloc 1 1024 hold <"$work/in1" >"$work/out1" &
exec 5>"$work/in0" 6>"$work/in1"
head -n 1 "$work/out0"
head -n 1 "$work/out1"
"$run" "$wl" leak 1 256
"$run" "$wl" grow 2 2048
echo
echo "== what NVML (nvidia-smi, nvitop, pynvml) sees now, from another process"
FAKEGPU_REPORT=off python3 "$root/scripts/smi.py" "$build/lib/libnvidia-ml.so.1"
exec 5>&- 6>&-  # the holders free their memory and exit
wait
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
