// SPDX-License-Identifier: Apache-2.0
#include "collector/functions.h"

namespace fgtrace {
namespace {

// Short names for the table's columns (bpf/fakegpu_events.h, fakegpu/mem_kind.h).
constexpr uint8_t kDevice = FG_MEM_DEVICE, kManaged = FG_MEM_MANAGED, kHost = FG_MEM_HOST, kVmm = FG_MEM_VMM;
constexpr uint8_t kRuntime = FG_API_RUNTIME, kDriver = FG_API_DRIVER;

// Every allocation and free path of both APIs, what attributes allocations to devices, the
// copies, the launches, and the synchronisation calls worth timing.
constexpr TracedFunction kFunctions[] = {
    // runtime: memory
    {"cudaMalloc", FG_C_ALLOC, kDevice, kRuntime, 0},
    {"cudaMallocPitch", FG_C_ALLOC_PITCH, kDevice, kRuntime, 0},
    {"cudaMallocManaged", FG_C_ALLOC, kManaged, kRuntime, 0},
    {"cudaMallocHost", FG_C_ALLOC, kHost, kRuntime, 0},
    {"cudaHostAlloc", FG_C_ALLOC, kHost, kRuntime, 0},
    {"cudaMallocAsync", FG_C_ALLOC, kDevice, kRuntime, 0},
    {"cudaMallocAsync_ptsz", FG_C_ALLOC, kDevice, kRuntime, 0},
    {"cudaMallocFromPoolAsync", FG_C_ALLOC, kDevice, kRuntime, 0},
    {"cudaMallocFromPoolAsync_ptsz", FG_C_ALLOC, kDevice, kRuntime, 0},
    {"cudaFree", FG_C_FREE, kDevice, kRuntime, 0},
    {"cudaFreeHost", FG_C_FREE, kHost, kRuntime, 0},
    {"cudaFreeAsync", FG_C_FREE, kDevice, kRuntime, 0},
    {"cudaFreeAsync_ptsz", FG_C_FREE, kDevice, kRuntime, 0},
    // runtime: device selection, copies, launches, synchronisation
    {"cudaSetDevice", FG_C_SET_DEVICE, 0, kRuntime, 0},
    {"cudaMemcpy", FG_C_COPY, 0, kRuntime, 0},
    {"cudaMemcpy_ptds", FG_C_COPY, 0, kRuntime, 0},
    {"cudaMemcpyAsync", FG_C_COPY, 0, kRuntime, 0},
    {"cudaMemcpyAsync_ptsz", FG_C_COPY, 0, kRuntime, 0},
    {"cudaLaunchKernel", FG_C_LAUNCH, 0, kRuntime, 0},
    {"cudaLaunchKernel_ptsz", FG_C_LAUNCH, 0, kRuntime, 0},
    {"__cudaLaunchKernel", FG_C_LAUNCH, 0, kRuntime, 0},
    {"__cudaLaunchKernel_ptsz", FG_C_LAUNCH, 0, kRuntime, 0},
    {"cudaLaunchKernelExC", FG_C_LAUNCH, 0, kRuntime, 0},
    {"cudaDeviceSynchronize", FG_C_OTHER, 0, kRuntime, 0},
    {"cudaStreamSynchronize", FG_C_OTHER, 0, kRuntime, 0},
    {"cudaMemGetInfo", FG_C_OTHER, 0, kRuntime, 0},
    {"cudaDeviceReset", FG_C_PRIMARY_RESET, 0, kRuntime, 0},
    // driver: memory
    {"cuMemAlloc_v2", FG_C_ALLOC, kDevice, kDriver, 0},
    {"cuMemAllocPitch_v2", FG_C_ALLOC_PITCH, kDevice, kDriver, 0},
    {"cuMemAllocManaged", FG_C_ALLOC, kManaged, kDriver, 0},
    {"cuMemAllocHost_v2", FG_C_ALLOC, kHost, kDriver, 0},
    {"cuMemHostAlloc", FG_C_ALLOC, kHost, kDriver, 0},
    {"cuMemAllocAsync", FG_C_ALLOC, kDevice, kDriver, 0},
    {"cuMemAllocAsync_ptsz", FG_C_ALLOC, kDevice, kDriver, 0},
    {"cuMemAllocFromPoolAsync", FG_C_ALLOC, kDevice, kDriver, 0},
    {"cuMemAllocFromPoolAsync_ptsz", FG_C_ALLOC, kDevice, kDriver, 0},
    {"cuMemFree_v2", FG_C_FREE, kDevice, kDriver, 0},
    {"cuMemFreeHost", FG_C_FREE, kHost, kDriver, 0},
    {"cuMemFreeAsync", FG_C_FREE, kDevice, kDriver, 0},
    {"cuMemFreeAsync_ptsz", FG_C_FREE, kDevice, kDriver, 0},
    {"cuMemCreate", FG_C_VMM_CREATE, kVmm, kDriver, 0},
    {"cuMemRelease", FG_C_VMM_RELEASE, kVmm, kDriver, 0},
    // driver: contexts (device attribution)
    {"cuCtxCreate_v2", FG_C_CTX_CREATE, 0, kDriver, 0},
    {"cuCtxCreate_v4", FG_C_CTX_CREATE4, 0, kDriver, 0},
    {"cuDevicePrimaryCtxRetain", FG_C_PRIMARY, 0, kDriver, 0},
    {"cuCtxSetCurrent", FG_C_CTX_SET, 0, kDriver, 0},
    {"cuCtxPushCurrent_v2", FG_C_CTX_SET, 0, kDriver, 0},
    {"cuCtxDestroy_v2", FG_C_CTX_DESTROY, 0, kDriver, 0},
    {"cuDevicePrimaryCtxRelease_v2", FG_C_PRIMARY_RELEASE, 0, kDriver, 0},
    {"cuDevicePrimaryCtxReset_v2", FG_C_PRIMARY_RESET, 0, kDriver, 0},
    // driver: copies and launches
    {"cuMemcpyHtoD_v2", FG_C_COPY, 0, kDriver, 1},
    {"cuMemcpyDtoH_v2", FG_C_COPY, 0, kDriver, 2},
    {"cuMemcpyDtoD_v2", FG_C_COPY, 0, kDriver, 3},
    {"cuMemcpy", FG_C_COPY, 0, kDriver, 4},
    {"cuMemcpyHtoDAsync_v2", FG_C_COPY, 0, kDriver, 1},
    {"cuMemcpyDtoHAsync_v2", FG_C_COPY, 0, kDriver, 2},
    {"cuMemcpyDtoDAsync_v2", FG_C_COPY, 0, kDriver, 3},
    {"cuMemcpyAsync", FG_C_COPY, 0, kDriver, 4},
    {"cuLaunchKernel", FG_C_LAUNCH, 0, kDriver, 0},
    {"cuLaunchKernel_ptsz", FG_C_LAUNCH, 0, kDriver, 0},
    {"cuLaunchKernelEx", FG_C_LAUNCH, 0, kDriver, 0},
    {"cuCtxSynchronize", FG_C_OTHER, 0, kDriver, 0},
    {"cuStreamSynchronize", FG_C_OTHER, 0, kDriver, 0},
};

}  // namespace

std::span<const TracedFunction> traced_functions() { return kFunctions; }

uint64_t cookie(uint32_t index, const TracedFunction& f) {
  return FG_COOKIE(index, static_cast<uint8_t>(f.cls), f.kind, f.api, f.direction);
}

}  // namespace fgtrace
