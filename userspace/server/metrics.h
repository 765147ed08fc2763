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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../core/ledger.h"
#include "state.h"

namespace fgtrace::server {

// The HTTP server's own counters (Server::stats(), server.h).
struct ServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_rejected = 0;  // no room and none waiting to close for it (503)
  uint64_t connections_evicted = 0;   // waiting connections closed to make room for a new one
  uint64_t connections_open = 0;      // now, streams included
  uint64_t streams_open = 0;
  uint64_t streams_rejected = 0;  // stream requests over max_streams (503)
  uint64_t streams_gone = 0;      // readers that went away (seen by the pending read, not a write)
  uint64_t requests = 0;
  uint64_t bad_requests = 0;           // unparsable, too large (400, 413, 431)
  uint64_t timeouts = 0;               // requests begun that did not arrive whole within request_timeout
  uint64_t idle_closed = 0;            // connections closed after idle_timeout without a request begun
  uint64_t stream_frames_dropped = 0;  // event frames a slow reader never got
};

struct MetricsOptions {
  size_t max_processes = 500;         // processes with their own series; 0: no limit
  double scrape_duration_s = -1;      // fakegpu_collector_scrape_duration_seconds (the previous
                                      // render); < 0: not measured yet, the family is left out
  std::string version;                // fakegpu_build_info{version}; empty: build_version()
  std::optional<ServerStats> server;  // the fakegpu_http_* families (the server sets it); absent: left out
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
