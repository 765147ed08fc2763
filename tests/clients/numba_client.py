# SPDX-License-Identifier: Apache-2.0
"""A Numba CUDA client (Debian python3-numba 0.56, run by /usr/bin/python3).

Numba binds the driver found at NUMBA_CUDA_DRIVER (the fake libcuda.so.1) with ctypes,
preferring the _v2 names, and creates the primary context on first use. Kernels are not
compiled here: numba 0.56 emits NVVM IR 1.6, which the CUDA 12+ libNVVM refuses (see
../../../shared/research/api-census.md 3.3); everything else a Numba program does with a
GPU is exercised and the facts are printed as one JSON object:

  detect       cuda.detect() output, cuda.gpus, per-device names / CC / PCI / UUID
  arrays       device arrays (to_device, device_array, copy_to_host with and without a
               stream, slices, copy_to_device), pinned / mapped / managed arrays, memory
               info, events
  close        cuda.close() with a pending deallocation, then select_device(3) and use it
"""

import contextlib
import io
import json
import sys

import numpy as np
from numba import cuda


def detect():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = cuda.detect()
    devices = []
    for gpu in cuda.gpus:
        with gpu:
            dev = cuda.get_current_device()
            devices.append(
                {
                    "id": dev.id,
                    "name": dev.name.decode() if isinstance(dev.name, bytes) else dev.name,
                    "cc": list(dev.compute_capability),
                    "pci_bus_id": dev.PCI_BUS_ID,
                    "pci_device_id": dev.PCI_DEVICE_ID,
                    "uuid": dev.uuid,
                    "sm_count": dev.MULTIPROCESSOR_COUNT,
                }
            )
    return {"detect_returned": bool(ok), "detect_output": out.getvalue().splitlines(), "devices": devices}


def arrays():
    facts = {}
    ctx = cuda.current_context()
    free0, total = ctx.get_memory_info()
    facts["device"] = ctx.device.id
    facts["total"] = total
    facts["used_at_start"] = total - free0

    host = np.arange(1000, dtype=np.float64) * 1.5
    d = cuda.to_device(host)
    back = d.copy_to_host()
    facts["to_device_roundtrip"] = bool(np.array_equal(back, host))
    facts["slice"] = d[10:13].copy_to_host().tolist()
    free1, _ = ctx.get_memory_info()
    facts["used_after_8000_bytes"] = total - free1

    s = cuda.stream()
    e = cuda.device_array((64, 4), dtype=np.int32, stream=s)
    src = np.arange(256, dtype=np.int32).reshape(64, 4)
    e.copy_to_device(src, stream=s)
    out = e.copy_to_host(stream=s)
    s.synchronize()
    facts["stream_roundtrip"] = bool(np.array_equal(out, src))

    pinned = cuda.pinned_array(128, dtype=np.uint8)
    pinned[:] = np.arange(128, dtype=np.uint8)
    dp = cuda.to_device(pinned)
    facts["pinned_roundtrip"] = dp.copy_to_host().tolist() == list(range(128))
    # Mapped and managed arrays: one address for host and device (unified addressing);
    # device data copied into the mapped array lands in host memory.
    mapped = cuda.mapped_array(16, dtype=np.float32)
    facts["mapped_device_pointer_is_host_pointer"] = mapped.device_ctypes_pointer.value == mapped.ctypes.data
    cuda.to_device(np.full(16, 2.5, dtype=np.float32)).copy_to_host(np.asarray(mapped))
    facts["mapped_after_copy"] = np.asarray(mapped).tolist() == [2.5] * 16
    managed = cuda.managed_array(32, dtype=np.int16)
    facts["managed_device_pointer_is_host_pointer"] = managed.device_ctypes_pointer.value == managed.ctypes.data
    np.asarray(managed)[:] = 7
    facts["managed_via_device"] = cuda.to_device(np.asarray(managed)).copy_to_host().tolist() == [7] * 32

    ev0, ev1 = cuda.event(), cuda.event()
    ev0.record()
    cuda.to_device(np.zeros(1024))
    ev1.record()
    ev1.synchronize()
    facts["elapsed_nonneg"] = cuda.event_elapsed_time(ev0, ev1) >= 0.0
    cuda.synchronize()

    return facts


def close():
    # cuda.close() pops every context, then frees what is still allocated (with no context
    # current) and resets the primary contexts; numba's own tests do this between cases.
    facts = {}
    kept = cuda.to_device(np.arange(4096, dtype=np.uint8))
    del kept  # a pending deallocation, freed by close()
    cuda.close()
    cuda.select_device(3)
    dev = cuda.get_current_device()
    facts["selected"] = {"id": dev.id, "pci_bus_id": dev.PCI_BUS_ID, "uuid": dev.uuid}
    d3 = cuda.to_device(np.ones(1 << 20, dtype=np.uint8))  # 1 MiB on device 3
    free3, total3 = cuda.current_context().get_memory_info()
    facts["device3_used"] = total3 - free3
    facts["device3_roundtrip"] = int(d3.copy_to_host().sum()) == 1 << 20
    cuda.close()
    return facts


def main(argv):
    modes = {"detect": detect, "arrays": arrays, "close": close}
    if len(argv) != 2 or argv[1] not in modes:
        print("usage: numba_client.py detect|arrays|close", file=sys.stderr)
        return 2
    json.dump(modes[argv[1]](), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
