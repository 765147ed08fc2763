// SPDX-License-Identifier: Apache-2.0
#include "render.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace fgtrace {

using nlohmann::ordered_json;

// ---- sizes ------------------------------------------------------------------------------

std::string human_size(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  // Move up while the value would print as 1024.0 or more in this unit.
  while (v >= 1023.95 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

constexpr const char* kSizeForm =
    "expected a size such as 512MiB, 2GiB, 1.5G or 1073741824 (units: B, K/KiB, M/MiB, G/GiB, "
    "T/TiB = powers of 1024; KB, MB, GB, TB = powers of 1000)";

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text, std::string* error) {
  const std::string quoted = "'" + std::string(text) + "'";
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_spaces();
  if (i == text.size()) {
    fail(error, "empty size: " + std::string(kSizeForm));
    return std::nullopt;
  }
  if (text[i] == '-') {
    fail(error, "negative size " + quoted + ": " + kSizeForm);
    return std::nullopt;
  }
  if (text[i] == '+') ++i;

  // Integer and fraction digits, kept exact (no floating point: 1.5G is 1610612736 exactly).
  unsigned __int128 whole = 0;
  std::string frac;
  bool digits = false, too_big = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > std::numeric_limits<uint64_t>::max()) too_big = true, whole = std::numeric_limits<uint64_t>::max();
    digits = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac.size() < 18) frac += text[i];  // more digits than that cannot change the bytes
      digits = true;
      ++i;
    }
  }
  if (!digits) {
    fail(error, "not a size: " + quoted + ": " + kSizeForm);
    return std::nullopt;
  }
  skip_spaces();
  const std::string unit = lower(text.substr(i));
  // Trailing spaces after the unit are fine too.
  std::string u = unit;
  while (!u.empty() && std::isspace(static_cast<unsigned char>(u.back()))) u.pop_back();

  unsigned __int128 mult;
  if (u.empty() || u == "b") {
    mult = 1;
  } else {
    static constexpr struct {
      const char* name;
      int power;
      bool binary;
    } kUnits[] = {{"k", 1, true}, {"kib", 1, true}, {"ki", 1, true}, {"kb", 1, false},
                  {"m", 2, true}, {"mib", 2, true}, {"mi", 2, true}, {"mb", 2, false},
                  {"g", 3, true}, {"gib", 3, true}, {"gi", 3, true}, {"gb", 3, false},
                  {"t", 4, true}, {"tib", 4, true}, {"ti", 4, true}, {"tb", 4, false}};
    const auto* hit = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const auto& k) { return u == k.name; });
    if (hit == std::end(kUnits)) {
      fail(error, "unknown unit '" + std::string(text.substr(i)) + "' in " + quoted + ": " + kSizeForm);
      return std::nullopt;
    }
    mult = 1;
    for (int p = 0; p < hit->power; ++p) mult *= hit->binary ? 1024 : 1000;
  }

  unsigned __int128 scale = 1;
  for (size_t k = 0; k < frac.size(); ++k) scale *= 10;
  unsigned __int128 frac_value = 0;
  for (char c : frac) frac_value = frac_value * 10 + static_cast<unsigned>(c - '0');
  const unsigned __int128 bytes = whole * mult + frac_value * mult / scale;
  if (too_big || bytes > std::numeric_limits<uint64_t>::max()) {
    fail(error, "size " + quoted + " is too large (the most is 16 EiB - 1 byte)");
    return std::nullopt;
  }
  return static_cast<uint64_t>(bytes);
}

std::string lost_events_text(const Snapshot& s) {
  return "ring-buffer drops " + std::to_string(s.health.rb_drops) + ", missing entry records " +
         std::to_string(s.health.missing_entry) + ", alloc map full " + std::to_string(s.health.alloc_map_full) +
         ", bad records " + std::to_string(s.counters.bad_records) + ", duplicate allocs " +
         std::to_string(s.counters.duplicate_allocs) + ", processes missed " + std::to_string(s.missed.processes);
}

std::string device_label(int32_t device) { return device < 0 ? "host" : std::to_string(device); }

// ---- table ------------------------------------------------------------------------------

namespace {

std::string right(std::string s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }
std::string left(std::string s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

// A value column: right-aligned, then one character for the since-attach marker.
std::string cell(const std::string& v, size_t w, bool star) { return " " + right(v, w) + (star ? "*" : " "); }

std::string rtrim_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    size_t last = end;
    while (last > start && text[last - 1] == ' ') --last;
    out.append(text, start, last - start);
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string format_interval(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", s);
  return buf;
}

std::string health_line(const Snapshot& s) {
  const Health& h = s.health;
  const LedgerCounters& c = s.counters;
  std::string out = events_lost(s) ? "health (EVENTS LOST, figures may be incomplete):" : "health:";
  out += " events " + std::to_string(h.events) + "; lost: " + lost_events_text(s) + "\n";
  out += "        unmatched frees " + std::to_string(h.unmatched_free) + " (kernel) " +
         std::to_string(c.unmatched_frees) + " (ledger); frees of pre-attach allocations " +
         std::to_string(c.pre_attach_frees) + "\n";
  if (s.missed.processes > 0)
    out += "        processes missed " + std::to_string(s.missed.processes) +
           " (they used a CUDA library before it was traced; the JSON lists them)\n";
  if (!s.missed.unnoticed.empty())
    out += "        processes that use a CUDA library before it is traced go unnoticed: " + s.missed.unnoticed + "\n";
  return out;
}

std::string libraries_line(const Snapshot& s) {
  if (s.health.libraries.empty()) return "traced: no library attached\n";
  std::string out = "traced:";
  bool first = true;
  for (const TracedLibrary& l : s.health.libraries) {
    out += (first ? " " : ", ") + l.path + " (" + l.mode + ")";
    first = false;
  }
  return out + "\n";
}

std::string fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// The analyses: one row per GPU (forecast and fragmentation), one per running process with
// GPU memory (growth, risk, aged allocations), the worst risk so far.
std::string analysis_table(const Snapshot& s, const Analysis& a) {
  std::string out = right("DEV", 4) + cell("USED%", 6, false) + cell("GROWTH", 13, false) + cell("FULL IN", 9, false) +
                    "  " + left("RISK", 8) + cell("CONF", 4, false) + cell("FRAG", 5, false) +
                    cell("LARGEST FREE", 12, false) + "\n";
  for (const DeviceAnalysis& d : a.devices) {
    const Forecast& f = d.forecast;
    // GPUs nobody uses and no traced process touches: nothing to forecast (JSON lists them).
    const bool traced = std::any_of(s.devices.begin(), s.devices.end(),
                                    [&](const DeviceUsage& u) { return u.device == d.device && u.peak_bytes > 0; });
    if (f.used == 0 && !traced && f.trend.rate_bps == 0) continue;
    out += right(device_label(d.device), 4) + cell(f.usage_pct ? fixed(*f.usage_pct, 1) + "%" : "-", 6, false) +
           cell(rate_text(f.trend.rate_bps), 13, false) + cell(eta_text(f.eta_s), 9, false) + "  " +
           left(f.risk ? to_string(*f.risk) : "-", 8) + cell(fixed(f.trend.confidence, 2), 4, false) +
           cell(d.fragmentation ? fixed(d.fragmentation->ratio, 2) : "-", 5, false) +
           cell(d.fragmentation ? human_size(d.fragmentation->largest_free) : "-", 12, false) + "\n";
  }
  const std::string aged_head = a.options.leak_age_s ? "AGED >= " + eta_text(*a.options.leak_age_s)
                                                     : std::string("AGED (--leak-age)");
  std::string rows;
  for (const ProcessView& p : s.processes) {
    const ProcessAnalysis* pa = a.process(p.pid, p.start_ns);
    if (!pa || pa->exited || pa->devices.empty()) continue;
    const std::string comm = p.comm.empty() ? "-" : p.comm.substr(0, 15);
    rows += right(std::to_string(p.pid), 7) + " " + left(comm, 15) +
            cell(rate_text(pa->growth_bytes_per_min, "min") + (pa->growing ? "!" : ""), 14, false) +
            cell(fixed(pa->growth.confidence, 2), 4, false) + "  " + left(pa->risk ? to_string(*pa->risk) : "-", 8) +
            "  " +
            (pa->aged_listed ? std::to_string(pa->aged_count) + (pa->aged_count == 1 ? " alloc, " : " allocs, ") +
                                   human_size(pa->aged_bytes)
                             : std::string("-")) +
            "\n";
  }
  if (!rows.empty())
    out += "\n" + right("PID", 7) + " " + left("COMMAND", 15) + cell("GROWTH", 14, false) + cell("CONF", 4, false) +
           "  " + left("RISK", 8) + "  " + aged_head + "\n" + rows;
  out += "OOM risk: threshold " + fixed(a.options.oom_threshold_pct, 1) + "%, window " + eta_text(a.options.window_s) +
         "; worst so far " + (a.worst_risk ? to_string(*a.worst_risk) : "-") +
         "; growing: >= " + human_size(a.options.leak_rate_bytes_per_min) + "/min (marked !)\n\n";
  return out;
}

}  // namespace

std::string rate_text(double bps, const char* per) {
  const double mag = std::fabs(bps);
  std::string text = mag < 0.5 ? "0 B" : human_size(static_cast<uint64_t>(std::llround(mag)));
  return (mag < 0.5 ? "" : bps > 0 ? "+" : "-") + text + "/" + per;
}

std::string eta_text(std::optional<double> seconds) {
  if (!seconds || !std::isfinite(*seconds)) return "-";
  const double v = *seconds;
  char buf[32];
  if (v < 60)
    std::snprintf(buf, sizeof buf, "%.0f s", v);
  else if (v < 3600)
    std::snprintf(buf, sizeof buf, "%.1f min", v / 60);
  else if (v < 86400)
    std::snprintf(buf, sizeof buf, "%.1f h", v / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f d", v / 86400);
  return buf;
}

std::string duration_text(uint64_t ns) {
  char buf[32];
  if (ns < 1000)
    std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(ns));
  else if (ns < 1'000'000)
    std::snprintf(buf, sizeof buf, "%.1f us", static_cast<double>(ns) / 1e3);
  else if (ns < 1'000'000'000)
    std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ns) / 1e9);
  return buf;
}

std::string render_table(const Snapshot& s, const TableOptions& opts) {
  std::string out;
  size_t exited = 0;
  for (const ProcessView& p : s.processes) exited += p.exited ? 1 : 0;
  out += "fakegpu-trace  " + opts.time_text + "  every " + format_interval(opts.interval_s) + "  " +
         std::to_string(s.processes.size()) + (s.processes.size() == 1 ? " process" : " processes");
  if (exited) out += " (" + std::to_string(exited) + " exited)";
  out += "\n\n";

  // Per-device totals; the GPUs line sums devices >= 0.
  out += right("DEV", 4) + cell("LIVE", 10, false) + cell("PEAK", 10, false) + cell("LEAKED", 10, false) +
         cell("PROCS", 6, false) + "\n";
  auto device_row = [](const std::string& label, uint64_t live, uint64_t peak, uint64_t leaked, uint32_t procs) {
    return right(label, 4) + cell(human_size(live), 10, false) + cell(human_size(peak), 10, false) +
           cell(human_size(leaked), 10, false) + cell(std::to_string(procs), 6, false) + "\n";
  };
  uint64_t gpu_leaked = 0;
  uint32_t gpu_procs = 0;
  for (const DeviceUsage& d : s.devices) {
    if (d.device < 0) continue;
    out += device_row(device_label(d.device), d.live_bytes, d.peak_bytes, d.leaked_bytes, d.processes);
    gpu_leaked += d.leaked_bytes;
  }
  for (const ProcessView& p : s.processes)
    gpu_procs += std::any_of(p.devices.begin(), p.devices.end(), [](const DeviceUsage& d) { return d.device >= 0; });
  out += device_row("GPUs", s.live_bytes, s.peak_bytes, gpu_leaked, gpu_procs);
  for (const DeviceUsage& d : s.devices)
    if (d.device < 0)
      out += device_row(device_label(d.device), d.live_bytes, d.peak_bytes, d.leaked_bytes, d.processes);
  out += "\n";
  if (s.analysis) out += analysis_table(s, *s.analysis);

  out += right("PID", 7) + " " + left("COMMAND", 15) + " " + right("DEV", 4) + "  " + left("KIND", 7) +
         cell("LIVE", 10, false) + cell("PEAK", 10, false) + cell("ALLOCS", 8, false) + cell("FREES", 8, false) +
         cell("FAILED", 6, false) + cell("LEAKED", 10, false) + "\n";
  bool starred = false;
  for (const ProcessView& p : s.processes) {
    const bool sa = p.since_attach;
    const bool live_star = sa && !p.baseline_known;
    starred = starred || sa;
    const std::string comm = p.comm.empty() ? "-" : p.comm.substr(0, 15);
    const std::string head = right(std::to_string(p.pid), 7) + " " + left(comm, 15) + " ";
    if (p.books.empty()) {
      out += head + right("-", 4) + "  " + left("-", 7) + cell(p.exited ? "exited" : "0 B", 10, false) +
             cell("0 B", 10, false) + cell("0", 8, false) + cell("0", 8, false) + cell("0", 6, false) +
             cell(p.exited ? "0 B" : "-", 10, false) + "\n";
      continue;
    }
    // GPUs first, host memory (device -1) last.
    std::vector<const BookView*> rows;
    for (const BookView& b : p.books)
      if (b.device >= 0) rows.push_back(&b);
    for (const BookView& b : p.books)
      if (b.device < 0) rows.push_back(&b);
    for (const BookView* bp : rows) {
      const BookView& b = *bp;
      out += head + right(device_label(b.device), 4) + "  " + left(to_string(b.kind), 7);
      out += p.exited ? cell("exited", 10, false) : cell(human_size(b.live_bytes), 10, live_star);
      out += cell(human_size(b.peak_bytes), 10, sa) + cell(std::to_string(b.allocs), 8, sa) +
             cell(std::to_string(b.frees), 8, sa) + cell(std::to_string(b.failed), 6, sa);
      out += p.exited ? cell(human_size(b.leaked_bytes), 10, live_star) : cell("-", 10, false);
      out += "\n";
    }
  }
  if (s.processes.empty()) out += right("", 7) + " (no traced process yet)\n";
  // The kernels launched, most first: at most 5 a process here (JSON lists kKernelsListed).
  // RAN: executed on the host CPU; RECORDED: counted, not run; HOST: the executed launches'
  // host time, MEAN: per executed launch.
  bool kernels_head = false;
  for (const ProcessView& p : s.processes) {
    for (size_t i = 0; i < p.kernels.size() && i < 5; ++i) {
      const KernelStats& k = p.kernels[i];
      if (!kernels_head) {
        out += "\n" + right("PID", 7) + " " + left("COMMAND", 15) + cell("LAUNCHES", 10, false) +
               cell("RAN", 10, false) + cell("RECORDED", 10, false) + cell("HOST", 10, false) +
               cell("MEAN", 10, false) + "  KERNEL\n";
        kernels_head = true;
      }
      out += right(std::to_string(p.pid), 7) + " " + left(p.comm.empty() ? "-" : p.comm.substr(0, 15), 15) +
             cell(std::to_string(k.launches), 10, false) + cell(std::to_string(k.ran), 10, false) +
             cell(std::to_string(k.recorded), 10, false) + cell(k.ran ? duration_text(k.host_ns) : "-", 10, false) +
             cell(k.ran ? duration_text(k.mean_host_ns()) : "-", 10, false) + "  " + k.name + "\n";
    }
  }
  // The calling objects, most calls first: at most 5 a process here (JSON lists kCallersListed).
  bool callers_head = false;
  for (const ProcessView& p : s.processes) {
    for (size_t i = 0; i < p.callers.size() && i < 5; ++i) {
      const CallerStats& c = p.callers[i];
      if (!callers_head) {
        out += "\n" + right("PID", 7) + " " + left("COMMAND", 15) + cell("CALLS", 8, false) + cell("ERR", 5, false) +
               cell("ALLOC", 10, false) + cell("FREED", 10, false) + cell("TIME", 10, false) + "  CALLER\n";
        callers_head = true;
      }
      out += right(std::to_string(p.pid), 7) + " " + left(p.comm.empty() ? "-" : p.comm.substr(0, 15), 15) +
             cell(std::to_string(c.calls), 8, false) + cell(std::to_string(c.errors), 5, false) +
             cell(human_size(c.alloc_bytes), 10, false) + cell(human_size(c.free_bytes), 10, false) +
             cell(c.timed ? duration_text(c.time_ns()) : "-", 10, false) + "  " + c.object + "\n";
    }
  }
  out += "\n" + health_line(s) + libraries_line(s);
  if (starred)
    out +=
        "* since attach: the process was running before tracing began; starred figures count only\n"
        "  what happened since. An unstarred LIVE includes what it held at attach (backend's ledger).\n";
  return rtrim_lines(out);
}

// ---- JSON lines -------------------------------------------------------------------------

ordered_json snapshot_json(const Snapshot& s, std::string_view time_text) {
  ordered_json procs = ordered_json::array();
  for (const ProcessView& p : s.processes) {
    ordered_json j = process_json(p, {});
    j["books"] = books_json(p.books);
    add_breakdowns(j, p);
    procs.push_back(std::move(j));
  }
  return {{"time", time_text},
          {"last_event_ns", s.last_event_ns},
          {"total", totals_json(s, /*with_live=*/true)},
          {"devices", devices_json(s.devices, {})},
          {"processes", std::move(procs)},
          {"health", health_json(s)},
          {"libraries", libraries_json(s)},
          {"analysis", s.analysis ? analysis_json(*s.analysis) : ordered_json(nullptr)}};
}

std::string render_json_line(const Snapshot& s, std::string_view time_text) {
  return snapshot_json(s, time_text).dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

// ---- verdict and summary ----------------------------------------------------------------

const char* Verdict::status() const noexcept {
  switch (code) {
    case kExitPeakExceeded: return "peak_exceeded";
    case kExitLeaked: return "leaked";
    case kExitEventsLost: return "events_lost";
    case kExitOomRisk: return "oom_risk";
    default: return "ok";
  }
}

namespace {

std::string bytes_text(uint64_t b) { return human_size(b) + " (" + std::to_string(b) + " bytes)"; }

}  // namespace

Verdict evaluate(const Snapshot& s, std::optional<uint64_t> max_peak, bool fail_on_leak,
                 std::optional<RiskLevel> fail_on_oom_risk) {
  Verdict v;
  v.checked = max_peak.has_value() || fail_on_leak || fail_on_oom_risk.has_value();
  v.events_lost = events_lost(s);
  if (max_peak) {
    for (const DeviceUsage& d : s.devices) {
      if (d.device < 0 || d.peak_bytes <= *max_peak) continue;
      v.peak_exceeded = true;
      v.reasons.push_back("device " + std::to_string(d.device) + " peaked at " + bytes_text(d.peak_bytes) +
                          ", over --max-peak " + bytes_text(*max_peak));
    }
  }
  if (fail_on_leak) {
    for (const ProcessView& p : s.processes) {
      if (!p.exited) continue;
      for (const DeviceUsage& d : p.devices) {
        if (d.leaked_bytes == 0 && d.leaked_allocs == 0) continue;
        v.leaked = true;
        v.reasons.push_back("pid " + std::to_string(p.pid) + " (" + p.comm + ") leaked " + bytes_text(d.leaked_bytes) +
                            " in " + std::to_string(d.leaked_allocs) +
                            (d.leaked_allocs == 1 ? " allocation" : " allocations") + " on " +
                            (d.device < 0 ? std::string("host") : "device " + std::to_string(d.device)));
      }
    }
  }
  if (fail_on_oom_risk && s.analysis && s.analysis->worst_risk && *s.analysis->worst_risk >= *fail_on_oom_risk) {
    const Analysis& a = *s.analysis;
    v.oom_risk = true;
    for (const WorstForecast& w : a.worst) {
      if (!w.forecast.risk || *w.forecast.risk < *fail_on_oom_risk) continue;
      v.reasons.push_back("device " + std::to_string(w.device) + " reached OOM risk " + to_string(*w.forecast.risk) +
                          " (usage " + fixed(w.forecast.usage_pct.value_or(0), 1) + "%, growth " +
                          rate_text(w.forecast.trend.rate_bps) + ", full in " + eta_text(w.forecast.eta_s) +
                          "), at or over --fail-on-oom-risk " + to_string(*fail_on_oom_risk));
    }
    for (const ProcessAnalysis& p : a.processes) {
      if (!p.worst_risk || *p.worst_risk < *fail_on_oom_risk) continue;
      v.reasons.push_back("pid " + std::to_string(p.pid) + " reached OOM risk " + to_string(*p.worst_risk) +
                          ", at or over --fail-on-oom-risk " + to_string(*fail_on_oom_risk));
    }
  }
  if (v.checked && v.events_lost)
    v.reasons.push_back("events were lost (" + lost_events_text(s) + "): the verdict cannot be trusted");
  if (v.checked && v.events_lost)
    v.code = kExitEventsLost;
  else if (v.peak_exceeded)
    v.code = kExitPeakExceeded;
  else if (v.leaked)
    v.code = kExitLeaked;
  else if (v.oom_risk)
    v.code = kExitOomRisk;
  return v;
}

ordered_json summary_json(const Snapshot& s, const RunInfo& run, const Verdict& verdict) {
  ordered_json procs = ordered_json::array();
  for (const ProcessView& p : s.processes) {
    ordered_json j = process_json(p, {});
    j["exit_event_seen"] = p.exit_event_seen;
    j["devices"] = devices_json(p.devices, {.processes = false});
    j["calls"] = calls_json(p.calls);
    j["copies"] = copies_json(p.copies);
    j["launches"] = p.launches;
    add_breakdowns(j, p);
    procs.push_back(std::move(j));
  }
  ordered_json total = totals_json(s, /*with_live=*/false);
  total["devices"] = devices_json(s.devices, {.live = false});
  total["calls"] = calls_json(s.calls);
  total["copies"] = copies_json(s.copies);
  total["launches"] = s.launches;
  ordered_json reasons = verdict.reasons;
  ordered_json out = {{"schema", kSummarySchema},
                      {"command", run.command},
                      {"command_exit_status", run.exit_status},
                      {"duration_s", run.duration_s},
                      {"verdict",
                       {{"status", verdict.status()},
                        {"exit_code", verdict.exit_status(run.exit_status)},
                        {"max_peak_bytes", or_null(run.max_peak)},
                        {"fail_on_leak", run.fail_on_leak},
                        {"fail_on_oom_risk", or_null(run.fail_on_oom_risk)},
                        {"trustworthy", !verdict.events_lost},
                        {"reasons", reasons}}},
                      {"total", std::move(total)},
                      {"processes", std::move(procs)},
                      {"drops", health_json(s)},
                      {"libraries", libraries_json(s)},
                      {"analysis", s.analysis ? analysis_json(*s.analysis) : ordered_json(nullptr)}};
  if (run.leaked_stacks) out["leaked_stacks"] = stacks_json(*run.leaked_stacks);
  return out;
}

std::string render_summary(const Snapshot& s, const RunInfo& run, const Verdict& verdict) {
  // Process names are not always UTF-8: invalid bytes become U+FFFD rather than an exception.
  return summary_json(s, run, verdict).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace fgtrace
