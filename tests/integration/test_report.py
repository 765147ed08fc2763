#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The report written at exit (core/report.cpp): where, what, and how it is written."""

import os
import re
import subprocess

import fgtest
from fgtest import A100_NAME, A100_TOTAL, MiB

LEAK_BYTES = 256 * MiB  # 268435456
UUID_RE = re.compile(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class ReportContents(fgtest.TestCase):
    def test_leak_run_reports_one_leak_still_held_at_exit(self):
        # No FAKEGPU_REPORT: the default name in the working directory.
        p = self.ok(self.box.workload("leak", 1, 256, FAKEGPU_REPORT=None))
        self.assertEqual(self.box.listing(), ["fake_gpu_report.json", "ledger"])
        r = self.read_report(self.box.path("fake_gpu_report.json"))
        self.assertEqual(r["pid"], int(re.match(r"pid (\d+):", p.stdout).group(1)))
        self.assertEqual(r["leaks"]["count"], 1)
        self.assertEqual(r["leaks"]["bytes"], LEAK_BYTES)
        self.assertEqual(len(r["leaks"]["allocations"]), 1)
        leak = r["leaks"]["allocations"][0]
        self.assertEqual({k: leak[k] for k in ("size", "device", "kind", "api")},
                         {"size": LEAK_BYTES, "device": 1, "kind": "device", "api": "runtime"})
        self.assertIsInstance(leak["ptr"], int)
        self.assertNotEqual(leak["ptr"], 0)

        self.assertEqual(len(r["devices"]), 8)
        for i, d in enumerate(r["devices"]):
            used = LEAK_BYTES if i == 1 else 0
            self.assertEqual(d["index"], i)
            self.assertEqual(d["name"], A100_NAME)
            self.assertEqual(d["total_memory"], A100_TOTAL)
            self.assertEqual(d["used_memory_peak"], used, f"device {i}")
            self.assertEqual(d["used_memory_current"], used, f"device {i}")
            self.assertRegex(d["uuid"], UUID_RE)
        self.assertEqual(len({d["uuid"] for d in r["devices"]}), 8)
        self.assertEqual(r["calls"], {"cudaSetDevice": 1, "cudaMalloc": 1, "cudaMemcpy": 1})
        self.assertEqual(r["kernel_launches"], {})
        self.assertEqual(r["coverage"], {"unsupported_calls": {}, "unresolved_entry_points": {}})

    def test_alloc_run_has_no_leak_and_nothing_current(self):
        self.ok(self.box.workload("alloc", 2, 64, FAKEGPU_REPORT=None))
        r = self.read_report(self.box.path("fake_gpu_report.json"))
        self.assertEqual(r["leaks"], {"count": 0, "bytes": 0, "allocations": []})
        d = r["devices"][2]
        self.assertEqual((d["used_memory_peak"], d["used_memory_current"]), (64 * MiB, 0))
        for i in (0, 1, 3, 4, 5, 6, 7):
            self.assertEqual((r["devices"][i]["used_memory_peak"], r["devices"][i]["used_memory_current"]), (0, 0))
        self.assertEqual(r["calls"], {"cudaSetDevice": 1, "cudaMalloc": 1, "cudaMemcpy": 1, "cudaFree": 1})

    def test_uuids_match_what_nvml_and_the_runtime_report(self):
        report = self.box.path("r.json")
        p = self.ok(self.box.probe("props", "nvml", FAKEGPU_REPORT=report, FAKEGPU_DEVICES="t4:2,h100-80gb"))
        props, nvml = self.step(p, 0, "props"), self.step(p, 1, "nvml")
        r = self.read_report(report)
        self.assertEqual([d["uuid"] for d in r["devices"]], [d["uuid"] for d in nvml["devices"]])
        self.assertEqual([d["uuid"].replace("GPU-", "").replace("-", "") for d in r["devices"]],
                         [d["uuid"] for d in props["devices"]])
        self.assertEqual([d["name"] for d in r["devices"]],
                         ["Fake NVIDIA Tesla T4", "Fake NVIDIA Tesla T4", "Fake NVIDIA H100 80GB HBM3"])

    def test_kernel_launches_by_name_and_call_counts(self):
        report = self.box.path("r.json")
        p = self.ok(self.box.probe("launch:vector_add:3", "launch:reduce_sum:1", "malloc:0:4096", "freeall",
                                   FAKEGPU_REPORT=report))
        self.assertEqual([s["err"] for s in p.steps[:3]], [0, 0, 0], p.describe())
        r = self.read_report(report)
        self.assertEqual(r["kernel_launches"], {"vector_add": 3, "reduce_sum": 1})
        self.assertEqual(r["calls"]["cuLaunchKernel"], 4)
        self.assertEqual(r["calls"]["cuModuleLoadData"], 2)
        self.assertEqual(r["calls"]["cudaMalloc"], 1)
        self.assertEqual(r["calls"]["cudaFree"], 1)
        self.assertEqual(r["leaks"]["count"], 0)
        self.assertEqual(r["devices"][0]["used_memory_peak"], 4096)


    def test_peak_and_current_are_this_processes_own(self):
        # Peak: the most this process held at once (1 + 2 MiB); another process's memory on
        # the same device is not part of this process's report.
        other = self.box.hold("malloc:0:%d" % (4 * MiB), "wait")
        report = self.box.path("r.json")
        self.ok(self.box.probe("malloc:0:%d" % MiB, "malloc:0:%d" % (2 * MiB), "freeall", "malloc:0:%d" % (MiB // 2),
                               FAKEGPU_REPORT=report))
        d = self.read_report(report)["devices"][0]
        self.assertEqual((d["used_memory_peak"], d["used_memory_current"]), (3 * MiB, MiB // 2))
        other.release()

    def test_peak_counts_every_threads_allocations(self):
        # trace_workload threads (tests/workloads/trace_workload.cpp): threads on devices 0, 4,
        # 7, 4 allocate one after another, all live at a barrier; the two on device 4 hold
        # 4 + 1 and 2 + 1 MiB then, each thread booking on its own ledger shard.
        report = self.box.path("r.json")
        self.ok(self.box.run([fgtest.build_path("bin", "trace_workload"), "threads"], FAKEGPU_REPORT=report))
        r = self.read_report(report)
        self.assertEqual({d["index"]: (d["used_memory_peak"], d["used_memory_current"]) for d in r["devices"]
                          if d["used_memory_peak"]},
                         {0: (MiB, 0), 4: (8 * MiB, 2 * MiB), 7: (3 * MiB, 0)})


class ReportPath(fgtest.TestCase):
    def test_percent_p_expands_to_the_pid(self):
        os.mkdir(self.box.path("reports"))
        p = self.ok(self.box.workload("alloc", 0, 1, FAKEGPU_REPORT=self.box.path("reports", "run-%p.json")))
        pid = int(re.match(r"pid (\d+):", p.stdout).group(1))
        self.assertEqual(os.listdir(self.box.path("reports")), [f"run-{pid}.json"])
        self.assertEqual(self.read_report(self.box.path("reports", f"run-{pid}.json"))["pid"], pid)
        self.assertNotIn("fake_gpu_report.json", self.box.listing())

    def test_off_writes_nothing(self):
        self.ok(self.box.workload("leak", 0, 1, FAKEGPU_REPORT="off"))
        self.assertEqual(self.box.listing(), ["ledger"])

    def test_relative_path_is_in_the_working_directory(self):
        self.ok(self.box.workload("alloc", 0, 1, FAKEGPU_REPORT="mine.json"))
        self.assertEqual(self.box.listing(), ["ledger", "mine.json"])

    def test_replaces_an_existing_report(self):
        path = self.box.path("r.json")
        with open(path, "w") as f:
            f.write("not json")
        self.ok(self.box.workload("leak", 3, 2, FAKEGPU_REPORT=path))
        self.assertEqual(self.read_report(path)["leaks"]["bytes"], 2 * MiB)
        self.assertEqual(self.box.listing(), ["ledger", "r.json"])

    def test_concurrent_writers_leave_one_whole_report_and_no_temporary_files(self):
        # Eight processes write the same path at exit: every rename is atomic, so what is
        # left is one complete report of one of them.
        path = self.box.path("shared.json")
        env = self.box.env(FAKEGPU_REPORT=path)
        procs = [subprocess.Popen([fgtest.workload(), "leak", str(i), "1"], env=env, cwd=self.box.dir,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(8)]
        pids = set()
        for p in procs:
            out, err = p.communicate(timeout=fgtest.TIMEOUT)
            self.assertEqual((p.returncode, err), (0, ""))
            pids.add(int(re.match(r"pid (\d+):", out).group(1)))
        r = self.read_report(path)
        self.assertIn(r["pid"], pids)
        self.assertEqual(r["leaks"]["count"], 1)
        self.assertEqual(self.box.listing(), ["ledger", "shared.json"])

    def test_unwritable_path_warns_and_keeps_the_exit_status(self):
        path = self.box.path("no-such-dir", "r.json")
        p = self.box.workload("alloc", 0, 1, FAKEGPU_REPORT=path)
        self.assertEqual(p.returncode, 0, p.describe())
        self.assertIn(path, p.stderr)
        self.assertIn("FAKEGPU_REPORT", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.describe())
        self.assertTrue(p.stderr.startswith("[FakeGPU] warning: "), p.describe())

    def test_unwritable_path_keeps_a_failing_exit_status(self):
        # "workload bogus" initialises the backend (cudaSetDevice), then exits with status 2.
        path = self.box.path("no-such-dir", "r.json")
        p = self.box.workload("bogus", 0, 1, FAKEGPU_REPORT=path)
        self.assertEqual(p.returncode, 2, p.describe())
        self.assertIn(path, p.stderr)

    def test_directory_as_path_warns_and_leaves_no_temporary_file(self):
        os.mkdir(self.box.path("adir"))
        p = self.box.workload("alloc", 0, 1, FAKEGPU_REPORT=self.box.path("adir"))
        self.assertEqual(p.returncode, 0, p.describe())
        self.assertIn(self.box.path("adir"), p.stderr)
        self.assertIn("FAKEGPU_REPORT", p.stderr)
        self.assertEqual(self.box.listing(), ["adir", "ledger"])
        self.assertEqual(os.listdir(self.box.path("adir")), [])

    def test_log_off_silences_the_warning(self):
        p = self.box.workload("alloc", 0, 1, FAKEGPU_REPORT=self.box.path("no-such-dir", "r.json"), FAKEGPU_LOG="off")
        self.assertEqual((p.returncode, p.stderr), (0, ""))


if __name__ == "__main__":
    raise SystemExit(fgtest.main())
