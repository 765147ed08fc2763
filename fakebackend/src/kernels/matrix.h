// SPDX-License-Identifier: Apache-2.0
// Warp matrix operations (wmma.load, wmma.mma, wmma.store): the fragments' geometry, shared by
// the kernel compiler (loads and stores, lane by lane) and the runtime (the product, once the
// warp's lanes have met: kernels/matrix.cpp).
//
// A wmma fragment's layout across the lanes is unspecified (the CUDA guide: "the mapping of
// matrix elements into fragment internal storage is unspecified"); code reaches the elements
// only through load, store, fill and element-wise operations, which work on any layout. The
// fake's: lane l's element e holds the matrix element of linear index (l × E + e) mod (rows ×
// cols), row-major over the logical matrix, E the elements per lane. The register counts are
// the PTX ISA's, so that a fragment has the registers nvcc gives it; where those hold more
// elements than the matrix has (f16 inputs), the matrix repeats.
#pragma once
#include <cstdint>

namespace fg::kernels::matrix {

enum class Elem : uint8_t { F16, BF16, TF32, F32, F64, S8, U8, S32 };
enum class Role : uint8_t { A, B, C };  // C: the accumulator, also the result D

inline unsigned elem_bits(Elem e) {
  switch (e) {
    case Elem::F16:
    case Elem::BF16: return 16;
    case Elem::S8:
    case Elem::U8: return 8;
    case Elem::F64: return 64;
    default: return 32;
  }
}

struct Shape {
  unsigned m = 0, n = 0, k = 0;
};

// A fragment: the logical matrix (rows × cols), its elements per lane, and the registers
// (of reg_bits each) that hold them, low element in the low bits.
struct Fragment {
  unsigned rows = 0, cols = 0, elements = 0, regs = 0, reg_bits = 32;
  Elem elem = Elem::F32;
  unsigned words() const { return regs * reg_bits / 32; }  // 32-bit words of its registers
  unsigned bytes() const { return elem_bits(elem) / 8; }
  // Lane `lane`'s element `e`: its row and column.
  void position(unsigned lane, unsigned e, unsigned* row, unsigned* col) const {
    const unsigned idx = (lane * elements + e) % (rows * cols);
    *row = idx / cols;
    *col = idx % cols;
  }
};

// The shapes and element types wmma takes (PTX ISA, "Matrix shape" of wmma): false for others.
inline bool fragment(Shape s, Role r, Elem e, Fragment* f) {
  const bool m16 = s.m == 16 && s.n == 16 && s.k == 16, m32 = s.m == 32 && s.n == 8 && s.k == 16,
             m8 = s.m == 8 && s.n == 32 && s.k == 16;
  const bool k16 = m16 || m32 || m8;
  switch (r) {
    case Role::A:
      f->rows = s.m, f->cols = s.k;
      break;
    case Role::B:
      f->rows = s.k, f->cols = s.n;
      break;
    case Role::C:
      f->rows = s.m, f->cols = s.n;
      break;
  }
  f->elem = e;
  f->reg_bits = e == Elem::F64 ? 64 : 32;
  bool ok = false;
  if (r == Role::C) {
    ok = (k16 && (e == Elem::F16 || e == Elem::F32 || e == Elem::S32)) ||
         (s.m == 16 && s.n == 16 && s.k == 8 && e == Elem::F32) || (s.m == 8 && s.n == 8 && s.k == 4 && e == Elem::F64);
  } else {
    ok = (k16 && (e == Elem::F16 || e == Elem::BF16 || e == Elem::S8 || e == Elem::U8)) ||
         (s.m == 16 && s.n == 16 && s.k == 8 && e == Elem::TF32) || (s.m == 8 && s.n == 8 && s.k == 4 && e == Elem::F64);
  }
  if (!ok) return false;
  // f16 inputs always take 8 registers (16 halves); the others hold each element once.
  f->elements = (r != Role::C && e == Elem::F16) ? 16 : f->rows * f->cols / 32;
  f->regs = f->elements * elem_bits(e) / f->reg_bits;
  return true;
}

// The operation wmma.mma names, packed into one word for the runtime call.
struct Op {
  Shape shape;
  Elem a = Elem::F16, b = Elem::F16, c = Elem::F32, d = Elem::F32;
  bool satfinite = false;

  uint32_t pack() const {
    return s_code() | static_cast<uint32_t>(a) << 4 | static_cast<uint32_t>(b) << 8 | static_cast<uint32_t>(c) << 12 |
           static_cast<uint32_t>(d) << 16 | static_cast<uint32_t>(satfinite) << 20;
  }
  static Op unpack(uint32_t w) {
    static constexpr Shape shapes[] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16}, {16, 16, 8}, {8, 8, 4}};
    Op o;
    o.shape = shapes[(w & 15) % 5];
    o.a = static_cast<Elem>(w >> 4 & 15);
    o.b = static_cast<Elem>(w >> 8 & 15);
    o.c = static_cast<Elem>(w >> 12 & 15);
    o.d = static_cast<Elem>(w >> 16 & 15);
    o.satfinite = (w >> 20 & 1) != 0;
    return o;
  }

 private:
  uint32_t s_code() const {
    if (shape.m == 32) return 1;
    if (shape.m == 8 && shape.n == 32) return 2;
    if (shape.k == 8) return 3;
    if (shape.k == 4) return 4;
    return 0;
  }
};

// The words of one lane's operands for the product, as the compiler lays them out: A's
// registers, B's, then C's (a 64-bit register as two words, low first).
inline unsigned operand_words(const Op& op) {
  Fragment a, b, c;
  fragment(op.shape, Role::A, op.a, &a);
  fragment(op.shape, Role::B, op.b, &b);
  fragment(op.shape, Role::C, op.c, &c);
  return a.words() + b.words() + c.words();
}

// D for lane `lane` (its D fragment's words into `d`) from every lane's operands: lanes[k]
// points at lane k's words (null: a lane that did not take part, whose elements read as 0).
void lane_product(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* d);

}  // namespace fg::kernels::matrix
