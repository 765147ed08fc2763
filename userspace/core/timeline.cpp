// SPDX-License-Identifier: Apache-2.0
#include "timeline.h"

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace fgtrace {
namespace {

// cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY: the same number in both APIs.
constexpr int32_t kOutOfMemory = 2;
constexpr uint32_t kDevicesPid = 0;  // the process that holds the per-device tracks

std::string track_name(int32_t device) {
  return device < 0 ? "host pinned memory" : "GPU " + std::to_string(device) + " memory";
}

}  // namespace

Timeline::Timeline(uint64_t resolution_ns, size_t max_samples)
    : resolution_(std::max<uint64_t>(resolution_ns, 1)), max_samples_(std::max<size_t>(max_samples, 64)) {}

bool Timeline::Window::take(uint64_t at, const Sample& s) {
  if (!open || at != index) return false;
  last = s;
  last_after_high = s.value <= high.value;
  if (!last_after_high) high = s;
  return true;
}

void Timeline::Window::start(uint64_t at, const Sample& s) {
  open = true;
  index = at;
  high = last = s;
  last_after_high = false;
}

void Timeline::Window::close_into(std::vector<Sample>& into) const {
  if (!open) return;
  into.push_back(high);
  if (last_after_high) into.push_back(last);
}

void Timeline::put(Track& t, uint64_t ts, uint64_t value) {
  const uint64_t at = (ts - t0_) / resolution_;
  if (t.w.take(at, {ts, value})) return;
  const size_t before = t.kept.size();
  t.w.close_into(t.kept);
  kept_ += t.kept.size() - before;
  t.w.start(at, {ts, value});
  if (kept_ > max_samples_) coarsen();
}

// Doubles the window and merges every track's kept samples into the wider windows, with the
// same rule (highest, then last).
void Timeline::coarsen() {
  while (kept_ > max_samples_ / 2) {
    resolution_ *= 2;
    kept_ = 0;
    auto merge = [this](Track& t) {
      std::vector<Sample> merged;
      Window w;
      for (const Sample& s : t.kept) {
        const uint64_t at = (s.ts - t0_) / resolution_;
        if (w.take(at, s)) continue;
        w.close_into(merged);
        w.start(at, s);
      }
      w.close_into(merged);
      t.kept = std::move(merged);
      if (t.w.open) t.w.index = (t.w.last.ts - t0_) / resolution_;
      kept_ += t.kept.size();
    };
    for (auto& [key, t] : processes_) merge(t);
    for (auto& [key, t] : devices_) merge(t);
  }
}

void Timeline::level(uint64_t ts_ns, uint32_t pid, int32_t device, uint64_t process_live, uint64_t device_live) {
  if (t0_ == UINT64_MAX) t0_ = ts_ns;
  ts_ns = std::max(ts_ns, t0_);  // a baseline read before the first record
  put(processes_[{pid, device}], ts_ns, process_live);
  put(devices_[device], ts_ns, device_live);
}

void Timeline::alloc_failed(uint64_t ts_ns, uint32_t pid, int32_t device, uint64_t size, int32_t status) {
  if (status != kOutOfMemory) return;
  if (t0_ == UINT64_MAX) t0_ = ts_ns;
  if (ooms_.size() >= kMaxInstants) {
    ++ooms_dropped_;
    return;
  }
  ooms_.push_back({std::max(ts_ns, t0_), pid, device, size, status});
}

std::vector<Timeline::Sample> Timeline::all_samples(const Track& t) const {
  std::vector<Sample> all = t.kept;
  t.w.close_into(all);
  return all;
}

nlohmann::json Timeline::series() const {
  const uint64_t t0 = t0_ == UINT64_MAX ? 0 : t0_;
  auto points = [&](const Track& t) {
    nlohmann::json out = nlohmann::json::array();
    for (const Sample& s : all_samples(t))
      out.push_back({static_cast<double>(s.ts - std::min(s.ts, t0)) / 1e6, s.value});
    return out;
  };
  nlohmann::json doc = {
      {"devices", nlohmann::json::array()}, {"processes", nlohmann::json::array()}, {"ooms", nlohmann::json::array()}};
  for (const auto& [device, t] : devices_) doc["devices"].push_back({{"device", device}, {"points", points(t)}});
  for (const auto& [key, t] : processes_)
    doc["processes"].push_back({{"pid", key.first}, {"device", key.second}, {"points", points(t)}});
  for (const Oom& o : ooms_)
    doc["ooms"].push_back({{"ms", static_cast<double>(o.ts - std::min(o.ts, t0)) / 1e6},
                           {"pid", o.pid},
                           {"device", o.device},
                           {"bytes", o.size}});
  return doc;
}

void Timeline::fragmentation(uint64_t ts_ns, int32_t device, uint64_t largest_free, double ratio) {
  if (t0_ == UINT64_MAX) t0_ = ts_ns;
  if (frags_.size() >= max_samples_) {  // keep every other of the older half
    std::vector<Frag> thinned;
    for (size_t i = 0; i < frags_.size(); ++i)
      if (i >= frags_.size() / 2 || i % 2 == 0) thinned.push_back(frags_[i]);
    frags_ = std::move(thinned);
  }
  frags_.push_back({std::max(ts_ns, t0_), device, largest_free, ratio});
}

size_t Timeline::samples() const noexcept {
  size_t n = kept_;
  for (const auto& [key, t] : processes_) n += t.w.open ? 2 : 0;
  for (const auto& [key, t] : devices_) n += t.w.open ? 2 : 0;
  return n;
}

void Timeline::write(std::ostream& out, const Snapshot& final_books) const {
  const uint64_t t0 = t0_ == UINT64_MAX ? 0 : t0_;
  auto us = [t0](uint64_t ts) { return static_cast<double>(ts - std::min(ts, t0)) / 1000.0; };
  bool first = true;
  auto emit = [&](const nlohmann::json& e) {
    out << (first ? "\n" : ",\n") << e.dump();
    first = false;
  };
  // A counter's value at ts (its track: the name within the pid), and a process's instant.
  auto counter = [&](const std::string& name, uint32_t pid, uint64_t ts, nlohmann::json args) {
    emit({{"name", name}, {"ph", "C"}, {"pid", pid}, {"ts", us(ts)}, {"args", std::move(args)}});
  };
  auto instant = [&](const char* name, uint32_t pid, uint64_t ts, nlohmann::json args) {
    emit({{"name", name},
          {"ph", "i"},
          {"s", "p"},
          {"pid", pid},
          {"tid", pid},
          {"ts", us(ts)},
          {"args", std::move(args)}});
  };
  auto counters = [&](uint32_t pid, int32_t device, const Track& t) {
    const std::string name = track_name(device);
    for (const Sample& s : all_samples(t)) counter(name, pid, s.ts, {{"bytes", s.value}});
  };

  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":"
      << nlohmann::json{{"tool", "fakegpu-trace"},
                        {"resolution_us", static_cast<double>(resolution_) / 1000.0},
                        {"oom_events_dropped", ooms_dropped_}}
             .dump()
      << ",\"traceEvents\":[";
  emit({{"name", "process_name"}, {"ph", "M"}, {"pid", kDevicesPid}, {"args", {{"name", "GPUs (all processes)"}}}});
  emit({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", kDevicesPid}, {"args", {{"sort_index", -1}}}});
  // A PID reused by a later process names the track after the latest.
  std::map<uint32_t, const ProcessView*> named;
  for (const ProcessView& p : final_books.processes) named[p.pid] = &p;
  std::set<uint32_t> listed;  // the processes with a track
  for (const auto& [key, t] : processes_) listed.insert(key.first);
  for (uint32_t pid : listed) {
    const auto it = named.find(pid);
    const std::string comm = it != named.end() && !it->second->comm.empty() ? it->second->comm : "?";
    emit({{"name", "process_name"},
          {"ph", "M"},
          {"pid", pid},
          {"args", {{"name", comm + " (pid " + std::to_string(pid) + ")"}}}});
  }
  for (const auto& [device, t] : devices_) counters(kDevicesPid, device, t);
  for (const auto& [key, t] : processes_) counters(key.first, key.second, t);
  for (const Frag& f : frags_) {
    const std::string gpu = "GPU " + std::to_string(f.device);
    counter(gpu + " largest free extent", kDevicesPid, f.ts, {{"bytes", f.largest_free}});
    counter(gpu + " fragmentation", kDevicesPid, f.ts, {{"ratio", f.ratio}});
  }
  for (const Oom& o : ooms_)
    instant("out of memory", o.pid, o.ts, {{"device", o.device}, {"bytes", o.size}, {"status", o.status}});
  for (const ProcessView& p : final_books.processes)
    if (p.exited && p.leaked_bytes > 0)
      instant("leak at exit", p.pid, p.exit_ns, {{"leaked_bytes", p.leaked_bytes}, {"leaked_allocs", p.leaked_allocs}});
  out << "\n]}\n";
}

}  // namespace fgtrace
