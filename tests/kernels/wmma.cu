// SPDX-License-Identifier: Apache-2.0
// Warp matrix operations (nvcuda::wmma, compute capability 8.0 for bf16, tf32 and double):
//   f16 inputs, f32 accumulators, m16n16k16: a 64×64×64 GEMM, one warp per 16×16 tile of the
//     result, looping over k (global memory, row-major A, column-major B), four warps a block;
//   the same GEMM with the tiles staged in shared memory between __syncthreads();
//   one product behind a branch on loaded data (the lanes then run as fibers, which meet at
//   the product as the loops of the other kernels do);
//   f16 accumulators (m32n8k16, column-major A, row-major B) scaled element by element
//     through the fragment's x[] between two mma_sync;
//   m8n32k16, a result stored column-major;
//   bf16 (m16n16k16), tf32 (m16n16k8, inputs rounded by __float_to_tf32), s8 and u8 into
//     int32 (m16n16k16), double (m8n8k4).
// Inputs are small integers (and halves), so every product and sum is exact in the
// accumulator's type: results compare exactly with the host's.
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <vector>

using namespace nvcuda;

constexpr int kN = 64;  // the GEMM's M = N = K

// C (row-major, kN×kN) = A (row-major) × B (column-major), one warp per 16×16 tile of C.
__global__ void gemm_f16(const half* a, const half* b, float* c) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int tm = warp / (kN / 16), tn = warp % (kN / 16);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < kN; k += 16) {
    wmma::load_matrix_sync(fa, a + tm * 16 * kN + k, kN);
    wmma::load_matrix_sync(fb, b + tn * 16 * kN + k, kN);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tm * 16 * kN + tn * 16, acc, kN, wmma::mem_row_major);
}

// The same product with each warp's A and B tiles copied to shared memory first.
__global__ void gemm_f16_shared(const half* a, const half* b, float* c) {
  __shared__ half sa[4][16 * 16], sb[4][16 * 16];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp = blockIdx.x * 4 + w;
  const int tm = warp / (kN / 16), tn = warp % (kN / 16);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < kN; k += 16) {
    for (int i = lane; i < 256; i += 32) {
      sa[w][i] = a[(tm * 16 + i / 16) * kN + k + i % 16];
      sb[w][i] = b[(tn * 16 + i / 16) * kN + k + i % 16];
    }
    __syncthreads();
    wmma::load_matrix_sync(fa, sa[w], 16);
    wmma::load_matrix_sync(fb, sb[w], 16);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncthreads();
  }
  wmma::store_matrix_sync(c + tm * 16 * kN + tn * 16, acc, kN, wmma::mem_row_major);
}

// C's first 16×16 tile over k < 16, in code whose lanes the compiler cannot prove run together.
__global__ void mma_data_branch(const half* a, const half* b, const int* go, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  if (go[threadIdx.x]) {
    wmma::load_matrix_sync(fa, a, kN);
    wmma::load_matrix_sync(fb, b, kN);
    wmma::fill_fragment(acc, 0.0f);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, kN, wmma::mem_row_major);
  }
}

// D (32×8, row-major) = 2 × (A × B) + A × B with half accumulators: A 32×16 column-major,
// B 16×8 row-major.
__global__ void mma_m32n8k16_half(const half* a, const half* b, half* d) {
  wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 32, 8, 16, half> acc;
  wmma::load_matrix_sync(fa, a, 32);
  wmma::load_matrix_sync(fb, b, 8);
  wmma::fill_fragment(acc, __float2half(0.0f));
  wmma::mma_sync(acc, fa, fb, acc);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = __hmul(acc.x[i], __float2half(2.0f));
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 8, wmma::mem_row_major);
}

// D (8×32, stored column-major) = A (8×16 row-major) × B (16×32 row-major) + C (row-major).
__global__ void mma_m8n32k16(const half* a, const half* b, const float* c, float* d) {
  wmma::fragment<wmma::matrix_a, 8, 32, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 8, 32, 16, float> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 32);
  wmma::load_matrix_sync(acc, c, 32, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 8, wmma::mem_col_major);
}

// One 16×16×16 product of bf16 inputs into float (row-major A, column-major B).
__global__ void mma_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::fill_fragment(acc, 1.0f);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// One 16×16×8 product of tf32 inputs (float rounded by __float_to_tf32) into float.
__global__ void mma_tf32(const float* a, const float* b, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 16);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::fill_fragment(acc, 0.0f);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// 16×16×16 integer products into int32: signed and unsigned bytes.
template <typename T>
__global__ void mma_int8(const T* a, const T* b, const int* c, int* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// One 8×8×4 product of doubles.
__global__ void mma_f64(const double* a, const double* b, double* d) {
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
  wmma::load_matrix_sync(fa, a, 4);
  wmma::load_matrix_sync(fb, b, 8);
  wmma::fill_fragment(acc, -0.5);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 8, wmma::mem_row_major);
}

namespace {

using kt::check_as;
using kt::from_device;
using kt::to_device;

int small(int i, int seed, int range) { return (i * 7 + seed * 13 + (i / 5) * 3) % range - range / 3; }

// want[i][j] (row-major m×n) = sum_k A(i,k) B(k,j) + C(i,j), element accessors given.
template <typename FA, typename FB, typename FC>
std::vector<double> product(int m, int n, int k, FA a, FB b, FC c) {
  std::vector<double> out(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = c(i, j);
      for (int q = 0; q < k; ++q) s += a(i, q) * b(q, j);
      out[static_cast<size_t>(i) * n + j] = s;
    }
  return out;
}

}  // namespace

int main() {
  {  // the 64×64×64 GEMM, from global and from shared memory
    std::vector<float> af(kN * kN), bf(kN * kN);
    std::vector<half> a(kN * kN), b(kN * kN);
    for (int i = 0; i < kN * kN; ++i) {
      af[i] = static_cast<float>(small(i, 1, 9)) * 0.5f;
      bf[i] = static_cast<float>(small(i, 2, 11));
      a[i] = __float2half(af[i]);
      b[i] = __float2half(bf[i]);
    }
    // A row-major; B column-major: B(k, j) at b[j * kN + k].
    const auto want = product(
        kN, kN, kN, [&](int i, int q) { return double(af[i * kN + q]); },
        [&](int q, int j) { return double(bf[j * kN + q]); }, [](int, int) { return 0.0; });
    half *da = to_device(a), *db = to_device(b);
    float* dc;
    CK(cudaMalloc(&dc, kN * kN * sizeof(float)));
    gemm_f16<<<4, 128>>>(da, db, dc);
    CK_LAUNCH();
    check_as("f16 m16n16k16 GEMM 64x64x64 (16 warps, 4 k-steps, global memory)", from_device(dc, kN * kN), want);
    CK(cudaMemset(dc, 0, kN * kN * sizeof(float)));
    gemm_f16_shared<<<4, 128>>>(da, db, dc);
    CK_LAUNCH();
    check_as("f16 m16n16k16 GEMM 64x64x64 (tiles in shared memory between __syncthreads)", from_device(dc, kN * kN),
             want);
    CK(cudaMemset(dc, 0, kN * kN * sizeof(float)));
    const std::vector<int> go(32, 1);
    int* dgo = to_device(go);
    mma_data_branch<<<1, 32>>>(da, db, dgo, dc);
    CK_LAUNCH();
    const auto got = from_device(dc, kN * kN);
    std::vector<float> tile(256);
    std::vector<double> tile_want = product(
        16, 16, 16, [&](int i, int q) { return double(af[i * kN + q]); },
        [&](int q, int j) { return double(bf[j * kN + q]); }, [](int, int) { return 0.0; });
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) tile[i * 16 + j] = got[i * kN + j];
    check_as("f16 m16n16k16 behind a branch on loaded data (lanes as fibers)", tile, tile_want);
    CK(cudaFree(dgo));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
  }
  {  // m32n8k16, half accumulators: A column-major (A(i,k) at a[k * 32 + i]), B row-major
    std::vector<float> af(32 * 16), bf(16 * 8);
    std::vector<half> a(af.size()), b(bf.size());
    for (size_t i = 0; i < af.size(); ++i) a[i] = __float2half(af[i] = static_cast<float>(small(int(i), 3, 7)));
    for (size_t i = 0; i < bf.size(); ++i) b[i] = __float2half(bf[i] = static_cast<float>(small(int(i), 4, 5)));
    auto ab = product(
        32, 8, 16, [&](int i, int q) { return double(af[q * 32 + i]); },
        [&](int q, int j) { return double(bf[q * 8 + j]); }, [](int, int) { return 0.0; });
    for (double& v : ab) v *= 3;  // 2 × (A × B) + A × B
    half *da = to_device(a), *db = to_device(b), *dd;
    CK(cudaMalloc(&dd, 32 * 8 * sizeof(half)));
    mma_m32n8k16_half<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    const auto got = from_device(dd, 32 * 8);
    std::vector<float> gf(got.size());
    for (size_t i = 0; i < got.size(); ++i) gf[i] = __half2float(got[i]);
    check_as("f16 m32n8k16 with half accumulators, scaled through the fragment's elements", gf, ab);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // m8n32k16, stored column-major
    std::vector<float> af(8 * 16), bf(16 * 32), c(8 * 32);
    std::vector<half> a(af.size()), b(bf.size());
    for (size_t i = 0; i < af.size(); ++i) a[i] = __float2half(af[i] = static_cast<float>(small(int(i), 5, 9)));
    for (size_t i = 0; i < bf.size(); ++i) b[i] = __float2half(bf[i] = static_cast<float>(small(int(i), 6, 9)));
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(small(int(i), 7, 100));
    const auto rm = product(
        8, 32, 16, [&](int i, int q) { return double(af[i * 16 + q]); },
        [&](int q, int j) { return double(bf[q * 32 + j]); }, [&](int i, int j) { return double(c[i * 32 + j]); });
    std::vector<double> cm(rm.size());  // column-major: D(i, j) at j * 8 + i
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 32; ++j) cm[j * 8 + i] = rm[i * 32 + j];
    half *da = to_device(a), *db = to_device(b);
    float *dc = to_device(c), *dd;
    CK(cudaMalloc(&dd, 8 * 32 * sizeof(float)));
    mma_m8n32k16<<<1, 32>>>(da, db, dc, dd);
    CK_LAUNCH();
    check_as("f16 m8n32k16 plus a loaded accumulator, stored column-major", from_device(dd, 8 * 32), cm);
    for (void* p : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(dc), static_cast<void*>(dd)})
      CK(cudaFree(p));
  }
  {  // bf16
    std::vector<float> af(256), bf(256);
    std::vector<__nv_bfloat16> a(256), b(256);
    for (int i = 0; i < 256; ++i) {
      a[i] = __float2bfloat16(af[i] = static_cast<float>(small(i, 8, 15)));
      b[i] = __float2bfloat16(bf[i] = static_cast<float>(small(i, 9, 15)) * 0.25f);
    }
    const auto want = product(
        16, 16, 16, [&](int i, int q) { return double(af[i * 16 + q]); },
        [&](int q, int j) { return double(bf[j * 16 + q]); }, [](int, int) { return 1.0; });
    __nv_bfloat16 *da = to_device(a), *db = to_device(b);
    float* dd;
    CK(cudaMalloc(&dd, 256 * sizeof(float)));
    mma_bf16<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("bf16 m16n16k16 into float", from_device(dd, 256), want);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // tf32: inputs v (1 + 2^-13), whose low bits __float_to_tf32 rounds away (back to v)
    std::vector<float> a(16 * 8), b(8 * 16), ar(a.size()), br(b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ar[i] = static_cast<float>(small(int(i), 10, 31));
      a[i] = ar[i] * (1.0f + 1.0f / 8192);
    }
    for (size_t i = 0; i < b.size(); ++i) {
      br[i] = static_cast<float>(small(int(i), 11, 31));
      b[i] = br[i] * (1.0f + 1.0f / 8192);
    }
    const auto want = product(
        16, 16, 8, [&](int i, int q) { return double(ar[i * 8 + q]); },
        [&](int q, int j) { return double(br[q * 16 + j]); }, [](int, int) { return 0.0; });
    float *da = to_device(a), *db = to_device(b), *dd;
    CK(cudaMalloc(&dd, 256 * sizeof(float)));
    mma_tf32<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("tf32 m16n16k8 (inputs rounded by __float_to_tf32)", from_device(dd, 256), want);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  {  // signed and unsigned bytes into int32, with a loaded accumulator
    std::vector<signed char> sa(256), sb(256);
    std::vector<unsigned char> ua(256), ub(256);
    std::vector<int> c(256);
    for (int i = 0; i < 256; ++i) {
      sa[i] = static_cast<signed char>((i * 37) % 256 - 128);
      sb[i] = static_cast<signed char>((i * 91 + 5) % 256 - 128);
      ua[i] = static_cast<unsigned char>((i * 53 + 7) % 256);
      ub[i] = static_cast<unsigned char>((i * 29 + 3) % 256);
      c[i] = i * 1000 - 100000;
    }
    int* dc = to_device(c);
    int* dd;
    CK(cudaMalloc(&dd, 256 * sizeof(int)));
    {
      const auto want = product(
          16, 16, 16, [&](int i, int q) { return double(sa[i * 16 + q]); },
          [&](int q, int j) { return double(sb[j * 16 + q]); }, [&](int i, int j) { return double(c[i * 16 + j]); });
      signed char *da = to_device(sa), *db = to_device(sb);
      mma_int8<signed char><<<1, 32>>>(da, db, dc, dd);
      CK_LAUNCH();
      check_as("s8 m16n16k16 into int32", from_device(dd, 256), want);
      CK(cudaFree(da));
      CK(cudaFree(db));
    }
    {
      const auto want = product(
          16, 16, 16, [&](int i, int q) { return double(ua[i * 16 + q]); },
          [&](int q, int j) { return double(ub[j * 16 + q]); }, [&](int i, int j) { return double(c[i * 16 + j]); });
      unsigned char *da = to_device(ua), *db = to_device(ub);
      mma_int8<unsigned char><<<1, 32>>>(da, db, dc, dd);
      CK_LAUNCH();
      check_as("u8 m16n16k16 into int32", from_device(dd, 256), want);
      CK(cudaFree(da));
      CK(cudaFree(db));
    }
    CK(cudaFree(dc));
    CK(cudaFree(dd));
  }
  {  // double
    std::vector<double> a(8 * 4), b(4 * 8);
    for (size_t i = 0; i < a.size(); ++i) a[i] = small(int(i), 12, 17) * 0.125;
    for (size_t i = 0; i < b.size(); ++i) b[i] = small(int(i), 13, 17) * 1.5;
    const auto want = product(
        8, 8, 4, [&](int i, int q) { return a[i * 4 + q]; }, [&](int q, int j) { return b[q * 8 + j]; },
        [](int, int) { return -0.5; });
    double *da = to_device(a), *db = to_device(b), *dd;
    CK(cudaMalloc(&dd, 64 * sizeof(double)));
    mma_f64<<<1, 32>>>(da, db, dd);
    CK_LAUNCH();
    check_as("f64 m8n8k4", from_device(dd, 64), want);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dd));
  }
  return kt::finish("wmma");
}
