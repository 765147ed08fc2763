// SPDX-License-Identifier: Apache-2.0
// Coverage of the API surface: which NOT_SUPPORTED stubs (and calls needing a capability
// the fake lacks) were called and which cuGetProcAddress names could not be resolved. Listed in the exit report;
// FAKEGPU_STRICT=1 turns the first gap into an abort with its name.
#pragma once
#include "common/api_ids.h"

#include <map>
#include <string>

namespace fg::coverage {

// Called by a weak stub: records, logs once per name, aborts under FAKEGPU_STRICT,
// sets the runtime's last error for runtime names, returns the family's NOT_SUPPORTED code.
int stub_called(ApiId id) noexcept;
// Guard for the few non-error-returning names should one lack an implementation.
[[noreturn]] void unimplemented_noerr(ApiId id) noexcept;
// A slot of a driver export table (cuGetExportTable) the fake does not serve was called:
// recorded under `name` like a stub (strict aborts); returns CUDA_ERROR_NOT_SUPPORTED.
int export_gap(const char* name) noexcept;
// A call answered the way NVIDIA's driver answers on a machine without what it needs
// (`capability`, e.g. "OpenGL": graphics interop has no OpenGL, EGL or VDPAU here): the
// caller returns that answer itself; this records `name` like a stub, so the report's
// coverage shows the fake lacks it, and FAKEGPU_STRICT=1 aborts naming it.
void capability_gap(const char* name, const char* capability) noexcept;
// cuGetProcAddress / cudaGetDriverEntryPoint could not resolve `name` at `version`.
void unresolved_proc(const char* name, int version, unsigned long long flags) noexcept;

bool strict() noexcept;

// What the layers above this one do when a gap is met; they register it at load (this layer
// calls nothing above it). first_use: the core starts the backend, so that the exit report
// lists a process's gaps even when gaps were its only calls. runtime_stub: the runtime
// records cudaErrorNotSupported as the thread's last error and returns it.
void on_first_use(void (*fn)() noexcept) noexcept;
void on_runtime_stub(int (*fn)() noexcept) noexcept;

struct Snapshot {
  std::map<std::string, unsigned long long> stubs;       // name -> calls
  std::map<std::string, unsigned long long> unresolved;  // "name@version" -> requests
};
Snapshot snapshot();

}  // namespace fg::coverage
