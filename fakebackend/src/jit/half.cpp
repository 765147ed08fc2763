// SPDX-License-Identifier: Apache-2.0
#include "jit/half.h"

#include "jit/errors.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <cstring>
#include <functional>
#include <map>

namespace fg::jit::half {
namespace {

using namespace llvm;
using kernels::Rounding;
using PType = ptx::Type;

// A binary format: fraction bits, exponent bits, bias, and encodings used as constants.
struct Layout {
  unsigned man;
  unsigned exp;
  int bias;
  uint16_t one;
  uint16_t max_finite;
  uint16_t inf;
};
constexpr Layout kF16{10, 5, 15, 0x3c00, 0x7bff, 0x7c00};
constexpr Layout kBF16{7, 8, 127, 0x3f80, 0x7f7f, 0x7f80};
constexpr uint16_t kNaN = 0x7fff;  // the canonical NaN of both formats
constexpr uint16_t kSign = 0x8000;

const Layout& layout(Format f) { return f == Format::F16 ? kF16 : kBF16; }

Format format_of(PType t) { return t == PType::F16 || t == PType::F16x2 ? Format::F16 : Format::BF16; }
bool is_pair(PType t) { return t == PType::F16x2 || t == PType::BF16x2; }
// The integer types cvt converts halfs to and from (8 to 64 bits).
bool is_signed(PType t) { return t == PType::S8 || t == PType::S16 || t == PType::S32 || t == PType::S64; }
bool is_integer(PType t) {
  return is_signed(t) || t == PType::U8 || t == PType::U16 || t == PType::U32 || t == PType::U64 || t == PType::B8 ||
         t == PType::B16 || t == PType::B32 || t == PType::B64;
}

// The IR for one instruction: the builder and the values' helpers.
class Half {
 public:
  explicit Half(IRBuilder<>& b)
      : B_(b),
        i1_(b.getInt1Ty()),
        i16_(b.getInt16Ty()),
        i32_(b.getInt32Ty()),
        i64_(b.getInt64Ty()),
        f32_(b.getFloatTy()),
        f64_(b.getDoubleTy()) {}

  Value* h(uint16_t bits) { return B_.getInt16(bits); }

  Value* is_nan(Value* x, Format f) { return B_.CreateICmpUGT(B_.CreateAnd(x, 0x7fff), h(layout(f).inf)); }
  Value* is_neg(Value* x) { return B_.CreateICmpNE(B_.CreateAnd(x, kSign), h(0)); }
  Value* canonical(Value* x, Format f) { return B_.CreateSelect(is_nan(x, f), h(kNaN), x); }

  // A subnormal (or zero) becomes the zero of its sign: .ftz (f16 only in PTX).
  Value* flush(Value* x, Format f) {
    const Layout& l = layout(f);
    Value* exp_field = B_.CreateAnd(x, h(l.inf));
    return B_.CreateSelect(B_.CreateICmpEQ(exp_field, h(0)), B_.CreateAnd(x, kSign), x);
  }

  // Exact widening to f32. An f16 NaN becomes the canonical f32 NaN 0x7fffffff (as
  // cuda_fp16.hpp's __half2float does); bf16 is the upper half of an f32, bits kept (as
  // cuda_bf16.hpp's __bfloat162float, a plain move, does).
  Value* to_f32(Value* x, Format f) {
    Value* w = B_.CreateZExt(x, i32_);
    if (f == Format::BF16) return B_.CreateBitCast(B_.CreateShl(w, 16), f32_);
    Value* sign = B_.CreateShl(B_.CreateAnd(w, 0x8000), 16);
    Value* e = B_.CreateAnd(B_.CreateLShr(w, 10), 0x1f);
    Value* m = B_.CreateAnd(w, 0x3ff);
    // Normal: rebias the exponent (127 - 15), widen the fraction (23 - 10 bits).
    Value* normal = B_.CreateOr(B_.CreateShl(B_.CreateAdd(e, B_.getInt32(112)), 23), B_.CreateShl(m, 13));
    // Subnormal or zero: m * 2^-24, exact in f32.
    Value* tiny = B_.CreateBitCast(B_.CreateFMul(B_.CreateUIToFP(m, f32_), ConstantFP::get(f32_, 0x1p-24)), i32_);
    Value* inf = B_.CreateICmpEQ(B_.CreateAnd(w, 0x7fff), B_.getInt32(0x7c00));
    Value* mag = B_.CreateSelect(B_.CreateICmpEQ(e, B_.getInt32(0)), tiny, normal);
    mag = B_.CreateSelect(inf, B_.getInt32(0x7f800000), mag);
    Value* bits = B_.CreateOr(sign, mag);
    bits = B_.CreateSelect(is_nan(x, f), B_.getInt32(0x7fffffff), bits);
    return B_.CreateBitCast(bits, f32_);
  }
  Value* to_f64(Value* x, Format f) { return B_.CreateFPExt(to_f32(x, f), f64_); }

  // sign × mant × 2^e2 (mant an unsigned i64, e2 an i32) rounded once to the format.
  Value* round(Value* sign, Value* mant, Value* e2, Format f, Rounding mode) {
    const Layout& l = layout(f);
    const int man = static_cast<int>(l.man);
    Value* lz = B_.CreateTrunc(B_.CreateIntrinsic(Intrinsic::ctlz, {i64_}, {mant, B_.getFalse()}), i32_);
    Value* top = B_.CreateSub(B_.getInt32(63), lz);  // floor(log2 mant)
    // The exponent of the result's last bit: man below the leading bit, but never below
    // the subnormals' (the smallest normal's exponent 1 - bias, less man).
    Value* q = B_.CreateBinaryIntrinsic(Intrinsic::smax, B_.CreateSub(B_.CreateAdd(top, e2), B_.getInt32(man)),
                                        B_.getInt32(1 - l.bias - man));
    // mant is shifted right by q - e2 (rounding off the bits below) or, for a value with
    // fewer bits than the format, left. Past 63 bits the kept part is 0 and the rest is
    // below a half: mant < 2^53 for a double, and an integer's q - e2 is at most 63 - man.
    Value* shift = B_.CreateSub(q, e2);
    auto clamp = [&](Value* v) {
      v = B_.CreateBinaryIntrinsic(Intrinsic::smax, v, B_.getInt32(0));
      return B_.CreateZExt(B_.CreateBinaryIntrinsic(Intrinsic::smin, v, B_.getInt32(63)), i64_);
    };
    Value* right = clamp(shift);
    Value* left = clamp(B_.CreateNeg(shift));
    Value* kept = B_.CreateShl(B_.CreateLShr(mant, right), left);
    Value* unit = B_.CreateShl(B_.getInt64(1), right);
    Value* rest = B_.CreateAnd(mant, B_.CreateSub(unit, B_.getInt64(1)));
    Value* halfway = B_.CreateLShr(unit, 1);
    Value* inexact = B_.CreateICmpNE(rest, B_.getInt64(0));
    Value* up = B_.getFalse();
    switch (mode) {
      case Rounding::Nearest: {  // ties to even
        Value* odd = B_.CreateTrunc(kept, i1_);
        Value* above = B_.CreateICmpUGT(rest, halfway);
        Value* tie = B_.CreateAnd(B_.CreateICmpEQ(rest, halfway), odd);
        up = B_.CreateAnd(inexact, B_.CreateOr(above, tie));
        break;
      }
      case Rounding::Zero: break;
      case Rounding::Up: up = B_.CreateAnd(inexact, B_.CreateNot(sign)); break;
      case Rounding::Down: up = B_.CreateAnd(inexact, sign); break;
    }
    kept = B_.CreateAdd(kept, B_.CreateZExt(up, i64_));
    // The encoding is linear in kept from the subnormals on: (biased exponent - 1) << man
    // plus kept (which carries the implicit bit, and a carry out of the fraction moves the
    // exponent up by one).
    Value* base = B_.CreateShl(B_.CreateAdd(q, B_.getInt32(man + l.bias - 1)), man);
    Value* enc = B_.CreateAdd(base, B_.CreateTrunc(kept, i32_));
    enc = B_.CreateSelect(B_.CreateICmpEQ(mant, B_.getInt64(0)), B_.getInt32(0), enc);
    // Past the largest finite value: infinity, or the largest finite value when the mode
    // rounds toward zero on this side.
    Value* inf = B_.getInt32(l.inf);
    Value* max = B_.getInt32(l.max_finite);
    Value* overflow = inf;
    switch (mode) {
      case Rounding::Nearest: break;
      case Rounding::Zero: overflow = max; break;
      case Rounding::Up: overflow = B_.CreateSelect(sign, max, inf); break;
      case Rounding::Down: overflow = B_.CreateSelect(sign, inf, max); break;
    }
    enc = B_.CreateSelect(B_.CreateICmpUGE(enc, inf), overflow, enc);
    return B_.CreateOr(B_.CreateTrunc(enc, i16_), B_.CreateSelect(sign, h(kSign), h(0)));
  }

  // A double rounded once to the format; NaN gives the canonical NaN.
  Value* from_f64(Value* d, Format f, Rounding mode) {
    Value* bits = B_.CreateBitCast(d, i64_);
    Value* sign = B_.CreateICmpSLT(bits, B_.getInt64(0));
    Value* mag = B_.CreateAnd(bits, B_.getInt64(0x7fffffffffffffffull));
    Value* ef = B_.CreateLShr(mag, 52);
    Value* frac = B_.CreateAnd(bits, B_.getInt64((1ull << 52) - 1));
    Value* subnormal = B_.CreateICmpEQ(ef, B_.getInt64(0));
    Value* mant = B_.CreateSelect(subnormal, frac, B_.CreateOr(frac, B_.getInt64(1ull << 52)));
    Value* e2 = B_.CreateSub(B_.CreateTrunc(B_.CreateSelect(subnormal, B_.getInt64(1), ef), i32_), B_.getInt32(1075));
    Value* r = round(sign, mant, e2, f, mode);
    const uint64_t inf = 0x7ff0000000000000ull;
    r = B_.CreateSelect(B_.CreateICmpEQ(mag, B_.getInt64(inf)),
                        B_.CreateOr(h(layout(f).inf), B_.CreateSelect(sign, h(kSign), h(0))), r);
    return B_.CreateSelect(B_.CreateICmpUGT(mag, B_.getInt64(inf)), h(kNaN), r);
  }

  // An integer (of any width up to 64) rounded once to the format.
  Value* from_int(Value* v, bool is_signed, Format f, Rounding mode) {
    Value* w = is_signed ? B_.CreateSExt(v, i64_) : B_.CreateZExt(v, i64_);
    Value* sign = is_signed ? B_.CreateICmpSLT(w, B_.getInt64(0)) : B_.getFalse();
    Value* mag = is_signed ? B_.CreateSelect(sign, B_.CreateNeg(w), w) : w;  // -2^63 → 2^63 unsigned
    return round(sign, mag, B_.getInt32(0), f, mode);
  }

  // x * y + z (doubles, x * y exact) rounded to odd in f64: the f64 result, whose last bit
  // is set when it is inexact. Infinities and NaNs pass through.
  Value* fma_odd(Value* x, Value* y, Value* z) {
    Value* p = B_.CreateFMul(x, y);
    Value* s = B_.CreateFAdd(p, z);
    // TwoSum: e = (p + z) - s exactly.
    Value* zz = B_.CreateFSub(s, p);
    Value* pp = B_.CreateFSub(s, zz);
    Value* e = B_.CreateFAdd(B_.CreateFSub(p, pp), B_.CreateFSub(z, zz));
    Value* sb = B_.CreateBitCast(s, i64_);
    Value* eb = B_.CreateBitCast(e, i64_);
    Value* even = B_.CreateICmpEQ(B_.CreateAnd(sb, 1), B_.getInt64(0));
    Value* inexact = B_.CreateFCmpONE(e, ConstantFP::get(f64_, 0.0));  // false for NaN (inf - inf)
    // The exact value lies beyond s in e's direction: the odd neighbour on that side.
    Value* outward = B_.CreateICmpSGE(B_.CreateXor(sb, eb), B_.getInt64(0));  // same signs
    Value* odd = B_.CreateSelect(outward, B_.CreateAdd(sb, B_.getInt64(1)), B_.CreateSub(sb, B_.getInt64(1)));
    return B_.CreateBitCast(B_.CreateSelect(B_.CreateAnd(even, inexact), odd, sb), f64_);
  }

  // a * b + c, each of the format, rounded once.
  Value* fma(Value* a, Value* b, Value* c, Format f, Rounding mode) {
    return from_f64(fma_odd(to_f64(a, f), to_f64(b, f), to_f64(c, f)), f, mode);
  }

  // a + b: a * 1 + b, as sm_80's cuda_bf16.hpp writes bf16 addition.
  Value* add(Value* a, Value* b, Format f, Rounding mode) {
    return from_f64(fma_odd(to_f64(a, f), ConstantFP::get(f64_, 1.0), to_f64(b, f)), f, mode);
  }

  // .sat: clamped to [0, 1], NaN to +0. .relu: negative to +0, NaN to the canonical NaN.
  Value* saturate(Value* x, Format f) {
    Value* one = h(layout(f).one);
    Value* r = B_.CreateSelect(B_.CreateICmpUGT(x, one), one, x);  // unsigned: negatives too
    r = B_.CreateSelect(is_neg(x), h(0), r);
    return B_.CreateSelect(is_nan(x, f), h(0), r);
  }
  Value* relu(Value* x, Format f) {
    Value* r = B_.CreateSelect(is_neg(x), h(0), x);
    return B_.CreateSelect(is_nan(x, f), h(kNaN), r);
  }

  // min/max as cuda_fp16.hpp's host fallbacks define them: a NaN operand gives the other
  // operand (both NaN, or either with .NaN: the canonical NaN); -0 is below +0.
  Value* minmax(Value* a, Value* b, Format f, bool max, bool nan, bool xorsign) {
    Value* sign = nullptr;
    if (xorsign) {  // .xorsign.abs: of |a| and |b|, with the sign a's xor b's
      sign = B_.CreateAnd(B_.CreateXor(a, b), kSign);
      a = B_.CreateAnd(a, 0x7fff);
      b = B_.CreateAnd(b, 0x7fff);
    }
    Value* fa = to_f32(a, f);
    Value* fb = to_f32(b, f);
    Value* lt = B_.CreateFCmpOLT(fa, fb);
    Value* gt = B_.CreateFCmpOGT(fa, fb);
    // Equal values with different bits are +0 and -0; -0 (0x8000) is the larger pattern.
    Value* a_neg_zero = B_.CreateICmpUGT(a, b);
    Value* r = max ? B_.CreateSelect(gt, a, B_.CreateSelect(lt, b, B_.CreateSelect(a_neg_zero, b, a)))
                   : B_.CreateSelect(lt, a, B_.CreateSelect(gt, b, B_.CreateSelect(a_neg_zero, a, b)));
    Value* an = is_nan(a, f);
    Value* bn = is_nan(b, f);
    r = B_.CreateSelect(an, b, B_.CreateSelect(bn, a, r));
    Value* to_nan = nan ? B_.CreateOr(an, bn) : B_.CreateAnd(an, bn);
    r = B_.CreateSelect(to_nan, h(kNaN), r);
    if (xorsign) r = B_.CreateSelect(is_nan(r, f), r, B_.CreateOr(r, sign));
    return r;
  }

  // A libm function of one float (linked from the process, as exp2f is for llvm.exp2).
  Value* libm(const char* name, Value* x) {
    Module* m = B_.GetInsertBlock()->getModule();
    FunctionCallee fn = m->getOrInsertFunction(name, FunctionType::get(f32_, {f32_}, false));
    return B_.CreateCall(fn, {x});
  }

  IRBuilder<>& B_;
  Type *i1_, *i16_, *i32_, *i64_, *f32_, *f64_;
};

Rounding rounding_of(const ptx::Instruction& in) {
  if (in.has_mod("rz")) return Rounding::Zero;
  if (in.has_mod("rm")) return Rounding::Down;
  if (in.has_mod("rp")) return Rounding::Up;
  return Rounding::Nearest;
}

// Modifiers outside `known` make the instruction unsupported (.oob, .rs, ...), never
// silently ignored.
void check_mods(const ptx::Instruction& in, std::initializer_list<const char*> known) {
  for (const std::string& m : in.mods) {
    bool ok = false;
    for (const char* k : known) ok = ok || m == k;
    if (!ok) unsupported("uses " + in.opcode + "." + m + " on half precision values");
  }
}

// setp/set's combining operation (and, or, xor), or "" for none.
std::string bool_op(const ptx::Instruction& in) {
  for (const char* m : {"and", "or", "xor"})
    if (in.has_mod(m)) return m;
  return "";
}

double fimm_value(const ptx::Operand& op) {
  if (op.fdouble) {
    double d;
    std::memcpy(&d, &op.fbits, 8);
    return d;
  }
  float f;
  const uint32_t b = static_cast<uint32_t>(op.fbits);
  std::memcpy(&f, &b, 4);
  return f;
}

// An operand as raw bits: i16 for one value, i32 for a pair. A floating immediate is
// rounded to the format (to nearest), both halves of a pair alike.
Value* read_bits(Half& x, Operands& io, const ptx::Operand& op, PType t, const ptx::Instruction& in) {
  const bool pair = is_pair(t);
  if (op.kind == ptx::Operand::Kind::FImm) {
    Value* v = x.from_f64(ConstantFP::get(x.f64_, fimm_value(op)), format_of(t), Rounding::Nearest);
    if (!pair) return v;
    Value* w = x.B_.CreateZExt(v, x.i32_);
    return x.B_.CreateOr(w, x.B_.CreateShl(w, 16));
  }
  return io.read(op, pair ? PType::B32 : PType::B16, in);
}

// Applies `fn` to each half of the operands (one lane for a scalar type) and packs the results.
template <class Fn>
Value* per_lane(Half& x, PType t, const std::vector<Value*>& args, Fn&& fn) {
  if (!is_pair(t)) return fn(args);
  Value* r = nullptr;
  for (unsigned lane = 0; lane < 2; ++lane) {
    std::vector<Value*> part;
    for (Value* a : args) part.push_back(x.B_.CreateTrunc(x.B_.CreateLShr(a, 16 * lane), x.i16_));
    Value* v = x.B_.CreateShl(x.B_.CreateZExt(fn(part), x.i32_), 16 * lane);
    r = r ? x.B_.CreateOr(r, v) : v;
  }
  return r;
}

Value* compare(Half& x, const std::string& cmp, Value* a, Value* b, Format f, const ptx::Instruction& in) {
  static const std::map<std::string, CmpInst::Predicate> preds = {
      {"eq", CmpInst::FCMP_OEQ},  {"ne", CmpInst::FCMP_ONE},  {"lt", CmpInst::FCMP_OLT},  {"le", CmpInst::FCMP_OLE},
      {"gt", CmpInst::FCMP_OGT},  {"ge", CmpInst::FCMP_OGE},  {"equ", CmpInst::FCMP_UEQ}, {"neu", CmpInst::FCMP_UNE},
      {"ltu", CmpInst::FCMP_ULT}, {"leu", CmpInst::FCMP_ULE}, {"gtu", CmpInst::FCMP_UGT}, {"geu", CmpInst::FCMP_UGE},
      {"num", CmpInst::FCMP_ORD}, {"nan", CmpInst::FCMP_UNO}};
  auto it = preds.find(cmp);
  if (it == preds.end()) malformed(in, "unknown comparison " + cmp);
  return x.B_.CreateFCmp(it->second, x.to_f32(a, f), x.to_f32(b, f));
}

// setp.cmp{.bop}{.ftz}.type p{|q}, a, b{, {!}c}: for a pair type, p is the lower halves'
// comparison and q the upper's; for one value, q is the negation.
void setp(Half& x, Operands& io, const ptx::Instruction& in) {
  const PType t = in.types.at(0);
  const Format f = format_of(t);
  if (in.mods.empty()) malformed(in, "no comparison");
  check_mods(in, {in.mods[0].c_str(), "and", "or", "xor", "ftz"});
  const std::string bop = bool_op(in);
  Value* a = read_bits(x, io, in.ops.at(1), t, in);
  Value* b = read_bits(x, io, in.ops.at(2), t, in);
  Value* c = bop.empty() ? nullptr : io.read(in.ops.at(3), PType::Pred, in);
  auto combine = [&](Value* v) {
    if (!c) return v;
    return bop == "and" ? x.B_.CreateAnd(v, c) : bop == "or" ? x.B_.CreateOr(v, c) : x.B_.CreateXor(v, c);
  };
  auto lane = [&](unsigned i) {
    Value* ai = is_pair(t) ? x.B_.CreateTrunc(x.B_.CreateLShr(a, 16 * i), x.i16_) : a;
    Value* bi = is_pair(t) ? x.B_.CreateTrunc(x.B_.CreateLShr(b, 16 * i), x.i16_) : b;
    if (in.has_mod("ftz")) ai = x.flush(ai, f), bi = x.flush(bi, f);
    return compare(x, in.mods[0], ai, bi, f, in);
  };
  const ptx::Operand& d = in.ops.at(0);
  Value* p;
  Value* q;
  if (is_pair(t)) {
    p = combine(lane(0));
    q = combine(lane(1));
  } else {
    Value* r = lane(0);
    p = combine(r);
    q = combine(x.B_.CreateNot(r));
  }
  if (d.kind == ptx::Operand::Kind::Pair) {
    io.write(d.elems.at(0), PType::Pred, p, in);
    io.write(d.elems.at(1), PType::Pred, q, in);
  } else {
    io.write(d, PType::Pred, p, in);
  }
}

// set.cmp{.bop}{.ftz}.dtype.stype d, a, b{, {!}c}: per lane, all ones (integer dtype) or
// 1.0 (float dtype) when true, else 0. A pair source sets each half of d.
void set(Half& x, Operands& io, const ptx::Instruction& in) {
  if (in.types.size() != 2) malformed(in, "set needs a destination and a source type");
  const PType dt = in.types[0], st = in.types[1];
  const Format f = format_of(st);
  if (in.mods.empty()) malformed(in, "no comparison");
  check_mods(in, {in.mods[0].c_str(), "and", "or", "xor", "ftz"});
  const std::string bop = bool_op(in);
  Value* c = bop.empty() ? nullptr : io.read(in.ops.at(3), PType::Pred, in);
  std::vector<Value*> args = {read_bits(x, io, in.ops.at(1), st, in), read_bits(x, io, in.ops.at(2), st, in)};
  auto truth = [&](const std::vector<Value*>& v) {
    Value* a = v[0];
    Value* b = v[1];
    if (in.has_mod("ftz")) a = x.flush(a, f), b = x.flush(b, f);
    Value* r = compare(x, in.mods[0], a, b, f, in);
    if (c) r = bop == "and" ? x.B_.CreateAnd(r, c) : bop == "or" ? x.B_.CreateOr(r, c) : x.B_.CreateXor(r, c);
    return r;
  };
  if (is_pair(st)) {
    // Each half of d: 0xffff, or 1.0 of the destination's format.
    const bool fdst = is_half(dt);
    const uint16_t yes = fdst ? layout(format_of(dt)).one : 0xffff;
    Value* r = per_lane(x, st, args,
                        [&](const std::vector<Value*>& v) { return x.B_.CreateSelect(truth(v), x.h(yes), x.h(0)); });
    io.write(in.ops.at(0), PType::B32, r, in);
    return;
  }
  Value* r = truth(args);
  Value* out;
  if (is_half(dt)) {
    out = x.B_.CreateSelect(r, x.h(layout(format_of(dt)).one), x.h(0));
    io.write(in.ops.at(0), PType::B16, out, in);
  } else if (dt == PType::F32) {
    out = x.B_.CreateSelect(r, ConstantFP::get(x.f32_, 1.0), ConstantFP::get(x.f32_, 0.0));
    io.write(in.ops.at(0), dt, out, in);
  } else {
    Type* it = IntegerType::get(x.B_.getContext(), ptx::type_size(dt) * 8);
    out = x.B_.CreateSelect(r, ConstantInt::getAllOnesValue(it), ConstantInt::get(it, 0));
    io.write(in.ops.at(0), dt, out, in);
  }
}

}  // namespace

bool is_half(PType t) { return t == PType::F16 || t == PType::F16x2 || t == PType::BF16 || t == PType::BF16x2; }

bool handles(const ptx::Instruction& in) {
  if (in.types.empty()) return false;
  const std::string& op = in.opcode;
  if (op == "set") return is_half(in.types.back());
  if (!is_half(in.types[0])) return false;
  return op == "add" || op == "sub" || op == "mul" || op == "fma" || op == "neg" || op == "abs" || op == "min" ||
         op == "max" || op == "ex2" || op == "tanh" || op == "setp";
}

void lower(IRBuilder<>& b, Operands& io, const ptx::Instruction& in) {
  Half x(b);
  const std::string& op = in.opcode;
  if (op == "setp") return setp(x, io, in);
  if (op == "set") return set(x, io, in);
  const PType t = in.types.at(0);
  const Format f = format_of(t);
  const bool ftz = in.has_mod("ftz");
  const size_t nargs = op == "fma" ? 3 : op == "neg" || op == "abs" || op == "ex2" || op == "tanh" ? 1 : 2;
  std::vector<Value*> args;
  for (size_t i = 1; i <= nargs; ++i) args.push_back(read_bits(x, io, in.ops.at(i), t, in));
  std::function<Value*(const std::vector<Value*>&)> fn;
  auto in_ftz = [&](Value* v) { return ftz ? x.flush(v, f) : v; };
  if (op == "add" || op == "sub" || op == "mul" || op == "fma") {
    check_mods(in, {"rn", "rz", "rm", "rp", "ftz", "sat", "relu"});
    const Rounding mode = rounding_of(in);
    fn = [&](const std::vector<Value*>& v) {
      Value* a = in_ftz(v[0]);
      Value* c = op == "fma" ? in_ftz(v[2]) : nullptr;
      Value* bb = in_ftz(v[1]);
      // All four as one rounded a * b + c, as sm_80's cuda_bf16.hpp writes them: add is
      // a * 1 + b, sub a * 1 + (-b), mul a * b + (-0) (which keeps a zero product's sign).
      Value* r;
      if (op == "fma") {
        r = x.fma(a, bb, c, f, mode);
      } else if (op == "mul") {
        r = x.from_f64(x.fma_odd(x.to_f64(a, f), x.to_f64(bb, f), ConstantFP::get(x.f64_, -0.0)), f, mode);
      } else {
        r = x.add(a, op == "sub" ? b.CreateXor(bb, kSign) : bb, f, mode);
      }
      if (ftz) r = x.flush(r, f);
      if (in.has_mod("sat")) r = x.saturate(r, f);
      if (in.has_mod("relu")) r = x.relu(r, f);
      return r;
    };
  } else if (op == "neg" || op == "abs") {
    // The sign bit; a NaN gives the canonical NaN (as cuda_fp16.hpp's __habs host fallback).
    check_mods(in, {"ftz"});
    fn = [&](const std::vector<Value*>& v) {
      Value* a = in_ftz(v[0]);
      Value* r = op == "neg" ? b.CreateXor(a, kSign) : b.CreateAnd(a, 0x7fff);
      return x.canonical(r, f);
    };
  } else if (op == "min" || op == "max") {
    check_mods(in, {"ftz", "NaN", "xorsign", "abs"});
    fn = [&](const std::vector<Value*>& v) {
      return x.minmax(in_ftz(v[0]), in_ftz(v[1]), f, op == "max", in.has_mod("NaN"), in.has_mod("xorsign"));
    };
  } else {  // ex2.approx, tanh.approx: the f32 function of the exact value, rounded to nearest
    check_mods(in, {"approx", "ftz"});
    fn = [&](const std::vector<Value*>& v) {
      Value* a = x.to_f32(in_ftz(v[0]), f);
      Value* r = op == "ex2" ? b.CreateIntrinsic(Intrinsic::exp2, {x.f32_}, {a}) : x.libm("tanhf", a);
      return in_ftz(x.from_f64(b.CreateFPExt(r, x.f64_), f, Rounding::Nearest));
    };
  }
  io.write(in.ops.at(0), is_pair(t) ? PType::B32 : PType::B16, per_lane(x, t, args, fn), in);
}

Value* add(IRBuilder<>& b, Value* x, Value* y, PType t) {
  Half h(b);
  const Format f = format_of(t);
  return per_lane(h, t, {x, y}, [&](const std::vector<Value*>& v) { return h.add(v[0], v[1], f, Rounding::Nearest); });
}

void cvt(IRBuilder<>& b, Operands& io, const ptx::Instruction& in) {
  Half x(b);
  const PType dt = in.types.at(0), st = in.types.at(1);
  if (is_pair(st) || (is_pair(dt) && st != PType::F32))
    unsupported("uses cvt." + std::string(ptx::type_name(dt)) + "." + std::string(ptx::type_name(st)));
  check_mods(in, {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "relu", "satfinite"});
  const Rounding mode = rounding_of(in);
  const bool ftz = in.has_mod("ftz");
  // .relu, .satfinite, .sat on a half result.
  auto finish = [&](Value* r, Format f) {
    if (in.has_mod("satfinite")) {  // beyond the largest finite value: that value, signed
      const Layout& l = layout(f);
      Value* inf = b.CreateICmpEQ(b.CreateAnd(r, 0x7fff), x.h(l.inf));
      r = b.CreateSelect(inf, b.CreateOr(b.CreateAnd(r, kSign), x.h(l.max_finite)), r);
    }
    if (in.has_mod("relu")) r = x.relu(r, f);
    if (in.has_mod("sat")) r = x.saturate(r, f);
    return r;
  };
  // A float source (f32/f64), as a double; .ftz flushes an f32 subnormal to zero.
  auto float_source = [&](const ptx::Operand& op) -> Value* {
    Value* v = io.read(op, st, in);
    if (st == PType::F32 && ftz) {
      Value* tiny = b.CreateFCmpOLT(b.CreateIntrinsic(Intrinsic::fabs, {x.f32_}, {v}),
                                    ConstantFP::get(x.f32_, 0x1p-126));
      v = b.CreateSelect(tiny, b.CreateIntrinsic(Intrinsic::copysign, {x.f32_}, {ConstantFP::get(x.f32_, 0.0), v}), v);
    }
    return st == PType::F64 ? v : b.CreateFPExt(v, x.f64_);
  };

  if (is_pair(dt)) {  // cvt.frnd.f16x2.f32 d, a, b: a to the upper half, b to the lower
    const Format f = format_of(dt);
    Value* hi = finish(x.from_f64(float_source(in.ops.at(1)), f, mode), f);
    Value* lo = finish(x.from_f64(float_source(in.ops.at(2)), f, mode), f);
    Value* r = b.CreateOr(b.CreateShl(b.CreateZExt(hi, x.i32_), 16), b.CreateZExt(lo, x.i32_));
    io.write(in.ops.at(0), PType::B32, r, in);
    return;
  }
  if (is_half(dt)) {
    const Format f = format_of(dt);
    Value* r;
    if (is_half(st)) {
      const Format sf = format_of(st);
      Value* a = io.read(in.ops.at(1), PType::B16, in);
      if (ftz) a = x.flush(a, sf);
      Value* d = x.to_f64(a, sf);
      Value* rounded = round_integral(b, d, in);  // .rni and friends: to an integral value first
      r = x.from_f64(rounded, f, mode);
      if (ftz && f == Format::F16) r = x.flush(r, f);
    } else if (st == PType::F32 || st == PType::F64) {
      r = x.from_f64(float_source(in.ops.at(1)), f, mode);
    } else if (is_integer(st)) {
      r = x.from_int(io.read(in.ops.at(1), st, in), is_signed(st), f, mode);
    } else {
      unsupported("uses cvt." + std::string(ptx::type_name(dt)) + "." + std::string(ptx::type_name(st)));
    }
    io.write(in.ops.at(0), PType::B16, finish(r, f), in);
    return;
  }
  // From a half value: exact to f32 and f64; to integers as PTX converts floats.
  const Format sf = format_of(st);
  Value* a = io.read(in.ops.at(1), PType::B16, in);
  if (ftz && sf == Format::F16) a = x.flush(a, sf);
  auto clamp01 = [&](Value* v) {  // .sat: [0, 1], NaN to 0
    Type* ty = v->getType();
    Value* lo = b.CreateBinaryIntrinsic(Intrinsic::maxnum, v, ConstantFP::get(ty, 0.0));
    return b.CreateBinaryIntrinsic(Intrinsic::minnum, lo, ConstantFP::get(ty, 1.0));
  };
  Value* r;
  if (dt == PType::F32 || dt == PType::F64) {
    r = x.to_f32(a, sf);
    if (ftz && dt == PType::F32) {  // bf16's subnormals are f32 subnormals
      Value* tiny = b.CreateFCmpOLT(b.CreateIntrinsic(Intrinsic::fabs, {x.f32_}, {r}),
                                    ConstantFP::get(x.f32_, 0x1p-126));
      r = b.CreateSelect(tiny, b.CreateIntrinsic(Intrinsic::copysign, {x.f32_}, {ConstantFP::get(x.f32_, 0.0), r}), r);
    }
    if (dt == PType::F64) r = b.CreateFPExt(r, x.f64_);
    if (in.has_mod("sat")) r = clamp01(r);
  } else if (is_integer(dt)) {
    auto* to = IntegerType::get(b.getContext(), ptx::type_size(dt) * 8);
    r = float_to_int(b, round_integral(b, x.to_f64(a, sf), in), to, is_signed(dt), ptx::type_size(dt) == 8);
  } else {
    unsupported("uses cvt." + std::string(ptx::type_name(dt)) + "." + std::string(ptx::type_name(st)));
  }
  io.write(in.ops.at(0), dt, r, in);
}

Value* float_to_int(IRBuilder<>& b, Value* v, IntegerType* to, bool is_signed, bool nan_high) {
  Value* r = b.CreateIntrinsic(is_signed ? Intrinsic::fptosi_sat : Intrinsic::fptoui_sat, {to, v->getType()}, {v});
  const unsigned bits = to->getBitWidth();
  Value* nan_value = nan_high ? ConstantInt::get(to, APInt::getOneBitSet(bits, bits - 1)) : ConstantInt::get(to, 0);
  return b.CreateSelect(b.CreateFCmpUNO(v, v), nan_value, r);
}

Value* round_integral(IRBuilder<>& b, Value* v, const ptx::Instruction& in) {
  auto call = [&](Intrinsic::ID id) { return b.CreateIntrinsic(id, {v->getType()}, {v}); };
  if (in.has_mod("rni")) return call(Intrinsic::rint);  // nearest, ties to even
  if (in.has_mod("rmi")) return call(Intrinsic::floor);
  if (in.has_mod("rpi")) return call(Intrinsic::ceil);
  if (in.has_mod("rzi")) return call(Intrinsic::trunc);
  return v;
}

}  // namespace fg::jit::half
