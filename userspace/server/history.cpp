// SPDX-License-Identifier: Apache-2.0
#include "history.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "state.h"

namespace fgtrace::server {

size_t HistorySample::memory_bytes() const noexcept {
  // The object, its vectors' storage, comms longer than the small-string buffer, and the
  // shared_ptr control block that make_shared puts beside it.
  return sizeof(HistorySample) + 2 * sizeof(void*) + devices.capacity() * sizeof(HistoryDevice) +
         processes.capacity() * sizeof(HistoryProcess);
}

std::string_view HistoryProcess::name() const noexcept { return {comm, strnlen(comm, sizeof comm)}; }

HistorySample history_sample(const State& s) {
  HistorySample h;
  h.time_unix_ms = s.time_unix_ms;
  const Snapshot& snap = s.snapshot;
  std::map<int32_t, HistoryDevice> devs;
  for (const DeviceInfo& d : s.devices) {
    HistoryDevice& hd = devs[d.ordinal];
    hd.device = d.ordinal;
    hd.total_bytes = d.total;
    hd.used_bytes = d.used;
  }
  for (const DeviceUsage& d : snap.devices) {
    if (d.device < 0) continue;
    HistoryDevice& hd = devs[d.device];
    hd.device = d.device;
    hd.traced_live_bytes = d.live_bytes;
    if (hd.total_bytes == 0) hd.used_bytes = d.live_bytes;
  }
  if (snap.analysis)
    for (const DeviceAnalysis& a : snap.analysis->devices) {
      HistoryDevice& hd = devs[a.device];
      hd.device = a.device;
      hd.growth_bytes_per_s = a.forecast.trend.rate_bps;
      hd.eta_s = a.forecast.eta_s;
      hd.risk = a.forecast.risk;
      hd.fragmentation = a.fragmentation;
    }
  h.devices.reserve(devs.size());
  for (auto& [dev, hd] : devs) h.devices.push_back(hd);

  std::map<int32_t, std::vector<HistoryProcess>> by_device;
  for (const ProcessView& p : snap.processes)
    for (const DeviceUsage& d : p.devices)
      if (d.device >= 0 && d.live_bytes > 0) {
        HistoryProcess hp;
        hp.start_ns = p.start_ns;
        hp.live_bytes = d.live_bytes;
        hp.pid = p.pid;
        hp.device = d.device;
        p.comm.copy(hp.comm, sizeof hp.comm - 1);  // longer names (a path run was given) are cut
        by_device[d.device].push_back(hp);
      }
  for (auto& [dev, procs] : by_device) {
    const auto bigger = [](const HistoryProcess& a, const HistoryProcess& b) {
      return a.live_bytes != b.live_bytes ? a.live_bytes > b.live_bytes : a.pid < b.pid;
    };
    const size_t keep = std::min(procs.size(), kHistoryProcessesPerDevice);
    std::partial_sort(procs.begin(), procs.begin() + static_cast<std::ptrdiff_t>(keep), procs.end(), bigger);
    for (size_t i = 0; i < keep; ++i) h.processes.push_back(std::move(procs[i]));
  }
  h.processes.shrink_to_fit();
  return h;
}

void History::append(std::shared_ptr<const HistorySample> sample) {
  if (!sample) return;
  bytes_ += sample->memory_bytes() + sizeof(sample);
  samples_.push_back(std::move(sample));
  while (samples_.size() > max_samples_) {
    bytes_ -= samples_.front()->memory_bytes() + sizeof(samples_.front());
    samples_.pop_front();
  }
}

std::vector<std::shared_ptr<const HistorySample>> History::samples() const {
  return {samples_.begin(), samples_.end()};
}

size_t history_samples_for(double history_s, double interval_s) noexcept {
  if (!(history_s > 0) || !(interval_s > 0)) return 1;
  return static_cast<size_t>(std::ceil(history_s / interval_s)) + 1;
}

}  // namespace fgtrace::server
