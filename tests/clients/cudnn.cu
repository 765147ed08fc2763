// SPDX-License-Identifier: Apache-2.0
// cuDNN on the fake GPU: NVIDIA's libcudnn (and the engine libraries it loads) over the fake
// driver. A handle, tensor / filter / convolution descriptors, the output shape, the
// workspace size and a forward convolution; a bad tensor shape gets cuDNN's own code.
// Prints key=value facts; run_client_tests.py checks them.
#include "lib_check.h"

#include <cudnn.h>

int main() {
  std::printf("version=%zu\n", cudnnGetVersion());
  cudnnHandle_t h = nullptr;
  FACT_STATUS("create", cudnnCreate(&h));
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  FACT_STATUS("create_x", cudnnCreateTensorDescriptor(&x));
  FACT_STATUS("create_y", cudnnCreateTensorDescriptor(&y));
  FACT_STATUS("create_w", cudnnCreateFilterDescriptor(&w));
  FACT_STATUS("create_conv", cudnnCreateConvolutionDescriptor(&conv));
  FACT_STATUS("set_x", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 32, 32));
  FACT_STATUS("set_w", cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 8, 3, 3, 3));
  FACT_STATUS("set_conv",
              cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  int n = 0, c = 0, hh = 0, ww = 0;
  FACT_STATUS("output_dim", cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &hh, &ww));
  std::printf("output_shape=%d,%d,%d,%d\n", n, c, hh, ww);
  FACT_STATUS("set_y", cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hh, ww));
  const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t ws = 1;
  FACT_STATUS("workspace_size", cudnnGetConvolutionForwardWorkspaceSize(h, x, w, conv, y, algo, &ws));
  std::printf("workspace_bytes=%zu\n", ws);
  float *dx = nullptr, *dw = nullptr, *dy = nullptr;
  CK(cudaMalloc(&dx, 2 * 3 * 32 * 32 * sizeof(float)));
  CK(cudaMalloc(&dw, 8 * 3 * 3 * 3 * sizeof(float)));
  CK(cudaMalloc(&dy, size_t(n) * c * hh * ww * sizeof(float)));
  const float alpha = 1.0f, beta = 0.0f;
  FACT_STATUS("forward", cudnnConvolutionForward(h, &alpha, x, dx, w, dw, conv, algo, nullptr, 0, &beta, y, dy));
  FACT_ERR("sync", cudaDeviceSynchronize());
  lib_check::print_used("used_with_tensors");
  FACT_STATUS("set_x_zero_batch", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 3, 32, 32));
  FACT_STATUS("destroy_x", cudnnDestroyTensorDescriptor(x));
  FACT_STATUS("destroy_y", cudnnDestroyTensorDescriptor(y));
  FACT_STATUS("destroy_w", cudnnDestroyFilterDescriptor(w));
  FACT_STATUS("destroy_conv", cudnnDestroyConvolutionDescriptor(conv));
  FACT_STATUS("destroy", cudnnDestroy(h));
  lib_check::free_at_exit({dx, dw, dy});
  return 0;
}
