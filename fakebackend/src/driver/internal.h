// SPDX-License-Identifier: Apache-2.0
// Hidden helpers shared between the driver's domain files (not part of any API).
#pragma once
#include "driver/common.h"

#include "core/graph.h"

#include <cstddef>
#include <cstdint>

namespace fg::drv {

// ---- virtual memory management (vmm.cpp) ---------------------------------------------------------
// The core's allocation table does not know cuMemMap'd ranges; copies, memsets, pointer
// attributes and address-range queries ask here when the core does not know a pointer.
namespace vmm {

struct Info {
  bool mapped = false;     // false: reserved address space with nothing mapped at p
  uintptr_t res_base = 0;  // the cuMemAddressReserve range containing p
  uint64_t res_size = 0;
  uintptr_t map_base = 0;  // the cuMemMap range containing p (mapped only)
  uint64_t map_size = 0;
  int device = -1;            // device of the physical allocation
  uint64_t handle = 0;        // CUmemGenericAllocationHandle behind the mapping
  uint64_t handle_types = 0;  // CUmemAllocationProp::requestedHandleTypes
  unsigned access = 0;        // CUmemAccess_flags granted to `device` (0 none, 1 read, 3 read-write)
};

// Describes p if it lies in a reservation. Cheap when no reservation exists.
bool find(const void* p, Info* out) noexcept;

enum class Range { NotVmm, Ok, Bad };
// [p, p+n) as VMM memory: NotVmm when p is in no reservation; Ok when every byte is
// mapped with (read or read-write, per `write`) access; Bad otherwise.
Range check(const void* p, size_t n, bool write) noexcept;

}  // namespace vmm

// ---- modules and functions (module.cpp) ----------------------------------------------------------
// Their handles are the core's numbers (Backend::handle_of), not addresses.
inline CUmodule handle_of_module(const Module* m) noexcept { return static_cast<CUmodule>(Backend::handle_of(m)); }
inline CUfunction handle_of_function(const Function* f) noexcept {
  return static_cast<CUfunction>(Backend::handle_of(f));
}

// A CUfunction argument: a function handle, or a CUkernel (library kernel) cast to
// CUfunction, resolved in the current context. CUDA_ERROR_INVALID_HANDLE otherwise.
CUresult function_arg(Backend& b, CUfunction h, Function** out);

// ---- memory pools (pools.cpp) --------------------------------------------------------------------
// A CUmemoryPool argument: a live pool, else CUDA_ERROR_INVALID_VALUE (as the driver answers).
CUresult pool_arg(Backend& b, CUmemoryPool h, MemPool** out);

// ---- stream capture (core/graph.h) ------------------------------------------------------------------
// True when the capture of `s` took the work: make() is added as its node, or with `refused`
// the capture is invalidated (work that cannot be captured); *r is then the call's result.
// False: run it.
template <class MakeNode>
bool captured(Stream* s, bool refused, MakeNode make, CUresult* r) {
  if (!s || !graph::active()) return false;
  bool capturing = false;
  if (Status st = graph::route(s, &capturing); st != Status::Ok) {
    *r = to_cu(st);
    return true;
  }
  if (!capturing) return false;
  *r = to_cu(refused ? graph::refuse(s) : graph::capture(s, make()));
  return true;
}

// ---- copies (memcpy.cpp) ---------------------------------------------------------------------------
// One side of a copy or memset. A device side must be memory the driver knows (any
// allocation, registered or IPC range, module global, accessible VMM mapping) and the
// range must fit inside it; a host side may also be memory the driver does not know.
CUresult check_side(Backend& b, const void* p, size_t n, bool device_side, bool write) noexcept;

}  // namespace fg::drv

// An entry point and its per-thread-default-stream twin (_ptsz: a null stream is the calling
// thread's default stream): both make the call, with `ptsz` set for the twin.
#define FG_PTSZ(name, args, ...)                          \
  extern "C" FG_IMPL CUresult fgimpl_##name args {        \
    constexpr bool ptsz = false;                          \
    return __VA_ARGS__;                                   \
  }                                                       \
  extern "C" FG_IMPL CUresult fgimpl_##name##_ptsz args { \
    constexpr bool ptsz = true;                           \
    return __VA_ARGS__;                                   \
  }
