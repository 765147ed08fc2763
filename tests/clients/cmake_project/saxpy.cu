// SPDX-License-Identifier: Apache-2.0
// saxpy with CMake's defaults: a kernel launch, cudaMalloc, cudaMemcpy both ways, exact
// memory accounting. The fake records launches without executing them, so y keeps its
// input values.
#include <cstdio>
#include <cstring>
#include <vector>

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> x(n), y(n), back(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 2.0f * static_cast<float>(i);
  }
  float *dx = nullptr, *dy = nullptr;
  std::printf("malloc=%s\n", cudaGetErrorName(cudaMalloc(&dx, bytes)));
  cudaMalloc(&dy, bytes);
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  std::printf("used=%zu\n", total - free_bytes);
  std::printf("memcpy_htod=%s\n", cudaGetErrorName(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice)));
  cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice);
  saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, dx, dy);
  std::printf("launch=%s\n", cudaGetErrorName(cudaGetLastError()));
  std::printf("synchronize=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  std::printf("memcpy_dtoh=%s\n", cudaGetErrorName(cudaMemcpy(back.data(), dx, bytes, cudaMemcpyDeviceToHost)));
  std::printf("x_roundtrip=%d\n", std::memcmp(back.data(), x.data(), bytes) == 0);
  cudaFree(dx);
  cudaFree(dy);
  cudaMemGetInfo(&free_bytes, &total);
  std::printf("used_after_free=%zu\n", total - free_bytes);
  return 0;
}
