// SPDX-License-Identifier: Apache-2.0
// PTX → LLVM IR for one kernel and the functions it reaches.
//
// Each PTX function becomes a per-thread LLVM function; the kernel gets a block function
// (`fg_block`) that runs the block's threads one after the other (x fastest), so kernels
// without barriers and warp-wide operations run as plain loops the optimiser can see through.
// PTX registers become allocas (promoted by mem2reg), held as integers of their declared
// width; instructions convert at use.
//
// Address spaces, as the executor lays them out:
//   generic, global, const  host addresses (device memory is host memory); checked against
//                           live allocations unless checks are off
//   shared                  offsets into BlockEnv::shared (static variables first, then the
//                           dynamic part at CompiledKernel::shared_static aligned to 16);
//                           cvta.shared adds the base, so generic pointers are host addresses
//   local                   allocas of the thread's function: local addresses are host
//                           addresses (cvta.local is the identity)
//   param                   host addresses of the parameter block (kernels) or of the
//                           caller's argument buffers (functions)
#pragma once
#include "kernels/jit_api.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace fg::jit {

// The generated module: defines `fg_block` (kernels::BlockFn) and refers to the runtime
// functions of kernels/abi.h by name. out->unsupported is set (and null returned) when the
// kernel uses what the executor does not run; *error for translation failures.
std::unique_ptr<llvm::Module> generate(llvm::LLVMContext& context, const kernels::CompileRequest& request,
                                       kernels::CompiledKernel* out, std::string* error);

}  // namespace fg::jit
