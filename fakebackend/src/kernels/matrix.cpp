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

// Where each element of a fragment lives: the first lane and element holding it, by
// row × cols + col.
struct Where {
  uint8_t lane = 0, e = 0;
};
void locate_all(const Fragment& f, Where* out) {
  bool* seen = static_cast<bool*>(__builtin_alloca(f.rows * f.cols));
  std::memset(seen, 0, f.rows * f.cols);
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned e = 0; e < f.elements; ++e) {
      unsigned r, c;
      f.position(l, e, &r, &c);
      const unsigned idx = r * f.cols + c;
      if (idx < f.rows * f.cols && !seen[idx]) {
        seen[idx] = true;
        out[idx] = {static_cast<uint8_t>(l), static_cast<uint8_t>(e)};
      }
    }
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

namespace {

void product(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* d) {
  Fragment fa, fb, fc, fd;
  if (!op.fragments(&fa, &fb, &fc, &fd)) return;  // the compiler only emits what fragments() takes
  const unsigned b_at = fa.words(), c_at = b_at + fb.words();
  Where wa[32 * 32], wb[32 * 32];
  locate_all(fa, wa);
  locate_all(fb, wb);
  auto element = [&](const Fragment& f, const Where* w, unsigned at, unsigned row, unsigned col) -> double {
    const Where x = w[row * f.cols + col];
    return lanes[x.lane] ? value(f.elem, raw(f, lanes[x.lane] + at, x.e)) : 0.0;
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
        acc += static_cast<int64_t>(element(fa, wa, 0, row, k)) * static_cast<int64_t>(element(fb, wb, b_at, k, col));
      if (op.satfinite)
        acc = std::min<int64_t>(std::max<int64_t>(acc, std::numeric_limits<int32_t>::min()),
                                std::numeric_limits<int32_t>::max());
      bits = static_cast<uint32_t>(acc);
    } else if (op.d == Elem::F64) {
      double acc = c;
      for (unsigned k = 0; k < op.shape.k; ++k)
        acc = std::fma(element(fa, wa, 0, row, k), element(fb, wb, b_at, k, col), acc);
      std::memcpy(&bits, &acc, 8);
    } else {
      float acc = static_cast<float>(c);
      for (unsigned k = 0; k < op.shape.k; ++k)
        acc = std::fma(static_cast<float>(element(fa, wa, 0, row, k)),
                       static_cast<float>(element(fb, wb, b_at, k, col)), acc);
      if (op.satfinite)
        acc = std::isnan(acc)
                  ? 0.0f
                  : std::fmax(std::fmin(acc, std::numeric_limits<float>::max()), -std::numeric_limits<float>::max());
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

uint16_t half_of(const uint32_t* row, unsigned i) { return static_cast<uint16_t>(row[i / 2] >> (i % 2 * 16)); }

// ldmatrix: lanes 8i .. 8i+7 gave matrix i's rows (8 halves each); lane l gets, of each
// matrix, row l / 4's halves 2 (l % 4) and 2 (l % 4) + 1 (.trans: column l / 4's).
void load_rows(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* out) {
  for (unsigned i = 0; i < op.count; ++i) {
    uint32_t w = 0;
    for (unsigned j = 0; j < 2; ++j) {
      const unsigned r = op.trans ? (lane % 4) * 2 + j : lane / 4, c = op.trans ? lane / 4 : (lane % 4) * 2 + j;
      const uint32_t* row = lanes[8 * i + r];
      w |= uint32_t{row ? half_of(row, c) : uint16_t{0}} << (16 * j);
    }
    out[i] = w;
  }
}

// stmatrix: the inverse; lane 8i + r gets matrix i's row r (8 halves) to store.
void store_rows(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* out) {
  std::memset(out, 0, 16);
  const unsigned i = lane / 8, r = lane % 8;
  if (i >= op.count) return;
  for (unsigned c = 0; c < 8; ++c) {
    // Element (r, c) of matrix i is held by lane 4r + c / 2 (.trans: 4c + r / 2), half c % 2.
    const unsigned src = op.trans ? 4 * c + r / 2 : 4 * r + c / 2, half = op.trans ? r % 2 : c % 2;
    const uint32_t* regs = lanes[src];
    const uint16_t h = regs ? static_cast<uint16_t>(regs[i] >> (16 * half)) : 0;
    out[c / 2] |= uint32_t{h} << (16 * (c % 2));
  }
}

}  // namespace

void lane_result(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* out) {
  switch (op.kind) {
    case Kind::Product: return product(op, lanes, lane, out);
    case Kind::LoadRows: return load_rows(op, lanes, lane, out);
    case Kind::StoreRows: return store_rows(op, lanes, lane, out);
  }
}

}  // namespace fg::kernels::matrix

extern "C" void fg_rt_warp_mma(uint32_t op, const unsigned char* lanes, uint64_t stride, uint32_t lane, uint32_t group,
                               uint32_t* d) {
  const uint32_t* ptrs[32];
  for (unsigned k = 0; k < 32; ++k)
    ptrs[k] = (group >> k & 1) ? reinterpret_cast<const uint32_t*>(lanes + k * stride) : nullptr;
  fg::kernels::matrix::lane_result(fg::kernels::matrix::Op::unpack(op), ptrs, lane, d);
}
