#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ABI check of libfake_gpu.so against the API lists (fakebackend/api/*.def).

1. The dynamic exports are exactly the lists: every libcudart name under its version
   node(s) (libcudart.so.12 / libcudart.so.13), every driver and NVML name, nothing else.
2. Every exported function starts with the 5-byte NOP 0f 1f 44 00 00 (cheap uprobe site).
3. Every USDT probe site (.note.stapsdt) is a 5-byte NOP, and the probes the collector
   uses exist: fakegpu:alloc, free, implicit_free, ctx_switch, launch, kernel_done.
4. Names that loaders bind by a fixed list at start-up are exported: the GL/EGL/VDPAU interop
   names of the real libcuda.so.1 and FFmpeg's nv-codec-headers list (dynlink_loader.h),
   whose first missing name makes the loader give up.
5. Only the library's own thread-locals use the static TLS model, and they stay small:
   a static-model reference to another library's TLS (libstdc++'s) makes loading that
   library later fail ("cannot allocate memory in static TLS block", seen with numba),
   and a TLS block larger than glibc's spare static space makes dlopen of us fail.
"""
import argparse
import re
import struct
import subprocess
import sys
from pathlib import Path

NOP5 = bytes.fromhex("0f1f440000")

# Bound by name at start-up; a missing one stops the program (see the docstring, point 4).
FIXED_LISTS = {
    "GL/EGL/VDPAU interop of libcuda.so.1": """
        cuGLCtxCreate cuGLCtxCreate_v2 cuGLGetDevices cuGLGetDevices_v2 cuGLInit cuGLMapBufferObject
        cuGLMapBufferObjectAsync cuGLMapBufferObjectAsync_v2 cuGLMapBufferObjectAsync_v2_ptsz
        cuGLMapBufferObject_v2 cuGLMapBufferObject_v2_ptds cuGLRegisterBufferObject
        cuGLSetBufferObjectMapFlags cuGLUnmapBufferObject cuGLUnmapBufferObjectAsync
        cuGLUnregisterBufferObject cuGraphicsGLRegisterBuffer cuGraphicsGLRegisterImage
        cuEGLStreamConsumerAcquireFrame cuEGLStreamConsumerConnect cuEGLStreamConsumerConnectWithFlags
        cuEGLStreamConsumerDisconnect cuEGLStreamConsumerReleaseFrame cuEGLStreamProducerConnect
        cuEGLStreamProducerDisconnect cuEGLStreamProducerPresentFrame cuEGLStreamProducerReturnFrame
        cuEventCreateFromEGLSync cuGraphicsEGLRegisterImage cuGraphicsResourceGetMappedEglFrame
        cuGraphicsVDPAURegisterOutputSurface cuGraphicsVDPAURegisterVideoSurface cuVDPAUCtxCreate
        cuVDPAUCtxCreate_v2 cuVDPAUGetDevice""",
    "FFmpeg nv-codec-headers (cuda_load_functions)": """
        cuInit cuDeviceGetCount cuDeviceGet cuDeviceGetAttribute cuDeviceGetName cuDeviceComputeCapability
        cuCtxCreate_v2 cuCtxSetLimit cuCtxPushCurrent_v2 cuCtxPopCurrent_v2 cuCtxDestroy_v2 cuMemAlloc_v2
        cuMemAllocPitch_v2 cuMemsetD8Async cuMemFree_v2 cuMemcpy cuMemcpyAsync cuMemcpy2D_v2
        cuMemcpy2DAsync_v2 cuGetErrorName cuGetErrorString cuCtxGetDevice cuDevicePrimaryCtxRetain
        cuDevicePrimaryCtxRelease cuDevicePrimaryCtxSetFlags cuDevicePrimaryCtxGetState
        cuDevicePrimaryCtxReset cuStreamCreate cuStreamQuery cuStreamSynchronize cuStreamDestroy_v2
        cuStreamAddCallback cuEventCreate cuEventDestroy_v2 cuEventSynchronize cuEventQuery cuEventRecord
        cuLaunchKernel cuLinkCreate cuLinkAddData cuLinkComplete cuLinkDestroy cuModuleLoadData
        cuModuleUnload cuModuleGetFunction cuModuleGetGlobal cuTexObjectCreate cuTexObjectDestroy
        cuGLGetDevices_v2 cuGraphicsGLRegisterImage cuGraphicsUnregisterResource cuGraphicsMapResources
        cuGraphicsUnmapResources cuGraphicsSubResourceGetMappedArray""",
}


def parse_lists(api: Path):
    want = set()
    for m in re.finditer(r"^\s*FG_CUDART\((\w+),\s*(\w+),\s*\w+\)", (api / "cudart.def").read_text(), re.M):
        name, nodes = m.groups()
        if nodes in ("BOTH", "SPLIT"):
            want |= {f"{name}@libcudart.so.12", f"{name}@libcudart.so.13"}
        elif nodes == "V12":
            want.add(f"{name}@libcudart.so.12")
        elif nodes == "V13":
            want.add(f"{name}@libcudart.so.13")
        else:
            sys.exit(f"cudart.def: bad node list {nodes} for {name}")
    for m in re.finditer(r"^\s*FG_CUDA(?:_OTHER)?\((\w+)", (api / "cuda.def").read_text(), re.M):
        want.add(f"{m.group(1)}@libcuda.so.1")
    for m in re.finditer(r"^\s*FG_NVML(?:_OTHER)?\((\w+)", (api / "nvml.def").read_text(), re.M):
        want.add(f"{m.group(1)}@libnvidia_ml.so.1")
    return want


def exports(lib: Path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in "TtWwiI":
            continue
        addr, _, name = parts
        syms[name.replace("@@", "@")] = int(addr, 16)
    return syms


class Elf:
    def __init__(self, path: Path):
        self.data = path.read_bytes()
        d = self.data
        assert d[:4] == b"\x7fELF" and d[4] == 2, "64-bit ELF expected"
        phoff, = struct.unpack_from("<Q", d, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
        self.loads = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
            if p_type == 1:
                self.loads.append((p_vaddr, p_offset, p_filesz))

    def read(self, vaddr, n):
        for v, off, sz in self.loads:
            if v <= vaddr < v + sz:
                return self.data[off + vaddr - v: off + vaddr - v + n]
        raise ValueError(f"address {vaddr:#x} not in a loaded segment")


def usdt_sites(lib: Path):
    out = subprocess.run(["readelf", "-n", str(lib)], check=True, capture_output=True, text=True).stdout
    sites = []
    name = None
    for line in out.splitlines():
        m = re.match(r"\s*Name:\s*(\S+)", line)
        if m:
            name = m.group(1)
        m = re.match(r"\s*Location:\s*(0x[0-9a-f]+)", line)
        if m:
            sites.append((name, int(m.group(1), 16)))
    return sites


def tls_problems(lib: Path):
    problems = []
    relocs = subprocess.run(["readelf", "-rW", str(lib)], check=True, capture_output=True, text=True).stdout
    for line in relocs.splitlines():
        parts = line.split()
        # Offset, Info, Type, Symbol value, Symbol name + addend: a named TPOFF relocation
        # refers to another object's thread-local.
        if len(parts) >= 5 and parts[2] in ("R_X86_64_TPOFF64", "R_X86_64_TPOFF32"):
            problems.append(f"static-model TLS reference to {parts[4]}")
    phdrs = subprocess.run(["readelf", "-lW", str(lib)], check=True, capture_output=True, text=True).stdout
    for line in phdrs.splitlines():
        parts = line.split()
        if parts and parts[0] == "TLS" and int(parts[5], 16) > 512:
            problems.append(f"TLS block of {int(parts[5], 16)} bytes (keep it under 512)")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lib", required=True, type=Path)
    ap.add_argument("--api", required=True, type=Path)
    args = ap.parse_args()
    want = parse_lists(args.api)
    have = exports(args.lib)
    failures = []
    missing = sorted(want - have.keys())
    extra = sorted(have.keys() - want)
    if missing:
        failures.append(f"{len(missing)} listed names not exported, e.g. {missing[:10]}")
    if extra:
        failures.append(f"{len(extra)} exports not in the lists, e.g. {extra[:10]}")
    for what, names in FIXED_LISTS.items():
        absent = [n for n in names.split() if f"{n}@libcuda.so.1" not in have]
        if absent:
            failures.append(f"{what}: {len(absent)} names not exported, e.g. {absent[:10]}")
    elf = Elf(args.lib)
    bad = [n for n, a in have.items() if elf.read(a, 5) != NOP5]
    if bad:
        failures.append(f"{len(bad)} exports do not start with a 5-byte NOP, e.g. {sorted(bad)[:10]}")
    sites = usdt_sites(args.lib)
    names = {n for n, _ in sites}
    for probe in ("alloc", "free", "implicit_free", "ctx_switch", "launch", "kernel_done"):
        if probe not in names:
            failures.append(f"USDT probe fakegpu:{probe} missing")
    bad_sites = [(n, hex(a)) for n, a in sites if elf.read(a, 5) != NOP5]
    if bad_sites:
        failures.append(f"{len(bad_sites)} USDT sites are not 5-byte NOPs, e.g. {bad_sites[:5]}")
    failures += tls_problems(args.lib)
    print(f"exports: {len(have)} (listed {len(want)}); USDT sites: {len(sites)} in probes {sorted(names)}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
