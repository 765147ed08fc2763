// SPDX-License-Identifier: Apache-2.0
// The memory analyses people debugging GPU memory ask for next (issue 21), over the ledger's
// exact books: an OOM forecast per device and per process, live leaks (allocations older
// than an age, and growth), and address-space fragmentation. Pure: the collector hands in the
// time of each refresh and what it read about the devices; no clock, no /proc.
//
// The models, precisely (README "Memory analyses" says the same to users):
//
// * Trend. At every refresh each series (a device's bytes in use, a process's bytes on a
//   device, a process's GPU bytes) gets one sample (t, bytes). The samples of the last
//   `window_s` seconds (at most kMaxTrendSamples, evenly thinned) are fitted by ordinary least
//   squares: bytes = a + rate * t. confidence = R² * min(1, (n - 2) / (kFullConfidenceSamples
//   - 2)) for n >= 3 samples (0 below: two points always lie on a line); a flat series has
//   R² = 1 (it is explained exactly by a flat line).
// * Forecast. usage = used / capacity. ETA (seconds until the device is full) = (capacity -
//   used) / rate when rate > 0 and confidence >= kMinForecastConfidence; 0 when used >=
//   capacity; none otherwise.
// * Risk, with T the --oom-threshold percentage (default 85), u the usage in percent and e the
//   ETA (missing = infinite):
//       critical  u >= (100 + T) / 2    or e <= 60 s
//       high      u >= T                or e <= 300 s
//       medium    u >= 0.8 * T          or e <= 1800 s
//       low       otherwise
//   No risk (null) when the device's capacity is unknown. A process's risk uses its device's
//   usage and the process's own ETA (the time until its growth alone fills the device).
// * Live leaks. With --leak-age SEC, a running process's outstanding allocations whose age
//   (refresh time - allocation time, both the events' clock) is >= SEC are listed, oldest
//   first, and summed by stack. A process is "growing" when its GPU bytes' rate is >=
//   --leak-rate (bytes per minute) with confidence >= kMinForecastConfidence.
// * Fragmentation. The fake backend gives every process, per device, one contiguous arena of
//   device addresses (fakebackend/src/core/memory.h): the collector finds its start in
//   /proc/PID/maps. The process's address space on the device is [start, start + capacity);
//   its live device allocations ([ptr, ptr + size), requested sizes, kind "device") cover
//   parts of it, the gaps are free extents: free = capacity - covered, largest = the largest
//   gap, ratio = 1 - largest / free (0 when nothing is free). A device's figure is that of
//   its most fragmented address space (processes do not share addresses). The fake rounds
//   blocks up (power-of-two classes to 2 MiB, 4 MiB chunks above), so true free extents can
//   be a little smaller than the requested sizes make them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ledger.h"

namespace fgtrace {

enum class RiskLevel : uint8_t { Low = 0, Medium = 1, High = 2, Critical = 3 };
const char* to_string(RiskLevel r) noexcept;  // "low", "medium", "high", "critical"
// "low" .. "critical", case-insensitive; nullopt for anything else.
std::optional<RiskLevel> parse_risk_level(std::string_view text) noexcept;

inline constexpr double kCriticalEtaS = 60;
inline constexpr double kHighEtaS = 300;
inline constexpr double kMediumEtaS = 1800;
inline constexpr double kMinForecastConfidence = 0.5;
inline constexpr size_t kFullConfidenceSamples = 10;
inline constexpr size_t kMaxTrendSamples = 600;

struct TrendSample {
  uint64_t t_ns = 0;
  uint64_t bytes = 0;
};

struct TrendFit {
  size_t samples = 0;
  double span_s = 0;    // last sample's time - first's
  double rate_bps = 0;  // bytes per second (least-squares slope)
  double r2 = 0;
  double confidence = 0;  // see the header comment
};
// Least squares over the samples (times non-decreasing).
TrendFit fit_trend(const std::deque<TrendSample>& samples);

// The level from usage (percent, nullopt when the capacity is unknown) and ETA.
RiskLevel risk_level(double usage_pct, std::optional<double> eta_s, double threshold_pct) noexcept;

struct Forecast {
  uint64_t capacity = 0;  // bytes; 0: unknown (no usage, ETA nor risk)
  uint64_t used = 0;      // bytes in use on the device
  std::optional<double> usage_pct;
  TrendFit trend;  // of the series forecast (the device's, or the process's bytes)
  std::optional<double> eta_s;
  std::optional<RiskLevel> risk;
};
// capacity 0: unknown. The ETA follows the trend's rate, the usage is the device's `used`.
Forecast make_forecast(const TrendFit& trend, uint64_t used, uint64_t capacity, double threshold_pct);

struct Extent {
  uint64_t begin = 0, end = 0;  // [begin, end)
};
struct Fragmentation {
  uint64_t window_begin = 0;  // the address space: [window_begin, window_begin + capacity)
  uint64_t capacity = 0;
  uint64_t used_bytes = 0;  // covered by live allocations (overlaps counted once)
  uint64_t free_bytes = 0;
  uint64_t largest_free = 0;  // the largest free extent
  uint64_t free_extents = 0;  // how many gaps
  double ratio = 0;           // 1 - largest_free / free_bytes; 0 when free_bytes is 0
};
// Extents outside the window are clipped to it; overlapping ones merge.
Fragmentation fragmentation(uint64_t window_begin, uint64_t capacity, std::vector<Extent> live);

// One series' recent samples.
class TrendSeries {
 public:
  // The level at t_ns (times non-decreasing): samples older than window_ns before it are
  // dropped; a sample closer than window_ns / kMaxTrendSamples to the previous one replaces
  // it (bounded size, even spacing).
  void add(uint64_t t_ns, uint64_t bytes, uint64_t window_ns);
  TrendFit fit() const { return fit_trend(samples_); }
  size_t size() const noexcept { return samples_.size(); }

 private:
  std::deque<TrendSample> samples_;
};

struct AnalysisOptions {
  double oom_threshold_pct = 85;                   // --oom-threshold
  double window_s = 60;                            // --oom-window
  std::optional<double> leak_age_s;                // --leak-age; none: no listing
  uint64_t leak_rate_bytes_per_min = 10ull << 20;  // --leak-rate
};

// A device as the backend's device ledgers describe it.
struct DeviceCapacity {
  int32_t device = 0;
  uint64_t total = 0;  // 0: unknown
  uint64_t used = 0;   // every process's bytes on it, traced or not
};

// What the collector read at this refresh, besides the books.
struct AnalysisInputs {
  std::vector<DeviceCapacity> devices;  // device-wide (the device forecasts)
  // The devices as each process's own ledger describes them (its capacity); processes not
  // listed use `devices`.
  std::map<uint32_t, std::vector<DeviceCapacity>> process_devices;
  // (pid, device): where the process's arena for the device's memory begins.
  std::map<std::pair<uint32_t, int32_t>, uint64_t> arenas;
};

struct ProcessDeviceAnalysis {
  int32_t device = 0;
  uint64_t live_bytes = 0;
  Forecast forecast;  // the process's bytes' trend against the device's capacity
  std::optional<Fragmentation> fragmentation;
};

struct ProcessAnalysis {
  uint32_t pid = 0;
  uint64_t start_ns = 0;
  bool exited = false;  // figures as of its last refresh while running
  TrendFit growth;      // its GPU bytes (all devices)
  double growth_bytes_per_min = 0;
  bool growing = false;                        // growth >= --leak-rate, confident
  std::optional<RiskLevel> risk;               // highest over its devices now
  std::optional<RiskLevel> worst_risk;         // highest seen at any refresh
  std::vector<ProcessDeviceAnalysis> devices;  // GPU devices it holds memory on, by device
  // --leak-age: outstanding allocations at least that old
  bool aged_listed = false;
  uint64_t aged_as_of_ns = 0;  // the refresh the ages count to (the events' clock)
  uint64_t aged_count = 0;
  uint64_t aged_bytes = 0;
  std::vector<OutstandingAllocation> aged;  // oldest first, at most kOutstandingListed
  std::vector<StackUsage> aged_stacks;      // by bytes, largest first (allocations with a stack)
};

struct DeviceAnalysis {
  int32_t device = 0;
  Forecast forecast;
  std::optional<Fragmentation> fragmentation;  // the most fragmented address space on it
  uint32_t fragmentation_pid = 0;              // whose address space that is
  uint32_t address_spaces = 0;                 // processes whose arena was measured
};

// The device forecast at its highest risk so far (the first refresh that reached it).
struct WorstForecast {
  int32_t device = 0;
  uint64_t t_ns = 0;
  Forecast forecast;
};

struct Analysis {
  uint64_t as_of_ns = 0;  // the refresh's time (the events' clock)
  AnalysisOptions options;
  std::vector<DeviceAnalysis> devices;     // GPU devices, by device
  std::vector<ProcessAnalysis> processes;  // the snapshot's processes, by pid then start
  std::vector<WorstForecast> worst;        // by device
  std::optional<RiskLevel> worst_risk;     // highest over devices and processes, every refresh

  const ProcessAnalysis* process(uint32_t pid, uint64_t start_ns) const noexcept;
  const DeviceAnalysis* device(int32_t device) const noexcept;
};

class Analyzer {
 public:
  explicit Analyzer(AnalysisOptions options) : options_(options) {}

  // One refresh at now_ns (the events' clock): samples every series from the snapshot, fits,
  // forecasts, lists aged allocations and measures fragmentation. `snap` is the ledger's
  // snapshot of this refresh (exited processes included).
  std::shared_ptr<const Analysis> update(const AllocationLedger& ledger, const Snapshot& snap, uint64_t now_ns,
                                         const AnalysisInputs& inputs);

  const AnalysisOptions& options() const noexcept { return options_; }

 private:
  // What a process holds, kept between refreshes while its books do not change (a process
  // holding memory steadily costs a refresh nothing but the advance of the age boundary).
  struct Held {
    struct Aging {
      uint64_t ts_ns = 0;
      uint64_t size = 0;
      uint32_t stack_id = 0;
      bool has_stack = false;
    };
    bool built = false;
    uint64_t version = 0;                       // the books' change count it was built at
    std::vector<Aging> by_age;                  // every held allocation, oldest first
    std::vector<OutstandingAllocation> oldest;  // the first kOutstandingListed, whole
    size_t aged_end = 0;                        // by_age[0, aged_end) are old enough
    uint64_t aged_bytes = 0;
    std::unordered_map<uint32_t, StackUsage> aged_stacks;
    // device -> (arena start, capacity) it was measured with, and the result
    std::map<int32_t, std::pair<std::pair<uint64_t, uint64_t>, Fragmentation>> fragmentation;
  };
  struct ProcState {
    TrendSeries gpu;
    std::map<int32_t, TrendSeries> devices;
    ProcessAnalysis last;  // the last analysis while it ran
    Held held;
  };

  // Rebuilds `held` from the ledger: one walk over the process's allocations.
  void rebuild(Held& held, const AllocationLedger& ledger, const ProcessView& p, uint64_t version,
               const std::map<int32_t, std::pair<uint64_t, uint64_t>>& arenas);

  AnalysisOptions options_;
  std::map<int32_t, TrendSeries> device_series_;
  std::map<std::pair<uint32_t, uint64_t>, ProcState> procs_;  // (pid, start_ns)
  std::map<int32_t, WorstForecast> worst_;
  std::optional<RiskLevel> worst_risk_;
};

}  // namespace fgtrace
