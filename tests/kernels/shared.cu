// SPDX-License-Identifier: Apache-2.0
// Shared memory and block barriers: static and dynamic shared memory (private to each block,
// the two kinds never overlapping), 64 KiB of dynamic shared memory after opting in,
// __syncthreads, __syncthreads_count/_and/_or, a block tree reduction, and a tiled 64x64x64
// SGEMM compared with the host: exactly on integer-valued inputs (every partial sum is an
// integer below 2^24, so exact in float in any order), and on random inputs within the
// classical dot-product bound |fl(a.b) - a.b| <= gamma_K * sum|a_k b_k|, gamma_K = K u/(1-K u),
// u = 2^-24, K = 64 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1; it holds with
// or without fused multiply-add and in any summation order).
#include "check.h"

#include <vector>

constexpr int kRev = 256;

__global__ void reverse_static(const int* in, int* out) {
  __shared__ int s[kRev];
  int t = threadIdx.x, base = blockIdx.x * kRev;
  s[t] = in[base + t];
  __syncthreads();
  out[base + t] = s[kRev - 1 - t];
}

// blockDim.x elements of dynamic shared memory per block.
__global__ void reverse_dynamic(const int* in, int* out) {
  extern __shared__ int d[];
  int t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  d[t] = in[base + t];
  __syncthreads();
  out[base + t] = d[n - 1 - t];
}

// 128 threads, 128 ints of static and 128 of dynamic shared memory: writing one must not
// disturb the other.
__global__ void static_and_dynamic(int* out) {
  __shared__ int st[128];
  extern __shared__ int dy[];
  int t = threadIdx.x, b = blockIdx.x;
  st[t] = t + 1000 * b;
  dy[t] = -t - 1000 * b;
  __syncthreads();
  out[(b * 128 + t) * 2] = st[127 - t];
  out[(b * 128 + t) * 2 + 1] = dy[127 - t];
}

constexpr int kBigWords = 16384;  // 64 KiB of dynamic shared memory
__device__ __host__ unsigned big_value(unsigned i, unsigned block) { return i * 2654435761u + block; }

__global__ void big_dynamic(unsigned* out) {
  extern __shared__ unsigned big[];
  for (int i = threadIdx.x; i < kBigWords; i += blockDim.x) big[i] = big_value(i, blockIdx.x);
  __syncthreads();
  unsigned acc = 0;
  for (int i = threadIdx.x; i < kBigWords; i += blockDim.x) acc = acc * 31 + big[kBigWords - 1 - i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Six block-wide votes per thread.
__global__ void votes(int* out) {
  int t = threadIdx.x;
  int r[6];
  r[0] = __syncthreads_count(t % 3 == 0);
  r[1] = __syncthreads_count(t < static_cast<int>(blockIdx.x));
  r[2] = __syncthreads_and(t < 1000) != 0;
  r[3] = __syncthreads_and(t != 77) != 0;
  r[4] = __syncthreads_or(t == 200) != 0;
  r[5] = __syncthreads_or(t >= static_cast<int>(blockDim.x)) != 0;
  for (int k = 0; k < 6; ++k) out[(blockIdx.x * blockDim.x + t) * 6 + k] = r[k];
}

// Block-wide votes in a loop: each round's count and "or" must be that round's alone.
__global__ void votes_in_loop(int rounds, int* out) {
  const int t = threadIdx.x + blockDim.x * threadIdx.y;
  int total = 0;
  for (int r = 0; r < rounds; ++r) {
    total = total * 3 + __syncthreads_count((t * (r + 1)) % 7 == 0);
    if (__syncthreads_or(t == r)) total += 1000;
  }
  out[blockIdx.x * blockDim.x * blockDim.y + t] = total;
}

// Tree reduction: 256 threads, 4 elements each, one partial sum per block.
__global__ void block_sum(const int* in, long long* partial) {
  __shared__ long long s[256];
  int t = threadIdx.x;
  const int* p = in + blockIdx.x * 1024;
  s[t] = static_cast<long long>(p[t]) + p[t + 256] + p[t + 512] + p[t + 768];
  __syncthreads();
  for (int stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

constexpr int kN = 64, kTile = 16;
// C = A * B, all kN x kN row-major, 16x16 tiles, grid (4,4) of blocks (16,16).
__global__ void sgemm_tiled(const float* A, const float* B, float* C) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < kN; k0 += kTile) {
    As[ty][tx] = A[row * kN + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * kN + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * kN + col] = acc;
}

// The shapes block loops split at barriers must handle: a loop whose trip count is a
// parameter with two barriers in it, a barrier under a branch on a parameter, a value computed
// before the barriers in code only some threads run and used after them, local memory indexed
// at run time and a call's argument buffers kept across barriers; 3-D blocks and blocks whose
// size is not a multiple of 32.
__device__ __noinline__ unsigned mix(unsigned a, unsigned b) { return a * 3u + b; }
__global__ void barrier_shapes(const unsigned* in, unsigned* out, int rounds, int mode) {
  extern __shared__ unsigned ring[];
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned v = in[blockIdx.x * n + t];
  unsigned kept = t % 3 == 0 ? v * 2u : v + threadIdx.y * 7u + threadIdx.z * 13u;
  unsigned hist[8];
  for (int k = 0; k < 8; ++k) hist[k] = 0;
  for (int r = 0; r < rounds; ++r) {
    ring[t] = v;
    __syncthreads();
    const unsigned left = ring[(t + n - 1) % n];
    __syncthreads();
    v = mix(v, left);
    hist[v & 7] += 1;
  }
  if (mode != 0) {
    ring[t] = kept;
    __syncthreads();
    kept += ring[n - 1 - t];
  }
  out[blockIdx.x * n + t] = v ^ kept ^ (hist[kept & 7] << 16);
}

// Values every thread computes the same, kept across barriers once for the block: a stride
// halved in a loop of barriers; one computed on a branch on a parameter; one computed only by
// the first warp (under threadIdx.x < 32) and used after a shuffle; and a counter every thread
// steps the same way but leaves at its own trip (threadIdx.x % 5), which is therefore not the
// same in all threads after the loop.
__global__ void uniform_values(unsigned* out, unsigned param) {
  extern __shared__ unsigned cells[];
  const unsigned t = threadIdx.x;
  unsigned acc = t;
  unsigned steps = 0;
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    cells[t] = acc;
    __syncthreads();
    if (t < stride) acc += cells[t + stride] * stride;
    steps += stride;
    __syncthreads();
  }
  unsigned chosen = param > 10 ? blockDim.x * 3u + param : blockIdx.x + 7u;
  __syncthreads();
  unsigned warp_part = 0;
  if (t < 32) {
    const unsigned only_first_warp = blockDim.x + param * 2u;
    unsigned v = __shfl_down_sync(0xffffffffu, t + only_first_warp, 1);
    warp_part = v + only_first_warp;
  }
  unsigned k = 0;
  while (k < t % 5) k += 1 + (param & 0u);
  __syncthreads();
  cells[t] = k;
  __syncthreads();
  out[blockIdx.x * blockDim.x * 4 + t * 4 + 0] = acc;
  out[blockIdx.x * blockDim.x * 4 + t * 4 + 1] = steps + chosen;
  out[blockIdx.x * blockDim.x * 4 + t * 4 + 2] = warp_part;
  out[blockIdx.x * blockDim.x * 4 + t * 4 + 3] = cells[(t + 1) % blockDim.x] + k * 100u;
}

static std::vector<unsigned> want_uniform_values(int blocks, unsigned n, unsigned param) {
  std::vector<unsigned> out(size_t(blocks) * n * 4);
  for (int b = 0; b < blocks; ++b) {
    std::vector<unsigned> acc(n), cells(n);
    for (unsigned t = 0; t < n; ++t) acc[t] = t;
    unsigned steps = 0;
    for (unsigned stride = n / 2; stride > 0; stride >>= 1) {
      cells = acc;
      for (unsigned t = 0; t < stride; ++t) acc[t] += cells[t + stride] * stride;
      steps += stride;
    }
    const unsigned chosen = param > 10 ? n * 3u + param : unsigned(b) + 7u;
    for (unsigned t = 0; t < n; ++t) {
      const unsigned first = n + param * 2u;
      const unsigned lane_from = (t % 32) + 1 < 32 && t + 1 < n ? t + 1 : t;  // shfl.down by 1
      unsigned* o = &out[(size_t(b) * n + t) * 4];
      o[0] = acc[t];
      o[1] = steps + chosen;
      o[2] = t < 32 ? lane_from + first + first : 0;
      o[3] = ((t + 1) % n) % 5 + (t % 5) * 100u;
    }
  }
  return out;
}

static std::vector<unsigned> want_barrier_shapes(const std::vector<unsigned>& in, int blocks, dim3 b, int rounds,
                                                 int mode) {
  const unsigned n = b.x * b.y * b.z;
  std::vector<unsigned> out(in.size());
  for (int blk = 0; blk < blocks; ++blk) {
    std::vector<unsigned> v(n), kept(n), left(n);
    std::vector<std::vector<unsigned>> hist(n, std::vector<unsigned>(8, 0));
    for (unsigned t = 0; t < n; ++t) {
      const unsigned ty = t / b.x % b.y, tz = t / b.x / b.y;
      v[t] = in[blk * n + t];
      kept[t] = t % 3 == 0 ? v[t] * 2u : v[t] + ty * 7u + tz * 13u;
    }
    for (int r = 0; r < rounds; ++r) {
      for (unsigned t = 0; t < n; ++t) left[t] = v[(t + n - 1) % n];
      for (unsigned t = 0; t < n; ++t) {
        v[t] = v[t] * 3u + left[t];
        hist[t][v[t] & 7] += 1;
      }
    }
    if (mode != 0) {
      std::vector<unsigned> before = kept;
      for (unsigned t = 0; t < n; ++t) kept[t] += before[n - 1 - t];
    }
    for (unsigned t = 0; t < n; ++t) out[blk * n + t] = v[t] ^ kept[t] ^ (hist[t][kept[t] & 7] << 16);
  }
  return out;
}

template <typename Kernel>
static std::vector<int> run_reverse(Kernel kernel, int blocks, int threads, size_t dyn) {
  int n = blocks * threads;
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = i * 3 - 7;
  int *din = nullptr, *dout = nullptr;
  CK(cudaMalloc(&din, n * sizeof(int)));
  CK(cudaMalloc(&dout, n * sizeof(int)));
  CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(dout, 0, n * sizeof(int)));
  kernel<<<blocks, threads, dyn>>>(din, dout);
  CK_LAUNCH();
  CK(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return out;
}

static std::vector<int> want_reverse(int blocks, int threads) {
  std::vector<int> w(blocks * threads);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) w[b * threads + t] = (b * threads + threads - 1 - t) * 3 - 7;
  return w;
}

static void sgemm_case(const char* name, const std::vector<float>& A, const std::vector<float>& B, bool exact) {
  const size_t bytes = kN * kN * sizeof(float);
  float *dA, *dB, *dC;
  CK(cudaMalloc(&dA, bytes));
  CK(cudaMalloc(&dB, bytes));
  CK(cudaMalloc(&dC, bytes));
  CK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemset(dC, 0xff, bytes));  // NaN until written
  sgemm_tiled<<<dim3(kN / kTile, kN / kTile), dim3(kTile, kTile)>>>(dA, dB, dC);
  CK_LAUNCH();
  std::vector<float> C(kN * kN);
  CK(cudaMemcpy(C.data(), dC, bytes, cudaMemcpyDeviceToHost));
  CK(cudaFree(dA));
  CK(cudaFree(dB));
  CK(cudaFree(dC));
  const double u = 0x1p-24, gamma = kN * u / (1 - kN * u);
  const double gamma_host = kN * 0x1p-53 / (1 - kN * 0x1p-53);  // the host's double sum
  size_t bad = 0, first = 0;
  double first_got = 0, first_want = 0, first_tol = 0;
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < kN; ++k) {
        double p = static_cast<double>(A[i * kN + k]) * B[k * kN + j];  // exact in double
        ref += p;
        mag += std::fabs(p);
      }
      double got = C[i * kN + j];
      double tol = exact ? 0.0 : (gamma + gamma_host) * mag;
      if (!(std::fabs(got - ref) <= tol) && bad++ == 0)
        first = i * kN + j, first_got = got, first_want = ref, first_tol = tol;
    }
  if (bad == 0)
    kt::check(name, true);
  else
    kt::checkf(name, false, "%zu of %d beyond the bound; first C[%zu] = %.9g, expected %.9g +- %.3g", bad, kN * kN,
               first, first_got, first_want, first_tol);
}

int main() {
  {
    auto got = run_reverse(reverse_static, 64, kRev, 0);
    auto want = want_reverse(64, kRev);
    kt::check_array("static shared: per-block reverse (64 blocks x 256)", got.data(), want.data(), got.size());
  }
  for (int threads : {32, 100, 512, 1024}) {
    auto got = run_reverse(reverse_dynamic, 40, threads, threads * sizeof(int));
    auto want = want_reverse(40, threads);
    char name[96];
    std::snprintf(name, sizeof name, "dynamic shared: per-block reverse (40 blocks x %d)", threads);
    kt::check_array(name, got.data(), want.data(), got.size());
  }
  {
    const int blocks = 16;
    int* d;
    CK(cudaMalloc(&d, blocks * 128 * 2 * sizeof(int)));
    static_and_dynamic<<<blocks, 128, 128 * sizeof(int)>>>(d);
    CK_LAUNCH();
    std::vector<int> got(blocks * 256), want(blocks * 256);
    CK(cudaMemcpy(got.data(), d, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < 128; ++t) {
        want[(b * 128 + t) * 2] = (127 - t) + 1000 * b;
        want[(b * 128 + t) * 2 + 1] = -(127 - t) - 1000 * b;
      }
    kt::check_array("static and dynamic shared do not overlap", got.data(), want.data(), got.size());
  }
  {
    const int blocks = 8, threads = 256;
    CK(cudaFuncSetAttribute(big_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, kBigWords * 4));
    unsigned* d;
    CK(cudaMalloc(&d, blocks * threads * sizeof(unsigned)));
    big_dynamic<<<blocks, threads, kBigWords * 4>>>(d);
    CK_LAUNCH();
    std::vector<unsigned> got(blocks * threads), want(blocks * threads);
    CK(cudaMemcpy(got.data(), d, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t) {
        unsigned acc = 0;
        for (int i = t; i < kBigWords; i += threads) acc = acc * 31 + big_value(kBigWords - 1 - i, b);
        want[b * threads + t] = acc;
      }
    kt::check_array("64 KiB dynamic shared after opt-in", got.data(), want.data(), got.size());
  }
  {
    const int blocks = 300, threads = 256;  // blockIdx.x runs past blockDim.x for the count
    int* d;
    CK(cudaMalloc(&d, blocks * threads * 6 * sizeof(int)));
    votes<<<blocks, threads>>>(d);
    CK_LAUNCH();
    std::vector<int> got(blocks * threads * 6), want(blocks * threads * 6);
    CK(cudaMemcpy(got.data(), d, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t) {
        int* w = &want[(b * threads + t) * 6];
        w[0] = 86;  // multiples of 3 in [0, 256)
        w[1] = b < threads ? b : threads;
        w[2] = 1, w[3] = 0, w[4] = 1, w[5] = 0;
      }
    kt::check_array("__syncthreads_count/_and/_or", got.data(), want.data(), got.size());
  }
  for (const dim3 b : {dim3(3), dim3(100), dim3(32, 8)}) {
    const int blocks = 3, rounds = 5, n = static_cast<int>(b.x * b.y);
    int* d;
    CK(cudaMalloc(&d, blocks * n * sizeof(int)));
    votes_in_loop<<<blocks, b>>>(rounds, d);
    CK_LAUNCH();
    std::vector<int> got(blocks * n), want(blocks * n);
    CK(cudaMemcpy(got.data(), d, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    int total = 0;
    for (int r = 0; r < rounds; ++r) {
      int count = 0;
      for (int t = 0; t < n; ++t) count += (t * (r + 1)) % 7 == 0;
      total = total * 3 + count + (r < n ? 1000 : 0);
    }
    for (int& w : want) w = total;
    char name[96];
    std::snprintf(name, sizeof name, "__syncthreads_count/_or in a loop, blocks of %u x %u", b.x, b.y);
    kt::check_array(name, got.data(), want.data(), got.size());
  }
  {
    const int blocks = 64, n = blocks * 1024;
    std::vector<int> in(n);
    kt::Rng rng(7);
    for (int& v : in) v = static_cast<int>(rng.u32() % 2000001) - 1000000;
    int* din;
    long long* dp;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dp, blocks * sizeof(long long)));
    CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    block_sum<<<blocks, 256>>>(din, dp);
    CK_LAUNCH();
    std::vector<long long> got(blocks), want(blocks, 0);
    CK(cudaMemcpy(got.data(), dp, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dp));
    for (int i = 0; i < n; ++i) want[i / 1024] += in[i];
    kt::check_array("block tree reduction (64 blocks x 1024 ints)", got.data(), want.data(), blocks);
  }
  {
    std::vector<float> A(kN * kN), B(kN * kN);
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) {
        A[i * kN + j] = static_cast<float>((i * 3 + j) % 17 - 8);
        B[i * kN + j] = static_cast<float>((i + 5 * j) % 13 - 6);
      }
    sgemm_case("tiled SGEMM 64x64x64, integer-valued: exact", A, B, true);
    kt::Rng rng(11);
    for (float& v : A) v = static_cast<float>(rng.uniform(-1, 1));
    for (float& v : B) v = static_cast<float>(rng.uniform(-1, 1));
    sgemm_case("tiled SGEMM 64x64x64, random: within gamma_64 * sum|a||b|", A, B, false);
  }
  {
    const dim3 shapes[] = {dim3(8, 4, 2), dim3(7, 3, 5), dim3(100), dim3(1024), dim3(1, 1, 3)};
    const int blocks = 6;
    for (const dim3& b : shapes)
      for (int rounds : {0, 5})
        for (int mode : {0, 1}) {
          const size_t n = blocks * b.x * b.y * b.z;
          std::vector<unsigned> in(n), got(n);
          kt::Rng rng(n + rounds + mode);
          for (unsigned& x : in) x = rng.u32();
          unsigned *din, *dout;
          CK(cudaMalloc(&din, n * sizeof(unsigned)));
          CK(cudaMalloc(&dout, n * sizeof(unsigned)));
          CK(cudaMemcpy(din, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
          barrier_shapes<<<blocks, b, b.x * b.y * b.z * sizeof(unsigned)>>>(din, dout, rounds, mode);
          CK_LAUNCH();
          CK(cudaMemcpy(got.data(), dout, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
          CK(cudaFree(din));
          CK(cudaFree(dout));
          const auto want = want_barrier_shapes(in, blocks, b, rounds, mode);
          char name[128];
          std::snprintf(name, sizeof name, "barriers in loops and branches: block (%u,%u,%u), %d rounds, mode %d", b.x,
                        b.y, b.z, rounds, mode);
          kt::check_array(name, got.data(), want.data(), n);
        }
  }
  for (unsigned threads : {32u, 64u, 256u})
    for (unsigned param : {3u, 40u}) {
      const int blocks = 5;
      const size_t n = size_t(blocks) * threads * 4;
      unsigned* d;
      CK(cudaMalloc(&d, n * sizeof(unsigned)));
      uniform_values<<<blocks, threads, threads * sizeof(unsigned)>>>(d, param);
      CK_LAUNCH();
      std::vector<unsigned> got(n);
      CK(cudaMemcpy(got.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
      CK(cudaFree(d));
      const auto want = want_uniform_values(blocks, threads, param);
      char name[128];
      std::snprintf(name, sizeof name,
                    "values the whole block computes the same, across barriers: %u threads, param %u", threads, param);
      kt::check_array(name, got.data(), want.data(), n);
    }
  return kt::finish("shared");
}
