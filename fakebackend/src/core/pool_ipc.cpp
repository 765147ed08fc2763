// SPDX-License-Identifier: Apache-2.0
// Memory-pool export and import between processes (see core/pool_ipc.h).
#include "core/pool_ipc.h"

#include "core/ledger.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace fg::pool_ipc {

namespace {

constexpr uint32_t kMagic = 0x504F4F4C;  // "POOL"
constexpr uint32_t kVersion = 1;

// What the pool's file descriptor holds: the exporter, for the importer to check.
struct Record {
  uint32_t magic;
  uint32_t version;
  int32_t pid;
  int32_t device;
  uint64_t start_time;  // the exporter's start time: a recycled pid is not the exporter
  uint64_t pool_id;
};

struct Books {
  std::mutex mu;
  std::unordered_map<uint64_t, Record> imported_pools;  // local pool id → the exporter's pool
  std::unordered_set<uintptr_t> imported_ptrs;
};
// How many imported pointers are mapped: every cudaFree / cuMemFree asks release(), and
// most processes never import one, so the common answer needs no lock.
std::atomic<size_t> g_imported{0};
Books& books() {
  static auto* b = new Books;  // never destroyed: frees may come from atexit handlers
  return *b;
}

}  // namespace

Status export_pool(MemPool* p, int* fd) {
  if (!fd) return Status::InvalidValue;
  if (!(p->handle_types & kPosixFd)) return Status::InvalidValue;
  Record r{kMagic, kVersion, ::getpid(), p->dev->ordinal, ledger::process_start_time(::getpid()), p->id};
  const int f = ::memfd_create("fakegpu-mempool", MFD_CLOEXEC);
  if (f < 0) return Status::OutOfMemory;
  if (::pwrite(f, &r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
    ::close(f);
    return Status::OutOfMemory;
  }
  *fd = f;
  return Status::Ok;
}

Status import_pool(int fd, MemPool** out) {
  if (fd < 0 || !out) return Status::InvalidValue;
  Record r{};
  if (::pread(fd, &r, sizeof r, 0) != static_cast<ssize_t>(sizeof r) || r.magic != kMagic || r.version != kVersion)
    return Status::InvalidValue;
  if (ledger::process_start_time(r.pid) != r.start_time) return Status::InvalidValue;  // exporter gone
  Backend& b = Backend::get();
  Device* dev = b.device(r.device);
  if (!dev) return Status::InvalidValue;
  MemPool* p = nullptr;
  if (Status st = b.pool_create(dev, &p); st != Status::Ok) return st;
  p->handle_types = kPosixFd;
  std::lock_guard lock(books().mu);
  books().imported_pools[p->id] = r;
  *out = p;
  return Status::Ok;
}

bool is_imported(const MemPool* p) noexcept {
  std::lock_guard lock(books().mu);
  return books().imported_pools.count(p->id) != 0;
}

Status export_pointer(const void* ptr, unsigned char out[64]) {
  Backend& b = Backend::get();
  auto a = b.mem_find(ptr);
  if (!a || a->base != reinterpret_cast<uintptr_t>(ptr) || a->pool == 0) return Status::InvalidValue;
  MemPool* p = b.pool_by_id(a->pool);
  if (!p || !(p->handle_types & kPosixFd)) return Status::InvalidValue;
  return b.ipc_export(ptr, out);
}

Status import_pointer(MemPool* pool, const unsigned char data[64], void** out) {
  if (!data || !out || !is_imported(pool)) return Status::InvalidValue;
  if (Status st = Backend::get().ipc_open(data, out); st != Status::Ok) return st;
  std::lock_guard lock(books().mu);
  if (books().imported_ptrs.insert(reinterpret_cast<uintptr_t>(*out)).second)
    g_imported.fetch_add(1, std::memory_order_release);
  return Status::Ok;
}

bool release(void* p) noexcept {
  if (g_imported.load(std::memory_order_acquire) == 0) return false;
  {
    std::lock_guard lock(books().mu);
    if (books().imported_ptrs.erase(reinterpret_cast<uintptr_t>(p)) == 0) return false;
    g_imported.fetch_sub(1, std::memory_order_release);
  }
  (void)Backend::get().ipc_close(p);
  return true;
}

}  // namespace fg::pool_ipc
