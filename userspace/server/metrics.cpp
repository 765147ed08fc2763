// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_set>
#include <utility>

#include "../core/analysis.h"
#include "../core/event.h"

#ifndef FAKEGPU_TRACE_VERSION
#define FAKEGPU_TRACE_VERSION "unknown"
#endif

namespace fgtrace::server {

std::string_view build_version() noexcept { return FAKEGPU_TRACE_VERSION; }

// ---- text primitives ----------------------------------------------------------------------

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong
// forms, surrogates and code points above U+10FFFF are invalid too).
size_t utf8_sequence(std::string_view s, size_t i) noexcept {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

void append_u64(std::string& out, uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
    out.append(buf, r.ptr);
  }
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

// "name{labels} " of a sample line; the value and the newline follow.
void sample_head(std::string& out, std::string_view name, std::string_view labels) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
}

// name{labels} value
void sample(std::string& out, std::string_view name, std::string_view labels, uint64_t value) {
  sample_head(out, name, labels);
  append_u64(out, value);
  out += '\n';
}

void sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  sample_head(out, name, labels);
  append_double(out, value);
  out += '\n';
}

void label(std::string& out, std::string_view name, std::string_view value, bool first = false) {
  if (!first) out += ',';
  out += name;
  out += "=\"";
  append_label_value(out, value);
  out += '"';
}

// The ledger's device number: "-1" is pinned host memory (or an unknown device), as in the
// JSON API.
void device_value(std::string& out, int32_t device) {
  char buf[16];
  const auto r = std::to_chars(buf, buf + sizeof buf, device);
  out.append(buf, r.ptr);
}

}  // namespace

void append_label_value(std::string& out, std::string_view v) {
  size_t i = 0;
  while (i < v.size()) {
    // Runs of plain ASCII are copied at once: the common case (pids, comms, func names).
    size_t j = i;
    while (j < v.size()) {
      const unsigned char c = static_cast<unsigned char>(v[j]);
      if (c >= 0x80 || c == '\\' || c == '"' || c == '\n') break;
      ++j;
    }
    out.append(v.data() + i, j - i);
    if (j == v.size()) return;
    i = j;
    const char c = v[i];
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (c == '"') {
      out += "\\\"";
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (const size_t n = utf8_sequence(v, i); n > 0) {
      out.append(v.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that starts no valid sequence
      ++i;
    }
  }
}

// ---- process rows -------------------------------------------------------------------------

namespace {

// Per (process, device) and per (process, device, kind) figures, with their label text kept
// in one arena: every family is then one pass over plain rows.
struct Span {
  uint32_t off = 0, len = 0;
};
struct DeviceRow {
  Span labels;
  uint64_t peak = 0, allocs = 0, frees = 0, failed = 0, leaked = 0;
};
struct BookRow {
  Span labels;
  uint64_t live = 0;
};

// Processes that share one label set: the same pid and comm (a pid reused while the exited
// process is still shown), or everything beyond max_processes ("other").
struct Group {
  uint32_t pid = 0;
  std::string_view comm;
  size_t first = 0, count = 0;  // into the pid/comm-sorted process order
  uint64_t rank = 0;            // live + peak bytes
};

class Rows {
 public:
  Rows(const std::vector<DeviceInfo>& devices, size_t expected_rows) : devices_(devices) {
    labels_.reserve(expected_rows * 96);
    device_rows.reserve(expected_rows);
    book_rows.reserve(expected_rows * 2);
  }

  std::string_view text(Span s) const { return std::string_view(labels_).substr(s.off, s.len); }
  // Whether the process has series of its own (not summed into another label set).
  bool own_series(const ProcessView& p) const { return own_.count(&p) != 0; }

  // One process on its own: its rows straight from the view.
  void add(std::string_view pid, std::string_view comm, const ProcessView& p) {
    own_.insert(&p);
    head(pid, comm);
    for (const DeviceUsage& d : p.devices)
      device_rows.push_back({device_labels(d.device), d.peak_bytes, d.allocs, d.frees, d.failed, d.leaked_bytes});
    for (const BookView& b : p.books) book_rows.push_back({book_labels(b.device, b.kind), b.live_bytes});
  }

  // Several processes under one label set: summed per device and per (device, kind).
  void add_sum(std::string_view pid, std::string_view comm, const std::vector<const ProcessView*>& procs) {
    std::map<int32_t, DeviceRow> devs;
    std::map<std::pair<int32_t, MemKind>, uint64_t> books;
    for (const ProcessView* p : procs) {
      for (const DeviceUsage& d : p->devices) {
        DeviceRow& r = devs[d.device];
        r.peak += d.peak_bytes;
        r.allocs += d.allocs;
        r.frees += d.frees;
        r.failed += d.failed;
        r.leaked += d.leaked_bytes;
      }
      for (const BookView& b : p->books) books[{b.device, b.kind}] += b.live_bytes;
    }
    head(pid, comm);
    for (auto& [device, r] : devs) {
      r.labels = device_labels(device);
      device_rows.push_back(r);
    }
    for (const auto& [key, live] : books) book_rows.push_back({book_labels(key.first, key.second), live});
  }

  std::vector<DeviceRow> device_rows;
  std::vector<BookRow> book_rows;

 private:
  void head(std::string_view pid, std::string_view comm) {
    head_.clear();
    label(head_, "pid", pid, true);
    label(head_, "comm", comm);
  }

  std::string_view uuid(int32_t device) const {
    for (const DeviceInfo& d : devices_)
      if (d.ordinal == device) return d.uuid;
    return {};
  }

  Span device_labels(int32_t device) {
    const size_t off = labels_.size();
    labels_ += head_;
    labels_ += ",device=\"";
    device_value(labels_, device);
    labels_ += '"';
    label(labels_, "uuid", uuid(device));
    return {static_cast<uint32_t>(off), static_cast<uint32_t>(labels_.size() - off)};
  }

  Span book_labels(int32_t device, MemKind kind) {
    Span s = device_labels(device);
    labels_ += ",kind=\"";
    labels_ += to_string(kind);
    labels_ += '"';
    s.len = static_cast<uint32_t>(labels_.size() - s.off);
    return s;
  }

  const std::vector<DeviceInfo>& devices_;
  std::unordered_set<const ProcessView*> own_;
  std::string labels_;
  std::string head_;
};

// Groups in output order (pid, then comm), at most max_processes of them plus "other".
void build_rows(const Snapshot& snap, size_t max_processes, Rows& rows, size_t& folded) {
  std::vector<const ProcessView*> order;
  order.reserve(snap.processes.size());
  for (const ProcessView& p : snap.processes) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const ProcessView* a, const ProcessView* b) {
    return a->pid != b->pid ? a->pid < b->pid : a->comm < b->comm;
  });

  std::vector<Group> groups;
  groups.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const ProcessView& p = *order[i];
    if (!groups.empty() && groups.back().pid == p.pid && groups.back().comm == p.comm) {
      groups.back().count += 1;
    } else {
      groups.push_back({p.pid, p.comm, i, 1, 0});
    }
    groups.back().rank += p.live_bytes + p.peak_bytes;
  }

  std::vector<Group> rest;
  if (max_processes > 0 && groups.size() > max_processes) {
    const auto bigger = [](const Group& a, const Group& b) {
      if (a.rank != b.rank) return a.rank > b.rank;
      return a.pid != b.pid ? a.pid < b.pid : a.comm < b.comm;
    };
    std::nth_element(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(max_processes), groups.end(), bigger);
    rest.assign(groups.begin() + static_cast<std::ptrdiff_t>(max_processes), groups.end());
    groups.resize(max_processes);
    std::sort(groups.begin(), groups.end(),
              [](const Group& a, const Group& b) { return a.pid != b.pid ? a.pid < b.pid : a.comm < b.comm; });
  }

  char pid_text[16];
  std::vector<const ProcessView*> members;
  for (const Group& g : groups) {
    const auto r = std::to_chars(pid_text, pid_text + sizeof pid_text, g.pid);
    const std::string_view pid(pid_text, static_cast<size_t>(r.ptr - pid_text));
    if (g.count == 1) {
      rows.add(pid, g.comm, *order[g.first]);
    } else {
      members.assign(order.begin() + static_cast<std::ptrdiff_t>(g.first),
                     order.begin() + static_cast<std::ptrdiff_t>(g.first + g.count));
      rows.add_sum(pid, g.comm, members);
    }
  }
  folded = 0;
  if (!rest.empty()) {
    members.clear();
    for (const Group& g : rest)
      for (size_t i = g.first; i < g.first + g.count; ++i) members.push_back(order[i]);
    folded = members.size();
    rows.add_sum("other", "other", members);
  }
}

const std::vector<std::string>& le_labels() {
  static const std::vector<std::string> labels = [] {
    std::vector<std::string> v;
    for (unsigned k = kFirstLeLog2; k <= kLastLeLog2; ++k) {
      std::string s;
      append_double(s, std::ldexp(1.0, static_cast<int>(k)) / 1e9);
      v.push_back(std::move(s));
    }
    return v;
  }();
  return labels;
}

void histogram(std::string& out, const CallStats& c) {
  static constexpr std::string_view kName = "fakegpu_api_call_duration_seconds";
  std::string head;
  label(head, "func", c.func, true);
  const std::vector<std::string>& les = le_labels();
  uint64_t cumulative = 0;
  size_t next = 0;  // next ledger bucket to add
  for (unsigned k = kFirstLeLog2; k <= kLastLeLog2; ++k) {
    while (next < k) cumulative += c.buckets[next++];  // buckets 0..k-1 lie below 2^k ns
    out += kName;
    out += "_bucket{";
    out += head;
    out += ",le=\"";
    out += les[k - kFirstLeLog2];
    out += "\"} ";
    append_u64(out, cumulative);
    out += '\n';
  }
  while (next < kLatencyBuckets) cumulative += c.buckets[next++];
  // The histogram covers the timed calls (--latency-every). The kernel updates the count and
  // the buckets separately; a read between the two must not make +Inf disagree with _count.
  const uint64_t count = std::max(cumulative, c.timed);
  out += kName;
  out += "_bucket{";
  out += head;
  out += ",le=\"+Inf\"} ";
  append_u64(out, count);
  out += '\n';
  sample(out, std::string(kName) + "_sum", head, static_cast<double>(c.total_ns) / 1e9);
  sample(out, std::string(kName) + "_count", head, count);
}

// The analyses (core/analysis.h): forecasts and fragmentation per device, growth, risk and
// aged allocations per running process (the max_processes with the most memory; exited
// processes have none: their figures stopped at exit).
void analysis_families(std::string& out, const Analysis& a, const Snapshot& snap,
                       const std::vector<DeviceInfo>& devices, size_t max_processes) {
  std::string labels;
  const auto device_labels = [&](int32_t device) {
    labels.clear();
    labels += "device=\"";
    device_value(labels, device);
    labels += '"';
    std::string_view uuid;
    for (const DeviceInfo& i : devices)
      if (i.ordinal == device) uuid = i.uuid;
    label(labels, "uuid", uuid);
    return std::string_view(labels);
  };
  const auto device_family = [&](std::string_view name, std::string_view help, auto value) {
    bool any = false;
    for (const DeviceAnalysis& d : a.devices) {
      const std::optional<double> v = value(d);
      if (!v) continue;
      if (!any) family(out, name, "gauge", help);
      any = true;
      sample(out, name, device_labels(d.device), *v);
    }
  };
  device_family("fakegpu_device_memory_growth_bytes_per_second",
                "Growth of the memory in use on the device: least-squares slope over the --oom-window.",
                [](const DeviceAnalysis& d) { return std::optional<double>(d.forecast.trend.rate_bps); });
  device_family("fakegpu_device_oom_eta_seconds",
                "Forecast time until the device is full at its growth rate (+Inf: not filling up, or not confident).",
                [](const DeviceAnalysis& d) {
                  if (d.forecast.capacity == 0) return std::optional<double>();
                  return std::optional<double>(d.forecast.eta_s.value_or(INFINITY));
                });
  device_family("fakegpu_device_oom_risk",
                "OOM risk of the device: 0 low, 1 medium, 2 high, 3 critical (from --oom-threshold and the forecast).",
                [](const DeviceAnalysis& d) {
                  return d.forecast.risk ? std::optional<double>(static_cast<double>(*d.forecast.risk))
                                         : std::optional<double>();
                });
  device_family("fakegpu_device_oom_forecast_confidence",
                "Confidence of the device's growth forecast, 0 to 1 (R² weighted by the number of samples).",
                [](const DeviceAnalysis& d) { return std::optional<double>(d.forecast.trend.confidence); });
  device_family("fakegpu_device_fragmentation_ratio",
                "1 - largest free extent / free bytes of the device's most fragmented process address space.",
                [](const DeviceAnalysis& d) {
                  return d.fragmentation ? std::optional<double>(d.fragmentation->ratio) : std::optional<double>();
                });
  device_family("fakegpu_device_largest_free_extent_bytes",
                "Largest free extent of the device's most fragmented process address space.",
                [](const DeviceAnalysis& d) {
                  return d.fragmentation ? std::optional<double>(static_cast<double>(d.fragmentation->largest_free))
                                         : std::optional<double>();
                });

  // Running processes, the ones with the most memory first, one series each.
  std::vector<std::pair<const ProcessView*, const ProcessAnalysis*>> procs;
  for (const ProcessView& p : snap.processes) {
    const ProcessAnalysis* pa = p.exited ? nullptr : a.process(p.pid, p.start_ns);
    if (pa && !pa->exited) procs.emplace_back(&p, pa);
  }
  std::stable_sort(procs.begin(), procs.end(), [](const auto& x, const auto& y) {
    return x.first->live_bytes != y.first->live_bytes ? x.first->live_bytes > y.first->live_bytes
                                                      : x.first->pid < y.first->pid;
  });
  if (max_processes > 0 && procs.size() > max_processes) procs.resize(max_processes);
  std::sort(procs.begin(), procs.end(), [](const auto& x, const auto& y) { return x.first->pid < y.first->pid; });
  const auto process_family = [&](std::string_view name, std::string_view help, auto value) {
    bool any = false;
    for (const auto& [p, pa] : procs) {
      const std::optional<double> v = value(*pa);
      if (!v) continue;
      if (!any) family(out, name, "gauge", help);
      any = true;
      labels.clear();
      label(labels, "pid", std::to_string(p->pid), true);
      label(labels, "comm", p->comm);
      sample(out, name, labels, *v);
    }
  };
  process_family("fakegpu_process_memory_growth_bytes_per_minute",
                 "Growth of a running process's GPU memory: least-squares slope over the --oom-window.",
                 [](const ProcessAnalysis& p) { return std::optional<double>(p.growth_bytes_per_min); });
  process_family("fakegpu_process_memory_growing",
                 "1 when a running process's GPU memory grows at --leak-rate or faster (confidently), else 0.",
                 [](const ProcessAnalysis& p) { return std::optional<double>(p.growing ? 1.0 : 0.0); });
  process_family("fakegpu_process_oom_risk", "OOM risk of a running process: 0 low, 1 medium, 2 high, 3 critical.",
                 [](const ProcessAnalysis& p) {
                   return p.risk ? std::optional<double>(static_cast<double>(*p.risk)) : std::optional<double>();
                 });
  process_family(
      "fakegpu_process_aged_allocations", "--leak-age: allocations a running process holds that are at least that old.",
      [](const ProcessAnalysis& p) {
        return p.aged_listed ? std::optional<double>(static_cast<double>(p.aged_count)) : std::optional<double>();
      });
  process_family("fakegpu_process_aged_bytes", "--leak-age: bytes of the allocations at least that old.",
                 [](const ProcessAnalysis& p) {
                   return p.aged_listed ? std::optional<double>(static_cast<double>(p.aged_bytes))
                                        : std::optional<double>();
                 });
}

}  // namespace

// ---- the page -----------------------------------------------------------------------------

std::string render_metrics(const Snapshot& snap, const std::vector<DeviceInfo>& devices, const MetricsOptions& opts) {
  size_t device_rows = 0, book_rows = 0;
  for (const ProcessView& p : snap.processes) {
    device_rows += p.devices.size();
    book_rows += p.books.size();
  }
  Rows rows(devices, device_rows + 1);
  size_t folded = 0;
  build_rows(snap, opts.max_processes, rows, folded);

  std::string out;
  // About 130 bytes a process sample (name, labels, value), plus the fixed families.
  out.reserve((rows.device_rows.size() * 5 + rows.book_rows.size()) * 130 + snap.calls.size() * 2600 + 8192);

  // Per process.
  if (!rows.book_rows.empty()) {
    family(out, "fakegpu_process_memory_bytes", "gauge",
           "Memory a traced process holds now, by device and kind (0 once it exited).");
    for (const BookRow& r : rows.book_rows) sample(out, "fakegpu_process_memory_bytes", rows.text(r.labels), r.live);
  }
  const auto per_device = [&](std::string_view name, std::string_view type, std::string_view help,
                              uint64_t DeviceRow::*field) {
    if (rows.device_rows.empty()) return;
    family(out, name, type, help);
    for (const DeviceRow& r : rows.device_rows) sample(out, name, rows.text(r.labels), r.*field);
  };
  per_device("fakegpu_process_peak_memory_bytes", "gauge",
             "High-water mark of a process's memory on a device since tracing began (all kinds).", &DeviceRow::peak);
  per_device("fakegpu_process_allocations_total", "counter", "Successful allocations by a process on a device.",
             &DeviceRow::allocs);
  per_device("fakegpu_process_frees_total", "counter", "Successful explicit frees by a process on a device.",
             &DeviceRow::frees);
  per_device("fakegpu_process_failed_calls_total", "counter",
             "Allocation and free calls of a process that returned an error.", &DeviceRow::failed);
  per_device("fakegpu_process_leaked_bytes", "gauge",
             "Memory a process still held when it exited (or exec'd): its leak report.", &DeviceRow::leaked);
  // Series per process and item of a list (the most launched kernels, the calling objects),
  // each process that has its own series, the first `listed` items: their names are unbounded,
  // so only these. `item(p)` is the list; `fill(labels, item)` adds the item's label.
  std::string item_labels;
  auto per_item = [&](std::string_view name, std::string_view type, std::string_view help, auto&& list, size_t listed,
                      auto&& fill, auto&& value) {
    bool head = false;
    for (const ProcessView& p : snap.processes) {
      const auto& items = list(p);
      if (items.empty() || !rows.own_series(p)) continue;
      if (!head) {
        family(out, name, type, help);
        head = true;
      }
      for (size_t i = 0; i < items.size() && i < listed; ++i) {
        item_labels.clear();
        label(item_labels, "pid", std::to_string(p.pid), true);
        label(item_labels, "comm", p.comm);
        fill(item_labels, items[i]);
        sample(out, name, item_labels, value(items[i]));
      }
    }
  };
  const auto kernels = [](const ProcessView& p) -> const auto& { return p.kernels; };
  const auto kernel = [](std::string& l, const KernelStats& k) { label(l, "kernel", k.name); };
  per_item("fakegpu_process_kernel_launches_total", "counter",
           "Launches of a kernel by a process (its most launched kernels; USDT mode).", kernels, kKernelsListed, kernel,
           [](const KernelStats& k) { return k.launches; });
  per_item("fakegpu_process_kernel_runs_total", "counter",
           "Launches of a kernel by a process that the fake GPU executed on the host CPU.", kernels, kKernelsListed,
           kernel, [](const KernelStats& k) { return k.ran; });
  per_item("fakegpu_process_kernel_recorded_total", "counter",
           "Launches of a kernel by a process that were recorded, not run (FAKEGPU_KERNELS=record, or a kernel the "
           "fake cannot run).",
           kernels, kKernelsListed, kernel, [](const KernelStats& k) { return k.recorded; });
  per_item("fakegpu_process_kernel_host_seconds_total", "counter",
           "Host CPU time of a kernel's executed launches by a process (mean: divided by the runs).", kernels,
           kKernelsListed, kernel, [](const KernelStats& k) { return static_cast<double>(k.host_ns) / 1e9; });
  // Per-library attribution: a process's calls by calling object (the file holding the call's
  // return address), most calls first.
  const auto callers = [](const ProcessView& p) -> const auto& { return p.callers; };
  const auto object = [](std::string& l, const CallerStats& c) { label(l, "object", c.object); };
  per_item("fakegpu_process_caller_calls_total", "counter",
           "API calls a process made from one shared object or its program (per-library attribution).", callers,
           kCallersListed, object, [](const CallerStats& c) { return c.calls; });
  per_item("fakegpu_process_caller_errors_total", "counter",
           "API calls from one object of a process that returned an error.", callers, kCallersListed, object,
           [](const CallerStats& c) { return c.errors; });
  per_item("fakegpu_process_caller_alloc_bytes_total", "counter",
           "Bytes the allocation calls from one object of a process got.", callers, kCallersListed, object,
           [](const CallerStats& c) { return c.alloc_bytes; });
  per_item("fakegpu_process_caller_free_bytes_total", "counter",
           "Bytes the free calls from one object of a process released.", callers, kCallersListed, object,
           [](const CallerStats& c) { return c.free_bytes; });
  per_item("fakegpu_process_caller_timed_calls_total", "counter",
           "Calls from one object of a process that were timed (entry/return probes, one in --latency-every).", callers,
           kCallersListed, object, [](const CallerStats& c) { return c.timed; });
  per_item("fakegpu_process_caller_timed_seconds_total", "counter",
           "Time in the timed calls from one object of a process (mean: divided by the timed calls).", callers,
           kCallersListed, object, [](const CallerStats& c) { return static_cast<double>(c.timed_ns) / 1e9; });

  // Per device, as the system reports it, then as traced.
  if (!devices.empty()) {
    std::string labels;
    const auto device_family = [&](std::string_view name, std::string_view help, auto value) {
      family(out, name, "gauge", help);
      for (const DeviceInfo& d : devices) {
        labels.clear();
        label(labels, "device", std::to_string(d.ordinal), true);
        label(labels, "uuid", d.uuid);
        label(labels, "name", d.name);
        sample(out, name, labels, value(d));
      }
    };
    device_family("fakegpu_device_memory_total_bytes", "Memory of the device.",
                  [](const DeviceInfo& d) { return d.total; });
    device_family("fakegpu_device_memory_used_bytes", "Memory in use on the device, by all processes.",
                  [](const DeviceInfo& d) { return d.used; });
    device_family("fakegpu_device_memory_free_bytes", "Memory free on the device.",
                  [](const DeviceInfo& d) { return d.total > d.used ? d.total - d.used : uint64_t{0}; });
  }
  if (!snap.devices.empty()) {
    std::string labels;
    const auto traced_family = [&](std::string_view name, std::string_view help, uint64_t DeviceUsage::*field) {
      family(out, name, "gauge", help);
      for (const DeviceUsage& d : snap.devices) {
        labels.clear();
        labels += "device=\"";
        device_value(labels, d.device);
        labels += '"';
        std::string_view uuid;
        for (const DeviceInfo& i : devices)
          if (i.ordinal == d.device) uuid = i.uuid;
        label(labels, "uuid", uuid);
        sample(out, name, labels, d.*field);
      }
    };
    traced_family("fakegpu_device_traced_memory_bytes",
                  "Memory the traced processes hold now on the device (device=\"-1\": pinned host memory).",
                  &DeviceUsage::live_bytes);
    traced_family("fakegpu_device_traced_peak_memory_bytes",
                  "High-water mark of the traced processes' memory on the device since tracing began.",
                  &DeviceUsage::peak_bytes);
  }

  if (snap.analysis) analysis_families(out, *snap.analysis, snap, devices, opts.max_processes);

  // Per API function, all processes in the snapshot.
  if (!snap.calls.empty()) {
    std::string labels;
    const auto call_family = [&](std::string_view name, std::string_view help, uint64_t CallStats::*field) {
      family(out, name, "counter", help);
      for (const CallStats& c : snap.calls) {
        labels.clear();
        label(labels, "func", c.func, true);
        sample(out, name, labels, c.*field);
      }
    };
    call_family("fakegpu_api_calls_total", "Calls of a traced CUDA API function.", &CallStats::calls);
    call_family("fakegpu_api_errors_total", "Calls of a traced CUDA API function that returned an error.",
                &CallStats::errors);
    family(out, "fakegpu_api_call_duration_seconds", "histogram",
           "Latency of traced CUDA API calls (log2 buckets, 1.024us to 8.6s).");
    for (const CallStats& c : snap.calls) histogram(out, c);
  }

  family(out, "fakegpu_copy_bytes_total", "counter", "Bytes copied by cudaMemcpy-family calls, by direction.");
  for (size_t i = 0; i < kCopyDirections; ++i)
    sample(out, "fakegpu_copy_bytes_total",
           std::string("direction=\"") + to_string(static_cast<CopyDirection>(i)) + "\"", snap.copies[i].bytes);
  family(out, "fakegpu_copies_total", "counter", "cudaMemcpy-family calls, by direction.");
  for (size_t i = 0; i < kCopyDirections; ++i)
    sample(out, "fakegpu_copies_total", std::string("direction=\"") + to_string(static_cast<CopyDirection>(i)) + "\"",
           snap.copies[i].count);
  family(out, "fakegpu_kernel_launches_total", "counter", "Kernel launches by the traced processes.");
  sample(out, "fakegpu_kernel_launches_total", {}, snap.launches);
  family(out, "fakegpu_kernel_runs_total", "counter",
         "Kernel launches of the traced processes executed on the host CPU (USDT mode).");
  sample(out, "fakegpu_kernel_runs_total", {}, snap.kernel_runs);
  family(out, "fakegpu_kernel_recorded_total", "counter",
         "Kernel launches of the traced processes recorded, not run (USDT mode).");
  sample(out, "fakegpu_kernel_recorded_total", {}, snap.kernel_recorded);
  family(out, "fakegpu_kernel_host_seconds_total", "counter",
         "Host CPU time of the traced processes' executed kernel launches (USDT mode).");
  sample(out, "fakegpu_kernel_host_seconds_total", {}, static_cast<double>(snap.kernel_host_ns) / 1e9);

  // The collector's own health.
  const Health& h = snap.health;
  const auto counter = [&](std::string_view name, std::string_view help, uint64_t v) {
    family(out, name, "counter", help);
    sample(out, name, {}, v);
  };
  counter("fakegpu_collector_events_total", "Events the BPF programs emitted.", h.events);
  counter("fakegpu_collector_ringbuf_drops_total", "Events lost because the ring buffer was full.", h.rb_drops);
  counter("fakegpu_collector_missing_entry_total", "Return probes that found no entry record (an event lost).",
          h.missing_entry);
  counter("fakegpu_collector_unmatched_frees_total", "Frees of pointers the kernel never saw allocated.",
          h.unmatched_free);
  counter("fakegpu_collector_alloc_map_full_total",
          "Allocations, books or call counters the kernel could not store because its table was full.",
          h.alloc_map_full);
  counter("fakegpu_collector_stacks_lost_total",
          "--stacks: allocations whose user stack the kernel could not store (booked, without a stack).",
          h.stacks_lost);

  std::map<std::string, uint64_t, std::less<>> modes{{"uprobe", 0}, {"usdt", 0}};
  for (const TracedLibrary& l : h.libraries) modes[l.mode] += 1;
  family(out, "fakegpu_collector_attached_libraries", "gauge", "CUDA libraries attached, by probe mode.");
  for (const auto& [mode, n] : modes) {
    std::string labels;
    label(labels, "mode", mode, true);
    sample(out, "fakegpu_collector_attached_libraries", labels, n);
  }

  uint64_t running = 0, exited = 0;
  for (const ProcessView& p : snap.processes) (p.exited ? exited : running) += 1;
  family(out, "fakegpu_collector_tracked_processes", "gauge",
         "Processes in the books (exited ones until their time to live runs out).");
  sample(out, "fakegpu_collector_tracked_processes", "state=\"running\"", running);
  sample(out, "fakegpu_collector_tracked_processes", "state=\"exited\"", exited);
  family(out, "fakegpu_collector_folded_processes", "gauge",
         "Processes summed into pid=\"other\" beyond the per-process series limit.");
  sample(out, "fakegpu_collector_folded_processes", {}, static_cast<uint64_t>(folded));

  if (opts.scrape_duration_s >= 0) {
    family(out, "fakegpu_collector_scrape_duration_seconds", "gauge", "Time the previous /metrics render took.");
    sample(out, "fakegpu_collector_scrape_duration_seconds", {}, opts.scrape_duration_s);
  }
  if (opts.server) {
    // The HTTP server's own health: what hostile or broken clients cost it.
    const ServerStats& st = *opts.server;
    counter("fakegpu_http_connections_accepted_total", "Connections the HTTP server accepted.",
            st.connections_accepted);
    counter("fakegpu_http_connections_rejected_total",
            "Connections turned away with 503: no room, and every open connection was being answered.",
            st.connections_rejected);
    counter("fakegpu_http_connections_evicted_total",
            "Connections waiting for a request that were closed to make room for a new one.", st.connections_evicted);
    family(out, "fakegpu_http_connections_open", "gauge", "Connections open now, event streams included.");
    sample(out, "fakegpu_http_connections_open", {}, st.connections_open);
    family(out, "fakegpu_http_streams_open", "gauge", "Event streams (/api/v1/stream) open now.");
    sample(out, "fakegpu_http_streams_open", {}, st.streams_open);
    counter("fakegpu_http_streams_rejected_total", "Event stream requests turned away with 503 (too many streams).",
            st.streams_rejected);
    counter("fakegpu_http_streams_gone_total", "Event stream readers that went away.", st.streams_gone);
    counter("fakegpu_http_requests_total", "Requests received whole.", st.requests);
    counter("fakegpu_http_bad_requests_total", "Requests refused as malformed or too large (400, 413, 431).",
            st.bad_requests);
    counter("fakegpu_http_request_timeouts_total",
            "Connections closed because a request begun did not arrive whole in time.", st.timeouts);
    counter("fakegpu_http_idle_closed_total", "Connections closed after sitting idle, with no request begun.",
            st.idle_closed);
    counter("fakegpu_http_stream_frames_dropped_total", "Events a slow stream reader never got (older ones dropped).",
            st.stream_frames_dropped);
  }
  family(out, "fakegpu_build_info", "gauge", "Always 1; the version of fakegpu-trace in a label.");
  std::string labels;
  label(labels, "version", opts.version.empty() ? build_version() : std::string_view(opts.version), true);
  sample(out, "fakegpu_build_info", labels, uint64_t{1});
  return out;
}

}  // namespace fgtrace::server
