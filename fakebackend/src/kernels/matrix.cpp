// SPDX-License-Identifier: Apache-2.0
// The product of wmma.mma.sync (kernels/matrix.h) once a warp's lanes have met: each result
// element is C's plus the dot product of its row of A and column of B, accumulated in the
// accumulator's precision (f16 and f32 results: a float accumulator with fused multiply-adds,
// rounded to half at the end for f16; f64: double fused multiply-adds; integers: exact, wrapped
// to 32 bits or saturated with .satfinite). Products of f16, bf16 and tf32 inputs are exact in
// float. A GPU may order the additions otherwise: results of inputs whose sums round may differ
// in the last bits, as they differ between GPU generations.
#include "kernels/matrix.h"

#include "kernels/abi.h"
#include "kernels/half_bits.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace fg::kernels::matrix {
namespace {

// Element e of a fragment whose registers start at `w`: its raw bits.
uint64_t raw(const Fragment& f, const uint32_t* w, unsigned e) {
  switch (elem_bits(f.elem)) {
    case 8: return w[e / 4] >> (e % 4 * 8) & 0xffu;
    case 16: return w[e / 2] >> (e % 2 * 16) & 0xffffu;
    case 64: return w[2 * e] | uint64_t{w[2 * e + 1]} << 32;
    default: return w[e];
  }
}

float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double value(Elem t, uint64_t bits) {
  switch (t) {
    case Elem::F16: return half_to_float(static_cast<uint16_t>(bits));
    case Elem::BF16: return as_float(static_cast<uint32_t>(bits) << 16);
    case Elem::TF32: return as_float(static_cast<uint32_t>(bits) & ~0x1fffu);  // the 10 mantissa bits tf32 keeps
    case Elem::F32: return as_float(static_cast<uint32_t>(bits));
    case Elem::F64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case Elem::S8: return static_cast<int8_t>(bits);
    case Elem::U8: return static_cast<uint8_t>(bits);
    case Elem::S32: return static_cast<int32_t>(bits);
  }
  return 0;
}

// Where element (row, col) of fragment `f` lives: the first lane and element holding it.
void locate(const Fragment& f, unsigned row, unsigned col, unsigned* lane, unsigned* e) {
  const unsigned idx = row * f.cols + col;
  *lane = idx / f.elements;
  *e = idx % f.elements;
}

void put(const Fragment& f, uint32_t* w, unsigned e, uint64_t bits) {
  switch (elem_bits(f.elem)) {
    case 16: {
      const unsigned shift = e % 2 * 16;
      w[e / 2] = (w[e / 2] & ~(0xffffu << shift)) | static_cast<uint32_t>(bits & 0xffffu) << shift;
      break;
    }
    case 64:
      w[2 * e] = static_cast<uint32_t>(bits);
      w[2 * e + 1] = static_cast<uint32_t>(bits >> 32);
      break;
    default: w[e] = static_cast<uint32_t>(bits);
  }
}

}  // namespace

void lane_product(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* d) {
  Fragment fa, fb, fc, fd;
  if (!fragment(op.shape, Role::A, op.a, &fa) || !fragment(op.shape, Role::B, op.b, &fb) ||
      !fragment(op.shape, Role::C, op.c, &fc) || !fragment(op.shape, Role::C, op.d, &fd))
    return;  // the compiler only emits the combinations fragment() takes
  const unsigned b_at = fa.words(), c_at = b_at + fb.words();
  auto element = [&](const Fragment& f, unsigned at, unsigned row, unsigned col) -> double {
    unsigned l, e;
    locate(f, row, col, &l, &e);
    return lanes[l] ? value(f.elem, raw(f, lanes[l] + at, e)) : 0.0;
  };
  const uint32_t* own = lanes[lane];
  for (unsigned e = 0; e < fd.elements; ++e) {
    unsigned row, col;
    fd.position(lane, e, &row, &col);
    const double c = own ? value(fc.elem, raw(fc, own + c_at, e)) : 0.0;
    uint64_t bits = 0;
    if (op.d == Elem::S32) {
      int64_t acc = static_cast<int64_t>(c);
      for (unsigned k = 0; k < op.shape.k; ++k)
        acc += static_cast<int64_t>(element(fa, 0, row, k)) * static_cast<int64_t>(element(fb, b_at, k, col));
      if (op.satfinite)
        acc = std::min<int64_t>(std::max<int64_t>(acc, std::numeric_limits<int32_t>::min()),
                                std::numeric_limits<int32_t>::max());
      bits = static_cast<uint32_t>(acc);
    } else if (op.d == Elem::F64) {
      double acc = c;
      for (unsigned k = 0; k < op.shape.k; ++k) acc = std::fma(element(fa, 0, row, k), element(fb, b_at, k, col), acc);
      std::memcpy(&bits, &acc, 8);
    } else {
      float acc = static_cast<float>(c);
      for (unsigned k = 0; k < op.shape.k; ++k)
        acc = std::fma(static_cast<float>(element(fa, 0, row, k)), static_cast<float>(element(fb, b_at, k, col)), acc);
      if (op.satfinite) acc = std::isnan(acc) ? 0.0f : std::fmax(std::fmin(acc, std::numeric_limits<float>::max()),
                                                                   -std::numeric_limits<float>::max());
      if (op.d == Elem::F16) {
        uint16_t hb = to_half(acc);
        if (op.satfinite && (hb & 0x7c00u) == 0x7c00u) hb = static_cast<uint16_t>((hb & 0x8000u) | 0x7bffu);
        bits = hb;
      } else {
        uint32_t u;
        std::memcpy(&u, &acc, 4);
        bits = u;
      }
    }
    put(fd, d, e, bits);
  }
}

}  // namespace fg::kernels::matrix

extern "C" void fg_rt_warp_mma(uint32_t op, const unsigned char* lanes, uint64_t stride, uint32_t lane, uint32_t group,
                               uint32_t* d) {
  const uint32_t* ptrs[32];
  for (unsigned k = 0; k < 32; ++k)
    ptrs[k] = (group >> k & 1) ? reinterpret_cast<const uint32_t*>(lanes + k * stride) : nullptr;
  fg::kernels::matrix::lane_product(fg::kernels::matrix::Op::unpack(op), ptrs, lane, d);
}
