// SPDX-License-Identifier: Apache-2.0
// mma.sync, ldmatrix and stmatrix as CUTLASS-style code writes them (inline PTX; built for
// compute capability 9.0 for stmatrix, run on an H100 model: run_kernel_tests.py),
// with the fragment layouts of the PTX ISA's "Matrix Fragments for mma.m16n8k*" tables
// (g = lane / 4, t = lane % 4):
//   m16n8k16 f16 into f32, fragments gathered element by element as the tables say;
//   the same product with the fragments loaded by ldmatrix from shared memory (x4 for A, x2
//     .trans for B stored k-major), which gives the tables' layouts by its own definition;
//   m16n8k16 f16 into f16, bf16 m16n8k8, tf32 m16n8k8, s8 m16n8k32 into s32, f64 m8n8k4;
//   ldmatrix then stmatrix (x4, and x4 .trans) round trips: a 16×16 tile copied, and transposed
//   8×8 block by 8×8 block.
// Inputs are small integers (and halves): every sum is exact, results compare exactly.
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <vector>

namespace {

__device__ unsigned pack(const void* lo, const void* hi) {
  unsigned short l, h;
  memcpy(&l, lo, 2);
  memcpy(&h, hi, 2);
  return l | static_cast<unsigned>(h) << 16;
}

}  // namespace

// D (16×8, row-major) = A (16×16, row-major) × B (16×8, row-major), f16 into f32.
__global__ void m16n8k16_f16(const half* a, const half* b, float* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  unsigned ra[4], rb[2];
  for (int r = 0; r < 4; ++r) {  // a_{2r}, a_{2r+1}: row g (+8 for r odd), cols 2t (+8 for r >= 2)
    const int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
    ra[r] = pack(&a[row * 16 + col], &a[row * 16 + col + 1]);
  }
  for (int r = 0; r < 2; ++r) {  // b_{2r}, b_{2r+1}: rows 2t, 2t+1 (+8 for r = 1), col g
    const int row = 2 * t + 8 * r;
    rb[r] = pack(&b[row * 8 + g], &b[(row + 1) * 8 + g]);
  }
  float c[4] = {0, 0, 0, 0}, o[4];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};"
      : "=f"(o[0]), "=f"(o[1]), "=f"(o[2]), "=f"(o[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
  for (int i = 0; i < 4; ++i) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = o[i];
}

// The same product, the fragments loaded by ldmatrix from shared memory.
__global__ void m16n8k16_ldmatrix(const half* a, const half* b, float* d) {
  __shared__ __align__(16) half sa[16 * 16], sb[16 * 8];
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  for (int i = lane; i < 256; i += 32) sa[i] = a[i];
  for (int i = lane; i < 128; i += 32) sb[i] = b[i];
  __syncwarp();
  // x4: lanes 0-7 rows 0-7 (cols 0-7), 8-15 rows 8-15, 16-23 rows 0-7 (cols 8-15), 24-31 rows 8-15.
  const unsigned a_row = static_cast<unsigned>(__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]));
  // x2 .trans: lanes 0-15 name B's rows k = 0..15.
  const unsigned b_row = static_cast<unsigned>(__cvta_generic_to_shared(&sb[(lane % 16) * 8]));
  unsigned ra[4], rb[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3])
               : "r"(a_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(rb[0]), "=r"(rb[1]) : "r"(b_row));
  float o[4];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};"
      : "=f"(o[0]), "=f"(o[1]), "=f"(o[2]), "=f"(o[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "f"(0.0f));
  for (int i = 0; i < 4; ++i) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = o[i];
}

// m16n8k16 with half accumulators: D = A × B + C, C = 1 everywhere.
__global__ void m16n8k16_f16_acc(const half* a, const half* b, half* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  unsigned ra[4], rb[2];
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
    ra[r] = pack(&a[row * 16 + col], &a[row * 16 + col + 1]);
  }
  for (int r = 0; r < 2; ++r) {
    const int row = 2 * t + 8 * r;
    rb[r] = pack(&b[row * 8 + g], &b[(row + 1) * 8 + g]);
  }
  const half one = __float2half(1.0f);
  const unsigned c = pack(&one, &one);
  unsigned o[2];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%8};"
               : "=r"(o[0]), "=r"(o[1])
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(c));
  for (int i = 0; i < 4; ++i) {
    const unsigned short h = static_cast<unsigned short>(o[i >> 1] >> (16 * (i & 1)));
    memcpy(&d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)], &h, 2);
  }
}

// bf16 m16n8k8: A 16×8, B 8×8 (row-major), into f32.
__global__ void m16n8k8_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  unsigned ra[2], rb;
  for (int r = 0; r < 2; ++r) ra[r] = pack(&a[(g + 8 * r) * 8 + 2 * t], &a[(g + 8 * r) * 8 + 2 * t + 1]);
  rb = pack(&b[(2 * t) * 8 + g], &b[(2 * t + 1) * 8 + g]);
  float o[4];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
               : "=f"(o[0]), "=f"(o[1]), "=f"(o[2]), "=f"(o[3])
               : "r"(ra[0]), "r"(ra[1]), "r"(rb), "f"(0.0f));
  for (int i = 0; i < 4; ++i) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = o[i];
}

// tf32 m16n8k8: A 16×8, B 8×8 (row-major floats holding tf32 values), into f32.
__global__ void m16n8k8_tf32(const float* a, const float* b, float* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  unsigned ra[4], rb[2];
  for (int i = 0; i < 4; ++i) ra[i] = __float_as_uint(a[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)]);
  for (int i = 0; i < 2; ++i) rb[i] = __float_as_uint(b[(t + 4 * i) * 8 + g]);
  float o[4];
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};"
      : "=f"(o[0]), "=f"(o[1]), "=f"(o[2]), "=f"(o[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "f"(0.0f));
  for (int i = 0; i < 4; ++i) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = o[i];
}

// s8 m16n8k32: A 16×32, B 32×8 (row-major), into s32 with C = -7.
__global__ void m16n8k32_s8(const signed char* a, const signed char* b, int* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  unsigned ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0};
  for (int i = 0; i < 16; ++i) {
    const int row = g + 8 * ((i >> 2) & 1), col = t * 4 + (i & 3) + 16 * (i >> 3);
    ra[i / 4] |= static_cast<unsigned>(static_cast<unsigned char>(a[row * 32 + col])) << (8 * (i % 4));
  }
  for (int i = 0; i < 8; ++i) {
    const int row = t * 4 + (i & 3) + 16 * (i >> 2);
    rb[i / 4] |= static_cast<unsigned>(static_cast<unsigned char>(b[row * 8 + g])) << (8 * (i % 4));
  }
  int o[4];
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(-7));
  for (int i = 0; i < 4; ++i) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = o[i];
}

// f64 m8n8k4: A 8×4, B 4×8 (row-major), into f64 with C = 0.25.
__global__ void m8n8k4_f64(const double* a, const double* b, double* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  double o[2];
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%4};"
               : "=d"(o[0]), "=d"(o[1])
               : "d"(a[g * 4 + t]), "d"(b[t * 8 + g]), "d"(0.25));
  for (int i = 0; i < 2; ++i) d[g * 8 + 2 * t + i] = o[i];
}

// ldmatrix.x4 of a 16×16 tile (lanes 0-15 name the rows of its left 8 columns, 16-31 of its
// right), then stmatrix.x4 to `out`. mode 0: neither .trans (a copy); 1: both .trans (a copy
// again); 2: only the store .trans (each 8×8 block transposed in place).
__global__ void ldst_matrix(const half* in, half* out, int mode) {
  __shared__ __align__(16) half s[256], o[256];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) s[i] = in[i];
  __syncwarp();
  // Lane l names row l % 16 of the left (l < 16) or right 8 columns.
  const int at = (lane % 16) * 16 + (lane / 16) * 8;
  const unsigned src = static_cast<unsigned>(__cvta_generic_to_shared(&s[at]));
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&o[at]));
  unsigned r[4];
  if (mode == 1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(src));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(src));
  }
  if (mode == 0) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(dst), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3]));
  } else {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(dst), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3]));
  }
  __syncwarp();
  for (int i = lane; i < 256; i += 32) out[i] = o[i];
}

namespace {

using kt::check_as;
using kt::from_device;
using kt::to_device;

int small(int i, int seed, int range) { return (i * 7 + seed * 13 + (i / 5) * 3) % range - range / 3; }

// want (m×n, row-major) = A (m×k, row-major) × B (k×n, row-major) + c.
std::vector<double> product(int m, int n, int k, const std::vector<double>& a, const std::vector<double>& b, double c) {
  std::vector<double> out(static_cast<size_t>(m) * n, c);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int q = 0; q < k; ++q) out[i * n + j] += a[i * k + q] * b[q * n + j];
  return out;
}

}  // namespace

int main() {
  {  // f16 m16n8k16: manual fragments, ldmatrix, half accumulators
    std::vector<double> av(256), bv(128);
    std::vector<half> a(256), b(128);
    for (int i = 0; i < 256; ++i) a[i] = __float2half(static_cast<float>(av[i] = small(i, 1, 9) * 0.5));
    for (int i = 0; i < 128; ++i) b[i] = __float2half(static_cast<float>(bv[i] = small(i, 2, 11)));
    half *da = to_device(a), *db = to_device(b), *dh;
    float* dd;
    CK(cudaMalloc(&dd, 128 * sizeof(float)));
    CK(cudaMalloc(&dh, 128 * sizeof(half)));
    m16n8k16_f16<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("mma.sync m16n8k16 f16 into f32 (fragments as the PTX ISA's tables place them)", from_device(dd, 128),
             product(16, 8, 16, av, bv, 0));
    CK(cudaMemset(dd, 0, 128 * sizeof(float)));
    m16n8k16_ldmatrix<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("ldmatrix.x4 and .x2.trans from shared memory feed mma.sync m16n8k16", from_device(dd, 128),
             product(16, 8, 16, av, bv, 0));
    m16n8k16_f16_acc<<<1, 32>>>(da, db, dh);
    CK_LAUNCH();
    const auto gh = from_device(dh, 128);
    std::vector<float> gf(128);
    for (int i = 0; i < 128; ++i) gf[i] = __half2float(gh[i]);
    check_as("mma.sync m16n8k16 f16 into f16 plus 1", gf, product(16, 8, 16, av, bv, 1));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
    CK(cudaFree(dh));
  }
  {  // bf16 m16n8k8
    std::vector<double> av(128), bv(64);
    std::vector<__nv_bfloat16> a(128), b(64);
    for (int i = 0; i < 128; ++i) a[i] = __float2bfloat16(static_cast<float>(av[i] = small(i, 3, 15)));
    for (int i = 0; i < 64; ++i) b[i] = __float2bfloat16(static_cast<float>(bv[i] = small(i, 4, 15) * 0.25));
    __nv_bfloat16 *da = to_device(a), *db = to_device(b);
    float* dd;
    CK(cudaMalloc(&dd, 128 * sizeof(float)));
    m16n8k8_bf16<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("mma.sync m16n8k8 bf16 into f32", from_device(dd, 128), product(16, 8, 8, av, bv, 0));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // tf32 m16n8k8
    std::vector<double> av(128), bv(64);
    std::vector<float> a(128), b(64);
    for (int i = 0; i < 128; ++i) a[i] = static_cast<float>(av[i] = small(i, 5, 31));
    for (int i = 0; i < 64; ++i) b[i] = static_cast<float>(bv[i] = small(i, 6, 31) * 0.5);
    float *da = to_device(a), *db = to_device(b), *dd;
    CK(cudaMalloc(&dd, 128 * sizeof(float)));
    m16n8k8_tf32<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("mma.sync m16n8k8 tf32 into f32", from_device(dd, 128), product(16, 8, 8, av, bv, 0));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // s8 m16n8k32
    std::vector<double> av(512), bv(256);
    std::vector<signed char> a(512), b(256);
    for (int i = 0; i < 512; ++i) av[i] = a[i] = static_cast<signed char>((i * 37) % 256 - 128);
    for (int i = 0; i < 256; ++i) bv[i] = b[i] = static_cast<signed char>((i * 91 + 5) % 256 - 128);
    signed char *da = to_device(a), *db = to_device(b);
    int* dd;
    CK(cudaMalloc(&dd, 128 * sizeof(int)));
    m16n8k32_s8<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("mma.sync m16n8k32 s8 into s32 minus 7", from_device(dd, 128), product(16, 8, 32, av, bv, -7));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // f64 m8n8k4
    std::vector<double> a(32), b(32);
    for (int i = 0; i < 32; ++i) a[i] = small(i, 7, 17) * 0.125;
    for (int i = 0; i < 32; ++i) b[i] = small(i, 8, 17) * 1.5;
    double *da = to_device(a), *db = to_device(b), *dd;
    CK(cudaMalloc(&dd, 64 * sizeof(double)));
    m8n8k4_f64<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("mma.sync m8n8k4 f64 plus 0.25", from_device(dd, 64), product(8, 8, 4, a, b, 0.25));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // ldmatrix + stmatrix round trips
    std::vector<half> in(256);
    std::vector<float> inf(256);
    for (int i = 0; i < 256; ++i) in[i] = __float2half(inf[i] = static_cast<float>(i));
    half *din = to_device(in), *dout;
    CK(cudaMalloc(&dout, 256 * sizeof(half)));
    const char* names[3] = {"ldmatrix.x4 then stmatrix.x4: the tile copied",
                            "ldmatrix.x4.trans then stmatrix.x4.trans: the tile copied",
                            "ldmatrix.x4 then stmatrix.x4.trans: each 8x8 block transposed"};
    for (int mode = 0; mode < 3; ++mode) {
      CK(cudaMemset(dout, 0, 256 * sizeof(half)));
      ldst_matrix<<<1, 32>>>(din, dout, mode);
      CK_LAUNCH();
      const auto got = from_device(dout, 256);
      std::vector<float> g(256), w(256);
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) {
          g[r * 16 + c] = __half2float(got[r * 16 + c]);
          // Block (r / 8, c / 8) transposed: (r, c) takes (block row + c % 8, block col + r % 8).
          const int tr = (r / 8) * 8 + c % 8, tc = (c / 8) * 8 + r % 8;
          w[r * 16 + c] = mode == 2 ? inf[tr * 16 + tc] : inf[r * 16 + c];
        }
      kt::check_array(names[mode], g.data(), w.data(), 256);
    }
    CK(cudaFree(din));
    CK(cudaFree(dout));
  }
  return kt::finish("mma");
}
