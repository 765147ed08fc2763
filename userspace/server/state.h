// SPDX-License-Identifier: Apache-2.0
// What the HTTP server shows: one immutable State per collector refresh, published to the
// server as a shared_ptr<const State> (Server::publish) and read by every request. Nothing in
// it is mutated after publication, so requests on the server thread never lock the ledger.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/ledger.h"
#include "history.h"

namespace fgtrace::server {

// One GPU as the system (NVML, or the fake backend's device table) reports it: what every
// process on the machine uses, traced or not. Filled by the collector.
struct DeviceInfo {
  int ordinal = 0;     // the CUDA device number, as in the ledger's books
  std::string uuid;    // "GPU-8a5b…"; empty when unknown
  std::string name;    // "NVIDIA H100 80GB HBM3"
  uint64_t total = 0;  // bytes; 0 when unknown (no "full" alert then)
  uint64_t used = 0;   // bytes in use by all processes
};

// Symbolized frames of a user stack, innermost first, by (pid, stack id). Optional: the
// collector fills it (with --stacks) for the stacks it symbolized; others show unsymbolized.
using StackFrames = std::map<std::pair<uint32_t, uint32_t>, std::vector<std::string>>;

struct State {
  Snapshot snapshot;                // AllocationLedger::snapshot(/*include_exited=*/true)
  std::vector<DeviceInfo> devices;  // by ordinal
  StackFrames stack_frames;
  uint64_t time_unix_ms = 0;  // wall clock of the refresh (ms since the Unix epoch)
  uint64_t sequence = 0;      // refresh count, 1 for the first publish; 0: nothing yet
  double interval_s = 1.0;    // the refresh period (the page's time axis)
  // The server's history up to and including this refresh (oldest first, shared immutable
  // samples), for /api/v1/history; empty when none is kept.
  std::vector<std::shared_ptr<const HistorySample>> history;
  double history_s = 0;            // --history: the span kept
  size_t history_max_samples = 0;  // the ring's bound
  size_t history_bytes = 0;        // what the kept samples occupy
};

}  // namespace fgtrace::server
