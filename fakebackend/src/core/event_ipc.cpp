// SPDX-License-Identifier: Apache-2.0
// Interprocess events: the shared slots behind them (core/event_ipc.h).
#include "core/event_ipc.h"

#include "common/log.h"
#include "core/peer_fd.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace fg::event_ipc {
namespace {

constexpr uint32_t kMagic = 0x45494746;  // "FGIE"
struct Handle {
  uint32_t magic;
  int32_t pid;
  uint64_t start_time;
  int32_t fd;  // the creator's event table
  uint32_t slot;
  uint32_t generation;
  uint8_t pad[36];
};
static_assert(sizeof(Handle) == 64);

// This process's event table.
struct Table {
  std::mutex mu;
  int fd = -1;
  Slot* slots = nullptr;
  std::vector<bool> used;
  uint32_t next = 0;  // where the search for a free slot starts
};
Table& table() {
  static auto* t = new Table;  // outlives static destruction: events may be destroyed at exit
  return *t;
}

bool make_table(Table& t) {
  if (t.slots) return true;
  const int fd = static_cast<int>(::syscall(SYS_memfd_create, "fakegpu-ipc-events", MFD_CLOEXEC));
  if (fd < 0) return false;
  const size_t len = sizeof(Slot) * kSlots;
  if (::ftruncate(fd, static_cast<off_t>(len)) != 0) {
    ::close(fd);
    return false;
  }
  void* m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    ::close(fd);
    return false;
  }
  t.fd = fd;
  t.slots = static_cast<Slot*>(m);  // zero-filled: every count 0, every generation 0
  t.used.assign(kSlots, false);
  return true;
}

long futex(const std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* timeout) noexcept {
  // Shared futexes (no FUTEX_PRIVATE_FLAG): the word is keyed by the file page, so a
  // waiter in one process is woken by a waker in another.
  return ::syscall(SYS_futex, const_cast<std::atomic<uint32_t>*>(word), op, val, timeout, nullptr, 0);
}

void release(Shared* s) noexcept;

}  // namespace

Status create(std::shared_ptr<Shared>* out) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  if (!make_table(t)) {
    FG_LOG(Warn, Core, "cannot make the interprocess event table: %s", std::strerror(errno));
    return Status::OutOfMemory;
  }
  for (uint32_t k = 0; k < kSlots; ++k) {
    const uint32_t i = (t.next + k) % kSlots;
    if (t.used[i]) continue;
    auto* s = new Shared;
    t.used[i] = true;
    t.next = i + 1;
    Slot* slot = &t.slots[i];
    slot->issued.store(0, std::memory_order_relaxed);
    slot->done.store(0, std::memory_order_relaxed);
    const uint32_t gen = slot->generation.fetch_add(1, std::memory_order_acq_rel) + 1;
    s->slot = slot;
    s->index = i;
    s->owner_pid = ::getpid();
    s->owner_start = ledger::process_start_time(s->owner_pid);
    Handle h{};
    h.magic = kMagic;
    h.pid = s->owner_pid;
    h.start_time = s->owner_start;
    h.fd = t.fd;
    h.slot = i;
    h.generation = gen;
    std::memcpy(s->handle, &h, sizeof h);
    out->reset(s, release);
    return Status::Ok;
  }
  return Status::OutOfMemory;
}

Status open(const unsigned char handle[64], std::shared_ptr<Shared>* out) {
  Handle h;
  std::memcpy(&h, handle, sizeof h);
  if (h.magic != kMagic || h.slot >= kSlots || h.generation == 0) return Status::InvalidValue;
  if (h.pid == ::getpid()) return Status::InvalidContext;  // as real: only another process opens it
  const int fd = open_peer_fd(h.pid, h.start_time, h.fd);
  if (fd < 0) return Status::InvalidValue;  // creator gone, or not its table
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint64_t at = static_cast<uint64_t>(h.slot) * sizeof(Slot);
  const uint64_t off = at / static_cast<uint64_t>(page) * static_cast<uint64_t>(page);
  const size_t len = static_cast<size_t>(at + sizeof(Slot) - off);
  void* m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(off));
  ::close(fd);
  if (m == MAP_FAILED) return Status::InvalidValue;  // not an event table (too short)
  auto* slot = reinterpret_cast<Slot*>(static_cast<char*>(m) + (at - off));
  if (slot->generation.load(std::memory_order_acquire) != h.generation) {  // the event was destroyed
    ::munmap(m, len);
    return Status::InvalidValue;
  }
  auto* s = new Shared;
  s->slot = slot;
  s->index = h.slot;
  s->imported = true;
  s->map = m;
  s->map_len = len;
  s->owner_pid = h.pid;
  s->owner_start = h.start_time;
  std::memcpy(s->handle, handle, sizeof s->handle);
  out->reset(s, release);
  return Status::Ok;
}

namespace {
void release(Shared* s) noexcept {
  if (!s) return;
  if (s->imported) {
    ::munmap(s->map, s->map_len);
  } else {
    Table& t = table();
    std::lock_guard lock(t.mu);
    // Handles still held elsewhere no longer open it: the generation moves on.
    if (s->slot && t.slots == s->slot - s->index) {
      s->slot->generation.fetch_add(1, std::memory_order_acq_rel);
      t.used[s->index] = false;
    }
  }
  delete s;
}
}  // namespace

void handle_of(const Shared* s, unsigned char out[64]) noexcept { std::memcpy(out, s->handle, sizeof s->handle); }

// Sequence numbers wrap; "a at or after b" is the signed distance.
static bool at_or_after(uint32_t a, uint32_t b) noexcept { return static_cast<int32_t>(a - b) >= 0; }

uint32_t record_queued(Shared* s) noexcept { return s->slot->issued.fetch_add(1, std::memory_order_acq_rel) + 1; }

void record_reached(Shared* s, uint32_t seq) noexcept {
  uint32_t cur = s->slot->done.load(std::memory_order_acquire);
  while (!at_or_after(cur, seq)) {
    if (s->slot->done.compare_exchange_weak(cur, seq, std::memory_order_acq_rel)) {
      futex(&s->slot->done, FUTEX_WAKE, INT_MAX, nullptr);
      return;
    }
  }
}

uint32_t latest(const Shared* s) noexcept { return s->slot->issued.load(std::memory_order_acquire); }

bool reached(const Shared* s, uint32_t seq) noexcept {
  return at_or_after(s->slot->done.load(std::memory_order_acquire), seq);
}

void wait(const Shared* s, uint32_t seq) noexcept {
  // The timeout only bounds how long a waiter goes without checking that the creator
  // still runs; reaching the record itself wakes it at once.
  const timespec tick{0, 100 * 1000 * 1000};
  for (;;) {
    const uint32_t d = s->slot->done.load(std::memory_order_acquire);
    if (at_or_after(d, seq)) return;
    futex(&s->slot->done, FUTEX_WAIT, d, &tick);
    if (s->imported && !reached(s, seq) && !ledger::process_alive(s->owner_pid, s->owner_start)) return;
  }
}

void after_fork_child() noexcept {
  // The inherited table is the parent's (a shared mapping of its memfd): the child leaves
  // it alone and makes its own on first use.
  Table& t = table();
  new (&t.mu) std::mutex;
  if (t.fd >= 0) ::close(t.fd);
  t.fd = -1;
  t.slots = nullptr;
  t.used.clear();
  t.next = 0;
}

}  // namespace fg::event_ipc
