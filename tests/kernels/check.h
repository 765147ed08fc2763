// SPDX-License-Identifier: Apache-2.0
// Shared by the kernel test programs (tests/kernels/): each program computes on the device,
// computes the same on the host and compares, one line per check on stdout:
//
//   PASS <check>
//   FAIL <check>: <what differed>
//
// finish() ends with a summary line and gives the exit status: 0 when every check passed,
// 1 when any failed (the summary names them). A CUDA call that must succeed and does not
// ends the program at once with status 2 and a line on stderr naming the call (CK).
// Integers are compared exactly; floating point bit-exactly where IEEE-754 fixes the result,
// otherwise within the bound the check names (ulp distance or absolute error).
#pragma once
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__CUDACC__) || defined(KT_WITH_RUNTIME)
#include <cuda_runtime.h>

#define CK(call)                                                                                                \
  do {                                                                                                          \
    cudaError_t ck_err_ = (call);                                                                               \
    if (ck_err_ != cudaSuccess) {                                                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorName(ck_err_), \
                   cudaGetErrorString(ck_err_));                                                                \
      std::printf("ABORT %s: %s\n", #call, cudaGetErrorName(ck_err_));                                          \
      std::exit(2);                                                                                             \
    }                                                                                                           \
  } while (0)

// After a <<<>>> launch: the launch itself must have been accepted.
#define CK_LAUNCH() CK(cudaGetLastError())
#endif

namespace kt {

struct Tally {
  int passed = 0;
  int failed = 0;
  std::string failed_names;
};

inline Tally& tally() {
  static Tally t;
  return t;
}

// Records one check; detail (printf format) says what differed when it failed.
inline bool checkf(const char* name, bool ok, const char* fmt = nullptr, ...) {
  Tally& t = tally();
  if (ok) {
    ++t.passed;
    std::printf("PASS %s\n", name);
  } else {
    ++t.failed;
    if (!t.failed_names.empty()) t.failed_names += ' ';
    t.failed_names += name;
    std::printf("FAIL %s", name);
    if (fmt) {
      std::printf(": ");
      va_list ap;
      va_start(ap, fmt);
      std::vprintf(fmt, ap);
      va_end(ap);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  return ok;
}

inline bool check(const char* name, bool ok) { return checkf(name, ok); }

// Exit status of the program: 0 all passed, 1 some failed.
inline int finish(const char* program) {
  Tally& t = tally();
  if (t.failed == 0) {
    std::printf("%s: all %d checks passed\n", program, t.passed);
    return 0;
  }
  std::printf("%s: %d of %d checks FAILED: %s\n", program, t.failed, t.passed + t.failed, t.failed_names.c_str());
  return 1;
}

// ---- values as text, for the FAIL lines --------------------------------------------------
inline std::string show(long long v) { return std::to_string(v); }
inline std::string show(unsigned long long v) {
  char b[48];
  std::snprintf(b, sizeof b, "%llu (0x%llx)", v, v);
  return b;
}
inline std::string show(int v) { return show(static_cast<long long>(v)); }
inline std::string show(long v) { return show(static_cast<long long>(v)); }
inline std::string show(unsigned v) { return show(static_cast<unsigned long long>(v)); }
inline std::string show(unsigned long v) { return show(static_cast<unsigned long long>(v)); }
inline std::string show(unsigned short v) { return show(static_cast<unsigned long long>(v)); }
inline std::string show(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  char b[64];
  std::snprintf(b, sizeof b, "%.9g (0x%08x)", v, u);
  return b;
}
inline std::string show(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  char b[64];
  std::snprintf(b, sizeof b, "%.17g (0x%016llx)", v, static_cast<unsigned long long>(u));
  return b;
}

// ---- floating point helpers ----------------------------------------------------------------
inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline double double_of(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

// Same value bit for bit, or both NaN (a GPU's NaN payloads differ from the host's).
inline bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }
inline bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }
template <typename T>
inline bool same(T a, T b) {
  return a == b;
}

// Distance in units in the last place: how many representable values lie between a and b
// (0 when equal; +0 and -0 are one value apart here, which no check relies on). A NaN on one
// side only is "infinitely" far.
inline int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}
inline uint64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : UINT64_MAX;
  int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}
inline long double ordered_d(double f) {
  int64_t i;
  std::memcpy(&i, &f, 8);
  return i < 0 ? -static_cast<long double>(i & 0x7fffffffffffffffLL) : static_cast<long double>(i);
}
inline uint64_t ulp_distance(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : UINT64_MAX;
  long double d = ordered_d(a) - ordered_d(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

// ---- array checks: one line for the whole array, naming the first difference --------------
template <typename T>
inline bool check_array(const char* name, const T* got, const T* want, size_t n) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i)
    if (!same(got[i], want[i]) && bad++ == 0) first = i;
  if (bad == 0) return check(name, true);
  return checkf(name, false, "%zu of %zu differ; first at [%zu]: got %s, expected %s", bad, n, first,
                show(got[first]).c_str(), show(want[first]).c_str());
}

template <typename T>
inline bool check_eq(const char* name, T got, T want) {
  if (same(got, want)) return check(name, true);
  return checkf(name, false, "got %s, expected %s", show(got).c_str(), show(want).c_str());
}

// Every got[i] within max_ulp of want[i] (want: the correctly rounded result).
template <typename T>
inline bool check_ulp(const char* name, const T* got, const T* want, const T* input, size_t n, uint64_t max_ulp) {
  size_t bad = 0, first = 0;
  uint64_t worst = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t d = ulp_distance(got[i], want[i]);
    if (d > worst && d != UINT64_MAX) worst = d;
    if (d > max_ulp && bad++ == 0) first = i;
  }
  if (bad == 0) return check(name, true);
  return checkf(name, false, "%zu of %zu beyond %llu ulp; first: f(%s) got %s, expected %s (worst finite %llu ulp)",
                bad, n, static_cast<unsigned long long>(max_ulp), show(input[first]).c_str(), show(got[first]).c_str(),
                show(want[first]).c_str(), static_cast<unsigned long long>(worst));
}

// A small deterministic generator (SplitMix64), so every run and the host agree on inputs.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint32_t u32() { return static_cast<uint32_t>(next() >> 32); }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1p-53); }
};

// check_array against values computed in double, each converted to T first.
template <typename T>
bool check_as(const char* name, const std::vector<T>& got, const std::vector<double>& want) {
  std::vector<T> w(want.size());
  for (size_t i = 0; i < want.size(); ++i) w[i] = static_cast<T>(want[i]);
  return got.size() == want.size() ? check_array(name, got.data(), w.data(), w.size())
                                   : checkf(name, false, "%zu results, %zu expected", got.size(), want.size());
}

#if defined(__CUDACC__) || defined(KT_WITH_RUNTIME)
// A device copy of `v` (a byte more, so that an empty vector still gets an allocation).
template <typename T>
T* to_device(const std::vector<T>& v) {
  T* d = nullptr;
  CK(cudaMalloc(&d, v.size() * sizeof(T) + 1));
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
std::vector<T> from_device(const T* d, size_t n) {
  std::vector<T> v(n);
  CK(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}
#endif

}  // namespace kt
