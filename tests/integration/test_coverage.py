#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Coverage gaps in the report and FAKEGPU_STRICT (common/coverage.cpp, driver/entry.cpp)."""

import signal

import fgtest
from fgtest import A100_TOTAL, CUDA_ERROR_NOT_FOUND, GiB, NOT_SUPPORTED, NVML_ERROR_NOT_SUPPORTED

SYMBOL_NOT_FOUND, VERSION_NOT_SUFFICIENT = 1, 2  # CUdriverProcAddressQueryResult


class UnsupportedCalls(fgtest.TestCase):
    def report_of(self, *steps, **env):
        path = self.box.path("r.json")
        p = self.ok(self.box.probe(*steps, FAKEGPU_REPORT=path, **env))
        return p, self.read_report(path)

    def test_runtime_stub_returns_801_and_is_counted(self):
        p, r = self.report_of("count", "rtstub", "rtstub")
        self.assertEqual([s["err"] for s in p.steps], [0, NOT_SUPPORTED, NOT_SUPPORTED])
        self.assertEqual(r["coverage"], {"unsupported_calls": {"cudaDestroyExternalMemory": 2}, "unresolved_entry_points": {}})
        self.assertEqual(r["calls"]["cudaDestroyExternalMemory"], 2)

    def test_driver_stub_returns_801_and_is_counted(self):
        p, r = self.report_of("drvstub")
        self.assertEqual(self.step(p, 0, "drvstub")["err"], NOT_SUPPORTED)
        self.assertEqual(r["coverage"]["unsupported_calls"], {"cuDestroyExternalMemory": 1})

    def test_nvml_stub_returns_not_supported_and_is_counted(self):
        p, r = self.report_of("nvmlstub", "nvmlstub")
        self.assertEqual([s["err"] for s in p.steps], [NVML_ERROR_NOT_SUPPORTED] * 2)
        self.assertEqual(r["coverage"]["unsupported_calls"], {"nvmlDeviceGetRetiredPagesPendingStatus": 2})

    def test_all_families_in_one_report(self):
        _, r = self.report_of("rtstub", "drvstub", "nvmlstub", "rtstub")
        self.assertEqual(r["coverage"]["unsupported_calls"],
                         {"cudaDestroyExternalMemory": 2, "cuDestroyExternalMemory": 1, "nvmlDeviceGetRetiredPagesPendingStatus": 1})

    def test_a_process_whose_only_call_is_a_stub_still_reports_it(self):
        # The report is the place to learn which calls the fake lacks; a program that gives
        # up after its first unsupported call is exactly the one whose report matters.
        _, r = self.report_of("rtstub")
        self.assertEqual(r["coverage"]["unsupported_calls"], {"cudaDestroyExternalMemory": 1})


class UnresolvedEntryPoints(fgtest.TestCase):
    def test_unknown_name_is_listed_with_its_version_and_count(self):
        path = self.box.path("r.json")
        p = self.ok(self.box.probe("count", "proc:cuNoSuchFunction:12000", "proc:cuNoSuchFunction:12000",
                                   "proc:cuMemAlloc:12000", FAKEGPU_REPORT=path))
        self.assertEqual(p.steps[1:], [
            {"step": "proc", "err": CUDA_ERROR_NOT_FOUND, "status": SYMBOL_NOT_FOUND, "found": False},
            {"step": "proc", "err": CUDA_ERROR_NOT_FOUND, "status": SYMBOL_NOT_FOUND, "found": False},
            {"step": "proc", "err": 0, "status": 0, "found": True},
        ])
        r = self.read_report(path)
        self.assertEqual(r["coverage"], {"unsupported_calls": {},
                                         "unresolved_entry_points": {"cuNoSuchFunction@12000": 2}})
        self.assertEqual(r["calls"]["cuGetProcAddress_v2"], 3)

    def test_a_process_that_only_resolves_entry_points_still_reports(self):
        path = self.box.path("r.json")
        self.ok(self.box.probe("proc:cuNoSuchFunction:12000", FAKEGPU_REPORT=path))
        self.assertEqual(self.read_report(path)["coverage"]["unresolved_entry_points"],
                         {"cuNoSuchFunction@12000": 1})

    def test_version_not_sufficient_is_the_drivers_answer_not_a_gap(self):
        # cuMemAllocAsync exists from CUDA 11.2: asking for it at 11.0 gets NOT_FOUND with
        # VERSION_NOT_SUFFICIENT from the real driver too. The fake answers right; it is not
        # an entry point the fake lacks, so it is no coverage gap.
        path = self.box.path("r.json")
        p = self.ok(self.box.probe("count", "proc:cuMemAllocAsync:11000", FAKEGPU_REPORT=path))
        self.assertEqual(self.step(p, 1, "proc"),
                         {"step": "proc", "err": CUDA_ERROR_NOT_FOUND, "status": VERSION_NOT_SUFFICIENT, "found": False})
        self.assertEqual(self.read_report(path)["coverage"]["unresolved_entry_points"], {})


class Strict(fgtest.TestCase):
    def assert_aborted_naming(self, p, name, steps_done):
        self.assertEqual(p.returncode, -signal.SIGABRT, p.describe())
        self.assertEqual([s["step"] for s in p.steps], steps_done, p.describe())
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.describe())
        self.assertIn(name, lines[0])
        self.assertIn("FAKEGPU_STRICT", lines[0])

    def test_runtime_stub_aborts(self):
        p = self.box.probe("count", "rtstub", "count", FAKEGPU_STRICT=1)
        self.assert_aborted_naming(p, "cudaDestroyExternalMemory", ["count"])
        self.assertEqual(self.step(p, 0, "count")["count"], 8)

    def test_abort_message_is_printed_even_with_log_off(self):
        self.assert_aborted_naming(self.box.probe("rtstub", FAKEGPU_STRICT=1, FAKEGPU_LOG="off"), "cudaDestroyExternalMemory", [])

    def test_driver_stub_aborts(self):
        self.assert_aborted_naming(self.box.probe("drvstub", "count", FAKEGPU_STRICT=1), "cuDestroyExternalMemory", [])

    def test_nvml_stub_aborts(self):
        self.assert_aborted_naming(self.box.probe("nvml", "nvmlstub", FAKEGPU_STRICT=1),
                                   "nvmlDeviceGetRetiredPagesPendingStatus", ["nvml"])

    def test_unresolved_entry_point_aborts(self):
        self.assert_aborted_naming(self.box.probe("count", "proc:cuNoSuchFunction:12000", FAKEGPU_STRICT=1),
                                   "cuNoSuchFunction", ["count"])

    def test_version_not_sufficient_does_not_abort(self):
        p = self.box.probe("proc:cuMemAllocAsync:11000", "proc:cuMemAllocAsync:12000", FAKEGPU_STRICT=1)
        self.assertEqual(p.returncode, 0, p.describe())
        self.assertEqual([s["status"] for s in p.steps], [VERSION_NOT_SUFFICIENT, 0])

    def test_supported_calls_run_normally(self):
        p = self.box.workload("alloc", 0, 4, FAKEGPU_STRICT=1)
        self.assertEqual((p.returncode, p.stderr), (0, ""), p.describe())
        p = self.box.probe("count", "props", "malloc:0:1024", "freeall", "launch:k:1", "nvml", "proc:cuMemAlloc:12000",
                           FAKEGPU_STRICT=1)
        self.assertEqual((p.returncode, p.stderr), (0, ""), p.describe())

    def test_strict_zero_is_off(self):
        p = self.ok(self.box.probe("rtstub", FAKEGPU_STRICT=0))
        self.assertEqual(self.step(p, 0, "rtstub")["err"], NOT_SUPPORTED)

    def test_aborted_process_memory_is_reclaimed(self):
        p = self.box.probe("malloc:0:%d" % GiB, "rtstub", FAKEGPU_STRICT=1)
        self.assertEqual(p.returncode, -signal.SIGABRT, p.describe())
        after = self.ok(self.box.probe("meminfo:0"))
        self.assertEqual(self.step(after, 0, "meminfo"), {"step": "meminfo", "err": 0, "free": A100_TOTAL,
                                                         "total": A100_TOTAL})


if __name__ == "__main__":
    raise SystemExit(fgtest.main())
