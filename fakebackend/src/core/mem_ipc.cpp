// SPDX-License-Identifier: Apache-2.0
// Memory IPC: exporting an allocation as a 64-byte handle another process opens (the arena's
// memfd, passed through the exporter's /proc/PID/fd), and closing what was opened.
#include "core/backend.h"

#include "common/log.h"
#include "core/peer_fd.h"
#include "core/usdt.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace fg {

namespace {
constexpr uint32_t kIpcMagic = 0x46474950;  // "FGIP"
struct IpcHandle {
  uint32_t magic;
  int32_t pid;
  uint64_t start_time;
  int32_t fd;
  int32_t device;
  uint64_t offset;
  uint64_t size;
  uint64_t base;  // exporter's address, so a process opening its own handle gets it back
  uint8_t pad[16];
};
static_assert(sizeof(IpcHandle) == 64);
}  // namespace

Status Backend::ipc_export(const void* p, unsigned char handle[64]) {
  if (!handle) return Status::InvalidValue;
  auto a = mem_find(p);
  if (!a || a->kind != MemKind::Device || !a->arena) return Status::InvalidValue;
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.pid = ::getpid();
  h.start_time = ledger::process_start_time(h.pid);
  h.fd = a->arena->memfd();
  h.device = a->device;
  h.offset = a->base - a->arena->begin();
  h.size = a->size;
  h.base = a->base;
  std::memcpy(handle, &h, sizeof h);
  return Status::Ok;
}

Status Backend::ipc_open(const unsigned char handle[64], void** out) {
  if (!handle || !out) return Status::InvalidValue;
  IpcHandle h;
  std::memcpy(&h, handle, sizeof h);
  if (h.magic != kIpcMagic || h.size == 0) return Status::InvalidValue;
  if (h.pid == ::getpid()) return Status::InvalidContext;  // as real: a process cannot open its own handle
  if (ledger::process_start_time(h.pid) != h.start_time) return Status::InvalidValue;  // exporter gone
  int fd = open_peer_fd(h.pid, h.start_time, h.fd);
  if (fd < 0) {
    FG_LOG(Warn, Core, "IPC handle of process %d: cannot open its device memory (%s)", h.pid, std::strerror(errno));
    return Status::InvalidValue;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint64_t off = h.offset / static_cast<uint64_t>(page) * static_cast<uint64_t>(page);
  const uint64_t len = h.offset + h.size - off;
  void* m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(off));
  ::close(fd);
  if (m == MAP_FAILED) return Status::OutOfMemory;
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(m) + (h.offset - off);
  a.size = h.size;
  a.span = len;
  a.kind = MemKind::IpcMapped;
  a.device = h.device < device_count() ? h.device : 0;
  std::lock_guard lock(mu_);
  registered_.emplace(a.base, a);
  *out = reinterpret_cast<void*>(a.base);
  return Status::Ok;
}

Status Backend::ipc_close(void* p) {
  std::lock_guard lock(mu_);
  auto it = registered_.find(reinterpret_cast<uintptr_t>(p));
  if (it == registered_.end() || it->second.kind != MemKind::IpcMapped) return Status::InvalidValue;
  const long page = ::sysconf(_SC_PAGESIZE);
  const uintptr_t map_base = it->second.base / static_cast<uintptr_t>(page) * static_cast<uintptr_t>(page);
  ::munmap(reinterpret_cast<void*>(map_base), it->second.span);
  registered_.erase(it);
  return Status::Ok;
}

}  // namespace fg
