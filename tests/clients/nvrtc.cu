// SPDX-License-Identifier: Apache-2.0
// NVRTC and nvJitLink on the fake GPU: a kernel compiled at run time to a cubin and to PTX,
// the PTX linked by nvJitLink, each image loaded with cuModuleLoadData and launched through
// the driver API. Prints key=value facts; run_client_tests.py checks them.
#include <cuda.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <cstdio>
#include <string>
#include <vector>

#define FACT(key, call) std::printf("%s=%d\n", key, static_cast<int>(call))

namespace {
const char* kSource = R"(
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
})";

std::string compile(const char* arch, bool cubin, const char* key) {
  nvrtcProgram prog = nullptr;
  nvrtcCreateProgram(&prog, kSource, "axpy.cu", 0, nullptr, nullptr);
  const std::string opt = std::string("--gpu-architecture=") + arch;
  const char* opts[] = {opt.c_str()};
  const nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
  std::printf("%s=%d\n", key, static_cast<int>(r));
  size_t n = 0;
  std::string out;
  if (cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n)) return out;
  out.resize(n);
  if (cubin ? nvrtcGetCUBIN(prog, out.data()) : nvrtcGetPTX(prog, out.data())) out.clear();
  nvrtcDestroyProgram(&prog);
  return out;
}

// Loads an image, launches axpy over n elements, unloads; every status is a fact.
void load_and_launch(const std::string& image, const std::string& tag) {
  CUmodule mod = nullptr;
  FACT((tag + "_load").c_str(), cuModuleLoadData(&mod, image.data()));
  CUfunction fn = nullptr;
  FACT((tag + "_get_function").c_str(), cuModuleGetFunction(&fn, mod, "axpy"));
  int regs = -1;
  FACT((tag + "_num_regs_query").c_str(), cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
  int n = 1024;
  float a = 2.0f;
  CUdeviceptr x = 0, y = 0;
  cuMemAlloc(&x, n * sizeof(float));
  cuMemAlloc(&y, n * sizeof(float));
  void* args[] = {&a, &x, &y, &n};
  FACT((tag + "_launch").c_str(), cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  FACT((tag + "_sync").c_str(), cuCtxSynchronize());
  cuMemFree(x);
  cuMemFree(y);
  FACT((tag + "_unload").c_str(), cuModuleUnload(mod));
}
}  // namespace

int main() {
  const std::string cubin = compile("sm_80", true, "compile_cubin");
  const std::string ptx = compile("compute_80", false, "compile_ptx");
  std::printf("ptx_has_entry=%d\n", ptx.find(".entry axpy") != std::string::npos);
  nvrtcProgram bad = nullptr;
  nvrtcCreateProgram(&bad, "__global__ void k() { undeclared(); }", "bad.cu", 0, nullptr, nullptr);
  FACT("compile_error", nvrtcCompileProgram(bad, 0, nullptr));
  nvrtcDestroyProgram(&bad);

  nvJitLinkHandle link = nullptr;
  const char* link_opts[] = {"-arch=sm_80"};
  FACT("link_create", nvJitLinkCreate(&link, 1, link_opts));
  FACT("link_add_ptx", nvJitLinkAddData(link, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "axpy.ptx"));
  FACT("link_complete", nvJitLinkComplete(link));
  size_t linked_size = 0;
  nvJitLinkGetLinkedCubinSize(link, &linked_size);
  std::string linked(linked_size, '\0');
  FACT("link_get_cubin", nvJitLinkGetLinkedCubin(link, linked.data()));
  nvJitLinkDestroy(&link);

  FACT("init", cuInit(0));
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  FACT("ctx_create", cuDevicePrimaryCtxRetain(&ctx, dev));
  cuCtxSetCurrent(ctx);
  load_and_launch(cubin, "cubin");
  load_and_launch(ptx, "ptx");
  load_and_launch(linked, "linked");
  CUmodule none = nullptr;
  FACT("load_garbage", cuModuleLoadData(&none, "not an image"));
  cuDevicePrimaryCtxRelease(dev);
  return 0;
}
