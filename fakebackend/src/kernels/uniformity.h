// SPDX-License-Identifier: Apache-2.0
// Which values and branches of a kernel are the same for all the threads of a block (or of a
// warp), and so whether the block can run as loops over its threads split where the threads
// meet (jit/fission.cpp) instead of as one fiber per thread (kernels/fiber.cpp).
//
// A value is block-uniform when every thread of the block computes it the same: kernel
// parameters, %ctaid, %ntid, %nctaid, %envreg (a cooperative launch's grid workspace),
// immediates, addresses of variables, constant memory at a uniform address, and arithmetic on
// such values. It is warp-uniform when every lane of each
// warp computes it the same, provided each warp lies within one row of the block (blockDim.x a
// multiple of 32, or a one-dimensional block): %tid.y, %tid.z, %warpid, %tid.x / 32 and
// comparisons of %tid.x with a multiple of 32 (`threadIdx.x < 32`). Everything else varies:
// %tid.x itself, %laneid, loads from global, shared or local memory, atomics, shuffles, call
// results, and every register written in code that only some of the threads run (code control
// dependent on a branch that is not uniform, so a loop with a varying trip count too).
//
// Registers are taken whole (flow-insensitively): a register is as uniform as the least
// uniform of all its definitions. nvcc's PTX writes most registers once, so this costs little.
//
// The threads of a block meet at a barrier; a split there is sound when all of them reach it
// together, i.e. when it is not control dependent on a branch that is not block-uniform (a
// `ret` counts as a branch to the function's end, so threads that leave before a barrier make
// it divergent). Warp operations need the same at warp level: all lanes of a warp reach them
// together, so every lane of the warp takes part, as in `if (threadIdx.x < 32) { shfl… }`.
#pragma once
#include "kernels/ptx.h"

#include <cstdint>
#include <string>
#include <unordered_map>

namespace fg::kernels {

// Ordered: each admits fewer differences between threads than the next.
enum class Uniformity : uint8_t {
  Block,    // the same in all threads of the block
  Warp,     // the same in all lanes of a warp (when warps lie within rows of the block)
  Varying,  // may differ between any two threads
};

struct MeetingAnalysis {
  // The kernel (or a function it calls) has barriers or warp operations.
  bool meets = false;
  // Every barrier is a plain block barrier (bar.sync / barrier.sync / bar.red without a
  // thread count) in the kernel itself, reached by the whole block together, and every warp operation
  // (shfl, vote, match, redux, activemask, bar.warp.sync) one reached by whole warps together:
  // the block can run as loops over its threads split at the barriers, and over the lanes of
  // each warp split at the warp operations.
  bool block_loops = false;
  // block_loops holds only for launches whose warps each lie within one row of the block
  // (blockDim.x a multiple of 32, or a one-dimensional block): a warp operation depends on a
  // warp-uniform condition such as `threadIdx.x < 32`.
  bool needs_warp_rows = false;
  // Why not, when it meets and block_loops is false: the first obstacle found, with its line
  // ("line 42: bar.sync in code that not all threads of the block run").
  std::string why;
  // Each register's uniformity (for tests and messages).
  std::unordered_map<std::string, Uniformity> registers;
};

// Analyses entry `kernel` of `module` (`kernel` must have a body).
MeetingAnalysis analyze_meetings(const ptx::Module& module, const ptx::Function& kernel);

}  // namespace fg::kernels
