// SPDX-License-Identifier: Apache-2.0
// Kernel launches (validated and recorded in stream order, never executed) and the
// occupancy calculator.
//
// Validation follows the real driver: a bad function handle is CUDA_ERROR_INVALID_HANDLE;
// zero or oversized grid/block dimensions and too much dynamic shared memory are
// CUDA_ERROR_INVALID_VALUE; more registers than a block may hold is
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; a cooperative grid larger than what can be resident at
// once is CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.
//
// Occupancy uses the CUDA occupancy calculator's rules with the device model's limits:
// blocks per SM are bounded by the block limit, by warps (threads per SM), by registers
// (allocated per warp in units of 256) and by shared memory (static + dynamic + the
// per-block reservation, in 128-byte units).
#include "driver/internal.h"

#include <algorithm>

using namespace fg;
using namespace fg::drv;

namespace {

constexpr int kRegisterUnit = 256;  // registers are allocated per warp in units of 256
constexpr size_t kSmemUnit = 128;   // shared memory allocation granularity per block

template <class T>
T round_up(T v, T unit) {
  return (v + unit - 1) / unit * unit;
}

Device* function_device(Backend& b, const Function* f) {
  if (f->module && f->module->ctx) return f->module->ctx->dev;
  Context* cur = b.current_ctx();
  return cur ? cur->dev : b.device(0);
}

int max_block_threads(const Device* dev, const Function* f) {
  return std::min(f->max_threads_per_block, dev->model.attributes[attr::MAX_THREADS_PER_BLOCK]);
}

// Resident blocks of `f` per SM at `block` threads and `dyn_smem` dynamic shared memory.
int active_blocks(const Device* dev, const Function* f, int block, size_t dyn_smem) {
  const auto& a = dev->model.attributes;
  if (block <= 0 || block > max_block_threads(dev, f)) return 0;
  if (dyn_smem > static_cast<size_t>(f->max_dynamic_shared)) return 0;
  const int warp = std::max(1, a[attr::WARP_SIZE]);
  const int warps = (block + warp - 1) / warp;
  int limit = a[attr::MAX_BLOCKS_PER_MULTIPROCESSOR];
  limit = std::min(limit, a[attr::MAX_THREADS_PER_MULTIPROCESSOR] / warp / warps);
  if (f->num_regs > 0) {
    const int regs_per_warp = round_up(f->num_regs * warp, kRegisterUnit);
    if (regs_per_warp * warps > a[attr::MAX_REGISTERS_PER_BLOCK]) return 0;
    limit = std::min(limit, a[attr::MAX_REGISTERS_PER_MULTIPROCESSOR] / regs_per_warp / warps);
  }
  const size_t smem = round_up<size_t>(static_cast<size_t>(f->shared_size_bytes) + dyn_smem +
                                           static_cast<size_t>(a[attr::RESERVED_SHARED_MEMORY_PER_BLOCK]),
                                       kSmemUnit);
  if (smem > 0)
    limit = std::min<int64_t>(
        limit, static_cast<int64_t>(a[attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR]) / static_cast<int64_t>(smem));
  return std::max(limit, 0);
}

// `extra`: (key, value) pairs ending with CU_LAUNCH_PARAM_END; the argument buffer comes as
// CU_LAUNCH_PARAM_BUFFER_POINTER + CU_LAUNCH_PARAM_BUFFER_SIZE.
CUresult check_extra(void** extra) {
  bool have_ptr = false, have_size = false;
  for (int i = 0; i < 64; i += 2) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(extra[i]);
    if (key == CU_LAUNCH_PARAM_END_AS_INT) return have_ptr == have_size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (key == CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
      have_ptr = true;
    else if (key == CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)
      have_size = extra[i + 1] != nullptr;
    else
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_ERROR_INVALID_VALUE;  // no terminator within reason
}

struct LaunchArgs {
  unsigned grid[3];
  unsigned block[3];
  unsigned shmem;
  CUstream stream;
  bool cooperative = false;
  unsigned cluster[3] = {0, 0, 0};  // 0 = no cluster dimension given
};

CUresult launch(CUfunction h, const LaunchArgs& la, void** params, void** extra, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    Function* f = nullptr;
    if (CUresult r = function_arg(b, h, &f)) return r;
    if (params && extra) return CUDA_ERROR_INVALID_VALUE;
    if (extra)
      if (CUresult r = check_extra(extra)) return r;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, la.stream, ptsz, &s)) return r;
    if (f->module && f->module->ctx && f->module->ctx != s->ctx) return CUDA_ERROR_INVALID_HANDLE;
    Device* dev = s->ctx->dev;
    const auto& a = dev->model.attributes;
    for (int i = 0; i < 3; ++i)
      if (la.grid[i] == 0 || la.block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t threads = uint64_t{la.block[0]} * la.block[1] * la.block[2];
    if (threads > static_cast<uint64_t>(max_block_threads(dev, f))) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 3; ++i) {
      if (la.block[i] > static_cast<unsigned>(a[attr::MAX_BLOCK_DIM_X + i])) return CUDA_ERROR_INVALID_VALUE;
      if (la.grid[i] > static_cast<unsigned>(a[attr::MAX_GRID_DIM_X + i])) return CUDA_ERROR_INVALID_VALUE;
    }
    if (la.shmem > static_cast<unsigned>(f->max_dynamic_shared)) return CUDA_ERROR_INVALID_VALUE;
    const int warp = std::max(1, a[attr::WARP_SIZE]);
    if (f->num_regs > 0 && static_cast<uint64_t>(round_up(f->num_regs * warp, kRegisterUnit)) *
                                   ((threads + static_cast<uint64_t>(warp) - 1) / static_cast<uint64_t>(warp)) >
                               static_cast<uint64_t>(a[attr::MAX_REGISTERS_PER_BLOCK]))
      return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    if (la.cluster[0]) {
      if (!a[attr::CLUSTER_LAUNCH]) return CUDA_ERROR_NOT_SUPPORTED;
      for (int i = 0; i < 3; ++i)
        if (la.cluster[i] == 0 || la.grid[i] % la.cluster[i] != 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
      if (la.cluster[0] * la.cluster[1] * la.cluster[2] > 8) return CUDA_ERROR_INVALID_CLUSTER_SIZE;  // portable size
    }
    if (la.cooperative) {
      if (!a[attr::COOPERATIVE_LAUNCH]) return CUDA_ERROR_NOT_SUPPORTED;
      const uint64_t blocks = uint64_t{la.grid[0]} * la.grid[1] * la.grid[2];
      const uint64_t resident = static_cast<uint64_t>(active_blocks(dev, f, static_cast<int>(threads), la.shmem)) *
                                dev->model.sm_count;
      if (blocks > resident) return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
    const Status st = b.launch(f, la.grid, la.block, la.shmem, s);
    return st == Status::NotSupported ? CUDA_ERROR_INVALID_VALUE : to_cu(st);
  });
}

CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shmem, CUstream hStream, void** params, void** extra, bool ptsz, bool cooperative) {
  LaunchArgs la{{gx, gy, gz}, {bx, by, bz}, shmem, hStream};
  la.cooperative = cooperative;
  return launch(f, la, params, extra, ptsz);
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra, bool ptsz) {
  if (!config || (config->numAttrs > 0 && !config->attrs))
    return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  LaunchArgs la{{config->gridDimX, config->gridDimY, config->gridDimZ},
                {config->blockDimX, config->blockDimY, config->blockDimZ},
                config->sharedMemBytes,
                config->hStream};
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& at = config->attrs[i];
    switch (static_cast<int>(at.id)) {
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: la.cooperative = at.value.cooperative != 0; break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        la.cluster[0] = at.value.clusterDim.x;
        la.cluster[1] = at.value.clusterDim.y;
        la.cluster[2] = at.value.clusterDim.z;
        break;
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
      case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING: break;  // hints: nothing to model
      default: return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    }
  }
  return launch(f, la, params, extra, ptsz);
}

CUresult occupancy_blocks(int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned flags) {
  return api([&](Backend& b) -> CUresult {
    if (!numBlocks || blockSize <= 0 || (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)))
      return CUDA_ERROR_INVALID_VALUE;
    Function* f = nullptr;
    if (CUresult r = function_arg(b, func, &f)) return r;
    *numBlocks = active_blocks(function_device(b, f), f, blockSize, dynamicSMemSize);
    return CUDA_SUCCESS;
  });
}

// cudaOccMaxPotentialOccupancyBlockSize: the largest block size (warp multiples, from the
// top) reaching the highest resident-thread count; minGridSize fills every SM once.
CUresult potential_block_size(int* minGridSize, int* blockSize, CUfunction func, CUoccupancyB2DSize smemOf,
                              size_t dynamicSMemSize, int blockSizeLimit, unsigned flags) {
  return api([&](Backend& b) -> CUresult {
    if (!minGridSize || !blockSize || blockSizeLimit < 0 ||
        (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)))
      return CUDA_ERROR_INVALID_VALUE;
    Function* f = nullptr;
    if (CUresult r = function_arg(b, func, &f)) return r;
    const Device* dev = function_device(b, f);
    const auto& a = dev->model.attributes;
    const int warp = std::max(1, a[attr::WARP_SIZE]);
    int max_block = max_block_threads(dev, f);
    if (blockSizeLimit > 0) max_block = std::min(max_block, blockSizeLimit);
    int best_block = 0, best_blocks = 0, best_threads = 0;
    for (int aligned = round_up(max_block, warp); aligned > 0; aligned -= warp) {
      const int tryb = std::min(max_block, aligned);
      const size_t dyn = smemOf ? smemOf(tryb) : dynamicSMemSize;
      const int blocks = active_blocks(dev, f, tryb, dyn);
      if (blocks * tryb > best_threads) {
        best_block = tryb;
        best_blocks = blocks;
        best_threads = blocks * tryb;
      }
      if (best_threads == a[attr::MAX_THREADS_PER_MULTIPROCESSOR]) break;
    }
    *minGridSize = best_blocks * dev->model.sm_count;
    *blockSize = best_block;
    return CUDA_SUCCESS;
  });
}

}  // namespace

// ---- launches --------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                  unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                                  unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                                  void** kernelParams, void** extra) {
  return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                       kernelParams, extra, false, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                       unsigned int gridDimZ, unsigned int blockDimX,
                                                       unsigned int blockDimY, unsigned int blockDimZ,
                                                       unsigned int sharedMemBytes, CUstream hStream,
                                                       void** kernelParams, void** extra) {
  return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                       kernelParams, extra, true, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                             unsigned int gridDimZ, unsigned int blockDimX,
                                                             unsigned int blockDimY, unsigned int blockDimZ,
                                                             unsigned int sharedMemBytes, CUstream hStream,
                                                             void** kernelParams) {
  return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                       kernelParams, nullptr, false, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                                  unsigned int gridDimY, unsigned int gridDimZ,
                                                                  unsigned int blockDimX, unsigned int blockDimY,
                                                                  unsigned int blockDimZ, unsigned int sharedMemBytes,
                                                                  CUstream hStream, void** kernelParams) {
  return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                       kernelParams, nullptr, true, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                                    void** extra) {
  return launch_ex(config, f, kernelParams, extra, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f,
                                                         void** kernelParams, void** extra) {
  return launch_ex(config, f, kernelParams, extra, true);
}

// ---- occupancy -------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func,
                                                                               int blockSize, size_t dynamicSMemSize) {
  return occupancy_blocks(numBlocks, func, blockSize, dynamicSMemSize, 0);
}
extern "C" FG_IMPL CUresult fgimpl_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                                                        int blockSize,
                                                                                        size_t dynamicSMemSize,
                                                                                        unsigned int flags) {
  return occupancy_blocks(numBlocks, func, blockSize, dynamicSMemSize, flags);
}
extern "C" FG_IMPL CUresult fgimpl_cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                                    CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                                    size_t dynamicSMemSize, int blockSizeLimit) {
  return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit,
                              0);
}
extern "C" FG_IMPL CUresult fgimpl_cuOccupancyMaxPotentialBlockSizeWithFlags(
    int* minGridSize, int* blockSize, CUfunction func, CUoccupancyB2DSize blockSizeToDynamicSMemSize,
    size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags) {
  return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit,
                              flags);
}

// The most dynamic shared memory per block with which numBlocks blocks of blockSize
// threads can still be resident on one SM.
extern "C" FG_IMPL CUresult fgimpl_cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func,
                                                                           int numBlocks, int blockSize) {
  return api([&](Backend& b) -> CUresult {
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
    Function* f = nullptr;
    if (CUresult r = function_arg(b, func, &f)) return r;
    const Device* dev = function_device(b, f);
    const auto& a = dev->model.attributes;
    *dynamicSmemSize = 0;
    // Without any dynamic shared memory, can that many blocks be resident at all?
    Function probe;
    probe.max_threads_per_block = f->max_threads_per_block;
    probe.num_regs = f->num_regs;
    probe.shared_size_bytes = f->shared_size_bytes;
    if (active_blocks(dev, &probe, blockSize, 0) < numBlocks) return CUDA_SUCCESS;
    const size_t per_block = static_cast<size_t>(a[attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR]) /
                             static_cast<size_t>(numBlocks) / kSmemUnit * kSmemUnit;
    const size_t fixed = static_cast<size_t>(f->shared_size_bytes) +
                         static_cast<size_t>(a[attr::RESERVED_SHARED_MEMORY_PER_BLOCK]);
    if (per_block <= fixed) return CUDA_SUCCESS;
    const size_t optin = static_cast<size_t>(a[attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN]);
    *dynamicSmemSize = std::min(per_block - fixed, optin > static_cast<size_t>(f->shared_size_bytes)
                                                       ? optin - static_cast<size_t>(f->shared_size_bytes)
                                                       : 0);
    return CUDA_SUCCESS;
  });
}
