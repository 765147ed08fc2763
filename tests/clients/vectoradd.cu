// SPDX-License-Identifier: Apache-2.0
// vectorAdd-like client: <<<>>> launches, copies in every direction, memset, a launch with
// an invalid configuration and one allocation left behind on purpose (the exit report
// must list it as a leak). The kernels run on the fake GPU (under FAKEGPU_KERNELS=record they
// are recorded only and the output buffer keeps what was copied into it);
// run_client_tests.py also checks the report.
#include "rt_check.h"

#include <cstring>
#include <vector>

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void fill(float* x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

int main() {
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(float);
  std::vector<float> ha(n), hb(n), hc(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    ha[i] = static_cast<float>(i);
    hb[i] = static_cast<float>(2 * i);
  }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  CK(cudaMalloc(&da, bytes));
  CK(cudaMalloc(&db, bytes));
  CK(cudaMalloc(&dc, bytes));
  CK(cudaMemcpy(da, ha.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dc, da, bytes, cudaMemcpyDeviceToDevice));

  vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  FACT_ERR("launch_vadd", cudaGetLastError());
  CK(cudaMemcpy(hc.data(), dc, bytes, cudaMemcpyDeviceToHost));
  int sums = 0;
  for (int i = 0; i < n; ++i) sums += hc[i] == ha[i] + hb[i];
  std::printf("vadd_exact=%d\nc_equals_a=%d\n", sums == n, std::memcmp(hc.data(), ha.data(), bytes) == 0);
  std::printf("c[10]=%.1f\nc[65535]=%.1f\n", hc[10], hc[n - 1]);
  for (int k = 0; k < 3; ++k) {
    fill<<<n / 128, 128>>>(dc, static_cast<float>(k), n);
    const char* keys[3] = {"launch_fill0", "launch_fill1", "launch_fill2"};
    FACT_ERR(keys[k], cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());

  // Invalid configurations fail at launch and are not sticky.
  vadd<<<1, 2048>>>(da, db, dc, n);
  FACT_ERR("launch_block_2048", cudaGetLastError());
  FACT_ERR("after_block_2048", cudaGetLastError());
  vadd<<<0, 256>>>(da, db, dc, n);
  FACT_ERR("launch_grid_0", cudaGetLastError());
  FACT_ERR("sync_after_bad_launches", cudaDeviceSynchronize());

  CK(cudaMemcpy(hc.data(), dc, bytes, cudaMemcpyDeviceToHost));
  int twos = 0;
  for (int i = 0; i < n; ++i) twos += hc[i] == 2.0f;
  std::printf("filled_with_2=%d\n", twos);
  std::vector<float> hb2(n);
  CK(cudaMemcpy(hb2.data(), db, bytes, cudaMemcpyDefault));
  std::printf("b_roundtrip=%d\n", std::memcmp(hb2.data(), hb.data(), bytes) == 0);

  // Offsets inside an allocation.
  std::vector<float> part(50, 0.0f);
  CK(cudaMemcpy(part.data(), da + 200, 50 * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("part[0]=%.1f\npart[49]=%.1f\n", part[0], part[49]);

  CK(cudaMemset(db, 0xFF, bytes));
  CK(cudaMemset(db, 0x01, 8));
  std::vector<unsigned char> raw(bytes);
  CK(cudaMemcpy(raw.data(), db, bytes, cudaMemcpyDeviceToHost));
  size_t ff = 0, ones = 0;
  for (unsigned char c : raw) {
    ff += c == 0xFF;
    ones += c == 0x01;
  }
  std::printf("memset_ff_bytes=%zu\nmemset_01_bytes=%zu\n", ff, ones);

  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  std::printf("used_with_3_buffers=%zu\n", total_b - free_b);

  void* leak = nullptr;
  CK(cudaMalloc(&leak, 4096));
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  FACT_ERR("double_free", cudaFree(da));
  CK(cudaMemGetInfo(&free_b, &total_b));
  std::printf("used_at_exit=%zu\n", total_b - free_b);
  return 0;
}
