// SPDX-License-Identifier: Apache-2.0
// cuBLAS on the fake GPU: NVIDIA's libcublas (its own copy of NVIDIA's runtime inside)
// over the fake driver. Prints key=value facts; run_client_tests.py checks them. With the
// argument "startup" it stops as soon as cublasCreate returns (scripts/bench.sh times that).
#include "lib_check.h"

#include <cublas_v2.h>

#include <cstring>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "startup") == 0) {  // scripts/bench.sh: start-up to cublasCreate
    cublasHandle_t h = nullptr;
    _exit(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS ? 0 : 1);
  }
  const int n = 256;
  const size_t bytes = size_t{n} * n * sizeof(float);
  cublasHandle_t h = nullptr;
  std::printf("create=%d\n", static_cast<int>(cublasCreate(&h)));
  cudaStream_t s = nullptr;
  CK(cudaStreamCreate(&s));
  std::printf("set_stream=%d\n", static_cast<int>(cublasSetStream(h, s)));
  void* workspace = nullptr;
  CK(cudaMalloc(&workspace, 4 << 20));
  std::printf("set_workspace=%d\n", static_cast<int>(cublasSetWorkspace(h, workspace, 4 << 20)));
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMalloc(&c, bytes));
  lib_check::print_used("used_with_buffers");
  const float one = 1.0f, zero = 0.0f;
  std::printf("sgemm=%d\n",
              static_cast<int>(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n)));
  std::printf("gemm_ex=%d\n",
              static_cast<int>(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, CUDA_R_32F, n, b, CUDA_R_32F,
                                            n, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
  std::printf("bad_size=%d\n",
              static_cast<int>(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, n, n, &one, a, n, b, n, &zero, c, n)));
  FACT_ERR("stream_sync", cudaStreamSynchronize(s));
  std::printf("destroy=%d\n", static_cast<int>(cublasDestroy(h)));
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(c));
  CK(cudaFree(workspace));
  CK(cudaStreamDestroy(s));
  lib_check::print_used("used_at_exit");
  return 0;
}
