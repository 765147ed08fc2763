// SPDX-License-Identifier: Apache-2.0
// Sharing stream-ordered pool allocations between processes: cuMemPoolExportToShareableHandle
// / cuMemPoolImportFromShareableHandle / cuMemPoolExportPointer / cuMemPoolImportPointer and
// their runtime twins, on top of the core's IPC (Backend::ipc_export / ipc_open map the
// exporter's device-memory file through /proc/PID/fd, so the bytes are really shared).
//
// The pool's shareable handle is a POSIX file descriptor (a small memfd naming the exporting
// process and pool); the importer gets a local pool object that stands for the exporter's
// pool. A pointer's export data is the core's 64-byte IPC handle of the allocation. Imported
// pointers are released with cuMemFree / cudaFree (release() below).
#pragma once
#include "core/backend.h"

namespace fg::pool_ipc {

// CUmemAllocationHandleType / cudaMemAllocationHandleType bit of POSIX file descriptors.
inline constexpr unsigned kPosixFd = 0x1;

// A new file descriptor (the caller owns it) naming pool p. InvalidValue unless p was
// created with POSIX file descriptor handles.
Status export_pool(MemPool* p, int* fd);
// A local pool object for the exporting process's pool named by fd (fd stays the caller's).
// InvalidValue for a descriptor that is not such a handle or whose exporter has exited.
Status import_pool(int fd, MemPool** out);
bool is_imported(const MemPool* p) noexcept;
// The export data of ptr: the base of an allocation from a pool created with POSIX handles.
Status export_pointer(const void* ptr, unsigned char out[64]);
// Maps the exporter's allocation into this process; pool must be an imported pool.
Status import_pointer(MemPool* pool, const unsigned char data[64], void** out);
// Unmaps an imported pointer (what cuMemFree / cudaFree do with one): true when p was one.
bool release(void* p) noexcept;

}  // namespace fg::pool_ipc
