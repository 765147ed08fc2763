// SPDX-License-Identifier: Apache-2.0
// Stream capture in the runtime shims: typed stream work on a capturing stream becomes a
// graph node instead of running (core/graph.h has the model).
#pragma once
#include "core/graph.h"
#include "runtime/common.h"

#include <utility>

namespace fg::rt {

// True when the capture took the call, *e then being its result: the capture's refusal, or
// what in_capture() answers (usually adding the call's node). False: not capturing, run it.
template <class F>
bool captured(Stream* s, F&& in_capture, cudaError_t* e) {
  bool capturing = false;
  if (Status st = graph::route(s, &capturing); st != Status::Ok) {
    *e = to_cuda(st);
    return true;
  }
  if (!capturing) return false;
  *e = in_capture();
  return true;
}

inline cudaError_t add_node(Stream* s, graph::Params p) { return to_cuda(graph::capture(s, std::move(p))); }

// The node of an event record or an event wait.
inline graph::Params event_node(graph::NodeType type, Event* ev) {
  graph::Params p;
  p.type = type;
  p.event = ev;
  return p;
}

}  // namespace fg::rt
