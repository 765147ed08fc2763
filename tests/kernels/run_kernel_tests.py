#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The kernel execution tier: runs one of the programs of tests/kernels with the fake backend.

Usage: run_kernel_tests.py NAME --build-dir DIR --bin-dir DIR [--toolkit-missing REASON]
       run_kernel_tests.py --list

NAME is a program (indexing, shared, ..., nvrtc_driver) or its static-runtime build
(NAME_static). The programs check themselves (one PASS/FAIL line per check, exit 0 when all
pass); here each runs in its own temporary directory with the environment the clients tier
uses (no inherited FAKEGPU_* or CUDA_VISIBLE_DEVICES, private devices, no report,
LD_LIBRARY_PATH = the build's lib/). On top of the exit status:
  printf  the device's lines between the program's marker lines are compared, as a multiset
          per launch, with the lines expected here;
  assert  stderr must carry the assertion message;
  oob     every case runs in its own process;
  shared  runs with FAKEGPU_JIT_DUMP: each kernel's IR and assembly must be written, named after
          the kernel (reverse_static's mangled name among them).
Exit status: 0 pass, 1 fail, 77 skipped (the toolkit is missing). Standard library only.
"""

import argparse
import collections
import os
import subprocess
import sys
import tempfile

SKIP = 77
TIMEOUT = 300
PROGRAMS = ["indexing", "shared", "warp", "atomics", "math", "functions", "printf", "assert", "trap", "oob",
            "ordering", "cooperative", "rdc", "async_copy", "textures", "wmma", "mma", "cluster", "nvrtc_driver"]
OOB_CASES = ["global_read_far", "global_read_null", "global_write_freed", "shared_out_of_bounds",
             "misaligned_global", "misaligned_shared", "read_between_barriers", "local_out_of_bounds",
             "surface_trap"]


class Failure(Exception):
    pass


def environment(build_dir):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FAKEGPU_", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH"))}
    env["LD_LIBRARY_PATH"] = os.path.join(os.path.abspath(build_dir), "lib")
    env["FAKEGPU_ISOLATED"] = "1"
    env["FAKEGPU_REPORT"] = "off"
    return env


def run(argv, env, cwd):
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        raise Failure(f"{' '.join(argv)} did not finish in {TIMEOUT} s\n--- stdout\n{out}")
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        raise Failure(f"{' '.join(argv)} exited with {p.returncode} (0: all checks passed, 1: a check failed, "
                      f"2: a CUDA call failed)")
    return p


def printf_expected():
    """The lines printf.cu's kernels print, per launch."""
    words = ["alpha", "beta", "gamma"]
    launch1 = []
    for b in range(2):
        for t in range(4):
            i = b * 4 + t
            launch1.append(f"block {b} thread {t}: {i * 1000 - 3000} {(i * 3000000000) & 0xffffffff} "
                           f"{(i * 0x1234567) & 0xffffffff:x} {'%08.3f' % (i * 1.25 - 2.0)} {words[i % 3]} "
                           f"{chr(ord('A') + i)} {i << 40} {'%.2e' % (i * 12345.678)} %")
    launch2 = ["no arguments", "twelve: " + " ".join(str(k) for k in range(1, 13))]
    launch2 += [f"lane {t:02d} of 32" for t in range(32)]
    return {"launch 1": launch1, "launch 2": launch2}


def check_printf(stdout):
    sections, current = {}, None
    for line in stdout.splitlines():
        if line.startswith("== ") and line.endswith(" =="):
            current = line[3:-3]
            sections[current] = []
        elif current and not line.startswith(("PASS ", "FAIL ", "printf: ")):  # the program's own lines
            sections[current].append(line)
    errors = []
    for launch, want in printf_expected().items():
        got = collections.Counter(sections.get(launch, []))
        want = collections.Counter(want)
        for line in want - got:
            errors.append(f"{launch}: missing line {line!r}")
        for line in got - want:
            errors.append(f"{launch}: unexpected line {line!r}")
    if sections.get("end"):
        errors.append(f"after the last synchronization: {sections['end']!r}")
    if errors:
        raise Failure("device printf output differs:\n  " + "\n  ".join(errors))


def check_dump(dump):
    """FAKEGPU_JIT_DUMP's files: NAME.N.ll with the block function, NAME.N.s with its code."""
    names = sorted(os.listdir(dump)) if os.path.isdir(dump) else []
    ll = [n for n in names if n.endswith(".ll")]
    asm = [n[:-2] + ".ll" for n in names if n.endswith(".s")]
    if not ll or ll != asm:
        raise Failure(f"FAKEGPU_JIT_DUMP={dump} holds {names!r}: want NAME.N.ll and NAME.N.s for each kernel")
    if not any(n.startswith("_Z14reverse_staticPKiPi.") for n in ll):
        raise Failure(f"FAKEGPU_JIT_DUMP: no file for reverse_static (_Z14reverse_staticPKiPi) among {ll!r}")
    for n in ll:
        with open(os.path.join(dump, n)) as f:
            if "define void @fg_block_" not in f.read():
                raise Failure(f"FAKEGPU_JIT_DUMP: {n} has no block function")
        with open(os.path.join(dump, n[:-3] + ".s")) as f:
            if "fg_block_" not in f.read():
                raise Failure(f"FAKEGPU_JIT_DUMP: {n[:-3]}.s has no block function's code")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", nargs="?")
    ap.add_argument("--build-dir")
    ap.add_argument("--bin-dir")
    ap.add_argument("--toolkit-missing", default="")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        for p in PROGRAMS:
            print(p)
            if p != "nvrtc_driver":
                print(p + "_static")
        return 0
    base = args.name[:-len("_static")] if args.name and args.name.endswith("_static") else args.name
    if base not in PROGRAMS or not args.build_dir or not args.bin_dir:
        ap.error(f"a program name ({', '.join(PROGRAMS)}, or NAME_static), --build-dir and --bin-dir are needed")
    if args.toolkit_missing:
        print(f"SKIPPED: {args.toolkit_missing}")
        return SKIP
    program = os.path.join(os.path.abspath(args.bin_dir), args.name)
    if not os.access(program, os.X_OK):
        print(f"FAIL: {program} was not built (the toolkit was found at configure time: build the "
              f"fakegpu_kernel_programs and fakegpu_kernel_nvrtc_driver targets)")
        return 1
    env = environment(args.build_dir)
    try:
        with tempfile.TemporaryDirectory(prefix="fakegpu-kernels-") as tmp:
            if base == "oob":
                failed = []
                for case in OOB_CASES:
                    print(f"--- oob {case}")
                    try:
                        run([program, case], env, tmp)
                    except Failure as e:
                        print(f"FAIL {case}: {e}")
                        failed.append(case)
                if failed:
                    raise Failure(f"oob cases failed: {' '.join(failed)}")
            else:
                dump = os.path.join(tmp, "jit-dump")
                if base == "shared":
                    env["FAKEGPU_JIT_DUMP"] = dump
                if base in ("mma", "cluster"):  # stmatrix and clusters are compute capability 9.0's
                    env["FAKEGPU_DEVICES"] = "h100-80gb:1"
                p = run([program], env, tmp)
                if base == "shared":
                    check_dump(dump)
                if base == "printf":
                    check_printf(p.stdout)
                if base == "assert" and "Assertion `value != 7` failed" not in p.stderr:
                    raise Failure("stderr does not carry the device assertion's message "
                                  "(\"Assertion `value != 7` failed\")")
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    print(f"kernels:{args.name}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
