// SPDX-License-Identifier: Apache-2.0
#include "collector/discovery.h"

#include "collector/elf_symbols.h"
#include "collector/errors.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <string_view>
#include <set>
#include <sstream>

namespace fgtrace {
namespace {

// Library names worth opening: the backend and NVIDIA's runtime and driver.
// (What the regex (^|/)lib(fake_gpu|cudart|cuda)\.so[.0-9]*$ says, without std::regex: the
// monitor checks every line of every process's maps at each refresh.)
bool candidate_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string_view base = std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
  for (std::string_view stem : {"libfake_gpu.so", "libcudart.so", "libcuda.so"}) {
    if (base.substr(0, stem.size()) != stem) continue;
    const std::string_view rest = base.substr(stem.size());
    if (rest.find_first_not_of(".0123456789") == std::string_view::npos) return true;
  }
  return false;
}

// The path without links, or empty when it is gone (a process's /proc/PID/root/... once the
// process has exited).
std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

void add_unique(std::vector<std::string>& out, std::set<std::pair<dev_t, ino_t>>& seen, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (!seen.insert({st.st_dev, st.st_ino}).second) return;
  if (!is_cuda_library(path)) return;
  if (std::string r = real(path); !r.empty()) out.push_back(std::move(r));
}

std::vector<std::string> mapped_candidates(int pid) {
  std::vector<std::string> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) continue;
    if (candidate_name(path) && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.find_last_of('/'));
}

}  // namespace

bool is_cuda_library(const std::string& path) {
  try {
    const ElfSymbols elf(path);
    return elf.exports("cudaMalloc") || elf.exports("cuMemAlloc_v2");
  } catch (const TraceError&) {
    return false;
  }
}

bool is_fake_backend(const std::string& path) {
  try {
    return !ElfSymbols(path).usdt_probes("fakegpu").empty();
  } catch (const TraceError&) {
    return false;
  }
}

bool process_exists(int pid) { return pid > 0 && ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0; }

std::string process_comm(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

std::vector<std::string> cuda_libraries_of(int pid) {
  if (!process_exists(pid)) throw TraceError("process " + std::to_string(pid) + " does not exist", kExitNotFound);
  std::vector<std::string> out;
  std::set<std::pair<dev_t, ino_t>> seen;
  // Through /proc/PID/root so a process in another mount namespace (a container) works.
  const std::string root = "/proc/" + std::to_string(pid) + "/root";
  for (const std::string& p : mapped_candidates(pid)) {
    const std::string via_root = root + p;
    add_unique(out, seen, ::access(via_root.c_str(), R_OK) == 0 ? via_root : p);
  }
  return out;
}

std::vector<std::string> default_libraries() {
  std::vector<std::string> out;
  std::set<std::pair<dev_t, ino_t>> seen;
  const std::string bin = self_dir();
  const std::string prefix = bin.substr(0, bin.find_last_of('/'));
  for (const std::string& p :
       {prefix + "/libfake_gpu.so", prefix + "/lib/fakegpu/libfake_gpu.so", prefix + "/lib64/fakegpu/libfake_gpu.so",
        std::string("/usr/local/lib/fakegpu/libfake_gpu.so"), std::string("/usr/lib/fakegpu/libfake_gpu.so")})
    add_unique(out, seen, p);
  // A backend installed where the dynamic linker finds it. NVIDIA's own libraries are traced
  // when a process maps them (or when named with --lib): attaching to every CUDA library on
  // the host up front would cost probes nobody may ever hit.
  if (FILE* f = ::popen("/sbin/ldconfig -p 2>/dev/null", "r")) {
    char line[1024];
    while (std::fgets(line, sizeof line, f)) {
      std::string s(line);
      const size_t arrow = s.find("=> ");
      if (arrow == std::string::npos) continue;
      std::string path = s.substr(arrow + 3);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      if (candidate_name(path) && is_fake_backend(path)) add_unique(out, seen, path);
    }
    ::pclose(f);
  }
  return out;
}

std::vector<std::string> mapped_cuda_libraries() {
  std::vector<std::string> out;
  std::set<std::pair<dev_t, ino_t>> seen;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (!end || *end || pid <= 0) continue;
    for (const std::string& p : mapped_candidates(static_cast<int>(pid))) {
      const std::string via_root = "/proc/" + std::to_string(pid) + "/root" + p;
      add_unique(out, seen, ::access(via_root.c_str(), R_OK) == 0 ? via_root : p);
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace fgtrace
