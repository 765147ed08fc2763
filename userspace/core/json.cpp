// SPDX-License-Identifier: Apache-2.0
#include "json.h"

#include <cstdio>

namespace fgtrace {

using nlohmann::ordered_json;

ordered_json or_null(const std::optional<RiskLevel>& risk) {
  return risk ? ordered_json(to_string(*risk)) : ordered_json(nullptr);
}

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* state_text(bool exited) { return exited ? "exited" : "running"; }

}  // namespace

// ---- the books --------------------------------------------------------------------------

bool events_lost(const Snapshot& s) noexcept {
  return s.health.rb_drops + s.health.missing_entry + s.health.alloc_map_full + s.counters.bad_records +
             s.counters.duplicate_allocs + s.missed.processes >
         0;
}

namespace {
ordered_json missed_json(const Missed& missed) {
  ordered_json arr = ordered_json::array();
  for (const MissedProcess& m : missed.latest)
    arr.push_back({{"pid", m.pid}, {"comm", m.comm}, {"library", m.library}});
  return arr;
}
}  // namespace

ordered_json health_json(const Snapshot& s) {
  const Health& h = s.health;
  const LedgerCounters& c = s.counters;
  return {{"events_lost", events_lost(s)},
          {"events", h.events},
          {"rb_drops", h.rb_drops},
          {"missing_entry", h.missing_entry},
          {"alloc_map_full", h.alloc_map_full},
          {"unmatched_free", h.unmatched_free},
          {"stacks_lost", h.stacks_lost},
          {"processes_missed", s.missed.processes},
          {"missed", missed_json(s.missed)},
          {"missed_unnoticed", s.missed.unnoticed.empty() ? ordered_json() : ordered_json(s.missed.unnoticed)},
          {"ledger",
           {{"events", c.events},
            {"bad_records", c.bad_records},
            {"unmatched_frees", c.unmatched_frees},
            {"pre_attach_frees", c.pre_attach_frees},
            {"duplicate_allocs", c.duplicate_allocs},
            {"exits_without_event", c.exits_without_event}}}};
}

ordered_json libraries_json(const Snapshot& s) {
  ordered_json arr = ordered_json::array();
  for (const TracedLibrary& l : s.health.libraries) arr.push_back({{"path", l.path}, {"mode", l.mode}});
  return arr;
}

ordered_json totals_json(const Snapshot& s, bool with_live) {
  ordered_json j = ordered_json::object();
  if (with_live) j["live_bytes"] = s.live_bytes;
  j["peak_bytes"] = s.peak_bytes;
  j["leaked_bytes"] = s.leaked_bytes;
  j["leaked_allocs"] = s.leaked_allocs;
  return j;
}

ordered_json device_json(const DeviceUsage& d, const DeviceFields& fields) {
  ordered_json j = ordered_json::object();
  if (fields.device) j["device"] = d.device;
  if (fields.live) j["live_bytes"] = d.live_bytes;
  j["peak_bytes"] = d.peak_bytes;
  if (fields.counts) {
    j["allocs"] = d.allocs;
    j["frees"] = d.frees;
    j["failed_calls"] = d.failed;
  }
  j["leaked_bytes"] = d.leaked_bytes;
  j["leaked_allocs"] = d.leaked_allocs;
  if (fields.processes) j["processes"] = d.processes;
  return j;
}

ordered_json devices_json(const std::vector<DeviceUsage>& ds, const DeviceFields& fields) {
  ordered_json arr = ordered_json::array();
  for (const DeviceUsage& d : ds) arr.push_back(device_json(d, fields));
  return arr;
}

ordered_json process_json(const ProcessView& p, const ProcessFields& fields) {
  ordered_json j = {{"pid", p.pid},
                    {"ppid", p.ppid},
                    {"comm", p.comm},
                    {"state", state_text(p.exited)},
                    {"since_attach", p.since_attach},
                    {"baseline_known", p.baseline_known}};
  if (fields.lifetime) {
    j["start_ns"] = p.start_ns;
    j["exit_ns"] = p.exited ? ordered_json(p.exit_ns) : ordered_json(nullptr);
  }
  j["live_bytes"] = p.live_bytes;
  j["peak_bytes"] = p.peak_bytes;
  j["leaked_bytes"] = p.leaked_bytes;
  j["leaked_allocs"] = p.leaked_allocs;
  j["allocs"] = p.allocs;
  j["frees"] = p.frees;
  j["failed_calls"] = p.failed;
  if (fields.free_detail) {
    j["implicit_frees"] = p.implicit_frees;
    j["unmatched_frees"] = p.unmatched_frees;
  }
  return j;
}

ordered_json books_json(const std::vector<BookView>& books) {
  ordered_json arr = ordered_json::array();
  for (const BookView& b : books)
    arr.push_back({{"device", b.device},
                   {"kind", to_string(b.kind)},
                   {"live_bytes", b.live_bytes},
                   {"peak_bytes", b.peak_bytes},
                   {"allocs", b.allocs},
                   {"alloc_bytes", b.alloc_bytes},
                   {"frees", b.frees},
                   {"freed_bytes", b.freed_bytes},
                   {"failed_calls", b.failed},
                   {"implicit_frees", b.implicit_frees},
                   {"implicit_freed_bytes", b.implicit_freed_bytes},
                   {"unmatched_frees", b.unmatched_frees},
                   {"outstanding_allocs", b.outstanding},
                   {"baseline_bytes", b.baseline_bytes},
                   {"baseline_left", b.baseline_left},
                   {"leaked_bytes", b.leaked_bytes},
                   {"leaked_allocs", b.leaked_allocs}});
  return arr;
}

ordered_json kernel_books_json(const std::vector<KernelBookView>& books) {
  ordered_json arr = ordered_json::array();
  for (const KernelBookView& b : books)
    arr.push_back({{"device", b.device},
                   {"kind", to_string(b.kind)},
                   {"alloc_calls", b.alloc_calls},
                   {"alloc_bytes", b.alloc_bytes},
                   {"free_calls", b.free_calls},
                   {"free_bytes", b.free_bytes},
                   {"implicit_free_bytes", b.implicit_free_bytes},
                   {"live_bytes", b.live_bytes},
                   {"peak_bytes", b.peak_bytes},
                   {"failed_calls", b.failed_calls}});
  return arr;
}

ordered_json calls_json(const std::vector<CallStats>& calls) {
  ordered_json arr = ordered_json::array();
  for (const CallStats& c : calls) {
    // Keyed by the bucket's lower bound in ns: "1024" counts calls of 1024..2047 ns ("0": 0..1).
    ordered_json hist = ordered_json::object();
    for (size_t i = 0; i < kLatencyBuckets; ++i)
      if (c.buckets[i]) hist[std::to_string(i == 0 ? 0 : uint64_t{1} << i)] = c.buckets[i];
    arr.push_back({{"func", c.func},
                   {"calls", c.calls},
                   {"errors", c.errors},
                   {"timed", c.timed},
                   {"total_ns", c.total_ns},
                   {"max_ns", c.max_ns},
                   {"log2_hist_ns", hist}});
  }
  return arr;
}

ordered_json kernels_json(const std::vector<KernelStats>& kernels) {
  ordered_json arr = ordered_json::array();
  for (size_t i = 0; i < kernels.size() && i < kKernelsListed; ++i)
    arr.push_back({{"name", kernels[i].name},
                   {"launches", kernels[i].launches},
                   {"ran", kernels[i].ran},
                   {"recorded", kernels[i].recorded},
                   {"host_ns", kernels[i].host_ns},
                   {"mean_host_ns", kernels[i].mean_host_ns()}});
  return arr;
}

ordered_json callers_json(const std::vector<CallerStats>& callers) {
  ordered_json arr = ordered_json::array();
  for (size_t i = 0; i < callers.size() && i < kCallersListed; ++i) {
    const CallerStats& c = callers[i];
    arr.push_back({{"object", c.object},
                   {"calls", c.calls},
                   {"errors", c.errors},
                   {"alloc_bytes", c.alloc_bytes},
                   {"free_bytes", c.free_bytes},
                   {"probed_calls", c.probed},
                   {"timed_calls", c.timed},
                   {"time_ns", c.time_ns()}});
  }
  return arr;
}

ordered_json copies_json(const std::array<CopyStats, kCopyDirections>& copies) {
  ordered_json j = ordered_json::object();
  for (size_t i = 0; i < kCopyDirections; ++i)
    j[to_string(static_cast<CopyDirection>(i))] = {{"bytes", copies[i].bytes}, {"count", copies[i].count}};
  return j;
}

void add_breakdowns(ordered_json& j, const ProcessView& p) {
  j["kernels"] = kernels_json(p.kernels);
  j["callers"] = callers_json(p.callers);
  j["kernel_books"] = kernel_books_json(p.kernel_books);
}

ordered_json outstanding_allocation_json(const OutstandingAllocation& a) {
  return {{"ptr", hex(a.ptr)},
          {"size", a.size},
          {"device", a.device},
          {"kind", to_string(a.kind)},
          {"api", to_string(a.api)},
          {"ts_ns", a.ts_ns},
          {"stack_id", or_null(a.stack_id)}};
}

// ---- stacks -----------------------------------------------------------------------------

ordered_json stack_json(const StackUsage& s, const std::vector<std::string>* frames) {
  ordered_json j = {{"stack_id", s.stack_id}, {"bytes", s.bytes}, {"allocs", s.allocs}};
  if (frames) j["frames"] = *frames;
  return j;
}

ordered_json stacks_json(const std::vector<StackReport>& stacks) {
  ordered_json arr = ordered_json::array();
  for (const StackReport& r : stacks) {
    ordered_json j = {{"pid", r.pid}, {"comm", r.comm}};
    j.update(stack_json(StackUsage{r.stack_id, r.bytes, r.allocs}, &r.frames));
    arr.push_back(std::move(j));
  }
  return arr;
}

// ---- the analyses -----------------------------------------------------------------------

ordered_json forecast_json(const Forecast& f) {
  return {{"capacity_bytes", f.capacity ? ordered_json(f.capacity) : ordered_json(nullptr)},
          {"used_bytes", f.used},
          {"usage_pct", or_null(f.usage_pct)},
          {"growth_bytes_per_s", f.trend.rate_bps},
          {"samples", f.trend.samples},
          {"span_s", f.trend.span_s},
          {"r2", f.trend.r2},
          {"confidence", f.trend.confidence},
          {"eta_s", or_null(f.eta_s)},
          {"risk", or_null(f.risk)}};
}

ordered_json fragmentation_json(const std::optional<Fragmentation>& f, bool brief) {
  if (!f) return nullptr;
  if (brief) return {{"free_bytes", f->free_bytes}, {"largest_free_bytes", f->largest_free}, {"ratio", f->ratio}};
  return {{"address_space_begin", hex(f->window_begin)},
          {"capacity_bytes", f->capacity},
          {"used_bytes", f->used_bytes},
          {"free_bytes", f->free_bytes},
          {"largest_free_bytes", f->largest_free},
          {"free_extents", f->free_extents},
          {"ratio", f->ratio}};
}

ordered_json device_analysis_json(const DeviceAnalysis& d) {
  return {{"device", d.device},
          {"forecast", forecast_json(d.forecast)},
          {"fragmentation", fragmentation_json(d.fragmentation)},
          {"fragmentation_pid", d.fragmentation ? ordered_json(d.fragmentation_pid) : ordered_json(nullptr)},
          {"address_spaces", d.address_spaces}};
}

ordered_json process_analysis_json(const ProcessAnalysis& p) {
  ordered_json devs = ordered_json::array();
  for (const ProcessDeviceAnalysis& d : p.devices)
    devs.push_back({{"device", d.device},
                    {"live_bytes", d.live_bytes},
                    {"forecast", forecast_json(d.forecast)},
                    {"fragmentation", fragmentation_json(d.fragmentation)}});
  ordered_json j = {{"pid", p.pid},
                    {"start_ns", p.start_ns},
                    {"state", state_text(p.exited)},
                    {"growth_bytes_per_min", p.growth_bytes_per_min},
                    {"growth_confidence", p.growth.confidence},
                    {"growth_samples", p.growth.samples},
                    {"growing", p.growing},
                    {"risk", or_null(p.risk)},
                    {"worst_risk", or_null(p.worst_risk)},
                    {"devices", std::move(devs)}};
  if (!p.aged_listed) {
    j["aged"] = nullptr;
    return j;
  }
  ordered_json allocs = ordered_json::array();
  for (const OutstandingAllocation& a : p.aged) allocs.push_back(outstanding_allocation_json(a));
  ordered_json stacks = ordered_json::array();
  for (const StackUsage& st : p.aged_stacks) stacks.push_back(stack_json(st));
  j["aged"] = {{"as_of_ns", p.aged_as_of_ns},
               {"count", p.aged_count},
               {"bytes", p.aged_bytes},
               {"allocations", std::move(allocs)},
               {"stacks", std::move(stacks)}};
  return j;
}

ordered_json analysis_settings_json(const Analysis& a) {
  return {{"oom_threshold_pct", a.options.oom_threshold_pct},
          {"window_s", a.options.window_s},
          {"leak_age_s", or_null(a.options.leak_age_s)},
          {"leak_rate_bytes_per_min", a.options.leak_rate_bytes_per_min},
          {"worst_risk", or_null(a.worst_risk)}};
}

ordered_json analysis_json(const Analysis& a) {
  ordered_json devs = ordered_json::array();
  for (const DeviceAnalysis& d : a.devices) devs.push_back(device_analysis_json(d));
  ordered_json procs = ordered_json::array();
  for (const ProcessAnalysis& p : a.processes) procs.push_back(process_analysis_json(p));
  ordered_json worst = ordered_json::array();
  for (const WorstForecast& w : a.worst)
    worst.push_back({{"device", w.device}, {"at_ns", w.t_ns}, {"forecast", forecast_json(w.forecast)}});
  ordered_json j = {{"as_of_ns", a.as_of_ns}};
  j.update(analysis_settings_json(a));
  j["devices"] = std::move(devs);
  j["processes"] = std::move(procs);
  j["worst"] = std::move(worst);
  return j;
}

}  // namespace fgtrace
