// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (clang, ASan + UBSan) for fakegpu-trace's HTTP request handling: the bytes
// of a request are read by Beast's parser, with the limits the server sets, and the parsed
// request is turned into a Request and answered by handle() (server/handler.h) as the server
// does, over a State with running, exited and leaking processes, devices and history.
// server.cpp (sockets, timeouts) is not part of it.
//
// Input: a first byte whose bit 0 says whether a bearer token is configured ("fuzz-token"),
// then the request's bytes.
//
// Checked: handle() answers every request with one of the documented statuses (a 500 is a
// finding: the State is valid, so rendering must not fail), a content type, a body that is
// JSON wherever the content type says so (an error body's "status" is the response's), and
// HEAD answers carry no body and the length GET would send.
#include "server/api.h"
#include "server/handler.h"
#include "server/history.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace {

namespace http = boost::beast::http;
using namespace fgtrace;
using namespace fgtrace::server;

// The server's limits (server.h ServerOptions defaults): 8 KiB of header, 1 KiB of body.
constexpr uint32_t kHeaderLimit = 8 * 1024;
constexpr uint64_t kBodyLimit = 1024;

[[noreturn]] void fail(const char* what, const Request& req, const Response& r) {
  std::fprintf(stderr, "fuzz_http: %s: %s %s -> %d %s\n%.400s\n", what, req.method.c_str(), req.target.c_str(),
               r.status, r.content_type.c_str(), r.body.c_str());
  std::abort();
}

void feed(AllocationLedger& l, uint32_t pid, uint32_t type, int32_t device, uint64_t ptr, uint64_t size, uint64_t ts,
          const char* comm = "") {
  fg_event ev{};
  ev.ts_ns = ts;
  ev.tgid = ev.tid = pid;
  ev.type = type;
  ev.device = device;
  ev.ptr = ptr;
  ev.size = size;
  ev.kind = FG_MEM_DEVICE;
  ev.func = ~0u;
  ev.aux = type == FG_EV_ALLOC ? 3 : 0;  // a stack id on allocations
  std::strncpy(ev.comm, comm, sizeof ev.comm - 1);
  l.consume(ev);
}

// Two running processes (one with a baseline and a pre-attach free), one exited with a leak,
// a host allocation; two devices, one nearly full; two history samples.
std::shared_ptr<const State> make_state() {
  AllocationLedger l;
  l.track_process(4242, "trainer", 1, 100, false);
  feed(l, 4242, FG_EV_ALLOC, 0, 0x7f0000000000, 1 << 20, 200, "trainer");
  feed(l, 4242, FG_EV_ALLOC, 1, 0x7f0000200000, 3 << 20, 300);
  feed(l, 4242, FG_EV_ALLOC, -1, 0x7e0000000000, 4096, 350);
  feed(l, 4242, FG_EV_FREE, 0, 0x7f0000000000, 0, 400);
  l.set_baseline(77, 0, MemKind::Device, 8 << 20);
  feed(l, 77, FG_EV_FREE, 0, 0x7f0000900000, 1 << 20, 450, "\xff\xfeodd-comm");  // not UTF-8
  feed(l, 900, FG_EV_ALLOC, 0, 0x7f0000400000, 5 << 20, 500, "leaky");
  feed(l, 900, FG_EV_PROC_EXIT, -1, 0, 0, 600);
  l.record_call(4242, "cudaMalloc", 1500, true);
  l.record_copy(4242, CopyDirection::HtoD, 1 << 20);
  l.set_kernel_totals(4242, {{"_Z6kernelPf", 12}});
  Health h;
  h.rb_drops = 2;
  h.libraries.push_back({"/usr/lib/libfake_gpu.so", "usdt"});
  l.set_health(h);

  auto s = std::make_shared<State>();
  s->snapshot = l.snapshot(/*include_exited=*/true);
  s->devices = {{0, "GPU-8a5b0000-0000-0000-0000-000000000000", "Fake NVIDIA A100-SXM4-80GB", 16 << 20, 15 << 20},
                {1, "", "Fake NVIDIA T4", 0, 3 << 20}};
  s->stack_frames[{4242, 2}] = {"main+0x10 (/usr/bin/trainer)", "__libc_start_main"};
  s->time_unix_ms = 1750000000000;
  s->sequence = 3;
  s->history_s = 600;
  s->history_max_samples = 600;
  for (uint64_t t : {1749999999000ull, 1750000000000ull}) {
    State at = *s;
    at.time_unix_ms = t;
    auto sample = std::make_shared<HistorySample>(history_sample(at));
    s->history_bytes += sample->memory_bytes();
    s->history.push_back(std::move(sample));
  }
  return s;
}

const State& state() {
  static const std::shared_ptr<const State> s = make_state();
  return *s;
}

bool is_json_type(const std::string& t) { return t == kJsonContentType; }

void check(const Request& req, const Response& r) {
  switch (r.status) {
    case 200:
    case 400:
    case 401:
    case 404:
    case 405: break;
    default: fail("unexpected status", req, r);
  }
  if (r.content_type.empty()) fail("no content type", req, r);
  if (req.method == "HEAD") {
    if (!r.body.empty() || !r.content_length || r.stream) fail("HEAD answer with a body or without a length", req, r);
    return;
  }
  if (r.content_length) fail("content_length set outside HEAD", req, r);
  if (is_json_type(r.content_type)) {
    const auto j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail("body is not JSON", req, r);
    if (r.status != 200 && (!j.is_object() || !j.contains("status") || j["status"] != r.status))
      fail("error body does not carry the status", req, r);
  }
  if (r.stream != (r.status == 200 && r.content_type == kStreamContentType && req.method == "GET"))
    fail("stream flag on the wrong answer", req, r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  HandlerConfig config;
  if (data[0] & 1) config.auth_token = "fuzz-token";
  config.metrics.version = "0.0.0-fuzz";

  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data + 1, size - 1), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec || !parser.is_done()) return 0;  // the server answers 400/413/431 itself

  // What server.cpp hands the handler.
  const auto& msg = parser.get();
  Request req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  for (const auto& field : msg) req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));

  const Response r = handle(req, state(), config);
  check(req, r);
  return 0;
}
