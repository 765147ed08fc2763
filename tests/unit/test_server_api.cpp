// SPDX-License-Identifier: Apache-2.0
// Unit tests: the JSON API (userspace/server/api.h): the documents' fields and values, the
// process drill-down, alerts, and the event-stream frame.
#include "trace_test_events.h"
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../userspace/server/api.h"

using namespace fgtrace;
using namespace fgtrace::server;
using nlohmann::json;

namespace {

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;
constexpr uint64_t kNoonMs = 1748779200250;  // 2025-06-01T12:00:00.250Z

using fgtrace::test::ev;

// A running process on device 0 (with pinned host memory and a stack), one attached to with a
// baseline on device 1, one that exited leaking; ring-buffer drops; device 0 nearly full.
State scenario() {
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 100, false);
  Event a = ev(EventType::Alloc, 4242, 0, MemKind::Device, 0x1, 1536 * MiB);
  a.stack_id = 7;
  l.apply(a);
  l.apply(ev(EventType::Alloc, 4242, -1, MemKind::Host, 0x3, 64 * MiB));
  fgtrace::test::add_attached(l);
  fgtrace::test::add_exited(l);
  fgtrace::test::add_activity(l, 4242, 3);
  l.record_call(4242, "cudaFree", 100, true);
  KernelBookView kb;
  kb.device = 0;
  kb.kind = MemKind::Device;
  kb.alloc_calls = 1;
  kb.alloc_bytes = kb.live_bytes = kb.peak_bytes = 1536 * MiB;
  l.set_kernel_books(4242, {kb});
  l.set_health({fgtrace::KernelHealth{.events = 12, .rb_drops = 3}, {{"/opt/fakegpu/lib/libfake_gpu.so", "usdt"}}});

  State s;
  s.snapshot = l.snapshot(true);
  s.devices = {{0, "GPU-aaaa", "Fake H100", 80 * GiB, 75 * GiB}, {1, "GPU-bbbb", "Fake H100", 80 * GiB, 1 * GiB}};
  s.stack_frames[{4242, 7}] = {"cudaMalloc+0x1a [libfake_gpu.so]", "main+0x42 [app]"};
  s.time_unix_ms = kNoonMs;
  s.sequence = 5;
  s.interval_s = 2;
  return s;
}

json parse(const nlohmann::ordered_json& j) { return json::parse(dump_json(j)); }

}  // namespace

TEST_CASE("api: times are ISO 8601 UTC with milliseconds", "[server][api]") {
  CHECK(iso8601_utc(0) == "1970-01-01T00:00:00.000Z");
  CHECK(iso8601_utc(kNoonMs) == "2025-06-01T12:00:00.250Z");
}

TEST_CASE("api: /api/v1/processes", "[server][api]") {
  const json j = parse(api_processes(scenario()));
  CHECK(j["schema"] == kApiSchema);
  CHECK(j["time"] == "2025-06-01T12:00:00.250Z");
  CHECK(j["time_unix_ms"] == kNoonMs);
  CHECK(j["sequence"] == 5);
  REQUIRE(j["processes"].size() == 3);
  const json& p = j["processes"][0];
  CHECK(p["pid"] == 4242);
  CHECK(p["ppid"] == 1);
  CHECK(p["comm"] == "python3");
  CHECK(p["state"] == "running");
  CHECK(p["since_attach"] == false);
  CHECK(p["start_ns"] == 100);
  CHECK(p["exit_ns"].is_null());
  CHECK(p["live_bytes"] == 1536 * MiB);  // GPUs only
  CHECK(p["peak_bytes"] == 1536 * MiB);
  CHECK(p["allocs"] == 2);
  CHECK(p["api_calls"] == 3);
  CHECK(p["api_errors"] == 1);
  CHECK(p["launches"] == 3);
  REQUIRE(p["devices"].size() == 2);
  CHECK(p["devices"][0]["device"] == -1);
  CHECK(p["devices"][0]["live_bytes"] == 64 * MiB);
  CHECK(p["devices"][1]["device"] == 0);
  CHECK(p["devices"][1]["live_bytes"] == 1536 * MiB);

  const json& server = j["processes"][1];
  CHECK(server["pid"] == 5000);
  CHECK(server["since_attach"] == true);
  CHECK(server["baseline_known"] == true);
  CHECK(server["live_bytes"] == 1 * GiB);
  CHECK(server["failed_calls"] == 1);

  const json& leaky = j["processes"][2];
  CHECK(leaky["state"] == "exited");
  CHECK(leaky["exit_ns"] == 50);
  CHECK(leaky["live_bytes"] == 0);
  CHECK(leaky["leaked_bytes"] == 256 * MiB);
  CHECK(leaky["leaked_allocs"] == 1);
}

TEST_CASE("api: /api/v1/devices joins the system's devices with the traced books", "[server][api]") {
  const json j = parse(api_devices(scenario()));
  REQUIRE(j["devices"].size() == 2);  // GPUs only: host memory is not a device
  const json& d0 = j["devices"][0];
  CHECK(d0["device"] == 0);
  CHECK(d0["uuid"] == "GPU-aaaa");
  CHECK(d0["name"] == "Fake H100");
  CHECK(d0["total_bytes"] == 80 * GiB);
  CHECK(d0["used_bytes"] == 75 * GiB);
  CHECK(d0["free_bytes"] == 5 * GiB);
  CHECK(d0["used_ratio"] == Approx(0.9375));
  CHECK(d0["traced"]["live_bytes"] == 1536 * MiB);
  CHECK(d0["traced"]["processes"] == 1);
  const json& d1 = j["devices"][1];
  CHECK(d1["traced"]["live_bytes"] == 1 * GiB);
  CHECK(d1["traced"]["leaked_bytes"] == 256 * MiB);
  CHECK(j["host"] == json{{"live_bytes", 64 * MiB},
                          {"peak_bytes", 64 * MiB},
                          {"leaked_bytes", 0},
                          {"leaked_allocs", 0},
                          {"processes", 1}});

  SECTION("books on a GPU the system did not list") {
    State s = scenario();
    s.devices.pop_back();
    const json k = parse(api_devices(s));
    REQUIRE(k["devices"].size() == 2);
    CHECK(k["devices"][1]["device"] == 1);
    CHECK(k["devices"][1]["uuid"] == "");
    CHECK(k["devices"][1]["total_bytes"].is_null());
    CHECK(k["devices"][1]["traced"]["live_bytes"] == 1 * GiB);
  }
}

TEST_CASE("api: /api/v1/processes/{pid} has books, kernel books, calls and stacks", "[server][api]") {
  const State s = scenario();
  CHECK_FALSE(api_process(s, 1).has_value());
  const auto doc = api_process(s, 4242);
  REQUIRE(doc.has_value());
  const json p = parse(*doc);  // the envelope and the process's fields, side by side
  CHECK(p["schema"] == kApiSchema);
  CHECK(p["sequence"] == 5);
  CHECK(p["pid"] == 4242);
  CHECK(p["live_bytes"] == 1536 * MiB);
  CHECK(p["instances"] == 1);
  CHECK(p["exit_event_seen"] == false);
  REQUIRE(p["books"].size() == 2);
  CHECK(p["books"][0]["device"] == -1);
  CHECK(p["books"][0]["kind"] == "host");
  CHECK(p["books"][1]["kind"] == "device");
  CHECK(p["books"][1]["live_bytes"] == 1536 * MiB);
  CHECK(p["books"][1]["outstanding_allocs"] == 1);
  REQUIRE(p["kernel_books"].size() == 1);
  CHECK(p["kernel_books"][0]["alloc_bytes"] == 1536 * MiB);
  CHECK(p["api_calls"] == 3);  // the list's totals, and the per-function figures
  REQUIRE(p["calls"].size() == 2);
  CHECK(p["calls"][0]["func"] == "cudaFree");
  CHECK(p["calls"][1]["func"] == "cudaMalloc");
  CHECK(p["calls"][1]["errors"] == 1);
  CHECK(p["calls"][1]["log2_hist_ns"]["512"] == 1);
  CHECK(p["copies"]["HtoD"]["bytes"] == 4096);
  CHECK(p["outstanding_count"] == 2);
  REQUIRE(p["outstanding_allocations"].size() == 2);  // largest first
  CHECK(p["outstanding_allocations"][0].dump() ==
        R"({"api":"unknown","device":0,"kind":"device","ptr":"0x1","size":1610612736,"stack_id":7,"ts_ns":1})");
  CHECK(p["outstanding_allocations"][1]["ptr"] == "0x3");
  CHECK(p["outstanding_allocations"][1]["kind"] == "host");
  CHECK(p["outstanding_allocations"][1]["stack_id"].is_null());
  REQUIRE(p["outstanding_stacks"].size() == 1);
  CHECK(p["outstanding_stacks"][0]["stack_id"] == 7);
  CHECK(p["outstanding_stacks"][0]["bytes"] == 1536 * MiB);
  CHECK(p["outstanding_stacks"][0]["allocs"] == 1);
  CHECK(p["outstanding_stacks"][0]["frames"] == json::array({"cudaMalloc+0x1a [libfake_gpu.so]", "main+0x42 [app]"}));
  CHECK(p["leaked_stacks"] == json::array());
}

TEST_CASE("api: a reused pid shows the running process", "[server][api]") {
  AllocationLedger l;
  l.track_process(77, "old", 1, 0, false);
  l.apply(ev(EventType::ProcExit, 77, -1, MemKind::Unknown, 0, 0, 5));
  l.track_process(77, "new", 1, 10, false);
  State s;
  s.snapshot = l.snapshot(true);
  const json j = parse(*api_process(s, 77));
  CHECK(j["comm"] == "new");
  CHECK(j["state"] == "running");
  CHECK(j["instances"] == 2);
}

TEST_CASE("api: alerts for lost events, nearly full devices and leaks", "[server][api]") {
  const json a = parse(api_alerts(scenario()));
  REQUIRE(a.size() == 3);
  CHECK(a[0]["type"] == "events_lost");
  CHECK(a[0]["severity"] == "error");
  CHECK(a[0]["rb_drops"] == 3);
  CHECK(a[1]["type"] == "device_full");
  CHECK(a[1]["device"] == 0);
  CHECK(a[1]["severity"] == "warning");
  CHECK(a[1]["message"] == "device 0 (Fake H100) is 93.8% full: 75.0 GiB of 80.0 GiB");
  CHECK(a[2]["type"] == "leak");
  CHECK(a[2]["pid"] == 6000);
  CHECK(a[2]["message"] == "pid 6000 (leaky) exited holding 256.0 MiB in 1 allocation");

  SECTION("no alert below 90 % or for a device of unknown size") {
    State s;
    s.devices = {{0, "", "", 100, 89}, {1, "", "", 0, 5}};
    CHECK(api_alerts(s).empty());
  }
  SECTION("leaks beyond the cap are counted in one alert") {
    AllocationLedger l;
    for (uint32_t pid = 1; pid <= kMaxLeakAlerts + 5; ++pid) {
      l.track_process(pid, "p", 1, 0, false);
      l.apply(ev(EventType::Alloc, pid, 0, MemKind::Device, pid, pid * MiB));
      l.apply(ev(EventType::ProcExit, pid, -1, MemKind::Unknown, 0, 0, 2));
    }
    State s;
    s.snapshot = l.snapshot(true);
    const json many = parse(api_alerts(s));
    REQUIRE(many.size() == kMaxLeakAlerts + 1);
    CHECK(many[0]["pid"] == kMaxLeakAlerts + 5);  // the largest first
    CHECK(many.back()["processes"] == 5);
    CHECK(many.back()["leaked_bytes"] == (1 + 2 + 3 + 4 + 5) * MiB);
    CHECK(many.back()["message"] == "5 more exited processes leaked 15.0 MiB");
  }
}

TEST_CASE("api: the summary is everything the page needs, in a fixed order", "[server][api]") {
  const nlohmann::ordered_json j = api_summary(scenario(), "9.9.9");
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema", "time", "time_unix_ms", "sequence", "version", "interval_s", "total",
                                         "devices", "host", "processes", "health", "alerts", "analysis", "history"});
  CHECK(j["devices"].size() == 2);
  CHECK(j["host"]["live_bytes"] == 64 * MiB);
  CHECK(j["version"] == "9.9.9");
  CHECK(j["interval_s"] == 2.0);
  CHECK(j["total"]["live_bytes"] == 1536 * MiB + 1 * GiB);
  CHECK(j["total"]["leaked_bytes"] == 256 * MiB);
  CHECK(j["total"]["launches"] == 3);
  CHECK(j["health"]["events_lost"] == true);
  CHECK(j["health"]["rb_drops"] == 3);
  CHECK(j["health"]["libraries"][0]["mode"] == "usdt");
  CHECK(j["processes"].size() == 3);
  CHECK(j["alerts"].size() == 3);
}

TEST_CASE("api: invalid UTF-8 in a comm never breaks the JSON", "[server][api]") {
  AllocationLedger l;
  l.track_process(1, "bad\xFF\xFEname", 0, 0, false);
  State s;
  s.snapshot = l.snapshot(true);
  std::string text;
  REQUIRE_NOTHROW(text = dump_json(api_processes(s)));
  const json j = json::parse(text);
  CHECK(j["processes"][0]["comm"] == "bad\xEF\xBF\xBD\xEF\xBF\xBDname");
}

TEST_CASE("api: one event-stream frame per state", "[server][api]") {
  const std::string frame = sse_event(scenario(), "1.0");
  REQUIRE(frame.rfind("id: 5\ndata: {", 0) == 0);
  REQUIRE(frame.size() > 4);
  CHECK(frame.substr(frame.size() - 3) == "}\n\n");
  const std::string data = frame.substr(std::string("id: 5\ndata: ").size());
  CHECK(data.find('\n') == data.size() - 2);  // one data line
  const json j = json::parse(data);
  CHECK(j["sequence"] == 5);
  CHECK(j["processes"].size() == 3);
}
