// SPDX-License-Identifier: Apache-2.0
// __trap() in one thread aborts the kernel: the launch is accepted, the next synchronization
// returns cudaErrorLaunchFailure ("unspecified launch failure", what a GPU reports for the PTX
// trap instruction), and the error is sticky for the context.
#include "check.h"

__global__ void trapping(int* out, int which) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == which) __trap();
  out[i] = i;
}

int main() {
  int* d;
  CK(cudaMalloc(&d, 256 * sizeof(int)));
  trapping<<<2, 128>>>(d, -1);  // no thread traps
  CK_LAUNCH();
  CK(cudaDeviceSynchronize());
  int out[256], want[256];
  CK(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 256; ++i) want[i] = i;
  kt::check_array("no thread traps: the kernel runs", out, want, 256);

  int which = 133;
  void* args[] = {&d, &which};
  cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(trapping), dim3(2), dim3(128), args, 0, nullptr);
  kt::checkf("trapping launch is accepted", e == cudaSuccess, "%s", cudaGetErrorName(e));
  e = cudaDeviceSynchronize();
  kt::checkf("next synchronize returns cudaErrorLaunchFailure", e == cudaErrorLaunchFailure, "%s", cudaGetErrorName(e));
  void* p = nullptr;
  e = cudaMalloc(&p, 256);
  kt::checkf("sticky: cudaMalloc returns cudaErrorLaunchFailure", e == cudaErrorLaunchFailure, "%s",
             cudaGetErrorName(e));
  e = cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
  kt::checkf("sticky: cudaMemcpy returns cudaErrorLaunchFailure", e == cudaErrorLaunchFailure, "%s",
             cudaGetErrorName(e));
  e = cudaDeviceSynchronize();
  kt::checkf("sticky: synchronize again returns cudaErrorLaunchFailure", e == cudaErrorLaunchFailure, "%s",
             cudaGetErrorName(e));
  return kt::finish("trap");
}
