// SPDX-License-Identifier: Apache-2.0
// Contexts: creation and destruction, the thread's context stack, primary contexts, limits,
// context-local storage, and the runtime's current device.
#include "core/backend.h"

#include "core/arrays.h"
#include "core/textures.h"
#include "core/usdt.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace fg {

FG_TLS constinit thread_local CtxCache t_ctx_cache;

namespace {

FG_TLS thread_local ThreadState t_state;

// After every change to this thread's context stack.
void sync_current() noexcept {
  const auto& st = t_state.ctx_stack;
  t_ctx_cache.current = st.empty() ? nullptr : st.back();
}

void hold(Context* ctx) noexcept { ctx->refs.fetch_add(1, std::memory_order_relaxed); }

// Drops one reference. A context's last reference goes when it is destroyed and off every
// stack; it is freed after the kRecent destroyed before it, so that a call that looked up
// its handle on another thread just before the destroy still reads a context (marked
// inactive), not freed memory. The quarantine is a fixed size: nothing grows per cycle.
void release(Context* ctx) noexcept {
  if (ctx->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  constexpr size_t kRecent = 64;
  static std::mutex mu;
  static Context* recent[kRecent] = {};
  static size_t next = 0;
  Context* evicted = nullptr;
  {
    std::lock_guard lock(mu);
    evicted = std::exchange(recent[next], ctx);
    next = (next + 1) % kRecent;
  }
  delete evicted;
}

// The stack entries a thread drops (pop, replace, erase) release their references.
void push_entry(Context* ctx) {
  hold(ctx);
  t_state.ctx_stack.push_back(ctx);
}
void set_top(Context* ctx) {
  auto& st = t_state.ctx_stack;
  hold(ctx);
  if (st.empty()) {
    st.push_back(ctx);
  } else {
    release(st.back());
    st.back() = ctx;
  }
}

}  // namespace

ThreadState& thread_state() noexcept { return t_state; }
// NVIDIA's libraries call the driver from their exit handlers, after the main thread's
// thread_local objects are gone: the thread then has no current context. (t_ctx_cache is a
// separate trivial object: stores into a dying object's own members are dead to the compiler.)
ThreadState::~ThreadState() {
  t_ctx_cache.current = nullptr;
  for (Context* c : ctx_stack) release(c);
}

// The parent's other threads are gone in the child; their references with them (the
// child's contexts are reset wholesale by Backend::after_fork_child).
void forget_thread_contexts() noexcept {
  t_state.ctx_stack.clear();
  sync_current();
}

Context* Backend::context_of_handle_slow(const void* h) noexcept {
  if (!h) return nullptr;
  std::lock_guard lock(mu_);
  return find_handle(context_handles_, h);
}

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

static void announce_switch(Context* ctx) { FG_USDT_CTX_SWITCH(ctx ? ctx->dev->ordinal : -1, ctx ? ctx->handle : 0); }

Status Backend::ctx_create(Device* dev, unsigned flags, Context** out) {
  if (!dev) return Status::InvalidDevice;
  if (!out) return Status::InvalidValue;
  auto* ctx = new Context;
  ctx->dev = dev;
  ctx->flags = flags;
  ctx->id = next_id_++;
  ctx->handle = new_handle(HandleKind::Context);
  reset_state(ctx);
  {
    std::lock_guard lock(mu_);
    contexts_.insert(ctx);
    context_handles_.emplace(ctx->handle, ctx);
  }
  push_entry(ctx);
  sync_current();
  announce_switch(ctx);
  *out = ctx;
  return Status::Ok;
}

void Backend::implicit_free_ctx(Context* ctx) {
  run_local_dtors(ctx);
  // Everything the context still holds is freed, as destroying a real context does; its
  // CUDA arrays' bytes are among its allocations, and its texture and surface objects go.
  textures::forget_context(ctx);
  arrays::forget_context(ctx);
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
  for (Stream* s : streams) free_stream(s);  // the default streams too
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
  // Taking the handle out of the table is the claim: of threads destroying the same context
  // at once, exactly one proceeds and the others are told it is already gone.
  {
    std::lock_guard lock(mu_);
    if (context_handles_.erase(ctx->handle) == 0) return Status::InvalidContext;
  }
  retire_ctx(ctx);
  // Remove it from this thread's stack (other threads' stacks keep a dead handle, which
  // every call rejects as destroyed, as with the real driver).
  auto& st = t_state.ctx_stack;
  const bool was_current = !st.empty() && st.back() == ctx;
  const size_t entries = std::erase(st, ctx);
  sync_current();
  if (was_current) announce_switch(current_ctx());
  for (size_t i = 0; i < entries; ++i) release(ctx);
  release(ctx);  // the registry's reference
  return Status::Ok;
}

void Backend::retire_ctx(Context* ctx) {
  ctx_sync(ctx);
  implicit_free_ctx(ctx);
  ctx->active.store(false, std::memory_order_release);
  std::lock_guard lock(mu_);
  contexts_.erase(ctx);
  ctx_generation_.fetch_add(1, std::memory_order_acq_rel);
}

Status Backend::set_current(Context* ctx) {
  auto& st = t_state.ctx_stack;
  if (!ctx) {
    if (!st.empty()) {
      release(st.back());
      st.pop_back();
    }
  } else {
    // A primary context may be made current before it is retained (it is then inactive
    // until the retain, and calls that need a context say it is destroyed).
    if (!ctx_valid(ctx) && !is_primary_handle(ctx)) return Status::InvalidContext;
    set_top(ctx);
  }
  sync_current();
  announce_switch(current_ctx());
  return Status::Ok;
}

Status Backend::push_current(Context* ctx) {
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  push_entry(ctx);
  sync_current();
  announce_switch(ctx);
  return Status::Ok;
}

Status Backend::pop_current(void** out_handle) {
  auto& st = t_state.ctx_stack;
  if (st.empty()) return Status::InvalidContext;
  Context* top = st.back();
  st.pop_back();
  sync_current();
  if (out_handle) *out_handle = handle_of(top);
  release(top);
  announce_switch(current_ctx());
  return Status::Ok;
}

// A context's state as the real driver creates it: default limits, caches, no peers. The
// defaults are those a real H200 reports with driver 580 (tests/clients/golden/h200.facts):
// the printf FIFO is 64 KiB per SM and the persisting-L2 set-aside 30 % of its maximum.
void Backend::reset_state(Context* ctx) {
  std::lock_guard lock(ctx->mu);
  const auto& a = ctx->dev->model.attributes;
  const size_t defaults[] = {
      1024,                                                                 // stack size per thread
      static_cast<size_t>(ctx->dev->model.sm_count) * (64 << 10),           // printf FIFO
      8 << 20,                                                              // malloc heap
      0,                                                                    // device runtime sync depth: unsupported
      2048,                                                                 // device runtime pending launch count
      64,                                                                   // max L2 fetch granularity
      static_cast<size_t>(a[attr::MAX_PERSISTING_L2_CACHE_SIZE]) * 3 / 10,  // persisting L2 cache size
  };
  std::fill(std::begin(ctx->limits), std::end(ctx->limits), 0);
  std::copy(std::begin(defaults), std::end(defaults), ctx->limits);
  ctx->cache_config = 0;
  ctx->shmem_config = 0;
  ctx->peers.clear();
}

namespace {
// CUDA 13 dropped the device runtime's synchronization depth (CUDA dynamic parallelism v1),
// and the CIG shared-memory fallback exists only in CIG contexts: both are
// CUDA_ERROR_UNSUPPORTED_LIMIT on a real driver, for get and set alike.
constexpr bool unsupported_limit(int limit) { return limit == 3 || limit == 9; }
}  // namespace

Status Backend::ctx_set_limit(Context* ctx, int limit, size_t value) {
  if (unsupported_limit(limit)) return Status::NotSupported;
  switch (limit) {
    case 0: {  // stack size per thread: kept in 16-byte units
      // The driver reserves the stack for every thread the device can hold at once; one that
      // does not fit in the device's memory is CUDA_ERROR_OUT_OF_MEMORY on real drivers
      // (SourceryTools/nvptx-tools issue 8), never a size that wraps when rounded.
      const auto& a = ctx->dev->model.attributes;
      const uint64_t threads = static_cast<uint64_t>(std::max(a[attr::MULTIPROCESSOR_COUNT], 1)) *
                               static_cast<uint64_t>(std::max(a[attr::MAX_THREADS_PER_MULTIPROCESSOR], 1));
      if (value > ctx->dev->model.total_memory / threads) return Status::OutOfMemory;
      value = (value + 15) / 16 * 16;
      break;
    }
    case 5:  // max L2 fetch granularity: 0..128 bytes
      if (value > 128) return Status::InvalidValue;
      break;
    case 6:  // persisting L2 cache size: at most the device's maximum
      value = std::min(value, static_cast<size_t>(ctx->dev->model.attributes[attr::MAX_PERSISTING_L2_CACHE_SIZE]));
      break;
    case 7:  // shared memory size, CIG enabled: query-only
    case 8: return Status::InvalidValue;
    default:
      if (limit < 0 || limit > 9) return Status::InvalidValue;
  }
  std::lock_guard lock(ctx->mu);
  ctx->limits[limit] = value;
  return Status::Ok;
}

Status Backend::ctx_limit(Context* ctx, int limit, size_t* value) {
  if (unsupported_limit(limit)) return Status::NotSupported;
  if (limit == 7) {
    *value = static_cast<size_t>(ctx->dev->model.attributes[attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN]);
  } else if (limit < 0 || limit > 6) {
    *value = 0;  // CIG enabled: never a CIG context
  } else {
    std::lock_guard lock(ctx->mu);
    *value = ctx->limits[limit];
  }
  return Status::Ok;
}

// The device's primary context, created on first use; dev->primary_mu held.
Context* Backend::make_primary_locked(Device* dev) {
  if (!dev->primary) {
    auto* ctx = new Context;
    ctx->dev = dev;
    ctx->primary = true;
    ctx->active.store(false, std::memory_order_relaxed);
    ctx->id = next_id_++;
    ctx->handle = new_handle(HandleKind::Context);
    {
      std::lock_guard lock(mu_);
      context_handles_.emplace(ctx->handle, ctx);
    }
    dev->primary = ctx;
  }
  return dev->primary;
}

Context* Backend::primary_handle(Device* dev) {
  if (!dev) return nullptr;
  std::lock_guard lock(dev->primary_mu);
  return make_primary_locked(dev);
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
    if (l.dtor) l.dtor(handle_of(ctx), l.key, l.value);
}

Status Backend::primary_retain(Device* dev, Context** out) {
  if (!dev) return Status::InvalidDevice;
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(dev->primary_mu);
  Context* ctx = make_primary_locked(dev);
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
  if (to_free) retire_ctx(to_free);
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
  retire_ctx(ctx);
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
  set_top(ctx);
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

}  // namespace fg
