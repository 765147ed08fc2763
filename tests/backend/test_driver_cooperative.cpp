// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: cooperative launches run their kernels (kernels/fiber.h): a grid workspace
// for grid.sync() in %envreg1/%envreg2 (none in other launches), every block resident at once,
// blocks that spin on memory until other blocks write, a captured cooperative launch replayed
// by a graph, and a grid.sync() that cannot complete failing the launch instead of hanging. The kernels are
// hand-written PTX doing what nvcc emits for cooperative groups' grid.sync(), one thread per block. They run only with
// the kernel compiler built (libfakegpu_jit.so beside the library); otherwise the cases say so and pass.
#include "backend/driver_test.h"

#include <filesystem>
#include <vector>

// The capture prototypes (cuda.h 13.0), as test_driver_graph.cpp declares them.
namespace drvtest::sig {
CUresult cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture(CUstream, CUgraph*);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
}  // namespace drvtest::sig

using namespace drvtest;

namespace {

const char* const kCoopPtx = R"(
.version 8.0
.target sm_70
.address_size 64

// out[block] = whether the launch has a grid workspace (cooperative groups' is_valid()).
.visible .entry has_workspace(
	.param .u64 out
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<5>;
	.reg .b64 %rd<7>;
	mov.u32 %r1, %envreg1;
	mov.u32 %r2, %envreg2;
	cvt.u64.u32 %rd1, %r2;
	cvt.u64.u32 %rd2, %r1;
	bfi.b64 %rd3, %rd2, %rd1, 32, 32;
	setp.ne.s64 %p1, %rd3, 0;
	selp.u32 %r3, 1, 0, %p1;
	ld.param.u64 %rd4, [out];
	cvta.to.global.u64 %rd4, %rd4;
	mov.u32 %r4, %ctaid.x;
	mul.wide.u32 %rd5, %r4, 4;
	add.s64 %rd6, %rd4, %rd5;
	st.global.u32 [%rd6], %r3;
	ret;
}

// `rounds` times: add 1 to *count, then grid.sync() as cooperative groups does it (the first
// block adds 0x80000001 - gridDim.x to the barrier, the others 1, then each reads it until its
// top bit flips), then read *count: every block's adds of this round must be there.
// out[block] = the rounds in which they were. Block `leave` returns before the first.
.visible .entry grid_sync(
	.param .u64 out,
	.param .u64 count,
	.param .u32 rounds,
	.param .u32 leave
)
{
	.reg .pred %p<6>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	mov.u32 %r1, %envreg1;
	mov.u32 %r2, %envreg2;
	cvt.u64.u32 %rd1, %r2;
	cvt.u64.u32 %rd2, %r1;
	bfi.b64 %rd3, %rd2, %rd1, 32, 32;
	setp.ne.s64 %p1, %rd3, 0;
	@%p1 bra HAVE;
	trap;
HAVE:
	add.s64 %rd4, %rd3, 4;
	mov.u32 %r3, %ctaid.x;
	ld.param.u32 %r4, [leave];
	setp.eq.u32 %p2, %r3, %r4;
	@%p2 bra DONE;
	mov.u32 %r5, %nctaid.x;
	mov.u32 %r6, -2147483647;
	sub.s32 %r7, %r6, %r5;
	setp.eq.u32 %p3, %r3, 0;
	selp.b32 %r8, %r7, 1, %p3;
	ld.param.u64 %rd5, [count];
	cvta.to.global.u64 %rd5, %rd5;
	ld.param.u32 %r9, [rounds];
	mov.u32 %r10, 0;
	mov.u32 %r15, 0;
ROUND:
	atom.global.add.u32 %r16, [%rd5], 1;
	atom.add.release.gpu.u32 %r11, [%rd4], %r8;
WAIT:
	ld.acquire.gpu.u32 %r12, [%rd4];
	xor.b32 %r13, %r12, %r11;
	setp.gt.s32 %p1, %r13, -1;
	@%p1 bra WAIT;
	add.s32 %r10, %r10, 1;
	ld.volatile.global.u32 %r14, [%rd5];
	mul.lo.s32 %r17, %r10, %r5;
	setp.ge.u32 %p4, %r14, %r17;
	selp.u32 %r18, 1, 0, %p4;
	add.s32 %r15, %r15, %r18;
	setp.lt.u32 %p5, %r10, %r9;
	@%p5 bra ROUND;
	ld.param.u64 %rd6, [out];
	cvta.to.global.u64 %rd6, %rd6;
	mul.wide.u32 %rd7, %r3, 4;
	add.s64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r15;
DONE:
	ret;
}

// A barrier of its own, no grid workspace: each block adds 1 to *count, then reads it
// (volatile) until every block has; out[block] = what it read last.
.visible .entry spin(
	.param .u64 count,
	.param .u64 out
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [count];
	cvta.to.global.u64 %rd1, %rd1;
	atom.global.add.u32 %r1, [%rd1], 1;
	mov.u32 %r2, %nctaid.x;
SPIN:
	ld.volatile.global.u32 %r3, [%rd1];
	setp.lt.u32 %p1, %r3, %r2;
	@%p1 bra SPIN;
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r4, %ctaid.x;
	mul.wide.u32 %rd3, %r4, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r3;
	ret;
}
)";

// The kernel compiler beside the library: without it kernels are recorded, not run.
bool have_compiler() {
  const char* dir = std::getenv("FAKEGPU_TEST_LIBDIR");
  if (dir && std::filesystem::exists(std::filesystem::path(dir) / ".." / "libfakegpu_jit.so")) return true;
  WARN("no libfakegpu_jit.so beside the library: kernels are not run, nothing to check");
  return false;
}

struct CoopModule {
  CUmodule mod = nullptr;
  CoopModule() { CU_OK(CU(cuModuleLoadData)(&mod, kCoopPtx)); }
  ~CoopModule() {
    if (mod) CU(cuModuleUnload)(mod);
  }
  CUfunction fn(const char* name) {
    CUfunction f = nullptr;
    CU_OK(CU(cuModuleGetFunction)(&f, mod, name));
    return f;
  }
};

std::vector<unsigned> read_back(CUdeviceptr d, size_t n) {
  std::vector<unsigned> v(n);
  CU_OK(CU(cuMemcpyDtoH_v2)(v.data(), d, n * sizeof(unsigned)));
  return v;
}

}  // namespace

TEST_CASE("driver: cooperative launches give grid.sync() a workspace and run every block at once", "[driver]") {
  if (!have_compiler()) return;
  Ctx ctx(0);
  CoopModule mod;
  constexpr unsigned kBlocks = 8, kRounds = 50;
  CUdeviceptr out = alloc_filled(kBlocks * sizeof(unsigned), 0xff);

  // A workspace in cooperative launches only.
  CUfunction has = mod.fn("has_workspace");
  void* out_arg[] = {&out};
  CU_OK(CU(cuLaunchKernel)(has, kBlocks, 1, 1, 1, 1, 1, 0, nullptr, out_arg, nullptr));
  CU_OK(CU(cuCtxSynchronize)());
  CHECK(read_back(out, kBlocks) == std::vector<unsigned>(kBlocks, 0));
  CU_OK(CU(cuLaunchCooperativeKernel)(has, kBlocks, 1, 1, 1, 1, 1, 0, nullptr, out_arg));
  CU_OK(CU(cuCtxSynchronize)());
  CHECK(read_back(out, kBlocks) == std::vector<unsigned>(kBlocks, 1));

  // 50 grid.sync() rounds: no block passes one before every block has arrived.
  CUdeviceptr count = alloc_filled(sizeof(unsigned), 0);
  unsigned rounds = kRounds, leave = ~0u;
  void* sync_args[] = {&out, &count, &rounds, &leave};
  CU_OK(CU(cuLaunchCooperativeKernel)(mod.fn("grid_sync"), kBlocks, 1, 1, 1, 1, 1, 0, nullptr, sync_args));
  CU_OK(CU(cuCtxSynchronize)());
  CHECK(read_back(out, kBlocks) == std::vector<unsigned>(kBlocks, kRounds));
  CHECK(read_back(count, 1) == std::vector<unsigned>{kRounds * kBlocks});

  // The same launch through cuLaunchKernelEx's cooperative attribute, on a stream.
  CU_OK(CU(cuMemsetD8_v2)(out, 0, kBlocks * sizeof(unsigned)));
  CU_OK(CU(cuMemsetD8_v2)(count, 0, sizeof(unsigned)));
  CUlaunchConfig cfg{};
  cfg.gridDimX = kBlocks;
  cfg.gridDimY = cfg.gridDimZ = cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attr.value.cooperative = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, 0));
  cfg.hStream = s;
  CU_OK(CU(cuLaunchKernelEx)(&cfg, mod.fn("grid_sync"), sync_args, nullptr));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(read_back(out, kBlocks) == std::vector<unsigned>(kBlocks, kRounds));

  // Captured in a graph, it stays cooperative in each launch of the graph.
  CU_OK(CU(cuMemsetD8_v2)(count, 0, sizeof(unsigned)));
  CUgraph g = nullptr;
  CUgraphExec exec = nullptr;
  CU_OK(CU(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_OK(CU(cuLaunchCooperativeKernel)(mod.fn("grid_sync"), kBlocks, 1, 1, 1, 1, 1, 0, s, sync_args));
  CU_OK(CU(cuStreamEndCapture)(s, &g));
  CU_OK(CU(cuGraphInstantiateWithFlags)(&exec, g, 0));
  CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuGraphLaunch)(exec, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(read_back(count, 1) == std::vector<unsigned>{2 * kRounds * kBlocks});
  CU_OK(CU(cuGraphExecDestroy)(exec));
  CU_OK(CU(cuGraphDestroy)(g));
  CU_OK(CU(cuStreamDestroy_v2)(s));

  // A barrier without cooperative groups: a cooperative launch runs blocks that spin on a
  // volatile load until the others have written.
  CU_OK(CU(cuMemsetD8_v2)(count, 0, sizeof(unsigned)));
  void* spin_args[] = {&count, &out};
  CU_OK(CU(cuLaunchCooperativeKernel)(mod.fn("spin"), kBlocks, 1, 1, 1, 1, 1, 0, nullptr, spin_args));
  CU_OK(CU(cuCtxSynchronize)());
  CHECK(read_back(out, kBlocks) == std::vector<unsigned>(kBlocks, kBlocks));
  CU_OK(CU(cuMemFree_v2)(count));
  CU_OK(CU(cuMemFree_v2)(out));
}

TEST_CASE("driver: grid.sync() that not every block reaches fails the launch", "[driver]") {
  if (!have_compiler()) return;
  Ctx ctx(0);
  CoopModule mod;
  CUdeviceptr out = alloc_filled(8 * sizeof(unsigned), 0), count = alloc_filled(sizeof(unsigned), 0);
  unsigned rounds = 3, leave = 5;
  void* args[] = {&out, &count, &rounds, &leave};
  // Block 5 returns first: the others would wait for it forever on a GPU.
  CU_OK(CU(cuLaunchCooperativeKernel)(mod.fn("grid_sync"), 8, 1, 1, 1, 1, 1, 0, nullptr, args));
  CU_EQ(CUDA_ERROR_LAUNCH_FAILED, CU(cuCtxSynchronize)());
  CU_EQ(CUDA_ERROR_LAUNCH_FAILED, CU(cuCtxSynchronize)());  // sticky
}

TEST_CASE("driver: grid.sync() in a launch that is not cooperative traps", "[driver]") {
  if (!have_compiler()) return;
  Ctx ctx(0);
  CoopModule mod;
  CUdeviceptr out = alloc_filled(8 * sizeof(unsigned), 0), count = alloc_filled(sizeof(unsigned), 0);
  unsigned rounds = 1, leave = ~0u;
  void* args[] = {&out, &count, &rounds, &leave};
  CU_OK(CU(cuLaunchKernel)(mod.fn("grid_sync"), 8, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  CU_EQ(CUDA_ERROR_LAUNCH_FAILED, CU(cuCtxSynchronize)());
}
