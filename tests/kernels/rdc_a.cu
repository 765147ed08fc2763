// SPDX-License-Identifier: Apache-2.0
// Separate compilation (-rdc=true): the kernel here calls scale_and_offset() and reads
// rdc_bias, both defined in rdc_b.cu, so the executor must link the two files' PTX.
#include "check.h"

#include <vector>

extern __device__ int scale_and_offset(int x);
extern __device__ int rdc_bias;

__global__ void apply(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scale_and_offset(in[i]) + rdc_bias;
}

int main() {
  const int n = 1000;
  std::vector<int> in(n), out(n), want(n);
  for (int i = 0; i < n; ++i) in[i] = i - 500, want[i] = (i - 500) * 3 + 11 + 100;
  int *din, *dout;
  CK(cudaMalloc(&din, n * sizeof(int)));
  CK(cudaMalloc(&dout, n * sizeof(int)));
  CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  apply<<<(n + 127) / 128, 128>>>(din, dout, n);
  CK_LAUNCH();
  CK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  kt::check_array("kernel calls a __device__ function and reads a variable of another file", out.data(), want.data(),
                  n);
  const int bias = 200;
  CK(cudaMemcpyToSymbol(rdc_bias, &bias, sizeof bias));
  apply<<<(n + 127) / 128, 128>>>(din, dout, n);
  CK_LAUNCH();
  CK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int& w : want) w += 100;
  kt::check_array("cudaMemcpyToSymbol on the other file's variable", out.data(), want.data(), n);
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return kt::finish("rdc");
}
