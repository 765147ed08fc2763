// SPDX-License-Identifier: Apache-2.0
// CUDA graphs and stream capture, shared by the runtime and the driver API shims.
//
// A Graph is a DAG of typed nodes (kernel, memcpy, memset, host function, empty, event
// record/wait, memory alloc/free, child graph). Instantiating it makes an Exec: a private
// clone of the graph plus one topological order (child graphs expanded in place). Launching
// an Exec submits its enabled nodes, in that order, to the stream through the core's own
// submission calls, so a launch behaves like the same work issued by hand: kernel nodes are
// validated and recorded by name (Backend::launch), memcpy/memset nodes move real bytes,
// host nodes run on the stream's worker, events are recorded and waited on.
//
// Stream capture: while a stream captures, work submitted to it becomes nodes of the capture
// graph instead of running. The core forwards its submissions here (the intercept_* hooks
// in core/exec.cpp); the shims capture their typed work (copies, memsets, host functions,
// stream-ordered allocations) with capture() so the nodes carry their parameters. An event
// recorded in a capturing stream remembers the capture's current dependency set; another
// stream that waits on it joins the capture (fork), and the origin stream waiting on an
// event recorded in a joined stream merges that branch back (join), as the real runtime does.
//
// Rules that follow the real APIs:
//   * Modes: a thread whose capture was begun in Global or ThreadLocal mode, and (in Global
//     mode, cudaThreadExchangeStreamCaptureMode) any thread while another thread captures in
//     Global mode, may not make potentially unsafe calls (cudaMalloc, cudaFree, synchronous
//     copies, synchronisation and queries): check_unsafe() refuses them with
//     CaptureUnsupported and invalidates the captures concerned.
//   * Synchronising or querying a capturing stream, a context with a capture, or an event last
//     recorded in a capture is refused in every mode (check_sync / check_ctx_sync / check_event).
//   * The legacy default stream may not be used while a blocking stream of its context
//     captures: CaptureImplicit, and the captures concerned are invalidated.
//   * Work on a stream of an invalidated capture answers CaptureInvalidated; ending such a
//     capture returns CaptureInvalidated and no graph.
//
// Handles: Graph*, Node*, Exec* and UserObject* are the API handles (cudaGraph_t / CUgraph,
// …). Every call checks them against live sets before use, so stale or garbage handles are
// answered with InvalidValue, never a crash. All functions here are thread-safe.
#pragma once
#include "core/backend.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace fg::graph {

struct Graph;
struct Node;
struct Exec;
struct UserObject;
struct Capture;

// cudaGraphNodeType / CUgraphNodeType values.
enum class NodeType : int {
  Kernel = 0,
  Memcpy = 1,
  Memset = 2,
  Host = 3,
  Graph = 4,
  Empty = 5,
  WaitEvent = 6,
  EventRecord = 7,
  MemAlloc = 10,
  MemFree = 11,
};

// A copy between linear ranges: `depth` slices of `height` rows of `width` bytes
// (a 1D copy has height = depth = 1).
struct Copy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t dpitch = 0, spitch = 0;    // bytes between rows
  size_t dheight = 1, sheight = 1;  // rows between slices
  size_t width = 0, height = 1, depth = 1;
  int kind = 4;  // cudaMemcpyKind as given (4 = default); reported back only
  Status run() const noexcept;
  // The bytes from the first byte of each side to one past its last.
  size_t dst_span() const noexcept { return dpitch * dheight * (depth - 1) + dpitch * (height - 1) + width; }
  size_t src_span() const noexcept { return spitch * sheight * (depth - 1) + spitch * (height - 1) + width; }
};

// A memset of `height` rows of `width` elements of 1, 2 or 4 bytes.
struct Set {
  void* dst = nullptr;
  size_t pitch = 0;
  unsigned value = 0;
  unsigned elem = 1;
  size_t width = 0, height = 1;
  Status run() const noexcept;
  size_t span() const noexcept { return pitch * (height - 1) + width * elem; }  // bytes from dst to one past the last
};

struct Kernel {
  Function* f = nullptr;
  const void* handle = nullptr;  // what the caller named the kernel by; GetParams returns it
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shmem = 0;
  void** params = nullptr;  // as given (GetParams returns them)
  void** extra = nullptr;
  // The parameter values, copied when the node was made (as CUDA copies them): what each
  // launch of the graph passes. Empty for a kernel that is recorded, not run.
  std::shared_ptr<const std::vector<unsigned char>> packed;
  bool cooperative = false;  // captured from a cooperative launch: every launch of the node is one
  uintptr_t ctx_handle = 0;  // the context's handle, reported back by GetParams (the context may be gone)
};

struct Host {
  void (*fn)(void*) = nullptr;
  void* user = nullptr;
  std::function<void()> body;  // overrides fn (captured stream callbacks)
};

// The memory of a graph allocation node. It is made when the node is created and keeps its
// address for the lifetime of the graph, its clones and its executable graphs (kernels do
// not run, so there is no point in mapping it only while a launch runs). It is freed with
// the last of them when the graph frees it itself (a free node); otherwise, after a launch,
// it belongs to the caller, as on a real GPU, and cudaFree/cuMemFree releases it.
struct GraphAlloc {
  void* ptr = nullptr;
  uint64_t size = 0;
  int device = 0;
  std::atomic<bool> freed_in_graph{false};
  std::atomic<bool> launched{false};
  ~GraphAlloc();
};

struct Params {
  NodeType type = NodeType::Empty;
  Kernel kernel;
  Copy copy;
  Set set;
  Host host;
  Event* event = nullptr;             // EventRecord / WaitEvent
  std::shared_ptr<GraphAlloc> alloc;  // MemAlloc
  void* free_ptr = nullptr;           // MemFree
  std::function<void()> opaque;       // Empty nodes made from untyped captured stream work
};

// ---- stream capture: the core's hooks ---------------------------------------------------------------
namespace detail {
extern std::atomic<int> g_live_captures;
bool intercept_work(Stream* s, const std::function<void()>& fn, Status* st);
bool intercept_host(Stream* s, const std::function<void()>& fn, Status* st);
bool intercept_launch(Function* f, const unsigned grid[3], const unsigned block[3], size_t shmem, bool cooperative,
                      const std::shared_ptr<const std::vector<unsigned char>>& params, Stream* s, Status* st);
bool intercept_record(Event* e, Stream* s, Status* st);
bool intercept_wait(Stream* s, Event* e, Status* st);
}  // namespace detail

// True while any capture sequence exists in the process: everything below is free otherwise.
inline bool active() noexcept { return detail::g_live_captures.load(std::memory_order_acquire) != 0; }

// Each returns true when it took the submission: the stream captures (the work became a node)
// or the submission is refused; *st is then the call's result. False: run it as usual.
inline bool intercept_work(Stream* s, const std::function<void()>& fn, Status* st) {
  return active() && detail::intercept_work(s, fn, st);
}
inline bool intercept_host(Stream* s, const std::function<void()>& fn, Status* st) {
  return active() && detail::intercept_host(s, fn, st);
}
inline bool intercept_launch(Function* f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                             bool cooperative, const std::shared_ptr<const std::vector<unsigned char>>& params,
                             Stream* s, Status* st) {
  return active() && s && detail::intercept_launch(f, grid, block, shmem, cooperative, params, s, st);
}
inline bool intercept_record(Event* e, Stream* s, Status* st) { return active() && detail::intercept_record(e, s, st); }
inline bool intercept_wait(Stream* s, Event* e, Status* st) { return active() && detail::intercept_wait(s, e, st); }

// ---- stream capture: the shims --------------------------------------------------------------------
// For typed stream work: Ok with *capturing = false (run it), Ok with *capturing = true (add it
// with capture()), or the refusal (CaptureImplicit, CaptureInvalidated).
Status route_slow(Stream* s, bool* capturing);
inline Status route(Stream* s, bool* capturing) {
  *capturing = false;
  return active() ? route_slow(s, capturing) : Status::Ok;
}
// Adds a node for stream work to the capture of `s`, after its current dependencies.
Status capture(Stream* s, Params p, Node** out = nullptr);
// Refuses work that cannot be captured (pageable memory): invalidates the capture of `s`.
Status refuse(Stream* s);

Status check_unsafe_slow();
Status check_sync_slow(Stream* s);
Status check_event_slow(Event* e);
Status check_ctx_sync_slow(Context* ctx);
// A potentially unsafe call (allocation, free, synchronous copy, synchronisation).
inline Status check_unsafe() { return active() ? check_unsafe_slow() : Status::Ok; }
// Synchronising with or querying a stream (also: synchronous work on a default stream).
inline Status check_sync(Stream* s) { return active() ? check_sync_slow(s) : Status::Ok; }
// Synchronising with or querying an event.
inline Status check_event(Event* e) { return active() ? check_event_slow(e) : Status::Ok; }
// Synchronising a whole context (cudaDeviceSynchronize, cuCtxSynchronize).
inline Status check_ctx_sync(Context* ctx) { return active() ? check_ctx_sync_slow(ctx) : Status::Ok; }

// mode: 0 global, 1 thread-local, 2 relaxed. With `to_graph` (cudaStreamBeginCaptureToGraph)
// the capture adds to the existing graph `into`, its first node after `deps` (their `edges`
// null or default, see default_edges).
Status begin_capture(Stream* s, int mode, bool to_graph = false, Graph* into = nullptr, Node* const* deps = nullptr,
                     const void* edges = nullptr, size_t ndeps = 0);
Status end_capture(Stream* s, Graph** out);
// A stream being destroyed leaves its capture: a capture it began ends (its graph, made by
// the capture, is destroyed with it); one it joined is invalidated. No capture keeps a
// destroyed stream.
void stream_destroyed(Stream* s);

struct CaptureInfo {
  int status = 0;  // 0 none, 1 active, 2 invalidated
  uint64_t id = 0;
  Graph* graph = nullptr;
  Node* const* deps = nullptr;  // valid until the next call on the stream
  const void* edges = nullptr;  // as many zeroed 8-byte edge records
  size_t ndeps = 0;
};
// CaptureImplicit for the legacy stream while a blocking stream captures (nothing invalidated).
Status capture_info(Stream* s, CaptureInfo* out);
// flags: 0 add to the dependency set, 1 replace it. IllegalState when not capturing.
Status update_capture_deps(Stream* s, Node* const* deps, size_t n, unsigned flags);

// ---- node parameters -----------------------------------------------------------------------------
// The rules of each node type's parameters, the same for both APIs. The shims resolve their
// handles, translate their structs into these calls and map the Status to their codes; what
// memory a copy or memset may touch is their API's rule (its copies follow the same one),
// checked over the spans these compute.

// Edge data (cudaGraphEdgeData / CUgraphEdgeData) records are 8 bytes; only default edges
// (all bytes zero) are modelled. `edges` may be null: n default edges.
inline constexpr size_t kEdgeBytes = 8;
bool default_edges(const void* edges, size_t n) noexcept;

// A kernel node of f (named `handle` by the caller) in ctx: the configuration is checked as a
// launch would check it (Backend::check_launch).
Status kernel_node(Function* f, const void* handle, Context* ctx, const unsigned grid[3], const unsigned block[3],
                   unsigned shmem, void** args, void** extra, Params* out);

// One side of a copy: a pitched volume at `base` (rows `pitch` bytes apart, `rows` rows a
// slice) and the byte (x, y, z) of it where the copy starts.
struct Volume {
  const void* base = nullptr;
  size_t pitch = 0, rows = 1;
  size_t x = 0, y = 0, z = 0;
};
// A memcpy node of width x height x depth bytes from src to dst; `kind` (a cudaMemcpyKind) is
// reported back only. InvalidValue when a start (x, y, z) or a side's span does not fit a
// size_t or wraps the address space, so that the node's dst_span()/src_span() are exact.
[[nodiscard]] Status copy_node(const Volume& dst, const Volume& src, size_t width, size_t height, size_t depth,
                               Params* out, int kind = Copy{}.kind);

// A memset node: `height` rows of `width` elements of `elem` (1, 2 or 4) bytes, rows `pitch`
// bytes apart (a single row's pitch is its width). InvalidValue when the row or the span does
// not fit a size_t, so that Set::span() is exact.
Status memset_node(void* dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height, Params* out);
Status host_node(void (*fn)(void*), void* user, Params* out);
// EventRecord or WaitEvent node of a live event.
Status event_node(Event* e, NodeType type, Params* out);

// An allocation node's cudaMemPoolProps / CUmemPoolProps (the same values in both APIs) and size.
// A memory access descriptor: CUmemAccessDesc and cudaMemAccessDesc have this layout.
struct AccessDesc {
  int location_type = 0, location_id = 0, flags = 0;
};
struct AllocProps {
  int alloc_type = 0, handle_types = 0, location_type = 0, device = 0;
  uint64_t bytes = 0;
  const AccessDesc* access = nullptr;  // the peers' access (access_count of them)
  size_t access_count = 0;
};
// The device of an allocation node: only pinned device memory without export handle types,
// of a nonzero size, is modelled (InvalidValue), on a device that exists (InvalidDevice). The
// access descriptors, at most one per device, name existing devices (InvalidDevice) and
// access flags (InvalidValue); a count without descriptors is InvalidValue.
Status alloc_device(const AllocProps& props, Device** out);
// The allocation node's memory, made in `current` (the caller's current context, asked for
// once the device is known) when it is on dev, else in dev's primary context (retained once,
// as a first use retains it).
Status alloc_node(Device* dev, Context* current, uint64_t bytes, ApiOrigin api, Params* out);
// A free node frees a graph allocation or a device allocation (its exact base).
Status free_node(void* p, Params* out);

// Generic node calls (cudaGraphAddNode, cuGraphNodeSetParams, their executable-graph twins):
// whether a node of `type` may be made (`creating`) or changed. Allocation and free nodes are
// fixed once made, child-graph nodes are the caller's own case (InvalidValue here), types not
// modelled (external semaphores, batch memory operations, conditional nodes) NotSupported, a
// number that names no node type InvalidValue.
Status generic_type(int type, bool creating);

// ---- graphs -------------------------------------------------------------------------------------
Status create(unsigned flags, Graph** out);
Status destroy(Graph* g);
bool valid(const Graph* g) noexcept;
bool valid(const Node* n) noexcept;
bool valid(const Exec* x) noexcept;
Status add(Graph* g, Node* const* deps, size_t ndeps, Params p, Node** out);
// A child-graph node holds a clone of `child`; moving the child in (ownership 1, the same
// value in both APIs' generic calls) is not modelled: NotSupported.
Status add_child(Graph* g, Node* const* deps, size_t ndeps, Graph* child, Node** out, int ownership = 0);
// Memory for an allocation node (booked like any device allocation of ctx's device).
Status make_alloc(Context* ctx, uint64_t bytes, ApiOrigin api, std::shared_ptr<GraphAlloc>* out);
// True when p is the address of a live graph allocation.
bool is_graph_alloc(const void* p) noexcept;
Status type_of(const Node* n, NodeType* out);
// The parameters of a node, which must be of `type`.
Status params_of(const Node* n, NodeType type, Params* out);
Status set_params(Node* n, const Params& p);  // same type; alloc/free/child nodes cannot change
Status child_of(const Node* n, Graph** out);
// The list queries follow the two-call pattern: with `out` null, *n = the list's length; else
// up to *n entries, the rest of a longer array nulled, *n = the number written. `edges`
// (optional, kEdgeBytes a record, needs `out`) come back as *n default edges.
Status nodes(const Graph* g, Node** out, size_t* n);
Status roots(const Graph* g, Node** out, size_t* n);
Status edges(const Graph* g, Node** from, Node** to, void* edges, size_t* n);
Status dependencies(const Node* node, Node** out, void* edges, size_t* n);
Status dependents(const Node* node, Node** out, void* edges, size_t* n);
// `edges`: their edge data (null or default, see default_edges).
Status add_edges(Graph* g, Node* const* from, Node* const* to, const void* edges, size_t n);
Status remove_edges(Graph* g, Node* const* from, Node* const* to, const void* edges, size_t n);
Status destroy_node(Node* n);
Status clone(const Graph* g, Graph** out);
Status find_in_clone(const Node* original, const Graph* clone, Node** out);
// Graphviz DOT description of the graph; OperatingSystem-like failures → NotPermitted.
Status dot_print(const Graph* g, const char* path, unsigned flags);

// ---- executable graphs ---------------------------------------------------------------------------
struct InstantiateResult {
  int result = 0;  // cudaGraphInstantiateResult
  Node* err_node = nullptr;
};
// `no_upload`: the call has no stream to upload to (cudaGraphInstantiateWithFlags,
// cuGraphInstantiateWithFlags) and refuses the upload flag.
Status instantiate(Graph* g, unsigned long long flags, Exec** out, InstantiateResult* res = nullptr,
                   bool no_upload = false);
Status exec_destroy(Exec* x);
Status exec_flags(const Exec* x, unsigned long long* out);
Status launch(Exec* x, Stream* s);
Status upload(Exec* x, Stream* s);
struct UpdateResult {
  int result = 0;  // cudaGraphExecUpdateResult
  Node* err_node = nullptr;
  Node* err_from = nullptr;
};
Status exec_update(Exec* x, Graph* g, UpdateResult* res);
// `n` is a node of the graph the exec was instantiated from.
Status exec_set_params(Exec* x, const Node* n, const Params& p);
Status exec_set_child(Exec* x, const Node* n, const Graph* child);
Status exec_set_enabled(Exec* x, const Node* n, bool enabled);
Status exec_enabled(const Exec* x, const Node* n, bool* out);

// ---- user objects --------------------------------------------------------------------------------
Status user_object_create(void* ptr, void (*destroy)(void*), unsigned refs, unsigned flags, UserObject** out);
Status user_object_retain(UserObject* o, unsigned count);
Status user_object_release(UserObject* o, unsigned count);
Status retain_user_object(Graph* g, UserObject* o, unsigned count, unsigned flags);
Status release_user_object(Graph* g, UserObject* o, unsigned count);

}  // namespace fg::graph
