# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the integration tests: a sandbox per test, process runners, the runner.

Every test gets its own temporary directory, which is the working directory of the processes
it starts and holds their ledger (FAKEGPU_LEDGER) and reports, so tests never see each
other's fake GPUs, whatever runs beside them. The environment handed to a process is the
test's own: every FAKEGPU_* variable, CUDA_VISIBLE_DEVICES and LD_PRELOAD of the caller is
dropped first.

Readiness is always a line the process prints (the probe's {"step": "wait"}, the workload's
"pid N: ..."), never a sleep; the timeouts below only stop a hung test.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "cuda_probe.py")
# The ctypes clients run under the system interpreter, as a user's script would.
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
TIMEOUT = 60  # seconds; a hang guard, not a readiness check

BUILD = os.environ.get("FAKEGPU_BUILD_DIR", "")

GiB = 1 << 30
MiB = 1 << 20
A100_NAME = "Fake NVIDIA A100-SXM4-80GB"
A100_TOTAL = 85899345920          # 80 GiB
H100_NAME = "Fake NVIDIA H100 80GB HBM3"
H100_TOTAL = 81559 * MiB          # 85520809984
T4_NAME = "Fake NVIDIA Tesla T4"
T4_TOTAL = 15360 * MiB
CUDA_ERROR_MEMORY_ALLOCATION = 2
CUDA_ERROR_NO_DEVICE = 100
NOT_SUPPORTED = 801               # cudaErrorNotSupported == CUDA_ERROR_NOT_SUPPORTED
CUDA_ERROR_NOT_FOUND = 500
NVML_ERROR_NOT_SUPPORTED = 3


def build_path(*parts):
    return os.path.join(BUILD, *parts)


def libdir():
    return build_path("lib")


def workload():
    return build_path("bin", "workload")


def fakegpu_run():
    return build_path("bin", "fakegpu-run")


def parse_lines(text):
    """JSON objects printed one per line by the probe."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


class Proc:
    """A finished process: exit status, output, and the probe's step results."""

    def __init__(self, args, returncode, stdout, stderr):
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr
        self.steps = parse_lines(stdout)

    def describe(self):
        return f"{self.args!r}: status {self.returncode}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


class Holder:
    """A probe that runs until its "wait" step and holds there until released."""

    def __init__(self, popen, args):
        self.popen, self.args = popen, args
        self.before = []

    def wait_ready(self):
        """Reads step results until the probe reports it is waiting; returns them."""
        while True:
            line = self.popen.stdout.readline()
            if not line:
                rc = self.popen.wait(TIMEOUT)
                raise AssertionError(f"{self.args!r} ended (status {rc}) before its wait step:\n"
                                     f"{self.popen.stderr.read()}")
            obj = json.loads(line)
            if obj.get("step") == "wait":
                return self.before
            self.before.append(obj)

    def release(self):
        """Lets the probe go on past its wait step and collects it."""
        out, err = self.popen.communicate("\n", timeout=TIMEOUT)
        return Proc(self.args, self.popen.returncode, out, err)

    def kill(self):
        self.popen.send_signal(signal.SIGKILL)
        out, err = self.popen.communicate(timeout=TIMEOUT)
        return Proc(self.args, self.popen.returncode, out, err)


class Sandbox:
    """The temporary directory, ledger and environment of one test."""

    def __init__(self, test):
        self.dir = tempfile.mkdtemp(prefix="fakegpu-it-")
        self.ledger = os.path.join(self.dir, "ledger")
        self._live = []
        test.addCleanup(self._cleanup)

    def _cleanup(self):
        for p in self._live:
            if p.poll() is None:
                p.kill()
                p.communicate()
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def env(self, **overrides):
        """The caller's environment without fakegpu's variables, with this test's ledger and no
        report; keyword arguments set variables (None removes one)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("FAKEGPU_") and k not in ("CUDA_VISIBLE_DEVICES", "LD_PRELOAD")}
        env["FAKEGPU_LEDGER"] = self.ledger
        env["FAKEGPU_REPORT"] = "off"
        for k, v in overrides.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
        return env

    def run(self, args, env=None, cwd=None, stdin=None, timeout=TIMEOUT, **overrides):
        env = env if env is not None else self.env(**overrides)
        cp = subprocess.run(args, env=env, cwd=cwd or self.dir, input=stdin, capture_output=True, text=True,
                            timeout=timeout)
        return Proc(args, cp.returncode, cp.stdout, cp.stderr)

    def probe(self, *steps, lib=None, timeout=TIMEOUT, **overrides):
        return self.run([PYTHON, PROBE, lib or libdir(), *steps], timeout=timeout, **overrides)

    def workload(self, *args, **overrides):
        return self.run([workload(), *map(str, args)], **overrides)

    def hold(self, *steps, **overrides):
        """Starts a probe whose steps include "wait"; returns once it waits there."""
        args = [PYTHON, PROBE, libdir(), *steps]
        popen = subprocess.Popen(args, env=self.env(**overrides), cwd=self.dir, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._live.append(popen)
        h = Holder(popen, args)
        h.wait_ready()
        return h

    def listing(self):
        return sorted(os.listdir(self.dir))


class TestCase(unittest.TestCase):
    def setUp(self):
        self.box = Sandbox(self)

    def step(self, proc, index, name):
        """The index-th step result of a probe, which must be the step `name`."""
        self.assertGreater(len(proc.steps), index, proc.describe())
        s = proc.steps[index]
        self.assertEqual(s["step"], name, proc.describe())
        return s

    def ok(self, proc):
        self.assertEqual(proc.returncode, 0, proc.describe())
        return proc

    def read_report(self, path):
        with open(path) as f:
            return json.load(f)


def main():
    """Runs the calling module's tests; prints "N passed, M failed" last; status 1 on failure.

    Usage: test_X.py [--build BUILD_DIR] [unittest arguments]"""
    global BUILD
    argv = sys.argv[:]
    if "--build" in argv:
        i = argv.index("--build")
        BUILD = argv[i + 1]
        del argv[i:i + 2]
    if not BUILD or not os.path.exists(workload()):
        sys.stderr.write("give the build directory with --build (or FAKEGPU_BUILD_DIR); "
                         f"{workload()!r} does not exist\n")
        return 2
    prog = unittest.main(module="__main__", argv=argv, exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    skipped = len(r.skipped)
    # A class whose setUpClass failed adds an error but runs none of its tests.
    passed = max(r.testsRun - failed - skipped, 0)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line, flush=True)
    return 1 if failed else 0
