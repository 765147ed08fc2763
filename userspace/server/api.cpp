// SPDX-License-Identifier: Apache-2.0
#include "api.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "../core/analysis.h"
#include "../core/json.h"
#include "../core/render.h"

namespace fgtrace::server {

using nlohmann::ordered_json;

std::string iso8601_utc(uint64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];  // room for any int year, so no truncation warning
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<unsigned>(unix_ms % 1000));
  return buf;
}

std::string dump_json(const ordered_json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

namespace {

ordered_json envelope(const State& s) {
  return {{"schema", kApiSchema},
          {"time", iso8601_utc(s.time_unix_ms)},
          {"time_unix_ms", s.time_unix_ms},
          {"sequence", s.sequence}};
}

const DeviceInfo* find_device(const State& s, int32_t ordinal) {
  for (const DeviceInfo& d : s.devices)
    if (d.ordinal == ordinal) return &d;
  return nullptr;
}

// What the traced processes hold on a device (or pinned on the host), under that device.
constexpr DeviceFields kTracedFields{.device = false, .counts = false};

// The process's analyses (growth, OOM risk, aged allocations, fragmentation); null without.
ordered_json analysis_of(const State& s, const ProcessView& p) {
  const ProcessAnalysis* pa = s.snapshot.analysis ? s.snapshot.analysis->process(p.pid, p.start_ns) : nullptr;
  if (!pa) return nullptr;
  ordered_json j = process_analysis_json(*pa);
  j.erase("pid");
  j.erase("start_ns");
  j.erase("state");
  return j;
}

ordered_json process_entry(const State& s, const ProcessView& p) {
  uint64_t calls = 0, errors = 0;
  for (const CallStats& c : p.calls) {
    calls += c.calls;
    errors += c.errors;
  }
  ordered_json j = process_json(p, {.lifetime = true, .free_detail = false});
  j["api_calls"] = calls;
  j["api_errors"] = errors;
  j["launches"] = p.launches;
  j["devices"] = devices_json(p.devices, {.processes = false});
  j["analysis"] = analysis_of(s, p);
  return j;
}

ordered_json processes_array(const State& s) {
  ordered_json arr = ordered_json::array();
  for (const ProcessView& p : s.snapshot.processes) arr.push_back(process_entry(s, p));
  return arr;
}

ordered_json devices_array(const State& s) {
  std::set<int32_t> ordinals;
  for (const DeviceInfo& d : s.devices) ordinals.insert(d.ordinal);
  std::map<int32_t, const DeviceUsage*> traced;
  for (const DeviceUsage& d : s.snapshot.devices) {
    traced[d.device] = &d;
    ordinals.insert(d.device);
  }
  ordered_json arr = ordered_json::array();
  for (int32_t ordinal : ordinals) {
    if (ordinal < 0) continue;  // host memory: host_json()
    const DeviceInfo* info = find_device(s, ordinal);
    const auto t = traced.find(ordinal);
    const DeviceUsage none{};
    const DeviceUsage& u = t == traced.end() ? none : *t->second;
    ordered_json j = {{"device", ordinal}};
    if (info) {
      j["uuid"] = info->uuid;
      j["name"] = info->name;
      j["total_bytes"] = info->total ? ordered_json(info->total) : ordered_json(nullptr);
      j["used_bytes"] = info->used;
      j["free_bytes"] = info->total > info->used ? info->total - info->used : 0;
      j["used_ratio"] = info->total ? ordered_json(static_cast<double>(info->used) / static_cast<double>(info->total))
                                    : ordered_json(nullptr);
    } else {  // books on a device the system did not list
      j["uuid"] = "";
      j["name"] = "";
      j["total_bytes"] = nullptr;
      j["used_bytes"] = nullptr;
      j["free_bytes"] = nullptr;
      j["used_ratio"] = nullptr;
    }
    j["traced"] = device_json(u, kTracedFields);
    // The analyses (core/analysis.h); null without them.
    const DeviceAnalysis* da = s.snapshot.analysis ? s.snapshot.analysis->device(ordinal) : nullptr;
    ordered_json analysis = da ? device_analysis_json(*da) : ordered_json::object();
    for (const char* key : {"forecast", "fragmentation", "fragmentation_pid"})
      j[key] = analysis.contains(key) ? std::move(analysis[key]) : ordered_json(nullptr);
    arr.push_back(std::move(j));
  }
  return arr;
}

// Pinned host memory (device -1) of the traced processes: not a device, shown on its own.
ordered_json host_json(const State& s) {
  DeviceUsage u{};
  for (const DeviceUsage& d : s.snapshot.devices)
    if (d.device < 0) u = d;
  return device_json(u, kTracedFields);
}

ordered_json stacks_array(const State& s, uint32_t pid, const std::vector<StackUsage>& stacks) {
  const std::vector<std::string> unsymbolized;
  ordered_json arr = ordered_json::array();
  for (const StackUsage& st : stacks) {
    const auto f = s.stack_frames.find({pid, st.stack_id});
    arr.push_back(stack_json(st, f == s.stack_frames.end() ? &unsymbolized : &f->second));
  }
  return arr;
}

std::string percent(double ratio) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100.0);
  return buf;
}

}  // namespace

ordered_json api_processes(const State& s) {
  ordered_json j = envelope(s);
  j["processes"] = processes_array(s);
  return j;
}

ordered_json api_devices(const State& s) {
  ordered_json j = envelope(s);
  j["devices"] = devices_array(s);
  j["host"] = host_json(s);
  return j;
}

std::optional<ordered_json> api_process(const State& s, uint32_t pid) {
  const ProcessView* pick = nullptr;
  size_t instances = 0;
  for (const ProcessView& p : s.snapshot.processes) {
    if (p.pid != pid) continue;
    ++instances;
    // Running beats exited; among equals the later start (the snapshot is by start time).
    if (!pick || !p.exited || pick->exited) pick = &p;
  }
  if (!pick) return std::nullopt;
  const ProcessView& p = *pick;
  ordered_json j = envelope(s);
  ordered_json entry = process_entry(s, p);  // a named object: items() only refers to it
  for (auto& [key, value] : entry.items()) j[key] = std::move(value);
  j["exit_event_seen"] = p.exit_event_seen;
  j["instances"] = instances;
  j["books"] = books_json(p.books);
  add_breakdowns(j, p);
  j["calls"] = calls_json(p.calls);
  j["copies"] = copies_json(p.copies);
  j["outstanding_count"] = p.outstanding_count;
  ordered_json allocs = ordered_json::array();
  for (const OutstandingAllocation& a : p.outstanding_allocations) allocs.push_back(outstanding_allocation_json(a));
  j["outstanding_allocations"] = std::move(allocs);
  j["outstanding_stacks"] = stacks_array(s, p.pid, p.outstanding_stacks);
  j["leaked_stacks"] = stacks_array(s, p.pid, p.leaked_stacks);
  const ProcessAnalysis* pa = s.snapshot.analysis ? s.snapshot.analysis->process(p.pid, p.start_ns) : nullptr;
  j["aged_stacks"] = pa && pa->aged_listed ? stacks_array(s, p.pid, pa->aged_stacks) : ordered_json(nullptr);
  return j;
}

ordered_json api_alerts(const State& s) {
  ordered_json arr = ordered_json::array();
  const Snapshot& snap = s.snapshot;
  if (events_lost(snap)) {
    const Health& h = snap.health;
    arr.push_back({{"type", "events_lost"},
                   {"severity", "error"},
                   {"rb_drops", h.rb_drops},
                   {"missing_entry", h.missing_entry},
                   {"alloc_map_full", h.alloc_map_full},
                   {"bad_records", snap.counters.bad_records},
                   {"duplicate_allocs", snap.counters.duplicate_allocs},
                   {"message", "events were lost (" + lost_events_text(snap) + "): figures may be incomplete"}});
  }
  for (const DeviceInfo& d : s.devices) {
    if (d.total == 0) continue;
    const double ratio = static_cast<double>(d.used) / static_cast<double>(d.total);
    if (ratio < kDeviceFullRatio) continue;
    arr.push_back(
        {{"type", "device_full"},
         {"severity", ratio >= 0.98 ? "error" : "warning"},
         {"device", d.ordinal},
         {"uuid", d.uuid},
         {"used_bytes", d.used},
         {"total_bytes", d.total},
         {"used_ratio", ratio},
         {"message", "device " + std::to_string(d.ordinal) + (d.name.empty() ? "" : " (" + d.name + ")") + " is " +
                         percent(ratio) + " full: " + human_size(d.used) + " of " + human_size(d.total)}});
  }
  if (snap.analysis) {
    const Analysis& a = *snap.analysis;
    for (const DeviceAnalysis& d : a.devices) {
      const Forecast& f = d.forecast;
      if (!f.risk || *f.risk < RiskLevel::High) continue;
      arr.push_back({{"type", "oom_risk"},
                     {"severity", *f.risk == RiskLevel::Critical ? "error" : "warning"},
                     {"device", d.device},
                     {"risk", to_string(*f.risk)},
                     {"usage_pct", *f.usage_pct},
                     {"eta_s", or_null(f.eta_s)},
                     {"confidence", f.trend.confidence},
                     {"message", "device " + std::to_string(d.device) + ": OOM risk " + to_string(*f.risk) + " (" +
                                     percent(*f.usage_pct / 100.0) + " in use, " + rate_text(f.trend.rate_bps) +
                                     ", full in " + eta_text(f.eta_s) + ")"}});
    }
    for (const ProcessAnalysis& pa : a.processes) {
      if (pa.exited || !pa.growing) continue;
      std::string comm;
      for (const ProcessView& p : snap.processes)
        if (p.pid == pa.pid && p.start_ns == pa.start_ns) comm = p.comm;
      arr.push_back({{"type", "growing"},
                     {"severity", "warning"},
                     {"pid", pa.pid},
                     {"comm", comm},
                     {"growth_bytes_per_min", pa.growth_bytes_per_min},
                     {"message", "pid " + std::to_string(pa.pid) + " (" + comm + ") grows " +
                                     rate_text(pa.growth_bytes_per_min, "min") + ", at or over --leak-rate " +
                                     human_size(a.options.leak_rate_bytes_per_min) + "/min"}});
    }
  }
  std::vector<const ProcessView*> leakers;
  for (const ProcessView& p : snap.processes)
    if (p.exited && (p.leaked_bytes > 0 || p.leaked_allocs > 0)) leakers.push_back(&p);
  std::stable_sort(leakers.begin(), leakers.end(),
                   [](const ProcessView* a, const ProcessView* b) { return a->leaked_bytes > b->leaked_bytes; });
  for (size_t i = 0; i < leakers.size() && i < kMaxLeakAlerts; ++i) {
    const ProcessView& p = *leakers[i];
    arr.push_back({{"type", "leak"},
                   {"severity", "warning"},
                   {"pid", p.pid},
                   {"comm", p.comm},
                   {"leaked_bytes", p.leaked_bytes},
                   {"leaked_allocs", p.leaked_allocs},
                   {"message", "pid " + std::to_string(p.pid) + " (" + p.comm + ") exited holding " +
                                   human_size(p.leaked_bytes) + " in " + std::to_string(p.leaked_allocs) +
                                   (p.leaked_allocs == 1 ? " allocation" : " allocations")}});
  }
  if (leakers.size() > kMaxLeakAlerts) {
    uint64_t bytes = 0;
    for (size_t i = kMaxLeakAlerts; i < leakers.size(); ++i) bytes += leakers[i]->leaked_bytes;
    const size_t more = leakers.size() - kMaxLeakAlerts;
    arr.push_back({{"type", "leak"},
                   {"severity", "warning"},
                   {"processes", more},
                   {"leaked_bytes", bytes},
                   {"message", std::to_string(more) + " more exited processes leaked " + human_size(bytes)}});
  }
  return arr;
}

ordered_json api_summary(const State& s, std::string_view version) {
  const Snapshot& snap = s.snapshot;
  ordered_json j = envelope(s);
  j["version"] = version;
  j["interval_s"] = s.interval_s;
  ordered_json total = totals_json(snap, /*with_live=*/true);
  total["launches"] = snap.launches;
  total["copies"] = copies_json(snap.copies);
  j["total"] = std::move(total);
  j["devices"] = devices_array(s);
  j["host"] = host_json(s);
  j["processes"] = processes_array(s);
  ordered_json health = health_json(snap);
  health["libraries"] = libraries_json(snap);
  j["health"] = std::move(health);
  j["alerts"] = api_alerts(s);
  j["analysis"] = snap.analysis ? analysis_settings_json(*snap.analysis) : ordered_json(nullptr);
  j["history"] = {{"samples", s.history.size()},
                  {"max_samples", s.history_max_samples},
                  {"history_s", s.history_s},
                  {"bytes", s.history_bytes}};
  return j;
}

ordered_json api_history(const State& s, uint64_t since_unix_ms, size_t max_points) {
  ordered_json j = envelope(s);
  j["interval_s"] = s.interval_s;
  j["history_s"] = s.history_s;
  j["max_samples"] = s.history_max_samples;
  j["bytes"] = s.history_bytes;
  // The samples asked for, then every stride-th counted back from the newest.
  size_t first = 0;
  while (first < s.history.size() && s.history[first]->time_unix_ms <= since_unix_ms) ++first;
  const size_t n = s.history.size() - first;
  const size_t stride = max_points > 0 && n > max_points ? (n + max_points - 1) / max_points : 1;
  j["stride"] = stride;
  ordered_json samples = ordered_json::array();
  for (size_t i = first; i < s.history.size(); ++i) {
    if ((s.history.size() - 1 - i) % stride != 0) continue;
    const HistorySample& h = *s.history[i];
    ordered_json devs = ordered_json::array();
    for (const HistoryDevice& d : h.devices) {
      devs.push_back({{"device", d.device},
                      {"total_bytes", d.total_bytes ? ordered_json(d.total_bytes) : ordered_json(nullptr)},
                      {"used_bytes", d.used_bytes},
                      {"traced_live_bytes", d.traced_live_bytes},
                      {"growth_bytes_per_s", d.growth_bytes_per_s},
                      {"eta_s", or_null(d.eta_s)},
                      {"risk", or_null(d.risk)},
                      {"fragmentation", fragmentation_json(d.fragmentation, /*brief=*/true)}});
    }
    ordered_json procs = ordered_json::array();
    for (const HistoryProcess& p : h.processes)
      procs.push_back({{"pid", p.pid},
                       {"start_ns", p.start_ns},
                       {"comm", p.name()},
                       {"device", p.device},
                       {"live_bytes", p.live_bytes}});
    samples.push_back(
        {{"time_unix_ms", h.time_unix_ms}, {"devices", std::move(devs)}, {"processes", std::move(procs)}});
  }
  j["samples"] = std::move(samples);
  return j;
}

std::string sse_event(const State& s, std::string_view version) {
  std::string out = "id: " + std::to_string(s.sequence) + "\ndata: ";
  out += dump_json(api_summary(s, version));  // compact: no newline can end the data field
  out += "\n\n";
  return out;
}

}  // namespace fgtrace::server
