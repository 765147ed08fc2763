// SPDX-License-Identifier: Apache-2.0
// Loop fission at barriers, as pocl's work-item loops and CuPBoP/COX do it: a kernel whose
// threads meet only at block barriers the whole block reaches together (kernels/uniformity.h)
// runs as one block function, in which the code between two barriers (a region) is a loop over
// the block's threads, and the way from one region to the next is taken once per block.
//
// The transformation works on the kernel's per-thread function (codegen.cpp), whose
// fg_rt_barrier calls mark the barriers:
//   1. its registers become SSA values (mem2reg), and each barrier gets a block of its own;
//   2. a value live across a barrier is recomputed where it is used when it is pure arithmetic
//      over the thread's coordinates, constants and invariant loads (BlockEnv, the kernel's
//      parameters), else demoted to a stack slot;
//   3. every stack slot becomes per-thread storage in BlockEnv::context (an array of it per
//      slot, indexed by the thread's linear id): a scalar slot is loaded into a private copy
//      when a thread's turn in a region begins and stored back when it reaches the next
//      barrier, so inside a region it is a register again (its home is in an alias scope of
//      its own); local memory (depots, call buffers) is addressed there directly;
//   4. each region (the blocks reached from the function's entry or a barrier without passing
//      another barrier) is cloned into a z/y/x loop over the threads; a thread reaching a
//      barrier records which region follows, and after the loop the block goes there.
//
// Warp operations (kernels/uniformity.h: reached by whole warps together) split a region's
// code one level down into parts. The region's first part runs as above, one loop over all
// threads, in which each warp records whether it reached a warp operation; each warp that did
// then runs the parts after it, one at a time, as loops over its lanes. A lane stores its
// operand in an exchange slot (an array per warp in the context) before the split; after it,
// each lane computes its result from its warp's array (shuffles inline; vote, match and redux
// in kernels/warp_loops.cpp); __activemask() is the warp's existing lanes.
//
// Each thread gets the same results as under the fibers: between two barriers a GPU may run
// the threads, and between warp operations the warps, in any order, and this is one of them.
// Every thread of a region must reach the same barrier (or all return), every lane of a warp
// the same warp operation; one that does not stops the block with a launch failure, as the
// fibers report threads that never meet. A thread that faults sets BlockEnv::abort and
// returns, and the block stops.
#pragma once
#include <cstdint>
#include <string>

namespace llvm {
class Function;
class StructType;
}  // namespace llvm

namespace fg::jit {

// Defines `block` (void (BlockEnv*), a declaration) from `thread` (void (BlockEnv*, tid.x,
// tid.y, tid.z)), split at its fg_rt_barrier calls and warp operations; `thread` is left as it
// was. *context_bytes: the BlockEnv::context each thread needs; *barriers, *warp_points: how
// many splits of each kind there are. False, with *why and `block` left a declaration, for a
// function whose shape this does not handle.
bool split_at_barriers(llvm::Function* thread, llvm::Function* block, llvm::StructType* env_type,
                       uint64_t* context_bytes, unsigned* barriers, unsigned* warp_points, std::string* why);

}  // namespace fg::jit
