// SPDX-License-Identifier: Apache-2.0
#include "analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <unordered_map>

namespace fgtrace {

const char* to_string(RiskLevel r) noexcept {
  switch (r) {
    case RiskLevel::Low: return "low";
    case RiskLevel::Medium: return "medium";
    case RiskLevel::High: return "high";
    case RiskLevel::Critical: return "critical";
  }
  return "unknown";
}

std::optional<RiskLevel> parse_risk_level(std::string_view text) noexcept {
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (RiskLevel r : {RiskLevel::Low, RiskLevel::Medium, RiskLevel::High, RiskLevel::Critical})
    if (s == to_string(r)) return r;
  return std::nullopt;
}

// ---- trend ------------------------------------------------------------------------------

TrendFit fit_trend(const std::deque<TrendSample>& s) {
  TrendFit f;
  f.samples = s.size();
  if (s.empty()) return f;
  f.span_s = static_cast<double>(s.back().t_ns - s.front().t_ns) / 1e9;
  if (s.size() < 2) return f;
  // Centred sums in seconds and bytes relative to the first sample: doubles keep full
  // precision for any window (a 64-bit byte count near 2^40 minus its first value is small).
  const uint64_t t0 = s.front().t_ns;
  const double b0 = static_cast<double>(s.front().bytes);
  const double n = static_cast<double>(s.size());
  double mx = 0, my = 0;
  for (const TrendSample& p : s) {
    mx += static_cast<double>(p.t_ns - t0) / 1e9;
    my += static_cast<double>(p.bytes) - b0;
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (const TrendSample& p : s) {
    const double dx = static_cast<double>(p.t_ns - t0) / 1e9 - mx;
    const double dy = static_cast<double>(p.bytes) - b0 - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx <= 0) return f;  // every sample at one time: no rate
  f.rate_bps = sxy / sxx;
  f.r2 = syy <= 0 ? 1.0 : std::clamp(sxy * sxy / (sxx * syy), 0.0, 1.0);
  if (s.size() >= 3) f.confidence = f.r2 * std::min(1.0, (n - 2) / static_cast<double>(kFullConfidenceSamples - 2));
  return f;
}

void TrendSeries::add(uint64_t t_ns, uint64_t bytes, uint64_t window_ns) {
  const uint64_t spacing = window_ns / kMaxTrendSamples;
  if (!samples_.empty() && t_ns < samples_.back().t_ns) t_ns = samples_.back().t_ns;  // never backwards
  // Within `spacing` of the sample before the last: the last one moves to now (so the
  // samples stay about `spacing` apart and the newest level is always in).
  if (samples_.size() >= 2 && t_ns - samples_[samples_.size() - 2].t_ns < spacing)
    samples_.back() = {t_ns, bytes};
  else
    samples_.push_back({t_ns, bytes});
  while (!samples_.empty() && t_ns - samples_.front().t_ns > window_ns) samples_.pop_front();
  while (samples_.size() > kMaxTrendSamples + 1) samples_.pop_front();
}

// ---- forecast ---------------------------------------------------------------------------

RiskLevel risk_level(double usage_pct, std::optional<double> eta_s, double t) noexcept {
  const double eta = eta_s.value_or(INFINITY);
  if (usage_pct >= (100.0 + t) / 2.0 || eta <= kCriticalEtaS) return RiskLevel::Critical;
  if (usage_pct >= t || eta <= kHighEtaS) return RiskLevel::High;
  if (usage_pct >= 0.8 * t || eta <= kMediumEtaS) return RiskLevel::Medium;
  return RiskLevel::Low;
}

Forecast make_forecast(const TrendFit& trend, uint64_t used, uint64_t capacity, double threshold_pct) {
  Forecast f;
  f.capacity = capacity;
  f.used = used;
  f.trend = trend;
  if (capacity == 0) return f;
  f.usage_pct = 100.0 * static_cast<double>(used) / static_cast<double>(capacity);
  if (used >= capacity)
    f.eta_s = 0.0;
  else if (trend.rate_bps > 0 && trend.confidence >= kMinForecastConfidence)
    f.eta_s = static_cast<double>(capacity - used) / trend.rate_bps;
  f.risk = risk_level(*f.usage_pct, f.eta_s, threshold_pct);
  return f;
}

// ---- fragmentation ----------------------------------------------------------------------

Fragmentation fragmentation(uint64_t window_begin, uint64_t capacity, std::vector<Extent> live) {
  Fragmentation f;
  f.window_begin = window_begin;
  f.capacity = capacity;
  const uint64_t window_end = window_begin + capacity;
  std::sort(live.begin(), live.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  uint64_t cursor = window_begin;  // everything below it is covered or counted
  auto gap = [&f](uint64_t bytes) {
    if (bytes == 0) return;
    f.free_bytes += bytes;
    f.free_extents += 1;
    f.largest_free = std::max(f.largest_free, bytes);
  };
  for (const Extent& e : live) {
    const uint64_t b = std::clamp(e.begin, window_begin, window_end);
    const uint64_t en = std::clamp(e.end, window_begin, window_end);
    if (en <= cursor) continue;  // outside, empty, or inside what is already covered
    if (b > cursor) gap(b - cursor);
    f.used_bytes += en - std::max(b, cursor);
    cursor = en;
  }
  gap(window_end - cursor);
  f.ratio = f.free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(f.largest_free) / static_cast<double>(f.free_bytes);
  return f;
}

// ---- the analyzer -----------------------------------------------------------------------

const ProcessAnalysis* Analysis::process(uint32_t pid, uint64_t start_ns) const noexcept {
  for (const ProcessAnalysis& p : processes)
    if (p.pid == pid && p.start_ns == start_ns) return &p;
  return nullptr;
}

const DeviceAnalysis* Analysis::device(int32_t d) const noexcept {
  for (const DeviceAnalysis& a : devices)
    if (a.device == d) return &a;
  return nullptr;
}

namespace {

const DeviceCapacity* find_capacity(const std::vector<DeviceCapacity>& v, int32_t device) {
  for (const DeviceCapacity& d : v)
    if (d.device == device) return &d;
  return nullptr;
}

void raise(std::optional<RiskLevel>& worst, std::optional<RiskLevel> r) {
  if (r && (!worst || *r > *worst)) worst = r;
}

}  // namespace

void Analyzer::rebuild(Held& h, const AllocationLedger& ledger, const ProcessView& p, uint64_t version,
                       const std::map<int32_t, std::pair<uint64_t, uint64_t>>& arenas) {
  h = Held{};
  h.built = true;
  h.version = version;
  std::vector<OutstandingAllocation> all;
  all.reserve(p.outstanding_count);
  h.by_age.reserve(p.outstanding_count);
  std::map<int32_t, std::vector<Extent>> extents;
  ledger.for_each_outstanding(p.pid, [&](const OutstandingAllocation& o) {
    all.push_back(o);
    h.by_age.push_back({o.ts_ns, o.size, o.stack_id.value_or(0), o.stack_id.has_value()});
    if (o.kind == MemKind::Device && arenas.count(o.device)) extents[o.device].push_back({o.ptr, o.ptr + o.size});
  });
  // The compact records sorted whole (the age boundary walks them); the whole records only
  // as far as the listing needs (the kOutstandingListed oldest, ties by pointer).
  std::sort(h.by_age.begin(), h.by_age.end(),
            [](const Held::Aging& x, const Held::Aging& y) { return x.ts_ns < y.ts_ns; });
  const auto older = [](const OutstandingAllocation& x, const OutstandingAllocation& y) {
    return x.ts_ns != y.ts_ns ? x.ts_ns < y.ts_ns : x.ptr < y.ptr;
  };
  const size_t keep = std::min(all.size(), kOutstandingListed);
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), older);
  all.resize(keep);
  h.oldest = std::move(all);
  for (const auto& [dev, key] : arenas)
    h.fragmentation[dev] = {key, fragmentation(key.first, key.second, std::move(extents[dev]))};
}

std::shared_ptr<const Analysis> Analyzer::update(const AllocationLedger& ledger, const Snapshot& snap, uint64_t now,
                                                 const AnalysisInputs& in) {
  auto out = std::make_shared<Analysis>();
  Analysis& a = *out;
  a.as_of_ns = now;
  a.options = options_;
  const uint64_t window = static_cast<uint64_t>(options_.window_s * 1e9);
  const double t = options_.oom_threshold_pct;
  const bool listing = options_.leak_age_s.has_value();  // --leak-age
  const uint64_t age = listing ? static_cast<uint64_t>(*options_.leak_age_s * 1e9) : 0;

  // Devices: the device-wide bytes in use (the backend's figure when it knows the device, the
  // traced books otherwise), against its capacity.
  std::map<int32_t, uint64_t> traced;
  for (const DeviceUsage& d : snap.devices)
    if (d.device >= 0) traced[d.device] = d.live_bytes;
  for (const DeviceCapacity& c : in.devices)
    if (c.device >= 0) traced.try_emplace(c.device, 0);
  for (const auto& [dev, live] : traced) {
    const DeviceCapacity* c = find_capacity(in.devices, dev);
    const uint64_t used = c && c->total ? c->used : live;
    TrendSeries& s = device_series_[dev];
    s.add(now, used, window);
    DeviceAnalysis d;
    d.device = dev;
    d.forecast = make_forecast(s.fit(), used, c ? c->total : 0, t);
    a.devices.push_back(std::move(d));
  }

  std::map<std::pair<uint32_t, uint64_t>, ProcState> kept;
  for (const ProcessView& p : snap.processes) {
    const auto key = std::make_pair(p.pid, p.start_ns);
    auto node = procs_.extract(key);
    ProcState st = node.empty() ? ProcState{} : std::move(node.mapped());
    if (p.exited) {
      // Its figures as of its last refresh while it ran: an exit is not a drop in usage.
      st.last.exited = true;
      a.processes.push_back(st.last);
      kept.emplace(key, std::move(st));
      continue;
    }
    ProcessAnalysis pa;
    pa.pid = p.pid;
    pa.start_ns = p.start_ns;
    pa.worst_risk = st.last.worst_risk;
    st.gpu.add(now, p.live_bytes, window);
    pa.growth = st.gpu.fit();
    pa.growth_bytes_per_min = pa.growth.rate_bps * 60.0;
    pa.growing = pa.growth.confidence >= kMinForecastConfidence && pa.growth_bytes_per_min > 0 &&
                 pa.growth_bytes_per_min >= static_cast<double>(options_.leak_rate_bytes_per_min);
    const auto own = in.process_devices.find(p.pid);
    for (const DeviceUsage& du : p.devices) {
      if (du.device < 0) continue;
      const DeviceCapacity* c = own != in.process_devices.end() ? find_capacity(own->second, du.device) : nullptr;
      if (!c) c = find_capacity(in.devices, du.device);
      TrendSeries& s = st.devices[du.device];
      s.add(now, du.live_bytes, window);
      ProcessDeviceAnalysis pd;
      pd.device = du.device;
      pd.live_bytes = du.live_bytes;
      // The device's usage, and the time until this process's growth alone fills it.
      const uint64_t used = c && c->total ? std::max(c->used, du.live_bytes) : du.live_bytes;
      pd.forecast = make_forecast(s.fit(), used, c ? c->total : 0, t);
      raise(pa.risk, pd.forecast.risk);
      pa.devices.push_back(std::move(pd));
    }
    // What it holds: rebuilt only when its books changed (or an arena or capacity did).
    std::map<int32_t, std::pair<uint64_t, uint64_t>> arenas;  // device -> (arena start, capacity)
    for (const ProcessDeviceAnalysis& pd : pa.devices)
      if (const auto it = in.arenas.find({p.pid, pd.device}); it != in.arenas.end() && pd.forecast.capacity != 0)
        arenas[pd.device] = {it->second, pd.forecast.capacity};
    const uint64_t version = p.allocs + p.frees + p.implicit_frees + p.leaked_allocs;
    bool same_arenas = st.held.fragmentation.size() == arenas.size();
    for (const auto& [dev, key] : arenas) {
      const auto it = st.held.fragmentation.find(dev);
      same_arenas = same_arenas && it != st.held.fragmentation.end() && it->second.first == key;
    }
    if (!st.held.built || st.held.version != version || !same_arenas) rebuild(st.held, ledger, p, version, arenas);
    Held& h = st.held;
    pa.aged_listed = listing;
    pa.aged_as_of_ns = now;
    if (listing) {
      // The boundary only moves forward while the books stay the same: add what crossed it.
      while (h.aged_end < h.by_age.size() && h.by_age[h.aged_end].ts_ns <= now &&
             now - h.by_age[h.aged_end].ts_ns >= age) {
        const Held::Aging& g = h.by_age[h.aged_end++];
        h.aged_bytes += g.size;
        if (g.has_stack) {
          StackUsage& su = h.aged_stacks[g.stack_id];
          su.stack_id = g.stack_id;
          su.bytes += g.size;
          su.allocs += 1;
        }
      }
      pa.aged_count = h.aged_end;
      pa.aged_bytes = h.aged_bytes;
      pa.aged.assign(h.oldest.begin(),
                     h.oldest.begin() + static_cast<std::ptrdiff_t>(std::min(h.aged_end, h.oldest.size())));
      for (const auto& [id, su] : h.aged_stacks) pa.aged_stacks.push_back(su);
      std::sort(pa.aged_stacks.begin(), pa.aged_stacks.end(), [](const StackUsage& x, const StackUsage& y) {
        return x.bytes != y.bytes ? x.bytes > y.bytes : x.stack_id < y.stack_id;
      });
    }
    for (ProcessDeviceAnalysis& pd : pa.devices) {
      const auto f = h.fragmentation.find(pd.device);
      if (f == h.fragmentation.end()) continue;
      pd.fragmentation = f->second.second;
      for (DeviceAnalysis& d : a.devices) {
        if (d.device != pd.device) continue;
        d.address_spaces += 1;
        if (!d.fragmentation || pd.fragmentation->ratio > d.fragmentation->ratio) {
          d.fragmentation = pd.fragmentation;
          d.fragmentation_pid = p.pid;
        }
      }
    }
    raise(pa.worst_risk, pa.risk);
    raise(worst_risk_, pa.risk);
    st.last = pa;
    a.processes.push_back(std::move(pa));
    kept.emplace(key, std::move(st));
  }
  procs_ = std::move(kept);  // processes gone from the snapshot (expired) are forgotten

  for (const DeviceAnalysis& d : a.devices) {
    raise(worst_risk_, d.forecast.risk);
    auto [it, fresh] = worst_.try_emplace(d.device);
    const std::optional<RiskLevel> before = fresh ? std::nullopt : it->second.forecast.risk;
    if (fresh || (d.forecast.risk && (!before || *d.forecast.risk > *before))) it->second = {d.device, now, d.forecast};
  }
  for (const auto& [dev, w] : worst_) a.worst.push_back(w);
  a.worst_risk = worst_risk_;
  return out;
}

}  // namespace fgtrace
