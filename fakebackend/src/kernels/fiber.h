// SPDX-License-Identifier: Apache-2.0
// Blocks whose threads meet (barriers, warp-wide operations): each CUDA thread runs as a fiber
// on the worker's OS thread, and a scheduler switches between them where a thread must wait
// for others. A switch is a hand-written x86-64 register swap (~20 ns), not swapcontext,
// which also saves the signal mask with a system call.
//
// Barriers count arrivals against the block's non-exited threads (or the count given), so
// `if (tid >= n) return; __syncthreads();` works as on a GPU. Warp operations wait for the
// non-exited lanes of their mask, so divergent shuffles over disjoint masks are legal.
// Threads that wait for what never comes (a barrier some threads skip) would hang a GPU;
// here the block stops and the launch fails (cudaErrorLaunchFailure) with a message.
//
// A thread that polls memory (fg_rt_poll: code compiled to yield, CompiledKernel::yields) lets
// the block's other threads run before it goes on, so a thread spinning until another of its
// block writes makes progress.
#pragma once
#include "kernels/abi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace fg::kernels {

// Runs every thread of the block `env` describes as a fiber of `fn`. Returns false (and a
// message) when the threads deadlocked.
bool run_block_fibers(BlockEnv* env, ThreadFn fn, std::string* deadlock);

// The stack of the fiber running now on this thread, or of the thread itself: local memory
// reached through generic pointers lives there.
void current_stack(uint64_t* lo, uint64_t* hi);

// ---- cooperative launches ----------------------------------------------------------------------
// The blocks of a cooperative launch are all resident at once, as on a GPU: a block may wait in
// grid.sync() for blocks that have not run yet. Each of the launch's workers runs blocks as
// fibers of its own thread, each block on a stack of its own (and its threads, when they run as
// fibers, on theirs). A worker starts blocks while any are left, then goes round the blocks it
// started: a block runs until one of its threads polls memory (fg_rt_poll) and then lets the
// next one run, so every block waiting for others lets them arrive.
//
// A block that waits at grid.sync() after a block of the grid exited having arrived there
// fewer times waits for an arrival that never comes (a GPU would hang): the launch stops, and
// `failure` says which block waited.

// What the workers of one cooperative launch share.
struct CooperativeGrid {
  explicit CooperativeGrid(std::atomic<uint32_t>& launch_abort) : abort(launch_abort) {}
  std::atomic<uint32_t>& abort;  // the launch's: once set, every block stops
  // The fewest times a block that ended had arrived at grid.sync() (its barrier's atomics).
  std::atomic<uint32_t> fewest_arrivals{UINT32_MAX};
  std::mutex mu;
  std::string failure;  // why the workers stopped the launch (the first reason); empty if not
};

// One worker's share of the launch. `start(slot)` readies the next block in the caller's block
// storage number `slot` (a slot is used again once its block has ended) and returns its
// BlockEnv, or null when no block is left; `body(env)` runs a block to its end, on the block's
// fiber. Returns when every block the worker started has ended.
void run_cooperative(CooperativeGrid& grid, const std::function<BlockEnv*(size_t slot)>& start,
                     const std::function<void(BlockEnv*)>& body);

}  // namespace fg::kernels
