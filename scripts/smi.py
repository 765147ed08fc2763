#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An nvidia-smi-style view of the fake GPUs, read through NVML (ctypes, stdlib only).

    scripts/smi.py [LIBNVIDIA_ML]    default: build/lib/libnvidia-ml.so.1 next to this script

Shows every device (name, memory used/total) and every process holding memory on it, as
the backend's host-wide ledger knows them: the same numbers any NVML client sees.
"""
import ctypes
import os
import sys


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t (v3 ABI), 24 bytes
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


NVML_ERROR_INSUFFICIENT_SIZE = 7


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    path = argv[1] if len(argv) > 1 else os.path.join(here, "..", "build", "lib", "libnvidia-ml.so.1")
    nvml = ctypes.CDLL(path)
    if nvml.nvmlInitWithFlags(0) != 0:
        sys.exit("smi: nvmlInitWithFlags failed")
    count = ctypes.c_uint()
    nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
    print(f"{'GPU':>3}  {'Name':<30} {'Bus-Id':<17} {'Memory-Usage':>24}")
    rows = []
    for i in range(count.value):
        h = ctypes.c_void_p()
        nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
        name = ctypes.create_string_buffer(96)
        nvml.nvmlDeviceGetName(h, name, 96)
        bus = ctypes.create_string_buffer(32)
        pci = (ctypes.c_char * 68)()
        nvml.nvmlDeviceGetPciInfo_v3(h, pci)
        bus.value = bytes(pci[36:68]).split(b"\0")[0]
        mem = Memory()
        nvml.nvmlDeviceGetMemoryInfo(h, ctypes.byref(mem))
        print(f"{i:>3}  {name.value.decode():<30} {bus.value.decode():<17} "
              f"{mem.used >> 20:>9}MiB / {mem.total >> 20:>8}MiB")
        n = ctypes.c_uint(0)
        rc = nvml.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(n), None)
        if rc == NVML_ERROR_INSUFFICIENT_SIZE:
            procs = (ProcessInfo * n.value)()
            nvml.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(n), procs)
            rows += [(i, p.pid, p.usedGpuMemory) for p in procs[:n.value]]
    print(f"\n{'GPU':>3}  {'PID':>8}  {'Process':<20} {'GPU Memory':>12}")
    for gpu, pid, used in rows:
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
        except OSError:
            comm = "?"
        print(f"{gpu:>3}  {pid:>8}  {comm:<20} {used >> 20:>9}MiB")
    if not rows:
        print("     no processes hold fake GPU memory")
    nvml.nvmlShutdown()


if __name__ == "__main__":
    main(sys.argv)
