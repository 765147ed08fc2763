// SPDX-License-Identifier: Apache-2.0
#include "collector/elf_symbols.h"
#include "collector/unique_fd.h"

#include "collector/errors.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <cstring>
#include <memory>

namespace fgtrace {
namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

// Virtual address → file offset through the section that holds it (what a uprobe needs).
uint64_t file_offset(Elf* elf, uint64_t vaddr) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
    if (vaddr >= sh.sh_addr && vaddr < sh.sh_addr + sh.sh_size) return vaddr - sh.sh_addr + sh.sh_offset;
  }
  return vaddr;
}

}  // namespace

ElfSymbols::ElfSymbols(const std::string& path) : path_(path) {
  if (elf_version(EV_CURRENT) == EV_NONE) throw TraceError("libelf is not usable: " + std::string(elf_errmsg(-1)));
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw TraceError("cannot open " + path + ": " + std::strerror(errno));
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd.get(), ELF_C_READ, nullptr));  // ended before fd closes
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) throw TraceError(path + " is not an ELF file");
  // A note's addresses are as linked; .stapsdt.base's address now minus the note's record of
  // it is what prelinking moved them by (SystemTap SDT v3).
  size_t shstrndx = 0;
  uint64_t sdt_base = 0;
  bool have_sdt_base = false;
  if (elf_getshdrstrndx(elf.get(), &shstrndx) == 0) {
    Elf_Scn* s = nullptr;
    while ((s = elf_nextscn(elf.get(), s)) != nullptr) {
      GElf_Shdr sh;
      const char* name = gelf_getshdr(s, &sh) ? elf_strptr(elf.get(), shstrndx, sh.sh_name) : nullptr;
      if (name && std::strcmp(name, ".stapsdt.base") == 0) {
        sdt_base = sh.sh_addr;
        have_sdt_base = true;
      }
    }
  }
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf.get(), scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    if (sh.sh_type == SHT_DYNSYM) {
      const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; i < n; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
        if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
        const char* name = elf_strptr(elf.get(), sh.sh_link, sym.st_name);
        if (!name || !*name) continue;
        if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT || GELF_ST_TYPE(sym.st_info) == STT_FUNC)
          addresses_.emplace(name, sym.st_value);
        if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) funcs_.emplace(name, file_offset(elf.get(), sym.st_value));
      }
    } else if (sh.sh_type == SHT_DYNAMIC) {
      const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; i < n; ++i) {
        GElf_Dyn dyn;
        if (gelf_getdyn(data, static_cast<int>(i), &dyn) && dyn.d_tag == DT_SONAME)
          if (const char* s = elf_strptr(elf.get(), sh.sh_link, dyn.d_un.d_val)) soname_ = s;
      }
    } else if (sh.sh_type == SHT_NOTE) {
      // stapsdt notes: owner "stapsdt", type 3; desc = 3 addresses, then provider\0name\0args\0.
      size_t off = 0;
      GElf_Nhdr nh;
      size_t name_off = 0, desc_off = 0;
      while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char* owner = static_cast<const char*>(data->d_buf) + name_off;
        if (nh.n_type != 3 || nh.n_namesz != 8 || std::memcmp(owner, "stapsdt", 8) != 0 || nh.n_descsz < 3 * 8 + 2)
          continue;
        const char* desc = static_cast<const char*>(data->d_buf) + desc_off;
        // provider\0name\0arguments\0 after the three addresses, each bounded by the note.
        const char* p = desc + 3 * 8;
        const char* const end = desc + nh.n_descsz;
        std::string fields[3];
        for (auto& f : fields) {
          if (p >= end) break;
          f.assign(p, strnlen(p, static_cast<size_t>(end - p)));
          p += f.size() + 1;
        }
        uint64_t addr[3];  // the site, .stapsdt.base as linked, the semaphore (0: none)
        std::memcpy(addr, desc, sizeof addr);
        const uint64_t moved = have_sdt_base && addr[1] ? sdt_base - addr[1] : 0;
        if (!fields[0].empty() && !fields[1].empty())
          usdt_.push_back({fields[0], fields[1], fields[2], file_offset(elf.get(), addr[0] + moved),
                           addr[2] ? file_offset(elf.get(), addr[2] + moved) : 0});
      }
    }
  }
}

std::optional<uint64_t> ElfSymbols::address(const std::string& name) const {
  const auto it = addresses_.find(name);
  return it == addresses_.end() ? std::nullopt : std::optional<uint64_t>(it->second);
}

std::vector<uint64_t> ElfSymbols::offsets(const std::string& name) const {
  std::vector<uint64_t> out;
  auto [b, e] = funcs_.equal_range(name);
  for (auto it = b; it != e; ++it)
    if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> ElfSymbols::usdt_probes(const std::string& provider) const {
  std::vector<std::string> out;
  for (const UsdtNote& n : usdt_)
    if (n.provider == provider && std::find(out.begin(), out.end(), n.name) == out.end()) out.push_back(n.name);
  return out;
}

std::vector<std::string> ElfSymbols::usdt_arguments(const std::string& provider, const std::string& name) const {
  std::vector<std::string> out;
  for (const UsdtNote& n : usdt_)
    if (n.provider == provider && n.name == name) out.push_back(n.arguments);
  return out;
}

ElfSymbols::UsdtSites ElfSymbols::usdt_sites(const std::string& provider, const std::string& name) const {
  UsdtSites out;
  for (const UsdtNote& n : usdt_)
    if (n.provider == provider && n.name == name) {
      out.offsets.push_back(n.offset);
      out.semaphores.push_back(n.semaphore);
    }
  return out;
}

}  // namespace fgtrace
