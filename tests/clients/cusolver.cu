// SPDX-License-Identifier: Apache-2.0
// cuSOLVER on the fake GPU: NVIDIA's libcusolver over the fake driver. A Cholesky
// factorisation (Spotrf) with its workspace and info word; a negative order gets
// cuSOLVER's own code. Prints key=value facts; run_client_tests.py checks them.
#include "lib_check.h"

#include <cusolverDn.h>

int main() {
  const int n = 64;
  float* a = nullptr;
  int* info = nullptr;
  CK(cudaMalloc(&a, n * n * sizeof(float)));
  CK(cudaMalloc(&info, sizeof(int)));
  cusolverDnHandle_t h = nullptr;
  FACT_STATUS("create", cusolverDnCreate(&h));
  int lwork = -1;
  FACT_STATUS("potrf_buffer_size", cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lwork));
  std::printf("lwork=%d\n", lwork);
  float* work = nullptr;
  CK(cudaMalloc(&work, (lwork + 1) * sizeof(float)));
  FACT_STATUS("potrf", cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info));
  FACT_ERR("sync", cudaDeviceSynchronize());
  lib_check::print_used("used_with_workspace");
  FACT_STATUS("potrf_negative_order", cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, -1, a, n, work, lwork, info));
  FACT_STATUS("destroy", cusolverDnDestroy(h));
  lib_check::free_at_exit({work, info, a});
  return 0;
}
