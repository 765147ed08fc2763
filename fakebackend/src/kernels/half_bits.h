// SPDX-License-Identifier: Apache-2.0
// IEEE binary16 to and from float in portable C++ (the compilers this builds with do not all
// take _Float16): the PTX parser's f16 immediates, textures' half texels, wmma's f16 fragments.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace fg::kernels {

// IEEE binary16 bits of `f`, rounded to nearest even.
inline uint16_t to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

// The float (exactly) of binary16 bits `h`.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | man << 13);  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | (exp + 112) << 23 | man << 13);
  if (man == 0) return std::bit_cast<float>(sign);
  const float v = std::ldexp(static_cast<float>(man), -24);  // subnormal: exact in float
  return sign ? -v : v;
}

}  // namespace fg::kernels
