// SPDX-License-Identifier: Apache-2.0
// Runtime modules and kernels: the fat-binary registration protocol that nvcc's host code
// runs at start-up (__cudaRegisterFatBinary ... __cudaRegisterFatBinaryEnd, functions and
// variables), both launch paths (CUDA <= 12: cudaLaunchKernel; CUDA 13: __cudaGetKernel +
// __cudaLaunchKernel, after __cudaPush/PopCallConfiguration), the explicit launch calls,
// function attributes and occupancy.
//
// Kernels are not executed: a launch is validated like the real one (unknown function →
// cudaErrorInvalidDeviceFunction; a grid or block outside the device's limits and too much
// dynamic shared memory → cudaErrorInvalidValue, as NVIDIA's runtime 13 answers on a real
// H200, tests/clients/golden/h200.rt.facts) and recorded by name in stream order.
#include "runtime/common.h"

#include "core/device_model.h"
#include "core/fatbin.h"
#include "core/func_attrs.h"

#include <algorithm>
#include <mutex>

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;
using fg::rt::to_cuda;

namespace {

namespace attr = fg::attr;

// ---- fat-binary handles ----------------------------------------------------------------------------
// __cudaRegisterFatBinary returns a void** that the generated code keeps and passes back to
// every registration call and to __cudaUnregisterFatBinary at exit. Ours points at a slot
// holding the core module; the slot is never freed, so a late or repeated unregister finds
// a null module instead of freed memory.
fg::Module* module_of(void** handle) {
  if (!handle) return nullptr;
  auto* m = static_cast<fg::Module*>(*handle);
  return m && be().module_valid(m) ? m : nullptr;
}

// ---- kernel handles --------------------------------------------------------------------------------
// cudaKernel_t / cudaFunction_t values are the core's function handles (Backend::handle_of),
// the same numbers the driver API's CUfunction values are.
cudaError_t function_of_handle(const void* handle, fg::Function** out) {
  fg::Function* f = handle ? be().function_of_handle(handle) : nullptr;
  if (!f) return cudaErrorInvalidDeviceFunction;
  *out = f;
  return cudaSuccess;
}

// `func` of the runtime calls: the host stub address nvcc registered, or (CUDA 12+) a
// kernel handle cast to const void*.
cudaError_t function_of(const void* func, fg::Function** out) {
  if (!func) return cudaErrorInvalidDeviceFunction;
  if (fg::Function* f = be().function_by_host(func)) {
    *out = f;
    return cudaSuccess;
  }
  return function_of_handle(func, out);
}

// The function `func` names and the device whose rules its attributes follow: the current one.
cudaError_t function_on_device(const void* func, fg::Function** f, fg::Device** dev) {
  if (cudaError_t e = function_of(func, f); e != cudaSuccess) return e;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  *dev = ctx->dev;
  return cudaSuccess;
}

// The kernel handle (cudaKernel_t, cudaFunction_t) of the function `func` names.
template <class Handle>
cudaError_t kernel_handle(const void* func, Handle* out) {
  if (!out || !func) return cudaErrorInvalidValue;
  fg::Function* f = nullptr;
  if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
  *out = static_cast<Handle>(fg::Backend::handle_of(f));
  return cudaSuccess;
}

// ---- launch validation ------------------------------------------------------------------------------

fg::LaunchShape shape_of(dim3 g, dim3 b, size_t shmem) {
  fg::LaunchShape shape;
  shape.grid[0] = g.x, shape.grid[1] = g.y, shape.grid[2] = g.z;
  shape.block[0] = b.x, shape.block[1] = b.y, shape.block[2] = b.z;
  shape.shmem = shmem;
  return shape;
}

// The core checks the shape (Backend::check_launch, the rule the driver and graphs share).
cudaError_t launch(fg::Function* f, const fg::LaunchShape& shape, cudaStream_t stream, bool per_thread, void** args) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(be().launch(f, shape, s, args));
}
cudaError_t launch(const void* func, const fg::LaunchShape& shape, cudaStream_t stream, bool per_thread, void** args) {
  fg::Function* f = nullptr;
  if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
  return launch(f, shape, stream, per_thread, args);
}

cudaError_t launch_kernel(const void* func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, bool per_thread,
                          void** args) {
  return launch(func, shape_of(grid, block, shmem), stream, per_thread, args);
}

// ---- occupancy ------------------------------------------------------------------------------------------
// The core's arithmetic (Backend::blocks_per_sm), the same as the driver's.
using fg::Backend;

cudaError_t occupancy(int* numBlocks, const void* func, int blockSize, size_t dynamicSMemSize, unsigned flags) {
  if (!numBlocks) return cudaErrorInvalidValue;
  if (flags & ~cudaOccupancyDisableCachingOverride) return cudaErrorInvalidValue;
  fg::Function* f = nullptr;
  if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
  if (blockSize <= 0) return cudaErrorInvalidValue;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  *numBlocks = Backend::blocks_per_sm(f, ctx->dev, blockSize, dynamicSMemSize);
  return cudaSuccess;
}

cudaError_t cooperative_launch(const void* func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                               bool per_thread, void** args) {
  fg::LaunchShape shape = shape_of(grid, block, shmem);
  shape.cooperative = true;
  return launch(func, shape, stream, per_thread, args);
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* func, bool per_thread, void** args) {
  if (!config) return cudaErrorInvalidValue;
  if (config->numAttrs && !config->attrs) return cudaErrorInvalidValue;
  fg::LaunchShape shape = shape_of(config->gridDim, config->blockDim, config->dynamicSmemBytes);
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& at = config->attrs[i];
    if (at.id == cudaLaunchAttributeCooperative) shape.cooperative = at.val.cooperative != 0;
    if (at.id == cudaLaunchAttributeClusterDimension) {
      shape.cluster[0] = at.val.clusterDim.x;
      shape.cluster[1] = at.val.clusterDim.y;
      shape.cluster[2] = at.val.clusterDim.z;
    }
  }
  return launch(func, shape, config->stream, per_thread, args);
}

}  // namespace

// ---- registration -------------------------------------------------------------------------------------------

extern "C" FG_IMPL void** fgimpl___cudaRegisterFatBinary(void* fatCubin) {
  return fg::guarded<void**>(nullptr, nullptr, [&]() -> void** {
    fg::Module* m = be().register_fatbinary(fatCubin);
    m->runtime_handle = m;
    return &m->runtime_handle;
  });
}

extern "C" FG_IMPL void fgimpl___cudaRegisterFatBinaryEnd(void** fatCubinHandle) { (void)fatCubinHandle; }

extern "C" FG_IMPL void fgimpl___cudaUnregisterFatBinary(void** fatCubinHandle) {
  fg::guarded<int>(0, 0, [&] {
    if (fg::Module* m = module_of(fatCubinHandle)) {
      be().unregister_fatbinary(m);
      *fatCubinHandle = nullptr;
    }
    return 0;
  });
}

// deviceName is the kernel's mangled name (nvcc passes the same string as deviceFun).
extern "C" FG_IMPL void fgimpl___cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                                                      const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                                                      dim3* bDim, dim3* gDim, int* wSize) {
  (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
  fg::guarded<int>(0, 0, [&] {
    if (fg::Module* m = module_of(fatCubinHandle))
      be().register_function(m, hostFun, deviceName ? deviceName : deviceFun);
    return 0;
  });
}

// Each variable gets its own zero-initialised fake device storage, initialised from the host
// shadow; cudaMemcpyToSymbol/FromSymbol and cudaGetSymbolAddress find it by the shadow.
extern "C" FG_IMPL void fgimpl___cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                                                 const char* deviceName, int ext, size_t size, int constant,
                                                 int global) {
  (void)ext, (void)global;
  fg::guarded<int>(0, 0, [&] {
    if (fg::Module* m = module_of(fatCubinHandle))
      be().register_var(m, hostVar, deviceName ? deviceName : deviceAddress, size, constant != 0, false, nullptr);
    return 0;
  });
}

// __managed__ variables: the host code reaches them through a pointer (`static T* var`) whose
// address arrives here; it must point at the managed storage before __cudaInitModule returns.
extern "C" FG_IMPL void fgimpl___cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress,
                                                        char* deviceAddress, const char* deviceName, int ext,
                                                        size_t size, int constant, int global) {
  (void)ext, (void)global;
  fg::guarded<int>(0, 0, [&] {
    if (fg::Module* m = module_of(fatCubinHandle))
      be().register_var(m, hostVarPtrAddress, deviceName ? deviceName : deviceAddress, size, constant != 0, true,
                        hostVarPtrAddress);
    return 0;
  });
}

extern "C" FG_IMPL void fgimpl___cudaRegisterHostVar(void** fatCubinHandle, const char* deviceName, char* hostVar,
                                                     size_t size) {
  fg::guarded<int>(0, 0, [&] {
    if (fg::Module* m = module_of(fatCubinHandle))
      be().register_var(m, hostVar, deviceName, size, false, false, nullptr);
    return 0;
  });
}

// Called on the first access to a __managed__ variable; the generated code caches the
// (non-zero) result and skips the call afterwards. Registration already placed the storage.
extern "C" FG_IMPL char fgimpl___cudaInitModule(void** fatCubinHandle) {
  (void)fatCubinHandle;
  return 1;
}

// ---- <<<...>>> configuration -----------------------------------------------------------------------------
// A per-thread stack: the launch stub pushes before evaluating its arguments (which may
// contain launches themselves) and pops right before launching.

extern "C" FG_IMPL unsigned fgimpl___cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                               CUstream_st* stream) {
  return fg::guarded<unsigned>(1u, 1u, [&] {
    fg::LaunchConfig c;
    c.grid[0] = gridDim.x, c.grid[1] = gridDim.y, c.grid[2] = gridDim.z;
    c.block[0] = blockDim.x, c.block[1] = blockDim.y, c.block[2] = blockDim.z;
    c.shmem = sharedMem;
    c.stream = stream;
    fg::thread_state().call_configs.push_back(c);
    return 0u;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl___cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                                                 void* stream) {
  return api([&]() -> cudaError_t {
    auto& stack = fg::thread_state().call_configs;
    if (stack.empty()) return cudaErrorMissingConfiguration;
    const fg::LaunchConfig c = stack.back();
    stack.pop_back();
    if (gridDim) *gridDim = dim3{c.grid[0], c.grid[1], c.grid[2]};
    if (blockDim) *blockDim = dim3{c.block[0], c.block[1], c.block[2]};
    if (sharedMem) *sharedMem = c.shmem;
    if (stream) *static_cast<cudaStream_t*>(stream) = static_cast<cudaStream_t>(c.stream);
    return cudaSuccess;
  });
}

// ---- launches ------------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                       size_t sharedMem, cudaStream_t stream) {
  return api([&] { return launch_kernel(func, gridDim, blockDim, sharedMem, stream, false, args); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                            size_t sharedMem, cudaStream_t stream) {
  return api([&] { return launch_kernel(func, gridDim, blockDim, sharedMem, stream, true, args); });
}

// CUDA 13 launch stubs: __cudaGetKernel once per stub (cached in a static), then
// __cudaLaunchKernel with that handle. A failed lookup leaves the handle 0, which the launch
// reports as cudaErrorInvalidDeviceFunction.
extern "C" FG_IMPL cudaError_t fgimpl___cudaGetKernel(cudaKernel_t* kernel, const void* funcAddr) {
  return api([&]() -> cudaError_t {
    if (!kernel) return cudaErrorInvalidValue;
    fg::Function* f = funcAddr ? be().function_by_host(funcAddr) : nullptr;
    if (!f) return cudaErrorInvalidDeviceFunction;
    *kernel = static_cast<cudaKernel_t>(fg::Backend::handle_of(f));
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl___cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                                         size_t sharedMem, cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    fg::Function* f = nullptr;
    if (cudaError_t e = function_of_handle(kernel, &f); e != cudaSuccess) return e;
    return launch(f, shape_of(gridDim, blockDim, sharedMem), stream, false, args);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                              void** args, size_t sharedMem, cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    fg::Function* f = nullptr;
    if (cudaError_t e = function_of_handle(kernel, &f); e != cudaSuccess) return e;
    return launch(f, shape_of(gridDim, blockDim, sharedMem), stream, true, args);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                                          void** args) {
  return api([&] { return launch_ex(config, func, false, args); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                                               void** args) {
  return api([&] { return launch_ex(config, func, true, args); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                                                  void** args, size_t sharedMem, cudaStream_t stream) {
  return api([&] { return cooperative_launch(func, gridDim, blockDim, sharedMem, stream, false, args); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim,
                                                                       void** args, size_t sharedMem,
                                                                       cudaStream_t stream) {
  return api([&] { return cooperative_launch(func, gridDim, blockDim, sharedMem, stream, true, args); });
}

// ---- function handles and attributes -------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  return api([&] { return kernel_handle(entryFuncAddr, kernelPtr); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  return api([&] { return kernel_handle(symbolPtr, functionPtr); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaFuncGetName(const char** name, const void* func) {
  return api([&]() -> cudaError_t {
    if (!name) return cudaErrorInvalidValue;
    fg::Function* f = nullptr;
    if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
    *name = f->name.c_str();
    return cudaSuccess;
  });
}

// The kernels are never compiled here, so resource use is what the core assumes for every
// function (32 registers, no static shared/constant/local memory). The binary version is the
// current device's compute capability; the PTX version is that of the PTX the device would
// compile when the fat binary holds no cubin it runs (as a real H200 reports 75 for a kernel
// built for sm_75), else the device's.
extern "C" FG_IMPL cudaError_t fgimpl_cudaFuncGetAttributes(cudaFuncAttributes* out, const void* func) {
  return api([&]() -> cudaError_t {
    if (!out) return cudaErrorInvalidValue;
    fg::Function* f = nullptr;
    fg::Device* dev = nullptr;
    if (cudaError_t e = function_on_device(func, &f, &dev); e != cudaSuccess) return e;
    const auto& a = dev->model.attributes;
    *out = cudaFuncAttributes{};
    out->sharedSizeBytes = static_cast<size_t>(f->shared_size_bytes);
    out->constSizeBytes = static_cast<size_t>(f->const_size_bytes);
    out->localSizeBytes = static_cast<size_t>(f->local_size_bytes);
    out->maxThreadsPerBlock = std::min(f->max_threads_per_block, a[attr::MAX_THREADS_PER_BLOCK]);
    out->numRegs = f->num_regs;
    out->binaryVersion = a[attr::COMPUTE_CAPABILITY_MAJOR] * 10 + a[attr::COMPUTE_CAPABILITY_MINOR];
    const int ptx = f->module && f->module->image ? fg::fatbin::ptx_arch(f->module->image, out->binaryVersion) : 0;
    out->ptxVersion = ptx ? ptx : out->binaryVersion;
    out->cacheModeCA = 0;
    out->maxDynamicSharedSizeBytes = f->max_dynamic_shared;
    out->preferredShmemCarveout = f->preferred_carveout;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaFuncSetAttribute(const void* func, cudaFuncAttribute attribute, int value) {
  return api([&]() -> cudaError_t {
    fg::Function* f = nullptr;
    fg::Device* dev = nullptr;
    if (cudaError_t e = function_on_device(func, &f, &dev); e != cudaSuccess) return e;
    switch (attribute) {
      case cudaFuncAttributeMaxDynamicSharedMemorySize: return to_cuda(fg::set_max_dynamic_shared(f, dev, value));
      case cudaFuncAttributePreferredSharedMemoryCarveout: return to_cuda(fg::set_preferred_carveout(f, value));
      case cudaFuncAttributeRequiredClusterWidth:
      case cudaFuncAttributeRequiredClusterHeight:
      case cudaFuncAttributeRequiredClusterDepth:
      case cudaFuncAttributeNonPortableClusterSizeAllowed:
      case cudaFuncAttributeClusterSchedulingPolicyPreference:
        if (!dev->model.attributes[attr::CLUSTER_LAUNCH]) return cudaErrorNotSupported;  // no clusters before sm_90
        return value < 0 ? cudaErrorInvalidValue : cudaSuccess;
      default: return cudaErrorInvalidValue;  // read-only or unknown
    }
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig) {
  return api([&]() -> cudaError_t {
    fg::Function* f = nullptr;
    if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
    const int c = static_cast<int>(cacheConfig);
    if (c < cudaFuncCachePreferNone || c > cudaFuncCachePreferEqual) return cudaErrorInvalidValue;
    f->cache_config = c;
    return cudaSuccess;
  });
}

// Bank-size configuration is gone from current parts; the call is accepted (as the real
// one is, deprecated) for a known function and a valid cudaSharedMemConfig.
extern "C" FG_IMPL cudaError_t fgimpl_cudaFuncSetSharedMemConfig(const void* func, cudaSharedMemConfig config) {
  return api([&]() -> cudaError_t {
    fg::Function* f = nullptr;
    if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
    const int c = static_cast<int>(config);
    return c < cudaSharedMemBankSizeDefault || c > cudaSharedMemBankSizeEightByte ? cudaErrorInvalidValue : cudaSuccess;
  });
}

// ---- occupancy -------------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                                                    int blockSize,
                                                                                    size_t dynamicSMemSize) {
  return api([&] { return occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, const void* func, int blockSize, size_t dynamicSMemSize, unsigned int flags) {
  return api([&] { return occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags); });
}

// The most dynamic shared memory per block that still lets numBlocks blocks of blockSize
// threads reside on one SM.
extern "C" FG_IMPL cudaError_t fgimpl_cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize,
                                                                                const void* func, int numBlocks,
                                                                                int blockSize) {
  return api([&]() -> cudaError_t {
    if (!dynamicSmemSize) return cudaErrorInvalidValue;
    fg::Function* f = nullptr;
    if (cudaError_t e = function_of(func, &f); e != cudaSuccess) return e;
    if (numBlocks <= 0 || blockSize <= 0) return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    return to_cuda(fg::Backend::available_dynamic_smem(f, ctx->dev, numBlocks, blockSize, dynamicSmemSize));
  });
}

// ---- cluster occupancy ------------------------------------------------------------------------------------------
// Thread-block clusters exist from sm_90 (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH); earlier parts
// answer cudaErrorNotSupported, as cudaFuncSetAttribute's cluster attributes do. A cluster
// must fit in one GPC: the model has up to 18 SMs per GPC (a full GH100 GPC), so a 132-SM
// H100 has 8 GPCs of 16 usable SMs. The portable maximum cluster size is 8 (the
// non-portable opt-in is not tracked).

namespace {

constexpr int kPortableClusterSize = 8;
constexpr int kSmsPerFullGpc = 18;

struct ClusterShape {
  fg::Function* f = nullptr;
  fg::Device* dev = nullptr;
  int threads = 0;
  size_t smem = 0;
  unsigned dims[3] = {0, 0, 0};  // from cudaLaunchAttributeClusterDimension; 0: not given
};

cudaError_t cluster_shape(const void* func, const cudaLaunchConfig_t* config, ClusterShape* out) {
  if (!config) return cudaErrorInvalidValue;
  if (config->numAttrs && !config->attrs) return cudaErrorInvalidValue;
  if (cudaError_t e = function_on_device(func, &out->f, &out->dev); e != cudaSuccess) return e;
  const auto& a = out->dev->model.attributes;
  if (!a[attr::CLUSTER_LAUNCH]) return cudaErrorNotSupported;
  const dim3 b = config->blockDim;
  const uint64_t threads = uint64_t{b.x} * b.y * b.z;
  if (threads == 0 || threads > static_cast<uint64_t>(a[attr::MAX_THREADS_PER_BLOCK])) return cudaErrorInvalidValue;
  out->threads = static_cast<int>(threads);
  out->smem = config->dynamicSmemBytes;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      out->dims[0] = config->attrs[i].val.clusterDim.x;
      out->dims[1] = config->attrs[i].val.clusterDim.y;
      out->dims[2] = config->attrs[i].val.clusterDim.z;
    }
  return cudaSuccess;
}

int gpc_count(const fg::Device* dev) {
  const int sms = std::max(dev->model.attributes[attr::MULTIPROCESSOR_COUNT], 1);
  return (sms + kSmsPerFullGpc - 1) / kSmsPerFullGpc;
}

// The cluster occupancy calls: a non-null `out`, then op(the launch's cluster shape).
template <class Op>
cudaError_t cluster_query(const void* out, const void* func, const cudaLaunchConfig_t* config, Op op) noexcept {
  return api([&]() -> cudaError_t {
    if (!out) return cudaErrorInvalidValue;
    ClusterShape c;
    if (cudaError_t e = cluster_shape(func, config, &c); e != cudaSuccess) return e;
    return op(c);
  });
}

}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaOccupancyMaxPotentialClusterSize(int* clusterSize, const void* func,
                                                                           const cudaLaunchConfig_t* launchConfig) {
  return cluster_query(clusterSize, func, launchConfig, [&](const ClusterShape& c) {
    const int per_sm = Backend::blocks_per_sm(c.f, c.dev, c.threads, c.smem);
    const int sms_per_gpc = c.dev->model.attributes[attr::MULTIPROCESSOR_COUNT] / gpc_count(c.dev);
    *clusterSize = std::min(kPortableClusterSize, per_sm * sms_per_gpc);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaOccupancyMaxActiveClusters(int* numClusters, const void* func,
                                                                     const cudaLaunchConfig_t* launchConfig) {
  return cluster_query(numClusters, func, launchConfig, [&](const ClusterShape& c) -> cudaError_t {
    const uint64_t size = uint64_t{c.dims[0]} * c.dims[1] * c.dims[2];
    if (size == 0 || size > static_cast<uint64_t>(kPortableClusterSize)) return cudaErrorInvalidClusterSize;
    const dim3 g = launchConfig->gridDim;
    if (g.x % c.dims[0] || g.y % c.dims[1] || g.z % c.dims[2]) return cudaErrorInvalidClusterSize;
    const int per_sm = Backend::blocks_per_sm(c.f, c.dev, c.threads, c.smem);
    const int gpcs = gpc_count(c.dev);
    const int sms_per_gpc = c.dev->model.attributes[attr::MULTIPROCESSOR_COUNT] / gpcs;
    *numClusters = gpcs * static_cast<int>(static_cast<uint64_t>(per_sm) * sms_per_gpc / size);
    return cudaSuccess;
  });
}
