// SPDX-License-Identifier: Apache-2.0
#include "collector/functions.h"

namespace fgtrace {
namespace {

constexpr uint8_t kDevice = 0, kManaged = 1, kHost = 2, kVmm = 4;
constexpr uint8_t kRuntime = 0, kDriver = 1;
using C = FuncClass;

// Every allocation and free path of both APIs, what attributes allocations to devices, the
// copies, the launches, and the synchronisation calls worth timing.
constexpr TracedFunction kFunctions[] = {
    // runtime: memory
    {"cudaMalloc", C::Alloc, kDevice, kRuntime, 0},
    {"cudaMallocPitch", C::AllocPitch, kDevice, kRuntime, 0},
    {"cudaMallocManaged", C::Alloc, kManaged, kRuntime, 0},
    {"cudaMallocHost", C::Alloc, kHost, kRuntime, 0},
    {"cudaHostAlloc", C::Alloc, kHost, kRuntime, 0},
    {"cudaMallocAsync", C::Alloc, kDevice, kRuntime, 0},
    {"cudaMallocAsync_ptsz", C::Alloc, kDevice, kRuntime, 0},
    {"cudaMallocFromPoolAsync", C::Alloc, kDevice, kRuntime, 0},
    {"cudaMallocFromPoolAsync_ptsz", C::Alloc, kDevice, kRuntime, 0},
    {"cudaFree", C::Free, kDevice, kRuntime, 0},
    {"cudaFreeHost", C::Free, kHost, kRuntime, 0},
    {"cudaFreeAsync", C::Free, kDevice, kRuntime, 0},
    {"cudaFreeAsync_ptsz", C::Free, kDevice, kRuntime, 0},
    // runtime: device selection, copies, launches, synchronisation
    {"cudaSetDevice", C::SetDevice, 0, kRuntime, 0},
    {"cudaMemcpy", C::Copy, 0, kRuntime, 0},
    {"cudaMemcpy_ptds", C::Copy, 0, kRuntime, 0},
    {"cudaMemcpyAsync", C::Copy, 0, kRuntime, 0},
    {"cudaMemcpyAsync_ptsz", C::Copy, 0, kRuntime, 0},
    {"cudaLaunchKernel", C::Launch, 0, kRuntime, 0},
    {"cudaLaunchKernel_ptsz", C::Launch, 0, kRuntime, 0},
    {"__cudaLaunchKernel", C::Launch, 0, kRuntime, 0},
    {"__cudaLaunchKernel_ptsz", C::Launch, 0, kRuntime, 0},
    {"cudaLaunchKernelExC", C::Launch, 0, kRuntime, 0},
    {"cudaDeviceSynchronize", C::Other, 0, kRuntime, 0},
    {"cudaStreamSynchronize", C::Other, 0, kRuntime, 0},
    {"cudaMemGetInfo", C::Other, 0, kRuntime, 0},
    {"cudaDeviceReset", C::PrimaryReset, 0, kRuntime, 0},
    // driver: memory
    {"cuMemAlloc_v2", C::Alloc, kDevice, kDriver, 0},
    {"cuMemAllocPitch_v2", C::AllocPitch, kDevice, kDriver, 0},
    {"cuMemAllocManaged", C::Alloc, kManaged, kDriver, 0},
    {"cuMemAllocHost_v2", C::Alloc, kHost, kDriver, 0},
    {"cuMemHostAlloc", C::Alloc, kHost, kDriver, 0},
    {"cuMemAllocAsync", C::Alloc, kDevice, kDriver, 0},
    {"cuMemAllocAsync_ptsz", C::Alloc, kDevice, kDriver, 0},
    {"cuMemAllocFromPoolAsync", C::Alloc, kDevice, kDriver, 0},
    {"cuMemAllocFromPoolAsync_ptsz", C::Alloc, kDevice, kDriver, 0},
    {"cuMemFree_v2", C::Free, kDevice, kDriver, 0},
    {"cuMemFreeHost", C::Free, kHost, kDriver, 0},
    {"cuMemFreeAsync", C::Free, kDevice, kDriver, 0},
    {"cuMemFreeAsync_ptsz", C::Free, kDevice, kDriver, 0},
    {"cuMemCreate", C::VmmCreate, kVmm, kDriver, 0},
    {"cuMemRelease", C::VmmRelease, kVmm, kDriver, 0},
    // driver: contexts (device attribution)
    {"cuCtxCreate_v2", C::CtxCreate, 0, kDriver, 0},
    {"cuCtxCreate_v4", C::CtxCreate4, 0, kDriver, 0},
    {"cuDevicePrimaryCtxRetain", C::PrimaryRetain, 0, kDriver, 0},
    {"cuCtxSetCurrent", C::CtxSet, 0, kDriver, 0},
    {"cuCtxPushCurrent_v2", C::CtxSet, 0, kDriver, 0},
    {"cuCtxDestroy_v2", C::CtxDestroy, 0, kDriver, 0},
    {"cuDevicePrimaryCtxRelease_v2", C::PrimaryRelease, 0, kDriver, 0},
    {"cuDevicePrimaryCtxReset_v2", C::PrimaryReset, 0, kDriver, 0},
    // driver: copies and launches
    {"cuMemcpyHtoD_v2", C::Copy, 0, kDriver, 1},
    {"cuMemcpyDtoH_v2", C::Copy, 0, kDriver, 2},
    {"cuMemcpyDtoD_v2", C::Copy, 0, kDriver, 3},
    {"cuMemcpy", C::Copy, 0, kDriver, 4},
    {"cuMemcpyHtoDAsync_v2", C::Copy, 0, kDriver, 1},
    {"cuMemcpyDtoHAsync_v2", C::Copy, 0, kDriver, 2},
    {"cuMemcpyDtoDAsync_v2", C::Copy, 0, kDriver, 3},
    {"cuMemcpyAsync", C::Copy, 0, kDriver, 4},
    {"cuLaunchKernel", C::Launch, 0, kDriver, 0},
    {"cuLaunchKernel_ptsz", C::Launch, 0, kDriver, 0},
    {"cuLaunchKernelEx", C::Launch, 0, kDriver, 0},
    {"cuCtxSynchronize", C::Other, 0, kDriver, 0},
    {"cuStreamSynchronize", C::Other, 0, kDriver, 0},
};

}  // namespace

std::span<const TracedFunction> traced_functions() { return kFunctions; }

uint64_t cookie(uint32_t index, const TracedFunction& f) {
  return FG_COOKIE(index, static_cast<uint8_t>(f.cls), f.kind, f.api, f.direction);
}

}  // namespace fgtrace
