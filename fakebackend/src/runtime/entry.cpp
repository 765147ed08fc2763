// SPDX-License-Identifier: Apache-2.0
// cudaGetDriverEntryPoint / cudaGetDriverEntryPointByVersion: the runtime's door to the
// driver API (PyTorch's c10::cuda::DriverAPI, TransformerEngine, Triton resolve cuMem*,
// cuStreamWriteValue32, ... this way). The answer is exactly cuGetProcAddress_v2's: the
// driver shim owns the (name, version, flags) → entry point table (driver/entry.cpp), so the
// two APIs can never disagree and nothing is listed twice. cudaDriverEntryPointQueryResult
// and CUdriverProcAddressQueryResult share their values (0 found, 1 no such symbol,
// 2 version not sufficient), as do cudaEnable* and CU_GET_PROC_ADDRESS_* flags.
#include "runtime/common.h"

using namespace fgapi;
using fg::rt::api;

// The driver's cuGetProcAddress_v2 implementation (driver/entry.cpp): a hidden function, not
// the exported entry point, so a runtime call still crosses exactly one probed symbol. The
// list machinery guarantees the name exists (a weak NOT_SUPPORTED stub otherwise). It
// records unresolved names in the coverage report itself.
extern "C" FG_IMPL CUresult fgimpl_cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                                       unsigned long long flags,
                                                       CUdriverProcAddressQueryResult* status);

namespace {

// A plain cudaGetDriverEntryPoint asks for the runtime's own version; no driver ABI is newer
// than the driver's.
constexpr int kRuntimeVersion = fg::version::kRuntime13;
constexpr int kDriverVersion = fg::version::kCudaDriver;

cudaError_t entry_point(const char* symbol, void** funcPtr, int version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus, bool per_thread) {
  if (!symbol || !funcPtr) return cudaErrorInvalidValue;
  if (flags > cudaEnablePerThreadDefaultStream) return cudaErrorInvalidValue;
  if (version > kDriverVersion) return cudaErrorInvalidValue;
  // cudaEnableDefault means "as this code was compiled": per-thread for the _ptsz entry
  // points (code built with --default-stream per-thread), else the legacy stream.
  if (flags == cudaEnableDefault && per_thread) flags = cudaEnablePerThreadDefaultStream;
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (fgimpl_cuGetProcAddress_v2(symbol, &fn, version, flags, &status) != CUDA_SUCCESS) fn = nullptr;
  if (!fn && status == CU_GET_PROC_ADDRESS_SUCCESS) status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
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
extern "C" FG_IMPL cudaError_t
fgimpl_cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus) {
  return api([&]() -> cudaError_t {
    if (cudaVersion > static_cast<unsigned>(kDriverVersion)) return cudaErrorInvalidValue;
    return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, true);
  });
}
