// SPDX-License-Identifier: Apache-2.0
// Texture and surface objects through the driver API: cuTexObjectCreate/Destroy/
// GetResourceDesc/GetTextureDesc/GetResourceViewDesc, cuSurfObjectCreate/Destroy/
// GetResourceDesc. The objects and their rules are the core's (core/textures.h); a handle
// that names no live object of the kind is CUDA_ERROR_INVALID_VALUE, the one code these
// pages list.
#include "driver/internal.h"

#include "core/textures.h"

#include <cstring>

using namespace fg;
using namespace fg::drv;

namespace {

textures::Resource resource_of(const CUDA_RESOURCE_DESC& d) {
  textures::Resource r;
  r.type = static_cast<int>(d.resType);
  switch (r.type) {
    case textures::kArray: r.array = reinterpret_cast<uintptr_t>(d.res.array.hArray); break;
    case textures::kLinear:
      r.ptr = d.res.linear.devPtr;
      r.format = static_cast<uint32_t>(d.res.linear.format);
      r.channels = d.res.linear.numChannels;
      r.size = d.res.linear.sizeInBytes;
      break;
    case textures::kPitch2D:
      r.ptr = d.res.pitch2D.devPtr;
      r.format = static_cast<uint32_t>(d.res.pitch2D.format);
      r.channels = d.res.pitch2D.numChannels;
      r.width = d.res.pitch2D.width;
      r.height = d.res.pitch2D.height;
      r.pitch = d.res.pitch2D.pitchInBytes;
      break;
    default: break;
  }
  return r;
}

CUDA_RESOURCE_DESC desc_of(const textures::Resource& r) {
  CUDA_RESOURCE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.resType = static_cast<CUresourcetype>(r.type);
  switch (r.type) {
    case textures::kArray: d.res.array.hArray = reinterpret_cast<CUarray>(r.array); break;
    case textures::kLinear:
      d.res.linear.devPtr = r.ptr;
      d.res.linear.format = static_cast<CUarray_format>(r.format);
      d.res.linear.numChannels = r.channels;
      d.res.linear.sizeInBytes = r.size;
      break;
    case textures::kPitch2D:
      d.res.pitch2D.devPtr = r.ptr;
      d.res.pitch2D.format = static_cast<CUarray_format>(r.format);
      d.res.pitch2D.numChannels = r.channels;
      d.res.pitch2D.width = r.width;
      d.res.pitch2D.height = r.height;
      d.res.pitch2D.pitchInBytes = r.pitch;
      break;
    default: break;
  }
  return d;
}

CUresult create(unsigned long long* out, const CUDA_RESOURCE_DESC* res, const CUDA_TEXTURE_DESC* tex,
                const CUDA_RESOURCE_VIEW_DESC* view, bool surface) {
  return api([&](Backend& b) -> CUresult {
    if (!out || !res || (!surface && !tex)) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    if (res->flags != 0) return CUDA_ERROR_INVALID_VALUE;
    textures::Sampler s;
    if (tex) {
      for (int i = 0; i < 3; ++i) s.address[i] = static_cast<int>(tex->addressMode[i]);
      s.filter = static_cast<int>(tex->filterMode);
      s.flags = tex->flags;
      textures::copy_level_fields(*tex, &s);
    }
    textures::View v;
    if (view) v = textures::view_of(*view);
    uint64_t h = 0;
    if (CUresult r = to_cu(textures::create(ctx, resource_of(*res), tex ? &s : nullptr, view ? &v : nullptr, &h)))
      return r;
    *out = h;
    return CUDA_SUCCESS;
  });
}

// The live object of the kind a handle names: CUDA_ERROR_INVALID_VALUE otherwise.
CUresult live_object(uint64_t h, bool surface, textures::Object* out) {
  return textures::find(h, surface, out) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

extern "C" FG_IMPL CUresult fgimpl_cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                                                     const CUDA_TEXTURE_DESC* pTexDesc,
                                                     const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  return create(pTexObject, pResDesc, pTexDesc, pResViewDesc, false);
}

extern "C" FG_IMPL CUresult fgimpl_cuTexObjectDestroy(CUtexObject texObject) {
  return api([&](Backend&) -> CUresult { return to_cu(textures::destroy(texObject, false)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  return api([&](Backend&) -> CUresult {
    if (!pResDesc) return CUDA_ERROR_INVALID_VALUE;
    textures::Object o;
    if (CUresult r = live_object(texObject, false, &o)) return r;
    *pResDesc = desc_of(o.res);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  return api([&](Backend&) -> CUresult {
    if (!pTexDesc) return CUDA_ERROR_INVALID_VALUE;
    textures::Object o;
    if (CUresult r = live_object(texObject, false, &o)) return r;
    CUDA_TEXTURE_DESC d;
    std::memset(&d, 0, sizeof d);
    for (int i = 0; i < 3; ++i) d.addressMode[i] = static_cast<CUaddress_mode>(o.tex.address[i]);
    d.filterMode = static_cast<CUfilter_mode>(o.tex.filter);
    d.flags = o.tex.flags;
    d.maxAnisotropy = o.tex.max_anisotropy;
    d.mipmapFilterMode = static_cast<CUfilter_mode>(o.tex.mipmap_filter);
    d.mipmapLevelBias = o.tex.mipmap_bias;
    d.minMipmapLevelClamp = o.tex.min_lod;
    d.maxMipmapLevelClamp = o.tex.max_lod;
    std::memcpy(d.borderColor, o.tex.border, sizeof d.borderColor);
    *pTexDesc = d;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc,
                                                                  CUtexObject texObject) {
  return api([&](Backend&) -> CUresult {
    if (!pResViewDesc) return CUDA_ERROR_INVALID_VALUE;
    textures::Object o;
    if (CUresult r = live_object(texObject, false, &o)) return r;
    // An object made without a view has none to describe.
    if (!o.has_view) return CUDA_ERROR_INVALID_VALUE;
    CUDA_RESOURCE_VIEW_DESC d;
    std::memset(&d, 0, sizeof d);
    d.format = static_cast<CUresourceViewFormat>(o.view.format);
    d.width = o.view.width, d.height = o.view.height, d.depth = o.view.depth;
    d.firstMipmapLevel = o.view.first_mip, d.lastMipmapLevel = o.view.last_mip;
    d.firstLayer = o.view.first_layer, d.lastLayer = o.view.last_layer;
    *pResViewDesc = d;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  return create(pSurfObject, pResDesc, nullptr, nullptr, true);
}

extern "C" FG_IMPL CUresult fgimpl_cuSurfObjectDestroy(CUsurfObject surfObject) {
  return api([&](Backend&) -> CUresult { return to_cu(textures::destroy(surfObject, true)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  return api([&](Backend&) -> CUresult {
    if (!pResDesc) return CUDA_ERROR_INVALID_VALUE;
    textures::Object o;
    if (CUresult r = live_object(surfObject, true, &o)) return r;
    *pResDesc = desc_of(o.res);
    return CUDA_SUCCESS;
  });
}
