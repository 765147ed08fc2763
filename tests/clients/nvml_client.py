#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An NVML client that calls libnvidia-ml exactly the way pynvml / nvitop / gpustat do.

Usage: nvml_client.py LIBRARY_PATH

Loads LIBRARY_PATH with ctypes (as pynvml's CDLL("libnvidia-ml.so.1")), then uses the same
exported names, struct layouts and call patterns as nvidia-ml-py 12.x:

  nvmlInitWithFlags(0)                      pynvml.nvmlInit()
  nvmlSystemGetDriverVersion, nvmlSystemGetCudaDriverVersion(_v2)
  nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2
  nvmlDeviceGetName / nvmlDeviceGetUUID     96-byte buffers (the *_V2_BUFFER_SIZE constants)
  nvmlDeviceGetPciInfo_v3                   68-byte nvmlPciInfo_t
  nvmlDeviceGetMemoryInfo_v2                version = nvmlMemory_v2 = 0x02000028
  nvmlDeviceGetComputeRunningProcesses_v3   two calls: NULL buffer first (SUCCESS = none,
                                            INSUFFICIENT_SIZE = count), then a buffer of
                                            count * 2 + 5 24-byte entries, as pynvml does
  nvmlDeviceGetUtilizationRates, nvmlDeviceGetTemperature(sensor 0), nvmlDeviceGetPowerUsage,
  nvmlDeviceGetClockInfo (graphics, SM, memory, video)
  nvmlShutdown

and prints one JSON object with everything it read. Any NVML error ends the program with
exit status 1 and a message naming the call and nvmlErrorString's text, like pynvml's
NVMLError. Only the standard library is used, so any python3 can run it.
"""

import ctypes
import json
import sys

NVML_SUCCESS = 0
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96
NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96
NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80
NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32
NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_TYPES = {"graphics": 0, "sm": 1, "mem": 2, "video": 3}


class c_nvmlPciInfo_t(ctypes.Structure):  # pynvml's layout (68 bytes)
    _fields_ = [
        ("busIdLegacy", ctypes.c_char * NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE),
    ]


class c_nvmlMemory_v2_t(ctypes.Structure):  # 40 bytes
    _fields_ = [
        ("version", ctypes.c_uint),
        ("total", ctypes.c_ulonglong),
        ("reserved", ctypes.c_ulonglong),
        ("free", ctypes.c_ulonglong),
        ("used", ctypes.c_ulonglong),
    ]


nvmlMemory_v2 = ctypes.sizeof(c_nvmlMemory_v2_t) | (2 << 24)  # 0x02000028


class c_nvmlProcessInfo_t(ctypes.Structure):  # the _v3 entry (24 bytes)
    _fields_ = [
        ("pid", ctypes.c_uint),
        ("usedGpuMemory", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


class c_nvmlUtilization_t(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


assert ctypes.sizeof(c_nvmlPciInfo_t) == 68
assert ctypes.sizeof(c_nvmlMemory_v2_t) == 40
assert nvmlMemory_v2 == 0x02000028
assert ctypes.sizeof(c_nvmlProcessInfo_t) == 24


class NVMLError(Exception):
    def __init__(self, lib, func, code):
        self.code = code
        error_string = lib.nvmlErrorString
        error_string.restype = ctypes.c_char_p
        text = error_string(code).decode()
        super().__init__(f"{func} failed: {code} ({text})")


class Nvml:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)

    def fn(self, name):
        # pynvml looks every function up by name on first use.
        f = getattr(self.lib, name)
        f.restype = ctypes.c_int
        return f

    def check(self, name, *args):
        ret = self.fn(name)(*args)
        if ret != NVML_SUCCESS:
            raise NVMLError(self.lib, name, ret)

    def string(self, name, size, *args):
        buf = ctypes.create_string_buffer(size)
        self.check(name, *args, buf, ctypes.c_uint(size))
        return buf.value.decode()

    def uint(self, name, *args):
        v = ctypes.c_uint()
        self.check(name, *args, ctypes.byref(v))
        return v.value

    def compute_processes(self, handle):
        # pynvml.nvmlDeviceGetComputeRunningProcesses -> _v3.
        name = "nvmlDeviceGetComputeRunningProcesses_v3"
        f = self.fn(name)
        c_count = ctypes.c_uint(0)
        ret = f(handle, ctypes.byref(c_count), None)
        if ret == NVML_SUCCESS:
            return []  # special case, no running processes
        if ret != NVML_ERROR_INSUFFICIENT_SIZE:
            raise NVMLError(self.lib, name, ret)
        # oversize the array in case more processes are created
        c_count.value = c_count.value * 2 + 5
        procs = (c_nvmlProcessInfo_t * c_count.value)()
        ret = f(handle, ctypes.byref(c_count), procs)
        if ret != NVML_SUCCESS:
            raise NVMLError(self.lib, name, ret)
        return [
            {
                "pid": p.pid,
                "usedGpuMemory": p.usedGpuMemory,
                "gpuInstanceId": p.gpuInstanceId,
                "computeInstanceId": p.computeInstanceId,
            }
            for p in procs[: c_count.value]
        ]


def read_device(nv, index):
    handle = ctypes.c_void_p()
    nv.check("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))

    pci = c_nvmlPciInfo_t()
    nv.check("nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(pci))

    mem = c_nvmlMemory_v2_t()
    mem.version = nvmlMemory_v2
    nv.check("nvmlDeviceGetMemoryInfo_v2", handle, ctypes.byref(mem))

    util = c_nvmlUtilization_t()
    nv.check("nvmlDeviceGetUtilizationRates", handle, ctypes.byref(util))

    return {
        "index": index,
        "name": nv.string("nvmlDeviceGetName", NVML_DEVICE_NAME_V2_BUFFER_SIZE, handle),
        "uuid": nv.string("nvmlDeviceGetUUID", NVML_DEVICE_UUID_V2_BUFFER_SIZE, handle),
        "pci": {
            "busId": pci.busId.decode(),
            "busIdLegacy": pci.busIdLegacy.decode(),
            "domain": pci.domain,
            "bus": pci.bus,
            "device": pci.device,
            "pciDeviceId": pci.pciDeviceId,
            "pciSubSystemId": pci.pciSubSystemId,
        },
        "memory": {"total": mem.total, "reserved": mem.reserved, "free": mem.free, "used": mem.used},
        "processes": nv.compute_processes(handle),
        "utilization": {"gpu": util.gpu, "memory": util.memory},
        "temperature": nv.uint("nvmlDeviceGetTemperature", handle, ctypes.c_int(NVML_TEMPERATURE_GPU)),
        "power_mw": nv.uint("nvmlDeviceGetPowerUsage", handle),
        "clocks_mhz": {k: nv.uint("nvmlDeviceGetClockInfo", handle, ctypes.c_int(v)) for k, v in NVML_CLOCK_TYPES.items()},
    }


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        nv = Nvml(argv[1])
    except OSError as e:
        print(f"cannot load {argv[1]}: {e}", file=sys.stderr)
        return 1
    try:
        nv.check("nvmlInitWithFlags", ctypes.c_uint(0))
        try:
            cuda = ctypes.c_int()
            nv.check("nvmlSystemGetCudaDriverVersion", ctypes.byref(cuda))
            cuda_v2 = ctypes.c_int()
            nv.check("nvmlSystemGetCudaDriverVersion_v2", ctypes.byref(cuda_v2))
            out = {
                "driver_version": nv.string("nvmlSystemGetDriverVersion", NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE),
                "cuda_driver_version": cuda.value,
                "cuda_driver_version_v2": cuda_v2.value,
                "count": nv.uint("nvmlDeviceGetCount_v2"),
            }
            out["devices"] = [read_device(nv, i) for i in range(out["count"])]
        finally:
            nv.check("nvmlShutdown")
    except NVMLError as e:
        print(e, file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
