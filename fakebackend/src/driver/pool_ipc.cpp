// SPDX-License-Identifier: Apache-2.0
// Driver memory-pool sharing between processes: cuMemPoolExportToShareableHandle,
// cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer.
// The model is in core/pool_ipc.h: the bytes are really shared (the exporter's device
// memory file is mapped), and an imported pointer is released with cuMemFree(Async).
#include "driver/internal.h"

#include "core/pool_ipc.h"

#include <climits>
#include <cstdint>

using namespace fg;
using namespace fg::drv;

namespace {

// Only POSIX file descriptors exist on Linux; the other known types are not supported.
CUresult handle_type(CUmemAllocationHandleType t) {
  switch (static_cast<int>(t)) {
    case CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: return CUDA_SUCCESS;
    case CU_MEM_HANDLE_TYPE_WIN32:
    case CU_MEM_HANDLE_TYPE_WIN32_KMT:
    case CU_MEM_HANDLE_TYPE_FABRIC: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

// handle_out is an int* that receives a new file descriptor (the caller owns it).
extern "C" FG_IMPL CUresult fgimpl_cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool,
                                                                    CUmemAllocationHandleType handleType,
                                                                    unsigned long long flags) {
  return with_handle(handle_out && flags == 0, pool, pool_arg, [&](Backend&, MemPool* p) -> CUresult {
    if (CUresult r = handle_type(handleType)) return r;
    return to_cu(pool_ipc::export_pool(p, static_cast<int*>(handle_out)));
  });
}

// handle is the file descriptor itself, cast to a pointer ((void*)(uintptr_t)fd).
extern "C" FG_IMPL CUresult fgimpl_cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle,
                                                                      CUmemAllocationHandleType handleType,
                                                                      unsigned long long flags) {
  return api([&](Backend&) -> CUresult {
    if (!pool_out || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = handle_type(handleType)) return r;
    const intptr_t fd = reinterpret_cast<intptr_t>(handle);
    if (fd < 0 || fd > INT_MAX) return CUDA_ERROR_INVALID_VALUE;
    MemPool* p = nullptr;
    if (CUresult r = to_cu(pool_ipc::import_pool(static_cast<int>(fd), &p))) return r;
    *pool_out = reinterpret_cast<CUmemoryPool>(p);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out, CUdeviceptr ptr) {
  return api([&](Backend&) -> CUresult {
    if (!shareData_out) return CUDA_ERROR_INVALID_VALUE;
    return to_cu(pool_ipc::export_pointer(ptr_of(ptr), shareData_out->reserved));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool,
                                                          CUmemPoolPtrExportData* shareData) {
  return with_handle(ptr_out && shareData, pool, pool_arg, [&](Backend&, MemPool* p) -> CUresult {
    void* out = nullptr;
    const Status st = pool_ipc::import_pointer(p, shareData->reserved, &out);
    if (st == Status::InvalidContext) return CUDA_ERROR_INVALID_VALUE;  // this process's own allocation
    if (CUresult r = to_cu(st)) return r;
    *ptr_out = dptr_of(out);
    return CUDA_SUCCESS;
  });
}
