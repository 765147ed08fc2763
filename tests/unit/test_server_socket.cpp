// SPDX-License-Identifier: Apache-2.0
// Unit tests: the HTTP server (userspace/server/server.h) on a real socket, 127.0.0.1 with an
// ephemeral port: requests, keep-alive, pipelining, HEAD, the request limits and timeouts, the
// connection limits (overall, per client address, idle connections closed for newcomers),
// authentication, the event stream and its limit, readers that go away, the listen address,
// stop().
//
// Waits are on conditions (a response, EOF, a counter) with deadlines, never fixed sleeps;
// the only sleeps pace a deliberately slow client.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../../userspace/server/server.h"

using namespace fgtrace;
using namespace fgtrace::server;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A blocking client connection with deadlines on every read.
class Client {
 public:
  // source: the client's own address (127.0.0.2 ...: another client as the server counts them).
  explicit Client(uint16_t port, int rcvbuf = 0, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (fd_ >= 0 && source) {
      sockaddr_in b{};
      b.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &b.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&b), sizeof b) != 0) {
        ::close(fd_);
        fd_ = -1;
      }
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Closes with a reset (SO_LINGER 0), as a client that crashed or lost its network.
  void reset() {
    if (fd_ < 0) return;
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }

  bool send(std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads until done(buffer) holds, the peer closes (closed_ = true) or the deadline passes.
  bool read_until(const std::function<bool(const std::string&)>& done, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!done(buf_)) {
      if (closed_) return false;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char tmp[16384];
      const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) {
        closed_ = true;  // EOF or reset
        continue;
      }
      buf_.append(tmp, static_cast<size_t>(n));
    }
    return true;
  }

  // True when the server closed the connection within the timeout (what was left is dropped).
  bool wait_closed(std::chrono::milliseconds timeout) {
    read_until([](const std::string&) { return false; }, timeout);
    return closed_;
  }

  struct Response {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
  };

  // One response: headers, then Content-Length bytes of body (none for HEAD).
  std::optional<Response> response(bool head = false, std::chrono::milliseconds timeout = 5000ms) {
    if (!read_until([](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; }, timeout))
      return std::nullopt;
    const size_t end = buf_.find("\r\n\r\n");
    const std::string head_text = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    Response r;
    size_t pos = head_text.find("\r\n");
    const std::string status_line = head_text.substr(0, pos);
    if (status_line.size() < 12) return std::nullopt;
    r.status = std::stoi(status_line.substr(9, 3));
    while (pos != std::string::npos) {
      const size_t next = head_text.find("\r\n", pos + 2);
      const std::string line = head_text.substr(pos + 2,
                                                next == std::string::npos ? std::string::npos : next - pos - 2);
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      }
      pos = next;
    }
    if (head || !r.headers.count("content-length")) return r;
    const size_t length = std::stoul(r.headers["content-length"]);
    if (!read_until([&](const std::string& b) { return b.size() >= length; }, timeout)) return std::nullopt;
    r.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return r;
  }

  // Sends `req` and reads its response; the test ends here when either fails.
  Response exchange(std::string_view req, bool head = false, std::chrono::milliseconds timeout = 5000ms) {
    REQUIRE(send(req));
    std::optional<Response> r = response(head, timeout);
    REQUIRE(r);
    return *r;
  }

  std::string& buffer() { return buf_; }

 private:
  int fd_ = -1;
  std::string buf_;
  bool closed_ = false;
};

std::string request(std::string_view method, std::string_view target, std::string_view extra = {}) {
  return std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + std::string(extra) +
         "\r\n";
}

std::shared_ptr<const State> state_with(uint32_t pid, uint64_t sequence) {
  AllocationLedger l;
  l.track_process(pid, "proc" + std::to_string(pid), 1, 0, false);
  Event e;
  e.type = EventType::Alloc;
  e.pid = e.tid = pid;
  e.device = 0;
  e.kind = MemKind::Device;
  e.ptr = 0x1;
  e.size = 4096;
  l.apply(e);
  auto s = std::make_shared<State>();
  s->snapshot = l.snapshot(true);
  s->sequence = sequence;
  s->time_unix_ms = 1748779200000;
  return s;
}

ServerOptions local_options() {
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  return o;
}

std::unique_ptr<Server> start(const ServerOptions& o) {
  std::string error;
  auto s = Server::start(o, &error);
  INFO(error);
  REQUIRE(s != nullptr);
  REQUIRE(s->port() != 0);
  return s;
}

// Waits for a condition on the server's counters (they change on its thread).
bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = Clock::now() + timeout;
  while (!cond()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

TEST_CASE("server: GET over a socket, keep-alive, HEAD and the latest published state", "[server][socket][threads]") {
  auto server = start(local_options());
  CHECK(server->address() == "127.0.0.1:" + std::to_string(server->port()));
  server->publish(state_with(4242, 1));

  Client c(server->port());
  REQUIRE(c.connected());
  auto r = c.exchange(request("GET", "/metrics"));
  CHECK(r.status == 200);
  CHECK(r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(r.headers["server"] == "fakegpu-trace");
  CHECK(r.body.find("fakegpu_process_memory_bytes{pid=\"4242\"") != std::string::npos);
  CHECK(r.body.find("fakegpu_collector_scrape_duration_seconds") == std::string::npos);  // first scrape

  // Same connection: the previous scrape's duration is now reported.
  r = c.exchange(request("GET", "/metrics"));
  CHECK(r.body.find("fakegpu_collector_scrape_duration_seconds ") != std::string::npos);

  // A publish is seen by the next request.
  server->publish(state_with(5000, 2));
  r = c.exchange(request("GET", "/api/v1/processes/5000"));
  CHECK(r.status == 200);
  CHECK(nlohmann::json::parse(r.body)["comm"] == "proc5000");

  // HEAD: the length GET would have, no body (the next response parses right after it).
  r = c.exchange(request("HEAD", "/api/v1/summary"), /*head=*/true);
  CHECK(r.status == 200);
  CHECK(std::stoul(r.headers["content-length"]) > 100);
  r = c.exchange(request("GET", "/nope"));
  CHECK(r.status == 404);
  CHECK(nlohmann::json::parse(r.body)["error"] == "Not Found");

  r = c.exchange(request("POST", "/metrics", "Content-Length: 2\r\n") + "{}");
  CHECK(r.status == 405);
  CHECK(r.headers["allow"] == "GET, HEAD");

  // Connection: close is honoured.
  r = c.exchange(request("GET", "/healthz", "Connection: close\r\n"));
  CHECK(r.body == "ok\n");
  CHECK(c.wait_closed(2000ms));
  CHECK(server->stats().requests == 7);
}

TEST_CASE("server: oversized and malformed requests are refused and the server keeps serving", "[server][socket]") {
  ServerOptions o = local_options();
  auto server = start(o);

  SECTION("a header over 8 KiB: 431") {
    Client c(server->port());
    auto r = c.exchange(request("GET", "/metrics", "X-Big: " + std::string(10 * 1024, 'a') + "\r\n"));
    CHECK(r.status == 431);
    CHECK(r.headers["connection"] == "close");
    CHECK(nlohmann::json::parse(r.body)["message"] == "request header larger than 8192 bytes");
    CHECK(c.wait_closed(3000ms));
  }
  SECTION("a body over 1 KiB: 413") {
    Client c(server->port());
    auto r = c.exchange(request("GET", "/metrics", "Content-Length: 5000\r\n"));
    CHECK(r.status == 413);
    CHECK(c.wait_closed(3000ms));
  }
  SECTION("not HTTP: 400") {
    Client c(server->port());
    auto r = c.exchange("GARBAGE\r\n\r\n");
    CHECK(r.status == 400);
    CHECK(c.wait_closed(3000ms));
  }
  Client next(server->port());
  auto r = next.exchange(request("GET", "/healthz"));
  CHECK(r.status == 200);
  CHECK(server->stats().bad_requests == 1);
}

TEST_CASE("server: idle and slow clients are closed after their timeouts while others are served", "[server][socket]") {
  ServerOptions o = local_options();
  o.idle_timeout = 300ms;
  o.request_timeout = 300ms;
  auto server = start(o);

  const auto t0 = Clock::now();
  Client silent(server->port());  // connects and sends nothing
  REQUIRE(silent.connected());
  Client trickle(server->port());  // sends a request one byte at a time, too slowly
  REQUIRE(trickle.send("GET /metrics HTTP/1.1\r\n"));

  Client other(server->port());
  auto r = other.exchange(request("GET", "/healthz"), /*head=*/false, 2000ms);
  CHECK(r.status == 200);

  CHECK(silent.wait_closed(5000ms));
  const auto closed_after = Clock::now() - t0;
  CHECK(closed_after >= 250ms);
  CHECK(closed_after < 3000ms);
  CHECK(silent.buffer().empty());  // closed without an answer

  // A byte every 50 ms, each resetting no clock: the request as a whole is late.
  bool trickle_closed = false;
  for (int i = 0; i < 60 && !trickle_closed; ++i) {
    std::this_thread::sleep_for(50ms);  // the client's pace, not a readiness wait
    trickle_closed = !trickle.send("X") || trickle.wait_closed(1ms);
  }
  CHECK(trickle_closed);
  CHECK(eventually([&] { return server->stats().timeouts == 1 && server->stats().idle_closed >= 2; }));

  // Keep-alive idle counts too, and the server still answers afterwards.
  Client idle(server->port());
  idle.exchange(request("GET", "/healthz"));
  CHECK(idle.wait_closed(3000ms));
  Client last(server->port());
  last.exchange(request("GET", "/healthz"));
}

TEST_CASE("server: with a token, a missing or wrong one gets 401", "[server][socket]") {
  ServerOptions o = local_options();
  o.auth_token = "tok-123";
  auto server = start(o);
  Client c(server->port());

  auto r = c.exchange(request("GET", "/metrics"));
  CHECK(r.status == 401);
  CHECK(r.headers["www-authenticate"] == "Bearer realm=\"fakegpu-trace\"");

  r = c.exchange(request("GET", "/api/v1/summary", "Authorization: Bearer tok-12\r\n"));
  CHECK(r.status == 401);
  CHECK(r.headers["www-authenticate"] == "Bearer realm=\"fakegpu-trace\", error=\"invalid_token\"");

  r = c.exchange(request("GET", "/api/v1/summary", "authorization: Bearer tok-123\r\n"));
  CHECK(r.status == 200);

  r = c.exchange(request("GET", "/?access_token=tok-123"));  // how a browser opens the page
  CHECK(r.status == 200);
  CHECK(r.headers["content-type"] == "text/html; charset=utf-8");

  r = c.exchange(request("GET", "/healthz"));
  CHECK(r.status == 200);
}

namespace {

// A state of n processes: /api/v1/processes is about 300 bytes a process (6 MB for 20,000:
// more than the kernel buffers of a client that reads nothing, so the server's write stalls).
std::shared_ptr<const State> big_state(uint32_t n) {
  auto big = std::make_shared<State>();
  AllocationLedger l;
  for (uint32_t pid = 1; pid <= n; ++pid) l.track_process(pid, "p" + std::to_string(pid), 1, 0, false);
  big->snapshot = l.snapshot(true);
  return big;
}

}  // namespace

TEST_CASE("server: a newcomer at the limit closes the oldest waiting connection, 503 when all are busy",
          "[server][socket]") {
  ServerOptions o = local_options();
  o.max_connections = 2;
  o.write_timeout = 5000ms;
  auto server = start(o);

  SECTION("idle keep-alive connections make room") {
    Client a(server->port());
    Client b(server->port());
    for (Client* c : {&a, &b}) CHECK(c->exchange(request("GET", "/healthz")).status == 200);  // both idle now
    Client third(server->port());
    CHECK(third.exchange(request("GET", "/healthz")).status == 200);
    CHECK(a.wait_closed(3000ms));  // the oldest idle one
    CHECK(a.buffer().empty());
    CHECK(b.exchange(request("GET", "/healthz")).status == 200);  // the other one stays
    CHECK(server->stats().connections_evicted == 1);
    CHECK(server->stats().connections_rejected == 0);
  }
  SECTION("connections answered and lingering, whose clients never close, make room") {
    Client a(server->port());
    Client b(server->port());
    for (Client* c : {&a, &b}) {
      CHECK(c->exchange(request("GET", "/healthz", "Connection: close\r\n")).status == 200);
      CHECK(c->wait_closed(3000ms));  // the server's FIN; the client keeps its end open
    }
    Client third(server->port());
    CHECK(third.exchange(request("GET", "/healthz")).status == 200);
    CHECK(server->stats().connections_evicted == 1);
    CHECK(server->stats().connections_rejected == 0);
  }
  SECTION("connections being answered are not closed: 503") {
    server->publish(big_state(20000));
    Client a(server->port(), /*rcvbuf=*/4096);
    Client b(server->port(), /*rcvbuf=*/4096);
    for (Client* c : {&a, &b}) REQUIRE(c->send(request("GET", "/api/v1/processes")));  // never read
    REQUIRE(eventually([&] { return server->stats().requests == 2; }));
    Client third(server->port());
    auto r = third.exchange(request("GET", "/healthz"));
    CHECK(r.status == 503);
    CHECK(r.headers["retry-after"] == "1");
    CHECK(nlohmann::json::parse(r.body)["message"] ==
          "too many connections (the limit is 2, 32 per client), all busy: try again later");
    CHECK(third.wait_closed(3000ms));
    CHECK(server->stats().connections_rejected == 1);
    CHECK(server->stats().connections_evicted == 0);

    a.close();  // one leaves (its write fails): room again
    REQUIRE(eventually([&] { return server->stats().connections_open == 1; }));
    Client fourth(server->port());
    CHECK(fourth.exchange(request("GET", "/healthz")).status == 200);
  }
}

TEST_CASE("server: one client's idle connections never push out another client's", "[server][socket]") {
  ServerOptions o = local_options();
  o.max_connections = 4;
  o.max_connections_per_client = 3;
  auto server = start(o);

  Client quiet(server->port(), 0, "127.0.0.3");  // the oldest idle connection, of a client with one
  REQUIRE(quiet.connected());
  CHECK(quiet.exchange(request("GET", "/healthz")).status == 200);
  std::vector<std::unique_ptr<Client>> hog;  // 127.0.0.2: more idle connections than its share
  for (int i = 0; i < 5; ++i) {
    hog.push_back(std::make_unique<Client>(server->port(), 0, "127.0.0.2"));
    REQUIRE(hog.back()->connected());
    CHECK(hog.back()->exchange(request("GET", "/healthz")).status == 200);
  }
  // At its 3: each newcomer of the hog closed the hog's own oldest (the first two).
  CHECK(hog[0]->wait_closed(3000ms));
  CHECK(hog[1]->wait_closed(3000ms));
  CHECK(server->stats().connections_evicted == 2);
  // The server full (4): a third client's newcomer closes the hog's oldest, not the older
  // connection of the client with one.
  Client third(server->port(), 0, "127.0.0.4");
  CHECK(third.exchange(request("GET", "/healthz")).status == 200);
  CHECK(hog[2]->wait_closed(3000ms));
  CHECK(quiet.exchange(request("GET", "/healthz")).status == 200);
  CHECK(hog[3]->exchange(request("GET", "/healthz")).status == 200);
  CHECK(server->stats().connections_evicted == 3);
  CHECK(server->stats().connections_rejected == 0);
}

TEST_CASE("server: hundreds of silent and trickling connections do not keep a request from being answered",
          "[server][socket]") {
  ServerOptions o = local_options();  // the default limits and timeouts
  auto server = start(o);
  server->publish(state_with(4242, 7));
  std::vector<std::unique_ptr<Client>> attackers;
  for (int i = 0; i < 300; ++i) {
    attackers.push_back(std::make_unique<Client>(server->port()));
    REQUIRE(attackers.back()->connected());
    if (i % 2) REQUIRE(attackers.back()->send("GET /api/v1/summary HTTP/1.1\r\nX-Slow: "));  // never ends
  }
  for (int round = 0; round < 3; ++round) {
    Client c(server->port());
    auto r = c.exchange(request("GET", "/api/v1/processes/4242"));
    CHECK(r.status == 200);
    CHECK(nlohmann::json::parse(r.body)["comm"] == "proc4242");
    for (auto& a : attackers) a->send("x");  // a header byte each, as slowloris does
  }
  CHECK(server->stats().connections_evicted >= 300 - 32);
  CHECK(server->stats().connections_rejected == 0);
}

TEST_CASE("server: several requests in one write are answered in order", "[server][socket]") {
  auto server = start(local_options());
  server->publish(state_with(4242, 3));
  Client c(server->port());
  REQUIRE(c.send(request("GET", "/healthz") + request("HEAD", "/api/v1/summary") +
                 request("GET", "/api/v1/processes/4242") + request("GET", "/nope") +
                 request("GET", "/api/v1/processes/abc", "Connection: close\r\n") + request("GET", "/healthz")));
  auto r = c.response();
  REQUIRE(r);
  CHECK((r->status == 200 && r->body == "ok\n"));
  r = c.response(/*head=*/true);
  REQUIRE(r);
  CHECK(r->status == 200);
  r = c.response();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(nlohmann::json::parse(r->body)["pid"] == 4242);
  r = c.response();
  REQUIRE(r);
  CHECK(r->status == 404);
  r = c.response();
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(r->headers["connection"] == "close");
  CHECK(c.wait_closed(3000ms));  // the request after Connection: close is not answered
  CHECK(c.buffer().empty());
  CHECK(server->stats().requests == 5);
}

TEST_CASE("server: the event stream sends one event per publish, the latest always arrives",
          "[server][socket][threads]") {
  ServerOptions o = local_options();
  o.stream_queue_frames = 2;
  auto server = start(o);
  server->publish(state_with(1, 1));

  Client c(server->port());
  auto r = c.exchange(request("GET", "/api/v1/stream"),
                      /*head=*/true);  // no length: events follow until the connection ends
  CHECK(r.status == 200);
  CHECK(r.headers["content-type"] == "text/event-stream");
  CHECK(r.headers.count("content-length") == 0);
  const auto has = [](std::string needle) {
    return [needle](const std::string& b) { return b.find(needle) != std::string::npos; };
  };
  REQUIRE(c.read_until(has("id: 1\ndata: {"), 3000ms));
  CHECK(c.buffer().rfind("retry: 3000\n\n", 0) == 0);
  REQUIRE(eventually([&] { return server->stats().streams_open == 1; }));

  server->publish(state_with(2, 2));
  REQUIRE(c.read_until(has("id: 2\ndata: {"), 3000ms));
  const size_t start = c.buffer().find("id: 2\ndata: ") + 12;
  REQUIRE(c.read_until([&](const std::string& b) { return b.find("\n\n", start) != std::string::npos; }, 3000ms));
  const auto j = nlohmann::json::parse(c.buffer().substr(start, c.buffer().find("\n\n", start) - start));
  CHECK(j["sequence"] == 2);
  CHECK(j["processes"][0]["pid"] == 2);

  for (uint64_t seq = 3; seq <= 60; ++seq) server->publish(state_with(static_cast<uint32_t>(seq), seq));
  CHECK(c.read_until(has("id: 60\ndata: {"), 5000ms));

  // stop() ends the stream promptly.
  const auto t0 = Clock::now();
  server->stop();
  CHECK(Clock::now() - t0 < 2500ms);
  CHECK(c.wait_closed(2000ms));
  server->stop();  // idempotent
}

TEST_CASE("server: a reader that stops reading loses old frames, never blocks publish", "[server][socket]") {
  ServerOptions o = local_options();
  o.stream_queue_frames = 2;
  o.write_timeout = 1000ms;  // a stalled event write closes the connection after this
  auto server = start(o);

  // A large state (~0.6 MB a frame) and a client with a small receive buffer that reads nothing.
  const auto big = big_state(2000);
  server->publish(big);
  Client stalled(server->port(), /*rcvbuf=*/4096);
  REQUIRE(stalled.send(request("GET", "/api/v1/stream")));
  REQUIRE(eventually([&] { return server->stats().streams_open == 1; }));

  // A refresh every 20 ms (the collector's pace, sped up), until the kernel's socket buffers
  // are full, the write stalls and the write timeout ends the stream. Publishing goes on
  // meanwhile (a pointer swap and a post): the frames the stalled reader could not take are
  // dropped from its queue, not waited for.
  const auto deadline = Clock::now() + 20s;
  for (uint64_t seq = 1; server->stats().streams_open == 1 && Clock::now() < deadline; ++seq) {
    auto s = std::make_shared<State>(*big);
    s->sequence = seq;
    server->publish(std::move(s));
    std::this_thread::sleep_for(20ms);
  }
  CHECK(server->stats().streams_open == 0);  // closed by the write timeout
  CHECK(server->stats().stream_frames_dropped > 0);

  Client other(server->port());  // and the server still answers
  auto r = other.exchange(request("GET", "/healthz"));
  CHECK(r.status == 200);
}

TEST_CASE("server: a reader that goes away frees its stream at once", "[server][socket]") {
  ServerOptions o = local_options();
  o.stream_keepalive = 60s;  // no write would find them gone before this
  o.max_streams = 3;
  auto server = start(o);
  server->publish(state_with(1, 1));

  std::vector<std::unique_ptr<Client>> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(std::make_unique<Client>(server->port()));
    readers.back()->exchange(request("GET", "/api/v1/stream"), /*head=*/true);
  }
  REQUIRE(eventually([&] { return server->stats().streams_open == 3; }));
  readers[0]->close();  // FIN
  readers[1]->reset();  // RST
  readers[2]->close();
  CHECK(eventually([&] { return server->stats().streams_open == 0; }, 10000ms));
  CHECK(server->stats().streams_gone == 3);

  // Their places are free: three new readers get events.
  readers.clear();
  for (int i = 0; i < 3; ++i) {
    readers.push_back(std::make_unique<Client>(server->port()));
    CHECK(readers.back()->exchange(request("GET", "/api/v1/stream"), /*head=*/true).status == 200);
  }
  server->publish(state_with(2, 2));
  for (auto& c : readers)
    CHECK(c->read_until([](const std::string& b) { return b.find("id: 2\ndata: {") != std::string::npos; }, 3000ms));
}

TEST_CASE("server: event streams beyond their limit get 503 and never take the requests' room", "[server][socket]") {
  ServerOptions o = local_options();
  o.max_streams = 100;
  o.max_connections = 4;
  auto server = start(o);
  server->publish(state_with(4242, 1));

  std::vector<std::unique_ptr<Client>> readers;  // idle readers: they read nothing more
  for (int i = 0; i < 100; ++i) {
    readers.push_back(std::make_unique<Client>(server->port()));
    REQUIRE(readers.back()->exchange(request("GET", "/api/v1/stream"), /*head=*/true).status == 200);
  }
  Client extra(server->port());
  auto r = extra.exchange(request("GET", "/api/v1/stream"));
  CHECK(r.status == 503);
  CHECK(r.headers["retry-after"] == "3");
  CHECK(nlohmann::json::parse(r.body)["message"] ==
        "too many event streams (the limit is 100): try again later, or poll /api/v1/summary");
  CHECK(extra.wait_closed(3000ms));
  extra.close();
  CHECK(server->stats().streams_rejected == 1);
  CHECK(eventually([&] { return server->stats().connections_open == 100; }));  // the streams only
  CHECK(server->stats().streams_open == 100);

  // Requests still have all their room (4), though 100 streams are open.
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<Client>(server->port()));
    r = clients.back()->exchange(request("GET", "/api/v1/processes/4242"));
    CHECK(r.status == 200);
  }
  CHECK(server->stats().connections_open == 104);
  CHECK(server->stats().connections_rejected == 0);
  CHECK(server->stats().connections_evicted == 0);
}

TEST_CASE("server: listen addresses", "[server][socket]") {
  std::string err;
  auto a = parse_listen_address("127.0.0.1:9400", &err);
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 9400);
  CHECK(a->loopback);
  CHECK(a->to_string() == "127.0.0.1:9400");
  a = parse_listen_address("localhost:0");
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 0);
  a = parse_listen_address("[::1]:9400");
  REQUIRE(a);
  CHECK(a->host == "::1");
  CHECK(a->loopback);
  CHECK(a->to_string() == "[::1]:9400");
  a = parse_listen_address("127.8.9.10:1");
  REQUIRE(a);
  CHECK(a->loopback);
  a = parse_listen_address("[::ffff:127.0.0.1]:1");
  REQUIRE(a);
  CHECK(a->loopback);
  a = parse_listen_address("0.0.0.0:65535");
  REQUIRE(a);
  CHECK_FALSE(a->loopback);
  CHECK(a->port == 65535);
  a = parse_listen_address("[::]:9400");
  REQUIRE(a);
  CHECK_FALSE(a->loopback);

  const auto error_of = [](const char* text) {
    std::string e;
    return parse_listen_address(text, &e) ? std::string("<parsed>") : e;
  };
  CHECK(error_of("9400").find("bad listen address '9400': missing :PORT") == 0);
  CHECK(error_of(":9400").find("missing host") != std::string::npos);
  CHECK(error_of("127.0.0.1:").find("the port must be a number from 0 to 65535") != std::string::npos);
  CHECK(error_of("127.0.0.1:65536").find("the port must be a number") != std::string::npos);
  CHECK(error_of("127.0.0.1:9x").find("the port must be a number") != std::string::npos);
  CHECK(error_of("127.0.0.1:-1").find("the port must be a number") != std::string::npos);
  CHECK(error_of("::1:9400").find("brackets") != std::string::npos);
  CHECK(error_of("[::1]9400").find("missing :PORT") != std::string::npos);
  CHECK(error_of("[::1").find("missing ']'") != std::string::npos);
  CHECK(error_of("example.com:80").find("'example.com' is not an IP address") != std::string::npos);
  CHECK(error_of("").find("missing :PORT") != std::string::npos);
  CHECK(error_of("999.1.1.1:80").find("not an IP address") != std::string::npos);
}

TEST_CASE("server: start refuses what it must and explains", "[server][socket]") {
  std::string err;
  ServerOptions o = local_options();

  o.listen = "0.0.0.0:0";
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err.find("refusing to listen on 0.0.0.0:0: it is not a loopback address") == 0);
  o.allow_non_loopback = true;
  {
    auto any = Server::start(o, &err);
    INFO(err);
    CHECK(any != nullptr);
  }

  o = local_options();
  o.listen = "bogus";
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err.find("bad listen address 'bogus'") == 0);

  o = local_options();
  o.max_connections = 0;
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err == "invalid server option: max_connections must be at least 1");
  o = local_options();
  o.max_connections_per_client = 0;
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err == "invalid server option: max_connections_per_client must be at least 1");
  o = local_options();
  o.max_streams = 0;
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err == "invalid server option: max_streams must be at least 1");
  o = local_options();
  o.idle_timeout = 0ms;
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err == "invalid server option: timeouts must be positive");

  auto first = start(local_options());
  o = local_options();
  o.listen = "127.0.0.1:" + std::to_string(first->port());
  CHECK(Server::start(o, &err) == nullptr);
  CHECK(err.find("cannot listen on 127.0.0.1:" + std::to_string(first->port()) + ": ") == 0);
  CHECK(err.find("choose another one") != std::string::npos);
}
