// SPDX-License-Identifier: Apache-2.0
// A decoded collector event for the unit tests of the ledger's renderers and the server.
#pragma once
#include <cstdint>

#include "core/event.h"

namespace fgtrace::test {

inline Event ev(EventType type, uint32_t pid, int32_t dev, MemKind kind, uint64_t ptr, uint64_t size, uint64_t ts = 1) {
  Event e;
  e.type = type;
  e.pid = pid;
  e.tid = pid;
  e.device = dev;
  e.kind = kind;
  e.ptr = ptr;
  e.size = size;
  e.ts_ns = ts;
  return e;
}

}  // namespace fgtrace::test
