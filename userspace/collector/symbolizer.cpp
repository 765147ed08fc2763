// SPDX-License-Identifier: Apache-2.0
#include "collector/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <cxxabi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fgtrace {

namespace {

// How libdwfl finds the files of a live process (/proc/PID/maps, then the files themselves)
// and their separate debuginfo when installed (debuglink, build-id).
char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kProcCallbacks = {
    dwfl_linux_proc_find_elf,
    dwfl_standard_find_debuginfo,
    nullptr,
    &g_debuginfo_path,
};
// A file read on its own (frames given as build id + file offset).
const Dwfl_Callbacks kFileCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// C++ names as people read them ("fg::Backend::mem_alloc(...)"); others unchanged.
std::string demangled(const char* name) {
  int status = -1;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

std::string basename_of(const char* path) {
  if (!path) return "?";
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// "function+0xoff [library]" for address `look` in module m (the call itself for a return
// address: look is one byte before it, and the offset printed is the return address's).
std::string describe(Dwfl_Module* m, Dwarf_Addr look, bool return_address) {
  const char* mod = dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  GElf_Off off = 0;
  GElf_Sym sym;
  const char* name = dwfl_module_addrinfo(m, look, &off, &sym, nullptr, nullptr, nullptr);
  if (!name) return hex(look + (return_address ? 1 : 0)) + " [" + basename_of(mod) + "]";
  return demangled(name) + "+" + hex(off + (return_address ? 1 : 0)) + " [" + basename_of(mod) + "]";
}

// The address in module m (as laid out there) of byte `offset` of its file: the loadable
// segment holding it says where it goes. 0 if no segment holds it.
Dwarf_Addr address_of_file_offset(Dwfl_Module* m, uint64_t offset) {
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(m, &bias);
  size_t count = 0;
  if (!elf || elf_getphdrnum(elf, &count) != 0) return 0;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD && offset >= ph.p_offset &&
        offset < ph.p_offset + ph.p_filesz)
      return offset - ph.p_offset + ph.p_vaddr + bias;
  }
  return 0;
}

// A build id as the kernel keeps it: FG_BUILD_ID_SIZE bytes, zero-padded.
std::string padded_build_id(const unsigned char* bits, int n) {
  std::string id(FG_BUILD_ID_SIZE, '\0');
  std::memcpy(id.data(), bits, static_cast<size_t>(std::min(n, FG_BUILD_ID_SIZE)));
  return id;
}

std::string build_id_hex(const std::string& id) {
  std::string out;
  const size_t used = id.find_last_not_of('\0') + 1;
  for (size_t i = 0; i < used; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(id[i]));
    out += b;
  }
  return out;
}

}  // namespace

void StackSymbolizer::DwflCloser::operator()(Dwfl* d) const { dwfl_end(d); }

StackSymbolizer::~StackSymbolizer() = default;

StackSymbolizer::Session StackSymbolizer::read_maps(pid_t pid) {
  Session s(dwfl_begin(&kProcCallbacks));
  if (!s) return s;
  dwfl_report_begin(s.get());
  const int err = dwfl_linux_proc_report(s.get(), pid);
  dwfl_report_end(s.get(), nullptr, nullptr);
  if (err != 0) s.reset();
  return s;
}

Dwfl* StackSymbolizer::session(uint32_t pid, bool refresh) {
  auto it = sessions_.find(pid);
  if (it != sessions_.end() && !refresh) return it->second.get();
  Session s = read_maps(static_cast<pid_t>(pid));
  if (!s) {
    // Gone, or not readable. A refresh keeps the maps read before (they still name what was
    // mapped then); a first read is remembered as failed, so it is not tried again per event.
    if (it != sessions_.end()) return it->second.get();
    sessions_[pid] = nullptr;
    return nullptr;
  }
  Dwfl* raw = s.get();
  add_files_of(raw);
  sessions_[pid] = std::move(s);
  return raw;
}

void StackSymbolizer::add_files_of(Dwfl* d) {
  dwfl_getmodules(
      d,
      [](Dwfl_Module*, void**, const char* name, Dwarf_Addr, void* self) -> int {
        if (name && name[0] == '/') static_cast<StackSymbolizer*>(self)->add_file(name);
        return DWARF_CB_OK;
      },
      this, 0);
}

void StackSymbolizer::add_file(const std::string& path) {
  if (!path.empty() && files_.insert(path).second) unindexed_.push_back(path);
}

const StackSymbolizer::FileModule* StackSymbolizer::file_with_build_id(const std::string& build_id) {
  auto found = by_build_id_.find(build_id);
  if (found != by_build_id_.end()) return &found->second;
  if (!own_files_added_) {  // the libraries every C++ program maps (libc, libstdc++, ld.so)
    own_files_added_ = true;
    if (Session self = read_maps(::getpid())) add_files_of(self.get());
  }
  // Files not indexed yet are read now, once each.
  std::vector<std::string> todo;
  todo.swap(unindexed_);
  for (const std::string& path : todo) {
    FileModule f{Session(dwfl_begin(&kFileCallbacks)), nullptr};
    if (!f.dwfl) continue;
    dwfl_report_begin(f.dwfl.get());
    f.module = dwfl_report_offline(f.dwfl.get(), path.c_str(), path.c_str(), -1);
    dwfl_report_end(f.dwfl.get(), nullptr, nullptr);
    const unsigned char* bits = nullptr;
    GElf_Addr at = 0;
    const int n = f.module ? dwfl_module_build_id(f.module, &bits, &at) : -1;
    if (n <= 0) continue;
    by_build_id_.emplace(padded_build_id(bits, n), std::move(f));
  }
  found = by_build_id_.find(build_id);
  return found != by_build_id_.end() ? &found->second : nullptr;
}

std::string StackSymbolizer::file_frame(const fg_file_frame& f, bool return_address) {
  const std::string id(reinterpret_cast<const char*>(f.build_id), FG_BUILD_ID_SIZE);
  const FileModule* file = file_with_build_id(id);
  const Dwarf_Addr at = file ? address_of_file_offset(file->module, f.offset_or_ip) : 0;
  if (at == 0) return hex(f.offset_or_ip) + " [build-id " + build_id_hex(id) + "]";
  return describe(file->module, return_address ? at - 1 : at, return_address);
}

std::vector<std::string> StackSymbolizer::frames(uint32_t pid, const std::vector<uint64_t>& ips,
                                                 const std::vector<fg_file_frame>& files) {
  std::vector<std::string> out;
  out.reserve(ips.size());
  Dwfl* d = session(pid, false);
  bool refreshed = false;
  for (size_t i = 0; i < ips.size(); ++i) {
    // A return address points after the call: look up the call itself (ip - 1), except for
    // the innermost frame, which is where the stack was taken.
    const bool return_address = i != 0;
    const Dwarf_Addr ip = ips[i];
    const Dwarf_Addr look = return_address ? ip - 1 : ip;
    Dwfl_Module* m = d ? dwfl_addrmodule(d, look) : nullptr;
    if (!m && d && !refreshed) {  // a library loaded since the maps were read
      refreshed = true;
      d = session(pid, true);
      m = d ? dwfl_addrmodule(d, look) : nullptr;
    }
    if (m)
      out.push_back(describe(m, look, return_address));
    else if (i < files.size() && files[i].status == FG_FRAME_FILE)  // the maps are gone or lack it
      out.push_back(file_frame(files[i], return_address));
    else
      out.push_back(hex(ip));
  }
  return out;
}

void StackSymbolizer::forget(uint32_t pid) { sessions_.erase(pid); }

}  // namespace fgtrace
