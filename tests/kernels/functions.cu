// SPDX-License-Identifier: Apache-2.0
// Device code structure: __noinline__ device functions, recursion (factorial, Fibonacci,
// bounded depth), indirect calls through a __device__ table of function pointers, templates
// instantiated for several types and sizes, a kernel taking a 4000-byte struct by value,
// local memory (a per-thread array indexed at run time), __constant__ and __device__
// variables with initialisers, cudaMemcpyToSymbol / cudaMemcpyFromSymbol (with offsets) and
// cudaGetSymbolAddress.
#include "check.h"

#include <vector>

// ---- device functions and recursion
__device__ __noinline__ int add3(int a, int b, int c) { return a + b + c; }
__device__ __noinline__ unsigned long long factorial(unsigned n) { return n <= 1 ? 1ull : n * factorial(n - 1); }
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void recursion(int* calls, unsigned long long* fact, int* fibs) {
  int t = threadIdx.x;  // 0..20
  calls[t] = add3(t, 2 * t, 3 * t);
  fact[t] = factorial(static_cast<unsigned>(t));
  fibs[t] = fib(t < 16 ? t : 15);
}

// ---- indirect calls
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_sub(int a, int b) { return a - b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_xor(int a, int b) { return a ^ b; }
typedef int (*binop)(int, int);
__device__ binop g_ops[4] = {op_add, op_sub, op_mul, op_xor};

__global__ void indirect(const int* a, const int* b, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  binop f = g_ops[(t * 7 + a[t]) & 3];  // a different target in neighbouring lanes
  out[t] = f(a[t], b[t]);
}

// ---- templates
template <typename T, int N>
__global__ void scale_sum(const T* in, T* out, T factor) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  T acc = T(0);
#pragma unroll
  for (int k = 0; k < N; ++k) acc += in[t * N + k] * factor;
  out[t] = acc;
}

// ---- a 4000-byte parameter
struct Big {
  int values[998];
  long long tag;
};
static_assert(sizeof(Big) == 4000);
__global__ void by_value(Big big, int extra, int* out) {
  int t = threadIdx.x;  // 998 threads
  out[t] = big.values[t] * 3 + extra + static_cast<int>(big.tag % 1000);
}

// ---- local memory: an array indexed by run-time values stays in the thread's stack
__global__ void local_array(const int* seed, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int loc[64];
  for (int i = 0; i < 64; ++i) loc[(i * 7 + seed[t]) & 63] = i * t;
  unsigned acc = 0;  // wraps, as unsigned arithmetic does
  for (int i = 0; i < 64; ++i) acc = acc * 3 + static_cast<unsigned>(loc[(i * 5 + seed[t]) & 63]);
  out[t] = static_cast<int>(acc);
}

// ---- __constant__ and __device__ variables
__constant__ int c_table[8] = {2, 3, 5, 7, 11, 13, 17, 19};
__constant__ float c_coeffs[4];
__device__ int d_counter = 42;
__device__ double d_values[4] = {0.5, 1.5, -2.25, 1e10};
__device__ int d_scratch[16];

__global__ void read_symbols(float x, float* fout, int* iout, double* dout) {
  int t = threadIdx.x;  // 8 threads
  int counter = d_counter;
  iout[t] = c_table[t] * counter;
  fout[t] = c_coeffs[t % 4] * x;
  if (t < 4) dout[t] = d_values[t] * 2;
  d_scratch[t] = c_table[7 - t];
  __syncthreads();                      // every thread has read d_counter
  if (t == 0) d_counter = counter + 1;  // read back with cudaMemcpyFromSymbol
}
__global__ void write_through(int* p, int n) {
  int t = threadIdx.x;
  if (t < n) p[t] = p[t] * 10 + t;
}

int main() {
  {
    int *dc, *df;
    unsigned long long* dfact;
    CK(cudaMalloc(&dc, 21 * sizeof(int)));
    CK(cudaMalloc(&df, 21 * sizeof(int)));
    CK(cudaMalloc(&dfact, 21 * sizeof(unsigned long long)));
    recursion<<<1, 21>>>(dc, dfact, df);
    CK_LAUNCH();
    int calls[21], fibs[21];
    unsigned long long fact[21];
    CK(cudaMemcpy(calls, dc, sizeof calls, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(fibs, df, sizeof fibs, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(fact, dfact, sizeof fact, cudaMemcpyDeviceToHost));
    int wc[21], wf[21];
    unsigned long long wfact[21];
    int fseq[16] = {0, 1};
    for (int i = 2; i < 16; ++i) fseq[i] = fseq[i - 1] + fseq[i - 2];
    unsigned long long f = 1;
    for (int t = 0; t < 21; ++t) {
      wc[t] = 6 * t;
      if (t > 1) f *= t;
      wfact[t] = f;
      wf[t] = fseq[t < 16 ? t : 15];
    }
    kt::check_array("__noinline__ device function", calls, wc, 21);
    kt::check_array("recursive factorial 0..20", fact, wfact, 21);
    kt::check_array("recursive fib 0..15", fibs, wf, 21);
    CK(cudaFree(dc));
    CK(cudaFree(df));
    CK(cudaFree(dfact));
  }
  {
    const int n = 256;
    std::vector<int> a(n), b(n), got(n), want(n);
    kt::Rng rng(9);
    for (int i = 0; i < n; ++i)
      a[i] = static_cast<int>(rng.u32() % 2001) - 1000, b[i] = static_cast<int>(rng.u32() % 2001) - 1000;
    int *da, *db, *dout;
    CK(cudaMalloc(&da, n * sizeof(int)));
    CK(cudaMalloc(&db, n * sizeof(int)));
    CK(cudaMalloc(&dout, n * sizeof(int)));
    CK(cudaMemcpy(da, a.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    indirect<<<2, 128>>>(da, db, dout);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int t = 0; t < n; ++t) {
      int x = a[t], y = b[t];
      switch ((t * 7 + x) & 3) {
        case 0: want[t] = x + y; break;
        case 1: want[t] = x - y; break;
        case 2: want[t] = x * y; break;
        default: want[t] = x ^ y;
      }
    }
    kt::check_array("indirect calls through a __device__ function-pointer table", got.data(), want.data(), n);
    // Local memory over the same launch shape.
    local_array<<<2, 128>>>(da, dout);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int t = 0; t < n; ++t) {
      int loc[64];
      for (int i = 0; i < 64; ++i) loc[(i * 7 + a[t]) & 63] = i * t;
      int acc = 0;
      for (int i = 0; i < 64; ++i)
        acc = static_cast<int>(static_cast<unsigned>(acc) * 3u + static_cast<unsigned>(loc[(i * 5 + a[t]) & 63]));
      want[t] = acc;
    }
    kt::check_array("local memory array indexed at run time", got.data(), want.data(), n);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dout));
  }
  {
    const int threads = 64, N = 8, n = threads * N;
    std::vector<int> ii(n);
    std::vector<float> fi(n);
    std::vector<double> di(n);
    for (int i = 0; i < n; ++i) ii[i] = i % 97 - 40, fi[i] = static_cast<float>(i % 13) * 0.5f, di[i] = (i % 29) * 0.25;
    int *dii, *dio;
    float *dfi, *dfo;
    double *ddi, *ddo;
    CK(cudaMalloc(&dii, n * sizeof(int)));
    CK(cudaMalloc(&dio, threads * sizeof(int)));
    CK(cudaMalloc(&dfi, n * sizeof(float)));
    CK(cudaMalloc(&dfo, threads * sizeof(float)));
    CK(cudaMalloc(&ddi, n * sizeof(double)));
    CK(cudaMalloc(&ddo, threads * sizeof(double)));
    CK(cudaMemcpy(dii, ii.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dfi, fi.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ddi, di.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    scale_sum<int, N><<<1, threads>>>(dii, dio, 3);
    CK_LAUNCH();
    scale_sum<float, N><<<1, threads>>>(dfi, dfo, 0.25f);
    CK_LAUNCH();
    scale_sum<double, 4><<<2, threads / 2>>>(ddi, ddo, -2.0);
    CK_LAUNCH();
    std::vector<int> gi(threads), wi(threads, 0);
    std::vector<float> gf(threads), wf(threads, 0);
    std::vector<double> gd(threads), wd(threads, 0);
    CK(cudaMemcpy(gi.data(), dio, threads * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gf.data(), dfo, threads * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gd.data(), ddo, threads * sizeof(double), cudaMemcpyDeviceToHost));
    for (int t = 0; t < threads; ++t) {
      for (int k = 0; k < N; ++k)
        wi[t] += ii[t * N + k] * 3, wf[t] += fi[t * N + k] * 0.25f;  // exact: multiples of 1/8
      for (int k = 0; k < 4; ++k) wd[t] += di[t * 4 + k] * -2.0;
    }
    kt::check_array("template scale_sum<int, 8>", gi.data(), wi.data(), threads);
    kt::check_array("template scale_sum<float, 8>", gf.data(), wf.data(), threads);
    kt::check_array("template scale_sum<double, 4>", gd.data(), wd.data(), threads);
    for (void* p : {static_cast<void*>(dii), static_cast<void*>(dio), static_cast<void*>(dfi), static_cast<void*>(dfo),
                    static_cast<void*>(ddi), static_cast<void*>(ddo)})
      CK(cudaFree(p));
  }
  {
    Big big;
    for (int i = 0; i < 998; ++i) big.values[i] = i * i - 5000;
    big.tag = 123456789012345LL;
    int* d;
    CK(cudaMalloc(&d, 998 * sizeof(int)));
    by_value<<<1, 998>>>(big, -17, d);
    CK_LAUNCH();
    std::vector<int> got(998), want(998);
    CK(cudaMemcpy(got.data(), d, 998 * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (int t = 0; t < 998; ++t) want[t] = big.values[t] * 3 - 17 + static_cast<int>(big.tag % 1000);
    kt::check_array("4000-byte struct passed by value", got.data(), want.data(), 998);
  }
  {
    const float coeffs[4] = {1.5f, -2.0f, 0.25f, 8.0f};
    CK(cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof coeffs));
    const int tail[2] = {100, 200};  // d_scratch[14..15] before the kernel overwrites 0..7
    CK(cudaMemcpyToSymbol(d_scratch, tail, sizeof tail, 14 * sizeof(int)));
    float* df;
    int* di;
    double* dd;
    CK(cudaMalloc(&df, 8 * sizeof(float)));
    CK(cudaMalloc(&di, 8 * sizeof(int)));
    CK(cudaMalloc(&dd, 4 * sizeof(double)));
    read_symbols<<<1, 8>>>(2.0f, df, di, dd);
    CK_LAUNCH();
    float gf[8];
    int gi[8];
    double gd[4];
    CK(cudaMemcpy(gf, df, sizeof gf, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gi, di, sizeof gi, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gd, dd, sizeof gd, cudaMemcpyDeviceToHost));
    const int primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
    int wi[8];
    float wf[8];
    for (int t = 0; t < 8; ++t) wi[t] = primes[t] * 42, wf[t] = coeffs[t % 4] * 2.0f;
    const double wd[4] = {1.0, 3.0, -4.5, 2e10};
    kt::check_array("__constant__ and __device__ initialisers read by the kernel", gi, wi, 8);
    kt::check_array("cudaMemcpyToSymbol into __constant__", gf, wf, 8);
    kt::check_array("__device__ double array initialiser", gd, wd, 4);
    int counter = 0;
    CK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter));
    kt::check_eq("cudaMemcpyFromSymbol of a __device__ variable the kernel wrote", counter, 43);
    int scratch[16];
    CK(cudaMemcpyFromSymbol(scratch, d_scratch, sizeof scratch));
    int wscratch[16] = {19, 17, 13, 11, 7, 5, 3, 2, 0, 0, 0, 0, 0, 0, 100, 200};
    kt::check_array("cudaMemcpyToSymbol/FromSymbol with an offset", scratch, wscratch, 16);
    int* addr = nullptr;
    CK(cudaGetSymbolAddress(reinterpret_cast<void**>(&addr), d_scratch));
    write_through<<<1, 16>>>(addr, 16);
    CK_LAUNCH();
    int through[4];
    CK(cudaMemcpy(through, addr + 12, sizeof through, cudaMemcpyDeviceToHost));
    const int wthrough[4] = {12, 13, 1014, 2015};
    kt::check_array("cudaGetSymbolAddress: kernel writes through it, cudaMemcpy reads", through, wthrough, 4);
    size_t size = 0;
    CK(cudaGetSymbolSize(&size, d_scratch));
    kt::check_eq("cudaGetSymbolSize", size, sizeof(int) * 16);
    CK(cudaFree(df));
    CK(cudaFree(di));
    CK(cudaFree(dd));
  }
  return kt::finish("functions");
}
