// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: the cuInit gate, versions, error strings, device queries.
#include "backend/driver_test.h"

#include <set>

using namespace drvtest;

namespace {
constexpr const char* kPreInitCase = "driver: calls before cuInit answer CUDA_ERROR_NOT_INITIALIZED";
}

TEST_CASE("driver: calls before cuInit answer CUDA_ERROR_NOT_INITIALIZED", "[driver]") {
  if (!before_init_or_rerun(kPreInitCase)) return;
  constexpr CUresult NI = CUDA_ERROR_NOT_INITIALIZED;
  int i = 0, j = 0;
  unsigned u = 0;
  size_t s = 0, s2 = 0;
  CUdevice d = 0;
  CUcontext c = nullptr;
  CUdeviceptr p = 0;
  CUstream st = nullptr;
  CUevent ev = nullptr;
  char buf[64];
  CUuuid uuid;
  float ms = 0;
  CU_EQ(NI, CU(cuDeviceGetCount)(&i));
  CU_EQ(NI, CU(cuDeviceGet)(&d, 0));
  CU_EQ(NI, CU(cuDeviceGetName)(buf, sizeof buf, 0));
  CU_EQ(NI, CU(cuDeviceTotalMem_v2)(&s, 0));
  CU_EQ(NI, CU(cuDeviceGetAttribute)(&i, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  CU_EQ(NI, CU(cuDeviceGetUuid)(&uuid, 0));
  CU_EQ(NI, CU(cuDeviceGetUuid_v2)(&uuid, 0));
  CU_EQ(NI, CU(cuDeviceGetPCIBusId)(buf, sizeof buf, 0));
  CU_EQ(NI, CU(cuDeviceGetByPCIBusId)(&d, "0000:07:00.0"));
  CU_EQ(NI, CU(cuDeviceComputeCapability)(&i, &j, 0));
  CU_EQ(NI, CU(cuDevicePrimaryCtxRetain)(&c, 0));
  CU_EQ(NI, CU(cuDevicePrimaryCtxRelease_v2)(0));
  CU_EQ(NI, CU(cuDevicePrimaryCtxGetState)(0, &u, &i));
  CU_EQ(NI, CU(cuDevicePrimaryCtxSetFlags_v2)(0, 0));
  CU_EQ(NI, CU(cuDevicePrimaryCtxReset_v2)(0));
  CU_EQ(NI, CU(cuCtxGetCurrent)(&c));
  CU_EQ(NI, CU(cuCtxSetCurrent)(nullptr));
  CU_EQ(NI, CU(cuCtxPushCurrent_v2)(c));
  CU_EQ(NI, CU(cuCtxPopCurrent_v2)(&c));
  CU_EQ(NI, CU(cuCtxGetDevice)(&d));
  CU_EQ(NI, CU(cuCtxGetDevice_v2)(&d, nullptr));
  CU_EQ(NI, CU(cuCtxSynchronize)());
  CU_EQ(NI, CU(cuCtxSynchronize_v2)(nullptr));
  CU_EQ(NI, CU(cuCtxCreate_v2)(&c, 0, 0));
  CU_EQ(NI, CU(cuCtxCreate_v4)(&c, nullptr, 0, 0));
  CU_EQ(NI, CU(cuCtxDestroy_v2)(c));
  CU_EQ(NI, CU(cuMemGetInfo_v2)(&s, &s2));
  CU_EQ(NI, CU(cuMemAlloc_v2)(&p, 64));
  CU_EQ(NI, CU(cuMemFree_v2)(p));
  CU_EQ(NI, CU(cuMemcpyHtoD_v2)(p, buf, 1));
  CU_EQ(NI, CU(cuMemcpyDtoH_v2)(buf, p, 1));
  CU_EQ(NI, CU(cuMemcpyDtoD_v2)(p, p, 1));
  CU_EQ(NI, CU(cuMemcpyHtoDAsync_v2)(p, buf, 1, nullptr));
  CU_EQ(NI, CU(cuMemcpyDtoHAsync_v2)(buf, p, 1, nullptr));
  CU_EQ(NI, CU(cuMemcpyDtoDAsync_v2)(p, p, 1, nullptr));
  CU_EQ(NI, CU(cuMemcpy)(p, p, 1));
  CU_EQ(NI, CU(cuMemcpyAsync)(p, p, 1, nullptr));
  CU_EQ(NI, CU(cuMemsetD8_v2)(p, 0, 1));
  CU_EQ(NI, CU(cuMemsetD32_v2)(p, 0, 1));
  CU_EQ(NI, CU(cuMemsetD8Async)(p, 0, 1, nullptr));
  CU_EQ(NI, CU(cuMemsetD32Async)(p, 0, 1, nullptr));
  CU_EQ(NI, CU(cuStreamCreate)(&st, 0));
  CU_EQ(NI, CU(cuStreamCreateWithPriority)(&st, 0, 0));
  CU_EQ(NI, CU(cuStreamDestroy_v2)(st));
  CU_EQ(NI, CU(cuStreamSynchronize)(st));
  CU_EQ(NI, CU(cuStreamQuery)(st));
  CU_EQ(NI, CU(cuStreamWaitEvent)(st, ev, 0));
  CU_EQ(NI, CU(cuEventCreate)(&ev, 0));
  CU_EQ(NI, CU(cuEventRecord)(ev, st));
  CU_EQ(NI, CU(cuEventQuery)(ev));
  CU_EQ(NI, CU(cuEventSynchronize)(ev));
  CU_EQ(NI, CU(cuEventDestroy_v2)(ev));
  CU_EQ(NI, CU(cuEventElapsedTime)(&ms, ev, ev));
  CU_EQ(NI, CU(cuEventElapsedTime_v2)(&ms, ev, ev));
  CUmoduleLoadingMode mode;
  CU_EQ(NI, CU(cuModuleGetLoadingMode)(&mode));

  // Exempt: versions, error texts and entry-point lookup work before cuInit.
  int v = 0;
  CU_EQ(CUDA_SUCCESS, CU(cuDriverGetVersion)(&v));
  CHECK(v == 13000);
  const char* str = nullptr;
  CU_EQ(CUDA_SUCCESS, CU(cuGetErrorName)(CUDA_ERROR_NOT_INITIALIZED, &str));
  CU_EQ(CUDA_SUCCESS, CU(cuGetErrorString)(CUDA_ERROR_NOT_INITIALIZED, &str));
  void* fp = nullptr;
  CU_EQ(CUDA_SUCCESS, CU(cuGetProcAddress_v2)("cuInit", &fp, 2000, 0, nullptr));
  CHECK(fp == dlsym(lib(), "cuInit"));

  // A refused cuInit leaves the driver uninitialised.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuInit)(1));
  CU_EQ(NI, CU(cuDeviceGetCount)(&i));
  CU_EQ(CUDA_SUCCESS, CU(cuInit)(0));
  CU_EQ(CUDA_SUCCESS, CU(cuDeviceGetCount)(&i));
  CU_EQ(CUDA_SUCCESS, CU(cuInit)(0));  // idempotent
}

TEST_CASE("driver: cuDriverGetVersion", "[driver]") {
  int v = 0;
  CU_EQ(CUDA_SUCCESS, CU(cuDriverGetVersion)(&v));
  CHECK(v == 13000);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDriverGetVersion)(nullptr));
}

TEST_CASE("driver: cuGetErrorName and cuGetErrorString", "[driver]") {
  const char* s = nullptr;
  CU_EQ(CUDA_SUCCESS, CU(cuGetErrorName)(CUDA_SUCCESS, &s));
  CHECK(std::string(s) == "CUDA_SUCCESS");
  CU_EQ(CUDA_SUCCESS, CU(cuGetErrorString)(CUDA_SUCCESS, &s));
  CHECK(std::string(s) == "no error");
  const struct {
    CUresult code;
    const char* name;
    const char* text;
  } cases[] = {
      {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
      {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
      {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
      {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
      {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
      {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
      {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
      {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
      {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
      {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
      {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
      {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
      {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
  };
  for (const auto& c : cases) {
    CU_EQ(CUDA_SUCCESS, CU(cuGetErrorName)(c.code, &s));
    CHECK(std::string(s) == c.name);
    CU_EQ(CUDA_SUCCESS, CU(cuGetErrorString)(c.code, &s));
    CHECK(std::string(s) == c.text);
  }
  // Every CUresult of cuda.h 13.0 has a name and a text.
  const int all[] = {0,   1,   2,   3,   4,   5,   6,   7,   8,   34,  36,  46,  100, 101, 102, 200, 201,
                     202, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220,
                     221, 222, 223, 224, 225, 226, 300, 301, 302, 303, 304, 400, 401, 402, 500, 600, 700,
                     701, 702, 703, 704, 705, 708, 709, 710, 711, 712, 713, 714, 715, 716, 717, 718, 719,
                     720, 721, 800, 801, 802, 803, 804, 805, 806, 807, 808, 809, 810, 811, 812, 900, 901,
                     902, 903, 904, 905, 906, 907, 908, 909, 910, 911, 912, 913, 914, 915, 916, 999};
  std::set<std::string> names;
  for (int code : all) {
    s = nullptr;
    CU_EQ(CUDA_SUCCESS, CU(cuGetErrorName)(static_cast<CUresult>(code), &s));
    REQUIRE(s != nullptr);
    CHECK(std::string(s).rfind("CUDA_", 0) == 0);
    names.insert(s);
    s = nullptr;
    CU_EQ(CUDA_SUCCESS, CU(cuGetErrorString)(static_cast<CUresult>(code), &s));
    REQUIRE(s != nullptr);
    CHECK(std::strlen(s) > 0);
  }
  CHECK(names.size() == std::size(all));
  // Unknown codes: CUDA_ERROR_INVALID_VALUE and *pStr = NULL.
  for (int bad : {9, 203, 999999, -1}) {
    s = "sentinel";
    CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetErrorName)(static_cast<CUresult>(bad), &s));
    CHECK(s == nullptr);
    s = "sentinel";
    CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetErrorString)(static_cast<CUresult>(bad), &s));
    CHECK(s == nullptr);
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetErrorName)(CUDA_SUCCESS, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetErrorString)(CUDA_SUCCESS, nullptr));
}

TEST_CASE("driver: cuInit rejects flags", "[driver]") {
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuInit)(2));
  CU_EQ(CUDA_SUCCESS, CU(cuInit)(0));
}

TEST_CASE("driver: device count, handles and names", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetCount)(nullptr));
  REQUIRE(n >= 1);
  if (default_config()) CHECK(n == 8);
  for (int i = 0; i < n; ++i) {
    CUdevice d = -1;
    CU_OK(CU(cuDeviceGet)(&d, i));
    CHECK(d == i);
  }
  CUdevice d = 0;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGet)(&d, n));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGet)(&d, -1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGet)(nullptr, 0));

  char name[256];
  CU_OK(CU(cuDeviceGetName)(name, sizeof name, 0));
  if (default_config()) CHECK(std::string(name) == "Fake NVIDIA A100-SXM4-80GB");
  // Truncation keeps a terminated prefix.
  char small[6];
  std::memset(small, 'x', sizeof small);
  CU_OK(CU(cuDeviceGetName)(small, sizeof small, 0));
  CHECK(std::string(small) == std::string(name).substr(0, 5));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetName)(nullptr, 256, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetName)(name, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetName)(name, sizeof name, n));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetName)(name, sizeof name, -1));
}

TEST_CASE("driver: total memory, compute capability, legacy properties", "[driver]") {
  init();
  size_t total = 0;
  CU_OK(CU(cuDeviceTotalMem_v2)(&total, 0));
  if (default_config()) CHECK(total == 85899345920ull);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceTotalMem_v2)(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceTotalMem_v2)(&total, 1000));

  int major = 0, minor = -1;
  CU_OK(CU(cuDeviceComputeCapability)(&major, &minor, 0));
  if (default_config()) {
    CHECK(major == 8);
    CHECK(minor == 0);
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceComputeCapability)(nullptr, &minor, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceComputeCapability)(&major, nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceComputeCapability)(&major, &minor, 1000));

  CUdevprop prop;
  std::memset(&prop, 0xFF, sizeof prop);
  CU_OK(CU(cuDeviceGetProperties)(&prop, 0));
  int v = 0;
  CU_OK(CU(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
  CHECK(prop.maxThreadsPerBlock == v);
  CU_OK(CU(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 0));
  CHECK(prop.maxGridSize[0] == v);
  CU_OK(CU(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 0));
  CHECK(prop.clockRate == v);
  CHECK(prop.SIMDWidth == 32);
  if (default_config()) {
    CHECK(prop.maxThreadsPerBlock == 1024);
    CHECK(prop.maxThreadsDim[0] == 1024);
    CHECK(prop.maxThreadsDim[2] == 64);
    CHECK(prop.maxGridSize[0] == 2147483647);
    CHECK(prop.sharedMemPerBlock == 49152);
    CHECK(prop.totalConstantMemory == 65536);
    CHECK(prop.regsPerBlock == 65536);
    CHECK(prop.clockRate == 1410000);
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetProperties)(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetProperties)(&prop, -3));
}

TEST_CASE("driver: every device attribute 1..147", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  for (int dev = 0; dev < n; ++dev)
    for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
      int v = -12345;
      INFO("attribute " << a << " device " << dev);
      CU_EQ(CUDA_SUCCESS, CU(cuDeviceGetAttribute)(&v, static_cast<CUdevice_attribute>(a), dev));
    }
  int v = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetAttribute)(&v, static_cast<CUdevice_attribute>(0), 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_MAX, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetAttribute)(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, n));
  if (default_config()) {
    const struct {
      CUdevice_attribute a;
      int v;
    } expect[] = {
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 108},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 8},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 32},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 167936},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 166912},
        {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0x07},
        {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0},
        {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
        {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
        {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
        {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
    };
    for (const auto& e : expect) {
      INFO("attribute " << static_cast<int>(e.a));
      CU_OK(CU(cuDeviceGetAttribute)(&v, e.a, 0));
      CHECK(v == e.v);
    }
    CU_OK(CU(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 7));
    CHECK(v == 0xBD);
  }
}

TEST_CASE("driver: UUIDs are unique and identical through both entry points", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  std::set<std::string> seen;
  for (int i = 0; i < n; ++i) {
    CUuuid a, b;
    std::memset(&a, 0, sizeof a);
    std::memset(&b, 1, sizeof b);
    CU_OK(CU(cuDeviceGetUuid)(&a, i));
    CU_OK(CU(cuDeviceGetUuid_v2)(&b, i));
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    seen.insert(std::string(a.bytes, a.bytes + 16));
  }
  CHECK(seen.size() == static_cast<size_t>(n));
  CUuuid u;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetUuid)(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetUuid_v2)(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetUuid)(&u, n));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetUuid_v2)(&u, -1));
}

TEST_CASE("driver: PCI bus ids both ways", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  char id[32];
  for (int i = 0; i < n; ++i) {
    CU_OK(CU(cuDeviceGetPCIBusId)(id, sizeof id, i));
    CUdevice d = -1;
    CU_OK(CU(cuDeviceGetByPCIBusId)(&d, id));
    CHECK(d == i);
  }
  if (default_config()) {
    CU_OK(CU(cuDeviceGetPCIBusId)(id, sizeof id, 0));
    CHECK(std::string(id) == "0000:07:00.0");
    CU_OK(CU(cuDeviceGetPCIBusId)(id, sizeof id, 6));
    CHECK(std::string(id) == "0000:B7:00.0");  // upper-case hex, as cudart and NVML print
    CUdevice d = -1;
    CU_OK(CU(cuDeviceGetByPCIBusId)(&d, "00000000:B7:00.0"));  // NVML's 8-digit domain form
    CHECK(d == 6);
    CU_OK(CU(cuDeviceGetByPCIBusId)(&d, "0000:b7:00.0"));  // hex in lower case
    CHECK(d == 6);
    CU_OK(CU(cuDeviceGetByPCIBusId)(&d, "0f:00.0"));  // no domain
    CHECK(d == 1);
  }
  char small[5];
  CU_OK(CU(cuDeviceGetPCIBusId)(small, sizeof small, 0));
  CHECK(std::strlen(small) == 4);
  CUdevice d = 0;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetByPCIBusId)(&d, "0000:01:00.0"));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetByPCIBusId)(&d, "not a bus id"));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetByPCIBusId)(nullptr, "0000:07:00.0"));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetByPCIBusId)(&d, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetPCIBusId)(nullptr, 32, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetPCIBusId)(id, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetPCIBusId)(id, sizeof id, n));
}

TEST_CASE("driver: peer queries", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  int can = -1;
  CU_OK(CU(cuDeviceCanAccessPeer)(&can, 0, 0));
  CHECK(can == 0);  // never to itself
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceCanAccessPeer)(nullptr, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceCanAccessPeer)(&can, n, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceCanAccessPeer)(&can, 0, n));
  int v = -1;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetP2PAttribute)(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));
  if (n >= 2 && default_config()) {
    CU_OK(CU(cuDeviceCanAccessPeer)(&can, 0, 1));
    CHECK(can == 1);
    CU_OK(CU(cuDeviceGetP2PAttribute)(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
    CHECK(v == 1);
    CU_OK(CU(cuDeviceGetP2PAttribute)(&v, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 1));
    CHECK(v == 0);
    CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetP2PAttribute)(&v, static_cast<CUdevice_P2PAttribute>(99), 0, 1));
    CU_EQ(CUDA_ERROR_INVALID_VALUE,
          CU(cuDeviceGetP2PAttribute)(nullptr, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
  }
}
