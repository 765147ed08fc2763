// SPDX-License-Identifier: Apache-2.0
// Runtime CUDA graphs and stream capture: what a capture records (and that nothing runs
// while it does), launches that replay it, explicit graph construction and topological
// order, capture modes and the calls they refuse, cross-stream capture through events,
// capture queries on every ABI, executable-graph updates, memory nodes, child graphs, DOT
// output, user objects, cluster occupancy and the error paths.
#include "runtime_api.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

using namespace rtt;

namespace {

// The graph entry points, bound like runtime_api.h binds the rest.
struct Graphs {
  cudaError_t (*cudaStreamBeginCapture)(cudaStream_t, cudaStreamCaptureMode);
  cudaError_t (*cudaStreamBeginCapture_ptsz)(cudaStream_t, cudaStreamCaptureMode);
  cudaError_t (*cudaStreamBeginCaptureToGraph)(cudaStream_t, cudaGraph_t, const cudaGraphNode_t*,
                                               const cudaGraphEdgeData*, size_t, cudaStreamCaptureMode);
  cudaError_t (*cudaStreamEndCapture)(cudaStream_t, cudaGraph_t*);
  cudaError_t (*cudaStreamUpdateCaptureDependencies)(cudaStream_t, cudaGraphNode_t*, const cudaGraphEdgeData*, size_t,
                                                     unsigned);
  cudaError_t (*cudaStreamGetCaptureInfo13)(cudaStream_t, cudaStreamCaptureStatus*, unsigned long long*, cudaGraph_t*,
                                            const cudaGraphNode_t**, const cudaGraphEdgeData**, size_t*);
  cudaError_t (*cudaStreamGetCaptureInfo_v3)(cudaStream_t, cudaStreamCaptureStatus*, unsigned long long*, cudaGraph_t*,
                                             const cudaGraphNode_t**, const cudaGraphEdgeData**, size_t*);
  cudaError_t (*cudaGraphCreate)(cudaGraph_t*, unsigned);
  cudaError_t (*cudaGraphDestroy)(cudaGraph_t);
  cudaError_t (*cudaGraphAddKernelNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t,
                                        const cudaKernelNodeParams*);
  cudaError_t (*cudaGraphKernelNodeGetParams)(cudaGraphNode_t, cudaKernelNodeParams*);
  cudaError_t (*cudaGraphAddMemcpyNode1D)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t, void*,
                                          const void*, size_t, cudaMemcpyKind);
  cudaError_t (*cudaGraphMemcpyNodeGetParams)(cudaGraphNode_t, cudaMemcpy3DParms*);
  cudaError_t (*cudaGraphAddMemsetNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t,
                                        const cudaMemsetParams*);
  cudaError_t (*cudaGraphMemsetNodeGetParams)(cudaGraphNode_t, cudaMemsetParams*);
  cudaError_t (*cudaGraphMemsetNodeSetParams)(cudaGraphNode_t, const cudaMemsetParams*);
  cudaError_t (*cudaGraphAddHostNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t,
                                      const cudaHostNodeParams*);
  cudaError_t (*cudaGraphHostNodeGetParams)(cudaGraphNode_t, cudaHostNodeParams*);
  cudaError_t (*cudaGraphAddEmptyNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t);
  cudaError_t (*cudaGraphAddChildGraphNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t, cudaGraph_t);
  cudaError_t (*cudaGraphChildGraphNodeGetGraph)(cudaGraphNode_t, cudaGraph_t*);
  cudaError_t (*cudaGraphAddEventRecordNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t,
                                             cudaEvent_t);
  cudaError_t (*cudaGraphAddEventWaitNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t, cudaEvent_t);
  cudaError_t (*cudaGraphAddMemAllocNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t,
                                          cudaMemAllocNodeParams*);
  cudaError_t (*cudaGraphAddMemFreeNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t, void*);
  cudaError_t (*cudaGraphMemFreeNodeGetParams)(cudaGraphNode_t, void*);
  cudaError_t (*cudaGraphAddNode)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, const cudaGraphEdgeData*,
                                  size_t, cudaGraphNodeParams*);
  cudaError_t (*cudaGraphGetNodes)(cudaGraph_t, cudaGraphNode_t*, size_t*);
  cudaError_t (*cudaGraphGetRootNodes)(cudaGraph_t, cudaGraphNode_t*, size_t*);
  cudaError_t (*cudaGraphGetEdges)(cudaGraph_t, cudaGraphNode_t*, cudaGraphNode_t*, cudaGraphEdgeData*, size_t*);
  cudaError_t (*cudaGraphNodeGetType)(cudaGraphNode_t, cudaGraphNodeType*);
  cudaError_t (*cudaGraphNodeGetDependencies)(cudaGraphNode_t, cudaGraphNode_t*, cudaGraphEdgeData*, size_t*);
  cudaError_t (*cudaGraphNodeGetDependentNodes)(cudaGraphNode_t, cudaGraphNode_t*, cudaGraphEdgeData*, size_t*);
  cudaError_t (*cudaGraphAddDependencies)(cudaGraph_t, const cudaGraphNode_t*, const cudaGraphNode_t*,
                                          const cudaGraphEdgeData*, size_t);
  cudaError_t (*cudaGraphRemoveDependencies)(cudaGraph_t, const cudaGraphNode_t*, const cudaGraphNode_t*,
                                             const cudaGraphEdgeData*, size_t);
  cudaError_t (*cudaGraphDestroyNode)(cudaGraphNode_t);
  cudaError_t (*cudaGraphClone)(cudaGraph_t*, cudaGraph_t);
  cudaError_t (*cudaGraphNodeFindInClone)(cudaGraphNode_t*, cudaGraphNode_t, cudaGraph_t);
  cudaError_t (*cudaGraphInstantiate)(cudaGraphExec_t*, cudaGraph_t, unsigned long long);
  cudaError_t (*cudaGraphInstantiateWithFlags)(cudaGraphExec_t*, cudaGraph_t, unsigned long long);
  cudaError_t (*cudaGraphInstantiateWithParams)(cudaGraphExec_t*, cudaGraph_t, cudaGraphInstantiateParams*);
  cudaError_t (*cudaGraphExecGetFlags)(cudaGraphExec_t, unsigned long long*);
  cudaError_t (*cudaGraphLaunch)(cudaGraphExec_t, cudaStream_t);
  cudaError_t (*cudaGraphUpload)(cudaGraphExec_t, cudaStream_t);
  cudaError_t (*cudaGraphExecDestroy)(cudaGraphExec_t);
  cudaError_t (*cudaGraphExecUpdate)(cudaGraphExec_t, cudaGraph_t, cudaGraphExecUpdateResultInfo*);
  cudaError_t (*cudaGraphExecMemsetNodeSetParams)(cudaGraphExec_t, cudaGraphNode_t, const cudaMemsetParams*);
  cudaError_t (*cudaGraphExecHostNodeSetParams)(cudaGraphExec_t, cudaGraphNode_t, const cudaHostNodeParams*);
  cudaError_t (*cudaGraphNodeSetEnabled)(cudaGraphExec_t, cudaGraphNode_t, unsigned);
  cudaError_t (*cudaGraphNodeGetEnabled)(cudaGraphExec_t, cudaGraphNode_t, unsigned*);
  cudaError_t (*cudaGraphDebugDotPrint)(cudaGraph_t, const char*, unsigned);
  cudaError_t (*cudaUserObjectCreate)(cudaUserObject_t*, void*, cudaHostFn_t, unsigned, unsigned);
  cudaError_t (*cudaUserObjectRelease)(cudaUserObject_t, unsigned);
  cudaError_t (*cudaGraphRetainUserObject)(cudaGraph_t, cudaUserObject_t, unsigned, unsigned);
  cudaError_t (*cudaOccupancyMaxPotentialClusterSize)(int*, const void*, const cudaLaunchConfig_t*);
  cudaError_t (*cudaOccupancyMaxActiveClusters)(int*, const void*, const cudaLaunchConfig_t*);
  cudaError_t (*cudaMemPoolExportToShareableHandle)(void*, cudaMemPool_t, cudaMemAllocationHandleType, unsigned);
  cudaError_t (*cudaMemPoolImportFromShareableHandle)(cudaMemPool_t*, void*, cudaMemAllocationHandleType, unsigned);
  cudaError_t (*cudaMemPoolExportPointer)(cudaMemPoolPtrExportData*, void*);
  cudaError_t (*cudaMemPoolImportPointer)(void**, cudaMemPool_t, cudaMemPoolPtrExportData*);
  // libcudart.so.12 forms
  cudaError_t (*cudaGraphGetEdges12)(cudaGraph_t, cudaGraphNode_t*, cudaGraphNode_t*, size_t*);
  cudaError_t (*cudaGraphAddDependencies12)(cudaGraph_t, const cudaGraphNode_t*, const cudaGraphNode_t*, size_t);

#define G_BIND(name) r.bind(name, #name)
  Graphs() {
    auto& r = rt();
    G_BIND(cudaStreamBeginCapture);
    G_BIND(cudaStreamBeginCapture_ptsz);
    G_BIND(cudaStreamBeginCaptureToGraph);
    G_BIND(cudaStreamEndCapture);
    G_BIND(cudaStreamUpdateCaptureDependencies);
    r.bind(cudaStreamGetCaptureInfo13, "cudaStreamGetCaptureInfo");
    r.bind(cudaStreamGetCaptureInfo_v3, "cudaStreamGetCaptureInfo_v3", "libcudart.so.12");
    G_BIND(cudaGraphCreate);
    G_BIND(cudaGraphDestroy);
    G_BIND(cudaGraphAddKernelNode);
    G_BIND(cudaGraphKernelNodeGetParams);
    G_BIND(cudaGraphAddMemcpyNode1D);
    G_BIND(cudaGraphMemcpyNodeGetParams);
    G_BIND(cudaGraphAddMemsetNode);
    G_BIND(cudaGraphMemsetNodeGetParams);
    G_BIND(cudaGraphMemsetNodeSetParams);
    G_BIND(cudaGraphAddHostNode);
    G_BIND(cudaGraphHostNodeGetParams);
    G_BIND(cudaGraphAddEmptyNode);
    G_BIND(cudaGraphAddChildGraphNode);
    G_BIND(cudaGraphChildGraphNodeGetGraph);
    G_BIND(cudaGraphAddEventRecordNode);
    G_BIND(cudaGraphAddEventWaitNode);
    G_BIND(cudaGraphAddMemAllocNode);
    G_BIND(cudaGraphAddMemFreeNode);
    G_BIND(cudaGraphMemFreeNodeGetParams);
    G_BIND(cudaGraphAddNode);
    G_BIND(cudaGraphGetNodes);
    G_BIND(cudaGraphGetRootNodes);
    G_BIND(cudaGraphGetEdges);
    G_BIND(cudaGraphNodeGetType);
    G_BIND(cudaGraphNodeGetDependencies);
    G_BIND(cudaGraphNodeGetDependentNodes);
    G_BIND(cudaGraphAddDependencies);
    G_BIND(cudaGraphRemoveDependencies);
    G_BIND(cudaGraphDestroyNode);
    G_BIND(cudaGraphClone);
    G_BIND(cudaGraphNodeFindInClone);
    G_BIND(cudaGraphInstantiate);
    G_BIND(cudaGraphInstantiateWithFlags);
    G_BIND(cudaGraphInstantiateWithParams);
    G_BIND(cudaGraphExecGetFlags);
    G_BIND(cudaGraphLaunch);
    G_BIND(cudaGraphUpload);
    G_BIND(cudaGraphExecDestroy);
    G_BIND(cudaGraphExecUpdate);
    G_BIND(cudaGraphExecMemsetNodeSetParams);
    G_BIND(cudaGraphExecHostNodeSetParams);
    G_BIND(cudaGraphNodeSetEnabled);
    G_BIND(cudaGraphNodeGetEnabled);
    G_BIND(cudaGraphDebugDotPrint);
    G_BIND(cudaUserObjectCreate);
    G_BIND(cudaUserObjectRelease);
    G_BIND(cudaGraphRetainUserObject);
    G_BIND(cudaOccupancyMaxPotentialClusterSize);
    G_BIND(cudaOccupancyMaxActiveClusters);
    G_BIND(cudaMemPoolExportToShareableHandle);
    G_BIND(cudaMemPoolImportFromShareableHandle);
    G_BIND(cudaMemPoolExportPointer);
    G_BIND(cudaMemPoolImportPointer);
    r.bind(cudaGraphGetEdges12, "cudaGraphGetEdges", "libcudart.so.12");
    r.bind(cudaGraphAddDependencies12, "cudaGraphAddDependencies", "libcudart.so.12");
  }
#undef G_BIND
};

Graphs& g() {
  static Graphs* p = new Graphs;
  return *p;
}

// Stand-ins for nvcc's host stubs (only their addresses matter: kernels never run).
char stub_graph_kernel, stub_other_kernel, stub_unregistered;
char name_graph_kernel[] = "_Z12graph_kernelPi";
char name_other_kernel[] = "_Z12other_kernelv";
char fatbin_wrapper[24];

void registered() {
  static bool once = [] {
    auto& r = rt();
    void** h = r.__cudaRegisterFatBinary(fatbin_wrapper);
    r.__cudaRegisterFunction(h, &stub_graph_kernel, name_graph_kernel, name_graph_kernel, -1, nullptr, nullptr, nullptr,
                             nullptr, nullptr);
    r.__cudaRegisterFunction(h, &stub_other_kernel, name_other_kernel, name_other_kernel, -1, nullptr, nullptr, nullptr,
                             nullptr, nullptr);
    r.__cudaRegisterFatBinaryEnd(h);
    return true;
  }();
  (void)once;
}

// A graph case: a runtime case with the graph kernels registered.
struct GraphCase : Case {
  GraphCase() {
    registered();
    clear_error();
  }
};

cudaError_t launch(const void* stub, cudaStream_t s) {
  void* args[1] = {nullptr};
  return rt().cudaLaunchKernel(stub, dim3{4, 1, 1}, dim3{64, 1, 1}, args, 0, s);
}

size_t count_nodes(cudaGraph_t graph) {
  size_t n = 0;
  REQUIRE(g().cudaGraphGetNodes(graph, nullptr, &n) == cudaSuccess);
  return n;
}

std::vector<cudaGraphNode_t> nodes_of(cudaGraph_t graph) {
  size_t n = count_nodes(graph);
  std::vector<cudaGraphNode_t> v(n);
  REQUIRE(g().cudaGraphGetNodes(graph, v.data(), &n) == cudaSuccess);
  return v;
}

cudaGraphNodeType type_of(cudaGraphNode_t n) {
  cudaGraphNodeType t = cudaGraphNodeTypeCount;
  REQUIRE(g().cudaGraphNodeGetType(n, &t) == cudaSuccess);
  return t;
}

std::vector<cudaGraphNodeType> types_of(const std::vector<cudaGraphNode_t>& nodes) {
  std::vector<cudaGraphNodeType> v;
  for (cudaGraphNode_t n : nodes) v.push_back(type_of(n));
  return v;
}

cudaStreamCaptureStatus capture_status(cudaStream_t s) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  REQUIRE(rt().cudaStreamIsCapturing(s, &st) == cudaSuccess);
  return st;
}

// cudaMalloc of 64 bytes (and cudaFree of them, when that succeeded) on a new thread whose
// capture mode is `mode` (a new thread starts in global mode); the first error, or cudaSuccess.
cudaError_t malloc_on_thread(cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal) {
  cudaError_t e = cudaErrorUnknown;
  std::thread([&] {
    auto& r = rt();
    if (mode != cudaStreamCaptureModeGlobal) r.cudaThreadExchangeStreamCaptureMode(&mode);
    void* t = nullptr;
    e = r.cudaMalloc(&t, 64);
    if (e == cudaSuccess) e = r.cudaFree(t);
  }).join();
  return e;
}

cudaStream_t new_stream(unsigned flags = cudaStreamNonBlocking) {
  cudaStream_t s = nullptr;
  REQUIRE(rt().cudaStreamCreateWithFlags(&s, flags) == cudaSuccess);
  return s;
}

// The capture every case starts from: H2D copy, kernel, memset, host function, D2H copy.
struct Pipeline {
  static constexpr size_t kBytes = 256;
  unsigned char* src = nullptr;  // pinned
  unsigned char* dst = nullptr;  // pinned
  unsigned char* dev = nullptr;
  Order order;
  Step step{&order, 1};

  Pipeline() {
    auto& r = rt();
    REQUIRE(r.cudaMallocHost(reinterpret_cast<void**>(&src), kBytes) == cudaSuccess);
    REQUIRE(r.cudaMallocHost(reinterpret_cast<void**>(&dst), kBytes) == cudaSuccess);
    REQUIRE(r.cudaMalloc(reinterpret_cast<void**>(&dev), kBytes) == cudaSuccess);
    for (size_t i = 0; i < kBytes; ++i) src[i] = static_cast<unsigned char>(i);
    std::memset(dst, 0xEE, kBytes);
    REQUIRE(r.cudaMemset(dev, 0x11, kBytes) == cudaSuccess);
  }
  ~Pipeline() {
    auto& r = rt();
    r.cudaFreeHost(src);
    r.cudaFreeHost(dst);
    r.cudaFree(dev);
  }
  void capture(cudaStream_t s) {
    auto& r = rt();
    REQUIRE(r.cudaMemcpyAsync(dev, src, kBytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
    REQUIRE(launch(&stub_graph_kernel, s) == cudaSuccess);
    REQUIRE(r.cudaMemsetAsync(dev + kBytes / 2, 0x7F, kBytes / 2, s) == cudaSuccess);
    REQUIRE(r.cudaLaunchHostFunc(s, record_step, &step) == cudaSuccess);
    REQUIRE(r.cudaMemcpyAsync(dst, dev, kBytes, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  }
  bool result_ok(unsigned char base) const {
    for (size_t i = 0; i < kBytes; ++i) {
      const unsigned char want = i < kBytes / 2 ? static_cast<unsigned char>(i + base) : 0x7F;
      if (dst[i] != want) return false;
    }
    return true;
  }
};

}  // namespace

TEST_CASE_METHOD(GraphCase, "runtime graphs: a capture records the work; each launch replays it", "[runtime]") {
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  Pipeline p;
  cudaStream_t s = new_stream();
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(capture_status(s) == cudaStreamCaptureStatusActive);
  p.capture(s);
  // Nothing ran: the host function was not called and no byte moved.
  CHECK(p.order.get().empty());
  CHECK(p.dst[0] == 0xEE);
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaStreamEndCapture(s, &graph) == cudaSuccess);
  REQUIRE(graph != nullptr);
  CHECK(capture_status(s) == cudaStreamCaptureStatusNone);
  unsigned char probe[4] = {};
  REQUIRE(r.cudaMemcpy(probe, p.dev, 4, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(probe[1] == 0x11);  // the captured copy and memset did not touch the device

  // Five nodes in a chain, in capture order.
  auto nodes = nodes_of(graph);
  REQUIRE(nodes.size() == 5);
  CHECK(types_of(nodes) == std::vector{cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeKernel, cudaGraphNodeTypeMemset,
                                       cudaGraphNodeTypeHost, cudaGraphNodeTypeMemcpy});
  size_t roots = 0;
  REQUIRE(g().cudaGraphGetRootNodes(graph, nullptr, &roots) == cudaSuccess);
  CHECK(roots == 1);
  size_t edges = 0;
  REQUIRE(g().cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges) == cudaSuccess);
  CHECK(edges == 4);
  // The captured nodes carry their parameters.
  cudaKernelNodeParams kp{};
  REQUIRE(g().cudaGraphKernelNodeGetParams(nodes[1], &kp) == cudaSuccess);
  CHECK((kp.gridDim.x == 4 && kp.blockDim.x == 64 && kp.sharedMemBytes == 0));
  cudaMemsetParams mp{};
  REQUIRE(g().cudaGraphMemsetNodeGetParams(nodes[2], &mp) == cudaSuccess);
  CHECK((mp.dst == p.dev + Pipeline::kBytes / 2 && mp.value == 0x7F && mp.elementSize == 1 &&
         mp.width == Pipeline::kBytes / 2 && mp.height == 1));
  cudaHostNodeParams hp{};
  REQUIRE(g().cudaGraphHostNodeGetParams(nodes[3], &hp) == cudaSuccess);
  CHECK((hp.fn == record_step && hp.userData == &p.step));
  cudaMemcpy3DParms cp{};
  REQUIRE(g().cudaGraphMemcpyNodeGetParams(nodes[0], &cp) == cudaSuccess);
  CHECK((cp.srcPtr.ptr == p.src && cp.dstPtr.ptr == p.dev && cp.extent.width == Pipeline::kBytes &&
         cp.extent.height == 1 && cp.extent.depth == 1 && cp.kind == cudaMemcpyHostToDevice));

  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(p.result_ok(0));
  CHECK(p.order.get() == std::vector<int>{1});

  // The second launch reads the source again: change it first.
  for (size_t i = 0; i < Pipeline::kBytes; ++i) p.src[i] = static_cast<unsigned char>(i + 3);
  std::memset(p.dst, 0, Pipeline::kBytes);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(p.result_ok(3));
  CHECK(p.order.get() == std::vector<int>{1, 1});

  // Another stream (and the legacy stream) can launch it too.
  cudaStream_t s2 = new_stream(0);
  REQUIRE(g().cudaGraphUpload(exec, s2) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s2) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  CHECK(p.order.get().size() == 4);

  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s2) == cudaSuccess);
  CHECK(r.cudaGetLastError() == cudaSuccess);
}

TEST_CASE("runtime graphs: captured kernels are recorded once per launch", "[runtime]") {
  const auto report = nlohmann::json::parse(child_report("runtime child: graph launch report"));
  const auto& kernels = report.at("kernel_launches");
  CHECK(kernels.at(name_graph_kernel).get<int>() == 2);  // two launches of the graph; none while capturing
  CHECK(kernels.at(name_other_kernel).get<int>() == 3);  // explicit kernel node, three launches
}

TEST_CASE("runtime child: graph launch report", "[.runtime-child]") {
  auto& r = rt();
  registered();
  Pipeline p;
  cudaStream_t s = new_stream();
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  p.capture(s);
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaStreamEndCapture(s, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);

  cudaGraph_t g2 = nullptr;
  REQUIRE(g().cudaGraphCreate(&g2, 0) == cudaSuccess);
  cudaKernelNodeParams kp{};
  kp.func = &stub_other_kernel;
  kp.gridDim = dim3{1, 1, 1};
  kp.blockDim = dim3{32, 1, 1};
  cudaGraphNode_t k = nullptr;
  REQUIRE(g().cudaGraphAddKernelNode(&k, g2, nullptr, 0, &kp) == cudaSuccess);
  cudaGraphExec_t e2 = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&e2, g2, 0) == cudaSuccess);
  for (int i = 0; i < 3; ++i) REQUIRE(g().cudaGraphLaunch(e2, s) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: explicit construction, edges and topological order", "[runtime]") {
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaGraphCreate(&graph, 0) == cudaSuccess);
  Order order;
  Step steps[4] = {{&order, 0}, {&order, 1}, {&order, 2}, {&order, 3}};
  // Created out of order (D, C, B, A); the edges A→B, A→C, B→D, C→D decide the order.
  cudaGraphNode_t n[4] = {};
  for (int i = 3; i >= 0; --i) {
    cudaHostNodeParams hp{record_step, &steps[i]};
    REQUIRE(g().cudaGraphAddHostNode(&n[i], graph, nullptr, 0, &hp) == cudaSuccess);
  }
  const cudaGraphNode_t from[4] = {n[0], n[0], n[1], n[2]};
  const cudaGraphNode_t to[4] = {n[1], n[2], n[3], n[3]};
  REQUIRE(g().cudaGraphAddDependencies(graph, from, to, nullptr, 4) == cudaSuccess);
  // An edge that exists already, a node of another graph, a self edge: invalid.
  CHECK(g().cudaGraphAddDependencies(graph, from, to, nullptr, 1) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphAddDependencies(graph, &n[0], &n[0], nullptr, 1) == cudaErrorInvalidValue);
  cudaGraphEdgeData programmatic{};
  programmatic.type = cudaGraphDependencyTypeProgrammatic;
  CHECK(g().cudaGraphAddDependencies(graph, &n[1], &n[2], &programmatic, 1) == cudaErrorInvalidValue);

  size_t count = 0;
  REQUIRE(g().cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count) == cudaSuccess);
  CHECK(count == 4);
  cudaGraphNode_t ef[6] = {}, et[6] = {};
  cudaGraphEdgeData ed[6];
  std::memset(ed, 0xFF, sizeof ed);
  count = 6;
  REQUIRE(g().cudaGraphGetEdges(graph, ef, et, ed, &count) == cudaSuccess);
  CHECK(count == 4);
  CHECK((ef[4] == nullptr && et[5] == nullptr && ed[0].type == 0 && ed[0].from_port == 0));
  count = 0;
  REQUIRE(g().cudaGraphGetEdges12(graph, nullptr, nullptr, &count) == cudaSuccess);  // libcudart.so.12 ABI
  CHECK(count == 4);
  size_t roots = 2;
  cudaGraphNode_t root[2] = {};
  REQUIRE(g().cudaGraphGetRootNodes(graph, root, &roots) == cudaSuccess);
  CHECK((roots == 1 && root[0] == n[0] && root[1] == nullptr));
  cudaGraphNode_t deps[2] = {};
  size_t nd = 2;
  REQUIRE(g().cudaGraphNodeGetDependencies(n[3], deps, nullptr, &nd) == cudaSuccess);
  CHECK((nd == 2 && deps[0] == n[1] && deps[1] == n[2]));
  nd = 0;
  REQUIRE(g().cudaGraphNodeGetDependentNodes(n[0], nullptr, nullptr, &nd) == cudaSuccess);
  CHECK(nd == 2);

  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  cudaStream_t s = new_stream();
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  auto seen = order.get();
  REQUIRE(seen.size() == 4);
  CHECK(seen.front() == 0);
  CHECK(seen.back() == 3);

  // Removing edges: an absent one is invalid; after removing B→D, D only waits for C.
  REQUIRE(g().cudaGraphRemoveDependencies(graph, &n[1], &n[3], nullptr, 1) == cudaSuccess);
  CHECK(g().cudaGraphRemoveDependencies(graph, &n[1], &n[3], nullptr, 1) == cudaErrorInvalidValue);
  nd = 0;
  REQUIRE(g().cudaGraphNodeGetDependencies(n[3], nullptr, nullptr, &nd) == cudaSuccess);
  CHECK(nd == 1);
  // Destroying a node takes its edges with it.
  REQUIRE(g().cudaGraphDestroyNode(n[2]) == cudaSuccess);
  CHECK(count_nodes(graph) == 3);
  REQUIRE(g().cudaGraphGetRootNodes(graph, nullptr, &roots) == cudaSuccess);
  CHECK(roots == 2);  // A, and D which lost its last dependency
  CHECK(g().cudaGraphDestroyNode(n[2]) == cudaErrorInvalidValue);

  // A cycle cannot be instantiated.
  REQUIRE(g().cudaGraphAddDependencies12(graph, &n[3], &n[1], 1) == cudaSuccess);
  REQUIRE(g().cudaGraphAddDependencies(graph, &n[1], &n[3], nullptr, 1) == cudaSuccess);
  cudaGraphExec_t bad = nullptr;
  cudaGraphInstantiateParams ip{};
  CHECK(g().cudaGraphInstantiateWithParams(&bad, graph, &ip) == cudaErrorInvalidValue);
  CHECK(ip.result_out == cudaGraphInstantiateInvalidStructure);
  CHECK(ip.errNode_out != nullptr);

  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: explicit copy, memset, kernel, event and empty nodes", "[runtime]") {
  constexpr size_t kN = 64;
  unsigned char* dev = nullptr;
  REQUIRE(r.cudaMalloc(reinterpret_cast<void**>(&dev), kN) == cudaSuccess);
  std::vector<unsigned char> host(kN, 0);
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaGraphCreate(&graph, 0) == cudaSuccess);
  cudaMemsetParams mp{dev, 0, 0xAB, 1, kN, 1};
  cudaGraphNode_t set = nullptr, kern = nullptr, copy = nullptr, empty = nullptr, rec = nullptr, wait = nullptr;
  REQUIRE(g().cudaGraphAddMemsetNode(&set, graph, nullptr, 0, &mp) == cudaSuccess);
  cudaKernelNodeParams kp{};
  kp.func = &stub_graph_kernel;
  kp.gridDim = dim3{2, 1, 1};
  kp.blockDim = dim3{128, 1, 1};
  REQUIRE(g().cudaGraphAddKernelNode(&kern, graph, &set, 1, &kp) == cudaSuccess);
  // Pageable host memory is fine in an explicit memcpy node: it is read when the node runs.
  REQUIRE(g().cudaGraphAddMemcpyNode1D(&copy, graph, &kern, 1, host.data(), dev, kN, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  REQUIRE(g().cudaGraphAddEmptyNode(&empty, graph, &copy, 1) == cudaSuccess);
  cudaEvent_t ev = nullptr;
  REQUIRE(r.cudaEventCreate(&ev) == cudaSuccess);
  REQUIRE(g().cudaGraphAddEventRecordNode(&rec, graph, &empty, 1, ev) == cudaSuccess);
  REQUIRE(g().cudaGraphAddEventWaitNode(&wait, graph, &rec, 1, ev) == cudaSuccess);
  CHECK(type_of(empty) == cudaGraphNodeTypeEmpty);
  CHECK(type_of(rec) == cudaGraphNodeTypeEventRecord);
  CHECK(type_of(wait) == cudaGraphNodeTypeWaitEvent);

  // Bad parameters.
  cudaGraphNode_t x = nullptr;
  kp.func = &stub_unregistered;
  CHECK(g().cudaGraphAddKernelNode(&x, graph, nullptr, 0, &kp) == cudaErrorInvalidDeviceFunction);
  kp.func = &stub_graph_kernel;
  kp.blockDim = dim3{0, 1, 1};
  CHECK(g().cudaGraphAddKernelNode(&x, graph, nullptr, 0, &kp) == cudaErrorInvalidValue);
  cudaMemsetParams bad_set{dev, 0, 1, 3, kN, 1};
  CHECK(g().cudaGraphAddMemsetNode(&x, graph, nullptr, 0, &bad_set) == cudaErrorInvalidValue);
  bad_set = cudaMemsetParams{dev, 0, 1, 1, kN + 1, 1};  // past the allocation
  CHECK(g().cudaGraphAddMemsetNode(&x, graph, nullptr, 0, &bad_set) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphAddMemcpyNode1D(&x, graph, nullptr, 0, host.data(), host.data() + 1, 4, cudaMemcpyDeviceToHost) ==
        cudaErrorInvalidValue);
  // A copy node copies something (NVIDIA answers cudaErrorInvalidValue for a count of 0).
  CHECK(g().cudaGraphAddMemcpyNode1D(&x, graph, nullptr, 0, host.data(), dev, 0, cudaMemcpyDeviceToHost) ==
        cudaErrorInvalidValue);
  cudaHostNodeParams no_fn{nullptr, nullptr};
  CHECK(g().cudaGraphAddHostNode(&x, graph, nullptr, 0, &no_fn) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphAddEventRecordNode(&x, graph, nullptr, 0, reinterpret_cast<cudaEvent_t>(0xdead0)) ==
        cudaErrorInvalidValue);
  const cudaGraphNode_t twice[2] = {set, set};
  CHECK(g().cudaGraphAddEmptyNode(&x, graph, twice, 2) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphAddEmptyNode(nullptr, graph, nullptr, 0) == cudaErrorInvalidValue);
  CHECK(count_nodes(graph) == 6);

  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  cudaStream_t s = new_stream();
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(std::all_of(host.begin(), host.end(), [](unsigned char c) { return c == 0xAB; }));
  CHECK(r.cudaEventQuery(ev) == cudaSuccess);

  // A node parameter change reaches only graphs instantiated after it...
  mp.value = 0x5A;
  REQUIRE(g().cudaGraphMemsetNodeSetParams(set, &mp) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(host[0] == 0xAB);
  // ...or the executable graph itself, through its own setter.
  REQUIRE(g().cudaGraphExecMemsetNodeSetParams(exec, set, &mp) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(host[0] == 0x5A);
  // A disabled memset node does nothing.
  unsigned on = 7;
  REQUIRE(g().cudaGraphNodeGetEnabled(exec, set, &on) == cudaSuccess);
  CHECK(on == 1);
  REQUIRE(g().cudaGraphNodeSetEnabled(exec, set, 0) == cudaSuccess);
  mp.value = 0x01;
  REQUIRE(g().cudaGraphExecMemsetNodeSetParams(exec, set, &mp) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(host[0] == 0x5A);
  CHECK(g().cudaGraphNodeSetEnabled(exec, empty, 0) == cudaErrorInvalidValue);  // kernels, copies, memsets only
  // The wrong setter for a node's type.
  cudaHostNodeParams hp{record_step, nullptr};
  CHECK(g().cudaGraphExecHostNodeSetParams(exec, set, &hp) == cudaErrorInvalidValue);

  unsigned long long flags = 99;
  REQUIRE(g().cudaGraphExecGetFlags(exec, &flags) == cudaSuccess);
  CHECK(flags == 0);
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(r.cudaEventDestroy(ev) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(r.cudaFree(dev) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "runtime graphs: generic cudaGraphAddNode", "[runtime]") {
  int* dev = nullptr;
  REQUIRE(r.cudaMalloc(reinterpret_cast<void**>(&dev), 64) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaGraphCreate(&graph, 0) == cudaSuccess);
  cudaGraphNodeParams np{};
  np.type = cudaGraphNodeTypeMemset;
  np.memset = cudaMemsetParamsV2{dev, 0, 0x01020304u, 4, 16, 1};
  cudaGraphNode_t set = nullptr;
  REQUIRE(g().cudaGraphAddNode(&set, graph, nullptr, nullptr, 0, &np) == cudaSuccess);
  cudaGraphNodeParams alloc{};
  alloc.type = cudaGraphNodeTypeMemAlloc;
  alloc.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.alloc.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  alloc.alloc.bytesize = 4096;
  cudaGraphNode_t an = nullptr;
  REQUIRE(g().cudaGraphAddNode(&an, graph, &set, nullptr, 1, &alloc) == cudaSuccess);
  CHECK(alloc.alloc.dptr != nullptr);
  cudaGraphNodeParams cond{};
  cond.type = cudaGraphNodeTypeConditional;
  cudaGraphNode_t x = nullptr;
  CHECK(g().cudaGraphAddNode(&x, graph, nullptr, nullptr, 0, &cond) == cudaErrorNotSupported);
  cond.type = static_cast<cudaGraphNodeType>(0x7fffff00);  // names no node type
  CHECK(g().cudaGraphAddNode(&x, graph, nullptr, nullptr, 0, &cond) == cudaErrorInvalidValue);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  int host[16] = {};
  REQUIRE(r.cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK((host[0] == 0x01020304 && host[15] == 0x01020304));
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(r.cudaFree(dev) == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: capture modes refuse unsafe calls and invalidate the capture",
                 "[runtime]") {
  cudaStream_t s = new_stream();
  void* p = nullptr;

  // Global mode: cudaMalloc is refused, the capture is invalidated, later work on the
  // stream answers cudaErrorStreamCaptureInvalidated, and ending it gives no graph.
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(r.cudaMalloc(&p, 64) == cudaErrorStreamCaptureUnsupported);
  CHECK(r.cudaGetLastError() == cudaErrorStreamCaptureUnsupported);
  CHECK(capture_status(s) == cudaStreamCaptureStatusInvalidated);
  CHECK(launch(&stub_graph_kernel, s) == cudaErrorStreamCaptureInvalidated);
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(1);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  CHECK(graph == nullptr);
  CHECK(capture_status(s) == cudaStreamCaptureStatusNone);
  clear_error();

  // The thread may opt out with cudaThreadExchangeStreamCaptureMode (what PyTorch's caching
  // allocator does around cudaMalloc).
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(r.cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeGlobal);
  REQUIRE(r.cudaMalloc(&p, 64) == cudaSuccess);
  REQUIRE(r.cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeRelaxed);
  CHECK(capture_status(s) == cudaStreamCaptureStatusActive);
  // Synchronising or querying the capturing stream is refused in every mode.
  CHECK(r.cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
  CHECK(capture_status(s) == cudaStreamCaptureStatusInvalidated);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // Relaxed capture: cudaMalloc is allowed; synchronous copies and queries on other streams too.
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  void* q = nullptr;
  REQUIRE(r.cudaMalloc(&q, 64) == cudaSuccess);
  REQUIRE(r.cudaMemset(q, 0, 64) == cudaSuccess);
  REQUIRE(r.cudaFree(q) == cudaSuccess);
  CHECK(r.cudaStreamQuery(s) == cudaErrorStreamCaptureUnsupported);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // Thread-local capture: other threads (global mode) are not restricted by it.
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  CHECK(malloc_on_thread() == cudaSuccess);
  CHECK(capture_status(s) == cudaStreamCaptureStatusActive);
  CHECK(r.cudaMalloc(&q, 64) == cudaErrorStreamCaptureUnsupported);  // but this thread is
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // Global capture: an unsafe call from another thread in global mode is refused and
  // invalidates it; a thread in relaxed mode is not restricted.
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(malloc_on_thread(cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(capture_status(s) == cudaStreamCaptureStatusActive);
  CHECK(malloc_on_thread() == cudaErrorStreamCaptureUnsupported);
  CHECK(capture_status(s) == cudaStreamCaptureStatusInvalidated);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // Device synchronisation and an event recorded in the capture.
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  cudaEvent_t ev = nullptr;
  REQUIRE(r.cudaEventCreate(&ev) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(ev, s) == cudaSuccess);
  CHECK(r.cudaEventQuery(ev) == cudaErrorCapturedEvent);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(r.cudaDeviceSynchronize() == cudaErrorStreamCaptureUnsupported);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  // After the capture the event is an ordinary one again.
  REQUIRE(r.cudaEventRecord(ev, s) == cudaSuccess);
  CHECK(r.cudaEventSynchronize(ev) == cudaSuccess);
  clear_error();

  // Pageable host memory cannot be captured.
  std::vector<char> pageable(64);
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(r.cudaMemcpyAsync(p, pageable.data(), 64, cudaMemcpyHostToDevice, s) == cudaErrorStreamCaptureUnsupported);
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  REQUIRE(r.cudaFree(p) == cudaSuccess);
  REQUIRE(r.cudaEventDestroy(ev) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
  CHECK(r.cudaGetLastError() == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: cross-stream capture forks and joins through events", "[runtime]") {
  cudaStream_t s0 = new_stream(), s1 = new_stream(), s2 = new_stream();
  cudaEvent_t fork = nullptr, join = nullptr, outside = nullptr;
  REQUIRE(r.cudaEventCreateWithFlags(&fork, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(r.cudaEventCreateWithFlags(&join, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(r.cudaEventCreate(&outside) == cudaSuccess);
  Order order;
  Step a{&order, 1}, b{&order, 2}, c{&order, 3};

  REQUIRE(g().cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(r.cudaLaunchHostFunc(s0, record_step, &a) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(fork, s0) == cudaSuccess);
  REQUIRE(r.cudaStreamWaitEvent(s1, fork, 0) == cudaSuccess);  // s1 joins the capture
  CHECK(capture_status(s1) == cudaStreamCaptureStatusActive);
  unsigned long long id0 = 0, id1 = 1;
  cudaStreamCaptureStatus st{};
  REQUIRE(g().cudaStreamGetCaptureInfo13(s0, &st, &id0, nullptr, nullptr, nullptr, nullptr) == cudaSuccess);
  REQUIRE(g().cudaStreamGetCaptureInfo13(s1, &st, &id1, nullptr, nullptr, nullptr, nullptr) == cudaSuccess);
  CHECK((id0 == id1 && id0 != 0));
  REQUIRE(r.cudaLaunchHostFunc(s1, record_step, &b) == cudaSuccess);
  REQUIRE(launch(&stub_graph_kernel, s0) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(join, s1) == cudaSuccess);
  REQUIRE(r.cudaStreamWaitEvent(s0, join, 0) == cudaSuccess);  // joined back
  REQUIRE(r.cudaLaunchHostFunc(s0, record_step, &c) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaStreamEndCapture(s0, &graph) == cudaSuccess);
  CHECK(capture_status(s1) == cudaStreamCaptureStatusNone);
  CHECK(order.get().empty());
  auto nodes = nodes_of(graph);
  REQUIRE(nodes.size() == 4);
  // The last host node depends on both branches.
  size_t nd = 0;
  REQUIRE(g().cudaGraphNodeGetDependencies(nodes[3], nullptr, nullptr, &nd) == cudaSuccess);
  CHECK(nd == 2);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s2) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s2) == cudaSuccess);
  auto seen = order.get();
  REQUIRE(seen.size() == 3);
  CHECK((seen.front() == 1 && seen.back() == 3));
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);

  // A fork never joined back: cudaErrorStreamCaptureUnjoined.
  REQUIRE(g().cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(fork, s0) == cudaSuccess);
  REQUIRE(r.cudaStreamWaitEvent(s1, fork, 0) == cudaSuccess);
  REQUIRE(r.cudaLaunchHostFunc(s1, record_step, &b) == cudaSuccess);
  CHECK(g().cudaStreamEndCapture(s0, &graph) == cudaErrorStreamCaptureUnjoined);
  CHECK(graph == nullptr);
  CHECK(capture_status(s1) == cudaStreamCaptureStatusNone);
  clear_error();

  // Ending the capture on a joined stream instead of the origin: cudaErrorStreamCaptureUnmatched.
  REQUIRE(g().cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(fork, s0) == cudaSuccess);
  REQUIRE(r.cudaStreamWaitEvent(s1, fork, 0) == cudaSuccess);
  CHECK(g().cudaStreamEndCapture(s1, &graph) == cudaErrorStreamCaptureUnmatched);
  CHECK(g().cudaStreamEndCapture(s0, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // Waiting on an event recorded outside the capture: cudaErrorStreamCaptureIsolation.
  REQUIRE(r.cudaEventRecord(outside, s2) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s2) == cudaSuccess);
  REQUIRE(g().cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(r.cudaStreamWaitEvent(s0, outside, 0) == cudaErrorStreamCaptureIsolation);
  CHECK(g().cudaStreamEndCapture(s0, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // Two captures merged through an event: cudaErrorStreamCaptureMerge.
  REQUIRE(g().cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(g().cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(fork, s0) == cudaSuccess);
  CHECK(r.cudaStreamWaitEvent(s1, fork, 0) == cudaErrorStreamCaptureMerge);
  CHECK(g().cudaStreamEndCapture(s1, &graph) == cudaErrorStreamCaptureInvalidated);
  REQUIRE(g().cudaStreamEndCapture(s0, &graph) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  clear_error();

  for (cudaEvent_t e : {fork, join, outside}) REQUIRE(r.cudaEventDestroy(e) == cudaSuccess);
  for (cudaStream_t s : {s0, s1, s2}) REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: capture queries on every ABI", "[runtime]") {
  cudaStream_t s = new_stream();
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
  unsigned long long id = 7;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t nd = 9;
  REQUIRE(g().cudaStreamGetCaptureInfo13(s, &st, &id, &graph, &deps, &edges, &nd) == cudaSuccess);
  CHECK((st == cudaStreamCaptureStatusNone && nd == 0));

  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(g().cudaStreamGetCaptureInfo13(s, &st, &id, &graph, &deps, &edges, &nd) == cudaSuccess);
  CHECK((st == cudaStreamCaptureStatusActive && id != 0 && graph != nullptr && nd == 0));
  REQUIRE(launch(&stub_graph_kernel, s) == cudaSuccess);
  REQUIRE(g().cudaStreamGetCaptureInfo13(s, &st, &id, &graph, &deps, &edges, &nd) == cudaSuccess);
  REQUIRE(nd == 1);
  const cudaGraphNode_t kernel_node = deps[0];
  CHECK(type_of(kernel_node) == cudaGraphNodeTypeKernel);
  CHECK((edges != nullptr && edges[0].type == 0));
  // The graph being captured may be inspected (not destroyed).
  CHECK(count_nodes(graph) == 1);
  CHECK(g().cudaGraphDestroy(graph) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphDestroyNode(kernel_node) == cudaErrorInvalidValue);
  // edgeData without dependencies is invalid.
  CHECK(g().cudaStreamGetCaptureInfo13(s, &st, nullptr, nullptr, nullptr, &edges, nullptr) == cudaErrorInvalidValue);
  CHECK(g().cudaStreamGetCaptureInfo13(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) ==
        cudaErrorInvalidValue);
  // libcudart.so.12's forms.
  unsigned long long id12 = 0, id_v2 = 0;
  REQUIRE(r.cudaStreamGetCaptureInfo12(s, &st, &id12) == cudaSuccess);
  CHECK((st == cudaStreamCaptureStatusActive && id12 == id));
  cudaGraph_t g_v2 = nullptr;
  const cudaGraphNode_t* deps_v2 = nullptr;
  size_t nd_v2 = 0;
  REQUIRE(r.cudaStreamGetCaptureInfo_v2(s, &st, &id_v2, &g_v2, &deps_v2, &nd_v2) == cudaSuccess);
  CHECK((id_v2 == id && g_v2 == graph && nd_v2 == 1 && deps_v2[0] == kernel_node));
  REQUIRE(g().cudaStreamGetCaptureInfo_v3(s, &st, &id_v2, &g_v2, &deps_v2, &edges, &nd_v2) == cudaSuccess);
  CHECK(nd_v2 == 1);

  // Dependency updates: replace the set with nothing, then add the kernel back.
  REQUIRE(g().cudaStreamUpdateCaptureDependencies(s, nullptr, nullptr, 0, cudaStreamSetCaptureDependencies) ==
          cudaSuccess);
  REQUIRE(g().cudaStreamGetCaptureInfo13(s, &st, nullptr, nullptr, &deps, nullptr, &nd) == cudaSuccess);
  CHECK(nd == 0);
  cudaGraphNode_t k = kernel_node;
  REQUIRE(g().cudaStreamUpdateCaptureDependencies(s, &k, nullptr, 1, cudaStreamAddCaptureDependencies) == cudaSuccess);
  CHECK(g().cudaStreamUpdateCaptureDependencies(s, &k, nullptr, 1, 7) == cudaErrorInvalidValue);
  REQUIRE(launch(&stub_other_kernel, s) == cudaSuccess);
  cudaGraph_t done = nullptr;
  REQUIRE(g().cudaStreamEndCapture(s, &done) == cudaSuccess);
  CHECK(done == graph);
  CHECK(count_nodes(done) == 2);
  size_t edge_count = 0;
  REQUIRE(g().cudaGraphGetEdges(done, nullptr, nullptr, nullptr, &edge_count) == cudaSuccess);
  CHECK(edge_count == 1);
  CHECK(g().cudaStreamUpdateCaptureDependencies(s, &k, nullptr, 1, 0) == cudaErrorIllegalState);
  REQUIRE(g().cudaGraphDestroy(done) == cudaSuccess);

  // The per-thread default stream captures too.
  REQUIRE(g().cudaStreamBeginCapture_ptsz(nullptr, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(capture_status(cudaStreamPerThread) == cudaStreamCaptureStatusActive);
  REQUIRE(launch(&stub_graph_kernel, cudaStreamPerThread) == cudaSuccess);
  REQUIRE(g().cudaStreamEndCapture(cudaStreamPerThread, &done) == cudaSuccess);
  CHECK(count_nodes(done) == 1);
  REQUIRE(g().cudaGraphDestroy(done) == cudaSuccess);

  // Capture into an existing graph, after one of its nodes.
  cudaGraph_t into = nullptr;
  REQUIRE(g().cudaGraphCreate(&into, 0) == cudaSuccess);
  cudaGraphNode_t first = nullptr;
  REQUIRE(g().cudaGraphAddEmptyNode(&first, into, nullptr, 0) == cudaSuccess);
  REQUIRE(g().cudaStreamBeginCaptureToGraph(s, into, &first, nullptr, 1, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(launch(&stub_graph_kernel, s) == cudaSuccess);
  REQUIRE(g().cudaStreamEndCapture(s, &done) == cudaSuccess);
  CHECK(done == into);
  CHECK(count_nodes(into) == 2);
  REQUIRE(g().cudaGraphDestroy(into) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: the legacy stream and blocking captures", "[runtime]") {
  cudaGraph_t graph = nullptr;
  // The legacy stream cannot capture.
  CHECK(g().cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  CHECK(g().cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  clear_error();

  // While a blocking stream captures, the legacy stream is unusable: a query answers
  // cudaErrorStreamCaptureImplicit without harm; work on it invalidates the capture.
  cudaStream_t blocking = new_stream(0);
  REQUIRE(g().cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  cudaStreamCaptureStatus st{};
  CHECK(r.cudaStreamIsCapturing(nullptr, &st) == cudaErrorStreamCaptureImplicit);
  CHECK(capture_status(blocking) == cudaStreamCaptureStatusActive);
  CHECK(g().cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureImplicit);
  CHECK(capture_status(blocking) == cudaStreamCaptureStatusInvalidated);
  CHECK(g().cudaStreamEndCapture(blocking, &graph) == cudaErrorStreamCaptureInvalidated);
  REQUIRE(g().cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  void* d = nullptr;
  REQUIRE(r.cudaMalloc(&d, 64) == cudaSuccess);  // relaxed: allowed
  CHECK(r.cudaMemsetAsync(d, 0, 64, nullptr) == cudaErrorStreamCaptureImplicit);
  CHECK(capture_status(blocking) == cudaStreamCaptureStatusInvalidated);
  CHECK(g().cudaStreamEndCapture(blocking, &graph) == cudaErrorStreamCaptureInvalidated);
  clear_error();

  // A non-blocking stream's capture leaves the legacy stream alone.
  cudaStream_t nb = new_stream();
  REQUIRE(g().cudaStreamBeginCapture(nb, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  REQUIRE(r.cudaMemsetAsync(d, 0, 64, nullptr) == cudaSuccess);
  REQUIRE(r.cudaStreamIsCapturing(nullptr, &st) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusNone);
  REQUIRE(g().cudaStreamEndCapture(nb, &graph) == cudaSuccess);
  CHECK(count_nodes(graph) == 0);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(r.cudaFree(d) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(blocking) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(nb) == cudaSuccess);
  CHECK(r.cudaGetLastError() == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: executable graph update", "[runtime]") {
  unsigned char* d = nullptr;
  REQUIRE(r.cudaMalloc(reinterpret_cast<void**>(&d), 32) == cudaSuccess);
  cudaStream_t s = new_stream();
  auto capture_set = [&](int value, bool extra) {
    REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
    REQUIRE(r.cudaMemsetAsync(d, value, 32, s) == cudaSuccess);
    REQUIRE(launch(&stub_graph_kernel, s) == cudaSuccess);
    if (extra) REQUIRE(launch(&stub_graph_kernel, s) == cudaSuccess);
    cudaGraph_t graph = nullptr;
    REQUIRE(g().cudaStreamEndCapture(s, &graph) == cudaSuccess);
    return graph;
  };
  auto first_byte = [&] {
    unsigned char b = 0;
    REQUIRE(r.cudaMemcpy(&b, d, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
    return b;
  };
  cudaGraph_t g1 = capture_set(1, false), g2 = capture_set(2, false), g3 = capture_set(3, true);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, g1, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(first_byte() == 1);

  cudaGraphExecUpdateResultInfo info{};
  REQUIRE(g().cudaGraphExecUpdate(exec, g2, &info) == cudaSuccess);
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(first_byte() == 2);

  CHECK(g().cudaGraphExecUpdate(exec, g3, &info) == cudaErrorGraphExecUpdateFailure);
  CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged);
  clear_error();
  // A different node type in the same place.
  cudaGraph_t g4 = nullptr;
  REQUIRE(g().cudaGraphCreate(&g4, 0) == cudaSuccess);
  cudaGraphNode_t a = nullptr, b = nullptr;
  REQUIRE(g().cudaGraphAddEmptyNode(&a, g4, nullptr, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphAddEmptyNode(&b, g4, &a, 1) == cudaSuccess);
  CHECK(g().cudaGraphExecUpdate(exec, g4, &info) == cudaErrorGraphExecUpdateFailure);
  CHECK((info.result == cudaGraphExecUpdateErrorNodeTypeChanged && info.errorNode == a));
  clear_error();
  CHECK(g().cudaGraphExecUpdate(exec, g4, nullptr) == cudaErrorInvalidValue);
  // The failed updates changed nothing.
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(first_byte() == 2);

  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  for (cudaGraph_t x : {g1, g2, g3, g4}) REQUIRE(g().cudaGraphDestroy(x) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(r.cudaFree(d) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "runtime graphs: stream-ordered allocation in a capture becomes memory nodes", "[runtime]") {
  cudaStream_t s = new_stream();
  unsigned char* out = nullptr;
  REQUIRE(r.cudaMallocHost(reinterpret_cast<void**>(&out), 128) == cudaSuccess);
  std::memset(out, 0, 128);
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  void* d = nullptr;
  REQUIRE(r.cudaMallocAsync(&d, 128, s) == cudaSuccess);
  REQUIRE(d != nullptr);
  REQUIRE(r.cudaMemsetAsync(d, 0x42, 128, s) == cudaSuccess);
  REQUIRE(r.cudaMemcpyAsync(out, d, 128, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  REQUIRE(r.cudaFreeAsync(d, s) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(g().cudaStreamEndCapture(s, &graph) == cudaSuccess);
  auto nodes = nodes_of(graph);
  REQUIRE(nodes.size() == 4);
  CHECK(type_of(nodes[0]) == cudaGraphNodeTypeMemAlloc);
  CHECK(type_of(nodes[3]) == cudaGraphNodeTypeMemFree);
  void* freed = nullptr;
  REQUIRE(g().cudaGraphMemFreeNodeGetParams(nodes[3], &freed) == cudaSuccess);
  CHECK(freed == d);
  CHECK(out[0] == 0);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  for (int i = 0; i < 2; ++i) {
    std::memset(out, 0, 128);
    REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
    REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
    CHECK((out[0] == 0x42 && out[127] == 0x42));
  }
  // Explicit memory nodes: an allocation node, and a free node only for graph memory or
  // device allocations.
  cudaGraph_t g2 = nullptr;
  REQUIRE(g().cudaGraphCreate(&g2, 0) == cudaSuccess);
  cudaMemAllocNodeParams ap{};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  ap.bytesize = 1 << 16;
  cudaGraphNode_t an = nullptr, fn = nullptr;
  REQUIRE(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaSuccess);
  CHECK(ap.dptr != nullptr);
  REQUIRE(g().cudaGraphAddMemFreeNode(&fn, g2, &an, 1, ap.dptr) == cudaSuccess);
  CHECK(g().cudaGraphAddMemFreeNode(&fn, g2, &an, 1, out) == cudaErrorInvalidValue);  // pinned host memory
  // Access descriptors: for existing devices and known flags, at most one per device.
  const cudaMemAccessDesc peer{{cudaMemLocationTypeDevice, 0}, cudaMemAccessFlagsProtReadWrite};
  ap.accessDescs = &peer;
  ap.accessDescCount = 1;
  CHECK(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaSuccess);
  ap.accessDescCount = 1000;  // more than the devices
  CHECK(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaErrorInvalidValue);
  ap.accessDescs = nullptr;
  ap.accessDescCount = 1;
  CHECK(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaErrorInvalidValue);
  const cudaMemAccessDesc no_device{{cudaMemLocationTypeDevice, 1000}, cudaMemAccessFlagsProtReadWrite};
  const cudaMemAccessDesc bad_flags{{cudaMemLocationTypeDevice, 0}, static_cast<cudaMemAccessFlags>(2)};
  ap.accessDescs = &no_device;
  CHECK(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaErrorInvalidDevice);
  ap.accessDescs = &bad_flags;
  CHECK(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaErrorInvalidValue);
  ap.accessDescs = nullptr;
  ap.accessDescCount = 0;
  ap.poolProps.handleTypes = cudaMemHandleTypePosixFileDescriptor;  // graph memory cannot be exported
  CHECK(g().cudaGraphAddMemAllocNode(&an, g2, nullptr, 0, &ap) == cudaErrorInvalidValue);
  // Child graphs may not hold memory nodes.
  cudaGraph_t parent = nullptr;
  REQUIRE(g().cudaGraphCreate(&parent, 0) == cudaSuccess);
  cudaGraphNode_t child = nullptr;
  CHECK(g().cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, g2) == cudaErrorInvalidValue);
  REQUIRE(g().cudaGraphDestroy(parent) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(g2) == cudaSuccess);

  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(r.cudaFreeHost(out) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

namespace {
std::atomic<int> g_destroyed{0};
void destroy_object(void* p) { g_destroyed.fetch_add(*static_cast<int*>(p)); }
}  // namespace

TEST_CASE_METHOD(Case, "runtime graphs: clones, child graphs, DOT output and user objects", "[runtime]") {
  Order order;
  Step a{&order, 1}, b{&order, 2};
  cudaGraph_t child = nullptr, parent = nullptr;
  REQUIRE(g().cudaGraphCreate(&child, 0) == cudaSuccess);
  cudaHostNodeParams hp{record_step, &a};
  cudaGraphNode_t ca = nullptr;
  REQUIRE(g().cudaGraphAddHostNode(&ca, child, nullptr, 0, &hp) == cudaSuccess);
  REQUIRE(g().cudaGraphCreate(&parent, 0) == cudaSuccess);
  cudaGraphNode_t cn = nullptr, pb = nullptr;
  REQUIRE(g().cudaGraphAddChildGraphNode(&cn, parent, nullptr, 0, child) == cudaSuccess);
  hp.userData = &b;
  REQUIRE(g().cudaGraphAddHostNode(&pb, parent, &cn, 1, &hp) == cudaSuccess);
  CHECK(type_of(cn) == cudaGraphNodeTypeGraph);
  cudaGraph_t embedded = nullptr;
  REQUIRE(g().cudaGraphChildGraphNodeGetGraph(cn, &embedded) == cudaSuccess);
  CHECK((embedded != nullptr && embedded != child));  // a copy, owned by the node
  CHECK(count_nodes(embedded) == 1);
  CHECK(g().cudaGraphDestroy(embedded) == cudaErrorInvalidValue);

  // A user object lives while a graph (or its clone, or an executable graph) holds it.
  int weight = 5;
  cudaUserObject_t obj = nullptr;
  REQUIRE(g().cudaUserObjectCreate(&obj, &weight, destroy_object, 1, cudaUserObjectNoDestructorSync) == cudaSuccess);
  cudaUserObject_t unused = nullptr;
  CHECK(g().cudaUserObjectCreate(&unused, &weight, destroy_object, 1, 0) == cudaErrorInvalidValue);
  REQUIRE(g().cudaGraphRetainUserObject(parent, obj, 1, cudaGraphUserObjectMove) == cudaSuccess);

  cudaGraph_t copy = nullptr;
  REQUIRE(g().cudaGraphClone(&copy, parent) == cudaSuccess);
  cudaGraphNode_t found = nullptr;
  REQUIRE(g().cudaGraphNodeFindInClone(&found, pb, copy) == cudaSuccess);
  CHECK((found != nullptr && found != pb && type_of(found) == cudaGraphNodeTypeHost));
  CHECK(g().cudaGraphNodeFindInClone(&found, pb, child) == cudaErrorInvalidValue);

  cudaGraphExec_t exec = nullptr;
  REQUIRE(g().cudaGraphInstantiate(&exec, parent, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, nullptr) == cudaSuccess);
  REQUIRE(r.cudaDeviceSynchronize() == cudaSuccess);
  CHECK(order.get() == std::vector<int>({1, 2}));

  const std::string path = backend_test::temp_file("fakegpu_graph_dot_");
  REQUIRE(!path.empty());
  REQUIRE(g().cudaGraphDebugDotPrint(parent, path.c_str(), cudaGraphDebugDotFlagsVerbose) == cudaSuccess);
  const std::string dot = backend_test::read_file(path);
  std::remove(path.c_str());
  CHECK(dot.rfind("digraph", 0) == 0);
  CHECK(dot.find("HOST") != std::string::npos);
  CHECK(dot.find("->") != std::string::npos);
  CHECK(g().cudaGraphDebugDotPrint(parent, "/nonexistent-dir/x.dot", 0) == cudaErrorOperatingSystem);
  CHECK(g().cudaGraphDebugDotPrint(parent, nullptr, 0) == cudaErrorInvalidValue);
  clear_error();

  REQUIRE(g().cudaGraphDestroy(parent) == cudaSuccess);
  CHECK(g_destroyed.load() == 0);  // the clone and the executable graph still hold it
  REQUIRE(g().cudaGraphDestroy(copy) == cudaSuccess);
  CHECK(g_destroyed.load() == 0);
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(g_destroyed.load() == 5);
  CHECK(g().cudaUserObjectRelease(obj, 1) == cudaErrorInvalidValue);  // gone
  REQUIRE(g().cudaGraphDestroy(child) == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime graphs: error paths", "[runtime]") {
  const auto bad_graph = reinterpret_cast<cudaGraph_t>(0xdead0);
  const auto bad_node = reinterpret_cast<cudaGraphNode_t>(0xdead0);
  const auto bad_exec = reinterpret_cast<cudaGraphExec_t>(0xdead0);
  cudaGraph_t graph = nullptr;
  CHECK(g().cudaGraphCreate(nullptr, 0) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphCreate(&graph, 1) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphDestroy(bad_graph) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphDestroy(nullptr) == cudaErrorInvalidValue);
  size_t n = 0;
  CHECK(g().cudaGraphGetNodes(bad_graph, nullptr, &n) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphGetNodes(nullptr, nullptr, &n) == cudaErrorInvalidValue);
  cudaGraphNodeType t{};
  CHECK(g().cudaGraphNodeGetType(bad_node, &t) == cudaErrorInvalidValue);
  cudaGraphNode_t x = nullptr;
  CHECK(g().cudaGraphAddEmptyNode(&x, bad_graph, nullptr, 0) == cudaErrorInvalidValue);
  cudaGraphExec_t exec = nullptr;
  CHECK(g().cudaGraphInstantiate(&exec, bad_graph, 0) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphLaunch(bad_exec, nullptr) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphExecDestroy(bad_exec) == cudaErrorInvalidValue);

  REQUIRE(g().cudaGraphCreate(&graph, 0) == cudaSuccess);
  CHECK(g().cudaGraphInstantiate(nullptr, graph, 0) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphInstantiate(&exec, graph, 1ull << 40) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagUpload) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphInstantiate(&exec, graph,
                                 cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagAutoFreeOnLaunch) ==
        cudaErrorInvalidValue);
  // An empty graph instantiates and launches (it does nothing).
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch) == cudaSuccess);
  unsigned long long flags = 0;
  REQUIRE(g().cudaGraphExecGetFlags(exec, &flags) == cudaSuccess);
  CHECK(flags == cudaGraphInstantiateFlagAutoFreeOnLaunch);
  CHECK(g().cudaGraphLaunch(exec, reinterpret_cast<cudaStream_t>(0xdead0)) == cudaErrorInvalidResourceHandle);
  REQUIRE(g().cudaGraphLaunch(exec, nullptr) == cudaSuccess);
  // A destroyed executable graph cannot be launched or destroyed again.
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(g().cudaGraphLaunch(exec, nullptr) == cudaErrorInvalidValue);
  CHECK(g().cudaGraphExecDestroy(exec) == cudaErrorInvalidValue);
  // Instantiation copies: destroying the graph leaves its executable graph usable.
  cudaGraphNode_t e = nullptr;
  REQUIRE(g().cudaGraphAddEmptyNode(&e, graph, nullptr, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(g().cudaGraphNodeGetType(e, &t) == cudaErrorInvalidValue);  // the node went with the graph
  REQUIRE(g().cudaGraphLaunch(exec, nullptr) == cudaSuccess);
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);

  // Capture state errors.
  cudaStream_t s = new_stream();
  CHECK(g().cudaStreamEndCapture(s, &graph) == cudaErrorIllegalState);
  CHECK(g().cudaStreamEndCapture(s, nullptr) == cudaErrorInvalidValue);
  CHECK(g().cudaStreamBeginCapture(s, static_cast<cudaStreamCaptureMode>(9)) == cudaErrorInvalidValue);
  CHECK(g().cudaStreamBeginCapture(reinterpret_cast<cudaStream_t>(0xdead0), cudaStreamCaptureModeGlobal) ==
        cudaErrorInvalidResourceHandle);
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaErrorIllegalState);
  cudaError_t other = cudaSuccess;
  std::thread([&] { other = g().cudaStreamEndCapture(s, &graph); }).join();
  CHECK(other == cudaErrorStreamCaptureWrongThread);
  CHECK(capture_status(s) == cudaStreamCaptureStatusActive);  // not ended, not invalidated
  REQUIRE(g().cudaStreamEndCapture(s, &graph) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  // A relaxed capture may be ended from another thread.
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  std::thread([&] { other = g().cudaStreamEndCapture(s, &graph); }).join();
  CHECK(other == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  cudaStreamCaptureMode mode = static_cast<cudaStreamCaptureMode>(5);
  CHECK(r.cudaThreadExchangeStreamCaptureMode(&mode) == cudaErrorInvalidValue);
  CHECK(r.cudaThreadExchangeStreamCaptureMode(nullptr) == cudaErrorInvalidValue);

  // A graph launched into a capturing stream becomes one child-graph node.
  cudaGraph_t inner = nullptr;
  REQUIRE(g().cudaGraphCreate(&inner, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphAddEmptyNode(&e, inner, nullptr, 0) == cudaSuccess);
  REQUIRE(g().cudaGraphInstantiate(&exec, inner, 0) == cudaSuccess);
  REQUIRE(g().cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(g().cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(g().cudaStreamEndCapture(s, &graph) == cudaSuccess);
  auto nodes = nodes_of(graph);
  REQUIRE(nodes.size() == 1);
  CHECK(type_of(nodes[0]) == cudaGraphNodeTypeGraph);
  REQUIRE(g().cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(g().cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(g().cudaGraphDestroy(inner) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(GraphCase, "runtime: cluster occupancy needs sm_90", "[runtime]") {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3{16, 1, 1};
  cfg.blockDim = dim3{128, 1, 1};
  int size = -1;
  if (default_devices()) {  // A100: no thread-block clusters
    CHECK(g().cudaOccupancyMaxPotentialClusterSize(&size, &stub_graph_kernel, &cfg) == cudaErrorNotSupported);
    clear_error();
  }
  REQUIRE(run_child_case("runtime child: cluster occupancy on H100", {"FAKEGPU_DEVICES=h100-80gb:1"}) == 0);
}

TEST_CASE("runtime child: cluster occupancy on H100", "[.runtime-child]") {
  registered();
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3{16, 1, 1};
  cfg.blockDim = dim3{128, 1, 1};
  int size = -1;
  REQUIRE(g().cudaOccupancyMaxPotentialClusterSize(&size, &stub_graph_kernel, &cfg) == cudaSuccess);
  CHECK(size == 8);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = -1;
  REQUIRE(g().cudaOccupancyMaxActiveClusters(&clusters, &stub_graph_kernel, &cfg) == cudaSuccess);
  // 8 GPCs of 16 SMs, 16 blocks of 128 threads per SM: 128 clusters of 2 per GPC.
  CHECK(clusters == 8 * (16 * 16 / 2));
  attr.val.clusterDim.x = 3;  // does not divide the grid
  CHECK(g().cudaOccupancyMaxActiveClusters(&clusters, &stub_graph_kernel, &cfg) == cudaErrorInvalidClusterSize);
  attr.val.clusterDim.x = 16;  // beyond the portable size
  CHECK(g().cudaOccupancyMaxActiveClusters(&clusters, &stub_graph_kernel, &cfg) == cudaErrorInvalidClusterSize);
  CHECK(g().cudaOccupancyMaxActiveClusters(nullptr, &stub_graph_kernel, &cfg) == cudaErrorInvalidValue);
  CHECK(g().cudaOccupancyMaxPotentialClusterSize(&size, &stub_graph_kernel, nullptr) == cudaErrorInvalidValue);
  CHECK(g().cudaOccupancyMaxPotentialClusterSize(&size, &stub_unregistered, &cfg) == cudaErrorInvalidDeviceFunction);
}

TEST_CASE_METHOD(Case, "runtime: memory pools and their allocations are shared with another process", "[runtime]") {
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  cudaMemPool_t pool = nullptr;
  REQUIRE(r.cudaMemPoolCreate(&pool, &props) == cudaSuccess);
  cudaStream_t s = new_stream();
  constexpr size_t kSize = 4096;
  void* d = nullptr;
  REQUIRE(r.cudaMallocFromPoolAsync(&d, kSize, pool, s) == cudaSuccess);
  REQUIRE(r.cudaMemsetAsync(d, 0x33, kSize, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  int fd = -1;
  REQUIRE(g().cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0) == cudaSuccess);
  cudaMemPoolPtrExportData data{};
  REQUIRE(g().cudaMemPoolExportPointer(&data, d) == cudaSuccess);
  cudaMemPool_t def = nullptr;
  REQUIRE(r.cudaDeviceGetDefaultMemPool(&def, 0) == cudaSuccess);
  int other = -1;
  CHECK(g().cudaMemPoolExportToShareableHandle(&other, def, cudaMemHandleTypePosixFileDescriptor, 0) ==
        cudaErrorInvalidValue);
  CHECK(g().cudaMemPoolExportToShareableHandle(nullptr, pool, cudaMemHandleTypePosixFileDescriptor, 0) ==
        cudaErrorInvalidValue);
  void* q = nullptr;
  CHECK(g().cudaMemPoolImportPointer(&q, pool, &data) == cudaErrorInvalidValue);  // not an imported pool
  clear_error();

  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    cudaMemPool_t imported = nullptr;
    if (g().cudaMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                 cudaMemHandleTypePosixFileDescriptor, 0) != cudaSuccess)
      _exit(11);
    void* mine = nullptr;
    if (g().cudaMemPoolImportPointer(&mine, imported, &data) != cudaSuccess) _exit(12);
    unsigned char seen[16] = {};
    if (r.cudaMemcpy(seen, mine, sizeof seen, cudaMemcpyDeviceToHost) != cudaSuccess || seen[7] != 0x33) _exit(13);
    if (r.cudaMemset(mine, 0x44, kSize) != cudaSuccess) _exit(14);
    if (r.cudaFree(mine) != cudaSuccess) _exit(15);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  unsigned char back = 0;
  REQUIRE(r.cudaMemcpy(&back, static_cast<char*>(d) + kSize - 1, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == 0x44);
  close(fd);
  REQUIRE(r.cudaFreeAsync(d, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(r.cudaMemPoolDestroy(pool) == cudaSuccess);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}
