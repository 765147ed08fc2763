// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (clang, ASan + UBSan) for API call sequences against the core: the input is
// a program of driver API calls — allocate, free, memset and copy at fuzzed offsets and
// sizes inside and outside allocations, streams, events, host functions, module loads and
// launches, graphs with memset and kernel nodes, stream capture, context switches — whose
// handles are those made earlier in the program, live or already destroyed, or garbage.
//
// Why the driver API and not the core's C++ interface: the core takes typed pointers and
// trusts its callers to have looked handles up; the API layer (fakebackend/src/driver) is
// where a program's handles, stale and garbage ones included, come in. The harness calls
// its implementations (fgimpl_cu*, as the exported trampolines do) in one binary built by
// clang with the core, so both carry the sanitizers and libFuzzer's coverage.
//
// Checked after every call: the bytes the core books for this process on each device
// (Backend::held) are the sizes of the allocations the program holds there; a call on a live
// allocation that stays inside it succeeds, one that runs past its end fails; a memset
// is read back. At the end of each program everything it made is destroyed, after which
// the process holds nothing (held 0, no live allocation): nothing leaks from one program
// to the next. Host functions block on a gate that opens before any call that may wait for
// a stream, so queued work, and the orders it allows, are part of what is fuzzed.
#include "fuzz_bytes.h"
#include "core/backend.h"
#include "core/graph.h"
#include "fakegpu/cuda_api.h"

#include <sanitizer/lsan_interface.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace fgapi;

namespace {

// ---- input ----------------------------------------------------------------------------------
using fuzz::Bytes;

[[noreturn]] void fail(const char* what, long long a = 0, long long b = 0) {
  std::fprintf(stderr, "fuzz_api: %s (%lld, %lld)\n", what, a, b);
  std::abort();
}

// ---- the gate host functions wait on ------------------------------------------------------------
std::mutex g_gate_mu;
std::condition_variable g_gate_cv;
uint64_t g_gate_closed = 0;  // generation of the gates enqueued now
uint64_t g_gate_opened = 0;  // gates of generations below this have opened

void gate_fn(void* arg) {
  const uint64_t generation = reinterpret_cast<uintptr_t>(arg);
  std::unique_lock lock(g_gate_mu);
  g_gate_cv.wait(lock, [generation] { return g_gate_opened > generation; });
}
void open_gates() {
  std::lock_guard lock(g_gate_mu);
  g_gate_opened = ++g_gate_closed;
  g_gate_cv.notify_all();
}
void* next_gate() {
  std::lock_guard lock(g_gate_mu);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(g_gate_closed));
}

// ---- images ---------------------------------------------------------------------------------------
constexpr const char* kPtx[] = {
    ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n ret;\n}\n",
    ".version 8.0\n.target sm_75\n.address_size 64\n.global .align 4 .u32 g[4] = {1,2,3,4};\n"
    ".const .align 8 .b8 c[16];\n.visible .entry k(.param .u64 p)\n{\n ret;\n}\n"
    ".visible .entry k2(.param .u32 a, .param .u64 b)\n{\n ret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n ret;\n}\n",
};
constexpr const char* kNames[] = {"k", "k2", "missing", ""};

// ---- the program's objects --------------------------------------------------------------------------
struct Alloc {
  CUdeviceptr ptr = 0;
  size_t size = 0;
  int device = -1;  // -1: pinned host memory (not in held())
  CUcontext ctx = nullptr;
  bool live = false;
};
template <class H>
struct Obj {
  H h{};
  bool live = false;
};

constexpr size_t kMaxObjects = 16;
constexpr size_t kHostBytes = 2u << 20;
alignas(64) unsigned char g_host[kHostBytes];  // copies' host side
alignas(64) unsigned char g_back[256];         // read-back of memsets
int g_marker;                                  // its address: a garbage handle

class Program {
 public:
  explicit Program(Bytes& in) : in_(in) {}
  void run();

 private:
  Bytes& in_;
  int devices_ = 0;
  std::vector<Obj<CUcontext>> ctxs_;
  std::vector<int> ctx_device_;
  std::vector<bool> ctx_primary_;  // a retained primary context (released at the end)
  std::vector<Alloc> allocs_;
  std::vector<Obj<CUstream>> streams_;
  std::vector<Obj<CUevent>> events_;
  std::vector<Obj<CUmodule>> modules_;
  std::vector<CUfunction> functions_;  // stay listed after their module is unloaded
  std::vector<Obj<CUgraph>> graphs_;
  std::vector<CUgraphNode> nodes_;
  std::vector<Obj<CUgraphExec>> execs_;

  template <class H>
  H garbage(uint8_t b) {
    static const uintptr_t kGarbage[] = {0, 1, 2, 0xdeadbeef000, reinterpret_cast<uintptr_t>(&g_marker)};
    return reinterpret_cast<H>(kGarbage[b % std::size(kGarbage)]);
  }
  // An object made earlier (live or not) or, for one byte value in eight, garbage.
  template <class H>
  H pick(const std::vector<Obj<H>>& v) {
    const uint8_t b = in_.u8();
    if (v.empty() || b >= 0xe0) return garbage<H>(b);
    return v[b % v.size()].h;
  }
  template <class H>
  void add(std::vector<Obj<H>>& v, H h) {
    if (v.size() < kMaxObjects) v.push_back({h, true});
  }
  template <class H>
  void kill(std::vector<Obj<H>>& v, H h) {
    for (auto& o : v)
      if (o.h == h) o.live = false;
  }
  Alloc* pick_alloc() {
    const uint8_t b = in_.u8();
    return allocs_.empty() || b >= 0xf0 ? nullptr : &allocs_[b % allocs_.size()];
  }
  // A size: 0, small, up to 4 MiB, up to 1 GiB, or more than a device has. (Large ones are
  // few: every chunk an arena ever handed out is walked when a context goes.)
  size_t size_arg() {
    const uint8_t c = in_.u8();
    const uint16_t v = in_.u16();
    switch (c % 8) {
      case 0: return 0;
      case 1: return v & 1 ? (size_t{1} << 36) + v : static_cast<size_t>(v) << 14;
      case 2:
      case 3: return static_cast<size_t>(v) << 6;
      default: return v;
    }
  }
  // An offset into an allocation: mostly inside, sometimes at or past its end.
  size_t offset_in(const Alloc* a) {
    const uint16_t v = in_.u16();
    const size_t size = a ? a->size : 0;
    if (size && (v & 0x8000) == 0) return v % size;
    return size + (v & 0x7fff);
  }
  // A length for a memset or copy at `off` of `a`: inside, or past the end, at most 1 MiB.
  size_t length_at(const Alloc* a, size_t off) {
    const uint16_t v = in_.u16();
    const size_t room = a && off < a->size ? a->size - off : 0;
    if (room && (v & 0x8000) == 0) return 1 + v % std::min<size_t>(room, 1u << 20);
    return (v & 0x7fff) * 32 + 1;
  }
  CUdeviceptr address(const Alloc* a, size_t off) {
    if (a) return a->ptr + off;
    return reinterpret_cast<uintptr_t>(garbage<void*>(static_cast<uint8_t>(off))) + off;
  }

  int current_device() {
    CUcontext c = nullptr;
    if (fgimpl_cuCtxGetCurrent(&c) != CUDA_SUCCESS || !c) return -1;
    for (size_t i = 0; i < ctxs_.size(); ++i)
      if (ctxs_[i].h == c && ctxs_[i].live) return ctx_device_[i];
    return -1;
  }
  CUcontext current_ctx() {
    CUcontext c = nullptr;
    fgimpl_cuCtxGetCurrent(&c);
    return c;
  }
  void make_ctx(int device) {
    CUcontext c = nullptr;
    if (fgimpl_cuCtxCreate_v2(&c, 0, device) != CUDA_SUCCESS) fail("cuCtxCreate failed", device);
    ctxs_.push_back({c, true});
    ctx_device_.push_back(device);
    ctx_primary_.push_back(false);
  }
  // The device's primary context, retained once per program and made current: what every
  // program starts with (the core keeps a destroyed context's few bytes for ever, so that its
  // handle stays recognisable; a primary context is kept and reused instead).
  void retain_primary(int device) {
    for (size_t i = 0; i < ctxs_.size(); ++i)
      if (ctx_primary_[i] && ctx_device_[i] == device) return;
    CUcontext c = nullptr;
    if (fgimpl_cuDevicePrimaryCtxRetain(&c, device) != CUDA_SUCCESS) fail("cuDevicePrimaryCtxRetain failed", device);
    if (fgimpl_cuCtxSetCurrent(c) != CUDA_SUCCESS) fail("cuCtxSetCurrent of a primary context failed", device);
    ctxs_.push_back({c, true});
    ctx_device_.push_back(device);
    ctx_primary_.push_back(true);
  }
  void forget_allocations_of(CUcontext c) {
    for (auto& a : allocs_)
      if (a.ctx == c && a.device >= 0) a.live = false;
  }
  void destroy_ctx(CUcontext c) {
    const CUresult r = fgimpl_cuCtxDestroy_v2(c);
    bool was_live = false, primary = false;
    for (size_t i = 0; i < ctxs_.size(); ++i)
      if (ctxs_[i].h == c && ctxs_[i].live) {
        was_live = true;
        primary = primary || ctx_primary_[i];
        if (r == CUDA_SUCCESS) ctxs_[i].live = false;
      }
    if (primary && r == CUDA_SUCCESS) fail("cuCtxDestroy of a primary context succeeded");
    if (was_live && !primary && r != CUDA_SUCCESS) fail("cuCtxDestroy of a live context failed", r);
    if (r == CUDA_SUCCESS) {
      forget_allocations_of(c);  // its allocations go with it
      __lsan_ignore_object(c);   // kept by the core on purpose (core/context.cpp retire_ctx)
    }
  }
  // Releases (or resets) the primary context of `device` this program retained.
  void release_primary(int device, bool reset) {
    for (size_t i = 0; i < ctxs_.size(); ++i) {
      if (!ctx_primary_[i] || ctx_device_[i] != device || !ctxs_[i].live) continue;
      const CUresult r = reset ? fgimpl_cuDevicePrimaryCtxReset_v2(device)
                               : fgimpl_cuDevicePrimaryCtxRelease_v2(device);
      if (r != CUDA_SUCCESS) fail("releasing a retained primary context failed", r);
      ctxs_[i].live = false;
      forget_allocations_of(ctxs_[i].h);
    }
  }

  // The core's books against the program's: what it holds per device.
  void check_books() {
    fg::Backend& b = fg::Backend::get();
    for (int d = 0; d < devices_; ++d) {
      uint64_t expected = 0;
      for (const Alloc& a : allocs_)
        if (a.live && a.device == d) expected += a.size;
      const uint64_t held = b.held(b.device(d));
      if (held != expected)
        fail("held bytes differ from the live allocations", static_cast<long long>(held),
             static_cast<long long>(expected));
    }
  }
  // A call on [off, off+n) of `a`: inside a live allocation it must succeed, past its end fail.
  void expect_range(const Alloc* a, size_t off, size_t n, CUresult r, const char* what) {
    // (While a stream capture is under way, a synchronous call is refused whatever its range.)
    if (!a || !a->live || a->device < 0 || n == 0 || current_device() < 0 || fg::graph::active()) return;
    const bool inside = off < a->size && n <= a->size - off;
    if (inside && r != CUDA_SUCCESS) fail(what, r, static_cast<long long>(off));
    if (!inside && off < a->size && r == CUDA_SUCCESS) fail(what, -1, static_cast<long long>(off + n));
  }

  void op_alloc(uint8_t how);
  void op_free();
  void op_memset(bool async);
  void op_copy(uint8_t how);
  void op_stream(uint8_t how);
  void op_event(uint8_t how);
  void op_module(uint8_t how);
  void op_launch();
  void op_graph(uint8_t how);
  void op_ctx(uint8_t how);
  void cleanup();
};

void Program::op_alloc(uint8_t how) {
  const size_t size = size_arg();
  CUdeviceptr p = 0;
  CUresult r;
  Alloc a;
  a.size = size;
  a.ctx = current_ctx();
  a.device = current_device();
  switch (how % 3) {
    case 0: r = fgimpl_cuMemAlloc_v2(&p, size); break;
    case 1: r = fgimpl_cuMemAllocManaged(&p, size, 1 + in_.u8() % 2); break;  // GLOBAL or HOST
    default: {
      void* h = nullptr;
      r = fgimpl_cuMemAllocHost_v2(&h, size);
      p = reinterpret_cast<uintptr_t>(h);
      a.device = -1;
      break;
    }
  }
  if (r != CUDA_SUCCESS) return;
  if (size == 0 && a.device < 0) {  // pinned memory: success and a null pointer, as a real H200 answers
    if (p) fail("0 bytes of pinned memory gave a pointer", static_cast<long long>(p));
    return;
  }
  if (size == 0 || !p) fail("an allocation of 0 bytes succeeded", static_cast<long long>(p));
  for (const Alloc& o : allocs_)
    if (o.live && p < o.ptr + o.size && o.ptr < p + size) fail("allocations overlap", static_cast<long long>(p));
  a.ptr = p;
  a.live = true;
  if (allocs_.size() < 2 * kMaxObjects) {
    allocs_.push_back(a);
  } else {  // no room to track it: give it back
    a.device < 0 ? fgimpl_cuMemFreeHost(reinterpret_cast<void*>(p)) : fgimpl_cuMemFree_v2(p);
  }
}

void Program::op_free() {
  Alloc* a = pick_alloc();
  const uint8_t how = in_.u8();
  const CUdeviceptr p = a ? a->ptr + (how & 0x80 ? 1 : 0) : reinterpret_cast<uintptr_t>(garbage<void*>(how));
  const bool host = a ? a->device < 0 : (how & 1);
  const CUresult r = host ? fgimpl_cuMemFreeHost(reinterpret_cast<void*>(p)) : fgimpl_cuMemFree_v2(p);
  if (!a) return;
  const bool exact = (how & 0x80) == 0;
  // (During a stream capture a free is refused, as CUDA refuses it, whatever it frees.)
  if (a->live && exact && r != CUDA_SUCCESS && !fg::graph::active()) fail("freeing a live allocation failed", r);
  if ((!a->live || !exact) && r == CUDA_SUCCESS) {
    // A freed base may have been handed out again to a later allocation: then it is live.
    bool reused = false;
    for (Alloc& o : allocs_)
      if (o.live && o.ptr == p) {
        reused = true;
        o.live = false;
      }
    if (!reused) fail("freeing a dead or interior pointer succeeded", static_cast<long long>(p));
  }
  if (r == CUDA_SUCCESS) a->live = false;
}

void Program::op_memset(bool async) {
  Alloc* a = pick_alloc();
  const size_t off = offset_in(a);
  const size_t n = length_at(a, off);
  const uint8_t v = in_.u8();
  const CUdeviceptr p = address(a, off);
  if (async) {
    fgimpl_cuMemsetD8Async(p, v, n, pick(streams_));
    return;
  }
  const CUresult r = fgimpl_cuMemsetD8_v2(p, v, n);
  expect_range(a, off, n, r, "cuMemsetD8 on a live allocation");
  if (r != CUDA_SUCCESS || !a || !a->live || a->device < 0 || current_device() < 0 || fg::graph::active()) return;
  const size_t back = std::min<size_t>(n, sizeof g_back);
  if (fgimpl_cuMemcpyDtoH_v2(g_back, p + n - back, back) != CUDA_SUCCESS) fail("reading a memset back failed");
  for (size_t i = 0; i < back; ++i)
    if (g_back[i] != v) fail("a memset's bytes did not land", g_back[i], v);
}

void Program::op_copy(uint8_t how) {
  Alloc* a = pick_alloc();
  const size_t off = offset_in(a);
  const size_t n = std::min(length_at(a, off), kHostBytes);
  const CUdeviceptr p = address(a, off);
  CUresult r;
  switch (how % 4) {
    case 0: r = fgimpl_cuMemcpyHtoD_v2(p, g_host, n); break;
    case 1: r = fgimpl_cuMemcpyDtoH_v2(g_host, p, n); break;
    case 2: {
      fgimpl_cuMemcpyHtoDAsync_v2(p, g_host, n, pick(streams_));
      return;
    }
    default: {
      Alloc* b = pick_alloc();
      const size_t boff = offset_in(b);
      r = fgimpl_cuMemcpyDtoD_v2(address(b, boff), p, n);
      if (b && b->live && a && a->live && a->device >= 0 && b->device >= 0 && current_device() >= 0 &&
          !fg::graph::active()) {
        const bool inside = boff < b->size && n <= b->size - boff && off < a->size && n <= a->size - off;
        if (inside && r != CUDA_SUCCESS) fail("cuMemcpyDtoD inside live allocations failed", r);
      }
      return;
    }
  }
  expect_range(a, off, n, r, "cuMemcpy on a live allocation");
}

void Program::op_stream(uint8_t how) {
  switch (how % 6) {
    case 0: {
      CUstream s = nullptr;
      if (fgimpl_cuStreamCreate(&s, in_.u8() & 1) == CUDA_SUCCESS) add(streams_, s);
      break;
    }
    case 1: {
      const CUstream s = pick(streams_);
      open_gates();
      if (fgimpl_cuStreamDestroy_v2(s) == CUDA_SUCCESS) kill(streams_, s);
      break;
    }
    case 2:
      open_gates();
      fgimpl_cuStreamSynchronize(pick(streams_));
      break;
    case 3: fgimpl_cuStreamQuery(pick(streams_)); break;
    case 4: fgimpl_cuLaunchHostFunc(pick(streams_), gate_fn, next_gate()); break;
    default: open_gates(); break;
  }
}

void Program::op_event(uint8_t how) {
  switch (how % 7) {
    case 0: {
      CUevent e = nullptr;
      if (fgimpl_cuEventCreate(&e, in_.u8() % 4) == CUDA_SUCCESS) add(events_, e);  // default, blocking, no timing
      break;
    }
    case 1: {
      const CUevent e = pick(events_);
      open_gates();
      if (fgimpl_cuEventDestroy_v2(e) == CUDA_SUCCESS) kill(events_, e);
      break;
    }
    case 2: {
      const CUevent e = pick(events_);
      fgimpl_cuEventRecord(e, pick(streams_));
      break;
    }
    case 3: {
      const CUstream s = pick(streams_);
      fgimpl_cuStreamWaitEvent(s, pick(events_), 0);
      break;
    }
    case 4: fgimpl_cuEventQuery(pick(events_)); break;
    case 5:
      open_gates();
      fgimpl_cuEventSynchronize(pick(events_));
      break;
    default: {
      float ms = 0;
      const CUevent e1 = pick(events_);
      fgimpl_cuEventElapsedTime(&ms, e1, pick(events_));
      break;
    }
  }
}

void Program::op_module(uint8_t how) {
  switch (how % 4) {
    case 0:
    case 1: {
      std::string image;
      const uint8_t which = in_.u8();
      if (which % 4 < 3) {
        image = kPtx[which % 4];
      } else {  // PTX text of fuzzed lines after a valid header
        image = ".version 8.0\n.target sm_75\n.address_size 64\n" + in_.text(120);
      }
      CUmodule m = nullptr;
      open_gates();  // a load may wait for nothing, but keep it out of the queued orders
      if (fgimpl_cuModuleLoadData(&m, image.c_str()) == CUDA_SUCCESS) add(modules_, m);
      break;
    }
    case 2: {
      const CUmodule m = pick(modules_);
      open_gates();
      if (fgimpl_cuModuleUnload(m) == CUDA_SUCCESS) kill(modules_, m);
      break;
    }
    default: {
      CUfunction f = nullptr;
      const CUmodule m = pick(modules_);
      if (fgimpl_cuModuleGetFunction(&f, m, kNames[in_.u8() % std::size(kNames)]) == CUDA_SUCCESS &&
          functions_.size() < kMaxObjects)
        functions_.push_back(f);
      CUdeviceptr g = 0;
      size_t bytes = 0;
      if (fgimpl_cuModuleGetGlobal_v2(&g, &bytes, m, in_.u8() & 1 ? "g" : "c") == CUDA_SUCCESS && bytes) {
        open_gates();
        fgimpl_cuMemsetD8_v2(g, 7, bytes);  // (the module's context need not be current)
      }
      break;
    }
  }
}

void Program::op_launch() {
  const uint8_t b = in_.u8();
  const CUfunction f = functions_.empty() || b >= 0xe0 ? garbage<CUfunction>(b) : functions_[b % functions_.size()];
  const unsigned gx = 1 + in_.u8() % 4, bx = in_.u8() & 0x80 ? 2048 : 1 + in_.u8() % 256;
  CUdeviceptr arg = allocs_.empty() ? 0 : allocs_[0].ptr;
  uint32_t arg32 = 5;
  void* params[] = {&arg, &arg32};
  void* params2[] = {&arg32, &arg};
  fgimpl_cuLaunchKernel(f, gx, 1, 1, bx, 1, 1, in_.u8() & 1 ? 0 : 1u << 20, pick(streams_), b & 1 ? params2 : params,
                        nullptr);
}

void Program::op_graph(uint8_t how) {
  switch (how % 8) {
    case 0: {
      CUgraph g = nullptr;
      if (fgimpl_cuGraphCreate(&g, 0) == CUDA_SUCCESS) add(graphs_, g);
      break;
    }
    case 1:
    case 2:
    case 3: {
      const CUgraph g = pick(graphs_);
      CUgraphNode deps[2] = {};
      size_t ndeps = in_.u8() % 3;
      for (size_t i = 0; i < ndeps; ++i) deps[i] = nodes_.empty() ? nullptr : nodes_[in_.u8() % nodes_.size()];
      CUgraphNode n = nullptr;
      CUresult r;
      if (how % 8 == 1) {
        r = fgimpl_cuGraphAddEmptyNode(&n, g, deps, ndeps);
      } else if (how % 8 == 2) {
        Alloc* a = pick_alloc();
        CUDA_MEMSET_NODE_PARAMS p{};
        const size_t off = offset_in(a);
        p.dst = address(a, off);
        p.elementSize = 1u << (in_.u8() % 4);  // 1, 2, 4 and 8 (refused)
        p.width = 1 + in_.u8();
        p.height = 1 + in_.u8() % 4;
        p.pitch = p.width * p.elementSize + in_.u8() % 2 * 64;
        p.value = in_.u8();
        r = fgimpl_cuGraphAddMemsetNode(&n, g, deps, ndeps, &p, current_ctx());
      } else {
        CUDA_KERNEL_NODE_PARAMS_v2 p{};
        const uint8_t b = in_.u8();
        p.func = functions_.empty() || b >= 0xe0 ? garbage<CUfunction>(b) : functions_[b % functions_.size()];
        p.gridDimX = p.gridDimY = p.gridDimZ = 1;
        p.blockDimX = 1 + in_.u8();
        p.blockDimY = p.blockDimZ = 1;
        static CUdeviceptr arg = 0;
        static uint32_t arg32 = 0;
        static void* params[] = {&arg, &arg32};
        p.kernelParams = params;
        r = fgimpl_cuGraphAddKernelNode_v2(&n, g, deps, ndeps, &p);
      }
      if (r == CUDA_SUCCESS && nodes_.size() < kMaxObjects) nodes_.push_back(n);
      break;
    }
    case 4: {
      CUgraphExec x = nullptr;
      if (fgimpl_cuGraphInstantiateWithFlags(&x, pick(graphs_), 0) == CUDA_SUCCESS) add(execs_, x);
      break;
    }
    case 5: {
      const CUgraphExec x = pick(execs_);
      fgimpl_cuGraphLaunch(x, pick(streams_));
      break;
    }
    case 6: {
      const CUgraphExec x = pick(execs_);
      open_gates();
      if (fgimpl_cuGraphExecDestroy(x) == CUDA_SUCCESS) kill(execs_, x);
      break;
    }
    default: {
      if (in_.u8() & 1) {  // a node by itself
        if (!nodes_.empty()) fgimpl_cuGraphDestroyNode(nodes_[in_.u8() % nodes_.size()]);
        break;
      }
      const CUgraph g = pick(graphs_);
      if (fgimpl_cuGraphDestroy(g) == CUDA_SUCCESS) kill(graphs_, g);
      break;
    }
  }
}

void Program::op_ctx(uint8_t how) {
  switch (how % 5) {
    case 0: {
      const uint8_t b = in_.u8();
      if (b & 0x80)
        retain_primary(b % devices_);
      else if (ctxs_.size() < 4)
        make_ctx(b % devices_);
      break;
    }
    case 1: fgimpl_cuCtxSetCurrent(pick(ctxs_)); break;
    case 2: {
      const uint8_t b = in_.u8();
      const CUcontext c = pick(ctxs_);
      open_gates();
      if (b & 0x80)
        release_primary(b % devices_, /*reset=*/true);
      else
        destroy_ctx(c);
      break;
    }
    case 3:
      open_gates();
      fgimpl_cuCtxSynchronize();
      break;
    default: {  // begin or end a capture
      const CUstream s = pick(streams_);
      if (in_.u8() & 1) {
        fgimpl_cuStreamBeginCapture_v2(s, static_cast<CUstreamCaptureMode>(in_.u8() % 3));
      } else {
        CUgraph g = nullptr;
        if (fgimpl_cuStreamEndCapture(s, &g) == CUDA_SUCCESS && g) add(graphs_, g);
      }
      break;
    }
  }
}

void Program::run() {
  fg::Backend& b = fg::Backend::get();
  devices_ = b.device_count();
  retain_primary(in_.u8() % devices_);
  int ops = 0;
  while (!in_.empty() && ops++ < 256) {
    const uint8_t op = in_.u8();
    switch (op % 12) {
      case 0:
      case 1: op_alloc(op >> 4); break;
      case 2: open_gates(), op_free(); break;  // a free waits for the context's work
      case 3: (op & 0x10) ? op_memset(true) : (open_gates(), op_memset(false)); break;
      case 4: (op & 0x30) == 0x20 ? op_copy(2) : (open_gates(), op_copy(op >> 4)); break;
      case 5: op_stream(op >> 4); break;
      case 6: op_event(op >> 4); break;
      case 7: op_module(op >> 4); break;
      case 8: op_launch(); break;
      case 9:
      case 10: op_graph(op >> 4); break;
      default: op_ctx(op >> 4); break;
    }
    check_books();
  }
  cleanup();
}

// Destroys everything the program made; then the process holds nothing.
void Program::cleanup() {
  open_gates();
  // A capture left open is ended (and its graph destroyed), on the program's streams and on
  // the per-thread default stream (handle 2), which garbage handles may have begun one on.
  std::vector<CUstream> capturing;
  for (auto& s : streams_) capturing.push_back(s.h);
  capturing.push_back(reinterpret_cast<CUstream>(uintptr_t{2}));
  for (CUstream s : capturing) {
    CUgraph g = nullptr;
    if (fgimpl_cuStreamEndCapture(s, &g) == CUDA_SUCCESS && g) add(graphs_, g);
  }
  for (auto& x : execs_)
    if (x.live && fgimpl_cuGraphExecDestroy(x.h) != CUDA_SUCCESS) fail("cuGraphExecDestroy of a live exec failed");
  for (auto& g : graphs_)
    if (g.live) fgimpl_cuGraphDestroy(g.h);  // may be gone with its capture
  for (auto& a : allocs_)
    if (a.live && a.device < 0) {
      if (const CUresult r = fgimpl_cuMemFreeHost(reinterpret_cast<void*>(a.ptr)); r != CUDA_SUCCESS)
        fail("cuMemFreeHost of a live block failed (code, pointer)", r, static_cast<long long>(a.ptr));
      a.live = false;
    }
  for (size_t i = 0; i < ctxs_.size(); ++i) {
    if (!ctxs_[i].live) continue;
    if (ctx_primary_[i])
      release_primary(ctx_device_[i], /*reset=*/false);
    else
      destroy_ctx(ctxs_[i].h);
  }
  check_books();
  fg::Backend& b = fg::Backend::get();
  for (int d = 0; d < devices_; ++d)
    if (b.held(b.device(d)) != 0) fail("bytes held after every context was destroyed", d);
  // Every allocation gone, pinned ones included (one program in 16: the walk over every
  // block an arena ever handed out is the costliest call here).
  static unsigned programs = 0;
  if (programs++ % 16 == 0 && !b.live_allocations().empty())
    fail("live allocations after cleanup", static_cast<long long>(b.live_allocations().size()));
  fgimpl_cuCtxSetCurrent(nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Two small devices, a private ledger, no report file, quiet logs.
  setenv("FAKEGPU_DEVICES", "t4,l4", 1);
  setenv("FAKEGPU_ISOLATED", "1", 1);
  setenv("FAKEGPU_REPORT", "off", 1);
  setenv("FAKEGPU_LOG", "off", 1);
  unsetenv("FAKEGPU_CONFIG");
  unsetenv("CUDA_VISIBLE_DEVICES");
  if (fgimpl_cuInit(0) != CUDA_SUCCESS) fail("cuInit failed");
  std::memset(g_host, 0x5a, sizeof g_host);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Program(in).run();
  return 0;
}
