// SPDX-License-Identifier: Apache-2.0
// The kernel executor's numbers (issue 24), side by side in one process:
//   1. the first launch of a kernel, compile and the compiler's start included (goal <= 100 ms)
//   2. an empty kernel's launch + synchronize, median of many (goal <= 5 us)
//   3. SAXPY over 2^24 floats through the fake (memory checks on) against the same loop in
//      C++ compiled -O2 on one thread (goal <= 3x)
//   4. a shared-memory + __shfl_down_sync reduction of 2^24 floats against a plain C++ float
//      sum loop, -O2, one thread (goal <= 3x)
//   5. a tiled SGEMM 512x512x512 (16x16 shared tiles, __syncthreads) against the naive C++
//      loop in i-k-j order, -O2, one thread (goal <= 3x)
//   6. an integer hash (murmur3's finalizer, many rounds per element): elements per second
//      through the fake against the same kernel in OpenCL C on pocl's CPU device, both on all
//      cores, compilation excluded from both (goal >= 0.5x)
// Each row: the measured value, the goal, met or not met. The empty kernel and SAXPY are the
// PTX text below; 4-6 are nvcc's PTX of bench_kernels.cu (bench_kernels_sm80.ptx, embedded at
// build time). Everything goes through the driver API, so no toolkit is needed.
#include "bench_common.h"
#include "bench_kernels_ptx.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef FAKEGPU_BENCH_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#endif

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

const char* verdict(bool met) { return met ? "met" : "not met"; }

// A ratio row: the fake's and the baseline's medians, the median of the rounds' ratios.
void ratio_row(const char* what, const std::vector<double>& fake, const std::vector<double>& base,
               const std::vector<double>& ratio, const char* wrong) {
  const double r = bench::median(ratio);
  std::printf("%-52s %10.2f ms vs %.2f ms: %.2fx   (goal <= 3x) %s%s\n", what, bench::median(fake), bench::median(base),
              r, verdict(r <= 3.0), wrong);
}

void launch(CUfunc_st* f, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned shmem, void** args,
            const char* what) {
  ok(cuLaunchKernel(f, gx, gy, 1, bx, by, 1, shmem, nullptr, args, nullptr), what);
}

// ---- the baselines: plain loops, one thread, compiled -O2 (tests/workloads/CMakeLists.txt) --------

[[gnu::noinline]] void saxpy_loop(unsigned n, float a, const float* x, float* y) {
  for (unsigned i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

// In order, one float accumulator: g++ keeps the order of float additions without -ffast-math,
// so this is neither vectorized nor reassociated.
[[gnu::noinline]] float sum_loop(unsigned n, const float* x) {
  float s = 0.0f;
  for (unsigned i = 0; i < n; ++i) s += x[i];
  return s;
}

// The naive triple loop in i-k-j order (unit stride in the inner loop).
[[gnu::noinline]] void sgemm_loop(unsigned n, const float* a, const float* b, float* c) {
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned j = 0; j < n; ++j) c[i * n + j] = 0.0f;
    for (unsigned k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (unsigned j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
  }
}

// murmur3's 32-bit finalizer, as bench_kernels.cu's and the OpenCL C kernel's.
uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

[[gnu::noinline]] void hash_loop(unsigned n, unsigned rounds, const uint32_t* in, uint32_t* out) {
  for (unsigned i = 0; i < n; ++i) {
    uint32_t h = in[i];
    for (unsigned r = 0; r < rounds; ++r) h = mix32(h + r);
    out[i] = h;
  }
}

// ---- pocl: the hash kernel in OpenCL C on its CPU device -----------------------------------------

const char* const kHashCl = R"(
uint mix32(uint h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
__kernel void hash_rounds(__global const uint* restrict in, __global uint* restrict out, uint n, uint rounds) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  uint h = in[i];
  for (uint r = 0; r < rounds; ++r) h = mix32(h + r);
  out[i] = h;
}
)";

#ifdef FAKEGPU_BENCH_OPENCL
#define FG_OPENCL_FUNCTIONS(X) \
  X(clGetPlatformIDs)          \
  X(clGetPlatformInfo)         \
  X(clGetDeviceIDs)            \
  X(clCreateContext)           \
  X(clCreateCommandQueue)      \
  X(clCreateProgramWithSource) \
  X(clBuildProgram)            \
  X(clGetProgramBuildInfo)     \
  X(clCreateKernel)            \
  X(clCreateBuffer)            \
  X(clSetKernelArg)            \
  X(clEnqueueNDRangeKernel)    \
  X(clFinish)                  \
  X(clEnqueueReadBuffer)       \
  X(clReleaseMemObject)        \
  X(clReleaseKernel)           \
  X(clReleaseProgram)          \
  X(clReleaseCommandQueue)     \
  X(clReleaseContext)

// The hash kernel on pocl's CPU device through the ICD loader, opened at run time so that a
// machine without OpenCL still runs the other rows. `skipped` says why it cannot run.
class Pocl {
 public:
  Pocl(const uint32_t* in, unsigned n, unsigned rounds) : n_(n), rounds_(rounds) {
    void* lib = ::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      skipped = std::string("no OpenCL ICD loader (") + ::dlerror() + "; apt-get install ocl-icd-libopencl1)";
      return;
    }
#define FG_OPENCL_LOAD(f)                                             \
  if (!(f##_ = reinterpret_cast<decltype(&::f)>(::dlsym(lib, #f)))) { \
    skipped = "libOpenCL.so.1 lacks " #f;                             \
    return;                                                           \
  }
    FG_OPENCL_FUNCTIONS(FG_OPENCL_LOAD)
#undef FG_OPENCL_LOAD
    if (!find_device()) return;
    cl_int e = CL_SUCCESS;
    context_ = clCreateContext_(nullptr, 1, &device_, nullptr, nullptr, &e);
    if (!check(e, "clCreateContext")) return;
    queue_ = clCreateCommandQueue_(context_, device_, 0, &e);
    if (!check(e, "clCreateCommandQueue")) return;
    const char* source = kHashCl;
    program_ = clCreateProgramWithSource_(context_, 1, &source, nullptr, &e);
    if (!check(e, "clCreateProgramWithSource")) return;
    if (e = clBuildProgram_(program_, 1, &device_, "", nullptr, nullptr); e != CL_SUCCESS) {
      char log[512] = {};
      clGetProgramBuildInfo_(program_, device_, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, nullptr);
      skipped = "pocl could not build the OpenCL C kernel (" + std::to_string(e) + "): " + log;
      return;
    }
    kernel_ = clCreateKernel_(program_, "hash_rounds", &e);
    if (!check(e, "clCreateKernel")) return;
    in_ = clCreateBuffer_(context_, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4ull, const_cast<uint32_t*>(in), &e);
    if (!check(e, "clCreateBuffer")) return;
    out_ = clCreateBuffer_(context_, CL_MEM_WRITE_ONLY, n * 4ull, nullptr, &e);
    if (!check(e, "clCreateBuffer")) return;
    if (!check(clSetKernelArg_(kernel_, 0, sizeof in_, &in_), "clSetKernelArg") ||
        !check(clSetKernelArg_(kernel_, 1, sizeof out_, &out_), "clSetKernelArg") ||
        !check(clSetKernelArg_(kernel_, 2, sizeof n_, &n_), "clSetKernelArg") ||
        !check(clSetKernelArg_(kernel_, 3, sizeof rounds_, &rounds_), "clSetKernelArg"))
      return;
    if (!run()) return;  // pocl compiles the kernel for this work-group size on its first run
    ready_ = true;
  }
  Pocl(const Pocl&) = delete;
  Pocl& operator=(const Pocl&) = delete;
  ~Pocl() {
    if (out_) clReleaseMemObject_(out_);
    if (in_) clReleaseMemObject_(in_);
    if (kernel_) clReleaseKernel_(kernel_);
    if (program_) clReleaseProgram_(program_);
    if (queue_) clReleaseCommandQueue_(queue_);
    if (context_) clReleaseContext_(context_);
  }

  bool ready() const { return ready_; }
  // One launch over all elements, groups of 256 work-items as the fake's blocks, to completion.
  bool run() {
    const size_t global = n_, local = 256;
    return check(clEnqueueNDRangeKernel_(queue_, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr),
                 "clEnqueueNDRangeKernel") &&
           check(clFinish_(queue_), "clFinish");
  }
  bool read(uint32_t* out) {
    return check(clEnqueueReadBuffer_(queue_, out_, CL_TRUE, 0, n_ * 4ull, out, 0, nullptr, nullptr),
                 "clEnqueueReadBuffer");
  }

  std::string skipped;

 private:
  bool check(cl_int e, const char* what) {
    if (e != CL_SUCCESS && skipped.empty()) skipped = std::string(what) + " failed: " + std::to_string(e);
    return e == CL_SUCCESS;
  }
  // pocl's platform (the ICD loader may list others) and its CPU device.
  bool find_device() {
    cl_uint count = 0;
    cl_platform_id platforms[16];
    if (clGetPlatformIDs_(16, platforms, &count) != CL_SUCCESS) count = 0;
    for (cl_uint i = 0; i < std::min<cl_uint>(count, 16); ++i) {
      char name[256] = {};
      clGetPlatformInfo_(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
      if (std::strstr(name, "Portable Computing Language") &&
          clGetDeviceIDs_(platforms[i], CL_DEVICE_TYPE_CPU, 1, &device_, nullptr) == CL_SUCCESS)
        return true;
    }
    skipped = "no pocl CPU device among the OpenCL platforms (apt-get install pocl-opencl-icd)";
    return false;
  }

#define FG_OPENCL_MEMBER(f) decltype(&::f) f##_ = nullptr;
  FG_OPENCL_FUNCTIONS(FG_OPENCL_MEMBER)
#undef FG_OPENCL_MEMBER
  cl_uint n_, rounds_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_mem in_ = nullptr, out_ = nullptr;
  bool ready_ = false;
};
#endif

// ---- the rows ----------------------------------------------------------------------------------------

// Returns false when the results differ.
bool saxpy_row(CUfunc_st* saxpy) {
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
  launch(saxpy, n / 256, 1, 256, 1, 0, args, "saxpy warm-up");  // compiles
  ok(cuCtxSynchronize(), "synchronize");
  std::vector<double> fake, loop, ratio;
  for (int r = 0; r < 7; ++r) {  // alternate, so that drift hits both alike
    auto t = Clock::now();
    launch(saxpy, n / 256, 1, 256, 1, 0, args, "saxpy");
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
  ratio_row("SAXPY 2^24 floats, fake vs C++ -O2 loop, medians", fake, loop, ratio, differ ? "  RESULTS DIFFER" : "");
  return differ == 0;
}

// Returns false when the fake's sum is outside its bound.
bool reduce_row(CUfunc_st* reduce) {
  // Three launches: 2^24 elements -> 2^15 partial sums -> 64 -> 1 (blocks of 256 threads, 512
  // elements each; the last, one block of 32 threads).
  const unsigned n = 1u << 24, n1 = n / 512, n2 = n1 / 512;
  std::vector<float> hx(n);
  // Multiples of 2^-24 in [0, 1): the exact sum (at most 2^24, 48 significant bits) is a double.
  double exact = 0.0;
  for (unsigned i = 0; i < n; ++i) {
    hx[i] = static_cast<float>((i * 2654435761u) >> 8) * 0x1p-24f;
    exact += hx[i];
  }
  CUdeviceptr dx = 0, d1 = 0, d2 = 0, dsum = 0;
  ok(cuMemAlloc_v2(&dx, n * 4ull), "cuMemAlloc in");
  ok(cuMemAlloc_v2(&d1, n1 * 4ull), "cuMemAlloc partials");
  ok(cuMemAlloc_v2(&d2, n2 * 4ull), "cuMemAlloc partials");
  ok(cuMemAlloc_v2(&dsum, 4), "cuMemAlloc sum");
  ok(cuMemcpyHtoD_v2(dx, hx.data(), n * 4ull), "copy in");
  unsigned nn = n, nn1 = n1, nn2 = n2;
  void* a0[] = {&dx, &d1, &nn};
  void* a1[] = {&d1, &d2, &nn1};
  void* a2[] = {&d2, &dsum, &nn2};
  float sum = 0.0f, loop_sum = 0.0f;
  auto reduce_on_fake = [&] {
    launch(reduce, n1, 1, 256, 1, 256 * 4, a0, "reduce_sum");
    launch(reduce, n2, 1, 256, 1, 256 * 4, a1, "reduce_sum");
    launch(reduce, 1, 1, 32, 1, 32 * 4, a2, "reduce_sum");
    ok(cuMemcpyDtoH_v2(&sum, dsum, 4), "copy the sum back");
  };
  launch(reduce, 1, 1, 256, 1, 256 * 4, a0, "reduce_sum warm-up");  // compiles (one block is enough)
  ok(cuCtxSynchronize(), "synchronize");
  std::vector<double> fake, loop, ratio;
  for (int r = 0; r < 5; ++r) {
    auto t = Clock::now();
    reduce_on_fake();
    fake.push_back(ms_since(t));
    t = Clock::now();
    loop_sum = sum_loop(n, hx.data());
    asm volatile("" ::"x"(loop_sum));
    loop.push_back(ms_since(t));
    ratio.push_back(fake.back() / loop.back());
  }
  // Each element passes through 24 float additions on the way to the sum (9 + 9 + 6 levels), each
  // rounded to nearest: |sum - exact| <= ((1 + 2^-24)^24 - 1) * sum of |x| (all x >= 0).
  const double bound = (std::pow(1.0 + 0x1p-24, 24) - 1.0) * exact;
  const bool within = std::fabs(sum - exact) <= bound;
  char wrong[160] = "";
  if (!within)
    std::snprintf(wrong, sizeof wrong, "  SUM %.9g, EXACT %.9g, BOUND %.3g", static_cast<double>(sum), exact, bound);
  ratio_row("reduction 2^24 floats (shared+shfl) vs C++ loop", fake, loop, ratio, wrong);
  return within;
}

// Returns false when the products differ.
bool sgemm_row(CUfunc_st* sgemm) {
  const unsigned n = 512;
  // Small integers: every product and partial sum is an exact float, so any order of additions,
  // fused or not, gives the same bits.
  std::vector<float> a(n * n), b(n * n), c(n * n), lc(n * n);
  for (unsigned i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(static_cast<int>(i * 7 % 17) - 8);
    b[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6);
  }
  CUdeviceptr da = 0, db = 0, dc = 0;
  ok(cuMemAlloc_v2(&da, n * n * 4ull), "cuMemAlloc a");
  ok(cuMemAlloc_v2(&db, n * n * 4ull), "cuMemAlloc b");
  ok(cuMemAlloc_v2(&dc, n * n * 4ull), "cuMemAlloc c");
  ok(cuMemcpyHtoD_v2(da, a.data(), n * n * 4ull), "copy a");
  ok(cuMemcpyHtoD_v2(db, b.data(), n * n * 4ull), "copy b");
  unsigned nn = n;
  void* args[] = {&da, &db, &dc, &nn};
  launch(sgemm, 1, 1, 16, 16, 0, args, "sgemm warm-up");  // compiles (one block is enough)
  ok(cuCtxSynchronize(), "synchronize");
  std::vector<double> fake, loop, ratio;
  for (int r = 0; r < 5; ++r) {
    auto t = Clock::now();
    launch(sgemm, n / 16, n / 16, 16, 16, 0, args, "sgemm");
    ok(cuCtxSynchronize(), "synchronize");
    fake.push_back(ms_since(t));
    t = Clock::now();
    sgemm_loop(n, a.data(), b.data(), lc.data());
    loop.push_back(ms_since(t));
    ratio.push_back(fake.back() / loop.back());
  }
  ok(cuMemcpyDtoH_v2(c.data(), dc, n * n * 4ull), "copy c back");
  size_t differ = 0;
  for (unsigned i = 0; i < n * n; ++i) differ += c[i] != lc[i];
  ratio_row("SGEMM 512^3, 16x16 tiles, vs C++ i-k-j loop", fake, loop, ratio, differ ? "  RESULTS DIFFER" : "");
  return differ == 0;
}

// Returns false when the hashes differ.
bool hash_row(CUfunc_st* hash) {
  const char* what = "hash 2^20 x 64 rounds, elements/s, fake vs pocl";
  const unsigned n = 1u << 20, rounds = 64;
  std::vector<uint32_t> in(n), out(n), expect(n);
  for (unsigned i = 0; i < n; ++i) in[i] = i * 2654435761u;
  hash_loop(n, rounds, in.data(), expect.data());
#ifdef FAKEGPU_BENCH_OPENCL
  Pocl pocl(in.data(), n, rounds);
  if (!pocl.ready()) {
    std::printf("%-52s skipped: %s\n", what, pocl.skipped.c_str());
    return true;
  }
  CUdeviceptr din = 0, dout = 0;
  ok(cuMemAlloc_v2(&din, n * 4ull), "cuMemAlloc in");
  ok(cuMemAlloc_v2(&dout, n * 4ull), "cuMemAlloc out");
  ok(cuMemcpyHtoD_v2(din, in.data(), n * 4ull), "copy in");
  unsigned nn = n, rr = rounds;
  void* args[] = {&din, &dout, &nn, &rr};
  launch(hash, n / 256, 1, 256, 1, 0, args, "hash warm-up");  // compiles
  ok(cuCtxSynchronize(), "synchronize");
  std::vector<double> fake, base, ratio;  // elements per second
  for (int r = 0; r < 7; ++r) {
    auto t = Clock::now();
    launch(hash, n / 256, 1, 256, 1, 0, args, "hash");
    ok(cuCtxSynchronize(), "synchronize");
    fake.push_back(n / ms_since(t) * 1e3);
    t = Clock::now();
    if (!pocl.run()) {
      std::printf("%-52s skipped: %s\n", what, pocl.skipped.c_str());
      return true;
    }
    base.push_back(n / ms_since(t) * 1e3);
    ratio.push_back(fake.back() / base.back());
  }
  ok(cuMemcpyDtoH_v2(out.data(), dout, n * 4ull), "copy out back");
  std::vector<uint32_t> pocl_out(n);
  const bool read = pocl.read(pocl_out.data());
  size_t differ = 0;
  for (unsigned i = 0; i < n; ++i) differ += (out[i] != expect[i]) + (read && pocl_out[i] != expect[i]);
  const double r = bench::median(ratio);
  std::printf("%-52s %10.2f M/s vs %.2f M/s: %.2fx   (goal >= 0.5x) %s%s\n", what, bench::median(fake) / 1e6,
              bench::median(base) / 1e6, r, verdict(r >= 0.5), differ ? "  RESULTS DIFFER" : "");
  return differ == 0;
#else
  (void)hash;
  std::printf("%-52s skipped: built without the OpenCL headers (apt-get install opencl-headers)\n", what);
  return true;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // Rows to run (all by default): first, empty, saxpy, reduction, sgemm, hash.
  const char* const rows[] = {"first", "empty", "saxpy", "reduction", "sgemm", "hash"};
  for (int i = 1; i < argc; ++i)
    if (std::find_if(std::begin(rows), std::end(rows), [&](const char* r) { return std::strcmp(r, argv[i]) == 0; }) ==
        std::end(rows)) {
      std::fprintf(stderr,
                   "usage: bench_kernels [first|empty|saxpy|reduction|sgemm|hash]...\n"
                   "unknown row '%s'\n",
                   argv[i]);
      return 2;
    }
  auto wanted = [&](const char* row) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], row) == 0) return true;
    return false;
  };

  ok(cuInit(0), "cuInit");
  CUdevice dev = 0;
  ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUctx_st* ctx = nullptr;
  ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmod_st *mod = nullptr, *nvcc_mod = nullptr;
  ok(cuModuleLoadData(&mod, kPtx), "cuModuleLoadData");
  ok(cuModuleLoadData(&nvcc_mod, kBenchKernelsPtx), "cuModuleLoadData(bench_kernels_sm80.ptx)");
  CUfunc_st *empty = nullptr, *saxpy = nullptr, *reduce = nullptr, *sgemm = nullptr, *hash = nullptr;
  ok(cuModuleGetFunction(&empty, mod, "empty"), "cuModuleGetFunction(empty)");
  ok(cuModuleGetFunction(&saxpy, mod, "saxpy"), "cuModuleGetFunction(saxpy)");
  ok(cuModuleGetFunction(&reduce, nvcc_mod, "reduce_sum"), "cuModuleGetFunction(reduce_sum)");
  ok(cuModuleGetFunction(&sgemm, nvcc_mod, "sgemm_tiled"), "cuModuleGetFunction(sgemm_tiled)");
  ok(cuModuleGetFunction(&hash, nvcc_mod, "hash_rounds"), "cuModuleGetFunction(hash_rounds)");

  auto t = Clock::now();
  launch(empty, 1, 1, 32, 1, 0, nullptr, "first launch");
  ok(cuCtxSynchronize(), "first synchronize");
  const double first = ms_since(t);
  if (wanted("first"))
    std::printf("%-52s %10.1f ms   (goal <= 100 ms) %s\n", "first launch (compiler start + compile)", first,
                verdict(first <= 100.0));

  std::vector<double> per;
  for (int r = 0; r < (wanted("empty") ? 9 : 0); ++r) {
    constexpr int kLaunches = 20000;
    t = Clock::now();
    for (int i = 0; i < kLaunches; ++i) {
      launch(empty, 1, 1, 32, 1, 0, nullptr, "launch");
      ok(cuCtxSynchronize(), "synchronize");
    }
    per.push_back(ms_since(t) * 1000.0 / kLaunches);
  }
  if (wanted("empty")) {
    const double empty_us = bench::median(per);
    std::printf("%-52s %10.2f us   (goal <= 5 us) %s\n", "empty kernel launch + synchronize, median", empty_us,
                verdict(empty_us <= 5.0));
  }

  bool right = true;
  if (wanted("saxpy")) right &= saxpy_row(saxpy);
  if (wanted("reduction")) right &= reduce_row(reduce);
  if (wanted("sgemm")) right &= sgemm_row(sgemm);
  if (wanted("hash")) right &= hash_row(hash);
  return right ? 0 : 1;
}
