// SPDX-License-Identifier: Apache-2.0
// Destroy releases: a handle of anything unloaded or destroyed is refused with the
// driver's code however many objects come after it, and create/destroy cycles keep no host
// memory: a long-running service that loads kernels per request does not grow.
#include "driver_test.h"

#include <malloc.h>
#include <barrier>
#if defined(__SANITIZE_ADDRESS__)
// ASan's runtime (sanitizer/allocator_interface.h, which GCC does not install).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

using namespace drvtest;

namespace {

// One kernel, `tick`.
const char* const kPtx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry tick()\n{\n  ret;\n}\n";

// Host bytes the process holds from the allocator (small blocks and mmap'ed ones). Under
// ASan, whose allocator glibc's statistics do not see, the bytes ASan's allocator holds.
size_t heap_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

// Host bytes kept per create/destroy cycle over `cycles` cycles, after a warm-up that lets
// the tables reach their steady size.
double kept_per_cycle(int cycles, const std::function<void()>& cycle) {
  for (int i = 0; i < 1000; ++i) cycle();
  const size_t before = heap_bytes();
  for (int i = 0; i < cycles; ++i) cycle();
  const size_t after = heap_bytes();
  return (static_cast<double>(after) - static_cast<double>(before)) / cycles;
}

}  // namespace

TEST_CASE("driver: handles of unloaded modules, functions, libraries and kernels are refused", "[driver]") {
  Ctx c;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  CU_OK(CU(cuModuleLoadData)(&mod, kPtx));
  CU_OK(CU(cuModuleGetFunction)(&fn, mod, "tick"));
  CUlibrary lib = nullptr;
  CUkernel kern = nullptr;
  CU_OK(CU(cuLibraryLoadData)(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CU_OK(CU(cuLibraryGetKernel)(&kern, lib, "tick"));
  CU_OK(CU(cuModuleUnload)(mod));
  CU_OK(CU(cuLibraryUnload)(lib));
  // Many loads later (the freed objects' addresses are reused), the old handles are still
  // nobody's.
  for (int i = 0; i < 1000; ++i) {
    CUmodule m = nullptr;
    CUfunction f = nullptr;
    CU_OK(CU(cuModuleLoadData)(&m, kPtx));
    CU_OK(CU(cuModuleGetFunction)(&f, m, "tick"));
    REQUIRE(m != mod);
    REQUIRE(f != fn);
    CU_OK(CU(cuModuleUnload)(m));
    CUlibrary l = nullptr;
    CUkernel k = nullptr;
    CU_OK(CU(cuLibraryLoadData)(&l, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_OK(CU(cuLibraryGetKernel)(&k, l, "tick"));
    REQUIRE(l != lib);
    REQUIRE(k != kern);
    CU_OK(CU(cuLibraryUnload)(l));
  }
  CUfunction f = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuModuleGetFunction)(&f, mod, "tick"));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuModuleUnload)(mod));
  int regs = 0;
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuFuncGetAttribute)(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
  CUkernel k = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLibraryGetKernel)(&k, lib, "tick"));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLibraryUnload)(lib));
  const char* name = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuKernelGetName)(&name, kern));
  // A handle of one kind is not taken for another.
  CU_OK(CU(cuModuleLoadData)(&mod, kPtx));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE,
        CU(cuFuncGetAttribute)(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, reinterpret_cast<CUfunction>(mod)));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLibraryUnload)(reinterpret_cast<CUlibrary>(mod)));
  CU_OK(CU(cuModuleUnload)(mod));
}

TEST_CASE("driver: handles of destroyed contexts are refused however many contexts follow", "[driver]") {
  Ctx c;
  CUcontext dead = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&dead, 0, 0));
  CU_OK(CU(cuCtxDestroy_v2)(dead));
  // A context destroyed while another thread has it current: that thread's calls say it is
  // destroyed until the thread lets it go, whatever was created since.
  CUcontext held = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&held, 0, 0));
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));
  std::mutex mu;
  std::condition_variable cv;
  int step = 0;
  CUresult while_held = CUDA_ERROR_UNKNOWN, after_pop = CUDA_ERROR_UNKNOWN;
  CUcontext seen = nullptr;
  std::thread other([&] {
    CU_OK(CU(cuCtxPushCurrent_v2)(held));
    std::unique_lock lock(mu);
    step = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return step == 2; });
    CUdevice d = -1;
    (void)CU(cuCtxGetCurrent)(&seen);
    while_held = CU(cuCtxGetDevice)(&d);
    (void)CU(cuCtxPopCurrent_v2)(nullptr);
    after_pop = CU(cuCtxGetDevice)(&d);
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return step == 1; });
  }
  CU_OK(CU(cuCtxDestroy_v2)(held));
  for (int i = 0; i < 1000; ++i) {
    CUcontext x = nullptr;
    CU_OK(CU(cuCtxCreate_v2)(&x, 0, 0));
    REQUIRE(x != dead);
    REQUIRE(x != held);
    CU_OK(CU(cuCtxDestroy_v2)(x));
  }
  {
    std::lock_guard lock(mu);
    step = 2;
    cv.notify_all();
  }
  other.join();
  CHECK(seen == held);
  CU_EQ(CUDA_ERROR_CONTEXT_IS_DESTROYED, while_held);
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, after_pop);
  for (CUcontext gone : {dead, held}) {
    unsigned long long id = 0;
    CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetId)(gone, &id));
    CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxPushCurrent_v2)(gone));
    CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxSetCurrent)(gone));
    CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxDestroy_v2)(gone));
  }
  // Still the fixture's context on this thread.
  CUcontext cur = nullptr;
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == c.ctx);
}

TEST_CASE("driver: a context destroyed by two threads at once is destroyed once", "[driver][threads]") {
  Ctx c;
  constexpr int kRounds = 1000;
  std::barrier start(2);
  CUcontext target = nullptr;
  CUresult theirs = CUDA_ERROR_UNKNOWN;
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      start.arrive_and_wait();  // the round's context is made
      theirs = CU(cuCtxDestroy_v2)(target);
      start.arrive_and_wait();  // both have answered
    }
  });
  int both_ok = 0, none_ok = 0, wrong_code = 0;
  for (int i = 0; i < kRounds; ++i) {
    CU_OK(CU(cuCtxCreate_v2)(&target, 0, 0));
    // Something to free, so that the destroys overlap.
    for (int j = 0; j < 16; ++j) {
      CUdeviceptr p = 0;
      CUstream s = nullptr;
      CU_OK(CU(cuMemAlloc_v2)(&p, 4096));
      CU_OK(CU(cuStreamCreate)(&s, 0));
    }
    CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));
    start.arrive_and_wait();
    const CUresult mine = CU(cuCtxDestroy_v2)(target);
    start.arrive_and_wait();
    const int ok = (mine == CUDA_SUCCESS) + (theirs == CUDA_SUCCESS);
    both_ok += ok == 2;
    none_ok += ok == 0;
    const CUresult loser = mine == CUDA_SUCCESS ? theirs : mine;
    wrong_code += ok == 1 && loser != CUDA_ERROR_INVALID_CONTEXT;
  }
  other.join();
  CHECK(both_ok == 0);
  CHECK(none_ok == 0);
  CHECK(wrong_code == 0);
  CUcontext cur = nullptr;
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == c.ctx);
}

TEST_CASE("driver: 100,000 create/destroy cycles of each handle type keep at most 8 bytes each", "[driver]") {
  Ctx c;
  constexpr int kCycles = 100000;
  CUmemoryPool pool = nullptr;
  const auto check = [](const char* what, double bytes) {
    INFO(what << ": " << bytes << " bytes kept per cycle");
    CHECK(bytes <= 8.0);
  };
  check("module + function", kept_per_cycle(kCycles, [] {
          CUmodule m = nullptr;
          CUfunction f = nullptr;
          CU_OK(CU(cuModuleLoadData)(&m, kPtx));
          CU_OK(CU(cuModuleGetFunction)(&f, m, "tick"));
          CU_OK(CU(cuModuleUnload)(m));
        }));
  check("library + kernel", kept_per_cycle(kCycles, [] {
          CUlibrary l = nullptr;
          CUkernel k = nullptr;
          CU_OK(CU(cuLibraryLoadData)(&l, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
          CU_OK(CU(cuLibraryGetKernel)(&k, l, "tick"));
          CU_OK(CU(cuLibraryUnload)(l));
        }));
  check("context", kept_per_cycle(kCycles, [] {
          CUcontext x = nullptr;
          CU_OK(CU(cuCtxCreate_v2)(&x, 0, 0));
          CU_OK(CU(cuCtxDestroy_v2)(x));
        }));
  check("context with a default stream", kept_per_cycle(kCycles / 10, [] {
          CUcontext x = nullptr;
          CU_OK(CU(cuCtxCreate_v2)(&x, 0, 0));
          CU_OK(CU(cuStreamSynchronize)(CU_STREAM_LEGACY));
          CU_OK(CU(cuCtxDestroy_v2)(x));
        }));
  check("context with a module", kept_per_cycle(kCycles / 10, [] {
          CUcontext x = nullptr;
          CU_OK(CU(cuCtxCreate_v2)(&x, 0, 0));
          CUmodule m = nullptr;
          CU_OK(CU(cuModuleLoadData)(&m, kPtx));
          CU_OK(CU(cuCtxDestroy_v2)(x));
        }));
  check("context with a default stream and a library module", kept_per_cycle(kCycles / 10, [] {
          static CUlibrary lib = [] {
            CUlibrary l = nullptr;
            CU_OK(CU(cuLibraryLoadData)(&l, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
            return l;
          }();
          CUcontext x = nullptr;
          CU_OK(CU(cuCtxCreate_v2)(&x, 0, 0));
          CU_OK(CU(cuStreamSynchronize)(CU_STREAM_LEGACY));
          CUkernel k = nullptr;
          CU_OK(CU(cuLibraryGetKernel)(&k, lib, "tick"));
          CUfunction f = nullptr;
          CU_OK(CU(cuKernelGetFunction)(&f, k));
          CU_OK(CU(cuCtxDestroy_v2)(x));
        }));
  check("stream", kept_per_cycle(kCycles, [] {
          CUstream s = nullptr;
          CU_OK(CU(cuStreamCreate)(&s, 0));
          CU_OK(CU(cuStreamDestroy_v2)(s));
        }));
  check("event", kept_per_cycle(kCycles, [] {
          CUevent e = nullptr;
          CU_OK(CU(cuEventCreate)(&e, 0));
          CU_OK(CU(cuEventDestroy_v2)(e));
        }));
  check("graph + node + executable graph", kept_per_cycle(kCycles, [] {
          CUgraph g = nullptr;
          CUgraphNode n = nullptr;
          CUgraphExec x = nullptr;
          CU_OK(CU(cuGraphCreate)(&g, 0));
          CU_OK(CU(cuGraphAddEmptyNode)(&n, g, nullptr, 0));
          CU_OK(CU(cuGraphInstantiateWithFlags)(&x, g, 0));
          CU_OK(CU(cuGraphExecDestroy)(x));
          CU_OK(CU(cuGraphDestroy)(g));
        }));
  check("user object", kept_per_cycle(kCycles, [] {
          CUuserObject o = nullptr;
          CU_OK(CU(cuUserObjectCreate)(
              &o, nullptr, [](void*) {}, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
          CU_OK(CU(cuUserObjectRelease)(o, 1));
        }));
  check("memory pool", kept_per_cycle(kCycles, [&pool] {
          CUmemPoolProps props{};
          props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
          props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
          props.location.id = 0;
          CU_OK(CU(cuMemPoolCreate)(&pool, &props));
          CU_OK(CU(cuMemPoolDestroy)(pool));
        }));
  check("linker", kept_per_cycle(kCycles, [] {
          CUlinkState l = nullptr;
          CU_OK(CU(cuLinkCreate_v2)(0, nullptr, nullptr, &l));
          CU_OK(CU(cuLinkDestroy)(l));
        }));
  check("device memory", kept_per_cycle(kCycles, [] {
          CUdeviceptr p = 0;
          CU_OK(CU(cuMemAlloc_v2)(&p, 256));
          CU_OK(CU(cuMemFree_v2)(p));
        }));
  check("managed memory", kept_per_cycle(kCycles, [] {
          CUdeviceptr p = 0;
          CU_OK(CU(cuMemAllocManaged)(&p, 256, CU_MEM_ATTACH_GLOBAL));
          CU_OK(CU(cuMemFree_v2)(p));
        }));
  check("pinned host memory", kept_per_cycle(kCycles, [] {
          void* p = nullptr;
          CU_OK(CU(cuMemAllocHost_v2)(&p, 256));
          CU_OK(CU(cuMemFreeHost)(p));
        }));
  check("physical allocation (VMM)", kept_per_cycle(kCycles, [] {
          CUmemAllocationProp props{};
          props.type = CU_MEM_ALLOCATION_TYPE_PINNED;
          props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
          props.location.id = 0;
          CUmemGenericAllocationHandle h = 0;
          CU_OK(CU(cuMemCreate)(&h, 2u << 20, &props, 0));
          CU_OK(CU(cuMemRelease)(h));
        }));
}
