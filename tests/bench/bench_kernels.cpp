// SPDX-License-Identifier: Apache-2.0
// The kernel executor's numbers (issue 24), side by side in one process:
//   1. the first launch of a kernel, compile and the compiler's start included (goal <= 100 ms)
//   2. an empty kernel's launch + synchronize, median of many (goal <= 5 us)
//   3. SAXPY over 2^24 floats through the fake (memory checks on) against the same loop in
//      C++ compiled -O2 on one thread (goal <= 3x)
// The kernels are PTX text loaded through the driver API, so no toolkit is needed.
#include "bench_common.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(CUdevice*, int);
CUresult cuDevicePrimaryCtxRetain(CUctx_st**, CUdevice);
CUresult cuCtxSetCurrent(CUctx_st*);
CUresult cuCtxSynchronize();
CUresult cuModuleLoadData(CUmod_st**, const void*);
CUresult cuModuleGetFunction(CUfunc_st**, CUmod_st*, const char*);
CUresult cuLaunchKernel(CUfunc_st*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream_st*,
                        void**, void**);
CUresult cuMemAlloc_v2(CUdeviceptr*, size_t);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t);
CUresult cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t);
}

namespace {

using bench::Clock;

const char* const kPtx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry empty()
{
  ret;
}
.visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<8>;
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [a];
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd7], %f4;
DONE:
  ret;
}
)";

void ok(CUresult r, const char* what) {
  if (r != 0) {
    std::fprintf(stderr, "bench_kernels: %s failed: %d\n", what, r);
    std::exit(1);
  }
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

[[gnu::noinline]] void saxpy_loop(unsigned n, float a, const float* x, float* y) {
  for (unsigned i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

}  // namespace

int main() {
  ok(cuInit(0), "cuInit");
  CUdevice dev = 0;
  ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUctx_st* ctx = nullptr;
  ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmod_st* mod = nullptr;
  ok(cuModuleLoadData(&mod, kPtx), "cuModuleLoadData");
  CUfunc_st *empty = nullptr, *saxpy = nullptr;
  ok(cuModuleGetFunction(&empty, mod, "empty"), "cuModuleGetFunction(empty)");
  ok(cuModuleGetFunction(&saxpy, mod, "saxpy"), "cuModuleGetFunction(saxpy)");

  auto t = Clock::now();
  ok(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "first launch");
  ok(cuCtxSynchronize(), "first synchronize");
  std::printf("%-52s %10.1f ms   (goal <= 100 ms)\n", "first launch (compiler start + compile)", ms_since(t));

  std::vector<double> per;
  for (int r = 0; r < 9; ++r) {
    constexpr int kLaunches = 20000;
    t = Clock::now();
    for (int i = 0; i < kLaunches; ++i) {
      ok(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "launch");
      ok(cuCtxSynchronize(), "synchronize");
    }
    per.push_back(ms_since(t) * 1000.0 / kLaunches);
  }
  std::printf("%-52s %10.2f us   (goal <= 5 us)\n", "empty kernel launch + synchronize, median", bench::median(per));

  const unsigned n = 1u << 24;
  const float a = 1.5f;
  std::vector<float> hx(n), hy(n), ly(n);
  for (unsigned i = 0; i < n; ++i) hx[i] = static_cast<float>(i % 1000), hy[i] = ly[i] = 1.0f;
  CUdeviceptr dx = 0, dy = 0;
  ok(cuMemAlloc_v2(&dx, n * 4ull), "cuMemAlloc x");
  ok(cuMemAlloc_v2(&dy, n * 4ull), "cuMemAlloc y");
  ok(cuMemcpyHtoD_v2(dx, hx.data(), n * 4ull), "copy x");
  ok(cuMemcpyHtoD_v2(dy, hy.data(), n * 4ull), "copy y");
  unsigned nn = n;
  float aa = a;
  void* args[] = {&nn, &aa, &dx, &dy};
  ok(cuLaunchKernel(saxpy, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "saxpy warm-up");  // compiles
  ok(cuCtxSynchronize(), "synchronize");
  std::vector<double> fake, loop, ratio;
  for (int r = 0; r < 7; ++r) {  // alternate, so that drift hits both alike
    t = Clock::now();
    ok(cuLaunchKernel(saxpy, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "saxpy");
    ok(cuCtxSynchronize(), "synchronize");
    fake.push_back(ms_since(t));
    t = Clock::now();
    saxpy_loop(n, a, hx.data(), ly.data());
    loop.push_back(ms_since(t));
    ratio.push_back(fake.back() / loop.back());
  }
  // Both ran 8 times (the warm-up included): the same values.
  ok(cuMemcpyDtoH_v2(hy.data(), dy, n * 4ull), "copy back");
  saxpy_loop(n, a, hx.data(), ly.data());
  size_t differ = 0;
  for (unsigned i = 0; i < n; ++i) differ += hy[i] != ly[i];
  std::printf("%-52s %10.2f ms vs %.2f ms: %.2fx   (goal <= 3x)%s\n",
              "SAXPY 2^24 floats, fake vs C++ -O2 loop, medians", bench::median(fake), bench::median(loop),
              bench::median(ratio), differ ? "  RESULTS DIFFER" : "");
  return differ ? 1 : 0;
}
