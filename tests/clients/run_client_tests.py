#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The "real clients" tier: unmodified client programs against the fake backend.

Usage: run_client_tests.py CASE --build-dir DIR --bin-dir DIR [--toolkit-missing REASON]
       run_client_tests.py --list

Each case runs real clients (programs built by nvcc -cudart shared or g++ against the
CUDA toolkit's cuda.h, numba, ctypes NVML/cudart clients, several processes sharing the
fake devices) and compares what they print with exact expected values, derived here from
the documented device model (fakebackend/profiles/README.md), not from the backend.
Every mismatch is listed; the exit status is 0 (pass), 1 (fail) or 77 (skipped: the line
starting with "SKIPPED:" says what is missing). Standard library only.

Every case runs in its own temporary directory with its own environment: no inherited
FAKEGPU_* or CUDA_VISIBLE_DEVICES, private devices (FAKEGPU_ISOLATED=1) unless the case
shares a ledger file of its own between its processes, and a report only where checked.
"""

import argparse
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
MiB = 1 << 20
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's numba belongs to this interpreter
HERE = os.path.dirname(os.path.abspath(__file__))

# ---- the device model, as documented in fakebackend/profiles/README.md --------------------
# Real values of each part (deviceQuery / nvidia-smi of the real GPU) where the README lists
# them; the NVML current clocks, temperature and power are the profile's idle values.

PROFILES = {
    "a100-80gb": dict(
        name="Fake NVIDIA A100-SXM4-80GB", total=85899345920, cc=(8, 0), sms=108,
        clock_khz=1410000, mem_clock_khz=1593000, bus_width=5120, l2=41943040,
        smem_optin=166912, smem_sm=167936, threads_sm=2048,
        pci_device_id=0x20B210DE, pci_subsystem_id=0x147F10DE, fp32_fp64=2,
        nvml_clocks={"graphics": 210, "sm": 210, "mem": 1593, "video": 585}, temp=32, power_mw=62000),
    "h100-80gb": dict(
        name="Fake NVIDIA H100 80GB HBM3", total=81559 * MiB, cc=(9, 0), sms=132,
        clock_khz=1980000, mem_clock_khz=2619000, bus_width=5120, l2=52428800,
        smem_optin=232448, smem_sm=233472, threads_sm=2048,
        pci_device_id=0x233010DE, pci_subsystem_id=0x16C110DE, fp32_fp64=2,
        nvml_clocks={"graphics": 345, "sm": 345, "mem": 2619, "video": 765}, temp=33, power_mw=72000),
    "t4": dict(
        name="Fake NVIDIA Tesla T4", total=15360 * MiB, cc=(7, 5), sms=40,
        clock_khz=1590000, mem_clock_khz=5001000, bus_width=256, l2=4194304,
        smem_optin=65536, smem_sm=65536, threads_sm=1024,
        pci_device_id=0x1EB810DE, pci_subsystem_id=0x12A210DE, fp32_fp64=32,
        nvml_clocks={"graphics": 300, "sm": 300, "mem": 405, "video": 540}, temp=34, power_mw=10000),
}
DGX_BUSES = [0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD]
DEFAULT = [("a100-80gb", i) for i in range(8)]
DRIVER_VERSION = 13000
NVML_DRIVER_VERSION = "580.65.06"


def _fnv1a(s, h=0xCBF29CE484222325):
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _mix(z):
    m = 0xFFFFFFFFFFFFFFFF
    z = (z + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def uuid_of(profile, index):
    """The UUID scheme of fakebackend/src/core/device_model.cpp (assign_identity): a hash
    of (profile, position), so every process and run agree; 16 bytes, GPU-8-4-4-4-12."""
    h = _fnv1a(f"fakegpu-uuid/v1/{profile}/{index}") ^ _mix(0)
    hi = _mix(h)
    lo = _mix(hi ^ 0x6A09E667F3BCC909)
    x = (hi.to_bytes(8, "big") + lo.to_bytes(8, "big")).hex()
    return f"GPU-{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def identity(index):
    """(domain, bus) of the device at this position of the configured list."""
    return index // 8, DGX_BUSES[index % 8]


# ---- running things ------------------------------------------------------------------------


class Failure(Exception):
    pass


class Checker:
    """Collects every mismatch of a case instead of stopping at the first."""

    def __init__(self):
        self.errors = []

    def eq(self, what, actual, expected):
        if actual != expected:
            self.errors.append(f"{what}: expected {expected!r}, got {actual!r}")

    def true(self, what, cond, detail=""):
        if not cond:
            self.errors.append(f"{what}{': ' + detail if detail else ''}")

    def facts(self, what, actual, expected, ignore=()):
        """actual and expected are dicts of facts; every expected key must be there with its
        value, and no key may be there that is not expected (unless ignored)."""
        for k, v in expected.items():
            if k not in actual:
                self.errors.append(f"{what}: missing fact {k} (expected {v!r})")
            elif actual[k] != v:
                self.errors.append(f"{what}: {k}: expected {v!r}, got {actual[k]!r}")
        for k in actual:
            if k not in expected and k not in ignore:
                self.errors.append(f"{what}: unexpected fact {k}={actual[k]!r}")


class Ctx:
    def __init__(self, args, tmp):
        self.build = os.path.abspath(args.build_dir)
        self.bin = os.path.abspath(args.bin_dir)
        self.lib = os.path.join(self.build, "lib")
        self.tmp = tmp
        self.check = Checker()
        self.cudart = "shared"  # which build of the nvcc programs: "shared" or "static"
        self.cuda_root = args.cuda_root

    def env(self, shared_ledger=None, report=None, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("FAKEGPU_", "CUDA_VISIBLE_DEVICES", "NUMBA_", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH"))}
        env["LD_LIBRARY_PATH"] = self.lib
        if shared_ledger:
            env["FAKEGPU_LEDGER"] = shared_ledger
        else:
            env["FAKEGPU_ISOLATED"] = "1"
        env["FAKEGPU_REPORT"] = report or "off"
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def program(self, name):
        if self.cudart == "static" and name in NVCC_PROGRAMS:
            name += "_static"
        path = os.path.join(self.bin, name)
        if not os.access(path, os.X_OK):
            raise Failure(f"{path} was not built (the CUDA toolkit was found at configure time: build the 'all' target)")
        return path

    def run(self, argv, env, expect_rc=0, timeout=120):
        try:
            p = subprocess.run(argv, env=env, cwd=self.tmp, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"{' '.join(argv)} did not finish in {timeout} s")
        if expect_rc is not None and p.returncode != expect_rc:
            raise Failure(f"{' '.join(argv)} exited with {p.returncode} (expected {expect_rc})\n"
                          f"--- stdout\n{p.stdout}--- stderr\n{p.stderr}")
        return p

    def facts(self, argv, env, **kw):
        """Runs a program that prints key=value lines; returns them as a dict."""
        return parse_facts(self.run(argv, env, **kw).stdout, argv[0])

    def report(self, path):
        with open(path) as f:
            return json.load(f)


def parse_facts(text, source):
    """key=value lines, each key once, as a dict in order."""
    facts = {}
    for n, line in enumerate(text.splitlines(), 1):
        if "=" not in line:
            raise Failure(f"{source}:{n}: not a key=value line: {line!r}")
        k, v = line.split("=", 1)
        if k in facts:
            raise Failure(f"{source}:{n}: {k} given twice")
        facts[k] = v
    return facts


def toolkit_case(fn):
    fn.needs = "toolkit"
    return fn


def library_case(program):
    """A client of one of NVIDIA's libraries: skipped, with the reason the build left in
    PROGRAM.skip, where the toolkit lacks that library."""
    def mark(fn):
        fn.needs = "toolkit"
        fn.library_program = program
        return fn
    return mark


def numba_case(fn):
    fn.needs = "numba"
    return fn


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# The programs nvcc builds twice (CMakeLists.txt): NAME with -cudart shared, NAME_static with
# nvcc's default, NVIDIA's static runtime, which reaches the fake only through the driver.
NVCC_PROGRAMS = {"devquery", "vectoradd", "streams", "streams_ptds", "memory", "rt_facts"}


def nvcc_case(fn):
    """A case of the nvcc programs, registered twice: as NAME on the -cudart shared builds
    and as NAME_static on the static-runtime builds, with the same expectations."""
    fn.needs = "toolkit"
    CASES[fn.__name__] = fn

    def static(c):
        c.cudart = "static"
        fn(c)

    static.__doc__ = (fn.__doc__ or "").strip() + "\n    [NVIDIA's static runtime over the fake driver]"
    static.needs = "toolkit"
    CASES[fn.__name__ + "_static"] = static
    return fn


# ---- CUDA Runtime programs (nvcc -cudart shared) ----------------------------------------------


def devquery_expect(devices):
    """Facts devquery.cu prints for a list of (profile, position) in visible order."""
    e = {"driver_version": str(DRIVER_VERSION), "runtime_version": "13000", "count": str(len(devices))}
    if not devices:
        e.update(count_error="cudaErrorNoDevice", set_device_0="cudaErrorNoDevice", mem_get_info="cudaErrorNoDevice")
        return e
    e.update(count_error="cudaSuccess", current_device="0")
    for d, (prof, pos) in enumerate(devices):
        p = PROFILES[prof]
        dom, bus = identity(pos)
        k = f"dev{d}."
        e.update({
            k + "name": p["name"], k + "uuid": uuid_of(prof, pos), k + "totalGlobalMem": str(p["total"]),
            k + "cc": "%d.%d" % p["cc"], k + "multiProcessorCount": str(p["sms"]), k + "pci": f"{dom:x}:{bus:x}:0",
            k + "warpSize": "32", k + "maxThreadsPerBlock": "1024", k + "maxThreadsDim": "1024,1024,64",
            k + "maxGridSize": "2147483647,65535,65535", k + "sharedMemPerBlock": "49152",
            k + "sharedMemPerBlockOptin": str(p["smem_optin"]), k + "sharedMemPerMultiprocessor": str(p["smem_sm"]),
            k + "regsPerBlock": "65536", k + "maxThreadsPerMultiProcessor": str(p["threads_sm"]),
            k + "l2CacheSize": str(p["l2"]), k + "memoryBusWidth": str(p["bus_width"]), k + "totalConstMem": "65536",
            k + "unifiedAddressing": "1", k + "managedMemory": "1", k + "concurrentManagedAccess": "1",
            k + "integrated": "0",
            k + "attr.sm_count": str(p["sms"]), k + "attr.cc_major": str(p["cc"][0]),
            k + "attr.clock_khz": str(p["clock_khz"]), k + "attr.mem_clock_khz": str(p["mem_clock_khz"]),
            k + "attr.pci_bus": str(bus), k + "pci_bus_id": f"{dom:04X}:{bus:02X}:00.0", k + "by_pci_bus_id": str(d),
            k + "mem_free": str(p["total"]), k + "mem_total": str(p["total"]),
        })
        if len(devices) > 1:
            e[k + "can_access_peer_next"] = "1"
    e.update(props_out_of_range="cudaErrorInvalidDevice", set_device_out_of_range="cudaErrorInvalidDevice",
             by_unknown_pci_bus_id="cudaErrorInvalidDevice")
    return e


@nvcc_case
def devquery_default(c):
    """8 x A100-80GB: every cudaDeviceProp field, attribute, PCI id, UUID, cudaMemGetInfo."""
    c.check.facts("devquery", c.facts([c.program("devquery")], c.env()), devquery_expect(DEFAULT))


@nvcc_case
def devquery_visible_devices(c):
    """CUDA_VISIBLE_DEVICES=5,2: two devices, renumbered, identities of positions 5 and 2."""
    got = c.facts([c.program("devquery")], c.env(CUDA_VISIBLE_DEVICES="5,2"))
    c.check.facts("devquery", got, devquery_expect([("a100-80gb", 5), ("a100-80gb", 2)]))


@nvcc_case
def devquery_visible_uuid(c):
    """CUDA_VISIBLE_DEVICES=<UUID prefix of position 3>: that device alone."""
    prefix = uuid_of("a100-80gb", 3)[:12]
    got = c.facts([c.program("devquery")], c.env(CUDA_VISIBLE_DEVICES=prefix))
    c.check.facts("devquery", got, devquery_expect([("a100-80gb", 3)]))


@nvcc_case
def devquery_profiles(c):
    """FAKEGPU_DEVICES=t4,h100-80gb:2: a mixed node (peer access between parts not checked)."""
    devs = [("t4", 0), ("h100-80gb", 1), ("h100-80gb", 2)]
    got = c.facts([c.program("devquery")], c.env(FAKEGPU_DEVICES="t4,h100-80gb:2"))
    expect = devquery_expect(devs)
    peers = [k for k in expect if k.endswith("can_access_peer_next")]
    for k in peers:
        del expect[k]
    c.check.facts("devquery", got, expect, ignore=peers)


@nvcc_case
def devquery_no_devices(c):
    """FAKEGPU_DEVICES=0: a machine without GPUs (cudaErrorNoDevice everywhere)."""
    c.check.facts("devquery", c.facts([c.program("devquery")], c.env(FAKEGPU_DEVICES="0")), devquery_expect([]))


def check_no_leaks(c, report, what):
    c.check.eq(f"{what}: report leaks", report["leaks"], {"allocations": [], "bytes": 0, "count": 0})
    c.check.eq(f"{what}: unsupported calls", report["coverage"]["unsupported_calls"], {})


@nvcc_case
def vectoradd(c):
    """<<<>>> launches run on the host (c = a + b exactly, then the fills), invalid
    configurations rejected, byte-exact copies and memsets, exact memory accounting, a
    deliberate leak reported."""
    vectoradd_run(c, record=False)


@nvcc_case
def vectoradd_record(c):
    """FAKEGPU_KERNELS=record: launches checked and counted, kernels not run (the output
    buffer keeps what was copied into it), the report says why."""
    vectoradd_run(c, record=True)


def vectoradd_run(c, record):
    rep = os.path.join(c.tmp, "report.json")
    env = c.env(report=rep, **({"FAKEGPU_KERNELS": "record"} if record else {}))
    got = c.facts([c.program("vectoradd")], env)
    n = 1 << 16
    # A launch outside the device's limits: cudaErrorInvalidValue from either runtime, as
    # NVIDIA's runtime answers on a real H200 (golden/h200.rt.facts).
    bad_launch = "cudaErrorInvalidValue"
    c.check.facts("vectoradd", got, {
        "launch_vadd": "cudaSuccess", "launch_fill0": "cudaSuccess", "launch_fill1": "cudaSuccess",
        "launch_fill2": "cudaSuccess",
        "launch_block_2048": bad_launch, "after_block_2048": "cudaSuccess",
        "launch_grid_0": bad_launch, "sync_after_bad_launches": "cudaSuccess",
        "vadd_exact": "0" if record else "1", "c_equals_a": "1" if record else "0",
        "c[10]": "10.0" if record else "30.0", "c[65535]": "65535.0" if record else "196605.0",
        "filled_with_2": "1" if record else str(n), "b_roundtrip": "1",  # record: a[2] == 2
        "part[0]": "200.0", "part[49]": "249.0",
        "memset_ff_bytes": str(4 * n - 8), "memset_01_bytes": "8",
        "used_with_3_buffers": str(3 * 4 * n), "double_free": "cudaErrorInvalidValue", "used_at_exit": "4096",
    })
    r = c.report(rep)
    c.check.eq("report kernel_launches", r["kernel_launches"], {"_Z4vaddPKfS0_Pfi": 1, "_Z4fillPffi": 3})
    for name, launches in (("_Z4vaddPKfS0_Pfi", 1), ("_Z4fillPffi", 3)):
        k = r["kernels"].get(name, {})
        c.check.eq(f"report kernels.{name} ran", k.get("ran"), 0 if record else launches)
        c.check.eq(f"report kernels.{name} recorded", k.get("recorded"), launches if record else 0)
        c.check.eq(f"report kernels.{name} reason", k.get("reason"), "FAKEGPU_KERNELS=record" if record else None)
    c.check.eq("report leak count", r["leaks"]["count"], 1)
    c.check.eq("report leak bytes", r["leaks"]["bytes"], 4096)
    leak = r["leaks"]["allocations"][0] if r["leaks"]["allocations"] else {}
    # Through NVIDIA's runtime the fake sees only the driver calls it makes.
    api = "runtime" if c.cudart == "shared" else "driver"
    c.check.eq("report leak", {k: leak.get(k) for k in ("size", "device", "kind", "api")},
               {"size": 4096, "device": 0, "kind": "device", "api": api})
    dev0 = r["devices"][0]
    c.check.eq("report device 0 peak", dev0["used_memory_peak"], 3 * 4 * n + 4096)
    c.check.eq("report device 0 current", dev0["used_memory_current"], 4096)
    c.check.eq("report device 0 uuid", dev0["uuid"], uuid_of("a100-80gb", 0))
    calls = r["calls"]
    expect_calls = {"cudaMalloc": 4, "cudaFree": 4, "cudaMemcpy": 8, "cudaMemset": 2,
                    "__cudaRegisterFunction": 2, "__cudaPushCallConfiguration": 6, "__cudaLaunchKernel": 6}
    if c.cudart == "static":
        # cudaMemcpy's 7: one default-kind copy, one device-to-device, three to and two from the host.
        expect_calls = {"cuMemAlloc_v2": 4, "cuMemFree_v2": 4, "cuMemcpy": 1, "cuMemcpyDtoD_v2": 1,
                        "cuMemcpyDtoH_v2": 4, "cuMemcpyHtoD_v2": 2, "cuMemsetD8_v2": 2, "cuLaunchKernel": 6,
                        "cudaMalloc": None, "__cudaLaunchKernel": None}
    for name, count in expect_calls.items():
        c.check.eq(f"report calls[{name}]", calls.get(name), count)


def library_run(c, program, argv=(), env=None):
    """Runs a library client with a report; returns (facts, other stdout lines, report)."""
    rep = os.path.join(c.tmp, "report.json")
    out = c.run([c.program(program), *argv], env or c.env(report=rep)).stdout.splitlines()
    facts = dict(l.split("=", 1) for l in out if "=" in l)
    return facts, [l for l in out if "=" not in l], (c.report(rep) if env is None else None)


def used(key, value):
    """The facts lib_check::print_used prints: the runtime's and NVML's bytes in use."""
    return {key: str(value), key + "_nvml": str(value)}


def check_library_report(c, r, what, peak, launches, device=0):
    """Nothing leaked or unsupported, the device's peak as the program saw it, every launch
    recorded by name."""
    check_no_leaks(c, r, what)
    dev = r["devices"][device]
    c.check.eq(f"{what}: report device {device} peak", dev["used_memory_peak"], peak)
    c.check.eq(f"{what}: report device {device} current", dev["used_memory_current"], 0)
    c.check.eq(f"{what}: kernel launches recorded", sum(r["kernel_launches"].values()), launches)


@case
@library_case("cublas")
def cublas(c):
    """NVIDIA's cuBLAS (toolkit lib64, its own copy of NVIDIA's runtime inside) over the fake
    driver: create, stream, workspace, Sgemm and GemmEx succeed, a bad size is refused, the
    memory cuBLAS allocates for itself is counted, nothing is left at exit."""
    rep = os.path.join(c.tmp, "report.json")
    out = c.run([c.program("cublas")], c.env(report=rep)).stdout.splitlines()
    # cuBLAS itself prints the bad argument on stdout, as it does on a real GPU.
    warning = " ** On entry to SGEMM  parameter number 3 had an illegal value"
    c.check.eq("cuBLAS's message for the bad size", [l for l in out if "=" not in l], [warning])
    got = dict(l.split("=", 1) for l in out if "=" in l)
    n = 256
    mine = 3 * n * n * 4 + (4 << 20)  # three matrices and the workspace handed to cuBLAS
    own = 8520704  # what cuBLAS 13.0 allocates for itself at its first calls (A100 model)
    c.check.facts("cublas", got, {
        "create": "0", "set_stream": "0", "set_workspace": "0", **used("used_with_buffers", mine + own),
        "sgemm": "0", "gemm_ex": "0", "bad_size": "7", "stream_sync": "cudaSuccess", "destroy": "0",
        **used("used_at_exit", 0)})
    r = c.report(rep)
    check_no_leaks(c, r, "cublas")
    c.check.eq("report device 0 peak", r["devices"][0]["used_memory_peak"], mine + own)
    launches = r["kernel_launches"]
    c.check.eq("kernel launches recorded (Sgemm 1, GemmEx 1 + 2 split-K reductions)", sum(launches.values()), 4)
    c.check.true("an sgemm kernel launched by name", any("sgemm" in k for k in launches), str(launches))


@case
@library_case("cufft")
def cufft(c):
    """NVIDIA's cuFFT over the fake driver: a 1-D C2C plan made, executed both ways and
    destroyed, cuFFT's own tables counted until it unloads, bad sizes and plans refused with
    cuFFT's codes."""
    got, _, r = library_run(c, "cufft")
    data = 1024 * 8
    tables = 6967984  # what cuFFT 12 (toolkit 13.0) allocates once for itself, held to exit
    c.check.facts("cufft", got, {
        **used("used_with_data", data), "plan1d": "0", **used("used_with_plan", data + tables),
        "get_size": "0", "work_size": "0", "exec_forward": "0", "exec_inverse": "0", "sync": "cudaSuccess",
        "destroy": "0", **used("used_after_destroy", data + tables),
        "plan_size_0": "8",            # CUFFT_INVALID_SIZE
        "exec_destroyed_plan": "1",    # CUFFT_INVALID_PLAN
        **used("used_at_exit", tables)})
    check_library_report(c, r, "cufft", data + tables, 2)


@case
@library_case("curand")
def curand(c):
    """NVIDIA's cuRAND over the fake driver: a seeded pseudo-random generator generates
    uniform and normal numbers, its state is counted and freed, an odd normal count and a
    null generator get cuRAND's codes."""
    got, _, r = library_run(c, "curand")
    out = (1 << 16) * 4
    state = 196608  # the XORWOW generator's states
    c.check.facts("curand", got, {
        "create": "0", "seed": "0", "uniform": "0", **used("used_with_generator", out + state),
        "normal": "0", "normal_odd_count": "105",  # CURAND_STATUS_LENGTH_NOT_MULTIPLE
        "sync": "cudaSuccess", "destroy": "0", **used("used_after_destroy", out),
        "uniform_null_generator": "101",            # CURAND_STATUS_NOT_INITIALIZED
        **used("used_at_exit", 0)})
    # Seeding, the uniform and the normal generation.
    check_library_report(c, r, "curand", out + state, 3)


@case
@library_case("cusparse")
def cusparse(c):
    """NVIDIA's cuSPARSE over the fake driver: a CSR matrix, dense vectors, SpMV with its
    buffer; a negative dimension gets cuSPARSE's code; cuSPARSE allocates nothing itself."""
    got, _, r = library_run(c, "cusparse")
    mine = 5 * 4 + 8 * 4 + 8 * 4 + 4 * 4 + 4 * 4 + 11  # CSR arrays, x, y, and the 11-byte SpMV buffer
    c.check.facts("cusparse", got, {
        "create": "0", "create_csr": "0", "create_x": "0", "create_y": "0", "spmv_buffer_size": "0", "spmv": "0",
        "sync": "cudaSuccess", **used("used_with_buffers", mine),
        "create_csr_negative_rows": "3",  # CUSPARSE_STATUS_INVALID_VALUE
        "destroy_csr": "0", "destroy_x": "0", "destroy_y": "0", "destroy": "0", **used("used_at_exit", 0)})
    check_library_report(c, r, "cusparse", mine, 2)


@case
@library_case("cusolver")
def cusolver(c):
    """NVIDIA's cuSOLVER over the fake driver: a Cholesky factorisation with its workspace
    (cuSOLVER's own cuBLAS memory counted), a negative order refused with cuSOLVER's code."""
    got, _, r = library_run(c, "cusolver")
    lwork = 40
    mine = 64 * 64 * 4 + 4 + (lwork + 1) * 4
    own = 12715008  # cuSOLVER's and its cuBLAS's own allocations (toolkit 13.0, A100 model)
    c.check.facts("cusolver", got, {
        "create": "0", "potrf_buffer_size": "0", "lwork": str(lwork), "potrf": "0", "sync": "cudaSuccess",
        **used("used_with_workspace", mine + own),
        "potrf_negative_order": "3",  # CUSOLVER_STATUS_INVALID_VALUE
        "destroy": "0", **used("used_at_exit", 0)})
    check_library_report(c, r, "cusolver", mine + own, 3)


@case
@library_case("cudnn")
def cudnn(c):
    """NVIDIA's cuDNN 9 over the fake driver: handle, tensor / filter / convolution
    descriptors, output shape, workspace size and an implicit-GEMM forward convolution;
    a zero batch gets cuDNN's code; its own memory counted and freed."""
    got, _, r = library_run(c, "cudnn")
    mine = (2 * 3 * 32 * 32 + 8 * 3 * 3 * 3 + 2 * 8 * 32 * 32) * 4
    own = 20740  # what cuDNN 9.19 allocates for its handle
    c.check.facts("cudnn", got, {
        "version": "91900", "create": "0", "create_x": "0", "create_y": "0", "create_w": "0", "create_conv": "0",
        "set_x": "0", "set_w": "0", "set_conv": "0", "output_dim": "0", "output_shape": "2,8,32,32", "set_y": "0",
        "workspace_size": "0", "workspace_bytes": "0", "forward": "0", "sync": "cudaSuccess",
        **used("used_with_tensors", mine + own),
        "set_x_zero_batch": "2000",  # CUDNN_STATUS_BAD_PARAM
        "destroy_x": "0", "destroy_y": "0", "destroy_w": "0", "destroy_conv": "0", "destroy": "0",
        **used("used_at_exit", 0)})
    check_library_report(c, r, "cudnn", mine + own, 1)
    c.check.true("the implicit-GEMM kernel launched by name",
                 any("implicit_convolve_sgemm" in k for k in r["kernel_launches"]), str(r["kernel_launches"]))


@case
@library_case("nvrtc")
def nvrtc(c):
    """NVRTC and nvJitLink with the fake driver: a kernel compiled to a cubin and to PTX, the
    PTX linked by nvJitLink, each image loaded, queried, launched and unloaded; a compile
    error and a garbage image get their codes."""
    got, _, r = library_run(c, "nvrtc")
    expect = {"compile_cubin": "0", "compile_ptx": "0", "ptx_has_entry": "1",
              "compile_error": "6",  # NVRTC_ERROR_COMPILATION
              "link_create": "0", "link_add_ptx": "0", "link_complete": "0", "link_get_cubin": "0",
              "init": "0", "ctx_create": "0",
              "load_garbage": "200"}  # CUDA_ERROR_INVALID_IMAGE
    for image in ("cubin", "ptx", "linked"):
        for step in ("load", "get_function", "num_regs_query", "launch", "sync", "unload"):
            expect[f"{image}_{step}"] = "0"
    c.check.facts("nvrtc", got, expect)
    check_no_leaks(c, r, "nvrtc")
    c.check.eq("nvrtc: kernel launches", r["kernel_launches"], {"axpy": 3})
    c.check.eq("nvrtc: report device 0 peak", r["devices"][0]["used_memory_peak"], 2 * 4096)


NCCL_OWN = 41943040  # what NCCL 2.28 allocates per rank for two ring channels (A100 model)


@case
@library_case("nccl")
def nccl_init_all(c):
    """NVIDIA's NCCL over the fake driver and NVML, two devices in one process:
    ncclCommInitAll, a grouped all-reduce that completes, NCCL's own memory counted on each
    device and freed with the communicators; a bad data type gets NCCL's code."""
    got, _, r = library_run(c, "nccl")
    buf = (1 << 20) * 4
    c.check.facts("nccl", got, {
        "init_all": "0", "group_start": "0", "all_reduce0": "0", "all_reduce1": "0", "group_end": "0",
        "sync0": "cudaSuccess", **used("used_dev0", buf + NCCL_OWN),
        "sync1": "cudaSuccess", **used("used_dev1", buf + NCCL_OWN),
        "bad_data_type": "4",  # ncclInvalidArgument
        "destroy0": "0", "destroy1": "0", **used("used_at_exit_dev0", 0), **used("used_at_exit_dev1", 0)})
    check_no_leaks(c, r, "nccl")
    for dev in (0, 1):
        c.check.eq(f"nccl: report device {dev} peak", r["devices"][dev]["used_memory_peak"], buf + NCCL_OWN)
    c.check.eq("nccl: all-reduce kernels (one per rank)", sum(r["kernel_launches"].values()), 2)


@case
@library_case("nccl")
def nccl_rank_per_process(c):
    """NCCL with one rank per process on the shared fake GPUs (rank r on device r): the
    unique id passed on, ncclCommInitRank, an all-reduce through NCCL's CUDA-IPC (VMM
    file-descriptor) transport; each rank's memory on its own device only, as NVML sees it."""
    ledger = os.path.join(c.tmp, "ledger")
    rep = os.path.join(c.tmp, "report-%p.json")
    got = c.facts([c.program("nccl"), "spawn"], c.env(shared_ledger=ledger, report=rep))
    buf = (1 << 20) * 4
    expect = {"get_unique_id": "0", "ranks_exited_0": "2"}
    for rank in (0, 1):
        p = f"rank{rank}_"
        expect.update({p + "init": "0", p + "all_reduce": "0", p + "sync": "cudaSuccess",
                       **used(p + "used", buf + NCCL_OWN), p + "destroy": "0"})
    c.check.facts("nccl ranks", got, expect)
    reports = [c.report(os.path.join(c.tmp, f)) for f in sorted(os.listdir(c.tmp)) if f.startswith("report-")]
    c.check.eq("nccl ranks: reports (the two ranks; the parent never touches a GPU)", len(reports), 2)
    by_device = {}
    for r in reports:
        busy = [d["index"] for d in r["devices"] if d["used_memory_peak"]]
        c.check.eq(f"nccl ranks: devices used by pid {r['pid']}", len(busy), 1)
        if busy:
            by_device[busy[0]] = r
    c.check.eq("nccl ranks: devices used", sorted(by_device), [0, 1])
    for dev, r in by_device.items():
        check_library_report(c, r, f"nccl rank on device {dev}", buf + NCCL_OWN, 1, device=dev)


STREAMS_FACTS = {
    "constant_roundtrip": "1", "constant_offset3": "3.25", "constant_size": "16", "stream_flags": "1",
    "host_fn_order": "1,2,3", "query_t1": "cudaSuccess", "query_never_recorded": "cudaSuccess",
    "query_stream": "cudaSuccess", "elapsed_nonneg": "1",
    "elapsed_disable_timing": "cudaErrorInvalidResourceHandle",
    "elapsed_never_recorded": "cudaErrorInvalidResourceHandle",
    "last_error": "cudaErrorInvalidResourceHandle", "last_error_again": "cudaSuccess",
    # scale() ran in stream order: x[i] *= coef[0] (2.0) after the memset, counting its threads.
    "h2[0..3]": "0.0,0.0,0.0,0.0", "h2[4]": "8.0", "h2[last]": "2097150.0",
    "query_default_stream": "cudaSuccess", "default_stream_back": "0.0,202.0,230.0",
    "counter": str(41 + (1 << 20) + 16),
}
# Calls on the default stream (or taking one) that nvcc routes to the per-thread entry
# points in a --default-stream per-thread build, with how often streams.cu makes them.
STREAM_CALLS = {"__cudaLaunchKernel": ("_ptsz", 2), "cudaMemcpyAsync": ("_ptsz", 4), "cudaMemsetAsync": ("_ptsz", 2),
                "cudaEventRecord": ("_ptsz", 4), "cudaStreamWaitEvent": ("_ptsz", 2),
                "cudaStreamSynchronize": ("_ptsz", 4), "cudaStreamQuery": ("_ptsz", 2),
                "cudaLaunchHostFunc": ("_ptsz", 2), "cudaStreamAddCallback": ("_ptsz", 1),
                "cudaStreamGetFlags": ("_ptsz", 1), "cudaMemcpyToSymbol": ("_ptds", 2),
                "cudaMemcpyFromSymbol": ("_ptds", 3)}


# The same calls as NVIDIA's runtime makes them to the driver: it asks cuGetProcAddress for
# the per-thread twins in a per-thread build (symbol copies are synchronous copies).
DRIVER_STREAM_CALLS = {"cuLaunchKernel": ("_ptsz", 2), "cuMemcpyHtoDAsync_v2": ("_ptsz", 2),
                       "cuMemcpyDtoHAsync_v2": ("_ptsz", 2), "cuMemsetD8Async": ("_ptsz", 2),
                       "cuEventRecord": ("_ptsz", 4), "cuStreamWaitEvent": ("_ptsz", 2),
                       "cuStreamSynchronize": ("_ptsz", 4), "cuStreamQuery": ("_ptsz", 2),
                       "cuLaunchHostFunc": ("_ptsz", 2), "cuStreamAddCallback": ("_ptsz", 1),
                       "cuStreamGetFlags": ("_ptsz", 1), "cuMemcpyHtoD_v2": ("_ptds", 2),
                       "cuMemcpyDtoH_v2": ("_ptds", 3)}


def streams_common(c, program, per_thread):
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program(program)], c.env(report=rep))
    c.check.facts(program, got, dict(STREAMS_FACTS, per_thread_build="1" if per_thread else "0"))
    r = c.report(rep)
    c.check.eq("report kernel_launches", r["kernel_launches"], {"_Z5scalePfi": 2})
    check_no_leaks(c, r, program)
    if c.cudart == "static":
        for name, (suffix, count) in DRIVER_STREAM_CALLS.items():
            used, unused = (name + suffix, name) if per_thread else (name, name + suffix)
            c.check.eq(f"report calls[{used}]", r["calls"].get(used), count)
            c.check.eq(f"report calls[{unused}]", r["calls"].get(unused), None)
        imports = c.run(["nm", "-D", "--undefined-only", c.program(program)], os.environ).stdout
        c.check.true("no runtime imports (NVIDIA's runtime is linked in)", "cudaMalloc" not in imports, imports)
        return
    for name, (suffix, count) in STREAM_CALLS.items():
        used, unused = (name + suffix, name) if per_thread else (name, name + suffix)
        c.check.eq(f"report calls[{used}]", r["calls"].get(used), count)
        c.check.eq(f"report calls[{unused}]", r["calls"].get(unused), None)
    imports = c.run(["nm", "-D", "--undefined-only", c.program(program)], os.environ).stdout
    pt = sorted(m for m in re.findall(r"\b(\w+_pt(?:sz|ds))@", imports))
    expect = sorted(n + s for n, (s, _) in STREAM_CALLS.items()) if per_thread else []
    c.check.eq("per-thread imports (nm -D)", pt, expect)
    c.check.true("imports versioned @libcudart.so.13", "cudaMalloc@libcudart.so.13" in imports, imports)


@nvcc_case
def streams(c):
    """Streams, events, host functions in order, timing errors, symbols, default stream."""
    streams_common(c, "streams", per_thread=False)


@nvcc_case
def streams_per_thread(c):
    """The same program built with --default-stream per-thread: the _ptsz/_ptds imports,
    the same facts, and the calls counted under the per-thread entry points."""
    streams_common(c, "streams_ptds", per_thread=True)


@nvcc_case
def stream_query_after_event_sync(c):
    """cudaStreamQuery is cudaSuccess right after cudaEventSynchronize on the stream's last
    event (3000 times, the record queued behind a host function)."""
    got = c.facts([c.program("streams"), "event_then_query"], c.env())
    c.check.facts("streams event_then_query", got,
                  {"stream_busy_after_its_last_event_completed": "0", "last_error": "cudaSuccess"})


def attrs(key, typ, device, dev_is_self, host_is_self):
    return {f"{key}.type": typ, f"{key}.device": str(device), f"{key}.devicePointer_is_self": dev_is_self,
            f"{key}.hostPointer_is_self": host_is_self}


@nvcc_case
def memory_managed(c):
    """cudaMallocManaged and __managed__ variables: host writes, device copies, memset,
    advice and prefetch (CUDA 13 cudaMemLocation signatures), pointer attributes."""
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("memory"), "managed"], c.env(report=rep))
    expect = {"managed_var_after_host_write": "8", "managed_to_device_roundtrip": "1",
              "managed_memset_seen_by_host": "1", "managed_copy_seen_by_host": "1",
              "managed_untouched_bytes_kept": "1", "managed_after_prefetch_intact": "1"}
    expect.update(attrs("managed_var", "managed", 0, "1", "1"))
    expect.update(attrs("managed", "managed", 0, "1", "1"))
    c.check.facts("memory managed", got, expect)
    check_no_leaks(c, c.report(rep), "memory managed")


@nvcc_case
def memory_pinned(c):
    """cudaMallocHost, cudaHostAlloc(mapped|portable), cudaHostRegister: attributes, flags,
    device pointers (unified addressing), round trips, registration errors."""
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("memory"), "pinned"], c.env(report=rep))
    expect = {"host_alloc_flags": "3", "mapped_device_pointer_is_host_pointer": "1", "pinned_roundtrip": "1",
              "device_bytes_used": str(2 * MiB), "register_twice": "cudaErrorHostMemoryAlreadyRegistered",
              "registered_roundtrip": "1", "unregister_twice": "cudaErrorHostMemoryNotRegistered",
              "free_host_on_device_pointer": "cudaErrorInvalidValue", "last_error": "cudaErrorInvalidValue"}
    expect.update(attrs("malloc_host", "host", 0, "1", "1"))
    expect.update(attrs("host_alloc_mapped", "host", 0, "1", "1"))
    expect.update(attrs("registered", "host", 0, "1", "1"))
    # CUDA 11+: ordinary memory is "unregistered", device -2, no device pointer.
    expect.update(attrs("pageable", "unregistered", -2, "0", "1"))
    expect.update(attrs("unregistered", "unregistered", -2, "0", "1"))
    c.check.facts("memory pinned", got, expect)
    check_no_leaks(c, c.report(rep), "memory pinned")


@nvcc_case
def memory_multidevice(c):
    """Allocations on devices 0, 3, 5; cudaMemcpyPeer(Async) chain; per-device
    cudaMemGetInfo; peer access errors; per-thread current device; out of memory."""
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("memory"), "multidevice"], c.env(report=rep))
    used = [0] * 8
    used[0], used[3], used[5] = 16 * MiB, 32 * MiB, 48 * MiB
    expect = {"used_per_device": ",".join(map(str, used)), "current_device": "5",
              "peer_chain_roundtrip": "1", "default_kind_cross_device": "1", "can_access_peer_0_3": "1",
              "enable_peer_0_3": "cudaSuccess", "enable_peer_0_3_again": "cudaErrorPeerAccessAlreadyEnabled",
              "disable_peer_0_3": "cudaSuccess", "disable_peer_0_3_again": "cudaErrorPeerAccessNotEnabled",
              "last_error": "cudaErrorPeerAccessNotEnabled", "thread_device": "6", "thread_used_mib": "8",
              "main_device_after_thread": "0", "alloc_81_gib": "cudaErrorMemoryAllocation",
              "alloc_81_gib_ptr_null": "1", "last_error_after_oom": "cudaErrorMemoryAllocation",
              "used_after_free": ",".join(["0"] * 8)}
    expect.update(attrs("buf3", "device", 3, "1", "0"))
    c.check.facts("memory multidevice", got, expect)
    r = c.report(rep)
    check_no_leaks(c, r, "memory multidevice")
    peaks = [d["used_memory_peak"] for d in r["devices"]]
    c.check.eq("report peaks per device", peaks, [16 * MiB, 0, 0, 32 * MiB, 0, 48 * MiB, 8 * MiB, 0])


@nvcc_case
def symbol_initializers(c):
    """Initial values of __managed__, __device__ and __constant__ variables (nvcc) and of a
    PTX .global (cuModuleLoadData) are those of the device image, as on a real GPU."""
    got = c.facts([c.program("memory"), "initializers"], c.env())
    c.check.facts("nvcc symbols", got, {"managed_var": "7", "managed_array": "1.5,2.5,3.5,4.5", "device_var": "5",
                                        "constant_table": "1.25,2.50,-4.00"})
    got = c.facts([c.program("driver_module"), "initializers"], c.env())
    c.check.facts("PTX global", got, {"g_counter": "42"})


# ---- a CUDA 12 client of libcudart.so.12 (no toolkit needed) ----------------------------------


def cuda12_facts(c):
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("cuda12_client")], c.env(report=rep))
    return got, c.report(rep)


@case
def cuda12_abi(c):
    """libcudart.so.12 serves the CUDA 12 ABI: cudaGetDeviceProperties_v2 and the @12
    cudaGetDeviceProperties fill the 1032-byte 12.x struct, @13 the 1008-byte one; no _v2
    at version libcudart.so.13; nvcc-12-style registration + cudaLaunchKernel recorded."""
    got, r = cuda12_facts(c)
    p = PROFILES["a100-80gb"]
    dom, bus = identity(1)
    v12 = {"name": p["name"], "totalGlobalMem": str(p["total"]), "warpSize": "32", "cc": "8.0",
           "clockRate": str(p["clock_khz"]), "multiProcessorCount": "108", "pci": f"{dom:x}:{bus:x}:0",
           "memoryClockRate": str(p["mem_clock_khz"]), "memoryBusWidth": "5120", "l2CacheSize": str(p["l2"]),
           "maxThreadsPerMultiProcessor": "2048", "sharedMemPerBlockOptin": str(p["smem_optin"]),
           "written_past_1032": "0"}
    expect = {"driver_version": str(DRIVER_VERSION), "count": "8", "count_error": "0", "v2_in_13": "0",
              "props_v2.error": "0", "props12.error": "0", "props13.error": "0",
              "props13.multiProcessorCount": "108", "props13.pci": f"{dom:x}:{bus:x}:0",
              "props13.l2CacheSize": str(p["l2"]), "props13.written_past_1008": "0",
              "malloc_error": "0", "launch0_error": "0", "launch1_error": "0",
              "launch_unregistered_error": "98",  # cudaErrorInvalidDeviceFunction
              "sync_error": "0", "free_error": "0"}
    for k, v in v12.items():
        expect["props_v2." + k] = v
        expect["props12." + k] = v
    c.check.facts("cuda12_client", got, expect, ignore=("runtime_version", "runtime_major"))
    c.check.eq("report kernel_launches", r["kernel_launches"], {"_Z6legacyPf": 2})
    for name in ("cudaGetDeviceProperties_v2", "cudaGetDeviceProperties@libcudart.so.12", "cudaGetDeviceProperties"):
        c.check.eq(f"report calls[{name}]", r["calls"].get(name), 1)
    check_no_leaks(c, r, "cuda12_client")


@case
def cuda12_runtime_version(c):
    """cudaRuntimeGetVersion through libcudart.so.12 reports a 12.x runtime, as the real
    libcudart.so.12 does (CUDA 12 programs compare it with CUDART_VERSION)."""
    got, _ = cuda12_facts(c)
    c.check.eq("runtime_major (cudaRuntimeGetVersion@libcudart.so.12 / 1000)", got.get("runtime_major"), "12")


# ---- driver-API programs (g++ + cuda.h + stub libcuda.so) ----------------------------------------


@case
@toolkit_case
def driver_init(c):
    """The seed tutorial's cuInit / version / name programs, every device's identity."""
    needed = c.run(["readelf", "-d", c.program("driver_init")], os.environ).stdout
    c.check.true("driver_init NEEDED libcuda.so.1", "[libcuda.so.1]" in needed, needed)
    c.check.facts("driver_init", c.facts([c.program("driver_init")], c.env()), driver_init_expect())


def driver_init_expect():
    e = {"count_before_init": "CUDA_ERROR_NOT_INITIALIZED", "error_string_before_init": "CUDA_SUCCESS",
         "invalid_device_message": "invalid device ordinal", "init_flags_1": "CUDA_ERROR_INVALID_VALUE",
         "driver_version": str(DRIVER_VERSION), "device0_name": PROFILES["a100-80gb"]["name"], "count": "8",
         "bad_device.code": "101", "bad_device.name": "CUDA_ERROR_INVALID_DEVICE",
         "bad_device.message": "invalid device ordinal", "unknown_error_code_name": "CUDA_ERROR_INVALID_VALUE",
         "attribute_out_of_range": "CUDA_ERROR_INVALID_VALUE"}
    for i, (prof, pos) in enumerate(DEFAULT):
        p = PROFILES[prof]
        dom, bus = identity(pos)
        e.update({f"dev{i}.name": p["name"], f"dev{i}.total_mem": str(p["total"]), f"dev{i}.cc": "%d.%d" % p["cc"],
                  f"dev{i}.sms": str(p["sms"]), f"dev{i}.pci": f"{dom:x}:{bus:x}:0",
                  f"dev{i}.pci_bus_id": f"{dom:04X}:{bus:02X}:00.0", f"dev{i}.by_pci_bus_id": str(i),
                  f"dev{i}.uuid": uuid_of(prof, pos)})
    return e


@case
@toolkit_case
def driver_context(c):
    """The seed tutorial's context stack (cuCtxCreate_v4 with NULL params), contexts on
    another device, a thread without a context, the primary context's reference count."""
    got = c.facts([c.program("driver_context")], c.env())
    c.check.facts("driver_context", got, {
        "ctxA_set": "1", "ctxB_set": "1", "ctxA_is_not_ctxB": "1", "current_is_ctxB": "1",
        "after_push_current_is_ctxA": "1", "popped_is_ctxA": "1", "after_pop_current_is_ctxB": "1",
        "ctx_device": "0", "ctx2_device": "2", "ctx2_used": str(8 * MiB), "popped_is_ctx2": "1", "ctxB_used": "0",
        "thread_get_current": "CUDA_SUCCESS", "thread_current_is_null": "1",
        "thread_alloc_without_context": "CUDA_ERROR_INVALID_CONTEXT", "thread_set_current": "CUDA_SUCCESS",
        "thread_device": "0", "main_current_still_ctxB": "1",
        "primary_active_before": "0", "primary_set": "1", "primary_same_twice": "1", "primary_active": "1",
        "primary_device": "0", "primary_active_after_one_release": "1", "primary_active_after_two_releases": "0"})


@case
@toolkit_case
def driver_memory(c):
    """The seed tutorial's memory program (cuMemsetD32 on page-locked host memory gives
    555), exact cuMemGetInfo deltas, copies, sets of 8/16/32 bits, managed/mapped memory."""
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("driver_memory")], c.env(report=rep))
    c.check.facts("driver_memory", got, {
        "context_set": "1", "device_pointer_set": "1", "host_page_locked_memory[0]": "123.000000",
        "after_memset_d32": "555.000000", "page_locked_memory_type": "1", "device_memory_type": "2",
        "total": str(PROFILES["a100-80gb"]["total"]), "used_at_start": "0", "alloc_64mib_delta": str(64 * MiB),
        "address_range_base_is_alloc": "1", "address_range_size": str(64 * MiB),
        "htod_dtod_dtoh_roundtrip": "1", "async_partial_copy": "1",
        # 3 x AB, host byte 3 (0x89) untouched, 2 x 0x1234, 2 x 0xDEADBEEF, host byte 16 (0x30)
        "memset_bytes": "ababab8934123412efbeaddeefbeadde30",
        "managed_is_managed": "1", "managed_host_write_seen": "1", "mapped_device_pointer_is_host_pointer": "1",
        "alloc_beyond_capacity": "CUDA_ERROR_OUT_OF_MEMORY", "alloc_zero": "CUDA_ERROR_INVALID_VALUE",
        "free_twice": "CUDA_ERROR_INVALID_VALUE", "used_at_end": "0"})
    check_no_leaks(c, c.report(rep), "driver_memory")


@case
@toolkit_case
def driver_free_without_context(c):
    """cuMemFree / cuMemFreeHost / cuMemHostUnregister with no context current succeed: the
    driver finds the owning context from the pointer (Numba's cuda.close() does this)."""
    got = c.facts([c.program("driver_memory"), "free_without_context"], c.env())
    c.check.facts("driver_memory free_without_context", got, {
        "current_is_null": "1", "mem_free": "CUDA_SUCCESS", "mem_free_host": "CUDA_SUCCESS",
        "mem_host_unregister": "CUDA_SUCCESS", "used_after": "0"})


@case
@toolkit_case
def driver_module(c):
    """PTX module: functions and globals looked up, cuLaunchKernel recorded by name,
    events, cuGetProcAddress picking the ABI by version and the per-thread twins."""
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("driver_module")], c.env(report=rep))
    c.check.facts("driver_module", got, {
        "get_missing_function": "CUDA_ERROR_NOT_FOUND", "g_counter_size": "4", "g_table_size": "24",
        "g_counter_after_write": "7", "get_missing_global": "CUDA_ERROR_NOT_FOUND",
        "launch_block_too_big": "CUDA_ERROR_INVALID_VALUE", "event_query": "CUDA_SUCCESS", "elapsed_nonneg": "1",
        "proc_cuMemAlloc_is_v2": "1", "proc_query": "0", "proc_cuCtxCreate_13000_is_v4": "1",
        "proc_cuCtxCreate_3020_is_v2": "1", "proc_cuMemcpyAsync_ptsz": "1", "proc_unknown": "CUDA_ERROR_NOT_FOUND",
        "proc_unknown_query": "1", "proc_unknown_null": "1"})
    r = c.report(rep)
    c.check.eq("report kernel_launches", r["kernel_launches"], {"k": 1, "k2": 4})
    check_no_leaks(c, r, "driver_module")


# ---- numba (python3-numba, /usr/bin/python3) -------------------------------------------------------


def numba_env(c):
    # A CUDA_HOME of our own: lib64/libcudart.so is the fake runtime (numba -s reports its
    # version), nvvm/ exists so that numba's path probing does not fail; no libNVVM, no kernels.
    home = os.path.join(c.tmp, "cuda_home")
    for d in ("lib64", "nvvm/lib64", "nvvm/libdevice"):
        os.makedirs(os.path.join(home, d), exist_ok=True)
    os.symlink(os.path.join(c.lib, "libcudart.so.13"), os.path.join(home, "lib64", "libcudart.so"))
    return c.env(NUMBA_CUDA_DRIVER=os.path.join(c.lib, "libcuda.so.1"), CUDA_HOME=home)


def numba_json(c, mode, report=None):
    env = numba_env(c)
    if report:
        env["FAKEGPU_REPORT"] = report
    out = c.run([SYSTEM_PYTHON, os.path.join(HERE, "numba_client.py"), mode], env).stdout
    return json.loads(out)


def detect_lines(devices):
    lines = [f"Found {len(devices)} CUDA devices"]
    for i, (prof, pos) in enumerate(devices):
        p = PROFILES[prof]
        lines.append("id %d    %20s %40s" % (i, repr(p["name"].encode()), "[SUPPORTED]"))
        for key, val in (("Compute Capability", "%d.%d" % p["cc"]), ("PCI Device ID", 0),
                         ("PCI Bus ID", identity(pos)[1]), ("UUID", uuid_of(prof, pos)), ("Watchdog", "Disabled"),
                         ("FP32/FP64 Performance Ratio", p["fp32_fp64"])):
            lines.append("%40s: %s" % (key, val))
    lines += ["Summary:", f"\t{len(devices)}/{len(devices)} devices are supported"]
    return lines


@case
@numba_case
def numba_sysinfo(c):
    """`numba -s`: driver initialised, driver and runtime 13.0, the 8 devices detected."""
    p = c.run([SYSTEM_PYTHON, "-m", "numba", "-s"], numba_env(c))
    lines = p.stdout.splitlines()

    def value(label):
        for line in lines:
            m = re.match(r"^" + re.escape(label) + r"\s*: (.*)$", line)
            if m:
                return m.group(1)
        return None

    c.check.eq("CUDA Device Initialized", value("CUDA Device Initialized"), "True")
    c.check.eq("CUDA Driver Version", value("CUDA Driver Version"), "13.0")
    c.check.eq("CUDA Runtime Version", value("CUDA Runtime Version"), "13.0")
    if "CUDA Detect Output:" in lines:
        start = lines.index("CUDA Detect Output:") + 1
        expect = detect_lines(DEFAULT)
        c.check.eq("CUDA Detect Output", lines[start:start + len(expect)], expect)
    else:
        c.check.true("numba -s prints CUDA Detect Output", False, p.stdout)
    warnings = [line for line in lines if line.startswith("Warning (cuda)")]
    c.check.eq("numba -s CUDA warnings", warnings, [])


@case
@numba_case
def numba_detect(c):
    """cuda.detect() and cuda.gpus: 8 devices with the fake name, CC, PCI ids and UUIDs."""
    got = numba_json(c, "detect")
    c.check.eq("cuda.detect() returned", got["detect_returned"], True)
    c.check.eq("cuda.detect() output", got["detect_output"], detect_lines(DEFAULT))
    expect = [{"id": i, "name": PROFILES[prof]["name"], "cc": list(PROFILES[prof]["cc"]), "pci_bus_id": identity(pos)[1],
               "pci_device_id": 0, "uuid": uuid_of(prof, pos), "sm_count": PROFILES[prof]["sms"]}
              for i, (prof, pos) in enumerate(DEFAULT)]
    c.check.eq("cuda.gpus", got["devices"], expect)


@case
@numba_case
def numba_arrays(c):
    """Device arrays through NUMBA_CUDA_DRIVER: round trips (plain, stream, slices, pinned,
    mapped, managed), exact memory info, events; numba binds the _v2 driver names."""
    rep = os.path.join(c.tmp, "report.json")
    got = numba_json(c, "arrays", report=rep)
    total = PROFILES["a100-80gb"]["total"]
    c.check.eq("numba arrays", got, {
        "device": 0, "total": total, "used_at_start": 0, "to_device_roundtrip": True, "slice": [15.0, 16.5, 18.0],
        "used_after_8000_bytes": 8000, "stream_roundtrip": True, "pinned_roundtrip": True,
        "mapped_device_pointer_is_host_pointer": True, "mapped_after_copy": True,
        "managed_device_pointer_is_host_pointer": True, "managed_via_device": True, "elapsed_nonneg": True})
    calls = c.report(rep)["calls"]
    for name in ("cuMemAlloc_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuCtxGetDevice_v2", "cuMemGetInfo_v2",
                 "cuDevicePrimaryCtxRetain", "cuMemAllocManaged", "cuMemHostAlloc", "cuEventElapsedTime_v2"):
        c.check.true(f"numba called {name}", calls.get(name, 0) > 0, f"calls: {sorted(calls)}")
    for name in ("cuMemAlloc", "cuMemcpyHtoD", "cuCtxGetDevice"):
        c.check.eq(f"numba never binds the legacy {name}", calls.get(name), None)


@case
@numba_case
def numba_close(c):
    """cuda.close() with a pending deallocation (freed with no context current), then
    select_device(3): device 3's identity and exact memory use."""
    got = numba_json(c, "close")
    c.check.eq("numba close", got, {
        "selected": {"id": 3, "pci_bus_id": identity(3)[1], "uuid": uuid_of("a100-80gb", 3)},
        "device3_used": MiB, "device3_roundtrip": True})


# ---- NVML (ctypes, the pynvml/nvitop call pattern) -----------------------------------------------------


def nvml(c, env):
    out = c.run([sys.executable, os.path.join(HERE, "nvml_client.py"), os.path.join(c.lib, "libnvidia-ml.so.1")],
                env).stdout
    return json.loads(out)


def nvml_device_expect(index, prof, pos, used=0, processes=()):
    p = PROFILES[prof]
    dom, bus = identity(pos)
    return {
        "index": index, "name": p["name"], "uuid": uuid_of(prof, pos),
        "pci": {"busId": f"{dom:08X}:{bus:02X}:00.0", "busIdLegacy": f"{dom:04X}:{bus:02X}:00.0", "domain": dom,
                "bus": bus, "device": 0, "pciDeviceId": p["pci_device_id"], "pciSubSystemId": p["pci_subsystem_id"]},
        "memory": {"total": p["total"], "reserved": 0, "free": p["total"] - used, "used": used},
        "processes": [{"pid": pid, "usedGpuMemory": b, "gpuInstanceId": 0xFFFFFFFF, "computeInstanceId": 0xFFFFFFFF}
                      for pid, b in processes],
        "utilization": {"gpu": 0, "memory": 0}, "temperature": p["temp"], "power_mw": p["power_mw"],
        "clocks_mhz": p["nvml_clocks"],
    }


def nvml_expect(devices, usage=None):
    usage = usage or {}
    devs = []
    for i, (prof, pos) in enumerate(devices):
        procs = usage.get(i, [])
        devs.append(nvml_device_expect(i, prof, pos, sum(b for _, b in procs), procs))
    return {"driver_version": NVML_DRIVER_VERSION, "cuda_driver_version": DRIVER_VERSION,
            "cuda_driver_version_v2": DRIVER_VERSION, "count": len(devices), "devices": devs}


def check_nvml(c, what, got, expect):
    if got.get("count") != expect["count"] or len(got.get("devices", [])) != len(expect["devices"]):
        c.check.eq(what, got, expect)
        return
    for k in ("driver_version", "cuda_driver_version", "cuda_driver_version_v2", "count"):
        c.check.eq(f"{what}: {k}", got[k], expect[k])
    for g, e in zip(got["devices"], expect["devices"]):
        for k in e:
            if k == "processes":
                c.check.eq(f"{what}: device {e['index']} processes",
                           sorted(g[k], key=lambda x: x["pid"]), sorted(e[k], key=lambda x: x["pid"]))
            else:
                c.check.eq(f"{what}: device {e['index']} {k}", g.get(k), e[k])


@case
def nvml_default(c):
    """The pynvml/nvitop call pattern on 8 idle A100s: every value exact; NVML ignores
    CUDA_VISIBLE_DEVICES, as the real one does."""
    check_nvml(c, "nvml", nvml(c, c.env()), nvml_expect(DEFAULT))
    check_nvml(c, "nvml with CUDA_VISIBLE_DEVICES=3", nvml(c, c.env(CUDA_VISIBLE_DEVICES="3")), nvml_expect(DEFAULT))


@case
def nvml_profiles(c):
    """FAKEGPU_DEVICES=t4,h100-80gb:2 through NVML: names, memory, PCI ids, clocks, power."""
    devs = [("t4", 0), ("h100-80gb", 1), ("h100-80gb", 2)]
    check_nvml(c, "nvml", nvml(c, c.env(FAKEGPU_DEVICES="t4,h100-80gb:2")), nvml_expect(devs))


# ---- several processes on shared devices ---------------------------------------------------------------


class Workload:
    """build/bin/workload in the background; ready once it printed its line."""

    def __init__(self, c, env, *args):
        self.argv = [os.path.join(c.build, "bin", "workload"), *map(str, args)]
        self.p = subprocess.Popen(self.argv, env=env, cwd=c.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        self.pid = self.p.pid

    def ready_line(self, timeout=60):
        """Blocks until the program has printed its first line (its allocation is made and
        touched): the readiness signal. The timeout only bounds a broken run."""
        sel = selectors.DefaultSelector()
        sel.register(self.p.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                self.kill()
                raise Failure(f"{' '.join(self.argv)} printed nothing in {timeout} s")
            line = self.p.stdout.readline()
            if line:
                return line.rstrip("\n")
            if self.p.poll() is not None:
                raise Failure(f"{' '.join(self.argv)} exited with {self.p.returncode} before it was ready: "
                              f"{self.p.stderr.read()}")

    def kill(self, reap=True):
        if self.p.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
        if reap:
            self.p.wait()

    def wait_dead_unreaped(self):
        """Waits until the killed child is a zombie, without reaping it (WNOWAIT)."""
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)


def meminfo(c, env, *devs):
    out = c.run([sys.executable, os.path.join(HERE, "cuda_meminfo.py"), os.path.join(c.lib, "libcudart.so.13"),
                 *map(str, devs)], env).stdout
    return {int(k): tuple(v) for k, v in json.loads(out).items()}


@case
def cross_process(c):
    """Two processes hold 48 and 80 MiB on device 1; NVML in a third lists both with their
    exact bytes, cudaMemGetInfo in a fourth sees the sum; SIGKILL one (reaped): its memory
    comes back; a process that exits leaking memory gives it back too."""
    env = c.env(shared_ledger=os.path.join(c.tmp, "ledger"))
    total = PROFILES["a100-80gb"]["total"]
    a = Workload(c, env, "alloc", 1, 48, 600000)
    b = Workload(c, env, "alloc", 1, 80, 600000)
    try:
        c.check.eq("workload a ready line", a.ready_line(), f"pid {a.pid}: 48 MiB on device 1")
        c.check.eq("workload b ready line", b.ready_line(), f"pid {b.pid}: 80 MiB on device 1")
        check_nvml(c, "nvml, a and b alive", nvml(c, env),
                   nvml_expect(DEFAULT, {1: [(a.pid, 48 * MiB), (b.pid, 80 * MiB)]}))
        c.check.eq("cudaMemGetInfo, a and b alive", meminfo(c, env, 0, 1),
                   {0: (total, total), 1: (total - 128 * MiB, total)})

        a.kill()
        check_nvml(c, "nvml after SIGKILL of a", nvml(c, env), nvml_expect(DEFAULT, {1: [(b.pid, 80 * MiB)]}))
        c.check.eq("cudaMemGetInfo after SIGKILL of a", meminfo(c, env, 1), {1: (total - 80 * MiB, total)})

        leak = c.run([os.path.join(c.build, "bin", "workload"), "leak", "2", "64"], env)
        c.check.true("leak workload printed its line", "64 MiB on device 2" in leak.stdout, leak.stdout)
        check_nvml(c, "nvml after the leaking process exited", nvml(c, env),
                   nvml_expect(DEFAULT, {1: [(b.pid, 80 * MiB)]}))

        b.kill()
        check_nvml(c, "nvml after SIGKILL of b", nvml(c, env), nvml_expect(DEFAULT))
        c.check.eq("cudaMemGetInfo after both", meminfo(c, env, 1, 2), {1: (total, total), 2: (total, total)})
    finally:
        a.kill()
        b.kill()


@case
def cross_process_zombie(c):
    """A SIGKILLed process's memory comes back as soon as it is dead, before its parent
    reaps it (the real driver frees it when the process exits, not when it is waited for)."""
    env = c.env(shared_ledger=os.path.join(c.tmp, "ledger"))
    total = PROFILES["a100-80gb"]["total"]
    a = Workload(c, env, "alloc", 4, 32, 600000)
    try:
        c.check.eq("workload ready line", a.ready_line(), f"pid {a.pid}: 32 MiB on device 4")
        os.kill(a.pid, signal.SIGKILL)
        a.wait_dead_unreaped()
        c.check.eq("cudaMemGetInfo, killed and not reaped", meminfo(c, env, 4), {4: (total, total)})
        check_nvml(c, "nvml, killed and not reaped", nvml(c, env), nvml_expect(DEFAULT))
    finally:
        a.kill()


@case
def cross_process_capacity(c):
    """Processes share a device's capacity: on a 256 MiB device where one process holds
    96 MiB, another fits exactly 5 x 32 MiB; after the holder is killed, 8 x 32 MiB."""
    config = os.path.join(c.tmp, "devices.json")
    with open(config, "w") as f:
        json.dump({"devices": [{"profile": "t4", "total_memory": "256MiB"}]}, f)
    env = c.env(shared_ledger=os.path.join(c.tmp, "ledger"), FAKEGPU_CONFIG=config)
    holder = Workload(c, env, "alloc", 0, 96, 600000)
    workload = os.path.join(c.build, "bin", "workload")
    try:
        c.check.eq("holder ready line", holder.ready_line(), f"pid {holder.pid}: 96 MiB on device 0")
        out = c.run([workload, "grow", "0", "32"], env).stdout
        c.check.true("grow beside the holder", "device 0 full after 5 x 32 MiB" in out, out)
        holder.kill()
        out = c.run([workload, "grow", "0", "32"], env).stdout
        c.check.true("grow alone", "device 0 full after 8 x 32 MiB" in out, out)
    finally:
        holder.kill()


# ---- the development names, runtime selection, NVIDIA's shared runtime, CMake's defaults -----------


def readelf(c, flag, path):
    return c.run(["readelf", flag, "-W", path], os.environ).stdout


def needed(c, path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf(c, "-d", path))


def runtimes_of(c, rep):
    return c.report(rep).get("runtimes")


def fake_runtime(c):
    return [{"kind": "fake", "object": os.path.realpath(os.path.join(c.build, "libfake_gpu.so"))}]


def nvidia_shared(c):
    return [{"kind": "nvidia-shared", "object": os.path.join(c.cuda_root, "lib64", "libcudart.so.13")}]


@case
@toolkit_case
def linked_driver_devname(c):
    """driver_init linked with -L build/lib -lcuda (the fake's development name, a stub with
    SONAME libcuda.so.1): NEEDED libcuda.so.1, not libfake_gpu.so; the same facts."""
    prog = c.program("driver_init_devname")
    libs = needed(c, prog)
    c.check.true("NEEDED libcuda.so.1", "libcuda.so.1" in libs, str(libs))
    c.check.true("no NEEDED libfake_gpu.so", "libfake_gpu.so" not in libs, str(libs))
    c.check.facts("driver_init_devname", c.facts([prog], c.env()), driver_init_expect())


LINKED_NAMES_FACTS = {
    "runtime_get_version": "cudaSuccess", "runtime_version": "13000", "get_device_count": "cudaSuccess",
    "count": "8", "malloc": "cudaSuccess", "roundtrip": "1", "nvml_init": "0", "nvml_count_result": "0",
    "nvml_count": "8", "nvml_name": PROFILES["a100-80gb"]["name"], "nvml_used_while_allocated": "4096",
    "free": "cudaSuccess", "nvml_used_after_free": "0", "nvml_shutdown": "0"}


@case
@toolkit_case
def linked_runtime_devnames(c):
    """A C program linked with -L build/lib -lcudart -lnvidia-ml records NEEDED
    libcudart.so.13 / libnvidia-ml.so.1 and imports cudaMalloc@libcudart.so.13; it runs on
    the fake's runtime, and unchanged on NVIDIA's libcudart.so.13 (toolkit lib64 first)."""
    prog = c.program("linked_names")
    libs = needed(c, prog)
    for lib in ("libcudart.so.13", "libnvidia-ml.so.1"):
        c.check.true(f"NEEDED {lib}", lib in libs, str(libs))
    c.check.true("no NEEDED libfake_gpu.so", "libfake_gpu.so" not in libs, str(libs))
    imports = c.run(["nm", "-D", "--undefined-only", prog], os.environ).stdout
    c.check.true("imports cudaMalloc@libcudart.so.13", "cudaMalloc@libcudart.so.13" in imports, imports)
    c.check.true("NVML imported unversioned, as from NVIDIA's",
                 re.search(r"\bnvmlInit_v2$", imports, re.M) is not None, imports)
    verneed = re.findall(r"File: (\S+)\s+Cnt: \d+\n((?:\s+0x\w+:\s+Name: \S+.*\n)+)", readelf(c, "-V", prog))
    cudart_versions = [re.findall(r"Name: (\S+)", names) for f, names in verneed if f.startswith("libcudart")]
    c.check.eq("version requirements on libcudart", cudart_versions, [["libcudart.so.13"]])
    rep = os.path.join(c.tmp, "fake.json")
    c.check.facts("linked_names (fake runtime)", c.facts([prog], c.env(report=rep)), LINKED_NAMES_FACTS)
    c.check.eq("runtimes (fake)", runtimes_of(c, rep), fake_runtime(c))
    rep = os.path.join(c.tmp, "nvidia.json")
    env = c.env(report=rep)
    env["LD_LIBRARY_PATH"] = os.path.join(c.cuda_root, "lib64") + ":" + c.lib
    c.check.facts("linked_names (NVIDIA's libcudart.so.13)", c.facts([prog], env), LINKED_NAMES_FACTS)
    c.check.eq("runtimes (NVIDIA's)", runtimes_of(c, rep), nvidia_shared(c))


@case
@toolkit_case
def runtime_select(c):
    """fakegpu-run --runtime: auto keeps what the program finds (NVIDIA's libcudart through
    its RPATH), fake preloads the fake's over it, nvidia puts the toolkit's first; a static
    runtime under --runtime fake is named in a warning; a missing NVIDIA runtime is an error."""
    tool = os.path.join(c.build, "bin", "fakegpu-run")

    def run(args, prog, expect_rc=0):
        rep = os.path.join(c.tmp, "report.json")
        env = c.env(report=rep, CUDA_HOME=c.cuda_root)
        del env["LD_LIBRARY_PATH"]
        p = c.run([tool] + args + [prog], env, expect_rc=expect_rc)
        return p, (c.report(rep) if expect_rc == 0 else None)

    rpath_prog, plain = c.program("linked_names_rpath"), c.program("linked_names")
    for args, prog, expect in (([], rpath_prog, nvidia_shared(c)), (["--runtime", "auto"], plain, fake_runtime(c)),
                               (["--runtime", "fake"], rpath_prog, fake_runtime(c)),
                               (["-p"], rpath_prog, fake_runtime(c)),
                               (["--runtime", "nvidia"], plain, nvidia_shared(c)),
                               (["--runtime", "nvidia", "--cudart", os.path.join(c.cuda_root, "lib64")], plain,
                                nvidia_shared(c))):
        what = " ".join(["fakegpu-run"] + args + [os.path.basename(prog)])
        p, r = run(args, prog)
        got = {k: v for k, v in (l.split("=", 1) for l in p.stdout.splitlines())}
        c.check.facts(what, got, LINKED_NAMES_FACTS)
        c.check.eq(f"{what}: runtimes", r["runtimes"], expect)
        c.check.eq(f"{what}: stderr", p.stderr, "")
    static = c.program("devquery_static")
    p, r = run(["--runtime", "fake"], static)
    c.check.eq("static under --runtime fake: runtimes", r["runtimes"], [{"kind": "nvidia-static", "object": static}])
    c.check.true("static under --runtime fake: warning naming the program",
                 f"{static} has NVIDIA's CUDA Runtime statically linked in" in p.stderr, p.stderr)
    p, _ = run(["--runtime", "nvidia", "--cudart", os.path.join(c.tmp, "none")], plain, expect_rc=127)
    c.check.true("--cudart missing path", "--runtime nvidia: --cudart " in p.stderr, p.stderr)
    p, _ = run(["--runtime", "nvidia", "--cudart", c.lib], plain, expect_rc=127)
    c.check.true("--cudart pointing at the fake", "is the fake's own runtime, not NVIDIA's" in p.stderr, p.stderr)


@case
@toolkit_case
def nvidia_cudart_dlopen(c):
    """NVIDIA's libcudart.so.13 dlopen()ed from the toolkit by a program linking no cudart:
    device query, exact memory round trip, cudaMemGetInfo and NVML agree, streams, events,
    a captured memset + copy graph launched; the report books it all to NVIDIA's runtime."""
    rep = os.path.join(c.tmp, "report.json")
    got = c.facts([c.program("nvidia_dlopen")], c.env(report=rep))
    p = PROFILES["a100-80gb"]
    two = 2 * (3 << 20)
    expect = {"runtime_version": "cudaSuccess:13000", "device_count": "cudaSuccess:8", "get_properties": "cudaSuccess",
              "name": p["name"], "totalGlobalMem": str(p["total"]), "cc": "%d.%d" % p["cc"],
              "multiProcessorCount": str(p["sms"]), "malloc_a": "cudaSuccess", "malloc_b": "cudaSuccess",
              "memcpy_htod": "cudaSuccess", "memcpy_dtoh": "cudaSuccess", "roundtrip_exact": "1",
              "mem_get_info": "cudaSuccess", "used_with_two_buffers": str(two), "nvml_used_with_two_buffers": str(two),
              "stream_create": "cudaSuccess", "event_create": "cudaSuccess", "event_record": "cudaSuccess",
              "memset_async": "cudaSuccess", "event_synchronize": "cudaSuccess", "elapsed": "cudaSuccess",
              "elapsed_nonneg": "1", "stream_synchronize": "cudaSuccess", "begin_capture": "cudaSuccess",
              "end_capture": "cudaSuccess", "graph_nodes": "2", "a_untouched_before_launch": "1",
              "instantiate": "cudaSuccess", "graph_launch": "cudaSuccess", "graph_sync": "cudaSuccess",
              "a_bytes_0x5a_after_launch": str(3 << 20), "stream_destroy": "cudaSuccess", "free_a": "cudaSuccess",
              "free_b": "cudaSuccess", "used_after_free": "0", "nvml_used_after_free": "0", "last_error": "cudaSuccess"}
    c.check.facts("nvidia_dlopen", got, expect)
    r = c.report(rep)
    c.check.eq("report runtimes", r["runtimes"], nvidia_shared(c))
    c.check.eq("report device 0 peak", r["devices"][0]["used_memory_peak"], two)
    c.check.eq("no fake runtime calls", sorted(n for n in r["calls"] if n.startswith("cuda")), [])
    check_no_leaks(c, r, "nvidia_dlopen")


@case
@toolkit_case
def cmake_default_project(c):
    """A CMake CUDA project with CMake's defaults (static NVIDIA runtime, sm_80), configured,
    built and run on the fake: CMake's compiler checks need no GPU; launch recorded, memory exact."""
    src, build = os.path.join(HERE, "cmake_project"), os.path.join(c.tmp, "build")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKEGPU_", "CUDA", "LD_"))}
    c.run(["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_CUDA_COMPILER=" + os.path.join(c.cuda_root, "bin", "nvcc")], env, timeout=240)
    c.run(["cmake", "--build", build, "-j2"], env, timeout=240)
    prog = os.path.join(build, "saxpy")
    c.check.true("no libcudart NEEDED (CMake's default: static runtime)",
                 not any(l.startswith("libcudart") for l in needed(c, prog)), str(needed(c, prog)))
    rep = os.path.join(c.tmp, "report.json")
    c.check.facts("saxpy", c.facts([prog], c.env(report=rep)), {
        "malloc": "cudaSuccess", "used": str(8 << 20), "memcpy_htod": "cudaSuccess", "launch": "cudaSuccess",
        "synchronize": "cudaSuccess", "memcpy_dtoh": "cudaSuccess", "x_roundtrip": "1", "used_after_free": "0"})
    r = c.report(rep)
    c.check.eq("report runtimes", r["runtimes"], [{"kind": "nvidia-static", "object": prog}])
    c.check.eq("report kernel_launches", r["kernel_launches"], {"_Z5saxpyifPKfPf": 1})
    check_no_leaks(c, r, "saxpy")


# ---- the fake against a real GPU ---------------------------------------------------------------------
GOLDEN = os.path.join(HERE, "golden")


def read_facts(path):
    """A recorded facts file (gpu_facts's or rt_facts's output), as a dict in order."""
    with open(path) as f:
        return parse_facts(f.read(), path)


def read_divergences(path):
    """The fake's answers where they differ from the real GPU's: groups separated by blank
    lines, each one or more "# reason" lines followed by key=value lines. Returns
    {key: (fake value, reason)}; a group without a reason is an error."""
    out = {}
    with open(path) as f:
        groups = f.read().split("\n\n")
    for g in groups:
        lines = [l for l in g.splitlines() if l.strip()]
        reason = " ".join(l.lstrip("# ").strip() for l in lines if l.startswith("#"))
        for l in lines:
            if l.startswith("#"):
                continue
            if not reason:
                raise Failure(f"{path}: {l!r} has no reason above it")
            k, v = l.split("=", 1)
            if k in out:
                raise Failure(f"{path}: {k} given twice")
            out[k] = (v, reason)
    return out


def compare_with_real(c, profile, golden_name, program="gpu_facts"):
    """Runs `program` (gpu_facts or rt_facts) on one fake device of `profile` and holds every
    answer to what the real GPU gave (golden/NAME.facts), except those listed with a reason
    in golden/NAME.fake."""
    real = read_facts(os.path.join(GOLDEN, golden_name + ".facts"))
    diverge = read_divergences(os.path.join(GOLDEN, golden_name + ".fake"))
    fake = c.facts([c.program(program)], c.env(FAKEGPU_DEVICES=profile))
    c.check.eq("keys only the real GPU answered", sorted(set(real) - set(fake)), [])
    c.check.eq("keys only the fake answered", sorted(set(fake) - set(real)), [])
    for k, v in real.items():
        if k not in fake:
            continue
        if k in diverge:
            want, why = diverge[k]
            c.check.true(f"{k}: listed as different but the fake now answers as the real GPU ({v}); "
                         f"remove it from golden/{golden_name}.fake", fake[k] != v, "")
            c.check.eq(f"{k} (real: {v}; {why})", fake[k], want)
        else:
            c.check.eq(f"{k} (as the real GPU)", fake[k], v)
    c.check.eq(f"golden/{golden_name}.fake keys the real GPU did not answer", sorted(set(diverge) - set(real)), [])


@case
@toolkit_case
def real_gpu_h200(c):
    """Device attributes, context limits, NVML fields, export tables and the codes for bad
    input, as a real H200 (driver 580.159) answered them: the fake's h200 profile gives the
    same, except where golden/h200.fake lists a difference with its reason."""
    compare_with_real(c, "h200", "h200")


@nvcc_case
def real_gpu_h200_runtime(c):
    """The CUDA Runtime's answers to ordinary and bad input (codes, sticky and last errors,
    pitches, limits, occupancy, launch configuration), as NVIDIA's runtime on a real H200
    answered them: the fake's runtime and NVIDIA's over the fake driver give the same, except
    where golden/h200.rt.fake lists a difference with its reason."""
    compare_with_real(c, "h200", "h200.rt", program="rt_facts")


# ---- main ----------------------------------------------------------------------------------------------


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("--build-dir", help="the build tree (lib/, bin/workload)")
    ap.add_argument("--bin-dir", help="where the client programs were built")
    ap.add_argument("--toolkit-missing", default="", help="why the toolkit programs were not built")
    ap.add_argument("--cuda-root", default="", help="the CUDA toolkit the programs were built with")
    args = ap.parse_args(argv[1:])
    if args.list:
        print("\n".join(CASES))
        return 0
    if args.case not in CASES or not args.build_dir or not args.bin_dir:
        ap.error(f"a case ({', '.join(CASES)}), --build-dir and --bin-dir are required")
    fn = CASES[args.case]
    needs = getattr(fn, "needs", None)
    if needs == "toolkit" and args.toolkit_missing:
        print(f"SKIPPED: {args.toolkit_missing}")
        return SKIP
    skip_file = os.path.join(args.bin_dir, getattr(fn, "library_program", "") + ".skip")
    if hasattr(fn, "library_program") and os.path.exists(skip_file):
        with open(skip_file) as f:
            print(f"SKIPPED: {f.read().strip()}")
        return SKIP
    if needs == "numba":
        probe = None
        if os.access(SYSTEM_PYTHON, os.X_OK):
            probe = subprocess.run([SYSTEM_PYTHON, "-c", "import numba, numpy"], capture_output=True, text=True)
        if probe is None or probe.returncode != 0:
            why = "not found" if probe is None else "cannot import numba: " + probe.stderr.strip().splitlines()[-1]
            print(f"SKIPPED: {SYSTEM_PYTHON} with numba is needed ({why}); install python3-numba")
            return SKIP
    print(f"{args.case}: {(fn.__doc__ or '').strip()}")
    with tempfile.TemporaryDirectory(prefix=f"fakegpu-clients-{args.case}-") as tmp:
        c = Ctx(args, tmp)
        try:
            fn(c)
        except Failure as e:
            c.check.errors.append(str(e))
    if c.check.errors:
        print(f"FAILED: {len(c.check.errors)} mismatch(es)")
        for err in c.check.errors:
            print("  " + err)
        return 1
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
