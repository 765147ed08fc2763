// SPDX-License-Identifier: Apache-2.0
// cuGetExportTable: the private tables NVIDIA's runtime and libraries fetch from the driver
// (shared/research/export-tables.md), each checked for what its users rely on.
#include "backend/driver_test.h"

#include "core/integrity.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>
#include <thread>
#include <vector>

using namespace drvtest;

namespace {

using Id = std::array<unsigned char, 16>;
constexpr Id kCudartInterface = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
constexpr Id kToolsHooks = {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                            0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66};
constexpr Id kToolsTls = {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
                          0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc};
constexpr Id kContextLocal = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                              0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
constexpr Id kContextChecks = {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
                               0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e};
constexpr Id kIntegrity = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                           0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};
constexpr Id kToolsContext = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                              0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
constexpr Id kToolsModule = {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
                             0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e};
constexpr Id kLogSink = {0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e,
                         0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9};
constexpr Id kNvrtcCache = {0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41,
                            0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28};

CUresult get_table(const Id& id, const void* const** out) {
  CUuuid u;
  std::memcpy(u.bytes, id.data(), 16);
  const void* t = nullptr;
  const CUresult r = CU(cuGetExportTable)(&t, &u);
  *out = static_cast<const void* const*>(t);
  return r;
}

const void* const* table(const Id& id) {
  const void* const* t = nullptr;
  CU_OK(get_table(id, &t));
  REQUIRE(t != nullptr);
  return t;
}

uintptr_t size_word(const void* const* t) { return reinterpret_cast<uintptr_t>(t[0]); }

template <class F>
F* slot(const void* const* t, int i) {
  return reinterpret_cast<F*>(const_cast<void*>(t[i]));
}

int g_dtor_calls = 0;
void* g_dtor_args[3] = {};
void record_dtor(void* ctx, void* key, void* value) {
  ++g_dtor_calls;
  g_dtor_args[0] = ctx;
  g_dtor_args[1] = key;
  g_dtor_args[2] = value;
}

}  // namespace

TEST_CASE("driver: cuGetExportTable serves the runtime's tables with their sizes, the same each time", "[driver]") {
  init();
  const std::pair<const Id*, uintptr_t> sized[] = {
      {&kCudartInterface, 13 * 8}, {&kToolsHooks, 7 * 8},    {&kToolsTls, 4 * 8},     {&kContextChecks, 4 * 8},
      {&kIntegrity, 3 * 8},        {&kToolsContext, 93 * 8}, {&kToolsModule, 16 * 8},
  };
  for (auto [id, bytes] : sized) {
    INFO("table " << static_cast<int>((*id)[0]));
    const void* const* t = table(*id);
    CHECK(size_word(t) == bytes);
    CHECK(table(*id) == t);  // every runtime copy in a process gets the same table
    for (uintptr_t i = 1; i < bytes / 8; ++i) CHECK(t[i] != nullptr);
  }
  // Context-local storage has no size word: put, delete, get, and a NULL fourth slot.
  const void* const* cls = table(kContextLocal);
  CHECK(cls[0] != nullptr);
  CHECK(cls[1] != nullptr);
  CHECK(cls[2] != nullptr);
  CHECK(cls[3] == nullptr);
}

TEST_CASE("driver: cuGetExportTable refuses the ids runtimes only probe for, and unknown ids", "[driver]") {
  for (const Id& id : {kLogSink, kNvrtcCache, Id{1, 2, 3}}) {
    const void* const* t = reinterpret_cast<const void* const*>(&id);
    CU_EQ(CUDA_ERROR_NOT_FOUND, get_table(id, &t));
    CHECK(t == nullptr);
  }
  CUuuid u{};
  const void* t = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetExportTable)(nullptr, &u));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGetExportTable)(&t, nullptr));
}

TEST_CASE("driver: the runtime interface hands out the primary context before it is retained", "[driver]") {
  clear_stack();
  auto primary = slot<CUresult(CUcontext*, CUdevice)>(table(kCudartInterface), 2);
  CUcontext h = nullptr;
  CU_OK(primary(&h, 3));
  REQUIRE(h != nullptr);
  unsigned flags = 99;
  int active = 99;
  CU_OK(CU(cuDevicePrimaryCtxGetState)(3, &flags, &active));
  CHECK(active == 0);  // not retained, not activated
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, primary(&h, 8));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, primary(nullptr, 3));

  // The runtime makes it current, then retains it: the same handle, now active.
  CU_OK(CU(cuCtxSetCurrent)(h));
  CUcontext cur = nullptr;
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == h);
  CUcontext retained = nullptr;
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&retained, 3));
  CHECK(retained == h);
  CU_OK(CU(cuDevicePrimaryCtxGetState)(3, &flags, &active));
  CHECK(active == 1);
  CUdevice dev = -1;
  CU_OK(CU(cuCtxGetDevice)(&dev));
  CHECK(dev == 3);
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(3));
  clear_stack();
}

TEST_CASE("driver: context-local storage keeps a value per context and key, and runs its destructor", "[driver]") {
  Ctx c;
  const void* const* cls = table(kContextLocal);
  auto put = slot<CUresult(CUcontext, void*, void*, void (*)(void*, void*, void*))>(cls, 0);
  auto del = slot<CUresult(CUcontext, void*)>(cls, 1);
  auto get = slot<CUresult(void**, CUcontext, void*)>(cls, 2);
  int key1 = 0, key2 = 0, v1 = 0, v2 = 0;
  void* v = nullptr;
  // A miss fails: the runtime creates its per-context state on it.
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, get(&v, c.ctx, &key1));
  CU_OK(put(c.ctx, &key1, &v1, record_dtor));
  CU_OK(get(&v, c.ctx, &key1));
  CHECK(v == &v1);
  CU_OK(get(&v, nullptr, &key1));  // NULL: the current context
  CHECK(v == &v1);
  CU_OK(put(nullptr, &key1, &v2, record_dtor));  // overwrite
  CU_OK(get(&v, c.ctx, &key1));
  CHECK(v == &v2);
  CU_OK(put(c.ctx, &key2, &v1, nullptr));
  CU_OK(get(&v, c.ctx, &key2));  // read (and so remembered by this thread) before the delete
  CHECK(v == &v1);
  CU_OK(del(c.ctx, &key2));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, get(&v, c.ctx, &key2));
  CU_OK(del(c.ctx, &key2));  // deleting what is gone succeeds
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, get(&v, reinterpret_cast<CUcontext>(&v), &key1));

  // Destroying the context calls the destructor once, with (context, key, value).
  g_dtor_calls = 0;
  CUcontext ctx = c.ctx;
  CU_OK(CU(cuCtxDestroy_v2)(ctx));
  c.ctx = nullptr;
  CHECK(g_dtor_calls == 1);
  CHECK(g_dtor_args[0] == ctx);
  CHECK(g_dtor_args[1] == &key1);
  CHECK(g_dtor_args[2] == &v2);
  // The context this thread used a moment ago is no longer valid.
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, get(&v, ctx, &key1));
}

TEST_CASE("driver: context-local storage of a primary context is destroyed by its reset", "[driver]") {
  clear_stack();
  CUcontext p = nullptr;
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&p, 1));
  const void* const* cls = table(kContextLocal);
  auto put = slot<CUresult(CUcontext, void*, void*, void (*)(void*, void*, void*))>(cls, 0);
  auto get = slot<CUresult(void**, CUcontext, void*)>(cls, 2);
  int key = 0, value = 0;
  CU_OK(put(p, &key, &value, record_dtor));
  void* v = nullptr;
  CU_OK(get(&v, p, &key));
  CHECK(v == &value);
  g_dtor_calls = 0;
  CU_OK(CU(cuDevicePrimaryCtxReset_v2)(1));
  CHECK(g_dtor_calls == 1);
  CHECK(g_dtor_args[0] == p);
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&p, 1));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, get(&v, p, &key));  // a reset context starts empty
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(1));
  CHECK(g_dtor_calls == 1);
}

TEST_CASE("driver: the tools hooks hand out zeroed callback flags; tools TLS names the current context", "[driver]") {
  Ctx c;
  const void* const* hooks = table(kToolsHooks);
  for (auto [i, want] : {std::pair{2, size_t{1024}}, std::pair{6, size_t{14}}}) {
    void* buf = nullptr;
    size_t n = 0;
    slot<void(void**, size_t*)>(hooks, i)(&buf, &n);
    CHECK(n == want);
    REQUIRE(buf != nullptr);
    const auto* flags = static_cast<const uint32_t*>(buf);
    CHECK(std::all_of(flags, flags + n, [](uint32_t f) { return f == 0; }));  // no tool subscribed
  }
  CUcontext cur = nullptr;
  CU_OK(slot<CUresult(CUcontext*)>(table(kToolsTls), 2)(&cur));
  CHECK(cur == c.ctx);
}

TEST_CASE("driver: the context checks report no wrapped context", "[driver]") {
  Ctx c;
  const void* const* checks = table(kContextChecks);
  CHECK(slot<uint32_t()>(checks, 3)() == 0);
  uint32_t wrapped = 7;
  CUcontext inner = c.ctx;
  CU_OK(slot<CUresult(CUcontext, uint32_t*, CUcontext*)>(checks, 2)(c.ctx, &wrapped, &inner));
  CHECK(wrapped == 0);
  CHECK(inner == nullptr);
}

TEST_CASE("driver: the integrity check answers with the identity the driver reports", "[driver]") {
  init();
  const void* const* integrity = table(kIntegrity);
  auto check = slot<CUresult(uint32_t, uint64_t, uint64_t*)>(integrity, 1);
  fg::integrity::Inputs in;
  int version = 0, count = 0;
  CU_OK(CU(cuDriverGetVersion)(&version));
  CU_OK(CU(cuDeviceGetCount)(&count));
  in.driver_version = static_cast<uint32_t>(version);
  in.version = 13002;
  in.pid = static_cast<uint32_t>(getpid());
  in.tid = static_cast<uint32_t>(pthread_self());
  in.cudart_table = reinterpret_cast<uintptr_t>(table(kCudartInterface));
  in.integrity_table = reinterpret_cast<uintptr_t>(integrity);
  in.slot1 = reinterpret_cast<uintptr_t>(integrity[1]);
  in.unix_seconds = 1764000000;
  for (int d = 0; d < count; ++d) {
    fg::integrity::DeviceId id;
    CUuuid u;
    CU_OK(CU(cuDeviceGetUuid)(&u, d));
    std::memcpy(id.uuid.data(), u.bytes, 16);
    CU_OK(CU(cuDeviceGetAttribute)(&id.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d));
    CU_OK(CU(cuDeviceGetAttribute)(&id.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d));
    CU_OK(CU(cuDeviceGetAttribute)(&id.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d));
    in.devices.push_back(id);
  }
  uint64_t out[2] = {};
  CU_OK(check(13002, in.unix_seconds, out));
  const fg::integrity::Digest want = fg::integrity::answer(in);
  CHECK(std::memcmp(out, want.data(), 16) == 0);
  // The answer depends on the calling thread, as the runtime's own computation does.
  uint64_t other[2] = {};
  std::thread([&] { CHECK(check(13002, in.unix_seconds, other) == CUDA_SUCCESS); }).join();
  CHECK(std::memcmp(out, other, 16) != 0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, check(13002, in.unix_seconds, nullptr));
}

TEST_CASE("driver: the tools tables give context ids and a module's kernels", "[driver]") {
  Ctx c;
  unsigned long long id = 0, want = 0;
  CU_OK(slot<CUresult(CUcontext, unsigned long long*)>(table(kToolsContext), 4)(c.ctx, &id));
  CU_OK(CU(cuCtxGetId)(c.ctx, &want));
  CHECK(id == want);

  static const char kPtx[] =
      ".version 8.0\n.target sm_80\n.address_size 64\n"
      ".visible .entry first() { ret; }\n.visible .entry second() { ret; }\n";
  CUmodule m = nullptr;
  CU_OK(CU(cuModuleLoadData)(&m, kPtx));
  std::vector<std::string> seen;
  auto visit = [](void* user, CUfunction f, unsigned long long) {
    const char* name = nullptr;
    CU(cuFuncGetName)(&name, f);
    static_cast<std::vector<std::string>*>(user)->push_back(name ? name : "?");
  };
  auto each = slot<int(CUcontext, CUmodule, void (*)(void*, CUfunction, unsigned long long), void*)>(
      table(kToolsModule), 7);
  CHECK(each(c.ctx, m, visit, &seen) == 2);
  CHECK(seen == std::vector<std::string>{"first", "second"});
  CU_OK(CU(cuModuleUnload)(m));
}

TEST_CASE("driver: an export-table slot the fake does not serve answers CUDA_ERROR_NOT_SUPPORTED", "[driver]") {
  init();
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, slot<CUresult()>(table(kCudartInterface), 3)());
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, slot<CUresult()>(table(kToolsContext), 51)());
}
