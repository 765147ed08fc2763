// SPDX-License-Identifier: Apache-2.0
// Runtime odds and ends: profiler control, cudart's private export tables,
// __cudaGetProcAddress, __cudaRegisterUnifiedTable and cudaCreateChannelDesc.
#include "runtime/common.h"

#include "common/api_ids.h"
#include "common/coverage.h"

using namespace fgapi;
using fg::rt::api;

// There is no profiler to start or stop; both succeed, as they do when no profiling tool
// is attached to the real runtime.
extern "C" FG_IMPL cudaError_t fgimpl_cudaProfilerStart() {
  return api([]() -> cudaError_t { return cudaSuccess; });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaProfilerStop() {
  return api([]() -> cudaError_t { return cudaSuccess; });
}

// NVIDIA's libraries (cuBLAS, cuDNN, ...) fetch undocumented cudart tables by UUID here.
// They cannot be served; the out-pointer is cleared and the call is counted and answered
// like any NOT_SUPPORTED stub (coverage report, FAKEGPU_STRICT, last error).
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetExportTable(const void** ppExportTable, const cudaUUID_t* pExportTableId) {
  (void)pExportTableId;
  if (ppExportTable) *ppExportTable = nullptr;
  return static_cast<cudaError_t>(fg::coverage::stub_called(fg::ApiId::cudaGetExportTable));
}

// NVIDIA's libcudart.so.13 implements this as `return 0` (xor %eax,%eax; ret), whatever
// the arguments; 0 reads as NULL or as cudaSuccess.
extern "C" FG_IMPL void* fgimpl___cudaGetProcAddress() { return nullptr; }

// Registration of unified function tables (nvcc host code for code using unified function
// pointers): there is no device code to patch, so nothing to record.
extern "C" FG_IMPL void fgimpl___cudaRegisterUnifiedTable(void*, void*, void*, void*, void*) {}

// A pure value constructor (returned through a hidden pointer: 20 bytes).
extern "C" FG_IMPL cudaChannelFormatDesc fgimpl_cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                      cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}
