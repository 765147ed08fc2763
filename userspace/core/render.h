// SPDX-License-Identifier: Apache-2.0
// What fakegpu-trace prints, as pure functions of a Snapshot: the live terminal table
// (`attach`), JSON lines (`attach -j`), the CI summary of `run` and its verdict, plus the
// human sizes both ways. Schema and exit codes: userspace/core/SUMMARY.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis.h"
#include "json.h"
#include "ledger.h"
#include "stacks.h"

namespace fgtrace {

// ---- sizes ------------------------------------------------------------------------------

// "0 B", "1023 B", "1.0 KiB", "1.5 GiB": binary units, one decimal from KiB on.
std::string human_size(uint64_t bytes);
// A duration for people: "850 ns", "12.3 us", "4.5 ms", "1.20 s".
std::string duration_text(uint64_t ns);

// --max-peak: a number (fraction allowed) and an optional unit, case-insensitive, spaces
// allowed between: none or B (bytes), K/M/G/T or KiB/MiB/GiB/TiB or Ki/Mi/Gi/Ti (powers of
// 1024), KB/MB/GB/TB (powers of 1000). Fractions of a byte are dropped ("0.1K" = 102).
// nullopt on bad input, with a message naming the input and the expected form in *error.
std::optional<uint64_t> parse_size(std::string_view text, std::string* error = nullptr);

// ---- live table (attach) ---------------------------------------------------------------

struct TableOptions {
  std::string time_text;    // header clock, e.g. "2025-06-01 12:00:00" (the caller's clock)
  double interval_s = 1.0;  // shown in the header
};

// Header, per-device totals, the analyses when the snapshot carries them (per device: usage,
// growth, time until full, risk, confidence, fragmentation; per process: growth, risk and,
// with --leak-age, its aged allocations), one row per (process, device, kind), the health
// line (always), the traced libraries and their mode (always), the since-attach footnote
// when it applies.
std::string render_table(const Snapshot& snap, const TableOptions& opts);

// ---- JSON lines (attach -j) -------------------------------------------------------------
// Each object in them comes from json.h, as in the summary and the HTTP API.

nlohmann::ordered_json snapshot_json(const Snapshot& snap, std::string_view time_text);
std::string render_json_line(const Snapshot& snap, std::string_view time_text);  // one line + '\n'

// "+1.5 MiB/s", "-512 B/s", "0 B/s"; "45 s", "12.5 min", "3.2 h", "-" for none.
std::string rate_text(double bytes_per_s, const char* per = "s");
std::string eta_text(std::optional<double> seconds);

// The loss counters events_lost() adds up, for people: "ring-buffer drops 0, missing entry
// records 0, alloc map full 0, bad records 0, duplicate allocs 0".
std::string lost_events_text(const Snapshot& snap);

// ---- run: verdict and CI summary --------------------------------------------------------

inline constexpr int kExitPeakExceeded = 3;  // a GPU's peak went over --max-peak
inline constexpr int kExitLeaked = 4;        // --fail-on-leak and a process leaked
inline constexpr int kExitEventsLost = 5;    // a threshold was asked for but events were lost
inline constexpr int kExitOomRisk = 6;       // --fail-on-oom-risk and the risk reached that level

struct Verdict {
  int code = 0;          // 0: nothing broken, fakegpu-trace exits with the command's status
  bool checked = false;  // --max-peak, --fail-on-leak or --fail-on-oom-risk given
  bool peak_exceeded = false;
  bool leaked = false;
  bool oom_risk = false;
  bool events_lost = false;
  std::vector<std::string> reasons;  // one sentence per broken threshold / loss

  int exit_status(int command_status) const noexcept { return code != 0 ? code : command_status; }
  const char* status() const noexcept;  // "ok", "peak_exceeded", "leaked", "oom_risk", "events_lost"
};

// Thresholds over a snapshot that includes exited processes. --max-peak applies to each GPU
// (device >= 0): the high-water of all traced processes' bytes on it. A leak is what an
// exited process still held (processes still running hold, they have not leaked).
// --fail-on-oom-risk LEVEL: the highest risk any device or process reached at any refresh
// (Analysis::worst_risk) is LEVEL or above.
// Precedence: events lost (5) over peak (3) over leak (4) over OOM risk (6): with events
// missing neither a broken nor a kept threshold can be trusted.
Verdict evaluate(const Snapshot& snap, std::optional<uint64_t> max_peak, bool fail_on_leak,
                 std::optional<RiskLevel> fail_on_oom_risk = std::nullopt);

struct RunInfo {
  std::vector<std::string> command;
  int exit_status = 0;  // the command's: its exit code, or 128 + signal
  double duration_s = 0;
  std::optional<uint64_t> max_peak;
  bool fail_on_leak = false;
  std::optional<RiskLevel> fail_on_oom_risk;
  std::optional<std::vector<StackReport>> leaked_stacks;  // with --stacks
};

inline constexpr const char* kSummarySchema = "fakegpu-trace/summary/v1";

nlohmann::ordered_json summary_json(const Snapshot& snap, const RunInfo& run, const Verdict& verdict);
std::string render_summary(const Snapshot& snap, const RunInfo& run, const Verdict& verdict);  // 2-space indent + '\n'

// Device label in text: "0", "1", ..., "host" for -1.
std::string device_label(int32_t device);

}  // namespace fgtrace
