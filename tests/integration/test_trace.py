#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fakegpu-trace end to end (root): run, attach and monitor on real processes of the fake
backend, with exact figures compared with what the programs did, with the backend's own exit
report and with NVML; exit codes, error messages, signals, detaching.

The programs traced are bin/trace_workload (tests/workloads/trace_workload.cpp: each mode's
figures are in its comment), bin/workload and inline ctypes scripts. Every test has its own
sandbox (fgtest.Sandbox: temporary directory, FAKEGPU_LEDGER). Readiness is a line a process
prints ("pid N: ...", the collector's first JSON line); every wait is bounded.

Needs root (BPF): as another user the whole file prints SKIPPED with the reason.
"""

import decimal
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.request

import fgtest
from fgtest import MiB

KiB = 1 << 10
TIMEOUT = fgtest.TIMEOUT  # a hang guard, never a readiness check
PROMPT_EXIT_S = 5          # SIGTERM/SIGINT to exit: "promptly"
NOP5 = bytes.fromhex("0f1f440000")


def tracer():
    return fgtest.build_path("bin", "fakegpu-trace")


def trace_workload():
    return fgtest.build_path("bin", "trace_workload")


def trace_libs():
    return fgtest.build_path("bin", "trace_libs")


def backend_lib():
    return os.path.realpath(fgtest.build_path("libfake_gpu.so"))


def dev(device, peak, allocs, frees, leaked=0, leaked_allocs=0, live=0, failed=0):
    """One processes[].devices[] entry of the summary, every key."""
    return {"device": device, "live_bytes": live, "peak_bytes": peak, "allocs": allocs, "frees": frees,
            "failed_calls": failed, "leaked_bytes": leaked, "leaked_allocs": leaked_allocs}


# trace_workload mixed: device 1 cudaMalloc 3 MiB + cudaMallocManaged 2 MiB (leaked), host
# cudaMallocHost 1 MiB, device 5 cuMemAlloc_v2 5 MiB in a cuCtxCreate_v2 context.
MIXED_DEVICES = [dev(-1, 1 * MiB, 1, 1), dev(1, 5 * MiB, 2, 1, leaked=2 * MiB, leaked_allocs=1),
                 dev(5, 5 * MiB, 1, 1)]
MIXED_HEAD = {"peak_bytes": 10 * MiB, "live_bytes": 0, "leaked_bytes": 2 * MiB, "leaked_allocs": 1, "allocs": 4,
              "frees": 3, "failed_calls": 0, "implicit_frees": 0, "unmatched_frees": 0}
# trace_workload threads: devices 0, 4, 7, 4; thread i (i+1) MiB, odd threads 1 MiB more (leaked).
THREADS_DEVICES = [dev(0, 1 * MiB, 1, 1), dev(4, 8 * MiB, 4, 2, leaked=2 * MiB, leaked_allocs=2),
                   dev(7, 3 * MiB, 1, 1)]
# trace_workload ctx: cuCtxCreate_v4 on device 6, 4 MiB + 2 MiB, free the 2, destroy the context.
CTX_DEVICES = [dev(6, 6 * MiB, 2, 1)]
# trace_workload async: device 2 cudaMallocAsync 3 + 1 MiB, both freed; VMM device 3: 4 + 2 MiB, released.
ASYNC_DEVICES = [dev(2, 4 * MiB, 2, 2), dev(3, 6 * MiB, 2, 2)]
# trace_workload all: mixed, ctx, async, threads in one process (the managed 2 MiB stays live
# throughout; the highest moment is the threads' barrier: 2 + 12 MiB).
ALL_DEVICES = sorted(MIXED_DEVICES + CTX_DEVICES + ASYNC_DEVICES + THREADS_DEVICES, key=lambda d: d["device"])
ALL_HEAD = {"peak_bytes": 14 * MiB, "live_bytes": 0, "leaked_bytes": 4 * MiB, "leaked_allocs": 3, "allocs": 16,
            "frees": 12, "failed_calls": 0, "implicit_frees": 1, "unmatched_frees": 0}

HEAD_KEYS = list(MIXED_HEAD)


def head(p):
    return {k: p[k] for k in HEAD_KEYS}


class Lines:
    """The lines of a pipe, read by a thread, so that every wait can be bounded."""

    def __init__(self, pipe):
        self.seen = []
        self._q = queue.Queue()
        self._eof = False
        threading.Thread(target=self._pump, args=(pipe,), daemon=True).start()

    def _pump(self, pipe):
        for line in iter(pipe.readline, ""):
            self._q.put(line)
        self._q.put(None)

    def next(self, deadline):
        """The next line; None at end of file; AssertionError past the deadline."""
        if self._eof:
            return None
        left = deadline - time.monotonic()
        try:
            line = self._q.get(timeout=max(left, 0.001))
        except queue.Empty:
            raise AssertionError("no line before the deadline; lines so far:\n" + "".join(self.seen)) from None
        if line is None:
            self._eof = True
            return None
        self.seen.append(line)
        return line

    def until(self, pred, what, timeout=TIMEOUT):
        """Reads lines up to the first for which pred(line) is true and returns it."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(deadline)
            if line is None:
                raise AssertionError(f"end of output before {what}; lines:\n" + "".join(self.seen))
            if pred(line):
                return line

    def rest(self, timeout=TIMEOUT):
        """Everything up to end of file."""
        deadline = time.monotonic() + timeout
        while self.next(deadline) is not None:
            pass
        return "".join(self.seen)

    def text(self):
        return "".join(self.seen)


class Started:
    """A process started with its stdout and stderr read line by line."""

    def __init__(self, box, args, env, stdin=subprocess.PIPE, cwd=None):
        self.args = args
        self.popen = subprocess.Popen(args, env=env, cwd=cwd or box.dir, stdin=stdin, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
        box._live.append(self.popen)
        self.pid = self.popen.pid
        self.out = Lines(self.popen.stdout)
        self.err = Lines(self.popen.stderr)

    def close_stdin(self):
        self.popen.stdin.close()

    def wait(self, timeout=TIMEOUT):
        try:
            rc = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.args!r} still running after {timeout} s") from None
        self.out.rest(TIMEOUT)
        self.err.rest(TIMEOUT)
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe and not pipe.closed:
                pipe.close()
        return rc

    def describe(self):
        return f"{self.args!r}\n--- stdout\n{self.out.text()}--- stderr\n{self.err.text()}"


class Finished:
    """A finished process: status and output (fgtest.Proc would take the summary's "{" for a
    probe's step line)."""

    def __init__(self, args, cp):
        self.args, self.returncode, self.stdout, self.stderr = args, cp.returncode, cp.stdout, cp.stderr

    def describe(self):
        return f"{self.args!r}: status {self.returncode}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


def pid_line(prefix_re):
    """A predicate for a workload's "pid N: ..." line; the match is kept in .match."""
    rx = re.compile(r"^pid (\d+): " + prefix_re)

    def pred(line):
        pred.match = rx.match(line)
        return pred.match is not None

    return pred


def stopped(pid):
    """Whether process pid is stopped (SIGSTOP): its main thread's state."""
    with open(f"/proc/{pid}/status") as f:
        return re.search(r"^State:\s+T", f.read(), re.M) is not None


def json_line(line):
    return json.loads(line) if line.startswith("{") else None


# The names of fakegpu.bpf.c's programs (the kernel keeps 15 characters; bpftool shows the
# whole name where the program has BTF).
FAKEGPU_PROGRAMS = {"usdt_alloc", "usdt_free", "usdt_implicit_free", "usdt_implicit_f", "usdt_ctx_switch",
                    "usdt_launch", "usdt_kernel_done", "usdt_kernel_don", "api_enter", "api_exit", "proc_exit",
                    "proc_fork", "proc_exec"}


def bpf_objects():
    """Programs (id -> name) and link ids loaded in the kernel now (bpftool)."""
    def show(what):
        out = subprocess.run(["bpftool", "-j", what, "show"], capture_output=True, text=True, timeout=TIMEOUT,
                             check=True).stdout
        return json.loads(out or "[]")

    return {p["id"]: p.get("name", "") for p in show("prog")}, {link["id"] for link in show("link")}


def other_collectors(mine):
    """Program ids of fakegpu collectors other than the one holding `mine`."""
    return {i for i, name in bpf_objects()[0].items() if name in FAKEGPU_PROGRAMS and i not in mine}


def bpf_fds_of(pid):
    """The BPF program and link ids a process holds file descriptors of (from fdinfo)."""
    progs, links = set(), set()
    fd_dir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fd_dir):
        try:
            with open(os.path.join(fd_dir, fd)) as f:
                info = f.read()
        except OSError:
            continue
        for key, into in (("prog_id", progs), ("link_id", links)):
            m = re.search(rf"^{key}:\s*(\d+)$", info, re.M)
            if m:
                into.add(int(m.group(1)))
    return progs, links


def map_ids_of(pid):
    """The BPF map ids a process holds file descriptors of (from fdinfo)."""
    maps = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                m = re.search(r"^map_id:\s*(\d+)$", f.read(), re.M)
        except OSError:
            continue
        if m:
            maps.add(int(m.group(1)))
    return maps


def entry_bytes(pid, symbol):
    """The first 5 bytes of an exported function of the backend, as mapped in process pid."""
    nm = subprocess.run(["nm", "-D", "--defined-only", backend_lib()], capture_output=True, text=True,
                        timeout=TIMEOUT, check=True).stdout
    vaddr = next(int(f[0], 16) for f in (line.split() for line in nm.splitlines())
                 if len(f) == 3 and f[2].split("@")[0] == symbol)
    base = None
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            f = line.split()
            if len(f) >= 6 and os.path.realpath(f[5]) == backend_lib() and int(f[2], 16) == 0:
                base = int(f[0].split("-")[0], 16)
                break
    assert base is not None, f"pid {pid} does not map {backend_lib()}"
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(base + vaddr)
        return mem.read(5)


class TraceCase(fgtest.TestCase):
    maxDiff = None

    def setUp(self):
        super().setUp()
        for path, hint in ((tracer(), "the fakegpu-trace target"),
                           (trace_workload(), "tests/workloads/trace.cmake (target fakegpu_trace_workload)")):
            self.assertTrue(os.access(path, os.X_OK), f"{path} is not built: build {hint}")

    def env(self, **overrides):
        """The sandbox's environment, without sudo's variables: `run` would otherwise start the
        command as the user who invoked sudo, who cannot use this root-owned sandbox."""
        env = self.box.env(**overrides)
        for k in ("SUDO_UID", "SUDO_GID", "SUDO_USER", "SUDO_COMMAND"):
            env.pop(k, None)
        return env

    def trace_run(self, *options, cmd, env=None, timeout=TIMEOUT):
        """fakegpu-trace run OPTIONS --summary FILE -- CMD; returns (status, summary, Proc)."""
        summary = self.box.path("summary-%d.json" % len(os.listdir(self.box.dir)))
        args = [tracer(), "run", *options, "--summary", summary, "--", *map(str, cmd)]
        cp = subprocess.run(args, env=env or self.env(), cwd=self.box.dir, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=timeout)
        p = Finished(args, cp)
        s = None
        if os.path.exists(summary):
            with open(summary) as f:
                s = json.load(f)
            # The same document on stdout, after whatever the command printed there.
            start = 0 if p.stdout.startswith("{\n") else p.stdout.find("\n{\n") + 1
            self.assertEqual(json.loads(p.stdout[start:]), s, p.describe())
        return p.returncode, s, p

    def start(self, args, env=None, **kw):
        return Started(self.box, [str(a) for a in args], env or self.env(), **kw)

    def poll_until(self, what, fn, timeout=TIMEOUT):
        """Polls fn() (bounded) until it returns something true; returns it."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = fn()
            if last:
                return last
            time.sleep(0.1)
        self.fail(f"{what}: not reached in {timeout} s; last: {last!r}")

    def start_serving_monitor(self, interval="0.2", token=None):
        """`monitor -q -i INTERVAL --listen 127.0.0.1:0` (with TOKEN in a 0600 token file);
        returns (the monitor, "host:port" it serves on) once it is ready."""
        args = [tracer(), "monitor", "-q", "-i", interval, "--listen", "127.0.0.1:0"]
        if token:
            path = self.box.path("token")
            with open(path, "w") as f:
                f.write(token + "\n")
            os.chmod(path, 0o600)
            args += ["--auth-token-file", path]
        mon = self.start(args)
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        served = [m for m in (re.search(r"serving http://(\S+?)/ ", line) for line in mon.err.seen) if m]
        self.assertEqual(len(served), 1, mon.describe())
        return mon, served[0].group(1)

    def process(self, summary, pid, where=""):
        found = [p for p in summary["processes"] if p["pid"] == pid]
        self.assertEqual(len(found), 1, f"pid {pid} in {where or 'the summary'}:\n{json.dumps(summary, indent=1)}")
        return found[0]

    def library_modes(self, summary):
        return {os.path.realpath(lib["path"]): lib["mode"] for lib in summary["libraries"]}

    def assert_books(self, p, devices, head_expected=None, msg=""):
        self.assertEqual(p["devices"], devices, msg)
        if head_expected is not None:
            self.assertEqual(head(p), head_expected, msg)


# ---- 1. run: exact figures, the backend's report, NVML, exit codes -------------------------------
class RunSummary(TraceCase):
    def test_mixed_apis_exact_and_equal_to_backend_report_and_nvml(self):
        report = self.box.path("report-%p.json")
        summary_path = self.box.path("summary.json")
        t = self.start([tracer(), "run", "--fail-on-leak", "--summary", summary_path, "--", trace_workload(), "mixed",
                        "hold"], env=self.env(FAKEGPU_REPORT=report))
        hold = pid_line("holding")
        t.out.until(hold, "the workload's holding line")
        pid = int(hold.match.group(1))

        # NVML from another process while the workload holds its peak.
        nv = self.ok(self.box.probe("nvmlprocs:1", "nvmlprocs:5", "nvml"))
        nvml_procs = {d: self.step(nv, i, "nvmlprocs")["procs"] for i, d in enumerate((1, 5))}
        nvml_used = [d["used"] for d in self.step(nv, 2, "nvml")["devices"]]

        t.close_stdin()
        rc = t.wait()
        self.assertEqual(rc, 4, t.describe())  # --fail-on-leak: the managed 2 MiB
        with open(summary_path) as f:
            s = json.load(f)
        self.assertEqual(s["schema"], "fakegpu-trace/summary/v1")
        self.assertEqual(s["command_exit_status"], 0)
        self.assertEqual({k: s["verdict"][k] for k in ("status", "exit_code", "trustworthy", "fail_on_leak")},
                         {"status": "leaked", "exit_code": 4, "trustworthy": True, "fail_on_leak": True})
        self.assertEqual(s["verdict"]["reasons"],
                         [f"pid {pid} (trace_workload) leaked 2.0 MiB (2097152 bytes) in 1 allocation on device 1"])
        self.assertEqual([p["pid"] for p in s["processes"]], [pid])
        p = self.process(s, pid)
        self.assertEqual({k: p[k] for k in ("ppid", "comm", "state", "since_attach", "baseline_known",
                                            "exit_event_seen")},
                         {"ppid": t.pid, "comm": "trace_workload", "state": "exited", "since_attach": False,
                          "baseline_known": False, "exit_event_seen": True})
        self.assert_books(p, MIXED_DEVICES, MIXED_HEAD)
        self.assertEqual({k: s["total"][k] for k in ("peak_bytes", "leaked_bytes", "leaked_allocs")},
                         {"peak_bytes": 10 * MiB, "leaked_bytes": 2 * MiB, "leaked_allocs": 1})
        self.assertEqual(s["total"]["devices"],
                         [{k: v for k, v in d.items() if k != "live_bytes"} | {"processes": 1} for d in MIXED_DEVICES])
        self.assertFalse(s["drops"]["events_lost"])
        self.assertEqual((s["drops"]["rb_drops"], s["drops"]["missing_entry"], s["drops"]["ledger"]["unmatched_frees"]),
                         (0, 0, 0))

        # The backend's own exit report says the same.
        with open(report.replace("%p", str(pid))) as f:
            r = json.load(f)
        gpu = [d for d in p["devices"] if d["device"] >= 0]
        self.assertEqual({d["index"]: d["used_memory_peak"] for d in r["devices"] if d["used_memory_peak"]},
                         {d["device"]: d["peak_bytes"] for d in gpu})
        self.assertEqual((r["leaks"]["count"], r["leaks"]["bytes"]), (p["leaked_allocs"], p["leaked_bytes"]))
        self.assertEqual(sorted((a["device"], a["size"]) for a in r["leaks"]["allocations"]),
                         [(d["device"], d["leaked_bytes"]) for d in p["devices"] if d["leaked_bytes"]])
        calls = r["calls"]
        self.assertEqual(sum(calls.get(f, 0) for f in ("cudaMalloc", "cudaMallocManaged", "cudaMallocHost",
                                                       "cuMemAlloc_v2")), p["allocs"])
        self.assertEqual(sum(calls.get(f, 0) for f in ("cudaFree", "cudaFreeHost", "cuMemFree_v2")), p["frees"])

        # And NVML, while it held its peak: its process entries and each device's used memory.
        for d in gpu:
            self.assertEqual(nvml_procs[d["device"]], [{"pid": pid, "used": d["peak_bytes"]}], f"device {d['device']}")
            self.assertEqual(nvml_used[d["device"]], d["peak_bytes"], f"device {d['device']}")

    def test_max_peak_below_the_peak_exits_3(self):
        # Devices 1 and 5 both peak at 5 MiB: one byte less is over.
        rc, s, p = self.trace_run("--max-peak", str(5 * MiB - 1), cmd=[trace_workload(), "mixed"])
        self.assertEqual(rc, 3, p.describe())
        self.assertEqual((s["verdict"]["status"], s["verdict"]["exit_code"], s["verdict"]["max_peak_bytes"]),
                         ("peak_exceeded", 3, 5 * MiB - 1))
        self.assertEqual(s["verdict"]["reasons"], [
            f"device {d} peaked at 5.0 MiB (5242880 bytes), over --max-peak 5.0 MiB (5242879 bytes)" for d in (1, 5)])

    def test_max_peak_at_the_peak_passes_the_commands_status_through(self):
        # Not over (equal), no --fail-on-leak: the command's own status, 7.
        rc, s, p = self.trace_run("--max-peak", "5MiB", cmd=[trace_workload(), "mixed", 7])
        self.assertEqual(rc, 7, p.describe())
        self.assertEqual((s["command_exit_status"], s["verdict"]["status"], s["verdict"]["exit_code"]), (7, "ok", 7))
        self.assert_books(self.process(s, s["processes"][0]["pid"]), MIXED_DEVICES, MIXED_HEAD)

    def test_status_of_a_command_without_gpu_use(self):
        rc, s, p = self.trace_run(cmd=["false"])
        self.assertEqual(rc, 1, p.describe())
        self.assertEqual((s["command_exit_status"], s["verdict"]["status"], s["total"]["peak_bytes"]), (1, "ok", 0))

    def test_command_not_found_exits_127(self):
        missing = self.box.path("no-such-command")
        p = self.box.run([tracer(), "run", "--", missing, "x"], env=self.env())
        self.assertEqual(p.returncode, 127, p.describe())
        self.assertIn(missing, p.stderr)
        self.assertIn("No such file or directory", p.stderr)
        self.assertEqual(p.stdout, "")


# ---- 2. USDT and entry/return probes ---------------------------------------------------------------
class BothWays(TraceCase):
    def test_usdt_and_uprobes_only_give_the_same_figures(self):
        books = {}
        for mode, options in (("usdt", []), ("uprobe", ["--uprobes-only"])):
            rc, s, p = self.trace_run(*options, cmd=[trace_workload(), "all"])
            self.assertEqual(rc, 0, p.describe())
            self.assertEqual(self.library_modes(s).get(backend_lib()), mode, s["libraries"])
            self.assertEqual(len(s["processes"]), 1, p.describe())
            self.assertFalse(s["drops"]["events_lost"], s["drops"])
            books[mode] = s["processes"][0]
        for mode, p in books.items():
            with self.subTest(mode=mode):
                self.assert_books(p, ALL_DEVICES, ALL_HEAD, mode)
        self.assertEqual({k: books["uprobe"][k] for k in HEAD_KEYS + ["devices"]},
                         {k: books["usdt"][k] for k in HEAD_KEYS + ["devices"]})


    def test_out_parameters_in_a_huge_page_are_read_exactly(self):
        # The return programs read out-parameters (the pointer cudaMalloc wrote) with
        # bpf_probe_read_user; here the out-parameter lies in a transparent huge page (a 2 MiB
        # page-table entry). Every pair is booked and every free matched.
        pairs = 100
        t = self.start([tracer(), "monitor", "--uprobes-only", "-j", "-i", "3600"], stdin=subprocess.DEVNULL)
        t.err.until(lambda line: "ready:" in line, "the ready line")
        w = self.box.run([trace_workload(), "huge", str(pairs)], env=self.env())
        self.assertEqual(w.returncode, 0, w.describe())
        if "huge page: no" in w.stdout:
            print(f"note: no transparent huge page here ({w.stdout.strip()}); small pages only", flush=True)
        t.popen.send_signal(signal.SIGINT)
        self.assertEqual(t.wait(), 0, t.describe())
        pid = int(re.search(r"pid (\d+): huge done", w.stdout).group(1))
        q = self.process(json_line(t.out.seen[-1]), pid)
        self.assertEqual((q["allocs"], q["frees"], q["unmatched_frees"], q["leaked_bytes"]), (pairs, pairs, 0, 0), q)

    def test_records_travel_through_a_bpf_ring_buffer_of_the_size_asked_for(self):
        # One BPF_MAP_TYPE_RINGBUF (`events`) of --ringbuf-size bytes carries the records;
        # nothing else of the collector's is a ring.
        t = self.start([tracer(), "monitor", "-q", "-i", "3600", "--ringbuf-size", "256KiB"], stdin=subprocess.DEVNULL)
        t.err.until(lambda line: "ready:" in line, "the ready line")
        maps = [json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(i)], capture_output=True,
                                          text=True, timeout=TIMEOUT, check=True).stdout) for i in map_ids_of(t.pid)]
        t.popen.send_signal(signal.SIGINT)
        self.assertEqual(t.wait(), 0, t.describe())
        rings = [(m["name"], m["type"], m["max_entries"]) for m in maps if m["type"] == "ringbuf"]
        self.assertEqual(rings, [("events", "ringbuf", 256 * KiB)], maps)
        self.assertFalse({"ring", "ring_pos", "doorbell"} & {m["name"] for m in maps}, maps)

    def test_primary_context_release_frees_both_ways(self):
        # trace_workload primary: 4 MiB in device 3's primary context, then its last release.
        for mode, options in (("usdt", []), ("uprobe", ["--uprobes-only"])):
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run(*options, cmd=[trace_workload(), "primary"])
                self.assertEqual(rc, 0, p.describe())
                self.assertEqual(self.library_modes(s).get(backend_lib()), mode, s["libraries"])
                q = s["processes"][0]
                self.assertEqual(q["devices"], [dev(3, 4 * MiB, 1, 0)], mode)
                self.assertEqual((q["implicit_frees"], q["leaked_bytes"]), (1, 0), mode)

    def test_entry_return_latency_is_sampled_and_counts_stay_exact(self):
        # churn 20000: cudaMalloc 20002 times, cudaFree 20001 times. By default a random 1 in 8
        # calls is timed (binomial: 2500 +- 47 of 20002); --latency-every 1 times every call.
        pairs = 20000
        want = {"cudaMalloc": pairs + 2, "cudaFree": pairs + 1}
        for every, options in ((8, []), (1, ["--latency-every", "1"])):
            with self.subTest(latency_every=every):
                rc, s, p = self.trace_run("--uprobes-only", *options, cmd=[trace_workload(), "churn", pairs, 4])
                self.assertEqual(rc, 0, p.describe())
                calls = {c["func"]: c for c in s["processes"][0]["calls"]}
                self.assertEqual({f: calls[f]["calls"] for f in want}, want)
                for f, n in want.items():
                    c = calls[f]
                    self.assertEqual(sum(c["log2_hist_ns"].values()), c["timed"], f)
                    if every == 1:
                        self.assertEqual(c["timed"], n, f)
                    else:
                        self.assertTrue(n / 8 * 0.75 < c["timed"] < n / 8 * 1.25, (f, c["timed"], n))


# ---- 2b. NVIDIA's own runtime over the fake driver ---------------------------------------------------
class NvidiaRuntime(TraceCase):
    """Programs that carry NVIDIA's runtime (nvcc's default static build, cuBLAS): the fake sees
    their driver calls only; the books still equal the backend's report and NVML, both ways."""
    MODES = (("usdt", []), ("uprobe", ["--uprobes-only"]))

    def client(self, name):
        path = fgtest.build_path("tests", "clients", name)
        if not os.access(path, os.X_OK):
            self.skipTest(f"{path} is not built (it needs the CUDA toolkit: see tests/clients/CMakeLists.txt)")
        return path

    def traced(self, mode, options, program):
        report = self.box.path(f"report-{mode}-%p.json")
        env = self.env(FAKEGPU_REPORT=report, LD_LIBRARY_PATH=fgtest.libdir())
        rc, s, p = self.trace_run(*options, cmd=[program], env=env)
        self.assertEqual(rc, 0, p.describe())
        self.assertEqual(self.library_modes(s).get(backend_lib()), mode, s["libraries"])
        self.assertFalse(s["drops"]["events_lost"], s["drops"])
        self.assertEqual(len(s["processes"]), 1, p.describe())
        proc = s["processes"][0]
        with open(report.replace("%p", str(proc["pid"]))) as f:
            r = json.load(f)
        return proc, r, p

    def assert_books_equal_report(self, proc, r, what):
        gpu = [d for d in proc["devices"] if d["device"] >= 0]
        self.assertEqual({d["index"]: d["used_memory_peak"] for d in r["devices"] if d["used_memory_peak"]},
                         {d["device"]: d["peak_bytes"] for d in gpu}, what)
        self.assertEqual((r["leaks"]["count"], r["leaks"]["bytes"]), (proc["leaked_allocs"], proc["leaked_bytes"]),
                         what)
        # Every allocation call succeeded. (Frees are not compared with the call count: a
        # cuMemFree(0), which cuBLAS makes, is a call but no free.)
        self.assertEqual(r["calls"].get("cuMemAlloc_v2", 0), proc["allocs"], what)

    def test_static_runtime_program_books_equal_the_report_both_ways(self):
        program = self.client("vectoradd_static")
        books = {}
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                proc, r, _ = self.traced(mode, options, program)
                # vectoradd: three 256 KiB buffers, a 4 KiB one it leaks on purpose, and a
                # double free (a failed call, on no device: the pointer is no longer anyone's).
                self.assert_books(proc, [dev(-1, 0, 0, 0, failed=1),
                                         dev(0, 3 * 256 * KiB + 4 * KiB, 4, 3, leaked=4 * KiB, leaked_allocs=1)],
                                  msg=mode)
                self.assert_books_equal_report(proc, r, mode)
                books[mode] = proc
        self.assertEqual({k: books["uprobe"][k] for k in HEAD_KEYS + ["devices"]},
                         {k: books["usdt"][k] for k in HEAD_KEYS + ["devices"]})

    def test_cublas_program_books_equal_the_report_and_nvml_both_ways(self):
        program = self.client("cublas")
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                proc, r, p = self.traced(mode, options, program)
                facts = dict(l.split("=", 1) for l in p.stdout.splitlines() if "=" in l and not l.startswith(" "))
                # What the program saw in NVML while it held its peak is the books' peak.
                peak = int(facts["used_with_buffers_nvml"])
                self.assertEqual(int(facts["used_with_buffers"]), peak, mode)
                gpu = [d for d in proc["devices"] if d["device"] >= 0]
                self.assertEqual([(d["device"], d["peak_bytes"], d["leaked_bytes"], d["live_bytes"]) for d in gpu],
                                 [(0, peak, 0, 0)], mode)
                self.assertEqual(proc["allocs"], proc["frees"], mode)
                self.assert_books_equal_report(proc, r, mode)


# ---- 3-6. processes, threads, contexts, async and VMM ---------------------------------------------
class Workloads(TraceCase):
    def test_fork_and_exec_children_have_their_own_books(self):
        # Parent: 4 MiB on device 2; its child execs `workload leak 3 6` (6 MiB on device 3, leaked).
        rc, s, p = self.trace_run(cmd=[trace_workload(), "spawn", 2, 4, fgtest.workload(), "leak", 3, 6])
        self.assertEqual(rc, 0, p.describe())
        parent = int(re.search(r"^pid (\d+): parent allocated$", p.stdout, re.M).group(1))
        child = int(re.search(r"^pid (\d+): 6 MiB on device 3$", p.stdout, re.M).group(1))
        self.assertEqual(sorted(q["pid"] for q in s["processes"]), sorted([parent, child]))
        pp, cp = self.process(s, parent), self.process(s, child)
        self.assertEqual((pp["comm"], cp["comm"], cp["ppid"]), ("trace_workload", "workload", parent))
        self.assert_books(pp, [dev(2, 4 * MiB, 1, 1)])
        self.assert_books(cp, [dev(3, 6 * MiB, 1, 0, leaked=6 * MiB, leaked_allocs=1)])
        self.assertEqual((pp["leaked_bytes"], cp["leaked_bytes"], cp["leaked_allocs"]), (0, 6 * MiB, 1))
        self.assertTrue(pp["exit_event_seen"] and cp["exit_event_seen"])
        # The child's 6 MiB while the parent held its 4 MiB.
        self.assertEqual(s["total"]["peak_bytes"], 10 * MiB)

    def test_threads_with_their_own_devices(self):
        report = self.box.path("report-%p.json")
        rc, s, p = self.trace_run(cmd=[trace_workload(), "threads"], env=self.env(FAKEGPU_REPORT=report))
        self.assertEqual(rc, 0, p.describe())
        q = s["processes"][0]
        self.assert_books(q, THREADS_DEVICES)
        self.assertEqual((q["peak_bytes"], q["leaked_bytes"], q["leaked_allocs"]), (12 * MiB, 2 * MiB, 2))
        with self.subTest("the backend's exit report agrees"):
            with open(report.replace("%p", str(q["pid"]))) as f:
                r = json.load(f)
            self.assertEqual({d["index"]: d["used_memory_peak"] for d in r["devices"] if d["used_memory_peak"]},
                             {d["device"]: d["peak_bytes"] for d in THREADS_DEVICES})
            self.assertEqual((r["leaks"]["count"], r["leaks"]["bytes"]), (2, 2 * MiB))

    def test_driver_context_books_on_its_device_and_destroy_is_no_leak(self):
        # ctypes, as a Python program would: cuCtxCreate_v4 on device 5 (4 MiB + 2 MiB, the 2 MiB
        # freed), cuCtxCreate_v2 on device 6 (1 MiB); both contexts destroyed with memory in them.
        script = (
            "import ctypes, os, sys\n"
            "cu = ctypes.CDLL(os.path.join(sys.argv[1], 'libcuda.so.1'))\n"
            "def ok(e, what):\n"
            "    if e: sys.exit(f'{what} failed: {e}')\n"
            "ok(cu.cuInit(0), 'cuInit')\n"
            "d5, d6, c5, c6 = ctypes.c_int(), ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()\n"
            "big, small, one = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()\n"
            "ok(cu.cuDeviceGet(ctypes.byref(d5), 5), 'cuDeviceGet')\n"
            "ok(cu.cuDeviceGet(ctypes.byref(d6), 6), 'cuDeviceGet')\n"
            "ok(cu.cuCtxCreate_v4(ctypes.byref(c5), None, ctypes.c_uint(0), d5), 'cuCtxCreate_v4')\n"
            "ok(cu.cuMemAlloc_v2(ctypes.byref(big), ctypes.c_size_t(4 << 20)), 'cuMemAlloc_v2')\n"
            "ok(cu.cuMemAlloc_v2(ctypes.byref(small), ctypes.c_size_t(2 << 20)), 'cuMemAlloc_v2')\n"
            "ok(cu.cuMemFree_v2(small), 'cuMemFree_v2')\n"
            "ok(cu.cuCtxCreate_v2(ctypes.byref(c6), ctypes.c_uint(0), d6), 'cuCtxCreate_v2')\n"
            "ok(cu.cuMemAlloc_v2(ctypes.byref(one), ctypes.c_size_t(1 << 20)), 'cuMemAlloc_v2')\n"
            "ok(cu.cuCtxDestroy_v2(c6), 'cuCtxDestroy_v2')\n"
            "ok(cu.cuCtxDestroy_v2(c5), 'cuCtxDestroy_v2')\n"
            "print(f'pid {os.getpid()}: contexts destroyed', flush=True)\n")
        rc, s, p = self.trace_run("--fail-on-leak", cmd=[fgtest.PYTHON, "-c", script, fgtest.libdir()])
        self.assertEqual(rc, 0, p.describe())  # implicit frees are not leaks
        pid = int(re.search(r"^pid (\d+): contexts destroyed$", p.stdout, re.M).group(1))
        q = self.process(s, pid)
        self.assert_books(q, [dev(5, 6 * MiB, 2, 1), dev(6, 1 * MiB, 1, 0)])
        self.assertEqual({k: q[k] for k in ("peak_bytes", "leaked_bytes", "leaked_allocs", "implicit_frees")},
                         {"peak_bytes": 6 * MiB, "leaked_bytes": 0, "leaked_allocs": 0, "implicit_frees": 2})
        self.assertEqual(s["verdict"]["status"], "ok")

    def test_async_pool_and_vmm_allocations_are_counted(self):
        rc, s, p = self.trace_run(cmd=[trace_workload(), "async"])
        self.assertEqual(rc, 0, p.describe())
        q = s["processes"][0]
        self.assert_books(q, ASYNC_DEVICES)
        self.assertEqual((q["allocs"], q["frees"], q["peak_bytes"], q["leaked_bytes"]), (4, 4, 6 * MiB, 0))


# ---- 7. SIGKILL ----------------------------------------------------------------------------------------
class Killed(TraceCase):
    def test_killed_process_shows_what_it_held_as_leaked(self):
        summary_path = self.box.path("summary.json")
        t = self.start([tracer(), "run", "--fail-on-leak", "--summary", summary_path, "--", fgtest.workload(),
                        "alloc", 0, 6, "hold"])
        ready = pid_line("6 MiB on device 0")
        t.out.until(ready, "the workload's line")
        pid = int(ready.match.group(1))
        os.kill(pid, signal.SIGKILL)
        rc = t.wait()  # no hang: the command's end ends the run
        self.assertEqual(rc, 4, t.describe())
        with open(summary_path) as f:
            s = json.load(f)
        self.assertEqual((s["command_exit_status"], s["verdict"]["status"]), (128 + signal.SIGKILL, "leaked"))
        q = self.process(s, pid)
        self.assertEqual((q["state"], q["exit_event_seen"]), ("exited", True))
        self.assert_books(q, [dev(0, 6 * MiB, 1, 0, leaked=6 * MiB, leaked_allocs=1)])
        self.assertEqual((q["leaked_bytes"], q["leaked_allocs"], s["total"]["leaked_bytes"]), (6 * MiB, 1, 6 * MiB))


# ---- 8. attach --------------------------------------------------------------------------------------
class Attach(TraceCase):
    def test_attach_starts_from_the_backends_ledger_and_never_goes_negative(self):
        w = self.start([fgtest.workload(), "alloc", 2, 7, "hold"])
        ready = pid_line("7 MiB on device 2")
        w.out.until(ready, "the workload's line")
        pid = int(ready.match.group(1))
        self.assertEqual(pid, w.pid)

        t = self.start([tracer(), "attach", "-p", pid, "-j", "-i", "0.2"], stdin=subprocess.DEVNULL)
        first = json_line(t.out.until(lambda line: line.startswith("{"), "the first JSON line"))
        q = self.process(first, pid, "the first line")
        self.assertEqual({k: q[k] for k in ("state", "since_attach", "baseline_known", "live_bytes", "peak_bytes")},
                         {"state": "running", "since_attach": True, "baseline_known": True, "live_bytes": 7 * MiB,
                          "peak_bytes": 7 * MiB})
        self.assertEqual([(b["device"], b["kind"], b["live_bytes"], b["baseline_bytes"]) for b in q["books"]],
                         [(2, "device", 7 * MiB, 7 * MiB)])
        self.assertEqual(first["total"]["live_bytes"], 7 * MiB)

        w.close_stdin()  # it frees its 7 MiB (allocated before attach) and exits
        self.assertEqual(w.wait(), 0, w.describe())

        def gone(line):
            j = json_line(line)
            return j is not None and self.process(j, pid)["state"] == "exited"

        last = json_line(t.out.until(gone, f"pid {pid} exited"))
        q = self.process(last, pid)
        self.assertEqual({k: q[k] for k in ("live_bytes", "leaked_bytes", "leaked_allocs")},
                         {"live_bytes": 0, "leaked_bytes": 0, "leaked_allocs": 0})
        self.assertEqual(last["health"]["ledger"]["pre_attach_frees"], 1)
        self.assertEqual(last["health"]["ledger"]["unmatched_frees"], 0)
        for line in t.out.seen:  # never below 0 (an unsigned wrap would be far above 7 MiB)
            j = json_line(line)
            if j:
                self.assertLessEqual(self.process(j, pid)["live_bytes"], 7 * MiB, line)
                self.assertLessEqual(j["total"]["live_bytes"], 7 * MiB, line)

        # Ctrl-C: exit 0 promptly; the output ends with a complete line.
        os.kill(t.pid, signal.SIGINT)
        began = time.monotonic()
        rc = t.wait()
        took = time.monotonic() - began
        self.assertEqual(rc, 0, t.describe())
        self.assertEqual(self.process(json_line(t.out.seen[-1]), pid)["state"], "exited", t.out.seen[-1])
        self.assertLess(took, PROMPT_EXIT_S, f"attach took {took:.1f} s to exit after SIGINT")


# ---- 9 and 12. monitor: a process started later; SIGTERM detaches everything -----------------------
class Monitor(TraceCase):
    def test_monitor_sees_a_new_process_from_its_first_call_and_detaches_on_sigterm(self):
        t = self.start([tracer(), "monitor", "-j", "-i", "0.2"], stdin=subprocess.DEVNULL)
        t.out.until(lambda line: line.startswith("{"), "the monitor's first line")

        w = self.start([fgtest.workload(), "alloc", 4, 3, "hold"])
        ready = pid_line("3 MiB on device 4")
        w.out.until(ready, "the workload's line")
        pid = int(ready.match.group(1))

        def shows(line):
            j = json_line(line)
            return j is not None and any(p["pid"] == pid and p["live_bytes"] == 3 * MiB for p in j["processes"])

        q = self.process(json_line(t.out.until(shows, f"pid {pid} with 3 MiB live")), pid)
        self.assertEqual({k: q[k] for k in ("comm", "state", "since_attach", "live_bytes", "peak_bytes", "allocs",
                                            "frees", "leaked_bytes")},
                         {"comm": "workload", "state": "running", "since_attach": False, "live_bytes": 3 * MiB,
                          "peak_bytes": 3 * MiB, "allocs": 1, "frees": 0, "leaked_bytes": 0})
        self.assertEqual([(b["device"], b["kind"], b["allocs"], b["alloc_bytes"], b["baseline_bytes"])
                          for b in q["books"]], [(4, "device", 1, 3 * MiB, 0)])

        # What the monitor holds in the kernel, and a probed entry point in the workload.
        progs, links = bpf_fds_of(t.pid)
        self.assertTrue(progs and links, "the monitor holds no BPF program or link")
        self.assertLessEqual(progs, set(bpf_objects()[0]))
        alone = not other_collectors(progs)
        during = entry_bytes(pid, "cudaMemcpy")

        os.kill(t.pid, signal.SIGTERM)
        began = time.monotonic()
        rc = t.wait()
        took = time.monotonic() - began
        self.assertEqual(rc, 0, t.describe())
        final = json_line(t.out.seen[-1])  # the output ends with a complete line: the final one
        self.assertIsNotNone(final, t.out.seen[-1])
        self.assertEqual(self.process(final, pid)["live_bytes"], 3 * MiB)
        # The kernel frees a closed program or link after an RCU grace period: poll for that
        # (bounded), then assert.
        deadline = time.monotonic() + PROMPT_EXIT_S
        while True:
            progs_after, links_after = bpf_objects()
            if not (progs & set(progs_after) or links & links_after) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(progs & set(progs_after), set(), "programs left loaded")
        self.assertEqual(links & links_after, set(), "links left attached")
        after = entry_bytes(pid, "cudaMemcpy")
        if alone and not other_collectors(progs):
            # No other collector probes the backend: the entry is a probe while traced and the
            # 5-byte NOP again afterwards.
            self.assertNotEqual(during, NOP5, "cudaMemcpy's entry while traced")
            self.assertEqual(after, NOP5, "cudaMemcpy's entry after the monitor stopped")
        else:
            print("note: another fakegpu collector is running; the entry-point bytes were not compared", flush=True)
        w.close_stdin()
        self.assertEqual(w.wait(), 0, w.describe())
        self.assertLess(took, PROMPT_EXIT_S, f"monitor took {took:.1f} s to exit after SIGTERM")


    def test_exited_processes_leave_no_entry_return_state_behind(self):
        """A long-running monitor through entry/return probes: what an exited process left in
        the kernel (its leaked allocations' records) is dropped, so later processes are booked
        in full. The map holds 16 records (--max-allocs); 20 processes leak one each."""
        t = self.start([tracer(), "monitor", "--uprobes-only", "--max-allocs", 16, "-j", "-i", "0.1"],
                       stdin=subprocess.DEVNULL)
        t.out.until(lambda line: line.startswith("{"), "the monitor's first line")

        def run_and_see_exit(mode):
            w = self.start([fgtest.workload(), mode, 0, 1], stdin=subprocess.DEVNULL)
            ready = pid_line("1 MiB on device 0")
            w.out.until(ready, "the workload's line")
            pid = int(ready.match.group(1))
            self.assertEqual(w.wait(), 0, w.describe())

            def exited(line):
                j = json_line(line)
                return j is not None and any(p["pid"] == pid and p["state"] == "exited" for p in j["processes"])

            return self.process(json_line(t.out.until(exited, f"pid {pid} exited")), pid), json_line(t.out.seen[-1])

        for _ in range(20):
            p, _ = run_and_see_exit("leak")
            self.assertEqual((p["allocs"], p["frees"], p["leaked_bytes"]), (1, 0, 1 * MiB))
        p, last = run_and_see_exit("alloc")
        self.assertEqual((p["allocs"], p["frees"], p["peak_bytes"], p["leaked_bytes"], p["unmatched_frees"]),
                         (1, 1, 1 * MiB, 0, 0))
        self.assertEqual((last["health"]["alloc_map_full"], last["health"]["unmatched_free"]), (0, 0))
        os.kill(t.pid, signal.SIGTERM)
        self.assertEqual(t.wait(), 0, t.describe())

# ---- 9a. --stacks: leaked bytes by user stack, symbolized ---------------------------------------
class Stacks(TraceCase):
    MODES = (("usdt", []), ("uprobe", ["--uprobes-only"]))

    def assert_leak_named(self, s, pid, mode):
        """The leaked stack of `mixed` in summary s, named; returns its frames."""
        stacks = s["leaked_stacks"]
        # mixed leaks one allocation: the 2 MiB of cudaMallocManaged, called from mixed().
        self.assertEqual([(st["pid"], st["comm"], st["bytes"], st["allocs"]) for st in stacks],
                         [(pid, "trace_workload", 2 * MiB, 1)], json.dumps(stacks, indent=1))
        return self.assert_frames_named(stacks[0]["frames"], mode)

    def assert_frames_named(self, frames, mode):
        app = [f for f in frames if f.endswith("[trace_workload]")]
        self.assertEqual([f.split("+")[0] for f in app], ["(anonymous namespace)::mixed(bool)", "main"],
                         frames)
        if mode == "usdt":  # the probe fires inside the backend, below the API entry
            self.assertIn("fgimpl_cudaMallocManaged", " ".join(frames))
        return frames

    def test_leak_is_reported_with_its_symbolized_stack_both_ways(self):
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run("--stacks", "--top", "5", *options, cmd=[trace_workload(), "mixed"])
                self.assertEqual(rc, 0, p.describe())
                self.assert_leak_named(s, s["processes"][0]["pid"], mode)
                self.assertEqual(s["drops"]["stacks_lost"], 0)

    def test_a_stack_without_a_slot_is_counted_and_the_books_stay_exact(self):
        """--max-stacks 1: one slot. mixed allocates from four call sites; the first stack
        (cudaMalloc 3 MiB) takes the slot, the other three are counted as lost, among them the
        leak's: no leaked stack to list, the leak itself still booked, the verdict trusted."""
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run("--stacks", "--max-stacks", "1", *options, cmd=[trace_workload(), "mixed"])
                self.assertEqual(rc, 0, p.describe())
                self.assertEqual((s["drops"]["stacks_lost"], s["drops"]["events_lost"], s["leaked_stacks"]),
                                 (3, False, []), json.dumps(s["drops"], indent=1))
                proc = s["processes"][0]
                self.assertEqual((proc["allocs"], proc["leaked_bytes"], proc["leaked_allocs"]), (4, 2 * MiB, 1))

    def test_a_process_gone_before_its_maps_are_read_is_still_named(self):
        """The collector reads a process's maps while it runs; one that exits first (a short
        command on a busy host) is named from the build ids the kernel took with its stacks.
        Here the traced shell stops the collector (SIGSTOP, and waits until it is stopped),
        runs the workload to its end, then continues the collector: every record of the
        workload is read after its maps are gone. Its frames read the same as a live one's."""
        script = ('kill -STOP $PPID && until grep -q "^State:.*stopped" /proc/$PPID/status; do :; done; '
                  '"$0" mixed; status=$?; kill -CONT $PPID; exit $status')
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run("--stacks", *options, cmd=["sh", "-c", script, trace_workload()])
                self.assertEqual(rc, 0, p.describe())
                workload = [proc["pid"] for proc in s["processes"] if proc["comm"] == "trace_workload"]
                self.assertEqual(len(workload), 1, json.dumps(s["processes"], indent=1))
                gone = self.assert_leak_named(s, workload[0], mode)
                rc, s, p = self.trace_run("--stacks", *options, cmd=[trace_workload(), "mixed"])
                self.assertEqual(rc, 0, p.describe())
                self.assertEqual(gone, self.assert_leak_named(s, s["processes"][0]["pid"], mode))


    def test_monitor_names_a_process_it_meets_after_the_process_is_gone(self):
        """monitor meets a new process at its first call, after its exec: with --stacks the
        exec tracepoint keeps every exec's file, so the program's frames are named though the
        monitor (stopped here while the workload runs to its end) never saw the process live."""
        mon = self.start([tracer(), "monitor", "--stacks", "-j", "-i", "0.1", "--listen", "127.0.0.1:0"],
                         stdin=subprocess.DEVNULL)
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        served = [m for m in (re.search(r"serving http://(\S+?)/ ", line) for line in mon.err.seen) if m]
        self.assertEqual(len(served), 1, mon.describe())
        os.kill(mon.pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + TIMEOUT
            while not stopped(mon.pid):
                self.assertLess(time.monotonic(), deadline, "the monitor did not stop")
            w = subprocess.run([trace_workload(), "mixed"], env=self.env(), cwd=self.box.dir,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
        finally:
            os.kill(mon.pid, signal.SIGCONT)
        self.assertEqual(w.returncode, 0, w.stderr)
        pid = int(re.search(r"^pid (\d+): ", w.stdout, re.M).group(1))

        def exited(line):
            j = json_line(line)
            return j is not None and any(p["pid"] == pid and p["state"] == "exited" for p in j["processes"])

        mon.out.until(exited, f"pid {pid} exited")  # the API publishes the same refresh first
        with urllib.request.urlopen(f"http://{served[0].group(1)}/api/v1/processes/{pid}", timeout=TIMEOUT) as r:
            stacks = json.load(r)["leaked_stacks"]
        self.assertEqual([(st["bytes"], st["allocs"]) for st in stacks], [(2 * MiB, 1)], json.dumps(stacks, indent=1))
        self.assert_frames_named(stacks[0]["frames"], "usdt")
        os.kill(mon.pid, signal.SIGTERM)
        self.assertEqual(mon.wait(), 0, mon.describe())


# ---- 9b. programs that fork (without exec) while traced ------------------------------------------
# trace_workload forks N: N children before the parent's first call, the parent's 4 MiB on
# device 0, N children more; every 4th child execs (comm "exe": it runs /proc/self/exe). Each
# child: 2 MiB on device 1 allocated and freed, then 1 MiB held at exit (a leak).
FORK_CHILD = [dev(1, 2 * MiB, 2, 1, leaked=MiB, leaked_allocs=1)]
FORK_PARENT = [dev(0, 4 * MiB, 1, 1)]


class ForkedChildren(TraceCase):
    """The kernel (6.18) optimizes a probed 5-byte NOP into a call to a trampoline page that
    fork does not copy: the backend's fork guard (common/fork_guard.cpp) re-arms those sites
    in the child, which then runs and is traced like any process."""
    MODES = (("usdt", []), ("uprobe", ["--uprobes-only"]))
    N = 100

    @staticmethod
    def devices(q):
        """The summary's per-device books, or the same figures from the monitor's per-kind books."""
        if "devices" in q:
            return q["devices"]
        return [dev(b["device"], b["peak_bytes"], b["allocs"], b["frees"], leaked=b["leaked_bytes"],
                    leaked_allocs=b["leaked_allocs"], live=b["live_bytes"], failed=b["failed_calls"])
                for b in q["books"]]

    def assert_family(self, processes, parent, n, where):
        children = [q for q in processes if q["ppid"] == parent]
        others = [{k: q.get(k) for k in ("pid", "ppid", "comm", "state", "books")}
                  for q in processes if q["ppid"] != parent and q["pid"] != parent]
        self.assertEqual(len(children), 2 * n, f"{where}: not the parent's children: {json.dumps(others)}")
        for q in children:
            self.assertEqual((q["state"], self.devices(q)), ("exited", FORK_CHILD), where + json.dumps(q))
        self.assertEqual(sorted(q["comm"] for q in children), sorted(["trace_workload"] * (3 * n // 2) + ["exe"] * (n // 2)))

    def test_hundreds_of_forked_children_run_and_have_their_own_books_under_run(self):
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run(*options, cmd=[trace_workload(), "forks", self.N])
                self.assertEqual(rc, 0, p.describe())
                parent = int(re.search(r"^pid (\d+): forks done$", p.stdout, re.M).group(1))
                self.assertFalse(s["drops"]["events_lost"], s["drops"])
                self.assertEqual(s["drops"]["ledger"]["exits_without_event"], 0, s["drops"])
                self.assertEqual(len(s["processes"]), 2 * self.N + 1, p.describe())
                self.assert_books(self.process(s, parent), FORK_PARENT)
                self.assert_family(s["processes"], parent, self.N, mode)

    def monitor(self, options):
        mon = self.start([tracer(), "monitor", *options, "-j", "-i", "3600"], stdin=subprocess.DEVNULL)
        mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
        return mon

    def final_line(self, mon):
        """The monitor's last JSON line, written when SIGTERM stops it."""
        os.kill(mon.pid, signal.SIGTERM)
        self.assertEqual(mon.wait(), 0, mon.describe())
        lines = [j for j in map(json_line, mon.out.seen) if j is not None]
        self.assertTrue(lines, mon.describe())
        return lines[-1]

    def test_hundreds_of_forked_children_under_monitor(self):
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                mon = self.monitor(options)
                w = subprocess.run([trace_workload(), "forks", str(self.N)], env=self.env(), cwd=self.box.dir,
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
                self.assertEqual(w.returncode, 0, w.stderr)
                parent = int(re.search(r"^pid (\d+): forks done$", w.stdout, re.M).group(1))
                last = self.final_line(mon)
                mine = [q for q in last["processes"] if q["pid"] == parent or q["ppid"] == parent]
                self.assertEqual(self.devices(self.process({"processes": mine}, parent)), FORK_PARENT)
                self.assert_family(mine, parent, self.N, mode)

    def gated(self):
        w = self.start([trace_workload(), "forks", 10, "gate"])
        waiting = pid_line("children waiting")
        w.out.until(waiting, "the workload's children waiting")
        return w, int(waiting.match.group(1))

    def test_children_forked_before_tracing_starts_are_traced_from_their_first_call(self):
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                w, parent = self.gated()  # the parent's 4 MiB is allocated before the monitor starts
                mon = self.monitor(options)
                w.close_stdin()
                self.assertEqual(w.wait(), 0, w.describe())
                last = self.final_line(mon)
                self.assert_family([q for q in last["processes"] if q["ppid"] == parent], parent, 10, mode)

    def test_children_keep_working_when_tracing_stops_while_they_wait(self):
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                mon = self.monitor(options)
                w, _ = self.gated()  # the parent's call went through probes; its children are forked
                os.kill(mon.pid, signal.SIGTERM)
                self.assertEqual(mon.wait(), 0, mon.describe())
                w.close_stdin()  # the children call the API now, with no tracer left
                self.assertEqual(w.wait(), 0, w.describe())
                self.assertIn("forks done", w.out.text())


# ---- 9b'. kernel launches by name, how they finished and their host time ----------------------------
def jit_built():
    """Whether the build has the kernel compiler (libfakegpu_jit.so, LLVM 14): without it the
    backend records launches instead of running them."""
    return os.path.exists(fgtest.build_path("libfakegpu_jit.so"))


def kernel_counts(kernels):
    """A process's kernels without their host times: [(name, launches, ran, recorded)]."""
    return [(k["name"], k["launches"], k["ran"], k["recorded"]) for k in kernels]


def finished(name, launches, run):
    """What a kernel of `launches` launches shows when every launch finished: run (when `run`
    and the compiler is built) or recorded."""
    ran = launches if run and jit_built() else 0
    return (name, launches, ran, launches - ran)


class KernelLaunches(TraceCase):
    def check_host_times(self, kernels, msg=""):
        """An executed launch has host time, a recorded one none; the mean is per executed launch."""
        for k in kernels:
            if k["ran"]:
                self.assertGreater(k["host_ns"], 0, msg or k)
            else:
                self.assertEqual(k["host_ns"], 0, msg or k)
            self.assertEqual(k["mean_host_ns"], k["host_ns"] // k["ran"] if k["ran"] else 0, msg or k)

    def check_against_report(self, kernels, report_path, pid):
        """The backend's exit report has the same runs, recorded launches and host time, to the ns."""
        r = self.read_report(report_path.replace("%p", str(pid)))
        self.assertEqual({k["name"]: k["launches"] for k in kernels}, r["kernel_launches"])
        self.assertEqual({k["name"]: (k["ran"], k["recorded"], k["host_ns"] / 1e6) for k in kernels},
                         {name: (e["ran"], e["recorded"], e["host_ms"]) for name, e in r["kernels"].items()})
        return r

    def test_launches_by_kernel_name_in_the_summary_the_table_and_json_lines(self):
        steps = ["launch:saxpy:7", "launch:_Z6reducePfi:3"]
        want = [finished("saxpy", 7, True), finished("_Z6reducePfi", 3, True)]
        rc, s, p = self.trace_run(cmd=[fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), *steps])
        self.assertEqual(rc, 0, p.describe())
        q = [q for q in s["processes"] if q["launches"]]
        self.assertEqual([(x["launches"], kernel_counts(x["kernels"])) for x in q], [(10, want)])
        self.check_host_times(q[0]["kernels"])
        with self.subTest("entry/return probes count launches; names come from the USDT probe only"):
            rc, s, p = self.trace_run("--uprobes-only", cmd=[fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), *steps])
            self.assertEqual(rc, 0, p.describe())
            self.assertEqual([(x["launches"], x["kernels"]) for x in s["processes"] if x["launches"]], [(10, [])])
        with self.subTest("the monitor's table and JSON lines"):
            for json_lines in (False, True):
                mon = self.start([tracer(), "monitor", *(["-j"] if json_lines else []), "-i", "3600"],
                                 stdin=subprocess.DEVNULL)
                mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
                w = self.start([fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), *steps], stdin=subprocess.DEVNULL)
                self.assertEqual(w.wait(), 0, w.describe())
                os.kill(mon.pid, signal.SIGTERM)
                self.assertEqual(mon.wait(), 0, mon.describe())
                pid = w.pid
                if json_lines:
                    last = [j for j in map(json_line, mon.out.seen) if j is not None][-1]
                    kernels = self.process(last, pid)["kernels"]
                    self.assertEqual(kernel_counts(kernels), want)
                    self.check_host_times(kernels)
                else:
                    # PID COMMAND LAUNCHES RAN RECORDED HOST MEAN KERNEL; a time is "2.1 us" ("-": none ran).
                    rows = [l.split() for l in mon.out.text().splitlines() if l.split()[:1] == [str(pid)]]
                    kernel_rows = [r[:5] + r[-1:] for r in rows if r[-1] in ("saxpy", "_Z6reducePfi")]
                    self.assertEqual(kernel_rows, [[str(pid), "python3", *map(str, k[1:]), k[0]] for k in want],
                                     mon.describe())
                    for r in rows:
                        if r[-1] in ("saxpy", "_Z6reducePfi"):
                            self.assertEqual(len(r), 10 if r[3] != "0" else 8, r)  # two times, or "-" "-"

    def test_runs_from_threads_at_once_are_exact_and_their_host_time_is_the_backends_report(self):
        """Four threads launch saxpy 50 times each at once: every run is counted (the BPF
        program's adds are atomic) and the host time is the report's, to the nanosecond."""
        report = self.box.path("report-%p.json")
        rc, s, p = self.trace_run(cmd=[fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), "launch:saxpy:50:4",
                                       "launch:_Z6reducePfi:3"], env=self.env(FAKEGPU_REPORT=report))
        self.assertEqual(rc, 0, p.describe())
        q = [q for q in s["processes"] if q["launches"]]
        self.assertEqual([(x["launches"], kernel_counts(x["kernels"])) for x in q],
                         [(203, [finished("saxpy", 200, True), finished("_Z6reducePfi", 3, True)])])
        self.check_host_times(q[0]["kernels"])
        self.check_against_report(q[0]["kernels"], report, q[0]["pid"])

    def test_record_mode_counts_recorded_launches_with_no_host_time(self):
        report = self.box.path("report-%p.json")
        rc, s, p = self.trace_run(cmd=[fgtest.PYTHON, fgtest.PROBE, fgtest.libdir(), "launch:saxpy:9"],
                                  env=self.env(FAKEGPU_REPORT=report, FAKEGPU_KERNELS="record"))
        self.assertEqual(rc, 0, p.describe())
        q = [q for q in s["processes"] if q["launches"]]
        self.assertEqual([(x["launches"], x["kernels"]) for x in q],
                         [(9, [{"name": "saxpy", "launches": 9, "ran": 0, "recorded": 9, "host_ns": 0,
                                "mean_host_ns": 0}])])
        r = self.check_against_report(q[0]["kernels"], report, q[0]["pid"])
        self.assertEqual(r["kernels"]["saxpy"]["reason"], "FAKEGPU_KERNELS=record")


# ---- 9b''. per-library attribution: calls, bytes and time by calling object ---------------------------
def counts_by_object(proc):
    """A process's callers as {object: (calls, errors, alloc_bytes, free_bytes)}."""
    return {c["object"]: (c["calls"], c["errors"], c["alloc_bytes"], c["free_bytes"]) for c in proc["callers"]}


def js_fixed(x, digits):
    """x.toFixed(digits) as JavaScript writes it: the exact value, halves rounded up (Python's
    format rounds them to even)."""
    return str(decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP))


def page_duration(ns):
    """A time in ns as the dashboard and the run report write it (their duration())."""
    if ns < 1e3:
        return js_fixed(ns, 0) + " ns"
    if ns < 1e6:
        return js_fixed(ns / 1e3, 1) + " µs"
    if ns < 1e9:
        return js_fixed(ns / 1e6, 1) + " ms"
    return js_fixed(ns / 1e9, 2) + " s"


def cells(row):
    """The text of each <td> of a row's HTML."""
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


class Callers(TraceCase):
    MODES = (("usdt", []), ("uprobe", ["--uprobes-only"]))
    # tests/workloads/trace_libs/main.cpp: the program, then two of its own libraries.
    TRACE_LIBS = {"trace_libs": (2, 0, 512 * KiB, 512 * KiB),
                  "libtrace_alpha.so": (7, 0, 3 * MiB, 3 * MiB),
                  "libtrace_beta.so": (5, 1, 4 * MiB, 4 * MiB)}
    # The calls entry/return probes see, and time: with USDT only cudaMemcpy's (alpha's one);
    # without, all of them.
    PROBED = {"usdt": {"trace_libs": 0, "libtrace_alpha.so": 1, "libtrace_beta.so": 0},
              "uprobe": {"trace_libs": 2, "libtrace_alpha.so": 7, "libtrace_beta.so": 5}}

    def test_a_program_and_two_of_its_libraries_are_counted_apart_exactly_both_ways(self):
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run(*options, "--latency-every", "1", cmd=[trace_libs()],
                                          env=self.env(LD_LIBRARY_PATH=fgtest.libdir()))
                self.assertEqual(rc, 0, p.describe())
                self.assertEqual(self.library_modes(s).get(backend_lib()), mode, s["libraries"])
                proc = self.process(s, s["processes"][0]["pid"])
                self.assertEqual(counts_by_object(proc), self.TRACE_LIBS, mode)
                # Most calls first.
                self.assertEqual([c["object"] for c in proc["callers"]],
                                 ["libtrace_alpha.so", "libtrace_beta.so", "trace_libs"], mode)
                for c in proc["callers"]:
                    self.assertEqual((c["probed_calls"], c["timed_calls"]),
                                     (self.PROBED[mode][c["object"]],) * 2, (mode, c))
                    self.assertEqual(c["time_ns"] > 0, c["timed_calls"] > 0, (mode, c))

    def test_the_monitor_s_table_and_json_lines_show_the_callers(self):
        for json_lines in (False, True):
            with self.subTest(json_lines=json_lines):
                mon = self.start([tracer(), "monitor", *(["-j"] if json_lines else []), "-i", "3600"],
                                 stdin=subprocess.DEVNULL)
                mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
                w = self.start([trace_libs()], stdin=subprocess.DEVNULL)
                self.assertEqual(w.wait(), 0, w.describe())
                os.kill(mon.pid, signal.SIGTERM)
                self.assertEqual(mon.wait(), 0, mon.describe())
                if json_lines:
                    last = [j for j in map(json_line, mon.out.seen) if j is not None][-1]
                    self.assertEqual(counts_by_object(self.process(last, w.pid)), self.TRACE_LIBS)
                    continue
                # The callers' table: PID COMMAND CALLS ERR ALLOC FREED TIME CALLER, where TIME is "-"
                # or a number and its unit (timing is sampled, so either may show).
                lines = mon.out.text().splitlines()
                header = next(i for i, l in enumerate(lines) if l.split()[-1:] == ["CALLER"])
                rows = [l.split() for l in lines[header + 1:] if l.split()[:1] == [str(w.pid)]]
                callers = [(r[2], r[3], " ".join(r[4:6]), " ".join(r[6:8]), r[-1]) for r in rows]
                self.assertEqual(callers, [("7", "0", "3.0 MiB", "3.0 MiB", "libtrace_alpha.so"),
                                           ("5", "1", "4.0 MiB", "4.0 MiB", "libtrace_beta.so"),
                                           ("2", "0", "512.0 KiB", "512.0 KiB", "trace_libs")], mon.describe())

    def test_cublas_calls_are_its_own_not_the_program_s(self):
        """cuBLAS carries NVIDIA's static runtime: its allocations come from libcublas.so, the
        program's own from the program; together they are the books, the same both ways."""
        program = fgtest.build_path("tests", "clients", "cublas")
        if not os.access(program, os.X_OK):
            self.skipTest(f"{program} is not built (it needs the CUDA toolkit: see tests/clients/CMakeLists.txt)")
        seen = {}
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                rc, s, p = self.trace_run(*options, cmd=[program], env=self.env(LD_LIBRARY_PATH=fgtest.libdir()))
                self.assertEqual(rc, 0, p.describe())
                proc = s["processes"][0]
                # Named as the files are (libcublas.so.13 with CUDA 13): compared without the version.
                by = {re.sub(r"\.so\.\d+$", ".so", o): c for o, c in counts_by_object(proc).items()}
                self.assertEqual(set(by), {"cublas", "libcublas.so", "libcublasLt.so"}, mode)
                self.assertGreater(by["libcublas.so"][2], 0, mode)
                self.assertEqual(sum(c[2] for c in by.values()), sum(b["alloc_bytes"] for b in proc["kernel_books"]),
                                 mode)
                self.assertEqual(sum(c[3] for c in by.values()), sum(b["free_bytes"] for b in proc["kernel_books"]),
                                 mode)
                seen[mode] = by
        self.assertEqual(seen["usdt"], seen["uprobe"])


# ---- 9c. run --timeline: a trace-event JSON Perfetto opens ---------------------------------------
class Timeline(TraceCase):
    MODES = (("usdt", []), ("uprobe", ["--uprobes-only"]))
    TIB = 1 << 40

    def test_counters_equal_the_books_and_ooms_and_leaks_are_instants(self):
        # trace_workload mixed (its books: MIXED_DEVICES), then a probe whose 1 TiB cudaMalloc
        # on device 0 fails with cudaErrorMemoryAllocation (2).
        script = '"$0" mixed && "$1" "$2" - "malloc:0:$3"'
        for mode, options in self.MODES:
            with self.subTest(mode=mode):
                timeline = self.box.path(f"timeline-{mode}.json")
                env = self.env(LD_LIBRARY_PATH=fgtest.libdir())
                rc, s, p = self.trace_run("--timeline", timeline, *options, env=env,
                                          cmd=["sh", "-c", script, trace_workload(), fgtest.PYTHON, fgtest.PROBE,
                                               self.TIB])
                self.assertEqual(rc, 0, p.describe())
                self.assertIn('"err": 2', p.stdout)
                with open(timeline) as f:
                    doc = json.load(f)  # valid JSON, or this fails
                events = doc["traceEvents"]
                workload = [q for q in s["processes"] if q["comm"] == "trace_workload"][0]
                probe = [q for q in s["processes"] if q["failed_calls"] == 1][0]
                names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
                self.assertEqual((names[0], names[workload["pid"]]),
                                 ("GPUs (all processes)", f"trace_workload (pid {workload['pid']})"))
                tracks = {}
                for e in events:
                    if e["ph"] == "C":
                        tracks.setdefault((e["pid"], e["name"]), []).append((e["ts"], e["args"]["bytes"]))
                label = lambda d: "host pinned memory" if d < 0 else f"GPU {d} memory"
                # Each track: its highest value is the books' peak, its last the live bytes at the end.
                expect = {(workload["pid"], label(d["device"])): (d["peak_bytes"], d["live_bytes"])
                          for d in workload["devices"]}
                expect.update({(0, label(d["device"])): (d["peak_bytes"], 0)  # every process has exited
                               for d in s["total"]["devices"] if d["peak_bytes"]})
                self.assertEqual({k: (max(b for _, b in v), v[-1][1]) for k, v in tracks.items()}, expect)
                for k, v in tracks.items():
                    self.assertEqual([t for t, _ in v], sorted(t for t, _ in v), k)
                instants = sorted(((e["name"], e["pid"], e["args"]) for e in events if e["ph"] == "i"),
                                  key=lambda i: i[0])
                self.assertEqual(instants, [
                    ("leak at exit", workload["pid"], {"leaked_bytes": 2 * MiB, "leaked_allocs": 1}),
                    ("out of memory", probe["pid"], {"device": 0, "bytes": self.TIB, "status": 2})])


# ---- 9d. run --html: one self-contained page ------------------------------------------------------
class HtmlReport(TraceCase):
    def rendered(self, page):
        """The DOM of the report at page once headless Chromium ran its script; the page must
        load nothing."""
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            self.skipTest("chromium is not installed (Debian chromium; scripts/deps.sh installs it)")
        with open(page) as f:
            html = f.read()
        self.assertIsNone(re.search(r'\b(src|href)=|https?://[^"\s]*\.(js|css)', html), "the page loads something")
        profile = self.box.path("chromium-profile-%d" % len(os.listdir(self.box.dir)))
        dom = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
                              "file://" + page], capture_output=True, text=True, timeout=120).stdout
        self.assertIn('data-rendered="1"', dom, dom[:2000])
        return dom

    def test_page_renders_its_charts_and_tables_in_headless_chromium(self):
        page = self.box.path("report.html")
        script = '"$0" mixed && "$1" "$2" - "malloc:0:$3"'
        rc, s, p = self.trace_run("--html", page, env=self.env(LD_LIBRARY_PATH=fgtest.libdir()),
                                  cmd=["sh", "-c", script, trace_workload(), fgtest.PYTHON, fgtest.PROBE, 1 << 40])
        self.assertEqual(rc, 0, p.describe())
        dom = self.rendered(page)
        workload = [q for q in s["processes"] if q["comm"] == "trace_workload"][0]
        probe = [q for q in s["processes"] if q["failed_calls"] == 1][0]
        label = f"trace_workload ({workload['pid']})"
        charts = {}
        for m in re.finditer(r'<svg([^>]*)>(.*?)</svg>', dom, re.S):
            ident = re.search(r'id="([^"]+)"', m.group(1)).group(1)
            lines = {l.group(1): int(l.group(2)) for l in
                     re.finditer(r'<path[^>]*data-label="([^"]+)"[^>]*data-last="(\d+)"', m.group(2))}
            charts[ident] = (int(re.search(r'data-points="(\d+)"', m.group(1)).group(1)), lines)
        # Devices 1 and 5 and host memory, each with the device total and the workload; every
        # line ends at 0 (the workload exited); the workload's own chart has its three devices.
        self.assertEqual(sorted(charts), sorted(["device-chart--1", "device-chart-1", "device-chart-5",
                                                 f"process-chart-{workload['pid']}"]), dom[:3000])
        for ident in ("device-chart--1", "device-chart-1", "device-chart-5"):
            self.assertGreater(charts[ident][0], 0, ident)
            self.assertEqual(charts[ident][1], {"all processes": 0, label: 0}, ident)
        self.assertEqual(charts[f"process-chart-{workload['pid']}"][1], {"host pinned": 0, "GPU 1": 0, "GPU 5": 0})
        row = re.search(r'<tr data-pid="%d">(.*?)</tr>' % workload["pid"], dom, re.S)
        self.assertEqual(cells(row.group(1)), [label, "exited", "10.0 MiB", "2.0 MiB", "4", "3", "0"])
        leak = re.search(r'<tr data-leak-pid="%d">(.*?)</tr>' % workload["pid"], dom, re.S)
        self.assertEqual(cells(leak.group(1)), [label, "2.0 MiB", "1", "GPU 1"])
        oom = re.search(r'<h2>Out-of-memory failures</h2><div id="ooms"><table>(.*?)</table>', dom, re.S)
        self.assertEqual(cells(oom.group(1))[:3], [f"python3 ({probe['pid']})", "GPU 0", "1.0 TiB"])
        # The OOM forecast of each GPU the run used, at its highest risk: a few MiB of 80 GiB.
        forecast = {int(m.group(1)): cells(m.group(2)) for m in
                    re.finditer(r'<tr data-forecast-device="(\d+)">(.*?)</tr>', dom, re.S)}
        self.assertEqual(sorted(forecast), [1, 5], dom[:3000])
        self.assertEqual([(row[0], row[1], row[3]) for row in forecast.values()],
                         [("GPU 1", "low", "80.0 GiB"), ("GPU 5", "low", "80.0 GiB")])
        self.assertIn("no live allocation at the end", dom)  # fragmentation: everything was freed

    def test_calls_by_library_has_a_row_per_calling_object(self):
        # trace_libs (Callers.TRACE_LIBS): the program and two of its libraries, most calls first.
        page = self.box.path("report.html")
        rc, s, p = self.trace_run("--html", page, "--latency-every", "1", cmd=[trace_libs()],
                                  env=self.env(LD_LIBRARY_PATH=fgtest.libdir()))
        self.assertEqual(rc, 0, p.describe())
        self.assertEqual(len(s["processes"]), 1, s["processes"])
        proc = s["processes"][0]
        self.assertEqual(counts_by_object(proc), Callers.TRACE_LIBS)
        dom = self.rendered(page)
        # Timed (every call entry/return probes saw, with --latency-every 1): the summary's
        # time_ns as the page writes it; the others "-".
        mode = self.library_modes(s).get(backend_lib())
        times = {c["object"]: page_duration(c["time_ns"]) if c["timed_calls"] else "-" for c in proc["callers"]}
        self.assertEqual({o: t != "-" for o, t in times.items()},
                         {o: n > 0 for o, n in Callers.PROBED[mode].items()}, (mode, proc["callers"]))
        label = f"trace_libs ({proc['pid']})"
        rows = [(int(m.group(1)), m.group(2), cells(m.group(3))) for m in
                re.finditer(r'<tr data-caller-pid="(\d+)" data-caller="([^"]+)">(.*?)</tr>', dom, re.S)]
        self.assertEqual(rows, [
            (proc["pid"], "libtrace_alpha.so",
             [label, "libtrace_alpha.so", "7", "0", "3.0 MiB", "3.0 MiB", times["libtrace_alpha.so"]]),
            (proc["pid"], "libtrace_beta.so",
             [label, "libtrace_beta.so", "5", "1", "4.0 MiB", "4.0 MiB", times["libtrace_beta.so"]]),
            (proc["pid"], "trace_libs",
             [label, "trace_libs", "2", "0", "512.0 KiB", "512.0 KiB", times["trace_libs"]])], dom[:3000])


# ---- 10. a ring buffer too small -----------------------------------------------------------------
class LostEvents(TraceCase):
    PAIRS, KIB = 20000, 64

    def test_tiny_ring_buffer_reports_drops_and_the_kernel_books_stay_exact(self):
        # The reader keeps up with a 4 KiB ring on an idle machine; the command stops it
        # (SIGSTOP to its parent, the collector) while the workload runs, as a busy host would
        # deschedule it: 40,000 records into room for ~100 (a 4 KiB ring buffer, 40 bytes a
        # record), so records are lost for certain.
        stalled = 'kill -STOP $PPID; "$0" churn "$1" "$2"; s=$?; kill -CONT $PPID; exit $s'
        rc, s, p = self.trace_run("--ringbuf-size", "4096", "--fail-on-leak",
                                  cmd=["sh", "-c", stalled, trace_workload(), self.PAIRS, self.KIB])
        self.assertEqual(rc, 5, p.describe())  # a verdict was asked for, events were lost
        self.assertEqual((s["verdict"]["status"], s["verdict"]["trustworthy"]), ("events_lost", False))
        self.assertTrue(s["drops"]["events_lost"])
        self.assertGreater(s["drops"]["rb_drops"], 0)
        pid = int(re.search(r"^pid (\d+): churn done$", p.stdout, re.M).group(1))
        q = self.process(s, pid)
        with self.subTest("the command has ended, whether or not its exit event got through"):
            self.assertEqual(q["state"], "exited", json.dumps({k: v for k, v in q.items() if k != "calls"}))
        with self.subTest("the in-kernel books (struct fg_book) never depend on the ring buffer"):
            self.check_kernel_books(q)

    def check_kernel_books(self, q):
        chunk = self.KIB * KiB
        self.assertIn("kernel_books", q, "the summary does not expose the in-kernel books")
        self.assertEqual(q["kernel_books"], [{
            "device": 0, "kind": "device",
            "alloc_calls": self.PAIRS + 2, "alloc_bytes": 8 * MiB + self.PAIRS * chunk + 1 * MiB,
            "free_calls": self.PAIRS + 1, "free_bytes": 8 * MiB + self.PAIRS * chunk,
            "implicit_free_bytes": 1 * MiB, "live_bytes": 0, "peak_bytes": 8 * MiB + chunk, "failed_calls": 0}])


# ---- 11. arguments, missing processes, privileges, check ----------------------------------------
class Errors(TraceCase):
    def trace(self, *args, user=None):
        argv = [tracer(), *map(str, args)]
        if user:
            argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
        return self.box.run(argv, env=self.env(), cwd="/")

    def assert_fails(self, p, status, *needles):
        self.assertEqual(p.returncode, status, p.describe())
        for n in needles:
            self.assertIn(n, p.stderr, p.describe())

    def test_bad_arguments_exit_2_naming_the_problem(self):
        self.assert_fails(self.trace(), 2, "subcommand")
        self.assert_fails(self.trace("attach"), 2, "--pid", "required")
        self.assert_fails(self.trace("attach", "-p", "abc"), 2, '"abc" is not a process id')
        self.assert_fails(self.trace("attach", "-p", "12,x"), 2, '"x" is not a process id')
        self.assert_fails(self.trace("run", "--max-peak", "12XB", "--", "true"), 2, "--max-peak", "unknown unit 'XB'")
        self.assert_fails(self.trace("run"), 2, "command", "required")
        self.assert_fails(self.trace("run", "--ringbuf-size", "lots", "--", "true"), 2, "--ringbuf-size", "lots")
        page = os.sysconf("SC_PAGESIZE")
        self.assert_fails(self.trace("run", "--ringbuf-size", "0", "--", "true"), 2, "--ringbuf-size", "0 bytes",
                          "power of two and a multiple of the page size")
        self.assert_fails(self.trace("run", "--ringbuf-size", "3MiB", "--", "true"), 2, "--ringbuf-size",
                          "3145728 bytes", "the nearest are 2MiB and 4MiB")
        self.assert_fails(self.trace("run", "--ringbuf-size", str(page // 2), "--", "true"), 2, "--ringbuf-size",
                          f"use {page // 1024}KiB")
        self.assert_fails(self.trace("run", "--stacks", "--max-stacks", "0", "--", "true"), 2, "--max-stacks",
                          "not in range 1 to 262144")
        self.assert_fails(self.trace("run", "--max-stacks", "64", "--", "true"), 2, "--max-stacks", "--stacks")
        for value in ("nan", "inf", "-1", "0", "1e9", "2s"):
            with self.subTest(interval=value):
                self.assert_fails(self.trace("monitor", "-i", value), 2, "--interval",
                                  f"'{value}' is not a number of seconds above 0 and at most 3600")
        self.assert_fails(self.trace("run", "-d", "nan", "--", "true"), 2, "--duration",
                          "'nan' is not a number of seconds above 0 and at most 1e+09")

    def test_pid_that_does_not_exist_exits_12(self):
        gone = subprocess.Popen(["true"])
        gone.wait()
        self.assert_fails(self.trace("attach", "-p", gone.pid), 12, f"process {gone.pid} does not exist")

    def test_pid_without_a_cuda_library_exits_12_suggesting_lib(self):
        sleeper = subprocess.Popen(["sleep", str(TIMEOUT)], stdin=subprocess.DEVNULL)
        self.box._live.append(sleeper)
        self.assert_fails(self.trace("attach", "-p", sleeper.pid), 12, f"process {sleeper.pid} (sleep)",
                          "maps no CUDA library", "--lib PATH")

    def test_unprivileged_user_exits_10_naming_sudo(self):
        nobody = 65534
        w = self.start([fgtest.workload(), "alloc", 0, 1, "hold"])
        w.out.until(pid_line("1 MiB on device 0"), "the workload's line")
        for args in (["attach", "-p", w.pid], ["monitor", "-d", "1"]):
            with self.subTest(args=args):
                self.assert_fails(self.trace(*args, user=nobody), 10, "sudo", "CAP_BPF")
        # run documents 125 for its own failures (10..13 would be taken for the command's).
        self.assert_fails(self.trace("run", "--", "true", user=nobody), 125, "sudo", "CAP_BPF")
        w.close_stdin()
        self.assertEqual(w.wait(), 0)

    def test_check_as_an_unprivileged_user_exits_10(self):
        p = self.trace("check", user=65534)
        self.assertEqual(p.returncode, 10, p.describe())
        self.assertRegex(p.stdout, r"privileges\s+FAIL\s+not root: run with sudo", p.stdout)

    def test_check_as_root(self):
        p = self.trace("check")
        self.assertEqual(p.returncode, 0, p.describe())
        lines = {line.split("  ")[0].strip(): line for line in p.stdout.splitlines()}
        for what in ("privileges", "kernel BTF (/sys/kernel/btf/vmlinux)", "uprobes (perf uprobe PMU)",
                     "BPF programs, ring buffer and scheduler tracepoints"):
            self.assertIn(what, lines, p.stdout)
            self.assertRegex(lines[what], r"\s ok\s", lines[what])


def main():
    if os.geteuid() != 0:
        print("SKIPPED: fakegpu-trace loads BPF programs and needs root (run the suite with sudo); "
              f"running as uid {os.geteuid()}", flush=True)
        return 0
    missing = [t for t in ("bpftool", "nm", "setpriv") if not shutil.which(t)]
    if missing:
        print(f"test_trace.py needs {', '.join(missing)} (scripts/deps.sh installs them)", flush=True)
        return 1
    return fgtest.main()


if __name__ == "__main__":
    raise SystemExit(main())
