// SPDX-License-Identifier: Apache-2.0
// Runtime CUDA graphs and stream capture: cudaStreamBeginCapture … cudaStreamEndCapture,
// the capture queries (every ABI of cudaStreamGetCaptureInfo), explicit graph construction
// (cudaGraphAdd*Node, edges, queries, clone), instantiation, launch, executable-graph
// updates, DOT output and user objects. The model and its rules are in core/graph.h; this
// file converts the runtime's structs and maps the core's answers to cudaError_t.
//
// ABI notes: the CUDA 13 names that gained a cudaGraphEdgeData argument in 12.3 keep the
// old argument list under libcudart.so.12 (fgimpl_v12_*); libcudart.so.12's _v2 names are
// the 12.3 forms. Edge data must be all zeros here (only default edges are modelled).
#include "runtime/common.h"

#include "core/graph.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;
using fg::rt::to_cuda;
namespace gr = fg::graph;

namespace {

gr::Graph* graph_of(cudaGraph_t h) { return reinterpret_cast<gr::Graph*>(h); }
gr::Node* node_of(cudaGraphNode_t h) { return reinterpret_cast<gr::Node*>(h); }
gr::Exec* exec_of(cudaGraphExec_t h) { return reinterpret_cast<gr::Exec*>(h); }
cudaGraph_t handle(gr::Graph* g) { return reinterpret_cast<cudaGraph_t>(g); }
cudaGraphNode_t handle(gr::Node* n) { return reinterpret_cast<cudaGraphNode_t>(n); }
gr::Node* const* nodes_of(const cudaGraphNode_t* h) { return reinterpret_cast<gr::Node* const*>(h); }

// Only default edges (all bytes zero) are modelled.
bool default_edges(const cudaGraphEdgeData* e, size_t n) {
  if (!e) return true;
  static const cudaGraphEdgeData zero{};
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(&e[i], &zero, sizeof zero) != 0) return false;
  return true;
}

// The two-call pattern of the list queries: null array → count; else up to *n entries, the
// rest of a longer array nulled, *n = the number actually returned.
template <class T, class Get>
cudaError_t fill(const std::vector<gr::Node*>& v, T* out, size_t* n, Get get) {
  if (!n) return cudaErrorInvalidValue;
  if (!out) {
    *n = v.size();
    return cudaSuccess;
  }
  const size_t k = std::min(*n, v.size());
  for (size_t i = 0; i < k; ++i) out[i] = get(v[i]);
  for (size_t i = k; i < *n; ++i) out[i] = T{};
  *n = k;
  return cudaSuccess;
}

cudaError_t fill_nodes(const std::vector<gr::Node*>& v, cudaGraphNode_t* out, cudaGraphEdgeData* edges, size_t* n) {
  if (edges && !out) return cudaErrorInvalidValue;
  const size_t want = n ? *n : 0;
  cudaError_t e = fill(v, out, n, [](gr::Node* x) { return handle(x); });
  if (e == cudaSuccess && edges)
    for (size_t i = 0; i < want; ++i) edges[i] = cudaGraphEdgeData{};
  return e;
}

// ---- parameter conversions ------------------------------------------------------------------------

// Memory known to CUDA (device, managed, pinned, registered or IPC-mapped) at p.
bool known(const void* p) { return p && be().mem_find(p).has_value(); }

// [p, p+n) wholly inside one known allocation, or wholly outside every one (host memory).
bool range_ok(const void* p, size_t n) {
  const auto u = reinterpret_cast<uintptr_t>(p);
  if (!u) return false;
  if (n == 0) return true;
  auto a = be().mem_find(p);
  if (!a) return !be().mem_find(reinterpret_cast<const void*>(u + n - 1));
  return u + n <= a->base + a->size;
}

cudaError_t kernel_params(const void* func, dim3 grid, dim3 block, unsigned shmem, void** args, void** extra,
                          gr::Params* out) {
  fg::Function* f = func ? be().function_by_host(func) : nullptr;
  if (!f && func) f = be().function_of_handle(func);
  if (!f) return cudaErrorInvalidDeviceFunction;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  if (fg::Status st = fg::Backend::check_launch(f, ctx->dev, g, b, shmem); st != fg::Status::Ok) return to_cuda(st);
  out->type = gr::NodeType::Kernel;
  out->kernel.f = f;
  out->kernel.handle = func;
  std::copy(g, g + 3, out->kernel.grid);
  std::copy(b, b + 3, out->kernel.block);
  out->kernel.shmem = shmem;
  out->kernel.params = args;
  out->kernel.extra = extra;
  out->kernel.ctx = ctx;
  return cudaSuccess;
}

cudaError_t kernel_params(const cudaKernelNodeParams* p, gr::Params* out) {
  if (!p) return cudaErrorInvalidValue;
  return kernel_params(p->func, p->gridDim, p->blockDim, p->sharedMemBytes, p->kernelParams, p->extra, out);
}

void to_runtime(const gr::Kernel& k, cudaKernelNodeParams* p) {
  p->func = const_cast<void*>(k.handle);
  p->gridDim = dim3{k.grid[0], k.grid[1], k.grid[2]};
  p->blockDim = dim3{k.block[0], k.block[1], k.block[2]};
  p->sharedMemBytes = k.shmem;
  p->kernelParams = k.params;
  p->extra = k.extra;
}

bool valid_kind(cudaMemcpyKind k) { return k >= cudaMemcpyHostToHost && k <= cudaMemcpyDefault; }

// The device side(s) a kind names must be memory CUDA knows.
cudaError_t check_copy(const gr::Copy& c, cudaMemcpyKind kind) {
  if (!valid_kind(kind)) return cudaErrorInvalidMemcpyDirection;
  if (c.width == 0 || c.height == 0 || c.depth == 0) return cudaSuccess;
  if (!c.dst || !c.src) return cudaErrorInvalidValue;
  if ((kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) && !known(c.dst))
    return cudaErrorInvalidValue;
  if ((kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) && !known(c.src))
    return cudaErrorInvalidValue;
  const size_t dspan = c.dpitch * c.dheight * (c.depth - 1) + c.dpitch * (c.height - 1) + c.width;
  const size_t sspan = c.spitch * c.sheight * (c.depth - 1) + c.spitch * (c.height - 1) + c.width;
  if (!range_ok(c.dst, dspan) || !range_ok(c.src, sspan)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t copy_1d(void* dst, const void* src, size_t count, cudaMemcpyKind kind, gr::Params* out) {
  out->type = gr::NodeType::Memcpy;
  gr::Copy& c = out->copy;
  c.dst = dst, c.src = src;
  c.dpitch = c.spitch = count;
  c.width = count;
  c.kind = kind;
  return check_copy(c, kind);
}

cudaError_t copy_3d(const cudaMemcpy3DParms* p, gr::Params* out) {
  if (!p) return cudaErrorInvalidValue;
  if (p->srcArray || p->dstArray) return cudaErrorInvalidValue;  // CUDA arrays are not modelled
  if (!p->srcPtr.ptr || !p->dstPtr.ptr) return cudaErrorInvalidValue;
  const cudaExtent& e = p->extent;
  if (e.width > p->srcPtr.pitch || e.width > p->dstPtr.pitch) return cudaErrorInvalidPitchValue;
  const size_t sy = p->srcPtr.ysize ? p->srcPtr.ysize : e.height;
  const size_t dy = p->dstPtr.ysize ? p->dstPtr.ysize : e.height;
  out->type = gr::NodeType::Memcpy;
  gr::Copy& c = out->copy;
  c.src = static_cast<const char*>(p->srcPtr.ptr) + (p->srcPos.z * sy + p->srcPos.y) * p->srcPtr.pitch + p->srcPos.x;
  c.dst = static_cast<char*>(p->dstPtr.ptr) + (p->dstPos.z * dy + p->dstPos.y) * p->dstPtr.pitch + p->dstPos.x;
  c.spitch = p->srcPtr.pitch, c.dpitch = p->dstPtr.pitch;
  c.sheight = sy, c.dheight = dy;
  c.width = e.width, c.height = e.height, c.depth = e.depth;
  c.kind = p->kind;
  return check_copy(c, p->kind);
}

void to_runtime(const gr::Copy& c, cudaMemcpy3DParms* p) {
  *p = cudaMemcpy3DParms{};
  p->srcPtr = cudaPitchedPtr{const_cast<void*>(c.src), c.spitch, c.width, c.sheight};
  p->dstPtr = cudaPitchedPtr{c.dst, c.dpitch, c.width, c.dheight};
  p->extent = cudaExtent{c.width, c.height, c.depth};
  p->kind = static_cast<cudaMemcpyKind>(c.kind);
}

// `symbol` is the host shadow of a registered __device__/__constant__ variable.
cudaError_t symbol_at(const void* symbol, size_t count, size_t offset, char** where) {
  fg::Symbol* sym = symbol ? be().symbol_by_host(symbol) : nullptr;
  if (!sym || !sym->dev_ptr) return cudaErrorInvalidSymbol;
  if (offset > sym->size || count > sym->size - offset) return cudaErrorInvalidValue;
  *where = static_cast<char*>(sym->dev_ptr) + offset;
  return cudaSuccess;
}

cudaError_t copy_to_symbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind,
                           gr::Params* out) {
  char* dst = nullptr;
  if (cudaError_t e = symbol_at(symbol, count, offset, &dst); e != cudaSuccess) return e;
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  return copy_1d(dst, src, count, kind, out);
}

cudaError_t copy_from_symbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                             gr::Params* out) {
  char* src = nullptr;
  if (cudaError_t e = symbol_at(symbol, count, offset, &src); e != cudaSuccess) return e;
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  return copy_1d(dst, src, count, kind, out);
}

cudaError_t memset_params(void* dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height,
                          gr::Params* out) {
  if (elem != 1 && elem != 2 && elem != 4) return cudaErrorInvalidValue;
  if (width == 0 || height == 0) return cudaErrorInvalidValue;
  if (height > 1 && pitch < width * elem) return cudaErrorInvalidValue;
  const size_t span = (height > 1 ? pitch * (height - 1) : 0) + width * elem;
  if (!known(dst) || !range_ok(dst, span)) return cudaErrorInvalidValue;
  out->type = gr::NodeType::Memset;
  out->set = gr::Set{dst, height > 1 ? pitch : width * elem, value, elem, width, height};
  return cudaSuccess;
}

cudaError_t memset_params(const cudaMemsetParams* p, gr::Params* out) {
  if (!p) return cudaErrorInvalidValue;
  return memset_params(p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, out);
}

void to_runtime(const gr::Set& s, cudaMemsetParams* p) {
  *p = cudaMemsetParams{s.dst, s.pitch, s.value, s.elem, s.width, s.height};
}

cudaError_t host_params(cudaHostFn_t fn, void* user, gr::Params* out) {
  if (!fn) return cudaErrorInvalidValue;
  out->type = gr::NodeType::Host;
  out->host.fn = fn;
  out->host.user = user;
  return cudaSuccess;
}

cudaError_t event_params(cudaEvent_t event, gr::NodeType type, gr::Params* out) {
  auto* e = reinterpret_cast<fg::Event*>(event);
  if (!be().event_valid(e)) return cudaErrorInvalidValue;
  out->type = type;
  out->event = e;
  return cudaSuccess;
}

// The runtime's context on a device: the current one if it is that device's, else the
// device's primary context (retained once, as the runtime does on first use).
cudaError_t device_ctx(int ordinal, fg::Context** out) {
  fg::Device* dev = be().device(ordinal);
  if (!dev) return cudaErrorInvalidDevice;
  fg::Context* cur = nullptr;
  if (cudaError_t e = fg::rt::context(&cur); e != cudaSuccess) return e;
  if (cur->dev == dev) {
    *out = cur;
    return cudaSuccess;
  }
  {
    std::lock_guard lock(dev->primary_mu);
    if (dev->primary && dev->primary_refs > 0) {
      *out = dev->primary;
      return cudaSuccess;
    }
  }
  return to_cuda(be().primary_retain(dev, out));
}

cudaError_t alloc_params(const cudaMemPoolProps& props, size_t bytes, gr::Params* out) {
  if (props.allocType != cudaMemAllocationTypePinned || props.handleTypes != cudaMemHandleTypeNone)
    return cudaErrorInvalidValue;
  if (props.location.type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
  if (bytes == 0) return cudaErrorInvalidValue;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = device_ctx(props.location.id, &ctx); e != cudaSuccess) return e;
  out->type = gr::NodeType::MemAlloc;
  return to_cuda(gr::make_alloc(ctx, bytes, fg::ApiOrigin::Runtime, &out->alloc));
}

void to_runtime(const gr::GraphAlloc& a, cudaMemAllocNodeParams* p) {
  *p = cudaMemAllocNodeParams{};
  p->poolProps.allocType = cudaMemAllocationTypePinned;
  p->poolProps.handleTypes = cudaMemHandleTypeNone;
  p->poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, a.device};
  p->bytesize = a.size;
  p->dptr = a.ptr;
}

// A free node frees a graph allocation or a device allocation (exact base).
cudaError_t free_params(void* dptr, gr::Params* out) {
  if (!dptr) return cudaErrorInvalidValue;
  if (!gr::is_graph_alloc(dptr)) {
    auto a = be().mem_find(dptr);
    if (!a || a->base != reinterpret_cast<uintptr_t>(dptr) || a->kind != fg::MemKind::Device)
      return cudaErrorInvalidValue;
  }
  out->type = gr::NodeType::MemFree;
  out->free_ptr = dptr;
  return cudaSuccess;
}

// ---- node helpers ------------------------------------------------------------------------------------

cudaError_t add(cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n, gr::Params p) {
  if (!pNode) return cudaErrorInvalidValue;
  gr::Node* node = nullptr;
  if (fg::Status st = gr::add(graph_of(graph), nodes_of(deps), n, std::move(p), &node); st != fg::Status::Ok)
    return to_cuda(st);
  *pNode = handle(node);
  return cudaSuccess;
}

// Parameters of a node that must be of `type`.
cudaError_t node_params(cudaGraphNode_t node, gr::NodeType type, gr::Params* out) {
  if (fg::Status st = gr::params_of(node_of(node), out); st != fg::Status::Ok) return to_cuda(st);
  return out->type == type ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t set(cudaGraphNode_t node, cudaError_t made, const gr::Params& p) {
  if (made != cudaSuccess) return made;
  return to_cuda(gr::set_params(node_of(node), p));
}

cudaError_t exec_set(cudaGraphExec_t exec, cudaGraphNode_t node, cudaError_t made, const gr::Params& p) {
  if (made != cudaSuccess) return made;
  return to_cuda(gr::exec_set_params(exec_of(exec), node_of(node), p));
}

// ---- generic node parameters (cudaGraphAddNode / cudaGraphNodeSetParams) ---------------------------

cudaError_t generic_params(cudaGraphNodeParams* np, gr::Params* out, bool creating) {
  if (!np) return cudaErrorInvalidValue;
  switch (np->type) {
    case cudaGraphNodeTypeKernel: {
      const auto& k = np->kernel;
      return kernel_params(k.func, k.gridDim, k.blockDim, k.sharedMemBytes, k.kernelParams, k.extra, out);
    }
    case cudaGraphNodeTypeMemcpy:
      if (np->memcpy.flags != 0) return cudaErrorInvalidValue;
      return copy_3d(&np->memcpy.copyParams, out);
    case cudaGraphNodeTypeMemset: {
      const auto& m = np->memset;
      return memset_params(m.dst, m.pitch, m.value, m.elementSize, m.width, m.height, out);
    }
    case cudaGraphNodeTypeHost: return host_params(np->host.fn, np->host.userData, out);
    case cudaGraphNodeTypeEmpty: out->type = gr::NodeType::Empty; return cudaSuccess;
    case cudaGraphNodeTypeEventRecord: return event_params(np->eventRecord.event, gr::NodeType::EventRecord, out);
    case cudaGraphNodeTypeWaitEvent: return event_params(np->eventWait.event, gr::NodeType::WaitEvent, out);
    case cudaGraphNodeTypeMemAlloc:
      if (!creating) return cudaErrorInvalidValue;
      return alloc_params(np->alloc.poolProps, np->alloc.bytesize, out);
    case cudaGraphNodeTypeMemFree:
      if (!creating) return cudaErrorInvalidValue;
      return free_params(np->free.dptr, out);
    case cudaGraphNodeTypeGraph: return cudaErrorInvalidValue;  // handled by the caller
    default: return cudaErrorNotSupported;                      // external semaphores, conditional nodes
  }
}

cudaError_t add_node(cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps,
                     const cudaGraphEdgeData* edges, size_t n, cudaGraphNodeParams* np) {
  if (!pNode || !np) return cudaErrorInvalidValue;
  if (!default_edges(edges, n)) return cudaErrorInvalidValue;
  if (np->type == cudaGraphNodeTypeGraph) {
    if (np->graph.ownership != cudaGraphChildGraphOwnershipClone) return cudaErrorNotSupported;
    gr::Node* node = nullptr;
    if (fg::Status st = gr::add_child(graph_of(graph), nodes_of(deps), n, graph_of(np->graph.graph), &node);
        st != fg::Status::Ok)
      return to_cuda(st);
    *pNode = handle(node);
    return cudaSuccess;
  }
  if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
  gr::Params p;
  if (cudaError_t e = generic_params(np, &p, true); e != cudaSuccess) return e;
  void* dptr = p.alloc ? p.alloc->ptr : nullptr;
  if (cudaError_t e = add(pNode, graph, deps, n, std::move(p)); e != cudaSuccess) return e;
  if (np->type == cudaGraphNodeTypeMemAlloc) np->alloc.dptr = dptr;
  return cudaSuccess;
}

// ---- capture --------------------------------------------------------------------------------------------

cudaError_t begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode, bool per_thread, cudaGraph_t graph = nullptr,
                          const cudaGraphNode_t* deps = nullptr, const cudaGraphEdgeData* edges = nullptr, size_t n = 0,
                          bool to_graph = false) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed) return cudaErrorInvalidValue;
  if (to_graph) {
    if (!graph || (n && !deps) || !default_edges(edges, n)) return cudaErrorInvalidValue;
  }
  return to_cuda(gr::begin_capture(s, mode, graph_of(graph), nodes_of(deps), n));
}

cudaError_t end_capture(cudaStream_t stream, cudaGraph_t* pGraph, bool per_thread) {
  if (!pGraph) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  gr::Graph* g = nullptr;
  fg::Status st = gr::end_capture(s, &g);
  if (st == fg::Status::Ok || st == fg::Status::CaptureInvalidated || st == fg::Status::CaptureUnjoined)
    *pGraph = handle(g);
  return to_cuda(st);
}

// Every ABI of cudaStreamGetCaptureInfo: optional outputs are written when non-null.
cudaError_t capture_info(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                         cudaGraph_t* graph, const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                         size_t* ndeps, bool per_thread) {
  if (!status) return cudaErrorInvalidValue;
  if (edges && !deps) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  gr::CaptureInfo info;
  if (fg::Status st = gr::capture_info(s, &info); st != fg::Status::Ok) return to_cuda(st);
  // Only the status is defined when not capturing; the rest reads as empty.
  *status = static_cast<cudaStreamCaptureStatus>(info.status);
  if (id) *id = info.id;
  if (graph) *graph = handle(info.graph);
  if (deps) *deps = reinterpret_cast<const cudaGraphNode_t*>(info.deps);
  if (edges) *edges = static_cast<const cudaGraphEdgeData*>(info.edges);
  if (ndeps) *ndeps = info.ndeps;
  return cudaSuccess;
}

cudaError_t is_capturing(cudaStream_t stream, cudaStreamCaptureStatus* status, bool per_thread) {
  return capture_info(stream, status, nullptr, nullptr, nullptr, nullptr, nullptr, per_thread);
}

cudaError_t update_deps(cudaStream_t stream, cudaGraphNode_t* deps, const cudaGraphEdgeData* edges, size_t n,
                        unsigned flags, bool per_thread) {
  if ((n && !deps) || !default_edges(edges, n)) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(gr::update_capture_deps(s, nodes_of(deps), n, flags));
}

// ---- instantiation and launch ----------------------------------------------------------------------------

cudaError_t instantiate(cudaGraphExec_t* pExec, cudaGraph_t graph, unsigned long long flags,
                        cudaGraphInstantiateParams* params = nullptr) {
  if (!pExec) return cudaErrorInvalidValue;
  gr::Exec* x = nullptr;
  gr::InstantiateResult res;
  const fg::Status st = gr::instantiate(graph_of(graph), flags, &x, &res);
  if (params) {
    params->result_out = static_cast<cudaGraphInstantiateResult>(res.result);
    params->errNode_out = handle(res.err_node);
  }
  if (st != fg::Status::Ok) return to_cuda(st);
  *pExec = reinterpret_cast<cudaGraphExec_t>(x);
  return cudaSuccess;
}

cudaError_t instantiate_with_params(cudaGraphExec_t* pExec, cudaGraph_t graph, cudaGraphInstantiateParams* params,
                                    bool per_thread) {
  if (!params) return cudaErrorInvalidValue;
  fg::Stream* upload = nullptr;
  if (params->flags & cudaGraphInstantiateFlagUpload) {
    if (cudaError_t e = fg::rt::stream(params->uploadStream, per_thread, &upload); e != cudaSuccess) return e;
  }
  return instantiate(pExec, graph, params->flags, params);
}

cudaError_t launch(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread) {
  if (!gr::valid(exec_of(exec))) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(gr::launch(exec_of(exec), s));
}

cudaError_t upload(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread) {
  if (!gr::valid(exec_of(exec))) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(gr::upload(exec_of(exec), s));
}

// ---- lists -------------------------------------------------------------------------------------------------

cudaError_t get_edges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* edges,
                      size_t* n) {
  if (!n || (!from) != (!to) || (edges && !from)) return cudaErrorInvalidValue;
  std::vector<gr::Node*> f, t;
  if (fg::Status st = gr::edges(graph_of(graph), &f, &t); st != fg::Status::Ok) return to_cuda(st);
  const size_t want = *n;
  if (cudaError_t e = fill(f, from, n, [](gr::Node* x) { return handle(x); }); e != cudaSuccess) return e;
  size_t n2 = want;
  (void)fill(t, to, &n2, [](gr::Node* x) { return handle(x); });
  if (edges)
    for (size_t i = 0; i < want; ++i) edges[i] = cudaGraphEdgeData{};
  return cudaSuccess;
}

cudaError_t node_deps(cudaGraphNode_t node, cudaGraphNode_t* out, cudaGraphEdgeData* edges, size_t* n, bool outgoing) {
  if (!n) return cudaErrorInvalidValue;
  std::vector<gr::Node*> v;
  const fg::Status st = outgoing ? gr::dependents(node_of(node), &v) : gr::dependencies(node_of(node), &v);
  if (st != fg::Status::Ok) return to_cuda(st);
  return fill_nodes(v, out, edges, n);
}

cudaError_t change_deps(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                        const cudaGraphEdgeData* edges, size_t n, bool adding) {
  if (!default_edges(edges, n)) return cudaErrorInvalidValue;
  return to_cuda(adding ? gr::add_edges(graph_of(graph), nodes_of(from), nodes_of(to), n)
                        : gr::remove_edges(graph_of(graph), nodes_of(from), nodes_of(to), n));
}

}  // namespace

// ============================================================================================================
// Stream capture
// ============================================================================================================

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return api([&] { return begin_capture(stream, mode, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return api([&] { return begin_capture(stream, mode, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                                    const cudaGraphNode_t* deps,
                                                                    const cudaGraphEdgeData* edges, size_t n,
                                                                    cudaStreamCaptureMode mode) {
  return api([&] { return begin_capture(stream, mode, false, graph, deps, edges, n, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                                                         const cudaGraphNode_t* deps,
                                                                         const cudaGraphEdgeData* edges, size_t n,
                                                                         cudaStreamCaptureMode mode) {
  return api([&] { return begin_capture(stream, mode, true, graph, deps, edges, n, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  return api([&] { return end_capture(stream, pGraph, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph) {
  return api([&] { return end_capture(stream, pGraph, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return api([&] { return is_capturing(stream, status, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamIsCapturing_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return api([&] { return is_capturing(stream, status, true); });
}

// CUDA 13 (and 12.3+ _v3): (stream, status, id, graph, deps, edgeData, numDeps).
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                               unsigned long long* id, cudaGraph_t* graph,
                                                               const cudaGraphNode_t** deps,
                                                               const cudaGraphEdgeData** edges, size_t* n) {
  return api([&] { return capture_info(stream, status, id, graph, deps, edges, n, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                                                    cudaStreamCaptureStatus* status,
                                                                    unsigned long long* id, cudaGraph_t* graph,
                                                                    const cudaGraphNode_t** deps,
                                                                    const cudaGraphEdgeData** edges, size_t* n) {
  return api([&] { return capture_info(stream, status, id, graph, deps, edges, n, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetCaptureInfo_v3(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                                  unsigned long long* id, cudaGraph_t* graph,
                                                                  const cudaGraphNode_t** deps,
                                                                  const cudaGraphEdgeData** edges, size_t* n) {
  return api([&] { return capture_info(stream, status, id, graph, deps, edges, n, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetCaptureInfo_v3_ptsz(cudaStream_t stream,
                                                                       cudaStreamCaptureStatus* status,
                                                                       unsigned long long* id, cudaGraph_t* graph,
                                                                       const cudaGraphNode_t** deps,
                                                                       const cudaGraphEdgeData** edges, size_t* n) {
  return api([&] { return capture_info(stream, status, id, graph, deps, edges, n, true); });
}
// CUDA 11.3 _v2: (stream, status, id, graph, deps, numDeps).
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetCaptureInfo_v2(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                                  unsigned long long* id, cudaGraph_t* graph,
                                                                  const cudaGraphNode_t** deps, size_t* n) {
  return api([&] { return capture_info(stream, status, id, graph, deps, nullptr, n, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetCaptureInfo_v2_ptsz(cudaStream_t stream,
                                                                       cudaStreamCaptureStatus* status,
                                                                       unsigned long long* id, cudaGraph_t* graph,
                                                                       const cudaGraphNode_t** deps, size_t* n) {
  return api([&] { return capture_info(stream, status, id, graph, deps, nullptr, n, true); });
}
// libcudart.so.12's plain name: the 10.1 form (stream, status, id).
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                                   unsigned long long* id) {
  return api([&] { return capture_info(stream, status, id, nullptr, nullptr, nullptr, nullptr, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                                                        cudaStreamCaptureStatus* status,
                                                                        unsigned long long* id) {
  return api([&] { return capture_info(stream, status, id, nullptr, nullptr, nullptr, nullptr, true); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* deps,
                                                                          const cudaGraphEdgeData* edges, size_t n,
                                                                          unsigned int flags) {
  return api([&] { return update_deps(stream, deps, edges, n, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream,
                                                                               cudaGraphNode_t* deps,
                                                                               const cudaGraphEdgeData* edges, size_t n,
                                                                               unsigned int flags) {
  return api([&] { return update_deps(stream, deps, edges, n, flags, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamUpdateCaptureDependencies_v2(cudaStream_t stream, cudaGraphNode_t* deps,
                                                                             const cudaGraphEdgeData* edges, size_t n,
                                                                             unsigned int flags) {
  return api([&] { return update_deps(stream, deps, edges, n, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamUpdateCaptureDependencies_v2_ptsz(cudaStream_t stream,
                                                                                  cudaGraphNode_t* deps,
                                                                                  const cudaGraphEdgeData* edges,
                                                                                  size_t n, unsigned int flags) {
  return api([&] { return update_deps(stream, deps, edges, n, flags, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaStreamUpdateCaptureDependencies(cudaStream_t stream,
                                                                              cudaGraphNode_t* deps, size_t n,
                                                                              unsigned int flags) {
  return api([&] { return update_deps(stream, deps, nullptr, n, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream,
                                                                                   cudaGraphNode_t* deps, size_t n,
                                                                                   unsigned int flags) {
  return api([&] { return update_deps(stream, deps, nullptr, n, flags, true); });
}

// Swaps the thread's capture interaction mode (Global 0, ThreadLocal 1, Relaxed 2).
extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  return api([&]() -> cudaError_t {
    if (!mode) return cudaErrorInvalidValue;
    const int m = static_cast<int>(*mode);
    if (m < cudaStreamCaptureModeGlobal || m > cudaStreamCaptureModeRelaxed) return cudaErrorInvalidValue;
    auto& st = fg::thread_state();
    *mode = static_cast<cudaStreamCaptureMode>(st.capture_mode);
    st.capture_mode = m;
    return cudaSuccess;
  });
}

// ============================================================================================================
// Graphs
// ============================================================================================================

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!pGraph) return cudaErrorInvalidValue;
    gr::Graph* g = nullptr;
    if (fg::Status st = gr::create(flags, &g); st != fg::Status::Ok) return to_cuda(st);
    *pGraph = handle(g);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphDestroy(cudaGraph_t graph) {
  return api([&] { return to_cuda(gr::destroy(graph_of(graph))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphClone(cudaGraph_t* pClone, cudaGraph_t graph) {
  return api([&]() -> cudaError_t {
    if (!pClone) return cudaErrorInvalidValue;
    gr::Graph* g = nullptr;
    if (fg::Status st = gr::clone(graph_of(graph), &g); st != fg::Status::Ok) return to_cuda(st);
    *pClone = handle(g);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphNodeFindInClone(cudaGraphNode_t* pNode, cudaGraphNode_t original,
                                                               cudaGraph_t cloned) {
  return api([&]() -> cudaError_t {
    if (!pNode) return cudaErrorInvalidValue;
    gr::Node* n = nullptr;
    if (fg::Status st = gr::find_in_clone(node_of(original), graph_of(cloned), &n); st != fg::Status::Ok)
      return to_cuda(st);
    *pNode = handle(n);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path, unsigned int flags) {
  return api([&]() -> cudaError_t {
    const fg::Status st = gr::dot_print(graph_of(graph), path, flags);
    return st == fg::Status::NotPermitted ? cudaErrorOperatingSystem : to_cuda(st);
  });
}

// ---- kernel nodes -------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddKernelNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                             const cudaGraphNode_t* deps, size_t n,
                                                             const cudaKernelNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = kernel_params(p, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphKernelNodeGetParams(cudaGraphNode_t node, cudaKernelNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = node_params(node, gr::NodeType::Kernel, &params); e != cudaSuccess) return e;
    to_runtime(params.kernel, p);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                                   const cudaKernelNodeParams* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, kernel_params(p, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                       const cudaKernelNodeParams* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return exec_set(exec, node, kernel_params(p, &params), params);
  });
}

// ---- memcpy nodes --------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                             const cudaGraphNode_t* deps, size_t n,
                                                             const cudaMemcpy3DParms* p) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = copy_3d(p, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                               const cudaGraphNode_t* deps, size_t n, void* dst,
                                                               const void* src, size_t count, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = copy_1d(dst, src, count, kind, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                                     const cudaGraphNode_t* deps, size_t n,
                                                                     const void* symbol, const void* src, size_t count,
                                                                     size_t offset, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = copy_to_symbol(symbol, src, count, offset, kind, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                                       const cudaGraphNode_t* deps, size_t n, void* dst,
                                                                       const void* symbol, size_t count, size_t offset,
                                                                       cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = copy_from_symbol(dst, symbol, count, offset, kind, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, cudaMemcpy3DParms* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = node_params(node, gr::NodeType::Memcpy, &params); e != cudaSuccess) return e;
    to_runtime(params.copy, p);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const cudaMemcpy3DParms* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, copy_3d(p, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void* dst, const void* src,
                                                                     size_t count, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, copy_1d(dst, src, count, kind, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void* symbol,
                                                                           const void* src, size_t count, size_t offset,
                                                                           cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, copy_to_symbol(symbol, src, count, offset, kind, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void* dst,
                                                                             const void* symbol, size_t count,
                                                                             size_t offset, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, copy_from_symbol(dst, symbol, count, offset, kind, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                       const cudaMemcpy3DParms* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return exec_set(exec, node, copy_3d(p, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                         void* dst, const void* src, size_t count,
                                                                         cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return exec_set(exec, node, copy_1d(dst, src, count, kind, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t exec,
                                                                               cudaGraphNode_t node, const void* symbol,
                                                                               const void* src, size_t count,
                                                                               size_t offset, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return exec_set(exec, node, copy_to_symbol(symbol, src, count, offset, kind, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t exec,
                                                                                 cudaGraphNode_t node, void* dst,
                                                                                 const void* symbol, size_t count,
                                                                                 size_t offset, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return exec_set(exec, node, copy_from_symbol(dst, symbol, count, offset, kind, &params), params);
  });
}

// ---- memset nodes --------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemsetNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                             const cudaGraphNode_t* deps, size_t n,
                                                             const cudaMemsetParams* p) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = memset_params(p, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, cudaMemsetParams* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = node_params(node, gr::NodeType::Memset, &params); e != cudaSuccess) return e;
    to_runtime(params.set, p);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const cudaMemsetParams* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, memset_params(p, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                       const cudaMemsetParams* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return exec_set(exec, node, memset_params(p, &params), params);
  });
}

// ---- host nodes ----------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddHostNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                           const cudaGraphNode_t* deps, size_t n,
                                                           const cudaHostNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph)) || !p) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = host_params(p->fn, p->userData, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = node_params(node, gr::NodeType::Host, &params); e != cudaSuccess) return e;
    *p = cudaHostNodeParams{params.host.fn, params.host.user};
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    gr::Params params;
    return set(node, host_params(p->fn, p->userData, &params), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                     const cudaHostNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    gr::Params params;
    return exec_set(exec, node, host_params(p->fn, p->userData, &params), params);
  });
}

// ---- child graph, empty and event nodes ------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddChildGraphNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                                 const cudaGraphNode_t* deps, size_t n,
                                                                 cudaGraph_t child) {
  return api([&]() -> cudaError_t {
    if (!pNode) return cudaErrorInvalidValue;
    gr::Node* node = nullptr;
    if (fg::Status st = gr::add_child(graph_of(graph), nodes_of(deps), n, graph_of(child), &node); st != fg::Status::Ok)
      return to_cuda(st);
    *pNode = handle(node);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* pGraph) {
  return api([&]() -> cudaError_t {
    if (!pGraph) return cudaErrorInvalidValue;
    gr::Graph* g = nullptr;
    if (fg::Status st = gr::child_of(node_of(node), &g); st != fg::Status::Ok) return to_cuda(st);
    *pGraph = handle(g);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                           cudaGraph_t child) {
  return api([&] { return to_cuda(gr::exec_set_child(exec_of(exec), node_of(node), graph_of(child))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddEmptyNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                            const cudaGraphNode_t* deps, size_t n) {
  return api([&] { return add(pNode, graph, deps, n, gr::Params{}); });
}

#define FG_EVENT_NODE(Kind, type)                                                                                     \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAdd##Kind##Node(                                                     \
      cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n, cudaEvent_t event) {          \
    return api([&]() -> cudaError_t {                                                                                 \
      if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;                                                  \
      gr::Params params;                                                                                              \
      if (cudaError_t e = event_params(event, type, &params); e != cudaSuccess) return e;                             \
      return add(pNode, graph, deps, n, std::move(params));                                                           \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraph##Kind##NodeGetEvent(cudaGraphNode_t node, cudaEvent_t* out) {       \
    return api([&]() -> cudaError_t {                                                                                 \
      if (!out) return cudaErrorInvalidValue;                                                                         \
      gr::Params params;                                                                                              \
      if (cudaError_t e = node_params(node, type, &params); e != cudaSuccess) return e;                               \
      *out = reinterpret_cast<cudaEvent_t>(params.event);                                                             \
      return cudaSuccess;                                                                                             \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraph##Kind##NodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {      \
    return api([&]() -> cudaError_t {                                                                                 \
      gr::Params params;                                                                                              \
      return set(node, event_params(event, type, &params), params);                                                   \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExec##Kind##NodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node, \
                                                                          cudaEvent_t event) {                        \
    return api([&]() -> cudaError_t {                                                                                 \
      gr::Params params;                                                                                              \
      return exec_set(exec, node, event_params(event, type, &params), params);                                        \
    });                                                                                                               \
  }
FG_EVENT_NODE(EventRecord, gr::NodeType::EventRecord)
FG_EVENT_NODE(EventWait, gr::NodeType::WaitEvent)
#undef FG_EVENT_NODE

// ---- memory nodes --------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemAllocNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                               const cudaGraphNode_t* deps, size_t n,
                                                               cudaMemAllocNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!p || !gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = alloc_params(p->poolProps, p->bytesize, &params); e != cudaSuccess) return e;
    void* dptr = params.alloc->ptr;
    if (cudaError_t e = add(pNode, graph, deps, n, std::move(params)); e != cudaSuccess) return e;
    p->dptr = dptr;
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
                                                                     cudaMemAllocNodeParams* out) {
  return api([&]() -> cudaError_t {
    if (!out) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = node_params(node, gr::NodeType::MemAlloc, &params); e != cudaSuccess) return e;
    to_runtime(*params.alloc, out);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemFreeNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                              const cudaGraphNode_t* deps, size_t n, void* dptr) {
  return api([&]() -> cudaError_t {
    if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = free_params(dptr, &params); e != cudaSuccess) return e;
    return add(pNode, graph, deps, n, std::move(params));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
  return api([&]() -> cudaError_t {
    if (!dptr_out) return cudaErrorInvalidValue;
    gr::Params params;
    if (cudaError_t e = node_params(node, gr::NodeType::MemFree, &params); e != cudaSuccess) return e;
    *static_cast<void**>(dptr_out) = params.free_ptr;
    return cudaSuccess;
  });
}

// ---- generic nodes -------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                       const cudaGraphNode_t* deps, const cudaGraphEdgeData* edges,
                                                       size_t n, cudaGraphNodeParams* p) {
  return api([&] { return add_node(pNode, graph, deps, edges, n, p); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddNode_v2(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                          const cudaGraphNode_t* deps, const cudaGraphEdgeData* edges,
                                                          size_t n, cudaGraphNodeParams* p) {
  return api([&] { return add_node(pNode, graph, deps, edges, n, p); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaGraphAddNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                           const cudaGraphNode_t* deps, size_t n,
                                                           cudaGraphNodeParams* p) {
  return api([&] { return add_node(pNode, graph, deps, nullptr, n, p); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphNodeSetParams(cudaGraphNode_t node, cudaGraphNodeParams* p) {
  return api([&]() -> cudaError_t {
    gr::Params params;
    return set(node, generic_params(p, &params, false), params);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                 cudaGraphNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (p && p->type == cudaGraphNodeTypeGraph)
      return to_cuda(gr::exec_set_child(exec_of(exec), node_of(node), graph_of(p->graph.graph)));
    gr::Params params;
    return exec_set(exec, node, generic_params(p, &params, false), params);
  });
}

// ---- structure ------------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* pType) {
  return api([&]() -> cudaError_t {
    if (!pType) return cudaErrorInvalidValue;
    gr::NodeType t;
    if (fg::Status st = gr::type_of(node_of(node), &t); st != fg::Status::Ok) return to_cuda(st);
    *pType = static_cast<cudaGraphNodeType>(t);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* n) {
  return api([&]() -> cudaError_t {
    std::vector<gr::Node*> v;
    if (fg::Status st = gr::nodes(graph_of(graph), &v); st != fg::Status::Ok) return to_cuda(st);
    return fill_nodes(v, nodes, nullptr, n);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* n) {
  return api([&]() -> cudaError_t {
    std::vector<gr::Node*> v;
    if (fg::Status st = gr::roots(graph_of(graph), &v); st != fg::Status::Ok) return to_cuda(st);
    return fill_nodes(v, nodes, nullptr, n);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                                        cudaGraphEdgeData* edges, size_t* n) {
  return api([&] { return get_edges(graph, from, to, edges, n); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphGetEdges_v2(cudaGraph_t graph, cudaGraphNode_t* from,
                                                           cudaGraphNode_t* to, cudaGraphEdgeData* edges, size_t* n) {
  return api([&] { return get_edges(graph, from, to, edges, n); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from,
                                                            cudaGraphNode_t* to, size_t* n) {
  return api([&] { return get_edges(graph, from, to, nullptr, n); });
}

#define FG_NODE_LIST(name, outgoing)                                                                           \
  extern "C" FG_IMPL cudaError_t fgimpl_##name(cudaGraphNode_t node, cudaGraphNodeT_out* out,                  \
                                               cudaGraphEdgeData* edges, size_t* n) {                          \
    return api([&] { return node_deps(node, out, edges, n, outgoing); });                                      \
  }                                                                                                            \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##_v2(cudaGraphNode_t node, cudaGraphNodeT_out* out,             \
                                                    cudaGraphEdgeData* edges, size_t* n) {                     \
    return api([&] { return node_deps(node, out, edges, n, outgoing); });                                      \
  }                                                                                                            \
  extern "C" FG_IMPL cudaError_t fgimpl_v12_##name(cudaGraphNode_t node, cudaGraphNodeT_out* out, size_t* n) { \
    return api([&] { return node_deps(node, out, nullptr, n, outgoing); });                                    \
  }
using cudaGraphNodeT_out = cudaGraphNode_t;
FG_NODE_LIST(cudaGraphNodeGetDependencies, false)
FG_NODE_LIST(cudaGraphNodeGetDependentNodes, true)
#undef FG_NODE_LIST

#define FG_EDGE_CHANGE(name, adding)                                                                                  \
  extern "C" FG_IMPL cudaError_t fgimpl_##name(cudaGraph_t graph, const cudaGraphNode_t* from,                        \
                                               const cudaGraphNode_t* to, const cudaGraphEdgeData* edges, size_t n) { \
    return api([&] { return change_deps(graph, from, to, edges, n, adding); });                                       \
  }                                                                                                                   \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##_v2(cudaGraph_t graph, const cudaGraphNode_t* from,                   \
                                                    const cudaGraphNode_t* to, const cudaGraphEdgeData* edges,        \
                                                    size_t n) {                                                       \
    return api([&] { return change_deps(graph, from, to, edges, n, adding); });                                       \
  }                                                                                                                   \
  extern "C" FG_IMPL cudaError_t fgimpl_v12_##name(cudaGraph_t graph, const cudaGraphNode_t* from,                    \
                                                   const cudaGraphNode_t* to, size_t n) {                             \
    return api([&] { return change_deps(graph, from, to, nullptr, n, adding); });                                     \
  }
FG_EDGE_CHANGE(cudaGraphAddDependencies, true)
FG_EDGE_CHANGE(cudaGraphRemoveDependencies, false)
#undef FG_EDGE_CHANGE

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphDestroyNode(cudaGraphNode_t node) {
  return api([&] { return to_cuda(gr::destroy_node(node_of(node))); });
}

// ============================================================================================================
// Executable graphs
// ============================================================================================================

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphInstantiate(cudaGraphExec_t* pExec, cudaGraph_t graph,
                                                           unsigned long long flags) {
  return api([&] { return instantiate(pExec, graph, flags); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphInstantiateWithFlags(cudaGraphExec_t* pExec, cudaGraph_t graph,
                                                                    unsigned long long flags) {
  // The upload flag needs a stream: only cudaGraphInstantiateWithParams takes one.
  return api([&]() -> cudaError_t {
    if (flags & cudaGraphInstantiateFlagUpload) return cudaErrorInvalidValue;
    return instantiate(pExec, graph, flags);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphInstantiateWithParams(cudaGraphExec_t* pExec, cudaGraph_t graph,
                                                                     cudaGraphInstantiateParams* params) {
  return api([&] { return instantiate_with_params(pExec, graph, params, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* pExec, cudaGraph_t graph,
                                                                          cudaGraphInstantiateParams* params) {
  return api([&] { return instantiate_with_params(pExec, graph, params, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long* flags) {
  return api([&] { return to_cuda(gr::exec_flags(exec_of(exec), flags)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecDestroy(cudaGraphExec_t exec) {
  return api([&] { return to_cuda(gr::exec_destroy(exec_of(exec))); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  return api([&] { return launch(exec, stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  return api([&] { return launch(exec, stream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
  return api([&] { return upload(exec, stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  return api([&] { return upload(exec, stream, true); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                                          cudaGraphExecUpdateResultInfo* info) {
  return api([&]() -> cudaError_t {
    if (!info) return cudaErrorInvalidValue;
    gr::UpdateResult res;
    const fg::Status st = gr::exec_update(exec_of(exec), graph_of(graph), &res);
    info->result = static_cast<cudaGraphExecUpdateResult>(res.result);
    info->errorNode = handle(res.err_node);
    info->errorFromNode = handle(res.err_from);
    return to_cuda(st);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphNodeSetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                              unsigned int isEnabled) {
  return api([&] { return to_cuda(gr::exec_set_enabled(exec_of(exec), node_of(node), isEnabled != 0)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphNodeGetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                              unsigned int* isEnabled) {
  return api([&]() -> cudaError_t {
    if (!isEnabled) return cudaErrorInvalidValue;
    bool on = false;
    if (fg::Status st = gr::exec_enabled(exec_of(exec), node_of(node), &on); st != fg::Status::Ok) return to_cuda(st);
    *isEnabled = on ? 1u : 0u;
    return cudaSuccess;
  });
}

// ============================================================================================================
// User objects
// ============================================================================================================

extern "C" FG_IMPL cudaError_t fgimpl_cudaUserObjectCreate(cudaUserObject_t* out, void* ptr, cudaHostFn_t destroy,
                                                           unsigned int refs, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!out) return cudaErrorInvalidValue;
    gr::UserObject* o = nullptr;
    if (fg::Status st = gr::user_object_create(ptr, destroy, refs, flags, &o); st != fg::Status::Ok) return to_cuda(st);
    *out = reinterpret_cast<cudaUserObject_t>(o);
    return cudaSuccess;
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  return api([&] { return to_cuda(gr::user_object_retain(reinterpret_cast<gr::UserObject*>(object), count)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return api([&] { return to_cuda(gr::user_object_release(reinterpret_cast<gr::UserObject*>(object), count)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                                                unsigned int count, unsigned int flags) {
  return api([&] {
    return to_cuda(gr::retain_user_object(graph_of(graph), reinterpret_cast<gr::UserObject*>(object), count, flags));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                                                 unsigned int count) {
  return api([&] {
    return to_cuda(gr::release_user_object(graph_of(graph), reinterpret_cast<gr::UserObject*>(object), count));
  });
}
