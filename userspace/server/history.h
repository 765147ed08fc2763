// SPDX-License-Identifier: Apache-2.0
// The server's memory of the past (issue 21 point 8): one compact sample per collector
// refresh, kept for --history seconds (a bounded ring: at most max_samples), served as
// /api/v1/history so a page opened late draws what happened before it was opened.
//
// A sample holds, per GPU, the figures the page charts over time (in use, capacity, traced
// bytes, growth, ETA, risk, fragmentation) and, per device, the kHistoryProcessesPerDevice
// processes with the most memory on it (the rest are the device's traced bytes less theirs:
// the page's "other"). Samples are immutable and shared: publishing a State copies pointers,
// not samples.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../core/analysis.h"

namespace fgtrace::server {

struct State;

// Processes with their own series per device in a sample (the page draws as many and "other").
inline constexpr size_t kHistoryProcessesPerDevice = 8;

struct HistoryDevice {
  int32_t device = 0;
  uint64_t total_bytes = 0;        // 0: unknown
  uint64_t used_bytes = 0;         // by every process (the backend's figure; traced when unknown)
  uint64_t traced_live_bytes = 0;  // the traced processes' books
  double growth_bytes_per_s = 0;
  std::optional<double> eta_s;
  std::optional<RiskLevel> risk;
  std::optional<Fragmentation> fragmentation;
};

struct HistoryProcess {
  uint64_t start_ns = 0;
  uint64_t live_bytes = 0;
  uint32_t pid = 0;
  int32_t device = 0;
  char comm[16] = {};  // the kernel's comm length: 15 characters and a NUL, no heap

  std::string_view name() const noexcept;
};

struct HistorySample {
  uint64_t time_unix_ms = 0;
  std::vector<HistoryDevice> devices;     // GPUs, by device
  std::vector<HistoryProcess> processes;  // by device, then bytes (largest first)

  size_t memory_bytes() const noexcept;  // what this sample occupies, heap included
};

// The sample of a published State (its snapshot, analysis and devices).
HistorySample history_sample(const State& state);

class History {
 public:
  explicit History(size_t max_samples) : max_samples_(max_samples == 0 ? 1 : max_samples) {}

  // Appends; the oldest sample goes once max_samples are held.
  void append(std::shared_ptr<const HistorySample> sample);
  // Oldest first: pointers to the same immutable samples.
  std::vector<std::shared_ptr<const HistorySample>> samples() const;

  size_t size() const noexcept { return samples_.size(); }
  size_t max_samples() const noexcept { return max_samples_; }
  size_t memory_bytes() const noexcept { return bytes_; }  // samples and the ring's pointers

 private:
  size_t max_samples_;
  std::deque<std::shared_ptr<const HistorySample>> samples_;
  size_t bytes_ = 0;
};

// The ring's size for --history SEC at the refresh interval: every refresh of that span.
size_t history_samples_for(double history_s, double interval_s) noexcept;

}  // namespace fgtrace::server
