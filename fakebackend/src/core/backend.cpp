// SPDX-License-Identifier: Apache-2.0
// Backend: initialisation, devices, fork. Its other rooms: contexts (core/context.cpp), memory
// (core/memory.cpp), memory IPC (core/mem_ipc.cpp), stream-ordered pools (core/pools.cpp),
// streams, events, modules and launches (core/exec.cpp), graphs (core/graph.cpp).
#include "core/backend.h"

#include "common/coverage.h"
#include "common/log.h"
#include "core/arrays.h"
#include "core/config.h"
#include "core/event_ipc.h"
#include "core/textures.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

namespace fg {

constinit std::atomic<Backend*> g_backend{nullptr};

namespace {

// CUDA_VISIBLE_DEVICES as the real driver reads it: a comma-separated list of ordinals or
// UUIDs ("GPU-…", any unique prefix); the list ends at the first entry that names no device
// or repeats one, and an empty value hides every device.
std::vector<int> visible_devices(const char* env, const std::vector<DeviceModel>& models) {
  std::vector<int> out;
  if (!env) {
    for (size_t i = 0; i < models.size(); ++i) out.push_back(static_cast<int>(i));
    return out;
  }
  std::string s(env);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string tok = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? s.size() + 1 : comma + 1;
    while (!tok.empty() && isspace(static_cast<unsigned char>(tok.front()))) tok.erase(tok.begin());
    while (!tok.empty() && isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
    int found = -1;
    if (tok.empty()) break;
    if (tok.rfind("GPU-", 0) == 0) {
      for (size_t i = 0; i < models.size(); ++i) {
        if (models[i].uuid_str.rfind(tok, 0) == 0) {
          if (found >= 0) {  // ambiguous prefix
            found = -2;
            break;
          }
          found = static_cast<int>(i);
        }
      }
    } else {
      char* end = nullptr;
      errno = 0;
      long v = std::strtol(tok.c_str(), &end, 10);
      if (errno == 0 && end && *end == '\0' && v >= 0 && v < static_cast<long>(models.size()))
        found = static_cast<int>(v);
    }
    if (found < 0 || std::find(out.begin(), out.end(), found) != out.end()) {
      FG_LOG(Info, Core, "CUDA_VISIBLE_DEVICES: \"%s\" names no (new) device; ignoring it and the rest", tok.c_str());
      break;
    }
    out.push_back(found);
  }
  return out;
}

void at_exit_handler() {
  if (Backend* b = Backend::peek()) b->write_report();
}

// A gap is reported at exit even by a process whose only calls were gaps: the first one
// starts the backend, which registers the exit report.
void start_backend() noexcept {
  try {
    (void)Backend::get();
  } catch (...) {}
}
[[maybe_unused]] const bool g_first_use_registered = (coverage::on_first_use(start_backend), true);

void fork_child_handler() {
  if (Backend* b = Backend::peek()) b->after_fork_child();
  forget_thread_contexts();
}

}  // namespace

Backend& Backend::get() {
  if (Backend* b = g_backend.load(std::memory_order_acquire)) return *b;
  static std::once_flag once;
  std::call_once(once, [] {
    auto* b = new Backend;  // never destroyed: API calls may come from atexit handlers
    try {
      b->init();
    } catch (const std::exception& e) {
      log::write(log::Level::Error, log::Src::Core, "%s", e.what());
      std::fflush(nullptr);
      std::_Exit(1);
    }
    g_backend.store(b, std::memory_order_release);
    std::atexit(at_exit_handler);
    pthread_atfork(nullptr, nullptr, fork_child_handler);
  });
  return *g_backend.load(std::memory_order_acquire);
}

Backend::Backend() : start_(std::chrono::steady_clock::now()) {}

void Backend::init() {
  std::vector<DeviceModel> models;
  try {
    models = load_device_models(std::getenv("FAKEGPU_DEVICES"), std::getenv("FAKEGPU_CONFIG"));
  } catch (const ConfigError& e) {
    throw FatalError(std::string("invalid configuration: ") + e.what());
  }
  const char* iso = std::getenv("FAKEGPU_ISOLATED");
  const bool isolated = iso && *iso && std::strcmp(iso, "0") != 0;
  ledger_ = std::make_unique<ledger::Ledger>(isolated ? std::string("(private)") : ledger::default_path(), isolated);
  for (int phys : visible_devices(std::getenv("CUDA_VISIBLE_DEVICES"), models)) {
    auto dev = std::make_unique<Device>();
    dev->model = models[static_cast<size_t>(phys)];
    dev->ordinal = static_cast<int>(devices_.size());
    dev->ledger_index = ledger_->register_device(dev->model.uuid.data(), dev->model.total_memory, dev->model.name,
                                                 dev->ordinal);
    auto* pool = new MemPool;
    pool->id = next_id_++;
    pool->dev = dev.get();
    pool->is_default = true;
    dev->default_pool = pool;
    dev->current_pool.store(pool);
    pools_.insert(pool);
    pools_by_id_[pool->id] = pool;
    devices_.push_back(std::move(dev));
  }
  FG_LOG(Info, Core, "%d fake device(s); ledger %s", device_count(), ledger_->path().c_str());
}

Device* Backend::device_by_uuid(const uint8_t uuid[16]) noexcept {
  for (auto& d : devices_)
    if (std::memcmp(d->model.uuid.data(), uuid, 16) == 0) return d.get();
  return nullptr;
}

Device* Backend::device_by_pci_bus_id(const char* bus_id) noexcept {
  if (!bus_id) return nullptr;
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  // "domain:bus:device.function" with a 4- or 8-digit domain, or "bus:device.function".
  if (std::sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
    dom = 0;
    if (std::sscanf(bus_id, "%x:%x.%x", &bus, &dev, &fn) != 3) return nullptr;
  }
  for (auto& d : devices_)
    if (d->model.pci_domain == dom && d->model.pci_bus == bus && d->model.pci_device == dev) return d.get();
  return nullptr;
}

// A forked child inherits the parent's address space but not its GPU state: like the real
// driver, it starts without contexts and holds nothing. Its arenas are new: the inherited
// ones are shared memfd mappings, and the child's allocations must not land in the
// parent's device memory. (The inherited mappings stay mapped, unused.)
void Backend::after_fork_child() noexcept {
  ledger_->after_fork_child();
  for (auto& d : devices_) {
    for (auto& a : d->arenas) a.store(nullptr, std::memory_order_relaxed);
    d->peak.store(0, std::memory_order_relaxed);
    d->primary = nullptr;
    d->primary_refs = 0;
    new (&d->primary_mu) std::mutex;  // another thread of the parent may have held it
  }
  host_arena_.store(nullptr, std::memory_order_relaxed);
  arena_count_.store(0, std::memory_order_release);
  new (&arena_mu_) std::mutex;
  new (&mu_) std::mutex;
  contexts_.clear();
  context_handles_.clear();
  booked_variables_.clear();  // the child inherits the parent's variables, not their booking
  ctx_generation_.fetch_add(1, std::memory_order_acq_rel);
  streams_.clear();
  events_.clear();
  event_ipc::after_fork_child();
  arrays::after_fork_child();
  textures::after_fork_child();
}

}  // namespace fg
