// SPDX-License-Identifier: Apache-2.0
#include "core/ledger.h"

#include "common/calls.h"
#include "common/log.h"
#include "core/errors.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fg::ledger {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] void fail(const std::string& msg) { throw FatalError(msg); }

std::string fix_hint(const std::string& path) {
  return "remove it (rm " + path + ") while no fake-GPU process runs, or set FAKEGPU_LEDGER to another path";
}

std::string mode_text(mode_t m) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(m & 07777));
  return text;
}

void self_comm(char out[16]) {
  std::memset(out, 0, 16);
  int fd = ::open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = ::read(fd, out, 15);
  ::close(fd);
  if (n > 0 && out[n - 1] == '\n') out[n - 1] = '\0';
}

bool alive(const ProcSlot& s) noexcept { return process_alive(s.pid, s.start_time); }

}  // namespace

std::string default_path() {
  if (const char* p = std::getenv("FAKEGPU_LEDGER"); p && *p) return p;
  // The format version is part of the name: processes of two fakegpu versions cannot share
  // devices, and an old ledger must not stop a new one.
  return default_path_for(::getuid());
}

Ledger::Ledger(const std::string& path, bool isolated) : path_(path), isolated_(isolated) {
  size_ = file_size();
  if (isolated_) {
    base_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base_ == MAP_FAILED) fail("cannot map the private device ledger: " + errno_text(errno));
    hdr_ = static_cast<Header*>(base_);
    init_header();
  } else {
    attach_shared();
  }
  devs_ = reinterpret_cast<DeviceEntry*>(static_cast<char*>(base_) + device_table_offset());
  procs_ = reinterpret_cast<ProcSlot*>(static_cast<char*>(base_) + proc_table_offset());
  reap_dead();
}

void Ledger::init_header() noexcept {
  std::memcpy(hdr_->magic, kMagic, sizeof kMagic);
  hdr_->version = kVersion;
  hdr_->header_size = sizeof(Header);
  hdr_->file_size = size_;
  hdr_->max_devices = kMaxDevices;
  hdr_->max_procs = kMaxProcs;
  hdr_->device_entry_size = sizeof(DeviceEntry);
  hdr_->proc_slot_size = sizeof(ProcSlot);
  hdr_->creator_pid = ::getpid();
  hdr_->slot_limit.store(0, std::memory_order_relaxed);
  hdr_->ready.store(1, std::memory_order_release);
}

// The segment is created complete under a temporary name and then linked into place, so
// no process ever sees a ledger that is half sized or half initialised; of two processes
// that create it at once, the second link fails and that process opens the winner's.
void Ledger::attach_shared() {
  // A default path is per user and private (0600); an explicit FAKEGPU_LEDGER may be
  // shared by a group of users, so it is created group-writable (0660).
  const char* env = std::getenv("FAKEGPU_LEDGER");
  const mode_t mode = env && *env ? 0660 : 0600;
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
      fd = create_published(mode);
      if (fd == -2) continue;  // lost the race: open the winner's
    } else if (fd < 0) {
      fail("cannot open the device ledger " + path_ + ": " + errno_text(errno) +
           " (it belongs to another user or is not a regular file; set FAKEGPU_LEDGER to a path you own)");
    }
    map_and_validate(fd);
    return;
  }
  fail("cannot create or open the device ledger " + path_ + "; " + fix_hint(path_));
}

int Ledger::create_published(unsigned mode) {
  const std::string tmp = path_ + ".new." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    fail("cannot create the device ledger " + path_ + ": " + errno_text(errno) +
         " (set FAKEGPU_LEDGER to a writable path, or FAKEGPU_ISOLATED=1 for per-process devices)");
  ::fchmod(fd, mode);  // umask must not narrow a shared ledger
  // Every page is given its storage now: a file only sized with ftruncate on a full tmpfs
  // would kill the process with SIGBUS at its first touch of a page instead of this error.
  void* m = MAP_FAILED;
  int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size_));
  if (err == 0) {
    m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    err = m == MAP_FAILED ? errno : 0;
  }
  if (m == MAP_FAILED) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("cannot make the device ledger " + path_ + " (" + std::to_string(size_) + " bytes): " + errno_text(err) +
         " (free space there, or set FAKEGPU_LEDGER to another path)");
  }
  hdr_ = static_cast<Header*>(m);
  init_header();
  ::munmap(m, size_);
  hdr_ = nullptr;
  const int rc = ::link(tmp.c_str(), path_.c_str());
  const int e = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) {
    ::close(fd);
    if (e == EEXIST) return -2;
    fail("cannot publish the device ledger " + path_ + ": " + errno_text(e));
  }
  return fd;
}

void Ledger::map_and_validate(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("the device ledger " + path_ + " is not a regular file; " + fix_hint(path_));
  }
  // Whoever can write the ledger can read every process's name and usage and make every
  // allocation fail. The default path is private to its user: a file there that another user
  // made, or that others may read or write, is refused. An explicit FAKEGPU_LEDGER may be
  // shared by a group of users (the kernel let this process open it), never changed by all.
  const char* env = std::getenv("FAKEGPU_LEDGER");
  const bool explicit_path = env && *env;
  if (!explicit_path && st.st_uid != ::geteuid()) {
    ::close(fd);
    fail("the device ledger " + path_ + " belongs to another user (uid " + std::to_string(st.st_uid) +
         "), but the default ledger is private to each user; " + fix_hint(path_));
  }
  if (!explicit_path && (st.st_mode & (S_IRWXG | S_IRWXO))) {
    ::close(fd);
    fail("the device ledger " + path_ + " may be read or changed by other users (mode " + mode_text(st.st_mode) +
         "), but the default ledger is private to each user; chmod 600 " + path_ +
         " (or remove it while no fake-GPU process runs)");
  }
  if (explicit_path && (st.st_mode & S_IWOTH)) {
    ::close(fd);
    fail("the device ledger " + path_ + " may be changed by every user (mode " + mode_text(st.st_mode) +
         "); chmod o-w " + path_ + " (or remove it while no fake-GPU process runs)");
  }
  if (static_cast<size_t>(st.st_size) != size_) {
    ::close(fd);
    fail("the device ledger " + path_ + " has size " + std::to_string(st.st_size) + ", expected " +
         std::to_string(size_) + " (made by another fakegpu version, or not a ledger); " + fix_hint(path_));
  }
  base_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  ::close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    fail("cannot map the device ledger " + path_ + ": " + errno_text(e));
  }
  hdr_ = static_cast<Header*>(base_);
  if (hdr_->ready.load(std::memory_order_acquire) != 1 || !header_valid(*hdr_, size_)) {
    ::munmap(base_, size_);
    base_ = nullptr;
    fail("the device ledger " + path_ + " is corrupt or was made by an incompatible fakegpu; " + fix_hint(path_));
  }
}

Ledger::~Ledger() {
  // Leave the books as they are: the process is exiting and its slot is released by
  // release_process() (report/exit path) or reclaimed by the next process that looks.
  if (base_) ::munmap(base_, size_);
}

namespace {
bool pid_gone(int pid) noexcept { return pid <= 0 || (::kill(pid, 0) != 0 && errno == ESRCH); }
}  // namespace

// A busy state is a few stores long; waits for it to end, but if the process that set it
// is gone, frees it (returns false: the caller looks at the word again).
bool Ledger::wait_not_busy(std::atomic<uint64_t>& state, uint64_t* w) noexcept {
  for (int i = 0; state_of(*w) == kBusy; ++i) {
    if (pid_gone(pid_of(*w))) {
      uint64_t expected = *w;
      state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel);
      *w = state.load(std::memory_order_acquire);
      return false;
    }
    if (i >= 2000) return true;  // a live process holding it for 200 ms: leave it be
    struct timespec ts {
      0, 100000
    };
    ::nanosleep(&ts, nullptr);
    *w = state.load(std::memory_order_acquire);
  }
  return true;
}

bool Ledger::referenced(uint32_t dev, int except_slot) const noexcept {
  const uint64_t bit = 1ull << (dev % 64);
  for (uint32_t i = 0, n = slots_in_use(*hdr_); i < n; ++i) {
    if (static_cast<int>(i) == except_slot) continue;
    const ProcSlot& s = procs_[i];
    if (state_of(s.state.load(std::memory_order_seq_cst)) == kFree) continue;
    if (s.devices[dev / 64].load(std::memory_order_seq_cst) & bit) return true;
  }
  return false;
}

void Ledger::mark_device(uint32_t dev, int ordinal) noexcept {
  const int i = slot_.load(std::memory_order_acquire);
  if (i >= 0) {
    if (ordinal >= 0) procs_[i].ordinal[dev] = static_cast<int16_t>(ordinal);
    procs_[i].devices[dev / 64].fetch_or(1ull << (dev % 64), std::memory_order_seq_cst);
  }
  for (auto& [d, o] : my_devices_)
    if (d == dev) {
      if (ordinal >= 0) o = ordinal;
      return;
    }
  try {
    my_devices_.emplace_back(dev, ordinal);
  } catch (...) {}
}

int Ledger::collect_unused() noexcept {
  reap_dead();
  const int me = slot_.load(std::memory_order_acquire);
  const int pid = ::getpid();
  int freed = 0;
  for (uint32_t i = 0; i < kMaxDevices; ++i) {
    DeviceEntry& d = devs_[i];
    uint64_t w = d.state.load(std::memory_order_acquire);
    if (state_of(w) != kReady || referenced(i, me)) continue;
    if (me >= 0 && (procs_[me].devices[i / 64].load() & (1ull << (i % 64)))) continue;
    if (!d.state.compare_exchange_strong(w, state_word(kBusy, pid), std::memory_order_seq_cst)) continue;
    // A process may have marked the entry between the check and the claim: look again.
    if (referenced(i, me)) {
      d.state.store(w, std::memory_order_release);
      continue;
    }
    d.reserved.store(0, std::memory_order_relaxed);
    d.state.store(kFree, std::memory_order_release);
    ++freed;
  }
  return freed;
}

uint32_t Ledger::register_device(const uint8_t uuid[16], uint64_t total, const std::string& name, int ordinal) {
  claim_slot();
  const int me = slot_.load(std::memory_order_acquire);
  const int pid = ::getpid();
  for (int pass = 0; pass < 3; ++pass) {
    // Pass 0 looks for this device; pass 1 takes a free entry; pass 2 does both again
    // after entries no live process uses were collected.
    for (uint32_t i = 0; i < kMaxDevices; ++i) {
      DeviceEntry& d = devs_[i];
      uint64_t w = d.state.load(std::memory_order_acquire);
      if (state_of(w) == kBusy && !wait_not_busy(d.state, &w)) --i;  // freed: look again
      if (state_of(w) == kReady && pass != 1 && std::memcmp(d.uuid, uuid, 16) == 0) {
        // Mark first, then check the entry is still this device: a collector that claims
        // it after the mark sees the mark and backs off.
        procs_[me].devices[i / 64].fetch_or(1ull << (i % 64), std::memory_order_seq_cst);
        if (d.state.load(std::memory_order_seq_cst) != w || std::memcmp(d.uuid, uuid, 16) != 0) {
          procs_[me].devices[i / 64].fetch_and(~(1ull << (i % 64)), std::memory_order_seq_cst);
          --i;
          continue;
        }
        if (d.total != total) {
          if (referenced(i, me)) {
            procs_[me].devices[i / 64].fetch_and(~(1ull << (i % 64)), std::memory_order_seq_cst);
            fail("device " + name + " is in use in the ledger " + path_ + " with " + std::to_string(d.total) +
                 " bytes, this process configures " + std::to_string(total) +
                 " bytes; give processes that share a ledger the same device configuration, or set FAKEGPU_LEDGER "
                 "(or FAKEGPU_ISOLATED=1) to separate them");
          }
          d.total = total;  // nobody else uses it: this process's configuration stands
          std::snprintf(d.name, sizeof d.name, "%s", name.c_str());
        }
        mark_device(i, ordinal);
        return i;
      }
      if (state_of(w) == kFree && pass >= 1) {
        if (!d.state.compare_exchange_strong(w, state_word(kBusy, pid), std::memory_order_acq_rel)) {
          --i;
          continue;
        }
        std::memcpy(d.uuid, uuid, 16);
        d.total = total;
        d.reserved.store(0, std::memory_order_relaxed);
        d.exact_lock.store(kFree, std::memory_order_relaxed);
        std::snprintf(d.name, sizeof d.name, "%s", name.c_str());
        procs_[me].devices[i / 64].fetch_or(1ull << (i % 64), std::memory_order_seq_cst);
        d.state.store(state_word(kReady, pid), std::memory_order_release);
        mark_device(i, ordinal);
        return i;
      }
    }
    if (pass == 1) collect_unused();
  }
  fail("the device ledger " + path_ + " is full (" + std::to_string(kMaxDevices) +
       " distinct devices in use by live processes); " + fix_hint(path_));
}

void Ledger::claim_slot() {
  if (slot_.load(std::memory_order_acquire) >= 0) return;
  const int pid = ::getpid();
  const uint64_t start = process_start_time(pid);
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (uint32_t i = 0; i < kMaxProcs; ++i) {
      ProcSlot& s = procs_[i];
      uint64_t w = s.state.load(std::memory_order_acquire);
      if (state_of(w) != kFree ||
          !s.state.compare_exchange_strong(w, state_word(kBusy, pid), std::memory_order_acq_rel))
        continue;
      note_slot_claimed(*hdr_, i);
      s.pid = pid;
      s.start_time = start;
      self_comm(s.comm);
      // Books are zero: every path that frees a slot empties it first.
      for (auto& b : s.devices) b.store(0, std::memory_order_relaxed);
      std::fill(std::begin(s.ordinal), std::end(s.ordinal), int16_t{-1});
      s.state.store(state_word(kReady, pid), std::memory_order_release);
      int none = -1;
      if (!slot_.compare_exchange_strong(none, static_cast<int>(i)))
        s.state.store(kFree, std::memory_order_release);  // another thread of ours won
      return;
    }
    reap_dead();
  }
  fail("the device ledger " + path_ + " has no free process slot (" + std::to_string(kMaxProcs) +
       " processes use fake GPUs at once)");
}

ProcSlot& Ledger::slot() noexcept { return procs_[slot_.load(std::memory_order_relaxed)]; }

namespace {
// A shard's lock is only ever taken by threads of the process that owns the slot.
struct ShardLock {
  explicit ShardLock(Shard& s) : s_(s) {
    while (s_.lock.exchange(1, std::memory_order_acquire))
      while (s_.lock.load(std::memory_order_relaxed)) __builtin_ia32_pause();
  }
  ~ShardLock() { s_.lock.store(0, std::memory_order_release); }
  Shard& s_;
};

std::atomic<uint32_t> g_next_shard{0};
}  // namespace

FG_TLS constinit thread_local int t_shard = -1;

[[gnu::always_inline]] inline Shard& Ledger::my_shard() noexcept {
  if (t_shard < 0) t_shard = static_cast<int>(g_next_shard.fetch_add(1, std::memory_order_relaxed) % kShards);
  return slot().shards[t_shard];
}

bool Ledger::take(uint32_t dev, uint64_t n) noexcept {
  DeviceEntry& d = devs_[dev];
  if (n > d.total) return false;
  const uint64_t before = d.reserved.fetch_add(n, std::memory_order_relaxed);
  if (before > d.total - n) {
    d.reserved.fetch_sub(n, std::memory_order_relaxed);
    return false;
  }
  return true;
}

uint64_t Ledger::slot_used(const ProcSlot& s, uint32_t dev) const noexcept {
  uint64_t u = 0;
  for (const Shard& sh : s.shards)
    u += sh.used[dev][kDevice].load(std::memory_order_relaxed) + sh.used[dev][kManaged].load(std::memory_order_relaxed);
  return u;
}

// At capacity, quotas other shards hold unused must not refuse an allocation that fits.
// Under the device's exact lock, every other shard's unused quota (of every live process)
// goes back to the device, then the grant is taken as usual: Σ quotas never exceeds the
// capacity, so no shard can book past it on its lock-free fast path. `mine` is the calling
// thread's shard, whose lock the caller holds.
bool Ledger::take_exact(uint32_t dev, uint64_t n, uint64_t bytes, const Shard* mine) noexcept {
  DeviceEntry& d = devs_[dev];
  const int pid = ::getpid();
  // The check is a few microseconds long. A holder that keeps the lock for a second is
  // stopped (SIGSTOP, a debugger, a frozen cgroup): the allocation is refused rather than
  // waiting for it without end.
  for (int waits = 0;;) {
    uint64_t w = d.exact_lock.load(std::memory_order_acquire);
    if (state_of(w) == kBusy) {
      if (!wait_not_busy(d.exact_lock, &w)) continue;  // its holder died: freed
      if (state_of(w) == kBusy) {
        if (++waits < 5) continue;  // 200 ms each
        FG_LOG(Warn, Core,
               "%s (ledger device %u) is nearly full and process %d has held its capacity check for over a "
               "second (stopped?): an allocation of %llu bytes is refused",
               d.name, dev, pid_of(w), static_cast<unsigned long long>(bytes));
        return false;
      }
    }
    if (d.exact_lock.compare_exchange_weak(w, state_word(kBusy, pid), std::memory_order_acq_rel)) break;
  }
  reap_dead();
  for (uint32_t i = 0, slots = slots_in_use(*hdr_); i < slots; ++i) {
    if (state_of(procs_[i].state.load(std::memory_order_acquire)) != kReady) continue;
    for (Shard& sh : procs_[i].shards) {
      if (&sh == mine) continue;
      // A shard's lock is held for a few instructions; one held longer belongs to a
      // stopped process, whose unused quota then stays with it.
      int spins = 0;
      while (sh.lock.exchange(1, std::memory_order_acquire))
        if (++spins > 100000) break;
      if (spins > 100000) continue;
      const uint64_t quota = sh.quota[dev].load(std::memory_order_relaxed);
      const uint64_t used = sh.used[dev][kDevice].load(std::memory_order_relaxed) +
                            sh.used[dev][kManaged].load(std::memory_order_relaxed);
      if (quota > used) {
        sh.quota[dev].store(used, std::memory_order_relaxed);
        d.reserved.fetch_sub(quota - used, std::memory_order_relaxed);
      }
      sh.lock.store(0, std::memory_order_release);
    }
  }
  const bool fits = take(dev, n);
  d.exact_lock.store(kFree, std::memory_order_release);
  return fits;
}

bool Ledger::reserve_slow(uint32_t dev, Kind kind, uint64_t bytes, uint64_t peak, uint64_t* high) noexcept {
  if (high) *high = 0;
  if (slot_.load(std::memory_order_acquire) < 0) {
    try {
      claim_slot();
    } catch (const std::exception& e) {
      FG_LOG(Error, Core, "%s", e.what());
      return false;
    }
  }
  Shard& sh = my_shard();
  ShardLock lock(sh);
  if (kind != kHost) {
    const uint64_t used = sh.used[dev][kDevice].load(std::memory_order_relaxed) +
                          sh.used[dev][kManaged].load(std::memory_order_relaxed);
    const uint64_t quota = sh.quota[dev].load(std::memory_order_relaxed);
    if (used + bytes > quota) {
      const uint64_t need = used + bytes - quota;
      uint64_t grant = std::max(need, kQuotaChunk);
      if (!take(dev, grant)) {
        grant = need;
        if (!take(dev, grant) && !take_exact(dev, grant, bytes, &sh)) return false;
      }
      sh.quota[dev].store(quota + grant, std::memory_order_relaxed);
    }
  }
  // Under the shard lock: plain stores suffice (readers in other processes load atomically).
  const uint64_t now = sh.used[dev][kind].load(std::memory_order_relaxed) + bytes;
  sh.used[dev][kind].store(now, std::memory_order_relaxed);
  if (high && kind != kHost) {
    // The process total sums every shard; reading the shards other threads write costs a
    // cache miss each, so this shard reads them only when the total could pass the peak:
    //   * each other shard holds at most its high, so below `bound` nothing can pass it;
    //   * this shard plus what the others held at its last look passing the peak (this
    //     thread's own growth) always reads: a peak a thread makes is exact;
    //   * otherwise (only the others' growth since the last look could pass it) it reads
    //     at the first such check and then at checks spaced further apart while reads find
    //     nothing new (other threads churning concurrently), at most kMaxBackoff apart.
    constexpr uint16_t kMaxBackoff = 1024;
    const uint64_t shard_total = now +
                                 sh.used[dev][kind == kDevice ? kManaged : kDevice].load(std::memory_order_relaxed);
    uint64_t& mine_high = sh.high[dev];
    if (shard_total > mine_high) {
      highs_sum_[dev].fetch_add(shard_total - mine_high, std::memory_order_relaxed);
      mine_high = shard_total;
    }
    const uint64_t bound = shard_total + (highs_sum_[dev].load(std::memory_order_relaxed) - mine_high);
    Peek& pk = peek_[t_shard];
    if (bound > peak) {
      bool look = shard_total + pk.others_seen[dev] > peak || pk.wait[dev] == 0;
      if (!look) --pk.wait[dev];
      if (look) {
        const uint64_t total = slot_used(slot(), dev);
        pk.others_seen[dev] = total - shard_total;
        uint16_t& b = pk.backoff[dev];
        if (total > peak) {
          *high = total;
          b = 0;
        } else {
          b = b ? std::min<uint16_t>(2 * b, kMaxBackoff) : 1;
        }
        pk.wait[dev] = b;
      }
    }
  }
  return true;
}

uint64_t Ledger::mine(uint32_t dev, Kind kind) const noexcept {
  const int i = slot_.load(std::memory_order_acquire);
  if (i < 0) return 0;
  uint64_t u = 0;
  for (const Shard& sh : procs_[i].shards) u += sh.used[dev][kind].load(std::memory_order_relaxed);
  return u;
}

void Ledger::release_slow(uint32_t dev, Kind kind, uint64_t bytes) noexcept {
  if (slot_.load(std::memory_order_relaxed) < 0) return;
  Shard& sh = my_shard();
  ShardLock lock(sh);
  sh.used[dev][kind].store(sh.used[dev][kind].load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
  if (kind == kHost) return;
  // A shard keeps at most two chunks it does not use; the rest goes back to the device.
  const uint64_t used = sh.used[dev][kDevice].load(std::memory_order_relaxed) +
                        sh.used[dev][kManaged].load(std::memory_order_relaxed);
  const uint64_t quota = sh.quota[dev].load(std::memory_order_relaxed);
  if (quota > used + 2 * kQuotaChunk) {
    const uint64_t back = quota - used - kQuotaChunk;
    sh.quota[dev].store(quota - back, std::memory_order_relaxed);
    devs_[dev].reserved.fetch_sub(back, std::memory_order_relaxed);
  }
}

uint64_t Ledger::used(uint32_t dev) const noexcept {
  uint64_t u = 0;
  for (uint32_t i = 0, n = slots_in_use(*hdr_); i < n; ++i)
    if (state_of(procs_[i].state.load(std::memory_order_acquire)) == kReady) u += slot_used(procs_[i], dev);
  return u;
}
uint64_t Ledger::total(uint32_t dev) const noexcept { return devs_[dev].total; }

void Ledger::empty_slot(ProcSlot& s) noexcept {
  for (Shard& sh : s.shards) {
    for (uint32_t d = 0; d < kMaxDevices; ++d) {
      const uint64_t q = sh.quota[d].exchange(0, std::memory_order_relaxed);
      if (q) devs_[d].reserved.fetch_sub(q, std::memory_order_relaxed);
      for (auto& k : sh.used[d]) k.store(0, std::memory_order_relaxed);
      sh.high[d] = 0;
    }
    sh.lock.store(0, std::memory_order_relaxed);
  }
  for (auto& b : s.devices) b.store(0, std::memory_order_relaxed);
}

int Ledger::reap_dead() noexcept {
  int reaped = 0;
  const int mine = slot_.load(std::memory_order_relaxed);
  const int me = ::getpid();
  for (uint32_t i = 0, n = slots_in_use(*hdr_); i < n; ++i) {
    ProcSlot& s = procs_[i];
    if (static_cast<int>(i) == mine) continue;
    uint64_t w = s.state.load(std::memory_order_acquire);
    switch (state_of(w)) {
      case kReady:
        if (alive(s)) continue;
        break;
      case kBusy:
        if (!pid_gone(pid_of(w))) continue;  // being claimed: fields are not valid yet
        s.state.compare_exchange_strong(w, kFree, std::memory_order_acq_rel);
        continue;
      case kReclaiming:
        if (!pid_gone(pid_of(w))) continue;  // a live process is reclaiming it
        break;                               // its reclaimer died: finish the job
      default: continue;
    }
    if (!s.state.compare_exchange_strong(w, state_word(kReclaiming, me), std::memory_order_acq_rel)) continue;
    empty_slot(s);
    FG_LOG(Info, Core, "reclaimed the fake-GPU memory of exited process %d (%s)", s.pid, s.comm);
    s.pid = 0;
    s.state.store(kFree, std::memory_order_release);
    ++reaped;
  }
  return reaped;
}

std::vector<ProcessUsage> Ledger::processes(uint32_t dev) {
  reap_dead();
  std::vector<ProcessUsage> out;
  for (uint32_t i = 0, n = slots_in_use(*hdr_); i < n; ++i) {
    ProcSlot& s = procs_[i];
    if (state_of(s.state.load(std::memory_order_acquire)) != kReady) continue;
    ProcessUsage u{s.pid, std::string(s.comm, strnlen(s.comm, sizeof s.comm)), {}};
    bool any = false;
    for (int k = 0; k < kKinds; ++k) {
      for (const Shard& sh : s.shards) u.used[k] += sh.used[dev][k].load(std::memory_order_relaxed);
      any |= u.used[k] != 0;
    }
    if (any) out.push_back(std::move(u));
  }
  return out;
}

void Ledger::release_process() noexcept {
  const int i = slot_.exchange(-1, std::memory_order_acq_rel);
  if (i < 0) return;
  ProcSlot& s = procs_[i];
  empty_slot(s);
  s.pid = 0;
  s.state.store(kFree, std::memory_order_release);
}

void Ledger::after_fork_child() noexcept {
  // The child inherits the parent's slot index but holds nothing of its own: a slot of
  // its own, marked with the devices it shares with the parent.
  slot_.store(-1, std::memory_order_release);
  for (auto& h : highs_sum_) h.store(0, std::memory_order_relaxed);
  for (Peek& pk : peek_) pk = Peek{};
  try {
    claim_slot();
    for (auto [dev, ordinal] : my_devices_) mark_device(dev, ordinal);
  } catch (const std::exception& e) {
    FG_LOG(Error, Core, "forked child: %s", e.what());
  }
}

}  // namespace fg::ledger
