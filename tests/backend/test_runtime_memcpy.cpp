// SPDX-License-Identifier: Apache-2.0
// Runtime copies and memsets: byte-exact in every direction and memory kind, the
// direction/range checks of the real runtime, 2D/3D, peer and symbol copies.
#include "runtime_api.h"

#include <cstring>
#include <numeric>
#include <vector>

using namespace rtt;

namespace {

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 31 + seed * 7 + (i >> 8)) & 0xFF);
  return v;
}

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t n) { REQUIRE(rt().cudaMalloc(&p, n) == cudaSuccess); }
  ~DevBuf() { rt().cudaFree(p); }
  char* c() const { return static_cast<char*>(p); }
};

}  // namespace

TEST_CASE_METHOD(Case, "cudaMemcpy is byte-exact in every direction", "[runtime]") {
  const size_t n = 3 * 4096 + 17;
  const auto src = pattern(n, 1);
  std::vector<unsigned char> out(n, 0);
  DevBuf a(n), b(n);

  REQUIRE(r.cudaMemcpy(a.p, src.data(), n, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(r.cudaMemcpy(b.p, a.p, n, cudaMemcpyDeviceToDevice) == cudaSuccess);
  REQUIRE(r.cudaMemcpy(out.data(), b.p, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == src);

  std::vector<unsigned char> h2(n, 0);
  REQUIRE(r.cudaMemcpy(h2.data(), src.data(), n, cudaMemcpyHostToHost) == cudaSuccess);
  CHECK(h2 == src);

  // cudaMemcpyDefault infers directions from the pointers (unified addressing).
  const auto src2 = pattern(n, 2);
  REQUIRE(r.cudaMemcpy(a.p, src2.data(), n, cudaMemcpyDefault) == cudaSuccess);
  REQUIRE(r.cudaMemcpy(b.p, a.p, n, cudaMemcpyDefault) == cudaSuccess);
  std::fill(out.begin(), out.end(), 0);
  REQUIRE(r.cudaMemcpy(out.data(), b.p, n, cudaMemcpyDefault) == cudaSuccess);
  CHECK(out == src2);

  // Per-thread default stream variant.
  std::fill(out.begin(), out.end(), 0);
  REQUIRE(r.cudaMemcpy_ptds(out.data(), a.p, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == src2);

  // Interior device pointers and size 0.
  REQUIRE(r.cudaMemcpy(out.data(), a.c() + 100, 50, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::memcmp(out.data(), src2.data() + 100, 50) == 0);
  CHECK(r.cudaMemcpy(nullptr, nullptr, 0, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(r.cudaGetLastError() == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaMemcpy rejects what the real runtime rejects", "[runtime]") {
  const size_t n = 4096;
  DevBuf d(n);
  std::vector<unsigned char> h(2 * n);
  // A kind naming host memory as the device side.
  CHECK(r.cudaMemcpy(h.data(), h.data() + n, n, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy(h.data(), h.data() + n, n, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy(d.p, h.data(), n, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy(h.data(), d.p, n, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
  // Unknown kinds.
  CHECK(r.cudaMemcpy(d.p, h.data(), n, static_cast<cudaMemcpyKind>(5)) == cudaErrorInvalidMemcpyDirection);
  CHECK(r.cudaMemcpy(d.p, h.data(), n, static_cast<cudaMemcpyKind>(-1)) == cudaErrorInvalidMemcpyDirection);
  // Past the end of the allocation.
  CHECK(r.cudaMemcpy(d.p, h.data(), n + 1, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy(h.data(), d.c() + 1, n, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  // Null pointers with a size.
  CHECK(r.cudaMemcpy(nullptr, h.data(), 16, cudaMemcpyHostToHost) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy(d.p, nullptr, 16, cudaMemcpyDefault) == cudaErrorInvalidValue);
  // Freed memory.
  void* gone = nullptr;
  REQUIRE(r.cudaMalloc(&gone, 64) == cudaSuccess);
  REQUIRE(r.cudaFree(gone) == cudaSuccess);
  CHECK(r.cudaMemcpy(gone, h.data(), 64, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  // Async twins check the same, and the stream.
  CHECK(r.cudaMemcpyAsync(h.data(), h.data() + n, n, cudaMemcpyHostToDevice, nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpyAsync(d.p, h.data(), n, static_cast<cudaMemcpyKind>(9), nullptr) ==
        cudaErrorInvalidMemcpyDirection);
  CHECK(r.cudaMemcpyAsync(d.p, h.data(), n, cudaMemcpyHostToDevice, reinterpret_cast<cudaStream_t>(0x4321)) ==
        cudaErrorInvalidResourceHandle);
}

TEST_CASE_METHOD(Case, "copies between pinned, managed, registered and device memory", "[runtime]") {
  const size_t n = 10000;
  const auto src = pattern(n, 3);
  void* pinned = nullptr;
  void* managed = nullptr;
  REQUIRE(r.cudaMallocHost(&pinned, n) == cudaSuccess);
  REQUIRE(r.cudaMallocManaged(&managed, n, cudaMemAttachGlobal) == cudaSuccess);
  std::vector<unsigned char> reg(n);
  REQUIRE(r.cudaHostRegister(reg.data(), n, 0) == cudaSuccess);
  DevBuf d(n);
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);

  std::memcpy(pinned, src.data(), n);
  REQUIRE(r.cudaMemcpyAsync(d.p, pinned, n, cudaMemcpyHostToDevice, s) == cudaSuccess);
  REQUIRE(r.cudaMemcpyAsync(managed, d.p, n, cudaMemcpyDeviceToDevice, s) == cudaSuccess);  // managed as device
  REQUIRE(r.cudaMemcpyAsync(reg.data(), managed, n, cudaMemcpyDefault, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(std::memcmp(managed, src.data(), n) == 0);
  CHECK(std::memcmp(reg.data(), src.data(), n) == 0);
  // Pinned/registered memory may stand on the device side of a kind (it is mapped).
  std::memset(pinned, 0, n);
  REQUIRE(r.cudaMemcpy(pinned, reg.data(), n, cudaMemcpyDeviceToDevice) == cudaSuccess);
  CHECK(std::memcmp(pinned, src.data(), n) == 0);
  REQUIRE(r.cudaMemcpyAsync_ptsz(reg.data(), d.p, n, cudaMemcpyDeviceToHost, nullptr) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize_ptsz(nullptr) == cudaSuccess);

  CHECK(r.cudaStreamDestroy(s) == cudaSuccess);
  CHECK(r.cudaHostUnregister(reg.data()) == cudaSuccess);
  CHECK(r.cudaFree(managed) == cudaSuccess);
  CHECK(r.cudaFreeHost(pinned) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaMemset and its 2D/3D forms", "[runtime]") {
  const size_t n = 5000;
  DevBuf d(n);
  std::vector<unsigned char> out(n);
  REQUIRE(r.cudaMemset(d.p, 0xAB, n) == cudaSuccess);
  REQUIRE(r.cudaMemset(d.c() + 10, 0x1CD, 20) == cudaSuccess);  // only the low byte counts
  REQUIRE(r.cudaMemcpy(out.data(), d.p, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char want = (i >= 10 && i < 30) ? 0xCD : 0xAB;
    if (out[i] != want) FAIL("byte " << i << " is " << int(out[i]));
  }
  REQUIRE(r.cudaMemsetAsync(d.p, 0, n, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(r.cudaMemcpy(out.data(), d.p, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == 0; }));

  std::vector<unsigned char> host(64);
  CHECK(r.cudaMemset(host.data(), 0, 64) == cudaErrorInvalidValue);  // not device memory
  CHECK(r.cudaMemset(d.p, 0, n + 1) == cudaErrorInvalidValue);
  CHECK(r.cudaMemset(nullptr, 0, 1) == cudaErrorInvalidValue);
  CHECK(r.cudaMemset(nullptr, 0, 0) == cudaSuccess);

  // 2D: pitch 512, 100 bytes wide, 4 rows.
  void* p2 = nullptr;
  size_t pitch = 0;
  REQUIRE(r.cudaMallocPitch(&p2, &pitch, 100, 4) == cudaSuccess);
  REQUIRE(r.cudaMemset(p2, 0, pitch * 4) == cudaSuccess);
  REQUIRE(r.cudaMemset2D(p2, pitch, 0x77, 100, 4) == cudaSuccess);
  std::vector<unsigned char> rows(pitch * 4);
  REQUIRE(r.cudaMemcpy(rows.data(), p2, rows.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (size_t y = 0; y < 4; ++y)
    for (size_t x = 0; x < pitch; ++x)
      if (rows[y * pitch + x] != (x < 100 ? 0x77 : 0)) FAIL("2D byte " << y << "," << x);
  CHECK(r.cudaMemset2D(p2, pitch, 0, pitch + 1, 1) == cudaErrorInvalidValue);  // width > pitch
  CHECK(r.cudaMemset2D(p2, pitch, 0, 100, 5) == cudaErrorInvalidValue);        // past the end

  // 3D: 2 slices of 2 rows.
  cudaPitchedPtr pp{p2, pitch, 100, 2};
  REQUIRE(r.cudaMemset3D(pp, 0x11, cudaExtent{50, 2, 2}) == cudaSuccess);
  REQUIRE(r.cudaMemcpy(rows.data(), p2, rows.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (size_t y = 0; y < 4; ++y)
    for (size_t x = 0; x < 100; ++x)
      if (rows[y * pitch + x] != (x < 50 ? 0x11 : 0x77)) FAIL("3D byte " << y << "," << x);
  CHECK(r.cudaFree(p2) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaMemcpy2D and cudaMemcpy3D on linear memory", "[runtime]") {
  const size_t w = 100, h = 6, hpitch = 128;
  const auto src = pattern(hpitch * h, 4);
  void* d = nullptr;
  size_t pitch = 0;
  REQUIRE(r.cudaMallocPitch(&d, &pitch, w, h) == cudaSuccess);
  REQUIRE(r.cudaMemcpy2D(d, pitch, src.data(), hpitch, w, h, cudaMemcpyHostToDevice) == cudaSuccess);
  std::vector<unsigned char> out(w * h, 0);
  REQUIRE(r.cudaMemcpy2D(out.data(), w, d, pitch, w, h, cudaMemcpyDeviceToHost) == cudaSuccess);
  for (size_t y = 0; y < h; ++y) CHECK(std::memcmp(out.data() + y * w, src.data() + y * hpitch, w) == 0);
  std::fill(out.begin(), out.end(), 0);
  REQUIRE(r.cudaMemcpy2DAsync(out.data(), w, d, pitch, w, h, cudaMemcpyDefault, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  for (size_t y = 0; y < h; ++y) CHECK(std::memcmp(out.data() + y * w, src.data() + y * hpitch, w) == 0);

  CHECK(r.cudaMemcpy2D(d, pitch, src.data(), 64, w, h, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
  CHECK(r.cudaMemcpy2D(d, 64, src.data(), hpitch, w, h, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
  CHECK(r.cudaMemcpy2D(d, pitch, src.data(), hpitch, w, h + 1, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy2D(out.data(), w, src.data(), hpitch, w, h, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);

  // 3D: copy a 40x2x3 box out of the pitched allocation seen as 3 slices of 2 rows.
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{d, pitch, w, 2};
  p.srcPos = cudaPos{10, 0, 0};
  std::vector<unsigned char> box(40 * 2 * 3, 0);
  p.dstPtr = cudaPitchedPtr{box.data(), 40, 40, 2};
  p.extent = cudaExtent{40, 2, 3};
  p.kind = cudaMemcpyDeviceToHost;
  REQUIRE(r.cudaMemcpy3D(&p) == cudaSuccess);
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 2; ++y)
      CHECK(std::memcmp(box.data() + (z * 2 + y) * 40, src.data() + (z * 2 + y) * hpitch + 10, 40) == 0);
  p.extent.width = pitch + 1;
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidPitchValue);
  p.extent = cudaExtent{40, 2, 4};  // one slice too many
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  p.extent = cudaExtent{40, 2, 3};
  p.srcArray = reinterpret_cast<cudaArray_t>(0x10);  // CUDA arrays do not exist here
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  CHECK(r.cudaMemcpy3D(nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaFree(d) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "2D and 3D spans that wrap around the address space are refused, nothing written", "[runtime]") {
  // A 4 KiB allocation with a canary in its last 64 bytes; every call below would write far
  // outside it if its span wrapped to a small number.
  DevBuf d(4096);
  const std::vector<unsigned char> canary(64, 0xA5);
  REQUIRE(r.cudaMemcpy(d.c() + 4032, canary.data(), 64, cudaMemcpyHostToDevice) == cudaSuccess);
  std::vector<unsigned char> host(4096, 1);
  const size_t huge = SIZE_MAX / 2 + 1;  // huge * 2 == 0 in size_t

  CHECK(r.cudaMemcpy2D(d.p, huge, host.data(), 64, 64, 3, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(r.cudaMemset2D(d.p, huge, 0, 64, 3) == cudaErrorInvalidValue);
  CHECK(r.cudaMemset(d.c() + 16, 0, SIZE_MAX) == cudaErrorInvalidValue);
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{host.data(), 64, 64, 1};
  p.dstPtr = cudaPitchedPtr{d.p, 64, 64, 1};
  p.dstPos = cudaPos{0, 0, huge};  // the destination's first byte wraps around
  p.extent = cudaExtent{64, 1, 1};
  p.kind = cudaMemcpyHostToDevice;
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  p.dstPos = cudaPos{};
  p.dstPtr.ysize = huge;  // a slice of huge rows: the slice size wraps
  p.extent = cudaExtent{64, 1, 3};
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  CHECK(r.cudaMemset3D(cudaPitchedPtr{d.p, 64, 64, huge}, 0, cudaExtent{64, 1, 3}) == cudaErrorInvalidValue);

  std::vector<unsigned char> back(64, 0);
  REQUIRE(r.cudaMemcpy(back.data(), d.c() + 4032, 64, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == canary);
}

TEST_CASE_METHOD(Case, "peer copies", "[runtime]") {
  const int n = device_count();
  const size_t bytes = 4096;
  const auto src = pattern(bytes, 5);
  const int other = n > 1 ? 1 : 0;
  DevBuf a(bytes);
  REQUIRE(r.cudaSetDevice(other) == cudaSuccess);
  void* b = nullptr;
  REQUIRE(r.cudaMalloc(&b, bytes) == cudaSuccess);
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  REQUIRE(r.cudaMemcpy(a.p, src.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(r.cudaMemcpyPeer(b, other, a.p, 0, bytes) == cudaSuccess);
  std::vector<unsigned char> out(bytes);
  REQUIRE(r.cudaMemcpy(out.data(), b, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == src);
  REQUIRE(r.cudaMemset(a.p, 0, bytes) == cudaSuccess);
  REQUIRE(r.cudaMemcpyPeerAsync(a.p, 0, b, other, bytes, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(r.cudaMemcpy(out.data(), a.p, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == src);
  CHECK(r.cudaMemcpyPeer(b, n, a.p, 0, bytes) == cudaErrorInvalidDevice);
  CHECK(r.cudaMemcpyPeer(out.data(), 0, a.p, 0, bytes) == cudaErrorInvalidValue);  // host memory
  CHECK(r.cudaFree(b) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "symbol copies through registered variables", "[runtime]") {
  static int shadow[16];  // the host shadow nvcc would emit for `__device__ int table[16]`
  static float shadow_const[4] = {1, 2, 3, 4};
  static char fatbin[16];
  void** h = r.__cudaRegisterFatBinary(fatbin);
  REQUIRE(h);
  char name1[] = "table", name2[] = "coef";
  r.__cudaRegisterVar(h, reinterpret_cast<char*>(shadow), name1, name1, 0, sizeof shadow, 0, 0);
  r.__cudaRegisterVar(h, reinterpret_cast<char*>(shadow_const), name2, name2, 0, sizeof shadow_const, 1, 0);
  r.__cudaRegisterFatBinaryEnd(h);

  int in[16];
  std::iota(in, in + 16, 100);
  REQUIRE(r.cudaMemcpyToSymbol(shadow, in, sizeof in, 0, cudaMemcpyHostToDevice) == cudaSuccess);
  int out[16] = {};
  REQUIRE(r.cudaMemcpyFromSymbol(out, shadow, sizeof out, 0, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::memcmp(in, out, sizeof in) == 0);
  CHECK(shadow[0] == 0);  // the device copy is separate from the host shadow

  // Offsets, async forms, device-to-device.
  int four[4] = {7, 8, 9, 10};
  REQUIRE(r.cudaMemcpyToSymbolAsync(shadow, four, sizeof four, 8 * sizeof(int), cudaMemcpyHostToDevice, nullptr) ==
          cudaSuccess);
  REQUIRE(r.cudaMemcpyFromSymbolAsync(out, shadow, sizeof out, 0, cudaMemcpyDefault, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  CHECK(out[7] == 107);
  CHECK(out[8] == 7);
  CHECK(out[11] == 10);
  CHECK(out[12] == 112);
  DevBuf d(64);
  REQUIRE(r.cudaMemcpyFromSymbol(d.p, shadow, 64, 0, cudaMemcpyDeviceToDevice) == cudaSuccess);
  REQUIRE(r.cudaMemcpy(out, d.p, 64, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out[8] == 7);

  // __constant__ storage starts from the host shadow's initial value.
  float c[4] = {};
  REQUIRE(r.cudaMemcpyFromSymbol(c, shadow_const, sizeof c, 0, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(c[3] == 4.0f);

  void* addr = nullptr;
  size_t size = 0;
  REQUIRE(r.cudaGetSymbolAddress(&addr, shadow) == cudaSuccess);
  REQUIRE(r.cudaGetSymbolSize(&size, shadow) == cudaSuccess);
  CHECK(size == sizeof shadow);
  REQUIRE(r.cudaMemcpy(out, addr, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);  // a device address
  CHECK(out[8] == 7);

  int not_a_symbol = 0;
  CHECK(r.cudaMemcpyToSymbol(&not_a_symbol, in, 4, 0, cudaMemcpyHostToDevice) == cudaErrorInvalidSymbol);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidSymbol);
  CHECK(r.cudaGetSymbolAddress(&addr, &not_a_symbol) == cudaErrorInvalidSymbol);
  CHECK(r.cudaGetSymbolSize(&size, nullptr) == cudaErrorInvalidSymbol);
  CHECK(r.cudaMemcpyToSymbol(shadow, in, sizeof in, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);  // overrun
  CHECK(r.cudaMemcpyToSymbol(shadow, in, 4, 0, cudaMemcpyDeviceToHost) == cudaErrorInvalidMemcpyDirection);
  CHECK(r.cudaMemcpyFromSymbol(out, shadow, 4, 0, cudaMemcpyHostToDevice) == cudaErrorInvalidMemcpyDirection);
  CHECK(r.cudaMemcpyToSymbol(shadow, in, 4, 0, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);  // host source

  r.__cudaUnregisterFatBinary(h);
  CHECK(r.cudaMemcpyToSymbol(shadow, in, 4, 0, cudaMemcpyHostToDevice) == cudaErrorInvalidSymbol);
}
