// SPDX-License-Identifier: Apache-2.0
// fork(): the child starts with no contexts and no allocations, and its device memory is
// its own — writes in the child never reach the parent's allocations.
#include "backend/driver_test.h"

#include <unistd.h>

#include <cstring>
#include <vector>

using namespace drvtest;

TEST_CASE("driver: a forked child gets fresh device memory", "[driver]") {
  init();
  CUcontext ctx = nullptr;
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&ctx, 0));
  CU_OK(CU(cuCtxPushCurrent_v2)(ctx));
  constexpr size_t kSize = 1 << 20;
  CUdeviceptr parent = 0;
  CU_OK(CU(cuMemAlloc_v2)(&parent, kSize));
  std::vector<unsigned char> ones(kSize, 1);
  CU_OK(CU(cuMemcpyHtoD_v2)(parent, ones.data(), kSize));

  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Exit codes tell the parent which expectation failed.
    CUcontext cur = reinterpret_cast<CUcontext>(1);
    if (CU(cuCtxGetCurrent)(&cur) != CUDA_SUCCESS || cur != nullptr) _exit(10);
    CUcontext c = nullptr;
    if (CU(cuDevicePrimaryCtxRetain)(&c, 0) != CUDA_SUCCESS || CU(cuCtxPushCurrent_v2)(c) != CUDA_SUCCESS) _exit(12);
    if (CU(cuMemFree_v2)(parent) != CUDA_ERROR_INVALID_VALUE) _exit(11);  // not the child's
    CUdeviceptr mine = 0;
    if (CU(cuMemAlloc_v2)(&mine, kSize) != CUDA_SUCCESS) _exit(13);
    std::vector<unsigned char> twos(kSize, 2);
    if (CU(cuMemcpyHtoD_v2)(mine, twos.data(), kSize) != CUDA_SUCCESS) _exit(14);
    _exit(0);
  }
  CHECK(wait_case(pid) == 0);  // the child's exit code names the expectation that failed
  std::vector<unsigned char> back(kSize, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(back.data(), parent, kSize));
  CHECK(back == ones);
  CU_OK(CU(cuMemFree_v2)(parent));
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(0));
}
