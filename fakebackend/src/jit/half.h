// SPDX-License-Identifier: Apache-2.0
// Half precision for the kernel compiler: f16 and bf16 (and their packed pairs f16x2/bf16x2)
// as raw bits in integer registers, computed with integer and double-precision IR, never
// with LLVM's half/bfloat types (which LLVM 14 lowers on x86-64 to libcalls or, without
// F16C, not at all, and narrows f64 to f16 through f32: two roundings).
//
// Rounding: an operation's exact result is rounded once. add, sub, mul and fma are all
// p + c with p = a * b exact in f64 (11 + 11 or 8 + 8 significand bits); p + c is computed
// in f64 rounded to odd (the f64 sum, its exact error by TwoSum, the last bit set when
// inexact), and a value rounded to odd with at least two more bits than the target rounds
// to the target exactly as the exact value would (Boldo and Melquiond, "When double rounding
// is odd"). So every rounding mode is exact, and so is bf16 fma, for which plain f64 then
// bf16 rounding is not (a product on a bf16 tie plus a c below the f64 ulp).
//
// NaN results are the canonical NaN 0x7fff, as NVIDIA's own host fallbacks in cuda_fp16.hpp
// and cuda_bf16.hpp produce (CUDART_NAN_FP16 / CUDART_NAN_BF16).
#pragma once
#include "kernels/abi.h"
#include "kernels/ptx.h"

#include <llvm/IR/IRBuilder.h>

namespace fg::jit::half {

enum class Format : uint8_t { F16, BF16 };

// The generator's operand access (codegen.cpp's read and write), which half.cpp lowers with.
class Operands {
 public:
  virtual llvm::Value* read(const ptx::Operand& op, ptx::Type t, const ptx::Instruction& in) = 0;
  virtual void write(const ptx::Operand& op, ptx::Type t, llvm::Value* v, const ptx::Instruction& in) = 0;

 protected:
  ~Operands() = default;
};

// True for f16, bf16, f16x2 and bf16x2.
bool is_half(ptx::Type t);

// An arithmetic instruction on half values that lower() handles: add, sub, mul, fma, neg,
// abs, min, max, ex2, tanh on f16/bf16 (packed or not), setp and set comparing them.
bool handles(const ptx::Instruction& in);
void lower(llvm::IRBuilder<>& b, Operands& io, const ptx::Instruction& in);

// x + y rounded to nearest, of one value (i16 bits) or per half of a pair (i32): the update
// of atom.add.noftz / red.add.noftz on half types.
llvm::Value* add(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, ptx::Type t);

// cvt with a half type on either side (including cvt.f16x2.f32 d, a, b).
void cvt(llvm::IRBuilder<>& b, Operands& io, const ptx::Instruction& in);

// PTX's float → integer conversion of `v` (a float or double already rounded to an integral
// value): out of range saturates; NaN gives 0, unless the source is .f64 or the destination
// 64 bits wide (`nan_high`), which give 1 << (bits - 1) (PTX ISA 9.0, cvt).
llvm::Value* float_to_int(llvm::IRBuilder<>& b, llvm::Value* v, llvm::IntegerType* to, bool is_signed, bool nan_high);

// The integral-rounding modifiers .rni/.rzi/.rmi/.rpi applied to a float or double (none:
// `v` unchanged).
llvm::Value* round_integral(llvm::IRBuilder<>& b, llvm::Value* v, const ptx::Instruction& in);

}  // namespace fg::jit::half
