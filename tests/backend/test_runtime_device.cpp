// SPDX-License-Identifier: Apache-2.0
// Runtime device management: counting, selection, attributes, both cudaDeviceProp layouts,
// PCI ids, limits, configuration, peer access, reset, versions.
#include "runtime_api.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

using namespace rtt;

namespace {

// Restores device 0 as current when a case changes it.
struct Device0 {
  ~Device0() { rt().cudaSetDevice(0); }
};

}  // namespace

TEST_CASE_METHOD(Case, "cudaGetDeviceCount / cudaGetDevice / cudaSetDevice", "[runtime]") {
  Device0 restore;
  int n = -1;
  REQUIRE(r.cudaGetDeviceCount(&n) == cudaSuccess);
  REQUIRE(n >= 1);
  if (default_devices()) CHECK(n == 8);
  CHECK(r.cudaGetDeviceCount(nullptr) == cudaErrorInvalidValue);

  // A thread that has not chosen a device (and has no driver context current) is on device 0.
  int d = -1;
  cudaError_t fresh = cudaErrorUnknown;
  std::thread([&] { fresh = r.cudaGetDevice(&d); }).join();
  CHECK(fresh == cudaSuccess);
  CHECK(d == 0);
  CHECK(r.cudaGetDevice(nullptr) == cudaErrorInvalidValue);

  CHECK(r.cudaSetDevice(n - 1) == cudaSuccess);
  CHECK(r.cudaGetDevice(&d) == cudaSuccess);
  CHECK(d == n - 1);
  CHECK(r.cudaSetDevice(n) == cudaErrorInvalidDevice);
  CHECK(r.cudaSetDevice(-1) == cudaErrorInvalidDevice);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(r.cudaGetDevice(&d) == cudaSuccess);
  CHECK(d == n - 1);  // a failed cudaSetDevice changes nothing

  CHECK(r.cudaInitDevice(0, 0, 0) == cudaSuccess);
  CHECK(r.cudaInitDevice(n, 0, 0) == cudaErrorInvalidDevice);
  CHECK(r.cudaInitDevice(0, 0, 2) == cudaErrorInvalidValue);
  CHECK(r.cudaGetDevice(&d) == cudaSuccess);
  CHECK(d == n - 1);  // cudaInitDevice does not switch devices
}

TEST_CASE("no devices: cudaGetDeviceCount answers cudaErrorNoDevice", "[runtime]") {
  REQUIRE(run_child_case("runtime child: no devices", {"FAKEGPU_DEVICES=0"}) == 0);
}

TEST_CASE("runtime child: no devices", "[.runtime-child]") {
  auto& r = rt();
  int n = -1;
  CHECK(r.cudaGetDeviceCount(&n) == cudaErrorNoDevice);
  CHECK(n == 0);
  CHECK(r.cudaGetLastError() == cudaErrorNoDevice);
  void* p = nullptr;
  CHECK(r.cudaMalloc(&p, 16) == cudaErrorNoDevice);
  CHECK(r.cudaSetDevice(0) == cudaErrorNoDevice);
  int d = -1;
  CHECK(r.cudaGetDevice(&d) == cudaErrorNoDevice);
  CHECK(r.cudaDeviceSynchronize() == cudaErrorNoDevice);
  int v = 0;
  CHECK(r.cudaDriverGetVersion(&v) == cudaSuccess);  // no device needed
  CHECK(v == 13000);
}

TEST_CASE_METHOD(Case, "cudaDeviceGetAttribute covers the driver's attribute range", "[runtime]") {
  int v = -1;
  for (int a = 1; a <= 147; ++a) {
    INFO("attribute " << a);
    CHECK(r.cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(a), 0) == cudaSuccess);
  }
  CHECK(r.cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(0), 0) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(148), 0) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, device_count()) == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, -1) == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0) == cudaErrorInvalidValue);

  CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0) == cudaSuccess);
  CHECK(v == 32);
  if (default_devices()) {  // a100-80gb
    CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
    CHECK(v == 108);
    CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
    CHECK(v == 8);
    CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMinor, 0) == cudaSuccess);
    CHECK(v == 0);
    CHECK(r.cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0) == cudaSuccess);
    CHECK(v == 1024);
  }
}

TEST_CASE_METHOD(Case, "cudaGetDeviceProperties: CUDA 13 and CUDA 12 layouts through their symbols", "[runtime]") {
  int sms = 0, major = 0, pci_bus = 0, max_blocks = 0, pools = 0, clock = 0;
  r.cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  r.cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  r.cudaDeviceGetAttribute(&pci_bus, cudaDevAttrPciBusId, 0);
  r.cudaDeviceGetAttribute(&max_blocks, cudaDevAttrMaxBlocksPerMultiprocessor, 0);
  r.cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0);
  r.cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
  REQUIRE(sms > 0);

  // CUDA 13 (1008 bytes): multiProcessorCount at 384. Guard bytes catch overruns.
  unsigned char p13[1008 + 64];
  std::memset(p13, 0xAB, sizeof p13);
  REQUIRE(r.cudaGetDeviceProperties(reinterpret_cast<cudaDeviceProp*>(p13), 0) == cudaSuccess);
  auto at = [](const unsigned char* base, size_t off) {
    int v;
    std::memcpy(&v, base + off, sizeof v);
    return v;
  };
  CHECK(at(p13, 384) == sms);
  CHECK(at(p13, 360) == major);
  CHECK(at(p13, 568) == pci_bus);
  CHECK(at(p13, 688) == max_blocks);
  CHECK(at(p13, 720) == pools);
  for (size_t i = 1008; i < sizeof p13; ++i) REQUIRE(p13[i] == 0xAB);
  const auto* prop = reinterpret_cast<const cudaDeviceProp*>(p13);
  CHECK(std::string(prop->name).rfind("Fake ", 0) == 0);
  CHECK(prop->warpSize == 32);
  size_t free_b = 0, total_b = 0;
  REQUIRE(r.cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  CHECK(prop->totalGlobalMem == total_b);

  // CUDA 12.x (cudaGetDeviceProperties_v2@libcudart.so.12, 1032 bytes): SM count at 388.
  unsigned char p12[1032 + 64];
  std::memset(p12, 0xAB, sizeof p12);
  REQUIRE(r.cudaGetDeviceProperties_v2(p12, 0) == cudaSuccess);
  CHECK(at(p12, 388) == sms);
  CHECK(at(p12, 360) == major);
  CHECK(at(p12, 348) == clock);  // clockRate, removed in CUDA 13
  CHECK(at(p12, 584) == pci_bus);
  CHECK(at(p12, 712) == max_blocks);
  CHECK(at(p12, 744) == pools);
  for (size_t i = 1032; i < sizeof p12; ++i) REQUIRE(p12[i] == 0xAB);
  CHECK(std::memcmp(p12, p13, 256) == 0);  // same name

  // Legacy cudaGetDeviceProperties@libcudart.so.12: the pre-12.0 struct, of which only the
  // 712-byte prefix shared by every layout since CUDA 10 is written.
  unsigned char pl[1032];
  std::memset(pl, 0xAB, sizeof pl);
  REQUIRE(r.cudaGetDeviceProperties12(pl, 0) == cudaSuccess);
  CHECK(at(pl, 388) == sms);
  CHECK(std::memcmp(pl, p12, 712) == 0);
  for (size_t i = 712; i < sizeof pl; ++i) REQUIRE(pl[i] == 0xAB);

  // The two exported symbols really are different functions.
  void* h = dlopen((libdir() + "/libcudart.so.13").c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h);
  CHECK(dlvsym(h, "cudaGetDeviceProperties", "libcudart.so.13") !=
        dlvsym(h, "cudaGetDeviceProperties", "libcudart.so.12"));
  dlclose(h);

  CHECK(r.cudaGetDeviceProperties(nullptr, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaGetDeviceProperties(reinterpret_cast<cudaDeviceProp*>(p13), device_count()) == cudaErrorInvalidDevice);
  CHECK(r.cudaGetDeviceProperties_v2(p12, -1) == cudaErrorInvalidDevice);
  CHECK(r.cudaGetDeviceProperties12(nullptr, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidValue);

  if (default_devices()) {
    CHECK(std::string(prop->name) == "Fake NVIDIA A100-SXM4-80GB");
    CHECK(prop->major == 8);
    CHECK(prop->minor == 0);
    CHECK(prop->multiProcessorCount == 108);
    CHECK(prop->totalGlobalMem == 85899345920ull);
    CHECK(prop->pciBusID == 0x07);
    CHECK(prop->pciDomainID == 0);
  }
}

TEST_CASE_METHOD(Case, "PCI bus ids round-trip", "[runtime]") {
  const int n = device_count();
  for (int d = 0; d < n; ++d) {
    char id[32] = {};
    REQUIRE(r.cudaDeviceGetPCIBusId(id, sizeof id, d) == cudaSuccess);
    CHECK(std::strlen(id) == 12);  // "0000:07:00.0"
    int back = -1;
    CHECK(r.cudaDeviceGetByPCIBusId(&back, id) == cudaSuccess);
    CHECK(back == d);
    std::string nvml_form = std::string("0000") + id;  // "00000000:07:00.0" is accepted too
    CHECK(r.cudaDeviceGetByPCIBusId(&back, nvml_form.c_str()) == cudaSuccess);
    CHECK(back == d);
  }
  if (default_devices()) {
    char id[32] = {};
    REQUIRE(r.cudaDeviceGetPCIBusId(id, sizeof id, 0) == cudaSuccess);
    CHECK(std::string(id) == "0000:07:00.0");
    // Upper-case hex, like NVML's bus ids (the two must compare equal in clients).
    REQUIRE(r.cudaDeviceGetPCIBusId(id, sizeof id, 1) == cudaSuccess);
    CHECK(std::string(id) == "0000:0F:00.0");
  }
  char small[5];
  CHECK(r.cudaDeviceGetPCIBusId(small, sizeof small, 0) == cudaSuccess);  // truncated like the real call
  CHECK(std::strlen(small) == 4);
  char id[32];
  int d = 0;
  CHECK(r.cudaDeviceGetPCIBusId(nullptr, 32, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceGetPCIBusId(id, 0, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceGetPCIBusId(id, 32, n) == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceGetByPCIBusId(&d, "0000:ff:1f.0") == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceGetByPCIBusId(&d, "not a bus id") == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceGetByPCIBusId(nullptr, "0000:07:00.0") == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceGetByPCIBusId(&d, nullptr) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "limits, cache configuration, stream priorities, flags", "[runtime]") {
  size_t v = 0;
  CHECK(r.cudaDeviceGetLimit(&v, cudaLimitStackSize) == cudaSuccess);
  CHECK(v == 1024);
  CHECK(r.cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize) == cudaSuccess);
  CHECK(v == 108u * 65536);  // 64 KiB per SM
  CHECK(r.cudaDeviceGetLimit(&v, cudaLimitDevRuntimeSyncDepth) == cudaErrorUnsupportedLimit);
  CHECK(r.cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize) == cudaSuccess);
  CHECK(v == 8388608);
  CHECK(r.cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 << 20) == cudaSuccess);
  CHECK(r.cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize) == cudaSuccess);
  CHECK(v == (64u << 20));
  CHECK(r.cudaDeviceSetLimit(cudaLimitMallocHeapSize, 8 << 20) == cudaSuccess);
  CHECK(r.cudaDeviceGetLimit(&v, static_cast<cudaLimit>(7)) == cudaErrorUnsupportedLimit);
  CHECK(r.cudaDeviceSetLimit(static_cast<cudaLimit>(99), 1) == cudaErrorUnsupportedLimit);
  CHECK(r.cudaDeviceGetLimit(nullptr, cudaLimitStackSize) == cudaErrorInvalidValue);

  cudaFuncCache c = cudaFuncCachePreferEqual;
  CHECK(r.cudaDeviceGetCacheConfig(&c) == cudaSuccess);
  CHECK(c == cudaFuncCachePreferNone);
  CHECK(r.cudaDeviceSetCacheConfig(cudaFuncCachePreferL1) == cudaSuccess);
  CHECK(r.cudaDeviceGetCacheConfig(&c) == cudaSuccess);
  CHECK(c == cudaFuncCachePreferL1);
  CHECK(r.cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(4)) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceSetCacheConfig(cudaFuncCachePreferNone) == cudaSuccess);
  CHECK(r.cudaDeviceGetCacheConfig(nullptr) == cudaErrorInvalidValue);

  int least = 1, greatest = 1;
  CHECK(r.cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess);
  CHECK(least == 0);
  CHECK(greatest == -5);
  CHECK(r.cudaDeviceGetStreamPriorityRange(nullptr, &greatest) == cudaSuccess);
  CHECK(r.cudaDeviceGetStreamPriorityRange(&least, nullptr) == cudaSuccess);

  unsigned flags = 0;
  CHECK(r.cudaGetDeviceFlags(&flags) == cudaSuccess);
  CHECK((flags & cudaDeviceMapHost) != 0);
  CHECK(r.cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) == cudaSuccess);
  CHECK(r.cudaGetDeviceFlags(&flags) == cudaSuccess);
  CHECK((flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync);
  CHECK(r.cudaSetDeviceFlags(cudaDeviceScheduleAuto) == cudaSuccess);
  CHECK(r.cudaSetDeviceFlags(0x3) == cudaErrorInvalidValue);    // two schedules at once
  CHECK(r.cudaSetDeviceFlags(0x100) == cudaErrorInvalidValue);  // unknown bit
  CHECK(r.cudaGetDeviceFlags(nullptr) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "cudaChooseDevice picks a matching device", "[runtime]") {
  cudaDeviceProp want{};
  int maj = 0, min = 0;
  r.cudaDeviceGetAttribute(&maj, cudaDevAttrComputeCapabilityMajor, 0);
  r.cudaDeviceGetAttribute(&min, cudaDevAttrComputeCapabilityMinor, 0);
  want.major = maj;
  want.minor = min;
  int d = -1;
  CHECK(r.cudaChooseDevice(&d, &want) == cudaSuccess);
  REQUIRE(d >= 0);
  int got = 0;
  r.cudaDeviceGetAttribute(&got, cudaDevAttrComputeCapabilityMajor, d);
  CHECK(got == maj);
  CHECK(r.cudaChooseDevice(nullptr, &want) == cudaErrorInvalidValue);
  CHECK(r.cudaChooseDevice(&d, nullptr) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "peer access between distinct devices", "[runtime]") {
  Device0 restore;
  const int n = device_count();
  int can = -1;
  CHECK(r.cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess);
  CHECK(can == 0);
  CHECK(r.cudaDeviceCanAccessPeer(&can, 0, n) == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceCanAccessPeer(nullptr, 0, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaDeviceEnablePeerAccess(0, 0) == cudaErrorInvalidDevice);  // self
  CHECK(r.cudaDeviceEnablePeerAccess(n, 0) == cudaErrorInvalidDevice);
  if (n < 2) return;
  CHECK(r.cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
  CHECK(can == 1);
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  CHECK(r.cudaDeviceEnablePeerAccess(1, 1) == cudaErrorInvalidValue);  // flags must be 0
  CHECK(r.cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
  CHECK(r.cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
  CHECK(r.cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
  CHECK(r.cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled);
  // Peer access is per direction: device 1 has not enabled access to device 0.
  REQUIRE(r.cudaSetDevice(1) == cudaSuccess);
  CHECK(r.cudaDeviceDisablePeerAccess(0) == cudaErrorPeerAccessNotEnabled);
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  CHECK(r.cudaDeviceDisablePeerAccess(1) == cudaSuccess);
  CHECK(r.cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
  int v = -1;
  CHECK(r.cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1) == cudaSuccess);
  CHECK(v == 1);
  CHECK(r.cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 0) == cudaErrorInvalidDevice);
}

TEST_CASE_METHOD(Case, "cudaDeviceReset frees the device's allocations and starts over", "[runtime]") {
  Device0 restore;
  const int dev = device_count() - 1;  // a device no other case keeps state on
  REQUIRE(r.cudaSetDevice(dev) == cudaSuccess);
  size_t free0 = 0, total = 0;
  REQUIRE(r.cudaMemGetInfo(&free0, &total) == cudaSuccess);
  void* p = nullptr;
  REQUIRE(r.cudaMalloc(&p, 64 << 20) == cudaSuccess);
  size_t free1 = 0;
  REQUIRE(r.cudaMemGetInfo(&free1, &total) == cudaSuccess);
  CHECK(free0 - free1 == (64u << 20));
  CHECK(r.cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
  REQUIRE(r.cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20) == cudaSuccess);

  REQUIRE(r.cudaDeviceReset() == cudaSuccess);
  size_t free2 = 0;
  REQUIRE(r.cudaMemGetInfo(&free2, &total) == cudaSuccess);  // implicitly re-initialises
  CHECK(free2 == free0);
  CHECK(r.cudaFree(p) == cudaErrorInvalidValue);  // gone with the context
  int d = -1;
  CHECK(r.cudaGetDevice(&d) == cudaSuccess);
  CHECK(d == dev);
  CHECK(r.cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);  // peer state was reset too
  CHECK(r.cudaDeviceDisablePeerAccess(0) == cudaSuccess);
  size_t heap = 0;
  CHECK(r.cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize) == cudaSuccess);
  CHECK(heap == (8u << 20));  // limits are back to the defaults too
  CHECK(r.cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE_METHOD(Case, "driver and runtime versions", "[runtime]") {
  int v = 0;
  CHECK(r.cudaDriverGetVersion(&v) == cudaSuccess);
  CHECK(v == 13000);
  CHECK(r.cudaRuntimeGetVersion(&v) == cudaSuccess);
  CHECK(v == 13000);
  CHECK(r.cudaDriverGetVersion(nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaRuntimeGetVersion(nullptr) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "libcudart.so.12 legacy names and ABIs", "[runtime]") {
  Device0 restore;
  // cudaChooseDevice@libcudart.so.12 reads the 12.x struct; name/major/minor share offsets.
  unsigned char p12[1032] = {};
  int maj = 0;
  r.cudaDeviceGetAttribute(&maj, cudaDevAttrComputeCapabilityMajor, 0);
  std::memcpy(p12 + 360, &maj, sizeof maj);
  int d = -1;
  CHECK(r.cudaChooseDevice12(&d, p12) == cudaSuccess);
  CHECK(d >= 0);
  CHECK(r.cudaChooseDevice12(nullptr, p12) == cudaErrorInvalidValue);
  // cudaThread* are the old names of cudaDevice*.
  CHECK(r.cudaThreadSynchronize() == cudaSuccess);
  size_t v = 0;
  CHECK(r.cudaThreadGetLimit(&v, cudaLimitStackSize) == cudaSuccess);
  CHECK(v == 1024);
  int ver = 0;
  CHECK(r.cudaRuntimeGetVersion12(&ver) == cudaSuccess);
  CHECK(ver > 0);
  // Odds and ends.
  CHECK(r.__cudaGetProcAddress() == nullptr);  // NVIDIA's body is `return 0`
  const cudaChannelFormatDesc c = r.cudaCreateChannelDesc(8, 16, 0, 0, cudaChannelFormatKindFloat);
  CHECK((c.x == 8 && c.y == 16 && c.z == 0 && c.w == 0 && c.f == cudaChannelFormatKindFloat));
}
