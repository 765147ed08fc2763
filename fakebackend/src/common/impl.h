// SPDX-License-Identifier: Apache-2.0
// Conventions for API implementations.
//
//   extern "C" FG_IMPL fgapi::cudaError_t fgimpl_cudaMalloc(void** dev_ptr, size_t size) { ... }
//
// defines the implementation behind the exported trampoline `cudaMalloc` (api_table.cpp).
// The name must match the list entry (fgimpl_<name>, or fgimpl_v12_<name> for the CUDA 12
// ABI of a SPLIT runtime name); a name without an implementation is a NOT_SUPPORTED stub.
// The signature must be the API's, with the fgapi:: types: the API folder's common.h includes
// the generated prototypes (fakegpu/cuda_api.h, cudart_api.h, nvml_api.h, made by
// scripts/gen-api-decls.py from NVIDIA's headers), so any other parameter or return type is a
// "conflicting declaration of C function" compile error. An enum is not an int, and a
// versioned name has the parameters of its own ABI version (plain cuMemAlloc: 32-bit sizes).
// Implementations are hidden, never call exported entry points, and never let an
// exception escape (use fg::guarded below).
#pragma once
#include <cstring>
#include <exception>
#include <new>
#include <type_traits>

#define FG_IMPL [[gnu::visibility("hidden")]]

namespace fg {

// An enum argument as the integer the caller passed. A C caller may pass any value, and
// loading an enum object that holds a value outside the enum's range is undefined (UBSan's
// enum check stops there), so range checks read the bytes instead.
template <class E>
std::underlying_type_t<E> enum_value(const E& e) noexcept {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

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
