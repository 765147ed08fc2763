// SPDX-License-Identifier: Apache-2.0
// NVML semantics through the exported API, exactly as a client sees it: the library is
// dlopen()ed as libnvidia-ml.so.1 from $FAKEGPU_TEST_LIBDIR and every call goes through a
// dlsym()ed pointer. Expected numbers are the default configuration's (8 x a100-80gb, DGX A100
// PCI layout; fakebackend/src/core/device_model.cpp). Each test case balances its own
// nvmlInit / nvmlShutdown, so every case starts uninitialised.
#include <catch2/catch.hpp>

#include "fakegpu/nvml_types.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <strings.h>

using namespace fgapi;

namespace {

// ---- loading --------------------------------------------------------------------------------
void* open_lib(const char* name) {
  const char* dir = std::getenv("FAKEGPU_TEST_LIBDIR");
  INFO("FAKEGPU_TEST_LIBDIR must name the directory holding " << name);
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/" + name;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen(" << path << "): " << (h ? "" : dlerror()));
  REQUIRE(h != nullptr);
  return h;
}

void* nvml_lib() {
  static void* h = open_lib("libnvidia-ml.so.1");
  return h;
}
void* cuda_lib() {
  static void* h = open_lib("libcuda.so.1");
  return h;
}

template <class F>
F* sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  INFO("dlsym(" << name << ")");
  REQUIRE(p != nullptr);
  return reinterpret_cast<F*>(p);
}
template <class F>
F* nvml(const char* name) {
  return sym<F>(nvml_lib(), name);
}

// ---- the NVML signatures used here (nvml.h) -------------------------------------------------
using VoidFn = nvmlReturn_t();
using FlagsFn = nvmlReturn_t(unsigned);
using CountFn = nvmlReturn_t(unsigned*);
using ByIndexFn = nvmlReturn_t(unsigned, nvmlDevice_t*);
using ByStringFn = nvmlReturn_t(const char*, nvmlDevice_t*);
using StringFn = nvmlReturn_t(nvmlDevice_t, char*, unsigned);
using SysStringFn = nvmlReturn_t(char*, unsigned);
using UintFn = nvmlReturn_t(nvmlDevice_t, unsigned*);
using ErrorStringFn = const char*(nvmlReturn_t);
template <class Entry>
using ProcFn = nvmlReturn_t(nvmlDevice_t, unsigned*, Entry*);

// The status names the assertions print.
const char* err(nvmlReturn_t r) { return nvml<ErrorStringFn>("nvmlErrorString")(r); }
#define NVML_CHECK(expected, call)                 \
  do {                                             \
    const nvmlReturn_t r_ = (call);                \
    INFO(#call << " -> " << r_ << " " << err(r_)); \
    CHECK(r_ == (expected));                       \
  } while (0)

// RAII init/shutdown pair.
struct NvmlSession {
  NvmlSession() { REQUIRE(nvml<VoidFn>("nvmlInit_v2")() == NVML_SUCCESS); }
  ~NvmlSession() { nvml<VoidFn>("nvmlShutdown")(); }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
};

nvmlDevice_t device(unsigned i) {
  nvmlDevice_t d = nullptr;
  REQUIRE(nvml<ByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(i, &d) == NVML_SUCCESS);
  REQUIRE(d != nullptr);
  return d;
}

// Default profile facts (device_model.cpp, a100-80gb).
constexpr unsigned kDefaultCount = 8;
constexpr const char* kName = "Fake NVIDIA A100-SXM4-80GB";
constexpr unsigned long long kTotal = 85899345920ull;
constexpr unsigned kBuses[8] = {0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD};

bool default_config() { return !std::getenv("FAKEGPU_DEVICES") && !std::getenv("FAKEGPU_CONFIG"); }

// ---- driver API (to hold memory in this process) ------------------------------------------------
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;

struct DriverAlloc {
  CUdeviceptr ptr = 0;
  CUdevice dev = 0;
  bool ok = false;
  DriverAlloc(CUdevice d, size_t bytes, bool managed = false) : dev(d) {
    void* lib = cuda_lib();
    REQUIRE(sym<CUresult(unsigned)>(lib, "cuInit")(0) == 0);
    CUcontext ctx = nullptr;
    REQUIRE(sym<CUresult(CUcontext*, CUdevice)>(lib, "cuDevicePrimaryCtxRetain")(&ctx, d) == 0);
    REQUIRE(sym<CUresult(CUcontext)>(lib, "cuCtxSetCurrent")(ctx) == 0);
    if (managed)
      REQUIRE(sym<CUresult(CUdeviceptr*, size_t, unsigned)>(lib, "cuMemAllocManaged")(&ptr, bytes, 1 /* GLOBAL */) ==
              0);
    else
      REQUIRE(sym<CUresult(CUdeviceptr*, size_t)>(lib, "cuMemAlloc_v2")(&ptr, bytes) == 0);
    ok = true;
  }
  ~DriverAlloc() {
    if (!ok) return;
    void* lib = cuda_lib();
    sym<CUresult(CUdeviceptr)>(lib, "cuMemFree_v2")(ptr);
    sym<CUresult(CUdevice)>(lib, "cuDevicePrimaryCtxRelease_v2")(dev);
  }
  DriverAlloc(const DriverAlloc&) = delete;
  DriverAlloc& operator=(const DriverAlloc&) = delete;
};

// CUDA devices of this process (0 when CUDA_VISIBLE_DEVICES hides them all).
int cuda_count() {
  void* lib = cuda_lib();
  if (sym<CUresult(unsigned)>(lib, "cuInit")(0) != 0) return 0;  // CUDA_ERROR_NO_DEVICE
  int n = 0;
  REQUIRE(sym<CUresult(int*)>(lib, "cuDeviceGetCount")(&n) == 0);
  return n;
}

// The NVML handle of a CUDA ordinal. NVML lists every GPU, CUDA only those
// CUDA_VISIBLE_DEVICES shows, so the two are matched by PCI bus id, as nvitop does.
nvmlDevice_t nvml_of_cuda(CUdevice ordinal) {
  void* lib = cuda_lib();
  REQUIRE(sym<CUresult(unsigned)>(lib, "cuInit")(0) == 0);
  char bus[32];
  REQUIRE(sym<CUresult(char*, int, CUdevice)>(lib, "cuDeviceGetPCIBusId")(bus, sizeof bus, ordinal) == 0);
  nvmlDevice_t d = nullptr;
  REQUIRE(nvml<ByStringFn>("nvmlDeviceGetHandleByPciBusId_v2")(bus, &d) == NVML_SUCCESS);
  return d;
}

// usedGpuMemory of this process on a device (0 when not listed), through _v3.
unsigned long long own_usage(nvmlDevice_t d) {
  auto fn = nvml<ProcFn<nvmlProcessInfo_t>>("nvmlDeviceGetComputeRunningProcesses_v3");
  unsigned n = 0;
  nvmlReturn_t r = fn(d, &n, nullptr);
  if (r == NVML_SUCCESS) return 0;
  REQUIRE(r == NVML_ERROR_INSUFFICIENT_SIZE);
  std::vector<nvmlProcessInfo_t> v(n);
  REQUIRE(fn(d, &n, v.data()) == NVML_SUCCESS);
  for (unsigned i = 0; i < n; ++i)
    if (v[i].pid == static_cast<unsigned>(getpid())) return v[i].usedGpuMemory;
  return 0;
}

bool is_uuid(const std::string& s) {
  if (s.size() != 40 || s.rfind("GPU-", 0) != 0) return false;
  for (size_t i = 4; i < s.size(); ++i) {
    const bool dash = i == 12 || i == 17 || i == 22 || i == 27;
    if (dash ? s[i] != '-' : !(std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  }
  return true;
}

}  // namespace

// =================================================================================================
TEST_CASE("nvml: every call before init or after the last shutdown is UNINITIALIZED", "[nvml]") {
  unsigned count = 0;
  nvmlDevice_t d = nullptr;
  char buf[96];
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<CountFn>("nvmlDeviceGetCount_v2")(&count));
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<ByIndexFn>("nvmlDeviceGetHandleByIndex_v2")(0, &d));
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<SysStringFn>("nvmlSystemGetDriverVersion")(buf, sizeof buf));
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<ByStringFn>("nvmlDeviceGetHandleByPciBusId_v2")("00000000:07:00.0", &d));
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<VoidFn>("nvmlShutdown")());

  nvmlDevice_t kept = nullptr;
  {
    NvmlSession s;
    kept = device(0);
  }
  // A handle from an earlier session is refused once the library is shut down again.
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<StringFn>("nvmlDeviceGetName")(kept, buf, sizeof buf));
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, nvml<CountFn>("nvmlDeviceGetCount_v2")(&count));
  // Error strings need no init.
  CHECK(std::string(err(NVML_ERROR_UNINITIALIZED)) == "Uninitialized");
}

TEST_CASE("nvml: init is reference counted across nvmlInit, nvmlInit_v2 and nvmlInitWithFlags", "[nvml]") {
  unsigned count = 0;
  auto get_count = nvml<CountFn>("nvmlDeviceGetCount_v2");
  auto shutdown = nvml<VoidFn>("nvmlShutdown");
  NVML_CHECK(NVML_SUCCESS, nvml<VoidFn>("nvmlInit")());
  NVML_CHECK(NVML_SUCCESS, nvml<VoidFn>("nvmlInit_v2")());
  NVML_CHECK(NVML_SUCCESS, nvml<FlagsFn>("nvmlInitWithFlags")(0));
  NVML_CHECK(NVML_SUCCESS, nvml<FlagsFn>("nvmlInitWithFlags")(NVML_INIT_FLAG_NO_GPUS));
  for (int left = 3; left >= 0; --left) {
    NVML_CHECK(NVML_SUCCESS, get_count(&count));
    NVML_CHECK(NVML_SUCCESS, shutdown());
  }
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, get_count(&count));
  NVML_CHECK(NVML_ERROR_UNINITIALIZED, shutdown());
  // and it comes back
  NVML_CHECK(NVML_SUCCESS, nvml<VoidFn>("nvmlInit_v2")());
  NVML_CHECK(NVML_SUCCESS, get_count(&count));
  NVML_CHECK(NVML_SUCCESS, shutdown());
}

TEST_CASE("nvml: system versions", "[nvml]") {
  NvmlSession s;
  char buf[80];
  NVML_CHECK(NVML_SUCCESS, nvml<SysStringFn>("nvmlSystemGetDriverVersion")(buf, sizeof buf));
  CHECK(std::string(buf) == "580.65.06");
  NVML_CHECK(NVML_SUCCESS, nvml<SysStringFn>("nvmlSystemGetNVMLVersion")(buf, sizeof buf));
  CHECK(std::string(buf) == "13.580.65.06");
  int cuda = 0;
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(int*)>("nvmlSystemGetCudaDriverVersion")(&cuda));
  CHECK(cuda == 13000);
  cuda = 0;
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(int*)>("nvmlSystemGetCudaDriverVersion_v2")(&cuda));
  CHECK(cuda == 13000);
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, nvml<nvmlReturn_t(int*)>("nvmlSystemGetCudaDriverVersion_v2")(nullptr));

  // "580.65.06" needs 10 bytes: 9 is too small, and what is written stays NUL-terminated.
  std::memset(buf, 'x', sizeof buf);
  NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, nvml<SysStringFn>("nvmlSystemGetDriverVersion")(buf, 9));
  CHECK(std::memchr(buf, '\0', 9) != nullptr);
  NVML_CHECK(NVML_SUCCESS, nvml<SysStringFn>("nvmlSystemGetDriverVersion")(buf, 10));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, nvml<SysStringFn>("nvmlSystemGetDriverVersion")(nullptr, 80));
}

TEST_CASE("nvml: confidential computing is off on the fake system", "[nvml]") {
  NvmlSession s;
  nvmlConfComputeSystemState_t state{9, 9, 9};
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlConfComputeSystemState_t*)>("nvmlSystemGetConfComputeState")(&state));
  CHECK((state.environment == 0 && state.ccFeature == 0 && state.devToolsMode == 0));
  auto settings_fn = nvml<nvmlReturn_t(nvmlSystemConfComputeSettings_t*)>("nvmlSystemGetConfComputeSettings");
  nvmlSystemConfComputeSettings_t settings{nvmlSystemConfComputeSettings_v1, 9, 9, 9, 9};
  NVML_CHECK(NVML_SUCCESS, settings_fn(&settings));
  CHECK(settings.version == nvmlSystemConfComputeSettings_v1);
  CHECK((settings.environment == 0 && settings.ccFeature == 0 && settings.devToolsMode == 0 &&
         settings.multiGpuMode == 0));
  settings.version = 0;
  NVML_CHECK(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, settings_fn(&settings));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, settings_fn(nullptr));
}

TEST_CASE("nvml: error strings are the real library's", "[nvml]") {
  const std::pair<nvmlReturn_t, std::string> strings[] = {
      {NVML_SUCCESS, "Success"},
      {NVML_ERROR_UNINITIALIZED, "Uninitialized"},
      {NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument"},
      {NVML_ERROR_NOT_SUPPORTED, "Not Supported"},
      {NVML_ERROR_NO_PERMISSION, "Insufficient Permissions"},
      {NVML_ERROR_NOT_FOUND, "Not Found"},
      {NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size"},
      {NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded"},
      {NVML_ERROR_TIMEOUT, "Timeout"},
      {NVML_ERROR_LIB_RM_VERSION_MISMATCH, "Driver/library version mismatch"},
      {NVML_ERROR_MEMORY, "Insufficient Memory"},
      {NVML_ERROR_UNKNOWN, "Unknown Error"},
      {static_cast<nvmlReturn_t>(12345), "Unknown Error"},
  };
  for (const auto& [code, text] : strings) {
    INFO("nvmlReturn_t " << static_cast<int>(code));
    CHECK(err(code) == text);
  }
  for (int code = 0; code <= 30; ++code) CHECK(std::strlen(err(static_cast<nvmlReturn_t>(code))) > 0);
}

TEST_CASE("nvml: enumeration and handles", "[nvml]") {
  NvmlSession s;
  unsigned count = 0, count_v1 = 0;
  NVML_CHECK(NVML_SUCCESS, nvml<CountFn>("nvmlDeviceGetCount_v2")(&count));
  NVML_CHECK(NVML_SUCCESS, nvml<CountFn>("nvmlDeviceGetCount")(&count_v1));
  CHECK(count == count_v1);
  if (default_config()) CHECK(count == kDefaultCount);
  REQUIRE(count >= 1);
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, nvml<CountFn>("nvmlDeviceGetCount_v2")(nullptr));

  auto by_index = nvml<ByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
  auto get_index = nvml<UintFn>("nvmlDeviceGetIndex");
  std::vector<nvmlDevice_t> handles;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr, d1 = nullptr;
    NVML_CHECK(NVML_SUCCESS, by_index(i, &d));
    NVML_CHECK(NVML_SUCCESS, nvml<ByIndexFn>("nvmlDeviceGetHandleByIndex")(i, &d1));
    CHECK(d == d1);  // handles are stable
    unsigned idx = 99;
    NVML_CHECK(NVML_SUCCESS, get_index(d, &idx));
    CHECK(idx == i);
    unsigned minor = 99;
    NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceGetMinorNumber")(d, &minor));
    CHECK(minor == i);
    for (nvmlDevice_t other : handles) CHECK(other != d);
    handles.push_back(d);
  }
  nvmlDevice_t d = nullptr;
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_index(count, &d));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_index(0xFFFFFFFFu, &d));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_index(0, nullptr));

  // Handles that are not ours: NULL, a stack address, an interior pointer of a real handle.
  unsigned idx = 0;
  int local = 0;
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, get_index(nullptr, &idx));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, get_index(reinterpret_cast<nvmlDevice_t>(&local), &idx));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT,
             get_index(reinterpret_cast<nvmlDevice_t>(reinterpret_cast<char*>(handles[0]) + 4), &idx));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, get_index(handles[0], nullptr));
  char name[96];
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, nvml<StringFn>("nvmlDeviceGetName")(nullptr, name, sizeof name));
}

TEST_CASE("nvml: names, UUIDs and serials", "[nvml]") {
  NvmlSession s;
  unsigned count = 0;
  REQUIRE(nvml<CountFn>("nvmlDeviceGetCount_v2")(&count) == NVML_SUCCESS);
  auto get_name = nvml<StringFn>("nvmlDeviceGetName");
  auto get_uuid = nvml<StringFn>("nvmlDeviceGetUUID");
  auto get_serial = nvml<StringFn>("nvmlDeviceGetSerial");
  auto by_uuid = nvml<ByStringFn>("nvmlDeviceGetHandleByUUID");
  std::vector<std::string> uuids;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = device(i);
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    NVML_CHECK(NVML_SUCCESS, get_name(d, buf, sizeof buf));
    const std::string name = buf;
    CHECK(name.rfind("Fake ", 0) == 0);
    if (default_config()) CHECK(name == kName);

    NVML_CHECK(NVML_SUCCESS, get_uuid(d, buf, sizeof buf));
    const std::string uuid = buf;
    INFO("uuid " << uuid);
    CHECK(is_uuid(uuid));
    for (const auto& u : uuids) CHECK(u != uuid);
    uuids.push_back(uuid);
    nvmlDevice_t found = nullptr;
    NVML_CHECK(NVML_SUCCESS, by_uuid(uuid.c_str(), &found));
    CHECK(found == d);

    NVML_CHECK(NVML_SUCCESS, get_serial(d, buf, sizeof buf));
    const std::string serial = buf;
    CHECK(serial.size() == 13);
    CHECK(serial.find_first_not_of("0123456789") == std::string::npos);

    // Exact-fit buffer works, one byte less is INSUFFICIENT_SIZE (NUL-terminated prefix).
    NVML_CHECK(NVML_SUCCESS, get_uuid(d, buf, static_cast<unsigned>(uuid.size() + 1)));
    std::memset(buf, 'x', sizeof buf);
    NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, get_uuid(d, buf, static_cast<unsigned>(uuid.size())));
    CHECK(std::strlen(buf) == uuid.size() - 1);
    NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, get_name(d, buf, 5));
    CHECK(std::string(buf) == name.substr(0, 4));
    NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, get_name(d, buf, 0));
    NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, get_name(d, nullptr, 96));
    NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, get_serial(d, buf, 4));
  }
  nvmlDevice_t found = nullptr;
  NVML_CHECK(NVML_ERROR_NOT_FOUND, by_uuid("GPU-00000000-0000-0000-0000-000000000000", &found));
  NVML_CHECK(NVML_ERROR_NOT_FOUND, by_uuid("not-a-uuid", &found));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_uuid(nullptr, &found));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_uuid(uuids[0].c_str(), nullptr));
}

TEST_CASE("nvml: identity agrees with the CUDA driver API", "[nvml]") {
  NvmlSession s;
  void* cu = cuda_lib();
  const int cu_count = cuda_count();
  unsigned count = 0;
  REQUIRE(nvml<CountFn>("nvmlDeviceGetCount_v2")(&count) == NVML_SUCCESS);
  // Like the real library, NVML lists every GPU whatever CUDA_VISIBLE_DEVICES hides.
  if (!std::getenv("CUDA_VISIBLE_DEVICES")) CHECK(static_cast<int>(count) == cu_count);
  CHECK(static_cast<int>(count) >= cu_count);
  for (int i = 0; i < cu_count; ++i) {
    unsigned char raw[16];
    REQUIRE(sym<CUresult(unsigned char*, CUdevice)>(cu, "cuDeviceGetUuid")(raw, i) == 0);
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", raw[0],
                  raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12],
                  raw[13], raw[14], raw[15]);
    INFO("CUDA device " << i << " " << uuid);
    nvmlDevice_t d = nullptr;
    REQUIRE(nvml<ByStringFn>("nvmlDeviceGetHandleByUUID")(uuid, &d) == NVML_SUCCESS);
    if (!std::getenv("CUDA_VISIBLE_DEVICES")) CHECK(d == device(static_cast<unsigned>(i)));

    char name[96], cu_name[256];
    REQUIRE(nvml<StringFn>("nvmlDeviceGetName")(d, name, sizeof name) == NVML_SUCCESS);
    REQUIRE(sym<CUresult(char*, int, CUdevice)>(cu, "cuDeviceGetName")(cu_name, sizeof cu_name, i) == 0);
    CHECK(std::string(name) == cu_name);

    char bus[32];
    REQUIRE(sym<CUresult(char*, int, CUdevice)>(cu, "cuDeviceGetPCIBusId")(bus, sizeof bus, i) == 0);
    nvmlPciInfo_t pci{};
    REQUIRE(nvml<nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3")(d, &pci) == NVML_SUCCESS);
    CHECK(strcasecmp(pci.busIdLegacy, bus) == 0);
    CHECK(nvml_of_cuda(i) == d);

    size_t total = 0;
    REQUIRE(sym<CUresult(size_t*, CUdevice)>(cu, "cuDeviceTotalMem_v2")(&total, i) == 0);
    nvmlMemory_t mem{};
    REQUIRE(nvml<nvmlReturn_t(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo")(d, &mem) == NVML_SUCCESS);
    CHECK(mem.total == total);

    int major = 0, minor = 0, cu_major = 0, cu_minor = 0;
    REQUIRE(nvml<nvmlReturn_t(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability")(d, &major, &minor) ==
            NVML_SUCCESS);
    REQUIRE(sym<CUresult(int*, int, CUdevice)>(cu, "cuDeviceGetAttribute")(&cu_major, 75, i) == 0);
    REQUIRE(sym<CUresult(int*, int, CUdevice)>(cu, "cuDeviceGetAttribute")(&cu_minor, 76, i) == 0);
    CHECK(major == cu_major);
    CHECK(minor == cu_minor);
  }
}

TEST_CASE("nvml: PCI info in every ABI and lookup by bus id", "[nvml]") {
  NvmlSession s;
  auto by_bus = nvml<ByStringFn>("nvmlDeviceGetHandleByPciBusId_v2");
  const unsigned n = default_config() ? kDefaultCount : 1;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t d = device(i);
    nvmlPciInfo_t pci;
    std::memset(&pci, 0x5A, sizeof pci);
    NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3")(d, &pci));
    char legacy[32], full[40];
    std::snprintf(legacy, sizeof legacy, "%04X:%02X:%02X.0", pci.domain, pci.bus, pci.device);
    std::snprintf(full, sizeof full, "%08X:%02X:%02X.0", pci.domain, pci.bus, pci.device);
    CHECK(std::string(pci.busIdLegacy) == legacy);
    CHECK(std::string(pci.busId) == full);
    if (default_config()) {
      CHECK(pci.domain == 0);
      CHECK(pci.bus == kBuses[i]);
      CHECK(pci.device == 0);
      CHECK(pci.pciDeviceId == 0x20B210DEu);
      CHECK(pci.pciSubSystemId == 0x147F10DEu);
    }
    // The unversioned and _v2 ABIs write only the 52-byte legacy layout.
    for (const char* fn : {"nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo_v2"}) {
      unsigned char raw[68];
      std::memset(raw, 0x5A, sizeof raw);
      NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlDevice_t, void*)>(fn)(d, raw));
      nvmlPciInfoLegacy_t old;
      std::memcpy(&old, raw, sizeof old);
      CHECK(std::string(old.busId) == legacy);
      CHECK(old.bus == pci.bus);
      CHECK(old.pciDeviceId == pci.pciDeviceId);
      CHECK(old.reserved0 == 0);
      CHECK(raw[52] == 0x5A);  // nothing past the legacy struct
      CHECK(raw[67] == 0x5A);
    }
    // Every spelling of the address finds the same device.
    char lower[40], short_form[16], no_fn[40];
    std::snprintf(lower, sizeof lower, "%08x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
    std::snprintf(short_form, sizeof short_form, "%02X:%02X.0", pci.bus, pci.device);
    std::snprintf(no_fn, sizeof no_fn, "%04X:%02X:%02X", pci.domain, pci.bus, pci.device);
    for (const char* id :
         {static_cast<const char*>(pci.busId), static_cast<const char*>(pci.busIdLegacy),
          static_cast<const char*>(lower), static_cast<const char*>(no_fn),
          pci.domain == 0 ? static_cast<const char*>(short_form) : static_cast<const char*>(pci.busId)}) {
      nvmlDevice_t found = nullptr;
      INFO("bus id " << id);
      NVML_CHECK(NVML_SUCCESS, by_bus(id, &found));
      CHECK(found == d);
    }
    nvmlDevice_t found = nullptr;
    NVML_CHECK(NVML_SUCCESS, nvml<ByStringFn>("nvmlDeviceGetHandleByPciBusId")(pci.busId, &found));
    CHECK(found == d);
  }
  nvmlDevice_t found = nullptr;
  NVML_CHECK(NVML_ERROR_NOT_FOUND, by_bus("00000000:01:00.0", &found));
  NVML_CHECK(NVML_ERROR_NOT_FOUND, by_bus("0000:07:00.1", &found));  // function 1 does not exist
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_bus("garbage", &found));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_bus("0000:07:00.0", nullptr));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, by_bus(nullptr, &found));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT,
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3")(device(0), nullptr));
}

TEST_CASE("nvml: memory info v1 and v2", "[nvml]") {
  NvmlSession s;
  const bool have_cuda = cuda_count() >= 1;
  nvmlDevice_t d = have_cuda ? nvml_of_cuda(0) : device(0);
  auto v1 = nvml<nvmlReturn_t(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo");
  auto v2 = nvml<nvmlReturn_t(nvmlDevice_t, nvmlMemory_v2_t*)>("nvmlDeviceGetMemoryInfo_v2");
  nvmlMemory_t m1{};
  NVML_CHECK(NVML_SUCCESS, v1(d, &m1));
  if (default_config()) CHECK(m1.total == kTotal);
  CHECK(m1.free + m1.used == m1.total);

  nvmlMemory_v2_t m2{};
  m2.version = nvmlMemory_v2;
  NVML_CHECK(NVML_SUCCESS, v2(d, &m2));
  CHECK(m2.version == nvmlMemory_v2);
  CHECK(m2.total == m1.total);
  CHECK(m2.reserved == 0);
  CHECK(m2.free + m2.used == m2.total);

  // Strict version: 2 (what nvtop passes) and 0 carry no version byte and get what a real
  // H200 gives 2; v1-style and wrong-size values are a version mismatch.
  for (unsigned bad : {0u, 2u}) {
    nvmlMemory_v2_t m{};
    m.version = bad;
    INFO("version " << bad);
    NVML_CHECK(NVML_ERROR_FUNCTION_NOT_FOUND, v2(d, &m));
  }
  for (unsigned bad : {0x01000028u, 0x02000020u}) {
    nvmlMemory_v2_t m{};
    m.version = bad;
    INFO("version " << bad);
    NVML_CHECK(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, v2(d, &m));
  }
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, v1(d, nullptr));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, v2(d, nullptr));

  // Allocations show up as used, exactly.
  const unsigned long long before = m1.used;
  if (have_cuda) {
    DriverAlloc a(0, 64ull << 20);
    nvmlMemory_t during{};
    NVML_CHECK(NVML_SUCCESS, v1(d, &during));
    CHECK(during.used == before + (64ull << 20));
    CHECK(during.free == during.total - during.used);
  }
  nvmlMemory_t after{};
  NVML_CHECK(NVML_SUCCESS, v1(d, &after));
  CHECK(after.used == before);

  nvmlBAR1Memory_t bar1{};
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlBAR1Memory_t*)>("nvmlDeviceGetBAR1MemoryInfo")(d, &bar1));
  if (default_config()) CHECK(bar1.bar1Total == 128ull << 30);
  CHECK(bar1.bar1Free + bar1.bar1Used == bar1.bar1Total);

  // A100 (Ampere) has no confidential computing: the query is not supported there.
  nvmlConfComputeMemSizeInfo_t cc{};
  if (default_config())
    NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, nvml<nvmlReturn_t(nvmlDevice_t, nvmlConfComputeMemSizeInfo_t*)>(
                                             "nvmlDeviceGetConfComputeMemSizeInfo")(d, &cc));
}

TEST_CASE("nvml: sensors, clocks, power and modes of the default profile", "[nvml]") {
  if (!default_config()) return;
  NvmlSession s;
  nvmlDevice_t d = device(0);
  unsigned v = 0;
  nvmlUtilization_t u{1, 1};
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlUtilization_t*)>("nvmlDeviceGetUtilizationRates")(d, &u));
  CHECK(u.gpu == 0);
  CHECK(u.memory == 0);
  unsigned period = 0;
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetEncoderUtilization")(d, &v, &period));
  CHECK(v == 0);
  CHECK(period > 0);

  auto temp = nvml<nvmlReturn_t(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned*)>("nvmlDeviceGetTemperature");
  NVML_CHECK(NVML_SUCCESS, temp(d, NVML_TEMPERATURE_GPU, &v));
  CHECK(v == 32);
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, temp(d, static_cast<nvmlTemperatureSensors_t>(1), &v));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, temp(d, NVML_TEMPERATURE_GPU, nullptr));

  nvmlTemperature_t tv{};
  auto temp_v = nvml<nvmlReturn_t(nvmlDevice_t, nvmlTemperature_t*)>("nvmlDeviceGetTemperatureV");
  tv.version = nvmlTemperature_v1;
  tv.sensorType = NVML_TEMPERATURE_GPU;
  NVML_CHECK(NVML_SUCCESS, temp_v(d, &tv));
  CHECK(tv.temperature == 32);
  tv.version = 1;
  NVML_CHECK(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, temp_v(d, &tv));

  auto thr = nvml<nvmlReturn_t(nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned*)>(
      "nvmlDeviceGetTemperatureThreshold");
  const struct {
    nvmlTemperatureThresholds_t type;
    unsigned value;
  } thresholds[] = {{NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, 92},
                    {NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, 89},
                    {NVML_TEMPERATURE_THRESHOLD_MEM_MAX, 95},
                    {NVML_TEMPERATURE_THRESHOLD_GPU_MAX, 85}};
  for (const auto& t : thresholds) {
    NVML_CHECK(NVML_SUCCESS, thr(d, t.type, &v));
    CHECK(v == t.value);
  }
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, thr(d, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN, &v));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, thr(d, NVML_TEMPERATURE_THRESHOLD_COUNT, &v));

  NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceGetPowerUsage")(d, &v));
  CHECK(v == 62000);
  NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceGetEnforcedPowerLimit")(d, &v));
  CHECK(v == 400000);
  NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceGetPowerManagementLimit")(d, &v));
  CHECK(v == 400000);

  auto clock = nvml<nvmlReturn_t(nvmlDevice_t, nvmlClockType_t, unsigned*)>("nvmlDeviceGetClockInfo");
  auto max_clock = nvml<nvmlReturn_t(nvmlDevice_t, nvmlClockType_t, unsigned*)>("nvmlDeviceGetMaxClockInfo");
  const unsigned cur[4] = {210, 210, 1593, 585}, max[4] = {1410, 1410, 1593, 1290};
  for (int t = 0; t < 4; ++t) {
    NVML_CHECK(NVML_SUCCESS, clock(d, static_cast<nvmlClockType_t>(t), &v));
    CHECK(v == cur[t]);
    NVML_CHECK(NVML_SUCCESS, max_clock(d, static_cast<nvmlClockType_t>(t), &v));
    CHECK(v == max[t]);
  }
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, clock(d, NVML_CLOCK_COUNT, &v));  // as a real H200 answers

  // Application clocks (graphics, SM, memory; nothing locked: the defaults = the maxima),
  // customer boost (graphics and SM only), as a real H200 answers for its own clocks.
  auto app_clock = nvml<nvmlReturn_t(nvmlDevice_t, nvmlClockType_t, unsigned*)>("nvmlDeviceGetApplicationsClock");
  auto default_app = nvml<nvmlReturn_t(nvmlDevice_t, nvmlClockType_t, unsigned*)>(
      "nvmlDeviceGetDefaultApplicationsClock");
  auto boost = nvml<nvmlReturn_t(nvmlDevice_t, nvmlClockType_t, unsigned*)>("nvmlDeviceGetMaxCustomerBoostClock");
  for (int t = 0; t < 3; ++t) {
    NVML_CHECK(NVML_SUCCESS, app_clock(d, static_cast<nvmlClockType_t>(t), &v));
    CHECK(v == max[t]);
    NVML_CHECK(NVML_SUCCESS, default_app(d, static_cast<nvmlClockType_t>(t), &v));
    CHECK(v == max[t]);
  }
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, app_clock(d, NVML_CLOCK_VIDEO, &v));
  NVML_CHECK(NVML_SUCCESS, boost(d, NVML_CLOCK_SM, &v));
  CHECK(v == 1410);
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, boost(d, NVML_CLOCK_MEM, &v));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, boost(d, NVML_CLOCK_SM, nullptr));

  // Board and bus facts: 108 SMs x 64 FP32 lanes, HBM2e 5120 bit, board id from the PCI
  // address 00:07.0, PCIe gen4 (16000 Mbps per lane, NVML_PCIE_LINK_MAX_SPEED_16000MBPS = 4).
  const struct {
    const char* fn;
    unsigned want;
  } facts[] = {{"nvmlDeviceGetNumGpuCores", 6912},    {"nvmlDeviceGetMemoryBusWidth", 5120},
               {"nvmlDeviceGetBoardId", 0x0700},      {"nvmlDeviceGetMultiGpuBoard", 0},
               {"nvmlDeviceGetNumFans", 0},           {"nvmlDeviceGetPcieSpeed", 16000},
               {"nvmlDeviceGetPcieLinkMaxSpeed", 4},  {"nvmlDeviceGetGpuMaxPcieLinkGeneration", 4},
               {"nvmlDeviceGetPcieReplayCounter", 0}, {"nvmlDeviceGetAdaptiveClockInfoStatus", 1}};
  for (const auto& f : facts) {
    INFO(f.fn);
    v = 12345;
    NVML_CHECK(NVML_SUCCESS, nvml<UintFn>(f.fn)(d, &v));
    CHECK(v == f.want);
    NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, nvml<UintFn>(f.fn)(d, nullptr));
  }
  nvmlEnableState_t accounting = NVML_FEATURE_ENABLED;
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlEnableState_t*)>("nvmlDeviceGetAccountingMode")(d, &accounting));
  CHECK(accounting == NVML_FEATURE_DISABLED);
  nvmlDeviceAttributes_t attrs{};
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED,  // MIG device attributes; MIG is off
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlDeviceAttributes_t*)>("nvmlDeviceGetAttributes_v2")(d, &attrs));

  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, nvml<UintFn>("nvmlDeviceGetFanSpeed")(d, &v));  // SXM: no fan
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, nvml<UintFn>("nvmlDeviceGetFanSpeed")(d, nullptr));

  NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceGetCurrPcieLinkGeneration")(d, &v));
  CHECK(v == 4);
  NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceGetMaxPcieLinkWidth")(d, &v));
  CHECK(v == 16);
  auto pcie = nvml<nvmlReturn_t(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned*)>("nvmlDeviceGetPcieThroughput");
  NVML_CHECK(NVML_SUCCESS, pcie(d, NVML_PCIE_UTIL_TX_BYTES, &v));
  CHECK(v == 0);
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, pcie(d, NVML_PCIE_UTIL_COUNT, &v));

  nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlDevice_t, nvmlPstates_t*)>("nvmlDeviceGetPerformanceState")(d, &ps));
  CHECK(ps == NVML_PSTATE_0);
  nvmlComputeMode_t cm = NVML_COMPUTEMODE_COUNT;
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlDevice_t, nvmlComputeMode_t*)>("nvmlDeviceGetComputeMode")(d, &cm));
  CHECK(cm == NVML_COMPUTEMODE_DEFAULT);
  nvmlEnableState_t cur_ecc = NVML_FEATURE_DISABLED, pend_ecc = NVML_FEATURE_DISABLED;
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*)>(
                               "nvmlDeviceGetEccMode")(d, &cur_ecc, &pend_ecc));
  CHECK(cur_ecc == NVML_FEATURE_ENABLED);
  unsigned long long ecc = 1;
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, unsigned long long*)>(
                 "nvmlDeviceGetTotalEccErrors")(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc));
  CHECK(ecc == 0);

  nvmlBrandType_t brand = NVML_BRAND_UNKNOWN;
  NVML_CHECK(NVML_SUCCESS, nvml<nvmlReturn_t(nvmlDevice_t, nvmlBrandType_t*)>("nvmlDeviceGetBrand")(d, &brand));
  CHECK(brand == NVML_BRAND_NVIDIA);
  nvmlDeviceArchitecture_t arch = 0;
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, nvmlDeviceArchitecture_t*)>("nvmlDeviceGetArchitecture")(d, &arch));
  CHECK(arch == NVML_DEVICE_ARCH_AMPERE);

  // MIG-capable part with MIG off.
  unsigned mode = 9, pending = 9;
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")(d, &mode, &pending));
  CHECK(mode == NVML_DEVICE_MIG_DISABLE);
  CHECK(pending == NVML_DEVICE_MIG_DISABLE);
  unsigned is_mig = 9;
  NVML_CHECK(NVML_SUCCESS, nvml<UintFn>("nvmlDeviceIsMigDeviceHandle")(d, &is_mig));
  CHECK(is_mig == 0);
  nvmlDevice_t mig = nullptr;
  NVML_CHECK(NVML_ERROR_NOT_FOUND, nvml<nvmlReturn_t(nvmlDevice_t, unsigned, nvmlDevice_t*)>(
                                       "nvmlDeviceGetMigDeviceHandleByIndex")(d, 0, &mig));
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, nvml<UintFn>("nvmlDeviceGetGpuInstanceId")(d, &v));

  // Field values: per-entry status, call succeeds.
  nvmlFieldValue_t fv[3]{};
  fv[0].fieldId = 1;    // NVML_FI_DEV_ECC_CURRENT
  fv[1].fieldId = 91;   // NVML_FI_DEV_NVLINK_LINK_COUNT
  fv[2].fieldId = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
  NVML_CHECK(NVML_SUCCESS,
             nvml<nvmlReturn_t(nvmlDevice_t, int, nvmlFieldValue_t*)>("nvmlDeviceGetFieldValues")(d, 3, fv));
  CHECK(fv[0].nvmlReturn == NVML_SUCCESS);
  CHECK(fv[0].value.uiVal == 1);
  CHECK(fv[1].nvmlReturn == NVML_SUCCESS);
  CHECK(fv[1].value.uiVal == 0);
  CHECK(fv[2].nvmlReturn == NVML_ERROR_NOT_SUPPORTED);
  CHECK(fv[0].timestamp > 0);

  // No NVLink: what PyTorch's topology probe and go-gpuallocator expect from a PCIe-only GPU.
  nvmlEnableState_t active = NVML_FEATURE_ENABLED;
  auto link_state = nvml<nvmlReturn_t(nvmlDevice_t, unsigned, nvmlEnableState_t*)>("nvmlDeviceGetNvLinkState");
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, link_state(d, 0, &active));
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, link_state(d, 18, &active));
  nvmlPciInfo_t remote{};
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, nvml<nvmlReturn_t(nvmlDevice_t, unsigned, nvmlPciInfo_t*)>(
                                           "nvmlDeviceGetNvLinkRemotePciInfo_v2")(d, 0, &remote));
  int type = 0;
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED,
             nvml<nvmlReturn_t(nvmlDevice_t, unsigned, int*)>("nvmlDeviceGetNvLinkRemoteDeviceType")(d, 0, &type));
  unsigned cap = 7;
  auto link_cap = nvml<nvmlReturn_t(nvmlDevice_t, unsigned, nvmlNvLinkCapability_t, unsigned*)>(
      "nvmlDeviceGetNvLinkCapability");
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, link_cap(d, 0, NVML_NVLINK_CAP_P2P_SUPPORTED, &cap));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, link_cap(d, 0, NVML_NVLINK_CAP_P2P_SUPPORTED, nullptr));

  // Peer-to-peer as cuDeviceCanAccessPeer offers it (same architecture); every pair answers,
  // the diagonal included (NCCL asks for it); NVLink is not there.
  auto p2p = nvml<nvmlReturn_t(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t*)>(
      "nvmlDeviceGetP2PStatus");
  nvmlGpuP2PStatus_t st = NVML_P2P_STATUS_UNKNOWN;
  NVML_CHECK(NVML_SUCCESS, p2p(d, device(1), NVML_P2P_CAPS_INDEX_READ, &st));
  CHECK(st == NVML_P2P_STATUS_OK);
  NVML_CHECK(NVML_SUCCESS, p2p(d, d, NVML_P2P_CAPS_INDEX_WRITE, &st));
  CHECK(st == NVML_P2P_STATUS_OK);
  NVML_CHECK(NVML_SUCCESS, p2p(d, device(1), NVML_P2P_CAPS_INDEX_NVLINK, &st));
  CHECK(st == NVML_P2P_STATUS_NOT_SUPPORTED);
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, p2p(d, device(1), NVML_P2P_CAPS_INDEX_UNKNOWN, &st));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, p2p(d, nullptr, NVML_P2P_CAPS_INDEX_READ, &st));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, p2p(d, device(1), NVML_P2P_CAPS_INDEX_READ, nullptr));

  // Topology of the DGX A100 layout.
  auto topo = nvml<nvmlReturn_t(nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t*)>(
      "nvmlDeviceGetTopologyCommonAncestor");
  nvmlGpuTopologyLevel_t level = NVML_TOPOLOGY_SYSTEM;
  NVML_CHECK(NVML_SUCCESS, topo(d, d, &level));
  CHECK(level == NVML_TOPOLOGY_INTERNAL);
  NVML_CHECK(NVML_SUCCESS, topo(d, device(1), &level));
  CHECK(level == NVML_TOPOLOGY_MULTIPLE);
  NVML_CHECK(NVML_SUCCESS, topo(d, device(2), &level));
  CHECK(level == NVML_TOPOLOGY_NODE);
  NVML_CHECK(NVML_SUCCESS, topo(d, device(4), &level));
  CHECK(level == NVML_TOPOLOGY_SYSTEM);
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, topo(d, nullptr, &level));
}

TEST_CASE("nvml: compute process lists, v1 / v2 / v3 layouts and the two-call pattern", "[nvml]") {
  NvmlSession s;
  const int cu_count = cuda_count();
  if (cu_count == 0) {
    WARN("CUDA_VISIBLE_DEVICES hides every device: no allocation to list");
    return;
  }
  const CUdevice dev_index = cu_count - 1;  // a device no other test here allocates on
  nvmlDevice_t d = nvml_of_cuda(dev_index);
  const unsigned pid = static_cast<unsigned>(getpid());
  auto v1 = nvml<ProcFn<nvmlProcessInfo_v1_t>>("nvmlDeviceGetComputeRunningProcesses");
  auto v2 = nvml<ProcFn<nvmlProcessInfo_v2_t>>("nvmlDeviceGetComputeRunningProcesses_v2");
  auto v3 = nvml<ProcFn<nvmlProcessInfo_t>>("nvmlDeviceGetComputeRunningProcesses_v3");
  unsigned n0 = 0;

  // NULL count is an invalid argument in every ABI.
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, v1(d, nullptr, nullptr));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, v3(d, nullptr, nullptr));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, v3(nullptr, &n0, nullptr));

  const unsigned long long held_before = own_usage(d);
  const unsigned long long kBytes = 48ull << 20, kManaged = 16ull << 20;
  {
    DriverAlloc a(dev_index, kBytes);
    DriverAlloc m(dev_index, kManaged, /*managed=*/true);
    const unsigned long long expect = held_before + kBytes + kManaged;

    SECTION("v3: 24-byte entries") {
      unsigned n = 0;
      NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, v3(d, &n, nullptr));
      REQUIRE(n >= 1);
      unsigned small = 0;
      nvmlProcessInfo_t one{};
      NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, v3(d, &small, &one));  // buffer present, count 0
      CHECK(small == n);
      std::vector<nvmlProcessInfo_t> buf(n + 2);
      unsigned cap = n + 2;
      NVML_CHECK(NVML_SUCCESS, v3(d, &cap, buf.data()));
      CHECK(cap == n);
      bool found = false;
      for (unsigned i = 0; i < cap; ++i) {
        CHECK(buf[i].gpuInstanceId == 0xFFFFFFFFu);
        CHECK(buf[i].computeInstanceId == 0xFFFFFFFFu);
        if (buf[i].pid == pid) {
          found = true;
          CHECK(buf[i].usedGpuMemory == expect);
        }
      }
      CHECK(found);
    }
    SECTION("v2: 24-byte entries") {
      unsigned n = 0;
      NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, v2(d, &n, nullptr));
      std::vector<nvmlProcessInfo_v2_t> buf(n);
      NVML_CHECK(NVML_SUCCESS, v2(d, &n, buf.data()));
      bool found = false;
      for (const auto& e : buf)
        if (e.pid == pid) {
          found = true;
          CHECK(e.usedGpuMemory == expect);
          CHECK(e.gpuInstanceId == 0xFFFFFFFFu);
        }
      CHECK(found);
    }
    SECTION("plain: 16-byte v1 entries, nothing written past them") {
      unsigned n = 0;
      NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, v1(d, &n, nullptr));
      REQUIRE(n >= 1);
      std::vector<unsigned char> raw(n * 16 + 16, 0xEE);
      NVML_CHECK(NVML_SUCCESS, v1(d, &n, reinterpret_cast<nvmlProcessInfo_v1_t*>(raw.data())));
      bool found = false;
      for (unsigned i = 0; i < n; ++i) {
        nvmlProcessInfo_v1_t e;
        std::memcpy(&e, raw.data() + i * 16, sizeof e);
        if (e.pid == pid) {
          found = true;
          CHECK(e.usedGpuMemory == expect);
        }
      }
      CHECK(found);
      for (size_t i = n * 16; i < raw.size(); ++i) CHECK(raw[i] == 0xEE);
    }
    SECTION("detail list (versioned)") {
      auto detail = nvml<nvmlReturn_t(nvmlDevice_t, nvmlProcessDetailList_t*)>("nvmlDeviceGetRunningProcessDetailList");
      nvmlProcessDetailList_t list{};
      list.version = nvmlProcessDetailList_v1;
      list.mode = 0;
      NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, detail(d, &list));
      REQUIRE(list.numProcArrayEntries >= 1);
      std::vector<nvmlProcessDetail_v1_t> entries(list.numProcArrayEntries);
      list.procArray = entries.data();
      NVML_CHECK(NVML_SUCCESS, detail(d, &list));
      bool found = false;
      for (unsigned i = 0; i < list.numProcArrayEntries; ++i)
        if (entries[i].pid == pid) {
          found = true;
          CHECK(entries[i].usedGpuMemory == expect);
          CHECK(entries[i].usedGpuCcProtectedMemory == 0);
        }
      CHECK(found);
      list.version = 1;
      NVML_CHECK(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, detail(d, &list));
      list.version = nvmlProcessDetailList_v1;
      list.mode = 1;  // graphics: empty
      list.numProcArrayEntries = 0;
      list.procArray = nullptr;
      NVML_CHECK(NVML_SUCCESS, detail(d, &list));
      CHECK(list.numProcArrayEntries == 0);
      list.mode = 7;
      NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, detail(d, &list));
    }
    SECTION("process utilization samples") {
      auto util = nvml<nvmlReturn_t(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned*, unsigned long long)>(
          "nvmlDeviceGetProcessUtilization");
      unsigned n = 0;
      NVML_CHECK(NVML_ERROR_INSUFFICIENT_SIZE, util(d, nullptr, &n, 0));
      REQUIRE(n >= 1);
      std::vector<nvmlProcessUtilizationSample_t> samples(n);
      NVML_CHECK(NVML_SUCCESS, util(d, samples.data(), &n, 0));
      bool found = false;
      for (unsigned i = 0; i < n; ++i)
        if (samples[i].pid == pid) {
          found = true;
          CHECK(samples[i].smUtil == 0);
          CHECK(samples[i].timeStamp > 0);
        }
      CHECK(found);
    }
  }
  // Freed: this process no longer holds anything there.
  CHECK(own_usage(d) == held_before);
}

TEST_CASE("nvml: empty process lists follow the same rules", "[nvml]") {
  NvmlSession s;
  unsigned count = 0;
  REQUIRE(nvml<CountFn>("nvmlDeviceGetCount_v2")(&count) == NVML_SUCCESS);
  nvmlDevice_t d = device(count - 1);
  for (const char* name :
       {"nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses_v2",
        "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses",
        "nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses_v3"}) {
    INFO(name);
    auto fn = nvml<ProcFn<nvmlProcessInfo_t>>(name);
    unsigned n = 5;
    NVML_CHECK(NVML_SUCCESS, fn(d, &n, nullptr));  // pynvml: SUCCESS on the first call = none
    CHECK(n == 0);
    n = 0;
    NVML_CHECK(NVML_SUCCESS, fn(d, &n, nullptr));
    CHECK(n == 0);
    NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, fn(d, nullptr, nullptr));
  }
  // Compute list of a device nobody in this (isolated) ledger holds memory on.
  if (std::getenv("FAKEGPU_ISOLATED") && own_usage(d) == 0) {
    unsigned n = 3;
    NVML_CHECK(NVML_SUCCESS,
               nvml<ProcFn<nvmlProcessInfo_t>>("nvmlDeviceGetComputeRunningProcesses_v3")(d, &n, nullptr));
    CHECK(n == 0);
    unsigned samples = 3;
    NVML_CHECK(NVML_ERROR_NOT_FOUND,
               (nvml<nvmlReturn_t(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned*, unsigned long long)>(
                   "nvmlDeviceGetProcessUtilization")(d, nullptr, &samples, 0)));
  }
}

TEST_CASE("nvml: event sets never fire and time out", "[nvml]") {
  NvmlSession s;
  nvmlDevice_t d = device(0);
  auto create = nvml<nvmlReturn_t(nvmlEventSet_t*)>("nvmlEventSetCreate");
  auto free_set = nvml<nvmlReturn_t(nvmlEventSet_t)>("nvmlEventSetFree");
  auto supported = nvml<nvmlReturn_t(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetSupportedEventTypes");
  auto reg = nvml<nvmlReturn_t(nvmlDevice_t, unsigned long long, nvmlEventSet_t)>("nvmlDeviceRegisterEvents");
  auto wait = nvml<nvmlReturn_t(nvmlEventSet_t, nvmlEventData_t*, unsigned)>("nvmlEventSetWait_v2");

  nvmlEventSet_t set = nullptr;
  NVML_CHECK(NVML_SUCCESS, create(&set));
  REQUIRE(set != nullptr);
  unsigned long long types = 0;
  NVML_CHECK(NVML_SUCCESS, supported(d, &types));
  const unsigned long long wanted = nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError |
                                    nvmlEventTypeSingleBitEccError;
  CHECK((types & wanted) == wanted);
  NVML_CHECK(NVML_SUCCESS, reg(d, wanted & types, set));
  NVML_CHECK(NVML_ERROR_NOT_SUPPORTED, reg(d, nvmlEventTypeGpuRecoveryAction, set));
  nvmlEventData_t data{};
  NVML_CHECK(NVML_ERROR_TIMEOUT, wait(set, &data, 10));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, wait(set, nullptr, 10));
  NVML_CHECK(NVML_SUCCESS, free_set(set));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, free_set(set));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, wait(set, &data, 10));
  NVML_CHECK(NVML_ERROR_INVALID_ARGUMENT, create(nullptr));
}
