// SPDX-License-Identifier: Apache-2.0
#include "core/fatbin.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <sys/uio.h>
#include <unistd.h>

#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound
#include <zstd.h>

namespace fg::fatbin {
namespace {

constexpr uint32_t kWrapperMagic = 0x466243B1;  // __fatBinC_Wrapper_t
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint32_t kElfMagic = 0x464C457F;
constexpr uint16_t kKindPtx = 1;
constexpr uint16_t kKindElf = 2;
// Entry flags: the payload is compressed, with LZ4 (CUDA 11.x-12.x) or Zstandard (12.8+).
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;

template <class T>
T rd(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Whether [off, off + n) lies within `len` bytes; never wraps, whatever a header claims.
bool fits(uint64_t off, uint64_t n, uint64_t len) { return off <= len && n <= len - off; }

// An ELF64 cubin's symbol table: calls fn(name, info, other, section index, value, size,
// section header) for each symbol. False when the ELF is not one we can read.
template <class F>
bool each_symbol(const unsigned char* elf, uint64_t len, F&& fn) {
  if (len < 64 || rd<uint32_t>(elf) != kElfMagic || elf[4] != 2) return false;
  const uint64_t shoff = rd<uint64_t>(elf + 0x28);
  const uint16_t shentsize = rd<uint16_t>(elf + 0x3a), shnum = rd<uint16_t>(elf + 0x3c);
  if (shentsize < 64 || !fits(shoff, uint64_t{shnum} * shentsize, len)) return false;
  auto sh = [&](uint32_t i) { return elf + shoff + uint64_t{i} * shentsize; };
  for (uint32_t i = 0; i < shnum; ++i) {
    if (rd<uint32_t>(sh(i) + 4) != 2) continue;  // SHT_SYMTAB
    const uint64_t sym_off = rd<uint64_t>(sh(i) + 0x18), sym_size = rd<uint64_t>(sh(i) + 0x20);
    const uint32_t strtab = rd<uint32_t>(sh(i) + 0x28);
    if (strtab >= shnum || !fits(sym_off, sym_size, len)) return false;
    const uint64_t str_off = rd<uint64_t>(sh(strtab) + 0x18), str_size = rd<uint64_t>(sh(strtab) + 0x20);
    if (!fits(str_off, str_size, len)) return false;
    for (uint64_t s = sym_off; s + 24 <= sym_off + sym_size; s += 24) {
      const uint32_t nm = rd<uint32_t>(elf + s);
      if (nm >= str_size) continue;
      const char* n = reinterpret_cast<const char*>(elf + str_off + nm);
      const uint16_t shndx = rd<uint16_t>(elf + s + 6);
      const unsigned char* section = shndx > 0 && shndx < shnum ? sh(shndx) : nullptr;
      if (fn(std::string_view(n, strnlen(n, str_size - nm)), elf[s + 4], elf[s + 5], section, rd<uint64_t>(elf + s + 8),
             rd<uint64_t>(elf + s + 16)))
        return true;
    }
  }
  return true;
}

// Copies a data symbol's bytes out of its section (zeros for SHT_NOBITS); false when the
// section does not hold them.
bool symbol_bytes(const unsigned char* elf, uint64_t len, const unsigned char* section, uint64_t value, void* out,
                  size_t size) {
  if (!section) return false;
  const uint32_t type = rd<uint32_t>(section + 4);
  const uint64_t addr = rd<uint64_t>(section + 0x10), off = rd<uint64_t>(section + 0x18);
  const uint64_t sec_size = rd<uint64_t>(section + 0x20);
  const uint64_t at = value >= addr ? value - addr : value;  // cubins keep section offsets
  if (type == 8) {                                           // SHT_NOBITS: zero-initialised
    std::memset(out, 0, size);
    return true;
  }
  if (type != 1 || !fits(at, size, sec_size) || !fits(off, at + size, len)) return false;  // SHT_PROGBITS
  std::memcpy(out, elf + off + at, size);
  return true;
}

// The size of a bare cubin in memory: its section headers end the file.
uint64_t cubin_size(const unsigned char* elf) {
  const uint64_t shoff = rd<uint64_t>(elf + 0x28);
  const uint16_t shentsize = rd<uint16_t>(elf + 0x3a), shnum = rd<uint16_t>(elf + 0x3c);
  return shoff + uint64_t{shentsize} * shnum;
}

// A CUDA cubin's ELF header: 64-bit, little-endian, EM_CUDA (190), 64-byte section headers
// ending within kMaxCubin (no image handed to the driver comes with its length, so the
// header is all there is to go by). Anything else is not a CUDA image.
constexpr uint16_t kEmCuda = 190;
constexpr uint64_t kMaxCubin = 1ull << 30;
bool cubin_header_ok(const unsigned char* elf) {
  if (rd<uint32_t>(elf) != kElfMagic || elf[4] != 2 || elf[5] != 1) return false;
  if (rd<uint16_t>(elf + 0x12) != kEmCuda || rd<uint16_t>(elf + 0x3a) != 64) return false;
  const uint64_t shoff = rd<uint64_t>(elf + 0x28);
  return shoff >= 64 && shoff < kMaxCubin && cubin_size(elf) <= kMaxCubin;
}

// One entry of a fat binary, its payload decompressed on demand.
struct Entry {
  uint16_t kind = 0;
  int arch = 0;
  const unsigned char* header = nullptr;

  // The payload as the compiler wrote it; empty when it cannot be decompressed.
  std::vector<unsigned char> payload() const {
    const uint32_t hsize = rd<uint32_t>(header + 4);
    const unsigned char* data = header + hsize;
    const uint64_t padded = rd<uint64_t>(header + 8);
    const uint64_t stored = rd<uint32_t>(header + 0x10) ? rd<uint32_t>(header + 0x10) : padded;
    const uint64_t flags = rd<uint64_t>(header + 0x28);
    const uint64_t full = rd<uint64_t>(header + 0x38);
    std::vector<unsigned char> out;
    if ((flags & (kFlagZstd | kFlagLz4)) && stored > padded) return out;  // compressed bytes beyond the entry
    if (flags & kFlagZstd) {
      if (full == 0 || full > (1ull << 32)) return out;
      // The size the entry claims is what the frame can hold (its own content size, or the
      // most its blocks can expand to): a claim beyond it is a broken entry, refused before
      // that much memory is taken for it.
      const unsigned long long declared = ZSTD_getFrameContentSize(data, stored);
      const unsigned long long bound = declared == ZSTD_CONTENTSIZE_UNKNOWN ? ZSTD_decompressBound(data, stored)
                                                                            : declared;
      if (declared == ZSTD_CONTENTSIZE_ERROR || bound == ZSTD_CONTENTSIZE_ERROR || full > bound) return out;
      out.resize(full);
      const size_t n = ZSTD_decompress(out.data(), out.size(), data, stored);
      if (ZSTD_isError(n))
        out.clear();
      else
        out.resize(n);
    } else if (flags & kFlagLz4) {
      if (full == 0 || full > (1ull << 31) || stored > (1ull << 31)) return out;
      // An LZ4 block expands at most 255-fold (a match length grows by 255 per byte).
      if (full / 255 > stored + 16) return out;
      out.resize(full);
      const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data), reinterpret_cast<char*>(out.data()),
                                        static_cast<int>(stored), static_cast<int>(full));
      if (n < 0)
        out.clear();
      else
        out.resize(static_cast<size_t>(n));
    } else {
      out.assign(data, data + padded);
    }
    return out;
  }
};

// The entries of a fat binary, or of the one a wrapper points at; empty for anything else.
std::vector<Entry> entries(const void* image) {
  std::vector<Entry> out;
  auto* p = static_cast<const unsigned char*>(image);
  if (rd<uint32_t>(p) == kWrapperMagic) p = static_cast<const unsigned char*>(rd<const void*>(p + 8));
  if (!p || rd<uint32_t>(p) != kFatbinMagic) return out;
  const uint16_t header = rd<uint16_t>(p + 6);
  const uint64_t total = rd<uint64_t>(p + 8);
  // Entry header: kind (u16), version (u16), header size (u32), padded payload size (u64),
  // stored size (u32) at +0x10, architecture (u32) at +0x1c, flags (u64) at +0x28,
  // decompressed size (u64) at +0x38; the payload follows the header.
  for (uint64_t at = header; at + 0x40 <= header + total;) {
    const unsigned char* e = p + at;
    const uint32_t ehdr = rd<uint32_t>(e + 4);
    const uint64_t payload = rd<uint64_t>(e + 8);
    if (ehdr < 0x40 || payload == 0) break;
    // Header and payload lie within the body the fat binary declares (all select_code checks
    // is there): an entry that runs past it ends the list instead of being read past the end.
    if (ehdr > header + total - at || payload > header + total - at - ehdr) break;
    out.push_back({rd<uint16_t>(e), static_cast<int>(rd<uint32_t>(e + 0x1c)), e});
    at += ehdr + payload;
  }
  return out;
}

// Kernel names declared in PTX text: ".entry name(" or ".visible .entry name(".
std::vector<std::string> ptx_kernels(std::string_view v) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = v.find(".entry", pos)) != std::string_view::npos) {
    pos += 6;
    while (pos < v.size() && std::isspace(static_cast<unsigned char>(v[pos]))) ++pos;
    const size_t b = pos;
    while (pos < v.size() &&
           (std::isalnum(static_cast<unsigned char>(v[pos])) || v[pos] == '_' || v[pos] == '$' || v[pos] == '.'))
      ++pos;
    if (pos > b) out.emplace_back(v.substr(b, pos - b));
  }
  return out;
}

// Variables declared in PTX: ".global .align 4 .b8 name[16];", ".const …", and managed
// ones (".global .attribute(.managed) …").
std::vector<Variable> ptx_variables(std::string_view v, uint64_t max_bytes, Status* refusal) {
  std::vector<Variable> out;
  for (std::string_view kw : {".global", ".const"}) {
    size_t pos = 0;
    while ((pos = v.find(kw, pos)) != std::string_view::npos) {
      const size_t eol = v.find_first_of(";\n", pos);
      std::string_view line = v.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
      pos += kw.size();
      const size_t paren = line.find('(');
      if (paren != std::string_view::npos && line.substr(paren, 10) != "(.managed)") continue;  // a function
      const size_t bol = v.rfind('\n', pos - kw.size());
      const size_t from = bol == std::string_view::npos ? 0 : bol + 1;
      if (v.substr(from, pos - kw.size() - from).find(".extern") != std::string_view::npos)
        continue;  // declared here, defined in another module (nvcc -rdc)
      size_t elem = 4;
      const bool is_float = line.find(".f32") != std::string_view::npos || line.find(".f64") != std::string_view::npos;
      for (auto [tag, n] : {std::pair{".b8", 1},
                            {".u8", 1},
                            {".s8", 1},
                            {".b16", 2},
                            {".u16", 2},
                            {".s16", 2},
                            {".f16", 2},
                            {".b32", 4},
                            {".u32", 4},
                            {".s32", 4},
                            {".f32", 4},
                            {".b64", 8},
                            {".u64", 8},
                            {".s64", 8},
                            {".f64", 8}})
        if (line.find(tag) != std::string_view::npos) {
          elem = static_cast<size_t>(n);
          break;
        }
      // The name is the last identifier before '[', '=' or the end.
      const size_t end = line.find_first_of("[=");
      std::string_view head = line.substr(0, end == std::string_view::npos ? line.size() : end);
      while (!head.empty() && std::isspace(static_cast<unsigned char>(head.back()))) head.remove_suffix(1);
      const size_t b = head.find_last_of(" \t");
      if (b == std::string_view::npos) continue;
      std::string name(head.substr(b + 1));
      size_t count = 1;
      if (end != std::string_view::npos && line[end] == '[')
        count = std::strtoull(std::string(line.substr(end + 1, 24)).c_str(), nullptr, 10);
      if (name.empty() || name[0] == '.') continue;
      // The size is the declaration's, however large: one the device could never hold is
      // refused before any host memory is taken for it.
      if (count == 0) count = 1;
      if (count > max_bytes / elem) {
        *refusal = Status::OutOfMemory;
        return {};
      }
      Variable var;
      var.name = std::move(name);
      var.init = ptx_initializer(line, elem, is_float);
      var.init.resize(elem * count);
      var.constant = kw == ".const";
      var.managed = line.find(".managed") != std::string_view::npos;
      const std::string_view linkage = v.substr(from, pos - kw.size() - from);
      var.weak = linkage.find(".weak") != std::string_view::npos || linkage.find(".common") != std::string_view::npos;
      var.external = var.weak || linkage.find(".visible") != std::string_view::npos;
      out.push_back(std::move(var));
    }
  }
  return out;
}
std::vector<std::string> cubin_kernels(const Code& cubin) {
  std::vector<std::string> out;
  if (cubin.kind != Code::Kind::Cubin) return out;
  each_symbol(cubin.bytes.data(), cubin.bytes.size(),
              [&](std::string_view name, uint8_t info, uint8_t other, const unsigned char*, uint64_t, uint64_t) {
                constexpr uint8_t kFunc = 2, kCudaEntry = 0x10;  // STT_FUNC, STO_CUDA_ENTRY
                if ((info & 0xf) == kFunc && (other & kCudaEntry) && !name.empty() &&
                    std::find(out.begin(), out.end(), name) == out.end())
                  out.emplace_back(name);
                return false;
              });
  return out;
}

std::vector<Variable> cubin_variables(const Code& cubin, uint64_t max_bytes, Status* refusal) {
  std::vector<Variable> out;
  if (cubin.kind != Code::Kind::Cubin) return out;
  const unsigned char* elf = cubin.bytes.data();
  const uint64_t len = cubin.bytes.size();
  each_symbol(elf, len,
              [&](std::string_view name, uint8_t info, uint8_t other, const unsigned char* section, uint64_t value,
                  uint64_t size) {
                constexpr uint8_t kObject = 1, kCudaManaged = 0x4;  // STT_OBJECT, STO_CUDA_MANAGED
                if ((info & 0xf) != kObject || size == 0 || name.empty() || !section) return false;
                if (size > max_bytes) {
                  *refusal = Status::OutOfMemory;
                  return true;  // stop: the module cannot be loaded
                }
                Variable v;
                v.name = name;
                v.init.resize(size);
                if (!symbol_bytes(elf, len, section, value, v.init.data(), size)) return false;
                v.managed = (other & kCudaManaged) != 0;
                v.external = (info >> 4) == 1 || (info >> 4) == 2;  // STB_GLOBAL, STB_WEAK
                v.weak = (info >> 4) == 2;
                // A constant bank is allocated but not writable (SHF_ALLOC without SHF_WRITE).
                v.constant = (rd<uint64_t>(section + 8) & 0x3) == 0x2;
                out.push_back(std::move(v));
                return false;
              });
  return out;
}

}  // namespace

namespace {
// The XY of ".target sm_XY[a|f]" (also compute_XY), 0 when there is none.
int ptx_target(std::string_view v) {
  const size_t t = v.find(".target");
  if (t == std::string_view::npos) return 0;
  size_t i = t + 7;
  while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (v.substr(i, prefix.size()) != prefix) continue;
    int arch = 0;
    size_t j = i + prefix.size();
    for (; j < v.size() && std::isdigit(static_cast<unsigned char>(v[j])) && arch < 100000; ++j)
      arch = arch * 10 + (v[j] - '0');
    return j > i + prefix.size() ? arch : 0;
  }
  return 0;
}

// True when every statement outside braces and parentheses starts with a directive: the
// top level of PTX holds nothing else (instructions live in function bodies, values in
// initializer braces). Comments are skipped; a line of only ")" or ";" closes a declaration.
bool ptx_top_level_ok(std::string_view v) {
  int braces = 0, parens = 0;
  bool line_start = true;
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '/' && i + 1 < v.size() && v[i + 1] == '/') {
      while (i < v.size() && v[i] != '\n') ++i;
      line_start = true;
      continue;
    }
    if (c == '/' && i + 1 < v.size() && v[i + 1] == '*') {
      const size_t end = v.find("*/", i + 2);
      if (end == std::string_view::npos) return false;
      i = end + 1;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '"') {  // a string (a .file name, a .pragma): no brace in it counts
      const size_t end = v.find('"', i + 1);
      if (end == std::string_view::npos) return false;
      i = end;
      line_start = false;
      continue;
    }
    if (line_start && braces == 0 && parens == 0 && c != '.' && c != '{' && c != '}' && c != '(' && c != ')' &&
        c != ';' && c != ',')
      return false;
    line_start = false;
    if (c == '{') ++braces;
    if (c == '}' && --braces < 0) return false;
    if (c == '(') ++parens;
    if (c == ')' && --parens < 0) return false;
  }
  return braces == 0 && parens == 0;
}
}  // namespace

Code ptx_code(std::string_view text, int cc) {
  Code code;
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  size_t first = 0;  // the first directive must be .version (after comments and blanks)
  while (first < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[first]))) {
      ++first;
    } else if (text.substr(first, 2) == "//") {
      first = text.find('\n', first);
      if (first == std::string_view::npos) first = text.size();
    } else if (text.substr(first, 2) == "/*") {
      first = text.find("*/", first + 2);
      first = first == std::string_view::npos ? text.size() : first + 2;
    } else {
      break;
    }
  }
  const int arch = ptx_target(text);
  if (text.substr(first, 8) != ".version" || arch == 0 || arch > cc || !ptx_top_level_ok(text)) {
    code.refusal = Status::InvalidPtx;
    return code;
  }
  code.kind = Code::Kind::Ptx;
  code.arch = arch;
  code.bytes.assign(text.begin(), text.end());
  code.bytes.push_back(0);
  return code;
}

std::vector<std::string> kernels(const Code& code) {
  if (code.kind == Code::Kind::Ptx)
    return ptx_kernels(std::string_view(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size() - 1));
  return cubin_kernels(code);
}

std::vector<Variable> variables(const Code& code, uint64_t max_bytes, Status* refusal) {
  *refusal = Status::Ok;
  max_bytes = std::min<uint64_t>(max_bytes, kMaxVariableBytes);
  std::vector<Variable> out = code.kind == Code::Kind::Ptx
                                  ? ptx_variables(std::string_view(reinterpret_cast<const char*>(code.bytes.data()),
                                                                   code.bytes.size() - 1),
                                                  max_bytes, refusal)
                                  : cubin_variables(code, max_bytes, refusal);
  if (*refusal != Status::Ok) out.clear();
  return out;
}

namespace {
// The entry a device of compute capability cc runs: SASS of its major at or below cc (the
// newest), else the newest PTX at or below cc; null when none fits.
const Entry* best_entry(const std::vector<Entry>& all, int cc) {
  const Entry* best = nullptr;
  for (const Entry& e : all)
    if (e.kind == kKindElf && e.arch / 10 == cc / 10 && e.arch <= cc && (!best || e.arch > best->arch)) best = &e;
  if (!best)
    for (const Entry& e : all)
      if (e.kind == kKindPtx && e.arch <= cc && (!best || e.arch > best->arch)) best = &e;
  return best;
}
}  // namespace

int ptx_arch(const void* image, int cc) noexcept {
  try {
    if (!image || rd<uint32_t>(static_cast<const unsigned char*>(image)) == kElfMagic) return 0;
    const std::vector<Entry> all = entries(image);
    const Entry* best = best_entry(all, cc);
    return best && best->kind == kKindPtx ? best->arch : 0;
  } catch (...) {
    return 0;
  }
}

uint64_t binary_extent(const void* image) noexcept {
  const auto* p = static_cast<const unsigned char*>(image);
  switch (rd<uint32_t>(p)) {
    case kElfMagic: return p[4] == 2 ? cubin_size(p) : 64;  // not ELF64: the identification only
    case kFatbinMagic: {
      const uint64_t body = rd<uint64_t>(p + 8);
      return body > (1ull << 40) ? UINT64_MAX : rd<uint16_t>(p + 6) + body;  // absurd: never all mapped
    }
    case kLinkedMagic: {
      const uint64_t size = rd<uint64_t>(p + 16);
      return size > (1ull << 40) ? UINT64_MAX : size;
    }
    default: return 0;
  }
}

bool readable(const void* p, size_t n) noexcept {
  if (n == 0) return true;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  if (begin + n < begin) return false;  // wraps around the address space
  // One byte of every page the range touches, up to 1024 pages a call.
  constexpr uintptr_t kPage = 4096;
  constexpr size_t kBatch = 1024;
  iovec remote[kBatch];
  char sink[kBatch];
  iovec local{sink, kBatch};
  uintptr_t at = begin;
  const uintptr_t end = begin + n;
  while (at < end) {
    size_t k = 0;
    for (; k < kBatch && at < end; ++k) {
      remote[k] = iovec{reinterpret_cast<void*>(at), 1};
      at = (at & ~(kPage - 1)) + kPage;
    }
    local.iov_len = k;
    if (::process_vm_readv(::getpid(), &local, 1, remote, k, 0) != static_cast<ssize_t>(k)) return false;
  }
  return true;
}

namespace {
// The code of one entry, decompressed; kind None (InvalidImage) when it cannot be.
Code decode(const Entry& e) {
  Code code;
  code.refusal = Status::InvalidImage;
  code.bytes = e.payload();
  if (code.bytes.empty()) return code;
  code.arch = e.arch;
  code.kind = e.kind == kKindElf ? Code::Kind::Cubin : Code::Kind::Ptx;
  code.refusal = Status::Ok;
  if (code.kind == Code::Kind::Ptx) {
    // PTX payloads are padded with NULs; keep the text and one terminator.
    code.bytes.resize(strnlen(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size()));
    code.bytes.push_back(0);
  }
  return code;
}

Code refused(Status why) {
  Code code;
  code.refusal = why;
  return code;
}

// The entry chosen from an image with magic `magic`: decoded, or NoBinaryForGpu when a fat
// binary had none to offer.
Code chosen(const Entry* best, uint32_t magic) {
  if (best) return decode(*best);
  return refused(magic == kFatbinMagic || magic == kWrapperMagic ? Status::NoBinaryForGpu : Status::InvalidImage);
}

// Whether the fat binary `image` (or the one its wrapper names) is all mapped.
bool fatbin_readable(const unsigned char* p) {
  if (!readable(p, 16)) return false;
  const unsigned char* fb = p;
  if (rd<uint32_t>(p) == kWrapperMagic) {
    fb = static_cast<const unsigned char*>(rd<const void*>(p + 8));
    if (!fb || !readable(fb, 16)) return false;
  }
  return rd<uint32_t>(fb) != kFatbinMagic || readable(fb, binary_extent(fb));
}
}  // namespace

std::vector<Code> linked_ptx(const void* wrapper, int cc, std::string* refused) {
  std::vector<Code> out;
  auto* w = static_cast<const unsigned char*>(wrapper);
  if (!w || !readable(w, 24) || rd<uint32_t>(w) != kWrapperMagic || rd<uint32_t>(w + 4) != 2) return out;
  auto* units = static_cast<const unsigned char*>(rd<const void*>(w + 16));
  if (!units) return out;
  size_t n = 0;  // counted before anything is decompressed
  for (;; ++n) {
    if (n > kMaxLinkedUnits) {
      if (refused)
        *refused = "a separately compiled program (-rdc) of more than " + std::to_string(kMaxLinkedUnits) +
                   " translation units: their PTX is not linked";
      return {};
    }
    if (!readable(units + n * 8, 8)) return {};
    if (!rd<const void*>(units + n * 8)) break;
  }
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    Code c = select_ptx(rd<const void*>(units + i * 8), cc);
    if (c.kind != Code::Kind::Ptx) return {};
    if ((bytes += c.bytes.size()) > kMaxLinkedPtx) {
      if (refused)
        *refused = "a separately compiled program (-rdc) with more than " + std::to_string(kMaxLinkedPtx >> 20) +
                   " MiB of PTX: it is not linked";
      return {};
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {
uint64_t align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
}  // namespace

std::vector<unsigned char> linked_image(const std::vector<Code>& units) {
  std::vector<unsigned char> out(24, 0);
  auto put32 = [&out](size_t at, uint32_t v) { std::memcpy(out.data() + at, &v, sizeof v); };
  auto put64 = [&out](size_t at, uint64_t v) { std::memcpy(out.data() + at, &v, sizeof v); };
  for (const Code& u : units) {
    const size_t at = out.size();
    out.resize(at + 16 + align8(u.bytes.size()), 0);
    put32(at, static_cast<uint32_t>(u.arch));
    put64(at + 8, u.bytes.size());
    std::memcpy(out.data() + at + 16, u.bytes.data(), u.bytes.size());
  }
  put32(0, kLinkedMagic);
  put32(4, kLinkedVersion);
  put32(8, static_cast<uint32_t>(units.size()));
  put64(16, out.size());
  return out;
}

std::vector<Code> linked_units(const void* image, int cc, Status* refusal) {
  *refusal = Status::InvalidImage;
  auto* p = static_cast<const unsigned char*>(image);
  if (!p || !readable(p, 24) || rd<uint32_t>(p) != kLinkedMagic || rd<uint32_t>(p + 4) != kLinkedVersion) return {};
  const uint32_t n = rd<uint32_t>(p + 8);
  const uint64_t size = rd<uint64_t>(p + 16);
  if (n == 0 || n > kMaxLinkedImageUnits || size < 24 || size > (1ull << 40) || !readable(p, size)) return {};
  std::vector<Code> out;
  uint64_t at = 24;
  for (uint32_t i = 0; i < n; ++i) {
    if (!fits(at, 16, size)) return {};
    const uint64_t len = rd<uint64_t>(p + at + 8);
    if (len == 0 || !fits(at + 16, len, size) || p[at + 16 + len - 1] != 0) return {};  // PTX ends with its NUL
    Code c = ptx_code(std::string_view(reinterpret_cast<const char*>(p + at + 16), len), cc);
    if (c.kind == Code::Kind::None) {
      *refusal = c.refusal;
      return {};
    }
    out.push_back(std::move(c));
    at += 16 + align8(len);
  }
  *refusal = Status::Ok;
  return out;
}

std::vector<std::vector<unsigned char>> object_fatbins(const unsigned char* elf, size_t len) {
  std::vector<std::vector<unsigned char>> out;
  if (len < 64 || rd<uint32_t>(elf) != kElfMagic || elf[4] != 2 || elf[5] != 1) return out;
  const uint64_t shoff = rd<uint64_t>(elf + 0x28);
  const uint16_t shentsize = rd<uint16_t>(elf + 0x3a), shnum = rd<uint16_t>(elf + 0x3c);
  const uint16_t shstrndx = rd<uint16_t>(elf + 0x3e);
  if (shentsize < 64 || shstrndx >= shnum || !fits(shoff, uint64_t{shnum} * shentsize, len)) return out;
  auto sh = [&](uint32_t i) { return elf + shoff + uint64_t{i} * shentsize; };
  const uint64_t names = rd<uint64_t>(sh(shstrndx) + 0x18), names_size = rd<uint64_t>(sh(shstrndx) + 0x20);
  if (!fits(names, names_size, len)) return out;
  for (uint32_t i = 0; i < shnum; ++i) {
    const uint32_t name = rd<uint32_t>(sh(i));
    if (name >= names_size || rd<uint32_t>(sh(i) + 4) != 1) continue;  // SHT_PROGBITS
    const char* n = reinterpret_cast<const char*>(elf + names + name);
    const std::string_view section(n, strnlen(n, names_size - name));
    if (section != ".nv_fatbin" && section != "__nv_relfatbin") continue;
    const uint64_t off = rd<uint64_t>(sh(i) + 0x18), size = rd<uint64_t>(sh(i) + 0x20);
    if (!fits(off, size, len)) continue;
    // Fat binaries one after another, each 8-byte aligned.
    for (uint64_t at = 0; at + 16 <= size;) {
      const unsigned char* fb = elf + off + at;
      if (rd<uint32_t>(fb) != kFatbinMagic) {
        at += 8;  // padding between them
        continue;
      }
      const uint64_t total = uint64_t{rd<uint16_t>(fb + 6)} + rd<uint64_t>(fb + 8);
      if (rd<uint64_t>(fb + 8) > size || !fits(at, total, size)) break;
      out.emplace_back(fb, fb + total);
      at += align8(total);
    }
  }
  return out;
}

bool is_archive(const unsigned char* bytes, size_t size) {
  return size >= 8 && std::memcmp(bytes, "!<arch>\n", 8) == 0;
}

std::vector<ArchiveMember> archive_members(const unsigned char* bytes, size_t size) {
  std::vector<ArchiveMember> out;
  if (!is_archive(bytes, size)) return out;
  std::string_view long_names;
  auto trimmed = [](const char* f, size_t n) {
    std::string_view v(f, n);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\0')) v.remove_suffix(1);
    return v;
  };
  // Member header (60 bytes): name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n".
  for (uint64_t at = 8; at + 60 <= size;) {
    const char* h = reinterpret_cast<const char*>(bytes + at);
    if (h[58] != '`' || h[59] != '\n') break;
    uint64_t n = 0;
    for (char c : trimmed(h + 48, 10)) {
      if (c < '0' || c > '9') return out;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    const uint64_t data = at + 60;
    if (!fits(data, n, size)) break;
    std::string_view name = trimmed(h, 16);
    const unsigned char* d = bytes + data;
    uint64_t dsize = n;
    at = data + n + (n & 1);
    if (name == "/" || name == "/SYM64/" || name == "__.SYMDEF" || name == "__.SYMDEF SORTED") continue;
    if (name == "//") {  // GNU: the names longer than 15 characters, each ending "/\n"
      long_names = std::string_view(reinterpret_cast<const char*>(d), dsize);
      continue;
    }
    std::string full;
    if (name.size() > 1 && name[0] == '/' && std::isdigit(static_cast<unsigned char>(name[1]))) {
      const uint64_t off = std::strtoull(std::string(name.substr(1)).c_str(), nullptr, 10);
      if (off < long_names.size()) {
        const std::string_view rest = long_names.substr(off);
        full = rest.substr(0, rest.find('\n'));
      }
    } else if (name.substr(0, 3) == "#1/") {  // BSD: the name begins the data
      const uint64_t len = std::strtoull(std::string(name.substr(3)).c_str(), nullptr, 10);
      if (len > dsize) continue;
      full = trimmed(reinterpret_cast<const char*>(d), len);
      d += len;
      dsize -= len;
    } else {
      full = name;
    }
    if (!full.empty() && full.back() == '/') full.pop_back();
    out.push_back({std::move(full), d, dsize});
  }
  return out;
}

Code select_ptx(const void* image, int cc) {
  Code code;
  code.refusal = Status::InvalidImage;
  if (!image) return code;
  try {
    auto* p = static_cast<const unsigned char*>(image);
    if (!fatbin_readable(p)) return code;
    const uint32_t magic = rd<uint32_t>(p);
    if (magic == kElfMagic) {  // a cubin alone: machine code, no PTX
      code.refusal = Status::NoBinaryForGpu;
      return code;
    }
    const std::vector<Entry> all = entries(image);
    const Entry* best = nullptr;
    for (const Entry& e : all) {
      if (e.kind != kKindPtx) continue;
      const bool fits_cc = e.arch <= cc;
      if (!best) {
        best = &e;
      } else if (fits_cc && (best->arch > cc || e.arch > best->arch)) {
        best = &e;  // the newest at or below cc
      } else if (!fits_cc && best->arch > cc && e.arch < best->arch) {
        best = &e;  // else the oldest above it
      }
    }
    return chosen(best, magic);
  } catch (...) {
    return refused(Status::InvalidImage);
  }
}

Code select_code(const void* image, int cc) {
  Code code;
  code.refusal = Status::InvalidImage;
  if (!image) return code;
  try {
    auto* p = static_cast<const unsigned char*>(image);
    if (!readable(p, 16)) return code;
    if (rd<uint32_t>(p) == kElfMagic) {
      if (!readable(p, 64) || !cubin_header_ok(p) || !readable(p, cubin_size(p))) return code;
      code.kind = Code::Kind::Cubin;
      code.refusal = Status::Ok;
      code.bytes.assign(p, p + cubin_size(p));
      return code;
    }
    // A fat binary (or the one a wrapper points at) must be all there, as its header says.
    if (!fatbin_readable(p)) return code;
    const std::vector<Entry> all = entries(image);
    const Entry* best = best_entry(all, cc);
    const uint32_t magic = rd<uint32_t>(p);
    return chosen(best, magic);  // a fat binary may hold nothing for this device (or no entry at all)
  } catch (...) {
    return refused(Status::InvalidImage);
  }
}

bool initial_value(const void* wrapper_or_image, std::string_view name, void* out, size_t size) noexcept {
  if (!wrapper_or_image || !out || size == 0) return false;
  try {
    for (const Entry& e : entries(wrapper_or_image)) {
      if (e.kind != kKindElf) continue;
      const std::vector<unsigned char> elf = e.payload();
      bool found = false;
      each_symbol(elf.data(), elf.size(),
                  [&](std::string_view n, uint8_t, uint8_t, const unsigned char* section, uint64_t value, uint64_t) {
                    if (n != name) return false;
                    found = symbol_bytes(elf.data(), elf.size(), section, value, out, size);
                    return true;
                  });
      if (found) return true;
    }
  } catch (...) {}
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
