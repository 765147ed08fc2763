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
  out += " events " + std::to_string(h.events) + "; lost: ring-buffer drops " + std::to_string(h.rb_drops) +
         ", missing entry records " + std::to_string(h.missing_entry) + ", alloc map full " +
         std::to_string(h.alloc_map_full) + ", bad records " + std::to_string(c.bad_records) + ", duplicate allocs " +
         std::to_string(c.duplicate_allocs) + "\n";
  out += "        unmatched frees " + std::to_string(h.unmatched_free) + " (kernel) " +
         std::to_string(c.unmatched_frees) + " (ledger); frees of pre-attach allocations " +
         std::to_string(c.pre_attach_frees) + "\n";
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
  bool kernels_head = false;
  for (const ProcessView& p : s.processes) {
    for (size_t i = 0; i < p.kernels.size() && i < 5; ++i) {
      if (!kernels_head) {
        out += "\n" + right("PID", 7) + " " + left("COMMAND", 15) + cell("LAUNCHES", 10, false) + "  KERNEL\n";
        kernels_head = true;
      }
      out += right(std::to_string(p.pid), 7) + " " + left(p.comm.empty() ? "-" : p.comm.substr(0, 15), 15) +
             cell(std::to_string(p.kernels[i].launches), 10, false) + "  " + p.kernels[i].name + "\n";
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

// ---- JSON -------------------------------------------------------------------------------

bool events_lost(const Snapshot& s) noexcept {
  return s.health.rb_drops + s.health.missing_entry + s.health.alloc_map_full + s.counters.bad_records +
             s.counters.duplicate_allocs >
         0;
}

ordered_json health_json(const Snapshot& s) {
  const Health& h = s.health;
  const LedgerCounters& c = s.counters;
  return {{"events_lost", events_lost(s)},
          {"events", h.events},
          {"rb_drops", h.rb_drops},
          {"missing_entry", h.missing_entry},
          {"alloc_map_full", h.alloc_map_full},
          {"unmatched_free", h.unmatched_free},
          {"stacks_lost", h.stacks_lost},
          {"ledger",
           {{"events", c.events},
            {"bad_records", c.bad_records},
            {"unmatched_frees", c.unmatched_frees},
            {"pre_attach_frees", c.pre_attach_frees},
            {"duplicate_allocs", c.duplicate_allocs},
            {"exits_without_event", c.exits_without_event}}}};
}

namespace {
ordered_json book_json(const BookView& b) {
  return {{"device", b.device},
          {"kind", to_string(b.kind)},
          {"live_bytes", b.live_bytes},
          {"peak_bytes", b.peak_bytes},
          {"allocs", b.allocs},
          {"alloc_bytes", b.alloc_bytes},
          {"frees", b.frees},
          {"freed_bytes", b.freed_bytes},
          {"failed_calls", b.failed},
          {"implicit_frees", b.implicit_frees},
          {"implicit_freed_bytes", b.implicit_freed_bytes},
          {"unmatched_frees", b.unmatched_frees},
          {"outstanding_allocs", b.outstanding},
          {"baseline_bytes", b.baseline_bytes},
          {"baseline_left", b.baseline_left},
          {"leaked_bytes", b.leaked_bytes},
          {"leaked_allocs", b.leaked_allocs}};
}

}  // namespace

ordered_json books_json(const std::vector<BookView>& books) {
  ordered_json arr = ordered_json::array();
  for (const BookView& b : books) arr.push_back(book_json(b));
  return arr;
}

ordered_json kernels_json(const std::vector<KernelStats>& kernels) {
  ordered_json arr = ordered_json::array();
  for (size_t i = 0; i < kernels.size() && i < kKernelsListed; ++i)
    arr.push_back({{"name", kernels[i].name}, {"launches", kernels[i].launches}});
  return arr;
}

ordered_json callers_json(const std::vector<CallerStats>& callers) {
  ordered_json arr = ordered_json::array();
  for (size_t i = 0; i < callers.size() && i < kCallersListed; ++i) {
    const CallerStats& c = callers[i];
    arr.push_back({{"object", c.object},
                   {"calls", c.calls},
                   {"errors", c.errors},
                   {"alloc_bytes", c.alloc_bytes},
                   {"free_bytes", c.free_bytes},
                   {"probed_calls", c.probed},
                   {"timed_calls", c.timed},
                   {"time_ns", c.time_ns()}});
  }
  return arr;
}

ordered_json kernel_books_json(const std::vector<KernelBookView>& books) {
  ordered_json arr = ordered_json::array();
  for (const KernelBookView& b : books)
    arr.push_back({{"device", b.device},
                   {"kind", to_string(b.kind)},
                   {"alloc_calls", b.alloc_calls},
                   {"alloc_bytes", b.alloc_bytes},
                   {"free_calls", b.free_calls},
                   {"free_bytes", b.free_bytes},
                   {"implicit_free_bytes", b.implicit_free_bytes},
                   {"live_bytes", b.live_bytes},
                   {"peak_bytes", b.peak_bytes},
                   {"failed_calls", b.failed_calls}});
  return arr;
}

namespace {

ordered_json libraries_json(const Snapshot& s) {
  ordered_json arr = ordered_json::array();
  for (const TracedLibrary& l : s.health.libraries) arr.push_back({{"path", l.path}, {"mode", l.mode}});
  return arr;
}

ordered_json device_json(const DeviceUsage& d, bool with_live, bool with_processes) {
  ordered_json j = {{"device", d.device}};
  if (with_live) j["live_bytes"] = d.live_bytes;
  j["peak_bytes"] = d.peak_bytes;
  j["allocs"] = d.allocs;
  j["frees"] = d.frees;
  j["failed_calls"] = d.failed;
  j["leaked_bytes"] = d.leaked_bytes;
  j["leaked_allocs"] = d.leaked_allocs;
  if (with_processes) j["processes"] = d.processes;
  return j;
}

ordered_json devices_json(const std::vector<DeviceUsage>& ds, bool with_live, bool with_processes) {
  ordered_json arr = ordered_json::array();
  for (const DeviceUsage& d : ds) arr.push_back(device_json(d, with_live, with_processes));
  return arr;
}

ordered_json process_head(const ProcessView& p) {
  return {{"pid", p.pid},
          {"ppid", p.ppid},
          {"comm", p.comm},
          {"state", p.exited ? "exited" : "running"},
          {"since_attach", p.since_attach},
          {"baseline_known", p.baseline_known},
          {"live_bytes", p.live_bytes},
          {"peak_bytes", p.peak_bytes},
          {"leaked_bytes", p.leaked_bytes},
          {"leaked_allocs", p.leaked_allocs},
          {"allocs", p.allocs},
          {"frees", p.frees},
          {"failed_calls", p.failed},
          {"implicit_frees", p.implicit_frees},
          {"unmatched_frees", p.unmatched_frees}};
}

}  // namespace

ordered_json calls_json(const std::vector<CallStats>& calls) {
  ordered_json arr = ordered_json::array();
  for (const CallStats& c : calls) {
    // Keyed by the bucket's lower bound in ns: "1024" counts calls of 1024..2047 ns ("0": 0..1).
    ordered_json hist = ordered_json::object();
    for (size_t i = 0; i < kLatencyBuckets; ++i)
      if (c.buckets[i]) hist[std::to_string(i == 0 ? 0 : uint64_t{1} << i)] = c.buckets[i];
    arr.push_back({{"func", c.func},
                   {"calls", c.calls},
                   {"errors", c.errors},
                   {"timed", c.timed},
                   {"total_ns", c.total_ns},
                   {"max_ns", c.max_ns},
                   {"log2_hist_ns", hist}});
  }
  return arr;
}

ordered_json copies_json(const std::array<CopyStats, kCopyDirections>& copies) {
  ordered_json j = ordered_json::object();
  for (size_t i = 0; i < kCopyDirections; ++i)
    j[to_string(static_cast<CopyDirection>(i))] = {{"bytes", copies[i].bytes}, {"count", copies[i].count}};
  return j;
}

namespace {

ordered_json opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }
ordered_json opt(const std::optional<RiskLevel>& r) { return r ? ordered_json(to_string(*r)) : ordered_json(nullptr); }

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

ordered_json forecast_json(const Forecast& f) {
  return {{"capacity_bytes", f.capacity ? ordered_json(f.capacity) : ordered_json(nullptr)},
          {"used_bytes", f.used},
          {"usage_pct", opt(f.usage_pct)},
          {"growth_bytes_per_s", f.trend.rate_bps},
          {"samples", f.trend.samples},
          {"span_s", f.trend.span_s},
          {"r2", f.trend.r2},
          {"confidence", f.trend.confidence},
          {"eta_s", opt(f.eta_s)},
          {"risk", opt(f.risk)}};
}

ordered_json fragmentation_json(const std::optional<Fragmentation>& f) {
  if (!f) return nullptr;
  return {{"address_space_begin", hex(f->window_begin)},
          {"capacity_bytes", f->capacity},
          {"used_bytes", f->used_bytes},
          {"free_bytes", f->free_bytes},
          {"largest_free_bytes", f->largest_free},
          {"free_extents", f->free_extents},
          {"ratio", f->ratio}};
}

ordered_json outstanding_allocation_json(const OutstandingAllocation& a) {
  return {{"ptr", hex(a.ptr)},
          {"size", a.size},
          {"device", a.device},
          {"kind", to_string(a.kind)},
          {"api", to_string(a.api)},
          {"ts_ns", a.ts_ns},
          {"stack_id", a.stack_id ? ordered_json(*a.stack_id) : ordered_json(nullptr)}};
}

ordered_json process_analysis_json(const ProcessAnalysis& p) {
  ordered_json devs = ordered_json::array();
  for (const ProcessDeviceAnalysis& d : p.devices)
    devs.push_back({{"device", d.device},
                    {"live_bytes", d.live_bytes},
                    {"forecast", forecast_json(d.forecast)},
                    {"fragmentation", fragmentation_json(d.fragmentation)}});
  ordered_json j = {{"pid", p.pid},
                    {"start_ns", p.start_ns},
                    {"state", p.exited ? "exited" : "running"},
                    {"growth_bytes_per_min", p.growth_bytes_per_min},
                    {"growth_confidence", p.growth.confidence},
                    {"growth_samples", p.growth.samples},
                    {"growing", p.growing},
                    {"risk", opt(p.risk)},
                    {"worst_risk", opt(p.worst_risk)},
                    {"devices", std::move(devs)}};
  if (!p.aged_listed) {
    j["aged"] = nullptr;
    return j;
  }
  ordered_json allocs = ordered_json::array();
  for (const OutstandingAllocation& a : p.aged) allocs.push_back(outstanding_allocation_json(a));
  ordered_json stacks = ordered_json::array();
  for (const StackUsage& st : p.aged_stacks)
    stacks.push_back({{"stack_id", st.stack_id}, {"bytes", st.bytes}, {"allocs", st.allocs}});
  j["aged"] = {{"as_of_ns", p.aged_as_of_ns},
               {"count", p.aged_count},
               {"bytes", p.aged_bytes},
               {"allocations", std::move(allocs)},
               {"stacks", std::move(stacks)}};
  return j;
}

ordered_json analysis_json(const Analysis& a) {
  ordered_json devs = ordered_json::array();
  for (const DeviceAnalysis& d : a.devices)
    devs.push_back({{"device", d.device},
                    {"forecast", forecast_json(d.forecast)},
                    {"fragmentation", fragmentation_json(d.fragmentation)},
                    {"fragmentation_pid", d.fragmentation ? ordered_json(d.fragmentation_pid) : ordered_json(nullptr)},
                    {"address_spaces", d.address_spaces}});
  ordered_json procs = ordered_json::array();
  for (const ProcessAnalysis& p : a.processes) procs.push_back(process_analysis_json(p));
  ordered_json worst = ordered_json::array();
  for (const WorstForecast& w : a.worst)
    worst.push_back({{"device", w.device}, {"at_ns", w.t_ns}, {"forecast", forecast_json(w.forecast)}});
  return {{"as_of_ns", a.as_of_ns},
          {"oom_threshold_pct", a.options.oom_threshold_pct},
          {"window_s", a.options.window_s},
          {"leak_age_s", opt(a.options.leak_age_s)},
          {"leak_rate_bytes_per_min", a.options.leak_rate_bytes_per_min},
          {"worst_risk", opt(a.worst_risk)},
          {"devices", std::move(devs)},
          {"processes", std::move(procs)},
          {"worst", std::move(worst)}};
}

ordered_json snapshot_json(const Snapshot& s, std::string_view time_text) {
  ordered_json procs = ordered_json::array();
  for (const ProcessView& p : s.processes) {
    ordered_json j = process_head(p);
    j["books"] = books_json(p.books);
    j["kernels"] = kernels_json(p.kernels);
    j["callers"] = callers_json(p.callers);
    j["kernel_books"] = kernel_books_json(p.kernel_books);
    procs.push_back(std::move(j));
  }
  return {{"time", time_text},
          {"last_event_ns", s.last_event_ns},
          {"total",
           {{"live_bytes", s.live_bytes},
            {"peak_bytes", s.peak_bytes},
            {"leaked_bytes", s.leaked_bytes},
            {"leaked_allocs", s.leaked_allocs}}},
          {"devices", devices_json(s.devices, true, true)},
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
  if (v.checked && v.events_lost) {
    const Health& h = s.health;
    v.reasons.push_back("events were lost (ring-buffer drops " + std::to_string(h.rb_drops) +
                        ", missing entry records " + std::to_string(h.missing_entry) + ", alloc map full " +
                        std::to_string(h.alloc_map_full) + ", bad records " + std::to_string(s.counters.bad_records) +
                        ", duplicate allocs " + std::to_string(s.counters.duplicate_allocs) +
                        "): the verdict cannot be trusted");
  }
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
    ordered_json j = process_head(p);
    j["exit_event_seen"] = p.exit_event_seen;
    j["devices"] = devices_json(p.devices, true, false);
    j["calls"] = calls_json(p.calls);
    j["copies"] = copies_json(p.copies);
    j["launches"] = p.launches;
    j["kernels"] = kernels_json(p.kernels);
    j["callers"] = callers_json(p.callers);
    j["kernel_books"] = kernel_books_json(p.kernel_books);
    procs.push_back(std::move(j));
  }
  ordered_json reasons = verdict.reasons;
  ordered_json out = {{"schema", kSummarySchema},
                      {"command", run.command},
                      {"command_exit_status", run.exit_status},
                      {"duration_s", run.duration_s},
                      {"verdict",
                       {{"status", verdict.status()},
                        {"exit_code", verdict.exit_status(run.exit_status)},
                        {"max_peak_bytes", run.max_peak ? ordered_json(*run.max_peak) : ordered_json(nullptr)},
                        {"fail_on_leak", run.fail_on_leak},
                        {"fail_on_oom_risk",
                         run.fail_on_oom_risk ? ordered_json(to_string(*run.fail_on_oom_risk)) : ordered_json(nullptr)},
                        {"trustworthy", !verdict.events_lost},
                        {"reasons", reasons}}},
                      {"total",
                       {{"peak_bytes", s.peak_bytes},
                        {"leaked_bytes", s.leaked_bytes},
                        {"leaked_allocs", s.leaked_allocs},
                        {"devices", devices_json(s.devices, false, true)},
                        {"calls", calls_json(s.calls)},
                        {"copies", copies_json(s.copies)},
                        {"launches", s.launches}}},
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
