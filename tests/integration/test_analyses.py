#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fakegpu-trace's memory analyses end to end (root): the OOM forecast of a process growing at a
known rate, `run --fail-on-oom-risk` and its exit status, `--leak-age` listing exactly the
allocations old enough, and the exact fragmentation of a scripted allocation pattern.

The programs traced are bin/trace_workload grow / aged / frag (tests/workloads/trace_workload.cpp:
each mode's figures are in its comment). Devices come from a FAKEGPU_CONFIG of the test's own
(a 1 GiB or a 64 MiB device), in the test's sandbox ledger. Readiness is always a line a process
prints or a collector's JSON line showing the books; every wait is bounded. Bounds on measured
rates are stated where they are asserted: the rate a workload really had is computed from its own
CLOCK_MONOTONIC times, so a slow machine changes the expected value, not the verdict.

Needs root (BPF): as another user the whole file prints SKIPPED with the reason.
"""

import json
import os
import re
import shutil
import signal
import time
import urllib.request

import fgtest
from fgtest import MiB
import test_trace as tt

TIMEOUT = fgtest.TIMEOUT
RATE_BOUND = 0.15  # the forecast's rate is within 15 % of the rate the workload had


def config(box, total):
    """A FAKEGPU_CONFIG file with one T4 of `total` memory."""
    path = box.path(f"device-{total}.json")
    with open(path, "w") as f:
        json.dump({"devices": [{"profile": "t4", "total_memory": f"{total // MiB}MiB"}]}, f)
    return path


def grown_rate(line):
    """The rate (bytes/s) a `grow` workload had, from its "grown" line."""
    m = re.search(r"grown (\d+) x (\d+) MiB, first (\d+) last (\d+)", line)
    steps, mib, first, last = (int(g) for g in m.groups())
    return (steps - 1) * mib * MiB / ((last - first) / 1e9), steps * mib * MiB


def arena_start(pid, device):
    """Where the fake's arena of device memory begins in process pid (its memfd mapping)."""
    with open(f"/proc/{pid}/maps") as f:
        starts = [int(line.split("-")[0], 16) for line in f if f"/memfd:fakegpu-device-{device} " in line + " "]
    assert starts, f"no arena for device {device} in /proc/{pid}/maps"
    return min(starts)


def fragmentation(begin, capacity, ranges):
    """The model of core/analysis.h, independently: free extents of [begin, begin+capacity)."""
    end, cursor, gaps = begin + capacity, begin, []
    for b, e in sorted(ranges):
        b, e = min(max(b, begin), end), min(max(e, begin), end)
        if e <= cursor:
            continue
        if b > cursor:
            gaps.append(b - cursor)
        cursor = e
    if end > cursor:
        gaps.append(end - cursor)
    free = sum(gaps)
    return {"free_bytes": free, "largest_free_bytes": max(gaps, default=0), "free_extents": len(gaps),
            "ratio": 0.0 if free == 0 else 1 - max(gaps) / free}


class Analyses(tt.TraceCase):
    def monitor(self, *options, env):
        mon = self.start([tt.tracer(), "monitor", "-j", "-i", "0.1", *options], env=env)
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        return mon

    def stop(self, *procs):
        for p in procs:
            if p.popen.poll() is None:
                if p.popen.stdin and not p.popen.stdin.closed:
                    p.close_stdin()
                if "fakegpu-trace" in p.args[0]:
                    p.popen.send_signal(signal.SIGTERM)
                p.wait()

    @staticmethod
    def mine(line, pid):
        """(process entry, its analysis) of pid in a JSON line, or None."""
        j = tt.json_line(line)
        if not j or not j.get("analysis"):
            return None
        procs = [p for p in j["processes"] if p["pid"] == pid]
        ana = [a for a in j["analysis"]["processes"] if a["pid"] == pid]
        return (procs[0], ana[0], j) if procs and ana else None

    def test_a_process_growing_at_a_known_rate_gets_its_forecast(self):
        # 40 x 4 MiB, one every 50 ms (80 MiB/s nominally) on a 1 GiB device, in a window of
        # 1.5 s of 0.1 s refreshes: the first refresh after the last allocation fits the ramp.
        env = self.env(FAKEGPU_CONFIG=config(self.box, 1024 * MiB))
        mon = self.monitor("--oom-window", "1.5", env=env)
        work = self.start([tt.trace_workload(), "grow", "40", "4", "50", "hold"], env=env)
        grown = tt.pid_line("grown")
        line = work.out.until(grown, "the workload's grown line")
        pid = int(grown.match.group(1))
        rate, total = grown_rate(line)
        found = None

        def full(text):
            nonlocal found
            found = self.mine(text, pid)
            return found is not None and found[0]["live_bytes"] == total

        mon.out.until(full, "a refresh with the workload's 160 MiB")
        self.stop(work, mon)
        p, a, _ = found
        dev = a["devices"][0]
        f = dev["forecast"]
        self.assertEqual((dev["device"], dev["live_bytes"], f["capacity_bytes"]), (0, total, 1024 * MiB))
        self.assertLessEqual(abs(f["growth_bytes_per_s"] - rate) / rate, RATE_BOUND, (f, rate))
        self.assertLessEqual(abs(a["growth_bytes_per_min"] / 60 - rate) / rate, RATE_BOUND, (a, rate))
        self.assertGreaterEqual(f["confidence"], 0.5, f)
        # The ETA is the headroom at the fitted rate, exactly; at 80 MiB/s +-15 % the 864 MiB
        # left take 9.2 to 12.5 s: critical (<= 60 s).
        self.assertAlmostEqual(f["eta_s"], (1024 * MiB - f["used_bytes"]) / f["growth_bytes_per_s"], places=6)
        self.assertEqual((f["risk"], a["risk"], a["growing"]), ("critical", "critical", True))

    def test_run_fail_on_oom_risk_exit_status(self):
        # The same growth on a 1 GiB device (critical: exit 6) and on an 80 GiB A100, where the
        # 80 MiB/s +-15 % leave 890 to 1205 s: medium, under "critical": the command's status 0.
        for total, status, worst in ((1024 * MiB, 6, "critical"), (None, 0, "medium")):
            with self.subTest(total=total):
                # A ledger each: a ledger keeps the devices it was made with.
                ledger = self.box.path(f"ledger-{total}")
                env = (self.env(FAKEGPU_CONFIG=config(self.box, total), FAKEGPU_LEDGER=ledger) if total
                       else self.env(FAKEGPU_LEDGER=ledger))
                rc, s, p = self.trace_run("-i", "0.1", "--oom-window", "1.5", "--fail-on-oom-risk", "critical",
                                          cmd=[tt.trace_workload(), "grow", "40", "4", "50"], env=env)
                self.assertEqual(rc, status, p.describe())
                self.assertEqual(s["verdict"]["status"], "oom_risk" if status else "ok", s["verdict"])
                self.assertEqual(s["verdict"]["fail_on_oom_risk"], "critical")
                self.assertEqual(s["analysis"]["worst_risk"], worst, json.dumps(s["analysis"], indent=1))
                self.assertEqual([w["forecast"]["risk"] for w in s["analysis"]["worst"] if w["device"] == 0], [worst])
        rc, s, p = self.trace_run("--fail-on-oom-risk", "severe", cmd=["true"])
        self.assertEqual(rc, 2, p.describe())
        self.assertIn("'severe' is not a risk level: use low, medium, high or critical", p.stderr)

    def test_leak_age_lists_exactly_the_allocations_old_enough(self):
        # monitor --listen: /api/v1/processes/{pid} holds, from one refresh, the outstanding
        # allocations with their times and the aged ones with the time the ages count to.
        mon = self.start([tt.tracer(), "monitor", "-q", "-i", "0.1", "--leak-age", "1", "--listen", "127.0.0.1:0"])
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        base = "http://" + next(m.group(1) for m in (re.search(r"serving http://(\S+?)/ ", x) for x in mon.err.seen)
                                if m)
        work = self.start([tt.trace_workload(), "aged"])
        first = tt.pid_line("first batch")
        work.out.until(first, "the first batch")
        pid = int(first.match.group(1))

        def doc():
            with urllib.request.urlopen(f"{base}/api/v1/processes/{pid}", timeout=TIMEOUT) as r:
                return json.load(r)

        def poll(what, pred):
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                try:
                    d = doc()
                except OSError:
                    d = None
                if d and pred(d):
                    return d
                time.sleep(0.05)
            self.fail(f"{what}: not reached in {TIMEOUT} s")

        # The first batch ages past 1 s (what is under test is an age: waiting for it is the test).
        poll("the first batch listed as aged", lambda d: d["analysis"]["aged"]["count"] == 2)
        work.popen.stdin.write("\n")
        work.popen.stdin.flush()
        work.out.until(tt.pid_line("second batch"), "the second batch")
        d = poll("the second batch in the books", lambda d: d["outstanding_count"] == 4)
        self.stop(work, mon)
        aged = d["analysis"]["aged"]
        as_of = aged["as_of_ns"]
        expected = sorted((a["ts_ns"], a["ptr"], a["size"]) for a in d["outstanding_allocations"]
                          if as_of - a["ts_ns"] >= 1_000_000_000)
        got = sorted((a["ts_ns"], a["ptr"], a["size"]) for a in aged["allocations"])
        self.assertEqual(got, expected)
        self.assertEqual((aged["count"], aged["bytes"]), (len(expected), sum(e[2] for e in expected)))
        sizes = {a["size"]: a["ts_ns"] for a in d["outstanding_allocations"]}
        young = [s for s in (3 * MiB, 4 * MiB) if as_of - sizes[s] < 1_000_000_000]
        # The second batch is younger than 1 s at the first refresh that holds it (0.1 s
        # refreshes): exactly the first batch is listed then.
        if len(young) == 2:
            self.assertEqual(sorted(e[2] for e in expected), [1 * MiB, 2 * MiB])

    def test_a_scripted_pattern_gives_the_exact_largest_free_extent(self):
        # 15 x 4 MiB on a 64 MiB device, blocks 1 3 5 7 9 12 13 freed (trace_workload frag).
        env = self.env(FAKEGPU_CONFIG=config(self.box, 64 * MiB))
        mon = self.monitor(env=env)
        work = self.start([tt.trace_workload(), "frag"], env=env)
        frag = tt.pid_line("fragmented")
        work.out.until(frag, "the workload's fragmented line")
        pid = int(frag.match.group(1))
        blocks = {int(m.group(1)): int(m.group(2), 16) for m in
                  (re.search(r"block (\d+) at (0x[0-9a-f]+)", x) for x in work.out.seen) if m}
        begin = arena_start(pid, 0)
        found = None

        def held(text):
            nonlocal found
            found = self.mine(text, pid)
            return found is not None and found[0]["live_bytes"] == 32 * MiB

        mon.out.until(held, "a refresh with the workload's 32 MiB")
        self.stop(work, mon)
        _, a, j = found
        live = [(blocks[i], blocks[i] + 4 * MiB) for i in (0, 2, 4, 6, 8, 10, 11, 14)]
        expected = fragmentation(begin, 64 * MiB, live)
        got = a["devices"][0]["fragmentation"]
        self.assertEqual({k: got[k] for k in expected}, expected)
        self.assertEqual(got["address_space_begin"], hex(begin))
        # The arena gives whole 4 MiB chunks one after the other from its start: the scripted
        # figures of trace_workload frag.
        if all(blocks[i] == begin + i * 4 * MiB for i in range(15)):
            self.assertEqual((got["free_bytes"], got["largest_free_bytes"], got["free_extents"], got["ratio"]),
                             (32 * MiB, 8 * MiB, 7, 0.75))
        else:
            print(f"note: the arena did not place the blocks in order: {blocks}", flush=True)
        # The device's figure is its most fragmented address space: this one's.
        d = [x for x in j["analysis"]["devices"] if x["device"] == 0][0]
        if d["fragmentation_pid"] == pid:
            self.assertEqual(d["fragmentation"], got)

    def test_bad_analysis_options_are_refused_with_the_fix(self):
        for args, needle in ((["--oom-threshold", "150"], "is not a percentage in (0, 100]"),
                             (["--oom-threshold", "nan"], "is not a percentage in (0, 100]"),
                             (["--leak-age", "-1"], "is not a number of seconds, 0 or more"),
                             (["--oom-window", "0"], "is not a number of seconds above 0"),
                             (["--leak-rate", "fast"], "a growth per minute, e.g. --leak-rate 10MiB/min"),
                             (["--history", "inf"], "is not a number of seconds above 0")):
            p = self.box.run([tt.tracer(), "monitor", "-d", "1", *args])
            self.assertEqual(p.returncode, 2, p.describe())
            self.assertIn(needle, p.stderr, p.describe())
            self.assertNotIn("ready:", p.stderr, p.describe())


def main():
    if os.geteuid() != 0:
        print("SKIPPED: fakegpu-trace loads BPF programs and needs root (run the suite with sudo); "
              f"running as uid {os.geteuid()}", flush=True)
        return 0
    if not shutil.which("bpftool"):
        print("test_analyses.py needs bpftool (scripts/deps.sh installs it)", flush=True)
        return 1
    return fgtest.main()


if __name__ == "__main__":
    raise SystemExit(main())
