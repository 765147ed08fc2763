// SPDX-License-Identifier: Apache-2.0
// Backend: streams, events, modules, kernels and launches.
#include "core/backend.h"
#include "core/device_model.h"
#include "core/usdt.h"

#include "common/coverage.h"
#include "common/log.h"
#include "core/event_ipc.h"
#include "core/fatbin.h"
#include "core/graph.h"
#include "kernels/ptx.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

namespace fg {

// ---- streams ------------------------------------------------------------------------------------
Status Backend::stream_create(Context* ctx, unsigned flags, int priority, Stream** out) {
  if (!out) return Status::InvalidValue;
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  auto* s = new Stream;
  s->ctx = ctx;
  s->flags = flags;
  s->priority = std::clamp(priority, -5, 0);  // greatest (-5) .. least (0), as an A100 reports
  s->id = next_id_++;
  return publish(streams_, s, out);
}

bool Backend::stream_valid(const Stream* s) noexcept { return listed(streams_, s); }

Status Backend::stream_destroy(Stream* s) {
  if (!stream_valid(s) || s->is_default) return Status::InvalidHandle;
  free_stream(s);
  return Status::Ok;
}

void Backend::free_stream(Stream* s) {
  if (graph::active()) graph::stream_destroyed(s);
  stream_sync(s);  // pending work completes first, as the real destroy lets it
  {
    std::lock_guard lock(mu_);
    streams_.erase(s);
  }
  std::thread* w = nullptr;
  {
    std::lock_guard lock(s->mu);
    w = s->worker;
    s->worker = nullptr;
    s->worker_running = false;
    s->cv.notify_all();
  }
  if (w) {
    w->join();
    delete w;
  }
  s->magic = 0;
  delete s;
}

Status Backend::stream_resolve(void* handle, Context* ctx, Stream** out, bool per_thread_default) {
  const uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  if (h == 0 || h == 1 || h == 2) {
    // Default streams: one legacy stream object per context and one per-thread stream per
    // thread, created on first use.
    if (!ctx_valid(ctx)) return Status::InvalidContext;
    const bool per_thread = h == 2 || (h == 0 && per_thread_default);
    // Keyed by context handle (never reused); entries of destroyed contexts, whose streams
    // went with them, are dropped whenever a default stream is made.
    static thread_local std::unordered_map<uintptr_t, Stream*> t_ptds;
    static std::unordered_map<uintptr_t, Stream*> legacy;
    std::lock_guard lock(mu_);
    auto& defaults = per_thread ? t_ptds : legacy;
    // An entry holds while its stream is listed and still that context's (a freed stream's
    // address may be a later stream's).
    const auto holds = [this](uintptr_t ctx_handle, const Stream* s) {
      return streams_.count(s) && s->ctx->handle == ctx_handle;
    };
    auto it = defaults.find(ctx->handle);
    if (it == defaults.end() || !holds(it->first, it->second)) {
      std::erase_if(defaults, [&](const auto& e) { return !holds(e.first, e.second); });
      Stream*& slot = defaults[ctx->handle];
      slot = new Stream;
      slot->ctx = ctx;
      slot->is_default = true;
      slot->per_thread = per_thread;
      slot->id = per_thread ? next_id_++ : 0;
      streams_.insert(slot);
      *out = slot;
      return Status::Ok;
    }
    *out = it->second;
    return Status::Ok;
  }
  auto* s = static_cast<Stream*>(handle);
  if (!stream_valid(s)) return Status::InvalidHandle;
  *out = s;
  return Status::Ok;
}

namespace {
std::atomic<uint64_t>* g_queued = nullptr;  // Backend::queued_work_, set on first stream use

void worker_loop(Stream* s) {
  std::unique_lock lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [s] { return !s->queue.empty() || !s->worker_running; });
    if (s->queue.empty()) return;
    Stream::Work work = std::move(s->queue.front());
    lock.unlock();
    try {
      if (work.run) work.run();
    } catch (...) {
      FG_LOG(Error, Core, "stream work threw an exception; continuing");
    }
    lock.lock();
    s->queue.pop_front();  // popped after running: an idle check sees work until it is done
    g_queued->fetch_sub(1, std::memory_order_release);
    s->cv.notify_all();
    if (work.done) {
      lock.unlock();
      work.done();
      lock.lock();
    }
  }
}
}  // namespace

Status Backend::stream_enqueue(Stream* s, std::function<void()> fn, std::function<void()> done) {
  // A context whose kernel failed takes no more work (its sticky error).
  if (Status st = sticky_fault(s->ctx); st != Status::Ok) return st;
  // Stream capture (core/graph.h): on a capturing stream the work becomes a graph node.
  if (Status st = Status::Ok; graph::intercept_work(s, fn, &st)) return st;
  std::unique_lock lock(s->mu);
  if (s->queue.empty()) {
    lock.unlock();
    fn();  // nothing ahead of it: run now, in order
    if (done) done();
    return Status::Ok;
  }
  queued_work_.fetch_add(1, std::memory_order_relaxed);
  s->queue.push_back({std::move(fn), std::move(done)});
  s->cv.notify_all();
  return Status::Ok;
}

// Work that may block (host functions, waits) always goes through the worker, so the
// caller never blocks on it.
static Status enqueue_async(std::atomic<uint64_t>& queued, Stream* s, std::function<void()> fn) {
  g_queued = &queued;
  std::lock_guard lock(s->mu);
  queued.fetch_add(1, std::memory_order_relaxed);
  s->queue.push_back({std::move(fn), {}});
  if (!s->worker) {
    s->worker_running = true;
    s->worker = new std::thread(worker_loop, s);
  }
  s->cv.notify_all();
  return Status::Ok;
}

// Synchronizing calls flush device printf (as CUDA does there) and report the context's
// sticky kernel failure.
Status Backend::stream_sync(Stream* s) {
  {
    std::unique_lock lock(s->mu);
    s->cv.wait(lock, [s] { return s->queue.empty(); });
  }
  kernels::flush_printf();
  return sticky_fault(s->ctx);
}

bool Backend::stream_idle(Stream* s) noexcept {
  std::lock_guard lock(s->mu);
  return s->queue.empty();
}

Status Backend::ctx_sync(Context* ctx) {
  if (queued_work_.load(std::memory_order_acquire) != 0) {  // else nothing is queued anywhere
    std::vector<Stream*> all;
    {
      std::lock_guard lock(mu_);
      for (const Stream* s : streams_)
        if (s->ctx == ctx) all.push_back(const_cast<Stream*>(s));
    }
    for (Stream* s : all) stream_sync(s);
  }
  kernels::flush_printf();
  return sticky_fault(ctx);
}

// ---- events ------------------------------------------------------------------------------------
Status Backend::event_create(Context* ctx, unsigned flags, Event** out) {
  if (!out) return Status::InvalidValue;
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  auto* e = new Event;
  e->ctx = ctx;
  e->flags = flags;
  if (flags & kEventInterprocess) {
    if (Status st = event_ipc::create(&e->shared); st != Status::Ok) {
      delete e;
      return st;
    }
  }
  return publish(events_, e, out);
}

Status Backend::event_ipc_handle(Event* e, unsigned char handle[64]) {
  if (!handle) return Status::InvalidValue;
  if (!e->shared) return Status::InvalidHandle;
  event_ipc::handle_of(e->shared.get(), handle);
  return Status::Ok;
}

Status Backend::event_ipc_open(Context* ctx, const unsigned char handle[64], Event** out) {
  if (!handle || !out) return Status::InvalidValue;
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  std::shared_ptr<event_ipc::Shared> shared;
  if (Status st = event_ipc::open(handle, &shared); st != Status::Ok) return st;
  auto* e = new Event;
  e->ctx = ctx;
  e->flags = kEventDisableTiming | kEventInterprocess;  // "behaves like a locally created event
                                                        // with the disable-timing flag"
  e->shared = std::move(shared);
  return publish(events_, e, out);
}

bool Backend::event_valid(const Event* e) noexcept { return listed(events_, e); }

Status Backend::event_destroy(Event* e) {
  {
    std::lock_guard lock(mu_);
    if (!e || !events_.count(e)) return Status::InvalidHandle;
    events_.erase(e);
  }
  // A record still queued on a stream refers to the event: let it land first.
  std::unique_lock lock(e->mu);
  e->cv.wait(lock, [e] { return e->pending == 0; });
  lock.unlock();
  e->shared.reset();
  e->magic = 0;
  delete e;
  return Status::Ok;
}

Status Backend::event_record(Event* e, Stream* s) {
  // Stream capture (core/graph.h): in a capturing stream the event marks the capture's
  // current nodes instead of being queued.
  if (Status st = Status::Ok; graph::intercept_record(e, s, &st)) return st;
  {
    std::lock_guard lock(e->mu);
    ++e->pending;
  }
  const uint32_t seq = e->shared ? event_ipc::record_queued(e->shared.get()) : 0;
  // The time is taken where the record is reached; the event completes once the record
  // has left the queue, so a waiter that wakes sees the stream idle (cudaStreamQuery).
  return stream_enqueue(
      s,
      [e] {
        std::lock_guard lock(e->mu);
        e->when = std::chrono::steady_clock::now();
      },
      [e, seq] {
        std::lock_guard lock(e->mu);
        e->recorded = true;
        --e->pending;
        e->cv.notify_all();
        if (e->shared) event_ipc::record_reached(e->shared.get(), seq);
      });
}

// An interprocess event's shared sequence numbers count this process's own records too
// (record_queued goes with ++pending), so they alone decide for such events.
Status Backend::event_query(Event* e) noexcept {
  if (e->shared) {
    event_ipc::Shared* sh = e->shared.get();
    return event_ipc::reached(sh, event_ipc::latest(sh)) ? Status::Ok : Status::NotReady;
  }
  std::lock_guard lock(e->mu);
  return e->pending ? Status::NotReady : Status::Ok;
}

Status Backend::event_sync(Event* e) {
  if (e->shared) {  // the records made so far, not those made while it waits
    event_ipc::wait(e->shared.get(), event_ipc::latest(e->shared.get()));
    return Status::Ok;
  }
  {
    std::unique_lock lock(e->mu);
    e->cv.wait(lock, [e] { return e->pending == 0; });
  }
  kernels::flush_printf();
  return sticky_fault(e->ctx);
}

Status Backend::event_elapsed(Event* start, Event* end, float* ms) {
  if (!ms) return Status::InvalidValue;
  // Read each event under its own lock: start and end may be the same event.
  auto read = [](Event* e, std::chrono::steady_clock::time_point* t) {
    std::lock_guard lock(e->mu);
    if (!e->recorded) return Status::InvalidHandle;
    if (e->pending) return Status::NotReady;
    *t = e->when;
    return Status::Ok;
  };
  std::chrono::steady_clock::time_point a, b;
  if (Status s = read(start, &a); s != Status::Ok) return s;
  if (Status s = read(end, &b); s != Status::Ok) return s;
  *ms = std::chrono::duration<float, std::milli>(b - a).count();
  return Status::Ok;
}

Status Backend::stream_wait_event(Stream* s, Event* e) {
  // Stream capture (core/graph.h): waiting on a captured event joins the capture.
  if (Status st = Status::Ok; graph::intercept_wait(s, e, &st)) return st;
  if (e->shared) {
    const uint32_t seq = event_ipc::latest(e->shared.get());  // the latest record now
    if (event_ipc::reached(e->shared.get(), seq)) return Status::Ok;
    // The queued wait keeps the shared state alive should the event be destroyed first.
    return enqueue_async(queued_work_, s, [shared = e->shared, seq] { event_ipc::wait(shared.get(), seq); });
  }
  {
    std::lock_guard lock(e->mu);
    if (e->pending == 0) return Status::Ok;  // already complete: nothing to wait for
  }
  return enqueue_async(queued_work_, s, [e] {
    std::unique_lock lock(e->mu);
    e->cv.wait(lock, [e] { return e->pending == 0; });
  });
}

// Host functions run on the stream's worker thread, in order with the stream's other work.
Status Backend::stream_host_func(Stream* s, std::function<void()> fn) {
  // Stream capture (core/graph.h): on a capturing stream the function becomes a host node.
  if (Status st = Status::Ok; graph::intercept_host(s, fn, &st)) return st;
  return enqueue_async(queued_work_, s, std::move(fn));
}

// ---- modules ------------------------------------------------------------------------------------

Module* Backend::register_fatbinary(const void* fatbin_wrapper) {
  auto* m = new Module;
  m->origin = "fatbinary";
  m->image = fatbin_wrapper;  // lives in the program's data for its whole lifetime
  std::lock_guard lock(mu_);
  add_module_locked(m);
  return m;
}

void Backend::unregister_fatbinary(Module* m) {
  std::lock_guard lock(mu_);
  if (!modules_.count(m)) return;
  for (auto& [name, f] : m->functions)
    if (f->host_fun) host_functions_.erase(f->host_fun);
  for (auto& [name, sym] : m->globals)
    if (sym.host_var) host_symbols_.erase(sym.host_var);
  drop_module_locked(m);
  // The module and its symbol storage stay, owned by the backend: this runs at exit, and
  // variables may still be read during static destruction.
  unregistered_.push_back(m);
}

void Backend::register_function(Module* m, const void* host_fun, const char* device_name) {
  if (!m || !device_name) return;
  auto f = std::make_unique<Function>();
  f->module = m;
  f->name = device_name;
  f->host_fun = host_fun;
  Function* raw = f.get();
  std::lock_guard lock(mu_);
  if (auto old = m->functions.find(device_name); old != m->functions.end()) drop_function_locked(old->second.get());
  m->functions[device_name] = std::move(f);
  add_function_locked(raw);
  if (host_fun) host_functions_[host_fun] = raw;
}

void Backend::register_var(Module* m, void* host_var, const char* name, size_t size, bool constant, bool managed,
                           void** managed_ptr_out) {
  if (!m || !name) return;
  Symbol sym;
  sym.name = name;
  sym.host_var = host_var;
  sym.size = size;
  sym.constant = constant;
  sym.managed = managed;
  // Each variable gets its own storage (variable_storage: large ones are booked as device
  // memory); null when the device has no room, so the symbol is then unknown. Its initial value is in the fat
  // binary's cubin (nvcc's host shadow has none); failing that, the host shadow's bytes.
  void* storage = variable_storage(size, nullptr, managed, 0);
  if (storage && size && !fatbin::initial_value(m->image, name, storage, size) && host_var && !managed)
    std::memcpy(storage, host_var, size);
  sym.dev_ptr = storage;
  if (managed && managed_ptr_out) *managed_ptr_out = storage;
  std::lock_guard lock(mu_);
  auto [it, inserted] = m->globals.insert_or_assign(name, sym);
  if (host_var) host_symbols_[host_var] = &it->second;
}

void* Backend::variable_storage(size_t size, const void* init, bool managed, int ordinal) {
  // A module's variables take device memory, as on a real GPU, in 2 MiB pages: one of 2 MiB
  // or more is booked in the ledger (so cuMemGetInfo and NVML count it), rounded up to
  // whole pages; smaller ones share the pages the context already holds for its modules
  // and move no figure (a real H200 shows the same). Booked, but no allocation: module
  // memory is not part of cudaMalloc's books.
  constexpr uint64_t kPage = 2ull << 20;
  Device* dev = device(ordinal);
  const MemKind kind = managed ? MemKind::Managed : MemKind::Device;
  const uint64_t bytes = size ? size : 1;
  const uint64_t booked = bytes < kPage ? 0 : (bytes + kPage - 1) / kPage * kPage;
  if (booked && !book_reserve(dev, kind, booked)) return nullptr;
  void* storage = std::calloc(1, bytes);
  if (!storage) {
    if (booked) book_release(dev, kind, booked);
    return nullptr;
  }
  if (init && size) std::memcpy(storage, init, size);
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(storage);
  a.size = bytes;
  a.kind = managed ? MemKind::Managed : MemKind::Registered;
  a.device = ordinal;
  std::lock_guard lock(mu_);
  registered_.emplace(a.base, a);
  if (booked) booked_variables_.emplace(a.base, booked);
  return storage;
}

void Backend::variable_release_locked(void* p) {
  if (!p) return;
  const auto base = reinterpret_cast<uintptr_t>(p);
  if (auto it = registered_.find(base); it != registered_.end()) {
    // Booked by this process (a forked child inherits the storage, not the booking).
    if (auto b = booked_variables_.find(base); b != booked_variables_.end()) {
      const Allocation& a = it->second;
      book_release(device(a.device), a.kind == MemKind::Managed ? MemKind::Managed : MemKind::Device, b->second);
      booked_variables_.erase(b);
    }
    registered_.erase(it);
  }
  std::free(p);
}

void Backend::variable_release(void* p) {
  std::lock_guard lock(mu_);
  variable_release_locked(p);
}

Function* Backend::function_by_host(const void* host_fun) noexcept {
  std::lock_guard lock(mu_);
  auto it = host_functions_.find(host_fun);
  return it == host_functions_.end() ? nullptr : it->second;
}

Symbol* Backend::symbol_by_host(const void* host_var) noexcept {
  std::lock_guard lock(mu_);
  auto it = host_symbols_.find(host_var);
  return it == host_symbols_.end() ? nullptr : it->second;
}

Status Backend::module_load(Context* ctx, const void* image, size_t size_hint, Module** out) {
  if (!image || !out) return Status::InvalidValue;
  if (!ctx_valid(ctx)) return Status::InvalidContext;
  auto* m = new Module;
  m->ctx = ctx;
  const auto* bytes = static_cast<const unsigned char*>(image);
  uint32_t magic = 0;
  std::memcpy(&magic, bytes, sizeof magic);
  const int cc = ctx->dev->model.cc_major * 10 + ctx->dev->model.cc_minor;
  fatbin::Code code;
  std::vector<fatbin::Code> units;  // a separately compiled program's PTX, linked as the driver's JIT links it
  if (magic == fatbin::kLinkedMagic) {
    // cuLinkComplete's output of several units: their PTX, linked as an -rdc program's.
    m->origin = "linked image (cuLinkComplete: its units' PTX linked)";
    Status refusal = Status::Ok;
    units = fatbin::linked_units(image, cc, &refusal);
    if (units.empty()) {
      delete m;
      return refusal;
    }
    code = units.front();
  } else if (magic == 0x464C457F || magic == 0xBA55ED50 || magic == 0x466243B1) {
    // The code this device would run: its cubin, or the PTX the driver would compile.
    m->origin = magic == 0x464C457F ? "cubin" : "fatbinary";
    code = fatbin::select_code(image, cc);
    if (code.kind == fatbin::Code::Kind::None && !(units = fatbin::linked_ptx(image, cc)).empty()) {
      m->origin = "fatbinary (-rdc: its translation units' PTX linked)";
      code = units.front();
    }
  } else {
    // PTX text (NUL-terminated, as the API requires); anything else is not an image.
    const char* text = static_cast<const char*>(image);
    const size_t len = size_hint ? size_hint : std::strlen(text);
    if (std::string_view(text, std::min<size_t>(len, 4096)).find(".version") == std::string_view::npos) {
      delete m;
      return Status::InvalidImage;
    }
    m->origin = "ptx";
    code = fatbin::ptx_code(std::string_view(text, len), cc);
  }
  if (code.kind == fatbin::Code::Kind::None) {  // as the driver refuses it (core/fatbin.h)
    delete m;
    return code.refusal;
  }
  if (!units.empty()) {
    m->ptx_arch = code.arch;
    m->program = kernels::program_from_units(units);  // every unit's PTX, linked on first use
  } else if (code.kind == fatbin::Code::Kind::Ptx) {
    m->ptx_arch = code.arch;
    m->program = kernels::program_from_text(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size());
  } else {
    m->program = kernels::program_from_image(image, cc);  // the PTX beside the cubin, if any
  }
  m->entry_names = fatbin::kernels(code);
  m->names_complete = true;
  Status vars_status = Status::Ok;
  std::vector<fatbin::Variable> vars = fatbin::variables(code, ctx->dev->model.total_memory, &vars_status);
  // The other units' variables under the names the link gives them (ptx::link): internal ones
  // renamed apart, an external one once (its first definition; .extern declarations are not
  // variables here). The first unit's internal names stay, as the link keeps them unless another
  // unit defines the same name externally.
  std::set<std::string> external;
  const size_t first_unit_vars = vars.size();
  for (size_t i = 1; i < units.size() && vars_status == Status::Ok; ++i) {
    for (std::string& k : fatbin::kernels(units[i])) m->entry_names.push_back(std::move(k));
    for (fatbin::Variable& v : fatbin::variables(units[i], ctx->dev->model.total_memory, &vars_status)) {
      if (!v.external)
        v.name = ptx::unit_local_name(v.name, i);
      else
        external.insert(v.name);
      vars.push_back(std::move(v));
    }
  }
  if (!units.empty()) {
    for (size_t i = 0; i < first_unit_vars; ++i)
      if (!vars[i].external && external.count(vars[i].name)) vars[i].name = ptx::unit_local_name(vars[i].name, 0);
    // A name defined in several units: the strong definition, else the first weak one.
    std::map<std::string, size_t> chosen;
    for (size_t i = 0; i < vars.size(); ++i) {
      auto [it, fresh] = chosen.try_emplace(vars[i].name, i);
      if (!fresh && vars[it->second].weak && !vars[i].weak) it->second = i;
    }
    std::vector<fatbin::Variable> kept;
    for (size_t i = 0; i < vars.size(); ++i)
      if (chosen[vars[i].name] == i) kept.push_back(std::move(vars[i]));
    vars = std::move(kept);
  }
  if (vars_status != Status::Ok) {
    delete m;
    return vars_status;
  }
  for (fatbin::Variable& v : vars) {
    Symbol sym;
    sym.name = v.name;
    sym.size = v.init.size();
    sym.constant = v.constant;
    sym.managed = v.managed;
    sym.dev_ptr = variable_storage(sym.size, v.init.data(), sym.managed, ctx->dev->ordinal);
    if (!sym.dev_ptr) {  // the device has no room for the module's variables
      for (auto& [name, made] : m->globals) variable_release(made.dev_ptr);
      delete m;
      return Status::OutOfMemory;
    }
    sym.init = std::move(v.init);
    m->globals.insert_or_assign(sym.name, std::move(sym));
  }
  std::lock_guard lock(mu_);
  add_module_locked(m);
  *out = m;
  return Status::Ok;
}

bool Backend::module_valid(const Module* m) noexcept { return listed(modules_, m); }

Status Backend::module_unload(Module* m) {
  // Kernels of the module still queued run first: they read its variables.
  Context* ctx = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!m || !modules_.count(m)) return Status::InvalidHandle;
    ctx = m->ctx;
  }
  if (ctx) (void)ctx_sync(ctx);
  std::lock_guard lock(mu_);
  if (!modules_.count(m)) return Status::InvalidHandle;
  drop_module_locked(m);
  for (auto& [name, sym] : m->globals) variable_release_locked(sym.dev_ptr);
  m->magic = 0;
  delete m;
  return Status::Ok;
}

void Backend::add_module_locked(Module* m) {
  m->handle = new_handle(HandleKind::Module);
  modules_.insert(m);
  module_handles_.emplace(m->handle, m);
}

void Backend::add_function_locked(Function* f) {
  f->handle = new_handle(HandleKind::Function);
  functions_.insert(f);
  function_handles_.emplace(f->handle, f);
}

void Backend::drop_function_locked(const Function* f) {
  functions_.erase(f);
  function_handles_.erase(f->handle);
}

void Backend::drop_module_locked(Module* m) {
  for (auto& [name, f] : m->functions) drop_function_locked(f.get());
  modules_.erase(m);
  module_handles_.erase(m->handle);
}

Module* Backend::module_of_handle(const void* h) noexcept {
  std::lock_guard lock(mu_);
  return find_handle(module_handles_, h);
}

Function* Backend::function_of_handle(const void* h) noexcept {
  std::lock_guard lock(mu_);
  return find_handle(function_handles_, h);
}

bool Backend::function_valid(const Function* f) noexcept { return listed(functions_, f); }

Status Backend::module_get_function(Module* m, const char* name, Function** out) {
  if (!name || !out) return Status::InvalidValue;
  std::lock_guard lock(mu_);
  if (!m || !modules_.count(m)) return Status::InvalidHandle;
  // A module whose code was read knows all its kernels; from an image with no code for
  // this device any name is accepted (the launch is recorded, never executed).
  if (m->names_complete && !m->functions.count(name) &&
      std::find(m->entry_names.begin(), m->entry_names.end(), name) == m->entry_names.end())
    return Status::NotFound;
  *out = function_locked(m, name);
  return Status::Ok;
}

Function* Backend::function_locked(Module* m, const std::string& name) {
  auto it = m->functions.find(name);
  if (it == m->functions.end()) {
    auto f = std::make_unique<Function>();
    f->module = m;
    f->name = name;
    it = m->functions.emplace(name, std::move(f)).first;
    add_function_locked(it->second.get());
  }
  return it->second.get();
}

Status Backend::module_functions(Module* m, std::vector<Function*>* out) {
  std::lock_guard lock(mu_);
  if (!m || !modules_.count(m)) return Status::InvalidHandle;
  out->clear();
  for (const std::string& name : m->entry_names) out->push_back(function_locked(m, name));
  return Status::Ok;
}

Status Backend::module_get_global(Module* m, const char* name, void** dptr, size_t* bytes) {
  if (!name) return Status::InvalidValue;
  std::lock_guard lock(mu_);
  if (!m || !modules_.count(m)) return Status::InvalidHandle;
  auto it = m->globals.find(name);
  if (it == m->globals.end() || !it->second.dev_ptr) return Status::NotFound;
  if (dptr) *dptr = it->second.dev_ptr;
  if (bytes) *bytes = it->second.size;
  return Status::Ok;
}

// ---- launches ------------------------------------------------------------------------------------
namespace {
struct LaunchBook {
  std::mutex mu;
  std::map<std::string, uint64_t> by_name;
};
LaunchBook& launch_book() {
  static auto* b = new LaunchBook;
  return *b;
}
}  // namespace

Status Backend::check_launch(const Function* f, const Device* dev, const LaunchShape& shape) noexcept {
  const auto& a = dev->model.attributes;
  for (int i = 0; i < 3; ++i) {
    if (shape.grid[i] == 0 || shape.block[i] == 0) return Status::InvalidValue;
    if (shape.block[i] > static_cast<unsigned>(a[attr::MAX_BLOCK_DIM_X + i])) return Status::InvalidValue;
    if (shape.grid[i] > static_cast<unsigned>(a[attr::MAX_GRID_DIM_X + i])) return Status::InvalidValue;
  }
  const uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  if (threads > static_cast<uint64_t>(std::min(a[attr::MAX_THREADS_PER_BLOCK], f->max_threads_per_block)))
    return Status::InvalidValue;
  if (shape.shmem > static_cast<size_t>(std::max(f->max_dynamic_shared, 0))) return Status::InvalidValue;
  if (!registers_fit(f, dev, threads)) return Status::LaunchOutOfResources;
  if (shape.cluster[0] || shape.cluster[1] || shape.cluster[2]) {
    if (!a[attr::CLUSTER_LAUNCH]) return Status::NotSupported;
    for (int i = 0; i < 3; ++i)
      if (shape.cluster[i] == 0 || shape.grid[i] % shape.cluster[i] != 0) return Status::InvalidClusterSize;
    if (uint64_t{shape.cluster[0]} * shape.cluster[1] * shape.cluster[2] > 8)  // the portable cluster size
      return Status::InvalidClusterSize;
  }
  if (shape.cooperative) {
    if (!a[attr::COOPERATIVE_LAUNCH]) return Status::NotSupported;
    const uint64_t blocks = uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
    const uint64_t resident = static_cast<uint64_t>(blocks_per_sm(f, dev, static_cast<int>(threads), shape.shmem)) *
                              static_cast<uint64_t>(std::max(a[attr::MULTIPROCESSOR_COUNT], 0));
    if (blocks > resident) return Status::CooperativeLaunchTooLarge;
  }
  return Status::Ok;
}

namespace {
constexpr int kRegisterUnit = 256;  // registers are allocated per warp in units of 256
constexpr size_t kSmemUnit = 128;   // shared memory allocation granularity per block

template <class T>
T round_up(T v, T unit) {
  return (v + unit - 1) / unit * unit;
}
}  // namespace

bool Backend::registers_fit(const Function* f, const Device* dev, uint64_t threads) noexcept {
  const auto& a = dev->model.attributes;
  if (f->num_regs <= 0) return true;
  const uint64_t warp = static_cast<uint64_t>(std::max(1, a[attr::WARP_SIZE]));
  const uint64_t per_warp = static_cast<uint64_t>(round_up(f->num_regs * static_cast<int>(warp), kRegisterUnit));
  return per_warp * ((threads + warp - 1) / warp) <= static_cast<uint64_t>(a[attr::MAX_REGISTERS_PER_BLOCK]);
}

int Backend::blocks_per_sm(const Function* f, const Device* dev, int block, size_t dyn_smem) noexcept {
  const auto& a = dev->model.attributes;
  if (block <= 0 || block > std::min(f->max_threads_per_block, a[attr::MAX_THREADS_PER_BLOCK])) return 0;
  if (dyn_smem > static_cast<size_t>(std::max(f->max_dynamic_shared, 0))) return 0;
  const int warp = std::max(1, a[attr::WARP_SIZE]);
  const int warps = (block + warp - 1) / warp;
  int limit = a[attr::MAX_BLOCKS_PER_MULTIPROCESSOR];
  limit = std::min(limit, a[attr::MAX_THREADS_PER_MULTIPROCESSOR] / warp / warps);
  if (f->num_regs > 0) {
    if (!registers_fit(f, dev, static_cast<uint64_t>(block))) return 0;
    const int regs_per_warp = round_up(f->num_regs * warp, kRegisterUnit);
    limit = std::min(limit, a[attr::MAX_REGISTERS_PER_MULTIPROCESSOR] / regs_per_warp / warps);
  }
  const size_t smem = round_up<size_t>(static_cast<size_t>(f->shared_size_bytes) + dyn_smem +
                                           static_cast<size_t>(a[attr::RESERVED_SHARED_MEMORY_PER_BLOCK]),
                                       kSmemUnit);
  if (smem > 0)
    limit = std::min<int64_t>(
        limit, static_cast<int64_t>(a[attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR]) / static_cast<int64_t>(smem));
  return std::max(limit, 0);
}

Status Backend::available_dynamic_smem(const Function* f, const Device* dev, int blocks, int block,
                                       size_t* out) noexcept {
  const auto& a = dev->model.attributes;
  // Without any dynamic shared memory, can that many blocks be resident at all?
  if (blocks <= 0 || blocks_per_sm(f, dev, block, 0) < blocks) return Status::InvalidValue;
  const size_t per_block = static_cast<size_t>(a[attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR]) /
                           static_cast<size_t>(blocks) / kSmemUnit * kSmemUnit;
  const size_t fixed = static_cast<size_t>(f->shared_size_bytes) +
                       static_cast<size_t>(a[attr::RESERVED_SHARED_MEMORY_PER_BLOCK]);
  *out = std::min(per_block > fixed ? per_block - fixed : 0, static_cast<size_t>(std::max(f->max_dynamic_shared, 0)));
  return Status::Ok;
}

Status Backend::launch(Function* f, const LaunchShape& shape, Stream* s, void* const* args, void* const* extra) {
  if (!f) return Status::InvalidHandle;
  Device* dev = s ? s->ctx->dev : device(0);
  if (Status st = check_launch(f, dev, shape); st != Status::Ok) return st;
  auto params = std::make_shared<std::vector<unsigned char>>();
  if (Status st = kernels::pack_params(kernels::prepare(f, dev), args, extra, params.get()); st != Status::Ok)
    return st;
  return launch_checked(f, dev, shape, s, std::move(params));
}

Status Backend::launch_packed(Function* f, const LaunchShape& shape, Stream* s,
                              std::shared_ptr<const std::vector<unsigned char>> params) {
  if (!f) return Status::InvalidHandle;
  Device* dev = s ? s->ctx->dev : device(0);
  if (Status st = check_launch(f, dev, shape); st != Status::Ok) return st;
  return launch_checked(f, dev, shape, s, std::move(params));
}

Status Backend::launch_checked(Function* f, Device* dev, const LaunchShape& shape, Stream* s,
                               std::shared_ptr<const std::vector<unsigned char>> params) {
  if (Status st = sticky_fault(s ? s->ctx : nullptr); st != Status::Ok) return st;
  // Stream capture (core/graph.h): on a capturing stream the launch becomes a kernel node
  // (run each time the graph is launched).
  if (Status st = Status::Ok;
      graph::intercept_launch(f, shape.grid, shape.block, shape.shmem, shape.cooperative, params, s, &st))
    return st;
  f->launches.fetch_add(1, std::memory_order_relaxed);
  FG_USDT_LAUNCH(f->handle, f->name.c_str(), dev->ordinal);  // the CUfunction: never reused
  auto record = [name = f->name] {
    auto& b = launch_book();
    std::lock_guard lock(b.mu);
    ++b.by_name[name];
  };
  std::shared_ptr<kernels::Kernel> k = f->kernel;
  if (!k) {
    kernels::prepare(f, dev);
    k = f->kernel;
  }
  if (!k->code || !params || params->empty()) {
    if (k->code) return Status::InvalidValue;  // a runnable kernel launched without its parameters
    if (kernels::mode() == kernels::Mode::Run && coverage::strict()) kernels::strict_stop(*k);
    auto recorded = [record, k] {
      record();
      kernels::recorded(*k);
    };
    if (s) return stream_enqueue(s, recorded);
    recorded();
    return Status::Ok;
  }
  Context* ctx = s ? s->ctx : nullptr;
  auto run = [record, k, shape, params = std::move(params), ctx] {
    record();
    const kernels::Fault fault = kernels::run(*k, shape, params->data());
    if (fault == kernels::Fault::None || !ctx) return;
    Status st = Status::LaunchFailed;
    if (fault == kernels::Fault::IllegalAddress) st = Status::IllegalAddress;
    if (fault == kernels::Fault::MisalignedAddress) st = Status::MisalignedAddress;
    if (fault == kernels::Fault::Assert) st = Status::AssertFailed;
    Status none = Status::Ok;
    ctx->fault.compare_exchange_strong(none, st);
  };
  if (s) return stream_enqueue(s, std::move(run));
  run();
  return Status::Ok;
}

std::vector<LaunchRecord> Backend::launches() {
  auto& b = launch_book();
  std::lock_guard lock(b.mu);
  std::vector<LaunchRecord> out;
  for (auto& [name, n] : b.by_name) out.push_back({name, n});
  return out;
}

}  // namespace fg
