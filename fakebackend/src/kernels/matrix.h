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

// Whose layout a fragment has: wmma's (the fake's own, see above) or mma.sync's (the PTX ISA's
// "Matrix Fragments for mma.m16n8k*" tables: with g = lane / 4 and t = lane % 4, element i of
// a lane sits at a row and column of g, t and i).
enum class Layout : uint8_t { Wmma, Mma };

// A fragment: the logical matrix (rows × cols), its elements per lane, and the registers
// (of reg_bits each) that hold them, low element in the low bits.
struct Fragment {
  unsigned rows = 0, cols = 0, elements = 0, regs = 0, reg_bits = 32;
  Elem elem = Elem::F32;
  Role role = Role::C;
  Layout layout = Layout::Wmma;
  unsigned words() const { return regs * reg_bits / 32; }  // 32-bit words of its registers
  unsigned bytes() const { return elem_bits(elem) / 8; }
  // Lane `lane`'s element `e`: its row and column.
  void position(unsigned lane, unsigned e, unsigned* row, unsigned* col) const {
    if (layout == Layout::Wmma) {
      const unsigned idx = (lane * elements + e) % (rows * cols);
      *row = idx / cols;
      *col = idx % cols;
      return;
    }
    const unsigned g = lane >> 2, t = lane & 3, bits = elem_bits(elem);
    const bool a = role == Role::A, b = role == Role::B;
    if (bits == 64) {  // m8n8k4 f64
      *row = b ? t : g;
      *col = a ? t : b ? g : t * 2 + e;
    } else if (!a && !b) {  // m16n8 accumulators: 4 elements
      *row = g + 8 * (e >> 1);
      *col = t * 2 + (e & 1);
    } else if (elem == Elem::TF32) {
      const bool k8 = (a ? cols : rows) == 8;
      if (a) {
        *row = g + 8 * (k8 ? (e & 1) : e);
        *col = t + 4 * (k8 ? e >> 1 : 0);
      } else {
        *row = t + 4 * e;
        *col = g;
      }
    } else if (bits == 16) {
      if (a) {  // k16: 8 elements, k8: 4
        *row = g + 8 * ((e >> 1) & 1);
        *col = t * 2 + (e & 1) + 8 * (e >> 2);
      } else {
        *row = t * 2 + (e & 1) + 8 * (e >> 1);
        *col = g;
      }
    } else {  // 8-bit: k32 (A 16 elements, B 8) or k16 (A 8, B 4)
      if (a) {
        const bool k32 = cols == 32;
        *row = g + 8 * (k32 ? (e >> 2) & 1 : e >> 2);
        *col = t * 4 + (e & 3) + (k32 ? 16 * (e >> 3) : 0);
      } else {
        *row = t * 4 + (e & 3) + 16 * (e >> 2);
        *col = g;
      }
    }
  }
};

inline void frame(Shape s, Role r, Elem e, Layout l, Fragment* f) {
  switch (r) {
    case Role::A: f->rows = s.m, f->cols = s.k; break;
    case Role::B: f->rows = s.k, f->cols = s.n; break;
    case Role::C: f->rows = s.m, f->cols = s.n; break;
  }
  f->elem = e;
  f->role = r;
  f->layout = l;
  f->reg_bits = e == Elem::F64 ? 64 : 32;
}

// The shapes and element types wmma takes (PTX ISA, "Matrix shape" of wmma): false for others.
inline bool fragment(Shape s, Role r, Elem e, Fragment* f) {
  const bool m16 = s.m == 16 && s.n == 16 && s.k == 16, m32 = s.m == 32 && s.n == 8 && s.k == 16,
             m8 = s.m == 8 && s.n == 32 && s.k == 16;
  const bool k16 = m16 || m32 || m8;
  frame(s, r, e, Layout::Wmma, f);
  bool ok = false;
  if (r == Role::C) {
    ok = (k16 && (e == Elem::F16 || e == Elem::F32 || e == Elem::S32)) ||
         (s.m == 16 && s.n == 16 && s.k == 8 && e == Elem::F32) || (s.m == 8 && s.n == 8 && s.k == 4 && e == Elem::F64);
  } else {
    ok = (k16 && (e == Elem::F16 || e == Elem::BF16 || e == Elem::S8 || e == Elem::U8)) ||
         (s.m == 16 && s.n == 16 && s.k == 8 && e == Elem::TF32) ||
         (s.m == 8 && s.n == 8 && s.k == 4 && e == Elem::F64);
  }
  if (!ok) return false;
  // f16 inputs always take 8 registers (16 halves); the others hold each element once.
  f->elements = (r != Role::C && e == Elem::F16) ? 16 : f->rows * f->cols / 32;
  f->regs = f->elements * elem_bits(e) / f->reg_bits;
  return true;
}

// The shapes and element types mma.sync takes here: m16n8k16 and m16n8k8 (f16, bf16; tf32 at
// k8), m16n8k4 (tf32), m16n8k32 and m16n8k16 (s8, u8), m8n8k4 (f64); accumulators f32 (f16
// for f16 inputs), s32, f64. Each element is held once.
inline bool mma_fragment(Shape s, Role r, Elem e, Fragment* f) {
  frame(s, r, e, Layout::Mma, f);
  const bool m16n8 = s.m == 16 && s.n == 8;
  bool ok = false;
  if (r == Role::C) {
    ok = (m16n8 && (e == Elem::F32 || e == Elem::F16 || e == Elem::S32)) ||
         (s.m == 8 && s.n == 8 && s.k == 4 && e == Elem::F64);
  } else if (m16n8) {
    ok = ((s.k == 16 || s.k == 8) && (e == Elem::F16 || e == Elem::BF16)) ||
         ((s.k == 8 || s.k == 4) && e == Elem::TF32) || ((s.k == 32 || s.k == 16) && (e == Elem::S8 || e == Elem::U8));
  } else {
    ok = s.m == 8 && s.n == 8 && s.k == 4 && e == Elem::F64;
  }
  if (!ok) return false;
  f->elements = f->rows * f->cols / 32;
  f->regs = f->elements * elem_bits(e) / f->reg_bits;
  return true;
}

// What a warp's lanes meet for: a product (wmma.mma, mma.sync), or ldmatrix / stmatrix, whose
// lanes exchange 8×8 matrices of 16-bit elements row by row.
enum class Kind : uint8_t { Product, LoadRows, StoreRows };

// The operation, packed into one word for the runtime call.
struct Op {
  Kind kind = Kind::Product;
  Shape shape;
  Elem a = Elem::F16, b = Elem::F16, c = Elem::F32, d = Elem::F32;
  bool satfinite = false;
  Layout layout = Layout::Wmma;
  unsigned count = 1;  // ldmatrix/stmatrix: matrices (x1, x2, x4)
  bool trans = false;  // ldmatrix/stmatrix .trans

  uint32_t pack() const {
    return s_code() | static_cast<uint32_t>(a) << 4 | static_cast<uint32_t>(b) << 8 | static_cast<uint32_t>(c) << 12 |
           static_cast<uint32_t>(d) << 16 | static_cast<uint32_t>(satfinite) << 20 |
           static_cast<uint32_t>(layout) << 21 | static_cast<uint32_t>(kind) << 22 | count << 24 |
           static_cast<uint32_t>(trans) << 28;
  }
  static Op unpack(uint32_t w) {
    Op o;
    o.shape = shapes()[(w & 15) % kShapes];
    o.a = static_cast<Elem>(w >> 4 & 15);
    o.b = static_cast<Elem>(w >> 8 & 15);
    o.c = static_cast<Elem>(w >> 12 & 15);
    o.d = static_cast<Elem>(w >> 16 & 15);
    o.satfinite = (w >> 20 & 1) != 0;
    o.layout = static_cast<Layout>(w >> 21 & 1);
    o.kind = static_cast<Kind>(w >> 22 & 3);
    o.count = w >> 24 & 15;
    o.trans = (w >> 28 & 1) != 0;
    return o;
  }

  // A, B, C and D's fragments of a product; false for a combination neither form takes.
  bool fragments(Fragment* fa, Fragment* fb, Fragment* fc, Fragment* fd) const {
    auto make = layout == Layout::Wmma ? fragment : mma_fragment;
    return make(shape, Role::A, a, fa) && make(shape, Role::B, b, fb) && make(shape, Role::C, c, fc) &&
           make(shape, Role::C, d, fd);
  }
  // The words a lane gives (A's registers, B's, then C's; a 64-bit register as two words, low
  // first; ldmatrix: its row, 8 halves; stmatrix: its registers) and gets back.
  unsigned in_words() const {
    if (kind == Kind::LoadRows) return 4;
    if (kind == Kind::StoreRows) return count;
    Fragment fa, fb, fc, fd;
    if (!fragments(&fa, &fb, &fc, &fd)) return 0;
    return fa.words() + fb.words() + fc.words();
  }
  unsigned out_words() const {
    if (kind == Kind::LoadRows) return count;
    if (kind == Kind::StoreRows) return 4;
    Fragment fa, fb, fc, fd;
    if (!fragments(&fa, &fb, &fc, &fd)) return 0;
    return fd.words();
  }

 private:
  static constexpr unsigned kShapes = 10;
  static const Shape* shapes() {
    static constexpr Shape s[kShapes] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16}, {16, 16, 8}, {8, 8, 4},
                                         {16, 8, 16},  {16, 8, 8},  {16, 8, 4},  {16, 8, 32}, {8, 8, 8}};
    return s;
  }
  uint32_t s_code() const {
    for (unsigned i = 0; i < kShapes; ++i)
      if (shapes()[i].m == shape.m && shapes()[i].n == shape.n && shapes()[i].k == shape.k) return i;
    return 0;
  }
};

// Lane `lane`'s result words (Op::out_words) from every lane's words (Op::in_words): lanes[k]
// points at lane k's (null: a lane that did not take part, whose elements read as 0).
void lane_result(const Op& op, const uint32_t* const lanes[32], unsigned lane, uint32_t* out);

}  // namespace fg::kernels::matrix
