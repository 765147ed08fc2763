// SPDX-License-Identifier: Apache-2.0
// Unit tests: the timeline of `fakegpu-trace run --timeline` (core/timeline.h), fed by the
// ledger as it applies records: counter samples (every peak and final value exact, bounded),
// out-of-memory and leak instants, the Chrome trace-event document; the HTML page's embedded data.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../userspace/core/html_report.h"
#include "../../userspace/core/ledger.h"
#include "../../userspace/core/timeline.h"
#include "trace_test_events.h"

using namespace fgtrace;
using nlohmann::json;

namespace {

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t ms = 1'000'000;

// The records these tests feed: device memory, the runtime's, status as given.
Event ev(EventType type, uint32_t pid, uint64_t ts, int32_t dev, uint64_t ptr, uint64_t size, int32_t status = 0) {
  Event e = test::ev(type, pid, dev, MemKind::Device, ptr, size, ts);
  e.status = status;
  e.api = Api::Runtime;
  e.source = Source::Usdt;
  return e;
}

// A ledger feeding a timeline, process 7 ("p") tracked.
struct Fed {
  AllocationLedger ledger;
  Timeline t;
  explicit Fed(uint64_t resolution_ns = Timeline::kDefaultResolutionNs, size_t max = Timeline::kDefaultMaxSamples)
      : t(resolution_ns, max) {
    ledger.set_observer(&t);
    ledger.track_process(7, "p", 1, 0, false);
  }
};

json document(const Timeline& t, const Snapshot& s) {
  std::ostringstream out;
  t.write(out, s);
  return json::parse(out.str());
}

// (pid, name, ts µs, bytes) of every counter event, in document order.
struct Point {
  uint32_t pid;
  std::string name;
  double ts;
  uint64_t bytes;
  bool operator==(const Point&) const = default;
};
std::vector<Point> counters(const json& doc) {
  std::vector<Point> out;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "C") out.push_back({e["pid"], e["name"], e["ts"], e["args"]["bytes"]});
  return out;
}

}  // namespace

TEST_CASE("timeline: a counter per process and device and one per device, in the events' time", "[timeline]") {
  AllocationLedger ledger;
  Timeline t;
  ledger.set_observer(&t);
  ledger.track_process(7, "train", 1, 0, false);
  ledger.track_process(8, "eval", 1, 0, false);
  const uint64_t t0 = 1000 * ms;
  ledger.apply(ev(EventType::Alloc, 7, t0, 1, 0x1000, 4 * MiB));
  ledger.apply(ev(EventType::Alloc, 8, t0 + 2 * ms, 1, 0x9000, 2 * MiB));
  ledger.apply(ev(EventType::Free, 7, t0 + 5 * ms, 1, 0x1000, 0));
  const json doc = document(t, ledger.snapshot(true));
  CHECK(counters(doc) == std::vector<Point>{
                             {0, "GPU 1 memory", 0.0, 4 * MiB},
                             {0, "GPU 1 memory", 2000.0, 6 * MiB},
                             {0, "GPU 1 memory", 5000.0, 2 * MiB},
                             {7, "GPU 1 memory", 0.0, 4 * MiB},
                             {7, "GPU 1 memory", 5000.0, 0},
                             {8, "GPU 1 memory", 2000.0, 2 * MiB},
                         });
  std::vector<std::string> names;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") names.push_back(e["args"]["name"]);
  CHECK(names == std::vector<std::string>{"GPUs (all processes)", "train (pid 7)", "eval (pid 8)"});
  CHECK(doc["displayTimeUnit"] == "ms");
}

TEST_CASE("timeline: within a window a track keeps its highest value and its last", "[timeline]") {
  Fed f(10 * ms);
  AllocationLedger& ledger = f.ledger;
  Timeline& t = f.t;
  // One 10 ms window: 1, 3 (the peak), 2, 0 MiB.
  ledger.apply(ev(EventType::Alloc, 7, 1 * ms, 0, 0x1000, MiB));
  ledger.apply(ev(EventType::Alloc, 7, 2 * ms, 0, 0x2000, 2 * MiB));
  ledger.apply(ev(EventType::Free, 7, 3 * ms, 0, 0x1000, 0));
  ledger.apply(ev(EventType::Free, 7, 4 * ms, 0, 0x2000, 0));
  const auto points = counters(document(t, ledger.snapshot(true)));
  CHECK(points == std::vector<Point>{{0, "GPU 0 memory", 1000.0, 3 * MiB},
                                     {0, "GPU 0 memory", 3000.0, 0},
                                     {7, "GPU 0 memory", 1000.0, 3 * MiB},
                                     {7, "GPU 0 memory", 3000.0, 0}});
}

TEST_CASE("timeline: past its sample bound the windows widen, peaks and final values stay exact", "[timeline]") {
  Fed f(1000, 1000);
  AllocationLedger& ledger = f.ledger;
  Timeline& t = f.t;
  // 50,000 pairs 1 µs apart, one allocation held from the middle on, a 64 MiB spike at 3/4.
  for (uint64_t i = 0; i < 50'000; ++i) {
    const uint64_t ts = 1'000'000 + i * 2000;
    ledger.apply(ev(EventType::Alloc, 7, ts, 0, 0x10000, MiB));
    ledger.apply(ev(EventType::Free, 7, ts + 1000, 0, 0x10000, 0));
    if (i == 25'000) ledger.apply(ev(EventType::Alloc, 7, ts + 1500, 0, 0x900000, 8 * MiB));
    if (i == 37'500) {
      ledger.apply(ev(EventType::Alloc, 7, ts + 1500, 0, 0x4000000, 64 * MiB));
      ledger.apply(ev(EventType::Free, 7, ts + 1600, 0, 0x4000000, 0));
    }
  }
  CHECK(t.samples() <= 1000);
  CHECK(t.resolution_ns() > 1000);
  const auto points = counters(document(t, ledger.snapshot(true)));
  uint64_t high = 0;
  for (const Point& p : points)
    if (p.pid == 7) high = std::max(high, p.bytes);
  CHECK(high == 72 * MiB);  // the spike on top of the 8 MiB held
  CHECK(points.back().pid == 7);
  CHECK(points.back().bytes == 8 * MiB);
  for (size_t i = 1; i < points.size(); ++i)
    if (points[i].pid == points[i - 1].pid) CHECK(points[i].ts >= points[i - 1].ts);
}

TEST_CASE("timeline: out-of-memory failures and leaks at exit are instant events", "[timeline]") {
  Fed f;
  AllocationLedger& ledger = f.ledger;
  Timeline& t = f.t;
  ledger.apply(ev(EventType::Alloc, 7, 10 * ms, 3, 0x1000, 5 * MiB));
  ledger.apply(ev(EventType::AllocFail, 7, 11 * ms, 3, 0, 1ull << 40, 2));  // out of memory
  ledger.apply(ev(EventType::AllocFail, 7, 12 * ms, 3, 0, 0, 1));           // invalid value: not an OOM
  ledger.apply(ev(EventType::Alloc, 7, 13 * ms, 3, 0, 1ull << 41, 2));      // a USDT alloc site's failure
  ledger.apply(ev(EventType::ProcExit, 7, 20 * ms, -1, 0, 0));
  std::vector<json> instants;
  const json doc = document(t, ledger.snapshot(true));
  INFO(doc.dump());
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "i") instants.push_back(e);
  REQUIRE(instants.size() == 3);
  CHECK(instants[0]["name"] == "out of memory");
  CHECK(instants[0]["ts"] == 1000.0);
  CHECK(instants[0]["args"] == json{{"device", 3}, {"bytes", 1ull << 40}, {"status", 2}});
  CHECK(instants[1]["args"]["bytes"] == 1ull << 41);
  CHECK(instants[2]["name"] == "leak at exit");
  CHECK(instants[2]["ts"] == 10000.0);
  CHECK(instants[2]["args"] == json{{"leaked_bytes", 5 * MiB}, {"leaked_allocs", 1}});
}

TEST_CASE("html report: embedded JSON cannot end its script element", "[timeline]") {
  const json doc = {{"comm", "</script><script>alert(1)</script>"}, {"sep", "a\u2028b"}};
  const std::string text = json_for_script(doc);
  CHECK(text.find("</") == std::string::npos);
  CHECK(text.find("\xE2\x80\xA8") == std::string::npos);
  CHECK(json::parse(text) == doc);
  std::ostringstream page;
  write_html_report(page, {{"processes", json::array({{{"comm", "</script>"}}})}}, json::object());
  CHECK(page.str().find(
            "<script type=\"application/json\" id=\"summary\">{\"processes\":[{\"comm\":\"<\\/script>\"}]}</script>") !=
        std::string::npos);
}

TEST_CASE("timeline: a device's fragmentation at each refresh is a pair of counters", "[timeline]") {
  Fed f;
  AllocationLedger& ledger = f.ledger;
  Timeline& t = f.t;
  ledger.apply(ev(EventType::Alloc, 7, 10 * ms, 0, 0x1000, 4 * MiB));
  t.fragmentation(12 * ms, 0, 8 * MiB, 0.75);
  t.fragmentation(13 * ms, 0, 16 * MiB, 0.5);
  std::vector<json> frag;
  const json doc = document(t, ledger.snapshot(true));
  INFO(doc.dump());
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "C" && e["name"] != "GPU 0 memory") frag.push_back({e["name"], e["ts"], e["args"]});
  CHECK(frag == std::vector<json>{{"GPU 0 largest free extent", 2000.0, {{"bytes", 8 * MiB}}},
                                  {"GPU 0 fragmentation", 2000.0, {{"ratio", 0.75}}},
                                  {"GPU 0 largest free extent", 3000.0, {{"bytes", 16 * MiB}}},
                                  {"GPU 0 fragmentation", 3000.0, {{"ratio", 0.5}}}});
}
