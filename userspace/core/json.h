// SPDX-License-Identifier: Apache-2.0
// The one mapping of fakegpu-trace's model types (ledger.h, analysis.h, stacks.h) to JSON.
// Every object that `attach -j` (render.h: snapshot_json), `run`'s summary (render.h:
// summary_json) and the HTTP API (server/api.h) print for a model type comes from its
// function here; the documents only choose which objects they carry and where. Where two
// outputs show different fields of one type, the function takes the choice as a parameter,
// so each field is named and computed once. Schemas: userspace/core/SUMMARY.md and
// userspace/server/API.md.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis.h"
#include "ledger.h"
#include "stacks.h"

namespace fgtrace {

// A value, or null without one. A risk level is its name ("low" ... "critical").
template <class T>
nlohmann::ordered_json or_null(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}
nlohmann::ordered_json or_null(const std::optional<RiskLevel>& risk);

// ---- the books --------------------------------------------------------------------------

// True when the kernel or the ledger saw events go missing: ring-buffer drops, return probes
// without their entry, allocation records that found the map full, records decode() refused,
// or an address allocated twice (its free was lost). Unmatched frees are shown but do not
// count: they also come from allocation APIs that are not traced.
bool events_lost(const Snapshot& snap) noexcept;

// The kernel's and the ledger's loss counters, with events_lost.
nlohmann::ordered_json health_json(const Snapshot& snap);
// The traced libraries: [{"path", "mode"}].
nlohmann::ordered_json libraries_json(const Snapshot& snap);
// The snapshot's totals over every process: live_bytes (with_live), peak_bytes, leaked_bytes,
// leaked_allocs. Documents add their own aggregates after these.
nlohmann::ordered_json totals_json(const Snapshot& snap, bool with_live);

// Which of DeviceUsage's figures an output shows, in this order: device, live_bytes,
// peak_bytes, allocs/frees/failed_calls ("counts"), leaked_bytes, leaked_allocs, processes.
struct DeviceFields {
  bool device = true;     // the ordinal (false: the object sits under its device already)
  bool live = true;       // live_bytes
  bool counts = true;     // allocs, frees, failed_calls
  bool processes = true;  // processes with books on the device (system view)
};
nlohmann::ordered_json device_json(const DeviceUsage& d, const DeviceFields& fields);
nlohmann::ordered_json devices_json(const std::vector<DeviceUsage>& devices, const DeviceFields& fields);

// Which of ProcessView's scalar figures an output shows, in this order: pid, ppid, comm,
// state, since_attach, baseline_known, start_ns/exit_ns ("lifetime"), live_bytes, peak_bytes,
// leaked_bytes, leaked_allocs, allocs, frees, failed_calls, implicit_frees/unmatched_frees
// ("free_detail"). Documents add the process's lists (books, calls, ...) after these.
struct ProcessFields {
  bool lifetime = false;    // start_ns, exit_ns (null while running)
  bool free_detail = true;  // implicit_frees, unmatched_frees
};
nlohmann::ordered_json process_json(const ProcessView& p, const ProcessFields& fields);

nlohmann::ordered_json books_json(const std::vector<BookView>& books);
nlohmann::ordered_json kernel_books_json(const std::vector<KernelBookView>& books);
nlohmann::ordered_json calls_json(const std::vector<CallStats>& calls);
// A process's most launched kernels (kKernelsListed at most): [{"name", "launches", "ran",
// "recorded", "host_ns", "mean_host_ns"}] (mean_host_ns: per executed launch, 0 when none ran).
nlohmann::ordered_json kernels_json(const std::vector<KernelStats>& kernels);
// A process's calls by calling object (kCallersListed at most, most calls first): [{"object",
// "calls", "errors", "alloc_bytes", "free_bytes", "probed_calls", "timed_calls", "time_ns"}].
nlohmann::ordered_json callers_json(const std::vector<CallerStats>& callers);
nlohmann::ordered_json copies_json(const std::array<CopyStats, kCopyDirections>& copies);
// Adds a process's breakdowns to its object: kernels (kernels_json), callers (callers_json),
// kernel_books (kernel_books_json), in that order.
void add_breakdowns(nlohmann::ordered_json& j, const ProcessView& p);
// One held allocation: ptr (hex text), size, device, kind, api, ts_ns, stack_id (null: none).
nlohmann::ordered_json outstanding_allocation_json(const OutstandingAllocation& a);

// ---- stacks -----------------------------------------------------------------------------

// stack_id, bytes, allocs and, given frames (innermost first), frames.
nlohmann::ordered_json stack_json(const StackUsage& s, const std::vector<std::string>* frames = nullptr);
// The top stacks (stacks.h): pid, comm, then stack_json with frames.
nlohmann::ordered_json stacks_json(const std::vector<StackReport>& stacks);

// ---- the analyses (analysis.h): schema in userspace/core/SUMMARY.md ("analysis") ------------

nlohmann::ordered_json forecast_json(const Forecast& f);
// null when none. brief: free_bytes, largest_free_bytes and ratio only (the API's history).
nlohmann::ordered_json fragmentation_json(const std::optional<Fragmentation>& f, bool brief = false);
// A GPU's: device, forecast, fragmentation, fragmentation_pid (null without), address_spaces.
nlohmann::ordered_json device_analysis_json(const DeviceAnalysis& d);
nlohmann::ordered_json process_analysis_json(const ProcessAnalysis& p);
// The options the analyses ran with and the worst risk so far: oom_threshold_pct, window_s,
// leak_age_s, leak_rate_bytes_per_min, worst_risk.
nlohmann::ordered_json analysis_settings_json(const Analysis& a);
// as_of_ns, analysis_settings_json, then devices, processes and worst.
nlohmann::ordered_json analysis_json(const Analysis& a);

}  // namespace fgtrace
