// SPDX-License-Identifier: Apache-2.0
// The BPF side of fakegpu-trace, as a C++ object: loads the programs, attaches them to the
// scheduler tracepoints and to CUDA libraries, delivers ring-buffer events and reads the
// in-kernel books. Everything libbpf hands out is owned by RAII handles; destruction
// detaches every probe.
#pragma once
#include "collector/errors.h"
#include "collector/ring_reader.h"
#include "collector/unique_fd.h"
#include "../core/ledger.h"  // KernelHealth (relative: the backend has a core/ledger.h too)

#include <linux/types.h>
#include <sys/stat.h>

#include "fakegpu_events.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

struct fakegpu_bpf;
struct bpf_link;
struct bpf_program;

namespace fgtrace {

struct CollectorOptions {
  bool filter_pids = false;              // trace only the pids added with add_pid (and, if following, their children)
  bool follow_children = false;          // forked children of traced processes are traced too
  uint64_t ringbuf_bytes = 16ull << 20;  // the BPF ring buffer (ringbuf_size_problem says what it takes)
  uint32_t max_allocs = 1u << 18;  // live allocations the entry/return path can remember (rounded up to a power of two)
  bool force_uprobes = false;      // ignore USDT probes (compare both ways on one workload)
  bool stacks = false;             // record each allocation's user stack (--stacks)
  uint32_t latency_every = 8;      // entry/return probes time a random 1 in N calls (1: every call)
  uint32_t max_stacks = 16384;     // distinct stacks the kernel keeps (with stacks)
};

// How a library is traced.
struct AttachedLibrary {
  std::string path;
  std::string mode;          // "usdt" or "uprobe"
  std::string usdt_problem;  // why its fakegpu:* USDT probes are not used, if it has some
  size_t probes = 0;         // uprobe/uretprobe/USDT attachments
  size_t functions = 0;      // traced functions the library exports
};

// The wake-up policy of the programs (bpf/ring.bpf.h) for a ring buffer of `bytes` on `cpus`
// CPUs: a CPU's every `every`-th record (a power of two) wakes the collector when the ring
// buffer then holds `fill_bytes` or more.
struct WakeupPolicy {
  uint32_t every = 1;
  uint32_t fill_bytes = 0;
};
WakeupPolicy wakeup_policy(uint64_t bytes, uint64_t cpus);

// CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns() and of the events' ts_ns.
uint64_t monotonic_ns();

class ElfSymbols;
// Why a library's fakegpu:* USDT probes cannot be used (empty: they can): the BPF programs
// load the arguments from fixed registers, so every site's note must name them
// (FG_USDT_ARGUMENTS).
std::string usdt_layout_problem(const ElfSymbols& elf);

struct KernelBook {
  fg_book_key key;
  fg_book book;
};
struct CallCount {
  uint32_t tgid, func;
  uint64_t calls, fails, timed, total_ns, max_ns;  // total_ns, max_ns, hist: the timed calls
  std::vector<uint64_t> hist;                      // log2(ns) buckets
};
struct CopyCount {
  uint32_t tgid, direction;
  uint64_t bytes, count;
};

struct KernelLaunches {
  uint32_t tgid;
  uint64_t function;  // the CUfunction
  KernelStats stats;  // its name, launches, how they finished, host time
};

// API calls of a process from one caller (a return address), summed over CPUs, with the file
// the caller lies in (taken in the kernel when the caller was first seen).
struct CallerCount {
  uint32_t tgid;
  uint64_t caller;
  fg_caller_val counts;
  fg_caller_file file;  // status FG_CALLER_UNKNOWN when the kernel could not tell
};

// The name outputs give a caller's object: the file's name, "[anonymous]" for code in no file
// (a JIT's), "[unknown]" where the kernel could not tell (no caller known, or no mapping).
std::string caller_object(const fg_caller_file& file);

// A process that loaded a CUDA library file the collector had not attached to (bpf
// loader_state): the file as the kernel names it, the path the loader opened, the process's
// name then.
struct UntracedLoad {
  uint32_t tgid = 0;
  uint64_t dev = 0, ino = 0;  // the kernel's dev_t (major << 20 | minor) and inode
  std::string path;
  std::string comm;
};

// Whether `path` is the file the kernel names (dev_t major << 20 | minor, inode).
bool same_kernel_file(const std::string& path, uint64_t dev, uint64_t ino);

class Collector {
 public:
  // Opens, configures and loads the programs and attaches the process tracepoints.
  // Throws TraceError (permission, unsupported kernel …) with a fix in the message.
  explicit Collector(const CollectorOptions& opts);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  void add_pid(uint32_t tgid);
  // Attaches to a CUDA library file (once per file). Uses the backend's USDT probes when the
  // library has them (unless force_uprobes), entry/return probes on exported functions
  // otherwise. Throws TraceError if the file exports none of the traced functions.
  const AttachedLibrary& attach_library(const std::string& path);
  // Attached libraries whose file was rewritten in place since (the same inode, another
  // modification time or size: `cp` of another build over it): their probes sit at the old
  // build's offsets, where the new code has other instructions, so they are released and
  // placed again from the file as it is now, once two looks in a row find it unchanged (not
  // from a file half written). Returns their paths; a file that no longer
  // exports anything traced keeps no probes and is named in *problems.
  std::vector<std::string> reattach_rewritten(std::vector<std::string>* problems);
  bool attached(const std::string& path) const;
  // Whether the file the kernel names (dev, ino) is attached (or known to be an attached one).
  bool attached_file(uint64_t dev, uint64_t ino) const;
  // Records that the kernel's (dev, ino) is the file of an attached library (a file seen
  // through another mount has other numbers).
  void mark_attached_file(uint64_t dev, uint64_t ino);
  // The processes noted since the last call (the entries are taken out of the kernel's map).
  std::vector<UntracedLoad> take_untraced();
  // Why processes that load a library before it is traced cannot be noticed (empty: they
  // are): the dynamic loader's probe could not be placed.
  const std::string& loader_problem() const { return loader_problem_; }
  const std::vector<AttachedLibrary>& libraries() const { return libs_; }

  // Delivers pending events to `sink` (waiting up to timeout_ms for some); returns how many.
  int poll(int timeout_ms, const std::function<void(const fg_event&)>& sink);

  std::vector<KernelBook> books() const;
  KernelHealth health() const;
  // Records of the ring buffer that no record shape has (a contract mismatch), not
  // delivered: so many since the last call.
  uint64_t take_bad_records() { return ring_->take_bad_records(); }
  std::vector<CallCount> calls() const;
  std::vector<CopyCount> copies() const;
  std::map<uint32_t, uint64_t> launches() const;
  // Launches per process and kernel (fakegpu:launch and kernel_done; USDT only), with the
  // kernels' names, how the executor finished them and their host time.
  std::vector<KernelLaunches> kernel_launches() const;
  // Per-library attribution: every (process, caller) seen, with its counts and file.
  std::vector<CallerCount> callers() const;
  // The return addresses of user stack `id` (innermost first); empty if unknown.
  std::vector<uint64_t> stack(uint32_t id) const;
  // The same stack's frames as build id + file offset, taken in the kernel when the stack was
  // first seen (they name the code after its process is gone); empty if unknown.
  std::vector<fg_file_frame> stack_files(uint32_t id) const;
  // With stacks, the file process tgid last exec'd while the programs were loaded, as execve
  // was given it (maybe relative to its working directory); empty if unknown.
  std::string exec_path(uint32_t tgid) const;
  // Drops a process's in-kernel books (after its exit was reported).
  void forget(uint32_t tgid);

 private:
  struct LinkCloser {
    void operator()(bpf_link* l) const;
  };
  using Link = std::unique_ptr<bpf_link, LinkCloser>;
  CollectorOptions opts_;
  struct SkelCloser {
    void operator()(fakegpu_bpf* s) const noexcept;
  };
  std::unique_ptr<fakegpu_bpf, SkelCloser> skel_;  // the programs and maps, destroyed last
  std::unique_ptr<RingReader> ring_;
  // A memory-mapped BPF array (BPF_F_MMAPABLE), unmapped with the collector.
  template <class T>
  struct Mapped {
    T* at = nullptr;
    size_t count = 0;
    void map(int fd, size_t n);  // throws TraceError
    Mapped() = default;
    Mapped(const Mapped&) = delete;
    Mapped& operator=(const Mapped&) = delete;
    ~Mapped();
  };
  Mapped<fg_book_slot> book_slots_;      // the books' shared part (FG_BOOK_SLOTS)
  Mapped<__u64> call_tags_;              // the call counters' tags (FG_CALL_SLOTS)
  Mapped<__u64> caller_tags_;            // per-library attribution's tags (FG_CALLER_SLOTS) ...
  Mapped<fg_caller_file> caller_files_;  // ... and each slot's caller and file
  Mapped<fg_alloc_rec> allocs_;          // the entry/return path's live allocations
  std::vector<Link> links_;              // the process tracepoints and the loader's probe
  bool multi_ = false;                   // the kernel takes multi-uprobe links
  std::vector<AttachedLibrary> libs_;
  // What identifies a file's contents without reading them: rewritten in place, a file keeps
  // its inode but not its modification time (or size).
  struct FileStamp {
    int64_t mtime_ns = 0, ctime_ns = 0, size = 0;
    bool operator==(const FileStamp&) const = default;
  };
  // Per attached library (libs_ index): its probes and the file they were placed from.
  struct LibraryLinks {
    std::vector<Link> links;
    std::vector<UniqueFd> multi;  // multi-uprobe links: closing one detaches its probes (entry, return, each USDT
                                  // probe)
    FileStamp stamp;
    FileStamp changed;  // another stamp seen at the last look: placed again once it holds still
  };
  std::vector<LibraryLinks> lib_links_;
  // Places the probes of the library at `path` (its ELF read now) into *out.
  AttachedLibrary place_probes(const std::string& path, LibraryLinks* out);
  static FileStamp stamp_of(const struct stat& st);
  // Releases links, many at once (each release waits for an RCU grace period).
  static void release(std::vector<Link>& links) noexcept;
  std::map<std::pair<uint64_t, uint64_t>, size_t> by_inode_;  // (dev, ino) → libs_ index
  std::set<std::pair<uint64_t, uint64_t>> kernel_files_;      // traced_files' keys: (kernel dev_t, ino)
  std::string loader_problem_;
  void attach_loader();
  void detach_all() noexcept;
  void open_and_load(bool multi);
  // One multi-uprobe link of `prog` at `offsets` of path (cookies and semaphores: one each, or
  // empty); a file descriptor, or -errno.
  int attach_multi(bpf_program* prog, const std::string& path, const std::vector<uint64_t>& offsets,
                   const std::vector<uint64_t>& cookies, const std::vector<uint64_t>& semaphores, bool ret);
};

// Checks whether this machine can trace: kernel features, BTF, privileges, tracefs.
struct CheckItem {
  std::string what;
  bool ok;
  std::string detail;                  // the fix when !ok
  bool required = true;                // an optional item that fails is a note, not a failure
  int exit_status = kExitUnsupported;  // fakegpu-trace check's status when it fails
};
std::vector<CheckItem> check_system();

}  // namespace fgtrace
