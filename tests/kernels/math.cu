// SPDX-License-Identifier: Apache-2.0
// Integer and floating-point instructions against host references:
//   integer intrinsics (mul.hi, popc, clz, ffs, brev, byte_perm, funnel shifts, sad, dp4a/dp2a,
//   averages, mul24) and 32/64-bit division and remainder: exact;
//   float and double +, -, *, /, sqrt, fma (IEEE-754 correctly rounded: bit-exact, subnormals
//   kept, nvcc's defaults -prec-div/-prec-sqrt/-ftz=false) and the exact functions rint,
//   trunc, floor, ceil, round, fmin, fmax, fmod, remainder, ldexp;
//   the directed-rounding intrinsics (__fadd_rz, __fmul_ru, __ddiv_rd, __fmaf_rz, __fma_ru...):
//   bit-exact; the reference rounds to nearest and steps by one ulp by the sign of the exact
//   residual, which error-free transformations give exactly (TwoSum, fma(a,b,-a*b),
//   fma(-q,b,a), fma(-s,s,a); for double fma an exact 128-bit fixed-point sum);
//   __saturatef and float<->integer conversions in the four rounding modes, with the PTX
//   ISA's clamping (out-of-range values saturate; NaN gives 0 from f32 to 32-bit integers and
//   1 << (bits - 1) from f64 or to 64-bit integers);
//   half and bfloat16 arithmetic and conversions (cuda_fp16.h, cuda_bf16.h), bit-exact
//   against a host rounding of the exact value, except __hdiv and hsqrt, which cuda_fp16.hpp
//   computes with rcp.approx/sqrt.approx: within 1 ulp; edge cases with hand-derived results
//   (fma ties that only a single rounding gets right, relu/sat, NaN and signed zeros in
//   min/max, overflow in each rounding mode, NaN to and from integers, half2 lane order) and
//   atomicAdd on half, half2, bf16 and bfloat162;
//   fast-math intrinsics within the CUDA Programming Guide's bounds (Mathematical Functions
//   appendix): __expf 2 + floor(|1.173 x|) ulp, __logf 2^-21.41 absolute on [0.5, 2] else
//   3 ulp, __sinf/__cosf 2^-21.19 absolute on [-pi, pi] (the guide gives 2^-21.41 for one and
//   2^-21.19 for the other; the looser is used for both), __fdividef 2 ulp;
//   standard functions within the guide's maximum ulp errors: expf 2, logf 1, sinf 2, cosf 2,
//   powf 4; exp 1, log 1, sin 2, cos 2 (double, against long double references).
// Built with -arch=sm_80 (bfloat16 arithmetic in hardware; compute capability 8.0 or later).
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <climits>
#include <vector>

using ull = unsigned long long;
using ll = long long;

using kt::from_device;
using kt::to_device;
template <typename T>
static T* device_array(size_t n) {
  T* d;
  CK(cudaMalloc(&d, n * sizeof(T)));
  CK(cudaMemset(d, 0, n * sizeof(T)));
  return d;
}

// ================================ integers ================================================
constexpr int kIntOps = 34;
__global__ void int_ops(const unsigned* a, const unsigned* b, const unsigned* c, ull* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i];
  ull X = static_cast<ull>(x) << 32 | y, Y = static_cast<ull>(z) << 32 | (x ^ y);
  int sx = static_cast<int>(x), sy = static_cast<int>(y);
  int s24x = sx << 8 >> 8, s24y = sy << 8 >> 8;
  int sadx = sx >> 2, sady = sy >> 2;
  ll SX = static_cast<ll>(X), SY = static_cast<ll>(Y) >> (z % 60);
  if (SY == 0) SY = 7;
  if (SY == -1 && SX == LLONG_MIN) SY = 3;
  ull UY = Y >> (z % 60);
  if (UY == 0) UY = 5;
  int dy32 = sy >> (z % 28);
  if (dy32 == 0) dy32 = 3;
  if (dy32 == -1 && sx == INT_MIN) dy32 = 5;
  unsigned uy32 = y >> (z % 28);
  if (uy32 == 0) uy32 = 9;
  ull r[kIntOps];
  r[0] = static_cast<unsigned>(__mulhi(sx, sy));
  r[1] = __umulhi(x, y);
  r[2] = static_cast<ull>(__mul64hi(static_cast<ll>(X), static_cast<ll>(Y)));
  r[3] = __umul64hi(X, Y);
  r[4] = __popc(x);
  r[5] = __popcll(X);
  r[6] = __clz(sx);
  r[7] = __clzll(static_cast<ll>(X));
  r[8] = __ffs(sx);
  r[9] = __ffsll(static_cast<ll>(X));
  r[10] = __brev(x);
  r[11] = __brevll(X);
  r[12] = __byte_perm(x, y, z & 0x7777);
  r[13] = __funnelshift_l(x, y, z);
  r[14] = __funnelshift_lc(x, y, z % 40);
  r[15] = __funnelshift_r(x, y, z);
  r[16] = __funnelshift_rc(x, y, z % 40);
  r[17] = __sad(sadx, sady, z & 0xffff);
  r[18] = __usad(x, y, z & 0xffff);
  r[19] = static_cast<unsigned>(__dp4a(sx, sy, static_cast<int>(z >> 8)));
  r[20] = __dp4a(x, y, z >> 8);
  r[21] = static_cast<unsigned>(__dp2a_lo(sx, sy, static_cast<int>(z >> 8)));
  r[22] = static_cast<unsigned>(__dp2a_hi(sx, sy, static_cast<int>(z >> 8)));
  r[23] = static_cast<unsigned>(__hadd(sx, sy));
  r[24] = static_cast<unsigned>(__rhadd(sx, sy));
  r[25] = __uhadd(x, y);
  r[26] = __urhadd(x, y);
  r[27] = static_cast<unsigned>(__mul24(s24x, s24y));
  r[28] = __umul24(x & 0xffffff, y & 0xffffff);
  r[29] = static_cast<ull>(SX / SY);
  r[30] = static_cast<ull>(SX % SY);
  r[31] = (X / UY) ^ (X % UY) << 1;
  r[32] = static_cast<unsigned>(sx / dy32) ^ static_cast<ull>(static_cast<unsigned>(sx % dy32)) << 32;
  r[33] = (x / uy32) ^ static_cast<ull>(x % uy32) << 32;
  for (int k = 0; k < kIntOps; ++k) out[static_cast<size_t>(k) * n + i] = r[k];
}

static int clz32(uint32_t v) { return v ? __builtin_clz(v) : 32; }
static int clz64(uint64_t v) { return v ? __builtin_clzll(v) : 64; }
static uint32_t brev32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
static uint64_t brev64(uint64_t v) {
  return static_cast<uint64_t>(brev32(static_cast<uint32_t>(v))) << 32 | brev32(v >> 32);
}
static int8_t byte_s(uint32_t v, int k) { return static_cast<int8_t>(v >> (8 * k)); }
static uint8_t byte_u(uint32_t v, int k) { return static_cast<uint8_t>(v >> (8 * k)); }

static void host_int_ops(uint32_t x, uint32_t y, uint32_t z, ull* r) {
  ull X = static_cast<ull>(x) << 32 | y, Y = static_cast<ull>(z) << 32 | (x ^ y);
  int32_t sx = static_cast<int32_t>(x), sy = static_cast<int32_t>(y);
  int32_t s24x = static_cast<int32_t>(x << 8) >> 8, s24y = static_cast<int32_t>(y << 8) >> 8;
  int32_t sadx = sx >> 2, sady = sy >> 2;
  ll SX = static_cast<ll>(X), SY = static_cast<ll>(Y) >> (z % 60);
  if (SY == 0) SY = 7;
  if (SY == -1 && SX == LLONG_MIN) SY = 3;
  ull UY = Y >> (z % 60);
  if (UY == 0) UY = 5;
  int32_t dy32 = sy >> (z % 28);
  if (dy32 == 0) dy32 = 3;
  if (dy32 == -1 && sx == INT_MIN) dy32 = 5;
  uint32_t uy32 = y >> (z % 28);
  if (uy32 == 0) uy32 = 9;
  r[0] = static_cast<uint32_t>((static_cast<int64_t>(sx) * sy) >> 32);
  r[1] = static_cast<uint32_t>((static_cast<uint64_t>(x) * y) >> 32);
  r[2] = static_cast<ull>(static_cast<ll>((static_cast<__int128>(static_cast<ll>(X)) * static_cast<ll>(Y)) >> 64));
  r[3] = static_cast<ull>((static_cast<unsigned __int128>(X) * Y) >> 64);
  r[4] = __builtin_popcount(x);
  r[5] = __builtin_popcountll(X);
  r[6] = clz32(x);
  r[7] = clz64(X);
  r[8] = x ? __builtin_ctz(x) + 1 : 0;
  r[9] = X ? __builtin_ctzll(X) + 1 : 0;
  r[10] = brev32(x);
  r[11] = brev64(X);
  {
    uint64_t both = static_cast<uint64_t>(y) << 32 | x;  // bytes 0-3 from x, 4-7 from y
    uint32_t s = z & 0x7777, v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>((both >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k);
    r[12] = v;
  }
  {
    uint64_t hl = static_cast<uint64_t>(y) << 32 | x;  // hi:lo
    r[13] = static_cast<uint32_t>((hl << (z & 31)) >> 32);
    uint32_t c = z % 40 < 32 ? z % 40 : 32;
    r[14] = static_cast<uint32_t>((hl << c) >> 32);
    r[15] = static_cast<uint32_t>(hl >> (z & 31));
    r[16] = static_cast<uint32_t>(hl >> c);
  }
  r[17] = static_cast<uint32_t>((sadx > sady ? sadx - sady : sady - sadx) + (z & 0xffff));
  r[18] = static_cast<uint32_t>((x > y ? x - y : y - x) + (z & 0xffff));
  {
    int32_t acc = static_cast<int32_t>(z >> 8);
    uint32_t uacc = z >> 8;
    for (int k = 0; k < 4; ++k) acc += byte_s(x, k) * byte_s(y, k), uacc += byte_u(x, k) * byte_u(y, k);
    r[19] = static_cast<uint32_t>(acc);
    r[20] = uacc;
    int32_t lo = static_cast<int32_t>(z >> 8), hi = lo;
    for (int k = 0; k < 2; ++k) {
      int32_t h = static_cast<int16_t>(x >> (16 * k));
      lo += h * byte_s(y, k);
      hi += h * byte_s(y, k + 2);
    }
    r[21] = static_cast<uint32_t>(lo);
    r[22] = static_cast<uint32_t>(hi);
  }
  r[23] = static_cast<uint32_t>(static_cast<int32_t>((static_cast<int64_t>(sx) + sy) >> 1));
  r[24] = static_cast<uint32_t>(static_cast<int32_t>((static_cast<int64_t>(sx) + sy + 1) >> 1));
  r[25] = static_cast<uint32_t>((static_cast<uint64_t>(x) + y) >> 1);
  r[26] = static_cast<uint32_t>((static_cast<uint64_t>(x) + y + 1) >> 1);
  r[27] = static_cast<uint32_t>(static_cast<int64_t>(s24x) * s24y);
  r[28] = static_cast<uint32_t>(static_cast<uint64_t>(x & 0xffffff) * (y & 0xffffff));
  r[29] = static_cast<ull>(SX / SY);
  r[30] = static_cast<ull>(SX % SY);
  r[31] = (X / UY) ^ (X % UY) << 1;
  r[32] = static_cast<uint32_t>(sx / dy32) ^ static_cast<ull>(static_cast<uint32_t>(sx % dy32)) << 32;
  r[33] = (x / uy32) ^ static_cast<ull>(x % uy32) << 32;
}

static void integer_checks() {
  const int n = 512;
  std::vector<unsigned> a(n), b(n), c(n);
  kt::Rng rng(101);
  for (int i = 0; i < n; ++i) a[i] = rng.u32(), b[i] = rng.u32(), c[i] = rng.u32();
  const unsigned special[] = {0, 1, 0xffffffffu, 0x80000000u, 0x7fffffffu, 0x00010000u, 0xff00ff00u, 0x12345678u};
  for (int i = 0; i < 64; ++i) a[i] = special[i % 8], b[i] = special[i / 8];
  unsigned *da = to_device(a), *db = to_device(b), *dc = to_device(c);
  ull* dout = device_array<ull>(static_cast<size_t>(kIntOps) * n);
  int_ops<<<(n + 127) / 128, 128>>>(da, db, dc, dout, n);
  CK_LAUNCH();
  auto got = from_device(dout, static_cast<size_t>(kIntOps) * n);
  std::vector<ull> want(got.size());
  for (int i = 0; i < n; ++i) {
    ull r[kIntOps];
    host_int_ops(a[i], b[i], c[i], r);
    for (int k = 0; k < kIntOps; ++k) want[static_cast<size_t>(k) * n + i] = r[k];
  }
  const char* names[kIntOps] = {"__mulhi",
                                "__umulhi",
                                "__mul64hi",
                                "__umul64hi",
                                "__popc",
                                "__popcll",
                                "__clz",
                                "__clzll",
                                "__ffs",
                                "__ffsll",
                                "__brev",
                                "__brevll",
                                "__byte_perm",
                                "__funnelshift_l",
                                "__funnelshift_lc",
                                "__funnelshift_r",
                                "__funnelshift_rc",
                                "__sad",
                                "__usad",
                                "__dp4a (signed)",
                                "__dp4a (unsigned)",
                                "__dp2a_lo",
                                "__dp2a_hi",
                                "__hadd (int)",
                                "__rhadd",
                                "__uhadd",
                                "__urhadd",
                                "__mul24",
                                "__umul24",
                                "64-bit signed /",
                                "64-bit signed %",
                                "64-bit unsigned / and %",
                                "32-bit signed / and %",
                                "32-bit unsigned / and %"};
  for (int k = 0; k < kIntOps; ++k)
    kt::check_array(names[k], &got[static_cast<size_t>(k) * n], &want[static_cast<size_t>(k) * n], n);
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  CK(cudaFree(dout));
}

// ================================ IEEE basic operations =====================================
constexpr int kBasic = 15;
template <typename T>
__global__ void basic_ops(const T* a, const T* b, const T* c, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T x = a[i], y = b[i], z = c[i];
  T* o = out + i;
  o[0 * n] = x + y;
  o[1 * n] = x - y;
  o[2 * n] = x * y;
  o[3 * n] = x / y;
  o[4 * n] = sqrt(fabs(x));
  o[5 * n] = fma(x, y, z);
  o[6 * n] = rint(x);
  o[7 * n] = trunc(x);
  o[8 * n] = floor(x);
  o[9 * n] = ceil(x);
  o[10 * n] = round(x);
  o[11 * n] = fmin(x, y);
  o[12 * n] = fmax(x, y);
  o[13 * n] = fmod(x, y);
  o[14 * n] = ldexp(x, static_cast<int>(i % 41) - 20);
}

template <typename T>
static void basic_reference(T x, T y, T z, int i, T* r) {
  volatile T vx = x, vy = y;  // the host computes each operation on its own, no contraction
  r[0] = vx + vy;
  r[1] = vx - vy;
  r[2] = vx * vy;
  r[3] = vx / vy;
  r[4] = std::sqrt(std::fabs(x));
  r[5] = std::fma(x, y, z);
  r[6] = std::nearbyint(x);
  r[7] = std::trunc(x);
  r[8] = std::floor(x);
  r[9] = std::ceil(x);
  r[10] = std::round(x);
  r[11] = std::fmin(x, y);
  r[12] = std::fmax(x, y);
  r[13] = std::fmod(x, y);
  r[14] = std::ldexp(x, i % 41 - 20);
}

template <typename T>
static T random_value(kt::Rng& rng, int emin, int emax) {
  T m = static_cast<T>(rng.uniform(1, 2));
  int e = emin + static_cast<int>(rng.u32() % static_cast<unsigned>(emax - emin + 1));
  T v = std::ldexp(m, e);
  return (rng.u32() & 1) ? -v : v;
}

template <typename T>
static void basic_checks(const char* type) {
  const int n = 1024;
  std::vector<T> a(n), b(n), c(n);
  kt::Rng rng(sizeof(T) * 13);
  for (int i = 0; i < n; ++i)
    a[i] = random_value<T>(rng, -30, 30), b[i] = random_value<T>(rng, -30, 30), c[i] = random_value<T>(rng, -40, 40);
  // Edges: halves for rounding to integers, subnormal results, infinities, signed zeros.
  const T lim_min = std::numeric_limits<T>::min();
  const T special[][3] = {{T(0.5), T(1), T(0)},
                          {T(1.5), T(-0.0), T(-0.0)},
                          {T(2.5), T(3), T(-1)},
                          {T(-2.5), T(7), T(2)},
                          {T(-0.5), T(-4), T(1)},
                          {lim_min, T(0.25), T(0)},
                          {lim_min * 3, T(-0.5), lim_min},
                          {T(1e-20), T(1e-20), T(0)},
                          {INFINITY, T(2), T(1)},
                          {T(-0.0), T(-0.0), T(-0.0)},
                          {T(1) / 3, T(3), T(-1)},
                          {T(4503599627370497.0), T(1), T(0)}};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; ++k)
    a[k] = special[k][0], b[k] = special[k][1], c[k] = special[k][2];
  T *da = to_device(a), *db = to_device(b), *dc = to_device(c),
    *dout = device_array<T>(static_cast<size_t>(kBasic) * n);
  basic_ops<<<(n + 127) / 128, 128>>>(da, db, dc, dout, n);
  CK_LAUNCH();
  auto got = from_device(dout, static_cast<size_t>(kBasic) * n);
  std::vector<T> want(got.size());
  for (int i = 0; i < n; ++i) {
    T r[kBasic];
    basic_reference(a[i], b[i], c[i], i, r);
    for (int k = 0; k < kBasic; ++k) want[static_cast<size_t>(k) * n + i] = r[k];
  }
  const char* ops[kBasic] = {"+",     "-",    "*",     "/",    "sqrt", "fma",  "rint", "trunc",
                             "floor", "ceil", "round", "fmin", "fmax", "fmod", "ldexp"};
  for (int k = 0; k < kBasic; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "%s %s: correctly rounded (bit-exact)", type, ops[k]);
    kt::check_array(name, &got[static_cast<size_t>(k) * n], &want[static_cast<size_t>(k) * n], n);
  }
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  CK(cudaFree(dout));
}

// ================================ directed rounding ==========================================
enum Mode { kRN, kRZ, kRU, kRD };
constexpr int kDirOps = 7;  // add sub mul div sqrt rcp fma, each in 4 modes

#define KT_MODES(op, ...) op##_rn(__VA_ARGS__), op##_rz(__VA_ARGS__), op##_ru(__VA_ARGS__), op##_rd(__VA_ARGS__)
__global__ void directed_f(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i], ax = fabsf(x);
  float r[kDirOps * 4] = {KT_MODES(__fadd, x, y),   KT_MODES(__fsub, x, y), KT_MODES(__fmul, x, y),
                          KT_MODES(__fdiv, x, y),   KT_MODES(__fsqrt, ax),  KT_MODES(__frcp, y),
                          KT_MODES(__fmaf, x, y, z)};
  for (int k = 0; k < kDirOps * 4; ++k) out[static_cast<size_t>(k) * n + i] = r[k];
}
__global__ void directed_d(const double* a, const double* b, const double* c, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i], z = c[i], ax = fabs(x);
  double r[kDirOps * 4] = {KT_MODES(__dadd, x, y),  KT_MODES(__dsub, x, y), KT_MODES(__dmul, x, y),
                           KT_MODES(__ddiv, x, y),  KT_MODES(__dsqrt, ax),  KT_MODES(__drcp, y),
                           KT_MODES(__fma, x, y, z)};
  for (int k = 0; k < kDirOps * 4; ++k) out[static_cast<size_t>(k) * n + i] = r[k];
}

// rn: the result rounded to nearest; s: the sign of (exact - rn).
template <typename T>
static T directed(T rn, int s, Mode m) {
  if (s == 0 || m == kRN) return rn;
  bool up = m == kRU || (m == kRZ && rn < 0);
  if (up) return s > 0 ? std::nextafter(rn, T(INFINITY)) : rn;
  return s < 0 ? std::nextafter(rn, T(-INFINITY)) : rn;
}
template <typename T>
static int sign_of(T v) {
  return (v > 0) - (v < 0);
}

// Signs of the exact residuals, exact as long as nothing underflows or overflows (the inputs
// keep every result well inside the normal range).
template <typename T>
static int add_residual(T a, T b, T s) {
  volatile T vs = s;
  T bb = vs - a;
  volatile T t1 = vs - bb;
  return sign_of((a - t1) + (b - bb));
}
template <typename T>
static int fixed_fma_residual(T a, T b, T c, T rn);
template <>
int fixed_fma_residual<float>(float a, float b, float c, float rn) {
  double p = static_cast<double>(a) * b;  // exact
  double s = p + c;
  double e = add_residual<double>(p, c, s) == 0 ? 0.0 : (p - (s - (s - p))) + (c - (s - p));
  double d = s - static_cast<double>(rn);  // exact: s and rn are within a factor of 2
  return sign_of(d + e);
}
// Double fma: a, b in +-[1, 4), c in +-[1, 8) (double_fma_inputs), so a*b+c is an exact
// integer multiple of 2^-104 below 2^110: compare it with rn in 128-bit fixed point.
template <>
int fixed_fma_residual<double>(double a, double b, double c, double rn) {
  __int128 x = static_cast<__int128>(std::ldexp(a, 52)) * static_cast<__int128>(std::ldexp(b, 52)) +
               static_cast<__int128>(std::ldexp(c, 104));
  double rs = std::ldexp(rn, 104), fl = std::floor(rs);
  __int128 f = static_cast<__int128>(fl);
  if (fl == rs) return x > f ? 1 : x < f ? -1 : 0;
  return x <= f ? -1 : 1;
}

template <typename T>
static void directed_reference(T x, T y, T z, bool fma_ok, T* r) {
  volatile T vx = x, vy = y;
  T rn[kDirOps];
  int s[kDirOps];
  rn[0] = vx + vy, s[0] = add_residual<T>(x, y, rn[0]);
  rn[1] = vx - vy, s[1] = add_residual<T>(x, -y, rn[1]);
  rn[2] = vx * vy, s[2] = sign_of(std::fma(x, y, -rn[2]));
  rn[3] = vx / vy, s[3] = sign_of(std::fma(-rn[3], y, x)) * sign_of(y);
  T ax = std::fabs(x);
  rn[4] = std::sqrt(ax), s[4] = sign_of(std::fma(-rn[4], rn[4], ax));
  rn[5] = T(1) / vy, s[5] = sign_of(std::fma(-rn[5], y, T(1))) * sign_of(y);
  rn[6] = std::fma(x, y, z), s[6] = fma_ok ? fixed_fma_residual<T>(x, y, z, rn[6]) : 0;
  for (int k = 0; k < kDirOps; ++k)
    for (int m = 0; m < 4; ++m) r[k * 4 + m] = directed(rn[k], s[k], static_cast<Mode>(m));
}

template <typename T>
static void directed_checks(const char* type) {
  const int n = 1024;
  std::vector<T> a(n), b(n), c(n);
  kt::Rng rng(sizeof(T) * 29);
  for (int i = 0; i < n; ++i) {
    if (sizeof(T) == 8) {  // double fma needs its own ranges (fixed_fma_residual)
      T ma = static_cast<T>(rng.uniform(1, 4)), mb = static_cast<T>(rng.uniform(1, 4)),
        mc = static_cast<T>(rng.uniform(1, 8));
      a[i] = (rng.u32() & 1) ? -ma : ma, b[i] = (rng.u32() & 1) ? -mb : mb, c[i] = (rng.u32() & 1) ? -mc : mc;
      if (i % 2) a[i] = random_value<T>(rng, -20, 20), b[i] = random_value<T>(rng, -20, 20);  // fma row ignored
    } else {
      a[i] = random_value<T>(rng, -20, 20), b[i] = random_value<T>(rng, -20, 20), c[i] = random_value<T>(rng, -20, 20);
    }
  }
  a[0] = T(1), b[0] = T(3), c[0] = T(1);  // 1/3, 1+3: an inexact and an exact case up front
  T *da = to_device(a), *db = to_device(b), *dc = to_device(c),
    *dout = device_array<T>(static_cast<size_t>(kDirOps) * 4 * n);
  if constexpr (sizeof(T) == 4)
    directed_f<<<(n + 127) / 128, 128>>>(da, db, dc, dout, n);
  else
    directed_d<<<(n + 127) / 128, 128>>>(da, db, dc, dout, n);
  CK_LAUNCH();
  auto got = from_device(dout, static_cast<size_t>(kDirOps) * 4 * n);
  std::vector<T> want(got.size());
  std::vector<char> use(n, 1);
  for (int i = 0; i < n; ++i) {
    T r[kDirOps * 4];
    directed_reference(a[i], b[i], c[i], sizeof(T) == 4 || i % 2 == 0, r);
    for (int k = 0; k < kDirOps * 4; ++k) want[static_cast<size_t>(k) * n + i] = r[k];
  }
  const char* ops_f[kDirOps] = {"__fadd", "__fsub", "__fmul", "__fdiv", "__fsqrt", "__frcp", "__fmaf"};
  const char* ops_d[kDirOps] = {"__dadd", "__dsub", "__dmul", "__ddiv", "__dsqrt", "__drcp", "__fma"};
  const char* modes[4] = {"_rn", "_rz", "_ru", "_rd"};
  for (int k = 0; k < kDirOps; ++k)
    for (int m = 0; m < 4; ++m) {
      char name[64];
      std::snprintf(name, sizeof name, "%s%s (%s, bit-exact)", sizeof(T) == 4 ? ops_f[k] : ops_d[k], modes[m], type);
      size_t off = static_cast<size_t>(k * 4 + m) * n;
      if (sizeof(T) == 8 && k == 6) {  // double fma: the rows with the bounded inputs only
        std::vector<T> g, w;
        for (int i = 0; i < n; i += 2) g.push_back(got[off + i]), w.push_back(want[off + i]);
        kt::check_array(name, g.data(), w.data(), g.size());
      } else {
        kt::check_array(name, &got[off], &want[off], n);
      }
    }
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  CK(cudaFree(dout));
}

// ================================ saturation and conversions =================================
constexpr int kToInt = 16;  // {int, uint, ll, ull} x {rn, rz, ru, rd}
template <typename T>
__device__ void to_int_all(T v, ull* r);
template <>
__device__ void to_int_all<float>(float v, ull* r) {
  ull o[kToInt] = {static_cast<unsigned>(__float2int_rn(v)),
                   static_cast<unsigned>(__float2int_rz(v)),
                   static_cast<unsigned>(__float2int_ru(v)),
                   static_cast<unsigned>(__float2int_rd(v)),
                   __float2uint_rn(v),
                   __float2uint_rz(v),
                   __float2uint_ru(v),
                   __float2uint_rd(v),
                   static_cast<ull>(__float2ll_rn(v)),
                   static_cast<ull>(__float2ll_rz(v)),
                   static_cast<ull>(__float2ll_ru(v)),
                   static_cast<ull>(__float2ll_rd(v)),
                   __float2ull_rn(v),
                   __float2ull_rz(v),
                   __float2ull_ru(v),
                   __float2ull_rd(v)};
  for (int k = 0; k < kToInt; ++k) r[k] = o[k];
}
template <>
__device__ void to_int_all<double>(double v, ull* r) {
  ull o[kToInt] = {static_cast<unsigned>(__double2int_rn(v)),
                   static_cast<unsigned>(__double2int_rz(v)),
                   static_cast<unsigned>(__double2int_ru(v)),
                   static_cast<unsigned>(__double2int_rd(v)),
                   __double2uint_rn(v),
                   __double2uint_rz(v),
                   __double2uint_ru(v),
                   __double2uint_rd(v),
                   static_cast<ull>(__double2ll_rn(v)),
                   static_cast<ull>(__double2ll_rz(v)),
                   static_cast<ull>(__double2ll_ru(v)),
                   static_cast<ull>(__double2ll_rd(v)),
                   __double2ull_rn(v),
                   __double2ull_rz(v),
                   __double2ull_ru(v),
                   __double2ull_rd(v)};
  for (int k = 0; k < kToInt; ++k) r[k] = o[k];
}
template <typename T>
__global__ void to_int(const T* in, ull* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ull r[kToInt];
  to_int_all<T>(in[i], r);
  for (int k = 0; k < kToInt; ++k) out[static_cast<size_t>(k) * n + i] = r[k];
}

template <typename T>
static void to_int_reference(T v, ull* r) {
  for (int width = 0; width < 4; ++width) {
    bool is_signed = width % 2 == 0, is64 = width >= 2;
    long double lo = is_signed ? (is64 ? -0x1p63L : -0x1p31L) : 0.0L;
    long double hi = is64 ? (is_signed ? 0x1p63L - 1 : 0x1p64L - 1) : (is_signed ? 0x1p31L - 1 : 0x1p32L - 1);
    for (int m = 0; m < 4; ++m) {
      ull out;
      if (std::isnan(v)) {
        // PTX cvt: 0 from f32 to 32-bit integers, otherwise 1 << (bits - 1).
        out = (sizeof(T) == 4 && !is64) ? 0 : (is64 ? 1ull << 63 : 1ull << 31);
      } else {
        long double x = v;
        x = m == kRN ? std::nearbyint(x) : m == kRZ ? std::trunc(x) : m == kRU ? std::ceil(x) : std::floor(x);
        if (x < lo) x = lo;
        if (x > hi) x = hi;
        out = is_signed ? static_cast<ull>(static_cast<ll>(x)) : static_cast<ull>(x);
        if (!is64) out &= 0xffffffffull;
      }
      r[(width == 0 ? 0 : width == 1 ? 4 : width == 2 ? 8 : 12) + m] = out;
    }
  }
}

template <typename T>
static void to_int_checks(const char* type) {
  std::vector<T> in = {T(0.5),          T(1.5),           T(2.5),
                       T(-0.5),         T(-1.5),          T(-2.5),
                       T(3.7),          T(-3.7),          T(0.0),
                       T(-0.0),         T(1e9),           T(-1e9),
                       T(3e9),          T(-3e9),          T(5e18),
                       T(1e19),         T(-1e19),         T(2e19),
                       T(2147483520.0), T(2147483648.0),  T(4294967040.0),
                       T(4294967296.0), T(123456.789),    T(8388609.0),
                       T(0.49999997),   T(-2147483904.0), NAN,
                       INFINITY,        -INFINITY};
  int n = static_cast<int>(in.size());
  T* din = to_device(in);
  ull* dout = device_array<ull>(static_cast<size_t>(kToInt) * n);
  to_int<T><<<1, n>>>(din, dout, n);
  CK_LAUNCH();
  auto got = from_device(dout, static_cast<size_t>(kToInt) * n);
  std::vector<ull> want(got.size());
  for (int i = 0; i < n; ++i) {
    ull r[kToInt];
    to_int_reference(in[i], r);
    for (int k = 0; k < kToInt; ++k) want[static_cast<size_t>(k) * n + i] = r[k];
  }
  const char* dst[4] = {"int", "uint", "ll", "ull"};
  const char* modes[4] = {"rn", "rz", "ru", "rd"};
  for (int k = 0; k < kToInt; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "__%s2%s_%s (clamped, NaN per PTX)", type, dst[k / 4], modes[k % 4]);
    kt::check_array(name, &got[static_cast<size_t>(k) * n], &want[static_cast<size_t>(k) * n], n);
  }
  CK(cudaFree(din));
  CK(cudaFree(dout));
}

// Integer to floating point in four modes: int, uint, ll, ull -> float; ll, ull -> double.
constexpr int kFromInt = 24;
__global__ void from_int(const ull* in, float* outf, double* outd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ull u = in[i];
  int si = static_cast<int>(u);
  unsigned ui = static_cast<unsigned>(u);
  ll sl = static_cast<ll>(u);
  float f[16] = {KT_MODES(__int2float, si), KT_MODES(__uint2float, ui), KT_MODES(__ll2float, sl),
                 KT_MODES(__ull2float, u)};
  double d[8] = {KT_MODES(__ll2double, sl), KT_MODES(__ull2double, u)};
  for (int k = 0; k < 16; ++k) outf[static_cast<size_t>(k) * n + i] = f[k];
  for (int k = 0; k < 8; ++k) outd[static_cast<size_t>(k) * n + i] = d[k];
}
template <typename T, typename I>
static void from_int_reference(I x, T* r) {
  T rn = static_cast<T>(x);  // the host converts to nearest
  long double diff = static_cast<long double>(x) - static_cast<long double>(rn);
  for (int m = 0; m < 4; ++m) r[m] = directed(rn, sign_of(diff), static_cast<Mode>(m));
}

static void from_int_checks() {
  std::vector<ull> in = {0,
                         1,
                         16777217,
                         static_cast<ull>(-16777217LL),
                         2147483647,
                         0x80000000ull,
                         33554435,
                         123456789,
                         0xffffffffull,
                         static_cast<ull>(-1LL),
                         9007199254740993ull,
                         0x8000000000000001ull,
                         0xffffffffffffffffull,
                         0x7fffffffffffffffull,
                         static_cast<ull>(-9007199254740993LL),
                         0x0000000100000001ull,
                         0x123456789abcdefull};
  int n = static_cast<int>(in.size());
  ull* din = to_device(in);
  float* df = device_array<float>(16 * n);
  double* dd = device_array<double>(8 * n);
  from_int<<<1, n>>>(din, df, dd, n);
  CK_LAUNCH();
  auto gf = from_device(df, 16 * n);
  auto gd = from_device(dd, 8 * n);
  std::vector<float> wf(16 * n);
  std::vector<double> wd(8 * n);
  for (int i = 0; i < n; ++i) {
    float r[4];
    double rd[4];
    from_int_reference(static_cast<int>(in[i]), r);
    for (int m = 0; m < 4; ++m) wf[(0 + m) * n + i] = r[m];
    from_int_reference(static_cast<unsigned>(in[i]), r);
    for (int m = 0; m < 4; ++m) wf[(4 + m) * n + i] = r[m];
    from_int_reference(static_cast<ll>(in[i]), r);
    for (int m = 0; m < 4; ++m) wf[(8 + m) * n + i] = r[m];
    from_int_reference(in[i], r);
    for (int m = 0; m < 4; ++m) wf[(12 + m) * n + i] = r[m];
    from_int_reference(static_cast<ll>(in[i]), rd);
    for (int m = 0; m < 4; ++m) wd[(0 + m) * n + i] = rd[m];
    from_int_reference(in[i], rd);
    for (int m = 0; m < 4; ++m) wd[(4 + m) * n + i] = rd[m];
  }
  const char* srcs[6] = {"__int2float", "__uint2float", "__ll2float", "__ull2float", "__ll2double", "__ull2double"};
  const char* modes[4] = {"_rn", "_rz", "_ru", "_rd"};
  for (int k = 0; k < kFromInt; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "%s%s", srcs[k / 4], modes[k % 4]);
    if (k < 16)
      kt::check_array(name, &gf[static_cast<size_t>(k) * n], &wf[static_cast<size_t>(k) * n], n);
    else
      kt::check_array(name, &gd[static_cast<size_t>(k - 16) * n], &wd[static_cast<size_t>(k - 16) * n], n);
  }
  CK(cudaFree(din));
  CK(cudaFree(df));
  CK(cudaFree(dd));
}

__global__ void saturate(const float* in, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = __saturatef(in[i]);
}
static void saturate_checks() {
  std::vector<float> in = {-2.0f, -0.5f,      0.0f, 0.25f,    0.5f,      0.99999994f,
                           1.0f,  1.0000001f, 3.0f, INFINITY, -INFINITY, NAN};
  int n = static_cast<int>(in.size());
  float *din = to_device(in), *dout = device_array<float>(n);
  saturate<<<1, n>>>(din, dout, n);
  CK_LAUNCH();
  auto got = from_device(dout, n);
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) {
    float v = in[i];
    want[i] = std::isnan(v) ? 0.0f : v < 0 ? 0.0f : v > 1 ? 1.0f : v;
    got[i] += 0.0f;  // a clamped -0 counts as 0
  }
  kt::check_array("__saturatef (clamp to [0,1], NaN -> 0)", got.data(), want.data(), n);
  CK(cudaFree(din));
  CK(cudaFree(dout));
}

// ================================ half and bfloat16 =========================================
// x rounded to a binary format with p significand bits, smallest normal 2^emin and largest
// finite max_finite, in mode m: a double (or +-inf).
static double round_format(double x, int p, int emin, double max_finite, Mode m) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  bool neg = x < 0;
  double a = std::fabs(x);
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  int ulp_exp = std::max(e - p, emin - p + 1);
  double q = std::ldexp(a, -ulp_exp), r;
  bool away;  // round the magnitude up
  switch (m) {
    case kRN: r = std::nearbyint(q); break;
    case kRZ: r = std::trunc(q); break;
    default: away = (m == kRU) != neg; r = away ? std::ceil(q) : std::floor(q);
  }
  double v = std::ldexp(r, ulp_exp);
  if (v > max_finite) {
    bool to_inf = m == kRN || (m == kRU && !neg) || (m == kRD && neg);
    v = to_inf ? INFINITY : max_finite;
  }
  return neg ? -v : v;
}
static uint16_t half_bits(double v) {  // v: exactly a binary16 value
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (std::isinf(v)) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));
  int e;
  std::frexp(a, &e);
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | static_cast<uint16_t>(std::ldexp(a, 11 - e) - 1024);
}
static double half_value(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(man, -24) : exp == 31 ? (man ? NAN : INFINITY) : std::ldexp(1024 + man, exp - 25);
  return (h & 0x8000) ? -v : v;
}
static uint16_t to_half(double x, Mode m = kRN) { return half_bits(round_format(x, 11, -14, 65504.0, m)); }
static uint16_t bf16_bits(double v) { return static_cast<uint16_t>(kt::bits(static_cast<float>(v)) >> 16); }
static double bf16_value(uint16_t h) { return kt::float_of(static_cast<uint32_t>(h) << 16); }
static uint16_t to_bf16(double x, Mode m = kRN) {
  return bf16_bits(round_format(x, 8, -126, std::ldexp(255.0, 120), m));
}

constexpr int kHalfOps = 14;
__global__ void half_ops(const __half* a, const __half* b, const __half* c, const float* f, uint16_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i], z = c[i];
  __half2 xy = __halves2half2(x, y), zx = __halves2half2(z, x), yz = __halves2half2(y, z);
  __half2 s2 = __hadd2(xy, zx), m2 = __hfma2(xy, yz, zx);
  __half r[kHalfOps] = {__hadd(x, y),
                        __hsub(x, y),
                        __hmul(x, y),
                        __hfma(x, y, z),
                        __hneg(x),
                        __habs(x),
                        __hmax(x, y),
                        __hmin(x, y),
                        __low2half(s2),
                        __high2half(m2),
                        __float2half_rn(f[i]),
                        __float2half_rz(f[i]),
                        __float2half_ru(f[i]),
                        __float2half_rd(f[i])};
  for (int k = 0; k < kHalfOps; ++k) out[static_cast<size_t>(k) * n + i] = __half_as_ushort(r[k]);
  out[static_cast<size_t>(kHalfOps) * n + i] = __half_as_ushort(__hdiv(x, y));
  out[static_cast<size_t>(kHalfOps + 1) * n + i] = __half_as_ushort(hsqrt(__habs(x)));
  out[static_cast<size_t>(kHalfOps + 2) * n + i] = __hlt(x, y) | __heq(x, x) << 1;
  unsigned wide = __float_as_uint(__half2float(x));  // exact widening: bits 3..31 folded into 16
  out[static_cast<size_t>(kHalfOps + 3) * n + i] = static_cast<uint16_t>(wide >> 16) ^ static_cast<uint16_t>(wide >> 3);
}

constexpr int kBfOps = 8;
__global__ void bf16_ops(const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c, const float* f,
                         uint16_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 x = a[i], y = b[i], z = c[i];
  __nv_bfloat16 r[kBfOps] = {__hadd(x, y),
                             __hsub(x, y),
                             __hmul(x, y),
                             __hfma(x, y, z),
                             __float2bfloat16_rn(f[i]),
                             __float2bfloat16_rz(f[i]),
                             __float2bfloat16_ru(f[i]),
                             __float2bfloat16_rd(f[i])};
  for (int k = 0; k < kBfOps; ++k) out[static_cast<size_t>(k) * n + i] = __bfloat16_as_ushort(r[k]);
}

static void half_checks() {
  const int n = 1024;
  kt::Rng rng(404);
  std::vector<uint16_t> ha(n), hb(n), hc(n), ba(n), bb(n), bc(n);
  std::vector<float> f(n);
  for (int i = 0; i < n; ++i) {
    ha[i] = to_half(random_value<double>(rng, -6, 6)), hb[i] = to_half(random_value<double>(rng, -6, 6));
    hc[i] = to_half(random_value<double>(rng, -6, 6));
    ba[i] = to_bf16(random_value<double>(rng, -6, 6)), bb[i] = to_bf16(random_value<double>(rng, -6, 6));
    bc[i] = to_bf16(random_value<double>(rng, -6, 6));
    f[i] = random_value<float>(rng, -27, 17);  // half: subnormal to overflow
  }
  ha[0] = to_half(65504.0), hb[0] = to_half(16.0);  // 65504 + 16 ties to even: inf
  ha[1] = to_half(0x1p-14), hb[1] = to_half(-0x1p-15);
  f[0] = 65520.0f, f[1] = -70000.0f, f[2] = 1e-8f, f[3] = -3e-8f, f[4] = 2.5f * 0x1p-24f;
  uint16_t *dha = to_device(ha), *dhb = to_device(hb), *dhc = to_device(hc);
  uint16_t *dba = to_device(ba), *dbb = to_device(bb), *dbc = to_device(bc);
  float* df = to_device(f);
  uint16_t* dho = device_array<uint16_t>(static_cast<size_t>(kHalfOps + 4) * n);
  uint16_t* dbo = device_array<uint16_t>(static_cast<size_t>(kBfOps) * n);
  half_ops<<<(n + 127) / 128, 128>>>(reinterpret_cast<__half*>(dha), reinterpret_cast<__half*>(dhb),
                                     reinterpret_cast<__half*>(dhc), df, dho, n);
  CK_LAUNCH();
  bf16_ops<<<(n + 127) / 128, 128>>>(reinterpret_cast<__nv_bfloat16*>(dba), reinterpret_cast<__nv_bfloat16*>(dbb),
                                     reinterpret_cast<__nv_bfloat16*>(dbc), df, dbo, n);
  CK_LAUNCH();
  auto gh = from_device(dho, static_cast<size_t>(kHalfOps + 4) * n);
  auto gb = from_device(dbo, static_cast<size_t>(kBfOps) * n);
  std::vector<uint16_t> wh(gh.size()), wb(gb.size());
  std::vector<float> div_want(n), sqrt_want(n);
  for (int i = 0; i < n; ++i) {
    // Exact in double for these ranges, then rounded once.
    double x = half_value(ha[i]), y = half_value(hb[i]), z = half_value(hc[i]);
    uint16_t* w = &wh[i];
    w[0 * n] = to_half(x + y), w[1 * n] = to_half(x - y), w[2 * n] = to_half(x * y), w[3 * n] = to_half(x * y + z);
    w[4 * n] = ha[i] ^ 0x8000, w[5 * n] = ha[i] & 0x7fff;
    w[6 * n] = x > y ? ha[i] : hb[i], w[7 * n] = x < y ? ha[i] : hb[i];
    w[8 * n] = to_half(x + z), w[9 * n] = to_half(y * z + x);
    for (int m = 0; m < 4; ++m) w[(10 + m) * n] = to_half(f[i], static_cast<Mode>(m));
    w[(kHalfOps + 2) * n] = (x < y) | 1 << 1;
    uint32_t wide = kt::bits(static_cast<float>(x));
    w[(kHalfOps + 3) * n] = static_cast<uint16_t>(wide >> 16) ^ static_cast<uint16_t>(wide >> 3);
    div_want[i] = static_cast<float>(half_value(to_half(x / y)));
    sqrt_want[i] = static_cast<float>(half_value(to_half(std::sqrt(std::fabs(x)))));
    double bx = bf16_value(ba[i]), by = bf16_value(bb[i]), bz = bf16_value(bc[i]);
    uint16_t* v = &wb[i];
    v[0 * n] = to_bf16(bx + by), v[1 * n] = to_bf16(bx - by), v[2 * n] = to_bf16(bx * by),
          v[3 * n] = to_bf16(bx * by + bz);
    for (int m = 0; m < 4; ++m) v[(4 + m) * n] = to_bf16(f[i], static_cast<Mode>(m));
  }
  const char* hnames[kHalfOps + 4] = {
      "half __hadd",     "half __hsub",      "half __hmul",         "half __hfma",         "half __hneg",
      "half __habs",     "half __hmax",      "half __hmin",         "half2 __hadd2 (low)", "half2 __hfma2 (high)",
      "__float2half_rn", "__float2half_rz",  "__float2half_ru",     "__float2half_rd",     nullptr,
      nullptr,           "half __hlt/__heq", "__half2float (exact)"};
  for (int k = 0; k < kHalfOps + 4; ++k)
    if (hnames[k]) kt::check_array(hnames[k], &gh[static_cast<size_t>(k) * n], &wh[static_cast<size_t>(k) * n], n);
  // A half's ulp is 2^13 float ulps, so 1 half ulp = distance 8192 between the widened values
  // in one binade; checked as at most one step in the half encoding instead:
  size_t bad = 0;
  for (int i = 0; i < n; ++i) {
    int dg = static_cast<int>(gh[static_cast<size_t>(kHalfOps) * n + i]),
        dw = to_half(static_cast<double>(div_want[i]));
    int sg = static_cast<int>(gh[static_cast<size_t>(kHalfOps + 1) * n + i]),
        sw = to_half(static_cast<double>(sqrt_want[i]));
    if ((dg ^ dw) & 0x8000 || std::abs(dg - dw) > 1) ++bad;
    if ((sg ^ sw) & 0x8000 || std::abs(sg - sw) > 1) ++bad;
  }
  kt::checkf("half __hdiv and hsqrt within 1 ulp", bad == 0, "%zu results more than 1 ulp away", bad);
  const char* bnames[kBfOps] = {"bf16 __hadd",         "bf16 __hsub",         "bf16 __hmul",
                                "bf16 __hfma",         "__float2bfloat16_rn", "__float2bfloat16_rz",
                                "__float2bfloat16_ru", "__float2bfloat16_rd"};
  for (int k = 0; k < kBfOps; ++k)
    kt::check_array(bnames[k], &gb[static_cast<size_t>(k) * n], &wb[static_cast<size_t>(k) * n], n);
  for (void* p : {static_cast<void*>(dha), static_cast<void*>(dhb), static_cast<void*>(dhc), static_cast<void*>(dba),
                  static_cast<void*>(dbb), static_cast<void*>(dbc), static_cast<void*>(df), static_cast<void*>(dho),
                  static_cast<void*>(dbo)})
    CK(cudaFree(p));
}

// Edge cases, each with its result derived by hand (the PTX ISA's rules and NVIDIA's own host
// fallbacks in cuda_fp16.hpp/cuda_bf16.hpp: canonical NaN 0x7fff; min/max return the non-NaN
// operand and order -0 below +0; .relu and .sat as max_nan(x, 0) and min(max(x, 0), 1)).
// kEdgeIn: the inputs by index; a, b, c below name them.
constexpr uint16_t kEdgeIn[] = {
    0x4200,  // 0  half 3
    0x3c01,  // 1  half 1 + 2^-10
    0x8001,  // 2  half -2^-24
    0x4040,  // 3  bf16 3
    0x3f83,  // 4  bf16 1 + 3 * 2^-7
    0x0d80,  // 5  bf16 2^-100
    0x7e00,  // 6  half NaN
    0x0000,  // 7  +0
    0x8000,  // 8  -0
    0x3c00,  // 9  half 1
    0xc000,  // 10 half -2
    0x3800,  // 11 half 0.5
    0x4400,  // 12 half 4
    0xbc00,  // 13 half -1
    0x7bff,  // 14 half 65504
    0x3f80,  // 15 bf16 1
    0x4000,  // 16 half 2
    0xbf00,  // 17 bf16 -0.5
    0x4000,  // 18 bf16 2
};
struct Edge {
  const char* name;
  ull want;
};
constexpr Edge kEdges[] = {
    // 3 * (1 + 2^-10) = 3 + 2^-9 + 2^-10 is a tie; -2^-24 puts the exact sum below it, out of
    // f32's reach (f32 then half rounds up to 0x4202).
    {"half __hfma rounds once (a tie, less 2^-24)", 0x4201},
    // 3 * (1 + 3 * 2^-7) = 3 + 2^-4 + 2^-7 is a tie; 2^-100 puts it above, out of f64's
    // reach (f64 then bf16 rounds down to 0x4044).
    {"bf16 __hfma rounds once (a tie, plus 2^-100)", 0x4045},
    {"__hfma_relu(-2, 3, 1) = +0", 0x0000},
    {"__hfma_relu(NaN, 1, 1) = NaN", 0x7fff},
    {"__hfma_sat(0.5, 4, +0) = 1", 0x3c00},
    {"__hadd_sat(-1, 0.5) = +0", 0x0000},
    {"__hmax(+0, -0) = +0", 0x0000},
    {"__hmax(-0, +0) = +0", 0x0000},
    {"__hmin(+0, -0) = -0", 0x8000},
    {"__hmax(NaN, 1) = 1", 0x3c00},
    {"__hmax_nan(NaN, 1) = NaN", 0x7fff},
    {"__hmin(NaN, NaN) = NaN", 0x7fff},
    {"__hadd(65504, 65504) = inf", 0x7c00},
    {"__hneg(-0) = +0", 0x0000},
    {"__float2half_rn(NaN) = NaN", 0x7fff},
    {"__float2half_rn(2^-25) = +0 (a tie, to even)", 0x0000},
    {"__float2half_rn(2^-25 + 2^-40) = 2^-24", 0x0001},
    {"__float2half_rn(65519.99f) = 65504", 0x7bff},
    {"__float2half_rn(65520) = inf", 0x7c00},
    {"__float2half_rz(1e6) = 65504", 0x7bff},
    {"__float2half_rd(-1e6) = -inf", 0xfc00},
    {"__float2half_ru(-1e6) = -65504", 0xfbff},
    {"__float2bfloat16_rn(NaN) = NaN", 0x7fff},
    {"__int2half_rn(2049) = 2048 (a tie, to even)", 0x6800},
    {"__int2half_ru(2049) = 2050", 0x6801},
    {"__ll2half_rn(2^62) = inf", 0x7c00},
    {"__ll2half_rz(-2^62) = -65504", 0xfbff},
    // Past a bf16 tie by 1, out of f64's reach (f64 then bf16 rounds down to 0x5d80).
    {"__ll2bfloat16_rn(2^60 + 2^52 + 1) = 2^60 + 2^53", 0x5d81},
    // PTX's cvt: NaN to a 32-bit integer from a non-f64 source is 0, to a 64-bit one 1 << 63.
    {"__half2int_rn(NaN) = 0", 0},
    {"__half2ll_rn(NaN) = 1 << 63", 0x8000000000000000ull},
    {"__half2uint_rz(-1.5) = 0", 0},
    {"__half2short_rn(inf) = 32767", 32767},
    {"__half2ushort_rz(65504) = 65504", 65504},
    // half2 and bfloat162: .x is the low half.
    {"__floats2half2_rn(1, 2) = {.x 1, .y 2}", 0x40003c00},
    {"__hadd2({1, 2}, {0.5, 65504}) = {1.5, 65504} (65506 rounds down)", 0x7bff3e00},
    {"__hlt2_mask({1, 2}, {0.5, 65504}) = {0, 0xffff}", 0xffff0000},
    {"__heq2({1, NaN}, {1, NaN}) = {1, 0}", 0x00003c00},
    {"bf16 __hfma2({3, 1}, {1 + 3 * 2^-7, 2}, {2^-100, -0.5}) = {0x4045, 1.5}", 0x3fc04045},
};
constexpr int kEdgeCount = sizeof kEdges / sizeof kEdges[0];

__global__ void half_edges(const uint16_t* in, const float* f, const long long* l, ull* out) {
  auto H = [&](int i) { return __ushort_as_half(in[i]); };
  auto B = [&](int i) { return __ushort_as_bfloat16(in[i]); };
  auto hs = [](__half v) -> ull { return __half_as_ushort(v); };
  auto bs = [](__nv_bfloat16 v) -> ull { return __bfloat16_as_ushort(v); };
  auto h2 = [](__half2 v) -> ull { return __half_as_ushort(v.x) | static_cast<ull>(__half_as_ushort(v.y)) << 16; };
  const float nan = f[0], tiny = f[1], tiny_plus = f[2], below = f[3], big = f[4], million = f[5];
  int k = 0;
  out[k++] = hs(__hfma(H(0), H(1), H(2)));
  out[k++] = bs(__hfma(B(3), B(4), B(5)));
  out[k++] = hs(__hfma_relu(H(10), H(0), H(9)));
  out[k++] = hs(__hfma_relu(H(6), H(9), H(9)));
  out[k++] = hs(__hfma_sat(H(11), H(12), H(7)));
  out[k++] = hs(__hadd_sat(H(13), H(11)));
  out[k++] = hs(__hmax(H(7), H(8)));
  out[k++] = hs(__hmax(H(8), H(7)));
  out[k++] = hs(__hmin(H(7), H(8)));
  out[k++] = hs(__hmax(H(6), H(9)));
  out[k++] = hs(__hmax_nan(H(6), H(9)));
  out[k++] = hs(__hmin(H(6), H(6)));
  out[k++] = hs(__hadd(H(14), H(14)));
  out[k++] = hs(__hneg(H(8)));
  out[k++] = hs(__float2half_rn(nan));
  out[k++] = hs(__float2half_rn(tiny));
  out[k++] = hs(__float2half_rn(tiny_plus));
  out[k++] = hs(__float2half_rn(below));
  out[k++] = hs(__float2half_rn(big));
  out[k++] = hs(__float2half_rz(million));
  out[k++] = hs(__float2half_rd(-million));
  out[k++] = hs(__float2half_ru(-million));
  out[k++] = bs(__float2bfloat16_rn(nan));
  out[k++] = hs(__int2half_rn(static_cast<int>(l[0])));
  out[k++] = hs(__int2half_ru(static_cast<int>(l[0])));
  out[k++] = hs(__ll2half_rn(l[1]));
  out[k++] = hs(__ll2half_rz(-l[1]));
  out[k++] = bs(__ll2bfloat16_rn(l[2]));
  out[k++] = static_cast<unsigned>(__half2int_rn(H(6)));
  out[k++] = static_cast<ull>(__half2ll_rn(H(6)));
  out[k++] = __half2uint_rz(__hneg(__hadd(H(9), H(11))));
  out[k++] = static_cast<ull>(__half2short_rn(__hadd(H(14), H(14))));
  out[k++] = __half2ushort_rz(H(14));
  out[k++] = h2(__floats2half2_rn(1.0f, 2.0f));
  __half2 one_two = __halves2half2(H(9), H(16)), half_max = __halves2half2(H(11), H(14));
  out[k++] = h2(__hadd2(one_two, half_max));
  out[k++] = __hlt2_mask(one_two, half_max);
  __half2 one_nan = __halves2half2(H(9), H(6));
  out[k++] = h2(__heq2(one_nan, one_nan));
  __nv_bfloat162 r = __hfma2(__halves2bfloat162(B(3), B(15)), __halves2bfloat162(B(4), B(18)),
                             __halves2bfloat162(B(5), B(17)));
  out[k++] = __bfloat16_as_ushort(r.x) | static_cast<ull>(__bfloat16_as_ushort(r.y)) << 16;
}

// 256 threads add to one half, half2, bf16 and bfloat162 each: sums exact in either format.
__global__ void half_atomics(__half* h, __half2* h2, __nv_bfloat16* b, __nv_bfloat162* b2) {
  atomicAdd(h, __float2half(1.0f));
  atomicAdd(h2, __floats2half2_rn(1.0f, 0.5f));
  atomicAdd(b, __float2bfloat16(1.0f));
  atomicAdd(b2, __floats2bfloat162_rn(0.25f, -1.0f));
}

static void half_edge_checks() {
  std::vector<uint16_t> in(std::begin(kEdgeIn), std::end(kEdgeIn));
  std::vector<float> f = {NAN, 0x1p-25f, 0x1p-25f + 0x1p-40f, 65519.99f, 65520.0f, 1e6f};
  std::vector<long long> l = {2049, 1ll << 62, (1ll << 60) + (1ll << 52) + 1};
  uint16_t* din = to_device(in);
  float* df = to_device(f);
  long long* dl = to_device(l);
  ull* dout = device_array<ull>(kEdgeCount);
  half_edges<<<1, 1>>>(din, df, dl, dout);
  CK_LAUNCH();
  auto got = from_device(dout, kEdgeCount);
  for (int k = 0; k < kEdgeCount; ++k)
    kt::checkf(kEdges[k].name, got[k] == kEdges[k].want, "got 0x%llx, expected 0x%llx", got[k], kEdges[k].want);

  uint32_t* sums = device_array<uint32_t>(4);
  half_atomics<<<2, 128>>>(reinterpret_cast<__half*>(sums), reinterpret_cast<__half2*>(sums + 1),
                           reinterpret_cast<__nv_bfloat16*>(sums + 2), reinterpret_cast<__nv_bfloat162*>(sums + 3));
  CK_LAUNCH();
  auto s = from_device(sums, 4);
  const uint32_t want[4] = {0x5c00,       // half 256
                            0x58005c00,   // half2 {256, 128}
                            0x4380,       // bf16 256
                            0xc3804280};  // bfloat162 {64, -256}
  kt::checkf("atomicAdd on half, half2, bf16, bfloat162 (256 adds, exact sums)",
             s[0] == want[0] && s[1] == want[1] && s[2] == want[2] && s[3] == want[3], "got 0x%x 0x%x 0x%x 0x%x", s[0],
             s[1], s[2], s[3]);
  for (void* p : {static_cast<void*>(din), static_cast<void*>(df), static_cast<void*>(dl), static_cast<void*>(dout),
                  static_cast<void*>(sums)})
    CK(cudaFree(p));
}

// ================================ approximate and library functions ==========================
constexpr int kApprox = 11;
__global__ void float_functions(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], w = y[i];
  float r[kApprox] = {__expf(v * 0.125f),
                      __logf(fabsf(w)),
                      __sinf(v * 0.03125f),
                      __cosf(v * 0.03125f),
                      __fdividef(v, w),
                      expf(v),
                      logf(fabsf(w)),
                      sinf(v * 100.0f),
                      cosf(v * 100.0f),
                      powf(fabsf(w), v * 0.01f),
                      0.0f};
  for (int k = 0; k < kApprox; ++k) out[static_cast<size_t>(k) * n + i] = r[k];
}
constexpr int kApproxD = 4;
__global__ void double_functions(const double* x, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  double r[kApproxD] = {exp(v), log(fabs(v) + 1e-300), sin(v * 1000.0), cos(v * 1000.0)};
  for (int k = 0; k < kApproxD; ++k) out[static_cast<size_t>(k) * n + i] = r[k];
}

static void function_checks() {
  const int n = 2048;
  kt::Rng rng(77);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(rng.uniform(-80, 80));  // expf over [-80, 80]; __expf over [-10, 10]
    y[i] = random_value<float>(rng, -60, 60);         // logf, __logf, __fdividef divisor
  }
  x[0] = 0.0f, x[1] = 1.0f, x[2] = -1.0f, y[0] = 1.0f, y[1] = 0.75f, y[2] = 1.5f;
  float *dx = to_device(x), *dy = to_device(y), *dout = device_array<float>(static_cast<size_t>(kApprox) * n);
  float_functions<<<(n + 127) / 128, 128>>>(dx, dy, dout, n);
  CK_LAUNCH();
  auto got = from_device(dout, static_cast<size_t>(kApprox) * n);
  auto row = [&](int k) { return &got[static_cast<size_t>(k) * n]; };
  size_t bad_exp = 0, bad_log = 0, bad_sin = 0, bad_cos = 0;
  double worst_sin = 0, worst_log = 0;
  std::vector<float> cr_exp(n), cr_log(n), cr_sin(n), cr_cos(n), cr_pow(n), cr_div(n), in_e(n), in_l(n), in_s(n),
      in_c(n);
  for (int i = 0; i < n; ++i) {
    float a = x[i] * 0.125f, l = std::fabs(y[i]), s = x[i] * 0.03125f;  // exact scalings
    // __expf: 2 + floor(|1.173 a|) ulp.
    if (kt::ulp_distance(row(0)[i], static_cast<float>(std::exp(static_cast<double>(a)))) >
        2 + static_cast<uint64_t>(std::floor(std::fabs(1.173 * a))))
      ++bad_exp;
    // __logf: 2^-21.41 absolute on [0.5, 2], 3 ulp elsewhere.
    double lref = std::log(static_cast<double>(l));
    if (l >= 0.5f && l <= 2.0f) {
      double err = std::fabs(row(1)[i] - lref);
      worst_log = std::max(worst_log, err);
      if (err > std::exp2(-21.41)) ++bad_log;
    } else if (kt::ulp_distance(row(1)[i], static_cast<float>(lref)) > 3) {
      ++bad_log;
    }
    // __sinf/__cosf on [-pi, pi] (s is within [-2.5, 2.5]).
    double es = std::fabs(row(2)[i] - std::sin(static_cast<double>(s)));
    double ec = std::fabs(row(3)[i] - std::cos(static_cast<double>(s)));
    worst_sin = std::max(worst_sin, std::max(es, ec));
    if (es > std::exp2(-21.19)) ++bad_sin;
    if (ec > std::exp2(-21.19)) ++bad_cos;
    cr_div[i] = static_cast<float>(static_cast<double>(x[i]) / y[i]);  // double then float: innocuous
    cr_exp[i] = static_cast<float>(std::exp(static_cast<double>(x[i])));
    cr_log[i] = static_cast<float>(lref);
    float sv = x[i] * 100.0f, pv = x[i] * 0.01f;  // as the kernel computes them
    cr_sin[i] = static_cast<float>(std::sin(static_cast<double>(sv)));
    cr_cos[i] = static_cast<float>(std::cos(static_cast<double>(sv)));
    cr_pow[i] = static_cast<float>(std::pow(static_cast<double>(l), static_cast<double>(pv)));
    in_e[i] = x[i], in_l[i] = l, in_s[i] = sv;
  }
  kt::checkf("__expf within 2 + floor(|1.173 x|) ulp on [-10, 10]", bad_exp == 0, "%zu beyond", bad_exp);
  kt::checkf("__logf within 2^-21.41 abs on [0.5,2], 3 ulp elsewhere", bad_log == 0, "%zu beyond (worst abs %.3g)",
             bad_log, worst_log);
  kt::checkf("__sinf within 2^-21.19 abs on [-pi, pi]", bad_sin == 0, "%zu beyond (worst %.3g)", bad_sin, worst_sin);
  kt::checkf("__cosf within 2^-21.19 abs on [-pi, pi]", bad_cos == 0, "%zu beyond (worst %.3g)", bad_cos, worst_sin);
  kt::check_ulp("__fdividef within 2 ulp", row(4), cr_div.data(), x.data(), n, 2);
  kt::check_ulp("expf within 2 ulp on [-80, 80]", row(5), cr_exp.data(), in_e.data(), n, 2);
  kt::check_ulp("logf within 1 ulp on [2^-60, 2^61]", row(6), cr_log.data(), in_l.data(), n, 1);
  kt::check_ulp("sinf within 2 ulp on [-8000, 8000]", row(7), cr_sin.data(), in_s.data(), n, 2);
  kt::check_ulp("cosf within 2 ulp on [-8000, 8000]", row(8), cr_cos.data(), in_s.data(), n, 2);
  kt::check_ulp("powf within 4 ulp", row(9), cr_pow.data(), in_l.data(), n, 4);
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dout));

  // Double: measured against long double references as |got - ref| / ulp(got), within the
  // bound + 1/2 (the distance to the correctly rounded result, plus its own rounding).
  std::vector<double> xd(n);
  for (int i = 0; i < n; ++i) xd[i] = rng.uniform(-700, 700);
  xd[0] = 0.0, xd[1] = 1.0;
  double *dxd = to_device(xd), *doutd = device_array<double>(static_cast<size_t>(kApproxD) * n);
  double_functions<<<(n + 127) / 128, 128>>>(dxd, doutd, n);
  CK_LAUNCH();
  auto gd = from_device(doutd, static_cast<size_t>(kApproxD) * n);
  const char* names[kApproxD] = {"exp within 1 ulp", "log within 1 ulp", "sin within 2 ulp", "cos within 2 ulp"};
  const double bounds[kApproxD] = {1, 1, 2, 2};
  for (int k = 0; k < kApproxD; ++k) {
    size_t bad = 0;
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      double v = xd[i], g = gd[static_cast<size_t>(k) * n + i];
      long double ref = k == 0   ? std::exp(static_cast<long double>(v))
                        : k == 1 ? std::log(static_cast<long double>(std::fabs(v) + 1e-300))
                        : k == 2 ? std::sin(static_cast<long double>(v * 1000.0))
                                 : std::cos(static_cast<long double>(v * 1000.0));
      double ad = std::fabs(g), ulp = std::nextafter(ad, INFINITY) - ad;
      if (ad == 0) ulp = std::numeric_limits<double>::denorm_min();
      double err = static_cast<double>(std::fabs(static_cast<long double>(g) - ref) / ulp);
      worst = std::max(worst, err);
      if (!(err <= bounds[k] + 0.5 + 0x1p-10)) ++bad;
    }
    kt::checkf(names[k], bad == 0, "%zu beyond (worst %.3f ulp)", bad, worst);
  }
  CK(cudaFree(dxd));
  CK(cudaFree(doutd));
}

int main() {
  integer_checks();
  basic_checks<float>("float");
  basic_checks<double>("double");
  directed_checks<float>("float");
  directed_checks<double>("double");
  to_int_checks<float>("float");
  to_int_checks<double>("double");
  from_int_checks();
  saturate_checks();
  half_checks();
  half_edge_checks();
  function_checks();
  return kt::finish("math");
}
