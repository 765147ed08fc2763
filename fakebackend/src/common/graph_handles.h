// SPDX-License-Identifier: Apache-2.0
// The graph handles of both API shims (runtime/graph.cpp, driver/graph.cpp). The two APIs
// share the handle types (cudaGraph_t is CUgraph, cudaGraphNode_t CUgraphNode, …), and a
// handle is the address of its core object (core/graph.h), so one set of conversions serves
// both. The core checks every handle against its live sets before it dereferences one.
#pragma once
#include "core/graph.h"
#include "fakegpu/cuda_types.h"

// The shims take these in with `using namespace fg::graph::shim`.
namespace fg::graph::shim {

inline Graph* graph_of(fgapi::CUgraph h) noexcept { return reinterpret_cast<Graph*>(h); }
inline Node* node_of(fgapi::CUgraphNode h) noexcept { return reinterpret_cast<Node*>(h); }
inline Exec* exec_of(fgapi::CUgraphExec h) noexcept { return reinterpret_cast<Exec*>(h); }
inline UserObject* object_of(fgapi::CUuserObject h) noexcept { return reinterpret_cast<UserObject*>(h); }
inline fgapi::CUgraphNode handle(Node* n) noexcept { return reinterpret_cast<fgapi::CUgraphNode>(n); }
inline Node* const* nodes_of(const fgapi::CUgraphNode* h) noexcept { return reinterpret_cast<Node* const*>(h); }
// Out-parameters (and arrays of them) the core writes objects into.
template <class T, class H>
T** out_of(H* h) noexcept {
  return reinterpret_cast<T**>(h);
}
inline Node** list_out(fgapi::CUgraphNode* h) noexcept { return out_of<Node>(h); }

static_assert(sizeof(fgapi::CUgraphEdgeData) == kEdgeBytes && sizeof(fgapi::cudaGraphEdgeData) == kEdgeBytes);

// The optional outputs of every ABI of cudaStreamGetCaptureInfo / cuStreamGetCaptureInfo,
// written when non-null. Only the status is defined when the stream does not capture; the
// rest reads as empty then.
template <class StatusT, class Id, class Edge>
void put_capture_info(const CaptureInfo& info, StatusT* status, Id* id, fgapi::CUgraph* graph,
                      const fgapi::CUgraphNode** deps, const Edge** edges, size_t* ndeps) noexcept {
  *status = static_cast<StatusT>(info.status);
  if (id) *id = info.id;
  if (graph) *graph = reinterpret_cast<fgapi::CUgraph>(info.graph);
  if (deps) *deps = reinterpret_cast<const fgapi::CUgraphNode*>(info.deps);
  if (edges) *edges = static_cast<const Edge*>(info.edges);
  if (ndeps) *ndeps = info.ndeps;
}

}  // namespace fg::graph::shim
