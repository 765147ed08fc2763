// SPDX-License-Identifier: Apache-2.0
// The generated prototypes (fakegpu/cuda_api.h, cudart_api.h, nvml_api.h) reject an
// implementation whose signature is not the API's: tests/CMakeLists.txt compiles this file as
// it is (every definition matches, so it compiles) and once per FG_WRONG_* macro, each of which
// swaps one definition for a wrong one that must fail with "conflicting declaration of C
// function". The wrong ones are the mistakes the headers exist to catch.
#include "fakegpu/cuda_api.h"
#include "fakegpu/cudart_api.h"
#include "fakegpu/nvml_api.h"

using namespace fgapi;

#if defined(FG_WRONG_DRIVER_OLD_ABI)
// Plain cuMemAlloc is the oldest ABI (32-bit sizes); size_t belongs to cuMemAlloc_v2.
extern "C" CUresult fgimpl_cuMemAlloc(CUdeviceptr_v1* dptr, size_t bytesize) {
#else
extern "C" CUresult fgimpl_cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
#endif
  (void)dptr, (void)bytesize;
  return CUDA_SUCCESS;
}

#if defined(FG_WRONG_DRIVER_PARAM_COUNT)
// cuStreamGetCtx_v2 also returns the green context.
extern "C" CUresult fgimpl_cuStreamGetCtx_v2(CUstream stream, CUcontext* ctx) {
  (void)stream, (void)ctx;
#else
extern "C" CUresult fgimpl_cuStreamGetCtx_v2(CUstream stream, CUcontext* ctx, CUgreenCtx* green) {
  (void)stream, (void)ctx, (void)green;
#endif
  return CUDA_SUCCESS;
}

#if defined(FG_WRONG_RUNTIME_ENUM_AS_INT)
// An enum parameter is not an int, although both are four bytes.
extern "C" cudaError_t fgimpl_cudaDeviceSetSharedMemConfig(int config) {
#else
extern "C" cudaError_t fgimpl_cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config) {
#endif
  (void)config;
  return cudaSuccess;
}

#if defined(FG_WRONG_RUNTIME_V12_ABI)
// The CUDA 12 ABI of a SPLIT name is the old one: cudaMemAdvise took a device ordinal.
extern "C" cudaError_t fgimpl_v12_cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice,
                                                cudaMemLocation dst) {
#else
extern "C" cudaError_t fgimpl_v12_cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, int dst) {
#endif
  (void)ptr, (void)count, (void)advice, (void)dst;
  return cudaSuccess;
}

#if defined(FG_WRONG_NVML_RETURN_TYPE)
extern "C" int fgimpl_nvmlInit_v2() { return 0; }
#else
extern "C" nvmlReturn_t fgimpl_nvmlInit_v2() { return NVML_SUCCESS; }
#endif

#if defined(FG_WRONG_NVML_STRUCT_VERSION)
// The unversioned nvmlDeviceGetPciInfo fills the pre-v3 struct.
extern "C" nvmlReturn_t fgimpl_nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
#else
extern "C" nvmlReturn_t fgimpl_nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfoLegacy_t* pci) {
#endif
  (void)device, (void)pci;
  return NVML_SUCCESS;
}
