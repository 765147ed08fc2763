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

// enum fg_class (bpf/fakegpu_events.h), scoped.
enum class FuncClass : uint8_t {
  Other = FG_C_OTHER,
  Alloc = FG_C_ALLOC,
  AllocPitch = FG_C_ALLOC_PITCH,
  Free = FG_C_FREE,
  SetDevice = FG_C_SET_DEVICE,
  CtxCreate = FG_C_CTX_CREATE,
  CtxCreate4 = FG_C_CTX_CREATE4,
  PrimaryRetain = FG_C_PRIMARY,
  CtxSet = FG_C_CTX_SET,
  Copy = FG_C_COPY,
  Launch = FG_C_LAUNCH,
  VmmCreate = FG_C_VMM_CREATE,
  VmmRelease = FG_C_VMM_RELEASE,
  CtxDestroy = FG_C_CTX_DESTROY,          // frees what the context held (implicit frees)
  PrimaryReset = FG_C_PRIMARY_RESET,      // frees what the device's primary context held
  PrimaryRelease = FG_C_PRIMARY_RELEASE,  // the last release frees it too
};

struct TracedFunction {
  std::string_view name;
  FuncClass cls;
  uint8_t kind;       // enum fg_mem_kind (allocations)
  uint8_t api;        // enum fg_api
  uint8_t direction;  // cudaMemcpyKind of a driver copy (0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 default)
  // Allocation and free functions are booked by the backend's USDT probes where a library
  // has them; entry/return probes then stay off them (one probe hit per call).
  bool covered_by_usdt() const {
    return cls == FuncClass::Alloc || cls == FuncClass::AllocPitch || cls == FuncClass::Free ||
           cls == FuncClass::VmmCreate || cls == FuncClass::VmmRelease;
  }
  // Context teardown: with USDT the backend's implicit-free probes book what it frees, so
  // the entry/return probes only count and time the call.
  bool frees_booked_by_usdt() const {
    return cls == FuncClass::CtxDestroy || cls == FuncClass::PrimaryReset || cls == FuncClass::PrimaryRelease;
  }
};

std::span<const TracedFunction> traced_functions();

// The attach cookie of function `index` (FG_COOKIE, bpf/fakegpu_events.h), with the class it is
// attached as (a USDT-covered library attaches nothing for allocation classes).
uint64_t cookie(uint32_t index, const TracedFunction& f);

}  // namespace fgtrace
