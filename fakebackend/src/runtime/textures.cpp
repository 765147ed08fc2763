// SPDX-License-Identifier: Apache-2.0
// Texture and surface objects through the runtime: cudaCreateTextureObject/
// cudaDestroyTextureObject/cudaGetTextureObjectResourceDesc/TextureDesc/ResourceViewDesc,
// cudaCreateSurfaceObject/cudaDestroySurfaceObject/cudaGetSurfaceObjectResourceDesc. The
// objects are the core's (core/textures.h), shared with the driver API: the runtime's
// descriptors translate one for one (a channel descriptor is a format and a channel count;
// cudaReadModeElementType is CU_TRSF_READ_AS_INTEGER; normalizedCoords, sRGB,
// disableTrilinearOptimization and seamlessCubemap are the other CU_TRSF_ flags). A handle
// that names no live object of the kind is cudaErrorInvalidValue, as documented.
#include "core/textures.h"
#include "runtime/channels.h"

#include <cstring>

using namespace fgapi;
using fg::rt::api;
using fg::rt::to_cuda;
namespace tx = fg::textures;

namespace {

cudaError_t resource_of(const cudaResourceDesc& d, tx::Resource* out) {
  tx::Resource r;
  r.type = static_cast<int>(d.resType);
  switch (r.type) {
    case tx::kArray: r.array = reinterpret_cast<uintptr_t>(d.res.array.array); break;
    case tx::kMipmappedArray: break;
    case tx::kLinear:
      if (cudaError_t e = fg::rt::format_of(d.res.linear.desc, &r.format, &r.channels); e != cudaSuccess) return e;
      r.ptr = reinterpret_cast<uintptr_t>(d.res.linear.devPtr);
      r.size = d.res.linear.sizeInBytes;
      break;
    case tx::kPitch2D:
      if (cudaError_t e = fg::rt::format_of(d.res.pitch2D.desc, &r.format, &r.channels); e != cudaSuccess) return e;
      r.ptr = reinterpret_cast<uintptr_t>(d.res.pitch2D.devPtr);
      r.width = d.res.pitch2D.width;
      r.height = d.res.pitch2D.height;
      r.pitch = d.res.pitch2D.pitchInBytes;
      break;
    default: return cudaErrorInvalidValue;
  }
  *out = r;
  return cudaSuccess;
}

cudaResourceDesc desc_of(const tx::Resource& r) {
  cudaResourceDesc d;
  std::memset(&d, 0, sizeof d);
  d.resType = static_cast<cudaResourceType>(r.type);
  switch (r.type) {
    case tx::kArray: d.res.array.array = reinterpret_cast<cudaArray_t>(r.array); break;
    case tx::kLinear:
      d.res.linear.devPtr = reinterpret_cast<void*>(r.ptr);
      d.res.linear.desc = fg::rt::desc_of(r.format, r.channels);
      d.res.linear.sizeInBytes = r.size;
      break;
    case tx::kPitch2D:
      d.res.pitch2D.devPtr = reinterpret_cast<void*>(r.ptr);
      d.res.pitch2D.desc = fg::rt::desc_of(r.format, r.channels);
      d.res.pitch2D.width = r.width;
      d.res.pitch2D.height = r.height;
      d.res.pitch2D.pitchInBytes = r.pitch;
      break;
    default: break;
  }
  return d;
}

cudaError_t create(unsigned long long* out, const cudaResourceDesc* res, const cudaTextureDesc* tex,
                   const cudaResourceViewDesc* view, bool surface) {
  return api([&]() -> cudaError_t {
    if (!out || !res || (!surface && !tex)) return cudaErrorInvalidValue;
    if (res->flags != 0) return cudaErrorInvalidValue;
    if (surface && res->resType != cudaResourceTypeArray) return cudaErrorInvalidValue;  // surfaces are of arrays
    tx::Resource r;
    if (cudaError_t e = resource_of(*res, &r); e != cudaSuccess) return e;
    tx::Sampler s;
    if (tex) {
      for (int i = 0; i < 3; ++i) s.address[i] = static_cast<int>(tex->addressMode[i]);
      s.filter = static_cast<int>(tex->filterMode);
      const int read = static_cast<int>(tex->readMode);
      if (read != cudaReadModeElementType && read != cudaReadModeNormalizedFloat) return cudaErrorInvalidValue;
      s.flags = (read == cudaReadModeElementType ? tx::kReadAsInteger : 0) |
                (tex->normalizedCoords ? tx::kNormalizedCoordinates : 0) | (tex->sRGB ? tx::kSrgb : 0) |
                (tex->disableTrilinearOptimization ? tx::kDisableTrilinear : 0) |
                (tex->seamlessCubemap ? tx::kSeamlessCubemap : 0);
      tx::copy_level_fields(*tex, &s);
    }
    tx::View v;
    if (view) v = tx::view_of(*view);
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    uint64_t h = 0;
    if (cudaError_t e = to_cuda(tx::create(ctx, r, tex ? &s : nullptr, view ? &v : nullptr, &h)); e != cudaSuccess)
      return e;
    *out = h;
    return cudaSuccess;
  });
}

cudaError_t live_object(unsigned long long h, bool surface, tx::Object* out) {
  return tx::find(h, surface, out) ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaCreateTextureObject(cudaTextureObject_t* pTexObject,
                                                              const cudaResourceDesc* pResDesc,
                                                              const cudaTextureDesc* pTexDesc,
                                                              const cudaResourceViewDesc* pResViewDesc) {
  return create(pTexObject, pResDesc, pTexDesc, pResViewDesc, false);
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDestroyTextureObject(cudaTextureObject_t texObject) {
  return api([&] { return to_cuda(tx::destroy(texObject, false)); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetTextureObjectResourceDesc(cudaResourceDesc* pResDesc,
                                                                       cudaTextureObject_t texObject) {
  return api([&]() -> cudaError_t {
    if (!pResDesc) return cudaErrorInvalidValue;
    tx::Object o;
    if (cudaError_t e = live_object(texObject, false, &o); e != cudaSuccess) return e;
    *pResDesc = desc_of(o.res);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetTextureObjectTextureDesc(cudaTextureDesc* pTexDesc,
                                                                      cudaTextureObject_t texObject) {
  return api([&]() -> cudaError_t {
    if (!pTexDesc) return cudaErrorInvalidValue;
    tx::Object o;
    if (cudaError_t e = live_object(texObject, false, &o); e != cudaSuccess) return e;
    cudaTextureDesc d;
    std::memset(&d, 0, sizeof d);
    for (int i = 0; i < 3; ++i) d.addressMode[i] = static_cast<cudaTextureAddressMode>(o.tex.address[i]);
    d.filterMode = static_cast<cudaTextureFilterMode>(o.tex.filter);
    d.readMode = o.tex.flags & tx::kReadAsInteger ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
    d.sRGB = (o.tex.flags & tx::kSrgb) != 0;
    std::memcpy(d.borderColor, o.tex.border, sizeof d.borderColor);
    d.normalizedCoords = (o.tex.flags & tx::kNormalizedCoordinates) != 0;
    d.maxAnisotropy = o.tex.max_anisotropy;
    d.mipmapFilterMode = static_cast<cudaTextureFilterMode>(o.tex.mipmap_filter);
    d.mipmapLevelBias = o.tex.mipmap_bias;
    d.minMipmapLevelClamp = o.tex.min_lod;
    d.maxMipmapLevelClamp = o.tex.max_lod;
    d.disableTrilinearOptimization = (o.tex.flags & tx::kDisableTrilinear) != 0;
    d.seamlessCubemap = (o.tex.flags & tx::kSeamlessCubemap) != 0;
    *pTexDesc = d;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc* pResViewDesc,
                                                                           cudaTextureObject_t texObject) {
  return api([&]() -> cudaError_t {
    if (!pResViewDesc) return cudaErrorInvalidValue;
    tx::Object o;
    if (cudaError_t e = live_object(texObject, false, &o); e != cudaSuccess) return e;
    if (!o.has_view) return cudaErrorInvalidValue;  // made without one: none to describe
    cudaResourceViewDesc d;
    std::memset(&d, 0, sizeof d);
    d.format = static_cast<cudaResourceViewFormat>(o.view.format);
    d.width = o.view.width, d.height = o.view.height, d.depth = o.view.depth;
    d.firstMipmapLevel = o.view.first_mip, d.lastMipmapLevel = o.view.last_mip;
    d.firstLayer = o.view.first_layer, d.lastLayer = o.view.last_layer;
    *pResViewDesc = d;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject,
                                                              const cudaResourceDesc* pResDesc) {
  return create(pSurfObject, pResDesc, nullptr, nullptr, true);
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject) {
  return api([&] { return to_cuda(tx::destroy(surfObject, true)); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* pResDesc,
                                                                       cudaSurfaceObject_t surfObject) {
  return api([&]() -> cudaError_t {
    if (!pResDesc) return cudaErrorInvalidValue;
    tx::Object o;
    if (cudaError_t e = live_object(surfObject, true, &o); e != cudaSuccess) return e;
    *pResDesc = desc_of(o.res);
    return cudaSuccess;
  });
}
