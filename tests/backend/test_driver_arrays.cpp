// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: CUDA arrays (create, describe, destroy, the descriptor rules, the ledger's
// books) and the copies that name them (HtoA/AtoH/DtoA/AtoD/AtoA, cuMemcpy2D/3D with
// CU_MEMORYTYPE_ARRAY), byte-exact against a host model of the row-major layout.
#include "backend/driver_test.h"

#include <cstring>
#include <numeric>
#include <vector>

namespace drvtest::sig {
CUresult cuArrayCreate_v2(CUarray*, const CUDA_ARRAY_DESCRIPTOR*);
CUresult cuArray3DCreate_v2(CUarray*, const CUDA_ARRAY3D_DESCRIPTOR*);
CUresult cuArrayDestroy(CUarray);
CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR*, CUarray);
CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR*, CUarray);
CUresult cuMemcpyHtoA_v2(CUarray, size_t, const void*, size_t);
CUresult cuMemcpyAtoH_v2(void*, CUarray, size_t, size_t);
CUresult cuMemcpyHtoAAsync_v2(CUarray, size_t, const void*, size_t, CUstream);
CUresult cuMemcpyAtoHAsync_v2(void*, CUarray, size_t, size_t, CUstream);
CUresult cuMemcpyDtoA_v2(CUarray, size_t, CUdeviceptr, size_t);
CUresult cuMemcpyAtoD_v2(CUdeviceptr, CUarray, size_t, size_t);
CUresult cuMemcpyAtoA_v2(CUarray, size_t, CUarray, size_t, size_t);
}  // namespace drvtest::sig

using namespace drvtest;

namespace {

CUarray make_array(size_t w, size_t h, CUarray_format f, unsigned channels) {
  CUDA_ARRAY_DESCRIPTOR d{w, h, f, channels};
  CUarray a = nullptr;
  CU_OK(CU(cuArrayCreate_v2)(&a, &d));
  return a;
}

CUarray make_array_3d(size_t w, size_t h, size_t depth, CUarray_format f, unsigned channels, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR d{w, h, depth, f, channels, flags};
  CUarray a = nullptr;
  CU_OK(CU(cuArray3DCreate_v2)(&a, &d));
  return a;
}

CUresult create_3d(size_t w, size_t h, size_t depth, CUarray_format f, unsigned channels, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR d{w, h, depth, f, channels, flags};
  CUarray a = nullptr;
  const CUresult r = CU(cuArray3DCreate_v2)(&a, &d);
  if (r == CUDA_SUCCESS) CU(cuArrayDestroy)(a);
  return r;
}

int attribute(CUdevice_attribute a) {
  int v = 0;
  CU_OK(CU(cuDeviceGetAttribute)(&v, a, 0));
  return v;
}

std::vector<unsigned char> bytes(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed * 13 + (i >> 7));
  return v;
}

}  // namespace

TEST_CASE("driver: CUDA arrays are created, described and destroyed", "[driver][arrays]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  CUarray a1 = make_array(100, 0, CU_AD_FORMAT_FLOAT, 1);
  CUarray a2 = make_array(64, 32, CU_AD_FORMAT_UNSIGNED_INT8, 4);
  CUarray a3 = make_array_3d(5, 4, 3, CU_AD_FORMAT_HALF, 2, CUDA_ARRAY3D_SURFACE_LDST);
  CUarray a4 = make_array_3d(16, 0, 7, CU_AD_FORMAT_SIGNED_INT16, 1, CUDA_ARRAY3D_LAYERED);
  // Booked as device memory: exactly the elements' bytes, row-major without padding.
  CHECK(before - free_bytes() == 100 * 4 + 64 * 32 * 4 + 5 * 4 * 3 * 4 + 16 * 7 * 2);
  CHECK(a1 != a2);

  CUDA_ARRAY_DESCRIPTOR d{};
  CU_OK(CU(cuArrayGetDescriptor_v2)(&d, a2));
  CHECK(d.Width == 64);
  CHECK(d.Height == 32);
  CHECK(d.Format == CU_AD_FORMAT_UNSIGNED_INT8);
  CHECK(d.NumChannels == 4);
  CUDA_ARRAY3D_DESCRIPTOR d3{};
  CU_OK(CU(cuArray3DGetDescriptor_v2)(&d3, a1));
  CHECK((d3.Width == 100 && d3.Height == 0 && d3.Depth == 0 && d3.Format == CU_AD_FORMAT_FLOAT && d3.NumChannels == 1 &&
         d3.Flags == 0));
  CU_OK(CU(cuArray3DGetDescriptor_v2)(&d3, a3));
  CHECK((d3.Width == 5 && d3.Height == 4 && d3.Depth == 3 && d3.Format == CU_AD_FORMAT_HALF && d3.NumChannels == 2 &&
         d3.Flags == CUDA_ARRAY3D_SURFACE_LDST));
  CU_OK(CU(cuArray3DGetDescriptor_v2)(&d3, a4));
  CHECK((d3.Width == 16 && d3.Height == 0 && d3.Depth == 7 && d3.Flags == CUDA_ARRAY3D_LAYERED));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuArrayGetDescriptor_v2)(nullptr, a2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuArray3DGetDescriptor_v2)(nullptr, a2));

  for (CUarray a : {a1, a2, a3, a4}) CU_OK(CU(cuArrayDestroy)(a));
  CHECK(free_bytes() == before);
  // A destroyed array's handle is refused, also after new arrays were made.
  CUarray again = make_array(100, 0, CU_AD_FORMAT_FLOAT, 1);
  CHECK(again != a1);
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArrayDestroy)(a1));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArrayGetDescriptor_v2)(&d, a2));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArray3DGetDescriptor_v2)(&d3, a3));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArrayDestroy)(nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArrayDestroy)(reinterpret_cast<CUarray>(uintptr_t{0x1234})));
  CU_OK(CU(cuArrayDestroy)(again));
}

TEST_CASE("driver: array descriptors are checked", "[driver][arrays]") {
  clear_stack();
  CUarray a = nullptr;
  CUDA_ARRAY_DESCRIPTOR d{16, 16, CU_AD_FORMAT_FLOAT, 1};
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuArrayCreate_v2)(&a, &d));
  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuArrayCreate_v2)(nullptr, &d));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuArrayCreate_v2)(&a, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuArray3DCreate_v2)(&a, nullptr));
  auto create_2d = [&](size_t w, size_t h, int format, unsigned channels) {
    CUDA_ARRAY_DESCRIPTOR dd{w, h, static_cast<CUarray_format>(format), channels};
    CUarray x = nullptr;
    const CUresult r = CU(cuArrayCreate_v2)(&x, &dd);
    if (r == CUDA_SUCCESS) CU(cuArrayDestroy)(x);
    return r;
  };
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(0, 16, CU_AD_FORMAT_FLOAT, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(16, 16, CU_AD_FORMAT_FLOAT, 3));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(16, 16, CU_AD_FORMAT_FLOAT, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(16, 16, 0x07, 1));  // no such format
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, create_2d(16, 16, CU_AD_FORMAT_NV12, 1));
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, create_2d(16, 16, CU_AD_FORMAT_BC1_UNORM, 4));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(16, 16, CU_AD_FORMAT_UNORM_INT8X4, 1));  // the format says 4
  CU_EQ(CUDA_SUCCESS, create_2d(16, 16, CU_AD_FORMAT_UNORM_INT8X4, 4));
  CU_EQ(CUDA_SUCCESS, create_2d(16, 16, CU_AD_FORMAT_SNORM_INT16X2, 2));

  // The device's limits (its attributes) bound each shape.
  const size_t tex1d = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
  const size_t tex2d_h = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
  const size_t surf1d = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
  const size_t tex3d = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
  const size_t tex3d_alt = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
  const size_t layers = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
  REQUIRE((tex1d > 0 && tex2d_h > 0 && surf1d > 0 && surf1d < tex1d && tex3d_alt > tex3d && layers > 0));
  CU_EQ(CUDA_SUCCESS, create_2d(tex1d, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(tex1d + 1, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_2d(4, tex2d_h + 1, CU_AD_FORMAT_UNSIGNED_INT8, 1));
  CU_EQ(CUDA_SUCCESS, create_3d(surf1d + 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        create_3d(surf1d + 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SURFACE_LDST));
  // 3-D: the usual limits or the alternate ones (a deep, narrow volume).
  CU_EQ(CUDA_SUCCESS, create_3d(4, 4, tex3d + 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(4, 4, tex3d_alt + 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
  // Shapes: a depth needs a height unless layered; layered needs layers; cubemaps are square
  // with 6 faces (a multiple of 6 when layered).
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 0, 5, CU_AD_FORMAT_FLOAT, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 8, layers + 1, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED));
  CU_EQ(CUDA_SUCCESS, create_3d(8, 8, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 9, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 8, 12, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP));
  CU_EQ(CUDA_SUCCESS, create_3d(8, 8, 12, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED));
  // Gather is for 2-D arrays; sparse and deferred-mapping arrays are not modelled.
  CU_EQ(CUDA_SUCCESS, create_3d(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_TEXTURE_GATHER));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 8, 2, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_TEXTURE_GATHER));
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, create_3d(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SPARSE));
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, create_3d(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_DEFERRED_MAPPING));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create_3d(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, 0x1000));
}

TEST_CASE("driver: linear copies to and from arrays", "[driver][arrays]") {
  Ctx ctx(0);
  constexpr size_t kW = 37, kH = 19, kBytes = kW * kH * 4;  // float, row-major, 148-byte rows
  CUarray a = make_array(kW, kH, CU_AD_FORMAT_FLOAT, 1);
  CUarray b = make_array(kW, kH, CU_AD_FORMAT_FLOAT, 1);
  const auto src = bytes(kBytes, 1);
  CU_OK(CU(cuMemcpyHtoA_v2)(a, 0, src.data(), kBytes));
  std::vector<unsigned char> out(kBytes, 0);
  CU_OK(CU(cuMemcpyAtoH_v2)(out.data(), a, 0, kBytes));
  CHECK(out == src);
  // Offsets are bytes into the layout, across rows.
  const auto patch = bytes(300, 2);
  CU_OK(CU(cuMemcpyHtoA_v2)(a, 140, patch.data(), patch.size()));
  auto expect = src;
  std::memcpy(expect.data() + 140, patch.data(), patch.size());
  CU_OK(CU(cuMemcpyAtoH_v2)(out.data(), a, 0, kBytes));
  CHECK(out == expect);
  std::vector<unsigned char> part(77, 0);
  CU_OK(CU(cuMemcpyAtoH_v2)(part.data(), a, kBytes - 77, 77));
  CHECK(std::memcmp(part.data(), expect.data() + kBytes - 77, 77) == 0);

  // Array to array, to device memory and back, stream-ordered.
  CU_OK(CU(cuMemcpyAtoA_v2)(b, 0, a, 0, kBytes));
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, kBytes));
  CU_OK(CU(cuMemcpyAtoD_v2)(d, b, 0, kBytes));
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), d, kBytes));
  CHECK(out == expect);
  CU_OK(CU(cuMemcpyHtoD_v2)(d, src.data(), kBytes));
  CU_OK(CU(cuMemcpyDtoA_v2)(b, 0, d, kBytes));
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, 0));
  std::vector<unsigned char> back(kBytes, 0);
  CU_OK(CU(cuMemcpyHtoAAsync_v2)(a, 4, src.data(), 8, s));
  CU_OK(CU(cuMemcpyAtoHAsync_v2)(back.data(), b, 0, kBytes, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(back == src);
  CU_OK(CU(cuMemcpyAtoH_v2)(out.data(), a, 0, 12));
  CHECK(std::memcmp(out.data() + 4, src.data(), 8) == 0);

  // Ranges past the array, null and stale handles.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoA_v2)(a, 1, src.data(), kBytes));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyAtoH_v2)(out.data(), a, kBytes + 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyAtoH_v2)(out.data(), a, SIZE_MAX, 2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoA_v2)(nullptr, 0, src.data(), 4));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyAtoA_v2)(nullptr, 0, a, 0, 4));
  CU_OK(CU(cuArrayDestroy)(b));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemcpyAtoH_v2)(out.data(), b, 0, 4));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemcpyDtoA_v2)(b, 0, d, 4));
  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_OK(CU(cuMemFree_v2)(d));
  CU_OK(CU(cuArrayDestroy)(a));
}

TEST_CASE("driver: 2D and 3D copies name arrays", "[driver][arrays]") {
  Ctx ctx(0);
  constexpr size_t kW = 37, kH = 19, kRow = kW * 4;
  CUarray a = make_array(kW, kH, CU_AD_FORMAT_FLOAT, 1);
  std::vector<unsigned char> model(kRow * kH, 0);
  CU_OK(CU(cuMemcpyHtoA_v2)(a, 0, model.data(), model.size()));
  // A 5-float × 4-row box at (8 bytes, row 3) from a host image with 100-byte rows.
  const auto host = bytes(100 * 10, 3);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = host.data(), c.srcPitch = 100, c.srcXInBytes = 12, c.srcY = 2;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a, c.dstXInBytes = 8, c.dstY = 3;
  c.WidthInBytes = 20, c.Height = 4;
  CU_OK(CU(cuMemcpy2D_v2)(&c));
  for (size_t y = 0; y < 4; ++y) std::memcpy(&model[(3 + y) * kRow + 8], &host[(2 + y) * 100 + 12], 20);
  std::vector<unsigned char> out(model.size(), 0);
  CU_OK(CU(cuMemcpyAtoH_v2)(out.data(), a, 0, out.size()));
  CHECK(out == model);
  // Array to device memory with a pitch, then back to the host.
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, 256 * kH));
  CUDA_MEMCPY2D e{};
  e.srcMemoryType = CU_MEMORYTYPE_ARRAY, e.srcArray = a;
  e.dstMemoryType = CU_MEMORYTYPE_DEVICE, e.dstDevice = d, e.dstPitch = 256;
  e.WidthInBytes = kRow, e.Height = kH;
  CU_OK(CU(cuMemcpy2D_v2)(&e));
  std::vector<unsigned char> pitched(256 * kH, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(pitched.data(), d, pitched.size()));
  for (size_t y = 0; y < kH; ++y) CHECK(std::memcmp(&pitched[y * 256], &model[y * kRow], kRow) == 0);
  // Boxes that leave the array.
  c.dstXInBytes = kRow - 16;  // 20 bytes from 16 before the end
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&c));
  c.dstXInBytes = 0, c.dstY = kH - 3;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&c));
  c.dstY = 0, c.dstArray = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy2D_v2)(&c));
  CU_OK(CU(cuMemFree_v2)(d));
  CU_OK(CU(cuArrayDestroy)(a));

  // 3-D: a 5×4×3 volume of 2-channel 16-bit elements (4 bytes each, 20-byte rows).
  CUarray v = make_array_3d(5, 4, 3, CU_AD_FORMAT_UNSIGNED_INT16, 2, 0);
  std::vector<unsigned char> vol(20 * 4 * 3, 0);
  CU_OK(CU(cuMemcpyHtoA_v2)(v, 0, vol.data(), vol.size()));
  const auto src = bytes(64 * 8 * 4, 4);  // rows of 64 bytes, slices of 8 rows
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_HOST, p.srcHost = src.data(), p.srcPitch = 64, p.srcHeight = 8;
  p.srcXInBytes = 4, p.srcY = 1, p.srcZ = 1;
  p.dstMemoryType = CU_MEMORYTYPE_ARRAY, p.dstArray = v, p.dstXInBytes = 4, p.dstY = 1, p.dstZ = 1;
  p.WidthInBytes = 12, p.Height = 3, p.Depth = 2;
  CU_OK(CU(cuMemcpy3D_v2)(&p));
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      std::memcpy(&vol[((1 + z) * 4 + 1 + y) * 20 + 4], &src[((1 + z) * 8 + 1 + y) * 64 + 4], 12);
  std::vector<unsigned char> vout(vol.size(), 0);
  CUDA_MEMCPY3D q{};
  q.srcMemoryType = CU_MEMORYTYPE_ARRAY, q.srcArray = v;
  q.dstMemoryType = CU_MEMORYTYPE_HOST, q.dstHost = vout.data(), q.dstPitch = 20, q.dstHeight = 4;
  q.WidthInBytes = 20, q.Height = 4, q.Depth = 3;
  CU_OK(CU(cuMemcpy3D_v2)(&q));
  CHECK(vout == vol);
  p.dstZ = 2;  // two slices from slice 2 of 3
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpy3D_v2)(&p));
  CU_OK(CU(cuArrayDestroy)(v));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemcpy3D_v2)(&q));
}

TEST_CASE("driver: arrays go with their context", "[driver][arrays]") {
  init();
  CUcontext c = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&c, 0, 0));
  const size_t before = free_bytes();
  CUarray a = make_array(1024, 1024, CU_AD_FORMAT_FLOAT, 4);
  CHECK(before - free_bytes() == 1024 * 1024 * 16);
  CU_OK(CU(cuCtxDestroy_v2)(c));
  Ctx ctx(0);
  CHECK(free_bytes() == before);
  CUDA_ARRAY_DESCRIPTOR d{};
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArrayGetDescriptor_v2)(&d, a));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuArrayDestroy)(a));
}

// ---- texture and surface objects -------------------------------------------------------------------
namespace drvtest::sig {
CUresult cuTexObjectCreate(CUtexObject*, const CUDA_RESOURCE_DESC*, const CUDA_TEXTURE_DESC*,
                           const CUDA_RESOURCE_VIEW_DESC*);
CUresult cuTexObjectDestroy(CUtexObject);
CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC*, CUtexObject);
CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC*, CUtexObject);
CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC*, CUtexObject);
CUresult cuSurfObjectCreate(CUsurfObject*, const CUDA_RESOURCE_DESC*);
CUresult cuSurfObjectDestroy(CUsurfObject);
CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC*, CUsurfObject);
}  // namespace drvtest::sig

namespace {

CUDA_RESOURCE_DESC array_resource(CUarray a) {
  CUDA_RESOURCE_DESC r;
  std::memset(&r, 0, sizeof r);
  r.resType = CU_RESOURCE_TYPE_ARRAY;
  r.res.array.hArray = a;
  return r;
}

CUDA_RESOURCE_DESC linear_resource(CUdeviceptr p, CUarray_format f, unsigned channels, size_t bytes) {
  CUDA_RESOURCE_DESC r;
  std::memset(&r, 0, sizeof r);
  r.resType = CU_RESOURCE_TYPE_LINEAR;
  r.res.linear.devPtr = p;
  r.res.linear.format = f;
  r.res.linear.numChannels = channels;
  r.res.linear.sizeInBytes = bytes;
  return r;
}

CUDA_RESOURCE_DESC pitch_resource(CUdeviceptr p, CUarray_format f, unsigned channels, size_t w, size_t h,
                                  size_t pitch) {
  CUDA_RESOURCE_DESC r;
  std::memset(&r, 0, sizeof r);
  r.resType = CU_RESOURCE_TYPE_PITCH2D;
  r.res.pitch2D.devPtr = p;
  r.res.pitch2D.format = f;
  r.res.pitch2D.numChannels = channels;
  r.res.pitch2D.width = w;
  r.res.pitch2D.height = h;
  r.res.pitch2D.pitchInBytes = pitch;
  return r;
}

CUDA_TEXTURE_DESC sampler(CUfilter_mode filter, unsigned flags) {
  CUDA_TEXTURE_DESC t;
  std::memset(&t, 0, sizeof t);
  t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
  t.filterMode = filter;
  t.flags = flags;
  return t;
}

CUresult make_tex(const CUDA_RESOURCE_DESC& r, const CUDA_TEXTURE_DESC& t, const CUDA_RESOURCE_VIEW_DESC* v = nullptr) {
  CUtexObject o = 0;
  const CUresult res = CU(cuTexObjectCreate)(&o, &r, &t, v);
  if (res == CUDA_SUCCESS) CU(cuTexObjectDestroy)(o);
  return res;
}

}  // namespace

TEST_CASE("driver: texture objects describe what they were made with", "[driver][textures]") {
  Ctx ctx(0);
  CUarray a = make_array_3d(16, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
  const CUDA_RESOURCE_DESC r = array_resource(a);
  CUDA_TEXTURE_DESC t = sampler(CU_TR_FILTER_MODE_LINEAR, CU_TRSF_NORMALIZED_COORDINATES);
  t.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
  t.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER;
  t.borderColor[0] = 0.25f, t.borderColor[3] = 1.0f;
  t.maxAnisotropy = 4;
  CUtexObject tex = 0;
  CU_OK(CU(cuTexObjectCreate)(&tex, &r, &t, nullptr));
  CHECK(tex != 0);
  CUDA_RESOURCE_DESC rd;
  CU_OK(CU(cuTexObjectGetResourceDesc)(&rd, tex));
  CHECK((rd.resType == CU_RESOURCE_TYPE_ARRAY && rd.res.array.hArray == a && rd.flags == 0));
  CUDA_TEXTURE_DESC td;
  CU_OK(CU(cuTexObjectGetTextureDesc)(&td, tex));
  CHECK((td.addressMode[0] == CU_TR_ADDRESS_MODE_WRAP && td.addressMode[1] == CU_TR_ADDRESS_MODE_BORDER &&
         td.addressMode[2] == CU_TR_ADDRESS_MODE_CLAMP && td.filterMode == CU_TR_FILTER_MODE_LINEAR &&
         td.flags == CU_TRSF_NORMALIZED_COORDINATES && td.maxAnisotropy == 4 && td.borderColor[0] == 0.25f &&
         td.borderColor[1] == 0.0f && td.borderColor[3] == 1.0f));
  CUDA_RESOURCE_VIEW_DESC vd{};
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectGetResourceViewDesc)(&vd, tex));  // made without a view
  // With a view of the whole array (no reformatting).
  CUDA_RESOURCE_VIEW_DESC view{};
  view.width = 16, view.height = 8;
  CUtexObject viewed = 0;
  CU_OK(CU(cuTexObjectCreate)(&viewed, &r, &t, &view));
  CU_OK(CU(cuTexObjectGetResourceViewDesc)(&vd, viewed));
  CHECK((vd.format == CU_RES_VIEW_FORMAT_NONE && vd.width == 16 && vd.height == 8 && vd.depth == 0));
  view.width = 8;  // another size
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(r, t, &view));
  view.width = 16, view.format = static_cast<CUresourceViewFormat>(0x16);  // FLOAT_1X32: a reformat
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, make_tex(r, t, &view));
  view.format = static_cast<CUresourceViewFormat>(0x23);  // past CU_RES_VIEW_FORMAT_UNSIGNED_BC7: no format
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(r, t, &view));
  view.format = static_cast<CUresourceViewFormat>(-1);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(r, t, &view));
  // Mipmap levels of an array that has none.
  view.format = CU_RES_VIEW_FORMAT_NONE, view.lastMipmapLevel = 1;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(r, t, &view));
  view.lastMipmapLevel = 0, view.firstMipmapLevel = 1;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(r, t, &view));

  // A surface of the same array.
  CUsurfObject surf = 0;
  CU_OK(CU(cuSurfObjectCreate)(&surf, &r));
  CU_OK(CU(cuSurfObjectGetResourceDesc)(&rd, surf));
  CHECK((rd.resType == CU_RESOURCE_TYPE_ARRAY && rd.res.array.hArray == a));
  // Each kind's calls refuse the other kind's handles.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectGetResourceDesc)(&rd, surf));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuSurfObjectDestroy)(tex));

  // Destroyed handles are refused, also once their slot is taken again.
  CU_OK(CU(cuTexObjectDestroy)(tex));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectGetTextureDesc)(&td, tex));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectDestroy)(tex));
  CUtexObject again = 0;
  CU_OK(CU(cuTexObjectCreate)(&again, &r, &t, nullptr));
  CHECK(again != tex);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectGetTextureDesc)(&td, tex));
  CU_OK(CU(cuTexObjectGetTextureDesc)(&td, again));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectDestroy)(0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectGetResourceDesc)(nullptr, again));
  for (CUtexObject o : {again, viewed}) CU_OK(CU(cuTexObjectDestroy)(o));
  CU_OK(CU(cuSurfObjectDestroy)(surf));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuSurfObjectGetResourceDesc)(&rd, surf));
  // An object of a destroyed array cannot be made.
  CU_OK(CU(cuArrayDestroy)(a));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(r, t));
}

TEST_CASE("driver: texture and surface resources and samplers are checked", "[driver][textures]") {
  Ctx ctx(0);
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, 4096));
  const CUDA_TEXTURE_DESC point = sampler(CU_TR_FILTER_MODE_POINT, 0);
  // Linear memory: aligned to the texture alignment, inside one allocation, a known format.
  CU_EQ(CUDA_SUCCESS, make_tex(linear_resource(d, CU_AD_FORMAT_FLOAT, 1, 4096), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(linear_resource(d + 4, CU_AD_FORMAT_FLOAT, 1, 4000), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(linear_resource(d, CU_AD_FORMAT_FLOAT, 1, 4097), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(linear_resource(d, CU_AD_FORMAT_FLOAT, 1, 0), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(linear_resource(0, CU_AD_FORMAT_FLOAT, 1, 64), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(linear_resource(d, CU_AD_FORMAT_FLOAT, 3, 4096), point));
  std::vector<unsigned char> host(8192);
  const CUdeviceptr h = (reinterpret_cast<CUdeviceptr>(host.data()) + 511) / 512 * 512;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(linear_resource(h, CU_AD_FORMAT_FLOAT, 1, 64), point));
  // Pitched memory: a pitch on the pitch alignment, at least a row, rows inside the allocation.
  CU_EQ(CUDA_SUCCESS, make_tex(pitch_resource(d, CU_AD_FORMAT_UNSIGNED_INT8, 4, 16, 16, 256), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(pitch_resource(d, CU_AD_FORMAT_UNSIGNED_INT8, 4, 16, 16, 100), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(pitch_resource(d, CU_AD_FORMAT_UNSIGNED_INT8, 4, 80, 16, 256), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(pitch_resource(d, CU_AD_FORMAT_UNSIGNED_INT8, 4, 16, 17, 256), point));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(pitch_resource(d, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0, 16, 256), point));
  // Samplers: modes in range, known flags, no linear filtering of integers read as integers.
  CUarray u8 = make_array(8, 8, CU_AD_FORMAT_UNSIGNED_INT8, 4);
  CUarray i32 = make_array(8, 8, CU_AD_FORMAT_SIGNED_INT32, 1);
  const CUDA_RESOURCE_DESC ru8 = array_resource(u8), ri32 = array_resource(i32);
  CU_EQ(CUDA_SUCCESS, make_tex(ru8, sampler(CU_TR_FILTER_MODE_LINEAR, 0)));  // normalized floats
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(ru8, sampler(CU_TR_FILTER_MODE_LINEAR, CU_TRSF_READ_AS_INTEGER)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(ri32, sampler(CU_TR_FILTER_MODE_LINEAR, 0)));
  CU_EQ(CUDA_SUCCESS, make_tex(ri32, sampler(CU_TR_FILTER_MODE_POINT, CU_TRSF_READ_AS_INTEGER)));
  CUDA_TEXTURE_DESC bad = point;
  bad.addressMode[2] = static_cast<CUaddress_mode>(4);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(ru8, bad));
  bad = point;
  bad.filterMode = static_cast<CUfilter_mode>(2);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(ru8, bad));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(ru8, sampler(CU_TR_FILTER_MODE_POINT, 0x1000)));
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, make_tex(ru8, sampler(CU_TR_FILTER_MODE_POINT, CU_TRSF_SRGB)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(ru8, sampler(CU_TR_FILTER_MODE_POINT, CU_TRSF_SEAMLESS_CUBEMAP)));
  CUDA_RESOURCE_DESC flagged = ru8;
  flagged.flags = 1;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(flagged, point));
  CUDA_RESOURCE_DESC unknown = ru8;
  unknown.resType = static_cast<CUresourcetype>(7);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, make_tex(unknown, point));
  CUtexObject o = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectCreate)(&o, &ru8, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectCreate)(nullptr, &ru8, &point, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectCreate)(&o, nullptr, &point, nullptr));
  // Surfaces: arrays made for surface access only.
  CUsurfObject s = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuSurfObjectCreate)(&s, &ru8));
  const CUDA_RESOURCE_DESC lin = linear_resource(d, CU_AD_FORMAT_FLOAT, 1, 4096);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuSurfObjectCreate)(&s, &lin));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuSurfObjectCreate)(&s, nullptr));
  CU_OK(CU(cuArrayDestroy)(u8));
  CU_OK(CU(cuArrayDestroy)(i32));
  CU_OK(CU(cuMemFree_v2)(d));
}

TEST_CASE("driver: texture objects go with their context", "[driver][textures]") {
  init();
  CUcontext c = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&c, 0, 0));
  CUarray a = make_array(4, 4, CU_AD_FORMAT_FLOAT, 1);
  const CUDA_RESOURCE_DESC r = array_resource(a);
  const CUDA_TEXTURE_DESC t = sampler(CU_TR_FILTER_MODE_POINT, 0);
  CUtexObject tex = 0;
  CU_OK(CU(cuTexObjectCreate)(&tex, &r, &t, nullptr));
  CU_OK(CU(cuCtxDestroy_v2)(c));
  Ctx ctx(0);
  CUDA_RESOURCE_DESC rd;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectGetResourceDesc)(&rd, tex));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuTexObjectDestroy)(tex));
}
