// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: copies and memsets, byte-exact, in every direction and memory kind,
// synchronous, stream-ordered and per-thread-stream.
#include "backend/driver_test.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <vector>

using namespace drvtest;

namespace {

std::vector<unsigned char> random_bytes(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  std::mt19937 rng(seed);
  for (auto& c : v) c = static_cast<unsigned char>(rng());
  return v;
}

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

TEST_CASE("driver: HtoD, DtoD, DtoH are byte-exact", "[driver]") {
  Ctx ctx(0);
  constexpr size_t kN = (1 << 20) + 13;
  const auto src = random_bytes(kN, 1);
  CUdeviceptr a = 0, b = 0;
  CU_OK(CU(cuMemAlloc_v2)(&a, kN));
  CU_OK(CU(cuMemAlloc_v2)(&b, kN + 100));
  CU_OK(CU(cuMemcpyHtoD_v2)(a, src.data(), kN));
  CU_OK(CU(cuMemcpyDtoD_v2)(b + 100, a, kN));
  std::vector<unsigned char> out(kN, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), b + 100, kN));
  CHECK(out == src);
  // Partial and unaligned.
  std::vector<unsigned char> part(777, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(part.data(), a + 12345, part.size()));
  CHECK(std::equal(part.begin(), part.end(), src.begin() + 12345));
  // Zero bytes: nothing to do, even with odd pointers.
  CU_OK(CU(cuMemcpyHtoD_v2)(a, nullptr, 0));
  CU_OK(CU(cuMemcpyDtoH_v2)(nullptr, a, 0));

  // Every host-side kind: pageable, pinned, registered, managed.
  void* pinned = nullptr;
  CU_OK(CU(cuMemAllocHost_v2)(&pinned, kN));
  CUdeviceptr managed = 0;
  CU_OK(CU(cuMemAllocManaged)(&managed, kN, CU_MEM_ATTACH_GLOBAL));
  std::vector<unsigned char> reg(kN, 0);
  CU_OK(CU(cuMemHostRegister_v2)(reg.data(), kN, 0));
  CU_OK(CU(cuMemcpyDtoH_v2)(pinned, a, kN));
  CHECK(std::memcmp(pinned, src.data(), kN) == 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(reinterpret_cast<void*>(managed), a, kN));
  CHECK(std::memcmp(reinterpret_cast<void*>(managed), src.data(), kN) == 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(reg.data(), a, kN));
  CHECK(reg == src);
  // ...and as device-side pointers (unified addressing).
  CU_OK(CU(cuMemsetD8_v2)(b, 0, kN));
  CU_OK(CU(cuMemcpyDtoD_v2)(b, dptr(pinned), kN));
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), b, kN));
  CHECK(out == src);
  CU_OK(CU(cuMemcpyHtoD_v2)(managed, src.data() + 1, kN - 1));
  CHECK(std::memcmp(reinterpret_cast<void*>(managed), src.data() + 1, kN - 1) == 0);
  CU_OK(CU(cuMemHostUnregister)(reg.data()));
  CU_OK(CU(cuMemFree_v2)(managed));
  CU_OK(CU(cuMemFreeHost)(pinned));
  CU_OK(CU(cuMemFree_v2)(a));
  CU_OK(CU(cuMemFree_v2)(b));
}

TEST_CASE("driver: copy arguments are checked", "[driver]") {
  clear_stack();
  unsigned char host[256] = {};
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemcpyHtoD_v2)(1, host, 1));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemcpy)(dptr(host), dptr(host + 1), 1));
  Ctx ctx(0);
  CUdeviceptr a = 0;
  CU_OK(CU(cuMemAlloc_v2)(&a, 256));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(dptr(host), host + 128, 64));  // dst is not device memory
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoH_v2)(host, dptr(host + 128), 64));  // src is not device memory
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoD_v2)(a, dptr(host), 64));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(a + 200, host, 100));  // runs past the allocation
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoH_v2)(host, a + 1, 256));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(a, nullptr, 16));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoH_v2)(nullptr, a, 16));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(0, host, 16));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy)(a, a + 128, 256));
  CU_OK(CU(cuMemFree_v2)(a));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(a, host, 16));  // freed
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemcpyHtoDAsync_v2)(a, host, 16, reinterpret_cast<CUstream>(host)));
}

TEST_CASE("driver: cuMemcpy infers both sides", "[driver]") {
  Ctx ctx(0);
  const auto src = random_bytes(4096, 2);
  std::vector<unsigned char> h1(src), h2(4096, 0);
  CU_OK(CU(cuMemcpy)(dptr(h2.data()), dptr(h1.data()), 4096));  // host to host
  CHECK(h2 == src);
  CUdeviceptr d = 0, m = 0;
  void* pinned = nullptr;
  CU_OK(CU(cuMemAlloc_v2)(&d, 4096));
  CU_OK(CU(cuMemAllocManaged)(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  CU_OK(CU(cuMemAllocHost_v2)(&pinned, 4096));
  CU_OK(CU(cuMemcpy)(d, dptr(src.data()), 4096));
  CU_OK(CU(cuMemcpy)(m, d, 4096));
  CU_OK(CU(cuMemcpy)(dptr(pinned), m, 4096));
  CHECK(std::memcmp(pinned, src.data(), 4096) == 0);
  std::fill(h2.begin(), h2.end(), 0);
  CU_OK(CU(cuMemcpy_ptds)(dptr(h2.data()), dptr(pinned), 4096));
  CHECK(h2 == src);
  CU_OK(CU(cuMemcpyAsync)(dptr(h2.data()), d, 4096, nullptr));
  CU_OK(CU(cuMemcpyAsync_ptsz)(dptr(h2.data()), d, 4096, nullptr));
  CU_OK(CU(cuStreamSynchronize)(nullptr));
  CHECK(h2 == src);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy)(d + 1, m, 4096));
  CU_OK(CU(cuMemFreeHost)(pinned));
  CU_OK(CU(cuMemFree_v2)(m));
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: stream-ordered copies wait for earlier work", "[driver]") {
  Ctx ctx(0);
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
  const auto src = random_bytes(65536, 3);
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, src.size()));
  CU_OK(CU(cuMemcpyHtoD_v2)(d, src.data(), src.size()));
  std::vector<unsigned char> out(src.size(), 0);
  Gate gate;
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate));
  CU_OK(CU(cuMemcpyDtoHAsync_v2)(out.data(), d, out.size(), s));
  CU_OK(CU(cuMemsetD32Async)(d, 0xDEADBEEF, src.size() / 4, s));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery)(s));
  CHECK(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == 0; }));  // not yet
  gate.open = true;
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_OK(CU(cuStreamQuery)(s));
  CHECK(out == src);
  std::vector<uint32_t> words(src.size() / 4);
  CU_OK(CU(cuMemcpyDtoH_v2)(words.data(), d, src.size()));
  CHECK(std::all_of(words.begin(), words.end(), [](uint32_t w) { return w == 0xDEADBEEF; }));
  // Arguments are checked before anything is queued.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoHAsync_v2)(out.data(), d + 1, src.size(), s));
  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemcpyDtoHAsync_v2)(out.data(), d, 16, s));
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: a synchronous copy waits for blocking streams", "[driver][threads]") {
  Ctx ctx(0);
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_DEFAULT));
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, 64));
  Gate gate;
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate));
  CU_OK(CU(cuMemsetD8Async)(d, 0x42, 64, s));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.open = true;
  });
  unsigned char out[64] = {};
  CU_OK(CU(cuMemcpyDtoH_v2)(out, d, 64));  // returns after the queued memset
  CHECK(gate.ran.load());
  CHECK(std::all_of(out, out + 64, [](unsigned char c) { return c == 0x42; }));
  opener.join();
  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: per-thread default stream twins", "[driver]") {
  Ctx ctx(0);
  const CUdeviceptr d = alloc_filled(4096, 0x33);
  Gate gate;
  CU_OK(CU(cuLaunchHostFunc_ptsz)(nullptr, &Gate::wait, &gate));  // blocks this thread's stream
  unsigned char out[4096] = {};
  CU_OK(CU(cuMemcpyDtoHAsync_v2_ptsz)(out, d, sizeof out, nullptr));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery_ptsz)(nullptr));
  CU_OK(CU(cuStreamQuery)(nullptr));  // the legacy default stream is another stream
  CHECK(out[0] == 0);
  gate.open = true;
  CU_OK(CU(cuStreamSynchronize)(CU_STREAM_PER_THREAD));
  CHECK(std::all_of(out, out + sizeof out, [](unsigned char c) { return c == 0x33; }));
  const auto src = random_bytes(4096, 4);
  CU_OK(CU(cuMemcpyHtoD_v2_ptds)(d, src.data(), src.size()));
  CU_OK(CU(cuMemcpyDtoH_v2)(out, d, sizeof out));
  CHECK(std::memcmp(out, src.data(), sizeof out) == 0);
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: 2D copies", "[driver]") {
  Ctx ctx(0);
  constexpr size_t kW = 100, kH = 13, kHostPitch = 128;
  auto host = random_bytes(kHostPitch * kH, 5);
  CUdeviceptr d = 0;
  size_t pitch = 0;
  CU_OK(CU(cuMemAllocPitch_v2)(&d, &pitch, kW + 8, kH + 2, 4));
  REQUIRE(pitch == 512);
  CU_OK(CU(cuMemsetD8_v2)(d, 0xEE, pitch * (kH + 2)));

  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = kHostPitch;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = pitch;
  c.dstXInBytes = 4;
  c.dstY = 2;
  c.WidthInBytes = kW;
  c.Height = kH;
  CU_OK(CU(cuMemcpy2D_v2)(&c));
  std::vector<unsigned char> whole(pitch * (kH + 2));
  CU_OK(CU(cuMemcpyDtoH_v2)(whole.data(), d, whole.size()));
  for (size_t y = 0; y < kH + 2; ++y)
    for (size_t x = 0; x < pitch; ++x) {
      const bool inside = y >= 2 && x >= 4 && x < 4 + kW;
      const unsigned char want = inside ? host[(y - 2) * kHostPitch + (x - 4)] : 0xEE;
      if (whole[y * pitch + x] != want) {
        INFO("x " << x << " y " << y);
        CHECK(whole[y * pitch + x] == want);
      }
    }
  // Back again, through the other 2D entry points, into a tight host buffer.
  std::vector<unsigned char> back(kW * kH, 0);
  CUDA_MEMCPY2D r{};
  r.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  r.srcDevice = d;
  r.srcPitch = pitch;
  r.srcXInBytes = 4;
  r.srcY = 2;
  r.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  r.dstDevice = dptr(back.data());
  r.dstPitch = kW;
  r.WidthInBytes = kW;
  r.Height = kH;
  CU_OK(CU(cuMemcpy2DUnaligned_v2)(&r));
  for (size_t y = 0; y < kH; ++y) CHECK(std::memcmp(&back[y * kW], &host[y * kHostPitch], kW) == 0);
  std::fill(back.begin(), back.end(), 0);
  CU_OK(CU(cuMemcpy2DAsync_v2)(&r, nullptr));
  CU_OK(CU(cuStreamSynchronize)(nullptr));
  for (size_t y = 0; y < kH; ++y) CHECK(std::memcmp(&back[y * kW], &host[y * kHostPitch], kW) == 0);

  // Errors.
  CUDA_MEMCPY2D bad = c;
  bad.dstPitch = kW - 1;  // pitch below the width
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&bad));
  bad = c;
  bad.dstY = kH + 2;  // runs past the allocation
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&bad));
  bad = c;
  bad.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  bad.dstArray = reinterpret_cast<CUarray>(&bad);  // no array's handle
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemcpy2D_v2)(&bad));
  bad = c;
  bad.dstMemoryType = static_cast<CUmemorytype>(9);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&bad));
  bad = c;
  bad.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  bad.dstDevice = dptr(host.data());  // host memory named as device memory
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&bad));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(nullptr));
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: 3D copies between host and device", "[driver]") {
  Ctx ctx(0);
  constexpr size_t kW = 16, kH = 4, kD = 3;
  auto host = random_bytes(kW * kH * kD, 6);
  const CUdeviceptr d = alloc_filled(32 * 5 * kD, 0);
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = kW;
  c.srcHeight = kH;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = 32;
  c.dstHeight = 5;
  c.WidthInBytes = kW;
  c.Height = kH;
  c.Depth = kD;
  CU_OK(CU(cuMemcpy3D_v2)(&c));
  std::vector<unsigned char> dev(32 * 5 * kD);
  CU_OK(CU(cuMemcpyDtoH_v2)(dev.data(), d, dev.size()));
  for (size_t z = 0; z < kD; ++z)
    for (size_t y = 0; y < 5; ++y)
      for (size_t x = 0; x < 32; ++x) {
        const bool inside = y < kH && x < kW;
        const unsigned char want = inside ? host[(z * kH + y) * kW + x] : 0;
        if (dev[(z * 5 + y) * 32 + x] != want) CHECK(dev[(z * 5 + y) * 32 + x] == want);
      }
  c.reserved0 = &c;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy3D_v2)(&c));
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: peer copies", "[driver]") {
  int n = 0;
  init();
  CU_OK(CU(cuDeviceGetCount)(&n));
  const CUdevice other = n > 1 ? 1 : 0;
  CUcontext b = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&b, 0, other));
  CUdeviceptr pb = 0;
  CU_OK(CU(cuMemAlloc_v2)(&pb, 8192));
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));
  Ctx a(0);
  CUdeviceptr pa = 0;
  CU_OK(CU(cuMemAlloc_v2)(&pa, 8192));
  const auto src = random_bytes(8192, 7);
  CU_OK(CU(cuMemcpyHtoD_v2)(pa, src.data(), src.size()));
  CU_OK(CU(cuMemcpyPeer)(pb, b, pa, a.ctx, 8192));
  std::vector<unsigned char> out(8192);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), pb, out.size()));
  CHECK(out == src);
  CU_OK(CU(cuMemsetD8_v2)(pa, 0, 8192));
  CU_OK(CU(cuMemcpyPeerAsync)(pa, a.ctx, pb, b, 8192, nullptr));
  CU_OK(CU(cuCtxSynchronize)());
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), pa, out.size()));
  CHECK(out == src);
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemcpyPeer)(pb, nullptr, pa, a.ctx, 16));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemcpyPeer)(pb, b, pa, reinterpret_cast<CUcontext>(&out), 16));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyPeer)(pb + 8000, b, pa, a.ctx, 1000));
  CU_OK(CU(cuMemFree_v2)(pa));
  CU_OK(CU(cuCtxDestroy_v2)(b));  // frees pb
}

TEST_CASE("driver: memsets D8 D16 D32, 1D and 2D, sync and async", "[driver]") {
  Ctx ctx(0);
  constexpr size_t kN = 4096;
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, kN));
  std::vector<unsigned char> out(kN);
  CU_OK(CU(cuMemsetD8_v2)(d, 0xA5, kN));
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), d, kN));
  CHECK(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == 0xA5; }));

  CU_OK(CU(cuMemsetD16_v2)(d + 2, 0xBEEF, 10));
  std::vector<uint16_t> h16(kN / 2);
  CU_OK(CU(cuMemcpyDtoH_v2)(h16.data(), d, kN));
  CHECK(h16[0] == 0xA5A5);
  for (int i = 1; i <= 10; ++i) CHECK(h16[i] == 0xBEEF);
  CHECK(h16[11] == 0xA5A5);

  CU_OK(CU(cuMemsetD32_v2)(d, 0x01020304, kN / 4));
  std::vector<uint32_t> h32(kN / 4);
  CU_OK(CU(cuMemcpyDtoH_v2)(h32.data(), d, kN));
  CHECK(std::all_of(h32.begin(), h32.end(), [](uint32_t w) { return w == 0x01020304; }));

  CU_OK(CU(cuMemsetD8Async)(d, 1, 100, nullptr));
  CU_OK(CU(cuMemsetD16Async)(d + 100, 0x0202, 50, nullptr));
  CU_OK(CU(cuMemsetD32Async)(d + 200, 0x03030303, 25, nullptr));
  CU_OK(CU(cuStreamSynchronize)(nullptr));
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), d, 304));
  for (int i = 0; i < 300; ++i) CHECK(out[i] == (i < 100 ? 1 : i < 200 ? 2 : 3));
  CHECK(out[300] == 0x04);  // untouched (little-endian 0x01020304)

  // 2D: rows of `width` elements at `pitch`; the rest of each row untouched.
  CU_OK(CU(cuMemsetD8_v2)(d, 0, kN));
  CU_OK(CU(cuMemsetD2D32_v2)(d + 64, 256, 0xCAFEBABE, 8, 4));
  CU_OK(CU(cuMemcpyDtoH_v2)(h32.data(), d, kN));
  for (size_t i = 0; i < kN / 4; ++i) {
    const size_t byte = i * 4;
    const bool inside = byte >= 64 && (byte - 64) / 256 < 4 && (byte - 64) % 256 < 32;
    if (h32[i] != (inside ? 0xCAFEBABE : 0u)) CHECK(h32[i] == (inside ? 0xCAFEBABE : 0u));
  }
  CU_OK(CU(cuMemsetD2D8_v2)(d, 100, 0x7F, 3, 2));
  CU_OK(CU(cuMemsetD2D16_v2)(d + 1000, 100, 0x1234, 2, 2));
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), d, kN));
  CHECK(out[0] == 0x7F);
  CHECK(out[2] == 0x7F);
  CHECK(out[3] == 0);
  CHECK(out[100] == 0x7F);
  CHECK(out[103] == 0);
  CHECK(out[1000] == 0x34);
  CHECK(out[1001] == 0x12);
  CHECK(out[1100] == 0x34);
  CHECK(out[1104] == 0);
  CU_OK(CU(cuMemsetD2D32Async)(d, 16, 0x11111111, 4, 3, nullptr));
  CU_OK(CU(cuCtxSynchronize)());
  CU_OK(CU(cuMemcpyDtoH_v2)(h32.data(), d, 48));
  CHECK(std::all_of(h32.begin(), h32.begin() + 12, [](uint32_t w) { return w == 0x11111111; }));

  // Errors.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD16_v2)(d + 1, 0, 4));     // misaligned
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD32_v2)(d + 2, 0, 4));     // misaligned
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD8_v2)(d + 4000, 0, 97));  // past the end
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD32_v2)(d, 0, kN / 4 + 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD2D8_v2)(d, 10, 0, 11, 2));    // width beyond pitch
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD2D8_v2)(d, 1024, 0, 16, 5));  // past the end
  unsigned char host[64];
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD8_v2)(dptr(host), 0, 64));  // not device memory
  CU_OK(CU(cuMemsetD8_v2)(d, 0, 0));                                      // nothing to do
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemsetD8Async)(d, 0, 4, reinterpret_cast<CUstream>(host)));
  CU_OK(CU(cuMemFree_v2)(d));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD8_v2)(d, 0, 4));
}
