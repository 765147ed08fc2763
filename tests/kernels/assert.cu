// SPDX-License-Identifier: Apache-2.0
// A failed device assert(): the launch itself is accepted, the next synchronization returns
// cudaErrorAssert, and the error is sticky (later calls return it too). The assertion's
// message goes to stderr: "<file>:<line>: <function>: block: [1,0,0], thread: [3,0,0]
// Assertion `value != 7` failed." (the runner checks the part from "Assertion"). A kernel whose
// assertions all hold runs normally first.
#include "check.h"

#include <cassert>

__global__ void checked(const int* data, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int value = data[i];
  assert(value != 7);
  out[i] = value * 2;
}

int main() {
  int host[8] = {0, 1, 2, 3, 4, 5, 6, 8}, *d_data, *d_out;
  CK(cudaMalloc(&d_data, sizeof host));
  CK(cudaMalloc(&d_out, sizeof host));
  CK(cudaMemcpy(d_data, host, sizeof host, cudaMemcpyHostToDevice));
  checked<<<2, 4>>>(d_data, d_out);
  CK_LAUNCH();
  CK(cudaDeviceSynchronize());
  int out[8];
  CK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
  const int want[8] = {0, 2, 4, 6, 8, 10, 12, 16};
  kt::check_array("assertions that hold: the kernel runs", out, want, 8);

  host[7] = 7;  // block 1, thread 3
  CK(cudaMemcpy(d_data, host, sizeof host, cudaMemcpyHostToDevice));
  void* args[] = {&d_data, &d_out};
  cudaError_t launch = cudaLaunchKernel(reinterpret_cast<const void*>(checked), dim3(2), dim3(4), args, 0, nullptr);
  kt::checkf("failing launch is accepted", launch == cudaSuccess, "%s", cudaGetErrorName(launch));
  cudaError_t sync = cudaDeviceSynchronize();
  kt::checkf("next synchronize returns cudaErrorAssert", sync == cudaErrorAssert, "%s", cudaGetErrorName(sync));
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, 256);
  kt::checkf("sticky: cudaMalloc returns cudaErrorAssert", e == cudaErrorAssert, "%s", cudaGetErrorName(e));
  e = cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  kt::checkf("sticky: cudaMemcpy returns cudaErrorAssert", e == cudaErrorAssert, "%s", cudaGetErrorName(e));
  e = cudaLaunchKernel(reinterpret_cast<const void*>(checked), dim3(1), dim3(1), args, 0, nullptr);
  kt::checkf("sticky: a new launch returns cudaErrorAssert", e == cudaErrorAssert, "%s", cudaGetErrorName(e));
  e = cudaDeviceSynchronize();
  kt::checkf("sticky: synchronize again returns cudaErrorAssert", e == cudaErrorAssert, "%s", cudaGetErrorName(e));
  e = cudaGetLastError();
  kt::checkf("cudaGetLastError returns cudaErrorAssert", e == cudaErrorAssert, "%s", cudaGetErrorName(e));
  return kt::finish("assert");
}
