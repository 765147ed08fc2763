// SPDX-License-Identifier: Apache-2.0
#include "common/coverage.h"

#include "common/log.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace fg::coverage {
namespace {

constexpr int kCuErrorNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED
constexpr int kNvmlErrorNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED

void no_first_use() noexcept {}
int runtime_not_supported() noexcept { return kCuErrorNotSupported; }  // cudaErrorNotSupported: the same number
std::atomic<void (*)() noexcept> g_first_use{no_first_use};
std::atomic<int (*)() noexcept> g_runtime_stub{runtime_not_supported};

struct State {
  std::mutex mu;
  Snapshot data;
};
State& state() {
  static auto* s = new State;  // outlives static destruction: stubs may be called from atexit handlers
  return *s;
}

bool read_strict() noexcept {
  const char* v = std::getenv("FAKEGPU_STRICT");
  return v && *v && std::strcmp(v, "0") != 0;
}

[[noreturn]] void strict_abort(const char* what, const char* name) noexcept {
  log::write(log::Level::Error, log::Src::Core,
             "FAKEGPU_STRICT: %s %s is not implemented by the fake backend; aborting", what, name);
  std::abort();
}

}  // namespace

bool strict() noexcept {
  static const bool s = read_strict();
  return s;
}

void on_first_use(void (*fn)() noexcept) noexcept { g_first_use.store(fn, std::memory_order_release); }
void on_runtime_stub(int (*fn)() noexcept) noexcept { g_runtime_stub.store(fn, std::memory_order_release); }

static void ensure_backend() noexcept { g_first_use.load(std::memory_order_acquire)(); }

// Counts a call to an unserved entry point; true the first time `name` is seen.
static bool count_stub(const char* name) noexcept {
  auto& s = state();
  std::lock_guard lock(s.mu);
  try {
    return s.data.stubs[name]++ == 0;
  } catch (...) {
    return false;
  }
}

int stub_called(ApiId id) noexcept {
  ensure_backend();
  const ApiInfo& info = api_info(id);
  if (strict()) strict_abort("call to", info.name);
  const bool first = count_stub(info.name);
  const log::Src src = info.family == ApiFamily::Runtime  ? log::Src::Runtime
                       : info.family == ApiFamily::Driver ? log::Src::Driver
                                                          : log::Src::Nvml;
  if (first && log::enabled(log::Level::Info))
    log::write(log::Level::Info, src, "%s is not supported by the fake backend (returning NOT_SUPPORTED)", info.name);
  switch (info.family) {
    case ApiFamily::Runtime: return g_runtime_stub.load(std::memory_order_acquire)();
    case ApiFamily::Driver: return kCuErrorNotSupported;
    case ApiFamily::Nvml: return kNvmlErrorNotSupported;
  }
  return kCuErrorNotSupported;
}

int export_gap(const char* name) noexcept {
  ensure_backend();
  if (strict()) strict_abort("call to", name);
  if (count_stub(name) && log::enabled(log::Level::Info))
    log::write(log::Level::Info, log::Src::Driver, "%s is not supported by the fake backend (returning NOT_SUPPORTED)",
               name);
  return kCuErrorNotSupported;
}

void capability_gap(const char* name, const char* capability) noexcept {
  ensure_backend();
  if (strict()) {
    log::write(log::Level::Error, log::Src::Core,
               "FAKEGPU_STRICT: %s needs %s, which the fake GPU does not have; aborting", name, capability);
    std::abort();
  }
  const log::Src src = std::strncmp(name, "cuda", 4) == 0 ? log::Src::Runtime : log::Src::Driver;
  if (count_stub(name) && log::enabled(log::Level::Info))
    log::write(log::Level::Info, src,
               "%s: no %s on the fake GPU (answering as NVIDIA's driver does on a machine without it)", name,
               capability);
}

void unimplemented_noerr(ApiId id) noexcept {
  log::write(log::Level::Error, log::Src::Core, "%s is not implemented by the fake backend; aborting",
             api_info(id).name);
  std::abort();
}

void unresolved_proc(const char* name, int version, unsigned long long flags) noexcept {
  ensure_backend();
  if (strict()) strict_abort("driver entry point", name ? name : "(null)");
  auto& s = state();
  std::lock_guard lock(s.mu);
  try {
    std::string key = std::string(name ? name : "(null)") + "@" + std::to_string(version);
    if (flags & 2) key += "+ptds";
    if (s.data.unresolved[key]++ == 0)
      FG_LOG(Info, Driver, "cuGetProcAddress: no entry point for %s (version %d)", key.c_str(), version);
  } catch (...) {}
}

Snapshot snapshot() {
  auto& s = state();
  std::lock_guard lock(s.mu);
  return s.data;
}

}  // namespace fg::coverage
