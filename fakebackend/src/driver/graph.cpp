// SPDX-License-Identifier: Apache-2.0
// Driver CUDA graphs and stream capture: cuStreamBeginCapture … cuStreamEndCapture, the
// capture queries (v1, _v2, _v3), explicit graph construction (cuGraphAdd*Node, edges,
// queries, clone), instantiation (the legacy 5-argument cuGraphInstantiate too), launch,
// executable-graph updates, DOT output and user objects. The model and its rules are in
// core/graph.h; this file converts the driver's structs and maps the core's answers to
// CUresult.
//
// ABI notes: the plain names keep their oldest ABI (cuGraphAddKernelNode takes
// CUDA_KERNEL_NODE_PARAMS_v1, cuStreamBeginCapture takes no mode, cuGraphGetEdges no edge
// data); the _v2/_v3 names are the newer forms cuda.h maps the plain spellings to. Edge
// data must be all zeros here (only default edges are modelled).
#include "driver/internal.h"

#include "common/graph_handles.h"

#include <cstddef>
#include <cstdio>

using namespace fg;
using namespace fg::drv;
namespace gr = fg::graph;
using namespace fg::graph::shim;

namespace {

// A context argument of a node (memcpy/memset): null means the current context.
CUresult node_ctx(Backend& b, CUcontext h) {
  Context* ctx = nullptr;
  return h ? context_arg(b, h, &ctx) : current(b, &ctx);
}

// ---- parameter conversions ------------------------------------------------------------------------------

CUresult kernel_params(Backend& b, CUfunction func, CUkernel kern, const unsigned grid[3], const unsigned block[3],
                       unsigned shmem, void** args, void** extra, gr::Params* out) {
  Function* f = nullptr;
  CUfunction h = func ? func : reinterpret_cast<CUfunction>(kern);
  if (!h || function_arg(b, h, &f) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (CUresult r = current(b, &ctx)) return r;
  return to_cu(gr::kernel_node(f, h, ctx, grid, block, shmem, args, extra, out));
}

// The v1, v2 and v3 kernel structs share their first fields; v2/v3 add kern and ctx.
template <class P>
CUresult kernel_params(Backend& b, const P* p, CUkernel kern, gr::Params* out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  return kernel_params(b, p->func, kern, grid, block, p->sharedMemBytes, p->kernelParams, p->extra, out);
}
CUresult params(Backend& b, const CUDA_KERNEL_NODE_PARAMS_v1* p, gr::Params* out) {
  return kernel_params(b, p, nullptr, out);
}
CUresult params(Backend& b, const CUDA_KERNEL_NODE_PARAMS_v2* p, gr::Params* out) {
  return kernel_params(b, p, p ? p->kern : nullptr, out);
}

template <class P>
void to_driver(const gr::Kernel& k, P* p) {
  *p = P{};
  p->func = static_cast<CUfunction>(const_cast<void*>(k.handle));
  p->gridDimX = k.grid[0], p->gridDimY = k.grid[1], p->gridDimZ = k.grid[2];
  p->blockDimX = k.block[0], p->blockDimY = k.block[1], p->blockDimZ = k.block[2];
  p->sharedMemBytes = k.shmem;
  p->kernelParams = k.params;
  p->extra = k.extra;
}
void to_driver(Backend&, const gr::Params& n, CUDA_KERNEL_NODE_PARAMS_v1* p) { to_driver(n.kernel, p); }
void to_driver(Backend&, const gr::Params& n, CUDA_KERNEL_NODE_PARAMS_v2* p) {
  to_driver(n.kernel, p);
  p->ctx = reinterpret_cast<CUcontext>(n.kernel.ctx_handle);
}

// One side of a CUDA_MEMCPY3D: its base address and whether it must be device memory.
CUresult side(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, const void** base, bool* dev) {
  switch (static_cast<int>(type)) {
    case CU_MEMORYTYPE_HOST: *base = host, *dev = false; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE: *base = ptr_of(device), *dev = true; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED: *base = ptr_of(device), *dev = false; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY: return array ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult params(Backend& b, const CUDA_MEMCPY3D* p, gr::Params* out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  const void *src = nullptr, *dst = nullptr;
  bool sdev = false, ddev = false;
  if (CUresult r = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, &src, &sdev)) return r;
  if (CUresult r = side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, &dst, &ddev)) return r;
  if (p->reserved0 || p->reserved1 || p->srcLOD || p->dstLOD) return CUDA_ERROR_INVALID_VALUE;
  const size_t w = p->WidthInBytes, h = p->Height, depth = p->Depth;
  if (w == 0 || h == 0 || depth == 0) return CUDA_ERROR_INVALID_VALUE;
  const size_t spitch = p->srcPitch ? p->srcPitch : w, dpitch = p->dstPitch ? p->dstPitch : w;
  if ((h > 1 || depth > 1) && (spitch < w || dpitch < w)) return CUDA_ERROR_INVALID_VALUE;
  const size_t sheight = p->srcHeight ? p->srcHeight : h, dheight = p->dstHeight ? p->dstHeight : h;
  if (depth > 1 && (sheight < h || dheight < h)) return CUDA_ERROR_INVALID_VALUE;
  if (!src || !dst) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = to_cu(gr::copy_node({dst, dpitch, dheight, p->dstXInBytes, p->dstY, p->dstZ},
                                       {src, spitch, sheight, p->srcXInBytes, p->srcY, p->srcZ}, w, h, depth, out)))
    return r;
  const gr::Copy& c = out->copy;
  if (CUresult r = check_side(b, c.dst, c.dst_span(), ddev, true)) return r;
  return check_side(b, c.src, c.src_span(), sdev, false);
}

void to_driver(Backend& b, const gr::Params& n, CUDA_MEMCPY3D* p) {
  const gr::Copy& c = n.copy;
  *p = CUDA_MEMCPY3D{};
  auto fill_side = [&](const void* ptr, CUmemorytype* type, CUdeviceptr* dev, const void** host) {
    if (b.mem_find(ptr)) {
      *type = CU_MEMORYTYPE_UNIFIED;
      *dev = dptr_of(ptr);
    } else {
      *type = CU_MEMORYTYPE_HOST;
      *host = ptr;
    }
  };
  const void* dhost = nullptr;
  fill_side(c.src, &p->srcMemoryType, &p->srcDevice, &p->srcHost);
  fill_side(c.dst, &p->dstMemoryType, &p->dstDevice, &dhost);
  p->dstHost = const_cast<void*>(dhost);
  p->srcPitch = c.spitch, p->dstPitch = c.dpitch;
  p->srcHeight = c.sheight, p->dstHeight = c.dheight;
  p->WidthInBytes = c.width, p->Height = c.height, p->Depth = c.depth;
}

CUresult memset_params(Backend& b, CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem, size_t width,
                       size_t height, gr::Params* out) {
  if (CUresult r = to_cu(gr::memset_node(ptr_of(dst), pitch, value, elem, width, height, out))) return r;
  if (dst % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  return check_side(b, out->set.dst, out->set.span(), true, true);
}

// The v1 and v2 memset structs share these fields; v2 adds ctx.
template <class P>
CUresult memset_params(Backend& b, const P* p, gr::Params* out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return memset_params(b, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, out);
}
CUresult params(Backend& b, const CUDA_MEMSET_NODE_PARAMS* p, gr::Params* out) { return memset_params(b, p, out); }

void to_driver(Backend&, const gr::Params& n, CUDA_MEMSET_NODE_PARAMS* p) {
  const gr::Set& s = n.set;
  *p = CUDA_MEMSET_NODE_PARAMS{dptr_of(s.dst), s.pitch, s.value, s.elem, s.width, s.height};
}

CUresult params(Backend&, const CUDA_HOST_NODE_PARAMS* p, gr::Params* out) {
  return p ? to_cu(gr::host_node(p->fn, p->userData, out)) : CUDA_ERROR_INVALID_VALUE;
}

void to_driver(Backend&, const gr::Params& n, CUDA_HOST_NODE_PARAMS* p) {
  *p = CUDA_HOST_NODE_PARAMS{n.host.fn, n.host.user};
}

CUresult event_params(CUevent e, gr::NodeType type, gr::Params* out) {
  return to_cu(gr::event_node(event_of(e), type, out));
}

void to_driver(Backend&, const gr::Params& n, CUevent* e) { *e = reinterpret_cast<CUevent>(n.event); }

static_assert(sizeof(CUmemAccessDesc) == sizeof(gr::AccessDesc) && offsetof(CUmemAccessDesc, flags) == 8);

// An allocation node's parameters (CUDA_MEM_ALLOC_NODE_PARAMS, v1 or v2).
template <class S>
CUresult alloc_params(Backend& b, const S& p, gr::Params* out) {
  const CUmemPoolProps& props = p.poolProps;
  const gr::AllocProps core{props.allocType,     props.handleTypes,
                            props.location.type, props.location.id,
                            p.bytesize,          reinterpret_cast<const gr::AccessDesc*>(p.accessDescs),
                            p.accessDescCount};
  Device* dev = nullptr;
  if (CUresult r = to_cu(gr::alloc_device(core, &dev))) return r;
  Context* cur = nullptr;
  if (CUresult r = current(b, &cur)) return r;
  return to_cu(gr::alloc_node(dev, cur, p.bytesize, ApiOrigin::Driver, out));
}

void to_driver(Backend&, const gr::Params& n, CUDA_MEM_ALLOC_NODE_PARAMS* p) {
  const gr::GraphAlloc& a = *n.alloc;
  *p = CUDA_MEM_ALLOC_NODE_PARAMS{};
  p->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p->poolProps.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p->poolProps.location.id = a.device;
  p->bytesize = a.size;
  p->dptr = dptr_of(a.ptr);
}

void to_driver(Backend&, const gr::Params& n, CUdeviceptr* dptr) { *dptr = dptr_of(n.free_ptr); }

// ---- node helpers -------------------------------------------------------------------------------------

CUresult add(CUgraphNode* phNode, CUgraph graph, const CUgraphNode* deps, size_t n, gr::Params p) {
  return to_cu(gr::add(graph_of(graph), nodes_of(deps), n, std::move(p), out_of<gr::Node>(phNode)));
}

// Graph handle check first: its error comes before the parameters'. *dptr (optional): the
// address of an allocation node's memory.
template <class Make>
CUresult add_made(CUgraphNode* phNode, CUgraph graph, const CUgraphNode* deps, size_t n, Make make,
                  CUdeviceptr* dptr = nullptr) {
  return api([&](Backend& b) -> CUresult {
    if (!phNode || !gr::valid(graph_of(graph))) return CUDA_ERROR_INVALID_VALUE;
    gr::Params p;
    if (CUresult r = make(b, &p)) return r;
    const CUdeviceptr mem = p.alloc ? dptr_of(p.alloc->ptr) : 0;
    if (CUresult r = add(phNode, graph, deps, n, std::move(p))) return r;
    if (dptr) *dptr = mem;
    return CUDA_SUCCESS;
  });
}

// The parameters of a node of `type`, translated into the caller's struct.
template <class P>
CUresult get(CUgraphNode node, gr::NodeType type, P* out) {
  return api([&](Backend& b) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    gr::Params p;
    if (CUresult r = to_cu(gr::params_of(node_of(node), type, &p))) return r;
    to_driver(b, p, out);
    return CUDA_SUCCESS;
  });
}

// New parameters that `make` builds, for a node or (exec_set) its copy in an executable graph.
template <class Make>
CUresult set(CUgraphNode node, Make make) {
  return api([&](Backend& b) -> CUresult {
    gr::Params p;
    if (CUresult r = make(b, &p)) return r;
    return to_cu(gr::set_params(node_of(node), p));
  });
}
template <class Make>
CUresult exec_set(CUgraphExec exec, CUgraphNode node, Make make) {
  return api([&](Backend& b) -> CUresult {
    gr::Params p;
    if (CUresult r = make(b, &p)) return r;
    return to_cu(gr::exec_set_params(exec_of(exec), node_of(node), p));
  });
}

CUresult generic_params(Backend& b, CUgraphNodeParams* np, gr::Params* out, bool creating) {
  if (!np) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = to_cu(gr::generic_type(np->type, creating))) return r;
  switch (np->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      Context* ctx = nullptr;
      if (!np->kernel.func && np->kernel.ctx && context_arg(b, np->kernel.ctx, &ctx)) return CUDA_ERROR_INVALID_VALUE;
      return kernel_params(b, &np->kernel, np->kernel.kern, out);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      if (np->memcpy.flags != 0 || np->memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      if (CUresult r = node_ctx(b, np->memcpy.copyCtx)) return r;
      return params(b, &np->memcpy.copyParams, out);
    case CU_GRAPH_NODE_TYPE_MEMSET:
      if (CUresult r = node_ctx(b, np->memset.ctx)) return r;
      return memset_params(b, &np->memset, out);
    case CU_GRAPH_NODE_TYPE_HOST: return to_cu(gr::host_node(np->host.fn, np->host.userData, out));
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return event_params(np->eventRecord.event, gr::NodeType::EventRecord, out);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return event_params(np->eventWait.event, gr::NodeType::WaitEvent, out);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return alloc_params(b, np->alloc, out);
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return to_cu(gr::free_node(ptr_of(np->free.dptr), out));
    default: out->type = gr::NodeType::Empty; return CUDA_SUCCESS;  // generic_type refused the rest
  }
}

CUresult add_node(CUgraphNode* phNode, CUgraph graph, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
                  CUgraphNodeParams* np) {
  return api([&](Backend&) -> CUresult {
    if (!phNode || !np || !gr::default_edges(edges, n)) return CUDA_ERROR_INVALID_VALUE;
    if (np->type == CU_GRAPH_NODE_TYPE_GRAPH) {
      const auto& c = np->graph;
      return to_cu(
          gr::add_child(graph_of(graph), nodes_of(deps), n, graph_of(c.graph), out_of<gr::Node>(phNode), c.ownership));
    }
    CUdeviceptr* dptr = np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ? &np->alloc.dptr : nullptr;
    return add_made(
        phNode, graph, deps, n, [&](Backend& b, gr::Params* p) { return generic_params(b, np, p, true); }, dptr);
  });
}

// ---- capture ------------------------------------------------------------------------------------------------

CUresult begin_capture(CUstream h, int mode, bool ptsz, CUgraph graph = nullptr, const CUgraphNode* deps = nullptr,
                       const CUgraphEdgeData* edges = nullptr, size_t n = 0, bool to_graph = false) {
  return api([&](Backend& b) -> CUresult {
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    return to_cu(gr::begin_capture(s, mode, to_graph, graph_of(graph), nodes_of(deps), edges, n));
  });
}

CUresult end_capture(CUstream h, CUgraph* phGraph, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    return to_cu(gr::end_capture(s, out_of<gr::Graph>(phGraph)));
  });
}

// Every ABI of cuStreamGetCaptureInfo (and cuStreamIsCapturing): the outputs an ABI lacks are
// null; optional outputs are written when non-null.
CUresult capture_info(CUstream h, bool ptsz, CUstreamCaptureStatus* status, cuuint64_t* id = nullptr,
                      CUgraph* graph = nullptr, const CUgraphNode** deps = nullptr,
                      const CUgraphEdgeData** edges = nullptr, size_t* ndeps = nullptr) {
  return api([&](Backend& b) -> CUresult {
    if (!status || (edges && !deps)) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    gr::CaptureInfo info;
    if (CUresult r = to_cu(gr::capture_info(s, &info))) return r;
    put_capture_info(info, status, id, graph, deps, edges, ndeps);
    return CUDA_SUCCESS;
  });
}

CUresult update_deps(CUstream h, CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n, unsigned flags, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if ((n && !deps) || !gr::default_edges(edges, n)) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    return to_cu(gr::update_capture_deps(s, nodes_of(deps), n, flags));
  });
}

// ---- instantiation and launch -----------------------------------------------------------------------------

CUresult instantiate(CUgraphExec* phExec, CUgraph graph, unsigned long long flags, gr::InstantiateResult* res,
                     bool no_upload = false) {
  if (!phExec) return CUDA_ERROR_INVALID_VALUE;
  return to_cu(gr::instantiate(graph_of(graph), flags, out_of<gr::Exec>(phExec), res, no_upload));
}

CUresult launch(CUgraphExec exec, CUstream h, bool ptsz, bool upload) {
  return api([&](Backend& b) -> CUresult {
    if (!gr::valid(exec_of(exec))) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    return to_cu(upload ? gr::upload(exec_of(exec), s) : gr::launch(exec_of(exec), s));
  });
}

CUresult instantiate_with_params(CUgraphExec* phExec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    if (params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
      Stream* s = nullptr;
      if (CUresult r = stream_arg(b, params->hUploadStream, ptsz, &s)) return r;
    }
    gr::InstantiateResult res;
    const CUresult r = instantiate(phExec, graph, params->flags, &res);
    params->result_out = static_cast<CUgraphInstantiateResult>(res.result);
    params->hErrNode_out = handle(res.err_node);
    return r;
  });
}

// ---- lists ---------------------------------------------------------------------------------------------------

CUresult get_edges(CUgraph graph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edges, size_t* n) {
  return api([&](Backend&) { return to_cu(gr::edges(graph_of(graph), list_out(from), list_out(to), edges, n)); });
}

CUresult node_deps(CUgraphNode node, CUgraphNode* out, CUgraphEdgeData* edges, size_t* n, bool outgoing) {
  const auto list = outgoing ? gr::dependents : gr::dependencies;
  return api([&](Backend&) { return to_cu(list(node_of(node), list_out(out), edges, n)); });
}

CUresult change_deps(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData* edges,
                     size_t n, bool adding) {
  const auto change = adding ? gr::add_edges : gr::remove_edges;
  return api([&](Backend&) { return to_cu(change(graph_of(graph), nodes_of(from), nodes_of(to), edges, n)); });
}

}  // namespace

// ============================================================================================================
// Stream capture
// ============================================================================================================

// The 10.0 form takes no mode: global, the mode every capture had before modes existed.
FG_PTSZ(cuStreamBeginCapture, (CUstream hStream), begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, ptsz))
FG_PTSZ(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), begin_capture(hStream, mode, ptsz))
FG_PTSZ(cuStreamBeginCaptureToGraph,
        (CUstream hStream, CUgraph hGraph, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
         CUstreamCaptureMode mode),
        begin_capture(hStream, mode, ptsz, hGraph, deps, edges, n, true))
FG_PTSZ(cuStreamEndCapture, (CUstream hStream, CUgraph* phGraph), end_capture(hStream, phGraph, ptsz))
FG_PTSZ(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus* status), capture_info(hStream, ptsz, status))
// v1 (10.1): (stream, status, id)
FG_PTSZ(cuStreamGetCaptureInfo, (CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id),
        capture_info(hStream, ptsz, status, id))
// v2 (11.3): (stream, status, id, graph, deps, numDeps)
FG_PTSZ(cuStreamGetCaptureInfo_v2,
        (CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
         size_t* n),
        capture_info(hStream, ptsz, status, id, graph, deps, nullptr, n))
// v3 (12.3): (stream, status, id, graph, deps, edgeData, numDeps)
FG_PTSZ(cuStreamGetCaptureInfo_v3,
        (CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
         const CUgraphEdgeData** edges, size_t* n),
        capture_info(hStream, ptsz, status, id, graph, deps, edges, n))
FG_PTSZ(cuStreamUpdateCaptureDependencies, (CUstream hStream, CUgraphNode* deps, size_t n, unsigned int flags),
        update_deps(hStream, deps, nullptr, n, flags, ptsz))
FG_PTSZ(cuStreamUpdateCaptureDependencies_v2,
        (CUstream hStream, CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n, unsigned int flags),
        update_deps(hStream, deps, edges, n, flags, ptsz))

extern "C" FG_IMPL CUresult fgimpl_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  return api([&](Backend&) -> CUresult {
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    const int m = static_cast<int>(*mode);
    if (m < CU_STREAM_CAPTURE_MODE_GLOBAL || m > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    ThreadState& ts = thread_state();
    *mode = static_cast<CUstreamCaptureMode>(ts.capture_mode);
    ts.capture_mode = m;
    return CUDA_SUCCESS;
  });
}

// ============================================================================================================
// Graphs
// ============================================================================================================

extern "C" FG_IMPL CUresult fgimpl_cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return api([&](Backend&) { return to_cu(gr::create(flags, out_of<gr::Graph>(phGraph))); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphDestroy(CUgraph hGraph) {
  return api([&](Backend&) { return to_cu(gr::destroy(graph_of(hGraph))); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphClone(CUgraph* phClone, CUgraph original) {
  return api([&](Backend&) { return to_cu(gr::clone(graph_of(original), out_of<gr::Graph>(phClone))); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginal, CUgraph hClone) {
  return api([&](Backend&) {
    return to_cu(gr::find_in_clone(node_of(hOriginal), graph_of(hClone), out_of<gr::Node>(phNode)));
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) {
  return api([&](Backend&) -> CUresult {
    const Status st = gr::dot_print(graph_of(hGraph), path, flags);
    return st == Status::NotPermitted ? CUDA_ERROR_OPERATING_SYSTEM : to_cu(st);
  });
}

// ---- kernel and host nodes ----------------------------------------------------------------------------------

// The four calls of a node type whose parameters come in one struct P (V: the ABI suffix):
// params() builds the node's parameters from a P, to_driver() hands them back.
#define FG_NODE_CALLS(Kind, V, P, type)                                                                         \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphAdd##Kind##Node##V(CUgraphNode* phNode, CUgraph hGraph,             \
                                                               const CUgraphNode* deps, size_t n, const P* p) { \
    return add_made(phNode, hGraph, deps, n, [&](Backend& b, gr::Params* out) { return params(b, p, out); });   \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeGetParams##V(CUgraphNode hNode, P* p) {                 \
    return get(hNode, type, p);                                                                                 \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeSetParams##V(CUgraphNode hNode, const P* p) {           \
    return set(hNode, [&](Backend& b, gr::Params* out) { return params(b, p, out); });                          \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphExec##Kind##NodeSetParams##V(CUgraphExec hExec, CUgraphNode hNode,  \
                                                                         const P* p) {                          \
    return exec_set(hExec, hNode, [&](Backend& b, gr::Params* out) { return params(b, p, out); });              \
  }
FG_NODE_CALLS(Kernel, , CUDA_KERNEL_NODE_PARAMS_v1, gr::NodeType::Kernel)
FG_NODE_CALLS(Kernel, _v2, CUDA_KERNEL_NODE_PARAMS_v2, gr::NodeType::Kernel)
FG_NODE_CALLS(Host, , CUDA_HOST_NODE_PARAMS, gr::NodeType::Host)
#undef FG_NODE_CALLS

// ---- memcpy and memset nodes: their context argument is checked first -------------------------------------

#define FG_CTX_NODE_CALLS(Kind, P, type)                                                                    \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphAdd##Kind##Node(                                                \
      CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps, size_t n, const P* p, CUcontext ctx) {  \
    return add_made(phNode, hGraph, deps, n, [&](Backend& b, gr::Params* out) -> CUresult {                 \
      if (CUresult r = node_ctx(b, ctx)) return r;                                                          \
      return params(b, p, out);                                                                             \
    });                                                                                                     \
  }                                                                                                         \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeGetParams(CUgraphNode hNode, P* p) {                \
    return get(hNode, type, p);                                                                             \
  }                                                                                                         \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeSetParams(CUgraphNode hNode, const P* p) {          \
    return set(hNode, [&](Backend& b, gr::Params* out) { return params(b, p, out); });                      \
  }                                                                                                         \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphExec##Kind##NodeSetParams(CUgraphExec hExec, CUgraphNode hNode, \
                                                                      const P* p, CUcontext ctx) {          \
    return exec_set(hExec, hNode, [&](Backend& b, gr::Params* out) -> CUresult {                            \
      if (CUresult r = node_ctx(b, ctx)) return r;                                                          \
      return params(b, p, out);                                                                             \
    });                                                                                                     \
  }
FG_CTX_NODE_CALLS(Memcpy, CUDA_MEMCPY3D, gr::NodeType::Memcpy)
FG_CTX_NODE_CALLS(Memset, CUDA_MEMSET_NODE_PARAMS, gr::NodeType::Memset)
#undef FG_CTX_NODE_CALLS

// ---- child graph, empty and event nodes -----------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddChildGraphNode(CUgraphNode* phNode, CUgraph hGraph,
                                                            const CUgraphNode* deps, size_t n, CUgraph child) {
  return api([&](Backend&) {
    return to_cu(gr::add_child(graph_of(hGraph), nodes_of(deps), n, graph_of(child), out_of<gr::Node>(phNode)));
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  return api([&](Backend&) { return to_cu(gr::child_of(node_of(hNode), out_of<gr::Graph>(phGraph))); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecChildGraphNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                                      CUgraph child) {
  return api([&](Backend&) { return to_cu(gr::exec_set_child(exec_of(hExec), node_of(hNode), graph_of(child))); });
}

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddEmptyNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                       size_t n) {
  return api([&](Backend&) { return add(phNode, hGraph, deps, n, gr::Params{}); });
}

#define FG_EVENT_NODE(Kind, type)                                                                               \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphAdd##Kind##Node(CUgraphNode* phNode, CUgraph hGraph,                \
                                                            const CUgraphNode* deps, size_t n, CUevent event) { \
    return add_made(phNode, hGraph, deps, n,                                                                    \
                    [&](Backend&, gr::Params* out) { return event_params(event, type, out); });                 \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeGetEvent(CUgraphNode hNode, CUevent* out) {             \
    return get(hNode, type, out);                                                                               \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeSetEvent(CUgraphNode hNode, CUevent event) {            \
    return set(hNode, [&](Backend&, gr::Params* out) { return event_params(event, type, out); });               \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphExec##Kind##NodeSetEvent(CUgraphExec hExec, CUgraphNode hNode,      \
                                                                     CUevent event) {                           \
    return exec_set(hExec, hNode, [&](Backend&, gr::Params* out) { return event_params(event, type, out); });   \
  }
FG_EVENT_NODE(EventRecord, gr::NodeType::EventRecord)
FG_EVENT_NODE(EventWait, gr::NodeType::WaitEvent)
#undef FG_EVENT_NODE

// ---- memory nodes --------------------------------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddMemAllocNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                          size_t n, CUDA_MEM_ALLOC_NODE_PARAMS* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    auto make = [&](Backend& b, gr::Params* out) { return alloc_params(b, *p, out); };
    return add_made(phNode, hGraph, deps, n, make, &p->dptr);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* out) {
  return get(hNode, gr::NodeType::MemAlloc, out);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphAddMemFreeNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                         size_t n, CUdeviceptr dptr) {
  return add_made(phNode, hGraph, deps, n,
                  [&](Backend&, gr::Params* out) { return to_cu(gr::free_node(ptr_of(dptr), out)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return get(hNode, gr::NodeType::MemFree, dptr_out);
}

// ---- generic nodes ---------------------------------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                  size_t n, CUgraphNodeParams* p) {
  return add_node(phNode, hGraph, deps, nullptr, n, p);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphAddNode_v2(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                     const CUgraphEdgeData* edges, size_t n, CUgraphNodeParams* p) {
  return add_node(phNode, hGraph, deps, edges, n, p);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* p) {
  return set(hNode, [&](Backend& b, gr::Params* out) { return generic_params(b, p, out, false); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                            CUgraphNodeParams* p) {
  return api([&](Backend&) -> CUresult {
    if (p && p->type == CU_GRAPH_NODE_TYPE_GRAPH)
      return to_cu(gr::exec_set_child(exec_of(hExec), node_of(hNode), graph_of(p->graph.graph)));
    return exec_set(hExec, hNode, [&](Backend& b, gr::Params* out) { return generic_params(b, p, out, false); });
  });
}

// ---- structure ---------------------------------------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  return api([&](Backend&) -> CUresult {
    if (!type) return CUDA_ERROR_INVALID_VALUE;
    gr::NodeType t;
    if (CUresult r = to_cu(gr::type_of(node_of(hNode), &t))) return r;
    *type = static_cast<CUgraphNodeType>(t);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* n) {
  return api([&](Backend&) { return to_cu(gr::nodes(graph_of(hGraph), list_out(nodes), n)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* n) {
  return api([&](Backend&) { return to_cu(gr::roots(graph_of(hGraph), list_out(nodes), n)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* n) {
  return get_edges(hGraph, from, to, nullptr, n);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                                      CUgraphEdgeData* edges, size_t* n) {
  return get_edges(hGraph, from, to, edges, n);
}

// The plain names take no edge data; their _v2 forms do.
#define FG_NODE_LIST(name, outgoing)                                                                            \
  extern "C" FG_IMPL CUresult fgimpl_##name(CUgraphNode hNode, CUgraphNode* nodes, size_t* n) {                 \
    return node_deps(hNode, nodes, nullptr, n, outgoing);                                                       \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_##name##_v2(CUgraphNode hNode, CUgraphNode* nodes, CUgraphEdgeData* edges, \
                                                 size_t* n) {                                                   \
    return node_deps(hNode, nodes, edges, n, outgoing);                                                         \
  }
FG_NODE_LIST(cuGraphNodeGetDependencies, false)
FG_NODE_LIST(cuGraphNodeGetDependentNodes, true)
#undef FG_NODE_LIST

#define FG_EDGE_CHANGE(name, adding)                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_##name(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,      \
                                            size_t n) {                                                          \
    return change_deps(hGraph, from, to, nullptr, n, adding);                                                    \
  }                                                                                                              \
  extern "C" FG_IMPL CUresult fgimpl_##name##_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to, \
                                                 const CUgraphEdgeData* edges, size_t n) {                       \
    return change_deps(hGraph, from, to, edges, n, adding);                                                      \
  }
FG_EDGE_CHANGE(cuGraphAddDependencies, true)
FG_EDGE_CHANGE(cuGraphRemoveDependencies, false)
#undef FG_EDGE_CHANGE
extern "C" FG_IMPL CUresult fgimpl_cuGraphDestroyNode(CUgraphNode hNode) {
  return api([&](Backend&) { return to_cu(gr::destroy_node(node_of(hNode))); });
}

// ============================================================================================================
// Executable graphs
// ============================================================================================================

// The 10.0/11.0 form: (exec, graph, errorNode, logBuffer, bufferSize), no flags.
namespace {
CUresult instantiate_legacy(CUgraphExec* phExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* log, size_t size) {
  return api([&](Backend&) -> CUresult {
    gr::InstantiateResult res;
    const CUresult r = instantiate(phExec, hGraph, 0, &res);
    if (phErrorNode) *phErrorNode = handle(res.err_node);
    if (log && size) {
      const char* msg = r == CUDA_SUCCESS ? "" : res.result == 2 ? "graph contains a cycle" : "invalid graph";
      std::snprintf(log, size, "%s", msg);
    }
    return r;
  });
}
}  // namespace

extern "C" FG_IMPL CUresult fgimpl_cuGraphInstantiate(CUgraphExec* phExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                                      char* logBuffer, size_t bufferSize) {
  return instantiate_legacy(phExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphInstantiate_v2(CUgraphExec* phExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                                         char* logBuffer, size_t bufferSize) {
  return instantiate_legacy(phExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphInstantiateWithFlags(CUgraphExec* phExec, CUgraph hGraph,
                                                               unsigned long long flags) {
  return api([&](Backend&) { return instantiate(phExec, hGraph, flags, nullptr, true); });
}
FG_PTSZ(cuGraphInstantiateWithParams, (CUgraphExec * phExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* params),
        instantiate_with_params(phExec, hGraph, params, ptsz))
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecGetFlags(CUgraphExec hExec, cuuint64_t* flags) {
  return api([&](Backend&) -> CUresult {
    unsigned long long f = 0;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = to_cu(gr::exec_flags(exec_of(hExec), &f))) return r;
    *flags = f;
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecDestroy(CUgraphExec hExec) {
  return api([&](Backend&) { return to_cu(gr::exec_destroy(exec_of(hExec))); });
}
FG_PTSZ(cuGraphLaunch, (CUgraphExec hExec, CUstream hStream), launch(hExec, hStream, ptsz, false))
FG_PTSZ(cuGraphUpload, (CUgraphExec hExec, CUstream hStream), launch(hExec, hStream, ptsz, true))

// The 10.2 form: (exec, graph, errorNode*, result*).
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecUpdate(CUgraphExec hExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                                                     CUgraphExecUpdateResult* updateResult_out) {
  return api([&](Backend&) -> CUresult {
    if (!hErrorNode_out || !updateResult_out) return CUDA_ERROR_INVALID_VALUE;
    gr::UpdateResult res;
    const Status st = gr::exec_update(exec_of(hExec), graph_of(hGraph), &res);
    *hErrorNode_out = handle(res.err_node);
    *updateResult_out = static_cast<CUgraphExecUpdateResult>(res.result);
    return to_cu(st);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecUpdate_v2(CUgraphExec hExec, CUgraph hGraph,
                                                        CUgraphExecUpdateResultInfo* info) {
  return api([&](Backend&) -> CUresult {
    if (!info) return CUDA_ERROR_INVALID_VALUE;
    gr::UpdateResult res;
    const Status st = gr::exec_update(exec_of(hExec), graph_of(hGraph), &res);
    info->result = static_cast<CUgraphExecUpdateResult>(res.result);
    info->errorNode = handle(res.err_node);
    info->errorFromNode = handle(res.err_from);
    return to_cu(st);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeSetEnabled(CUgraphExec hExec, CUgraphNode hNode, unsigned int isEnabled) {
  return api([&](Backend&) { return to_cu(gr::exec_set_enabled(exec_of(hExec), node_of(hNode), isEnabled != 0)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeGetEnabled(CUgraphExec hExec, CUgraphNode hNode,
                                                         unsigned int* isEnabled) {
  return api([&](Backend&) -> CUresult {
    if (!isEnabled) return CUDA_ERROR_INVALID_VALUE;
    bool on = false;
    if (CUresult r = to_cu(gr::exec_enabled(exec_of(hExec), node_of(hNode), &on))) return r;
    *isEnabled = on ? 1u : 0u;
    return CUDA_SUCCESS;
  });
}

// ============================================================================================================
// User objects
// ============================================================================================================

extern "C" FG_IMPL CUresult fgimpl_cuUserObjectCreate(CUuserObject* out, void* ptr, CUhostFn destroy, unsigned int refs,
                                                      unsigned int flags) {
  return api(
      [&](Backend&) { return to_cu(gr::user_object_create(ptr, destroy, refs, flags, out_of<gr::UserObject>(out))); });
}
extern "C" FG_IMPL CUresult fgimpl_cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return api([&](Backend&) { return to_cu(gr::user_object_retain(object_of(object), count)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return api([&](Backend&) { return to_cu(gr::user_object_release(object_of(object), count)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                                           unsigned int flags) {
  return api([&](Backend&) { return to_cu(gr::retain_user_object(graph_of(graph), object_of(object), count, flags)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  return api([&](Backend&) { return to_cu(gr::release_user_object(graph_of(graph), object_of(object), count)); });
}
