// SPDX-License-Identifier: Apache-2.0
// The hidden core of the fake GPU: devices, contexts, memory, streams, events, modules.
// The exported shims (runtime/, driver/, nvml/) are thin layers over this interface: they
// validate API-specific arguments, call the core, and map fg::Status to their error codes.
// Shims never call another exported entry point, so a user call crosses exactly one probe.
#pragma once
#include "common/calls.h"
#include "core/device_model.h"
#include "core/errors.h"
#include "core/ledger.h"
#include "core/arena.h"
#include "kernels/executor.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <thread>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fg {

struct Context;
struct Stream;
struct Event;
struct Module;
struct Function;
struct MemPool;
namespace graph {
struct Capture;  // core/graph.h
}
namespace event_ipc {
struct Shared;  // core/event_ipc.h
}

// ---- devices ---------------------------------------------------------------------------------
struct Device {
  DeviceModel model;
  int ordinal = 0;  // visible ordinal (after CUDA_VISIBLE_DEVICES)
  uint32_t ledger_index = 0;
  std::atomic<Arena*> arenas[2] = {};  // [Device], [Managed]; created on first use

  // Primary context (cuDevicePrimaryCtx*; the runtime's context for this device).
  std::mutex primary_mu;
  Context* primary = nullptr;  // created on first retain; kept (inactive) after release to 0
  int primary_refs = 0;
  unsigned primary_flags = 0;

  // Highest device + managed bytes this process has held here (what it holds now is its
  // ledger slot: Backend::held()).
  std::atomic<uint64_t> peak{0};
  MemPool* default_pool = nullptr;  // created with the device
  std::atomic<MemPool*> current_pool{nullptr};
};

// ---- contexts --------------------------------------------------------------------------------
// A context is named in the API by its handle (Backend::new_handle), never by its address.
// The registry holds one reference and each entry of a thread's context stack one more: a
// destroyed context is freed once no stack holds it (another thread's stack may keep a dead
// context, which every call there rejects as destroyed). Primary contexts are never freed.
struct Context {
  uintptr_t handle = 0;
  std::atomic<uint32_t> refs{1};
  Device* dev = nullptr;
  unsigned flags = 0;
  bool primary = false;
  std::atomic<bool> active{true};  // false once destroyed (primary: after release to 0 / reset)
  uint64_t id = 0;                 // unique, never reused (cuCtxGetId)
  std::mutex mu;
  size_t limits[8] = {};  // indexed by cudaLimit / CUlimit
  int cache_config = 0;
  int shmem_config = 0;
  std::unordered_set<int> peers;  // devices with peer access enabled from this context
  // Context-local storage (NVIDIA's runtime keeps its per-context state here, through the
  // driver's export table c693336e…): per key a value and the destructor run, as
  // dtor(context handle, key, value), when the context is destroyed or reset. One key per runtime
  // copy in the process, so a short vector. Guarded by mu.
  using LocalDtor = void (*)(void* ctx, void* key, void* value);
  struct Local {
    void* key;
    void* value;
    LocalDtor dtor;
  };
  std::vector<Local> locals;
  // The first failure of a kernel launched in this context (IllegalAddress, Assert, …): sticky,
  // as on a GPU, every later synchronizing call and launch in the context reports it.
  std::atomic<Status> fault{Status::Ok};
};

// The context's sticky kernel failure (Status::Ok when none, or no context).
inline Status sticky_fault(const Context* ctx) noexcept {
  return ctx ? ctx->fault.load(std::memory_order_acquire) : Status::Ok;
}

// ---- streams and events ----------------------------------------------------------------------
// Work runs at once on the calling thread unless the stream has queued work (a host function
// or a wait on an event that has not completed); then it queues behind it and a per-stream
// worker thread runs it in order. So async copies are real copies, host functions run in
// stream order, and a host function may block without deadlocking its caller.
inline constexpr uint32_t kStreamMagic = 0x57E4A11A;
struct Stream {
  uint32_t magic = kStreamMagic;
  Context* ctx = nullptr;
  unsigned flags = 0;  // cudaStreamNonBlocking = 1
  int priority = 0;
  uint64_t id = 0;
  bool is_default = false;  // legacy or per-thread default stream object
  bool per_thread = false;
  std::mutex mu;
  std::condition_variable cv;
  // Pending work, drained in order by the worker thread. `done` runs once the item has left
  // the queue, so whoever it wakes (an event's waiters) already sees the stream idle.
  struct Work {
    std::function<void()> run;
    std::function<void()> done;
  };
  std::deque<Work> queue;
  bool worker_running = false;
  std::thread* worker = nullptr;
  // Stream capture (core/graph.h): the capture sequence this stream takes part in (it began
  // it, or joined it by waiting on a captured event), else null. Set and cleared by graph.cpp.
  std::atomic<graph::Capture*> capture{nullptr};
};

inline constexpr uint32_t kEventMagic = 0xE7E4A11A;
inline constexpr unsigned kEventDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING = cudaEventDisableTiming
inline constexpr unsigned kEventInterprocess = 0x4;   // CU_EVENT_INTERPROCESS = cudaEventInterprocess
struct Event {
  uint32_t magic = kEventMagic;
  Context* ctx = nullptr;
  unsigned flags = 0;  // cudaEventDisableTiming = 2, Interprocess = 4
  std::mutex mu;
  std::condition_variable cv;
  uint64_t pending = 0;                          // records queued but not yet reached
  bool recorded = false;                         // recorded at least once (timing needs both ends recorded)
  std::chrono::steady_clock::time_point when{};  // host time the last record completed
  // Stream capture (core/graph.h): id of the capture sequence that last recorded the event
  // (0: recorded outside any capture). Waiting on it joins that capture.
  std::atomic<uint64_t> capture_id{0};
  // Interprocess events (created with the flag, or opened from a handle): the completion
  // state shared with the other processes (core/event_ipc.h); null for the others.
  std::shared_ptr<event_ipc::Shared> shared;
};

// ---- modules, functions, kernels -------------------------------------------------------------
struct Function {
  uint32_t magic = 0xF0C7F0C7;
  uintptr_t handle = 0;  // its API handle (Backend::handle_of)
  Module* module = nullptr;
  std::string name;                // device-side (mangled) name
  const void* host_fun = nullptr;  // runtime registration: host stub address
  std::atomic<uint64_t> launches{0};
  int max_threads_per_block = 1024;
  int shared_size_bytes = 0, const_size_bytes = 0, local_size_bytes = 0, num_regs = 32;
  int max_dynamic_shared = 49152, preferred_carveout = -1, cache_config = 0;
  std::shared_ptr<kernels::Kernel> kernel;  // made on the first launch (kernels::prepare)
};

struct Symbol {  // __device__/__constant__/__managed__ variable or module global
  std::string name;
  const void* host_var = nullptr;  // runtime registration: host shadow address
  void* dev_ptr = nullptr;         // its fake device storage
  size_t size = 0;
  bool managed = false;
  bool constant = false;
  std::vector<unsigned char> init;  // PTX initializer bytes (module_load)
};

struct Module {
  uint32_t magic = 0x30D0130D;
  uintptr_t handle = 0;         // its API handle (Backend::handle_of)
  Context* ctx = nullptr;       // null for runtime fat binaries (all devices)
  std::string origin;           // "fatbinary", "ptx", "cubin", file path …
  const void* image = nullptr;  // runtime fat binary (wrapper), for variables' initial values
  // The handle __cudaRegisterFatBinary gives the program points here (it holds the module),
  // so the backend, which owns the module until its own teardown, owns the handle too.
  void* runtime_handle = nullptr;
  std::map<std::string, std::unique_ptr<Function>> functions;
  std::map<std::string, Symbol> globals;
  std::vector<std::string> entry_names;       // kernels found in the PTX or cubin (for cuModuleGetFunction)
  bool names_complete = false;                // entry_names lists every kernel (PTX, or a cubin read)
  int ptx_arch = 0;                           // loaded from PTX: its .target (CU_FUNC_ATTRIBUTE_PTX_VERSION)
  std::shared_ptr<kernels::Program> program;  // the PTX its kernels run from (kernels/executor.h)
};

// ---- memory pools (cudaMallocAsync / cuMemAllocAsync) -----------------------------------------
inline constexpr uint32_t kPoolMagic = 0x9001F001;
struct MemPool {
  uint32_t magic = kPoolMagic;
  uint64_t id = 0;
  Device* dev = nullptr;
  bool is_default = false;
  std::mutex mu;
  uint64_t release_threshold = 0;
  uint64_t reserved_current = 0, reserved_high = 0, used_current = 0, used_high = 0;
  int reuse_follow_event = 1, reuse_allow_opportunistic = 1, reuse_allow_internal = 1;
  std::unordered_map<int, int> access;  // device -> CUmemAccess_flags
  unsigned handle_types = 0;            // CUmemAllocationHandleType bits it was created with (core/pool_ipc.h)
};

// ---- launches ----------------------------------------------------------------------------------
// The shape of one launch, as both APIs and graph kernel nodes give it.
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t shmem = 0;                 // dynamic shared memory per block
  bool cooperative = false;         // cudaLaunchCooperativeKernel / CU_LAUNCH_ATTRIBUTE_COOPERATIVE
  unsigned cluster[3] = {0, 0, 0};  // cluster dimensions; 0: not a cluster launch
};

// ---- per-thread state ------------------------------------------------------------------------
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  size_t shmem = 0;
  void* stream = nullptr;
};

struct ThreadState {
  std::vector<Context*> ctx_stack;         // driver context stack; back() is current
  int last_error = 0;                      // runtime: cudaGetLastError (cleared on read)
  std::vector<LaunchConfig> call_configs;  // __cudaPushCallConfiguration stack
  int capture_mode = 0;                    // cudaThreadExchangeStreamCaptureMode
  Stream* per_thread_stream = nullptr;
  ThreadState() = default;
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
  ~ThreadState();  // marks the thread's state gone (calls from exit handlers come after)
};
ThreadState& thread_state() noexcept;
// Empties this thread's context stack (a forked child starts without contexts).
void forget_thread_contexts() noexcept;

// ---- launches (recorded, not executed) -------------------------------------------------------
struct LaunchRecord {
  std::string kernel;
  uint64_t count = 0;
};

// ---- the backend ---------------------------------------------------------------------------------
class Backend;
// The backend once initialised (Backend::get), else null.
extern constinit std::atomic<Backend*> g_backend;

// NVIDIA's runtime asks for the current context several times per call (context-local
// storage, context checks) and reads its context-local state on every call: a thread keeps
// its current context beside its stack, remembers the last context it found valid, until
// any context goes, and the few locals it read last, until any context's locals change.
// Trivially destructible and constant-initialised, so every use is an inline TLS load
// (initial-exec) that works from exit handlers too.
struct CtxCache {
  struct LocalHit {
    const Context* ctx = nullptr;
    const void* key = nullptr;
    void* value = nullptr;
    uint64_t generation = 0;
  };
  Context* current = nullptr;  // the top of this thread's context stack, or null
  const Context* valid_ctx = nullptr;
  uint64_t valid_generation = 0;
  std::array<LocalHit, 4> local_hits{};
  unsigned local_next = 0;
};
FG_TLS extern constinit thread_local CtxCache t_ctx_cache;

// The object an API handle names in a registry keyed by handle (Backend::new_handle's
// numbers); nullptr for any other value. The caller holds the registry's lock.
template <class T>
T* find_handle(const std::unordered_map<uintptr_t, T*>& by_handle, const void* h) noexcept {
  auto it = by_handle.find(reinterpret_cast<uintptr_t>(h));
  return it == by_handle.end() ? nullptr : it->second;
}

class Backend {
 public:
  // First use initialises (configuration, ledger). A configuration error prints its
  // message and ends the process with status 1: nothing falls back silently.
  static Backend& get();
  // The backend if already initialised (report at exit, fork handlers), else nullptr.
  static Backend* peek() noexcept { return g_backend.load(std::memory_order_acquire); }

  int device_count() const { return static_cast<int>(devices_.size()); }
  Device* device(int ordinal) noexcept {
    return ordinal >= 0 && ordinal < device_count() ? devices_[ordinal].get() : nullptr;
  }
  // Where memory lives: a CUmemLocation / cudaMemLocation (the same values in both APIs). A
  // device location names a device (else InvalidDevice; *dev set when dev is given); the host
  // kinds are accepted where `host_ok` (prefetch, advice) and NotSupported elsewhere (host VMM
  // and host memory pools are not modelled: their device attributes are 0); any other type is
  // InvalidValue.
  Status check_location(int type, int id, bool host_ok, Device** dev = nullptr) noexcept;
  // Handle types requested for shareable memory (VMM, pools): unknown bits are InvalidValue,
  // any kind but a POSIX file descriptor NotSupported.
  static Status check_handle_types(unsigned types) noexcept;
  Device* device_by_uuid(const uint8_t uuid[16]) noexcept;
  Device* device_by_pci_bus_id(const char* bus_id) noexcept;  // accepts "0000:07:00.0" and "00000000:07:00.0"
  ledger::Ledger& ledger() { return *ledger_; }
  std::chrono::steady_clock::time_point start_time() const { return start_; }

  // Driver API gate (cuInit); the runtime initialises implicitly.
  bool driver_initialized() const noexcept { return driver_init_.load(std::memory_order_acquire); }
  void set_driver_initialized() noexcept { driver_init_.store(true, std::memory_order_release); }

  // ---- contexts ----
  Status ctx_create(Device* dev, unsigned flags, Context** out);  // pushes it on this thread
  Status ctx_destroy(Context* ctx);                               // frees its allocations, streams, events, modules
  // A live (non-destroyed) context handle.
  bool ctx_valid(const Context* ctx) noexcept {
    const CtxCache& tc = t_ctx_cache;
    if (ctx && tc.valid_ctx == ctx && tc.valid_generation == ctx_generation_.load(std::memory_order_acquire))
      return ctx->active.load(std::memory_order_acquire);
    return ctx_valid_slow(ctx);
  }
  Context* current_ctx() noexcept { return t_ctx_cache.current; }  // top of this thread's stack (may be null)
  Status set_current(Context* ctx);                                // replaces top (null pops the top)
  Status push_current(Context* ctx);
  Status pop_current(void** out_handle);  // the handle of the context popped
  // Context limits: cudaLimit and CUlimit share their numbering (0 stack size … 6 persisting
  // L2, 7 shared memory size and 8/9 the CIG limits, query-only). The value rules live here
  // (NVIDIA's runtime forwards to the driver); each API checks its own enum's range.
  // Set: InvalidValue for a query-only limit or a bad value. Get and set: NotSupported
  // (CUDA_ERROR_UNSUPPORTED_LIMIT) for the device runtime's sync depth, gone in CUDA 13,
  // and the CIG fallback.
  Status ctx_set_limit(Context* ctx, int limit, size_t value);
  Status ctx_limit(Context* ctx, int limit, size_t* value);
  // The device's primary context without retaining or activating it (NVIDIA's runtime
  // takes the handle at start-up and makes it current before it retains it). The same
  // handle primary_retain returns.
  Context* primary_handle(Device* dev);
  bool is_primary_handle(const Context* ctx) noexcept;
  // Context-local storage: put overwrites; get is NotFound on a miss; delete succeeds
  // whether the key is there or not.
  Status ctx_local_put(Context* ctx, void* key, void* value, Context::LocalDtor dtor);
  Status ctx_local_get(Context* ctx, const void* key, void** value);
  // A value this thread read before and that has not changed since. Needs no valid ctx: a
  // context's teardown clears what every thread remembers (its locals' destructors run).
  bool ctx_local_remembered(const Context* ctx, const void* key, void** value) noexcept {
    if (!ctx) return false;  // (the empty entries hold a null context)
    const uint64_t generation = locals_generation_.load(std::memory_order_acquire);
    for (const CtxCache::LocalHit& h : t_ctx_cache.local_hits)
      if (h.ctx == ctx && h.key == key && h.generation == generation) {
        *value = h.value;
        return true;
      }
    return false;
  }
  Status ctx_local_delete(Context* ctx, const void* key);
  Status primary_retain(Device* dev, Context** out);
  Status primary_release(Device* dev);
  Status primary_reset(Device* dev);  // destroys what it holds; keeps flags
  // Runtime: the current device's primary context, made current if the thread has none.
  Status runtime_ctx(Context** out);
  Status runtime_set_device(int ordinal);  // retains the primary (once per device) and makes it current
  int runtime_device() noexcept;           // device of the current context, else 0

  // ---- memory ----
  // Allocates `size` bytes of `kind` for `ctx` (device taken from ctx; host kinds may pass a
  // null ctx). size 0 → InvalidValue (the runtime turns cudaMalloc(0) into success/nullptr itself).
  // A non-zero `pool` (MemPool::id) books the bytes in that pool's statistics.
  Status mem_alloc(Context* ctx, MemKind kind, uint64_t size, ApiOrigin api, uint32_t flags, void** out,
                   uint64_t pool = 0);
  // Frees an allocation whose base is exactly p and whose kind is in `kinds` (bit mask of
  // 1 << MemKind), after the work queued on its context (cudaFree / cuMemFree synchronise).
  // Unknown, interior, already freed or wrong-kind pointers → InvalidPointer, and nothing
  // changes. Stream-ordered frees (cudaFreeAsync) pass `ordered`: they run on the stream's
  // worker, in order already, and must not wait for that very stream.
  Status mem_free(void* p, unsigned kinds, ApiOrigin api, bool ordered = false);
  // The allocation containing p (interior pointers too), registered host ranges included.
  std::optional<Allocation> mem_find(const void* p) noexcept;
  // Register / unregister user host memory (cudaHostRegister); overlapping → AlreadyMapped.
  Status host_register(void* p, size_t size, unsigned flags);
  Status host_unregister(void* p);
  // Checks [p, p+n) lies inside one live allocation of a device kind (for copies/memsets).
  // Host (non-registered) pointers are not an error here: callers decide by direction.
  bool is_device_range(const void* p, size_t n) noexcept;
  // The range rule of every copy and memset: [p, p+n) is wholly inside one allocation (or one
  // accessible virtual-memory mapping, `write` asking for write access), or wholly outside
  // every one (host memory the fake does not manage). p is not null, and the range does not
  // wrap around the address space.
  bool range_ok(const void* p, size_t n, bool write) noexcept;
  // Copy/set with validation: device ranges must be inside one allocation; returns
  // InvalidValue otherwise. Bytes really move.
  Status copy(void* dst, const void* src, size_t n) noexcept;
  Status copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) noexcept;
  Status set(void* dst, int value, size_t n) noexcept;                                     // 8-bit
  Status set_pattern(void* dst, const void* pattern, size_t elem, size_t count) noexcept;  // 16/32-bit
  Status set_2d(void* dst, size_t pitch, const void* pattern, size_t elem, size_t width_elems, size_t height) noexcept;
  // The books of every allocation path (arenas, virtual memory): reserve capacity in the
  // host-wide ledger — reclaiming dead processes' bytes once if it is full — and follow
  // this process's peak; false (nothing booked) when the bytes do not fit.
  [[gnu::always_inline]] bool book_reserve(Device* dev, MemKind kind, uint64_t bytes) noexcept {
    if (!dev) return true;  // host memory with no device configured: nothing to book
    uint64_t peak = dev->peak.load(std::memory_order_relaxed);
    uint64_t high = 0;
    // The ledger's exact check already reclaims dead processes before it refuses.
    if (!ledger_->reserve(dev->ledger_index, ledger_kind(kind), bytes, peak, &high)) return false;
    if (high > peak) raise_peak(dev, peak, high);
    return true;
  }
  [[gnu::always_inline]] void book_release(Device* dev, MemKind kind, uint64_t bytes) noexcept {
    if (dev) ledger_->release(dev->ledger_index, ledger_kind(kind), bytes);
  }
  static ledger::Kind ledger_kind(MemKind k) noexcept {
    return k == MemKind::Managed ? ledger::kManaged : k == MemKind::Host ? ledger::kHost : ledger::kDevice;
  }
  // Device + managed bytes this process holds on dev.
  uint64_t held(const Device* dev) const noexcept;
  // memGetInfo for a device: free = total - used by every process (ledger).
  void mem_info(Device* dev, uint64_t* free_bytes, uint64_t* total_bytes) noexcept;
  // Arena (created on demand) for a device kind; nullptr + OutOfMemory if it cannot be reserved.
  Arena* arena(Device* dev, MemKind kind) {
    Arena* a = dev->arenas[kind == MemKind::Managed ? 1 : 0].load(std::memory_order_acquire);
    return a ? a : create_arena(dev, kind);
  }
  Arena* host_arena();
  // The arena whose address space holds p, or nullptr (arenas are few: one per device kind).
  Arena* arena_of(uintptr_t p) const noexcept {
    const size_t n = arena_count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
      Arena* a = arena_list_[i].load(std::memory_order_relaxed);
      if (a->contains(p)) return a;
    }
    return nullptr;
  }
  // Every live allocation of every arena (report, context destruction).
  std::vector<Allocation> live_allocations() const;

  // Address ranges that live outside the core's arenas: the driver's virtual-memory
  // mappings (cuMemMap). Installed once by their owner; copies, memsets and pointer
  // lookups of every API then accept them like any other device memory.
  enum class RangeCheck : int { NotMine = 0, Ok = 1, Bad = 2 };
  struct RangeProvider {
    RangeCheck (*check)(const void* p, size_t n, bool write) noexcept;  // [p, p+n) usable?
    bool (*find)(const void* p, Allocation* out) noexcept;              // the mapping holding p
  };
  void set_range_provider(RangeProvider p) noexcept {
    range_find_.store(p.find, std::memory_order_relaxed);
    range_check_.store(p.check, std::memory_order_release);
  }

  // IPC: export/import of allocations between processes (64-byte handles).
  Status ipc_export(const void* p, unsigned char handle[64]);
  Status ipc_open(const unsigned char handle[64], void** out);
  Status ipc_close(void* p);

  // ---- streams / events ----
  Status stream_create(Context* ctx, unsigned flags, int priority, Stream** out);
  Status stream_destroy(Stream* s);
  // Resolves a user stream handle: null / cudaStreamLegacy (1) / cudaStreamPerThread (2)
  // map to the context's default streams; unknown handles → InvalidHandle.
  Status stream_resolve(void* handle, Context* ctx, Stream** out, bool per_thread_default = false);
  // Runs fn in stream order (at once when nothing is queued), then `done`.
  Status stream_enqueue(Stream* s, std::function<void()> fn, std::function<void()> done = {});
  Status stream_sync(Stream* s);
  bool stream_idle(Stream* s) noexcept;
  Status ctx_sync(Context* ctx);  // all streams of the context
  Status event_create(Context* ctx, unsigned flags, Event** out);
  Status event_destroy(Event* e);
  bool event_valid(const Event* e) noexcept;
  bool stream_valid(const Stream* s) noexcept;
  Status event_record(Event* e, Stream* s);
  Status event_query(Event* e) noexcept;  // Ok or NotReady
  Status event_sync(Event* e);
  Status event_elapsed(Event* start, Event* end, float* ms);
  Status stream_wait_event(Stream* s, Event* e);
  // Interprocess events: the 64-byte handle of an event created with the interprocess flag
  // (InvalidHandle for any other), and an event of ctx standing for another process's one.
  Status event_ipc_handle(Event* e, unsigned char handle[64]);
  Status event_ipc_open(Context* ctx, const unsigned char handle[64], Event** out);
  // Host function / callback: runs on the stream's worker thread after earlier work.
  Status stream_host_func(Stream* s, std::function<void()> fn);

  // ---- modules / kernels ----
  // Runtime fat binaries: one Module per __cudaRegisterFatBinary handle.
  Module* register_fatbinary(const void* fatbin_wrapper);
  void unregister_fatbinary(Module* m);
  void register_function(Module* m, const void* host_fun, const char* device_name);
  void register_var(Module* m, void* host_var, const char* name, size_t size, bool constant, bool managed,
                    void** managed_ptr_out);
  // Storage of a device variable (a module's or library's global): host memory the copies
  // and pointer queries of every API accept as device (or managed) memory. One of 2 MiB or
  // more is booked on the device in whole 2 MiB pages (cuMemGetInfo, NVML), but it is no
  // allocation (module memory is not part of cudaMalloc's books on a real GPU either);
  // nullptr when the device has no room.
  void* variable_storage(size_t size, const void* init, bool managed, int ordinal);
  void variable_release(void* p);
  Function* function_by_host(const void* host_fun) noexcept;
  Symbol* symbol_by_host(const void* host_var) noexcept;
  Status module_load(Context* ctx, const void* image, size_t size_hint, Module** out);  // PTX text, cubin or fatbin
  Status module_unload(Module* m);  // frees the module and its functions
  bool module_valid(const Module* m) noexcept;
  bool function_valid(const Function* f) noexcept;
  // The API handles of modules and functions (CUmodule, CUfunction, cudaFunction_t,
  // cudaKernel_t) and of what the API layers keep themselves (libraries, library kernels):
  // numbers, not addresses, never reused in a process, so a handle of anything unloaded is
  // refused however many loads follow while the objects themselves are freed. The low four
  // bits say the kind, so a handle of one kind is never taken for another.
  enum class HandleKind : uintptr_t {
    Module = 0x3,
    Function = 0x5,
    Library = 0x7,
    Kernel = 0x9,
    Context = 0xB,
    Array = 0xD,  // CUarray / cudaArray_t (core/arrays.h)
  };
  uintptr_t new_handle(HandleKind kind) noexcept {
    return next_id_.fetch_add(1, std::memory_order_relaxed) << 4 | static_cast<uintptr_t>(kind);
  }
  static void* handle_of(const Module* m) noexcept { return reinterpret_cast<void*>(m->handle); }
  static void* handle_of(const Function* f) noexcept { return reinterpret_cast<void*>(f->handle); }
  static void* handle_of(const Context* c) noexcept { return c ? reinterpret_cast<void*>(c->handle) : nullptr; }
  // The context a CUcontext names: a live or primary context (whatever its state), or a
  // destroyed one still on this thread's stack (callers check liveness); nullptr otherwise.
  Context* context_of_handle(const void* h) noexcept {
    Context* cur = t_ctx_cache.current;
    if (cur && cur->handle == reinterpret_cast<uintptr_t>(h)) return cur;  // the usual case
    return context_of_handle_slow(h);
  }
  Module* module_of_handle(const void* h) noexcept;      // nullptr unless a loaded module's
  Function* function_of_handle(const void* h) noexcept;  // nullptr unless a loaded module's function's
  Status module_get_function(Module* m, const char* name, Function** out);
  Status module_get_global(Module* m, const char* name, void** dptr, size_t* bytes);
  // Every kernel the module is known to define (its entry_names), as functions.
  Status module_functions(Module* m, std::vector<Function*>* out);
  // The launch-configuration rule of every launch path (both APIs' launches and kernel
  // nodes): each grid and block dimension at least 1 and within the device's limits, the
  // block's threads within the device's and the function's maximum, the dynamic shared memory
  // within what the function allows (48 KiB unless raised with cu/cudaFuncSetAttribute).
  // InvalidValue otherwise: both APIs answer invalid value there, as a real H200 does.
  // Then, in this order: the registers of the block's warps within the block's register file
  // (LaunchOutOfResources); for a cluster launch, a device that forms clusters (NotSupported)
  // and cluster dimensions that divide the grid, at most 8 blocks (InvalidClusterSize); for
  // a cooperative launch, a device that can (NotSupported) and every block resident at once
  // (CooperativeLaunchTooLarge). The runtime, the driver and graph kernel nodes all ask here.
  static Status check_launch(const Function* f, const Device* dev, const LaunchShape& shape) noexcept;
  // Occupancy, the CUDA occupancy calculator's rules over the device model's limits (one
  // formula for both APIs): resident blocks of `f` per SM at `block` threads and `dyn_smem`
  // bytes of dynamic shared memory, bounded by the block limit, by warps, by registers
  // (allocated per warp in units of 256) and by shared memory (static + dynamic + the
  // per-block reservation, in 128-byte units); 0 when the block cannot run at all.
  static int blocks_per_sm(const Function* f, const Device* dev, int block, size_t dyn_smem) noexcept;
  // Whether a block of `threads` threads gets the registers `f` needs (else the launch is
  // out of resources).
  static bool registers_fit(const Function* f, const Device* dev, uint64_t threads) noexcept;
  // The most dynamic shared memory per block that still lets `blocks` blocks of `block`
  // threads reside on one SM, at most what the function allows (as a real H200 answers in
  // both APIs); InvalidValue when they cannot reside even without any.
  static Status available_dynamic_smem(const Function* f, const Device* dev, int blocks, int block,
                                       size_t* out) noexcept;
  // Records a launch (its configuration checked with check_launch); kernels are not executed.
  // Launches `f` on `s`: checked (check_launch), then run by the kernel executor in stream
  // order, or recorded when it cannot run (kernels/executor.h). `args` (one pointer per
  // parameter) or `buffer`/`buffer_size` (cuLaunchKernel's packed `extra`) give the
  // parameters, copied now. A context whose kernel failed reports that failure here.
  Status launch(Function* f, const LaunchShape& shape, Stream* s, void* const* args = nullptr,
                void* const* extra = nullptr);
  // The same with the parameters packed already (a graph's kernel node packed them when it
  // was made).
  Status launch_packed(Function* f, const LaunchShape& shape, Stream* s,
                       std::shared_ptr<const std::vector<unsigned char>> params);
  // Every live range of memory a kernel may touch: allocations, registered host memory,
  // module variables, as (base, size).
  std::vector<std::pair<uintptr_t, uint64_t>> live_ranges();
  std::vector<LaunchRecord> launches();

  // ---- mem pools ----
  Status pool_create(Device* dev, MemPool** out);
  MemPool* pool_by_id(uint64_t id) noexcept;  // nullptr once destroyed
  Status pool_destroy(MemPool* p);
  bool pool_valid(const MemPool* p) noexcept;

  // Called in a forked child (pthread_atfork): fresh GPU state, nothing held.
  void after_fork_child() noexcept;

  // ---- report ----
  void write_report() noexcept;  // FAKEGPU_REPORT (default fake_gpu_report.json; off disables)

 private:
  bool ctx_valid_slow(const Context* ctx) noexcept;
  Context* context_of_handle_slow(const void* h) noexcept;
  Context* make_primary_locked(Device* dev);
  Arena* create_arena(Device* dev, MemKind kind);
  Backend();
  void init();
  void implicit_free_ctx(Context* ctx);
  void free_stream(Stream* s);  // its work completes; default streams too
  // Ends a context: its work completes, what it holds is freed, it is inactive and unlisted.
  void retire_ctx(Context* ctx);
  // The registries under mu_: whether `p` is listed (a set lookup before any dereference, as
  // a handle may be garbage), and listing a new object as a call's result.
  template <class T>
  bool listed(const std::unordered_set<const T*>& set, const T* p) noexcept {
    std::lock_guard lock(mu_);
    return p && set.count(p);
  }
  template <class T>
  Status publish(std::unordered_set<const T*>& set, T* p, T** out) {
    std::lock_guard lock(mu_);
    set.insert(p);
    *out = p;
    return Status::Ok;
  }
  void run_local_dtors(Context* ctx);
  Function* function_locked(Module* m, const std::string& name);  // finds or adds; mu_ held
  void add_module_locked(Module* m);                              // mu_ held
  void add_function_locked(Function* f);                          // mu_ held
  void drop_function_locked(const Function* f);                   // mu_ held
  void drop_module_locked(Module* m);                             // its functions too; mu_ held
  void variable_release_locked(void* p);
  void publish_arena(Arena* a);
  // Returns a removed allocation's memory to its arena and its bytes to the books.
  [[gnu::always_inline]] void give_back(const Allocation& a) noexcept {
    if (a.arena) a.arena->deallocate(reinterpret_cast<void*>(a.base), a.span);
    Device* dev = a.device >= 0 ? device(a.device) : nullptr;
    book_release(dev ? dev : device(0), a.kind, a.size);
    if (a.pool) pool_note(a.pool, -static_cast<int64_t>(a.size));
  }
  // The peak only rises; it is read far more often than it moves.
  static void raise_peak(Device* dev, uint64_t peak, uint64_t high) noexcept;
  void reset_state(Context* ctx);
  void pool_note(uint64_t id, int64_t delta) noexcept;
  // True (once) for an allocation the exit report already announced as freed at exit: its
  // later free (NVIDIA's runtime releases its contexts from exit handlers that run after
  // the report, and static destructors may free) must not be announced a second time.
  bool announced_at_exit(uintptr_t base) noexcept {
    return exit_reported_.load(std::memory_order_acquire) && forget_announced(base);
  }
  bool forget_announced(uintptr_t base) noexcept;

  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<ledger::Ledger> ledger_;
  std::atomic<bool> driver_init_{false};
  std::chrono::steady_clock::time_point start_;
  std::atomic<uint64_t> ctx_generation_{0};     // bumped whenever a context leaves contexts_
  std::atomic<uint64_t> locals_generation_{0};  // bumped whenever any context's locals change
  std::atomic<bool> exit_reported_{false};
  std::mutex exit_mu_;
  std::unordered_set<uintptr_t> exit_announced_;  // bases, under exit_mu_

  std::mutex mu_;  // contexts, streams, events, modules, pools, registered ranges
  std::unordered_set<const Context*> contexts_;
  std::unordered_map<uintptr_t, Context*> context_handles_;  // live and primary contexts, by handle
  std::unordered_set<const Stream*> streams_;
  std::unordered_set<const Event*> events_;
  std::unordered_set<const Module*> modules_;
  // launch / launch_packed after check_launch: the sticky error, capture, then run or record.
  Status launch_checked(Function* f, Device* dev, const LaunchShape& shape, Stream* s,
                        std::shared_ptr<const std::vector<unsigned char>> params);
  std::vector<Module*> unregistered_;  // runtime fat binaries unregistered at exit, kept for static destructors
  std::unordered_set<const Function*> functions_;              // every Function of a loaded module
  std::unordered_map<uintptr_t, Module*> module_handles_;      // the same, by handle
  std::unordered_map<uintptr_t, Function*> function_handles_;  // the same, by handle
  std::unordered_set<const MemPool*> pools_;
  std::unordered_map<uint64_t, MemPool*> pools_by_id_;
  std::unordered_map<const void*, Function*> host_functions_;
  std::unordered_map<const void*, Symbol*> host_symbols_;
  std::map<uintptr_t, Allocation> registered_;                // host-registered and IPC-mapped ranges by base
  std::unordered_map<uintptr_t, uint64_t> booked_variables_;  // bytes this process booked per module variable
  std::atomic<Arena*> host_arena_{nullptr};
  std::mutex arena_mu_;
  // Every arena, for interior lookups without a lock: arenas are only ever added, each
  // slot is written before the count that publishes it.
  std::atomic<Arena*> arena_list_[2 * ledger::kMaxDevices + 1] = {};
  std::atomic<size_t> arena_count_{0};
  // Work items queued on any stream: synchronisation is free while it is zero.
  std::atomic<uint64_t> queued_work_{0};
  std::atomic<RangeCheck (*)(const void*, size_t, bool) noexcept> range_check_{nullptr};
  std::atomic<bool (*)(const void*, Allocation*) noexcept> range_find_{nullptr};
  friend struct StreamAccess;
  std::atomic<uint64_t> next_id_{1};
};

// Maps Status to each API's codes (defined by the shims' common headers).
}  // namespace fg
