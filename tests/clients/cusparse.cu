// SPDX-License-Identifier: Apache-2.0
// cuSPARSE on the fake GPU: NVIDIA's libcusparse over the fake driver. A 4x4 CSR matrix
// times a dense vector (SpMV, with its buffer); a bad dimension gets cuSPARSE's own code.
// Prints key=value facts; run_client_tests.py checks them.
#include "lib_check.h"

#include <cusparse.h>

int main() {
  const int rows = 4, nnz = 8;
  int *row_ptr = nullptr, *cols = nullptr;
  float *vals = nullptr, *x = nullptr, *y = nullptr;
  CK(cudaMalloc(&row_ptr, (rows + 1) * sizeof(int)));
  CK(cudaMalloc(&cols, nnz * sizeof(int)));
  CK(cudaMalloc(&vals, nnz * sizeof(float)));
  CK(cudaMalloc(&x, rows * sizeof(float)));
  CK(cudaMalloc(&y, rows * sizeof(float)));
  cusparseHandle_t h = nullptr;
  FACT_STATUS("create", cusparseCreate(&h));
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  FACT_STATUS("create_csr", cusparseCreateCsr(&a, rows, rows, nnz, row_ptr, cols, vals, CUSPARSE_INDEX_32I,
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  FACT_STATUS("create_x", cusparseCreateDnVec(&vx, rows, x, CUDA_R_32F));
  FACT_STATUS("create_y", cusparseCreateDnVec(&vy, rows, y, CUDA_R_32F));
  const float one = 1.0f, zero = 0.0f;
  size_t buffer_size = 0;
  FACT_STATUS("spmv_buffer_size", cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy,
                                                          CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &buffer_size));
  void* buffer = nullptr;
  CK(cudaMalloc(&buffer, buffer_size));
  FACT_STATUS("spmv", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy, CUDA_R_32F,
                                   CUSPARSE_SPMV_ALG_DEFAULT, buffer));
  FACT_ERR("sync", cudaDeviceSynchronize());
  lib_check::print_used("used_with_buffers");
  cusparseSpMatDescr_t bad = nullptr;
  FACT_STATUS("create_csr_negative_rows",
              cusparseCreateCsr(&bad, -1, rows, nnz, row_ptr, cols, vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  FACT_STATUS("destroy_csr", cusparseDestroySpMat(a));
  FACT_STATUS("destroy_x", cusparseDestroyDnVec(vx));
  FACT_STATUS("destroy_y", cusparseDestroyDnVec(vy));
  FACT_STATUS("destroy", cusparseDestroy(h));
  lib_check::free_at_exit({row_ptr, cols, vals, x, y, buffer});
  return 0;
}
