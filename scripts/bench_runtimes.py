#!/usr/bin/env python3
"""The two runtimes side by side (scripts/bench.sh runs this): the same program built with
-cudart shared (the fake's runtime) and with nvcc's default static runtime (NVIDIA's, over
the fake driver), tests/bench/bench_runtimes.cu, taking turns in one run.

  1. cudaMalloc+cudaFree of 1 MiB: NVIDIA's runtime / the fake's, and NVIDIA's / malloc+free
     (malloc measured in the same process, alternating with the CUDA pairs)
  2. start-up: a fresh process to its first cudaGetDeviceCount returning; a cuBLAS program to
     cublasCreate returning (whole-process wall time, exec and loading included)
  3. fakegpu-trace's cost per traced allocation, each runtime (root only): the same pairs
     traced (USDT) minus untraced, per call

Usage: bench_runtimes.py BUILD_DIR
"""
import os
import statistics
import subprocess
import sys
import time

BUILD = sys.argv[1]
CLIENTS = os.path.join(BUILD, "tests", "clients")
PROGRAMS = {"fake": os.path.join(CLIENTS, "bench_runtimes"), "nvidia": os.path.join(CLIENTS, "bench_runtimes_static")}
CUBLAS = os.path.join(CLIENTS, "cublas")
TRACER = os.path.join(BUILD, "bin", "fakegpu-trace")
ENV = dict(os.environ, LD_LIBRARY_PATH=os.path.join(BUILD, "lib"), FAKEGPU_REPORT="off")
ITERS, ROUNDS, TURNS = "100000", "5", 9


def pairs(runtime, traced=False):
    """(CUDA ns, malloc ns) per pair, medians of one process's rounds."""
    cmd = [PROGRAMS[runtime], "alloc", ITERS, ROUNDS]
    if traced:
        cmd = [TRACER, "run", "--summary", os.devnull, "--", *cmd]
    out = subprocess.run(cmd, env=ENV, check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("cuda_ns="))
    f = dict(kv.split("=") for kv in line.split())
    return float(f["cuda_ns"]), float(f["libc_ns"])


def wall_ms(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, env=ENV, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def main():
    missing = [p for p in [*PROGRAMS.values(), CUBLAS] if not os.access(p, os.X_OK)]
    if missing:
        print(f"SKIPPED: {', '.join(missing)} not built (they need the CUDA toolkit: tests/clients/CMakeLists.txt)")
        return 0
    ENV.setdefault("FAKEGPU_ISOLATED", "1")
    cuda = {"fake": [], "nvidia": []}
    vs_malloc = {"fake": [], "nvidia": []}
    for _ in range(TURNS):  # take turns so drift hits both alike
        for rt in cuda:
            c, m = pairs(rt)
            cuda[rt].append(c)
            vs_malloc[rt].append(c / m)
    med = {rt: statistics.median(v) for rt, v in cuda.items()}
    print(f"cudaMalloc+cudaFree 1 MiB, fake runtime:   {med['fake']:7.1f} ns  "
          f"({statistics.median(vs_malloc['fake']):.2f}x malloc+free)")
    print(f"cudaMalloc+cudaFree 1 MiB, NVIDIA static:  {med['nvidia']:7.1f} ns  "
          f"({statistics.median(vs_malloc['nvidia']):.2f}x malloc+free; target <= 3x)")
    print(f"NVIDIA's runtime / the fake's:             {med['nvidia'] / med['fake']:7.2f}x  (target <= 1.5x)")

    starts = {rt: [wall_ms([p, "startup"]) for _ in range(31)] for rt, p in PROGRAMS.items()}
    for rt, label in (("nvidia", "NVIDIA static runtime"), ("fake", "fake runtime")):
        s = starts[rt]
        print(f"start-up to cudaGetDeviceCount, {label}: median {statistics.median(s):.2f} ms "
              f"(min {min(s):.2f}, max {max(s):.2f}; whole process, 31 runs{'; target <= 10 ms' if rt == 'nvidia' else ''})")
    blas = [wall_ms([CUBLAS, "startup"]) for _ in range(7)]
    print(f"start-up to cublasCreate: median {statistics.median(blas):.0f} ms (min {min(blas):.0f}, "
          f"max {max(blas):.0f}; 7 runs; target <= 1000 ms)")

    if os.geteuid() != 0:
        print("fakegpu-trace cost per allocation: SKIPPED (it loads BPF programs: run as root)")
        return 0
    cost = {"fake": [], "nvidia": []}
    for _ in range(5):
        for rt in cost:
            untraced, _ = pairs(rt)
            traced, _ = pairs(rt, traced=True)
            cost[rt].append((traced - untraced) / 2)  # an alloc and a free per pair
    c = {rt: statistics.median(v) for rt, v in cost.items()}
    print(f"fakegpu-trace cost per traced call (USDT): fake runtime {c['fake']:.0f} ns, "
          f"NVIDIA's runtime {c['nvidia']:.0f} ns (5 turns; the same within noise is the target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
