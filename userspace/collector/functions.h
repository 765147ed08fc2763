// SPDX-License-Identifier: Apache-2.0
// The API functions fakegpu-trace attaches entry/return probes to, and what each one means
// to the books. The index of an entry is the `func` of events and of the call counters;
// class, kind, API layer and copy direction travel to the BPF programs in the attach cookie.
#pragma once
#include "core/event.h"  // bpf/fakegpu_events.h: the cookie layout and enum fg_class

#include <cstdint>
#include <span>
#include <string_view>

namespace fgtrace {

struct TracedFunction {
  std::string_view name;
  fg_class cls;       // bpf/fakegpu_events.h
  uint8_t kind;       // enum fg_mem_kind (allocations; 0 otherwise)
  uint8_t api;        // enum fg_api
  uint8_t direction;  // cudaMemcpyKind of a driver copy (0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 default)
  // Allocation and free functions are booked by the backend's USDT probes where a library
  // has them; entry/return probes then stay off them (one probe hit per call).
  bool covered_by_usdt() const {
    return cls == FG_C_ALLOC || cls == FG_C_ALLOC_PITCH || cls == FG_C_FREE || cls == FG_C_VMM_CREATE ||
           cls == FG_C_VMM_RELEASE;
  }
  // Context teardown: with USDT the backend's implicit-free probes book what it frees, so
  // the entry/return probes only count and time the call.
  bool frees_booked_by_usdt() const {
    return cls == FG_C_CTX_DESTROY || cls == FG_C_PRIMARY_RESET || cls == FG_C_PRIMARY_RELEASE;
  }
};

std::span<const TracedFunction> traced_functions();

// The attach cookie of function `index` (FG_COOKIE, bpf/fakegpu_events.h), with the class it is
// attached as (a USDT-covered library attaches nothing for allocation classes).
uint64_t cookie(uint32_t index, const TracedFunction& f);

}  // namespace fgtrace
