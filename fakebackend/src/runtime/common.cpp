// SPDX-License-Identifier: Apache-2.0
#include "runtime/common.h"

using namespace fgapi;

namespace fg::rt {

cudaError_t context(Context** out) {
  Backend& b = be();
  if (b.device_count() == 0) return cudaErrorNoDevice;
  return to_cuda(b.runtime_ctx(out));
}

cudaError_t stream(cudaStream_t handle, bool per_thread, Stream** out) {
  const auto h = reinterpret_cast<uintptr_t>(handle);
  Context* ctx = nullptr;
  if (h <= 2) {  // 0, cudaStreamLegacy (1), cudaStreamPerThread (2): the current context's
    if (cudaError_t e = context(&ctx); e != cudaSuccess) return e;
  }
  return to_cuda(be().stream_resolve(reinterpret_cast<void*>(handle), ctx, out, per_thread));
}

cudaError_t symbol_range(const void* symbol, size_t count, size_t offset, char** where) {
  Symbol* sym = symbol ? be().symbol_by_host(symbol) : nullptr;
  if (!sym || !sym->dev_ptr) return cudaErrorInvalidSymbol;
  if (offset > sym->size || count > sym->size - offset) return cudaErrorInvalidValue;
  *where = static_cast<char*>(sym->dev_ptr) + offset;
  return cudaSuccess;
}

}  // namespace fg::rt
