// SPDX-License-Identifier: Apache-2.0
// Runtime registration and launches: what nvcc's host code does at start-up and at every
// <<<...>>>, on both launch ABIs (CUDA <= 12 cudaLaunchKernel; CUDA 13 __cudaGetKernel +
// __cudaLaunchKernel), the explicit launch calls, function attributes, occupancy, and
// cudaGetDriverEntryPoint.
#include "runtime_api.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>

using namespace rtt;

namespace {

// Stand-ins for nvcc's host stubs: only their addresses matter (kernels never run).
char stub_legacy, stub_cuda13, stub_coop, stub_unknown;
char name_legacy[] = "_Z13legacy_kernelPfi";
char name_cuda13[] = "_Z13cuda13_kernelv";
char name_coop[] = "_Z9coop_kernv";
char fatbin_wrapper[24];

// Registers the three kernels once per process, as a static constructor would.
void** registered() {
  static void** h = [] {
    auto& r = rt();
    void** handle = r.__cudaRegisterFatBinary(fatbin_wrapper);
    r.__cudaRegisterFunction(handle, &stub_legacy, name_legacy, name_legacy, -1, nullptr, nullptr, nullptr, nullptr,
                             nullptr);
    r.__cudaRegisterFunction(handle, &stub_cuda13, name_cuda13, name_cuda13, -1, nullptr, nullptr, nullptr, nullptr,
                             nullptr);
    r.__cudaRegisterFunction(handle, &stub_coop, name_coop, name_coop, -1, nullptr, nullptr, nullptr, nullptr, nullptr);
    r.__cudaRegisterFatBinaryEnd(handle);
    return handle;
  }();
  return h;
}

// What a CUDA 13 <<<grid, block, shmem, stream>>> expands to.
cudaError_t launch13(const void* stub, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, bool ptsz = false) {
  auto& r = rt();
  if (r.__cudaPushCallConfiguration(grid, block, shmem, stream) != 0) return cudaErrorUnknown;
  cudaKernel_t k = nullptr;
  (void)r.__cudaGetKernel(&k, stub);
  dim3 g{}, b{};
  size_t sh = 0;
  cudaStream_t st = nullptr;
  if (cudaError_t e = r.__cudaPopCallConfiguration(&g, &b, &sh, &st); e != cudaSuccess) return e;
  void* args[1] = {nullptr};
  return ptsz ? r.__cudaLaunchKernel_ptsz(k, g, b, args, sh, st) : r.__cudaLaunchKernel(k, g, b, args, sh, st);
}

}  // namespace

TEST_CASE_METHOD(Case, "fat-binary registration and the call-configuration stack", "[runtime]") {
  void** h = registered();
  REQUIRE(h != nullptr);
  CHECK(r.__cudaInitModule(h) == 1);

  // Push/pop is a per-thread stack (nested launches in arguments push twice).
  CHECK(r.__cudaPushCallConfiguration(dim3{1, 2, 3}, dim3{4, 5, 6}, 7, nullptr) == 0);
  CHECK(r.__cudaPushCallConfiguration(dim3{8, 1, 1}, dim3{32, 1, 1}, 0, cudaStreamPerThread) == 0);
  dim3 g{}, b{};
  size_t sh = 99;
  cudaStream_t st = nullptr;
  REQUIRE(r.__cudaPopCallConfiguration(&g, &b, &sh, &st) == cudaSuccess);
  CHECK((g.x == 8 && b.x == 32 && sh == 0 && st == cudaStreamPerThread));
  REQUIRE(r.__cudaPopCallConfiguration(&g, &b, &sh, &st) == cudaSuccess);
  CHECK((g.x == 1 && g.y == 2 && g.z == 3 && b.x == 4 && b.y == 5 && b.z == 6 && sh == 7 && st == nullptr));
  CHECK(r.__cudaPopCallConfiguration(&g, &b, &sh, &st) == cudaErrorMissingConfiguration);
}

TEST_CASE_METHOD(Case, "__managed__ variables get host-accessible storage at registration", "[runtime]") {
  static int* managed_var = nullptr;  // nvcc's host side of `__managed__ int managed_var[4]`
  static char fb[24];
  char name[] = "managed_var";
  void** h = r.__cudaRegisterFatBinary(fb);
  r.__cudaRegisterManagedVar(h, reinterpret_cast<void**>(&managed_var), name, name, 0, 4 * sizeof(int), 0, 0);
  r.__cudaRegisterFatBinaryEnd(h);
  REQUIRE(r.__cudaInitModule(h) == 1);
  REQUIRE(managed_var != nullptr);
  managed_var[3] = 42;  // the host writes through the pointer
  cudaPointerAttributes a{};
  REQUIRE(r.cudaPointerGetAttributes(&a, managed_var) == cudaSuccess);
  CHECK(a.type == cudaMemoryTypeManaged);
  int out[4] = {};
  REQUIRE(r.cudaMemcpy(out, managed_var, sizeof out, cudaMemcpyDefault) == cudaSuccess);
  CHECK(out[3] == 42);
  r.__cudaUnregisterFatBinary(h);
}

TEST_CASE_METHOD(Case, "launches through both ABIs are validated", "[runtime]") {
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  registered();
  void* args[1] = {nullptr};
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);

  // CUDA <= 12: cudaLaunchKernel(hostFun, ...).
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{4, 1, 1}, dim3{256, 1, 1}, args, 0, nullptr) == cudaSuccess);
  CHECK(r.cudaLaunchKernel_ptsz(&stub_legacy, dim3{1, 1, 1}, dim3{1, 1, 1}, args, 0, s) == cudaSuccess);
  CHECK(r.cudaGetLastError() == cudaSuccess);
  // CUDA 13: __cudaGetKernel + __cudaLaunchKernel.
  CHECK(launch13(&stub_cuda13, dim3{2, 2, 1}, dim3{32, 32, 1}, 0, s) == cudaSuccess);
  CHECK(launch13(&stub_cuda13, dim3{1, 1, 1}, dim3{64, 1, 1}, 1024, nullptr, true) == cudaSuccess);

  // Unknown functions.
  CHECK(r.cudaLaunchKernel(&stub_unknown, dim3{1, 1, 1}, dim3{1, 1, 1}, args, 0, nullptr) ==
        cudaErrorInvalidDeviceFunction);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidDeviceFunction);
  cudaKernel_t k = nullptr;
  CHECK(r.__cudaGetKernel(&k, &stub_unknown) == cudaErrorInvalidDeviceFunction);
  CHECK(launch13(&stub_unknown, dim3{1, 1, 1}, dim3{1, 1, 1}, 0, nullptr) == cudaErrorInvalidDeviceFunction);
  CHECK(r.__cudaLaunchKernel(nullptr, dim3{1, 1, 1}, dim3{1, 1, 1}, args, 0, nullptr) ==
        cudaErrorInvalidDeviceFunction);
  CHECK(r.__cudaLaunchKernel(reinterpret_cast<cudaKernel_t>(&stub_unknown), dim3{1, 1, 1}, dim3{1, 1, 1}, args, 0,
                             nullptr) == cudaErrorInvalidDeviceFunction);

  // Geometry outside the device's limits: cudaErrorInvalidValue, as NVIDIA's runtime 13 answers
  // on a real H200 (tests/clients/golden/h200.rt.facts).
  const auto bad = [&](dim3 g, dim3 b) { return r.cudaLaunchKernel(&stub_legacy, g, b, args, 0, nullptr); };
  CHECK(bad(dim3{1, 1, 1}, dim3{1025, 1, 1}) == cudaErrorInvalidValue);
  CHECK(bad(dim3{1, 1, 1}, dim3{32, 32, 2}) == cudaErrorInvalidValue);  // 2048 threads
  CHECK(bad(dim3{1, 1, 1}, dim3{1, 1, 65}) == cudaErrorInvalidValue);   // z limit 64
  CHECK(bad(dim3{0, 1, 1}, dim3{1, 1, 1}) == cudaErrorInvalidValue);
  CHECK(bad(dim3{1, 1, 1}, dim3{0, 1, 1}) == cudaErrorInvalidValue);
  CHECK(bad(dim3{1, 65536, 1}, dim3{1, 1, 1}) == cudaErrorInvalidValue);
  CHECK(bad(dim3{2147483647u, 65535, 65535}, dim3{1024, 1, 1}) == cudaSuccess);  // the largest grid
  CHECK(r.cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(launch13(&stub_cuda13, dim3{1, 1, 1}, dim3{2048, 1, 1}, 0, nullptr) == cudaErrorInvalidValue);

  // Dynamic shared memory: 48 KiB unless the function opts in.
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{1, 1, 1}, dim3{32, 1, 1}, args, 49152, nullptr) == cudaSuccess);
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{1, 1, 1}, dim3{32, 1, 1}, args, 49153, nullptr) == cudaErrorInvalidValue);
  REQUIRE(r.cudaFuncSetAttribute(&stub_legacy, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304) == cudaSuccess);
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{1, 1, 1}, dim3{32, 1, 1}, args, 98304, nullptr) == cudaSuccess);
  REQUIRE(r.cudaFuncSetAttribute(&stub_legacy, cudaFuncAttributeMaxDynamicSharedMemorySize, 49152) == cudaSuccess);
  CHECK(r.cudaFuncSetAttribute(&stub_legacy, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 30) ==
        cudaErrorInvalidValue);

  // Streams.
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{1, 1, 1}, dim3{1, 1, 1}, args, 0, reinterpret_cast<cudaStream_t>(0x99)) ==
        cudaErrorInvalidResourceHandle);

  // cudaLaunchKernelExC.
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3{3, 1, 1};
  cfg.blockDim = dim3{128, 1, 1};
  cfg.stream = s;
  CHECK(r.cudaLaunchKernelExC(&cfg, &stub_legacy, args) == cudaSuccess);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributePriority;
  attr.val.priority = -1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CHECK(r.cudaLaunchKernelExC(&cfg, &stub_legacy, args) == cudaSuccess);
  // The launch rules are the core's, the driver's too: a cluster on a device that forms none
  // (the default sm_80 model), a cooperative grid larger than can be resident.
  if (!std::getenv("FAKEGPU_DEVICES") && !std::getenv("FAKEGPU_CONFIG")) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 3;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    CHECK(r.cudaLaunchKernelExC(&cfg, &stub_legacy, args) == cudaErrorNotSupported);
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    cfg.gridDim = dim3{100000, 1, 1};
    CHECK(r.cudaLaunchKernelExC(&cfg, &stub_legacy, args) == cudaErrorCooperativeLaunchTooLarge);
    cfg.gridDim = dim3{3, 1, 1};
  }
  cfg.attrs = nullptr;
  CHECK(r.cudaLaunchKernelExC(&cfg, &stub_legacy, args) == cudaErrorInvalidValue);
  CHECK(r.cudaLaunchKernelExC(nullptr, &stub_legacy, args) == cudaErrorInvalidValue);
  cfg.numAttrs = 0;
  CHECK(r.cudaLaunchKernelExC(&cfg, &stub_unknown, args) == cudaErrorInvalidDeviceFunction);

  // Cooperative launches must fit on the device at once.
  int sms = 0, per_sm = 0;
  r.cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  REQUIRE(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, &stub_coop, 256, 0) == cudaSuccess);
  REQUIRE(per_sm > 0);
  const unsigned fits = static_cast<unsigned>(sms * per_sm);
  CHECK(r.cudaLaunchCooperativeKernel(&stub_coop, dim3{fits, 1, 1}, dim3{256, 1, 1}, args, 0, s) == cudaSuccess);
  CHECK(r.cudaLaunchCooperativeKernel(&stub_coop, dim3{fits + 1, 1, 1}, dim3{256, 1, 1}, args, 0, s) ==
        cudaErrorCooperativeLaunchTooLarge);

  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "function handles, attributes and occupancy", "[runtime]") {
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  registered();
  const char* name = nullptr;
  REQUIRE(r.cudaFuncGetName(&name, &stub_legacy) == cudaSuccess);
  CHECK(std::string(name) == name_legacy);
  CHECK(r.cudaFuncGetName(&name, &stub_unknown) == cudaErrorInvalidDeviceFunction);
  CHECK(r.cudaFuncGetName(nullptr, &stub_legacy) == cudaErrorInvalidValue);

  cudaKernel_t k1 = nullptr, k2 = nullptr;
  REQUIRE(r.cudaGetKernel(&k1, &stub_cuda13) == cudaSuccess);
  REQUIRE(r.__cudaGetKernel(&k2, &stub_cuda13) == cudaSuccess);
  CHECK(k1 == k2);
  void* args[1] = {nullptr};
  // A kernel handle works wherever a function is expected.
  CHECK(r.cudaLaunchKernel(reinterpret_cast<const void*>(k1), dim3{1, 1, 1}, dim3{1, 1, 1}, args, 0, nullptr) ==
        cudaSuccess);
  cudaFunction_t f = nullptr;
  REQUIRE(r.cudaGetFuncBySymbol(&f, &stub_cuda13) == cudaSuccess);
  CHECK(f != nullptr);
  CHECK(r.cudaGetFuncBySymbol(&f, &stub_unknown) == cudaErrorInvalidDeviceFunction);
  CHECK(r.cudaGetKernel(&k1, &stub_unknown) == cudaErrorInvalidDeviceFunction);
  CHECK(r.cudaGetKernel(nullptr, &stub_cuda13) == cudaErrorInvalidValue);

  cudaFuncAttributes fa{};
  REQUIRE(r.cudaFuncGetAttributes(&fa, &stub_legacy) == cudaSuccess);
  CHECK(fa.maxThreadsPerBlock == 1024);
  CHECK(fa.numRegs > 0);
  CHECK(fa.maxDynamicSharedSizeBytes == 49152);
  if (default_devices()) {
    CHECK(fa.ptxVersion == 80);
    CHECK(fa.binaryVersion == 80);
  }
  CHECK(r.cudaFuncGetAttributes(&fa, &stub_unknown) == cudaErrorInvalidDeviceFunction);
  CHECK(r.cudaFuncGetAttributes(nullptr, &stub_legacy) == cudaErrorInvalidValue);
  CHECK(r.cudaFuncSetAttribute(&stub_legacy, cudaFuncAttributePreferredSharedMemoryCarveout, 50) == cudaSuccess);
  CHECK(r.cudaFuncSetAttribute(&stub_legacy, cudaFuncAttributePreferredSharedMemoryCarveout, 101) ==
        cudaErrorInvalidValue);
  CHECK(r.cudaFuncSetAttribute(&stub_legacy, static_cast<cudaFuncAttribute>(0), 1) == cudaErrorInvalidValue);
  CHECK(r.cudaFuncSetCacheConfig(&stub_legacy, cudaFuncCachePreferShared) == cudaSuccess);
  CHECK(r.cudaFuncSetCacheConfig(&stub_legacy, static_cast<cudaFuncCache>(9)) == cudaErrorInvalidValue);
  CHECK(r.cudaFuncSetCacheConfig(&stub_unknown, cudaFuncCachePreferShared) == cudaErrorInvalidDeviceFunction);

  int blocks = -1;
  REQUIRE(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &stub_legacy, 256, 0) == cudaSuccess);
  if (default_devices()) CHECK(blocks == 8);  // A100: 2048 threads / 256; 65536 regs / (32 * 256)
  REQUIRE(r.cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, &stub_legacy, 1024, 0,
                                                                   cudaOccupancyDisableCachingOverride) == cudaSuccess);
  if (default_devices()) CHECK(blocks == 2);
  REQUIRE(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &stub_legacy, 32, 40000) == cudaSuccess);
  if (default_devices()) CHECK(blocks == 4);  // 167936 / (40000 + 1024 reserved)
  REQUIRE(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &stub_legacy, 2048, 0) == cudaSuccess);
  CHECK(blocks == 0);  // a block that cannot launch
  CHECK(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &stub_legacy, 0, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, &stub_legacy, 32, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &stub_unknown, 32, 0) ==
        cudaErrorInvalidDeviceFunction);
  CHECK(r.cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, &stub_legacy, 32, 0, 4) ==
        cudaErrorInvalidValue);
  size_t dyn = 0;
  REQUIRE(r.cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, &stub_legacy, 2, 128) == cudaSuccess);
  CHECK(dyn == 49152);  // capped by the function's limit
  // 64 blocks of 1024 threads never fit: invalid value, as a real H200 answers.
  CHECK(r.cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, &stub_legacy, 64, 1024) == cudaErrorInvalidValue);
}

TEST_CASE("launches are recorded by kernel name", "[runtime]") {
  const auto report = nlohmann::json::parse(child_report("runtime child: launch report"));
  const auto& kernels = report.at("kernel_launches");
  CHECK(kernels.at(name_legacy).get<int>() == 2);
  CHECK(kernels.at(name_cuda13).get<int>() == 3);
  CHECK(!kernels.contains(name_coop));  // registered, never launched
}

TEST_CASE("runtime child: launch report", "[.runtime-child]") {
  auto& r = rt();
  registered();
  void* args[1] = {nullptr};
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{1, 1, 1}, dim3{32, 1, 1}, args, 0, nullptr) == cudaSuccess);
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{8, 1, 1}, dim3{32, 1, 1}, args, 0, nullptr) == cudaSuccess);
  CHECK(launch13(&stub_cuda13, dim3{1, 1, 1}, dim3{1, 1, 1}, 0, nullptr) == cudaSuccess);
  CHECK(launch13(&stub_cuda13, dim3{1, 1, 1}, dim3{1, 1, 1}, 0, nullptr, true) == cudaSuccess);
  CHECK(launch13(&stub_cuda13, dim3{1, 1, 1}, dim3{1, 1, 1}, 0, cudaStreamPerThread) == cudaSuccess);
  // Rejected launches are not recorded.
  CHECK(r.cudaLaunchKernel(&stub_legacy, dim3{1, 1, 1}, dim3{4096, 1, 1}, args, 0, nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaGetDriverEntryPoint resolves like cuGetProcAddress", "[runtime]") {
  void* h = dlopen((libdir() + "/libcuda.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointVersionNotSufficent;
  REQUIRE(r.cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &q) == cudaSuccess);
  CHECK(q == cudaDriverEntryPointSuccess);
  CHECK(fn == dlsym(h, "cuMemAlloc_v2"));  // the newest ABI of the runtime's version
  REQUIRE(r.cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 2000, cudaEnableDefault, &q) == cudaSuccess);
  CHECK(fn == dlsym(h, "cuMemAlloc"));  // the CUDA 2.0 ABI
  REQUIRE(r.cudaGetDriverEntryPointByVersion("cuMemcpyAsync", &fn, 12000, cudaEnablePerThreadDefaultStream, &q) ==
          cudaSuccess);
  CHECK(fn == dlsym(h, "cuMemcpyAsync_ptsz"));

  fn = &fn;
  REQUIRE(r.cudaGetDriverEntryPoint("cuNoSuchFunction", &fn, cudaEnableDefault, &q) == cudaSuccess);
  CHECK(fn == nullptr);
  CHECK(q == cudaDriverEntryPointSymbolNotFound);
  CHECK(r.cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, nullptr) == cudaSuccess);  // status optional
  CHECK(r.cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 99000, cudaEnableDefault, &q) == cudaErrorInvalidValue);
  CHECK(r.cudaGetDriverEntryPoint("cuMemAlloc", &fn, 7, &q) == cudaErrorInvalidValue);
  CHECK(r.cudaGetDriverEntryPoint(nullptr, &fn, 0, &q) == cudaErrorInvalidValue);
  CHECK(r.cudaGetDriverEntryPoint("cuMemAlloc", nullptr, 0, &q) == cudaErrorInvalidValue);
  dlclose(h);
}
