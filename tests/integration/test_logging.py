#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""FAKEGPU_LOG (common/log.cpp): levels, prefixes, silence by default, bad values."""

import fgtest

PREFIXES = ("[FakeGPU] ", "[FakeCUDA] ", "[FakeCUDA-Driver] ", "[FakeNVML] ")
# One step per API family, each reaching a NOT_SUPPORTED stub once (logged at info).
MIXED = ("count", "malloc:0:4096", "freeall", "rtstub", "rtstub", "drvstub", "nvmlstub", "nvml")
STUB_LINES = [
    "[FakeCUDA] cudaDestroyExternalMemory is not supported by the fake backend (returning NOT_SUPPORTED)",
    "[FakeCUDA-Driver] cuDestroyExternalMemory is not supported by the fake backend (returning NOT_SUPPORTED)",
    "[FakeNVML] nvmlDeviceGetRetiredPagesPendingStatus is not supported by the fake backend (returning NOT_SUPPORTED)",
]


class Levels(fgtest.TestCase):
    def test_default_level_is_silent_for_a_clean_run(self):
        p = self.ok(self.box.workload("alloc", 0, 8, FAKEGPU_REPORT=None))
        self.assertEqual(p.stderr, "")
        p = self.ok(self.box.probe("count", "props", "malloc:1:1048576", "meminfo:1", "freeall", "nvml",
                                   "launch:k:2", FAKEGPU_REPORT=self.box.path("r.json")))
        self.assertEqual(p.stderr, "")

    def test_default_level_does_not_print_info_lines(self):
        # Stubs and the report are info; a leak is not a warning either.
        p = self.ok(self.box.probe(*MIXED, FAKEGPU_REPORT=self.box.path("r.json")))
        self.assertEqual(p.stderr, "")
        p = self.ok(self.box.workload("leak", 0, 1, FAKEGPU_LOG="warn", FAKEGPU_REPORT=self.box.path("r2.json")))
        self.assertEqual(p.stderr, "")

    def test_info_prints_prefixed_lines_of_every_family(self):
        report = self.box.path("r.json")
        p = self.ok(self.box.probe(*MIXED, FAKEGPU_LOG="info", FAKEGPU_REPORT=report))
        lines = p.stderr.splitlines()
        self.assertTrue(p.stderr.endswith("\n"), p.describe())
        for line in lines:
            self.assertTrue(line.startswith(PREFIXES), f"unprefixed line {line!r}")
        self.assertEqual(lines[0], f"[FakeGPU] 8 fake device(s); ledger {self.box.ledger}")
        self.assertEqual(lines[-1], f"[FakeGPU] report written to {report}")
        for expected in STUB_LINES:
            self.assertEqual(lines.count(expected), 1, f"{expected!r} once (the first call only) in\n{p.stderr}")
        for prefix in PREFIXES:
            self.assertTrue(any(line.startswith(prefix) for line in lines), f"no {prefix} line in\n{p.stderr}")

    def test_debug_and_trace_include_the_info_lines(self):
        for level in ("debug", "trace"):
            p = self.ok(self.box.probe(*MIXED, FAKEGPU_LOG=level))
            lines = p.stderr.splitlines()
            for line in lines:
                self.assertTrue(line.startswith(PREFIXES), f"{level}: unprefixed line {line!r}")
            for expected in STUB_LINES:
                self.assertIn(expected, lines, level)

    def test_warn_prints_warnings_error_does_not(self):
        bad = self.box.path("no-such-dir", "r.json")
        p = self.ok(self.box.workload("alloc", 0, 1, FAKEGPU_LOG="warn", FAKEGPU_REPORT=bad))
        self.assertEqual(len(p.stderr.splitlines()), 1, p.describe())
        self.assertTrue(p.stderr.startswith("[FakeGPU] warning: cannot write the report " + bad), p.describe())
        for level in ("error", "off"):
            p = self.ok(self.box.workload("alloc", 0, 1, FAKEGPU_LOG=level, FAKEGPU_REPORT=bad))
            self.assertEqual(p.stderr, "", level)

    def test_fatal_configuration_errors_are_printed_even_with_log_off(self):
        p = self.box.probe("count", FAKEGPU_LOG="off", FAKEGPU_DEVICES="nosuchgpu")
        self.assertEqual(p.returncode, 1, p.describe())
        self.assertIn("nosuchgpu", p.stderr)


class BadValue(fgtest.TestCase):
    def check_bad(self, value):
        p = self.ok(self.box.workload("alloc", 0, 1, FAKEGPU_LOG=value))
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.describe())
        self.assertTrue(lines[0].startswith("[FakeGPU] "), p.describe())
        self.assertIn(f'FAKEGPU_LOG="{value}"', lines[0])
        for level in ("off", "error", "warn", "info", "debug", "trace"):
            self.assertIn(level, lines[0])
        return p

    def test_unknown_word(self):
        self.check_bad("verbose")

    def test_number(self):
        self.check_bad("3")

    def test_bad_value_is_reported_once_and_behaves_as_warn(self):
        # Info lines (stubs) stay silent, warnings still appear, the message is not repeated.
        bad = self.box.path("no-such-dir", "r.json")
        p = self.ok(self.box.probe(*MIXED, FAKEGPU_LOG="loud", FAKEGPU_REPORT=bad))
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 2, p.describe())
        self.assertIn('FAKEGPU_LOG="loud"', lines[0])
        self.assertTrue(lines[1].startswith("[FakeGPU] warning: cannot write the report " + bad), p.describe())


if __name__ == "__main__":
    raise SystemExit(fgtest.main())
