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

#include "core/graph.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace fg;
using namespace fg::drv;
namespace gr = fg::graph;

namespace {

gr::Graph* graph_of(CUgraph h) { return reinterpret_cast<gr::Graph*>(h); }
gr::Node* node_of(CUgraphNode h) { return reinterpret_cast<gr::Node*>(h); }
gr::Exec* exec_of(CUgraphExec h) { return reinterpret_cast<gr::Exec*>(h); }
CUgraph handle(gr::Graph* g) { return reinterpret_cast<CUgraph>(g); }
CUgraphNode handle(gr::Node* n) { return reinterpret_cast<CUgraphNode>(n); }
gr::Node* const* nodes_of(const CUgraphNode* h) { return reinterpret_cast<gr::Node* const*>(h); }

bool default_edges(const CUgraphEdgeData* e, size_t n) {
  if (!e) return true;
  static const CUgraphEdgeData zero{};
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(&e[i], &zero, sizeof zero) != 0) return false;
  return true;
}

// The two-call pattern of the list queries (see the runtime's twin).
CUresult fill_nodes(const std::vector<gr::Node*>& v, CUgraphNode* out, CUgraphEdgeData* edges, size_t* n) {
  if (!n || (edges && !out)) return CUDA_ERROR_INVALID_VALUE;
  if (!out) {
    *n = v.size();
    return CUDA_SUCCESS;
  }
  const size_t k = std::min(*n, v.size());
  for (size_t i = 0; i < *n; ++i) {
    out[i] = i < k ? handle(v[i]) : nullptr;
    if (edges) edges[i] = CUgraphEdgeData{};
  }
  *n = k;
  return CUDA_SUCCESS;
}

// A context argument of a node (memcpy/memset): null means the current context.
CUresult node_ctx(Backend& b, CUcontext h, Context** out) { return h ? context_arg(b, h, out) : current(b, out); }

// ---- parameter conversions ------------------------------------------------------------------------------

CUresult kernel_params(Backend& b, CUfunction func, CUkernel kern, const unsigned grid[3], const unsigned block[3],
                       unsigned shmem, void** args, void** extra, gr::Params* out) {
  Function* f = nullptr;
  CUfunction h = func ? func : reinterpret_cast<CUfunction>(kern);
  if (!h || function_arg(b, h, &f) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (CUresult r = current(b, &ctx)) return r;
  if (CUresult r = to_cu(Backend::check_launch(f, ctx->dev, grid, block, shmem))) return r;
  out->type = gr::NodeType::Kernel;
  out->kernel.f = f;
  out->kernel.handle = h;
  std::copy(grid, grid + 3, out->kernel.grid);
  std::copy(block, block + 3, out->kernel.block);
  out->kernel.shmem = shmem;
  out->kernel.params = args;
  out->kernel.extra = extra;
  out->kernel.ctx = ctx;
  return CUDA_SUCCESS;
}

// The v1, v2 and v3 kernel structs share their first fields; v2/v3 add kern and ctx.
template <class P>
CUresult kernel_params(Backend& b, const P* p, CUkernel kern, gr::Params* out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  return kernel_params(b, p->func, kern, grid, block, p->sharedMemBytes, p->kernelParams, p->extra, out);
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

CUresult copy_params(Backend& b, const CUDA_MEMCPY3D* p, gr::Params* out) {
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
  gr::Copy& c = out->copy;
  c.src = static_cast<const char*>(src) + (p->srcZ * sheight + p->srcY) * spitch + p->srcXInBytes;
  c.dst = const_cast<char*>(static_cast<const char*>(dst)) + (p->dstZ * dheight + p->dstY) * dpitch + p->dstXInBytes;
  c.spitch = spitch, c.dpitch = dpitch, c.sheight = sheight, c.dheight = dheight;
  c.width = w, c.height = h, c.depth = depth;
  const size_t sspan = spitch * sheight * (depth - 1) + spitch * (h - 1) + w;
  const size_t dspan = dpitch * dheight * (depth - 1) + dpitch * (h - 1) + w;
  if (CUresult r = check_side(b, c.dst, dspan, ddev, true)) return r;
  if (CUresult r = check_side(b, c.src, sspan, sdev, false)) return r;
  out->type = gr::NodeType::Memcpy;
  return CUDA_SUCCESS;
}

void to_driver(Backend& b, const gr::Copy& c, CUDA_MEMCPY3D* p) {
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
  if (elem != 1 && elem != 2 && elem != 4) return CUDA_ERROR_INVALID_VALUE;
  if (width == 0 || height == 0 || dst % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  if (height > 1 && pitch < width * elem) return CUDA_ERROR_INVALID_VALUE;
  const size_t span = (height > 1 ? pitch * (height - 1) : 0) + width * elem;
  if (CUresult r = check_side(b, ptr_of(dst), span, true, true)) return r;
  out->type = gr::NodeType::Memset;
  out->set = gr::Set{ptr_of(dst), height > 1 ? pitch : width * elem, value, elem, width, height};
  return CUDA_SUCCESS;
}

template <class P>
CUresult memset_params(Backend& b, const P* p, gr::Params* out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return memset_params(b, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, out);
}

CUresult host_params(CUhostFn fn, void* user, gr::Params* out) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  out->type = gr::NodeType::Host;
  out->host.fn = fn;
  out->host.user = user;
  return CUDA_SUCCESS;
}

CUresult event_params(Backend& b, CUevent e, gr::NodeType type, gr::Params* out) {
  Event* ev = nullptr;
  if (event_arg(b, e, &ev) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  out->type = type;
  out->event = ev;
  return CUDA_SUCCESS;
}

// The context an allocation node allocates in: the current one if it is on that device,
// else the device's primary context (retained once, like the runtime's).
CUresult device_ctx(Backend& b, int ordinal, Context** out) {
  Device* dev = b.device(ordinal);
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  Context* cur = nullptr;
  if (CUresult r = current(b, &cur)) return r;
  if (cur->dev == dev) {
    *out = cur;
    return CUDA_SUCCESS;
  }
  {
    std::lock_guard lock(dev->primary_mu);
    if (dev->primary && dev->primary_refs > 0) {
      *out = dev->primary;
      return CUDA_SUCCESS;
    }
  }
  return to_cu(b.primary_retain(dev, out));
}

CUresult alloc_params(Backend& b, const CUmemPoolProps& props, size_t bytes, gr::Params* out) {
  if (props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED || props.handleTypes != CU_MEM_HANDLE_TYPE_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  if (props.location.type != CU_MEM_LOCATION_TYPE_DEVICE || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (CUresult r = device_ctx(b, props.location.id, &ctx)) return r;
  out->type = gr::NodeType::MemAlloc;
  return to_cu(gr::make_alloc(ctx, bytes, ApiOrigin::Driver, &out->alloc));
}

template <class P>
void to_driver(const gr::GraphAlloc& a, P* p) {
  *p = P{};
  p->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p->poolProps.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p->poolProps.location.id = a.device;
  p->bytesize = a.size;
  p->dptr = dptr_of(a.ptr);
}

CUresult free_params(Backend& b, CUdeviceptr dptr, gr::Params* out) {
  void* p = ptr_of(dptr);
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (!gr::is_graph_alloc(p)) {
    auto a = b.mem_find(p);
    if (!a || a->base != dptr || a->kind != MemKind::Device) return CUDA_ERROR_INVALID_VALUE;
  }
  out->type = gr::NodeType::MemFree;
  out->free_ptr = p;
  return CUDA_SUCCESS;
}

// ---- node helpers -------------------------------------------------------------------------------------

CUresult add(CUgraphNode* phNode, CUgraph graph, const CUgraphNode* deps, size_t n, gr::Params p) {
  if (!phNode) return CUDA_ERROR_INVALID_VALUE;
  gr::Node* node = nullptr;
  if (CUresult r = to_cu(gr::add(graph_of(graph), nodes_of(deps), n, std::move(p), &node))) return r;
  *phNode = handle(node);
  return CUDA_SUCCESS;
}

CUresult node_params(CUgraphNode node, gr::NodeType type, gr::Params* out) {
  if (CUresult r = to_cu(gr::params_of(node_of(node), out))) return r;
  return out->type == type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult set(CUgraphNode node, CUresult made, const gr::Params& p) {
  if (made != CUDA_SUCCESS) return made;
  return to_cu(gr::set_params(node_of(node), p));
}

CUresult exec_set(CUgraphExec exec, CUgraphNode node, CUresult made, const gr::Params& p) {
  if (made != CUDA_SUCCESS) return made;
  return to_cu(gr::exec_set_params(exec_of(exec), node_of(node), p));
}

// Graph handle check first: its error comes before the parameters'.
template <class Make>
CUresult add_checked(CUgraphNode* phNode, CUgraph graph, const CUgraphNode* deps, size_t n, Make make) {
  return api([&](Backend& b) -> CUresult {
    if (!phNode || !gr::valid(graph_of(graph))) return CUDA_ERROR_INVALID_VALUE;
    gr::Params p;
    if (CUresult r = make(b, &p)) return r;
    return add(phNode, graph, deps, n, std::move(p));
  });
}

CUresult generic_params(Backend& b, CUgraphNodeParams* np, gr::Params* out, bool creating) {
  if (!np) return CUDA_ERROR_INVALID_VALUE;
  switch (np->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      Context* ctx = nullptr;
      if (!np->kernel.func && np->kernel.ctx && context_arg(b, np->kernel.ctx, &ctx)) return CUDA_ERROR_INVALID_VALUE;
      return kernel_params(b, &np->kernel, np->kernel.kern, out);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      if (np->memcpy.flags != 0 || np->memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      Context* ctx = nullptr;
      if (CUresult r = node_ctx(b, np->memcpy.copyCtx, &ctx)) return r;
      return copy_params(b, &np->memcpy.copyParams, out);
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      Context* ctx = nullptr;
      if (CUresult r = node_ctx(b, np->memset.ctx, &ctx)) return r;
      return memset_params(b, &np->memset, out);
    }
    case CU_GRAPH_NODE_TYPE_HOST: return host_params(np->host.fn, np->host.userData, out);
    case CU_GRAPH_NODE_TYPE_EMPTY: out->type = gr::NodeType::Empty; return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return event_params(b, np->eventRecord.event, gr::NodeType::EventRecord, out);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return event_params(b, np->eventWait.event, gr::NodeType::WaitEvent, out);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      if (!creating) return CUDA_ERROR_INVALID_VALUE;
      return alloc_params(b, np->alloc.poolProps, np->alloc.bytesize, out);
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      if (!creating) return CUDA_ERROR_INVALID_VALUE;
      return free_params(b, np->free.dptr, out);
    case CU_GRAPH_NODE_TYPE_GRAPH: return CUDA_ERROR_INVALID_VALUE;  // handled by the caller
    default: return CUDA_ERROR_NOT_SUPPORTED;                        // external semaphores, batch mem ops, conditionals
  }
}

CUresult add_node(CUgraphNode* phNode, CUgraph graph, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
                  CUgraphNodeParams* np) {
  return api([&](Backend& b) -> CUresult {
    if (!phNode || !np || !default_edges(edges, n)) return CUDA_ERROR_INVALID_VALUE;
    if (np->type == CU_GRAPH_NODE_TYPE_GRAPH) {
      if (np->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) return CUDA_ERROR_NOT_SUPPORTED;
      gr::Node* node = nullptr;
      if (CUresult r = to_cu(gr::add_child(graph_of(graph), nodes_of(deps), n, graph_of(np->graph.graph), &node)))
        return r;
      *phNode = handle(node);
      return CUDA_SUCCESS;
    }
    if (!gr::valid(graph_of(graph))) return CUDA_ERROR_INVALID_VALUE;
    gr::Params p;
    if (CUresult r = generic_params(b, np, &p, true)) return r;
    void* dptr = p.alloc ? p.alloc->ptr : nullptr;
    if (CUresult r = add(phNode, graph, deps, n, std::move(p))) return r;
    if (np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) np->alloc.dptr = dptr_of(dptr);
    return CUDA_SUCCESS;
  });
}

// ---- capture ------------------------------------------------------------------------------------------------

CUresult begin_capture(CUstream h, int mode, bool ptsz, CUgraph graph = nullptr, const CUgraphNode* deps = nullptr,
                       const CUgraphEdgeData* edges = nullptr, size_t n = 0, bool to_graph = false) {
  return api([&](Backend& b) -> CUresult {
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    if (to_graph && (!graph || (n && !deps) || !default_edges(edges, n))) return CUDA_ERROR_INVALID_VALUE;
    return to_cu(gr::begin_capture(s, mode, graph_of(graph), nodes_of(deps), n));
  });
}

CUresult end_capture(CUstream h, CUgraph* phGraph, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    gr::Graph* g = nullptr;
    const Status st = gr::end_capture(s, &g);
    if (st == Status::Ok || st == Status::CaptureInvalidated || st == Status::CaptureUnjoined) *phGraph = handle(g);
    return to_cu(st);
  });
}

CUresult capture_info(CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                      const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* ndeps, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!status || (edges && !deps)) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    gr::CaptureInfo info;
    if (CUresult r = to_cu(gr::capture_info(s, &info))) return r;
    // Only the status is defined when not capturing; the rest reads as empty.
    *status = static_cast<CUstreamCaptureStatus>(info.status);
    if (id) *id = info.id;
    if (graph) *graph = handle(info.graph);
    if (deps) *deps = reinterpret_cast<const CUgraphNode*>(info.deps);
    if (edges) *edges = static_cast<const CUgraphEdgeData*>(info.edges);
    if (ndeps) *ndeps = info.ndeps;
    return CUDA_SUCCESS;
  });
}

CUresult update_deps(CUstream h, CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n, unsigned flags, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if ((n && !deps) || !default_edges(edges, n)) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    return to_cu(gr::update_capture_deps(s, nodes_of(deps), n, flags));
  });
}

// ---- instantiation and launch -----------------------------------------------------------------------------

CUresult instantiate(CUgraphExec* phExec, CUgraph graph, unsigned long long flags, gr::InstantiateResult* res) {
  if (!phExec) return CUDA_ERROR_INVALID_VALUE;
  gr::Exec* x = nullptr;
  if (CUresult r = to_cu(gr::instantiate(graph_of(graph), flags, &x, res))) return r;
  *phExec = reinterpret_cast<CUgraphExec>(x);
  return CUDA_SUCCESS;
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
  return api([&](Backend&) -> CUresult {
    if (!n || (!from) != (!to) || (edges && !from)) return CUDA_ERROR_INVALID_VALUE;
    std::vector<gr::Node*> f, t;
    if (CUresult r = to_cu(gr::edges(graph_of(graph), &f, &t))) return r;
    size_t n2 = *n;
    if (CUresult r = fill_nodes(f, from, edges, n)) return r;
    return fill_nodes(t, to, nullptr, &n2);
  });
}

CUresult node_deps(CUgraphNode node, CUgraphNode* out, CUgraphEdgeData* edges, size_t* n, bool outgoing) {
  return api([&](Backend&) -> CUresult {
    std::vector<gr::Node*> v;
    if (CUresult r = to_cu(outgoing ? gr::dependents(node_of(node), &v) : gr::dependencies(node_of(node), &v)))
      return r;
    return fill_nodes(v, out, edges, n);
  });
}

CUresult change_deps(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData* edges,
                     size_t n, bool adding) {
  return api([&](Backend&) -> CUresult {
    if (!default_edges(edges, n)) return CUDA_ERROR_INVALID_VALUE;
    return to_cu(adding ? gr::add_edges(graph_of(graph), nodes_of(from), nodes_of(to), n)
                        : gr::remove_edges(graph_of(graph), nodes_of(from), nodes_of(to), n));
  });
}

}  // namespace

// ============================================================================================================
// Stream capture
// ============================================================================================================

// The 10.0 form takes no mode: global, the mode every capture had before modes existed.
extern "C" FG_IMPL CUresult fgimpl_cuStreamBeginCapture(CUstream hStream) {
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamBeginCapture_ptsz(CUstream hStream) {
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                                               const CUgraphNode* deps, const CUgraphEdgeData* edges,
                                                               size_t n, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode, false, hGraph, deps, edges, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                                    const CUgraphNode* deps,
                                                                    const CUgraphEdgeData* edges, size_t n,
                                                                    CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode, true, hGraph, deps, edges, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return end_capture(hStream, phGraph, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return end_capture(hStream, phGraph, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* status) {
  return capture_info(hStream, status, nullptr, nullptr, nullptr, nullptr, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* status) {
  return capture_info(hStream, status, nullptr, nullptr, nullptr, nullptr, nullptr, true);
}
// v1 (10.1): (stream, status, id)
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* status,
                                                          cuuint64_t* id) {
  return capture_info(hStream, status, id, nullptr, nullptr, nullptr, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus* status,
                                                               cuuint64_t* id) {
  return capture_info(hStream, status, id, nullptr, nullptr, nullptr, nullptr, true);
}
// v2 (11.3): (stream, status, id, graph, deps, numDeps)
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* status,
                                                             cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                                             size_t* n) {
  return capture_info(hStream, status, id, graph, deps, nullptr, n, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus* status,
                                                                  cuuint64_t* id, CUgraph* graph,
                                                                  const CUgraphNode** deps, size_t* n) {
  return capture_info(hStream, status, id, graph, deps, nullptr, n, true);
}
// v3 (12.3): (stream, status, id, graph, deps, edgeData, numDeps)
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* status,
                                                             cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                                             const CUgraphEdgeData** edges, size_t* n) {
  return capture_info(hStream, status, id, graph, deps, edges, n, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus* status,
                                                                  cuuint64_t* id, CUgraph* graph,
                                                                  const CUgraphNode** deps,
                                                                  const CUgraphEdgeData** edges, size_t* n) {
  return capture_info(hStream, status, id, graph, deps, edges, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* deps, size_t n,
                                                                     unsigned int flags) {
  return update_deps(hStream, deps, nullptr, n, flags, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream, CUgraphNode* deps, size_t n,
                                                                          unsigned int flags) {
  return update_deps(hStream, deps, nullptr, n, flags, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode* deps,
                                                                        const CUgraphEdgeData* edges, size_t n,
                                                                        unsigned int flags) {
  return update_deps(hStream, deps, edges, n, flags, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream hStream, CUgraphNode* deps,
                                                                             const CUgraphEdgeData* edges, size_t n,
                                                                             unsigned int flags) {
  return update_deps(hStream, deps, edges, n, flags, true);
}

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
  return api([&](Backend&) -> CUresult {
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    gr::Graph* g = nullptr;
    if (CUresult r = to_cu(gr::create(flags, &g))) return r;
    *phGraph = handle(g);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphDestroy(CUgraph hGraph) {
  return api([&](Backend&) { return to_cu(gr::destroy(graph_of(hGraph))); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphClone(CUgraph* phClone, CUgraph original) {
  return api([&](Backend&) -> CUresult {
    if (!phClone) return CUDA_ERROR_INVALID_VALUE;
    gr::Graph* g = nullptr;
    if (CUresult r = to_cu(gr::clone(graph_of(original), &g))) return r;
    *phClone = handle(g);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginal, CUgraph hClone) {
  return api([&](Backend&) -> CUresult {
    if (!phNode) return CUDA_ERROR_INVALID_VALUE;
    gr::Node* n = nullptr;
    if (CUresult r = to_cu(gr::find_in_clone(node_of(hOriginal), graph_of(hClone), &n))) return r;
    *phNode = handle(n);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) {
  return api([&](Backend&) -> CUresult {
    const Status st = gr::dot_print(graph_of(hGraph), path, flags);
    return st == Status::NotPermitted ? CUDA_ERROR_OPERATING_SYSTEM : to_cu(st);
  });
}

// ---- kernel nodes -------------------------------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddKernelNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                        size_t n, const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  return add_checked(phNode, hGraph, deps, n,
                     [&](Backend& b, gr::Params* out) { return kernel_params(b, p, nullptr, out); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphAddKernelNode_v2(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                           size_t n, const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  return add_checked(phNode, hGraph, deps, n,
                     [&](Backend& b, gr::Params* out) { return kernel_params(b, p, p ? p->kern : nullptr, out); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::Kernel, &params)) return r;
    to_driver(params.kernel, p);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::Kernel, &params)) return r;
    to_driver(params.kernel, p);
    p->ctx = handle_of(params.kernel.ctx);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return set(hNode, kernel_params(b, p, nullptr, &params), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                                                 const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return set(hNode, kernel_params(b, p, p ? p->kern : nullptr, &params), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecKernelNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                                  const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return exec_set(hExec, hNode, kernel_params(b, p, nullptr, &params), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecKernelNodeSetParams_v2(CUgraphExec hExec, CUgraphNode hNode,
                                                                     const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return exec_set(hExec, hNode, kernel_params(b, p, p ? p->kern : nullptr, &params), params);
  });
}

// ---- memcpy and memset nodes ---------------------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddMemcpyNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                        size_t n, const CUDA_MEMCPY3D* p, CUcontext ctx) {
  return add_checked(phNode, hGraph, deps, n, [&](Backend& b, gr::Params* out) -> CUresult {
    Context* c = nullptr;
    if (CUresult r = node_ctx(b, ctx, &c)) return r;
    return copy_params(b, p, out);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D* p) {
  return api([&](Backend& b) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::Memcpy, &params)) return r;
    to_driver(b, params.copy, p);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D* p) {
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return set(hNode, copy_params(b, p, &params), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecMemcpyNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                                  const CUDA_MEMCPY3D* p, CUcontext ctx) {
  return api([&](Backend& b) -> CUresult {
    Context* c = nullptr;
    if (CUresult r = node_ctx(b, ctx, &c)) return r;
    gr::Params params;
    return exec_set(hExec, hNode, copy_params(b, p, &params), params);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddMemsetNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                        size_t n, const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
  return add_checked(phNode, hGraph, deps, n, [&](Backend& b, gr::Params* out) -> CUresult {
    Context* c = nullptr;
    if (CUresult r = node_ctx(b, ctx, &c)) return r;
    return memset_params(b, p, out);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::Memset, &params)) return r;
    const gr::Set& s = params.set;
    *p = CUDA_MEMSET_NODE_PARAMS{dptr_of(s.dst), s.pitch, s.value, s.elem, s.width, s.height};
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* p) {
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return set(hNode, memset_params(b, p, &params), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecMemsetNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                                  const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
  return api([&](Backend& b) -> CUresult {
    Context* c = nullptr;
    if (CUresult r = node_ctx(b, ctx, &c)) return r;
    gr::Params params;
    return exec_set(hExec, hNode, memset_params(b, p, &params), params);
  });
}

// ---- host, child graph, empty and event nodes ----------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddHostNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                      size_t n, const CUDA_HOST_NODE_PARAMS* p) {
  return add_checked(phNode, hGraph, deps, n, [&](Backend&, gr::Params* out) -> CUresult {
    return p ? host_params(p->fn, p->userData, out) : CUDA_ERROR_INVALID_VALUE;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::Host, &params)) return r;
    *p = CUDA_HOST_NODE_PARAMS{params.host.fn, params.host.user};
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    return set(hNode, host_params(p->fn, p->userData, &params), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecHostNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                                const CUDA_HOST_NODE_PARAMS* p) {
  return api([&](Backend&) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    return exec_set(hExec, hNode, host_params(p->fn, p->userData, &params), params);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddChildGraphNode(CUgraphNode* phNode, CUgraph hGraph,
                                                            const CUgraphNode* deps, size_t n, CUgraph child) {
  return api([&](Backend&) -> CUresult {
    if (!phNode) return CUDA_ERROR_INVALID_VALUE;
    gr::Node* node = nullptr;
    if (CUresult r = to_cu(gr::add_child(graph_of(hGraph), nodes_of(deps), n, graph_of(child), &node))) return r;
    *phNode = handle(node);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  return api([&](Backend&) -> CUresult {
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    gr::Graph* g = nullptr;
    if (CUresult r = to_cu(gr::child_of(node_of(hNode), &g))) return r;
    *phGraph = handle(g);
    return CUDA_SUCCESS;
  });
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
    return add_checked(phNode, hGraph, deps, n,                                                                 \
                       [&](Backend& b, gr::Params* out) { return event_params(b, event, type, out); });         \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeGetEvent(CUgraphNode hNode, CUevent* out) {             \
    return api([&](Backend&) -> CUresult {                                                                      \
      if (!out) return CUDA_ERROR_INVALID_VALUE;                                                                \
      gr::Params params;                                                                                        \
      if (CUresult r = node_params(hNode, type, &params)) return r;                                             \
      *out = reinterpret_cast<CUevent>(params.event);                                                           \
      return CUDA_SUCCESS;                                                                                      \
    });                                                                                                         \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraph##Kind##NodeSetEvent(CUgraphNode hNode, CUevent event) {            \
    return api([&](Backend& b) -> CUresult {                                                                    \
      gr::Params params;                                                                                        \
      return set(hNode, event_params(b, event, type, &params), params);                                         \
    });                                                                                                         \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuGraphExec##Kind##NodeSetEvent(CUgraphExec hExec, CUgraphNode hNode,      \
                                                                     CUevent event) {                           \
    return api([&](Backend& b) -> CUresult {                                                                    \
      gr::Params params;                                                                                        \
      return exec_set(hExec, hNode, event_params(b, event, type, &params), params);                             \
    });                                                                                                         \
  }
FG_EVENT_NODE(EventRecord, gr::NodeType::EventRecord)
FG_EVENT_NODE(EventWait, gr::NodeType::WaitEvent)
#undef FG_EVENT_NODE

// ---- memory nodes --------------------------------------------------------------------------------------------

extern "C" FG_IMPL CUresult fgimpl_cuGraphAddMemAllocNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                          size_t n, CUDA_MEM_ALLOC_NODE_PARAMS* p) {
  return api([&](Backend& b) -> CUresult {
    if (!phNode || !p || !gr::valid(graph_of(hGraph))) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = alloc_params(b, p->poolProps, p->bytesize, &params)) return r;
    void* dptr = params.alloc->ptr;
    if (CUresult r = add(phNode, hGraph, deps, n, std::move(params))) return r;
    p->dptr = dptr_of(dptr);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* out) {
  return api([&](Backend&) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::MemAlloc, &params)) return r;
    to_driver(*params.alloc, out);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphAddMemFreeNode(CUgraphNode* phNode, CUgraph hGraph, const CUgraphNode* deps,
                                                         size_t n, CUdeviceptr dptr) {
  return add_checked(phNode, hGraph, deps, n, [&](Backend& b, gr::Params* out) { return free_params(b, dptr, out); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return api([&](Backend&) -> CUresult {
    if (!dptr_out) return CUDA_ERROR_INVALID_VALUE;
    gr::Params params;
    if (CUresult r = node_params(hNode, gr::NodeType::MemFree, &params)) return r;
    *dptr_out = dptr_of(params.free_ptr);
    return CUDA_SUCCESS;
  });
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
  return api([&](Backend& b) -> CUresult {
    gr::Params params;
    return set(hNode, generic_params(b, p, &params, false), params);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphExecNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                            CUgraphNodeParams* p) {
  return api([&](Backend& b) -> CUresult {
    if (p && p->type == CU_GRAPH_NODE_TYPE_GRAPH)
      return to_cu(gr::exec_set_child(exec_of(hExec), node_of(hNode), graph_of(p->graph.graph)));
    gr::Params params;
    return exec_set(hExec, hNode, generic_params(b, p, &params, false), params);
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
  return api([&](Backend&) -> CUresult {
    std::vector<gr::Node*> v;
    if (CUresult r = to_cu(gr::nodes(graph_of(hGraph), &v))) return r;
    return fill_nodes(v, nodes, nullptr, n);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* n) {
  return api([&](Backend&) -> CUresult {
    std::vector<gr::Node*> v;
    if (CUresult r = to_cu(gr::roots(graph_of(hGraph), &v))) return r;
    return fill_nodes(v, nodes, nullptr, n);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* n) {
  return get_edges(hGraph, from, to, nullptr, n);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                                      CUgraphEdgeData* edges, size_t* n) {
  return get_edges(hGraph, from, to, edges, n);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* deps, size_t* n) {
  return node_deps(hNode, deps, nullptr, n, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* deps,
                                                                 CUgraphEdgeData* edges, size_t* n) {
  return node_deps(hNode, deps, edges, n, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* nodes, size_t* n) {
  return node_deps(hNode, nodes, nullptr, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode* nodes,
                                                                   CUgraphEdgeData* edges, size_t* n) {
  return node_deps(hNode, nodes, edges, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from,
                                                          const CUgraphNode* to, size_t n) {
  return change_deps(hGraph, from, to, nullptr, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                             const CUgraphNode* to, const CUgraphEdgeData* edges,
                                                             size_t n) {
  return change_deps(hGraph, from, to, edges, n, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from,
                                                             const CUgraphNode* to, size_t n) {
  return change_deps(hGraph, from, to, nullptr, n, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                                const CUgraphNode* to, const CUgraphEdgeData* edges,
                                                                size_t n) {
  return change_deps(hGraph, from, to, edges, n, false);
}
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
  return api([&](Backend&) -> CUresult {
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) return CUDA_ERROR_INVALID_VALUE;  // needs WithParams' stream
    return instantiate(phExec, hGraph, flags, nullptr);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphInstantiateWithParams(CUgraphExec* phExec, CUgraph hGraph,
                                                                CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return instantiate_with_params(phExec, hGraph, params, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphInstantiateWithParams_ptsz(CUgraphExec* phExec, CUgraph hGraph,
                                                                     CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return instantiate_with_params(phExec, hGraph, params, true);
}
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
extern "C" FG_IMPL CUresult fgimpl_cuGraphLaunch(CUgraphExec hExec, CUstream hStream) {
  return launch(hExec, hStream, false, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphLaunch_ptsz(CUgraphExec hExec, CUstream hStream) {
  return launch(hExec, hStream, true, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphUpload(CUgraphExec hExec, CUstream hStream) {
  return launch(hExec, hStream, false, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphUpload_ptsz(CUgraphExec hExec, CUstream hStream) {
  return launch(hExec, hStream, true, true);
}

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
  return api([&](Backend&) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    gr::UserObject* o = nullptr;
    if (CUresult r = to_cu(gr::user_object_create(ptr, destroy, refs, flags, &o))) return r;
    *out = reinterpret_cast<CUuserObject>(o);
    return CUDA_SUCCESS;
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return api([&](Backend&) { return to_cu(gr::user_object_retain(reinterpret_cast<gr::UserObject*>(object), count)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return api(
      [&](Backend&) { return to_cu(gr::user_object_release(reinterpret_cast<gr::UserObject*>(object), count)); });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                                           unsigned int flags) {
  return api([&](Backend&) {
    return to_cu(gr::retain_user_object(graph_of(graph), reinterpret_cast<gr::UserObject*>(object), count, flags));
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  return api([&](Backend&) {
    return to_cu(gr::release_user_object(graph_of(graph), reinterpret_cast<gr::UserObject*>(object), count));
  });
}
