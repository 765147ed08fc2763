// SPDX-License-Identifier: Apache-2.0
// The timeline of `fakegpu-trace run --timeline FILE`: Chrome trace-event JSON, which
// Perfetto's UI (ui.perfetto.dev, "Open trace file") and chrome://tracing open.
//  - A counter track per process and device ("GPU n memory", host pinned memory as "host
//    pinned memory"), and one per device for all processes, in a process named "GPUs (all
//    processes)" (pid 0).
//  - An instant event for every allocation that failed with out-of-memory, in its process, and
//    one where a process exited holding memory (a leak: bytes and allocations).
//  - Per device, its fragmentation at each refresh (largest free extent, ratio).
// Bounded: per `resolution` window a track keeps its highest value and its last one, so every
// peak and every final value is exact; when the tracks hold more than `max_samples`, the window
// doubles and the samples already kept are merged the same way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ledger.h"

namespace fgtrace {

class Timeline final : public LevelObserver {
 public:
  static constexpr uint64_t kDefaultResolutionNs = 1'000'000;  // 1 ms
  static constexpr size_t kDefaultMaxSamples = 1'000'000;      // ~60 MB of JSON at most
  static constexpr size_t kMaxInstants = 10'000;               // OOM events kept (the rest counted)

  explicit Timeline(uint64_t resolution_ns = kDefaultResolutionNs, size_t max_samples = kDefaultMaxSamples);

  void level(uint64_t ts_ns, uint32_t pid, int32_t device, uint64_t process_live, uint64_t device_live) override;
  void alloc_failed(uint64_t ts_ns, uint32_t pid, int32_t device, uint64_t size, int32_t status) override;
  // A refresh's fragmentation of a device (core/analysis.h): "GPU n largest free extent" and
  // "GPU n fragmentation" (the ratio) in the devices' process. One sample per refresh.
  void fragmentation(uint64_t ts_ns, int32_t device, uint64_t largest_free, double ratio);

  // The document. Process names and exits (leaks) come from the final books.
  void write(std::ostream& out, const Snapshot& final_books) const;
  // The same samples for a page (core/html_report.h), times in ms since the first record:
  // {"devices": [{"device", "points": [[ms, bytes], ...]}],
  //  "processes": [{"pid", "device", "points": [...]}], "ooms": [{"ms", "pid", "device", "bytes"}]}
  nlohmann::json series() const;

  size_t samples() const noexcept;  // kept now, open windows included
  uint64_t resolution_ns() const noexcept { return resolution_; }
  uint64_t ooms_dropped() const noexcept { return ooms_dropped_; }

 private:
  struct Sample {
    uint64_t ts;
    uint64_t value;
  };
  // One resolution window of a track: its highest sample, and its last if that came later.
  struct Window {
    bool open = false;
    uint64_t index = 0;  // (ts - t0) / resolution
    Sample high{}, last{};
    bool last_after_high = false;  // a later sample than the window's highest
    // Takes a sample of window `at`; false (nothing taken) when the window is another.
    bool take(uint64_t at, const Sample& s);
    void start(uint64_t at, const Sample& s);
    void close_into(std::vector<Sample>& into) const;  // its one or two samples, if open
  };
  struct Track {
    std::vector<Sample> kept;  // closed windows' samples
    Window w;                  // the open window
  };
  struct Oom {
    uint64_t ts;
    uint32_t pid;
    int32_t device;
    uint64_t size;
    int32_t status;
  };
  void put(Track& t, uint64_t ts, uint64_t value);
  std::vector<Sample> all_samples(const Track& t) const;  // kept ones, then the open window's
  void coarsen();

  uint64_t resolution_;
  size_t max_samples_;
  size_t kept_ = 0;  // Σ kept.size()
  uint64_t t0_ = UINT64_MAX;
  std::map<std::pair<uint32_t, int32_t>, Track> processes_;  // (pid, device)
  std::map<int32_t, Track> devices_;
  std::vector<Oom> ooms_;
  struct Frag {
    uint64_t ts;
    int32_t device;
    uint64_t largest_free;
    double ratio;
  };
  std::vector<Frag> frags_;  // at most max_samples (the oldest half thinned when full)
  uint64_t ooms_dropped_ = 0;
};

}  // namespace fgtrace
