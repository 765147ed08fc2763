// SPDX-License-Identifier: Apache-2.0
// Floating-point operations with PTX's directed rounding modifiers (.rz, .rm, .rp) that
// kernels call (kernels/abi.h): the host's rounding mode is set around one IEEE operation.
// Compiled with -frounding-math so that the compiler neither folds nor moves the operation
// across the mode changes. Directed rounding is rare in kernels (__fadd_rz and friends,
// roundf and fmodf's expansions); round-to-nearest code never comes here.
#include "kernels/abi.h"

#include <cfenv>
#include <cmath>
#include <cstdint>

namespace {

int host_mode(uint32_t mode) {
  switch (static_cast<fg::kernels::Rounding>(mode)) {
    case fg::kernels::Rounding::Zero: return FE_TOWARDZERO;
    case fg::kernels::Rounding::Down: return FE_DOWNWARD;
    case fg::kernels::Rounding::Up: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

template <class T>
T apply(uint32_t op, T a, T b, T c) {
  using fg::kernels::RoundedOp;
  switch (static_cast<RoundedOp>(op)) {
    case RoundedOp::Add: return a + b;
    case RoundedOp::Sub: return a - b;
    case RoundedOp::Mul: return a * b;
    case RoundedOp::Div: return a / b;
    case RoundedOp::Sqrt: return std::sqrt(a);
    case RoundedOp::Fma: return std::fma(a, b, c);
    case RoundedOp::Rcp: return T(1) / a;
  }
  return a;
}

// The integer or double `bits` holds (`from`) as a T, rounded by the current mode.
template <class T>
T convert(uint32_t from, uint64_t bits) {
  using fg::kernels::Source;
  switch (static_cast<Source>(from)) {
    case Source::F64: {
      double d;
      __builtin_memcpy(&d, &bits, 8);
      return static_cast<T>(d);
    }
    case Source::S32: return static_cast<T>(static_cast<int32_t>(bits));
    case Source::U32: return static_cast<T>(static_cast<uint32_t>(bits));
    case Source::S64: return static_cast<T>(static_cast<int64_t>(bits));
    case Source::U64: return static_cast<T>(bits);
  }
  return T(0);
}

// Runs fn() under `mode`, restoring the caller's mode after.
template <class F>
auto rounded(uint32_t mode, F&& fn) {
  const int saved = std::fegetround();
  std::fesetround(host_mode(mode));
  auto r = fn();
  std::fesetround(saved);
  return r;
}

}  // namespace

extern "C" float fg_rt_f32(uint32_t op, uint32_t mode, float a, float b, float c) {
  return rounded(mode, [&] { return apply<float>(op, a, b, c); });
}

extern "C" double fg_rt_f64(uint32_t op, uint32_t mode, double a, double b, double c) {
  return rounded(mode, [&] { return apply<double>(op, a, b, c); });
}

extern "C" float fg_rt_cvt_f32(uint32_t mode, uint32_t from, uint64_t bits) {
  return rounded(mode, [&] { return convert<float>(from, bits); });
}

extern "C" double fg_rt_cvt_f64(uint32_t mode, uint32_t from, uint64_t bits) {
  return rounded(mode, [&] { return convert<double>(from, bits); });
}
