// SPDX-License-Identifier: Apache-2.0
// Unit tests: the memory analyses (core/analysis.h) — trend fit, forecast and risk levels at
// their boundaries, fragmentation of scripted ranges, aged allocations, growth — their
// outputs (table, JSON, verdict, /metrics, API) and the server's history ring.
#include "trace_test_events.h"
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <deque>
#include <string>

#include <nlohmann/json.hpp>

#include "../../userspace/core/analysis.h"
#include "../../userspace/core/render.h"
#include "../../userspace/server/api.h"
#include "../../userspace/server/handler.h"
#include "../../userspace/server/history.h"
#include "../../userspace/server/metrics.h"

using namespace fgtrace;
using fgtrace::test::ev;
using nlohmann::json;

namespace {

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;
constexpr uint64_t kSec = 1'000'000'000ull;

std::deque<TrendSample> line(size_t n, uint64_t step_ns, uint64_t base, uint64_t per_step) {
  std::deque<TrendSample> s;
  for (size_t i = 0; i < n; ++i) s.push_back({1000 + i * step_ns, base + i * per_step});
  return s;
}

Event at(Event e, uint64_t ts) {
  e.ts_ns = ts;
  return e;
}

}  // namespace

TEST_CASE("fit_trend: exact slope, R² and confidence of known series", "[analysis]") {
  SECTION("a straight line of 10 samples, 2 MiB per second") {
    const TrendFit f = fit_trend(line(10, kSec, 1 * GiB, 2 * MiB));
    CHECK(f.samples == 10);
    CHECK(f.span_s == 9.0);
    CHECK(f.rate_bps == Approx(2.0 * MiB).epsilon(1e-12));
    CHECK(f.r2 == Approx(1.0).epsilon(1e-12));
    CHECK(f.confidence == Approx(1.0).epsilon(1e-12));  // (10 - 2) / 8 = 1
  }
  SECTION("three samples: R² 1, confidence 1/8") {
    const TrendFit f = fit_trend(line(3, kSec, 0, MiB));
    CHECK(f.rate_bps == Approx(1.0 * MiB));
    CHECK(f.confidence == Approx(1.0 / 8));
  }
  SECTION("two samples are always a line: no confidence") {
    const TrendFit f = fit_trend(line(2, kSec, 0, MiB));
    CHECK(f.rate_bps == Approx(1.0 * MiB));
    CHECK(f.confidence == 0.0);
  }
  SECTION("flat: rate 0, R² 1") {
    const TrendFit f = fit_trend(line(12, kSec, 5 * MiB, 0));
    CHECK(f.rate_bps == 0.0);
    CHECK(f.r2 == 1.0);
    CHECK(f.confidence == 1.0);
  }
  SECTION("a saw-tooth has no trend worth a forecast") {
    std::deque<TrendSample> s;
    for (uint64_t i = 0; i < 20; ++i) s.push_back({i * kSec, (i % 2) ? 10 * MiB : 0});
    const TrendFit f = fit_trend(s);
    CHECK(f.r2 < 0.05);
    CHECK(f.confidence < kMinForecastConfidence);
  }
  SECTION("all samples at one time: no rate") {
    std::deque<TrendSample> s{{5, 1}, {5, 2}, {5, 3}};
    CHECK(fit_trend(s).rate_bps == 0.0);
    CHECK(fit_trend(s).confidence == 0.0);
  }
}

TEST_CASE("risk levels at their boundaries (threshold 85)", "[analysis]") {
  const double t = 85;
  // usage only
  CHECK(risk_level(92.5, std::nullopt, t) == RiskLevel::Critical);
  CHECK(risk_level(92.49, std::nullopt, t) == RiskLevel::High);
  CHECK(risk_level(85.0, std::nullopt, t) == RiskLevel::High);
  CHECK(risk_level(84.99, std::nullopt, t) == RiskLevel::Medium);
  CHECK(risk_level(68.0, std::nullopt, t) == RiskLevel::Medium);
  CHECK(risk_level(67.99, std::nullopt, t) == RiskLevel::Low);
  // forecast only
  CHECK(risk_level(0, 60.0, t) == RiskLevel::Critical);
  CHECK(risk_level(0, 60.01, t) == RiskLevel::High);
  CHECK(risk_level(0, 300.0, t) == RiskLevel::High);
  CHECK(risk_level(0, 300.01, t) == RiskLevel::Medium);
  CHECK(risk_level(0, 1800.0, t) == RiskLevel::Medium);
  CHECK(risk_level(0, 1800.01, t) == RiskLevel::Low);
  // the higher of the two
  CHECK(risk_level(86, 1000.0, t) == RiskLevel::High);
  CHECK(risk_level(10, 30.0, t) == RiskLevel::Critical);
  // another threshold moves the usage bounds: critical at (100 + 50) / 2 = 75
  CHECK(risk_level(75, std::nullopt, 50) == RiskLevel::Critical);
  CHECK(risk_level(40, std::nullopt, 50) == RiskLevel::Medium);
  CHECK(risk_level(39.9, std::nullopt, 50) == RiskLevel::Low);
  CHECK(parse_risk_level("HIGH") == RiskLevel::High);
  CHECK(parse_risk_level("severe") == std::nullopt);
}

TEST_CASE("forecast: ETA from the fit, only when confident", "[analysis]") {
  const TrendFit grow = fit_trend(line(10, kSec, 0, 1 * GiB));  // 1 GiB/s, confidence 1
  const Forecast f = make_forecast(grow, 50 * GiB, 100 * GiB, 85);
  REQUIRE(f.eta_s);
  CHECK(*f.eta_s == Approx(50.0).epsilon(1e-12));
  CHECK(*f.usage_pct == 50.0);
  CHECK(f.risk == RiskLevel::Critical);  // full within 60 s

  const Forecast slow = make_forecast(fit_trend(line(10, kSec, 0, 1 * MiB)), 50 * GiB, 100 * GiB, 85);
  CHECK(*slow.eta_s == Approx(50.0 * 1024).epsilon(1e-12));  // 51200 s
  CHECK(slow.risk == RiskLevel::Low);

  const Forecast unsure = make_forecast(fit_trend(line(3, kSec, 0, 1 * GiB)), 50 * GiB, 100 * GiB, 85);
  CHECK_FALSE(unsure.eta_s);  // confidence 1/8
  CHECK(unsure.risk == RiskLevel::Low);

  const Forecast full = make_forecast(TrendFit{}, 100 * GiB, 100 * GiB, 85);
  CHECK(*full.eta_s == 0.0);
  CHECK(full.risk == RiskLevel::Critical);

  const Forecast unknown = make_forecast(grow, 50 * GiB, 0, 85);
  CHECK_FALSE(unknown.usage_pct);
  CHECK_FALSE(unknown.eta_s);
  CHECK_FALSE(unknown.risk);
}

TEST_CASE("fragmentation of scripted ranges: exact largest free extent", "[analysis]") {
  const uint64_t base = 0x7f0000000000;
  SECTION("64 MiB, 16 blocks of 4 MiB, every other one freed, the last two freed together") {
    std::vector<Extent> live;
    for (uint64_t i : {0, 2, 4, 6, 8, 10, 12}) live.push_back({base + i * 4 * MiB, base + (i + 1) * 4 * MiB});
    const Fragmentation f = fragmentation(base, 64 * MiB, live);
    CHECK(f.used_bytes == 28 * MiB);
    CHECK(f.free_bytes == 36 * MiB);
    CHECK(f.largest_free == 12 * MiB);  // blocks 13, 14, 15
    CHECK(f.free_extents == 7);
    CHECK(f.ratio == Approx(1.0 - 12.0 / 36.0));
  }
  SECTION("nothing live: one extent, ratio 0") {
    const Fragmentation f = fragmentation(base, 64 * MiB, {});
    CHECK(f.largest_free == 64 * MiB);
    CHECK(f.free_extents == 1);
    CHECK(f.ratio == 0.0);
  }
  SECTION("full: nothing free, ratio 0") {
    const Fragmentation f = fragmentation(base, 8 * MiB, {{base, base + 8 * MiB}});
    CHECK(f.free_bytes == 0);
    CHECK(f.largest_free == 0);
    CHECK(f.ratio == 0.0);
  }
  SECTION("overlaps merge, ranges outside the window are clipped, unsorted input") {
    const Fragmentation f = fragmentation(base, 16 * MiB,
                                          {{base + 10 * MiB, base + 20 * MiB},  // past the end: clipped to 16
                                           {base + 1 * MiB, base + 3 * MiB},
                                           {base + 2 * MiB, base + 4 * MiB},    // overlaps the one before
                                           {base - 8 * MiB, base - 4 * MiB}});  // below: ignored
    CHECK(f.used_bytes == 3 * MiB + 6 * MiB);
    CHECK(f.free_bytes == 1 * MiB + 6 * MiB);
    CHECK(f.largest_free == 6 * MiB);  // [4, 10)
    CHECK(f.free_extents == 2);
  }
}

TEST_CASE("TrendSeries keeps the window and a bounded number of samples", "[analysis]") {
  TrendSeries s;
  for (uint64_t i = 0; i < 1000; ++i) s.add(i * kSec, i, 60 * kSec);
  CHECK(s.size() == 61);  // t-60 s .. t
  CHECK(s.fit().rate_bps == Approx(1.0));
  TrendSeries dense;
  for (uint64_t i = 0; i < 100000; ++i) dense.add(i * 10'000'000ull, i, 60 * kSec);  // every 10 ms
  CHECK(dense.size() <= kMaxTrendSamples + 1);
  CHECK(dense.fit().rate_bps == Approx(100.0).epsilon(1e-6));
}

TEST_CASE("Analyzer: aged allocations are exactly those at least --leak-age old", "[analysis]") {
  AllocationLedger l;
  l.track_process(100, "holder", 1, 0, false);
  Event a = ev(EventType::Alloc, 100, 0, MemKind::Device, 0x1000, 1 * MiB);
  a.stack_id = 7;
  l.apply(at(a, 1 * kSec));
  l.apply(at(ev(EventType::Alloc, 100, 0, MemKind::Device, 0x2000, 2 * MiB), 2 * kSec));
  l.apply(at(ev(EventType::Alloc, 100, 0, MemKind::Device, 0x3000, 3 * MiB), 7 * kSec));      // exactly 5 s old
  l.apply(at(ev(EventType::Alloc, 100, 0, MemKind::Device, 0x4000, 4 * MiB), 7 * kSec + 1));  // 1 ns younger
  l.apply(at(ev(EventType::Alloc, 100, 0, MemKind::Device, 0x5000, 5 * MiB), 3 * kSec));
  l.apply(at(ev(EventType::Free, 100, 0, MemKind::Device, 0x5000, 0), 4 * kSec));  // freed: not held
  AnalysisOptions o;
  o.leak_age_s = 5;
  Analyzer an(o);
  Snapshot snap = l.snapshot(true);
  snap.analysis = an.update(l, snap, 12 * kSec, {});
  const ProcessAnalysis* p = snap.analysis->process(100, 0);
  REQUIRE(p);
  CHECK(p->aged_listed);
  CHECK(p->aged_count == 3);
  CHECK(p->aged_bytes == 6 * MiB);
  REQUIRE(p->aged.size() == 3);
  CHECK(p->aged[0].ptr == 0x1000);  // oldest first
  CHECK(p->aged[1].ptr == 0x2000);
  CHECK(p->aged[2].ptr == 0x3000);
  REQUIRE(p->aged_stacks.size() == 1);
  CHECK(p->aged_stacks[0].stack_id == 7);
  CHECK(p->aged_stacks[0].bytes == 1 * MiB);
  const auto stacks = top_stacks(snap, StackSet::Aged, 10);
  REQUIRE(stacks.size() == 1);
  CHECK(stacks[0].pid == 100);

  const json j = json::parse(render_json_line(snap, "t"));
  const json& pj = j["analysis"]["processes"][0];
  CHECK(pj["aged"]["count"] == 3);
  CHECK(pj["aged"]["allocations"][2]["ptr"] == "0x3000");
  CHECK(render_table(snap, {}).find("3 allocs, 6.0 MiB") != std::string::npos);

  // A refresh later with the same books: what crossed the boundary joins (kept, not re-walked).
  snap.analysis = an.update(l, snap, 12 * kSec + 1, {});
  const ProcessAnalysis* later = snap.analysis->process(100, 0);
  CHECK(later->aged_count == 4);
  CHECK(later->aged_bytes == 10 * MiB);
  CHECK(later->aged.back().ptr == 0x4000);
  // The books change (a free): rebuilt from the ledger.
  l.apply(at(ev(EventType::Free, 100, 0, MemKind::Device, 0x2000, 0), 12 * kSec + 2));
  snap = l.snapshot(true);
  snap.analysis = an.update(l, snap, 12 * kSec + 3, {});
  CHECK(snap.analysis->process(100, 0)->aged_count == 3);
  CHECK(snap.analysis->process(100, 0)->aged_bytes == 8 * MiB);

  // Without --leak-age: no listing at all.
  Analyzer none(AnalysisOptions{});
  snap.analysis = none.update(l, snap, 12 * kSec, {});
  CHECK_FALSE(snap.analysis->process(100, 0)->aged_listed);
  CHECK(json::parse(render_json_line(snap, "t"))["analysis"]["processes"][0]["aged"].is_null());
}

TEST_CASE("Analyzer: growth, forecast, risk and fragmentation over refreshes", "[analysis]") {
  AllocationLedger l;
  l.track_process(200, "grower", 1, 0, false);
  AnalysisOptions o;
  o.leak_rate_bytes_per_min = 50 * MiB;
  o.window_s = 60;
  Analyzer an(o);
  AnalysisInputs in;
  in.devices = {{0, 64 * MiB, 0}};
  const uint64_t base = 0x7f0000000000;
  in.arenas[{200, 0}] = base;
  Snapshot snap;
  // One 4 MiB block per second, at consecutive 4 MiB offsets: 4 MiB/s = 240 MiB/min.
  for (uint64_t i = 0; i < 10; ++i) {
    l.apply(at(ev(EventType::Alloc, 200, 0, MemKind::Device, base + i * 4 * MiB, 4 * MiB), i * kSec + 1));
    snap = l.snapshot(true);
    in.devices[0].used = (i + 1) * 4 * MiB;
    snap.analysis = an.update(l, snap, i * kSec + 2, in);
  }
  const Analysis& a = *snap.analysis;
  const ProcessAnalysis* p = a.process(200, 0);
  REQUIRE(p);
  CHECK(p->growth.rate_bps == Approx(4.0 * MiB));
  CHECK(p->growth_bytes_per_min == Approx(240.0 * MiB));
  CHECK(p->growing);
  REQUIRE(a.devices.size() == 1);
  const Forecast& f = a.devices[0].forecast;
  CHECK(f.used == 40 * MiB);
  CHECK(*f.eta_s == Approx(6.0));  // 24 MiB left at 4 MiB/s
  CHECK(f.risk == RiskLevel::Critical);
  CHECK(a.worst_risk == RiskLevel::Critical);
  REQUIRE(a.devices[0].fragmentation);
  CHECK(a.devices[0].fragmentation->largest_free == 24 * MiB);  // the tail: one extent
  CHECK(a.devices[0].fragmentation->ratio == 0.0);
  CHECK(a.devices[0].fragmentation_pid == 200);

  // Free every other block: holes at 1, 3, 5, 7; block 9's joins the 24 MiB tail.
  for (uint64_t i = 1; i < 10; i += 2)
    l.apply(at(ev(EventType::Free, 200, 0, MemKind::Device, base + i * 4 * MiB, 0), 10 * kSec));
  snap = l.snapshot(true);
  snap.analysis = an.update(l, snap, 10 * kSec + 2, in);
  const Fragmentation& fr = *snap.analysis->devices[0].fragmentation;
  CHECK(fr.free_bytes == 44 * MiB);
  CHECK(fr.largest_free == 28 * MiB);
  CHECK(fr.free_extents == 5);
  CHECK(fr.ratio == Approx(1.0 - 28.0 / 44.0));

  // The verdict: the worst risk stays critical whatever came after.
  const Verdict v = evaluate(snap, std::nullopt, false, RiskLevel::High);
  CHECK(v.code == kExitOomRisk);
  CHECK(std::string(v.status()) == "oom_risk");
  CHECK(evaluate(snap, std::nullopt, false, std::nullopt).code == 0);
  const Verdict leak_first = [&] {
    l.apply(at(ev(EventType::ProcExit, 200, -1, MemKind::Unknown, 0, 0), 11 * kSec));
    Snapshot s2 = l.snapshot(true);
    s2.analysis = an.update(l, s2, 11 * kSec + 2, in);
    const ProcessAnalysis* gone = s2.analysis->process(200, 0);
    CHECK(gone->exited);
    CHECK(gone->growing);  // as of its last refresh while it ran
    return evaluate(s2, std::nullopt, true, RiskLevel::High);
  }();
  CHECK(leak_first.code == kExitLeaked);  // leak (4) before OOM risk (6)

  // /metrics carries the forecast and the fragmentation.
  const std::string m = server::render_metrics(snap, {{0, "GPU-x", "Fake", 64 * MiB, 24 * MiB}}, {});
  CHECK(m.find("fakegpu_device_oom_risk{device=\"0\",uuid=\"GPU-x\"} 3\n") != std::string::npos);
  CHECK(m.find("fakegpu_device_largest_free_extent_bytes{device=\"0\",uuid=\"GPU-x\"} 29360128\n") !=
        std::string::npos);
  CHECK(m.find("fakegpu_process_memory_growing{pid=\"200\",comm=\"grower\"} 1\n") != std::string::npos);
  CHECK(m.find("# TYPE fakegpu_device_oom_eta_seconds gauge\n") != std::string::npos);
}

TEST_CASE("History: a bounded ring, its memory counted, served as /api/v1/history", "[analysis][server]") {
  CHECK(server::history_samples_for(3600, 1) == 3601);
  CHECK(server::history_samples_for(10, 0.2) == 51);
  server::History h(5);
  AllocationLedger l;
  l.track_process(300, "w", 1, 0, false);
  l.apply(ev(EventType::Alloc, 300, 1, MemKind::Device, 0x10, 3 * MiB));
  server::State st;
  st.snapshot = l.snapshot(true);
  st.devices = {{1, "GPU-a", "Fake", 16 * GiB, 3 * MiB}};
  size_t one = 0;
  for (uint64_t i = 1; i <= 12; ++i) {
    st.time_unix_ms = 1000 * i;
    auto sample = std::make_shared<const server::HistorySample>(server::history_sample(st));
    one = sample->memory_bytes() + sizeof(sample);
    h.append(std::move(sample));
    CHECK(h.size() == std::min<uint64_t>(i, 5));
  }
  CHECK(h.memory_bytes() == 5 * one);
  st.history = h.samples();
  st.history_max_samples = h.max_samples();
  st.history_bytes = h.memory_bytes();
  const json j = json::parse(server::dump_json(server::api_history(st)));
  REQUIRE(j["samples"].size() == 5);
  CHECK(j["samples"][0]["time_unix_ms"] == 8000);  // the oldest kept
  CHECK(j["samples"][4]["devices"][0]["traced_live_bytes"] == 3 * MiB);
  CHECK(j["samples"][4]["processes"][0]["pid"] == 300);
  CHECK(j["samples"][4]["processes"][0]["live_bytes"] == 3 * MiB);

  server::Request req{"GET", "/api/v1/history?since=10000", {}};
  const server::Response r = server::handle(req, st);
  CHECK(r.status == 200);
  CHECK(json::parse(r.body)["samples"].size() == 2);  // 11000 and 12000
  req.target = "/api/v1/history?since=yesterday";
  CHECK(server::handle(req, st).status == 400);
  req.target = "/api/v1/history?points=0";
  CHECK(server::handle(req, st).status == 400);
  // At most 2 of the 5, every third counted back from the newest: 12000 and 9000.
  req.target = "/api/v1/history?points=2";
  const json thin = json::parse(server::handle(req, st).body);
  CHECK(thin["stride"] == 3);
  REQUIRE(thin["samples"].size() == 2);
  CHECK(thin["samples"][0]["time_unix_ms"] == 9000);
  CHECK(thin["samples"][1]["time_unix_ms"] == 12000);
}
