#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A client of the fake backend driven step by step, for the integration tests.

Usage: cuda_probe.py LIBDIR STEP...

Loads libcudart.so.13, libcuda.so.1 and libnvidia-ml.so.1 from LIBDIR with ctypes (LIBDIR
"-" loads them by soname, through LD_LIBRARY_PATH, as a program run by fakegpu-run does),
runs the steps in order and prints one JSON object per step on stdout, flushed at once, so
a test can read how far the process got. Steps (arguments separated by ':'):

  count                 cudaGetDeviceCount              {"err", "count"}
  props                 cudaGetDeviceProperties of every device
                                                        {"err", "devices": [{name, total, uuid}]}
  malloc:DEV:BYTES      cudaSetDevice + cudaMalloc; the pointer is kept   {"err"}
  freeall               cudaFree of every kept pointer  {"errs"}
  meminfo:DEV           cudaSetDevice + cudaMemGetInfo  {"err", "free", "total"}
  rtstub                cudaDestroyExternalMemory (a NOT_SUPPORTED stub: external memory)  {"err"}
  drvstub               cuInit + cuDestroyExternalMemory (a NOT_SUPPORTED stub)  {"err"}
  proc:NAME:VERSION     cuGetProcAddress_v2             {"err", "status", "found"}
  launch:NAME:TIMES[:THREADS]
                        cuModuleLoadData of PTX declaring NAME, then TIMES cuLaunchKernel, from
                        this thread or from each of THREADS threads at once (ctypes lets go of
                        the interpreter lock during a call), then cuCtxSynchronize
                                                        {"err"}
  nvml                  nvmlInit_v2, name, UUID and memory of every device, nvmlShutdown
                                                        {"err", "count", "devices"}
  nvmlprocs:DEV         nvmlDeviceGetComputeRunningProcesses_v3 {"err", "procs": [{pid, used}]}
  nvmlstub              nvmlDeviceGetRetiredPagesPendingStatus (a NOT_SUPPORTED stub) {"err"}
  forkleak:DEV:BYTES    fork; the child allocates on DEV, then calls exit(0) (C atexit handlers
                        run: the child writes its own report); the parent waits for it
                                                        {"status": the child's wait status}
  wait                  prints {"step": "wait"}, then blocks until a line arrives on stdin
  exit:N                exits with status N (atexit handlers, hence the report, run)

Only the standard library is used. The step results are compared with exact values by the
tests; the probe itself judges nothing.
"""

import ctypes
import json
import os
import sys
import threading

CUDA_PROP_BYTES = 4096        # more than sizeof(cudaDeviceProp) in every CUDA version
PROP_NAME, PROP_UUID, PROP_TOTAL = 0, 256, 288  # offsets in struct cudaDeviceProp


class NvmlMemory(ctypes.Structure):  # nvmlMemory_t (v1)
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class NvmlProcessInfo(ctypes.Structure):  # nvmlProcessInfo_v2_t, the _v3 entry (24 bytes)
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


class Probe:
    def __init__(self, libdir):
        self.libdir = libdir
        self._libs = {}
        self.ptrs = []

    def lib(self, soname):
        if soname not in self._libs:
            path = soname if self.libdir == "-" else os.path.join(self.libdir, soname)
            self._libs[soname] = ctypes.CDLL(path)
        return self._libs[soname]

    @property
    def rt(self):
        return self.lib("libcudart.so.13")

    @property
    def drv(self):
        return self.lib("libcuda.so.1")

    @property
    def nvml(self):
        return self.lib("libnvidia-ml.so.1")

    # ---- steps ---------------------------------------------------------------------------
    def step_count(self):
        n = ctypes.c_int(-1)
        err = self.rt.cudaGetDeviceCount(ctypes.byref(n))
        return {"err": err, "count": n.value}

    def step_props(self):
        n = ctypes.c_int(0)
        err = self.rt.cudaGetDeviceCount(ctypes.byref(n))
        devices = []
        for i in range(n.value if err == 0 else 0):
            buf = ctypes.create_string_buffer(CUDA_PROP_BYTES)
            e = self.rt.cudaGetDeviceProperties(buf, i)
            if e != 0:
                return {"err": e, "device": i}
            raw = buf.raw
            devices.append({
                "name": raw[PROP_NAME:PROP_NAME + 256].split(b"\0", 1)[0].decode(),
                "uuid": raw[PROP_UUID:PROP_UUID + 16].hex(),
                "total": int.from_bytes(raw[PROP_TOTAL:PROP_TOTAL + 8], "little"),
            })
        return {"err": err, "devices": devices}

    def step_malloc(self, dev, nbytes):
        err = self.rt.cudaSetDevice(int(dev))
        if err:
            return {"err": err, "at": "cudaSetDevice"}
        p = ctypes.c_void_p()
        err = self.rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(int(nbytes)))
        if err == 0:
            self.ptrs.append(p)
        return {"err": err}

    def step_freeall(self):
        errs = [self.rt.cudaFree(p) for p in self.ptrs]
        self.ptrs = []
        return {"errs": errs}

    def step_meminfo(self, dev):
        err = self.rt.cudaSetDevice(int(dev))
        if err:
            return {"err": err, "at": "cudaSetDevice"}
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        err = self.rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
        return {"err": err, "free": free.value, "total": total.value}

    def step_rtstub(self):
        return {"err": self.rt.cudaDestroyExternalMemory(ctypes.c_void_p(0))}

    def step_drvstub(self):
        err = self.drv.cuInit(ctypes.c_uint(0))
        if err:
            return {"err": err, "at": "cuInit"}
        return {"err": self.drv.cuDestroyExternalMemory(ctypes.c_void_p(0))}

    def step_proc(self, name, version):
        pfn = ctypes.c_void_p()
        status = ctypes.c_int(-1)
        err = self.drv.cuGetProcAddress_v2(name.encode(), ctypes.byref(pfn), ctypes.c_int(int(version)),
                                           ctypes.c_uint64(0), ctypes.byref(status))
        return {"err": err, "status": status.value, "found": bool(pfn.value)}

    def step_launch(self, name, times, threads="0"):
        d = self.drv
        ptx = (".version 8.0\n.target sm_80\n.address_size 64\n"
               f".visible .entry {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n\tret;\n}}\n").encode() + b"\0"
        dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        for what, call in (("cuInit", lambda: d.cuInit(ctypes.c_uint(0))),
                           ("cuDeviceGet", lambda: d.cuDeviceGet(ctypes.byref(dev), 0)),
                           ("cuDevicePrimaryCtxRetain", lambda: d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)),
                           ("cuCtxSetCurrent", lambda: d.cuCtxSetCurrent(ctx)),
                           ("cuModuleLoadData", lambda: d.cuModuleLoadData(ctypes.byref(mod), ptx)),
                           ("cuModuleGetFunction", lambda: d.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()))):
            err = call()
            if err:
                return {"err": err, "at": what}
        arg = ctypes.c_uint64(0)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        u = ctypes.c_uint
        errors = []

        def launches(set_context):
            err = d.cuCtxSetCurrent(ctx) if set_context else 0
            if err:
                errors.append({"err": err, "at": "cuCtxSetCurrent"})
                return
            for _ in range(int(times)):
                err = d.cuLaunchKernel(fn, u(1), u(1), u(1), u(32), u(1), u(1), u(0), ctypes.c_void_p(0), params,
                                       ctypes.c_void_p(0))
                if err:
                    errors.append({"err": err, "at": "cuLaunchKernel"})
                    return

        if int(threads) > 0:
            workers = [threading.Thread(target=launches, args=(True,)) for _ in range(int(threads))]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        else:
            launches(False)
        return errors[0] if errors else {"err": d.cuCtxSynchronize()}

    def step_nvml(self):
        n = self.nvml
        err = n.nvmlInit_v2()
        if err:
            return {"err": err, "at": "nvmlInit_v2"}
        count = ctypes.c_uint(0)
        err = n.nvmlDeviceGetCount_v2(ctypes.byref(count))
        devices = []
        for i in range(count.value if err == 0 else 0):
            h = ctypes.c_void_p()
            name, uuid, mem = ctypes.create_string_buffer(96), ctypes.create_string_buffer(96), NvmlMemory()
            for what, call in (("nvmlDeviceGetHandleByIndex_v2", lambda: n.nvmlDeviceGetHandleByIndex_v2(u32(i), ctypes.byref(h))),
                               ("nvmlDeviceGetName", lambda: n.nvmlDeviceGetName(h, name, u32(96))),
                               ("nvmlDeviceGetUUID", lambda: n.nvmlDeviceGetUUID(h, uuid, u32(96))),
                               ("nvmlDeviceGetMemoryInfo", lambda: n.nvmlDeviceGetMemoryInfo(h, ctypes.byref(mem)))):
                e = call()
                if e:
                    return {"err": e, "at": what, "device": i}
            devices.append({"name": name.value.decode(), "uuid": uuid.value.decode(), "total": mem.total,
                            "free": mem.free, "used": mem.used})
        n.nvmlShutdown()
        return {"err": err, "count": count.value, "devices": devices}

    def step_nvmlprocs(self, dev):
        n = self.nvml
        err = n.nvmlInit_v2()
        if err:
            return {"err": err, "at": "nvmlInit_v2"}
        h = ctypes.c_void_p()
        err = n.nvmlDeviceGetHandleByIndex_v2(u32(int(dev)), ctypes.byref(h))
        if err:
            return {"err": err, "at": "nvmlDeviceGetHandleByIndex_v2"}
        infos = (NvmlProcessInfo * 64)()
        count = ctypes.c_uint(64)
        err = n.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(count), infos)
        n.nvmlShutdown()
        procs = [{"pid": infos[i].pid, "used": infos[i].usedGpuMemory} for i in range(count.value if err == 0 else 0)]
        return {"err": err, "procs": procs}

    def step_nvmlstub(self):
        n = self.nvml
        err = n.nvmlInit_v2()
        if err:
            return {"err": err, "at": "nvmlInit_v2"}
        h = ctypes.c_void_p()
        err = n.nvmlDeviceGetHandleByIndex_v2(u32(0), ctypes.byref(h))
        if err:
            return {"err": err, "at": "nvmlDeviceGetHandleByIndex_v2"}
        mode = ctypes.c_int(-1)
        err = n.nvmlDeviceGetRetiredPagesPendingStatus(h, ctypes.byref(mode))
        n.nvmlShutdown()
        return {"err": err}

    def step_forkleak(self, dev, nbytes):
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            err = self.rt.cudaSetDevice(int(dev))
            p = ctypes.c_void_p()
            err = err or self.rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(int(nbytes)))
            ctypes.CDLL(None).exit(3 if err else 0)  # libc exit: atexit handlers, no Python finalisation
        _, status = os.waitpid(pid, 0)
        return {"child": pid, "status": status}

    def step_wait(self):
        emit({"step": "wait"})
        sys.stdin.readline()
        return None

    def step_exit(self, status):
        sys.stdout.flush()
        sys.exit(int(status))


def u32(v):
    return ctypes.c_uint(v)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    probe = Probe(argv[1])
    for spec in argv[2:]:
        name, *args = spec.split(":")
        fn = getattr(probe, "step_" + name, None)
        if fn is None:
            sys.stderr.write(f"cuda_probe: unknown step {spec!r}\n")
            return 2
        result = fn(*args)
        if result is not None:
            emit(dict(step=name, **result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
