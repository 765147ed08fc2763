// SPDX-License-Identifier: Apache-2.0
// Runtime CUDA arrays: cudaMallocArray / cudaMalloc3DArray / cudaFreeArray /
// cudaArrayGetInfo / cudaGetChannelDesc, the channel-descriptor rules, and the copies that name
// arrays (cudaMemcpy2DToArray/FromArray, cudaMemcpyToArray/FromArray, the array-to-array
// forms, cudaMemcpy3D), byte-exact against a host model of the row-major layout.
#include "runtime_api.h"

#include <cstring>
#include <vector>

using namespace rtt;

namespace {

// The entry points this file needs beyond Runtime's, bound the same way.
struct ArrayApi {
  cudaError_t (*cudaMallocArray)(cudaArray_t*, const cudaChannelFormatDesc*, size_t, size_t, unsigned);
  cudaError_t (*cudaMalloc3DArray)(cudaArray_t*, const cudaChannelFormatDesc*, cudaExtent, unsigned);
  cudaError_t (*cudaFreeArray)(cudaArray_t);
  cudaError_t (*cudaArrayGetInfo)(cudaChannelFormatDesc*, cudaExtent*, unsigned*, cudaArray_t);
  cudaError_t (*cudaGetChannelDesc)(cudaChannelFormatDesc*, cudaArray_const_t);
  cudaError_t (*cudaMemcpy2DToArray)(cudaArray_t, size_t, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpy2DFromArray)(void*, size_t, cudaArray_const_t, size_t, size_t, size_t, size_t,
                                       cudaMemcpyKind);
  cudaError_t (*cudaMemcpy2DToArrayAsync)(cudaArray_t, size_t, size_t, const void*, size_t, size_t, size_t,
                                          cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaMemcpyToArray)(cudaArray_t, size_t, size_t, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpyFromArray)(void*, cudaArray_const_t, size_t, size_t, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpyArrayToArray)(cudaArray_t, size_t, size_t, cudaArray_const_t, size_t, size_t, size_t,
                                        cudaMemcpyKind);
  cudaError_t (*cudaMemcpy2DArrayToArray)(cudaArray_t, size_t, size_t, cudaArray_const_t, size_t, size_t, size_t,
                                          size_t, cudaMemcpyKind);

  template <class F>
  static void bind(F& fp, const char* name) {
    fp = reinterpret_cast<F>(dlvsym(rt().handle, name, "libcudart.so.13"));
    if (!fp) throw std::runtime_error(std::string("missing export ") + name);
  }
  ArrayApi() {
    bind(cudaMallocArray, "cudaMallocArray");
    bind(cudaMalloc3DArray, "cudaMalloc3DArray");
    bind(cudaFreeArray, "cudaFreeArray");
    bind(cudaArrayGetInfo, "cudaArrayGetInfo");
    bind(cudaGetChannelDesc, "cudaGetChannelDesc");
    bind(cudaMemcpy2DToArray, "cudaMemcpy2DToArray");
    bind(cudaMemcpy2DFromArray, "cudaMemcpy2DFromArray");
    bind(cudaMemcpy2DToArrayAsync, "cudaMemcpy2DToArrayAsync");
    bind(cudaMemcpyToArray, "cudaMemcpyToArray");
    bind(cudaMemcpyFromArray, "cudaMemcpyFromArray");
    bind(cudaMemcpyArrayToArray, "cudaMemcpyArrayToArray");
    bind(cudaMemcpy2DArrayToArray, "cudaMemcpy2DArrayToArray");
  }
};
ArrayApi& api() {
  static auto* a = new ArrayApi;
  return *a;
}

cudaChannelFormatDesc channels(int x, int y, int z, int w, cudaChannelFormatKind f) { return {x, y, z, w, f}; }

std::vector<unsigned char> bytes(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 11 + seed * 5 + (i >> 6));
  return v;
}

size_t free_memory() {
  size_t f = 0, t = 0;
  REQUIRE(rt().cudaMemGetInfo(&f, &t) == cudaSuccess);
  return f;
}

}  // namespace

TEST_CASE_METHOD(Case, "cudaMallocArray and cudaMalloc3DArray describe their arrays", "[runtime][arrays]") {
  ArrayApi& a = api();
  const size_t before = free_memory();
  cudaArray_t x = nullptr, y = nullptr, z = nullptr;
  const auto f1 = channels(32, 0, 0, 0, cudaChannelFormatKindFloat);
  const auto u4 = channels(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
  const auto s2 = channels(16, 16, 0, 0, cudaChannelFormatKindSigned);
  REQUIRE(a.cudaMallocArray(&x, &f1, 100, 0, 0) == cudaSuccess);
  REQUIRE(a.cudaMallocArray(&y, &u4, 64, 32, cudaArraySurfaceLoadStore) == cudaSuccess);
  REQUIRE(a.cudaMalloc3DArray(&z, &s2, cudaExtent{5, 4, 3}, 0) == cudaSuccess);
  CHECK(before - free_memory() == 100 * 4 + 64 * 32 * 4 + 5 * 4 * 3 * 4);

  cudaChannelFormatDesc d{};
  cudaExtent e{};
  unsigned flags = 99;
  REQUIRE(a.cudaArrayGetInfo(&d, &e, &flags, y) == cudaSuccess);
  CHECK((d.x == 8 && d.y == 8 && d.z == 8 && d.w == 8 && d.f == cudaChannelFormatKindUnsigned));
  CHECK((e.width == 64 && e.height == 32 && e.depth == 0 && flags == cudaArraySurfaceLoadStore));
  REQUIRE(a.cudaArrayGetInfo(nullptr, &e, nullptr, x) == cudaSuccess);  // any output may be null
  CHECK((e.width == 100 && e.height == 0 && e.depth == 0));
  REQUIRE(a.cudaArrayGetInfo(&d, &e, &flags, z) == cudaSuccess);
  CHECK((d.x == 16 && d.y == 16 && d.z == 0 && d.w == 0 && d.f == cudaChannelFormatKindSigned));
  CHECK((e.width == 5 && e.height == 4 && e.depth == 3 && flags == 0));
  REQUIRE(a.cudaGetChannelDesc(&d, x) == cudaSuccess);
  CHECK((d.x == 32 && d.y == 0 && d.f == cudaChannelFormatKindFloat));

  for (cudaArray_t arr : {x, y, z}) REQUIRE(a.cudaFreeArray(arr) == cudaSuccess);
  CHECK(free_memory() == before);
  CHECK(a.cudaFreeArray(nullptr) == cudaSuccess);  // documented: no operation
  CHECK(a.cudaFreeArray(x) == cudaErrorInvalidValue);
  CHECK(a.cudaArrayGetInfo(&d, &e, &flags, y) == cudaErrorInvalidValue);
  CHECK(a.cudaGetChannelDesc(&d, z) == cudaErrorInvalidValue);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "CUDA array channel descriptors and shapes are checked", "[runtime][arrays]") {
  ArrayApi& a = api();
  auto make = [&](cudaChannelFormatDesc d, size_t w, size_t h, unsigned flags) {
    cudaArray_t x = nullptr;
    const cudaError_t e = a.cudaMallocArray(&x, &d, w, h, flags);
    if (e == cudaSuccess) a.cudaFreeArray(x);
    return e;
  };
  const auto f1 = channels(32, 0, 0, 0, cudaChannelFormatKindFloat);
  CHECK(make(f1, 16, 16, 0) == cudaSuccess);
  CHECK(make(channels(16, 0, 0, 0, cudaChannelFormatKindFloat), 16, 16, 0) == cudaSuccess);  // half
  CHECK(make(channels(8, 8, 8, 8, cudaChannelFormatKindUnsignedNormalized8X4), 16, 16, 0) == cudaSuccess);
  CHECK(make(channels(8, 8, 8, 0, cudaChannelFormatKindUnsigned), 16, 16, 0) == cudaErrorInvalidChannelDescriptor);
  CHECK(make(channels(8, 16, 0, 0, cudaChannelFormatKindUnsigned), 16, 16, 0) == cudaErrorInvalidChannelDescriptor);
  CHECK(make(channels(0, 8, 0, 0, cudaChannelFormatKindUnsigned), 16, 16, 0) == cudaErrorInvalidChannelDescriptor);
  CHECK(make(channels(64, 0, 0, 0, cudaChannelFormatKindFloat), 16, 16, 0) == cudaErrorInvalidChannelDescriptor);
  CHECK(make(channels(8, 0, 0, 0, cudaChannelFormatKindFloat), 16, 16, 0) == cudaErrorInvalidChannelDescriptor);
  CHECK(make(channels(32, 0, 0, 0, cudaChannelFormatKindNone), 16, 16, 0) == cudaErrorInvalidChannelDescriptor);
  CHECK(make(channels(8, 0, 0, 0, cudaChannelFormatKindNV12), 16, 16, 0) == cudaErrorNotSupported);
  CHECK(make(f1, 0, 16, 0) == cudaErrorInvalidValue);
  CHECK(make(f1, 16, 16, cudaArrayLayered) == cudaErrorInvalidValue);  // cudaMalloc3DArray's
  CHECK(make(f1, 16, 16, cudaArrayCubemap) == cudaErrorInvalidValue);
  cudaArray_t x = nullptr;
  CHECK(a.cudaMallocArray(nullptr, &f1, 16, 16, 0) == cudaErrorInvalidValue);
  CHECK(a.cudaMallocArray(&x, nullptr, 16, 16, 0) == cudaErrorInvalidValue);
  int max1d = 0;
  REQUIRE(r.cudaDeviceGetAttribute(&max1d, cudaDevAttrMaxTexture1DWidth, 0) == cudaSuccess);
  CHECK(make(f1, static_cast<size_t>(max1d) + 1, 0, 0) == cudaErrorInvalidValue);
  // Layered: the extent's depth counts the layers.
  REQUIRE(a.cudaMalloc3DArray(&x, &f1, cudaExtent{8, 8, 3}, cudaArrayLayered) == cudaSuccess);
  cudaExtent e{};
  unsigned flags = 0;
  REQUIRE(a.cudaArrayGetInfo(nullptr, &e, &flags, x) == cudaSuccess);
  CHECK((e.width == 8 && e.height == 8 && e.depth == 3 && flags == cudaArrayLayered));
  REQUIRE(a.cudaFreeArray(x) == cudaSuccess);
  CHECK(a.cudaMalloc3DArray(&x, &f1, cudaExtent{8, 0, 3}, 0) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "2D copies to and from arrays are byte-exact", "[runtime][arrays]") {
  ArrayApi& a = api();
  constexpr size_t kW = 37, kH = 19, kRow = kW * 4;
  const auto f1 = channels(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaArray_t arr = nullptr, other = nullptr;
  REQUIRE(a.cudaMallocArray(&arr, &f1, kW, kH, 0) == cudaSuccess);
  REQUIRE(a.cudaMallocArray(&other, &f1, kW, kH, 0) == cudaSuccess);
  // The whole array from a host image with 160-byte rows, and back with 150-byte rows.
  const auto img = bytes(160 * kH, 1);
  REQUIRE(a.cudaMemcpy2DToArray(arr, 0, 0, img.data(), 160, kRow, kH, cudaMemcpyHostToDevice) == cudaSuccess);
  std::vector<unsigned char> out(150 * kH, 0);
  REQUIRE(a.cudaMemcpy2DFromArray(out.data(), 150, arr, 0, 0, kRow, kH, cudaMemcpyDeviceToHost) == cudaSuccess);
  std::vector<unsigned char> model(kRow * kH);
  for (size_t y = 0; y < kH; ++y) {
    std::memcpy(&model[y * kRow], &img[y * 160], kRow);
    CHECK(std::memcmp(&out[y * 150], &img[y * 160], kRow) == 0);
  }
  // A sub-box (8 bytes, row 5) + (12 bytes × 6 rows), stream-ordered, from device memory.
  void* dev = nullptr;
  REQUIRE(r.cudaMalloc(&dev, 64 * 6) == cudaSuccess);
  const auto box = bytes(64 * 6, 2);
  REQUIRE(r.cudaMemcpy(dev, box.data(), box.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(a.cudaMemcpy2DToArrayAsync(arr, 8, 5, dev, 64, 12, 6, cudaMemcpyDeviceToDevice, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  for (size_t y = 0; y < 6; ++y) std::memcpy(&model[(5 + y) * kRow + 8], &box[y * 64], 12);
  // Array to array (2D and linear), then out linearly.
  REQUIRE(a.cudaMemcpy2DArrayToArray(other, 0, 0, arr, 0, 0, kRow, kH, cudaMemcpyDeviceToDevice) == cudaSuccess);
  std::vector<unsigned char> lin(kRow * kH, 0);
  REQUIRE(a.cudaMemcpyFromArray(lin.data(), other, 0, 0, lin.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(lin == model);
  // The deprecated linear forms: offsets (wOffset bytes, hOffset rows), runs across rows.
  const auto run = bytes(200, 3);
  REQUIRE(a.cudaMemcpyToArray(arr, 100, 2, run.data(), run.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  std::memcpy(&model[2 * kRow + 100], run.data(), run.size());
  REQUIRE(a.cudaMemcpyArrayToArray(other, 0, 0, arr, 0, 0, kRow * kH, cudaMemcpyDeviceToDevice) == cudaSuccess);
  REQUIRE(a.cudaMemcpyFromArray(lin.data(), other, 0, 0, lin.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(lin == model);

  // Boxes and runs that leave the array; widths past a pitch; unknown arrays.
  CHECK(a.cudaMemcpy2DToArray(arr, kRow - 8, 0, img.data(), 160, 12, 1, cudaMemcpyHostToDevice) ==
        cudaErrorInvalidValue);
  CHECK(a.cudaMemcpy2DToArray(arr, 0, kH - 1, img.data(), 160, 12, 2, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(a.cudaMemcpy2DToArray(arr, 0, 0, img.data(), 8, 12, 2, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
  CHECK(a.cudaMemcpyToArray(arr, 0, kH - 1, run.data(), kRow + 1, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(a.cudaMemcpyFromArray(lin.data(), arr, 0, SIZE_MAX / 2, 1, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(a.cudaMemcpyToArray(nullptr, 0, 0, run.data(), 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  REQUIRE(a.cudaFreeArray(other) == cudaSuccess);
  CHECK(a.cudaMemcpy2DFromArray(out.data(), 150, other, 0, 0, 4, 1, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(r.cudaFree(dev) == cudaSuccess);
  REQUIRE(a.cudaFreeArray(arr) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaMemcpy3D copies into and out of 3D arrays", "[runtime][arrays]") {
  ArrayApi& a = api();
  // 6×5×4 elements of 2 × 16 bits (4 bytes, 24-byte rows, 120-byte slices).
  const auto s2 = channels(16, 16, 0, 0, cudaChannelFormatKindUnsigned);
  cudaArray_t vol = nullptr;
  REQUIRE(a.cudaMalloc3DArray(&vol, &s2, cudaExtent{6, 5, 4}, 0) == cudaSuccess);
  std::vector<unsigned char> model(24 * 5 * 4, 0);
  // Whole volumes in and out (the linear forms stay in the first slice).
  auto whole = [&](cudaArray_t arr, unsigned char* host, bool in) {
    cudaMemcpy3DParms w{};
    (in ? w.dstArray : w.srcArray) = arr;
    (in ? w.srcPtr : w.dstPtr) = cudaPitchedPtr{host, 24, 24, 5};
    w.extent = cudaExtent{6, 5, 4};
    w.kind = in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    return r.cudaMemcpy3D(&w);
  };
  REQUIRE(whole(vol, model.data(), true) == cudaSuccess);
  // From host memory (rows of 40 bytes, 7 rows a slice): the box at element (1, 2, 1) of
  // 3 × 2 × 3 elements, taken from byte (8, 1, 0) of the host volume.
  const auto host = bytes(40 * 7 * 3, 4);
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<unsigned char*>(host.data()), 40, 40, 7};
  p.srcPos = cudaPos{8, 1, 0};
  p.dstArray = vol;
  p.dstPos = cudaPos{1, 2, 1};  // elements
  p.extent = cudaExtent{3, 2, 3};
  p.kind = cudaMemcpyHostToDevice;
  REQUIRE(r.cudaMemcpy3D(&p) == cudaSuccess);
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 2; ++y)
      std::memcpy(&model[(1 + z) * 120 + (2 + y) * 24 + 4], &host[z * 280 + (1 + y) * 40 + 8], 12);
  // Back out whole, into host memory with 32-byte rows.
  std::vector<unsigned char> out(32 * 5 * 4, 0);
  cudaMemcpy3DParms q{};
  q.srcArray = vol;
  q.dstPtr = cudaPitchedPtr{out.data(), 32, 32, 5};
  q.extent = cudaExtent{6, 5, 4};
  q.kind = cudaMemcpyDeviceToHost;
  REQUIRE(r.cudaMemcpy3D(&q) == cudaSuccess);
  for (size_t z = 0; z < 4; ++z)
    for (size_t y = 0; y < 5; ++y) CHECK(std::memcmp(&out[(z * 5 + y) * 32], &model[z * 120 + y * 24], 24) == 0);
  // Array to array.
  cudaArray_t copy = nullptr;
  REQUIRE(a.cudaMalloc3DArray(&copy, &s2, cudaExtent{6, 5, 4}, 0) == cudaSuccess);
  cudaMemcpy3DParms c{};
  c.srcArray = vol, c.dstArray = copy, c.extent = cudaExtent{6, 5, 4}, c.kind = cudaMemcpyDeviceToDevice;
  REQUIRE(r.cudaMemcpy3D(&c) == cudaSuccess);
  std::vector<unsigned char> lin(model.size(), 0);
  REQUIRE(whole(copy, lin.data(), false) == cudaSuccess);
  CHECK(lin == model);
  // The linear forms reach the first slice only.
  CHECK(a.cudaMemcpyFromArray(lin.data(), copy, 0, 0, 120, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(a.cudaMemcpyFromArray(lin.data(), copy, 0, 0, 121, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  // A box past the array in any dimension.
  p.dstPos = cudaPos{4, 2, 1};
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  p.dstPos = cudaPos{1, 4, 1};
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  p.dstPos = cudaPos{1, 2, 2};
  CHECK(r.cudaMemcpy3D(&p) == cudaErrorInvalidValue);
  REQUIRE(a.cudaFreeArray(copy) == cudaSuccess);
  CHECK(r.cudaMemcpy3D(&c) == cudaErrorInvalidValue);
  REQUIRE(a.cudaFreeArray(vol) == cudaSuccess);
}

// ---- texture and surface objects -------------------------------------------------------------------
namespace {

struct TextureApi {
  cudaError_t (*cudaCreateTextureObject)(cudaTextureObject_t*, const cudaResourceDesc*, const cudaTextureDesc*,
                                         const cudaResourceViewDesc*);
  cudaError_t (*cudaDestroyTextureObject)(cudaTextureObject_t);
  cudaError_t (*cudaGetTextureObjectResourceDesc)(cudaResourceDesc*, cudaTextureObject_t);
  cudaError_t (*cudaGetTextureObjectTextureDesc)(cudaTextureDesc*, cudaTextureObject_t);
  cudaError_t (*cudaGetTextureObjectResourceViewDesc)(cudaResourceViewDesc*, cudaTextureObject_t);
  cudaError_t (*cudaCreateSurfaceObject)(cudaSurfaceObject_t*, const cudaResourceDesc*);
  cudaError_t (*cudaDestroySurfaceObject)(cudaSurfaceObject_t);
  cudaError_t (*cudaGetSurfaceObjectResourceDesc)(cudaResourceDesc*, cudaSurfaceObject_t);
  TextureApi() {
    ArrayApi::bind(cudaCreateTextureObject, "cudaCreateTextureObject");
    ArrayApi::bind(cudaDestroyTextureObject, "cudaDestroyTextureObject");
    ArrayApi::bind(cudaGetTextureObjectResourceDesc, "cudaGetTextureObjectResourceDesc");
    ArrayApi::bind(cudaGetTextureObjectTextureDesc, "cudaGetTextureObjectTextureDesc");
    ArrayApi::bind(cudaGetTextureObjectResourceViewDesc, "cudaGetTextureObjectResourceViewDesc");
    ArrayApi::bind(cudaCreateSurfaceObject, "cudaCreateSurfaceObject");
    ArrayApi::bind(cudaDestroySurfaceObject, "cudaDestroySurfaceObject");
    ArrayApi::bind(cudaGetSurfaceObjectResourceDesc, "cudaGetSurfaceObjectResourceDesc");
  }
};
TextureApi& tex_api() {
  static auto* t = new TextureApi;
  return *t;
}

}  // namespace

TEST_CASE_METHOD(Case, "texture and surface objects through the runtime", "[runtime][textures]") {
  ArrayApi& a = api();
  TextureApi& t = tex_api();
  const auto u4 = channels(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
  cudaArray_t arr = nullptr;
  REQUIRE(a.cudaMallocArray(&arr, &u4, 32, 16, cudaArraySurfaceLoadStore) == cudaSuccess);
  cudaResourceDesc res;
  std::memset(&res, 0, sizeof res);
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td;
  std::memset(&td, 0, sizeof td);
  td.addressMode[0] = cudaAddressModeMirror;
  td.addressMode[1] = cudaAddressModeWrap;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeNormalizedFloat;
  td.normalizedCoords = 1;
  td.borderColor[2] = 0.5f;
  cudaTextureObject_t tex = 0;
  REQUIRE(t.cudaCreateTextureObject(&tex, &res, &td, nullptr) == cudaSuccess);
  CHECK(tex != 0);
  cudaTextureDesc back;
  REQUIRE(t.cudaGetTextureObjectTextureDesc(&back, tex) == cudaSuccess);
  CHECK((back.addressMode[0] == cudaAddressModeMirror && back.addressMode[1] == cudaAddressModeWrap &&
         back.filterMode == cudaFilterModeLinear && back.readMode == cudaReadModeNormalizedFloat &&
         back.normalizedCoords == 1 && back.sRGB == 0 && back.borderColor[2] == 0.5f));
  cudaResourceDesc rback;
  REQUIRE(t.cudaGetTextureObjectResourceDesc(&rback, tex) == cudaSuccess);
  CHECK((rback.resType == cudaResourceTypeArray && rback.res.array.array == arr));
  cudaResourceViewDesc vback;
  CHECK(t.cudaGetTextureObjectResourceViewDesc(&vback, tex) == cudaErrorInvalidValue);
  // Values read as integers cannot be filtered.
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t bad = 0;
  CHECK(t.cudaCreateTextureObject(&bad, &res, &td, nullptr) == cudaErrorInvalidValue);
  td.filterMode = cudaFilterModePoint;
  cudaTextureObject_t ints = 0;
  REQUIRE(t.cudaCreateTextureObject(&ints, &res, &td, nullptr) == cudaSuccess);
  REQUIRE(t.cudaGetTextureObjectTextureDesc(&back, ints) == cudaSuccess);
  CHECK(back.readMode == cudaReadModeElementType);

  // Linear memory: its channel descriptor comes back as given.
  void* dev = nullptr;
  REQUIRE(r.cudaMalloc(&dev, 1024) == cudaSuccess);
  cudaResourceDesc lin;
  std::memset(&lin, 0, sizeof lin);
  lin.resType = cudaResourceTypeLinear;
  lin.res.linear.devPtr = dev;
  lin.res.linear.desc = channels(32, 0, 0, 0, cudaChannelFormatKindFloat);
  lin.res.linear.sizeInBytes = 1024;
  cudaTextureObject_t ltex = 0;
  REQUIRE(t.cudaCreateTextureObject(&ltex, &lin, &td, nullptr) == cudaSuccess);
  REQUIRE(t.cudaGetTextureObjectResourceDesc(&rback, ltex) == cudaSuccess);
  CHECK((rback.resType == cudaResourceTypeLinear && rback.res.linear.devPtr == dev && rback.res.linear.desc.x == 32 &&
         rback.res.linear.desc.y == 0 && rback.res.linear.desc.f == cudaChannelFormatKindFloat &&
         rback.res.linear.sizeInBytes == 1024));
  lin.res.linear.desc = channels(8, 8, 8, 0, cudaChannelFormatKindUnsigned);
  CHECK(t.cudaCreateTextureObject(&bad, &lin, &td, nullptr) == cudaErrorInvalidChannelDescriptor);

  // Surfaces.
  cudaSurfaceObject_t surf = 0;
  REQUIRE(t.cudaCreateSurfaceObject(&surf, &res) == cudaSuccess);
  REQUIRE(t.cudaGetSurfaceObjectResourceDesc(&rback, surf) == cudaSuccess);
  CHECK(rback.res.array.array == arr);
  CHECK(t.cudaCreateSurfaceObject(&bad, &lin) == cudaErrorInvalidValue);

  for (cudaTextureObject_t o : {tex, ints, ltex}) REQUIRE(t.cudaDestroyTextureObject(o) == cudaSuccess);
  REQUIRE(t.cudaDestroySurfaceObject(surf) == cudaSuccess);
  CHECK(t.cudaDestroyTextureObject(tex) == cudaErrorInvalidValue);
  CHECK(t.cudaGetTextureObjectTextureDesc(&back, ints) == cudaErrorInvalidValue);
  CHECK(t.cudaDestroySurfaceObject(surf) == cudaErrorInvalidValue);
  CHECK(t.cudaDestroyTextureObject(0) == cudaErrorInvalidValue);
  REQUIRE(r.cudaFree(dev) == cudaSuccess);
  REQUIRE(a.cudaFreeArray(arr) == cudaSuccess);
}
