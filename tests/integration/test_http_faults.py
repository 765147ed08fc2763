#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fakegpu-trace's HTTP server against hostile and broken clients (root: `monitor --listen`
loads BPF programs): hundreds of silent and slowly trickling connections (slowloris), hundreds
of event-stream readers that read nothing or vanish, malformed and pipelined requests, path
traversal, the bearer token on every route, and loopback unless --allow-remote.

Every client here talks raw HTTP over its own socket, so the bytes sent are exactly the ones
written. Each socket read has a timeout: it bounds a failure, it is never the thing measured.
The server's own counters are read from /metrics (the fakegpu_http_* families).
"""

import json
import os
import re
import signal
import socket
import struct
import time

import fgtest
import test_trace as tt

TIMEOUT = fgtest.TIMEOUT
ANSWER_S = 10  # a bound on one answer; a healthy server answers in milliseconds

# The server's documented defaults (userspace/server/API.md, "Limits").
MAX_CONNECTIONS_PER_CLIENT = 32
MAX_STREAMS = 128
REQUEST_TIMEOUT_S = 10


class Conn:
    """One raw HTTP/1.1 connection: send bytes, read responses (bounded), see it closed."""

    def __init__(self, addr, source=None):
        self.sock = socket.create_connection(addr, timeout=ANSWER_S,
                                             source_address=(source, 0) if source else None)
        self.buf = b""
        self.eof = False

    def send(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def try_send(self, data):
        """False when the server has closed the connection (the write fails)."""
        try:
            self.send(data)
            return True
        except OSError:
            return False

    def _fill(self):
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.eof = True
        self.buf += chunk

    def response(self, head=False):
        """(status, {lower-case name: value}, body bytes) of the next response; None when the
        server closed the connection first. A socket timeout here fails the test."""
        while b"\r\n\r\n" not in self.buf:
            if self.eof:
                return None
            self._fill()
        text, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = text.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if head or "content-length" not in headers:
            return status, headers, b""
        length = int(headers["content-length"])
        while len(self.buf) < length and not self.eof:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, headers, body

    def read_until(self, needle):
        """True once needle has arrived; False when the server closed first."""
        while needle not in self.buf and not self.eof:
            self._fill()
        return needle in self.buf

    def closed_by_server(self, timeout=ANSWER_S):
        """True once the server has closed the connection (EOF or reset) within timeout;
        what it sent before is kept in buf."""
        self.sock.settimeout(timeout)
        try:
            while not self.eof:
                self._fill()
            return True
        except socket.timeout:
            return False
        finally:
            self.sock.settimeout(ANSWER_S)

    def reset(self):
        """Closes with a reset (SO_LINGER 0): a client that crashed or lost its network."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self):
        self.sock.close()


def request(method, target, *headers):
    return (f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "".join(h + "\r\n" for h in headers)
            + "\r\n").encode()


class Monitor(tt.TraceCase):
    """`monitor -q --listen 127.0.0.1:0`, serving; nothing traced is asserted here."""

    token = None
    interval = "0.2"

    def setUp(self):
        super().setUp()
        self.mon, served = self.start_serving_monitor(self.interval, self.token)
        host, port = served.rsplit(":", 1)
        self.addr = (host, int(port))
        self.conns = []

    def tearDown(self):
        for c in self.conns:
            c.close()
        if self.mon.popen.poll() is None:
            self.mon.popen.send_signal(signal.SIGTERM)
            self.assertEqual(self.mon.wait(), 0, self.mon.describe())
        super().tearDown()

    def connect(self, source=None):
        c = Conn(self.addr, source)
        self.conns.append(c)
        return c

    def auth(self):
        return [f"Authorization: Bearer {self.token}"] if self.token else []

    def get(self, target, *headers, head=False):
        """(status, headers, body) over a fresh connection that is closed afterwards."""
        c = self.connect()
        c.send(request("HEAD" if head else "GET", target, *self.auth(), *headers))
        r = c.response(head=head)
        self.assertIsNotNone(r, f"no answer to {target}")
        c.close()
        return r

    def server_counters(self):
        """The fakegpu_http_* samples of /metrics, by name."""
        status, _, body = self.get("/metrics")
        self.assertEqual(status, 200)
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(fakegpu_http_[a-z_]+) (\S+)$", body.decode(), re.M)}

    def assert_summary(self, r):
        status, headers, body = r
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(json.loads(body)["schema"], "fakegpu-trace/api/v1")


class Slowloris(Monitor):
    def test_hundreds_of_silent_and_trickling_connections_do_not_starve_requests(self):
        trickling = []
        for i in range(300):
            c = self.connect()
            if i % 2:  # a request that never ends, a header byte at a time
                c.send(b"GET /api/v1/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                trickling.append(c)
        for _ in range(3):
            self.assert_summary(self.get("/api/v1/summary"))
            for c in trickling:
                c.try_send(b"x")
        n = self.server_counters()
        # At the per-client limit each newcomer closed the oldest waiting connection; nobody
        # was turned away.
        self.assertGreaterEqual(n["fakegpu_http_connections_evicted_total"], 300 - MAX_CONNECTIONS_PER_CLIENT)
        self.assertEqual(n["fakegpu_http_connections_rejected_total"], 0)
        self.assertEqual(n["fakegpu_http_requests_total"], 4)  # 3 summaries and this scrape

        # The trickling ones still open keep sending a byte a second: the request as a whole
        # is late after its timeout, however steady the bytes.
        deadline = time.monotonic() + REQUEST_TIMEOUT_S + TIMEOUT
        while time.monotonic() < deadline and sum([c.try_send(b"x") for c in trickling]):
            time.sleep(1)  # the client's pace
        self.assertTrue(all(c.closed_by_server() for c in trickling))
        self.assertGreaterEqual(self.server_counters()["fakegpu_http_request_timeouts_total"], 1)
        self.assert_summary(self.get("/api/v1/summary"))


class Streams(Monitor):
    interval = "60"  # no event is published during the test: only the read notices a reader leave

    def test_hundreds_of_idle_stream_readers_leave_requests_their_room(self):
        readers, statuses = [], []
        for _ in range(200):
            c = self.connect()
            c.send(request("GET", "/api/v1/stream"))
            status, headers, body = c.response(head=True)  # a stream has no length
            statuses.append(status)
            if status == 200:
                self.assertEqual(headers["content-type"], "text/event-stream")
                readers.append(c)
            else:
                self.assertEqual(headers["retry-after"], "3")
                self.assertTrue(c.closed_by_server())
        self.assertEqual(statuses, [200] * MAX_STREAMS + [503] * (200 - MAX_STREAMS))
        # The readers read nothing more; requests are answered all the same.
        for _ in range(3):
            self.assert_summary(self.get("/api/v1/summary"))
        n = self.server_counters()
        self.assertEqual((n["fakegpu_http_streams_open"], n["fakegpu_http_streams_rejected_total"]),
                         (MAX_STREAMS, 200 - MAX_STREAMS))

        # They vanish, half with a reset, half with a close: their places are free at once,
        # though no write has gone to them.
        for i, c in enumerate(readers):
            c.reset() if i % 2 else c.close()
        self.poll_until("the streams closed", lambda: self.server_counters()["fakegpu_http_streams_open"] == 0)
        self.assertEqual(self.server_counters()["fakegpu_http_streams_gone_total"], MAX_STREAMS)
        for _ in range(MAX_STREAMS):
            c = self.connect()
            c.send(request("GET", "/api/v1/stream"))
            self.assertEqual(c.response(head=True)[0], 200)
            self.assertTrue(c.read_until(b"retry: 3000\n\n"), c.buf)


class Requests(Monitor):
    def test_malformed_requests_get_400_and_the_connection_is_closed(self):
        cases = [  # what was sent, what the message names
            (b"GARBAGE\r\n\r\n", "bad method"),
            (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + bytes(range(32)) + b"\r\n\r\n", "bad method"),  # TLS
            (b"GET  /healthz HTTP/1.1\r\n\r\n", "bad target"),
            (b"GET /he\x00althz HTTP/1.1\r\n\r\n", "bad target"),
            (b"GET /healthz\r\n\r\n", "bad target"),  # HTTP/0.9
            (b"GET /healthz HTTP/1.1 extra\r\n\r\n", "bad version"),
            (b"GET /healthz HTTP/x.y\r\n\r\n", "bad version"),
            (b"GET /healthz HTTP/1.1\nHost: a\n\n", "bad version"),  # bare LF line ends
            (b"GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n", "bad field"),
            (b"GET /healthz HTTP/1.1\r\nHost: a\r\nBad\x01Name: x\r\n\r\n", "bad field"),
            (b"GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
            (b"GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", "bad Content-Length"),
            # Both framings at once (request smuggling): refused, not guessed.
            (b"GET /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
             "bad Content-Length"),
            (b"GET /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n", "bad chunk"),
        ]
        for raw, reason in cases:
            c = self.connect()
            c.send(raw)
            r = c.response()
            self.assertIsNotNone(r, raw)
            status, headers, body = r
            self.assertEqual(status, 400, raw)
            self.assertEqual(headers["connection"], "close", raw)
            self.assertEqual(json.loads(body), {"status": 400, "error": "Bad Request",
                                                "message": "malformed HTTP request: " + reason}, raw)
            self.assertTrue(c.closed_by_server(), raw)
        self.assertEqual(self.get("/healthz")[0], 200)
        self.assertEqual(self.server_counters()["fakegpu_http_bad_requests_total"], len(cases))

    def test_pipelined_requests_are_answered_in_order(self):
        c = self.connect()
        c.send(request("GET", "/healthz") + request("HEAD", "/api/v1/summary")
               + request("GET", "/api/v1/processes/abc") + request("GET", "/nope")
               + request("GET", "/api/v1/devices"))
        status, _, body = c.response()
        self.assertEqual((status, body), (200, b"ok\n"))
        status, headers, body = c.response(head=True)
        self.assertEqual((status, body), (200, b""))
        self.assertGreater(int(headers["content-length"]), 100)
        status, _, body = c.response()
        self.assertEqual((status, json.loads(body)["message"]),
                         (400, "bad pid 'abc': expected a process id from 1 to 4294967295"))
        status, _, body = c.response()
        self.assertEqual((status, json.loads(body)["message"]), (404, "no route for /nope"))
        status, _, body = c.response()
        self.assertEqual(status, 200)
        self.assertIn("devices", json.loads(body))
        # The connection is still open for more; a request after "Connection: close" in the
        # same write is not answered.
        c.send(request("GET", "/healthz", "Connection: close") + request("GET", "/healthz"))
        status, headers, body = c.response()
        self.assertEqual((status, headers["connection"], body), (200, "close", b"ok\n"))
        self.assertTrue(c.closed_by_server())
        self.assertEqual(c.buf, b"")

    def test_path_traversal_never_serves_a_file(self):
        self.assertEqual(self.get("/assets/app.js")[0], 200)  # the embedded assets do serve
        targets = ["/../../../../etc/passwd", "/assets/../../../../etc/passwd",
                   "/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/assets/..%2f..%2f..%2fetc%2fpasswd",
                   "/assets/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", "/%2e%2e/%2e%2e/etc/passwd",
                   "/assets/.%2e/.%2e/.%2e/etc/passwd", "/assets/%252e%252e/%252e%252e/etc/passwd",
                   "/assets/..\\..\\..\\etc\\passwd", "/assets//etc/passwd", "//etc/passwd",
                   "/assets/app.js/../../../../etc/passwd", "/index.html/../../etc/passwd",
                   "/assets/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd", "/assets/app.js%00.html",
                   "/proc/self/environ", "/assets/../../../../proc/self/environ"]
        for target in targets:
            status, _, body = self.get(target)
            self.assertEqual((status, json.loads(body)["message"]), (404, "no route for " + target), target)
        # The pid route takes no path: an encoded one is a bad pid.
        status, _, body = self.get("/api/v1/processes/..%2f..%2fetc%2fpasswd")
        self.assertEqual(status, 400)
        # Targets that are not paths (absolute or asterisk form).
        for target in ("http://127.0.0.1/../../etc/passwd", "*", "etc/passwd"):
            status, _, body = self.get(target)
            self.assertEqual((status, json.loads(body)["message"]),
                             (400, "the request target must be a path starting with '/'"), target)


class Authenticated(Monitor):
    token = "s3cret-token-for-tests"

    ROUTES = ["/", "/index.html", "/metrics", "/api/v1/summary", "/api/v1/processes", "/api/v1/processes/1",
              "/api/v1/devices", "/api/v1/history", "/api/v1/stream"]

    def raw(self, method, target, *headers):
        c = self.connect()
        c.send(request(method, target, *headers))
        r = c.response(head=method == "HEAD" or target.startswith("/api/v1/stream"))
        c.close()
        return r

    def test_every_route_but_healthz_and_assets_needs_the_token(self):
        wrong = [["Authorization: Bearer wrong"], [f"Authorization: Bearer {self.token}x"],
                 [f"Authorization: Bearer {self.token[:-1]}"], [f"Authorization: Basic {self.token}"],
                 [f"Authorization: {self.token}"], ["Authorization: Bearer"]]
        for method in ("GET", "HEAD"):
            for route in self.ROUTES:
                where = f"{method} {route}"
                status, headers, _ = self.raw(method, route)
                self.assertEqual((status, headers["www-authenticate"]), (401, 'Bearer realm="fakegpu-trace"'), where)
                for h in wrong:
                    self.assertEqual(self.raw(method, route, *h)[0], 401, (where, h))
                sep = "&" if "?" in route else "?"
                status, headers, _ = self.raw(method, route + sep + "access_token=wrong")
                self.assertEqual((status, headers["www-authenticate"]),
                                 (401, 'Bearer realm="fakegpu-trace", error="invalid_token"'), where)
                # The right token, as a header and as the query parameter.
                want = 404 if route == "/api/v1/processes/1" else 200  # past the check: pid 1 is not traced
                self.assertEqual(self.raw(method, route, f"Authorization: Bearer {self.token}")[0], want, where)
                self.assertEqual(self.raw(method, route + sep + "access_token=" + self.token)[0], want, where)
        # A refused stream is a plain answer, not a stream.
        c = self.connect()
        c.send(request("GET", "/api/v1/stream"))
        status, headers, body = c.response()
        self.assertEqual((status, headers["content-type"]), (401, "application/json"))
        self.assertEqual(json.loads(body)["status"], 401)
        for route in ("/healthz", "/assets/app.js", "/assets/style.css"):
            self.assertEqual(self.raw("GET", route)[0], 200, route)
        n = self.server_counters()
        self.assertEqual((n["fakegpu_http_streams_open"], n["fakegpu_http_connections_rejected_total"]), (0, 0))


class ListenAddress(tt.TraceCase):
    def test_only_loopback_unless_allow_remote(self):
        for listen in ("0.0.0.0:0", "[::]:0", "[::ffff:10.1.2.3]:0", "10.1.2.3:0"):
            p = self.box.run([tt.tracer(), "monitor", "-q", "-d", "1", "--listen", listen], env=self.env())
            self.assertEqual(p.returncode, 2, p.describe())
            self.assertIn("is not a loopback address", p.stderr, p.describe())
            self.assertIn("--allow-remote", p.stderr, p.describe())
            self.assertNotIn("ready:", p.stderr, p.describe())
        # Told otherwise (with a token, as the refusal advises): it serves on every interface.
        token = self.box.path("token")
        with open(token, "w") as f:
            f.write("t0ken\n")
        mon = self.start([tt.tracer(), "monitor", "-q", "-i", "0.2", "--listen", "0.0.0.0:0", "--allow-remote",
                          "--auth-token-file", token])
        try:
            mon.err.until(lambda line: "ready:" in line, "the monitor's ready line")
            served = [m for m in (re.search(r"serving http://0\.0\.0\.0:(\d+)/ ", line) for line in mon.err.seen) if m]
            self.assertEqual(len(served), 1, mon.describe())
            c = Conn(("127.0.0.1", int(served[0].group(1))))
            try:
                c.send(request("GET", "/api/v1/summary"))
                self.assertEqual(c.response()[0], 401)
                c.send(request("GET", "/api/v1/summary", "Authorization: Bearer t0ken"))
                self.assertEqual(c.response()[0], 200)
            finally:
                c.close()
        finally:
            mon.popen.send_signal(signal.SIGTERM)
            self.assertEqual(mon.wait(), 0, mon.describe())


def main():
    if os.geteuid() != 0:
        print("SKIPPED: fakegpu-trace loads BPF programs and needs root (run the suite with sudo); "
              f"running as uid {os.geteuid()}", flush=True)
        return 0
    return fgtest.main()


if __name__ == "__main__":
    raise SystemExit(main())
