// SPDX-License-Identifier: Apache-2.0
#include "ledger.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

namespace fgtrace {

namespace {

uint64_t sat_sub(uint64_t a, uint64_t b) noexcept { return a > b ? a - b : 0; }

std::vector<StackUsage> sorted_stacks(const std::unordered_map<uint32_t, StackUsage>& m) {
  std::vector<StackUsage> v;
  v.reserve(m.size());
  for (const auto& [id, s] : m) v.push_back(s);
  std::sort(v.begin(), v.end(), [](const StackUsage& a, const StackUsage& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.allocs != b.allocs) return a.allocs > b.allocs;
    return a.stack_id < b.stack_id;
  });
  return v;
}

void stack_add(std::unordered_map<uint32_t, StackUsage>& m, uint32_t id, uint64_t bytes) {
  StackUsage& s = m[id];
  s.stack_id = id;
  s.bytes += bytes;
  s.allocs += 1;
}

void stack_sub(std::unordered_map<uint32_t, StackUsage>& m, uint32_t id, uint64_t bytes) {
  auto it = m.find(id);
  if (it == m.end()) return;
  it->second.bytes = sat_sub(it->second.bytes, bytes);
  it->second.allocs = sat_sub(it->second.allocs, 1);
  if (it->second.allocs == 0) m.erase(it);
}

}  // namespace

// ---- counters ---------------------------------------------------------------------------

size_t latency_bucket(uint64_t ns) noexcept { return ns < 2 ? 0 : static_cast<size_t>(std::bit_width(ns) - 1); }

void CallStats::add(uint64_t latency_ns, bool ok) noexcept {
  calls += 1;
  errors += ok ? 0 : 1;
  timed += 1;
  total_ns += latency_ns;
  max_ns = std::max(max_ns, latency_ns);
  buckets[latency_bucket(latency_ns)] += 1;
}

void CallStats::merge(const CallStats& o) noexcept {
  calls += o.calls;
  errors += o.errors;
  timed += o.timed;
  total_ns += o.total_ns;
  max_ns = std::max(max_ns, o.max_ns);
  for (size_t i = 0; i < kLatencyBuckets; ++i) buckets[i] += o.buckets[i];
}

const char* to_string(CopyDirection d) noexcept {
  switch (d) {
    case CopyDirection::HtoH: return "HtoH";
    case CopyDirection::HtoD: return "HtoD";
    case CopyDirection::DtoH: return "DtoH";
    case CopyDirection::DtoD: return "DtoD";
    case CopyDirection::Default: return "Default";
  }
  return "unknown";
}

bool Snapshot::any_since_attach() const noexcept {
  return std::any_of(processes.begin(), processes.end(), [](const ProcessView& p) { return p.since_attach; });
}

// ---- processes --------------------------------------------------------------------------

AllocationLedger::Proc& AllocationLedger::create(uint32_t pid, bool since_attach) {
  Proc& p = running_[pid];
  p = Proc{};
  p.pid = pid;
  p.since_attach = since_attach;
  return p;
}

AllocationLedger::Proc& AllocationLedger::running_for(const Event& ev) {
  Proc* p = last_proc_;
  if (p == nullptr || p->pid != ev.pid) {
    if (auto it = running_.find(ev.pid); it != running_.end()) {
      p = &it->second;
    } else {
      // Not seen starting (fork) nor announced by the collector: it was already running.
      p = &create(ev.pid, /*since_attach=*/true);
      p->start_ns = ev.ts_ns;
    }
    last_proc_ = p;
  }
  // Threads may carry their own names: only the thread-group leader's comm names the process,
  // unless we have none yet.
  if (!ev.comm.empty() && (ev.tid == ev.pid || p->comm.empty())) p->comm = ev.comm;
  return *p;
}

AllocationLedger::Proc& AllocationLedger::for_counters(uint32_t pid) {
  if (auto it = running_.find(pid); it != running_.end()) return it->second;
  // Counters the collector reads after the exit event still belong to the process that exited.
  for (auto it = exited_.rbegin(); it != exited_.rend(); ++it)
    if (it->pid == pid) return *it;
  return create(pid, /*since_attach=*/true);
}

void AllocationLedger::track_process(uint32_t pid, std::string_view comm, uint32_t ppid, uint64_t start_ns,
                                     bool running_before_attach) {
  auto it = running_.find(pid);
  Proc& p = it != running_.end() ? it->second : create(pid, running_before_attach);
  if (!comm.empty()) p.comm = std::string(comm);
  p.ppid = ppid;
  p.start_ns = start_ns;
  // The collector knows (it started the process, or found it running); a baseline already set
  // means it was running.
  p.since_attach = running_before_attach || p.baseline_known;
}

void AllocationLedger::set_baseline(uint32_t pid, int32_t device, MemKind kind, uint64_t bytes) {
  auto it = running_.find(pid);
  Proc& p = it != running_.end() ? it->second : create(pid, true);
  p.since_attach = true;
  p.baseline_known = true;
  Book& b = book(p, device, kind);
  // Setting it again replaces the earlier baseline (what is left of it).
  sub_live(p, b, b.v.baseline_left);
  b.v.baseline_bytes = bytes;
  b.v.baseline_left = bytes;
  add_live(p, b, bytes);
}

void AllocationLedger::mark_baseline_known(uint32_t pid) {
  auto it = running_.find(pid);
  Proc& p = it != running_.end() ? it->second : create(pid, true);
  p.since_attach = true;
  p.baseline_known = true;
}

void AllocationLedger::process_exited(uint32_t pid, uint64_t ts_ns) {
  if (running_.count(pid) == 0) return;
  counters_.exits_without_event += 1;
  finish(pid, ts_ns, /*from_event=*/false);
}

// ---- books ------------------------------------------------------------------------------

AllocationLedger::Book& AllocationLedger::book(Proc& p, int32_t device, MemKind kind) {
  // The index in p.direct, or past its end for a device or kind it does not cover.
  const uint32_t d = static_cast<uint32_t>(device) + 1u;  // device -1 is index 0
  const uint32_t k = kind == MemKind::Unknown ? kDirectKinds - 1 : static_cast<uint32_t>(kind);
  const size_t slot = d < kDirectDevices && k < kDirectKinds ? d * kDirectKinds + k : p.direct.size();
  if (slot < p.direct.size() && p.direct[slot] != nullptr) return *p.direct[slot];
  auto [it, fresh] = p.books.try_emplace(BookKey{device, kind});
  Book& b = it->second;
  if (fresh) {
    b.v.device = device;
    b.v.kind = kind;
    b.proc_level = &p.devices[device];
    b.system_level = &devices_[device];
  }
  if (slot < p.direct.size()) p.direct[slot] = &b;
  return b;
}

void AllocationLedger::add_live(Proc& p, Book& b, uint64_t bytes) {
  auto raise = [bytes](uint64_t& live, uint64_t& peak) {
    live += bytes;
    peak = std::max(peak, live);
  };
  raise(b.v.live_bytes, b.v.peak_bytes);
  raise(b.proc_level->live, b.proc_level->peak);
  raise(b.system_level->live, b.system_level->peak);
  if (b.v.device >= 0) {
    raise(p.gpu.live, p.gpu.peak);
    raise(gpu_.live, gpu_.peak);
  }
  if (observer_) observer_->level(last_event_ns_, p.pid, b.v.device, b.proc_level->live, b.system_level->live);
}

void AllocationLedger::sub_live(Proc& p, Book& b, uint64_t bytes) {
  b.v.live_bytes = sat_sub(b.v.live_bytes, bytes);
  b.proc_level->live = sat_sub(b.proc_level->live, bytes);
  b.system_level->live = sat_sub(b.system_level->live, bytes);
  if (b.v.device >= 0) {
    p.gpu.live = sat_sub(p.gpu.live, bytes);
    gpu_.live = sat_sub(gpu_.live, bytes);
  }
  if (observer_) observer_->level(last_event_ns_, p.pid, b.v.device, b.proc_level->live, b.system_level->live);
}

// ---- events -----------------------------------------------------------------------------

bool AllocationLedger::consume(const void* data, size_t size) {
  std::optional<Event> ev = decode(data, size);
  if (!ev) {
    counters_.bad_records += 1;
    return false;
  }
  apply(*ev);
  return true;
}

bool AllocationLedger::consume(const fg_event& raw) {
  if (!decode_into(raw, scratch_)) {
    counters_.bad_records += 1;
    return false;
  }
  apply(scratch_);
  return true;
}

void AllocationLedger::apply(const Event& ev) {
  counters_.events += 1;
  last_event_ns_ = std::max(last_event_ns_, ev.ts_ns);
  switch (ev.type) {
    case EventType::Alloc:
      if (ev.status != 0) {
        if (observer_) observer_->alloc_failed(ev.ts_ns, ev.pid, ev.device, ev.size, ev.status);
        book(running_for(ev), ev.device, ev.kind).v.failed += 1;
        break;
      }
      on_alloc(ev);
      break;
    case EventType::AllocFail:
      if (observer_) observer_->alloc_failed(ev.ts_ns, ev.pid, ev.device, ev.size, ev.status);
      [[fallthrough]];
    case EventType::FreeFail: book(running_for(ev), ev.device, ev.kind).v.failed += 1; break;
    case EventType::Free:
      if (ev.status != 0) {
        book(running_for(ev), ev.device, ev.kind).v.failed += 1;
        break;
      }
      on_free(ev, /*implicit=*/false);
      break;
    case EventType::ImplicitFree: on_free(ev, /*implicit=*/true); break;
    case EventType::CtxSwitch: running_for(ev); break;
    case EventType::ProcExit:
      if (running_.count(ev.pid) != 0) finish(ev.pid, ev.ts_ns, /*from_event=*/true);
      break;
    case EventType::ProcFork: {
      Proc& parent = running_for(ev);
      const uint32_t child_pid = ev.child_pid.value_or(0);
      if (child_pid == 0 || child_pid == ev.pid) break;
      const std::string comm = parent.comm;  // create() may rehash running_: copy first
      auto it = running_.find(child_pid);
      Proc& child = it != running_.end() ? it->second : create(child_pid, /*since_attach=*/false);
      if (it == running_.end()) {
        child.comm = comm;
        child.start_ns = ev.ts_ns;
      }
      child.ppid = ev.pid;
      break;
    }
    case EventType::ProcExec: {
      Proc& p = running_for(ev);
      if (!ev.comm.empty()) p.comm = ev.comm;  // the new image's name
      leak_everything(p);
      break;
    }
  }
}

void AllocationLedger::on_alloc(const Event& ev) {
  Proc& p = running_for(ev);
  Book& b = book(p, ev.device, ev.kind);
  b.v.allocs += 1;
  b.v.alloc_bytes += ev.size;
  if (ev.ptr == 0) return;  // a 0-byte allocation returns NULL: nothing to free later
  auto [it, fresh] = p.outstanding.try_emplace(ev.ptr);
  Allocation& a = it.value();  // tsl::robin_map: it->second is const
  if (!fresh) {
    // The same address again while the books still hold it: its free was lost.
    counters_.duplicate_allocs += 1;
    sub_live(p, *a.book, a.size);
    a.book->v.outstanding -= 1;
    if (a.stack_id) stack_sub(p.outstanding_stacks, *a.stack_id, a.size);
  }
  // Filled in place: a copy built on the stack costs more than the fields.
  a.size = ev.size;
  a.book = &b;
  a.ts_ns = ev.ts_ns;
  a.api = ev.api;
  a.stack_id = ev.stack_id;
  b.v.outstanding += 1;
  add_live(p, b, ev.size);
  if (ev.stack_id) stack_add(p.outstanding_stacks, *ev.stack_id, ev.size);
}

void AllocationLedger::on_free(const Event& ev, bool implicit) {
  if (ev.ptr == 0 && !implicit) return;  // cudaFree(NULL): a no-op by definition
  Proc& p = running_for(ev);
  const bool leak = implicit && ev.reason == ImplicitReason::ProcessExit;

  uint64_t size = ev.size;
  std::optional<uint32_t> stack_id;
  Book* b;
  if (auto it = p.outstanding.find(ev.ptr); it != p.outstanding.end()) {
    // The allocation's own device and kind: the free may come from another current device.
    b = it->second.book;
    size = it->second.size;
    stack_id = it->second.stack_id;
    p.outstanding.erase(it);
    b->v.outstanding -= 1;
    sub_live(p, *b, size);
    if (stack_id) stack_sub(p.outstanding_stacks, *stack_id, size);
  } else {
    b = &book(p, ev.device, ev.kind);
    if (p.since_attach) {
      // Allocated before we attached: lowers what is left of the baseline, never below 0.
      counters_.pre_attach_frees += 1;
      const uint64_t take = std::min(size, b->v.baseline_left);
      b->v.baseline_left -= take;
      sub_live(p, *b, take);
    } else {
      counters_.unmatched_frees += 1;
      b->v.unmatched_frees += 1;
    }
  }
  BookView& v = b->v;
  if (leak) {
    v.leaked_bytes += size;
    v.leaked_allocs += 1;
    if (stack_id) stack_add(p.leaked_stacks, *stack_id, size);
  } else if (implicit) {
    v.implicit_frees += 1;
    v.implicit_freed_bytes += size;
  } else {
    v.frees += 1;
    v.freed_bytes += size;
  }
}

void AllocationLedger::leak_everything(Proc& p) {
  for (const auto& [ptr, a] : p.outstanding) {
    BookView& v = a.book->v;
    v.leaked_bytes += a.size;
    v.leaked_allocs += 1;
    v.outstanding -= 1;
    sub_live(p, *a.book, a.size);
    if (a.stack_id) stack_add(p.leaked_stacks, *a.stack_id, a.size);
  }
  p.outstanding.clear();
  p.outstanding_stacks.clear();
  for (auto& [key, b] : p.books) {
    if (b.v.baseline_left == 0) continue;
    // Held since before attach and never freed: leaked bytes without an allocation count.
    const uint64_t left = b.v.baseline_left;
    b.v.leaked_bytes += left;
    b.v.baseline_left = 0;
    sub_live(p, b, left);
  }
}

void AllocationLedger::finish(uint32_t pid, uint64_t ts_ns, bool from_event) {
  auto it = running_.find(pid);
  if (it == running_.end()) return;
  last_proc_ = nullptr;  // the record moves to exited_
  Proc& p = it->second;
  leak_everything(p);
  p.exited = true;
  p.exit_event_seen = from_event;
  p.exit_ns = ts_ns;
  exited_.push_back(std::move(p));
  running_.erase(it);
}

// ---- collector counters -----------------------------------------------------------------

void AllocationLedger::record_call(uint32_t pid, std::string_view func, uint64_t latency_ns, bool ok) {
  Proc& p = for_counters(pid);
  auto it = p.calls.find(func);
  if (it == p.calls.end()) {
    it = p.calls.emplace(std::string(func), CallStats{}).first;
    it->second.func = std::string(func);
  }
  it->second.add(latency_ns, ok);
}

void AllocationLedger::record_copy(uint32_t pid, CopyDirection dir, uint64_t bytes) {
  const size_t i = static_cast<size_t>(dir);
  if (i >= kCopyDirections) return;
  CopyStats& c = for_counters(pid).copies[i];
  c.bytes += bytes;
  c.count += 1;
}

void AllocationLedger::record_launch(uint32_t pid, uint64_t count) { for_counters(pid).launches += count; }

void AllocationLedger::set_call_totals(uint32_t pid, const CallStats& totals) {
  Proc& p = for_counters(pid);
  p.calls[totals.func] = totals;
}

void AllocationLedger::set_copy_totals(uint32_t pid, CopyDirection dir, uint64_t bytes, uint64_t count) {
  const size_t i = static_cast<size_t>(dir);
  if (i >= kCopyDirections) return;
  CopyStats& c = for_counters(pid).copies[i];
  c.bytes = bytes;
  c.count = count;
}

void AllocationLedger::set_launch_totals(uint32_t pid, uint64_t count) { for_counters(pid).launches = count; }

void KernelStats::merge(const KernelStats& other) noexcept {
  launches += other.launches;
  ran += other.ran;
  recorded += other.recorded;
  host_ns += other.host_ns;
}

KernelStats kernel_stats(const fg_kernel_val& v) {
  KernelStats k;
  k.name.assign(v.name, strnlen(v.name, sizeof v.name));
  k.launches = v.launches;
  k.ran = v.ran;
  k.recorded = v.recorded;
  k.host_ns = v.host_ns;
  return k;
}

void AllocationLedger::set_kernel_totals(uint32_t pid, std::vector<KernelStats> kernels) {
  std::sort(kernels.begin(), kernels.end(), [](const KernelStats& a, const KernelStats& b) { return a.name < b.name; });
  std::vector<KernelStats> merged;
  for (KernelStats& k : kernels) {
    if (!merged.empty() && merged.back().name == k.name)
      merged.back().merge(k);
    else
      merged.push_back(std::move(k));
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const KernelStats& a, const KernelStats& b) { return a.launches > b.launches; });
  for_counters(pid).kernels = std::move(merged);
}

uint64_t CallerStats::time_ns() const noexcept {
  if (timed == 0) return 0;
  return static_cast<uint64_t>(static_cast<unsigned __int128>(timed_ns) * probed / timed);
}

void CallerStats::merge(const CallerStats& o) noexcept {
  calls += o.calls;
  errors += o.errors;
  alloc_bytes += o.alloc_bytes;
  free_bytes += o.free_bytes;
  probed += o.probed;
  timed += o.timed;
  timed_ns += o.timed_ns;
}

void AllocationLedger::set_caller_totals(uint32_t pid, std::vector<CallerStats> callers) {
  std::sort(callers.begin(), callers.end(),
            [](const CallerStats& a, const CallerStats& b) { return a.object < b.object; });
  std::vector<CallerStats> merged;
  for (CallerStats& l : callers) {
    if (merged.empty() || merged.back().object != l.object)
      merged.push_back(std::move(l));
    else
      merged.back().merge(l);
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const CallerStats& a, const CallerStats& b) { return a.calls > b.calls; });
  for_counters(pid).callers = std::move(merged);
}

void AllocationLedger::set_kernel_books(uint32_t pid, std::vector<KernelBookView> books) {
  std::sort(books.begin(), books.end(), [](const KernelBookView& a, const KernelBookView& b) {
    return a.device != b.device ? a.device < b.device : a.kind < b.kind;
  });
  for_counters(pid).kernel_books = std::move(books);
}

void AllocationLedger::set_health(const Health& health) { health_ = health; }

bool AllocationLedger::knows(uint32_t pid) const noexcept {
  return running_.count(pid) != 0 ||
         std::any_of(exited_.begin(), exited_.end(), [pid](const Proc& p) { return p.pid == pid; });
}

void AllocationLedger::mark_since_attach(uint32_t pid) noexcept {
  Proc* p = nullptr;
  if (auto it = running_.find(pid); it != running_.end()) {
    p = &it->second;
  } else {
    for (auto it = exited_.rbegin(); it != exited_.rend() && !p; ++it)
      if (it->pid == pid) p = &*it;
  }
  if (p == nullptr) return;
  p->since_attach = true;
  // Frees of pointers it allocated before then were taken as unmatched: they are pre-attach.
  for (auto& [key, b] : p->books) {
    counters_.unmatched_frees -= std::min(counters_.unmatched_frees, b.v.unmatched_frees);
    counters_.pre_attach_frees += b.v.unmatched_frees;
    b.v.unmatched_frees = 0;
  }
}

std::vector<uint32_t> AllocationLedger::running_pids() const {
  std::vector<uint32_t> pids;
  pids.reserve(running_.size());
  for (const auto& [pid, p] : running_) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

// ---- views ------------------------------------------------------------------------------

namespace {

// Adds the counts a book, a device's figures and a process's all carry (ledger.h): calls
// and frees, failed calls, leaks.
template <class To, class From>
void add_counts(To& to, const From& from) {
  to.allocs += from.allocs;
  to.frees += from.frees;
  to.failed += from.failed;
  to.leaked_bytes += from.leaked_bytes;
  to.leaked_allocs += from.leaked_allocs;
}

}  // namespace

ProcessView AllocationLedger::view(const Proc& p) const {
  ProcessView v;
  v.pid = p.pid;
  v.ppid = p.ppid;
  v.comm = p.comm;
  v.start_ns = p.start_ns;
  v.exit_ns = p.exit_ns;
  v.exited = p.exited;
  v.exit_event_seen = p.exit_event_seen;
  v.since_attach = p.since_attach;
  v.baseline_known = p.baseline_known;
  v.live_bytes = p.gpu.live;
  v.peak_bytes = p.gpu.peak;
  v.kernel_books = p.kernel_books;
  std::map<int32_t, DeviceUsage> devs;
  for (const auto& [key, book] : p.books) {
    const BookView& b = book.v;
    v.books.push_back(b);
    add_counts(v, b);
    v.implicit_frees += b.implicit_frees;
    v.unmatched_frees += b.unmatched_frees;
    DeviceUsage& d = devs[key.device];
    d.device = key.device;
    add_counts(d, b);
  }
  for (auto& [dev, d] : devs) {
    if (auto it = p.devices.find(dev); it != p.devices.end()) {
      d.live_bytes = it->second.live;
      d.peak_bytes = it->second.peak;
    }
    d.processes = 1;
    v.devices.push_back(d);
  }
  for (const auto& [name, c] : p.calls) v.calls.push_back(c);
  v.copies = p.copies;
  v.launches = p.launches;
  v.kernels = p.kernels;
  v.callers = p.callers;
  v.outstanding_stacks = sorted_stacks(p.outstanding_stacks);
  v.outstanding_count = p.outstanding.size();
  v.outstanding_allocations.reserve(std::min(p.outstanding.size(), kOutstandingListed));
  for (const auto& [ptr, a] : p.outstanding)
    v.outstanding_allocations.push_back({ptr, a.size, a.book->v.device, a.book->v.kind, a.api, a.ts_ns, a.stack_id});
  auto larger = [](const OutstandingAllocation& x, const OutstandingAllocation& y) {
    return x.size != y.size ? x.size > y.size : x.ts_ns != y.ts_ns ? x.ts_ns < y.ts_ns : x.ptr < y.ptr;
  };
  if (v.outstanding_allocations.size() > kOutstandingListed) {
    std::nth_element(v.outstanding_allocations.begin(), v.outstanding_allocations.begin() + kOutstandingListed,
                     v.outstanding_allocations.end(), larger);
    v.outstanding_allocations.resize(kOutstandingListed);
  }
  std::sort(v.outstanding_allocations.begin(), v.outstanding_allocations.end(), larger);
  v.leaked_stacks = sorted_stacks(p.leaked_stacks);
  return v;
}

Snapshot AllocationLedger::snapshot(bool include_exited) const {
  Snapshot s;
  s.last_event_ns = last_event_ns_;
  s.health = health_;
  s.missed = missed_;
  s.counters = counters_;
  s.live_bytes = gpu_.live;
  s.peak_bytes = gpu_.peak;
  for (const auto& [pid, p] : running_) s.processes.push_back(view(p));
  if (include_exited)
    for (const Proc& p : exited_) s.processes.push_back(view(p));
  std::sort(s.processes.begin(), s.processes.end(), [](const ProcessView& a, const ProcessView& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.exited && !b.exited;  // an exited incarnation before the running one
  });

  std::map<int32_t, DeviceUsage> devs;
  for (const auto& [dev, level] : devices_) {
    DeviceUsage& d = devs[dev];
    d.device = dev;
    d.live_bytes = level.live;
    d.peak_bytes = level.peak;
  }
  std::map<std::string, CallStats, std::less<>> calls;
  for (const ProcessView& p : s.processes) {
    s.leaked_bytes += p.leaked_bytes;
    s.leaked_allocs += p.leaked_allocs;
    for (const DeviceUsage& pd : p.devices) {
      DeviceUsage& d = devs[pd.device];
      d.device = pd.device;
      add_counts(d, pd);
      d.processes += 1;
    }
    for (const CallStats& c : p.calls) {
      CallStats& m = calls[c.func];
      m.func = c.func;
      m.merge(c);
    }
    for (size_t i = 0; i < kCopyDirections; ++i) {
      s.copies[i].bytes += p.copies[i].bytes;
      s.copies[i].count += p.copies[i].count;
    }
    s.launches += p.launches;
    for (const KernelStats& k : p.kernels) {
      s.kernel_runs += k.ran;
      s.kernel_recorded += k.recorded;
      s.kernel_host_ns += k.host_ns;
    }
  }
  for (auto& [dev, d] : devs) s.devices.push_back(d);
  for (auto& [name, c] : calls) s.calls.push_back(c);
  return s;
}

size_t AllocationLedger::expire(uint64_t now_ns, uint64_t ttl_ns) {
  const size_t before = exited_.size();
  std::erase_if(exited_, [&](const Proc& p) { return now_ns >= p.exit_ns && now_ns - p.exit_ns >= ttl_ns; });
  return before - exited_.size();
}

}  // namespace fgtrace
