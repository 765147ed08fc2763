#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fakegpu-trace's HTTP server end to end (root): `monitor --listen` serving /metrics, the JSON
API and the dashboard page while a workload of exactly known behaviour holds memory; the page
loaded in headless Chromium; a real Prometheus server scraping the exporter on loopback with
the fleet rules of scripts/deploy; bad requests that must never stop the collector.

The workload is bin/trace_workload mixed hold (tests/workloads/trace_workload.cpp): device 1
cudaMalloc 3 MiB + cudaMallocManaged 2 MiB, pinned host 1 MiB, device 5 cuMemAlloc_v2 5 MiB,
held until its stdin closes. Readiness is always a line a process prints or a condition
polled with a deadline; every wait is bounded.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import fgtest
from fgtest import MiB
import test_trace as tt

TIMEOUT = fgtest.TIMEOUT
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "scripts", "deploy")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
ARTIFACTS = None  # set in main(): BUILD/test-artifacts


def parse_metrics(text):
    """Prometheus text format → [(name, {label: value}, float)] (comments skipped)."""
    out = []
    rx = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
    lab = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = rx.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = {k: v.encode().decode("unicode_escape") for k, v in lab.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Devices of their own: the monitor sees every ledger on the host, and tests running beside
# this one (or earlier runs) book the default A100s in theirs; H200s have other UUIDs.
DEVICES = "h200:8"


class Served(tt.TraceCase):
    """A monitor serving on an ephemeral loopback port, and the workload holding its memory."""

    token = None

    def env(self, **overrides):
        return super().env(**{"FAKEGPU_DEVICES": DEVICES, **overrides})

    def setUp(self):
        super().setUp()
        self.mon, served = self.start_serving_monitor(token=self.token)
        self.base = "http://" + served
        self.work = self.start([tt.trace_workload(), "mixed", "hold"])
        hold = tt.pid_line("holding")
        self.work.out.until(hold, "the workload's holding line")
        self.pid = int(hold.match.group(1))

    def tearDown(self):
        if self.work.popen.poll() is None:
            self.work.close_stdin()
            self.work.wait()
        if self.mon.popen.poll() is None:
            self.mon.popen.send_signal(signal.SIGTERM)
            self.mon.wait()
        super().tearDown()

    def get(self, path, headers=None, token=None):
        """(status, headers, body) of a GET; HTTP errors are answers too."""
        h = dict(headers or {})
        tok = token if token is not None else self.token
        if tok:
            h["Authorization"] = "Bearer " + tok
        req = urllib.request.Request(self.base + path, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def chromium(self, *args):
        """Headless Chromium's command with a fresh profile, then args; skips where there is none."""
        if not CHROMIUM:
            self.skipTest("chromium is not installed (Debian chromium; scripts/deps.sh installs it)")
        profile = tempfile.mkdtemp(dir=self.box.dir)
        return [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                f"--user-data-dir={profile}", "--virtual-time-budget=5000", *args]

    def dom(self, path):
        """The page at path as headless Chromium has rendered it."""
        return subprocess.run(self.chromium("--dump-dom", self.base + path), capture_output=True, text=True,
                              timeout=120).stdout

    def held(self):
        """The workload's process in /api/v1/processes/{pid} once the books show it holding."""
        def look():
            status, _, body = self.get(f"/api/v1/processes/{self.pid}")
            if status != 200:
                return None
            p = json.loads(body)
            return p if p.get("live_bytes") == 10 * MiB else None
        return self.poll_until("the workload's 10 MiB in the books", look)


class Exporter(Served):
    def test_metrics_have_the_workloads_exact_series_and_pass_promtool(self):
        self.held()
        status, headers, body = self.get("/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers)
        samples = parse_metrics(body)
        mine = {(l["device"], l["kind"]): v for n, l, v in samples
                if n == "fakegpu_process_memory_bytes" and l.get("pid") == str(self.pid)}
        self.assertEqual({k: v for k, v in mine.items() if v},
                         {("1", "device"): 3 * MiB, ("1", "managed"): 2 * MiB, ("5", "device"): 5 * MiB,
                          ("-1", "host"): 1 * MiB})
        comms = {l["comm"] for n, l, v in samples if l.get("pid") == str(self.pid)}
        self.assertEqual(comms, {"trace_workload"})
        allocs = sum(v for n, l, v in samples if n == "fakegpu_process_allocations_total" and l.get("pid") == str(self.pid))
        self.assertEqual(allocs, 4)
        self.assertIn(("fakegpu_build_info", 1.0), [(n, v) for n, l, v in samples])
        self.assertEqual([v for n, l, v in samples if n == "fakegpu_collector_ringbuf_drops_total"], [0.0])
        if PROMTOOL:
            p = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True, text=True,
                               timeout=TIMEOUT)
            self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        else:
            print("note: promtool not installed (Debian prometheus); the lint check was not run", flush=True)

    def test_device_series_agree_with_the_fakes_nvml(self):
        self.held()
        nv = self.ok(self.box.probe("nvml", FAKEGPU_DEVICES=DEVICES))
        nvml = {d["uuid"]: d for d in self.step(nv, 0, "nvml")["devices"]}
        self.assertEqual(len(nvml), 8)
        samples = parse_metrics(self.get("/metrics")[2])
        for family, key in (("fakegpu_device_memory_total_bytes", "total"), ("fakegpu_device_memory_used_bytes", "used"),
                            ("fakegpu_device_memory_free_bytes", "free")):
            got = {l["uuid"]: v for n, l, v in samples if n == family and l["uuid"] in nvml}
            self.assertEqual(got, {u: float(d[key]) for u, d in nvml.items()}, family)
        names = {l["uuid"]: l["name"] for n, l, v in samples if n == "fakegpu_device_memory_total_bytes"}
        self.assertEqual({names[u] for u in nvml}, {"Fake NVIDIA H200"})

    def test_json_api(self):
        p = self.held()
        self.assertEqual((p["pid"], p["comm"], p["state"], p["peak_bytes"]), (self.pid, "trace_workload", "running",
                                                                            10 * MiB))
        # What mixed holds, largest first: cuMemAlloc_v2 5 MiB on device 5, cudaMalloc 3 MiB and
        # cudaMallocManaged 2 MiB on device 1, cudaMallocHost 1 MiB.
        self.assertEqual(p["outstanding_count"], 4)
        self.assertEqual([(a["size"], a["device"], a["kind"], a["api"]) for a in p["outstanding_allocations"]],
                         [(5 * MiB, 5, "device", "driver"), (3 * MiB, 1, "device", "runtime"),
                          (2 * MiB, 1, "managed", "runtime"), (1 * MiB, -1, "host", "runtime")])
        status, _, body = self.get("/api/v1/processes")
        self.assertEqual(status, 200)
        listed = [q for q in json.loads(body)["processes"] if q["pid"] == self.pid]
        self.assertEqual(len(listed), 1, body)
        self.assertEqual(listed[0]["live_bytes"], 10 * MiB)
        status, _, body = self.get("/api/v1/devices")
        self.assertEqual(status, 200)
        mine = [d for d in json.loads(body)["devices"] if d.get("name") == "Fake NVIDIA H200"]
        self.assertEqual(len(mine), 8, body)
        status, _, body = self.get("/api/v1/summary")
        self.assertEqual(status, 200)
        self.assertIn(self.pid, [q["pid"] for q in json.loads(body)["processes"]])

    def test_a_process_calls_by_library_in_the_api_and_metrics(self):
        # tests/workloads/trace_libs/main.cpp: the program and two of its own libraries.
        w = self.start([tt.trace_libs(), "hold"])
        w.out.until(lambda line: line.strip() == "trace_libs done", "trace_libs' done line")
        want = {"trace_libs": (2, 0, 512 * tt.KiB, 512 * tt.KiB), "libtrace_alpha.so": (7, 0, 3 * MiB, 3 * MiB),
                "libtrace_beta.so": (5, 1, 4 * MiB, 4 * MiB)}

        def callers():
            status, _, body = self.get(f"/api/v1/processes/{w.pid}")
            return status == 200 and tt.counts_by_object(json.loads(body)) == want
        self.poll_until("trace_libs' callers in the API", callers)
        samples = parse_metrics(self.get("/metrics")[2])
        series = lambda name: {l["object"]: v for n, l, v in samples if n == name and l["pid"] == str(w.pid)}
        self.assertEqual(series("fakegpu_process_caller_calls_total"),
                         {o: float(c[0]) for o, c in want.items()})
        self.assertEqual(series("fakegpu_process_caller_errors_total"),
                         {o: float(c[1]) for o, c in want.items()})
        self.assertEqual(series("fakegpu_process_caller_alloc_bytes_total"),
                         {o: float(c[2]) for o, c in want.items()})
        self.assertEqual(series("fakegpu_process_caller_free_bytes_total"),
                         {o: float(c[3]) for o, c in want.items()})
        self.assertEqual(set(series("fakegpu_process_caller_timed_calls_total")), set(want))
        w.close_stdin()
        self.assertEqual(w.wait(), 0, w.describe())

    def test_bad_requests_get_proper_statuses_and_the_collector_keeps_going(self):
        self.held()
        self.assertEqual(self.get("/no/such/path")[0], 404)
        self.assertEqual(self.get("/api/v1/processes/abc")[0], 400)
        self.assertEqual(self.get("/api/v1/processes/999999999")[0], 404)
        # A header far over the limit: 431, and the server still answers afterwards.
        self.assertIn(self.get("/metrics", headers={"X-Big": "x" * 20000})[0], (400, 431))
        # A client that connects and sends nothing: others are served meanwhile.
        host, port = self.base[len("http://"):].rsplit(":", 1)
        idle = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        try:
            self.assertEqual(self.get("/healthz")[0], 200)
            # The collector still consumes events: a new allocation shows up.
            child = self.start([tt.trace_workload(), "mixed", "hold"])
            hold = tt.pid_line("holding")
            child.out.until(hold, "the second workload's holding line")
            pid2 = int(hold.match.group(1))
            self.poll_until("the second workload in the books",
                       lambda: self.get(f"/api/v1/processes/{pid2}")[0] == 200)
            child.close_stdin()
            self.assertEqual(child.wait(), 0)
        finally:
            idle.close()
        self.assertIsNone(self.mon.popen.poll(), "the monitor stopped")


class Authenticated(Served):
    token = "s3cret-token-for-tests"

    def test_every_endpoint_needs_the_bearer_token(self):
        for path in ("/", "/metrics", "/api/v1/processes", f"/api/v1/processes/{self.pid}", "/api/v1/summary"):
            status, headers, _ = self.get(path, token="")
            self.assertEqual(status, 401, path)
            self.assertTrue(headers.get("WWW-Authenticate", "").startswith("Bearer"), headers)
            self.assertEqual(self.get(path, token="wrong")[0], 401, path)
        self.held()  # with the token
        self.assertEqual(self.get("/metrics")[0], 200)


class Browser(Served):
    def test_page_shows_the_workload_in_headless_chromium(self):
        self.chromium()  # skips where there is none
        self.held()
        dom = self.dom("/")
        row = re.search(r'<tr[^>]*data-pid="%d"[^>]*>(.*?)</tr>' % self.pid, dom, re.S)
        self.assertIsNotNone(row, "no table row for the workload in the page:\n" + dom[:3000])
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
        self.assertIn("trace_workload", cells)
        self.assertIn("10.0 MiB", cells, cells)
        # The device charts: the workload's area on devices 1 (3 MiB + 2 MiB managed) and 5.
        charts = {m.group(1): json.loads(m.group(2).replace("&quot;", '"')) for m in
                  re.finditer(r'<canvas[^>]*id="device-chart-(\d+)"[^>]*data-series="([^"]*)"', dom)}
        label = f"{self.pid} trace_workload"
        for device, live in (("1", 5 * MiB), ("5", 5 * MiB)):
            self.assertIn(device, charts, dom[:3000])
            self.assertEqual([a["last"] for a in charts[device] if a["label"] == label], [live], charts[device])
        self.assertEqual([a for d in ("0", "2", "3", "4", "6", "7") for a in charts.get(d, [])
                          if a["label"] == label], [])
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, "dashboard.png")
        subprocess.run(self.chromium("--window-size=1400,1000", f"--screenshot={shot}", self.base + "/"),
                       capture_output=True, timeout=120)
        self.assertTrue(os.path.getsize(shot) > 10000, "the screenshot is empty")
        print(f"note: screenshot saved as {shot}", flush=True)


    def test_a_page_opened_after_the_workload_ran_draws_its_past_on_first_paint(self):
        """History on the server: the workload holds, exits, and only then is the page opened;
        its first drawing already has the workload's areas from /api/v1/history."""
        self.chromium()  # skips where there is none
        self.held()  # published, so in the history
        self.work.close_stdin()
        self.assertEqual(self.work.wait(), 0)

        def exited():
            status, _, body = self.get(f"/api/v1/processes/{self.pid}")
            return status == 200 and json.loads(body)["state"] == "exited"
        self.poll_until("the workload's exit in the books", exited)
        status, _, body = self.get("/api/v1/history")
        self.assertEqual(status, 200)
        h = json.loads(body)
        self.assertEqual((h["interval_s"], h["history_s"], h["max_samples"]), (0.2, 3600, 18001))
        self.assertLessEqual(len(h["samples"]), h["max_samples"])
        # Its most on each device (a refresh may also have caught it between two allocations).
        most = {}
        for sample in h["samples"]:
            for p in sample["processes"]:
                if p["pid"] == self.pid:
                    most[p["device"]] = max(most.get(p["device"], 0), p["live_bytes"])
        self.assertEqual(most, {1: 5 * MiB, 5: 5 * MiB})
        dom = self.dom("/")
        first = {m.group(1): json.loads(m.group(2).replace("&quot;", '"')) for m in
                 re.finditer(r'<canvas[^>]*id="device-chart-(\d+)"[^>]*data-first-series="([^"]*)"', dom)}
        label = f"{self.pid} trace_workload"
        for device in ("1", "5"):
            self.assertIn(device, first, dom[:3000])
            mine = [a for a in first[device] if a["label"] == label]
            self.assertEqual([a["max"] for a in mine], [5 * MiB], first[device])
            self.assertGreaterEqual(mine[0]["points"], 2, mine)  # the past, not just this refresh
        # Fragmentation over time, per GPU, drawn from the same history.
        frag = {m.group(1): json.loads(m.group(2).replace("&quot;", '"')) for m in
                re.finditer(r'<canvas[^>]*id="frag-chart-(\d+)"[^>]*data-first-series="([^"]*)"', dom)}
        self.assertIn("1", frag, dom[:3000])
        self.assertGreaterEqual(frag["1"][0]["points"], 1, frag["1"])


class Kernels(Served):
    def test_a_process_kernels_in_metrics_and_in_the_pages_detail(self):
        # The page opened on one process (/?pid=N) shows its details, kernels included.
        h = self.box.hold("launch:saxpy:7", "launch:_Z6reducePfi:3", "wait")
        pid = h.popen.pid
        want = [tt.finished("saxpy", 7, True), tt.finished("_Z6reducePfi", 3, True)]
        got = {}

        def kernels():
            status, _, body = self.get(f"/api/v1/processes/{pid}")
            got["kernels"] = json.loads(body).get("kernels") if status == 200 else None
            return got["kernels"] is not None and tt.kernel_counts(got["kernels"]) == want
        self.poll_until("the probe's kernels in the API", kernels)
        api = {k["name"]: k for k in got["kernels"]}
        for k in api.values():
            self.assertEqual(k["mean_host_ns"], k["host_ns"] // k["ran"] if k["ran"] else 0, k)
            self.assertEqual(k["host_ns"] > 0, k["ran"] > 0, k)
        samples = parse_metrics(self.get("/metrics")[2])

        def series(name):
            return {l["kernel"]: v for n, l, v in samples if n == name and l["pid"] == str(pid)}
        self.assertEqual(series("fakegpu_process_kernel_launches_total"), {"saxpy": 7.0, "_Z6reducePfi": 3.0})
        self.assertEqual(series("fakegpu_process_kernel_runs_total"), {k[0]: float(k[2]) for k in want})
        self.assertEqual(series("fakegpu_process_kernel_recorded_total"), {k[0]: float(k[3]) for k in want})
        # The same host time in seconds (the shortest text that reads back as the same double).
        self.assertEqual(series("fakegpu_process_kernel_host_seconds_total"),
                         {name: k["host_ns"] / 1e9 for name, k in api.items()})
        dom = self.dom(f"/?pid={pid}")
        table = re.search(r'<table id="detail-kernels">.*?<tbody>(.*?)</tbody>', dom, re.S)
        self.assertIsNotNone(table, dom[:3000])
        rows = [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
                for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.S)]
        # The page's times as its duration() writes them; "–" where none ran.
        self.assertEqual(rows, [[name, str(launches), str(ran), str(recorded),
                                 tt.page_duration(api[name]["host_ns"]) if ran else "–",
                                 tt.page_duration(api[name]["mean_host_ns"]) if ran else "–"]
                                for name, launches, ran, recorded in want])
        h.release()


class CallersDetail(Served):
    def test_a_process_calls_by_library_in_the_pages_detail(self):
        # trace_libs (test_trace.Callers.TRACE_LIBS) runs to its end; the page opened on it
        # (/?pid=N) shows its calls by calling object, as the API has them.
        libs = self.start([tt.trace_libs()], env=self.env(LD_LIBRARY_PATH=fgtest.libdir()))
        self.assertEqual(libs.wait(), 0, libs.describe())

        def callers():
            status, _, body = self.get(f"/api/v1/processes/{libs.pid}")
            p = json.loads(body) if status == 200 else {}
            return p if p.get("state") == "exited" and tt.counts_by_object(p) == tt.Callers.TRACE_LIBS else None
        p = self.poll_until("trace_libs's callers in the API", callers)
        self.assertEqual([c["object"] for c in p["callers"]], ["libtrace_alpha.so", "libtrace_beta.so", "trace_libs"])
        dom = self.dom(f"/?pid={libs.pid}")
        table = re.search(r'<table id="detail-callers">.*?<tbody>(.*?)</tbody>', dom, re.S)
        self.assertIsNotNone(table, dom[:3000])
        # Time: the API's time_ns as the page writes it where a call was timed (entry/return
        # probes time 1 in --latency-every), else "–".
        time = {c["object"]: tt.page_duration(c["time_ns"]) if c["timed_calls"] else "–" for c in p["callers"]}
        rows = [(m.group(1), tt.cells(m.group(2))) for m in
                re.finditer(r'<tr data-caller="([^"]+)">(.*?)</tr>', table.group(1), re.S)]
        self.assertEqual(rows, [
            ("libtrace_alpha.so", ["libtrace_alpha.so", "7", "0", "3.0 MiB", "3.0 MiB", time["libtrace_alpha.so"]]),
            ("libtrace_beta.so", ["libtrace_beta.so", "5", "1", "4.0 MiB", "4.0 MiB", time["libtrace_beta.so"]]),
            ("trace_libs", ["trace_libs", "2", "0", "512.0 KiB", "512.0 KiB", time["trace_libs"]])], table.group(1))


class ListenArguments(fgtest.TestCase):
    def test_bad_listen_options_exit_2_before_tracing(self):
        empty = self.box.path("empty-token")
        with open(empty, "w") as f:
            f.write("\n")
        for args, needle in ((["--listen", "0.0.0.0:9400"], "not a loopback address"),
                             (["--listen", "10.1.2.3:9400"], "add --allow-remote"),
                             (["--listen", "nonsense"], "bad listen address 'nonsense': missing :PORT"),
                             (["--listen", "127.0.0.1:99999"], "99999"),
                             (["--listen", "127.0.0.1:0", "--auth-token-file", empty], "holds no token"),
                             (["--auth-token-file", empty], "holds no token")):
            p = self.box.run([tt.tracer(), "monitor", "-d", "1", *args])
            self.assertEqual(p.returncode, 2, p.describe())
            self.assertIn(needle, p.stderr, p.describe())
            self.assertNotIn("ready:", p.stderr, p.describe())  # refused before any probe


class Fleet(fgtest.TestCase):
    def test_deploy_rules_and_config_pass_promtool(self):
        if not PROMTOOL:
            self.skipTest("promtool is not installed (Debian prometheus; scripts/deps.sh installs it)")
        p = subprocess.run([PROMTOOL, "check", "rules", os.path.join(DEPLOY, "fakegpu-rules.yml")],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS: 10 rules found", p.stdout)
        conf = self.box.path("prometheus.yml")
        token = self.box.path("token")
        with open(token, "w") as f:
            f.write("t\n")
        with open(os.path.join(DEPLOY, "prometheus.yml")) as f:
            text = f.read().replace("/etc/prometheus/fakegpu-token", token)
        with open(conf, "w") as f:
            f.write(text)
        shutil.copy(os.path.join(DEPLOY, "fakegpu-rules.yml"), self.box.path("fakegpu-rules.yml"))
        p = subprocess.run([PROMTOOL, "check", "config", conf], capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_grafana_dashboard_queries_only_exported_families(self):
        with open(os.path.join(DEPLOY, "grafana-dashboard.json")) as f:
            dash = json.load(f)
        exprs = [t["expr"] for panel in dash["panels"] for t in panel["targets"]]
        used = set(re.findall(r"\bfakegpu_[a-z_]+", " ".join(exprs)))
        with open(os.path.join(DEPLOY, "fakegpu-rules.yml")) as f:
            rules = f.read()
        families = {"fakegpu_process_memory_bytes", "fakegpu_process_peak_memory_bytes", "fakegpu_process_leaked_bytes",
                    "fakegpu_device_memory_used_bytes", "fakegpu_device_memory_total_bytes",
                    "fakegpu_api_calls_total", "fakegpu_api_call_duration_seconds_bucket", "fakegpu_copy_bytes_total",
                    "fakegpu_collector_events_total", "fakegpu_collector_ringbuf_drops_total", "fakegpu_build_info"}
        self.assertLessEqual(used, families | set(re.findall(r"record: (fakegpu\S+)", rules)), used - families)


class PrometheusServer(Served):
    def test_a_real_prometheus_scrapes_the_exporter(self):
        if not PROMETHEUS:
            self.skipTest("prometheus is not installed (Debian prometheus; scripts/deps.sh installs it)")
        self.held()
        port = free_port()
        target = self.base[len("http://"):]
        conf = self.box.path("prom.yml")
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    f"rule_files:\n  - {os.path.join(DEPLOY, 'fakegpu-rules.yml')}\n"
                    "scrape_configs:\n  - job_name: fakegpu\n    static_configs:\n"
                    f"      - targets: ['{target}']\n")
        prom = self.start([PROMETHEUS, f"--config.file={conf}", f"--storage.tsdb.path={self.box.path('tsdb')}",
                           f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
        try:
            api = f"http://127.0.0.1:{port}/api/v1/query?query="

            def query(q):
                try:
                    with urllib.request.urlopen(api + urllib.parse.quote(q), timeout=TIMEOUT) as r:
                        res = json.load(r)["data"]["result"]
                except (urllib.error.URLError, ConnectionError, OSError):
                    return None
                return res or None

            res = self.poll_until("the workload's series in Prometheus",
                             lambda: query(f'fakegpu_process_memory_bytes{{pid="{self.pid}"}} > 0'), timeout=60)
            got = {(r["metric"]["device"], r["metric"]["kind"]): float(r["value"][1]) for r in res}
            self.assertEqual(got, {("1", "device"): 3 * MiB, ("1", "managed"): 2 * MiB, ("5", "device"): 5 * MiB,
                                   ("-1", "host"): 1 * MiB})
            ratio = self.poll_until("the recording rule", lambda: query("fakegpu:device_memory_used:ratio"), timeout=60)
            self.assertTrue(all(0 <= float(r["value"][1]) <= 1 for r in ratio), ratio)
            # The OOM forecast's risk per device, the series the FakeGPUDeviceOOMRisk alert reads.
            risk = self.poll_until("the OOM risk series", lambda: query("fakegpu_device_oom_risk"), timeout=60)
            self.assertTrue(all(float(r["value"][1]) in (0, 1, 2, 3) for r in risk), risk)
        finally:
            prom.popen.send_signal(signal.SIGTERM)
            prom.wait()


def main():
    global ARTIFACTS
    if os.geteuid() != 0:
        print("SKIPPED: fakegpu-trace loads BPF programs and needs root (run the suite with sudo); "
              f"running as uid {os.geteuid()}", flush=True)
        return 0
    import sys
    build = sys.argv[sys.argv.index("--build") + 1] if "--build" in sys.argv else fgtest.BUILD
    ARTIFACTS = os.path.join(build, "test-artifacts")
    return fgtest.main()


if __name__ == "__main__":
    import urllib.parse  # noqa: F401 (used by PrometheusServer)
    raise SystemExit(main())
