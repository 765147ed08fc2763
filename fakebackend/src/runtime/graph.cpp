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

#include "common/graph_handles.h"

#include <cstddef>

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;
using fg::rt::to_cuda;
namespace gr = fg::graph;
using namespace fg::graph::shim;

namespace {

// ---- parameter conversions ------------------------------------------------------------------------

// Memory known to CUDA (device, managed, pinned, registered or IPC-mapped) at p.
bool known(const void* p) { return p && be().mem_find(p).has_value(); }

// [p, p+n) wholly inside one known allocation, or wholly outside every one (host memory).
bool range_ok(const void* p, size_t n) { return be().range_ok(p, n, false); }

cudaError_t kernel_params(const void* func, dim3 grid, dim3 block, unsigned shmem, void** args, void** extra,
                          gr::Params* out) {
  fg::Function* f = func ? be().function_by_host(func) : nullptr;
  if (!f && func) f = be().function_of_handle(func);
  if (!f) return cudaErrorInvalidDeviceFunction;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  return to_cuda(gr::kernel_node(f, func, ctx, g, b, shmem, args, extra, out));
}

cudaError_t params(const cudaKernelNodeParams* p, gr::Params* out) {
  if (!p) return cudaErrorInvalidValue;
  return kernel_params(p->func, p->gridDim, p->blockDim, p->sharedMemBytes, p->kernelParams, p->extra, out);
}

void to_runtime(const gr::Params& n, cudaKernelNodeParams* p) {
  const gr::Kernel& k = n.kernel;
  p->func = const_cast<void*>(k.handle);
  p->gridDim = dim3{k.grid[0], k.grid[1], k.grid[2]};
  p->blockDim = dim3{k.block[0], k.block[1], k.block[2]};
  p->sharedMemBytes = k.shmem;
  p->kernelParams = k.params;
  p->extra = k.extra;
}

bool valid_kind(cudaMemcpyKind k) { return k >= cudaMemcpyHostToHost && k <= cudaMemcpyDefault; }

// The device side(s) a kind names must be memory CUDA knows. A node copies something: an
// empty extent or count is cudaErrorInvalidValue, as the driver's memcpy nodes answer and as
// NVIDIA's runtime answers for 1-D and symbol nodes (ROCm/hip-tests, NVIDIA-only sections
// "count == 0" of cudaGraphAddMemcpyNode1D, cudaGraph(Exec)MemcpyNodeSetParams1D and the
// symbol forms).
cudaError_t check_copy(const gr::Copy& c, cudaMemcpyKind kind) {
  if (!valid_kind(kind)) return cudaErrorInvalidMemcpyDirection;
  if (c.width == 0 || c.height == 0 || c.depth == 0) return cudaErrorInvalidValue;
  if (!c.dst || !c.src) return cudaErrorInvalidValue;
  if ((kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) && !known(c.dst))
    return cudaErrorInvalidValue;
  if ((kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) && !known(c.src))
    return cudaErrorInvalidValue;
  if (!range_ok(c.dst, c.dst_span()) || !range_ok(c.src, c.src_span())) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t copy_1d(void* dst, const void* src, size_t count, cudaMemcpyKind kind, gr::Params* out) {
  if (fg::Status st = gr::copy_node({dst, count}, {src, count}, count, 1, 1, out, kind); st != fg::Status::Ok)
    return to_cuda(st);
  return check_copy(out->copy, kind);
}

cudaError_t params(const cudaMemcpy3DParms* p, gr::Params* out) {
  if (!p) return cudaErrorInvalidValue;
  if (p->srcArray || p->dstArray) return cudaErrorInvalidValue;  // CUDA arrays are not modelled
  if (!p->srcPtr.ptr || !p->dstPtr.ptr) return cudaErrorInvalidValue;
  const cudaExtent& e = p->extent;
  if (e.width > p->srcPtr.pitch || e.width > p->dstPtr.pitch) return cudaErrorInvalidPitchValue;
  auto side = [&](const cudaPitchedPtr& v, const cudaPos& at) {
    return gr::Volume{v.ptr, v.pitch, v.ysize ? v.ysize : e.height, at.x, at.y, at.z};
  };
  if (fg::Status st = gr::copy_node(side(p->dstPtr, p->dstPos), side(p->srcPtr, p->srcPos), e.width, e.height, e.depth,
                                    out, p->kind);
      st != fg::Status::Ok)
    return to_cuda(st);
  return check_copy(out->copy, p->kind);
}

void to_runtime(const gr::Params& n, cudaMemcpy3DParms* p) {
  const gr::Copy& c = n.copy;
  *p = cudaMemcpy3DParms{};
  p->srcPtr = cudaPitchedPtr{const_cast<void*>(c.src), c.spitch, c.width, c.sheight};
  p->dstPtr = cudaPitchedPtr{c.dst, c.dpitch, c.width, c.dheight};
  p->extent = cudaExtent{c.width, c.height, c.depth};
  p->kind = static_cast<cudaMemcpyKind>(c.kind);
}

// A copy to (`to_symbol`) or from a registered variable: its storage is the device side, which
// the kind must name (or be the default).
cudaError_t symbol_copy(bool to_symbol, const void* symbol, const void* other, size_t count, size_t offset,
                        cudaMemcpyKind kind, gr::Params* out) {
  char* dev = nullptr;
  if (cudaError_t e = fg::rt::symbol_range(symbol, count, offset, &dev); e != cudaSuccess) return e;
  const cudaMemcpyKind toward = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (kind != toward && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  return to_symbol ? copy_1d(dev, other, count, kind, out) : copy_1d(const_cast<void*>(other), dev, count, kind, out);
}
cudaError_t copy_to_symbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind,
                           gr::Params* out) {
  return symbol_copy(true, symbol, src, count, offset, kind, out);
}
cudaError_t copy_from_symbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                             gr::Params* out) {
  return symbol_copy(false, symbol, dst, count, offset, kind, out);
}

cudaError_t memset_params(void* dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height,
                          gr::Params* out) {
  if (fg::Status st = gr::memset_node(dst, pitch, value, elem, width, height, out); st != fg::Status::Ok)
    return to_cuda(st);
  return known(dst) && range_ok(dst, out->set.span()) ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t params(const cudaMemsetParams* p, gr::Params* out) {
  if (!p) return cudaErrorInvalidValue;
  return memset_params(p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, out);
}

void to_runtime(const gr::Params& n, cudaMemsetParams* p) {
  const gr::Set& s = n.set;
  *p = cudaMemsetParams{s.dst, s.pitch, s.value, s.elem, s.width, s.height};
}

cudaError_t params(const cudaHostNodeParams* p, gr::Params* out) {
  return p ? to_cuda(gr::host_node(p->fn, p->userData, out)) : cudaErrorInvalidValue;
}

void to_runtime(const gr::Params& n, cudaHostNodeParams* p) { *p = cudaHostNodeParams{n.host.fn, n.host.user}; }

cudaError_t event_params(cudaEvent_t event, gr::NodeType type, gr::Params* out) {
  return to_cuda(gr::event_node(reinterpret_cast<fg::Event*>(event), type, out));
}

void to_runtime(const gr::Params& n, cudaEvent_t* e) { *e = reinterpret_cast<cudaEvent_t>(n.event); }

static_assert(sizeof(cudaMemAccessDesc) == sizeof(gr::AccessDesc) && offsetof(cudaMemAccessDesc, flags) == 8);

// An allocation node's parameters (cudaMemAllocNodeParams or its V2).
template <class S>
cudaError_t alloc_params(const S& p, gr::Params* out) {
  const cudaMemPoolProps& props = p.poolProps;
  const gr::AllocProps core{props.allocType,     props.handleTypes,
                            props.location.type, props.location.id,
                            p.bytesize,          reinterpret_cast<const gr::AccessDesc*>(p.accessDescs),
                            p.accessDescCount};
  fg::Device* dev = nullptr;
  if (fg::Status st = gr::alloc_device(core, &dev); st != fg::Status::Ok) return to_cuda(st);
  fg::Context* current = nullptr;
  if (cudaError_t e = fg::rt::context(&current); e != cudaSuccess) return e;
  return to_cuda(gr::alloc_node(dev, current, p.bytesize, fg::ApiOrigin::Runtime, out));
}

void to_runtime(const gr::Params& n, cudaMemAllocNodeParams* p) {
  const gr::GraphAlloc& a = *n.alloc;
  *p = cudaMemAllocNodeParams{};
  p->poolProps.allocType = cudaMemAllocationTypePinned;
  p->poolProps.handleTypes = cudaMemHandleTypeNone;
  p->poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, a.device};
  p->bytesize = a.size;
  p->dptr = a.ptr;
}

void to_runtime(const gr::Params& n, void** dptr) { *dptr = n.free_ptr; }

// ---- node helpers ------------------------------------------------------------------------------------

cudaError_t add(cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n, gr::Params p) {
  return to_cuda(gr::add(graph_of(graph), nodes_of(deps), n, std::move(p), out_of<gr::Node>(pNode)));
}

// Graph handle first: its error comes before the parameters'. *dptr (optional): the address of
// an allocation node's memory.
template <class Make>
cudaError_t add_made(cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n, Make make,
                     void** dptr = nullptr) {
  if (!gr::valid(graph_of(graph))) return cudaErrorInvalidValue;
  gr::Params p;
  if (cudaError_t e = make(&p); e != cudaSuccess) return e;
  void* mem = p.alloc ? p.alloc->ptr : nullptr;
  if (cudaError_t e = add(pNode, graph, deps, n, std::move(p)); e != cudaSuccess) return e;
  if (dptr) *dptr = mem;
  return cudaSuccess;
}

// The parameters of a node of `type`, translated into the caller's struct.
template <class P>
cudaError_t get(cudaGraphNode_t node, gr::NodeType type, P* out) {
  if (!out) return cudaErrorInvalidValue;
  gr::Params p;
  if (fg::Status st = gr::params_of(node_of(node), type, &p); st != fg::Status::Ok) return to_cuda(st);
  to_runtime(p, out);
  return cudaSuccess;
}

// New parameters that `make` builds, for a node or (exec_set) its copy in an executable graph.
template <class Make>
cudaError_t set(cudaGraphNode_t node, Make make) {
  gr::Params p;
  if (cudaError_t e = make(&p); e != cudaSuccess) return e;
  return to_cuda(gr::set_params(node_of(node), p));
}
template <class Make>
cudaError_t exec_set(cudaGraphExec_t exec, cudaGraphNode_t node, Make make) {
  gr::Params p;
  if (cudaError_t e = make(&p); e != cudaSuccess) return e;
  return to_cuda(gr::exec_set_params(exec_of(exec), node_of(node), p));
}

// ---- generic node parameters (cudaGraphAddNode / cudaGraphNodeSetParams) ---------------------------

cudaError_t generic_params(cudaGraphNodeParams* np, gr::Params* out, bool creating) {
  if (!np) return cudaErrorInvalidValue;
  if (fg::Status st = gr::generic_type(np->type, creating); st != fg::Status::Ok) return to_cuda(st);
  switch (np->type) {
    case cudaGraphNodeTypeKernel: {
      const auto& k = np->kernel;
      return kernel_params(k.func, k.gridDim, k.blockDim, k.sharedMemBytes, k.kernelParams, k.extra, out);
    }
    case cudaGraphNodeTypeMemcpy:
      if (np->memcpy.flags != 0) return cudaErrorInvalidValue;
      return params(&np->memcpy.copyParams, out);
    case cudaGraphNodeTypeMemset: {
      const auto& m = np->memset;
      return memset_params(m.dst, m.pitch, m.value, m.elementSize, m.width, m.height, out);
    }
    case cudaGraphNodeTypeHost: return to_cuda(gr::host_node(np->host.fn, np->host.userData, out));
    case cudaGraphNodeTypeEventRecord: return event_params(np->eventRecord.event, gr::NodeType::EventRecord, out);
    case cudaGraphNodeTypeWaitEvent: return event_params(np->eventWait.event, gr::NodeType::WaitEvent, out);
    case cudaGraphNodeTypeMemAlloc: return alloc_params(np->alloc, out);
    case cudaGraphNodeTypeMemFree: return to_cuda(gr::free_node(np->free.dptr, out));
    default: out->type = gr::NodeType::Empty; return cudaSuccess;
  }
}

cudaError_t add_node(cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps,
                     const cudaGraphEdgeData* edges, size_t n, cudaGraphNodeParams* np) {
  if (!pNode || !np || !gr::default_edges(edges, n)) return cudaErrorInvalidValue;
  if (np->type == cudaGraphNodeTypeGraph) {
    const auto& c = np->graph;
    return to_cuda(
        gr::add_child(graph_of(graph), nodes_of(deps), n, graph_of(c.graph), out_of<gr::Node>(pNode), c.ownership));
  }
  void** dptr = np->type == cudaGraphNodeTypeMemAlloc ? &np->alloc.dptr : nullptr;
  return add_made(
      pNode, graph, deps, n, [&](gr::Params* p) { return generic_params(np, p, true); }, dptr);
}

// ---- capture --------------------------------------------------------------------------------------------

cudaError_t begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode, bool per_thread, cudaGraph_t graph = nullptr,
                          const cudaGraphNode_t* deps = nullptr, const cudaGraphEdgeData* edges = nullptr, size_t n = 0,
                          bool to_graph = false) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(gr::begin_capture(s, mode, to_graph, graph_of(graph), nodes_of(deps), edges, n));
}

cudaError_t end_capture(cudaStream_t stream, cudaGraph_t* pGraph, bool per_thread) {
  if (!pGraph) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(gr::end_capture(s, out_of<gr::Graph>(pGraph)));
}

// Every ABI of cudaStreamGetCaptureInfo (and cudaStreamIsCapturing): the outputs an ABI lacks
// are null; optional outputs are written when non-null.
cudaError_t capture_info(cudaStream_t stream, bool per_thread, cudaStreamCaptureStatus* status,
                         unsigned long long* id = nullptr, cudaGraph_t* graph = nullptr,
                         const cudaGraphNode_t** deps = nullptr, const cudaGraphEdgeData** edges = nullptr,
                         size_t* ndeps = nullptr) {
  if (!status) return cudaErrorInvalidValue;
  if (edges && !deps) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  gr::CaptureInfo info;
  if (fg::Status st = gr::capture_info(s, &info); st != fg::Status::Ok) return to_cuda(st);
  put_capture_info(info, status, id, graph, deps, edges, ndeps);
  return cudaSuccess;
}

cudaError_t update_deps(cudaStream_t stream, cudaGraphNode_t* deps, const cudaGraphEdgeData* edges, size_t n,
                        unsigned flags, bool per_thread) {
  if ((n && !deps) || !gr::default_edges(edges, n)) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(gr::update_capture_deps(s, nodes_of(deps), n, flags));
}

// ---- instantiation and launch ----------------------------------------------------------------------------

cudaError_t instantiate(cudaGraphExec_t* pExec, cudaGraph_t graph, unsigned long long flags,
                        cudaGraphInstantiateParams* params = nullptr, bool no_upload = false) {
  if (!pExec) return cudaErrorInvalidValue;
  gr::InstantiateResult res;
  const fg::Status st = gr::instantiate(graph_of(graph), flags, out_of<gr::Exec>(pExec), &res, no_upload);
  if (params) {
    params->result_out = static_cast<cudaGraphInstantiateResult>(res.result);
    params->errNode_out = handle(res.err_node);
  }
  return to_cuda(st);
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

cudaError_t launch(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread, bool upload) {
  if (!gr::valid(exec_of(exec))) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(upload ? gr::upload(exec_of(exec), s) : gr::launch(exec_of(exec), s));
}

// ---- lists -------------------------------------------------------------------------------------------------

cudaError_t get_edges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* edges,
                      size_t* n) {
  return to_cuda(gr::edges(graph_of(graph), list_out(from), list_out(to), edges, n));
}

cudaError_t node_deps(cudaGraphNode_t node, cudaGraphNode_t* out, cudaGraphEdgeData* edges, size_t* n, bool outgoing) {
  const auto list = outgoing ? gr::dependents : gr::dependencies;
  return to_cuda(list(node_of(node), list_out(out), edges, n));
}

cudaError_t change_deps(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                        const cudaGraphEdgeData* edges, size_t n, bool adding) {
  const auto change = adding ? gr::add_edges : gr::remove_edges;
  return to_cuda(change(graph_of(graph), nodes_of(from), nodes_of(to), edges, n));
}

}  // namespace

// ============================================================================================================
// Stream capture
// ============================================================================================================

// An entry point and its per-thread-default-stream twin (_ptsz: a null stream is the calling
// thread's default stream): both make the call, with `per_thread` set for the twin.
#define FG_PTSZ(name, args, ...)                             \
  extern "C" FG_IMPL cudaError_t fgimpl_##name args {        \
    constexpr bool per_thread = false;                       \
    return api([&] { return __VA_ARGS__; });                 \
  }                                                          \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##_ptsz args { \
    constexpr bool per_thread = true;                        \
    return api([&] { return __VA_ARGS__; });                 \
  }

FG_PTSZ(cudaStreamBeginCapture, (cudaStream_t stream, cudaStreamCaptureMode mode),
        begin_capture(stream, mode, per_thread))
FG_PTSZ(cudaStreamBeginCaptureToGraph,
        (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps, const cudaGraphEdgeData* edges, size_t n,
         cudaStreamCaptureMode mode),
        begin_capture(stream, mode, per_thread, graph, deps, edges, n, true))
FG_PTSZ(cudaStreamEndCapture, (cudaStream_t stream, cudaGraph_t* pGraph), end_capture(stream, pGraph, per_thread))
FG_PTSZ(cudaStreamIsCapturing, (cudaStream_t stream, cudaStreamCaptureStatus* status),
        capture_info(stream, per_thread, status))

// CUDA 13 (and 12.3+ _v3): (stream, status, id, graph, deps, edgeData, numDeps).
#define FG_CAPTURE_INFO(name)                                                                                 \
  FG_PTSZ(name,                                                                                               \
          (cudaStream_t stream, cudaStreamCaptureStatus * status, unsigned long long* id, cudaGraph_t* graph, \
           const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges, size_t* n),                         \
          capture_info(stream, per_thread, status, id, graph, deps, edges, n))
FG_CAPTURE_INFO(cudaStreamGetCaptureInfo)
FG_CAPTURE_INFO(cudaStreamGetCaptureInfo_v3)
#undef FG_CAPTURE_INFO
// CUDA 11.3 _v2: (stream, status, id, graph, deps, numDeps).
FG_PTSZ(cudaStreamGetCaptureInfo_v2,
        (cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id, cudaGraph_t* graph,
         const cudaGraphNode_t** deps, size_t* n),
        capture_info(stream, per_thread, status, id, graph, deps, nullptr, n))
// libcudart.so.12's plain name: the 10.1 form (stream, status, id).
FG_PTSZ(v12_cudaStreamGetCaptureInfo, (cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id),
        capture_info(stream, per_thread, status, id))

#define FG_UPDATE_DEPS(name)                                                                                           \
  FG_PTSZ(name,                                                                                                        \
          (cudaStream_t stream, cudaGraphNode_t * deps, const cudaGraphEdgeData* edges, size_t n, unsigned int flags), \
          update_deps(stream, deps, edges, n, flags, per_thread))
FG_UPDATE_DEPS(cudaStreamUpdateCaptureDependencies)
FG_UPDATE_DEPS(cudaStreamUpdateCaptureDependencies_v2)
#undef FG_UPDATE_DEPS
FG_PTSZ(v12_cudaStreamUpdateCaptureDependencies,
        (cudaStream_t stream, cudaGraphNode_t* deps, size_t n, unsigned int flags),
        update_deps(stream, deps, nullptr, n, flags, per_thread))

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
  return api([&] { return to_cuda(gr::create(flags, out_of<gr::Graph>(pGraph))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphDestroy(cudaGraph_t graph) {
  return api([&] { return to_cuda(gr::destroy(graph_of(graph))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphClone(cudaGraph_t* pClone, cudaGraph_t graph) {
  return api([&] { return to_cuda(gr::clone(graph_of(graph), out_of<gr::Graph>(pClone))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphNodeFindInClone(cudaGraphNode_t* pNode, cudaGraphNode_t original,
                                                               cudaGraph_t cloned) {
  return api([&] { return to_cuda(gr::find_in_clone(node_of(original), graph_of(cloned), out_of<gr::Node>(pNode))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path, unsigned int flags) {
  return api([&]() -> cudaError_t {
    const fg::Status st = gr::dot_print(graph_of(graph), path, flags);
    return st == fg::Status::NotPermitted ? cudaErrorOperatingSystem : to_cuda(st);
  });
}

// ---- kernel, memcpy, memset and host nodes ---------------------------------------------------------------------

// The four calls of a node type whose parameters come in one struct P: params() builds the
// node's parameters from a P, to_runtime() hands them back.
#define FG_NODE_CALLS(Kind, P, type)                                                                                   \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAdd##Kind##Node(cudaGraphNode_t* pNode, cudaGraph_t graph,            \
                                                                 const cudaGraphNode_t* deps, size_t n, const P* p) {  \
    return api([&] { return add_made(pNode, graph, deps, n, [&](gr::Params* out) { return params(p, out); }); });      \
  }                                                                                                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraph##Kind##NodeGetParams(cudaGraphNode_t node, P* p) {                   \
    return api([&] { return get(node, type, p); });                                                                    \
  }                                                                                                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraph##Kind##NodeSetParams(cudaGraphNode_t node, const P* p) {             \
    return api([&] { return set(node, [&](gr::Params* out) { return params(p, out); }); });                            \
  }                                                                                                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExec##Kind##NodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, \
                                                                           const P* p) {                               \
    return api([&] { return exec_set(exec, node, [&](gr::Params* out) { return params(p, out); }); });                 \
  }
FG_NODE_CALLS(Kernel, cudaKernelNodeParams, gr::NodeType::Kernel)
FG_NODE_CALLS(Memcpy, cudaMemcpy3DParms, gr::NodeType::Memcpy)
FG_NODE_CALLS(Memset, cudaMemsetParams, gr::NodeType::Memset)
FG_NODE_CALLS(Host, cudaHostNodeParams, gr::NodeType::Host)
#undef FG_NODE_CALLS

// The 1D and symbol forms of memcpy nodes.
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                               const cudaGraphNode_t* deps, size_t n, void* dst,
                                                               const void* src, size_t count, cudaMemcpyKind kind) {
  return api([&] {
    return add_made(pNode, graph, deps, n, [&](gr::Params* p) { return copy_1d(dst, src, count, kind, p); });
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                                     const cudaGraphNode_t* deps, size_t n,
                                                                     const void* symbol, const void* src, size_t count,
                                                                     size_t offset, cudaMemcpyKind kind) {
  return api([&] {
    return add_made(pNode, graph, deps, n,
                    [&](gr::Params* p) { return copy_to_symbol(symbol, src, count, offset, kind, p); });
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                                       const cudaGraphNode_t* deps, size_t n, void* dst,
                                                                       const void* symbol, size_t count, size_t offset,
                                                                       cudaMemcpyKind kind) {
  return api([&] {
    return add_made(pNode, graph, deps, n,
                    [&](gr::Params* p) { return copy_from_symbol(dst, symbol, count, offset, kind, p); });
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void* dst, const void* src,
                                                                     size_t count, cudaMemcpyKind kind) {
  return api([&] { return set(node, [&](gr::Params* p) { return copy_1d(dst, src, count, kind, p); }); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void* symbol,
                                                                           const void* src, size_t count, size_t offset,
                                                                           cudaMemcpyKind kind) {
  return api(
      [&] { return set(node, [&](gr::Params* p) { return copy_to_symbol(symbol, src, count, offset, kind, p); }); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void* dst,
                                                                             const void* symbol, size_t count,
                                                                             size_t offset, cudaMemcpyKind kind) {
  return api(
      [&] { return set(node, [&](gr::Params* p) { return copy_from_symbol(dst, symbol, count, offset, kind, p); }); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                         void* dst, const void* src, size_t count,
                                                                         cudaMemcpyKind kind) {
  return api([&] { return exec_set(exec, node, [&](gr::Params* p) { return copy_1d(dst, src, count, kind, p); }); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t exec,
                                                                               cudaGraphNode_t node, const void* symbol,
                                                                               const void* src, size_t count,
                                                                               size_t offset, cudaMemcpyKind kind) {
  return api([&] {
    return exec_set(exec, node, [&](gr::Params* p) { return copy_to_symbol(symbol, src, count, offset, kind, p); });
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t exec,
                                                                                 cudaGraphNode_t node, void* dst,
                                                                                 const void* symbol, size_t count,
                                                                                 size_t offset, cudaMemcpyKind kind) {
  return api([&] {
    return exec_set(exec, node, [&](gr::Params* p) { return copy_from_symbol(dst, symbol, count, offset, kind, p); });
  });
}

// ---- child graph, empty and event nodes ------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddChildGraphNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                                 const cudaGraphNode_t* deps, size_t n,
                                                                 cudaGraph_t child) {
  return api([&] {
    return to_cuda(gr::add_child(graph_of(graph), nodes_of(deps), n, graph_of(child), out_of<gr::Node>(pNode)));
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* pGraph) {
  return api([&] { return to_cuda(gr::child_of(node_of(node), out_of<gr::Graph>(pGraph))); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                           cudaGraph_t child) {
  return api([&] { return to_cuda(gr::exec_set_child(exec_of(exec), node_of(node), graph_of(child))); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddEmptyNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                            const cudaGraphNode_t* deps, size_t n) {
  return api([&] { return add(pNode, graph, deps, n, gr::Params{}); });
}

#define FG_EVENT_NODE(Kind, type)                                                                                      \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAdd##Kind##Node(                                                      \
      cudaGraphNode_t* pNode, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n, cudaEvent_t event) {           \
    return api(                                                                                                        \
        [&] { return add_made(pNode, graph, deps, n, [&](gr::Params* p) { return event_params(event, type, p); }); }); \
  }                                                                                                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraph##Kind##NodeGetEvent(cudaGraphNode_t node, cudaEvent_t* out) {        \
    return api([&] { return get(node, type, out); });                                                                  \
  }                                                                                                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraph##Kind##NodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {       \
    return api([&] { return set(node, [&](gr::Params* p) { return event_params(event, type, p); }); });                \
  }                                                                                                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExec##Kind##NodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,  \
                                                                          cudaEvent_t event) {                         \
    return api([&] { return exec_set(exec, node, [&](gr::Params* p) { return event_params(event, type, p); }); });     \
  }
FG_EVENT_NODE(EventRecord, gr::NodeType::EventRecord)
FG_EVENT_NODE(EventWait, gr::NodeType::WaitEvent)
#undef FG_EVENT_NODE

// ---- memory nodes --------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemAllocNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                               const cudaGraphNode_t* deps, size_t n,
                                                               cudaMemAllocNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    auto make = [&](gr::Params* out) { return alloc_params(*p, out); };
    return add_made(pNode, graph, deps, n, make, &p->dptr);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
                                                                     cudaMemAllocNodeParams* out) {
  return api([&] { return get(node, gr::NodeType::MemAlloc, out); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphAddMemFreeNode(cudaGraphNode_t* pNode, cudaGraph_t graph,
                                                              const cudaGraphNode_t* deps, size_t n, void* dptr) {
  return api(
      [&] { return add_made(pNode, graph, deps, n, [&](gr::Params* p) { return to_cuda(gr::free_node(dptr, p)); }); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
  return api([&] { return get(node, gr::NodeType::MemFree, static_cast<void**>(dptr_out)); });
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
  return api([&] { return set(node, [&](gr::Params* out) { return generic_params(p, out, false); }); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                 cudaGraphNodeParams* p) {
  return api([&]() -> cudaError_t {
    if (p && p->type == cudaGraphNodeTypeGraph)
      return to_cuda(gr::exec_set_child(exec_of(exec), node_of(node), graph_of(p->graph.graph)));
    return exec_set(exec, node, [&](gr::Params* out) { return generic_params(p, out, false); });
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
  return api([&] { return to_cuda(gr::nodes(graph_of(graph), list_out(nodes), n)); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* n) {
  return api([&] { return to_cuda(gr::roots(graph_of(graph), list_out(nodes), n)); });
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
  return api([&] { return instantiate(pExec, graph, flags, nullptr, true); });
}
FG_PTSZ(cudaGraphInstantiateWithParams,
        (cudaGraphExec_t * pExec, cudaGraph_t graph, cudaGraphInstantiateParams* params),
        instantiate_with_params(pExec, graph, params, per_thread))
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long* flags) {
  return api([&] { return to_cuda(gr::exec_flags(exec_of(exec), flags)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphExecDestroy(cudaGraphExec_t exec) {
  return api([&] { return to_cuda(gr::exec_destroy(exec_of(exec))); });
}
FG_PTSZ(cudaGraphLaunch, (cudaGraphExec_t exec, cudaStream_t stream), launch(exec, stream, per_thread, false))
FG_PTSZ(cudaGraphUpload, (cudaGraphExec_t exec, cudaStream_t stream), launch(exec, stream, per_thread, true))
#undef FG_PTSZ

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
  return api([&] { return to_cuda(gr::user_object_create(ptr, destroy, refs, flags, out_of<gr::UserObject>(out))); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  return api([&] { return to_cuda(gr::user_object_retain(object_of(object), count)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return api([&] { return to_cuda(gr::user_object_release(object_of(object), count)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                                                unsigned int count, unsigned int flags) {
  return api([&] { return to_cuda(gr::retain_user_object(graph_of(graph), object_of(object), count, flags)); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object,
                                                                 unsigned int count) {
  return api([&] { return to_cuda(gr::release_user_object(graph_of(graph), object_of(object), count)); });
}
