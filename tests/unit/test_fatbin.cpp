// SPDX-License-Identifier: Apache-2.0
// PTX initializers and fat-binary reading (core/fatbin.h).
#include "core/fatbin.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
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

namespace {
// A minimal ELF64 relocatable object whose only content section is `name` holding `data`.
std::vector<unsigned char> object_with(const std::string& name, const std::vector<unsigned char>& data) {
  const std::string names = std::string("\0.shstrtab\0", 11) + name + '\0';
  std::vector<unsigned char> elf(64, 0);
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(elf.data(), ident, sizeof ident);
  const uint64_t data_off = elf.size();
  elf.insert(elf.end(), data.begin(), data.end());
  const uint64_t names_off = elf.size();
  elf.insert(elf.end(), names.begin(), names.end());
  elf.resize((elf.size() + 7) / 8 * 8, 0);
  const uint64_t shoff = elf.size();
  auto section = [&](uint32_t name_at, uint32_t type, uint64_t off, uint64_t size) {
    unsigned char sh[64] = {};
    std::memcpy(sh, &name_at, 4);
    std::memcpy(sh + 4, &type, 4);
    std::memcpy(sh + 0x18, &off, 8);
    std::memcpy(sh + 0x20, &size, 8);
    elf.insert(elf.end(), sh, sh + sizeof sh);
  };
  section(0, 0, 0, 0);                     // SHN_UNDEF
  section(1, 3, names_off, names.size());  // .shstrtab (SHT_STRTAB)
  section(11, 1, data_off, data.size());   // the content (SHT_PROGBITS)
  const uint16_t shentsize = 64, shnum = 3, shstrndx = 1;
  std::memcpy(elf.data() + 0x28, &shoff, 8);
  std::memcpy(elf.data() + 0x3a, &shentsize, 2);
  std::memcpy(elf.data() + 0x3c, &shnum, 2);
  std::memcpy(elf.data() + 0x3e, &shstrndx, 2);
  return elf;
}

// An ar member header and data (padded to an even size).
void ar_member(std::vector<unsigned char>& ar, const std::string& name, const std::string& data) {
  char h[61];
  std::snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0", "0", "644", data.size());
  ar.insert(ar.end(), h, h + 60);
  ar.insert(ar.end(), data.begin(), data.end());
  if (data.size() % 2) ar.push_back('\n');
}
}  // namespace

TEST_CASE("linked images (cuLinkComplete's output) keep their units, and refuse damage", "[fatbin]") {
  using fg::fatbin::Code;
  const std::string a = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry a() { ret; }\n";
  const std::string b = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry b() { ret; }\n";
  const std::vector<Code> units = {fg::fatbin::ptx_code(a, 80), fg::fatbin::ptx_code(b, 80)};
  const std::vector<unsigned char> image = fg::fatbin::linked_image(units);
  CHECK(fg::fatbin::binary_extent(image.data()) == image.size());
  CHECK(image.size() % 8 == 0);
  fg::Status why = fg::Status::Ok;
  const std::vector<Code> back = fg::fatbin::linked_units(image.data(), 80, &why);
  CHECK(why == fg::Status::Ok);
  REQUIRE(back.size() == 2);
  CHECK(text_of(back[0]) == a);
  CHECK(back[0].arch == 75);
  CHECK(text_of(back[1]) == b);
  CHECK(back[1].arch == 80);
  // A device below a unit's target refuses it as PTX it cannot run.
  CHECK(fg::fatbin::linked_units(image.data(), 75, &why).empty());
  CHECK(why == fg::Status::InvalidPtx);
  // A unit whose text lost its NUL, a unit count beyond the image, an unknown version.
  std::vector<unsigned char> bad = image;
  bad[24 + 16 + a.size()] = 'x';
  CHECK(fg::fatbin::linked_units(bad.data(), 80, &why).empty());
  CHECK(why == fg::Status::InvalidImage);
  bad = image;
  bad[8] = 3;
  CHECK(fg::fatbin::linked_units(bad.data(), 80, &why).empty());
  CHECK(why == fg::Status::InvalidImage);
  bad = image;
  bad[4] = 9;
  CHECK(fg::fatbin::linked_units(bad.data(), 80, &why).empty());
}

TEST_CASE("host objects carry fat binaries; static libraries carry objects", "[fatbin]") {
  const std::vector<unsigned char> fb1 = fatbin_of({{1, 80, "// one"}});
  const std::vector<unsigned char> fb2 = fatbin_of({{1, 80, "// two"}, {2, 80, "ELF"}});
  std::vector<unsigned char> section = fb1;
  section.resize((section.size() + 7) / 8 * 8 + 8, 0);  // padding between them
  section.insert(section.end(), fb2.begin(), fb2.end());
  const std::vector<unsigned char> obj = object_with("__nv_relfatbin", section);
  const auto found = fg::fatbin::object_fatbins(obj.data(), obj.size());
  REQUIRE(found.size() == 2);
  CHECK(found[0] == fb1);
  CHECK(found[1] == fb2);
  const std::vector<unsigned char> other = object_with(".text", section);
  CHECK(fg::fatbin::object_fatbins(other.data(), other.size()).empty());
  CHECK(fg::fatbin::object_fatbins(fb1.data(), fb1.size()).empty());  // not an object
  // A section that claims more than the file holds.
  std::vector<unsigned char> cut(obj.begin(), obj.begin() + 80);
  CHECK(fg::fatbin::object_fatbins(cut.data(), cut.size()).empty());

  std::vector<unsigned char> ar = {'!', '<', 'a', 'r', 'c', 'h', '>', '\n'};
  ar_member(ar, "/", std::string(8, '\0'));                  // the symbol table
  ar_member(ar, "//", "a_rather_long_member_name.o/\n");     // long names
  ar_member(ar, "/0", std::string(obj.begin(), obj.end()));  // a long name
  ar_member(ar, "b.o/", "odd");                              // a short name, odd size
  ar_member(ar, "c.o/", "x");
  REQUIRE(fg::fatbin::is_archive(ar.data(), ar.size()));
  const auto members = fg::fatbin::archive_members(ar.data(), ar.size());
  REQUIRE(members.size() == 3);
  CHECK(members[0].name == "a_rather_long_member_name.o");
  CHECK(std::vector<unsigned char>(members[0].data, members[0].data + members[0].size) == obj);
  CHECK(members[1].name == "b.o");
  CHECK(std::string(reinterpret_cast<const char*>(members[1].data), members[1].size) == "odd");
  CHECK(members[2].name == "c.o");
  // A member whose size runs past the end ends the list.
  std::vector<unsigned char> truncated(ar.begin(), ar.end() - 2);
  CHECK(fg::fatbin::archive_members(truncated.data(), truncated.size()).size() == 2);
  CHECK_FALSE(fg::fatbin::is_archive(obj.data(), obj.size()));
}
