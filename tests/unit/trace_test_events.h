// SPDX-License-Identifier: Apache-2.0
// Decoded collector events, and the ledger scenarios several tests share, for the unit tests
// of the ledger, its renderers and the server.
#pragma once
#include <cstdint>
#include <string>

#include "core/event.h"
#include "../../userspace/core/ledger.h"

namespace fgtrace::test {

// An event of a single-threaded process (tid = pid) with nothing else set.
inline Event event_of(EventType type, uint32_t pid, uint64_t ts) {
  Event e;
  e.type = type;
  e.pid = pid;
  e.tid = pid;
  e.ts_ns = ts;
  return e;
}

// A memory event: `size` bytes at `ptr` of `kind` on device `dev`.
inline Event ev(EventType type, uint32_t pid, int32_t dev, MemKind kind, uint64_t ptr, uint64_t size, uint64_t ts = 1) {
  Event e = event_of(type, pid, ts);
  e.device = dev;
  e.kind = kind;
  e.ptr = ptr;
  e.size = size;
  return e;
}

// Process 5000, attached to while running, with a 1 GiB baseline on device 1, whose 80 GiB
// allocation there failed.
inline void add_attached(AllocationLedger& l, const std::string& comm = "server") {
  l.track_process(5000, comm, 1, 0, /*running_before_attach=*/true);
  l.set_baseline(5000, 1, MemKind::Device, 1ull << 30);
  l.apply(ev(EventType::AllocFail, 5000, 1, MemKind::Device, 0, 80ull << 30));
}

// Process 6000, a child of 4242 that exited at 50 still holding 256 MiB on device 1.
inline void add_exited(AllocationLedger& l, const std::string& comm = "leaky") {
  l.track_process(6000, comm, 4242, 0, false);
  l.apply(ev(EventType::Alloc, 6000, 1, MemKind::Device, 0x5, 256ull << 20));
  l.apply(ev(EventType::ProcExit, 6000, -1, MemKind::Unknown, 0, 0, 50));
}

// Process `pid`'s API activity: two cudaMalloc calls (900 ns, succeeded; 3000 ns, failed), a
// 4 KiB host-to-device copy and `launches` kernel launches.
inline void add_activity(AllocationLedger& l, uint32_t pid, uint64_t launches) {
  l.record_call(pid, "cudaMalloc", 900, true);
  l.record_call(pid, "cudaMalloc", 3000, false);
  l.record_copy(pid, CopyDirection::HtoD, 4096);
  l.record_launch(pid, launches);
}

}  // namespace fgtrace::test
