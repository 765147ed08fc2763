// SPDX-License-Identifier: Apache-2.0
// One tracing session: the collector feeding the ledger, refreshed output, clean stop.
// attach / monitor / run are three ways of choosing what to trace; everything after that is
// the same loop.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/analysis.h"

namespace fgtrace {

struct TraceOptions {
  enum class Mode { Attach, Monitor, Run } mode = Mode::Monitor;
  std::vector<int> pids;          // attach
  std::vector<std::string> libs;  // --lib, in addition to what is discovered
  double interval_s = 1.0;        // -i: refresh period
  double duration_s = 0;          // -d: stop after this long (0: until Ctrl-C / the command ends)
  bool json = false;              // -j: JSON lines instead of the table
  bool uprobes_only = false;      // ignore the backend's USDT probes
  uint64_t ringbuf_bytes = 16ull << 20;
  uint32_t max_allocs = 1u << 18;
  uint32_t latency_every = 8;   // --latency-every
  double exited_ttl_s = 300;    // exited processes stay in the output this long
  bool stacks = false;          // --stacks: user stacks of outstanding/leaked allocations
  size_t top_stacks = 10;       // how many stacks the outputs list
  uint32_t max_stacks = 16384;  // --max-stacks: distinct stacks the kernel keeps
  bool quiet = false;           // --quiet: no table / JSON lines on stdout (serve only)
  // --listen (attach, monitor): the HTTP server (dashboard, /metrics, JSON API); empty: none
  std::string listen;
  bool allow_remote = false;   // --allow-remote: bind an address other than loopback
  std::string auth_token;      // from --auth-token-file; empty: no authentication
  size_t max_processes = 500;  // --max-processes: /metrics series per process, the rest "other"
  // The analyses (core/analysis.h): OOM forecast, live leaks, fragmentation.
  bool analyses = true;      // --no-analyses: the books only (the benchmark's baseline)
  AnalysisOptions analysis;  // --oom-threshold, --oom-window, --leak-age, --leak-rate
  double history_s = 3600;   // --history (with --listen): the span /api/v1/history keeps
  // run
  std::vector<std::string> command;
  std::optional<uint64_t> max_peak;
  bool fail_on_leak = false;
  std::optional<RiskLevel> fail_on_oom_risk;  // --fail-on-oom-risk LEVEL
  std::string summary_file;
  std::string timeline_file;  // --timeline: Perfetto / Chrome trace-event JSON (core/timeline.h)
  std::string html_file;      // --html: a self-contained page (core/html_report.h)
};

// Runs the session; returns the exit status (run: the command's, or a threshold's).
// Throws TraceError when tracing cannot start.
int trace(const TraceOptions& opts, std::ostream& out);

// Stops a running session (signal handlers call it).
void request_stop() noexcept;

}  // namespace fgtrace
