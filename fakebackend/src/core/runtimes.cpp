// SPDX-License-Identifier: Apache-2.0
#include "core/runtimes.h"

#include "common/log.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace fg::runtimes {

std::atomic<bool> g_fake_seen{false};

namespace {

std::mutex g_mu;
std::vector<Seen> g_nvidia;               // guarded by g_mu
std::vector<const void*> g_nvidia_bases;  // guarded by g_mu; the objects' load addresses

// FAKEGPU_RUNTIME: what the user asked for (fakegpu-run --runtime); empty = auto.
std::string wanted() {
  const char* v = std::getenv("FAKEGPU_RUNTIME");
  return v && (std::strcmp(v, "fake") == 0 || std::strcmp(v, "nvidia") == 0) ? v : "";
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "(main program)";
}

std::string object_of(const void* addr, bool* is_main, const void** base) {
  Dl_info info{};
  link_map* map = nullptr;
  *is_main = false;
  *base = nullptr;
  if (!::dladdr1(addr, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return "(unknown)";
  *base = info.dli_fbase;
  if (!map->l_name || !*map->l_name) {  // the main program's link map has no name
    *is_main = true;
    return self_exe();
  }
  return map->l_name;
}

}  // namespace

void fake_first_use() noexcept {
  if (g_fake_seen.exchange(true)) return;
  FG_LOG(Info, Runtime, "runtime: the fake's CUDA Runtime serves this process");
  if (wanted() == "nvidia")
    FG_LOG(Warn, Runtime,
           "FAKEGPU_RUNTIME=nvidia (fakegpu-run --runtime nvidia), but this process calls the fake's CUDA Runtime: "
           "it binds libcudart from the fake's lib directory (LD_PRELOAD of libfake_gpu.so, a CUDA 12 program "
           "asking for libcudart.so.12, or a path to the fake's library)");
}

void nvidia_seen(const void* caller) noexcept {
  try {
    bool is_main = false;
    const void* base = nullptr;
    const std::string object = object_of(caller, &is_main, &base);
    const std::string file = object.substr(object.find_last_of('/') + 1);
    Seen s{is_main                              ? "nvidia-static"
           : file.rfind("libcudart.so", 0) == 0 ? "nvidia-shared"
                                                : "nvidia-embedded",
           object};
    {
      std::lock_guard<std::mutex> lock(g_mu);
      for (const void* b : g_nvidia_bases)
        if (b == base) return;
      g_nvidia_bases.push_back(base);
      g_nvidia.push_back(s);
    }
    FG_LOG(Info, Driver, "runtime: NVIDIA's CUDA Runtime (%s, %s) runs over the fake driver", s.kind.c_str(),
           object.c_str());
    if (s.kind == "nvidia-static" && wanted() == "fake")
      FG_LOG(Warn, Driver,
             "FAKEGPU_RUNTIME=fake (fakegpu-run --runtime fake), but %s has NVIDIA's CUDA Runtime statically "
             "linked in: it cannot be replaced by the fake's; it runs over the fake driver instead (build it with "
             "nvcc -cudart shared, or CMake CUDA_RUNTIME_LIBRARY Shared, to use the fake's runtime)",
             object.c_str());
  } catch (...) {
    // Only bookkeeping: the caller's request is served either way.
  }
}

std::vector<Seen> snapshot(bool fake_calls) {
  std::vector<Seen> out;
  if (fake_calls) {
    Dl_info info{};
    char buf[PATH_MAX];
    const bool found = ::dladdr(reinterpret_cast<const void*>(&fake_first_use), &info) && info.dli_fname;
    out.push_back({"fake", !found ? "(unknown)" : ::realpath(info.dli_fname, buf) ? buf : info.dli_fname});
  }
  std::lock_guard<std::mutex> lock(g_mu);
  out.insert(out.end(), g_nvidia.begin(), g_nvidia.end());
  return out;
}

}  // namespace fg::runtimes
