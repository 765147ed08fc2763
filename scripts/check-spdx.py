#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of the repository names its license in an SPDX line near its top.

The project is Apache-2.0 (LICENSE); the BPF programs and their shared headers are
(LGPL-2.1 OR BSD-2-Clause), as libbpf's own, so the kernel accepts them as GPL-compatible.
Checks the files git tracks (all files under the root outside build trees when git is not
there). Exit status 0 when every one has a line, 1 with the list of those without.
Usage: check-spdx.py [ROOT]
"""
import os
import subprocess
import sys

SOURCES = (".cpp", ".h", ".c", ".cu", ".py", ".sh", ".cmake", ".def", ".in", ".map", ".js", ".css",
           ".html", ".yml", ".service")
NAMES = ("CMakeLists.txt", "run")


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x != ".git" and not x.startswith("build")]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files]
        return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    missing, checked = [], 0
    for f in sorted(tracked(root)):
        if not (f.endswith(SOURCES) or os.path.basename(f) in NAMES):
            continue
        checked += 1
        with open(os.path.join(root, f), errors="replace") as fh:
            head = [fh.readline() for _ in range(3)]
        if not any("SPDX-License-Identifier:" in line for line in head):
            missing.append(f)
    for f in missing:
        print(f"{f}: no SPDX-License-Identifier line in its first 3 lines")
    print(f"{checked} source files, {len(missing)} without an SPDX line")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
