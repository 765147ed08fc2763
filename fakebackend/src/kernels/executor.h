// SPDX-License-Identifier: Apache-2.0
// The kernel executor: runs a launch's PTX on the host CPU.
//
//   program   the PTX of a module (from its fat binary, cubin-with-PTX or text), parsed once
//   kernel    one function's compiled code (libfakegpu_jit.so) or the reason it cannot run,
//             with its books (launches run, launches recorded, host time)
//   run       one launch: the blocks in increasing linear order on the host's cores, every
//             access checked; a fault stops the grid and is the context's sticky error
//
// FAKEGPU_KERNELS=run (default) | record. A kernel that cannot run (no PTX, a feature the
// executor lacks, no compiler) is recorded, with the reason in the report; FAKEGPU_STRICT=1
// refuses such a launch instead (cudaErrorNotSupported / CUDA_ERROR_NOT_SUPPORTED).
#pragma once
#include "core/errors.h"
#include "kernels/abi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fg {
struct Context;
struct Device;
struct Function;
struct LaunchShape;
struct Module;
}  // namespace fg

namespace fg::fatbin {
struct Code;
}

namespace fg::kernels {

enum class Mode { Run, Record };
// FAKEGPU_KERNELS, read once: "run" (or unset) or "record"; anything else is reported once
// on stderr and taken as run.
Mode mode() noexcept;

struct Program;  // executor.cpp
struct Compiled;

// One function's executable form and books. Created on the function's first launch.
struct Kernel {
  std::string name;
  uintptr_t function = 0;          // its function's CUfunction (fakegpu:kernel_done names it)
  std::shared_ptr<Compiled> code;  // null: cannot run (see reason)
  // The code cooperative launches run, when `code` does not yield where threads poll memory
  // (CompiledKernel::yields); compiled on the first such launch.
  std::once_flag cooperative_once;
  std::shared_ptr<Compiled> cooperative;
  std::shared_ptr<Program> program;  // keeps the executor's storage of its variables
  std::string reason;                // why it is recorded, not run
  std::vector<uint64_t> globals;     // addresses of the variables the code reads (BlockEnv::globals)
  std::vector<Range> own_ranges;     // the executor's storage of unregistered PTX variables
  std::atomic<uint64_t> ran{0}, recorded{0}, host_ns{0};
};

// The PTX a module's kernels run from. `image` is a fat binary, a wrapper or a cubin (the
// PTX inside is taken), or null with `ptx` the text itself.
std::shared_ptr<Program> program_from_image(const void* image, int cc);
std::shared_ptr<Program> program_from_text(const char* text, size_t size);
// A separately compiled program's, from its units' PTX (fatbin::linked_ptx), linked on first use.
std::shared_ptr<Program> program_from_units(const std::vector<fatbin::Code>& units);

// The kernel for `f` (compiled on first use), never null.
Kernel& prepare(Function* f, const Device* dev);

// The launch's parameter block, laid out as the kernel's .param list says: from `args` (one
// pointer per parameter, as cuLaunchKernel and cudaLaunchKernel take them) or from the
// packed buffer cuLaunchKernel's `extra` names (CU_LAUNCH_PARAM_BUFFER_POINTER/_SIZE).
// InvalidValue when an argument pointer is null or the buffer is shorter than the
// parameters. Nothing to pack (empty `out`) for a kernel that will not run.
Status pack_params(const Kernel& k, void* const* args, void* const* extra, std::vector<unsigned char>* out);

// Runs the whole grid now on the calling thread and the executor's workers; a cooperative
// launch's blocks all at once (kernels/fiber.h), with a grid workspace for grid.sync().
// Returns the launch's fault (Fault::None when it completed).
Fault run(Kernel& k, const LaunchShape& shape, const unsigned char* params);

// Counts a launch of `k` that was recorded, not run (for k.reason).
void recorded(Kernel& k);
// FAKEGPU_STRICT=1 and a kernel that cannot run: says which and why, and aborts.
[[noreturn]] void strict_stop(const Kernel& k);

// Whether [addr, addr + size) lies in one range of live memory of the launch `env` runs
// (its allocations when it started, as fg_rt_check sees them).
bool launch_holds(const BlockEnv* env, uint64_t addr, uint64_t size) noexcept;

// Device printf output of launches so far, written to stdout (at synchronization, as CUDA).
void flush_printf();

// Books of every kernel that was launched, for the report.
struct KernelBooks {
  std::string name;
  uint64_t ran = 0, recorded = 0, host_ns = 0;
  std::string reason;
};
std::vector<KernelBooks> books();

// What the kernel compiler did, for the report: kernels compiled (generated, optimised and
// compiled to native code) and kernels whose code came from the on-disk cache
// (FAKEGPU_KERNEL_CACHE).
struct CompilerBooks {
  uint64_t compiled = 0, loaded = 0;
};
CompilerBooks compiler_books_now();

}  // namespace fg::kernels
