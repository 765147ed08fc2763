#include "core/ledger.h"

#include "common/log.h"
#include "core/errors.h"

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

constexpr char kMagic[8] = {'F', 'A', 'K', 'E', 'G', 'P', 'U', '\0'};

constexpr size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
constexpr size_t kDevOffset = round_up(sizeof(Header), 64);
constexpr size_t kProcOffset = round_up(kDevOffset + sizeof(DeviceEntry) * kMaxDevices, 4096);
constexpr size_t kFileSize = round_up(kProcOffset + sizeof(ProcSlot) * kMaxProcs, 4096);

std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] void fail(const std::string& msg) { throw FatalError(msg); }

std::string fix_hint(const std::string& path) {
  return "remove it (rm " + path + ") while no fake-GPU process runs, or set FAKEGPU_LEDGER to another path";
}

void self_comm(char out[16]) {
  std::memset(out, 0, 16);
  int fd = ::open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = ::read(fd, out, 15);
  ::close(fd);
  if (n > 0 && out[n - 1] == '\n') out[n - 1] = '\0';
}

bool alive(const ProcSlot& s) noexcept {
  if (s.pid <= 0) return false;
  if (::kill(s.pid, 0) != 0 && errno == ESRCH) return false;
  // The pid exists; it is the same process only if it started at the same time.
  uint64_t st = process_start_time(s.pid);
  return st != 0 && st == s.start_time;
}

}  // namespace

uint64_t process_start_time(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // comm may contain spaces and parentheses: fields resume after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return 0;
  // Field 3 (state) follows; starttime is field 22.
  int field = 2;
  for (++p; *p && field < 22; ++p)
    if (*p == ' ') ++field;
  return std::strtoull(p, nullptr, 10);
}

std::string default_path() {
  if (const char* p = std::getenv("FAKEGPU_LEDGER"); p && *p) return p;
  return "/dev/shm/fakegpu-" + std::to_string(::getuid()) + ".ledger";
}

Ledger::Ledger(const std::string& path, bool isolated) : path_(path), isolated_(isolated) {
  size_ = kFileSize;
  if (isolated_) {
    base_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base_ == MAP_FAILED) fail("cannot map the private device ledger: " + errno_text(errno));
    hdr_ = static_cast<Header*>(base_);
    init_header();
  } else {
    attach_shared();
  }
  devs_ = reinterpret_cast<DeviceEntry*>(static_cast<char*>(base_) + kDevOffset);
  procs_ = reinterpret_cast<ProcSlot*>(static_cast<char*>(base_) + kProcOffset);
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
  void* m = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(size_)) == 0)
    m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("cannot size the device ledger " + path_ + ": " + errno_text(e));
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
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("the device ledger " + path_ + " is not a regular file; " + fix_hint(path_));
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
  if (hdr_->ready.load(std::memory_order_acquire) != 1 || std::memcmp(hdr_->magic, kMagic, sizeof kMagic) != 0 ||
      hdr_->version != kVersion || hdr_->header_size != sizeof(Header) || hdr_->file_size != size_ ||
      hdr_->max_devices != kMaxDevices || hdr_->max_procs != kMaxProcs ||
      hdr_->device_entry_size != sizeof(DeviceEntry) || hdr_->proc_slot_size != sizeof(ProcSlot)) {
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

uint32_t Ledger::register_device(const uint8_t uuid[16], uint64_t total, const std::string& name) {
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < kMaxDevices; ++i) {
      DeviceEntry& d = devs_[i];
      uint32_t st = d.state.load(std::memory_order_acquire);
      while (st == 1) {  // another process is filling this entry: a few stores
        struct timespec ts{0, 100000};
        ::nanosleep(&ts, nullptr);
        st = d.state.load(std::memory_order_acquire);
      }
      if (st == 2 && std::memcmp(d.uuid, uuid, 16) == 0) {
        if (d.total != total)
          fail("device " + name + " is already in the ledger " + path_ + " with " + std::to_string(d.total) +
               " bytes, this process configures " + std::to_string(total) +
               " bytes; give processes that share a ledger the same device configuration, or set FAKEGPU_LEDGER "
               "(or FAKEGPU_ISOLATED=1) to separate them");
        return i;
      }
      if (pass == 1 && st == 0) {
        uint32_t expected = 0;
        if (!d.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
          --i;  // lost the race: look at this entry again
          continue;
        }
        std::memcpy(d.uuid, uuid, 16);
        d.total = total;
        d.used.store(0, std::memory_order_relaxed);
        std::snprintf(d.name, sizeof d.name, "%s", name.c_str());
        d.state.store(2, std::memory_order_release);
        return i;
      }
    }
  }
  fail("the device ledger " + path_ + " is full (" + std::to_string(kMaxDevices) + " distinct devices); " +
       fix_hint(path_));
}

void Ledger::claim_slot() {
  if (slot_.load(std::memory_order_acquire) >= 0) return;
  const int pid = ::getpid();
  const uint64_t start = process_start_time(pid);
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (uint32_t i = 0; i < kMaxProcs; ++i) {
      ProcSlot& s = procs_[i];
      uint32_t expected = 0;
      if (!s.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
      s.pid = pid;
      s.start_time = start;
      self_comm(s.comm);
      for (auto& dev : s.used)
        for (auto& k : dev) k.store(0, std::memory_order_relaxed);
      s.state.store(2, std::memory_order_release);
      int none = -1;
      if (!slot_.compare_exchange_strong(none, static_cast<int>(i))) {
        s.state.store(0, std::memory_order_release);  // another thread of ours won
      }
      return;
    }
    reap_dead();
  }
  fail("the device ledger " + path_ + " has no free process slot (" + std::to_string(kMaxProcs) +
       " processes use fake GPUs at once)");
}

ProcSlot& Ledger::slot() noexcept { return procs_[slot_.load(std::memory_order_relaxed)]; }

bool Ledger::reserve(uint32_t dev, Kind kind, uint64_t bytes, uint64_t* mine) noexcept {
  if (slot_.load(std::memory_order_acquire) < 0) {
    try {
      claim_slot();
    } catch (const std::exception& e) {
      FG_LOG(Error, Core, "%s", e.what());
      return false;
    }
  }
  if (kind != kHost) {
    DeviceEntry& d = devs_[dev];
    uint64_t cur = d.used.load(std::memory_order_relaxed);
    do {
      if (bytes > d.total || cur > d.total - bytes) return false;
    } while (!d.used.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  }
  const uint64_t now = slot().used[dev][kind].fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (mine) *mine = now;
  return true;
}

uint64_t Ledger::mine(uint32_t dev, Kind kind) const noexcept {
  const int i = slot_.load(std::memory_order_acquire);
  return i < 0 ? 0 : procs_[i].used[dev][kind].load(std::memory_order_relaxed);
}

void Ledger::release(uint32_t dev, Kind kind, uint64_t bytes) noexcept {
  if (slot_.load(std::memory_order_relaxed) < 0) return;
  slot().used[dev][kind].fetch_sub(bytes, std::memory_order_relaxed);
  if (kind != kHost) devs_[dev].used.fetch_sub(bytes, std::memory_order_relaxed);
}

uint64_t Ledger::used(uint32_t dev) const noexcept { return devs_[dev].used.load(std::memory_order_relaxed); }
uint64_t Ledger::total(uint32_t dev) const noexcept { return devs_[dev].total; }

int Ledger::reap_dead() noexcept {
  int reaped = 0;
  const int mine = slot_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < kMaxProcs; ++i) {
    ProcSlot& s = procs_[i];
    if (static_cast<int>(i) == mine || s.state.load(std::memory_order_acquire) != 2) continue;
    if (alive(s)) continue;
    uint32_t expected = 2;
    if (!s.state.compare_exchange_strong(expected, 3, std::memory_order_acq_rel)) continue;
    for (uint32_t d = 0; d < kMaxDevices; ++d) {
      uint64_t booked = 0;
      for (int k = 0; k < kKinds; ++k) {
        uint64_t v = s.used[d][k].exchange(0, std::memory_order_relaxed);
        if (k != kHost) booked += v;
      }
      if (booked) devs_[d].used.fetch_sub(booked, std::memory_order_relaxed);
    }
    FG_LOG(Info, Core, "reclaimed the fake-GPU memory of exited process %d (%s)", s.pid, s.comm);
    s.pid = 0;
    s.state.store(0, std::memory_order_release);
    ++reaped;
  }
  return reaped;
}

std::vector<ProcessUsage> Ledger::processes(uint32_t dev) {
  reap_dead();
  std::vector<ProcessUsage> out;
  for (uint32_t i = 0; i < kMaxProcs; ++i) {
    ProcSlot& s = procs_[i];
    if (s.state.load(std::memory_order_acquire) != 2) continue;
    ProcessUsage u{s.pid, std::string(s.comm, strnlen(s.comm, sizeof s.comm)), {}};
    bool any = false;
    for (int k = 0; k < kKinds; ++k) {
      u.used[k] = s.used[dev][k].load(std::memory_order_relaxed);
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
  for (uint32_t d = 0; d < kMaxDevices; ++d) {
    uint64_t booked = 0;
    for (int k = 0; k < kKinds; ++k) {
      uint64_t v = s.used[d][k].exchange(0, std::memory_order_relaxed);
      if (k != kHost) booked += v;
    }
    if (booked) devs_[d].used.fetch_sub(booked, std::memory_order_relaxed);
  }
  s.pid = 0;
  s.state.store(0, std::memory_order_release);
}

void Ledger::after_fork_child() noexcept {
  // The child inherits the parent's slot index but holds nothing of its own.
  slot_.store(-1, std::memory_order_release);
}

}  // namespace fg::ledger
