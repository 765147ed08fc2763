#include "api.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

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

ordered_json process_devices(const ProcessView& p) {
  ordered_json arr = ordered_json::array();
  for (const DeviceUsage& d : p.devices)
    arr.push_back({{"device", d.device},
                   {"live_bytes", d.live_bytes},
                   {"peak_bytes", d.peak_bytes},
                   {"leaked_bytes", d.leaked_bytes},
                   {"leaked_allocs", d.leaked_allocs},
                   {"allocs", d.allocs},
                   {"frees", d.frees},
                   {"failed_calls", d.failed}});
  return arr;
}

ordered_json process_entry(const ProcessView& p) {
  uint64_t calls = 0, errors = 0;
  for (const CallStats& c : p.calls) {
    calls += c.calls;
    errors += c.errors;
  }
  return {{"pid", p.pid},
          {"ppid", p.ppid},
          {"comm", p.comm},
          {"state", p.exited ? "exited" : "running"},
          {"since_attach", p.since_attach},
          {"baseline_known", p.baseline_known},
          {"start_ns", p.start_ns},
          {"exit_ns", p.exited ? ordered_json(p.exit_ns) : ordered_json(nullptr)},
          {"live_bytes", p.live_bytes},
          {"peak_bytes", p.peak_bytes},
          {"leaked_bytes", p.leaked_bytes},
          {"leaked_allocs", p.leaked_allocs},
          {"allocs", p.allocs},
          {"frees", p.frees},
          {"failed_calls", p.failed},
          {"api_calls", calls},
          {"api_errors", errors},
          {"launches", p.launches},
          {"devices", process_devices(p)}};
}

ordered_json processes_array(const State& s) {
  ordered_json arr = ordered_json::array();
  for (const ProcessView& p : s.snapshot.processes) arr.push_back(process_entry(p));
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
    j["traced"] = {{"live_bytes", u.live_bytes},
                   {"peak_bytes", u.peak_bytes},
                   {"leaked_bytes", u.leaked_bytes},
                   {"leaked_allocs", u.leaked_allocs},
                   {"processes", u.processes}};
    arr.push_back(std::move(j));
  }
  return arr;
}

// Pinned host memory (device -1) of the traced processes: not a device, shown on its own.
ordered_json host_json(const State& s) {
  DeviceUsage u{};
  for (const DeviceUsage& d : s.snapshot.devices)
    if (d.device < 0) u = d;
  return {{"live_bytes", u.live_bytes},
          {"peak_bytes", u.peak_bytes},
          {"leaked_bytes", u.leaked_bytes},
          {"leaked_allocs", u.leaked_allocs},
          {"processes", u.processes}};
}

ordered_json stacks_array(const State& s, uint32_t pid, const std::vector<StackUsage>& stacks) {
  ordered_json arr = ordered_json::array();
  for (const StackUsage& st : stacks) {
    const auto f = s.stack_frames.find({pid, st.stack_id});
    arr.push_back({{"stack_id", st.stack_id},
                   {"bytes", st.bytes},
                   {"allocs", st.allocs},
                   {"frames", f == s.stack_frames.end() ? ordered_json::array() : ordered_json(f->second)}});
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
  ordered_json entry = process_entry(p);  // a named object: items() only refers to it
  for (auto& [key, value] : entry.items()) j[key] = std::move(value);
  j["exit_event_seen"] = p.exit_event_seen;
  j["instances"] = instances;
  j["books"] = books_json(p.books);
  j["kernels"] = kernels_json(p.kernels);
  j["kernel_books"] = kernel_books_json(p.kernel_books);
  j["calls"] = calls_json(p.calls);
  j["copies"] = copies_json(p.copies);
  j["outstanding_count"] = p.outstanding_count;
  ordered_json allocs = ordered_json::array();
  for (const OutstandingAllocation& a : p.outstanding_allocations) {
    char ptr[24];
    std::snprintf(ptr, sizeof ptr, "0x%llx", static_cast<unsigned long long>(a.ptr));
    allocs.push_back({{"ptr", ptr},
                      {"size", a.size},
                      {"device", a.device},
                      {"kind", to_string(a.kind)},
                      {"api", to_string(a.api)},
                      {"ts_ns", a.ts_ns},
                      {"stack_id", a.stack_id ? ordered_json(*a.stack_id) : ordered_json(nullptr)}});
  }
  j["outstanding_allocations"] = std::move(allocs);
  j["outstanding_stacks"] = stacks_array(s, p.pid, p.outstanding_stacks);
  j["leaked_stacks"] = stacks_array(s, p.pid, p.leaked_stacks);
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
                   {"message", "events were lost (ring-buffer drops " + std::to_string(h.rb_drops) +
                                   ", missing entry records " + std::to_string(h.missing_entry) +
                                   ", alloc map full " + std::to_string(h.alloc_map_full) + ", bad records " +
                                   std::to_string(snap.counters.bad_records) + ", duplicate allocs " +
                                   std::to_string(snap.counters.duplicate_allocs) +
                                   "): figures may be incomplete"}});
  }
  for (const DeviceInfo& d : s.devices) {
    if (d.total == 0) continue;
    const double ratio = static_cast<double>(d.used) / static_cast<double>(d.total);
    if (ratio < kDeviceFullRatio) continue;
    arr.push_back({{"type", "device_full"},
                   {"severity", ratio >= 0.98 ? "error" : "warning"},
                   {"device", d.ordinal},
                   {"uuid", d.uuid},
                   {"used_bytes", d.used},
                   {"total_bytes", d.total},
                   {"used_ratio", ratio},
                   {"message", "device " + std::to_string(d.ordinal) + (d.name.empty() ? "" : " (" + d.name + ")") +
                                   " is " + percent(ratio) + " full: " + human_size(d.used) + " of " +
                                   human_size(d.total)}});
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
  j["total"] = {{"live_bytes", snap.live_bytes},
                {"peak_bytes", snap.peak_bytes},
                {"leaked_bytes", snap.leaked_bytes},
                {"leaked_allocs", snap.leaked_allocs},
                {"launches", snap.launches},
                {"copies", copies_json(snap.copies)}};
  j["devices"] = devices_array(s);
  j["host"] = host_json(s);
  j["processes"] = processes_array(s);
  ordered_json health = health_json(snap);
  ordered_json libs = ordered_json::array();
  for (const TracedLibrary& l : snap.health.libraries) libs.push_back({{"path", l.path}, {"mode", l.mode}});
  health["libraries"] = std::move(libs);
  j["health"] = std::move(health);
  j["alerts"] = api_alerts(s);
  return j;
}

std::string sse_event(const State& s, std::string_view version) {
  std::string out = "id: " + std::to_string(s.sequence) + "\ndata: ";
  out += dump_json(api_summary(s, version));  // compact: no newline can end the data field
  out += "\n\n";
  return out;
}

}  // namespace fgtrace::server
