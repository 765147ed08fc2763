// SPDX-License-Identifier: Apache-2.0
// The kernel compiler's interface. The compiler (fakebackend/src/jit, LLVM) is a plugin,
// libfakegpu_jit.so next to libfake_gpu.so, loaded on the first launch that runs a kernel:
// LLVM (linked into the plugin, hidden) costs ~20 ms to map, which programs that never launch
// should not pay.
// Both sides are built together by the same compiler, so the interface is C++.
#pragma once
#include "kernels/abi.h"
#include "kernels/ptx.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fg::kernels {

inline constexpr uint32_t kJitAbiVersion = 11;

// The most threads per block a block function split at barriers handles.
inline constexpr uint32_t kSplitMaxThreads = 1024;

// A device function's address, as kernels see it (mov of its name, a function pointer in a
// variable's initializer): a tag, kFunctionTag + its index among the module's defined
// functions, not a host code address. An indirect call compares the value with the tags of
// the functions it could reach, so a corrupt pointer is an illegal address, never a jump.
inline constexpr uint64_t kFunctionTag = 0xFFF0000000000000ull;
inline int64_t function_index(const ptx::Module& m, std::string_view name) {
  int64_t i = 0;
  for (const ptx::Function& f : m.functions) {
    if (!f.has_body) continue;
    if (f.name == name) return i;
    ++i;
  }
  return -1;
}

// One kernel to compile: entry `kernel` of `module` and every function it calls.
struct CompileRequest {
  const ptx::Module* module = nullptr;
  std::string kernel;
  bool check_memory = true;  // bounds and alignment checks on every access
  // For a cooperative launch: the code yields where a thread polls memory (see
  // CompiledKernel::yields), whether or not the kernel uses grid.sync().
  bool cooperative = false;
  // Jit::source_digest of the program's PTX: with the on-disk cache on (FAKEGPU_KERNEL_CACHE),
  // the kernel's code is looked up there by it (and the rest of the request); empty: no cache.
  std::string source_digest;
};

struct CompiledKernel {
  BlockFn run_block = nullptr;    // runs every thread of one block (as loops over the threads)
  ThreadFn run_thread = nullptr;  // one thread (for fibers)
  // The threads meet (barriers, warp-wide operations) where loops cannot model it: each runs
  // as a fiber and the block switches between them (run_thread), instead of run_block.
  bool needs_fibers = false;
  // run_block is split at barriers or warp operations (jit/fission.cpp): it handles blocks of
  // up to kSplitMaxThreads threads (larger ones, on a device configured so, run as fibers)...
  bool split = false;
  // ...and, when this is set, only launches whose warps each lie within one row of the block
  // (blockDim.x a multiple of 32, or a one-dimensional block); others run as fibers.
  bool loops_need_warp_rows = false;
  // A thread lets others run (fg_rt_poll) after each volatile, relaxed or acquire load of
  // global or generic memory, each atomic that returns a value and each nanosleep: the code a
  // cooperative launch runs, where a block may spin until other blocks write (grid.sync()).
  // Set for kernels that read the grid workspace and for cooperative requests; other
  // kernels pay nothing.
  bool yields = false;
  // The kernel reads the grid workspace (%envreg): cooperative groups' grid.sync(), which
  // traps in a launch that is not cooperative.
  bool grid_sync = false;
  // The kernel meets the other blocks of its cluster (barrier.cluster.wait, mapa): a cluster
  // launch keeps all its blocks resident, as a cooperative one does.
  bool cluster_sync = false;
  // How the block's threads meet, for the log: empty when they do not; else how they run,
  // "loops split at 2 barriers" or "fibers: <why loops cannot>".
  std::string meeting;
  uint32_t sites = 0;          // BlockEnv::site_cache entries the code uses
  uint64_t shared_static = 0;  // bytes of static shared memory (dynamic follows, aligned to 16)
  uint64_t context_bytes = 0;  // BlockEnv::context per thread that run_block needs (0: none)
  // The module variables the code reads through BlockEnv::globals, in that order.
  std::vector<std::string> globals;
  // Why the kernel cannot run (the executor records its launches instead), e.g.
  // "uses bar.sync (barriers are not supported yet)"; empty when run_block is set.
  std::string unsupported;
  bool from_cache = false;  // loaded from the on-disk cache: nothing was generated or compiled
};

// A runtime function the generated code calls (abi.h), by name and address.
struct RuntimeSymbol {
  const char* name;
  void* address;
};

class Jit {
 public:
  virtual ~Jit() = default;
  // Compiles (or finds compiled) the kernel. False with *error set when the PTX cannot be
  // translated for a reason that is a bug or a limit of the translator; true with
  // out->unsupported set when the kernel uses something the executor does not run.
  virtual bool compile(const CompileRequest& request, CompiledKernel* out, std::string* error) = 0;
  // The digest that names a program's PTX `source` in the on-disk cache (CompileRequest::
  // source_digest); empty when the cache is off. Computed once per program by the caller.
  virtual std::string source_digest(std::string_view source) = 0;
};

// The plugin's entry point (extern "C", default visibility): a compiler bound to the runtime
// functions `symbols` (count `n`), or null with *error set.
using JitCreateFn = Jit* (*)(uint32_t abi_version, const RuntimeSymbol* symbols, size_t n, std::string* error);
inline constexpr const char* kJitCreateSymbol = "fakegpu_jit_create";

}  // namespace fg::kernels
