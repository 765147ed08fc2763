// SPDX-License-Identifier: Apache-2.0
#include "collector/collector.h"

#include "collector/elf_symbols.h"
#include "collector/functions.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>
#include <type_traits>

#include "fakegpu.skel.h"

namespace fgtrace {
namespace {

// A load that has a fallback (open_and_load): its verifier log is not the user's concern.
bool g_load_has_fallback = false;

// libbpf's messages go to stderr only when they are warnings or worse, FAKEGPU_TRACE_DEBUG is
// not set and the load has no fallback; with it, everything (the verifier log included) is
// shown.
int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  static const bool debug = std::getenv("FAKEGPU_TRACE_DEBUG") != nullptr;
  if (level == LIBBPF_DEBUG && !debug) return 0;
  if (level == LIBBPF_INFO && !debug) return 0;
  if (g_load_has_fallback && !debug) return 0;
  return std::vfprintf(stderr, fmt, args);
}

std::string errno_text(int e) { return std::strerror(e < 0 ? -e : e); }

// The CPUs a per-CPU map holds a value for.
size_t possible_cpus() { return static_cast<size_t>(std::max(1, libbpf_num_possible_cpus())); }

[[noreturn]] void load_failed(int err) {
  // As root, EACCES is the verifier refusing a program (a kernel without something it uses),
  // not a missing privilege.
  if (err == -EPERM || (err == -EACCES && ::geteuid() != 0))
    throw TraceError(
        "loading BPF programs was refused: run fakegpu-trace as root (sudo), or grant CAP_BPF, CAP_PERFMON and "
        "CAP_SYS_RESOURCE (plus CAP_DAC_READ_SEARCH to read other users' libraries)",
        kExitPermission);
  throw TraceError("loading the BPF programs failed: " + errno_text(err) +
                       " (run `fakegpu-trace check`; FAKEGPU_TRACE_DEBUG=1 shows the verifier log)",
                   kExitUnsupported);
}

}  // namespace

WakeupPolicy wakeup_policy(uint64_t bytes, uint64_t cpus) {
  // A forced wake-up comes from the traced thread's CPU and the scheduler tends to run the
  // reader there; a timer fires on the reader's own CPU (side by side, a wake-up every 16384
  // records cost the traced calls 9-16 % more than the timer alone). Reading in batches is
  // cheaper for them too. So the programs wake the reader only for a ring buffer filling
  // faster than its timer: once it is a quarter full, each CPU every `every` records, so that
  // all CPUs together check again before another sixteenth is used even when every record is
  // the largest, at most every 65536.
  constexpr uint64_t kLargestRecord = 8 + FG_REC_WITH_EXT_PROC;  // the ring buffer's header, then the record
  const uint64_t budget = bytes / 16 / kLargestRecord / std::max<uint64_t>(cpus, 1);  // records per CPU
  WakeupPolicy p;
  while (p.every * 2 <= budget && p.every < 65536) p.every *= 2;
  p.fill_bytes = static_cast<uint32_t>(std::min<uint64_t>(bytes / 4, UINT32_MAX));
  return p;
}

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string usdt_layout_problem(const ElfSymbols& elf) {
  for (const auto& name : elf.usdt_probes("fakegpu")) {
    const std::string want = name == "ctx_switch" ? FG_USDT_ARGUMENTS_CTX_SWITCH
                             : name == "launch"   ? FG_USDT_ARGUMENTS_LAUNCH
                                                  : FG_USDT_ARGUMENTS;
    for (const auto& args : elf.usdt_arguments("fakegpu", name))
      if (args != want)
        return "its USDT probe fakegpu:" + name + " has arguments \"" + args + "\", not \"" + want +
               "\" (a backend of another version)";
  }
  return {};
}

void Collector::LinkCloser::operator()(bpf_link* l) const { bpf_link__destroy(l); }
void Collector::SkelCloser::operator()(fakegpu_bpf* s) const noexcept { fakegpu_bpf__destroy(s); }

namespace {
// Multi-uprobe links (kernel 6.6+) through the raw syscall: Debian 12's libbpf 1.1 and UAPI
// headers predate them. Values and layout from the kernel's union bpf_attr (link_create).
constexpr int kBpfLinkCreate = 28;
constexpr uint32_t kBpfTraceUprobeMulti = 48;
constexpr uint32_t kUprobeMultiReturn = 1;
struct LinkCreateUprobeMulti {
  uint32_t prog_fd, target_fd, attach_type, flags;
  uint64_t path, offsets, ref_ctr_offsets, cookies;
  uint32_t cnt, uflags, pid, pad;
};
static_assert(sizeof(LinkCreateUprobeMulti) == 64);
}  // namespace

void Collector::open_and_load(bool multi) {
  skel_.reset(fakegpu_bpf__open());
  if (!skel_) throw TraceError("cannot open the BPF object: " + errno_text(errno), kExitFailed);
  skel_->rodata->cfg.filter_pids = opts_.filter_pids;
  skel_->rodata->cfg.follow_children = opts_.follow_children;
  skel_->rodata->cfg.stacks = opts_.stacks;
  skel_->rodata->cfg.latency_threshold = opts_.latency_every <= 1
                                             ? 0
                                             : static_cast<uint32_t>((uint64_t{1} << 32) / opts_.latency_every);
  bpf_map__set_max_entries(skel_->maps.stacks, opts_.stacks ? opts_.max_stacks : 1);
  bpf_map__set_max_entries(skel_->maps.stack_files, opts_.stacks ? opts_.max_stacks : 1);
  if (!opts_.stacks) bpf_map__set_max_entries(skel_->maps.exec_paths, 1);  // else as declared
  // The ring buffer, and when the programs wake its reader (bpf/ring.bpf.h).
  bpf_map__set_max_entries(skel_->maps.events, static_cast<uint32_t>(opts_.ringbuf_bytes));
  const WakeupPolicy wake = wakeup_policy(opts_.ringbuf_bytes, possible_cpus());
  skel_->rodata->cfg.wakeup_mask = wake.every - 1;
  skel_->rodata->cfg.wake_bytes = wake.fill_bytes;
  uint32_t allocs = 16;
  while (allocs < opts_.max_allocs && allocs < (1u << 30)) allocs <<= 1;
  skel_->rodata->cfg.allocs_mask = allocs - 1;
  bpf_map__set_max_entries(skel_->maps.allocs, allocs);
  // One pair of entry/return programs is loaded: the multi-link pair or the perf pair.
  bpf_program__set_autoload(skel_->progs.api_enter, !multi);
  bpf_program__set_autoload(skel_->progs.api_exit, !multi);
  bpf_program__set_autoload(skel_->progs.api_enter_multi, multi);
  bpf_program__set_autoload(skel_->progs.api_exit_multi, multi);
  // With multi links, the USDT programs go through them too: every site of a probe in one
  // link instead of a perf event per site, each of which waits for a grace period when
  // released (about a second more for `run -- true`; the cost per hit is the same).
  if (multi)
    for (bpf_program* p : {skel_->progs.api_enter_multi, skel_->progs.api_exit_multi, skel_->progs.usdt_alloc,
                           skel_->progs.usdt_free, skel_->progs.usdt_implicit_free, skel_->progs.usdt_ctx_switch,
                           skel_->progs.usdt_launch, skel_->progs.usdt_kernel_done})
      bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(kBpfTraceUprobeMulti));
  g_load_has_fallback = multi;
  const int err = fakegpu_bpf__load(skel_.get());
  g_load_has_fallback = false;
  if (err) {
    skel_.reset();
    if (err != -EPERM && err != -EACCES && multi) return open_and_load(false);  // an older kernel
    load_failed(err);
  }
  multi_ = multi;
}

int Collector::attach_multi(bpf_program* prog, const std::string& path, const std::vector<uint64_t>& offsets,
                            const std::vector<uint64_t>& cookies, const std::vector<uint64_t>& semaphores, bool ret) {
  LinkCreateUprobeMulti attr{};
  attr.prog_fd = static_cast<uint32_t>(bpf_program__fd(prog));
  attr.attach_type = kBpfTraceUprobeMulti;
  attr.path = reinterpret_cast<uint64_t>(path.c_str());
  attr.offsets = reinterpret_cast<uint64_t>(offsets.data());
  attr.cookies = cookies.empty() ? 0 : reinterpret_cast<uint64_t>(cookies.data());
  const bool any_semaphore = std::any_of(semaphores.begin(), semaphores.end(), [](uint64_t s) { return s != 0; });
  attr.ref_ctr_offsets = any_semaphore ? reinterpret_cast<uint64_t>(semaphores.data()) : 0;
  attr.cnt = static_cast<uint32_t>(offsets.size());
  attr.uflags = ret ? kUprobeMultiReturn : 0;
  const long fd = ::syscall(__NR_bpf, kBpfLinkCreate, &attr, sizeof attr);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

Collector::Collector(const CollectorOptions& opts) : opts_(opts) {
  libbpf_set_print(libbpf_print);
  if (::geteuid() != 0)
    throw TraceError(
        "fakegpu-trace needs privileges to load BPF programs: run it with sudo (or grant CAP_BPF, CAP_PERFMON and "
        "CAP_SYS_RESOURCE)",
        kExitPermission);
  if (const std::string p = ringbuf_size_problem(opts_.ringbuf_bytes, static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
      !p.empty())
    throw TraceError("--ringbuf-size: " + p, kExitUsage);
  open_and_load(true);
  for (bpf_program* p : {skel_->progs.proc_exit, skel_->progs.proc_fork, skel_->progs.proc_exec}) {
    bpf_link* l = bpf_program__attach(p);
    if (!l) {
      const int e = errno;
      links_.clear();
      skel_.reset();
      throw TraceError(std::string("cannot attach the scheduler tracepoint ") + bpf_program__name(p) + ": " +
                           errno_text(e) + " (the kernel needs BTF: /sys/kernel/btf/vmlinux)",
                       kExitUnsupported);
    }
    links_.emplace_back(l);
  }
  attach_loader();
  try {
    ring_ = std::make_unique<RingReader>(bpf_map__fd(skel_->maps.events));
    book_slots_.map(bpf_map__fd(skel_->maps.book_slots), FG_BOOK_SLOTS);
    call_tags_.map(bpf_map__fd(skel_->maps.call_tags), FG_CALL_SLOTS);
    caller_tags_.map(bpf_map__fd(skel_->maps.caller_tags), FG_CALLER_SLOTS);
    caller_files_.map(bpf_map__fd(skel_->maps.caller_files), FG_CALLER_SLOTS);
    allocs_.map(bpf_map__fd(skel_->maps.allocs), bpf_map__max_entries(skel_->maps.allocs));
  } catch (const TraceError& e) {
    ring_.reset();
    links_.clear();
    skel_.reset();
    throw TraceError(e.what(), kExitUnsupported);
  }
}

template <class T>
void Collector::Mapped<T>::map(int fd, size_t n) {
  void* p = ::mmap(nullptr, sizeof(T) * n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw TraceError(std::string("cannot map a BPF array: ") + errno_text(errno));
  at = static_cast<T*>(p);
  count = n;
}

template <class T>
Collector::Mapped<T>::~Mapped() {
  if (at) ::munmap(at, sizeof(T) * count);
}

Collector::~Collector() {
  ring_.reset();
  detach_all();  // every probe before the programs go (skel_, a member, goes last)
}

// Releasing a uprobe waits for an RCU tasks-trace grace period (~0.4 s on these VMs);
// released one after another, 200 probes took over a minute. Released from several threads
// at once, the waits overlap.
void Collector::release(std::vector<Link>& links) noexcept {
  constexpr size_t kThreads = 32;
  std::vector<std::thread> threads;
  const size_t n = links.size();
  try {
    for (size_t t = 0; t < kThreads && t < n; ++t)
      threads.emplace_back([&links, t, n] {
        for (size_t i = t; i < n; i += kThreads) links[i].reset();
      });
  } catch (...) {
    // No threads to be had: whatever is left is released below, one by one.
  }
  for (auto& th : threads) th.join();
  links.clear();
}

void Collector::detach_all() noexcept {
  std::vector<Link> all = std::move(links_);
  links_.clear();
  for (LibraryLinks& l : lib_links_) {
    for (Link& k : l.links) all.push_back(std::move(k));
    l.links.clear();
    l.multi.clear();
  }
  release(all);
}

void Collector::add_pid(uint32_t tgid) {
  const uint8_t one = 1;
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.pids), &tgid, &one, BPF_ANY) != 0)
    throw TraceError("cannot add pid " + std::to_string(tgid) + " to the filter: " + errno_text(errno));
}

namespace {
// The kernel's dev_t of a stat() st_dev (the kernel keeps major << 20 | minor).
uint64_t kernel_dev(dev_t d) { return (static_cast<uint64_t>(major(d)) << 20) | minor(d); }

// The dynamic loader of this program (PT_INTERP), the one the host's programs use.
std::string dynamic_loader() {
  std::string out;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_INTERP) {
            *static_cast<std::string*>(data) = reinterpret_cast<const char*>(info->dlpi_addr +
                                                                             info->dlpi_phdr[i].p_vaddr);
            return 1;
          }
        return 0;
      },
      &out);
  return out;
}
}  // namespace

// A probe on the dynamic loader's _dl_debug_state notes every process that loads a CUDA
// library before the collector has attached to that file (bpf loader_state). Without it
// (a loader without the symbol, a kernel without uprobe cookies) such processes are not
// noticed, and the session says so.
void Collector::attach_loader() {
  const std::string ld = dynamic_loader();
  if (ld.empty()) {
    loader_problem_ = "this program names no dynamic loader";
    return;
  }
  try {
    const ElfSymbols elf(ld);
    const auto offsets = elf.offsets("_dl_debug_state");
    const auto state = elf.address("_dl_debug_state");
    const auto r_debug = elf.address("_r_debug");
    if (offsets.size() != 1 || !state || !r_debug) {
      loader_problem_ = ld + " exports no _dl_debug_state and _r_debug";
      return;
    }
    LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = *r_debug - *state, .retprobe = false);
    bpf_link* l = bpf_program__attach_uprobe_opts(skel_->progs.loader_state, -1, ld.c_str(), offsets[0], &opts);
    if (!l) {
      loader_problem_ = "cannot probe " + ld + ": " + errno_text(errno);
      return;
    }
    links_.emplace_back(l);
  } catch (const TraceError& e) {
    loader_problem_ = e.what();
  }
}

bool same_kernel_file(const std::string& path, uint64_t dev, uint64_t ino) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && kernel_dev(st.st_dev) == dev && st.st_ino == ino;
}

bool Collector::attached_file(uint64_t dev, uint64_t ino) const { return kernel_files_.count({dev, ino}) != 0; }

void Collector::mark_attached_file(uint64_t dev, uint64_t ino) {
  if (!kernel_files_.insert({dev, ino}).second) return;
  const fg_file_key k{dev, ino};
  const uint8_t one = 1;
  bpf_map_update_elem(bpf_map__fd(skel_->maps.traced_files), &k, &one, BPF_ANY);
}

bool Collector::attached(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return by_inode_.count({st.st_dev, st.st_ino}) != 0;
}

Collector::FileStamp Collector::stamp_of(const struct stat& st) {
  return {static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
          static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec, static_cast<int64_t>(st.st_size)};
}

const AttachedLibrary& Collector::attach_library(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw TraceError("cannot read " + path + ": " + errno_text(errno), kExitNotFound);
  if (auto it = by_inode_.find({st.st_dev, st.st_ino}); it != by_inode_.end()) return libs_[it->second];
  LibraryLinks links;
  links.stamp = stamp_of(st);
  AttachedLibrary lib = place_probes(path, &links);
  by_inode_[{st.st_dev, st.st_ino}] = libs_.size();
  libs_.push_back(std::move(lib));
  lib_links_.push_back(std::move(links));
  mark_attached_file(kernel_dev(st.st_dev), st.st_ino);
  return libs_.back();
}

std::vector<std::string> Collector::reattach_rewritten(std::vector<std::string>* problems) {
  std::vector<std::string> out;
  for (const auto& [key, i] : by_inode_) {
    const std::string& path = libs_[i].path;
    struct stat st {};
    // Gone, or another file at the path now (a new inode is attached as a library of its own).
    if (::stat(path.c_str(), &st) != 0 || std::make_pair(st.st_dev, st.st_ino) != key) continue;
    LibraryLinks& old = lib_links_[i];
    const FileStamp now = stamp_of(st);
    if (now == old.stamp) continue;
    if (!(now == old.changed)) {  // still being written, perhaps
      old.changed = now;
      continue;
    }
    release(old.links);
    old.multi.clear();
    old.stamp = stamp_of(st);
    LibraryLinks fresh;
    fresh.stamp = old.stamp;
    try {
      libs_[i] = place_probes(path, &fresh);
      old = std::move(fresh);
      out.push_back(path);
    } catch (const TraceError& e) {
      libs_[i].probes = libs_[i].functions = 0;
      if (problems) problems->push_back(e.what());
    }
  }
  return out;
}

AttachedLibrary Collector::place_probes(const std::string& path, LibraryLinks* out) {
  const ElfSymbols elf(path);
  AttachedLibrary lib;
  lib.path = path;
  const auto usdt = elf.usdt_probes("fakegpu");
  lib.usdt_problem = usdt.empty() ? std::string() : usdt_layout_problem(elf);
  const bool use_usdt = !opts_.force_uprobes && !usdt.empty() && lib.usdt_problem.empty();
  lib.mode = use_usdt ? "usdt" : "uprobe";
  std::vector<Link> links;
  std::vector<UniqueFd> fds;  // multi-uprobe links
  if (use_usdt) {
    const std::pair<bpf_program*, const char*> probes[] = {
        {skel_->progs.usdt_alloc, "alloc"},
        {skel_->progs.usdt_free, "free"},
        {skel_->progs.usdt_implicit_free, "implicit_free"},
        {skel_->progs.usdt_ctx_switch, "ctx_switch"},
        {skel_->progs.usdt_launch, "launch"},            // kernels by name; a backend without it has none
        {skel_->progs.usdt_kernel_done, "kernel_done"},  // ran / recorded and host time; likewise
    };
    for (auto [prog, name] : probes) {
      if (std::find(usdt.begin(), usdt.end(), name) == usdt.end()) continue;
      int err = 0;
      if (multi_) {
        const auto sites = elf.usdt_sites("fakegpu", name);
        if (sites.offsets.empty()) continue;
        const int fd = attach_multi(prog, path, sites.offsets, {}, sites.semaphores, false);
        if (fd >= 0) fds.emplace_back(fd);
        err = fd < 0 ? -fd : 0;
      } else if (bpf_link* l = bpf_program__attach_usdt(prog, -1, path.c_str(), "fakegpu", name, nullptr)) {
        links.emplace_back(l);
      } else {
        err = errno;
      }
      if (err) {
        throw TraceError("cannot attach USDT probe fakegpu:" + std::string(name) + " in " + path + ": " +
                             errno_text(err) + " (try --uprobes-only)",
                         kExitUnsupported);
      }
      ++lib.probes;
    }
  }
  const auto funcs = traced_functions();
  std::vector<uint64_t> multi_offsets, multi_cookies;
  for (uint32_t i = 0; i < funcs.size(); ++i) {
    const TracedFunction& f = funcs[i];
    const auto offsets = elf.offsets(std::string(f.name));
    if (offsets.empty()) continue;
    ++lib.functions;
    // Where USDT books allocations and frees, no entry/return probes on those functions:
    // one probe hit per call, and nothing counted twice.
    if (use_usdt && f.covered_by_usdt()) continue;
    TracedFunction as = f;
    if (use_usdt && f.frees_booked_by_usdt()) as.cls = FG_C_OTHER;
    if (multi_) {
      for (uint64_t off : offsets) {
        multi_offsets.push_back(off);
        multi_cookies.push_back(cookie(i, as));
      }
      lib.probes += 2 * offsets.size();
      continue;
    }
    for (uint64_t off : offsets) {
      LIBBPF_OPTS(bpf_uprobe_opts, entry_opts, .bpf_cookie = cookie(i, as), .retprobe = false);
      LIBBPF_OPTS(bpf_uprobe_opts, exit_opts, .bpf_cookie = cookie(i, as), .retprobe = true);
      bpf_link* e = bpf_program__attach_uprobe_opts(skel_->progs.api_enter, -1, path.c_str(), off, &entry_opts);
      if (!e)
        throw TraceError("cannot attach a uprobe to " + std::string(f.name) + " in " + path + ": " + errno_text(errno),
                         kExitUnsupported);
      links.emplace_back(e);
      bpf_link* r = bpf_program__attach_uprobe_opts(skel_->progs.api_exit, -1, path.c_str(), off, &exit_opts);
      if (!r)
        throw TraceError(
            "cannot attach a uretprobe to " + std::string(f.name) + " in " + path + ": " + errno_text(errno),
            kExitUnsupported);
      links.emplace_back(r);
      lib.probes += 2;
    }
  }
  if (lib.functions == 0) {
    throw TraceError(path +
                         " exports none of the CUDA functions fakegpu-trace traces (is it a CUDA runtime or driver "
                         "library?)",
                     kExitNotFound);
  }
  if (!multi_offsets.empty()) {
    for (bool ret : {false, true}) {
      bpf_program* prog = ret ? skel_->progs.api_exit_multi : skel_->progs.api_enter_multi;
      const int fd = attach_multi(prog, path, multi_offsets, multi_cookies, {}, ret);
      if (fd < 0)
        throw TraceError("cannot attach the entry/return probes in " + path + ": " + errno_text(fd), kExitUnsupported);
      fds.emplace_back(fd);
    }
  }
  out->multi = std::move(fds);
  out->links = std::move(links);
  return lib;
}

int Collector::poll(int timeout_ms, const std::function<void(const fg_event&)>& sink) {
  return static_cast<int>(ring_->poll(timeout_ms, sink));
}

namespace {
// Calls fn(key) for every key of BPF map fd (keys of type K). fn must not delete from the
// map: callers collect keys first.
template <class K, class F>
void for_each_key(int fd, F&& fn) {
  K key{}, next{};
  const K* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    fn(next);
    key = next;
    prev = &key;
  }
}

// Calls fn(key, value) for each entry of the hash map at fd (keys K, values V); an entry
// deleted between the walk and the lookup is skipped.
template <class K, class V, class F>
void for_each_entry(int fd, F&& fn) {
  for_each_key<K>(fd, [&](const K& k) {
    V v{};
    if (bpf_map_lookup_elem(fd, &k, &v) == 0) fn(k, v);
  });
}

// A per-CPU value summed over the CPUs. V is one of the contract's counter structs
// (fg_book_counts, fg_caller_val: every field a __u64 count), so it adds up word by word.
template <class V>
V sum_over_cpus(const std::vector<V>& per_cpu) {
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) % sizeof(__u64) == 0);
  std::array<__u64, sizeof(V) / sizeof(__u64)> total{}, words;
  for (const V& v : per_cpu) {
    std::memcpy(words.data(), &v, sizeof v);
    for (size_t w = 0; w < words.size(); ++w) total[w] += words[w];
  }
  V sum;
  std::memcpy(&sum, total.data(), sizeof sum);
  return sum;
}

// Calls fn(i, tag, per_cpu) for each slot in use of an open-addressing table (FG_TAG_*):
// `tag_of(i)` is slot i's tag, per_cpu its values (V per CPU) in map `values_fd`.
template <class V, class TagOf, class Fn>
void for_each_used_slot(uint32_t slots, int values_fd, TagOf&& tag_of, Fn&& fn) {
  std::vector<V> per_cpu(possible_cpus());
  for (uint32_t i = 0; i < slots; ++i) {
    const __u64 tag = __atomic_load_n(&tag_of(i), __ATOMIC_ACQUIRE);
    if (!FG_TAG_USED(tag) || bpf_map_lookup_elem(values_fd, &i, per_cpu.data()) != 0) continue;
    fn(i, tag, per_cpu);
  }
}

// Forgets process tgid's slots of an open-addressing table (FG_TAG_*): `tag_of(i)` is slot
// i's tag; its per-CPU values in map `values_fd` (V each) are zeroed, then `clear(i)` runs
// and the slot is marked forgotten. A later process with the same key claims it afresh, and
// searches for other keys still probe past it.
template <class V, class TagOf, class Clear>
void forget_tagged(uint32_t slots, int values_fd, uint32_t tgid, TagOf&& tag_of, Clear&& clear) {
  const std::vector<V> zero(possible_cpus());
  for (uint32_t i = 0; i < slots; ++i) {
    __u64& tag = tag_of(i);
    const __u64 t = __atomic_load_n(&tag, __ATOMIC_ACQUIRE);
    if (!FG_TAG_USED(t) || FG_TAG_TGID(t) != tgid) continue;
    bpf_map_update_elem(values_fd, &i, zero.data(), BPF_ANY);
    clear(i);
    __atomic_store_n(&tag, FG_TAG_DELETED, __ATOMIC_RELEASE);
  }
}
}  // namespace

std::vector<KernelBook> Collector::books() const {
  std::vector<KernelBook> out;
  for_each_used_slot<fg_book_counts>(
      FG_BOOK_SLOTS, bpf_map__fd(skel_->maps.book_counts),
      [this](uint32_t i) -> __u64& { return book_slots_.at[i].tag; },
      [&](uint32_t i, __u64 tag, const std::vector<fg_book_counts>& per_cpu) {
        const fg_book_slot& slot = book_slots_.at[i];
        const fg_book_counts c = sum_over_cpus(per_cpu);
        out.push_back({{FG_TAG_TGID(tag), FG_BOOK_TAG_DEVICE(tag), FG_BOOK_TAG_KIND(tag), 0},
                       {.alloc_bytes = c.alloc_bytes,
                        .free_bytes = c.free_bytes,
                        .implicit_free_bytes = c.implicit_free_bytes,
                        .live_bytes = __atomic_load_n(&slot.live_bytes, __ATOMIC_RELAXED),
                        .peak_bytes = __atomic_load_n(&slot.peak_bytes, __ATOMIC_RELAXED),
                        .alloc_calls = c.alloc_calls,
                        .free_calls = c.free_calls,
                        .failed_calls = c.failed_calls}});
      });
  return out;
}

std::vector<uint64_t> Collector::stack(uint32_t id) const {
  std::vector<uint64_t> ips(FG_STACK_DEPTH, 0);
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.stacks), &id, ips.data()) != 0) return {};
  const auto end = std::find(ips.begin(), ips.end(), 0);
  ips.erase(end, ips.end());
  return ips;
}

std::vector<fg_file_frame> Collector::stack_files(uint32_t id) const {
  fg_stack_files s{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.stack_files), &id, &s) != 0) return {};
  return {s.frame, s.frame + std::min<uint32_t>(s.frames, FG_STACK_DEPTH)};
}

std::string Collector::exec_path(uint32_t tgid) const {
  fg_exec_path p{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.exec_paths), &tgid, &p) != 0) return {};
  return std::string(p.path, strnlen(p.path, sizeof p.path));
}

KernelHealth Collector::health() const {
  const int fd = bpf_map__fd(skel_->maps.stats);
  std::vector<uint64_t> per_cpu(possible_cpus());
  auto sum = [&](uint32_t which) {
    uint64_t total = 0;
    if (bpf_map_lookup_elem(fd, &which, per_cpu.data()) == 0)
      for (uint64_t v : per_cpu) total += v;
    return total;
  };
  KernelHealth h;
  h.events = sum(FG_STAT_EVENTS);
  h.rb_drops = sum(FG_STAT_RB_DROPS);
  h.missing_entry = sum(FG_STAT_MISSING_ENTRY);
  h.unmatched_free = sum(FG_STAT_UNMATCHED_FREE);
  h.alloc_map_full = sum(FG_STAT_ALLOC_MAP_FULL);
  h.stacks_lost = sum(FG_STAT_STACKS_LOST);
  h.untraced_lost = sum(FG_STAT_UNTRACED_LOST);
  return h;
}

namespace {
// Mirrors struct call_val / copy_key of fakegpu.bpf.c.
constexpr int kLatBuckets = 32;
struct CallVal {
  uint64_t calls, fails, timed, total_ns, max_ns, hist[kLatBuckets];
};
struct CopyVal {
  uint64_t bytes, count;
};
struct CopyKey {
  uint32_t tgid, dir;
};
// Mirrors struct primary_key.
struct PrimaryKey {
  uint32_t tgid;
  int32_t device;
};

// Deletes process tgid's entries from a map keyed by K (a struct that starts with the tgid):
// the keys are collected first, since deleting while walking restarts the walk.
template <class K>
void forget_keys(int fd, uint32_t tgid) {
  std::vector<K> mine;
  for_each_key<K>(fd, [&](const K& k) {
    if (k.tgid == tgid) mine.push_back(k);
  });
  for (const K& k : mine) bpf_map_delete_elem(fd, &k);
}
}  // namespace

std::vector<CallCount> Collector::calls() const {
  std::vector<CallCount> out;
  // A per-CPU map: each CPU's counts, summed (the longest call: the largest of them).
  for_each_used_slot<CallVal>(
      FG_CALL_SLOTS, bpf_map__fd(skel_->maps.calls), [this](uint32_t i) -> __u64& { return call_tags_.at[i]; },
      [&](uint32_t, __u64 tag, const std::vector<CallVal>& per_cpu) {
        CallCount c{FG_TAG_TGID(tag), FG_CALL_TAG_FUNC(tag), 0, 0, 0, 0, 0, std::vector<uint64_t>(kLatBuckets)};
        for (const CallVal& v : per_cpu) {
          c.calls += v.calls;
          c.fails += v.fails;
          c.timed += v.timed;
          c.total_ns += v.total_ns;
          c.max_ns = std::max(c.max_ns, v.max_ns);
          for (int b = 0; b < kLatBuckets; ++b) c.hist[static_cast<size_t>(b)] += v.hist[b];
        }
        out.push_back(std::move(c));
      });
  return out;
}

std::vector<CopyCount> Collector::copies() const {
  std::vector<CopyCount> out;
  const int fd = bpf_map__fd(skel_->maps.copies);
  for_each_entry<CopyKey, CopyVal>(fd, [&](const CopyKey& k, const CopyVal& v) {
    out.push_back({k.tgid, k.dir, v.bytes, v.count});
  });
  return out;
}

std::vector<KernelLaunches> Collector::kernel_launches() const {
  std::vector<KernelLaunches> out;
  const int fd = bpf_map__fd(skel_->maps.kernels);
  for_each_entry<fg_kernel_key, fg_kernel_val>(fd, [&](const fg_kernel_key& k, const fg_kernel_val& v) {
    out.push_back({k.tgid, k.function, kernel_stats(v)});
  });
  return out;
}

std::string caller_object(const fg_caller_file& file) {
  switch (file.status) {
    case FG_CALLER_FILE: {
      std::string name(file.name, strnlen(file.name, sizeof file.name));
      return name.empty() ? "[unknown]" : name;
    }
    case FG_CALLER_ANON: return "[anonymous]";
    default: return "[unknown]";
  }
}

std::vector<CallerCount> Collector::callers() const {
  std::vector<CallerCount> out;
  for_each_used_slot<fg_caller_val>(
      FG_CALLER_SLOTS, bpf_map__fd(skel_->maps.caller_counts),
      [this](uint32_t i) -> __u64& { return caller_tags_.at[i]; },
      [&](uint32_t i, __u64 tag, const std::vector<fg_caller_val>& per_cpu) {
        fg_caller_file file = caller_files_.at[i];
        // Claimed but not yet filled (the caller is published last): its counts are on the
        // way; the next read has them. The unknown caller (0) is filled at once.
        if (file.caller == 0 && FG_CALLER_TAG_HASH(tag) != FG_CALLER_HASH(0)) return;
        out.push_back({FG_TAG_TGID(tag), file.caller, sum_over_cpus(per_cpu), file});
      });
  return out;
}

std::map<uint32_t, uint64_t> Collector::launches() const {
  std::map<uint32_t, uint64_t> out;
  const int fd = bpf_map__fd(skel_->maps.launches);
  for_each_entry<uint32_t, uint64_t>(fd, [&](uint32_t tgid, uint64_t n) { out[tgid] = n; });
  return out;
}

void Collector::forget(uint32_t tgid) {
  forget_tagged<fg_book_counts>(
      FG_BOOK_SLOTS, bpf_map__fd(skel_->maps.book_counts), tgid,
      [this](uint32_t i) -> __u64& { return book_slots_.at[i].tag; },
      [this](uint32_t i) {
        __atomic_store_n(&book_slots_.at[i].live_bytes, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&book_slots_.at[i].peak_bytes, 0, __ATOMIC_RELAXED);
      });
  forget_tagged<CallVal>(
      FG_CALL_SLOTS, bpf_map__fd(skel_->maps.calls), tgid, [this](uint32_t i) -> __u64& { return call_tags_.at[i]; },
      [](uint32_t) {});
  forget_keys<CopyKey>(bpf_map__fd(skel_->maps.copies), tgid);
  forget_keys<fg_kernel_key>(bpf_map__fd(skel_->maps.kernels), tgid);
  forget_tagged<fg_caller_val>(
      FG_CALLER_SLOTS, bpf_map__fd(skel_->maps.caller_counts), tgid,
      [this](uint32_t i) -> __u64& { return caller_tags_.at[i]; },
      [this](uint32_t i) { caller_files_.at[i] = fg_caller_file{}; });
  // The entry/return path's primary-context holders and live allocations (what it leaked).
  forget_keys<PrimaryKey>(bpf_map__fd(skel_->maps.primary_holders), tgid);
  // Only entry/return probes keep allocation records: no 10 MB walk when none are attached.
  const bool entry_return = std::any_of(libs_.begin(), libs_.end(),
                                        [](const AttachedLibrary& l) { return l.mode == "uprobe"; });
  for (size_t i = 0; entry_return && i < allocs_.count; ++i) {
    fg_alloc_rec& r = allocs_.at[i];
    if (r.tgid != tgid || __atomic_load_n(&r.ptr, __ATOMIC_ACQUIRE) <= FG_ALLOC_DELETED) continue;
    r.tgid = 0;  // as the programs free a record (alloc_forget)
    __atomic_store_n(&r.ptr, FG_ALLOC_DELETED, __ATOMIC_RELEASE);
  }
  bpf_map_delete_elem(bpf_map__fd(skel_->maps.launches), &tgid);
}

std::vector<UntracedLoad> Collector::take_untraced() {
  std::vector<UntracedLoad> out;
  const int fd = bpf_map__fd(skel_->maps.untraced_maps);
  std::vector<uint32_t> keys;
  for_each_key<uint32_t>(fd, [&](uint32_t k) { keys.push_back(k); });
  for (uint32_t tgid : keys) {
    fg_untraced_map m{};
    if (bpf_map_lookup_and_delete_elem(fd, &tgid, &m) != 0) continue;
    out.push_back({tgid, m.dev, m.ino, std::string(m.path, strnlen(m.path, sizeof m.path)),
                   std::string(m.comm, strnlen(m.comm, sizeof m.comm))});
  }
  return out;
}

std::vector<CheckItem> check_system() {
  std::vector<CheckItem> out;
  const bool root = ::geteuid() == 0;
  out.push_back({"privileges", root,
                 root ? "running as root" : "not root: run with sudo (or grant CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE)",
                 true, kExitPermission});
  const bool btf = ::access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  out.push_back({"kernel BTF (/sys/kernel/btf/vmlinux)", btf,
                 btf ? "present" : "missing: use a kernel built with CONFIG_DEBUG_INFO_BTF=y"});
  std::ifstream kprobes("/sys/bus/event_source/devices/uprobe/type");
  const bool uprobes = kprobes.good();
  out.push_back({"uprobes (perf uprobe PMU)", uprobes,
                 uprobes ? "available" : "missing: the kernel needs CONFIG_UPROBE_EVENTS=y"});
  const bool tracefs = ::access("/sys/kernel/tracing/trace_pipe", F_OK) == 0 ||
                       ::access("/sys/kernel/debug/tracing/trace_pipe", F_OK) == 0;
  out.push_back({"tracefs (optional)", tracefs,
                 tracefs ? "mounted"
                         : "not mounted; only needed to read bpf_printk output: mount -t tracefs nodev "
                           "/sys/kernel/tracing",
                 false});
  if (root && btf) {
    try {
      CollectorOptions o;
      o.ringbuf_bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));  // the smallest ring buffer
      o.max_allocs = 16;
      Collector c(o);
      out.push_back({"BPF programs, ring buffer and scheduler tracepoints", true, "loaded and attached"});
    } catch (const TraceError& e) {
      out.push_back({"BPF programs, ring buffer and scheduler tracepoints", false, e.what()});
    }
  }
  return out;
}

}  // namespace fgtrace
