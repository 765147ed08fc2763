// SPDX-License-Identifier: Apache-2.0
// Error names and texts. The runtime's and the driver's codes share their numbers where both
// have one, and NVIDIA's libraries give the same text for the same number, so the texts live
// here once; each API keeps only its own names (runtime/errors.cpp, driver/errors.cpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <iterator>

namespace fg {

// What NVIDIA's libraries print for `code` (cudaGetErrorString, cuGetErrorString), or nullptr
// for a code neither API has.
const char* error_text(int code) noexcept;

struct CodeText {
  int code;
  const char* text;
};
struct CodeName {
  int code;
  const char* name;
};

// Tables of codes are sorted by code, checked at compile time, and searched by bisection.
template <class T, std::size_t N>
constexpr bool sorted_by_code(const T (&table)[N]) {
  for (std::size_t i = 1; i < N; ++i)
    if (table[i - 1].code >= table[i].code) return false;
  return true;
}
template <class T, std::size_t N>
const T* find_code(const T (&table)[N], int code) noexcept {
  const T* it = std::lower_bound(std::begin(table), std::end(table), code,
                                 [](const T& e, int c) { return e.code < c; });
  return it != std::end(table) && it->code == code ? it : nullptr;
}

}  // namespace fg
