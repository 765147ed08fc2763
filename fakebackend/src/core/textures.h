// SPDX-License-Identifier: Apache-2.0
// Texture and surface objects (cuTexObjectCreate / cudaCreateTextureObject, cuSurfObjectCreate /
// cudaCreateSurfaceObject): what a kernel's tex, tld4, txq, suld, sust and suq instructions
// read and write (kernels/textures.cpp samples them). Both APIs share the objects; their
// descriptors are kept here as the driver's numbers (CUresourcetype, CUarray_format,
// CUaddress_mode, CUfilter_mode, CU_TRSF_*), which the runtime's translate to one for one.
//
// A handle (CUtexObject, CUsurfObject: 64-bit values) is a slot of one table and that slot's
// generation: generation << 32 | (slot + 1). 0 is never a handle; a destroyed object's handle
// is refused once its slot is taken again, because the generation moved on. An object goes
// with the context it was made in.
#pragma once
#include "core/arrays.h"
#include "core/errors.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace fg {

struct Context;

namespace textures {

// Resource types (CUresourcetype).
inline constexpr int kArray = 0, kMipmappedArray = 1, kLinear = 2, kPitch2D = 3;
// Address modes (CUaddress_mode) and filter modes (CUfilter_mode).
inline constexpr int kWrap = 0, kClamp = 1, kMirror = 2, kBorder = 3;
inline constexpr int kPoint = 0, kLinearFilter = 1;
// Resource view formats (CUresourceViewFormat): NONE and the last one (UNSIGNED_BC7).
inline constexpr int kViewFormatNone = 0, kViewFormatLast = 0x22;
// CU_TRSF_* flags.
inline constexpr unsigned kReadAsInteger = 0x01, kNormalizedCoordinates = 0x02, kSrgb = 0x10;
inline constexpr unsigned kDisableTrilinear = 0x20, kSeamlessCubemap = 0x40;

// What an object reads: the CUDA_RESOURCE_DESC it was made with.
struct Resource {
  int type = kArray;
  uintptr_t array = 0;  // kArray: the array's handle
  uintptr_t ptr = 0;    // kLinear, kPitch2D: the device memory
  uint32_t format = 0, channels = 0;
  size_t size = 0;                          // kLinear: bytes
  size_t width = 0, height = 0, pitch = 0;  // kPitch2D: elements, rows, bytes between rows
};

// How a texture samples: the CUDA_TEXTURE_DESC it was made with.
struct Sampler {
  int address[3] = {kWrap, kWrap, kWrap};
  int filter = kPoint;
  unsigned flags = 0;
  unsigned max_anisotropy = 0;
  int mipmap_filter = kPoint;
  float mipmap_bias = 0, min_lod = 0, max_lod = 0;
  float border[4] = {0, 0, 0, 0};
};

// A CUDA_RESOURCE_VIEW_DESC (only "no reformatting, the whole resource" is modelled).
struct View {
  int format = 0;
  size_t width = 0, height = 0, depth = 0;
  unsigned first_mip = 0, last_mip = 0, first_layer = 0, last_layer = 0;
};

// The sampler fields the driver's CUDA_TEXTURE_DESC and the runtime's cudaTextureDesc name
// alike (the address and filter modes and the flags each API spells its own way).
template <typename Desc>
void copy_level_fields(const Desc& d, Sampler* s) {
  s->max_anisotropy = d.maxAnisotropy;
  s->mipmap_filter = static_cast<int>(d.mipmapFilterMode);
  s->mipmap_bias = d.mipmapLevelBias;
  s->min_lod = d.minMipmapLevelClamp;
  s->max_lod = d.maxMipmapLevelClamp;
  for (int i = 0; i < 4; ++i) s->border[i] = d.borderColor[i];
}

// A CUDA_RESOURCE_VIEW_DESC or cudaResourceViewDesc.
template <typename Desc>
View view_of(const Desc& d) {
  View v;
  v.format = static_cast<int>(d.format);
  v.width = d.width, v.height = d.height, v.depth = d.depth;
  v.first_mip = d.firstMipmapLevel, v.last_mip = d.lastMipmapLevel;
  v.first_layer = d.firstLayer, v.last_layer = d.lastLayer;
  return v;
}

// The texels an object reaches, resolved when it is made: element (x, y, z) is at
// base + z * slice + y * pitch + x * element bytes, for x < width, y < height, z < depth
// (z counts the layers of a layered array).
struct Texels {
  char* base = nullptr;
  arrays::Element elem;
  size_t width = 1, height = 1, depth = 1;
  size_t pitch = 0, slice = 0;
  size_t span = 0;  // bytes from base to one past the last texel
  bool layered = false;
  int dims = 1;  // 1, 2 or 3 (a layered array: its layers' dimensions)
};

struct Object {
  bool surface = false;
  Context* ctx = nullptr;
  Resource res;
  Sampler tex;  // textures only
  bool has_view = false;
  View view;
  Texels texels;
};

// Makes a texture (`tex` non-null) or surface object of `res` in `ctx`. InvalidValue for what
// the driver documents as invalid: an array handle that names no live array (or one without
// surface access, for a surface), linear or pitched memory that is not aligned to the
// device's texture alignment, not inside one allocation or past the device's linear-texture
// limits, an element format no array may have, unknown flags, an address or filter mode out
// of range, linear filtering of values read as integers, a view of another size, of a format no
// CUresourceViewFormat names or of mipmap levels (the array is not mipmapped); a surface
// of anything but an array. NotSupported for what the fake does not model: mipmapped arrays,
// sRGB, views that reformat or select some of a layered array's layers, video formats.
Status create(Context* ctx, const Resource& res, const Sampler* tex, const View* view, uint64_t* handle);
// Destroys a live object of the kind (`surface`) `handle` names; InvalidValue otherwise.
Status destroy(uint64_t handle, bool surface);
// The live object of the kind `handle` names (a copy), or false.
bool find(uint64_t handle, bool surface, Object* out);
// The same for kernels, which keep it while they sample (null for anything else).
std::shared_ptr<const Object> lookup(uint64_t handle) noexcept;
// Bumped whenever an object goes: what a kernel remembered of one is stale then.
uint64_t generation() noexcept;

// The context's objects are gone with it.
void forget_context(const Context* ctx) noexcept;
// A forked child starts without objects.
void after_fork_child() noexcept;

}  // namespace textures
}  // namespace fg
