// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: cuGetProcAddress(_v2) — (name, version, flags) -> the exported entry point
// of the right ABI (census §5.2), its per-thread twin with flags 2, and the failures.
#include "backend/driver_test.h"

#include <fstream>
// GCC 12 at -O1 (the sanitizer builds) takes libstdc++'s regex automaton for copying an
// uninitialised std::function: a false -Wmaybe-uninitialized in the header's own code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

using namespace drvtest;

namespace {

struct Lookup {
  CUresult result;
  void* fn;
  CUdriverProcAddressQueryResult status;
};

Lookup lookup(const char* name, int version, uint64_t flags = 0) {
  Lookup l{CUDA_ERROR_UNKNOWN, reinterpret_cast<void*>(1), static_cast<CUdriverProcAddressQueryResult>(-1)};
  l.result = CU(cuGetProcAddress_v2)(name, &l.fn, version, flags, &l.status);
  return l;
}

// The address must be the exported symbol itself (so probes on the export see the call).
void expect(const char* name, int version, uint64_t flags, const char* symbol) {
  INFO(name << " @ " << version << " flags " << flags << " -> " << symbol);
  const Lookup l = lookup(name, version, flags);
  CHECK(l.result == CUDA_SUCCESS);
  CHECK(l.status == CU_GET_PROC_ADDRESS_SUCCESS);
  void* want = dlsym(lib(), symbol);
  REQUIRE(want != nullptr);
  CHECK(l.fn == want);
}

}  // namespace

TEST_CASE("driver: cuGetProcAddress_v2 picks the ABI of the requested version", "[driver]") {
  // Census §5.2 / the PFN_*_v<version> typedefs of cudaTypedefs.h.
  expect("cuCtxCreate", 2000, 0, "cuCtxCreate");
  expect("cuCtxCreate", 3020, 0, "cuCtxCreate_v2");  // what cudart asks
  expect("cuCtxCreate", 11040, 0, "cuCtxCreate_v3");
  expect("cuCtxCreate", 12050, 0, "cuCtxCreate_v4");
  expect("cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
  expect("cuCtxCreate", 12040, 0, "cuCtxCreate_v3");
  expect("cuMemAlloc", 2000, 0, "cuMemAlloc");
  expect("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
  expect("cuMemAlloc", 12000, 0, "cuMemAlloc_v2");
  expect("cuDeviceTotalMem", 3020, 0, "cuDeviceTotalMem_v2");
  expect("cuDeviceGetUuid", 9020, 0, "cuDeviceGetUuid");
  expect("cuDeviceGetUuid", 11040, 0, "cuDeviceGetUuid_v2");
  expect("cuCtxGetDevice", 2000, 0, "cuCtxGetDevice");
  expect("cuCtxGetDevice", 12090, 0, "cuCtxGetDevice");
  expect("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2");
  expect("cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2");
  expect("cuEventElapsedTime", 2000, 0, "cuEventElapsedTime");
  expect("cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2");
  expect("cuStreamGetCaptureInfo", 10010, 0, "cuStreamGetCaptureInfo");
  expect("cuStreamGetCaptureInfo", 11030, 0, "cuStreamGetCaptureInfo_v2");
  expect("cuStreamGetCaptureInfo", 12030, 0, "cuStreamGetCaptureInfo_v3");
  expect("cuGraphInstantiate", 10000, 0, "cuGraphInstantiate");
  expect("cuGraphInstantiate", 11000, 0, "cuGraphInstantiate_v2");
  expect("cuIpcOpenMemHandle", 4010, 0, "cuIpcOpenMemHandle");
  expect("cuIpcOpenMemHandle", 11000, 0, "cuIpcOpenMemHandle_v2");
  expect("cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2");
  expect("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
  expect("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
  expect("cuInit", 2000, 0, "cuInit");
  expect("cuInit", 13000, 0, "cuInit");
  // Legacy-stream flag: the same answers as the default.
  expect("cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuMemcpyHtoD_v2");
}

TEST_CASE("driver: cuGetProcAddress_v2 with the per-thread default stream flag", "[driver]") {
  constexpr uint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  expect("cuMemcpyHtoD", 12000, PT, "cuMemcpyHtoD_v2_ptds");
  expect("cuMemcpyHtoD", 7000, PT, "cuMemcpyHtoD_v2_ptds");
  expect("cuMemcpyHtoD", 3020, PT, "cuMemcpyHtoD_v2");  // no twin before 7.0
  expect("cuMemcpyHtoDAsync", 7000, PT, "cuMemcpyHtoDAsync_v2_ptsz");
  expect("cuStreamQuery", 7000, PT, "cuStreamQuery_ptsz");
  expect("cuStreamQuery", 2000, PT, "cuStreamQuery");
  expect("cuLaunchKernel", 12000, PT, "cuLaunchKernel_ptsz");
  expect("cuMemcpy", 4000, PT, "cuMemcpy");
  expect("cuMemcpy", 7000, PT, "cuMemcpy_ptds");
  expect("cuStreamGetCaptureInfo", 12030, PT, "cuStreamGetCaptureInfo_v3_ptsz");
  expect("cuStreamGetCaptureInfo", 11030, PT, "cuStreamGetCaptureInfo_v2_ptsz");
  expect("cuMemAllocAsync", 11020, PT, "cuMemAllocAsync_ptsz");
  expect("cuInit", 2000, PT, "cuInit");  // no twin: the plain answer stands
  expect("cuCtxCreate", 3020, PT, "cuCtxCreate_v2");
}

TEST_CASE("driver: cuGetProcAddress_v2 failures", "[driver]") {
  Lookup l = lookup("cuCtxCreate", 1000);
  CHECK(l.result == CUDA_ERROR_NOT_FOUND);
  CHECK(l.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(l.fn == nullptr);
  l = lookup("cuMemAllocAsync", 11010);  // introduced in 11.2
  CHECK(l.result == CUDA_ERROR_NOT_FOUND);
  CHECK(l.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  l = lookup("cuNotAnEntryPoint", 13000);
  CHECK(l.result == CUDA_ERROR_NOT_FOUND);
  CHECK(l.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(l.fn == nullptr);
  l = lookup("", 0);  // cudart's probe
  CHECK(l.result == CUDA_ERROR_NOT_FOUND);
  CHECK(l.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  l = lookup("cuMemAlloc_v2", 13000);  // names are base names
  CHECK(l.result == CUDA_ERROR_NOT_FOUND);
  CHECK(l.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  l = lookup("cudaMalloc", 13000);  // not a driver entry point
  CHECK(l.result == CUDA_ERROR_NOT_FOUND);
  void* fn = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetProcAddress_v2)(nullptr, &fn, 13000, 0, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetProcAddress_v2)("cuInit", nullptr, 13000, 0, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetProcAddress_v2)("cuInit", &fn, 13000, 4, nullptr));
  CU_OK(CU(cuGetProcAddress_v2)("cuInit", &fn, 13000, 0, nullptr));  // the status is optional
  CHECK(fn == dlsym(lib(), "cuInit"));
}

TEST_CASE("driver: cuGetProcAddress (11.3 ABI) and calling through the pointer", "[driver]") {
  void* fn = nullptr;
  CU_OK(CU(cuGetProcAddress)("cuDriverGetVersion", &fn, 11030, 0));
  REQUIRE(fn == dlsym(lib(), "cuDriverGetVersion"));
  int v = 0;
  CHECK(reinterpret_cast<CUresult (*)(int*)>(fn)(&v) == CUDA_SUCCESS);
  CHECK(v == 13000);
  CU_OK(CU(cuGetProcAddress)("cuMemcpyDtoH", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  CHECK(fn == dlsym(lib(), "cuMemcpyDtoH_v2_ptds"));
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuGetProcAddress)("cuNotAnEntryPoint", &fn, 12000, 0));
  CHECK(fn == nullptr);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetProcAddress)(nullptr, &fn, 12000, 0));
}

TEST_CASE("driver: every listed entry point resolves at its newest version", "[driver]") {
  const char* src = std::getenv("FAKEGPU_SOURCE_DIR");
  if (!src) {
    WARN("FAKEGPU_SOURCE_DIR is not set: skipping the walk over fakebackend/api/cuda_proc_versions.def");
    return;
  }
  std::ifstream f(std::string(src) + "/fakebackend/api/cuda_proc_versions.def");
  REQUIRE(f.good());
  const std::regex line(R"(^FG_PROC\((\w+), \(([0-9, ]+)\)\))");
  std::string text;
  int names = 0;
  while (std::getline(f, text)) {
    std::smatch m;
    if (!std::regex_search(text, m, line)) continue;
    const std::string name = m[1];
    std::vector<int> versions;
    std::stringstream vs(m[2].str());
    for (std::string v; std::getline(vs, v, ',');) versions.push_back(std::stoi(v));
    for (size_t k = 0; k < versions.size(); ++k) {
      const std::string symbol = k == 0 ? name : name + "_v" + std::to_string(k + 1);
      expect(name.c_str(), versions[k], 0, symbol.c_str());
    }
    ++names;
  }
  CHECK(names >= 440);
}
