// SPDX-License-Identifier: Apache-2.0
// Runtime memory-pool sharing between processes: cudaMemPoolExportToShareableHandle,
// cudaMemPoolImportFromShareableHandle, cudaMemPoolExportPointer, cudaMemPoolImportPointer.
// The model is in core/pool_ipc.h: the bytes are really shared, and an imported pointer is
// released with cudaFree(Async).
#include "runtime/common.h"

#include "core/pool_ipc.h"
#include "core/pool_ipc_types.h"

#include <climits>
#include <cstdint>

using namespace fgapi;
using fg::rt::api;
using fg::rt::pool_arg;
using fg::rt::to_cuda;

namespace {

cudaError_t handle_type(cudaMemAllocationHandleType t) {
  return to_cuda(fg::pool_ipc::check_handle_type(static_cast<int>(t)));
}

}  // namespace

// shareableHandle is an int* that receives a new file descriptor (the caller owns it).
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolExportToShareableHandle(void* shareableHandle, cudaMemPool_t memPool,
                                                                         cudaMemAllocationHandleType handleType,
                                                                         unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!shareableHandle || flags != 0) return cudaErrorInvalidValue;
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    if (cudaError_t e = handle_type(handleType); e != cudaSuccess) return e;
    return to_cuda(fg::pool_ipc::export_pool(p, static_cast<int*>(shareableHandle)));
  });
}

// shareableHandle is the file descriptor itself, cast to a pointer.
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolImportFromShareableHandle(cudaMemPool_t* memPool,
                                                                           void* shareableHandle,
                                                                           cudaMemAllocationHandleType handleType,
                                                                           unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!memPool || flags != 0) return cudaErrorInvalidValue;
    if (cudaError_t e = handle_type(handleType); e != cudaSuccess) return e;
    const intptr_t fd = reinterpret_cast<intptr_t>(shareableHandle);
    if (fd < 0 || fd > INT_MAX) return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;  // the runtime initialises its context first
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    fg::MemPool* p = nullptr;
    if (fg::Status st = fg::pool_ipc::import_pool(static_cast<int>(fd), &p); st != fg::Status::Ok) return to_cuda(st);
    *memPool = reinterpret_cast<cudaMemPool_t>(p);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolExportPointer(cudaMemPoolPtrExportData* exportData, void* ptr) {
  return api([&]() -> cudaError_t {
    if (!exportData) return cudaErrorInvalidValue;
    return to_cuda(fg::pool_ipc::export_pointer(ptr, exportData->reserved));
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolImportPointer(void** ptr, cudaMemPool_t memPool,
                                                               cudaMemPoolPtrExportData* exportData) {
  return api([&]() -> cudaError_t {
    if (!ptr || !exportData) return cudaErrorInvalidValue;
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    const fg::Status st = fg::pool_ipc::import_pointer(p, exportData->reserved, ptr);
    if (st == fg::Status::InvalidContext) return cudaErrorInvalidValue;  // this process's own allocation
    return to_cuda(st);
  });
}
