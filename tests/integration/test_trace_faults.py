#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fakegpu-trace under churn and faults (root): a target that exits while the tracer attaches,
the tracer killed by any signal, exec from a thread, thousands of short-lived processes, CUDA
library copies the tracer has not seen, the backend replaced while monitoring, a ring buffer
that overflows, and bad option values. Every figure is compared with what the programs did;
a process the books miss must be counted in the health figures (processes_missed).

The programs traced are bin/workload ("pid N: M MiB on device D"), bin/trace_workload and
inline ctypes scripts, each test in its own sandbox. Readiness is a line a process prints or
a state of the tracer's file descriptors; every wait is bounded.

Needs root (BPF): as another user the whole file prints SKIPPED with the reason.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import fgtest
from fgtest import MiB

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_trace as tt  # noqa: E402  (the trace tests' helpers: Started, Lines, bpf_objects ...)

TIMEOUT = fgtest.TIMEOUT


def link_types(pid):
    """The BPF link types (fdinfo link_type) process pid holds, one entry per link."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                m = re.search(r"^link_type:\s*(\S+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            out.append(m.group(1))
    return out


def pids_printed(text):
    """The pids of bin/workload's "pid N: ..." lines."""
    return [int(m) for m in re.findall(r"^pid (\d+): ", text, re.M)]


class FaultCase(tt.TraceCase):
    def monitor(self, *options):
        mon = self.start([tt.tracer(), "monitor", *options, "-j", "-i", "3600"], stdin=subprocess.DEVNULL)
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        return mon

    def final_line(self, mon, sig=signal.SIGTERM):
        os.kill(mon.pid, sig)
        self.assertEqual(mon.wait(), 0, mon.describe())
        lines = [j for j in map(tt.json_line, mon.out.seen) if j is not None]
        self.assertTrue(lines, mon.describe())
        return lines[-1]

    def wait_gone(self, progs, links):
        """Waits (bounded) until the kernel has freed the programs and links; asserts it."""
        deadline = time.monotonic() + tt.PROMPT_EXIT_S
        while True:
            now_progs, now_links = tt.bpf_objects()
            if not (progs & set(now_progs) or links & now_links) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(progs & set(now_progs), set(), "programs left loaded")
        self.assertEqual(links & now_links, set(), "links left attached")

    def run_loop(self, n, args, env, parallel=2):
        """Runs `args` n times, `parallel` loops at once, from shells; returns the pids printed."""
        loop = 'i=0; n=$1; shift; while [ $i -lt "$n" ]; do "$@" || exit 1; i=$((i+1)); done'
        per = n // parallel
        procs = [subprocess.Popen(["sh", "-c", loop, "loop", str(per), *map(str, args)], env=env, cwd=self.box.dir,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(parallel)]
        pids = []
        for p in procs:
            out, err = p.communicate(timeout=600)
            self.assertEqual(p.returncode, 0, err)
            pids += pids_printed(out)
        self.assertEqual(len(pids), per * parallel)
        return pids

    def assert_each_booked_or_missed(self, processes, health, pids, mib=1):
        """Every pid is in the books exactly once, or listed missed; the count of misses is
        exact. A process booked from its start has exact books; one whose library was
        attached while it ran is marked since_attach."""
        by_pid = {}
        for q in processes:
            by_pid.setdefault(q["pid"], []).append(q)
        every = [m["pid"] for m in health["missed"]]  # monitor: other processes of the host too
        self.assertEqual(len(every), len(set(every)), health["missed"])
        if len(every) < 100:  # the list is not truncated: every miss is in it
            self.assertEqual(health["processes_missed"], len(every), "misses counted but not noted")
        missed = [pid for pid in every if pid in set(pids)]
        for pid in pids:
            with self.subTest(pid=pid):
                booked = by_pid.get(pid, [])
                self.assertEqual(len(booked) + (pid in missed), 1, f"pid {pid}: booked {booked}, missed {pid in missed}")
                if booked:
                    q = booked[0]
                    self.assertEqual(q["state"], "exited", q)
                    if not q["since_attach"]:
                        self.assertEqual((q["allocs"], q["frees"], q["peak_bytes"], q["leaked_bytes"],
                                          q["unmatched_frees"]), (1, 1, mib * MiB, 0, 0), q)
        return missed


# ---- the tracer killed by a signal -------------------------------------------------------------------
class Signals(FaultCase):
    SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE,
               signal.SIGUSR1)

    def held_workload(self, device, mib):
        w = self.start([fgtest.workload(), "alloc", device, mib, "hold"])
        ready = tt.pid_line(f"{mib} MiB on device {device}")
        w.out.until(ready, "the workload's line")
        return w, int(ready.match.group(1))

    def test_monitor_killed_by_any_signal_detaches_and_the_program_finishes(self):
        """For each signal: a workload allocates under the monitor and holds; the monitor is
        killed; its programs and links are gone, the probed entry point is the 5-byte NOP
        again, and the workload frees, exits 0, and an untraced run of it still works."""
        for sig in self.SIGNALS:
            with self.subTest(signal=sig.name):
                mon = self.monitor()
                w, pid = self.held_workload(2, 3)
                progs, links = tt.bpf_fds_of(mon.pid)
                self.assertTrue(progs and links)
                alone = not tt.other_collectors(progs)
                during = tt.entry_bytes(pid, "cudaMemcpy")
                os.kill(mon.pid, sig)
                rc = mon.wait()
                if sig in (signal.SIGTERM, signal.SIGINT):
                    self.assertEqual(rc, 0, mon.describe())  # a clean stop with its final line
                else:
                    self.assertEqual(rc, -sig, mon.describe())
                self.wait_gone(progs, links)
                if alone and not tt.other_collectors(progs):
                    self.assertNotEqual(during, tt.NOP5)
                    self.assertEqual(tt.entry_bytes(pid, "cudaMemcpy"), tt.NOP5)
                w.close_stdin()
                self.assertEqual(w.wait(), 0, w.describe())
                self.assertEqual(self.box.workload("alloc", 2, 3).returncode, 0)

    def test_run_killed_leaves_its_command_running(self):
        """run's command outlives its tracer, killed or stopped, and finishes normally: the
        shell around the workload prints the workload's status."""
        script = '"$0" alloc 1 2 hold; echo "workload status $?"'
        for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=sig.name):
                t = self.start([tt.tracer(), "run", "--", "sh", "-c", script, fgtest.workload()])
                t.out.until(tt.pid_line("2 MiB on device 1"), "the workload's line")
                progs, links = tt.bpf_fds_of(t.pid)
                os.kill(t.pid, sig)
                self.assertEqual(t.popen.wait(TIMEOUT), 0 if sig == signal.SIGTERM else -sig)
                self.wait_gone(progs, links)
                t.close_stdin()  # the workload's stdin too: it frees and exits
                t.out.until(lambda line: line.startswith("workload status"), "the workload's status")
                self.assertEqual(t.out.seen[-1], "workload status 0\n", t.describe())
                t.wait()


# ---- a target that exits while the tracer attaches ---------------------------------------------
class ExitDuringAttach(FaultCase):
    def attach_and_kill_target(self, stage):
        """attach -p PID; the tracer is stopped at `stage` (its scheduler tracepoints are
        attached, or it is ready), the target is killed and reaped, the tracer continued."""
        w = self.start([fgtest.workload(), "alloc", 0, 2, "hold"])
        ready = tt.pid_line("2 MiB on device 0")
        w.out.until(ready, "the workload's line")
        pid = int(ready.match.group(1))
        t = self.start([tt.tracer(), "attach", "-p", pid, "-j", "-i", "0.1"], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        if stage == "tracepoints":
            while sum(link_types(t.pid).count(k) for k in ("tracing", "raw_tracepoint")) < 3:
                self.assertLess(time.monotonic(), deadline, "the tracer attached no tracepoint")
        else:
            t.err.until(lambda line: "ready:" in line, "the ready line")
        os.kill(t.pid, signal.SIGSTOP)
        try:
            w.popen.kill()
            w.wait()
        finally:
            os.kill(t.pid, signal.SIGCONT)
        return t, pid

    def test_target_gone_before_the_probes_exits_12_naming_it(self):
        t, pid = self.attach_and_kill_target("tracepoints")
        rc = t.wait()
        self.assertEqual(rc, 12, t.describe())
        self.assertRegex(t.err.text(), rf"process {pid} (does not exist|exited before its probes were in place)")

    def test_target_gone_after_the_probes_is_shown_exited_with_its_exit_event(self):
        t, pid = self.attach_and_kill_target("ready")

        def exited(line):
            j = tt.json_line(line)
            return j is not None and any(p["pid"] == pid and p["state"] == "exited" for p in j["processes"])

        last = tt.json_line(t.out.until(exited, f"pid {pid} exited"))
        q = self.process(last, pid)
        self.assertEqual((q["comm"], q["live_bytes"], q["leaked_bytes"]), ("workload", 0, 2 * MiB))
        self.assertEqual(last["health"]["ledger"]["exits_without_event"], 0)
        os.kill(t.pid, signal.SIGINT)
        self.assertEqual(t.wait(), 0, t.describe())


# ---- exec from a thread: one process, not two -----------------------------------------------------
EXEC_FROM_THREAD = (
    "import ctypes, os, sys, threading\n"
    "rt = ctypes.CDLL(os.path.join(sys.argv[1], 'libcudart.so.13'))\n"
    "p = ctypes.c_void_p()\n"
    "assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(2 << 20)) == 0\n"
    "assert rt.cudaFree(p) == 0\n"
    "print(f'pid {os.getpid()}: exec from a thread', flush=True)\n"
    "t = threading.Thread(target=lambda: os.execv(sys.argv[2], sys.argv[2:]))\n"
    "t.start(); t.join()\n")
# Before the exec: 2 MiB on device 0, freed; after it, workload leaks 6 MiB on device 3.
EXEC_DEVICES = [tt.dev(0, 2 * MiB, 1, 1), tt.dev(3, 6 * MiB, 1, 0, leaked=6 * MiB, leaked_allocs=1)]


class ExecFromThread(FaultCase):
    """exec from a thread other than the leader kills the leader first (the kernel's
    de_thread): the process goes on under the same PID in the new image."""

    def cmd(self):
        return [fgtest.PYTHON, "-c", EXEC_FROM_THREAD, fgtest.libdir(), fgtest.workload(), "leak", 3, 6]

    def test_run_books_both_images_as_one_process(self):
        rc, s, p = self.trace_run(cmd=self.cmd())
        self.assertEqual(rc, 0, p.describe())
        self.assertEqual(len(set(pids_printed(p.stdout))), 1, p.stdout)
        pid = pids_printed(p.stdout)[0]
        self.assertEqual([q["pid"] for q in s["processes"]], [pid], json.dumps(s["processes"], indent=1))
        q = s["processes"][0]
        self.assertEqual((q["comm"], q["state"], q["exit_event_seen"]), ("workload", "exited", True))
        self.assert_books(q, EXEC_DEVICES)

    def test_monitor_counts_one_process(self):
        mon = self.monitor()
        w = self.box.run([str(a) for a in self.cmd()], env=self.env())
        self.assertEqual(w.returncode, 0, w.describe())
        pid = pids_printed(w.stdout)[0]
        last = self.final_line(mon)
        mine = [q for q in last["processes"] if q["pid"] == pid]
        self.assertEqual(len(mine), 1, json.dumps(mine, indent=1))
        q = mine[0]
        self.assertEqual((q["comm"], q["state"], q["since_attach"]), ("workload", "exited", False))
        self.assertEqual(ForkedDevices.of(q), EXEC_DEVICES)


class ForkedDevices:
    @staticmethod
    def of(q):
        return tt.ForkedChildren.devices(q)


# ---- thousands of short-lived processes ----------------------------------------------------------
class ShortLived(FaultCase):
    N = 1000

    def test_thousands_of_short_lived_processes_are_all_booked_by_monitor(self):
        mon = self.monitor()
        pids = self.run_loop(self.N, [fgtest.workload(), "alloc", 0, 1], self.env())
        last = self.final_line(mon)
        mine = [q for q in last["processes"] if q["pid"] in set(pids)]
        missed = self.assert_each_booked_or_missed(mine, last["health"], pids)
        self.assertEqual(missed, [])  # the backend the monitor attached at start: nobody missed
        self.assertFalse(any(q["since_attach"] for q in mine))
        self.assertEqual((last["health"]["rb_drops"], last["health"]["ledger"]["exits_without_event"]), (0, 0))

    def test_run_books_every_descendant(self):
        loop = 'i=0; while [ $i -lt 300 ]; do "$0" alloc 0 1 || exit 1; i=$((i+1)); done'
        rc, s, p = self.trace_run(cmd=["sh", "-c", loop, fgtest.workload()], timeout=300)
        self.assertEqual(rc, 0, p.describe())
        pids = pids_printed(p.stdout)
        self.assertEqual(len(pids), 300)
        self.assert_each_booked_or_missed([q for q in s["processes"] if q["comm"] == "workload"], s["drops"], pids)
        self.assertEqual(s["drops"]["processes_missed"], 0)


# ---- copies the tracer has not seen; the backend replaced while monitoring ------------------------
class Copies(FaultCase):
    N = 200

    def copy_dir(self, name):
        d = self.box.path(name)
        os.mkdir(d)
        shutil.copy2(tt.backend_lib(), os.path.join(d, "libfake_gpu.so"))
        return d

    def test_processes_using_an_unseen_copy_are_booked_or_counted_missed(self):
        """Short-lived processes load a copy of the backend the monitor has never seen: each is
        booked or counted missed, exactly once; the copy is traced from then on."""
        copy = self.copy_dir("copy")
        mon = self.monitor()
        pids = self.run_loop(self.N, [fgtest.workload(), "alloc", 0, 1], self.env(LD_LIBRARY_PATH=copy))
        last = self.final_line(mon)
        missed = self.assert_each_booked_or_missed([q for q in last["processes"] if q["pid"] in set(pids)],
                                                   last["health"], pids)
        self.assertIn(os.path.join(copy, "libfake_gpu.so"), [lib["path"] for lib in last["libraries"]])
        self.assertLess(len(missed), self.N // 4, "the copy was not traced soon after its first use")
        if missed:
            self.assertTrue(last["health"]["events_lost"])
        for m in last["health"]["missed"]:
            if m["pid"] in missed:
                self.assertEqual((m["comm"], m["library"]), ("workload", os.path.join(copy, "libfake_gpu.so")))

    def test_run_counts_a_command_using_an_unseen_copy(self):
        """The command loads a copy: it is booked (since attach, if the copy was attached while
        it ran) or counted missed, and a miss makes the verdict untrustworthy."""
        copy = self.copy_dir("copy")
        rc, s, p = self.trace_run("--fail-on-leak", cmd=[fgtest.workload(), "alloc", 0, 1],
                                  env=self.env(LD_LIBRARY_PATH=copy))
        pid = pids_printed(p.stdout)[0]
        missed = self.assert_each_booked_or_missed(s["processes"], s["drops"], [pid])
        # A miss makes the verdict untrustworthy (status 5); a booked run passes.
        self.assertEqual(rc, 5 if missed else 0, p.describe())

    def test_backend_replaced_while_monitoring(self):
        """The monitor traces a backend by its path (--lib); the file is replaced by a new one
        (mv: a new inode), then rewritten in place (cp: the same inode). The processes of each
        phase are booked or counted missed, exactly once, and the new file gets traced."""
        lib = self.copy_dir("lib")
        path = os.path.join(lib, "libfake_gpu.so")
        mon = self.monitor("--lib", path)
        env = self.env(LD_LIBRARY_PATH=lib)
        pids = self.run_loop(20, [fgtest.workload(), "alloc", 0, 1], env)
        staged = self.copy_dir("staged")
        os.rename(os.path.join(staged, "libfake_gpu.so"), path)
        pids += self.run_loop(100, [fgtest.workload(), "alloc", 0, 1], env)
        shutil.copyfile(tt.backend_lib(), path)
        pids += self.run_loop(20, [fgtest.workload(), "alloc", 0, 1], env)
        last = self.final_line(mon)
        missed = self.assert_each_booked_or_missed([q for q in last["processes"] if q["pid"] in set(pids)],
                                                   last["health"], pids)
        self.assertEqual([m for m in missed if m in pids[:20] + pids[-20:]], [], "the traced file's users missed")
        self.assertEqual([os.path.realpath(x["path"]) for x in last["libraries"]].count(path), 2, last["libraries"])

    def test_backend_rewritten_in_place_with_another_build(self):
        """The traced file is rewritten in place (cp: the same inode) with another build whose
        functions sit 64 KiB further on: the monitor notices at its next refresh, says so, and
        places its probes again from the new file, so the new build's users are booked
        exactly (probes left at the old offsets would hit other instructions)."""
        lib = self.copy_dir("lib")
        path = os.path.join(lib, "libfake_gpu.so")
        inode = os.stat(path).st_ino
        mon = self.start([tt.tracer(), "monitor", "--lib", path, "-j", "-i", "0.2"], stdin=subprocess.DEVNULL)
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        env = self.env(LD_LIBRARY_PATH=lib)
        before = self.run_loop(4, [fgtest.workload(), "alloc", 0, 1], env)
        shutil.copyfile(fgtest.build_path("bin", "libfake_gpu_shifted.so"), path)
        self.assertEqual(os.stat(path).st_ino, inode)
        mon.err.until(lambda line: f"{path} was rewritten in place" in line, "the monitor's notice of the rewrite")
        after = self.run_loop(4, [fgtest.workload(), "alloc", 0, 1], env)
        last = self.final_line(mon)
        procs = [q for q in last["processes"] if q["pid"] in set(before + after)]
        missed = self.assert_each_booked_or_missed(procs, last["health"], before + after)
        self.assertEqual(missed, [])
        self.assertEqual(sorted(q["pid"] for q in procs), sorted(before + after))


# ---- a ring buffer that overflows: drops counted exactly ------------------------------------------
class Overflow(FaultCase):
    PAIRS, KIB = 20000, 64

    def test_records_read_plus_drops_equal_the_records_of_a_run_without_loss(self):
        stalled = 'kill -STOP $PPID; "$0" churn "$1" "$2"; s=$?; kill -CONT $PPID; exit $s'
        cmd = ["sh", "-c", stalled, tt.trace_workload(), self.PAIRS, self.KIB]
        rc, small, p = self.trace_run("--ringbuf-size", "4096", cmd=cmd)
        self.assertEqual(rc, 0, p.describe())
        rc, big, p2 = self.trace_run("--ringbuf-size", "64MiB", cmd=cmd)
        self.assertEqual(rc, 0, p2.describe())
        self.assertEqual(big["drops"]["rb_drops"], 0)
        self.assertGreater(small["drops"]["rb_drops"], 0)
        # Every record was either read (decoded by the ledger) or counted as dropped.
        self.assertEqual(small["drops"]["ledger"]["events"], small["drops"]["events"])
        self.assertEqual(small["drops"]["events"] + small["drops"]["rb_drops"], big["drops"]["events"])
        self.assertEqual(big["drops"]["ledger"]["events"], big["drops"]["events"])
        kb = lambda s: [q["kernel_books"] for q in s["processes"] if q["comm"] == "trace_workload"]  # noqa: E731
        self.assertEqual(kb(small), kb(big))


# ---- bad option values --------------------------------------------------------------------------
class BadOptions(FaultCase):
    def test_bad_values_are_refused_with_the_usage_status_naming_the_option(self):
        cases = [
            (["run", "--ringbuf-size", "0", "--", "true"], "--ringbuf-size"),
            (["run", "--ringbuf-size", "-1", "--", "true"], "--ringbuf-size"),
            (["run", "--ringbuf-size", "1e99", "--", "true"], "--ringbuf-size"),
            (["run", "--ringbuf-size", "4GiB", "--", "true"], "--ringbuf-size"),
            (["monitor", "--max-allocs", "0"], "--max-allocs"),
            (["monitor", "--latency-every", "0"], "--latency-every"),
            (["monitor", "-i", "nan"], "--interval"),
            (["monitor", "-i", "-inf"], "--interval"),
            (["monitor", "-d", "0"], "--duration"),
            (["monitor", "--oom-threshold", "nan"], "--oom-threshold"),
            (["monitor", "--oom-window", "inf"], "--oom-window"),
            (["monitor", "--leak-age", "-1"], "--leak-age"),
            (["monitor", "--history", "nan"], "--history"),
            (["run", "--stacks", "--max-stacks", "0", "--", "true"], "--max-stacks"),
            (["attach", "-p", "0"], "-p"),
            (["attach", "-p", "99999999999"], "-p"),
        ]
        for args, option in cases:
            with self.subTest(args=args):
                p = self.box.run([tt.tracer(), *args], env=self.env(), cwd="/")
                self.assertEqual(p.returncode, 2, p.describe())
                self.assertIn(option, p.stderr, p.describe())


def main():
    if os.geteuid() != 0:
        print("SKIPPED: fakegpu-trace loads BPF programs and needs root (run the suite with sudo); "
              f"running as uid {os.geteuid()}", flush=True)
        return 0
    missing = [t for t in ("bpftool", "nm") if not shutil.which(t)]
    if missing:
        print(f"test_trace_faults.py needs {', '.join(missing)} (scripts/deps.sh installs them)", flush=True)
        return 1
    return fgtest.main()


if __name__ == "__main__":
    raise SystemExit(main())
