// SPDX-License-Identifier: Apache-2.0
// PTX initializers and fat-binary reading (core/fatbin.h).
#include "core/fatbin.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

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

namespace {
// A fat binary of uncompressed entries: (kind, arch, payload) each; kind 1 PTX, 2 ELF.
std::vector<unsigned char> fatbin_of(const std::vector<std::tuple<uint16_t, uint32_t, std::string>>& entries) {
  std::vector<unsigned char> body;
  for (const auto& [kind, arch, text] : entries) {
    std::vector<unsigned char> payload(text.begin(), text.end());
    payload.resize((payload.size() + 8) / 8 * 8, 0);  // NUL-padded to 8 bytes
    unsigned char h[0x40] = {};
    const uint32_t hsize = sizeof h;
    const uint64_t psize = payload.size(), flags = 0x11;
    std::memcpy(h, &kind, 2);
    std::memcpy(h + 4, &hsize, 4);
    std::memcpy(h + 8, &psize, 8);
    std::memcpy(h + 0x1c, &arch, 4);
    std::memcpy(h + 0x28, &flags, 8);
    body.insert(body.end(), h, h + sizeof h);
    body.insert(body.end(), payload.begin(), payload.end());
  }
  std::vector<unsigned char> out = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0};
  const uint64_t n = body.size();
  out.resize(16);
  std::memcpy(out.data() + 8, &n, 8);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}
std::string text_of(const fg::fatbin::Code& c) {
  return c.bytes.empty() ? "" : reinterpret_cast<const char*>(c.bytes.data());
}
}  // namespace

TEST_CASE("the executor's PTX: the newest at or below the device, else the oldest above, never a cubin", "[fatbin]") {
  using fg::fatbin::Code;
  using fg::fatbin::select_ptx;
  const auto image = fatbin_of(
      {{2, 80, "ELF-80"}, {1, 75, "ptx 75"}, {1, 70, "ptx 70"}, {1, 90, "ptx 90"}, {1, 100, "ptx 100"}});
  CHECK(text_of(select_ptx(image.data(), 80)) == "ptx 75");  // though a cubin fits sm_80
  CHECK(text_of(select_ptx(image.data(), 90)) == "ptx 90");
  CHECK(text_of(select_ptx(image.data(), 120)) == "ptx 100");
  CHECK(text_of(select_ptx(image.data(), 60)) == "ptx 70");  // none at or below: the oldest above
  const Code only = select_ptx(image.data(), 75);
  CHECK(only.kind == Code::Kind::Ptx);
  CHECK(only.arch == 75);
  const auto cubins = fatbin_of({{2, 80, "ELF-80"}, {2, 90, "ELF-90"}});
  const Code none = select_ptx(cubins.data(), 80);
  CHECK(none.kind == Code::Kind::None);
  CHECK(none.refusal == fg::Status::NoBinaryForGpu);
  CHECK(select_ptx(nullptr, 80).refusal == fg::Status::InvalidImage);
}
