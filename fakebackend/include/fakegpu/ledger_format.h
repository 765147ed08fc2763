// SPDX-License-Identifier: Apache-2.0
// The device ledger's segment format: the one cross-process contract through which every
// process using the fake backend sees the same fake GPUs, and which fakegpu-trace reads
// (without linking the backend) to learn what processes held before it attached.
//
// The segment is a file in /dev/shm (default_path_for(uid), or $FAKEGPU_LEDGER) mapped
// shared by every backend process: a Header, the device table (kMaxDevices DeviceEntry, from
// device_table_offset()) and the process slots (kMaxProcs ProcSlot, from
// proc_table_offset()), file_size() bytes in all. Per device it holds the bytes booked by all
// processes (the capacity check); per process slot, what that process holds on each device
// (NVML's running-process lists, reclaim after a crash, fakegpu-trace's baseline).
//
// Only lock-free atomics live in the segment, so a process SIGKILLed at any instruction
// leaves no lock held; its slot is reclaimed by the next process that looks.
//
// Versioning: kVersion names this layout and its meaning. Any change to a type, constant or
// rule in this file (a field added, moved or resized, a state added, a bound changed) bumps
// it. A reader accepts exactly its own version (header_valid()), and the version is part of
// the default file name, so processes of two fakegpu versions never share a segment and an
// old segment never stops a new one.
#pragma once
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "fakegpu/mem_kind.h"

namespace fg::ledger {

inline constexpr uint32_t kMaxDevices = 256;
inline constexpr uint32_t kMaxProcs = 1024;
inline constexpr uint32_t kVersion = 5;
// Threads of a process book into kShards shards of its slot (thread i uses shard i % kShards),
// so concurrent allocations of one process do not fight over one cache line.
inline constexpr uint32_t kShards = 4;
// A shard reserves device capacity in chunks; only a chunk boundary touches the device's
// shared counter. Near capacity an exact check of every process's usage decides.
inline constexpr uint64_t kQuotaChunk = 256ull << 20;

// The books' columns: the booked memory kinds of fakegpu/mem_kind.h, under their numbers.
enum Kind : int {
  kDevice = FG_MEM_DEVICE,
  kManaged = FG_MEM_MANAGED,
  kHost = FG_MEM_HOST,
  kKinds = FG_MEM_BOOKED_KINDS
};

// Every entry and slot is guarded by one 64-bit state word: (pid << 8) | state, where pid
// is the process that last moved it. A process killed in the middle of filling or
// reclaiming leaves a state that names it; the next process sees that pid is gone and
// takes over, so nothing waits on a dead process.
inline constexpr uint64_t kFree = 0, kBusy = 1, kReady = 2, kReclaiming = 3;
inline constexpr uint64_t state_word(uint64_t st, int pid) { return (static_cast<uint64_t>(pid) << 8) | st; }
inline constexpr uint64_t state_of(uint64_t w) { return w & 0xff; }
inline constexpr int pid_of(uint64_t w) { return static_cast<int>(w >> 8); }

struct alignas(64) DeviceEntry {
  std::atomic<uint64_t> state;  // kFree, kBusy (being filled), kReady
  uint8_t uuid[16];
  uint64_t total;                    // capacity in bytes
  std::atomic<uint64_t> reserved;    // capacity handed to shards (Σ of their quotas), never above
                                     // total (an exact check first takes back unused quotas)
  std::atomic<uint64_t> exact_lock;  // state word (kBusy, pid) while an exact check runs
  char name[96];
};

struct alignas(64) Shard {
  std::atomic<uint32_t> lock;  // taken by this process's threads only
  uint32_t reserved0;
  std::atomic<uint64_t> used[kMaxDevices][kKinds];  // exact bytes, by ledger device index
  std::atomic<uint64_t> quota[kMaxDevices];         // capacity reserved (device + managed)
  uint64_t high[kMaxDevices];                       // this shard's highest device + managed bytes (peak checks)
};

struct alignas(64) ProcSlot {
  std::atomic<uint64_t> state;  // kFree, kBusy (being claimed), kReady (live), kReclaiming
  int32_t pid;
  uint32_t reserved0;
  uint64_t start_time;  // /proc/PID/stat starttime: tells a reused pid apart
  char comm[16];
  // Device entries this process uses: an entry no live slot references can be reused.
  std::atomic<uint64_t> devices[kMaxDevices / 64];
  // The ordinal each used entry has inside this process (CUDA_VISIBLE_DEVICES and its own
  // configuration decide), -1 where none: lets an observer that attaches later name the
  // devices of what the process already holds.
  int16_t ordinal[kMaxDevices];
  Shard shards[kShards];
};

struct Header {
  char magic[8];         // "FAKEGPU\0"
  uint32_t version;      // kVersion
  uint32_t header_size;  // sizeof(Header)
  uint64_t file_size;
  uint32_t max_devices, max_procs;
  uint32_t device_entry_size, proc_slot_size;
  std::atomic<uint32_t> ready;  // 1 once the creator has initialised the segment
  int32_t creator_pid;
  // Slots at this index and past it have never been claimed: a scan of the slots stops here
  // (slots_in_use()). A claimer raises it to past its slot before the slot becomes kReady;
  // it never goes down. A start-up that looks for dead processes then reads a page per slot
  // ever used, not the whole table.
  std::atomic<uint32_t> slot_limit;
  uint32_t reserved0;
  uint64_t reserved[7];
};

// The slots a scan must look at: [0, slots_in_use(h)).
inline uint32_t slots_in_use(const Header& h) noexcept {
  const uint32_t n = h.slot_limit.load(std::memory_order_seq_cst);
  return n < kMaxProcs ? n : kMaxProcs;
}

// Records that slot i is (being) claimed: slots_in_use() covers it from now on.
inline void note_slot_claimed(Header& h, uint32_t i) noexcept {
  uint32_t n = h.slot_limit.load(std::memory_order_seq_cst);
  while (n <= i && !h.slot_limit.compare_exchange_weak(n, i + 1, std::memory_order_seq_cst)) {}
}

inline constexpr char kMagic[8] = {'F', 'A', 'K', 'E', 'G', 'P', 'U', '\0'};

// Layout: the header, the device table on a cache line, the slots on a page.
constexpr size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
constexpr size_t device_table_offset() { return round_up(sizeof(Header), 64); }
constexpr size_t proc_table_offset() {
  return round_up(device_table_offset() + sizeof(DeviceEntry) * kMaxDevices, 4096);
}
constexpr size_t file_size() { return round_up(proc_table_offset() + sizeof(ProcSlot) * kMaxProcs, 4096); }

// A segment of exactly this format (the creator's fields; `ready` is the creator's to set).
inline bool header_valid(const Header& h, size_t mapped_bytes) noexcept {
  return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.version == kVersion && h.header_size == sizeof(Header) &&
         h.file_size == mapped_bytes && mapped_bytes == file_size() && h.max_devices == kMaxDevices &&
         h.max_procs == kMaxProcs && h.device_entry_size == sizeof(DeviceEntry) && h.proc_slot_size == sizeof(ProcSlot);
}

// A device entry's UUID as text, as NVML and nvidia-smi print it: "GPU-" + 8-4-4-4-12
// lower-case hex.
inline std::string uuid_text(const uint8_t u[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[u[i] >> 4];
    s += kHex[u[i] & 0xF];
  }
  return s;
}

// The default segment of a user; $FAKEGPU_LEDGER overrides it in the backend.
inline std::string default_path_for(unsigned long uid) {
  return "/dev/shm/fakegpu-" + std::to_string(uid) + ".v" + std::to_string(kVersion) + ".ledger";
}

// A slot is live while the process it names runs: same pid and same start time (a reused
// pid does not count). The backend reclaims dead slots; readers skip them.
// Starting time of a process (clock ticks since boot, /proc/PID/stat field 22); 0 if it
// does not exist or is exiting.
inline uint64_t process_start_time(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // comm may contain spaces and parentheses: fields resume after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return 0;
  // Field 3 (state) follows; starttime is field 22. A zombie (Z) or dying (X) process
  // has closed its files — the real driver has freed its memory by then — so it counts
  // as gone even before its parent reaps it.
  if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')) return 0;
  int field = 2;
  for (++p; *p && field < 22; ++p)
    if (*p == ' ') ++field;
  return std::strtoull(p, nullptr, 10);
}

// The process `pid` that started at `start_time` still runs (a reused pid does not count).
inline bool process_alive(int pid, uint64_t start_time) noexcept {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const uint64_t st = process_start_time(pid);
  return st != 0 && st == start_time;
}

}  // namespace fg::ledger
