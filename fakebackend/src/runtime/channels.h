// SPDX-License-Identifier: Apache-2.0
// The runtime's channel descriptors (cudaChannelFormatDesc: bits per channel x, y, z, w and a
// kind) against the driver's element formats (CUarray_format and a channel count), which the
// core's arrays and textures keep (core/arrays.h). Both ways, as NVIDIA's runtime translates
// them for the driver.
#pragma once
#include "core/arrays.h"
#include "runtime/common.h"

namespace fg::rt {

// The format and channel count a channel descriptor names: cudaErrorInvalidChannelDescriptor
// for one no array element can have (no channels, 3 channels, channels of different widths or
// after an empty one, widths the kind does not have, kind None); cudaErrorNotSupported for the
// video, block-compressed and 10-10-10-2 kinds the core does not lay out.
inline cudaError_t format_of(const fgapi::cudaChannelFormatDesc& d, uint32_t* format, uint32_t* channels) noexcept {
  using namespace fgapi;
  const int kind = static_cast<int>(d.f);
  if (kind >= cudaChannelFormatKindUnsignedNormalized8X1 && kind <= cudaChannelFormatKindSignedNormalized16X4) {
    // UNORM 8 x1 x2 x4, UNORM 16 …, SNORM 8 …, SNORM 16 …: CU_AD_FORMAT_UNORM_INT8X1 + index.
    const int i = kind - cudaChannelFormatKindUnsignedNormalized8X1;
    static constexpr uint32_t kChannels[3] = {1, 2, 4};
    *format = arrays::kNormFirst + static_cast<uint32_t>(i);
    *channels = kChannels[i % 3];
    return cudaSuccess;
  }
  if (kind != cudaChannelFormatKindSigned && kind != cudaChannelFormatKindUnsigned &&
      kind != cudaChannelFormatKindFloat)
    return kind == cudaChannelFormatKindNone || kind < 0 || kind > cudaChannelFormatKindUnsignedNormalized1010102
               ? cudaErrorInvalidChannelDescriptor
               : cudaErrorNotSupported;
  const int bits = d.x;
  uint32_t n = 0;
  if (d.y == 0 && d.z == 0 && d.w == 0) {
    n = 1;
  } else if (d.y == bits && d.z == 0 && d.w == 0) {
    n = 2;
  } else if (d.y == bits && d.z == bits && d.w == bits) {
    n = 4;
  } else {
    return cudaErrorInvalidChannelDescriptor;
  }
  uint32_t f = 0;
  if (kind == cudaChannelFormatKindFloat) {
    f = bits == 16 ? arrays::kHalf : bits == 32 ? arrays::kFloat : 0;
  } else {
    const bool sign = kind == cudaChannelFormatKindSigned;
    f = bits == 8    ? (sign ? arrays::kSignedInt8 : arrays::kUnsignedInt8)
        : bits == 16 ? (sign ? arrays::kSignedInt16 : arrays::kUnsignedInt16)
        : bits == 32 ? (sign ? arrays::kSignedInt32 : arrays::kUnsignedInt32)
                     : 0;
  }
  if (f == 0) return cudaErrorInvalidChannelDescriptor;
  *format = f;
  *channels = n;
  return cudaSuccess;
}

// The channel descriptor of an element format (one the core accepted).
inline fgapi::cudaChannelFormatDesc desc_of(uint32_t format, uint32_t channels) noexcept {
  using namespace fgapi;
  cudaChannelFormatDesc d{};
  arrays::Element e;
  if (arrays::element_of(format, channels, &e) != Status::Ok) {
    d.f = cudaChannelFormatKindNone;
    return d;
  }
  const int bits = static_cast<int>(e.channel_bytes * 8);
  int* c[4] = {&d.x, &d.y, &d.z, &d.w};
  for (uint32_t i = 0; i < channels && i < 4; ++i) *c[i] = bits;
  switch (e.kind) {
    case arrays::Channel::Unsigned: d.f = cudaChannelFormatKindUnsigned; break;
    case arrays::Channel::Signed: d.f = cudaChannelFormatKindSigned; break;
    case arrays::Channel::Float: d.f = cudaChannelFormatKindFloat; break;
    case arrays::Channel::UNorm:
    case arrays::Channel::SNorm:
      d.f = static_cast<cudaChannelFormatKind>(cudaChannelFormatKindUnsignedNormalized8X1 +
                                               static_cast<int>(format - arrays::kNormFirst));
      break;
  }
  return d;
}

}  // namespace fg::rt
