// SPDX-License-Identifier: Apache-2.0
// Conventions for API implementations.
//
//   extern "C" FG_IMPL fgapi::cudaError_t fgimpl_cudaMalloc(void** dev_ptr, size_t size) { ... }
//
// defines the implementation behind the exported trampoline `cudaMalloc` (api_table.cpp).
// The name must match the list entry (fgimpl_<name>, or fgimpl_v12_<name> for the CUDA 12
// ABI of a SPLIT runtime name); a name without an implementation is a NOT_SUPPORTED stub.
// Implementations are hidden, never call exported entry points, and never let an
// exception escape (use fg::guarded below).
#pragma once
#include <exception>
#include <new>

#define FG_IMPL [[gnu::visibility("hidden")]]

namespace fg {

// Runs body(); maps std::bad_alloc to `oom` and any other exception to `internal`.
template <class R, class F>
R guarded(R oom, R internal, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return oom;
  } catch (...) {
    return internal;
  }
}

}  // namespace fg
