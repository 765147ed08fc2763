#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Device configuration (core/config.cpp) and CUDA_VISIBLE_DEVICES (core/backend.cpp), seen
through the runtime, the driver and NVML of separate processes."""

import json
import os

import fgtest
from fgtest import (A100_NAME, A100_TOTAL, CUDA_ERROR_NO_DEVICE, GiB, H100_NAME, H100_TOTAL, T4_NAME,
                    T4_TOTAL)

CUDA_ERROR_INVALID_DEVICE = 101


class Devices(fgtest.TestCase):
    def test_profile_list_through_runtime_and_nvml(self):
        p = self.ok(self.box.probe("count", "props", "nvml", FAKEGPU_DEVICES="a100-80gb:4,h100-80gb:2"))
        self.assertEqual(self.step(p, 0, "count"), {"step": "count", "err": 0, "count": 6})
        expected = [(A100_NAME, A100_TOTAL)] * 4 + [(H100_NAME, H100_TOTAL)] * 2
        props = self.step(p, 1, "props")
        self.assertEqual(props["err"], 0)
        self.assertEqual([(d["name"], d["total"]) for d in props["devices"]], expected)
        self.assertEqual(len({d["uuid"] for d in props["devices"]}), 6)
        nvml = self.step(p, 2, "nvml")
        self.assertEqual((nvml["err"], nvml["count"]), (0, 6))
        self.assertEqual([(d["name"], d["total"]) for d in nvml["devices"]], expected)
        self.assertEqual([(d["free"], d["used"]) for d in nvml["devices"]], [(t, 0) for _, t in expected])
        self.assertEqual([d["uuid"].replace("GPU-", "").replace("-", "") for d in nvml["devices"]],
                         [d["uuid"] for d in props["devices"]])

    def test_plain_count_means_that_many_default_devices(self):
        p = self.ok(self.box.probe("props", FAKEGPU_DEVICES="3"))
        self.assertEqual([(d["name"], d["total"]) for d in self.step(p, 0, "props")["devices"]],
                         [(A100_NAME, A100_TOTAL)] * 3)

    def test_default_is_eight_a100(self):
        p = self.ok(self.box.probe("props"))
        self.assertEqual([(d["name"], d["total"]) for d in self.step(p, 0, "props")["devices"]],
                         [(A100_NAME, A100_TOTAL)] * 8)

    def test_zero_devices(self):
        p = self.ok(self.box.probe("count", "nvml", FAKEGPU_DEVICES="0"))
        self.assertEqual(self.step(p, 0, "count"), {"step": "count", "err": CUDA_ERROR_NO_DEVICE, "count": 0})
        self.assertEqual(self.step(p, 1, "nvml"), {"step": "nvml", "err": 0, "count": 0, "devices": []})

    def test_sixty_four_devices(self):
        report = self.box.path("r.json")
        p = self.ok(self.box.probe("count", "malloc:63:%d" % GiB, "meminfo:63", "meminfo:62", "nvml",
                                   FAKEGPU_DEVICES="64", FAKEGPU_REPORT=report))
        self.assertEqual(self.step(p, 0, "count")["count"], 64)
        self.assertEqual(self.step(p, 1, "malloc")["err"], 0)
        self.assertEqual(self.step(p, 2, "meminfo"),
                         {"step": "meminfo", "err": 0, "free": A100_TOTAL - GiB, "total": A100_TOTAL})
        self.assertEqual(self.step(p, 3, "meminfo")["free"], A100_TOTAL)
        nvml = self.step(p, 4, "nvml")
        self.assertEqual(nvml["count"], 64)
        self.assertEqual(nvml["devices"][63]["used"], GiB)
        r = self.read_report(report)
        self.assertEqual(len(r["devices"]), 64)
        self.assertEqual(r["devices"][63]["used_memory_peak"], GiB)
        self.assertEqual(len({d["uuid"] for d in r["devices"]}), 64)

    def test_json_config(self):
        cfg = self.box.path("devices.json")
        with open(cfg, "w") as f:
            json.dump({"version": 1, "devices": [
                {"profile": "t4", "count": 2},
                {"profile": "h100-80gb", "name": "Custom H100", "total_memory": "40GiB"}]}, f)
        p = self.ok(self.box.probe("props", "nvml", FAKEGPU_CONFIG=cfg))
        expected = [(T4_NAME, T4_TOTAL)] * 2 + [("Fake Custom H100", 40 * GiB)]
        self.assertEqual([(d["name"], d["total"]) for d in self.step(p, 0, "props")["devices"]], expected)
        self.assertEqual([(d["name"], d["total"]) for d in self.step(p, 1, "nvml")["devices"]], expected)


class InvalidConfiguration(fgtest.TestCase):
    """Every invalid configuration stops the process at its first call, whichever API it is,
    with exit status 1 and one line naming the problem and the fix."""

    ENTRY_STEPS = ("count", "drvstub", "nvml")  # runtime, driver, NVML first calls

    def assert_stops(self, must_name, env, steps=ENTRY_STEPS):
        for step in steps:
            p = self.box.probe(step, **env)
            self.assertEqual(p.returncode, 1, f"{step}: {p.describe()}")
            self.assertEqual(p.steps, [], f"{step}: the call returned: {p.describe()}")
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, p.describe())
            self.assertTrue(lines[0].startswith("[FakeGPU] error: invalid configuration: "), p.describe())
            for text in must_name:
                self.assertIn(text, lines[0])
        return lines[0]

    def test_unknown_profile(self):
        self.assert_stops(['FAKEGPU_DEVICES="a100-80gb:2,b200:2"', 'unknown profile "b200"',
                           "known profiles: a100-80gb, a100-40gb, h100-80gb, h200, l4, t4"],
                          {"FAKEGPU_DEVICES": "a100-80gb:2,b200:2"})

    def test_bad_count_and_too_many(self):
        self.assert_stops(['count "x"', "t4:2"], {"FAKEGPU_DEVICES": "t4:x"}, ("count",))
        self.assert_stops(["300 devices requested", "at most 256", "lower the counts"],
                          {"FAKEGPU_DEVICES": "300"}, ("count",))
        self.assert_stops(["count 0", "FAKEGPU_DEVICES=0"], {"FAKEGPU_DEVICES": "t4:0"}, ("count",))

    def test_bad_json(self):
        cfg = self.box.path("bad.json")
        with open(cfg, "w") as f:
            f.write('{"devices": [{"profile": "t4",}]}\n')
        self.assert_stops([f"FAKEGPU_CONFIG={cfg}", "invalid JSON at line 1", "fix the syntax"],
                          {"FAKEGPU_CONFIG": cfg})

    def test_json_with_an_unknown_key(self):
        cfg = self.box.path("typo.json")
        with open(cfg, "w") as f:
            json.dump({"devices": [{"profile": "t4", "cuont": 2}]}, f)
        self.assert_stops([f"FAKEGPU_CONFIG={cfg}", "devices[0]", 'unknown key "cuont"', "allowed keys"],
                          {"FAKEGPU_CONFIG": cfg}, ("count",))

    def test_both_variables_set(self):
        cfg = self.box.path("ok.json")
        with open(cfg, "w") as f:
            json.dump({"devices": [{"profile": "t4"}]}, f)
        self.assert_stops(['FAKEGPU_DEVICES="t4"', f'FAKEGPU_CONFIG="{cfg}"', "unset one of them"],
                          {"FAKEGPU_DEVICES": "t4", "FAKEGPU_CONFIG": cfg})

    def test_missing_config_file(self):
        cfg = self.box.path("missing.json")
        self.assert_stops([f"FAKEGPU_CONFIG={cfg}", "No such file or directory",
                           "point FAKEGPU_CONFIG at a readable JSON file"], {"FAKEGPU_CONFIG": cfg})

    def test_config_path_is_a_directory(self):
        self.assert_stops([f"FAKEGPU_CONFIG={self.box.dir}", "is a directory",
                           "point FAKEGPU_CONFIG at a readable JSON file"], {"FAKEGPU_CONFIG": self.box.dir}, ("count",))

    def test_invalid_configuration_writes_no_report_and_touches_no_ledger(self):
        p = self.box.probe("count", FAKEGPU_DEVICES="nosuch", FAKEGPU_REPORT=None)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(self.box.listing(), [])


class VisibleDevices(fgtest.TestCase):
    def uuids(self, cvd=None, devices=None):
        env = {}
        if cvd is not None:
            env["CUDA_VISIBLE_DEVICES"] = cvd
        if devices is not None:
            env["FAKEGPU_DEVICES"] = devices
        p = self.ok(self.box.probe("count", "props", **env))
        count = self.step(p, 0, "count")
        props = self.step(p, 1, "props")
        self.assertEqual(count["count"], len(props["devices"]))
        return [d["uuid"] for d in props["devices"]], count["err"]

    def setUp(self):
        super().setUp()
        self.all, _ = self.uuids()
        self.assertEqual(len(self.all), 8)

    def test_ordinals_reorder(self):
        self.assertEqual(self.uuids("3,1")[0], [self.all[3], self.all[1]])
        self.assertEqual(self.uuids("7")[0], [self.all[7]])

    def test_uuid_prefixes(self):
        u5 = self.all[5]
        self.assertEqual(len({u[:8] for u in self.all}), 8)  # 8-digit prefixes are unique here
        self.assertEqual(self.uuids(f"GPU-{u5[:8]},1")[0], [self.all[5], self.all[1]])
        u6 = self.all[6]
        full = f"GPU-{u6[:8]}-{u6[8:12]}-{u6[12:16]}-{u6[16:20]}-{u6[20:]}"
        self.assertEqual(self.uuids(f"{full},0")[0], [self.all[6], self.all[0]])

    def test_invalid_entry_truncates_the_list(self):
        self.assertEqual(self.uuids("2,9,1")[0], [self.all[2]])
        self.assertEqual(self.uuids("0,abc,1")[0], [self.all[0]])
        self.assertEqual(self.uuids("4,GPU-ffffffffffff,1")[0], [self.all[4]])
        self.assertEqual(self.uuids("1,1,2")[0], [self.all[1]])

    def test_empty_or_invalid_first_entry_hides_every_device(self):
        for cvd in ("", "-1", "NoDevFiles"):
            uuids, err = self.uuids(cvd)
            self.assertEqual((uuids, err), ([], CUDA_ERROR_NO_DEVICE), f"CUDA_VISIBLE_DEVICES={cvd!r}")

    def test_nvml_ignores_it(self):
        p = self.ok(self.box.probe("count", "nvml", CUDA_VISIBLE_DEVICES=""))
        self.assertEqual(self.step(p, 0, "count")["err"], CUDA_ERROR_NO_DEVICE)
        self.assertEqual(self.step(p, 1, "nvml")["count"], 8)

    def test_hidden_ordinals_are_invalid(self):
        p = self.ok(self.box.probe("malloc:1:1024", "malloc:0:1024", CUDA_VISIBLE_DEVICES="3"))
        self.assertEqual(p.steps[0], {"step": "malloc", "err": CUDA_ERROR_INVALID_DEVICE, "at": "cudaSetDevice"})
        self.assertEqual(p.steps[1], {"step": "malloc", "err": 0})

    def test_applies_to_a_configured_list(self):
        mixed, _ = self.uuids(devices="t4,h100-80gb:2")
        self.assertEqual(self.uuids("2,0", devices="t4,h100-80gb:2")[0], [mixed[2], mixed[0]])


if __name__ == "__main__":
    raise SystemExit(fgtest.main())
