// SPDX-License-Identifier: Apache-2.0
// NVRTC + driver API: a templated kernel compiled at run time to PTX (compute_75, which any
// device of compute capability 7.5 or later loads), loaded with cuModuleLoadData, instantiated
// through name expressions (nvrtcGetLoweredName), launched with cuLaunchKernel both with a
// parameter array and with a packed parameter buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), with
// dynamic shared memory; a __device__ variable reached through cuModuleGetGlobal. Then
// separate compilation: NVRTC -rdc=true PTX whose kernel calls a __device__ function and reads
// a __device__ variable of another unit, linked by cuLinkCreate/AddData/Complete with that
// unit as NVRTC PTX, as nvcc's host object (nvcc -dc) and as nvcc's static library (nvcc -lib).
#include <cuda.h>
#include <nvrtc.h>

#include "check.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CU(call)                                                                                            \
  do {                                                                                                      \
    CUresult cu_err_ = (call);                                                                              \
    if (cu_err_ != CUDA_SUCCESS) {                                                                          \
      const char* cu_name_ = nullptr;                                                                       \
      cuGetErrorName(cu_err_, &cu_name_);                                                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cu_name_ ? cu_name_ : "?"); \
      std::printf("ABORT %s: %s\n", #call, cu_name_ ? cu_name_ : "?");                                      \
      std::exit(2);                                                                                         \
    }                                                                                                       \
  } while (0)
#define NVRTC(call)                                                                                            \
  do {                                                                                                         \
    nvrtcResult nv_err_ = (call);                                                                              \
    if (nv_err_ != NVRTC_SUCCESS) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, nvrtcGetErrorString(nv_err_)); \
      std::exit(2);                                                                                            \
    }                                                                                                          \
  } while (0)

static const char* kSource = R"(
__device__ int g_offset = 1000;

template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Reverses each block's slice through dynamic shared memory, adding g_offset.
extern "C" __global__ void reverse_offset(const int* in, int* out) {
  extern __shared__ int s[];
  int t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  s[t] = in[base + t];
  __syncthreads();
  out[base + t] = s[n - 1 - t] + g_offset;
}
)";

// -rdc=true: the kernel's unit uses names the other unit defines.
static const char* kLinkMain = R"(
extern __device__ int link_bias;
__device__ int link_scale(int x);
extern "C" __global__ void linked(int* out) {
  int t = threadIdx.x;
  out[t] = link_scale(t) + link_bias;
}
)";
static const char* kLinkLib = R"(
__device__ int link_bias = 40;
__device__ int link_scale(int x) { return 7 * x + 2; }
)";

static std::string rdc_ptx(const char* source, const char* name) {
  nvrtcProgram prog;
  NVRTC(nvrtcCreateProgram(&prog, source, name, 0, nullptr, nullptr));
  const char* opts[] = {"--gpu-architecture=compute_75", "-rdc=true"};
  if (nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::fprintf(stderr, "NVRTC compile of %s failed:\n%s\n", name, log.c_str());
    std::exit(2);
  }
  size_t size = 0;
  NVRTC(nvrtcGetPTXSize(prog, &size));
  std::string ptx(size, '\0');
  NVRTC(nvrtcGetPTX(prog, ptx.data()));
  NVRTC(nvrtcDestroyProgram(&prog));
  return ptx;
}

// Links `main_ptx` with the other unit (`type`: PTX text in `data`, or a file at `path`), loads
// the image, runs `linked` on 64 threads and checks out[t] = 7t + 2 + 40.
static void check_link(const char* what, const std::string& main_ptx, CUjitInputType type, const std::string& data,
                       const char* path) {
  char error_log[1024] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error_log, reinterpret_cast<void*>(sizeof error_log)};
  CUlinkState link;
  CU(cuLinkCreate(2, opts, vals, &link));
  CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(main_ptx.c_str()), main_ptx.size() + 1, "main.ptx", 0,
                   nullptr, nullptr));
  CUresult added = path ? cuLinkAddFile(link, type, path, 0, nullptr, nullptr)
                        : cuLinkAddData(link, type, const_cast<char*>(data.c_str()), data.size() + 1, "lib.ptx", 0,
                                        nullptr, nullptr);
  void* image = nullptr;
  size_t size = 0;
  CUresult completed = added == CUDA_SUCCESS ? cuLinkComplete(link, &image, &size) : added;
  if (completed != CUDA_SUCCESS) std::fprintf(stderr, "%s: link error log: %s\n", what, error_log);
  CU(completed);
  CUmodule mod;
  CU(cuModuleLoadData(&mod, image));
  CU(cuLinkDestroy(link));
  CUfunction f;
  CU(cuModuleGetFunction(&f, mod, "linked"));
  const int n = 64;
  CUdeviceptr dout;
  CU(cuMemAlloc(&dout, n * sizeof(int)));
  void* params[] = {&dout};
  CU(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, nullptr, params, nullptr));
  CU(cuCtxSynchronize());
  std::vector<int> got(n), want(n);
  CU(cuMemcpyDtoH(got.data(), dout, n * sizeof(int)));
  for (int t = 0; t < n; ++t) want[t] = 7 * t + 2 + 40;
  kt::check_array(what, got.data(), want.data(), n);
  CU(cuMemFree(dout));
  CU(cuModuleUnload(mod));
}

int main() {
  nvrtcProgram prog;
  NVRTC(nvrtcCreateProgram(&prog, kSource, "kernels.cu", 0, nullptr, nullptr));
  NVRTC(nvrtcAddNameExpression(prog, "axpy<int>"));
  NVRTC(nvrtcAddNameExpression(prog, "axpy<double>"));
  const char* opts[] = {"--gpu-architecture=compute_75"};
  nvrtcResult compiled = nvrtcCompileProgram(prog, 1, opts);
  if (compiled != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::fprintf(stderr, "NVRTC compile failed:\n%s\n", log.c_str());
    return 2;
  }
  size_t ptx_size = 0;
  NVRTC(nvrtcGetPTXSize(prog, &ptx_size));
  std::string ptx(ptx_size, '\0');
  NVRTC(nvrtcGetPTX(prog, ptx.data()));
  const char *int_name = nullptr, *double_name = nullptr;
  NVRTC(nvrtcGetLoweredName(prog, "axpy<int>", &int_name));
  NVRTC(nvrtcGetLoweredName(prog, "axpy<double>", &double_name));
  std::string int_kernel = int_name, double_kernel = double_name;
  NVRTC(nvrtcDestroyProgram(&prog));
  kt::check("NVRTC produced PTX", ptx.find(".entry") != std::string::npos);

  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CU(cuModuleLoadData(&mod, ptx.c_str()));
  CUfunction f_int, f_double, f_rev;
  CU(cuModuleGetFunction(&f_int, mod, int_kernel.c_str()));
  CU(cuModuleGetFunction(&f_double, mod, double_kernel.c_str()));
  CU(cuModuleGetFunction(&f_rev, mod, "reverse_offset"));

  const int n = 1000;
  // axpy<int> with a parameter array.
  {
    std::vector<int> x(n), y(n), got(n), want(n);
    for (int i = 0; i < n; ++i) x[i] = i - 300, y[i] = 7 * i, want[i] = -3 * (i - 300) + 7 * i;
    CUdeviceptr dx, dy;
    CU(cuMemAlloc(&dx, n * sizeof(int)));
    CU(cuMemAlloc(&dy, n * sizeof(int)));
    CU(cuMemcpyHtoD(dx, x.data(), n * sizeof(int)));
    CU(cuMemcpyHtoD(dy, y.data(), n * sizeof(int)));
    int a = -3, count = n;
    void* params[] = {&a, &dx, &dy, &count};
    CU(cuLaunchKernel(f_int, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(got.data(), dy, n * sizeof(int)));
    kt::check_array("axpy<int> through cuLaunchKernel (parameter array)", got.data(), want.data(), n);
    CU(cuMemFree(dx));
    CU(cuMemFree(dy));
  }
  // axpy<double> with a packed parameter buffer, laid out as the kernel's parameters are.
  {
    std::vector<double> x(n), y(n), got(n), want(n);
    for (int i = 0; i < n; ++i) x[i] = i * 0.5, y[i] = -i * 0.25, want[i] = 4.0 * (i * 0.5) + -i * 0.25;  // exact
    CUdeviceptr dx, dy;
    CU(cuMemAlloc(&dx, n * sizeof(double)));
    CU(cuMemAlloc(&dy, n * sizeof(double)));
    CU(cuMemcpyHtoD(dx, x.data(), n * sizeof(double)));
    CU(cuMemcpyHtoD(dy, y.data(), n * sizeof(double)));
    struct Packed {
      double a;
      CUdeviceptr x, y;
      int n;
    } packed = {4.0, dx, dy, n};
    size_t size = offsetof(Packed, n) + sizeof(int);  // the parameters' size, without tail padding
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CU(cuLaunchKernel(f_double, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(got.data(), dy, n * sizeof(double)));
    kt::check_array("axpy<double> through cuLaunchKernel (packed parameter buffer)", got.data(), want.data(), n);
    CU(cuMemFree(dx));
    CU(cuMemFree(dy));
  }
  // A __device__ variable through cuModuleGetGlobal, dynamic shared memory, a stream.
  {
    CUdeviceptr goff;
    size_t goff_size = 0;
    CU(cuModuleGetGlobal(&goff, &goff_size, mod, "g_offset"));
    kt::check_eq("cuModuleGetGlobal size", goff_size, sizeof(int));
    int initial = 0;
    CU(cuMemcpyDtoH(&initial, goff, sizeof initial));
    kt::check_eq("__device__ initialiser read through cuModuleGetGlobal", initial, 1000);
    int offset = 5000;
    CU(cuMemcpyHtoD(goff, &offset, sizeof offset));
    const int blocks = 10, threads = 100, total = blocks * threads;
    std::vector<int> in(total), got(total), want(total);
    for (int i = 0; i < total; ++i) in[i] = i * 3;
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t) want[b * threads + t] = (b * threads + threads - 1 - t) * 3 + 5000;
    CUdeviceptr din, dout;
    CU(cuMemAlloc(&din, total * sizeof(int)));
    CU(cuMemAlloc(&dout, total * sizeof(int)));
    CU(cuMemcpyHtoD(din, in.data(), total * sizeof(int)));
    CUstream stream;
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    void* params[] = {&din, &dout};
    CU(cuLaunchKernel(f_rev, blocks, 1, 1, threads, 1, 1, threads * sizeof(int), stream, params, nullptr));
    CU(cuStreamSynchronize(stream));
    CU(cuMemcpyDtoH(got.data(), dout, total * sizeof(int)));
    kt::check_array("dynamic shared memory + global written through cuModuleGetGlobal", got.data(), want.data(), total);
    CU(cuStreamDestroy(stream));
    CU(cuMemFree(din));
    CU(cuMemFree(dout));
  }
  CU(cuModuleUnload(mod));

  // Separate compilation, linked by the driver.
  const std::string main_ptx = rdc_ptx(kLinkMain, "link_main.cu");
  const std::string lib_ptx = rdc_ptx(kLinkLib, "link_lib.cu");
  kt::check(
      "NVRTC -rdc=true PTX declares the other unit's names",
      main_ptx.find(".extern .func") != std::string::npos && main_ptx.find(".extern .global") != std::string::npos);
  check_link("cuLinkComplete: NVRTC -rdc PTX + PTX", main_ptx, CU_JIT_INPUT_PTX, lib_ptx, nullptr);
  check_link("cuLinkComplete: NVRTC -rdc PTX + nvcc -dc object", main_ptx, CU_JIT_INPUT_OBJECT, "", KT_LINK_OBJECT);
  check_link("cuLinkComplete: NVRTC -rdc PTX + nvcc -lib library", main_ptx, CU_JIT_INPUT_LIBRARY, "", KT_LINK_LIBRARY);
  {
    // Without the other unit the link refuses the names it cannot resolve.
    char error_log[256] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {error_log, reinterpret_cast<void*>(sizeof error_log)};
    CUlinkState link;
    CU(cuLinkCreate(2, opts, vals, &link));
    CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(main_ptx.c_str()), main_ptx.size() + 1, "main.ptx", 0,
                     nullptr, nullptr));
    void* image = nullptr;
    size_t size = 0;
    const CUresult r = cuLinkComplete(link, &image, &size);
    kt::checkf("cuLinkComplete refuses an undefined reference", r != CUDA_SUCCESS && std::strstr(error_log, "link_"),
               "result %d, log '%s'", static_cast<int>(r), error_log);
    CU(cuLinkDestroy(link));
  }
  CU(cuDevicePrimaryCtxRelease(dev));
  return kt::finish("nvrtc_driver");
}
