#include "collector/symbolizer.h"

#include <elfutils/libdwfl.h>

#include <cxxabi.h>

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

}  // namespace

void StackSymbolizer::DwflCloser::operator()(Dwfl* d) const { dwfl_end(d); }

StackSymbolizer::~StackSymbolizer() = default;

Dwfl* StackSymbolizer::session(uint32_t pid, bool refresh) {
  auto it = sessions_.find(pid);
  if (it != sessions_.end() && !refresh) return it->second.get();
  Session s(dwfl_begin(&kProcCallbacks));
  if (!s) return nullptr;
  dwfl_report_begin(s.get());
  const int err = dwfl_linux_proc_report(s.get(), static_cast<pid_t>(pid));
  dwfl_report_end(s.get(), nullptr, nullptr);
  if (err != 0) {  // gone, or not readable: remembered, so it is not read again per event
    sessions_[pid] = nullptr;
    return nullptr;
  }
  Dwfl* raw = s.get();
  sessions_[pid] = std::move(s);
  return raw;
}

std::vector<std::string> StackSymbolizer::frames(uint32_t pid, const std::vector<uint64_t>& ips) {
  std::vector<std::string> out;
  out.reserve(ips.size());
  Dwfl* d = session(pid, false);
  bool refreshed = false;
  for (size_t i = 0; i < ips.size(); ++i) {
    // A return address points after the call: look up the call itself (ip - 1), except for
    // the innermost frame, which is where the stack was taken.
    const Dwarf_Addr ip = ips[i];
    const Dwarf_Addr look = i == 0 ? ip : ip - 1;
    Dwfl_Module* m = d ? dwfl_addrmodule(d, look) : nullptr;
    if (!m && d && !refreshed) {  // a library loaded since the maps were read
      refreshed = true;
      d = session(pid, true);
      m = d ? dwfl_addrmodule(d, look) : nullptr;
    }
    if (!m) {
      out.push_back(hex(ip));
      continue;
    }
    const char* mod = dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    GElf_Off off = 0;
    GElf_Sym sym;
    const char* name = dwfl_module_addrinfo(m, look, &off, &sym, nullptr, nullptr, nullptr);
    std::string f = name ? demangled(name) + "+" + hex(off + (look != ip ? 1 : 0)) : hex(ip);
    out.push_back(f + " [" + basename_of(mod) + "]");
  }
  return out;
}

void StackSymbolizer::forget(uint32_t pid) { sessions_.erase(pid); }

}  // namespace fgtrace
