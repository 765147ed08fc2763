#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fakegpu-run (fakebackend/tools/fakegpu_run.cpp): runs a command on the fake GPUs."""

import os
import re
import signal

import fgtest
from fgtest import T4_NAME, T4_TOTAL

OPTIONS = ("-d,--devices", "-c,--config", "-r,--report", "-l,--log", "--ledger", "-i,--isolated", "-s,--strict",
           "-p,--preload", "--runtime", "--cudart", "-h,--help")


class Running(fgtest.TestCase):
    def run_tool(self, *args, **env):
        return self.box.run([fgtest.fakegpu_run(), *args], **env)

    def test_workload_on_a_t4(self):
        report = self.box.path("r.json")
        p = self.ok(self.run_tool("-d", "t4", "-r", report, fgtest.workload(), "alloc", "0", "1"))
        self.assertRegex(p.stdout, r"^pid \d+: 1 MiB on device 0\n$")
        self.assertEqual(p.stderr, "")
        r = self.read_report(report)
        self.assertEqual([(d["name"], d["total_memory"], d["used_memory_peak"]) for d in r["devices"]],
                         [(T4_NAME, T4_TOTAL, 1 << 20)])

    def test_libraries_resolve_by_soname(self):
        # The probe loads libcudart.so.13, libcuda.so.1, libnvidia-ml.so.1 by name only.
        p = self.ok(self.run_tool("-d", "t4,l4", fgtest.PYTHON, fgtest.PROBE, "-", "props", "drvstub", "nvml"))
        self.assertEqual([d["name"] for d in self.step(p, 0, "props")["devices"]], [T4_NAME, "Fake NVIDIA L4"])
        self.assertEqual(self.step(p, 1, "drvstub")["err"], fgtest.NOT_SUPPORTED)
        self.assertEqual(self.step(p, 2, "nvml")["count"], 2)

    def test_options_set_the_variables(self):
        p = self.ok(self.run_tool("-d", "t4", "-c", fgtest.PROBE, "-r", "R.json", "-l", "debug", "--ledger", "L",
                                  "-i", "-s", "-p", "env", LD_LIBRARY_PATH="/opt/x"))
        env = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
        self.assertEqual(env["FAKEGPU_DEVICES"], "t4")
        self.assertEqual(env["FAKEGPU_CONFIG"], fgtest.PROBE)
        self.assertEqual(env["FAKEGPU_REPORT"], "R.json")
        self.assertEqual(env["FAKEGPU_LOG"], "debug")
        self.assertEqual(env["FAKEGPU_LEDGER"], "L")
        self.assertEqual(env["FAKEGPU_ISOLATED"], "1")
        self.assertEqual(env["FAKEGPU_STRICT"], "1")
        first, rest = env["LD_LIBRARY_PATH"].split(":", 1)
        self.assertEqual(os.path.realpath(first), os.path.realpath(fgtest.libdir()))
        self.assertEqual(rest, "/opt/x")
        self.assertEqual(os.path.realpath(env["LD_PRELOAD"]), os.path.realpath(fgtest.build_path("libfake_gpu.so")))

    def test_without_options_nothing_is_set(self):
        p = self.ok(self.run_tool("env", FAKEGPU_REPORT=None, FAKEGPU_LEDGER=None))
        names = {line.split("=", 1)[0] for line in p.stdout.splitlines() if "=" in line}
        self.assertEqual({n for n in names if n.startswith("FAKEGPU_")}, set())
        self.assertNotIn("LD_PRELOAD", names)

    def test_arguments_after_the_command_are_the_commands(self):
        code = "import sys; print(sys.argv[1:])"
        p = self.run_tool(fgtest.PYTHON, "-c", code, "-d", "x", "-l", "y", "--bogus")
        self.assertEqual((p.returncode, p.stdout), (0, "['-d', 'x', '-l', 'y', '--bogus']\n"), p.describe())

    def test_double_dash_ends_the_options(self):
        p = self.ok(self.run_tool("-d", "t4", "--", "sh", "-c", 'echo "$FAKEGPU_DEVICES $1"', "sh", "-d"))
        self.assertEqual(p.stdout, "t4 -d\n")


class ExitStatus(fgtest.TestCase):
    def run_tool(self, *args, **env):
        return self.box.run([fgtest.fakegpu_run(), *args], **env)

    def script(self, body):
        # A script file rather than "sh -c": options after the command are checked elsewhere.
        path = self.box.path("script.sh")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    def test_status_is_the_commands(self):
        script = self.script('exit "$1"')
        for status in (0, 1, 7, 255):
            p = self.run_tool(script, str(status))
            self.assertEqual(p.returncode, status, p.describe())

    def test_signal_is_the_commands(self):
        # The command replaces fakegpu-run (exec): a signal that kills it is seen by the caller.
        p = self.run_tool(self.script("kill -TERM $$"))
        self.assertEqual(p.returncode, -signal.SIGTERM, p.describe())

    def test_invalid_device_list_fails_in_the_command(self):
        p = self.run_tool("-d", "b200", fgtest.workload(), "alloc", "0", "1")
        self.assertEqual(p.returncode, 1, p.describe())
        self.assertIn('unknown profile "b200"', p.stderr)
        self.assertEqual(p.stdout, "")

    def test_missing_command(self):
        p = self.run_tool("no-such-command-fakegpu")
        self.assertEqual(p.returncode, 127, p.describe())
        self.assertEqual(p.stderr, "fakegpu-run: cannot run no-such-command-fakegpu: No such file or directory\n")

    def test_command_that_is_not_executable(self):
        path = self.box.path("script")
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o644)
        p = self.run_tool(path)
        self.assertEqual(p.returncode, 127, p.describe())
        self.assertIn(f"fakegpu-run: cannot run {path}", p.stderr)

    def assert_bad_options(self, *args, must_name):
        p = self.run_tool(*args)
        self.assertEqual(p.returncode, 2, p.describe())
        self.assertEqual(p.stdout, "", p.describe())
        self.assertIn(must_name, p.stderr)
        self.assertIn("--help", p.stderr)

    def test_no_command(self):
        self.assert_bad_options(must_name="command")
        self.assert_bad_options("-d", "t4", must_name="command")

    def test_bad_log_level(self):
        self.assert_bad_options("-l", "loud", "true", must_name="loud")

    def test_missing_config_file(self):
        self.assert_bad_options("-c", self.box.path("none.json"), "true", must_name=self.box.path("none.json"))

    def test_unknown_option(self):
        self.assert_bad_options("--bogus", "true", must_name="--bogus")
        self.assert_bad_options("-x", "echo", "hi", must_name="-x")

    def test_help(self):
        p = self.run_tool("--help")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        for opt in OPTIONS:
            self.assertIn(opt, p.stdout)
        for var in ("FAKEGPU_DEVICES", "FAKEGPU_CONFIG", "FAKEGPU_REPORT", "FAKEGPU_LOG", "FAKEGPU_LEDGER",
                    "FAKEGPU_ISOLATED", "FAKEGPU_STRICT", "FAKEGPU_RUNTIME"):
            self.assertIn(var, p.stdout)
        self.assertIn("Exit status", p.stdout)
        self.assertRegex(p.stdout, re.compile(r"127"))


class Installed(fgtest.TestCase):
    """cmake --install gives the build tree's layout under a prefix, and works from there."""

    def test_install_layout_runs_a_program(self):
        prefix = self.box.path("prefix")
        p = self.box.run(["cmake", "--install", fgtest.BUILD, "--prefix", prefix])
        self.assertEqual(p.returncode, 0, p.stderr)
        libdirs = [os.path.join(root) for root, _, files in os.walk(prefix) if "libfake_gpu.so" in files]
        self.assertEqual(len(libdirs), 1, libdirs)
        names = sorted(os.listdir(os.path.join(libdirs[0], "lib")))
        self.assertEqual(names, ["libcuda.so", "libcuda.so.1", "libcudart.so", "libcudart.so.12", "libcudart.so.13",
                                 "libnvidia-ml.so", "libnvidia-ml.so.1"])
        backend = os.path.realpath(os.path.join(libdirs[0], "libfake_gpu.so"))
        for n in ("libcuda.so.1", "libcudart.so.12", "libcudart.so.13", "libnvidia-ml.so.1"):
            # the run-time names: links to the one library, one backend state per process
            self.assertEqual(os.path.realpath(os.path.join(libdirs[0], "lib", n)), backend)
        for n, soname in (("libcuda.so", "libcuda.so.1"), ("libcudart.so", "libcudart.so.13"),
                          ("libnvidia-ml.so", "libnvidia-ml.so.1")):
            # the development names: link stubs with the real SONAME, filters of the backend
            d = self.box.run(["readelf", "-d", os.path.join(libdirs[0], "lib", n)]).stdout
            self.assertIn(f"Library soname: [{soname}]", d)
            self.assertIn("Filter library: [libfake_gpu.so]", d)
            self.assertIn("Library runpath: [$ORIGIN/..]", d)
        # The installed fakegpu-run finds the installed libraries: the probe loads them by name.
        p = self.ok(self.box.run([os.path.join(prefix, "bin", "fakegpu-run"), "-d", "t4", fgtest.PYTHON, fgtest.PROBE,
                                  "-", "props"]))
        self.assertEqual([d["name"] for d in self.step(p, 0, "props")["devices"]], [T4_NAME])


if __name__ == "__main__":
    raise SystemExit(fgtest.main())
