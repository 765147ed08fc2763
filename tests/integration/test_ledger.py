#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shared device ledger (core/ledger.cpp) across real processes: shared capacity,
isolation, reclaim after SIGKILL, fork, file modes, corrupt files."""

import json
import os
import shutil
import signal
import stat
import subprocess

import fgtest
from fgtest import A100_TOTAL, CUDA_ERROR_MEMORY_ALLOCATION, GiB, MiB, T4_TOTAL


def free_of(test, proc, index):
    s = test.step(proc, index, "meminfo")
    test.assertEqual(s["err"], 0, proc.describe())
    return s["free"]


class SharedCapacity(fgtest.TestCase):
    def test_two_processes_see_each_others_usage(self):
        a = self.box.hold("malloc:0:%d" % GiB, "malloc:2:%d" % (3 * GiB), "wait")
        b = self.ok(self.box.probe("meminfo:0", "meminfo:1", "meminfo:2", "nvml"))
        self.assertEqual([free_of(self, b, i) for i in range(3)], [A100_TOTAL - GiB, A100_TOTAL, A100_TOTAL - 3 * GiB])
        nvml = self.step(b, 3, "nvml")["devices"]
        self.assertEqual([d["used"] for d in nvml[:3]], [GiB, 0, 3 * GiB])
        self.assertEqual(a.release().returncode, 0)
        c = self.ok(self.box.probe("meminfo:0", "meminfo:2"))
        self.assertEqual([free_of(self, c, 0), free_of(self, c, 1)], [A100_TOTAL, A100_TOTAL])

    def test_allocation_that_fits_alone_but_not_together_fails_and_the_device_stays_usable(self):
        env = {"FAKEGPU_DEVICES": "t4"}
        a = self.box.hold("malloc:0:%d" % (10 * GiB), "wait", **env)
        report = self.box.path("b.json")
        b = self.ok(self.box.probe("malloc:0:%d" % (10 * GiB), "malloc:0:%d" % GiB, "meminfo:0", "freeall",
                                   "meminfo:0", FAKEGPU_REPORT=report, **env))
        self.assertEqual([s["err"] for s in b.steps[:2]], [CUDA_ERROR_MEMORY_ALLOCATION, 0])
        self.assertEqual(free_of(self, b, 2), T4_TOTAL - 11 * GiB)
        self.assertEqual(b.steps[3]["errs"], [0])
        self.assertEqual(free_of(self, b, 4), T4_TOTAL - 10 * GiB)
        r = self.read_report(report)  # the failed allocation is no part of B's books
        self.assertEqual((r["devices"][0]["used_memory_peak"], r["devices"][0]["used_memory_current"]), (GiB, 0))
        self.assertEqual((r["leaks"]["count"], r["calls"]["cudaMalloc"]), (0, 2))
        # workload grow fills what is left: 15360 - 10240 MiB in 1024 MiB steps.
        g = self.ok(self.box.workload("grow", 0, 1024, **env))
        self.assertIn("device 0 full after 5 x 1024 MiB", g.stdout)
        self.assertEqual(a.release().returncode, 0)
        c = self.ok(self.box.probe("malloc:0:%d" % (10 * GiB), "meminfo:0", **env))
        self.assertEqual(c.steps[0]["err"], 0)
        self.assertEqual(free_of(self, c, 1), T4_TOTAL - 10 * GiB)
        g = self.ok(self.box.workload("grow", 0, 1024, **env))
        self.assertIn("device 0 full after 15 x 1024 MiB", g.stdout)

    def test_a_stopped_process_holding_the_capacity_check_makes_nobody_wait(self):
        # A process stopped (SIGSTOP, a debugger) while it holds a device's capacity check: the
        # others near capacity are refused after a bounded wait, never hang.
        env = {"FAKEGPU_DEVICES": "t4"}
        a = self.box.hold("malloc:0:%d" % (10 * GiB), "wait", **env)
        stopped = subprocess.Popen(["sleep", "60"])
        try:
            os.kill(stopped.pid, signal.SIGSTOP)
            with open(self.box.ledger, "r+b") as f:
                header_size = int.from_bytes(f.read(16)[12:16], "little")  # Header.header_size
                f.seek((header_size + 63) // 64 * 64 + 40)                  # device entry 0's exact_lock
                f.write(((stopped.pid << 8) | 1).to_bytes(8, "little"))      # (kBusy, pid)
            try:
                b = self.ok(self.box.probe("malloc:0:%d" % (10 * GiB), "malloc:0:%d" % GiB, timeout=20, **env))
            except subprocess.TimeoutExpired:
                self.fail("an allocation near capacity waits for ever on a stopped process")
            self.assertEqual([s["err"] for s in b.steps], [CUDA_ERROR_MEMORY_ALLOCATION, 0])
            self.assertIn(f"process {stopped.pid} has held its capacity check for over a second", b.stderr)
        finally:
            stopped.kill()
            stopped.wait()
        self.assertEqual(a.release().returncode, 0)

    def test_processes_created_at_once_share_one_ledger(self):
        # Eight processes race to create the ledger; all must end up on the same one.
        env = self.box.env()
        args = [fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), "malloc:0:%d" % GiB, "wait"]
        holders = []
        for _ in range(8):
            p = subprocess.Popen(args, env=env, cwd=self.box.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            self.box._live.append(p)
            holders.append(fgtest.Holder(p, args))
        for h in holders:
            self.assertEqual(h.wait_ready(), [{"step": "malloc", "err": 0}])
        b = self.ok(self.box.probe("meminfo:0"))
        self.assertEqual(free_of(self, b, 0), A100_TOTAL - 8 * GiB)
        for h in holders:
            self.assertEqual(h.release().returncode, 0)
        self.assertEqual(self.box.listing(), ["ledger"])  # no temporary ledger left behind

    def test_processes_racing_to_fill_a_device_never_hold_more_than_its_capacity(self):
        # Six processes fill a T4 in 1 MiB steps at once, each until it is refused. Together
        # they hold at most the capacity, and the last refusal left less than a step free.
        # (Quota one process reserved but had not used was once spent after another's exact
        # check had counted it free: they held up to 130 MiB more than the device.)
        STEP = 1
        env = self.box.env(FAKEGPU_DEVICES="t4")
        args = [fgtest.workload(), "grow", "0", str(STEP), "hold"]
        procs = []
        for _ in range(6):
            p = subprocess.Popen(args, env=env, cwd=self.box.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            self.box._live.append(p)
            procs.append(p)
        for p in procs:  # the start gate: one line each, written as close together as possible
            p.stdin.write("go\n")
        for p in procs:
            p.stdin.flush()
        held = 0
        for p in procs:
            line = p.stdout.readline()
            self.assertRegex(line, r"device 0 full after \d+ x %d MiB" % STEP, p.stderr.read() if not line else line)
            held += int(line.split("full after ")[1].split(" x")[0]) * STEP * MiB
        b = self.ok(self.box.probe("meminfo:0", "nvml", FAKEGPU_DEVICES="t4"))
        used = self.step(b, 1, "nvml")["devices"][0]["used"]
        self.assertEqual(used, held)
        self.assertLessEqual(held, T4_TOTAL)
        self.assertGreater(held, T4_TOTAL - STEP * MiB)
        self.assertEqual(free_of(self, b, 0), T4_TOTAL - held)
        for p in procs:
            p.stdin.close()
            self.assertEqual(p.wait(timeout=fgtest.TIMEOUT), 0, p.stderr.read())

    def test_usage_is_booked_on_the_physical_device(self):
        a = self.box.hold("malloc:0:%d" % GiB, "wait", CUDA_VISIBLE_DEVICES="3")
        b = self.ok(self.box.probe("meminfo:0", "meminfo:3"))
        self.assertEqual([free_of(self, b, 0), free_of(self, b, 1)], [A100_TOTAL, A100_TOTAL - GiB])
        a.release()

    def test_live_process_with_another_capacity_for_the_same_device_is_refused(self):
        cfg = self.box.path("small.json")
        with open(cfg, "w") as f:
            json.dump({"devices": [{"profile": "t4", "total_memory": "8GiB"}]}, f)
        a = self.box.hold("malloc:0:%d" % GiB, "wait", FAKEGPU_CONFIG=cfg)
        b = self.box.probe("count", FAKEGPU_DEVICES="t4")
        self.assertEqual(b.returncode, 1, b.describe())
        self.assertIn(self.box.ledger, b.stderr)
        self.assertIn("same device configuration", b.stderr)
        a.release()


class SequentialRuns(fgtest.TestCase):
    """Processes that ran before and have exited hold nothing: a later process with another
    configuration must not be refused because of them."""

    def test_changed_capacity_after_the_first_process_exited(self):
        cfg = self.box.path("small.json")
        with open(cfg, "w") as f:
            json.dump({"devices": [{"profile": "t4", "total_memory": "8GiB"}]}, f)
        self.ok(self.box.probe("count", FAKEGPU_CONFIG=cfg))
        p = self.box.probe("meminfo:0", FAKEGPU_DEVICES="t4")
        self.assertEqual(p.returncode, 0, p.describe())
        self.assertEqual(self.step(p, 0, "meminfo"), {"step": "meminfo", "err": 0, "free": T4_TOTAL, "total": T4_TOTAL})

    def test_many_configurations_one_after_another(self):
        # Each run is valid alone (at most 256 devices); none runs at the same time as another.
        for spec in ("256", "t4"):
            p = self.box.probe("count", FAKEGPU_DEVICES=spec)
            self.assertEqual(p.returncode, 0, f"FAKEGPU_DEVICES={spec}: {p.describe()}")


class Isolation(fgtest.TestCase):
    def test_isolated_processes_do_not_see_each_other_or_the_shared_ledger(self):
        a = self.box.hold("malloc:0:%d" % (70 * GiB), "wait", FAKEGPU_ISOLATED=1)
        b = self.ok(self.box.probe("meminfo:0", "malloc:0:%d" % (70 * GiB), "meminfo:0", FAKEGPU_ISOLATED=1))
        self.assertEqual(free_of(self, b, 0), A100_TOTAL)
        self.assertEqual(b.steps[1]["err"], 0)
        self.assertEqual(free_of(self, b, 2), A100_TOTAL - 70 * GiB)
        self.assertEqual(self.box.listing(), [])  # no ledger file for isolated processes
        c = self.ok(self.box.probe("meminfo:0"))   # a shared process does not see them either
        self.assertEqual(free_of(self, c, 0), A100_TOTAL)
        a.release()

    def test_isolated_process_does_not_see_shared_ones(self):
        a = self.box.hold("malloc:0:%d" % GiB, "wait")
        b = self.ok(self.box.probe("meminfo:0", FAKEGPU_ISOLATED=1))
        self.assertEqual(free_of(self, b, 0), A100_TOTAL)
        c = self.ok(self.box.probe("meminfo:0", FAKEGPU_ISOLATED=0))  # "0" is not isolated
        self.assertEqual(free_of(self, c, 0), A100_TOTAL - GiB)
        a.release()

    def test_isolated_capacity_still_holds_within_the_process(self):
        p = self.ok(self.box.probe("malloc:0:%d" % (10 * GiB), "malloc:0:%d" % (10 * GiB), FAKEGPU_ISOLATED=1,
                                   FAKEGPU_DEVICES="t4"))
        self.assertEqual([s["err"] for s in p.steps], [0, CUDA_ERROR_MEMORY_ALLOCATION])


class Reclaim(fgtest.TestCase):
    def test_sigkilled_process_memory_is_reclaimed_by_the_next_process(self):
        a = self.box.hold("malloc:0:%d" % (3 * GiB), "malloc:1:%d" % GiB, "wait")
        b = self.ok(self.box.probe("meminfo:0", "meminfo:1"))
        self.assertEqual([free_of(self, b, 0), free_of(self, b, 1)], [A100_TOTAL - 3 * GiB, A100_TOTAL - GiB])
        listed = self.ok(self.box.probe("nvmlprocs:0"))
        self.assertEqual(self.step(listed, 0, "nvmlprocs"),
                         {"step": "nvmlprocs", "err": 0, "procs": [{"pid": a.popen.pid, "used": 3 * GiB}]})
        killed = a.kill()
        self.assertEqual(killed.returncode, -signal.SIGKILL)
        c = self.ok(self.box.probe("meminfo:0", "meminfo:1", "nvml", "nvmlprocs:0"))
        self.assertEqual(self.step(c, 3, "nvmlprocs"), {"step": "nvmlprocs", "err": 0, "procs": []})
        self.assertEqual([free_of(self, c, 0), free_of(self, c, 1)], [A100_TOTAL, A100_TOTAL])
        self.assertEqual([d["used"] for d in self.step(c, 2, "nvml")["devices"]], [0] * 8)

    def test_a_running_process_gets_the_memory_of_a_killed_one(self):
        # As with a real GPU, memory held by a process that was killed is free again for the
        # processes still running, not only for the next one to start.
        env = {"FAKEGPU_DEVICES": "t4"}
        b = self.box.hold("meminfo:0", "wait", "malloc:0:%d" % (10 * GiB), "meminfo:0", **env)
        a = self.box.hold("malloc:0:%d" % (10 * GiB), "wait", **env)
        self.assertEqual(a.kill().returncode, -signal.SIGKILL)
        done = b.release()
        self.assertEqual(done.returncode, 0, done.describe())
        self.assertEqual(done.steps, [{"step": "malloc", "err": 0},
                                      {"step": "meminfo", "err": 0, "free": T4_TOTAL - 10 * GiB, "total": T4_TOTAL}])

    def test_a_thousand_processes_killed_while_allocating_leave_nothing_booked(self):
        # 1,000 processes allocating and freeing on two devices as fast as they can, two at a
        # time, each SIGKILLed at a random moment of its churn: afterwards the devices are
        # entirely free, in the ledger and in NVML, and nobody is listed.
        import random
        rng = random.Random(23)
        env = self.box.env()
        args = [fgtest.workload(), "churn", "0", "16"]
        kills, running = 0, []

        def start():
            p = subprocess.Popen(args, env=env, cwd=self.box.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            self.box._live.append(p)
            self.assertRegex(p.stdout.readline(), r"^pid \d+: churning$", p.stderr.read() if p.poll() else "")
            return p

        while kills < 1000:
            while len(running) < 2 and kills + len(running) < 1000:
                running.append(start())
            victim = running.pop(rng.randrange(len(running)))
            os.sched_yield()
            victim.send_signal(signal.SIGKILL)
            self.assertEqual(victim.wait(timeout=fgtest.TIMEOUT), -signal.SIGKILL, victim.stderr.read())
            victim.stdout.close()
            victim.stderr.close()
            self.box._live.remove(victim)
            kills += 1
        c = self.ok(self.box.probe("meminfo:0", "meminfo:1", "nvml", "nvmlprocs:0", "nvmlprocs:1"))
        self.assertEqual([free_of(self, c, 0), free_of(self, c, 1)], [A100_TOTAL, A100_TOTAL])
        self.assertEqual([d["used"] for d in self.step(c, 2, "nvml")["devices"]], [0] * 8)
        self.assertEqual([self.step(c, i, "nvmlprocs")["procs"] for i in (3, 4)], [[], []])

    def test_leak_at_exit_is_given_back(self):
        self.ok(self.box.workload("leak", 0, 512))
        c = self.ok(self.box.probe("meminfo:0"))
        self.assertEqual(free_of(self, c, 0), A100_TOTAL)

    def test_forked_child_books_only_its_own_memory(self):
        report = self.box.path("r-%p.json")
        a = self.box.hold("malloc:0:%d" % MiB, "forkleak:1:%d" % (2 * MiB), "meminfo:0", "meminfo:1", "wait",
                          FAKEGPU_REPORT=report)
        _, fork, m0, m1 = a.before
        self.assertEqual(fork["status"], 0)
        # The child has exited: its 2 MiB are back, the parent's 1 MiB is still booked.
        self.assertEqual((m0["free"], m1["free"]), (A100_TOTAL - MiB, A100_TOTAL))
        child = self.read_report(self.box.path(f"r-{fork['child']}.json"))
        self.assertEqual([(x["device"], x["size"]) for x in child["leaks"]["allocations"]], [(1, 2 * MiB)])
        self.assertEqual([(d["used_memory_peak"], d["used_memory_current"]) for d in child["devices"][:2]],
                         [(0, 0), (2 * MiB, 2 * MiB)])
        parent = a.release()
        self.assertEqual(parent.returncode, 0, parent.describe())
        reports = [n for n in self.box.listing() if n.startswith("r-")]
        self.assertEqual(len(reports), 2)
        mine = [self.read_report(self.box.path(n)) for n in reports if n != f"r-{fork['child']}.json"][0]
        self.assertEqual([(x["device"], x["size"]) for x in mine["leaks"]["allocations"]], [(0, MiB)])
        c = self.ok(self.box.probe("meminfo:0", "meminfo:1"))
        self.assertEqual([free_of(self, c, 0), free_of(self, c, 1)], [A100_TOTAL, A100_TOTAL])


class FileModes(fgtest.TestCase):
    def create_with_umask(self, umask, env):
        cp = subprocess.run([fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), "count"], env=env, cwd=self.box.dir,
                            capture_output=True, text=True, timeout=fgtest.TIMEOUT, umask=umask)
        self.assertEqual(cp.returncode, 0, cp.stderr)

    def test_explicit_ledger_is_group_shareable_whatever_the_umask(self):
        for umask in (0o077, 0o000):
            if os.path.exists(self.box.ledger):
                os.unlink(self.box.ledger)
            self.create_with_umask(umask, self.box.env())
            self.assertEqual(stat.S_IMODE(os.stat(self.box.ledger).st_mode), 0o660, f"umask {umask:o}")
            self.assertEqual(self.box.listing(), ["ledger"])

    def in_private_shm(self, script, root_only=False):
        """Runs `script` (sh; "$@" is the probe counting devices) with a /dev/shm of its own (a
        private mount namespace), so the user's real default ledger is not touched. Skips where
        there is no such namespace, or without root where the script needs root."""
        unshare = shutil.which("unshare")
        if not unshare:
            self.skipTest("unshare(1) not found")
        if root_only and os.geteuid() != 0:
            self.skipTest("needs root: it makes a file owned by another user")
        flags = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
        env = self.box.env(FAKEGPU_LEDGER=None)
        cp = subprocess.run([unshare, *flags, "sh", "-c", "mount -t tmpfs tmpfs /dev/shm || exit 90; " + script, "sh",
                             fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), "count"], env=env, cwd=self.box.dir,
                            capture_output=True, text=True, timeout=fgtest.TIMEOUT)
        if cp.returncode == 90:
            self.skipTest(f"no private mount namespace here: {cp.stderr.strip()}")
        return cp

    def test_default_ledger_is_private(self):
        # The default path is /dev/shm/fakegpu-<uid>.v<version>.ledger.
        cp = self.in_private_shm('umask 000; "$@" >/dev/null || exit 91; stat -c %a /dev/shm/fakegpu-$(id -u).v5.ledger; '
                                 'ls -A /dev/shm')
        self.assertEqual(cp.returncode, 0, cp.stderr)
        mode, *listing = cp.stdout.split()
        self.assertEqual(mode, "600")
        self.assertEqual(len(listing), 1, cp.stdout)

    def assert_one_error(self, cp, *must_name):
        self.assertEqual(cp.returncode, 1, cp.stderr)
        lines = cp.stderr.splitlines()
        self.assertEqual(len(lines), 1, cp.stderr)
        self.assertTrue(lines[0].startswith("[FakeGPU] error: "), cp.stderr)
        for text in must_name:
            self.assertIn(text, lines[0])

    def test_default_ledger_that_others_may_read_is_refused(self):
        cp = self.in_private_shm('"$@" >/dev/null || exit 91; chmod 640 /dev/shm/fakegpu-$(id -u).v5.ledger; "$@"')
        self.assert_one_error(cp, "may be read or changed by other users (mode 0640)", "chmod 600 /dev/shm/fakegpu-")

    def test_default_ledger_of_another_user_is_refused(self):
        # Another user squatting this user's default path (made before this user's first run).
        cp = self.in_private_shm('"$@" >/dev/null || exit 91; chown 65534 /dev/shm/fakegpu-0.v5.ledger; "$@"',
                                 root_only=True)
        self.assert_one_error(cp, "/dev/shm/fakegpu-0.v5.ledger belongs to another user (uid 65534)",
                              "rm /dev/shm/fakegpu-0.v5.ledger")

    def test_explicit_ledger_everyone_may_change_is_refused(self):
        self.ok(self.box.probe("count"))
        os.chmod(self.box.ledger, 0o666)
        p = self.box.probe("count")
        self.assert_one_error(p, self.box.ledger, "may be changed by every user (mode 0666)", "chmod o-w")

    def test_ledger_on_a_full_filesystem_is_an_error_not_a_crash(self):
        # A file only sized (ftruncate) on a full tmpfs gets SIGBUS at its first touched page.
        cp = self.in_private_shm('mount -t tmpfs -o size=1m tmpfs /dev/shm || exit 90; FAKEGPU_LEDGER=/dev/shm/l "$@"')
        self.assert_one_error(cp, "cannot make the device ledger /dev/shm/l", "No space left on device",
                              "FAKEGPU_LEDGER")


class CorruptLedger(fgtest.TestCase):
    def ledger_size(self):
        other = self.box.path("reference")
        self.ok(self.box.probe("count", FAKEGPU_LEDGER=other))
        size = os.path.getsize(other)
        with open(other, "rb") as f:
            data = f.read()
        os.unlink(other)
        return size, data

    def assert_refused(self, must_name, write=None):
        if write is not None:
            with open(self.box.ledger, "wb") as f:
                f.write(write)
        for step in ("count", "nvml", "drvstub"):
            p = self.box.probe(step)
            self.assertEqual(p.returncode, 1, f"{step}: {p.describe()}")
            self.assertEqual(p.steps, [], p.describe())
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, p.describe())
            self.assertTrue(lines[0].startswith("[FakeGPU] error: "), p.describe())
            self.assertIn(self.box.ledger, lines[0])
            for text in must_name:
                self.assertIn(text, lines[0])
        if write is not None:
            with open(self.box.ledger, "rb") as f:
                self.assertEqual(f.read(), write, "the ledger file was modified")

    def test_wrong_size(self):
        size, _ = self.ledger_size()
        self.assert_refused([f"has size 100, expected {size}", f"rm {self.box.ledger}", "FAKEGPU_LEDGER"],
                            os.urandom(100))

    def test_empty_file(self):
        size, _ = self.ledger_size()
        self.assert_refused([f"has size 0, expected {size}", f"rm {self.box.ledger}"], b"")

    def test_garbage_of_the_right_size(self):
        size, _ = self.ledger_size()
        self.assert_refused(["corrupt", f"rm {self.box.ledger}", "FAKEGPU_LEDGER"], os.urandom(size))

    def test_zeros_of_the_right_size(self):
        size, _ = self.ledger_size()
        self.assert_refused(["corrupt", f"rm {self.box.ledger}"], bytes(size))

    def test_other_version(self):
        _, data = self.ledger_size()
        data = bytearray(data)
        data[8] ^= 0xFF  # Header.version
        self.assert_refused(["incompatible", f"rm {self.box.ledger}"], bytes(data))

    def test_device_entry_left_half_written_by_a_killed_process(self):
        # A process SIGKILLed while it adds a device to the ledger leaves that entry in state
        # 1 ("being filled"). The header promises that a kill at any instruction leaves no
        # lock held: a later process must not wait for that entry forever.
        self.ok(self.box.probe("count", FAKEGPU_DEVICES="t4"))
        with open(self.box.ledger, "r+b") as f:
            header = f.read(64)
            header_size = int.from_bytes(header[12:16], "little")      # Header.header_size
            entry_size = int.from_bytes(header[32:36], "little")       # Header.device_entry_size
            f.seek((header_size + 63) // 64 * 64 + entry_size)          # device entry 1
            f.write((1).to_bytes(4, "little"))                          # DeviceEntry.state = 1
        try:
            p = self.box.probe("count", FAKEGPU_DEVICES="l4", timeout=5)
        except subprocess.TimeoutExpired:
            self.fail("a process adding a device hangs on an entry a killed process left half written")
        self.assertIn(p.returncode, (0, 1), p.describe())
        if p.returncode == 1:
            self.assertIn(self.box.ledger, p.stderr)

    def test_directory(self):
        os.mkdir(self.box.ledger)
        self.assert_refused(["FAKEGPU_LEDGER"])

    def test_unwritable_location(self):
        self.box.ledger = self.box.path("no-such-dir", "ledger")
        self.assert_refused(["cannot create the device ledger", "FAKEGPU_LEDGER", "FAKEGPU_ISOLATED=1"])


if __name__ == "__main__":
    raise SystemExit(fgtest.main())
