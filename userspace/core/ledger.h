// SPDX-License-Identifier: Apache-2.0
// AllocationLedger: the collector's exact books, per (process, device, kind), built from the
// decoded ring-buffer events plus what the collector adds (call latencies, copies, launches,
// kernel health counters). Pure: no BPF, no /proc, no clock; times come in the events.
//
// Rules the numbers obey (tests/unit/test_trace_ledger.cpp):
// * live = baseline not yet freed + the sizes of the tracked outstanding allocations, so it
//   can never go negative: a free only removes what the books hold.
// * A free of a pointer the books never saw is "pre-attach" when the process was running
//   before tracing began (it lowers that book's baseline, never below 0) and "unmatched"
//   otherwise (counted, live untouched).
// * Process exit turns whatever the process still holds into its leak report (leaked bytes
//   and allocations) and its live books go to 0. The backend's own exit handler reports the
//   allocations a program never freed as implicit frees with reason "process exit"; those are
//   leaks too. A SIGKILLed process sends none: its FG_EV_PROC_EXIT finds them outstanding.
// * exec replaces the address space: what the old image still held can never be freed by the
//   process, so it joins the leak report at exec (books and counters are kept, comm updated).
// * A forked child starts with empty books (the backend gives it its own, empty ledger slot).
// * Peaks are high-water marks since tracing began, at every level (book, process device,
//   process, system device, system); a baseline counts from the moment it is set.
// * Devices >= 0 are GPUs; device -1 is host memory (pinned) or an unknown device. Process and
//   system "live"/"peak" totals cover GPU devices only; device -1 is reported on its own.
//
// Not thread-safe: the collector feeds and reads it from one thread (or under one lock).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <tsl/robin_map.h>

#include "event.h"

namespace fgtrace {

struct Analysis;  // analysis.h: forecasts, live leaks, fragmentation (filled by the collector)

// Latency histogram: bucket i counts calls with latency in [2^i, 2^(i+1)) ns; bucket 0 also
// holds 0 ns.
inline constexpr size_t kLatencyBuckets = 64;
size_t latency_bucket(uint64_t ns) noexcept;

struct CallStats {
  std::string func;
  uint64_t calls = 0;
  uint64_t errors = 0;  // calls that returned an error
  uint64_t timed = 0;   // calls whose latency was measured: total_ns, max_ns and buckets cover these
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  std::array<uint64_t, kLatencyBuckets> buckets{};

  void add(uint64_t latency_ns, bool ok) noexcept;
  void merge(const CallStats& other) noexcept;
};

// cudaMemcpyKind's numbers.
enum class CopyDirection : uint8_t { HtoH = 0, HtoD = 1, DtoH = 2, DtoD = 3, Default = 4 };
inline constexpr size_t kCopyDirections = 5;
const char* to_string(CopyDirection d) noexcept;  // "HtoH", "HtoD", "DtoH", "DtoD", "Default"

struct CopyStats {
  uint64_t bytes = 0;
  uint64_t count = 0;
};

struct TracedLibrary {
  std::string path;
  std::string mode;  // "usdt" (the backend's fakegpu:* probes) or "uprobe" (entry/return)
};

// The kernel's counters (per-CPU fg_stat slots summed) and what is attached, as the collector
// last read them.
// The BPF programs' own counters (enum fg_stat, summed over CPUs by the collector).
struct KernelHealth {
  uint64_t events = 0;          // FG_STAT_EVENTS
  uint64_t rb_drops = 0;        // FG_STAT_RB_DROPS
  uint64_t missing_entry = 0;   // FG_STAT_MISSING_ENTRY
  uint64_t unmatched_free = 0;  // FG_STAT_UNMATCHED_FREE
  uint64_t alloc_map_full = 0;  // FG_STAT_ALLOC_MAP_FULL
  uint64_t stacks_lost = 0;     // FG_STAT_STACKS_LOST (--stacks; not a lost event: the books stay exact)
  uint64_t untraced_lost = 0;   // FG_STAT_UNTRACED_LOST: processes missed that could not be noted
};

// A process that loaded a CUDA library before the collector traced that file, and was gone
// by the time it did: none of its calls through it are in the books.
struct MissedProcess {
  uint32_t pid = 0;
  std::string comm;
  std::string library;  // the path the dynamic loader opened
  bool operator==(const MissedProcess&) const = default;
};
// How many missed processes the outputs list (the latest); all are counted.
inline constexpr size_t kMissedListed = 100;

struct Health : KernelHealth {
  std::vector<TracedLibrary> libraries;
};

// Processes the books miss (the collector's count, set with set_missed).
struct Missed {
  // Those noted (MissedProcess) plus KernelHealth::untraced_lost, which could not be.
  uint64_t processes = 0;
  std::vector<MissedProcess> latest;  // the latest kMissedListed, oldest first
  // Why processes that load a library before it is traced would go unnoticed (the dynamic
  // loader could not be probed); empty when they are noticed.
  std::string unnoticed;
};

// What the ledger itself noticed in the event stream.
struct LedgerCounters {
  uint64_t events = 0;               // events applied
  uint64_t bad_records = 0;          // records decode() refused (wrong size, unknown type)
  uint64_t unmatched_frees = 0;      // frees of pointers never seen allocated, process traced from its start
  uint64_t pre_attach_frees = 0;     // frees of allocations made before attach (expected)
  uint64_t duplicate_allocs = 0;     // allocation of a pointer still outstanding: its free was missed
  uint64_t exits_without_event = 0;  // exits reported by the collector, not by FG_EV_PROC_EXIT
};

// One (process, device, kind) book.
struct BookView {
  int32_t device = kHostDevice;
  MemKind kind = MemKind::Unknown;
  uint64_t live_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t allocs = 0;  // successful allocations
  uint64_t alloc_bytes = 0;
  uint64_t frees = 0;  // successful explicit frees (unmatched ones included)
  uint64_t freed_bytes = 0;
  uint64_t failed = 0;          // allocation and free calls that returned an error
  uint64_t implicit_frees = 0;  // freed by context destroy / device reset
  uint64_t implicit_freed_bytes = 0;
  uint64_t unmatched_frees = 0;
  uint64_t outstanding = 0;     // tracked allocations not freed yet
  uint64_t baseline_bytes = 0;  // held before attach, as the backend's device ledger said
  uint64_t baseline_left = 0;   // the part of live_bytes that is baseline not freed yet
  uint64_t leaked_bytes = 0;    // still held at exit (or at exec)
  uint64_t leaked_allocs = 0;   // tracked allocations among them (baseline bytes have no count)
};

// The in-kernel books of one (process, device, kind) (struct fg_book): counted by the BPF
// programs themselves, so they stay exact when ring-buffer records are lost.
struct KernelBookView {
  int32_t device = kHostDevice;
  MemKind kind = MemKind::Unknown;
  uint64_t alloc_calls = 0, alloc_bytes = 0;
  uint64_t free_calls = 0, free_bytes = 0;
  uint64_t implicit_free_bytes = 0;
  uint64_t live_bytes = 0, peak_bytes = 0;
  uint64_t failed_calls = 0;
};

// A process's figures on one device, all kinds together.
struct DeviceUsage {
  int32_t device = kHostDevice;
  uint64_t live_bytes = 0;
  uint64_t peak_bytes = 0;  // high-water of the sum over kinds (system: over processes too)
  uint64_t allocs = 0;
  uint64_t frees = 0;
  uint64_t failed = 0;
  uint64_t leaked_bytes = 0;
  uint64_t leaked_allocs = 0;
  uint32_t processes = 0;  // system view: processes in the snapshot with books on the device
};

struct StackUsage {
  uint32_t stack_id = 0;
  uint64_t bytes = 0;
  uint64_t allocs = 0;
};

// One allocation a process holds now (ProcessView::outstanding_allocations).
struct OutstandingAllocation {
  uint64_t ptr = 0;  // device pointer (VMM: the allocation handle)
  uint64_t size = 0;
  int32_t device = kHostDevice;
  MemKind kind = MemKind::Unknown;
  Api api = Api::Unknown;
  uint64_t ts_ns = 0;  // when it was made (the events' clock)
  std::optional<uint32_t> stack_id;
};
// How many of a process's outstanding allocations a snapshot lists (the largest).
inline constexpr size_t kOutstandingListed = 100;

// A kernel's launches by a process and what the executor did with them (the fakegpu:launch and
// fakegpu:kernel_done USDT probes: the backend's USDT mode).
struct KernelStats {
  std::string name;       // mangled, as the module has it
  uint64_t launches = 0;  // accepted
  uint64_t ran = 0;       // executed on the host CPU
  uint64_t recorded = 0;  // recorded, not run (FAKEGPU_KERNELS=record, a kernel the fake cannot run)
  uint64_t host_ns = 0;   // the executed launches' host time
  // The mean host time of an executed launch (0 when none ran).
  uint64_t mean_host_ns() const noexcept { return ran ? host_ns / ran : 0; }
  void merge(const KernelStats& other) noexcept;  // the counts of another function of the same name
  bool operator==(const KernelStats&) const = default;
};
// A kernel's books as the BPF map `kernels` holds them: the name up to its NUL (or all
// FG_KERNEL_NAME_LEN bytes when it has none) and the counts.
KernelStats kernel_stats(const fg_kernel_val& v);
// How many kernels of a process the outputs list (the most launched).
inline constexpr size_t kKernelsListed = 20;

// A process's API calls from one shared object (per-library attribution): the file that holds
// the return address of each call made from outside the CUDA libraries.
struct CallerStats {
  // The file's name ("libcublas.so.13", the program's own name); "[anonymous]" for code in
  // no file (a JIT's); "[unknown]" where no caller was known (the backend's own threads).
  std::string object;
  uint64_t calls = 0;
  uint64_t errors = 0;       // calls that returned an error
  uint64_t alloc_bytes = 0;  // what its successful allocations got
  uint64_t free_bytes = 0;   // what its successful frees released
  uint64_t probed = 0;       // calls seen by entry/return probes: the only ones timed
  uint64_t timed = 0;        // of those, the calls timed (--latency-every)
  uint64_t timed_ns = 0;     // their time
  // The time of all its probed calls: the timed calls' mean times their number (exact with
  // --latency-every 1); 0 when none was timed.
  uint64_t time_ns() const noexcept;
  void merge(const CallerStats& other) noexcept;  // the counts of another caller in the same object
  bool operator==(const CallerStats&) const = default;
};
// How many objects of a process the outputs list (the most calls).
inline constexpr size_t kCallersListed = 20;

struct ProcessView {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string comm;
  uint64_t start_ns = 0;  // when it started (fork) or was first seen
  uint64_t exit_ns = 0;
  bool exited = false;
  bool exit_event_seen = false;  // exit came as FG_EV_PROC_EXIT (else the collector said so)
  bool since_attach = false;     // running before tracing began: counts cover only what followed
  bool baseline_known = false;   // live includes what it held at attach (backend's ledger)
  uint64_t live_bytes = 0;       // GPU devices (>= 0)
  uint64_t peak_bytes = 0;       // high-water of live_bytes
  uint64_t leaked_bytes = 0;     // all devices, host included
  uint64_t leaked_allocs = 0;
  uint64_t allocs = 0, frees = 0, failed = 0, implicit_frees = 0, unmatched_frees = 0;
  std::vector<BookView> books;               // by device, then kind
  std::vector<KernelBookView> kernel_books;  // by device, then kind (the collector's last read)
  std::vector<DeviceUsage> devices;          // by device
  std::vector<CallStats> calls;              // by function name
  std::array<CopyStats, kCopyDirections> copies{};
  uint64_t launches = 0;
  std::vector<KernelStats> kernels;            // by launches, most first (then name): every kernel launched
  std::vector<CallerStats> callers;            // by calls, most first (then name): every calling object
  std::vector<StackUsage> outstanding_stacks;  // by bytes, largest first
  // The kOutstandingListed largest allocations held now (ties: oldest first); all of them
  // are counted in outstanding_count.
  std::vector<OutstandingAllocation> outstanding_allocations;
  uint64_t outstanding_count = 0;
  std::vector<StackUsage> leaked_stacks;  // by bytes, largest first
};

struct Snapshot {
  uint64_t last_event_ns = 0;
  std::vector<ProcessView> processes;  // by pid, then start time
  std::vector<DeviceUsage> devices;    // system-wide, by device; peaks since tracing began
  uint64_t live_bytes = 0;             // all GPU devices, all processes
  uint64_t peak_bytes = 0;             // high-water of live_bytes
  uint64_t leaked_bytes = 0;           // processes in the snapshot
  uint64_t leaked_allocs = 0;
  std::vector<CallStats> calls;  // processes in the snapshot, merged, by name
  std::array<CopyStats, kCopyDirections> copies{};
  uint64_t launches = 0;
  // The processes' kernels (fakegpu:kernel_done), summed: launches executed, recorded, and
  // the executed ones' host time.
  uint64_t kernel_runs = 0, kernel_recorded = 0, kernel_host_ns = 0;
  Health health;
  Missed missed;
  LedgerCounters counters;
  // The analyses of the same refresh (Analyzer::update); null when none were made (the
  // ledger never fills it). Shared: copies of a snapshot share one immutable analysis.
  std::shared_ptr<const Analysis> analysis;

  bool any_since_attach() const noexcept;
};

// Told of every change of a process's or a device's live bytes and of every failed allocation,
// as the ledger applies records (the timeline of `run --timeline`, core/timeline.h). Times are
// the records' (the events' clock); a baseline set at attach comes at the last record's time.
class LevelObserver {
 public:
  virtual ~LevelObserver() = default;
  // process_live: the process's bytes on `device`; device_live: every process's.
  virtual void level(uint64_t ts_ns, uint32_t pid, int32_t device, uint64_t process_live, uint64_t device_live) = 0;
  virtual void alloc_failed(uint64_t ts_ns, uint32_t pid, int32_t device, uint64_t size, int32_t status) = 0;
};

class AllocationLedger {
 public:
  // Observes every level change from now on (nullptr: none). Not owned.
  void set_observer(LevelObserver* observer) noexcept { observer_ = observer; }

  // Decodes one ring-buffer record and applies it; false (and counted as a bad record) when
  // decode() refuses it.
  bool consume(const void* data, size_t size);
  bool consume(const fg_event& raw);  // the same for a whole record, without copying it
  // Records the transport refused before they became an fg_event (a size no record has).
  void count_bad_records(uint64_t n) noexcept { counters_.bad_records += n; }
  void apply(const Event& ev);

  // A process the collector starts tracing (attach -p, or the command of `run`).
  // running_before_attach: its earlier allocations were not seen (figures are "since attach").
  // Processes first met through an event are taken as running before attach; fork children
  // are not.
  void track_process(uint32_t pid, std::string_view comm, uint32_t ppid, uint64_t start_ns, bool running_before_attach);
  // What the process held of `kind` on `device` at attach, from the backend's shared device
  // ledger. Marks the process baseline-known (and since-attach); live starts there.
  void set_baseline(uint32_t pid, int32_t device, MemKind kind, uint64_t bytes);
  // The backend's ledger was read and holds nothing for the process: its live figures are
  // true from now on.
  void mark_baseline_known(uint32_t pid);
  // The collector found the process gone without an FG_EV_PROC_EXIT (pidfd, /proc): the same
  // leak report, flagged exit_event_seen = false. No-op for unknown or exited pids.
  void process_exited(uint32_t pid, uint64_t ts_ns);

  void record_call(uint32_t pid, std::string_view func, uint64_t latency_ns, bool ok);
  void record_copy(uint32_t pid, CopyDirection dir, uint64_t bytes);
  void record_launch(uint32_t pid, uint64_t count = 1);
  // The kernel keeps call, copy and launch counters itself: the collector hands over their
  // current totals (replacing what the books had for that process and function/direction).
  void set_call_totals(uint32_t pid, const CallStats& totals);
  void set_copy_totals(uint32_t pid, CopyDirection dir, uint64_t bytes, uint64_t count);
  void set_launch_totals(uint32_t pid, uint64_t count);
  // Launches by kernel (replacing the previous read; the same name twice is summed).
  void set_kernel_totals(uint32_t pid, std::vector<KernelStats> kernels);
  // Calls by calling object (replacing the previous read; the same object twice is summed).
  void set_caller_totals(uint32_t pid, std::vector<CallerStats> callers);
  // The process's in-kernel books as last read (replacing the previous read).
  void set_kernel_books(uint32_t pid, std::vector<KernelBookView> books);
  void set_health(const Health& health);
  void set_missed(Missed missed) { missed_ = std::move(missed); }

  Snapshot snapshot(bool include_exited) const;
  // Forgets exited processes whose exit is at least ttl_ns before now_ns; returns how many.
  size_t expire(uint64_t now_ns, uint64_t ttl_ns);

  // Calls f(const OutstandingAllocation&) for every allocation the running process `pid`
  // holds now (none for an unknown or exited pid), in no particular order.
  template <class F>
  void for_each_outstanding(uint32_t pid, F&& f) const {
    const auto it = running_.find(pid);
    if (it == running_.end()) return;
    for (const auto& [ptr, a] : it->second.outstanding)
      f(OutstandingAllocation{ptr, a.size, a.book->v.device, a.book->v.kind, a.api, a.ts_ns, a.stack_id});
  }

  const LedgerCounters& counters() const noexcept { return counters_; }
  bool running(uint32_t pid) const noexcept { return running_.count(pid) != 0; }
  // Whether the books hold process pid, running or exited (not yet expired).
  bool knows(uint32_t pid) const noexcept;
  // Its calls before now were not all seen (a library it used was attached late): its
  // figures are "since attach", and its unmatched frees were frees of allocations made
  // before (pre-attach frees). The running process pid, else the last exited one; no-op for
  // an unknown pid.
  void mark_since_attach(uint32_t pid) noexcept;
  std::vector<uint32_t> running_pids() const;  // ascending

 private:
  struct BookKey {
    int32_t device;
    MemKind kind;
    bool operator<(const BookKey& o) const noexcept { return device != o.device ? device < o.device : kind < o.kind; }
  };
  struct Level {
    uint64_t live = 0;
    uint64_t peak = 0;
  };
  // A book with the levels its bytes also count in, found once when the book is made: the
  // per-record path raises or lowers them without another lookup. Books are never erased and
  // std::map nodes never move (nor when the Proc moves), so the pointers stay valid.
  struct Book {
    BookView v;
    Level* proc_level = nullptr;    // the process's p.devices[v.device]
    Level* system_level = nullptr;  // devices_[v.device]
  };
  // Pointers are aligned (their low bits are 0) and the table indexes by the low bits of the
  // hash: every bit of the key is folded into them (a 64x64->128 multiply, high ^ low).
  struct PointerHash {
    size_t operator()(uint64_t key) const noexcept {
      const unsigned __int128 m = static_cast<unsigned __int128>(key) * 0x9e3779b97f4a7c15ull;
      return static_cast<size_t>(m >> 64) ^ static_cast<size_t>(m);
    }
  };
  struct Allocation {
    uint64_t size = 0;
    Book* book = nullptr;  // the process's book of the allocation's device and kind
    uint64_t ts_ns = 0;
    Api api = Api::Unknown;
    std::optional<uint32_t> stack_id;
  };
  // Books of devices -1 .. kDirectDevices - 2 are also found by index, every kind (Unknown
  // last): one load instead of a std::map walk on every record. Others only through the map.
  static constexpr int32_t kDirectDevices = 17;
  static constexpr size_t kDirectKinds = 6;  // FG_MEM_DEVICE .. FG_MEM_VMM (0..4), Unknown
  // Moved (into exited_), never copied: its books, levels and allocations point at each other.
  struct Proc {
    Proc() = default;
    Proc(Proc&&) = default;
    Proc& operator=(Proc&&) = default;
    Proc(const Proc&) = delete;
    Proc& operator=(const Proc&) = delete;

    uint32_t pid = 0, ppid = 0;
    std::string comm;
    uint64_t start_ns = 0, exit_ns = 0;
    bool exited = false, exit_event_seen = false, since_attach = false, baseline_known = false;
    std::map<BookKey, Book> books;
    std::array<Book*, kDirectDevices * kDirectKinds> direct{};  // into books
    std::vector<KernelBookView> kernel_books;
    std::map<int32_t, Level> devices;
    Level gpu;
    // By pointer (VMM: handle). Open addressing with backward-shift deletion: no allocation
    // per entry and no tombstones, so an alloc/free churn stays at one probe.
    tsl::robin_map<uint64_t, Allocation, PointerHash> outstanding;
    std::map<std::string, CallStats, std::less<>> calls;
    std::array<CopyStats, kCopyDirections> copies{};
    uint64_t launches = 0;
    std::vector<KernelStats> kernels;
    std::vector<CallerStats> callers;
    std::unordered_map<uint32_t, StackUsage> outstanding_stacks, leaked_stacks;
  };

  Proc& running_for(const Event& ev);  // the running record, created as since-attach
  Proc& for_counters(uint32_t pid);    // running, else the latest exited, else new
  Proc& create(uint32_t pid, bool since_attach);
  Book& book(Proc& p, int32_t device, MemKind kind);
  void add_live(Proc& p, Book& b, uint64_t bytes);  // b: one of p's books
  void sub_live(Proc& p, Book& b, uint64_t bytes);
  void on_alloc(const Event& ev);
  void on_free(const Event& ev, bool implicit);
  void leak_everything(Proc& p);  // exit / exec: what is still held becomes the leak report
  void finish(uint32_t pid, uint64_t ts_ns, bool from_event);
  ProcessView view(const Proc& p) const;

  std::unordered_map<uint32_t, Proc> running_;
  // The running record of the last event's process (most records follow one of theirs):
  // element references survive rehashing; finish(), the only erase, clears it.
  Proc* last_proc_ = nullptr;
  std::vector<Proc> exited_;  // in exit order
  std::map<int32_t, Level> devices_;
  Level gpu_;
  Health health_;
  Missed missed_;
  LedgerCounters counters_;
  uint64_t last_event_ns_ = 0;
  LevelObserver* observer_ = nullptr;
  Event scratch_;  // consume(fg_event): decoded into, record after record
};

}  // namespace fgtrace
