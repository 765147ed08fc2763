// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API graphs and stream capture: capture of copies, memsets, launches and host
// functions (nothing runs until the graph is launched; each launch replays it), explicit
// construction through the v1 and v2 node structs, the legacy entry points (5-argument
// cuGraphInstantiate, cuGraphExecUpdate, cuStreamBeginCapture without a mode, v1/v2/v3
// capture info), capture modes, fork/join through events, memory nodes and error paths.
#include "backend/driver_test.h"
#include "backend/runtime_api.h"  // child_report

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

// The graph prototypes (cuda.h 13.0; the plain names keep their oldest ABI).
namespace drvtest::sig {
CUresult cuStreamBeginCapture(CUstream);
CUresult cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture(CUstream, CUgraph*);
CUresult cuStreamGetCaptureInfo(CUstream, CUstreamCaptureStatus*, cuuint64_t*);
CUresult cuStreamGetCaptureInfo_v2(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
                                   size_t*);
CUresult cuStreamUpdateCaptureDependencies(CUstream, CUgraphNode*, size_t, unsigned);
CUresult cuGraphAddKernelNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_KERNEL_NODE_PARAMS_v1*);
CUresult cuGraphAddKernelNode_v2(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_KERNEL_NODE_PARAMS_v2*);
CUresult cuGraphKernelNodeGetParams(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1*);
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*);
CUresult cuGraphAddMemcpyNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_MEMCPY3D*, CUcontext);
CUresult cuGraphMemcpyNodeGetParams(CUgraphNode, CUDA_MEMCPY3D*);
CUresult cuGraphAddMemsetNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_MEMSET_NODE_PARAMS*,
                              CUcontext);
CUresult cuGraphMemsetNodeGetParams(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*);
CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*, CUcontext);
CUresult cuGraphAddHostNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_HOST_NODE_PARAMS*);
CUresult cuGraphAddMemAllocNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, CUDA_MEM_ALLOC_NODE_PARAMS*);
CUresult cuGraphMemAllocNodeGetParams(CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS*);
CUresult cuGraphAddMemFreeNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, CUdeviceptr);
CUresult cuGraphAddNode_v2(CUgraphNode*, CUgraph, const CUgraphNode*, const CUgraphEdgeData*, size_t,
                           CUgraphNodeParams*);
CUresult cuGraphGetNodes(CUgraph, CUgraphNode*, size_t*);
CUresult cuGraphGetEdges(CUgraph, CUgraphNode*, CUgraphNode*, size_t*);
CUresult cuGraphGetEdges_v2(CUgraph, CUgraphNode*, CUgraphNode*, CUgraphEdgeData*, size_t*);
CUresult cuGraphNodeGetType(CUgraphNode, CUgraphNodeType*);
CUresult cuGraphNodeGetDependencies(CUgraphNode, CUgraphNode*, size_t*);
CUresult cuGraphAddDependencies(CUgraph, const CUgraphNode*, const CUgraphNode*, size_t);
CUresult cuGraphAddDependencies_v2(CUgraph, const CUgraphNode*, const CUgraphNode*, const CUgraphEdgeData*, size_t);
CUresult cuGraphInstantiate(CUgraphExec*, CUgraph, CUgraphNode*, char*, size_t);
CUresult cuGraphInstantiateWithParams(CUgraphExec*, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS*);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuGraphUpload(CUgraphExec, CUstream);
CUresult cuGraphExecUpdate(CUgraphExec, CUgraph, CUgraphNode*, CUgraphExecUpdateResult*);
CUresult cuGraphExecUpdate_v2(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo*);
CUresult cuGraphClone(CUgraph*, CUgraph);
CUresult cuGraphDebugDotPrint(CUgraph, const char*, unsigned);
CUresult cuGraphRetainUserObject(CUgraph, CUuserObject, unsigned, unsigned);
CUresult cuMemPoolExportToShareableHandle(void*, CUmemoryPool, CUmemAllocationHandleType, unsigned long long);
CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool*, void*, CUmemAllocationHandleType, unsigned long long);
CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData*, CUdeviceptr);
CUresult cuMemPoolImportPointer(CUdeviceptr*, CUmemoryPool, CUmemPoolPtrExportData*);
}  // namespace drvtest::sig

using namespace drvtest;

namespace {

const char* const kPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry graph_fill(
	.param .u64 graph_fill_param_0
)
{
	ret;
}
)";

struct Module {
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  Module() {
    CU_OK(CU(cuModuleLoadData)(&mod, kPtx));
    CU_OK(CU(cuModuleGetFunction)(&fn, mod, "graph_fill"));
  }
  ~Module() { CU(cuModuleUnload)(mod); }
};

// Every case here runs on a fresh context of device 0 (CtxCase); most with the module loaded
// too (GraphCase).
struct CtxCase {
  Ctx ctx{0};
};
struct GraphCase : CtxCase {
  Module m;
};

std::atomic<int> g_host_calls{0};
void count_call(void* p) {
  g_host_calls.fetch_add(1);
  if (p) static_cast<std::atomic<int>*>(p)->fetch_add(1);
}

CUstream new_stream(unsigned flags = CU_STREAM_NON_BLOCKING) {
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, flags));
  return s;
}

CUstreamCaptureStatus status_of(CUstream s) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_OK(CU(cuStreamIsCapturing)(s, &st));
  return st;
}

std::vector<CUgraphNode> nodes_of(CUgraph g) {
  size_t n = 0;
  CU_OK(CU(cuGraphGetNodes)(g, nullptr, &n));
  std::vector<CUgraphNode> v(n);
  CU_OK(CU(cuGraphGetNodes)(g, v.data(), &n));
  return v;
}

CUgraphNodeType type_of(CUgraphNode n) {
  CUgraphNodeType t = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  CU_OK(CU(cuGraphNodeGetType)(n, &t));
  return t;
}

std::vector<CUgraphNodeType> types_of(const std::vector<CUgraphNode>& nodes) {
  std::vector<CUgraphNodeType> v;
  for (CUgraphNode n : nodes) v.push_back(type_of(n));
  return v;
}

// H2D copy, kernel, memset, host function, D2H copy: captured on s.
struct Pipeline {
  static constexpr size_t kBytes = 128;
  unsigned char* src = nullptr;
  unsigned char* dst = nullptr;
  CUdeviceptr dev = 0;
  std::atomic<int> calls{0};
  Pipeline() {
    CU_OK(CU(cuMemAllocHost_v2)(reinterpret_cast<void**>(&src), kBytes));
    CU_OK(CU(cuMemAllocHost_v2)(reinterpret_cast<void**>(&dst), kBytes));
    CU_OK(CU(cuMemAlloc_v2)(&dev, kBytes));
    for (size_t i = 0; i < kBytes; ++i) src[i] = static_cast<unsigned char>(i);
    std::memset(dst, 0xEE, kBytes);
    CU_OK(CU(cuMemsetD8_v2)(dev, 0x11, kBytes));
  }
  ~Pipeline() {
    CU(cuMemFreeHost)(src);
    CU(cuMemFreeHost)(dst);
    CU(cuMemFree_v2)(dev);
  }
  void capture(CUstream s, CUfunction f) {
    CU_OK(CU(cuMemcpyHtoDAsync_v2)(dev, src, kBytes, s));
    void* args[1] = {&dev};
    CU_OK(CU(cuLaunchKernel)(f, 2, 1, 1, 64, 1, 1, 0, s, args, nullptr));
    CU_OK(CU(cuMemsetD8Async)(dev + kBytes / 2, 0x7F, kBytes / 2, s));
    CU_OK(CU(cuLaunchHostFunc)(s, count_call, &calls));
    CU_OK(CU(cuMemcpyDtoHAsync_v2)(dst, dev, kBytes, s));
  }
  bool result_ok(unsigned char base) const {
    for (size_t i = 0; i < kBytes; ++i)
      if (dst[i] != (i < kBytes / 2 ? static_cast<unsigned char>(i + base) : 0x7F)) return false;
    return true;
  }
};

}  // namespace

TEST_CASE_METHOD(GraphCase, "driver graphs: capture records the work; each launch replays it", "[driver]") {
  Pipeline p;
  CUstream s = new_stream();
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK(status_of(s) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  p.capture(s, m.fn);
  CHECK(p.calls.load() == 0);
  CHECK(p.dst[0] == 0xEE);
  CUgraph g = nullptr;
  CU_OK(CU(cuStreamEndCapture)(s, &g));
  unsigned char probe = 0;
  CU_OK(CU(cuMemcpyDtoH_v2)(&probe, p.dev + 1, 1));
  CHECK(probe == 0x11);
  auto nodes = nodes_of(g);
  REQUIRE(nodes.size() == 5);
  CHECK(types_of(nodes) == std::vector{CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_MEMSET,
                                       CU_GRAPH_NODE_TYPE_HOST, CU_GRAPH_NODE_TYPE_MEMCPY});
  CUDA_KERNEL_NODE_PARAMS_v2 kp{};
  CU_OK(CU(cuGraphKernelNodeGetParams_v2)(nodes[1], &kp));
  CHECK((kp.func == m.fn && kp.gridDimX == 2 && kp.blockDimX == 64 && kp.ctx == ctx.ctx));
  CUDA_MEMSET_NODE_PARAMS mp{};
  CU_OK(CU(cuGraphMemsetNodeGetParams)(nodes[2], &mp));
  CHECK((mp.dst == p.dev + Pipeline::kBytes / 2 && mp.value == 0x7F && mp.elementSize == 1));
  CUDA_MEMCPY3D cp{};
  CU_OK(CU(cuGraphMemcpyNodeGetParams)(nodes[4], &cp));
  CHECK((cp.srcDevice == p.dev && cp.dstMemoryType == CU_MEMORYTYPE_UNIFIED && cp.WidthInBytes == Pipeline::kBytes));

  CUgraphExec exec = nullptr;
  CU_OK(CU(cuGraphInstantiateWithFlags)(&exec, g, 0));
  CU_OK(CU(cuGraphUpload)(exec, s));
  CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(p.result_ok(0));
  CHECK(p.calls.load() == 1);
  for (size_t i = 0; i < Pipeline::kBytes; ++i) p.src[i] = static_cast<unsigned char>(i + 9);
  CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(p.result_ok(9));
  CHECK(p.calls.load() == 2);
  CU_OK(CU(cuGraphExecDestroy)(exec));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphLaunch)(exec, s));  // destroyed
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphExecDestroy)(exec));
  CU_OK(CU(cuGraphDestroy)(g));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}

TEST_CASE("driver graphs: captured launches are recorded once per graph launch", "[driver]") {
  const auto report = nlohmann::json::parse(rtt::child_report("driver child: graph launch report"));
  CHECK(report.at("kernel_launches").at("graph_fill").get<int>() == 3);
}

TEST_CASE_METHOD(GraphCase, "driver child: graph launch report", "[.driver-child]") {
  Pipeline p;
  CUstream s = new_stream();
  CU_OK(CU(cuStreamBeginCapture)(s));  // the 10.0 form: no mode
  p.capture(s, m.fn);
  CUgraph g = nullptr;
  CU_OK(CU(cuStreamEndCapture)(s, &g));
  CUgraphExec exec = nullptr;
  CU_OK(CU(cuGraphInstantiate)(&exec, g, nullptr, nullptr, 0));  // legacy 5-argument form
  for (int i = 0; i < 3; ++i) CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_OK(CU(cuGraphExecDestroy)(exec));
  CU_OK(CU(cuGraphDestroy)(g));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}

TEST_CASE_METHOD(GraphCase, "driver graphs: explicit construction with v1 and v2 structs", "[driver]") {
  CUdeviceptr dev = 0;
  CU_OK(CU(cuMemAlloc_v2)(&dev, 256));
  std::vector<unsigned char> host(256, 0);
  CUgraph g = nullptr;
  CU_OK(CU(cuGraphCreate)(&g, 0));
  CUDA_MEMSET_NODE_PARAMS mp{dev, 0, 0x3C, 1, 256, 1};
  CUgraphNode set = nullptr, k1 = nullptr, k2 = nullptr, copy = nullptr, host_node = nullptr;
  CU_OK(CU(cuGraphAddMemsetNode)(&set, g, nullptr, 0, &mp, ctx.ctx));
  CUDA_KERNEL_NODE_PARAMS_v1 kp1{};
  kp1.func = m.fn;
  kp1.gridDimX = kp1.gridDimY = kp1.gridDimZ = 1;
  kp1.blockDimX = 32, kp1.blockDimY = kp1.blockDimZ = 1;
  // The node copies its arguments when it is made: a kernel with parameters needs them.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddKernelNode)(&k1, g, &set, 1, &kp1));
  void* args[1] = {&dev};
  kp1.kernelParams = args;
  CU_OK(CU(cuGraphAddKernelNode)(&k1, g, &set, 1, &kp1));
  CUDA_KERNEL_NODE_PARAMS_v2 kp2{};
  kp2.func = m.fn;
  kp2.gridDimX = 4, kp2.gridDimY = kp2.gridDimZ = 1;
  kp2.blockDimX = 128, kp2.blockDimY = kp2.blockDimZ = 1;
  kp2.kernelParams = args;
  CU_OK(CU(cuGraphAddKernelNode_v2)(&k2, g, &set, 1, &kp2));
  CUDA_KERNEL_NODE_PARAMS_v1 back{};
  CU_OK(CU(cuGraphKernelNodeGetParams)(k2, &back));
  CHECK((back.func == m.fn && back.gridDimX == 4 && back.blockDimX == 128));
  // Copy after both kernels: edges added afterwards through both ABIs.
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = dev;
  cp.dstMemoryType = CU_MEMORYTYPE_HOST;
  cp.dstHost = host.data();
  cp.WidthInBytes = 256;
  cp.Height = 1;
  cp.Depth = 1;
  CU_OK(CU(cuGraphAddMemcpyNode)(&copy, g, nullptr, 0, &cp, ctx.ctx));
  CU_OK(CU(cuGraphAddDependencies)(g, &k1, &copy, 1));
  CU_OK(CU(cuGraphAddDependencies_v2)(g, &k2, &copy, nullptr, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddDependencies)(g, &k1, &copy, 1));  // exists
  std::atomic<int> calls{0};
  CUDA_HOST_NODE_PARAMS hp{count_call, &calls};
  CU_OK(CU(cuGraphAddHostNode)(&host_node, g, &copy, 1, &hp));
  size_t n = 0;
  CU_OK(CU(cuGraphGetEdges)(g, nullptr, nullptr, &n));
  CHECK(n == 5);
  std::vector<CUgraphNode> from(n), to(n);
  std::vector<CUgraphEdgeData> ed(n);
  CU_OK(CU(cuGraphGetEdges_v2)(g, from.data(), to.data(), ed.data(), &n));
  CHECK((n == 5 && ed[0].type == 0));
  size_t nd = 0;
  CU_OK(CU(cuGraphNodeGetDependencies)(copy, nullptr, &nd));
  CHECK(nd == 2);

  CUgraphExec exec = nullptr;
  CU_OK(CU(cuGraphInstantiateWithFlags)(&exec, g, 0));
  CUstream s = new_stream();
  CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK((host[0] == 0x3C && host[255] == 0x3C && calls.load() == 1));
  // The executable graph's own memset parameters.
  mp.value = 0x0F;
  CU_OK(CU(cuGraphExecMemsetNodeSetParams)(exec, set, &mp, ctx.ctx));
  CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(host[17] == 0x0F);

  // Update: the legacy and the v2 forms.
  CUgraph g2 = nullptr;
  CU_OK(CU(cuGraphClone)(&g2, g));
  CUgraphNode err = reinterpret_cast<CUgraphNode>(1);
  CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_ERROR;
  CU_OK(CU(cuGraphExecUpdate)(exec, g2, &err, &res));
  CHECK((res == CU_GRAPH_EXEC_UPDATE_SUCCESS && err == nullptr));
  CUgraphNode extra = nullptr;
  CU_OK(CU(cuGraphAddEmptyNode)(&extra, g2, nullptr, 0));
  CUgraphExecUpdateResultInfo info{};
  CU_EQ(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, CU(cuGraphExecUpdate_v2)(exec, g2, &info));
  CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);

  // A cycle: the legacy instantiate reports the node and a log line.
  CU_OK(CU(cuGraphAddDependencies)(g, &host_node, &set, 1));
  CUgraphExec bad = nullptr;
  CUgraphNode where = nullptr;
  char log[128] = {};
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphInstantiate)(&bad, g, &where, log, sizeof log));
  CHECK(where != nullptr);
  CHECK(std::strlen(log) > 0);

  // Bad parameters.
  CUgraphNode x = nullptr;
  kp1.func = reinterpret_cast<CUfunction>(0xdead0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddKernelNode)(&x, g, nullptr, 0, &kp1));
  CUDA_MEMSET_NODE_PARAMS bad_set{dev + 1, 0, 0, 4, 4, 1};  // misaligned for 4-byte elements
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddMemsetNode)(&x, g, nullptr, 0, &bad_set, ctx.ctx));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddEmptyNode)(&x, reinterpret_cast<CUgraph>(0xdead0), nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphCreate)(nullptr, 0));

  CU_OK(CU(cuGraphExecDestroy)(exec));
  CU_OK(CU(cuGraphDestroy)(g2));
  CU_OK(CU(cuGraphDestroy)(g));
  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_OK(CU(cuMemFree_v2)(dev));
}

TEST_CASE_METHOD(GraphCase, "driver graphs: capture info, modes and refused calls", "[driver]") {
  CUstream s = new_stream();
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUdeviceptr none = 0;
  void* args[1] = {&none};
  CU_OK(CU(cuLaunchKernel)(m.fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
  CUstreamCaptureStatus st{};
  cuuint64_t id1 = 0, id2 = 0, id3 = 0;
  CU_OK(CU(cuStreamGetCaptureInfo)(s, &st, &id1));
  CHECK((st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id1 != 0));
  CUgraph g = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t nd = 0;
  CU_OK(CU(cuStreamGetCaptureInfo_v2)(s, &st, &id2, &g, &deps, &nd));
  REQUIRE(nd == 1);
  CHECK((id2 == id1 && g != nullptr && type_of(deps[0]) == CU_GRAPH_NODE_TYPE_KERNEL));
  const void* edges = nullptr;
  CU_OK(CU(cuStreamGetCaptureInfo_v3)(s, &st, &id3, &g, &deps, &edges, &nd));
  CHECK((id3 == id1 && edges != nullptr));
  CU_OK(CU(cuStreamUpdateCaptureDependencies)(s, nullptr, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  CU_OK(CU(cuStreamGetCaptureInfo_v2)(s, &st, nullptr, nullptr, nullptr, &nd));
  CHECK(nd == 0);

  // Allocation in global mode: refused, and the capture is invalidated.
  CUdeviceptr d = 0;
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CU(cuMemAlloc_v2)(&d, 64));
  CHECK(status_of(s) == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuLaunchKernel)(m.fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuStreamEndCapture)(s, &g));
  CHECK(g == nullptr);

  // Relaxed thread mode: the allocation is allowed; a context synchronisation never is.
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  CU_OK(CU(cuThreadExchangeStreamCaptureMode)(&mode));
  CU_OK(CU(cuMemAlloc_v2)(&d, 64));
  CU_OK(CU(cuThreadExchangeStreamCaptureMode)(&mode));
  CHECK(mode == CU_STREAM_CAPTURE_MODE_RELAXED);
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CU(cuCtxSynchronize)());
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuStreamEndCapture)(s, &g));

  // Pageable host memory cannot be captured; a synchronous copy in relaxed mode is fine.
  std::vector<unsigned char> pageable(64, 1);
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CU_OK(CU(cuMemcpyHtoD_v2)(d, pageable.data(), 64));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CU(cuMemcpyHtoDAsync_v2)(d, pageable.data(), 64, s));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuStreamEndCapture)(s, &g));

  // Events recorded in a capture cannot be queried; the stream cannot be synchronised.
  CUevent ev = nullptr;
  CU_OK(CU(cuEventCreate)(&ev, CU_EVENT_DISABLE_TIMING));
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CU_OK(CU(cuEventRecord)(ev, s));
  CU_EQ(CUDA_ERROR_CAPTURED_EVENT, CU(cuEventQuery)(ev));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuStreamEndCapture)(s, &g));
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CU(cuStreamSynchronize)(s));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuStreamEndCapture)(s, &g));

  // State errors.
  CU_EQ(CUDA_ERROR_ILLEGAL_STATE, CU(cuStreamEndCapture)(s, &g));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamBeginCapture_v2)(s, static_cast<CUstreamCaptureMode>(3)));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        CU(cuStreamBeginCapture_v2)(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  CU_EQ(CUDA_ERROR_ILLEGAL_STATE, CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUresult other = CUDA_SUCCESS;
  std::thread([&] {
    CU(cuCtxSetCurrent)(ctx.ctx);
    other = CU(cuStreamEndCapture)(s, &g);
  }).join();
  CHECK(other == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  CU_OK(CU(cuStreamEndCapture)(s, &g));
  CHECK(nodes_of(g).empty());
  CU_OK(CU(cuGraphDestroy)(g));

  CU_OK(CU(cuEventDestroy_v2)(ev));
  CU_OK(CU(cuMemFree_v2)(d));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}

TEST_CASE_METHOD(CtxCase, "driver graphs: fork and join through events; the legacy stream", "[driver]") {
  CUstream s0 = new_stream(), s1 = new_stream(), blocking = new_stream(0);
  CUevent fork = nullptr, join = nullptr;
  CU_OK(CU(cuEventCreate)(&fork, CU_EVENT_DISABLE_TIMING));
  CU_OK(CU(cuEventCreate)(&join, CU_EVENT_DISABLE_TIMING));
  std::atomic<int> calls{0};
  CU_OK(CU(cuStreamBeginCapture_v2)(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(CU(cuLaunchHostFunc)(s0, count_call, &calls));
  CU_OK(CU(cuEventRecord)(fork, s0));
  CU_OK(CU(cuStreamWaitEvent)(s1, fork, 0));
  CHECK(status_of(s1) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CU_OK(CU(cuLaunchHostFunc)(s1, count_call, &calls));
  CU_OK(CU(cuLaunchHostFunc)(s0, count_call, &calls));
  CU_OK(CU(cuEventRecord)(join, s1));
  CU_OK(CU(cuStreamWaitEvent)(s0, join, 0));
  CUgraph g = nullptr;
  CU_OK(CU(cuStreamEndCapture)(s0, &g));
  CHECK(status_of(s1) == CU_STREAM_CAPTURE_STATUS_NONE);
  CHECK(nodes_of(g).size() == 3);
  CHECK(calls.load() == 0);
  CUgraphExec exec = nullptr;
  CU_OK(CU(cuGraphInstantiateWithFlags)(&exec, g, 0));
  CU_OK(CU(cuGraphLaunch)(exec, s1));
  CU_OK(CU(cuStreamSynchronize)(s1));
  CHECK(calls.load() == 3);
  CU_OK(CU(cuGraphExecDestroy)(exec));
  CU_OK(CU(cuGraphDestroy)(g));

  // Unjoined work at the end of the capture.
  CU_OK(CU(cuStreamBeginCapture_v2)(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(CU(cuEventRecord)(fork, s0));
  CU_OK(CU(cuStreamWaitEvent)(s1, fork, 0));
  CU_OK(CU(cuLaunchHostFunc)(s1, count_call, nullptr));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, CU(cuStreamEndCapture)(s0, &g));

  // The legacy stream while a blocking stream captures.
  CU_OK(CU(cuStreamBeginCapture_v2)(blocking, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUstreamCaptureStatus st{};
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, CU(cuStreamIsCapturing)(CU_STREAM_LEGACY, &st));
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, CU(cuLaunchHostFunc)(nullptr, count_call, nullptr));
  CHECK(status_of(blocking) == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CU_EQ(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CU(cuStreamEndCapture)(blocking, &g));

  CU_OK(CU(cuEventDestroy_v2)(fork));
  CU_OK(CU(cuEventDestroy_v2)(join));
  for (CUstream s : {s0, s1, blocking}) CU_OK(CU(cuStreamDestroy_v2)(s));
}

TEST_CASE_METHOD(CtxCase, "driver graphs: memory nodes, generic nodes, DOT and user objects", "[driver]") {
  CUstream s = new_stream();
  uint32_t* out = nullptr;
  CU_OK(CU(cuMemAllocHost_v2)(reinterpret_cast<void**>(&out), 256));
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAllocAsync)(&d, 256, s));
  CHECK(d != 0);
  CU_OK(CU(cuMemsetD32Async)(d, 0xCAFEF00Du, 64, s));
  CU_OK(CU(cuMemcpyDtoHAsync_v2)(out, d, 256, s));
  CU_OK(CU(cuMemFreeAsync)(d, s));
  CUgraph g = nullptr;
  CU_OK(CU(cuStreamEndCapture)(s, &g));
  auto nodes = nodes_of(g);
  REQUIRE(nodes.size() == 4);
  CHECK(type_of(nodes[0]) == CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  CHECK(type_of(nodes[1]) == CU_GRAPH_NODE_TYPE_MEMSET);
  CHECK(type_of(nodes[3]) == CU_GRAPH_NODE_TYPE_MEM_FREE);
  CUDA_MEM_ALLOC_NODE_PARAMS ap{};
  CU_OK(CU(cuGraphMemAllocNodeGetParams)(nodes[0], &ap));
  CHECK((ap.dptr == d && ap.bytesize == 256 && ap.poolProps.location.id == 0));
  CUgraphExec exec = nullptr;
  CU_OK(CU(cuGraphInstantiateWithFlags)(&exec, g, 0));
  for (int i = 0; i < 2; ++i) {
    std::memset(out, 0, 256);
    CU_OK(CU(cuGraphLaunch)(exec, s));
    CU_OK(CU(cuStreamSynchronize)(s));
    CHECK((out[0] == 0xCAFEF00Du && out[63] == 0xCAFEF00Du));
  }

  // cuGraphAddNode_v2 with an allocation and a free node; DOT output; a user object.
  CUgraph g2 = nullptr;
  CU_OK(CU(cuGraphCreate)(&g2, 0));
  CUgraphNodeParams np{};
  np.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  np.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  np.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  np.alloc.poolProps.location.id = 0;
  np.alloc.bytesize = 4096;
  CUgraphNode an = nullptr, fn = nullptr;
  CU_OK(CU(cuGraphAddNode_v2)(&an, g2, nullptr, nullptr, 0, &np));
  CHECK(np.alloc.dptr != 0);
  CU_OK(CU(cuGraphAddMemFreeNode)(&fn, g2, &an, 1, np.alloc.dptr));
  // Access descriptors: for existing devices and known flags, at most one per device.
  CUDA_MEM_ALLOC_NODE_PARAMS access{};
  access.poolProps = np.alloc.poolProps;
  access.bytesize = 4096;
  const CUmemAccessDesc peer{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  access.accessDescs = &peer;
  access.accessDescCount = 1;
  CUgraphNode peer_node = nullptr;
  CU_OK(CU(cuGraphAddMemAllocNode)(&peer_node, g2, nullptr, 0, &access));
  access.accessDescCount = 1000;  // more than the devices
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddMemAllocNode)(&peer_node, g2, nullptr, 0, &access));
  access.accessDescs = nullptr;
  access.accessDescCount = 1;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddMemAllocNode)(&peer_node, g2, nullptr, 0, &access));
  const CUmemAccessDesc bad_flags{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, static_cast<CUmemAccess_flags>(2)};
  access.accessDescs = &bad_flags;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddMemAllocNode)(&peer_node, g2, nullptr, 0, &access));
  // A generic node of a type not modelled is NOT_SUPPORTED; a number that names no type is
  // an invalid value.
  CUgraphNodeParams other{};
  other.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuGraphAddNode_v2)(&peer_node, g2, nullptr, nullptr, 0, &other));
  other.type = static_cast<CUgraphNodeType>(0x7fffff00);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddNode_v2)(&peer_node, g2, nullptr, nullptr, 0, &other));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphAddMemFreeNode)(&fn, g2, &an, 1, 12345));
  const std::string path = backend_test::temp_file("fakegpu_drv_dot_");
  REQUIRE(!path.empty());
  CU_OK(CU(cuGraphDebugDotPrint)(g2, path.c_str(), CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
  const std::string dot = read_file(path);
  std::remove(path.c_str());
  CHECK(dot.find("MEM_ALLOC") != std::string::npos);
  CU_EQ(CUDA_ERROR_OPERATING_SYSTEM, CU(cuGraphDebugDotPrint)(g2, "/nonexistent-dir/g.dot", 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuGraphDebugDotPrint)(g2, path.c_str(), 1u << 16));  // no CUgraphDebugDot_flags bit
  static std::atomic<int> destroyed{0};
  CUuserObject obj = nullptr;
  CU_OK(CU(cuUserObjectCreate)(
      &obj, nullptr, [](void*) { destroyed.fetch_add(1); }, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CU_OK(CU(cuGraphRetainUserObject)(g2, obj, 1, CU_GRAPH_USER_OBJECT_MOVE));
  CU_OK(CU(cuGraphDestroy)(g2));
  CHECK(destroyed.load() == 1);

  CU_OK(CU(cuGraphExecDestroy)(exec));
  CU_OK(CU(cuGraphDestroy)(g));
  CU_OK(CU(cuMemFreeHost)(out));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}

TEST_CASE_METHOD(CtxCase, "driver: memory pools and their allocations are shared with another process", "[driver]") {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  CU_OK(CU(cuMemPoolCreate)(&pool, &props));
  CUstream s = new_stream();
  constexpr size_t kSize = 8192;
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAllocFromPoolAsync)(&d, kSize, pool, s));
  CU_OK(CU(cuMemsetD8Async)(d, 0x5A, kSize, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  int fd = -1;
  CU_OK(CU(cuMemPoolExportToShareableHandle)(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  REQUIRE(fd >= 0);
  CUmemPoolPtrExportData data{};
  CU_OK(CU(cuMemPoolExportPointer)(&data, d));

  // What cannot be exported or imported.
  CUmemoryPool def = nullptr;
  CU_OK(CU(cuDeviceGetDefaultMemPool)(&def, 0));
  int other_fd = -1;
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemPoolExportToShareableHandle)(&other_fd, def, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemPoolExportToShareableHandle)(&other_fd, pool, CU_MEM_HANDLE_TYPE_WIN32, 0));
  CUdeviceptr plain = 0;
  CU_OK(CU(cuMemAlloc_v2)(&plain, 64));
  CUmemPoolPtrExportData junk{};
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolExportPointer)(&junk, plain));   // not from an exportable pool
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolExportPointer)(&junk, d + 64));  // not an allocation's base
  CUdeviceptr q = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolImportPointer)(&q, pool, &data));  // not an imported pool
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  CUmemoryPool bogus = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemPoolImportFromShareableHandle)(&bogus, reinterpret_cast<void*>(static_cast<intptr_t>(pipefd[0])),
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  close(pipefd[0]);
  close(pipefd[1]);

  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child (a fresh fake GPU after fork) imports the pool and the allocation.
    CUcontext c = nullptr;
    if (CU(cuDevicePrimaryCtxRetain)(&c, 0) != CUDA_SUCCESS || CU(cuCtxPushCurrent_v2)(c) != CUDA_SUCCESS) _exit(10);
    CUmemoryPool imported = nullptr;
    if (CU(cuMemPoolImportFromShareableHandle)(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS)
      _exit(11);
    CUdeviceptr mine = 0;
    if (CU(cuMemPoolImportPointer)(&mine, imported, &data) != CUDA_SUCCESS || mine == 0) _exit(12);
    std::vector<unsigned char> seen(kSize, 0);
    if (CU(cuMemcpyDtoH_v2)(seen.data(), mine, kSize) != CUDA_SUCCESS) _exit(13);
    for (unsigned char v : seen)
      if (v != 0x5A) _exit(14);
    if (CU(cuMemsetD8_v2)(mine, 0xA5, kSize) != CUDA_SUCCESS) _exit(15);
    if (CU(cuMemFree_v2)(mine) != CUDA_SUCCESS) _exit(16);
    if (CU(cuMemFree_v2)(mine) == CUDA_SUCCESS) _exit(17);  // released once
    _exit(0);
  }
  CHECK(wait_case(pid) == 0);
  // The child's writes landed in this process's allocation.
  std::vector<unsigned char> back(kSize, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(back.data(), d, kSize));
  CHECK((back.front() == 0xA5 && back.back() == 0xA5));
  close(fd);
  CU_OK(CU(cuMemFreeAsync)(d, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_OK(CU(cuMemFree_v2)(plain));
  CU_OK(CU(cuMemPoolDestroy)(pool));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}
