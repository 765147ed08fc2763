// SPDX-License-Identifier: Apache-2.0
// /metrics: the ledger's books in the Prometheus text exposition format 0.0.4.
//
// Naming follows the Prometheus conventions (base units: bytes, seconds; counters end in
// _total; HELP and TYPE once per family, samples of a family together). promtool accepts the
// output with no lint warnings (tests/unit/test_server_metrics.cpp runs it).
//
// Cardinality is bounded: at most max_processes processes get their own series (the ones with
// the most live + peak bytes); the rest are summed into pid="other",comm="other". Processes
// with the same pid and comm (a reused pid within the exited-process TTL) are summed too, so
// a label set never repeats.
//
// Device labels are the ledger's numbers: device="-1" is pinned host memory (uuid="").
//
// Counters come from the processes in the snapshot: when the collector forgets an exited
// process (its TTL), its share leaves the totals and Prometheus sees a counter reset.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../core/ledger.h"
#include "state.h"

namespace fgtrace::server {

struct MetricsOptions {
  size_t max_processes = 500;     // processes with their own series; 0: no limit
  double scrape_duration_s = -1;  // fakegpu_collector_scrape_duration_seconds (the previous
                                  // render); < 0: not measured yet, the family is left out
  std::string version;            // fakegpu_build_info{version}; empty: build_version()
};

// This build's version (the CMake project version), e.g. "0.1.0".
std::string_view build_version() noexcept;

std::string render_metrics(const Snapshot& snap, const std::vector<DeviceInfo>& devices, const MetricsOptions& opts);

// The histogram's upper bounds in seconds: le = 2^k ns for k = kFirstLeLog2 .. kLastLeLog2
// (1.024 us .. 8.59 s), then +Inf. Ledger bucket i ([2^i, 2^(i+1)) ns) counts under
// le = 2^(i+1) ns and every bound above it.
inline constexpr unsigned kFirstLeLog2 = 10;
inline constexpr unsigned kLastLeLog2 = 33;

// Appends `value` as a label value: \ " and newline escaped; invalid UTF-8 becomes U+FFFD
// (the text format requires UTF-8 label values).
void append_label_value(std::string& out, std::string_view value);

}  // namespace fgtrace::server
