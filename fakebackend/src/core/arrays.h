// SPDX-License-Identifier: Apache-2.0
// CUDA arrays (cuArrayCreate / cuArray3DCreate / cudaMallocArray / cudaMalloc3DArray): opaque
// device memory that textures and surfaces read and write. The fake lays an array out as
// plain device memory, row-major without padding: element (x, y, z) is at
// base + ((z * rows + y) * width + x) * element bytes, layers of a layered array being its
// slices. The bytes are one device allocation of the array's context (booked in the ledger,
// announced, freed with the context), so copies and kernels reach them like any other
// device memory; the application only ever sees the array's handle.
//
// Handles are the core's never-reused numbers (Backend::new_handle, kind Array): a destroyed
// array's handle is refused however many arrays follow. Both APIs share the arrays (a
// cudaArray_t is a CUarray), and the descriptor rules live here: what each API checks on
// top (its own structs, the runtime's channel descriptors) is the shims'.
#pragma once
#include "core/errors.h"
#include "core/memory.h"

#include <cstddef>
#include <cstdint>

namespace fg {

struct Context;
struct Device;

namespace arrays {

// Element formats: the CUarray_format numbers.
inline constexpr uint32_t kUnsignedInt8 = 0x01, kUnsignedInt16 = 0x02, kUnsignedInt32 = 0x03;
inline constexpr uint32_t kSignedInt8 = 0x08, kSignedInt16 = 0x09, kSignedInt32 = 0x0a;
inline constexpr uint32_t kHalf = 0x10, kFloat = 0x20;
// CU_AD_FORMAT_UNORM_INT8X1 … SNORM_INT16X4 (0xc0 … 0xcb): channels named by the format.
inline constexpr uint32_t kNormFirst = 0xc0, kNormLast = 0xcb;

// cuArray3DCreate's flags (CUDA_ARRAY3D_*; cudaArray* use the same numbers).
inline constexpr unsigned kLayered = 0x01, kSurfaceLoadStore = 0x02, kCubemap = 0x04, kTextureGather = 0x08;
inline constexpr unsigned kDepthTexture = 0x10, kColorAttachment = 0x20, kSparse = 0x40, kDeferredMapping = 0x80;
inline constexpr unsigned kVideoEncodeDecode = 0x100;

// How the channels of a format hold their values.
enum class Channel : uint8_t {
  Unsigned,  // unsigned integer: read as integers, or normalized to [0, 1] (8 and 16 bits)
  Signed,    // signed integer: read as integers, or normalized to [-1, 1] (8 and 16 bits)
  Float,     // IEEE half or single
  UNorm,     // always read normalized to [0, 1]
  SNorm,     // always read normalized to [-1, 1]
};

// One element's layout: its channels, their kind and width.
struct Element {
  uint32_t format = 0;
  uint32_t channels = 0;
  uint32_t channel_bytes = 0;
  Channel kind = Channel::Unsigned;
  uint32_t bytes() const noexcept { return channels * channel_bytes; }
};

// The element of `format` with `channels` channels: Ok; InvalidValue for a number that is no
// CUarray_format, channels other than 1, 2 or 4, or channels that contradict a UNORM/SNORM
// format's; NotSupported for the formats the fake does not lay out (NV12 and the other video
// formats, block-compressed, 10-10-10-2).
Status element_of(uint32_t format, uint32_t channels, Element* out) noexcept;

// What an array is, as cuArray3DGetDescriptor answers: width, height and depth in elements
// (height 0: one-dimensional; depth 0: not 3-D nor layered; the layers of a layered array).
struct Desc {
  size_t width = 0, height = 0, depth = 0;
  uint32_t format = 0, channels = 0;
  unsigned flags = 0;
};

// A live array.
struct Array {
  uintptr_t handle = 0;
  Desc desc;
  Element elem;
  char* base = nullptr;  // its bytes (a device allocation)
  size_t row = 0;        // bytes of a row: width × element bytes
  size_t rows = 0;       // rows of a slice (height, at least 1)
  size_t slices = 0;     // slices or layers (depth, at least 1)
  size_t bytes = 0;      // row × rows × slices
  Context* ctx = nullptr;
};

// The extent rules of cuArray3DCreate against `dev`'s texture and surface limits (its device
// attributes): InvalidValue for a zero width, a shape the flags do not allow (a depth
// without a height unless layered, a cubemap that is not square with 6 faces per cube) or an
// extent past the limits; NotSupported for sparse, deferred-mapping and video arrays.
Status check_desc(const Device* dev, const Desc& d, Element* elem) noexcept;

// Creates an array in `ctx` (checked with check_desc): its handle in *handle. OutOfMemory when
// the device has no room.
Status create(Context* ctx, const Desc& d, ApiOrigin api, uintptr_t* handle);
// Destroys an array after the work queued on its context; InvalidHandle for anything but a
// live array's handle.
Status destroy(uintptr_t handle, ApiOrigin api);
// The live array `handle` names (a copy of its record): false for anything else.
bool find(uintptr_t handle, Array* out) noexcept;
// Bumped whenever an array goes: what a texture or surface remembered of one is stale then.
uint64_t generation() noexcept;

// The context's arrays are gone (their bytes went with the context's allocations).
void forget_context(const Context* ctx) noexcept;
// A forked child starts without arrays.
void after_fork_child() noexcept;

}  // namespace arrays
}  // namespace fg
