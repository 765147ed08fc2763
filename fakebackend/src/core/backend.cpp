// SPDX-License-Identifier: Apache-2.0
// Backend: initialisation, devices, contexts, memory, IPC.
#include "core/backend.h"

#include "common/calls.h"
#include "common/log.h"
#include "core/config.h"
#include "core/event_ipc.h"
#include "core/peer_fd.h"
#include "core/usdt.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

namespace fg {

constinit std::atomic<Backend*> g_backend{nullptr};
FG_TLS constinit thread_local CtxCache t_ctx_cache;

namespace {

FG_TLS thread_local ThreadState t_state;

// After every change to this thread's context stack.
void sync_current() noexcept {
  const auto& st = t_state.ctx_stack;
  t_ctx_cache.current = st.empty() ? nullptr : st.back();
}

constexpr unsigned kind_bit(MemKind k) { return 1u << static_cast<unsigned>(k); }

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
      if (errno == 0 && end && *end == '\0' && v >= 0 && v < static_cast<long>(models.size())) found = static_cast<int>(v);
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

void fork_child_handler() {
  if (Backend* b = Backend::peek()) b->after_fork_child();
  t_state.ctx_stack.clear();
  sync_current();
}

}  // namespace

ThreadState& thread_state() noexcept { return t_state; }
// NVIDIA's libraries call the driver from their exit handlers, after the main thread's
// thread_local objects are gone: the thread then has no current context. (t_ctx_cache is a
// separate trivial object: stores into a dying object's own members are dead to the compiler.)
ThreadState::~ThreadState() { t_ctx_cache.current = nullptr; }

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
    dev->ledger_index =
        ledger_->register_device(dev->model.uuid.data(), dev->model.total_memory, dev->model.name, dev->ordinal);
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
  ctx_generation_.fetch_add(1, std::memory_order_acq_rel);
  streams_.clear();
  events_.clear();
  event_ipc::after_fork_child();
}

// ---- contexts ------------------------------------------------------------------------------------

bool Backend::ctx_valid_slow(const Context* ctx) noexcept {
  if (!ctx) return false;
  const uint64_t generation = ctx_generation_.load(std::memory_order_acquire);
  std::lock_guard lock(mu_);
  const bool ok = contexts_.count(ctx) && ctx->active.load(std::memory_order_acquire);
  if (ok) {
    t_ctx_cache.valid_ctx = ctx;
    t_ctx_cache.valid_generation = generation;
  }
  return ok;
}

static void announce_switch(Context* ctx) {
  FG_USDT_CTX_SWITCH(ctx ? ctx->dev->ordinal : -1, reinterpret_cast<uintptr_t>(ctx));
}

Status Backend::ctx_create(Device* dev, unsigned flags, Context** out) {
  if (!dev) return Status::InvalidDevice;
  if (!out) return Status::InvalidValue;
  auto* ctx = new Context;
  ctx->dev = dev;
  ctx->flags = flags;
  ctx->id = next_id_++;
  reset_state(ctx);
  {
    std::lock_guard lock(mu_);
    contexts_.insert(ctx);
  }
  t_state.ctx_stack.push_back(ctx);
  sync_current();
  announce_switch(ctx);
  *out = ctx;
  return Status::Ok;
}

void Backend::implicit_free_ctx(Context* ctx) {
  run_local_dtors(ctx);
  // Everything the context still holds is freed, as destroying a real context does.
  for (const Allocation& a : live_allocations()) {
    if (a.ctx != ctx) continue;
    if (Allocation gone; a.arena->erase(a.base, ~0u, &gone)) {
      give_back(gone);
      if (!announced_at_exit(gone.base))
        FG_USDT_IMPLICIT_FREE(gone.device, gone.base, gone.size, static_cast<int>(gone.kind), 1);
    }
  }
  std::vector<Stream*> streams;
  std::vector<Event*> events;
  {
    std::lock_guard lock(mu_);
    for (const Stream* s : streams_)
      if (s->ctx == ctx) streams.push_back(const_cast<Stream*>(s));
    for (const Event* e : events_)
      if (e->ctx == ctx) events.push_back(const_cast<Event*>(e));
  }
  for (Stream* s : streams) stream_destroy(s);
  for (Event* e : events) event_destroy(e);
  std::vector<Module*> mods;
  {
    std::lock_guard lock(mu_);
    for (const Module* m : modules_)
      if (m->ctx == ctx) mods.push_back(const_cast<Module*>(m));
  }
  for (Module* m : mods) module_unload(m);
}

Status Backend::ctx_destroy(Context* ctx) {
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  if (ctx->primary) return Status::InvalidContext;  // primary contexts are released, not destroyed
  ctx_sync(ctx);
  implicit_free_ctx(ctx);
  ctx->active.store(false, std::memory_order_release);
  // Remove it from this thread's stack (other threads' stacks keep a dead handle, which
  // every call rejects as destroyed, as with the real driver).
  auto& st = t_state.ctx_stack;
  const bool was_current = !st.empty() && st.back() == ctx;
  std::erase(st, ctx);
  sync_current();
  if (was_current) announce_switch(current_ctx());
  // The Context object itself stays allocated (a few bytes) so stale handles stay
  // recognisable; it is no longer in contexts_.
  std::lock_guard lock(mu_);
  contexts_.erase(ctx);
  ctx_generation_.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok;
}

Status Backend::set_current(Context* ctx) {
  auto& st = t_state.ctx_stack;
  if (!ctx) {
    if (!st.empty()) st.pop_back();
  } else {
    // A primary context may be made current before it is retained (it is then inactive
    // until the retain, and calls that need a context say it is destroyed).
    if (!ctx_valid(ctx) && !is_primary_handle(ctx)) return Status::InvalidContext;
    if (st.empty())
      st.push_back(ctx);
    else
      st.back() = ctx;
  }
  sync_current();
  announce_switch(current_ctx());
  return Status::Ok;
}

Status Backend::push_current(Context* ctx) {
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  t_state.ctx_stack.push_back(ctx);
  sync_current();
  announce_switch(ctx);
  return Status::Ok;
}

Status Backend::pop_current(Context** out) {
  auto& st = t_state.ctx_stack;
  if (st.empty()) return Status::InvalidContext;
  Context* top = st.back();
  st.pop_back();
  sync_current();
  if (out) *out = top;
  announce_switch(current_ctx());
  return Status::Ok;
}

// A context's state as the real driver creates it: default limits, caches, no peers.
void Backend::reset_state(Context* ctx) {
  std::lock_guard lock(ctx->mu);
  constexpr size_t kDefaults[] = {
      1024,      // stack size per thread
      1 << 20,   // printf FIFO
      8 << 20,   // malloc heap
      2,         // device runtime sync depth
      2048,      // device runtime pending launch count
      32,        // max L2 fetch granularity
      0,         // persisting L2 cache size
  };
  std::fill(std::begin(ctx->limits), std::end(ctx->limits), 0);
  std::copy(std::begin(kDefaults), std::end(kDefaults), ctx->limits);
  ctx->cache_config = 0;
  ctx->shmem_config = 0;
  ctx->peers.clear();
}

Status Backend::ctx_set_limit(Context* ctx, int limit, size_t value) {
  switch (limit) {
    case 0:  // stack size per thread: kept in 16-byte units
      value = (value + 15) / 16 * 16;
      break;
    case 5:  // max L2 fetch granularity: 0..128 bytes
      if (value > 128) return Status::InvalidValue;
      break;
    case 6:  // persisting L2 cache size: at most the device's maximum
      value = std::min(value, static_cast<size_t>(ctx->dev->model.attributes[attr::MAX_PERSISTING_L2_CACHE_SIZE]));
      break;
    case 7:  // shared memory size, CIG enabled: query-only
    case 8: return Status::InvalidValue;
    case 9: return Status::NotSupported;  // CIG shared-memory fallback: CIG contexts only
    default:
      if (limit < 0 || limit > 9) return Status::InvalidValue;
  }
  std::lock_guard lock(ctx->mu);
  ctx->limits[limit] = value;
  return Status::Ok;
}

size_t Backend::ctx_limit(Context* ctx, int limit) {
  if (limit == 7) return static_cast<size_t>(ctx->dev->model.attributes[attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN]);
  if (limit < 0 || limit > 6) return 0;  // never a CIG context
  std::lock_guard lock(ctx->mu);
  return ctx->limits[limit];
}

namespace {
Context* make_primary(Device* dev, std::atomic<uint64_t>& next_id) {
  if (!dev->primary) {
    auto* ctx = new Context;
    ctx->dev = dev;
    ctx->primary = true;
    ctx->active.store(false, std::memory_order_relaxed);
    ctx->id = next_id++;
    dev->primary = ctx;
  }
  return dev->primary;
}
}  // namespace

Context* Backend::primary_handle(Device* dev) {
  if (!dev) return nullptr;
  std::lock_guard lock(dev->primary_mu);
  return make_primary(dev, next_id_);
}

bool Backend::is_primary_handle(const Context* ctx) noexcept {
  if (!ctx) return false;
  for (auto& d : devices_) {
    std::lock_guard lock(d->primary_mu);
    if (d->primary == ctx) return true;
  }
  return false;
}

Status Backend::ctx_local_put(Context* ctx, void* key, void* value, Context::LocalDtor dtor) {
  std::lock_guard lock(ctx->mu);
  locals_generation_.fetch_add(1, std::memory_order_acq_rel);
  for (Context::Local& l : ctx->locals)
    if (l.key == key) {
      l.value = value;
      l.dtor = dtor;
      return Status::Ok;
    }
  ctx->locals.push_back({key, value, dtor});
  return Status::Ok;
}

Status Backend::ctx_local_get(Context* ctx, const void* key, void** value) {
  if (ctx_local_remembered(ctx, key, value)) return Status::Ok;
  const uint64_t generation = locals_generation_.load(std::memory_order_acquire);
  CtxCache& tc = t_ctx_cache;
  std::lock_guard lock(ctx->mu);
  for (const Context::Local& l : ctx->locals)
    if (l.key == key) {
      *value = l.value;
      tc.local_hits[tc.local_next++ % tc.local_hits.size()] = {ctx, key, l.value, generation};
      return Status::Ok;
    }
  return Status::NotFound;
}

Status Backend::ctx_local_delete(Context* ctx, const void* key) {
  std::lock_guard lock(ctx->mu);
  locals_generation_.fetch_add(1, std::memory_order_acq_rel);
  std::erase_if(ctx->locals, [key](const Context::Local& l) { return l.key == key; });
  return Status::Ok;
}

// The destructors run before the context's memory goes: they free what their owner
// allocated in it (through the driver), as they would on a real context.
void Backend::run_local_dtors(Context* ctx) {
  std::vector<Context::Local> locals;
  {
    std::lock_guard lock(ctx->mu);
    locals.swap(ctx->locals);
    locals_generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  for (const Context::Local& l : locals)
    if (l.dtor) l.dtor(ctx, l.key, l.value);
}

Status Backend::primary_retain(Device* dev, Context** out) {
  if (!dev) return Status::InvalidDevice;
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(dev->primary_mu);
  Context* ctx = make_primary(dev, next_id_);
  if (dev->primary_refs++ == 0) {
    // Created, or revived after a release to zero / reset: it starts afresh.
    reset_state(ctx);
    ctx->flags = dev->primary_flags;
    ctx->active.store(true, std::memory_order_release);
    std::lock_guard l2(mu_);
    contexts_.insert(ctx);
  }
  *out = ctx;
  return Status::Ok;
}

Status Backend::primary_release(Device* dev) {
  if (!dev) return Status::InvalidDevice;
  Context* to_free = nullptr;
  {
    std::lock_guard lock(dev->primary_mu);
    if (dev->primary_refs == 0) return Status::InvalidContext;  // CUDA_ERROR_INVALID_CONTEXT as real
    if (--dev->primary_refs == 0) to_free = dev->primary;
  }
  if (to_free) {
    ctx_sync(to_free);
    implicit_free_ctx(to_free);
    to_free->active.store(false, std::memory_order_release);
    std::lock_guard l2(mu_);
    contexts_.erase(to_free);
    ctx_generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  return Status::Ok;
}

Status Backend::primary_reset(Device* dev) {
  if (!dev) return Status::InvalidDevice;
  Context* ctx = nullptr;
  {
    std::lock_guard lock(dev->primary_mu);
    ctx = dev->primary;
    if (!ctx || dev->primary_refs == 0) return Status::Ok;
    dev->primary_refs = 0;
  }
  ctx_sync(ctx);
  implicit_free_ctx(ctx);
  ctx->active.store(false, std::memory_order_release);
  std::lock_guard l2(mu_);
  contexts_.erase(ctx);
  ctx_generation_.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok;
}

Status Backend::runtime_set_device(int ordinal) {
  Device* dev = device(ordinal);
  if (!dev) return Status::InvalidDevice;
  Context* ctx = nullptr;
  {
    // The runtime holds one reference on each device's primary context it has used, taken
    // on first use and kept until cudaDeviceReset.
    std::lock_guard lock(dev->primary_mu);
    if (dev->primary && dev->primary_refs > 0) ctx = dev->primary;
  }
  if (!ctx) {
    Status s = primary_retain(dev, &ctx);
    if (s != Status::Ok) return s;
  }
  auto& st = t_state.ctx_stack;
  if (st.empty())
    st.push_back(ctx);
  else
    st.back() = ctx;
  sync_current();
  announce_switch(ctx);
  return Status::Ok;
}

Status Backend::runtime_ctx(Context** out) {
  // NVIDIA's runtime calls cuInit before its first context: driver calls work after it.
  // (Written only once: a store on every call would bounce this line between threads.)
  if (!driver_init_.load(std::memory_order_relaxed)) driver_init_.store(true, std::memory_order_release);
  Context* cur = current_ctx();
  if (cur && cur->active.load(std::memory_order_acquire)) {
    *out = cur;
    return Status::Ok;
  }
  if (device_count() == 0) return Status::InvalidDevice;
  const int dev = cur ? cur->dev->ordinal : 0;
  Status s = runtime_set_device(dev);
  if (s != Status::Ok) return s;
  *out = current_ctx();
  return Status::Ok;
}

int Backend::runtime_device() noexcept {
  Context* cur = current_ctx();
  return cur ? cur->dev->ordinal : 0;
}

// ---- memory ------------------------------------------------------------------------------------
void Backend::publish_arena(Arena* a) {  // under arena_mu_
  const size_t n = arena_count_.load(std::memory_order_relaxed);
  arena_list_[n].store(a, std::memory_order_relaxed);
  arena_count_.store(n + 1, std::memory_order_release);
}

Arena* Backend::create_arena(Device* dev, MemKind kind) {
  const int k = kind == MemKind::Managed ? 1 : 0;
  std::lock_guard lock(arena_mu_);
  Arena* a = dev->arenas[k].load(std::memory_order_relaxed);
  if (a) return a;
  try {
    a = new Arena(dev->ordinal * 2 + k + 1, dev->ordinal, kind, dev->model.total_memory);
  } catch (const std::exception& e) {
    FG_LOG(Error, Core, "device %d: %s", dev->ordinal, e.what());
    return nullptr;
  }
  publish_arena(a);
  dev->arenas[k].store(a, std::memory_order_release);
  return a;
}

std::vector<Allocation> Backend::live_allocations() const {
  std::vector<Allocation> out;
  const size_t n = arena_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) arena_list_[i].load(std::memory_order_relaxed)->live(out);
  return out;
}

Arena* Backend::host_arena() {
  Arena* a = host_arena_.load(std::memory_order_acquire);
  if (a) return a;
  std::lock_guard lock(arena_mu_);
  a = host_arena_.load(std::memory_order_relaxed);
  if (a) return a;
  try {
    // Pinned host memory is bounded by the host, not by a device: reserve generously.
    a = new Arena(0, -1, MemKind::Host, 1ull << 40);
  } catch (const std::exception& e) {
    FG_LOG(Error, Core, "pinned host memory: %s", e.what());
    return nullptr;
  }
  publish_arena(a);
  host_arena_.store(a, std::memory_order_release);
  return a;
}

void Backend::raise_peak(Device* dev, uint64_t peak, uint64_t high) noexcept {
  while (high > peak && !dev->peak.compare_exchange_weak(peak, high, std::memory_order_relaxed)) {
  }
}

uint64_t Backend::held(const Device* dev) const noexcept {
  return ledger_->mine(dev->ledger_index, ledger::kDevice) + ledger_->mine(dev->ledger_index, ledger::kManaged);
}

Status Backend::mem_alloc(Context* ctx, MemKind kind, uint64_t size, ApiOrigin api, uint32_t flags, void** out,
                          uint64_t pool) {
  if (!out || size == 0) return Status::InvalidValue;
  calls::attach_thread();
  Device* dev = ctx ? ctx->dev : nullptr;
  const bool on_device = kind == MemKind::Device || kind == MemKind::Managed;
  if (on_device && !dev) return Status::InvalidContext;
  const int ord = on_device ? dev->ordinal : -1;
  // Host allocations are booked under the current device's ledger row (kind host) so that
  // per-process pinned usage is visible; they never count against capacity.
  Device* book_dev = dev ? dev : device(0);
  if (!book_reserve(book_dev, kind, size)) {
    FG_USDT_ALLOC(ord, 0, size, static_cast<int>(kind), kUsdtOutOfMemory, static_cast<int>(api));
    return Status::OutOfMemory;
  }
  Allocation a;
  a.size = size;
  a.api = api;
  a.flags = flags;
  a.ctx = on_device ? ctx : nullptr;
  a.pool = pool;
  Arena* ar = on_device ? arena(dev, kind) : host_arena();
  void* p = ar ? ar->allocate(a) : nullptr;
  if (!p) {
    book_release(book_dev, kind, size);
    FG_USDT_ALLOC(ord, 0, size, static_cast<int>(kind), kUsdtOutOfMemory, static_cast<int>(api));
    return Status::OutOfMemory;
  }
  if (pool) pool_note(pool, static_cast<int64_t>(size));
  FG_USDT_ALLOC(ord, reinterpret_cast<uintptr_t>(p), size, static_cast<int>(kind), 0, static_cast<int>(api));
  *out = p;
  return Status::Ok;
}

Status Backend::mem_free(void* p, unsigned kinds, ApiOrigin api, bool ordered) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  Arena* owner = arena_of(b);
  if (owner && !ordered && queued_work_.load(std::memory_order_acquire) != 0) {
    if (auto a = owner->find_base(b); a && a->ctx && ctx_valid(a->ctx)) ctx_sync(a->ctx);
  }
  Allocation gone;
  if (!owner || !owner->erase(b, kinds, &gone)) {  // unknown, interior, already freed or of another kind
    FG_USDT_FREE(-1, b, 0, -1, kUsdtInvalidValue, static_cast<int>(api));
    return Status::InvalidPointer;
  }
  give_back(gone);
  if (!announced_at_exit(b))
    FG_USDT_FREE(gone.device, b, gone.size, static_cast<int>(gone.kind), 0, static_cast<int>(api));
  return Status::Ok;
}

bool Backend::forget_announced(uintptr_t base) noexcept {
  std::lock_guard lock(exit_mu_);
  return exit_announced_.erase(base) != 0;
}

std::optional<Allocation> Backend::mem_find(const void* p) noexcept {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  if (!u) return std::nullopt;
  try {
    if (Arena* owner = arena_of(u)) {
      uintptr_t base = owner->block_base(u);
      if (!base) return std::nullopt;
      auto a = owner->find_base(base);
      if (a && u < a->base + a->size) return a;
      return std::nullopt;
    }
    {
      std::lock_guard lock(mu_);
      auto it = registered_.upper_bound(u);
      if (it != registered_.begin()) {
        --it;
        if (u < it->second.base + it->second.size) return it->second;
      }
    }
    if (auto find = range_find_.load(std::memory_order_acquire)) {
      Allocation a;
      if (find(p, &a)) return a;
    }
  } catch (...) {
  }
  return std::nullopt;
}

Status Backend::host_register(void* p, size_t size, unsigned flags) {
  if (!p || size == 0) return Status::InvalidValue;
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(mu_);
  auto it = registered_.lower_bound(b);
  if (it != registered_.end() && it->first < b + size) return Status::AlreadyMapped;
  if (it != registered_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.base + prev->second.size > b) return Status::AlreadyMapped;
  }
  Allocation a;
  a.base = b;
  a.size = size;
  a.kind = MemKind::Registered;
  a.flags = flags;
  a.device = -1;
  registered_.emplace(b, a);
  return Status::Ok;
}

Status Backend::host_unregister(void* p) {
  std::lock_guard lock(mu_);
  auto it = registered_.find(reinterpret_cast<uintptr_t>(p));
  if (it == registered_.end() || it->second.kind != MemKind::Registered) return Status::InvalidPointer;
  registered_.erase(it);
  return Status::Ok;
}

bool Backend::is_device_range(const void* p, size_t n) noexcept {
  auto a = mem_find(p);
  if (!a) return false;
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  return u + n <= a->base + a->size;
}

// A range that starts in an allocation and runs past its end is the bug the real driver
// reports as an invalid argument.
bool Backend::range_ok(const void* p, size_t n, bool write) noexcept {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  if (!u || (n && u + (n - 1) < u)) return false;
  if (n == 0) return true;
  if (auto check = range_check_.load(std::memory_order_acquire)) {
    switch (check(p, n, write)) {
      case RangeCheck::Ok: return true;
      case RangeCheck::Bad: return false;
      case RangeCheck::NotMine: break;
    }
  }
  auto a = mem_find(p);
  if (!a) return !mem_find(reinterpret_cast<const void*>(u + n - 1));
  return u + n <= a->base + a->size;
}

Status Backend::copy(void* dst, const void* src, size_t n) noexcept {
  if (n == 0) return Status::Ok;
  if (!range_ok(dst, n, true) || !range_ok(src, n, false)) return Status::InvalidValue;
  std::memmove(dst, src, n);
  return Status::Ok;
}

Status Backend::copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                        size_t height) noexcept {
  if (width == 0 || height == 0) return Status::Ok;
  if (width > dpitch || width > spitch) return Status::InvalidValue;
  size_t dspan = 0, sspan = 0;
  if (!span_2d(dpitch, width, height, &dspan) || !span_2d(spitch, width, height, &sspan) ||
      !range_ok(dst, dspan, true) || !range_ok(src, sspan, false))
    return Status::InvalidValue;
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  for (size_t r = 0; r < height; ++r) std::memmove(d + r * dpitch, s + r * spitch, width);
  return Status::Ok;
}

Status Backend::set(void* dst, int value, size_t n) noexcept {
  if (n == 0) return Status::Ok;
  if (!range_ok(dst, n, true)) return Status::InvalidValue;
  std::memset(dst, value, n);
  return Status::Ok;
}

Status Backend::set_pattern(void* dst, const void* pattern, size_t elem, size_t count) noexcept {
  if (count == 0) return Status::Ok;
  if (reinterpret_cast<uintptr_t>(dst) % elem != 0) return Status::InvalidValue;
  size_t bytes = 0;
  if (__builtin_mul_overflow(elem, count, &bytes) || !range_ok(dst, bytes, true)) return Status::InvalidValue;
  auto* d = static_cast<char*>(dst);
  for (size_t i = 0; i < count; ++i) std::memcpy(d + i * elem, pattern, elem);
  return Status::Ok;
}

Status Backend::set_2d(void* dst, size_t pitch, const void* pattern, size_t elem, size_t width_elems,
                       size_t height) noexcept {
  if (width_elems == 0 || height == 0) return Status::Ok;
  size_t width = 0, span = 0;
  if (__builtin_mul_overflow(width_elems, elem, &width) || width > pitch) return Status::InvalidValue;
  if (!span_2d(pitch, width, height, &span) || !range_ok(dst, span, true)) return Status::InvalidValue;
  auto* d = static_cast<char*>(dst);
  for (size_t r = 0; r < height; ++r)
    for (size_t i = 0; i < width_elems; ++i) std::memcpy(d + r * pitch + i * elem, pattern, elem);
  return Status::Ok;
}

void Backend::mem_info(Device* dev, uint64_t* free_bytes, uint64_t* total_bytes) noexcept {
  ledger_->reap_dead();
  const uint64_t total = ledger_->total(dev->ledger_index);
  const uint64_t used = std::min(ledger_->used(dev->ledger_index), total);
  if (free_bytes) *free_bytes = total - used;
  if (total_bytes) *total_bytes = total;
}

// ---- IPC -------------------------------------------------------------------------------------
namespace {
constexpr uint32_t kIpcMagic = 0x46474950;  // "FGIP"
struct IpcHandle {
  uint32_t magic;
  int32_t pid;
  uint64_t start_time;
  int32_t fd;
  int32_t device;
  uint64_t offset;
  uint64_t size;
  uint64_t base;      // exporter's address, so a process opening its own handle gets it back
  uint8_t pad[16];
};
static_assert(sizeof(IpcHandle) == 64);
}  // namespace

Status Backend::ipc_export(const void* p, unsigned char handle[64]) {
  if (!handle) return Status::InvalidValue;
  auto a = mem_find(p);
  if (!a || a->kind != MemKind::Device || !a->arena) return Status::InvalidValue;
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.pid = ::getpid();
  h.start_time = ledger::process_start_time(h.pid);
  h.fd = a->arena->memfd();
  h.device = a->device;
  h.offset = a->base - a->arena->begin();
  h.size = a->size;
  h.base = a->base;
  std::memcpy(handle, &h, sizeof h);
  return Status::Ok;
}

Status Backend::ipc_open(const unsigned char handle[64], void** out) {
  if (!handle || !out) return Status::InvalidValue;
  IpcHandle h;
  std::memcpy(&h, handle, sizeof h);
  if (h.magic != kIpcMagic || h.size == 0) return Status::InvalidValue;
  if (h.pid == ::getpid()) return Status::InvalidContext;  // as real: a process cannot open its own handle
  if (ledger::process_start_time(h.pid) != h.start_time) return Status::InvalidValue;  // exporter gone
  int fd = open_peer_fd(h.pid, h.start_time, h.fd);
  if (fd < 0) {
    FG_LOG(Warn, Core, "IPC handle of process %d: cannot open its device memory (%s)", h.pid, std::strerror(errno));
    return Status::InvalidValue;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint64_t off = h.offset / static_cast<uint64_t>(page) * static_cast<uint64_t>(page);
  const uint64_t len = h.offset + h.size - off;
  void* m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(off));
  ::close(fd);
  if (m == MAP_FAILED) return Status::OutOfMemory;
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(m) + (h.offset - off);
  a.size = h.size;
  a.span = len;
  a.kind = MemKind::IpcMapped;
  a.device = h.device < device_count() ? h.device : 0;
  std::lock_guard lock(mu_);
  registered_.emplace(a.base, a);
  *out = reinterpret_cast<void*>(a.base);
  return Status::Ok;
}

Status Backend::ipc_close(void* p) {
  std::lock_guard lock(mu_);
  auto it = registered_.find(reinterpret_cast<uintptr_t>(p));
  if (it == registered_.end() || it->second.kind != MemKind::IpcMapped) return Status::InvalidValue;
  const long page = ::sysconf(_SC_PAGESIZE);
  const uintptr_t map_base = it->second.base / static_cast<uintptr_t>(page) * static_cast<uintptr_t>(page);
  ::munmap(reinterpret_cast<void*>(map_base), it->second.span);
  registered_.erase(it);
  return Status::Ok;
}

// ---- pools ----------------------------------------------------------------------------------------
Status Backend::pool_create(Device* dev, MemPool** out) {
  if (!dev) return Status::InvalidDevice;
  if (!out) return Status::InvalidValue;
  auto* p = new MemPool;
  p->id = next_id_++;
  p->dev = dev;
  std::lock_guard lock(mu_);
  pools_.insert(p);
  pools_by_id_[p->id] = p;
  *out = p;
  return Status::Ok;
}

MemPool* Backend::pool_by_id(uint64_t id) noexcept {
  std::lock_guard lock(mu_);
  auto it = pools_by_id_.find(id);
  return it == pools_by_id_.end() ? nullptr : it->second;
}

// The driver's rules: what is freed stays reserved up to the pool's release threshold.
void Backend::pool_note(uint64_t id, int64_t delta) noexcept {
  std::lock_guard lock(mu_);  // keeps the pool alive (pool_destroy takes it too)
  auto it = pools_by_id_.find(id);
  if (it == pools_by_id_.end()) return;
  MemPool* p = it->second;
  std::lock_guard l2(p->mu);
  if (delta >= 0) {
    p->used_current += static_cast<uint64_t>(delta);
    p->used_high = std::max(p->used_high, p->used_current);
    p->reserved_current = std::max(p->reserved_current, p->used_current);
    p->reserved_high = std::max(p->reserved_high, p->reserved_current);
  } else {
    p->used_current -= std::min(p->used_current, static_cast<uint64_t>(-delta));
    p->reserved_current = std::max(p->used_current, std::min(p->reserved_current, p->release_threshold));
  }
}

Status Backend::pool_destroy(MemPool* p) {
  std::lock_guard lock(mu_);
  if (!p || !pools_.count(p) || p->is_default) return Status::InvalidValue;
  pools_.erase(p);
  pools_by_id_.erase(p->id);
  if (p->dev->current_pool.load() == p) p->dev->current_pool.store(p->dev->default_pool);
  delete p;
  return Status::Ok;
}

bool Backend::pool_valid(const MemPool* p) noexcept {
  std::lock_guard lock(mu_);
  return p && pools_.count(p);
}

}  // namespace fg
