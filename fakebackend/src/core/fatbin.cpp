#include "core/fatbin.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fg::fatbin {
namespace {

constexpr uint32_t kWrapperMagic = 0x466243B1;  // __fatBinC_Wrapper_t
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kKindElf = 2;
constexpr uint64_t kFlagCompressed = 0x2000;

template <class T>
T rd(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ELF64 cubin: finds `name` in .symtab and copies its bytes from its section.
bool from_cubin(const unsigned char* elf, uint64_t len, std::string_view name, void* out, size_t size) {
  if (len < 64 || std::memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2) return false;
  const uint64_t shoff = rd<uint64_t>(elf + 0x28);
  const uint16_t shentsize = rd<uint16_t>(elf + 0x3a), shnum = rd<uint16_t>(elf + 0x3c);
  if (shentsize < 64 || shoff + uint64_t{shnum} * shentsize > len) return false;
  auto sh = [&](uint32_t i) { return elf + shoff + uint64_t{i} * shentsize; };
  for (uint32_t i = 0; i < shnum; ++i) {
    if (rd<uint32_t>(sh(i) + 4) != 2) continue;  // SHT_SYMTAB
    const uint64_t sym_off = rd<uint64_t>(sh(i) + 0x18), sym_size = rd<uint64_t>(sh(i) + 0x20);
    const uint32_t strtab = rd<uint32_t>(sh(i) + 0x28);
    if (strtab >= shnum || sym_off + sym_size > len) return false;
    const uint64_t str_off = rd<uint64_t>(sh(strtab) + 0x18), str_size = rd<uint64_t>(sh(strtab) + 0x20);
    if (str_off + str_size > len) return false;
    for (uint64_t s = sym_off; s + 24 <= sym_off + sym_size; s += 24) {
      const uint32_t nm = rd<uint32_t>(elf + s);
      if (nm >= str_size) continue;
      const char* sym_name = reinterpret_cast<const char*>(elf + str_off + nm);
      if (std::string_view(sym_name, strnlen(sym_name, str_size - nm)) != name) continue;
      const uint16_t shndx = rd<uint16_t>(elf + s + 6);
      const uint64_t value = rd<uint64_t>(elf + s + 8);
      if (shndx == 0 || shndx >= shnum) return false;
      const uint32_t type = rd<uint32_t>(sh(shndx) + 4);
      const uint64_t addr = rd<uint64_t>(sh(shndx) + 0x10), off = rd<uint64_t>(sh(shndx) + 0x18);
      const uint64_t sec_size = rd<uint64_t>(sh(shndx) + 0x20);
      const uint64_t at = value >= addr ? value - addr : value;  // cubins keep section offsets
      if (type == 8) {  // SHT_NOBITS: zero-initialised
        std::memset(out, 0, size);
        return true;
      }
      if (type != 1 || at + size > sec_size || off + at + size > len) return false;  // SHT_PROGBITS
      std::memcpy(out, elf + off + at, size);
      return true;
    }
  }
  return false;
}

}  // namespace

bool initial_value(const void* wrapper_or_image, std::string_view name, void* out, size_t size) noexcept {
  if (!wrapper_or_image || !out || size == 0) return false;
  auto* p = static_cast<const unsigned char*>(wrapper_or_image);
  if (rd<uint32_t>(p) == kWrapperMagic) p = static_cast<const unsigned char*>(rd<const void*>(p + 8));
  if (!p || rd<uint32_t>(p) != kFatbinMagic) return false;
  const uint16_t header = rd<uint16_t>(p + 6);
  const uint64_t total = rd<uint64_t>(p + 8);
  // Entries: kind (u16), version (u16), header size (u32), padded payload size (u64), …,
  // flags (u64) at +0x20; the payload follows the entry header.
  for (uint64_t at = header; at + 0x40 <= header + total;) {
    const unsigned char* e = p + at;
    const uint32_t ehdr = rd<uint32_t>(e + 4);
    const uint64_t payload = rd<uint64_t>(e + 8);
    if (ehdr < 0x28 || payload == 0) break;
    const uint64_t flags = rd<uint64_t>(e + 0x20);
    if (rd<uint16_t>(e) == kKindElf && !(flags & kFlagCompressed) &&
        from_cubin(e + ehdr, payload, name, out, size))
      return true;
    at += ehdr + payload;
  }
  return false;
}

std::vector<unsigned char> ptx_initializer(std::string_view line, size_t elem, bool is_float) {
  std::vector<unsigned char> out;
  const size_t eq = line.find('=');
  if (eq == std::string_view::npos) return out;
  std::string rest(line.substr(eq + 1));
  const char* c = rest.c_str();
  while (*c) {
    while (*c == ' ' || *c == '\t' || *c == '{' || *c == ',' || *c == '}' || *c == ';' || *c == '\n') ++c;
    if (!*c) break;
    uint64_t bits = 0;
    char* end = nullptr;
    if ((c[0] == '0') && (c[1] == 'f' || c[1] == 'F' || c[1] == 'd' || c[1] == 'D')) {
      bits = std::strtoull(c + 2, &end, 16);  // PTX writes float bits as 0fXXXXXXXX / 0dXXXX…
    } else if (is_float) {
      const double d = std::strtod(c, &end);
      if (elem == 4) {
        const float f = static_cast<float>(d);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        bits = b;
      } else {
        std::memcpy(&bits, &d, 8);
      }
    } else {
      bits = static_cast<uint64_t>(std::strtoll(c, &end, 0));
    }
    if (end == c) break;  // not a number: stop
    for (size_t i = 0; i < elem; ++i) out.push_back(static_cast<unsigned char>(bits >> (8 * i)));
    c = end;
  }
  return out;
}

}  // namespace fg::fatbin
