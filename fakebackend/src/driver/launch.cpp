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
// Occupancy is the core's (Backend::blocks_per_sm), the same for the runtime.
#include "driver/internal.h"

#include <algorithm>

using namespace fg;
using namespace fg::drv;

namespace {

Device* function_device(Backend& b, const Function* f) {
  if (f->module && f->module->ctx) return f->module->ctx->dev;
  Context* cur = b.current_ctx();
  return cur ? cur->dev : b.device(0);
}

int max_block_threads(const Device* dev, const Function* f) {
  return std::min(f->max_threads_per_block, dev->model.attributes[attr::MAX_THREADS_PER_BLOCK]);
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
  LaunchShape shape;
  CUstream stream = nullptr;
};

LaunchArgs launch_args(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                       CUstream stream) {
  LaunchArgs la;
  la.shape.grid[0] = gx, la.shape.grid[1] = gy, la.shape.grid[2] = gz;
  la.shape.block[0] = bx, la.shape.block[1] = by, la.shape.block[2] = bz;
  la.shape.shmem = shmem;
  la.stream = stream;
  return la;
}

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
    return to_cu(b.launch(f, la.shape, s, params, extra));
  });
}

CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shmem, CUstream hStream, void** params, void** extra, bool ptsz, bool cooperative) {
  LaunchArgs la = launch_args(gx, gy, gz, bx, by, bz, shmem, hStream);
  la.shape.cooperative = cooperative;
  return launch(f, la, params, extra, ptsz);
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra, bool ptsz) {
  if (!config || (config->numAttrs > 0 && !config->attrs))
    return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  LaunchArgs la = launch_args(config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                              config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream);
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& at = config->attrs[i];
    switch (static_cast<int>(at.id)) {
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: la.shape.cooperative = at.value.cooperative != 0; break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        la.shape.cluster[0] = at.value.clusterDim.x;
        la.shape.cluster[1] = at.value.clusterDim.y;
        la.shape.cluster[2] = at.value.clusterDim.z;
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
    *numBlocks = Backend::blocks_per_sm(f, function_device(b, f), blockSize, dynamicSMemSize);
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
    for (int aligned = (max_block + warp - 1) / warp * warp; aligned > 0; aligned -= warp) {
      const int tryb = std::min(max_block, aligned);
      const size_t dyn = smemOf ? smemOf(tryb) : dynamicSMemSize;
      const int blocks = Backend::blocks_per_sm(f, dev, tryb, dyn);
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
// cuLaunchKernel and cuLaunchCooperativeKernel share these parameters; only the former takes `extra`.
#define FG_GRID_PARAMS                                                                                       \
  CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, \
      unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,         \
      void **kernelParams
#define FG_GRID_ARGS \
  f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams
FG_PTSZ(cuLaunchKernel, (FG_GRID_PARAMS, void** extra), launch_kernel(FG_GRID_ARGS, extra, ptsz, false))
FG_PTSZ(cuLaunchCooperativeKernel, (FG_GRID_PARAMS), launch_kernel(FG_GRID_ARGS, nullptr, ptsz, true))
#undef FG_GRID_PARAMS
#undef FG_GRID_ARGS
FG_PTSZ(cuLaunchKernelEx, (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra),
        launch_ex(config, f, kernelParams, extra, ptsz))

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
    return to_cu(Backend::available_dynamic_smem(f, dev, numBlocks, blockSize, dynamicSmemSize));
  });
}
