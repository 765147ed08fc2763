// SPDX-License-Identifier: Apache-2.0
// CUDA graphs and stream capture (see core/graph.h for the model and the rules).
//
// Locking: one mutex guards every graph, node, executable graph, user object and capture.
// It is never held while work runs or while a call may block on a stream: objects to free
// are unregistered under the lock and deleted after it is released (their destructors free
// graph memory and run user-object destructors), and launches copy the nodes' parameters
// under the lock, then submit them without it. Lock order: this mutex, then the core's.
#include "core/graph.h"

#include "common/log.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace fg::graph {

namespace {
constexpr uint32_t kGraphMagic = 0x6A4F6A4F, kNodeMagic = 0x40DE40DE, kExecMagic = 0xE8ECE8EC,
                   kObjectMagic = 0x0B1EC7AA;
constexpr int kModeGlobal = 0, kModeRelaxed = 2;
constexpr unsigned kStreamNonBlocking = 1;
}  // namespace

struct Node {
  uint32_t magic = kNodeMagic;
  Graph* graph = nullptr;
  size_t seq = 0;  // creation index in its graph: DOT ids, update pairing, order ties
  Params p;
  Graph* child = nullptr;         // Graph nodes: the embedded graph (owned)
  std::vector<Node*> deps, outs;  // edges, in the order they were added
  const Node* origin = nullptr;   // clones: the node this one was copied from
  bool enabled = true;            // executable graphs' private copies: cudaGraphNodeSetEnabled
};

struct Graph {
  uint32_t magic = kGraphMagic;
  uint64_t id = 0;
  std::vector<Node*> nodes;  // creation order; owned
  size_t next_seq = 0;
  Node* parent = nullptr;      // embedded in this child-graph node (not destroyable)
  Capture* capture = nullptr;  // a capture sequence is adding to it
  const Graph* cloned_from = nullptr;
  bool registered = true;                                 // false for an executable graph's private copy
  std::vector<std::pair<UserObject*, unsigned>> objects;  // user-object references it owns
};

struct Exec {
  uint32_t magic = kExecMagic;
  ~Exec();
  Graph* snapshot = nullptr;                         // private clone; its nodes' origin = the user's nodes
  std::vector<Node*> order;                          // flattened topological order (child graphs expanded)
  std::unordered_map<const Node*, Node*> by_origin;  // user node → top-level snapshot node
  unsigned long long flags = 0;
  // Launches of one executable graph are ordered, on any streams: `done` is recorded after
  // each launch, and a launch on another stream first waits on it. Each stream switch starts
  // a fresh event (an event re-recorded behind a wait on itself would never complete); the
  // old one is destroyed once the stream that waited on it has moved past the wait.
  std::mutex launch_mu;
  Event* done = nullptr;
  Stream* last = nullptr;
  std::vector<std::pair<Event*, Stream*>> retired;
};

struct UserObject {
  uint32_t magic = kObjectMagic;
  void* ptr = nullptr;
  void (*destroy)(void*) = nullptr;
  std::atomic<int64_t> refs{0};
};

struct Member {
  Stream* s = nullptr;
  Context* ctx = nullptr;
  bool blocking = true;     // not created with cudaStreamNonBlocking
  std::vector<Node*> deps;  // what the next node captured in the stream depends on
};

struct Capture {
  uint64_t id = 0;
  Graph* graph = nullptr;
  bool own_graph = true;  // false for cudaStreamBeginCaptureToGraph
  Stream* origin = nullptr;
  int mode = kModeGlobal;
  std::thread::id thread;
  bool invalidated = false;
  std::vector<Member> members;                                  // origin first
  std::unordered_map<const Event*, std::vector<Node*>> events;  // events recorded in the capture
  std::vector<uint64_t> zero_edges;                             // capture_info's edge-data array (all default edges)
  Member* member(const Stream* s) {
    for (auto& m : members)
      if (m.s == s) return &m;
    return nullptr;
  }
};

namespace detail {
std::atomic<int> g_live_captures{0};
}

namespace {

struct Registry {
  std::mutex mu;
  std::unordered_set<const Graph*> graphs;
  std::unordered_set<const Node*> nodes;
  // Shared: a launch keeps its executable graph alive while it submits, without the lock.
  std::unordered_map<const Exec*, std::shared_ptr<Exec>> execs;
  std::unordered_set<const UserObject*> objects;
  std::unordered_map<uint64_t, Capture*> captures;
  std::unordered_map<uintptr_t, std::weak_ptr<GraphAlloc>> allocs;  // graph allocations by address
  uint64_t next_id = 1;
};
Registry& reg() {
  static auto* r = new Registry;  // never destroyed: graphs may be released from atexit handlers
  return *r;
}

using Lock = std::unique_lock<std::mutex>;

bool graph_ok(const Graph* g) { return g && reg().graphs.count(g); }
bool node_ok(const Node* n) { return n && reg().nodes.count(n); }
bool is_legacy(const Stream* s) { return s->is_default && !s->per_thread; }

Capture* live_capture(uint64_t id) {
  if (!id) return nullptr;
  auto it = reg().captures.find(id);
  return it == reg().captures.end() ? nullptr : it->second;
}

void invalidate(Capture* c) {
  if (c && !c->invalidated) {
    c->invalidated = true;
    FG_LOG(Info, Core, "stream capture %llu invalidated", static_cast<unsigned long long>(c->id));
  }
}

// Captures that make the legacy stream of ctx unusable: a blocking member stream of ctx.
std::vector<Capture*> blocking_captures(const Context* ctx) {
  std::vector<Capture*> out;
  for (auto& [id, c] : reg().captures)
    for (const Member& m : c->members)
      if (m.ctx == ctx && m.blocking) {
        out.push_back(c);
        break;
      }
  return out;
}

// Using the legacy stream while a blocking stream of its context captures: CaptureImplicit,
// and (when `invalidating`) the captures concerned are invalidated.
bool legacy_conflict(const Stream* s, bool invalidating) {
  if (!is_legacy(s)) return false;
  auto caps = blocking_captures(s->ctx);
  if (caps.empty()) return false;
  if (invalidating)
    for (Capture* c : caps) invalidate(c);
  return true;
}

void link(Node* from, Node* to) {
  from->outs.push_back(to);
  to->deps.push_back(from);
}

void unlink(Node* from, Node* to) {
  from->outs.erase(std::find(from->outs.begin(), from->outs.end(), to));
  to->deps.erase(std::find(to->deps.begin(), to->deps.end(), from));
}

bool has_edge(const Node* from, const Node* to) {
  return std::find(from->outs.begin(), from->outs.end(), to) != from->outs.end();
}

Node* new_node(Graph* g, Params p) {
  auto* n = new Node;
  n->graph = g;
  n->seq = g->next_seq++;
  n->p = std::move(p);
  g->nodes.push_back(n);
  if (g->registered) reg().nodes.insert(n);
  return n;
}

void retain_objects(const std::vector<std::pair<UserObject*, unsigned>>& objs) {
  for (auto& [o, n] : objs) o->refs.fetch_add(n, std::memory_order_relaxed);
}

// Deep copy of a graph (child graphs included); the copy's nodes point at their originals.
Graph* clone_locked(const Graph* src, bool registered) {
  auto* g = new Graph;
  g->id = reg().next_id++;
  g->registered = registered;
  g->cloned_from = src;
  g->next_seq = src->next_seq;
  g->objects = src->objects;
  retain_objects(g->objects);
  if (registered) reg().graphs.insert(g);
  std::unordered_map<const Node*, Node*> map;
  for (const Node* n : src->nodes) {
    auto* c = new Node;
    c->graph = g;
    c->seq = n->seq;
    c->p = n->p;
    c->origin = n;
    c->enabled = n->enabled;
    if (n->child) {
      c->child = clone_locked(n->child, registered);
      c->child->parent = c;
    }
    g->nodes.push_back(c);
    if (registered) reg().nodes.insert(c);
    map[n] = c;
  }
  for (const Node* n : src->nodes)
    for (const Node* d : n->deps) link(map[d], map[n]);
  return g;
}

// Removes a graph and everything in it from the handle sets (the caller deletes it later).
void unregister_locked(Graph* g) {
  reg().graphs.erase(g);
  for (Node* n : g->nodes) {
    reg().nodes.erase(n);
    if (n->child) unregister_locked(n->child);
  }
}

void release_object(UserObject* o, unsigned count);

// Frees a graph that is no longer registered. Never called with the registry lock held.
void delete_graph(Graph* g) {
  if (!g) return;
  for (Node* n : g->nodes) {
    delete_graph(n->child);
    n->magic = 0;
    delete n;
  }
  for (auto& [o, count] : g->objects) release_object(o, count);
  g->magic = 0;
  delete g;
}

void release_object(UserObject* o, unsigned count) {
  {
    std::lock_guard lock(reg().mu);
    if (!reg().objects.count(o)) return;
    if (o->refs.fetch_sub(count, std::memory_order_acq_rel) - static_cast<int64_t>(count) > 0) return;
    reg().objects.erase(o);
  }
  if (o->destroy) o->destroy(o->ptr);
  o->magic = 0;
  delete o;
}

bool contains_mem_nodes(const Graph* g) {
  for (const Node* n : g->nodes) {
    if (n->p.type == NodeType::MemAlloc || n->p.type == NodeType::MemFree) return true;
    if (n->child && contains_mem_nodes(n->child)) return true;
  }
  return false;
}

// Topological order of one graph's nodes, earliest-created first among the ready ones.
// False (and *cycle_at set) when the graph has a cycle.
bool topo(const Graph* g, std::vector<Node*>* out, Node** cycle_at) {
  std::unordered_map<const Node*, size_t> indeg;
  auto later = [](const Node* a, const Node* b) { return a->seq > b->seq; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later)> ready(later);
  for (Node* n : g->nodes) {
    indeg[n] = n->deps.size();
    if (n->deps.empty()) ready.push(n);
  }
  out->clear();
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    out->push_back(n);
    for (Node* o : n->outs)
      if (--indeg[o] == 0) ready.push(o);
  }
  if (out->size() == g->nodes.size()) return true;
  for (Node* n : g->nodes)
    if (indeg[n] != 0) {
      *cycle_at = n;
      break;
    }
  return false;
}

bool flatten(const Graph* g, std::vector<Node*>* out, Node** bad) {
  std::vector<Node*> order;
  if (!topo(g, &order, bad)) return false;
  for (Node* n : order) {
    if (n->p.type == NodeType::Graph && n->child) {
      if (!flatten(n->child, out, bad)) return false;
    } else {
      out->push_back(n);
    }
  }
  return true;
}

Status check_deps(const Graph* g, Node* const* deps, size_t n) {
  if (n && !deps) return Status::InvalidValue;
  for (size_t i = 0; i < n; ++i) {
    if (!node_ok(deps[i]) || deps[i]->graph != g) return Status::InvalidValue;
    for (size_t j = 0; j < i; ++j)
      if (deps[j] == deps[i]) return Status::InvalidValue;  // duplicate dependency
  }
  return Status::Ok;
}

// Adds a node for work captured from stream s (the capture exists and is valid).
Node* capture_locked(Capture* c, Stream* s, Params p) {
  Member* m = c->member(s);
  Node* n = new_node(c->graph, std::move(p));
  for (Node* d : m->deps) link(d, n);
  m->deps.assign(1, n);
  return n;
}

// A free node for a graph allocation: the graph owns the memory for good.
void mark_freed_in_graph(const void* p) {
  auto it = reg().allocs.find(reinterpret_cast<uintptr_t>(p));
  if (it != reg().allocs.end())
    if (auto a = it->second.lock()) a->freed_in_graph.store(true);
}

// The common head of the capture hooks: under the lock, decides what happens to work
// submitted to s. Returns true when handled (*st set); false: run it.
template <class Add>
bool intercept(Stream* s, Status* st, Add&& add) {
  std::lock_guard lock(reg().mu);
  if (Capture* c = s->capture.load(std::memory_order_acquire)) {
    *st = c->invalidated ? Status::CaptureInvalidated : (add(c), Status::Ok);
    return true;
  }
  if (legacy_conflict(s, true)) {
    *st = Status::CaptureImplicit;
    return true;
  }
  return false;
}

}  // namespace

// ---- node work ----------------------------------------------------------------------------------------
Status Copy::run() const noexcept {
  Backend& b = Backend::get();
  if (width == 0 || height == 0 || depth == 0) return Status::Ok;
  if (height == 1 && depth == 1) return b.copy(dst, src, width);
  for (size_t z = 0; z < depth; ++z) {
    Status s = b.copy_2d(static_cast<char*>(dst) + z * dpitch * dheight, dpitch,
                         static_cast<const char*>(src) + z * spitch * sheight, spitch, width, height);
    if (s != Status::Ok) return s;
  }
  return Status::Ok;
}

Status Set::run() const noexcept {
  Backend& b = Backend::get();
  if (width == 0 || height == 0) return Status::Ok;
  if (elem == 1) {
    const unsigned char byte = static_cast<unsigned char>(value);
    return height == 1 ? b.set(dst, byte, width) : b.set_2d(dst, pitch, &byte, 1, width, height);
  }
  const uint16_t v16 = static_cast<uint16_t>(value);
  const uint32_t v32 = value;
  const void* pattern = elem == 2 ? static_cast<const void*>(&v16) : static_cast<const void*>(&v32);
  return height == 1 ? b.set_pattern(dst, pattern, elem, width) : b.set_2d(dst, pitch, pattern, elem, width, height);
}

GraphAlloc::~GraphAlloc() {
  // Freed here only while the graph owns it (see graph.h); after a launch without a free
  // node the caller owns it, and may already have freed it.
  if (!ptr || (launched.load() && !freed_in_graph.load())) return;
  if (Backend* b = Backend::peek())
    (void)b->mem_free(ptr, 1u << static_cast<unsigned>(MemKind::Device), ApiOrigin::Internal);
}

// ---- capture hooks ------------------------------------------------------------------------------------
namespace detail {

bool intercept_work(Stream* s, const std::function<void()>& fn, Status* st) {
  return intercept(s, st, [&](Capture* c) {
    Params p;
    p.type = NodeType::Empty;
    p.opaque = fn;
    capture_locked(c, s, std::move(p));
  });
}

bool intercept_host(Stream* s, const std::function<void()>& fn, Status* st) {
  return intercept(s, st, [&](Capture* c) {
    Params p;
    p.type = NodeType::Host;
    p.host.body = fn;
    capture_locked(c, s, std::move(p));
  });
}

bool intercept_launch(Function* f, const unsigned grid[3], const unsigned block[3], size_t shmem, bool cooperative,
                      const std::shared_ptr<const std::vector<unsigned char>>& params, Stream* s, Status* st) {
  return intercept(s, st, [&](Capture* c) {
    Params p;
    p.type = NodeType::Kernel;
    p.kernel.f = f;
    p.kernel.handle = f;
    std::copy(grid, grid + 3, p.kernel.grid);
    std::copy(block, block + 3, p.kernel.block);
    p.kernel.shmem = static_cast<unsigned>(shmem);
    p.kernel.ctx_handle = s->ctx->handle;
    p.kernel.packed = params;
    p.kernel.cooperative = cooperative;
    capture_locked(c, s, std::move(p));
  });
}

// A record in a capturing stream adds no node: the event remembers the stream's dependency
// set, for the streams that will wait on it.
bool intercept_record(Event* e, Stream* s, Status* st) {
  std::lock_guard lock(reg().mu);
  if (Capture* c = s->capture.load(std::memory_order_acquire)) {
    if (c->invalidated) {
      *st = Status::CaptureInvalidated;
      return true;
    }
    c->events[e] = c->member(s)->deps;
    e->capture_id.store(c->id, std::memory_order_release);
    *st = Status::Ok;
    return true;
  }
  if (legacy_conflict(s, true)) {
    *st = Status::CaptureImplicit;
    return true;
  }
  e->capture_id.store(0, std::memory_order_release);  // recorded outside capture from now on
  return false;
}

bool intercept_wait(Stream* s, Event* e, Status* st) {
  std::lock_guard lock(reg().mu);
  Capture* ec = live_capture(e->capture_id.load(std::memory_order_acquire));
  if (Capture* c = s->capture.load(std::memory_order_acquire)) {
    *st = Status::Ok;
    if (c->invalidated) {
      *st = Status::CaptureInvalidated;
    } else if (ec == c) {  // join: the stream now also depends on the event's node set
      Member* m = c->member(s);
      for (Node* n : c->events[e])
        if (std::find(m->deps.begin(), m->deps.end(), n) == m->deps.end()) m->deps.push_back(n);
    } else if (ec) {
      invalidate(c);
      *st = Status::CaptureMerge;
    } else {
      bool never_recorded;
      {
        std::lock_guard elock(e->mu);
        never_recorded = !e->recorded && e->pending == 0;
      }
      if (!never_recorded) {  // a dependency on work outside the capture
        invalidate(c);
        *st = Status::CaptureIsolation;
      }
    }
    return true;
  }
  if (ec) {  // fork: the waiting stream joins the capture that recorded the event
    if (ec->invalidated) {
      *st = Status::CaptureInvalidated;
    } else if (is_legacy(s)) {
      invalidate(ec);
      *st = legacy_conflict(s, true) ? Status::CaptureImplicit : Status::CaptureUnsupported;
    } else {
      Member m;
      m.s = s;
      m.ctx = s->ctx;
      m.blocking = !(s->flags & kStreamNonBlocking);
      m.deps = ec->events[e];
      ec->members.push_back(std::move(m));
      s->capture.store(ec, std::memory_order_release);
      *st = Status::Ok;
    }
    return true;
  }
  if (legacy_conflict(s, true)) {
    *st = Status::CaptureImplicit;
    return true;
  }
  return false;
}

}  // namespace detail

// ---- capture: shims -------------------------------------------------------------------------------------
Status route_slow(Stream* s, bool* capturing) {
  std::lock_guard lock(reg().mu);
  if (Capture* c = s->capture.load(std::memory_order_acquire)) {
    if (c->invalidated) return Status::CaptureInvalidated;
    *capturing = true;
    return Status::Ok;
  }
  return legacy_conflict(s, true) ? Status::CaptureImplicit : Status::Ok;
}

Status capture(Stream* s, Params p, Node** out) {
  std::lock_guard lock(reg().mu);
  Capture* c = s->capture.load(std::memory_order_acquire);
  if (!c) return Status::IllegalState;  // the capture ended in between
  if (c->invalidated) return Status::CaptureInvalidated;
  if (p.type == NodeType::MemFree) mark_freed_in_graph(p.free_ptr);
  Node* n = capture_locked(c, s, std::move(p));
  if (out) *out = n;
  return Status::Ok;
}

Status refuse(Stream* s) {
  std::lock_guard lock(reg().mu);
  invalidate(s->capture.load(std::memory_order_acquire));
  return Status::CaptureUnsupported;
}

Status check_unsafe_slow() {
  const int mode = thread_state().capture_mode;
  if (mode == kModeRelaxed) return Status::Ok;
  const auto me = std::this_thread::get_id();
  std::lock_guard lock(reg().mu);
  bool refused = false;
  for (auto& [id, c] : reg().captures) {
    if (c->mode == kModeRelaxed) continue;
    // Own captures (global or thread-local) always; other threads' global captures in global mode.
    if (c->thread == me || (mode == kModeGlobal && c->mode == kModeGlobal)) {
      invalidate(c);
      refused = true;
    }
  }
  return refused ? Status::CaptureUnsupported : Status::Ok;
}

Status check_sync_slow(Stream* s) {
  {
    std::lock_guard lock(reg().mu);
    if (Capture* c = s->capture.load(std::memory_order_acquire)) {
      invalidate(c);
      return Status::CaptureUnsupported;
    }
    if (legacy_conflict(s, true)) return Status::CaptureImplicit;
  }
  return check_unsafe_slow();
}

Status check_event_slow(Event* e) {
  {
    std::lock_guard lock(reg().mu);
    if (Capture* c = live_capture(e->capture_id.load(std::memory_order_acquire))) {
      invalidate(c);
      return Status::CapturedEvent;
    }
  }
  return check_unsafe_slow();
}

Status check_ctx_sync_slow(Context* ctx) {
  {
    std::lock_guard lock(reg().mu);
    bool refused = false;
    for (auto& [id, c] : reg().captures)
      for (const Member& m : c->members)
        if (m.ctx == ctx) {
          invalidate(c);
          refused = true;
          break;
        }
    if (refused) return Status::CaptureUnsupported;
  }
  return check_unsafe_slow();
}

Status begin_capture(Stream* s, int mode, bool to_graph, Graph* into, Node* const* deps, const void* edges,
                     size_t ndeps) {
  if (mode < kModeGlobal || mode > kModeRelaxed) return Status::InvalidValue;
  if (to_graph && (!into || (ndeps && !deps) || !default_edges(edges, ndeps))) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (is_legacy(s)) return legacy_conflict(s, true) ? Status::CaptureImplicit : Status::CaptureUnsupported;
  if (s->capture.load(std::memory_order_acquire)) return Status::IllegalState;
  if (into) {
    if (!graph_ok(into) || into->capture) return Status::InvalidValue;
    if (Status st = check_deps(into, deps, ndeps); st != Status::Ok) return st;
  } else if (ndeps) {
    return Status::InvalidValue;
  }
  auto* c = new Capture;
  c->id = reg().next_id++;
  c->own_graph = into == nullptr;
  if (!into) {
    into = new Graph;
    into->id = reg().next_id++;
    reg().graphs.insert(into);
  }
  c->graph = into;
  c->origin = s;
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  Member m;
  m.s = s;
  m.ctx = s->ctx;
  m.blocking = !(s->flags & kStreamNonBlocking);
  m.deps.assign(deps, deps + ndeps);
  c->members.push_back(std::move(m));
  into->capture = c;
  reg().captures[c->id] = c;
  s->capture.store(c, std::memory_order_release);
  detail::g_live_captures.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok;
}

namespace {
// Every stream that joined the capture must have been joined back into the origin stream:
// its frontier lies in what the origin stream's next node would depend on.
bool all_joined(const Capture* c) {
  std::unordered_set<const Node*> reach;
  std::vector<const Node*> todo(c->members[0].deps.begin(), c->members[0].deps.end());
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!reach.insert(n).second) continue;
    for (const Node* d : n->deps) todo.push_back(d);
  }
  for (size_t i = 1; i < c->members.size(); ++i)
    for (const Node* d : c->members[i].deps)
      if (!reach.count(d)) return false;
  return true;
}
}  // namespace

Status end_capture(Stream* s, Graph** out) {
  Graph* doomed = nullptr;
  Status result = Status::Ok;
  {
    std::lock_guard lock(reg().mu);
    Capture* c = s->capture.load(std::memory_order_acquire);
    if (!c) return Status::IllegalState;
    if (c->origin != s) {
      invalidate(c);
      return Status::CaptureUnmatched;
    }
    if (c->mode != kModeRelaxed && c->thread != std::this_thread::get_id()) return Status::CaptureWrongThread;
    Backend& b = Backend::get();
    for (const Member& m : c->members)
      if ((m.s == s || b.stream_valid(m.s)) && m.s->capture.load() == c) m.s->capture.store(nullptr);
    reg().captures.erase(c->id);
    detail::g_live_captures.fetch_sub(1, std::memory_order_acq_rel);
    if (c->invalidated)
      result = Status::CaptureInvalidated;
    else if (!all_joined(c))
      result = Status::CaptureUnjoined;
    Graph* g = c->graph;
    g->capture = nullptr;
    if (result == Status::Ok) {
      *out = g;
    } else {
      if (c->own_graph) {
        unregister_locked(g);
        doomed = g;
      }
      *out = nullptr;
    }
    delete c;
  }
  delete_graph(doomed);
  return result;
}

void stream_destroyed(Stream* s) {
  Graph* doomed = nullptr;
  {
    std::lock_guard lock(reg().mu);
    Capture* c = s->capture.load(std::memory_order_acquire);
    if (!c) return;
    s->capture.store(nullptr);
    if (c->origin != s) {
      invalidate(c);
      return;
    }
    Backend& b = Backend::get();
    for (const Member& m : c->members)
      if (m.s != s && b.stream_valid(m.s) && m.s->capture.load() == c) m.s->capture.store(nullptr);
    reg().captures.erase(c->id);
    detail::g_live_captures.fetch_sub(1, std::memory_order_acq_rel);
    Graph* g = c->graph;
    g->capture = nullptr;
    if (c->own_graph) {
      unregister_locked(g);
      doomed = g;
    }
    delete c;
  }
  delete_graph(doomed);
}

Status capture_info(Stream* s, CaptureInfo* out) {
  std::lock_guard lock(reg().mu);
  if (legacy_conflict(s, false)) return Status::CaptureImplicit;
  *out = CaptureInfo{};
  Capture* c = s->capture.load(std::memory_order_acquire);
  if (!c) return Status::Ok;
  out->status = c->invalidated ? 2 : 1;
  out->id = c->id;
  out->graph = c->graph;
  Member* m = c->member(s);
  if (c->zero_edges.size() < m->deps.size()) c->zero_edges.resize(m->deps.size());
  out->deps = m->deps.data();
  out->edges = c->zero_edges.data();
  out->ndeps = m->deps.size();
  return Status::Ok;
}

Status update_capture_deps(Stream* s, Node* const* deps, size_t n, unsigned flags) {
  if (flags > 1) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  Capture* c = s->capture.load(std::memory_order_acquire);
  if (!c) return Status::IllegalState;
  if (c->invalidated) return Status::CaptureInvalidated;
  if (Status st = check_deps(c->graph, deps, n); st != Status::Ok) return st;
  Member* m = c->member(s);
  if (flags == 1) m->deps.clear();
  for (size_t i = 0; i < n; ++i)
    if (std::find(m->deps.begin(), m->deps.end(), deps[i]) == m->deps.end()) m->deps.push_back(deps[i]);
  return Status::Ok;
}

// ---- node parameters ------------------------------------------------------------------------------------
static LaunchShape shape_of(const unsigned grid[3], const unsigned block[3], size_t shmem) {
  LaunchShape shape;
  std::copy(grid, grid + 3, shape.grid);
  std::copy(block, block + 3, shape.block);
  shape.shmem = shmem;
  return shape;
}

bool default_edges(const void* edges, size_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(edges);
  return !b || std::all_of(b, b + n * kEdgeBytes, [](unsigned char c) { return c == 0; });
}

Status kernel_node(Function* f, const void* handle, Context* ctx, const unsigned grid[3], const unsigned block[3],
                   unsigned shmem, void** args, void** extra, Params* out) {
  if (Status st = Backend::check_launch(f, ctx->dev, shape_of(grid, block, shmem)); st != Status::Ok) return st;
  out->type = NodeType::Kernel;
  out->kernel.f = f;
  out->kernel.handle = handle;
  std::copy(grid, grid + 3, out->kernel.grid);
  std::copy(block, block + 3, out->kernel.block);
  out->kernel.shmem = shmem;
  out->kernel.params = args;
  out->kernel.extra = extra;
  out->kernel.ctx_handle = ctx ? ctx->handle : 0;
  auto packed = std::make_shared<std::vector<unsigned char>>();
  if (Status st = kernels::pack_params(kernels::prepare(f, ctx->dev), args, extra, packed.get()); st != Status::Ok)
    return st;
  out->kernel.packed = std::move(packed);
  return Status::Ok;
}

Status copy_node(const Volume& dst, const Volume& src, size_t width, size_t height, size_t depth, Params* out,
                 int kind) {
  // The first byte of a side: (x, y, z) of its volume, without wrapping; and its span.
  auto at = [&](const Volume& v, const void** p) {
    size_t slice = 0, offset = 0, span = 0;
    uintptr_t start = 0;
    if (!offset_3d(v.pitch, v.rows, v.x, v.y, v.z, &slice, &offset) ||
        __builtin_add_overflow(reinterpret_cast<uintptr_t>(v.base), offset, &start))
      return false;
    if (width && height && depth && !span_3d(slice, v.pitch, width, height, depth, &span)) return false;
    *p = reinterpret_cast<const void*>(start);
    return true;
  };
  // Slices of fewer rows than the copy's would overlap.
  if (depth > 1 && (dst.rows < height || src.rows < height)) return Status::InvalidValue;
  const void *d = nullptr, *s = nullptr;
  if (!at(dst, &d) || !at(src, &s)) return Status::InvalidValue;
  out->type = NodeType::Memcpy;
  Copy& c = out->copy;
  c.dst = const_cast<void*>(d);
  c.src = s;
  c.dpitch = dst.pitch, c.spitch = src.pitch;
  c.dheight = dst.rows, c.sheight = src.rows;
  c.width = width, c.height = height, c.depth = depth;
  c.kind = kind;
  return Status::Ok;
}

Status memset_node(void* dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height, Params* out) {
  if (elem != 1 && elem != 2 && elem != 4) return Status::InvalidValue;
  if (width == 0 || height == 0) return Status::InvalidValue;
  size_t row = 0, span = 0;
  if (__builtin_mul_overflow(width, elem, &row)) return Status::InvalidValue;
  if (height > 1 && pitch < row) return Status::InvalidValue;
  if (height > 1 && !span_2d(pitch, row, height, &span)) return Status::InvalidValue;
  out->type = NodeType::Memset;
  out->set = Set{dst, height > 1 ? pitch : width * elem, value, elem, width, height};
  return Status::Ok;
}

Status host_node(void (*fn)(void*), void* user, Params* out) {
  if (!fn) return Status::InvalidValue;
  out->type = NodeType::Host;
  out->host.fn = fn;
  out->host.user = user;
  return Status::Ok;
}

Status event_node(Event* e, NodeType type, Params* out) {
  if (!Backend::get().event_valid(e)) return Status::InvalidValue;
  out->type = type;
  out->event = e;
  return Status::Ok;
}

Status alloc_device(const AllocProps& props, Device** out) {
  constexpr int kPinned = 1, kNoHandles = 0, kOnDevice = 1;  // the same values in both APIs
  if (props.alloc_type != kPinned || props.handle_types != kNoHandles) return Status::InvalidValue;
  if (props.location_type != kOnDevice || props.bytes == 0) return Status::InvalidValue;
  Backend& b = Backend::get();
  if (props.access_count && (!props.access || props.access_count > static_cast<size_t>(b.device_count())))
    return Status::InvalidValue;
  constexpr int kNone = 0, kRead = 1, kReadWrite = 3;  // CU_MEM_ACCESS_FLAGS_PROT_*, cudaMemAccessFlagsProt*
  for (size_t i = 0; i < props.access_count; ++i) {
    const AccessDesc& a = props.access[i];
    if (a.location_type != kOnDevice) return Status::InvalidValue;
    if (!b.device(a.location_id)) return Status::InvalidDevice;
    if (a.flags != kNone && a.flags != kRead && a.flags != kReadWrite) return Status::InvalidValue;
  }
  *out = b.device(props.device);
  return *out ? Status::Ok : Status::InvalidDevice;
}

Status alloc_node(Device* dev, Context* current, uint64_t bytes, ApiOrigin api, Params* out) {
  Context* ctx = current->dev == dev ? current : nullptr;
  if (!ctx) {
    std::lock_guard lock(dev->primary_mu);
    if (dev->primary && dev->primary_refs > 0) ctx = dev->primary;
  }
  if (!ctx)
    if (Status st = Backend::get().primary_retain(dev, &ctx); st != Status::Ok) return st;
  out->type = NodeType::MemAlloc;
  return make_alloc(ctx, bytes, api, &out->alloc);
}

Status free_node(void* p, Params* out) {
  if (!p) return Status::InvalidValue;
  if (!is_graph_alloc(p)) {
    auto a = Backend::get().mem_find(p);
    if (!a || a->base != reinterpret_cast<uintptr_t>(p) || a->kind != MemKind::Device) return Status::InvalidValue;
  }
  out->type = NodeType::MemFree;
  out->free_ptr = p;
  return Status::Ok;
}

Status generic_type(int type, bool creating) {
  switch (static_cast<NodeType>(type)) {
    case NodeType::Kernel:
    case NodeType::Memcpy:
    case NodeType::Memset:
    case NodeType::Host:
    case NodeType::Empty:
    case NodeType::EventRecord:
    case NodeType::WaitEvent: return Status::Ok;
    case NodeType::MemAlloc:
    case NodeType::MemFree: return creating ? Status::Ok : Status::InvalidValue;
    case NodeType::Graph: return Status::InvalidValue;
  }
  // External semaphore signal and wait (8, 9), batch memory operations (12; the runtime has
  // none) and conditional nodes (13) exist but are not modelled.
  switch (type) {
    case 8:
    case 9:
    case 12:
    case 13: return Status::NotSupported;
    default: return Status::InvalidValue;
  }
}

// ---- graphs ---------------------------------------------------------------------------------------------
bool valid(const Graph* g) noexcept {
  std::lock_guard lock(reg().mu);
  return graph_ok(g);
}
bool valid(const Node* n) noexcept {
  std::lock_guard lock(reg().mu);
  return node_ok(n);
}
bool valid(const Exec* x) noexcept {
  std::lock_guard lock(reg().mu);
  return x && reg().execs.count(x);
}

Status create(unsigned flags, Graph** out) {
  if (!out || flags != 0) return Status::InvalidValue;
  auto* g = new Graph;
  std::lock_guard lock(reg().mu);
  g->id = reg().next_id++;
  reg().graphs.insert(g);
  *out = g;
  return Status::Ok;
}

Status destroy(Graph* g) {
  {
    std::lock_guard lock(reg().mu);
    if (!graph_ok(g) || g->parent || g->capture) return Status::InvalidValue;
    unregister_locked(g);
  }
  delete_graph(g);
  return Status::Ok;
}

Status add(Graph* g, Node* const* deps, size_t ndeps, Params p, Node** out) {
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!graph_ok(g)) return Status::InvalidValue;
  if (Status st = check_deps(g, deps, ndeps); st != Status::Ok) return st;
  if (p.type == NodeType::MemAlloc || p.type == NodeType::MemFree) {
    if (g->parent) return Status::InvalidValue;  // not in a child graph
  }
  if (p.type == NodeType::MemFree) mark_freed_in_graph(p.free_ptr);
  Node* n = new_node(g, std::move(p));
  for (size_t i = 0; i < ndeps; ++i) link(deps[i], n);
  *out = n;
  return Status::Ok;
}

Status add_child(Graph* g, Node* const* deps, size_t ndeps, Graph* child, Node** out, int ownership) {
  if (ownership != 0) return Status::NotSupported;
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!graph_ok(g) || !graph_ok(child) || child == g || child->capture) return Status::InvalidValue;
  if (Status st = check_deps(g, deps, ndeps); st != Status::Ok) return st;
  // A cloned child may not hold allocation or free nodes (those need ownership moved).
  if (contains_mem_nodes(child)) return Status::InvalidValue;
  Params p;
  p.type = NodeType::Graph;
  Node* n = new_node(g, std::move(p));
  n->child = clone_locked(child, true);
  n->child->parent = n;
  for (size_t i = 0; i < ndeps; ++i) link(deps[i], n);
  *out = n;
  return Status::Ok;
}

Status make_alloc(Context* ctx, uint64_t bytes, ApiOrigin api, std::shared_ptr<GraphAlloc>* out) {
  if (bytes == 0) return Status::InvalidValue;
  void* p = nullptr;
  if (Status st = Backend::get().mem_alloc(ctx, MemKind::Device, bytes, api, 0, &p); st != Status::Ok) return st;
  auto a = std::make_shared<GraphAlloc>();
  a->ptr = p;
  a->size = bytes;
  a->device = ctx->dev->ordinal;
  std::lock_guard lock(reg().mu);
  for (auto it = reg().allocs.begin(); it != reg().allocs.end();)
    it = it->second.expired() ? reg().allocs.erase(it) : std::next(it);
  reg().allocs[reinterpret_cast<uintptr_t>(p)] = a;
  *out = std::move(a);
  return Status::Ok;
}

bool is_graph_alloc(const void* p) noexcept {
  std::lock_guard lock(reg().mu);
  auto it = reg().allocs.find(reinterpret_cast<uintptr_t>(p));
  return it != reg().allocs.end() && !it->second.expired();
}

namespace {
// Reads a live node (or graph) under the lock: InvalidValue for a stale or garbage handle.
template <class Read>
Status read(const Node* n, Read&& r) {
  std::lock_guard lock(reg().mu);
  return node_ok(n) ? r(*n) : Status::InvalidValue;
}
template <class Read>
Status read(const Graph* g, Read&& r) {
  std::lock_guard lock(reg().mu);
  return graph_ok(g) ? r(*g) : Status::InvalidValue;
}

// The two-call pattern of the list queries (graph.h).
Status fill(const std::vector<Node*>& v, Node** out, void* edges, size_t* n) {
  if (!n || (edges && !out)) return Status::InvalidValue;
  if (!out) {
    *n = v.size();
    return Status::Ok;
  }
  const size_t want = *n, k = std::min(want, v.size());
  for (size_t i = 0; i < want; ++i) out[i] = i < k ? v[i] : nullptr;
  if (edges) std::memset(edges, 0, want * kEdgeBytes);
  *n = k;
  return Status::Ok;
}
}  // namespace

Status type_of(const Node* n, NodeType* out) {
  if (!out) return Status::InvalidValue;
  return read(n, [&](const Node& x) {
    *out = x.p.type;
    return Status::Ok;
  });
}

Status params_of(const Node* n, NodeType type, Params* out) {
  if (!out) return Status::InvalidValue;
  return read(n, [&](const Node& x) {
    if (x.p.type != type) return Status::InvalidValue;
    *out = x.p;
    return Status::Ok;
  });
}

Status set_params(Node* n, const Params& p) {
  std::lock_guard lock(reg().mu);
  if (!node_ok(n) || n->p.type != p.type) return Status::InvalidValue;
  switch (p.type) {
    case NodeType::MemAlloc:
    case NodeType::MemFree:
    case NodeType::Graph: return Status::InvalidValue;  // fixed once created
    default: break;
  }
  n->p = p;
  return Status::Ok;
}

Status child_of(const Node* n, Graph** out) {
  if (!out) return Status::InvalidValue;
  return read(n, [&](const Node& x) {
    if (x.p.type != NodeType::Graph) return Status::InvalidValue;
    *out = x.child;
    return Status::Ok;
  });
}

Status nodes(const Graph* g, Node** out, size_t* n) {
  return read(g, [&](const Graph& x) { return fill(x.nodes, out, nullptr, n); });
}

Status roots(const Graph* g, Node** out, size_t* n) {
  return read(g, [&](const Graph& x) {
    std::vector<Node*> v;
    for (Node* node : x.nodes)
      if (node->deps.empty()) v.push_back(node);
    return fill(v, out, nullptr, n);
  });
}

Status edges(const Graph* g, Node** from, Node** to, void* edges, size_t* n) {
  if (!n || !from != !to || (edges && !from)) return Status::InvalidValue;
  return read(g, [&](const Graph& x) {
    std::vector<Node*> f, t;
    for (Node* node : x.nodes)
      for (Node* d : node->deps) {
        f.push_back(d);
        t.push_back(node);
      }
    size_t nt = *n;
    if (Status st = fill(f, from, edges, n); st != Status::Ok) return st;
    return fill(t, to, nullptr, &nt);
  });
}

Status dependencies(const Node* node, Node** out, void* edges, size_t* n) {
  return read(node, [&](const Node& x) { return fill(x.deps, out, edges, n); });
}

Status dependents(const Node* node, Node** out, void* edges, size_t* n) {
  return read(node, [&](const Node& x) { return fill(x.outs, out, edges, n); });
}

Status add_edges(Graph* g, Node* const* from, Node* const* to, const void* edges, size_t n) {
  if (!default_edges(edges, n)) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!graph_ok(g)) return Status::InvalidValue;
  if (n && (!from || !to)) return Status::InvalidValue;
  for (size_t i = 0; i < n; ++i) {
    if (!node_ok(from[i]) || !node_ok(to[i]) || from[i]->graph != g || to[i]->graph != g || from[i] == to[i])
      return Status::InvalidValue;
    if (has_edge(from[i], to[i])) return Status::InvalidValue;
    for (size_t j = 0; j < i; ++j)
      if (from[j] == from[i] && to[j] == to[i]) return Status::InvalidValue;
  }
  for (size_t i = 0; i < n; ++i) link(from[i], to[i]);
  return Status::Ok;
}

Status remove_edges(Graph* g, Node* const* from, Node* const* to, const void* edges, size_t n) {
  if (!default_edges(edges, n)) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!graph_ok(g)) return Status::InvalidValue;
  if (n && (!from || !to)) return Status::InvalidValue;
  for (size_t i = 0; i < n; ++i)
    if (!node_ok(from[i]) || !node_ok(to[i]) || from[i]->graph != g || !has_edge(from[i], to[i]))
      return Status::InvalidValue;
  for (size_t i = 0; i < n; ++i)
    if (has_edge(from[i], to[i])) unlink(from[i], to[i]);
  return Status::Ok;
}

Status destroy_node(Node* n) {
  {
    std::lock_guard lock(reg().mu);
    if (!node_ok(n) || n->graph->capture) return Status::InvalidValue;
    while (!n->deps.empty()) unlink(n->deps.back(), n);
    while (!n->outs.empty()) unlink(n, n->outs.back());
    auto& v = n->graph->nodes;
    v.erase(std::find(v.begin(), v.end(), n));
    reg().nodes.erase(n);
    if (n->child) unregister_locked(n->child);
  }
  delete_graph(n->child);
  n->magic = 0;
  delete n;
  return Status::Ok;
}

Status clone(const Graph* g, Graph** out) {
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!graph_ok(g)) return Status::InvalidValue;
  *out = clone_locked(g, true);
  return Status::Ok;
}

Status find_in_clone(const Node* original, const Graph* clone, Node** out) {
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!node_ok(original) || !graph_ok(clone) || clone->cloned_from != original->graph) return Status::InvalidValue;
  for (Node* n : clone->nodes)
    if (n->origin == original) {
      *out = n;
      return Status::Ok;
    }
  return Status::InvalidValue;
}

namespace {
const char* type_name(NodeType t) {
  switch (t) {
    case NodeType::Kernel: return "KERNEL";
    case NodeType::Memcpy: return "MEMCPY";
    case NodeType::Memset: return "MEMSET";
    case NodeType::Host: return "HOST";
    case NodeType::Graph: return "GRAPH";
    case NodeType::Empty: return "EMPTY";
    case NodeType::WaitEvent: return "WAIT_EVENT";
    case NodeType::EventRecord: return "EVENT_RECORD";
    case NodeType::MemAlloc: return "MEM_ALLOC";
    case NodeType::MemFree: return "MEM_FREE";
  }
  return "UNKNOWN";
}

std::string dot_id(const Graph* g, const Node* n) {
  return "\"graph_" + std::to_string(g->id) + "_node_" + std::to_string(n->seq) + "\"";
}

void dot_graph(const Graph* g, std::string& out, int depth) {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  out += indent + "subgraph cluster_" + std::to_string(g->id) + " {\n";
  out += indent + "  label=\"graph_" + std::to_string(g->id) + "\" graph[style=\"dashed\"];\n";
  char buf[256];
  for (const Node* n : g->nodes) {
    std::string label = std::to_string(n->seq) + "\\n" + type_name(n->p.type);
    const Params& p = n->p;
    switch (p.type) {
      case NodeType::Kernel:
        if (p.kernel.f) label += "\\n" + p.kernel.f->name;
        std::snprintf(buf, sizeof buf, "\\n<<<(%u,%u,%u),(%u,%u,%u),%u>>>", p.kernel.grid[0], p.kernel.grid[1],
                      p.kernel.grid[2], p.kernel.block[0], p.kernel.block[1], p.kernel.block[2], p.kernel.shmem);
        label += buf;
        break;
      case NodeType::Memcpy:
        std::snprintf(buf, sizeof buf, "\\n%p -> %p\\n%zu x %zu x %zu bytes", p.copy.src, p.copy.dst, p.copy.width,
                      p.copy.height, p.copy.depth);
        label += buf;
        break;
      case NodeType::Memset:
        std::snprintf(buf, sizeof buf, "\\n%p = 0x%x\\n%zu x %zu x %u bytes", p.set.dst, p.set.value, p.set.width,
                      p.set.height, p.set.elem);
        label += buf;
        break;
      case NodeType::MemAlloc:
        if (p.alloc) {
          std::snprintf(buf, sizeof buf, "\\n%p, %llu bytes", p.alloc->ptr,
                        static_cast<unsigned long long>(p.alloc->size));
          label += buf;
        }
        break;
      case NodeType::MemFree:
        std::snprintf(buf, sizeof buf, "\\n%p", p.free_ptr);
        label += buf;
        break;
      case NodeType::EventRecord:
      case NodeType::WaitEvent:
        std::snprintf(buf, sizeof buf, "\\nevent %p", static_cast<const void*>(p.event));
        label += buf;
        break;
      default: break;
    }
    out += indent + "  " + dot_id(g, n) + "[style=\"solid\" shape=\"rectangle\" label=\"" + label + "\"];\n";
    if (n->child) dot_graph(n->child, out, depth + 1);
  }
  for (const Node* n : g->nodes)
    for (const Node* d : n->deps) out += indent + "  " + dot_id(g, d) + " -> " + dot_id(g, n) + ";\n";
  out += indent + "}\n";
}
}  // namespace

Status dot_print(const Graph* g, const char* path, unsigned flags) {
  // CUgraphDebugDot_flags (cuda.h 13.0): bits 0 (VERBOSE) to 15 (CONDITIONAL_NODE_PARAMS); a
  // bit no flag names is an invalid value. Every detail this backend has is always written.
  constexpr unsigned kDotFlags = (1u << 16) - 1;
  if (!path || (flags & ~kDotFlags)) return Status::InvalidValue;
  std::string text = "digraph dot {\n";
  {
    std::lock_guard lock(reg().mu);
    if (!graph_ok(g)) return Status::InvalidValue;
    dot_graph(g, text, 1);
  }
  text += "}\n";
  FILE* f = std::fopen(path, "w");
  if (!f) return Status::NotPermitted;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok ? Status::Ok : Status::NotPermitted;
}

// ---- executable graphs ----------------------------------------------------------------------------------
Status instantiate(Graph* g, unsigned long long flags, Exec** out, InstantiateResult* res, bool no_upload) {
  constexpr unsigned long long kUpload = 2;  // cudaGraphInstantiateFlagUpload
  if ((flags & kUpload) && no_upload) return Status::InvalidValue;
  InstantiateResult local;
  if (!res) res = &local;
  res->result = 1;  // cudaGraphInstantiateError
  if (!out) return Status::InvalidValue;
  if (flags & ~0xFull) return Status::InvalidValue;
  if ((flags & 4) && (flags & 1)) return Status::InvalidValue;  // device launch excludes auto-free
  auto x = std::make_shared<Exec>();
  x->flags = flags;
  {
    std::lock_guard lock(reg().mu);
    if (!graph_ok(g) || g->capture) return Status::InvalidValue;
    x->snapshot = clone_locked(g, false);
    Node* bad = nullptr;
    if (flatten(x->snapshot, &x->order, &bad)) {
      for (Node* n : x->snapshot->nodes) x->by_origin[n->origin] = n;
      res->result = 0;
      res->err_node = nullptr;
      reg().execs[x.get()] = x;
      *out = x.get();
      return Status::Ok;
    }
    res->result = 2;  // cudaGraphInstantiateInvalidStructure: a cycle
    res->err_node = bad ? const_cast<Node*>(bad->origin) : nullptr;
  }
  return Status::InvalidValue;  // x (and its snapshot) is freed here, after the lock
}

Exec::~Exec() {
  Backend& b = Backend::get();
  for (auto [e, waiter] : retired) {
    if (b.stream_valid(waiter)) (void)b.stream_sync(waiter);
    if (b.event_valid(e)) (void)b.event_destroy(e);
  }
  if (done && b.event_valid(done)) (void)b.event_destroy(done);
  delete_graph(snapshot);
  magic = 0;
}

Status exec_destroy(Exec* x) {
  std::shared_ptr<Exec> keep;
  {
    std::lock_guard lock(reg().mu);
    auto it = x ? reg().execs.find(x) : reg().execs.end();
    if (it == reg().execs.end()) return Status::InvalidValue;
    keep = std::move(it->second);
    reg().execs.erase(it);
  }
  return Status::Ok;  // freed with the last launch still using it
}

Status exec_flags(const Exec* x, unsigned long long* out) {
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!x || !reg().execs.count(x)) return Status::InvalidValue;
  *out = x->flags;
  return Status::Ok;
}

namespace {
// Submits one node's work to s, exactly as the same call issued on the stream would.
Status submit(Backend& b, const Params& p, Stream* s) {
  switch (p.type) {
    case NodeType::Kernel: {
      if (!b.function_valid(p.kernel.f)) return Status::InvalidHandle;
      LaunchShape shape = shape_of(p.kernel.grid, p.kernel.block, p.kernel.shmem);
      shape.cooperative = p.kernel.cooperative;
      return b.launch_packed(p.kernel.f, shape, s, p.kernel.packed);
    }
    case NodeType::Memcpy: return b.stream_enqueue(s, [c = p.copy] { (void)c.run(); });
    case NodeType::Memset: return b.stream_enqueue(s, [c = p.set] { (void)c.run(); });
    case NodeType::Host:
      if (p.host.body) return b.stream_host_func(s, p.host.body);
      return b.stream_host_func(s, [fn = p.host.fn, user = p.host.user] { fn(user); });
    case NodeType::EventRecord: return b.event_valid(p.event) ? b.event_record(p.event, s) : Status::InvalidHandle;
    case NodeType::WaitEvent: return b.event_valid(p.event) ? b.stream_wait_event(s, p.event) : Status::InvalidHandle;
    case NodeType::Empty: return p.opaque ? b.stream_enqueue(s, p.opaque) : Status::Ok;
    case NodeType::MemFree:
      // Stream-ordered memory from outside graphs is freed (graph allocations were filtered).
      if (p.free_ptr)
        return b.stream_enqueue(s, [ptr = p.free_ptr] {
          (void)Backend::get().mem_free(ptr, 1u << static_cast<unsigned>(MemKind::Device), ApiOrigin::Internal, true);
        });
      return Status::Ok;
    case NodeType::MemAlloc:
      if (p.alloc) p.alloc->launched.store(true);
      return Status::Ok;
    case NodeType::Graph: return Status::Ok;  // expanded at instantiation
  }
  return Status::Ok;
}
}  // namespace

Status launch(Exec* x, Stream* s) {
  std::vector<Params> work;
  std::shared_ptr<Exec> keep;
  {
    std::lock_guard lock(reg().mu);
    auto it = x ? reg().execs.find(x) : reg().execs.end();
    if (it == reg().execs.end()) return Status::InvalidValue;
    keep = it->second;
    if (Capture* c = s->capture.load(std::memory_order_acquire)) {
      // Launching into a capturing stream captures the whole graph as one child-graph node.
      if (c->invalidated) return Status::CaptureInvalidated;
      Params p;
      p.type = NodeType::Graph;
      Node* n = capture_locked(c, s, std::move(p));
      n->child = clone_locked(x->snapshot, true);
      n->child->parent = n;
      return Status::Ok;
    }
    if (legacy_conflict(s, true)) return Status::CaptureImplicit;
    work.reserve(x->order.size());
    for (const Node* n : x->order) {
      if (!n->enabled) continue;
      work.push_back(n->p);
      // Graph allocations keep their memory (graph.h): their free nodes do nothing.
      if (n->p.type == NodeType::MemFree) {
        auto a = reg().allocs.find(reinterpret_cast<uintptr_t>(n->p.free_ptr));
        if (a != reg().allocs.end() && !a->second.expired()) work.back().free_ptr = nullptr;
      }
    }
  }
  Backend& b = Backend::get();
  std::lock_guard launch_lock(x->launch_mu);
  if (x->done && !b.event_valid(x->done)) x->done = nullptr;  // its context was destroyed
  if (x->done && x->last != s) {
    (void)b.stream_wait_event(s, x->done);
    x->retired.emplace_back(x->done, s);
    x->done = nullptr;
  }
  Status result = Status::Ok;
  for (const Params& p : work)
    if (Status st = submit(b, p, s); st != Status::Ok && result == Status::Ok) result = st;
  if (!x->done) (void)b.event_create(s->ctx, 2 /* cudaEventDisableTiming */, &x->done);
  if (x->done) (void)b.event_record(x->done, s);
  x->last = s;
  std::erase_if(x->retired, [&b](const std::pair<Event*, Stream*>& r) {
    if (b.stream_valid(r.second) && !b.stream_idle(r.second)) return false;
    if (b.event_valid(r.first)) (void)b.event_destroy(r.first);
    return true;
  });
  return result;
}

Status upload(Exec* x, Stream* s) {
  (void)s;  // nothing to upload: launches read the executable graph directly
  std::lock_guard lock(reg().mu);
  return x && reg().execs.count(x) ? Status::Ok : Status::InvalidValue;
}

namespace {
// Pairs the nodes of two graphs by creation order and compares their topology and node types
// (what cudaGraphExecUpdate requires); *res says what differs.
bool same_topology(Graph* a, const Graph* b, UpdateResult* res) {
  if (a->nodes.size() != b->nodes.size()) {
    res->result = 2;  // TopologyChanged
    return false;
  }
  std::unordered_map<const Node*, size_t> ia, ib;
  for (size_t i = 0; i < a->nodes.size(); ++i) ia[a->nodes[i]] = i, ib[b->nodes[i]] = i;
  for (size_t i = 0; i < a->nodes.size(); ++i) {
    const Node* x = a->nodes[i];
    const Node* y = b->nodes[i];
    if (x->p.type != y->p.type) {
      res->result = 3;  // NodeTypeChanged
      res->err_node = const_cast<Node*>(y);
      return false;
    }
    if (x->deps.size() != y->deps.size()) {
      res->result = 2;
      res->err_node = const_cast<Node*>(y);
      return false;
    }
    for (size_t k = 0; k < x->deps.size(); ++k)
      if (ia[x->deps[k]] != ib[y->deps[k]]) {
        res->result = 2;
        res->err_node = const_cast<Node*>(y);
        res->err_from = y->deps[k];
        return false;
      }
    if (x->child && !same_topology(x->child, y->child, res)) return false;
  }
  return true;
}

void copy_params(Graph* a, const Graph* b) {
  for (size_t i = 0; i < a->nodes.size(); ++i) {
    Node* x = a->nodes[i];
    const Node* y = b->nodes[i];
    if (x->child)
      copy_params(x->child, y->child);
    else if (x->p.type != NodeType::MemAlloc && x->p.type != NodeType::MemFree)
      x->p = y->p;
  }
}
}  // namespace

Status exec_update(Exec* x, Graph* g, UpdateResult* res) {
  UpdateResult local;
  if (!res) res = &local;
  *res = UpdateResult{};
  std::lock_guard lock(reg().mu);
  if (!x || !reg().execs.count(x) || !graph_ok(g)) {
    res->result = 1;  // cudaGraphExecUpdateError
    return Status::InvalidValue;
  }
  if (!same_topology(x->snapshot, g, res)) return Status::GraphExecUpdateFailure;
  copy_params(x->snapshot, g);
  res->result = 0;
  return Status::Ok;
}

namespace {
Node* exec_node(const Exec* x, const Node* n) {
  if (!x || !reg().execs.count(x)) return nullptr;
  auto it = x->by_origin.find(n);
  return it == x->by_origin.end() ? nullptr : it->second;
}
}  // namespace

Status exec_set_params(Exec* x, const Node* n, const Params& p) {
  std::lock_guard lock(reg().mu);
  Node* e = exec_node(x, n);
  if (!e || e->p.type != p.type) return Status::InvalidValue;
  switch (p.type) {
    case NodeType::Kernel:
    case NodeType::Memcpy:
    case NodeType::Memset:
    case NodeType::Host:
    case NodeType::EventRecord:
    case NodeType::WaitEvent: e->p = p; return Status::Ok;
    default: return Status::InvalidValue;
  }
}

Status exec_set_child(Exec* x, const Node* n, const Graph* child) {
  std::lock_guard lock(reg().mu);
  Node* e = exec_node(x, n);
  if (!e || e->p.type != NodeType::Graph || !graph_ok(child)) return Status::InvalidValue;
  UpdateResult res;
  if (!same_topology(e->child, child, &res)) return Status::InvalidValue;
  copy_params(e->child, child);
  return Status::Ok;
}

namespace {
// The executable graph's copy of n when it may be disabled: kernel, memcpy and memset nodes.
Node* switchable(const Exec* x, const Node* n) {
  Node* e = exec_node(x, n);
  const NodeType t = e ? e->p.type : NodeType::Empty;
  return t == NodeType::Kernel || t == NodeType::Memcpy || t == NodeType::Memset ? e : nullptr;
}
}  // namespace

Status exec_set_enabled(Exec* x, const Node* n, bool enabled) {
  std::lock_guard lock(reg().mu);
  Node* e = switchable(x, n);
  if (!e) return Status::InvalidValue;
  e->enabled = enabled;
  return Status::Ok;
}

Status exec_enabled(const Exec* x, const Node* n, bool* out) {
  if (!out) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  const Node* e = switchable(x, n);
  if (!e) return Status::InvalidValue;
  *out = e->enabled;
  return Status::Ok;
}

// ---- user objects -------------------------------------------------------------------------------------
Status user_object_create(void* ptr, void (*destroy)(void*), unsigned refs, unsigned flags, UserObject** out) {
  // flags must be cudaUserObjectNoDestructorSync: destructors run on no particular thread.
  if (!out || !destroy || refs == 0 || flags != 1) return Status::InvalidValue;
  auto* o = new UserObject;
  o->ptr = ptr;
  o->destroy = destroy;
  o->refs.store(refs);
  std::lock_guard lock(reg().mu);
  reg().objects.insert(o);
  *out = o;
  return Status::Ok;
}

Status user_object_retain(UserObject* o, unsigned count) {
  if (count == 0 || count > 0x7FFFFFFFu) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!o || !reg().objects.count(o)) return Status::InvalidValue;
  o->refs.fetch_add(count);
  return Status::Ok;
}

Status user_object_release(UserObject* o, unsigned count) {
  if (count == 0 || count > 0x7FFFFFFFu) return Status::InvalidValue;
  {
    std::lock_guard lock(reg().mu);
    if (!o || !reg().objects.count(o)) return Status::InvalidValue;
  }
  release_object(o, count);
  return Status::Ok;
}

Status retain_user_object(Graph* g, UserObject* o, unsigned count, unsigned flags) {
  if (count == 0 || count > 0x7FFFFFFFu || flags > 1) return Status::InvalidValue;
  std::lock_guard lock(reg().mu);
  if (!graph_ok(g) || !o || !reg().objects.count(o)) return Status::InvalidValue;
  if (flags == 0) o->refs.fetch_add(count);  // cudaGraphUserObjectMove: the caller's references move
  for (auto& [obj, n] : g->objects)
    if (obj == o) {
      n += count;
      return Status::Ok;
    }
  g->objects.emplace_back(o, count);
  return Status::Ok;
}

Status release_user_object(Graph* g, UserObject* o, unsigned count) {
  if (count == 0 || count > 0x7FFFFFFFu) return Status::InvalidValue;
  {
    std::lock_guard lock(reg().mu);
    if (!graph_ok(g) || !o || !reg().objects.count(o)) return Status::InvalidValue;
    auto it = std::find_if(g->objects.begin(), g->objects.end(), [o](auto& e) { return e.first == o; });
    if (it == g->objects.end() || it->second < count) return Status::InvalidValue;
    it->second -= count;
    if (it->second == 0) g->objects.erase(it);
  }
  release_object(o, count);
  return Status::Ok;
}

}  // namespace fg::graph
