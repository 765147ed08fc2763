// SPDX-License-Identifier: Apache-2.0
// PTX initializers and fat-binary reading (core/fatbin.h).
#include "core/fatbin.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

using fg::fatbin::initial_value;
using fg::fatbin::ptx_initializer;

namespace {
template <class T>
T as(const std::vector<unsigned char>& b, size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}
}  // namespace

TEST_CASE("PTX initializers become little-endian bytes", "[fatbin]") {
  auto one = ptx_initializer(".global .align 4 .u32 g_counter = 42", 4, false);
  REQUIRE(one.size() == 4);
  CHECK(as<uint32_t>(one, 0) == 42u);

  auto list = ptx_initializer(".global .align 4 .s32 v[3] = {1, -2, 0x10}", 4, false);
  REQUIRE(list.size() == 12);
  CHECK(as<int32_t>(list, 0) == 1);
  CHECK(as<int32_t>(list, 1) == -2);
  CHECK(as<int32_t>(list, 2) == 16);

  // PTX writes float initializers as their bit patterns.
  auto f = ptx_initializer(".global .align 4 .f32 scale[2] = {0f3FA00000, 0fC0800000}", 4, true);
  REQUIRE(f.size() == 8);
  CHECK(as<float>(f, 0) == 1.25f);
  CHECK(as<float>(f, 1) == -4.0f);

  auto d = ptx_initializer(".const .align 8 .f64 pi = 0d400921FB54442D18", 8, true);
  REQUIRE(d.size() == 8);
  CHECK(as<double>(d, 0) == 3.141592653589793);

  auto b = ptx_initializer(".global .align 1 .b8 bytes[2] = {255, 7}", 1, false);
  CHECK(b == std::vector<unsigned char>{255, 7});

  CHECK(ptx_initializer(".global .align 4 .u32 uninitialised[8]", 4, false).empty());
}

TEST_CASE("a fat binary without the symbol leaves the output alone", "[fatbin]") {
  // A fat binary header with no entries, then garbage input: both answer false.
  unsigned char empty[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0};
  int out = 77;
  CHECK_FALSE(initial_value(empty, "x", &out, sizeof out));
  CHECK(out == 77);
  unsigned char junk[64] = {1, 2, 3};
  CHECK_FALSE(initial_value(junk, "x", &out, sizeof out));
  CHECK_FALSE(initial_value(nullptr, "x", &out, sizeof out));
  CHECK(out == 77);
}
