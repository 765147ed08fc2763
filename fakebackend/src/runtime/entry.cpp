// cudaGetDriverEntryPoint / cudaGetDriverEntryPointByVersion: the runtime's door to the
// driver API (PyTorch's c10::cuda::DriverAPI, TransformerEngine, Triton resolve cuMem*,
// cuStreamWriteValue32, ... this way). The answer is exactly cuGetProcAddress_v2's: the
// driver shim owns the (name, version, flags) → entry point table (driver/proc.cpp), so the
// two APIs can never disagree and nothing is listed twice.
#include "runtime/common.h"

#include "common/coverage.h"

using namespace fgapi;
using fg::rt::api;

namespace fg::driver {
// Defined in driver/proc.cpp. Resolves `name` as cuGetProcAddress_v2(name, fn, version, flags,
// status) would: returns a CUresult (0 = found), sets *fn (nullptr when not found) and
// *status (CUdriverProcAddressQueryResult: 0 success, 1 symbol not found, 2 version not
// sufficient), and records unresolved names for the coverage report. Declared weak so the
// runtime links while the driver side is missing; the runtime then finds nothing.
[[gnu::weak]] int resolve_proc(const char* name, int version, unsigned long long flags, void** fn,
                               int* status) noexcept;
}  // namespace fg::driver

namespace {

// The version a plain cudaGetDriverEntryPoint asks for: the runtime's own (CUDA 13.0).
constexpr int kRuntimeVersion = 13000;
// The newest driver ABI there is to ask for (cudaDriverGetVersion).
constexpr int kDriverVersion = 13000;

cudaError_t entry_point(const char* symbol, void** funcPtr, int version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus, bool per_thread) {
  if (!symbol || !funcPtr) return cudaErrorInvalidValue;
  if (flags > cudaEnablePerThreadDefaultStream) return cudaErrorInvalidValue;
  if (version > kDriverVersion) return cudaErrorInvalidValue;
  // cudaEnableDefault means "as this code was compiled": per-thread for the _ptsz entry
  // points (code built with --default-stream per-thread), else the legacy stream.
  if (flags == cudaEnableDefault && per_thread) flags = cudaEnablePerThreadDefaultStream;
  void* fn = nullptr;
  int status = cudaDriverEntryPointSymbolNotFound;
  if (fg::driver::resolve_proc) {
    if (fg::driver::resolve_proc(symbol, version, flags, &fn, &status) != 0) fn = nullptr;
  } else {
    fg::coverage::unresolved_proc(symbol, version, flags);
  }
  if (!fn && status == cudaDriverEntryPointSuccess) status = cudaDriverEntryPointSymbolNotFound;
  // Not found is not an error here: funcPtr is null and driverStatus says why.
  *funcPtr = fn;
  if (driverStatus) *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
  return cudaSuccess;
}

}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDriverEntryPoint(const char* symbol, void** funcPtr,
                                                              unsigned long long flags,
                                                              cudaDriverEntryPointQueryResult* driverStatus) {
  return api([&] { return entry_point(symbol, funcPtr, kRuntimeVersion, flags, driverStatus, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                                                   unsigned long long flags,
                                                                   cudaDriverEntryPointQueryResult* driverStatus) {
  return api([&] { return entry_point(symbol, funcPtr, kRuntimeVersion, flags, driverStatus, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                                       unsigned int cudaVersion,
                                                                       unsigned long long flags,
                                                                       cudaDriverEntryPointQueryResult* driverStatus) {
  return api([&]() -> cudaError_t {
    if (cudaVersion > static_cast<unsigned>(kDriverVersion)) return cudaErrorInvalidValue;
    return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, false);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    cudaDriverEntryPointQueryResult* driverStatus) {
  return api([&]() -> cudaError_t {
    if (cudaVersion > static_cast<unsigned>(kDriverVersion)) return cudaErrorInvalidValue;
    return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, true);
  });
}
